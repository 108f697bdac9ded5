/* comet_allocate: the closed form where it is exact (a hierarchical
 * all-reduce, not overlapped, one chunk: the step is T0 + a0/b0 + a1/b1),
 * with bandwidth and with dollar budgets; a dimension with no traffic
 * keeps its minimum; a larger budget never gives a slower answer; the two
 * objectives part where costs differ; whole links against brute force,
 * both the exhaustive and the local-search path; searched strategies;
 * the reader's one-line errors with file:line:column and key; the
 * outputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comet/allocate.h"
#include "comet/report.h"
#include "tests.h"
#include "toy.h"

/* The toy on two dimensions of 2 NPUs each, data parallel 4 over both,
 * not overlapped, one chunk: reduce-scatter and all-gather on dim 0 move
 * S/2 each at b0, the all-reduce of S/2 on dim 1 moves S/2 at b1, so
 * a0 = S and a1 = S/2 (S: the gradient bytes). */
static void toy_problem(comet_alloc_problem *p, double budget)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "toy");
    toy_system(&p->system);
    p->system.n_dims = 2;
    p->system.dims[0].size = 2;
    p->system.dims[1] = p->system.dims[0];
    snprintf(p->system.dims[1].name, sizeof p->system.dims[1].name, "out");
    p->system.dims[1].size = 0;
    p->system.hbm.capacity = 1024.0 * COMET_GIB; /* the whole model on each NPU */
    p->budget = budget;
    p->threads = 1;
    for (int d = 0; d < 2; d++) {
        p->dims[d].min = 1e9;
        p->dims[d].cost_per_gbps = 1.0;
    }
    p->n_workloads = 1;
    comet_alloc_workload *w = &p->workloads[0];
    toy_model(&w->model);
    toy_strategy(&w->strategy);
    w->strategy.pp = 1;
    w->strategy.dp = 4;
    w->npus = 4;
    w->global_batch = w->strategy.global_batch;
    w->weight = 1.0;
    w->fixed = true;
}

static double step_at(const comet_alloc_problem *p, double b0, double b1)
{
    comet_system sys = p->system;
    sys.dims[0].bandwidth = b0;
    sys.dims[1].bandwidth = b1;
    comet_result r;
    comet_error err;
    assert_int_equal(comet_estimate(&p->workloads[0].model, &sys, &p->workloads[0].strategy, &r,
                                    &err),
                     COMET_OK);
    return r.step_time;
}

static void test_closed_form_exact(void **state)
{
    (void)state;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    toy_problem(p, 300e9);
    /* the step is T0 + a0/b0 + a1/b1 with a0 = 2 a1 */
    double t_inf = step_at(p, 1e24, 1e24);
    double a0 = (step_at(p, 100e9, 1e24) - t_inf) * 100e9;
    double a1 = (step_at(p, 1e24, 100e9) - t_inf) * 100e9;
    assert_true(a1 > 0.0);
    assert_close(a0, 2.0 * a1, 1e-9);
    assert_close(step_at(p, 37e9, 91e9), t_inf + a0 / 37e9 + a1 / 91e9, 1e-9);
    /* bandwidth budget: b_d ~ sqrt(a_d) */
    comet_error err;
    assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
    double b0 = 300e9 * sqrt(2.0) / (1.0 + sqrt(2.0));
    assert_close(r->optimum.bw[0], b0, 1e-4);
    assert_close(r->optimum.bw[1], 300e9 - b0, 1e-4);
    assert_close(r->lagrange.bw[0], b0, 1e-9);
    assert_close(r->optimum.step_time, t_inf + a0 / b0 + a1 / (300e9 - b0), 1e-9);
    assert_close(r->equal.bw[0], 150e9, 1e-9);
    assert_true(r->equal.step_time > r->optimum.step_time * (1.0 + 1e-3));
    assert_close(r->optimum.spend, 300e9, 1e-9);
    /* the wait measured on each dimension is a_d / b_d */
    assert_close(r->optimum.wait[0], a0 / r->optimum.bw[0], 1e-4);
    /* dollars at $1 and $4 per GB/s: b_d ~ sqrt(a_d / c_d), so b0 = 2 sqrt(2) b1
     * and b0 + 4 b1 = 1000 */
    p->budget_kind = COMET_ALLOC_BUDGET_DOLLARS;
    p->budget = 1000.0;
    p->dims[1].cost_per_gbps = 4.0;
    assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
    double b1 = 1000e9 / (2.0 * sqrt(2.0) + 4.0);
    assert_close(r->optimum.bw[1], b1, 1e-4);
    assert_close(r->optimum.bw[0], 2.0 * sqrt(2.0) * b1, 1e-4);
    assert_close(r->optimum.spend, 1000.0, 1e-6);
    free(p);
    free(r);
}

