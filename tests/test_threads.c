/* The library keeps no global mutable state: presets read and estimates
 * run in several threads at once give bit-identical results to a serial
 * run. */
#include <pthread.h>
#include <string.h>

#include "comet/comet.h"
#include "tests.h"

#define THREADS 4
#define STRATEGIES 8

typedef struct thread_job {
    double step_time[STRATEGIES];
    double hbm[STRATEGIES];
    int failed;
} thread_job;

static void run_all(thread_job *out)
{
    comet_model m;
    comet_system sys;
    comet_error err;
    out->failed = comet_preset_model("gpt3-175b", &m, &err) != COMET_OK ||
                  comet_preset_system("a100-80g-selene", &sys, &err) != COMET_OK;
    for (int i = 0; i < STRATEGIES && !out->failed; i++) {
        comet_strategy s;
        comet_strategy_defaults(&s);
        s.tp = 8;
        s.pp = 8;
        s.global_batch = 64;
        s.interleave = (i & 1) ? 3 : 1;
        s.sp = (i & 2) != 0;
        s.recompute = (i & 4) ? COMET_RECOMPUTE_SELECTIVE : COMET_RECOMPUTE_FULL;
        comet_result r;
        out->failed |= comet_estimate(&m, &sys, &s, &r, &err) != COMET_OK;
        out->step_time[i] = r.step_time;
        out->hbm[i] = r.mem_total[COMET_TIER_HBM];
    }
}

static void *thread_main(void *arg)
{
    for (int rep = 0; rep < 50; rep++)
        run_all(arg);
    return NULL;
}

static void test_threads_match_serial(void **state)
{
    (void)state;
    thread_job serial, jobs[THREADS];
    run_all(&serial);
    assert_false(serial.failed);
    pthread_t tid[THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, thread_main, &jobs[i]), 0);
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(tid[i], NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        assert_false(jobs[i].failed);
        assert_memory_equal(jobs[i].step_time, serial.step_time, sizeof serial.step_time);
        assert_memory_equal(jobs[i].hbm, serial.hbm, sizeof serial.hbm);
    }
}

void suite_threads(test_tally *t)
{
    const struct CMUnitTest threads[] = {
        cmocka_unit_test(test_threads_match_serial),
    };
    RUN_GROUP(t, threads);
}
