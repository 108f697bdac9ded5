/* Interleaved 1F1B (Narayanan et al., SC 2021, section 2.2; Megatron-LM's
 * forward_backward_pipelining_with_interleaving): every stage holds v model
 * chunks, chunk c of stage i being virtual stage c*p + i. Forward steps
 * take p microbatches through chunk 0, the same p through chunk 1, ...,
 * then the next p microbatches; backward steps the same with the chunks in
 * reverse. Stage i runs (p-i-1)*2 + (v-1)*p warm-up forwards, then 1F1B.
 * Megatron runs every forward first when m == p; this schedule keeps 1F1B
 * there too (the simulator's results depend on it). The bubble shrinks to
 * (p-1)/v microbatch times; activations in flight grow by 1 + (p-1)/(p v)
 * (Korthikanti et al. 2022). */
#include "schedule.h"

/* Megatron's get_microbatch_id_in_model_chunk and get_model_chunk_id. */
static sched_pass interleaved_step(const comet_strategy *s, int64_t k, bool forward)
{
    int64_t p = s->pp, v = s->interleave;
    int64_t chunk = (k / p) % v;
    return (sched_pass){.microbatch = (k / (p * v)) * p + k % p,
                        .chunk = forward ? chunk : v - 1 - chunk,
                        .kind = forward ? SCHED_FORWARD : SCHED_BACKWARD};
}

static void interleaved_program(const comet_strategy *s, int64_t micro, int64_t stage,
                                sched_emit_fn emit, void *ctx)
{
    int64_t p = s->pp, v = s->interleave;
    sched_warmup_steady_cooldown(s, micro * v, (p - stage - 1) * 2 + (v - 1) * p,
                                 interleaved_step, emit, ctx);
}

static double interleaved_bubble(const comet_strategy *s, const sched_micro *t)
{
    return ((double)s->pp - 1.0) / (double)s->interleave * t->total;
}

/* 1F1B's count, times 1 + (p-1)/(p v). */
static double interleaved_in_flight(const comet_strategy *s, double micro)
{
    double p = (double)s->pp, v = (double)s->interleave;
    return sched_1f1b.in_flight(s, micro) * (1.0 + (p - 1.0) / (p * v));
}

/* Megatron's interleaved program takes microbatches p at a time through
 * each model chunk in turn. */
static int64_t interleaved_round(const comet_strategy *s)
{
    return s->pp;
}

/* Stage 0's forwards before its first backward ((p-1)*2 + (v-1)*p warm-up
 * steps and the first steady one) take microbatches 0..p-1 through chunks
 * 0..v-1 and then reach microbatch 2p-2 in chunk 0; the backwards after
 * its last forward mirror them over the last microbatches: within 2p. */
static int64_t interleaved_ramp(const comet_strategy *s)
{
    return 2 * s->pp;
}

const sched_kind sched_interleaved = {
    .name = "interleaved",
    .program = interleaved_program,
    .bubble = interleaved_bubble,
    .in_flight = interleaved_in_flight,
    .stage_in_flight = NULL,
    .round = interleaved_round,
    .ramp = interleaved_ramp,
};
