/* Sweep rows for machines: one CSV line and one JSON line per design
 * point, with the point's index, status, design cost, axis values (numbers;
 * a torus shape as "4x4", comet_axis_value_text) and NPU count ahead of
 * the best strategy's usual estimate fields, and its uncertainty band where the sweep computed one (CSV: the last two
 * columns, empty without; JSON: "step_time_band" in the best's object). */

#include <stdio.h>
#include <string.h>

#include "comet/report.h"
#include "parts.h"

void comet_sweep_csv_header(comet_buf *b, const comet_study *study)
{
    comet_buf_printf(b, "index,status,design_cost_usd");
    for (int a = 0; a < study->n_axes; a++)
        comet_buf_printf(b, ",%s", study->axes[a].name);
    comet_buf_printf(b, ",npus,");
    comet_report_csv_header(b);
}

/* The header before the CSV columns named their units (design_cost,
 * step_time_low, step_time_high), which --resume still continues: the
 * columns are the same, in the same order. */
static void csv_header_before_units(comet_buf *b, const comet_study *study)
{
    comet_buf now;
    comet_buf_init(&now);
    comet_sweep_csv_header(&now, study);
    static const char cost[] = "index,status,design_cost_usd";
    static const char band[] = ",step_time_low_s,step_time_high_s\n";
    size_t n = now.data ? now.len : 0;
    if (n > sizeof cost + sizeof band && strncmp(now.data, cost, sizeof cost - 1) == 0 &&
        strcmp(now.data + n - (sizeof band - 1), band) == 0) {
        comet_buf_printf(b, "index,status,design_cost");
        comet_buf_append(b, now.data + sizeof cost - 1, n - (sizeof cost - 1) - (sizeof band - 1));
        comet_buf_printf(b, ",step_time_low,step_time_high\n");
    }
    comet_buf_free(&now);
}

void comet_sweep_csv_row(comet_buf *b, const comet_study *study, const comet_sweep_row *row)
{
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
    comet_buf_printf(b, "{\"index\": %llu, \"status\": \"%s\", \"design_cost\": %.10g, \"npus\": %lld, "
                        "\"model\": ",
                     (unsigned long long)row->index, comet_point_status_name(row->status),
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
    .csv_header_before = csv_header_before_units,
};
