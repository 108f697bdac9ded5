/* comet allocate's outputs: the splits (the optimum, the closed form it
 * started from, the equal split and the system's own split scaled to the
 * budget) with their step time, cost and gap to the optimum, each
 * dimension's wait, utilization and what one more GB/s buys there, and the
 * step time across budgets; as a text table, JSON, CSV and an HTML page
 * with charts. Numbers come from comet_allocate only; nothing is
 * recomputed here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/report.h"
#include "parts.h"

#define N_SPLITS 4

static const comet_alloc_point *split_at(const comet_alloc_result *r, int i, const char **name)
{
    static const char *const names[N_SPLITS] = {"optimum", "closed_form", "equal", "current"};
    *name = names[i];
    return i == 0 ? &r->optimum : i == 1 ? &r->lagrange : i == 2 ? &r->equal : &r->current;
}

/* How far a split is from the optimum on the objective (0: as good). */
static double gap(const comet_alloc_result *r, const comet_alloc_point *pt)
{
    if (!pt->feasible || !(r->optimum.score > 0.0))
        return INFINITY;
    return pt->score / r->optimum.score - 1.0;
}

static const char *spend_text(const comet_alloc_problem *p, double v, char *out, size_t cap)
{
    if (p->budget_kind == COMET_ALLOC_BUDGET_DOLLARS)
        return comet_format_quantity(v, COMET_QTY_MONEY, 0, out, cap);
    return comet_format_quantity(v, COMET_QTY_BYTES_PER_S, 0, out, cap);
}

void comet_alloc_text(comet_buf *b, const comet_alloc_problem *p, const comet_alloc_result *r)
{
    char s1[48], s2[48], s3[48];
    int n = p->system.n_dims;
    comet_buf_printf(b, "allocation %s: budget %s per NPU, objective %s, system %s\n\n", p->name,
                     spend_text(p, p->budget, s1, sizeof s1),
                     comet_alloc_objective_name(p->objective), p->system.name);
    comet_buf_printf(b, "%-12s", "split");
    for (int d = 0; d < n; d++)
        comet_buf_printf(b, " %12.12s", p->system.dims[d].name);
    comet_buf_printf(b, " %12s %12s %12s %10s\n", "spend", "step time", "cost", "gap");
    for (int i = 0; i < N_SPLITS; i++) {
        const char *name;
        const comet_alloc_point *pt = split_at(r, i, &name);
        comet_buf_printf(b, "%-12s", i == 1 ? "closed form" : name);
        for (int d = 0; d < n; d++)
            comet_buf_printf(b, " %12s",
                             comet_format_quantity(pt->bw[d], COMET_QTY_BYTES_PER_S, 0, s1,
                                                   sizeof s1));
        double g = gap(r, pt);
        char gs[24];
        if (i == 0)
            snprintf(gs, sizeof gs, "-");
        else if (isfinite(g))
            snprintf(gs, sizeof gs, "%+.2f %%", 100.0 * g);
        else
            snprintf(gs, sizeof gs, "no fit");
        comet_buf_printf(b, " %12s %12s %12s %10s\n", spend_text(p, pt->spend, s1, sizeof s1),
                         pt->feasible ? comet_format_quantity(pt->step_time, COMET_QTY_SECONDS, 0,
                                                              s2, sizeof s2)
                                      : "no fit",
                         pt->cost > 0.0 ? comet_format_quantity(pt->cost, COMET_QTY_MONEY, 0, s3,
                                                                sizeof s3)
                                        : "-",
                         gs);
    }
    comet_buf_printf(b, "\n%-12s %12s %12s %12s %16s\n", "dimension", "optimum", "wait",
                     "utilization", "per extra GB/s");
    for (int d = 0; d < n; d++) {
        const comet_alloc_point *o = &r->optimum;
        char m[48];
        snprintf(m, sizeof m, "-%s",
                 comet_format_quantity(r->marginal[d], COMET_QTY_SECONDS, 0, s3, sizeof s3));
        comet_buf_printf(b, "%-12.12s %12s %12s %11.1f %% %16s\n", p->system.dims[d].name,
                         comet_format_quantity(o->bw[d], COMET_QTY_BYTES_PER_S, 0, s1, sizeof s1),
                         comet_format_quantity(o->wait[d], COMET_QTY_SECONDS, 0, s2, sizeof s2),
                         o->step_time > 0.0 ? 100.0 * o->wait[d] / o->step_time : 0.0, m);
    }
    comet_buf_printf(b, "\nworkloads at the optimum:\n");
    for (int k = 0; k < p->n_workloads; k++) {
        const comet_alloc_workload *w = &p->workloads[k];
        char lab[256];
        comet_buf_printf(b, "  %s, %lld NPUs, batch %lld, weight %g: %s (%s, %s)\n", w->model.name,
                         (long long)w->npus, (long long)w->global_batch, w->weight,
                         comet_format_quantity(r->optimum.step[k], COMET_QTY_SECONDS, 0, s1,
                                               sizeof s1),
                         report_strategy_label(&r->optimum.strategy[k], lab, sizeof lab),
                         w->fixed ? "fixed" : "searched");
    }
    if (r->n_sweep > 0) {
        comet_buf_printf(b, "\nstep time across the budget:\n  %-12s %12s %12s\n", "budget",
                         "optimum", "equal split");
        for (int i = 0; i < r->n_sweep; i++)
            comet_buf_printf(b, "  %-12s %12s %12s\n",
                             spend_text(p, r->sweep_budget[i], s1, sizeof s1),
                             isfinite(r->sweep_optimum[i])
                                 ? comet_format_quantity(r->sweep_optimum[i], COMET_QTY_SECONDS,
                                                         0, s2, sizeof s2)
                                 : "-",
                             isfinite(r->sweep_equal[i])
                                 ? comet_format_quantity(r->sweep_equal[i], COMET_QTY_SECONDS, 0,
                                                         s3, sizeof s3)
                                 : "-");
    }
    comet_buf_printf(b, "\n%llu estimates", (unsigned long long)r->evaluations);
    if (r->rounds)
        comet_buf_printf(b, ", %d strategy-search round%s", r->rounds, r->rounds > 1 ? "s" : "");
    comet_buf_printf(b, "\n");
}

