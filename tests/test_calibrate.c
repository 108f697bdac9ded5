/* comet calibrate's library: the system writer reads back into the very
 * struct it wrote (every preset, every key); the kernel CSV and nccl-tests
 * readers take real output and name file:line:column on bad input; and
 * the fits recover known parameters: e_max = 0.71 and k0 = 300 exactly
 * from exact GEMM rows and within a few percent under +-2 % noise, a GEMM
 * size curve, attention and memory efficiencies, a dimension's latency and
 * efficiency from synthetic nccl-tests runs (closed form and NCCL's
 * protocol model), and measured curves that price their own points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/calibrate.h"
#include "comet/comet.h"
#include "tests.h"
#include "../src/config/units.h"

/* ---- helpers ---------------------------------------------------------------- */

static comet_system preset(const char *name)
{
    comet_system s;
    comet_error err;
    comet_error_clear(&err);
    if (comet_preset_system(name, &s, &err))
        fail_msg("preset %s: %s", name, err.message);
    return s;
}

static comet_job *read_text(const char *text)
{
    comet_job *job = malloc(sizeof *job);
    assert_non_null(job);
    comet_job_init(job);
    comet_error err;
    comet_error_clear(&err);
    if (comet_config_read_text(text, strlen(text), "w.yaml", job, &err)) {
        char line[600];
        fail_msg("%s\n%s", text, comet_error_format(&err, line, sizeof line));
    }
    return job;
}

/* Write sys, read it back: the same bytes (the reader fills the struct the
 * same way each time, so even padding and name tails agree). Returns the
 * text (to free). Shared (tests.h): test_config.c round-trips shapes. */
char *test_system_round_trip(const comet_system *sys)
{
    comet_buf b;
    comet_buf_init(&b);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_system_write_yaml(sys, &b, &err), COMET_OK);
    comet_job *job = read_text(b.data);
    assert_true(job->has_system);
    if (memcmp(&job->system, sys, sizeof *sys) != 0)
        fail_msg("%s: does not read back the same:\n%s", sys->name, b.data);
    free(job);
    return b.data;
}

/* Deterministic noise in [-1, 1): a 64-bit LCG. */
static double noise(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return 2.0 * (double)(*state >> 11) * 0x1.0p-53 - 1.0;
}

static void read_kernels(const char *csv, comet_kernel_rows *rows)
{
    memset(rows, 0, sizeof *rows);
    comet_error err;
    comet_error_clear(&err);
    if (comet_kernels_read_text(csv, strlen(csv), "k.csv", rows, &err)) {
        char line[600];
        fail_msg("%s", comet_error_format(&err, line, sizeof line));
    }
}

/* Fit a kernel CSV on base; the result (to free with calib_free). */
static comet_calib_result *fit_kernels(const comet_system *base, const char *csv, int points,
                                       comet_kernel_rows *rows)
{
    read_kernels(csv, rows);
    comet_calib_request req = {.base = base, .kernels = rows, .gemm_points = points};
    comet_calib_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    comet_error err;
    comet_error_clear(&err);
    if (comet_calibrate(&req, r, &err)) {
        char line[600];
        fail_msg("%s", comet_error_format(&err, line, sizeof line));
    }
    /* every note is written text or empty, never what was on the stack */
    for (size_t i = 0; i < r->n_params; i++)
        for (const char *ch = r->params[i].note; *ch; ch++)
            if (*ch < 0x20 || *ch > 0x7e)
                fail_msg("%s: note holds byte 0x%02x", r->params[i].key, (unsigned char)*ch);
    return r;
}

static void calib_free(comet_calib_result *r, comet_kernel_rows *rows)
{
    comet_calib_result_free(r);
    free(r);
    comet_kernel_rows_free(rows);
}

static const comet_calib_param *param(const comet_calib_result *r, const char *key)
{
    for (size_t i = 0; i < r->n_params; i++)
        if (strcmp(r->params[i].key, key) == 0)
            return &r->params[i];
    fail_msg("no fitted key %s", key);
    return NULL;
}

static void expect_kernel_error(const char *csv, const char *line)
{
    comet_kernel_rows rows;
    memset(&rows, 0, sizeof rows);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_kernels_read_text(csv, strlen(csv), "k.csv", &rows, &err),
                     COMET_EINPUT);
    char got[600];
    comet_error_format(&err, got, sizeof got);
    if (strcmp(got, line) != 0)
        fail_msg("got      %s\nexpected %s", got, line);
    comet_kernel_rows_free(&rows);
}

/* ---- the system writer -------------------------------------------------------- */

static void test_writer_presets_round_trip(void **state)
{
    (void)state;
    const char *const *names = comet_preset_names("systems");
    int n = 0;
    for (; names[n]; n++) {
        comet_system s = preset(names[n]);
        free(test_system_round_trip(&s));
    }
    assert_true(n >= 4);
}

