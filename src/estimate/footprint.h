/* Internal: the memory footprint of one NPU and what lives in which tier. */
#ifndef COMET_FOOTPRINT_H
#define COMET_FOOTPRINT_H

#include "comet/estimate.h"
#include "../workload/workload.h"

typedef struct footprint {
    double optimizer_offloaded;   /* fraction of optimizer state in the expansion tier */
    double weights_offloaded;
    double activations_offloaded;
    double streamed_bytes;        /* expansion traffic per step that can prefetch behind compute */
    double streamed_transfers;    /* how many transfers that traffic comes in (one per layer pass) */
} footprint;

/* Fill out->mem, mem_total, mem_capacity, feasible and infeasible, and fp.
 * Explicit offloads move a whole kind; when HBM still overflows and an
 * expansion tier exists, optimizer state spills first, then weights, then
 * activations, each only as much as needed. */
void footprint_compute(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                       const work_stage *w, double micro, footprint *fp, comet_result *out);

#endif
