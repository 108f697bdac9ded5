/* Strategy search over one cluster: enumerates every valid combination of
 * TP x CP x PP x DP factorization, expert parallelism within DP (mixture-
 * of-experts models), placement of the groups on the network dimensions,
 * microbatch, interleaving, sequence parallelism, fused attention, the
 * context-parallel exchange, recomputation, ZeRO stage, offloads, overlap
 * and the pipeline schedule (1F1B or ZB-H1), prices each with the
 * analytical model and keeps the best k. The framework is the base
 * strategy's: auto prices ZeRO 3 as fsdp (per-layer gathers), megatron
 * leaves ZeRO 3 out.
 *
 * Work is split into "units" (global batch, tp, cp, pp, ep, placement
 * order); a
 * unit's placement is resolved and checked once, its workload built once
 * per (microbatch, interleave, SP, fused attention), and the cheap knobs
 * are varied innermost. Every point has a fixed index, (unit << 32) +
 * position inside the unit, whether it is evaluated or pruned, so rankings
 * (ties broken by index) do not depend on how the units are sharded over
 * threads or processes. Memory is checked before time; overlap off is
 * never faster than overlap on in the model, nor 1F1B than ZB-H1 when
 * ZB-H1 fits in HBM, so those are pruned as dominated unless asked for.
 * Each thread keeps an estimate_cache (the collectives' prices and ZeRO
 * 3's passes, by their exact inputs), and a workload's layers are priced
 * once per recomputation choice, when a point that fits first needs them:
 * points that differ only in cheap knobs share that work. */
#include "comet/search.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "claim.h"

#include "../estimate/estimate.h"
#include "../workload/workload.h"

#define MAX_DIVISORS 512

void comet_search_space_defaults(comet_search_space *sp)
{
    memset(sp, 0, sizeof *sp);
    comet_strategy_defaults(&sp->base);
    sp->vary_flash = true;
    sp->vary_offload = true;
}

/* Divisors of n in increasing order, at most cap of them. */
static int divisors(int64_t n, int64_t *out, int cap)
{
    int count = 0;
    int64_t high[MAX_DIVISORS];
    int n_high = 0;
    for (int64_t d = 1; d * d <= n && count < cap; d++) {
        if (n % d)
            continue;
        out[count++] = d;
        if (d != n / d && n_high < MAX_DIVISORS)
            high[n_high++] = n / d;
    }
    while (n_high > 0 && count < cap)
        out[count++] = high[--n_high];
    return count;
}

/* ---- the top-k list: a max-heap on (score, index), worst at the root ---- */

static bool better(const comet_ranked *a, const comet_ranked *b)
{
    return a->score < b->score || (a->score == b->score && a->index < b->index);
}

/* Both sifts move the entry along a hole instead of swapping: an entry is
 * a strategy and its result (about 1 kB), and a report keeps thousands. */
static void sift_down(comet_ranked *h, int n, int i)
{
    comet_ranked moving = h[i];
    for (;;) {
        int worst = i, l = 2 * i + 1, r = l + 1;
        const comet_ranked *w = &moving;
        if (l < n && better(w, &h[l]))
            w = &h[worst = l];
        if (r < n && better(w, &h[r]))
            worst = r;
        if (worst == i)
            break;
        h[i] = h[worst];
        i = worst;
    }
    h[i] = moving;
}

static void sift_up(comet_ranked *h, int i)
{
    comet_ranked moving = h[i];
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!better(&h[parent], &moving))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = moving;
}

typedef struct top_list {
    comet_ranked *heap;
    int n, k;
} top_list;

/* Would a point with this score and index enter the list? */
static bool admits(const top_list *t, double score, uint64_t index)
{
    if (t->n < t->k)
        return true;
    comet_ranked probe = {.score = score, .index = index};
    return better(&probe, &t->heap[0]);
}

static void offer(top_list *t, const comet_ranked *r)
{
    if (t->n < t->k) {
        t->heap[t->n] = *r;
        sift_up(t->heap, t->n++);
    } else if (better(r, &t->heap[0])) {
        t->heap[0] = *r;
        sift_down(t->heap, t->n, 0);
    }
}

static int rank_order(const void *a, const void *b)
{
    const comet_ranked *x = a, *y = b;
    return better(x, y) ? -1 : better(y, x) ? 1 : 0;
}

