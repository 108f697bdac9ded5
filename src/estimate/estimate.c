/* The analytical step-time model (the fast path). It prices the busiest
 * pipeline stage's work from the workload builder on the accelerator's
 * roofline and the network's collective formulas, then composes one step:
 * pipeline (1F1B, interleaved 1F1B or ZB-H1) with its bubble, exposed tensor-,
 * pipeline- and data-parallel communication, the optimizer step and
 * expansion-memory traffic. Stages alike are priced once. The strategy
 * search passes what its thread keeps from point to point (estimate.h):
 * its layer prices, ZeRO 3 passes and collective prices, each the same
 * doubles this file would work out. Equations and sources: docs/model.md. */
#include "comet/estimate.h"

#include <math.h>
#include <string.h>

#include "comet/network.h"
#include "estimate.h"
#include "../cost/cost.h"
#include "../schedule/schedule.h"

/* Time of one microbatch on the busiest stage, split by kind. */
typedef struct stage_time {
    double fwd, bwd, recompute;                   /* compute */
    double wgrad;                                 /* the weight-gradient share of bwd */
    double comm[COMET_GROUP_COUNT];               /* layer collectives per group */
    double exposed[COMET_GROUP_COUNT];            /* ... not hidden behind compute */
    double fwd_exposed;                           /* ... of them, in the forward */
    double bytes[COMET_GROUP_COUNT];              /* ... their buffers, per NPU */
    double fwd_flops, recompute_flops;            /* per NPU */
} stage_time;

/* One instance of a layer kind through every pass of one microbatch, as
 * the pipeline schedules see a stage: forward and whole backward
 * (recompute included) with the communication each leaves exposed, and
 * the weight-gradient part of the backward. */
typedef struct kind_time {
    double fwd, bwd, weight;
} kind_time;

/* Prices one layer kind (layer_times) into *unit, one instance, and adds
 * the busiest stage's instances' forward, backward, recompute and
 * collectives to *st, with the TP exposure under overlap. The embedding
 * sits on the first stage, which is not the busiest once there is a
 * pipeline. `priced` is the layer's layer_times. */
static void time_layer(const work_layer *l, const work_stage *w, const layer_time *priced,
                       const comet_system *sys, const comet_strategy *s, stage_time *st,
                       kind_time *unit)
{
    /* With a pipeline, only the busiest stage's end layer counts: the LM
     * head (last stage) or the embedding (first stage), or neither when a
     * middle stage is the busiest (uneven stages, an MoE model's). The
     * others are priced for the schedule's view of every stage. */
    bool on_busiest = work_on_busiest(w, s, l);
    const layer_time lt = *priced;
    /* Overlapped TP communication hides behind the GEMMs of the same
     * passes (forward, backward = 2x forward GEMMs, recompute). A TP
     * collective sits between the GEMM producing its input and the one
     * consuming its output, so it can only hide by splitting both into
     * chunks (collective matmul): the first chunk's share stays exposed. */
    bool full = l->where == WORK_EVERY_STAGE && s->recompute == COMET_RECOMPUTE_FULL;
    double gemm_window = layer_gemm_window(l, s, &lt);
    double n = on_busiest ? l->count : 0.0;
    *unit = (kind_time){.fwd = lt.fwd, .bwd = lt.bwd + lt.recompute, .weight = lt.wgrad};
    for (int g = 0; g < COMET_GROUP_COUNT; g++) {
        double comm = lt.comm_fwd[g] + lt.comm_bwd[g] + lt.comm_rc[g];
        double exposed = g == COMET_GROUP_TP ? layer_tp_exposed(sys, s, comm, gemm_window) : comm;
        st->comm[g] += n * comm;
        st->exposed[g] += n * exposed;
        /* each pass keeps its own share of what stays exposed */
        double in_fwd = comm > 0.0 ? exposed * lt.comm_fwd[g] / comm : 0.0;
        st->fwd_exposed += n * in_fwd;
        unit->fwd += in_fwd;
        unit->bwd += exposed - in_fwd;
    }
    if (!on_busiest)
        return;
    for (int i = 0; i < l->n_comms; i++) {
        const work_comm *c = &l->comms[i];
        int passes = c->in_forward + c->in_backward + (c->recomputed && full);
        st->bytes[c->group] += n * passes * c->bytes;
    }
    /* ring CP: comm_*[CP] hold the exchange's exposed part; the rest of
     * its sends hid behind the attention core */
    st->comm[COMET_GROUP_CP] += n * lt.cp_hidden;
    st->bytes[COMET_GROUP_CP] += n * lt.cp_ring_bytes;
    st->fwd += n * lt.fwd;
    st->bwd += n * lt.bwd;
    st->wgrad += n * lt.wgrad;
    st->recompute += n * lt.recompute;
    st->fwd_flops += n * lt.flops;
    st->recompute_flops += n * lt.recompute_flops;
}

