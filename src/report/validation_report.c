/* Renders a validation run (comet_validate) for people and machines: per
 * row the GPUs, the strategy, the measurement as the source stated it and
 * as a step time, comet's prediction and the signed error, with comet's
 * breakdown (compute, bubble, exposed TP, PP, DP and EP time) where the
 * format has room; then the summary, overall and by system and framework.
 * Text for the terminal, Markdown for docs/validation.md (which is made
 * from it), CSV and JSON with the same fields in SI units. Rows comet
 * refused or that do not fit its memory model are shown as such. */
#include "comet/validate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/report.h"
#include "parts.h"

/* Characters on screen of UTF-8 text (the labels hold "·"). */
static int display_width(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void padded(comet_buf *b, const char *text, int width)
{
    comet_buf_printf(b, "%s", text);
    for (int w = display_width(text); w < width; w++)
        comet_buf_append(b, " ", 1);
}

/* The measurement as the source stated it: "1707 tok/s/GPU". */
static const char *stated(const comet_measured *m, char *out, size_t cap)
{
    switch (m->kind) {
    case COMET_MEASURE_STEP_TIME:
        snprintf(out, cap, "%.4g s", m->value);
        break;
    case COMET_MEASURE_TOKENS_PER_S_PER_GPU:
        snprintf(out, cap, "%.6g tok/s/GPU", m->value);
        break;
    case COMET_MEASURE_MODEL_TFLOPS:
        snprintf(out, cap, "%.4g TFLOP/s/GPU (%s)", m->value,
                 comet_flops_convention_name(m->flops));
        break;
    case COMET_MEASURE_MFU:
        snprintf(out, cap, "MFU %.4g %% of %.4g TFLOP/s (%s)", 100.0 * m->value, m->peak / 1e12,
                 comet_flops_convention_name(m->flops));
        break;
    case COMET_MEASURE_GPU_HOURS:
        snprintf(out, cap, "%.6g GPU-h per 1e12 tokens", m->value);
        break;
    case COMET_MEASURE_KIND_COUNT:
        snprintf(out, cap, "?");
        break;
    }
    return out;
}

static const char *strategy(const comet_strategy *s, char *out, size_t cap)
{
    char label[200];
    snprintf(out, cap, "gbs %lld · %s", (long long)s->global_batch,
             report_strategy_label(s, label, sizeof label));
    return out;
}

/* Why a row has no error in the statistics, or "" when it has. */
static const char *why_not(const comet_validation_result *x, char *out, size_t cap)
{
    out[0] = '\0';
    if (x->status == COMET_VALIDATION_REFUSED) {
        char line[512];
        snprintf(out, cap, "refused: %s", comet_error_format(&x->why, line, sizeof line));
    } else if (x->status == COMET_VALIDATION_NO_FIT) {
        char reason[160];
        snprintf(out, cap, "does not fit: %s", comet_result_reason(&x->result, reason,
                                                                    sizeof reason));
    }
    return out;
}

static double compute_time(const comet_result *r)
{
    return r->forward + r->backward + r->recompute + r->optimizer;
}

static void stats_line(comet_buf *b, const comet_validation_table *t,
                       const comet_validation_stats *st)
{
    comet_buf_printf(b, "%3d row%s %3d fit", st->rows, st->rows == 1 ? " " : "s", st->ok);
    if (st->no_fit)
        comet_buf_printf(b, "  %d no fit", st->no_fit);
    if (st->refused)
        comet_buf_printf(b, "  %d refused", st->refused);
    if (st->ok == 0) {
        comet_buf_printf(b, "\n");
        return;
    }
    comet_buf_printf(b, "   mean |error| %5.1f %%   median %5.1f %%   worst %5.1f %% (%s)   "
                        "bias %+5.1f %%\n",
                     100.0 * st->mean_abs, 100.0 * st->median_abs, 100.0 * st->worst_abs,
                     t->rows[st->worst].id, 100.0 * st->bias);
}

static void render_text(comet_buf *b, const comet_validation_table *t,
                        const comet_validation_report *r)
{
    comet_buf_printf(b, "%s (%s)%s%s\n\n", t->name, t->file, t->about[0] ? ": " : "", t->about);
    int id_w = 2, st_w = 8;
    char label[256], line[640];
    for (int i = 0; i < r->n_rows; i++) {
        int w = display_width(t->rows[i].id);
        id_w = w > id_w ? w : id_w;
        w = display_width(strategy(&t->rows[i].job.strategy, label, sizeof label));
        st_w = w > st_w ? w : st_w;
    }
    padded(b, "id", id_w);
    comet_buf_printf(b, "  %-14s %6s  ", "system", "GPUs");
    padded(b, "strategy", st_w);
    comet_buf_printf(b, "  %10s  %10s  %8s\n", "measured", "predicted", "error");
    for (int i = 0; i < r->n_rows; i++) {
        const comet_validation_result *x = &r->rows[i];
        padded(b, t->rows[i].id, id_w);
        comet_buf_printf(b, "  %-14s %6lld  ", t->rows[i].job.system.name, (long long)x->npus);
        padded(b, strategy(&t->rows[i].job.strategy, label, sizeof label), st_w);
        comet_buf_printf(b, "  %9.3fs", x->measured_step);
        if (x->status == COMET_VALIDATION_REFUSED)
            comet_buf_printf(b, "  %10s  %8s", "-", "-");
        else
            comet_buf_printf(b, "  %9.3fs  %+7.1f%%", x->predicted_step, 100.0 * x->error);
        if (x->status != COMET_VALIDATION_OK)
            comet_buf_printf(b, "  %s", why_not(x, line, sizeof line));
        comet_buf_printf(b, "\n");
    }
    comet_buf_printf(b, "\nsummary (errors over the rows that fit)\n  %-16s ", "all");
    stats_line(b, t, &r->overall);
    for (int g = 0; g < r->n_systems; g++) {
        comet_buf_printf(b, "  %-16s ", r->systems[g].name);
        stats_line(b, t, &r->systems[g].stats);
    }
    for (int g = 0; g < r->n_frameworks; g++) {
        comet_buf_printf(b, "  %-16s ", r->frameworks[g].name);
        stats_line(b, t, &r->frameworks[g].stats);
    }
}

static void md_stats_row(comet_buf *b, const char *group, const comet_validation_table *t,
                         const comet_validation_stats *st)
{
    comet_buf_printf(b, "| %s | %d | %d | %d | %d |", group, st->rows, st->ok, st->no_fit,
                     st->refused);
    if (st->ok)
        comet_buf_printf(b, " %.1f %% | %.1f %% | %.1f %% (%s) | %+.1f %% |\n",
                         100.0 * st->mean_abs, 100.0 * st->median_abs, 100.0 * st->worst_abs,
                         t->rows[st->worst].id, 100.0 * st->bias);
    else
        comet_buf_printf(b, " - | - | - | - |\n");
}

static void render_md(comet_buf *b, const comet_validation_table *t,
                      const comet_validation_report *r)
{
    char label[256], text[640];
    comet_buf_printf(b, "### %s\n\n%s%s`%s`\n\n", t->name, t->about, t->about[0] ? " " : "",
                     t->file);
    comet_buf_printf(b, "| id | system | framework | GPUs | strategy | stated | measured s | "
                        "predicted s | error | compute s | bubble s | TP s | PP s | DP s | "
                        "EP s |\n|---|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|"
                        "---:|---:|---:|\n");
    for (int i = 0; i < r->n_rows; i++) {
        const comet_validation_result *x = &r->rows[i];
        const comet_result *c = &x->result;
        comet_buf_printf(b, "| %s | %s | %s | %lld | %s | %s | %.3f |", t->rows[i].id,
                         t->rows[i].job.system.name, comet_framework_name(x->framework),
                         (long long)x->npus,
                         strategy(&t->rows[i].job.strategy, label, sizeof label),
                         stated(&t->rows[i].measured, text, sizeof text), x->measured_step);
        if (x->status == COMET_VALIDATION_REFUSED) {
            comet_buf_printf(b, " - | %s | | | | | | |\n", why_not(x, text, sizeof text));
            continue;
        }
        comet_buf_printf(b, " %.3f | %+.1f %%%s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
                         x->predicted_step, 100.0 * x->error,
                         x->status == COMET_VALIDATION_NO_FIT ? " (no fit)" : "",
                         compute_time(c), c->bubble, c->tp_exposed, c->pp_exposed,
                         c->dp_exposed, c->ep_exposed);
    }
    bool notes = false;
    for (int i = 0; i < r->n_rows; i++)
        if (r->rows[i].status != COMET_VALIDATION_OK) {
            if (!notes)
                comet_buf_printf(b, "\n");
            notes = true;
            comet_buf_printf(b, "- %s %s\n", t->rows[i].id, why_not(&r->rows[i], text,
                                                                      sizeof text));
        }
    comet_buf_printf(b, "\n| group | rows | fit | no fit | refused | mean \\|error\\| | median "
                        "| worst | bias |\n|---|---:|---:|---:|---:|---:|---:|---|---:|\n");
    md_stats_row(b, "all", t, &r->overall);
    for (int g = 0; g < r->n_systems; g++)
        md_stats_row(b, r->systems[g].name, t, &r->systems[g].stats);
    for (int g = 0; g < r->n_frameworks; g++)
        md_stats_row(b, r->frameworks[g].name, t, &r->frameworks[g].stats);
    comet_buf_printf(b, "\n");
}

void comet_validation_csv_header(comet_buf *b)
{
    comet_buf_csv_version_head(b);
    comet_buf_printf(b, "table,id,system,framework,model,gpus,strategy,stated_kind,stated_value,"
                        "flops,peak_flops,measured_step_s,status,predicted_step_s,error_pct,"
                        "reason,compute_s,bubble_s,tp_exposed_s,pp_exposed_s,dp_exposed_s,"
                        "ep_exposed_s,offload_exposed_s,mfu_fraction,hbm_bytes\n");
}

static void csv_num(comet_buf *b, double v, bool present)
{
    if (present && isfinite(v))
        comet_buf_printf(b, ",%.10g", v);
    else
        comet_buf_append(b, ",", 1);
}

static void render_csv(comet_buf *b, const comet_validation_table *t,
                       const comet_validation_report *r)
{
    char label[256], text[640];
    for (int i = 0; i < r->n_rows; i++) {
        const comet_validation_row *row = &t->rows[i];
        const comet_validation_result *x = &r->rows[i];
        const comet_result *c = &x->result;
        const comet_measured *m = &row->measured;
        bool flops = m->kind == COMET_MEASURE_MODEL_TFLOPS || m->kind == COMET_MEASURE_MFU;
        bool priced = x->status != COMET_VALIDATION_REFUSED;
        const char *fields[] = {t->name, row->id, row->job.system.name,
                                comet_framework_name(x->framework), row->job.model.name};
        comet_buf_csv_version(b);
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
            if (f)
                comet_buf_append(b, ",", 1);
            comet_buf_csv_field(b, fields[f]);
        }
        comet_buf_printf(b, ",%lld,", (long long)x->npus);
        comet_buf_csv_field(b, strategy(&row->job.strategy, label, sizeof label));
        comet_buf_printf(b, ",%s,%.10g,%s", comet_measure_kind_name(m->kind), m->value,
                         flops ? comet_flops_convention_name(m->flops) : "");
        csv_num(b, m->peak, m->kind == COMET_MEASURE_MFU);
        csv_num(b, x->measured_step, true);
        comet_buf_printf(b, ",%s", comet_validation_status_name(x->status));
        csv_num(b, x->predicted_step, priced);
        csv_num(b, 100.0 * x->error, priced);
        comet_buf_append(b, ",", 1);
        comet_buf_csv_field(b, why_not(x, text, sizeof text));
        const double parts[] = {compute_time(c), c->bubble, c->tp_exposed, c->pp_exposed,
                                c->dp_exposed, c->ep_exposed, c->offload_exposed, c->mfu,
                                c->mem_total[COMET_TIER_HBM]};
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
            csv_num(b, parts[p], priced);
        comet_buf_append(b, "\n", 1);
    }
}

