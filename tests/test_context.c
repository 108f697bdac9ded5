/* Context parallelism (docs/model.md, context parallelism): cp = 1 changes
 * nothing; cp = 2 halves every per-rank token quantity; the ring's K/V
 * block and its bytes per step in closed form; its exposure step by step
 * (a send that fits under the attention core and one that does not), by
 * hand; Ulysses' all-to-all buffers; and the simulator agreeing with the
 * estimate for ring and Ulysses, hidden and exposed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/search.h"
#include "comet/simulate.h"
#include "../src/cost/cost.h"
#include "../src/workload/workload.h"
#include "tests.h"

#define MIB 1048576.0

/* A GPT-style model: MHA, 4h MLP, bf16, no dropout. */
static void small_gpt(comet_model *m, int64_t layers, int64_t seq)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "gpt");
    m->kind = COMET_MODEL_TRANSFORMER;
    m->dtype = COMET_DTYPE_BF16;
    m->layers = layers;
    m->hidden = 4096;
    m->heads = m->kv_heads = 32;
    m->ffn = 4 * 4096;
    m->seq = seq;
    m->vocab = 51200;
}

static double sum_flops(const work_layer *l, bool core)
{
    double f = 0.0;
    for (int i = 0; i < l->n_ops; i++)
        if (l->ops[i].attention_core == core)
            f += l->ops[i].flops;
    return f;
}

/* Llama 3 405B on DGX H100 nodes, and a strategy of tp 8, sequence
 * parallelism and fused attention over `seq` tokens and `layers` layers. */
static void llama_h100(comet_model *m, comet_system *sys, comet_strategy *s, int64_t seq,
                       int64_t layers)
{
    comet_error err;
    assert_int_equal(comet_preset_model("llama3-405b", m, &err), COMET_OK);
    assert_int_equal(comet_preset_system("h100-80g-dgx", sys, &err), COMET_OK);
    m->seq = seq;
    m->layers = layers;
    comet_strategy_defaults(s);
    s->tp = 8;
    s->sp = true;
    s->flash_attention = true;
}

/* cp = 1 is today's model: no exchange, no buffers, and ring and Ulysses
 * (which only differ for cp > 1) give the same step to the bit. The golden
 * check (/work/golden) holds the CLI's outputs to main's. */
static void test_cp_one_is_unchanged(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_error err;
    comet_strategy s;
    llama_h100(&m, &sys, &s, 8192, 126);
    s.pp = 8;
    s.dp = 2;
    s.global_batch = 64;
    work_stage w;
    work_build(&m, &s, &w);
    assert_close(w.layers[0].cp_kv_bytes, 0.0, 0.0);
    assert_close(w.cp_buffer_bytes, 0.0, 0.0);
    for (int i = 0; i < w.layers[0].n_comms; i++)
        assert_int_equal(w.layers[0].comms[i].group, COMET_GROUP_TP);
    /* the block's GEMM FLOPs are Narayanan's, over the whole sequence:
     * 2 s h (q + 2 kv) + 4 s^2 q + 2 s q h + 6 s h f per tp rank */
    double sq = 8192, h = 16384, q = 16384, kv = 8 * 128, f = 53248;
    double want = (2 * sq * h * (q + 2 * kv) + 4 * sq * sq * q + 2 * sq * q * h + 6 * sq * h * f) / 8;
    double gemm = 0.0;
    for (int i = 0; i < w.layers[0].n_ops; i++)
        if (w.layers[0].ops[i].kind == WORK_GEMM)
            gemm += w.layers[0].ops[i].flops;
    assert_close(gemm, want, 1e-12);
    comet_result ring, ulysses;
    assert_int_equal(comet_estimate(&m, &sys, &s, &ring, &err), COMET_OK);
    s.cp_comm = COMET_CP_ULYSSES;
    assert_int_equal(comet_estimate(&m, &sys, &s, &ulysses, &err), COMET_OK);
    assert_memory_equal(&ring, &ulysses, sizeof ring);
    assert_close(ring.cp_bytes, 0.0, 0.0);
    assert_close(ring.cp_exposed, 0.0, 0.0);
    assert_close(ring.cp_comm_time, 0.0, 0.0);
}

/* cp = 2 (ring or Ulysses): each rank holds s/2 of every sequence, so every
 * per-token quantity halves, the attention core too (s/2 queries against
 * all s keys); the model's FLOPs (whole sequence, all NPUs) do not. */
