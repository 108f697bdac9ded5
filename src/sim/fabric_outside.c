/* Tasks of the engine run as transfers on a fabric run: the glue between
 * the engine's sim_outside and comet_fabric_run's events, once for every
 * simulator whose tasks start flows (the Chakra replay's collectives, the
 * training step's transfers in fabric_step.c). The caller decides, as each task starts,
 * whether it is a transfer and starts it on the run; the glue remembers
 * which task each transfer id stands for, moves the run's clock with the
 * engine's, runs the run's events in turn with the engine's own and hands
 * it the tasks they finished, and keeps the first failure for the
 * engine's error. A transfer may carry a tail (seconds its task waits
 * once its flows are over: the Chakra replay's endpoint delays and
 * reduction memory passes, which no link shares): the glue holds such a
 * task as a timer and reports it when the tail has passed. */
#include "sim.h"

#include <stdlib.h>

typedef struct glue {
    comet_fabric_run *run;
    sim_fabric_start_fn start;
    void *ctx;
    int *task_of;                /* transfer id -> task */
    double *tail_of;             /* transfer id -> its tail, seconds */
    int64_t cap_task_of, cap_tail_of;
    struct tail_timer { double at; int task; } *timers; /* tasks waiting out their tails */
    int64_t n_timers, cap_timers;
    bool timer_step;             /* the last step was a timer's, not the run's */
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

/* v (room for *cap items of `size` bytes) with room for `need`: v itself
 * or moved, NULL (the failure kept, v unchanged) when out of memory. */
static void *room_of(glue *gl, void *v, int64_t *cap, int64_t need, size_t size)
{
    if (need < 1)
        need = 1; /* never NULL for nothing: NULL means out of memory */
    if (need <= *cap)
        return v;
    int64_t more = 2 * need + 64;
    void *x = realloc(v, size * (size_t)more);
    if (!x) {
        failed(gl, comet_error_set(&gl->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
        return NULL;
    }
    *cap = more;
    return x;
}

/* The earliest timer's index, or -1. */
static int64_t first_timer(const glue *gl)
{
    int64_t best = -1;
    for (int64_t i = 0; i < gl->n_timers; i++)
        if (best < 0 || gl->timers[i].at < gl->timers[best].at)
            best = i;
    return best;
}

static int on_start(void *ctx, int task, double now)
{
    glue *gl = ctx;
    comet_fabric_run_advance(gl->run, now);
    int64_t id;
    double tail = 0.0;
    int is = gl->start(gl->ctx, task, gl->run, &id, &tail, &gl->err);
    if (is < 0)
        return failed(gl, gl->err.status ? gl->err.status : COMET_EINTERNAL);
    if (is == 0)
        return 0;
    int *tasks = room_of(gl, gl->task_of, &gl->cap_task_of, id + 1, sizeof *tasks);
    if (!tasks)
        return -1;
    gl->task_of = tasks;
    double *tails = room_of(gl, gl->tail_of, &gl->cap_tail_of, id + 1, sizeof *tails);
    if (!tails)
        return -1;
    gl->tail_of = tails;
    gl->task_of[id] = task;
    gl->tail_of[id] = tail;
    return 1;
}

static int on_next(void *ctx, double *at)
{
    glue *gl = ctx;
    if (failed(gl, comet_fabric_run_next(gl->run, at, &gl->err)))
        return -1;
    int64_t t = first_timer(gl);
    if (t >= 0 && gl->timers[t].at < *at)
        *at = gl->timers[t].at;
    return 0;
}

static void on_advance(void *ctx, double t)
{
    comet_fabric_run_advance(((glue *)ctx)->run, t);
}

static int on_step(void *ctx, const int **done, int *n_done)
{
    glue *gl = ctx;
    double fabric_at;
    if (failed(gl, comet_fabric_run_next(gl->run, &fabric_at, &gl->err)))
        return -1;
    int64_t t = first_timer(gl);
    gl->timer_step = t >= 0 && gl->timers[t].at < fabric_at;
    if (gl->timer_step) {
        /* the tails over at the earliest timer's time, before the run's next event */
        double at = gl->timers[t].at;
        comet_fabric_run_advance(gl->run, at);
        int *room = room_of(gl, gl->done, &gl->cap_done, gl->n_timers, sizeof *room);
        if (!room)
            return -1;
        gl->done = room;
        int n = 0;
        int64_t kept = 0;
        for (int64_t i = 0; i < gl->n_timers; i++)
            if (gl->timers[i].at <= at)
                gl->done[n++] = gl->timers[i].task;
            else
                gl->timers[kept++] = gl->timers[i];
        gl->n_timers = kept;
        *done = gl->done;
        *n_done = n;
        return 0;
    }
    const int64_t *ids;
    int n;
    if (failed(gl, comet_fabric_run_step(gl->run, &ids, &n, &gl->err)))
        return -1;
    int *room = room_of(gl, gl->done, &gl->cap_done, n, sizeof *room);
    if (!room)
        return -1;
    gl->done = room;
    struct tail_timer *timers =
        room_of(gl, gl->timers, &gl->cap_timers, gl->n_timers + n, sizeof *timers);
    if (!timers)
        return -1;
    gl->timers = timers;
    int reported = 0;
    double now = comet_fabric_run_now(gl->run);
    for (int i = 0; i < n; i++) {
        if (gl->tail_of[ids[i]] > 0.0)
            gl->timers[gl->n_timers++] =
                (struct tail_timer){now + gl->tail_of[ids[i]], gl->task_of[ids[i]]};
        else
            gl->done[reported++] = gl->task_of[ids[i]];
    }
    *done = gl->done;
    *n_done = reported;
    return 0;
}

static void on_release(void *ctx)
{
    glue *gl = ctx;
    if (!gl->timer_step)
        comet_fabric_run_release(gl->run);
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
    free(gl.tail_of);
    free(gl.timers);
    free(gl.done);
    return st;
}
