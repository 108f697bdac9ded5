/* Tasks of the engine run as transfers on a fabric run: the glue between
 * the engine's sim_outside and comet_fabric_run's events, once for every
 * simulator whose tasks start flows (the Chakra replay's collectives, the
 * training step's transfers in fabric_step.c). The caller decides, as each task starts,
 * whether it is a transfer and starts it on the run; the glue remembers
 * which task each transfer id stands for, moves the run's clock with the
 * engine's, runs the run's events in turn with the engine's own and hands
 * it the tasks they finished, and keeps the first failure for the
 * engine's error. */
#include "sim.h"

#include <stdlib.h>

typedef struct glue {
    comet_fabric_run *run;
    sim_fabric_start_fn start;
    void *ctx;
    int *task_of;                /* transfer id -> task */
    int64_t cap_task_of;
    int *done;                   /* the tasks an event finished */
    int64_t cap_done;
    comet_status st;
    comet_error err;
} glue;

static int failed(glue *gl, comet_status st)
{
    if (st && !gl->st)
        gl->st = st;
    return st ? -1 : 0;
}

/* Room in *v for `need` ints (*cap of them now); -1 (the failure kept)
 * when out of memory. */
static int room(glue *gl, int **v, int64_t *cap, int64_t need)
{
    if (need <= *cap)
        return 0;
    int64_t more = 2 * need + 64;
    int *x = realloc(*v, sizeof *x * (size_t)more);
    if (!x)
        return failed(gl, comet_error_set(&gl->err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                          "out of memory"));
    *v = x;
    *cap = more;
    return 0;
}

static int on_start(void *ctx, int task, double now)
{
    glue *gl = ctx;
    comet_fabric_run_advance(gl->run, now);
    int64_t id;
    int is = gl->start(gl->ctx, task, gl->run, &id, &gl->err);
    if (is < 0)
        return failed(gl, gl->err.status ? gl->err.status : COMET_EINTERNAL);
    if (is == 0)
        return 0;
    if (room(gl, &gl->task_of, &gl->cap_task_of, id + 1))
        return -1;
    gl->task_of[id] = task;
    return 1;
}

static int on_next(void *ctx, double *at)
{
    glue *gl = ctx;
    return failed(gl, comet_fabric_run_next(gl->run, at, &gl->err));
}

static void on_advance(void *ctx, double t)
{
    comet_fabric_run_advance(((glue *)ctx)->run, t);
}

static int on_step(void *ctx, const int **done, int *n_done)
{
    glue *gl = ctx;
    const int64_t *ids;
    int n;
    if (failed(gl, comet_fabric_run_step(gl->run, &ids, &n, &gl->err)))
        return -1;
    if (room(gl, &gl->done, &gl->cap_done, n))
        return -1;
    for (int i = 0; i < n; i++)
        gl->done[i] = gl->task_of[ids[i]];
    *done = gl->done;
    *n_done = n;
    return 0;
}

static void on_release(void *ctx)
{
    comet_fabric_run_release(((glue *)ctx)->run);
}

static comet_status on_failure(void *ctx, comet_error *err)
{
    glue *gl = ctx;
    if (gl->st && err)
        *err = gl->err;
    return gl->st;
}

comet_status sim_run_on_fabric(sim_graph *g, comet_fabric_run *run, sim_fabric_start_fn start,
                               void *ctx, double *makespan,
                               void (*describe)(const sim_task *t, void *ctx, char *out,
                                                size_t cap),
                               void *describe_ctx, comet_error *err)
{
    glue gl = {.run = run, .start = start, .ctx = ctx};
    sim_outside out = {&gl, on_start, on_next, on_advance, on_step, on_release, on_failure};
    comet_status st = sim_run_outside(g, &out, makespan, describe, describe_ctx, err);
    free(gl.task_of);
    free(gl.done);
    return st;
}
