/* Uncertainty bands (include/comet/band.h): the band's closed form on
 * synthetic validation rows whose ratios are known (quantiles, the
 * widening by the kernel-rate spread), the choice of rows (system and
 * framework, system, GPU class, all), the notes for queries outside the
 * rows, and on the built-in tables a leave-one-out check that the bands
 * cover about as many measurements as they claim. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/band.h"
#include "comet/comet.h"
#include "tests.h"

/* A synthetic table and its report: row i on `system` (peak `peak`),
 * framework fw, predicted 1 s and measured exp(ratio[i]) s. */
typedef struct synth {
    comet_validation_table table;
    comet_validation_report report;
} synth;

static void synth_init(synth *s, int n)
{
    memset(s, 0, sizeof *s);
    s->table.rows = calloc((size_t)n, sizeof *s->table.rows);
    s->report.rows = calloc((size_t)n, sizeof *s->report.rows);
    assert_non_null(s->table.rows);
    assert_non_null(s->report.rows);
}

static void synth_row(synth *s, const char *system, double peak, comet_framework fw,
                      double log_ratio, int64_t npus, double params, int64_t seq)
{
    int i = s->table.n_rows++;
    s->report.n_rows = s->table.n_rows;
    comet_validation_row *row = &s->table.rows[i];
    snprintf(row->id, sizeof row->id, "r%d", i);
    comet_job_init(&row->job);
    snprintf(row->job.system.name, sizeof row->job.system.name, "%s", system);
    row->job.system.compute.matrix_flops[COMET_DTYPE_BF16] = peak;
    row->job.model.kind = COMET_MODEL_TRANSFORMER;
    row->job.model.seq = seq;
    comet_validation_result *x = &s->report.rows[i];
    x->status = COMET_VALIDATION_OK;
    x->framework = fw;
    x->npus = npus;
    x->predicted_step = 1.0;
    x->measured_step = exp(log_ratio);
    x->result.params = params;
}

static comet_band_model *synth_model(synth *s)
{
    const comet_validation_table *t = &s->table;
    const comet_validation_report *r = &s->report;
    comet_band_model *bm;
    comet_error err;
    assert_int_equal(comet_band_model_new(&t, &r, 1, &bm, &err), COMET_OK);
    return bm;
}

static void synth_free(synth *s)
{
    free(s->table.rows);
    free(s->report.rows);
}

/* A query on `system` (peak), framework fw, predicted step 10 s of which
 * compute takes `compute` s. */
typedef struct query {
    comet_model model;
    comet_system system;
    comet_strategy strategy;
    comet_result result;
} query;

static void query_init(query *q, const char *system, double peak, comet_framework fw,
                       double compute, int64_t npus, double params, int64_t seq)
{
    memset(q, 0, sizeof *q);
    snprintf(q->system.name, sizeof q->system.name, "%s", system);
    q->system.compute.matrix_flops[COMET_DTYPE_BF16] = peak;
    q->model.kind = COMET_MODEL_TRANSFORMER;
    q->model.seq = seq;
    q->strategy.framework = fw;
    q->result.step_time = 10.0;
    q->result.forward = compute;
    q->result.npus = npus;
    q->result.params = params;
}

/* Ten rows with ln ratios 0.00 .. 0.09: the 10th, 50th and 90th
 * percentiles are 0.009, 0.045 and 0.081 (linear between ranks). */
static void test_band_quantiles_and_spread(void **state)
{
    (void)state;
    synth s;
    synth_init(&s, 10);
    for (int i = 0; i < 10; i++)
        synth_row(&s, "sys-a", 989e12, COMET_FRAMEWORK_MEGATRON, 0.01 * i, 64, 70e9, 4096);
    comet_band_model *bm = synth_model(&s);
    assert_int_equal(comet_band_model_rows(bm), 10);
    query q;
    query_init(&q, "sys-a", 989e12, COMET_FRAMEWORK_MEGATRON, 8.0, 64, 70e9, 4096);
    comet_band b;
    comet_band_for(bm, &q.model, &q.system, &q.strategy, &q.result, &b);
    assert_int_equal(b.rows, 10);
    assert_close(b.low, 10.0 * exp(0.009), 1e-12);
    assert_close(b.high, 10.0 * exp(0.081), 1e-12);
    assert_close(b.level, 0.8, 1e-15);
    assert_string_equal(b.basis, "sys-a, megatron");
    assert_int_equal(b.flags, 0u);
    assert_int_equal(b.n_notes, 0);

    /* a kernel-rate spread of 10 % on a step whose compute is 80 %: each
     * side widens in quadrature by z(0.9) * 0.08 */
    q.system.compute.efficiency_spread = 0.10;
    comet_band_for(bm, &q.model, &q.system, &q.strategy, &q.result, &b);
    double z = 1.2815515655446004, w = z * 0.08;
    assert_close(b.spread, 0.08, 1e-12);
    assert_close(b.low, 10.0 * exp(0.045 - hypot(0.036, w)), 1e-12);
    assert_close(b.high, 10.0 * exp(0.045 + hypot(0.036, w)), 1e-12);
    comet_band_model_free(bm);
    synth_free(&s);
}

