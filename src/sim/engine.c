/* Discrete-event execution of a task graph: a heap of task completions
 * ordered by (time, task id), so runs are deterministic; each resource
 * executes its own tasks strictly in the order they were added, as a GPU
 * stream runs kernels in program order; a task starts when its resource
 * reaches it and its last dependency has finished. When the heap empties
 * with tasks left, the graph is stuck (a cycle or a missing dependency)
 * and the first stuck task is named. */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sim_graph_init(sim_graph *g, int n_resources)
{
    memset(g, 0, sizeof *g);
    g->n_resources = n_resources;
}

void sim_graph_free(sim_graph *g)
{
    free(g->tasks);
    free(g->edge_from);
    free(g->edge_to);
    free(g->succ);
    memset(g, 0, sizeof *g);
}

int sim_add_task(sim_graph *g, int resource, double duration, uint8_t kind, int stage, int micro,
                 int layer)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 1024;
        sim_task *t = realloc(g->tasks, sizeof *t * (size_t)cap);
        if (!t)
            return -1;
        g->tasks = t;
        g->cap = cap;
    }
    sim_task *t = &g->tasks[g->n];
    memset(t, 0, sizeof *t);
    t->duration = duration > 0.0 ? duration : 0.0;
    t->resource = resource;
    t->kind = kind;
    t->stage = (int16_t)stage;
    t->micro = micro;
    t->layer = layer;
    t->start = t->end = -1.0;
    return g->n++;
}

int sim_add_dep(sim_graph *g, int before, int after)
{
    if (before < 0 || after < 0)
        return 0;
    if (g->n_edges == g->cap_edges) {
        int cap = g->cap_edges ? 2 * g->cap_edges : 4096;
        int *f = realloc(g->edge_from, sizeof *f * (size_t)cap);
        if (!f)
            return -1;
        g->edge_from = f;
        int *t = realloc(g->edge_to, sizeof *t * (size_t)cap);
        if (!t)
            return -1;
        g->edge_to = t;
        g->cap_edges = cap;
    }
    g->edge_from[g->n_edges] = before;
    g->edge_to[g->n_edges] = after;
    g->n_edges++;
    return 0;
}

/* ---- completion heap, by (time, id) ---------------------------------------- */

typedef struct event {
    double time;
    int task;
} event;

static int earlier(const event *a, const event *b)
{
    return a->time < b->time || (a->time == b->time && a->task < b->task);
}

