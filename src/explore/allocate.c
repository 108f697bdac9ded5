/* Bandwidth allocation across network dimensions (after LIBRA, Won et al.,
 * ISPASS 2024): how a per-NPU budget of bandwidth (or of dollars spent on
 * it) should be split over the network's dimensions for the weighted step
 * time of a set of workloads, or for performance per cost.
 *
 * Why this shape: a step's wait on dimension d is close to a_d / b_d, and
 * minimizing sum a_d / b_d under sum c_d b_d = B has the closed form
 * b_d ~ sqrt(a_d / c_d) (Lagrange). The a_d are measured, never derived:
 * the estimator's step time less its step time with d made 10^6 times
 * faster, times b_d. Overlap, latency terms, bounds, whole links and a
 * strategy that changes with the bandwidth break the closed form, so the
 * start is refined with the estimator itself: a compass search on the
 * budget surface (budget moved between pairs of dimensions, and for
 * performance per cost in or out of the budget), then, for dimensions
 * bought in whole links, every combination when there are few enough, else
 * the neighbours of the continuous answer and a local search over links.
 * A searched strategy is found by comet_search at the split tried and
 * kept as a candidate; rounds repeat until the search at the optimum
 * finds no strategy that is not a candidate already. All state is in a
 * context on the caller's stack; every loop is bounded by
 * COMET_ALLOC_MAX_EVALS estimates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/allocate.h"
#include "comet/methodology.h"
#include "comet/search.h"
#include "comet/sweep.h"
#include "search_again.h"

#define MAX_CANDIDATES 16    /* strategies kept per searched workload */
#define SEARCH_TOP 4         /* taken from each search */
#define MAX_ROUNDS 4         /* strategy-search rounds */
#define FAST 1e6             /* "infinitely fast": the wait on a dimension is what this removes */
#define TOL 1e-6             /* the compass search stops at this share of the budget */
#define ENUM_LIMIT 4096      /* whole-link combinations tried exhaustively up to this */

static const double sweep_scale[COMET_ALLOC_SWEEP] = {0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0};

const char *comet_alloc_objective_name(comet_alloc_objective o)
{
    return o == COMET_ALLOC_PERF_PER_COST ? "perf_per_cost" : "step_time";
}

typedef struct alloc_ctx {
    const comet_alloc_problem *p;
    int n;                               /* dimensions */
    double c[COMET_MAX_DIMS];            /* budget units per byte/s on each */
    double lo[COMET_MAX_DIMS], hi[COMET_MAX_DIMS];
    double budget;                       /* of this solve */
    int n_cand[COMET_ALLOC_MAX_WORKLOADS];
    comet_strategy cand[COMET_ALLOC_MAX_WORKLOADS][MAX_CANDIDATES];
    uint64_t evals;
    comet_error *err;
} alloc_ctx;

static double unit_cost(const comet_alloc_problem *p, int d)
{
    return p->budget_kind == COMET_ALLOC_BUDGET_DOLLARS ? p->dims[d].cost_per_gbps / 1e9 : 1.0;
}

double comet_alloc_spend(const comet_alloc_problem *p, const double bw[COMET_MAX_DIMS])
{
    double s = 0.0;
    for (int d = 0; d < p->system.n_dims; d++)
        s += unit_cost(p, d) * bw[d];
    return s;
}

static double spend_of(const alloc_ctx *x, const double bw[])
{
    double s = 0.0;
    for (int d = 0; d < x->n; d++)
        s += x->c[d] * bw[d];
    return s;
}

/* The system a split gives: bandwidths and the costs the problem says. */
static void system_at(const alloc_ctx *x, const double bw[], comet_system *sys)
{
    *sys = x->p->system;
    for (int d = 0; d < x->n; d++) {
        sys->dims[d].bandwidth = bw[d];
        sys->dims[d].cost_per_gbps = x->p->dims[d].cost_per_gbps;
    }
}

/* Workload k's best step time at sys over its candidates (INFINITY: none
 * fits); *which gets the candidate. */
