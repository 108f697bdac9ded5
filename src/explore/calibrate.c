/* comet calibrate's fits: a system's efficiency keys fitted to kernel and
 * nccl-tests measurements, so a user's own cluster replaces the presets'
 * hand-derived numbers. Each measurement is turned into an efficiency by
 * the model itself (the functions an estimate prices kernels and
 * collectives with: src/hardware/compute.c, comet_collective_price_on),
 * never by a formula of its own:
 *
 *   efficiency = (t_ideal - t_zero) / (t_measured - t_zero)
 *
 * where t_ideal is the model's time for the kernel at efficiency 1 and
 * t_zero its time for no work (the kernel launch). Then
 *
 * - GEMM: e_i = e_max * K_i / (K_i + k0) is linear in 1/e against 1/K
 *   (1/e = 1/e_max + (k0/e_max) / K): least squares, a closed form; or,
 *   when asked for or when the data call for it, a size curve in log(FLOP)
 *   (compute.c's interpolation) by weighted least squares for each k0 and
 *   a search over k0;
 * - attention: per shape (seq x head_dim), the median efficiency of each
 *   pass;
 * - memory-bound kernels: per kind, the median share of HBM bandwidth; the
 *   HBM tier's own efficiency from the element-wise (copy) rows;
 * - network: a dimension's latency and efficiency by Gauss-Newton on the
 *   relative residuals of the measured times, priced by
 *   comet_collective_price_on (exact in one step for the alpha-beta closed
 *   forms, which are linear in latency and 1/efficiency); or the measured
 *   bus bandwidth written as the dimension's curve.
 *
 * Every measurement is then priced with the fitted system, and the
 * residuals are part of the result. docs/calibrate.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hardware/hardware.h"
#include "../vocab/vocab.h"
#include "../workload/workload.h"
#include "comet/calibrate.h"
#include "comet/network.h"
#include "comet/quantity.h"

#define MIN_FRACTION 0.001   /* the smallest efficiency a system file takes */
#define MIN_LATENCY 1e-12    /* below it a latency is written as 0 */
#define MAX_LATENCY 1.0
/* the bandwidths, group sizes and k0 a system file takes (docs/config.md) */
#define MIN_BUSBW 1e3
#define MAX_BUSBW 1e16
#define MAX_CURVE_NPUS 16777216
#define MAX_K0 1e9

#define TRY(expr)                                                                          \
    do {                                                                                   \
        comet_status st_ = (expr);                                                         \
        if (st_)                                                                           \
            return st_;                                                                    \
    } while (0)

typedef struct calib {
    const comet_calib_request *req;
    comet_calib_result *out;
    comet_error *err;
    comet_system unit;       /* the base at efficiency 1 everywhere: t_ideal */
    comet_system alone;      /* scratch: the fitted system with a framework factor of
                              * its own (1: kernels alone; a step fit's trial) */
} calib;

/* ---- result lists ---------------------------------------------------------- */

static comet_status grow(void **items, size_t *cap, size_t n, size_t size, comet_error *err)
{
    if (n < *cap)
        return COMET_OK;
    size_t c = *cap ? 2 * *cap : 32;
    void *p = realloc(*items, c * size);
    if (!p)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    *items = p;
    *cap = c;
    return COMET_OK;
}

static comet_status add_point(calib *c, const comet_calib_point *p)
{
    comet_calib_result *o = c->out;
    comet_status st = grow((void **)&o->points, &o->cap_points, o->n_points, sizeof *p, c->err);
    if (!st)
        o->points[o->n_points++] = *p;
    return st;
}

static comet_status add_param(calib *c, comet_calib_group group, const char *key,
                              const char *label, comet_calib_unit unit, double base,
                              double fitted, int points, const char *note)
{
    comet_calib_result *o = c->out;
    comet_calib_param p;
    memset(&p, 0, sizeof p);
    p.group = group;
    snprintf(p.key, sizeof p.key, "%s", key);
    snprintf(p.label, sizeof p.label, "%s", label);
    p.unit = unit;
    p.base = base;
    p.fitted = fitted;
    p.points = points;
    snprintf(p.note, sizeof p.note, "%s", note ? note : "");
    comet_status st = grow((void **)&o->params, &o->cap_params, o->n_params, sizeof p, c->err);
    if (!st)
        o->params[o->n_params++] = p;
    return st;
}

static comet_status row_error(const calib *c, const comet_kernel_row *row, const char *fmt,
                              double a, double b)
{
    return comet_error_set(c->err, COMET_EINPUT, c->req->kernels->file, row->line, 0, NULL, fmt,
                           a, b);
}

/* ---- shared arithmetic ----------------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place); n > 0. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* An efficiency a system file can hold; says so in note when it moved. */
static double fraction(double e, char *note, size_t cap)
{
    if (e > 1.0) {
        snprintf(note, cap, "measured %.4g, above the peak: clamped to 1 (check the peak)", e);
        return 1.0;
    }
    if (e < MIN_FRACTION) {
        snprintf(note, cap, "measured %.4g: clamped to %g", e, MIN_FRACTION);
        return MIN_FRACTION;
    }
    return e;
}

/* Solve the n x n system a x = b in place (partial pivoting, a small
 * ridge keeps a singular system finite); n <= 16. */
static void solve(int n, double a[][COMET_MAX_EFF_POINTS], double *b, double *x)
{
    for (int i = 0; i < n; i++)
        a[i][i] = a[i][i] * (1.0 + 1e-12) + 1e-300;
    for (int col = 0; col < n; col++) {
        int p = col;
        for (int r = col + 1; r < n; r++)
            if (fabs(a[r][col]) > fabs(a[p][col]))
                p = r;
        for (int k = 0; k < n; k++) {
            double t = a[col][k];
            a[col][k] = a[p][k];
            a[p][k] = t;
        }
        double t = b[col];
        b[col] = b[p];
        b[p] = t;
        for (int r = col + 1; r < n; r++) {
            double f = a[r][col] / a[col][col];
            for (int k = col; k < n; k++)
                a[r][k] -= f * a[col][k];
            b[r] -= f * b[col];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++)
            s -= a[i][k] * x[k];
        x[i] = s / a[i][i];
    }
}

/* The efficiency a measured time implies, given the model's times for the
 * same kernel at efficiency 1 and for no work. */
static double implied(double t_measured, double t_ideal, double t_zero)
{
    return (t_ideal - t_zero) / (t_measured - t_zero);
}

static comet_status check_peak(const calib *c, const comet_kernel_row *row)
{
    if (c->req->base->compute.matrix_flops[row->dtype] > 0.0)
        return COMET_OK;
    return comet_error_set(c->err, COMET_EINPUT, c->req->kernels->file, row->line, 0,
                           "column 'dtype'", "system %s gives no %s matrix peak",
                           c->req->base->name, comet_dtype_name(row->dtype));
}

static comet_status check_time(const calib *c, const comet_kernel_row *row, double t,
                               double t_zero)
{
    if (t > t_zero)
        return COMET_OK;
    return row_error(c, row,
                     "the measured time (%g s) is not above the time the system charges for "
                     "no work (%g s, its kernel_launch)",
                     t, t_zero);
}

/* ---- GEMM ------------------------------------------------------------------ */

typedef struct gemm_obs {
    const comet_kernel_row *row;
    work_op op;          /* the GEMM as the workload builder counts it */
    double achieved;     /* efficiency of the matrix peak it reached */
} gemm_obs;

