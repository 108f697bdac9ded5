/* DeepPool's burst parallelism and GPU multiplexing (Park et al., MLSys
 * 2022). Why: once the global batch stops growing, adding GPUs shrinks
 * each GPU's batch until layers with little parallel work run at low
 * efficiency and the per-layer all-reduce dominates; giving each run of
 * layers its own GPU count, and the freed GPU time to background jobs,
 * gets more out of the same cluster.
 *
 * The planner prices every layer at every candidate width through the
 * shared pricing: the workload builder (work_build) at the per-GPU batch
 * ceil(B / w), each layer through layer_times (the GEMM efficiency curve
 * by size, memory-bound kernels, launches), the run's gradient all-reduce
 * through the network module (comet_collective_time over the GPUs the run
 * spans) and the redistribution of activations between runs of different
 * widths as point-to-point transfers (comet_p2p_time_on). The run on w GPUs
 * uses the first w GPUs (numbered innermost dimension first), so runs nest.
 * Dynamic programming over (last layer, last run's width) with every start
 * of that run is exact for this model: the iteration time is the sum over
 * runs of compute + all-reduce + optimizer + the transfer into the run.
 * Plain data parallelism is the one run of every layer at the full width,
 * a plan the search also sees, so the burst plan is never slower.
 * Multiplexing fills each GPU's idle share with background jobs, priority
 * first, and slows the foreground by the interference (docs/deeppool.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/cost.h"
#include "comet/deeppool.h"
#include "comet/network.h"
#include "comet/strategy.h"

/* What the planner knows of one model on one cluster. */
typedef struct dp_ctx {
    const comet_model *m;
    const comet_system *sys;
    int64_t batch, gpus;
    double amplification;                       /* 0: no limit */
    int n_layers;
    comet_dp_layer *layers;                     /* [n_layers] */
    int n_w;
    int64_t w[COMET_DP_MAX_WIDTHS];
    int64_t span[COMET_DP_MAX_WIDTHS][COMET_MAX_DIMS];
    int p2p_dim[COMET_DP_MAX_WIDTHS];
    double *compute;                            /* [n_w][n_layers]: seconds, fwd + bwd */
    double grad_bytes;                          /* per parameter */
    double opt_bytes;                           /* optimizer step's HBM bytes per parameter */
    hw_rates rates;
} dp_ctx;

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The spans of the first w GPUs over dimensions of sizes[]: inner
 * dimensions filled first; false when w does not nest (more than a
 * dimension but not a multiple of it). */
static bool span_of(const int64_t sizes[COMET_MAX_DIMS], int n_dims, int64_t w,
                    int64_t span[COMET_MAX_DIMS])
{
    int64_t left = w;
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        span[d] = 1;
    for (int d = 0; d < n_dims && left > 1; d++) {
        if (left <= sizes[d]) {
            span[d] = left;
            left = 1;
        } else {
            if (sizes[d] < 1 || left % sizes[d])
                return false;
            span[d] = sizes[d];
            left /= sizes[d];
        }
    }
    return left == 1;
}

/* The work layers in model order: the first stage's (embedding), every
 * stage's, the last stage's (head). */
static int layer_order(const work_stage *ws, int order[])
{
    int n = 0;
    const work_where where[3] = {WORK_FIRST_STAGE, WORK_EVERY_STAGE, WORK_LAST_STAGE};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < ws->n_layers; i++)
            if (ws->layers[i].where == where[k])
                order[n++] = i;
    return n;
}

static const char *layer_name(const comet_model *m, const work_layer *l, int i)
{
    if (m->kind == COMET_MODEL_LAYERS && i < m->n_layer_kinds)
        return m->layer_list[i].name;
    return l->where == WORK_FIRST_STAGE ? "embedding"
         : l->where == WORK_LAST_STAGE  ? "head"
         : l->moe                       ? "moe block"
                                        : "block";
}