static comet_status best_step(alloc_ctx *x, int k, const comet_system *sys, double *t,
                              int *which)
{
    const comet_alloc_workload *w = &x->p->workloads[k];
    *t = INFINITY;
    *which = -1;
    for (int i = 0; i < x->n_cand[k]; i++) {
        comet_result r;
        comet_status st = comet_estimate(&w->model, sys, &x->cand[k][i], &r, x->err);
        if (st)
            return st;
        x->evals++;
        if (r.feasible && r.step_time < *t) {
            *t = r.step_time;
            *which = i;
        }
    }
    return COMET_OK;
}

/* Price split bw: every workload's best candidate, the weighted step time,
 * cost and score. */
static comet_status evaluate(alloc_ctx *x, const double bw[], comet_alloc_point *pt)
{
    memset(pt, 0, sizeof *pt);
    memcpy(pt->bw, bw, sizeof pt->bw);
    pt->spend = spend_of(x, bw);
    comet_system sys;
    system_at(x, bw, &sys);
    pt->feasible = true;
    double score = 0.0;
    for (int k = 0; k < x->p->n_workloads; k++) {
        const comet_alloc_workload *w = &x->p->workloads[k];
        int which;
        double t;
        comet_status st = best_step(x, k, &sys, &t, &which);
        if (st)
            return st;
        pt->step[k] = t;
        if (which < 0) {
            pt->feasible = false;
            continue;
        }
        pt->strategy[k] = x->cand[k][which];
        double cost = comet_system_cost(&sys, w->npus);
        pt->step_time += w->weight * t;
        pt->cost += w->weight * cost;
        score += w->weight * (x->p->objective == COMET_ALLOC_PERF_PER_COST ? t * cost : t);
    }
    pt->score = pt->feasible ? score : INFINITY;
    if (!pt->feasible)
        pt->step_time = INFINITY;
    return COMET_OK;
}

/* The weighted wait on each dimension at pt, each workload on the
 * strategy pt chose for it. */
static comet_status waits(alloc_ctx *x, comet_alloc_point *pt)
{
    if (!pt->feasible)
        return COMET_OK;
    for (int d = 0; d < x->n; d++) {
        double fast[COMET_MAX_DIMS];
        memcpy(fast, pt->bw, sizeof fast);
        fast[d] *= FAST;
        comet_system sys;
        system_at(x, fast, &sys);
        pt->wait[d] = 0.0;
        for (int k = 0; k < x->p->n_workloads; k++) {
            comet_result r;
            comet_status st = comet_estimate(&x->p->workloads[k].model, &sys, &pt->strategy[k],
                                             &r, x->err);
            if (st)
                return st;
            x->evals++;
            double saved = pt->step[k] - r.step_time;
            pt->wait[d] += x->p->workloads[k].weight * (saved > 0.0 ? saved : 0.0);
        }
    }
    return COMET_OK;
}

/* The split b_d = clamp(lambda w_d, lo_d, hi_d) that spends the budget
 * (lambda by bisection: the spend grows with it); all at the minimums
 * when they take the budget, all at the maximums when those fit in it.
 * Weights all zero count as equal. */
static void fill_within(const alloc_ctx *x, const double lo_b[], const double hi_b[],
                        const double w_in[], double bw[])
{
    double w[COMET_MAX_DIMS] = {0};
    bool any = false;
    for (int d = 0; d < x->n; d++)
        any = any || w_in[d] > 0.0;
    for (int d = 0; d < x->n; d++)
        w[d] = any ? (w_in[d] > 0.0 ? w_in[d] : 0.0) : 1.0;
    double top = 0.0;
    for (int d = 0; d < x->n; d++)
        if (w[d] > 0.0 && hi_b[d] / w[d] > top)
            top = hi_b[d] / w[d];
    double lo = 0.0, hi = top;
    for (int d = 0; d < x->n; d++)
        bw[d] = hi_b[d];
    if (spend_of(x, bw) <= x->budget)
        return;
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        for (int d = 0; d < x->n; d++)
            bw[d] = fmin(fmax(mid * w[d], lo_b[d]), hi_b[d]);
        if (spend_of(x, bw) > x->budget)
            hi = mid;
        else
            lo = mid;
    }
    for (int d = 0; d < x->n; d++)
        bw[d] = fmin(fmax(lo * w[d], lo_b[d]), hi_b[d]);
}

static void fill(const alloc_ctx *x, const double w[], double bw[])
{
    fill_within(x, x->lo, x->hi, w, bw);
}

