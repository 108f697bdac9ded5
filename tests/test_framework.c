/* Frameworks and overlap contention (docs/model.md, frameworks): the
 * per-layer ZeRO-3 recurrence worked by hand for two kinds of layer at
 * prefetch depths 0, 1 and 2, and its steady state against the closed
 * form of a long run of equal layers; the closed form inside fsdp_pass
 * against every layer stepped on random runs, and the kept passes and
 * collective prices answering to the bit; gathers split into small messages
 * growing with the data-parallel ranks (latency per step); framework
 * ideal reproducing the earlier model exactly and ignoring contention;
 * the contention share applied exactly (hidden h, share f: the step grows
 * by f*h); the simulator agreeing with the estimate; the framework's
 * memory; and the errors of the new keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/simulate.h"
#include "../src/cost/cost.h"
#include "tests.h"

/* Layers A (one: compute 6, gather 1, reduce-scatter 2) then B (three:
 * compute 1, gather 3, reduce-scatter 1), seconds. */
static const fsdp_run two_kinds[2] = {{1.0, 6.0, 1.0, 2.0}, {3.0, 1.0, 3.0, 1.0}};

/* Forward, by hand (g_i: gather of layer i, E_i: its compute's end; a
 * gather goes out once the layer d+1 before it has computed):
 *   d = 0: g0 0-1, E0 7; g1 7-10, E1 11; g2 11-14, E2 15; g3 15-18, E3 19:
 *          19 - 9 = 10 exposed, every gather;
 *   d = 1: g0 0-1, g1 1-4, E0 7; g2 7-10, E1 8; g3 10-13, E2 11, E3 14: 5;
 *   d = 2: g0 0-1, g1 1-4, g2 4-7, E0 7; g3 7-10, E1 8, E2 9, E3 11: 2. */
static void test_fsdp_by_hand_forward(void **state)
{
    (void)state;
    static const double exposed[3] = {10.0, 5.0, 2.0};
    for (int d = 0; d < 3; d++) {
        fsdp_time t;
        fsdp_pass(two_kinds, 2, d, false, &t);
        assert_close(t.compute, 9.0, 1e-15);
        assert_close(t.comm, 10.0, 1e-15);
        assert_close(t.exposed, exposed[d], 1e-15);
        assert_close(t.hidden, 10.0 - exposed[d], 1e-15);
    }
}

/* Backward, d = 1: the runs in reverse, B B B A; after each layer its
 * reduce-scatter, then the gather d+1 layers on, on the one stream:
 *   g0 0-3, g1 3-6; E0 3-4; rs0 6-7; g2 7-10; E1 6-7; rs1 10-11;
 *   g3 11-12; E2 10-11; rs2 12-13; E3 12-18; rs3 18-20.
 * The pass ends at 20: 20 - 9 = 11 exposed of 15 s of communication. */
static void test_fsdp_by_hand_backward(void **state)
{
    (void)state;
    fsdp_time t;
    fsdp_pass(two_kinds, 2, 1, true, &t);
    assert_close(t.compute, 9.0, 1e-15);
    assert_close(t.comm, 15.0, 1e-15);
    assert_close(t.exposed, 11.0, 1e-15);
    assert_close(t.hidden, 4.0, 1e-15);
}

/* A long run of equal layers (compute c, gather g): forward with d >= 1
 * exposes the first gather and, when gathers are slower, g - c per
 * further layer: g + (N-1) max(0, g - c); d = 0 exposes every gather.
 * Backward with c >= g + r exposes the first gather and the last
 * reduce-scatter. The recurrence skips the steady layers; these check
 * that the skip lands exactly where walking every layer would. */
