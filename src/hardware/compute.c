/* Accelerator compute model: roofline time of one kernel. GEMM efficiency
 * is interpolated from measured points as a function of the operation's
 * size (small GEMMs do not fill the matrix engines), times a term for a
 * short reduction; fused attention has its own curve by shape; each kind
 * of memory-bound kernel its own share of HBM bandwidth; every kernel
 * pays a fixed launch overhead. Formulas and sources: docs/model.md,
 * compute. */
#include "hardware.h"
#include "../vocab/vocab.h"

#include <math.h>

/* Linear in log(FLOPs) between the points, clamped at the ends; logs[i]
 * is log(p[i].flops), computed once per estimate by hw_rates_init. */
static double interpolate(const comet_eff_point *p, const double *logs, int n, double flops)
{
    if (n <= 0)
        return 1.0;
    if (flops <= p[0].flops)
        return p[0].efficiency;
    if (flops >= p[n - 1].flops)
        return p[n - 1].efficiency;
    int i = 1;
    while (i < n - 1 && flops > p[i].flops)
        i++;
    double w = (log(flops) - logs[i - 1]) / (logs[i] - logs[i - 1]);
    return p[i - 1].efficiency + w * (p[i].efficiency - p[i - 1].efficiency);
}

static void log_points(const comet_compute *c, double logs[COMET_MAX_EFF_POINTS])
{
    int n = c->n_gemm_eff < COMET_MAX_EFF_POINTS ? c->n_gemm_eff : COMET_MAX_EFF_POINTS;
    for (int i = 0; i < n; i++)
        logs[i] = log(c->gemm_eff[i].flops);
}

double comet_gemm_efficiency(const comet_compute *c, double flops)
{
    double logs[COMET_MAX_EFF_POINTS];
    log_points(c, logs);
    return interpolate(c->gemm_eff, logs, c->n_gemm_eff, flops);
}

/* A kind's share of HBM bandwidth; 0 where the system gives none (then
 * the GEMM operands' hbm.efficiency). A CNN's batch norm and pooling,
 * where not given, take the norms' figure: the nearest measured kind, a
 * reduction and a transform, and slower than streaming. docs/model.md 6. */
static double mem_share(const comet_compute *c, int kind)
{
    if (c->mem_efficiency[kind] > 0.0)
        return c->mem_efficiency[kind];
    if (kind == COMET_MEMK_BATCHNORM || kind == COMET_MEMK_POOL)
        return c->mem_efficiency[COMET_MEMK_NORM];
    return 0.0;
}

void hw_rates_init(hw_rates *r, const comet_system *sys, comet_dtype dt)
{
    const comet_compute *c = &sys->compute;
    r->compute = c;
    log_points(c, r->log_flops);
    hw_rates_attention(r, COMET_ATTN_AUTO);
    r->matrix = c->matrix_flops[dt]; /* > 0: comet_strategy_resolve checks */
    /* > 0 when fp8 is asked for */
    r->matrix_fp8 = c->matrix_flops[COMET_DTYPE_FP8] *
                    (c->fp8_gemm_efficiency > 0.0 ? c->fp8_gemm_efficiency : 1.0);
    /* Element-wise work on narrow types (fp8) runs on 16-bit vector units. */
    r->vector = c->vector_flops[dt];
    if (r->vector <= 0.0)
        r->vector = c->vector_flops[COMET_DTYPE_FP16];
    if (r->vector <= 0.0)
        r->vector = c->vector_flops[COMET_DTYPE_FP32];
    if (r->vector <= 0.0)
        r->vector = r->matrix;
    double veff = vocab_efficiency(c->vector_efficiency);
    r->vector *= veff;
    double heff = vocab_efficiency(sys->hbm.efficiency);
    r->hbm = sys->hbm.bandwidth * heff;
    for (int k = 0; k < COMET_MEMK_COUNT; k++)
        r->hbm_kind[k] = mem_share(c, k) > 0.0 ? sys->hbm.bandwidth * mem_share(c, k) : r->hbm;
    /* a framework's kernels against the same kernels timed alone */
    double fe = c->framework_efficiency > 0.0 ? c->framework_efficiency : 1.0;
    r->matrix *= fe;
    r->matrix_fp8 *= fe;
    r->vector *= fe;
    r->hbm *= fe;
    for (int k = 0; k < COMET_MEMK_COUNT; k++)
        r->hbm_kind[k] *= fe;
    r->launch = c->kernel_launch;
    r->issue = c->kernel_issue;
}

/* One pass of a GEMM whose reduction-free math time is t_math: the
 * reduction-length term for k_reduce, the roofline, the launch. */
static double gemm_pass(const hw_rates *r, double t_math, double t_mem, double k_reduce)
{
    double k0 = r->compute->gemm_k_overhead;
    if (k0 > 0.0 && k_reduce > 0.0)
        t_math *= (k_reduce + k0) / k_reduce;
    return (t_math > t_mem ? t_math : t_mem) + r->launch;
}

static double gemm_math(const hw_rates *r, double flops, bool fp8)
{
    const comet_compute *c = r->compute;
    double eff = interpolate(c->gemm_eff, r->log_flops, c->n_gemm_eff, flops);
    return flops / ((fp8 ? r->matrix_fp8 : r->matrix) * eff);
}

double hw_gemm_time(const hw_rates *r, double flops, double bytes, bool fp8, double k_reduce)
{
    return gemm_pass(r, gemm_math(r, flops, fp8), bytes / r->hbm, k_reduce);
}