/* ZeRO 3 under fsdp (docs/model.md, frameworks): what one estimate
 * prices of the layers' per-layer collectives. Each layer kind's gather
 * and reduce-scatter is priced once, when a stage first holds it, and
 * the passes of the last FSDP_MEMO stage contents are kept: the middle
 * stages of a pipeline hold the same layers, so they cost one pass, not
 * one each. */
enum { FSDP_MEMO = 4, MAX_KINDS = 4 + COMET_MAX_LAYER_KINDS };
_Static_assert(MAX_KINDS == sizeof ((work_stage *)0)->layers / sizeof ((work_stage *)0)->layers[0],
               "a kind per work_stage layer");

typedef struct fsdp_memo {
    double count[MAX_KINDS];
    fsdp_time fwd, bwd;
} fsdp_memo;

/* What the passes of one estimate keep: each kind's collectives once
 * priced, and the last stages' passes. */
typedef struct fsdp_ctx {
    double gather[MAX_KINDS], reduce[MAX_KINDS];
    bool priced[MAX_KINDS];
    fsdp_memo memo[FSDP_MEMO];
    int n_memo, next_memo;
} fsdp_ctx;

/* Every pipeline stage's times for the schedule (sched_micro.stage): each
 * layer kind's instances on that stage, the Transformer's dense and MoE
 * blocks as the stage split places them (work_stage_block_counts), a
 * layer list's every-stage layers alike on all, the embedding on the
 * first and the LM head on the last. Pipelines of up to STAGE_CACHE
 * stages are priced once into `cached` (the schedules read every stage
 * twice). */
enum { STAGE_CACHE = 256 };

typedef struct stage_times_ctx {
    const comet_model *model;
    const comet_system *system;
    const comet_strategy *strategy;
    const work_stage *work;
    const step_plan *plan;
    const kind_time *unit;
    fsdp_ctx *fsdp;            /* ZeRO 3 under fsdp, else NULL */
    fsdp_cache *passes;        /* the caller's, kept across estimates, or NULL */
    coll_memo *memo;           /* ... its collective prices, or NULL */
    sched_stage_time cached[STAGE_CACHE];
    bool have_cache;
} stage_times_ctx;

/* One microbatch's forward and backward over a stage holding count[i]
 * layers of kind i, with each layer's gathers and reduce-scatter on one
 * stream (fsdp.c). The kinds run in the stage's order: the embedding,
 * the blocks (an MoE model's dense blocks, then its MoE blocks), the LM
 * head. */
