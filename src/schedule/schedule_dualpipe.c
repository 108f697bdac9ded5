/* DualPipe (DeepSeek-AI, DeepSeek-V3 Technical Report, arXiv 2412.19437,
 * Sec. 3.2.1, Fig. 5 and Table 2; the schedule as deepseek-ai/DualPipe
 * describes it). Microbatches enter from both ends of the pipeline: the
 * model is cut into p pieces, and stage i holds piece i for the
 * microbatches that enter at stage 0 (direction 0) and piece p-1-i for
 * those that enter at stage p-1 (direction 1), two copies of the
 * parameters. A stage runs its warm-up forwards, then pairs of a forward
 * of one direction and a backward of the other run overlapped (F&B: each
 * pass's all-to-all and pipeline sends hide behind the other's compute),
 * and its cool-down splits some backwards into input and weight gradients
 * (as ZB-H1) to fill what would be idle. Why: the bubble drops to
 * (p/2-1)(F&B + B - 3W) against 1F1B's (p-1)(F+B), and the expert
 * all-to-all of a fine-grained MoE, as long as the compute on DeepSeek-V3,
 * leaves the critical path; the price is 2x parameters and p+1
 * microbatches' activations.
 *
 * In the interface's numbering a pass's chunk is its direction (chunk 0
 * the first copy, chunk d of stage i the virtual stage at position i, or
 * p-1-i for d = 1, along its microbatches' path), and microbatch 2j + d is
 * direction d's j-th, so that a round of two microbatches is one of each.
 * The order of a stage's passes is the repository's eight steps (their
 * counts and contents as its dualpipe.py states them, with half-rank h =
 * min(i, p-1-i) and phase 0 the direction that enters at the stage's own
 * end of the pipeline), written here in comet's own terms. */
#include "schedule.h"

#include <stdlib.h>

/* One stage's program under construction: the next forward and backward
 * of each phase and the weight gradients waiting, oldest first. */
typedef struct dual_cursor {
    const comet_strategy *s;
    int64_t stage, micro;
    int64_t fwd[2], bwd[2];
    sched_pass *pending; /* deferred Ws, a ring of `micro` */
    int64_t head, count;
    sched_emit_fn emit;
    void *ctx;
} dual_cursor;

/* The direction phase `ph` means on this stage: phase 0 enters at the
 * stage's own end (stage 0's side for the first half). */
static int64_t direction_of(const dual_cursor *c, int ph)
{
    return (int64_t)ph ^ (c->stage >= c->s->pp / 2 ? 1 : 0);
}

static void forward(dual_cursor *c, int ph, bool overlapped)
{
    int64_t d = direction_of(c, ph);
    c->emit(c->ctx, (sched_pass){.microbatch = 2 * c->fwd[ph]++ + d, .chunk = d,
                                 .kind = SCHED_FORWARD, .overlapped = overlapped});
}

/* A backward, whole or (split) its input gradient, its W deferred. */
static void backward(dual_cursor *c, int ph, bool split)
{
    int64_t d = direction_of(c, ph);
    sched_pass b = {.microbatch = 2 * c->bwd[ph]++ + d, .chunk = d,
                    .kind = split ? SCHED_BACKWARD_INPUT : SCHED_BACKWARD};
    c->emit(c->ctx, b);
    if (split && c->pending) {
        b.kind = SCHED_BACKWARD_WEIGHT;
        c->pending[(c->head + c->count++) % c->micro] = b;
    } else if (split) { /* no room to defer: W at once */
        b.kind = SCHED_BACKWARD_WEIGHT;
        c->emit(c->ctx, b);
    }
}

static void weight(dual_cursor *c)
{
    if (!c->count)
        return;
    c->emit(c->ctx, c->pending[c->head]);
    c->head = (c->head + 1) % c->micro;
    c->count--;
}

/* A forward of phase f overlapped with a backward of phase b (F&B). */
static void pair(dual_cursor *c, int f, int b)
{
    forward(c, f, true);
    backward(c, b, false);
}

/* Fewer microbatches than DualPipe runs (the strategy check wants at
 * least 2p; the simulator counts a graph's size on a round or two): every
 * forward of direction 0, then of direction 1, then the backwards in the
 * order each direction's path returns them. Acyclic: each direction's
 * forwards, then backwards, reach the stages in path order. */
static void short_program(dual_cursor *c)
{
    int64_t half[2] = {(c->micro + 1) / 2, c->micro / 2};
    int first = c->stage >= c->s->pp / 2 ? 1 : 0; /* the phase of direction 0 */
    for (int d = 0; d < 2; d++)
        for (int64_t j = 0; j < half[d]; j++)
            forward(c, first ^ d, false);
    for (int d = 1; d >= 0; d--)
        for (int64_t j = 0; j < half[d]; j++)
            backward(c, first ^ d, false);
}