static void json_num(comet_buf *b, double v) { report_json_number(b, v, 10); }

static void json_dims(comet_buf *b, const comet_alloc_problem *p, const double *v)
{
    comet_buf_printf(b, "{");
    for (int d = 0; d < p->system.n_dims; d++) {
        comet_buf_printf(b, "%s", d ? ", " : "");
        comet_buf_json_string(b, p->system.dims[d].name);
        comet_buf_printf(b, ": ");
        json_num(b, v[d]);
    }
    comet_buf_printf(b, "}");
}

void comet_alloc_json(comet_buf *b, const comet_alloc_problem *p, const comet_alloc_result *r)
{
    comet_buf_printf(b, "{\n  \"schema_version\": %d,\n  \"name\": ", COMET_JSON_SCHEMA_VERSION);
    comet_buf_json_string(b, p->name);
    comet_buf_printf(b, ",\n  \"system\": ");
    comet_buf_json_string(b, p->system.name);
    comet_buf_printf(b, ",\n  \"budget\": ");
    json_num(b, p->budget);
    comet_buf_printf(b, ",\n  \"budget_unit\": \"%s\",\n  \"objective\": \"%s\",\n  \"splits\": {",
                     p->budget_kind == COMET_ALLOC_BUDGET_DOLLARS ? "dollars" : "bytes/s",
                     comet_alloc_objective_name(p->objective));
    for (int i = 0; i < N_SPLITS; i++) {
        const char *name;
        const comet_alloc_point *pt = split_at(r, i, &name);
        comet_buf_printf(b, "%s\n    \"%s\": {\"bandwidth\": ", i ? "," : "", name);
        json_dims(b, p, pt->bw);
        comet_buf_printf(b, ", \"wait\": ");
        json_dims(b, p, pt->wait);
        comet_buf_printf(b, ", \"spend\": ");
        json_num(b, pt->spend);
        comet_buf_printf(b, ", \"feasible\": %s, \"step_time\": ", pt->feasible ? "true" : "false");
        json_num(b, pt->step_time);
        comet_buf_printf(b, ", \"cost\": ");
        json_num(b, pt->cost);
        comet_buf_printf(b, ", \"score\": ");
        json_num(b, pt->score);
        comet_buf_printf(b, ", \"gap\": ");
        json_num(b, gap(r, pt));
        comet_buf_printf(b, ", \"workloads\": [");
        for (int k = 0; k < p->n_workloads; k++) {
            char lab[256];
            comet_buf_printf(b, "%s{\"model\": ", k ? ", " : "");
            comet_buf_json_string(b, p->workloads[k].model.name);
            comet_buf_printf(b, ", \"step_time\": ");
            json_num(b, pt->step[k]);
            comet_buf_printf(b, ", \"strategy\": ");
            comet_buf_json_string(b, pt->feasible ? report_strategy_label(&pt->strategy[k], lab,
                                                                          sizeof lab)
                                                  : "");
            comet_buf_printf(b, "}");
        }
        comet_buf_printf(b, "]}");
    }
    comet_buf_printf(b, "\n  },\n  \"a\": ");
    json_dims(b, p, r->a);
    comet_buf_printf(b, ",\n  \"seconds_saved_per_gbps\": ");
    json_dims(b, p, r->marginal);
    comet_buf_printf(b, ",\n  \"sweep\": [");
    for (int i = 0; i < r->n_sweep; i++) {
        comet_buf_printf(b, "%s\n    {\"budget\": ", i ? "," : "");
        json_num(b, r->sweep_budget[i]);
        comet_buf_printf(b, ", \"optimum\": ");
        json_num(b, r->sweep_optimum[i]);
        comet_buf_printf(b, ", \"equal\": ");
        json_num(b, r->sweep_equal[i]);
        comet_buf_printf(b, "}");
    }
    comet_buf_printf(b, "%s],\n  \"evaluations\": %llu,\n  \"rounds\": %d\n}\n",
                     r->n_sweep ? "\n  " : "", (unsigned long long)r->evaluations, r->rounds);
}