/* Price every layer at every candidate width. */
static comet_status dp_prepare(dp_ctx *c, bool data_parallel, comet_error *err)
{
    const comet_model *m = c->m;
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.dp = c->gpus;
    s.microbatch = 1;
    s.global_batch = c->gpus;
    int64_t sizes[COMET_MAX_DIMS];
    comet_error e;
    comet_error_clear(&e);
    if (comet_strategy_resolve(m, c->sys, &s, sizes, &e) != COMET_OK)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "deeppool.gpus",
                               "%lld GPUs data parallel: %s", (long long)c->gpus, e.message);
    hw_rates_init(&c->rates, c->sys, m->dtype);
    double elem = comet_dtype_bytes(m->dtype);
    c->grad_bytes = s.grad_fp32 ? 4.0 : elem;
    c->opt_bytes = optimizer_bytes_per_param(&s, elem);

    /* candidates: powers of two below the cluster, and the cluster */
    int64_t cand[COMET_DP_MAX_WIDTHS];
    int n_cand = 0;
    if (!data_parallel)
        for (int64_t w = 1; w < c->gpus && n_cand < COMET_DP_MAX_WIDTHS - 1; w *= 2)
            cand[n_cand++] = w;
    cand[n_cand++] = c->gpus;
    c->n_w = 0;
    for (int k = 0; k < n_cand; k++) {
        int64_t w = cand[k];
        if (w > c->batch || !span_of(sizes, c->sys->n_dims, w, c->span[c->n_w]))
            continue;
        c->p2p_dim[c->n_w] = comet_p2p_dim(c->sys, c->span[c->n_w]);
        c->w[c->n_w++] = w;
    }
    if (c->n_w == 0 || c->w[c->n_w - 1] != c->gpus)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "deeppool.gpus",
                               "%lld GPUs do not nest on the system's network dimensions",
                               (long long)c->gpus);

    work_stage *ws = malloc(sizeof *ws);
    if (!ws)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = COMET_OK;
    for (int wi = 0; wi < c->n_w && !st; wi++) {
        comet_strategy sw = s;
        sw.dp = c->w[wi];
        sw.microbatch = ceil_div(c->batch, c->w[wi]);
        sw.global_batch = sw.microbatch * sw.dp;
        memcpy(sw.place[COMET_GROUP_DP], c->span[wi], sizeof sw.place[COMET_GROUP_DP]);
        work_build(m, &sw, ws);
        int order[4 + COMET_MAX_LAYER_KINDS];
        int n_order = layer_order(ws, order);
        int k = 0;
        for (int o = 0; o < n_order && !st; o++) {
            const work_layer *l = &ws->layers[order[o]];
            layer_time lt;
            layer_times(l, &c->rates, c->sys, &sw, &lt);
            double t = lt.fwd + lt.bwd + lt.recompute;
            for (int g = 0; g < COMET_GROUP_COUNT; g++)
                t += lt.comm_fwd[g] + lt.comm_bwd[g] + lt.comm_rc[g];
            int64_t count = llround(l->count);
            double out = m->kind == COMET_MODEL_LAYERS && order[o] < m->n_layer_kinds
                             ? m->layer_list[order[o]].out_bytes
                             : ws->p2p_bytes / (double)sw.microbatch;
            for (int64_t r = 0; r < count; r++, k++) {
                if (k >= COMET_DP_MAX_LAYERS) {
                    st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "deeppool.model",
                                         "more than %d layers to plan", COMET_DP_MAX_LAYERS);
                    break;
                }
                if (wi == 0) {
                    comet_dp_layer *L = &c->layers[k];
                    const char *name = layer_name(m, l, order[o]);
                    if (count > 1)
                        snprintf(L->name, sizeof L->name, "%.50s.%d", name, (int)(r + 1) % 100000);
                    else
                        snprintf(L->name, sizeof L->name, "%s", name);
                    L->params = l->params;
                    L->out_bytes = out;
                }
                c->compute[(size_t)wi * COMET_DP_MAX_LAYERS + (size_t)k] = t;
            }
        }
        c->n_layers = k;
    }
    free(ws);
    /* the amplification limit: a width whose GPU-time for a layer exceeds
     * the limit times the layer's least is not a candidate for it (the
     * least always is) */
    for (int k = 0; !st && c->amplification > 0.0 && k < c->n_layers; k++) {
        double least = INFINITY;
        for (int wi = 0; wi < c->n_w; wi++)
            least = fmin(least, (double)c->w[wi] *
                                    c->compute[(size_t)wi * COMET_DP_MAX_LAYERS + (size_t)k]);
        for (int wi = 0; wi < c->n_w; wi++) {
            double *t = &c->compute[(size_t)wi * COMET_DP_MAX_LAYERS + (size_t)k];
            if ((double)c->w[wi] * *t > c->amplification * least * (1.0 + 1e-12))
                *t = INFINITY;
        }
    }
    if (!st && c->n_layers == 0)
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "deeppool.model",
                             "the model has no layers");
    return st;
}

