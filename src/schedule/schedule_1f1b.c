/* 1F1B (PipeDream-Flush; Narayanan et al., "Efficient large-scale language
 * model training on GPU clusters using Megatron-LM", SC 2021; Megatron-LM's
 * forward_backward_pipelining_without_interleaving): stage i of p runs
 * p-i-1 warm-up forwards, then one forward and one backward in turn, then
 * the remaining backwards, microbatches in order both ways. The bubble is
 * p-1 microbatch times, (p-1)/m of the ideal step; the first stage holds
 * up to p microbatches' activations (Korthikanti et al. 2022). */
#include "schedule.h"

#include <math.h>

static sched_pass one_f_one_b_step(const comet_strategy *s, int64_t k, bool forward)
{
    (void)s;
    return (sched_pass){
        .microbatch = k, .chunk = 0, .kind = forward ? SCHED_FORWARD : SCHED_BACKWARD};
}

static void one_f_one_b_program(const comet_strategy *s, int64_t micro, int64_t stage,
                                sched_emit_fn emit, void *ctx)
{
    sched_warmup_steady_cooldown(s, micro, s->pp - stage - 1, one_f_one_b_step, emit, ctx);
}

/* Even stages: p-1 microbatch times. Stages that differ: the longest
 * path through the step's passes, over the stage b it runs along: the
 * first microbatch's forward reaches b (the forwards and backwards of the
 * stages before it, since the last microbatch's backward leaves the same
 * way), b runs its m microbatches, and waits where the stages after it
 * take longer to return a backward than its warm-up forwards or its
 * cool-down backwards last (sched_ramp_waits). Exact when one stage is
 * the slowest and the others are in proportion (F:B alike); a lower bound
 * otherwise (paths along several stages), within 4.3 % of the simulated
 * step on 3,000 random splits (docs/model.md, uneven stages). */
static double one_f_one_b_bubble(const comet_strategy *s, const sched_micro *t)
{
    double m = t->count > 0.0 ? t->count : (double)s->pp;
    if (!t->stage)
        return ((double)s->pp - 1.0) * t->total;
    double all = 0.0, before = 0.0, longest = 0.0;
    sched_stage_time st;
    for (int64_t i = 0; i < s->pp; i++) {
        t->stage(t->stage_ctx, i, &st);
        all += st.fwd + st.bwd;
    }
    for (int64_t b = 0; b < s->pp; b++) {
        t->stage(t->stage_ctx, b, &st);
        double own = st.fwd + st.bwd, later = all - before - own;
        double path = before + m * own + sched_ramp_waits(s, b, m, later, st.fwd, st.bwd);
        longest = comet_fmax(longest, path);
        before += own;
    }
    return longest - m * t->total;
}

static double one_f_one_b_in_flight(const comet_strategy *s, double micro)
{
    return s->pp > 1 ? comet_fmin(micro, (double)s->pp) : 1.0;
}

/* Stage i runs p-i-1 warm-up forwards and one more before its first
 * backward: p-i microbatches in flight (all of them when fewer). */
static void one_f_one_b_stage_in_flight(const comet_strategy *s, double micro, int64_t stage,
                                        double *full, double *weight_only)
{
    *full = s->pp > 1 ? comet_fmin(micro, (double)(s->pp - stage)) : 1.0;
    *weight_only = 0.0;
}

/* One microbatch enters and one leaves per 1F1B step. */
static int64_t one_f_one_b_round(const comet_strategy *s)
{
    (void)s;
    return 1;
}

/* Stage i's forwards before its first backward are of microbatches
 * 0..p-i-1 and its backwards after its last forward of the last p-i, so p
 * would do; the bound given is the family's 2p (interleaved 1F1B's), the
 * margin the simulator's extrapolation has always kept for both, so its
 * runs and figures stay as they were. */
static int64_t one_f_one_b_ramp(const comet_strategy *s)
{
    return 2 * s->pp;
}

const sched_kind sched_1f1b = {
    .name = "1f1b",
    .program = one_f_one_b_program,
    .bubble = one_f_one_b_bubble,
    .in_flight = one_f_one_b_in_flight,
    .stage_in_flight = one_f_one_b_stage_in_flight,
    .round = one_f_one_b_round,
    .ramp = one_f_one_b_ramp,
};
