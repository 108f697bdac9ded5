/* Closed-form checks of the estimator on a toy system where every number
 * can be worked out by hand (efficiencies 1, no GEMM curve, zero latency),
 * plus structural checks on the presets: the breakdown adds up, ZeRO
 * shards what it should, offload moves bytes to the expansion tier. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/knobs.h"
#include "tests.h"
#include "toy.h"
#include "../src/hardware/hardware.h"
#include "../src/workload/workload.h"

/* Everything one test needs, fresh for each test (cmocka setup). */
typedef struct toy {
    comet_system sys;
    comet_model m;
    comet_strategy s;
    comet_result r;
    comet_error err;
} toy;

static int toy_setup(void **state)
{
    toy *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    toy_system(&t->sys);
    toy_model(&t->m);
    toy_strategy(&t->s);
    *state = t;
    return 0;
}

static int toy_teardown(void **state)
{
    free(*state);
    return 0;
}

static void test_toy_closed_form(void **state)
{
    toy *t = *state;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    /* 4 microbatches per pipeline; each stage has 4 layers: 4e12 FLOP fwd. */
    assert_int_equal(t->r.microbatches, 4);
    assert_close(t->r.forward, 4 * 0.04, 1e-12);
    assert_close(t->r.backward, 4 * 0.08, 1e-12);
    assert_close(t->r.recompute, 0.0, 0.0);
    /* bubble (p-1)/v microbatch times: 1 x 0.12 t->s */
    assert_close(t->r.bubble, 0.12, 1e-12);
    /* p2p: 2 sends (fwd, bwd) per microbatch of 1 MB at 100 GB/t->s */
    assert_close(t->r.pp_exposed, 4 * 2 * 1e6 / 100e9, 1e-12);
    /* DP ring all-reduce of 4e9 params * 2 B on 2 NPUs: 2(n-1) S/(nB) */
    assert_close(t->r.dp_exposed, 2.0 * 8e9 / (2 * 100e9), 1e-12);
    /* Adam over 4e9 params at 1 TB/s: fp16 grad read 2 + fp32 copy 4 +
     * norm 4 + Adam 28 + cast back 4 + 2 = 44 bytes each */
    assert_close(t->r.optimizer, 4e9 * 44.0 / 1e12, 1e-12);
    double sum = t->r.forward + t->r.backward + t->r.recompute + t->r.optimizer + t->r.bubble + t->r.tp_exposed +
                 t->r.pp_exposed + t->r.dp_exposed + t->r.offload_exposed;
    assert_close(t->r.step_time, sum, 1e-12);
    /* memory: 4e9 params: 8 GB weights, 8 GB grads, 48 GB optimizer;
     * activations: 2 microbatches in flight x 4 layers x 1 MB */
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], 8e9, 1e-12);
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], 8e9, 1e-12);
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER], 48e9, 1e-12);
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_ACTIVATIONS], 2 * 4 * 1e6, 1e-12);
    assert_true(t->r.feasible);
    /* model FLOPs: 3 x 8 TFLOP per sample x 8 samples */
    assert_close(t->r.model_flops, 3.0 * 8e12 * 8, 1e-12);
    assert_close(t->r.mfu, t->r.model_flops / (t->r.step_time * 4 * 100e12), 1e-12);
}

static void test_overlap_hides_dp(void **state)
{
    toy *t = *state;
    t->s.overlap_dp = true;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    /* 0.08 t->s of all-reduce behind 0.08 t->s of backward: nothing exposed */
    assert_close(t->r.dp_exposed, 0.0, 0.0);
    assert_close(t->r.dp_comm_time, 0.08, 1e-12);
}

static void test_zero_shards(void **state)
{
    toy *t = *state;
    const double w = 8e9, g = 8e9, o = 48e9;
    t->s.framework = COMET_FRAMEWORK_IDEAL; /* fsdp's ZeRO 3: tests/test_framework.c */
    for (int z = 0; z <= 3; z++) {
        t->s.zero_stage = z;
        assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
        assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER], z >= 1 ? o / 2 : o, 1e-12);
        assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], z >= 2 ? g / 2 : g, 1e-12);
        assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], z >= 3 ? w / 2 : w, 1e-12);
    }
    /* Communication, no overlap, 4 microbatches, 2 replicas at 100 GB/s:
     * RS of 8 GB gradients = AG of 8 GB weights = 8e9 / (2 * 100e9) = 0.04 s.
     * ZeRO 0: all-reduce 0.08; 1: RS + AG; 2: RS per microbatch + AG;
     * 3: RS and two AG per microbatch. */
    const double expect[4] = {0.08, 0.08, 4 * 0.04 + 0.04, 4 * 0.04 + 8 * 0.04};
    for (int z = 0; z <= 3; z++) {
        t->s.zero_stage = z;
        assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
        assert_close(t->r.dp_exposed, expect[z], 1e-12);
        /* volumes per NPU: 8 GB of gradients (g), 8 GB of weights (w) per
         * stage; 0: g; 1: g + w; 2: 4 g + w; 3: 4 (g + 2 w) */
        const double volume[4] = {8e9, 16e9, 40e9, 96e9};
        assert_close(t->r.dp_bytes, volume[z], 1e-12);
    }
    /* pipeline sends: 4 microbatches, an activation forward and a gradient
     * back across the stage boundary, 1 MB each */
    assert_close(t->r.pp_bytes, 4 * 2 * 1e6, 1e-12);
    assert_close(t->r.tp_bytes, 0.0, 0.0);
}

static void test_interleave_bubble(void **state)
{
    toy *t = *state;
    t->s.pp = 4;
    t->s.dp = 1;
    t->s.interleave = 2;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    /* bubble / ideal = (p-1)/(t->m v) = 3 / (8 * 2) */
    double ideal = t->r.forward + t->r.backward + t->r.recompute + t->r.tp_exposed;
    assert_close(t->r.bubble / ideal, 3.0 / 16.0, 1e-12);
    /* in flight on stage 1: p * (1 + (p-1)/(p v)) = 4 * (1 + 3/8) = 5.5 microbatches of 2 layers */
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_ACTIVATIONS], 5.5 * 2 * 1e6, 1e-12);
}

