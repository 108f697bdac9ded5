/* Event-driven simulation of one training step. The step becomes a task
 * graph over the pipeline stages (NPUs of one stage behave alike under TP
 * and DP, so one NPU per stage is simulated): per stage a compute stream,
 * a TP stream, forward and backward p2p links and a DP stream. Every pass
 * of every microbatch through every virtual stage (model chunk) is a chain
 * of per-layer compute and TP collective tasks priced by src/cost/'s
 * layer_times, as the estimate's are (one source for FLOPs and bytes); the
 * compute stream runs the pipeline schedule's program (src/schedule/:
 * Megatron's 1F1B or interleaved 1F1B, or ZB-H1, whose backward is two
 * passes, input gradient and weight gradient); pipeline sends link stages; the
 * step plan's data-parallel items (src/cost/step_plan.c) become gradient
 * buckets that start as each layer's last backward ends (ZeRO-2/3 reduce every microbatch, ZeRO-3 gathers
 * weights ahead of each layer, ZeRO-1/2 under Megatron ahead of the first
 * forward); TP overlap keeps the estimate's exposed share on the compute
 * stream (src/cost/cost.h); offloaded weights, activations and
 * gradients move on a memory stream (the expansion tier); the optimizer
 * step closes the stage.
 * Under congestion every collective and send becomes chunks of
 * per-dimension phases on the stage's network links, which are shared
 * resources: collectives that meet on a link split its bandwidth.
 * sim_step_graph_build hands the same graph, one task per collective and
 * each collective's size recorded, to the Chakra exporter. */
#include "comet/simulate.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/network.h"
#include "../cost/cost.h"
#include "../schedule/schedule.h"
#include "sim.h"
#include "phases.h"
#include "chrome_trace.h"

enum { R_COMPUTE = STEP_R_COMPUTE, R_TP = STEP_R_TP, R_PP_FWD = STEP_R_PP_FWD,
       R_PP_BWD = STEP_R_PP_BWD, R_DP = STEP_R_DP, R_MEM = STEP_R_MEM,
       R_PER_STAGE = STEP_R_PER_STAGE };
enum { K_FWD = STEP_K_FWD, K_BWD = STEP_K_BWD, K_RECOMPUTE = STEP_K_RECOMPUTE, K_TP = STEP_K_TP,
       K_SEND_FWD = STEP_K_SEND_FWD, K_SEND_BWD = STEP_K_SEND_BWD, K_DP = STEP_K_DP,
       K_OPTIMIZER = STEP_K_OPTIMIZER, K_GATHER = STEP_K_GATHER,
       K_LOAD_WEIGHTS = STEP_K_LOAD_WEIGHTS, K_STORE_ACT = STEP_K_STORE_ACT,
       K_LOAD_ACT = STEP_K_LOAD_ACT, K_OPT_STATE = STEP_K_OPT_STATE,
       K_STORE_WEIGHTS = STEP_K_STORE_WEIGHTS, K_STORE_GRAD = STEP_K_STORE_GRAD,
       K_LOAD_GRAD = STEP_K_LOAD_GRAD };

static const char *const kind_names[] = {
    "forward",         "backward",          "recompute",          "tp collective",
    "send activation", "send gradient",     "dp collective",      "optimizer",
    "zero gather",     "load weights",      "store activations",  "load activations",
    "optimizer state", "store weights",     "store gradients",    "load gradients"};

/* What a simulated step adds to the task graph's own model: its transfers
 * run as flows on the fabric, Themis ordering chunks under congestion. */
typedef struct step_mode {
    sim_fabric_step *fabric;
    bool themis;
} step_mode;

/* A run of layers of one kind on a virtual stage. */
typedef struct segment {
    int kind;            /* index into work.layers */
    double count;        /* layers it stands for (1 for transformer blocks) */
    int layer;           /* global layer number, for names */
} segment;

typedef struct builder {
    const comet_model *m;
    const comet_system *sys;
    const comet_strategy *s;
    work_stage work;
    hw_rates rates;
    layer_time lt[4 + COMET_MAX_LAYER_KINDS];
    int p, v, vstages;
    int64_t micro;       /* microbatches simulated (fewer than the step's when extrapolating) */
    segment *segs;       /* one virtual stage's segments (pass, epilogue) */
    int max_segs;
    step_plan plan;      /* the step's own items, as the estimator prices them */
    footprint fp;        /* what lives in the expansion tier (cost's footprint, as the estimate) */
    bool congestion;
    /* Themis under congestion: each chunk's dimensions ordered to keep the
     * stage's most loaded link least loaded (work assigned so far, per
     * stage and dimension); NULL: the dimensions in order */
    double *themis_load;
    bool split_tp;       /* one task per TP collective, each recorded (export, fabric) */
    step_coll *coll;     /* per task, when recording collectives (export) */
    int coll_cap;
    int per_stage;       /* resources per stage: the streams, then one link per dimension */
    sim_graph g;
    /* per (microbatch, virtual stage): first and last task of each pass, the
     * sends, and the last activation store to the expansion tier */
    int *fwd_first, *fwd_last, *bwd_first, *bwd_last, *send_fwd, *send_bwd, *act_store;
    int *wgt_last;       /* ... and the last task of a split backward's W pass */
    int *pair_of;        /* F&B: a paired forward's cell, its backward's cell */
    int *dp_last;        /* per stage: last DP task before the optimizer */
    int *seg_gather;     /* per-layer ZeRO 3: each segment's gather in the current pass */
    int *pass_end;       /* per stage: the last task of the stage's latest pass */
    /* TP overlap under congestion or on the fabric: the layers' TP
     * collectives run whole on their links beside the compute, which waits
     * only for what the estimate leaves exposed of them; the pass ends
     * once its last one is done (tp_pending, per stage) */
    bool tp_behind;
    int *tp_pending;
    /* DualPipe's F&B (sched_pass.overlapped): the pass being built is one
     * of a forward-backward pair, whose all-to-alls run on the stage's
     * TP stream beside the pair's compute (docs/model.md, DualPipe);
     * side_last, per stage, the last of them not yet joined */
    bool paired;
    int *side_last;
    bool oom;
} builder;

static int idx(const builder *b, int64_t mb, int vs)
{
    return (int)(mb * b->vstages + vs);
}

static int res(const builder *b, int stage, int kind)
{
    return stage * b->per_stage + kind;
}

/* Segments one virtual stage can hold: every layer kind, and the blocks
 * of the largest model chunk. */
static int segments_max(const builder *b)
{
    int64_t blocks = 0;
    for (int vs = 0; b->m->kind == COMET_MODEL_TRANSFORMER && vs < b->vstages; vs++) {
        int64_t n = work_chunk_blocks(b->m, b->s, vs);
        blocks = n > blocks ? n : blocks;
    }
    return (int)(b->work.n_layers * (blocks + 1) + 1);
}

/* Segments of virtual stage vs: embedding first, blocks, LM head last;
 * layer lists carry every kind, 1/(pp v) of its count. */
static int segments_of(const builder *b, int vs, segment *out)
{
    int n = 0;
    const work_stage *w = &b->work;
    bool transformer = b->m->kind == COMET_MODEL_TRANSFORMER;
    int64_t total = transformer ? b->m->layers : 0;
    int64_t blocks = transformer ? work_chunk_blocks(b->m, b->s, vs) : 0;
    int64_t first_layer = transformer ? work_chunk_first_block(b->m, b->s, vs) : 0;
    int cap = b->max_segs;
    /* a Transformer's every-stage kinds: the dense block, and the MoE
     * block for the layers comet_model_is_moe_layer names; the blocks
     * take the dense kind's place in the order of kinds */
    int moe = -1;
    for (int k = 0; transformer && k < w->n_layers; k++)
        if (w->layers[k].where == WORK_EVERY_STAGE && w->layers[k].moe)
            moe = k;
    for (int k = 0; k < w->n_layers && n < cap; k++) {
        const work_layer *l = &w->layers[k];
        if (b->m->kind != COMET_MODEL_TRANSFORMER) {
            out[n++] = (segment){k, l->count * b->p / b->vstages, k};
            continue;
        }
        if (l->where == WORK_FIRST_STAGE && vs == 0)
            out[n++] = (segment){k, 1.0, -1};
        if (l->where == WORK_EVERY_STAGE && !l->moe)
            for (int64_t i = 0; i < blocks && n < cap; i++) {
                int64_t layer = first_layer + i;
                int kind = moe >= 0 && comet_model_is_moe_layer(b->m, layer) ? moe : k;
                out[n++] = (segment){kind, 1.0, (int)layer};
            }
    }
    /* the LM head ends the last virtual stage */
    for (int k = 0; b->m->kind == COMET_MODEL_TRANSFORMER && k < w->n_layers; k++)
        if (w->layers[k].where == WORK_LAST_STAGE && vs == b->vstages - 1 && n < cap)
            out[n++] = (segment){k, 1.0, (int)total};
    return n;
}

static int task(builder *b, int stage, int kind_res, double dur, int kind, int64_t mb, int layer,
                int after)
{
    /* Without TP overlap the TP collectives block the compute stream, as
     * Megatron runs them; with it they have a stream of their own. */
    if (kind_res == R_TP && !b->s->overlap_tp)
        kind_res = R_COMPUTE;
    int id = sim_add_task(&b->g, res(b, stage, kind_res), dur, (uint8_t)kind, stage, (int)mb,
                          layer);
    if (id < 0 || sim_add_dep(&b->g, after, id))
        b->oom = true;
    return id;
}

