/* The cluster sweep: for every design point of a study, the best strategy
 * (a one-point strategy search), plus the summaries people read after a
 * sweep: the Pareto front of step time against cost, and which resource
 * moves step time most. Everything here streams: memory does not grow with
 * the number of points. */
#ifndef COMET_SWEEP_H
#define COMET_SWEEP_H

#include <stdint.h>
#include "comet/buf.h"
#include "comet/search.h"
#include "comet/study.h"

typedef enum comet_point_status {
    COMET_POINT_OK = 0,          /* a strategy fits: best holds it */
    COMET_POINT_NO_FIT,          /* no strategy fits in memory */
    COMET_POINT_OVER_BUDGET,     /* the design costs more than the budget */
    COMET_POINT_NO_LAYOUT        /* the NPUs cannot be laid out on this network */
} comet_point_status;

const char *comet_point_status_name(comet_point_status s);

typedef struct comet_sweep_row {
    uint64_t index;
    int model;
    int64_t npus;
    double values[COMET_STUDY_MAX_AXES];
    comet_point_status status;
    double cost;                 /* of the design */
    comet_ranked best;
    comet_search_stats stats;
} comet_sweep_row;

/* Search design point `index` of the study (single-threaded; a sweep runs
 * points side by side instead). */
comet_status comet_sweep_point(const comet_study *study, uint64_t index, comet_sweep_row *row,
                               comet_error *err);

/* One row as CSV (header first) and as one JSON line. */
void comet_sweep_csv_header(comet_buf *b, const comet_study *study);
void comet_sweep_csv_row(comet_buf *b, const comet_study *study, const comet_sweep_row *row);
void comet_sweep_jsonl_row(comet_buf *b, const comet_study *study, const comet_sweep_row *row);

/* Summaries, fed one finished point at a time (in any order). */
#define COMET_PARETO_MAX 4096

typedef struct comet_pareto_point {
    uint64_t index;
    double step_time;
    double cost;
} comet_pareto_point;

typedef struct comet_summary {
    const comet_study *study;
    int n_front[COMET_STUDY_MAX_MODELS];
    comet_pareto_point front[COMET_STUDY_MAX_MODELS][COMET_PARETO_MAX];
    /* sum of log(step time) and count per model, axis and value */
    double log_sum[COMET_STUDY_MAX_MODELS][COMET_STUDY_MAX_AXES][COMET_STUDY_MAX_VALUES];
    uint64_t count[COMET_STUDY_MAX_MODELS][COMET_STUDY_MAX_AXES][COMET_STUDY_MAX_VALUES];
    uint64_t points[COMET_STUDY_MAX_MODELS];
    uint64_t feasible[COMET_STUDY_MAX_MODELS];
} comet_summary;

void comet_summary_init(comet_summary *s, const comet_study *study);
void comet_summary_add(comet_summary *s, int model, uint64_t index, const double *values,
                       comet_point_status status, double step_time, double cost);
/* How much axis a moves model m's best step time: the ratio of the
 * geometric means at its slowest and fastest value (1 when fewer than two
 * values have feasible points), and which values those are (-1: none). */
double comet_summary_axis_effect(const comet_summary *s, int m, int a, int *slow, int *fast);
/* Pareto front rows as CSV; the sensitivity table as text. */
void comet_summary_pareto_csv(comet_buf *b, const comet_summary *s);
void comet_summary_text(comet_buf *b, const comet_summary *s);

#endif