/* A 512 GB expansion tier of 50 GB/s per NPU, no latency. */
static void toy_expansion(toy *t)
{
    t->sys.expansion.present = true;
    t->sys.expansion.capacity = 512e9;
    t->sys.expansion.bandwidth = 50e9;
    t->sys.expansion.efficiency = 1.0;
}

static void test_spill_to_expansion(void **state)
{
    toy *t = *state;
    t->sys.hbm.capacity = 40e9; /* 64 GB + activations needed */
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_false(t->r.feasible);
    assert_int_equal(t->r.infeasible, COMET_NO_FIT_HBM);

    toy_expansion(t);
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_true(t->r.feasible);
    /* Optimizer state spills first, just enough to fill HBM to 40 GB. */
    assert_close(t->r.mem_total[COMET_TIER_HBM], 40e9, 1e-12);
    double spilled = t->r.mem[COMET_TIER_EXPANSION][COMET_MEM_OPTIMIZER];
    assert_close(spilled, 64e9 + 8e6 - 40e9, 1e-9);
    assert_close(t->r.mem[COMET_TIER_EXPANSION][COMET_MEM_WEIGHTS], 0.0, 0.0);
    /* The optimizer step reads and writes spilled state at 50 GB/s:
     * spilled fraction of 4e9 * 44 bytes. */
    double frac = spilled / 48e9;
    assert_close(t->r.offload_exposed, 4e9 * 44.0 * frac / 50e9, 1e-9);
    assert_close(t->r.optimizer, 4e9 * 44.0 * (1 - frac) / 1e12, 1e-9);
}

/* Offloaded gradients (FRED's weight streaming): the stage's 8 GB of
 * gradients move to the tier; every microbatch's backward (0.08 s)
 * writes them (g = 8e9 / 50e9 = 0.16 s), from the second microbatch on
 * after reading them back, and the optimizer step reads them once:
 * exposed = g + max(0, g - 0.08) + 3 max(0, 2g - 0.08) = 0.96 s,
 * moved = g + (2m - 1) g = 1.28 s (docs/model.md, Section 11). */
static void test_offload_gradients(void **state)
{
    toy *t = *state;
    toy_expansion(t);
    t->s.offload_gradients = true;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_true(t->r.feasible);
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], 0.0, 0.0);
    assert_close(t->r.mem[COMET_TIER_EXPANSION][COMET_MEM_GRADIENTS], 8e9, 1e-12);
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], 8e9, 1e-12);
    const double g = 0.16, bwd = 0.08;
    assert_close(t->r.offload_exposed, g + (g - bwd) + 3.0 * (2.0 * g - bwd), 1e-12);
    assert_close(t->r.offload_time, g + 7.0 * g, 1e-12);
    /* with a latency, one transfer per layer (4 on the stage) each way,
     * and one for the optimizer's read */
    t->sys.expansion.latency = 1e-3;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    double gl = g + 4e-3;
    assert_close(t->r.offload_exposed, g + 1e-3 + (gl - bwd) + 3.0 * (2.0 * gl - bwd), 1e-12);
    /* ten times the bandwidth: the streams hide behind backward, only
     * the optimizer's read shows */
    t->sys.expansion.latency = 0.0;
    t->sys.expansion.bandwidth = 500e9;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_close(t->r.offload_exposed, 0.016, 1e-12);
    assert_close(t->r.offload_time, 0.016 + 7.0 * 0.016, 1e-12);
}

/* Spill order: optimizer state, weights, gradients, activations. With
 * 4 GB of HBM the optimizer state and weights go whole, the gradients as
 * much as needed (8 GB + 8 MB of activations - 4 GB), the activations
 * stay. */
static void test_gradients_spill_before_activations(void **state)
{
    toy *t = *state;
    t->sys.hbm.capacity = 4e9;
    toy_expansion(t);
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_true(t->r.feasible);
    assert_close(t->r.mem[COMET_TIER_EXPANSION][COMET_MEM_OPTIMIZER], 48e9, 1e-12);
    assert_close(t->r.mem[COMET_TIER_EXPANSION][COMET_MEM_WEIGHTS], 8e9, 1e-12);
    assert_close(t->r.mem[COMET_TIER_EXPANSION][COMET_MEM_GRADIENTS], 8e9 + 8e6 - 4e9, 1e-12);
    assert_close(t->r.mem[COMET_TIER_HBM][COMET_MEM_ACTIVATIONS], 8e6, 1e-12);
    assert_close(t->r.mem_total[COMET_TIER_HBM], 4e9, 1e-12);
}

/* Transformer-1T on FRED's 20-NPU wafer, data parallel with ZeRO 3 and
 * full recomputation: 108.5 GiB of gradient shards per NPU do not fit in
 * 80 GiB of HBM beside anything; streamed to the off-wafer memory with
 * the rest of the state, the step fits and has a finite time. */
static void test_transformer_1t_fits_fred_wafer(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s;
    comet_result r;
    comet_error err;
    assert_int_equal(comet_preset_model("transformer-1t", &m, &err), COMET_OK);
    assert_int_equal(comet_preset_system("fred-wafer", &sys, &err), COMET_OK);
    comet_strategy_defaults(&s);
    s.dp = 20;
    s.global_batch = 320;
    s.microbatch = 1;
    s.zero_stage = 3;
    s.recompute = COMET_RECOMPUTE_FULL;
    s.offload_optimizer = s.offload_weights = s.offload_activations = true;
    s.offload_gradients = true;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    assert_true(r.feasible);
    assert_true(isfinite(r.step_time) && r.step_time > 0.0);
    assert_true(r.offload_exposed > 0.0);
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], 0.0, 0.0);
    double grads = r.mem[COMET_TIER_EXPANSION][COMET_MEM_GRADIENTS] / COMET_GIB;
    assert_true(grads > 108.0 && grads < 109.0);
    /* without the flag the gradients spill there (after the weights) */
    s.offload_gradients = false;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    assert_true(r.feasible);
    assert_true(r.mem[COMET_TIER_EXPANSION][COMET_MEM_GRADIENTS] > 0.0);
}

