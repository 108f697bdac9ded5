/* Private to src/network: the fluid engine of congestion control
 * (cc_fluid.c, docs/roce.md) as a stepper of the flow engine: whoever
 * builds a flow engine hands it this, which runs the flows where a
 * dimension's scheme is not none. */
#ifndef COMET_NETWORK_CC_FLUID_H
#define COMET_NETWORK_CC_FLUID_H

#include "flows.h"

extern const fl_stepper cc_fluid_stepper;

#endif
