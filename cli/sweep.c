/* comet sweep: the best strategy for every cluster design of a study.
 * Design points run side by side: on -j threads in each process, and on
 * several processes under mpirun (point i belongs to rank i mod size).
 * Rank 0 writes every file, taking rows in point order (its own, or the
 * owner rank's next message), one line at a time with a flush, to
 * results.csv and results.jsonl; so an interrupted sweep (Ctrl-C,
 * SIGTERM, a kill) leaves a valid prefix, --resume continues after it,
 * and the bytes are the same at any thread or rank count. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cluster.h"
#include "comet/files.h"
#include "comet/sweep.h"
#include "sweep_files.h"

#define WINDOW 256 /* own rows computed ahead of the writer, at most */

/* Set by SIGINT/SIGTERM; the only mutable global of the program, and only
 * of the CLI: the library has none. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* The points this process computes: first, first + stride, ... < total. */
typedef struct sweep_state {
    const comet_study *study;
    uint64_t total, stride;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    uint64_t next_claim;           /* next own point to hand to a worker */
    uint64_t next_take;            /* next own point the writer needs */
    bool done[WINDOW];
    comet_sweep_row rows[WINDOW];
    bool failed;
    comet_error err;
} sweep_state;

static size_t slot(const sweep_state *s, uint64_t index)
{
    return (size_t)((index / s->stride) % WINDOW);
}

static void *worker(void *arg)
{
    sweep_state *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!stop_requested && !s->failed && s->next_claim < s->total &&
               s->next_claim >= s->next_take + WINDOW * s->stride)
            pthread_cond_wait(&s->changed, &s->lock);
        if (stop_requested || s->failed || s->next_claim >= s->total) {
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        uint64_t index = s->next_claim;
        s->next_claim += s->stride;
        pthread_mutex_unlock(&s->lock);

        comet_sweep_row row;
        comet_error err;
        comet_status st = comet_sweep_point(s->study, index, &row, &err);

        pthread_mutex_lock(&s->lock);
        if (st) {
            s->failed = true;
            s->err = err;
        } else {
            s->rows[slot(s, index)] = row;
            s->done[slot(s, index)] = true;
        }
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
    }
}

/* The writer's side: wait for own point `index` (the next in own order);
 * false when the sweep stopped or failed before it was computed. */
static bool take_row(sweep_state *s, uint64_t index, comet_sweep_row *row)
{
    pthread_mutex_lock(&s->lock);
    while (!s->failed && !s->done[slot(s, index)] &&
           !(stop_requested && index >= s->next_claim))
        pthread_cond_wait(&s->changed, &s->lock);
    bool ready = !s->failed && s->done[slot(s, index)];
    if (ready) {
        *row = s->rows[slot(s, index)];
        s->done[slot(s, index)] = false;
        s->next_take = index + s->stride;
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    return ready;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: comet sweep STUDY.yaml [-o DIR] [-j N] [--resume | --force] [--quiet]\n"
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
    if (a->max_designs == 0 || points <= a->max_designs)
        return COMET_OK;
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--max-designs",
                           "study %s has %llu cluster designs, above the limit of %llu; raise "
                           "it to run them all (--max-designs %llu, or 0 for no limit)",
                           study->name, (unsigned long long)points,
                           (unsigned long long)a->max_designs, (unsigned long long)points);
}


comet_status sweep_parse_args(int argc, char **argv, const char *command, sweep_args *a,
                              comet_error *err)
{
    memset(a, 0, sizeof *a);
    a->command = command;
    a->max_designs = SWEEP_DEFAULT_MAX_DESIGNS;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool valued = strcmp(arg, "-o") == 0 || strcmp(arg, "-j") == 0 ||
                      strcmp(arg, "--report") == 0 || strcmp(arg, "--plots") == 0 ||
                      strcmp(arg, "--heatmap") == 0 || strcmp(arg, "--max-designs") == 0;
        if (valued && (i + 1 >= argc || !argv[i + 1][0]))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, arg, "needs a value");
        if (strcmp(arg, "--report") == 0) {
            a->report = argv[++i];
        } else if (strcmp(arg, "--plots") == 0) {
            a->plots = argv[++i];
        } else if (strcmp(arg, "--heatmap") == 0) {
            a->heatmap = argv[++i];
        } else if (strcmp(arg, "--max-designs") == 0) {
            int64_t n;
            if (cli_parse_int(arg, argv[++i], 0, INT64_MAX, &n, err))
                return err->status;
            a->max_designs = (uint64_t)n;
        } else if (valued) {
            if (arg[1] == 'o') {
                a->dir = argv[++i];
            } else {
                int64_t n;
                if (cli_parse_int("-j", argv[++i], 1, 256, &n, err))
                    return err->status;
                a->threads = (int)n;
            }
        } else if (strcmp(arg, "--resume") == 0) {
            a->resume = true;
        } else if (strcmp(arg, "--force") == 0) {
            a->force = true;
        } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            a->quiet = true;
        } else if (arg[0] == '-' && arg[1]) {
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "unknown option \"%s\" (see 'comet %s --help')", arg,
                                   command);
        } else if (!a->study) {
            a->study = arg;
        } else {
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "one study file at a time (got \"%s\" and \"%s\")", a->study,
                                   arg);
        }
    }
    if (!a->study && strcmp(command, "sweep") == 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "needs a study file (see 'comet sweep --help')");
    if (a->resume && a->force)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--resume",
                               "and --force contradict each other");
    return COMET_OK;
}