static void test_fsdp_steady_state(void **state)
{
    (void)state;
    fsdp_time t;
    fsdp_run slow = {1000.0, 2.0, 3.0, 0.0}, fast = {1000.0, 3.0, 2.0, 0.0};
    fsdp_pass(&slow, 1, 1, false, &t);
    assert_close(t.exposed, 3.0 + 999.0 * 1.0, 1e-12);
    fsdp_pass(&slow, 1, 4, false, &t);
    assert_close(t.exposed, 1002.0, 1e-12);
    fsdp_pass(&fast, 1, 1, false, &t);
    assert_close(t.exposed, 2.0, 1e-12);
    fsdp_pass(&fast, 1, 0, false, &t);
    assert_close(t.exposed, 2000.0, 1e-12);
    fsdp_run back = {1000.0, 5.0, 2.0, 1.0};
    fsdp_pass(&back, 1, 1, true, &t);
    assert_close(t.exposed, 3.0, 1e-12);
    /* comm-bound backward, d = 1: per layer g + r on the stream */
    fsdp_run bound = {1000.0, 1.0, 2.0, 1.0};
    fsdp_pass(&bound, 1, 1, true, &t);
    assert_true(t.exposed >= 1000.0 * 3.0 - 1000.0 * 1.0);
    assert_true(t.exposed <= 1000.0 * 3.0 - 1000.0 * 1.0 + 3.0);
    /* a run sandwiched between others: the gathers prefetched across the
     * boundary are the next run's */
    fsdp_run three[3] = {{1.0, 1.0, 5.0, 0.0}, {500.0, 4.0, 1.0, 0.0}, {1.0, 1.0, 9.0, 0.0}};
    fsdp_pass(three, 3, 1, false, &t);
    /* gathers: 5 (exposed), then 1-s gathers hide under 4-s computes; the
     * last layer's 9-s gather starts when layer 499 of the run has
     * computed and finishes 9 s later, 5 s after the run's last compute */
    assert_close(t.exposed, 5.0 + 5.0, 1e-12);
}

/* The plain recurrence, every layer stepped (docs/model.md, frameworks):
 * the reference the closed form inside fsdp_pass must reproduce. Returns
 * the pass's end. */
static double fsdp_stepped(const fsdp_run *runs, int n_runs, int d, bool backward)
{
    int64_t total = 0;
    for (int k = 0; k < n_runs; k++)
        total += (int64_t)runs[k].count;
    double *c = calloc((size_t)total + 1, sizeof *c), *g = calloc((size_t)total + 1, sizeof *g);
    double *r = calloc((size_t)total + 1, sizeof *r), *gathered = calloc((size_t)total + 1, sizeof *r);
    assert_non_null(c);
    assert_non_null(g);
    assert_non_null(r);
    assert_non_null(gathered);
    int64_t i = 0;
    for (int k = 0; k < n_runs; k++) {
        const fsdp_run *run = &runs[backward ? n_runs - 1 - k : k];
        for (int64_t n = 0; n < (int64_t)run->count; n++, i++) {
            c[i] = run->compute;
            g[i] = run->gather;
            r[i] = backward ? run->reduce : 0.0;
        }
    }
    double stream = 0.0, end = 0.0;
    for (int64_t j = 0; j <= d && j < total; j++) {
        stream += g[j];
        gathered[j] = stream;
    }
    for (int64_t j = 0; j < total; j++) {
        end = fmax(end, gathered[j]) + c[j];
        stream = fmax(stream, end) + r[j];
        if (j + d + 1 < total) {
            stream = fmax(stream, end) + g[j + d + 1];
            gathered[j + d + 1] = stream;
        }
    }
    free(c);
    free(g);
    free(r);
    free(gathered);
    return fmax(end, stream);
}

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A time: zero, or spread over eight decades. */
static double random_time(uint64_t *x)
{
    if (next_random(x) % 8 == 0)
        return 0.0;
    return pow(10.0, (double)(next_random(x) % 8000) / 1000.0 - 6.0);
}

/* fsdp_pass (closed form inside each run) against every layer stepped,
 * on random runs: 1 to 6 runs of up to 300 layers (some counts
 * fractional), every prefetch depth from 0 to COMET_MAX_PREFETCH, forward
 * and backward, with compute below, at and just above the stream's time
 * per layer as well as far from it. Equal within 1e-9 of the pass. */
