/* Internal: a deterministic discrete-event engine for task graphs. Each
 * task runs on one resource. A stream (compute, a group's communication,
 * a link direction) runs its tasks one at a time in the order they were
 * added (program order), each once all its dependencies have finished, for
 * its duration. A shared resource (a network link under congestion) runs
 * every ready task at once: each first spends its duration (latency, not
 * shared), then its `work` (seconds at the full bandwidth), which the
 * tasks then in that part share equally. */
#ifndef COMET_SIM_ENGINE_H
#define COMET_SIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/error.h"

typedef struct sim_task {
    double duration;          /* streams: all of it; shared resources: the unshared part */
    double work;              /* shared resources: seconds of bandwidth at full rate */
    double start, end;
    int resource;
    int deps_left;
    int first_succ, n_succ;   /* successor list (filled by sim_run) */
    uint8_t kind;             /* caller's label, for traces and errors */
    int16_t stage;
    int32_t micro;
    int32_t layer;
} sim_task;

/* One step of a wait cycle: the task, and whether it waits on the next
 * step because that task is ahead of it on their stream (program order)
 * rather than because it depends on it. */
typedef struct sim_wait {
    int task;
    bool behind;
} sim_wait;

typedef struct sim_graph {
    sim_task *tasks;
    int n, cap;
    int *edge_from, *edge_to;
    int n_edges, cap_edges;
    int *succ;                /* successors, grouped by task */
    int n_resources;
    unsigned char *shared;    /* per resource: processor-shared (1) or a stream (0) */
    bool drop_edges;          /* sim_run frees the edge list once successors are built */
    uint64_t events;
    int64_t count_only;       /* > 0: store nothing, only count tasks and edges, and fail
                               * (return -1) once the tasks pass this many */
    /* set by a sim_run that finds the graph stuck: tasks that wait on each
     * other in a cycle, each on the next and the last on the first */
    sim_wait *cycle;
    int n_cycle;
} sim_graph;

void sim_graph_init(sim_graph *g, int n_resources);
void sim_graph_free(sim_graph *g);
/* Room for this many tasks and edges in all, allocated once (no growth by
 * doubling). Returns -1 when out of memory. */
int sim_reserve(sim_graph *g, int tasks, int edges);
/* Returns the task id, or -1 when out of memory. */
int sim_add_task(sim_graph *g, int resource, double duration, uint8_t kind, int stage, int micro,
                 int layer);
/* Set a task's bandwidth part (shared resources); ignored when counting. */
void sim_set_work(sim_graph *g, int task, double work);
/* Make a resource shared (see above). Returns -1 when out of memory. */
int sim_set_shared(sim_graph *g, int resource);

/* `after` starts only once `before` has finished; -1 ids are ignored. */
int sim_add_dep(sim_graph *g, int before, int after);

/* Run to the end. Fills every task's start and end and *makespan. A graph
 * that cannot finish is an error: its tasks left wait on each other in a
 * cycle (through dependencies and streams' program order), which the
 * message names through describe() and g->cycle holds, whole, for a
 * caller that names it in its own terms. */
comet_status sim_run(sim_graph *g, double *makespan,
                     void (*describe)(const sim_task *t, void *ctx, char *out, size_t cap),
                     void *ctx, comet_error *err);

#endif
