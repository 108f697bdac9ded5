/* Uncertainty bands from validation residuals (include/comet/band.h). Why
 * here: the band is an empirical statement about comet's own error, so it
 * is built from the same tables and the same comet_validate that
 * docs/validation.md reports, never from a constant of its own. A band is
 * the 10th to 90th percentile of measured / predicted over the validation
 * rows most like the query, in log space, widened in quadrature by the
 * system's kernel-rate spread times the step's compute share
 * (docs/validation.md, error bars, gives the equations). */
#include "comet/band.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct band_row {
    double log_ratio;                   /* ln(measured / predicted) */
    double peak;                        /* the GPU class: its dense matrix peak, FLOP/s */
    char system[COMET_NAME_LEN];
    comet_framework framework;
    double npus, params, seq;
    comet_model_kind kind;              /* a Transformer or a layer list (a CNN, DLRM) */
    bool moe;
    bool fitted;                        /* a preset was fit to it */
} band_row;

struct comet_band_model {
    int n;
    band_row *rows;
};

/* z of the normal distribution at COMET_BAND_LEVEL's upper end (0.9): the
 * kernel-rate spread is a 1-sigma figure, the band an 80 % one. */
static const double BAND_Z = 1.2815515655446004;

/* Two GPUs are of one class when their dense matrix peaks are within 5 %
 * (H100, H200 and H800 share the GH100's; A100 and B200 do not). */
static const double PEAK_TOLERANCE = 0.05;

static double gpu_peak(const comet_system *sys)
{
    double p = sys->compute.matrix_flops[COMET_DTYPE_BF16];
    if (p > 0.0)
        return p;
    for (int d = 0; d < COMET_DTYPE_COUNT; d++)
        p = fmax(p, sys->compute.matrix_flops[d]);
    return p;
}

static bool same_class(double a, double b)
{
    return a > 0.0 && b > 0.0 && fabs(a - b) <= PEAK_TOLERANCE * fmax(a, b);
}

static bool is_moe(const comet_model *m)
{
    return m->kind == COMET_MODEL_TRANSFORMER && m->moe.experts > 0;
}

comet_status comet_band_model_new(const comet_validation_table *const *tables,
                                  const comet_validation_report *const *reports, int n,
                                  comet_band_model **out, comet_error *err)
{
    *out = NULL;
    int total = 0;
    for (int t = 0; t < n; t++)
        total += reports[t]->n_rows;
    comet_band_model *bm = calloc(1, sizeof *bm);
    if (!bm || (total > 0 && !(bm->rows = calloc((size_t)total, sizeof *bm->rows)))) {
        free(bm);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                               "out of memory building the uncertainty bands");
    }
    for (int t = 0; t < n; t++)
        for (int i = 0; i < reports[t]->n_rows; i++) {
            const comet_validation_result *x = &reports[t]->rows[i];
            if (x->status != COMET_VALIDATION_OK || !(x->predicted_step > 0.0) ||
                !(x->measured_step > 0.0))
                continue;
            const comet_job *j = &tables[t]->rows[i].job;
            band_row *b = &bm->rows[bm->n++];
            b->log_ratio = log(x->measured_step / x->predicted_step);
            b->peak = gpu_peak(&j->system);
            snprintf(b->system, sizeof b->system, "%s", j->system.name);
            b->framework = x->framework;
            b->npus = (double)x->npus;
            b->params = x->result.params;
            b->seq = (double)j->model.seq;
            b->kind = j->model.kind;
            b->moe = is_moe(&j->model);
            b->fitted = tables[t]->rows[i].fitted;
        }
    *out = bm;
    return COMET_OK;
}

void comet_band_model_free(comet_band_model *bm)
{
    if (!bm)
        return;
    free(bm->rows);
    free(bm);
}

int comet_band_model_rows(const comet_band_model *bm)
{
    return bm ? bm->n : 0;
}

/* ---- choosing the rows ---- */