void comet_search_merge(comet_ranked *a, int *n_a, int k, const comet_ranked *b, int n_b)
{
    top_list t = {a, 0, k};
    int have = *n_a;
    for (int i = 0; i < have; i++) /* rebuild as a heap */
        offer(&t, &a[i]);
    for (int i = 0; i < n_b; i++)
        offer(&t, &b[i]);
    qsort(a, (size_t)t.n, sizeof a[0], rank_order);
    *n_a = t.n;
}

void comet_search_stats_add(comet_search_stats *into, const comet_search_stats *from)
{
    into->enumerated += from->enumerated;
    into->evaluated += from->evaluated;
    into->feasible += from->feasible;
    into->no_fit_hbm += from->no_fit_hbm;
    into->no_fit_expansion += from->no_fit_expansion;
    into->dominated += from->dominated;
    into->invalid += from->invalid;
    into->invalid_tp += from->invalid_tp;
    into->invalid_batch += from->invalid_batch;
    into->invalid_layout += from->invalid_layout;
    if (from->has_worst && (!into->has_worst || better(&into->worst, &from->worst))) {
        into->worst = from->worst;
        into->has_worst = true;
    }
}

static double score_of(comet_objective o, const comet_result *r)
{
    switch (o) {
    case COMET_OBJECTIVE_THROUGHPUT:
        return -r->tokens_per_s;
    case COMET_OBJECTIVE_COST:
        return r->cost > 0.0 ? -r->tokens_per_s / r->cost : -r->tokens_per_s;
    case COMET_OBJECTIVE_TIME:
    default:
        return r->step_time;
    }
}

/* ---- enumeration ---------------------------------------------------------- */

typedef struct search_run {
    const comet_search_request *req;
    top_list top;
    comet_search_stats *stats;
    uint64_t next_unit;     /* number of the next unit in the enumeration */
    uint64_t unit;          /* the unit being searched */
    uint64_t position;      /* next point's position inside the unit */
    uint64_t claimed;       /* with a shared counter: the next of this shard's units we own */
    uint64_t shard_units;   /* this shard's units seen so far */
    comet_error scratch;
    estimate_cache cache;   /* what points share (estimate.h) */
    /* progress (req->progress set): what the threads share, and this
     * thread's evaluations not yet added to it */
    struct comet_unit_claim *shared;
    uint64_t unreported;
    bool counting;          /* a pass that only counts the points (search_points) */
    uint64_t counted;
} search_run;

/* Is the unit ours? Units of this shard are numbered 0, 1, ... in
 * enumeration order; with a claim counter, each thread takes the next
 * unclaimed one when it reaches the one it holds. */
static bool owns_unit(search_run *run, uint64_t unit)
{
    const comet_search_request *req = run->req;
    if ((int64_t)(unit % (uint64_t)req->shards) != req->shard)
        return false;
    uint64_t mine = run->shard_units++;
    if (!req->claim)
        return true;
    if (mine != run->claimed)
        return false;
    run->claimed = atomic_fetch_add(&req->claim->next, 1);
    return true;
}

/* The statistics sort refused layouts three ways: the TP degree does not
 * suit the model, the batch does not split (global batch, microbatches,
 * interleaved chunks), or the groups do not fit the network (the rest). */
static uint64_t *invalid_kind(comet_search_stats *st, comet_strategy_refusal why)
{
    switch (why.fault) {
    case COMET_FAULT_TP_SPLIT:
        return &st->invalid_tp;
    case COMET_FAULT_BATCH_SPLIT:
    case COMET_FAULT_CHUNKS:
        return &st->invalid_batch;
    case COMET_FAULT_LIMIT:
        if (why.knob == COMET_KNOB_TP)
            return &st->invalid_tp;
        if (why.knob == COMET_KNOB_GLOBAL_BATCH || why.knob == COMET_KNOB_INTERLEAVE)
            return &st->invalid_batch;
        return &st->invalid_layout;
    default:
        return &st->invalid_layout;
    }
}

/* Resolve s; a refusal is counted in the statistics. */
static bool resolves(search_run *run, comet_strategy *s)
{
    comet_strategy_refusal why;
    if (!comet_strategy_resolve_why(run->req->model, run->req->system, s, NULL, &why,
                                    &run->scratch))
        return true;
    run->stats->invalid++;
    (*invalid_kind(run->stats, why))++;
    return false;
}

