/* Closed-form checks of the Transformer workload builder: parameter counts
 * (GPT-3 175B, Llama 2 70B), Megatron's FLOP formula, Korthikanti's
 * activation formulas for every parallel / recompute mode; and of layer
 * lists given by their shapes: each op on a small case worked by hand,
 * ResNet-50 and ResNet-152 against He et al. 2016 and torchvision. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/knobs.h"
#include "../src/workload/workload.h"
#include "tests.h"

static void gpt(comet_model *m, int64_t l, int64_t h, int64_t a)
{
    memset(m, 0, sizeof *m);
    m->kind = COMET_MODEL_TRANSFORMER;
    m->dtype = COMET_DTYPE_BF16;
    m->layers = l;
    m->hidden = h;
    m->heads = m->kv_heads = a;
    m->ffn = 4 * h;
    m->seq = 2048;
    m->vocab = 51200;
    m->tied_embeddings = m->learned_positions = m->biases = m->dropout = true;
}

static void test_gpt3_params(void **state)
{
    (void)state;
    comet_model m;
    gpt(&m, 96, 12288, 96);
    /* 12 l h^2 + 13 l h + V h + s h + 2 h (final norm) */
    double h = 12288, l = 96;
    double expect = 12 * l * h * h + 13 * l * h + 51200 * h + 2048 * h + 2 * h;
    assert_close(comet_model_params(&m), expect, 1e-15);
    assert_close(comet_model_params(&m), 174.6e9, 0.001);
}

static void test_llama2_params(void **state)
{
    (void)state;
    comet_model m;
    memset(&m, 0, sizeof m);
    m.kind = COMET_MODEL_TRANSFORMER;
    m.dtype = COMET_DTYPE_BF16;
    m.layers = 80;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.ffn = 28672;
    m.seq = 4096;
    m.vocab = 32000;
    m.gated_mlp = true;
    /* Meta reports 68.98 B (69 B) for Llama 2 70B */
    assert_close(comet_model_params(&m), 68.98e9, 0.001);
}

/* The work of one GPT-3 175B stage (pp 1) under tensor parallelism tp. */
static void gpt3_work(int64_t tp, bool sp, int64_t microbatch, work_stage *w)
{
    comet_model m;
    gpt(&m, 96, 12288, 96);
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = tp;
    s.sp = sp;
    s.microbatch = microbatch;
    work_build(&m, &s, w);
}

static void test_megatron_flops(void **state)
{
    (void)state;
    work_stage w;
    gpt3_work(8, false, 1, &w);
    /* Narayanan 2021 Eq. 3 counts blocks 4x (with recompute) and the LM
     * head 3x: 96 B s l h^2 (1 + s/6h + V/16lh). One forward is therefore
     * 24 B s l h^2 (1 + s/6h + V/12lh). */
    double B = 1, sq = 2048, l = 96, h = 12288, V = 51200;
    double fwd = 24 * B * sq * l * h * h * (1 + sq / (6 * h) + V / (12 * l * h));
    assert_close(w.fwd_flops_model, fwd, 1e-12);
    /* Per NPU the block's GEMM FLOPs are 1/t of the model's. */
    double block = 0;
    for (int i = 0; i < w.layers[0].n_ops; i++)
        if (w.layers[0].ops[i].kind == WORK_GEMM)
            block += w.layers[0].ops[i].flops;
    assert_close(block, (24 * sq * h * h + 4 * sq * sq * h) / 8, 1e-12);
}

/* Korthikanti 2022 Table 2, bytes per layer per microbatch (b = 2). */
static void test_activation_formulas(void **state)
{
    (void)state;
    double sb = 2048.0 * 2, h = 12288, a = 96, t = 8, sq = 2048;
    work_stage w;

    gpt3_work(1, false, 2, &w);
    assert_close(w.layers[0].act_bytes, sb * h * (34 + 5 * a * sq / h), 1e-12);

    gpt3_work(8, false, 2, &w);
    assert_close(w.layers[0].act_bytes, sb * h * (10 + 24 / t + 5 * a * sq / (h * t)), 1e-12);
    assert_close(w.layers[0].act_bytes_selective, sb * h * (10 + 24 / t), 1e-12);
    assert_close(w.layers[0].act_bytes_full, sb * h * 2, 1e-12);

    gpt3_work(8, true, 2, &w);
    assert_close(w.layers[0].act_bytes, sb * h / t * (34 + 5 * a * sq / h), 1e-12);
    assert_close(w.layers[0].act_bytes_selective, sb * h / t * 34, 1e-12);
    assert_close(w.layers[0].act_bytes_full, sb * h * 2 / t, 1e-12);
}