static void fsdp_stage(const stage_times_ctx *stages, const double *count, fsdp_time *fwd,
                       fsdp_time *bwd)
{
    fsdp_ctx *ctx = stages->fsdp;
    const work_stage *w = stages->work;
    for (int m = 0; m < ctx->n_memo; m++) {
        int i = 0;
        while (i < w->n_layers && ctx->memo[m].count[i] == count[i])
            i++;
        if (i == w->n_layers) {
            *fwd = ctx->memo[m].fwd;
            *bwd = ctx->memo[m].bwd;
            return;
        }
    }
    static const work_where order[3] = {WORK_FIRST_STAGE, WORK_EVERY_STAGE, WORK_LAST_STAGE};
    const step_plan *plan = stages->plan;
    fsdp_run f[MAX_KINDS], b[MAX_KINDS];
    int n = 0;
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < w->n_layers; i++) {
            const work_layer *l = &w->layers[i];
            if (l->where != order[o] || !(count[i] > 0.0))
                continue;
            if (!ctx->priced[i]) {
                double g = 0.0, r = 0.0;
                if (!l->model_parallel) {
                    g = plan_layer_collective(stages->system, stages->strategy, &plan->dp,
                                              stages->memo, true, l->params, l->expert_params);
                    r = plan_layer_collective(stages->system, stages->strategy, &plan->dp,
                                              stages->memo, false, l->params, l->expert_params);
                }
                ctx->gather[i] = g;
                ctx->reduce[i] = r;
                ctx->priced[i] = true;
            }
            f[n] = (fsdp_run){count[i], stages->unit[i].fwd, ctx->gather[i], 0.0};
            b[n] = (fsdp_run){count[i], stages->unit[i].bwd, ctx->gather[i], ctx->reduce[i]};
            n++;
        }
    fsdp_pass_cached(stages->passes, f, n, plan->dp.prefetch, false, fwd);
    fsdp_pass_cached(stages->passes, b, n, plan->dp.prefetch, true, bwd);
    if (!plan->dp.overlap) /* every collective blocks the compute */
        for (fsdp_time *t = fwd; t; t = t == fwd ? bwd : NULL) {
            t->exposed = t->comm;
            t->hidden = 0.0;
        }
    fsdp_memo *m = &ctx->memo[ctx->next_memo];
    ctx->next_memo = (ctx->next_memo + 1) % FSDP_MEMO;
    if (ctx->n_memo < FSDP_MEMO)
        ctx->n_memo++;
    memcpy(m->count, count, (size_t)w->n_layers * sizeof count[0]);
    m->fwd = *fwd;
    m->bwd = *bwd;
}

/* What fsdp's passes add to a microbatch: the time the compute waits and
 * the share of compute the hidden collectives take. */
static double fsdp_added(const fsdp_time *t, double share)
{
    return t->exposed + share * t->hidden;
}

/* What sets a stage's times: its Transformer blocks, dense and MoE, when
 * the stage split places them, and whether it holds the first or the
 * last stage's layers. Stages alike in these take the same times. */
typedef struct stage_key {
    int64_t blocks, moe;
    bool first, last;
} stage_key;

static stage_key stage_key_of(const stage_times_ctx *ctx, int64_t stage)
{
    stage_key k = {0, 0, stage == 0, stage == ctx->strategy->pp - 1};
    if (ctx->work->first_stage_count >= 0.0)
        work_stage_block_counts(ctx->model, ctx->strategy, stage, &k.blocks, &k.moe);
    return k;
}

static bool same_stage(const stage_key *a, const stage_key *b)
{
    return a->blocks == b->blocks && a->moe == b->moe && a->first == b->first &&
           a->last == b->last;
}

static void price_stage(const stage_times_ctx *ctx, const stage_key *k, sched_stage_time *out)
{
    const work_stage *w = ctx->work;
    bool split = w->first_stage_count >= 0.0;
    *out = (sched_stage_time){0.0, 0.0, 0.0};
    double counts[MAX_KINDS];
    for (int i = 0; i < w->n_layers; i++) {
        const work_layer *l = &w->layers[i];
        double n;
        if (l->where == WORK_FIRST_STAGE)
            n = k->first ? l->count : 0.0;
        else if (l->where == WORK_LAST_STAGE)
            n = k->last ? l->count : 0.0;
        else
            n = !split ? l->count : (double)(l->moe ? k->moe : k->blocks - k->moe);
        counts[i] = n;
        out->fwd += n * ctx->unit[i].fwd;
        out->bwd += n * ctx->unit[i].bwd;
        out->weight += n * ctx->unit[i].weight;
    }
    if (ctx->fsdp) {
        fsdp_time f, b;
        fsdp_stage(ctx, counts, &f, &b);
        double share = overlap_share(ctx->system, ctx->strategy);
        out->fwd += fsdp_added(&f, share);
        out->bwd += fsdp_added(&b, share);
    }
}

static void stage_times(const void *ctx_in, int64_t stage, sched_stage_time *out)
{
    const stage_times_ctx *ctx = ctx_in;
    if (ctx->have_cache) {
        *out = ctx->cached[stage];
    } else {
        stage_key k = stage_key_of(ctx, stage);
        price_stage(ctx, &k, out);
    }
}