/* ---- progress --------------------------------------------------------------- */

#define DEFAULT_PROGRESS_EVERY 65536

static uint64_t progress_every(const comet_search_request *req)
{
    return req->progress_every ? req->progress_every : DEFAULT_PROGRESS_EVERY;
}

void search_shared_init(struct comet_unit_claim *shared, uint64_t total)
{
    atomic_init(&shared->next, 0);
    atomic_init(&shared->done, 0);
    atomic_init(&shared->evaluated, 0);
    atomic_init(&shared->stop, false);
    shared->total = total;
    shared->reported_done = shared->reported_evaluated = 0;
    pthread_mutex_init(&shared->report, NULL);
}

void search_shared_free(struct comet_unit_claim *shared)
{
    pthread_mutex_destroy(&shared->report);
}

/* One call of the callback, by whichever thread finds no call under way. */
static void call_progress(const comet_search_request *req, struct comet_unit_claim *shared,
                          uint64_t done, bool last)
{
    if (pthread_mutex_trylock(&shared->report) != 0)
        return; /* another thread is reporting: never two calls at once */
    uint64_t evaluated = atomic_load(&shared->evaluated);
    if (last || evaluated >= shared->reported_evaluated + progress_every(req)) {
        if (done > shared->total)
            done = shared->total;
        if (done < shared->reported_done)
            done = shared->reported_done;
        comet_search_progress p = {.done = done, .total = shared->total, .evaluated = evaluated};
        shared->reported_done = done;
        shared->reported_evaluated = evaluated;
        if (req->progress(req->progress_ctx, &p) && !last)
            atomic_store(&shared->stop, true);
    }
    pthread_mutex_unlock(&shared->report);
}

/* After progress_every evaluations of this thread: add them, and report. */
static void report_progress(search_run *run)
{
    atomic_fetch_add(&run->shared->evaluated, run->unreported);
    run->unreported = 0;
    call_progress(run->req, run->shared, atomic_load(&run->shared->done) + run->position, false);
}

void search_progress_end(const comet_search_request *req, struct comet_unit_claim *shared)
{
    if (!atomic_load(&shared->stop))
        call_progress(req, shared, shared->total, true);
}

static bool stopped(const search_run *run)
{
    return run->shared && atomic_load_explicit(&run->shared->stop, memory_order_relaxed);
}

/* Prices one point, counts it and offers it to the top list. Returns
 * whether it fits with nothing in the expansion tier. */
static bool evaluate_point(search_run *run, comet_strategy *s, const work_stage *w,
                           estimate_layers *layers, uint64_t index)
{
    const comet_search_request *req = run->req;
    comet_ranked r;
    run->stats->evaluated++;
    if (run->shared && ++run->unreported >= progress_every(req))
        report_progress(run);
    if (estimate_prepared(req->model, req->system, s, w, true, &run->cache, layers, &r.result,
                          &run->scratch))
        return false;
    if (!r.result.feasible) {
        if (r.result.infeasible == COMET_NO_FIT_HBM)
            run->stats->no_fit_hbm++;
        else
            run->stats->no_fit_expansion++;
        return false;
    }
    run->stats->feasible++;
    r.score = score_of(req->objective, &r.result);
    r.index = index;
    comet_search_stats *st = run->stats;
    if (!st->has_worst || better(&st->worst, &r)) {
        r.strategy = *s;
        st->worst = r;
        st->has_worst = true;
    }
    bool in_hbm = !(r.result.mem_total[COMET_TIER_EXPANSION] > 0.0);
    if (!admits(&run->top, r.score, index))
        return in_hbm;
    r.strategy = *s;
    offer(&run->top, &r);
    return in_hbm;
}

/* Whether gradients are reduced over more than one rank (dp x cp: context
 * parallel ranks hold the same weights too), so the ZeRO stage and DP
 * overlap are choices. */
static bool grad_ranks(const comet_strategy *s)
{
    return comet_strategy_grad_size(s, false) > 1;
}

/* The highest ZeRO stage a point may use: none without gradient ranks;
 * 2 under framework megatron (whose distributed optimizer does not shard
 * weights), else 3. The framework itself is the base strategy's: auto
 * gives ZeRO 3 the fsdp model and the others megatron's. */
