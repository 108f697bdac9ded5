/* Uncertainty bands on predicted step times (docs/validation.md, error
 * bars). A band model holds, for every validation row comet estimated and
 * that fits in memory, how far comet was off (measured / predicted) and
 * what the row ran (system, GPU class, framework, NPUs, model size,
 * sequence, dense or MoE). For a new prediction it picks the rows most like
 * the query (the same system and framework, else the same system, else the
 * same GPU class, else all), takes the 10th and 90th percentiles of their
 * ratios, widens them by the system's kernel-rate spread
 * (compute.efficiency_spread) weighted by the step's compute share, and
 * says where the query lies outside what those rows cover. The model is an
 * object the caller builds and frees: no global state, and it can be shared
 * read-only between threads. */
#ifndef COMET_BAND_H
#define COMET_BAND_H

#include "comet/estimate.h"
#include "comet/validate.h"

enum { COMET_BAND_MAX_NOTES = 4, COMET_BAND_NOTE_LEN = 160 };

/* The share of measured outcomes the band covers: 10th to 90th percentile. */
#define COMET_BAND_LEVEL 0.8

/* Where the query lies outside what the band's rows cover. */
typedef enum comet_band_flag {
    COMET_BAND_NEW_GPU = 1u << 0,       /* no validation row on a GPU of this peak */
    COMET_BAND_FEW_ROWS = 1u << 1,      /* fewer rows than COMET_BAND_MIN_ROWS in all */
    COMET_BAND_SCALE = 1u << 2,         /* NPUs outside half the rows' least to twice their most */
    COMET_BAND_MODEL_SIZE = 1u << 3,    /* parameters likewise */
    COMET_BAND_SEQUENCE = 1u << 4,      /* sequence length likewise */
    COMET_BAND_MOE = 1u << 5,           /* an MoE model, and none of the rows is one */
    COMET_BAND_NO_PREDICTION = 1u << 6, /* the prediction is not a positive time */
    COMET_BAND_FITTED = 1u << 7         /* some rows are ones a preset was fit to */
} comet_band_flag;

/* The fewest rows a group may hold before the next, wider group is taken. */
enum { COMET_BAND_MIN_ROWS = 8 };

typedef struct comet_band {
    double step_time;                   /* the prediction the band is about, s */
    double low, high;                   /* the band, s (0 when there is none) */
    double level;                       /* COMET_BAND_LEVEL */
    int rows;                           /* validation rows the band is drawn from */
    double spread;                      /* the kernel-rate spread folded in (1 sigma, relative) */
    char basis[COMET_BAND_NOTE_LEN];    /* which rows, e.g. "h100-80g-dgx, megatron" */
    unsigned flags;                     /* comet_band_flag */
    int n_notes;
    char notes[COMET_BAND_MAX_NOTES][COMET_BAND_NOTE_LEN];   /* one line per flag raised */
} comet_band;

typedef struct comet_band_model comet_band_model;

/* A band model from validation tables and their reports (comet_validate),
 * n of each; the rows are copied, the inputs may be freed afterwards. The
 * CLI builds one from every built-in table (cli_band_model). */
comet_status comet_band_model_new(const comet_validation_table *const *tables,
                                  const comet_validation_report *const *reports, int n,
                                  comet_band_model **out, comet_error *err);
void comet_band_model_free(comet_band_model *bm);
/* Rows the model holds. */
int comet_band_model_rows(const comet_band_model *bm);

/* The band around r->step_time for this job. Never fails: a query no row
 * resembles gets the band of all rows and a note saying so. */
void comet_band_for(const comet_band_model *bm, const comet_model *m, const comet_system *sys,
                    const comet_strategy *s, const comet_result *r, comet_band *out);

#endif
