/* Event-driven simulation. This first part simulates one collective on a
 * multi-dimensional network, chunk by chunk and dimension by dimension,
 * with a choice of fidelity (congestion-unaware or shared links) and of
 * chunk scheduling across dimensions (fixed order, or Themis-style
 * least-loaded-first). Every NPU of a collective does the same work, so
 * one representative NPU is simulated: the cost does not grow with the
 * number of NPUs. */
#ifndef COMET_SIMULATE_H
#define COMET_SIMULATE_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/buf.h"
#include "comet/error.h"
#include "comet/fabric.h"
#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

typedef enum comet_sim_fidelity {
    COMET_SIM_UNAWARE = 0,     /* each transfer costs latency + size/bandwidth, alone */
    COMET_SIM_CONGESTION       /* transfers on one dimension share its bandwidth */
} comet_sim_fidelity;

typedef enum comet_sim_scheduler {
    COMET_SCHED_BASELINE = 0,  /* every chunk visits the dimensions in order */
    COMET_SCHED_THEMIS         /* each chunk's largest phase goes to the least-loaded dimension */
} comet_sim_scheduler;

typedef struct comet_sim_options {
    comet_sim_fidelity fidelity;
    comet_sim_scheduler scheduler;
    int64_t splits;            /* chunks of the buffer; 0 = system collective_chunks */
    int active_chunks;         /* chunks a dimension works on at once (>= 1) */
    double endpoint_delay;     /* seconds per message sent (0 = none) */
    double local_mem_bw;       /* bytes/s for the reductions' memory passes (0 = free) */
    bool astra_rounding;       /* whole nanoseconds per memory pass, as ASTRA-sim */
} comet_sim_options;

void comet_sim_options_defaults(comet_sim_options *o);

typedef struct comet_sim_collective_result {
    double time;                          /* seconds until the last chunk is done */
    double busy[COMET_MAX_DIMS];          /* seconds each dimension was working */
    double utilization[COMET_MAX_DIMS];   /* busy / time */
    uint64_t events;
    uint64_t chunks;
} comet_sim_collective_result;

/* Simulate collective c of `bytes` per NPU over a group spanning span[d]
 * NPUs of each dimension d of sys. */
comet_status comet_sim_collective(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                  comet_collective c, double bytes, const comet_sim_options *o,
                                  comet_sim_collective_result *out, comet_error *err);

/* Themis's schedule for `chunks` chunks of collective c of `bytes` per
 * NPU on groups spanning span: each chunk's order of the m spanned
 * dimensions (0: the innermost spanned) into order[k*m .. k*m+m), as
 * comet_fabric_schedule takes it (each chunk's largest phase where the
 * work assigned so far is least; an all-to-all keeps innermost first).
 * order holds chunks x COMET_MAX_DIMS. Returns m. */
int comet_sim_themis_orders(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                            comet_collective c, double bytes, int64_t chunks, uint8_t *order);

/* ---- one training step ------------------------------------------------------ */

#define COMET_SIM_MAX_STAGES 1024
/* Tasks one simulated step graph may hold by default (about 85 bytes each
 * with its edges and events: some 700 MB). */
#define COMET_SIM_DEFAULT_MAX_TASKS 8000000
#define COMET_SIM_MAX_TASKS_LIMIT 200000000
#define COMET_SIM_MAX_TASKS_TEXT "200000000" /* the same, for messages */

/* The step as busy intervals per stage and stream, for a Gantt chart:
 * consecutive pieces of the same kind and microbatch are merged. */
typedef struct comet_sim_span {
    int stage;
    int stream;             /* index into stream_names */
    int kind;               /* index into kind_names */
    int micro;              /* microbatch, -1 when none */
    double start, end;      /* seconds */
} comet_sim_span;

typedef struct comet_sim_timeline {
    comet_sim_span *spans;  /* sorted by stage, stream, start; free with comet_sim_timeline_free */
    size_t n;
    int stages;
    int n_streams;
    const char *const *stream_names;
    int n_kinds;
    const char *const *kind_names;
} comet_sim_timeline;

