/* Internal: the work of one training step as the workload builder sees it,
 * shared by the estimator (and later the simulator) so every FLOP, byte and
 * collective is counted in one place.
 *
 * Quantities are per NPU and per microbatch, for one pipeline stage, under
 * a resolved strategy. Backward work is derived from forward work by the
 * consumers (two GEMMs of the forward's size per forward GEMM, twice the
 * bytes for vector ops). */
#ifndef COMET_WORKLOAD_H
#define COMET_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/model.h"
#include "comet/strategy.h"

#define WORK_MAX_OPS 24

/* Strategy fp8 (Transformer Engine's delayed scaling): each FP8 GEMM keeps
 * an amax history of this many fp32 values plus an fp32 scale and inverse
 * scale for each of its FP8 tensors (TE's DelayedScaling default). */
#define WORK_FP8_AMAX_HISTORY 1024.0
#define WORK_FP8_TENSORS_PER_GEMM 5.0   /* forward: input, weight, output; backward:
                                           output gradient, input gradient */
#define WORK_MAX_COMMS 8

typedef enum work_op_kind {
    WORK_GEMM = 0,     /* matrix engine, efficiency from the GEMM curve */
    WORK_VECTOR = 1    /* elementwise / reduction, usually memory bound */
} work_op_kind;

typedef struct work_op {
    double flops;
    double bytes;          /* HBM traffic */
    work_op_kind kind;
    bool attention_core;   /* recomputed under selective recompute */
    bool fp8;              /* a GEMM run at the fp8 matrix peak (strategy fp8) */
} work_op;

typedef struct work_comm {
    comet_collective collective;
    comet_group group;
    double bytes;          /* per NPU buffer size */
    bool in_forward;       /* issued in forward */
    bool in_backward;      /* mirrored in backward */
    bool recomputed;       /* repeated by full recompute */
} work_comm;

/* Which pipeline stages hold a layer. */
typedef enum work_where {
    WORK_EVERY_STAGE = 0,
    WORK_FIRST_STAGE,      /* input embedding */
    WORK_LAST_STAGE        /* LM head */
} work_where;

/* One kind of layer, repeated `count` times on the stage (a fraction for
 * layer lists whose kinds do not split evenly over the pipeline). */
typedef struct work_layer {
    double count;
    work_where where;
    int n_ops;
    work_op ops[WORK_MAX_OPS];          /* forward */
    int n_comms;
    work_comm comms[WORK_MAX_COMMS];    /* forward */
    double params;                      /* per NPU, per layer */
    bool model_parallel;                /* params split over the stage's NPUs, not replicated */
    double act_bytes;                   /* stashed per microbatch per layer, no recompute */
    double act_bytes_selective;         /* ... with selective recompute */
    double act_bytes_full;              /* ... with full recompute */
    double wgrad_bytes;                 /* what a split backward keeps from its input-
                                           gradient pass to its weight-gradient pass
                                           (ZB-H1), per microbatch per layer: each weight
                                           GEMM's input and output gradient */
} work_layer;

/* Work of the busiest pipeline stage for one microbatch. */
typedef struct work_stage {
    int n_layers;
    work_layer layers[4 + COMET_MAX_LAYER_KINDS];
    double p2p_bytes;        /* activation sent per stage boundary per microbatch */
    double fwd_flops_model;  /* model FLOPs of one microbatch forward, whole model, all NPUs */
    double params_total;     /* whole model */
    double params_npu;       /* replicated parameters held by one NPU of the busiest stage
                              * (before ZeRO): what DP reduces and ZeRO shards */
    double params_mp_npu;    /* model-parallel parameters on one NPU (embedding tables) */
    double mp_lookup_bytes;  /* rows of them read per microbatch (their forward bytes) */
    double act_extra;        /* activations outside the layers (embeddings, logits) per microbatch */
    double fp8_bytes;        /* strategy fp8: FP8 weight copies and per-tensor scaling state
                              * held by one NPU of the busiest stage (0 without fp8) */
    /* Pipelines whose stages hold unequal numbers of layers: the every-
     * stage layers' count on the first and on the last stage, and whether
     * the first stage (more layers, the embedding) is the busiest rather
     * than the last (the LM head). The every-stage count above is the
     * busiest stage's; -1 (layer lists) means every stage is alike. With
     * uneven first and last stages a middle stage (no embedding, no LM
     * head) may be the busiest: middle_stage_count is the most a middle
     * stage holds (stage 1's; -1: no middle stage). */
    double first_stage_count, last_stage_count, middle_stage_count;
    bool busiest_is_first, busiest_is_middle;
} work_stage;

/* Whether layer l runs on the busiest stage: every-stage layers do; the
 * embedding (first stage) and LM head (last) only when that stage is the
 * busiest, or when there is one stage. */
static inline bool work_on_busiest(const work_stage *w, const comet_strategy *s,
                                   const work_layer *l)
{
    if (s->pp == 1 || l->where == WORK_EVERY_STAGE)
        return true;
    if (w->busiest_is_middle)
        return false;
    return l->where == (w->busiest_is_first ? WORK_FIRST_STAGE : WORK_LAST_STAGE);
}

/* Build the stage work for a model under a resolved strategy. The
 * strategy must have been checked by comet_strategy_resolve. */
void work_build(const comet_model *m, const comet_strategy *s, work_stage *out);


/* Transformer and generic-layer builders used by work_build. */
void work_build_transformer(const comet_model *m, const comet_strategy *s, work_stage *out);
void work_build_layers(const comet_model *m, const comet_strategy *s, work_stage *out);

/* Transformer blocks on virtual stage vs (model chunk c of stage s is
 * vs = c * pp + s): l / (pp v) each, the first l mod (pp v) one more; with
 * first_stage_layers or last_stage_layers (one chunk per stage), those on
 * the first or last stage and the rest spread so over the others. */
int64_t work_chunk_blocks(const comet_model *m, const comet_strategy *s, int64_t vs);
/* The global number of virtual stage vs's first block (blocks of virtual
 * stages 0 .. vs-1 come before it). */
int64_t work_chunk_first_block(const comet_model *m, const comet_strategy *s, int64_t vs);
/* ... and on pipeline stage `stage`, all its chunks. */
int64_t work_stage_blocks(const comet_model *m, const comet_strategy *s, int64_t stage);

/* Width of one attention head: head_dim, or hidden / heads when unset. */
double work_head_dim(const comet_model *m);
/* Parameters of one transformer block and of the embedding/LM head. */
double work_transformer_block_params(const comet_model *m);
double work_transformer_embedding_params(const comet_model *m);

#endif
