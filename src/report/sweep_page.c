/* The sweep report page, from saved results: what was swept, then per
 * model the best and worst design, a heatmap of the two axes that move
 * step time most (colour = best throughput over the other axes), the
 * Pareto front of step time against design cost, the sensitivity of step
 * time to each axis, every design as a sortable, filterable table (its
 * points on the Pareto chart link to its rows, and each row drills down
 * to its best strategy's time and memory), the fastest side by side, and
 * the best design's memory. The front and the sensitivities come from
 * comet_summary_from_results, the call `comet sweep` builds its summary
 * with. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/report.h"
#include "comet/results.h"
#include "parts.h"

#define BREAKDOWN_DESIGNS 8

static int by_step_time(const void *x, const void *y)
{
    const comet_results_row *a = *(const comet_results_row *const *)x;
    const comet_results_row *b = *(const comet_results_row *const *)y;
    if (a->result.step_time != b->result.step_time)
        return a->result.step_time < b->result.step_time ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static void designs_section(comet_page *p, const comet_results *r)
{
    comet_page_section(p, "The sweep");
    comet_page_fact(p, "results", "%s", r->path);
    size_t status[COMET_POINT_NO_LAYOUT + 1] = {0};
    for (size_t i = 0; i < r->n_rows; i++)
        status[r->rows[i].status]++;
    comet_page_fact(p, "design points", "%zu read: %zu with a strategy that fits, %zu where "
                                        "none fits, %zu over budget, %zu the network cannot "
                                        "lay out",
                    r->n_rows, status[COMET_POINT_OK], status[COMET_POINT_NO_FIT],
                    status[COMET_POINT_OVER_BUDGET], status[COMET_POINT_NO_LAYOUT]);
    char models[512] = "";
    for (int m = 0; m < r->study.n_models; m++)
        snprintf(models + strlen(models), sizeof models - strlen(models), "%s%s", m ? ", " : "",
                 r->study.models[m].name);
    comet_page_fact(p, "models", "%s", models);
    for (int a = 0; a < r->study.n_axes; a++) {
        const comet_axis *ax = &r->study.axes[a];
        char values[512] = "";
        for (int v = 0; v < ax->n; v++) {
            char one[48];
            snprintf(values + strlen(values), sizeof values - strlen(values), "%s%s",
                     v ? ", " : "", comet_axis_format(ax, ax->values[v], one, sizeof one));
        }
        comet_page_fact(p, ax->name, "%s", values);
    }
    if (r->skipped)
        comet_page_notice(p, "%zu lines of %s could not be read and are left out (%s).",
                          r->skipped, r->path, r->first_skipped);
}

/* The two axes with two or more values that move step time most. */
static int heatmap_axes(const comet_results *r, const comet_summary *sum, int m, int pick[2])
{
    int n = 0;
    double best[2] = {-1.0, -1.0};
    for (int a = 0; a < r->study.n_axes; a++) {
        if (r->study.axes[a].n < 2)
            continue;
        int slow, fast;
        double e = comet_summary_axis_effect(sum, m, a, &slow, &fast);
        if (n < 2)
            n++;
        if (e > best[0]) {
            best[1] = best[0];
            pick[1] = pick[0];
            best[0] = e;
            pick[0] = a;
        } else if (e > best[1]) {
            best[1] = e;
            pick[1] = a;
        }
    }
    return n;
}

static int value_slot(const comet_axis *ax, double v)
{
    for (int i = 0; i < ax->n; i++)
        if (ax->values[i] == v)
            return i;
    return -1;
}

static void heatmap(comet_page *p, const comet_results *r, const comet_summary *sum, int m,
                    const comet_results_row *const *rows, size_t n, const int *chosen)
{
    int pick[2] = {-1, -1};
    int varied = 2;
    if (chosen && chosen[0] >= 0 && chosen[1] >= 0 && chosen[0] != chosen[1]) {
        pick[0] = chosen[0];
        pick[1] = chosen[1];
    } else
        varied = heatmap_axes(r, sum, m, pick);
    if (varied < 2) {
        comet_page_notice(p, "A heatmap needs two swept axes with two or more values each; "
                             "this sweep varies %d. Add values to an axis to see one.",
                          varied);
        return;
    }
    const comet_axis *ax = &r->study.axes[pick[0]], *ay = &r->study.axes[pick[1]];
    char id[48], title[160];
    snprintf(id, sizeof id, "heatmap-%d", m);
    snprintf(title, sizeof title, "%s: best throughput by %s and %s", r->study.models[m].name,
             ax->name, ay->name);
    comet_chart *c = comet_page_chart(p, COMET_CHART_HEATMAP, id, title);
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "%s", ax->name);
    snprintf(c->y_label, sizeof c->y_label, "%s", ay->name);
    snprintf(c->value_label, sizeof c->value_label, "best throughput");
    c->value_unit = COMET_QTY_TOKENS_PER_S;
    for (int i = 0; i < ax->n; i++) {
        char v[48];
        comet_chart_series(c, comet_axis_format(ax, ax->values[i], v, sizeof v));
    }
    for (int i = 0; i < ay->n; i++) {
        char v[48];
        comet_chart_cat(c, comet_axis_format(ay, ay->values[i], v, sizeof v));
    }
    for (size_t i = 0; i < n; i++) {
        const comet_results_row *row = rows[i];
        if (row->status != COMET_POINT_OK)
            continue;
        int x = value_slot(ax, row->values[pick[0]]), y = value_slot(ay, row->values[pick[1]]);
        double old = comet_chart_get(c, y, x);
        if (!isfinite(old) || row->result.tokens_per_s > old)
            comet_chart_set(c, y, x, row->result.tokens_per_s);
    }
    snprintf(c->note, sizeof c->note, "Each cell: the best over the other axes. × : no design "
                                      "there has a strategy that fits.");
}