/* Every key docs/config.md documents, set away from its default. */
static const char full_system[] =
    "system:\n"
    "  name: \"every key\"\n"
    "  compute:\n"
    "    matrix: {fp32: \"19.5 TFLOPS\", tf32: \"156 TFLOPS\", fp16: \"312 TFLOPS\",\n"
    "             bf16: \"312 TFLOPS\", fp8: \"624 TFLOPS\"}\n"
    "    vector: {fp32: \"19.5 TFLOPS\", fp16: \"78 TFLOPS\", bf16: \"39 TFLOPS\"}\n"
    "    gemm_efficiency:\n"
    "      - {size: \"1 GFLOP\", efficiency: 0.35}\n"
    "      - {size: \"1 TFLOP\", efficiency: 0.78}\n"
    "    gemm_k_overhead: 247.5\n"
    "    fp8_gemm_efficiency: 0.9\n"
    "    grouped_gemm_m0: 130\n"
    "    vector_efficiency: 0.7\n"
    "    kernel_launch: \"4 us\"\n"
    "    attention_efficiency:\n"
    "      - {seq: 2048, head_dim: 64, forward: 0.14, forward_backward: 0.076}\n"
    "      - {seq: 8192, head_dim: 128, forward: 0.6, forward_backward: 0.51,\n"
    "         causal_forward: 0.5, causal_forward_backward: 0.45}\n"
    "    attention_kernel: cudnn\n"
    "    attention_kernels:\n"
    "      flash2:\n"
    "        - {seq: 8192, head_dim: 128, forward: 0.3, forward_backward: 0.25}\n"
    "    memory_efficiency: {elementwise: 0.86, norm: 0.46, activation: 0.85, softmax: 0.45,\n"
    "                        rope: 0.84, cast: 0.44, optimizer: 0.62}\n"
    "    framework_efficiency: 0.93\n"
    "  hbm: {capacity: \"80 GiB\", bandwidth: \"2039 GB/s\", efficiency: 0.85, latency: \"100 ns\"}\n"
    "  expansion: {capacity: \"512 GiB\", bandwidth: \"64 GB/s\", latency: \"300 ns\",\n"
    "              efficiency: 0.9, attach: per_node, shared_by: 4}\n"
    "  network:\n"
    "    - name: nvlink\n"
    "      size: 8\n"
    "      topology: fully_connected\n"
    "      algorithm: direct\n"
    "      bandwidth: \"300 GB/s\"\n"
    "      latency: \"1.25 us\"\n"
    "      efficiency: 0.8\n"
    "      in_network_reduction: true\n"
    "      cost_per_gbps: 1.5\n"
    "      protocols: nccl_nvlink\n"
    "      bus_bandwidth:\n"
    "        npus: 8\n"
    "        all_reduce:\n"
    "          - {size: \"1 MiB\", bandwidth: \"40 GB/s\"}\n"
    "          - {size: \"1 GiB\", bandwidth: \"360 GB/s\"}\n"
    "        reduce_scatter: [{size: \"8 MiB\", bandwidth: \"100 GB/s\"}]\n"
    "        all_gather: [{size: \"8 MiB\", bandwidth: \"101 GB/s\"}]\n"
    "        all_to_all: [{size: \"8 MiB\", bandwidth: \"102 GB/s\"}]\n"
    "    - name: torus\n"
    "      size: 4\n"
    "      topology: torus\n"
    "      shape: [2, 2]\n"
    "      bandwidth: \"100 GB/s\"\n"
    "    - name: clos\n"
    "      size: 4\n"
    "      topology: fat_tree\n"
    "      tiers: 3\n"
    "      radix: 16\n"
    "      oversubscription: [2, 1.5]\n"
    "      routing: spray\n"
    "      bandwidth: \"50 GB/s\"\n"
    "    - name: ib\n"
    "      size: auto\n"
    "      topology: ring\n"
    "      bidirectional: false\n"
    "      algorithm: double_binary_tree\n"
    "      bandwidth: \"400 Gb/s\"\n"
    "      protocols: nccl_net\n"
    "      bus_bandwidth: {npus: 16, all_reduce: [{size: \"1 GiB\", bandwidth: \"45 GB/s\"}]}\n"
    "  collective_chunks: 16\n"
    "  cost: {per_npu: 15000, per_gib_hbm: 2, per_gib_expansion: 5, per_tflops: 10,\n"
    "         per_gbps_hbm: 3}\n";

static void test_writer_every_key(void **state)
{
    (void)state;
    comet_job *job = read_text(full_system);
    char *text = test_system_round_trip(&job->system);
    static const char *const keys[] = {
        "name:", "matrix:", "fp32:", "tf32:", "fp16:", "bf16:", "fp8:", "vector:",
        "gemm_efficiency:", "size:", "efficiency:", "gemm_k_overhead:", "vector_efficiency:",
        "kernel_launch:", "attention_efficiency:", "seq:", "head_dim:", "forward:",
        "forward_backward:", "causal_forward:", "causal_forward_backward:",
        "fp8_gemm_efficiency:", "grouped_gemm_m0:", "framework_efficiency:", "attention_kernel: cudnn",
        "attention_kernels:", "flash2:", "memory_efficiency:", "elementwise:", "norm:", "activation:",
        "softmax:", "rope:", "cast:", "optimizer:", "hbm:", "capacity:", "bandwidth:",
        "latency:", "expansion:", "attach: per_node", "shared_by:", "network:",
        "size: auto", "topology: fully_connected", "algorithm: double_binary_tree",
        "in_network_reduction: true", "cost_per_gbps:", "protocols: nccl_net",
        "topology: torus", "shape: [2, 2]", "topology: fat_tree", "tiers: 3", "radix: 16",
        "oversubscription: [2, 1.5]", "routing: spray", "bidirectional: false",
        "bus_bandwidth:", "npus: 16", "all_reduce:", "reduce_scatter:", "all_gather:",
        "all_to_all:", "collective_chunks: 16", "cost:", "per_npu:", "per_gib_hbm:",
        "per_gib_expansion:", "per_tflops:", "per_gbps_hbm:", NULL};
    for (int i = 0; keys[i]; i++)
        if (!strstr(text, keys[i]))
            fail_msg("the written system has no \"%s\":\n%s", keys[i], text);
    /* quantities keep their people's units */
    assert_non_null(strstr(text, "capacity: \"80 GiB\""));
    assert_non_null(strstr(text, "bandwidth: \"50 GB/s\""));
    assert_non_null(strstr(text, "kernel_launch: \"4 us\""));
    free(text);
    free(job);
}

/* Values no unit prints short still read back to the same double. */
static void test_writer_awkward_values(void **state)
{
    (void)state;
    comet_system s = preset("h100-80g-dgx");
    s.dims[0].bandwidth = 1e11 / 3.0;
    s.dims[0].latency = 1.2345678901234567e-6;
    s.dims[0].efficiency = 0.1 + 0.2;
    s.dims[1].latency = 0.0;
    s.hbm.capacity = 3.0 * COMET_GIB + 1.0;
    s.compute.gemm_k_overhead = 1.0 / 3.0;
    s.compute.matrix_flops[COMET_DTYPE_BF16] = 989.123456789e12;
    s.compute.kernel_launch = 7e-9 / 3.0;
    free(test_system_round_trip(&s));
    char text[64];
    double back = 0;
    for (double v = 1e3; v < 1e16; v *= 7.77) {
        cfg_units_format(CFG_UNIT_BANDWIDTH, v, text, sizeof text);
        assert_int_equal(cfg_units_parse(text, CFG_UNIT_BANDWIDTH, &back, NULL), CFG_UNITS_OK);
        assert_true(back == v);
    }
    /* "500 ns" reads as 500 * 1e-9, a hair above 5e-7, which is "0.5 us" */
    double ns500 = 0;
    assert_int_equal(cfg_units_parse("500 ns", CFG_UNIT_TIME, &ns500, NULL), CFG_UNITS_OK);
    assert_string_equal(cfg_units_format(CFG_UNIT_TIME, ns500, text, sizeof text), "500 ns");
    assert_string_equal(cfg_units_format(CFG_UNIT_TIME, 5e-7, text, sizeof text), "0.5 us");
    assert_string_equal(cfg_units_format(CFG_UNIT_BANDWIDTH, 4.5e11, text, sizeof text),
                        "450 GB/s");
    assert_string_equal(cfg_units_format(CFG_UNIT_BYTES, 80.0 * COMET_GIB, text, sizeof text),
                        "80 GiB");
    assert_string_equal(cfg_format_number(40000, text, sizeof text), "40000");
}

/* ---- the kernel CSV ------------------------------------------------------------- */

