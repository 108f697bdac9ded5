/* comet study: the methodology's monotonic facts (more HBM never makes the
 * best strategy slower, more network bandwidth never does, nor a less
 * oversubscribed tree, an expansion tier with no bandwidth never helps),
 * the findings and conclusions on a small study, how far an
 * oversubscription axis goes within 5 % on rows worked by hand, and the
 * default and oversubscription-h100 studies' printed summaries against
 * golden files (tests/golden/study-*.txt; COMET_UPDATE_GOLDEN=1 rewrites
 * them after a deliberate change). */
#define _XOPEN_SOURCE 700 /* mkdtemp, realpath */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "comet/comet.h"
#include "comet/methodology.h"
#include "comet/report.h"
#include "comet/results.h"
#include "comet/sweep.h"
#include "tests.h"

/* The best step time of every point of a one-axis study, in axis order
 * (INFINITY where nothing fits). */
static int best_times(const char *text, double *out, int cap)
{
    static comet_study st;
    comet_error err;
    if (comet_study_read_text(text, strlen(text), "mono.yaml", &st, &err))
        fail_msg("%s", err.message);
    int n = (int)comet_study_points(&st);
    assert_true(n <= cap);
    for (int i = 0; i < n; i++) {
        comet_sweep_row row;
        assert_int_equal(comet_sweep_point(&st, (uint64_t)i, &row, &err), COMET_OK);
        out[i] = row.status == COMET_POINT_OK ? row.best.result.step_time : INFINITY;
    }
    return n;
}

static void expect_non_increasing(const char *what, const double *t, int n)
{
    int fits = 0;
    for (int i = 0; i < n; i++) {
        fits += isfinite(t[i]);
        if (i > 0 && t[i] > t[i - 1] * (1.0 + 1e-12))
            fail_msg("%s: step %d is slower (%.6g s) than step %d (%.6g s)", what, i, t[i],
                     i - 1, t[i - 1]);
    }
    assert_true(fits >= 2); /* the fact is tested on designs that fit */
}

static void test_more_hbm_never_slower(void **state)
{
    (void)state;
    double t[16];
    int n = best_times("study:\n  name: hbm\n  models: [gpt3-175b]\n  system: a100-80g-selene\n"
                       "  npus: 64\n  global_batch: 64\n  axes:\n"
                       "    hbm_capacity: [\"24 GiB\", \"32 GiB\", \"40 GiB\", \"64 GiB\", "
                       "\"80 GiB\", \"160 GiB\"]\n"
                       "  search: {max_microbatch: 4}\n",
                       t, 16);
    assert_int_equal(n, 6);
    expect_non_increasing("hbm_capacity", t, n);
    assert_true(t[5] < t[1]); /* and it does help somewhere */
}

static void test_more_bandwidth_never_slower(void **state)
{
    (void)state;
    double t[16];
    int n = best_times("study:\n  name: bw\n  models: [megatron-22b]\n  system: a100-80g-selene\n"
                       "  npus: 64\n  global_batch: 64\n  axes:\n    network:\n      infiniband:\n"
                       "        bandwidth: [\"3 GB/s\", \"6.25 GB/s\", \"12.5 GB/s\", \"25 GB/s\", "
                       "\"50 GB/s\", \"100 GB/s\"]\n"
                       "  search: {max_microbatch: 4}\n",
                       t, 16);
    expect_non_increasing("network.infiniband.bandwidth", t, n);
    n = best_times("study:\n  name: nv\n  models: [megatron-22b]\n  system: a100-80g-selene\n"
                   "  npus: 64\n  global_batch: 64\n  axes:\n    network:\n      nvlink:\n"
                   "        bandwidth: [\"50 GB/s\", \"150 GB/s\", \"300 GB/s\", \"900 GB/s\"]\n"
                   "  search: {max_microbatch: 4}\n",
                   t, 16);
    expect_non_increasing("network.nvlink.bandwidth", t, n);
    assert_true(t[n - 1] < t[0]);
}

/* Fewer uplinks never speed the best strategy up: a 3-tier fat tree of
 * 8-port switches from 16:1 down to 1:1, halving-doubling on it so that
 * the uplinks bind, and at 16:1 they do. */