/* A per-node expansion device is shared by the node's NPUs: by default the
 * innermost network dimension (4 here), so each NPU gets a quarter. */
static void test_per_node_expansion_is_shared(void **state)
{
    toy *t = *state;
    t->sys.n_dims = 2;
    t->sys.dims[1] = t->sys.dims[0];
    t->sys.dims[0].size = 4;
    t->sys.expansion.present = true;
    t->sys.expansion.attach = COMET_ATTACH_PER_NODE;
    t->sys.expansion.capacity = 400e9;
    t->sys.expansion.bandwidth = 40e9;
    t->s.offload_optimizer = true;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_close(t->r.mem_capacity[COMET_TIER_EXPANSION], 100e9, 1e-12);
    /* the optimizer step streams 4e9 params * 44 B at 40/4 GB/s */
    assert_close(t->r.offload_exposed, 4e9 * 44.0 / 10e9, 1e-12);
    /* the tier's latency is paid once per transfer: one optimizer pass */
    t->sys.expansion.latency = 1e-3;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_close(t->r.offload_exposed, 4e9 * 44.0 / 10e9 + 1e-3, 1e-12);
    t->sys.expansion.shared_by = 2;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
    assert_close(t->r.mem_capacity[COMET_TIER_EXPANSION], 200e9, 1e-12);
}

static void test_dtype_needs_a_peak(void **state)
{
    toy *t = *state;
    t->m.dtype = COMET_DTYPE_FP8;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "model.dtype");
    assert_string_equal(t->err.message, "system toy gives no matrix peak for fp8");
}

static void test_offload_needs_tier(void **state)
{
    toy *t = *state;
    t->s.offload_optimizer = true;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "strategy.offload");
    t->s.offload_optimizer = false;
    t->s.offload_gradients = true;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "strategy.offload");
}

static void test_strategy_errors(void **state)
{
    toy *t = *state;
    t->s.pp = 16;
    t->s.dp = 1;
    t->s.global_batch = 16;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "strategy.pp");
    assert_string_equal(t->err.message, "16 stages for only 8 layers");
    toy_strategy(&t->s);
    t->s.global_batch = 7;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "strategy.global_batch");
    toy_strategy(&t->s);
    t->s.tp = 0;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.message, "must be a positive integer, got 0");
    toy_strategy(&t->s);
    t->s.dp = 1000000;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "strategy.dp");
    /* a fixed 8-wide dimension with nothing outside it holds at most 8 */
    t->sys.dims[0].size = 8;
    toy_strategy(&t->s);
    t->s.dp = 8;
    t->s.global_batch = 16;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.message, "tp*pp*dp = 16 NPUs, but system toy has 8 (all its "
                                        "network dimensions have fixed sizes)");
    /* ... and fewer than it has is just as wrong */
    t->s.dp = 2;
    t->s.global_batch = 4;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "strategy");
    /* an open outer dimension grows to fit: 4 NPUs use part of an 8-wide inner one */
    t->sys.n_dims = 2;
    t->sys.dims[1] = t->sys.dims[0];
    t->sys.dims[1].size = 0;
    assert_int_equal(comet_estimate(&t->m, &t->sys, &t->s, &t->r, &t->err), COMET_OK);
}

static void test_placement(void **state)
{
    toy *t = *state;
    int64_t sizes[COMET_MAX_DIMS];
    t->sys.n_dims = 2;
    t->sys.dims[1] = t->sys.dims[0];
    t->sys.dims[0].size = 4;
    comet_strategy_defaults(&t->s);
    t->s.tp = 2;
    t->s.pp = 2;
    t->s.dp = 4;
    t->s.global_batch = 4;
    /* order tp, dp, pp: tp 2 and dp 2 inside the 4-wide dim, then dp 2 and pp 2 outside */
    assert_int_equal(comet_strategy_resolve(&t->m, &t->sys, &t->s, sizes, &t->err), COMET_OK);
    assert_int_equal(sizes[0], 4);
    assert_int_equal(sizes[1], 4);
    assert_int_equal(t->s.place[COMET_GROUP_TP][0], 2);
    assert_int_equal(t->s.place[COMET_GROUP_DP][0], 2);
    assert_int_equal(t->s.place[COMET_GROUP_DP][1], 2);
    assert_int_equal(t->s.place[COMET_GROUP_PP][1], 2);
    /* an explicit placement that does not multiply out is refused */
    t->s.placement_given = true;
    t->s.place[COMET_GROUP_PP][1] = 4;
    assert_int_equal(comet_strategy_resolve(&t->m, &t->sys, &t->s, sizes, &t->err), COMET_EINPUT);
    assert_string_equal(t->err.key, "strategy.placement.pp");
}

/* Resolve t->s and check which rule the refusal names (code, knob, key),
 * then put the toy strategy back. */
static void expect_refusal(toy *t, comet_strategy_fault fault, comet_knob_id knob,
                           const char *key, const char *message)
{
    comet_strategy_refusal why = {COMET_FAULT_NONE, COMET_KNOB_COUNT};
    int64_t sizes[COMET_MAX_DIMS];
    comet_status st = comet_strategy_resolve_why(&t->m, &t->sys, &t->s, sizes, &why, &t->err);
    assert_int_equal(st, fault == COMET_FAULT_NONE ? COMET_OK : COMET_EINPUT);
    assert_int_equal(why.fault, fault);
    assert_int_equal(why.knob, knob);
    if (key)
        assert_string_equal(t->err.key, key);
    if (message)
        assert_string_equal(t->err.message, message);
    toy_strategy(&t->s);
}

/* A strategy the toy refuses: up to two knobs changed from the toy
 * strategy, and the refusal expected. */
typedef struct refusal_case {
    int n_set;
    struct { comet_knob_id knob; int64_t value; } set[2];
    comet_strategy_fault fault;
    comet_knob_id knob;
    const char *key, *message;
} refusal_case;

