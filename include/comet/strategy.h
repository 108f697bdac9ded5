/* A parallelization strategy: how one training step is split over the NPUs
 * (tensor, pipeline, data, sequence, context and expert parallelism, ZeRO,
 * recomputation, offload, overlap) and which network dimensions each
 * parallel group uses.
 *
 * The groups: tp * cp * pp * dp NPUs. Context parallelism splits each
 * sequence over cp ranks. Expert parallelism is drawn from the data-
 * parallel group (Megatron-Core's rule): the dp ranks of a pipeline stage
 * form dp/ep groups of ep ranks, each of which holds all the experts, each
 * rank experts/ep of them; expert layers keep the tp split of the dense
 * layers (expert tensor parallelism = tp). A dense parameter's gradients
 * are reduced over dp * cp ranks, an expert's over (dp/ep) * cp ranks. */
#ifndef COMET_STRATEGY_H
#define COMET_STRATEGY_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/error.h"
#include "comet/model.h"
#include "comet/system.h"

/* Sanity limits of the knobs; past these, inputs are typos and counters
 * overflow. comet/knobs.h's table applies them to each knob. */
#define COMET_MAX_NPUS 262144
#define COMET_MAX_BATCH 2147483648LL
#define COMET_MAX_INTERLEAVE 4096
#define COMET_MAX_STAGE_LAYERS 65536   /* first/last_stage_layers */
#define COMET_MAX_PREFETCH 64          /* prefetch */
#define COMET_MAX_BUCKET 1000000000000LL  /* gather_bucket, reduce_bucket (parameters) */

typedef enum comet_recompute {
    COMET_RECOMPUTE_NONE = 0,
    COMET_RECOMPUTE_SELECTIVE,   /* attention core only (Korthikanti 2022) */
    COMET_RECOMPUTE_FULL         /* whole layer, only its input is stashed */
} comet_recompute;

const char *comet_recompute_name(comet_recompute r);
int comet_recompute_parse(const char *name, comet_recompute *out);

/* How context parallelism exchanges attention's keys and values. */
typedef enum comet_cp_comm {
    COMET_CP_RING = 0,           /* K/V blocks passed around the cp ranks point to point,
                                    overlapped with attention (ring attention, Megatron's CP) */
    COMET_CP_ULYSSES             /* all-to-all from sequence to head sharding and back
                                    (DeepSpeed-Ulysses); cp must divide the heads */
} comet_cp_comm;

const char *comet_cp_comm_name(comet_cp_comm c);
/* The pipeline schedule of a strategy without interleaving (interleave > 1
 * always runs interleaved 1F1B). */
typedef enum comet_schedule {
    COMET_SCHEDULE_1F1B = 0,     /* PipeDream-Flush, Megatron-LM's default */
    COMET_SCHEDULE_ZB_H1,        /* zero bubble ZB-H1: backward split into input- and
                                    weight-gradient passes (Qi et al., ICLR 2024) */
    COMET_SCHEDULE_DUALPIPE      /* DualPipe: microbatches from both ends, each stage
                                    holding two model chunks, a forward and a backward
                                    overlapped (DeepSeek-V3 report, Sec. 3.2.1) */
} comet_schedule;

const char *comet_schedule_name(comet_schedule sc);

/* The training framework a strategy assumes: how its data-parallel
 * collectives are issued and how much of them hides behind compute
 * (docs/model.md, frameworks). */
typedef enum comet_framework {
    COMET_FRAMEWORK_AUTO = 0,    /* by ZeRO stage: fsdp for ZeRO 3, megatron below */
    COMET_FRAMEWORK_MEGATRON,    /* Megatron-LM: bucketed gradient reduction (distributed
                                    optimizer for ZeRO 1/2) overlapped with backward; no ZeRO 3 */
    COMET_FRAMEWORK_FSDP,        /* ZeRO-3 as PyTorch FSDP / DeepSpeed run it: per-layer gathers
                                    and reduce-scatters on one stream, prefetch-limited */
    COMET_FRAMEWORK_IDEAL        /* comet's earlier model: ZeRO-3 gathers hide behind a whole
                                    pass and overlapped communication takes no compute */
} comet_framework;

const char *comet_framework_name(comet_framework f);