/* Under congestion: a collective of `bytes` over group grp as chunks of
 * per-dimension phases on the stage's shared links (each chunk waits for
 * the previous one on every dimension, as one active chunk does), closed
 * by a zero-length task on `stream` so the stream waits for it in program
 * order. Returns that task. */
static int chunked(builder *b, int stage, int stream, const int64_t span[COMET_MAX_DIMS],
                   const int64_t *spacing, comet_collective c, double bytes, double outer,
                   int kind, int64_t mb, int layer, int after)
{
    comet_link links[COMET_MAX_DIMS];
    int map[COMET_MAX_DIMS], order[COMET_MAX_DIMS];
    int m = comet_span_links_placed(b->sys, span, spacing, links, map);
    if (m == 0 || !(bytes > 0.0))
        return task(b, stage, stream, 0.0, kind, mb, layer, after);
    int64_t k = comet_collective_chunks_split(b->sys, span, c, bytes, outer);
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    int behind[MAX_PHASES];
    for (int i = 0; i < MAX_PHASES; i++)
        behind[i] = -1;
    int ends[64], n_ends = 0;
    double *load = b->themis_load ? b->themis_load + (size_t)stage * COMET_MAX_DIMS : NULL;
    double by_link[COMET_MAX_DIMS];
    for (int i = 0; load && i < m; i++)
        by_link[i] = load[map[i]];
    for (int64_t ci = 0; ci < k; ci++) {
        chunk ch;
        sim_next_chunk(&o, load ? by_link : NULL, links, m, c, bytes / (double)k,
                       outer / (double)k, order, &ch);
        int prev = after, ids[MAX_PHASES];
        for (int i = 0; i < ch.n_phases; i++) {
            int id = sim_add_task(&b->g, res(b, stage, R_PER_STAGE + map[ch.phases[i].dim]),
                                  ch.phases[i].fixed, (uint8_t)kind, stage, (int)mb, layer);
            if (id < 0) {
                b->oom = true;
                return -1;
            }
            sim_set_work(&b->g, id, ch.phases[i].bw);
            if (sim_add_dep(&b->g, prev, id) || sim_add_dep(&b->g, behind[i], id))
                b->oom = true;
            behind[i] = prev = ids[i] = id;
            if (ch.phases[i].tail > 0.0) {
                /* a chain's last pieces: the next chunk's phase follows
                 * the held part, this chunk's next phase the drain */
                prev = sim_add_task(&b->g, res(b, stage, R_PER_STAGE + map[ch.phases[i].dim]),
                                    ch.phases[i].tail, (uint8_t)kind, stage, (int)mb, layer);
                if (prev < 0 || sim_add_dep(&b->g, id, prev)) {
                    b->oom = true;
                    return -1;
                }
            }
        }
        /* a kept phase's dimension is the chunk's until its next phase there */
        for (int i = 0; i < ch.n_phases; i++)
            if (ch.phases[i].keep_to > 0)
                behind[i] = ids[ch.phases[i].keep_to];
        if (n_ends < 64)
            ends[n_ends++] = prev;
        else
            ends[63] = prev;
    }
    for (int i = 0; load && i < m; i++)
        load[map[i]] = by_link[i];
    int join = task(b, stage, stream, 0.0, kind, mb, layer, -1);
    for (int i = 0; i < n_ends; i++)
        if (sim_add_dep(&b->g, ends[i], join))
            b->oom = true;
    return join;
}

/* What task id moves, recorded for the export (a graph built for it):
 * a collective's kind, group and bytes, or an expansion transfer's bytes. */
static void record(builder *b, int id, step_coll what)
{
    if (id < 0 || b->coll_cap < 0 || !b->split_tp || b->g.count_only)
        return;
    if (id >= b->coll_cap) {
        int cap = 2 * id + 1024;
        step_coll *p = realloc(b->coll, sizeof *p * (size_t)cap);
        if (!p) {
            b->oom = true;
            return;
        }
        for (int i = b->coll_cap; i < cap; i++)
            p[i] = (step_coll){COMET_COLL_NONE, COMET_GROUP_TP, 0.0, STEP_ON_GROUP, 0.0};
        b->coll = p;
        b->coll_cap = cap;
    }
    b->coll[id] = what;
}

/* Which ranks a recorded task's traffic is on (the export's groups). */
static void record_on(builder *b, int id, step_on on)
{
    if (id >= 0 && id < b->coll_cap && b->split_tp && !b->g.count_only)
        b->coll[id].on = on;
}

/* A collective over the ranks spanning span[] (group grp's, or a
 * gradient group's): one task costing its closed form on `stream`, or
 * under congestion its chunks on the links. */
static int collective_on(builder *b, int stage, int stream, const int64_t span[COMET_MAX_DIMS],
                         const int64_t spacing[COMET_MAX_DIMS], comet_group grp,
                         comet_collective c, double bytes, double outer, int kind, int64_t mb,
                         int layer, int after)
{
    if (b->congestion)
        return chunked(b, stage, stream == R_TP && !b->s->overlap_tp ? R_COMPUTE : stream, span,
                       spacing, c, bytes, outer, kind, mb, layer, after);
    double t = comet_collective_time_placed(b->sys, span, spacing, c, bytes, outer);
    int id = task(b, stage, stream, t, kind, mb, layer, after);
    record(b, id, (step_coll){c, grp, bytes, STEP_ON_GROUP, outer});
    return id;
}

static int collective(builder *b, int stage, int stream, comet_group grp, comet_collective c,
                      double bytes, double outer, int kind, int64_t mb, int layer, int after)
{
    int64_t buf[COMET_MAX_DIMS];
    const int64_t *gap = plan_spacing(b->sys, b->s, grp, PLAN_GROUP_RANKS, buf);
    return collective_on(b, stage, stream, b->s->place[grp], gap, grp, c, bytes, outer, kind, mb,
                         layer, after);
}

/* A data-parallel collective (gradient reduction or ZeRO gather) of
 * `params` parameters at `per_param` bytes each, `expert` of them expert
 * parameters: over the dense gradient group (dp x cp), and with expert
 * parallelism the expert part apart over the expert-DP group, after it
 * (comet_strategy_grad_spans); each part as messages of at most `bucket`
 * parameters, one after another (plan_messages; 0: one message). Returns
 * the last task, or `after` when nothing is reduced. */
static int dp_collective(builder *b, int stage, int stream, comet_collective c, double params,
                         double expert, double per_param, double bucket, int kind, int64_t mb,
                         int layer, int after)
{
    const plan_dp *dp = &b->plan.dp;
    int64_t span[COMET_MAX_DIMS], buf[COMET_MAX_DIMS];
    const int64_t *spacing;
    double apart = dp->expert_apart ? expert : 0.0;
    int last = after;
    if (dp->active) {
        comet_strategy_grad_spans(b->s, false, span);
        spacing = plan_spacing(b->sys, b->s, COMET_GROUP_DP, PLAN_DENSE_GRADS, buf);
        double n = plan_messages(params - apart, bucket);
        for (double i = 0.0; i < n; i++) {
            last = collective_on(b, stage, stream, span, spacing, COMET_GROUP_DP, c,
                                 (params - apart) * per_param / n, 0.0, kind, mb, layer,
                                 i > 0.0 ? last : after);
            record_on(b, last, STEP_ON_GRADS);
        }
    }
    if (dp->expert_active && apart > 0.0) {
        comet_strategy_grad_spans(b->s, true, span);
        spacing = plan_spacing(b->sys, b->s, COMET_GROUP_DP, PLAN_EXPERT_GRADS, buf);
        double n = plan_messages(apart, bucket);
        for (double i = 0.0; i < n; i++) {
            last = collective_on(b, stage, stream, span, spacing, COMET_GROUP_DP, c,
                                 apart * per_param / n,
                                 0.0, kind, mb, layer, last);
            record_on(b, last, STEP_ON_EXPERT_GRADS);
        }
    }
    return last;
}

/* A layer's own collectives in one pass, blocking the compute that
 * follows: TP ones, and those of other groups (a DLRM embedding
 * all-to-all on the DP group, context parallelism's exchange). All of
 * them run on the TP stream, which only ever holds such blocking
 * collectives, so they do not queue behind the DP stream's gradient
 * buckets: groups do not contend unless links are shared (congestion mode
 * routes each on its group's links). */
