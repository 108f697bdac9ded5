/* The sim folder's interface to the rest of the library (src/chakra/
 * simulates traces on the engine and exports the step graph); the other
 * headers of src/sim/ are private to it.
 *
 * The engine: a deterministic discrete-event engine for task graphs. Each
 * task runs on one resource. A stream (compute, a group's communication,
 * a link direction) runs its tasks one at a time in the order they were
 * added (program order), each once all its dependencies have finished, for
 * its duration. A shared resource (a network link under congestion) runs
 * every ready task at once: each first spends its duration (latency, not
 * shared), then its `work` (seconds at the full bandwidth), which the
 * tasks then in that part share equally. */
#ifndef COMET_SIM_H
#define COMET_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/comet.h"
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

/* Tasks run outside the engine, alongside its own events: a training
 * step's transfers, a Chakra replay's collectives, as flows on the fabric
 * (each ends when its last flow does). start: task is ready at now (a
 * stream's task once its stream reaches it, a shared resource's once its
 * dependencies are done); returns 1 when it runs outside, 0 to run here
 * as it would without the outside, -1 on a failure. next: the outside's next
 * event (INFINITY: none). advance: its clock to t (no event of its own
 * comes before). step: runs its next event, *done the tasks it finished;
 * release once they are handled. start, next and step return -1 on a
 * failure, which failure then names (into err, when not NULL: COMET_OK
 * if there was none). */
typedef struct sim_outside {
    void *ctx;
    int (*start)(void *ctx, int task, double now);
    int (*next)(void *ctx, double *at);
    void (*advance)(void *ctx, double t);
    int (*step)(void *ctx, const int **done, int *n_done);
    void (*release)(void *ctx);
    comet_status (*failure)(void *ctx, comet_error *err);
} sim_outside;

comet_status sim_run_outside(sim_graph *g, const sim_outside *out, double *makespan,
                             void (*describe)(const sim_task *t, void *ctx, char *out,
                                              size_t cap),
                             void *ctx, comet_error *err);

/* Runs g with some of its tasks as transfers on a fabric run
 * (fabric_outside.c): start(ctx, task, run, &id, err), called as each task
 * starts (the run's clock already at that time), returns 1 when it
 * started the task as a transfer on run (*id the run's; *tail, 0 unless
 * set, the seconds the task waits once the transfer is over), 0 when the task
 * is not one (it runs for its duration), -1 on a failure (its message in
 * err). A transfer's task ends when the run reports it finished. */
typedef int (*sim_fabric_start_fn)(void *ctx, int task, comet_fabric_run *run, int64_t *id,
                                   double *tail, comet_error *err);
comet_status sim_run_on_fabric(sim_graph *g, comet_fabric_run *run, sim_fabric_start_fn start,
                               void *ctx, double *makespan,
                               void (*describe)(const sim_task *t, void *ctx, char *out,
                                                size_t cap),
                               void *describe_ctx, comet_error *err);

/* ---- collectives priced as flows on the fabric ----------------------------- */

/* The fabric of a system's `npus` NPUs and the flows' time of every
 * distinct collective asked of it (group span, collective, bytes), each
 * simulated once with every group of its shape at once, and remembered:
 * the Chakra replay's --flows, for the groups the fabric cannot run as one
 * (docs/fabric.md). */
typedef struct sim_fabric_prices sim_fabric_prices;

comet_status sim_fabric_prices_new(const comet_system *sys, int64_t npus,
                                   sim_fabric_prices **out, comet_error *err);
void sim_fabric_prices_free(sim_fabric_prices *p);
/* The flows' time, or the closed form's when they fail (the failure kept
 * for sim_fabric_prices_status; later calls then take the closed form). */
double sim_fabric_price(sim_fabric_prices *p, const int64_t span[COMET_MAX_DIMS],
                        comet_collective c, double bytes);
/* The fabric the prices are simulated on, and *sys its system (sizes
 * resolved), both for as long as p lives. */
const comet_fabric *sim_fabric_prices_fabric(const sim_fabric_prices *p,
                                            const comet_system **sys);
/* COMET_OK, or the first failure with its message in err. */
comet_status sim_fabric_prices_status(const sim_fabric_prices *p, comet_error *err);
/* The distinct collectives simulated and their flows. */
void sim_fabric_prices_counts(const sim_fabric_prices *p, int *collectives, uint64_t *flows);

/* ---- a replay's collectives sharing the fabric's links ------------------------ */

