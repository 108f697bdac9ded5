/* Strategy search: every valid parallelization of one model on one
 * cluster, ranked. The space is enumerated in a fixed order, each point
 * gets an index, and ties are broken by it, so the same inputs always give
 * the same ranking, whether the search runs in one thread, several, or
 * several processes (each runs a shard and the shards are merged). */
#ifndef COMET_SEARCH_H
#define COMET_SEARCH_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/error.h"
#include "comet/estimate.h"
#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

typedef enum comet_objective {
    COMET_OBJECTIVE_TIME = 0,        /* shortest step */
    COMET_OBJECTIVE_THROUGHPUT,      /* most tokens/s */
    COMET_OBJECTIVE_COST             /* most tokens/s per unit of cluster cost */
} comet_objective;

const char *comet_objective_name(comet_objective o);
int comet_objective_parse(const char *name, comet_objective *out);

typedef struct comet_search_space {
    int64_t npus;
    int64_t global_batch;      /* the global batch, or with max_global_batch ... */
    int64_t max_global_batch;  /* > 0: try dp * 2^k samples up to this */
    int64_t max_microbatch;    /* 0 = no cap */
    int64_t max_cp;            /* context parallelism tried up to this; 0: while each rank
                                  keeps at least COMET_SEARCH_CP_MIN_TOKENS of a sequence */
    comet_strategy base;       /* knobs not searched (grad_fp32, order of groups unused) */
    bool vary_flash;           /* try fused attention off and on */
    bool vary_offload;         /* try offloads when the system has an expansion tier */
    bool keep_dominated;       /* also evaluate overlap off (never faster in the model) */
} comet_search_space;

/* The default bound on context parallelism in a search: cp is tried while
 * seq / cp stays at least this many tokens. Below it, attention is too
 * short a share of a block for the ring's K/V sends to hide behind, and
 * Megatron-LM's guidance is to use CP for long sequences only. */
#define COMET_SEARCH_CP_MIN_TOKENS 4096

/* Defaults: everything searched, dominated points pruned, base strategy
 * from comet_strategy_defaults. npus and global_batch must be set. */
void comet_search_space_defaults(comet_search_space *sp);

typedef struct comet_ranked {
    double score;               /* lower is better */
    uint64_t index;             /* position in the enumeration: breaks ties */
    comet_strategy strategy;    /* resolved: placement filled in */
    comet_result result;
} comet_ranked;

typedef struct comet_search_stats {
    uint64_t enumerated;        /* points in the space (including pruned ones) */
    uint64_t evaluated;         /* points priced (memory, and time when they fit) */
    uint64_t feasible;          /* fit in memory and were ranked */
    uint64_t no_fit_hbm;        /* did not fit in HBM */
    uint64_t no_fit_expansion;  /* did not fit in the expansion tier */
    uint64_t dominated;         /* pruned: provably no better than a point evaluated */
    uint64_t invalid;           /* parallel layouts the model or network rules out */
    uint64_t invalid_tp;        /* ... of which TP does not divide heads, kv heads or ffn */
    uint64_t invalid_batch;     /* ... of which the batch does not split over DP */
    uint64_t invalid_layout;    /* ... of which the groups do not fit the network */
    bool has_worst;             /* worst: the lowest-ranked feasible point (ties: last index) */
    comet_ranked worst;
} comet_search_stats;

/* How far a search has come, for a progress callback. Points are the
 * strategies the enumeration numbers: every one counts once it is passed,
 * whether it was priced, pruned as dominated or ruled out with its layout. */
typedef struct comet_search_progress {
    uint64_t done;              /* points passed so far (never decreases) */
    uint64_t total;             /* points of the space (of this shard) */
    uint64_t evaluated;         /* points priced so far */
} comet_search_progress;

/* Called with the progress; true asks the search to stop. */
typedef bool (*comet_search_progress_fn)(void *ctx, const comet_search_progress *p);

typedef struct comet_search_request {
    const comet_model *model;
    const comet_system *system;
    comet_search_space space;
    comet_objective objective;
    int top_k;                  /* 1..COMET_SEARCH_MAX_KEEP (--top: ..COMET_SEARCH_MAX_TOP) */
    int shard;                  /* this worker, 0..shards-1 */
    int shards;                 /* workers splitting the space (>= 1) */
    /* Threads of one process share this shard's units dynamically through
     * a counter (comet_search_threads sets it); NULL = take them all. */
    struct comet_unit_claim *claim;
    /* Progress, or NULL: called at most once per progress_every
     * evaluations (0: every 65536), never from two threads at once, and
     * once at the end with done == total. Returning true stops the search:
     * it returns COMET_ECANCELED (no ranking). Counting the total costs one
     * pass over the space's layouts, made only when progress is set. */
    comet_search_progress_fn progress;
    void *progress_ctx;
    uint64_t progress_every;
} comet_search_request;

#define COMET_SEARCH_MAX_TOP 1000

/* The most strategies a search keeps (top_k), for a report's table of
 * every strategy that fits: the best this many, in rank order. A table
 * of more would make a page of tens of megabytes that a browser sorts
 * slowly; the page says how many were left out. A search keeps its top
 * list in a heap, so keeping more costs only when a point enters it. */
#define COMET_SEARCH_MAX_KEEP 20000

/* Runs the request's shard. top must hold top_k entries; *n_top gets how
 * many were filled, best first. stats are this shard's. */
comet_status comet_search(const comet_search_request *req, comet_ranked *top, int *n_top,
                          comet_search_stats *stats, comet_error *err);

/* Merge shard results: b (n_b entries) into a (n_a entries, capacity k),
 * keeping the best k in rank order; and add stats. Deterministic. */
void comet_search_merge(comet_ranked *a, int *n_a, int k, const comet_ranked *b, int n_b);
void comet_search_stats_add(comet_search_stats *into, const comet_search_stats *from);

/* Splits a search over `threads` threads (shards of one process) and
 * merges them; the result equals a one-thread search. */
comet_status comet_search_threads(const comet_search_request *req, int threads,
                                  comet_ranked *top, int *n_top, comet_search_stats *stats,
                                  comet_error *err);

#endif