/* Whether the eight-step program runs (else the short one): an even pp,
 * an even count of at least 2 pp microbatches, as strategy.c demands. */
static bool full_program(const comet_strategy *s, int64_t micro)
{
    return s->pp % 2 == 0 && micro % 2 == 0 && micro >= 2 * s->pp;
}

static void dualpipe_program(const comet_strategy *s, int64_t micro, int64_t stage,
                             sched_emit_fn emit, void *ctx)
{
    dual_cursor c = {.s = s, .stage = stage, .micro = micro, .emit = emit, .ctx = ctx};
    int64_t p = s->pp, n = p / 2, h = stage < p - 1 - stage ? stage : p - 1 - stage;
    int64_t half = micro / 2;
    if (!full_program(s, micro)) {
        short_program(&c);
        return;
    }
    c.pending = malloc(sizeof *c.pending * (size_t)micro);
    bool middle = h == n - 1;
    /* 1: warm-up forwards of phase 0 */
    for (int64_t i = 0; i < 2 * (n - h - 1); i++)
        forward(&c, 0, false);
    /* 2: both phases' forwards in turn */
    for (int64_t i = 0; i <= h; i++) {
        forward(&c, 0, false);
        forward(&c, 1, false);
    }
    /* 3: a split backward of phase 1, its W, a forward of phase 1 */
    for (int64_t i = 0; i < n - h - 1; i++) {
        backward(&c, 1, true);
        weight(&c);
        forward(&c, 1, false);
    }
    /* 4, the steady state: F0&B1, F1&B0 (the middle stages run their
     * first pair apart, the repository's note: a shorter bubble) */
    for (int64_t i = 0; i < half - p + h + 1; i++) {
        if (i == 0 && middle) {
            forward(&c, 0, false);
            backward(&c, 1, false);
        } else {
            pair(&c, 0, 1);
        }
        pair(&c, 1, 0);
    }
    /* 5: a backward of phase 1, then F1&B0 */
    for (int64_t i = 0; i < n - h - 1; i++) {
        backward(&c, 1, false);
        pair(&c, 1, 0);
    }
    /* 6: both phases' backwards in turn, the second half of them split */
    bool split = false;
    for (int64_t i = 0; i <= h; i++) {
        if (i == (h + 1) / 2 && h % 2 == 1)
            split = true;
        backward(&c, 1, split);
        if (i == (h + 1) / 2 && h % 2 == 0)
            split = true;
        backward(&c, 0, split);
    }
    /* 7: a W, then a split backward of phase 0 */
    for (int64_t i = 0; i < n - h - 1; i++) {
        weight(&c);
        backward(&c, 0, true);
    }
    /* 8: the Ws left */
    while (c.count)
        weight(&c);
    free(c.pending);
}

/* (p/2 - 1)(F&B + B - 3W), Table 2, with B the whole backward (the
 * repository's table says so) and F&B the overlapped pair's time as the
 * caller prices it (the sum of both when it gives none). Every stage is
 * charged as the busiest one: a stage holds two pieces, whose sum
 * evens out the ends (the embedding's piece beside the LM head's), so
 * the busiest piece's times bound every stage's. */
static double dualpipe_bubble(const comet_strategy *s, const sched_micro *t)
{
    double p = (double)s->pp;
    double fwd = t->fwd > 0.0 ? t->fwd : t->total / 3.0;
    double pair = t->paired > 0.0 ? t->paired : t->total;
    double b = t->total - fwd;
    return comet_fmax(0.0, (p / 2.0 - 1.0) * (pair + b - 3.0 * t->weight));
}

/* The busiest stage's count of microbatches in flight: the program
 * walked, a forward adding one and a backward (or its input gradient)
 * taking one away, the most over every stage and moment. */
typedef struct flight_walk {
    double now, most;
} flight_walk;

static void flight_pass(void *ctx, sched_pass ps)
{
    flight_walk *w = ctx;
    if (ps.kind == SCHED_FORWARD)
        w->now += 1.0;
    else if (ps.kind != SCHED_BACKWARD_WEIGHT)
        w->now -= 1.0;
    if (w->now > w->most)
        w->most = w->now;
}

/* Table 2's p + 1 on the full program (its walk gives that for every even
 * p and m >= 2p, which the tests check against the program: the estimate
 * and the search ask for it at every point, so it is not walked, O(p m),
 * here); the short program's walked. */
static double dualpipe_in_flight(const comet_strategy *s, double micro)
{
    if (full_program(s, (int64_t)micro))
        return (double)s->pp + 1.0;
    double most = 0.0;
    for (int64_t i = 0; i < s->pp; i++) {
        flight_walk w = {0.0, 0.0};
        dualpipe_program(s, (int64_t)micro, i, flight_pass, &w);
        most = comet_fmax(most, w.most);
    }
    return most;
}

