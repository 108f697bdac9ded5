/* The step plan: every step-level item of one training step, worked out
 * once for both engines. Layers' own work and collectives come from the
 * workload builder and layer_times; what happens once per microbatch or
 * once per step around them is decided here: the microbatch count, which
 * collective each ZeRO stage uses for gradients and weights and when, the
 * bytes per parameter they move, how ZeRO shards weights, gradients and
 * optimizer state, the optimizer step's memory traffic, the expansion
 * tier's rate and latency, and the pipeline sends with the network
 * dimension they use. The estimator prices the busiest stage's items in
 * closed form; the simulator scales the same per-parameter rules to each
 * stage's own layers and turns them into tasks. Sources: docs/model.md. */
#include "cost.h"

#include "comet/network.h"
#include "../schedule/schedule.h"

/* The data-parallel rules of strategy s for a model of `elem`-byte elements. */
static void plan_dp_of(const comet_strategy *s, double elem, plan_dp *out)
{
    double dp = (double)comet_strategy_grad_size(s, false);
    double edp = (double)comet_strategy_grad_size(s, true);
    int zero = s->zero_stage;
    out->active = dp > 1.0;
    out->expert_active = edp > 1.0;
    out->expert_apart = comet_strategy_experts_apart(s);
    out->overlap = s->overlap_dp;
    /* ZeRO 0: one all-reduce of the gradients after the last microbatch.
     * ZeRO 1: one reduce-scatter, then an all-gather of the updated
     * weights. ZeRO 2 and 3 keep only a shard of the gradients, so every
     * microbatch's gradients are reduce-scattered as its backward ends
     * (DeepSpeed's behaviour); ZeRO 3 also gathers the weights before
     * every forward and backward instead of once after the step. */
    out->reduce = zero == 0 ? COMET_COLL_ALL_REDUCE : COMET_COLL_REDUCE_SCATTER;
    out->reduce_each_micro = zero >= 2;
    out->gather_each_pass = zero >= 3;
    out->gather_after_step = zero == 1 || zero == 2;
    /* Megatron's distributed optimizer gathers the updated weights bucket
     * by bucket as the next forward reaches them (overlap_param_gather);
     * under ideal the gather never hides, as before frameworks */
    out->gather_window = comet_strategy_framework(s) == COMET_FRAMEWORK_MEGATRON
                             ? PLAN_BEHIND_FORWARD
                             : PLAN_EXPOSED;
    out->grad_bytes = s->grad_fp32 ? 4.0 : elem;
    out->grad_held_bytes = s->optimizer_state == COMET_OPTIM_BF16 ? elem : out->grad_bytes;
    out->weight_bytes = elem;
    out->optimizer_state_bytes = optimizer_state_bytes(s, elem);
    out->weight_shards = zero >= 3 ? dp : 1.0;
    out->grad_shards = zero >= 2 ? dp : 1.0;
    out->optimizer_shards = zero >= 1 ? dp : 1.0;
    out->expert_weight_shards = zero >= 3 ? edp : 1.0;
    out->expert_grad_shards = zero >= 2 ? edp : 1.0;
    out->expert_optimizer_shards = zero >= 1 ? edp : 1.0;
    /* ZeRO 3 as FSDP runs it: per-layer collectives (fsdp.c); under
     * framework ideal, the step-level gathers below */
    out->per_layer = zero >= 3 && comet_strategy_framework(s) == COMET_FRAMEWORK_FSDP;
    out->prefetch = s->prefetch;
    out->gather_bucket = (double)s->gather_bucket;
    out->reduce_bucket = (double)s->reduce_bucket;
}

double plan_layer_collective(const comet_system *sys, const comet_strategy *s, const plan_dp *dp,
                             coll_memo *memo, bool gather, double params, double expert)
{
    double per_param = gather ? dp->weight_bytes : dp->grad_bytes;
    double bucket = gather ? dp->gather_bucket : dp->reduce_bucket;
    comet_collective c = gather ? COMET_COLL_ALL_GATHER : dp->reduce;
    double apart = dp->expert_apart ? expert : 0.0, t = 0.0;
    int64_t span[COMET_MAX_DIMS], buf[COMET_MAX_DIMS];
    if (dp->active && params - apart > 0.0) {
        double n = plan_messages(params - apart, bucket);
        comet_strategy_grad_spans(s, false, span);
        const int64_t *gap = plan_spacing(sys, s, COMET_GROUP_DP, PLAN_DENSE_GRADS, buf);
        t += n * coll_memo_time(memo, sys, span, gap, c, (params - apart) * per_param / n);
    }
    if (dp->expert_active && apart > 0.0) {
        double n = plan_messages(apart, bucket);
        comet_strategy_grad_spans(s, true, span);
        const int64_t *gap = plan_spacing(sys, s, COMET_GROUP_DP, PLAN_EXPERT_GRADS, buf);
        t += n * coll_memo_time(memo, sys, span, gap, c, apart * per_param / n);
    }
    return t;
}

