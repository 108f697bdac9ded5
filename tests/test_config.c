/* Config reader: units, YAML and JSON documents, presets, and the exact
 * one-line errors (file:line:col: key: message) users see for bad input,
 * including positions attached later through the source map. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/knobs.h"
#include "tests.h"
#include "../src/config/units.h"
#include "../src/vocab/vocab.h"

/* ---- helpers ---------------------------------------------------------- */

static comet_job *new_job(void)
{
    comet_job *job = malloc(sizeof *job);
    assert_non_null(job);
    comet_job_init(job);
    return job;
}

static comet_job *read_ok(const char *text, const char *file)
{
    comet_job *job = new_job();
    comet_error err;
    comet_error_clear(&err);
    comet_status st = comet_config_read_text(text, strlen(text), file, job, &err);
    if (st != COMET_OK) {
        char line[600];
        fail_msg("unexpected error: %s", comet_error_format(&err, line, sizeof line));
    }
    return job;
}

/* Read text as file and check the rendered error line. */
static void expect_error(const char *file, const char *text, const char *expected)
{
    comet_job *job = new_job();
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_config_read_text(text, strlen(text), file, job, &err), COMET_EINPUT);
    char line[600];
    assert_string_equal(comet_error_format(&err, line, sizeof line), expected);
    free(job);
}

static double unit(const char *text, cfg_unit_kind kind)
{
    double v = -1;
    assert_int_equal(cfg_units_parse(text, kind, &v, NULL), CFG_UNITS_OK);
    return v;
}

static const char *repo_path(char *out, size_t cap, const char *rel)
{
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(out, cap, "%s/../%s", dir ? dir : "tests", rel);
    return out;
}

/* ---- units -------------------------------------------------------------- */

static void test_units_bytes(void **state)
{
    (void)state;
    assert_true(unit("80 GiB", CFG_UNIT_BYTES) == 85899345920.0);
    assert_true(unit("40 GB", CFG_UNIT_BYTES) == 40e9);
    assert_true(unit("512 MiB", CFG_UNIT_BYTES) == 536870912.0);
    assert_true(unit("1 KiB", CFG_UNIT_BYTES) == 1024.0);
    assert_true(unit("1 TiB", CFG_UNIT_BYTES) == 1099511627776.0);
    assert_true(unit("3 B", CFG_UNIT_BYTES) == 3.0);
    assert_true(unit("2 KB", CFG_UNIT_BYTES) == 2e3);
    assert_true(unit("1.5 MB", CFG_UNIT_BYTES) == 1.5e6);
    assert_true(unit("2 TB", CFG_UNIT_BYTES) == 2e12);
    assert_true(unit("80GiB", CFG_UNIT_BYTES) == 85899345920.0);
    assert_true(unit("  4 GB  ", CFG_UNIT_BYTES) == 4e9);
}

static void test_units_bandwidth(void **state)
{
    (void)state;
    assert_true(unit("300 GB/s", CFG_UNIT_BANDWIDTH) == 300e9);
    assert_true(unit("25 GiB/s", CFG_UNIT_BANDWIDTH) == 25.0 * 1073741824.0);
    assert_true(unit("200 Gb/s", CFG_UNIT_BANDWIDTH) == 25e9);
    assert_true(unit("400 Gb/s", CFG_UNIT_BANDWIDTH) == 50e9);
    assert_true(unit("2 TB/s", CFG_UNIT_BANDWIDTH) == 2e12);
    assert_true(unit("100 MB/s", CFG_UNIT_BANDWIDTH) == 1e8);
    assert_close(unit("3.35 TB/s", CFG_UNIT_BANDWIDTH), 3.35e12, 1e-12);
}

static void test_units_time(void **state)
{
    (void)state;
    assert_close(unit("500 ns", CFG_UNIT_TIME), 500e-9, 1e-12);
    assert_close(unit("1.5 us", CFG_UNIT_TIME), 1.5e-6, 1e-12);
    assert_close(unit("1.5 \xc2\xb5s", CFG_UNIT_TIME), 1.5e-6, 1e-12);
    assert_close(unit("2 ms", CFG_UNIT_TIME), 2e-3, 1e-12);
    assert_true(unit("1 s", CFG_UNIT_TIME) == 1.0);
}

/* Every sane range's message is written in units the parser takes, so the
 * values a message names can be typed back: each end parses, in range, and
 * one step past each end is out. */
static void test_units_range_ends_parse(void **state)
{
    (void)state;
    static const struct {
        cfg_unit_kind kind;
        const char *lo, *hi, *below, *above;
        double lo_si, hi_si;
    } ends[] = {
        {CFG_UNIT_BYTES, "1 B", "1 EB", "0.5 B", "2 EB", 1, 1e18},
        {CFG_UNIT_BANDWIDTH, "1 KB/s", "10 PB/s", "999 B/s", "11 PB/s", 1e3, 1e16},
        {CFG_UNIT_TIME, "1 ps", "1000 s", "0.5 ps", "1001 s", 1e-12, 1e3},
        {CFG_UNIT_FLOP_RATE, "1 MFLOPS", "10 EFLOPS", "999 KFLOPS", "11 EFLOPS", 1e6, 1e19},
        {CFG_UNIT_FLOPS, "1 FLOP", "1 ZFLOP", "0.5 FLOP", "2 ZFLOP", 1, 1e21},
    };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        char range[64];
        snprintf(range, sizeof range, "%s to %s", ends[i].lo, ends[i].hi);
        assert_string_equal(cfg_units_range(ends[i].kind), range);
        assert_close(unit(ends[i].lo, ends[i].kind), ends[i].lo_si, 1e-12);
        assert_close(unit(ends[i].hi, ends[i].kind), ends[i].hi_si, 1e-12);
        assert_true(cfg_units_in_range(ends[i].kind, unit(ends[i].lo, ends[i].kind)));
        assert_true(cfg_units_in_range(ends[i].kind, unit(ends[i].hi, ends[i].kind)));
        assert_false(cfg_units_in_range(ends[i].kind, unit(ends[i].below, ends[i].kind)));
        assert_false(cfg_units_in_range(ends[i].kind, unit(ends[i].above, ends[i].kind)));
    }
}

static void test_units_flops(void **state)
{
    (void)state;
    assert_true(unit("312 TFLOPS", CFG_UNIT_FLOP_RATE) == 312e12);
    assert_true(unit("1 PFLOPS", CFG_UNIT_FLOP_RATE) == 1e15);
    assert_close(unit("19.5 TFLOPS", CFG_UNIT_FLOP_RATE), 19.5e12, 1e-12);
    assert_true(unit("5 GFLOPS", CFG_UNIT_FLOP_RATE) == 5e9);
    assert_true(unit("1 GFLOP", CFG_UNIT_FLOPS) == 1e9);
    assert_close(unit("2.5 TFLOP", CFG_UNIT_FLOPS), 2.5e12, 1e-12);
    assert_true(unit("1e9 FLOP", CFG_UNIT_FLOPS) == 1e9);
    assert_true(unit("100 MFLOP", CFG_UNIT_FLOPS) == 1e8);
}

static void test_units_rejects(void **state)
{
    (void)state;
    double v = 7;
    const char *at = NULL;
    assert_int_equal(cfg_units_parse("80", CFG_UNIT_BYTES, &v, NULL), CFG_UNITS_NO_UNIT);
    assert_int_equal(cfg_units_parse("80 GiBs", CFG_UNIT_BYTES, &v, &at), CFG_UNITS_BAD_UNIT);
    assert_string_equal(at, "GiBs");
    assert_int_equal(cfg_units_parse("GiB", CFG_UNIT_BYTES, &v, NULL), CFG_UNITS_NOT_NUMBER);
    assert_int_equal(cfg_units_parse("80 GB/s", CFG_UNIT_BYTES, &v, NULL), CFG_UNITS_BAD_UNIT);
    assert_int_equal(cfg_units_parse("80 GB", CFG_UNIT_BANDWIDTH, &v, NULL), CFG_UNITS_BAD_UNIT);
    assert_int_equal(cfg_units_parse("1 TFLOP", CFG_UNIT_FLOP_RATE, &v, NULL), CFG_UNITS_BAD_UNIT);
    assert_int_equal(cfg_units_parse("1e400 GB", CFG_UNIT_BYTES, &v, NULL), CFG_UNITS_RANGE);
    assert_int_equal(cfg_units_parse("0x10 GB", CFG_UNIT_BYTES, &v, NULL), CFG_UNITS_BAD_UNIT);
    assert_int_equal(cfg_units_parse("inf GB", CFG_UNIT_BYTES, &v, NULL), CFG_UNITS_NOT_NUMBER);
    assert_int_equal(cfg_units_parse("", CFG_UNIT_TIME, &v, NULL), CFG_UNITS_NOT_NUMBER);
    assert_true(v == 7);   /* untouched on failure */
}

/* ---- documents ---------------------------------------------------------- */

static const char full_yaml[] =
    "model:\n"
    "  name: gpt3-175b\n"
    "  kind: transformer\n"
    "  layers: 96\n"
    "  hidden: 12288\n"
    "  heads: 96\n"
    "  kv_heads: 96\n"
    "  ffn: 49152\n"
    "  seq: 2048\n"
    "  vocab: 51200\n"
    "  gated_mlp: false\n"
    "  tied_embeddings: true\n"
    "  dtype: bf16\n"
    "system:\n"
    "  name: a100-80g-selene\n"
    "  compute:\n"
    "    matrix: {fp16: \"312 TFLOPS\", bf16: \"312 TFLOPS\", tf32: \"156 TFLOPS\"}\n"
    "    vector: {fp16: \"78 TFLOPS\", fp32: \"19.5 TFLOPS\"}\n"
    "    gemm_efficiency:\n"
    "      - {size: \"1 GFLOP\", efficiency: 0.55}\n"
    "      - {size: \"100 GFLOP\", efficiency: 0.80}\n"
    "    vector_efficiency: 0.8\n"
    "  hbm: {capacity: \"80 GiB\", bandwidth: \"2039 GB/s\", efficiency: 0.85}\n"
    "  expansion:\n"
    "    capacity: \"512 GiB\"\n"
    "    bandwidth: \"64 GB/s\"\n"
    "    latency: \"300 ns\"\n"
    "    efficiency: 0.9\n"
    "    attach: per_node\n"
    "    shared_by: 8\n"
    "  network:\n"
    "    - name: nvlink\n"
    "      size: 8\n"
    "      topology: switch\n"
    "      algorithm: ring\n"
    "      bandwidth: \"300 GB/s\"\n"
    "      latency: \"1 us\"\n"
    "      efficiency: 0.8\n"
    "      in_network_reduction: true\n"
    "      cost_per_gbps: 0\n"
    "    - name: ib\n"
    "      size: auto\n"
    "      topology: fully_connected\n"
    "      algorithm: halving_doubling\n"
    "      bandwidth: \"200 Gb/s\"\n"
    "  collective_chunks: 2\n"
    "  cost: {per_npu: 15000, per_gib_hbm: 0, per_gib_expansion: 5}\n"
    "strategy:\n"
    "  tp: 8\n"
    "  pp: 8\n"
    "  dp: 1\n"
    "  sp: true\n"
    "  global_batch: 64\n"
    "  microbatch: 1\n"
    "  interleave: 3\n"
    "  recompute: selective\n"
    "  zero: 1\n"
    "  offload: {optimizer: true, weights: false, activations: false}\n"
    "  overlap: {dp: true, tp: false}\n"
    "  grad_fp32: true\n"
    "  order: [tp, pp, dp]\n"
    "  placement: {tp: [8, 1], pp: [1, 8], dp: [1, 1]}\n";