static void test_fsdp_closed_form_matches_stepping(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15u;
    int compared = 0;
    for (int trial = 0; trial < 60; trial++) {
        fsdp_run runs[6];
        int n_runs = 1 + (int)(next_random(&x) % 6);
        for (int k = 0; k < n_runs; k++) {
            fsdp_run *r = &runs[k];
            r->count = (double)(1 + next_random(&x) % 300);
            if (next_random(&x) % 5 == 0)
                r->count += 0.5;
            r->gather = random_time(&x);
            r->reduce = random_time(&x);
            r->compute = random_time(&x);
            switch (next_random(&x) % 4) { /* the stream's time per layer, q, against c */
            case 0:
                r->compute = r->gather + r->reduce; /* backward: c = q */
                break;
            case 1:
                r->compute = r->gather * (1.0 + 1e-9); /* forward: c just above q */
                break;
            default:
                break;
            }
        }
        for (int d = 0; d <= COMET_MAX_PREFETCH; d++) {
            for (int backward = 0; backward < 2; backward++) {
                fsdp_time t;
                fsdp_pass(runs, n_runs, d, backward, &t);
                double want = fsdp_stepped(runs, n_runs, d, backward);
                double compute = 0.0, comm = 0.0;
                for (int k = 0; k < n_runs; k++) {
                    compute += runs[k].count * runs[k].compute;
                    comm += runs[k].count * (runs[k].gather + (backward ? runs[k].reduce : 0.0));
                }
                double exposed = fmax(0.0, want - compute), tol = 1e-9 * fmax(want, 1e-300);
                if (fabs(t.exposed - exposed) > tol || fabs(t.compute - compute) > tol ||
                    fabs(t.comm - comm) > 1e-9 * comm ||
                    fabs(t.hidden - fmax(0.0, comm - exposed)) > tol)
                    fail_msg("trial %d, %d runs, prefetch %d, %s: exposed %.17g, stepped %.17g "
                             "(pass ends at %.17g)", trial, n_runs, d,
                             backward ? "backward" : "forward", t.exposed, exposed, want);
                compared++;
            }
        }
    }
    /* prefetch past the limit is the limit */
    fsdp_time a, b;
    fsdp_pass(two_kinds, 2, COMET_MAX_PREFETCH + 5, true, &a);
    fsdp_pass(two_kinds, 2, COMET_MAX_PREFETCH, true, &b);
    assert_true(a.exposed == b.exposed);
    assert_int_equal(compared, 60 * (COMET_MAX_PREFETCH + 1) * 2);
}

/* fsdp_pass_cached gives fsdp_pass's answer to the bit, from the cache
 * or not, for passes that differ in one input only (more of them than
 * the cache holds, so entries are replaced), and passes on what it does
 * not hold (more runs than an entry keeps). */
static void test_fsdp_cache_is_exact(void **state)
{
    (void)state;
    fsdp_cache cache;
    fsdp_cache_init(&cache);
    uint64_t x = 12345;
    fsdp_run runs[FSDP_CACHE_RUNS + 1];
    for (int k = 0; k <= FSDP_CACHE_RUNS; k++)
        runs[k] = (fsdp_run){(double)(1 + next_random(&x) % 40), random_time(&x),
                             random_time(&x), random_time(&x)};
    for (int round = 0; round < 3; round++)
        for (int n = 1; n <= FSDP_CACHE_RUNS + 1; n++)
            for (int d = 0; d < 3; d++)
                for (int backward = 0; backward < 2; backward++) {
                    fsdp_time want, got;
                    fsdp_pass(runs, n, d, backward, &want);
                    fsdp_pass_cached(&cache, runs, n, d, backward, &got);
                    assert_memory_equal(&want, &got, sizeof want);
                    fsdp_pass_cached(NULL, runs, n, d, backward, &got);
                    assert_memory_equal(&want, &got, sizeof want);
                }
    /* a changed layer time is a new pass */
    fsdp_time before, after, want;
    fsdp_pass_cached(&cache, runs, 2, 1, true, &before);
    runs[1].reduce += 1.0;
    fsdp_pass_cached(&cache, runs, 2, 1, true, &after);
    fsdp_pass(runs, 2, 1, true, &want);
    assert_memory_equal(&want, &after, sizeof want);
    assert_true(after.comm > before.comm);
}

/* coll_memo_time gives comet_collective_time's double, held or not:
 * 3,000 queries over 400 keys (more than the memo's slots, so prices are
 * replaced), on a system with NCCL's protocol model and measured curves
 * (h100-80g-dgx: the chunk count is chosen per size), and a second
 * system's query never answered from the first's prices; a third system
 * whose scale-out is a fat tree, where the group's spacing changes the
 * price, never answered from another spacing's. */