static void test_tp_collectives(void **state)
{
    (void)state;
    work_stage w;
    gpt3_work(8, false, 1, &w);
    /* two all-reduces of b s h 16-bit elements per layer forward */
    assert_int_equal(w.layers[0].n_comms, 2);
    assert_int_equal(w.layers[0].comms[0].collective, COMET_COLL_ALL_REDUCE);
    assert_close(w.layers[0].comms[0].bytes, 2048.0 * 12288 * 2, 1e-15);
    gpt3_work(8, true, 1, &w);
    /* sequence parallel: each becomes an all-gather and a reduce-scatter,
     * plus the backward-only re-gather of the input */
    assert_int_equal(w.layers[0].n_comms, 6);
    assert_int_equal(w.layers[0].comms[0].collective, COMET_COLL_ALL_GATHER);
    assert_int_equal(w.layers[0].comms[1].collective, COMET_COLL_REDUCE_SCATTER);
    assert_int_equal(w.layers[0].comms[2].collective, COMET_COLL_ALL_GATHER);
    assert_false(w.layers[0].comms[2].in_forward);
    assert_true(w.layers[0].comms[2].in_backward);
    /* pipeline message b s h / t with scatter-gather, with or without SP */
    assert_close(w.p2p_bytes, 2048.0 * 12288 * 2 / 8, 1e-15);
}

/* Fused (flash) attention: the same FLOPs, but the score matrix never
 * reaches HBM and only the fp32 softmax max and sum (8 bytes per row) are
 * stashed instead of 5as/h sbh. */
static void test_flash_attention(void **state)
{
    (void)state;
    comet_model m;
    gpt(&m, 96, 12288, 96);
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = 8;
    work_stage plain, flash;
    work_build(&m, &s, &plain);
    s.flash_attention = true;
    work_build(&m, &s, &flash);
    double rows = 1.0 * (96 / 8) * 2048;
    assert_close(flash.layers[0].act_bytes, flash.layers[0].act_bytes_selective + 8 * rows, 1e-12);
    assert_close(flash.layers[0].act_bytes_selective, plain.layers[0].act_bytes_selective, 1e-15);
    double flops_plain = 0, flops_flash = 0, core_bytes = 0, scores = rows * 2048;
    for (int i = 0; i < flash.layers[0].n_ops; i++) {
        flops_plain += plain.layers[0].ops[i].flops;
        flops_flash += flash.layers[0].ops[i].flops;
        if (plain.layers[0].ops[i].attention_core)
            core_bytes += plain.layers[0].ops[i].bytes - flash.layers[0].ops[i].bytes;
    }
    assert_close(flops_flash, flops_plain, 1e-15);
    /* plain attention moves the scores 2 (QK^T out) + 4 (softmax) + 5 (dropout) + 2 (x V in) bytes */
    assert_close(core_bytes, 13 * scores, 1e-12);
}

/* Uneven pipelines: each of the p v model chunks holds l / (p v) layers,
 * the first l mod (p v) one more; the busiest stage is the first (more
 * layers) or the last (the LM head), by forward FLOPs. */
static void test_uneven_stages(void **state)
{
    (void)state;
    comet_model m;
    gpt(&m, 96, 12288, 96);
    comet_strategy s;
    comet_strategy_defaults(&s);
    work_stage w;
    /* 96 over 7: stages 0-4 hold 14, 5-6 hold 13; 14 blocks outweigh 13
     * blocks and the head (a block is ~7.6 TFLOP, the head 2.6 TFLOP) */
    s.pp = 7;
    work_build(&m, &s, &w);
    assert_int_equal(work_stage_blocks(&m, &s, 0), 14);
    assert_int_equal(work_stage_blocks(&m, &s, 6), 13);
    assert_true(w.busiest_is_first);
    assert_close(w.layers[0].count, 14.0, 0.0);
    /* 96 over 8 x 5 chunks: 2 each, the first 16 chunks 3; every stage
     * still holds 12 (two chunks of 3, three of 2), so the head decides */
    s.pp = 8;
    s.interleave = 5;
    work_build(&m, &s, &w);
    assert_int_equal(work_chunk_blocks(&m, &s, 15), 3);
    assert_int_equal(work_chunk_blocks(&m, &s, 16), 2);
    assert_false(w.busiest_is_first);
    assert_close(w.layers[0].count, 12.0, 0.0);
    assert_close(w.first_stage_count, 12.0, 0.0);
}