static const char full_json[] =
    "{\n"
    "\t\"model\": {\"name\": \"gpt3-175b\", \"kind\": \"transformer\", \"layers\": 96,\n"
    "\t\t\"hidden\": 12288, \"heads\": 96, \"kv_heads\": 96, \"ffn\": 49152, \"seq\": 2048,\n"
    "\t\t\"vocab\": 51200, \"gated_mlp\": false, \"tied_embeddings\": true, \"dtype\": \"bf16\"},\n"
    "\t\"system\": {\n"
    "\t\t\"name\": \"a100-80g-selene\",\n"
    "\t\t\"compute\": {\n"
    "\t\t\t\"matrix\": {\"fp16\": \"312 TFLOPS\", \"bf16\": \"312 TFLOPS\", \"tf32\": \"156 TFLOPS\"},\n"
    "\t\t\t\"vector\": {\"fp16\": \"78 TFLOPS\", \"fp32\": \"19.5 TFLOPS\"},\n"
    "\t\t\t\"gemm_efficiency\": [{\"size\": \"1 GFLOP\", \"efficiency\": 0.55},\n"
    "\t\t\t                    {\"size\": \"100 GFLOP\", \"efficiency\": 0.80}],\n"
    "\t\t\t\"vector_efficiency\": 0.8},\n"
    "\t\t\"hbm\": {\"capacity\": \"80 GiB\", \"bandwidth\": \"2039 GB/s\", \"efficiency\": 0.85},\n"
    "\t\t\"expansion\": {\"capacity\": \"512 GiB\", \"bandwidth\": \"64 GB/s\", \"latency\": \"300 ns\",\n"
    "\t\t\t\"efficiency\": 0.9, \"attach\": \"per_node\", \"shared_by\": 8},\n"
    "\t\t\"network\": [\n"
    "\t\t\t{\"name\": \"nvlink\", \"size\": 8, \"topology\": \"switch\", \"algorithm\": \"ring\",\n"
    "\t\t\t \"bandwidth\": \"300 GB/s\", \"latency\": \"1 us\", \"efficiency\": 0.8,\n"
    "\t\t\t \"in_network_reduction\": true, \"cost_per_gbps\": 0},\n"
    "\t\t\t{\"name\": \"ib\", \"size\": \"auto\", \"topology\": \"fully_connected\",\n"
    "\t\t\t \"algorithm\": \"halving_doubling\", \"bandwidth\": \"200 Gb/s\"}\n"
    "\t\t],\n"
    "\t\t\"collective_chunks\": 2,\n"
    "\t\t\"cost\": {\"per_npu\": 15000, \"per_gib_hbm\": 0, \"per_gib_expansion\": 5}\n"
    "\t},\n"
    "\t\"strategy\": {\"tp\": 8, \"pp\": 8, \"dp\": 1, \"sp\": true, \"global_batch\": 64,\n"
    "\t\t\"microbatch\": 1, \"interleave\": 3, \"recompute\": \"selective\", \"zero\": 1,\n"
    "\t\t\"offload\": {\"optimizer\": true, \"weights\": false, \"activations\": false},\n"
    "\t\t\"overlap\": {\"dp\": true, \"tp\": false}, \"grad_fp32\": true,\n"
    "\t\t\"order\": [\"tp\", \"pp\", \"dp\"],\n"
    "\t\t\"placement\": {\"tp\": [8, 1], \"pp\": [1, 8], \"dp\": [1, 1]}}\n"
    "}\n";

static void test_full_document(void **state)
{
    (void)state;
    comet_job *job = read_ok(full_yaml, "full.yaml");
    assert_true(job->has_model && job->has_system && job->has_strategy);
    const comet_model *m = &job->model;
    assert_string_equal(m->name, "gpt3-175b");
    assert_int_equal(m->kind, COMET_MODEL_TRANSFORMER);
    assert_int_equal(m->layers, 96);
    assert_int_equal(m->hidden, 12288);
    assert_int_equal(m->kv_heads, 96);
    assert_int_equal(m->ffn, 49152);
    assert_int_equal(m->vocab, 51200);
    assert_true(m->tied_embeddings && !m->gated_mlp);
    assert_int_equal(m->dtype, COMET_DTYPE_BF16);
    const comet_system *s = &job->system;
    assert_true(s->compute.matrix_flops[COMET_DTYPE_BF16] == 312e12);
    assert_true(s->compute.matrix_flops[COMET_DTYPE_TF32] == 156e12);
    assert_true(s->compute.matrix_flops[COMET_DTYPE_FP32] == 0);
    assert_close(s->compute.vector_flops[COMET_DTYPE_FP32], 19.5e12, 1e-12);
    assert_int_equal(s->compute.n_gemm_eff, 2);
    assert_true(s->compute.gemm_eff[1].flops == 100e9);
    assert_close(s->compute.gemm_eff[1].efficiency, 0.80, 1e-12);
    assert_close(s->compute.vector_efficiency, 0.8, 1e-12);
    assert_true(s->hbm.present && s->hbm.capacity == 85899345920.0);
    assert_true(s->hbm.bandwidth == 2039e9);
    assert_true(s->expansion.present);
    assert_int_equal(s->expansion.attach, COMET_ATTACH_PER_NODE);
    assert_int_equal(s->expansion.shared_by, 8);
    assert_close(s->expansion.latency, 300e-9, 1e-12);
    assert_int_equal(s->n_dims, 2);
    assert_string_equal(s->dims[0].name, "nvlink");
    assert_int_equal(s->dims[0].size, 8);
    assert_true(s->dims[0].in_network_reduction);
    assert_int_equal(s->dims[1].size, 0);
    assert_int_equal(s->dims[1].topology, COMET_TOPO_FULLY_CONNECTED);
    assert_int_equal(s->dims[1].algorithm, COMET_ALGO_HALVING_DOUBLING);
    assert_true(s->dims[1].bandwidth == 25e9);
    assert_close(s->dims[1].efficiency, 1.0, 0);   /* default */
    assert_int_equal(s->collective_chunks, 2);
    assert_true(s->cost_per_npu == 15000 && s->cost_per_gib_expansion == 5);
    const comet_strategy *st = &job->strategy;
    assert_int_equal(st->tp, 8);
    assert_int_equal(st->pp, 8);
    assert_int_equal(st->global_batch, 64);
    assert_int_equal(st->interleave, 3);
    assert_true(st->sp && st->grad_fp32 && st->offload_optimizer && !st->offload_weights);
    assert_true(st->overlap_dp && !st->overlap_tp);
    assert_int_equal(st->recompute, COMET_RECOMPUTE_SELECTIVE);
    assert_int_equal(st->zero_stage, 1);
    /* order [tp, pp, dp]: cp goes right after tp, ep right before dp */
    assert_int_equal(st->order[0], COMET_GROUP_TP);
    assert_int_equal(st->order[1], COMET_GROUP_CP);
    assert_int_equal(st->order[2], COMET_GROUP_PP);
    assert_int_equal(st->order[3], COMET_GROUP_EP);
    assert_int_equal(st->order[4], COMET_GROUP_DP);
    assert_true(st->placement_given);
    assert_int_equal(st->place[COMET_GROUP_TP][0], 8);
    assert_int_equal(st->place[COMET_GROUP_PP][1], 8);
    assert_int_equal(st->place[COMET_GROUP_DP][0], 1);
    assert_int_equal(st->place[COMET_GROUP_TP][5], 1);   /* unused dimensions span 1 */
    free(job);
}

static void test_json_equals_yaml(void **state)
{
    (void)state;
    comet_job *y = read_ok(full_yaml, "full.yaml");
    comet_job *j = read_ok(full_json, "full.json");
    assert_memory_equal(&y->model, &j->model, sizeof y->model);
    assert_memory_equal(&y->system, &j->system, sizeof y->system);
    assert_memory_equal(&y->strategy, &j->strategy, sizeof y->strategy);
    assert_string_equal(j->srcmap.files[j->srcmap.current], "full.json");
    free(y);
    free(j);
}

static void test_layer_list_model(void **state)
{
    (void)state;
    comet_job *job = read_ok("model:\n"
                             "  kind: layers\n"
                             "  sample_tokens: 1\n"
                             "  layer_list:\n"
                             "    - {name: emb, fwd_bytes: \"2 MB\", params: 1.2e9, comm: all_to_all,\n"
                             "       comm_group: dp, comm_bytes: \"1 MB\"}\n"
                             "    - {name: mlp0, count: 4, fwd_flops: \"2 GFLOP\", fwd_bytes: \"1 MB\",\n"
                             "       params: 1000000, act_bytes: \"64 KB\", out_bytes: \"4 KB\",\n"
                             "       tp_sharded: true}\n",
                             "dlrm.yaml");
    const comet_model *m = &job->model;
    assert_int_equal(m->kind, COMET_MODEL_LAYERS);
    assert_int_equal(m->n_layer_kinds, 2);
    assert_string_equal(m->layer_list[0].name, "emb");
    assert_int_equal(m->layer_list[0].count, 1);
    assert_true(m->layer_list[0].params == 1.2e9);
    assert_int_equal(m->layer_list[0].comm, COMET_COLL_ALL_TO_ALL);
    assert_true(m->layer_list[0].comm_bytes == 1e6);
    assert_int_equal(m->layer_list[1].count, 4);
    assert_true(m->layer_list[1].fwd_flops == 2e9);
    assert_true(m->layer_list[1].act_bytes == 64e3);
    assert_true(m->layer_list[1].tp_sharded);
    assert_int_equal(m->layer_list[1].comm, COMET_COLL_NONE);
    free(job);
}

/* Entries given by their shape: read, chained and derived (the formulas
 * are checked in test_workload.c), numeric entries beside them, and the
 * numbers derived again at a new dtype when keys override a preset. */
static void test_layer_list_shapes(void **state)
{
    (void)state;
    /* a preset's shapes at another dtype: every byte count doubles */
    comet_model fp16;
    comet_error err;
    assert_int_equal(comet_preset_model("resnet152", &fp16, &err), COMET_OK);
    assert_int_equal(fp16.dtype, COMET_DTYPE_FP16);
    comet_job *job = read_ok("model: {preset: resnet152, dtype: fp32}\n", "r.yaml");
    for (int i = 0; i < fp16.n_layer_kinds; i++) {
        assert_true(job->model.layer_list[i].act_bytes == 2.0 * fp16.layer_list[i].act_bytes);
        assert_true(job->model.layer_list[i].fwd_bytes == 2.0 * fp16.layer_list[i].fwd_bytes);
        assert_true(job->model.layer_list[i].fwd_flops == fp16.layer_list[i].fwd_flops);
    }
    free(job);
    job = read_ok("model:\n"
                  "  kind: layers\n"
                  "  dtype: fp32\n"
                  "  layer_list:\n"
                  "    - {name: emb, fwd_bytes: \"2 MB\"}\n"
                  "    - {name: c, op: conv, in: [8, 8, 3], out_channels: 4, kernel: 3,\n"
                  "       padding: 1, stride: 2}\n"
                  "    - {name: r, op: relu, count: 2}\n"
                  "    - {name: fc, op: fc, in: [4, 4, 4], out_features: 10}\n",
                  "cnn.yaml");
    const comet_model *m = &job->model;
    assert_int_equal(m->n_layer_kinds, 4);
    assert_int_equal(m->layer_list[0].shape.op, COMET_OP_NONE);
    assert_true(m->layer_list[0].fwd_bytes == 2e6);
    /* conv 8x8x3 -> 4, k 3, p 1, s 2: 4x4x4; 2 * 4*4*4 * 3*9 FLOPs */
    assert_int_equal(m->layer_list[1].shape.op, COMET_OP_CONV);
    assert_int_equal(m->layer_list[1].shape.out[0], 4);
    assert_int_equal(m->layer_list[1].shape.out[2], 4);
    assert_true(m->layer_list[1].fwd_flops == 2.0 * 64 * 27);
    assert_true(m->layer_list[1].params == 4 * 27);
    /* the ReLU takes the conv's output: 64 elements of 4 bytes */
    assert_true(m->layer_list[2].out_bytes == 4.0 * 64);
    /* the fc flattens 4x4x4 = 64 features */
    assert_true(m->layer_list[3].params == 64 * 10);
    assert_true(m->layer_list[3].out_bytes == 4.0 * 10);
    free(job);
}

/* Shapes that do not chain or do not fit, sizes out of range, and keys
 * that do not go with the entry's form, each at its key. */
