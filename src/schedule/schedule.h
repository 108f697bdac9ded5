/* Pipeline schedules, the interface of src/schedule to the rest of the
 * library: a schedule is a struct of function pointers, one file per member
 * (schedule_1f1b.c, schedule_interleaved.c, schedule_zbh1.c, schedule_dualpipe.c), and says
 * three things about a
 * pipeline of p stages running m microbatches through v model chunks per
 * stage: the order in which one stage runs its passes (the simulator's
 * program), the bubble the closed-form estimate charges, and how many
 * microbatches' activations the busiest stage holds at once (the memory
 * footprint); for the simulator's extrapolation of a long step, also the
 * round its steady state repeats in and how far its warm-up and cool-down
 * reach. Where a schedule's microbatches take more than one path through
 * the stages (DualPipe's two directions), it also says where each meets
 * each of a stage's chunks. A new schedule is one new file and its line in
 * sched_of. */
#ifndef COMET_SCHEDULE_H
#define COMET_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "comet/strategy.h"
#include "../core/core.h"

/* What a pass runs: the forward, the whole backward, or (zero-bubble
 * schedules) the backward split in two, the input gradient (B: what the
 * previous stage waits for) and the weight gradient (W: free to run
 * later, Qi et al., ICLR 2024). */
typedef enum sched_pass_kind {
    SCHED_FORWARD = 0,
    SCHED_BACKWARD,          /* B and W together (1F1B, interleaved 1F1B) */
    SCHED_BACKWARD_INPUT,    /* B */
    SCHED_BACKWARD_WEIGHT    /* W */
} sched_pass_kind;

/* One pass of one microbatch through one model chunk of a stage: chunk c of
 * stage i is virtual stage c*p + i (Megatron's numbering) unless the
 * schedule says otherwise (virtual_stage, place). `overlapped`: the pass
 * runs overlapped with the next one the stage emits (DualPipe's F&B, a
 * forward and a backward whose communication hides behind each other's
 * compute). */
typedef struct sched_pass {
    int64_t microbatch;
    int64_t chunk;
    sched_pass_kind kind;
    bool overlapped;
} sched_pass;

/* Receives the passes of a stage's program, in the order they run. */
typedef void (*sched_emit_fn)(void *ctx, sched_pass pass);

/* One microbatch through one stage, in seconds: its forward, its whole
 * backward (input and weight gradients, recompute, with the
 * communication they leave exposed), and the weight-gradient part of
 * that backward. */
typedef struct sched_stage_time {
    double fwd, bwd, weight;
} sched_stage_time;

/* Stage `stage`'s times, for pipelines whose stages differ. */
typedef void (*sched_stage_fn)(const void *ctx, int64_t stage, sched_stage_time *out);

/* One microbatch through the whole busiest stage, in seconds: `total`
 * its forward and whole backward (with what they leave exposed), `weight`
 * the weight-gradient part of that backward; and how many microbatches
 * the step has (`count`; 0 counts as at least p). When the stages differ
 * (uneven splits, the embedding's and the LM head's stages, an MoE
 * model's dense first stage), `stage` gives each one's own times
 * (NULL: every stage takes the busiest one's). `fwd` is the forward's
 * part of total (0: unknown, a third), `paired` one forward and one
 * backward run overlapped (DualPipe's F&B; 0: total, nothing hides). */
typedef struct sched_micro {
    double total, weight;
    double fwd, paired;
    double count;
    sched_stage_fn stage;
    const void *stage_ctx;
} sched_micro;