static int layer_comms(builder *b, int stage, const segment *sg, int pass_kind, int64_t mb,
                       int after)
{
    static const int kind[COMET_GROUP_COUNT] = {
        [COMET_GROUP_TP] = K_TP, [COMET_GROUP_PP] = K_SEND_FWD, [COMET_GROUP_DP] = K_DP,
        [COMET_GROUP_CP] = K_TP, [COMET_GROUP_EP] = K_TP};
    const layer_time *lt = &b->lt[sg->kind];
    const work_layer *l = &b->work.layers[sg->kind];
    int prev = after;
    for (int g = 0; g < COMET_GROUP_COUNT; g++) {
        double t = pass_kind == K_FWD ? lt->comm_fwd[g]
                 : pass_kind == K_BWD ? lt->comm_bwd[g]
                                      : lt->comm_rc[g];
        /* Ring context parallelism: its sends overlap the attention core
         * inside the layer (cost's cp_ring_times); what they take beyond
         * it, the closed form's exposed time, blocks here as one task, in
         * every mode (docs/model.md, context parallelism). For the export
         * the task is there (and recorded) even when nothing is exposed:
         * it becomes the ring's sends and receives (a zero-length task
         * adds no time). */
        bool ring = g == COMET_GROUP_CP && l->cp_kv_bytes > 0.0;
        bool ring_pass = ring && (pass_kind != K_RECOMPUTE || b->s->recompute == COMET_RECOMPUTE_FULL);
        if (!(t > 0.0) && !(ring_pass && b->split_tp))
            continue;
        if ((!b->congestion && !b->split_tp) || ring) {
            /* TP overlap: each pass keeps its share of what stays exposed
             * behind the layer's GEMMs, as the estimate prices it (with
             * congestion or flows the collectives run whole, on links) */
            if (g == COMET_GROUP_TP && b->s->overlap_tp) {
                double comm = lt->comm_fwd[g] + lt->comm_bwd[g] + lt->comm_rc[g];
                t *= layer_tp_exposed(b->sys, b->s, comm, layer_gemm_window(l, b->s, lt)) / comm;
            }
            if (b->paired && g == COMET_GROUP_EP) {
                /* beside the compute: the pass's compute goes on (the
                 * pair's other pass fills it), its end joins them */
                int id = sim_add_task(&b->g, res(b, stage, R_TP), t * sg->count, (uint8_t)kind[g],
                                      stage, (int)mb, sg->layer);
                if (id < 0 || sim_add_dep(&b->g, prev, id))
                    b->oom = true;
                b->side_last[stage] = id;
                continue;
            }
            prev = task(b, stage, R_TP, t * sg->count, (uint8_t)kind[g], mb, sg->layer, prev);
            if (ring)
                record(b, prev, (step_coll){COMET_COLL_NONE, COMET_GROUP_CP,
                                            l->cp_kv_bytes * sg->count,
                                            pass_kind == K_BWD ? STEP_ON_RING_BWD
                                                               : STEP_ON_RING_FWD,
                                            0.0});
            continue;
        }
        bool behind = g == COMET_GROUP_TP && b->tp_behind;
        /* behind the compute they go out in order: after the compute
         * before them and the TP collectives issued before */
        int issued = prev;
        if (behind && b->tp_pending[stage] >= 0) {
            issued = task(b, stage, R_TP, 0.0, (uint8_t)kind[g], mb, sg->layer, prev);
            sim_add_dep(&b->g, b->tp_pending[stage], issued);
        }
        for (int i = 0; i < l->n_comms; i++) {
            const work_comm *c = &l->comms[i];
            bool in_pass = pass_kind == K_FWD ? c->in_forward
                         : pass_kind == K_BWD ? c->in_backward
                                              : c->recomputed &&
                                                    b->s->recompute == COMET_RECOMPUTE_FULL;
            if ((int)c->group != g || !in_pass)
                continue;
            int id = collective(b, stage, R_TP, c->group, c->collective, c->bytes * sg->count,
                                c->outer_bytes * sg->count, kind[g], mb, sg->layer,
                                behind ? issued : prev);
            if (behind)
                b->tp_pending[stage] = issued = id;
            else
                prev = id;
        }
        if (behind) {
            double comm = lt->comm_fwd[g] + lt->comm_bwd[g] + lt->comm_rc[g];
            double exposed = layer_tp_exposed(b->sys, b->s, comm, layer_gemm_window(l, b->s, lt));
            prev = task(b, stage, R_COMPUTE, t * exposed / comm * sg->count, (uint8_t)kind[g],
                        mb, sg->layer, prev);
        }
    }
    return prev;
}

/* Where data-parallel collectives run: the DP stream when they may
 * overlap compute, else the compute stream, which they block. */
static int dp_stream(const builder *b)
{
    return b->plan.dp.overlap ? R_DP : R_COMPUTE;
}

/* ZeRO-3: gather a segment's weights ahead of using them (with overlap,
 * prefetched: the gathers queue on the DP stream, the compute waits for
 * its own; without, each blocks the compute stream before its use),
 * once `after` is done (-1: at once). */
static int gather(builder *b, int stage, const segment *sg, int64_t mb, int after)
{
    const plan_dp *dp = &b->plan.dp;
    const work_layer *wl = &b->work.layers[sg->kind];
    if (!dp->active || !dp->gather_each_pass || wl->model_parallel)
        return -1;
    return dp_collective(b, stage, dp_stream(b), COMET_COLL_ALL_GATHER, wl->params * sg->count,
                         wl->expert_params * sg->count, dp->weight_bytes,
                         dp->per_layer ? dp->gather_bucket : 0.0, K_GATHER, mb, sg->layer, after);
}

/* A pipeline send: latency + bytes/bandwidth on the outermost dimension
 * the pipeline spans; under congestion, on that link, shared. */
static int send_hop(builder *b, int stage, bool forward, int64_t mb, int after)
{
    int stream = forward ? R_PP_FWD : R_PP_BWD, kind = forward ? K_SEND_FWD : K_SEND_BWD;
    const plan_send *send = &b->plan.send;
    double latency, transfer;
    comet_p2p_parts_on(b->sys, send->dim, send->bytes, &latency, &transfer);
    transfer *= send->load;
    if (!b->congestion)
        return task(b, stage, stream, latency + transfer, kind, mb, -1, after);
    int hop = sim_add_task(&b->g, res(b, stage, R_PER_STAGE + send->dim), latency, (uint8_t)kind,
                           stage, (int)mb, -1);
    if (hop < 0 || sim_add_dep(&b->g, after, hop)) {
        b->oom = true;
        return -1;
    }
    sim_set_work(&b->g, hop, transfer);
    return task(b, stage, stream, 0.0, kind, mb, -1, hop);
}

/* A transfer to or from the expansion tier on the stage's memory stream,
 * priced by the plan (latency + bytes at one NPU's share of the tier's
 * bandwidth). -1 when nothing moves. */
static int memory(builder *b, int stage, double bytes, int kind, int64_t mb, int layer,
                  int after)
{
    if (!(bytes > 0.0) || !(b->plan.expansion.bandwidth > 0.0))
        return -1;
    int id = task(b, stage, R_MEM, plan_expansion_time(&b->plan.expansion, bytes), kind, mb, layer,
                  after);
    record(b, id, (step_coll){COMET_COLL_NONE, COMET_GROUP_TP, bytes, STEP_ON_GROUP, 0.0});
    return id;
}

/* Offloaded weights of a segment, streamed in for a pass; under ZeRO-3
 * only this NPU's shard lives in the tier, the gather brings the rest. */
static int load_weights(builder *b, int stage, const segment *sg, int64_t mb)
{
    const work_layer *wl = &b->work.layers[sg->kind];
    const plan_dp *dp = &b->plan.dp;
    double held = wl->model_parallel ? wl->params * sg->count
                                     : plan_held(wl->params * sg->count,
                                                 wl->expert_params * sg->count, dp->weight_shards,
                                                 dp->expert_weight_shards);
    return memory(b, stage, held * dp->weight_bytes * b->fp.weights_offloaded, K_LOAD_WEIGHTS, mb,
                  sg->layer, -1);
}

/* A segment's gradients held by this NPU (its ZeRO shard, as the
 * footprint's) that live in the expansion tier. */
static double offloaded_grads(const builder *b, double params, double expert, double params_mp)
{
    const plan_dp *dp = &b->plan.dp;
    return (plan_held(params, expert, dp->grad_shards, dp->expert_grad_shards) + params_mp) *
           dp->grad_bytes * b->fp.gradients_offloaded;
}

/* Offloaded gradients stream out as backward produces them: from the
 * second microbatch on the segment's partial sums are read back first to
 * accumulate into, then written (cost's footprint, grad_bytes). */
static void stream_grads(builder *b, int stage, const segment *sg, int64_t mb, int grad)
{
    const work_layer *wl = &b->work.layers[sg->kind];
    double bytes = wl->model_parallel
                       ? offloaded_grads(b, 0.0, 0.0, wl->params * sg->count)
                       : offloaded_grads(b, wl->params * sg->count, wl->expert_params * sg->count,
                                         0.0);
    int read = mb > 0 ? memory(b, stage, bytes, K_LOAD_GRAD, mb, sg->layer, grad) : -1;
    memory(b, stage, bytes, K_STORE_GRAD, mb, sg->layer, read >= 0 ? read : grad);
}

/* Gradient buckets on the DP stream, as each layer's gradients are ready
 * (after its whole backward, or after its W): in the last microbatch, or
 * in every one when ZeRO keeps only a shard of the gradients. */
static void dp_bucket(builder *b, int stage, const segment *sg, int64_t mb, bool last_mb, int grad)
{
    const plan_dp *dp = &b->plan.dp;
    const work_layer *wl = &b->work.layers[sg->kind];
    if (dp->active && dp->overlap && (last_mb || dp->reduce_each_micro) && !wl->model_parallel)
        b->dp_last[stage] = dp_collective(b, stage, R_DP, dp->reduce, wl->params * sg->count,
                                          wl->expert_params * sg->count, dp->grad_bytes,
                                          dp->per_layer ? dp->reduce_bucket : 0.0, K_DP, mb,
                                          sg->layer, grad);
}