/* The GEMM (m x k) by (k x n) of a row: FLOPs, bytes, reduction length. */
static work_op gemm_of(const comet_kernel_row *row)
{
    work_layer l;
    memset(&l, 0, sizeof l);
    work_add_gemm(&l, row->m, row->n, row->k, comet_dtype_bytes(row->dtype), false);
    return l.ops[0];
}

static double gemm_measured(const comet_kernel_row *row, const work_op *op)
{
    return row->seconds > 0.0 ? row->seconds : op->flops / row->rate;
}

/* One candidate GEMM curve: its points, k0 and squared relative residuals. */
typedef struct gemm_model {
    int points;
    comet_eff_point curve[COMET_MAX_EFF_POINTS];
    double k0;
    double rss;
    bool k0_free;        /* fitted (else kept from the base) */
    char note[160];
} gemm_model;

/* The efficiency a curve and k0 give a row's GEMM (compute.c's own
 * curve times the short-reduction term). */
static double gemm_predicted(const comet_compute *cc, const gemm_obs *o, double k0)
{
    double k = o->op.k_fwd;
    return comet_gemm_efficiency(cc, o->op.flops) * k / (k + k0);
}

/* Squared relative residuals of a model on the rows, through compute.c's
 * own curve: the time it predicts over the measured, less 1. */
static double gemm_rss(const gemm_obs *o, size_t n, const comet_eff_point *curve, int points,
                       double k0)
{
    comet_compute cc;
    memset(&cc, 0, sizeof cc);
    cc.n_gemm_eff = points;
    memcpy(cc.gemm_eff, curve, (size_t)points * sizeof *curve);
    double rss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double r = o[i].achieved / gemm_predicted(&cc, &o[i], k0) - 1.0;
        rss += r * r;
    }
    return rss;
}

static size_t distinct(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_doubles);
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i] != v[i - 1])
            v[d++] = v[i];
    return d;
}

/* The flat curve: least squares of 1/e on 1/K, y = A + B x, e_max = 1/A,
 * k0 = B/A; with a single K (or a fit that makes no sense) k0 is kept and
 * only e_max is fitted. */
static void gemm_flat(const gemm_obs *o, size_t n, size_t distinct_k, double base_k0,
                      double size, gemm_model *m)
{
    memset(m, 0, sizeof *m);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double x = 1.0 / o[i].op.k_fwd, y = 1.0 / o[i].achieved;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    double dn = (double)n, denom = dn * sxx - sx * sx;
    double A = 0.0, B = -1.0;
    if (distinct_k >= 2 && denom > 0.0) {
        B = (dn * sxy - sx * sy) / denom;
        A = (sy - B * sx) / dn;
    }
    if (distinct_k >= 2 && A > 0.0 && B >= 0.0) {
        m->k0 = B / A;
        m->k0_free = true;
    } else {
        /* y = A (1 + k0/K) with k0 given: A = sum(y c) / sum(c^2) */
        m->k0 = distinct_k >= 2 ? 0.0 : base_k0;
        double syc = 0, scc = 0;
        for (size_t i = 0; i < n; i++) {
            double cc = 1.0 + m->k0 / o[i].op.k_fwd;
            syc += cc / o[i].achieved;
            scc += cc * cc;
        }
        A = syc / scc;
        snprintf(m->note, sizeof m->note,
                 distinct_k >= 2 ? "longer reductions ran no faster: k0 = 0"
                                 : "one reduction length in the rows: k0 kept from the base");
    }
    m->points = 1;
    m->curve[0].flops = size;
    m->curve[0].efficiency = 1.0 / A;
    m->rss = gemm_rss(o, n, m->curve, 1, m->k0);
}

/* A size curve of `points` knots at quantiles of the rows' log FLOPs, for
 * a given k0: weighted least squares of the size efficiency s_i = e_i (K_i
 * + k0) / K_i on the hat functions of compute.c's interpolation. */
static void gemm_knots(const gemm_obs *o, size_t n, const double *logs, size_t n_logs,
                       int points, double k0, gemm_model *m)
{
    memset(m, 0, sizeof *m); /* no note unless one is written */
    double u[COMET_MAX_EFF_POINTS];
    for (int j = 0; j < points; j++)
        u[j] = logs[(size_t)lround((double)j * (double)(n_logs - 1) / (double)(points - 1))];
    double a[COMET_MAX_EFF_POINTS][COMET_MAX_EFF_POINTS], b[COMET_MAX_EFF_POINTS];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    for (size_t i = 0; i < n; i++) {
        double k = o[i].op.k_fwd, s = o[i].achieved * (k + k0) / k;
        double x = log(o[i].op.flops), phi[COMET_MAX_EFF_POINTS] = {0};
        int j = 0;
        while (j < points - 2 && x > u[j + 1])
            j++;
        double w = clamp((x - u[j]) / (u[j + 1] - u[j]), 0.0, 1.0);
        phi[j] = 1.0 - w;
        phi[j + 1] = w;
        for (int p = j; p <= j + 1; p++) {
            b[p] += phi[p] / s;
            for (int q = j; q <= j + 1; q++)
                a[p][q] += phi[p] * phi[q] / (s * s);
        }
    }
    double v[COMET_MAX_EFF_POINTS];
    solve(points, a, b, v);
    m->points = points;
    m->k0 = k0;
    for (int j = 0; j < points; j++) {
        m->curve[j].flops = exp(u[j]);
        m->curve[j].efficiency = clamp(v[j], MIN_FRACTION, 1.0);
    }
    m->rss = gemm_rss(o, n, m->curve, points, k0);
}

/* The size curve with the k0 that fits best: a grid over 0 and 1..1e6
 * (20 steps a decade), then golden sections around the best. */
static void gemm_curve(const gemm_obs *o, size_t n, const double *logs, size_t n_logs,
                       int points, bool k0_free, double base_k0, gemm_model *m)
{
    gemm_knots(o, n, logs, n_logs, points, k0_free ? 0.0 : base_k0, m);
    m->k0_free = k0_free;
    if (!k0_free)
        return;
    double best_k = 0.0, best = m->rss, prev = 0.0, next = 1.0;
    gemm_model t;
    for (int s = 0; s <= 120; s++) {
        double k0 = pow(10.0, s / 20.0);
        gemm_knots(o, n, logs, n_logs, points, k0, &t);
        if (t.rss < best) {
            best = t.rss;
            best_k = k0;
            prev = s ? pow(10.0, (s - 1) / 20.0) : 0.0;
            next = pow(10.0, (s + 1) / 20.0);
        }
    }
    double lo = best_k > 0.0 ? prev : 0.0, hi = next;
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    for (int it = 0; it < 80; it++) {
        double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
        gemm_model m1, m2;
        gemm_knots(o, n, logs, n_logs, points, x1, &m1);
        gemm_knots(o, n, logs, n_logs, points, x2, &m2);
        if (m1.rss <= m2.rss)
            hi = x2;
        else
            lo = x1;
    }
    gemm_knots(o, n, logs, n_logs, points, 0.5 * (lo + hi), &t);
    if (t.rss > best)
        gemm_knots(o, n, logs, n_logs, points, best_k, &t);
    *m = t;
    m->k0_free = true;
}

/* Bayesian information criterion of a model's fit: fewer parameters win
 * unless more lower the residuals enough (an exact fit counts as 1e-14). */
static double bic(double rss, size_t n, int params)
{
    double dn = (double)n;
    return dn * log(fmax(rss / dn, 1e-14)) + params * log(dn);
}