static void push(event *h, int *n, event e)
{
    int i = (*n)++;
    h[i] = e;
    while (i > 0 && earlier(&h[i], &h[(i - 1) / 2])) {
        event t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static event pop(event *h, int *n)
{
    event top = h[0];
    h[0] = h[--*n];
    int i = 0;
    for (;;) {
        int m = i, l = 2 * i + 1, r = l + 1;
        if (l < *n && earlier(&h[l], &h[m]))
            m = l;
        if (r < *n && earlier(&h[r], &h[m]))
            m = r;
        if (m == i)
            break;
        event t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

/* ---- run ------------------------------------------------------------------ */

typedef struct stream {
    int *tasks;     /* this resource's tasks in program order */
    int n, next;
    int busy;       /* a task is running */
    double free_at;
} stream;

static comet_status build(sim_graph *g, stream *streams, comet_error *err)
{
    int *count = calloc((size_t)g->n + 1, sizeof *count);
    g->succ = malloc(sizeof *g->succ * (size_t)(g->n_edges > 0 ? g->n_edges : 1));
    int *per_res = calloc((size_t)g->n_resources, sizeof *per_res);
    if (!count || !g->succ || !per_res) {
        free(count);
        free(per_res);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    for (int e = 0; e < g->n_edges; e++) {
        count[g->edge_from[e]]++;
        g->tasks[g->edge_to[e]].deps_left++;
    }
    int at = 0;
    for (int i = 0; i < g->n; i++) {
        g->tasks[i].first_succ = at;
        g->tasks[i].n_succ = 0;
        at += count[i];
    }
    for (int e = 0; e < g->n_edges; e++) {
        sim_task *t = &g->tasks[g->edge_from[e]];
        g->succ[t->first_succ + t->n_succ++] = g->edge_to[e];
    }
    for (int i = 0; i < g->n; i++)
        per_res[g->tasks[i].resource]++;
    for (int r = 0; r < g->n_resources; r++) {
        streams[r].tasks = malloc(sizeof(int) * (size_t)(per_res[r] > 0 ? per_res[r] : 1));
        if (!streams[r].tasks) {
            free(count);
            free(per_res);
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        }
    }
    for (int i = 0; i < g->n; i++) {
        stream *s = &streams[g->tasks[i].resource];
        s->tasks[s->n++] = i;
    }
    free(count);
    free(per_res);
    return COMET_OK;
}

/* Start the resource's next task if it is free and the task is ready. */
static void try_start(sim_graph *g, stream *s, double now, event *heap, int *n_heap)
{
    if (s->busy || s->next >= s->n)
        return;
    sim_task *t = &g->tasks[s->tasks[s->next]];
    if (t->deps_left > 0)
        return;
    t->start = now > s->free_at ? now : s->free_at;
    t->end = t->start + t->duration;
    s->busy = 1;
    push(heap, n_heap, (event){t->end, s->tasks[s->next]});
}

comet_status sim_run(sim_graph *g, double *makespan,
                     void (*describe)(const sim_task *t, char *out, size_t cap),
                     comet_error *err)
{
    *makespan = 0.0;
    for (int e = 0; e < g->n_edges; e++)
        if (g->edge_from[e] >= g->n || g->edge_to[e] >= g->n)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "a dependency names task %d, which does not exist",
                                   g->edge_from[e] >= g->n ? g->edge_from[e] : g->edge_to[e]);
    stream *streams = calloc((size_t)(g->n_resources > 0 ? g->n_resources : 1), sizeof *streams);
    event *heap = malloc(sizeof *heap * (size_t)(g->n_resources > 0 ? g->n_resources : 1));
    comet_status st = streams && heap ? build(g, streams, err)
                                      : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                        "out of memory");
    int n_heap = 0, finished = 0;
    double now = 0.0;
    for (int r = 0; !st && r < g->n_resources; r++)
        try_start(g, &streams[r], now, heap, &n_heap);
    while (!st && n_heap > 0) {
        event e = pop(heap, &n_heap);
        now = e.time;
        g->events++;
        sim_task *t = &g->tasks[e.task];
        stream *s = &streams[t->resource];
        s->busy = 0;
        s->free_at = now;
        s->next++;
        finished++;
        for (int i = 0; i < t->n_succ; i++) {
            sim_task *u = &g->tasks[g->succ[t->first_succ + i]];
            u->deps_left--;
            if (u->deps_left == 0)
                try_start(g, &streams[u->resource], now, heap, &n_heap);
        }
        try_start(g, s, now, heap, &n_heap);
    }
    if (!st && finished < g->n) {
        /* stuck: name the first task a resource is waiting on */
        for (int r = 0; r < g->n_resources; r++) {
            stream *s = &streams[r];
            if (s->next < s->n) {
                char what[160] = "";
                if (describe)
                    describe(&g->tasks[s->tasks[s->next]], what, sizeof what);
                st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                     "simulation cannot progress: %d of %d tasks never ran; "
                                     "stuck at task %d (%s), which waits on %d unfinished "
                                     "dependencies (a cycle or a missing task)",
                                     g->n - finished, g->n, s->tasks[s->next], what,
                                     g->tasks[s->tasks[s->next]].deps_left);
                break;
            }
        }
    }
    *makespan = now;
    for (int r = 0; streams && r < g->n_resources; r++)
        free(streams[r].tasks);
    free(streams);
    free(heap);
    return st;
}