static void test_layer_list_shape_errors(void **state)
{
    (void)state;
#define LIST "model:\n  kind: layers\n  layer_list:\n"
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [8, 8, 3], out_channels: 16, kernel: 1}\n"
                                "    - {name: b, op: conv, in: [8, 8, 8], out_channels: 16, kernel: 3}\n",
                 "s.yaml:5:27: model.layer_list[1].in: [8, 8, 8] is not what the entry before "
                 "puts out, [8, 8, 16]");
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [2, 2, 3], out_channels: 4, kernel: 5,\n"
                                "       padding: 1}\n",
                 "s.yaml:4:67: model.layer_list[0].kernel: 5 is larger than the padded input "
                 "(2 x 2 with padding 1)");
    expect_error("s.yaml", LIST "    - {name: a, op: pool, in: [4, 4, 4], kernel: 2, padding: 2}\n",
                 "s.yaml:4:62: model.layer_list[0].padding: 2 is more than half the kernel (2): "
                 "a window could hold padding alone");
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [2, 0, 3], out_channels: 4, kernel: 1}\n",
                 "s.yaml:4:35: model.layer_list[0].in[1]: expected a positive integer, got \"0\"");
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [2, 2, 3], out_channels: 4, kernel: 0}\n",
                 "s.yaml:4:67: model.layer_list[0].kernel: expected a positive integer, got \"0\"");
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [2, 2], out_channels: 4, kernel: 1}\n",
                 "s.yaml:4:31: model.layer_list[0].in: expected [height, width, channels] or a "
                 "number of features, got a list of 2");
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [8, 8, 3], out_channels: 4, kernel: 3,\n"
                                "       count: 2}\n",
                 "s.yaml:5:15: model.layer_list[0].count: 2 repeats of a layer that takes "
                 "[8, 8, 3] but puts out [6, 6, 4]");
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [4, 4, 6], out_channels: 8, kernel: 1,\n"
                                "       groups: 4}\n",
                 "s.yaml:5:16: model.layer_list[0].groups: 4 must divide both the 6 input and "
                 "the 8 output channels");
    expect_error("s.yaml", LIST "    - {name: a, op: conv, in: [4, 4, 4], kernel: 1}\n",
                 "s.yaml:4:7: model.layer_list[0]: missing key \"out_channels\" (op conv needs "
                 "it)");
    expect_error("s.yaml", LIST "    - {name: a, op: relu}\n",
                 "s.yaml:4:7: model.layer_list[0]: missing key \"in\": the first entry has no "
                 "entry before it to take its input from");
    expect_error("s.yaml", LIST "    - {name: a, fwd_flops: \"1 GFLOP\"}\n"
                                "    - {name: b, op: relu}\n",
                 "s.yaml:5:7: model.layer_list[1]: missing key \"in\": the entry before is given "
                 "by its numbers, not its shape");
    expect_error("s.yaml", LIST "    - {name: a, op: fc, in: 64, out_features: 8, params: 10}\n",
                 "s.yaml:4:58: model.layer_list[0].params: comet computes it from the shape "
                 "(op: fc): leave it out");
    expect_error("s.yaml", LIST "    - {name: a, fwd_flops: \"1 GFLOP\", kernel: 3}\n",
                 "s.yaml:4:47: model.layer_list[0].kernel: describes a shape: give op (conv, "
                 "pool, batchnorm, relu, fc or bottleneck) too");
    expect_error("s.yaml", LIST "    - {name: a, op: batchnorm, in: [4, 4, 4], stride: 2}\n",
                 "s.yaml:4:55: model.layer_list[0].stride: does not apply to op: batchnorm (its "
                 "keys: in)");
    expect_error("s.yaml", LIST "    - {name: a, op: fc, in: 64, out_channels: 8}\n",
                 "s.yaml:4:47: model.layer_list[0].out_channels: does not apply to op: fc (its "
                 "keys: in, out_features, bias)");
    expect_error("s.yaml", LIST "    - {name: a, op: pool, in: [4, 4, 4], global: true, kernel: 2}\n",
                 "s.yaml:4:64: model.layer_list[0].kernel: a global pool takes the whole input "
                 "as its window: leave kernel, stride and padding out");
#undef LIST
}

/* An error leaves the job exactly as it was. */
static void test_all_or_nothing(void **state)
{
    (void)state;
    comet_job *job = read_ok("strategy: {tp: 4}\n", "a.yaml");
    comet_job *before = malloc(sizeof *before);
    assert_non_null(before);
    memcpy(before, job, sizeof *job);
    const char bad[] = "strategy: {tp: 2, pp: 0}\n";
    comet_error err;
    assert_int_equal(comet_config_read_text(bad, strlen(bad), "b.yaml", job, &err), COMET_EINPUT);
    assert_memory_equal(before, job, sizeof *job);
    /* a later document replaces only the sections it has */
    const char more[] = "model: gpt3-175b\n";
    assert_int_equal(comet_config_read_text(more, strlen(more), "a.yaml", job, &err), COMET_OK);
    assert_int_equal(job->strategy.tp, 4);
    assert_int_equal(job->model.layers, 96);
    free(before);
    free(job);
}

static void test_read_file(void **state)
{
    (void)state;
    char path[512];
    comet_job *job = new_job();
    comet_error err;
    comet_error_clear(&err);
    repo_path(path, sizeof path, "presets/strategies/gpt3-175b-selene.yaml");
    assert_int_equal(comet_config_read_file(path, job, &err), COMET_OK);
    assert_true(job->has_strategy && !job->has_model);
    assert_int_equal(job->strategy.tp, 8);
    assert_int_equal(job->strategy.pp, 8);
    assert_int_equal(job->strategy.interleave, 3);
    assert_true(job->strategy.sp);
    assert_int_equal(job->strategy.recompute, COMET_RECOMPUTE_SELECTIVE);
    assert_string_equal(job->srcmap.files[job->srcmap.current], path);
    assert_int_equal(comet_config_read_file("no/such/file.yaml", job, &err), COMET_EINPUT);
    char line[600];
    assert_string_equal(comet_error_format(&err, line, sizeof line),
                        "no/such/file.yaml: cannot read: No such file or directory");
    free(job);
}

/* ---- presets ------------------------------------------------------------ */

typedef struct model_expect {
    const char *name;
    int64_t layers, hidden, heads, kv_heads, ffn, seq, vocab;
    bool gated, tied;
    double params;
} model_expect;

static void test_model_presets(void **state)
{
    (void)state;
    static const model_expect want[] = {
        {"megatron-22b", 48, 6144, 64, 64, 24576, 2048, 51200, false, true, 22e9},
        {"gpt3-175b", 96, 12288, 96, 96, 49152, 2048, 51200, false, true, 175e9},
        /* Turing-NLG: 17 B (Microsoft's post); comet counts 17.18 B */
        {"transformer-17b", 78, 4256, 28, 28, 17024, 1024, 51200, false, true, 17e9},
        {"turing-530b", 105, 20480, 128, 128, 81920, 2048, 51200, false, true, 530e9},
        {"megatron-1t", 128, 25600, 160, 160, 102400, 2048, 51200, false, true, 1.0e12},
        {"transformer-1t", 128, 25600, 160, 160, 102400, 2048, 51200, false, true, 1.0e12},
        {"llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000, true, false, 69e9},
        {"llama3-405b", 126, 16384, 128, 8, 53248, 8192, 128256, true, false, 405e9},
    };
    comet_error err;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        comet_model m;
        assert_int_equal(comet_preset_model(want[i].name, &m, &err), COMET_OK);
        assert_string_equal(m.name, want[i].name);
        assert_int_equal(m.kind, COMET_MODEL_TRANSFORMER);
        assert_int_equal(m.layers, want[i].layers);
        assert_int_equal(m.hidden, want[i].hidden);
        assert_int_equal(m.heads, want[i].heads);
        assert_int_equal(m.kv_heads, want[i].kv_heads);
        assert_int_equal(m.ffn, want[i].ffn);
        assert_int_equal(m.seq, want[i].seq);
        assert_int_equal(m.vocab, want[i].vocab);
        assert_int_equal(m.gated_mlp, want[i].gated);
        assert_int_equal(m.tied_embeddings, want[i].tied);
        assert_int_equal(m.dtype, COMET_DTYPE_BF16);
        assert_close(comet_model_params(&m), want[i].params, 0.03);
    }
}

static void test_system_presets(void **state)
{
    (void)state;
    comet_error err;
    comet_system a, h;
    assert_int_equal(comet_preset_system("a100-80g-selene", &a, &err), COMET_OK);
    assert_true(a.compute.matrix_flops[COMET_DTYPE_BF16] == 312e12);
    assert_true(a.compute.matrix_flops[COMET_DTYPE_TF32] == 156e12);
    assert_close(a.compute.matrix_flops[COMET_DTYPE_FP32], 19.5e12, 1e-12);
    assert_true(a.compute.matrix_flops[COMET_DTYPE_FP8] == 0);
    assert_true(a.compute.vector_flops[COMET_DTYPE_FP16] == 78e12);
    assert_true(a.compute.n_gemm_eff >= 2);
    assert_true(a.hbm.capacity == 80.0 * 1073741824.0);
    assert_true(a.hbm.bandwidth == 2039e9);
    assert_false(a.expansion.present);
    assert_int_equal(a.n_dims, 2);
    assert_int_equal(a.dims[0].size, 8);
    assert_true(a.dims[0].bandwidth == 300e9);
    assert_int_equal(a.dims[1].size, 0);
    assert_true(a.dims[1].bandwidth == 25e9);
    assert_true(a.cost_per_npu > 0);

    assert_int_equal(comet_preset_system("h100-80g-dgx", &h, &err), COMET_OK);
    assert_true(h.compute.matrix_flops[COMET_DTYPE_BF16] == 989e12);
    assert_true(h.compute.matrix_flops[COMET_DTYPE_FP8] == 1979e12);
    assert_close(h.hbm.bandwidth, 3.35e12, 1e-12);
    assert_true(h.dims[0].bandwidth == 450e9);
    assert_true(h.dims[1].bandwidth == 50e9);
    assert_int_equal(h.collective_chunks, 4);

    /* the H800: the H100's peaks and HBM, NVLink cut to 400 GB/s both ways,
     * which at its efficiency is the 160 GB/s DeepSeek-V3's report gives */
    comet_system h8;
    assert_int_equal(comet_preset_system("h800-dgx", &h8, &err), COMET_OK);
    assert_true(h8.compute.matrix_flops[COMET_DTYPE_FP8] == h.compute.matrix_flops[COMET_DTYPE_FP8]);
    assert_true(h8.hbm.bandwidth == h.hbm.bandwidth);
    assert_close(h8.dims[0].bandwidth * h8.dims[0].efficiency, 160e9, 1e-12);
    assert_true(h8.dims[1].bandwidth == 50e9);
    /* ... and the H100's measured kernel efficiencies (the same die) */
    assert_int_equal(h8.compute.n_gemm_eff, 4);
    assert_int_equal(h8.compute.n_gemm_eff, h.compute.n_gemm_eff);
    for (int i = 0; i < h.compute.n_gemm_eff; i++) {
        assert_true(h8.compute.gemm_eff[i].flops == h.compute.gemm_eff[i].flops);
        assert_true(h8.compute.gemm_eff[i].efficiency == h.compute.gemm_eff[i].efficiency);
    }
    assert_true(h8.compute.gemm_k_overhead == 91);
    assert_true(h8.compute.fp8_gemm_efficiency == h.compute.fp8_gemm_efficiency);
    assert_true(h8.compute.vector_efficiency == h.compute.vector_efficiency);
    assert_int_equal(h8.compute.n_attn_eff, 14);
    assert_int_equal(h8.compute.n_attn_eff, h.compute.n_attn_eff);
    assert_memory_equal(h8.compute.attn_eff, h.compute.attn_eff,
                        (size_t)h.compute.n_attn_eff * sizeof h.compute.attn_eff[0]);
    for (int k = 0; k < COMET_MEMK_COUNT; k++)
        assert_true(h8.compute.mem_efficiency[k] == h.compute.mem_efficiency[k]);
    assert_true(h8.compute.kernel_launch == h.compute.kernel_launch);
    assert_true(h8.compute.kernel_issue == h.compute.kernel_issue);
    assert_true(h8.compute.overlap_slowdown == h.compute.overlap_slowdown);
    assert_true(h8.compute.efficiency_spread == h.compute.efficiency_spread);
    assert_true(h8.hbm.efficiency == h.hbm.efficiency);

    /* the H200: the H100's die and peaks with 141 GB of HBM3e at 4.8 TB/s;
     * its kernel efficiencies as docs/measured-h200.md measured them (the
     * rounded fit of examples/calibrate/h200-kernels.csv) */
    comet_system h2;
    assert_int_equal(comet_preset_system("h200-dgx", &h2, &err), COMET_OK);
    assert_true(h2.compute.matrix_flops[COMET_DTYPE_BF16] == 989e12);
    assert_true(h2.compute.matrix_flops[COMET_DTYPE_FP8] == 1979e12);
    assert_close(h2.hbm.bandwidth, 4.8e12, 1e-12);
    assert_close(h2.hbm.capacity, 141e9, 1e-12);
    assert_true(h2.compute.gemm_k_overhead == 75.0);
    assert_int_equal(h2.compute.n_attn_eff, 14);
    assert_close(h2.compute.mem_efficiency[COMET_MEMK_NORM], 0.498, 1e-12);     /* 2.30-2.49 TB/s */
    assert_close(h2.compute.mem_efficiency[COMET_MEMK_ROPE], 0.751, 1e-12);     /* 3.61 TB/s fused */
    assert_close(h2.compute.mem_efficiency[COMET_MEMK_SOFTMAX], 0.220, 1e-12);  /* 1.06 TB/s */
    assert_close(h2.hbm.efficiency, 0.861, 1e-12);
    assert_close(h2.compute.kernel_launch, 0.84e-6, 1e-12);
    assert_close(h2.compute.kernel_issue, 9.3e-6, 1e-12);
    assert_true(h2.dims[0].bandwidth == 450e9);
    assert_true(h2.dims[1].bandwidth == 50e9);
}