static void json_num(comet_buf *b, const char *key, double v, const char *after)
{
    comet_buf_printf(b, "\"%s\": ", key);
    if (isfinite(v))
        comet_buf_printf(b, "%.10g%s", v, after);
    else
        comet_buf_printf(b, "null%s", after);
}

static void json_stats(comet_buf *b, const comet_validation_table *t,
                       const comet_validation_stats *st)
{
    comet_buf_printf(b, "{\"rows\": %d, \"fit\": %d, \"no_fit\": %d, \"refused\": %d, ", st->rows,
                     st->ok, st->no_fit, st->refused);
    json_num(b, "mean_abs_error", st->mean_abs, ", ");
    json_num(b, "median_abs_error", st->median_abs, ", ");
    json_num(b, "worst_abs_error", st->worst_abs, ", ");
    comet_buf_printf(b, "\"worst\": ");
    if (st->worst >= 0)
        comet_report_json_string(b, t->rows[st->worst].id);
    else
        comet_buf_printf(b, "null");
    comet_buf_printf(b, ", ");
    json_num(b, "bias", st->bias, "}");
}

static void json_groups(comet_buf *b, const char *key, const comet_validation_table *t,
                        const comet_validation_group *g, int n)
{
    comet_buf_printf(b, ",\n    \"%s\": {", key);
    for (int i = 0; i < n; i++) {
        comet_buf_printf(b, "%s\n      ", i ? "," : "");
        comet_report_json_string(b, g[i].name);
        comet_buf_printf(b, ": ");
        json_stats(b, t, &g[i].stats);
    }
    comet_buf_printf(b, "\n    }");
}