static comet_status fit_gemm(calib *c, gemm_obs *o, size_t n)
{
    const comet_system *base = c->req->base;
    double *logs = malloc(2 * n * sizeof *logs);
    if (!logs)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    double *ks = logs + n;
    for (size_t i = 0; i < n; i++) {
        logs[i] = log(o[i].op.flops);
        ks[i] = o[i].op.k_fwd;
    }
    size_t n_logs = distinct(logs, n), n_k = distinct(ks, n);
    double base_k0 = base->compute.gemm_k_overhead;
    double size = base->compute.n_gemm_eff == 1 ? base->compute.gemm_eff[0].flops : 1e12;
    gemm_model best;
    gemm_flat(o, n, n_k, base_k0, size, &best);
    int asked = c->req->gemm_points;
    if (asked > (int)n_logs) {
        free(logs);
        return comet_error_set(c->err, COMET_EINPUT, c->req->kernels->file, 0, 0, NULL,
                               "%d GEMM size points asked for, but the GEMM rows hold %zu "
                               "distinct sizes",
                               asked, n_logs);
    }
    double best_bic = bic(best.rss, n, best.k0_free ? 2 : 1);
    int most = asked ? asked : (int)(n_logs < 4 ? n_logs : 4);
    for (int points = asked ? asked : 2; points >= 2 && points <= most; points++) {
        gemm_model m;
        gemm_curve(o, n, logs, n_logs, points, n_k >= 2, base_k0, &m);
        int params = points + (m.k0_free ? 1 : 0);
        if (!asked && n < (size_t)params + 2)
            break; /* too few rows to tell */
        double b = bic(m.rss, n, params);
        if (asked || b < best_bic) {
            best = m;
            best_bic = b;
        }
    }
    free(logs);
    comet_compute *cc = &c->out->system.compute;
    char note[160];
    cc->n_gemm_eff = best.points;
    for (int j = 0; j < best.points; j++) {
        note[0] = '\0';
        cc->gemm_eff[j].flops = best.curve[j].flops;
        cc->gemm_eff[j].efficiency = fraction(best.curve[j].efficiency, note, sizeof note);
        char key[96], label[64], flop[32];
        snprintf(key, sizeof key, "compute.gemm_efficiency[%d].efficiency", j);
        comet_format_setting(best.curve[j].flops, COMET_QTY_FLOP, flop, sizeof flop);
        if (best.points == 1)
            snprintf(label, sizeof label, "e_max");
        else
            snprintf(label, sizeof label, "at %s", flop);
        double was = comet_gemm_efficiency(&base->compute, best.curve[j].flops);
        TRY(add_param(c, COMET_CALIB_GEMM, key, label, COMET_CALIB_FRACTION, was,
                                cc->gemm_eff[j].efficiency, (int)n, note));
    }
    if (best.k0 > MAX_K0) {
        best.k0 = MAX_K0;
        snprintf(best.note, sizeof best.note, "clamped to %g", MAX_K0);
    }
    cc->gemm_k_overhead = best.k0;
    c->out->gemm_points = best.points;
    return add_param(c, COMET_CALIB_GEMM, "compute.gemm_k_overhead", "k0", COMET_CALIB_ELEMENTS,
                     base_k0, best.k0, (int)n, best.note);
}

/* compute.fp8_gemm_efficiency: the median ratio of what the fp8 rows
 * reached (of the fp8 peak) to what the fitted curve gives a GEMM of their
 * FLOPs and reduction; without other rows the curve is the fp8 rows' own
 * and the share 1. */
static comet_status fit_fp8(calib *c, const gemm_obs *o, size_t n, size_t n_other)
{
    const comet_compute *cc = &c->out->system.compute;
    double base = c->req->base->compute.fp8_gemm_efficiency;
    base = base > 0.0 ? base : 1.0;
    char note[160] = "";
    double share = 1.0;
    if (n_other) {
        double *v = malloc(n * sizeof *v);
        if (!v)
            return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        for (size_t i = 0; i < n; i++)
            v[i] = o[i].achieved / gemm_predicted(cc, &o[i], cc->gemm_k_overhead);
        share = fraction(median(v, n), note, sizeof note);
        free(v);
    } else {
        snprintf(note, sizeof note, "only fp8 GEMM rows: the curve is theirs");
    }
    c->out->system.compute.fp8_gemm_efficiency = share;
    return add_param(c, COMET_CALIB_GEMM, "compute.fp8_gemm_efficiency",
                     "fp8 GEMMs, share of the curve", COMET_CALIB_FRACTION, base, share, (int)n,
                     note);
}

/* Each GEMM row's achieved efficiency (of its dtype's peak), then the
 * fits: the curve on the rows other than fp8 (all of them if there are
 * no others), then fp8's share of it. */
static comet_status gemm_rows(calib *c)
{
    const comet_kernel_rows *k = c->req->kernels;
    size_t n = 0, n_fp8 = 0;
    for (size_t i = 0; i < k->n; i++) {
        n += k->rows[i].kind == COMET_KERNEL_GEMM;
        n_fp8 += k->rows[i].kind == COMET_KERNEL_GEMM && k->rows[i].dtype == COMET_DTYPE_FP8;
    }
    if (!n)
        return COMET_OK;
    gemm_obs *o = malloc(n * sizeof *o);
    if (!o)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    /* the rows the curve is fitted to first, the fp8 rows after them */
    size_t n_other = n - n_fp8, at_other = 0, at_fp8 = n_other;
    comet_status st = COMET_OK;
    for (size_t i = 0; i < k->n && !st; i++) {
        const comet_kernel_row *row = &k->rows[i];
        if (row->kind != COMET_KERNEL_GEMM)
            continue;
        st = check_peak(c, row);
        if (st)
            break;
        hw_rates r;
        hw_rates_init(&r, &c->unit, row->dtype);
        bool fp8 = row->dtype == COMET_DTYPE_FP8 && n_other;
        gemm_obs *g = &o[fp8 ? at_fp8++ : at_other++];
        g->row = row;
        g->op = gemm_of(row);
        double t_zero = hw_gemm_time(&r, 0.0, 0.0, false, 0.0);
        double t = gemm_measured(row, &g->op);
        st = check_time(c, row, t, t_zero);
        if (!st)
            g->achieved = implied(t, hw_gemm_time(&r, g->op.flops, 0.0, false, 0.0), t_zero);
    }
    if (!st)
        st = fit_gemm(c, o, n_other ? n_other : n);
    if (!st && n_fp8)
        st = fit_fp8(c, o + n_other, n_fp8, n_other);
    free(o);
    return st;
}

/* ---- fused attention ------------------------------------------------------- */

/* The attention core's matrix FLOPs as comet counts them (transformer.c:
 * Q K^T and scores x V, 2 b heads s^2 d each, the whole score matrix). */
static double attention_flops(const comet_kernel_row *row)
{
    return 4.0 * row->batch * row->heads * row->seq * row->seq * row->head_dim;
}

/* What the row's rate counts per call: the forward's FLOPs, three times
 * them for forward and backward (docs/calibrate.md). */
static double attention_counted(const comet_kernel_row *row)
{
    return (row->fwd_bwd ? 3.0 : 1.0) * attention_flops(row);
}

static double attention_measured(const comet_kernel_row *row)
{
    return row->seconds > 0.0 ? row->seconds : attention_counted(row) / row->rate;
}

/* Whether the attention rows fit another kernel's curve than the
 * system's own (calib.h's request: attention_kernel). */
