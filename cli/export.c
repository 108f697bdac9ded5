/* comet export --chakra PREFIX: writes the training step of a model,
 * system and strategy (read as comet estimate reads them) as Chakra
 * execution traces, one per NPU, with the ASTRA-sim network, system,
 * remote-memory and comm-group files for the same run, and says how to run
 * them in comet and in ASTRA-sim. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "comet/chakra.h"
#include "inputs.h"

/* Set by SIGINT/SIGTERM while the export runs; like comet sweep's, a flag
 * of the CLI only (the library reads it through the cancel callback). */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static bool export_cancelled(void *context)
{
    (void)context;
    return stop_requested != 0;
}

/* SIGINT and SIGTERM set the flag; SA_RESTART so a write under way
 * finishes instead of failing with EINTR. */
static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void help(void)
{
    printf("usage: comet export --chakra PREFIX [FILE.yaml ...] [estimate's inputs and knobs]\n\n"
           "Writes one training step (the task graph comet simulate runs) as Chakra\n"
           "execution traces PREFIX.<rank>.et, one per NPU, and beside them\n"
           "PREFIX.network.yml, PREFIX.system.json, PREFIX.memory.json and\n"
           "PREFIX.groups.json, so the same run works in ASTRA-sim and in\n"
           "'comet simulate --chakra'. Inputs and knobs are those of comet estimate\n"
           "(see 'comet estimate --help').\n"
           "The files are replaced as one set: on any failure none of the new files is\n"
           "left and an earlier export under PREFIX stays as it was; on success ranks an\n"
           "earlier, larger export left (PREFIX.N.et from the new rank count N on, up to the\n"
           "first name missing or not a regular file) are removed; ranks past a gap stay.\n"
           "Exit status: 0 ok, 1 a failure mid-way (none of the files is left), 2 bad input\n"
           "or an unusable prefix, 130 interrupted by SIGINT or SIGTERM (none of the files\n"
           "is left; see 'comet help').\n");
}

int cli_export(int argc, char **argv)
{
    int code;
    cli_inputs *in = cli_inputs_start(argc, argv, CMD_EXPORT, help, &code);
    if (!in)
        return code;
    comet_error err;
    comet_error_clear(&err);
    if (!in->chakra) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--chakra",
                        "is required (the trace prefix, e.g. out/gpt3)");
        return cli_report_error("export", &err);
    }
    /* every destination, before any work (the library checks again once the
     * strategy is resolved) */
    if (comet_export_chakra_check(in->chakra, comet_strategy_npus(&in->job.strategy), &err))
        return cli_report_error("export", &err);
    comet_export_info info;
    double t0 = cli_now();
    catch_signals();
    comet_export_options options = {.cancelled = export_cancelled, .context = NULL};
    if (comet_export_chakra(&in->job.model, &in->job.system, &in->job.strategy, in->chakra,
                            &options, &info, &err)) {
        if (err.status == COMET_ECANCELED) {
            fprintf(stderr, "comet export: interrupted; none of its files was left, and an "
                            "earlier export under %s stays as it was\n",
                    in->chakra);
            return 130;
        }
        cli_inputs_locate(in, &err);
        return cli_report_error("export", &err);
    }
    const char *p = in->chakra;
    double took = cli_now() - t0;
    /* a trace past the reader's default limits needs them raised */
    char flags[160], why[320];
    int over = comet_export_reader_flags(&info, flags, sizeof flags, why, sizeof why);
    printf("wrote %s.0.et ... %s.%d.et (%d ranks, %zu nodes) in %.2f s\n"
           "  and %s.network.yml, %s.system.json, %s.memory.json, %s.groups.json\n\n",
           p, p, info.ranks - 1, info.ranks, info.nodes, took, p, p, p, p);
    if (over)
        printf("note: the trace passes comet simulate --chakra's default limits (%s), so the "
               "command raises them\n",
               why);
    printf("run it in comet:\n"
           "  comet simulate --chakra %s%s --astra-network %s.network.yml \\\n"
           "      --astra-system %s.system.json --astra-memory %s.memory.json \\\n"
           "      --astra-comm-group %s.groups.json\n"
           "run it in ASTRA-sim (analytical backend):\n"
           "  AstraSim_Analytical_Congestion_Unaware --workload-configuration=%s \\\n"
           "      --system-configuration=%s.system.json --network-configuration=%s.network.yml \\\n"
           "      --remote-memory-configuration=%s.memory.json --comm-group-configuration=%s.groups.json\n",
           p, flags, p, p, p, p, p, p, p, p, p);
    return CLI_OK;
}
