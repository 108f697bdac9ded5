/* Strategy search: the best point equals a brute-force minimum over the
 * same space computed with comet_estimate directly; every ranked point is
 * comet_estimate's result for its strategy, to the bit; rankings are sorted
 * and identical at 1, 2 and 3 threads and across merged shards; the
 * counts add up. */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/search.h"
#include "tests.h"

/* A small GPT on 8 NPUs of two 4-wide dimensions, so the whole space can
 * be walked by hand. */
static void small_job(comet_model *m, comet_system *sys)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "tiny");
    m->kind = COMET_MODEL_TRANSFORMER;
    m->dtype = COMET_DTYPE_BF16;
    m->layers = 8;
    m->hidden = 1024;
    m->heads = 16;
    m->kv_heads = 16;
    m->ffn = 4096;
    m->seq = 1024;
    m->vocab = 32000;
    m->biases = m->dropout = true;
    memset(sys, 0, sizeof *sys);
    snprintf(sys->name, sizeof sys->name, "two-by-four");
    sys->compute.matrix_flops[COMET_DTYPE_BF16] = 300e12;
    sys->compute.vector_flops[COMET_DTYPE_BF16] = 60e12;
    sys->compute.vector_efficiency = 1.0;
    sys->compute.n_gemm_eff = 2;
    sys->compute.gemm_eff[0] = (comet_eff_point){1e9, 0.4};
    sys->compute.gemm_eff[1] = (comet_eff_point){1e12, 0.8};
    sys->hbm.present = true;
    sys->hbm.capacity = 2.0 * 1073741824.0; /* tight, so memory prunes */
    sys->hbm.bandwidth = 2e12;
    sys->hbm.efficiency = 0.8;
    sys->n_dims = 2;
    for (int d = 0; d < 2; d++) {
        snprintf(sys->dims[d].name, sizeof sys->dims[d].name, "d%d", d);
        sys->dims[d].size = 4;
        sys->dims[d].topology = COMET_TOPO_SWITCH;
        sys->dims[d].algorithm = COMET_ALGO_RING;
        sys->dims[d].bandwidth = d == 0 ? 200e9 : 25e9;
        sys->dims[d].latency = 2e-6;
        sys->dims[d].efficiency = 0.8;
    }
    sys->collective_chunks = 2;
    sys->cost_per_npu = 1000;
}

void test_search_request(comet_search_request *req, const comet_model *m,
                         const comet_system *sys, int64_t npus, int64_t gbs, int k)
{
    memset(req, 0, sizeof *req);
    req->model = m;
    req->system = sys;
    comet_search_space_defaults(&req->space);
    req->space.npus = npus;
    req->space.global_batch = gbs;
    req->objective = COMET_OBJECTIVE_TIME;
    req->top_k = k;
    req->shards = 1;
}

static void request(comet_search_request *req, const comet_model *m, const comet_system *sys,
                    int k)
{
    test_search_request(req, m, sys, 16, 32, k);
}

/* An independent walk over the search's space with the public estimator,
 * on 16 NPUs: tp, cp (up to max_cp) and pp powers of two, ep up to max_ep
 * dividing the rest, the six orders of tp (0), pp (1) and dp (2) (with
 * ep > 1 each also with the expert ranks right after dp; cp and ep take
 * their other places by comet_strategy_order_complete), every microbatch,
 * interleave, sp, fused attention, ring or Ulysses, recompute, ZeRO stage
 * and, on pipelines of one chunk per stage, 1F1B or ZB-H1. */
