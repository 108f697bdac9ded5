/* The workload description: a decoder-only Transformer given by its shape,
 * or a generic list of layers with their own FLOPs, bytes, parameters,
 * activations and communication (DLRM-like or CNN models). */
#ifndef COMET_MODEL_H
#define COMET_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "comet/error.h"

typedef enum comet_dtype {
    COMET_DTYPE_FP32 = 0,
    COMET_DTYPE_TF32,
    COMET_DTYPE_FP16,
    COMET_DTYPE_BF16,
    COMET_DTYPE_FP8,
    COMET_DTYPE_COUNT
} comet_dtype;

/* Bytes per element of a datatype (TF32 is stored as 4 bytes). */
double comet_dtype_bytes(comet_dtype dt);
const char *comet_dtype_name(comet_dtype dt);
/* Returns 0 and sets *out, or -1 for an unknown name. */
int comet_dtype_parse(const char *name, comet_dtype *out);

typedef enum comet_model_kind {
    COMET_MODEL_TRANSFORMER = 0,
    COMET_MODEL_LAYERS = 1
} comet_model_kind;

/* The parallel groups of a strategy. A generic layer's own communication
 * runs over tp, pp or dp (COMET_LAYER_GROUPS of them). Context parallelism
 * (cp) is a group of its own; expert parallelism (ep) is a part of the
 * data-parallel group (comet/strategy.h). */
typedef enum comet_group {
    COMET_GROUP_TP = 0,
    COMET_GROUP_PP = 1,
    COMET_GROUP_DP = 2,
    COMET_GROUP_CP = 3,
    COMET_GROUP_EP = 4,
    COMET_GROUP_COUNT
} comet_group;

#define COMET_LAYER_GROUPS 3

typedef enum comet_collective {
    COMET_COLL_NONE = 0,
    COMET_COLL_ALL_REDUCE,
    COMET_COLL_REDUCE_SCATTER,
    COMET_COLL_ALL_GATHER,
    COMET_COLL_ALL_TO_ALL,
    /* rooted collectives and the barrier (Chakra traces hold them):
     * rooted at each group's first member, priced by each topology's
     * rooted closed forms and run as flows of the same plans; the barrier
     * as comet_collective_priced_as says (docs/collectives.md) */
    COMET_COLL_BROADCAST,
    COMET_COLL_REDUCE,
    COMET_COLL_GATHER,
    COMET_COLL_SCATTER,
    COMET_COLL_BARRIER,
    COMET_COLL_COUNT
} comet_collective;

/* The symmetric collectives (all-reduce to all-to-all): those priced by
 * their own closed forms and measured curves. */
#define COMET_COLL_SYMMETRIC (COMET_COLL_ALL_TO_ALL + 1)

const char *comet_collective_name(comet_collective c);
int comet_collective_parse(const char *name, comet_collective *out);
const char *comet_group_name(comet_group g);
int comet_group_parse(const char *name, comet_group *out);

#define COMET_MAX_LAYER_KINDS 48
#define COMET_NAME_LEN 64

/* A layer-list entry may be given by its shape instead of its numbers:
 * comet_model_derive_shapes computes its FLOPs, bytes, parameters and
 * activations from the operation and the input's size (docs/model.md
 * Section 13.1). */
typedef enum comet_layer_op {
    COMET_OP_NONE = 0,         /* given by its numbers */
    COMET_OP_CONV,             /* 2-D convolution */
    COMET_OP_POOL,             /* max or average pooling */
    COMET_OP_BATCHNORM,        /* batch normalization (training mode, with gain and shift) */
    COMET_OP_RELU,             /* ReLU, in place */
    COMET_OP_FC,               /* fully connected (the input flattened) */
    COMET_OP_BOTTLENECK,       /* ResNet's 1x1-3x3-1x1 block with batch norms, ReLUs and
                                  its shortcut: a projection (1x1 conv + batch norm) when
                                  the stride or the channels change, else the identity */
    COMET_OP_DROPOUT,          /* dropout in training: a random mask, kept for backward */
    COMET_OP_INCEPTION,        /* one of Inception-v3's blocks (`variant`): parallel branches
                                  of convolutions (each with batch norm and ReLU) and a pool,
                                  their outputs concatenated */
    COMET_OP_COUNT
} comet_layer_op;