static int by_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The Pareto chart; each point linked to its row of the designs table,
 * whose rows are `ok` (the designs that fit, fastest first) in order. */
static void pareto(comet_page *p, const comet_results *r, const comet_summary *sum, int m,
                   const comet_results_row *const *rows, size_t n,
                   const comet_results_row *const *ok, size_t n_ok)
{
    bool costs = false;
    for (size_t i = 0; i < n; i++)
        costs |= rows[i]->status == COMET_POINT_OK && rows[i]->cost > 0.0;
    if (!costs) {
        comet_page_notice(p, "No Pareto chart: the designs have no cost (the system file gives "
                             "no prices), so step time cannot be traded against cost.");
        return;
    }
    char id[48], title[160];
    snprintf(id, sizeof id, "pareto-%d", m);
    snprintf(title, sizeof title, "%s: step time against design cost", r->study.models[m].name);
    comet_chart *c = comet_page_chart(p, COMET_CHART_SCATTER, id, title);
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "design cost");
    snprintf(c->y_label, sizeof c->y_label, "best step time");
    c->x_unit = COMET_QTY_MONEY;
    c->y_unit = COMET_QTY_SECONDS;
    comet_chart_series(c, "design");
    comet_chart_series(c, "Pareto front (faster or cheaper than all others)");
    /* the front's indices, sorted, so each design is looked up, not scanned for */
    uint64_t front_index[COMET_PARETO_MAX];
    int n_front = sum->n_front[m];
    for (int f = 0; f < n_front; f++)
        front_index[f] = sum->front[m][f].index;
    qsort(front_index, (size_t)n_front, sizeof front_index[0], by_u64);
    for (size_t i = 0; i < n; i++) {
        const comet_results_row *row = rows[i];
        if (row->status != COMET_POINT_OK)
            continue;
        bool front = bsearch(&row->index, front_index, (size_t)n_front, sizeof front_index[0],
                             by_u64) != NULL;
        char label[48];
        comet_results_design_label(r, row, label, sizeof label);
        comet_chart_point_add(c, row->cost, row->result.step_time, 0, front, label);
        const comet_results_row *const *at =
            bsearch(&row, ok, n_ok, sizeof *ok, by_step_time);
        if (at) {
            char table[48];
            snprintf(table, sizeof table, "designs-%d", m);
            comet_chart_point_link(c, table, (long)(at - ok));
        }
    }
}

