/* Test runner: runs every suite and closes with one "N passed, M failed"
 * line so CI and people read the result the same way. */
#include <stdio.h>

#include "tests.h"

int tests_skipped;

int main(void)
{
    test_tally t = {0, 0, 0};
    suite_core(&t);
    suite_config(&t);
    suite_calibrate(&t);
    suite_network(&t);
    suite_protocols(&t);
    suite_workload(&t);
    suite_context(&t);
    suite_estimate(&t);
    suite_compute(&t);
    suite_moe(&t);
    suite_validation(&t);
    suite_cli(&t);
    suite_threads(&t);
    suite_search(&t);
    suite_sweep(&t);
    suite_simulate(&t);
    suite_chakra(&t);
    suite_fuzz_seeds(&t);
    suite_report(&t);
    suite_study(&t);
    if (t.skipped)
        printf("\n%d test%s skipped (see the SKIPPED lines above)", t.skipped,
               t.skipped == 1 ? "" : "s");
    printf("\ntests: %d passed, %d failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