static double brute_force(const comet_model *m, const comet_system *sys, int64_t gbs,
                          int64_t max_cp, int64_t max_ep)
{
    static const comet_group orders[6][3] = {
        {0, 2, 1}, {0, 1, 2}, {2, 0, 1}, {2, 1, 0}, {1, 0, 2}, {1, 2, 0}};
    double best = INFINITY;
    for (int64_t tp = 1; tp <= 16; tp *= 2)
    for (int64_t cp = 1; cp <= max_cp && tp * cp <= 16; cp *= 2)
    for (int64_t pp = 1; tp * cp * pp <= 16; pp *= 2)
    for (int64_t ep = 1; ep <= max_ep && tp * cp * pp * ep <= 16; ep *= 2)
    for (int o = 0; o < (ep > 1 ? 12 : 6); o++)
    for (int64_t mb = 1; mb <= gbs; mb++)
    for (int64_t v = 1; v <= 8; v++)
    for (int x = 0; x < (cp > 1 ? 8 : 4); x++)     /* sp, flash, Ulysses */
    for (int rc = 0; rc < 3; rc++)
    for (int z = 0; z < 8; z++) {                  /* ZeRO 0-3, under 1F1B then ZB-H1 */
        if (z >= 4 && (v > 1 || pp == 1))
            continue;
        comet_strategy s;
        comet_strategy_defaults(&s);
        s.schedule = z >= 4 ? COMET_SCHEDULE_ZB_H1 : COMET_SCHEDULE_1F1B;
        s.tp = tp;
        s.cp = cp;
        s.pp = pp;
        s.dp = 16 / (tp * cp * pp);
        s.ep = ep;
        s.global_batch = gbs;
        s.microbatch = mb;
        s.interleave = v;
        s.sp = x & 1;
        s.flash_attention = (x >> 1) & 1;
        s.cp_comm = (x >> 2) ? COMET_CP_ULYSSES : COMET_CP_RING;
        s.recompute = (comet_recompute)rc;
        s.zero_stage = z % 4;
        s.overlap_dp = s.overlap_tp = true;
        comet_group given[4];
        int n = 0;
        for (int i = 0; i < 3; i++) {
            given[n++] = orders[o % 6][i];
            if (o >= 6 && given[n - 1] == COMET_GROUP_DP)
                given[n++] = COMET_GROUP_EP;
        }
        comet_strategy_order_complete(given, n, s.order);
        if (v > 1 && m->layers % (pp * v))
            continue;
        comet_result r;
        comet_error err;
        if (comet_estimate(m, sys, &s, &r, &err) || !r.feasible)
            continue;
        if (r.step_time < best)
            best = r.step_time;
    }
    return best;
}

static void test_best_matches_brute_force(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    small_job(&m, &sys);
    comet_search_request req;
    request(&req, &m, &sys, 50);
    comet_ranked top[50];
    int n = 0;
    comet_search_stats st;
    comet_error err;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_OK);
    assert_int_equal(n, 50);
    assert_true(st.no_fit_hbm > 0);
    assert_close(top[0].score, brute_force(&m, &sys, 32, 1, 1), 1e-12);
    for (int i = 1; i < n; i++)
        assert_true(top[i - 1].score < top[i].score ||
                    (top[i - 1].score == top[i].score && top[i - 1].index < top[i].index));
    /* each entry is what comet_estimate says about its strategy */
    comet_result again;
    assert_int_equal(comet_estimate(&m, &sys, &top[7].strategy, &again, &err), COMET_OK);
    assert_close(again.step_time, top[7].result.step_time, 1e-15);
    /* the counts add up */
    assert_int_equal(st.enumerated, st.evaluated + st.dominated);
    assert_int_equal(st.evaluated, st.feasible + st.no_fit_hbm + st.no_fit_expansion);
    assert_int_equal(st.invalid, st.invalid_tp + st.invalid_batch + st.invalid_layout);
}

/* What a search thread keeps from point to point (its layer prices per
 * recomputation, ZeRO 3 passes and collective prices: estimate.h) never
 * changes a result: every ranked point of a search over every knob,
 * dominated ones included, on a preset with NCCL's protocol model, an
 * expansion tier (offloads) and overlap contention, is what
 * comet_estimate gives its strategy alone, to the bit. */
static void test_search_results_are_the_estimates(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys, plain;
    small_job(&m, &plain);
    comet_error err;
    assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
    sys.hbm.capacity = plain.hbm.capacity;
    memset(&sys.expansion, 0, sizeof sys.expansion);
    sys.expansion.present = true;
    sys.expansion.capacity = 64e9;
    sys.expansion.bandwidth = 50e9;
    sys.expansion.efficiency = 1.0;
    comet_search_request req;
    test_search_request(&req, &m, &sys, 16, 16, COMET_SEARCH_MAX_TOP);
    req.space.keep_dominated = true;
    static comet_ranked top[COMET_SEARCH_MAX_TOP];
    int n = 0;
    comet_search_stats st;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_OK);
    assert_true(n > 100);
    int zero3 = 0, offloaded = 0;
    for (int i = 0; i < n; i++) {
        comet_result r;
        assert_int_equal(comet_estimate(&m, &sys, &top[i].strategy, &r, &err), COMET_OK);
        const comet_result *got = &top[i].result;
        const double want[] = {r.step_time, r.forward, r.backward, r.recompute, r.bubble,
                               r.tp_exposed, r.dp_exposed, r.dp_comm_time, r.optimizer,
                               r.offload_exposed, r.mem_total[COMET_TIER_HBM],
                               r.mem_total[COMET_TIER_EXPANSION]};
        const double have[] = {got->step_time, got->forward, got->backward, got->recompute,
                               got->bubble, got->tp_exposed, got->dp_exposed, got->dp_comm_time,
                               got->optimizer, got->offload_exposed,
                               got->mem_total[COMET_TIER_HBM],
                               got->mem_total[COMET_TIER_EXPANSION]};
        assert_memory_equal(want, have, sizeof want);
        zero3 += top[i].strategy.zero_stage == 3;
        offloaded += top[i].strategy.offload_weights || top[i].strategy.offload_optimizer;
    }
    assert_true(zero3 > 0);
    assert_true(offloaded > 0);
}

