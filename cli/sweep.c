/* comet sweep: the best strategy for every cluster design of a study.
 * The library's runner does the work (comet_sweep_run: threads, the
 * ordered writer, resume; MPI ranks through cli/cluster.c's transport);
 * this file parses the flags, turns SIGINT/SIGTERM into the runner's stop
 * hook, draws the progress line and says how the run ended (130 when
 * interrupted, resumable with --resume). comet study shares it. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "cli.h"
#include "cluster.h"
#include "comet/files.h"
#include "comet/report.h"
#include "comet/sweep.h"
#include "sweep_files.h"

/* Set by SIGINT/SIGTERM; the only mutable global of the program, and only
 * of the CLI: the library has none. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static bool stop_hook(void *ctx)
{
    (void)ctx;
    return stop_requested != 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: comet sweep STUDY.yaml|NAME [-o DIR] [-j N] [--resume | --force] [--quiet]\n"
            "                   [--max-designs N]\n"
            "       mpirun -n K comet sweep STUDY.yaml ...   (when built with OpenMPI)\n\n"
            "Runs the strategy search on every design point of the study and writes, in DIR\n"
            "(default: sweep-NAME, from the study's name):\n"
            "  results.csv, results.jsonl  one row per point, appended line by line with a flush\n"
            "  pareto.csv                  best step time against design cost, per model\n"
            "  summary.txt                 which resource moves step time most, per model\n"
            "  report.html                 charts: heatmap, Pareto front, sensitivity, designs\n"
            "  --report FILE  write the HTML report to FILE instead of DIR/report.html\n"
            "  --plots DIR2   also write each chart as DIR2/ID.svg and DIR2/ID.csv\n"
            "  --heatmap X,Y  the report's heatmap axes (default: the two that matter most)\n"
            "  -j N        threads per process (default: all cores)\n"
            "  --resume    continue an interrupted sweep in DIR\n"
            "  --force     start over, replacing DIR's results\n"
            "  --quiet     no progress line on stderr\n"
            "  --max-designs N  refuse a study of more than N designs (default: %d, about an\n"
            "              hour on a laptop; 0: no limit)\n"
            "Exit status: 0 done, 1 a failure mid-way, 2 bad input, an unusable output path or\n"
            "DIR in use by another run (DIR/.comet-lock), 130 interrupted (resumable).\n",
            SWEEP_DEFAULT_MAX_DESIGNS);
}

/* The design count, from the axes' lengths (never enumerated), against
 * --max-designs: a study of millions of designs would run for days. */
static comet_status check_design_count(const sweep_args *a, const comet_study *study,
                                       comet_error *err)
{
    uint64_t points = comet_study_points(study);
    if (a->max_designs == 0 || points <= (uint64_t)a->max_designs)
        return COMET_OK;
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--max-designs",
                           "study %s has %llu cluster designs, above the limit of %llu; raise "
                           "it to run them all (--max-designs %llu, or 0 for no limit)",
                           study->name, (unsigned long long)points,
                           (unsigned long long)a->max_designs, (unsigned long long)points);
}


#define AT(field) .offset = offsetof(sweep_args, field)

static const cli_arg sweep_flags[] = {
    CLI_ARG_HELP_FLAGS,
    {.name = "-o", .kind = CLI_ARG_TEXT, AT(dir)},
    {.name = "-j", .kind = CLI_ARG_INT, AT(threads), .min = 1, .max = 256},
    {.name = "--report", .kind = CLI_ARG_TEXT, AT(report)},
    {.name = "--plots", .kind = CLI_ARG_TEXT, AT(plots)},
    {.name = "--heatmap", .kind = CLI_ARG_TEXT, AT(heatmap)},
    {.name = "--max-designs", .kind = CLI_ARG_INT, AT(max_designs), .min = 0,
     .max = INT64_MAX},
    {.name = "--resume", .kind = CLI_ARG_SWITCH, AT(resume)},
    {.name = "--force", .kind = CLI_ARG_SWITCH, AT(force)},
    {.name = "--quiet", .alias = "-q", .kind = CLI_ARG_SWITCH, AT(quiet)},
};

comet_status sweep_parse_args(int argc, char **argv, const char *command, sweep_args *a,
                              bool *help, comet_error *err)
{
    memset(a, 0, sizeof *a);
    a->command = command;
    a->max_designs = SWEEP_DEFAULT_MAX_DESIGNS;
    const cli_args_spec spec = {
        .command = command,
        .flags = sweep_flags,
        .n_flags = sizeof sweep_flags / sizeof sweep_flags[0],
        .help = CLI_HELP_ANYWHERE,
        .single = "study file",
        .single_offset = offsetof(sweep_args, study),
    };
    comet_status st = cli_args_parse(&spec, argc, argv, a, help, err);
    if (st || *help)
        return st;
    if (!a->study && strcmp(command, "sweep") == 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "needs a study file (see 'comet sweep --help')");
    if (a->resume && a->force)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--resume",
                               "and --force contradict each other");
    return COMET_OK;
}

/* What the CLI hears from the runner: the progress line on a terminal,
 * and the crash test hook. */
typedef struct sweep_watch {
    bool show;                     /* draw the progress line */
    bool began;                    /* the rows began: the line is there to end */
    double t0;
    char csv_path[4096], jsonl_path[4096];
} sweep_watch;