static void render_json(comet_buf *b, const comet_validation_table *t,
                        const comet_validation_report *r)
{
    char label[256], text[640];
    comet_buf_printf(b, "{\n  \"schema_version\": %d,\n  \"table\": ",
                     COMET_JSON_SCHEMA_VERSION);
    comet_report_json_string(b, t->name);
    comet_buf_printf(b, ",\n  \"file\": ");
    comet_report_json_string(b, t->file);
    comet_buf_printf(b, ",\n  \"about\": ");
    comet_report_json_string(b, t->about);
    comet_buf_printf(b, ",\n  \"rows\": [");
    for (int i = 0; i < r->n_rows; i++) {
        const comet_validation_row *row = &t->rows[i];
        const comet_validation_result *x = &r->rows[i];
        const comet_result *c = &x->result;
        const comet_measured *m = &row->measured;
        const char *texts[][2] = {
            {"id", row->id},
            {"source", row->source},
            {"notes", row->notes},
            {"system", row->job.system.name},
            {"model", row->job.model.name},
            {"framework", comet_framework_name(x->framework)},
            {"strategy", strategy(&row->job.strategy, label, sizeof label)},
            {"status", comet_validation_status_name(x->status)},
            {"reason", why_not(x, text, sizeof text)},
        };
        comet_buf_printf(b, "%s\n    {", i ? "," : "");
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            comet_buf_printf(b, "\"%s\": ", texts[k][0]);
            comet_report_json_string(b, texts[k][1]);
            comet_buf_printf(b, ", ");
        }
        comet_buf_printf(b, "\"gpus\": %lld,\n     \"measured\": {\"kind\": \"%s\", ",
                         (long long)x->npus, comet_measure_kind_name(m->kind));
        json_num(b, "value", m->value, ", ");
        if (m->kind == COMET_MEASURE_MODEL_TFLOPS || m->kind == COMET_MEASURE_MFU)
            comet_buf_printf(b, "\"flops\": \"%s\", ", comet_flops_convention_name(m->flops));
        if (m->kind == COMET_MEASURE_MFU)
            json_num(b, "peak_flops", m->peak, ", ");
        json_num(b, "step_s", x->measured_step, "},\n     ");
        if (x->status == COMET_VALIDATION_REFUSED) {
            comet_buf_printf(b, "\"predicted_step_s\": null, \"error\": null}");
            continue;
        }
        json_num(b, "predicted_step_s", x->predicted_step, ", ");
        json_num(b, "error", x->error, ",\n     \"breakdown\": {");
        const struct {
            const char *name;
            double v;
        } parts[] = {{"forward_s", c->forward},   {"backward_s", c->backward},
                     {"recompute_s", c->recompute}, {"optimizer_s", c->optimizer},
                     {"bubble_s", c->bubble},     {"tp_exposed_s", c->tp_exposed},
                     {"pp_exposed_s", c->pp_exposed}, {"dp_exposed_s", c->dp_exposed},
                     {"ep_exposed_s", c->ep_exposed}, {"offload_exposed_s", c->offload_exposed},
                     {"mfu", c->mfu},             {"hbm_bytes", c->mem_total[COMET_TIER_HBM]}};
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
            json_num(b, parts[p].name, parts[p].v, p + 1 < sizeof parts / sizeof parts[0]
                                                       ? ", " : "}}");
    }
    comet_buf_printf(b, "\n  ],\n  \"summary\": {\n    \"all\": ");
    json_stats(b, t, &r->overall);
    json_groups(b, "by_system", t, r->systems, r->n_systems);
    json_groups(b, "by_framework", t, r->frameworks, r->n_frameworks);
    comet_buf_printf(b, "\n  }\n}\n");
}

void comet_validation_render(comet_buf *b, comet_validation_format f,
                             const comet_validation_table *t, const comet_validation_report *r)
{
    switch (f) {
    case COMET_VALIDATION_TEXT:
        render_text(b, t, r);
        break;
    case COMET_VALIDATION_MD:
        render_md(b, t, r);
        break;
    case COMET_VALIDATION_CSV:
        render_csv(b, t, r);
        break;
    case COMET_VALIDATION_JSON:
        render_json(b, t, r);
        break;
    }
}