/* Fills ctx->cached with every stage's times, pricing a stage only where
 * it differs from the one before (a pipeline's middle stages are alike):
 * once per run of alike stages where the workload lists them. */
static void cache_stages(stage_times_ctx *ctx)
{
    const work_stage *w = ctx->work;
    int64_t pp = ctx->strategy->pp;
    ctx->have_cache = true;
    int n_runs = w->n_stage_runs > 0 && w->stage_runs[w->n_stage_runs - 1].last == pp - 1
                     ? w->n_stage_runs : 0; /* the runs of this pipeline */
    for (int r = 0; r < n_runs; r++) {
        const work_stage_run *run = &w->stage_runs[r];
        stage_key k = {run->blocks, run->moe, run->first == 0, run->last == pp - 1};
        price_stage(ctx, &k, &ctx->cached[run->first]);
        for (int64_t i = run->first + 1; i <= run->last; i++)
            ctx->cached[i] = ctx->cached[run->first];
    }
    if (n_runs > 0)
        return;
    stage_key prev = {0, 0, false, false};
    for (int64_t i = 0; i < pp; i++) {
        stage_key k = stage_key_of(ctx, i);
        if (i > 0 && same_stage(&k, &prev))
            ctx->cached[i] = ctx->cached[i - 1];
        else
            price_stage(ctx, &k, &ctx->cached[i]);
        prev = k;
    }
}

/* The step plan's data-parallel collectives (gradient reductions, ZeRO
 * weight gathers: docs/model.md), priced on the DP group's dimensions.
 * Those that share a window of compute (one microbatch's forward or
 * backward) take turns on the same DP links, so they hide together:
 * their summed time less the window is exposed. */
static void time_data_parallel(const comet_system *sys, const comet_strategy *s,
                               const step_plan *plan, coll_memo *memo, const stage_time *st,
                               comet_result *out)
{
    if (plan->n_comms == 0)
        return;
    double window[PLAN_WINDOW_COUNT] = {0.0, st->fwd, st->bwd};
    double each[PLAN_WINDOW_COUNT] = {0.0}, once[PLAN_WINDOW_COUNT] = {0.0};
    double each_bytes = 0.0, once_bytes = 0.0;
    double t = 0.0;
    for (int i = 0; i < plan->n_comms; i++) {
        const plan_comm *c = &plan->comms[i], *prev = i > 0 ? &plan->comms[i - 1] : NULL;
        /* ZeRO-3's forward and backward gathers are the same collective */
        if (!prev || prev->collective != c->collective || prev->group != c->group ||
            prev->bytes != c->bytes || prev->expert != c->expert) {
            int64_t span[COMET_MAX_DIMS], buf[COMET_MAX_DIMS];
            comet_strategy_grad_spans(s, c->expert, span);
            const int64_t *gap = plan_spacing(sys, s, COMET_GROUP_DP,
                                              c->expert ? PLAN_EXPERT_GRADS : PLAN_DENSE_GRADS, buf);
            t = coll_memo_time(memo, sys, span, gap, c->collective, c->bytes);
        }
        (c->each_micro ? each : once)[c->window] += t;
        *(c->each_micro ? &each_bytes : &once_bytes) += c->bytes;
    }
    double micro = (double)plan->microbatches, comm_each = 0.0, comm_once = 0.0;
    double exposed_each = 0.0, exposed_once = 0.0;
    double share = overlap_share(sys, s);
    for (int w = PLAN_BEHIND_FORWARD; w < PLAN_WINDOW_COUNT; w++) {
        comm_each += each[w];
        comm_once += once[w];
        exposed_each += comet_fmax(0.0, each[w] - window[w]);
        exposed_once += comet_fmax(0.0, once[w] - window[w]);
        /* what hides takes its share of the compute it hides behind */
        if (share > 0.0) {
            exposed_each += share * comet_fmin(each[w], window[w]);
            exposed_once += share * comet_fmin(once[w], window[w]);
        }
    }
    out->dp_bytes += micro * each_bytes + once_bytes;
    out->dp_comm_time += micro * (comm_each + each[PLAN_EXPOSED]) + comm_once + once[PLAN_EXPOSED];
    out->dp_exposed += micro * (exposed_each + each[PLAN_EXPOSED]) + exposed_once +
                       once[PLAN_EXPOSED];
}

