/* The generated trace the Chakra benchmarks share: one rank's n nodes, a
 * compute-collective-compute chain with one data dependency each, like a
 * layer's forward pass. */
#ifndef COMET_BENCH_CHAKRA_TRACE_H
#define COMET_BENCH_CHAKRA_TRACE_H

#include <stdint.h>

#include "comet/chakra.h"

/* Fills nodes[0..n) (zeroed by the caller); deps[0..n) holds their
 * dependencies, so it must live as long as the nodes. */
static inline void bench_chakra_chain(comet_et_node *nodes, uint64_t *deps, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        comet_et_node *x = &nodes[i];
        x->id = i + 1;
        if (i % 3 == 1) {
            x->type = COMET_ET_COLLECTIVE;
            x->comm_type = COMET_ET_ALL_REDUCE;
            x->comm_size = 1 << 20;
            x->name = "allreduce";
        } else {
            x->type = COMET_ET_COMPUTE;
            x->duration_micros = 50;
            x->num_ops = 1e9;
            x->tensor_size = 1 << 22;
            x->name = "gemm";
        }
        if (i > 0) {
            deps[i] = i;
            x->deps = &deps[i];
            x->n_deps = 1;
        }
    }
}

#endif
