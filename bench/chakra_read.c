/* Chakra trace reading speed: writes a generated trace (R ranks of N nodes
 * each, a compute-collective-compute chain with data dependencies, like a
 * layer's forward pass) with comet's writer, then reads it back several
 * times and reports the median nodes per second, then simulates it once on
 * a ring of as many NPUs as ranks (50 GB/s, 500 ns) and reports nodes
 * simulated per second. The trace is removed afterwards. Usage: bench_chakra_read [nodes_total] [ranks] [runs] [dir] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "chakra_trace.h"
#include "comet/chakra.h"

static int write_rank(const char *path, size_t n, comet_error *err)
{
    comet_et_node *nodes = calloc(n, sizeof *nodes);
    uint64_t *deps = calloc(n, sizeof *deps);
    if (!nodes || !deps) {
        free(nodes);
        free(deps);
        return -1;
    }
    bench_chakra_chain(nodes, deps, n);
    int rc = comet_et_write(path, "0.0.4", nodes, n, err) ? -1 : 0;
    free(nodes);
    free(deps);
    return rc;
}

int main(int argc, char **argv)
{
    size_t total = argc > 1 ? (size_t)atoll(argv[1]) : 10000000;
    int ranks = argc > 2 ? atoi(argv[2]) : 16;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    const char *dir = argc > 4 ? argv[4] : "/tmp";
    if (ranks < 1 || runs < 1 || total < (size_t)ranks) {
        fprintf(stderr, "usage: bench_chakra_read [nodes_total] [ranks] [runs] [dir]\n");
        return 2;
    }
    size_t per_rank = total / (size_t)ranks;
    char prefix[512], path[600];
    snprintf(prefix, sizeof prefix, "%s/comet-bench-trace-%d", dir, (int)getpid());
    comet_error err;
    comet_error_clear(&err);
    double t0 = bench_now();
    for (int r = 0; r < ranks; r++) {
        snprintf(path, sizeof path, "%s.%d.et", prefix, r);
        if (write_rank(path, per_rank, &err)) {
            fprintf(stderr, "bench_chakra_read: cannot write %s: %s\n", path, err.message);
            return 1;
        }
    }
    double write_s = bench_now() - t0;
    double *rate = calloc((size_t)runs, sizeof *rate);
    double sim_rate = 0.0, sim_finish = 0.0;
    int rc = rate ? 0 : 1;
    for (int k = 0; k < runs && !rc; k++) {
        comet_et_trace t;
        double s = bench_now();
        if (comet_et_read(prefix, ranks, NULL, &t, &err)) {
            fprintf(stderr, "bench_chakra_read: %s: %s\n", err.file, err.message);
            rc = 1;
            break;
        }
        rate[k] = (double)per_rank * ranks / (bench_now() - s);
        if (k == runs - 1) {
            comet_astra_inputs in;
            comet_astra_ring(&in, ranks, 50e9, 500e-9);
            comet_et_result res;
            double s0 = bench_now();
            if (comet_et_simulate(&t, &in, &res, &err)) {
                fprintf(stderr, "bench_chakra_read: %s: %s\n", err.file, err.message);
                rc = 1;
            } else {
                sim_rate = (double)per_rank * ranks / (bench_now() - s0);
                sim_finish = res.finish;
                comet_et_result_free(&res);
            }
        }
        comet_et_free(&t);
    }
    for (int r = 0; r < ranks; r++) {
        snprintf(path, sizeof path, "%s.%d.et", prefix, r);
        remove(path);
    }
    if (!rc)
        printf("chakra read: %zu nodes in %d ranks, written in %.2f s; median of %d reads: "
               "%.2f M nodes/s\n",
               per_rank * (size_t)ranks, ranks, write_s, runs, bench_median(rate, runs) / 1e6);
    if (!rc)
        printf("chakra simulate: %.2f M nodes/s (simulated finish %.6f s)\n", sim_rate / 1e6,
               sim_finish);
    free(rate);
    return rc;
}
