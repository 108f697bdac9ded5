/* Mixture of experts with expert parallelism (docs/model.md, "Mixture of
 * experts"): parameter counts against the published ones and a closed
 * form, the all-to-all bytes per token per EP rank, expert compute under
 * load imbalance and a capacity factor, one expert equal to the dense
 * model, EP across a slower network dimension, expert state per EP rank,
 * the gradient groups, and the simulator against the estimate; folded
 * experts (expert_tp < tp) and DeepEP's de-duplicated dispatch. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/simulate.h"
#include "../src/cost/cost.h"
#include "../src/hardware/hardware.h"
#include "../src/workload/workload.h"
#include "tests.h"

static void load(const char *model, const char *system, comet_model *m, comet_system *sys)
{
    comet_error err;
    assert_int_equal(comet_preset_model(model, m, &err), COMET_OK);
    if (sys)
        assert_int_equal(comet_preset_system(system, sys, &err), COMET_OK);
}

/* Defaults with these degrees, sequence parallelism when tp > 1. */
static comet_strategy layout(int64_t tp, int64_t pp, int64_t dp, int64_t ep, int64_t gbs)
{
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = tp;
    s.pp = pp;
    s.dp = dp;
    s.ep = ep;
    s.sp = tp > 1;
    s.global_batch = gbs;
    return s;
}

/* Mixtral 8x7B on DGX H100 nodes under layout(...). */
static comet_strategy mixtral(comet_model *m, comet_system *sys, int64_t tp, int64_t pp,
                              int64_t dp, int64_t ep, int64_t gbs)
{
    load("mixtral-8x7b", "h100-80g-dgx", m, sys);
    return layout(tp, pp, dp, ep, gbs);
}

static const work_layer *moe_layer(const work_stage *w)
{
    for (int i = 0; i < w->n_layers; i++)
        if (w->layers[i].moe)
            return &w->layers[i];
    fail_msg("no MoE layer");
    return NULL;
}

/* Total and active parameters against the published counts: Mixtral 8x7B
 * 46.7 B / 12.9 B (Jiang 2024; to 0.5 %), 8x22B 141 B / 39 B (NeMo docs;
 * 1 %), DeepSeek-V3 671 B / 37 B (DeepSeek-V3 README; total to 0.5 %,
 * active to 2 %: its README_WEIGHTS gives 36.7 B, our count of its config
 * 37.55 B, the MLA stand-in +0.03 %), Qwen3-235B-A22B (1 %); and
 * Mixtral 8x7B's total by hand. */
static void test_params_published(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        double total, active, tol_total, tol_active;
    } cases[] = {
        {"mixtral-8x7b", 46.7e9, 12.9e9, 0.005, 0.005},
        {"mixtral-8x22b", 141e9, 39e9, 0.01, 0.01},
        {"deepseek-v3", 671e9, 37e9, 0.005, 0.02},
        {"qwen3-235b-a22b", 235e9, 22e9, 0.005, 0.01},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        comet_model m;
        load(cases[i].model, NULL, &m, NULL);
        printf("  %-16s total %.2f B, active %.2f B\n", cases[i].model,
               comet_model_params(&m) / 1e9, comet_model_active_params(&m) / 1e9);
        assert_close(comet_model_params(&m), cases[i].total, cases[i].tol_total);
        assert_close(comet_model_active_params(&m), cases[i].active, cases[i].tol_active);
    }
    /* Mixtral 8x7B by hand: attention 4096 x (4096 + 2 x 1024) + 4096^2,
     * two RMSNorm gains, router 4096 x 8, 8 (or 2) SwiGLU experts of
     * 3 x 4096 x 14336; embedding and head 32000 x 4096 each, final norm */
    comet_model m;
    load("mixtral-8x7b", NULL, &m, NULL);
    double attn = 4096.0 * 6144.0 + 4096.0 * 4096.0 + 2.0 * 4096.0 + 4096.0 * 8.0;
    double expert = 3.0 * 4096.0 * 14336.0, ends = 2.0 * 32000.0 * 4096.0 + 4096.0;
    assert_close(comet_model_params(&m), 32.0 * (attn + 8.0 * expert) + ends, 1e-15);
    assert_close(comet_model_active_params(&m), 32.0 * (attn + 2.0 * expert) + ends, 1e-15);
    /* model FLOPs count the active experts: per token and layer, 2 x the
     * active block's weights plus attention's 4 s (heads x head_dim) */
    comet_strategy s;
    comet_strategy_defaults(&s);
    work_stage w;
    work_build(&m, &s, &w);
    double T = 4096.0;
    double block = 2.0 * T * (4096.0 * 6144.0 + 4096.0 * 4096.0 + 4096.0 * 8.0 + 2.0 * expert) +
                   4.0 * T * T * 4096.0;
    assert_close(w.fwd_flops_model, 32.0 * block + 2.0 * T * 4096.0 * 32000.0, 1e-12);
}

/* Dispatch and combine: each NPU hands (b s / tp) x top_k x hidden x
 * bytes to each all-to-all, forward and backward: Mixtral 8x7B, b 1,
 * s 4096, tp 2, top-2, bf16: 2048 x 2 x 4096 x 2 = 32 MiB, 16 KiB per
 * token and TP rank (the research file's 16,384 B per token). */