/* Blackwell and MI300X presets: the datasheet figures, loaded as written */
static void test_system_presets_b200_gb200_mi300x(void **state)
{
    (void)state;
    comet_error err;

    /* DGX B200: HGX B200 dense peaks (half the sparse figures), 180 GB of
     * HBM3e at 7.7 TB/s, NVLink 5 at 1.8 TB/s both ways, 8 per node, one
     * 400 Gb/s ConnectX-7 per GPU */
    comet_system b;
    assert_int_equal(comet_preset_system("b200-dgx", &b, &err), COMET_OK);
    assert_string_equal(b.name, "b200-dgx");
    assert_true(b.compute.matrix_flops[COMET_DTYPE_BF16] == 2250e12);
    assert_true(b.compute.matrix_flops[COMET_DTYPE_FP16] == 2250e12);
    assert_true(b.compute.matrix_flops[COMET_DTYPE_FP8] == 4500e12);
    assert_true(b.compute.matrix_flops[COMET_DTYPE_TF32] == 1100e12);
    assert_true(b.compute.vector_flops[COMET_DTYPE_FP32] == 75e12);
    assert_true(b.hbm.capacity == 180e9);
    assert_close(b.hbm.bandwidth, 7.7e12, 1e-12);
    assert_close(b.hbm.efficiency, 6.721 / 7.7, 1e-3);   /* cub add at 6.721 TB/s */
    /* 8192^3 bf16 at 0.631 of peak, the K term taken out */
    assert_close(b.compute.gemm_eff[0].efficiency, 0.631 * (8192.0 + 247.0) / 8192.0, 1e-3);
    assert_false(b.expansion.present);
    assert_int_equal(b.n_dims, 2);
    assert_int_equal(b.dims[0].size, 8);
    assert_int_equal(b.dims[0].topology, COMET_TOPO_SWITCH);
    assert_true(b.dims[0].bandwidth == 900e9);
    assert_int_equal(b.dims[1].size, 0);
    assert_true(b.dims[1].bandwidth == 50e9);

    /* GB200 NVL72: the rack's figures / 72, one NVLink domain of 72, and
     * each Grace's 480 GB of LPDDR5X shared by its two GPUs over the
     * 900 GB/s (both ways) NVLink-C2C */
    comet_system g;
    assert_int_equal(comet_preset_system("gb200-nvl72", &g, &err), COMET_OK);
    /* the rack's figures are with sparsity: dense is half */
    assert_close(g.compute.matrix_flops[COMET_DTYPE_BF16], 360e15 / 72 / 2, 1e-12);
    assert_close(g.compute.matrix_flops[COMET_DTYPE_FP8], 720e15 / 72 / 2, 1e-12);
    assert_close(g.compute.matrix_flops[COMET_DTYPE_TF32], 180e15 / 72 / 2, 1e-12);
    assert_true(g.compute.vector_flops[COMET_DTYPE_FP32] == 80e12);
    assert_true(g.hbm.capacity == 186e9);
    assert_close(g.hbm.bandwidth, 576e12 / 72, 1e-12);
    assert_true(g.expansion.present);
    assert_true(g.expansion.capacity == 480e9);
    assert_true(g.expansion.bandwidth == 450e9);
    assert_int_equal(g.expansion.attach, COMET_ATTACH_PER_NODE);
    assert_int_equal(g.expansion.shared_by, 2);
    assert_int_equal(g.n_dims, 2);
    assert_int_equal(g.dims[0].size, 72);
    assert_int_equal(g.dims[0].topology, COMET_TOPO_SWITCH);
    assert_true(g.dims[0].bandwidth == 900e9);
    assert_close(g.dims[0].bandwidth, 130e12 / 72 / 2, 0.01);   /* 130 TB/s both ways */
    assert_int_equal(g.dims[1].size, 0);
    assert_true(g.dims[1].bandwidth == 50e9);

    /* MI300X: datasheet dense peaks, 192 GB of HBM3 at 5.3 TB/s, 8 GPUs
     * fully connected by 7 xGMI links of 64 GB/s per direction, and the
     * measured RCCL all-reduce bus bandwidth of 314.72 GB/s at 1 GiB */
    comet_system m;
    assert_int_equal(comet_preset_system("mi300x", &m, &err), COMET_OK);
    assert_close(m.compute.matrix_flops[COMET_DTYPE_BF16], 1307.4e12, 1e-12);
    assert_close(m.compute.matrix_flops[COMET_DTYPE_FP16], 1307.4e12, 1e-12);
    assert_close(m.compute.matrix_flops[COMET_DTYPE_FP8], 2614.9e12, 1e-12);
    assert_close(m.compute.matrix_flops[COMET_DTYPE_TF32], 653.7e12, 1e-12);
    assert_close(m.compute.matrix_flops[COMET_DTYPE_FP32], 163.4e12, 1e-12);
    assert_close(m.compute.vector_flops[COMET_DTYPE_FP32], 163.4e12, 1e-12);
    assert_true(m.hbm.capacity == 192e9);
    assert_close(m.hbm.bandwidth, 5.3e12, 1e-12);
    /* hipBLASLt BF16 at 708 TFLOPS with K = 32896, the K term taken out */
    assert_close(m.compute.gemm_eff[0].efficiency,
                 708.0 / 1307.4 * (32896.0 + 247.0) / 32896.0, 1e-3);
    assert_int_equal(m.compute.n_attn_eff, 0);
    assert_int_equal(m.n_dims, 2);
    assert_int_equal(m.dims[0].size, 8);
    assert_int_equal(m.dims[0].topology, COMET_TOPO_FULLY_CONNECTED);
    assert_true(m.dims[0].bandwidth == 7 * 64e9);
    assert_close(m.dims[0].bandwidth * m.dims[0].efficiency, 314.72e9, 0.01);
    assert_int_equal(m.dims[1].size, 0);
    assert_true(m.dims[1].bandwidth == 50e9);
}

static void test_preset_registry(void **state)
{
    (void)state;
    const char *const *models = comet_preset_names("models");
    assert_non_null(models);
    int n = 0;
    while (models[n])
        n++;
    assert_int_equal(n, 17);
    assert_string_equal(comet_preset_names("studies")[0], "dlrm");
    assert_non_null(comet_preset_names("systems"));
    assert_string_equal(comet_preset_names("strategies")[0], "gpt3-175b-selene");
    assert_null(comet_preset_names("nope"));
    assert_non_null(strstr(comet_preset_text("models", "gpt3-175b"), "hidden: 12288"));
    assert_null(comet_preset_text("models", "gpt5"));
    assert_null(comet_preset_text("systems", "gpt3-175b"));

    comet_model m;
    comet_error err;
    char line[600];
    assert_int_equal(comet_preset_model("gpt5", &m, &err), COMET_EINPUT);
    assert_string_equal(comet_error_format(&err, line, sizeof line),
                        "unknown model preset \"gpt5\" (known: deepseek-v3, dlrm, gpt3-175b, "
                        "inception-v3, llama2-70b, llama3-405b, megatron-1t, megatron-22b, "
                        "mixtral-8x22b, "
                        "mixtral-8x7b, qwen3-235b-a22b, resnet152, resnet50, transformer-17b, "
                        "transformer-1t, turing-530b, vgg16)");
    comet_system s;
    assert_int_equal(comet_preset_system("tpu", &s, &err), COMET_EINPUT);
    assert_string_equal(comet_error_format(&err, line, sizeof line),
                        "unknown system preset \"tpu\" (known: a100-80g-selene, b200-dgx, fred-c-wafer, "
                        "fred-wafer, gb200-nvl72, h100-80g-dgx, h200-dgx, h800-dgx, mesh-wafer, "
                        "mi300x)");
}

static void test_preset_in_document(void **state)
{
    (void)state;
    comet_job *job = read_ok("model: {preset: gpt3-175b, layers: 48, heads: 64}\n"
                             "system:\n"
                             "  preset: a100-80g-selene\n"
                             "  hbm: {capacity: \"40 GiB\"}\n"
                             "  expansion: {capacity: \"1 TiB\", bandwidth: \"64 GB/s\"}\n",
                             "mix.yaml");
    assert_int_equal(job->model.layers, 48);
    assert_int_equal(job->model.hidden, 12288);
    assert_int_equal(job->model.heads, 64);
    assert_int_equal(job->model.kv_heads, 64);   /* MHA follows the new head count */
    assert_int_equal(job->model.ffn, 49152);
    assert_true(job->system.hbm.capacity == 40.0 * 1073741824.0);
    assert_true(job->system.hbm.bandwidth == 2039e9);   /* kept from the preset */
    assert_true(job->system.expansion.present);
    assert_int_equal(job->system.expansion.attach, COMET_ATTACH_PER_NPU);
    free(job);

    job = read_ok("{\"model\": \"llama2-70b\", \"system\": \"h100-80g-dgx\"}", "names.json");
    assert_int_equal(job->model.kv_heads, 8);
    assert_int_equal(job->system.n_dims, 2);
    free(job);

    expect_error("p.yaml", "model: gpt5\n",
                 "p.yaml:1:8: model: unknown model preset \"gpt5\" (known: deepseek-v3, dlrm, "
                 "gpt3-175b, inception-v3, llama2-70b, llama3-405b, megatron-1t, megatron-22b, "
                 "mixtral-8x22b, "
                 "mixtral-8x7b, qwen3-235b-a22b, resnet152, resnet50, transformer-17b, "
                 "transformer-1t, turing-530b, vgg16)");
    expect_error("p.yaml", "system:\nmodel: gpt3-175b\n",
                 "p.yaml:1:8: system: expected a preset name or a mapping, got nothing");
    expect_error("p.yaml", "system:\n  preset: [a100]\n",
                 "p.yaml:2:11: system.preset: expected a name, got a list");
    expect_error("p.yaml", "strategy: gpt3-175b-selene\n",
                 "p.yaml:1:11: strategy: expected a mapping, got \"gpt3-175b-selene\"");
}

/* ---- errors ------------------------------------------------------------- */

/* Values that would overflow the model into inf or NaN are refused where
 * they are written. */