static void progress(bool show, uint64_t done, uint64_t total, uint64_t start, double t0)
{
    if (!show)
        return;
    double elapsed = cli_now() - t0;
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

/* Test hook: after `after` rows of this run, write half a row to each file
 * and die by SIGKILL, as a crash mid-write would. */
static void maybe_crash(uint64_t written, FILE *csv, FILE *jsonl)
{
    const char *env = getenv("COMET_SWEEP_CRASH_AFTER");
    if (!env || (uint64_t)strtoull(env, NULL, 10) != written)
        return;
    fputs("999999,ok,12", csv);
    fputs("{\"index\": 999999, \"sta", jsonl);
    fflush(csv);
    fflush(jsonl);
    raise(SIGKILL);
}

typedef struct row_text {
    comet_buf csv, jsonl;
} row_text;

static void render_row(const comet_study *study, const comet_sweep_row *row, row_text *t)
{
    t->csv.len = t->jsonl.len = 0;
    comet_sweep_csv_row(&t->csv, study, row);
    comet_sweep_jsonl_row(&t->jsonl, study, row);
}

typedef struct output {
    FILE *csv, *jsonl;
    char csv_path[4096], jsonl_path[4096];
    int lock;                      /* the output directory's lock (cli_lock_dir) */
} output;

/* Rank 0: every row from `start` in point order, local or received. */
static comet_status write_all(sweep_state *s, const cli_cluster *cl, const sweep_args *a,
                              uint64_t start, output *out, bool *ended, comet_error *err)
{
    row_text t;
    comet_buf_init(&t.csv);
    comet_buf_init(&t.jsonl);
    bool show = !a->quiet && isatty(STDERR_FILENO);
    double t0 = cli_now();
    comet_status st = COMET_OK;
    for (uint64_t i = start; i < s->total && !st; i++) {
        int owner = (int)(i % (uint64_t)cl->size);
        const char *csv, *jsonl;
        char *rcsv = NULL, *rjsonl = NULL;
        if (owner == 0) {
            comet_sweep_row row;
            if (!take_row(s, i, &row))
                break;
            render_row(s->study, &row, &t);
            csv = t.csv.data;
            jsonl = t.jsonl.data;
        } else {
            uint64_t index;
            int status = 0;
            if (ended[owner] || !cli_cluster_recv(cl, owner, &index, &rcsv, &rjsonl, &status)) {
                ended[owner] = true;
                if (status)
                    st = comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                         "rank %d failed", owner);
                break;
            }
            csv = rcsv;
            jsonl = rjsonl;
            if (index != i || !csv || !jsonl)
                st = comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                     "rank %d sent point %llu, expected %llu", owner,
                                     (unsigned long long)index, (unsigned long long)i);
        }
        if (!st)
            st = sweep_append_line(out->csv, out->csv_path, csv, strlen(csv), err);
        if (!st)
            st = sweep_append_line(out->jsonl, out->jsonl_path, jsonl, strlen(jsonl), err);
        free(rcsv);
        free(rjsonl);
        if (!st) {
            maybe_crash(i + 1 - start, out->csv, out->jsonl);
            progress(show, i + 1, s->total, start, t0);
        }
    }
    if (show)
        fputc('\n', stderr);
    comet_buf_free(&t.csv);
    comet_buf_free(&t.jsonl);
    return st;
}

/* Other ranks: own rows in order to rank 0, then the end marker. */
static comet_status send_all(sweep_state *s, const cli_cluster *cl, uint64_t first)
{
    row_text t;
    comet_buf_init(&t.csv);
    comet_buf_init(&t.jsonl);
    comet_status st = COMET_OK;
    for (uint64_t i = first; i < s->total; i += s->stride) {
        comet_sweep_row row;
        if (!take_row(s, i, &row))
            break;
        render_row(s->study, &row, &t);
        if (cli_cluster_send_row(cl, i, t.csv.data, t.csv.len, t.jsonl.data, t.jsonl.len)) {
            st = COMET_EINTERNAL;
            break;
        }
    }
    cli_cluster_send_end(cl, s->failed || st ? 1 : 0);
    comet_buf_free(&t.csv);
    comet_buf_free(&t.jsonl);
    return st;
}

/* Rank 0 takes the messages other ranks still send after it stopped, so
 * they can finish. */
static void drain(const cli_cluster *cl, bool *ended)
{
    for (int r = 1; r < cl->size; r++)
        while (!ended[r]) {
            uint64_t index;
            char *csv = NULL, *jsonl = NULL;
            int status;
            if (!cli_cluster_recv(cl, r, &index, &csv, &jsonl, &status))
                ended[r] = true;
            free(csv);
            free(jsonl);
        }
}

/* A results file to append rows to; a symbolic link at its name is
 * refused (ELOOP), not written through. */
