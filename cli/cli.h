/* Shared helpers of the comet command-line front end. */
#ifndef COMET_CLI_H
#define COMET_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/band.h"
#include "comet/comet.h"
#include "comet/page.h"

/* Exit codes, one rule for every command (README, "Exit status"):
 * 0 success; 2 bad input or an unusable path (unknown flags, bad values,
 * unreadable or garbage input files, output paths that cannot be created
 * or written at the start); 1 a failure mid-way (disk full, a write error
 * after opening) or an internal one. An interrupted sweep exits 130. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Whether a command-line argument names a file rather than a preset: it
 * has a slash or a .yaml, .yml or .json in it, or a file of that name exists. */
bool cli_is_file_arg(const char *arg);

/* Print "comet: <error line>" to stderr and return the exit code for it. */
int cli_report_error(const char *command, const comet_error *err);

/* Write text to path atomically (temporary file + rename), or to stdout
 * when path is NULL or "-". Returns 0 or fills err. */
comet_status cli_write_output(const char *path, const char *text, size_t len, comet_error *err);

/* Write a report page and free it: as HTML to report_path, and each
 * chart as ID.svg + ID.csv (each table as ID.csv) into plots_dir, which is
 * created when missing; either may be NULL. Every file is written
 * atomically. A NULL page (comet_page_new ran out of memory) is an error. */
comet_status cli_write_report(comet_page *page, const char *report_path, const char *plots_dir,
                              comet_error *err);

/* --heatmap X,Y: the two axes of a study (or of saved results' study
 * shell) to draw, X across and Y down, into out; spec NULL leaves out at
 * -1 (automatic). An unknown name is an error naming the flag and the
 * axes there are. */
struct comet_study;
comet_status cli_heatmap_axes(const char *spec, const struct comet_study *st, int out[2],
                              comet_error *err);

/* Whether an output path can be written, checked before any work so a
 * long run does not fail at its end: a file (or "-", stdout) whose
 * directory exists and is writable and which is not a directory; a
 * directory that exists or can be created; a prefix (PREFIX.*) whose
 * directory exists and is writable. NULL is fine. An error names the path
 * (and `flag` when given) and is bad input. */
typedef enum { CLI_OUT_FILE, CLI_OUT_DIR, CLI_OUT_PREFIX } cli_output_kind;
comet_status cli_check_output(const char *path, cli_output_kind kind, const char *flag,
                              comet_error *err);

/* The flags of a command over one input file (comet allocate, deeppool,
 * partition): the file, -o FILE (stdout without), --report FILE, --plots
 * DIR and --json. Each such command's flag struct opens with it, so the
 * shared table entries (CLI_FILE_FLAGS, args.h's cli_arg) point into it. */
typedef struct cli_file_args {
    const char *file;
    const char *output, *report, *plots;
    bool json;
} cli_file_args;

#define CLI_FILE_FLAGS                                                                     \
    {.name = "--json", .kind = CLI_ARG_SWITCH, .offset = offsetof(cli_file_args, json)},   \
    {.name = "-o", .alias = "--output", .kind = CLI_ARG_TEXT,                              \
     .offset = offsetof(cli_file_args, output)},                                           \
    {.name = "--report", .kind = CLI_ARG_TEXT, .offset = offsetof(cli_file_args, report)}, \
    {.name = "--plots", .kind = CLI_ARG_TEXT, .offset = offsetof(cli_file_args, plots)}

/* -o, --report and --plots checked up front (cli_check_output). */
comet_status cli_check_file_outputs(const cli_file_args *a, comet_error *err);

/* What such a command found: the rendered text written to -o (stdout
 * without), then, when --report or --plots asks, a page titled `title`
 * drawn by draw(page, ctx) and written (cli_write_report). */
comet_status cli_write_file_outputs(const cli_file_args *a, const comet_buf *out,
                                    const char *title,
                                    void (*draw)(comet_page *page, const void *ctx),
                                    const void *ctx, comet_error *err);

/* A command that reads its file into a problem, solves it into a result
 * and renders that (comet allocate, comet deeppool): what is its own.
 * cli_run_file_command does the rest: flags parsed into args (a struct
 * that opens with cli_file_args; --help answered under CLI_HELP_OPTION),
 * the file required, the outputs checked, problem and result allocated,
 * a solver's error placed at its key in the file, the outputs written
 * (the page titled "comet NAME"), the exit status. */
struct cli_arg;
typedef struct cli_file_command {
    const char *name;               /* "deeppool" */
    const char *file_kind;          /* "deeppool file" */
    const char *article;            /* "a": "needs a deeppool file" */
    const struct cli_arg *flags;    /* into args */
    int n_flags;
    void (*help)(void);
    /* the command's own checks of its flags after parsing (NULL: none) */
    comet_status (*check)(const void *args, comet_error *err);
    size_t problem_size, result_size;
    size_t srcmap_offset;           /* the problem's comet_srcmap, by offsetof */
    comet_status (*read)(const char *path, void *problem, comet_error *err);
    comet_status (*solve)(const void *args, void *problem, void *result, comet_error *err);
    void (*render)(comet_buf *out, const void *args, const void *problem, const void *result);
    void (*page)(comet_page *page, const void *problem, const void *result);
} cli_file_command;

int cli_run_file_command(const cli_file_command *cmd, int argc, char **argv, void *args);

/* A system preset by name, else a file with a system: section (read as
 * comet estimate reads it: errors name file, line, column and key). */
comet_status cli_load_system(const char *arg, comet_system *sys, comet_error *err);

/* A collective named on the command line: all-reduce or all_reduce,
 * reduce-scatter, all-gather, all-to-all; errors name `flag`. */
comet_status cli_parse_collective(const char *flag, const char *value, comet_collective *out,
                                  comet_error *err);

/* Threads to run on: `requested` when given (> 0), else every online core. */
int cli_threads(int64_t requested);
/* The uncertainty-band model of every built-in validation table. */
comet_status cli_band_model(comet_band_model **out, comet_error *err);

/* Seconds on a monotonic clock. */
double cli_now(void);

int cli_estimate(int argc, char **argv);
int cli_search(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_simulate(int argc, char **argv);
int cli_simulate_chakra(int argc, char **argv);

/* comet simulate --collective ... --flows (cli/simulate_flows.c). */
typedef struct cli_flow_args {
    bool on, one_group, json;
    bool themis;               /* chunks ordered across dimensions by Themis */
    int64_t concurrent, max_flows, splits;
    const char *span;          /* "A,B,..." NPUs per group per dimension; NULL: all */
    const char *trace;         /* a Chrome trace with the hot links' utilization; NULL: none */
    const char *report, *plots;
    comet_collective collective;
    double size;
} cli_flow_args;

int cli_simulate_flows(const cli_flow_args *a, const comet_system *sys, int64_t npus);
int cli_presets(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_study(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_allocate(int argc, char **argv);
int cli_deeppool(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_partition(int argc, char **argv);

#endif