static bool better(const comet_alloc_point *a, const comet_alloc_point *b)
{
    return a->score < b->score * (1.0 - 1e-12);
}

/* Compass search from *best on the budget surface: step budget units
 * moved from one dimension to another, and for performance per cost one
 * dimension up or down within the budget; the step halves when no move
 * helps. */
static comet_status refine(alloc_ctx *x, comet_alloc_point *best)
{
    double step = 0.25 * x->budget;
    bool single = x->p->objective == COMET_ALLOC_PERF_PER_COST;
    uint64_t start = x->evals;
    while (step > TOL * x->budget && x->evals - start < COMET_ALLOC_MAX_EVALS) {
        bool improved = false;
        for (int i = 0; i < x->n; i++)
            for (int j = -1; j < x->n; j++) {
                if (j == i || (j < 0 && !single))
                    continue;
                for (int sign = (j < 0 ? -1 : 1); sign <= 1; sign += 2) {
                    double y[COMET_MAX_DIMS];
                    memcpy(y, best->bw, sizeof y);
                    double m = step; /* budget units into i (out of j) */
                    if (sign > 0) {
                        m = fmin(m, (x->hi[i] - y[i]) * x->c[i]);
                        if (j >= 0)
                            m = fmin(m, (y[j] - x->lo[j]) * x->c[j]);
                        else
                            m = fmin(m, x->budget - best->spend);
                    } else {
                        m = fmin(m, (y[i] - x->lo[i]) * x->c[i]);
                    }
                    if (m <= 1e-3 * step)
                        continue;
                    y[i] += sign * m / x->c[i];
                    if (j >= 0)
                        y[j] -= m / x->c[j];
                    comet_alloc_point pt;
                    comet_status st = evaluate(x, y, &pt);
                    if (st)
                        return st;
                    if (better(&pt, best)) {
                        *best = pt;
                        improved = true;
                    }
                }
            }
        if (!improved)
            step *= 0.5;
    }
    return COMET_OK;
}

static bool discrete(const alloc_ctx *x, int d)
{
    return x->p->dims[d].link_bandwidth > 0.0;
}

/* The continuous dimensions take what the whole-link ones leave, in
 * proportion to their current values (within bounds); for performance
 * per cost they only give back what no longer fits, since spending more
 * is not always better there. */
static void refill(const alloc_ctx *x, const double from[], double bw[])
{
    double w[COMET_MAX_DIMS] = {0}, lo[COMET_MAX_DIMS] = {0}, hi[COMET_MAX_DIMS] = {0};
    bool keep = x->p->objective == COMET_ALLOC_PERF_PER_COST;
    for (int d = 0; d < x->n; d++) {
        bool whole = discrete(x, d);
        lo[d] = whole ? bw[d] : x->lo[d];
        hi[d] = whole ? bw[d] : keep ? fmax(from[d], x->lo[d]) : x->hi[d];
        w[d] = whole ? 0.0 : from[d];
    }
    double out[COMET_MAX_DIMS] = {0};
    fill_within(x, lo, hi, w, out);
    for (int d = 0; d < x->n; d++)
        if (!discrete(x, d))
            bw[d] = out[d];
}

/* A continuous split made buyable: each whole-link dimension down to
 * its nearest count below (within its bounds), the continuous ones
 * taking what that leaves. */
static void snap(const alloc_ctx *x, double bw[])
{
    double from[COMET_MAX_DIMS];
    memcpy(from, bw, sizeof from);
    for (int d = 0; d < x->n; d++) {
        if (!discrete(x, d))
            continue;
        const comet_alloc_dim *a = &x->p->dims[d];
        int64_t k = (int64_t)floor(bw[d] / a->link_bandwidth + 1e-9);
        k = k < a->min_links ? a->min_links : k > a->max_links ? a->max_links : k;
        bw[d] = (double)k * a->link_bandwidth;
    }
    refill(x, from, bw);
}

/* Whole links on the dimensions that ask for them, from the continuous
 * answer *best: every combination within the budget when there are at
 * most ENUM_LIMIT, else each dimension's two nearest counts and then
 * single links added, removed or moved while that helps. */