/* With context and expert parallelism in the space: a mixture-of-experts
 * model on 16 NPUs, cp up to 4 (max_cp), every ep dividing dp and the 4
 * experts, each placement order with the expert-parallel ranks inside or
 * outside the rest of dp, ring and Ulysses. The best point equals a walk
 * over the same space with the public estimator. */
static void test_search_explores_cp_and_ep(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    small_job(&m, &sys);
    m.moe = (comet_moe){.experts = 4, .top_k = 2, .ffn = 1024, .every = 1, .imbalance = 1.0};
    comet_search_request req;
    request(&req, &m, &sys, 400);
    req.space.global_batch = 4;
    req.space.max_cp = 4;
    static comet_ranked top[400];
    int n = 0;
    comet_search_stats st;
    comet_error err;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_OK);
    assert_close(top[0].score, brute_force(&m, &sys, 4, 4, 4), 1e-12);
    bool cp = false, ulysses = false, ep = false;
    for (int i = 0; i < n; i++) {
        cp |= top[i].strategy.cp > 1;
        ulysses |= top[i].strategy.cp_comm == COMET_CP_ULYSSES;
        ep |= top[i].strategy.ep > 1;
    }
    assert_true(cp && ulysses && ep);
    /* by default cp stops where a rank would keep fewer than 4096 tokens:
     * none for a 1024-token sequence */
    req.space.max_cp = 0;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_OK);
    for (int i = 0; i < n; i++)
        assert_int_equal(top[i].strategy.cp, 1);
}

/* The schedule is searched: on a pipeline of one chunk per stage ZB-H1
 * and 1F1B, and DualPipe where it runs (never pruned: each of its points
 * is priced, and scores as its own estimate does); with nothing in the
 * expansion tier 1F1B is dominated wherever
 * ZB-H1 fits (its bubble (p-1)(F+B-W) is shorter, the rest alike), so the
 * pruned ranking holds no such 1F1B point; kept, each 1F1B point scores
 * no better than its ZB-H1 twin and the best is unchanged. */
static void test_search_schedule(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    small_job(&m, &sys);
    comet_search_request req;
    request(&req, &m, &sys, COMET_SEARCH_MAX_TOP);
    static comet_ranked pruned[COMET_SEARCH_MAX_TOP], kept[COMET_SEARCH_MAX_TOP];
    int n_pruned = 0, n_kept = 0, zb = 0, one = 0, dual = 0, twins = 0;
    comet_search_stats st;
    comet_error err;
    assert_int_equal(comet_search(&req, pruned, &n_pruned, &st, &err), COMET_OK);
    for (int i = 0; i < n_pruned; i++) {
        const comet_strategy *s = &pruned[i].strategy;
        if (s->pp == 1 || s->interleave > 1)
            continue;
        if (s->schedule == COMET_SCHEDULE_ZB_H1) {
            zb++;
            continue;
        }
        if (s->schedule == COMET_SCHEDULE_DUALPIPE) {
            /* where it runs, and priced as the estimate prices it */
            assert_true(comet_strategy_dualpipe_runs(s));
            comet_result r;
            comet_strategy same = *s;
            assert_int_equal(comet_estimate(&m, &sys, &same, &r, &err), COMET_OK);
            assert_close(r.step_time, pruned[i].result.step_time, 1e-12);
            dual++;
            continue;
        }
        /* 1F1B ranked: its ZB-H1 twin holds more than HBM has */
        comet_strategy twin = *s;
        twin.schedule = COMET_SCHEDULE_ZB_H1;
        comet_result r;
        assert_int_equal(comet_estimate(&m, &sys, &twin, &r, &err), COMET_OK);
        assert_false(r.feasible && !(r.mem_total[COMET_TIER_EXPANSION] > 0.0));
        one++;
    }
    printf("  %d ZB-H1, %d 1F1B and %d DualPipe pipelines of one chunk per stage ranked\n", zb,
           one, dual);
    assert_true(zb > 0);
    assert_true(dual > 0);
    req.space.keep_dominated = true;
    assert_int_equal(comet_search(&req, kept, &n_kept, &st, &err), COMET_OK);
    assert_close(kept[0].score, pruned[0].score, 0.0);
    for (int i = 0; i < n_kept; i++) {
        if (kept[i].strategy.schedule != COMET_SCHEDULE_1F1B || kept[i].strategy.pp == 1 ||
            kept[i].strategy.interleave > 1)
            continue;
        comet_strategy twin = kept[i].strategy;
        twin.schedule = COMET_SCHEDULE_ZB_H1;
        comet_result r;
        assert_int_equal(comet_estimate(&m, &sys, &twin, &r, &err), COMET_OK);
        if (!r.feasible)
            continue;
        assert_true(r.step_time < kept[i].result.step_time);
        assert_true(r.bubble < kept[i].result.bubble);
        twins++;
    }
    assert_true(twins > 0);
}

