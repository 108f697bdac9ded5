/* Shared declarations for the cmocka test suites. Every suite file defines
 * one suite_NAME(test_tally *) that runs its group and adds to the tally;
 * tests/main.c runs them all and prints the closing "N passed, M failed". */
#ifndef COMET_TESTS_H
#define COMET_TESTS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

typedef struct test_tally {
    int passed;
    int failed;
    int skipped;
} test_tally;

/* Tests skipped so far (cmocka reports failures only); the runner's one
 * piece of mutable state, in the test program, never in the library. */
extern int tests_skipped;

/* Skip the running test, saying why on one line. */
#define TEST_SKIP(...)                                                                   \
    do {                                                                                 \
        printf("[ SKIPPED  ] " __VA_ARGS__);                                             \
        printf("\n");                                                                    \
        tests_skipped++;                                                                 \
        skip();                                                                          \
    } while (0)

#define RUN_GROUP(tally, group) RUN_GROUP_WITH(tally, group, NULL, NULL)
#define RUN_GROUP_WITH(tally, group, setup, teardown)                                    \
    do {                                                                                 \
        int skipped_before_ = tests_skipped;                                             \
        int failed_ = cmocka_run_group_tests_name(#group, group, setup, teardown);       \
        int count_ = (int)(sizeof(group) / sizeof((group)[0]));                          \
        int skipped_ = tests_skipped - skipped_before_;                                  \
        (tally)->failed += failed_;                                                      \
        (tally)->skipped += skipped_;                                                    \
        (tally)->passed += count_ - failed_ - skipped_;                                  \
    } while (0)

/* assert |actual - expected| <= rel * |expected| */
#define assert_close(actual, expected, rel)                                              \
    do {                                                                                 \
        double a_ = (actual), e_ = (expected);                                           \
        double d_ = a_ > e_ ? a_ - e_ : e_ - a_;                                         \
        double m_ = (e_ < 0 ? -e_ : e_) * (rel);                                         \
        if (!(d_ <= m_))                                                                 \
            fail_msg("%s = %.9g, expected %.9g (rel tol %g)", #actual, a_, e_, (double)(rel)); \
    } while (0)

/* Compare text with tests/golden/NAME (COMET_UPDATE_GOLDEN=1 rewrites it). */
void test_golden(const char *name, const char *text);

/* A search request for the whole space of m on npus NPUs of sys at global
 * batch gbs, ranked by time, keeping k, one shard (tests/test_search.c). */
struct comet_search_request;
struct comet_model;
struct comet_system;
void test_search_request(struct comet_search_request *req, const struct comet_model *m,
                         const struct comet_system *sys, int64_t npus, int64_t gbs, int k);

/* Write sys with comet_system_write_yaml and read it back: the identical
 * struct, or the test fails; the written text, to free
 * (tests/test_calibrate.c). */
char *test_system_round_trip(const struct comet_system *sys);

/* sys's fabric, built or the test failed (tests/test_fabric.c). */
struct comet_fabric;
struct comet_fabric *test_fabric_of(const struct comet_system *sys);

/* A 2 x 3 design study of megatron-22b on 16 NPUs (tests/test_sweep.c). */
extern const char test_small_study[];
/* Reading study text fails with exactly this one-line error, as file
 * "bad.yaml" (tests/test_sweep.c). */
void test_expect_study_error(const char *text, const char *expected);

void suite_core(test_tally *t);
void suite_partition(test_tally *t);
void suite_config(test_tally *t);
void suite_network(test_tally *t);
void suite_fabric(test_tally *t);
void suite_roce(test_tally *t);
void suite_protocols(test_tally *t);
void suite_workload(test_tally *t);
void suite_context(test_tally *t);
void suite_estimate(test_tally *t);
void suite_compute(test_tally *t);
void suite_moe(test_tally *t);
void suite_validation(test_tally *t);
void suite_band(test_tally *t);
void suite_cli(test_tally *t);
void suite_threads(test_tally *t);
void suite_search(test_tally *t);
void suite_sweep(test_tally *t);
void suite_sweep_axes(test_tally *t);
void suite_simulate(test_tally *t);
void suite_chakra(test_tally *t);
void suite_fuzz_seeds(test_tally *t);
void suite_report(test_tally *t);
void suite_study(test_tally *t);
void suite_framework(test_tally *t);
void suite_calibrate(test_tally *t);
void suite_allocate(test_tally *t);
void suite_deeppool(test_tally *t);
void suite_api(test_tally *t);

#endif
