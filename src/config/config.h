/* The config folder's interface to the rest of the library; the other
 * headers of src/config/ are private to it. Most of what config/ offers is
 * public (comet/config.h, comet/study.h, comet/results.h and the ASTRA-sim
 * readers of comet/chakra.h); this is what a writer of files needs to
 * write only what these readers take back: the kinds of quantity and
 * their sane ranges. */
#ifndef COMET_CONFIG_CONFIG_H
#define COMET_CONFIG_CONFIG_H

#include <stdbool.h>

typedef enum cfg_unit_kind {
    CFG_UNIT_BYTES = 0,
    CFG_UNIT_BANDWIDTH,
    CFG_UNIT_TIME,
    CFG_UNIT_FLOP_RATE,
    CFG_UNIT_FLOPS,
    CFG_UNIT_COUNT
} cfg_unit_kind;

/* Sane ranges, one per kind of quantity: a nonzero value outside its
 * kind's range is a typo (no real system is that slow or that large) and
 * would overflow the models' arithmetic into inf, NaN or a stalled
 * simulation. Every reader of a quantity (config files, CLI flags, ASTRA-sim
 * inputs) checks here. Zero is left to the callers that allow it. */
bool cfg_units_in_range(cfg_unit_kind kind, double si_value);
/* The range for messages: "1 KB/s to 10 PB/s". */
const char *cfg_units_range(cfg_unit_kind kind);

#endif
