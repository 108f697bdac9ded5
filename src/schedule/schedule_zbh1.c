/* ZB-H1, the memory-efficient zero-bubble schedule (Qi, Wan, Huang, Lin,
 * "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241, Sec. 2.1
 * and Fig. 3). The backward is split into B, the input gradient the
 * previous stage waits for, and W, the weight gradient nothing waits for
 * but the optimizer. Forwards and Bs keep 1F1B's order (stage i of p runs
 * p-i-1 warm-up forwards); stage i defers its Ws, keeping i of them
 * pending and running the oldest as soon as more are, so every stage has
 * p microbatches between F and W, and the pending Ws fill what would be
 * the cool-down's bubbles. Why: the bubble drops from (p-1)(F+B+W) to
 * (p-1)(F+B-W) while the first stage, which holds the most activations,
 * keeps 1F1B's p microbatches; a later stage i holds p-i microbatches'
 * activations and i microbatches' weight-gradient inputs (each GEMM's
 * input and output gradient, what W reads), the schedule's memory cost. */
#include "schedule.h"

#include <math.h>

static void zbh1_program(const comet_strategy *s, int64_t micro, int64_t stage, sched_emit_fn emit,
                         void *ctx)
{
    int64_t warmup = s->pp - stage - 1, f = 0, w = 0;
    if (warmup > micro)
        warmup = micro;
    for (; f < warmup; f++)
        emit(ctx, (sched_pass){.microbatch = f, .chunk = 0, .kind = SCHED_FORWARD});
    for (int64_t b = 0; b < micro; b++) {
        if (f < micro) {
            emit(ctx, (sched_pass){.microbatch = f, .chunk = 0, .kind = SCHED_FORWARD});
            f++;
        }
        emit(ctx, (sched_pass){.microbatch = b, .chunk = 0, .kind = SCHED_BACKWARD_INPUT});
        /* Ws pending: b + 1 - w; keep `stage` of them */
        for (; b + 1 - w > stage; w++)
            emit(ctx, (sched_pass){.microbatch = w, .chunk = 0, .kind = SCHED_BACKWARD_WEIGHT});
    }
    for (; w < micro; w++)
        emit(ctx, (sched_pass){.microbatch = w, .chunk = 0, .kind = SCHED_BACKWARD_WEIGHT});
}

/* (p-1)(F+B-W) = (p-1)(total - 2W) with m >= p microbatches (the
 * paper's Sec. 2.1). With fewer, fewer Ws are left to fill the cool-down:
 * one microbatch leaves (p-1)(F+B), each W runs right after its B while
 * the input gradient travels on; each further microbatch's W fills one
 * more W-long gap, so (p-1)(F+B) - min(m-1, p-1) W in all. */
static double zbh1_even_bubble(const comet_strategy *s, const sched_micro *t)
{
    double p = (double)s->pp, m = t->count > 0.0 ? t->count : p;
    return (p - 1.0) * (t->total - t->weight) - comet_fmin(m - 1.0, p - 1.0) * t->weight;
}

/* Stages that differ: the longest path, over the stage b it runs along,
 * as in 1F1B (schedule_1f1b.c) with the weight gradients off the chain:
 * the first microbatch's forward reaches b, b runs its m microbatches but
 * the Ws it still holds after its last B (min(b+1, m) of them), waiting
 * where the stages after it take longer to return an input gradient
 * (their F and B, no W) than its warm-up forwards or its cool-down
 * backwards last; the last input gradient then leaves towards stage j <=
 * b, which runs its own last min(j+1, m) Ws. Even stages give the closed
 * form above; uneven ones within 7.9 % (a lower bound) of the simulated
 * step on 3,000 random splits (docs/model.md, uneven stages). */
static double zbh1_bubble(const comet_strategy *s, const sched_micro *t)
{
    double m = t->count > 0.0 ? t->count : (double)s->pp;
    if (!t->stage)
        return zbh1_even_bubble(s, t);
    double chain = 0.0, fwd_before = 0.0, chain_before = 0.0, longest = 0.0, tail = 0.0;
    sched_stage_time st;
    for (int64_t i = 0; i < s->pp; i++) {
        t->stage(t->stage_ctx, i, &st);
        chain += st.fwd + st.bwd - st.weight;
    }
    double prev_input = 0.0;
    for (int64_t b = 0; b < s->pp; b++) {
        t->stage(t->stage_ctx, b, &st);
        double input = st.bwd - st.weight, link = st.fwd + input;
        double held = comet_fmin((double)b + 1.0, m) * st.weight;
        tail = comet_fmax(tail + prev_input, held);
        double later = chain - chain_before - link;
        double path = fwd_before + m * (st.fwd + st.bwd) - held +
                      sched_ramp_waits(s, b, m, later, st.fwd, st.bwd) + tail;
        longest = comet_fmax(longest, path);
        fwd_before += st.fwd;
        chain_before += link;
        prev_input = input;
    }
    return longest - m * t->total;
}

/* The first stage: 1F1B's p (it defers no W). */
static double zbh1_in_flight(const comet_strategy *s, double micro)
{
    return sched_1f1b.in_flight(s, micro);
}

/* Stage i: 1F1B's p-i before their B, and up to i more after it, waiting
 * for their W (fewer when the step has fewer microbatches). */
static void zbh1_stage_in_flight(const comet_strategy *s, double micro, int64_t stage,
                                 double *full, double *weight_only)
{
    sched_1f1b.stage_in_flight(s, micro, stage, full, weight_only);
    *weight_only = comet_fmax(0.0, comet_fmin((double)stage, micro - *full));
}

/* One microbatch enters and one leaves per step, as in 1F1B. */
static int64_t zbh1_round(const comet_strategy *s)
{
    (void)s;
    return 1;
}

/* The warm-up's forwards are of microbatches below p; after its last
 * forward stage i runs the Bs of the last p-i microbatches and the Ws of
 * the last p: within 1F1B's bound of 2p. */
static int64_t zbh1_ramp(const comet_strategy *s)
{
    return 2 * s->pp;
}

const sched_kind sched_zbh1 = {
    .name = "zb-h1",
    .program = zbh1_program,
    .bubble = zbh1_bubble,
    .in_flight = zbh1_in_flight,
    .stage_in_flight = zbh1_stage_in_flight,
    .round = zbh1_round,
    .ramp = zbh1_ramp,
};