static void csv_num(comet_buf *b, double v)
{
    if (isfinite(v))
        comet_buf_printf(b, ",%.10g", v);
    else
        comet_buf_printf(b, ",");
}

void comet_alloc_csv(comet_buf *b, const comet_alloc_problem *p, const comet_alloc_result *r)
{
    int n = p->system.n_dims;
    /* each header names its unit; the budget and spend are dollars or
     * bytes/s per NPU, as the file's budget is */
    const char *money = p->budget_kind == COMET_ALLOC_BUDGET_DOLLARS ? "usd" : "bytes_per_s";
    comet_buf_csv_version_head(b);
    comet_buf_printf(b, "split,budget_%s", money);
    for (int d = 0; d < n; d++)
        comet_buf_printf(b, ",%s_bandwidth_bytes_per_s", p->system.dims[d].name);
    for (int d = 0; d < n; d++)
        comet_buf_printf(b, ",%s_utilization", p->system.dims[d].name);
    comet_buf_printf(b, ",spend_%s,step_time_s,cost_usd,score,gap\n", money);
    for (int i = 0; i < N_SPLITS; i++) {
        const char *name;
        const comet_alloc_point *pt = split_at(r, i, &name);
        comet_buf_csv_version(b);
        comet_buf_printf(b, "%s", name);
        csv_num(b, p->budget);
        for (int d = 0; d < n; d++)
            csv_num(b, pt->bw[d]);
        for (int d = 0; d < n; d++)
            csv_num(b, pt->feasible && pt->step_time > 0.0 ? pt->wait[d] / pt->step_time : NAN);
        csv_num(b, pt->spend);
        csv_num(b, pt->step_time);
        csv_num(b, pt->cost);
        csv_num(b, pt->score);
        csv_num(b, gap(r, pt));
        comet_buf_printf(b, "\n");
    }
    for (int i = 0; i < r->n_sweep; i++)
        for (int s = 0; s < 2; s++) {
            comet_buf_csv_version(b);
            comet_buf_printf(b, "%s", s ? "sweep_equal" : "sweep_optimum");
            csv_num(b, r->sweep_budget[i]);
            for (int d = 0; d < 2 * n; d++)
                comet_buf_printf(b, ",");
            comet_buf_printf(b, ",");
            csv_num(b, s ? r->sweep_equal[i] : r->sweep_optimum[i]);
            comet_buf_printf(b, ",,,\n");
        }
}

static void splits_table(comet_page *pg, const comet_alloc_problem *p,
                         const comet_alloc_result *r)
{
    comet_table *t = comet_page_table(pg, "splits", "Splits of the budget");
    if (!t)
        return;
    int n = p->system.n_dims;
    int c_split = comet_table_col(t, "split", COMET_QTY_NONE);
    int c_bw[COMET_MAX_DIMS];
    for (int d = 0; d < n; d++) {
        char col[48];
        snprintf(col, sizeof col, "%.36s", p->system.dims[d].name);
        c_bw[d] = comet_table_col(t, col, COMET_QTY_BYTES_PER_S);
    }
    int c_time = comet_table_col(t, "step time", COMET_QTY_SECONDS);
    int c_cost = comet_table_col(t, "cost", COMET_QTY_MONEY);
    int c_gap = comet_table_col(t, "gap", COMET_QTY_FRACTION);
    for (int i = 0; i < N_SPLITS; i++) {
        const char *name;
        const comet_alloc_point *pt = split_at(r, i, &name);
        long row = comet_table_row(t);
        comet_table_text(t, row, c_split, name);
        for (int d = 0; d < n; d++)
            comet_table_num(t, row, c_bw[d], pt->bw[d]);
        comet_table_num(t, row, c_time, pt->step_time);
        comet_table_num(t, row, c_cost, pt->cost);
        comet_table_num(t, row, c_gap, gap(r, pt));
    }
}