static void test_idle_dimension_gets_minimum(void **state)
{
    (void)state;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    toy_problem(p, 300e9);
    /* two NPUs: data parallel on dim 0 only, nothing crosses dim 1 */
    p->workloads[0].strategy.dp = 2;
    p->workloads[0].npus = 2;
    p->dims[1].min = 5e9;
    comet_error err;
    assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
    assert_close(r->optimum.bw[1], 5e9, 1e-12);
    assert_close(r->optimum.bw[0], 295e9, 1e-12);
    assert_true(r->optimum.wait[1] == 0.0);
    assert_true(r->a[1] == 0.0);
    free(p);
    free(r);
}

static const char *const selene =
    "allocate:\n"
    "  system: a100-80g-selene\n"
    "  budget: \"325 GB/s\"\n"
    "  dimensions:\n"
    "    nvlink: {min: \"25 GB/s\"}\n"
    "    infiniband: {min: \"12.5 GB/s\"}\n"
    "  workloads:\n"
    "    - model: gpt3-175b\n"
    "      npus: 1024\n"
    "      global_batch: 1536\n"
    "      strategy: {tp: 8, pp: 16, dp: 8, microbatch: 1, sp: true, recompute: selective}\n";

static void test_more_budget_never_slower(void **state)
{
    (void)state;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    comet_error err;
    assert_int_equal(comet_alloc_read_text(selene, strlen(selene), "selene.yaml", p, &err),
                     COMET_OK);
    double last = INFINITY;
    for (double b = 50e9; b <= 1600e9; b *= 2.0) {
        p->budget = b;
        assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
        assert_true(r->optimum.step_time <= last);
        /* the optimum is never worse than any of its starts */
        assert_true(r->optimum.score <= r->equal.score);
        assert_true(r->optimum.score <= r->current.score);
        assert_true(r->optimum.score <= r->lagrange.score);
        last = r->optimum.step_time;
    }
    /* the sweep's curve falls as the budget grows */
    p->budget = 325e9;
    assert_int_equal(comet_allocate(p, true, r, &err), COMET_OK);
    assert_int_equal(r->n_sweep, COMET_ALLOC_SWEEP);
    for (int i = 1; i < r->n_sweep; i++)
        assert_true(r->sweep_optimum[i] <= r->sweep_optimum[i - 1]);
    assert_close(r->sweep_optimum[3], r->optimum.step_time, 1e-12);
    free(p);
    free(r);
}

static void test_objectives_differ_with_costs(void **state)
{
    (void)state;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *time = calloc(1, sizeof *time), *value = calloc(1, sizeof *value);
    toy_problem(p, 300e9);
    p->system.cost_per_npu = 1000.0;
    p->dims[0].cost_per_gbps = 1.0;
    p->dims[1].cost_per_gbps = 40.0;
    comet_error err;
    assert_int_equal(comet_allocate(p, false, time, &err), COMET_OK);
    p->objective = COMET_ALLOC_PERF_PER_COST;
    assert_int_equal(comet_allocate(p, false, value, &err), COMET_OK);
    /* the step-time answer ignores the prices (a bandwidth budget) */
    assert_close(time->optimum.bw[0], 300e9 * sqrt(2.0) / (1.0 + sqrt(2.0)), 1e-4);
    /* performance per cost buys less of the dear dimension, and is better at it */
    assert_true(value->optimum.bw[1] < 0.8 * time->optimum.bw[1]);
    assert_true(value->optimum.step_time * value->optimum.cost <
                time->optimum.step_time * time->optimum.cost);
    assert_true(value->optimum.step_time >= time->optimum.step_time);
    free(p);
    free(time);
    free(value);
}

/* The best whole-link split by trying every one. */
static double brute_force(const comet_alloc_problem *p, double budget, int *n0, int *n1)
{
    double best = INFINITY;
    const comet_alloc_dim *a = p->dims;
    for (int64_t i = a[0].min_links; i <= a[0].max_links; i++)
        for (int64_t j = a[1].min_links; j <= a[1].max_links; j++) {
            double b0 = (double)i * a[0].link_bandwidth, b1 = (double)j * a[1].link_bandwidth;
            if (b0 + b1 > budget * (1 + 1e-9))
                continue;
            double t = step_at(p, b0, b1);
            if (t < best) {
                best = t;
                *n0 = (int)i;
                *n1 = (int)j;
            }
        }
    return best;
}