/* What a split backward keeps from B to W (ZB-H1) per block: each weight
 * GEMM's stashed input and output gradient. GPT-3 (h 12288, 4h MLP, s
 * 2048, b 1, 2 bytes): QKV 2 + 6, projection 2 + 2, MLP in 2 + 8, MLP out
 * 8 + 2 = 32 s b h (Qi et al. 2024, Table 1). Under TP 8 with sequence
 * parallelism the QKV and MLP inputs are stashed sharded and the two
 * row-parallel GEMMs' output gradients are whole: s b h (4 + 28/t). */
static void test_weight_gradient_bytes(void **state)
{
    (void)state;
    comet_model m;
    gpt(&m, 96, 12288, 96);
    comet_strategy s;
    comet_strategy_defaults(&s);
    work_stage w;
    work_build(&m, &s, &w);
    double sbh = 2048.0 * 12288.0;
    assert_close(w.layers[0].wgrad_bytes, 32.0 * sbh, 0.0);
    s.tp = 8;
    s.sp = true;
    work_build(&m, &s, &w);
    assert_close(w.layers[0].wgrad_bytes, sbh * (4.0 + 28.0 / 8.0), 1e-6);
    /* the LM head: the final-norm output (sharded) and the logits' gradient */
    assert_close(w.layers[1].wgrad_bytes, 2.0 * (2048.0 * 12288.0 / 8.0 + 2048.0 * 6400.0),
                 1e-6);
}

/* Megatron-LM's uneven first and last stages (--decoder-first- and
 * --decoder-last-pipeline-num-layers): Llama 3 405B's 126 layers on 16
 * stages as 7 + 14 x 8 + 7; a middle stage's 8 blocks outweigh 7 blocks
 * and the LM head (a block is ~10.6 TFLOP at b 1, s 8192, the head
 * 2.1 TFLOP), so a middle stage is the busiest, with neither end layer.
 * Only the first given: 119 over 15 stages, 8 each for the first 14.
 * The refusals name the key, with their fault code. */