static void test_collective_memo_is_exact(void **state)
{
    (void)state;
    comet_system h100, a100, fat;
    comet_error err;
    assert_int_equal(comet_preset_system("h100-80g-dgx", &h100, &err), COMET_OK);
    assert_int_equal(comet_preset_system("a100-80g-selene", &a100, &err), COMET_OK);
    fat = h100;
    fat.dims[1].size = 16;
    fat.dims[1].topology = COMET_TOPO_FAT_TREE;
    fat.dims[1].protocols = COMET_PROTOCOLS_NONE;
    fat.dims[1].bus.n_curves = 0;
    fat.dims[1].shape.radix = 32; /* 16-NPU leaves at 1:1: whole nodes, two a leaf */
    fat.dims[1].shape.routing = COMET_ROUTE_ECMP;
    static coll_memo memo;
    coll_memo_init(&memo);
    uint64_t x = 777;
    enum { KEYS = 400 };
    static int64_t span[KEYS][COMET_MAX_DIMS], spacing[KEYS][COMET_MAX_DIMS];
    static comet_collective c[KEYS];
    static double bytes[KEYS];
    for (int k = 0; k < KEYS; k++) {
        for (int d = 0; d < COMET_MAX_DIMS; d++)
            span[k][d] = d < h100.n_dims ? (int64_t)1 << (next_random(&x) % 4) : 1;
        for (int d = 0; d < COMET_MAX_DIMS; d++)
            spacing[k][d] = (int64_t)1 << (next_random(&x) % 3);
        c[k] = (comet_collective)(1 + next_random(&x) % (COMET_COLL_COUNT - 1));
        bytes[k] = pow(2.0, (double)(next_random(&x) % 34));
    }
    int held = 0;
    for (int q = 0; q < 3000; q++) {
        int k = (int)(next_random(&x) % KEYS);
        const comet_system *sys = q % 7 == 0 ? &a100 : q % 5 == 0 ? &fat : &h100;
        double want = comet_collective_time_placed(sys, span[k], spacing[k], c[k], bytes[k], 0.0);
        double got = coll_memo_time(&memo, sys, span[k], spacing[k], c[k], bytes[k]);
        assert_memory_equal(&want, &got, sizeof want);
        held += coll_memo_time(&memo, sys, span[k], spacing[k], c[k], bytes[k]) == want;
    }
    assert_int_equal(held, 3000);
    double want = comet_collective_time(&h100, span[0], c[0], bytes[0]);
    double got = coll_memo_time(NULL, &h100, span[0], NULL, c[0], bytes[0]);
    assert_memory_equal(&want, &got, sizeof want);
    /* on the fat tree a DP-like group of 8 nodes whose members sit 2
     * apart spans twice the leaves: it prices higher than side by side
     * (with 24-port leaves, 12 NPUs, a leaf's busiest ring edges are 12
     * either way: the leaves split the nodes) */
    int64_t dp8[COMET_MAX_DIMS] = {1, 8, 1, 1, 1, 1, 1, 1}, apart[COMET_MAX_DIMS] = {1, 2, 1, 1,
                                                                                    1, 1, 1, 1};
    assert_true(comet_collective_time_placed(&fat, dp8, apart, COMET_COLL_ALL_REDUCE, 1e9, 0.0) >
                comet_collective_time(&fat, dp8, COMET_COLL_ALL_REDUCE, 1e9));
}

static void gpt3_h100(comet_model *m, comet_system *sys)
{
    comet_error err;
    assert_int_equal(comet_preset_model("gpt3-175b", m, &err), COMET_OK);
    assert_int_equal(comet_preset_system("h100-80g-dgx", sys, &err), COMET_OK);
}

static comet_strategy zero3(int64_t dp)
{
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.dp = dp;
    s.microbatch = 1;
    s.global_batch = 4 * dp;
    s.zero_stage = 3;
    s.flash_attention = true;
    s.recompute = COMET_RECOMPUTE_FULL;
    return s;
}