static comet_status whole_links(alloc_ctx *x, comet_alloc_point *best)
{
    int dd[COMET_MAX_DIMS], nd = 0;
    double combos = 1.0;
    for (int d = 0; d < x->n; d++)
        if (discrete(x, d)) {
            dd[nd++] = d;
            combos *= (double)(x->p->dims[d].max_links - x->p->dims[d].min_links + 1);
        }
    if (nd == 0)
        return COMET_OK;
    comet_alloc_point cont = *best;
    int64_t lo_n[COMET_MAX_DIMS], span[COMET_MAX_DIMS];
    bool exhaustive = combos <= ENUM_LIMIT;
    for (int i = 0; i < nd; i++) {
        const comet_alloc_dim *a = &x->p->dims[dd[i]];
        if (exhaustive) {
            lo_n[i] = a->min_links;
            span[i] = a->max_links - a->min_links + 1;
        } else {
            int64_t f = (int64_t)floor(cont.bw[dd[i]] / a->link_bandwidth + 1e-9);
            lo_n[i] = f < a->min_links ? a->min_links : f > a->max_links ? a->max_links : f;
            span[i] = lo_n[i] < a->max_links ? 2 : 1;
        }
    }
    comet_alloc_point found;
    found.score = INFINITY;
    bool have = false;
    int64_t idx[COMET_MAX_DIMS] = {0};
    for (bool more = true; more;) {
        double y[COMET_MAX_DIMS];
        memcpy(y, cont.bw, sizeof y);
        for (int i = 0; i < nd; i++)
            y[dd[i]] = (double)(lo_n[i] + idx[i]) * x->p->dims[dd[i]].link_bandwidth;
        refill(x, cont.bw, y);
        if (spend_of(x, y) <= x->budget * (1.0 + 1e-9)) {
            comet_alloc_point pt;
            comet_status st = evaluate(x, y, &pt);
            if (st)
                return st;
            if (!have || better(&pt, &found)) {
                found = pt;
                have = true;
            }
        }
        more = false;
        for (int i = nd - 1; i >= 0 && !more; i--) {
            idx[i] = (idx[i] + 1) % span[i];
            more = idx[i] != 0;
        }
    }
    if (!have)
        return comet_error_set(x->err, COMET_EINPUT, NULL, 0, 0, "allocate.budget",
                               "no combination of whole links fits the budget");
    uint64_t start = x->evals;
    for (bool improved = !exhaustive; improved && x->evals - start < COMET_ALLOC_MAX_EVALS;) {
        improved = false;
        for (int i = 0; i < nd; i++)
            for (int j = -1; j < nd; j++)
                for (int sign = -1; sign <= 1; sign += 2) {
                    if (j == i || (j >= 0 && sign < 0))
                        continue;
                    const comet_alloc_dim *a = &x->p->dims[dd[i]];
                    double y[COMET_MAX_DIMS];
                    memcpy(y, found.bw, sizeof y);
                    y[dd[i]] += sign * a->link_bandwidth;
                    if (j >= 0)
                        y[dd[j]] -= x->p->dims[dd[j]].link_bandwidth;
                    bool ok = y[dd[i]] >= a->min_links * a->link_bandwidth * (1 - 1e-12) &&
                              y[dd[i]] <= a->max_links * a->link_bandwidth * (1 + 1e-12);
                    if (j >= 0)
                        ok = ok && y[dd[j]] >= x->p->dims[dd[j]].min_links *
                                                   x->p->dims[dd[j]].link_bandwidth *
                                                   (1 - 1e-12);
                    refill(x, cont.bw, y);
                    if (!ok || spend_of(x, y) > x->budget * (1.0 + 1e-9))
                        continue;
                    comet_alloc_point pt;
                    comet_status st = evaluate(x, y, &pt);
                    if (st)
                        return st;
                    if (better(&pt, &found)) {
                        found = pt;
                        improved = true;
                    }
                }
    }
    *best = found;
    return COMET_OK;
}

/* The closed form at the waits of pt: b_d ~ sqrt(a_d / c_d), a_d = wait_d b_d. */
static void lagrange_weights(const alloc_ctx *x, const comet_alloc_point *pt, double a[],
                             double w[])
{
    for (int d = 0; d < x->n; d++) {
        a[d] = pt->wait[d] * pt->bw[d];
        w[d] = a[d] > 0.0 ? sqrt(a[d] / x->c[d]) : 0.0;
    }
}

