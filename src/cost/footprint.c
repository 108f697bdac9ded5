/* Memory footprint per NPU: weights, gradients, optimizer state (mixed
 * precision Adam, sharded by ZeRO) and stashed activations (Korthikanti
 * 2022, with the schedule's in-flight counts per stage), placed
 * on HBM and, when present, the expansion tier. */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../schedule/schedule.h"

/* A stage's program walked for its activations: a forward stashes its
 * piece's `full`, an input gradient frees it and keeps `wg` until its W,
 * a whole backward frees it; the most it holds at once. */
typedef struct stash_walk {
    const comet_strategy *s;
    int64_t stage;
    const double *full, *wg; /* per piece: the first, a middle, the last */
    double now, most;
} stash_walk;

static void stash_pass(void *ctx, sched_pass ps)
{
    stash_walk *w = ctx;
    int64_t vs = sched_virtual_stage(w->s, ps.chunk, w->stage);
    int64_t last = w->s->pp * w->s->interleave - 1;
    int piece = vs == 0 ? 0 : vs == last ? 2 : 1;
    if (ps.kind == SCHED_FORWARD)
        w->now += w->full[piece];
    else if (ps.kind == SCHED_BACKWARD)
        w->now -= w->full[piece];
    else if (ps.kind == SCHED_BACKWARD_INPUT)
        w->now += w->wg[piece] - w->full[piece];
    else
        w->now -= w->wg[piece];
    w->most = comet_fmax(w->most, w->now);
}

double footprint_walked_stash(const comet_strategy *s, double micro, const double full[3],
                              const double wg[3])
{
    /* past its warm-up and cool-down a program repeats its rounds, each
     * holding what the one before held: a step of two ramps and two rounds
     * more (its count's parity kept) holds the most a longer one does, so
     * the walk is O(p^2) whatever the step's microbatches */
    const sched_kind *sched = sched_of(s);
    int64_t m = (int64_t)micro;
    if (sched->ramp && sched->round) {
        int64_t round = sched->round(s), enough = 2 * sched->ramp(s) + 2 * round;
        if (m > enough)
            m = enough + (m - enough) % round;
    }
    double most = 0.0;
    for (int64_t i = 0; i < s->pp; i++) {
        stash_walk w = {s, i, full, wg, 0.0, 0.0};
        sched->program(s, m, i, stash_pass, &w);
        most = comet_fmax(most, w.most);
    }
    return most;
}

/* Activations held by the stage that holds the most. 1F1B keeps p-i
 * microbatches in flight on stage i (the first holds the most, p), the
 * last one plus the LM head's logits; interleaving multiplies the first
 * stage's count. ZB-H1 keeps 1F1B's counts before each backward and, on
 * stage i, up to i microbatches more whose input gradient has run and
 * weight gradient not: those hold each weight GEMM's input and output
 * gradient (work_layer.wgrad_bytes), its memory cost (docs/model.md).
 * With uneven stages, or ZB-H1, a middle stage may hold the most. Where
 * microbatches take more than one path (DualPipe: a stage holds the
 * first and the last pieces, say, for the two directions), each stage's
 * program is walked, each pass adding or freeing its own piece's stash,
 * unless the schedule knows the walk's answer in closed form
 * (stash_most: DualPipe's full program).
 * Recomputation needs what one layer rebuilds as working space during
 * backward: the whole layer under full recompute, its attention core
 * under selective; ring context parallelism its K/V receive buffers. */
