/* The library's compact entry layer (comet/api.h): what the CLI's job
 * commands do between reading their flags and printing, offered to other
 * languages and programs. A session holds the uncertainty-band model (built
 * once: it is most of a one-shot estimate's time), a job the inputs read
 * once; both are read-only afterwards, so threads share them. Results are
 * rendered by the report functions the CLI's --json uses, so a caller sees
 * the CLI's numbers and the CLI's errors. It sits on top of the library:
 * it reads presets (config), runs searches and sweeps (explore), renders
 * (report) and exports traces (chakra). */
#include "comet/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comet/chakra.h"
#include "comet/files.h"
#include "comet/knobs.h"
#include "comet/methodology.h"
#include "comet/network.h"
#include "comet/report.h"
#include "comet/search.h"
#include "comet/simulate.h"
#include "comet/study.h"
#include "comet/sweep.h"
#include "comet/validate.h"

struct comet_api {
    comet_band_model *bands;
};

struct comet_api_job {
    comet_job job;
};

comet_status comet_band_model_builtin(comet_band_model **out, comet_error *err)
{
    *out = NULL;
    const char *const *names = comet_preset_names("validation");
    int n = 0;
    while (names && names[n])
        n++;
    comet_validation_table **tables = calloc((size_t)(n > 0 ? n : 1), sizeof *tables);
    comet_validation_report *reports = calloc((size_t)(n > 0 ? n : 1), sizeof *reports);
    const comet_validation_report **rp = calloc((size_t)(n > 0 ? n : 1), sizeof *rp);
    comet_status st = COMET_OK;
    int done = 0;
    if (!tables || !reports || !rp)
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                             "out of memory building the uncertainty bands");
    for (; !st && done < n; done++) {
        st = comet_validation_preset(names[done], &tables[done], err);
        if (!st && (st = comet_validate(tables[done], &reports[done], err)))
            comet_validation_free(tables[done]);
        rp[done] = &reports[done];
    }
    if (st)
        done--; /* the one that failed holds nothing */
    else
        st = comet_band_model_new((const comet_validation_table *const *)tables, rp, n, out, err);
    for (int i = 0; i < done; i++) {
        comet_validation_report_free(&reports[i]);
        comet_validation_free(tables[i]);
    }
    free(rp);
    free(reports);
    free(tables);
    return st;
}

static bool *section_flag(comet_job *job, const char *kind)
{
    return kind[1] == 'o' ? &job->has_model : kind[1] == 'y' ? &job->has_system
                                                             : &job->has_strategy;
}

comet_status comet_job_read_preset(comet_job *job, const char *kind, const char *name,
                                   comet_error *err)
{
    static const char *const nouns[] = {"model", "system", "strategy"};
    if (strcmp(kind, "models") != 0 && strcmp(kind, "systems") != 0 &&
        strcmp(kind, "strategies") != 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "unknown preset kind \"%s\" (models, systems or strategies)",
                               kind);
    const char *noun = nouns[kind[1] == 'o' ? 0 : kind[1] == 'y' ? 1 : 2];
    const char *text = comet_preset_text(kind, name);
    if (!text) {
        char known[512] = "";
        const char *const *names = comet_preset_names(kind);
        for (size_t i = 0; names && names[i]; i++) {
            if (i)
                strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, names[i], sizeof known - strlen(known) - 1);
        }
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "unknown %s preset \"%s\" (known: %s)", noun, name, known);
    }
    bool *has = section_flag(job, kind);
    bool had = *has;
    *has = false;
    char label[128];
    snprintf(label, sizeof label, "preset %s", name);
    comet_status st = comet_config_read_text(text, strlen(text), label, job, err);
    if (!st && !*has)
        st = comet_error_set(err, COMET_EINPUT, name, 0, 0, NULL, "has no %s: section", noun);
    if (st)
        *has = had;
    return st;
}

comet_status comet_job_defaults(comet_job *job, bool with_strategy, comet_error *err)
{
    if (with_strategy && !job->has_strategy &&
        comet_job_read_preset(job, "strategies", COMET_DEFAULT_STRATEGY, err))
        return err->status;
    if (!job->has_model && comet_job_read_preset(job, "models", COMET_DEFAULT_MODEL, err))
        return err->status;
    if (!job->has_system && comet_job_read_preset(job, "systems", COMET_DEFAULT_SYSTEM, err))
        return err->status;
    return COMET_OK;
}

