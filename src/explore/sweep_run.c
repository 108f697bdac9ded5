/* The sweep runner: every design point of a study, on threads in each
 * process and on several processes (point i belongs to process i mod
 * size, through the caller's transport). Process 0 writes every file,
 * taking rows in point order (its own, or the owner's next message), one
 * line at a time with a flush, to results.csv and results.jsonl; so an
 * interrupted sweep (the caller's stop hook, or a kill) leaves a valid
 * prefix, a resumed one continues after it, and the bytes are the same at
 * any thread or process count. Workers run at most WINDOW own points
 * ahead of the writer, so memory does not grow with the study. */
#include "comet/sweep.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comet/files.h"
#include "sweep_rows.h"

#define WINDOW 256 /* own rows computed ahead of the writer, at most */
#define MAX_THREADS 256

/* The points this process computes: first, first + stride, ... < total. */
typedef struct sweep_state {
    const comet_study *study;
    const comet_sweep_format *format;
    const comet_sweep_hooks *hooks;
    const comet_band_model *bands;
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

static bool stop_asked(const sweep_state *s)
{
    return s->hooks->stop && s->hooks->stop(s->hooks->ctx);
}

static size_t slot(const sweep_state *s, uint64_t index)
{
    return (size_t)((index / s->stride) % WINDOW);
}

/* The best strategy's band on the point's own system. */
static void point_band(const comet_study *study, const comet_band_model *bands,
                       comet_sweep_row *row)
{
    comet_system sys;
    comet_study_point_system(study, row->index, &sys);
    comet_band_for(bands, &study->models[row->model], &sys, &row->best.strategy,
                   &row->best.result, &row->band);
}

static void *worker(void *arg)
{
    sweep_state *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!stop_asked(s) && !s->failed && s->next_claim < s->total &&
               s->next_claim >= s->next_take + WINDOW * s->stride)
            pthread_cond_wait(&s->changed, &s->lock);
        if (stop_asked(s) || s->failed || s->next_claim >= s->total) {
            /* the stop may have come (from a signal handler, which cannot
             * wake anyone) while the writer waits for a point no worker
             * will compute: wake it to see the stop */
            pthread_cond_broadcast(&s->changed);
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        uint64_t index = s->next_claim;
        s->next_claim += s->stride;
        pthread_mutex_unlock(&s->lock);

        comet_sweep_row row;
        comet_error err;
        comet_status st = comet_sweep_point(s->study, index, &row, &err);
        if (!st && s->bands && row.status == COMET_POINT_OK)
            point_band(s->study, s->bands, &row);

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
    while (!s->failed && !s->done[slot(s, index)] && !(stop_asked(s) && index >= s->next_claim))
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

typedef struct row_text {
    comet_buf csv, jsonl;
} row_text;

static void render_row(const comet_sweep_format *f, const comet_study *study,
                       const comet_sweep_row *row, row_text *t)
{
    t->csv.len = t->jsonl.len = 0;
    f->csv_row(&t->csv, study, row);
    f->jsonl_row(&t->jsonl, study, row);
}

/* Process 0: every row from `start` in point order, local or received;
 * ended[r] records that process r sent its end marker. */
static comet_status write_all(sweep_state *s, const comet_sweep_transport *tr, uint64_t start,
                              sweep_rows *out, bool *ended, comet_error *err)
{
    row_text t;
    comet_buf_init(&t.csv);
    comet_buf_init(&t.jsonl);
    comet_status st = COMET_OK;
    if (s->hooks->rows_begin)
        s->hooks->rows_begin(s->hooks->ctx, start, s->total);
    for (uint64_t i = start; i < s->total && !st; i++) {
        int owner = (int)(i % (uint64_t)tr->size);
        const char *csv, *jsonl;
        char *rcsv = NULL, *rjsonl = NULL;
        if (owner == 0) {
            comet_sweep_row row;
            if (!take_row(s, i, &row))
                break;
            render_row(s->format, s->study, &row, &t);
            csv = t.csv.data;
            jsonl = t.jsonl.data;
        } else {
            uint64_t index;
            int status = 0;
            if (ended[owner] || !tr->receive(tr->ctx, owner, &index, &rcsv, &rjsonl, &status)) {
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
            st = sweep_rows_append_csv(out, csv, err);
        if (!st)
            st = sweep_rows_append(out->jsonl, out->jsonl_path, jsonl, strlen(jsonl), err);
        free(rcsv);
        free(rjsonl);
        if (!st && s->hooks->row_written)
            s->hooks->row_written(s->hooks->ctx, i + 1, s->total, start);
    }
    comet_buf_free(&t.csv);
    comet_buf_free(&t.jsonl);
    return st;
}

/* Other processes: own rows in order to process 0, then the end marker. */
static comet_status send_all(sweep_state *s, const comet_sweep_transport *tr, uint64_t first,
                             comet_error *err)
{
    row_text t;
    comet_buf_init(&t.csv);
    comet_buf_init(&t.jsonl);
    comet_status st = COMET_OK;
    for (uint64_t i = first; i < s->total; i += s->stride) {
        comet_sweep_row row;
        if (!take_row(s, i, &row))
            break;
        render_row(s->format, s->study, &row, &t);
        if (tr->send_row(tr->ctx, i, t.csv.data, t.csv.len, t.jsonl.data, t.jsonl.len)) {
            st = comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                 "process %d could not send point %llu to process 0", tr->rank,
                                 (unsigned long long)i);
            break;
        }
    }
    tr->send_end(tr->ctx, s->failed || st ? 1 : 0);
    comet_buf_free(&t.csv);
    comet_buf_free(&t.jsonl);
    return st;
}

/* Process 0 takes the messages other processes still send after it
 * stopped, so they can finish. */
static void drain(const comet_sweep_transport *tr, bool *ended)
{
    for (int r = 1; r < tr->size; r++)
        while (!ended[r]) {
            uint64_t index;
            char *csv = NULL, *jsonl = NULL;
            int status;
            if (!tr->receive(tr->ctx, r, &index, &csv, &jsonl, &status))
                ended[r] = true;
            free(csv);
            free(jsonl);
        }
}

/* Process 0 only: the output directory and its lock, then the results
 * files ready from *start. */
static comet_status open_outputs(const comet_sweep_options *opt, const comet_study *study,
                                 sweep_rows *out, int *dir_lock, uint64_t *start,
                                 comet_error *err)
{
    if (mkdir(opt->dir, 0777) != 0 && errno != EEXIST)
        return comet_error_set(err, comet_errno_status(errno), opt->dir, 0, 0, NULL,
                               "cannot create: %s", strerror(errno));
    /* before anything in DIR is read or trimmed: one run at a time */
    comet_status st = comet_dir_lock(opt->dir, dir_lock, err);
    if (st)
        return st;
    return sweep_rows_open(out, opt->dir, opt->resume, opt->force, opt->format, study, start,
                           err);
}

/* Starts up to `threads` workers; *why gets pthread_create's last error. */
static int start_workers(sweep_state *s, int threads, pthread_t *ids, int *why)
{
    int started = 0;
    *why = 0;
    for (int t = 0; t < threads && t < MAX_THREADS; t++) {
        int e = pthread_create(&ids[started], NULL, worker, s);
        if (e == 0)
            started++;
        else
            *why = e;
    }
    return started;
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

/* The whole run once the start point is known on every process. */
static comet_status run_points(sweep_state *s, const comet_sweep_options *opt,
                               const comet_sweep_transport *tr, uint64_t start, sweep_rows *out,
                               comet_error *err)
{
    uint64_t first = start + ((uint64_t)tr->rank + s->stride - start % s->stride) % s->stride;
    s->next_claim = s->next_take = first;
    pthread_t ids[MAX_THREADS];
    int why;
    int started = start_workers(s, opt->threads, ids, &why);
    if (started == 0) { /* no worker would ever compute a row: the writer would wait forever */
        s->failed = true;
        comet_error_set(&s->err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                        "could not start a thread: %s", strerror(why));
    }
    if (tr->rank != 0) {
        comet_status sent = send_all(s, tr, first, err);
        stop_workers(s, ids, started, sent != COMET_OK);
        return sent;
    }
    bool *ended = calloc((size_t)tr->size, sizeof *ended);
    comet_status st = ended ? write_all(s, tr, start, out, ended, err)
                            : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                              "out of memory");
    stop_workers(s, ids, started, st != COMET_OK);
    if (ended)
        drain(tr, ended);
    free(ended);
    if (!st && s->failed) {
        *err = s->err;
        st = err->status ? err->status : COMET_EINTERNAL;
    }
    if (!st && stop_asked(s))
        st = comet_error_set(err, COMET_ECANCELED, opt->dir, 0, 0, NULL,
                             "interrupted; the results files hold the points finished so far");
    return st;
}

static void one_process_broadcast(void *ctx, uint64_t *v)
{
    (void)ctx, (void)v;
}

comet_status comet_sweep_run(const comet_study *study, const comet_sweep_options *opt,
                             int *dir_lock, comet_error *err)
{
    static const comet_sweep_transport one_process = {.rank = 0, .size = 1,
                                                      .broadcast = one_process_broadcast};
    const comet_sweep_transport *tr = opt->transport ? opt->transport : &one_process;
    *dir_lock = -1;
    if (!opt->format || !opt->format->csv_header || !opt->format->csv_row ||
        !opt->format->jsonl_row)
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "a sweep needs a row format (comet_sweep_options.format)");
    if (opt->threads < 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "a sweep needs at least one thread (comet_sweep_options.threads "
                               "is %d)",
                               opt->threads);
    sweep_rows out = {0};
    uint64_t start = 0, go = 1;
    comet_status st = COMET_OK;
    if (tr->rank == 0) {
        st = open_outputs(opt, study, &out, dir_lock, &start, err);
        go = st ? 0 : 1;
    }
    tr->broadcast(tr->ctx, &go);
    tr->broadcast(tr->ctx, &start);
    sweep_state *s = go ? calloc(1, sizeof *s) : NULL;
    if (go && !s)
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (s) {
        s->study = study;
        s->format = opt->format;
        s->hooks = &opt->hooks;
        s->bands = opt->bands;
        s->total = comet_study_points(study);
        s->stride = (uint64_t)tr->size;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->changed, NULL);
        st = run_points(s, opt, tr, start, &out, err);
        pthread_cond_destroy(&s->changed);
        pthread_mutex_destroy(&s->lock);
        free(s);
    }
    sweep_rows_close(&out);
    return st;
}
