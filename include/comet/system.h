/* The cluster description: accelerator compute, memory tiers (HBM and an
 * optional expansion tier such as CXL-attached DRAM) and a network given as
 * a list of dimensions, each with its own topology and collective algorithm. */
#ifndef COMET_SYSTEM_H
#define COMET_SYSTEM_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/congestion.h"
#include "comet/model.h"
#include "comet/units.h"

#define COMET_MAX_EFF_POINTS 16
#define COMET_MAX_DIMS 8

/* GEMM efficiency as a function of the operation's FLOPs: linear
 * interpolation in log10(flops) between points, clamped at the ends. */
typedef struct comet_eff_point {
    double flops;
    double efficiency;
} comet_eff_point;

/* Fused (flash) attention's efficiency at one shape: the fraction of the
 * matrix peak its forward, and its forward and backward together, reach
 * on the work the kernel does (half the score matrix when causal), the
 * backward counted as twice the forward's FLOPs. A causal kernel has its
 * own pair where given (its diagonal blocks are half masked, so it reaches
 * less of the peak on the work it does, most at short sequences); 0: the
 * non-causal value. Points are ordered by seq x head_dim, the size the
 * curve is interpolated over (in log). */
typedef struct comet_attn_point {
    double seq;
    double head_dim;
    double forward;
    double forward_backward;
    double causal_forward;            /* 0: forward */
    double causal_forward_backward;   /* 0: forward_backward */
} comet_attn_point;

/* Kinds of memory-bound kernel: each reaches its own fraction of HBM
 * bandwidth (a copy streams; a norm reduces each row first). */
typedef enum comet_mem_kernel {
    COMET_MEMK_ELEMENTWISE = 0, /* residual add, dropout, bias: streaming, like a copy */
    COMET_MEMK_NORM,            /* layernorm, RMSNorm */
    COMET_MEMK_ACTIVATION,      /* GeLU, SwiGLU */
    COMET_MEMK_SOFTMAX,         /* unfused attention softmax; the LM head's cross-entropy */
    COMET_MEMK_ROPE,            /* rotary position embedding */
    COMET_MEMK_CAST,            /* fp8 casts with their amax */
    COMET_MEMK_OPTIMIZER,       /* the optimizer step */
    COMET_MEMK_BATCHNORM,       /* a CNN's batch norm in training (statistics over the batch) */
    COMET_MEMK_POOL,            /* a CNN's max or average pooling */
    COMET_MEMK_COUNT
} comet_mem_kernel;

/* "elementwise", "norm", ... (the keys of compute.memory_efficiency);
 * parse returns 0, or -1 for an unknown name. */
const char *comet_mem_kernel_name(comet_mem_kernel k);
int comet_mem_kernel_parse(const char *name, comet_mem_kernel *out);

#define COMET_MAX_ATTN_POINTS 32

/* Fused-attention kernels a system may give curves for, by name; auto is
 * the system's own attention_efficiency curve, whichever kernel it is. */
typedef enum comet_attn_kernel {
    COMET_ATTN_AUTO = 0,
    COMET_ATTN_CUDNN,        /* cuDNN's fused attention (Transformer Engine on Hopper) */
    COMET_ATTN_FLASH2,       /* FlashAttention 2 (PyTorch SDPA's flash backend) */
    COMET_ATTN_FLASH3,       /* FlashAttention 3 (Hopper) */
    COMET_ATTN_KERNEL_COUNT
} comet_attn_kernel;

const char *comet_attn_kernel_name(comet_attn_kernel k);

typedef struct comet_compute {
    double matrix_flops[COMET_DTYPE_COUNT];   /* peak FLOP/s, 0 = unsupported */
    double vector_flops[COMET_DTYPE_COUNT];
    int n_gemm_eff;
    comet_eff_point gemm_eff[COMET_MAX_EFF_POINTS];
    /* An fp8 GEMM reaches this share of the curve's efficiency (on the
     * fp8 peak): its scaling, casts and narrower tiles cost what a bf16
     * GEMM of the same FLOPs does not; 0: 1, the curve as it is. */
    double fp8_gemm_efficiency;
    /* A GEMM's reduction length K costs as K + gemm_k_overhead (each
     * output tile's prologue and epilogue), so its efficiency is the
     * curve's times K / (K + gemm_k_overhead); 0: no such term. */
    double gemm_k_overhead;
    /* A grouped GEMM (an MoE layer's local experts in one launch, m tokens
     * each) reaches the curve's efficiency at its total FLOPs times
     * m / (m + grouped_gemm_m0) in its forward and input-gradient passes:
     * each expert's few rows fill its output tiles only in part (its
     * weight gradient reduces over the m tokens: the k0 term); 0: none. */
    double grouped_gemm_m0;
    double vector_efficiency;                 /* of vector peak */
    double kernel_launch;                     /* seconds added to every kernel */
    /* Host time to issue one kernel (framework dispatch and launch): a
     * layer's pass takes at least its kernels times this, when the host
     * cannot keep ahead of short kernels; 0: the host never limits. */
    double kernel_issue;
    int n_attn_eff;                           /* 0: attention priced as its GEMMs */
    comet_attn_point attn_eff[COMET_MAX_ATTN_POINTS];
    /* which kernel attn_eff measured (auto: not said), and other kernels'
     * curves by name (attention_kernels), for strategies that name one
     * (strategy.attention_kernel); n 0: no curve for that kernel */
    comet_attn_kernel attn_kernel;
    int n_attn_alt[COMET_ATTN_KERNEL_COUNT];
    comet_attn_point attn_alt[COMET_ATTN_KERNEL_COUNT][COMET_MAX_ATTN_POINTS];
    /* achievable fraction of HBM bandwidth per kind of memory-bound
     * kernel; 0: the HBM tier's efficiency */
    double mem_efficiency[COMET_MEMK_COUNT];
    /* Share of compute throughput a collective takes while it runs behind
     * compute (its kernels hold SMs and HBM bandwidth): h seconds of hidden
     * communication add overlap_slowdown * h to the compute; 0: free. */
    double overlap_slowdown;
    /* Relative 1-sigma spread of the measured kernel rates about the
     * efficiencies above (calibrate's residuals, a source's range): widens
     * every prediction's uncertainty band by this times the step's compute
     * share (include/comet/band.h); 0: none given. */
    double efficiency_spread;
    /* Every kernel's rate (matrix, vector, HBM) times this: what a
     * training framework's kernels reach of the rates the same kernels
     * reach timed alone, as `comet calibrate --steps` fits it to measured
     * steps (0 < x <= 2); 0: 1, the kernels' own rates. */
    double framework_efficiency;
} comet_compute;

