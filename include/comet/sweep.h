/* The cluster sweep: for every design point of a study, the best strategy
 * (a one-point strategy search), plus the summaries people read after a
 * sweep: the Pareto front of step time against cost, and which resource
 * moves step time most; and the runner that sweeps a whole study into
 * results files on threads and processes. Everything here streams: memory
 * does not grow with the number of points. */
#ifndef COMET_SWEEP_H
#define COMET_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/band.h"
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
    /* the best's uncertainty band when the sweep's options give a band
     * model and the point has a best (band.low 0: none) */
    comet_band band;
} comet_sweep_row;

/* Search design point `index` of the study (single-threaded; a sweep runs
 * points side by side instead). */
comet_status comet_sweep_point(const comet_study *study, uint64_t index, comet_sweep_row *row,
                               comet_error *err);

/* ---- the runner: every design point of a study into results files ---- */

/* How the processes splitting a sweep reach each other; the library never
 * talks to other processes itself (the CLI's MPI implementation is
 * cli/cluster.c). Process `rank` runs points rank, rank + size, ...;
 * process 0 writes every file, taking each row from its owner in point
 * order, so messages from one process must arrive in the order sent. */
typedef struct comet_sweep_transport {
    void *ctx;
    int rank;                   /* this process, 0..size-1 */
    int size;                   /* processes splitting the sweep (>= 1) */
    /* process 0's value of *v on every process */
    void (*broadcast)(void *ctx, uint64_t *v);
    /* a process other than 0: one finished row (its CSV and JSON lines,
     * as the options' format writes them) to
     * process 0, in its own point order; then an end marker with its
     * status (0: every row sent). 0 on success. */
    int (*send_row)(void *ctx, uint64_t index, const char *csv, size_t csv_len,
                    const char *jsonl, size_t jsonl_len);
    int (*send_end)(void *ctx, int status);
    /* process 0: the next message from process `from`: a row (returns 1,
     * fills the index and malloc'd texts) or its end marker (returns 0,
     * fills status) */
    int (*receive)(void *ctx, int from, uint64_t *index, char **csv, char **jsonl, int *status);
} comet_sweep_transport;

/* What the caller says and hears while a sweep runs; any may be NULL. */
typedef struct comet_sweep_hooks {
    void *ctx;
    /* Polled from every thread: true stops the sweep (points under way
     * finish and are written, no new one starts). */
    bool (*stop)(void *ctx);
    /* Process 0, once the results files are ready, before any row: the
     * run writes points start..total-1 */
    void (*rows_begin)(void *ctx, uint64_t start, uint64_t total);
    /* Process 0, from the writing thread, after each row reached both
     * files: `done` rows are in them, of `total`; the run began at `start`. */
    void (*row_written)(void *ctx, uint64_t done, uint64_t total, uint64_t start);
} comet_sweep_hooks;

/* How the runner writes a row: the CSV header, one CSV line and one JSON
 * line. The runner sits below the renderers, so the caller hands them in;
 * comet_sweep_rows_format (comet/report.h) is the format comet's results
 * files use and that saved results are read back with. */
typedef struct comet_sweep_format {
    void (*csv_header)(comet_buf *b, const comet_study *study);
    void (*csv_row)(comet_buf *b, const comet_study *study, const comet_sweep_row *row);
    void (*jsonl_row)(comet_buf *b, const comet_study *study, const comet_sweep_row *row);
    /* NULL, or the headers older comets wrote for the same columns less
     * the first (the version column), which --resume continues too: the
     * file keeps its header and its rows are written without the version.
     * which = 0 is the newest of them; false past the oldest. */
    bool (*csv_header_older)(comet_buf *b, const comet_study *study, int which);
} comet_sweep_format;

typedef struct comet_sweep_options {
    const char *dir;            /* results.csv and results.jsonl go here (created if missing) */
    const comet_sweep_format *format; /* required: how rows are written */
    int threads;                /* points computed side by side in this process (>= 1) */
    bool resume;                /* continue after the rows dir's files hold */
    bool force;                 /* replace earlier results (else they are refused) */
    const comet_sweep_transport *transport; /* NULL: one process */
    comet_sweep_hooks hooks;
    /* each row's best gets its uncertainty band from this model (shared
     * read-only by the threads); NULL: rows without bands */
    const comet_band_model *bands;
} comet_sweep_options;

/* Every design point of the study, each searched (comet_sweep_point) on
 * opt->threads threads of each process, its row appended in point order
 * to DIR/results.csv and DIR/results.jsonl, one line at a time with a
 * flush: the bytes are the same at any thread or process count, and an
 * interrupted sweep leaves a valid prefix that opt->resume continues.
 * Process 0 first locks DIR (comet_dir_lock, before anything in it is
 * read) and leaves the lock's descriptor in *dir_lock (-1 when none) for
 * the caller to release once its own files are written.
 * Returns COMET_OK when every row is written; COMET_ECANCELED when
 * hooks.stop asked (the files hold the rows finished so far). On processes
 * other than 0, COMET_OK unless a row could not be sent: process 0
 * reports their failures. */
comet_status comet_sweep_run(const comet_study *study, const comet_sweep_options *opt,
                             int *dir_lock, comet_error *err);

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
/* The summary of saved results (comet/results.h), every row added in file
 * order. With the study the sweep ran, each row's model and axis values
 * come from that study by the row's index (exact, not re-read from text)
 * and the summary names the study; with NULL they are the row's own, on
 * the study shell res->study the reader built. */
struct comet_results;
void comet_summary_from_results(comet_summary *s, const struct comet_results *res,
                                const comet_study *study);
/* How much axis a moves model m's best step time: the ratio of the
 * geometric means at its slowest and fastest value (1 when fewer than two
 * values have feasible points), and which values those are (-1: none). */
double comet_summary_axis_effect(const comet_summary *s, int m, int a, int *slow, int *fast);
/* Pareto front rows as CSV; the sensitivity table as text. */
void comet_summary_pareto_csv(comet_buf *b, const comet_summary *s);
void comet_summary_text(comet_buf *b, const comet_summary *s);

#endif
