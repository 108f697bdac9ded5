/* A parallelization strategy: how one training step is split over the NPUs
 * (tensor, pipeline, data, sequence parallelism, ZeRO, recomputation,
 * offload, overlap) and which network dimensions each parallel group uses. */
#ifndef COMET_STRATEGY_H
#define COMET_STRATEGY_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/error.h"
#include "comet/model.h"
#include "comet/system.h"

typedef enum comet_recompute {
    COMET_RECOMPUTE_NONE = 0,
    COMET_RECOMPUTE_SELECTIVE,   /* attention core only (Korthikanti 2022) */
    COMET_RECOMPUTE_FULL         /* whole layer, only its input is stashed */
} comet_recompute;

const char *comet_recompute_name(comet_recompute r);
int comet_recompute_parse(const char *name, comet_recompute *out);

typedef struct comet_strategy {
    int64_t tp, pp, dp;
    bool sp;                       /* sequence parallelism (needs tp > 1 to matter) */
    int64_t global_batch;          /* samples per step */
    int64_t microbatch;            /* samples per microbatch per pipeline */
    int64_t interleave;            /* virtual stages per pipeline rank (v) */
    comet_recompute recompute;
    int zero_stage;                /* 0..3 */
    bool offload_optimizer;        /* optimizer state lives in the expansion tier */
    bool offload_weights;
    bool offload_activations;
    bool overlap_dp;               /* DP gradient communication overlaps backward */
    bool overlap_tp;               /* TP communication overlaps compute */
    bool grad_fp32;                /* 4-byte gradient accumulation buffers */
    bool flash_attention;          /* fused attention: no score matrix in HBM,
                                      the core is recomputed in backward (Dao 2022) */

    /* Placement: which network dimensions each group occupies, innermost
     * first. If placement_given is false, comet_strategy_resolve fills
     * place[][] by filling dimensions in `order` (default tp, dp, pp). */
    comet_group order[COMET_GROUP_COUNT];
    bool placement_given;
    int64_t place[COMET_GROUP_COUNT][COMET_MAX_DIMS];
} comet_strategy;

/* Megatron-like defaults: tp=pp=dp=1, microbatch 1, global batch 1,
 * interleave 1, no recompute, ZeRO 0, DP overlap on, TP overlap off (as
 * Megatron-LM runs), order tp,dp,pp. */
void comet_strategy_defaults(comet_strategy *s);

/* How npus NPUs fill the system's network dimensions (innermost first;
 * an auto-sized outermost dimension takes what is left). Errors name the
 * key "strategy". */
comet_status comet_system_layout(const comet_system *sys, int64_t npus,
                                 int64_t sizes[COMET_MAX_DIMS], comet_error *err);

/* Total NPUs = tp*pp*dp. */
int64_t comet_strategy_npus(const comet_strategy *s);

/* Microbatches of one step per data-parallel replica:
 * global_batch / (microbatch * dp), for a strategy that has passed
 * comet_strategy_resolve (or at least has positive microbatch and dp). */
int64_t comet_strategy_microbatches(const comet_strategy *s);

/* Check the strategy against the model and system and fill place[][]
 * (and the size of an open outermost network dimension, returned in
 * *outer_size when non-NULL). Errors name the key, e.g. "strategy.tp". */
comet_status comet_strategy_resolve(const comet_model *m, const comet_system *sys,
                                    comet_strategy *s, int64_t dim_sizes[COMET_MAX_DIMS],
                                    comet_error *err);

#endif