typedef enum comet_attach {
    COMET_ATTACH_PER_NPU = 0,
    COMET_ATTACH_PER_NODE,   /* shared and contended by the NPUs of one node */
    COMET_ATTACH_POOL        /* one pool shared by the whole cluster */
} comet_attach;

typedef struct comet_mem_tier {
    bool present;
    double capacity;      /* bytes per NPU (per_npu) or per node / pool */
    double bandwidth;     /* bytes/s per NPU (per_npu) or per node / pool */
    double efficiency;    /* achievable fraction of bandwidth */
    double latency;       /* seconds per access burst */
    comet_attach attach;
    int64_t shared_by;    /* NPUs sharing one node device (per_node); 0 = the
                             size of the innermost network dimension */
} comet_mem_tier;

/* A dimension's physical topology (docs/fabric.md). The first three are
 * the short form every dimension had; the others take shape keys
 * (comet_net_shape). */
typedef enum comet_topology {
    COMET_TOPO_RING = 0,
    COMET_TOPO_FULLY_CONNECTED,
    COMET_TOPO_SWITCH,
    COMET_TOPO_TORUS,          /* 1-3 axes (shape), wrap-around links */
    COMET_TOPO_MESH,           /* 1-3 axes (shape), no wrap-around */
    COMET_TOPO_FAT_TREE,       /* Clos of 2 or 3 tiers of radix-port switches, one tree per
                                  pod: every NPU of the dimensions up to this one attaches */
    COMET_TOPO_RAIL,           /* rail-optimized Clos: NIC k of every node on rail leaf k */
    /* FRED (Rashidi et al., ISCA 2025): a wafer's NPUs in groups of radix
     * under L1 switches, the L1s under one L2, each L1's uplink radix / o
     * NPU ports (any o >= 1), every flow spread over the switches' paths */
    COMET_TOPO_FRED,
    COMET_TOPO_COUNT
} comet_topology;

/* How a Clos spreads flows over its equal-cost paths. */
typedef enum comet_routing {
    COMET_ROUTE_ECMP = 0,      /* one path per flow, picked by a reproducible hash */
    COMET_ROUTE_SPRAY,         /* every flow split evenly over all equal paths (ideal) */
    COMET_ROUTE_COUNT
} comet_routing;

#define COMET_MAX_AXES 3
#define COMET_MAX_TIERS 3

/* The shape of a dimension's topology beyond its size: what the fabric
 * builds (src/network/fabric.c) and the closed forms price. Zero values
 * are "not given": a ring is bidirectional, a Clos 2 tiers, 1:1. */
typedef struct comet_net_shape {
    int n_axes;                           /* torus, mesh: axes given (product = size) */
    int64_t axes[COMET_MAX_AXES];
    bool unidirectional;                  /* ring: links one way only */
    int tiers;                            /* fat_tree, rail: 2 or 3 (0: 2) */
    int64_t radix;                        /* fat_tree, rail: ports per switch; fred: NPUs per
                                             L1 switch */
    /* down:up port ratio at the top of tier t ([0] the leaves' uplinks,
     * [1] the aggregation switches' in 3 tiers); 0: 1 (non-blocking) */
    double oversubscription[COMET_MAX_TIERS - 1];
    comet_routing routing;
    /* Rings a ring-algorithm collective runs at once on a switch or Clos,
     * each its own connection (NCCL's channels; ECMP hashes each apart),
     * the buffer split over them; the flows see it, the closed forms do
     * not need to. 0: 1. */
    int channels;
    /* ECMP: which hashing of the connections onto equal paths the flow
     * simulation uses (0: the default one; another number, another
     * draw). The estimate prices the expected busiest link over all
     * hashings, so averaging the flows over seeds meets it. */
    int ecmp_seed;
} comet_net_shape;