/* ZeRO 1/2 under framework megatron with overlap: the weights updated at
 * the end of a step are gathered behind the next step's first forward
 * (the estimate's gather_window, docs/model.md 7.4). One step is
 * simulated in its steady state: its first forward gathers, segment by
 * segment on the DP stream, what the step before it updated, and waits
 * for each segment's gather; nothing is gathered after the optimizer. */
static bool weights_behind_forward(const builder *b)
{
    const plan_dp *dp = &b->plan.dp;
    return dp->active && dp->overlap && dp->gather_after_step &&
           dp->gather_window == PLAN_BEHIND_FORWARD;
}

/* Whether stage `stage` runs microbatch mb's virtual stage vs. */
static bool on_stage(const builder *b, int64_t mb, int vs, int stage)
{
    int64_t st, piece;
    sched_place(b->s, mb, vs, &st, &piece);
    return st == stage;
}

/* Whether no earlier microbatch runs virtual stage vs on the same stage
 * (the first to meet that piece's weights); the paths alternate within a
 * round of microbatches. */
static bool first_through(const builder *b, int64_t mb, int vs)
{
    int64_t st, piece, round = sched_of(b->s)->round(b->s);
    sched_place(b->s, mb, vs, &st, &piece);
    for (int64_t earlier = mb - 1; earlier >= 0 && earlier >= mb - round; earlier--)
        if (on_stage(b, earlier, vs, (int)st))
            return false;
    return true;
}

/* One pass of microbatch mb through virtual stage vs: a forward, a whole
 * backward, or its input-gradient part (B: recompute, the input gradient's
 * compute and the layers' backward collectives, the send to the previous
 * stage) or its weight-gradient part (W: the weight GEMMs, after which the
 * gradient buckets go). */
static void pass(builder *b, int64_t mb, int vs, sched_pass_kind kind)
{
    if (b->oom)
        return; /* out of memory, or past the count's limit */
    bool forward = kind == SCHED_FORWARD, weight = kind == SCHED_BACKWARD_WEIGHT;
    bool whole = kind == SCHED_BACKWARD, input = kind == SCHED_BACKWARD_INPUT;
    int64_t here, piece;
    sched_place(b->s, mb, vs, &here, &piece);
    int stage = (int)here;
    const segment *segs = b->segs;
    int n = segments_of(b, vs, b->segs);
    int prev = -1, first = -1;
    /* the last microbatch through this piece brings its gradients */
    bool last_mb = sched_last_through(b->s, b->micro, mb, vs);
    /* Prefetch: the next segment's ZeRO-3 gather and offloaded-weight load
     * are issued as soon as this segment's compute is, ahead of this
     * segment's gradient reduction on the DP stream and its activation
     * store on the memory stream (as DeepSpeed prefetches) */
    const segment *first_sg = n > 0 && !weight ? &segs[forward ? 0 : n - 1] : NULL;
    /* ZeRO 3 under fsdp (cost's fsdp.c): the first prefetch+1 layers'
     * gathers go out at once, then each layer's once the layer `prefetch`
     * places before it has computed (and, in backward, that layer's
     * reduce-scatter has been issued) */
    bool per_layer = b->plan.dp.per_layer && !weight;
    int ahead = per_layer ? (int)b->plan.dp.prefetch : 0;
    for (int k = 0; per_layer && k <= ahead && k < n; k++)
        b->seg_gather[k] = gather(b, stage, &segs[forward ? k : n - 1 - k], mb,
                                  b->pass_end[stage]);
    int g_next = first_sg && !per_layer ? gather(b, stage, first_sg, mb, -1) : -1;
    /* the previous step's updated weights, gathered as this step's first
     * forward reaches each segment (Megatron's overlap_param_gather) */
    bool regather = forward && first_through(b, mb, vs) && weights_behind_forward(b);
    int regathered = -1; /* each after the one before: in order, as the DP stream issues them */
    int w_next = first_sg ? load_weights(b, stage, first_sg, mb) : -1;
    /* a whole backward's offloaded gradients go out one segment late,
     * behind the next segment's activation load on the in-order memory
     * stream, so that load does not wait for this segment's compute */
    const segment *grads_sg = NULL;
    int grads_after = -1;
    for (int i = 0; i < n; i++) {
        const segment *sg = &segs[forward ? i : n - 1 - i];
        const layer_time *lt = &b->lt[sg->kind];
        const work_layer *wl = &b->work.layers[sg->kind];
        int g = per_layer ? b->seg_gather[i] : g_next, w = w_next;
        const segment *next = i + 1 < n ? &segs[forward ? i + 1 : n - 2 - i] : NULL;
        const segment *next_gather = next && !per_layer ? next : NULL;
        double acts = layer_stashed_bytes(wl, b->s->recompute) * sg->count * b->fp.activations_offloaded;
        int t;
        if (forward) {
            t = task(b, stage, R_COMPUTE, lt->fwd * sg->count, K_FWD, mb, sg->layer, prev);
            sim_add_dep(&b->g, g, t);
            if (regather && !wl->model_parallel) {
                regathered = dp_collective(b, stage, R_DP, COMET_COLL_ALL_GATHER,
                                           wl->params * sg->count, wl->expert_params * sg->count,
                                           b->plan.dp.weight_bytes, 0.0, K_GATHER, mb, sg->layer,
                                           regathered);
                sim_add_dep(&b->g, regathered, t);
            }
            sim_add_dep(&b->g, w, t);
            g_next = next_gather ? gather(b, stage, next_gather, mb, -1) : -1;
            w_next = next ? load_weights(b, stage, next, mb) : -1;
            /* offloaded activations go out after the forward; the memory
             * stream keeps order, so the pass's last store covers all */
            int st = memory(b, stage, acts, K_STORE_ACT, mb, sg->layer, t);
            if (st >= 0)
                b->act_store[idx(b, mb, vs)] = st;
            if (first < 0)
                first = t;
            prev = layer_comms(b, stage, sg, K_FWD, mb, t);
        } else if (weight) {
            /* dW reads the stashed input and the output gradient, not
             * the weights: no gather, no load; it follows its B */
            t = task(b, stage, R_COMPUTE, lt->wgrad * sg->count, K_BWD, mb, sg->layer, prev);
            sim_add_dep(&b->g, b->bwd_last[idx(b, mb, vs)], t);
            if (first < 0)
                first = t;
            prev = t;
            dp_bucket(b, stage, sg, mb, last_mb, t);
            stream_grads(b, stage, sg, mb, t);
        } else {
            int la = memory(b, stage, acts, K_LOAD_ACT, mb, sg->layer,
                            b->act_store[idx(b, mb, vs)]);
            if (grads_sg)
                stream_grads(b, stage, grads_sg, mb, grads_after);
            grads_sg = NULL;
            if (lt->recompute > 0.0 || lt->comm_rc[COMET_GROUP_TP] > 0.0) {
                t = task(b, stage, R_COMPUTE, lt->recompute * sg->count, K_RECOMPUTE, mb,
                         sg->layer, prev);
                sim_add_dep(&b->g, g, t);
                sim_add_dep(&b->g, w, t);
                sim_add_dep(&b->g, la, t);
                if (first < 0)
                    first = t;
                prev = layer_comms(b, stage, sg, K_RECOMPUTE, mb, t);
            }
            t = task(b, stage, R_COMPUTE, (input ? lt->bwd - lt->wgrad : lt->bwd) * sg->count,
                     K_BWD, mb, sg->layer, prev);
            sim_add_dep(&b->g, g, t);
            sim_add_dep(&b->g, w, t);
            sim_add_dep(&b->g, la, t);
            g_next = next_gather ? gather(b, stage, next_gather, mb, -1) : -1;
            w_next = next ? load_weights(b, stage, next, mb) : -1;
            if (first < 0)
                first = t;
            int grad = t;
            prev = layer_comms(b, stage, sg, K_BWD, mb, t);
            /* per-layer ZeRO 3 reduces once the layer's backward is over,
             * its collectives included, as the closed form does */
            if (whole) {
                dp_bucket(b, stage, sg, mb, last_mb, per_layer ? prev : grad);
                grads_sg = sg;
                grads_after = grad;
            }
        }
        int k = i + ahead + 1;
        if (per_layer && k < n)
            b->seg_gather[k] = gather(b, stage, &segs[forward ? k : n - 1 - k], mb, prev);
    }
    if (grads_sg)
        stream_grads(b, stage, grads_sg, mb, grads_after);
    int *first_tab = forward ? b->fwd_first : b->bwd_first;
    int *last_tab = forward ? b->fwd_last : weight ? b->wgt_last : b->bwd_last;
    if (!weight)
        first_tab[idx(b, mb, vs)] = first;
    if (b->tp_pending[stage] >= 0) { /* the pass's TP collectives run behind it: it ends with them */
        int end = task(b, stage, R_COMPUTE, 0.0, K_TP, mb, -1, prev);
        sim_add_dep(&b->g, b->tp_pending[stage], end);
        prev = end;
        b->tp_pending[stage] = -1;
    }
    if (b->side_last[stage] >= 0) { /* F&B: the pass ends with its all-to-alls, off the compute */
        int end = sim_add_task(&b->g, res(b, stage, R_TP), 0.0, K_TP, stage, (int)mb, -1);
        if (end < 0 || sim_add_dep(&b->g, prev, end) ||
            sim_add_dep(&b->g, b->side_last[stage], end))
            b->oom = true;
        prev = end;
        b->side_last[stage] = -1;
    }
    last_tab[idx(b, mb, vs)] = prev;
    if (prev >= 0)
        b->pass_end[stage] = prev;
    /* send to the next virtual stage (forward) or the previous (backward),
     * on the link towards the stage that runs it */
    bool send = !weight && (forward ? vs < b->vstages - 1 : vs > 0);
    if (send && b->p > 1) {
        int64_t to, to_chunk;
        sched_place(b->s, mb, forward ? vs + 1 : vs - 1, &to, &to_chunk);
        bool up = to > stage || (to == stage && forward);
        int id = send_hop(b, stage, up, mb, prev);
        (forward ? b->send_fwd : b->send_bwd)[idx(b, mb, vs)] = id;
    } else if (send) {
        (forward ? b->send_fwd : b->send_bwd)[idx(b, mb, vs)] = prev;
    }
    /* without overlap, ZeRO's per-microbatch reduction of this chunk's
     * gradients blocks the compute stream once its backward is done */
    const plan_dp *dp = &b->plan.dp;
    if ((whole || weight) && dp->active && !dp->overlap && dp->reduce_each_micro) {
        double params = 0.0, expert = 0.0;
        for (int i = 0; i < n; i++)
            if (!b->work.layers[segs[i].kind].model_parallel) {
                params += b->work.layers[segs[i].kind].params * segs[i].count;
                expert += b->work.layers[segs[i].kind].expert_params * segs[i].count;
            }
        b->dp_last[stage] = dp_collective(b, stage, R_COMPUTE, dp->reduce, params, expert,
                                          dp->grad_bytes, 0.0, K_DP, mb, -1, prev);
    }
}

