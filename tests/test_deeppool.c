/* comet_deeppool: burst parallelism against closed forms on the toy (a
 * switch of 100 GB/s with ring collectives and no latency, 100 TFLOPS,
 * no efficiency curve, no launches): layers that scale perfectly get the
 * full width and the iteration the data-parallel closed form; a layer of
 * no work and large gradients gets one GPU, with the iteration its
 * compute, transfers and all-reduces added by hand; a free network never
 * makes burst slower than data parallelism; the data-parallel plan is
 * comet estimate's step bit for bit; the efficiency curve makes a
 * small per-GPU batch run slower per sample; multiplexing's GPU share,
 * break-even interference and the total on both sides of it; the reader's
 * one-line errors with file:line:column and key; the outputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comet/config.h"
#include "comet/deeppool.h"
#include "comet/estimate.h"
#include "comet/network.h"
#include "comet/report.h"
#include "tests.h"
#include "toy.h"

#define PEAK 100e12
#define NET 100e9

/* The toy's layers, each 3 x F FLOPs per sample forward and backward. */
static void toy_layers(comet_model *m, int n, const double *tflops, const double *params)
{
    toy_model(m);
    m->n_layer_kinds = n;
    for (int i = 0; i < n; i++) {
        comet_layer *l = &m->layer_list[i];
        *l = m->layer_list[0];
        snprintf(l->name, sizeof l->name, "l%d", i);
        l->count = 1;
        l->fwd_flops = tflops[i] * 1e12;
        l->params = params[i];
    }
}

/* A ring all-reduce of S bytes over n NPUs at NET, no latency. */
static double ring(double bytes, double n)
{
    return n > 1 ? 2.0 * (n - 1.0) / n * bytes / NET : 0.0;
}

static double optimizer(const comet_system *sys, double params)
{
    /* the fp16 gradient read and written as fp32 (2 + 4), read for the
     * norm (4), Adam's reads and writes of fp32 gradient, master weight,
     * m and v (28), the fp16 weights read and written (4 + 2... as
     * step_plan.c counts them): 44 bytes per parameter at HBM speed */
    return params * 44.0 / sys->hbm.bandwidth;
}

static void test_perfect_scaling_full_width(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    const double f[4] = {1, 2, 0.5, 1}, p[4] = {1e3, 2e3, 1e3, 4e3};
    toy_layers(&m, 4, f, p);
    toy_system(&sys);
    comet_deeppool_problem *pb = calloc(1, sizeof *pb);
    comet_deeppool_result *r = calloc(1, sizeof *r);
    pb->model = m;
    pb->system = sys;
    pb->global_batch = 64;
    pb->gpus = 16;
    comet_error err;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_OK);
    assert_int_equal(r->n_layers, 4);
    assert_int_equal(r->n_widths, 5); /* 1, 2, 4, 8, 16 */
    for (int i = 0; i < 4; i++)
        assert_int_equal(r->width[i], 16);
    assert_int_equal(r->burst.n_groups, 1);
    double compute = 3.0 * 4.5e12 * 64.0 / 16.0 / PEAK;
    assert_close(r->burst.compute, compute, 1e-12);
    assert_close(r->burst.allreduce, ring(8e3 * 2.0, 16), 1e-9);
    assert_close(r->burst.optimizer, optimizer(&sys, 8e3), 1e-9);
    assert_close(r->burst.iteration, r->dp.iteration, 1e-12);
    assert_close(r->speedup, 1.0, 1e-12);
    assert_close(r->burst.throughput, 64.0 / r->burst.iteration, 1e-12);
    assert_true(r->burst.idle_share < 1e-12);
    /* the network module's own price, the one source of the all-reduce */
    int64_t span[COMET_MAX_DIMS] = {16, 1, 1, 1};
    assert_close(r->burst.allreduce,
                 comet_collective_time(&sys, span, COMET_COLL_ALL_REDUCE, 8e3 * 2.0), 1e-12);
    free(pb);
    free(r);
}

/* Layers 0 and 2 of 1 TFLOP and few parameters around a layer of no work
 * and 1e9 parameters: its all-reduce over 8 GPUs (35 ms) outweighs moving
 * the activations to one GPU and back (2 x 2 x 56 MB at 100 GB/s). */