static void test_less_oversubscription_never_slower(void **state)
{
    (void)state;
    double t[16];
    int n = best_times("study:\n  name: os\n  models: [megatron-22b]\n  npus: 128\n"
                       "  global_batch: 128\n  system:\n    preset: a100-80g-selene\n"
                       "    network:\n      - {name: node, size: 8, bandwidth: 300 GB/s}\n"
                       "      - {name: ib, size: auto, topology: fat_tree, tiers: 3, radix: 8,\n"
                       "         algorithm: halving_doubling, bandwidth: 25 GB/s}\n"
                       "  axes:\n    network:\n      ib:\n"
                       "        oversubscription: [16, 8, 4, 2, 1.5, 1]\n"
                       "  search: {max_microbatch: 4}\n",
                       t, 16);
    assert_int_equal(n, 6);
    expect_non_increasing("network.ib.oversubscription", t, n);
    assert_true(t[n - 1] < t[0]);
}

/* How far a network can be oversubscribed, from rows worked by hand: two
 * bandwidths x four ratios (listed out of order) for three models; a ratio
 * is within 5 % when every design's step at it is, and so is every ratio
 * below it. */
static void test_headroom(void **state)
{
    (void)state;
    /* model, then bandwidth (25, 50 GB/s), then ratio (1, 4, 2, 8) */
    static const double step[3][2][4] = {
        {{10.0, 10.4, 10.1, 11.0}, {8.0, 8.5, 8.2, 9.0}}, /* 2:1 +2.5 %, 4:1 +6.25 % */
        {{5.0, 5.1, 5.0, 0.0}, {4.0, 4.0, 4.0, 4.0}},     /* 4:1 +2 %, 8:1 no longer fits */
        {{0.0, 3.0, 3.0, 3.0}, {0.0, 3.0, 3.0, 3.0}},     /* nothing fits at 1:1 */
    };
    static const double ratio[4] = {1, 4, 2, 8}, cost[4] = {100, 80, 90, 70};
    static const char *const models[3] = {"m1", "m2", "m3"};
    comet_buf csv;
    comet_buf_init(&csv);
    comet_buf_printf(&csv, "index,status,design_cost,network.ib.bandwidth,"
                           "network.ib.oversubscription,npus,model,step_time_s,tokens_per_s,"
                           "hbm_total_bytes\n");
    for (int m = 0, i = 0; m < 3; m++)
        for (int b = 0; b < 2; b++)
            for (int o = 0; o < 4; o++, i++)
                comet_buf_printf(&csv, "%d,%s,%g,%g,%g,64,%s,%g,1,1\n", i,
                                 step[m][b][o] > 0.0 ? "ok" : "no_fit", cost[o], 25e9 * (b + 1),
                                 ratio[o], models[m], step[m][b][o]);
    static comet_results r;
    comet_error err;
    assert_int_equal(comet_results_parse(csv.data, csv.len, "h.csv", &r, &err), COMET_OK);
    assert_string_equal(r.problem, "");
    assert_int_equal(r.study.axes[1].kind, COMET_AXIS_DIM_OVERSUBSCRIPTION);
    comet_headroom h;
    comet_results_headroom(&r, 0, 1, 0.05, &h);
    assert_int_equal(h.base_slot, 0);
    assert_int_equal(h.slot, 2);                   /* 2:1 */
    assert_close(h.slowdown, 8.2 / 8.0, 1e-15);    /* the worse of 10.1 / 10 and 8.2 / 8 */
    assert_int_equal(h.base->index, 4);
    assert_int_equal(h.at->index, 6);
    assert_int_equal(h.past_slot, 1);              /* 4:1 */
    assert_close(h.past_slowdown, 8.5 / 8.0, 1e-15);
    comet_buf line;
    comet_buf_init(&line);
    comet_headroom_text(&line, &r, &h);
    assert_string_equal(line.data, "ib oversubscription: up to 2:1 within 5 % of 1:1 (step "
                                   "8.20 s vs 8.00 s, +2.5 %; design $90.0 vs $100); 4:1 is "
                                   "+6.2 %");
    /* a wider tolerance takes every ratio up to 8:1, which is past 10 % */
    comet_results_headroom(&r, 0, 1, 0.10, &h);
    assert_int_equal(h.slot, 1);
    assert_int_equal(h.past_slot, 3);
    comet_results_headroom(&r, 1, 1, 0.05, &h);
    assert_int_equal(h.slot, 1);                   /* 4:1, +2 % */
    assert_close(h.slowdown, 1.02, 1e-15);
    assert_int_equal(h.past_slot, 3);
    assert_true(isinf(h.past_slowdown));
    comet_buf_free(&line);
    comet_buf_init(&line);
    comet_headroom_text(&line, &r, &h);
    assert_non_null(strstr(line.data, "; at 8:1 a design no longer fits"));
    comet_results_headroom(&r, 2, 1, 0.05, &h);
    assert_int_equal(h.slot, -1);
    comet_buf_free(&line);
    comet_buf_init(&line);
    comet_headroom_text(&line, &r, &h);
    assert_string_equal(line.data, "ib oversubscription: no design fits at 1:1");
    /* the sweep summary's lines, one per model */
    comet_buf_free(&line);
    comet_buf_init(&line);
    comet_headroom_summary(&line, &r);
    assert_non_null(strstr(line.data, "  m1: ib oversubscription: up to 2:1"));
    assert_non_null(strstr(line.data, "\n  m3: ib oversubscription: no design fits at 1:1\n"));
    /* no such axis: nothing */
    comet_results_headroom(&r, 0, -1, 0.05, &h);
    assert_int_equal(h.axis, -1);
    comet_buf_free(&line);
    comet_buf_free(&csv);
    comet_results_free(&r);
}

