/* What the pipeline schedules share: choosing the one a strategy runs, and
 * the warm-up / steady 1F1B / cool-down shape that 1F1B and interleaved
 * 1F1B both have (they differ in the warm-up length and in which pass each
 * step is); ZB-H1 keeps 1F1B's order of forwards and input gradients. */
#include "schedule.h"

#include <math.h>

const sched_kind *sched_of(const comet_strategy *s)
{
    if (s->interleave > 1)
        return &sched_interleaved;
    return s->schedule == COMET_SCHEDULE_ZB_H1 ? &sched_zbh1 : &sched_1f1b;
}

void sched_warmup_steady_cooldown(const comet_strategy *s, int64_t steps, int64_t warmup,
                                  sched_step_fn at, sched_emit_fn emit, void *ctx)
{
    if (warmup > steps)
        warmup = steps;
    int64_t f = 0, k = 0;
    for (; f < warmup; f++)
        emit(ctx, at(s, f, true));
    for (; f < steps; f++, k++) {
        emit(ctx, at(s, f, true));
        emit(ctx, at(s, k, false));
    }
    for (; k < steps; k++)
        emit(ctx, at(s, k, false));
}

double sched_ramp_waits(const comet_strategy *s, int64_t b, double m, double later, double fwd,
                        double cooldown)
{
    double w = comet_fmin((double)(s->pp - b - 1), m - 1.0);
    double warm = comet_fmax(0.0, later - w * fwd), cool = comet_fmax(0.0, later - w * cooldown);
    return m >= (double)(s->pp - b + 1) ? warm + cool : comet_fmax(warm, cool);
}
