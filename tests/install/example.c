/* The smallest program built against an installed libcomet (make
 * test-install compiles it with `pkg-config --cflags --libs comet`): the
 * default job of `comet estimate` (presets gpt3-175b, a100-80g-selene,
 * gpt3-175b-selene), its step time printed as the CLI's JSON prints it,
 * so the test can compare the two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <comet/comet.h>

static int read_preset(const char *kind, const char *name, comet_job *job, comet_error *err)
{
    const char *text = comet_preset_text(kind, name);
    if (!text)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "no preset %s", name);
    return comet_config_read_text(text, strlen(text), name, job, err);
}

int main(void)
{
    comet_job *job = malloc(sizeof *job);
    if (!job)
        return 1;
    comet_job_init(job);
    comet_error err;
    comet_error_clear(&err);
    comet_result r;
    if (read_preset("models", "gpt3-175b", job, &err) ||
        read_preset("systems", "a100-80g-selene", job, &err) ||
        read_preset("strategies", "gpt3-175b-selene", job, &err) ||
        comet_strategy_resolve(&job->model, &job->system, &job->strategy, NULL, &err) ||
        comet_estimate(&job->model, &job->system, &job->strategy, &r, &err)) {
        char line[1024];
        fprintf(stderr, "example: %s\n", comet_error_format(&err, line, sizeof line));
        free(job);
        return 1;
    }
    printf("%.10g\n", r.step_time);
    free(job);
    return 0;
}