static void test_all_to_all_bytes(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s = mixtral(&m, &sys, 2, 4, 8, 4, 64);
    comet_error err;
    comet_strategy r = s;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &r, NULL, &err), COMET_OK);
    work_stage w;
    work_build(&m, &r, &w);
    const work_layer *l = moe_layer(&w);
    int n = 0;
    for (int i = 0; i < l->n_comms; i++)
        if (l->comms[i].group == COMET_GROUP_EP) {
            assert_int_equal(l->comms[i].collective, COMET_COLL_ALL_TO_ALL);
            assert_close(l->comms[i].bytes, 2048.0 * 2.0 * 4096.0 * 2.0, 0.0);
            assert_true(l->comms[i].in_forward && l->comms[i].in_backward);
            n++;
        }
    assert_int_equal(n, 2);
    assert_close(l->comms[l->n_comms - 1].bytes / 2048.0, 16384.0, 0.0); /* per token */
    /* the estimate's EP bytes: 8 MoE layers per stage, 2 all-to-alls,
     * forward and backward, 64 / 8 = 8 microbatches */
    comet_result res;
    assert_int_equal(comet_estimate(&m, &sys, &s, &res, &err), COMET_OK);
    assert_close(res.ep_bytes, 8.0 * 8.0 * 4.0 * 2048.0 * 2.0 * 4096.0 * 2.0, 1e-15);
    assert_true(res.ep_exposed > 0.0 && res.ep_exposed == res.ep_comm_time);
    /* and the all-to-all's time is the network's closed form */
    double t = comet_collective_time(&sys, r.place[COMET_GROUP_EP], COMET_COLL_ALL_TO_ALL,
                                     2048.0 * 2.0 * 4096.0 * 2.0);
    assert_close(res.ep_comm_time, 8.0 * 8.0 * 4.0 * t, 1e-12);
    /* without expert parallelism there is nothing to dispatch */
    s.ep = 1;
    assert_int_equal(comet_estimate(&m, &sys, &s, &res, &err), COMET_OK);
    assert_close(res.ep_bytes, 0.0, 0.0);
}

/* The busiest EP rank's experts see imbalance x the mean routed tokens,
 * at most capacity_factor x it when tokens are dropped: the expert GEMMs'
 * FLOPs grow by 2 x 3 x (b s top_k) x hidden x expert_ffn / tp per unit. */
static void test_imbalance_scales_expert_compute(void **state)
{
    (void)state;
    comet_model m;
    load("mixtral-8x7b", NULL, &m, NULL);
    comet_strategy s = layout(1, 1, 8, 8, 8);
    double flops[3];
    double factors[3][2] = {{1.0, 0.0}, {1.5, 0.0}, {1.5, 1.25}}; /* imbalance, capacity */
    for (int i = 0; i < 3; i++) {
        m.moe.imbalance = factors[i][0];
        m.moe.capacity_factor = factors[i][1];
        work_stage w;
        work_build(&m, &s, &w);
        const work_layer *l = moe_layer(&w);
        flops[i] = 0.0;
        for (int k = 0; k < l->n_ops; k++)
            if (l->ops[k].kind == WORK_GEMM)
                flops[i] += l->ops[k].flops;
    }
    double unit = 2.0 * 3.0 * 4096.0 * 2.0 * 4096.0 * 14336.0;
    assert_close(flops[1] - flops[0], 0.5 * unit, 1e-12);
    assert_close(flops[2] - flops[0], 0.25 * unit, 1e-12);
    /* with one EP rank there is no busiest rank: imbalance is moot */
    s.ep = 1;
    m.moe.capacity_factor = 0.0;
    work_stage a, b;
    work_build(&m, &s, &a);
    m.moe.imbalance = 1.0;
    work_build(&m, &s, &b);
    assert_close(moe_layer(&a)->ops[moe_layer(&a)->mlp_op + 2].flops,
                 moe_layer(&b)->ops[moe_layer(&b)->mlp_op + 2].flops, 0.0);
    /* the busiest of ep ranks takes at most all the tokens, ep times the
     * mean: an imbalance of 8 over 2 ranks counts as 2 */
    s.ep = 2;
    m.moe.imbalance = 8.0;
    work_build(&m, &s, &a);
    m.moe.imbalance = 2.0;
    work_build(&m, &s, &b);
    assert_close(moe_layer(&a)->ops[moe_layer(&a)->mlp_op + 2].flops,
                 moe_layer(&b)->ops[moe_layer(&b)->mlp_op + 2].flops, 0.0);
}

/* The routed experts' two GEMMs are grouped over this NPU's experts: each
 * expert's tokens are the GEMMs' m_group (mixtral, ep 2: 4 local experts
 * of b s top_k / 4 slots each), and only theirs; one local expert is a
 * plain GEMM. The grouped term: forward and input gradient at
 * (m + m0) / m of the plain time on the same curve, the weight gradient
 * untouched. */
