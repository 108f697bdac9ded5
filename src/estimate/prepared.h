/* Internal: the estimator with its expensive inputs prepared by the
 * caller, for the strategy search, which resolves a placement and builds
 * the workload once and then varies the cheap knobs (recompute, ZeRO,
 * offload, overlap) over them. */
#ifndef COMET_ESTIMATE_PREPARED_H
#define COMET_ESTIMATE_PREPARED_H

#include <stdbool.h>
#include "comet/estimate.h"
#include "../hardware/hardware.h"
#include "../workload/workload.h"

/* One layer of a kind, priced (seconds per layer, per NPU, per microbatch). */
typedef struct layer_time {
    double fwd, bwd, recompute;               /* compute */
    double gemm_fwd;                          /* GEMM share of fwd */
    double comm_fwd[COMET_GROUP_COUNT];       /* the layer's collectives, by pass */
    double comm_bwd[COMET_GROUP_COUNT];
    double comm_rc[COMET_GROUP_COUNT];
    double flops, recompute_flops;            /* per NPU */
} layer_time;

void layer_times(const work_layer *l, const hw_rates *r, const comet_system *sys,
                 const comet_strategy *s, layer_time *out);

/* HBM bytes the optimizer step moves per parameter it updates. */
double optimizer_bytes_per_param(const comet_strategy *s, double elem);

/* `resolved` has passed comet_strategy_resolve and `work` is
 * work_build(m, resolved). With stop_if_no_fit, a strategy that does not
 * fit returns after the memory footprint, with no times filled in. */
comet_status estimate_prepared(const comet_model *m, const comet_system *sys,
                               const comet_strategy *resolved, const work_stage *work,
                               bool stop_if_no_fit, comet_result *out, comet_error *err);

#endif