static void test_kernel_csv_reads(void **state)
{
    (void)state;
    comet_kernel_rows rows;
    read_kernels("\xEF\xBB\xBF# a comment\n"
                 "\n"
                 "kind, m, n, k, dtype, seconds, tflops, seq, head_dim, pass, causal, batch, "
                 "heads, subkind, bytes, gbps\r\n"
                 "gemm, 1024, 2048, 4096, fp8, 1.5e-5,,,,,,,,,,\r\n"
                 "  # indented comment\n"
                 "gemm,8192,8192,8192,,,720\n"
                 "attention,,,,,,500,4096,128,fwd_bwd,0,,,,,\n"
                 "attention,,,,,0.002,,2048,64,fwd,true,8,16,,,\n"
                 "memory,,,,,0.001,,,,,,,,norm,1.5e9,\n"
                 "memory,,,,,,,,,,,,,optimizer,,2100\n",
                 &rows);
    assert_int_equal(rows.n, 6);
    const comet_kernel_row *g = &rows.rows[0];
    assert_int_equal(g->kind, COMET_KERNEL_GEMM);
    assert_int_equal(g->line, 4);
    assert_int_equal(g->dtype, COMET_DTYPE_FP8);
    assert_true(g->m == 1024 && g->n == 2048 && g->k == 4096 && g->seconds == 1.5e-5);
    assert_true(rows.rows[1].dtype == COMET_DTYPE_BF16 && rows.rows[1].rate == 720e12);
    const comet_kernel_row *a = &rows.rows[2];
    assert_true(a->kind == COMET_KERNEL_ATTENTION && a->fwd_bwd && !a->causal);
    assert_true(a->batch == 1 && a->heads == 1 && a->rate == 500e12 && a->seq == 4096);
    assert_true(rows.rows[3].causal && !rows.rows[3].fwd_bwd && rows.rows[3].heads == 16);
    assert_true(rows.rows[4].mem == COMET_MEMK_NORM && rows.rows[4].bytes == 1.5e9);
    assert_true(rows.rows[5].mem == COMET_MEMK_OPTIMIZER && rows.rows[5].rate == 2100e9);
    comet_kernel_rows_free(&rows);

    /* the example transcription of shared/validation/h100-kernels.md */
    char path[512];
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(path, sizeof path, "%s/../examples/calibrate/h100-kernels.csv", dir ? dir : "tests");
    memset(&rows, 0, sizeof rows);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_kernels_read_file(path, &rows, &err), COMET_OK);
    assert_int_equal(rows.n, 11);
    comet_kernel_rows_free(&rows);
}

static void test_kernel_csv_errors(void **state)
{
    (void)state;
    const char *head = "kind,m,n,k,seconds,tflops\n";
    char csv[512];
    snprintf(csv, sizeof csv, "%sgemm,1024,abc,4096,0.001,\n", head);
    expect_kernel_error(csv, "k.csv:2:11: column 'n': expected a positive number, got \"abc\"");
    snprintf(csv, sizeof csv, "%sgemm,1024,-5,4096,0.001,\n", head);
    expect_kernel_error(csv, "k.csv:2:11: column 'n': expected a positive number, got \"-5\"");
    snprintf(csv, sizeof csv, "%sgemm,1024,2048,4096,0.001,700\n", head);
    expect_kernel_error(csv, "k.csv:2:27: column 'tflops': give seconds or tflops, not both");
    snprintf(csv, sizeof csv, "%sgemm,1024,2048,4096,,\n", head);
    expect_kernel_error(csv, "k.csv:2:21: column 'seconds': missing (give seconds or tflops)");
    snprintf(csv, sizeof csv, "%sgemm,1024,,4096,0.1\n", head);
    expect_kernel_error(csv, "k.csv:2:11: column 'n': missing (gemm rows need m, n and k)");
    snprintf(csv, sizeof csv, "%sgem,1,1,1,1\n", head);
    expect_kernel_error(csv, "k.csv:2:1: column 'kind': unknown value \"gem\" (expected one of "
                             "gemm, attention, memory)");
    snprintf(csv, sizeof csv, "%sgemm,1,1,1,5000,\n", head);
    expect_kernel_error(csv, "k.csv:2:12: column 'seconds': 5000 is outside the sane range "
                             "1 ps to 1000 s");
    snprintf(csv, sizeof csv, "%sgemm,1,1,1,1,,7\n", head);
    expect_kernel_error(csv, "k.csv:2:15: 7 fields, the header names 6 columns");
    expect_kernel_error("kind,m,seconds,gbps\ngemm,1,,5\n",
                        "k.csv:2:9: column 'gbps': not used by gemm rows");
    expect_kernel_error("kind,m,n,k,secs\n", "k.csv:1:12: unknown column \"secs\" (did you "
                                              "mean \"seq\"?)");
    expect_kernel_error("kind,m,m,seconds\n", "k.csv:1:8: column \"m\" given twice");
    expect_kernel_error("m,n,k,seconds\n", "k.csv:1:1: the header has no \"kind\" column (the "
                                           "first line that is not a comment names the "
                                           "columns)");
    expect_kernel_error("# nothing\n", "k.csv: no header and no rows (see docs/calibrate.md)");
    expect_kernel_error("kind,seconds\n", "k.csv: no measurement rows after the header");
    expect_kernel_error("kind,seq,head_dim,pass,seconds\nattention,2048,64,fwd,0.001\n",
                        "k.csv:2:28: column 'batch': missing (a time needs batch and heads to "
                        "count the FLOPs)");
    expect_kernel_error("kind,subkind,seconds\nmemory,norms,0.001\n",
                        "k.csv:2:8: column 'subkind': unknown value \"norms\" (expected one of "
                        "elementwise, norm, activation, softmax, rope, cast, optimizer, batchnorm, "
                        "pool)");
}

/* ---- GEMM fits ----------------------------------------------------------------- */

#define E_MAX 0.71
#define K0 300.0

/* GEMM rows at e_max * K / (K + k0) of the bf16 peak (the model's exact
 * form), times (1 + amp * noise), plus the system's kernel launch. */
