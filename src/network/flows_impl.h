/* Private to flows.c and the engines that step its flows in time (the
 * fluid congestion-control engine, cc_fluid.c): the flow engine's state,
 * so a stepper can move the same flows, queues of waiting flows and
 * callbacks that the max-min engine does (docs/roce.md), and the
 * interface a stepper implements (fl_stepper), which the flow engine
 * calls without knowing the member. */
#ifndef COMET_NETWORK_FLOWS_IMPL_H
#define COMET_NETWORK_FLOWS_IMPL_H

#include "comet/congestion.h"
#include "fabric.h"
#include "flows.h"
#include "time_queue.h"

#define INLINE_PATH 6

typedef struct fl_flow {
    double rem, rate, start_at;
    double t0;                      /* when rem was last brought up to date */
    uint32_t version;               /* of its projected end in the end heap */
    uint64_t tag;
    uint32_t owner;                 /* the caller's: whose flow it is (a collective's run) */
    uint64_t key;                   /* a hash of the path: flows on one path share a rate */
    int32_t *heap_path;             /* the path when longer than INLINE_PATH */
    int len;
    int slot;                       /* in the active list, -1 waiting */
    int32_t inline_path[INLINE_PATH];
} fl_flow;

/* Where a flow's links are (never a stored pointer into the flow itself:
 * the array of flows moves when it grows). */
static inline int32_t *path_of(fl_flow *w)
{
    return w->len > INLINE_PATH ? w->heap_path : w->inline_path;
}



/* An NPU's last route, to `to` (-1: none yet) with `hash`: its links,
 * summed latency and path key, as send_path works them out. */
typedef struct fl_route {
    int64_t to;
    uint64_t hash, key;
    double lat;
    int32_t len;
    int32_t path[INLINE_PATH];
} fl_route;

typedef struct ended_flow {
    int64_t id;
    uint64_t tag;
    uint32_t owner;
} ended_flow;

/* The rates of one running set, by path key (open addressing). */
#define CACHE_SETS 8
typedef struct rate_cache {
    uint64_t set_hash;
    int64_t n;                      /* flows in the set; 0: empty */
    uint64_t *keys;
    double *rates;
    int64_t cap;
} rate_cache;


struct fl_engine {
    const comet_fabric *f;
    double now;
    fl_flow *flows;
    int64_t n_flows, cap_flows;
    int64_t *free_ids;
    int64_t n_free;
    int64_t *active;                /* ids of running flows */
    int64_t n_active;
    time_queue wait;                /* flows in their latency */
    time_queue ends;                /* running flows' projected ends */
    bool dirty;
    /* per link: scratch of the rate computation, bytes carried; and, kept
     * between computations, the running flows, their summed rate and an
     * upper bound of their largest (the incremental updates') */
    double *left, *bytes;
    double *load, *max_rate;
    int32_t *n_on;
    int32_t *count, *first;
    int32_t *used;
    int64_t *by_link;
    kh_item *heap;                  /* links by fair share */
    int64_t n_heap, cap_heap, cap_by_link;
    uint64_t started, events, updates;
    /* The rates of the last recomputation by path, and the running set it
     * was for (a sum of mixed path keys, and a count): a running set of
     * the same paths (a symmetric collective's next step) reuses them. */
    uint64_t set_hash;
    double *old_rate;               /* reallocate's scratch: the rates before */
    int64_t cap_old;
    /* watched links: their utilization appended whenever it changes */
    int n_watch;
    comet_link_series *watch;
    size_t watch_cap[COMET_FABRIC_HOT_LINKS];
    bool *watch_cut;
    rate_cache cache[CACHE_SETS];
    int cache_next;
    ended_flow *ended;              /* one event's ended flows, for the callbacks */
    int64_t cap_ended;
    fl_route *last_route;           /* per NPU (allocated at its first send) */
    int32_t route[FAB_MAX_PATH];
    const fl_stepper *fluid;        /* the stepper, when a dimension runs congestion control */
    void *fluid_state;              /* its state */
};

/* flows.c's own steps that a stepper shares: a flow taken off the
 * running set and its slot freed; the flows whose latency is over by
 * `horizon` started (ended at once when they carry nothing); the
 * callbacks of the n ended flows in e->ended. */
void fl_finish(fl_engine *e, int64_t id);
comet_status fl_start_due(fl_engine *e, double horizon, int64_t *n_ended, comet_error *err);
comet_status fl_callbacks(fl_engine *e, fl_done_fn done, void *ctx, int64_t n_ended,
                          comet_error *err);
/* A stepper (cc_fluid.c): its state built with the engine when the
 * fabric is fluid, and freed (NULL too); the next step's time (a step, a
 * flow's projected end or a waiting flow's start, whichever is first);
 * the fluid moved to t without ending flows (a caller's event between
 * steps); the step to `to` with the flows it completed appended to
 * e->ended; a flow entering the running set; a link's egress queue and
 * pause state; its figures so far. */
struct fl_stepper {
    void *(*create)(const comet_fabric *f);
    void (*destroy)(void *state);
    comet_status (*next)(fl_engine *e, double *at, comet_error *err);
    void (*advance)(fl_engine *e, double t);
    comet_status (*step)(fl_engine *e, double to, int64_t *n_ended, comet_error *err);
    int (*start)(fl_engine *e, int64_t id);
    double (*queue)(const void *state, int64_t link);
    bool (*paused)(const void *state, int64_t link);
    void (*stats)(const void *state, double now, comet_cc_stats *out);
};

/* Room in e->ended for every flow running or waiting. */
int fl_reserve_ended(fl_engine *e);
/* The watched links' series from now on (fl_watch). */
int fl_record(fl_engine *e);

#endif