static double allreduce(const dp_ctx *c, int wi, double params)
{
    if (c->w[wi] <= 1 || params <= 0.0)
        return 0.0;
    return comet_collective_time(c->sys, c->span[wi], COMET_COLL_ALL_REDUCE,
                                 params * c->grad_bytes);
}

/* Layer `j`'s output moved from a run on w[a] GPUs to one on w[b] (and its
 * gradient back): each GPU of the narrower run takes in the samples of the
 * wider run's other GPUs, ceil(B/narrow) - ceil(B/wide) of them, over the
 * outermost dimension the wider run spans. */
static double transfer(const dp_ctx *c, int j, int a, int b)
{
    if (a == b)
        return 0.0;
    int narrow = c->w[a] < c->w[b] ? a : b, wide = narrow == a ? b : a;
    double samples = (double)(ceil_div(c->batch, c->w[narrow]) - ceil_div(c->batch, c->w[wide]));
    double bytes = samples * c->layers[j].out_bytes;
    if (bytes <= 0.0)
        return 0.0;
    return 2.0 * comet_p2p_time_on(c->sys, c->p2p_dim[wide], bytes);
}

/* One run's group, priced. */
static void group_of(const dp_ctx *c, int j, int i, int wi, comet_dp_group *g)
{
    double params = 0.0;
    g->compute = 0.0;
    for (int k = j; k < i; k++) {
        params += c->layers[k].params;
        g->compute += c->compute[(size_t)wi * COMET_DP_MAX_LAYERS + (size_t)k];
    }
    g->first = j;
    g->last = i - 1;
    g->width = c->w[wi];
    g->per_gpu_batch = ceil_div(c->batch, c->w[wi]);
    g->allreduce = allreduce(c, wi, params);
    g->optimizer = hw_optimizer_time(&c->rates, params * c->opt_bytes);
    g->transfer_in = 0.0;
}

static void plan_totals(comet_dp_plan *p, int64_t batch, int64_t gpus)
{
    p->iteration = p->compute = p->allreduce = p->optimizer = p->transfer = p->busy = 0.0;
    for (int g = 0; g < p->n_groups; g++) {
        const comet_dp_group *G = &p->groups[g];
        int64_t prev = g > 0 ? p->groups[g - 1].width : G->width;
        p->compute += G->compute;
        p->allreduce += G->allreduce;
        p->optimizer += G->optimizer;
        p->transfer += G->transfer_in;
        p->busy += (double)G->width * (G->compute + G->allreduce + G->optimizer) +
                   (double)(prev > G->width ? prev : G->width) * G->transfer_in;
    }
    p->iteration = p->compute + p->allreduce + p->optimizer + p->transfer;
    p->throughput = p->iteration > 0.0 ? (double)batch / p->iteration : INFINITY;
    p->idle_share = p->iteration > 0.0 ? 1.0 - p->busy / ((double)gpus * p->iteration) : 0.0;
}

/* Whether a plan of time t whose last run starts at j beats the best so
 * far (time `cell`, its last run starting at cell_j): faster by more than
 * rounding, or as fast with a longer last run (fewer runs, fewer
 * all-reduces: sums taken in another order must not split a run). */
static bool better(double t, double cell, int j, int cell_j)
{
    if (t < cell * (1.0 - 1e-12))
        return true;
    return t <= cell * (1.0 + 1e-12) && j < cell_j;
}

/* The dynamic program: best[i][w] is the least time of layers 0..i-1 with
 * the last run on w[w] GPUs; a run j..i-1 on w costs its compute, its
 * all-reduce and optimizer step, and the transfer from the run before. */
