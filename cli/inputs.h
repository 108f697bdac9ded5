/* The command line shared by the subcommands that read a job: input files,
 * presets, strategy knobs, output options, and each command's own flags,
 * all in one table. */
#ifndef COMET_CLI_INPUTS_H
#define COMET_CLI_INPUTS_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/comet.h"
#include "comet/knobs.h"
#include "comet/search.h"

typedef enum cli_command {
    CMD_ESTIMATE = 1,
    CMD_SEARCH = 2,
    CMD_SIMULATE = 4,
    CMD_EXPORT = 8
} cli_command;

typedef enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV } out_format;

#define CLI_MAX_FLAG_KEYS 32

typedef struct cli_inputs {
    cli_command command;        /* the command parsing them */
    comet_job job;
    out_format format;
    const char *output;
    const char *trace;          /* simulate: Chrome trace file */
    const char *report;         /* HTML report file */
    const char *plots;          /* directory for each chart as SVG + CSV */
    const char *chakra;         /* export: trace prefix */
    /* search */
    int64_t npus;
    int64_t max_global_batch;
    int64_t max_microbatch;
    int64_t max_cp;
    int64_t top;
    int64_t threads;            /* 0 = all cores */
    comet_objective objective;
    bool keep_dominated;
    bool no_flash;
    bool no_offload;
    bool quiet;
    bool congestion;            /* simulate: links shared under congestion */
    bool flows;                 /* simulate: collectives priced as flows on the fabric */
    bool no_flows;              /* simulate: one NPU per stage even on an uneven fabric */
    const char *scheduler;      /* simulate: baseline | themis (under congestion) */
    int64_t max_tasks;          /* simulate: tasks a simulated graph may hold (0 = default) */
    /* strategy keys set by flags (one slot per key): errors name the flag */
    int n_flag_keys;
    char flag_key[CLI_MAX_FLAG_KEYS][64];
    const char *flag_name[CLI_MAX_FLAG_KEYS];
} cli_inputs;

/* Parse argv (argv[0] is the command name) into in, which must be zeroed.
 * Inputs are read in order; strategy knobs then override them. With no
 * input and no knob, estimate runs the default job. --help or -h standing
 * as an option (not as a flag's value) sets *help and reads nothing. */
comet_status cli_inputs_parse(int argc, char **argv, cli_command cmd, cli_inputs *in,
                              bool *help, comet_error *err);

/* The opening the job commands share: --help prints `help` (when given)
 * and returns NULL with *code = CLI_OK; a bad command line is reported on
 * stderr and returns NULL with its exit code; otherwise the parsed inputs
 * (one set per process: they hold a large source map). */
cli_inputs *cli_inputs_start(int argc, char **argv, cli_command cmd, void (*help)(void),
                             int *code);

/* The strategy knobs' lines of a command's --help (from comet/knobs.h). */
void cli_print_knob_help(void);

/* Point an error about a strategy key at the flag or the file that set it. */
void cli_inputs_locate(const cli_inputs *in, comet_error *err);

#endif