comet_status comet_api_new(comet_api **out, comet_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = comet_band_model_builtin(&(*out)->bands, err);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

void comet_api_free(comet_api *api)
{
    if (!api)
        return;
    comet_band_model_free(api->bands);
    free(api);
}

comet_status comet_api_job_read(comet_api_job **out, int n, const char *const *texts,
                                const char *const *names, const char *const *kinds,
                                int defaults, comet_error *err)
{
    *out = malloc(sizeof **out);
    if (!*out)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_job *job = &(*out)->job;
    comet_job_init(job);
    comet_status st = COMET_OK;
    for (int i = 0; i < n && !st; i++) {
        if (!texts[i])
            st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "input %d is empty", i + 1);
        else if (kinds && kinds[i])
            st = comet_job_read_preset(job, kinds[i], texts[i], err);
        else
            st = comet_config_read_text(texts[i], strlen(texts[i]),
                                        names && names[i] ? names[i] : "<input>", job, err);
    }
    if (!st && defaults > 0)
        st = comet_job_defaults(job, defaults > 1, err);
    if (st) {
        free(*out);
        *out = NULL;
    }
    return st;
}

void comet_api_job_free(comet_api_job *job)
{
    free(job);
}

void comet_api_text_free(char *text)
{
    free(text);
}

/* "tp=8;sp=true" onto s, each through the knob table's reader of saved
 * results (comet_strategy_set_field); an error names the knob. */
static comet_status apply_knobs(const char *knobs, comet_strategy *s, comet_error *err)
{
    if (!knobs)
        return COMET_OK;
    for (const char *p = knobs; *p;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char word[256];
        if (len >= sizeof word)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "a strategy knob is too long: \"%.40s...\"", p);
        memcpy(word, p, len);
        word[len] = '\0';
        p += len + (end ? 1 : 0);
        if (!len)
            continue;
        char *eq = strchr(word, '=');
        if (!eq)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, word,
                                   "a strategy knob needs a value (name=value)");
        *eq = '\0';
        const char *value = eq + 1;
        const comet_knob *k = comet_knob_named(word);
        if (!k)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, word, "unknown strategy knob");
        if (k->type == COMET_KNOB_T_BOOL && (strcmp(value, "True") == 0 || strcmp(value, "False") == 0))
            value = value[0] == 'T' ? "true" : "false";
        if (!comet_knob_set_text(k, s, value)) {
            if (k->type == COMET_KNOB_T_CHOICE) {
                char known[256] = "";
                for (int v = 0; v < k->n_values; v++) {
                    if (v)
                        strncat(known, ", ", sizeof known - strlen(known) - 1);
                    strncat(known, k->value_name(v), sizeof known - strlen(known) - 1);
                }
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, word,
                                       "expected one of %s, got \"%s\"", known, value);
            }
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, word,
                                   "expected %s, got \"%s\"",
                                   k->type == COMET_KNOB_T_BOOL  ? "true or false"
                                   : k->type == COMET_KNOB_T_INT ? "an integer"
                                                                 : "a value the knob takes",
                                   value);
        }
    }
    return COMET_OK;
}

/* A rendered buffer handed over as a malloc'd text. */
static comet_status take_text(comet_buf *b, char **out, comet_error *err)
{
    if (b->failed || !b->data) {
        comet_buf_free(b);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                               "out of memory rendering the result");
    }
    *out = b->data; /* the buffer's text is malloc'd and ends in a NUL */
    b->data = NULL;
    return COMET_OK;
}

/* An error about a key of the inputs pointed at its file, line and column. */
static comet_status located(const comet_api_job *job, comet_error *err)
{
    comet_srcmap_locate(&job->job.srcmap, err);
    return err->status;
}

comet_status comet_api_estimate(const comet_api *api, const comet_api_job *job, const char *knobs,
                                double *values, int n_values, bool *feasible, char **json,
                                comet_error *err)
{
    const comet_job *j = &job->job;
    comet_strategy s = j->strategy;
    comet_result r;
    if (apply_knobs(knobs, &s, err))
        return err->status;
    if (comet_strategy_resolve(&j->model, &j->system, &s, NULL, err) ||
        comet_estimate(&j->model, &j->system, &s, &r, err))
        return located(job, err);
    if (values)
        comet_result_values(&r, values, n_values);
    if (feasible)
        *feasible = r.feasible;
    if (!json)
        return COMET_OK;
    comet_band band;
    comet_band_for(api->bands, &j->model, &j->system, &s, &r, &band);
    comet_buf b;
    comet_buf_init(&b);
    comet_report_json(&b, &j->model, &j->system, &s, &r, &band);
    return take_text(&b, json, err);
}

