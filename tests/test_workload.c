/* Closed-form checks of the Transformer workload builder: parameter counts
 * (GPT-3 175B, Llama 2 70B), Megatron's FLOP formula, Korthikanti's
 * activation formulas for every parallel / recompute mode. */
#include <math.h>
#include <stdio.h>
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
    };
    RUN_GROUP(t, workload);
}
