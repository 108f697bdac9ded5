/* comet sweep: the best strategy for every cluster design of a study.
 * Design points run side by side on -j threads; rows are written in point
 * order, one line at a time with a flush, to results.csv and
 * results.jsonl, so an interrupted sweep (Ctrl-C, SIGTERM, a kill) leaves
 * a valid prefix, and --resume continues after it: nothing missing,
 * nothing twice, and the same bytes as an uninterrupted run. pareto.csv
 * and summary.txt are computed from results.csv at the end and written
 * atomically. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "comet/sweep.h"

#define WINDOW 256 /* rows computed ahead of the writer, at most */

/* Set by SIGINT/SIGTERM; the only mutable global of the program, and only
 * of the CLI: the library has none. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

typedef struct sweep_state {
    const comet_study *study;
    uint64_t total;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    uint64_t next_claim;           /* next point to hand to a worker */
    uint64_t next_write;           /* next point the writer needs */
    bool done[WINDOW];
    comet_sweep_row rows[WINDOW];
    bool failed;
    comet_error err;
} sweep_state;

static void *worker(void *arg)
{
    sweep_state *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!stop_requested && !s->failed && s->next_claim < s->total &&
               s->next_claim >= s->next_write + WINDOW)
            pthread_cond_wait(&s->changed, &s->lock);
        if (stop_requested || s->failed || s->next_claim >= s->total) {
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        uint64_t index = s->next_claim++;
        pthread_mutex_unlock(&s->lock);

        comet_sweep_row row;
        comet_error err;
        comet_status st = comet_sweep_point(s->study, index, &row, &err);

        pthread_mutex_lock(&s->lock);
        if (st) {
            s->failed = true;
            s->err = err;
        } else {
            s->rows[index % WINDOW] = row;
            s->done[index % WINDOW] = true;
        }
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
    }
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: comet sweep STUDY.yaml [-o DIR] [-j N] [--resume | --force] [--quiet]\n\n"
            "Runs the strategy search on every design point of the study and writes, in DIR\n"
            "(default: sweep-NAME, from the study's name):\n"
            "  results.csv, results.jsonl  one row per point, appended line by line with a flush\n"
            "  pareto.csv                  best step time against design cost, per model\n"
            "  summary.txt                 which resource moves step time most, per model\n"
            "  -j N        threads (default: all cores)\n"
            "  --resume    continue an interrupted sweep in DIR\n"
            "  --force     start over, replacing DIR's results\n"
            "  --quiet     no progress line on stderr\n"
            "Exit status: 0 done, 1 I/O failure, 2 bad input, 130 interrupted (resumable).\n");
}

typedef struct sweep_args {
    const char *study;
    const char *dir;
    int threads;
    bool resume, force, quiet;
} sweep_args;

static comet_status parse_args(int argc, char **argv, sweep_args *a, comet_error *err)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "-j") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, arg, "needs a value");
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
                                   "unknown option \"%s\" (see 'comet sweep --help')", arg);
        } else if (!a->study) {
            a->study = arg;
        } else {
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "one study file at a time (got \"%s\" and \"%s\")", a->study,
                                   arg);
        }
    }
    if (!a->study)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "needs a study file (see 'comet sweep --help')");
    if (a->resume && a->force)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--resume",
                               "and --force contradict each other");
    return COMET_OK;
}

/* ---- files ---------------------------------------------------------------- */

static void join(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* Complete lines of a file: the length up to the last '\n', and how many
 * lines that is. A missing file has none. */
static comet_status complete_lines(const char *path, long *bytes, uint64_t *lines,
                                   comet_error *err)
{
    *bytes = 0;
    *lines = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? COMET_OK
                               : comet_error_set(err, COMET_EIO, path, 0, 0, NULL,
                                                 "cannot read: %s", strerror(errno));
    long pos = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        pos++;
        if (c == '\n') {
            *bytes = pos;
            (*lines)++;
        }
    }
    fclose(f);
    return COMET_OK;
}