static void test_cp_two_halves_per_rank_work(void **state)
{
    (void)state;
    comet_model m;
    small_gpt(&m, 4, 4096);
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = 2;
    s.sp = true;
    for (int flash = 0; flash < 2; flash++)
        for (int c = 0; c < 2; c++) {
            s.flash_attention = flash;
            s.cp = 1;
            work_stage one, two;
            work_build(&m, &s, &one);
            s.cp = 2;
            s.cp_comm = c ? COMET_CP_ULYSSES : COMET_CP_RING;
            work_build(&m, &s, &two);
            const work_layer *a = &one.layers[0], *b = &two.layers[0];
            assert_close(sum_flops(b, false), sum_flops(a, false) / 2, 1e-15);
            assert_close(sum_flops(b, true), sum_flops(a, true) / 2, 1e-15);
            assert_close(b->act_bytes, a->act_bytes / 2, 1e-15);
            assert_close(b->act_bytes_selective, a->act_bytes_selective / 2, 1e-15);
            assert_close(b->act_bytes_full, a->act_bytes_full / 2, 1e-15);
            assert_close(b->comms[0].bytes, a->comms[0].bytes / 2, 1e-15); /* TP all-gather */
            assert_close(two.p2p_bytes, one.p2p_bytes / 2, 1e-15);
            assert_close(sum_flops(&two.layers[1], false), sum_flops(&one.layers[1], false) / 2,
                         1e-15); /* LM head */
            assert_close(two.fwd_flops_model, one.fwd_flops_model, 1e-15);
            assert_close(two.params_npu, one.params_npu, 1e-15);
            /* the attention kernel: under the ring a block of s/2 queries
             * against s/2 keys, half the causal work on the diagonal
             * (masked), the rest unmasked; Ulysses runs the whole sequence
             * on a share of the heads */
            assert_close(a->attn_seq, 4096, 1e-15);
            assert_close(a->attn_causal_share, 1.0, 1e-15);
            assert_close(b->attn_seq, c ? 4096 : 2048, 1e-15);
            assert_close(b->attn_causal_share, c ? 1.0 : 0.5, 1e-15);
        }
}

/* The ring's K/V block, Llama 3 405B at 128K with TP 8, CP 16 (moe-cp.md
 * 3.4): 2 (K, V) x 131072/16 tokens x 8/8 KV heads x 128 x 2 bytes = 4 MiB;
 * per layer and microbatch 15 sends forward, 30 blocks backward, 15 more
 * forward under full recompute; the buffers two blocks of K/V and dK/dV. */
static void test_ring_bytes_closed_form(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_error err;
    comet_strategy s;
    llama_h100(&m, &sys, &s, 131072, 4);
    s.cp = 16;
    s.global_batch = 2;
    work_stage w;
    work_build(&m, &s, &w);
    assert_close(w.layers[0].cp_kv_bytes, 4 * MIB, 0.0);
    assert_close(w.cp_buffer_bytes, 16 * MIB, 0.0);
    comet_result r;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    /* 2 microbatches x 4 layers x (15 + 30) blocks */
    assert_close(r.cp_bytes, 2 * 4 * 45 * 4 * MIB, 1e-15);
    s.recompute = COMET_RECOMPUTE_FULL;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    assert_close(r.cp_bytes, 2 * 4 * 60 * 4 * MIB, 1e-15);
    /* the ring's bytes are part of the model-parallel figures */
    assert_true(r.tp_bytes > r.cp_bytes);
}

/* Exposure, step by step, on one 100 GB/s dimension without latency: a
 * 1 GB block takes 10 ms a send (20 ms with dK/dV). cp = 4. */