static bool attention_alt(const comet_calib_request *req)
{
    comet_attn_kernel k = req->attention_kernel;
    return k != COMET_ATTN_AUTO && k != req->base->compute.attn_kernel;
}

/* The model's time of the row's pass on a system (the curve of the
 * request's kernel at the row's shape). */
static double attention_time(const calib *c, const comet_system *sys,
                             const comet_kernel_row *row, double flops)
{
    hw_rates r;
    hw_rates_init(&r, sys, row->dtype);
    hw_rates_attention(&r, c->req->attention_kernel);
    double fwd, fwd_bwd;
    hw_attention_times(&r, flops, row->seq, row->head_dim, row->causal, 1.0, &fwd, &fwd_bwd);
    return row->fwd_bwd ? fwd_bwd : fwd;
}

/* The efficiency a time implies for the row's pass: what the curve would
 * have to say at its shape. */
static double attention_implied(const calib *c, const comet_kernel_row *row, double t)
{
    return implied(t, attention_time(c, &c->unit, row, attention_flops(row)),
                   attention_time(c, &c->unit, row, 0.0));
}

typedef struct attn_obs {
    const comet_kernel_row *row;
    double achieved;
} attn_obs;

static bool same_shape(const attn_obs *x, const attn_obs *y)
{
    return x->row->head_dim == y->row->head_dim && x->row->seq == y->row->seq;
}

/* The curve's order: head_dim, then seq; rows of one shape by line. */
static int compare_attn(const void *a, const void *b)
{
    const comet_kernel_row *x = ((const attn_obs *)a)->row, *y = ((const attn_obs *)b)->row;
    if (x->head_dim != y->head_dim)
        return (x->head_dim > y->head_dim) - (x->head_dim < y->head_dim);
    if (x->seq != y->seq)
        return (x->seq > y->seq) - (x->seq < y->seq);
    return (x->line > y->line) - (x->line < y->line);
}

/* The points the base holds for the request's kernel. */
static int base_attention_points(const calib *c)
{
    int n;
    comet_attention_curve(&c->req->base->compute, c->req->attention_kernel, &n);
    return n;
}

/* The fitted system's curve for the request's kernel. */
static comet_attn_point *fitted_attention(calib *c, int **n)
{
    comet_compute *cc = &c->out->system.compute;
    if (attention_alt(c->req)) {
        *n = &cc->n_attn_alt[c->req->attention_kernel];
        return cc->attn_alt[c->req->attention_kernel];
    }
    *n = &cc->n_attn_eff;
    return cc->attn_eff;
}

/* The base's efficiency for a pass at a row's shape, causal or not,
 * through the same inversion (NAN without a base curve). */
static double attention_base(const calib *c, const comet_kernel_row *row, bool fwd_bwd,
                             bool causal)
{
    const comet_system *base = c->req->base;
    if (base_attention_points(c) <= 0)
        return NAN;
    comet_kernel_row probe = *row;
    probe.fwd_bwd = fwd_bwd;
    probe.causal = causal;
    return implied(attention_time(c, base, &probe, attention_flops(&probe)),
                   attention_time(c, &c->unit, &probe, attention_flops(&probe)),
                   attention_time(c, &c->unit, &probe, 0.0));
}

/* The median of one pass's rows: causal ones (which = 1), the others (0),
 * or all (-1). `v` has room for n values. */
static size_t attention_values(const attn_obs *o, size_t n, int pass, int which, double *v)
{
    size_t nv = 0;
    for (size_t i = 0; i < n; i++)
        if ((int)o[i].row->fwd_bwd == pass && (which < 0 || (int)o[i].row->causal == which))
            v[nv++] = o[i].achieved;
    return nv;
}

/* One shape's point: the median of each pass; where a pass has causal and
 * non-causal rows both, each its own value (the non-causal keys and the
 * causal_ pair), else one value for both. A pass without rows is taken
 * from the base's curve. `v` has room for n values. */
static comet_status attention_point(calib *c, const attn_obs *o, size_t n, int index, double *v)
{
    int *n_points;
    comet_attn_point *pt = &fitted_attention(c, &n_points)[index];
    memset(pt, 0, sizeof *pt);
    pt->seq = o[0].row->seq;
    pt->head_dim = o[0].row->head_dim;
    static const char *const names[2] = {"forward", "forward_backward"};
    static const char *const passes[2] = {"fwd", "fwd_bwd"};
    for (int pass = 0; pass < 2; pass++) {
        size_t n_causal = attention_values(o, n, pass, 1, v);
        size_t n_plain = attention_values(o, n, pass, 0, v);
        bool split = n_causal && n_plain;
        for (int causal = 0; causal <= (int)split; causal++) {
            double was = attention_base(c, o[0].row, pass == 1, causal == 1);
            size_t nv = attention_values(o, n, pass, split ? causal : -1, v);
            char note[160] = "";
            double e = was;
            if (nv)
                e = fraction(median(v, nv), note, sizeof note);
            else if (base_attention_points(c) > 0)
                snprintf(note, sizeof note, "no %s rows at this shape: the base's curve there",
                         passes[pass]);
            else
                return comet_error_set(c->err, COMET_EINPUT, c->req->kernels->file,
                                       o[0].row->line, 0, NULL,
                                       "attention at seq %g, head_dim %g has %s rows but no %s "
                                       "row, and the base system has no attention curve to "
                                       "take it from",
                                       pt->seq, pt->head_dim, passes[1 - pass], passes[pass]);
            double *slot = causal ? (pass ? &pt->causal_forward_backward : &pt->causal_forward)
                                  : (pass ? &pt->forward_backward : &pt->forward);
            *slot = e;
            char key[96], label[80];
            if (attention_alt(c->req))
                snprintf(key, sizeof key, "compute.attention_kernels.%s[%d].%s%s",
                         comet_attn_kernel_name(c->req->attention_kernel), index,
                         causal ? "causal_" : "", names[pass]);
            else
                snprintf(key, sizeof key, "compute.attention_efficiency[%d].%s%s", index,
                         causal ? "causal_" : "", names[pass]);
            snprintf(label, sizeof label, "%s at seq %g, head_dim %g%s", passes[pass], pt->seq,
                     pt->head_dim, causal ? ", causal" : split ? ", not causal" : "");
            TRY(add_param(c, COMET_CALIB_ATTENTION, key, label, COMET_CALIB_FRACTION, was, e,
                          (int)nv, note));
        }
    }
    return COMET_OK;
}

