/* Helpers shared by the benchmarks: a monotonic clock and medians. */
#ifndef COMET_BENCH_H
#define COMET_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "comet/comet.h"

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

/* gpt3-175b and a100-80g-selene, or a message on stderr and -1. */
static inline int bench_presets(const char *who, comet_model *m, comet_system *sys)
{
    comet_error err;
    if (comet_preset_model("gpt3-175b", m, &err) ||
        comet_preset_system("a100-80g-selene", sys, &err)) {
        char line[512];
        fprintf(stderr, "%s: %s\n", who, comet_error_format(&err, line, sizeof line));
        return -1;
    }
    return 0;
}

#endif