static void test_grouped_expert_gemms(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    load("mixtral-8x7b", "h100-80g-dgx", &m, &sys);
    comet_strategy s = layout(1, 1, 2, 2, 8);
    work_stage w;
    work_build(&m, &s, &w);
    const work_layer *l = moe_layer(&w);
    int grouped = 0;
    for (int k = 0; k < l->n_ops; k++)
        if (l->ops[k].m_group > 0.0) {
            assert_close(l->ops[k].m_group, 4096.0 * 2.0 / 4.0, 1e-12);
            assert_close(l->ops[k].k_wgrad, l->ops[k].m_group, 1e-12);
            grouped++;
        }
    assert_int_equal(grouped, 2);
    assert_true(sys.compute.grouped_gemm_m0 == 127.0);
    hw_rates r;
    hw_rates_init(&r, &sys, COMET_DTYPE_BF16);
    const double k[3] = {4096, 14336, 2048};
    double plain[3], group[3];
    sys.compute.kernel_launch = 0.0;
    hw_rates_init(&r, &sys, COMET_DTYPE_BF16);
    hw_gemm_passes(&r, 1e12, 0.0, false, k, 0.0, plain);
    hw_gemm_passes(&r, 1e12, 0.0, false, k, 2048.0, group);
    for (int p = 0; p < 2; p++)
        assert_close(group[p], plain[p] * (2048.0 + 127.0) / 2048.0, 1e-12);
    assert_close(group[2], plain[2], 1e-12);
    s.ep = 8; /* one expert per NPU */
    work_build(&m, &s, &w);
    l = moe_layer(&w);
    for (int i = 0; i < l->n_ops; i++)
        assert_true(l->ops[i].m_group == 0.0);
}

/* An MoE with one expert of the dense FFN, top-1, no shared expert, no
 * expert parallelism and no imbalance is the dense model: no router (one
 * expert routes nothing), the same GEMMs, collectives, parameters and
 * activations, so the same step to rounding (1e-12), estimated and
 * simulated, with a pipeline, ZeRO-1 and every third layer MoE. */
static void test_one_expert_is_dense(void **state)
{
    (void)state;
    comet_model dense, moe;
    comet_system sys;
    load("llama2-70b", "h100-80g-dgx", &dense, &sys);
    moe = dense;
    moe.moe.experts = 1;
    moe.moe.top_k = 1;
    moe.moe.shared = 0;
    moe.moe.ffn = dense.ffn;
    moe.moe.every = 3;
    moe.moe.first_dense = 1;
    moe.moe.capacity_factor = 0.0;
    moe.moe.imbalance = 1.0;
    assert_close(comet_model_params(&moe), comet_model_params(&dense), 1e-12);
    comet_strategy s = layout(4, 4, 4, 1, 64);
    s.zero_stage = 1;
    s.recompute = COMET_RECOMPUTE_SELECTIVE;
    comet_result a, b;
    comet_error err;
    assert_int_equal(comet_estimate(&dense, &sys, &s, &a, &err), COMET_OK);
    assert_int_equal(comet_estimate(&moe, &sys, &s, &b, &err), COMET_OK);
    assert_close(b.step_time, a.step_time, 1e-12);
    assert_close(b.mem_total[COMET_TIER_HBM], a.mem_total[COMET_TIER_HBM], 1e-12);
    assert_close(b.model_flops, a.model_flops, 1e-12);
    static comet_sim_step_result ra, rb;
    assert_int_equal(comet_sim_step(&dense, &sys, &s, NULL, &ra, &err), COMET_OK);
    assert_int_equal(comet_sim_step(&moe, &sys, &s, NULL, &rb, &err), COMET_OK);
    assert_close(rb.step_time, ra.step_time, 1e-12);
    /* and under ZB-H1 with sequence parallelism, whose W passes keep each
     * weight GEMM's (sequence-parallel) input: the same memory too */
    s.schedule = COMET_SCHEDULE_ZB_H1;
    s.sp = true;
    assert_int_equal(comet_estimate(&dense, &sys, &s, &a, &err), COMET_OK);
    assert_int_equal(comet_estimate(&moe, &sys, &s, &b, &err), COMET_OK);
    assert_close(b.step_time, a.step_time, 1e-12);
    assert_close(b.mem_total[COMET_TIER_HBM], a.mem_total[COMET_TIER_HBM], 1e-12);
}

/* h100-80g-dgx (8 GPUs on NVLink, nodes on InfiniBand): Mixtral 8x7B on
 * 16 GPUs, ep 8. Megatron-Core's order (tp, cp, ep, dp, pp) keeps the
 * expert-parallel group in a node; putting dp's own ranks first pushes
 * ep across two nodes, and the all-to-alls, so the step, get slower. */
static void test_ep_across_nodes_is_slower(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s = mixtral(&m, &sys, 1, 1, 16, 8, 16);
    s.recompute = COMET_RECOMPUTE_FULL;
    s.zero_stage = 1;
    /* the claim is the all-to-alls'; DP overlap's contention differs
     * between the two layouts (dp inside or across nodes) */
    sys.compute.overlap_slowdown = 0.0;
    comet_result in, across;
    comet_error err;
    assert_int_equal(comet_estimate(&m, &sys, &s, &in, &err), COMET_OK);
    comet_strategy r = s;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &r, NULL, &err), COMET_OK);
    assert_int_equal(r.place[COMET_GROUP_EP][0], 8);
    comet_group order[COMET_GROUP_COUNT] = {COMET_GROUP_TP, COMET_GROUP_CP, COMET_GROUP_DP,
                                            COMET_GROUP_EP, COMET_GROUP_PP};
    memcpy(s.order, order, sizeof order);
    r = s;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &r, NULL, &err), COMET_OK);
    assert_int_equal(r.place[COMET_GROUP_EP][0], 4);
    assert_int_equal(r.place[COMET_GROUP_EP][1], 2);
    assert_int_equal(comet_estimate(&m, &sys, &s, &across, &err), COMET_OK);
    printf("  ep 8 in a node: all-to-alls %.3f s, step %.3f s; across nodes: %.3f s, %.3f s\n",
           in.ep_comm_time, in.step_time, across.ep_comm_time, across.step_time);
    assert_true(across.ep_comm_time > 2.0 * in.ep_comm_time);
    assert_true(across.step_time > in.step_time);
}