/* How an MoE layer's tokens reach their experts (docs/model.md 17.1). */
typedef enum comet_moe_dispatcher {
    COMET_MOE_ALLTOALL = 0,      /* Megatron-Core's alltoall dispatcher: top_k copies of every
                                    token on every network dimension of the EP group */
    COMET_MOE_DEEPEP             /* DeepEP / HybridEP: one copy per distinct destination node
                                    across nodes, one per distinct destination GPU inside them
                                    (DeepSeek-V3 report Sec. 3.2.2) */
} comet_moe_dispatcher;

const char *comet_moe_dispatcher_name(comet_moe_dispatcher d);

/* What the optimizer keeps per parameter beside the weights, and in what
 * precision (docs/model.md 9.1): Adam's two moments and, where the
 * weights are 16-bit, a master copy. */
typedef enum comet_optimizer_state {
    COMET_OPTIM_FP32 = 0,        /* fp32 master weights and moments, 12 bytes (Megatron's
                                    distributed optimizer, DeepSpeed) */
    COMET_OPTIM_REMAINDERS,      /* fp32 moments and the low 16 bits of the fp32 master, which
                                    with the bf16 weight rebuild it: 10 bytes (Apex's
                                    DistributedFusedAdam store_param_remainders, NeMo's default
                                    for bf16 training; TE's FusedAdam) */
    COMET_OPTIM_BF16_MOMENTS,    /* fp32 master weights, moments in the model's 16-bit dtype:
                                    8 bytes (DeepSeek-V3 report Sec. 3.3.3) */
    COMET_OPTIM_BF16             /* moments in the model's dtype and no master copy (the
                                    weights are their own): 4 bytes at bf16 (Apex's
                                    DistributedFusedAdam with dtype = the model's; torch.optim
                                    Adam on bf16 parameters); gradients are held in that dtype */
} comet_optimizer_state;

const char *comet_optimizer_state_name(comet_optimizer_state o);

/* The strategy's knobs, in the order strategy files list them; each is
 * described once in comet/knobs.h's table. */
