/* Test runner: runs every suite and closes with one "N passed, M failed"
 * line so CI and people read the result the same way. COMET_SUITE=name
 * runs only the suites whose function name holds it (while working).
 * Each suite's wall time is printed after it, so a slow one shows in the
 * CI log (speed itself is measured in bench/, not here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests.h"

int tests_skipped;

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void)
{
    test_tally t = {0, 0, 0};
    const char *only = getenv("COMET_SUITE");
#define RUN(suite)                                                                     \
    do {                                                                               \
        if (!only || strstr(#suite, only)) {                                           \
            double start_ = seconds_now();                                             \
            suite(&t);                                                                 \
            printf("(" #suite ": %.1f s)\n", seconds_now() - start_);                 \
            fflush(stdout);                                                            \
        }                                                                              \
    } while (0)
    RUN(suite_core);
    RUN(suite_config);
    RUN(suite_calibrate);
    RUN(suite_network);
    RUN(suite_fabric);
    RUN(suite_roce);
    RUN(suite_protocols);
    RUN(suite_workload);
    RUN(suite_context);
    RUN(suite_estimate);
    RUN(suite_compute);
    RUN(suite_moe);
    RUN(suite_validation);
    RUN(suite_band);
    RUN(suite_cli);
    RUN(suite_threads);
    RUN(suite_search);
    RUN(suite_sweep);
    RUN(suite_sweep_axes);
    RUN(suite_simulate);
    RUN(suite_chakra);
    RUN(suite_fuzz_seeds);
    RUN(suite_report);
    RUN(suite_study);
    RUN(suite_framework);
    RUN(suite_partition);
    RUN(suite_allocate);
    RUN(suite_deeppool);
    RUN(suite_api);
    if (t.skipped)
        printf("\n%d test%s skipped (see the SKIPPED lines above)", t.skipped,
               t.skipped == 1 ? "" : "s");
    printf("\ntests: %d passed, %d failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
