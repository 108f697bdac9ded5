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
#include "comet/system.h"

#define WORK_MAX_OPS 26   /* an MoE block with fp8, dropout, rotary positions and shared
                             experts: 25 */

/* What one kernel of a layer-list entry given by its shape runs on: the
 * matrix engines (a convolution or a fully connected layer) or, memory
 * bound, one of the kinds a system gives its own share of HBM bandwidth. */
typedef enum work_shape_kind {
    WORK_SHAPE_GEMM = 0,
    WORK_SHAPE_BATCHNORM,
    WORK_SHAPE_ACTIVATION,   /* ReLU */
    WORK_SHAPE_ELEMENTWISE,  /* the shortcut's add, dropout */
    WORK_SHAPE_POOL,
    WORK_SHAPE_KIND_COUNT
} work_shape_kind;

/* The most kernels one entry runs forward (an Inception-v3 C block: 10
 * convolutions, its batch norms and its ReLUs each priced as one kernel,
 * a pool and the concatenation: 14; a bottleneck with a projection runs
 * 12). */
#define WORK_SHAPE_MAX_KERNELS 14

/* One forward kernel of an entry given by its shape, per sample but for
 * its weights. */
typedef struct work_shape_kernel {
    work_shape_kind kind;
    double flops;
    double traffic;          /* elements read and written */
    double weights;          /* ... of them its weights, read once per microbatch, not per sample */
    double bwd_traffic;      /* elements a memory-bound kernel's backward moves per sample
                                (with its weights once); 0: twice the forward's */
    double k_fwd, k_dgrad;   /* a GEMM's reduction length forward and in its input gradient */
    double k_wgrad;          /* ... in its weight gradient, per sample (output positions) */
} work_shape_kernel;

/* The kernels an entry whose shape comet_model_derive_shapes derived runs
 * forward, in order, for elements of `elem` bytes (cnn.c); their FLOPs
 * and traffic sum to its fwd_flops and fwd_bytes. Returns how many. */
int work_shape_kernels(const comet_layer_shape *sh, double elem,
                       work_shape_kernel out[WORK_SHAPE_MAX_KERNELS]);

/* Strategy fp8 (Transformer Engine's delayed scaling): each FP8 GEMM keeps
 * an amax history of this many fp32 values plus an fp32 scale and inverse
 * scale for each of its FP8 tensors (TE's DelayedScaling default). */
#define WORK_FP8_AMAX_HISTORY 1024.0
#define WORK_FP8_TENSORS_PER_GEMM 5.0   /* forward: input, weight, output; backward:
                                           output gradient, input gradient */
#define WORK_MAX_COMMS 12

typedef enum work_op_kind {
    WORK_GEMM = 0,     /* matrix engine, efficiency from the GEMM curve */
    WORK_VECTOR = 1    /* elementwise / reduction, usually memory bound */
} work_op_kind;

typedef struct work_op {
    double flops;
    double bytes;          /* HBM traffic */
    double bwd_bytes;      /* a vector op's backward traffic; 0: twice the forward's */
    work_op_kind kind;
    comet_mem_kernel mem;  /* a vector op's kind of memory-bound kernel */
    /* A GEMM's reduction length in forward and in its two backward GEMMs
     * (input gradient, then weight gradient; for the attention core's
     * weightless GEMMs, its two input gradients); 0: unknown. */
    double k_fwd, k_dgrad, k_wgrad;
    bool attention_core;   /* recomputed under selective recompute */
    bool fp8;              /* a GEMM run at the fp8 matrix peak (strategy fp8) */
    double m_group;        /* a grouped GEMM over experts: tokens per expert; 0: not grouped */
} work_op;

typedef struct work_comm {
    comet_collective collective;
    comet_group group;
    double bytes;          /* per NPU buffer size */
    double outer_bytes;    /* an all-to-all's buffer on the group's dimensions past its
                              innermost spanned one, where it differs (DeepEP's dispatch:
                              one copy per destination node, docs/model.md 17.1); 0: bytes */
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
    /* Mixture of experts (src/workload/moe.c). A Transformer block marks
     * its MLP's ops, [mlp_op, mlp_end), which the MoE block replaces. */
    bool moe;                           /* an MoE block (router, experts, all-to-alls) */
    double expert_params;               /* of params: this NPU's experts' weights, whose
                                         * gradients are reduced over the expert-DP group */
    int mlp_op, mlp_end;
    double mlp_wgrad_bytes;             /* of wgrad_bytes, the MLP's share */
    double attn_seq;                    /* the attention kernel's sequence: the whole
                                         * (0: no core), a block of s/cp under ring CP */
    double attn_head_dim;               /* ... its head width */
    bool causal;                        /* ... and whether it is causal */
    double attn_causal_share;           /* of a causal core's work, the share in masked
                                         * kernels: 1, or 1/cp under ring CP (the
                                         * diagonal blocks; the others run unmasked) */
    double cp_kv_bytes;                 /* ring context parallelism: the local K/V block
                                         * passed around the cp ranks (0: no ring) */
    double wgrad_bytes;                 /* what a split backward keeps from its input-
                                           gradient pass to its weight-gradient pass
                                           (ZB-H1), per microbatch per layer: each weight
                                           GEMM's input and output gradient */
} work_layer;

/* Pipeline stages first .. last, alike: each holds `blocks` Transformer
 * blocks, `moe` of them MoE blocks. */
typedef struct work_stage_run {
    int64_t first, last;
    int64_t blocks, moe;
} work_stage_run;

