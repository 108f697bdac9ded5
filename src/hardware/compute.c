/* Accelerator compute model: roofline time of one operation, with GEMM
 * efficiency interpolated from measured points as a function of the
 * operation's size (small GEMMs do not fill the matrix engines). */
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

void hw_rates_init(hw_rates *r, const comet_system *sys, comet_dtype dt)
{
    r->compute = &sys->compute;
    log_points(&sys->compute, r->log_flops);
    r->matrix = sys->compute.matrix_flops[dt]; /* > 0: comet_strategy_resolve checks */
    r->matrix_fp8 = sys->compute.matrix_flops[COMET_DTYPE_FP8]; /* > 0 when fp8 is asked for */
    /* Element-wise work on narrow types (fp8) runs on 16-bit vector units. */
    r->vector = sys->compute.vector_flops[dt];
    if (r->vector <= 0.0)
        r->vector = sys->compute.vector_flops[COMET_DTYPE_FP16];
    if (r->vector <= 0.0)
        r->vector = sys->compute.vector_flops[COMET_DTYPE_FP32];
    if (r->vector <= 0.0)
        r->vector = r->matrix;
    double veff = vocab_efficiency(sys->compute.vector_efficiency);
    r->vector *= veff;
    double heff = vocab_efficiency(sys->hbm.efficiency);
    r->hbm = sys->hbm.bandwidth * heff;
}

double hw_gemm_time(const hw_rates *r, double flops, double bytes, bool fp8)
{
    double eff = interpolate(r->compute->gemm_eff, r->log_flops, r->compute->n_gemm_eff, flops);
    double t_math = flops / ((fp8 ? r->matrix_fp8 : r->matrix) * eff);
    double t_mem = bytes / r->hbm;
    return t_math > t_mem ? t_math : t_mem;
}

double hw_vector_time(const hw_rates *r, double flops, double bytes)
{
    double t_math = flops / r->vector;
    double t_mem = bytes / r->hbm;
    return t_math > t_mem ? t_math : t_mem;
}