static void test_error_ranges(void **state)
{
    (void)state;
    expect_error("r.yaml", "system:\n  preset: a100-80g-selene\n  hbm: {bandwidth: \"1e-300 B/s\"}\n",
                 "r.yaml:3:20: system.hbm.bandwidth: 1e-300 B/s is outside the sane range "
                 "1 KB/s to 10 PB/s");
    expect_error("r.yaml", "system:\n  preset: a100-80g-selene\n  cost: {per_npu: 1e308}\n",
                 "r.yaml:3:19: system.cost.per_npu: expected a number up to 1e15, got \"1e308\"");
    expect_error("r.yaml", "system:\n  preset: a100-80g-selene\n  hbm: {efficiency: 1e-310}\n",
                 "r.yaml:3:21: system.hbm.efficiency: expected a number from 0.001 to 1, got "
                 "\"1e-310\"");
    expect_error("r.yaml", "model:\n  kind: layers\n  layer_list: [{name: a}]\n",
                 "r.yaml:3:3: model.layer_list: every layer has zero fwd_flops and fwd_bytes: "
                 "nothing to time");
    expect_error("r.yaml", "model:\n  preset: gpt3-175b\n  hidden: 1000\n",
                 "r.yaml:3:11: model.hidden: 1000 is not a multiple of heads (96)");
}

static void test_error_unknown_key(void **state)
{
    (void)state;
    expect_error("x.yaml", "# a model\nmodel:\n  hiden: 5\n",
                 "x.yaml:3:3: model.hiden: unknown key (did you mean \"hidden\"?)");
    expect_error("x.yaml", "strategy:\n  tp: 2\n  pipeline: 4\n",
                 "x.yaml:3:3: strategy.pipeline: unknown key (allowed: tp, pp, dp, sp, "
                 "global_batch, microbatch, interleave, recompute, zero, offload, overlap, "
                 "grad_fp32, optimizer_state, flash_attention, fp8, cp, cp_comm, ep, expert_tp, "
                 "moe_dispatcher, "
                 "attention_kernel, schedule, framework, zero3, first_stage_layers, "
                 "last_stage_layers, order, placement)");
    expect_error("x.yaml", "modle: gpt3-175b\n",
                 "x.yaml:1:1: modle: unknown key (did you mean \"model\"?)");
    expect_error("x.yaml", "system:\n  network:\n    - {size: 8, bandwith: \"1 GB/s\"}\n",
                 "x.yaml:3:17: system.network[0].bandwith: unknown key (did you mean "
                 "\"bandwidth\"?)");
}

static void test_error_types(void **state)
{
    (void)state;
    expect_error("gpt.yaml", "strategy:\n  tp: abc\n",
                 "gpt.yaml:2:7: strategy.tp: expected a positive integer, got \"abc\"");
    expect_error("gpt.yaml", "strategy:\n  tp: [8]\n",
                 "gpt.yaml:2:7: strategy.tp: expected a positive integer, got a list");
    expect_error("gpt.yaml", "strategy:\n  sp: yes\n",
                 "gpt.yaml:2:7: strategy.sp: expected true or false, got \"yes\"");
    expect_error("gpt.yaml", "strategy:\n  offload: true\n",
                 "gpt.yaml:2:12: strategy.offload: expected a mapping, got \"true\"");
    expect_error("gpt.yaml", "strategy:\n  tp:\n",
                 "gpt.yaml:2:6: strategy.tp: expected a positive integer, got nothing");
    expect_error("gpt.yaml", "- model\n",
                 "gpt.yaml:1:1: expected a mapping with model:, system: or strategy:");
    expect_error("gpt.yaml", "system: {preset: a100-80g-selene, network: {size: 8}}\n",
                 "gpt.yaml:1:44: system.network: expected a list, got a mapping");
}

/* A dimension's size models: protocols (NCCL's protocol model) and
 * bus_bandwidth (measured curves per collective), read and refused with
 * one-line errors naming the file position and the key. */
#define NET_PREFIX "system:\n  preset: h100-80g-dgx\n  network:\n    - name: nvlink\n      size: 8\n" \
                   "      bandwidth: \"450 GB/s\"\n"

static void test_network_size_models(void **state)
{
    (void)state;
    comet_job *job = read_ok(NET_PREFIX "      protocols: nccl_nvlink\n"
                                        "      bus_bandwidth:\n"
                                        "        all_reduce:\n"
                                        "          - {size: \"1 MiB\", bandwidth: \"40 GB/s\"}\n"
                                        "          - {size: \"1 GiB\", bandwidth: \"360 GB/s\"}\n"
                                        "        all_to_all: [{size: \"8 MiB\", bandwidth: \"100 GB/s\"}]\n",
                             "n.yaml");
    const comet_net_dim *d = &job->system.dims[0];
    assert_int_equal(d->protocols, COMET_PROTOCOLS_NCCL_NVLINK);
    assert_int_equal(d->bus.npus, 8); /* the dimension's size */
    assert_int_equal(d->bus.n_curves, 2);
    assert_int_equal(d->bus.curve[COMET_COLL_ALL_REDUCE].n_points, 2);
    assert_true(d->bus.curve[COMET_COLL_ALL_REDUCE].points[1].bytes == 1073741824.0);
    assert_true(d->bus.curve[COMET_COLL_ALL_REDUCE].points[1].busbw == 360e9);
    assert_int_equal(d->bus.curve[COMET_COLL_ALL_TO_ALL].n_points, 1);
    assert_int_equal(d->bus.curve[COMET_COLL_ALL_GATHER].n_points, 0);
    free(job);

    expect_error("n.yaml", NET_PREFIX "      protocols: nccl\n",
                 "n.yaml:7:18: system.network[0].protocols: unknown value \"nccl\" (expected one "
                 "of none, nccl_nvlink, nccl_pci, nccl_net)");
    expect_error("n.yaml",
                 NET_PREFIX "      bus_bandwidth:\n        all_reduce:\n"
                            "          - {size: \"1 GiB\", bandwidth: \"40 GB/s\"}\n"
                            "          - {size: \"1 MiB\", bandwidth: \"40 GB/s\"}\n",
                 "n.yaml:10:20: system.network[0].bus_bandwidth.all_reduce[1].size: sizes must "
                 "increase (the point before has 1.07374e+09 B)");
    expect_error("n.yaml",
                 NET_PREFIX "      bus_bandwidth:\n        all_reduce:\n"
                            "          - {size: \"1 MiB\", bandwidth: \"-40 GB/s\"}\n",
                 "n.yaml:9:40: system.network[0].bus_bandwidth.all_reduce[0].bandwidth: expected "
                 "a positive bandwidth, got \"-40 GB/s\"");
    expect_error("n.yaml",
                 NET_PREFIX "      bus_bandwidth:\n        allreduce:\n"
                            "          - {size: \"1 MiB\", bandwidth: \"40 GB/s\"}\n",
                 "n.yaml:8:9: system.network[0].bus_bandwidth.allreduce: unknown key (did you "
                 "mean \"all_reduce\"?)");
    expect_error("n.yaml",
                 NET_PREFIX "      bus_bandwidth:\n        all_reduce:\n"
                            "          - {size: \"1 MiB\"}\n",
                 "n.yaml:9:13: system.network[0].bus_bandwidth.all_reduce[0]: missing key "
                 "\"bandwidth\"");
    expect_error("n.yaml", NET_PREFIX "      bus_bandwidth: {npus: 8}\n",
                 "n.yaml:7:7: system.network[0].bus_bandwidth: needs a curve (all_reduce, "
                 "reduce_scatter, all_gather or all_to_all)");
    expect_error("n.yaml", NET_PREFIX "      bus_bandwidth: {all_gather: []}\n",
                 "n.yaml:7:35: system.network[0].bus_bandwidth.all_gather: needs at least one "
                 "point");
    expect_error("n.yaml",
                 "system:\n  preset: h100-80g-dgx\n  network:\n    - {size: auto, bandwidth: "
                 "\"50 GB/s\",\n       bus_bandwidth: {all_reduce: [{size: 1 MiB, bandwidth: "
                 "1 GB/s}]}}\n",
                 "n.yaml:5:8: system.network[0].bus_bandwidth: missing key \"npus\"");
}

/* Two dimensions: 8 NPUs on a switch, then "fabric", whose keys follow
 * from line 7 on (bandwidth is on line 6). */
#define SHAPE_PREFIX "system:\n  preset: h100-80g-dgx\n  network:\n" \
                     "    - {name: node, size: 8, bandwidth: \"450 GB/s\"}\n" \
                     "    - name: fabric\n      bandwidth: \"50 GB/s\"\n"

/* The shape keys of a network dimension land in comet_net_shape. */
static void test_network_shapes(void **state)
{
    (void)state;
    comet_job *job = read_ok(SHAPE_PREFIX "      size: 16\n      topology: torus\n"
                                          "      shape: [4, 4]\n",
                             "t.yaml");
    const comet_net_shape *sh = &job->system.dims[1].shape;
    assert_int_equal(job->system.dims[1].topology, COMET_TOPO_TORUS);
    assert_int_equal(sh->n_axes, 2);
    assert_int_equal(sh->axes[0], 4);
    assert_int_equal(sh->axes[1], 4);
    assert_int_equal(sh->axes[2], 0);
    free(job);

    job = read_ok(SHAPE_PREFIX "      size: 16\n      topology: mesh\n      shape: [2, 2, 4]\n",
                  "t.yaml");
    sh = &job->system.dims[1].shape;
    assert_int_equal(job->system.dims[1].topology, COMET_TOPO_MESH);
    assert_int_equal(sh->n_axes, 3);
    assert_int_equal(sh->axes[2], 4);
    free(job);

    /* 64 x 8 NPUs on 16-port switches: leaves 10 down / 6 up (2:1), 9 of
     * each aggregation switch's down to its pod (1.5:1) */
    job = read_ok(SHAPE_PREFIX "      size: 64\n      topology: fat_tree\n      tiers: 3\n"
                               "      radix: 16\n      oversubscription: [2, 1.5]\n"
                               "      routing: spray\n",
                  "t.yaml");
    sh = &job->system.dims[1].shape;
    assert_int_equal(job->system.dims[1].topology, COMET_TOPO_FAT_TREE);
    assert_int_equal(sh->tiers, 3);
    assert_int_equal(sh->radix, 16);
    assert_true(sh->oversubscription[0] == 2.0);
    assert_true(sh->oversubscription[1] == 1.5);
    assert_int_equal(sh->routing, COMET_ROUTE_SPRAY);
    assert_int_equal(sh->n_axes, 0);
    free(job);

    job = read_ok(SHAPE_PREFIX "      size: 16\n      topology: rail\n      radix: 64\n"
                               "      oversubscription: 3\n",
                  "t.yaml");
    sh = &job->system.dims[1].shape;
    assert_int_equal(job->system.dims[1].topology, COMET_TOPO_RAIL);
    assert_int_equal(sh->tiers, 0); /* 2 */
    assert_int_equal(sh->radix, 64);
    assert_true(sh->oversubscription[0] == 3.0);
    assert_true(sh->oversubscription[1] == 0.0);
    assert_int_equal(sh->routing, COMET_ROUTE_ECMP);
    free(job);

    job = read_ok(SHAPE_PREFIX "      size: auto\n      topology: ring\n"
                               "      bidirectional: false\n",
                  "t.yaml");
    assert_true(job->system.dims[1].shape.unidirectional);
    assert_false(job->system.dims[0].shape.unidirectional);
    free(job);
    job = read_ok(SHAPE_PREFIX "      size: 4\n      topology: ring\n      bidirectional: true\n",
                  "t.yaml");
    assert_false(job->system.dims[1].shape.unidirectional);
    free(job);
}

/* Every shape writes back and reads to the same struct; a system without
 * them writes none of their keys (so every file written before stays the
 * same bytes). */