/* A tier that cannot move a byte cannot make anything faster. */
static void test_zero_bandwidth_expansion_never_helps(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_error err;
    assert_int_equal(comet_preset_model("gpt3-175b", &m, &err), COMET_OK);
    assert_int_equal(comet_preset_system("a100-80g-selene", &sys, &err), COMET_OK);
    sys.hbm.capacity = 40.0 * 1073741824.0; /* tight, so an expansion tier would matter */
    comet_search_request req;
    memset(&req, 0, sizeof req);
    req.model = &m;
    req.system = &sys;
    comet_search_space_defaults(&req.space);
    req.space.npus = 64;
    req.space.global_batch = 64;
    req.space.max_microbatch = 4;
    req.top_k = 1;
    req.shards = 1;
    comet_ranked without, with_zero, with_some;
    int n;
    comet_search_stats st0, st1, st2;
    sys.expansion.present = false;
    assert_int_equal(comet_search(&req, &without, &n, &st0, &err), COMET_OK);
    bool fits_without = n == 1;
    sys.expansion = (comet_mem_tier){.present = true, .capacity = 512.0 * 1073741824.0,
                                     .bandwidth = 0.0, .efficiency = 1.0};
    assert_int_equal(comet_search(&req, &with_zero, &n, &st1, &err), COMET_OK);
    /* nothing more fits, and nothing is faster */
    assert_int_equal(st1.feasible, st0.feasible);
    if (fits_without)
        assert_true(with_zero.result.step_time >= without.result.step_time * (1.0 - 1e-12));
    else
        assert_int_equal(n, 0);
    /* the same tier with bandwidth does help here: the test can tell */
    sys.expansion.bandwidth = 64e9;
    assert_int_equal(comet_search(&req, &with_some, &n, &st2, &err), COMET_OK);
    assert_int_equal(n, 1);
    assert_true(st2.feasible > st0.feasible);
}