/* ---- progress ----------------------------------------------------------------- */

typedef struct progress_log {
    int calls;
    int stop_at;               /* ask to stop on this call (0: never) */
    bool overlapped;           /* a call began while another was under way */
    bool monotonic;            /* done and evaluated never went down, total never changed */
    _Atomic int inside;
    comet_search_progress first, last;
} progress_log;

static bool log_progress(void *ctx, const comet_search_progress *p)
{
    progress_log *log = ctx;
    if (atomic_fetch_add(&log->inside, 1) != 0)
        log->overlapped = true;
    if (log->calls == 0) {
        log->first = *p;
        log->monotonic = true;
    } else {
        log->monotonic = log->monotonic && p->done >= log->last.done &&
                         p->evaluated >= log->last.evaluated && p->total == log->last.total;
    }
    log->last = *p;
    log->calls++;
    atomic_fetch_sub(&log->inside, 1);
    return log->stop_at && log->calls >= log->stop_at;
}

/* The space's points counted by hand: every (tp, pp, placement order),
 * microbatch, interleave, SP and fused attention, times what one workload
 * stands for (3 recomputes, 4 ZeRO stages and 2 DP overlaps when dp > 1,
 * 2 TP overlaps when tp > 1, 2 schedules with a pipeline of one chunk per
 * stage). */
static uint64_t points_by_hand(const comet_model *m, int64_t npus, int64_t gbs)
{
    uint64_t total = 0;
    int64_t depth = comet_model_depth(m);
    for (int64_t tp = 1; tp <= npus; tp++)
        for (int64_t pp = 1; tp * pp <= npus; pp++) {
            if (npus % (tp * pp))
                continue;
            int64_t dp = npus / (tp * pp);
            uint64_t per_workload = 3 * (dp > 1 ? 8 : 1) * (tp > 1 ? 2 : 1);
            uint64_t points = 0;
            for (int64_t mb = 1; mb <= gbs / dp; mb++)
                for (int64_t v = 1; v * pp <= depth; v++)
                    if ((gbs / dp) % mb == 0 && (v == 1 || (pp > 1 && depth % (pp * v) == 0))) {
                        /* two schedules (1F1B, ZB-H1) with a pipeline of one
                         * chunk, three (DualPipe) where pp is even and the
                         * microbatches even and at least 2 pp */
                        int64_t micro = gbs / dp / mb;
                        bool dual = pp % 2 == 0 && micro % 2 == 0 && micro >= 2 * pp;
                        uint64_t n_sched = pp > 1 && v == 1 ? (dual ? 3 : 2) : 1;
                        points += (tp > 1 ? 2 : 1) * 2 * per_workload * n_sched;
                    }
            total += 6 * points;
        }
    return total;
}

/* The progress callback: every 100 evaluations at most, calls never
 * overlapping (also on 3 threads), done and evaluated growing to the
 * space's points and the search's own count at the last call; the ranking
 * is the one a search without it gives; true from the callback stops the
 * search with COMET_ECANCELED. */
