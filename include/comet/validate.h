/* Validation against published measurements: a table of rows, each a
 * model, a system and a strategy (the sections of an ordinary input
 * document) with the step time a source measured, stated the way the
 * source states it (step time, tokens/s per GPU, model TFLOP/s per GPU or
 * MFU under a FLOP-counting convention, GPU-hours per trillion tokens).
 * comet_validate converts each measurement to a step time in closed form,
 * estimates the row with comet_estimate and reports the signed error per
 * row and the summary statistics, overall and by system and framework.
 * Tables are embedded presets (presets/validation/NAME.yaml) or files;
 * the reader lives with the other readers (src/config), the work in
 * src/explore and the renderers in src/report (docs/validation.md). */
#ifndef COMET_VALIDATE_H
#define COMET_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/buf.h"
#include "comet/config.h"
#include "comet/error.h"
#include "comet/estimate.h"

#define COMET_VALIDATION_MAX_ROWS 256
#define COMET_VALIDATION_MAX_GROUPS 16

/* How a source stated its measurement. */
typedef enum comet_measure_kind {
    COMET_MEASURE_STEP_TIME = 0,        /* seconds per step */
    COMET_MEASURE_TOKENS_PER_S_PER_GPU,  /* tokens per second per GPU */
    COMET_MEASURE_MODEL_TFLOPS,          /* model TFLOP/s per GPU under `flops` */
    COMET_MEASURE_MFU,                   /* model FLOPs utilization under `flops`, of `peak` */
    COMET_MEASURE_GPU_HOURS,             /* GPU-hours per 10^12 training tokens */
    COMET_MEASURE_KIND_COUNT
} comet_measure_kind;

/* The FLOP-counting rules sources use for "model TFLOP/s" and MFU, per
 * token of training (forward and backward, no recomputation), with L
 * layers, hidden h, sequence s, vocabulary V, a heads and g key/value
 * heads, q the query width (heads x head width), f the MLP inner size
 * times the routed plus shared experts a token uses (gate 3/2 when gated)
 * summed over the layers:
 *   megatron         Megatron-LM's num_floating_point_operations (and
 *                    NeMo 1's, 24.07): 12 L h^2 [(1 + g/a + s/h) q/h] +
 *                    18 or 12 h f per layer + 6 h V; attention over the
 *                    whole s x s score matrix
 *   megatron_causal  Megatron-Bridge / NeMo 2: the same with s/h halved
 *                    (causal attention counts half the scores)
 *   6n               LLM Foundry, torchtitan: 6 N + 12 L h s, N the
 *                    parameters a token uses (embeddings included) */
typedef enum comet_flops_convention {
    COMET_FLOPS_MEGATRON = 0,
    COMET_FLOPS_MEGATRON_CAUSAL,
    COMET_FLOPS_6N,
    COMET_FLOPS_CONVENTION_COUNT
} comet_flops_convention;

const char *comet_measure_kind_name(comet_measure_kind k);
const char *comet_flops_convention_name(comet_flops_convention c);

typedef struct comet_measured {
    comet_measure_kind kind;
    double value;                       /* in the kind's unit: s, tokens/s, TFLOP/s, a fraction
                                           (MFU), GPU-hours */
    comet_flops_convention flops;       /* MODEL_TFLOPS and MFU */
    double peak;                        /* MFU: the peak it is a fraction of, FLOP/s */
} comet_measured;

/* One published measurement. */
typedef struct comet_validation_row {
    char id[COMET_NAME_LEN];
    char source[384];                   /* citation: URL or commit, table */
    char notes[1024];                   /* what was inferred, and from what */
    comet_job job;                      /* model, system, strategy (and where their keys
                                           stood in the file) */
    comet_measured measured;
    bool fitted;                        /* a preset's constants were fit to this row */
} comet_validation_row;

typedef struct comet_validation_table {
    char name[COMET_NAME_LEN];
    char file[256];                     /* where it was read from, for errors */
    char about[1024];                   /* what the table holds */
    int n_rows;
    comet_validation_row *rows;
} comet_validation_table;