static double activation_bytes(const comet_strategy *s, const work_stage *w, double micro,
                               double *per_micro)
{
    const sched_kind *sched = sched_of(s);
    double at[3] = {0.0, 0.0, 0.0}, wg[3] = {0.0, 0.0, 0.0}; /* indexed by work_where */
    /* the every-stage layers on the first, a middle and the last stage,
     * stashed (every) and kept for W (every_wg): uneven pipelines and MoE
     * models give each stage its own counts of blocks */
    double every[3] = {0.0, 0.0, 0.0}, every_wg[3] = {0.0, 0.0, 0.0};
    bool moe_model = false;
    for (int i = 0; i < w->n_layers; i++)
        moe_model |= w->layers[i].moe;
    double work = 0.0;
    for (int i = 0; i < w->n_layers; i++) {
        const work_layer *l = &w->layers[i];
        double a = layer_stashed_bytes(l, s->recompute);
        at[l->where] += a * l->count;
        wg[l->where] += l->wgrad_bytes * l->count;
        if (l->where == WORK_EVERY_STAGE) {
            /* a middle stage: stage 1's count for a dense model; an MoE
             * model's split is taken as the busiest stage's */
            double mid = w->middle_stage_count >= 0.0 && !moe_model ? w->middle_stage_count
                                                                     : l->count;
            const double n[3] = {work_end_count(w, l, true), mid, work_end_count(w, l, false)};
            for (int k = 0; k < 3; k++) {
                every[k] += a * n[k];
                every_wg[k] += l->wgrad_bytes * n[k];
            }
        }
        /* what one recomputed layer rebuilds: all of it under full
         * recompute, its attention core under selective */
        double rebuilt = s->recompute == COMET_RECOMPUTE_FULL ? l->act_bytes
                       : s->recompute == COMET_RECOMPUTE_SELECTIVE
                           ? l->act_bytes - l->act_bytes_selective
                           : 0.0;
        if (l->where == WORK_EVERY_STAGE && rebuilt > work)
            work = rebuilt;
    }
    /* ring CP's receive buffers are working space of the same kind */
    double recompute_work = work + w->cp_buffer_bytes;
    double first = at[WORK_FIRST_STAGE], last = at[WORK_LAST_STAGE];
    *per_micro = at[WORK_EVERY_STAGE] + first + last;
    if (s->pp == 1)
        return *per_micro + recompute_work;
    if (sched->place) {
        const double full[3] = {every[0] + first, every[1], every[2] + last};
        const double keep[3] = {every_wg[0] + wg[WORK_FIRST_STAGE], every_wg[1],
                                every_wg[2] + wg[WORK_LAST_STAGE]};
        double most = sched->stash_most ? sched->stash_most(s, (int64_t)micro, full, keep) : -1.0;
        if (most < 0.0) /* no closed form: the programs walked */
            most = footprint_walked_stash(s, micro, full, keep);
        return most + recompute_work;
    }
    if (!sched->stage_in_flight) /* interleaved: the first stage's count */
        return comet_fmax((every[0] + first) * sched->in_flight(s, micro), every[2] + last) +
               recompute_work;
    double full, weight_only;
    sched->stage_in_flight(s, micro, 0, &full, &weight_only);
    double most = (every[0] + first) * full + (every_wg[0] + wg[WORK_FIRST_STAGE]) * weight_only;
    sched->stage_in_flight(s, micro, s->pp - 1, &full, &weight_only);
    most = comet_fmax(most, (every[2] + last) * full + (every_wg[2] + wg[WORK_LAST_STAGE]) * weight_only);
    /* middle stages: over i the counts are constant (all m microbatches
     * before their backward) and then change linearly (p-i before it, the
     * rest waiting for their W), so the most is at stage 1 or p-2 (each
     * taken with the most blocks a middle stage holds) */
    for (int64_t i = 1; w->middle_stage_count >= 0.0 && i <= 2 && i < s->pp - 1; i++) {
        sched->stage_in_flight(s, micro, i == 1 ? 1 : s->pp - 2, &full, &weight_only);
        most = comet_fmax(most, every[1] * full + every_wg[1] * weight_only);
    }
    return most + recompute_work;
}

static void place_kind(comet_result *out, comet_mem_kind k, double bytes, double offloaded)
{
    out->mem[COMET_TIER_HBM][k] = bytes * (1.0 - offloaded);
    out->mem[COMET_TIER_EXPANSION][k] = bytes * offloaded;
}

