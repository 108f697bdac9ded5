/* Internal: the counter threads use to share a shard's units. */
#ifndef COMET_EXPLORE_CLAIM_H
#define COMET_EXPLORE_CLAIM_H

#include <stdatomic.h>
#include <stdint.h>

struct comet_unit_claim {
    _Atomic uint64_t next;   /* next unclaimed unit of the shard, in enumeration order */
};

#endif