static void test_network_shapes_round_trip(void **state)
{
    (void)state;
    comet_job *job = read_ok(
        "system:\n  preset: h100-80g-dgx\n  network:\n"
        "    - {name: a, size: 2, topology: ring, bidirectional: false, bandwidth: 1 GB/s}\n"
        "    - {name: b, size: 8, topology: torus, shape: [2, 4], bandwidth: 1 GB/s}\n"
        "    - {name: c, size: 4, topology: mesh, shape: [4], bandwidth: 1 GB/s}\n"
        "    - {name: d, size: 4, topology: rail, radix: 64, oversubscription: 1.25,\n"
        "       bandwidth: 1 GB/s}\n"
        "    - {name: e, size: auto, topology: fat_tree, tiers: 3, radix: 48,\n"
        "       oversubscription: [3, 1.5], routing: spray, bandwidth: 1 GB/s}\n",
        "r.yaml");
    char *text = test_system_round_trip(&job->system);
    static const char *const lines[] = {
        "      bidirectional: false\n", "      shape: [2, 4]\n", "      shape: [4]\n",
        "      radix: 64\n", "      oversubscription: 1.25\n", "      tiers: 3\n",
        "      oversubscription: [3, 1.5]\n", "      routing: spray\n", NULL};
    for (int i = 0; lines[i]; i++)
        if (!strstr(text, lines[i]))
            fail_msg("no \"%s\" in:\n%s", lines[i], text);
    free(text);
    free(job);

    comet_system sys;
    comet_error err;
    assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
    text = test_system_round_trip(&sys);
    static const char *const keys[] = {"shape:", "bidirectional:", "tiers:", "radix:",
                                       "oversubscription:", "routing:", NULL};
    for (int i = 0; keys[i]; i++)
        if (strstr(text, keys[i]))
            fail_msg("a system without shapes writes \"%s\":\n%s", keys[i], text);
    free(text);
}

/* A shape that cannot be built is refused at its key, as the fabric
 * would refuse it (comet_net_shape_problem). */
static void test_error_network_shapes(void **state)
{
    (void)state;
    expect_error("t.yaml", SHAPE_PREFIX "      size: 32\n      topology: torus\n"
                                        "      shape: [4, 4]\n",
                 "t.yaml:9:7: system.network[1].shape: axes multiply to 16 NPUs, the "
                 "dimension's size is 32");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 16\n      shape: [4, 4]\n",
                 "t.yaml:8:7: system.network[1].shape: applies to torus and mesh only");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 16\n      topology: torus\n"
                                        "      shape: [4, 1]\n",
                 "t.yaml:9:18: system.network[1].shape[1]: expected an integer of at least 2, "
                 "got \"1\"");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 16\n      topology: torus\n"
                                        "      shape: [2, 2, 2, 2]\n",
                 "t.yaml:9:14: system.network[1].shape: has 4 entries; comet's limit is 3");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 64\n      topology: fat_tree\n"
                                        "      radix: 8\n",
                 "t.yaml:9:14: system.network[1].radix: 2 tiers of 8-port switches (leaves 4 "
                 "down / 4 up) connect 8 leaves at most, this dimension needs 128 (64 NPUs "
                 "along it, 8 inside it): raise radix or tiers");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 64\n      topology: fat_tree\n",
                 "t.yaml:5:7: system.network[1].radix: fat_tree needs a switch radix of at "
                 "least 4 ports (missing)");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 64\n      topology: fat_tree\n"
                                        "      radix: 64\n      tiers: 4\n",
                 "t.yaml:10:14: system.network[1].tiers: expected an integer from 2 to 3, got "
                 "\"4\"");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 64\n      topology: fat_tree\n"
                                        "      radix: 64\n      oversubscription: 0.5\n",
                 "t.yaml:10:25: system.network[1].oversubscription: each ratio (down:up ports) "
                 "must be at least 1");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 64\n      topology: fat_tree\n"
                                        "      radix: 64\n      oversubscription: [2, 2]\n",
                 "t.yaml:10:7: system.network[1].oversubscription: gives a second ratio, which "
                 "only 3 tiers have");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 4\n      bidirectional: false\n",
                 "t.yaml:8:22: system.network[1].bidirectional: false applies to ring only");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 16\n      topology: torus\n"
                                        "      routing: spray\n",
                 "t.yaml:9:16: system.network[1].routing: applies to fat_tree and rail only");
    expect_error("t.yaml", SHAPE_PREFIX "      size: 16\n      topology: torus\n"
                                        "      routing: random\n",
                 "t.yaml:9:16: system.network[1].routing: unknown value \"random\" (expected "
                 "one of ecmp, spray)");
    expect_error("t.yaml", SHAPE_PREFIX "      size: auto\n      topology: torus\n",
                 "t.yaml:7:13: system.network[1].size: a torus or mesh needs a fixed size, not "
                 "auto");
}

static void test_error_sizes(void **state)
{
    (void)state;
    expect_error("s.yaml", "system:\n  preset: a100-80g-selene\n  hbm: {capacity: \"-80 GiB\"}\n",
                 "s.yaml:3:19: system.hbm.capacity: expected a positive size, got \"-80 GiB\"");
    expect_error("s.yaml", "system:\n  preset: a100-80g-selene\n  hbm: {bandwidth: 0 GB/s}\n",
                 "s.yaml:3:20: system.hbm.bandwidth: expected a positive bandwidth, got "
                 "\"0 GB/s\"");
    expect_error("s.yaml", "strategy: {tp: 8, pp: 0}\n",
                 "s.yaml:1:23: strategy.pp: expected a positive integer, got \"0\"");
    expect_error("s.yaml", "strategy: {dp: -2}\n",
                 "s.yaml:1:16: strategy.dp: expected a positive integer, got \"-2\"");
    expect_error("s.yaml", "model: {preset: gpt3-175b, layers: 1.5}\n",
                 "s.yaml:1:36: model.layers: expected a positive integer, got \"1.5\"");
    expect_error("s.yaml", "model: {preset: gpt3-175b, layers: 99999999999999999999}\n",
                 "s.yaml:1:36: model.layers: 99999999999999999999 is above comet's limit of "
                 "65536");
    expect_error("s.yaml", "model: {preset: gpt3-175b, hidden: 2000000}\n",
                 "s.yaml:1:36: model.hidden: 2000000 is above comet's limit of 1048576");
    expect_error("s.yaml", "strategy: {tp: 300000}\n",
                 "s.yaml:1:16: strategy.tp: 300000 is above comet's limit of 262144");
    expect_error("s.yaml", "strategy: {zero: 4}\n",
                 "s.yaml:1:18: strategy.zero: expected an integer from 0 to 3, got \"4\"");
    expect_error("s.yaml", "system: {preset: a100-80g-selene, cost: {per_npu: -1}}\n",
                 "s.yaml:1:51: system.cost.per_npu: expected a non-negative number, got \"-1\"");
    expect_error("s.yaml", "system: {preset: a100-80g-selene, cost: {per_npu: .inf}}\n",
                 "s.yaml:1:51: system.cost.per_npu: expected a finite number, got \".inf\"");
    expect_error("s.yaml", "system: {preset: a100-80g-selene, cost: {per_npu: 1e999}}\n",
                 "s.yaml:1:51: system.cost.per_npu: expected a finite number, got \"1e999\"");
    expect_error("s.yaml", "system: {preset: a100-80g-selene, hbm: {efficiency: 1.2}}\n",
                 "s.yaml:1:53: system.hbm.efficiency: expected a number from 0.001 to 1, got \"1.2\"");
}

static void test_error_units(void **state)
{
    (void)state;
    expect_error("u.yaml", "system:\n  preset: a100-80g-selene\n  hbm:\n    capacity: 80\n",
                 "u.yaml:4:15: system.hbm.capacity: needs a unit, e.g. \"80 GiB\" (units: B, KB, "
                 "MB, GB, TB, PB, EB, KiB, MiB, GiB, TiB)");
    expect_error("u.yaml", "system:\n  preset: a100-80g-selene\n  hbm:\n    capacity: 80 GiBs\n",
                 "u.yaml:4:15: system.hbm.capacity: unknown unit \"GiBs\" (units: B, KB, MB, GB, "
                 "TB, PB, EB, KiB, MiB, GiB, TiB)");
    expect_error("u.yaml", "system:\n  preset: a100-80g-selene\n  hbm:\n    bandwidth: 2 ms\n",
                 "u.yaml:4:16: system.hbm.bandwidth: unknown unit \"ms\" (units: B/s, KB/s, MB/s, "
                 "GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, b/s, Kb/s, Mb/s, Gb/s, Tb/s)");
    expect_error("u.yaml", "system: {preset: a100-80g-selene, hbm: {capacity: lots}}\n",
                 "u.yaml:1:51: system.hbm.capacity: expected a size like \"80 GiB\", got "
                 "\"lots\"");
    expect_error("u.yaml", "system: {preset: a100-80g-selene, hbm: {bandwidth: 1e999 GB/s}}\n",
                 "u.yaml:1:52: system.hbm.bandwidth: expected a finite quantity, got "
                 "\"1e999 GB/s\"");
}

static void test_error_enums(void **state)
{
    (void)state;
    expect_error("e.yaml", "strategy:\n  recompute: ful\n",
                 "e.yaml:2:14: strategy.recompute: unknown value \"ful\" (did you mean "
                 "\"full\"?)");
    expect_error("e.yaml", "strategy:\n  recompute: everything\n",
                 "e.yaml:2:14: strategy.recompute: unknown value \"everything\" (expected one of "
                 "none, selective, full)");
    expect_error("e.yaml", "model: {preset: gpt3-175b, dtype: int8}\n",
                 "e.yaml:1:35: model.dtype: unknown value \"int8\" (expected one of fp32, tf32, "
                 "fp16, bf16, fp8)");
    expect_error("e.yaml", "strategy: {order: [tp, pp, tp]}\n",
                 "e.yaml:1:28: strategy.order[2]: tp is listed twice");
    expect_error("e.yaml", "strategy: {order: [tp, pp]}\n",
                 "e.yaml:1:19: strategy.order: must list tp, pp and dp once each (and cp, ep at "
                 "most once)");
    expect_error("e.yaml", "strategy: {order: [tp, pp, cp, ep]}\n",
                 "e.yaml:1:19: strategy.order: does not list dp");
}

static void test_error_yaml(void **state)
{
    (void)state;
    expect_error("d.yaml", "strategy:\n  tp: 2\n  pp: 2\n  tp: 4\n",
                 "d.yaml:4:3: strategy.tp: duplicate key (first at line 2)");
    expect_error("d.yaml", "system:\n  network:\n    - {size: 8, size: 4}\n",
                 "d.yaml:3:17: system.network[0].size: duplicate key (first at line 3)");
    expect_error("d.yaml", "a: &x 1\nb: *x\n",
                 "d.yaml:1:4: anchors (&x) are not supported; write the values out");
    expect_error("d.yaml", "model: *x\n", "d.yaml:1:8: aliases (*x) are not supported");
    expect_error("d.yaml", "model: !!str gpt3-175b\n",
                 "d.yaml:1:8: tags (tag:yaml.org,2002:str) are not supported");
    expect_error("d.yaml", "strategy: {tp: 1}\n---\nstrategy: {tp: 2}\n",
                 "d.yaml:2:1: only one document per file is allowed");
    expect_error("d.yaml", "model: [1, 2\n",
                 "d.yaml:2:1: did not find expected ',' or ']' while parsing a flow sequence");
    expect_error("d.yaml", "model:\n\tlayers: 2\n",
                 "d.yaml:2:1: found character that cannot start any token while scanning for "
                 "the next token");
    expect_error("d.yaml", "", "d.yaml: empty document; expected model:, system: or strategy:");
    expect_error("d.yaml", "# nothing\n",
                 "d.yaml: empty document; expected model:, system: or strategy:");
    expect_error("d.yaml", "model: {name: \"a\\0b\"}\n", "d.yaml:1:15: text contains a NUL character");
    expect_error("d.yaml", "model: x\xff\n",
                 "d.yaml:1:9: invalid leading UTF-8 octet");

    char deep[200];
    memset(deep, '[', 70);
    memset(deep + 70, ']', 70);
    deep[140] = '\0';
    expect_error("d.yaml", deep, "d.yaml:1:65: nesting deeper than 64 levels");
}