/* Rows: 8 on sys-a megatron (ratio 0), 8 on sys-a fsdp (ln 0.5), 8 on
 * sys-b (the same peak, megatron, ln 0.2), 8 on sys-c (another peak,
 * ln -0.3). */
static void mixed_rows(synth *s)
{
    synth_init(s, 32);
    for (int i = 0; i < 8; i++) {
        synth_row(s, "sys-a", 989e12, COMET_FRAMEWORK_MEGATRON, 0.0, 64, 70e9, 4096);
        synth_row(s, "sys-a", 989e12, COMET_FRAMEWORK_FSDP, 0.5, 64, 70e9, 4096);
        synth_row(s, "sys-b", 989e12 * 1.02, COMET_FRAMEWORK_MEGATRON, 0.2, 64, 70e9, 4096);
        synth_row(s, "sys-c", 312e12, COMET_FRAMEWORK_MEGATRON, -0.3, 64, 70e9, 4096);
    }
}

/* The band of a query with 10 s predicted, all compute, on 64 NPUs, 70 B
 * parameters, sequence 4096: inside every synthetic row's range. */
static comet_band band_of(const comet_band_model *bm, const char *system, double peak,
                          comet_framework fw)
{
    query q;
    query_init(&q, system, peak, fw, 10.0, 64, 70e9, 4096);
    comet_band b;
    comet_band_for(bm, &q.model, &q.system, &q.strategy, &q.result, &b);
    return b;
}

static void expect_band(const comet_band *b, int rows, const char *basis, double log_lo,
                        double log_hi)
{
    assert_int_equal(b->rows, rows);
    assert_string_equal(b->basis, basis);
    assert_close(b->low, 10.0 * exp(log_lo), 1e-12);
    assert_close(b->high, 10.0 * exp(log_hi), 1e-12);
}

static void test_band_scope(void **state)
{
    (void)state;
    synth s;
    mixed_rows(&s);
    comet_band_model *bm = synth_model(&s);
    /* the system's own rows of its framework */
    comet_band b = band_of(bm, "sys-a", 989e12, COMET_FRAMEWORK_FSDP);
    expect_band(&b, 8, "sys-a, fsdp", 0.5, 0.5);
    /* a framework the system has no rows of: every row of the system */
    b = band_of(bm, "sys-a", 989e12, COMET_FRAMEWORK_IDEAL);
    expect_band(&b, 16, "sys-a, every framework", 0.0, 0.5);
    /* a system without rows on a GPU of the same class: that class's
     * rows of its framework (sys-a and sys-b megatron) */
    b = band_of(bm, "sys-d", 989e12, COMET_FRAMEWORK_MEGATRON);
    expect_band(&b, 16, "GPUs of 989 TFLOP/s, megatron", 0.0, 0.2);
    assert_int_equal(b.flags & COMET_BAND_NEW_GPU, 0u);
    /* a new GPU: every row, and a note saying so */
    b = band_of(bm, "sys-e", 2250e12, COMET_FRAMEWORK_MEGATRON);
    expect_band(&b, 32, "every validation row", -0.3, 0.5);
    assert_true(b.flags & COMET_BAND_NEW_GPU);
    assert_int_equal(b.n_notes, 1);
    assert_non_null(strstr(b.notes[0], "no validation row on a GPU of 2250 TFLOP/s"));
    comet_band_model_free(bm);
    synth_free(&s);
}

