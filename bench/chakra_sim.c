/* The Chakra simulator's own memory per trace node: builds a generated
 * trace in memory (bench/chakra_trace.h's chain, R ranks of N/R nodes; no
 * files, so the reader's memory is not in the figure), notes the peak
 * resident size, simulates it on a ring of R NPUs (50 GB/s, 500 ns) and
 * notes the peak again. The difference over the node count is what the
 * simulator needs per node on top of the trace itself.
 * Usage: bench_chakra_sim [nodes_total] [ranks] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench.h"
#include "chakra_trace.h"
#include "comet/chakra.h"

static double peak_rss_bytes(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_maxrss * 1024.0; /* Linux reports KiB */
}

int main(int argc, char **argv)
{
    size_t total = argc > 1 ? (size_t)atoll(argv[1]) : 2000000;
    int ranks = argc > 2 ? atoi(argv[2]) : 16;
    if (ranks < 1 || total < (size_t)ranks) {
        fprintf(stderr, "usage: bench_chakra_sim [nodes_total] [ranks]\n");
        return 2;
    }
    size_t per_rank = total / (size_t)ranks, nodes = per_rank * (size_t)ranks;
    comet_et_trace t = {.ranks = ranks};
    snprintf(t.prefix, sizeof t.prefix, "generated");
    t.rank = calloc((size_t)ranks, sizeof *t.rank);
    for (int r = 0; t.rank && r < ranks; r++) {
        comet_et_rank *rk = &t.rank[r];
        rk->nodes = calloc(per_rank, sizeof *rk->nodes);
        rk->dep_pool = calloc(per_rank, sizeof *rk->dep_pool);
        if (!rk->nodes || !rk->dep_pool) {
            fprintf(stderr, "bench_chakra_sim: out of memory\n");
            return 1;
        }
        rk->n = rk->n_dep_pool = per_rank;
        bench_chakra_chain(rk->nodes, rk->dep_pool, per_rank);
    }
    if (!t.rank) {
        fprintf(stderr, "bench_chakra_sim: out of memory\n");
        return 1;
    }
    double trace_peak = peak_rss_bytes();
    comet_astra_inputs in;
    comet_astra_ring(&in, ranks, 50e9, 500e-9);
    comet_et_result res;
    comet_error err;
    comet_error_clear(&err);
    double s0 = bench_now();
    if (comet_et_simulate(&t, &in, &res, &err)) {
        fprintf(stderr, "bench_chakra_sim: %s: %s\n", err.file, err.message);
        return 1;
    }
    double seconds = bench_now() - s0, sim_peak = peak_rss_bytes();
    printf("chakra simulate: %zu nodes in %d ranks in %.2f s (finish %.6f s, %llu events)\n",
           nodes, ranks, seconds, res.finish, (unsigned long long)res.events);
    printf("peak RSS: %.0f MB with the trace, %.0f MB after simulating: %.1f bytes per node "
           "for the simulator (the trace itself %.1f)\n",
           trace_peak / 1e6, sim_peak / 1e6, (sim_peak - trace_peak) / (double)nodes,
           trace_peak / (double)nodes);
    comet_et_result_free(&res);
    comet_et_free(&t);
    return 0;
}
