/* The network fabric: a system's network built as a graph of NPUs,
 * switches and directed links (each with a bandwidth and a latency), with
 * deterministic routes (shortest paths on rings, dimension order on torus
 * and mesh, up-down with ECMP hashing or spraying on a Clos), and a
 * flow-level simulation of collectives on it: every transfer of every
 * step of the collective's algorithm is a flow on its path, the flows
 * share each link max-min fairly, and rates are recomputed whenever a flow
 * starts or ends (event-driven). Every NPU is simulated, so concurrent
 * collectives, oversubscribed tiers and multi-hop traffic cost what they
 * cost. docs/fabric.md. */
#ifndef COMET_FABRIC_H
#define COMET_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/error.h"
#include "comet/model.h"
#include "comet/system.h"

typedef struct comet_fabric comet_fabric;

/* Links the fabric may hold (some 30 bytes each): a larger network is
 * refused with a message that says how large it would be. */
#define COMET_FABRIC_MAX_LINKS 100000000

/* Builds the fabric of sys with `npus` NPUs (0: the product of the
 * dimensions' sizes, which must then all be fixed; an auto outermost
 * dimension takes what npus leaves). Fails (COMET_EINPUT, the key named)
 * on a shape that cannot be built, COMET_ENOMEM when out of memory. */
comet_status comet_fabric_build(const comet_system *sys, int64_t npus, comet_fabric **out,
                                comet_error *err);
void comet_fabric_free(comet_fabric *f);

typedef struct comet_fabric_info {
    int64_t npus, switches, links;
    int64_t sizes[COMET_MAX_DIMS];   /* NPUs along each dimension, resolved */
    int n_dims;
} comet_fabric_info;

void comet_fabric_info_of(const comet_fabric *f, comet_fabric_info *out);

/* sys as the fabric built it: its dimensions' sizes the fabric's (an auto
 * outermost dimension resolved), so closed forms and plans see them. */
void comet_fabric_system(const comet_fabric *f, const comet_system *sys, comet_system *out);

/* Whether the fabric's NPUs see unlike networks, the first reason into
 * why (e.g. "ib is a fat tree oversubscribed 2:1"): hashed routes (ECMP),
 * an oversubscribed tier, leaves filled unevenly or splitting nodes, a
 * mesh's edges. Where they do not, one NPU stands for every NPU of its
 * role (comet simulate keeps one per pipeline stage); where they do, the
 * step runs on the fabric, every NPU (docs/fabric.md). */
bool comet_fabric_uneven(const comet_fabric *f, char *why, size_t cap);
/* The same of sys with npus NPUs (0: as comet_fabric_build takes it),
 * building its fabric only where a dimension's topology can be uneven (a
 * Clos, a torus or mesh): *uneven and why set; fails as the build does. */
comet_status comet_system_uneven(const comet_system *sys, int64_t npus, bool *uneven, char *why,
                                 size_t cap, comet_error *err);

/* The links a transfer from NPU a to NPU b takes, dimension by dimension
 * (innermost first), into path[0..cap): returns how many, or -1 for a bad
 * NPU id or a path longer than cap. hash picks among a Clos's equal paths
 * (ECMP); a spraying Clos ignores it. */
int comet_fabric_route(const comet_fabric *f, int64_t a, int64_t b, uint64_t hash,
                       int32_t *path, int cap);

/* The same path with its pick among a Clos's equal paths given, not
 * hashed: `pick` mod the leaf's uplinks chooses the spine (aggregation
 * switch), pick / uplinks mod the aggregation switch's uplinks the core.
 * What a fabric manager places on purpose takes it: an in-network
 * reduction's aggregation tree (docs/fabric.md, "In-network reduction"). */
int comet_fabric_route_pinned(const comet_fabric *f, int64_t a, int64_t b, uint64_t pick,
                              int32_t *path, int cap);

/* One link: its ends (node ids: NPUs first, then switches), bandwidth
 * (bytes/s), latency (s), dimension and tier (0: an NPU's own port or
 * neighbour link, 1 and 2: a Clos's upper tiers), and a name like
 * "ib: leaf 3 -> spine 1" into name (cap bytes). */
typedef struct comet_fabric_link {
    int64_t from, to;
    double bandwidth, latency;
    int dim, tier;
} comet_fabric_link;

void comet_fabric_link_of(const comet_fabric *f, int64_t id, comet_fabric_link *out);
void comet_fabric_link_name(const comet_fabric *f, int64_t id, char *name, size_t cap);

/* ---- collectives as flows ---------------------------------------------------- */

#define COMET_FABRIC_HOT_LINKS 8

