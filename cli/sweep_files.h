/* Internal to comet sweep: its output files. */
#ifndef COMET_CLI_SWEEP_FILES_H
#define COMET_CLI_SWEEP_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "comet/sweep.h"

void sweep_join(char *out, size_t cap, const char *dir, const char *name);

/* The header line results.csv starts with, for this study (malloc'd). */
char *sweep_csv_header(const comet_study *study);

/* Where to start: 0 for a fresh sweep (old results refused unless force),
 * or with resume the rows both files hold, torn last lines dropped and the
 * CSV header checked against the study. */
comet_status sweep_prepare_outputs(const char *dir, bool resume, bool force,
                                   const comet_study *study, const char *csv, const char *jsonl,
                                   uint64_t *start, comet_error *err);

comet_status sweep_append_line(FILE *f, const char *path, const char *text, size_t len,
                               comet_error *err);

/* Pareto front, summary and report from results.csv into dir (the report
 * to `report` instead when given; charts into `plots` when given); prints
 * the summary. Returns the exit code. */
int sweep_finish(const comet_study *study, const char *dir, const char *csv_path,
                 const char *report, const char *plots);

#endif