void comet_sim_timeline_free(comet_sim_timeline *t);

/* The fabric's links over a step run on it (comet_sim_step_options.links,
 * with .fabric): what every link carried over the simulated microbatches,
 * the transfers that ran as flows and those that ran alone (each kind
 * simulated once, its bytes per link known) alike; the most utilized
 * links; and their utilization over time. A link's bytes do not depend on
 * timing (each transfer's routes are fixed), so the hottest links are
 * known before the run (the kinds' measurements times how often each
 * runs) and watched in that same run. */
#define COMET_SIM_LINK_NAME_LEN 96

typedef struct comet_sim_link {
    int64_t link;                 /* its id on the fabric */
    char name[COMET_SIM_LINK_NAME_LEN]; /* "ib: leaf 3 -> spine 1" */
    int tier;                     /* 0: an NPU's port or neighbour link; 1, 2: a Clos's upper tiers */
    double bandwidth;             /* bytes/s */
    double bytes;                 /* carried in all, flows and alone */
    double alone_bytes;           /* of which by transfers that ran alone (no flows) */
    double utilization;           /* bytes / (bandwidth x time) */
} comet_sim_link;

typedef struct comet_sim_fabric_links {
    double time;                  /* the simulated microbatches' span, seconds */
    double bytes_per_tier[3];     /* carried per link tier, summed over links (flows and alone) */
    double alone_per_tier[3];     /* of which by transfers that ran alone */
    int n_hot;
    comet_sim_link hot[COMET_FABRIC_HOT_LINKS]; /* most utilized first */
    /* hot[i]'s utilization over time (series[i].link is hot[i].link),
     * from the flows: a transfer that ran alone moves no flow, so it adds
     * nothing here (its bytes are in hot[i].alone_bytes) */
    int n_series;
    comet_link_series series[COMET_FABRIC_HOT_LINKS];
    bool series_cut;              /* past 1,000,000 steps a link: the rest not recorded */
    comet_cc_stats cc;            /* congestion control over the flows (docs/roce.md) */
} comet_sim_fabric_links;

/* Frees the series (a struct never filled, zeroed, is fine). */
void comet_sim_fabric_links_free(comet_sim_fabric_links *l);

/* Chrome trace-event counter tracks, one per link: series[i]'s utilization
 * in percent each time it changes, named names[i], in a process `pid`
 * named `process` (its name first). Events are separated by ",\n", the
 * first with nothing before it: the caller writes a separator after an
 * earlier event, and closes the array after the last. */
void comet_sim_trace_link_counters(comet_buf *b, int pid, const char *process, int n,
                                   const comet_link_series *series, const char *const *names);

/* Whether a step's transfers run on the fabric, every NPU (below). */
typedef enum comet_sim_fabric_mode {
    COMET_SIM_FABRIC_OFF = 0,   /* one NPU per pipeline stage, closed forms */
    COMET_SIM_FABRIC_ON = 1,    /* every NPU's transfers as flows on the fabric */
    /* on the fabric where its NPUs see unlike networks (comet_fabric_uneven)
     * and it takes at most COMET_SIM_AUTO_MAX_FLOWS flows; else (or with
     * congestion, or a strategy the fabric cannot place) off. The result's
     * fabric_why says which and why. */
    COMET_SIM_FABRIC_AUTO = 2
} comet_sim_fabric_mode;

/* The flows an automatic run on the fabric may take (some 3 s on one
 * core) before the step falls back to one NPU per stage. */
#define COMET_SIM_AUTO_MAX_FLOWS 25000000

