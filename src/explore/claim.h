/* Internal: what the threads of one search share: the counter they take
 * the shard's units from, and the progress they report together. */
#ifndef COMET_EXPLORE_CLAIM_H
#define COMET_EXPLORE_CLAIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "comet/search.h"

struct comet_unit_claim {
    _Atomic uint64_t next;       /* next unclaimed unit of the shard, in enumeration order */
    /* progress, when the request asks for it */
    uint64_t total;              /* points of the shard */
    _Atomic uint64_t done;       /* points of the units finished */
    _Atomic uint64_t evaluated;  /* evaluations the threads have added so far */
    _Atomic bool stop;           /* the callback asked to stop */
    pthread_mutex_t report;      /* held while the callback runs */
    uint64_t reported_done;      /* under report: what the last call said */
    uint64_t reported_evaluated;
};

/* Ready for a search of `total` points (one of comet_search_points). */
void search_shared_init(struct comet_unit_claim *shared, uint64_t total);
void search_shared_free(struct comet_unit_claim *shared);

/* Points of the request's shard (a pass over its layouts, not priced). */
uint64_t search_points(const comet_search_request *req);

/* The last call, at the end of a search that was not stopped: done == total. */
void search_progress_end(const comet_search_request *req, struct comet_unit_claim *shared);

#endif
