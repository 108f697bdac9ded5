/* Internal to the sweep runner: the two results files of a sweep
 * (results.csv and results.jsonl), made ready to append to, fresh or
 * resumed, and appended one line at a time. */
#ifndef COMET_EXPLORE_SWEEP_ROWS_H
#define COMET_EXPLORE_SWEEP_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "comet/study.h"
#include "comet/sweep.h"

typedef struct sweep_rows {
    FILE *csv, *jsonl;
    char csv_path[4096], jsonl_path[4096];
    bool unversioned;  /* a resumed results.csv of an older comet: rows go without the version */
} sweep_rows;

/* Open dir's results files for appending, from point *start: 0 for a
 * fresh sweep (earlier results refused unless force, the CSV header
 * written), or with resume the rows both files hold, torn last lines
 * dropped and the CSV header checked against the study. A symbolic link at
 * either name is refused, not written through. On failure the files that
 * were opened stay in rows for sweep_rows_close. */
comet_status sweep_rows_open(sweep_rows *rows, const char *dir, bool resume, bool force,
                             const comet_sweep_format *format, const comet_study *study,
                             uint64_t *start, comet_error *err);

/* One line into a results file, flushed. */
comet_status sweep_rows_append(FILE *f, const char *path, const char *text, size_t len,
                               comet_error *err);
/* One row into results.csv: its first field (the version) left out when
 * the file is an older comet's, whose header has no such column. */
comet_status sweep_rows_append_csv(sweep_rows *rows, const char *line, comet_error *err);

void sweep_rows_close(sweep_rows *rows);

#endif