static const refusal_case refusal_cases[] = {
    {1, {{COMET_KNOB_TP, 0}}, COMET_FAULT_LIMIT, COMET_KNOB_TP, "strategy.tp",
     "must be a positive integer, got 0"},
    {1, {{COMET_KNOB_ZERO, 4}}, COMET_FAULT_LIMIT, COMET_KNOB_ZERO, "strategy.zero",
     "must be 0, 1, 2 or 3, got 4"},
    {1, {{COMET_KNOB_INTERLEAVE, COMET_MAX_INTERLEAVE + 1}}, COMET_FAULT_LIMIT,
     COMET_KNOB_INTERLEAVE, "strategy.interleave", "4097 is past comet's limit of 4096"},
    {1, {{COMET_KNOB_MICROBATCH, COMET_MAX_BATCH + 1}}, COMET_FAULT_LIMIT, COMET_KNOB_MICROBATCH,
     "strategy.microbatch", "2147483649 is past comet's limit of 2147483648"},
    {2, {{COMET_KNOB_TP, 1024}, {COMET_KNOB_PP, 1024}}, COMET_FAULT_NPUS_LIMIT, COMET_KNOB_DP,
     "strategy.dp", "tp*pp*dp = 2097152 NPUs is past comet's limit of 262144"},
    {1, {{COMET_KNOB_PP, 16}}, COMET_FAULT_STAGES, COMET_KNOB_PP, "strategy.pp",
     "16 stages for only 8 layers"},
    {1, {{COMET_KNOB_INTERLEAVE, 8}}, COMET_FAULT_CHUNKS, COMET_KNOB_INTERLEAVE,
     "strategy.interleave", "pp*interleave = 16 model chunks for only 8 layers"},
    {2, {{COMET_KNOB_PP, 1}, {COMET_KNOB_INTERLEAVE, 2}}, COMET_FAULT_CHUNKS,
     COMET_KNOB_INTERLEAVE, "strategy.interleave", "2 needs pipeline parallelism (pp > 1)"},
    {1, {{COMET_KNOB_GLOBAL_BATCH, 7}}, COMET_FAULT_BATCH_SPLIT, COMET_KNOB_GLOBAL_BATCH,
     "strategy.global_batch", "7 is not a multiple of microbatch*dp (2)"},
    {2, {{COMET_KNOB_INTERLEAVE, 2}, {COMET_KNOB_GLOBAL_BATCH, 2}}, COMET_FAULT_BATCH_SPLIT,
     COMET_KNOB_GLOBAL_BATCH, "strategy.global_batch",
     "interleaved schedule needs microbatches (1) to be a multiple of pp (2)"},
    {1, {{COMET_KNOB_OFFLOAD_WEIGHTS, 1}}, COMET_FAULT_NO_EXPANSION, COMET_KNOB_COUNT,
     "strategy.offload", "system toy has no expansion memory tier to offload to"},
    {1, {{COMET_KNOB_FP8, 1}}, COMET_FAULT_NO_FP8, COMET_KNOB_FP8, "strategy.fp8",
     "system toy gives no fp8 matrix peak (compute.matrix.fp8)"},
    {1, {{COMET_KNOB_CP, 2}}, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, "strategy.cp",
     "context parallelism applies to Transformer models only, not to the layer list toy"},
    {1, {{COMET_KNOB_EP, 2}}, COMET_FAULT_EP_SPLIT, COMET_KNOB_EP, "strategy.ep",
     "expert parallelism needs a mixture-of-experts model; toy has no experts "
     "(model.moe.experts)"},
    {2, {{COMET_KNOB_CP, 1024}, {COMET_KNOB_PP, 1024}}, COMET_FAULT_NPUS_LIMIT, COMET_KNOB_DP,
     "strategy.dp", "tp*cp*pp*dp = 2097152 NPUs is past comet's limit of 262144"},
};

/* Each rule comet_strategy_resolve applies has its code, so the search
 * sorts refusals without reading error keys. */