static int max_zero(const comet_strategy *s)
{
    if (!grad_ranks(s))
        return 0;
    return s->framework == COMET_FRAMEWORK_MEGATRON ? 2 : 3;
}

/* Schedules a point may run: ZB-H1 and 1F1B when there is a pipeline of
 * one chunk per stage, and DualPipe too where it can run (an even pp, an
 * even count of at least 2 pp microbatches), else the one it has. The
 * workload's layout alone decides, so the numbering is the same in
 * every shard and thread. */
static int schedules_of(const comet_strategy *s)
{
    if (s->pp == 1 || s->interleave > 1)
        return 1;
    return comet_strategy_dualpipe_runs(s) ? 3 : 2;
}

static const comet_schedule searched_schedules[3] = {COMET_SCHEDULE_ZB_H1, COMET_SCHEDULE_1F1B,
                                                     COMET_SCHEDULE_DUALPIPE};

/* The offload choices tried when the system has an expansion tier: each
 * subset of optimizer state, weights, activations and gradients. */
enum { OFFLOAD_CHOICES = 16 };

/* The cheap knobs, innermost: offloads, then overlaps, then the
 * schedule. */
static void evaluate_knobs(search_run *run, comet_strategy *s, const work_stage *w,
                           estimate_layers *layers)
{
    const comet_search_request *req = run->req;
    bool offload = req->space.vary_offload && req->system->expansion.present;
    int n_offload = offload ? OFFLOAD_CHOICES : 1;
    bool dp_choice = grad_ranks(s), tp_choice = s->tp > 1;
    int n_sched = schedules_of(s);
    for (int off = 0; off < n_offload; off++) {
        if (offload) {
            s->offload_optimizer = off & 1;
            s->offload_weights = (off >> 1) & 1;
            s->offload_activations = (off >> 2) & 1;
            s->offload_gradients = (off >> 3) & 1;
        }
        for (int ovdp = 0; ovdp < (dp_choice ? 2 : 1); ovdp++) {
            for (int ovtp = 0; ovtp < (tp_choice ? 2 : 1); ovtp++) {
                bool zb_fits = false;
                for (int sc = 0; sc < n_sched; sc++) {
                    uint64_t index = (run->unit << 32) | run->position++;
                    run->stats->enumerated++;
                    if (dp_choice)
                        s->overlap_dp = ovdp == 0;
                    if (tp_choice)
                        s->overlap_tp = ovtp == 0;
                    if (n_sched > 1)
                        s->schedule = searched_schedules[sc];
                    /* overlap never makes a step slower: off is dominated;
                     * ZB-H1's bubble is never longer than 1F1B's and the
                     * rest is the same, so once it fits in HBM alone 1F1B
                     * (the same memory on the first stage, less on the
                     * others) cannot win. DualPipe is never skipped: its
                     * bubble may be shorter than ZB-H1's and its F&B hides
                     * communication, while it holds 2x parameters (and
                     * reduces 2x gradients) but under full recompute may
                     * stash less on the middle stages, so neither
                     * dominates the other in time or in memory */
                    if (((ovdp || ovtp) || (sc == 1 && zb_fits)) && !req->space.keep_dominated) {
                        run->stats->dominated++;
                        continue;
                    }
                    bool fits = evaluate_point(run, s, w, layers, index);
                    zb_fits = sc == 0 && fits;
                }
            }
        }
    }
}

/* Recompute and ZeRO over one built workload. The layers' prices depend
 * on the recomputation alone of the knobs varied here (estimate.h), so
 * they are worked out at most once for each. */
static void evaluate_workload(search_run *run, comet_strategy *s, const work_stage *w)
{
    estimate_layers layers;
    for (int rc = 0; rc <= COMET_RECOMPUTE_FULL; rc++) {
        s->recompute = (comet_recompute)rc;
        layers.priced = false;
        for (int zero = 0; zero <= max_zero(s); zero++) {
            s->zero_stage = zero;
            evaluate_knobs(run, s, w, &layers);
        }
    }
}

/* Points one workload stands for, so a rejected layout still uses up its
 * indices and the numbering stays the same in every shard. */
static uint64_t points_per_workload(const comet_search_request *req, const comet_strategy *s)
{
    uint64_t n = 3 * (uint64_t)(max_zero(s) + 1);
    if (req->space.vary_offload && req->system->expansion.present)
        n *= OFFLOAD_CHOICES;
    return n * (grad_ranks(s) ? 2 : 1) * (s->tp > 1 ? 2 : 1) * (uint64_t)schedules_of(s);
}

