/* Benchmark: strategy search points per second through the real search
 * path (enumeration, placement, workload build, memory check, timing,
 * top-k ranking) for gpt3-175b on 64 NPUs of a100-80g-selene, global
 * batch 64, the full space. Reports medians over repeated runs, for one
 * thread with dominated points pruned, one thread evaluating every point,
 * and two threads. With `fat_tree` the preset's scale-out dimension is a
 * 2-tier fat tree of 64-port switches at 2:1, sprayed (the topology-aware
 * closed forms, docs/fabric.md); `fat_tree_ecmp` the same tree hashed (its
 * busiest-link term). Usage: bench_search [runs] [fat_tree | fat_tree_ecmp] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "comet/comet.h"
#include "comet/search.h"

static int measure(const char *label, comet_search_request *req, int threads, int runs,
                   comet_ranked *top)
{
    double enumerated[64], evaluated[64];
    comet_search_stats st;
    comet_error err;
    int n;
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        if (comet_search_threads(req, threads, top, &n, &st, &err))
            return 1;
        double dt = bench_now() - t0;
        enumerated[r] = (double)st.enumerated / dt;
        evaluated[r] = (double)st.evaluated / dt;
    }
    bench_median(enumerated, runs);
    bench_median(evaluated, runs);
    printf("  %-34s %9llu points, %9llu evaluated, %llu fit: median %.2f M points/s, %.2f M "
           "evaluated/s (best step %.3f s)\n",
           label, (unsigned long long)st.enumerated, (unsigned long long)st.evaluated,
           (unsigned long long)st.feasible,
           enumerated[runs / 2] / 1e6, evaluated[runs / 2] / 1e6, n ? top[0].result.step_time : 0);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    bool ecmp = argc > 2 && strcmp(argv[2], "fat_tree_ecmp") == 0;
    bool fat = ecmp || (argc > 2 && strcmp(argv[2], "fat_tree") == 0);
    if (runs < 1 || runs > 64 || (argc > 2 && !fat)) {
        fprintf(stderr, "usage: bench_search [runs 1..64] [fat_tree | fat_tree_ecmp]\n");
        return 2;
    }
    comet_model m;
    comet_system sys;
    if (bench_presets("bench_search", &m, &sys))
        return 1;
    if (fat) {
        comet_net_dim *d = &sys.dims[sys.n_dims - 1];
        d->topology = COMET_TOPO_FAT_TREE;
        d->shape.radix = 64;
        d->shape.oversubscription[0] = 2.0;
        d->shape.routing = ecmp ? COMET_ROUTE_ECMP : COMET_ROUTE_SPRAY;
    }
    comet_search_request req = {.model = &m, .system = &sys, .top_k = 10, .shards = 1};
    comet_search_space_defaults(&req.space);
    req.space.npus = 64;
    req.space.global_batch = 64;
    req.space.base.grad_fp32 = true;
    printf("bench_search: gpt3-175b on a100-80g-selene%s, 64 NPUs, global batch 64, %d runs\n",
           fat ? " (scale-out: 2:1 fat tree)" : "", runs);
    comet_ranked *top = malloc(sizeof *top * COMET_SEARCH_MAX_KEEP);
    if (!top)
        return 1;
    int rc = measure("1 thread, dominated pruned", &req, 1, runs, top);
    req.top_k = COMET_SEARCH_MAX_KEEP;
    rc |= measure("1 thread, pruned, best 20000 kept", &req, 1, runs, top);
    req.top_k = 10;
    req.space.keep_dominated = true;
    rc |= measure("1 thread, every point evaluated", &req, 1, runs, top);
    rc |= measure("2 threads, every point evaluated", &req, 2, runs, top);
    free(top);
    return rc;
}