static void gemm_csv(char *out, size_t cap, const comet_system *sys, double amp, int rows)
{
    uint64_t seed = 15;
    size_t n = (size_t)snprintf(out, cap, "kind,m,n,k,seconds\n");
    static const double ks[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    double peak = sys->compute.matrix_flops[COMET_DTYPE_BF16];
    for (int i = 0; i < rows; i++) {
        double k = ks[i % 8], m = 4096.0 * (1 + i % 3), nn = 8192.0 / (1 + i % 2);
        double t = 2.0 * m * nn * k / (peak * E_MAX * k / (k + K0));
        t = t * (1.0 + amp * noise(&seed)) + sys->compute.kernel_launch;
        n += (size_t)snprintf(out + n, cap - n, "gemm,%.17g,%.17g,%.17g,%.17g\n", m, nn, k, t);
    }
}

static void test_gemm_recovers_exact(void **state)
{
    (void)state;
    comet_system base = preset("h100-80g-dgx");
    for (int launch = 0; launch < 2; launch++) {
        base.compute.kernel_launch = launch ? 4e-6 : 0.0;
        char csv[8192];
        gemm_csv(csv, sizeof csv, &base, 0.0, 24);
        comet_kernel_rows rows;
        comet_calib_result *r = fit_kernels(&base, csv, 0, &rows);
        assert_int_equal(r->gemm_points, 1);
        assert_close(r->system.compute.gemm_eff[0].efficiency, E_MAX, 1e-6);
        assert_close(r->system.compute.gemm_k_overhead, K0, 1e-6);
        assert_close(param(r, "compute.gemm_k_overhead")->base, base.compute.gemm_k_overhead,
                     1e-12);
        assert_int_equal(r->n_points, 24);
        for (size_t i = 0; i < r->n_points; i++)
            assert_true(fabs(r->points[i].residual) < 1e-9);
        calib_free(r, &rows);
    }
}

static void test_gemm_recovers_with_noise(void **state)
{
    (void)state;
    comet_system base = preset("h100-80g-dgx");
    char csv[16384];
    gemm_csv(csv, sizeof csv, &base, 0.02, 64);
    comet_kernel_rows rows;
    comet_calib_result *r = fit_kernels(&base, csv, 0, &rows);
    assert_int_equal(r->gemm_points, 1); /* noise calls for no size curve */
    assert_close(r->system.compute.gemm_eff[0].efficiency, E_MAX, 0.01);
    assert_close(r->system.compute.gemm_k_overhead, K0, 0.05);
    double rms = 0;
    for (size_t i = 0; i < r->n_points; i++)
        rms += r->points[i].residual * r->points[i].residual;
    assert_true(sqrt(rms / (double)r->n_points) < 0.02); /* the noise, not more */
    calib_free(r, &rows);
}

/* Rows from a two-point size curve (0.5 at 1 GFLOP, 0.8 at 1 TFLOP, linear
 * in log FLOP between) and k0 = 200: the fit finds two points. */
static void test_gemm_size_curve(void **state)
{
    (void)state;
    comet_system base = preset("h100-80g-dgx");
    base.compute.kernel_launch = 0.0; /* the synthetic times carry none */
    comet_compute truth;
    memset(&truth, 0, sizeof truth);
    truth.n_gemm_eff = 2;
    truth.gemm_eff[0] = (comet_eff_point){1e9, 0.5};
    truth.gemm_eff[1] = (comet_eff_point){1e12, 0.8};
    char csv[8192];
    size_t n = (size_t)snprintf(csv, sizeof csv, "kind,m,n,k,seconds\n");
    static const double ks[] = {256, 1024, 4096, 512, 2048, 8192, 128};
    double peak = base.compute.matrix_flops[COMET_DTYPE_BF16];
    for (int i = 0; i < 14; i++) {
        double k = ks[i % 7], flops = 1e9 * pow(1e3, i / 13.0);
        double m = 1024.0, nn = flops / (2.0 * m * k);
        double e = comet_gemm_efficiency(&truth, flops) * k / (k + 200.0);
        n += (size_t)snprintf(csv + n, sizeof csv - n, "gemm,%.17g,%.17g,%.17g,%.17g\n", m, nn,
                              k, flops / (peak * e));
    }
    comet_kernel_rows rows;
    comet_calib_result *r = fit_kernels(&base, csv, 0, &rows);
    assert_int_equal(r->gemm_points, 2);
    const comet_compute *cc = &r->system.compute;
    assert_close(cc->gemm_eff[0].flops, 1e9, 1e-9);
    assert_close(cc->gemm_eff[1].flops, 1e12, 1e-9);
    assert_close(cc->gemm_eff[0].efficiency, 0.5, 1e-5);
    assert_close(cc->gemm_eff[1].efficiency, 0.8, 1e-5);
    assert_close(cc->gemm_k_overhead, 200.0, 1e-4);
    calib_free(r, &rows);

    /* asked for a flat curve, the same rows give one e_max */
    r = fit_kernels(&base, csv, 1, &rows);
    assert_int_equal(r->gemm_points, 1);
    calib_free(r, &rows);
}

/* bf16 rows on the exact form and fp8 rows at 0.85 of it (on the fp8
 * peak): the curve from the bf16 rows alone, fp8's share 0.85, and every
 * row priced back exactly. fp8 rows alone make the curve theirs, share 1. */
static void test_gemm_fp8_share(void **state)
{
    (void)state;
    comet_system base = preset("h100-80g-dgx");
    base.compute.kernel_launch = 0.0;
    double peak = base.compute.matrix_flops[COMET_DTYPE_BF16];
    double peak8 = base.compute.matrix_flops[COMET_DTYPE_FP8];
    char csv[8192], only[4096];
    size_t n = (size_t)snprintf(csv, sizeof csv, "kind,m,n,k,seconds,dtype\n");
    size_t o = (size_t)snprintf(only, sizeof only, "kind,m,n,k,seconds,dtype\n");
    for (int i = 0; i < 12; i++) {
        bool fp8 = i % 2;
        double k = 256.0 * (1 << (i / 2)), m = 8192, nn = 4096;
        double e = (fp8 ? 0.85 : 1.0) * E_MAX * k / (k + K0);
        double t = 2.0 * m * nn * k / ((fp8 ? peak8 : peak) * e);
        char row[160];
        snprintf(row, sizeof row, "gemm,%.17g,%.17g,%.17g,%.17g,%s\n", m, nn, k, t,
                 fp8 ? "fp8" : "bf16");
        n += (size_t)snprintf(csv + n, sizeof csv - n, "%s", row);
        if (fp8)
            o += (size_t)snprintf(only + o, sizeof only - o, "%s", row);
    }
    comet_kernel_rows rows;
    comet_calib_result *r = fit_kernels(&base, csv, 1, &rows);
    assert_close(r->system.compute.gemm_eff[0].efficiency, E_MAX, 1e-6);
    assert_close(r->system.compute.gemm_k_overhead, K0, 1e-6);
    assert_close(r->system.compute.fp8_gemm_efficiency, 0.85, 1e-9);
    assert_close(param(r, "compute.fp8_gemm_efficiency")->base,
                 base.compute.fp8_gemm_efficiency, 1e-12);
    assert_int_equal(param(r, "compute.fp8_gemm_efficiency")->points, 6);
    for (size_t i = 0; i < r->n_points; i++)
        assert_true(fabs(r->points[i].residual) < 1e-9);
    calib_free(r, &rows);

    /* the fp8 rows alone */
    r = fit_kernels(&base, only, 1, &rows);
    assert_close(r->system.compute.fp8_gemm_efficiency, 1.0, 1e-12);
    assert_close(r->system.compute.gemm_eff[0].efficiency, 0.85 * E_MAX, 1e-6);
    assert_string_equal(param(r, "compute.fp8_gemm_efficiency")->note,
                        "only fp8 GEMM rows: the curve is theirs");
    calib_free(r, &rows);
}

/* ---- attention and memory ------------------------------------------------------ */

static void test_attention_and_memory(void **state)
{
    (void)state;
    comet_system base = preset("h100-80g-dgx");
    base.compute.kernel_launch = 3e-6;
    double peak = base.compute.matrix_flops[COMET_DTYPE_BF16];
    /* fused attention at known efficiencies, seconds from the model's
     * form: W = 4 b heads s^2 d (halved when causal), t = W / (P e) + launch,
     * forward and backward 3 W / (P e) + 2 launch */
    static const struct {
        double seq, hd, fwd, fb, cfwd, cfb;
    } shapes[] = {{1024, 64, 0.2, 0.15, 0.12, 0.08}, {4096, 128, 0.55, 0.45, 0.47, 0.36}};
    char csv[4096];
    size_t n = (size_t)snprintf(csv, sizeof csv,
                                "kind,batch,heads,seq,head_dim,causal,pass,subkind,bytes,"
                                "seconds,gbps\n");
    for (int s = 0; s < 2; s++)
        for (int causal = 0; causal < 2; causal++) {
            double w = 4.0 * 2 * 16 * shapes[s].seq * shapes[s].seq * shapes[s].hd;
            w *= causal ? 0.5 : 1.0;
            n += (size_t)snprintf(csv + n, sizeof csv - n,
                                  "attention,2,16,%g,%g,%s,fwd,,,%.17g,\n"
                                  "attention,2,16,%g,%g,%s,fwd_bwd,,,%.17g,\n",
                                  shapes[s].seq, shapes[s].hd, causal ? "true" : "false",
                                  w / (peak * (causal ? shapes[s].cfwd : shapes[s].fwd)) + 3e-6,
                                  shapes[s].seq, shapes[s].hd, causal ? "true" : "false",
                                  3.0 * w / (peak * (causal ? shapes[s].cfb : shapes[s].fb)) +
                                      6e-6);
        }
    /* memory: a median of three norms; a copy with its bytes */
    double bw = base.hbm.bandwidth;
    n += (size_t)snprintf(csv + n, sizeof csv - n,
                          "memory,,,,,,,norm,,,1400\nmemory,,,,,,,norm,,,1800\n"
                          "memory,,,,,,,norm,,,1550\nmemory,,,,,,,elementwise,1e9,%.17g,\n",
                          1e9 / (bw * 0.8) + 3e-6);
    comet_kernel_rows rows;
    comet_calib_result *r = fit_kernels(&base, csv, 0, &rows);
    const comet_compute *cc = &r->system.compute;
    assert_int_equal(cc->n_attn_eff, 2);
    for (int s = 0; s < 2; s++) {
        assert_true(cc->attn_eff[s].seq == shapes[s].seq);
        assert_true(cc->attn_eff[s].head_dim == shapes[s].hd);
        assert_close(cc->attn_eff[s].forward, shapes[s].fwd, 1e-9);
        assert_close(cc->attn_eff[s].forward_backward, shapes[s].fb, 1e-9);
        assert_close(cc->attn_eff[s].causal_forward, shapes[s].cfwd, 1e-9);
        assert_close(cc->attn_eff[s].causal_forward_backward, shapes[s].cfb, 1e-9);
    }
    assert_close(cc->mem_efficiency[COMET_MEMK_NORM], 1550e9 / bw, 1e-12);
    assert_close(cc->mem_efficiency[COMET_MEMK_ELEMENTWISE], 0.8, 1e-9);
    assert_close(r->system.hbm.efficiency, 0.8, 1e-9);
    /* not measured: the base's */
    assert_close(cc->mem_efficiency[COMET_MEMK_OPTIMIZER],
                 base.compute.mem_efficiency[COMET_MEMK_OPTIMIZER], 1e-12);
    for (size_t i = 0; i < r->n_points; i++)
        if (r->points[i].group == COMET_CALIB_ATTENTION)
            assert_true(fabs(r->points[i].residual) < 1e-9);
    calib_free(r, &rows);

    /* causal rows alone: one value per pass, no causal pair (the base's,
     * whatever it had, does not survive a refit of the shape) */
    n = (size_t)snprintf(csv, sizeof csv, "kind,batch,heads,seq,head_dim,causal,pass,seconds\n");
    double w = 0.5 * 4.0 * 2 * 16 * 4096.0 * 4096.0 * 128;
    n += (size_t)snprintf(csv + n, sizeof csv - n,
                          "attention,2,16,4096,128,true,fwd,%.17g\n"
                          "attention,2,16,4096,128,true,fwd_bwd,%.17g\n",
                          w / (peak * 0.47) + 3e-6, 3.0 * w / (peak * 0.36) + 6e-6);
    r = fit_kernels(&base, csv, 0, &rows);
    cc = &r->system.compute;
    assert_int_equal(cc->n_attn_eff, 1);
    assert_close(cc->attn_eff[0].forward, 0.47, 1e-9);
    assert_close(cc->attn_eff[0].forward_backward, 0.36, 1e-9);
    assert_true(cc->attn_eff[0].causal_forward == 0.0);
    assert_true(cc->attn_eff[0].causal_forward_backward == 0.0);
    calib_free(r, &rows);
}

/* A kernel file of examples/calibrate/, read. */
static void read_example_kernels(const char *file, comet_kernel_rows *rows, comet_error *err)
{
    char path[512];
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(path, sizeof path, "%s/../examples/calibrate/%s", dir ? dir : "tests", file);
    memset(rows, 0, sizeof *rows);
    comet_error_clear(err);
    assert_int_equal(comet_kernels_read_file(path, rows, err), COMET_OK);
}

/* The h100 and h200 presets are the rounded fits of their measured kernel
 * files (the presets' comments say so): a refit gives their values back
 * within the rounding, and the kernel-rate spread is the RMS of the kernel
 * rows' residuals. */
static void check_preset_fit(const char *system, const char *file)
{
    comet_kernel_rows rows;
    comet_error err;
    read_example_kernels(file, &rows, &err);
    comet_system base = preset(system);
    comet_calib_request req = {.base = &base, .kernels = &rows};
    comet_calib_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(comet_calibrate(&req, &r, &err), COMET_OK);
    const comet_compute *cc = &r.system.compute, *was = &base.compute;
    assert_int_equal(cc->n_gemm_eff, was->n_gemm_eff);
    for (int i = 0; i < cc->n_gemm_eff; i++)
        assert_close(cc->gemm_eff[i].efficiency, was->gemm_eff[i].efficiency, 0.01);
    assert_close(cc->gemm_k_overhead, was->gemm_k_overhead, 0.01);
    assert_true(fabs(cc->fp8_gemm_efficiency - was->fp8_gemm_efficiency) < 5e-4);
    assert_int_equal(cc->n_attn_eff, was->n_attn_eff);
    for (int i = 0; i < cc->n_attn_eff; i++) {
        const comet_attn_point *p = &cc->attn_eff[i], *q = &was->attn_eff[i];
        assert_true(p->seq == q->seq && p->head_dim == q->head_dim);
        assert_true(fabs(p->forward - q->forward) < 5e-4);
        assert_true(fabs(p->forward_backward - q->forward_backward) < 5e-4);
        assert_true(fabs(p->causal_forward - q->causal_forward) < 5e-4);
        assert_true(fabs(p->causal_forward_backward - q->causal_forward_backward) < 5e-4);
    }
    assert_true(fabs(cc->efficiency_spread - was->efficiency_spread) < 5e-4);
    double sum = 0.0;
    int n = 0;
    for (size_t i = 0; i < r.n_points; i++)
        if (r.points[i].group != COMET_CALIB_NETWORK) {
            sum += r.points[i].residual * r.points[i].residual;
            n++;
        }
    assert_true(n > 0);
    assert_close(cc->efficiency_spread, sqrt(sum / n), 1e-12);
    free(test_system_round_trip(&r.system));
    comet_calib_result_free(&r);
    comet_kernel_rows_free(&rows);
}

/* A preset's flash2 curve is the fit of its FlashAttention 2 rows with
 * --attention-kernel flash2: the points within the rounding, the system's
 * own (cuDNN) curve and its kernel-rate spread untouched. */
static void check_flash2_fit(const char *system, const char *file)
{
    comet_kernel_rows rows;
    comet_error err;
    read_example_kernels(file, &rows, &err);
    comet_system base = preset(system);
    comet_calib_request req = {.base = &base, .kernels = &rows,
                               .attention_kernel = COMET_ATTN_FLASH2};
    comet_calib_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(comet_calibrate(&req, &r, &err), COMET_OK);
    const comet_compute *cc = &r.system.compute, *was = &base.compute;
    int n = was->n_attn_alt[COMET_ATTN_FLASH2];
    assert_int_equal(n, 14);
    assert_int_equal(cc->n_attn_alt[COMET_ATTN_FLASH2], n);
    for (int i = 0; i < n; i++) {
        const comet_attn_point *p = &cc->attn_alt[COMET_ATTN_FLASH2][i];
        const comet_attn_point *q = &was->attn_alt[COMET_ATTN_FLASH2][i];
        assert_true(p->seq == q->seq && p->head_dim == q->head_dim);
        assert_true(fabs(p->forward - q->forward) < 5e-4);
        assert_true(fabs(p->forward_backward - q->forward_backward) < 5e-4);
        assert_true(fabs(p->causal_forward - q->causal_forward) < 5e-4);
        assert_true(fabs(p->causal_forward_backward - q->causal_forward_backward) < 5e-4);
    }
    assert_memory_equal(cc->attn_eff, was->attn_eff, sizeof was->attn_eff);
    assert_true(cc->efficiency_spread == was->efficiency_spread);
    assert_non_null(strstr(r.params[0].key, "compute.attention_kernels.flash2[0]."));
    comet_calib_result_free(&r);
    comet_kernel_rows_free(&rows);
}

static void test_presets_are_fits(void **state)
{
    (void)state;
    check_preset_fit("h100-80g-dgx", "h100-kernels-measured.csv");
    check_preset_fit("h200-dgx", "h200-kernels.csv");
    check_flash2_fit("h100-80g-dgx", "h100-attention-flash.csv");
    check_flash2_fit("h200-dgx", "h200-attention-flash.csv");
}

/* The transcription of h100-kernels.md (its ranges' ends as rows) fits
 * without error, and its GEMM rows give the constants the ranges imply:
 * 8192^3 at 690-750 TFLOP/s and 512-token weight gradients at 450-550. */
static void test_h100_transcription(void **state)
{
    (void)state;
    comet_kernel_rows rows;
    comet_error err;
    read_example_kernels("h100-kernels.csv", &rows, &err);
    comet_system base = preset("h100-80g-dgx");
    base.compute.kernel_launch = 0.0; /* [K]'s rates are whole kernel times */
    comet_calib_request req = {.base = &base, .kernels = &rows};
    comet_calib_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(comet_calibrate(&req, &r, &err), COMET_OK);
    const comet_compute *cc = &r.system.compute;
    assert_close(cc->gemm_eff[0].efficiency, 0.750, 0.02);
    assert_close(cc->gemm_k_overhead, 247.0, 0.05);
    assert_string_equal(r.system.name, "h100-80g-dgx-calibrated");
    comet_calib_result_free(&r);
    comet_kernel_rows_free(&rows);
}

/* ---- training steps --------------------------------------------------------------- */

/* Two steps "measured" as the h100 preset prices them with its kernels at
 * 0.8 of their own rates: --steps recovers 0.8, prices both steps back
 * exactly, and keeps every other key. */
static void test_steps_recover_framework(void **state)
{
    (void)state;
    comet_system base = preset("h100-80g-dgx");
    comet_system slow = base;
    slow.compute.framework_efficiency = 0.8;
    const char *jobs[2][2] = {{"mixtral-8x7b", "{tp: 1, dp: 8, ep: 8, global_batch: 32, microbatch: 1}"},
                              {"gpt3-175b",
                               "{tp: 8, pp: 8, dp: 1, global_batch: 16, microbatch: 1, sp: "
                               "true}"}};
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "validation:\n  name: mine\n  rows:\n");
    for (int i = 0; i < 2; i++) {
        char row[512];
        snprintf(row, sizeof row,
                 "    - id: R%d\n      source: here\n      notes: synthetic\n"
                 "      model: %s\n      system: h100-80g-dgx\n      strategy: %s\n"
                 "      measured: {step_time: \"1 s\"}\n",
                 i, jobs[i][0], jobs[i][1]);
        n += (size_t)snprintf(text + n, sizeof text - n, "%s", row);
    }
    comet_error err;
    comet_validation_table *t;
    assert_int_equal(comet_validation_read_text(text, n, "steps.yaml", &t, &err), COMET_OK);
    for (int i = 0; i < 2; i++) {
        comet_result r;
        assert_int_equal(comet_estimate(&t->rows[i].job.model, &slow, &t->rows[i].job.strategy,
                                        &r, &err),
                         COMET_OK);
        t->rows[i].measured.value = r.step_time; /* what "measured" says */
    }
    comet_calib_request req = {.base = &base, .steps = t};
    comet_calib_result out;
    memset(&out, 0, sizeof out);
    assert_int_equal(comet_calibrate(&req, &out, &err), COMET_OK);
    assert_close(out.system.compute.framework_efficiency, 0.8, 1e-6);
    assert_int_equal(out.n_params, 1);
    assert_string_equal(out.params[0].key, "compute.framework_efficiency");
    assert_close(out.params[0].base, 1.0, 1e-12);
    assert_int_equal(out.n_points, 2);
    for (size_t i = 0; i < out.n_points; i++) {
        assert_int_equal(out.points[i].group, COMET_CALIB_STEP);
        assert_true(fabs(out.points[i].residual) < 1e-5);
    }
    out.system.compute.framework_efficiency = 0.0;
    out.system.compute.efficiency_spread = base.compute.efficiency_spread;
    strcpy(out.system.name, base.name);
    assert_memory_equal(&out.system.compute, &base.compute, sizeof base.compute);
    comet_calib_result_free(&out);

    /* a step the system cannot run names the row's key */
    t->rows[1].job.strategy.tp = 7;
    memset(&out, 0, sizeof out);
    assert_int_equal(comet_calibrate(&req, &out, &err), COMET_EINPUT);
    assert_non_null(strstr(err.message, "step R1: "));
    assert_int_equal(out.step_row, 1);
    comet_validation_locate(t, out.step_row, &err);
    assert_string_equal(err.key, "validation.rows[1].strategy.tp");
    assert_int_equal(err.line, 16);
    comet_calib_result_free(&out);
    comet_validation_free(t);
}

