/* Internal: the memory footprint of one NPU and what lives in which tier. */
#ifndef COMET_FOOTPRINT_H
#define COMET_FOOTPRINT_H

#include "comet/estimate.h"
#include "../workload/workload.h"

typedef struct footprint {
    double optimizer_offloaded;   /* fraction of optimizer state in the expansion tier */
    double weights_offloaded;
    double activations_offloaded;
    /* Expansion traffic that streams behind compute, on the tier's one
     * channel per NPU: per microbatch and pass (forward: weights in and
     * activations out; backward: weights in and activations back), and
     * the updated weights written once at the end; each in one transfer
     * per layer. */
    double pass_bytes;
    double pass_transfers;
    double final_bytes;
    double final_transfers;
} footprint;

/* Fill out->mem, mem_total, mem_capacity, feasible and infeasible, and fp.
 * Explicit offloads move a whole kind; when HBM still overflows and an
 * expansion tier exists, optimizer state spills first, then weights, then
 * activations, each only as much as needed. */
void footprint_compute(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                       const work_stage *w, double micro, footprint *fp, comet_result *out);

#endif
