/* Rendering results for people (an aligned text table) and for machines
 * (JSON, CSV) into a comet_buf, and the HTML report pages (comet/page.h):
 * one estimate, a search, a simulated step, a sweep's saved results and a
 * study's methodology. */
#ifndef COMET_REPORT_H
#define COMET_REPORT_H

#include <stdbool.h>
#include "comet/allocate.h"
#include "comet/deeppool.h"
#include "comet/band.h"
#include "comet/buf.h"
#include "comet/calibrate.h"
#include "comet/estimate.h"
#include "comet/fabric.h"
#include "comet/methodology.h"
#include "comet/page.h"
#include "comet/results.h"
#include "comet/search.h"
#include "comet/simulate.h"
#include "comet/sweep.h"

/* One estimate as a table, or as a JSON object; band (may be NULL) adds the
 * step time's uncertainty band and its notes (include/comet/band.h). */
void comet_report_text(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r, const comet_band *band);
/* Every --json output of comet (estimate, search, simulate in its three
 * forms, allocate, partition, validate) opens with this "schema_version";
 * schema/json/COMMAND.schema.json documents each. It grows only when a
 * field changes meaning or goes away; new fields keep it. */
#define COMET_JSON_SCHEMA_VERSION 1

void comet_report_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r, const comet_band *band);
/* The band alone: "80 % band 12.9 to 14.5 s (...)" and a line per note,
 * each indented by `indent` spaces. */
void comet_report_band_text(comet_buf *b, const comet_band *band, int indent);
/* A JSON string literal of text (quotes, backslashes, control characters escaped). */
void comet_report_json_string(comet_buf *b, const char *text);
/* "tp:8x1 pp:1x8 dp:1x1": each group's span on each network dimension,
 * cp and ep only when they have more than one rank; n_dims dimensions, or
 * (n_dims <= 0) up to the last one any group spans. */
void comet_report_placement_text(const comet_strategy *s, int n_dims, char *out, size_t cap);
/* CSV header line, then one row per result; the last two columns are the
 * step time's uncertainty band, empty when band is NULL or has none. A
 * file opens each line with the schema_version column first
 * (comet_buf_csv_version_head, comet_buf_csv_version); these write the
 * estimate's columns, which a search's or a sweep's lines continue. */
void comet_report_csv_header(comet_buf *b);
void comet_report_csv_row(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r, const comet_band *band);

/* A sweep's rows as comet's results files hold them: the CSV header, one
 * CSV line and one JSON line per design point (index, status, design cost,
 * axis values, NPUs, then the best strategy's estimate fields); and the
 * same three as the runner's format (comet_sweep_options.format). */
void comet_sweep_csv_header(comet_buf *b, const comet_study *study);
void comet_sweep_csv_row(comet_buf *b, const comet_study *study, const comet_sweep_row *row);
void comet_sweep_jsonl_row(comet_buf *b, const comet_study *study, const comet_sweep_row *row);
extern const comet_sweep_format comet_sweep_rows_format;

/* HTML report pages (see comet/page.h) for one estimate, a strategy
 * search (best first) and a simulated step (timeline optional; estimate,
 * when given, is compared with the simulation). Bands (optional: NULL)
 * are the step times' uncertainty bands, one per estimate or ranked
 * strategy, drawn on the breakdown charts. */
void comet_report_page_estimate(comet_page *p, const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, const comet_result *r,
                                const comet_band *band);
void comet_report_page_search(comet_page *p, const comet_model *m, const comet_system *sys,
                              int64_t npus, const comet_ranked *top, int n_top,
                              const comet_search_stats *stats, const comet_band *bands);
void comet_report_page_simulate(comet_page *p, const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, const comet_sim_step_result *r,
                                const comet_sim_timeline *timeline,
                                const comet_result *estimate);

/* A collective simulated as flows on the fabric: `what` says which (one
 * line), analytic is the estimate's price of it; the hot links' series,
 * when the result has them, become a heatmap over time. */
void comet_report_page_flows(comet_page *p, const comet_system *sys, const comet_fabric *f,
                             const char *what, const comet_flow_result *r, double analytic);
/* A step run on the fabric (comet_sim_step_options.links): a section of
 * its links, the same parts as the collective's page, each link's bytes
 * those of its flows and of the transfers that ran alone. */
void comet_report_page_step_links(comet_page *p, const comet_sim_step_result *r,
                                  const comet_sim_fabric_links *links);

/* What comet_calibrate_report writes. */
typedef enum comet_calib_report_form {
    COMET_CALIB_REPORT_FULL = 0, /* Markdown: the keys, then every measurement by kind */
    COMET_CALIB_REPORT_KEYS,     /* Markdown: the keys' table alone */
    COMET_CALIB_REPORT_COMMENT   /* YAML comment lines: "#   key: base -> fitted" */
} comet_calib_report_form;

/* comet calibrate's fit-quality report: the fitted keys against the base
 * system's values, then every measurement against the fitted system's
 * price of it, by kind, with each kind's residual RMS and largest. */
void comet_calibrate_report(comet_buf *b, const comet_calib_result *r,
                            comet_calib_report_form form);

/* The numeric fields of a result, in the order and with the names the
 * JSON and CSV writers use: how many, the name of field i (NULL past the
 * last), and a result's values into out (at most cap; returns how many). */
int comet_result_field_count(void);
const char *comet_result_field_name(int i);
int comet_result_values(const comet_result *r, double *out, int cap);

/* comet search --json: the search's counts, then each ranked strategy as
 * comet_report_json writes it with its band (bands[i]). */