/* Adam's state per parameter (docs/model.md 9.1): its two moments, 4 bytes
 * each or the model's `elem`, and where the weights are 16-bit a master
 * copy: fp32 (4), its low bits beside the weight (4 - elem), or none. */
static void optimizer_parts(const comet_strategy *s, double elem, double *master,
                            double *moment)
{
    switch (s->optimizer_state) {
    case COMET_OPTIM_REMAINDERS:
        *master = 4.0 - elem;
        *moment = 4.0;
        return;
    case COMET_OPTIM_BF16_MOMENTS:
        *master = 4.0;
        *moment = elem;
        return;
    case COMET_OPTIM_BF16:
        *master = 0.0;
        *moment = elem;
        return;
    case COMET_OPTIM_FP32:
    default:
        *master = 4.0;
        *moment = 4.0;
        return;
    }
}

double optimizer_state_bytes(const comet_strategy *s, double elem)
{
    double master, moment;
    optimizer_parts(s, elem, &master, &moment);
    return master + 2.0 * moment;
}

double optimizer_bytes_per_param(const comet_strategy *s, double elem)
{
    double master, moment;
    optimizer_parts(s, elem, &master, &moment);
    if (master <= 0.0) {
        /* No master: the gradient (in the weights' dtype) is read for the
         * global norm, then Adam reads gradient, weight and both moments
         * and writes the last three, all `elem` bytes. */
        return 2.0 * elem + 6.0 * elem;
    }
    /* Mixed-precision Adam as Megatron runs it, per parameter: read the
     * low-precision gradient and write it as an fp32 main gradient (skipped
     * when gradients are already fp32), read it for the global norm, then
     * Adam reads gradient, fp32 master weight, m and v and writes the last
     * three (7 x 4 bytes with fp32 moments), and the master weight is cast
     * back (read 4, write elem). With remainders the fp32 master is the
     * weight and its low bits, read and written whole in Adam's pass, so
     * there is no cast back. */
    double cast_grad = s->grad_fp32 ? 0.0 : elem + 4.0;
    double adam = 4.0 + 2.0 * (4.0 + 2.0 * moment);
    double cast_back = s->optimizer_state == COMET_OPTIM_REMAINDERS ? 0.0 : 4.0 + elem;
    return cast_grad + 4.0 + adam + cast_back;
}

double plan_optimizer_bytes(const step_plan *p, const work_stage *w, double replicated,
                            double expert)
{
    /* The replicated parameters (a 1/dp shard under ZeRO >= 1) and, of the
     * model-parallel tables, only the rows the step looked up (a sparse
     * update), at most all of them. */
    double micro = (double)p->microbatches;
    double touched = p->elem > 0.0 ? micro * w->mp_lookup_bytes / p->elem : 0.0;
    double updated = plan_held(replicated, expert, p->dp.optimizer_shards,
                               p->dp.expert_optimizer_shards) +
                     (touched < w->params_mp_npu ? touched : w->params_mp_npu);
    return updated * p->optimizer_bytes_per_param;
}

double plan_expansion_time(const plan_expansion *e, double bytes)
{
    if (!(bytes > 0.0) || !(e->bandwidth > 0.0))
        return 0.0;
    return e->latency + bytes / e->bandwidth;
}

static void add_comm(step_plan *p, comet_collective c, double bytes, bool each_micro,
                     plan_window window, bool gather, bool expert)
{
    if (p->n_comms >= PLAN_MAX_COMMS)
        return;
    plan_comm *pc = &p->comms[p->n_comms++];
    pc->collective = c;
    pc->group = COMET_GROUP_DP;
    pc->bytes = bytes;
    pc->each_micro = each_micro;
    pc->window = p->dp.overlap ? window : PLAN_EXPOSED;
    pc->gather = gather;
    pc->expert = expert;
}

