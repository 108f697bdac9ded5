/* Internal to src/explore: a design of a study's sweep searched again
 * (comet_sweep_point), for its best strategy with every knob and its
 * placement, which a results row keeps only in part. The steps after the
 * sweep that need it (the simulator's check of the pick, step 5's
 * network split, the system axis) all start from the fastest design, so
 * its search is made once, by whichever asks first, and kept in the
 * model's conclusions. */
#ifndef COMET_EXPLORE_SEARCH_AGAIN_H
#define COMET_EXPLORE_SEARCH_AGAIN_H

#include "comet/methodology.h"
#include "comet/study.h"
#include "comet/sweep.h"

/* Design point `index` searched into *row: c->fastest's from c when it
 * was searched already (else searched and kept there), any other's
 * anew. */
comet_status search_again(const comet_study *study, comet_conclusions *c, uint64_t index,
                          comet_sweep_row *row, comet_error *err);

#endif