void comet_report_search_json(comet_buf *b, const comet_search_request *req,
                              const comet_ranked *top, int n, const comet_search_stats *st,
                              const comet_band *bands);

/* comet simulate --json: a simulated training step (links: the fabric's,
 * may be NULL) beside its estimate, and one simulated collective of
 * `bytes` per NPU on sizes[d] NPUs of each dimension, beside its price. */
void comet_report_sim_step_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                                const comet_sim_step_result *r, const comet_result *est,
                                const comet_sim_fabric_links *links);
void comet_report_sim_collective_json(comet_buf *b, const comet_system *sys,
                                      const int64_t sizes[COMET_MAX_DIMS], int64_t npus,
                                      comet_collective c, double bytes,
                                      const comet_sim_collective_result *r, double analytic);

/* Set the field a CSV/JSON column names (as the writers above name them);
 * false when the name is not one of them or the text does not parse, and
 * for a count (npus, microbatches) when the value is not a whole number
 * within int64 (inf, NaN, 1e300, 2.5) or, for a strategy knob held in an
 * int, outside int. */
bool comet_result_set_field(comet_result *r, const char *name, double value);
/* A result field's CSV column, where it names a unit the JSON key does
 * not ("cost" -> "cost_usd", "cost_per_mtoken_s" -> "cost_usd_per_mtoken_s",
 * "mfu" -> "mfu_fraction", "hfu" -> "hfu_fraction"), else the name itself;
 * and back (an older file's column, the field's own name, reads as itself). */
const char *comet_result_csv_column(const char *field);
const char *comet_result_field_of_column(const char *column);
bool comet_strategy_set_field(comet_strategy *s, const char *name, const char *text);
/* ... the same for a knob already looked up (comet/knobs.h). */
struct comet_knob;
bool comet_knob_set_text(const struct comet_knob *k, comet_strategy *s, const char *text);

/* A design for people: each swept axis (two or more values) as its short
 * name and value, "HBM 80 GiB · expansion none · nvlink 300 GB/s", or
 * "the base design" when nothing is swept. */
const char *comet_results_design_label(const comet_results *r, const comet_results_row *row,
                                       char *out, size_t cap);

/* How far an axis goes within its tolerance (comet_results_headroom), in
 * one line without a newline: "infiniband oversubscription: up to 8:1
 * within 5 % of 1:1 (step 2.29 s vs 2.24 s, +2.1 %; design $170 M vs
 * $180 M); 12:1 is +7.3 %". Nothing when h->axis < 0. */
void comet_headroom_text(comet_buf *b, const comet_results *r, const comet_headroom *h);
/* That line for every model and every oversubscription axis of the
 * results, one per line ("  gpt3-175b: ..."); nothing without such axes
 * (comet sweep's summary). */
void comet_headroom_summary(comet_buf *b, const comet_results *r);

/* The sweep report: the designs, per model the best and worst design, a
 * heatmap of two axes (heatmap[0] across, heatmap[1] down; NULL or -1:
 * the two that move step time most), the Pareto front of step time
 * against cost, the sensitivity of step time to each axis, the top
 * designs as a table and side by side, and the best design's memory. Each
 * part that the data cannot support says so instead. */
void comet_report_page_sweep(comet_page *p, const comet_results *r, const int *heatmap);

/* The printed summary (at most 30 lines) and the study report page:
 * sections for steps 1-3 and 5 around the sweep report of step 4. */
void comet_study_summary(comet_buf *b, const comet_study *study, const comet_findings *f,
                         const comet_conclusions *c, int n_models, const comet_results *r,
                         const char *report_path,
                         const comet_band *best_bands);
void comet_report_page_study(comet_page *p, const comet_study *study, const comet_findings *f,
                             const comet_conclusions *c, int n_models, const comet_results *r,
                             const int *heatmap,
                             const comet_band *best_bands);

/* comet partition's outcome (comet/partition.h): a text summary, JSON
 * (with every layer's neuron order and worker), and a report page with the
 * weight matrices' block structure before and after, the traffic matrix
 * between workers and the accuracy/traffic trade-off. */
struct comet_partition_outcome;
void comet_partition_text(comet_buf *b, const struct comet_partition_outcome *o);
void comet_partition_json(comet_buf *b, const struct comet_partition_outcome *o);
void comet_report_page_partition(comet_page *p, const struct comet_partition_outcome *o);

/* comet allocate's outputs (src/report/allocate_report.c): the splits,
 * each dimension's wait, utilization and marginal value, and the step
 * time across budgets, as text, JSON, CSV, and a page with charts. */
void comet_alloc_text(comet_buf *b, const comet_alloc_problem *p, const comet_alloc_result *r);
void comet_alloc_json(comet_buf *b, const comet_alloc_problem *p, const comet_alloc_result *r);
void comet_alloc_csv(comet_buf *b, const comet_alloc_problem *p, const comet_alloc_result *r);
void comet_report_page_allocate(comet_page *pg, const comet_alloc_problem *p,
                                const comet_alloc_result *r);

/* comet deeppool's outputs (src/report/deeppool_report.c): the burst
 * plan's runs against data parallelism, the multiplexed background jobs,
 * the strong-scaling curve; as text, JSON and a page with charts. */
void comet_deeppool_text(comet_buf *b, const comet_deeppool_problem *p,
                         const comet_deeppool_result *r);
void comet_deeppool_json(comet_buf *b, const comet_deeppool_problem *p,
                         const comet_deeppool_result *r);
void comet_report_page_deeppool(comet_page *pg, const comet_deeppool_problem *p,
                                const comet_deeppool_result *r);

#endif