typedef enum comet_pool_kind {
    COMET_POOL_MAX = 0,
    COMET_POOL_AVG,
    COMET_POOL_COUNT
} comet_pool_kind;

/* Which of a bottleneck's convolutions carries its stride. */
typedef enum comet_stride_at {
    COMET_STRIDE_1X1 = 0,      /* the first 1x1 (He et al. 2016, the original ResNet) */
    COMET_STRIDE_3X3,          /* the 3x3 (ResNet v1.5, torchvision) */
    COMET_STRIDE_AT_COUNT
} comet_stride_at;

/* Which of Inception-v3's blocks an inception entry is (Szegedy et al.
 * 2016, arXiv:1512.00567, Figures 5, 6, 7 and 10 as torchvision's
 * Inception3 builds them): A (35x35: 1x1, 5x5, double 3x3 and pool
 * branches; `width` is the pool branch's channels), B (35 to 17 grid
 * reduction), C (17x17 with factorized 1x7/7x1 convolutions; `width` is
 * their inner channels), D (17 to 8 reduction), E (8x8 with split 1x3/3x1
 * branches). */
typedef enum comet_inception_variant {
    COMET_INCEPTION_A = 0,
    COMET_INCEPTION_B,
    COMET_INCEPTION_C,
    COMET_INCEPTION_D,
    COMET_INCEPTION_E,
    COMET_INCEPTION_COUNT
} comet_inception_variant;

/* The shape of one entry (op == COMET_OP_NONE: given by its numbers).
 * Sizes are per sample: height, width, channels. */
typedef struct comet_layer_shape {
    comet_layer_op op;
    int64_t in[3];             /* input height, width, channels; all 0: the output of the
                                  entry before (an fc's input is flattened) */
    int64_t out_channels;      /* conv, bottleneck: output channels; fc: output features */
    int64_t width;             /* bottleneck: channels of its first 1x1 and its 3x3 */
    int64_t kernel;            /* conv, pool: side of the square kernel */
    int64_t stride;            /* conv, bottleneck: 0 means 1; pool: 0 means the kernel */
    int64_t padding;           /* conv, pool: zeros added on each side */
    int64_t groups;            /* conv: 0 means 1 */
    bool bias;                 /* conv, fc: a bias per output channel */
    comet_pool_kind pool;
    bool global;               /* pool: one window over the whole input */
    comet_stride_at stride_at; /* bottleneck */
    comet_inception_variant variant; /* inception */
    /* derived by comet_model_derive_shapes */
    int64_t out[3];            /* output height, width, channels */
    double gemm_flops;         /* of fwd_flops, the convolutions' and fully connected
                                  layers' (2 per multiply-add, with their biases) */
    int64_t in_at[3];          /* the input it was derived for (its own or the entry before's) */
} comet_layer_shape;

/* One entry of a generic layer list. All per-sample quantities are for one
 * sample of the microbatch on one replica before tensor parallelism; the
 * estimator divides FLOPs, bytes, parameters and activations by TP when the
 * layer is marked tp_sharded. */
typedef struct comet_layer {
    char name[COMET_NAME_LEN];
    int64_t count;             /* how many identical layers in a row */
    double fwd_flops;          /* forward FLOPs per sample */
    double fwd_bytes;          /* forward memory traffic per sample, bytes */
    double params;             /* parameters (elements) */
    double act_bytes;          /* activation bytes stashed per sample */
    double out_bytes;          /* bytes of the layer output per sample (pipeline p2p, TP reduce) */
    bool tp_sharded;           /* split across the TP group (with one all-reduce of out_bytes fwd and bwd) */
    bool model_parallel;       /* parameters split over every NPU of a stage (tp x dp), like
                                  DLRM's embedding tables: not replicated, so no DP gradient
                                  reduction and no ZeRO; work stays per sample */
    comet_collective comm;     /* the layer's own communication, forward (mirrored in backward) */
    comet_group comm_group;
    double comm_bytes;         /* per sample */
    comet_layer_shape shape;   /* how it was given, when by its shape */
} comet_layer;

/* Mixture-of-experts layers of a Transformer (experts == 0: a dense model).
 * An MoE layer replaces the block's MLP by a router and `experts` routed
 * experts, each an MLP of inner size `ffn`, of which every token uses
 * `top_k`, plus `shared` experts every token uses. */
