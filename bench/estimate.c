/* Benchmark: evaluations per second of comet_estimate on gpt3-175b on the
 * a100-80g-selene preset, one core. Cycles through a set of strategies so
 * nothing can be hoisted out of the loop, repeats the measurement and
 * prints the median. Usage: bench_estimate [evaluations per run] [runs] */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "comet/comet.h"

int main(int argc, char **argv)
{
    long evals = argc > 1 ? atol(argv[1]) : 2000000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    if (evals < 1 || runs < 1 || runs > 101) {
        fprintf(stderr, "usage: bench_estimate [evaluations] [runs 1..101]\n");
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
    printf("bench_estimate: gpt3-175b on a100-80g-selene, %ld evaluations x %d runs, 1 thread\n",
           evals, runs);
    printf("  median %.0f evaluations/s (min %.0f, max %.0f)  [checksum %.6g]\n",
           rates[runs / 2], rates[0], rates[runs - 1], checksum);
    return 0;
}