static comet_status attention_rows(calib *c)
{
    const comet_kernel_rows *k = c->req->kernels;
    size_t n = 0;
    for (size_t i = 0; i < k->n; i++)
        n += k->rows[i].kind == COMET_KERNEL_ATTENTION;
    if (!n)
        return COMET_OK;
    attn_obs *o = malloc(n * sizeof *o);
    double *v = malloc(n * sizeof *v);
    if (!o || !v) {
        free(o);
        free(v);
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    size_t m = 0;
    comet_status st = COMET_OK;
    for (size_t i = 0; i < k->n && !st; i++) {
        const comet_kernel_row *row = &k->rows[i];
        if (row->kind != COMET_KERNEL_ATTENTION)
            continue;
        st = check_peak(c, row);
        if (st)
            break;
        double t = attention_measured(row);
        st = check_time(c, row, t, attention_time(c, &c->unit, row, 0.0));
        o[m] = (attn_obs){row, 0.0};
        if (!st)
            o[m++].achieved = attention_implied(c, row, t);
    }
    if (!st)
        qsort(o, m, sizeof *o, compare_attn);
    int points = 0;
    for (size_t i = 0; i < m && !st;) {
        size_t j = i;
        while (j < m && same_shape(&o[j], &o[i]))
            j++;
        if (points == COMET_MAX_ATTN_POINTS)
            st = comet_error_set(c->err, COMET_EINPUT, k->file, o[i].row->line, 0, NULL,
                                 "more than %d attention shapes (seq x head_dim); comet's "
                                 "curve holds %d",
                                 COMET_MAX_ATTN_POINTS, COMET_MAX_ATTN_POINTS);
        else
            st = attention_point(c, o + i, j - i, points++, v);
        i = j;
    }
    if (!st) {
        int *n_points;
        fitted_attention(c, &n_points);
        *n_points = points;
    }
    free(o);
    free(v);
    return st;
}

/* ---- memory-bound kernels ---------------------------------------------------- */

/* The model's time for a memory row's bytes on a system: a kernel of its
 * kind, or the optimizer step. */
static double memory_time(const comet_system *sys, const comet_kernel_row *row, double bytes)
{
    hw_rates r;
    hw_rates_init(&r, sys, COMET_DTYPE_BF16);
    return row->mem == COMET_MEMK_OPTIMIZER ? hw_optimizer_time(&r, bytes)
                                            : hw_vector_time(&r, row->mem, 0.0, bytes);
}

/* The share of HBM bandwidth a row reached; a rate without bytes is the
 * share itself. */
static comet_status memory_implied(const calib *c, const comet_kernel_row *row, double *out)
{
    if (!(row->bytes > 0.0)) {
        *out = row->rate / c->req->base->hbm.bandwidth;
        return COMET_OK;
    }
    double t = row->seconds > 0.0 ? row->seconds : row->bytes / row->rate;
    double t_zero = memory_time(&c->unit, row, 0.0);
    TRY(check_time(c, row, t, t_zero));
    *out = implied(t, memory_time(&c->unit, row, row->bytes), t_zero);
    return COMET_OK;
}

static comet_status memory_rows(calib *c)
{
    const comet_kernel_rows *k = c->req->kernels;
    const comet_system *base = c->req->base;
    double *v = malloc((k->n + 1) * sizeof *v);
    if (!v)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = COMET_OK;
    for (int kind = 0; kind < COMET_MEMK_COUNT && !st; kind++) {
        size_t n = 0;
        for (size_t i = 0; i < k->n && !st; i++)
            if (k->rows[i].kind == COMET_KERNEL_MEMORY && (int)k->rows[i].mem == kind)
                st = memory_implied(c, &k->rows[i], &v[n++]);
        if (st || !n)
            continue;
        char note[160] = "", key[96];
        double e = fraction(median(v, n), note, sizeof note);
        double was = base->compute.mem_efficiency[kind] > 0.0
                         ? base->compute.mem_efficiency[kind]
                         : vocab_efficiency(base->hbm.efficiency);
        c->out->system.compute.mem_efficiency[kind] = e;
        snprintf(key, sizeof key, "compute.memory_efficiency.%s",
                 comet_mem_kernel_name((comet_mem_kernel)kind));
        st = add_param(c, COMET_CALIB_MEMORY, key, comet_mem_kernel_name((comet_mem_kernel)kind),
                       COMET_CALIB_FRACTION, was, e, (int)n, note);
        if (!st && kind == COMET_MEMK_ELEMENTWISE) {
            /* a GEMM's operands stream like a copy */
            c->out->system.hbm.efficiency = e;
            st = add_param(c, COMET_CALIB_MEMORY, "hbm.efficiency", "HBM (from elementwise)",
                           COMET_CALIB_FRACTION, vocab_efficiency(base->hbm.efficiency), e,
                           (int)n, note);
        }
    }
    free(v);
    return st;
}

/* ---- each kernel row against the fitted system ------------------------------- */

/* One kernel row priced by `sys`, the fitted system as it prices kernels
 * timed alone (no framework factor). */
static void kernel_point(const calib *c, const comet_system *sys, const comet_kernel_row *row,
                         comet_calib_point *p)
{
    memset(p, 0, sizeof p[0]);
    p->file = c->req->kernels->file;
    p->line = row->line;
    const char *dt = comet_dtype_name(row->dtype);
    if (row->kind == COMET_KERNEL_GEMM) {
        work_op op = gemm_of(row);
        hw_rates r;
        hw_rates_init(&r, sys, row->dtype);
        p->group = COMET_CALIB_GEMM;
        snprintf(p->what, sizeof p->what, "gemm %gx%gx%g %s", row->m, row->n, row->k, dt);
        p->measured_s = gemm_measured(row, &op);
        p->fitted_s = hw_gemm_time(&r, op.flops, op.bytes, row->dtype == COMET_DTYPE_FP8,
                                   op.k_fwd);
        p->measured_rate = op.flops / p->measured_s;
        p->fitted_rate = op.flops / p->fitted_s;
    } else if (row->kind == COMET_KERNEL_ATTENTION) {
        p->group = COMET_CALIB_ATTENTION;
        snprintf(p->what, sizeof p->what, "attention %s seq %g head_dim %g%s %s",
                 row->fwd_bwd ? "fwd_bwd" : "fwd", row->seq, row->head_dim,
                 row->causal ? " causal" : "", dt);
        p->measured_s = attention_measured(row);
        p->fitted_s = attention_time(c, sys, row, attention_flops(row));
        p->measured_rate = attention_counted(row) / p->measured_s;
        p->fitted_rate = attention_counted(row) / p->fitted_s;
    } else {
        p->group = COMET_CALIB_MEMORY;
        const char *kind = comet_mem_kernel_name(row->mem);
        if (row->bytes > 0.0) {
            char size[32];
            comet_format_setting(row->bytes, COMET_QTY_BYTES, size, sizeof size);
            snprintf(p->what, sizeof p->what, "memory %s %s", kind, size);
            p->measured_s = row->seconds > 0.0 ? row->seconds : row->bytes / row->rate;
            p->fitted_s = memory_time(sys, row, row->bytes);
            p->measured_rate = row->bytes / p->measured_s;
            p->fitted_rate = row->bytes / p->fitted_s;
        } else {
            hw_rates r;
            hw_rates_init(&r, sys, COMET_DTYPE_BF16);
            snprintf(p->what, sizeof p->what, "memory %s", kind);
            p->measured_rate = row->rate;
            p->fitted_rate = r.hbm_kind[row->mem];
        }
    }
    p->residual = p->measured_s > 0.0 ? p->fitted_s / p->measured_s - 1.0
                                      : p->measured_rate / p->fitted_rate - 1.0;
}

/* ---- network ----------------------------------------------------------------- */

typedef struct net_obs {
    const comet_calib_nccl *run;
    const comet_nccl_row *row;
} net_obs;

/* The fit's state: a copy of the system whose dimension `dim` takes the
 * latency and efficiency being tried. */
typedef struct net_fit {
    comet_system *trial;
    int dim;
    const net_obs *obs;
    size_t n;
} net_fit;

static double net_time(const net_fit *f, size_t i, double latency, double inv_eff)
{
    comet_net_dim *d = &f->trial->dims[f->dim];
    d->latency = latency;
    d->efficiency = 1.0 / inv_eff;
    const net_obs *o = &f->obs[i];
    comet_coll_price price;
    if (comet_collective_price_on(f->trial, f->dim, o->run->series->collective, o->run->npus,
                                  o->row->bytes, &price, NULL))
        return (double)INFINITY;
    return price.time;
}

static double net_objective(const net_fit *f, double a, double w)
{
    double s = 0.0;
    for (size_t i = 0; i < f->n; i++) {
        double r = net_time(f, i, a, w) / f->obs[i].row->seconds - 1.0;
        s += r * r;
    }
    return s;
}

/* Gauss-Newton on the relative residuals in (latency a, 1/efficiency w),
 * bounded by a >= 0 and efficiency <= 1 (a bound that binds is held and
 * the other parameter fitted alone), each step halved until it lowers the
 * residuals. The price is piecewise linear in (a, w) (linear for the
 * closed forms; the fastest protocol under a protocol model), so the
 * differences below are its exact slopes within a piece. */
static void net_gauss_newton(const net_fit *f, double *a_io, double *w_io)
{
    double a = *a_io, w = *w_io, obj = net_objective(f, a, w);
    for (int it = 0; it < 200 && obj > 0.0; it++) {
        double da = 1e-9 + 1e-6 * a, dw = 1e-6 * w;
        double jaa = 0, jaw = 0, jww = 0, ga = 0, gw = 0;
        for (size_t i = 0; i < f->n; i++) {
            double m = f->obs[i].row->seconds, t = net_time(f, i, a, w);
            double r = t / m - 1.0;
            double ja = (net_time(f, i, a + da, w) - t) / da / m;
            double jw = (net_time(f, i, a, w + dw) - t) / dw / m;
            jaa += ja * ja;
            jaw += ja * jw;
            jww += jw * jw;
            ga += ja * r;
            gw += jw * r;
        }
        jaa *= 1.0 + 1e-12;
        jww *= 1.0 + 1e-12;
        double det = jaa * jww - jaw * jaw;
        double sa = det > 0.0 ? -(jww * ga - jaw * gw) / det : 0.0;
        double sw = det > 0.0 ? -(jaa * gw - jaw * ga) / det : (jww > 0.0 ? -gw / jww : 0.0);
        /* a bound that binds: hold it, fit the other alone */
        if (a + sa < 0.0 && a <= 0.0) {
            sa = 0.0;
            sw = jww > 0.0 ? -gw / jww : 0.0;
        }
        if (w + sw < 1.0 && w <= 1.0) {
            sw = 0.0;
            sa = a + sa < 0.0 && a <= 0.0 ? 0.0 : (jaa > 0.0 ? -ga / jaa : 0.0);
        }
        bool moved = false;
        for (double step = 1.0; step > 1e-12; step *= 0.5) {
            double na = clamp(a + step * sa, 0.0, MAX_LATENCY);
            double nw = clamp(w + step * sw, 1.0, 1.0 / MIN_FRACTION);
            double nobj = net_objective(f, na, nw);
            if (nobj < obj) {
                moved = fabs(na - a) > 1e-18 + 1e-13 * a || fabs(nw - w) > 1e-13 * w;
                a = na;
                w = nw;
                obj = nobj;
                break;
            }
        }
        if (!moved)
            break;
    }
    *a_io = a;
    *w_io = w;
}

static comet_status net_fit_dim(calib *c, int d, const net_obs *o, size_t n)
{
    comet_system *trial = malloc(sizeof *trial);
    if (!trial)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    *trial = c->out->system;
    comet_net_dim *dim = &trial->dims[d];
    /* a measured curve of a collective being fitted would price it instead */
    char note[160] = "";
    for (size_t i = 0; i < n; i++) {
        comet_collective coll = o[i].run->series->collective;
        if (dim->bus.curve[coll].n_points > 0) {
            dim->bus.curve[coll].n_points = 0;
            dim->bus.n_curves--;
            snprintf(note, sizeof note, "the base's %s curve removed (it priced the collective "
                                        "instead of latency and efficiency)",
                     comet_collective_name(coll));
        }
    }
    if (dim->bus.n_curves <= 0)
        dim->bus.npus = 0;
    const comet_net_dim *was = &c->req->base->dims[d];
    double a = was->latency, w = 1.0 / vocab_efficiency(was->efficiency);
    net_fit f = {trial, d, o, n};
    net_gauss_newton(&f, &a, &w);
    if (a < MIN_LATENCY)
        a = 0.0;
    double e = 1.0 / w;
    char enote[160] = "";
    if (e >= 1.0)
        snprintf(enote, sizeof enote, "held at 1: the measured bus bandwidth reaches the "
                                      "dimension's bandwidth (raise it?)");
    dim->latency = a;
    dim->efficiency = e;
    c->out->system.dims[d] = *dim;
    free(trial);
    char key[96], label[64];
    if (was->protocols != COMET_PROTOCOLS_NONE && !note[0])
        snprintf(note, sizeof note, "added per step to NCCL's latencies (protocols: %s)",
                 comet_protocol_model_name(was->protocols));
    snprintf(key, sizeof key, "network[%d].latency", d);
    snprintf(label, sizeof label, "%s latency", was->name);
    TRY(add_param(c, COMET_CALIB_NETWORK, key, label, COMET_CALIB_SECONDS, was->latency, a,
                  (int)n, note));
    snprintf(key, sizeof key, "network[%d].efficiency", d);
    snprintf(label, sizeof label, "%s efficiency", was->name);
    return add_param(c, COMET_CALIB_NETWORK, key, label, COMET_CALIB_FRACTION,
                     vocab_efficiency(was->efficiency), e, (int)n, enote);
}

typedef struct bus_obs {
    double bytes, busbw;
} bus_obs;

static int compare_bus(const void *a, const void *b)
{
    const bus_obs *x = a, *y = b;
    return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* The measured bus bandwidth of one collective as the dimension's curve:
 * sizes increasing (equal sizes averaged), at most COMET_MAX_BUS_POINTS
 * (spread evenly over the rows when there are more). */
static comet_status net_curve(calib *c, int d, comet_collective coll, const net_obs *o,
                              size_t n)
{
    bus_obs *b = malloc((n + 1) * sizeof *b);
    if (!b)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    size_t m = 0, dropped = 0;
    int64_t npus = 0;
    for (size_t i = 0; i < n; i++) {
        if (o[i].run->series->collective != coll)
            continue;
        npus = o[i].run->npus;
        /* five significant digits of a decimal unit (B/s, KB/s, MB/s, ...):
         * more than nccl-tests' times hold, and the written curve reads
         * as a person would write it ("193.87 GB/s") */
        double busbw = o[i].row->bytes * comet_busbw_factor(coll, npus) / o[i].row->seconds;
        double unit = busbw >= 1.0 ? pow(1e3, floor(log10(busbw) / 3.0)) : 1.0;
        char text[32];
        snprintf(text, sizeof text, "%.5g", busbw / unit);
        busbw = strtod(text, NULL) * unit;
        if (!(busbw >= MIN_BUSBW && busbw <= MAX_BUSBW)) {
            dropped++;
            continue;
        }
        b[m++] = (bus_obs){o[i].row->bytes, busbw};
    }
    qsort(b, m, sizeof *b, compare_bus);
    size_t u = 0;
    for (size_t i = 0; i < m;) {
        size_t j = i;
        double sum = 0.0;
        while (j < m && b[j].bytes == b[i].bytes)
            sum += b[j++].busbw;
        b[u++] = (bus_obs){b[i].bytes, sum / (double)(j - i)};
        i = j;
    }
    if (!u) {
        free(b);
        return comet_error_set(c->err, COMET_EINPUT, o[0].run->series->file, 0, 0, NULL,
                               "no %s row gives a bus bandwidth from 1 KB/s to 10 PB/s, the "
                               "range a curve takes",
                               comet_collective_name(coll));
    }
    comet_net_dim *dim = &c->out->system.dims[d];
    comet_bus_curve *cv = &dim->bus.curve[coll];
    int was_points = c->req->base->dims[d].bus.curve[coll].n_points;
    if (cv->n_points == 0)
        dim->bus.n_curves++;
    cv->n_points = 0;
    for (int j = 0; j < COMET_MAX_BUS_POINTS && u > 0; j++) {
        size_t i = u <= COMET_MAX_BUS_POINTS
                       ? (size_t)j
                       : (size_t)lround((double)j * (double)(u - 1) / (COMET_MAX_BUS_POINTS - 1));
        if (i >= u)
            break;
        cv->points[cv->n_points++] = (comet_bus_point){b[i].bytes, b[i].busbw};
    }
    dim->bus.npus = npus;
    free(b);
    char key[96], label[64], note[160] = "";
    snprintf(key, sizeof key, "network[%d].bus_bandwidth.%s", d, comet_collective_name(coll));
    snprintf(label, sizeof label, "%s %s curve", dim->name, comet_collective_name(coll));
    if (u > COMET_MAX_BUS_POINTS)
        snprintf(note, sizeof note, "%zu sizes, %d of them spread evenly", u,
                 COMET_MAX_BUS_POINTS);
    else if (dropped)
        snprintf(note, sizeof note, "%zu rows outside 1 KB/s to 10 PB/s left out", dropped);
    return add_param(c, COMET_CALIB_NETWORK, key, label, COMET_CALIB_POINTS, was_points,
                     cv->n_points, (int)m, note);
}

static comet_status network_dim(calib *c, int d, const net_obs *o, size_t n)
{
    if (c->req->net_mode == COMET_CALIB_NET_FIT)
        return net_fit_dim(c, d, o, n);
    /* a dimension's curves share one group size */
    const comet_net_dim *dim = &c->out->system.dims[d];
    for (size_t i = 0; i < n; i++) {
        int64_t npus = o[i].run->npus;
        bool others = false;
        for (int k = 0; k < COMET_COLL_SYMMETRIC; k++)
            others |= dim->bus.curve[k].n_points > 0 && !(k == (int)o[i].run->series->collective);
        if (npus != o[0].run->npus || (others && dim->bus.npus != npus))
            return comet_error_set(c->err, COMET_EINPUT, o[i].run->series->file, 0, 0, NULL,
                                   "measured on %lld NPUs, but %s's curves are on %lld: a "
                                   "dimension's curves share one group size",
                                   (long long)npus, dim->name,
                                   (long long)(npus != o[0].run->npus ? o[0].run->npus
                                                                      : dim->bus.npus));
    }
    for (int coll = COMET_COLL_NONE + 1; coll < COMET_COLL_SYMMETRIC; coll++) {
        bool any = false;
        for (size_t i = 0; i < n; i++)
            any |= (int)o[i].run->series->collective == coll;
        if (any)
            TRY(net_curve(c, d, (comet_collective)coll, o, n));
    }
    return COMET_OK;
}

static comet_status network_rows(calib *c)
{
    const comet_calib_request *q = c->req;
    size_t total = 0;
    for (size_t s = 0; s < q->n_nccl; s++) {
        const comet_calib_nccl *run = &q->nccl[s];
        if (run->dim < 0 || run->dim >= q->base->n_dims)
            return comet_error_set(c->err, COMET_EINPUT, run->series->file, 0, 0, NULL,
                                   "dimension %d: system %s has %d", run->dim, q->base->name,
                                   q->base->n_dims);
        if (run->npus < 2 || run->npus > MAX_CURVE_NPUS)
            return comet_error_set(c->err, COMET_EINPUT, run->series->file, 0, 0, NULL,
                                   "a collective of %lld NPUs: comet takes 2 to %d",
                                   (long long)run->npus, MAX_CURVE_NPUS);
        total += run->series->n;
    }
    if (!total)
        return COMET_OK;
    net_obs *o = malloc(total * sizeof *o);
    if (!o)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = COMET_OK;
    for (int d = 0; d < q->base->n_dims && !st; d++) {
        size_t n = 0;
        for (size_t s = 0; s < q->n_nccl; s++)
            for (size_t i = 0; q->nccl[s].dim == d && i < q->nccl[s].series->n; i++)
                o[n++] = (net_obs){&q->nccl[s], &q->nccl[s].series->rows[i]};
        if (n)
            st = network_dim(c, d, o, n);
    }
    free(o);
    return st;
}

static comet_status network_points(calib *c)
{
    const comet_calib_request *q = c->req;
    for (size_t s = 0; s < q->n_nccl; s++) {
        const comet_calib_nccl *run = &q->nccl[s];
        comet_collective coll = run->series->collective;
        double factor = comet_busbw_factor(coll, run->npus);
        for (size_t i = 0; i < run->series->n; i++) {
            const comet_nccl_row *row = &run->series->rows[i];
            comet_coll_price price;
            TRY(comet_collective_price_on(&c->out->system, run->dim, coll, run->npus,
                                          row->bytes, &price, c->err));
            comet_calib_point p;
            memset(&p, 0, sizeof p);
            p.group = COMET_CALIB_NETWORK;
            p.file = run->series->file;
            p.line = row->line;
            char size[32];
            comet_format_setting(row->bytes, COMET_QTY_BYTES, size, sizeof size);
            snprintf(p.what, sizeof p.what, "%s %s x%lld on %s", comet_collective_name(coll),
                     size, (long long)run->npus, c->out->system.dims[run->dim].name);
            p.measured_s = row->seconds;
            p.fitted_s = price.time;
            p.measured_rate = row->bytes * factor / row->seconds;
            p.fitted_rate = price.busbw;
            p.residual = p.fitted_s / p.measured_s - 1.0;
            TRY(add_point(c, &p));
        }
    }
    return COMET_OK;
}

/* ---- training steps ---------------------------------------------------------- */

/* Step `i` of the steps table on the fitted system (c->alone, copied by
 * steps_fit) whose kernels run at `fe` of their own rates: the predicted
 * and the measured step time. */
static comet_status step_times(calib *c, int i, double fe, double *predicted, double *measured)
{
    const comet_validation_row *row = &c->req->steps->rows[i];
    comet_system *sys = &c->alone;
    sys->compute.framework_efficiency = fe;
    comet_result res;
    comet_error why;
    comet_error_clear(&why);
    *measured = comet_measured_step_time(&row->measured, &row->job.model, &row->job.strategy);
    if (comet_estimate(&row->job.model, sys, &row->job.strategy, &res, &why)) {
        /* the message says which step; the caller points the key at the
         * row in the steps file (comet_validation_locate) */
        c->out->step_row = i;
        char message[sizeof why.message];
        snprintf(message, sizeof message, "step %.40s: %.440s", row->id, why.message);
        *c->err = why;
        snprintf(c->err->message, sizeof c->err->message, "%s", message);
        return why.status ? why.status : COMET_EINPUT;
    }
    *predicted = res.step_time;
    if (!(*predicted > 0.0) || !(*measured > 0.0))
        return comet_error_set(c->err, COMET_EINPUT, c->req->steps->file, 0, 0, NULL,
                               "step %s: no positive step time to fit to (measured %g s, "
                               "predicted %g s)",
                               row->id, *measured, *predicted);
    return COMET_OK;
}

/* Sum over the steps of ln(predicted / measured)^2 at `fe`. */
static comet_status step_objective(calib *c, double fe, double *sum)
{
    *sum = 0.0;
    for (int i = 0; i < c->req->steps->n_rows; i++) {
        double p, m;
        TRY(step_times(c, i, fe, &p, &m));
        *sum += log(p / m) * log(p / m);
    }
    return COMET_OK;
}

#define MIN_FRAMEWORK 0.05   /* the factors the fit searches, in log */
#define MAX_FRAMEWORK 2.0

/* compute.framework_efficiency: the factor on every kernel rate that
 * brings the steps' predictions nearest their measurements (least squares
 * in log; a golden-section search over 0.05..2, where the objective is
 * one-humped: every step only slows as kernels do), then each step priced
 * with it. */
static comet_status steps_fit(calib *c)
{
    const comet_validation_table *t = c->req->steps;
    if (!t || t->n_rows == 0)
        return COMET_OK;
    double was = c->req->base->compute.framework_efficiency;
    was = was > 0.0 ? was : 1.0;
    c->alone = c->out->system; /* the kernel and network fits done */
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    double lo = log(MIN_FRAMEWORK), hi = log(MAX_FRAMEWORK);
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo), f1, f2;
    TRY(step_objective(c, exp(x1), &f1));
    TRY(step_objective(c, exp(x2), &f2));
    for (int it = 0; it < 60; it++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            TRY(step_objective(c, exp(x1), &f1));
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            TRY(step_objective(c, exp(x2), &f2));
        }
    }
    double fe = exp(0.5 * (lo + hi));
    char note[160] = "";
    if (fe < MIN_FRAMEWORK * 1.01 || fe > MAX_FRAMEWORK * 0.99)
        snprintf(note, sizeof note, "at the end of the range searched (%g to %g)",
                 MIN_FRAMEWORK, MAX_FRAMEWORK);
    c->out->system.compute.framework_efficiency = fe;
    TRY(add_param(c, COMET_CALIB_STEP, "compute.framework_efficiency",
                  "kernel rates in the steps' framework", COMET_CALIB_FRACTION, was, fe, t->n_rows,
                  note));
    for (int i = 0; i < t->n_rows; i++) {
        const comet_validation_row *row = &t->rows[i];
        comet_calib_point p;
        memset(&p, 0, sizeof p);
        p.group = COMET_CALIB_STEP;
        p.file = t->file;
        snprintf(p.what, sizeof p.what, "%.20s: %.40s on %lld NPUs", row->id,
                 row->job.model.name, (long long)comet_strategy_npus(&row->job.strategy));
        TRY(step_times(c, i, fe, &p.fitted_s, &p.measured_s));
        double tokens = (double)row->job.strategy.global_batch * (double)row->job.model.seq;
        p.measured_rate = tokens / p.measured_s;
        p.fitted_rate = tokens / p.fitted_s;
        p.residual = p.fitted_s / p.measured_s - 1.0;
        TRY(add_point(c, &p));
    }
    return COMET_OK;
}

