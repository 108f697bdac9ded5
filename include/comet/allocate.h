/* Bandwidth allocation across network dimensions (after LIBRA, Won et al.,
 * ISPASS 2024): given a budget per NPU (GB/s, or dollars at a cost per
 * GB/s on each dimension), bounds per dimension (continuous, or whole
 * links of a given speed) and weighted workloads, how much bandwidth each
 * dimension should get to minimize the weighted step time, or to
 * maximize performance per cost. Every step time comes from
 * comet_estimate; a searched strategy from comet_search (docs/allocate.md). */
#ifndef COMET_ALLOCATE_H
#define COMET_ALLOCATE_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/config.h"
#include "comet/error.h"
#include "comet/estimate.h"
#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

#define COMET_ALLOC_MAX_WORKLOADS 8
#define COMET_ALLOC_SWEEP 7          /* budgets the step-time curve is drawn at */
#define COMET_ALLOC_MAX_LINKS 4096   /* links per NPU on one dimension */
#define COMET_ALLOC_MAX_EVALS 200000 /* estimates one refinement (compass search or link
                                        search) may make: bounds the time */

typedef enum comet_alloc_objective {
    COMET_ALLOC_STEP_TIME = 0,      /* the weighted step time */
    COMET_ALLOC_PERF_PER_COST       /* the weighted step time x cluster cost (lower: more
                                       performance per dollar) */
} comet_alloc_objective;

const char *comet_alloc_objective_name(comet_alloc_objective o);

typedef enum comet_alloc_budget {
    COMET_ALLOC_BUDGET_BANDWIDTH = 0, /* sum of b_d, bytes/s per NPU */
    COMET_ALLOC_BUDGET_DOLLARS        /* sum of cost_per_gbps_d x b_d / 1e9, per NPU */
} comet_alloc_budget;

/* What one network dimension may get. */
typedef struct comet_alloc_dim {
    double min, max;          /* bytes/s per NPU; max 0: only the budget bounds it */
    double cost_per_gbps;     /* the price of 1 GB/s per NPU here (the system's by default) */
    double link_bandwidth;    /* > 0: whole links of this speed (bytes/s) ... */
    int64_t min_links, max_links; /* ... between these counts per NPU */
} comet_alloc_dim;

typedef struct comet_alloc_workload {
    comet_model model;
    int64_t npus;
    int64_t global_batch;
    double weight;            /* > 0; the objective is the weighted sum */
    bool fixed;               /* strategy given; else searched at every split tried */
    comet_strategy strategy;
} comet_alloc_workload;

typedef struct comet_alloc_problem {
    char name[COMET_NAME_LEN];
    comet_system system;      /* the network's shape; its bandwidths are the current split */
    comet_alloc_budget budget_kind;
    double budget;            /* bytes/s or dollars, per NPU */
    comet_alloc_dim dims[COMET_MAX_DIMS];   /* one per system dimension */
    int n_workloads;
    comet_alloc_workload workloads[COMET_ALLOC_MAX_WORKLOADS];
    comet_alloc_objective objective;
    int threads;              /* for searched strategies (>= 1) */
    comet_srcmap srcmap;
} comet_alloc_problem;

/* One split of the budget and what it gives. */
typedef struct comet_alloc_point {
    double bw[COMET_MAX_DIMS];        /* bytes/s per NPU */
    double spend;                     /* in the budget's unit (bytes/s or dollars per NPU) */
    bool feasible;                    /* every workload has a strategy that fits */
    double score;                     /* the objective, lower is better (INFINITY: no fit) */
    double step_time;                 /* weighted step time, seconds */
    double cost;                      /* weighted cluster cost (0 without costs) */
    double step[COMET_ALLOC_MAX_WORKLOADS];
    comet_strategy strategy[COMET_ALLOC_MAX_WORKLOADS];  /* resolved */
    /* seconds of the weighted step spent waiting on dimension d's
     * bandwidth: the step time less the step time with d made 10^6 times
     * faster (the latency terms stay); wait / step_time is d's utilization */
    double wait[COMET_MAX_DIMS];
} comet_alloc_point;

typedef struct comet_alloc_result {
    comet_alloc_point optimum;        /* the answer */
    comet_alloc_point lagrange;       /* the closed form b_d ~ sqrt(a_d / c_d), before refining */
    comet_alloc_point equal;          /* the same GB/s on every dimension (within bounds) */
    comet_alloc_point current;        /* the system's own split, scaled to the budget */
    double a[COMET_MAX_DIMS];         /* a_d: weighted wait x bandwidth at the start (bytes) */
    /* weighted step time saved per extra GB/s on d at the optimum (seconds
     * per GB/s, from one more 1 % of the budget there) */
    double marginal[COMET_MAX_DIMS];
    int n_sweep;
    double sweep_budget[COMET_ALLOC_SWEEP];     /* budget multiples of the given budget */
    double sweep_optimum[COMET_ALLOC_SWEEP];    /* weighted step time of the optimum there */
    double sweep_equal[COMET_ALLOC_SWEEP];      /* ... of the equal split */
    uint64_t evaluations;             /* estimates made (searches count each point priced) */
    int rounds;                       /* strategy-search rounds (0: strategies fixed) */
} comet_alloc_result;

/* Solve. Bad problems (budget below the minimums, bounds inverted) are
 * refused by the reader; here they are COMET_EINPUT without a position.
 * sweep: also draw the step time across budgets (the chart). */
comet_status comet_allocate(const comet_alloc_problem *p, bool sweep, comet_alloc_result *out,
                            comet_error *err);

/* The budget a split spends, in the problem's unit. */
double comet_alloc_spend(const comet_alloc_problem *p, const double bw[COMET_MAX_DIMS]);

/* Read a document with one `allocate:` section (docs/config.md). Every
 * check is made before any work: errors name file:line:column and key. */
comet_status comet_alloc_read_file(const char *path, comet_alloc_problem *p, comet_error *err);
comet_status comet_alloc_read_text(const char *text, size_t len, const char *filename,
                                   comet_alloc_problem *p, comet_error *err);

#endif
