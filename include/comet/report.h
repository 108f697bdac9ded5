/* Rendering results for people (an aligned text table) and for machines
 * (JSON, CSV) into a comet_buf. */
#ifndef COMET_REPORT_H
#define COMET_REPORT_H

#include <stdbool.h>
#include "comet/buf.h"
#include "comet/estimate.h"

void comet_report_text(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r);
void comet_report_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r);
/* CSV header line, then one row per result. */
void comet_report_csv_header(comet_buf *b);
void comet_report_csv_row(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r);

/* Set the field a CSV/JSON column names (as the writers above name them);
 * false when the name is not one of them or the text does not parse. */
bool comet_result_set_field(comet_result *r, const char *name, double value);
bool comet_strategy_set_field(comet_strategy *s, const char *name, const char *text);

#endif
