/* Saved sweep results read back (results.csv or results.jsonl as `comet
 * sweep` writes them) so a report can be built later (the sweep page and
 * a design's label are in comet/report.h). A file that cannot be reported
 * (empty, written by an older comet, no rows) is not an error: `problem`
 * says what is missing and the page shows it in place of the charts. */
#ifndef COMET_RESULTS_H
#define COMET_RESULTS_H

#include <stddef.h>
#include "comet/error.h"
#include "comet/study.h"
#include "comet/sweep.h"

#define COMET_RESULTS_MAX_ROWS 1000000

typedef struct comet_results_row {
    uint64_t index;
    int model;                    /* into study.models */
    comet_point_status status;
    double cost;                  /* of the design */
    int64_t npus;
    double values[COMET_STUDY_MAX_AXES];
    comet_strategy strategy;      /* the best strategy's knobs (placement not kept) */
    comet_result result;          /* its estimate */
    double band_low, band_high;   /* its step time's uncertainty band (0: none saved) */
} comet_results_row;

typedef struct comet_results {
    char path[256];
    /* A study shell: the models' names and the axes with their values in
     * the order they first appear, enough for comet_summary. */
    comet_study study;
    size_t n_rows;
    comet_results_row *rows;
    size_t skipped;               /* lines that could not be read */
    char first_skipped[400];      /* where and why, for the first of them */
    char problem[1024];            /* non-empty: why no report can be drawn */
} comet_results;

/* Read a results file; by extension (.jsonl) or first byte ('{') it is
 * JSON lines, otherwise CSV. Errors only when the file cannot be read.
 * Free with comet_results_free. */
comet_status comet_results_read(const char *path, comet_results *out, comet_error *err);
/* The same from text in memory (tests, fuzzing); name is used in messages. */
comet_status comet_results_parse(const char *text, size_t len, const char *name,
                                 comet_results *out, comet_error *err);
void comet_results_free(comet_results *r);

#endif