static void fixed_cost_problem(comet_deeppool_problem *pb)
{
    const double f[3] = {1, 0, 1}, p[3] = {1e3, 1e9, 1e3};
    memset(pb, 0, sizeof *pb);
    toy_layers(&pb->model, 3, f, p);
    toy_system(&pb->system);
    pb->global_batch = 64;
    pb->gpus = 8;
}

static void test_fixed_cost_layer_few_gpus(void **state)
{
    (void)state;
    comet_deeppool_problem *pb = calloc(1, sizeof *pb);
    comet_deeppool_result *r = calloc(1, sizeof *r);
    fixed_cost_problem(pb);
    comet_error err;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_OK);
    assert_int_equal(r->width[0], 8);
    assert_int_equal(r->width[1], 1);
    assert_int_equal(r->width[2], 8);
    assert_int_equal(r->burst.n_groups, 3);
    double compute = 2.0 * 3.0 * 1e12 * 8.0 / PEAK;
    /* each way: the one GPU takes in the other 56 samples' 1 MB outputs */
    double transfer = 2.0 * 2.0 * (64.0 - 8.0) * 1e6 / NET;
    double allreduce = 2.0 * ring(1e3 * 2.0, 8);
    double opt = optimizer(&pb->system, 1e9 + 2e3);
    assert_close(r->burst.compute, compute, 1e-12);
    assert_close(r->burst.transfer, transfer, 1e-9);
    assert_close(r->burst.allreduce, allreduce, 1e-9);
    assert_close(r->burst.iteration, compute + transfer + allreduce + opt, 1e-9);
    assert_close(r->burst.groups[1].transfer_in, transfer / 2.0, 1e-9);
    /* data parallel: one all-reduce of every gradient over 8 GPUs */
    assert_close(r->dp.iteration, compute + ring((1e9 + 2e3) * 2.0, 8) + opt, 1e-9);
    assert_close(r->speedup, r->dp.iteration / r->burst.iteration, 1e-12);
    assert_true(r->speedup > 1.05);
    free(pb);
    free(r);
}

/* With the network free (no latency, 1e9 x the bandwidth), burst is at
 * least as fast as data parallelism on every preset CNN, and its
 * transfers and all-reduces cost next to nothing. */
static void test_free_network(void **state)
{
    (void)state;
    const char *models[] = {"resnet50", "resnet152", "vgg16"};
    comet_dp_plan *burst = malloc(sizeof *burst), *dp = malloc(sizeof *dp);
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        comet_model m;
        comet_system sys;
        comet_error err;
        assert_int_equal(comet_preset_model(models[k], &m, &err), COMET_OK);
        assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
        for (int d = 0; d < sys.n_dims; d++) {
            sys.dims[d].bandwidth *= 1e9;
            sys.dims[d].latency = 0.0;
            sys.dims[d].protocols = COMET_PROTOCOLS_NONE;
            sys.dims[d].bus.n_curves = 0;
        }
        assert_int_equal(comet_deeppool_plan(&m, &sys, 256, 64, false, 0.0, burst, &err), COMET_OK);
        assert_int_equal(comet_deeppool_plan(&m, &sys, 256, 64, true, 0.0, dp, &err), COMET_OK);
        assert_true(burst->iteration <= dp->iteration);
        assert_true(burst->transfer + burst->allreduce < 1e-6 * burst->iteration + 1e-9);
        /* and on the real network too */
        assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
        assert_int_equal(comet_deeppool_plan(&m, &sys, 256, 64, false, 0.0, burst, &err), COMET_OK);
        assert_int_equal(comet_deeppool_plan(&m, &sys, 256, 64, true, 0.0, dp, &err), COMET_OK);
        assert_true(burst->iteration <= dp->iteration);
    }
    free(burst);
    free(dp);
}

/* One source of truth: the data-parallel plan is comet estimate's step
 * for data parallelism with the all-reduce not overlapped, to the last
 * bit, for a CNN and a Transformer (the same workload builder, layer
 * prices, collective and optimizer step). */
