/* Units comet spells the same everywhere: inside, sizes are bytes, and a
 * GiB (what reports print, what costs are quoted per, what ASTRA-sim's
 * files call a GB) is 2^30 of them; a GB is 10^9. */
#ifndef COMET_UNITS_H
#define COMET_UNITS_H

#define COMET_GIB 1073741824.0 /* 2^30 bytes */

#endif