/* The busiest stage's step-level DP collectives: its replicated
 * parameters' gradient reduction and ZeRO's weight gathers. Reductions
 * may hide behind one microbatch's backward, gathers behind the pass they
 * feed; the gather of updated weights after the optimizer never hides.
 * With expert parallelism the expert parameters have their own set, over
 * the expert-DP group, after the dense ones. */
static void plan_dp_set(step_plan *p, double params, bool expert)
{
    const plan_dp *dp = &p->dp;
    double grads = params * dp->grad_bytes, weights = params * dp->weight_bytes;
    if (dp->per_layer)
        return; /* each layer's own (fsdp.c) */
    add_comm(p, dp->reduce, grads, dp->reduce_each_micro, PLAN_BEHIND_BACKWARD, false, expert);
    if (dp->gather_each_pass) {
        add_comm(p, COMET_COLL_ALL_GATHER, weights, true, PLAN_BEHIND_FORWARD, true, expert);
        add_comm(p, COMET_COLL_ALL_GATHER, weights, true, PLAN_BEHIND_BACKWARD, true, expert);
    }
    if (dp->gather_after_step)
        add_comm(p, COMET_COLL_ALL_GATHER, weights, false, dp->gather_window, true, expert);
}

static void plan_dp_comms(step_plan *p, const comet_strategy *s, const work_stage *w)
{
    const plan_dp *dp = &p->dp;
    /* every copy of the stage's parameters (DualPipe 2) is reduced */
    double copies = (double)sched_copies(s);
    double expert = dp->expert_apart ? copies * w->params_expert_npu : 0.0;
    if (dp->active)
        plan_dp_set(p, copies * w->params_npu - expert, false);
    if (dp->expert_active && expert > 0.0)
        plan_dp_set(p, expert, true);
}

void step_plan_memory(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                      step_plan *out)
{
    out->n_comms = 0;
    out->microbatches = comet_strategy_microbatches(s);
    out->elem = comet_dtype_bytes(m->dtype);
    plan_dp_of(s, out->elem, &out->dp);
    /* the bandwidth one NPU gets of the tier (a per-node device or a pool
     * is divided among the NPUs using it at once, which under synchronous
     * training is all of them) */
    out->expansion.bandwidth = hw_expansion_bandwidth(sys, comet_strategy_npus(s));
    out->expansion.latency = sys->expansion.latency > 0.0 ? sys->expansion.latency : 0.0;
}

void step_plan_traffic(const comet_system *sys, const comet_strategy *s, coll_memo *memo,
                       const work_stage *w, step_plan *out)
{
    out->n_comms = 0;
    plan_dp_comms(out, s, w);
    out->optimizer_bytes_per_param = optimizer_bytes_per_param(s, out->elem);
    out->send.dim = s->pp > 1 ? comet_p2p_dim(sys, s->place[COMET_GROUP_PP]) : -1;
    out->send.bytes = w->p2p_bytes;
    out->send.per_micro = s->pp > 1 ? 2.0 * (double)s->interleave : 0.0;
    out->send.load = 1.0;
    if (out->send.dim >= 0) {
        /* the next stage's rank is one step of the pipeline's digit, the
         * outermost on every dimension, on: a stage's own ranks' span
         * apart; the topology says what such sends cost together (a
         * Clos's uplinks, a ring's or torus's links of part of the NPU's
         * bandwidth: comet_p2p_shift_load) */
        int d = out->send.dim;
        int64_t tp = s->place[COMET_GROUP_TP][d], cp = s->place[COMET_GROUP_CP][d],
                dp = s->place[COMET_GROUP_DP][d], pp = s->place[COMET_GROUP_PP][d];
        int64_t stride = (tp > 1 ? tp : 1) * (cp > 1 ? cp : 1) * (dp > 1 ? dp : 1);
        out->send.load = coll_memo_shift_load(memo, sys, d, stride, stride * (pp > 1 ? pp : 1));
    }
}

void step_plan_build(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                     const work_stage *w, step_plan *out)
{
    step_plan_memory(m, sys, s, out);
    step_plan_traffic(sys, s, NULL, w, out);
}