static void test_band_notes(void **state)
{
    (void)state;
    synth s;
    synth_init(&s, 8);
    for (int i = 0; i < 8; i++)
        synth_row(&s, "sys-a", 989e12, COMET_FRAMEWORK_MEGATRON, 0.0, 8 << i, 7e9 * (i + 1),
                  2048 * (1 + i % 2));
    s.table.rows[0].fitted = true;
    comet_band_model *bm = synth_model(&s);
    query q;
    comet_band b;
    /* inside: 8..1024 NPUs, 7..56 B parameters, sequence 2048..4096 */
    query_init(&q, "sys-a", 989e12, COMET_FRAMEWORK_MEGATRON, 10.0, 2048, 3.5e9, 8192);
    comet_band_for(bm, &q.model, &q.system, &q.strategy, &q.result, &b);
    assert_int_equal(b.flags, (unsigned)COMET_BAND_FITTED);
    assert_non_null(strstr(b.notes[0], "1 of the 8 rows are ones a preset was fit to"));
    /* outside on each, and an MoE model none of the rows is */
    query_init(&q, "sys-a", 989e12, COMET_FRAMEWORK_MEGATRON, 10.0, 2049, 3.4e9, 8193);
    q.model.moe.experts = 8;
    comet_band_for(bm, &q.model, &q.system, &q.strategy, &q.result, &b);
    assert_int_equal(b.flags, (unsigned)(COMET_BAND_FITTED | COMET_BAND_SCALE |
                                         COMET_BAND_MODEL_SIZE | COMET_BAND_SEQUENCE |
                                         COMET_BAND_MOE));
    assert_int_equal(b.n_notes, COMET_BAND_MAX_NOTES); /* the MoE note's flag, not its line */
    assert_non_null(strstr(b.notes[1], "NPUs 2049: outside the band's rows, which span 8 to 1024"));
    assert_non_null(strstr(b.notes[2], "parameters 3.4 B: outside"));
    assert_non_null(strstr(b.notes[3], "sequence 8193: outside"));
    /* no prediction, no band */
    q.result.step_time = 0.0;
    comet_band_for(bm, &q.model, &q.system, &q.strategy, &q.result, &b);
    assert_true(b.low == 0.0 && b.high == 0.0);
    assert_true(b.flags & COMET_BAND_NO_PREDICTION);
    assert_string_equal(b.basis, "no prediction");
    comet_band_model_free(bm);
    synth_free(&s);
}

/* The built-in tables: every row that fits is in the model (and only
 * those), and each
 * Hopper row's band, drawn from the other rows (leave one out), holds its
 * measurement about as often as an 80 % band should. Today 32 of 40 rows
 * (80 %); bounds: at least 60 % and at most 95 %, so bands that shrink to
 * overconfidence or blow up to uselessness both fail. */
static void test_band_builtin_coverage(void **state)
{
    (void)state;
    comet_error err;
    comet_validation_table *t;
    comet_validation_report r;
    assert_int_equal(comet_validation_preset("hopper", &t, &err), COMET_OK);
    assert_int_equal(comet_validate(t, &r, &err), COMET_OK);
    comet_validation_table *k;
    comet_validation_report kr;
    assert_int_equal(comet_validation_preset("korthikanti2022", &k, &err), COMET_OK);
    assert_int_equal(comet_validate(k, &kr, &err), COMET_OK);
    comet_validation_table *h;
    comet_validation_report hr;
    assert_int_equal(comet_validation_preset("h200-steps", &h, &err), COMET_OK);
    assert_int_equal(comet_validate(h, &hr, &err), COMET_OK);
    const comet_validation_table *tables[3] = {t, k, h};
    const comet_validation_report *every[3] = {&r, &kr, &hr};
    comet_band_model *all;
    assert_int_equal(comet_band_model_new(tables, every, 3, &all, &err), COMET_OK);
    assert_int_equal(comet_band_model_rows(all),
                     r.overall.ok + kr.overall.ok + hr.overall.ok);
    comet_band_model_free(all);

    int inside = 0, n = 0;
    for (int i = 0; i < r.n_rows; i++) {
        if (r.rows[i].status != COMET_VALIDATION_OK)
            continue;
        comet_validation_status keep = r.rows[i].status;
        r.rows[i].status = COMET_VALIDATION_REFUSED; /* left out of the model */
        const comet_validation_report *reports[3] = {&r, &kr, &hr};
        comet_band_model *bm;
        assert_int_equal(comet_band_model_new(tables, reports, 3, &bm, &err), COMET_OK);
        r.rows[i].status = keep;
        const comet_job *j = &t->rows[i].job;
        comet_band b;
        comet_band_for(bm, &j->model, &j->system, &j->strategy, &r.rows[i].result, &b);
        assert_true(b.low > 0.0 && b.low <= b.high);
        n++;
        inside += r.rows[i].measured_step >= b.low && r.rows[i].measured_step <= b.high;
        comet_band_model_free(bm);
    }
    printf("  leave-one-out: %d of %d Hopper measurements inside their 80 %% band (%.0f %%)\n",
           inside, n, 100.0 * inside / n);
    assert_int_equal(n, 40);
    assert_true(inside >= (int)(0.60 * n) && inside <= (int)(0.95 * n));
    comet_validation_report_free(&hr);
    comet_validation_free(h);
    comet_validation_report_free(&kr);
    comet_validation_free(k);
    comet_validation_report_free(&r);
    comet_validation_free(t);
}

void suite_band(test_tally *t)
{
    const struct CMUnitTest band[] = {
        cmocka_unit_test(test_band_quantiles_and_spread),
        cmocka_unit_test(test_band_scope),
        cmocka_unit_test(test_band_notes),
        cmocka_unit_test(test_band_builtin_coverage),
    };
    RUN_GROUP(t, band);
}
