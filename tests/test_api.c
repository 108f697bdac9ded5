/* The entry layer other languages call (comet/api.h), in C so the
 * sanitized build runs it too: a job read from presets and documents
 * gives the CLI's estimate, knobs act as the CLI's flags, errors carry
 * the document's position and the knob's name, and the search, collective
 * and export entries render what the CLI prints. The Python package's
 * own tests (python/tests) check it against the CLI end to end. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comet/api.h"
#include "comet/comet.h"
#include "tests.h"

static comet_api *api_session(void)
{
    comet_api *api = NULL;
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_api_new(&api, &err), COMET_OK);
    return api;
}

static comet_api_job *default_job(void)
{
    const char *names[] = {COMET_DEFAULT_MODEL, COMET_DEFAULT_SYSTEM, COMET_DEFAULT_STRATEGY};
    const char *kinds[] = {"models", "systems", "strategies"};
    comet_api_job *job = NULL;
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_api_job_read(&job, 3, names, NULL, kinds, 0, &err), COMET_OK);
    return job;
}

/* The default job (read with defaults 2 from nothing) against the same
 * presets read by name, and against comet_estimate itself. */
static void test_api_estimate(void **state)
{
    (void)state;
    comet_api *api = api_session();
    comet_api_job *job = default_job(), *dflt = NULL;
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_api_job_read(&dflt, 0, NULL, NULL, NULL, 2, &err), COMET_OK);
    int n = comet_result_field_count();
    assert_true(n > 10 && strcmp(comet_result_field_name(0), "step_time_s") == 0);
    assert_null(comet_result_field_name(n));
    double a[64], b[64];
    bool feasible = false;
    char *json = NULL;
    assert_int_equal(comet_api_estimate(api, job, NULL, a, 64, &feasible, &json, &err), COMET_OK);
    assert_true(feasible);
    assert_non_null(strstr(json, "\"step_time_band\""));
    assert_int_equal(comet_api_estimate(api, dflt, "", b, 64, NULL, NULL, &err), COMET_OK);
    assert_true(a[0] == b[0]);

    comet_job *j = malloc(sizeof *j);
    comet_job_init(j);
    assert_int_equal(comet_job_read_preset(j, "models", COMET_DEFAULT_MODEL, &err), COMET_OK);
    assert_int_equal(comet_job_read_preset(j, "systems", COMET_DEFAULT_SYSTEM, &err), COMET_OK);
    assert_int_equal(comet_job_read_preset(j, "strategies", COMET_DEFAULT_STRATEGY, &err),
                     COMET_OK);
    j->strategy.tp = 4;
    j->strategy.pp = 16;
    comet_result r;
    assert_int_equal(comet_strategy_resolve(&j->model, &j->system, &j->strategy, NULL, &err),
                     COMET_OK);
    assert_int_equal(comet_estimate(&j->model, &j->system, &j->strategy, &r, &err), COMET_OK);
    assert_int_equal(comet_api_estimate(api, job, "tp=4;pp=16", a, 64, NULL, NULL, &err),
                     COMET_OK);
    assert_true(a[0] == r.step_time);
    free(j);
    comet_api_text_free(json);
    comet_api_job_free(dflt);
    comet_api_job_free(job);
    comet_api_free(api);
}

static void test_api_errors(void **state)
{
    (void)state;
    comet_api *api = api_session();
    comet_api_job *job = default_job(), *bad = NULL;
    comet_error err;
    comet_error_clear(&err);
    double v[64];
    assert_int_equal(comet_api_estimate(api, job, "tp=eight", v, 64, NULL, NULL, &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "tp");
    assert_int_equal(comet_api_estimate(api, job, "nope=1", v, 64, NULL, NULL, &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "nope");
    assert_int_equal(comet_api_estimate(api, job, "tp", v, 64, NULL, NULL, &err), COMET_EINPUT);
    assert_int_equal(comet_api_estimate(api, job, "recompute=most", v, 64, NULL, NULL, &err),
                     COMET_EINPUT);
    assert_non_null(strstr(err.message, "selective"));
    /* a strategy the system cannot hold: located in its document */
    const char *doc = "strategy:\n  tp: 3\n  pp: 1\n  dp: 1\n";
    const char *name = "s.yaml";
    comet_api_job *odd = NULL;
    assert_int_equal(comet_api_job_read(&odd, 1, &doc, &name, NULL, 1, &err), COMET_OK);
    assert_int_equal(comet_api_estimate(api, odd, NULL, v, 64, NULL, NULL, &err), COMET_EINPUT);
    assert_string_equal(err.file, "s.yaml");
    assert_true(err.line >= 1);
    const char *garbage = "model:\n  name: x\n  kind: bogus\n";
    assert_int_equal(comet_api_job_read(&bad, 1, &garbage, &name, NULL, 1, &err), COMET_EINPUT);
    assert_null(bad);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.key, "model.kind");
    const char *unknown = "gpt5";
    const char *kind = "models";
    assert_int_equal(comet_api_job_read(&bad, 1, &unknown, NULL, &kind, 1, &err), COMET_EINPUT);
    assert_non_null(strstr(err.message, "unknown model preset"));
    comet_api_job_free(odd);
    comet_api_job_free(job);
    comet_api_free(api);
}

static void test_api_search_collective_export(void **state)
{
    (void)state;
    comet_api *api = api_session();
    comet_api_job *job = default_job();
    comet_error err;
    comet_error_clear(&err);
    char *json = NULL;
    comet_api_search_options o = {.npus = 64, .top = 2, .threads = 1};
    assert_int_equal(comet_api_search(api, job, "global_batch=64", &o, &json, &err), COMET_OK);
    assert_non_null(strstr(json, "\"rank\": 2"));
    comet_api_text_free(json);
    o.npus = 0;
    assert_int_equal(comet_api_search(api, job, NULL, &o, &json, &err), COMET_EINPUT);
    assert_string_equal(err.key, "npus");

    comet_api_collective_options c = {.collective = "all-reduce", .bytes = 1 << 30, .npus = 64};
    assert_int_equal(comet_api_collective(job, &c, &json, &err), COMET_OK);
    assert_non_null(strstr(json, "\"collective\": \"all_reduce\""));
    comet_api_text_free(json);
    c.collective = "all-sum";
    assert_int_equal(comet_api_collective(job, &c, &json, &err), COMET_EINPUT);
    assert_string_equal(err.key, "collective");

    comet_api_sim_options so = {.fabric = 2};
    assert_int_equal(comet_api_simulate(job, "tp=8;pp=2;global_batch=8;interleave=1", &so, &json,
                                        &err),
                     COMET_OK);
    assert_non_null(strstr(json, "\"stages\": ["));
    comet_api_text_free(json);

    char dir[] = "/tmp/comet-api-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/t", dir);
    assert_int_equal(comet_api_export(job, "tp=8;pp=2;global_batch=8;interleave=1", prefix,
                                      &json, &err),
                     COMET_OK);
    assert_non_null(strstr(json, "\"ranks\": 16"));
    comet_api_text_free(json);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    comet_api_job_free(job);
    comet_api_free(api);
}

void suite_api(test_tally *t)
{
    const struct CMUnitTest api[] = {
        cmocka_unit_test(test_api_estimate),
        cmocka_unit_test(test_api_errors),
        cmocka_unit_test(test_api_search_collective_export),
    };
    RUN_GROUP(t, api);
}