/* What the optimizer keeps (docs/model.md 9.1), for strategy s whose
 * stage holds `params` parameters of which `held` keep optimizer state
 * (ZeRO's shard): P_held x 12 bytes with fp32 Adam, 10 with remainders, 8
 * with bf16 moments and an fp32 master, 4 with bf16 moments and no
 * master; with no master the gradients are held in bf16 even when
 * grad_fp32 asks for fp32 reduction. The optimizer step's traffic per
 * parameter follows: 38 bytes with fp32 gradients and state (read for
 * the norm 4, Adam 28, cast back 4 + 2), 32 with remainders (no cast
 * back), 30 with bf16 moments (Adam 4 + 2 (4 + 2 x 2) = 20), 16 with no
 * master (8 x 2); bf16 gradients under fp32 Adam are cast first (+6). */
static void optimizer_states(const comet_model *m, const comet_system *sys, comet_strategy *s,
                             double params, double held)
{
    const struct {
        comet_optimizer_state state;
        double state_bytes, grad_bytes, step_bytes;
    } cases[] = {
        {COMET_OPTIM_FP32, 12.0, 4.0, 38.0},
        {COMET_OPTIM_REMAINDERS, 10.0, 4.0, 32.0},
        {COMET_OPTIM_BF16_MOMENTS, 8.0, 4.0, 30.0},
        {COMET_OPTIM_BF16, 4.0, 2.0, 16.0},
    };
    s->grad_fp32 = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s->optimizer_state = cases[i].state;
        comet_result r;
        comet_error err;
        assert_int_equal(comet_estimate(m, sys, s, &r, &err), COMET_OK);
        assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER], held * cases[i].state_bytes,
                     1e-12);
        assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], params * cases[i].grad_bytes,
                     1e-12);
        assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], params * 2.0, 1e-12);
        assert_close(optimizer_bytes_per_param(s, 2.0), cases[i].step_bytes, 1e-15);
    }
    s->grad_fp32 = false;
    s->optimizer_state = COMET_OPTIM_FP32;
    assert_close(optimizer_bytes_per_param(s, 2.0), 44.0, 1e-15);
}

/* Expert state per EP rank: experts / ep of them, split by tp; ZeRO-1
 * shards dense optimizer state over dp and expert state over dp / ep;
 * then each optimizer state on that shard. */
static void test_memory_per_ep_rank(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s = mixtral(&m, &sys, 2, 4, 8, 1, 64);
    s.zero_stage = 1;
    work_stage w1, w8;
    work_build(&m, &s, &w1);
    s.ep = 8;
    work_build(&m, &s, &w8);
    /* 8 MoE layers per stage, 8 experts of 3 x 4096 x 14336, over tp 2 */
    double expert = 3.0 * 4096.0 * 14336.0;
    assert_close(w1.params_expert_npu, 8.0 * 8.0 * expert / 2.0, 1e-15);
    assert_close(w8.params_expert_npu, 8.0 * 1.0 * expert / 2.0, 1e-15);
    assert_close(w1.params_npu - w1.params_expert_npu, w8.params_npu - w8.params_expert_npu,
                 1e-15);
    comet_result r;
    comet_error err;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
    double dense = w8.params_npu - w8.params_expert_npu;
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], w8.params_npu * 2.0, 1e-12);
    assert_close(r.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER],
                 (dense / 8.0 + w8.params_expert_npu / 1.0) * 12.0, 1e-12);
    /* and the gradient groups: dense over dp (8 in the node), experts
     * over dp / ep = 1 rank, so the plan reduces the dense part only */
    comet_strategy res = s;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &res, NULL, &err), COMET_OK);
    int64_t d[COMET_MAX_DIMS], e[COMET_MAX_DIMS];
    comet_strategy_grad_spans(&res, false, d);
    comet_strategy_grad_spans(&res, true, e);
    int64_t pd = 1, pe = 1;
    for (int i = 0; i < COMET_MAX_DIMS; i++) {
        pd *= d[i];
        pe *= e[i];
    }
    assert_int_equal(pd, 8);
    assert_int_equal(pe, 1);
    assert_int_equal(comet_strategy_grad_size(&res, true), 1);
    optimizer_states(&m, &sys, &s, w8.params_npu, dense / 8.0 + w8.params_expert_npu);
}

