/* Internal to comet sweep and comet study: their options, the run over
 * every design point, and the output files. */
#ifndef COMET_CLI_SWEEP_FILES_H
#define COMET_CLI_SWEEP_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "cluster.h"
#include "comet/sweep.h"

/* Designs a sweep runs without --max-designs: about an hour at the rate
 * measured in docs/sweep.md (30 designs/s on two cores). */
#define SWEEP_DEFAULT_MAX_DESIGNS 100000

typedef struct sweep_args {
    const char *command;        /* "sweep" or "study", for messages */
    const char *study;
    const char *dir;
    const char *report, *plots;
    const char *heatmap;        /* --heatmap X,Y */
    int64_t threads;            /* -j (0: every core) */
    int64_t max_designs;        /* --max-designs: refuse larger studies (0: no limit) */
    bool resume, force, quiet;
    bool rows_only;             /* stop after results.csv/.jsonl (comet study writes the rest) */
} sweep_args;

/* Options shared by both commands; the study file may be left out (comet
 * study then runs its default). --help or -h anywhere sets *help and
 * reads nothing. */
comet_status sweep_parse_args(int argc, char **argv, const char *command, sweep_args *a,
                              bool *help, comet_error *err);

/* A command that sweeps a study: comet sweep, and comet study (which reads
 * built-in studies by name too and, after the rows, runs `finish` on rank
 * 0 instead of the sweep's own summaries). */
/* A study file when one exists at that path (or the name looks like a
 * path), else a built-in study by name (comet sweep and comet study alike). */
comet_status sweep_read_study(const char *name, comet_study *study, comet_error *err);

typedef struct sweep_command {
    const char *name;                                            /* for messages and DIR */
    void (*usage)(FILE *out);
    comet_status (*read)(const char *study, comet_study *out, comet_error *err);
    int (*finish)(const sweep_args *a, const comet_study *study); /* NULL: comet sweep's */
} sweep_command;

/* The whole command: --help, parsing, reading the study, the run over the
 * cluster, then finish. Returns the exit code. */
int sweep_main(int argc, char **argv, const sweep_command *cmd);

/* Every design point of the study, on threads and MPI ranks
 * (comet_sweep_run), into a->dir/results.csv and results.jsonl; then
 * (unless rows_only) the summaries and report. Rank 0 locks a->dir first
 * (comet_dir_lock) and leaves the lock in *dir_lock (-1 when none) for
 * the caller to hold until its own files are written too. Returns the exit
 * code (130 when interrupted). */
int sweep_run(const sweep_args *a, const comet_study *study, cli_cluster *cl, int *dir_lock);

void sweep_join(char *out, size_t cap, const char *dir, const char *name);

/* Pareto front, summary and report from results.csv into dir (the report
 * to `report` instead when given; charts into `plots` when given); prints
 * the summary. Returns the exit code. */
int sweep_finish(const comet_study *study, const sweep_args *a, const char *csv_path);

#endif