typedef struct comet_flow_options {
    int64_t chunks;        /* the buffer cut into this many chunks (0: the system's) */
    int concurrent;        /* identical collectives issued at once on every group (>= 1) */
    /* chunk k visits the spanned dimensions (0: the innermost spanned) in
     * order[k*m .. k*m+m), m the dimensions spanned (a Themis schedule,
     * comet_fabric_schedule); NULL: innermost first. Needs chunks > 0. */
    const uint8_t *order;
    bool one_group;        /* only the first group runs (default: every group of the shape,
                              as every DP / TP group of a training step does) */
    int64_t max_flows;     /* refuse a simulation of more flows (0: 250 million, about
                              30 s on one core) */
    /* Links whose utilization over time to record (a trace's counter
     * tracks, a report's heatmap), at most COMET_FABRIC_HOT_LINKS; the
     * hot links of a first run, typically. */
    int n_watch;
    int64_t watch[COMET_FABRIC_HOT_LINKS];
} comet_flow_options;

void comet_flow_options_defaults(comet_flow_options *o);

typedef struct comet_fabric_hot_link {
    int64_t link;
    double bytes;          /* carried in all */
    double utilization;    /* bytes / (bandwidth * time) */
} comet_fabric_hot_link;

/* One watched link's utilization over time: steps (time, utilization)
 * each holding until the next one's time, the last until the end. */
typedef struct comet_link_series {
    int64_t link;
    size_t n;
    double *t, *utilization;
    /* under congestion control (docs/roce.md): the link's egress queue
     * (bytes) and whether PFC paused it, at each step; NULL otherwise */
    double *queue;
    bool *paused;
} comet_link_series;

/* What congestion control did over a run (docs/roce.md); all zero when
 * every dimension says none (the max-min engine ran). */
typedef struct comet_cc_stats {
    bool fluid;                 /* the fluid model ran */
    uint64_t steps;             /* its time steps */
    double peak_queue;          /* the largest egress queue seen, bytes */
    int64_t peak_queue_link;
    double mean_queue;          /* the most queued link's queue averaged over the run, bytes */
    double pause_time;          /* PFC pause, summed over links, seconds */
    double max_pause;           /* the most paused link's pause, seconds */
    int64_t max_pause_link;
    int64_t pauses;             /* PAUSEs sent (xoff crossings) */
    int64_t paused_links;       /* links paused at least once */
    int64_t flows_done;         /* flows completed, and their completion times */
    double fct_min, fct_mean, fct_max;
} comet_cc_stats;

typedef struct comet_flow_result {
    double time;                     /* until the last flow ends, seconds */
    int64_t groups;                  /* groups that ran it */
    uint64_t flows, events, rate_updates;
    double bytes_per_tier[3];        /* bytes carried per link tier, summed over links */
    int n_hot;
    comet_fabric_hot_link hot[COMET_FABRIC_HOT_LINKS]; /* most utilized links first */
    int n_series;          /* one per watched link (options.watch), in that order */
    comet_link_series series[COMET_FABRIC_HOT_LINKS];
    bool series_cut;       /* past 1,000,000 steps a link: the rest not recorded */
    comet_cc_stats cc;     /* congestion control's queues, pauses, completion times */
} comet_flow_result;

/* Frees a result's series (a result without any is fine). */
void comet_flow_result_free(comet_flow_result *r);

/* Collective c of `bytes` per NPU on every group that spans span[d] NPUs of
 * each dimension d (blocks of consecutive coordinates), hierarchically
 * across the spanned dimensions as comet_collective_time plans it, each
 * dimension's phase run with its algorithm as flows on the fabric. Fails
 * (COMET_EINPUT) for an algorithm the flow simulation does not run (the
 * double binary tree's all-reduce), a span that does not tile the fabric,
 * or more flows than o->max_flows. */
comet_status comet_fabric_collective(const comet_fabric *f, const comet_system *sys,
                                     const int64_t span[COMET_MAX_DIMS], comet_collective c,
                                     double bytes, const comet_flow_options *o,
                                     comet_flow_result *out, comet_error *err);

/* ---- many transfers on one fabric, started as a simulator goes --------------- */

/* A training step's network tasks (Chakra replay's too) started as their
 * turn comes, all sharing the fabric's links: each collective on its
 * groups, each pipeline send from every NPU of a stage to its peer. The
 * caller interleaves its own events with the fabric's (next, advance,
 * step): a transfer's id comes back from step once its last flow ends. */
typedef struct comet_fabric_run comet_fabric_run;