void footprint_compute(const comet_system *sys, const comet_strategy *s, const work_stage *w,
                       const step_plan *plan, footprint *fp, comet_result *out)
{
    const plan_dp *dp = &plan->dp;
    double micro = (double)plan->microbatches;
    double bytes[COMET_MEM_KIND_COUNT];
    /* replicated parameters shard under ZeRO; model-parallel ones are
     * already split over the stage's NPUs */
    double mp = w->params_mp_npu;
    /* fp8: the FP8 weight copies and scaling state, beside the weights;
     * ZeRO does not shard them (docs/model.md, Section 6.1) */
    /* expert parameters shard over the expert-DP group ((dp/ep) x cp) */
    /* a stage holding copies of its parameters (DualPipe: both directions'
     * pieces) keeps weights, gradients and optimizer state for each: the
     * copies' gradients are summed only after the step's last backward
     * (deepseek-ai/DualPipe's example), and each copy is updated where it
     * lives (docs/model.md 9.1) */
    double copies = (double)sched_copies(s);
    double pn = copies * w->params_npu, pe = copies * w->params_expert_npu;
    mp *= copies;
    bytes[COMET_MEM_WEIGHTS] =
        (plan_held(pn, pe, dp->weight_shards, dp->expert_weight_shards) + mp) * dp->weight_bytes +
        copies * w->fp8_bytes;
    bytes[COMET_MEM_GRADIENTS] =
        (plan_held(pn, pe, dp->grad_shards, dp->expert_grad_shards) + mp) * dp->grad_held_bytes;
    double grad_held = bytes[COMET_MEM_GRADIENTS]; /* the shard that accumulates */
    bytes[COMET_MEM_OPTIMIZER] =
        (plan_held(pn, pe, dp->optimizer_shards, dp->expert_optimizer_shards) + mp) *
        dp->optimizer_state_bytes;
    if (dp->per_layer) {
        /* ZeRO 3 under fsdp: a layer computes on its gathered weights
         * while up to `prefetch` more layers' gathers have landed, and its
         * backward writes its whole gradient before the reduce-scatter
         * shards it (docs/model.md, frameworks) */
        double largest = 0.0;
        for (int i = 0; i < w->n_layers; i++)
            if (!w->layers[i].model_parallel && w->layers[i].params > largest)
                largest = w->layers[i].params;
        bytes[COMET_MEM_WEIGHTS] += (double)(dp->prefetch + 1) * largest * dp->weight_bytes;
        bytes[COMET_MEM_GRADIENTS] += largest * dp->grad_bytes;
    }
    double act_per_micro = 0.0;
    bytes[COMET_MEM_ACTIVATIONS] = activation_bytes(s, w, micro, &act_per_micro);

    double off[COMET_MEM_KIND_COUNT] = {0};
    off[COMET_MEM_OPTIMIZER] = s->offload_optimizer ? 1.0 : 0.0;
    off[COMET_MEM_WEIGHTS] = s->offload_weights ? 1.0 : 0.0;
    off[COMET_MEM_ACTIVATIONS] = s->offload_activations ? 1.0 : 0.0;
    off[COMET_MEM_GRADIENTS] = s->offload_gradients ? 1.0 : 0.0;

    double hbm_cap = sys->hbm.capacity;
    double exp_cap = hw_expansion_capacity(sys, comet_strategy_npus(s));
    double in_hbm = 0.0;
    for (int k = 0; k < COMET_MEM_KIND_COUNT; k++)
        in_hbm += bytes[k] * (1.0 - off[k]);

    /* Spill order: optimizer state, weights, gradients, activations. A
     * tier that cannot move data (no bandwidth) cannot hold working state. */
    static const comet_mem_kind spill[] = {COMET_MEM_OPTIMIZER, COMET_MEM_WEIGHTS,
                                           COMET_MEM_GRADIENTS, COMET_MEM_ACTIVATIONS};
    bool usable = plan->expansion.bandwidth > 0.0;
    for (size_t i = 0; i < sizeof spill / sizeof spill[0] && usable; i++) {
        comet_mem_kind k = spill[i];
        double over = in_hbm - hbm_cap;
        if (over <= 0.0)
            break;
        if (bytes[k] <= 0.0)
            continue;
        double resident = bytes[k] * (1.0 - off[k]);
        double move = comet_fmin(over, resident);
        off[k] += move / bytes[k];
        in_hbm -= move;
    }

    for (int k = 0; k < COMET_MEM_KIND_COUNT; k++)
        place_kind(out, (comet_mem_kind)k, bytes[k], off[k]);
    out->mem_total[COMET_TIER_HBM] = 0.0;
    out->mem_total[COMET_TIER_EXPANSION] = 0.0;
    for (int k = 0; k < COMET_MEM_KIND_COUNT; k++) {
        out->mem_total[COMET_TIER_HBM] += out->mem[COMET_TIER_HBM][k];
        out->mem_total[COMET_TIER_EXPANSION] += out->mem[COMET_TIER_EXPANSION][k];
    }
    out->mem_capacity[COMET_TIER_HBM] = hbm_cap;
    out->mem_capacity[COMET_TIER_EXPANSION] = exp_cap;
    out->feasible = true;
    out->infeasible = COMET_FITS;
    if (!usable && out->mem_total[COMET_TIER_EXPANSION] > 0.0) {
        out->feasible = false;
        out->infeasible = COMET_NO_EXPANSION_TIER;
    } else if (out->mem_total[COMET_TIER_HBM] > hbm_cap * (1.0 + 1e-12)) {
        out->feasible = false;
        out->infeasible = COMET_NO_FIT_HBM;
    } else if (out->mem_total[COMET_TIER_EXPANSION] > exp_cap * (1.0 + 1e-12)) {
        out->feasible = false;
        out->infeasible = COMET_NO_FIT_EXPANSION;
    }

    fp->optimizer_offloaded = off[COMET_MEM_OPTIMIZER];
    fp->weights_offloaded = off[COMET_MEM_WEIGHTS];
    fp->activations_offloaded = off[COMET_MEM_ACTIVATIONS];
    fp->gradients_offloaded = off[COMET_MEM_GRADIENTS];
    /* Offloaded weights are read in every microbatch's forward and backward
     * (and written once after the update); offloaded activations are
     * written in forward and read back in backward. */
    double w_off = bytes[COMET_MEM_WEIGHTS] * off[COMET_MEM_WEIGHTS];
    fp->pass_bytes = w_off + act_per_micro * off[COMET_MEM_ACTIVATIONS];
    fp->final_bytes = w_off;
    /* one transfer per layer and pass, each paying the tier's latency */
    double layers = 0.0;
    for (int i = 0; i < w->n_layers; i++)
        layers += w->layers[i].count;
    fp->pass_transfers = (off[COMET_MEM_WEIGHTS] > 0.0 ? layers : 0.0) +
                         (off[COMET_MEM_ACTIVATIONS] > 0.0 ? layers : 0.0);
    fp->final_transfers = off[COMET_MEM_WEIGHTS] > 0.0 ? layers : 0.0;
    /* Offloaded gradients stream out as backward produces them (FRED's
     * weight streaming); the offloaded fraction of the held shard moves */
    fp->grad_bytes = grad_held * off[COMET_MEM_GRADIENTS];
    fp->grad_transfers = off[COMET_MEM_GRADIENTS] > 0.0 ? layers : 0.0;
}

const char *comet_result_reason(const comet_result *r, char *out, size_t cap)
{
    const double gib = COMET_GIB;
    switch (r->infeasible) {
    case COMET_NO_FIT_HBM:
        snprintf(out, cap, "HBM: %.1f GiB needed, %.1f GiB available",
                 r->mem_total[COMET_TIER_HBM] / gib, r->mem_capacity[COMET_TIER_HBM] / gib);
        break;
    case COMET_NO_FIT_EXPANSION:
        snprintf(out, cap, "expansion memory: %.1f GiB needed, %.1f GiB available",
                 r->mem_total[COMET_TIER_EXPANSION] / gib,
                 r->mem_capacity[COMET_TIER_EXPANSION] / gib);
        break;
    case COMET_NO_EXPANSION_TIER:
        snprintf(out, cap, "offload asked for, but the system has no expansion tier that can "
                           "move data (none, or no bandwidth)");
        break;
    case COMET_FITS:
    default:
        snprintf(out, cap, "fits");
        break;
    }
    return out;
}