static void sensitivity(comet_page *p, const comet_results *r, const comet_summary *sum, int m)
{
    char id[48], title[160];
    snprintf(id, sizeof id, "sensitivity-%d", m);
    snprintf(title, sizeof title, "%s: how much each axis moves the best step time",
             r->study.models[m].name);
    int order[COMET_STUDY_MAX_AXES], n = 0;
    double effect[COMET_STUDY_MAX_AXES];
    for (int a = 0; a < r->study.n_axes; a++) {
        if (r->study.axes[a].n < 2)
            continue;
        int slow, fast;
        effect[a] = comet_summary_axis_effect(sum, m, a, &slow, &fast);
        order[n++] = a;
    }
    if (n == 0) {
        comet_page_notice(p, "No sensitivity chart: no axis of this sweep has two or more "
                             "values.");
        return;
    }
    for (int i = 1; i < n; i++) /* biggest effect first */
        for (int j = i; j > 0 && effect[order[j]] > effect[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    comet_chart *c = comet_page_chart(p, COMET_CHART_BARS, id, title);
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "slower at the axis's worst value than at its best");
    c->x_unit = COMET_QTY_FRACTION;
    comet_chart_series(c, "step time, slowest value over fastest (geometric means)");
    for (int i = 0; i < n; i++) {
        int a = order[i], slow, fast;
        comet_summary_axis_effect(sum, m, a, &slow, &fast);
        char cat[COMET_CHART_NAME_LEN];
        if (slow >= 0 && fast >= 0 && slow != fast) {
            char fv[48], sv[48];
            snprintf(cat, sizeof cat, "%s (%s vs %s)", r->study.axes[a].name,
                     comet_axis_format(&r->study.axes[a], r->study.axes[a].values[slow], sv,
                                       sizeof sv),
                     comet_axis_format(&r->study.axes[a], r->study.axes[a].values[fast], fv,
                                       sizeof fv));
        } else
            snprintf(cat, sizeof cat, "%s", r->study.axes[a].name);
        int k = comet_chart_cat(c, cat);
        comet_chart_set(c, k, 0, effect[a] - 1.0);
    }
}

static const char *why_not(comet_point_status s)
{
    return s == COMET_POINT_NO_FIT        ? "no strategy fits in memory"
           : s == COMET_POINT_OVER_BUDGET ? "over the budget"
           : s == COMET_POINT_NO_LAYOUT   ? "the network cannot lay it out"
                                          : "no step time";
}

/* Every design in one table, those that fit first and fastest first (the
 * Pareto chart's points link to these rows), then those that do not with
 * why; each fitting row's drill-down is its best strategy's time
 * breakdown and memory. */
static void all_designs(comet_page *p, const comet_results *r, int m,
                        const comet_results_row *const *ok, size_t n_ok,
                        const comet_results_row *const *rows, size_t n)
{
    char id[48], title[160];
    snprintf(id, sizeof id, "designs-%d", m);
    snprintf(title, sizeof title, "%s: every design, fastest first", r->study.models[m].name);
    comet_table *t = comet_page_table(p, id, title);
    comet_table_col(t, "rank", COMET_QTY_NONE);
    for (int a = 0; a < r->study.n_axes; a++)
        if (r->study.axes[a].n >= 2)
            comet_table_col(t, r->study.axes[a].name, COMET_QTY_NONE);
    comet_table_col(t, "NPUs", COMET_QTY_NONE);
    comet_table_col(t, "best strategy", COMET_QTY_NONE);
    comet_table_col(t, "step time", COMET_QTY_SECONDS);
    comet_table_col(t, "throughput", COMET_QTY_TOKENS_PER_S);
    comet_table_col(t, "MFU", COMET_QTY_FRACTION);
    comet_table_col(t, "design cost", COMET_QTY_MONEY);
    comet_table_col(t, "cost per 1M tokens/s", COMET_QTY_MONEY);
    /* the step time's uncertainty band, where the results saved one */
    bool bands = false;
    for (size_t i = 0; i < n_ok; i++)
        bands = bands || ok[i]->band_low > 0.0;
    if (bands) {
        comet_table_col(t, "band low", COMET_QTY_SECONDS);
        comet_table_col(t, "band high", COMET_QTY_SECONDS);
    }
    for (size_t i = 0; i < n_ok + n; i++) {
        const comet_results_row *row = i < n_ok ? ok[i] : rows[i - n_ok];
        bool fits = i < n_ok;
        if (!fits && row->status == COMET_POINT_OK && row->result.step_time > 0.0)
            continue; /* listed among those that fit */
        long k = comet_table_row(t);
        int c = 0;
        if (fits)
            comet_table_num(t, k, c, (double)(i + 1));
        c++;
        for (int a = 0; a < r->study.n_axes; a++) {
            if (r->study.axes[a].n < 2)
                continue;
            char v[48];
            comet_table_num(t, k, c, row->values[a]);
            comet_table_text(t, k, c++,
                             comet_axis_format(&r->study.axes[a], row->values[a], v, sizeof v));
        }
        char label[160];
        comet_table_num(t, k, c++, (double)row->npus);
        if (!fits) {
            comet_table_text(t, k, c, why_not(row->status));
            continue;
        }
        comet_table_text(t, k, c++, report_strategy_label(&row->strategy, label, sizeof label));
        comet_table_num(t, k, c++, row->result.step_time);
        comet_table_num(t, k, c++, row->result.tokens_per_s);
        comet_table_num(t, k, c++, row->result.mfu);
        comet_table_num(t, k, c++, row->cost);
        comet_table_num(t, k, c++, row->result.cost_per_mtoken_s);
        if (bands && row->band_low > 0.0) {
            comet_table_num(t, k, c++, row->band_low);
            comet_table_num(t, k, c++, row->band_high);
        }
        report_drill_result(t, k, &row->result);
    }
}

static void breakdowns(comet_page *p, const comet_results *r, int m,
                       const comet_results_row *const *ok, size_t n_ok)
{
    char id[48], title[160];
    size_t bars = n_ok < BREAKDOWN_DESIGNS ? n_ok : BREAKDOWN_DESIGNS;
    snprintf(id, sizeof id, "breakdown-%d", m);
    snprintf(title, sizeof title, "%s: where the step time goes in the %zu fastest designs",
             r->study.models[m].name, bars);
    comet_chart *c = report_breakdown_chart(p, id, title);
    if (c)
        snprintf(c->y_label, sizeof c->y_label, "design");
    for (size_t i = 0; i < bars; i++) {
        char label[COMET_CHART_NAME_LEN];
        comet_results_design_label(r, ok[i], label, sizeof label);
        comet_band band = {.low = ok[i]->band_low, .high = ok[i]->band_high,
                           .level = COMET_BAND_LEVEL};
        report_breakdown_add(c, label, &ok[i]->result, ok[i]->band_low > 0.0 ? &band : NULL);
    }
}

static void model_section(comet_page *p, const comet_results *r, const comet_summary *sum,
                          int m, const comet_results_row **rows, size_t n, const int *chosen)
{
    const char *name = r->study.models[m].name;
    char heading[160];
    snprintf(heading, sizeof heading, "%s", name);
    comet_page_section(p, heading);
    /* feasible rows, fastest first */
    const comet_results_row **ok = malloc(sizeof *ok * (n ? n : 1));
    if (!ok) {
        comet_page_notice(p, "Out of memory while ranking the designs of %s.", name);
        return;
    }
    size_t n_ok = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i]->status == COMET_POINT_OK && rows[i]->result.step_time > 0.0)
            ok[n_ok++] = rows[i];
    qsort(ok, n_ok, sizeof *ok, by_step_time);
    if (n_ok == 0) {
        comet_page_notice(p, "None of the %zu designs of %s has a strategy that fits in memory "
                             "(or within the budget, or on the network), so there is no best "
                             "design, front or breakdown to show. Larger HBM, an expansion "
                             "tier or more NPUs are the levers to try.",
                          n, name);
        heatmap(p, r, sum, m, rows, n, chosen);
        free(ok);
        return;
    }
    char label[160], strategy[160], q[48], q2[48];
    const comet_results_row *best = ok[0], *worst = ok[n_ok - 1];
    comet_results_design_label(r, best, label, sizeof label);
    comet_page_fact(p, "best design", "%s: %s per step with %s", label,
                    comet_format_quantity(best->result.step_time, COMET_QTY_SECONDS, 0, q,
                                          sizeof q),
                    report_strategy_label(&best->strategy, strategy, sizeof strategy));
    comet_results_design_label(r, worst, label, sizeof label);
    comet_page_fact(p, "slowest design that fits", "%s: %s per step", label,
                    comet_format_quantity(worst->result.step_time, COMET_QTY_SECONDS, 0, q,
                                          sizeof q));
    comet_page_fact(p, "spread", "the best design trains %s faster than the slowest (%zu of "
                               "%zu designs fit)",
                    comet_format_quantity(worst->result.step_time / best->result.step_time,
                                          COMET_QTY_RATIO, 0, q2, sizeof q2),
                    n_ok, n);
    if (n_ok == 1)
        comet_page_notice(p, "Only one design of %s has a strategy that fits, so there is "
                             "nothing to compare it with.",
                          name);
    heatmap(p, r, sum, m, rows, n, chosen);
    pareto(p, r, sum, m, rows, n, ok, n_ok);
    sensitivity(p, r, sum, m);
    all_designs(p, r, m, ok, n_ok, rows, n);
    breakdowns(p, r, m, ok, n_ok);
    char memory_id[48];
    snprintf(memory_id, sizeof memory_id, "memory-%d", m);
    report_memory_chart(p, memory_id, &best->result);
    free(ok);
}

void comet_report_page_sweep(comet_page *p, const comet_results *r, const int *chosen)
{
    if (!p)
        return;
    if (r->problem[0]) {
        comet_page_section(p, "Nothing to report");
        comet_page_notice(p, "%s", r->problem);
        return;
    }
    designs_section(p, r);
    comet_summary *sum = malloc(sizeof *sum);
    const comet_results_row **rows = malloc(sizeof *rows * (r->n_rows ? r->n_rows : 1));
    if (!sum || !rows) {
        comet_page_notice(p, "Out of memory while summarizing %zu design points.", r->n_rows);
        free(sum);
        free(rows);
        return;
    }
    comet_summary_from_results(sum, r, NULL); /* on the rows' own study shell */
    if (r->n_rows == 1)
        comet_page_notice(p, "This sweep has a single design point: there is no heatmap, "
                             "front or sensitivity to draw, only the design itself.");
    for (int m = 0; m < r->study.n_models; m++) {
        size_t n = 0;
        for (size_t i = 0; i < r->n_rows; i++)
            if (r->rows[i].model == m)
                rows[n++] = &r->rows[i];
        model_section(p, r, sum, m, rows, n, chosen);
    }
    free(rows);
    free(sum);
}
