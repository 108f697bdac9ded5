/* Private to src/network: the flow-level engine. Flows move bytes along a
 * path of fabric links; the running flows share every link max-min fairly
 * (progressive filling), rates recomputed whenever the set of running
 * flows changes (event-driven, never time-stepped). A flow first waits
 * out its latency (the sum of its links'), then moves its bytes. When
 * flows end, the caller's callback runs for each (in flow id order) and
 * may start new ones: collectives are driven as state machines per NPU,
 * so memory grows with the flows in flight, not with all of them. */
#ifndef COMET_NETWORK_FLOWS_H
#define COMET_NETWORK_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include "comet/error.h"
#include "comet/fabric.h"

typedef struct fl_engine fl_engine;
/* A time-stepped engine that moves the flows in place of max-min sharing
 * where the fabric is fluid (a dimension runs congestion control); its
 * interface is flows_impl.h's, the fluid engine (cc_fluid.h) the one
 * member. */
typedef struct fl_stepper fl_stepper;

/* Called once per finished flow with its owner and tag; returns non-zero
 * to stop (an allocation failed). */
typedef int (*fl_done_fn)(void *ctx, fl_engine *e, uint32_t owner, uint64_t tag);

/* An engine on f; `fluid` runs its flows when f->fluid (else it is not
 * read). NULL when out of memory. */
fl_engine *fl_new(const comet_fabric *f, const fl_stepper *fluid);
void fl_free(fl_engine *e);

/* Starts a flow of `bytes` from NPU a to NPU b now (routed with hash);
 * a == b or bytes <= 0 end after the path's latency (0 for a == b). The
 * owner and tag come back to the done callback. Returns 0, or -1 when
 * out of memory or the route fails. */
int fl_send(fl_engine *e, int64_t a, int64_t b, double bytes, uint64_t hash, uint32_t owner,
            uint64_t tag);
/* The same for a message handed over at `since` (before now) that waited
 * for its connection, busy with the message before it until now: its
 * latency ran meanwhile, so it moves its bytes at since + latency, or now
 * if that has passed (a connection's messages one after another, in
 * order). */
int fl_send_since(fl_engine *e, int64_t a, int64_t b, double bytes, uint64_t hash,
                  uint32_t owner, uint64_t tag, double since);
/* Starts a flow on an explicit path (in-network reduction's switch hops). */
int fl_send_path(fl_engine *e, const int32_t *path, int len, double bytes, uint32_t owner,
                 uint64_t tag);

/* Runs until no flow is left. */
comet_status fl_run(fl_engine *e, fl_done_fn done, void *ctx, comet_error *err);

/* Driven from outside (a training step whose tasks start flows as they
 * become ready): whether flows are left; the time of the next event
 * (INFINITY when none); moving the clock to t, which must not pass that
 * next event (flows started then start at t); running the next event
 * (its ended flows' callbacks included). */
bool fl_busy(const fl_engine *e);
comet_status fl_next(fl_engine *e, double *at, comet_error *err);
void fl_advance(fl_engine *e, double t);
comet_status fl_step(fl_engine *e, fl_done_fn done, void *ctx, comet_error *err);

/* Records the utilization of these links over the run (a step each time
 * it changes) into series[0..n) (their link set, arrays grown as needed);
 * *cut is set when a series passes its cap. Returns 0 or -1 (memory). */
int fl_watch(fl_engine *e, int n, comet_link_series *series, bool *cut);

double fl_now(const fl_engine *e);
uint64_t fl_flows(const fl_engine *e);
uint64_t fl_events(const fl_engine *e);
uint64_t fl_rate_updates(const fl_engine *e);
/* Congestion control's figures so far (all zero without it). */
void fl_cc_stats(const fl_engine *e, comet_cc_stats *out);
/* Bytes carried per link so far (an array of the fabric's link count). */
const double *fl_link_bytes(const fl_engine *e);

#endif