/* The F&B pairs of the stage that runs the fewest: stage h runs
 * 2(m/2 - p + h + 1) + (p/2 - h - 1) of them, the middle ones one fewer,
 * so stage 0 (on 2 stages, the middle one); the short program's counted
 * on the program itself. */
typedef struct pair_count {
    double n;
} pair_count;

static void count_pair(void *ctx, sched_pass ps)
{
    if (ps.overlapped)
        ((pair_count *)ctx)->n += 1.0;
}

static double dualpipe_overlapped(const comet_strategy *s, int64_t micro)
{
    if (full_program(s, micro)) /* stage 0's, h = 0: m - 2p + p/2 + 1, less the middle's one */
        return (double)(micro - 2 * s->pp + s->pp / 2 + 1 - (s->pp == 2 ? 1 : 0));
    double fewest = (double)micro;
    for (int64_t i = 0; i < s->pp; i++) {
        pair_count c = {0.0};
        dualpipe_program(s, micro, i, count_pair, &c);
        fewest = comet_fmin(fewest, c.n);
    }
    return fewest;
}

/* The most any stage stashes, in closed form on the full program (the
 * walk's answer, which the tests check to the byte for every even p to 32
 * and m to 2p + 40). On a stage of half-rank h, phase 0 runs virtual
 * stage h and phase 1 virtual stage p-1-h; with (F0, F1, W0, W1) the
 * microbatches of each phase stashed whole and kept for their W, the
 * program holds at most, at some moment of some step:
 *   steps 1-5: step 4's forward of phase 0, (p-h, h+1, 0, 0), or, where
 *     step 3 runs (h <= p/2-2), its split B1, (p-h-1, h, 0, 1); every
 *     other moment holds no more of each;
 *   steps 6-8: from (p/2, h+1), F0 + F1 = p/2 when step 6's splits
 *     start, each of its h+1 split backwards turning a stash into a W's
 *     keep; step 7 then pops a W before each split B0 (net: a stash
 *     less), step 8 only pops. h = 0: (p/2-1, 0, 1, 0).
 * So the ends (h = 0, stages 0 and p-1: the first and the last pieces)
 * hold the most of p f0 + f2, (p-1) f0 + w2 (p >= 4), (p/2-1) f0 + w0,
 * and the middle stages (both pieces middle ones, h from 1 to p/2-1;
 * the most at h = p/2-1 in steps 6-8) of (p+1) f1, (p-1) f1 + w1 (some
 * h <= p/2-2, p >= 6), p/2 max(f1, w1). The short program: walked. */
static double dualpipe_stash_most(const comet_strategy *s, int64_t micro, const double full[3],
                                  const double wg[3])
{
    if (!full_program(s, micro))
        return -1.0;
    double p = (double)s->pp, n = p / 2.0;
    double most = comet_fmax(p * full[0] + full[2], (n - 1.0) * full[0] + wg[0]);
    if (s->pp >= 4) {
        most = comet_fmax(most, (p - 1.0) * full[0] + wg[2]);
        most = comet_fmax(most, (p + 1.0) * full[1]);
        most = comet_fmax(most, n * comet_fmax(full[1], wg[1]));
    }
    if (s->pp >= 6)
        most = comet_fmax(most, (p - 1.0) * full[1] + wg[1]);
    return most;
}

/* Each round of two microbatches is one of each direction. */
static int64_t dualpipe_round(const comet_strategy *s)
{
    (void)s;
    return 2;
}

/* Steps 1-3 run forwards of the first p-1 microbatches of direction 0
 * and p/2 of direction 1 (ids below 2p); steps 5-8 mirror them over the
 * last: within 2p. */
static int64_t dualpipe_ramp(const comet_strategy *s)
{
    return 2 * s->pp;
}

/* Stage i holds piece i for direction 0 and piece p-1-i for direction 1. */
static int64_t dualpipe_virtual_stage(const comet_strategy *s, int64_t chunk, int64_t stage)
{
    return chunk == 0 ? stage : s->pp - 1 - stage;
}

static void dualpipe_place(const comet_strategy *s, int64_t mb, int64_t vs, int64_t *stage,
                           int64_t *chunk)
{
    *chunk = mb % 2;
    *stage = *chunk == 0 ? vs : s->pp - 1 - vs;
}

static int64_t dualpipe_copies(const comet_strategy *s)
{
    (void)s;
    return 2;
}

const sched_kind sched_dualpipe = {
    .name = "dualpipe",
    .program = dualpipe_program,
    .bubble = dualpipe_bubble,
    .in_flight = dualpipe_in_flight,
    .stage_in_flight = NULL,
    .round = dualpipe_round,
    .ramp = dualpipe_ramp,
    .copies = dualpipe_copies,
    .virtual_stage = dualpipe_virtual_stage,
    .place = dualpipe_place,
    .overlapped = dualpipe_overlapped,
    .stash_most = dualpipe_stash_most,
};