comet_status comet_api_search(const comet_api *api, const comet_api_job *job, const char *knobs,
                              const comet_api_search_options *o, char **json, comet_error *err)
{
    const comet_job *j = &job->job;
    comet_search_request req;
    memset(&req, 0, sizeof req);
    req.model = &j->model;
    req.system = &j->system;
    comet_search_space_defaults(&req.space);
    req.space.base = j->strategy;
    if (apply_knobs(knobs, &req.space.base, err))
        return err->status;
    req.space.npus = o->npus;
    req.space.global_batch = req.space.base.global_batch;
    req.space.max_global_batch = o->max_global_batch;
    req.space.max_microbatch = o->max_microbatch;
    req.space.max_cp = o->max_cp;
    req.space.vary_flash = !o->no_flash;
    req.space.vary_offload = !o->no_offload;
    req.space.keep_dominated = o->keep_dominated;
    req.top_k = o->top > 0 ? o->top : 10;
    req.shards = 1;
    if (o->objective && comet_objective_parse(o->objective, &req.objective))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "objective",
                               "expected time, throughput or cost, got \"%s\"", o->objective);
    if (o->npus < 1 || o->npus > COMET_MAX_NPUS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "npus",
                               "is required: how many NPUs to search over (1 to %lld)",
                               (long long)COMET_MAX_NPUS);
    if (!j->has_strategy && o->max_global_batch == 0 && req.space.global_batch <= 1 &&
        !(knobs && knobs[0]))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "global_batch",
                               "is required (or max_gbs): the global batch to search for");
    if (req.top_k > COMET_SEARCH_MAX_TOP)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "top", "at most %d",
                               COMET_SEARCH_MAX_TOP);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = o->threads > 0 ? o->threads : cores > 0 ? (int)cores : 1;
    comet_ranked *top = calloc((size_t)req.top_k, sizeof *top);
    comet_band *bands = calloc((size_t)req.top_k, sizeof *bands);
    if (!top || !bands) {
        free(top);
        free(bands);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    int n = 0;
    comet_search_stats stats;
    comet_status st = comet_search_threads(&req, threads, top, &n, &stats, err);
    if (st) {
        free(top);
        free(bands);
        return located(job, err);
    }
    for (int i = 0; i < n; i++)
        comet_band_for(api->bands, req.model, req.system, &top[i].strategy, &top[i].result,
                       &bands[i]);
    comet_buf b;
    comet_buf_init(&b);
    comet_report_search_json(&b, &req, top, n, &stats, bands);
    free(top);
    free(bands);
    return take_text(&b, json, err);
}

typedef struct sweep_ctx {
    comet_api_progress progress;
    void *ctx;
    volatile bool stop;
} sweep_ctx;

static bool sweep_stop(void *ctx)
{
    return ((sweep_ctx *)ctx)->stop;
}

static void sweep_row(void *ctx, uint64_t done, uint64_t total, uint64_t start)
{
    (void)start;
    sweep_ctx *c = ctx;
    if (c->progress && !c->progress(c->ctx, done, total))
        c->stop = true;
}

comet_status comet_api_sweep(const comet_api *api, const char *study_text, const char *name,
                             const char *dir, int threads, bool resume, bool force,
                             comet_api_progress progress, void *ctx, comet_error *err)
{
    comet_study *study = malloc(sizeof *study);
    if (!study)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = comet_study_read_text(study_text, strlen(study_text),
                                            name ? name : "<study>", study, err);
    if (!st && (!dir || !dir[0]))
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "dir",
                             "a sweep needs a directory for its results");
    if (st) {
        free(study);
        return st;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    sweep_ctx c = {.progress = progress, .ctx = ctx, .stop = false};
    comet_sweep_options opt = {
        .dir = dir,
        .format = &comet_sweep_rows_format,
        .threads = threads > 0 ? threads : cores > 0 ? (int)cores : 1,
        .resume = resume,
        .force = force,
        .hooks = {.ctx = &c, .stop = sweep_stop, .row_written = sweep_row},
        .bands = api->bands,
    };
    int lock = -1;
    st = comet_sweep_run(study, &opt, &lock, err);
    if (lock >= 0)
        comet_dir_unlock(lock);
    free(study);
    return st;
}