static void search_unit(search_run *run, comet_strategy *unit)
{
    const comet_search_request *req = run->req;
    const comet_model *m = req->model;
    int64_t depth = comet_model_depth(m);
    int64_t per_replica = unit->global_batch / unit->dp;
    int64_t mbs[MAX_DIVISORS];
    int n_mb = divisors(per_replica, mbs, MAX_DIVISORS);
    bool transformer = m->kind == COMET_MODEL_TRANSFORMER;
    /* with context parallelism: the ring, and Ulysses where cp divides
     * each tp rank's heads */
    bool ulysses = unit->cp > 1 && (m->heads / unit->tp) % unit->cp == 0;
    for (int i = 0; i < n_mb; i++) {
        if (req->space.max_microbatch > 0 && mbs[i] > req->space.max_microbatch)
            break;
        for (int64_t v = 1; v * unit->pp <= depth; v++) {
            if (v > 1 && (unit->pp == 1 || depth % (unit->pp * v)))
                continue;
            for (int sp = 0; sp < (unit->tp > 1 ? 2 : 1); sp++) {
                for (int fa = 0; fa < (transformer && req->space.vary_flash ? 2 : 1) * (ulysses ? 2 : 1);
                     fa++) {
                    comet_strategy s = *unit;
                    s.microbatch = mbs[i];
                    s.interleave = v;
                    s.sp = sp == 1;
                    if (transformer && req->space.vary_flash)
                        s.flash_attention = fa % 2 == 1;
                    if (ulysses)
                        s.cp_comm = fa >= (req->space.vary_flash ? 2 : 1) ? COMET_CP_ULYSSES
                                                                          : COMET_CP_RING;
                    if (run->counting) {
                        run->counted += points_per_workload(req, &s);
                        continue;
                    }
                    if (stopped(run))
                        return;
                    if (!resolves(run, &s)) {
                        run->position += points_per_workload(req, &s);
                        continue;
                    }
                    work_stage w;
                    work_build(m, &s, &w);
                    evaluate_workload(run, &s, &w);
                }
            }
        }
    }
}

/* The placement orders the search tries, as tp, pp, dp permutations; cp
 * takes its place by comet_strategy_order_complete (right after tp). */
#define BASE_ORDERS 6
static const comet_group orders[BASE_ORDERS][COMET_LAYER_GROUPS] = {
    {COMET_GROUP_TP, COMET_GROUP_DP, COMET_GROUP_PP}, {COMET_GROUP_TP, COMET_GROUP_PP, COMET_GROUP_DP},
    {COMET_GROUP_DP, COMET_GROUP_TP, COMET_GROUP_PP}, {COMET_GROUP_DP, COMET_GROUP_PP, COMET_GROUP_TP},
    {COMET_GROUP_PP, COMET_GROUP_TP, COMET_GROUP_DP}, {COMET_GROUP_PP, COMET_GROUP_DP, COMET_GROUP_TP},
};

/* Placement orders per factorization: with expert parallelism each base
 * order twice, the expert-parallel ranks inside the rest of dp (right
 * before it) or outside it (right after). */
static int orders_of(int64_t ep)
{
    return ep > 1 ? 2 * BASE_ORDERS : BASE_ORDERS;
}

static void order_of(int o, comet_group out[COMET_GROUP_COUNT])
{
    comet_group given[COMET_LAYER_GROUPS + 1];
    int n = 0;
    for (int i = 0; i < COMET_LAYER_GROUPS; i++) {
        given[n++] = orders[o % BASE_ORDERS][i];
        if (o >= BASE_ORDERS && given[n - 1] == COMET_GROUP_DP)
            given[n++] = COMET_GROUP_EP;
    }
    comet_strategy_order_complete(given, n, out);
}

/* Does an earlier placement order give the same layout as s? Then s is
 * the same point and is skipped (by whichever shard owns it). */
static bool seen_before(search_run *run, const comet_strategy *s, int order)
{
    for (int p = 0; p < order; p++) {
        comet_strategy q = *s;
        order_of(p, q.order);
        q.placement_given = false;
        if (!comet_strategy_resolve(run->req->model, run->req->system, &q, NULL, &run->scratch) &&
            memcmp(q.place, s->place, sizeof s->place) == 0)
            return true;
    }
    return false;
}