static void test_error_checks(void **state)
{
    (void)state;
    expect_error("m.yaml", "model:\n  preset: llama2-70b\n  moe:\n    experts: 8\n    top_k: 9\n",
                 "m.yaml:5:12: model.moe.top_k: 9 is more than the 8 experts");
    expect_error("m.yaml", "model:\n  preset: llama2-70b\n  moe: {experts: 8}\n",
                 "m.yaml:3:3: model.moe: missing key \"top_k\"");
    expect_error("m.yaml",
                 "model:\n  preset: llama2-70b\n  moe: {experts: 8, top_k: 2, imbalance: 0.5}\n",
                 "m.yaml:3:42: model.moe.imbalance: must be between 1 (balanced) and experts (8), "
                 "got 0.5");
    expect_error("m.yaml",
                 "model:\n  preset: llama2-70b\n  moe: {experts: 8, top_k: 2, first_dense: 80}\n",
                 "m.yaml:3:44: model.moe.first_dense: with every = 1 and first_dense = 80 none of "
                 "the 80 layers is a mixture-of-experts layer");
    expect_error("m.yaml",
                 "model:\n  preset: llama2-70b\n  moe: {experts: 8, top_k: 2, every: 100}\n",
                 "m.yaml:3:38: model.moe.every: with every = 100 and first_dense = 0 none of the "
                 "80 layers is a mixture-of-experts layer");
    expect_error("m.yaml", "model:\n  preset: dlrm\n  moe: {experts: 8, top_k: 2}\n",
                 "m.yaml:3:3: model.moe: mixture-of-experts layers need a Transformer model, not "
                 "a layer list");
    expect_error("c.yaml", "model:\n  preset: gpt3-175b\n  kv_heads: 7\n",
                 "c.yaml:3:13: model.kv_heads: heads (96) must be a multiple of kv_heads (7)");
    expect_error("c.yaml", "model:\n  layers: 2\n  hidden: 64\n  heads: 4\n  seq: 8\n",
                 "c.yaml:1:1: model: missing key \"vocab\"");
    expect_error("c.yaml",
                 "system:\n  preset: a100-80g-selene\n  network:\n"
                 "    - {size: auto, bandwidth: \"1 GB/s\"}\n"
                 "    - {size: 8, bandwidth: \"1 GB/s\"}\n",
                 "c.yaml:4:14: system.network[0].size: only the outermost (last) dimension may "
                 "be auto");
    expect_error("c.yaml", "system:\n  preset: a100-80g-selene\n  network:\n    - {size: 8}\n",
                 "c.yaml:4:7: system.network[0]: missing key \"bandwidth\"");
    expect_error("c.yaml", "system:\n  preset: a100-80g-selene\n  network: []\n",
                 "c.yaml:3:12: system.network: needs at least one dimension");
    expect_error("c.yaml",
                 "system:\n  preset: a100-80g-selene\n  compute:\n    gemm_efficiency:\n"
                 "      - {size: \"2 GFLOP\", efficiency: 0.5}\n"
                 "      - {size: \"1 GFLOP\", efficiency: 0.6}\n",
                 "c.yaml:6:16: system.compute.gemm_efficiency[1].size: sizes must increase (the "
                 "point before has 2e+09 FLOP)");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    attention_efficiency:\n"
                 "      - {seq: 8192, head_dim: 128, forward: 0.6, forward_backward: 0.5}\n"
                 "      - {seq: 2048, head_dim: 64, forward: 0.2, forward_backward: 0.1}\n",
                 "c.yaml:6:31: system.compute.attention_efficiency[1].head_dim: points must come "
                 "in increasing head_dim (the point before has 128)");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    attention_efficiency:\n"
                 "      - {seq: 8192, head_dim: 128, forward: 0.6, forward_backward: 0.5}\n"
                 "      - {seq: 8192, head_dim: 128, forward: 0.2, forward_backward: 0.1}\n",
                 "c.yaml:6:15: system.compute.attention_efficiency[1].seq: points of one head_dim "
                 "must increase in seq (the point before has 8192)");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    attention_efficiency:\n"
                 "      - {seq: 8192, head_dim: 128, forward: 0.6, forward_backward: 0.5, "
                 "causal_forward: 1.5}\n",
                 "c.yaml:5:89: system.compute.attention_efficiency[0].causal_forward: expected a "
                 "number from 0.001 to 1, got \"1.5\"");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    framework_efficiency: 2.5\n",
                 "c.yaml:4:27: system.compute.framework_efficiency: must be above 0 and at most "
                 "2, got 2.5");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    framework_efficiency: 0\n",
                 "c.yaml:4:27: system.compute.framework_efficiency: must be above 0 and at most "
                 "2, got 0");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    attention_efficiency:\n"
                 "      - {seq: 8192, head_dim: 128, forward: 0.6}\n",
                 "c.yaml:5:9: system.compute.attention_efficiency[0]: missing key "
                 "\"forward_backward\"");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    gemm_k_overhead: 2e9\n",
                 "c.yaml:4:22: system.compute.gemm_k_overhead: must be between 0 and 1e9 "
                 "elements, got 2e+09");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    memory_efficiency: {layernorm: 0.5}\n",
                 "c.yaml:4:25: system.compute.memory_efficiency.layernorm: unknown key (allowed: "
                 "elementwise, norm, activation, softmax, rope, cast, optimizer, batchnorm, pool)");
    expect_error("c.yaml",
                 "system:\n  preset: h100-80g-dgx\n  compute:\n    kernel_launch: 3\n",
                 "c.yaml:4:20: system.compute.kernel_launch: needs a unit, e.g. \"500 ns\" "
                 "(units: ps, ns, us, ms, s)");
    expect_error("c.yaml", "system:\n  preset: a100-80g-selene\n  expansion: {capacity: 1 TiB}\n",
                 "c.yaml:3:3: system.expansion: missing key \"bandwidth\"");
    expect_error("c.yaml",
                 "system: a100-80g-selene\n"
                 "strategy:\n  placement: {tp: [8, 1, 1], pp: [1, 1, 1]}\n",
                 "c.yaml:3:3: strategy.placement: gives 3 spans per group but the system has 2 "
                 "network dimensions");
    expect_error("c.yaml", "strategy:\n  placement: {tp: [8, 1], pp: [1]}\n",
                 "c.yaml:2:31: strategy.placement.pp: lists 1 span but another group lists 2; "
                 "give one span per network dimension");
    expect_error("c.yaml",
                 "model:\n  kind: layers\n  layer_list:\n    - {name: a, comm: all_reduce}\n",
                 "c.yaml:4:7: model.layer_list[0]: comm is all_reduce but comm_bytes is not set");
}

static void test_error_params_limit(void **state)
{
    (void)state;
    const char text[] = "model: {layers: 1000, hidden: 1000000, heads: 1000, seq: 8, vocab: 8}\n";
    comet_model m;
    memset(&m, 0, sizeof m);
    m.kind = COMET_MODEL_TRANSFORMER;
    m.layers = 1000;
    m.hidden = 1000000;
    m.heads = m.kv_heads = 1000;
    m.ffn = 4000000;
    m.seq = 8;
    m.vocab = 8;
    m.dtype = COMET_DTYPE_BF16;
    m.sample_tokens = 1;
    char expected[200];
    snprintf(expected, sizeof expected,
             "big.yaml:1:1: model: model has %.1e parameters; comet's limit is 4e12",
             comet_model_params(&m));
    assert_true(comet_model_params(&m) > 4e12);
    expect_error("big.yaml", text, expected);
}

/* ---- source map --------------------------------------------------------- */

static const char located_doc[] = "model: gpt3-175b\n"
                                  "system: a100-80g-selene\n"
                                  "strategy:\n"
                                  "  pp: 8\n"
                                  "  tp: 5\n"
                                  "  placement:\n"
                                  "    tp: [8, 1]\n";

static void test_srcmap_locate(void **state)
{
    (void)state;
    comet_job *job = read_ok(located_doc, "job.yaml");
    comet_error err;
    char line[600];
    comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "strategy.tp", "5 does not divide heads (96)");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_string_equal(comet_error_format(&err, line, sizeof line),
                        "job.yaml:5:7: strategy.tp: 5 does not divide heads (96)");
    /* a key from a preset is placed where the preset was named */
    comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "model.heads", "x");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 8);
    /* list items have their own place; lists and mappings are placed at their key */
    comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "strategy.placement.tp[1]", "x");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_int_equal(err.line, 7);
    assert_int_equal(err.column, 13);
    comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "strategy.placement.tp[5]", "x");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_int_equal(err.line, 7);
    assert_int_equal(err.column, 5);
    /* keys the document never set and errors that already have a place stay as they are */
    comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--tp", "x");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_int_equal(err.line, 0);
    assert_string_equal(err.file, "");
    comet_error_set(&err, COMET_EINPUT, "other.yaml", 9, 9, "strategy.tp", "x");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_string_equal(err.file, "other.yaml");
    assert_int_equal(err.line, 9);
    free(job);

    job = read_ok(full_yaml, "full.yaml");
    comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "system.network[1].size", "x");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_int_equal(err.line, 42);
    assert_int_equal(err.column, 13);
    free(job);
}

/* An error found after reading, by the strategy resolver, gets its place. */
static void test_srcmap_after_resolve(void **state)
{
    (void)state;
    comet_job *job = read_ok(located_doc, "job.yaml");
    comet_error err;
    comet_error_clear(&err);
    int64_t sizes[COMET_MAX_DIMS];
    assert_int_equal(comet_strategy_resolve(&job->model, &job->system, &job->strategy, sizes,
                                            &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "strategy.tp");
    comet_srcmap_locate(&job->srcmap, &err);
    assert_string_equal(err.file, "job.yaml");
    assert_int_equal(err.line, 5);
    assert_int_equal(err.column, 7);
    free(job);
}

/* ---- the knob table ----------------------------------------------------- */

/* The table is whole: names, keys and flags unique, report columns and help
 * lines numbered without gaps, a key group's knobs side by side, each
 * field inside comet_strategy. */
static void test_knob_table_is_whole(void **state)
{
    (void)state;
    int columns = 0, help_lines = 0;
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        assert_ptr_equal(k, &comet_knob_table()[i]);
        assert_non_null(k->name);
        assert_int_equal(strncmp(k->key, "strategy.", 9), 0);
        assert_true(k->offset + k->size <= sizeof(comet_strategy));
        if (k->type == COMET_KNOB_T_INT)
            assert_true(k->lo <= k->hi);
        if (k->type == COMET_KNOB_T_CHOICE)
            assert_true(k->n_values >= 2 && k->n_values <= COMET_KNOB_MAX_VALUES);
        assert_true((k->flag == NULL) == (k->flag_form == COMET_FLAG_NONE));
        assert_true((k->flag_off != NULL) == (k->flag_form == COMET_FLAG_PAIR));
        columns += k->column >= 0;
        if (k->help_usage)
            help_lines++;
        if (k->help_usage && k->flag)
            assert_non_null(strstr(k->help_usage, k->flag));
        for (int j = 0; j < i; j++) {
            const comet_knob *o = comet_knob_get((comet_knob_id)j);
            assert_string_not_equal(k->name, o->name);
            assert_string_not_equal(k->key, o->key);
            if (k->column >= 0)
                assert_int_not_equal(k->column, o->column);
            /* only a list flag is shared, by the knobs of one key group */
            if (k->flag && o->flag && strcmp(k->flag, o->flag) == 0)
                assert_true(k->flag_form == COMET_FLAG_PART && o->flag_form == COMET_FLAG_PART);
        }
        /* a group's knobs are adjacent: the table makes one entry per group */
        const char *dot = strrchr(k->key, '.');
        if (i > 0 && dot != strchr(k->key, '.')) {
            const comet_knob *prev = comet_knob_get((comet_knob_id)(i - 1));
            for (int j = 0; j < i - 1; j++) {
                const comet_knob *o = comet_knob_get((comet_knob_id)j);
                size_t len = (size_t)(dot - k->key);
                if (strncmp(o->key, k->key, len + 1) == 0)
                    assert_int_equal(strncmp(prev->key, k->key, len + 1), 0);
            }
        }
    }
    for (int c = 0; c < columns; c++)
        assert_non_null(comet_knob_in_column(c));
    assert_null(comet_knob_in_column(columns));
    assert_null(comet_knob_in_column(-1));
    for (int line = 0; line < help_lines; line++) {
        int first = 0;
        for (int i = 0; i < COMET_KNOB_COUNT; i++)
            first += comet_knob_get((comet_knob_id)i)->help_line == line &&
                     comet_knob_get((comet_knob_id)i)->help_usage != NULL;
        assert_int_equal(first, 1);
    }
    assert_null(comet_knob_get(COMET_KNOB_COUNT));
    assert_ptr_equal(comet_knob_named("offload_weights"),
                     comet_knob_get(COMET_KNOB_OFFLOAD_WEIGHTS));
    assert_null(comet_knob_named("order"));     /* not a report column */
    assert_string_equal(comet_knob_file_key(comet_knob_get(COMET_KNOB_OVERLAP_TP)), "overlap.tp");
}