static void bounds(alloc_ctx *x, double budget)
{
    x->budget = budget;
    for (int d = 0; d < x->n; d++) {
        const comet_alloc_dim *a = &x->p->dims[d];
        x->c[d] = unit_cost(x->p, d);
        x->lo[d] = a->link_bandwidth > 0.0 ? (double)a->min_links * a->link_bandwidth : a->min;
        x->hi[d] = a->link_bandwidth > 0.0 ? (double)a->max_links * a->link_bandwidth
                   : a->max > 0.0           ? a->max
                                            : budget / x->c[d];
        if (x->hi[d] > budget / x->c[d] && x->lo[d] <= budget / x->c[d])
            x->hi[d] = fmax(budget / x->c[d], x->lo[d]);
    }
}

/* One solve at x->budget with the candidates as they are: the three
 * starts, the closed form from the equal split's waits, the compass
 * search from the best of them, then whole links. */
static comet_status solve(alloc_ctx *x, comet_alloc_result *r, comet_alloc_point *opt)
{
    double w[COMET_MAX_DIMS], bw[COMET_MAX_DIMS];
    comet_alloc_point equal, current, lag;
    for (int d = 0; d < x->n; d++)
        w[d] = 1.0;
    fill(x, w, bw);
    snap(x, bw);
    comet_status st = evaluate(x, bw, &equal);
    if (!st)
        st = waits(x, &equal);
    for (int d = 0; d < x->n; d++)
        w[d] = x->p->system.dims[d].bandwidth;
    fill(x, w, bw);
    snap(x, bw);
    if (!st)
        st = evaluate(x, bw, &current);
    double a[COMET_MAX_DIMS];
    const comet_alloc_point *from = &equal;
    if (!st && !equal.feasible && current.feasible) {
        st = waits(x, &current);
        from = &current;
    }
    lagrange_weights(x, from, a, w);
    fill(x, w, bw);
    snap(x, bw);
    if (!st)
        st = evaluate(x, bw, &lag);
    if (st)
        return st;
    comet_alloc_point best = lag;
    if (better(&equal, &best))
        best = equal;
    if (better(&current, &best))
        best = current;
    st = refine(x, &best);
    if (!st)
        st = whole_links(x, &best);
    if (st)
        return st;
    *opt = best;
    if (r) {
        r->equal = equal;
        r->current = current;
        r->lagrange = lag;
        memcpy(r->a, a, sizeof r->a);
    }
    return COMET_OK;
}