typedef struct band_query {
    const char *system;
    double peak;
    comet_framework framework;
    comet_model_kind kind;
} band_query;

typedef enum band_scope {
    SCOPE_SYSTEM_FRAMEWORK = 0,
    SCOPE_SYSTEM,
    SCOPE_CLASS_FRAMEWORK,
    SCOPE_CLASS,
    SCOPE_ALL,
    SCOPE_COUNT
} band_scope;

/* A scope holds rows of the query's kind of model alone (a CNN's error
 * says little about a Transformer's), but for the last, every row. */
static bool in_scope(const band_row *b, const band_query *q, band_scope scope)
{
    if (scope != SCOPE_ALL && b->kind != q->kind)
        return false;
    switch (scope) {
    case SCOPE_SYSTEM_FRAMEWORK:
        return strcmp(b->system, q->system) == 0 && b->framework == q->framework;
    case SCOPE_SYSTEM:
        return strcmp(b->system, q->system) == 0;
    case SCOPE_CLASS_FRAMEWORK:
        return same_class(b->peak, q->peak) && b->framework == q->framework;
    case SCOPE_CLASS:
        return same_class(b->peak, q->peak);
    case SCOPE_ALL:
    case SCOPE_COUNT:
        break;
    }
    return true;
}

static void scope_basis(band_scope scope, const band_query *q, char *out, size_t cap)
{
    const char *fw = comet_framework_name(q->framework);
    double tf = q->peak / 1e12;
    switch (scope) {
    case SCOPE_SYSTEM_FRAMEWORK:
        snprintf(out, cap, "%s, %s", q->system, fw);
        return;
    case SCOPE_SYSTEM:
        snprintf(out, cap, "%s, every framework", q->system);
        return;
    case SCOPE_CLASS_FRAMEWORK:
        snprintf(out, cap, "GPUs of %.0f TFLOP/s, %s", tf, fw);
        return;
    case SCOPE_CLASS:
        snprintf(out, cap, "GPUs of %.0f TFLOP/s, every framework", tf);
        return;
    case SCOPE_ALL:
    case SCOPE_COUNT:
        break;
    }
    snprintf(out, cap, "every validation row");
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile of n sorted values, interpolated linearly between ranks. */
static double quantile(const double *v, int n, double p)
{
    double at = p * (double)(n - 1);
    int i = (int)floor(at);
    if (i >= n - 1)
        return v[n - 1];
    return v[i] + (at - (double)i) * (v[i + 1] - v[i]);
}

static void add_note(comet_band *out, unsigned flag, const char *fmt, ...)
{
    out->flags |= flag;
    if (out->n_notes >= COMET_BAND_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->notes[out->n_notes++], COMET_BAND_NOTE_LEN, fmt, ap);
    va_end(ap);
}

/* Say where `value` lies outside half the rows' least to twice their most. */
static void check_range(comet_band *out, unsigned flag, double value, double lo, double hi,
                        const char *what, double unit, const char *unit_name)
{
    if (!(value > 0.0) || !(hi > 0.0) || (value >= 0.5 * lo && value <= 2.0 * hi))
        return;
    add_note(out, flag, "%s %.4g%s: outside the band's rows, which span %.4g to %.4g%s", what,
             value / unit, unit_name, lo / unit, hi / unit, unit_name);
}

void comet_band_for(const comet_band_model *bm, const comet_model *m, const comet_system *sys,
                    const comet_strategy *s, const comet_result *r, comet_band *out)
{
    memset(out, 0, sizeof *out);
    out->level = COMET_BAND_LEVEL;
    out->step_time = r->step_time;
    band_query q = {sys->name, gpu_peak(sys), comet_strategy_framework(s), m->kind};
    bool predicted = r->step_time > 0.0 && isfinite(r->step_time);
    if (!predicted || !bm || bm->n == 0) {
        snprintf(out->basis, sizeof out->basis, "%s",
                 predicted ? "no validation rows" : "no prediction");
        if (!predicted)
            add_note(out, COMET_BAND_NO_PREDICTION, "no band: the prediction is not a positive time");
        else
            add_note(out, COMET_BAND_FEW_ROWS, "no band: no validation rows to draw it from");
        return;
    }
    band_scope scope = SCOPE_SYSTEM_FRAMEWORK;
    int n = 0;
    for (; scope < SCOPE_ALL; scope++) {
        n = 0;
        for (int i = 0; i < bm->n; i++)
            n += in_scope(&bm->rows[i], &q, scope);
        if (n >= COMET_BAND_MIN_ROWS)
            break;
    }
    if (scope == SCOPE_ALL)
        n = bm->n;
    double *v = malloc((size_t)n * sizeof *v);
    if (!v) {
        snprintf(out->basis, sizeof out->basis, "no band: out of memory");
        return;
    }
    double npus_lo = INFINITY, npus_hi = 0.0, par_lo = INFINITY, par_hi = 0.0;
    double seq_lo = INFINITY, seq_hi = 0.0;
    bool any_moe = false;
    int k = 0, fitted = 0;
    for (int i = 0; i < bm->n; i++) {
        const band_row *b = &bm->rows[i];
        if (!in_scope(b, &q, scope))
            continue;
        v[k++] = b->log_ratio;
        npus_lo = fmin(npus_lo, b->npus);
        npus_hi = fmax(npus_hi, b->npus);
        par_lo = fmin(par_lo, b->params);
        par_hi = fmax(par_hi, b->params);
        seq_lo = fmin(seq_lo, b->seq);
        seq_hi = fmax(seq_hi, b->seq);
        any_moe |= b->moe;
        fitted += b->fitted;
    }
    qsort(v, (size_t)k, sizeof *v, by_value);
    double lo = quantile(v, k, 0.5 * (1.0 - COMET_BAND_LEVEL));
    double mid = quantile(v, k, 0.5);
    double hi = quantile(v, k, 0.5 * (1.0 + COMET_BAND_LEVEL));
    free(v);

    double compute = r->forward + r->backward + r->recompute + r->optimizer;
    double share = fmin(1.0, fmax(0.0, compute / r->step_time));
    out->spread = share * sys->compute.efficiency_spread;
    double widen = BAND_Z * out->spread;
    out->low = r->step_time * exp(mid - hypot(mid - lo, widen));
    out->high = r->step_time * exp(mid + hypot(hi - mid, widen));
    out->rows = k;
    scope_basis(scope, &q, out->basis, sizeof out->basis);

    if (scope == SCOPE_ALL) {
        bool class_rows = false;
        for (int i = 0; i < bm->n && !class_rows; i++)
            class_rows = same_class(bm->rows[i].peak, q.peak);
        if (!class_rows)
            add_note(out, COMET_BAND_NEW_GPU,
                     "no validation row on a GPU of %.0f TFLOP/s: the band is every row's", q.peak / 1e12);
    }
    if (fitted > 0)
        add_note(out, COMET_BAND_FITTED,
                 "%d of the %d rows are ones a preset was fit to: comet's error on new runs is "
                 "likely wider", fitted, k);
    if (k < COMET_BAND_MIN_ROWS)
        add_note(out, COMET_BAND_FEW_ROWS, "only %d validation rows: the band is a rough one", k);
    check_range(out, COMET_BAND_SCALE, (double)r->npus, npus_lo, npus_hi, "NPUs", 1.0, "");
    check_range(out, COMET_BAND_MODEL_SIZE, r->params, par_lo, par_hi, "parameters", 1e9, " B");
    if (m->kind == COMET_MODEL_TRANSFORMER)
        check_range(out, COMET_BAND_SEQUENCE, (double)m->seq, seq_lo, seq_hi, "sequence", 1.0, "");
    if (is_moe(m) && !any_moe)
        add_note(out, COMET_BAND_MOE, "a mixture-of-experts model: none of the band's rows is one");
}