static void fill_rates(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                       const work_stage *w, const stage_time *st, double peak, comet_result *out)
{
    double replicas = (double)s->global_batch / (double)s->microbatch;
    out->model_flops = 3.0 * w->fwd_flops_model * replicas;
    double rc_share = st->fwd_flops > 0.0 ? st->recompute_flops / st->fwd_flops : 0.0;
    out->hardware_flops = out->model_flops + rc_share * w->fwd_flops_model * replicas;
    double npus = (double)out->npus;
    out->mfu = out->model_flops / (out->step_time * npus * peak);
    out->hfu = out->hardware_flops / (out->step_time * npus * peak);
    out->tokens_per_s = (double)s->global_batch * (double)comet_model_tokens_per_sample(m) /
                        out->step_time;
    out->samples_per_s = (double)s->global_batch / out->step_time;
    out->tflops_per_npu = out->model_flops / out->step_time / npus / 1e12;
    out->params = w->params_total;

    out->cost = comet_system_cost(sys, out->npus);
    out->cost_per_mtoken_s = out->cost > 0.0 ? out->cost / (out->tokens_per_s / 1e6) : 0.0;
}

comet_status comet_estimate(const comet_model *m, const comet_system *sys,
                            const comet_strategy *s_in, comet_result *out, comet_error *err)
{
    comet_strategy s = *s_in;
    comet_status status = comet_strategy_resolve(m, sys, &s, NULL, err);
    if (status)
        return status;
    work_stage w;
    work_build(m, &s, &w);
    return estimate_prepared(m, sys, &s, &w, false, NULL, NULL, out, err);
}

void estimate_price_layers(const comet_model *m, const comet_system *sys,
                           const comet_strategy *resolved, const work_stage *work,
                           estimate_cache *cache, estimate_layers *out)
{
    out->priced = true;
    hw_rates_init(&out->rates, sys, m->dtype);
    hw_rates_attention(&out->rates, resolved->attention_kernel);
    coll_memo *memo = cache ? &cache->coll : NULL;
    for (int i = 0; i < work->n_layers; i++)
        layer_times_memo(&work->layers[i], &out->rates, sys, resolved, memo, &out->layer[i]);
}

void estimate_cache_init(estimate_cache *c)
{
    fsdp_cache_init(&c->fsdp);
    coll_memo_init(&c->coll);
}