static void test_refusal_codes(void **state)
{
    toy *t = *state;
    expect_refusal(t, COMET_FAULT_NONE, COMET_KNOB_COUNT, NULL, NULL);
    for (size_t i = 0; i < sizeof refusal_cases / sizeof refusal_cases[0]; i++) {
        const refusal_case *c = &refusal_cases[i];
        for (int j = 0; j < c->n_set; j++)
            comet_knob_set_value(comet_knob_get(c->set[j].knob), &t->s, c->set[j].value);
        expect_refusal(t, c->fault, c->knob, c->key, c->message);
    }
    t->s.placement_given = true;
    t->s.place[COMET_GROUP_PP][0] = 4;
    expect_refusal(t, COMET_FAULT_PLACEMENT, COMET_KNOB_PLACEMENT, "strategy.placement.tp",
                   "span 0 on dimension 0 is not possible");
    t->sys.dims[0].size = 8;
    expect_refusal(t, COMET_FAULT_NETWORK, COMET_KNOB_COUNT, "strategy", NULL);
    t->sys.dims[0].size = 0;
    t->m.dtype = COMET_DTYPE_FP8;
    expect_refusal(t, COMET_FAULT_DTYPE, COMET_KNOB_COUNT, "model.dtype", NULL);
    t->m.dtype = COMET_DTYPE_FP16;
    /* fp8 on a system with an fp8 peak, but for a layer list */
    t->sys.compute.matrix_flops[COMET_DTYPE_FP8] = 200e12;
    t->s.fp8 = true;
    expect_refusal(t, COMET_FAULT_NO_FP8, COMET_KNOB_FP8, "strategy.fp8",
                   "fp8 applies to Transformer models only, not to the layer list toy");
    t->sys.compute.matrix_flops[COMET_DTYPE_FP8] = 0.0;
    /* a transformer whose heads tp does not divide */
    t->m.kind = COMET_MODEL_TRANSFORMER;
    t->m.layers = 8;
    t->m.heads = t->m.kv_heads = 3;
    t->m.ffn = 12;
    t->s.tp = 2;
    expect_refusal(t, COMET_FAULT_TP_SPLIT, COMET_KNOB_TP, "strategy.tp",
                   "2 does not divide heads (3)");
    /* context parallelism: the ring needs 2 cp chunks of the sequence,
     * Ulysses cp dividing each tp rank's heads (expect_refusal puts the
     * toy strategy back after each case) */
    t->m.hidden = 12;
    t->m.seq = 12;
    t->m.vocab = 10;
    t->s.cp = 4;
    expect_refusal(t, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, "strategy.cp",
                   "ring context parallelism splits the sequence into 2*cp = 8 chunks, which "
                   "does not divide seq (12)");
    t->s.cp = 4;
    t->s.cp_comm = COMET_CP_ULYSSES;
    expect_refusal(t, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, "strategy.cp",
                   "Ulysses splits the heads: cp 4 does not divide the 3 heads each tp rank holds");
    t->s.cp = 5;
    t->s.cp_comm = COMET_CP_ULYSSES;
    expect_refusal(t, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, "strategy.cp",
                   "5 does not divide seq (12)");
    t->s.cp = 3;
    t->s.cp_comm = COMET_CP_ULYSSES;
    expect_refusal(t, COMET_FAULT_NONE, COMET_KNOB_COUNT, NULL, NULL);
    /* expert parallelism: ep divides the experts and dp */
    t->m.moe = (comet_moe){.experts = 6, .top_k = 2, .ffn = 12, .every = 1, .imbalance = 1.0};
    t->s.ep = 4;
    t->s.dp = 4;
    expect_refusal(t, COMET_FAULT_EP_SPLIT, COMET_KNOB_EP, "strategy.ep",
                   "4 does not divide the 6 experts (model.moe.experts)");
    t->s.ep = 3;
    expect_refusal(t, COMET_FAULT_EP_SPLIT, COMET_KNOB_EP, "strategy.ep",
                   "3 does not divide dp (2): expert-parallel ranks are drawn from the "
                   "data-parallel group (or set expert_tp below tp to fold them over the "
                   "tensor-parallel ranks too)");
    t->s.ep = 2;
    expect_refusal(t, COMET_FAULT_NONE, COMET_KNOB_COUNT, NULL, NULL);
}

/* Context and expert parallelism on the network: cp is a group of its own
 * in the order, ep a part of dp laid where ep stands in the order, and a
 * given placement without ep spans gives ep dp's innermost. */
static void test_cp_ep_placement(void **state)
{
    (void)state;
    comet_system sys;
    toy_system(&sys);
    sys.n_dims = 3;
    for (int d = 0; d < 3; d++)
        sys.dims[d] = sys.dims[0];
    sys.dims[0].size = 4;
    sys.dims[1].size = 4;
    sys.dims[2].size = 0;
    comet_model m;
    toy_model(&m);
    m.kind = COMET_MODEL_TRANSFORMER;
    m.layers = 8;
    m.hidden = 64;
    m.heads = m.kv_heads = 8;
    m.ffn = 256;
    m.seq = 64;
    m.vocab = 100;
    m.moe = (comet_moe){.experts = 8, .top_k = 2, .ffn = 64, .every = 1, .imbalance = 1.0};
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = 2;
    s.cp = 2;
    s.dp = 8;
    s.ep = 4;
    s.global_batch = 8;
    comet_error err = {0};
    int64_t sizes[COMET_MAX_DIMS];
    /* tp, cp, ep, dp, pp: tp 2 and cp 2 fill the first dimension, ep 4 the
     * second, the other 2 dp ranks the third */
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, sizes, &err), COMET_OK);
    assert_int_equal(comet_strategy_npus(&s), 32);
    assert_int_equal(sizes[2], 2);
    const int64_t cp_want[3] = {2, 1, 1}, ep_want[3] = {1, 4, 1}, dp_want[3] = {1, 4, 2};
    int64_t edp[COMET_MAX_DIMS];
    comet_strategy_expert_dp_spans(&s, edp);
    for (int d = 0; d < 3; d++) {
        assert_int_equal(s.place[COMET_GROUP_CP][d], cp_want[d]);
        assert_int_equal(s.place[COMET_GROUP_EP][d], ep_want[d]);
        assert_int_equal(s.place[COMET_GROUP_DP][d], dp_want[d]);
        assert_int_equal(edp[d], dp_want[d] / ep_want[d]);
    }
    /* ep after dp in the order: the 2 other dp ranks go inside, ep across */
    const comet_group outer_ep[] = {COMET_GROUP_TP, COMET_GROUP_DP, COMET_GROUP_EP, COMET_GROUP_PP};
    comet_strategy_order_complete(outer_ep, 4, s.order);
    assert_int_equal(s.order[1], COMET_GROUP_CP);
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, sizes, &err), COMET_OK);
    assert_int_equal(s.place[COMET_GROUP_EP][1], 2);
    assert_int_equal(s.place[COMET_GROUP_EP][2], 2);
    assert_int_equal(s.place[COMET_GROUP_DP][1], 4);
    /* a given placement without ep spans: ep takes dp's innermost */
    memset(s.place, 0, sizeof s.place);
    for (int g = 0; g < COMET_GROUP_COUNT; g++)
        for (int d = 0; d < COMET_MAX_DIMS; d++)
            s.place[g][d] = 1;
    s.placement_given = true;
    s.place[COMET_GROUP_TP][0] = 2;
    s.place[COMET_GROUP_CP][1] = 2;
    s.place[COMET_GROUP_DP][0] = 2;
    s.place[COMET_GROUP_DP][1] = 2;
    s.place[COMET_GROUP_DP][2] = 2;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, sizes, &err), COMET_OK);
    assert_int_equal(s.place[COMET_GROUP_EP][0], 2);
    assert_int_equal(s.place[COMET_GROUP_EP][1], 2);
    assert_int_equal(s.place[COMET_GROUP_EP][2], 1);
    /* ep spans that do not divide dp's */
    s.place[COMET_GROUP_EP][0] = 1;
    s.place[COMET_GROUP_EP][1] = 1;
    s.place[COMET_GROUP_EP][2] = 4;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, sizes, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.placement.ep");
    assert_string_equal(err.message, "span 4 on dimension 2 is not possible");
}