/* Reading a table (src/config): a document with one `validation:` section
 * holding `name`, `about` and `rows`; each row holds `id`, `source`,
 * `notes`, `measured` and the `model:`, `system:` and `strategy:` sections
 * of an input document (a preset name or a mapping that may start from
 * `preset: NAME`), or `input: NAME` to start from a strategy preset that
 * holds all three. Errors name file:line:column and the key path, e.g.
 * `validation.rows[3].strategy.tpp`. The table is allocated: free it with
 * comet_validation_free. */
comet_status comet_validation_read_text(const char *text, size_t len, const char *filename,
                                        comet_validation_table **out, comet_error *err);
comet_status comet_validation_read_file(const char *path, comet_validation_table **out,
                                        comet_error *err);
/* An embedded table by name (presets/validation/NAME.yaml). */
comet_status comet_validation_preset(const char *name, comet_validation_table **out,
                                     comet_error *err);
void comet_validation_free(comet_validation_table *t);
/* Point an error about row `row` that names a key of its job ("strategy.tp",
 * from comet_estimate) at the row's key in the file. */
void comet_validation_locate(const comet_validation_table *t, int row, comet_error *err);

/* FLOPs of training per token under a convention, for a Transformer. */
double comet_flops_per_token(comet_flops_convention c, const comet_model *m);
/* The step time a measurement means for this model and strategy (global
 * batch, sequence, NPUs): step time as given; tokens/s per GPU:
 * B s / (x N); GPU-hours per 10^12 tokens: B s x 3600 / (10^12 N); model
 * TFLOP/s per GPU: B s F / (N x 10^12); MFU: B s F / (N x mfu x peak). */
double comet_measured_step_time(const comet_measured *m, const comet_model *model,
                                const comet_strategy *s);

typedef enum comet_validation_status {
    COMET_VALIDATION_OK = 0,            /* estimated, fits in memory */
    COMET_VALIDATION_NO_FIT,            /* estimated, but comet's footprint exceeds memory */
    COMET_VALIDATION_REFUSED            /* comet refused the strategy (why says so) */
} comet_validation_status;

const char *comet_validation_status_name(comet_validation_status s);

typedef struct comet_validation_result {
    comet_validation_status status;
    int64_t npus;
    comet_framework framework;          /* the one priced (auto resolved) */
    double measured_step;               /* seconds */
    double predicted_step;              /* seconds (0 when refused) */
    double error;                       /* (predicted - measured) / measured */
    comet_result result;                /* comet's breakdown */
    comet_error why;                    /* REFUSED: the error, its key the job's */
} comet_validation_result;

/* Errors of the rows that were estimated and fit; the others counted. */
typedef struct comet_validation_stats {
    int rows;                           /* all rows of the group */
    int ok, no_fit, refused;
    double mean_abs, median_abs, worst_abs, bias;   /* fractions; bias: signed mean */
    int worst;                          /* index of the worst row, -1 when none */
} comet_validation_stats;

typedef struct comet_validation_group {
    char name[COMET_NAME_LEN];
    comet_validation_stats stats;
} comet_validation_group;

typedef struct comet_validation_report {
    int n_rows;
    comet_validation_result *rows;      /* one per table row, in order */
    comet_validation_stats overall;
    int n_systems, n_frameworks;
    comet_validation_group systems[COMET_VALIDATION_MAX_GROUPS];
    comet_validation_group frameworks[COMET_VALIDATION_MAX_GROUPS];
} comet_validation_report;

/* Run every row (src/explore). Only running out of memory is an error: a
 * row comet refuses is reported as such. Free with
 * comet_validation_report_free. */
comet_status comet_validate(const comet_validation_table *t, comet_validation_report *out,
                            comet_error *err);
void comet_validation_report_free(comet_validation_report *r);

/* Rendering (src/report): a table per row (id, GPUs, strategy, measured,
 * predicted, error) and the summary, as aligned text, Markdown, CSV (one
 * header line: comet_validation_csv_header, then each table's rows) or a
 * JSON object per table. */
typedef enum comet_validation_format {
    COMET_VALIDATION_TEXT = 0,
    COMET_VALIDATION_MD,
    COMET_VALIDATION_CSV,
    COMET_VALIDATION_JSON
} comet_validation_format;

void comet_validation_render(comet_buf *b, comet_validation_format f,
                             const comet_validation_table *t, const comet_validation_report *r);
void comet_validation_csv_header(comet_buf *b);

#endif
