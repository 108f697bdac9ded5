/* A compact entry layer over the library for other languages (the Python
 * package `comet` calls it through ctypes) and for programs that want the
 * CLI's results without its argument parsing: inputs are YAML or JSON
 * documents and preset names, outputs the same JSON the CLI's --json
 * prints (rendered by the same functions), errors the same comet_error.
 * Nothing here keeps global state: a comet_api session holds what is
 * worth building once (the uncertainty-band model), a comet_api_job the
 * inputs read once; both are read-only after creation, so any number of
 * threads may share them. Texts returned are malloc'd: free them with
 * comet_api_text_free. */
#ifndef COMET_API_H
#define COMET_API_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/band.h"
#include "comet/config.h"
#include "comet/error.h"
#include "comet/methodology.h"
#include "comet/results.h"

/* The job `comet estimate` runs when given nothing. */
#define COMET_DEFAULT_MODEL "gpt3-175b"
#define COMET_DEFAULT_SYSTEM "a100-80g-selene"
#define COMET_DEFAULT_STRATEGY "gpt3-175b-selene"

/* The uncertainty-band model of every built-in validation table
 * (presets/validation), each run through comet_validate: a few ms. */
comet_status comet_band_model_builtin(comet_band_model **out, comet_error *err);

/* Read preset NAME of kind "models", "systems" or "strategies" into job as
 * the CLI reads --model NAME: errors name the preset ("preset NAME"), an
 * unknown name lists the known ones, and the preset must hold the section. */
comet_status comet_job_read_preset(comet_job *job, const char *kind, const char *name,
                                   comet_error *err);

/* What the CLI's job commands read when an input is missing: with
 * with_strategy (estimate, simulate and export given no input and no knob)
 * the default strategy when the job has none; then the default model and
 * system where the job has none. */
comet_status comet_job_defaults(comet_job *job, bool with_strategy, comet_error *err);

typedef struct comet_api comet_api;
comet_status comet_api_new(comet_api **out, comet_error *err);
void comet_api_free(comet_api *api);

/* Inputs read once: n entries read in order, later sections winning as
 * the CLI's inputs do. Entry i is a document text (YAML or JSON) labelled
 * names[i] in errors, or, when kinds[i] is "models", "systems" or
 * "strategies", the preset texts[i] of that kind. kinds may be NULL.
 * defaults: 0 reads nothing more; 1 the default model and system where
 * none was read; 2 also the default strategy first when none was read
 * (comet_job_defaults). */
typedef struct comet_api_job comet_api_job;
comet_status comet_api_job_read(comet_api_job **out, int n, const char *const *texts,
                                const char *const *names, const char *const *kinds,
                                int defaults, comet_error *err);
void comet_api_job_free(comet_api_job *job);

/* Strategy knobs applied after the inputs, as the CLI's knob flags are:
 * "name=value" words separated by ';' with the knob names of the JSON
 * output's "strategy" object ("tp=8;sp=true;recompute=full"); NULL or ""
 * for none. */

/* One estimate (comet estimate). values (may be NULL) receives the
 * result's numeric fields in the order comet_result_field_name gives
 * (comet/report.h)
 * (at most n_values), *feasible whether it fits; json (may be NULL)
 * receives comet estimate --json's text. */
comet_status comet_api_estimate(const comet_api *api, const comet_api_job *job, const char *knobs,
                                double *values, int n_values, bool *feasible, char **json,
                                comet_error *err);

/* comet search: flags as the CLI's (0 or NULL: the CLI's default). */
typedef struct comet_api_search_options {
    int64_t npus;               /* required */
    int64_t max_global_batch, max_microbatch, max_cp;
    int top;                    /* default 10 */
    int threads;                /* default every online core */
    const char *objective;      /* time, throughput or cost */
    bool no_flash, no_offload, keep_dominated;
} comet_api_search_options;
comet_status comet_api_search(const comet_api *api, const comet_api_job *job, const char *knobs,
                              const comet_api_search_options *o, char **json, comet_error *err);

/* comet sweep: every design point of a study (a document with a study:
 * section, labelled name in errors) into dir/results.csv and
 * dir/results.jsonl, as comet sweep writes them; progress (may be NULL) is
 * called from the writing thread after each row with rows done and total;
 * when it returns false the sweep stops (COMET_ECANCELED, the rows so far
 * kept). */
typedef bool (*comet_api_progress)(void *ctx, uint64_t done, uint64_t total);
comet_status comet_api_sweep(const comet_api *api, const char *study_text, const char *name,
                             const char *dir, int threads, bool resume, bool force,
                             comet_api_progress progress, void *ctx, comet_error *err);

/* comet study's steps 1-3 and 5, once its sweep (step 4) has written
 * results_csv: each model's findings on the base cluster, its best
 * strategy's band (from bands; NULL leaves them empty), the conclusions
 * drawn from the saved rows and each pick checked. out must be zeroed;
 * free it with comet_study_outcome_free whatever the status. */
typedef struct comet_study_outcome {
    comet_findings findings[COMET_STUDY_MAX_MODELS];
    comet_band best_bands[COMET_STUDY_MAX_MODELS];
    comet_conclusions conclusions[COMET_STUDY_MAX_MODELS];
    comet_results results;
} comet_study_outcome;
comet_status comet_study_outcome_run(const comet_study *study, const char *results_csv,
                                     int threads, const comet_band_model *bands,
                                     comet_study_outcome *out, comet_error *err);
void comet_study_outcome_free(comet_study_outcome *out);

/* comet study: the sweep as comet_api_sweep runs it, then the outcome;
 * summary receives the summary comet study prints (malloc'd). */
comet_status comet_api_study(const comet_api *api, const char *study_text, const char *name,
                             const char *dir, int threads, bool resume, bool force,
                             comet_api_progress progress, void *ctx, char **summary,
                             comet_error *err);

/* comet export --chakra PREFIX: the job's step as Chakra traces and
 * ASTRA-sim files; json (may be NULL) receives what was written
 * ({"prefix", "ranks", "nodes", "deps", "bytes"}). */
comet_status comet_api_export(const comet_api_job *job, const char *knobs, const char *prefix,
                              char **json, comet_error *err);

/* comet simulate (the step form): the job's step on the event-driven
 * simulator beside its estimate. fabric: 0 automatic, 1 every transfer
 * on the fabric (--flows), 2 off (--no-flows); scheduler "baseline" or
 * "themis" (NULL: baseline); max_tasks 0: the default. */
typedef struct comet_api_sim_options {
    bool congestion;
    int fabric;
    const char *scheduler;
    int64_t max_tasks;
} comet_api_sim_options;
comet_status comet_api_simulate(const comet_api_job *job, const char *knobs,
                                const comet_api_sim_options *o, char **json, comet_error *err);

/* comet simulate --collective: one collective (all-reduce, all_gather, ...)
 * of `bytes` per NPU on the job's system, npus (0: the whole system)
 * laid out as the CLI does; splits 0: the system's; active_chunks 0: the
 * default. */
typedef struct comet_api_collective_options {
    const char *collective;
    double bytes;
    int64_t npus;
    int64_t splits;
    int64_t active_chunks;
    bool congestion;
    const char *scheduler;
} comet_api_collective_options;
comet_status comet_api_collective(const comet_api_job *job, const comet_api_collective_options *o,
                                  char **json, comet_error *err);

/* A collective named as the CLI takes it (all-reduce or all_reduce, ...);
 * an error names `flag`. */
comet_status comet_collective_parse_flag(const char *flag, const char *value,
                                         comet_collective *out, comet_error *err);

void comet_api_text_free(char *text);

#endif