comet_status comet_api_export(const comet_api_job *job, const char *knobs, const char *prefix,
                              char **json, comet_error *err)
{
    const comet_job *j = &job->job;
    comet_strategy s = j->strategy;
    if (apply_knobs(knobs, &s, err))
        return err->status;
    if (!prefix || !prefix[0])
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "prefix",
                               "is required (the trace prefix, e.g. out/gpt3)");
    comet_export_info info;
    if (comet_export_chakra(&j->model, &j->system, &s, prefix, NULL, &info, err))
        return located(job, err);
    if (!json)
        return COMET_OK;
    comet_buf b;
    comet_buf_init(&b);
    comet_buf_printf(&b, "{\"prefix\": ");
    comet_buf_json_string(&b, prefix);
    comet_buf_printf(&b, ", \"ranks\": %d, \"nodes\": %zu, \"deps\": %llu, \"bytes\": %llu}\n",
                     info.ranks, info.nodes, (unsigned long long)info.deps,
                     (unsigned long long)info.bytes);
    return take_text(&b, json, err);
}

comet_status comet_collective_parse_flag(const char *flag, const char *value,
                                         comet_collective *out, comet_error *err)
{
    char name[32];
    snprintf(name, sizeof name, "%s", value ? value : "");
    for (char *p = name; *p; p++)
        if (*p == '-')
            *p = '_';
    if (comet_collective_parse(name, out) || *out == COMET_COLL_NONE)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "expected all-reduce, reduce-scatter, all-gather, all-to-all, "
                               "broadcast, reduce, gather, scatter or barrier, got \"%s\"",
                               value ? value : "");
    return COMET_OK;
}

static comet_status parse_scheduler(const char *flag, const char *v, comet_sim_scheduler *out,
                                    comet_error *err)
{
    if (!v || strcmp(v, "baseline") == 0)
        *out = COMET_SCHED_BASELINE;
    else if (strcmp(v, "themis") == 0)
        *out = COMET_SCHED_THEMIS;
    else
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "expected baseline or themis, got \"%s\"", v);
    return COMET_OK;
}

comet_status comet_api_simulate(const comet_api_job *job, const char *knobs,
                                const comet_api_sim_options *o, char **json, comet_error *err)
{
    const comet_job *j = &job->job;
    comet_strategy s = j->strategy;
    if (apply_knobs(knobs, &s, err))
        return err->status;
    comet_sim_fabric_links links = {0};
    comet_sim_step_options opt = {
        .fidelity = o->congestion ? COMET_SIM_CONGESTION : COMET_SIM_UNAWARE,
        .fabric = o->fabric == 1   ? COMET_SIM_FABRIC_ON
                  : o->fabric == 2 ? COMET_SIM_FABRIC_OFF
                                   : COMET_SIM_FABRIC_AUTO,
        .links = o->fabric == 2 ? NULL : &links,
        .max_tasks = o->max_tasks,
    };
    if (o->fabric < 0 || o->fabric > 2)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "fabric",
                               "expected 0 (automatic), 1 (on) or 2 (off), got %d", o->fabric);
    if (parse_scheduler("scheduler", o->scheduler, &opt.scheduler, err))
        return err->status;
    if (o->max_tasks < 0 || o->max_tasks > COMET_SIM_MAX_TASKS_LIMIT)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "max_tasks",
                               "expected 1 to %lld", (long long)COMET_SIM_MAX_TASKS_LIMIT);
    comet_sim_step_result *r = malloc(sizeof *r);
    if (!r)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_result est;
    comet_status st = COMET_OK;
    if (comet_strategy_resolve(&j->model, &j->system, &s, NULL, err) ||
        comet_estimate(&j->model, &j->system, &s, &est, err) ||
        comet_sim_step(&j->model, &j->system, &s, &opt, r, err))
        st = located(job, err);
    if (!st) {
        comet_buf b;
        comet_buf_init(&b);
        comet_report_sim_step_json(&b, &j->model, &j->system, r, &est, opt.links);
        st = take_text(&b, json, err);
    }
    comet_sim_fabric_links_free(&links);
    free(r);
    return st;
}

