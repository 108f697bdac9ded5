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

static double one_f_one_b_bubble(const comet_strategy *s, const sched_micro *t)
{
    return ((double)s->pp - 1.0) * t->total;
}

static double one_f_one_b_in_flight(const comet_strategy *s, double micro)
{
    return s->pp > 1 ? fmin(micro, (double)s->pp) : 1.0;
}

/* Stage i runs p-i-1 warm-up forwards and one more before its first
 * backward: p-i microbatches in flight (all of them when fewer). */
static void one_f_one_b_stage_in_flight(const comet_strategy *s, double micro, int64_t stage,
                                        double *full, double *weight_only)
{
    *full = s->pp > 1 ? fmin(micro, (double)(s->pp - stage)) : 1.0;
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