static void allocation_chart(comet_page *pg, const comet_alloc_problem *p,
                             const comet_alloc_result *r)
{
    comet_chart *c = comet_page_chart(pg, COMET_CHART_STACKED, "allocation",
                                      "Bandwidth per NPU on each dimension, per split");
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "bandwidth per NPU");
    c->x_unit = COMET_QTY_BYTES_PER_S;
    for (int d = 0; d < p->system.n_dims; d++)
        comet_chart_series(c, p->system.dims[d].name);
    for (int i = 0; i < N_SPLITS; i++) {
        const char *name;
        const comet_alloc_point *pt = split_at(r, i, &name);
        int cat = comet_chart_cat(c, name);
        for (int d = 0; d < p->system.n_dims; d++)
            comet_chart_set(c, cat, d, pt->bw[d]);
    }
}

/* One bar per dimension: v[d] / per. */
static void per_dim_chart(comet_page *pg, const comet_alloc_problem *p, const char *id,
                          const char *title, const char *label, comet_quantity unit,
                          const double *v, double per)
{
    comet_chart *c = comet_page_chart(pg, COMET_CHART_BARS, id, title);
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "%s", label);
    c->x_unit = unit;
    comet_chart_series(c, label);
    for (int d = 0; d < p->system.n_dims; d++)
        comet_chart_set(c, comet_chart_cat(c, p->system.dims[d].name), 0,
                        per > 0.0 ? v[d] / per : 0.0);
}

static void budget_chart(comet_page *pg, const comet_alloc_problem *p,
                         const comet_alloc_result *r)
{
    if (r->n_sweep == 0)
        return;
    comet_chart *c = comet_page_chart(pg, COMET_CHART_SCATTER, "budget",
                                      "Step time across the budget (highlighted: the "
                                      "optimum; others: the equal split)");
    if (!c)
        return;
    char s1[48];
    snprintf(c->x_label, sizeof c->x_label, "budget per NPU");
    snprintf(c->y_label, sizeof c->y_label, "step time");
    c->x_unit = p->budget_kind == COMET_ALLOC_BUDGET_DOLLARS ? COMET_QTY_MONEY
                                                             : COMET_QTY_BYTES_PER_S;
    c->y_unit = COMET_QTY_SECONDS;
    for (int i = 0; i < r->n_sweep; i++) {
        char lab[96];
        if (isfinite(r->sweep_equal[i])) {
            snprintf(lab, sizeof lab, "equal split at %s",
                     spend_text(p, r->sweep_budget[i], s1, sizeof s1));
            comet_chart_point_add(c, r->sweep_budget[i], r->sweep_equal[i], 0, 0, lab);
        }
        if (isfinite(r->sweep_optimum[i])) {
            snprintf(lab, sizeof lab, "optimum at %s",
                     spend_text(p, r->sweep_budget[i], s1, sizeof s1));
            comet_chart_point_add(c, r->sweep_budget[i], r->sweep_optimum[i], 0, 1, lab);
        }
    }
}

void comet_report_page_allocate(comet_page *pg, const comet_alloc_problem *p,
                                const comet_alloc_result *r)
{
    char s1[48];
    comet_page_section(pg, "Bandwidth per network dimension");
    comet_page_fact(pg, "system", "%s", p->system.name);
    comet_page_fact(pg, "budget per NPU", "%s", spend_text(p, p->budget, s1, sizeof s1));
    comet_page_fact(pg, "objective", "%s", comet_alloc_objective_name(p->objective));
    comet_page_fact(pg, "optimum step time", "%s",
                    comet_format_quantity(r->optimum.step_time, COMET_QTY_SECONDS, 0, s1,
                                          sizeof s1));
    double ge = gap(r, &r->equal), gc = gap(r, &r->current);
    if (isfinite(ge))
        comet_page_fact(pg, "equal split", "%+.2f %% from the optimum", 100.0 * ge);
    if (isfinite(gc))
        comet_page_fact(pg, "the system's split", "%+.2f %% from the optimum", 100.0 * gc);

    splits_table(pg, p, r);
    allocation_chart(pg, p, r);
    per_dim_chart(pg, p, "utilization", "Share of the optimum's step waiting on each dimension",
                  "utilization", COMET_QTY_FRACTION, r->optimum.wait, r->optimum.step_time);
    per_dim_chart(pg, p, "marginal", "Step time saved by one more GB/s on each dimension",
                  "seconds per GB/s", COMET_QTY_SECONDS, r->marginal, 1.0);
    budget_chart(pg, p, r);
    comet_page_text(pg, "Each dimension's wait is the step time less the step time with that "
                    "dimension made a million times faster; its utilization is that wait over "
                    "the step time. The closed form is b_d proportional to sqrt(a_d / c_d) with "
                    "a_d = wait x bandwidth at the equal split; the optimum refines it with the "
                    "estimator (docs/allocate.md).");
}
