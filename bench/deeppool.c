/* Benchmark: DeepPool's burst-parallel plan of ResNet-152 on 256 GPUs of
 * h100-80g-dgx at a global batch of 256 (comet_deeppool_plan), and the
 * data-parallel plan beside it. Prints the median wall-clock and CPU time
 * per plan over the runs, and the plan's iteration times so a change in
 * the answer shows too. Target (the issue): under a second. */
#include <string.h>

#include "bench.h"
#include "comet/deeppool.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "resnet152";
    int64_t gpus = argc > 2 ? atoll(argv[2]) : 256;
    int runs = argc > 3 ? atoi(argv[3]) : 7;
    if (runs < 1 || runs > 101 || gpus < 1) {
        fprintf(stderr, "usage: bench_deeppool [MODEL] [GPUS] [RUNS]\n");
        return 2;
    }
    comet_model m;
    comet_system sys;
    comet_error err;
    char line[512];
    if (comet_preset_model(model, &m, &err) || comet_preset_system("h100-80g-dgx", &sys, &err)) {
        fprintf(stderr, "bench_deeppool: %s\n", comet_error_format(&err, line, sizeof line));
        return 1;
    }
    comet_dp_plan *burst = malloc(sizeof *burst), *dp = malloc(sizeof *dp);
    double wall[101], cpu[101];
    if (!burst || !dp)
        return 1;
    for (int r = 0; r < runs; r++) {
        double w0 = bench_now(), c0 = cpu_now();
        if (comet_deeppool_plan(&m, &sys, gpus, gpus, false, 0.0, burst, &err)) {
            fprintf(stderr, "bench_deeppool: %s\n", comet_error_format(&err, line, sizeof line));
            return 1;
        }
        wall[r] = bench_now() - w0;
        cpu[r] = cpu_now() - c0;
    }
    if (comet_deeppool_plan(&m, &sys, gpus, gpus, true, 0.0, dp, &err)) {
        fprintf(stderr, "bench_deeppool: %s\n", comet_error_format(&err, line, sizeof line));
        return 1;
    }
    printf("%s on %lld GPUs, global batch %lld: burst %d runs, iteration %.6g s; data parallel "
           "%.6g s\n", model, (long long)gpus, (long long)gpus, burst->n_groups, burst->iteration,
           dp->iteration);
    printf("plan: median wall %.3f ms, median CPU %.3f ms (%d runs)\n",
           1e3 * bench_median(wall, runs), 1e3 * bench_median(cpu, runs), runs);
    free(burst);
    free(dp);
    return 0;
}