static bool same_strategy(const comet_strategy *a, const comet_strategy *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* Search workload k's strategies at split bw and add the best few as
 * candidates; *added counts those that were not candidates yet. */
static comet_status search_at(alloc_ctx *x, int k, const double bw[], int *added)
{
    const comet_alloc_workload *w = &x->p->workloads[k];
    comet_system sys;
    system_at(x, bw, &sys);
    comet_search_request req = {0};
    req.model = &w->model;
    req.system = &sys;
    comet_search_space_defaults(&req.space);
    req.space.base = w->strategy;
    req.space.npus = w->npus;
    req.space.global_batch = w->global_batch;
    req.objective = COMET_OBJECTIVE_TIME;
    req.top_k = SEARCH_TOP;
    req.shards = 1;
    comet_ranked top[SEARCH_TOP];
    int n_top = 0;
    comet_search_stats stats;
    comet_status st = comet_search_threads(&req, x->p->threads > 0 ? x->p->threads : 1, top,
                                           &n_top, &stats, x->err);
    if (st)
        return st;
    x->evals += stats.evaluated;
    for (int i = 0; i < n_top; i++) {
        bool known = false;
        for (int j = 0; j < x->n_cand[k] && !known; j++)
            known = same_strategy(&x->cand[k][j], &top[i].strategy);
        if (known)
            continue;
        if (x->n_cand[k] < MAX_CANDIDATES) {
            x->cand[k][x->n_cand[k]++] = top[i].strategy;
            (*added)++;
        }
    }
    return COMET_OK;
}

static comet_status check(const comet_alloc_problem *p, comet_error *err)
{
    if (p->system.n_dims < 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.system",
                               "the system has no network dimension");
    if (p->n_workloads < 1 || p->n_workloads > COMET_ALLOC_MAX_WORKLOADS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.workloads",
                               "give 1 to %d workloads", COMET_ALLOC_MAX_WORKLOADS);
    if (!(p->budget > 0.0))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.budget",
                               "must be positive");
    double least = 0.0;
    for (int d = 0; d < p->system.n_dims; d++) {
        const comet_alloc_dim *a = &p->dims[d];
        if (!(unit_cost(p, d) > 0.0) || a->cost_per_gbps < 0.0)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.dimensions",
                                   "dimension %s needs a positive cost_per_gbps",
                                   p->system.dims[d].name);
        double lo = a->link_bandwidth > 0.0 ? (double)a->min_links * a->link_bandwidth : a->min;
        double hi = a->link_bandwidth > 0.0 ? (double)a->max_links * a->link_bandwidth : a->max;
        if (!(lo > 0.0) || (hi > 0.0 && hi < lo))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.dimensions",
                                   "dimension %s: its minimum must be positive and at most "
                                   "its maximum", p->system.dims[d].name);
        least += unit_cost(p, d) * lo;
    }
    if (least > p->budget * (1.0 + 1e-12))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.budget",
                               "is below the sum of the dimensions' minimums");
    for (int k = 0; k < p->n_workloads; k++)
        if (!(p->workloads[k].weight > 0.0) || p->workloads[k].npus < 1)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.workloads",
                                   "workload %d needs a positive weight and NPU count", k);
    if (p->objective == COMET_ALLOC_PERF_PER_COST) {
        bool priced = p->system.cost_per_npu > 0.0;
        for (int d = 0; d < p->system.n_dims; d++)
            priced = priced || p->dims[d].cost_per_gbps > 0.0;
        if (!priced)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.objective",
                                   "perf_per_cost needs costs: the system's or a "
                                   "cost_per_gbps per dimension");
    }
    return COMET_OK;
}

comet_status comet_allocate(const comet_alloc_problem *p, bool sweep, comet_alloc_result *out,
                            comet_error *err)
{
    comet_status st = check(p, err);
    if (st)
        return st;
    alloc_ctx *x = calloc(1, sizeof *x);
    comet_alloc_result *r = calloc(1, sizeof *r);
    if (!x || !r) {
        free(x);
        free(r);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    x->p = p;
    x->n = p->system.n_dims;
    x->err = err;
    bounds(x, p->budget);
    bool searched = false;
    for (int k = 0; k < p->n_workloads; k++) {
        if (p->workloads[k].fixed) {
            x->cand[k][0] = p->workloads[k].strategy;
            x->n_cand[k] = 1;
        } else {
            searched = true;
        }
    }
    /* searched strategies: candidates from the equal split and from the
     * system's own split first, so each start is priced with its best */
    for (int start = 0; searched && start < 2; start++) {
        double w[COMET_MAX_DIMS], bw[COMET_MAX_DIMS];
        for (int d = 0; d < x->n; d++)
            w[d] = start == 0 ? 1.0 : p->system.dims[d].bandwidth;
        fill(x, w, bw);
        for (int k = 0; !st && k < p->n_workloads; k++)
            if (!p->workloads[k].fixed) {
                int added = 0;
                st = search_at(x, k, bw, &added);
            }
    }
    comet_alloc_point opt;
    memset(&opt, 0, sizeof opt);
    for (int round = 0; !st; round++) {
        st = solve(x, r, &opt);
        if (st || !searched)
            break;
        r->rounds = round + 1;
        int added = 0;
        for (int k = 0; !st && k < p->n_workloads; k++)
            if (!p->workloads[k].fixed)
                st = search_at(x, k, opt.bw, &added);
        if (added == 0 || round + 1 == MAX_ROUNDS)
            break;
    }
    for (int k = 0; !st && k < p->n_workloads; k++)
        if (x->n_cand[k] == 0) {
            char key[48];
            snprintf(key, sizeof key, "allocate.workloads[%d]", k);
            st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, key,
                                 "%s on %lld NPUs: no strategy fits in memory at the equal "
                                 "split or the system's own",
                                 p->workloads[k].model.name, (long long)p->workloads[k].npus);
        }
    if (!st && !opt.feasible)
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "allocate.workloads",
                             "no split of the budget lets every workload fit in memory");
    if (!st)
        st = waits(x, &opt);
    if (!st)
        st = waits(x, &r->current);
    if (!st)
        st = waits(x, &r->lagrange);
    r->optimum = opt;
    /* what one more 1 % of the budget buys on each dimension */
    for (int d = 0; !st && d < x->n; d++) {
        double y[COMET_MAX_DIMS];
        memcpy(y, opt.bw, sizeof y);
        double extra = 0.01 * p->budget / x->c[d];
        y[d] += extra;
        comet_alloc_point pt;
        st = evaluate(x, y, &pt);
        r->marginal[d] = st ? 0.0 : (opt.step_time - pt.step_time) / (extra / 1e9);
    }
    for (int i = 0; sweep && !st && i < COMET_ALLOC_SWEEP; i++) {
        alloc_ctx *y = calloc(1, sizeof *y);
        if (!y) {
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        *y = *x;
        double b = p->budget * sweep_scale[i];
        bounds(y, b);
        r->sweep_budget[i] = b;
        double least = 0.0;
        for (int d = 0; d < y->n; d++)
            least += y->c[d] * y->lo[d];
        r->sweep_optimum[i] = r->sweep_equal[i] = NAN;
        if (least <= b * (1.0 + 1e-12)) {
            comet_alloc_result tmp;
            comet_alloc_point o;
            comet_error e2;
            y->err = &e2;
            if (solve(y, &tmp, &o) == COMET_OK) {
                r->sweep_optimum[i] = o.step_time;
                r->sweep_equal[i] = tmp.equal.step_time;
            }
        }
        x->evals = y->evals;
        free(y);
        r->n_sweep = i + 1;
    }
    r->evaluations = x->evals;
    if (!st)
        *out = *r;
    free(x);
    free(r);
    return st;
}