typedef struct comet_sim_step_options {
    comet_buf *trace;      /* non-NULL: a Chrome trace-event JSON of the step is appended */
    comet_sim_timeline *timeline; /* non-NULL: filled with the step's busy intervals */
    comet_sim_fidelity fidelity;  /* congestion: collectives and sends share each link */
    /* The step's transfers as flows on the fabric (include/comet/fabric.h),
     * every NPU: each collective on every group of its stage's NPUs, each
     * pipeline send from every NPU of the stage to its peer, all sharing
     * the links (the stages' compute still one task per stage: its NPUs
     * compute alike). ON is refused with COMET_SIM_CONGESTION; AUTO runs
     * on it only where the fabric is uneven. */
    comet_sim_fabric_mode fabric;
    /* With fabric, non-NULL: filled with the fabric's links over the step
     * (its previous content is not freed: free it first); free with
     * comet_sim_fabric_links_free. The trace, when asked, gets a counter
     * track per hot link. */
    comet_sim_fabric_links *links;
    /* Under congestion, the order of dimensions for each chunk of each
     * collective: baseline (innermost first) or Themis (the stage's least
     * loaded dimensions first, work assigned so far; Rashidi et al. 2022) */
    comet_sim_scheduler scheduler;
    /* flows the fabric may take (0: 250 million when ON, COMET_SIM_AUTO_MAX_FLOWS
     * when AUTO, which then falls back to one NPU per stage past it) */
    int64_t max_flows;
    int64_t max_tasks;     /* tasks a simulated graph may hold; 0 = COMET_SIM_DEFAULT_MAX_TASKS.
                            * A step past it is simulated through its repeating steady
                            * state and extrapolated, or refused when that cannot fit */
} comet_sim_step_options;

typedef struct comet_sim_step_result {
    double step_time;
    int stages;
    uint64_t tasks;
    uint64_t events;
    /* seconds each stream of each pipeline stage was busy, and the compute
     * stream's time by kind of work */
    double forward[COMET_SIM_MAX_STAGES];
    double backward[COMET_SIM_MAX_STAGES];
    double recompute[COMET_SIM_MAX_STAGES];
    double optimizer[COMET_SIM_MAX_STAGES];
    double compute_busy[COMET_SIM_MAX_STAGES];
    double compute_stream_busy[COMET_SIM_MAX_STAGES]; /* compute + blocking collectives */
    double tp_busy[COMET_SIM_MAX_STAGES];
    double pp_busy[COMET_SIM_MAX_STAGES];
    double dp_busy[COMET_SIM_MAX_STAGES];
    double mem_busy[COMET_SIM_MAX_STAGES];            /* expansion-tier transfers */
    /* microbatches of the step, and those simulated event by event: all of
     * them, or fewer when steady-state rounds of `round` microbatches (1,
     * or pp when interleaved) were extrapolated, each adding round_time */
    int64_t microbatches;
    int64_t simulated_microbatches;
    int64_t round;
    double round_time;
    /* with options.fabric, over the simulated microbatches: the NPUs
     * simulated (every one); the transfers (collectives, a stage's pipeline
     * sends) run as flows together, sharing links, and those that ran
     * alone (their links no other stream's transfers use: each kind
     * simulated once, its time exact); the kinds simulated alone; flows */
    int64_t fabric_npus;
    int64_t fabric_transfers;
    int64_t fabric_alone;
    int fabric_kinds;
    uint64_t fabric_flows;
    /* Why the step ran on the fabric or not (empty when not asked): the
     * fabric's unevenness, or what kept an automatic run off it */
    char fabric_why[200];
} comet_sim_step_result;

/* Simulate one training step as a task graph (one NPU per pipeline stage:
 * under TP and DP the NPUs of a stage behave alike), with links that do
 * not contend or, with COMET_SIM_CONGESTION, per-dimension links whose
 * bandwidth concurrent collectives and sends share. Offloaded or spilled
 * state moves on a memory stream per stage, at the share of the expansion
 * tier one NPU gets. */
comet_status comet_sim_step(const comet_model *m, const comet_system *sys,
                            const comet_strategy *s, const comet_sim_step_options *o,
                            comet_sim_step_result *out, comet_error *err);

#endif