/* ---- the whole ----------------------------------------------------------------- */

/* The base at efficiency 1: what t_ideal is priced on. */
static void unit_system(const comet_system *base, comet_system *u)
{
    *u = *base;
    comet_compute *cc = &u->compute;
    cc->n_gemm_eff = 1;
    cc->gemm_eff[0] = (comet_eff_point){1.0, 1.0};
    cc->gemm_k_overhead = 0.0;
    cc->n_attn_eff = 1;
    cc->attn_eff[0] = (comet_attn_point){1.0, 1.0, 1.0, 1.0, 0.0, 0.0};
    /* every kernel's attention at efficiency 1: the one curve above */
    memset(cc->n_attn_alt, 0, sizeof cc->n_attn_alt);
    cc->attn_kernel = COMET_ATTN_AUTO;
    cc->fp8_gemm_efficiency = 1.0;
    cc->framework_efficiency = 1.0;
    for (int k = 0; k < COMET_MEMK_COUNT; k++)
        cc->mem_efficiency[k] = 1.0;
    u->hbm.efficiency = 1.0;
}

/* compute.efficiency_spread: the RMS of the kernel rows' residuals against
 * the fitted system, the relative spread of measured kernel rates about
 * the efficiencies that widens every prediction's uncertainty band
 * (include/comet/band.h); another kernel's attention rows are not the
 * system's own kernels and leave it alone. */
