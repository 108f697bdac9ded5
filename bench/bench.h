/* Helpers shared by the benchmarks: a monotonic clock and medians. */
#ifndef COMET_BENCH_H
#define COMET_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place and returns its median. */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], bench_cmp_double);
    return v[n / 2];
}

#endif