/* A pass of the stage's program, placed on its virtual stage; a pass
 * overlapped with the next one (F&B) makes both a pair. */
typedef struct stage_cursor {
    builder *b;
    int stage;
    bool pair_open;
    int pair_cell; /* the open pair's forward */
} stage_cursor;

static void program_pass(void *ctx, sched_pass ps)
{
    stage_cursor *c = ctx;
    int vs = (int)sched_virtual_stage(c->b->s, ps.chunk, c->stage);
    c->b->paired = ps.overlapped || c->pair_open;
    if (c->pair_open && c->b->pair_of)
        c->b->pair_of[c->pair_cell] = idx(c->b, ps.microbatch, vs);
    c->pair_open = ps.overlapped;
    c->pair_cell = idx(c->b, ps.microbatch, vs);
    pass(c->b, ps.microbatch, vs, ps.kind);
    c->b->paired = false;
}

/* The order of passes on one stage is the pipeline schedule's
 * (src/schedule/: Megatron's 1F1B or interleaved 1F1B, or ZB-H1). */
static void stage_program(builder *b, int stage)
{
    stage_cursor c = {b, stage, false, -1};
    sched_of(b->s)->program(b->s, b->micro, stage, program_pass, &c);
}

/* After the last backward: reductions not yet done, the optimizer, ZeRO's
 * weight gather. */
static void stage_epilogue(builder *b, int stage)
{
    double params = 0.0, params_mp = 0.0; /* replicated, and model-parallel */
    double expert = 0.0;                  /* of the replicated ones, experts */
    int64_t chunks = b->v * sched_copies(b->s);
    for (int64_t c = 0; c < chunks; c++) {
        int vs = (int)sched_virtual_stage(b->s, c, stage);
        int n = segments_of(b, vs, b->segs);
        for (int i = 0; i < n; i++) {
            const work_layer *wl = &b->work.layers[b->segs[i].kind];
            *(wl->model_parallel ? &params_mp : &params) += wl->params * b->segs[i].count;
            expert += wl->expert_params * b->segs[i].count;
        }
    }
    int last_bwd = -1;
    for (int64_t mb = 0; mb < b->micro; mb++)
        for (int vs = 0; vs < b->vstages; vs++)
            for (int w = 0; w < 2 && on_stage(b, mb, vs, stage); w++) {
                int t = (w ? b->wgt_last : b->bwd_last)[idx(b, mb, vs)];
                if (t > last_bwd)
                    last_bwd = t;
            }
    int after = b->dp_last[stage] >= 0 ? b->dp_last[stage] : last_bwd;
    const plan_dp *dp = &b->plan.dp;
    if (dp->active && !dp->overlap && !dp->reduce_each_micro)
        after = dp_collective(b, stage, R_DP, dp->reduce, params, expert, dp->grad_bytes, 0.0,
                              K_DP, b->micro - 1, -1, last_bwd);
    double opt_bytes = plan_optimizer_bytes(&b->plan, &b->work, params, expert);
    /* the optimizer reads the offloaded gradients first, after the
     * stream's last store */
    int grads = memory(b, stage, offloaded_grads(b, params, expert, params_mp), K_LOAD_GRAD,
                       b->micro - 1, -1, after);
    int opt = task(b, stage, R_COMPUTE, hw_optimizer_time(&b->rates, opt_bytes * (1.0 - b->fp.optimizer_offloaded)),
                   K_OPTIMIZER, b->micro - 1, -1, after);
    sim_add_dep(&b->g, last_bwd, grads);
    sim_add_dep(&b->g, last_bwd, opt);
    sim_add_dep(&b->g, grads, opt);
    /* offloaded optimizer state is read and written at the tier's speed,
     * after the HBM part; offloaded weights are written back once */
    int state = memory(b, stage, opt_bytes * b->fp.optimizer_offloaded, K_OPT_STATE, b->micro - 1,
                       -1, opt);
    memory(b, stage,
           (plan_held(params, expert, dp->weight_shards, dp->expert_weight_shards) + params_mp) *
               dp->weight_bytes * b->fp.weights_offloaded,
           K_STORE_WEIGHTS, b->micro - 1, -1, state >= 0 ? state : opt);
    if (dp->active && dp->gather_after_step && !weights_behind_forward(b))
        dp_collective(b, stage, R_DP, COMET_COLL_ALL_GATHER, params, expert, dp->weight_bytes, 0.0,
                      K_GATHER, b->micro - 1, -1, opt);
}

/* Cross-stage edges: a pass waits for what the neighbouring virtual stage
 * sends, and a backward for its own forward. */
static void link_passes(builder *b)
{
    for (int64_t mb = 0; mb < b->micro; mb++)
        for (int vs = 0; vs < b->vstages; vs++) {
            int i = idx(b, mb, vs);
            if (vs > 0)
                sim_add_dep(&b->g, b->send_fwd[idx(b, mb, vs - 1)], b->fwd_first[i]);
            if (vs < b->vstages - 1)
                sim_add_dep(&b->g, b->send_bwd[idx(b, mb, vs + 1)], b->bwd_first[i]);
            sim_add_dep(&b->g, b->fwd_last[i], b->bwd_first[i]);
            /* F&B runs as one: its forward starts once the backward's
             * gradient has come too */
            int paired = b->pair_of ? b->pair_of[i] : -1;
            int64_t pmb = paired >= 0 ? paired / b->vstages : 0;
            int pvs = paired >= 0 ? paired % b->vstages : 0;
            if (paired >= 0 && pvs < b->vstages - 1)
                sim_add_dep(&b->g, b->send_bwd[idx(b, pmb, pvs + 1)], b->fwd_first[i]);
        }
}

static void describe(const sim_task *t, void *ctx, char *out, size_t cap)
{
    (void)ctx;
    snprintf(out, cap, "stage %d %s of microbatch %d, layer %d", t->stage,
             t->kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[t->kind] : "?",
             t->micro, t->layer);
}

static void collect(const builder *b, double makespan, comet_sim_step_result *out)
{
    memset(out, 0, sizeof *out);
    out->step_time = makespan;
    out->stages = b->p;
    out->tasks = (uint64_t)b->g.n;
    out->events = b->g.events;
    for (int i = 0; i < b->g.n; i++) {
        const sim_task *t = &b->g.tasks[i];
        int stage = t->stage < COMET_SIM_MAX_STAGES ? t->stage : COMET_SIM_MAX_STAGES - 1;
        int r = t->resource % b->per_stage;
        double d = t->end - t->start;
        if (r >= R_PER_STAGE) {
            /* a link under congestion, busy per kind of traffic: what each
             * transfer would take alone (latency and bandwidth at full
             * rate), not its span, in which it shared the link with others
             * that count their own share */
            d = t->duration + t->work;
            if (t->kind == K_TP)
                out->tp_busy[stage] += d;
            else if (t->kind == K_SEND_FWD || t->kind == K_SEND_BWD)
                out->pp_busy[stage] += d;
            else
                out->dp_busy[stage] += d;
            continue;
        }
        if (d <= 0.0)
            continue;
        if (r == R_COMPUTE)
            out->compute_stream_busy[stage] += d;
        if (t->kind == K_FWD)
            out->forward[stage] += d;
        else if (t->kind == K_BWD)
            out->backward[stage] += d;
        else if (t->kind == K_RECOMPUTE)
            out->recompute[stage] += d;
        else if (t->kind == K_OPTIMIZER)
            out->optimizer[stage] += d;
        if (t->kind == K_TP)
            out->tp_busy[stage] += d;
        else if (r == R_COMPUTE && (t->kind == K_DP || t->kind == K_GATHER))
            out->dp_busy[stage] += d; /* data-parallel traffic that blocks compute */
        else if (r == R_COMPUTE)
            out->compute_busy[stage] += d;
        else if (r == R_TP)
            out->tp_busy[stage] += d;
        else if (r == R_DP)
            out->dp_busy[stage] += d;
        else if (r == R_MEM)
            out->mem_busy[stage] += d;
        else
            out->pp_busy[stage] += d;
    }
}

