/* Sweep rows for machines: one CSV line and one JSON line per design
 * point, with the format's version (CSV: the first column; JSON: the
 * first key), the point's index, status, design cost, axis values
 * (numbers; a torus shape as "4x4", comet_axis_value_text) and NPU count
 * ahead of the best strategy's usual estimate fields, and its uncertainty
 * band where the sweep computed one (CSV: the last two columns, empty
 * without; JSON: "step_time_band" in the best's object). */

#include <stdio.h>
#include <string.h>

#include "comet/report.h"
#include "parts.h"

/* results.csv's header as comet writes it now (schema_version first, the
 * axes and the estimate's columns with their units), or as an older comet
 * did: the same columns in the same order, without the version, and
 * named without units. */
static void sweep_header(comet_buf *b, const comet_study *study, report_csv_era era)
{
    if (era == REPORT_CSV_NOW)
        comet_buf_csv_version_head(b);
    comet_buf_printf(b, "index,status,%s",
                     era == REPORT_CSV_BEFORE_UNITS ? "design_cost" : "design_cost_usd");
    for (int a = 0; a < study->n_axes; a++) {
        char column[sizeof study->axes[a].name + 16];
        if (era == REPORT_CSV_NOW)
            comet_axis_column(&study->axes[a], column, sizeof column);
        else
            snprintf(column, sizeof column, "%s", study->axes[a].name);
        comet_buf_printf(b, ",%s", column);
    }
    comet_buf_printf(b, ",npus,");
    report_csv_columns(b, era);
}

void comet_sweep_csv_header(comet_buf *b, const comet_study *study)
{
    sweep_header(b, study, REPORT_CSV_NOW);
}

/* The headers of older comets, newest first, which --resume continues. */
static bool csv_header_older(comet_buf *b, const comet_study *study, int which)
{
    if (which < 0 || which > 1)
        return false;
    sweep_header(b, study, which == 0 ? REPORT_CSV_BEFORE_VERSION : REPORT_CSV_BEFORE_UNITS);
    return true;
}

void comet_sweep_csv_row(comet_buf *b, const comet_study *study, const comet_sweep_row *row)
{
    comet_buf_csv_version(b);
    comet_buf_printf(b, "%llu,%s,%.10g", (unsigned long long)row->index,
                     comet_point_status_name(row->status), row->cost);
    for (int a = 0; a < study->n_axes; a++) {
        char v[48];
        comet_buf_printf(b, ",%s", comet_axis_value_text(&study->axes[a], row->values[a], v,
                                                         sizeof v));
    }
    comet_buf_printf(b, ",%lld,", (long long)row->npus);
    comet_system sys;
    comet_study_point_system(study, row->index, &sys);
    comet_report_csv_row(b, &study->models[row->model], &sys, &row->best.strategy,
                         &row->best.result, &row->band);
}

void comet_sweep_jsonl_row(comet_buf *b, const comet_study *study, const comet_sweep_row *row)
{
    comet_buf_printf(b, "{\"schema_version\": %d, \"index\": %llu, \"status\": \"%s\", "
                        "\"design_cost\": %.10g, \"npus\": %lld, \"model\": ",
                     COMET_JSON_SCHEMA_VERSION, (unsigned long long)row->index, comet_point_status_name(row->status),
                     row->cost, (long long)row->npus);
    comet_report_json_string(b, study->models[row->model].name);
    comet_buf_printf(b, ", \"axes\": {");
    for (int a = 0; a < study->n_axes; a++) { /* a shape as a string, "4x4" */
        char v[48];
        const char *q = study->axes[a].kind == COMET_AXIS_DIM_SHAPE ? "\"" : "";
        comet_buf_printf(b, "%s\"%s\": %s%s%s", a ? ", " : "", study->axes[a].name, q,
                         comet_axis_value_text(&study->axes[a], row->values[a], v, sizeof v), q);
    }
    comet_buf_printf(b, "}, \"enumerated\": %llu, \"feasible\": %llu, \"best\": ",
                     (unsigned long long)row->stats.enumerated,
                     (unsigned long long)row->stats.feasible);
    if (row->status != COMET_POINT_OK) {
        comet_buf_printf(b, "null}\n");
        return;
    }
    comet_system sys;
    comet_study_point_system(study, row->index, &sys);
    /* the estimate's JSON object, folded onto this one line */
    size_t start = b->len;
    report_estimate_json(b, &study->models[row->model], &sys, &row->best.strategy,
                         &row->best.result, row->band.low > 0.0 ? &row->band : NULL);
    for (size_t i = start; i < b->len && b->data; i++)
        if (b->data[i] == '\n')
            b->data[i] = ' ';
    comet_buf_printf(b, "}\n");
}

const comet_sweep_format comet_sweep_rows_format = {
    .csv_header = comet_sweep_csv_header,
    .csv_row = comet_sweep_csv_row,
    .jsonl_row = comet_sweep_jsonl_row,
    .csv_header_older = csv_header_older,
};