static FILE *open_for_append(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "ab") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    return f;
}

/* Rank 0 only: output directory and its lock, resume point, open files. */
static comet_status open_outputs(const sweep_args *a, const comet_study *study, output *out,
                                 uint64_t *start, comet_error *err)
{
    if (mkdir(a->dir, 0777) != 0 && errno != EEXIST)
        return comet_error_set(err, comet_errno_status(errno), a->dir, 0, 0, NULL,
                               "cannot create: %s", strerror(errno));
    /* before anything in DIR is read or trimmed: one run at a time */
    comet_status st = cli_lock_dir(a->dir, &out->lock, err);
    if (st)
        return st;
    sweep_join(out->csv_path, sizeof out->csv_path, a->dir, "results.csv");
    sweep_join(out->jsonl_path, sizeof out->jsonl_path, a->dir, "results.jsonl");
    st = sweep_prepare_outputs(a->dir, a->resume, a->force, study, out->csv_path, out->jsonl_path,
                               start, err);
    if (st)
        return st;
    out->csv = open_for_append(out->csv_path);
    out->jsonl = open_for_append(out->jsonl_path);
    if (!out->csv || !out->jsonl)
        return comet_error_set(err, comet_errno_status(errno),
                               out->csv ? out->jsonl_path : out->csv_path, 0, 0, NULL,
                               "cannot write: %s", strerror(errno));
    if (*start == 0) {
        char *header = sweep_csv_header(study);
        st = header ? sweep_append_line(out->csv, out->csv_path, header, strlen(header), err)
                    : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        free(header);
    }
    return st;
}

static void start_workers(sweep_state *s, int threads, pthread_t *ids, int *started)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    *started = 0;
    for (int t = 0; t < threads; t++)
        if (pthread_create(&ids[t], NULL, worker, s) == 0)
            (*started)++;
}

static void stop_workers(sweep_state *s, pthread_t *ids, int started, bool fail)
{
    pthread_mutex_lock(&s->lock);
    s->failed = s->failed || fail;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
}

int sweep_run(const sweep_args *a, const comet_study *study, const cli_cluster *cl,
              int *dir_lock)
{
    comet_error err;
    comet_error_clear(&err);
    output out = {.lock = -1};
    uint64_t start = 0, go = 1;
    comet_status st = COMET_OK;
    if (cl->rank == 0) {
        st = open_outputs(a, study, &out, &start, &err);
        go = st ? 0 : 1;
    }
    cli_cluster_bcast(cl, &go);
    cli_cluster_bcast(cl, &start);
    sweep_state *s = go ? calloc(1, sizeof *s) : NULL;
    if (go && !s)
        st = comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    uint64_t written = start;
    if (s) {
        s->study = study;
        s->total = comet_study_points(study);
        s->stride = (uint64_t)cl->size;
        uint64_t first = start + ((uint64_t)cl->rank + s->stride - start % s->stride) % s->stride;
        s->next_claim = s->next_take = first;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->changed, NULL);
        int threads = cli_threads(a->threads);
        pthread_t ids[256];
        int started;
        start_workers(s, threads, ids, &started);
        if (cl->rank == 0) {
            bool ended[1024] = {false};
            st = write_all(s, cl, a, start, &out, ended, &err);
            stop_workers(s, ids, started, st != COMET_OK);
            drain(cl, ended);
            if (!st && s->failed) {
                err = s->err;
                st = err.status ? err.status : COMET_EINTERNAL;
            }
            /* rows written: the contiguous prefix now in the files */
            written = s->total;
            if (stop_requested || st)
                written = 0;
        } else {
            comet_status sent = send_all(s, cl, first);
            stop_workers(s, ids, started, sent != COMET_OK);
        }
        free(s);
    }
    if (out.csv)
        fclose(out.csv);
    if (out.jsonl)
        fclose(out.jsonl);
    *dir_lock = out.lock;
    if (cl->rank != 0)
        return st ? CLI_FAIL : CLI_OK;
    if (st)
        return cli_report_error(a->command, &err);
    if (stop_requested && written < comet_study_points(study)) {
        fprintf(stderr, "comet %s: interrupted; %s holds the points finished so far, continue "
                        "with --resume\n",
                a->command, a->dir);
        return 130;
    }
    if (a->rows_only)
        return CLI_OK;
    return sweep_finish(study, a, out.csv_path);
}

int sweep_main(int argc, char **argv, const sweep_command *cmd)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cmd->usage(stdout);
            return CLI_OK;
        }
    cli_cluster cl;
    cli_cluster_init(NULL, NULL, &cl);
    comet_error err;
    comet_error_clear(&err);
    sweep_args a;
    static comet_study study;
    int code;
    int axes[2];
    if (sweep_parse_args(argc, argv, cmd->name, &a, &err) || cmd->read(a.study, &study, &err) ||
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
        cli_unlock_dir(dir_lock);
    }
    cli_cluster_finalize(&cl);
    return code;
}

int cli_sweep(int argc, char **argv)
{
    static const sweep_command sweep = {"sweep", usage, comet_study_read_file, NULL};
    return sweep_main(argc, argv, &sweep);
}