/* The MoE block's stash against the dense block's (docs/model.md 17.3),
 * Mixtral 8x7B at tp 1, ep 8, microbatch 1 (T = 4096 tokens, top-2: R =
 * 8192 routed slots): the dense MLP's intermediates T f (2e + e) give way
 * to the routed slots' R f (2e + e); routing keeps the fp32 router logits
 * and probabilities 8 T E and, per slot, the dispatched input (h e) and
 * its fp32 probability (4). The expert output is not kept: the
 * probability weights the activation, so the combine is a plain sum
 * (Megatron-Core since 2025-04). With fp8 the expert GEMMs' inputs (the
 * dispatched slot and the activation output) are kept in 1 byte. */
static void test_moe_stash(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s = mixtral(&m, &sys, 1, 1, 8, 8, 8);
    for (int fp8 = 0; fp8 < 2; fp8++) {
        s.fp8 = fp8 == 1;
        work_stage w;
        work_build(&m, &s, &w);
        const work_layer *moe = moe_layer(&w), *dense = &w.layers[0];
        double T = 4096.0, R = 2.0 * T, f = 14336.0, h = 4096.0, E = 8.0, in = fp8 ? 1.0 : 2.0;
        double expect = (R - T) * f * (2.0 * 2.0 + in) + 8.0 * T * E + R * (h * in + 4.0);
        assert_close(moe->act_bytes_selective - dense->act_bytes_selective, expect, 1e-12);
        assert_close(moe->act_bytes - dense->act_bytes, expect, 1e-12);
    }
}

/* A stage's dense and MoE blocks: DeepSeek-V3's 61 layers (the first 3
 * dense) over 8 stages: 8 each on stages 0-4, 7 on 5-7. Stage 0 holds 3
 * dense + 5 MoE, stages 1-4 8 MoE, the last 7 MoE and the head: with
 * expert parallelism an inner stage is the busiest and holds neither the
 * embedding nor the head. Interleaved over 4 stages x 2 chunks of 8, 8,
 * 8, 8, 8, 7, 7, 7 layers, chunk 4 starts at layer 32, chunk 7 at 54:
 * stage 0 holds layers 0-7 and 32-39 (13 MoE), stage 3 24-31 and 54-60. */
static void test_stage_split(void **state)
{
    (void)state;
    comet_model m;
    load("deepseek-v3", NULL, &m, NULL);
    comet_strategy s = layout(1, 8, 8, 8, 64);
    work_stage w;
    work_build(&m, &s, &w);
    assert_true(w.busiest_is_middle);
    assert_false(w.busiest_is_first);
    assert_close(w.moe_first_count, 5.0, 0.0);
    assert_close(w.moe_last_count, 7.0, 0.0);
    assert_close(w.first_stage_count, 8.0, 0.0);
    const work_layer *moe = moe_layer(&w);
    assert_close(moe->count, 8.0, 0.0);
    assert_close(w.layers[0].count, 0.0, 0.0); /* the dense block */
    assert_close(w.params_npu, 8.0 * moe->params, 1e-15);
    assert_close(w.params_expert_npu, 8.0 * moe->expert_params, 1e-15);
    s = layout(1, 4, 8, 8, 64);
    s.interleave = 2;
    assert_int_equal(work_chunk_first_block(&m, &s, 4), 32);
    assert_int_equal(work_chunk_first_block(&m, &s, 7), 54);
    assert_int_equal(work_stage_moe_blocks(&m, &s, 0), 13);
    assert_int_equal(work_stage_moe_blocks(&m, &s, 3), 15);
    assert_int_equal(work_stage_blocks(&m, &s, 3), 15);
}

/* The simulator runs the all-to-alls as tasks and the expert-DP
 * reductions as their own collectives; it agrees with the estimate
 * within the 1 % the dense models' test_step_agrees_with_estimate uses,
 * or, where the model's dense shape (no experts, ep 1) on the same layout
 * is already further apart, within 0.5 points of the dense gap: that gap
 * is the interleaved pipeline's (its bubble priced at the busiest stage's
 * microbatch; 1F1B and ZB-H1 see every stage's own, docs/model.md 15),
 * measured at -0.95/-2.26/-0.79/-0.21/+0.05 % for the dense shapes below
 * against -0.66/-1.53/-0.54/-0.08/+0.02 % with experts. */
static void test_sim_agrees(void **state)
{
    (void)state;
    const char *models[] = {"mixtral-8x7b", "mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b",
                            "deepseek-v3"};
    comet_strategy layouts[] = {layout(2, 4, 4, 4, 128), layout(1, 4, 8, 8, 256),
                                layout(2, 8, 4, 4, 128), layout(2, 4, 8, 8, 256),
                                layout(1, 8, 16, 16, 512)};
    layouts[1].interleave = 2;
    comet_system sys;
    comet_error err;
    assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
    static comet_sim_step_result r;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        comet_model m;
        load(models[i], NULL, &m, NULL);
        comet_strategy s = layouts[i];
        s.sp = true; /* (with tp 1 too: the dense test's settings) */
        s.recompute = COMET_RECOMPUTE_SELECTIVE;
        s.overlap_dp = false;
        s.grad_fp32 = true;
        s.zero_stage = 1;
        comet_result est;
        assert_int_equal(comet_estimate(&m, &sys, &s, &est, &err), COMET_OK);
        assert_int_equal(comet_sim_step(&m, &sys, &s, NULL, &r, &err), COMET_OK);
        double diff = (r.step_time - est.step_time) / est.step_time;
        printf("  %-16s tp %lld pp %lld dp %lld ep %lld v %lld: simulated %.3f s, estimate "
               "%.3f s (%+.2f%%)\n",
               models[i], (long long)s.tp, (long long)s.pp, (long long)s.dp,
               (long long)s.ep, (long long)s.interleave, r.step_time, est.step_time,
               100.0 * diff);
        assert_true(est.ep_exposed > 0.0);
        /* the dense model of the same shape (no experts, ep 1) */
        comet_model dense = m;
        dense.moe.experts = 0;
        s.ep = 1;
        assert_int_equal(comet_estimate(&dense, &sys, &s, &est, &err), COMET_OK);
        assert_int_equal(comet_sim_step(&dense, &sys, &s, NULL, &r, &err), COMET_OK);
        double dense_diff = (r.step_time - est.step_time) / est.step_time;
        printf("    its dense shape (no experts, ep 1): %+.2f%%\n", 100.0 * dense_diff);
        assert_true(fabs(diff) < fmax(0.01, fabs(dense_diff) + 0.005));
    }
}