/* ---- nccl-tests ----------------------------------------------------------------- */

static void read_nccl(const char *text, comet_collective forced, comet_nccl_runs *runs)
{
    memset(runs, 0, sizeof *runs);
    comet_error err;
    comet_error_clear(&err);
    if (comet_nccl_read_text(text, strlen(text), "n.txt", forced, runs, &err)) {
        char line[600];
        fail_msg("%s", comet_error_format(&err, line, sizeof line));
    }
}

static void expect_nccl_error(const char *text, comet_collective forced, const char *line)
{
    comet_nccl_runs runs;
    memset(&runs, 0, sizeof runs);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_nccl_read_text(text, strlen(text), "n.txt", forced, &runs, &err),
                     COMET_EINPUT);
    char got[600];
    comet_error_format(&err, got, sizeof got);
    if (strcmp(got, line) != 0)
        fail_msg("got      %s\nexpected %s", got, line);
    comet_nccl_runs_free(&runs);
}

static void test_nccl_reads_sample(void **state)
{
    (void)state;
    char path[512];
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(path, sizeof path, "%s/data/nccl-all-reduce-h100x8.txt", dir ? dir : "tests");
    comet_nccl_runs runs;
    memset(&runs, 0, sizeof runs);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_nccl_read_file(path, COMET_COLL_NONE, &runs, &err), COMET_OK);
    assert_int_equal(runs.n, 1);
    const comet_nccl_series *s = &runs.series[0];
    assert_int_equal(s->collective, COMET_COLL_ALL_REDUCE);
    assert_int_equal(s->ranks, 8);
    assert_int_equal(s->n, 31);
    assert_int_equal(s->rows[0].line, 18);
    assert_true(s->rows[0].bytes == 8);
    assert_close(s->rows[0].seconds, 0.5 * (22.82 + 21.96) * 1e-6, 1e-12);
    assert_true(s->rows[30].bytes == 8589934592.0);
    assert_close(s->rows[30].seconds, 0.5 * (42216 + 41271) * 1e-6, 1e-12);
    comet_nccl_runs_free(&runs);
}