/* Collectives of a task graph (a Chakra replay's) on groups of any shape,
 * each started as flows on one shared fabric run when the engine reaches
 * its task and ended when its last flow does, so collectives that overlap
 * in time meet on the links they share (fabric_replay.c). A group is a
 * block of span[d] NPUs, stride[d] apart, along each dimension d, tiling
 * the dimension (the fabric's comet_fabric_group): a shape; or one group
 * listed by its positions (sim_fabric_replay_listed). Collectives of
 * a shape the fabric cannot run as such a group are priced alone
 * (sim_fabric_price, every group of their span at once), as fixed-length
 * tasks. */
typedef struct sim_fabric_replay sim_fabric_replay;

/* The fabric of sys, all its dimensions' NPUs (their sizes fixed);
 * max_flows as comet_fabric_run_new takes it, active_chunks as
 * comet_fabric_schedule does (each collective's limit per dimension). */
comet_status sim_fabric_replay_new(const comet_system *sys, int64_t max_flows, int active_chunks,
                                   sim_fabric_replay **out, comet_error *err);
void sim_fabric_replay_free(sim_fabric_replay *fr);
/* The shape of groups of span[d] NPUs stride[d] apart (stride NULL: 1):
 * its index, -1 when the fabric cannot run such groups (blocks that do not
 * tile a dimension, members apart on a torus or mesh), -2 out of memory.
 * A shape's NPU -> index map (4 bytes an NPU) is kept once per shape. */
int sim_fabric_replay_shape(sim_fabric_replay *fr, const int64_t span[COMET_MAX_DIMS],
                            const int64_t stride[COMET_MAX_DIMS]);
/* The shape of one group listed by its positions along each dimension
 * (coord[d]: span[d] distinct positions in the order its ring visits them;
 * any, where span[d] is 1), copied: its index, -1 when the fabric cannot
 * run it (it spans a torus or mesh dimension), -2 out of memory. Each
 * such shape keeps its own NPU -> index map (4 bytes an NPU). */
int sim_fabric_replay_listed(sim_fabric_replay *fr, const int64_t span[COMET_MAX_DIMS],
                             const int64_t *const coord[COMET_MAX_DIMS]);
/* Task `task` (a later task than every earlier call's) is collective c
 * of `bytes` per NPU on the group of `shape` that holds NPU npu; its task
 * ends `tail` seconds after its last flow (what no link shares). */
comet_status sim_fabric_replay_add(sim_fabric_replay *fr, int task, int shape, int64_t npu,
                                   comet_collective c, double bytes, double tail,
                                   comet_error *err);
/* A collective that runs alone: its time as sim_fabric_price gives it
 * (on the same fabric), or its failure. */
comet_status sim_fabric_replay_alone(sim_fabric_replay *fr, const int64_t span[COMET_MAX_DIMS],
                                     comet_collective c, double bytes, double *time,
                                     comet_error *err);
/* Runs g with the added tasks outside, as flows sharing the fabric. */
comet_status sim_fabric_replay_run(sim_fabric_replay *fr, sim_graph *g, double *makespan,
                                   void (*describe)(const sim_task *t, void *ctx, char *out,
                                                    size_t cap),
                                   void *ctx, comet_error *err);
/* Collectives run as flows sharing links and priced alone, the distinct
 * ones of those simulated, and the flows of both. */
void sim_fabric_replay_counts(const sim_fabric_replay *fr, int64_t *shared, int64_t *alone,
                              int *alone_distinct, uint64_t *flows);

/* ---- the training step as a task graph ---------------------------------- */

/* The training step's task graph, for code that wants the graph itself
 * rather than its simulation (the Chakra exporter). Built as comet
 * simulate builds it, congestion-unaware, with one task per tensor-
 * parallel collective; each collective task records its type, group and
 * bytes so it can be written out as a collective of that size. */

/* Per stage, resources stage * per_stage + one of these. */
enum { STEP_R_COMPUTE, STEP_R_TP, STEP_R_PP_FWD, STEP_R_PP_BWD, STEP_R_DP, STEP_R_MEM,
       STEP_R_PER_STAGE };
/* Task kinds (sim_task.kind). */
enum { STEP_K_FWD, STEP_K_BWD, STEP_K_RECOMPUTE, STEP_K_TP, STEP_K_SEND_FWD, STEP_K_SEND_BWD,
       STEP_K_DP, STEP_K_OPTIMIZER, STEP_K_GATHER, STEP_K_LOAD_WEIGHTS, STEP_K_STORE_ACT,
       STEP_K_LOAD_ACT, STEP_K_OPT_STATE, STEP_K_STORE_WEIGHTS, STEP_K_STORE_GRAD,
       STEP_K_LOAD_GRAD, STEP_K_COUNT };