static void test_search_progress(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    small_job(&m, &sys);
    comet_search_request req;
    request(&req, &m, &sys, 10);
    comet_ranked plain[10], top[10];
    int n_plain = 0, n = 0;
    comet_search_stats plain_stats, st;
    comet_error err;
    assert_int_equal(comet_search(&req, plain, &n_plain, &plain_stats, &err), COMET_OK);

    uint64_t total = points_by_hand(&m, 16, 32);
    for (int threads = 1; threads <= 3; threads += 2) {
        progress_log log = {0};
        req.progress = log_progress;
        req.progress_ctx = &log;
        req.progress_every = 100;
        assert_int_equal(comet_search_threads(&req, threads, top, &n, &st, &err), COMET_OK);
        assert_int_equal(n, n_plain);
        for (int i = 0; i < n; i++)
            assert_int_equal(top[i].index, plain[i].index);
        assert_int_equal(st.evaluated, plain_stats.evaluated);
        assert_false(log.overlapped);
        assert_true(log.monotonic);
        assert_true(log.calls >= 3);
        assert_true((uint64_t)log.calls <= st.evaluated / 100 + 1);
        assert_true(log.first.done < total);
        assert_true(log.first.evaluated >= 100);
        assert_int_equal(log.last.total, total);
        assert_int_equal(log.last.done, total);
        assert_int_equal(log.last.evaluated, st.evaluated);
        assert_true(total >= st.enumerated);
    }

    /* stopped on the second call: no ranking, fewer points priced */
    progress_log stop = {.stop_at = 2};
    req.progress_ctx = &stop;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_ECANCELED);
    assert_int_equal(n, 0);
    assert_int_equal(stop.calls, 2);
    assert_true(st.evaluated < plain_stats.evaluated);
}

static void test_threads_and_shards_agree(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    small_job(&m, &sys);
    comet_search_request req;
    request(&req, &m, &sys, 40);
    req.space.keep_dominated = true;
    comet_ranked one[40], many[40], merged[40], part[40];
    int n_one, n_many, n_merged = 0, n_part;
    comet_search_stats s_one, s_many, s_merged, s_part;
    comet_error err;
    assert_int_equal(comet_search(&req, one, &n_one, &s_one, &err), COMET_OK);
    for (int threads = 2; threads <= 3; threads++) {
        assert_int_equal(comet_search_threads(&req, threads, many, &n_many, &s_many, &err),
                         COMET_OK);
        assert_int_equal(n_many, n_one);
        assert_memory_equal(many, one, sizeof one[0] * (size_t)n_one);
        assert_memory_equal(&s_many, &s_one, sizeof s_one);
    }
    /* four shards run one by one (as four processes would) and merged */
    memset(&s_merged, 0, sizeof s_merged);
    req.shards = 4;
    for (int shard = 0; shard < 4; shard++) {
        req.shard = shard;
        assert_int_equal(comet_search(&req, part, &n_part, &s_part, &err), COMET_OK);
        comet_search_merge(merged, &n_merged, 40, part, n_part);
        comet_search_stats_add(&s_merged, &s_part);
    }
    assert_int_equal(n_merged, n_one);
    assert_memory_equal(merged, one, sizeof one[0] * (size_t)n_one);
    assert_memory_equal(&s_merged, &s_one, sizeof s_one);
    /* keeping dominated points never changes the best */
    comet_ranked pruned[1];
    int n_pruned;
    req.shards = 1;
    req.shard = 0;
    req.top_k = 1;
    req.space.keep_dominated = false;
    assert_int_equal(comet_search(&req, pruned, &n_pruned, &s_part, &err), COMET_OK);
    assert_close(pruned[0].score, one[0].score, 0.0);
    assert_true(s_part.dominated > 0);
}

static void test_bad_requests(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    small_job(&m, &sys);
    comet_search_request req;
    comet_ranked top[1];
    int n;
    comet_search_stats st;
    comet_error err;
    request(&req, &m, &sys, 1);
    req.top_k = 0;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_EINPUT);
    assert_string_equal(err.key, "--top");
    request(&req, &m, &sys, 1);
    req.space.npus = 0;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_EINPUT);
    /* 16 NPUs on a 4 x 4 cluster: 5 NPUs cannot be laid out at all */
    request(&req, &m, &sys, 1);
    req.space.npus = 5;
    req.space.global_batch = 5;
    assert_int_equal(comet_search(&req, top, &n, &st, &err), COMET_OK);
    assert_int_equal(n, 0);
    assert_true(st.invalid > 0);
    assert_int_equal(st.enumerated, 0);
}

void suite_search(test_tally *t)
{
    const struct CMUnitTest search[] = {
        cmocka_unit_test(test_best_matches_brute_force),
        cmocka_unit_test(test_search_results_are_the_estimates),
        cmocka_unit_test(test_search_explores_cp_and_ep),
        cmocka_unit_test(test_search_schedule),
        cmocka_unit_test(test_threads_and_shards_agree),
        cmocka_unit_test(test_search_progress),
        cmocka_unit_test(test_bad_requests),
    };
    RUN_GROUP(t, search);
}
