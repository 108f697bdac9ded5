/* The COMET methodology's computed steps (see comet/methodology.h). Steps
 * 1-3 run the strategy search on the study's base cluster (as the study
 * file writes it, before any axis applies): once as it is, once with HBM
 * alone, once with an expansion tier. Step 5 reads the sweep's rows: it
 * pairs every design that has an expansion tier with the same design
 * without one, and walks one step up each axis from the best-value design
 * to find what to buy next. Design points are found by their index: the
 * study numbers them in mixed radix over the axes' values. */
#include "comet/methodology.h"
#include "search_again.h"

#include "comet/simulate.h"
#include "comet/sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- steps 1 to 3 ---------------------------------------------------------- */

static int64_t base_npus(const comet_study *st)
{
    for (int a = 0; a < st->n_axes; a++)
        if (st->axes[a].kind == COMET_AXIS_NPUS)
            return (int64_t)st->axes[a].values[0];
    return st->npus;
}

static comet_status search(const comet_study *st, int model, const comet_system *sys,
                           bool offload, int threads, comet_ranked *top, int k, int *n,
                           comet_search_stats *stats, comet_error *err)
{
    comet_search_request req;
    memset(&req, 0, sizeof req);
    req.model = &st->models[model];
    req.system = sys;
    comet_search_space_defaults(&req.space);
    req.space.npus = base_npus(st);
    req.space.global_batch = st->global_batch;
    req.space.max_global_batch = st->max_global_batch;
    req.space.max_microbatch = st->max_microbatch;
    req.space.base = st->base;
    req.space.vary_flash = st->vary_flash;
    req.space.vary_offload = st->vary_offload && offload;
    req.objective = st->objective;
    req.top_k = k;
    req.shards = 1;
    return comet_search_threads(&req, threads > 0 ? threads : 1, top, n, stats, err);
}

/* The expansion tier step 3 tries: the base system's own, else the largest
 * capacity and bandwidth the study's axes sweep; false when neither. */
static bool expansion_tier(const comet_study *st, int model, comet_system *sys)
{
    if (sys->expansion.present && sys->expansion.capacity > 0.0 &&
        sys->expansion.bandwidth > 0.0)
        return true;
    const comet_axis *cap = NULL, *bw = NULL;
    for (int a = 0; a < st->n_axes; a++) {
        if (st->axes[a].kind == COMET_AXIS_EXPANSION_CAPACITY)
            cap = &st->axes[a];
        if (st->axes[a].kind == COMET_AXIS_EXPANSION_BANDWIDTH)
            bw = &st->axes[a];
    }
    if (!cap)
        return false;
    double most = 0.0, fastest = sys->expansion.bandwidth;
    for (int i = 0; i < cap->n; i++)
        most = fmax(most, cap->values[i]);
    for (int i = 0; bw && i < bw->n; i++)
        fastest = fmax(fastest, bw->values[i]);
    if (!(most > 0.0) || !(fastest > 0.0))
        return false;
    int64_t npus = st->npus;
    comet_axis_apply(cap, most, st->models[model].dtype, sys, &npus);
    if (bw)
        comet_axis_apply(bw, fastest, st->models[model].dtype, sys, &npus);
    else
        sys->expansion.bandwidth = fastest;
    return true;
}

/* Whole-model state and one sample's activations: the footprint of the
 * model on one NPU with nothing split, offloaded or recomputed. The
 * footprint does not depend on the network, and a system of fixed size (a
 * wafer) holds no single NPU: the one NPU gets a switch of its own. */
static comet_status whole_model(const comet_study *st, int model, comet_findings *f,
                                comet_error *err)
{
    comet_system sys = st->system;
    sys.expansion.present = false;
    sys.n_dims = 1;
    comet_net_dim *alone = &sys.dims[0];
    memset(&alone->shape, 0, sizeof alone->shape);
    alone->size = 0;
    alone->topology = COMET_TOPO_SWITCH;
    alone->in_network_reduction = false;
    comet_strategy s = st->base;
    s.tp = s.pp = s.dp = 1;
    s.microbatch = s.global_batch = 1;
    s.interleave = 1;
    s.zero_stage = 0;
    s.recompute = COMET_RECOMPUTE_NONE;
    s.offload_optimizer = s.offload_weights = s.offload_activations = s.offload_gradients = false;
    s.placement_given = false;
    comet_result r;
    comet_status rc = comet_estimate(&st->models[model], &sys, &s, &r, err);
    if (rc)
        return rc;
    f->state_bytes[0] = r.mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS];
    f->state_bytes[1] = r.mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS];
    f->state_bytes[2] = r.mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER];
    f->activation_bytes = r.mem[COMET_TIER_HBM][COMET_MEM_ACTIVATIONS];
    f->params = r.params;
    return COMET_OK;
}