static void test_uneven_first_last_stages(void **state)
{
    (void)state;
    comet_model m;
    comet_error err;
    assert_int_equal(comet_preset_model("llama3-405b", &m, &err), COMET_OK);
    assert_int_equal(m.layers, 126);
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = 8;
    s.pp = 16;
    s.global_batch = 16;
    s.first_stage_layers = 7;
    s.last_stage_layers = 7;
    static const int64_t blocks[16] = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
    int64_t at = 0;
    for (int64_t i = 0; i < 16; i++) {
        assert_int_equal(work_chunk_blocks(&m, &s, i), blocks[i]);
        assert_int_equal(work_chunk_first_block(&m, &s, i), at);
        at += blocks[i];
    }
    assert_int_equal(at, 126);
    work_stage w;
    work_build(&m, &s, &w);
    assert_true(w.busiest_is_middle);
    assert_close(w.layers[0].count, 8.0, 0.0);
    assert_close(w.first_stage_count, 7.0, 0.0);
    assert_close(w.middle_stage_count, 8.0, 0.0);
    assert_close(w.last_stage_count, 7.0, 0.0);
    assert_close(w.params_npu, 8.0 * w.layers[0].params, 0.0); /* no embedding, no head */
    s.last_stage_layers = 0;
    assert_int_equal(work_chunk_blocks(&m, &s, 0), 7);
    assert_int_equal(work_chunk_blocks(&m, &s, 14), 8);
    assert_int_equal(work_chunk_blocks(&m, &s, 15), 7);
    assert_int_equal(work_chunk_first_block(&m, &s, 15), 119);
    /* even split as before when neither is given: 126 = 14 x 8 + 2 x 7 */
    s.first_stage_layers = 0;
    assert_int_equal(work_chunk_blocks(&m, &s, 13), 8);
    assert_int_equal(work_chunk_blocks(&m, &s, 14), 7);
    assert_int_equal(work_chunk_first_block(&m, &s, 14), 112);

    comet_system sys;
    assert_int_equal(comet_preset_system("a100-80g-selene", &sys, &err), COMET_OK);
    static const struct {
        int64_t pp, v, first, last;
        comet_schedule schedule;
        comet_knob_id knob;
        comet_strategy_fault fault;
    } bad[] = {
        {16, 1, 120, 0, COMET_SCHEDULE_1F1B, COMET_KNOB_FIRST_STAGE_LAYERS,
         COMET_FAULT_UNEVEN_STAGES},                   /* 6 layers for 15 stages */
        {16, 1, 0, 127, COMET_SCHEDULE_1F1B, COMET_KNOB_LAST_STAGE_LAYERS,
         COMET_FAULT_UNEVEN_STAGES},                   /* past the depth */
        {2, 1, 60, 60, COMET_SCHEDULE_1F1B, COMET_KNOB_LAST_STAGE_LAYERS,
         COMET_FAULT_UNEVEN_STAGES},                   /* pp 2: they must hold all 126 */
        {8, 2, 7, 0, COMET_SCHEDULE_1F1B, COMET_KNOB_FIRST_STAGE_LAYERS,
         COMET_FAULT_UNEVEN_STAGES},                   /* interleaved */
        {1, 1, 7, 0, COMET_SCHEDULE_1F1B, COMET_KNOB_FIRST_STAGE_LAYERS,
         COMET_FAULT_UNEVEN_STAGES},                   /* no pipeline */
        {8, 2, 0, 0, COMET_SCHEDULE_ZB_H1, COMET_KNOB_SCHEDULE, COMET_FAULT_SCHEDULE},
        /* DualPipe: interleaved, an odd pp, pp 1, fewer than 2p microbatches (16) */
        {8, 2, 0, 0, COMET_SCHEDULE_DUALPIPE, COMET_KNOB_SCHEDULE, COMET_FAULT_SCHEDULE},
        {3, 1, 0, 0, COMET_SCHEDULE_DUALPIPE, COMET_KNOB_SCHEDULE, COMET_FAULT_SCHEDULE},
        {1, 1, 0, 0, COMET_SCHEDULE_DUALPIPE, COMET_KNOB_SCHEDULE, COMET_FAULT_SCHEDULE},
        {16, 1, 0, 0, COMET_SCHEDULE_DUALPIPE, COMET_KNOB_SCHEDULE, COMET_FAULT_SCHEDULE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        comet_strategy_defaults(&s);
        s.tp = 8;
        s.pp = bad[i].pp;
        s.interleave = bad[i].v;
        s.global_batch = 16;
        s.first_stage_layers = bad[i].first;
        s.last_stage_layers = bad[i].last;
        s.schedule = bad[i].schedule;
        comet_strategy_refusal why;
        assert_int_equal(comet_strategy_resolve_why(&m, &sys, &s, NULL, &why, &err),
                         COMET_EINPUT);
        assert_int_equal(why.fault, bad[i].fault);
        assert_int_equal(why.knob, bad[i].knob);
        assert_string_equal(err.key, comet_knob_get(bad[i].knob)->key);
    }
    /* DualPipe: an odd count of microbatches is refused, naming the key;
     * 8 on 4 stages (2p) runs */
    comet_strategy_defaults(&s);
    s.tp = 8;
    s.pp = 4;
    s.global_batch = 9;
    s.schedule = COMET_SCHEDULE_DUALPIPE;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, NULL, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.schedule");
    assert_non_null(strstr(err.message, "even number"));
    s.global_batch = 8;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, NULL, &err), COMET_OK);
    /* pp 2 with both ends given and holding all: fine */
    comet_strategy_defaults(&s);
    s.tp = 8;
    s.pp = 2;
    s.global_batch = 16;
    s.first_stage_layers = 60;
    s.last_stage_layers = 66;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, NULL, &err), COMET_OK);
    /* layer lists: refused */
    comet_model dlrm;
    assert_int_equal(comet_preset_model("dlrm", &dlrm, &err), COMET_OK);
    comet_strategy_defaults(&s);
    s.pp = 2;
    s.global_batch = 16;
    s.first_stage_layers = 1;
    comet_strategy_refusal why;
    assert_int_equal(comet_strategy_resolve_why(&dlrm, &sys, &s, NULL, &why, &err), COMET_EINPUT);
    assert_int_equal(why.fault, COMET_FAULT_UNEVEN_STAGES);
    assert_string_equal(err.key, "strategy.first_stage_layers");
}

