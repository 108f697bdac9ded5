/* The COMET methodology over a study, step by step:
 *   1. characterize the workload (parameters, FLOPs, state and activation
 *      memory, communication volume per parallel group as the strategy
 *      changes);
 *   2. the strategy space on the base cluster (best and worst, and why);
 *   3. the memory footprint (what fits in HBM alone, what an expansion
 *      tier makes feasible, at what exposed traffic);
 *   4. the cluster design sweep (comet_sweep_point over the study's axes;
 *      the CLI runs it and saves the rows);
 *   5. the conclusions from the sweep's rows: best and worst design, the
 *      spread between them, what memory expansion buys per design, and
 *      the design and the resource to invest in next.
 * Every figure comes from comet_estimate and comet_search; the summary and
 * the study page that print them are in comet/report.h. */
#ifndef COMET_METHODOLOGY_H
#define COMET_METHODOLOGY_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/fabric.h"
#include "comet/results.h"
#include "comet/search.h"
#include "comet/study.h"
#include "comet/sweep.h"

#define COMET_FINDINGS_MAX_TP 12

/* Steps 1 to 3 for one model on the base cluster (the study's system and
 * NPU count, before any axis is applied). */
typedef struct comet_findings {
    int model;
    int64_t npus;
    /* 1. the workload */
    double params;
    double tokens_per_step;
    double model_flops;             /* per step, no recompute */
    double state_bytes[3];          /* weights, gradients, optimizer state: the whole model */
    double activation_bytes;        /* one sample through every layer, nothing recomputed */
    int n_by_tp;
    comet_ranked by_tp[COMET_FINDINGS_MAX_TP]; /* the best strategy at each TP degree */
    /* 2. the strategy space as the base cluster is */
    comet_search_stats space;
    bool has_best;
    comet_ranked best;              /* space.worst is the worst feasible */
    /* 3. memory: HBM alone, then with an expansion tier */
    comet_search_stats hbm_only;
    bool has_best_hbm_only;
    comet_ranked best_hbm_only;
    bool expansion_tried;
    double expansion_capacity;      /* the tier tried: per NPU, per node or pooled (see the system) */
    double expansion_bandwidth;
    comet_search_stats with_expansion;
    bool has_best_with_expansion;
    comet_ranked best_with_expansion;
} comet_findings;

/* Steps 1-3 for study model `model`, searching on `threads` threads. */
comet_status comet_study_findings(const comet_study *study, int model, int threads,
                                  comet_findings *out, comet_error *err);

/* How far an axis can be cheapened before the best step time grows: on
 * an oversubscription axis, the largest ratio at which every design is
 * within `tolerance` (0.05: 5 %) of the same design at the axis's lowest
 * ratio (1:1 when the axis starts there), every ratio below it as well.
 * A design that no longer fits is past any tolerance. */
#define COMET_HEADROOM_TOLERANCE 0.05

typedef struct comet_headroom {
    int axis;                             /* -1: no such axis in the study */
    double tolerance;
    int base_slot;                        /* the axis's lowest value */
    int slot;                             /* the answer; base_slot when even the next is past,
                                             -1 when no design fits at the lowest value */
    double slowdown;                      /* the worst step-time ratio at slot (>= 0.0) */
    const comet_results_row *base, *at;   /* a pair with that ratio: lowest value, slot */
    int past_slot;                        /* the next value, the first past (-1: none, the
                                             answer is the largest value swept) */
    double past_slowdown;                 /* its worst ratio (INFINITY: a design stops fitting) */
} comet_headroom;

/* The headroom of model `model` on axis `axis` of the results. */
void comet_results_headroom(const comet_results *r, int model, int axis, double tolerance,
                            comet_headroom *out);

/* Step 5 from the sweep's rows (comet_results of the study's results). */
/* One system of a study's system axis, for one model: its fastest design,
 * and what the links carried in a flow simulation of that design's best
 * strategy's step on the system's fabric (every NPU, every transfer). */
#define COMET_PICK_LINK_NAME_LEN 96

typedef struct comet_system_pick {
    int system;                   /* index into the study's systems */
    const comet_results_row *row; /* the fastest design on this system; NULL: none fits */
    double speedup;               /* the first system's fastest step / this one's (0: either
                                   * has none) */
    bool traced;                  /* the step ran as flows: the fields below are set */
    double busiest_bytes;         /* bytes the most utilized link carried over the step */
    double busiest_bandwidth;     /* its bandwidth, bytes/s */
    char busiest_name[COMET_PICK_LINK_NAME_LEN]; /* "wafer: npu 3 -> L1 0" */
    double total_bytes;           /* every link's bytes summed (a byte crossing h links counts h
                                   * times) */
    double simulated;             /* the step's time as flows, seconds */
    double simulated_speedup;     /* the first system's simulated step / this one's (0: either
                                   * not traced) */
    double compute_wait;          /* of the step as flows, the time the busiest stage's compute
                                   * did not run: the pipeline bubble plus exposed
                                   * communication (what a scheme changes is the latter) */
    comet_cc_stats cc;            /* the system's congestion control over the step (cc.fluid
                                   * false: none ran) */
    char why[160];                /* not traced: why (the fabric's limit, a placement) */
} comet_system_pick;

