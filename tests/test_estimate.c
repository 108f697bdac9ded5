/* Closed-form checks of the estimator on a toy system where every number
 * can be worked out by hand (efficiencies 1, no GEMM curve, zero latency),
 * plus structural checks on the presets: the breakdown adds up, ZeRO
 * shards what it should, offload moves bytes to the expansion tier. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/comet.h"
#include "tests.h"

/* 100 TFLOPS, 1 TB/s HBM of 80 GiB, one auto-sized switch dimension of
 * 100 GB/s per NPU with ring collectives and no latency. */
static void toy_system(comet_system *sys)
{
    memset(sys, 0, sizeof *sys);
    snprintf(sys->name, sizeof sys->name, "toy");
    sys->compute.matrix_flops[COMET_DTYPE_FP16] = 100e12;
    sys->compute.vector_flops[COMET_DTYPE_FP16] = 100e12;
    sys->compute.vector_efficiency = 1.0;
    sys->hbm.present = true;
    sys->hbm.capacity = 80.0 * 1073741824.0;
    sys->hbm.bandwidth = 1e12;
    sys->hbm.efficiency = 1.0;
    sys->n_dims = 1;
    snprintf(sys->dims[0].name, sizeof sys->dims[0].name, "net");
    sys->dims[0].size = 0;
    sys->dims[0].topology = COMET_TOPO_SWITCH;
    sys->dims[0].algorithm = COMET_ALGO_RING;
    sys->dims[0].bandwidth = 100e9;
    sys->dims[0].efficiency = 1.0;
    sys->collective_chunks = 1;
}

/* Eight identical layers of 1 TFLOP per sample, no memory traffic,
 * 1e9 parameters, 1 MB activations and outputs each. */
static void toy_model(comet_model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "toy");
    m->kind = COMET_MODEL_LAYERS;
    m->dtype = COMET_DTYPE_FP16;
    m->n_layer_kinds = 1;
    comet_layer *l = &m->layer_list[0];
    snprintf(l->name, sizeof l->name, "dense");
    l->count = 8;
    l->fwd_flops = 1e12;
    l->params = 1e9;
    l->act_bytes = 1e6;
    l->out_bytes = 1e6;
    m->sample_tokens = 1;
}

static void toy_strategy(comet_strategy *s)
{
    comet_strategy_defaults(s);
    s->pp = 2;
    s->dp = 2;
    s->global_batch = 8;
    s->microbatch = 1;
    s->overlap_dp = false;
}

static void test_toy_closed_form(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    /* 4 microbatches per pipeline; each stage has 4 layers: 4e12 FLOP fwd. */
    assert_int_equal(r.microbatches, 4);
    assert_close(r.forward, 4 * 0.04, 1e-12);
    assert_close(r.backward, 4 * 0.08, 1e-12);
    assert_close(r.recompute, 0.0, 0.0);
    /* bubble (p-1)/v microbatch times: 1 x 0.12 s */
    assert_close(r.bubble, 0.12, 1e-12);
    /* p2p: 2 sends (fwd, bwd) per microbatch of 1 MB at 100 GB/s */
    assert_close(r.pp_exposed, 4 * 2 * 1e6 / 100e9, 1e-12);
    /* DP ring all-reduce of 4e9 params * 2 B on 2 NPUs: 2(n-1) S/(nB) */
    assert_close(r.dp_exposed, 2.0 * 8e9 / (2 * 100e9), 1e-12);
    /* Adam over 4e9 params at 1 TB/s: fp16 grad read 2 + fp32 copy 4 +
     * norm 4 + Adam 28 + cast back 4 + 2 = 44 bytes each */
    assert_close(r.optimizer, 4e9 * 44.0 / 1e12, 1e-12);
    double sum = r.forward + r.backward + r.recompute + r.optimizer + r.bubble + r.tp_exposed +
                 r.pp_exposed + r.dp_exposed + r.offload_exposed;
    assert_close(r.step_time, sum, 1e-12);
    /* memory: 4e9 params: 8 GB weights, 8 GB grads, 48 GB optimizer;
     * activations: 2 microbatches in flight x 4 layers x 1 MB */
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], 8e9, 1e-12);
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], 8e9, 1e-12);
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER], 48e9, 1e-12);
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_ACTIVATIONS], 2 * 4 * 1e6, 1e-12);
    assert_true(r.feasible);
    /* model FLOPs: 3 x 8 TFLOP per sample x 8 samples */
    assert_close(r.model_flops, 3.0 * 8e12 * 8, 1e-12);
    assert_close(r.mfu, r.model_flops / (r.step_time * 4 * 100e12), 1e-12);
}

static void test_overlap_hides_dp(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);
    s.overlap_dp = true;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    /* 0.08 s of all-reduce behind 0.08 s of backward: nothing exposed */
    assert_close(r.dp_exposed, 0.0, 0.0);
    assert_close(r.dp_comm_time, 0.08, 1e-12);
}

