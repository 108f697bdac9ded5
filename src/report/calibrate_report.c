/* comet calibrate's fit-quality report, as Markdown: each fitted key of
 * the new system beside the base system's value, then every measurement
 * against the fitted system's price of it (time and rate, and the residual
 * as fitted time over measured time less 1), grouped by kind with the RMS
 * and largest residual of each group, so a reader sees at once how well the
 * model's forms hold on the measured cluster. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/quantity.h"
#include "comet/report.h"

static const char *const group_names[COMET_CALIB_GROUP_COUNT] = {
    "GEMM", "Fused attention", "Memory-bound kernels", "Network (nccl-tests)",
    "Training steps"};

static const char *value_text(double v, comet_calib_unit unit, char *out, size_t cap)
{
    if (isnan(v)) {
        snprintf(out, cap, "none");
        return out;
    }
    switch (unit) {
    case COMET_CALIB_SECONDS:
        return comet_format_setting(v, COMET_QTY_SECONDS, out, cap);
    case COMET_CALIB_FLOP:
        return comet_format_setting(v, COMET_QTY_FLOP, out, cap);
    case COMET_CALIB_POINTS:
        snprintf(out, cap, "%.0f points", v);
        return out;
    default:
        snprintf(out, cap, "%.4g", v);
        return out;
    }
}

static const char *change_text(double base, double fitted, char *out, size_t cap)
{
    out[0] = '\0';
    if (!isnan(base) && base != 0.0 && cap)
        snprintf(out, cap, "%+.1f %%", 100.0 * (fitted / base - 1.0));
    return out;
}

/* "1.53 ms, 720 TFLOP/s": a time (when there is one) and the rate. */
static const char *measure_text(double seconds, double rate, comet_calib_group g, char *out,
                                size_t cap)
{
    char t[32] = "", r[32];
    if (g == COMET_CALIB_STEP)
        snprintf(r, sizeof r, "%.0f tokens/s", rate);
    else
        comet_format_quantity(rate, g <= COMET_CALIB_ATTENTION ? COMET_QTY_FLOP_PER_S
                                                               : COMET_QTY_BYTES_PER_S,
                              0, r, sizeof r);
    if (seconds > 0.0) {
        comet_format_quantity(seconds, COMET_QTY_SECONDS, 0, t, sizeof t);
        snprintf(out, cap, "%s, %s", t, r);
    } else {
        snprintf(out, cap, "%s", r);
    }
    return out;
}

static void params_table(comet_buf *b, const comet_calib_result *r)
{
    comet_buf_printf(b, "| key | what | base | fitted | change | rows | note |\n"
                        "|---|---|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < r->n_params; i++) {
        const comet_calib_param *p = &r->params[i];
        char was[48], now[48], change[32];
        comet_buf_printf(b, "| %s | %s | %s | %s | %s | %d | %s |\n", p->key, p->label,
                         value_text(p->base, p->unit, was, sizeof was),
                         value_text(p->fitted, p->unit, now, sizeof now),
                         change_text(p->base, p->fitted, change, sizeof change), p->points,
                         p->note);
    }
}

static void points_table(comet_buf *b, const comet_calib_result *r, comet_calib_group g)
{
    size_t n = 0;
    double sum = 0.0, worst = 0.0;
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].group == g) {
            double x = r->points[i].residual;
            n++;
            sum += x * x;
            worst = fabs(x) > fabs(worst) ? x : worst;
        }
    if (!n)
        return;
    comet_buf_printf(b, "\n### %s: %zu measurement%s, residual RMS %.2f %%, largest %+.2f %%\n\n",
                     group_names[g], n, n == 1 ? "" : "s", 100.0 * sqrt(sum / (double)n),
                     100.0 * worst);
    comet_buf_printf(b, "| where | measurement | measured | fitted | residual |\n"
                        "|---|---|---:|---:|---:|\n");
    for (size_t i = 0; i < r->n_points; i++) {
        const comet_calib_point *p = &r->points[i];
        if (p->group != g)
            continue;
        const char *file = p->file ? strrchr(p->file, '/') : NULL;
        file = file ? file + 1 : (p->file ? p->file : "");
        char m[64], f[64], line[24] = "";
        if (p->line > 0)
            snprintf(line, sizeof line, ":%d", p->line);
        comet_buf_printf(b, "| %s%s | %s | %s | %s | %+.2f %% |\n", file, line, p->what,
                         measure_text(p->measured_s, p->measured_rate, g, m, sizeof m),
                         measure_text(p->measured_s > 0.0 ? p->fitted_s : 0.0, p->fitted_rate,
                                      g, f, sizeof f),
                         100.0 * p->residual);
    }
}

/* "#   compute.gemm_k_overhead (k0): 247 -> 251.8" lines for the head of
 * the written system file. */
static void params_comment(comet_buf *b, const comet_calib_result *r)
{
    for (size_t i = 0; i < r->n_params; i++) {
        const comet_calib_param *p = &r->params[i];
        char was[48], now[48];
        comet_buf_printf(b, "#   %s (%s): %s -> %s\n", p->key, p->label,
                         value_text(p->base, p->unit, was, sizeof was),
                         value_text(p->fitted, p->unit, now, sizeof now));
    }
}

void comet_calibrate_report(comet_buf *b, const comet_calib_result *r,
                            comet_calib_report_form form)
{
    if (form == COMET_CALIB_REPORT_COMMENT) {
        params_comment(b, r);
        return;
    }
    bool keys_only = form == COMET_CALIB_REPORT_KEYS;
    if (!keys_only)
        comet_buf_printf(b, "# comet calibrate: %s from %s\n\n## Fitted keys\n\n",
                         r->system.name, r->base ? r->base->name : "?");
    params_table(b, r);
    if (keys_only)
        return;
    comet_buf_printf(b, "\nEvery other key is the base system's. Rates: GEMMs at 2mnk FLOP, "
                        "attention at the non-causal 4 b heads s^2 d FLOP per forward (3x for "
                        "fwd_bwd), memory kernels at their bytes moved, collectives at "
                        "nccl-tests' bus bandwidth, training steps at tokens per second of the "
                        "whole job.\n\n"
                        "## Measurements against the fitted system\n\n"
                        "Each measurement priced by the fitted system as an estimate prices "
                        "it; residual = fitted time / measured time - 1 (for a memory rate "
                        "without bytes, measured rate / fitted rate - 1).\n");
    for (int g = 0; g < COMET_CALIB_GROUP_COUNT; g++)
        points_table(b, r, (comet_calib_group)g);
}