/* D(E, n, k) = n (1 - C(E - E/n, k) / C(E, k)): a token's top_k experts
 * reach one bucket with k = 1, all n with k = E; E = 4 in 2 buckets with
 * k = 2: 2 (1 - C(2,2)/C(4,2)) = 5/3; E = 8 in 2 with k = 2:
 * 2 (1 - 6/28) = 11/7. */
static void test_distinct_closed_forms(void **state)
{
    (void)state;
    assert_close(work_moe_distinct(128.0, 16.0, 1.0), 1.0, 1e-15);
    assert_close(work_moe_distinct(64.0, 8.0, 64.0), 8.0, 1e-15);
    assert_close(work_moe_distinct(4.0, 2.0, 2.0), 5.0 / 3.0, 1e-15);
    assert_close(work_moe_distinct(8.0, 2.0, 2.0), 11.0 / 7.0, 1e-15);
    assert_close(work_moe_distinct(256.0, 1.0, 8.0), 1.0, 0.0);
    /* Qwen3 (128 experts, top 8) on 2 nodes: 2 (1 - prod_{i<8} (64-i)/(128-i)) */
    double miss = 1.0;
    for (int i = 0; i < 8; i++)
        miss *= (64.0 - i) / (128.0 - i);
    assert_close(work_moe_distinct(128.0, 2.0, 8.0), 2.0 * (1.0 - miss), 1e-14);
}

/* Product of a span list. */
static int64_t span_product(const int64_t *span)
{
    int64_t p = 1;
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        p *= span[d] > 0 ? span[d] : 1;
    return p;
}

/* s resolved for m on sys (it must resolve). */
static comet_strategy resolved(const comet_model *m, const comet_system *sys, comet_strategy s)
{
    comet_error err;
    assert_int_equal(comet_strategy_resolve(m, sys, &s, NULL, &err), COMET_OK);
    return s;
}

/* MoE Parallel Folding on X03's shape (Qwen3-235B, tp 2, dp 128, ep 8 on
 * 8-GPU DGX nodes): with expert TP = tp the EP group is 4 of a node's dp
 * ranks and 2 nodes; folded (expert_tp 1) it is one node, and the expert-
 * DP group 2 x 128 / 8 = 32 ranks, one per node (the model zoo's EDP 32). */
static void test_folded_placement(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    load("qwen3-235b-a22b", "h100-80g-dgx", &m, &sys);
    comet_strategy s = layout(2, 1, 128, 8, 1024);
    comet_strategy r = resolved(&m, &sys, s);
    assert_int_equal(r.place[COMET_GROUP_EP][0], 4);
    assert_int_equal(r.place[COMET_GROUP_EP][1], 2);
    assert_int_equal(comet_strategy_grad_size(&r, true), 16);
    s.expert_tp = 1;
    r = resolved(&m, &sys, s);
    assert_true(comet_strategy_folded(&r));
    assert_int_equal(r.place[COMET_GROUP_EP][0], 8);
    assert_int_equal(r.place[COMET_GROUP_EP][1], 1);
    assert_int_equal(r.place_etp[0], 1);
    int64_t e[COMET_MAX_DIMS];
    comet_strategy_grad_spans(&r, true, e);
    assert_int_equal(e[0], 1);
    assert_int_equal(e[1], 32);
    assert_int_equal(span_product(e), 32);
    assert_int_equal(comet_strategy_grad_size(&r, true), 32);
    /* the dense groups stay as they were */
    assert_int_equal(r.place[COMET_GROUP_TP][0], 2);
    assert_int_equal(r.place[COMET_GROUP_DP][0], 4);
    /* expert_tp 2 of tp 4 (tp 4, dp 8, ep 4): expert-TP the innermost 2,
     * EP the next 4 of the node, expert DP 4 x 8 / 8 = 4 */
    s = layout(4, 1, 8, 4, 64);
    s.expert_tp = 2;
    r = resolved(&m, &sys, s);
    assert_int_equal(r.place_etp[0], 2);
    assert_int_equal(r.place[COMET_GROUP_EP][0], 4);
    assert_int_equal(comet_strategy_grad_size(&r, true), 4);
    comet_strategy_grad_spans(&r, true, e);
    assert_int_equal(e[0], 1);
    assert_int_equal(e[1], 4);
}