static void test_nccl_variants(void **state)
{
    (void)state;
    /* no header, an older layout without root, N/A in #wrong, NCCL's log
     * lines, size-0 rows, the collective from the command line echoed */
    comet_nccl_runs runs;
    read_nccl("$ mpirun -np 4 ./build/alltoall_perf -b 8 -e 64\n"
              "node1:123:123 [0] NCCL INFO Bootstrap : Using eth0\n"
              "#  Rank  0 Group  0 Pid 1 on n device 0 [0x1] GPU\n"
              "#  Rank  3 Group  0 Pid 1 on n device 3 [0x4] GPU\n"
              "#       size         count      type   redop     time   algbw   busbw  "
              "#wrong     time   algbw   busbw  #wrong\n"
              "           0             0     float    none     0.10    0.00    0.00    N/A"
              "     0.09    0.00    0.00    N/A\n"
              "          32             8     float    none    11.00    0.00    0.00    N/A"
              "      N/A    0.00    0.00    N/A\n"
              "          64            16     float    none    12.00    0.01    0.00    N/A"
              "    14.00    0.00    0.00    N/A\n",
              COMET_COLL_NONE, &runs);
    assert_int_equal(runs.n, 1);
    assert_int_equal(runs.series[0].collective, COMET_COLL_ALL_TO_ALL);
    assert_int_equal(runs.series[0].ranks, 4);
    assert_int_equal(runs.series[0].n, 2);
    assert_close(runs.series[0].rows[0].seconds, 11e-6, 1e-12);
    assert_close(runs.series[0].rows[1].seconds, 13e-6, 1e-12);
    comet_nccl_runs_free(&runs);

    /* two runs in one file */
    read_nccl("# Collective test starting: all_gather_perf\n"
              "        1024           32     float    none      -1    20.0   0 0 0   21.0   0 0 0\n"
              "# Collective test starting: reduce_scatter_perf\n"
              "        1024           32     float     sum      -1    30.0   0 0 0   30.0   0 0 0\n",
              COMET_COLL_NONE, &runs);
    assert_int_equal(runs.n, 2);
    assert_int_equal(runs.series[0].collective, COMET_COLL_ALL_GATHER);
    assert_int_equal(runs.series[1].collective, COMET_COLL_REDUCE_SCATTER);
    assert_close(runs.series[1].rows[0].seconds, 30e-6, 1e-12);
    comet_nccl_runs_free(&runs);

    /* a collective given wins over none said */
    read_nccl("    1024 32 float sum -1 20.0 0 0 0 21.0 0 0 0\n", COMET_COLL_ALL_REDUCE, &runs);
    assert_int_equal(runs.series[0].collective, COMET_COLL_ALL_REDUCE);
    comet_nccl_runs_free(&runs);

    expect_nccl_error("    1024 32 float sum -1 20.0 0 0 0 21.0 0 0 0\n", COMET_COLL_NONE,
                      "n.txt:1: cannot tell the collective (no \"# Collective test starting:\" "
                      "line); name it with --nccl-collective");
    expect_nccl_error("# Collective test starting: all_reduce_perf\n"
                      "    1024 32 float sum -1 fast 0 0 0 fast 0 0 0\n",
                      COMET_COLL_NONE,
                      "n.txt:2:26: column 'time': expected a time in us, got \"fast\"");
    expect_nccl_error("# Collective test starting: all_reduce_perf\n    1024 32 float\n",
                      COMET_COLL_NONE,
                      "n.txt:2:13: a result row with 3 fields; the column header has 13");
    expect_nccl_error("# Collective test starting: sendrecv_perf\n", COMET_COLL_NONE,
                      "n.txt:1:29: sendrecv_perf: comet prices all_reduce, all_gather, "
                      "reduce_scatter and all_to_all (alltoall_perf)");
    expect_nccl_error("# Collective test starting: all_reduce_perf\n# nothing ran\n",
                      COMET_COLL_NONE,
                      "n.txt: no result rows (is this what an nccl-tests binary printed?)");
}