/* Which ranks a recorded task's traffic is on (step_coll.on). */
typedef enum step_on {
    STEP_ON_GROUP = 0,         /* its group's own ranks (s->place[group]) */
    STEP_ON_GRADS,             /* a dense gradient group: dp x cp ranks */
    STEP_ON_EXPERT_GRADS,      /* an expert gradient group: (dp/ep) x cp ranks
                                  (comet_strategy_grad_spans) */
    STEP_ON_RING_FWD,          /* ring CP's exposed part of a forward (or full
                                  recompute): cp-1 K/V blocks of `bytes` around the ring */
    STEP_ON_RING_BWD           /* ... of a backward: 2(cp-1) blocks in cp messages */
} step_on;

/* What a task moves: a collective's kind, group and bytes, or (coll
 * COMET_COLL_NONE) an expansion-tier transfer's bytes or a ring's K/V
 * block (`on` a ring); 0 bytes otherwise. */
typedef struct step_coll {
    comet_collective coll;     /* COMET_COLL_NONE: not a collective */
    comet_group group;
    double bytes;              /* per NPU */
    step_on on;
    double outer;              /* of bytes, what crosses the outer dimensions apart (DeepEP's
                                  split all-to-all; comet_collective_time_split), else 0 */
} step_coll;

/* The groups a recorded transfer runs on: TP, the dense gradient group
 * (dp x cp: DP collectives, and layer comms on the DP group, which exist
 * only for layer lists such as DLRM's embedding all-to-all, where cp = ep
 * = 1), the expert gradient group ((dp/ep) x cp), EP and CP. */
typedef enum step_group { STEP_G_TP, STEP_G_GRAD, STEP_G_EXPERT_GRAD, STEP_G_EP, STEP_G_CP,
                          STEP_G_COUNT } step_group;

step_group step_group_of(const step_coll *c);
/* The rank digits (COMET_DIGIT_*, bits) a group's members differ in. */
unsigned step_group_digits(step_group g);

typedef struct step_graph {
    comet_strategy s;          /* resolved */
    sim_graph g;               /* task.stage is the pipeline stage */
    int stages, per_stage;
    step_coll *coll;           /* per task */
    double p2p_bytes;          /* per pipeline send */
    double exp_bw, exp_latency;
    const char *const *kind_names;
} step_graph;

comet_status sim_step_graph_build(const comet_model *m, const comet_system *sys,
                                  const comet_strategy *s, step_graph *out, comet_error *err);
void sim_step_graph_free(step_graph *g);

/* ---- the training step on the fabric, every NPU ------------------------------ */

/* The fabric of a strategy's NPUs with its ranks placed as the Chakra
 * export numbers them, and the step graph run on it: every collective
 * and pipeline send a set of flows of every NPU of its stage, all sharing
 * the fabric's links (fabric_step.c, docs/fabric.md). */
typedef struct sim_fabric_step sim_fabric_step;

/* links (NULL: none) gets each run's links over the step (the hottest
 * watched over time); a later run replaces what an earlier one wrote.
 * themis: a collective over two or more dimensions has its chunks'
 * orders picked by Themis as it starts, from the work its stage's
 * collectives gave each dimension so far. max_flows: refuse a run (or a
 * kind's measurement) past it (0: the fabric's default). */
comet_status sim_fabric_step_new(const comet_system *sys, const comet_strategy *s,
                                 comet_sim_fabric_links *links, bool themis, int64_t max_flows,
                                 sim_fabric_step **out, comet_error *err);
/* Whether its fabric's NPUs see unlike networks (comet_fabric_uneven). */
bool sim_fabric_step_uneven(const sim_fabric_step *fs, char *why, size_t cap);
void sim_fabric_step_free(sim_fabric_step *fs);
/* Runs g (built with a step_coll per task, coll) to its end; p2p_bytes
 * each pipeline send moves per NPU. */
comet_status sim_fabric_step_run(sim_fabric_step *fs, sim_graph *g, const step_coll *coll,
                                 int per_stage, double p2p_bytes, double *makespan,
                                 void (*name_task)(const sim_task *t, void *ctx, char *out,
                                                  size_t cap),
                                 comet_error *err);
/* The NPUs simulated; the last run's transfers run as flows (sharing
 * links) and those that ran alone (on links no other stream's transfers
 * use: each kind simulated once, its time taken exactly), the kinds
 * simulated alone, and the flows. */
void sim_fabric_step_counts(const sim_fabric_step *fs, int64_t *npus, uint64_t *flows_transfers,
                            uint64_t *alone_transfers, int *kinds, uint64_t *flows);

#endif