/* Which layers are mixture-of-experts layers: all, every other one, all
 * but the first k, counted over any range of layers. */
static void test_moe_layer_pattern(void **state)
{
    (void)state;
    comet_model m;
    toy_model(&m);
    m.kind = COMET_MODEL_TRANSFORMER;
    m.layers = 61;
    m.moe = (comet_moe){.experts = 256, .top_k = 8, .every = 1, .first_dense = 3};
    assert_false(comet_model_is_moe_layer(&m, 2));
    assert_true(comet_model_is_moe_layer(&m, 3));
    assert_int_equal(comet_model_moe_layers(&m, 0, 61), 58);   /* DeepSeek-V3 */
    assert_int_equal(comet_model_moe_layers(&m, 0, 4), 1);
    assert_int_equal(comet_model_moe_layers(&m, 4, 4), 4);
    m.layers = 48;
    m.moe.first_dense = 0;
    m.moe.every = 2;                                           /* layers 1, 3, 5, ... */
    assert_false(comet_model_is_moe_layer(&m, 0));
    assert_true(comet_model_is_moe_layer(&m, 1));
    assert_int_equal(comet_model_moe_layers(&m, 0, 48), 24);
    assert_int_equal(comet_model_moe_layers(&m, 1, 3), 2);     /* layers 1 and 3 */
    assert_int_equal(comet_model_moe_layers(&m, 2, 3), 1);     /* layer 3 */
    m.moe.experts = 0;
    assert_int_equal(comet_model_moe_layers(&m, 0, 48), 0);
}

/* ---- fp8 (docs/model.md, Section 6.1) ------------------------------------ */

/* A GEMM in fp8 runs at the fp8 matrix peak through the same efficiency
 * curve times the fp8 share (the preset's 0.901, measured): the bf16 time
 * times bf16 peak / (fp8 peak x share), on the curve and past its end. */
static void test_fp8_gemm_at_fp8_peak(void **state)
{
    (void)state;
    comet_system sys;
    comet_error err;
    assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
    /* the size curve alone: no launch overhead or reduction-length term */
    sys.compute.kernel_launch = 0.0;
    sys.compute.gemm_k_overhead = 0.0;
    hw_rates r;
    hw_rates_init(&r, &sys, COMET_DTYPE_BF16);
    /* the preset's dense bf16 and fp8 peaks, and the fp8 share (measured) */
    double share = sys.compute.fp8_gemm_efficiency;
    assert_true(share > 0.85 && share < 0.95);
    double ratio = 989e12 / (1979e12 * share);
    const double sizes[] = {5e9, 2e12, 2e13};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double f = sizes[i];
        double bf16 = hw_gemm_time(&r, f, 0.0, false, 0.0), fp8 = hw_gemm_time(&r, f, 0.0, true, 0.0);
        assert_close(fp8, bf16 * ratio, 1e-9);
        assert_close(fp8, f / (1979e12 * share * comet_gemm_efficiency(&sys.compute, f)), 1e-9);
    }
}

/* llama2-70b, tp 8 with SP, pp 4, microbatch 1 on h100-80g-dgx. */
static void fp8_case(comet_model *m, comet_system *sys, comet_strategy *s)
{
    comet_error err;
    assert_int_equal(comet_preset_model("llama2-70b", m, &err), COMET_OK);
    assert_int_equal(comet_preset_system("h100-80g-dgx", sys, &err), COMET_OK);
    comet_strategy_defaults(s);
    s->tp = 8;
    s->pp = 4;
    s->dp = 2;
    s->sp = true;
    s->microbatch = 1;
    s->global_batch = 16;
}

/* The workload with fp8: a cast before each of the four linear GEMMs of a
 * block (2 FLOPs and e + 1 bytes per input element, memory bound), those
 * GEMMs flagged fp8 reading 1-byte inputs, nothing else in fp8; the FP8
 * weight copies and scaling state; GEMM inputs stashed in 1 byte. */
static void test_fp8_workload(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s;
    fp8_case(&m, &sys, &s);
    static work_stage off, on;
    work_build(&m, &s, &off);
    s.fp8 = true;
    work_build(&m, &s, &on);
    const work_layer *a = &off.layers[0], *b = &on.layers[0];
    assert_int_equal(b->n_ops, a->n_ops + 4);

    double e = 2.0, t = 8.0, T = (double)m.seq, h = (double)m.hidden, f = (double)m.ffn;
    double kv = h / (double)m.heads * (double)m.kv_heads / t; /* K (and V) width per NPU */
    const double mkn[4][3] = {{T, h, h / t + 2.0 * kv},       /* QKV */
                              {T, h / t, h},                  /* projection */
                              {T, h, 2.0 * f / t},            /* MLP in and gate */
                              {T, f / t, h}};                 /* MLP out */
    hw_rates r;
    hw_rates_init(&r, &sys, COMET_DTYPE_BF16);
    int n = 0, other_gemms = 0;
    double weights = 0.0;
    for (int i = 0; i < b->n_ops; i++) {
        const work_op *op = &b->ops[i];
        if (op->kind != WORK_GEMM)
            continue;
        if (!op->fp8) {
            other_gemms++;
            assert_true(op->attention_core);
            continue;
        }
        assert_true(n < 4);
        double M = mkn[n][0], K = mkn[n][1], N = mkn[n][2];
        const work_op *cast = &b->ops[i - 1];
        assert_int_equal(cast->kind, WORK_VECTOR);
        assert_int_equal(cast->mem, COMET_MEMK_CAST);
        assert_close(cast->flops, 2.0 * M * K, 1e-9);
        assert_close(cast->bytes, (e + 1.0) * M * K, 1e-9);
        /* memory bound on the roofline: bytes over the HBM rate of a cast
         * (the preset's measured share of 3.35 TB/s), plus one launch */
        double cast_share = sys.compute.mem_efficiency[COMET_MEMK_CAST];
        assert_true(cast_share > 0.5 && cast_share < 0.9);
        assert_close(hw_vector_time(&r, COMET_MEMK_CAST, cast->flops, cast->bytes),
                     (e + 1.0) * M * K / (3.35e12 * cast_share) + sys.compute.kernel_launch, 1e-9);
        assert_close(op->flops, 2.0 * M * N * K, 1e-9);
        assert_close(op->bytes, M * K + K * N + e * M * N, 1e-9);
        weights += K * N;
        n++;
    }
    assert_int_equal(n, 4);
    assert_int_equal(other_gemms, 2);
    for (int l = 1; l < on.n_layers; l++) /* the LM head and the embedding stay bf16 */
        for (int i = 0; i < on.layers[l].n_ops; i++)
            assert_false(on.layers[l].ops[i].fp8);

    /* FP8 weight copies (1 byte per linear weight) and per GEMM five
     * tensors' amax history of 1024 fp32 values, scale and inverse scale */
    assert_close(off.fp8_bytes, 0.0, 1e-9);
    assert_close(on.fp8_bytes, b->count * (weights + 4.0 * 5.0 * 1026.0 * 4.0), 1e-9);
    /* the QKV and MLP inputs (T/t tokens under SP), the projection and
     * MLP-out inputs stashed in 1 byte instead of e */
    assert_close(a->act_bytes - b->act_bytes,
                        (e - 1.0) * (2.0 * T / t * h + T * h / t + T * f / t), 1e-9);
    assert_close(a->act_bytes_full, b->act_bytes_full, 1e-9);
}