static comet_status dp_solve(const dp_ctx *c, comet_dp_plan *plan, comet_error *err)
{
    int L = c->n_layers, W = c->n_w;
    size_t cells = (size_t)(L + 1) * (size_t)W;
    double *best = malloc(cells * sizeof *best);
    int *from_j = malloc(cells * sizeof *from_j), *from_w = malloc(cells * sizeof *from_w);
    double *xfer = malloc((size_t)L * (size_t)W * (size_t)W * sizeof *xfer);
    if (!best || !from_j || !from_w || !xfer) {
        free(best), free(from_j), free(from_w), free(xfer);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    for (int j = 0; j < L; j++)
        for (int a = 0; a < W; a++)
            for (int b = 0; b < W; b++)
                xfer[((size_t)j * (size_t)W + (size_t)a) * (size_t)W + (size_t)b] =
                    transfer(c, j, a, b);
    for (size_t k = 0; k < cells; k++) {
        best[k] = INFINITY;
        from_j[k] = L + 1;
        from_w[k] = -1;
    }
    for (int i = 1; i <= L; i++) {
        for (int wi = 0; wi < W; wi++) {
            double *cell = &best[(size_t)i * (size_t)W + (size_t)wi];
            const double *row = c->compute + (size_t)wi * COMET_DP_MAX_LAYERS;
            double compute = 0.0, params = 0.0;
            /* the run j..i-1, growing backwards; a layer the amplification
             * limit keeps off this width ends every longer run too */
            for (int j = i - 1; j >= 0; j--) {
                compute += row[j];
                params += c->layers[j].params;
                if (!isfinite(compute))
                    break;
                double run = compute + allreduce(c, wi, params) +
                             hw_optimizer_time(&c->rates, params * c->opt_bytes);
                if (j == 0) {
                    if (better(run, *cell, j, from_j[(size_t)i * (size_t)W + (size_t)wi])) {
                        *cell = run;
                        from_j[(size_t)i * (size_t)W + (size_t)wi] = 0;
                        from_w[(size_t)i * (size_t)W + (size_t)wi] = -1;
                    }
                    continue;
                }
                for (int wp = 0; wp < W; wp++) {
                    double t = best[(size_t)j * (size_t)W + (size_t)wp] + run +
                               xfer[((size_t)(j - 1) * (size_t)W + (size_t)wp) * (size_t)W +
                                    (size_t)wi];
                    if (better(t, *cell, j, from_j[(size_t)i * (size_t)W + (size_t)wi])) {
                        *cell = t;
                        from_j[(size_t)i * (size_t)W + (size_t)wi] = j;
                        from_w[(size_t)i * (size_t)W + (size_t)wi] = wp;
                    }
                }
            }
        }
    }
    int wbest = 0;
    for (int wi = 1; wi < W; wi++)
        if (best[(size_t)L * (size_t)W + (size_t)wi] <= best[(size_t)L * (size_t)W + (size_t)wbest])
            wbest = wi;
    /* walk back: runs in reverse, then flip */
    int n = 0, i = L, wi = wbest;
    while (i > 0) {
        int j = from_j[(size_t)i * (size_t)W + (size_t)wi];
        int wp = from_w[(size_t)i * (size_t)W + (size_t)wi];
        comet_dp_group *g = &plan->groups[n++];
        group_of(c, j, i, wi, g);
        if (j > 0)
            g->transfer_in = xfer[((size_t)(j - 1) * (size_t)W + (size_t)wp) * (size_t)W +
                                  (size_t)wi];
        i = j;
        wi = wp < 0 ? 0 : wp;
    }
    for (int a = 0, b = n - 1; a < b; a++, b--) {
        comet_dp_group t = plan->groups[a];
        plan->groups[a] = plan->groups[b];
        plan->groups[b] = t;
    }
    plan->n_groups = n;
    plan_totals(plan, c->batch, c->gpus);
    free(best), free(from_j), free(from_w), free(xfer);
    return COMET_OK;
}

static comet_status check_sizes(int64_t batch, int64_t gpus, const char *key, comet_error *err)
{
    if (gpus < 1 || gpus > COMET_DP_MAX_GPUS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, key,
                               "%lld GPUs: give 1 to %d", (long long)gpus, COMET_DP_MAX_GPUS);
    if (batch < gpus)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, key,
                               "a global batch of %lld samples cannot give each of %lld GPUs "
                               "one sample (data parallelism on every GPU needs "
                               "global_batch >= gpus)", (long long)batch, (long long)gpus);
    return COMET_OK;
}