/* nccl-tests-like rows priced on `truth` (a system whose dimension d has
 * the latency and efficiency to recover), in a series of collective c. */
static void synthetic_series(const comet_system *truth, int d, comet_collective c, int64_t n,
                             comet_nccl_series *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->file, sizeof s->file, "synthetic-%s", comet_collective_name(c));
    s->collective = c;
    s->ranks = n;
    s->n = 31;
    s->rows = calloc(s->n, sizeof *s->rows);
    assert_non_null(s->rows);
    for (size_t i = 0; i < s->n; i++) {
        comet_coll_price p;
        double bytes = 8.0 * pow(2.0, (double)i);
        assert_int_equal(comet_collective_price_on(truth, d, c, n, bytes, &p, NULL), COMET_OK);
        s->rows[i] = (comet_nccl_row){(int)i + 1, bytes, p.time};
    }
}

static comet_calib_result *fit_nccl(const comet_system *base, comet_nccl_series *s, size_t n,
                                    int d, int64_t npus, comet_calib_net_mode mode)
{
    comet_calib_nccl placed[4];
    for (size_t i = 0; i < n; i++)
        placed[i] = (comet_calib_nccl){&s[i], d, npus};
    comet_calib_request req = {.base = base, .nccl = placed, .n_nccl = n, .net_mode = mode};
    comet_calib_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    comet_error err;
    comet_error_clear(&err);
    if (comet_calibrate(&req, r, &err)) {
        char line[600];
        fail_msg("%s", comet_error_format(&err, line, sizeof line));
    }
    /* every note is written text or empty, never what was on the stack */
    for (size_t i = 0; i < r->n_params; i++)
        for (const char *ch = r->params[i].note; *ch; ch++)
            if (*ch < 0x20 || *ch > 0x7e)
                fail_msg("%s: note holds byte 0x%02x", r->params[i].key, (unsigned char)*ch);
    return r;
}