comet_status comet_study_findings(const comet_study *study, int model, int threads,
                                  comet_findings *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    out->model = model;
    out->npus = base_npus(study);
    comet_status rc = whole_model(study, model, out, err);
    if (rc)
        return rc;
    /* 1 and 2: the space as the base cluster is; the top list is long so
     * that it holds the best strategy at most TP degrees */
    comet_ranked *top = malloc(sizeof *top * COMET_SEARCH_MAX_TOP);
    if (!top)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    int n = 0;
    rc = search(study, model, &study->system, true, threads, top, COMET_SEARCH_MAX_TOP, &n,
                &out->space, err);
    if (!rc && n > 0) {
        out->has_best = true;
        out->best = top[0];
        out->model_flops = top[0].result.model_flops;
        out->tokens_per_step = top[0].result.tokens_per_s * top[0].result.step_time;
        for (int i = 0; i < n && out->n_by_tp < COMET_FINDINGS_MAX_TP; i++) {
            bool seen = false;
            for (int k = 0; k < out->n_by_tp; k++)
                seen |= out->by_tp[k].strategy.tp == top[i].strategy.tp;
            if (!seen)
                out->by_tp[out->n_by_tp++] = top[i];
        }
        /* ascending TP, so volumes read as a function of it */
        for (int i = 1; i < out->n_by_tp; i++)
            for (int j = i; j > 0 && out->by_tp[j].strategy.tp < out->by_tp[j - 1].strategy.tp;
                 j--) {
                comet_ranked t = out->by_tp[j];
                out->by_tp[j] = out->by_tp[j - 1];
                out->by_tp[j - 1] = t;
            }
    }
    /* 3: HBM alone, then with an expansion tier */
    comet_system sys = study->system;
    sys.expansion.present = false;
    if (!rc)
        rc = search(study, model, &sys, false, threads, top, 1, &n, &out->hbm_only, err);
    if (!rc && n > 0) {
        out->has_best_hbm_only = true;
        out->best_hbm_only = top[0];
    }
    sys = study->system;
    if (!rc && expansion_tier(study, model, &sys)) {
        out->expansion_tried = true;
        out->expansion_capacity = sys.expansion.capacity;
        out->expansion_bandwidth = sys.expansion.bandwidth;
        rc = search(study, model, &sys, true, threads, top, 1, &n, &out->with_expansion, err);
        if (!rc && n > 0) {
            out->has_best_with_expansion = true;
            out->best_with_expansion = top[0];
        }
    }
    free(top);
    return rc;
}

/* ---- step 5 ---------------------------------------------------------------- */

void comet_results_expansion_pairs(const comet_results *r, int model,
                                   void (*visit)(const comet_results_row *with,
                                                 const comet_results_row *without, void *ctx),
                                   void *ctx)
{
    for (int a = 0; a < r->study.n_axes; a++) {
        const comet_axis *ax = &r->study.axes[a];
        int none = comet_axis_slot(ax, 0.0);
        if (ax->kind != COMET_AXIS_EXPANSION_CAPACITY || none < 0)
            continue;
        for (size_t i = 0; i < r->n_rows; i++) {
            const comet_results_row *with = &r->rows[i];
            if (with->model != model || with->values[a] == 0.0)
                continue;
            const comet_results_row *without = comet_results_moved(r, with, a, none);
            if (without)
                visit(with, without, ctx);
        }
    }
}

static void count_pair(const comet_results_row *with, const comet_results_row *without,
                       void *ctx)
{
    comet_conclusions *c = ctx;
    c->expansion_pairs++;
    if (comet_results_row_fits(with) && !comet_results_row_fits(without))
        c->expansion_enables++;
    if (comet_results_row_fits(with) && comet_results_row_fits(without)) {
        double speedup = without->result.step_time / with->result.step_time;
        if (speedup > c->expansion_best_speedup) {
            c->expansion_best_speedup = speedup;
            c->expansion_best = with;
        }
    }
}

/* From `from`, one step up each axis: the most tokens/s gained per dollar
 * (a free speedup beats any paid one). */
static void invest(const comet_results *r, const comet_results_row *from, comet_conclusions *c)
{
    c->invest_axis = -1;
    double best = 0.0;
    for (int a = 0; from && a < r->study.n_axes; a++) {
        const comet_axis *ax = &r->study.axes[a];
        if (ax->n < 2 || ax->kind == COMET_AXIS_DIM_TOPOLOGY || ax->kind == COMET_AXIS_DIM_SHAPE ||
            ax->kind == COMET_AXIS_DIM_ROUTING || ax->kind == COMET_AXIS_SYSTEM)
            continue; /* kinds, not amounts: no step up to buy */
        int next = comet_axis_slot(ax, from->values[a]) + 1;
        const comet_results_row *up = comet_results_moved(r, from, a, next);
        if (!comet_results_row_fits(up) ||
            !(up->result.step_time < from->result.step_time * (1.0 - 1e-4)))
            continue;
        double gain = up->result.tokens_per_s - from->result.tokens_per_s;
        double extra = up->cost - from->cost;
        double score = extra > 0.0 ? gain / extra : INFINITY;
        if (c->invest_axis < 0 || score > best) {
            best = score;
            c->invest_axis = a;
            c->invest_speedup = from->result.step_time / up->result.step_time;
            c->invest_extra_cost = extra;
            c->invest_value_after = up->values[a];
        }
    }
}