/* The unit's points, as a search passes them (each workload's, whether
 * its layout is valid or not). */
static uint64_t unit_points(search_run *run, comet_strategy *unit)
{
    search_run count = {.req = run->req, .counting = true};
    search_unit(&count, unit);
    return count.counted;
}

/* The unit's points are passed: add them to the progress. */
static void unit_passed(search_run *run, comet_strategy *unit, bool searched)
{
    if (run->shared)
        atomic_fetch_add(&run->shared->done, searched ? run->position : unit_points(run, unit));
}

/* The parallel degrees of one factorization of the NPUs. */
typedef struct factorization {
    int64_t tp, cp, pp, dp, ep;
} factorization;

/* One (global batch, tp, cp, pp, ep) with its distinct placements. */
static void search_factorization(search_run *run, int64_t gbs, const factorization *f)
{
    const comet_search_request *req = run->req;
    for (int o = 0; o < orders_of(f->ep) && !stopped(run); o++) {
        uint64_t unit = run->next_unit++;
        comet_strategy s = req->space.base;
        s.tp = f->tp;
        s.cp = f->cp;
        s.pp = f->pp;
        s.dp = f->dp;
        s.ep = f->ep;
        s.cp_comm = COMET_CP_RING;
        s.global_batch = gbs;
        s.microbatch = 1;
        s.interleave = 1;
        s.placement_given = false;
        order_of(o, s.order);
        if (run->counting) {
            if ((int64_t)(unit % (uint64_t)req->shards) == req->shard)
                search_unit(run, &s);
            continue;
        }
        if (!owns_unit(run, unit))
            continue;
        if (!resolves(run, &s)) {
            unit_passed(run, &s, false);
            continue;
        }
        if (seen_before(run, &s, o)) {
            unit_passed(run, &s, false);
            continue;
        }
        s.placement_given = true;
        run->unit = unit;
        run->position = 0;
        search_unit(run, &s);
        unit_passed(run, &s, true);
    }
}

/* Context-parallel degrees worth trying out of the n ranks left by tp: 1,
 * and for a Transformer each divisor of n that splits the sequence into
 * 2 cp chunks, up to max_cp or while each rank keeps at least
 * COMET_SEARCH_CP_MIN_TOKENS tokens. */
static int cp_candidates(const comet_search_request *req, int64_t n, int64_t *out)
{
    const comet_model *m = req->model;
    int64_t all[MAX_DIVISORS];
    int n_all = divisors(n, all, MAX_DIVISORS), k = 0;
    for (int i = 0; i < n_all; i++) {
        int64_t cp = all[i];
        bool allowed = cp == 1 ||
                       (m->kind == COMET_MODEL_TRANSFORMER && m->seq % (2 * cp) == 0 &&
                        (req->space.max_cp > 0 ? cp <= req->space.max_cp
                                               : m->seq / cp >= COMET_SEARCH_CP_MIN_TOKENS));
        if (allowed)
            out[k++] = cp;
    }
    return k;
}

/* Expert-parallel degrees for dp data-parallel ranks: 1, and for a
 * mixture-of-experts model each divisor of dp that divides the experts. */
static int ep_candidates(const comet_model *m, int64_t dp, int64_t *out)
{
    if (m->kind != COMET_MODEL_TRANSFORMER || m->moe.experts <= 0) {
        out[0] = 1;
        return 1;
    }
    int64_t all[MAX_DIVISORS];
    int n_all = divisors(dp, all, MAX_DIVISORS), k = 0;
    for (int i = 0; i < n_all; i++)
        if (m->moe.experts % all[i] == 0)
            out[k++] = all[i];
    return k;
}

/* Every factorization tp x cp x pp x dp of the NPUs with its expert-
 * parallel degrees, for one global batch (gbs 0: dp << bi, the batch
 * ladder's rung bi). */