/* Build the step graph for the resolved strategy *s into a new builder,
 * simulating `micro` of the step's microbatches. With count_only > 0 the
 * graph stores nothing: it counts tasks and edges, and the builder stops
 * (b->oom) once the tasks pass count_only. */
static comet_status build(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                          bool congestion, const step_mode *mode, bool split_tp, int64_t micro,
                          int64_t count_only, builder **out, comet_error *err)
{
    *out = NULL;
    if (s->pp > COMET_SIM_MAX_STAGES)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy.pp",
                               "at most %d pipeline stages are simulated", COMET_SIM_MAX_STAGES);
    builder *b = calloc(1, sizeof *b);
    if (!b)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    *out = b;
    b->m = m;
    b->sys = sys;
    b->s = s;
    b->split_tp = split_tp;
    work_build(m, s, &b->work);
    hw_rates_init(&b->rates, sys, m->dtype);
    hw_rates_attention(&b->rates, s->attention_kernel);
    for (int k = 0; k < b->work.n_layers; k++)
        layer_times(&b->work.layers[k], &b->rates, sys, s, &b->lt[k]);
    b->p = (int)s->pp;
    b->v = (int)s->interleave;
    b->vstages = b->p * b->v;
    b->micro = micro;
    step_plan_build(m, sys, s, &b->work, &b->plan);
    {
        /* the same split between HBM and the expansion tier as the estimate */
        comet_result mem;
        footprint_compute(sys, s, &b->work, &b->plan, &b->fp, &mem);
    }
    size_t cells = (size_t)b->micro * (size_t)b->vstages;
    b->congestion = congestion;
    if (mode && mode->themis && congestion) {
        b->themis_load = calloc((size_t)s->pp * COMET_MAX_DIMS, sizeof *b->themis_load);
        if (!b->themis_load)
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    b->per_stage = R_PER_STAGE + (b->congestion ? sys->n_dims : 0);
    sim_graph_init(&b->g, b->p * b->per_stage);
    b->g.count_only = count_only;
    b->max_segs = segments_max(b);
    b->segs = malloc(sizeof *b->segs * (size_t)b->max_segs);
    b->seg_gather = malloc(sizeof *b->seg_gather * (size_t)b->max_segs);
    b->oom = !b->segs || !b->seg_gather;
    for (int stage = 0; b->congestion && stage < b->p; stage++)
        for (int d = 0; d < sys->n_dims; d++)
            if (sim_set_shared(&b->g, res(b, stage, R_PER_STAGE + d)))
                b->oom = true;
    int **tabs[] = {&b->fwd_first, &b->fwd_last, &b->bwd_first, &b->bwd_last, &b->send_fwd,
                    &b->send_bwd, &b->act_store, &b->wgt_last, &b->pair_of};
    for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++) {
        *tabs[i] = malloc(sizeof(int) * cells);
        b->oom = b->oom || !*tabs[i];
        for (size_t c = 0; *tabs[i] && c < cells; c++)
            (*tabs[i])[c] = -1;
    }
    b->dp_last = malloc(sizeof(int) * (size_t)b->p);
    b->pass_end = malloc(sizeof(int) * (size_t)b->p);
    b->tp_pending = malloc(sizeof(int) * (size_t)b->p);
    b->side_last = malloc(sizeof(int) * (size_t)b->p);
    b->oom = b->oom || !b->dp_last || !b->pass_end || !b->tp_pending || !b->side_last;
    for (int i = 0; b->dp_last && b->pass_end && b->tp_pending && b->side_last && i < b->p; i++)
        b->dp_last[i] = b->pass_end[i] = b->tp_pending[i] = b->side_last[i] = -1;
    b->tp_behind = s->overlap_tp && (congestion || (mode && mode->fabric));
    for (int stage = 0; stage < b->p && !b->oom; stage++) {
        stage_program(b, stage);
        stage_epilogue(b, stage);
    }
    if (!b->oom)
        link_passes(b);
    return b->oom ? comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory")
                  : COMET_OK;
}

/* Frees the builder; its graph too unless keep_graph. */
static void builder_free(builder *b, bool keep_graph)
{
    if (!b)
        return;
    free(b->fwd_first);
    free(b->fwd_last);
    free(b->bwd_first);
    free(b->bwd_last);
    free(b->send_fwd);
    free(b->send_bwd);
    free(b->act_store);
    free(b->wgt_last);
    free(b->pair_of);
    free(b->dp_last);
    free(b->segs);
    free(b->seg_gather);
    free(b->pass_end);
    free(b->tp_pending);
    free(b->side_last);
    free(b->themis_load);
    if (!keep_graph) {
        sim_graph_free(&b->g);
        free(b->coll);
    }
    free(b);
}

/* Tasks the step's graph holds with `micro` microbatches, counted without
 * storing them; past `limit` the count stops at limit + 1. */
static comet_status count_tasks(const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, bool congestion, bool split_tp,
                                int64_t micro, int64_t limit, int64_t *tasks, comet_error *err)
{
    /* every (microbatch, model chunk) cell holds a forward and a backward:
     * too many cells is over the limit before any table is allocated */
    if (s->pp <= COMET_SIM_MAX_STAGES &&
        2.0 * (double)micro * (double)(s->pp * s->interleave) > (double)limit) {
        *tasks = limit + 1;
        return COMET_OK;
    }
    builder *b = NULL;
    comet_status st = build(m, sys, s, congestion, NULL, split_tp, micro, limit + 1, &b, err);
    if (b && b->g.n > limit) {
        st = COMET_OK;
        *tasks = limit + 1;
    } else if (!st) {
        *tasks = b->g.n;
    }
    builder_free(b, false);
    return st;
}

/* The whole step's graph size before building it: tasks grow by the same
 * number per round of microbatches (1, or pp when interleaved), so two
 * small counts give it. *one is one round's tasks, *per_round what each
 * further round adds; a round past `limit` is an error. */
static comet_status step_size(const comet_model *m, const comet_system *sys,
                              const comet_strategy *s, bool congestion, bool split_tp,
                              int64_t limit, int64_t *one, int64_t *per_round, double *full,
                              comet_error *err)
{
    int64_t micro = comet_strategy_microbatches(s);
    int64_t round = sched_of(s)->round(s), two = 0;
    *one = *per_round = 0;
    comet_status st = count_tasks(m, sys, s, congestion, split_tp, round, limit, one, err);
    if (!st && *one > limit)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "one round of %lld microbatch%s needs more than %lld tasks, the "
                               "simulator's limit (%s)",
                               (long long)round, round > 1 ? "es" : "", (long long)limit,
                               limit < COMET_SIM_MAX_TASKS_LIMIT
                                   ? "raise it: comet simulate --max-tasks"
                                   : "the most --max-tasks allows; comet estimate prices this "
                                     "step");
    if (!st && micro > round)
        st = count_tasks(m, sys, s, congestion, split_tp, 2 * round, COMET_SIM_MAX_TASKS_LIMIT,
                         &two, err);
    if (st)
        return st;
    *per_round = micro > round ? two - *one : 0;
    *full = (double)*one + (double)(micro / round - 1) * (double)*per_round;
    return COMET_OK;
}

/* A span of time one task of a stage took. */
typedef struct busy_span {
    int stage;
    double start, end;
} busy_span;

static int span_order(const void *pa, const void *pb)
{
    const busy_span *a = pa, *b = pb;
    if (a->stage != b->stage)
        return a->stage < b->stage ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start ? 1 : 0;
}

/* Overlap contention (docs/model.md, frameworks): the time, on the stage
 * where it is longest, that data-parallel communication (and F&B's
 * all-to-alls) ran while the compute stream computed. The closed form's hidden communication, as the
 * timeline has it; the step grows by the system's share of it, as the
 * estimate's does. 0 when nothing is shared, or out of memory. */
static double hidden_comm(const builder *b)
{
    const sim_graph *g = &b->g;
    busy_span *comp = malloc(sizeof *comp * (size_t)(g->n + 1));
    busy_span *comm = malloc(sizeof *comm * (size_t)(g->n + 1));
    int n_comp = 0, n_comm = 0;
    double most = 0.0;
    if (!comp || !comm)
        goto done;
    for (int i = 0; i < g->n; i++) {
        const sim_task *t = &g->tasks[i];
        int r = t->resource % b->per_stage;
        if (!(t->end > t->start))
            continue;
        bool compute = r == R_COMPUTE && (t->kind == K_FWD || t->kind == K_BWD ||
                                          t->kind == K_RECOMPUTE);
        /* and F&B's all-to-alls: with TP overlap off, the TP stream
         * carries only them (the pairs', beside the compute) */
        bool dp = r != R_COMPUTE && (t->kind == K_DP || t->kind == K_GATHER ||
                                     (r == R_TP && t->kind == K_TP && !b->s->overlap_tp));
        if (compute)
            comp[n_comp++] = (busy_span){t->stage, t->start, t->end};
        else if (dp)
            comm[n_comm++] = (busy_span){t->stage, t->start, t->end};
    }
    qsort(comp, (size_t)n_comp, sizeof *comp, span_order);
    qsort(comm, (size_t)n_comm, sizeof *comm, span_order);
    /* walk both, stage by stage: the communication's union (links may
     * carry several at once) against the compute stream's spans */
    double stage_sum = 0.0;
    int stage = -1;
    for (int i = 0, j = 0; i < n_comm;) {
        busy_span u = comm[i++];
        while (i < n_comm && comm[i].stage == u.stage && comm[i].start <= u.end) {
            u.end = fmax(u.end, comm[i].end);
            i++;
        }
        if (u.stage != stage) {
            most = fmax(most, stage_sum);
            stage_sum = 0.0;
            stage = u.stage;
        }
        while (j < n_comp && (comp[j].stage < u.stage ||
                              (comp[j].stage == u.stage && comp[j].end <= u.start)))
            j++;
        for (int k = j; k < n_comp && comp[k].stage == u.stage && comp[k].start < u.end; k++)
            stage_sum += fmax(0.0, fmin(u.end, comp[k].end) - fmax(u.start, comp[k].start));
    }
    most = fmax(most, stage_sum);
done:
    free(comp);
    free(comm);
    return most;
}

