/* Benchmark: comet partition's library on a 4-layer MLP of 4,096 neurons
 * per layer (4 x 4096 x 4096 random weights) split over 8 workers, pruned
 * at a 50 % count budget and priced on h100-80g-dgx, one core: the target
 * is under 10 s. Repeats and prints the medians of wall-clock time and of
 * the process's CPU time (what one core spent, whatever else the machine
 * runs).
 * Usage: bench_partition [width] [workers] [runs] */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "comet/comet.h"
#include "comet/partition.h"

int main(int argc, char **argv)
{
    long width = argc > 1 ? atol(argv[1]) : 4096;
    int workers = argc > 2 ? atoi(argv[2]) : 8;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    if (width < 1 || workers < 1 || workers > width || runs < 1 || runs > 101) {
        fprintf(stderr, "usage: bench_partition [width] [workers <= width] [runs 1..101]\n");
        return 2;
    }
    comet_mlp m = {.n_layers = 4, .layers = calloc(4, sizeof(comet_dense))};
    uint64_t s = 1;
    for (int l = 0; l < 4; l++) {
        comet_dense *d = &m.layers[l];
        snprintf(d->name, sizeof d->name, "fc%d", l);
        d->in = d->out = width;
        d->weight = malloc((size_t)(width * width) * sizeof(float));
        d->bias = calloc((size_t)width, sizeof(float));
        if (!d->weight || !d->bias) {
            fprintf(stderr, "bench_partition: out of memory\n");
            return 1;
        }
        for (long k = 0; k < width * width; k++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            d->weight[k] = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5);
        }
    }
    comet_system sys;
    comet_error err;
    if (comet_preset_system("h100-80g-dgx", &sys, &err)) {
        fprintf(stderr, "bench_partition: %s\n", err.message);
        return 1;
    }
    double secs[101], cpu[101];
    double checksum = 0;
    for (int r = 0; r < runs; r++) {
        double t0 = bench_now();
        struct timespec c0, c1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        comet_partition p;
        comet_partition_request req = {.workers = workers, .prune = COMET_PRUNE_COUNT,
                                       .budget = 0.5};
        comet_partition_price price;
        if (comet_partition_run(&m, &req, &p, &err) ||
            comet_partition_price_on(&p, false, &sys, COMET_DTYPE_BF16, 1, &price, &err)) {
            fprintf(stderr, "bench_partition: %s\n", err.message);
            return 1;
        }
        secs[r] = bench_now() - t0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        cpu[r] = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
        checksum += price.bytes + (double)p.layers[3].cross_after;
        comet_partition_free(&p);
    }
    printf("partition: 4 layers x %ld neurons, %d workers, 50 %% count budget: median %.2f s "
           "wall, %.2f s CPU over %d runs (checksum %.6g)\n",
           width, workers, bench_median(secs, runs), bench_median(cpu, runs), runs, checksum);
    comet_mlp_free(&m);
    return 0;
}