static void enumerate_batch(search_run *run, int bi)
{
    const comet_search_space *sp = &run->req->space;
    int64_t tps[MAX_DIVISORS], cps[MAX_DIVISORS], pps[MAX_DIVISORS], eps[MAX_DIVISORS];
    int n_tp = divisors(sp->npus, tps, MAX_DIVISORS);
    for (int i = 0; i < n_tp; i++) {
        int n_cp = cp_candidates(run->req, sp->npus / tps[i], cps);
        for (int c = 0; c < n_cp; c++) {
            int n_pp = divisors(sp->npus / (tps[i] * cps[c]), pps, MAX_DIVISORS);
            for (int j = 0; j < n_pp; j++) {
                factorization f = {.tp = tps[i], .cp = cps[c], .pp = pps[j]};
                f.dp = sp->npus / (f.tp * f.cp * f.pp);
                int64_t gbs = sp->max_global_batch > 0 ? f.dp << bi : sp->global_batch;
                int n_ep = ep_candidates(run->req->model, f.dp, eps);
                for (int e = 0; e < n_ep; e++) {
                    f.ep = eps[e];
                    if (sp->max_global_batch > 0 && gbs > sp->max_global_batch) {
                        run->next_unit += (uint64_t)orders_of(f.ep); /* keep the numbering */
                        continue;
                    }
                    search_factorization(run, gbs, &f);
                }
            }
        }
    }
}

/* The whole space of the request's shard, in enumeration order: global
 * batches outermost, then tp, cp, pp, ep and the placement orders
 * (searched, or only counted when run->counting). */
static void enumerate(search_run *run)
{
    const comet_search_space *sp = &run->req->space;
    /* Global batches: the one given, or dp * 2^k up to the maximum, taken
     * per factorization below; batches are enumerated outermost. */
    int n_batches = 1;
    if (sp->max_global_batch > 0)
        for (int64_t g = 1; g * 2 <= sp->max_global_batch; g *= 2)
            n_batches++;
    for (int bi = 0; bi < n_batches; bi++)
        enumerate_batch(run, bi);
}

uint64_t search_points(const comet_search_request *req)
{
    search_run count = {.req = req, .counting = true};
    enumerate(&count);
    return count.counted;
}

comet_status comet_search(const comet_search_request *req, comet_ranked *top, int *n_top,
                          comet_search_stats *stats, comet_error *err)
{
    *n_top = 0;
    memset(stats, 0, sizeof *stats);
    const comet_search_space *sp = &req->space;
    if (req->top_k < 1 || req->top_k > COMET_SEARCH_MAX_KEEP)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--top",
                               "must be from 1 to %d, got %d", COMET_SEARCH_MAX_KEEP, req->top_k);
    if (req->shards < 1 || req->shard < 0 || req->shard >= req->shards)
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL, "bad shard %d of %d",
                               req->shard, req->shards);
    if (sp->npus < 1 || sp->npus > COMET_MAX_NPUS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--npus",
                               "must be from 1 to %d, got %lld", COMET_MAX_NPUS, (long long)sp->npus);
    int64_t max_gbs = sp->max_global_batch > 0 ? sp->max_global_batch : sp->global_batch;
    if (max_gbs < 1 || max_gbs > COMET_MAX_BATCH)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--gbs",
                               "must be from 1 to %lld, got %lld", COMET_MAX_BATCH, (long long)max_gbs);

    /* a knob the search does not vary but every candidate would break */
    comet_status fp8 = comet_strategy_check_fp8(req->model, req->system, &sp->base, err);
    if (fp8)
        return fp8;

    search_run run = {.req = req, .top = {top, 0, req->top_k}, .stats = stats};
    estimate_cache_init(&run.cache);
    if (req->claim)
        run.claimed = atomic_fetch_add(&req->claim->next, 1);
    struct comet_unit_claim alone; /* progress of a search on one thread */
    if (req->progress && !req->claim)
        search_shared_init(&alone, search_points(req));
    if (req->progress)
        run.shared = req->claim ? req->claim : &alone;
    enumerate(&run);
    bool stop = stopped(&run);
    if (run.shared && !req->claim) {
        atomic_fetch_add(&alone.evaluated, run.unreported);
        search_progress_end(req, &alone);
        search_shared_free(&alone);
    } else if (run.shared) {
        atomic_fetch_add(&req->claim->evaluated, run.unreported);
    }
    if (stop)
        return comet_error_set(err, COMET_ECANCELED, NULL, 0, 0, NULL,
                               "stopped by the progress callback");
    qsort(top, (size_t)run.top.n, sizeof top[0], rank_order);
    *n_top = run.top.n;
    return COMET_OK;
}
