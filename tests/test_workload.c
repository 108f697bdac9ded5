/* Closed-form checks of the Transformer workload builder: parameter counts
 * (GPT-3 175B, Llama 2 70B), Megatron's FLOP formula, Korthikanti's
 * activation formulas for every parallel / recompute mode. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/comet.h"
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

void suite_workload(test_tally *t)
{
    const struct CMUnitTest workload[] = {
        cmocka_unit_test(test_gpt3_params),         cmocka_unit_test(test_llama2_params),
        cmocka_unit_test(test_megatron_flops),      cmocka_unit_test(test_activation_formulas),
        cmocka_unit_test(test_tp_collectives),
        cmocka_unit_test(test_uneven_stages),
        cmocka_unit_test(test_flash_attention),
    };
    RUN_GROUP(t, workload);
}