static void test_data_parallel_is_estimate(void **state)
{
    (void)state;
    const char *models[] = {"resnet50", "megatron-22b"};
    comet_dp_plan *dp = malloc(sizeof *dp);
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        comet_model m;
        comet_system sys;
        comet_error err;
        assert_int_equal(comet_preset_model(models[k], &m, &err), COMET_OK);
        assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
        comet_strategy s;
        comet_strategy_defaults(&s);
        s.dp = 64;
        s.global_batch = 128;
        s.microbatch = 2;
        s.overlap_dp = false;
        comet_result r;
        assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
        assert_int_equal(comet_deeppool_plan(&m, &sys, 128, 64, true, 0.0, dp, &err), COMET_OK);
        assert_close(dp->compute, r.forward + r.backward, 1e-12);
        assert_close(dp->optimizer, r.optimizer, 1e-12);
        assert_close(dp->allreduce, r.dp_exposed, 1e-12);
        assert_close(dp->iteration, r.step_time, 1e-12);
    }
    free(dp);
}

/* The efficiency curve: ResNet-50's compute at 1 sample per GPU is more
 * than a quarter of its compute at 4 (small GEMMs fill the engines less,
 * launches do not shrink), and less than the same (more work is more
 * time). */
static void test_small_batch_less_efficient(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_error err;
    assert_int_equal(comet_preset_model("resnet50", &m, &err), COMET_OK);
    assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
    comet_dp_plan *one = malloc(sizeof *one), *four = malloc(sizeof *four);
    assert_int_equal(comet_deeppool_plan(&m, &sys, 64, 64, true, 0.0, one, &err), COMET_OK);
    assert_int_equal(comet_deeppool_plan(&m, &sys, 256, 64, true, 0.0, four, &err), COMET_OK);
    assert_int_equal(one->groups[0].per_gpu_batch, 1);
    assert_int_equal(four->groups[0].per_gpu_batch, 4);
    assert_true(one->compute > 0.25 * four->compute * 1.2);
    assert_true(one->compute < four->compute);
    /* the same all-reduce either way: the gradients do not depend on the batch */
    assert_close(one->allreduce, four->allreduce, 1e-12);
    free(one);
    free(four);
}

/* The amplification limit on the toy with a launch of 1/30 s per kernel:
 * a layer of 1 TFLOP per sample at 64 samples takes 3 (64/w) 1e12/1e14 +
 * 3/30 s on w GPUs, GPU-time 1.92 + 0.1 w s, least on one GPU (2.02 s);
 * a limit of 1.2 allows w <= 5.04: 1, 2 and 4 GPUs, and the plan takes 4;
 * a limit of 1 allows only one GPU; no limit, all 16. */
static void test_amplification_limit(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    const double f[2] = {1, 1}, p[2] = {1e3, 1e3};
    toy_layers(&m, 2, f, p);
    toy_system(&sys);
    sys.compute.kernel_launch = 1.0 / 30.0;
    comet_dp_plan *plan = malloc(sizeof *plan);
    comet_error err;
    const double limits[3] = {1.2, 1.0, 0.0};
    const int64_t widths[3] = {4, 1, 16};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(comet_deeppool_plan(&m, &sys, 64, 16, false, limits[k], plan, &err),
                         COMET_OK);
        assert_int_equal(plan->n_groups, 1);
        assert_int_equal(plan->groups[0].width, widths[k]);
        assert_close(plan->compute, 2.0 * (3.0 * 64.0 / (double)widths[k] * 1e12 / PEAK + 0.1),
                     1e-12);
    }
    assert_int_equal(comet_deeppool_plan(&m, &sys, 64, 16, false, 0.5, plan, &err), COMET_EINPUT);
    assert_string_equal(err.key, "deeppool.amplification");
    free(plan);
}

