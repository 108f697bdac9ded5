/* Accelerator compute model: roofline time of one operation, with GEMM
 * efficiency interpolated from measured points as a function of the
 * operation's size (small GEMMs do not fill the matrix engines). */
#include "hardware.h"

#include <math.h>

double comet_gemm_efficiency(const comet_compute *c, double flops)
{
    int n = c->n_gemm_eff;
    if (n <= 0)
        return 1.0;
    const comet_eff_point *p = c->gemm_eff;
    if (flops <= p[0].flops)
        return p[0].efficiency;
    if (flops >= p[n - 1].flops)
        return p[n - 1].efficiency;
    int i = 1;
    while (i < n - 1 && flops > p[i].flops)
        i++;
    double x0 = log(p[i - 1].flops), x1 = log(p[i].flops);
    double w = (log(flops) - x0) / (x1 - x0);
    return p[i - 1].efficiency + w * (p[i].efficiency - p[i - 1].efficiency);
}

void hw_rates_init(hw_rates *r, const comet_system *sys, comet_dtype dt)
{
    r->compute = &sys->compute;
    r->matrix = sys->compute.matrix_flops[dt]; /* > 0: comet_strategy_resolve checks */
    /* Element-wise work on narrow types (fp8) runs on 16-bit vector units. */
    r->vector = sys->compute.vector_flops[dt];
    if (r->vector <= 0.0)
        r->vector = sys->compute.vector_flops[COMET_DTYPE_FP16];
    if (r->vector <= 0.0)
        r->vector = sys->compute.vector_flops[COMET_DTYPE_FP32];
    if (r->vector <= 0.0)
        r->vector = r->matrix;
    double veff = sys->compute.vector_efficiency > 0.0 ? sys->compute.vector_efficiency : 1.0;
    r->vector *= veff;
    double heff = sys->hbm.efficiency > 0.0 ? sys->hbm.efficiency : 1.0;
    r->hbm = sys->hbm.bandwidth * heff;
}

double hw_gemm_time(const hw_rates *r, double flops, double bytes)
{
    double t_math = flops / (r->matrix * comet_gemm_efficiency(r->compute, flops));
    double t_mem = bytes / r->hbm;
    return t_math > t_mem ? t_math : t_mem;
}

double hw_vector_time(const hw_rates *r, double flops, double bytes)
{
    double t_math = flops / r->vector;
    double t_mem = bytes / r->hbm;
    return t_math > t_mem ? t_math : t_mem;
}