static void test_zero_shards(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);
    const double w = 8e9, g = 8e9, o = 48e9;
    for (int z = 0; z <= 3; z++) {
        s.zero_stage = z;
        assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
        assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER], z >= 1 ? o / 2 : o, 1e-12);
        assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], z >= 2 ? g / 2 : g, 1e-12);
        assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], z >= 3 ? w / 2 : w, 1e-12);
    }
}

static void test_interleave_bubble(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);
    s.pp = 4;
    s.dp = 1;
    s.interleave = 2;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    /* bubble / ideal = (p-1)/(m v) = 3 / (8 * 2) */
    double ideal = r.forward + r.backward + r.recompute + r.tp_exposed;
    assert_close(r.bubble / ideal, 3.0 / 16.0, 1e-12);
    /* in flight on stage 1: p * (1 + (p-1)/(p v)) = 4 * (1 + 3/8) = 5.5 microbatches of 2 layers */
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_ACTIVATIONS], 5.5 * 2 * 1e6, 1e-12);
}

static void test_spill_to_expansion(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);
    sys.hbm.capacity = 40e9; /* 64 GB + activations needed */
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    assert_false(r.feasible);
    assert_int_equal(r.infeasible, COMET_NO_FIT_HBM);

    sys.expansion.present = true;
    sys.expansion.capacity = 512e9;
    sys.expansion.bandwidth = 50e9;
    sys.expansion.efficiency = 1.0;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    assert_true(r.feasible);
    /* Optimizer state spills first, just enough to fill HBM to 40 GB. */
    assert_close(r.mem_total[COMET_TIER_HBM], 40e9, 1e-12);
    double spilled = r.mem[COMET_TIER_EXPANSION][COMET_MEM_OPTIMIZER];
    assert_close(spilled, 64e9 + 8e6 - 40e9, 1e-9);
    assert_close(r.mem[COMET_TIER_EXPANSION][COMET_MEM_WEIGHTS], 0.0, 0.0);
    /* The optimizer step reads and writes spilled state at 50 GB/s:
     * spilled fraction of 4e9 * 44 bytes. */
    double frac = spilled / 48e9;
    assert_close(r.offload_exposed, 4e9 * 44.0 * frac / 50e9, 1e-9);
    assert_close(r.optimizer, 4e9 * 44.0 * (1 - frac) / 1e12, 1e-9);
}

static void test_offload_needs_tier(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);
    s.offload_optimizer = true;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.offload");
}

static void test_strategy_errors(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);
    s.pp = 3;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.pp");
    assert_string_equal(err.message, "3 does not divide the 8 layers");
    toy_strategy(&s);
    s.global_batch = 7;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.global_batch");
    toy_strategy(&s);
    s.tp = 0;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_EINPUT);
    assert_string_equal(err.message, "must be a positive integer, got 0");
    toy_strategy(&s);
    s.dp = 1000000;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.dp");
    /* a fixed 8-wide dimension with nothing outside it holds at most 8 */
    sys.dims[0].size = 8;
    toy_strategy(&s);
    s.dp = 8;
    s.global_batch = 16;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_EINPUT);
    assert_string_equal(err.message, "strategy needs 16 NPUs but system toy has only 8");
}

static void test_placement(void **state)
{
    (void)state;
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_error err;
    int64_t sizes[COMET_MAX_DIMS];
    toy_system(&sys);
    sys.n_dims = 2;
    sys.dims[1] = sys.dims[0];
    sys.dims[0].size = 4;
    toy_model(&m);
    comet_strategy_defaults(&s);
    s.tp = 2;
    s.pp = 2;
    s.dp = 4;
    s.global_batch = 4;
    /* order tp, dp, pp: tp 2 and dp 2 inside the 4-wide dim, then dp 2 and pp 2 outside */
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, sizes, &err), COMET_OK);
    assert_int_equal(sizes[0], 4);
    assert_int_equal(sizes[1], 4);
    assert_int_equal(s.place[COMET_GROUP_TP][0], 2);
    assert_int_equal(s.place[COMET_GROUP_DP][0], 2);
    assert_int_equal(s.place[COMET_GROUP_DP][1], 2);
    assert_int_equal(s.place[COMET_GROUP_PP][1], 2);
    /* an explicit placement that does not multiply out is refused */
    s.placement_given = true;
    s.place[COMET_GROUP_PP][1] = 4;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, sizes, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.placement.pp");
}

void suite_estimate(test_tally *t)
{
    const struct CMUnitTest estimate[] = {
        cmocka_unit_test(test_toy_closed_form),   cmocka_unit_test(test_overlap_hides_dp),
        cmocka_unit_test(test_zero_shards),       cmocka_unit_test(test_interleave_bubble),
        cmocka_unit_test(test_spill_to_expansion), cmocka_unit_test(test_offload_needs_tier),
        cmocka_unit_test(test_strategy_errors),   cmocka_unit_test(test_placement),
    };
    RUN_GROUP(t, estimate);
}