/* ---- layer lists given by their shapes (docs/model.md 13.1) ----------- */

/* Appends an entry of count layers given by its shape. */
static comet_layer *add(comet_model *m, int64_t count, comet_layer_shape shape)
{
    comet_layer *l = &m->layer_list[m->n_layer_kinds++];
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "l%d", m->n_layer_kinds);
    l->count = count;
    l->shape = shape;
    return l;
}

static void layers_model(comet_model *m, comet_dtype dt)
{
    memset(m, 0, sizeof *m);
    m->kind = COMET_MODEL_LAYERS;
    m->dtype = dt;
}

static void expect_layer(const comet_layer *l, double flops, double gemm, double params,
                         double bytes, double act, double out)
{
    assert_true(l->fwd_flops == flops);
    assert_true(l->shape.gemm_flops == gemm);
    assert_true(l->params == params);
    assert_true(l->fwd_bytes == bytes);
    assert_true(l->act_bytes == act);
    assert_true(l->out_bytes == out);
}

static void expect_out(const comet_layer *l, int64_t h, int64_t w, int64_t c)
{
    assert_int_equal(l->shape.out[0], h);
    assert_int_equal(l->shape.out[1], w);
    assert_int_equal(l->shape.out[2], c);
}

/* conv, batch norm, ReLU, max pool, grouped conv, global average pool and
 * fc in a chain, fp16 (2 bytes). Elements moved = weights + input +
 * output, a convolution's bias added by a kernel of its own (output read
 * and written), a pool's windows' reads counted too; kept for backward:
 * conv, bn, max pool and fc their input, ReLU its output (in place), an
 * input counted once where the entry before already keeps it as its
 * output. */
static void test_cnn_ops(void **state)
{
    (void)state;
    comet_model m;
    layers_model(&m, COMET_DTYPE_FP16);
    add(&m, 1, (comet_layer_shape){.op = COMET_OP_CONV, .in = {5, 5, 3}, .out_channels = 4,
                                   .kernel = 3, .stride = 2, .padding = 1, .bias = true});
    add(&m, 1, (comet_layer_shape){.op = COMET_OP_BATCHNORM});
    add(&m, 1, (comet_layer_shape){.op = COMET_OP_RELU});
    add(&m, 1, (comet_layer_shape){.op = COMET_OP_POOL, .pool = COMET_POOL_MAX, .kernel = 2,
                                   .stride = 1});
    add(&m, 1, (comet_layer_shape){.op = COMET_OP_CONV, .out_channels = 8, .kernel = 1,
                                   .groups = 2});
    add(&m, 1, (comet_layer_shape){.op = COMET_OP_POOL, .pool = COMET_POOL_AVG, .global = true});
    add(&m, 1, (comet_layer_shape){.op = COMET_OP_FC, .out_channels = 10, .bias = true});
    comet_error err;
    assert_int_equal(comet_model_derive_shapes(&m, &err), COMET_OK);
    /* conv 5x5x3 -> 4, k 3, s 2, p 1: side (5 + 2 - 3)/2 + 1 = 3; MACs
     * 3*3*4 * 3*9 = 972, FLOPs 2*972 + 36 (bias) = 1980; params 4*3*9 + 4
     * = 112; bytes 2 (108 + 75 + 36) for the GEMM and 2 (2*36 + 4) for the
     * bias = 590; keeps its input, 2*75 */
    expect_out(&m.layer_list[0], 3, 3, 4);
    expect_layer(&m.layer_list[0], 1980, 1980, 112, 590, 150, 72);
    /* batch norm on 36: 5*36 FLOPs, 2*4 params, 2 (8 + 36 + 36) bytes,
     * keeps its input (the conv does not keep its output) */
    expect_layer(&m.layer_list[1], 180, 0, 8, 160, 72, 72);
    /* ReLU: 36 FLOPs, 2 (36 + 36) bytes, keeps its output */
    expect_layer(&m.layer_list[2], 36, 0, 0, 144, 72, 72);
    /* max pool 2x2 stride 1: 2x2x4, 3 comparisons each, 4 reads each; its
     * input is the ReLU's kept output, not counted again */
    expect_out(&m.layer_list[3], 2, 2, 4);
    expect_layer(&m.layer_list[3], 48, 0, 0, 2 * (36 + 16 + 4 * 16), 0, 32);
    /* 1x1 conv 4 -> 8 in 2 groups: MACs 2*2*8 * 4/2 = 64; params 8*2 */
    expect_out(&m.layer_list[4], 2, 2, 8);
    expect_layer(&m.layer_list[4], 128, 128, 16, 2 * (16 + 16 + 32), 32, 64);
    /* global average pool 2x2x8 -> 1x1x8: 4 FLOPs per output, keeps nothing */
    expect_out(&m.layer_list[5], 1, 1, 8);
    expect_layer(&m.layer_list[5], 32, 0, 0, 2 * (32 + 8 + 4 * 8), 0, 16);
    /* fc 8 -> 10 with bias: 2*8*10 + 10 FLOPs, 90 params */
    expect_out(&m.layer_list[6], 1, 1, 10);
    expect_layer(&m.layer_list[6], 170, 170, 90, 2 * (90 + 8 + 10), 16, 20);
}