/* Keep the first `lines` lines of a file (dropping a torn last line). */
static comet_status keep_lines(const char *path, uint64_t lines, comet_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot read: %s",
                               strerror(errno));
    long pos = 0;
    uint64_t seen = 0;
    int c;
    while (seen < lines && (c = fgetc(f)) != EOF) {
        pos++;
        if (c == '\n')
            seen++;
    }
    fclose(f);
    if (truncate(path, pos) != 0)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot truncate: %s",
                               strerror(errno));
    return COMET_OK;
}

/* The header line results.csv must start with, for this study. */
static char *csv_header(const comet_study *study)
{
    comet_buf b;
    comet_buf_init(&b);
    comet_sweep_csv_header(&b, study);
    return b.data;
}

/* Where to start: 0 for a fresh sweep, else the rows both files hold. */
static comet_status prepare_outputs(const sweep_args *a, const comet_study *study,
                                    const char *csv, const char *jsonl, uint64_t *start,
                                    comet_error *err)
{
    *start = 0;
    long csv_bytes, jsonl_bytes;
    uint64_t csv_lines, jsonl_lines;
    if (complete_lines(csv, &csv_bytes, &csv_lines, err) ||
        complete_lines(jsonl, &jsonl_bytes, &jsonl_lines, err))
        return err->status;
    bool exists = access(csv, F_OK) == 0 || access(jsonl, F_OK) == 0;
    if (!a->resume) {
        if (exists && !a->force)
            return comet_error_set(err, COMET_EINPUT, a->dir, 0, 0, NULL,
                                   "already holds sweep results; use --resume to continue or "
                                   "--force to start over");
        remove(csv);
        remove(jsonl);
        return COMET_OK;
    }
    if (!exists || csv_lines == 0)
        return COMET_OK; /* nothing to resume: a fresh start */
    char *header = csv_header(study);
    FILE *f = fopen(csv, "rb");
    char *line = NULL;
    size_t cap = 0;
    bool same = f && getline(&line, &cap, f) > 0 && header && strcmp(line, header) == 0;
    if (f)
        fclose(f);
    free(line);
    free(header);
    if (!same)
        return comet_error_set(err, COMET_EINPUT, csv, 1, 1, NULL,
                               "was written for a different study (its columns differ); "
                               "use --force to start over");
    uint64_t rows = csv_lines - 1 < jsonl_lines ? csv_lines - 1 : jsonl_lines;
    if (keep_lines(csv, rows + 1, err) || keep_lines(jsonl, rows, err))
        return err->status;
    *start = rows;
    return COMET_OK;
}

static comet_status append_line(FILE *f, const char *path, const char *text, size_t len,
                                comet_error *err)
{
    if (fwrite(text, 1, len, f) != len || fflush(f) != 0)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "write failed: %s",
                               strerror(errno));
    return COMET_OK;
}

/* ---- summaries from results.csv ------------------------------------------ */

/* Field `col` of a CSV line (RFC 4180 quotes honoured) into out. */
static void csv_field_at(const char *line, int col, char *out, size_t cap)
{
    int c = 0;
    size_t n = 0;
    bool quoted = false;
    for (const char *p = line; *p && *p != '\n'; p++) {
        if (quoted) {
            if (*p == '"' && p[1] == '"')
                p++;
            else if (*p == '"') {
                quoted = false;
                continue;
            }
        } else if (*p == '"') {
            quoted = true;
            continue;
        } else if (*p == ',') {
            c++;
            continue;
        }
        if (c == col && n + 1 < cap)
            out[n++] = *p;
    }
    out[n] = '\0';
}

static int header_column(const char *header, const char *name)
{
    char field[128];
    for (int col = 0; col < 256; col++) {
        csv_field_at(header, col, field, sizeof field);
        if (strcmp(field, name) == 0)
            return col;
        if (!field[0])
            break;
    }
    return -1;
}