typedef enum comet_knob_id {
    COMET_KNOB_TP = 0,
    COMET_KNOB_PP,
    COMET_KNOB_DP,
    COMET_KNOB_SP,
    COMET_KNOB_GLOBAL_BATCH,
    COMET_KNOB_MICROBATCH,
    COMET_KNOB_INTERLEAVE,
    COMET_KNOB_RECOMPUTE,
    COMET_KNOB_ZERO,
    COMET_KNOB_OFFLOAD_OPTIMIZER,
    COMET_KNOB_OFFLOAD_WEIGHTS,
    COMET_KNOB_OFFLOAD_ACTIVATIONS,
    COMET_KNOB_OFFLOAD_GRADIENTS,
    COMET_KNOB_OVERLAP_DP,
    COMET_KNOB_OVERLAP_TP,
    COMET_KNOB_GRAD_FP32,
    COMET_KNOB_OPTIMIZER_STATE,
    COMET_KNOB_FLASH_ATTENTION,
    COMET_KNOB_FP8,
    COMET_KNOB_CP,
    COMET_KNOB_CP_COMM,
    COMET_KNOB_EP,
    COMET_KNOB_EXPERT_TP,
    COMET_KNOB_MOE_DISPATCHER,
    COMET_KNOB_ATTENTION_KERNEL,
    COMET_KNOB_SCHEDULE,
    COMET_KNOB_FRAMEWORK,
    COMET_KNOB_PREFETCH,
    COMET_KNOB_GATHER_BUCKET,
    COMET_KNOB_REDUCE_BUCKET,
    COMET_KNOB_FIRST_STAGE_LAYERS,
    COMET_KNOB_LAST_STAGE_LAYERS,
    COMET_KNOB_ORDER,
    COMET_KNOB_PLACEMENT,
    COMET_KNOB_COUNT             /* also: no knob in particular */
} comet_knob_id;

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
    bool offload_gradients;        /* gradients stream to the expansion tier (FRED) */
    bool overlap_dp;               /* DP gradient communication overlaps backward */
    bool overlap_tp;               /* TP communication overlaps compute */
    bool grad_fp32;                /* 4-byte gradient accumulation buffers */
    comet_optimizer_state optimizer_state; /* Adam's state per parameter and its precision */
    bool flash_attention;          /* fused attention: no score matrix in HBM,
                                      the core is recomputed in backward (Dao 2022) */
    bool fp8;                      /* the blocks' linear GEMMs in FP8 with per-tensor
                                      scaling, bf16 (the model's dtype) elsewhere
                                      (Transformer Engine style; docs/model.md 6.1) */
    int64_t cp;                    /* context parallelism: ranks each sequence is split over */
    comet_cp_comm cp_comm;         /* ... and how they exchange keys and values */
    int64_t ep;                    /* expert parallelism: ranks the experts of an MoE layer
                                      are split over (divides dp; folded: tp*cp*dp/expert_tp) */
    int64_t expert_tp;             /* ranks each expert is split over (divides tp; 0: tp).
                                      Below tp the experts are folded (MoE Parallel Folding,
                                      arXiv 2504.14960): expert-TP, EP and expert-DP laid over
                                      the stage's tp*cp*dp ranks, innermost first */
    comet_moe_dispatcher moe_dispatcher; /* how tokens reach the experts */
    comet_attn_kernel attention_kernel; /* the fused-attention kernel the framework runs
                                      (auto: the system's attention_efficiency curve) */
    comet_schedule schedule;       /* 1F1B, ZB-H1 or DualPipe (interleave 1 only) */
    int64_t first_stage_layers;    /* Transformer blocks on the first and on the last */
    int64_t last_stage_layers;     /* pipeline stage; 0: an even split (Megatron-LM's
                                      --decoder-first/last-pipeline-num-layers) */
    comet_framework framework;     /* the implementation assumed (auto: by ZeRO stage) */
    /* ZeRO 3 under fsdp (docs/model.md, frameworks): */
    int64_t prefetch;              /* layers whose gathers may run ahead of the layer
                                      computing (FSDP's backward_prefetch: 1) */
    int64_t gather_bucket;         /* parameters per all-gather message; 0: one per layer */
    int64_t reduce_bucket;         /* parameters per reduce-scatter message; 0: one per layer */

    /* Placement: which network dimensions each group occupies, innermost
     * first. If placement_given is false, comet_strategy_resolve fills
     * place[][] by filling dimensions in `order` (default tp, cp, ep, dp,
     * pp), where dp's place in the order is that of the data-parallel ranks
     * outside the expert-parallel group; either way place[DP] spans the
     * whole dp group and place[EP] its expert-parallel part, whose spans
     * divide dp's. */
    comet_group order[COMET_GROUP_COUNT];
    bool placement_given;
    int64_t place[COMET_GROUP_COUNT][COMET_MAX_DIMS];
    /* Folded experts (expert_tp < tp): the expert-TP group's spans, filled
     * by comet_strategy_resolve (all 1 otherwise); place[EP] then lies in
     * the stage's tp*cp*dp spans rather than in dp's. */
    int64_t place_etp[COMET_MAX_DIMS];
} comet_strategy;

/* The expert tensor-parallel degree in effect: expert_tp, or tp when 0.
 * (Inline: the workload builder, a layer below src/parallel/, reads it.) */
static inline int64_t comet_strategy_expert_tp(const comet_strategy *s)
{
    return s->expert_tp > 0 ? s->expert_tp : s->tp;
}
/* Whether the experts are folded: expert parallelism with expert_tp < tp
 * (Megatron-Core's MoE Parallel Folding). Then the expert-parallel group
 * is drawn from the stage's tp*cp*dp ranks after the expert-TP ranks,
 * and the expert-data-parallel group is the rest, tp*cp*dp/(expert_tp*ep)
 * ranks (comet_strategy_grad_spans). */
static inline bool comet_strategy_folded(const comet_strategy *s)
{
    return comet_strategy_expert_tp(s) < s->tp;
}

/* The framework a strategy runs: its own, or for auto the ZeRO stage's
 * (fsdp for ZeRO 3, megatron otherwise). */
comet_framework comet_strategy_framework(const comet_strategy *s);

/* Megatron-like defaults: tp=pp=dp=cp=ep=1, microbatch 1, global batch 1,
 * interleave 1, no recompute, ZeRO 0, DP overlap on, TP overlap off (as
 * Megatron-LM runs), ring context parallelism, order tp,cp,ep,dp,pp. */
void comet_strategy_defaults(comet_strategy *s);

/* A full order from a list of `n` groups naming tp, pp and dp once each
 * and cp and ep at most once (the caller checks that): cp when missing
 * goes right after tp, ep when missing right before dp (Megatron-Core's
 * tp-cp-ep-dp-pp). */