void comet_study_conclude(const comet_results *r, int model, comet_conclusions *c)
{
    memset(c, 0, sizeof *c);
    c->model = model;
    double best_value = 0.0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const comet_results_row *row = &r->rows[i];
        if (row->model != model)
            continue;
        c->designs++;
        if (!comet_results_row_fits(row))
            continue;
        c->feasible++;
        double t = row->result.step_time;
        if (!c->fastest || t < c->fastest->result.step_time)
            c->fastest = row;
        if (!c->slowest || t > c->slowest->result.step_time)
            c->slowest = row;
        if (row->cost > 0.0 && row->result.tokens_per_s / row->cost > best_value) {
            best_value = row->result.tokens_per_s / row->cost;
            c->best_value = row;
        }
    }
    c->spread = c->fastest ? c->slowest->result.step_time / c->fastest->result.step_time : 0.0;
    c->expansion_best_speedup = 1.0;
    comet_results_expansion_pairs(r, model, count_pair, c);
    invest(r, c->best_value ? c->best_value : c->fastest, c);
    int over = -1;
    for (int a = r->study.n_axes - 1; a >= 0; a--)
        if (r->study.axes[a].kind == COMET_AXIS_DIM_OVERSUBSCRIPTION)
            over = a;
    comet_results_headroom(r, model, over, COMET_HEADROOM_TOLERANCE, &c->headroom);
}

comet_status search_again(const comet_study *study, comet_conclusions *c, uint64_t index,
                          comet_sweep_row *row, comet_error *err)
{
    if (!c->fastest || index != c->fastest->index)
        return comet_sweep_point(study, index, row, err);
    if (!c->fastest_searched) {
        comet_status st = comet_sweep_point(study, index, &c->fastest_search, err);
        if (st)
            return st;
        c->fastest_searched = true;
    }
    *row = c->fastest_search;
    return COMET_OK;
}

comet_status comet_study_check_pick(const comet_study *study, comet_conclusions *c,
                                    comet_error *err)
{
    c->checked = false;
    if (!c->fastest)
        return COMET_OK;
    comet_sweep_row *row = malloc(sizeof *row);
    static const comet_sim_step_options unaware = {.fidelity = COMET_SIM_UNAWARE};
    comet_sim_step_result *sim = malloc(sizeof *sim);
    comet_status rc = row && sim ? search_again(study, c, c->fastest->index, row, err)
                                 : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                   "out of memory");
    if (!rc && row->status == COMET_POINT_OK) {
        int model;
        int64_t npus;
        comet_system sys;
        double values[COMET_STUDY_MAX_AXES];
        comet_study_point(study, row->index, &model, &sys, &npus, values);
        rc = comet_sim_step(&study->models[model], &sys, &row->best.strategy, &unaware, sim,
                            err);
        if (!rc) {
            c->checked = true;
            c->pick_estimate = row->best.result.step_time;
            c->pick_simulated = sim->step_time;
        }
    }
    free(row);
    free(sim);
    return rc;
}

/* ---- assumptions ----------------------------------------------------------- */

static const char *const assumption_lines[] = {
    "Compute: GEMMs at a size-dependent fraction of peak (the system's efficiency curve), "
    "other kernels bound by HBM bandwidth (a roofline).",
    "Pipeline: 1F1B, interleaved when v > 1, or zero-bubble ZB-H1 (v = 1, searched beside "
    "1F1B); the bubble is the longest path through every stage's own passes ((p - 1) "
    "microbatches for equal stages, (p - 1)(F + B - W) under ZB-H1), interleaved (p - 1) / v "
    "of the busiest stage's; DualPipe (v = 1, even p, searched where it runs) (p/2 - 1)(F&B "
    "+ B - 3W), its forward-backward pairs hiding their all-to-alls and sends, 2x "
    "parameters.",
    "Network: each collective runs its algorithm on every dimension in turn "
    "(hierarchically); the groups that run a phase at once share a fat tree's or rail "
    "network's uplinks, and no other links (docs/fabric.md).",
    "Overlap: DP and TP communication hide behind compute when the strategy overlaps them, "
    "taking the system's compute.overlap_slowdown share of the compute they hide behind; "
    "ZeRO 3 gathers and reduce-scatters each layer apart on one stream, prefetched one "
    "layer ahead (FSDP); fused attention assumes no contention.",
    "Memory: mixed-precision weights and gradients with fp32 Adam state, activations per "
    "Korthikanti et al. 2022; an expansion tier holds offloaded or spilled state and streams "
    "it at its bandwidth.",
    "Cost: the system file's rough prices per NPU, TFLOP/s, GiB and GB/s, and per switch "
    "port and cable of a Clos; power, space and operations are not priced.",
};

int comet_study_assumptions(const char *const **lines)
{
    *lines = assumption_lines;
    return (int)(sizeof assumption_lines / sizeof assumption_lines[0]);
}