typedef struct comet_moe {
    int64_t experts;           /* routed experts per MoE layer */
    int64_t top_k;             /* routed experts per token */
    int64_t shared;            /* shared experts per MoE layer */
    int64_t ffn;               /* one expert's MLP inner size (0: the model's ffn) */
    int64_t every;             /* layer i is MoE when (i + 1) % every == 0 (1: all) */
    int64_t first_dense;       /* ... and i >= first_dense (the first k layers stay dense) */
    double capacity_factor;    /* an expert takes at most this times its mean share of
                                  tokens, the rest are dropped (0: dropless) */
    double imbalance;          /* the busiest expert-parallel rank's routed tokens over
                                  the mean (>= 1; 1: perfectly balanced) */
    int64_t max_nodes;         /* node-limited routing: a token's routed experts lie on at
                                  most this many nodes of the EP group (DeepSeek-V3: 4);
                                  0: no limit. Only the deepep dispatcher's bytes read it */
} comet_moe;

typedef struct comet_model {
    char name[COMET_NAME_LEN];
    comet_model_kind kind;
    comet_dtype dtype;         /* datatype of weights and activations in compute */

    /* Transformer shape (kind == COMET_MODEL_TRANSFORMER). */
    int64_t layers;
    int64_t hidden;
    int64_t heads;
    int64_t kv_heads;          /* == heads for MHA, 1 for MQA, between for GQA */
    int64_t head_dim;          /* width of one attention head (0: hidden / heads); Qwen3
                                  and DeepSeek-V3's stand-in have heads*head_dim != hidden */
    int64_t ffn;               /* MLP inner size */
    int64_t seq;
    int64_t vocab;
    bool gated_mlp;            /* SwiGLU style: three MLP matrices */
    bool tied_embeddings;      /* LM head shares the input embedding */
    bool learned_positions;    /* learned position embedding table (GPT) vs rotary (Llama) */
    bool biases;               /* linear layers carry biases (GPT) or not (Llama) */
    bool dropout;              /* dropout layers present (their masks are stashed) */
    bool causal;               /* causal (decoder) attention: a fused kernel skips the masked
                                  half of the scores (default); false: bidirectional */
    comet_moe moe;             /* mixture-of-experts layers (moe.experts == 0: none) */

    /* Generic layer list (kind == COMET_MODEL_LAYERS). */
    int n_layer_kinds;
    comet_layer layer_list[COMET_MAX_LAYER_KINDS];
    int64_t sample_tokens;     /* tokens per sample for tokens/s (1 if unset) */
} comet_model;

/* Total parameter count, embeddings and LM head included (every expert
 * of a mixture of experts). */
double comet_model_params(const comet_model *m);
/* Parameters one token uses: a mixture of experts counts its top_k routed
 * and its shared experts per MoE layer (and the router); else the total. */
double comet_model_active_params(const comet_model *m);
/* Number of layers the pipeline can split (transformer layers or the sum of counts). */
int64_t comet_model_depth(const comet_model *m);
/* Whether Transformer layer `layer` (0-based) is a mixture-of-experts
 * layer, and how many of layers first .. first+count-1 are. */
bool comet_model_is_moe_layer(const comet_model *m, int64_t layer);
int64_t comet_model_moe_layers(const comet_model *m, int64_t first, int64_t count);
/* The numbers (fwd_flops, fwd_bytes, params, act_bytes, out_bytes and
 * shape.out, shape.gemm_flops) of every layer-list entry given by its
 * shape, at the model's dtype, per sample; entries given by numbers are
 * left as they are. An entry without `in` takes the output of the one
 * before, which must then be given by its shape too; a repeated entry
 * (count > 1) must put out what it takes in. Bad shapes (an input that
 * does not chain, a kernel larger than the padded input, groups that do
 * not divide the channels, a missing size) are COMET_EINPUT, with err->key
 * relative to the model (`layer_list[3].kernel`). docs/model.md 13.1. */
comet_status comet_model_derive_shapes(comet_model *m, comet_error *err);
/* Tokens in one sample (seq for transformers). */
int64_t comet_model_tokens_per_sample(const comet_model *m);

#endif