static comet_status summarize(const comet_study *study, const char *csv, comet_summary *sum,
                              comet_error *err)
{
    comet_summary_init(sum, study);
    FILE *f = fopen(csv, "rb");
    if (!f)
        return comet_error_set(err, COMET_EIO, csv, 0, 0, NULL, "cannot read: %s",
                               strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int time_col = -1;
    bool first = true;
    while (getline(&line, &cap, f) > 0) {
        if (first) {
            time_col = header_column(line, "step_time_s");
            first = false;
            continue;
        }
        char field[64];
        csv_field_at(line, 0, field, sizeof field);
        uint64_t index = strtoull(field, NULL, 10);
        csv_field_at(line, 1, field, sizeof field);
        comet_point_status status = strcmp(field, "ok") == 0 ? COMET_POINT_OK : COMET_POINT_NO_FIT;
        csv_field_at(line, 2, field, sizeof field);
        double cost = strtod(field, NULL);
        csv_field_at(line, time_col, field, sizeof field);
        double step = strtod(field, NULL);
        int model;
        comet_system sys;
        int64_t npus;
        double values[COMET_STUDY_MAX_AXES];
        comet_study_point(study, index, &model, &sys, &npus, values);
        comet_summary_add(sum, model, index, values, status, step, cost);
    }
    free(line);
    fclose(f);
    return COMET_OK;
}

/* ---- the run ---------------------------------------------------------------- */

static void progress(const sweep_args *a, uint64_t done, uint64_t total, uint64_t start,
                     double t0)
{
    if (a->quiet || !isatty(STDERR_FILENO))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double elapsed = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - t0;
    double rate = elapsed > 0 ? (double)(done - start) / elapsed : 0.0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0.0;
    fprintf(stderr, "\r%llu/%llu design points  %.1f/s  ETA %.0f s   ", (unsigned long long)done,
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

static comet_status write_rows(sweep_state *s, const sweep_args *a, uint64_t start, FILE *csv,
                               FILE *jsonl, const char *csv_path, const char *jsonl_path,
                               comet_error *err)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    comet_buf line;
    comet_buf_init(&line);
    comet_status st = COMET_OK;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->failed && s->next_write < s->total && !s->done[s->next_write % WINDOW] &&
               !(stop_requested && s->next_write >= s->next_claim))
            pthread_cond_wait(&s->changed, &s->lock);
        bool ready = !s->failed && s->next_write < s->total && s->done[s->next_write % WINDOW];
        comet_sweep_row row;
        if (ready)
            row = s->rows[s->next_write % WINDOW];
        pthread_mutex_unlock(&s->lock);
        if (!ready)
            break;
        line.len = 0;
        comet_sweep_csv_row(&line, s->study, &row);
        st = append_line(csv, csv_path, line.data, line.len, err);
        line.len = 0;
        comet_sweep_jsonl_row(&line, s->study, &row);
        if (!st)
            st = append_line(jsonl, jsonl_path, line.data, line.len, err);
        pthread_mutex_lock(&s->lock);
        s->done[s->next_write % WINDOW] = false;
        s->next_write++;
        if (st)
            s->failed = true;
        pthread_cond_broadcast(&s->changed);
        uint64_t written = s->next_write;
        pthread_mutex_unlock(&s->lock);
        if (st)
            break;
        maybe_crash(written - start, csv, jsonl);
        progress(a, written, s->total, start, t0);
    }
    comet_buf_free(&line);
    if (!a->quiet && isatty(STDERR_FILENO))
        fputc('\n', stderr);
    return st;
}