comet_status comet_api_collective(const comet_api_job *job, const comet_api_collective_options *o,
                                  char **json, comet_error *err)
{
    const comet_system *sys = &job->job.system;
    comet_collective c;
    comet_sim_options opt;
    comet_sim_options_defaults(&opt);
    if (comet_collective_parse_flag("collective", o->collective, &c, err) ||
        parse_scheduler("scheduler", o->scheduler, &opt.scheduler, err))
        return err->status;
    if (!(o->bytes > 0.0) || o->bytes > 1e18)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "bytes",
                               "expected a size above 0 and at most 1e18 bytes, got %g",
                               o->bytes);
    if (o->splits < 0 || o->splits > 65536 || o->active_chunks < 0 || o->active_chunks > 64)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0,
                               o->splits < 0 || o->splits > 65536 ? "splits" : "active_chunks",
                               "out of range (splits 1 to 65536, active_chunks 1 to 64)");
    if (o->npus < 0 || o->npus > (1 << 30))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "npus", "expected 1 to %d",
                               1 << 30);
    opt.fidelity = o->congestion ? COMET_SIM_CONGESTION : COMET_SIM_UNAWARE;
    if (o->splits)
        opt.splits = (int)o->splits;
    if (o->active_chunks)
        opt.active_chunks = (int)o->active_chunks;
    int64_t npus = o->npus;
    if (npus == 0) {
        npus = 1;
        for (int d = 0; d < sys->n_dims; d++)
            npus *= sys->dims[d].size;
        if (npus == 0)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "npus",
                                   "is needed: system %s grows to fit (its outermost "
                                   "dimension is auto)", sys->name);
    }
    int64_t sizes[COMET_MAX_DIMS];
    if (comet_system_layout(sys, npus, sizes, err)) {
        snprintf(err->key, sizeof err->key, "npus");
        return err->status;
    }
    comet_sim_collective_result r;
    if (comet_sim_collective(sys, sizes, c, o->bytes, &opt, &r, err))
        return err->status;
    comet_system *chunked = malloc(sizeof *chunked);
    if (!chunked)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    *chunked = *sys;
    chunked->collective_chunks = opt.splits > 0 ? opt.splits : sys->collective_chunks;
    double analytic = comet_collective_time(chunked, sizes, c, o->bytes);
    free(chunked);
    comet_buf b;
    comet_buf_init(&b);
    comet_report_sim_collective_json(&b, sys, sizes, npus, c, o->bytes, &r, analytic);
    return take_text(&b, json, err);
}

comet_status comet_study_outcome_run(const comet_study *study, const char *results_csv,
                                     int threads, const comet_band_model *bands,
                                     comet_study_outcome *out, comet_error *err)
{
    comet_status st = COMET_OK;
    for (int m = 0; !st && m < study->n_models; m++)
        st = comet_study_findings(study, m, threads, &out->findings[m], err);
    for (int m = 0; !st && bands && m < study->n_models; m++)
        if (out->findings[m].has_best)
            comet_band_for(bands, &study->models[m], &study->system,
                           &out->findings[m].best.strategy, &out->findings[m].best.result,
                           &out->best_bands[m]);
    if (!st)
        st = comet_results_read(results_csv, &out->results, err);
    for (int m = 0; !st && m < study->n_models; m++) {
        comet_study_conclude(&out->results, m, &out->conclusions[m]);
        st = comet_study_check_pick(study, &out->conclusions[m], err);
        if (!st)
            st = comet_study_allocate(study, &out->conclusions[m], err);
        if (!st)
            st = comet_study_compare_systems(study, &out->results, &out->conclusions[m], err);
    }
    return st;
}

void comet_study_outcome_free(comet_study_outcome *out)
{
    comet_results_free(&out->results);
}

comet_status comet_api_study(const comet_api *api, const char *study_text, const char *name,
                             const char *dir, int threads, bool resume, bool force,
                             comet_api_progress progress, void *ctx, char **summary,
                             comet_error *err)
{
    if (comet_api_sweep(api, study_text, name, dir, threads, resume, force, progress, ctx, err))
        return err->status;
    comet_study *study = malloc(sizeof *study);
    comet_study_outcome *out = calloc(1, sizeof *out);
    char csv[4096];
    comet_status st = COMET_OK;
    if (!study || !out)
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    else if ((size_t)snprintf(csv, sizeof csv, "%s/results.csv", dir) >= sizeof csv)
        st = comet_error_set(err, COMET_EINPUT, dir, 0, 0, NULL, "the directory's name is too long");
    if (!st)
        st = comet_study_read_text(study_text, strlen(study_text), name ? name : "<study>", study,
                                   err);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!st)
        st = comet_study_outcome_run(study, csv,
                                     threads > 0 ? threads : cores > 0 ? (int)cores : 1,
                                     api->bands, out, err);
    if (!st) {
        comet_buf b;
        comet_buf_init(&b);
        comet_study_summary(&b, study, out->findings, out->conclusions, study->n_models,
                            &out->results, NULL, out->best_bands);
        st = take_text(&b, summary, err);
    }
    if (out)
        comet_study_outcome_free(out);
    free(out);
    free(study);
    return st;
}