static void test_nccl_fit_recovers(void **state)
{
    (void)state;
    for (int proto = 0; proto < 2; proto++) {
        comet_system base = preset("h100-80g-dgx");
        base.dims[0].protocols = proto ? COMET_PROTOCOLS_NCCL_NVLINK : COMET_PROTOCOLS_NONE;
        memset(&base.dims[0].bus, 0, sizeof base.dims[0].bus); /* no measured curve */
        comet_system truth = base;
        truth.dims[0].latency = 3.5e-6;
        truth.dims[0].efficiency = 0.83;
        comet_nccl_series s[2];
        synthetic_series(&truth, 0, COMET_COLL_ALL_REDUCE, 8, &s[0]);
        synthetic_series(&truth, 0, COMET_COLL_ALL_GATHER, 8, &s[1]);
        comet_calib_result *r = fit_nccl(&base, s, 2, 0, 8, COMET_CALIB_NET_FIT);
        assert_close(r->system.dims[0].latency, 3.5e-6, 1e-6);
        assert_close(r->system.dims[0].efficiency, 0.83, 1e-6);
        assert_true(r->system.dims[1].latency == base.dims[1].latency); /* not measured */
        assert_int_equal(r->n_points, 62);
        for (size_t i = 0; i < r->n_points; i++)
            assert_true(fabs(r->points[i].residual) < 1e-6);
        assert_close(param(r, "network[0].latency")->base, base.dims[0].latency, 1e-12);
        comet_calib_result_free(r);
        free(r);
        free(s[0].rows);
        free(s[1].rows);
    }

    /* the infiniband dimension (auto size) with 16 NPUs, noise +-2 % */
    comet_system base = preset("h100-80g-dgx");
    comet_system truth = base;
    truth.dims[1].latency = 8e-6;
    truth.dims[1].efficiency = 0.9;
    comet_nccl_series s;
    synthetic_series(&truth, 1, COMET_COLL_REDUCE_SCATTER, 16, &s);
    uint64_t seed = 7;
    for (size_t i = 0; i < s.n; i++)
        s.rows[i].seconds *= 1.0 + 0.02 * noise(&seed);
    comet_calib_result *r = fit_nccl(&base, &s, 1, 1, 16, COMET_CALIB_NET_FIT);
    assert_close(r->system.dims[1].latency, 8e-6, 0.05);
    assert_close(r->system.dims[1].efficiency, 0.9, 0.03);
    comet_calib_result_free(r);
    free(r);
    free(s.rows);
}

/* Curve mode: the measured bus bandwidth priced back at its own sizes. */
static void test_nccl_curve_mode(void **state)
{
    (void)state;
    comet_system base = preset("h100-80g-dgx");
    comet_system truth = base;
    truth.dims[0].protocols = COMET_PROTOCOLS_NCCL_NVLINK;
    comet_nccl_series s;
    synthetic_series(&truth, 0, COMET_COLL_ALL_REDUCE, 8, &s);
    comet_calib_result *r = fit_nccl(&base, &s, 1, 0, 8, COMET_CALIB_NET_CURVE);
    const comet_net_dim *d = &r->system.dims[0];
    assert_int_equal(d->bus.n_curves, 1);
    assert_int_equal(d->bus.npus, 8);
    assert_int_equal(d->bus.curve[COMET_COLL_ALL_REDUCE].n_points, 31);
    assert_true(d->latency == base.dims[0].latency); /* left as it was */
    for (size_t i = 0; i < r->n_points; i++) /* the curve's points hold 5 digits */
        assert_true(fabs(r->points[i].residual) < 1e-4);
    free(test_system_round_trip(&r->system));
    comet_calib_result_free(r);
    free(r);
    free(s.rows);
}

void suite_calibrate(test_tally *t)
{
    const struct CMUnitTest calibrate[] = {
        cmocka_unit_test(test_writer_presets_round_trip),
        cmocka_unit_test(test_writer_every_key),
        cmocka_unit_test(test_writer_awkward_values),
        cmocka_unit_test(test_kernel_csv_reads),
        cmocka_unit_test(test_kernel_csv_errors),
        cmocka_unit_test(test_gemm_recovers_exact),
        cmocka_unit_test(test_gemm_recovers_with_noise),
        cmocka_unit_test(test_gemm_size_curve),
        cmocka_unit_test(test_gemm_fp8_share),
        cmocka_unit_test(test_attention_and_memory),
        cmocka_unit_test(test_presets_are_fits),
        cmocka_unit_test(test_h100_transcription),
        cmocka_unit_test(test_steps_recover_framework),
        cmocka_unit_test(test_nccl_reads_sample),
        cmocka_unit_test(test_nccl_variants),
        cmocka_unit_test(test_nccl_fit_recovers),
        cmocka_unit_test(test_nccl_curve_mode),
    };
    RUN_GROUP(t, calibrate);
}
