/* comet: the command-line front end. A thin dispatcher over libcomet
 * through one table of commands; each subcommand lives in its own file. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "cluster.h"

/* One command: its name, the function that runs it (given the command's
 * own argv: argv[0] is its name) and its line in `comet --help`; a NULL
 * summary is another spelling, not listed. The table is both the
 * dispatcher and the usage's command list (git's model). */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

static int run_help(int argc, char **argv);
static int run_version(int argc, char **argv);

static const cli_command commands[] = {
    {"study", cli_study, "the COMET methodology end to end (default: the transformer-1t study)"},
    {"estimate", cli_estimate, "predict one training step: time, breakdown, memory, MFU, cost"},
    {"search", cli_search, "rank every parallelization strategy for one model on one cluster"},
    {"sweep", cli_sweep, "the best strategy for every cluster design of a study file"},
    {"simulate", cli_simulate,
     "event-driven simulation: a training step, a collective, or a Chakra trace"},
    {"allocate", cli_allocate,
     "split a bandwidth budget over the network's dimensions for given workloads"},
    {"report", cli_report, "an HTML report with charts from saved sweep results"},
    {"calibrate", cli_calibrate,
     "fit a system's efficiencies to kernel timings and nccl-tests output"},
    {"export", cli_export, "write a training step as Chakra traces plus ASTRA-sim input files"},
    {"validate", cli_validate,
     "predicted against published step times: per row error, mean, median, worst"},
    {"deeppool", cli_deeppool,
     "burst parallelism and GPU multiplexing at a fixed global batch (DeepPool)"},
    {"partition", cli_partition,
     "split a trained network across workers for inference (RePurpose)"},
    {"presets", cli_presets, "list the embedded presets, or print one: comet presets show NAME"},
    {"version", run_version, "print the version"},
    {"--version", run_version, NULL},
    {"help", run_help, NULL},
    {"--help", run_help, NULL},
    {"-h", run_help, NULL},
};

static void usage(FILE *out)
{
    fprintf(out,
            "comet %s - cluster design-space explorer for distributed training\n\n"
            "usage: comet <command> [options]\n\n"
            "commands:\n",
            COMET_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].summary)
            fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "Run 'comet estimate --help' for the estimate options.\n\n"
          "Exit status, for every command: 0 success; 2 bad input or an unusable path\n"
          "(unknown flags, bad values, unreadable or garbage input files, output paths\n"
          "that cannot be created or written at the start); 1 a failure mid-way (disk\n"
          "full, a write error after opening) or an internal error; 130 a sweep or\n"
          "study interrupted (resume it with --resume), or an export interrupted (none\n"
          "of its files left).\n",
          out);
}

/* help and version take nothing more (but --help alone, as every command
 * does): an extra word is refused, as every other command refuses what it
 * does not know. -1: go on; else the exit code. */
static int takes_nothing(int argc, char **argv)
{
    static const cli_arg flags[] = {CLI_ARG_HELP_FLAGS};
    char hint[128];
    snprintf(hint, sizeof hint, "%s takes none; see 'comet help'", argv[0]);
    const cli_args_spec spec = {.command = argv[0],
                                .flags = flags,
                                .n_flags = 1,
                                .help = CLI_HELP_ALONE,
                                .unknown_hint = hint};
    comet_error err;
    comet_error_clear(&err);
    bool help = false;
    if (cli_args_parse(&spec, argc, argv, NULL, &help, &err)) {
        fprintf(stderr, "comet %s: %s\n", argv[0], err.message);
        return CLI_USAGE;
    }
    if (help) {
        usage(stdout);
        return CLI_OK;
    }
    return -1;
}

static int run_help(int argc, char **argv)
{
    int code = takes_nothing(argc, argv);
    if (code >= 0)
        return code;
    usage(stdout);
    return CLI_OK;
}

static int run_version(int argc, char **argv)
{
    int code = takes_nothing(argc, argv);
    if (code >= 0)
        return code;
    printf("comet %s (%s)\n", COMET_VERSION,
           cli_cluster_available() ? "built with MPI" : "single process, no MPI");
    return CLI_OK;
}

/* Every command's own work; main adds the check that stdout took it all. */
static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "comet: unknown command \"%s\" (try 'comet help')\n", argv[1]);
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    /* A file size limit (ulimit -f) makes a write fail with EFBIG rather
     * than kill the process, so a write past it is the failure mid-way it
     * is (exit 1, temporaries removed), not a death that leaves them. */
    signal(SIGXFSZ, SIG_IGN);
    int code = dispatch(argc, argv);
    /* output lost on its way out (a full disk behind a redirection, a
     * closed pipe) is a failure mid-way, whatever the command printed */
    if ((fflush(stdout) != 0 || ferror(stdout)) && code == CLI_OK) {
        comet_error err;
        comet_error_set(&err, COMET_EIO, "<stdout>", 0, 0, NULL, "write failed: %s",
                        strerror(errno));
        return cli_report_error(argv[1], &err); /* code 0: a command ran, so argv[1] is there */
    }
    return code;
}
