/* Benchmark: the flow-level simulation of a 1 GiB all-reduce over every
 * NPU of 8-GPU nodes (NVLink switch, 450 GB/s) on a 3-tier fat tree of
 * 64-port switches, leaves 1:1 and aggregation switches 2:1 (the spine
 * oversubscribed), 50 GB/s per NIC, flows sprayed (or hashed: ecmp as the
 * third argument), one chunk, every group at once: wall time, flows,
 * events and rate recomputations, and the estimate beside it.
 * Usage: bench_fabric [nodes (default 512)] [runs (default 3)] [ecmp] */
#include <string.h>

#include "bench.h"

int main(int argc, char **argv)
{
    long nodes = argc > 1 ? atol(argv[1]) : 512;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    bool ecmp = argc > 3 && strcmp(argv[3], "ecmp") == 0;
    if (nodes < 2 || nodes > 1 << 20 || runs < 1 || runs > 101) {
        fprintf(stderr, "usage: bench_fabric [nodes 2..1048576] [runs 1..101] [ecmp]\n");
        return 2;
    }
    comet_system s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "bench-fat-tree");
    s.n_dims = 2;
    s.collective_chunks = 1;
    snprintf(s.dims[0].name, sizeof s.dims[0].name, "nvlink");
    s.dims[0].size = 8;
    s.dims[0].topology = COMET_TOPO_SWITCH;
    s.dims[0].bandwidth = 450e9;
    s.dims[0].latency = 1e-6;
    snprintf(s.dims[1].name, sizeof s.dims[1].name, "ib");
    s.dims[1].size = nodes;
    s.dims[1].topology = COMET_TOPO_FAT_TREE;
    s.dims[1].bandwidth = 50e9;
    s.dims[1].latency = 2e-6;
    s.dims[1].shape.tiers = 3;
    s.dims[1].shape.radix = 64;
    s.dims[1].shape.oversubscription[1] = 2.0;
    s.dims[1].shape.routing = ecmp ? COMET_ROUTE_ECMP : COMET_ROUTE_SPRAY;
    comet_error err;
    comet_fabric *f = NULL;
    if (comet_fabric_build(&s, 0, &f, &err)) {
        fprintf(stderr, "bench_fabric: %s\n", err.message);
        return 1;
    }
    comet_fabric_info info;
    comet_fabric_info_of(f, &info);
    int64_t span[COMET_MAX_DIMS] = {8, nodes, 1, 1, 1, 1, 1, 1};
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    o.max_flows = 1000000000;
    comet_flow_result r;
    double wall[101];
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now();
        if (comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, 1073741824.0, &o, &r,
                                    &err)) {
            fprintf(stderr, "bench_fabric: %s\n", err.message);
            comet_fabric_free(f);
            return 1;
        }
        wall[i] = bench_now() - t0;
    }
    double est = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, 1073741824.0);
    printf("bench_fabric: %lld NPUs, %lld switches, %lld links, %s: all-reduce %.6f s "
           "(estimate %.6f s), %llu flows, %llu events, %llu rate updates, median wall "
           "%.3f s over %d runs\n",
           (long long)info.npus, (long long)info.switches, (long long)info.links,
           ecmp ? "ecmp" : "spray", r.time, est, (unsigned long long)r.flows,
           (unsigned long long)r.events, (unsigned long long)r.rate_updates,
           bench_median(wall, runs), runs);
    comet_fabric_free(f);
    return 0;
}