comet_status comet_study_allocate(const comet_study *study, comet_conclusions *c,
                                  comet_error *err)
{
    c->allocated = false;
    const comet_results_row *row = c->best_value ? c->best_value : c->fastest;
    if (!row || row->model < 0 || row->model >= study->n_models)
        return COMET_OK;
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    comet_sweep_row *best = calloc(1, sizeof *best);
    if (!p || !r || !best) {
        free(p);
        free(r);
        free(best);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    /* the design's best strategy found again, with every knob and its
     * placement (a results row keeps only some knobs) */
    comet_status st = search_again(study, c, row->index, best, err);
    if (st || best->status != COMET_POINT_OK) {
        free(p);
        free(r);
        free(best);
        return st;
    }
    snprintf(p->name, sizeof p->name, "%s", study->name);
    comet_study_point_system(study, row->index, &p->system);
    p->budget_kind = COMET_ALLOC_BUDGET_BANDWIDTH;
    p->objective = COMET_ALLOC_STEP_TIME;
    p->threads = 1;
    for (int d = 0; d < p->system.n_dims; d++) {
        p->budget += p->system.dims[d].bandwidth;
        p->dims[d].min = fmin(1e9, p->system.dims[d].bandwidth);
        p->dims[d].cost_per_gbps = p->system.dims[d].cost_per_gbps;
    }
    p->n_workloads = 1;
    comet_alloc_workload *w = &p->workloads[0];
    w->model = study->models[row->model];
    w->npus = row->npus;
    w->strategy = best->best.strategy;
    w->global_batch = best->best.strategy.global_batch;
    w->weight = 1.0;
    w->fixed = true;
    st = comet_allocate(p, false, r, err);
    if (!st && r->optimum.feasible && r->current.feasible) {
        c->allocated = true;
        c->split_of = row;
        c->split_dims = p->system.n_dims;
        c->split_budget = p->budget;
        for (int d = 0; d < p->system.n_dims; d++) {
            c->split_bw[d] = r->optimum.bw[d];
            snprintf(c->split_names[d], sizeof c->split_names[d], "%s",
                     p->system.dims[d].name);
        }
        c->split_speedup = r->current.step_time / r->optimum.step_time;
        c->split_equal_slowdown = r->equal.step_time / r->optimum.step_time;
    }
    free(p);
    free(r);
    free(best);
    return st;
}