/* The estimate counts the FP8 copies with the weights and runs faster. */
static void test_fp8_estimate(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s;
    comet_error err;
    fp8_case(&m, &sys, &s);
    comet_result off, on;
    assert_int_equal(comet_estimate(&m, &sys, &s, &off, &err), COMET_OK);
    s.fp8 = true;
    assert_int_equal(comet_estimate(&m, &sys, &s, &on, &err), COMET_OK);
    static work_stage w;
    work_build(&m, &s, &w);
    assert_true(w.fp8_bytes > 1e9);
    assert_close(on.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS],
                        off.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS] + w.fp8_bytes, 1e-9);
    assert_close(on.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS],
                        off.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], 1e-9);
    assert_close(on.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER],
                        off.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER], 1e-9);
    assert_true(on.step_time < off.step_time);
    /* model FLOPs do not change; MFU stays against the bf16 peak */
    assert_close(on.mfu * on.step_time, off.mfu * off.step_time, 1e-9);
}

/* A system from YAML (the network keys under test), on the heap. */
static comet_job *read_system(const char *yaml)
{
    comet_job *job = malloc(sizeof *job);
    comet_job_init(job);
    comet_error err;
    if (comet_config_read_text(yaml, strlen(yaml), "net.yaml", job, &err))
        fail_msg("%s: %s", err.key, err.message);
    return job;
}

#define NODE "    - {name: node, size: 8, bandwidth: 450 GB/s}\n"

/* The switches and cables of a Clos, worked by hand (docs/study.md,
 * "Costs"); the fabric's port split: down = floor(radix o / (1 + o)). */
static void test_clos_hardware(void **state)
{
    (void)state;
    static const struct {
        const char *network;
        int d;
        int64_t npus, leaves, aggregation, spines, pods, links;
    } cases[] = {
        /* 512 NPUs, 2 tiers of 64 ports at 1:1 (32 down / 32 up): 16
         * leaves, 16 x 32 uplinks on ceil(512 / 64) = 8 spines; 512 + 512
         * cables */
        {NODE "    - {name: ib, size: auto, topology: fat_tree, radix: 64, bandwidth: 50 GB/s}\n",
         1, 512, 16, 0, 8, 1, 1024},
        /* at 3:1 (48 down / 16 up): ceil(512 / 48) = 11 leaves, ceil(176 /
         * 64) = 3 spines; 512 + 176 cables */
        {NODE "    - {name: ib, size: auto, topology: fat_tree, radix: 64, oversubscription: 3,\n"
              "       bandwidth: 50 GB/s}\n",
         1, 512, 11, 0, 3, 1, 688},
        /* 4,096 NPUs on 3 tiers of 64 ports at 1:1: 128 leaves in 4 blocks
         * of 32 aggregation switches, 128 x 32 agg uplinks on 64 cores;
         * 3 x 4,096 cables */
        {NODE "    - {name: ib, size: auto, topology: fat_tree, tiers: 3, radix: 64,\n"
              "       bandwidth: 50 GB/s}\n",
         1, 4096, 128, 128, 64, 1, 12288},
        /* ... at 8:1 (56 down / 8 up): ceil(4096 / 56) = 74 leaves in 3
         * blocks of 8 aggregation switches, 24 x 32 agg uplinks on 12 cores;
         * 4,096 + 74 x 8 + 24 x 32 cables */
        {NODE "    - {name: ib, size: auto, topology: fat_tree, tiers: 3, radix: 64,\n"
              "       oversubscription: 8, bandwidth: 50 GB/s}\n",
         1, 4096, 74, 24, 12, 1, 5456},
        /* rails: 8 rails of ceil(64 / 8) = 8 leaves of 16 ports, 3 tiers: 8
         * blocks of 8 aggregation switches, 64 x 8 agg uplinks on 32 cores */
        {NODE "    - {name: rails, size: 64, topology: rail, tiers: 3, radix: 16,\n"
              "       bandwidth: 50 GB/s}\n",
         1, 512, 64, 64, 32, 1, 512 + 64 * 8 + 64 * 8},
        /* a tree per pod: 16 NPUs on 4 leaves of 8 ports and ceil(16 / 8) =
         * 2 spines, 4 pods of them across the outer dimension */
        {"    - {name: ib, size: 16, topology: fat_tree, radix: 8, bandwidth: 50 GB/s}\n"
         "    - {name: dc, size: 4, bandwidth: 10 GB/s}\n",
         0, 64, 4, 0, 2, 4, 4 * (16 + 16)},
        /* a pod that fits one leaf builds no tier above it */
        {"    - {name: ib, size: 4, topology: fat_tree, radix: 8, bandwidth: 50 GB/s}\n", 0, 4,
         1, 0, 0, 1, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml, "system:\n  preset: h100-80g-dgx\n  network:\n%s",
                 cases[i].network);
        comet_job *job = read_system(yaml);
        comet_system *sys = &job->system;
        int d = cases[i].d;
        comet_net_hardware hw;
        comet_net_hardware_of(sys, d, cases[i].npus, &hw);
        assert_int_equal(hw.leaves, cases[i].leaves);
        assert_int_equal(hw.aggregation, cases[i].aggregation);
        assert_int_equal(hw.spines, cases[i].spines);
        assert_int_equal(hw.pods, cases[i].pods);
        assert_int_equal(hw.switches,
                         cases[i].pods * (cases[i].leaves + cases[i].aggregation + cases[i].spines));
        assert_int_equal(hw.switch_ports, hw.switches * sys->dims[d].shape.radix);
        assert_int_equal(hw.links, cases[i].links);
        /* priced at $500 a port and $100 a cable, on top of what the
         * system costs without them */
        double without = comet_system_cost(sys, cases[i].npus);
        assert_close(hw.cost, 0.0, 0.0);
        sys->dims[d].cost_per_switch_port = 500.0;
        sys->dims[d].cost_per_link = 100.0;
        comet_net_hardware_of(sys, d, cases[i].npus, &hw);
        assert_close(hw.cost, 500.0 * (double)hw.switch_ports + 100.0 * (double)hw.links, 0.0);
        assert_close(comet_system_cost(sys, cases[i].npus) - without, hw.cost, 1e-9);
        free(job);
    }
    /* a switch dimension is no tree: one switch of a port per NPU for each
     * of its 512 / 64 = 8 instances, a cable per NPU (tests/test_sweep_axes.c
     * counts the other topologies) */
    comet_job *job = read_system("system:\n  preset: h100-80g-dgx\n  network:\n" NODE
                                 "    - {name: ib, size: auto, bandwidth: 50 GB/s}\n");
    comet_net_hardware hw;
    comet_net_hardware_of(&job->system, 1, 512, &hw);
    assert_int_equal(hw.pods, 8);
    assert_int_equal(hw.leaves + hw.aggregation + hw.spines, 0);
    assert_int_equal(hw.switches, 8);
    assert_int_equal(hw.switch_ports, 512);
    assert_int_equal(hw.links, 512);
    free(job);
}