static void test_whole_links_against_brute_force(void **state)
{
    (void)state;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    comet_error err;
    /* few combinations: all tried */
    toy_problem(p, 155e9);
    p->dims[1].link_bandwidth = 12.5e9;
    p->dims[0].link_bandwidth = 25e9;
    p->dims[0].min_links = p->dims[1].min_links = 1;
    p->dims[0].max_links = 6;
    p->dims[1].max_links = 12;
    int n0 = 0, n1 = 0;
    double best = brute_force(p, 155e9, &n0, &n1);
    assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
    assert_close(r->optimum.step_time, best, 1e-12);
    assert_close(r->optimum.bw[0], n0 * 25e9, 1e-12);
    assert_close(r->optimum.bw[1], n1 * 12.5e9, 1e-12);
    assert_true(r->optimum.spend <= 155e9 * (1 + 1e-9));
    /* many: the neighbours of the continuous answer, then single links */
    toy_problem(p, 151e9);
    for (int d = 0; d < 2; d++) {
        p->dims[d].link_bandwidth = 1e9;
        p->dims[d].min_links = 1;
        p->dims[d].max_links = 150;
    }
    best = brute_force(p, 151e9, &n0, &n1);
    assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
    assert_close(r->optimum.step_time, best, 1e-12);
    assert_int_equal((int)lround(r->optimum.bw[0] / 1e9), n0);
    assert_int_equal((int)lround(r->optimum.bw[1] / 1e9), n1);
    /* performance per cost over whole links: the best step time x cost of
     * every combination, which need not spend the budget */
    toy_problem(p, 300e9);
    p->objective = COMET_ALLOC_PERF_PER_COST;
    p->system.cost_per_npu = 200.0;
    p->dims[0].cost_per_gbps = 1.0;
    p->dims[1].cost_per_gbps = 3.0;
    for (int d = 0; d < 2; d++) {
        p->dims[d].link_bandwidth = 10e9;
        p->dims[d].min_links = 1;
        p->dims[d].max_links = 30;
    }
    double best_score = INFINITY;
    for (int i = 1; i <= 30; i++)
        for (int j = 1; i + j <= 30; j++) {
            comet_system sys = p->system;
            sys.dims[0].bandwidth = i * 10e9;
            sys.dims[1].bandwidth = j * 10e9;
            sys.dims[0].cost_per_gbps = 1.0;
            sys.dims[1].cost_per_gbps = 3.0;
            double score = step_at(p, i * 10e9, j * 10e9) * comet_system_cost(&sys, 4);
            if (score < best_score) {
                best_score = score;
                n0 = i;
                n1 = j;
            }
        }
    assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
    assert_close(r->optimum.score, best_score, 1e-12);
    assert_close(r->optimum.bw[0], n0 * 10e9, 1e-12);
    assert_close(r->optimum.bw[1], n1 * 10e9, 1e-12);
    assert_true(r->optimum.spend < 300e9);
    free(p);
    free(r);
}

static void test_searched_strategy(void **state)
{
    (void)state;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *fixed = calloc(1, sizeof *fixed), *found = calloc(1, sizeof *found);
    toy_problem(p, 300e9);
    comet_error err;
    assert_int_equal(comet_allocate(p, false, fixed, &err), COMET_OK);
    p->workloads[0].fixed = false;
    comet_strategy_defaults(&p->workloads[0].strategy);
    p->workloads[0].strategy.global_batch = p->workloads[0].global_batch;
    assert_int_equal(comet_allocate(p, false, found, &err), COMET_OK);
    assert_true(found->rounds >= 1);
    assert_true(found->optimum.feasible);
    assert_true(found->optimum.step_time <= fixed->optimum.step_time);
    assert_int_equal(comet_strategy_npus(&found->optimum.strategy[0]), 4);
    free(p);
    free(fixed);
    free(found);
}

/* A searched strategy on a real model: the search prices hundreds of
 * thousands of points, which must not eat the refinement's own bound; at
 * an interior optimum one more GB/s is worth about as much on either
 * dimension (equal marginals, the Lagrange condition). */
static void test_searched_optimum_balances_marginals(void **state)
{
    (void)state;
    static const char *const text =
        "allocate:\n"
        "  system: a100-80g-selene\n"
        "  budget: \"325 GB/s\"\n"
        "  dimensions:\n"
        "    nvlink: {min: \"25 GB/s\"}\n"
        "    infiniband: {min: \"12.5 GB/s\", max: \"200 GB/s\"}\n"
        "  workloads:\n"
        "    - {model: gpt3-175b, npus: 1024, global_batch: 1536,\n"
        "       strategy: {tp: 8, pp: 16, dp: 8, microbatch: 1, sp: true, recompute: selective}}\n"
        "    - {model: llama2-70b, npus: 512, global_batch: 1024}\n";
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    comet_error err;
    assert_int_equal(comet_alloc_read_text(text, strlen(text), "mixed.yaml", p, &err), COMET_OK);
    p->threads = 2;
    assert_int_equal(comet_allocate(p, false, r, &err), COMET_OK);
    assert_true(r->evaluations > COMET_ALLOC_MAX_EVALS);
    assert_true(r->rounds >= 1);
    assert_true(r->optimum.bw[1] > 12.5e9 && r->optimum.bw[1] < 200e9);
    assert_close(r->marginal[0], r->marginal[1], 0.2);
    assert_true(r->optimum.score < r->current.score);
    assert_true(r->optimum.score < r->equal.score * 0.97);
    free(p);
    free(r);
}

