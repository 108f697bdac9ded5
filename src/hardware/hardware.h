/* Internal: accelerator and memory-tier timing used by the estimator. */
#ifndef COMET_HARDWARE_H
#define COMET_HARDWARE_H

#include <stdbool.h>

#include "comet/system.h"

/* Effective rates for one datatype, efficiencies applied (except the
 * size-dependent GEMM and attention efficiencies, applied per operation). */
typedef struct hw_rates {
    const comet_compute *compute;
    double log_flops[COMET_MAX_EFF_POINTS];  /* log of each GEMM efficiency point's size */
    const comet_attn_point *attn;            /* the fused-attention curve in use */
    int n_attn;                              /* ... its points (0: none) */
    double log_attn[COMET_MAX_ATTN_POINTS];  /* log of each attention point's seq x head_dim */
    double matrix;   /* peak matrix FLOP/s */
    double matrix_fp8; /* peak fp8 matrix FLOP/s, for GEMMs in fp8 (0: none) */
    double vector;   /* achievable vector FLOP/s */
    double hbm;      /* achievable HBM bytes/s of a streaming kernel (GEMM operands) */
    double hbm_kind[COMET_MEMK_COUNT]; /* ... of each kind of memory-bound kernel */
    double launch;   /* seconds added to every kernel */
    double issue;    /* host seconds to issue one kernel (0: never the limit) */
} hw_rates;

void hw_rates_init(hw_rates *r, const comet_system *sys, comet_dtype dt);
/* Price fused attention with the curve of kernel k (auto, or the one the
 * system's own curve measured: that curve; else the system's curve of
 * that name, which comet_strategy_resolve has checked is there). */
void hw_rates_attention(hw_rates *r, comet_attn_kernel k);
/* A GEMM at the dtype's matrix peak, or (fp8) at the fp8 peak, through
 * the same size-dependent efficiency curve, times the reduction-length
 * term for a reduction of k_reduce elements (0: unknown, no term). */
double hw_gemm_time(const hw_rates *r, double flops, double bytes, bool fp8, double k_reduce);
/* The same GEMM's three passes at once (forward, input gradient, weight
 * gradient), each with its reduction length: one curve lookup. m_group > 0:
 * a grouped GEMM over experts of m_group tokens each (the forward and the
 * input gradient take the grouped_gemm_m0 term). */
void hw_gemm_passes(const hw_rates *r, double flops, double bytes, bool fp8,
                    const double k_reduce[3], double m_group, double t[3]);
/* A memory-bound kernel of a kind: the slower of its FLOPs on the vector
 * units and its bytes at that kind's HBM rate. */
double hw_vector_time(const hw_rates *r, comet_mem_kernel kind, double flops, double bytes);
/* The optimizer step moving `bytes` through HBM. */
double hw_optimizer_time(const hw_rates *r, double bytes);

/* Whether the system gives a fused-attention curve (else attention is
 * priced as its GEMMs and softmax). */
bool hw_has_attention_curve(const hw_rates *r);
/* Fused attention of `flops` matrix FLOPs (comet's count: the whole score
 * matrix) in kernels of (seq, head_dim): the forward kernel's time and the
 * forward and backward kernels' time together. Causal masking halves the
 * work; `causal_share` of that work runs in causal (masked) kernels, the
 * rest in unmasked blocks (ring context parallelism: 1/cp on the
 * diagonal); ignored when not causal. */
void hw_attention_times(const hw_rates *r, double flops, double seq, double head_dim, bool causal,
                        double causal_share, double *fwd, double *fwd_bwd);

/* Achievable expansion-tier bandwidth seen by one NPU when `active` NPUs
 * use the tier at once (per_node devices are shared by shared_by NPUs,
 * a pool by every NPU of the job). 0 when there is no tier. */
double hw_expansion_bandwidth(const comet_system *sys, int64_t npus);

/* Expansion-tier capacity available to one NPU. */
double hw_expansion_capacity(const comet_system *sys, int64_t npus);

#endif