/* "strategy:\n  offload: {weights: true}\n": one knob set by its file key. */
static void knob_doc(char *out, size_t cap, const comet_knob *k, const char *value)
{
    const char *key = comet_knob_file_key(k);
    const char *dot = strchr(key, '.');
    if (dot)
        snprintf(out, cap, "strategy:\n  %.*s: {%s: %s}\n", (int)(dot - key), key, dot + 1,
                 value);
    else
        snprintf(out, cap, "strategy:\n  %s: %s\n", key, value);
}

/* Every knob read from its key lands in its field and nowhere else; an
 * integer knob is read up to its limit and refused past it, and
 * comet_strategy_resolve refuses the same value naming the same key and
 * limit. */
/* The MoE keys: strategy expert_tp and moe_dispatcher, model moe.max_nodes
 * (docs/config.md), their errors with file positions, and the report's
 * fields read back. */
static void test_moe_keys(void **state)
{
    (void)state;
    comet_job *job = read_ok("model:\n  preset: deepseek-v3\n  moe: {max_nodes: 2}\n"
                             "strategy:\n  tp: 2\n  expert_tp: 1\n  moe_dispatcher: deepep\n",
                             "m.yaml");
    assert_int_equal(job->model.moe.max_nodes, 2);
    assert_int_equal(job->strategy.expert_tp, 1);
    assert_int_equal(job->strategy.moe_dispatcher, COMET_MOE_DEEPEP);
    assert_true(comet_strategy_folded(&job->strategy));
    free(job);
    job = read_ok("model: deepseek-v3\n", "m.yaml");
    assert_int_equal(job->model.moe.max_nodes, 4); /* the preset's */
    free(job);
    expect_error("m.yaml", "strategy:\n  moe_dispatcher: deep\n",
                 "m.yaml:2:19: strategy.moe_dispatcher: unknown value \"deep\" (did you mean "
                 "\"deepep\"?)");
    expect_error("m.yaml", "model:\n  preset: deepseek-v3\n  moe: {max_nodes: -1}\n",
                 "m.yaml:3:20: model.moe.max_nodes: expected a non-negative integer, got \"-1\"");
    comet_strategy s;
    comet_strategy_defaults(&s);
    assert_int_equal(comet_strategy_expert_tp(&s), 1); /* 0 stands for tp */
    s.tp = 4;
    assert_int_equal(comet_strategy_expert_tp(&s), 4);
    assert_false(comet_strategy_folded(&s));
    assert_true(comet_strategy_set_field(&s, "expert_tp", "2"));
    assert_true(comet_strategy_set_field(&s, "moe_dispatcher", "deepep"));
    assert_int_equal(s.expert_tp, 2);
    assert_int_equal(s.moe_dispatcher, COMET_MOE_DEEPEP);
    assert_false(comet_strategy_set_field(&s, "moe_dispatcher", "nccl"));
}

static void test_knobs_from_files(void **state)
{
    (void)state;
    comet_strategy defaults;
    comet_strategy_defaults(&defaults);
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        char value[64], doc[256];
        int64_t want;
        if (k->type == COMET_KNOB_T_INT) {
            want = k->hi;
            snprintf(value, sizeof value, "%lld", (long long)want);
        } else if (k->type == COMET_KNOB_T_BOOL) {
            want = !comet_knob_value(k, &defaults);
            snprintf(value, sizeof value, "%s", want ? "true" : "false");
        } else if (k->type == COMET_KNOB_T_CHOICE) {
            want = k->n_values - 1;
            snprintf(value, sizeof value, "%s", k->value_name((int)want));
        } else {
            continue;   /* order and placement: full_yaml and test_error_* */
        }
        knob_doc(doc, sizeof doc, k, value);
        comet_job *job = read_ok(doc, "k.yaml");
        for (int j = 0; j < COMET_KNOB_COUNT; j++) {
            const comet_knob *o = comet_knob_get((comet_knob_id)j);
            if (o->type != COMET_KNOB_T_ORDER && o->type != COMET_KNOB_T_PLACEMENT)
                assert_int_equal(comet_knob_value(o, &job->strategy),
                                 j == i ? want : comet_knob_value(o, &defaults));
        }
        free(job);
        if (k->type != COMET_KNOB_T_INT)
            continue;
        char limit[32], line[600];
        snprintf(limit, sizeof limit, "%lld", (long long)k->hi);
        snprintf(value, sizeof value, "%lld", (long long)k->hi + 1);
        knob_doc(doc, sizeof doc, k, value);
        job = new_job();
        comet_error err;
        comet_error_clear(&err);
        assert_int_equal(comet_config_read_text(doc, strlen(doc), "k.yaml", job, &err),
                         COMET_EINPUT);
        assert_string_equal(err.key, k->key);
        assert_non_null(strstr(err.message, limit));
        /* resolution checks the same limit */
        comet_strategy s = defaults;
        comet_knob_set_value(k, &s, k->hi + 1);
        comet_strategy_refusal why;
        assert_int_equal(comet_strategy_resolve_why(&job->model, &job->system, &s, NULL, &why,
                                                    &err),
                         COMET_EINPUT);
        assert_int_equal(why.fault, COMET_FAULT_LIMIT);
        assert_int_equal(why.knob, i);
        assert_string_equal(err.key, k->key);
        if (!strstr(err.message, limit))
            fail_msg("%s: %s", k->key, comet_error_format(&err, line, sizeof line));
        /* and one below the lowest value */
        snprintf(value, sizeof value, "%lld", (long long)k->lo - 1);
        knob_doc(doc, sizeof doc, k, value);
        assert_int_equal(comet_config_read_text(doc, strlen(doc), "k.yaml", job, &err),
                         COMET_EINPUT);
        assert_string_equal(err.key, k->key);
        free(job);
    }
}

/* ---- names -------------------------------------------------------------- */

/* parse(text) succeeds and name() gives text back */
#define ROUND_TRIP(type, parse, name, text)                                    \
    do {                                                                      \
        type v_ = (type)0;                                                    \
        assert_int_equal(parse(text, &v_), 0);                                \
        assert_string_equal(name(v_), text);                                  \
    } while (0)

static void test_names(void **state)
{
    (void)state;
    comet_dtype dt = COMET_DTYPE_FP32;
    assert_int_equal(comet_dtype_parse("bf16", &dt), 0);
    assert_int_equal(dt, COMET_DTYPE_BF16);
    assert_int_equal(comet_dtype_parse("int4", &dt), -1);
    assert_int_equal(dt, COMET_DTYPE_BF16);
    assert_true(comet_dtype_bytes(COMET_DTYPE_TF32) == 4);
    assert_true(comet_dtype_bytes(COMET_DTYPE_FP8) == 1);
    assert_string_equal(comet_dtype_name(COMET_DTYPE_FP16), "fp16");
    assert_string_equal(comet_dtype_name((comet_dtype)99), "?");
    ROUND_TRIP(comet_collective, comet_collective_parse, comet_collective_name, "reduce_scatter");
    ROUND_TRIP(comet_group, comet_group_parse, comet_group_name, "pp");
    ROUND_TRIP(comet_topology, comet_topology_parse, comet_topology_name, "fully_connected");
    ROUND_TRIP(comet_algorithm, comet_algorithm_parse, comet_algorithm_name, "double_binary_tree");
    ROUND_TRIP(comet_recompute, comet_recompute_parse, comet_recompute_name, "selective");
    comet_recompute r = COMET_RECOMPUTE_FULL;
    assert_int_equal(comet_recompute_parse(NULL, &r), -1);
    ROUND_TRIP(comet_objective, comet_objective_parse, comet_objective_name, "throughput");
    comet_objective o = COMET_OBJECTIVE_TIME;
    assert_int_equal(comet_objective_parse("speed", &o), -1);
    assert_int_equal(o, COMET_OBJECTIVE_TIME);
    assert_string_equal(comet_objective_name((comet_objective)3), "?");
    /* memory kinds and tiers are only named (reports), never read */
    assert_string_equal(comet_mem_kind_name(COMET_MEM_WEIGHTS), "weights");
    assert_string_equal(comet_mem_kind_name(COMET_MEM_ACTIVATIONS), "activations");
    assert_string_equal(comet_mem_kind_name(COMET_MEM_KIND_COUNT), "?");
    assert_string_equal(comet_tier_name(COMET_TIER_HBM), "hbm");
    assert_string_equal(comet_tier_name(COMET_TIER_EXPANSION), "expansion");
    assert_string_equal(comet_tier_name((comet_tier)-1), "?");
}

/* The vocabulary below every layer: name tables indexed by enum value,
 * "efficiency 0 means 1", and a GiB of 2^30 bytes. */
static void test_vocab_conventions(void **state)
{
    (void)state;
    assert_int_equal(vocab_name_index(vocab_topology_names, "switch"), COMET_TOPO_SWITCH);
    assert_int_equal(vocab_name_index(vocab_attach_names, "pool"), COMET_ATTACH_POOL);
    assert_int_equal(vocab_name_index(vocab_objective_names, "cost"), COMET_OBJECTIVE_COST);
    assert_int_equal(vocab_name_index(vocab_group_names, "ep"), COMET_GROUP_EP);
    assert_int_equal(vocab_name_index(vocab_layer_group_names, "ep"), -1);
    assert_null(vocab_layer_group_names[COMET_LAYER_GROUPS]);
    assert_int_equal(vocab_name_index(vocab_group_names, NULL), -1);
    assert_string_equal(vocab_dtype_names[COMET_DTYPE_BF16], comet_dtype_name(COMET_DTYPE_BF16));
    assert_null(vocab_recompute_names[3]);
    assert_true(vocab_efficiency(0.0) == 1.0);
    assert_true(vocab_efficiency(-0.5) == 1.0);
    assert_true(vocab_efficiency(0.85) == 0.85);
    assert_true(vocab_efficiency(1.0) == 1.0);
    assert_true(COMET_GIB == (double)(1u << 30));
}

void suite_config(test_tally *t)
{
    static const struct CMUnitTest config_tests[] = {
        cmocka_unit_test(test_units_bytes),
        cmocka_unit_test(test_vocab_conventions),
        cmocka_unit_test(test_units_bandwidth),
        cmocka_unit_test(test_units_time),
        cmocka_unit_test(test_units_flops),
        cmocka_unit_test(test_units_range_ends_parse),
        cmocka_unit_test(test_units_rejects),
        cmocka_unit_test(test_full_document),
        cmocka_unit_test(test_json_equals_yaml),
        cmocka_unit_test(test_layer_list_model),
        cmocka_unit_test(test_layer_list_shapes),
        cmocka_unit_test(test_layer_list_shape_errors),
        cmocka_unit_test(test_all_or_nothing),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_model_presets),
        cmocka_unit_test(test_system_presets),
        cmocka_unit_test(test_system_presets_b200_gb200_mi300x),
        cmocka_unit_test(test_preset_registry),
        cmocka_unit_test(test_preset_in_document),
        cmocka_unit_test(test_error_unknown_key),
        cmocka_unit_test(test_error_ranges),
        cmocka_unit_test(test_error_types),
        cmocka_unit_test(test_error_sizes),
        cmocka_unit_test(test_network_size_models),
        cmocka_unit_test(test_network_shapes),
        cmocka_unit_test(test_network_shapes_round_trip),
        cmocka_unit_test(test_error_network_shapes),
        cmocka_unit_test(test_error_units),
        cmocka_unit_test(test_error_enums),
        cmocka_unit_test(test_error_yaml),
        cmocka_unit_test(test_error_checks),
        cmocka_unit_test(test_error_params_limit),
        cmocka_unit_test(test_srcmap_locate),
        cmocka_unit_test(test_srcmap_after_resolve),
        cmocka_unit_test(test_knob_table_is_whole),
        cmocka_unit_test(test_knobs_from_files),
        cmocka_unit_test(test_moe_keys),
        cmocka_unit_test(test_names),
    };
    RUN_GROUP(t, config_tests);
}
