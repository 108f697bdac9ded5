/* What the pipeline schedules share: choosing the one a strategy runs, the
 * members a schedule may leave to their defaults (one copy of the
 * parameters, Megatron's numbering of virtual stages, one path for every
 * microbatch), and the warm-up / steady 1F1B / cool-down shape that 1F1B
 * and interleaved 1F1B both have (they differ in the warm-up length and in
 * which pass each step is); ZB-H1 keeps 1F1B's order of forwards and input
 * gradients. */
#include "schedule.h"

#include <math.h>

const sched_kind *sched_of(const comet_strategy *s)
{
    if (s->interleave > 1)
        return &sched_interleaved;
    if (s->schedule == COMET_SCHEDULE_DUALPIPE)
        return &sched_dualpipe;
    return s->schedule == COMET_SCHEDULE_ZB_H1 ? &sched_zbh1 : &sched_1f1b;
}

int64_t sched_copies(const comet_strategy *s)
{
    const sched_kind *k = sched_of(s);
    return k->copies ? k->copies(s) : 1;
}

int64_t sched_virtual_stage(const comet_strategy *s, int64_t chunk, int64_t stage)
{
    const sched_kind *k = sched_of(s);
    return k->virtual_stage ? k->virtual_stage(s, chunk, stage) : chunk * s->pp + stage;
}

void sched_place(const comet_strategy *s, int64_t mb, int64_t vs, int64_t *stage, int64_t *chunk)
{
    const sched_kind *k = sched_of(s);
    if (k->place) {
        k->place(s, mb, vs, stage, chunk);
    } else {
        *stage = vs % s->pp;
        *chunk = vs / s->pp;
    }
}

bool sched_last_through(const comet_strategy *s, int64_t micro, int64_t mb, int64_t vs)
{
    int64_t stage, chunk;
    sched_place(s, mb, vs, &stage, &chunk);
    /* the paths alternate within a round: a later one on the same stage
     * is found within a round of microbatches */
    int64_t round = sched_of(s)->round(s);
    for (int64_t later = mb + 1; later < micro && later <= mb + round; later++) {
        int64_t st, ch;
        sched_place(s, later, vs, &st, &ch);
        if (st == stage)
            return false;
    }
    return true;
}

double sched_overlapped_pairs(const comet_strategy *s, int64_t micro)
{
    const sched_kind *k = sched_of(s);
    return k->overlapped ? k->overlapped(s, micro) : 0.0;
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
