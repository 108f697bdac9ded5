/* Benchmark: one bandwidth allocation (comet_allocate, no budget sweep)
 * on the examples of examples/allocate: selene-fixed (one workload, its
 * strategy fixed) and selene-bandwidth (a fixed and a searched workload),
 * on 1 and 2 threads for the search. Reports the median wall time of
 * repeated runs. Usage: bench_allocate [runs] (run from the repository). */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "comet/allocate.h"

static int measure(const char *file, int threads, int runs)
{
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    double t[64];
    comet_error err;
    char line[512];
    if (!p || !r || comet_alloc_read_file(file, p, &err)) {
        fprintf(stderr, "bench_allocate: %s\n",
                p && r ? comet_error_format(&err, line, sizeof line) : "out of memory");
        free(p);
        free(r);
        return 1;
    }
    p->threads = threads;
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now();
        if (comet_allocate(p, false, r, &err)) {
            fprintf(stderr, "bench_allocate: %s\n", comet_error_format(&err, line, sizeof line));
            free(p);
            free(r);
            return 1;
        }
        t[i] = bench_now() - t0;
    }
    printf("  %-44s %d thread%s: median %.1f ms (%llu estimates, optimum %.4f s)\n", file,
           threads, threads > 1 ? "s" : "", 1e3 * bench_median(t, runs),
           (unsigned long long)r->evaluations, r->optimum.step_time);
    free(p);
    free(r);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    if (runs < 1 || runs > 64) {
        fprintf(stderr, "usage: bench_allocate [runs 1..64]\n");
        return 2;
    }
    return measure("examples/allocate/selene-fixed.yaml", 1, runs) ||
           measure("examples/allocate/selene-bandwidth.yaml", 1, runs) ||
           measure("examples/allocate/selene-bandwidth.yaml", 2, runs);
}
