/* Discrete-event execution of a task graph. Events sit in a heap ordered
 * by (time, id), so runs are deterministic. A stream resource executes its
 * tasks strictly in the order they were added, as a GPU stream runs
 * kernels in program order: a task starts when its stream reaches it and
 * its last dependency has finished. A shared resource (a link under
 * congestion) runs all its ready tasks together: each spends its unshared
 * duration, then shares the bandwidth equally with the others in their
 * bandwidth part (processor sharing); its next event is recomputed
 * whenever its set of tasks changes, older events being dropped by a
 * version number. When the heap empties with tasks left, the graph is
 * stuck: the tasks left wait on each other in a cycle, which is found
 * (linear in tasks and successors, and only then) and named. */
#include "sim.h"

#include <math.h>
#include <stdbool.h>
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
    free(g->shared);
    free(g->cycle);
    memset(g, 0, sizeof *g);
}

int sim_set_shared(sim_graph *g, int resource)
{
    if (g->count_only)
        return 0;
    if (!g->shared) {
        g->shared = calloc((size_t)g->n_resources, 1);
        if (!g->shared)
            return -1;
    }
    if (resource >= 0 && resource < g->n_resources)
        g->shared[resource] = 1;
    return 0;
}

/* Room for `cap` tasks (edges) in all; never shrinks. */
static int grow_tasks(sim_graph *g, int cap)
{
    if (cap <= g->cap)
        return 0;
    sim_task *t = realloc(g->tasks, sizeof *t * (size_t)cap);
    if (!t)
        return -1;
    g->tasks = t;
    g->cap = cap;
    return 0;
}

static int grow_edges(sim_graph *g, int cap)
{
    if (cap <= g->cap_edges)
        return 0;
    int *f = realloc(g->edge_from, sizeof *f * (size_t)cap);
    if (!f)
        return -1;
    g->edge_from = f;
    int *t = realloc(g->edge_to, sizeof *t * (size_t)cap);
    if (!t)
        return -1;
    g->edge_to = t;
    g->cap_edges = cap;
    return 0;
}

int sim_reserve(sim_graph *g, int tasks, int edges)
{
    return grow_tasks(g, tasks) || grow_edges(g, edges) ? -1 : 0;
}