static void test_multiplexing_break_even(void **state)
{
    (void)state;
    comet_deeppool_problem *pb = calloc(1, sizeof *pb);
    comet_deeppool_result *r = calloc(1, sizeof *r);
    fixed_cost_problem(pb);
    pb->n_background = 1;
    const double f[1] = {0.5}, p[1] = {1e3};
    toy_layers(&pb->background[0].model, 1, f, p);
    pb->background[0].batch = 4;
    pb->background[0].priority = 1;
    comet_error err;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_OK);
    const comet_dp_mux *mx = &r->mux;
    /* GPUs 1..7 idle while the one-GPU layer runs: its optimizer step */
    double idle = r->burst.groups[1].optimizer;
    assert_int_equal(mx->jobs[0].gpus, 7);
    assert_close(mx->jobs[0].gpu_share, 7.0 * idle / r->burst.iteration, 1e-9);
    double alone = 4.0 / (3.0 * 4.0 * 0.5e12 / PEAK + optimizer(&pb->system, 1e3));
    assert_close(mx->jobs[0].alone, alone, 1e-9);
    double bg = mx->jobs[0].gpu_share * alone, fg = r->burst.throughput;
    assert_close(mx->background, bg, 1e-9);
    assert_close(mx->break_even, bg / (fg - bg), 1e-9);
    /* no interference: the total is the foreground plus the background */
    assert_close(mx->total, fg + bg, 1e-12);
    assert_true(mx->total > mx->foreground_alone);
    /* just below the break-even the total stays above the foreground alone,
     * just above it falls below */
    double be = mx->break_even;
    pb->interference = 0.99 * be;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_OK);
    assert_true(r->mux.total >= r->mux.foreground_alone);
    assert_close(r->mux.foreground, fg / (1.0 + 0.99 * be), 1e-12);
    assert_true(r->mux.shared);
    /* just above it sharing would fall below (fg / (1 + s) + bg < fg), so
     * the packer keeps the jobs to wholly idle GPUs, of which there are
     * none here: the total is the foreground alone, never less */
    pb->interference = 1.01 * be;
    assert_true(fg / (1.0 + 1.01 * be) + bg < fg);
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_OK);
    assert_false(r->mux.shared);
    assert_int_equal(r->mux.jobs[0].gpus, 0);
    assert_close(r->mux.total, r->mux.foreground_alone, 1e-12);
    assert_close(r->mux.break_even, be, 1e-12);
    /* a job on GPUs the foreground never uses does not slow it */
    pb->gpus = 8;
    pb->global_batch = 64;
    const double f1[1] = {0}, p1[1] = {1e9};
    toy_layers(&pb->model, 1, f1, p1); /* no work, large gradients: one GPU */
    pb->interference = 10.0;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_OK);
    assert_int_equal(r->width[0], 1);
    assert_int_equal(r->mux.jobs[0].gpus, 7);
    assert_close(r->mux.jobs[0].gpu_share, 7.0, 1e-12);
    assert_close(r->mux.foreground, r->mux.foreground_alone, 1e-12);
    free(pb);
    free(r);
}

static void test_priorities(void **state)
{
    (void)state;
    comet_deeppool_problem *pb = calloc(1, sizeof *pb);
    comet_deeppool_result *r = calloc(1, sizeof *r);
    fixed_cost_problem(pb);
    pb->n_background = 2;
    const double f[1] = {0.5}, p[1] = {1e3};
    for (int j = 0; j < 2; j++) {
        toy_layers(&pb->background[j].model, 1, f, p);
        pb->background[j].batch = 1;
        pb->background[j].gpus = 4;
    }
    pb->background[0].priority = 1;
    pb->background[1].priority = 2;
    comet_error err;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_OK);
    /* the higher priority takes its 4 GPUs first, the other the 3 left */
    assert_int_equal(r->mux.jobs[1].gpus, 4);
    assert_int_equal(r->mux.jobs[0].gpus, 3);
    free(pb);
    free(r);
}

static const char good[] =
    "deeppool:\n"
    "  model: resnet50\n"
    "  system: h100-80g-dgx\n"
    "  global_batch: 256\n"
    "  gpus: 64\n"
    "  scaling: [8, 16, 32, 64]\n"
    "  interference: 0.1\n"
    "  background:\n"
    "    - {model: resnet50, batch: 32, priority: 1}\n";