enum { WORK_STAGE_RUNS = 8 };

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
    double cp_buffer_bytes;  /* ring CP's K/V (and dK/dV) receive buffers, working space
                              * held once (not per microbatch or layer) */
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
    bool busiest_is_first;
    /* Mixture of experts: of the blocks counted above, the MoE ones on the
     * first and the last stage (0 for dense models), and of params_npu the
     * expert parameters (reduced and sharded over the expert-DP group). */
    double moe_first_count, moe_last_count;
    double params_expert_npu;
    /* The busiest stage lies between the ends (uneven stages, or an MoE
     * model such as DeepSeek-V3 whose first stage holds the dense layers):
     * it holds neither the embedding nor the LM head, the every-stage
     * counts are its own, and busiest_is_first is false. */
    bool busiest_is_middle;
    /* A Transformer's pipeline of one chunk per stage as runs of alike
     * stages (the first and the last stage each a run of its own), so
     * that the schedules' per-stage times are priced once per run;
     * n_stage_runs 0: not worked out (one stage, interleaving, layer
     * lists, or more than WORK_STAGE_RUNS runs), price each stage. */
    int n_stage_runs;
    work_stage_run stage_runs[WORK_STAGE_RUNS];
} work_stage;

/* How many of the busiest stage's every-stage layers of kind l sit on the
 * first (first = true) or the last stage: for Transformer blocks the
 * stage's dense or MoE blocks, for layer lists l's own count. */
static inline double work_end_count(const work_stage *w, const work_layer *l, bool first)
{
    double all = first ? w->first_stage_count : w->last_stage_count;
    if (all < 0.0)
        return l->count;
    double moe = first ? w->moe_first_count : w->moe_last_count;
    return l->moe ? moe : all - moe;
}

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

/* MoE blocks on pipeline stage `stage`, all its chunks. */
int64_t work_stage_moe_blocks(const comet_model *m, const comet_strategy *s, int64_t stage);
/* Both at once: *blocks on stage `stage` and *moe of them MoE blocks. */
void work_stage_block_counts(const comet_model *m, const comet_strategy *s, int64_t stage,
                             int64_t *blocks, int64_t *moe);

/* Building blocks the MoE and dense builders share (ops.c): an op (core:
 * part of the attention core), a GEMM (M x K) by (K x N), a linear
 * layer's GEMM whose input is stashed as in_rows rows (with fp8 its cast;
 * returns the weight's elements), a collective. */
work_op *work_add_vector(work_layer *l, comet_mem_kernel kind, double flops, double bytes,
                         bool core);
work_op *work_add_gemm_op(work_layer *l, double flops, double bytes, bool core, double k_fwd,
                          double k_dgrad, double k_wgrad);
void work_add_gemm(work_layer *l, double mdim, double ndim, double kdim, double elem, bool core);
double work_add_linear(work_layer *l, double mdim, double ndim, double kdim, double in_rows,
                       double elem, bool fp8);
work_comm *work_add_comm(work_layer *l, comet_collective c, comet_group g, double bytes);

/* One MLP of inner size f (its matrices and, with biases, its biases),
 * and the router of an MoE layer (hidden x experts; none for one expert),
 * in parameters (shape.c). */
double work_mlp_params(const comet_model *m, double f);
double work_router_params(const comet_model *m);

/* Mixture of experts (moe.c). The expected number of distinct buckets
 * that a token's top_k experts fall into when `experts` experts lie in
 * `buckets` equal buckets and the top_k are drawn uniformly without
 * replacement: buckets (1 - C(E - E/n, k) / C(E, k)) (docs/model.md 17.1;
 * 1 for k = 1, buckets for k = E). */
double work_moe_distinct(double experts, double buckets, double top_k);
/* The dispatch (and combine) all-to-all's buffers per NPU of a rank that
 * sends `unit` bytes per token copy, on the EP group's innermost spanned
 * network dimension (*inner) and on the others (*outer; 0 when the group
 * spans one dimension): k copies on each under the alltoall dispatcher;
 * under deepep one per distinct GPU reached inside and one per distinct
 * outer bucket (node) reached, at most model.moe.max_nodes of them. */
void work_moe_dispatch_buffers(const comet_model *m, const comet_strategy *s, double unit,
                               double *inner, double *outer);
/* The inner size of one expert's MLP. */
double work_moe_expert_ffn(const comet_model *m);
/* Parameters of one MoE block: all experts (active = false) or those one
 * token uses (active = true: top_k routed and the shared ones). */
double work_moe_block_params(const comet_model *m, bool active);
/* Forward FLOPs of one MoE block's MLP for `tokens` tokens, model FLOPs
 * (active experts only, no imbalance), and of the dense MLP it replaces. */
double work_moe_mlp_model_flops(const comet_model *m, double tokens);
double work_dense_mlp_model_flops(const comet_model *m, double tokens);
/* The MoE block: the dense block `dense` (its attention part kept) with
 * its MLP replaced by the router, the dispatch and combine all-to-alls on
 * the EP group, this NPU's experts and the shared experts. tokens and
 * tokens_rep are the block shape's (per NPU: all of the microbatch's, and
 * those the replicated ops see). *fp8_bytes: the dense block's on entry,
 * the MoE block's on return. */
void work_build_moe_block(const comet_model *m, const comet_strategy *s, const work_layer *dense,
                          double tokens, double tokens_rep, work_layer *out, double *fp8_bytes);

/* Width of one attention head: head_dim, or hidden / heads when unset. */
double work_head_dim(const comet_model *m);
/* Parameters of one transformer block and of the embedding/LM head. */
double work_transformer_block_params(const comet_model *m);
double work_transformer_embedding_params(const comet_model *m);

#endif