/* Every task gets a step_coll entry (those past the last recorded one
 * none). */
static comet_status coll_complete(builder *b, comet_error *err)
{
    if (b->coll_cap >= b->g.n + 1)
        return COMET_OK;
    step_coll *p = realloc(b->coll, sizeof *p * (size_t)(b->g.n + 1));
    if (!p)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int i = b->coll_cap; i <= b->g.n; i++)
        p[i] = (step_coll){COMET_COLL_NONE, COMET_GROUP_TP, 0.0, STEP_ON_GROUP, 0.0};
    b->coll = p;
    b->coll_cap = b->g.n + 1;
    return COMET_OK;
}

/* Build and run the graph of `micro` microbatches; *out gets the builder
 * (its graph simulated) and r the figures. */
static comet_status run_step(const comet_model *m, const comet_system *sys,
                             const comet_strategy *s, bool congestion, const step_mode *mode,
                             int64_t micro, builder **out, comet_sim_step_result *r,
                             comet_error *err)
{
    bool whole = mode->fabric != NULL;
    comet_status st = build(m, sys, s, congestion, mode, whole, micro, 0, out, err);
    if (!st && whole)
        st = coll_complete(*out, err);
    double makespan = 0.0;
    if (!st && whole)
        st = sim_fabric_step_run(mode->fabric, &(*out)->g, (*out)->coll, (*out)->per_stage,
                                 (*out)->plan.send.bytes, &makespan, describe, err);
    else if (!st)
        st = sim_run(&(*out)->g, &makespan, describe, NULL, err);
    if (!st)
        collect(*out, makespan, r);
    double share = overlap_share(sys, s);
    if (!st && share > 0.0)
        r->step_time += share * hidden_comm(*out);
    r->microbatches = r->simulated_microbatches = micro;
    r->round = sched_of(s)->round(s);
    return st;
}

/* The figures a result sums over tasks: the step time and every per-stage
 * array (each extrapolates alike). */
static const size_t stage_figures[] = {
    offsetof(comet_sim_step_result, forward),   offsetof(comet_sim_step_result, backward),
    offsetof(comet_sim_step_result, recompute), offsetof(comet_sim_step_result, optimizer),
    offsetof(comet_sim_step_result, compute_busy),
    offsetof(comet_sim_step_result, compute_stream_busy),
    offsetof(comet_sim_step_result, tp_busy),   offsetof(comet_sim_step_result, pp_busy),
    offsetof(comet_sim_step_result, dp_busy),   offsetof(comet_sim_step_result, mem_busy)};
#define N_FIGURES (sizeof stage_figures / sizeof stage_figures[0])

static double *figure(comet_sim_step_result *r, size_t f, int stage)
{
    return (double *)((char *)r + stage_figures[f]) + stage;
}

/* Whether r[0..3], runs one round apart, grow by the same amount in every
 * figure (to `tol` seconds) and in tasks and events. */
static bool increments_equal(comet_sim_step_result *r, double tol)
{
    for (int i = 1; i < 3; i++) {
        if (r[i + 1].tasks - r[i].tasks != r[1].tasks - r[0].tasks ||
            r[i + 1].events - r[i].events != r[1].events - r[0].events ||
            fabs((r[i + 1].step_time - r[i].step_time) - (r[1].step_time - r[0].step_time)) > tol)
            return false;
        for (size_t f = 0; f < N_FIGURES; f++)
            for (int st = 0; st < r[0].stages; st++) {
                double a = *figure(&r[i + 1], f, st) - *figure(&r[i], f, st);
                double b0 = *figure(&r[1], f, st) - *figure(&r[0], f, st);
                if (fabs(a - b0) > tol)
                    return false;
            }
    }
    return true;
}

/* Whether the timeline repeats: every task of microbatches [cut - round,
 * cut) has a twin in [cut, cut + round), the k-th task of microbatch j
 * matching the k-th of j + round (each pass adds its tasks in the same
 * order), on the same resource, of the same kind, `shift` later to `tol`. */
static comet_status timeline_repeats(const sim_graph *g, int64_t cut, int64_t round, double shift,
                                     double tol, bool *repeats, comet_error *err)
{
    *repeats = false;
    size_t lanes = (size_t)(2 * round);
    size_t *count = calloc(lanes + 1, sizeof *count);
    if (!count)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int i = 0; i < g->n; i++)
        if (g->tasks[i].micro >= cut - round && g->tasks[i].micro < cut + round)
            count[g->tasks[i].micro - (cut - round) + 1]++;
    for (size_t l = 0; l < lanes; l++)
        count[l + 1] += count[l];
    int *order = malloc(sizeof *order * (count[lanes] + 1));
    size_t *fill = malloc(sizeof *fill * lanes);
    if (!order || !fill) {
        free(count);
        free(order);
        free(fill);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    memcpy(fill, count, sizeof *fill * lanes);
    for (int i = 0; i < g->n; i++)
        if (g->tasks[i].micro >= cut - round && g->tasks[i].micro < cut + round)
            order[fill[g->tasks[i].micro - (cut - round)]++] = i;
    bool same = true;
    for (size_t l = 0; same && l < (size_t)round; l++) {
        size_t n = count[l + 1] - count[l];
        same = n == count[l + round + 1] - count[l + round];
        for (size_t k = 0; same && k < n; k++) {
            const sim_task *a = &g->tasks[order[count[l] + k]];
            const sim_task *b = &g->tasks[order[count[l + round] + k]];
            same = a->kind == b->kind && a->resource == b->resource &&
                   fabs(b->start - a->start - shift) <= tol && fabs(b->end - a->end - shift) <= tol;
        }
    }
    free(count);
    free(order);
    free(fill);
    *repeats = same;
    return COMET_OK;
}

/* A step too large to hold: simulate it with fewer microbatches, in runs
 * one round apart, until the runs grow by the same amount per round in
 * every figure and the timeline repeats (a fixed point: the state after
 * each steady round is the state before it, later by one round's time),
 * then add the missing rounds. *out gets the builder of the largest run,
 * its tasks from the cut on moved to where the full step runs them. */
static comet_status extrapolate(const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, bool congestion, const step_mode *mode,
                                int64_t micro,
                                double full_tasks, int64_t one, int64_t per_round, int64_t limit,
                                builder **out, comet_sim_step_result *res, comet_error *err)
{
    const sched_kind *sched = sched_of(s);
    int64_t round = sched->round(s), ramp = sched->ramp(s);
    comet_sim_step_result *r = malloc(sizeof *r * 4);
    if (!r)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    /* warm-up and cool-down each span at most `ramp` microbatches (the
     * schedule says): the first run starts three ramps in, and the two
     * rounds compared around the cut end a ramp and a half before a run's
     * last microbatch (clear of its cool-down, half a ramp to spare) */
    int64_t clear = ramp + ramp / 2;
    comet_status st = COMET_OK;
    for (int64_t first = 3 * ramp;; first *= 2) {
        int64_t last = first + 3 * round;
        double need = (double)one + (double)(last / round - 1) * (double)per_round;
        if (last >= micro || need > (double)limit) {
            bool can_raise = full_tasks <= (double)COMET_SIM_MAX_TASKS_LIMIT;
            st = comet_error_set(
                err, COMET_EINPUT, NULL, 0, 0, NULL,
                "the step needs %.0f tasks (%lld microbatches), past the simulator's limit of "
                "%lld, and no steady state that repeats was found within it (%s)",
                full_tasks, (long long)micro, (long long)limit,
                can_raise ? "raise it: comet simulate --max-tasks"
                          : "more than --max-tasks can allow, " COMET_SIM_MAX_TASKS_TEXT
                            "; comet estimate prices this step");
            break;
        }
        for (int i = 0; !st && i < 4; i++) {
            builder_free(*out, false);
            *out = NULL;
            st = run_step(m, sys, s, congestion, mode, first + i * round, out, &r[i], err);
        }
        if (st)
            break;
        double tol = 1e-9 * r[3].step_time, shift = r[3].step_time - r[2].step_time;
        int64_t cut = last - clear - round;
        bool repeats = false;
        if (increments_equal(r, tol) &&
            (st = timeline_repeats(&(*out)->g, cut, round, shift, tol, &repeats, err)) == COMET_OK &&
            repeats) {
            int64_t rounds = (micro - last) / round;
            /* one round's growth, averaged over the three measured */
            double per = (r[3].step_time - r[0].step_time) / 3.0;
            *res = r[3];
            res->step_time += (double)rounds * per;
            for (size_t f = 0; f < N_FIGURES; f++)
                for (int stg = 0; stg < res->stages; stg++)
                    *figure(res, f, stg) +=
                        (double)rounds * (*figure(&r[3], f, stg) - *figure(&r[0], f, stg)) / 3.0;
            res->microbatches = micro;
            res->simulated_microbatches = last;
            res->round_time = per;
            sim_graph *g = &(*out)->g;
            for (int i = 0; i < g->n; i++)
                if (g->tasks[i].micro >= cut) {
                    g->tasks[i].start += (double)rounds * per;
                    g->tasks[i].end += (double)rounds * per;
                    g->tasks[i].micro += (int32_t)(micro - last);
                }
            break;
        }
        if (st)
            break;
    }
    free(r);
    return st;
}