/* A variant of the Selene file with one line replaced. */
static void expect_error(const char *from, const char *to, int line, const char *key,
                         const char *words)
{
    char text[2048];
    const char *at = strstr(selene, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - selene), selene, to, at + strlen(from));
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_alloc_read_text(text, strlen(text), "bad.yaml", p, &err),
                     COMET_EINPUT);
    if (strcmp(err.file, "bad.yaml") != 0 || err.line != line || strcmp(err.key, key) != 0 ||
        !strstr(err.message, words))
        fail_msg("got %s:%d:%d %s: %s", err.file, err.line, err.column, err.key, err.message);
    assert_true(err.column > 0);
    free(p);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_error("\"325 GB/s\"", "\"30 GB/s\"", 3, "allocate.budget",
                 "below the sum of the dimensions' minimums, 37.5 GB/s");
    expect_error("{min: \"25 GB/s\"}", "{min: \"25 GB/s\", cost_per_gbps: -3}", 5,
                 "allocate.dimensions.nvlink.cost_per_gbps", "non-negative");
    expect_error("{min: \"25 GB/s\"}", "{min: \"25 GB/s\", max: \"20 GB/s\"}", 5,
                 "allocate.dimensions.nvlink.max", "below min");
    expect_error("{min: \"25 GB/s\"}", "{link: \"25 GB/s\", min_links: 4, max_links: 2}", 5,
                 "allocate.dimensions.nvlink.max_links", "below min_links");
    expect_error("nvlink:", "nvlinks:", 5, "allocate.dimensions.nvlinks", "nvlink");
    expect_error("  budget: \"325 GB/s\"\n", "  budget_dollars: 100\n", 5,
                 "allocate.dimensions.nvlink", "no cost per GB/s");
    expect_error("dp: 8", "dp: 4", 9, "allocate.workloads[0].npus", "the strategy uses 512");
}

static void test_outputs(void **state)
{
    (void)state;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    comet_error err;
    assert_int_equal(comet_alloc_read_text(selene, strlen(selene), "selene.yaml", p, &err),
                     COMET_OK);
    assert_int_equal(comet_allocate(p, true, r, &err), COMET_OK);
    comet_buf b;
    comet_buf_init(&b);
    comet_alloc_text(&b, p, r);
    assert_non_null(strstr(b.data, "optimum"));
    assert_non_null(strstr(b.data, "step time across the budget"));
    comet_buf_free(&b);
    comet_buf_init(&b);
    comet_alloc_json(&b, p, r);
    assert_non_null(strstr(b.data, "\"splits\""));
    assert_non_null(strstr(b.data, "\"infiniband\""));
    comet_buf_free(&b);
    comet_buf_init(&b);
    comet_alloc_csv(&b, p, r);
    int lines = 0;
    for (const char *c = b.data; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 1 + 4 + 2 * COMET_ALLOC_SWEEP);
    const char head[] = "schema_version,split,budget_bytes_per_s,nvlink_bandwidth_bytes_per_s,"
                        "infiniband_bandwidth_bytes_per_s,nvlink_utilization,"
                        "infiniband_utilization,spend_bytes_per_s,step_time_s,cost_usd,score,gap\n";
    assert_true(strncmp(b.data, head, sizeof head - 1) == 0);
    comet_buf_free(&b);
    comet_page *page = comet_page_new("allocate");
    comet_report_page_allocate(page, p, r);
    assert_int_equal(comet_page_n_charts(page), 4);
    comet_buf_init(&b);
    comet_page_html(&b, page);
    assert_non_null(strstr(b.data, "<svg"));
    assert_false(b.failed);
    comet_buf_free(&b);
    comet_page_free(page);
    free(p);
    free(r);
}

void suite_allocate(test_tally *t)
{
    const struct CMUnitTest allocate[] = {
        cmocka_unit_test(test_closed_form_exact),
        cmocka_unit_test(test_idle_dimension_gets_minimum),
        cmocka_unit_test(test_more_budget_never_slower),
        cmocka_unit_test(test_objectives_differ_with_costs),
        cmocka_unit_test(test_whole_links_against_brute_force),
        cmocka_unit_test(test_searched_strategy),
        cmocka_unit_test(test_searched_optimum_balances_marginals),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_outputs),
    };
    RUN_GROUP(t, allocate);
}
