/* What a sweep means, built one finished point at a time: the Pareto front
 * of best step time against design cost per model (points that are faster
 * or cheaper than every other), and a sensitivity table: for every axis,
 * the geometric mean of the best step time at each of its values, averaged
 * over all other axes, and the ratio between its slowest and fastest
 * value. Memory is fixed (a bounded front, sums per axis value). The
 * summary of saved results is built here too, once, for the sweep command
 * (its pareto.csv and summary.txt) and for the sweep page alike. */
#include "comet/sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comet/results.h"

void comet_summary_init(comet_summary *s, const comet_study *study)
{
    memset(s, 0, sizeof *s);
    s->study = study;
}

static bool dominates(const comet_pareto_point *a, const comet_pareto_point *b)
{
    return a->step_time <= b->step_time && a->cost <= b->cost &&
           (a->step_time < b->step_time || a->cost < b->cost);
}

static void front_add(comet_pareto_point *front, int *n, const comet_pareto_point *p)
{
    for (int i = 0; i < *n; i++)
        if (dominates(&front[i], p) ||
            (front[i].step_time == p->step_time && front[i].cost == p->cost &&
             front[i].index < p->index))
            return;
    int kept = 0;
    for (int i = 0; i < *n; i++)
        if (!dominates(p, &front[i]) &&
            !(front[i].step_time == p->step_time && front[i].cost == p->cost))
            front[kept++] = front[i];
    *n = kept;
    if (*n < COMET_PARETO_MAX)
        front[(*n)++] = *p;
}

void comet_summary_add(comet_summary *s, int model, uint64_t index, const double *values,
                       comet_point_status status, double step_time, double cost)
{
    if (model < 0 || model >= COMET_STUDY_MAX_MODELS)
        return;
    s->points[model]++;
    if (status != COMET_POINT_OK || !(step_time > 0.0))
        return;
    s->feasible[model]++;
    comet_pareto_point p = {index, step_time, cost};
    front_add(s->front[model], &s->n_front[model], &p);
    const comet_study *st = s->study;
    for (int a = 0; a < st->n_axes; a++)
        for (int v = 0; v < st->axes[a].n; v++)
            if (st->axes[a].values[v] == values[a]) {
                s->log_sum[model][a][v] += log(step_time);
                s->count[model][a][v]++;
            }
}

void comet_summary_from_results(comet_summary *s, const comet_results *res,
                                const comet_study *study)
{
    comet_summary_init(s, study ? study : &res->study);
    for (size_t i = 0; i < res->n_rows; i++) {
        const comet_results_row *row = &res->rows[i];
        int model = row->model;
        const double *values = row->values;
        double exact[COMET_STUDY_MAX_AXES];
        if (study) { /* the design by index: exact, not re-read from text */
            comet_system sys;
            int64_t npus;
            comet_study_point(study, row->index, &model, &sys, &npus, exact);
            values = exact;
        }
        comet_summary_add(s, model, row->index, values, row->status, row->result.step_time,
                          row->cost);
    }
}

static int by_cost(const void *x, const void *y)
{
    const comet_pareto_point *a = x, *b = y;
    if (a->cost != b->cost)
        return a->cost < b->cost ? -1 : 1;
    if (a->step_time != b->step_time)
        return a->step_time < b->step_time ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

void comet_summary_pareto_csv(comet_buf *b, const comet_summary *s)
{
    comet_buf_csv_version_head(b);
    comet_buf_printf(b, "model,index,design_cost_usd,step_time_s\n");
    for (int m = 0; m < s->study->n_models; m++) {
        comet_pareto_point sorted[COMET_PARETO_MAX];
        int n = s->n_front[m];
        memcpy(sorted, s->front[m], sizeof sorted[0] * (size_t)n);
        qsort(sorted, (size_t)n, sizeof sorted[0], by_cost);
        for (int i = 0; i < n; i++)
            comet_buf_printf(b, "%d,%s,%llu,%.10g,%.10g\n", COMET_CSV_SCHEMA_VERSION,
                             s->study->models[m].name,
                             (unsigned long long)sorted[i].index, sorted[i].cost,
                             sorted[i].step_time);
    }
}

/* Slowest/fastest ratio of an axis's geometric means; 1 when fewer than
 * two of its values have feasible points. */
double comet_summary_axis_effect(const comet_summary *s, int m, int a, int *slow, int *fast)
{
    double lo = INFINITY, hi = -INFINITY;
    *slow = *fast = -1;
    for (int v = 0; v < s->study->axes[a].n; v++) {
        if (!s->count[m][a][v])
            continue;
        double mean = s->log_sum[m][a][v] / (double)s->count[m][a][v];
        if (mean < lo) {
            lo = mean;
            *fast = v;
        }
        if (mean > hi) {
            hi = mean;
            *slow = v;
        }
    }
    return *slow >= 0 && *slow != *fast ? exp(hi - lo) : 1.0;
}

void comet_summary_text(comet_buf *b, const comet_summary *s)
{
    const comet_study *st = s->study;
    comet_buf_printf(b, "study %s: %llu design points, ranked by %s\n", st->name,
                     (unsigned long long)comet_study_points(st), comet_objective_name(st->objective));
    for (int m = 0; m < st->n_models; m++) {
        comet_buf_printf(b, "%s: %llu design points, %llu with a strategy that fits, %d on the "
                            "Pareto front (step time vs cost)\n",
                         st->models[m].name, (unsigned long long)s->points[m],
                         (unsigned long long)s->feasible[m], s->n_front[m]);
        if (!s->feasible[m] || st->n_axes == 0)
            continue;
        int order[COMET_STUDY_MAX_AXES];
        double effect[COMET_STUDY_MAX_AXES];
        for (int a = 0; a < st->n_axes; a++) {
            int slow, fast;
            effect[a] = comet_summary_axis_effect(s, m, a, &slow, &fast);
            order[a] = a;
        }
        for (int i = 1; i < st->n_axes; i++) /* insertion sort, biggest effect first */
            for (int j = i; j > 0 && effect[order[j]] > effect[order[j - 1]]; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        comet_buf_printf(b, "  what moves the best step time most (slowest / fastest value, "
                            "geometric means over the other axes):\n");
        for (int i = 0; i < st->n_axes; i++) {
            int a = order[i], slow, fast;
            double e = comet_summary_axis_effect(s, m, a, &slow, &fast);
            comet_buf_printf(b, "    %-36s %6.2fx", st->axes[a].name, e);
            if (slow >= 0 && fast >= 0 && slow != fast) {
                char fv[32], sv[32];
                comet_buf_printf(b, "   fastest at %s (%.3f s), slowest at %s (%.3f s)",
                                 comet_axis_format(&st->axes[a], st->axes[a].values[fast], fv,
                                                   sizeof fv),
                                 exp(s->log_sum[m][a][fast] / (double)s->count[m][a][fast]),
                                 comet_axis_format(&st->axes[a], st->axes[a].values[slow], sv,
                                                   sizeof sv),
                                 exp(s->log_sum[m][a][slow] / (double)s->count[m][a][slow]));
            }
            comet_buf_append(b, "\n", 1);
        }
    }
}