/* A bottleneck 4x4x8 -> width 2 -> 8, stride 2 in its first 1x1, fp32:
 * a = 2x2x2 (1x1 s2), b = 2x2x2 (3x3 p1), out 2x2x8 (1x1), projection
 * 2x2x8 (1x1 s2, channels unchanged but stride 2). */
static void test_cnn_bottleneck(void **state)
{
    (void)state;
    comet_model m;
    layers_model(&m, COMET_DTYPE_FP32);
    comet_layer *first = add(&m, 1, (comet_layer_shape){.op = COMET_OP_BOTTLENECK,
                                                        .in = {4, 4, 8}, .width = 2,
                                                        .out_channels = 8, .stride = 2});
    add(&m, 2, (comet_layer_shape){.op = COMET_OP_BOTTLENECK, .width = 2, .out_channels = 8});
    comet_error err;
    assert_int_equal(comet_model_derive_shapes(&m, &err), COMET_OK);
    /* MACs: 4*2*8 + 4*2*2*9 + 4*8*2 + 4*8*8 (projection) = 528;
     * batch norms on 8 + 8 + 32 + 32 elements: 5*80; ReLUs 8 + 8 + 32 and
     * the add 32: 80. Params: 16 + 36 + 16 + 64 weights, 2 (2+2+8+8).
     * Elements moved: conv1 16+128+8, bn 4+16, relu 16, conv2 36+8+8, bn
     * 4+16, relu 16, conv3 16+8+32, bn 16+64, projection 64+128+32, its bn
     * 16+64, add 96, relu 64: 876. Kept: a and its ReLU 2*8, b and its
     * ReLU 2*8, conv3's out 32, projection's 32, the input 128, the output
     * 32: 256. */
    expect_out(&m.layer_list[0], 2, 2, 8);
    expect_layer(&m.layer_list[0], 1056 + 400 + 80, 1056, 172, 4 * 876, 4 * 256, 4 * 32);
    /* identity blocks: MACs 64 + 144 + 64 = 272; bn 5*(8+8+32); params 68
     * + 24; moved 56+20+16+52+20+16+56+80+96+64 = 476; kept 64 and the
     * output, the input being the block before's output */
    expect_out(&m.layer_list[1], 2, 2, 8);
    expect_layer(&m.layer_list[1], 544 + 240 + 80, 544, 92, 4 * 476, 4 * 96, 4 * 32);
    /* ResNet v1.5 strides the 3x3: a = 4x4x2, MACs 16*2*8 + 4*2*2*9 +
     * 4*8*2 + 4*8*8 = 720 */
    first->shape.stride_at = COMET_STRIDE_3X3;
    assert_int_equal(comet_model_derive_shapes(&m, &err), COMET_OK);
    expect_out(&m.layer_list[0], 2, 2, 8);
    assert_true(m.layer_list[0].shape.gemm_flops == 1440);
}

/* Convolution and fc multiply-adds, parameters and forward FLOPs of a
 * whole layer list. */