/* The prices are keys of a network dimension, written back as read and
 * left out when not given. */
static void test_clos_prices_round_trip(void **state)
{
    (void)state;
    comet_job *job = read_system("system:\n  preset: h100-80g-dgx\n  network:\n" NODE
                                 "    - {name: ib, size: auto, topology: fat_tree, radix: 64,\n"
                                 "       bandwidth: 50 GB/s, cost_per_switch_port: 650,\n"
                                 "       cost_per_link: 90.5}\n");
    assert_close(job->system.dims[1].cost_per_switch_port, 650.0, 0.0);
    assert_close(job->system.dims[1].cost_per_link, 90.5, 0.0);
    assert_close(job->system.dims[0].cost_per_switch_port, 0.0, 0.0);
    comet_buf b;
    comet_buf_init(&b);
    comet_error err;
    assert_int_equal(comet_system_write_yaml(&job->system, &b, &err), COMET_OK);
    assert_non_null(strstr(b.data, "cost_per_switch_port: 650\n"));
    assert_non_null(strstr(b.data, "cost_per_link: 90.5\n"));
    comet_job *again = read_system(b.data);
    assert_close(again->system.dims[1].cost_per_switch_port, 650.0, 0.0);
    assert_close(again->system.dims[1].cost_per_link, 90.5, 0.0);
    assert_close(comet_system_cost(&again->system, 512), comet_system_cost(&job->system, 512),
                 0.0);
    comet_buf_free(&b);
    /* without the keys nothing is written */
    comet_job *plain = read_system("system: h100-80g-dgx\n");
    comet_buf_init(&b);
    assert_int_equal(comet_system_write_yaml(&plain->system, &b, &err), COMET_OK);
    assert_null(strstr(b.data, "cost_per_switch_port"));
    assert_null(strstr(b.data, "cost_per_link"));
    comet_buf_free(&b);
    free(plain);
    free(again);
    free(job);
}
#undef NODE

void suite_estimate(test_tally *t)
{
#define TOY_TEST(f) cmocka_unit_test_setup_teardown(f, toy_setup, toy_teardown)
    const struct CMUnitTest estimate[] = {
        TOY_TEST(test_toy_closed_form),
        TOY_TEST(test_overlap_hides_dp),
        TOY_TEST(test_zero_shards),
        TOY_TEST(test_interleave_bubble),
        TOY_TEST(test_spill_to_expansion),
        TOY_TEST(test_offload_gradients),
        TOY_TEST(test_gradients_spill_before_activations),
        cmocka_unit_test(test_transformer_1t_fits_fred_wafer),
        TOY_TEST(test_offload_needs_tier),
        TOY_TEST(test_dtype_needs_a_peak),
        TOY_TEST(test_per_node_expansion_is_shared),
        TOY_TEST(test_strategy_errors),
        TOY_TEST(test_placement),
        TOY_TEST(test_refusal_codes),
        cmocka_unit_test(test_cp_ep_placement),
        cmocka_unit_test(test_moe_layer_pattern),
        cmocka_unit_test(test_fp8_gemm_at_fp8_peak),
        cmocka_unit_test(test_fp8_workload),
        cmocka_unit_test(test_fp8_estimate),
        cmocka_unit_test(test_clos_hardware),
        cmocka_unit_test(test_clos_prices_round_trip),
    };
#undef TOY_TEST
    RUN_GROUP(t, estimate);
}