/* DeepSpeed-sized messages (5e7 parameters: ~37 per GPT-3 block) pay
 * the all-gather's latency per step, (n - 1) steps over n ranks: the
 * exposed DP time grows with the ranks, and at 512 ranks the step is
 * slower than with one message per layer and slower than ideal. */
static void test_fsdp_small_messages_grow_with_ranks(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    gpt3_h100(&m, &sys);
    comet_error err;
    double last = 0.0;
    comet_result r;
    for (int64_t dp = 64; dp <= 512; dp *= 2) {
        comet_strategy s = zero3(dp);
        s.gather_bucket = 50000000;
        s.reduce_bucket = 500000000;
        assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
        double per_micro = r.dp_exposed / (double)r.microbatches;
        printf("  gpt3-175b zero 3 fsdp, 5e7-parameter gathers, dp %4lld: DP exposed %.3f s per "
               "microbatch, step %.3f s\n", (long long)dp, per_micro, r.step_time);
        assert_true(per_micro > last);
        last = per_micro;
    }
    comet_strategy one = zero3(512), ideal = zero3(512);
    ideal.framework = COMET_FRAMEWORK_IDEAL;
    comet_result r1, ri;
    assert_int_equal(comet_estimate(&m, &sys, &one, &r1, &err), COMET_OK);
    assert_int_equal(comet_estimate(&m, &sys, &ideal, &ri, &err), COMET_OK);
    assert_true(r.step_time > r1.step_time);
    assert_true(r1.step_time > ri.step_time);
}

/* The h100 preset's compute keys as they were before its kernels were
 * measured (read off h100-kernels.md's ranges): a flat GEMM curve, two
 * attention points (the first given at head dim 128 and the same seq x
 * head_dim, so the curve reads as it did when points of any head dim
 * were interpolated together), the memory kinds. */
static void h100_as_first_derived(comet_system *sys)
{
    comet_compute *c = &sys->compute;
    c->n_gemm_eff = 1;
    c->gemm_eff[0] = (comet_eff_point){1e12, 0.750};
    c->gemm_k_overhead = 247.0;
    c->fp8_gemm_efficiency = 0.0;
    c->n_attn_eff = 2;
    c->attn_eff[0] = (comet_attn_point){1024, 128, 0.1416, 0.0758, 0.0, 0.0};
    c->attn_eff[1] = (comet_attn_point){8192, 128, 0.6016, 0.5157, 0.0, 0.0};
    const double kinds[COMET_MEMK_COUNT] = {0.866, 0.463, 0.851, 0.463, 0.851, 0.463, 0.627};
    memcpy(c->mem_efficiency, kinds, sizeof kinds);
    sys->hbm.efficiency = 0.866;
}

/* Framework ideal is the earlier model: the value main gave for this
 * step before frameworks (17.96548012 s, on the h100 preset as it was
 * then: its first compute keys, no launch or host-issue terms, the
 * network priced by its closed forms), and the system's contention share
 * changes nothing under it. Megatron and ideal agree where nothing
 * overlaps. */
static void test_ideal_is_the_earlier_model(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    gpt3_h100(&m, &sys);
    h100_as_first_derived(&sys);
    sys.compute.kernel_launch = sys.compute.kernel_issue = 0.0;
    for (int d = 0; d < sys.n_dims; d++) {
        sys.dims[d].protocols = COMET_PROTOCOLS_NONE;
        memset(&sys.dims[d].bus, 0, sizeof sys.dims[d].bus);
    }
    sys.dims[0].latency = 2e-6; /* the placeholders then */
    sys.dims[1].latency = 5e-6;
    comet_error err;
    comet_strategy s = zero3(512);
    s.framework = COMET_FRAMEWORK_IDEAL;
    comet_result a, b;
    assert_int_equal(comet_estimate(&m, &sys, &s, &a, &err), COMET_OK);
    assert_close(a.step_time, 17.96548012, 1e-9);
    sys.compute.overlap_slowdown = 0.0;
    assert_int_equal(comet_estimate(&m, &sys, &s, &b, &err), COMET_OK);
    assert_memory_equal(&a, &b, sizeof a);
    /* zero 1 without overlap: megatron's model is ideal's */
    s.zero_stage = 1;
    s.overlap_dp = false;
    sys.compute.overlap_slowdown = 0.18;
    assert_int_equal(comet_estimate(&m, &sys, &s, &a, &err), COMET_OK);
    s.framework = COMET_FRAMEWORK_MEGATRON;
    assert_int_equal(comet_estimate(&m, &sys, &s, &b, &err), COMET_OK);
    assert_memory_equal(&a, &b, sizeof a);
    /* with overlap, megatron gathers the updated weights behind the next
     * forward (overlap_param_gather) where ideal exposes the gather: less
     * DP exposed, never more than the gather saves */
    s.overlap_dp = true;
    assert_int_equal(comet_estimate(&m, &sys, &s, &b, &err), COMET_OK);
    s.framework = COMET_FRAMEWORK_IDEAL;
    assert_int_equal(comet_estimate(&m, &sys, &s, &a, &err), COMET_OK);
    assert_true(b.dp_exposed < a.dp_exposed);
    assert_true(b.step_time < a.step_time);
}