/* What folding refuses, naming the key. */
static void test_folded_errors(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    load("qwen3-235b-a22b", "h100-80g-dgx", &m, &sys);
    comet_error err;
    comet_strategy s = layout(4, 1, 8, 8, 64);
    s.expert_tp = 3;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, NULL, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.expert_tp");
    assert_string_equal(err.message, "3 does not divide tp (4): each expert is split over a part "
                                     "of the tensor-parallel ranks");
    /* folded ep draws on tp*cp*dp/expert_tp = 2 x 2 / 1 = 4 ranks */
    s = layout(2, 1, 2, 8, 64);
    s.expert_tp = 1;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, NULL, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.ep");
    assert_string_equal(err.message, "8 does not divide tp*cp*dp/expert_tp (4): folded expert-"
                                     "parallel ranks are drawn from a stage's tensor-, context- "
                                     "and data-parallel ranks past the expert-TP ranks");
    /* unfolded, the same ep must divide dp */
    s.expert_tp = 0;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, NULL, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.ep");
    /* folded needs sequence parallelism, as Megatron-Core does */
    s = layout(2, 1, 8, 8, 64);
    s.expert_tp = 1;
    s.sp = false;
    assert_int_equal(comet_strategy_resolve(&m, &sys, &s, NULL, &err), COMET_EINPUT);
    assert_string_equal(err.key, "strategy.expert_tp");
}

/* Folded experts are whole on each EP rank (expert_tp 1): Mixtral's 8
 * experts over ep 8 with tp 2 leave one whole expert per NPU (half of
 * one unfolded), and the expert optimizer state shards over the expert-
 * DP group, tp x dp / ep = 2 x 8 / 8 = 2 ranks, under ZeRO 1. */
static void test_folded_memory(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_strategy s = mixtral(&m, &sys, 2, 4, 8, 8, 64);
    s.zero_stage = 1;
    s.expert_tp = 1;
    comet_error err;
    comet_strategy r = resolved(&m, &sys, s);
    work_stage w;
    work_build(&m, &r, &w);
    double expert = 3.0 * 4096.0 * 14336.0;
    assert_close(w.params_expert_npu, 8.0 * 1.0 * expert, 1e-15);
    comet_result res;
    assert_int_equal(comet_estimate(&m, &sys, &s, &res, &err), COMET_OK);
    double dense = w.params_npu - w.params_expert_npu;
    assert_close(res.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER],
                 (dense / 8.0 + w.params_expert_npu / 2.0) * 12.0, 1e-12);
    /* the routed experts' GEMMs see this rank's T/tp tokens x top_k (no
     * expert-TP gather): the first expert GEMM is (b s / 2 x 2) x h x 2 f_e */
    const work_layer *l = moe_layer(&w);
    double tokens = 1.0 * 4096.0 / 2.0;
    bool found = false;
    for (int i = l->mlp_op; i < l->mlp_end && !found; i++)
        if (l->ops[i].kind == WORK_GEMM && l->ops[i].k_fwd == 4096.0 &&
            l->ops[i].flops > 2.0 * tokens * 4096.0 * 8.0 * 1.5) {
            assert_close(l->ops[i].flops, 2.0 * tokens * 2.0 * 4096.0 * 2.0 * 14336.0, 1e-15);
            found = true;
        }
    assert_true(found);
    /* no shared experts: the MLP's TP synchronisation went (attention's
     * all-gather, reduce-scatter and backward re-gather stay) */
    int tp_comms = 0;
    for (int i = 0; i < l->n_comms; i++)
        tp_comms += l->comms[i].group == COMET_GROUP_TP;
    assert_int_equal(tp_comms, 3);
}

/* DeepEP's buffers per dimension: Qwen3 (128 experts, top 8) on EP 16
 * over 2 DGX nodes sends D(128, 16, 8) copies of each token over NVLink
 * and D(128, 2, 8) over InfiniBand rather than 8 on both; DeepSeek-V3
 * (256 experts, top 8, at most 4 nodes) on EP 64 over 8 nodes:
 * D(128, 32, 8) and D(128, 4, 8). The estimate prices the all-to-alls
 * with these buffers (the network's split all-to-all). */