void hw_gemm_passes(const hw_rates *r, double flops, double bytes, bool fp8,
                    const double k_reduce[3], double m_group, double t[3])
{
    double t_math = gemm_math(r, flops, fp8), t_mem = bytes / r->hbm;
    double m0 = r->compute->grouped_gemm_m0;
    /* a grouped GEMM's experts' rows: forward and input gradient (the
     * weight gradient reduces over them instead) */
    double rows = m_group > 0.0 && m0 > 0.0 ? (m_group + m0) / m_group : 1.0;
    for (int p = 0; p < 3; p++)
        t[p] = gemm_pass(r, p < 2 ? t_math * rows : t_math, t_mem, k_reduce[p]);
}

double hw_vector_time(const hw_rates *r, comet_mem_kernel kind, double flops, double bytes)
{
    double t_math = flops / r->vector;
    double t_mem = bytes / r->hbm_kind[kind];
    return (t_math > t_mem ? t_math : t_mem) + r->launch;
}

double hw_optimizer_time(const hw_rates *r, double bytes)
{
    return bytes / r->hbm_kind[COMET_MEMK_OPTIMIZER];
}

const comet_attn_point *comet_attention_curve(const comet_compute *c, comet_attn_kernel k, int *n)
{
    if (k == COMET_ATTN_AUTO || (k == c->attn_kernel && c->n_attn_eff > 0)) {
        *n = c->n_attn_eff;
        return c->attn_eff;
    }
    if ((unsigned)k < COMET_ATTN_KERNEL_COUNT && c->n_attn_alt[k] > 0) {
        *n = c->n_attn_alt[k];
        return c->attn_alt[k];
    }
    *n = 0;
    return NULL;
}

void hw_rates_attention(hw_rates *r, comet_attn_kernel k)
{
    const comet_compute *c = r->compute;
    int n;
    r->attn = comet_attention_curve(c, k, &n);
    if (!r->attn) /* a kernel without a curve (resolve refuses it): the system's own */
        r->attn = comet_attention_curve(c, COMET_ATTN_AUTO, &n);
    r->n_attn = n < COMET_MAX_ATTN_POINTS ? n : COMET_MAX_ATTN_POINTS;
    for (int i = 0; i < r->n_attn; i++)
        r->log_attn[i] = log(r->attn[i].seq * r->attn[i].head_dim);
}

bool hw_has_attention_curve(const hw_rates *r)
{
    return r->n_attn > 0;
}

/* A point's efficiency of one pass: the causal value where the point has
 * one and the kernel is causal, else the non-causal. */
static double attn_point_eff(const comet_attn_point *p, bool causal, bool fwd_bwd)
{
    double c = fwd_bwd ? p->causal_forward_backward : p->causal_forward;
    if (causal && c > 0.0)
        return c;
    return fwd_bwd ? p->forward_backward : p->forward;
}

/* The points of the curve whose head dim is nearest `head_dim` (in log;
 * a tie goes to the larger): [*first, *first + *count). Points come in
 * increasing head_dim, then seq (system_section.c checks). */
static void attention_group(const comet_attn_point *p, int n, double head_dim, int *first,
                            int *count)
{
    int best = 0;
    double best_d = INFINITY;
    for (int i = 0; i < n; i++) {
        /* the ratio, not its log: the same order, no log per point */
        double d = p[i].head_dim > head_dim ? p[i].head_dim / head_dim : head_dim / p[i].head_dim;
        if (d <= best_d) {
            best_d = d;
            best = i;
        }
    }
    int lo = best;
    while (lo > 0 && p[lo - 1].head_dim == p[best].head_dim)
        lo--;
    *first = lo;
    *count = best - lo + 1;
}

/* One pass's efficiency at seq x head_dim: among the points of the
 * nearest head dim, linear in the log of seq x head_dim between them,
 * clamped at the ends (as the GEMM curve). */
static double attention_efficiency(const hw_rates *r, double seq, double head_dim, bool causal,
                                   bool fwd_bwd)
{
    int first, n;
    attention_group(r->attn, r->n_attn, head_dim, &first, &n);
    const comet_attn_point *p = r->attn + first;
    const double *logs = r->log_attn + first;
    double size = seq * head_dim;
    if (size <= p[0].seq * p[0].head_dim || n == 1)
        return attn_point_eff(&p[0], causal, fwd_bwd);
    if (size >= p[n - 1].seq * p[n - 1].head_dim)
        return attn_point_eff(&p[n - 1], causal, fwd_bwd);
    int i = 1;
    while (i < n - 1 && size > p[i].seq * p[i].head_dim)
        i++;
    double w = (log(size) - logs[i - 1]) / (logs[i] - logs[i - 1]);
    double lo = attn_point_eff(&p[i - 1], causal, fwd_bwd);
    return lo + w * (attn_point_eff(&p[i], causal, fwd_bwd) - lo);
}

void hw_attention_times(const hw_rates *r, double flops, double seq, double head_dim, bool causal,
                        double causal_share, double *fwd, double *fwd_bwd)
{
    double work = causal ? 0.5 * flops : flops;
    double share = causal ? causal_share : 0.0;
    /* seconds per FLOP at the matrix peak, masked and unmasked work */
    double per_f = share / attention_efficiency(r, seq, head_dim, true, false) +
                   (1.0 - share) / attention_efficiency(r, seq, head_dim, false, false);
    double per_fb = share / attention_efficiency(r, seq, head_dim, true, true) +
                    (1.0 - share) / attention_efficiency(r, seq, head_dim, false, true);
    /* one forward kernel; the backward (its own rebuild of the scores
     * included) one more */
    *fwd = work * per_f / r->matrix + r->launch;
    *fwd_bwd = 3.0 * work * per_fb / r->matrix + 2.0 * r->launch;
}
