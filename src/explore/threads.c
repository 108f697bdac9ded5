/* Runs one strategy search on several threads: the threads take the
 * units of this process's shard one at a time from a shared counter, so a
 * thread that drew small units takes more of them, and the per-thread top
 * lists are merged. Because every point keeps its global index, which
 * thread evaluated it does not matter: the merged ranking is the one a
 * single thread would produce, byte for byte. Progress, when asked for,
 * is counted across the threads (claim.h) and reported by one at a time. */
#include "comet/search.h"

#include "claim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 256

typedef struct search_job {
    comet_search_request req;
    comet_ranked *top;
    int n_top;
    comet_search_stats stats;
    comet_error err;
    comet_status status;
} search_job;

static void *search_thread(void *arg)
{
    search_job *job = arg;
    job->status = comet_search(&job->req, job->top, &job->n_top, &job->stats, &job->err);
    return NULL;
}

comet_status comet_search_threads(const comet_search_request *req, int threads,
                                  comet_ranked *top, int *n_top, comet_search_stats *stats,
                                  comet_error *err)
{
    if (threads <= 1)
        return comet_search(req, top, n_top, stats, err);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    search_job *jobs = calloc((size_t)threads, sizeof *jobs);
    comet_ranked *tops = calloc((size_t)threads * (size_t)(req->top_k > 0 ? req->top_k : 1),
                                sizeof *tops);
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    if (!jobs || !tops || !ids) {
        free(jobs);
        free(tops);
        free(ids);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    struct comet_unit_claim claim; /* the units, and the progress when asked for */
    search_shared_init(&claim, req->progress ? search_points(req) : 0);
    int started = 0;
    for (int t = 0; t < threads; t++) {
        jobs[t].req = *req;
        jobs[t].req.claim = &claim;
        jobs[t].top = tops + (size_t)t * (size_t)(req->top_k > 0 ? req->top_k : 1);
        if (pthread_create(&ids[t], NULL, search_thread, &jobs[t]) != 0)
            break;
        started++;
    }
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);
    bool all_ran = started == threads;
    for (int t = 0; t < started; t++)
        all_ran = all_ran && jobs[t].status == COMET_OK;
    if (req->progress && all_ran)
        search_progress_end(req, &claim);
    search_shared_free(&claim);
    comet_status status = COMET_OK;
    if (started < threads)
        status = comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                 "could not start %d threads", threads);
    *n_top = 0;
    memset(stats, 0, sizeof *stats);
    for (int t = 0; t < started && !status; t++) {
        if (jobs[t].status) {
            *err = jobs[t].err;
            status = jobs[t].status;
            break;
        }
        comet_search_merge(top, n_top, req->top_k, jobs[t].top, jobs[t].n_top);
        comet_search_stats_add(stats, &jobs[t].stats);
    }
    free(jobs);
    free(tops);
    free(ids);
    return status;
}
