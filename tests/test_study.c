/* comet study: the methodology's monotonic facts (more HBM never makes the
 * best strategy slower, more network bandwidth never does, an expansion
 * tier with no bandwidth never helps), the findings and conclusions on a
 * small study, and the default study's printed summary against a golden
 * file (tests/golden/study-transformer-1t.txt; COMET_UPDATE_GOLDEN=1
 * rewrites it after a deliberate change). */
#define _XOPEN_SOURCE 700 /* mkdtemp, realpath */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "comet/comet.h"
#include "comet/methodology.h"
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

/* The default study, end to end through the binary, against the golden
 * summary. It takes about a minute, so the sanitizer run leaves it to
 * the release run. */
static void test_default_study_golden(void **state)
{
    (void)state;
    if (getenv("COMET_SANITIZED")) {
        TEST_SKIP("the default study's golden summary runs in the release build only (about a "
                  "minute there)");
    }
    char dir[] = "/tmp/comet-study-XXXXXX", bin[4096], cmd[8400];
    assert_non_null(mkdtemp(dir));
    const char *b = getenv("COMET_BIN");
    assert_non_null(realpath(b ? b : "build/comet", bin));
    snprintf(cmd, sizeof cmd, "cd %s && %s study -o out --quiet > stdout.txt 2> stderr.txt", dir,
             bin);
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
    test_golden("study-transformer-1t.txt", got);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

void suite_study(test_tally *t)
{
    const struct CMUnitTest study[] = {
        cmocka_unit_test(test_more_hbm_never_slower),
        cmocka_unit_test(test_more_bandwidth_never_slower),
        cmocka_unit_test(test_zero_bandwidth_expansion_never_helps),
        cmocka_unit_test(test_findings_and_conclusions),
        cmocka_unit_test(test_default_study_golden),
    };
    RUN_GROUP(t, study);
}