/* Contention: with share f the step grows by f times the hidden
 * communication. ZeRO 0 (one all-reduce behind the last microbatch's
 * backward: hidden min(C_AR, t_bwd)) and overlapped TP (hidden: the TP
 * time less its exposed part), pp = 1 so no bubble. */
static void test_contention_share_is_exact(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    gpt3_h100(&m, &sys);
    comet_error err;
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = 8;
    s.dp = 16;
    s.microbatch = 1;
    s.global_batch = 64;
    s.sp = true;
    s.recompute = COMET_RECOMPUTE_FULL;
    s.flash_attention = true;
    s.overlap_tp = true;
    comet_result r0, r1;
    sys.compute.overlap_slowdown = 0.0;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r0, &err), COMET_OK);
    const double f = 0.25;
    sys.compute.overlap_slowdown = f;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r1, &err), COMET_OK);
    double micro = (double)r0.microbatches;
    double dp_hidden = fmin(r0.dp_comm_time, r0.backward / micro);
    double tp_hidden = r0.tp_comm_time - r0.tp_exposed;
    assert_true(dp_hidden > 0.0 && tp_hidden > 0.0);
    assert_close(r1.dp_exposed - r0.dp_exposed, f * dp_hidden, 1e-9);
    assert_close(r1.tp_exposed - r0.tp_exposed, f * tp_hidden, 1e-9);
    assert_close(r1.step_time - r0.step_time, f * (dp_hidden + tp_hidden), 1e-9);
}

/* The simulator runs the per-layer gathers as tasks (gather i after layer
 * i-d-1, reduce-scatters after each backward layer, one stream) and the
 * contention from its own timeline: within 0.5 % of the estimate at
 * prefetch 0, 1, 2, with and without contention. */
static void test_fsdp_sim_agrees(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    gpt3_h100(&m, &sys);
    m.layers = 24;
    comet_error err;
    static comet_sim_step_result sim;
    for (int f = 0; f < 2; f++)
        for (int d = 0; d <= 2; d++) {
            sys.compute.overlap_slowdown = f ? 0.18 : 0.0;
            comet_strategy s = zero3(256);
            s.prefetch = d;
            comet_result r;
            assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_OK);
            assert_int_equal(comet_sim_step(&m, &sys, &s, NULL, &sim, &err), COMET_OK);
            double diff = (sim.step_time - r.step_time) / r.step_time;
            printf("  24-layer gpt3 dp 256 fsdp prefetch %d, share %.2f: simulated %.4f s, "
                   "estimate %.4f s (%+.3f%%)\n", d, sys.compute.overlap_slowdown,
                   sim.step_time, r.step_time, 100.0 * diff);
            assert_true(fabs(diff) < 0.005);
        }
}

/* fsdp holds prefetch + 1 layers' gathered weights and one layer's whole
 * gradient beside its shards; ideal holds the shards only. */