static void test_deepep_bytes(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    load("qwen3-235b-a22b", "h100-80g-dgx", &m, &sys);
    comet_strategy s = layout(1, 1, 16, 16, 64);
    s.moe_dispatcher = COMET_MOE_DEEPEP;
    comet_error err;
    comet_strategy r = resolved(&m, &sys, s);
    double unit = 4096.0 * 4096.0 * 2.0; /* b s tokens x h x 2 bytes */
    double inner, outer;
    work_moe_dispatch_buffers(&m, &r, unit, &inner, &outer);
    assert_close(inner, unit * work_moe_distinct(128.0, 16.0, 8.0), 1e-15);
    assert_close(outer, unit * work_moe_distinct(128.0, 2.0, 8.0), 1e-15);
    work_stage w;
    work_build(&m, &r, &w);
    const work_layer *l = moe_layer(&w);
    int n = 0;
    for (int i = 0; i < l->n_comms; i++)
        if (l->comms[i].group == COMET_GROUP_EP) {
            assert_close(l->comms[i].bytes, inner, 0.0);
            assert_close(l->comms[i].outer_bytes, outer, 0.0);
            n++;
        }
    assert_int_equal(n, 2);
    /* alltoall: top_k copies on both */
    r.moe_dispatcher = COMET_MOE_ALLTOALL;
    work_moe_dispatch_buffers(&m, &r, unit, &inner, &outer);
    assert_close(inner, 8.0 * unit, 0.0);
    assert_close(outer, 8.0 * unit, 0.0);
    /* the split all-to-all with equal buffers is the plain one, and
     * de-duplication past the node makes it faster */
    double t = comet_collective_time(&sys, r.place[COMET_GROUP_EP], COMET_COLL_ALL_TO_ALL, inner);
    assert_close(comet_collective_time_split(&sys, r.place[COMET_GROUP_EP],
                                             COMET_COLL_ALL_TO_ALL, inner, inner), t, 0.0);
    assert_true(comet_collective_time_split(&sys, r.place[COMET_GROUP_EP], COMET_COLL_ALL_TO_ALL,
                                            inner, inner / 4.0) < t);
    /* the estimate's EP time: 94 MoE layers, 64 / 16 = 4 microbatches,
     * dispatch and combine forward and backward, at the split price */
    comet_result res;
    assert_int_equal(comet_estimate(&m, &sys, &s, &res, &err), COMET_OK);
    r.moe_dispatcher = COMET_MOE_DEEPEP;
    work_moe_dispatch_buffers(&m, &r, unit, &inner, &outer);
    double ts = comet_collective_time_split(&sys, r.place[COMET_GROUP_EP], COMET_COLL_ALL_TO_ALL,
                                            inner, outer);
    assert_close(res.ep_comm_time, (double)m.layers * 4.0 * 4.0 * ts, 1e-12);
    /* DeepSeek-V3's node limit */
    load("deepseek-v3", NULL, &m, NULL);
    assert_int_equal(m.moe.max_nodes, 4);
    s = layout(1, 1, 64, 64, 64);
    s.moe_dispatcher = COMET_MOE_DEEPEP;
    r = resolved(&m, &sys, s);
    work_moe_dispatch_buffers(&m, &r, unit, &inner, &outer);
    assert_close(inner, unit * work_moe_distinct(128.0, 32.0, 8.0), 1e-15);
    assert_close(outer, unit * work_moe_distinct(128.0, 4.0, 8.0), 1e-15);
}

/* The simulator against the estimate on s (selective recompute, ZeRO 1,
 * no DP overlap, the settings of test_sim_agrees): within 1 %. */
static void sim_within_a_percent(const comet_model *m, const comet_system *sys, comet_strategy s,
                                 const char *what)
{
    s.recompute = COMET_RECOMPUTE_SELECTIVE;
    s.overlap_dp = false;
    s.grad_fp32 = true;
    s.zero_stage = 1;
    comet_error err;
    comet_result est;
    static comet_sim_step_result r;
    assert_int_equal(comet_estimate(m, sys, &s, &est, &err), COMET_OK);
    assert_int_equal(comet_sim_step(m, sys, &s, NULL, &r, &err), COMET_OK);
    double diff = (r.step_time - est.step_time) / est.step_time;
    printf("  %s: simulated %.3f s, estimate %.3f s (%+.2f%%)\n", what, r.step_time,
           est.step_time, 100.0 * diff);
    assert_true(est.ep_exposed > 0.0);
    assert_true(fabs(diff) < 0.01);
}

/* The simulator agrees with the estimate on folded experts with DeepEP
 * (Qwen3-235B, tp 2, pp 4, dp 8, ep 8, expert_tp 1: EP inside a node),
 * and on DeepEP across 2 nodes (tp 1, ep 16). */
static void test_sim_agrees_folded_deepep(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    load("qwen3-235b-a22b", "h100-80g-dgx", &m, &sys);
    comet_strategy s = layout(2, 4, 8, 8, 256);
    s.expert_tp = 1;
    s.moe_dispatcher = COMET_MOE_DEEPEP;
    sim_within_a_percent(&m, &sys, s, "folded deepep");
    s = layout(1, 4, 16, 16, 256);
    s.moe_dispatcher = COMET_MOE_DEEPEP;
    sim_within_a_percent(&m, &sys, s, "deepep over 2 nodes");
}

void suite_moe(test_tally *t)
{
    const struct CMUnitTest moe[] = {
        cmocka_unit_test(test_params_published),
        cmocka_unit_test(test_all_to_all_bytes),
        cmocka_unit_test(test_imbalance_scales_expert_compute),
        cmocka_unit_test(test_grouped_expert_gemms),
        cmocka_unit_test(test_one_expert_is_dense),
        cmocka_unit_test(test_ep_across_nodes_is_slower),
        cmocka_unit_test(test_memory_per_ep_rank),
        cmocka_unit_test(test_moe_stash),
        cmocka_unit_test(test_stage_split),
        cmocka_unit_test(test_sim_agrees),
        cmocka_unit_test(test_distinct_closed_forms),
        cmocka_unit_test(test_folded_placement),
        cmocka_unit_test(test_folded_errors),
        cmocka_unit_test(test_folded_memory),
        cmocka_unit_test(test_deepep_bytes),
        cmocka_unit_test(test_sim_agrees_folded_deepep),
    };
    RUN_GROUP(t, moe);
}