/* Plan into `plan`, and the layers and candidates into `res` when given. */
static comet_status plan_one(const comet_model *m, const comet_system *sys, int64_t batch,
                             int64_t gpus, bool data_parallel, double amplification,
                             comet_dp_plan *plan, comet_deeppool_result *res, comet_error *err)
{
    dp_ctx c = {.m = m, .sys = sys, .batch = batch, .gpus = gpus,
                .amplification = data_parallel ? 0.0 : amplification};
    c.layers = calloc(COMET_DP_MAX_LAYERS, sizeof *c.layers);
    c.compute = calloc((size_t)COMET_DP_MAX_WIDTHS * COMET_DP_MAX_LAYERS, sizeof *c.compute);
    comet_status st = !c.layers || !c.compute
                          ? comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory")
                          : dp_prepare(&c, data_parallel, err);
    if (!st)
        st = dp_solve(&c, plan, err);
    if (!st && res) {
        res->n_layers = c.n_layers;
        memcpy(res->layers, c.layers, (size_t)c.n_layers * sizeof *c.layers);
        res->n_widths = c.n_w;
        memcpy(res->widths, c.w, (size_t)c.n_w * sizeof *c.w);
        for (int g = 0; g < plan->n_groups; g++)
            for (int k = plan->groups[g].first; k <= plan->groups[g].last; k++)
                res->width[k] = plan->groups[g].width;
    }
    free(c.layers);
    free(c.compute);
    return st;
}

comet_status comet_deeppool_plan(const comet_model *m, const comet_system *sys,
                                 int64_t global_batch, int64_t gpus, bool data_parallel,
                                 double amplification, comet_dp_plan *plan, comet_error *err)
{
    memset(plan, 0, sizeof *plan);
    comet_status st = check_sizes(global_batch, gpus, "deeppool.global_batch", err);
    if (!st && amplification != 0.0 && !(amplification >= 1.0))
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "deeppool.amplification",
                             "must be 1 or more (or 0: no limit), got %g", amplification);
    return st ? st : plan_one(m, sys, global_batch, gpus, data_parallel, amplification, plan,
                              NULL, err);
}

/* GPU k's idle seconds per iteration of plan p (runs on the first GPUs). */
static double gpu_idle(const comet_dp_plan *p, int64_t k)
{
    double busy = 0.0;
    for (int g = 0; g < p->n_groups; g++) {
        const comet_dp_group *G = &p->groups[g];
        int64_t prev = g > 0 ? p->groups[g - 1].width : G->width;
        if (k < G->width)
            busy += G->compute + G->allreduce + G->optimizer;
        if (k < (prev > G->width ? prev : G->width))
            busy += G->transfer_in;
    }
    double idle = p->iteration - busy;
    return idle > 1e-12 * p->iteration ? idle : 0.0;
}

/* Background jobs into the burst plan's idle GPU time: each GPU hosts at
 * most one job; jobs in priority order take the GPUs with the most idle
 * time left (the last GPUs: runs use the first ones); with `share` false
 * only GPUs the plan leaves wholly idle. A job runs at its single-GPU
 * speed for the GPU's idle share of the iteration. Where a job shares a
 * GPU the foreground also uses, the foreground's iteration takes
 * (1 + interference) times as long; GPUs the plan leaves wholly idle host
 * jobs without slowing it. */
static void pack(const comet_deeppool_problem *p, const comet_dp_plan *burst, int64_t gpus,
                 const double *alone, const int *order, bool share, comet_dp_mux *mux)
{
    memset(mux->jobs, 0, sizeof mux->jobs);
    mux->background = 0.0;
    int64_t next = gpus - 1;
    bool shared = false; /* a job on a GPU the foreground also runs on */
    for (int o = 0; o < p->n_background; o++) {
        int j = order[o];
        comet_dp_bg_result *r = &mux->jobs[j];
        r->alone = alone[j];
        int64_t want = p->background[j].gpus > 0 ? p->background[j].gpus : gpus;
        while (r->gpus < want && next >= 0) {
            double idle = gpu_idle(burst, next);
            bool whole = idle >= burst->iteration;
            if (idle <= 0.0 || (!share && !whole))
                break;
            r->gpus++;
            r->gpu_share += idle / burst->iteration;
            shared = shared || !whole;
            next--;
        }
        r->throughput = r->gpu_share * r->alone;
        mux->background += r->throughput;
    }
    mux->shared = shared;
    mux->foreground = shared ? mux->foreground_alone / (1.0 + p->interference)
                             : mux->foreground_alone;
    mux->total = mux->foreground + mux->background;
    mux->break_even = mux->background < mux->foreground_alone
                          ? mux->background / (mux->foreground_alone - mux->background)
                          : INFINITY;
}

/* The packing with shared GPUs where it gives more in total, else the
 * one on wholly idle GPUs alone (the break-even of the former is kept). */