static void test_fsdp_memory(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    gpt3_h100(&m, &sys);
    comet_error err;
    comet_strategy s = zero3(512);
    comet_result f1, f2, id;
    assert_int_equal(comet_estimate(&m, &sys, &s, &f1, &err), COMET_OK);
    s.prefetch = 2;
    assert_int_equal(comet_estimate(&m, &sys, &s, &f2, &err), COMET_OK);
    s.framework = COMET_FRAMEWORK_IDEAL;
    assert_int_equal(comet_estimate(&m, &sys, &s, &id, &err), COMET_OK);
    /* the largest layer of GPT-3 at tp 1: a block, 12 h^2 + 13 h */
    double h = 12288.0, block = 12.0 * h * h + 13.0 * h;
    assert_close(f2.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS] -
                     f1.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], 2.0 * block, 1e-3);
    assert_close(f1.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS] -
                     id.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS], 2.0 * 2.0 * block, 1e-3);
    assert_close(f1.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS] -
                     id.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS], 2.0 * block, 1e-3);
}

/* One-line errors naming the key and its position. */
static void expect_read_error(const char *text, const char *expected)
{
    comet_job *job = malloc(sizeof *job);
    assert_non_null(job);
    comet_job_init(job);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_config_read_text(text, strlen(text), "f.yaml", job, &err), COMET_EINPUT);
    char line[600];
    assert_string_equal(comet_error_format(&err, line, sizeof line), expected);
    free(job);
}

static void test_framework_errors(void **state)
{
    (void)state;
    expect_read_error("strategy:\n  framework: deepspeed\n",
                      "f.yaml:2:14: strategy.framework: unknown value \"deepspeed\" (expected one "
                      "of auto, megatron, fsdp, ideal)");
    expect_read_error("strategy:\n  zero3: {prefetch: 65}\n",
                      "f.yaml:2:21: strategy.zero3.prefetch: expected an integer from 0 to 64, "
                      "got \"65\"");
    expect_read_error("strategy:\n  zero3: {gather_bucket: -1}\n",
                      "f.yaml:2:26: strategy.zero3.gather_bucket: expected a non-negative "
                      "integer, got \"-1\"");
    expect_read_error("system:\n  preset: h100-80g-dgx\n  compute: {overlap_slowdown: 1.5}\n",
                      "f.yaml:3:31: system.compute.overlap_slowdown: must be a share from 0 to 1, "
                      "got 1.5");
    expect_read_error("system:\n  preset: h100-80g-dgx\n  compute: {efficiency_spread: -0.1}\n",
                      "f.yaml:3:32: system.compute.efficiency_spread: expected a non-negative "
                      "number, got \"-0.1\"");
    expect_read_error("system:\n  preset: h100-80g-dgx\n  compute: {efficiency_spread: 2}\n",
                      "f.yaml:3:32: system.compute.efficiency_spread: must be a share from 0 to "
                      "1, got 2");
    comet_model m;
    comet_system sys;
    gpt3_h100(&m, &sys);
    comet_strategy s = zero3(64);
    s.framework = COMET_FRAMEWORK_MEGATRON;
    comet_result r;
    comet_error err;
    assert_int_equal(comet_estimate(&m, &sys, &s, &r, &err), COMET_EINPUT);
    char line[600];
    assert_string_equal(comet_error_format(&err, line, sizeof line),
                        "strategy.framework: megatron shards optimizer state and gradients (ZeRO 1 "
                        "and 2), not the weights: ZeRO 3 needs framework fsdp (or ideal)");
}

void suite_framework(test_tally *t)
{
    const struct CMUnitTest framework[] = {
        cmocka_unit_test(test_fsdp_by_hand_forward),
        cmocka_unit_test(test_fsdp_by_hand_backward),
        cmocka_unit_test(test_fsdp_steady_state),
        cmocka_unit_test(test_fsdp_closed_form_matches_stepping),
        cmocka_unit_test(test_fsdp_cache_is_exact),
        cmocka_unit_test(test_collective_memo_is_exact),
        cmocka_unit_test(test_fsdp_small_messages_grow_with_ranks),
        cmocka_unit_test(test_ideal_is_the_earlier_model),
        cmocka_unit_test(test_contention_share_is_exact),
        cmocka_unit_test(test_fsdp_sim_agrees),
        cmocka_unit_test(test_fsdp_memory),
        cmocka_unit_test(test_framework_errors),
    };
    RUN_GROUP(t, framework);
}