void comet_strategy_order_complete(const comet_group *given, int n,
                                   comet_group out[COMET_GROUP_COUNT]);

/* The spans, per network dimension, of the ranks an expert's gradients
 * are reduced over: dp's spans over ep's (the expert-data-parallel group
 * within one context-parallel slice, dp/ep ranks), or folded the stage's
 * tp*cp*dp spans over expert-TP's and EP's (context-parallel ranks
 * included). Needs a resolved strategy. */
void comet_strategy_expert_dp_spans(const comet_strategy *s, int64_t out[COMET_MAX_DIMS]);
/* The spans of the group a parameter's gradients are reduced over (and
 * ZeRO shards its state over): a dense parameter's dp x cp ranks (it is
 * replicated across context-parallel ranks, Megatron reduces over both),
 * an expert's (dp/ep) x cp, or folded tp*cp*dp/(expert_tp*ep). Every data-parallel collective uses these
 * rather than place[COMET_GROUP_DP]. comet_strategy_grad_size: the ranks. */
void comet_strategy_grad_spans(const comet_strategy *s, bool expert, int64_t out[COMET_MAX_DIMS]);
int64_t comet_strategy_grad_size(const comet_strategy *s, bool expert);
/* Whether expert parameters have a gradient group of their own (ep > 1,
 * or folded): the step plan reduces and shards them apart. */
bool comet_strategy_experts_apart(const comet_strategy *s);

/* Where a strategy's ranks sit on the network (the Chakra export's
 * numbering, and the fabric's step simulation's): within each dimension a
 * rank's coordinate is mixed radix over these digits, innermost first
 * (Megatron's order; DP's index split into EP's, low, and the expert-DP
 * group's, dp/ep, high), each with the span place[] gives it there; an
 * NPU's id is its coordinates over the dimensions, the first innermost.
 * Needs a resolved strategy; a folded expert layout has no such
 * numbering (its expert-DP digit does not tile). */
enum { COMET_DIGIT_TP, COMET_DIGIT_CP, COMET_DIGIT_EP, COMET_DIGIT_EDP, COMET_DIGIT_PP,
       COMET_RANK_DIGITS };
/* Each digit's span per dimension (1 where unused), and its values in all
 * (tp, cp, ep, dp/ep, pp). */
void comet_strategy_digit_spans(const comet_strategy *s,
                                int64_t out[COMET_RANK_DIGITS][COMET_MAX_DIMS]);
/* How many places apart a group's members sit along each dimension: the
 * spans there of the rank digits inside the group's innermost digit on it
 * (its members next to each other: 1). Group g's ranks (place[g]; DP's are
 * EP's and the expert-DP digits), and the gradient groups of
 * comet_strategy_grad_spans; a folded expert layout, whose digits do not
 * tile, gets 1 everywhere. The closed forms price a Clos with it
 * (comet_collective_time_placed), as the fabric places the ranks. Only
 * the first n_dims dimensions (the system's) are worked out, the rest 1. */
void comet_strategy_group_spacing(const comet_strategy *s, comet_group g, int n_dims,
                                  int64_t out[COMET_MAX_DIMS]);
void comet_strategy_grad_spacing(const comet_strategy *s, bool expert, int n_dims,
                                 int64_t out[COMET_MAX_DIMS]);
void comet_strategy_digit_counts(const comet_strategy *s, int64_t out[COMET_RANK_DIGITS]);
/* The NPU of the rank whose digits are idx[] (each below its count), on
 * dimensions of sizes[0..n_dims). */
int64_t comet_strategy_npu_of(const int64_t spans[COMET_RANK_DIGITS][COMET_MAX_DIMS],
                              const int64_t *sizes, int n_dims,
                              const int64_t idx[COMET_RANK_DIGITS]);

/* How npus NPUs fill the system's network dimensions (innermost first;
 * an auto-sized outermost dimension takes what is left). Errors name the
 * key "strategy". */
comet_status comet_system_layout(const comet_system *sys, int64_t npus,
                                 int64_t sizes[COMET_MAX_DIMS], comet_error *err);

/* Total NPUs = tp*cp*pp*dp. */
int64_t comet_strategy_npus(const comet_strategy *s);

/* Ranks in group g: tp, pp, dp, cp or ep. */
int64_t comet_strategy_group_size(const comet_strategy *s, comet_group g);

