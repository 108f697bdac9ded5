/* comet: the command-line front end. A thin dispatcher over libcomet; each
 * subcommand lives in its own file. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cluster.h"

static void usage(FILE *out)
{
    fprintf(out,
            "comet %s - cluster design-space explorer for distributed training\n\n"
            "usage: comet <command> [options]\n\n"
            "commands:\n"
            "  study      the COMET methodology end to end (default: the transformer-1t study)\n"
            "  estimate   predict one training step: time, breakdown, memory, MFU, cost\n"
            "  search     rank every parallelization strategy for one model on one cluster\n"
            "  sweep      the best strategy for every cluster design of a study file\n"
            "  simulate   event-driven simulation: a training step, a collective, or a Chakra trace\n"
            "  report     an HTML report with charts from saved sweep results\n"
            "  export     write a training step as Chakra traces plus ASTRA-sim input files\n"
            "  presets    list the embedded presets, or print one: comet presets show NAME\n"
            "  version    print the version\n\n"
            "Run 'comet estimate --help' for the estimate options.\n\n"
            "Exit status, for every command: 0 success; 2 bad input or an unusable path\n"
            "(unknown flags, bad values, unreadable or garbage input files, output paths\n"
            "that cannot be created or written at the start); 1 a failure mid-way (disk\n"
            "full, a write error after opening) or an internal error; 130 a sweep or\n"
            "study interrupted (resume it with --resume), or an export interrupted (none\n"
            "of its files left).\n",
            COMET_VERSION);
}

/* Every command's own work; main adds the check that stdout took it all. */
static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "study") == 0)
        return cli_study(argc - 1, argv + 1);
    if (strcmp(cmd, "estimate") == 0)
        return cli_estimate(argc - 1, argv + 1);
    if (strcmp(cmd, "search") == 0)
        return cli_search(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0)
        return cli_sweep(argc - 1, argv + 1);
    if (strcmp(cmd, "simulate") == 0)
        return cli_simulate(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cli_export(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cli_report(argc - 1, argv + 1);
    if (strcmp(cmd, "presets") == 0)
        return cli_presets(argc - 1, argv + 1);
    bool is_help = strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 ||
                   strcmp(cmd, "-h") == 0;
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0 || is_help) {
        /* these take nothing more (but --help, as every command does): an
         * extra word is refused, as every other command refuses what it
         * does not know */
        if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
            usage(stdout);
            return CLI_OK;
        }
        if (argc > 2) {
            fprintf(stderr, "comet %s: unknown option \"%s\" (%s takes none; see 'comet help')\n",
                    cmd, argv[2], cmd);
            return CLI_USAGE;
        }
        if (is_help)
            usage(stdout);
        else
            printf("comet %s (%s)\n", COMET_VERSION,
                   cli_cluster_available() ? "built with MPI" : "single process, no MPI");
        return CLI_OK;
    }
    fprintf(stderr, "comet: unknown command \"%s\" (try 'comet help')\n", cmd);
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