static void test_ring_exposure_by_hand(void **state)
{
    (void)state;
    comet_system sys;
    memset(&sys, 0, sizeof sys);
    sys.n_dims = 1;
    sys.dims[0].size = 4;
    sys.dims[0].topology = COMET_TOPO_SWITCH;
    sys.dims[0].algorithm = COMET_ALGO_RING;
    sys.dims[0].bandwidth = 100e9;
    sys.dims[0].efficiency = 1.0;
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.cp = 4;
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        s.place[COMET_GROUP_CP][d] = 1;
    s.place[COMET_GROUP_CP][0] = 4;
    cp_ring ring;
    /* fits: a forward step computes 80/4 = 20 ms > 10 ms, a backward step
     * 160/4 = 40 ms > 20 ms; nothing exposed */
    cp_ring_times(&sys, &s, 1e9, 0.080, 0.160, &ring);
    assert_close(ring.send_one, 0.010, 1e-12);
    assert_close(ring.send_two, 0.020, 1e-12);
    assert_close(ring.sends_fwd, 3 * 0.010, 1e-12);
    assert_close(ring.sends_bwd, 2 * 0.010 + 2 * 0.020, 1e-12);
    assert_close(ring.exposed_fwd, 0.0, 0.0);
    assert_close(ring.exposed_bwd, 0.0, 0.0);
    assert_close(ring.bytes_fwd, 3e9, 1e-15);
    assert_close(ring.bytes_bwd, 6e9, 1e-15);
    /* does not fit: forward steps of 5 ms leave 3 x (10 - 5) = 15 ms;
     * backward steps of 10 ms hide the two one-block sends and leave
     * 2 x (20 - 10) = 20 ms of the two two-block ones */
    cp_ring_times(&sys, &s, 1e9, 0.020, 0.040, &ring);
    assert_close(ring.exposed_fwd, 0.015, 1e-12);
    assert_close(ring.exposed_bwd, 0.020, 1e-12);
    /* cp = 2: one send each way forward, two one-block sends backward */
    s.cp = 2;
    s.place[COMET_GROUP_CP][0] = 2;
    cp_ring_times(&sys, &s, 1e9, 0.010, 0.010, &ring);
    assert_close(ring.exposed_fwd, 0.010 - 0.005, 1e-12);
    assert_close(ring.exposed_bwd, 2 * (0.010 - 0.005), 1e-12);
    assert_close(ring.sends_bwd, 2 * 0.010, 1e-12);
    /* latency counts in every send */
    sys.dims[0].latency = 1e-3;
    cp_ring_times(&sys, &s, 1e9, 0.010, 0.010, &ring);
    assert_close(ring.send_one, 0.011, 1e-12);
    assert_close(ring.exposed_fwd, 0.011 - 0.005, 1e-12);
    /* no ring for cp = 1 */
    s.cp = 1;
    cp_ring_times(&sys, &s, 1e9, 0.010, 0.010, &ring);
    assert_close(ring.sends_fwd + ring.sends_bwd + ring.exposed_fwd, 0.0, 0.0);
}

/* Ulysses: four all-to-alls on the cp group per layer forward (Q, K, V,
 * output), mirrored in backward; each NPU's buffer is its local tensor,
 * b s/cp tokens x the width its tp rank holds. GQA model, tp 2, cp 4. */
static void test_ulysses_all_to_alls(void **state)
{
    (void)state;
    comet_model m;
    small_gpt(&m, 2, 4096);
    m.kv_heads = 8;
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = 2;
    s.cp = 4;
    s.cp_comm = COMET_CP_ULYSSES;
    s.microbatch = 2;
    s.global_batch = 2;
    work_stage w;
    work_build(&m, &s, &w);
    double tokens = 2 * 4096 / 4, q = tokens * 4096 / 2 * 2, kv = tokens * 8 * 128 / 2 * 2;
    int n = 0;
    double bytes = 0.0;
    for (int i = 0; i < w.layers[0].n_comms; i++) {
        const work_comm *c = &w.layers[0].comms[i];
        if (c->group != COMET_GROUP_CP)
            continue;
        n++;
        bytes += c->bytes;
        assert_int_equal(c->collective, COMET_COLL_ALL_TO_ALL);
        assert_true(c->in_forward && c->in_backward && c->recomputed);
    }
    assert_int_equal(n, 4);
    assert_close(bytes, 2 * q + 2 * kv, 1e-15);
    assert_close(w.layers[0].cp_kv_bytes, 0.0, 0.0);
    /* the estimate's cp bytes: 2 layers x 8 all-to-alls, one microbatch */
    comet_system sys;
    comet_error err;
    assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
    comet_result r;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    assert_close(r.cp_bytes, 2 * 2 * (2 * q + 2 * kv), 1e-15);
    /* the all-to-alls block: exposed is all of their time */
    assert_close(r.cp_exposed, r.cp_comm_time, 1e-15);
    assert_true(r.cp_exposed > 0.0);
}