static void cnn_totals(const comet_model *m, double *macs, double *flops)
{
    *macs = *flops = 0.0;
    for (int i = 0; i < m->n_layer_kinds; i++) {
        *macs += (double)m->layer_list[i].count * m->layer_list[i].shape.gemm_flops / 2.0;
        *flops += (double)m->layer_list[i].count * m->layer_list[i].fwd_flops;
    }
}

static void resnet_stride_at(comet_model *m, comet_stride_at at)
{
    for (int i = 0; i < m->n_layer_kinds; i++)
        m->layer_list[i].shape.stride_at = at;
    comet_error err;
    assert_int_equal(comet_model_derive_shapes(m, &err), COMET_OK);
}

/* ResNet multiply-adds by hand, with n_i blocks per stage: conv1 112^2 *
 * 64 * 3 * 7^2 = 118,013,952; the fc 2048 * 1000; every stage has
 * (side * width)^2 = (56 * 64)^2 = 12,845,056, so a block costs that
 * times 17 (1x1 w·4w, 3x3 9w^2, 1x1 4w·w), stage 2's first 18 (its input
 * 64 = w, plus the 64 -> 256 projection 4w^2) and the first of stages
 * 3-5 23 (input 2w: 2w^2 + 9w^2 + 4w^2 + a projection of 8w^2). The fc's
 * 1000 bias adds count half a multiply-add each here. */
static double resnet_macs(int blocks)
{
    return 118013952.0 + 2048000.0 + 500.0 + 12845056.0 * (18 + 3 * 23 + 17 * (blocks - 4));
}

/* He et al. 2016, Table 1: ResNet-152 11.3 x 10^9 multiply-adds (the
 * paper's "FLOPs"); torchvision (ResNet152_Weights.IMAGENET1K_V1):
 * 60,192,808 parameters and 11.51 G multiply-adds for its v1.5, strided in
 * the 3x3. ResNet-50: 3.8 x 10^9 (Table 1), 25,557,032 parameters and
 * 4.09 G for v1.5 (ResNet50_Weights.IMAGENET1K_V1). */
static void test_resnet_totals(void **state)
{
    (void)state;
    comet_model m;
    comet_error err;
    double macs, flops;
    /* the presets are torchvision's v1.5 */
    assert_int_equal(comet_preset_model("resnet152", &m, &err), COMET_OK);
    cnn_totals(&m, &macs, &flops);
    assert_close(macs, 11.51e9, 0.001);
    assert_true(comet_model_params(&m) == 60192808.0);
    assert_int_equal(comet_model_depth(&m), 56);
    resnet_stride_at(&m, COMET_STRIDE_1X1);
    cnn_totals(&m, &macs, &flops);
    assert_true(macs == resnet_macs(3 + 8 + 36 + 3));
    assert_close(macs, 11.3e9, 0.01);
    /* at 2 FLOP per multiply-add, with batch norms, ReLUs, adds and pools
     * (0.15 GFLOP) */
    assert_close(flops, 2 * 11.3e9, 0.01);
    assert_int_equal(comet_preset_model("resnet50", &m, &err), COMET_OK);
    cnn_totals(&m, &macs, &flops);
    assert_close(macs, 4.09e9, 0.001);
    assert_true(comet_model_params(&m) == 25557032.0);

    char path[4200];
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(path, sizeof path, "%s/../examples/resnet50.yaml", dir ? dir : "tests");
    comet_job *job = malloc(sizeof *job);
    assert_non_null(job);
    comet_job_init(job);
    assert_int_equal(comet_config_read_file(path, job, &err), COMET_OK);
    cnn_totals(&job->model, &macs, &flops);
    assert_true(macs == resnet_macs(3 + 4 + 6 + 3));
    assert_close(macs, 3.8e9, 0.02);
    assert_true(comet_model_params(&job->model) == 25557032.0);
    resnet_stride_at(&job->model, COMET_STRIDE_3X3);
    cnn_totals(&job->model, &macs, &flops);
    assert_close(macs, 4.09e9, 0.001);
    free(job);
}

/* Inception-v3 (Szegedy et al. 2016) as torchvision's inception_v3
 * builds it, less the auxiliary classifier: 27,161,264 parameters with it
 * (Inception_V3_Weights.IMAGENET1K_V1), whose aux head is 3,326,696 (a
 * 1x1 conv 768->128 with its batch norm, 128x5x5->768 with its batch
 * norm, fc 768->1000): 23,834,568; 5.71 G multiply-adds at 299x299
 * (torchvision's "GFLOPS", which counts multiply-adds). Each block puts
 * out the channels Table 1 lists: 288 at 35x35, 768 at 17x17, 2048 at
 * 8x8. */
