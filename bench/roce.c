/* Benchmark: congestion control's fluid model (docs/roce.md) on the
 * issue's case, a 1 GiB ring all-reduce over every NPU of a 2-tier fat
 * tree of 64-port switches (1:1), 50 GB/s per NIC, 1 us a hop, one chunk,
 * with DCQCN (or another scheme): wall time, simulated time, fluid steps,
 * and the max-min engine's time beside it.
 * With `a2a` last: a 64 MiB all-to-all instead, leaves oversubscribed
 * 3:1 (congested: queues, pauses, marks every step).
 * Usage: bench_roce [npus (1024)] [scheme (dcqcn)] [step us (1)] [runs (3)] [ecmp|spray]
 *                   [a2a] */
#include <string.h>

#include "bench.h"

int main(int argc, char **argv)
{
    long npus = argc > 1 ? atol(argv[1]) : 1024;
    comet_cc_scheme cc = COMET_CC_DCQCN;
    if (argc > 2 && comet_cc_scheme_parse(argv[2], &cc) != 0) {
        fprintf(stderr, "bench_roce: unknown scheme %s\n", argv[2]);
        return 2;
    }
    double step = argc > 3 ? atof(argv[3]) * 1e-6 : 1e-6;
    int runs = argc > 4 ? atoi(argv[4]) : 3;
    bool ecmp = argc > 5 && strcmp(argv[5], "ecmp") == 0;
    bool a2a = argc > 6 && strcmp(argv[6], "a2a") == 0;
    comet_collective coll = a2a ? COMET_COLL_ALL_TO_ALL : COMET_COLL_ALL_REDUCE;
    double bytes = a2a ? 67108864.0 : 1073741824.0;
    if (npus < 2 || npus > 2048 || runs < 1 || runs > 101 || !(step > 0.0)) {
        fprintf(stderr, "usage: bench_roce [npus 2..2048] [none|pfc|dcqcn|hpcc] [step us] "
                        "[runs 1..101] [ecmp]\n");
        return 2;
    }
    comet_system s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "bench-roce");
    s.n_dims = 1;
    s.collective_chunks = 1;
    comet_net_dim *d = &s.dims[0];
    snprintf(d->name, sizeof d->name, "roce");
    d->size = npus;
    d->topology = COMET_TOPO_FAT_TREE;
    d->bandwidth = 50e9;
    d->latency = 2e-6;
    d->efficiency = 1.0;
    d->shape.tiers = 2;
    d->shape.radix = 64;
    d->shape.routing = ecmp ? COMET_ROUTE_ECMP : COMET_ROUTE_SPRAY;
    d->shape.oversubscription[0] = a2a ? 3.0 : 0.0;
    d->cc.scheme = cc;
    d->cc.step = step;
    comet_error err;
    comet_fabric *f = NULL;
    if (comet_fabric_build(&s, 0, &f, &err)) {
        fprintf(stderr, "bench_roce: %s: %s\n", err.key, err.message);
        return 1;
    }
    int64_t span[COMET_MAX_DIMS] = {npus, 1, 1, 1, 1, 1, 1, 1};
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    comet_flow_result r;
    double wall[101];
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now();
        if (comet_fabric_collective(f, &s, span, coll, bytes, &o, &r, &err)) {
            fprintf(stderr, "bench_roce: %s\n", err.message);
            comet_fabric_free(f);
            return 1;
        }
        wall[i] = bench_now() - t0;
    }
    comet_fabric_free(f);
    /* the same with the max-min engine */
    d->cc = (comet_cc_params){0};
    if (comet_fabric_build(&s, 0, &f, &err))
        return 1;
    comet_flow_result ideal;
    if (comet_fabric_collective(f, &s, span, coll, bytes, &o, &ideal, &err))
        return 1;
    comet_fabric_free(f);
    printf("bench_roce: %ld NPUs, %s, %s, step %.3g us: %s %.6f ms (max-min %.6f ms, "
           "%+.3f%%), %llu flows, %llu fluid steps, peak queue %.1f KB, pause %.4f ms, "
           "median wall %.3f s over %d runs\n",
           npus, comet_cc_scheme_name(cc), ecmp ? "ecmp" : "spray", step * 1e6,
           a2a ? "all-to-all (3:1)" : "all-reduce", r.time * 1e3,
           ideal.time * 1e3, 100.0 * (r.time - ideal.time) / ideal.time,
           (unsigned long long)r.flows, (unsigned long long)r.cc.steps, r.cc.peak_queue / 1e3,
           r.cc.pause_time * 1e3, bench_median(wall, runs), runs);
    return 0;
}