typedef struct sched_kind {
    const char *name;
    /* Every pass of `micro` microbatches on `stage` (0 = first), each
     * exactly once, in the order the stage runs them (interleaved: micro a
     * multiple of p, as the strategy checks demand; DualPipe: each
     * microbatch on the chunk of its direction only); a split backward's W
     * after its B. */
    void (*program)(const comet_strategy *s, int64_t micro, int64_t stage, sched_emit_fn emit,
                    void *ctx);
    /* Idle time of the busiest stage in one step, in seconds, for
     * microbatches that take `t` each through it: the step's pipeline
     * part is t->count * t->total + bubble. With per-stage times the
     * bubble is the longest path through the step's passes less the
     * busiest stage's own work (docs/model.md, uneven stages). */
    double (*bubble)(const comet_strategy *s, const sched_micro *t);
    /* Microbatches' worth of the stage's activations the busiest stage
     * keeps at once, with `micro` microbatches in the step. */
    double (*in_flight)(const comet_strategy *s, double micro);
    /* The same for stage `stage` of a pipeline of one chunk per stage:
     * *full microbatches whose backward has not run, *weight_only whose
     * input gradient has run and weight gradient not (they keep only the
     * weight gradient's inputs). NULL: only in_flight is known
     * (interleaved: the first stage holds the most). */
    void (*stage_in_flight)(const comet_strategy *s, double micro, int64_t stage, double *full,
                            double *weight_only);
    /* Microbatches the program repeats in: in steady state each further
     * round of this many microbatches runs the same passes, one round
     * later (the simulator extrapolates a long step by rounds). */
    int64_t (*round)(const comet_strategy *s);
    /* Microbatches a stage's warm-up may span, and likewise its cool-down,
     * on any stage and for any microbatch count: the warm-up's passes are
     * of microbatches below it, the cool-down's of the last this many (the
     * simulator keeps its extrapolation's runs and cut clear of both). */
    int64_t (*ramp)(const comet_strategy *s);
    /* Copies of its share of the parameters a stage holds (DualPipe 2:
     * the pieces of both directions). NULL: 1. */
    int64_t (*copies)(const comet_strategy *s);
    /* Where chunk `chunk` of stage `stage` sits along the path of the
     * microbatches that run it (0: the embedding's end). NULL: chunk*p +
     * stage. */
    int64_t (*virtual_stage)(const comet_strategy *s, int64_t chunk, int64_t stage);
    /* The stage and chunk that run microbatch mb's virtual stage vs.
     * NULL: vs % p and vs / p (every microbatch takes the same path). */
    void (*place)(const comet_strategy *s, int64_t mb, int64_t vs, int64_t *stage,
                  int64_t *chunk);
    /* Forward-backward pairs run overlapped (sched_pass.overlapped) on
     * the stage that runs the fewest, with `micro` microbatches. NULL:
     * none. */
    double (*overlapped)(const comet_strategy *s, int64_t micro);
    /* The most activation memory any stage holds at once, with `micro`
     * microbatches, where a pass of a microbatch through virtual stage vs
     * stashes full[k] until its backward, or, split, keeps wg[k] from its
     * input gradient to its weight gradient (k 0 for vs 0, 2 for the last
     * virtual stage, 1 any other): what walking every stage's program
     * gives, in closed form. NULL, or a negative answer: walk the
     * programs (footprint.c). */
    double (*stash_most)(const comet_strategy *s, int64_t micro, const double full[3],
                         const double wg[3]);
} sched_kind;

extern const sched_kind sched_1f1b;        /* schedule_1f1b.c */
extern const sched_kind sched_interleaved; /* schedule_interleaved.c */
extern const sched_kind sched_zbh1;        /* schedule_zbh1.c */
extern const sched_kind sched_dualpipe;    /* schedule_dualpipe.c */

/* The schedule a strategy runs: interleaved 1F1B when it has more than one
 * model chunk per stage, else its schedule knob's (1F1B, ZB-H1 or
 * DualPipe). */
const sched_kind *sched_of(const comet_strategy *s);

/* The members with defaults, for any schedule: its copies of the
 * parameters, a chunk's virtual stage, where a microbatch's virtual stage
 * runs, whether no later microbatch of `micro` runs virtual stage vs on
 * the same stage (the last to bring that chunk's gradients), and the
 * forward-backward pairs run overlapped on the stage that runs the
 * fewest (0 for schedules that overlap none). */
int64_t sched_copies(const comet_strategy *s);
int64_t sched_virtual_stage(const comet_strategy *s, int64_t chunk, int64_t stage);
void sched_place(const comet_strategy *s, int64_t mb, int64_t vs, int64_t *stage, int64_t *chunk);
bool sched_last_through(const comet_strategy *s, int64_t micro, int64_t mb, int64_t vs);
double sched_overlapped_pairs(const comet_strategy *s, int64_t micro);

/* Maps step k of one direction of a stage's program to its pass. */
typedef sched_pass (*sched_step_fn)(const comet_strategy *s, int64_t k, bool forward);

/* The shape of the 1F1B family (Narayanan et al. 2021, Megatron-LM): `warmup`
 * forward steps, then one forward and one backward step in turn until all
 * `steps` forwards are done, then the remaining backward steps; step k of
 * each direction is the pass at(s, k, forward), a whole backward. */
/* The waits of stage b of the 1F1B family when the stages after it take
 * `later` seconds (forward and backward chain) to bring a microbatch's
 * backward back: its first backward waits for them behind its w warm-up
 * forwards (w = p-b-1, fewer with fewer microbatches), its last behind
 * w cool-down backwards of `cooldown` seconds each; both waits happen when
 * the step has m >= p-b+1 microbatches, else only the longer one. */
double sched_ramp_waits(const comet_strategy *s, int64_t b, double m, double later, double fwd,
                        double cooldown);

void sched_warmup_steady_cooldown(const comet_strategy *s, int64_t steps, int64_t warmup,
                                  sched_step_fn at, sched_emit_fn emit, void *ctx);

#endif