static void test_inception_totals(void **state)
{
    (void)state;
    comet_model m;
    comet_error err;
    double macs, flops;
    assert_int_equal(comet_preset_model("inception-v3", &m, &err), COMET_OK);
    cnn_totals(&m, &macs, &flops);
    assert_true(comet_model_params(&m) == 27161264.0 - 3326696.0);
    assert_close(macs, 5.71e9, 0.01);
    const struct {
        const char *name;
        int64_t h, c;
    } outs[] = {{"mixed5b", 35, 256}, {"mixed5d", 35, 288}, {"mixed6a", 17, 768},
                {"mixed6e", 17, 768}, {"mixed7a", 8, 1280}, {"mixed7c", 8, 2048}};
    for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++) {
        int i = 0;
        while (i < m.n_layer_kinds && strcmp(m.layer_list[i].name, outs[k].name) != 0)
            i++;
        assert_true(i < m.n_layer_kinds);
        assert_int_equal(m.layer_list[i].shape.out[0], outs[k].h);
        assert_int_equal(m.layer_list[i].shape.out[2], outs[k].c);
    }
    /* an unknown variant name is the reader's one-line error */
    static const char bad[] = "model:\n  kind: layers\n  layer_list:\n"
                              "    - {name: m, op: inception, variant: f, in: [35, 35, 192], "
                              "width: 32}\n";
    comet_job *job = malloc(sizeof *job);
    comet_job_init(job);
    assert_int_equal(comet_config_read_text(bad, strlen(bad), "bad.yaml", job, &err),
                     COMET_EINPUT);
    assert_int_equal(err.line, 4);
    assert_string_equal(err.key, "model.layer_list[0].variant");
    free(job);
}

/* Simonyan and Zisserman 2015, configuration D, as torchvision's vgg16:
 * 138,357,544 parameters; multiply-adds 224^2*64*3*9 (conv1_1) +
 * 1,849,688,064 (each of conv1_2, conv2_2, conv3_2-3, conv4_2-3: every
 * 3x3 at (side * channels)^2 = (224*64)^2, times 9) + 924,844,032 (each
 * of conv2_1, conv3_1, conv4_1: half that) + 462,422,016 (each of
 * conv5_1-3) + the fc's 123,633,664 = 15,470,264,320 (torchvision: 15.47
 * G), the convolutions' biases adding half a multiply-add per output. */
static void test_vgg16_totals(void **state)
{
    (void)state;
    comet_model m;
    comet_error err;
    double macs, flops;
    assert_int_equal(comet_preset_model("vgg16", &m, &err), COMET_OK);
    cnn_totals(&m, &macs, &flops);
    double biases = 2.0 * 224 * 224 * 64 + 2.0 * 112 * 112 * 128 + 3.0 * 56 * 56 * 256 +
                    3.0 * 28 * 28 * 512 + 3.0 * 14 * 14 * 512 + 4096 + 4096 + 1000;
    assert_true(macs == 15470264320.0 + biases / 2.0);
    assert_true(comet_model_params(&m) == 138357544.0);
    assert_int_equal(m.n_layer_kinds, 38);
}

void suite_workload(test_tally *t)
{
    const struct CMUnitTest workload[] = {
        cmocka_unit_test(test_gpt3_params),         cmocka_unit_test(test_llama2_params),
        cmocka_unit_test(test_megatron_flops),      cmocka_unit_test(test_activation_formulas),
        cmocka_unit_test(test_tp_collectives),
        cmocka_unit_test(test_uneven_stages),
        cmocka_unit_test(test_uneven_first_last_stages),
        cmocka_unit_test(test_weight_gradient_bytes),
        cmocka_unit_test(test_flash_attention),
        cmocka_unit_test(test_cnn_ops),
        cmocka_unit_test(test_cnn_bottleneck),
        cmocka_unit_test(test_resnet_totals),
        cmocka_unit_test(test_inception_totals),
        cmocka_unit_test(test_vgg16_totals),
    };
    RUN_GROUP(t, workload);
}