/* The step simulated with its transfers on the given fabric (every NPU)
 * or, fabric NULL, one NPU per pipeline stage. */
static comet_status simulate_step(const comet_model *m, const comet_system *sys,
                                  comet_strategy *s, const comet_sim_step_options *o,
                                  sim_fabric_step *fabric, comet_sim_step_result *out,
                                  comet_error *err)
{
    bool congestion = o && o->fidelity == COMET_SIM_CONGESTION;
    int64_t limit = o && o->max_tasks > 0 ? o->max_tasks : COMET_SIM_DEFAULT_MAX_TASKS;
    if (limit > COMET_SIM_MAX_TASKS_LIMIT)
        limit = COMET_SIM_MAX_TASKS_LIMIT;
    int64_t micro = comet_strategy_microbatches(s), one, per_round;
    double full = 0.0;
    bool whole = fabric != NULL;
    comet_status st = step_size(m, sys, s, congestion, whole, limit, &one, &per_round, &full, err);
    if (st)
        return st;
    comet_sim_fabric_links *seen = whole ? o->links : NULL; /* the links, when asked */
    step_mode mode = {fabric, o && o->scheduler == COMET_SCHED_THEMIS};
    builder *b = NULL;
    if (full <= (double)limit)
        st = run_step(m, sys, s, congestion, &mode, micro, &b, out, err);
    else
        st = extrapolate(m, sys, s, congestion, &mode, micro, full, one, per_round, limit, &b,
                         out, err);
    if (fabric) {
        uint64_t shared, alone;
        sim_fabric_step_counts(fabric, &out->fabric_npus, &shared, &alone, &out->fabric_kinds,
                               &out->fabric_flows);
        out->fabric_transfers = (int64_t)shared;
        out->fabric_alone = (int64_t)alone;
    }
    static const char *const streams[R_PER_STAGE] = {
        "compute", "tensor-parallel", "send forward", "send backward", "data-parallel",
        "expansion memory"};
    if (!st && o && o->timeline)
        st = sim_timeline_collect(&b->g, b->per_stage, streams, R_PER_STAGE, kind_names,
                                  (int)(sizeof kind_names / sizeof kind_names[0]), K_TP, o->timeline,
                                  err);
    if (!st && o && o->trace) {
        const char *links[COMET_MAX_DIMS];
        for (int d = 0; d < sys->n_dims && d < COMET_MAX_DIMS; d++)
            links[d] = sys->dims[d].name;
        sim_chrome_trace_write(&b->g, b->per_stage, streams, R_PER_STAGE, links, kind_names,
                               seen, o->trace);
    }
    if (st)
        comet_sim_fabric_links_free(seen);
    builder_free(b, false);
    return st;
}

comet_status comet_sim_step(const comet_model *m, const comet_system *sys,
                            const comet_strategy *s_in, const comet_sim_step_options *o,
                            comet_sim_step_result *out, comet_error *err)
{
    comet_strategy s = *s_in;
    comet_status st = comet_strategy_resolve(m, sys, &s, NULL, err);
    if (st)
        return st;
    bool congestion = o && o->fidelity == COMET_SIM_CONGESTION;
    comet_sim_fabric_mode want = o ? o->fabric : COMET_SIM_FABRIC_OFF;
    bool themis = o && o->scheduler == COMET_SCHED_THEMIS;
    char why[sizeof out->fabric_why] = "";
    if (want == COMET_SIM_FABRIC_ON && congestion)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--flows",
                               "runs the transfers as flows on the fabric; --congestion "
                               "shares each dimension's bandwidth instead: use one of them");
    if (want == COMET_SIM_FABRIC_AUTO && congestion) {
        snprintf(why, sizeof why, "--congestion shares each dimension per stage instead");
        want = COMET_SIM_FABRIC_OFF;
    }
    if (themis && !congestion && want == COMET_SIM_FABRIC_AUTO)
        want = COMET_SIM_FABRIC_ON; /* Themis orders chunks on shared links: the fabric's */
    if (themis && !congestion && want == COMET_SIM_FABRIC_OFF)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--scheduler",
                               "themis orders the chunks of collectives on shared links: it "
                               "needs --congestion or --flows");
    comet_sim_fabric_links *seen = want != COMET_SIM_FABRIC_OFF && o ? o->links : NULL;
    if (seen)
        memset(seen, 0, sizeof *seen);
    bool automatic = want == COMET_SIM_FABRIC_AUTO;
    int64_t max_flows = o && o->max_flows > 0 ? o->max_flows
                        : automatic           ? COMET_SIM_AUTO_MAX_FLOWS
                                              : 0;
    if (automatic) {
        /* off the fabric where every NPU sees the same network */
        comet_error ignored;
        bool uneven;
        st = comet_system_uneven(sys, comet_strategy_npus(&s), &uneven, why, sizeof why,
                                 &ignored);
        if (st == COMET_ENOMEM) {
            *err = ignored;
            return st;
        }
        if (st)
            snprintf(why, sizeof why, "the fabric cannot be built: %.160s", ignored.message);
        else if (!uneven)
            snprintf(why, sizeof why, "every NPU sees the same network");
        if (st || !uneven) {
            want = COMET_SIM_FABRIC_OFF;
            automatic = false;
        }
    }
    sim_fabric_step *fabric = NULL;
    if (want != COMET_SIM_FABRIC_OFF) {
        /* automatic: what keeps the step off the fabric is said, not an error */
        comet_error why_not;
        st = sim_fabric_step_new(sys, &s, seen, themis, max_flows, &fabric,
                                 automatic ? &why_not : err);
        if (st && (!automatic || st == COMET_ENOMEM)) {
            if (automatic)
                *err = why_not;
            return st;
        }
        if (st)
            snprintf(why, sizeof why, "the fabric cannot place it: %.160s", why_not.message);
        else if (!automatic && !sim_fabric_step_uneven(fabric, why, sizeof why))
            snprintf(why, sizeof why, "asked; every NPU sees the same network");
        st = COMET_OK;
    }
    st = simulate_step(m, sys, &s, o, fabric, out, err);
    if (st && automatic && fabric && st != COMET_ENOMEM) {
        /* past the flows' budget, or a group the flows cannot run: one NPU
         * per stage after all, saying why */
        if (err->key[0] && strcmp(err->key, "--max-flows") == 0)
            snprintf(why, sizeof why, "every NPU's transfers would take more than %lld flows "
                                      "(--flows runs them anyway)",
                     (long long)max_flows);
        else
            snprintf(why, sizeof why, "the fabric cannot run it: %.160s", err->message);
        sim_fabric_step_free(fabric);
        fabric = NULL;
        st = simulate_step(m, sys, &s, o, NULL, out, err);
    }
    sim_fabric_step_free(fabric);
    if (!st)
        memcpy(out->fabric_why, why, sizeof why);
    return st;
}

comet_status sim_step_graph_build(const comet_model *m, const comet_system *sys,
                                  const comet_strategy *s, step_graph *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    out->s = *s;
    comet_status st = comet_strategy_resolve(m, sys, &out->s, NULL, err);
    /* an exported step holds every task: past the limit it is refused */
    int64_t one, per_round;
    double full = 0.0;
    if (!st)
        st = step_size(m, sys, &out->s, false, true, COMET_SIM_DEFAULT_MAX_TASKS, &one, &per_round,
                       &full, err);
    if (!st && full > COMET_SIM_DEFAULT_MAX_TASKS)
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                             "the step needs %.0f tasks, past the limit of %d a step graph may "
                             "hold (fewer microbatches, layers or stages fit)",
                             full, COMET_SIM_DEFAULT_MAX_TASKS);
    builder *b = NULL;
    if (!st)
        st = build(m, sys, &out->s, false, NULL, true,
                   comet_strategy_microbatches(&out->s), 0, &b, err);
    if (!st)
        st = coll_complete(b, err); /* every task has an entry */
    if (st) {
        builder_free(b, false);
        return st;
    }
    out->g = b->g;
    out->coll = b->coll;
    out->stages = b->p;
    out->per_stage = b->per_stage;
    out->p2p_bytes = b->plan.send.bytes;
    out->exp_bw = b->plan.expansion.bandwidth;
    out->exp_latency = b->plan.expansion.latency;
    out->kind_names = kind_names;
    builder_free(b, true);
    return COMET_OK;
}

void sim_step_graph_free(step_graph *g)
{
    sim_graph_free(&g->g);
    free(g->coll);
    memset(g, 0, sizeof *g);
}