static int finish(const comet_study *study, const char *dir, const char *csv_path)
{
    comet_error err;
    comet_summary *sum = malloc(sizeof *sum);
    if (!sum) {
        comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        return cli_report_error("sweep", &err);
    }
    comet_status st = summarize(study, csv_path, sum, &err);
    comet_buf pareto, text;
    comet_buf_init(&pareto);
    comet_buf_init(&text);
    if (!st) {
        comet_summary_pareto_csv(&pareto, sum);
        comet_summary_text(&text, sum);
        char path[4096];
        join(path, sizeof path, dir, "pareto.csv");
        st = cli_write_output(path, pareto.data, pareto.len, &err);
        join(path, sizeof path, dir, "summary.txt");
        if (!st)
            st = cli_write_output(path, text.data, text.len, &err);
        if (!st)
            fputs(text.data, stdout);
    }
    comet_buf_free(&pareto);
    comet_buf_free(&text);
    free(sum);
    return st ? cli_report_error("sweep", &err) : CLI_OK;
}

int cli_sweep(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return CLI_OK;
        }
    comet_error err;
    comet_error_clear(&err);
    sweep_args a;
    static comet_study study;
    if (parse_args(argc, argv, &a, &err) || comet_study_read_file(a.study, &study, &err))
        return cli_report_error("sweep", &err);
    char dir_default[128];
    if (!a.dir) {
        snprintf(dir_default, sizeof dir_default, "sweep-%s", study.name);
        a.dir = dir_default;
    }
    if (mkdir(a.dir, 0777) != 0 && errno != EEXIST) {
        comet_error_set(&err, COMET_EINPUT, a.dir, 0, 0, NULL, "cannot create: %s",
                        strerror(errno));
        return cli_report_error("sweep", &err);
    }
    char csv_path[4096], jsonl_path[4096];
    join(csv_path, sizeof csv_path, a.dir, "results.csv");
    join(jsonl_path, sizeof jsonl_path, a.dir, "results.jsonl");
    uint64_t start;
    if (prepare_outputs(&a, &study, csv_path, jsonl_path, &start, &err))
        return cli_report_error("sweep", &err);
    FILE *csv = fopen(csv_path, "ab"), *jsonl = fopen(jsonl_path, "ab");
    if (!csv || !jsonl) {
        comet_error_set(&err, COMET_EIO, csv ? jsonl_path : csv_path, 0, 0, NULL,
                        "cannot write: %s", strerror(errno));
        if (csv)
            fclose(csv);
        if (jsonl)
            fclose(jsonl);
        return cli_report_error("sweep", &err);
    }
    comet_status st = COMET_OK;
    if (start == 0) {
        char *header = csv_header(&study);
        st = append_line(csv, csv_path, header ? header : "", header ? strlen(header) : 0, &err);
        free(header);
    }

    sweep_state *s = calloc(1, sizeof *s);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = a.threads > 0 ? a.threads : (int)(cores > 0 ? cores : 1);
    pthread_t ids[256];
    int started = 0;
    if (!st && s) {
        s->study = &study;
        s->total = comet_study_points(&study);
        s->next_claim = s->next_write = start;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->changed, NULL);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        for (int t = 0; t < threads; t++)
            if (pthread_create(&ids[t], NULL, worker, s) == 0)
                started++;
        st = write_rows(s, &a, start, csv, jsonl, csv_path, jsonl_path, &err);
        pthread_mutex_lock(&s->lock);
        s->failed = s->failed || st;
        pthread_cond_broadcast(&s->changed);
        pthread_mutex_unlock(&s->lock);
        for (int t = 0; t < started; t++)
            pthread_join(ids[t], NULL);
        if (!st && s->failed) {
            err = s->err;
            st = err.status ? err.status : COMET_EINTERNAL;
        }
    } else if (!s) {
        st = comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    uint64_t written = s ? s->next_write : 0, total = s ? s->total : 0;
    free(s);
    fclose(csv);
    fclose(jsonl);
    if (st)
        return cli_report_error("sweep", &err);
    if (stop_requested && written < total) {
        fprintf(stderr,
                "comet sweep: interrupted after %llu of %llu design points; %s holds them, "
                "continue with --resume\n",
                (unsigned long long)written, (unsigned long long)total, a.dir);
        return 130;
    }
    return finish(&study, a.dir, csv_path);
}