/* The simulator prices the same exchange (cost's layer_times) and agrees
 * with the estimate, ring and Ulysses, the ring hidden (NVLink-class
 * links) and exposed (a slow second dimension). */
static void test_sim_agrees_with_cp(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_error err;
    comet_strategy s;
    static comet_sim_step_result r;
    for (int slow = 0; slow < 2; slow++)
        for (int c = 0; c < 2; c++)
            for (int congestion = 0; congestion < 2; congestion++) {
                llama_h100(&m, &sys, &s, 32768, 16);
                sys.dims[1].bandwidth = slow ? 0.5e9 : 50e9;
                /* hidden means hidden: contention (docs/model.md 7.6) is
                 * checked in tests/test_framework.c */
                sys.compute.overlap_slowdown = 0.0;
                s.cp = 4;
                s.cp_comm = c ? COMET_CP_ULYSSES : COMET_CP_RING;
                /* slow links: no pipeline, whose sends on them the
                 * estimate charges in full and the simulator overlaps */
                s.pp = slow ? 1 : 2;
                s.global_batch = 8;
                s.interleave = slow ? 1 : 2;
                s.overlap_dp = false;
                comet_result est;
                assert_int_equal(comet_estimate(&m, &sys, &s, &est, &err), COMET_OK);
                comet_sim_step_options o;
                memset(&o, 0, sizeof o);
                o.fidelity = congestion ? COMET_SIM_CONGESTION : COMET_SIM_UNAWARE;
                assert_int_equal(comet_sim_step(&m, &sys, &s, &o, &r, &err), COMET_OK);
                double diff = (r.step_time - est.step_time) / est.step_time;
                printf("  cp 4 %-7s %s links%s: simulated %.3f s, estimate %.3f s (%+.2f%%), "
                       "cp exposed %.3f s\n",
                       c ? "ulysses" : "ring", slow ? "slow" : "fast",
                       congestion ? ", congestion" : "", r.step_time, est.step_time,
                       100.0 * diff, est.cp_exposed);
                assert_true(fabs(diff) < 0.01);
                /* the slow links expose the ring; the fast ones hide it */
                if (!c)
                    assert_true(slow ? est.cp_exposed > 0.0 : est.cp_exposed == 0.0);
            }
}

/* The search explores cp: on a 32K sequence (64 NPUs) among the sizes
 * that keep each rank SEARCH_MIN_CP_SEQ = 4096 positions (2, 4, 8) and
 * split the sequence into 2 cp chunks, and a ranked point is what the
 * estimate says of it; on a 4K sequence cp stays 1. */
static void test_search_explores_cp(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy base;
    llama_h100(&m, &sys, &base, 32768, 16);
    comet_search_request req;
    test_search_request(&req, &m, &sys, 64, 16, 50);
    static comet_ranked top[50];
    int n = 0;
    comet_search_stats st;
    comet_error err;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_OK);
    assert_int_equal(n, 50);
    int with_cp = 0;
    for (int i = 0; i < n; i++) {
        const comet_strategy *s = &top[i].strategy;
        assert_true(s->cp == 1 || s->cp == 2 || s->cp == 4 || s->cp == 8);
        assert_int_equal(s->tp * s->cp * s->pp * s->dp, 64);
        if (s->cp > 1)
            with_cp++;
    }
    assert_true(with_cp > 0);
    for (int i = 0; i < n; i++)
        if (top[i].strategy.cp > 1) {
            comet_result r;
            assert_int_equal(comet_estimate(&m, &sys, &top[i].strategy, &r, &err), COMET_OK);
            assert_close(r.step_time, top[i].result.step_time, 1e-12);
            assert_true(r.cp_bytes > 0.0);
            break;
        }
    m.seq = 4096;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_OK);
    for (int i = 0; i < n; i++)
        assert_int_equal(top[i].strategy.cp, 1);
}

void suite_context(test_tally *t)
{
    const struct CMUnitTest context[] = {
        cmocka_unit_test(test_cp_one_is_unchanged),
        cmocka_unit_test(test_cp_two_halves_per_rank_work),
        cmocka_unit_test(test_ring_bytes_closed_form),
        cmocka_unit_test(test_ring_exposure_by_hand),
        cmocka_unit_test(test_ulysses_all_to_alls),
        cmocka_unit_test(test_sim_agrees_with_cp),
        cmocka_unit_test(test_search_explores_cp),
    };
    RUN_GROUP(t, context);
}