int sim_add_task(sim_graph *g, int resource, double duration, uint8_t kind, int stage, int micro,
                 int layer)
{
    if (g->count_only)
        return g->n < g->count_only ? g->n++ : -1;
    if (g->n == g->cap && grow_tasks(g, g->cap ? 2 * g->cap : 1024))
        return -1;
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

void sim_set_work(sim_graph *g, int task, double work)
{
    if (!g->count_only && task >= 0 && task < g->n)
        g->tasks[task].work = work;
}

int sim_add_dep(sim_graph *g, int before, int after)
{
    if (before < 0 || after < 0)
        return 0;
    if (g->count_only) {
        g->n_edges++;
        return 0;
    }
    if (g->n_edges == g->cap_edges && grow_edges(g, g->cap_edges ? 2 * g->cap_edges : 4096))
        return -1;
    g->edge_from[g->n_edges] = before;
    g->edge_to[g->n_edges] = after;
    g->n_edges++;
    return 0;
}

/* ---- event heap, by (time, id) ---------------------------------------------- */

typedef struct event {
    double time;
    int id;               /* a task (stream event) or n + resource (shared event) */
    unsigned version;     /* shared events: valid only if still current */
} event;

typedef struct heap {
    event *e;
    int n, cap;
} heap;

static int earlier(const event *a, const event *b)
{
    return a->time < b->time || (a->time == b->time && a->id < b->id);
}

static int push(heap *h, event e)
{
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 256;
        event *p = realloc(h->e, sizeof *p * (size_t)cap);
        if (!p)
            return -1;
        h->e = p;
        h->cap = cap;
    }
    int i = h->n++;
    h->e[i] = e;
    while (i > 0 && earlier(&h->e[i], &h->e[(i - 1) / 2])) {
        event t = h->e[i];
        h->e[i] = h->e[(i - 1) / 2];
        h->e[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    return 0;
}

static event pop(heap *h)
{
    event top = h->e[0];
    h->e[0] = h->e[--h->n];
    int i = 0;
    for (;;) {
        int m = i, l = 2 * i + 1, r = l + 1;
        if (l < h->n && earlier(&h->e[l], &h->e[m]))
            m = l;
        if (r < h->n && earlier(&h->e[r], &h->e[m]))
            m = r;
        if (m == i)
            break;
        event t = h->e[i];
        h->e[i] = h->e[m];
        h->e[m] = t;
        i = m;
    }
    return top;
}

/* ---- resources ---------------------------------------------------------------- */

typedef struct resource {
    int *tasks;           /* streams: its tasks in program order */
    int n, next;
    int busy;
    /* shared resources */
    int *active;          /* running tasks */
    int n_active, cap_active;
    double *remaining;    /* bandwidth seconds left, per active task */
    double updated;       /* time `remaining` was last advanced to */
    unsigned version;
} resource;

typedef struct run {
    sim_graph *g;
    const sim_outside *out;  /* tasks run outside (flows on a fabric), or NULL */
    resource *res;
    heap h;
    double now;
    int finished;
    int oom;
} run;

static double shared_rate(const run *r, const resource *s)
{
    int in_bw = 0;
    for (int i = 0; i < s->n_active; i++)
        in_bw += r->g->tasks[s->active[i]].start + r->g->tasks[s->active[i]].duration <= r->now;
    return in_bw > 0 ? 1.0 / in_bw : 1.0;
}

/* Bring a shared resource's tasks to `now`. */
static void advance(run *r, resource *s)
{
    double rate = 1.0;
    int in_bw = 0;
    for (int i = 0; i < s->n_active; i++)
        in_bw += r->g->tasks[s->active[i]].start + r->g->tasks[s->active[i]].duration <= s->updated;
    rate = in_bw > 0 ? 1.0 / in_bw : 1.0;
    for (int i = 0; i < s->n_active; i++) {
        const sim_task *t = &r->g->tasks[s->active[i]];
        double from = t->start + t->duration > s->updated ? t->start + t->duration : s->updated;
        if (r->now > from)
            s->remaining[i] -= (r->now - from) * rate;
    }
    s->updated = r->now;
}

/* Schedule the shared resource's next event (a fixed part ending or a
 * task finishing). */
static void reschedule(run *r, int id)
{
    resource *s = &r->res[id];
    s->version++;
    double rate = shared_rate(r, s), next = INFINITY;
    for (int i = 0; i < s->n_active; i++) {
        const sim_task *t = &r->g->tasks[s->active[i]];
        double fixed_end = t->start + t->duration;
        double at = fixed_end > r->now ? fixed_end : r->now + s->remaining[i] / rate;
        next = at < next ? at : next;
    }
    if (next < INFINITY && push(&r->h, (event){next, r->g->n + id, s->version}))
        r->oom = 1;
}

static void complete(run *r, int task);

/* Offers a task that is starting to the outside: 1 when it runs there
 * (its end then comes from the outside's step), 0 when it runs here. */
static int offer_outside(run *r, int task)
{
    if (!r->out)
        return 0;
    int outside = r->out->start(r->out->ctx, task, r->now);
    if (outside < 0)
        r->oom = 1;
    return outside != 0;
}

static void start_task(run *r, int task)
{
    sim_task *t = &r->g->tasks[task];
    resource *s = &r->res[t->resource];
    if (r->g->shared && r->g->shared[t->resource]) {
        t->start = r->now;
        if (offer_outside(r, task))
            return;
        advance(r, s);
        if (s->n_active == s->cap_active) {
            int cap = s->cap_active ? 2 * s->cap_active : 8;
            int *a = realloc(s->active, sizeof *a * (size_t)cap);
            double *m = realloc(s->remaining, sizeof *m * (size_t)cap);
            if (!a || !m) {
                r->oom = 1;
                if (a)
                    s->active = a;
                if (m)
                    s->remaining = m;
                return;
            }
            s->active = a;
            s->remaining = m;
            s->cap_active = cap;
        }
        s->active[s->n_active] = task;
        s->remaining[s->n_active] = t->work;
        s->n_active++;
        reschedule(r, t->resource);
        return;
    }
    t->start = r->now;
    s->busy = 1;
    if (offer_outside(r, task))
        return;
    t->end = t->start + t->duration;
    if (push(&r->h, (event){t->end, task, 0}))
        r->oom = 1;
}

/* A stream starts its next task if it is free and the task is ready. */
static void try_stream(run *r, int id)
{
    resource *s = &r->res[id];
    if (s->busy || s->next >= s->n)
        return;
    int task = s->tasks[s->next];
    if (r->g->tasks[task].deps_left == 0)
        start_task(r, task);
}

static void complete(run *r, int task)
{
    sim_task *t = &r->g->tasks[task];
    t->end = r->now;
    r->finished++;
    for (int i = 0; i < t->n_succ; i++) {
        int u = r->g->succ[t->first_succ + i];
        sim_task *ut = &r->g->tasks[u];
        if (--ut->deps_left > 0)
            continue;
        if (r->g->shared && r->g->shared[ut->resource])
            start_task(r, u);
        else
            try_stream(r, ut->resource);
    }
}

/* A shared resource's event: finish what is done, reschedule. */
static void shared_event(run *r, int id)
{
    resource *s = &r->res[id];
    advance(r, s);
    double rate = shared_rate(r, s);
    int kept = 0, done[64], n_done = 0;
    for (int i = 0; i < s->n_active; i++) {
        const sim_task *t = &r->g->tasks[s->active[i]];
        bool fixed_over = t->start + t->duration <= r->now;
        /* done, or so nearly that finishing would not move the clock */
        bool drained = s->remaining[i] <= 1e-12 * (t->work + 1e-9) ||
                       r->now + s->remaining[i] / rate <= r->now;
        if (fixed_over && drained && n_done < 64) {
            done[n_done++] = s->active[i];
        } else {
            s->active[kept] = s->active[i];
            s->remaining[kept] = s->remaining[i];
            kept++;
        }
    }
    s->n_active = kept;
    reschedule(r, id);
    for (int i = 0; i < n_done; i++)
        complete(r, done[i]);
}

/* Successor lists grouped by task (counted in n_succ, then placed), and
 * each stream's tasks in program order. */
static comet_status build(sim_graph *g, resource *res, comet_error *err)
{
    g->succ = malloc(sizeof *g->succ * (size_t)(g->n_edges > 0 ? g->n_edges : 1));
    if (!g->succ)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int i = 0; i < g->n; i++)
        g->tasks[i].n_succ = 0;
    for (int e = 0; e < g->n_edges; e++) {
        g->tasks[g->edge_from[e]].n_succ++;
        g->tasks[g->edge_to[e]].deps_left++;
    }
    int at = 0;
    for (int i = 0; i < g->n; i++) {
        g->tasks[i].first_succ = at;
        at += g->tasks[i].n_succ;
        g->tasks[i].n_succ = 0;
    }
    for (int e = 0; e < g->n_edges; e++) {
        sim_task *t = &g->tasks[g->edge_from[e]];
        g->succ[t->first_succ + t->n_succ++] = g->edge_to[e];
    }
    if (g->drop_edges) {
        free(g->edge_from);
        free(g->edge_to);
        g->edge_from = g->edge_to = NULL;
        g->n_edges = g->cap_edges = 0;
    }
    int *per_res = calloc((size_t)g->n_resources, sizeof *per_res);
    if (!per_res)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = COMET_OK;
    for (int i = 0; i < g->n; i++)
        per_res[g->tasks[i].resource]++;
    for (int r = 0; !st && r < g->n_resources; r++) {
        res[r].tasks = malloc(sizeof(int) * (size_t)(per_res[r] > 0 ? per_res[r] : 1));
        if (!res[r].tasks)
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    for (int i = 0; !st && i < g->n; i++) {
        resource *s = &res[g->tasks[i].resource];
        s->tasks[s->n++] = i;
    }
    free(per_res);
    return st;
}

/* ---- a graph that cannot finish ------------------------------------------------ */

/* Once the event queue is empty with tasks that never started, each of
 * them waits on another that never started: an unmet dependency or, its
 * dependencies met, the task ahead of it on its stream. Following those
 * waits from any of them comes back around; that cycle goes to g->cycle.
 * Returns 0, -1 when out of memory, 1 when a task left has no such wait
 * (it would have started but never finished: not expected). */
static int find_cycle(sim_graph *g, const resource *res)
{
    int n = g->n;
    free(g->cycle);
    g->cycle = NULL;
    g->n_cycle = 0;
    int *waits_on = malloc(sizeof *waits_on * (size_t)(n > 0 ? n : 1));
    int *reached = calloc((size_t)(n > 0 ? n : 1), sizeof *reached); /* step of the walk, from 1 */
    unsigned char *behind = calloc((size_t)(n > 0 ? n : 1), 1);
    int rc = waits_on && reached && behind ? 1 : -1;
    for (int i = 0; rc > 0 && i < n; i++)
        waits_on[i] = -1;
    for (int t = 0; rc > 0 && t < n; t++) {
        const sim_task *k = &g->tasks[t];
        for (int i = 0; k->start < 0.0 && i < k->n_succ; i++)
            if (waits_on[g->succ[k->first_succ + i]] < 0)
                waits_on[g->succ[k->first_succ + i]] = t;
    }
    for (int u = 0; rc > 0 && u < n; u++) {
        const sim_task *k = &g->tasks[u];
        if (k->start >= 0.0 || waits_on[u] >= 0 || (g->shared && g->shared[k->resource]))
            continue;
        const resource *s = &res[k->resource];
        int head = s->next < s->n ? s->tasks[s->next] : u;
        if (head != u && g->tasks[head].start < 0.0) {
            waits_on[u] = head;
            behind[u] = 1;
        }
    }
    int v = 0;
    while (rc > 0 && v < n && g->tasks[v].start >= 0.0)
        v++;
    for (int step = 1; rc > 0 && v >= 0 && v < n && !reached[v]; v = waits_on[v])
        reached[v] = step++;
    if (rc > 0 && v >= 0 && v < n) {
        int length = 0;
        for (int u = v; length == 0 || u != v; u = waits_on[u])
            length++;
        g->cycle = malloc(sizeof *g->cycle * (size_t)length);
        rc = g->cycle ? 0 : -1;
        for (int k = 0, u = v; !rc && k < length; k++, u = waits_on[u])
            g->cycle[k] = (sim_wait){u, behind[u]};
        g->n_cycle = g->cycle ? length : 0;
    }
    free(waits_on);
    free(reached);
    free(behind);
    return rc;
}

/* The error for a stuck graph: its cycle, each task through describe()
 * (as many as the message holds). */
static comet_status stuck_error(sim_graph *g, const resource *res, int finished,
                                void (*describe)(const sim_task *t, void *ctx, char *out,
                                                 size_t cap),
                                void *ctx, comet_error *err)
{
    int found = find_cycle(g, res);
    if (found < 0)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (found > 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "simulation cannot progress: %d of %d tasks never ran",
                               g->n - finished, g->n);
    char chain[200] = "";
    size_t used = 0;
    for (int k = 0; k <= g->n_cycle; k++) {
        const sim_wait *w = &g->cycle[k % g->n_cycle];
        char what[160] = "", one[240];
        if (describe)
            describe(&g->tasks[w->task], ctx, what, sizeof what);
        bool behind = w->behind && k < g->n_cycle;
        const char *note = behind ? "behind the next on its stream" : "";
        int len = snprintf(one, sizeof one, "%stask %d%s%s%s%s%s", k ? " -> " : "", w->task,
                           what[0] || behind ? " (" : "", what, what[0] && behind ? ", " : "",
                           note, what[0] || behind ? ")" : "");
        if (used + (size_t)len + 5 >= sizeof chain) {
            memcpy(chain + used, " ...", 5);
            break;
        }
        memcpy(chain + used, one, (size_t)len + 1);
        used += (size_t)len;
    }
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                           "simulation cannot progress: %d of %d tasks never ran; %d of them "
                           "wait on each other, each on the next: %s",
                           g->n - finished, g->n, g->n_cycle, chain);
}

/* A stream task finished: its stream moves on. */
static void stream_done(run *r, int task)
{
    resource *s = &r->res[r->g->tasks[task].resource];
    s->busy = 0;
    s->next++;
    complete(r, task);
    try_stream(r, r->g->tasks[task].resource);
}

/* The outside's next event, if it comes before the heap's: run it and
 * finish the tasks it finished. Returns 1 when it ran one, 0 when the
 * heap's event is next (or nothing is left), -1 on a failure. */
static int outside_event(run *r)
{
    double at;
    if (!r->out || r->out->next(r->out->ctx, &at) != 0)
        return r->out ? -1 : 0;
    if (!isfinite(at) || (r->h.n > 0 && r->h.e[0].time <= at))
        return 0;
    const int *done;
    int n_done;
    if (r->out->step(r->out->ctx, &done, &n_done) != 0)
        return -1;
    if (at > r->now)
        r->now = at;
    r->g->events++;
    for (int i = 0; i < n_done && !r->oom; i++) {
        if (r->g->shared && r->g->shared[r->g->tasks[done[i]].resource])
            complete(r, done[i]); /* a shared resource's task: nothing queues behind it */
        else
            stream_done(r, done[i]);
    }
    r->out->release(r->out->ctx);
    return 1;
}

comet_status sim_run(sim_graph *g, double *makespan,
                     void (*describe)(const sim_task *t, void *ctx, char *out, size_t cap),
                     void *ctx, comet_error *err)
{
    return sim_run_outside(g, NULL, makespan, describe, ctx, err);
}

comet_status sim_run_outside(sim_graph *g, const sim_outside *out, double *makespan,
                             void (*describe)(const sim_task *t, void *ctx, char *out,
                                              size_t cap),
                             void *ctx, comet_error *err)
{
    *makespan = 0.0;
    for (int e = 0; e < g->n_edges; e++)
        if (g->edge_from[e] >= g->n || g->edge_to[e] >= g->n)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "a dependency names task %d, which does not exist",
                                   g->edge_from[e] >= g->n ? g->edge_from[e] : g->edge_to[e]);
    for (int i = 0; i < g->n; i++)
        if (g->tasks[i].resource < 0 || g->tasks[i].resource >= g->n_resources)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "task %d runs on resource %d, which does not exist", i,
                                   g->tasks[i].resource);
    run r = {.g = g, .out = out};
    r.res = calloc((size_t)(g->n_resources > 0 ? g->n_resources : 1), sizeof *r.res);
    comet_status st = r.res ? build(g, r.res, err)
                            : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                              "out of memory");
    for (int i = 0; !st && i < g->n; i++)
        if (g->tasks[i].deps_left == 0 && g->shared && g->shared[g->tasks[i].resource])
            start_task(&r, i);
    for (int id = 0; !st && id < g->n_resources; id++)
        if (!(g->shared && g->shared[id]))
            try_stream(&r, id);
    for (;;) {
        if (st || r.oom)
            break;
        int o = outside_event(&r);
        if (o < 0) {
            st = out->failure(out->ctx, err);
            if (!st)
                st = comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                     "the transfers outside the engine failed without a reason");
            break;
        }
        if (o > 0)
            continue;
        if (r.h.n == 0)
            break;
        event e = pop(&r.h);
        if (out)
            out->advance(out->ctx, e.time);
        if (e.id >= g->n) {
            int id = e.id - g->n;
            if (e.version != r.res[id].version)
                continue; /* the resource changed since */
            r.now = e.time;
            g->events++;
            shared_event(&r, id);
            continue;
        }
        r.now = e.time;
        g->events++;
        stream_done(&r, e.id);
    }
    if (!st && r.oom && out && out->failure(out->ctx, NULL) != COMET_OK)
        st = out->failure(out->ctx, err);
    if (!st && r.oom)
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (!st && r.finished < g->n)
        st = stuck_error(g, r.res, r.finished, describe, ctx, err);
    *makespan = r.now;
    for (int id = 0; r.res && id < g->n_resources; id++) {
        free(r.res[id].tasks);
        free(r.res[id].active);
        free(r.res[id].remaining);
    }
    free(r.res);
    free(r.h.e);
    return st;
}