static comet_status kernel_spread(calib *c)
{
    double sum = 0.0;
    int n = 0;
    for (size_t i = 0; i < c->out->n_points; i++)
        if (c->out->points[i].group <= COMET_CALIB_MEMORY &&
            !(c->out->points[i].group == COMET_CALIB_ATTENTION && attention_alt(c->req))) {
            sum += c->out->points[i].residual * c->out->points[i].residual;
            n++;
        }
    if (n == 0)
        return COMET_OK;
    double spread = fmin(1.0, sqrt(sum / n));
    comet_status st = add_param(c, COMET_CALIB_GEMM, "compute.efficiency_spread",
                                "kernel-rate spread (residual RMS)", COMET_CALIB_FRACTION,
                                c->req->base->compute.efficiency_spread, spread, n,
                                "every kernel row's residual");
    c->out->system.compute.efficiency_spread = spread;
    return st;
}

comet_status comet_calibrate(const comet_calib_request *req, comet_calib_result *out,
                             comet_error *err)
{
    if (!req || !req->base)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "no base system");
    if (req->gemm_points < 0 || req->gemm_points > COMET_CALIB_MAX_GEMM_POINTS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "GEMM size points: %d is not 0 (choose) or 1 to %d",
                               req->gemm_points, COMET_CALIB_MAX_GEMM_POINTS);
    if (!(req->kernels && req->kernels->n) && !req->n_nccl &&
        !(req->steps && req->steps->n_rows))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "nothing to fit: no kernel rows, no nccl-tests runs and no "
                               "training steps");
    for (const char *p = req->name; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "name",
                                   "names may not contain control characters");
    calib *c = malloc(sizeof *c);
    if (!c)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    c->req = req;
    c->out = out;
    c->err = err;
    unit_system(req->base, &c->unit);
    out->base = req->base;
    out->system = *req->base;
    out->step_row = -1;
    if (req->name)
        snprintf(out->system.name, sizeof out->system.name, "%s", req->name);
    else
        snprintf(out->system.name, sizeof out->system.name, "%.*s-calibrated",
                 (int)(sizeof out->system.name - sizeof "-calibrated"), req->base->name);
    comet_status st = COMET_OK;
    if (req->kernels && req->kernels->n) {
        st = gemm_rows(c);
        if (!st)
            st = attention_rows(c);
        if (!st)
            st = memory_rows(c);
        /* kernels timed alone: no framework factor */
        c->alone = out->system;
        c->alone.compute.framework_efficiency = 1.0;
        for (size_t i = 0; i < req->kernels->n && !st; i++) {
            comet_calib_point p;
            kernel_point(c, &c->alone, &req->kernels->rows[i], &p);
            st = add_point(c, &p);
        }
        if (!st)
            st = kernel_spread(c);
    }
    if (!st)
        st = network_rows(c);
    if (!st)
        st = network_points(c);
    if (!st)
        st = steps_fit(c);
    free(c);
    return st;
}

void comet_calib_result_free(comet_calib_result *r)
{
    if (!r)
        return;
    free(r->points);
    free(r->params);
    r->points = NULL;
    r->params = NULL;
    r->n_points = r->cap_points = r->n_params = r->cap_params = 0;
}