/* Steps 1-3 and 5 on a small study with an expansion axis. */
static void test_findings_and_conclusions(void **state)
{
    (void)state;
    static const char text[] =
        "study:\n  name: small\n  models: [gpt3-175b]\n  system: a100-80g-selene\n"
        "  npus: 64\n  global_batch: 64\n  axes:\n"
        "    hbm_capacity: [\"40 GiB\", \"80 GiB\"]\n"
        "    expansion_capacity: [none, \"256 GiB\"]\n"
        "    expansion_bandwidth: [\"64 GB/s\"]\n"
        "  search: {max_microbatch: 4}\n";
    static comet_study st;
    comet_error err;
    assert_int_equal(comet_study_read_text(text, strlen(text), "s.yaml", &st, &err), COMET_OK);
    static comet_findings f;
    assert_int_equal(comet_study_findings(&st, 0, 2, &f, &err), COMET_OK);
    /* 1: the whole model's state: 2 bytes of weights per parameter */
    assert_close(f.state_bytes[0], 2.0 * f.params, 1e-9);
    assert_close(f.tokens_per_step, 64.0 * 2048.0, 1e-9);
    assert_true(f.n_by_tp >= 2);
    for (int i = 1; i < f.n_by_tp; i++)
        assert_true(f.by_tp[i].strategy.tp > f.by_tp[i - 1].strategy.tp);
    /* 2: the best beats the worst, which the stats kept */
    assert_true(f.has_best && f.space.has_worst);
    assert_true(f.space.worst.result.step_time > f.best.result.step_time);
    assert_int_equal(f.space.worst.result.feasible, 1);
    /* 3: the tier comes from the axes; it never shrinks what fits */
    assert_true(f.expansion_tried);
    assert_close(f.expansion_capacity, 256.0 * 1073741824.0, 0.0);
    assert_close(f.expansion_bandwidth, 64e9, 0.0);
    assert_true(f.with_expansion.feasible >= f.hbm_only.feasible);

    /* 5: from the sweep's rows */
    comet_buf csv;
    comet_buf_init(&csv);
    comet_sweep_csv_header(&csv, &st);
    for (uint64_t i = 0; i < comet_study_points(&st); i++) {
        comet_sweep_row row;
        assert_int_equal(comet_sweep_point(&st, i, &row, &err), COMET_OK);
        comet_sweep_csv_row(&csv, &st, &row);
    }
    static comet_results r;
    assert_int_equal(comet_results_parse(csv.data, csv.len, "r.csv", &r, &err), COMET_OK);
    comet_conclusions c;
    comet_study_conclude(&r, 0, &c);
    assert_int_equal(c.designs, 4);
    assert_non_null(c.fastest);
    assert_close(c.spread, c.slowest->result.step_time / c.fastest->result.step_time, 1e-12);
    /* two designs have the tier; each is paired with its twin without it */
    assert_int_equal(c.expansion_pairs, 2);
    assert_true(c.expansion_best_speedup >= 1.0);
    for (size_t i = 0; i < r.n_rows; i++)
        if (r.rows[i].status == COMET_POINT_OK)
            assert_true(r.rows[i].result.step_time >= c.fastest->result.step_time);
    comet_buf page;
    comet_buf_init(&page);
    comet_page *p = comet_page_new("study");
    /* the best strategy's band, as the CLI passes it (include/comet/band.h) */
    comet_band band = {.step_time = 1.5, .low = 1.25, .high = 2.0, .level = 0.8, .rows = 9};
    snprintf(band.basis, sizeof band.basis, "a100-80g-selene, megatron");
    comet_report_page_study(p, &st, &f, &c, 1, &r, NULL, &band);
    comet_page_html(&page, p);
    assert_non_null(strstr(page.data, "80 % band 1.250 to 2.000 s, from 9 validation rows "
                                      "(a100-80g-selene, megatron)"));
    assert_non_null(strstr(page.data, "1. Workload: gpt3-175b"));
    assert_non_null(strstr(page.data, "5. Recommendation for gpt3-175b"));
    assert_non_null(strstr(page.data, "chart-heatmap"));
    comet_page_free(p);
    comet_buf_free(&page);
    comet_buf_free(&csv);
    comet_results_free(&r);
}

/* A built-in study (NULL: the default one), end to end through the
 * binary, into a fresh directory: its printed summary, less the last line
 * (the report's path), against the golden file; the directory is left
 * for the caller (rm -rf dir when done). */