static void expect_error(const char *from, const char *to, int line, const char *key,
                         const char *words)
{
    char text[2048];
    const char *at = strstr(good, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    comet_deeppool_problem *p = calloc(1, sizeof *p);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_deeppool_read_text(text, strlen(text), "bad.yaml", p, &err),
                     COMET_EINPUT);
    if (strcmp(err.file, "bad.yaml") != 0 || err.line != line || strcmp(err.key, key) != 0 ||
        !strstr(err.message, words))
        fail_msg("got %s:%d:%d %s: %s", err.file, err.line, err.column, err.key, err.message);
    assert_true(err.column > 0);
    assert_null(strchr(err.message, '\n'));
    free(p);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_error("global_batch: 256", "global_batch: 32", 5, "deeppool.gpus",
                 "at least one sample per GPU");
    expect_error("scaling: [8, 16, 32, 64]", "scaling: [8, 16, 512]", 6, "deeppool.scaling[2]",
                 "at least one sample per GPU");
    expect_error("interference: 0.1", "interference: -0.5", 7, "deeppool.interference",
                 "non-negative");
    expect_error("model: resnet50\n  system", "model: {preset: resnet50, layer_list: "
                 "[{name: x, op: convolution, in: [8, 8, 3], out_channels: 4, kernel: 3}]}\n"
                 "  system", 2, "deeppool.model.layer_list[0].op", "convolution");
    expect_error("gpus: 64", "gpus: 64\n  widths: 4", 6, "deeppool.widths", "unknown key");
    expect_error("batch: 32", "batch: 0", 9, "deeppool.background[0].batch", "");
    /* the library's own check, for callers that build the problem in C */
    comet_deeppool_problem *pb = calloc(1, sizeof *pb);
    comet_deeppool_result *r = calloc(1, sizeof *r);
    fixed_cost_problem(pb);
    comet_error err;
    pb->global_batch = 4;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_EINPUT);
    assert_string_equal(err.key, "deeppool.global_batch");
    pb->global_batch = 64;
    pb->interference = -1;
    assert_int_equal(comet_deeppool(pb, r, &err), COMET_EINPUT);
    assert_string_equal(err.key, "deeppool.interference");
    /* a value quoted in the message keeps its newline escaped: one line
     * (an input the fuzzer found, its section a two-line plain scalar) */
    static const char two_lines[] = "deeppool:\n ol6\n \n    -n";
    comet_deeppool_problem *q = calloc(1, sizeof *q);
    assert_int_equal(comet_deeppool_read_text(two_lines, strlen(two_lines), "nl.yaml", q, &err),
                     COMET_EINPUT);
    assert_null(strchr(err.message, '\n'));
    assert_non_null(strstr(err.message, "expected a mapping, got \"ol6\\n-n\""));
    free(q);
    free(pb);
    free(r);
}

static void test_outputs(void **state)
{
    (void)state;
    comet_deeppool_problem *p = calloc(1, sizeof *p);
    comet_deeppool_result *r = calloc(1, sizeof *r);
    comet_error err;
    assert_int_equal(comet_deeppool_read_text(good, strlen(good), "good.yaml", p, &err),
                     COMET_OK);
    assert_int_equal(comet_deeppool(p, r, &err), COMET_OK);
    assert_int_equal(r->n_scaling, 4);
    for (int i = 0; i < r->n_scaling; i++)
        assert_true(r->scaling[i].burst >= r->scaling[i].dp * (1.0 - 1e-12));
    assert_close(r->scaling[3].burst, r->burst.throughput, 1e-12);
    assert_close(r->scaling[3].dp, r->dp.throughput, 1e-12);
    comet_buf b;
    comet_buf_init(&b);
    comet_deeppool_json(&b, p, r);
    assert_false(b.failed);
    assert_non_null(strstr(b.data, "\"burst\":{\"iteration_s\":"));
    assert_non_null(strstr(b.data, "\"scaling\":[{\"gpus\":8,"));
    comet_buf_free(&b);
    comet_buf_init(&b);
    comet_deeppool_text(&b, p, r);
    assert_non_null(strstr(b.data, "burst over data parallel"));
    comet_buf_free(&b);
    comet_page *pg = comet_page_new("t");
    comet_report_page_deeppool(pg, p, r);
    assert_int_equal(comet_page_n_charts(pg), 3);
    comet_page_free(pg);
    free(p);
    free(r);
}

void suite_deeppool(test_tally *t)
{
    const struct CMUnitTest deeppool[] = {
        cmocka_unit_test(test_perfect_scaling_full_width),
        cmocka_unit_test(test_fixed_cost_layer_few_gpus),
        cmocka_unit_test(test_free_network),
        cmocka_unit_test(test_data_parallel_is_estimate),
        cmocka_unit_test(test_small_batch_less_efficient),
        cmocka_unit_test(test_amplification_limit),
        cmocka_unit_test(test_multiplexing_break_even),
        cmocka_unit_test(test_priorities),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_outputs),
    };
    RUN_GROUP(t, deeppool);
}