static void progress(const sweep_watch *w, uint64_t done, uint64_t total, uint64_t start)
{
    if (!w->show)
        return;
    double elapsed = cli_now() - w->t0;
    double rate = elapsed > 0 ? (double)(done - start) / elapsed : 0.0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0.0;
    char bar[31];
    int filled = total ? (int)(30 * done / total) : 30;
    for (int i = 0; i < 30; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\r[%s] %3.0f%%  %llu/%llu designs  %.1f/s  ETA %.0f s   ", bar,
            total ? 100.0 * (double)done / (double)total : 100.0, (unsigned long long)done,
            (unsigned long long)total, rate, eta);
}

/* Half a line appended to a results file, as a crash mid-write leaves. */
static void append_torn(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = write(fd, text, strlen(text));
        (void)n;
        close(fd);
    }
}

/* Test hook: after `after` rows of this run, write half a row to each file
 * and die by SIGKILL, as a crash mid-write would. */
static void maybe_crash(const sweep_watch *w, uint64_t written)
{
    const char *env = getenv("COMET_SWEEP_CRASH_AFTER");
    if (!env || (uint64_t)strtoull(env, NULL, 10) != written)
        return;
    append_torn(w->csv_path, "999999,ok,12");
    append_torn(w->jsonl_path, "{\"index\": 999999, \"sta");
    raise(SIGKILL);
}

static void rows_begin(void *ctx, uint64_t start, uint64_t total)
{
    (void)start, (void)total;
    sweep_watch *w = ctx;
    w->began = true;
    w->t0 = cli_now();
}

static void row_written(void *ctx, uint64_t done, uint64_t total, uint64_t start)
{
    const sweep_watch *w = ctx;
    maybe_crash(w, done - start);
    progress(w, done, total, start);
}

int sweep_run(const sweep_args *a, const comet_study *study, cli_cluster *cl, int *dir_lock)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sweep_watch watch = {.show = cl->rank == 0 && !a->quiet && isatty(STDERR_FILENO)};
    sweep_join(watch.csv_path, sizeof watch.csv_path, a->dir, "results.csv");
    sweep_join(watch.jsonl_path, sizeof watch.jsonl_path, a->dir, "results.jsonl");
    comet_sweep_transport transport = cli_cluster_transport(cl);
    /* each point's best gets its uncertainty band, on every process */
    comet_error err;
    comet_error_clear(&err);
    comet_band_model *bands = NULL;
    if (cli_band_model(&bands, &err))
        return cli_report_error(a->command, &err);
    comet_sweep_options opt = {
        .dir = a->dir,
        .format = &comet_sweep_rows_format,
        .threads = cli_threads(a->threads),
        .resume = a->resume,
        .force = a->force,
        .transport = &transport,
        .hooks = {.ctx = &watch,
                  .stop = stop_hook,
                  .rows_begin = rows_begin,
                  .row_written = row_written},
        .bands = bands,
    };
    comet_status st = comet_sweep_run(study, &opt, dir_lock, &err);
    comet_band_model_free(bands);
    if (cl->rank != 0)
        return st && st != COMET_ECANCELED ? CLI_FAIL : CLI_OK;
    if (watch.show && watch.began)
        fputc('\n', stderr);
    if (st == COMET_ECANCELED) {
        fprintf(stderr, "comet %s: interrupted; %s holds the points finished so far, continue "
                        "with --resume\n",
                a->command, a->dir);
        return 130;
    }
    if (st)
        return cli_report_error(a->command, &err);
    if (a->rows_only)
        return CLI_OK;
    return sweep_finish(study, a, watch.csv_path);
}

int sweep_main(int argc, char **argv, const sweep_command *cmd)
{
    comet_error err;
    comet_error_clear(&err);
    sweep_args a;
    bool help = false;
    comet_status parsed = sweep_parse_args(argc, argv, cmd->name, &a, &help, &err);
    if (help) {
        cmd->usage(stdout);
        return CLI_OK;
    }
    cli_cluster cl;
    cli_cluster_init(NULL, NULL, &cl);
    static comet_study study;
    int code;
    int axes[2];
    if (parsed || cmd->read(a.study, &study, &err) ||
        check_design_count(&a, &study, &err) || cli_heatmap_axes(a.heatmap, &study, axes, &err) ||
        cli_check_output(a.report, CLI_OUT_FILE, NULL, &err) ||
        cli_check_output(a.plots, CLI_OUT_DIR, "--plots", &err)) { /* checked before any work */
        code = cl.rank == 0 ? cli_report_error(cmd->name, &err) : CLI_USAGE;
    } else {
        char dir_default[128];
        if (!a.dir) {
            snprintf(dir_default, sizeof dir_default, "%s-%s", cmd->name, study.name);
            a.dir = dir_default;
        }
        a.rows_only = cmd->finish != NULL;
        if (cl.rank == 0 && !a.quiet) /* the count first: a big sweep is never a surprise */
            fprintf(stderr, "comet %s %s: sweeping %llu cluster designs into %s/\n", cmd->name,
                    study.name, (unsigned long long)comet_study_points(&study), a.dir);
        int dir_lock = -1;
        code = sweep_run(&a, &study, &cl, &dir_lock);
        if (code == CLI_OK && cl.rank == 0 && cmd->finish)
            code = cmd->finish(&a, &study);
        comet_dir_unlock(dir_lock);
    }
    cli_cluster_finalize(&cl);
    return code;
}

int cli_sweep(int argc, char **argv)
{
    static const sweep_command sweep = {"sweep", usage, sweep_read_study, NULL};
    return sweep_main(argc, argv, &sweep);
}