static void study_golden(const char *name, const char *golden, char *dir)
{
    char bin[4096], cmd[8400];
    assert_non_null(mkdtemp(dir));
    const char *b = getenv("COMET_BIN");
    assert_non_null(realpath(b ? b : "build/comet", bin));
    snprintf(cmd, sizeof cmd, "cd %s && %s study %s -o out --quiet > stdout.txt 2> stderr.txt",
             dir, bin, name ? name : "");
    assert_int_equal(system(cmd), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/out/summary.txt", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char got[16384];
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    /* the last line names the report, whose path depends on the run */
    char *report = strstr(got, "report: ");
    assert_non_null(report);
    *report = '\0';
    int lines = 0;
    for (const char *p = got; *p; p++)
        lines += *p == '\n';
    assert_true(lines + 1 <= 30);
    test_golden(golden, got);
}

static void remove_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* The default study against its golden summary. It takes about a minute,
 * so the sanitizer run leaves it to the release run. */
static void test_default_study_golden(void **state)
{
    (void)state;
    if (getenv("COMET_SANITIZED")) {
        TEST_SKIP("the default study's golden summary runs in the release build only (about a "
                  "minute there)");
    }
    char dir[] = "/tmp/comet-study-XXXXXX";
    study_golden(NULL, "study-transformer-1t.txt", dir);
    remove_dir(dir);
}

/* The oversubscription-h100 study (docs/study.md) answers its question:
 * GPT-3 175B keeps its best step within 5 % of the non-blocking tree's up
 * to 2:1 (+4.2 %: its interleaved pipeline's sends cross the leaves'
 * uplinks all at once; 3:1 is 6.2 % slower, its best strategy moving to
 * 16 pipeline stages), Llama 3 405B to 8:1 (+2.7 %; 12:1 +6.0 %, DualPipe
 * from 8:1, its F&B hiding the pipeline sends the uplinks slow); the
 * summary, with those lines, against its golden file (about 2 s). */
static void test_oversubscription_study(void **state)
{
    (void)state;
    char dir[] = "/tmp/comet-study-XXXXXX";
    study_golden("oversubscription-h100", "study-oversubscription-h100.txt", dir);
    char path[512];
    snprintf(path, sizeof path, "%s/out/results.csv", dir);
    static comet_results r;
    comet_error err;
    assert_int_equal(comet_results_read(path, &r, &err), COMET_OK);
    assert_int_equal(r.n_rows, 18);
    assert_int_equal(r.study.n_axes, 1);
    const comet_axis *ax = &r.study.axes[0];
    assert_int_equal(ax->kind, COMET_AXIS_DIM_OVERSUBSCRIPTION);
    comet_headroom h;
    comet_results_headroom(&r, 0, 0, COMET_HEADROOM_TOLERANCE, &h);
    assert_string_equal(r.study.models[0].name, "gpt3-175b");
    assert_close(ax->values[h.base_slot], 1.0, 0.0);
    assert_close(ax->values[h.slot], 2.0, 0.0);
    assert_close(h.slowdown, 1.042, 0.001);
    assert_close(ax->values[h.past_slot], 3.0, 0.0);
    assert_close(h.past_slowdown, 1.062, 0.001);
    assert_true(h.at->cost < h.base->cost);
    assert_int_equal(h.at->strategy.pp, h.base->strategy.pp);
    assert_int_equal(r.rows[3].strategy.pp, 16); /* 3:1 */
    comet_results_headroom(&r, 1, 0, COMET_HEADROOM_TOLERANCE, &h);
    assert_string_equal(r.study.models[1].name, "llama3-405b");
    assert_close(ax->values[h.slot], 8.0, 0.0);
    assert_close(ax->values[h.past_slot], 12.0, 0.0);
    assert_close(h.slowdown, 1.027, 0.001);
    assert_close(h.past_slowdown, 1.060, 0.001);
    comet_results_free(&r);
    remove_dir(dir);
}

void suite_study(test_tally *t)
{
    const struct CMUnitTest study[] = {
        cmocka_unit_test(test_more_hbm_never_slower),
        cmocka_unit_test(test_more_bandwidth_never_slower),
        cmocka_unit_test(test_zero_bandwidth_expansion_never_helps),
        cmocka_unit_test(test_less_oversubscription_never_slower),
        cmocka_unit_test(test_headroom),
        cmocka_unit_test(test_findings_and_conclusions),
        cmocka_unit_test(test_default_study_golden),
        cmocka_unit_test(test_oversubscription_study),
    };
    RUN_GROUP(t, study);
}
