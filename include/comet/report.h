/* Rendering results for people (an aligned text table) and for machines
 * (JSON, CSV) into a comet_buf. */
#ifndef COMET_REPORT_H
#define COMET_REPORT_H

#include <stdbool.h>
#include "comet/buf.h"
#include "comet/estimate.h"
#include "comet/page.h"
#include "comet/search.h"
#include "comet/simulate.h"

void comet_report_text(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r);
void comet_report_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r);
/* A JSON string literal of text (quotes, backslashes, control characters escaped). */
void comet_report_json_string(comet_buf *b, const char *text);
/* CSV header line, then one row per result. */
void comet_report_csv_header(comet_buf *b);
void comet_report_csv_row(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r);

/* HTML report pages (see comet/page.h) for one estimate, a strategy
 * search (best first) and a simulated step (timeline optional; estimate,
 * when given, is compared with the simulation). */
void comet_report_page_estimate(comet_page *p, const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, const comet_result *r);
void comet_report_page_search(comet_page *p, const comet_model *m, const comet_system *sys,
                              int64_t npus, const comet_ranked *top, int n_top,
                              const comet_search_stats *stats);
void comet_report_page_simulate(comet_page *p, const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, const comet_sim_step_result *r,
                                const comet_sim_timeline *timeline,
                                const comet_result *estimate);

/* Set the field a CSV/JSON column names (as the writers above name them);
 * false when the name is not one of them or the text does not parse, and
 * for a count (npus, microbatches) when the value is not a whole number
 * within int64 (inf, NaN, 1e300, 2.5) or, for a strategy knob held in an
 * int, outside int. */
bool comet_result_set_field(comet_result *r, const char *name, double value);
bool comet_strategy_set_field(comet_strategy *s, const char *name, const char *text);

#endif
