/* Internal: the estimator with its expensive inputs prepared by the
 * caller, for the strategy search, which resolves a placement and builds
 * the workload once and then varies the cheap knobs (recompute, ZeRO,
 * offload, overlap) over them. The estimate folder's interface to other
 * folders. */
#ifndef COMET_ESTIMATE_INTERNAL_H
#define COMET_ESTIMATE_INTERNAL_H

#include <stdbool.h>
#include "comet/estimate.h"
#include "../cost/cost.h"
#include "../workload/workload.h"

/* What one thread of the strategy search keeps from point to point, so
 * that points sharing inputs share their work: the ZeRO 3 passes
 * (fsdp.c) and the collectives' prices (coll_memo.c), each kept by its
 * exact inputs. One per thread; estimate_cache_init before the first use. */
typedef struct estimate_cache {
    fsdp_cache fsdp;
    coll_memo coll;
} estimate_cache;

void estimate_cache_init(estimate_cache *c);

/* The accelerator's rates and each layer kind of `work` priced
 * (layer_times) under `resolved`. A layer's price reads of the strategy
 * only its recomputation, fused attention, context parallelism, placement
 * and framework, so the strategy search keeps a workload's layer prices
 * for each recomputation choice, priced when a point that fits first
 * needs them (priced false until then), for every point that shares
 * them. `cache` may be NULL. */
typedef struct estimate_layers {
    bool priced;
    hw_rates rates;
    layer_time layer[sizeof ((work_stage *)0)->layers / sizeof ((work_stage *)0)->layers[0]];
} estimate_layers;

void estimate_price_layers(const comet_model *m, const comet_system *sys,
                           const comet_strategy *resolved, const work_stage *work,
                           estimate_cache *cache, estimate_layers *out);

/* `resolved` has passed comet_strategy_resolve and `work` is
 * work_build(m, resolved). With stop_if_no_fit, a strategy that does not
 * fit returns after the memory footprint, with no times filled in.
 * `cache` may be NULL; `layers` NULL, or the layer prices of the same
 * work under a strategy equal to `resolved` in the knobs they read
 * (priced here, where still unpriced). The result is the same either way. */
comet_status estimate_prepared(const comet_model *m, const comet_system *sys,
                               const comet_strategy *resolved, const work_stage *work,
                               bool stop_if_no_fit, estimate_cache *cache,
                               estimate_layers *layers, comet_result *out, comet_error *err);

#endif
