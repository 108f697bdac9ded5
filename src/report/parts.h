/* Internal: pieces the text report and the HTML report builders share. */
#ifndef COMET_REPORT_PARTS_H
#define COMET_REPORT_PARTS_H

#include <stddef.h>
#include "comet/band.h"
#include "comet/estimate.h"
#include "comet/fabric.h"
#include "comet/page.h"
#include "comet/simulate.h"
#include "comet/strategy.h"

/* A JSON number with `digits` significant digits, or null where JSON has
 * none (NaN, inf): a result must stay valid JSON whatever happens. */
void report_json_number(comet_buf *b, double v, int digits);

/* comet_report_json's object without its schema_version: an estimate
 * nested in a search's ranking or a sweep's row. */
void report_estimate_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r, const comet_band *band);

/* The estimate's CSV columns as comet writes them now, or as an older
 * comet did: before the version column (cost, mfu, hfu without units)
 * and before the units (step_time_low, step_time_high too). A sweep
 * resumes a file of either. */
typedef enum report_csv_era {
    REPORT_CSV_NOW = 0,
    REPORT_CSV_BEFORE_VERSION,
    REPORT_CSV_BEFORE_UNITS,
} report_csv_era;
void report_csv_columns(comet_buf *b, report_csv_era era);

/* Where a step's time goes: the parts that add up to step_time. */
#define REPORT_TIME_PARTS 10
typedef struct time_part {
    const char *name;
    double seconds;
} time_part;
int report_time_parts(const comet_result *r, time_part parts[REPORT_TIME_PARTS]);

/* "tp 8 · pp 8 · dp 4 · mb 1 · v 2 · cp 2 · ep 8 · zero 1 · flash": a strategy in one
 * short line (cp and ep when above 1). */
const char *report_strategy_label(const comet_strategy *s, char *out, size_t cap);

/* A stacked chart of step-time breakdowns, one bar per labelled result. */
comet_chart *report_breakdown_chart(comet_page *p, const char *id, const char *title);
/* An uncertainty band as page facts (range, rows, basis) and a notice per
 * note; nothing for NULL. */
void report_band_facts(comet_page *p, const comet_band *band);
void report_breakdown_add(comet_chart *c, const char *label, const comet_result *r,
                          const comet_band *band);

/* Memory per NPU per tier against each tier's capacity. */
void report_memory_chart(comet_page *p, const char *id, const comet_result *r);

/* A result's drill-down on table row `row`: where its step time goes and
 * its memory per NPU in each tier against the capacity. */
void report_drill_result(comet_table *t, long row, const comet_result *r);

/* Facts about one result: step time, throughput, MFU, cost, fit. */
void report_result_facts(comet_page *p, const comet_result *r);

/* The fabric's links on a page (a collective's, a step's): the most
 * utilized links (a table and a chart), the bytes per tier (as flows and
 * alone, stacked, when alone_per_tier is given) and the watched links'
 * utilization over time, a heatmap of 24 bins over `time`. */
typedef struct report_links {
    double time;
    int n_hot;
    const comet_sim_link *hot;        /* name, bytes, alone_bytes, utilization */
    const double *bytes_per_tier;     /* [3] */
    const double *alone_per_tier;     /* [3], NULL: nothing ran alone (a collective) */
    int n_series;
    const comet_link_series *series;
    const char *series_name[COMET_FABRIC_HOT_LINKS];
    bool series_cut;
    const char *series_note;          /* a line under the heatmap, or NULL */
    const char *no_series;            /* the notice without series (NULL: a default) */
} report_links;
void report_fabric_links(comet_page *p, const report_links *l);

#endif