typedef struct comet_conclusions {
    int model;
    size_t designs, feasible;
    const comet_results_row *fastest;        /* best step time */
    const comet_results_row *slowest;        /* worst step time among designs that fit */
    const comet_results_row *best_value;     /* most tokens/s per dollar (NULL without costs) */
    double spread;                           /* slowest / fastest step time */
    /* memory expansion: designs with an expansion tier against the same
     * design without one */
    size_t expansion_pairs;
    size_t expansion_enables;                /* fits only with the tier */
    double expansion_best_speedup;           /* max over pairs where both fit (1 = none) */
    const comet_results_row *expansion_best; /* the design with the tier, at that speedup */
    /* what to buy next, from the best-value design (or the fastest): the
     * axis whose next value raises tokens/s most per extra dollar */
    int invest_axis;                         /* -1: none helps */
    double invest_speedup;                   /* step time now / after */
    double invest_extra_cost;
    double invest_value_after;               /* that axis's next value */
    /* how far the first oversubscription axis can go within 5 % of its
     * lowest ratio (headroom.axis -1: the study has none) */
    comet_headroom headroom;
    /* the fastest design's strategy search done again, with every knob
     * and its placement: made once by the first step after the sweep that
     * needs it and reused by the others (fastest_searched false: not yet;
     * comet_study_conclude clears it) */
    bool fastest_searched;
    comet_sweep_row fastest_search;
    /* the performance pick, simulated as a task graph (comet_study_check_pick) */
    bool checked;
    double pick_estimate, pick_simulated;
    /* how the network bandwidth of the pick (best_value, else fastest)
     * would best be split over its dimensions, its strategy kept
     * (comet_study_allocate, docs/allocate.md) */
    bool allocated;
    const comet_results_row *split_of;
    int split_dims;
    double split_bw[COMET_MAX_DIMS];          /* bytes/s per NPU at the optimum */
    char split_names[COMET_MAX_DIMS][32];
    double split_budget;                      /* its bandwidth per NPU as built (the sum) */
    double split_speedup;                     /* step as built / step at the optimum */
    double split_equal_slowdown;              /* step at the equal split / at the optimum */
    /* the study's system axis, if it has one (comet_study_compare_systems):
     * each system's fastest design against the axis's first system's */
    int n_systems;                            /* 0: no system axis */
    comet_system_pick systems[COMET_STUDY_MAX_SYSTEMS];
} comet_conclusions;

/* Position of v among the axis's values, or -1. */
int comet_axis_slot(const comet_axis *ax, double v);
/* The same design as `row` (same model) with axis a at its value `to`,
 * found by index among rows in point order; NULL when not there. */
const comet_results_row *comet_results_moved(const comet_results *r, const comet_results_row *row,
                                             int a, int to);

/* A row that has a best strategy (its design fits). */
bool comet_results_row_fits(const comet_results_row *row);

/* Visit every design of `model` that has an expansion tier together with
 * the same design without one (the expansion_capacity axis must hold
 * none), in row order. */
void comet_results_expansion_pairs(const comet_results *r, int model,
                                   void (*visit)(const comet_results_row *with,
                                                 const comet_results_row *without, void *ctx),
                                   void *ctx);

void comet_study_conclude(const comet_results *r, int model, comet_conclusions *out);

/* Cross-check the performance pick with the event-driven simulator: the
 * design's best strategy is found again (with its placement) and its step
 * simulated; fills c->checked, pick_estimate and pick_simulated. */
comet_status comet_study_check_pick(const comet_study *study, comet_conclusions *c,
                                    comet_error *err);

/* Step 5's network split: the bandwidth per NPU of the pick (best_value,
 * else fastest) as built, split over its dimensions by comet_allocate for
 * the pick's step time with its strategy kept; fills c->allocated and the
 * split_* fields (nothing when there is no pick). */
comet_status comet_study_allocate(const comet_study *study, comet_conclusions *c,
                                  comet_error *err);

/* Step 4 along a system axis: for each of the study's systems, its
 * fastest design (c->fastest's other axes free), its speedup over the
 * first system, and its best strategy's step simulated as flows on the
 * system's fabric (at most COMET_SIM_AUTO_MAX_FLOWS flows), for the
 * traffic on the busiest link and on all links. A step the fabric cannot
 * take leaves that pick untraced with the reason; only running out of
 * memory fails. Fills c->n_systems (0 without a system axis). */
comet_status comet_study_compare_systems(const comet_study *study, const comet_results *r,
                                         comet_conclusions *c, comet_error *err);

/* The model's assumptions, one line each, for summaries and reports. */
int comet_study_assumptions(const char *const **lines);

#endif