/* Which NPUs a collective runs on: groups of span[d] NPUs along each
 * dimension d, stride[d] positions apart (1 or 0: neighbours), tiling the
 * members: the NPUs members[0..n_members), local[npu] being an NPU's
 * index among them and -1 for the others; members NULL: every NPU.
 * coord[d], where given, lists the group's span[d] positions along d
 * instead (any distinct positions, in the order its algorithm's ring
 * visits them; stride[d] unused): the members are then one group, the
 * positions' product. Not on a torus or mesh dimension. The arrays must
 * outlive the collective's run. */
typedef struct comet_fabric_group {
    int64_t span[COMET_MAX_DIMS], stride[COMET_MAX_DIMS];
    const int64_t *members;
    const int32_t *local;
    int64_t n_members;
    const int64_t *coord[COMET_MAX_DIMS];
} comet_fabric_group;

/* How a collective's buffer is cut and scheduled. Chunks that visit the
 * spanned dimensions in one order pipeline behind each other, phase by
 * phase; chunks of different orders (Themis: each chunk's largest phase
 * where there is room) run side by side, sharing the links they meet. */
typedef struct comet_fabric_schedule {
    int64_t chunks;        /* 0: the system's split (comet_collective_chunks_for) */
    int concurrent;        /* identical copies issued at once, 1 to 16 (0: 1) */
    const uint8_t *order;  /* chunks x m, as comet_flow_options.order; NULL: innermost first
                              (needs chunks > 0) */
    /* 1 to 64: chunks each dimension works on at once per NPU (and part or
     * copy), the rest waiting in the order they came, as
     * comet_sim_options.active_chunks; 0: no limit, each phase taking one
     * chunk at a time, in order */
    int active_chunks;
} comet_fabric_schedule;

/* max_flows: refuse to start more (0: 250 million). */
comet_status comet_fabric_run_new(const comet_fabric *f, const comet_system *sys,
                                  int64_t max_flows, comet_fabric_run **out, comet_error *err);
void comet_fabric_run_free(comet_fabric_run *r);
/* Starts collective c of `bytes` per NPU now, cut and ordered as sch
 * says (NULL: the system's split, innermost first, one copy); *id names
 * it. Fails as comet_fabric_collective does. */
comet_status comet_fabric_run_collective(comet_fabric_run *r, const comet_fabric_group *g,
                                         comet_collective c, double bytes,
                                         const comet_fabric_schedule *sch, int64_t *id,
                                         comet_error *err);
/* Starts n sends of `bytes`, from[i] to to[i], now; one id for them all. */
comet_status comet_fabric_run_sends(comet_fabric_run *r, const int64_t *from, const int64_t *to,
                                    int64_t n, double bytes, int64_t *id, comet_error *err);
/* The time of the fabric's next event (INFINITY when nothing moves). */
comet_status comet_fabric_run_next(comet_fabric_run *r, double *at, comet_error *err);
/* Moves the clock to t, which must not pass the next event. */
void comet_fabric_run_advance(comet_fabric_run *r, double t);
double comet_fabric_run_now(const comet_fabric_run *r);
/* Runs the next event; *done[0..*n_done) are the transfers it finished
 * (or that finished as they started), valid until release, which the
 * caller calls once it has handled them (their ids are then reused). */
comet_status comet_fabric_run_step(comet_fabric_run *r, const int64_t **done, int *n_done,
                                   comet_error *err);
void comet_fabric_run_release(comet_fabric_run *r);
/* Runs events until a transfer finishes (a run of one: until it is over),
 * then releases it; an internal error when the flows run out first. */
comet_status comet_fabric_run_finish(comet_fabric_run *r, comet_error *err);
void comet_fabric_run_stats(const comet_fabric_run *r, uint64_t *flows, uint64_t *events,
                            uint64_t *rate_updates);
/* Records the utilization of links series[0..n).link from now on, a step
 * each time it changes (at most COMET_FABRIC_HOT_LINKS; *cut set past a
 * million steps a link); series must outlive the run's events. */
comet_status comet_fabric_run_watch(comet_fabric_run *r, int n, comet_link_series *series,
                                    bool *cut, comet_error *err);
/* Bytes carried so far per link (an array of the fabric's link count). */
const double *comet_fabric_run_link_bytes(const comet_fabric_run *r);
/* Congestion control's figures so far (all zero without it). */
void comet_fabric_run_cc(const comet_fabric_run *r, comet_cc_stats *out);
/* The bytes per tier and the most utilized links over `time` so far, into
 * out's bytes_per_tier, n_hot and hot[], and congestion control's
 * figures so far into out->cc. */
void comet_fabric_run_links(const comet_fabric_run *r, double time, comet_flow_result *out);

#endif