static void multiplex(const comet_deeppool_problem *p, const comet_dp_plan *burst,
                      double dp_tput, int64_t gpus, const double *alone, comet_dp_mux *mux)
{
    memset(mux, 0, sizeof *mux);
    mux->foreground_alone = burst->throughput;
    mux->dp_alone = dp_tput;
    int order[COMET_DP_MAX_BACKGROUND];
    for (int j = 0; j < p->n_background; j++)
        order[j] = j;
    for (int a = 1; a < p->n_background; a++) /* stable insertion by priority, highest first */
        for (int b = a; b > 0 && p->background[order[b]].priority >
                                     p->background[order[b - 1]].priority; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    pack(p, burst, gpus, alone, order, true, mux);
    if (mux->shared) {
        comet_dp_mux alone_gpus = *mux;
        pack(p, burst, gpus, alone, order, false, &alone_gpus);
        if (alone_gpus.total > mux->total) {
            alone_gpus.break_even = mux->break_even;
            *mux = alone_gpus;
        }
    }
    mux->gain = mux->dp_alone > 0.0 ? mux->total / mux->dp_alone : 0.0;
}

comet_status comet_deeppool(const comet_deeppool_problem *p, comet_deeppool_result *out,
                            comet_error *err)
{
    memset(out, 0, sizeof *out);
    if (!(p->interference >= 0.0) || !isfinite(p->interference))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "deeppool.interference",
                               "must be 0 or more (the foreground's slowdown when sharing), "
                               "got %g", p->interference);
    if (p->amplification != 0.0 && !(p->amplification >= 1.0))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "deeppool.amplification",
                               "must be 1 or more (or 0: no limit), got %g", p->amplification);
    comet_status st = check_sizes(p->global_batch, p->gpus, "deeppool.global_batch", err);
    for (int i = 0; i < p->n_scaling && !st; i++) {
        char key[48];
        snprintf(key, sizeof key, "deeppool.scaling[%d]", i);
        st = check_sizes(p->global_batch, p->scaling[i], key, err);
    }
    if (st)
        return st;
    /* each background job alone on one GPU */
    double alone[COMET_DP_MAX_BACKGROUND] = {0};
    comet_dp_plan *tmp = malloc(sizeof *tmp);
    if (!tmp)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int j = 0; j < p->n_background && !st; j++) {
        const comet_dp_background *b = &p->background[j];
        if (b->batch < 1) {
            char key[48];
            snprintf(key, sizeof key, "deeppool.background[%d].batch", j);
            st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, key, "must be at least 1");
            break;
        }
        st = plan_one(&b->model, &p->system, b->batch, 1, true, 0.0, tmp, NULL, err);
        if (st) {
            char key[48];
            snprintf(key, sizeof key, "deeppool.background[%d].model", j);
            snprintf(err->key, sizeof err->key, "%s", key);
        }
        alone[j] = tmp->throughput;
    }
    if (!st)
        st = plan_one(&p->model, &p->system, p->global_batch, p->gpus, false, p->amplification,
                      &out->burst, out, err);
    if (!st)
        st = plan_one(&p->model, &p->system, p->global_batch, p->gpus, true, 0.0, &out->dp, NULL,
                      err);
    if (!st) {
        out->speedup = out->burst.iteration > 0.0 ? out->dp.iteration / out->burst.iteration
                                                  : 1.0;
        multiplex(p, &out->burst, out->dp.throughput, p->gpus, alone, &out->mux);
    }
    comet_dp_mux *mux = malloc(sizeof *mux);
    if (!st && !mux)
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int i = 0; i < p->n_scaling && !st; i++) {
        comet_dp_scaling_point *pt = &out->scaling[out->n_scaling];
        pt->gpus = p->scaling[i];
        st = plan_one(&p->model, &p->system, p->global_batch, pt->gpus, true, 0.0, tmp, NULL, err);
        if (st)
            break;
        pt->dp = tmp->throughput;
        st = plan_one(&p->model, &p->system, p->global_batch, pt->gpus, false, p->amplification,
                      tmp, NULL, err);
        if (st)
            break;
        pt->burst = tmp->throughput;
        multiplex(p, tmp, pt->dp, pt->gpus, alone, mux);
        pt->total = mux->total;
        out->n_scaling++;
    }
    if (st && strcmp(err->key, "deeppool.gpus") == 0 && p->n_scaling > 0 && out->n_scaling <
        p->n_scaling && out->burst.n_groups > 0) {
        char key[48];
        snprintf(key, sizeof key, "deeppool.scaling[%d]", out->n_scaling);
        snprintf(err->key, sizeof err->key, "%s", key);
    }
    free(mux);
    free(tmp);
    return st;
}
