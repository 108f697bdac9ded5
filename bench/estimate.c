/* Benchmark: evaluations per second of comet_estimate on gpt3-175b on the
 * a100-80g-selene preset, one core. Cycles through a set of strategies so
 * nothing can be hoisted out of the loop, repeats the measurement and
 * prints the median. With a schedule named (1f1b, zb-h1, dualpipe) every
 * strategy runs it on one chunk per stage, half with global batch 1024
 * (DualPipe: the estimate per schedule, as the search prices it).
 * Usage: bench_estimate [evaluations per run] [runs] [schedule] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "comet/comet.h"

int main(int argc, char **argv)
{
    long evals = argc > 1 ? atol(argv[1]) : 2000000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    if (evals < 1 || runs < 1 || runs > 101) {
        fprintf(stderr, "usage: bench_estimate [evaluations] [runs 1..101] [schedule]\n");
        return 2;
    }
    int schedule = -1;
    for (int k = 0; argc > 3 && k <= COMET_SCHEDULE_DUALPIPE; k++)
        if (!strcmp(argv[3], comet_schedule_name((comet_schedule)k)))
            schedule = k;
    if (argc > 3 && schedule < 0) {
        fprintf(stderr, "bench_estimate: unknown schedule %s\n", argv[3]);
        return 2;
    }
    comet_model m;
    comet_system sys;
    if (bench_presets("bench_estimate", &m, &sys))
        return 1;
    /* 8 strategies on 64 NPUs: tp 8, pp 8, two recompute modes, SP on/off, v 1/3. */
    comet_strategy set[8];
    for (int i = 0; i < 8; i++) {
        comet_strategy_defaults(&set[i]);
        set[i].tp = 8;
        set[i].pp = 8;
        set[i].global_batch = 64;
        set[i].interleave = (i & 1) ? 3 : 1;
        set[i].sp = (i & 2) != 0;
        set[i].recompute = (i & 4) ? COMET_RECOMPUTE_SELECTIVE : COMET_RECOMPUTE_FULL;
        if (schedule >= 0) {
            set[i].schedule = (comet_schedule)schedule;
            set[i].interleave = 1;
            set[i].global_batch = (i & 1) ? 1024 : 64;
        }
    }
    double rates[101];
    double checksum = 0.0;
    comet_error err;
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        for (long i = 0; i < evals; i++) {
            comet_result res;
            if (comet_estimate(&m, &sys, &set[i & 7], &res, &err))
                return 1;
            checksum += res.step_time;
        }
        rates[r] = (double)evals / (bench_now() - t0);
    }
    bench_median(rates, runs);
    printf("bench_estimate: gpt3-175b on a100-80g-selene, %ld evaluations x %d runs, 1 thread%s%s\n",
           evals, runs, schedule >= 0 ? ", schedule " : "", schedule >= 0 ? argv[3] : "");
    printf("  median %.0f evaluations/s (min %.0f, max %.0f)  [checksum %.6g]\n",
           rates[runs / 2], rates[0], rates[runs - 1], checksum);
    return 0;
}