comet_status estimate_prepared(const comet_model *m, const comet_system *sys,
                               const comet_strategy *resolved, const work_stage *work,
                               bool stop_if_no_fit, estimate_cache *cache,
                               estimate_layers *layers, comet_result *out, comet_error *err)
{
    const comet_strategy s = *resolved;
    memset(out, 0, sizeof *out);
    step_plan plan;
    step_plan_memory(m, sys, &s, &plan);
    double micro = (double)plan.microbatches;
    out->npus = comet_strategy_npus(&s);
    out->microbatches = plan.microbatches;

    /* Memory first: a strategy that does not fit needs no timing when the
     * caller (the strategy search) only ranks the ones that do. */
    footprint fp;
    footprint_compute(sys, &s, work, &plan, &fp, out);
    if (stop_if_no_fit && !out->feasible)
        return COMET_OK;
    step_plan_traffic(sys, &s, cache ? &cache->coll : NULL, work, &plan);

    estimate_layers own;
    if (!layers) {
        own.priced = false;
        layers = &own;
    }
    if (!layers->priced)
        estimate_price_layers(m, sys, &s, work, cache, layers);
    const hw_rates *r = &layers->rates;

    coll_memo *memo = cache ? &cache->coll : NULL;
    stage_time st;
    memset(&st, 0, sizeof st);
    kind_time unit[MAX_KINDS];
    for (int i = 0; i < work->n_layers; i++)
        time_layer(&work->layers[i], work, &layers->layer[i], sys, &s, &st, &unit[i]);
    /* the schedule sees every stage when they differ (docs/model.md,
     * uneven stages) */
    stage_times_ctx stages; /* its cache filled only as far as used */
    fsdp_ctx fsdp;
    stages.model = m;
    stages.system = sys;
    stages.strategy = &s;
    stages.work = work;
    stages.plan = &plan;
    stages.unit = unit;
    stages.fsdp = NULL;
    stages.passes = cache ? &cache->fsdp : NULL;
    stages.memo = memo;
    stages.have_cache = false;
    /* ZeRO 3 under fsdp: the layers' gathers and reduce-scatters, inside
     * every microbatch (docs/model.md, frameworks) */
    double fsdp_micro = 0.0;
    if (plan.dp.per_layer) {
        memset(fsdp.priced, 0, sizeof fsdp.priced);
        fsdp.n_memo = fsdp.next_memo = 0;
        stages.fsdp = &fsdp;
        double counts[MAX_KINDS];
        double bytes = 0.0;
        for (int i = 0; i < work->n_layers; i++) {
            const work_layer *l = &work->layers[i];
            counts[i] = work_on_busiest(work, &s, l) ? l->count : 0.0;
            if (!l->model_parallel)
                bytes += counts[i] * l->params * (2.0 * plan.dp.weight_bytes + plan.dp.grad_bytes);
        }
        fsdp_time f, b;
        fsdp_stage(&stages, counts, &f, &b);
        double share = overlap_share(sys, &s);
        fsdp_micro = fsdp_added(&f, share) + fsdp_added(&b, share);
        out->dp_comm_time += micro * (f.comm + b.comm);
        out->dp_exposed += micro * fsdp_micro;
        out->dp_bytes += micro * bytes;
    }

    out->forward = micro * st.fwd;
    out->backward = micro * st.bwd;
    out->recompute = micro * st.recompute;
    out->tp_comm_time = micro * st.comm[COMET_GROUP_TP];
    out->tp_bytes = micro * st.bytes[COMET_GROUP_TP];
    out->pp_bytes = micro * st.bytes[COMET_GROUP_PP] + micro * plan.send.per_micro * plan.send.bytes;
    out->dp_bytes += micro * st.bytes[COMET_GROUP_DP];
    out->tp_exposed = micro * st.exposed[COMET_GROUP_TP];
    double per_micro = st.fwd + st.bwd + st.recompute + st.exposed[COMET_GROUP_TP] +
                       st.exposed[COMET_GROUP_PP] + st.exposed[COMET_GROUP_DP] +
                       st.exposed[COMET_GROUP_EP] + st.exposed[COMET_GROUP_CP] + fsdp_micro;
    if (s.pp > 1 && s.pp <= STAGE_CACHE && s.interleave == 1)
        cache_stages(&stages);
    /* DualPipe's F&B (docs/model.md, DualPipe): a forward and a backward
     * overlapped, each one's all-to-alls beside the other's compute; what
     * hides takes its share of that compute (overlap contention, 7.6) */
    double share = overlap_share(sys, &s);
    double ep_micro = st.exposed[COMET_GROUP_EP], rest = per_micro - ep_micro;
    sched_micro t = {.total = per_micro, .weight = st.wgrad, .count = micro,
                     .fwd = st.fwd + st.fwd_exposed,
                     .paired = rest + comet_fmax(0.0, ep_micro - rest) +
                               share * comet_fmin(ep_micro, rest),
                     .stage = s.pp > 1 ? stage_times : NULL, .stage_ctx = &stages};
    out->bubble = sched_of(&s)->bubble(&s, &t);

    /* Layers' own collectives on the PP and DP groups (e.g. a DLRM
     * embedding all-to-all) run inside every microbatch. */
    double sends_micro = 0.0;
    out->pp_comm_time = micro * st.comm[COMET_GROUP_PP];
    out->pp_exposed = micro * st.exposed[COMET_GROUP_PP];
    if (plan.send.per_micro > 0.0) {
        double latency, transfer;
        comet_p2p_parts_on(sys, plan.send.dim, plan.send.bytes, &latency, &transfer);
        double hop = latency + transfer * plan.send.load;
        out->pp_comm_time += micro * plan.send.per_micro * hop;
        out->pp_exposed += micro * plan.send.per_micro * hop;
        sends_micro = plan.send.per_micro * hop;
    }
    /* Mixture of experts: the dispatch and combine all-to-alls on the EP
     * group block the layer's compute (docs/model.md, Mixture of experts). */
    out->ep_comm_time = micro * st.comm[COMET_GROUP_EP];
    out->ep_exposed = micro * st.exposed[COMET_GROUP_EP];
    out->ep_bytes = micro * st.bytes[COMET_GROUP_EP];
    /* the pairs' all-to-alls and pipeline sends hide behind the pairs'
     * compute: per pair min(comm, compute)(1 - share) less exposed */
    double pairs = sched_overlapped_pairs(&s, plan.microbatches);
    double pair_comm = ep_micro + sends_micro;
    if (pairs > 0.0 && pair_comm > 0.0) {
        double hidden = pairs * comet_fmin(pair_comm, rest) * (1.0 - share);
        out->ep_exposed -= hidden * ep_micro / pair_comm;
        out->pp_exposed -= hidden * sends_micro / pair_comm;
    }
    /* Context parallelism's exchange (ring sends or Ulysses all-to-alls)
     * is the blocks' model-parallel communication beside TP's: reported
     * within the tp_* figures, and apart in cp_* (docs/model.md). */
    out->cp_comm_time = micro * st.comm[COMET_GROUP_CP];
    out->cp_exposed = micro * st.exposed[COMET_GROUP_CP];
    out->cp_bytes = micro * st.bytes[COMET_GROUP_CP];
    out->tp_comm_time += out->cp_comm_time;
    out->tp_exposed += out->cp_exposed;
    out->tp_bytes += out->cp_bytes;
    time_data_parallel(sys, &s, &plan, memo, &st, out);
    out->dp_comm_time += micro * st.comm[COMET_GROUP_DP];
    out->dp_exposed += micro * st.exposed[COMET_GROUP_DP];

    /* the stage updates every copy of its parameters it holds (DualPipe 2) */
    double copies = (double)sched_copies(&s);
    double opt_bytes = plan_optimizer_bytes(&plan, work, copies * work->params_npu,
                                            copies * work->params_expert_npu);
    out->optimizer = hw_optimizer_time(r, opt_bytes * (1.0 - fp.optimizer_offloaded));

    /* Expansion-tier traffic: the optimizer step on offloaded state (and
     * its read of offloaded gradients) is serial; streamed weights,
     * activations and gradients prefetch behind compute. */
    double exp_bw = plan.expansion.bandwidth;
    if (exp_bw > 0.0) {
        double latency = plan.expansion.latency;
        double serial = plan_expansion_time(&plan.expansion, opt_bytes * fp.optimizer_offloaded) +
                        plan_expansion_time(&plan.expansion, fp.grad_bytes);
        /* Streamed traffic shares the tier's one channel: each pass's
         * share hides only behind that pass's compute (activations written
         * in forward must be out before backward reads them back); the
         * updated weights' write-back at the end is serial. Offloaded
         * gradients are backward traffic only: written in every
         * microbatch's backward, and read back to accumulate from the
         * second on (grad, one way). */
        double pass = fp.pass_bytes / exp_bw + fp.pass_transfers * latency;
        double grad = fp.grad_bytes / exp_bw + fp.grad_transfers * latency;
        double last = fp.final_bytes / exp_bw + fp.final_transfers * latency;
        double bwd = st.bwd + st.recompute;
        out->offload_time = serial + micro * 2.0 * pass + (2.0 * micro - 1.0) * grad + last;
        out->offload_exposed = serial + last + micro * comet_fmax(0.0, pass - st.fwd) +
                               comet_fmax(0.0, pass + grad - bwd) +
                               (micro - 1.0) * comet_fmax(0.0, pass + 2.0 * grad - bwd);
    }

    out->step_time = out->forward + out->backward + out->recompute + out->optimizer + out->bubble +
                     out->tp_exposed + out->pp_exposed + out->dp_exposed + out->offload_exposed +
                     out->ep_exposed;
    double peak = r->matrix;
    fill_rates(m, sys, &s, work, &st, peak, out);
    /* The readers bound every input, so this only trips on combinations
     * of extremes; an answer of inf or NaN is never returned. */
    if (!(isfinite(out->step_time) && out->step_time > 0.0 && isfinite(out->cost) &&
          isfinite(out->mem_total[COMET_TIER_HBM]) && isfinite(out->mfu)))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "these inputs put the step time or memory outside what a double "
                               "holds (step time %g s); check the sizes and rates",
                               out->step_time);
    return COMET_OK;
}