/* Microbatches of one step per data-parallel replica:
 * global_batch / (microbatch * dp), for a strategy that has passed
 * comet_strategy_resolve (or at least has positive microbatch and dp). */
int64_t comet_strategy_microbatches(const comet_strategy *s);

/* Whether schedule dualpipe can run the strategy's layout, as
 * comet_strategy_resolve demands: an even pp of at least 2, interleave 1,
 * and an even count of at least 2*pp microbatches. */
bool comet_strategy_dualpipe_runs(const comet_strategy *s);

/* Check the strategy against the model and system and fill place[][]
 * (and the size of an open outermost network dimension, returned in
 * *outer_size when non-NULL). Errors name the key, e.g. "strategy.tp". */
comet_status comet_strategy_resolve(const comet_model *m, const comet_system *sys,
                                    comet_strategy *s, int64_t dim_sizes[COMET_MAX_DIMS],
                                    comet_error *err);

/* Which rule a refused strategy broke, as a code for callers that sort
 * refusals (the search's statistics) rather than show them. */
typedef enum comet_strategy_fault {
    COMET_FAULT_NONE = 0,
    COMET_FAULT_LIMIT,          /* a knob outside its limits (comet_knob_get(knob)) */
    COMET_FAULT_NPUS_LIMIT,     /* tp*cp*pp*dp past comet's limit of NPUs */
    COMET_FAULT_TP_SPLIT,       /* tp does not divide heads, kv heads or ffn */
    COMET_FAULT_STAGES,         /* more pipeline stages than layers */
    COMET_FAULT_CHUNKS,         /* interleaving: more model chunks than layers, or no pipeline */
    COMET_FAULT_BATCH_SPLIT,    /* the global batch does not split into microbatches over
                                   dp (nor, interleaved, their count over pp) */
    COMET_FAULT_DTYPE,          /* the system has no matrix peak for the model's dtype */
    COMET_FAULT_NO_EXPANSION,   /* offload without an expansion memory tier */
    COMET_FAULT_NETWORK,        /* the NPUs do not fill the system's network dimensions */
    COMET_FAULT_PLACEMENT,      /* the groups cannot be laid out on the dimensions, or the
                                   given placement is not possible */
    COMET_FAULT_NO_FP8,         /* fp8 on a system with no fp8 matrix peak, or for a
                                   layer list (comet_strategy_check_fp8) */
    COMET_FAULT_CP_SPLIT,       /* cp does not split the sequence (or the heads, Ulysses),
                                   or the model is a layer list */
    COMET_FAULT_EP_SPLIT,       /* ep does not divide dp (folded: tp*cp*dp/expert_tp) or
                                   the experts, or the model has no experts; expert_tp does
                                   not divide tp */
    COMET_FAULT_SCHEDULE,       /* zb-h1 or dualpipe with interleave > 1; dualpipe with
                                   odd pp, odd or too few microbatches, uneven stages */
    COMET_FAULT_UNEVEN_STAGES,  /* first/last_stage_layers leave a middle stage no layer,
                                   exceed the depth, or meet interleaving or a layer list */
    COMET_FAULT_FRAMEWORK,      /* ZeRO 3 under framework megatron */
    COMET_FAULT_ATTENTION_KERNEL /* an attention kernel the system has no curve for */
} comet_strategy_fault;

typedef struct comet_strategy_refusal {
    comet_strategy_fault fault;
    comet_knob_id knob;         /* the knob the error's key names; COMET_KNOB_COUNT when
                                   it names the strategy as a whole or another section */
} comet_strategy_refusal;

/* fp8's rule, one of those comet_strategy_resolve applies, for callers
 * that check it before trying many strategies (the search): with s->fp8
 * the system needs an fp8 matrix peak and the model must be a
 * Transformer; else COMET_EINPUT naming strategy.fp8 (COMET_OK without
 * fp8). */
comet_status comet_strategy_check_fp8(const comet_model *m, const comet_system *sys,
                                      const comet_strategy *s, comet_error *err);

/* comet_strategy_resolve that also says, in *why, which rule a refused
 * strategy broke ({COMET_FAULT_NONE, COMET_KNOB_COUNT} when it resolves). */
comet_status comet_strategy_resolve_why(const comet_model *m, const comet_system *sys,
                                        comet_strategy *s, int64_t dim_sizes[COMET_MAX_DIMS],
                                        comet_strategy_refusal *why, comet_error *err);

#endif