typedef enum comet_algorithm {
    COMET_ALGO_RING = 0,
    COMET_ALGO_DIRECT,
    COMET_ALGO_HALVING_DOUBLING,
    COMET_ALGO_DOUBLE_BINARY_TREE,
    COMET_ALGO_COUNT
} comet_algorithm;

const char *comet_topology_name(comet_topology t);
const char *comet_routing_name(comet_routing r);
int comet_topology_parse(const char *name, comet_topology *out);
const char *comet_algorithm_name(comet_algorithm a);
int comet_algorithm_parse(const char *name, comet_algorithm *out);

/* How a dimension's collectives pay for small messages (docs/collectives.md,
 * "Protocols"). NONE: the alpha-beta closed forms alone. The NCCL values
 * price every collective call three ways, as NCCL's tuning model does for
 * its LL, LL128 and Simple protocols (a base latency per call, a latency
 * per step, a fraction of the link bandwidth), and keep the fastest; the
 * suffix picks NCCL's per-step hardware latencies: NVLink, PCIe, or the
 * network between nodes. */
typedef enum comet_protocol_model {
    COMET_PROTOCOLS_NONE = 0,
    COMET_PROTOCOLS_NCCL_NVLINK,
    COMET_PROTOCOLS_NCCL_PCI,
    COMET_PROTOCOLS_NCCL_NET,
    COMET_PROTOCOLS_COUNT
} comet_protocol_model;

const char *comet_protocol_model_name(comet_protocol_model p);

#define COMET_MAX_BUS_POINTS 32

/* One row of a measured bus-bandwidth curve, as nccl-tests prints it: the
 * buffer size (bytes per NPU, nccl-tests' "size") and the bus bandwidth. */
typedef struct comet_bus_point {
    double bytes;
    double busbw;              /* bytes/s */
} comet_bus_point;

typedef struct comet_bus_curve {
    int n_points;              /* 0: no curve for this collective */
    comet_bus_point points[COMET_MAX_BUS_POINTS]; /* increasing bytes */
} comet_bus_curve;

/* Measured curves of one dimension, one per collective (indexed by
 * comet_collective; [COMET_COLL_NONE] unused), all measured on `npus`
 * NPUs of the dimension. A collective with a curve is priced by it on this
 * dimension; the others by the protocol model or the closed forms. */
typedef struct comet_bus_curves {
    int64_t npus;              /* the group the curves were measured on (>= 2) */
    int n_curves;              /* collectives that have a curve */
    comet_bus_curve curve[COMET_COLL_SYMMETRIC];
} comet_bus_curves;

typedef struct comet_net_dim {
    char name[32];
    int64_t size;              /* NPUs along this dimension; 0 = as many as needed (outermost only) */
    comet_topology topology;
    comet_algorithm algorithm;
    double bandwidth;          /* bytes/s per NPU, one direction */
    double latency;            /* seconds per message hop */
    double efficiency;         /* achievable fraction of bandwidth */
    bool in_network_reduction; /* switch reduces: all-reduce moves half the data */
    double cost_per_gbps;      /* cost per GB/s per NPU on this dimension (0 = none) */
    double cost_per_switch_port; /* fat_tree, rail: per port of every switch (0 = none) */
    double cost_per_link;      /* fat_tree, rail: per cable, NPU or uplink (0 = none) */
    comet_protocol_model protocols; /* NONE: alpha-beta only */
    comet_bus_curves bus;      /* measured bus bandwidth (bus.n_curves 0: none) */
    comet_net_shape shape;     /* torus/mesh axes, Clos tiers, ring direction */
    comet_cc_params cc;        /* congestion control on its links (scheme NONE: max-min flows) */
} comet_net_dim;

typedef struct comet_system {
    char name[COMET_NAME_LEN];
    comet_compute compute;
    comet_mem_tier hbm;
    comet_mem_tier expansion;
    int n_dims;
    comet_net_dim dims[COMET_MAX_DIMS];   /* innermost first */
    int64_t collective_chunks;            /* chunks pipelined across dimensions (>= 1) */
    /* costs (0 = not given) */
    double cost_per_npu;
    double cost_per_gib_hbm;
    double cost_per_gib_expansion;
    double cost_per_tflops;               /* per TFLOP/s of 16-bit matrix peak (bf16, else fp16) */
    double cost_per_gbps_hbm;             /* per GB/s of HBM bandwidth */
} comet_system;

/* GEMM efficiency for an operation of this many FLOPs (1.0 if no curve). */
double comet_gemm_efficiency(const comet_compute *c, double flops);

/* The fused-attention curve kernel k is priced with and its points in *n:
 * auto, or the kernel the system's own curve measured, that curve (which
 * may have no points); another kernel its attention_kernels curve; NULL
 * (and *n 0) when the system gives none for k. */
const comet_attn_point *comet_attention_curve(const comet_compute *c, comet_attn_kernel k,
                                              int *n);

#endif
