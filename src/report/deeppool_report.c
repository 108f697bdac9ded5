/* comet deeppool's outputs: the burst-parallel plan (its runs of layers,
 * each with its GPUs, per-GPU batch, compute, all-reduce, optimizer and
 * transfer time) against plain data parallelism, the multiplexed
 * background jobs with the foreground, background and total throughput,
 * and the strong-scaling curve; as a text table, JSON and an HTML page
 * with charts. Numbers come from comet_deeppool only; nothing is
 * recomputed here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/report.h"
#include "parts.h"

static const char *secs(double v, char *out, size_t cap)
{
    return comet_format_quantity(v, COMET_QTY_SECONDS, 0, out, cap);
}

void comet_deeppool_text(comet_buf *b, const comet_deeppool_problem *p,
                         const comet_deeppool_result *r)
{
    char s1[48], s2[48], s3[48], s4[48], s5[48];
    comet_buf_printf(b, "deeppool %s: %s on %lld GPUs of %s, global batch %lld\n\n", p->name,
                     p->model.name, (long long)p->gpus, p->system.name,
                     (long long)p->global_batch);
    comet_buf_printf(b, "burst-parallel plan (%d run%s over %d layers):\n", r->burst.n_groups,
                     r->burst.n_groups == 1 ? "" : "s", r->n_layers);
    comet_buf_printf(b, "  %-28s %6s %6s %10s %10s %10s %10s\n", "layers", "GPUs", "batch",
                     "compute", "allreduce", "optimizer", "transfer");
    for (int g = 0; g < r->burst.n_groups; g++) {
        const comet_dp_group *G = &r->burst.groups[g];
        char span[96];
        if (G->first == G->last)
            snprintf(span, sizeof span, "%s", r->layers[G->first].name);
        else
            snprintf(span, sizeof span, "%.40s .. %.40s", r->layers[G->first].name,
                     r->layers[G->last].name);
        comet_buf_printf(b, "  %-28.28s %6lld %6lld %10s %10s %10s %10s\n", span,
                         (long long)G->width, (long long)G->per_gpu_batch,
                         secs(G->compute, s1, sizeof s1), secs(G->allreduce, s2, sizeof s2),
                         secs(G->optimizer, s3, sizeof s3), secs(G->transfer_in, s4, sizeof s4));
    }
    comet_buf_printf(b, "\n%-16s %12s %14s %10s %10s %10s %10s %8s\n", "plan", "iteration",
                     "samples/s", "compute", "allreduce", "transfer", "optimizer", "idle");
    const comet_dp_plan *plans[2] = {&r->burst, &r->dp};
    const char *names[2] = {"burst", "data parallel"};
    for (int i = 0; i < 2; i++) {
        const comet_dp_plan *P = plans[i];
        comet_buf_printf(b, "%-16s %12s %14.6g %10s %10s %10s %10s %7.1f%%\n", names[i],
                         secs(P->iteration, s1, sizeof s1), P->throughput,
                         secs(P->compute, s2, sizeof s2), secs(P->allreduce, s3, sizeof s3),
                         secs(P->transfer, s4, sizeof s4), secs(P->optimizer, s5, sizeof s5),
                         100.0 * P->idle_share);
    }
    comet_buf_printf(b, "burst over data parallel: %.3fx\n", r->speedup);
    const comet_dp_mux *m = &r->mux;
    if (p->n_background > 0) {
        comet_buf_printf(b, "\nmultiplexing (interference %.3g, break-even %.3g):\n",
                         p->interference, m->break_even);
        comet_buf_printf(b, "  %-20s %8s %10s %12s %14s\n", "background job", "GPUs",
                         "GPU share", "alone/GPU", "samples/s");
        for (int j = 0; j < p->n_background; j++)
            comet_buf_printf(b, "  %-20.20s %8lld %10.4g %12.6g %14.6g\n",
                             p->background[j].model.name, (long long)m->jobs[j].gpus,
                             m->jobs[j].gpu_share, m->jobs[j].alone, m->jobs[j].throughput);
    }
    comet_buf_printf(b, "\nthroughput (samples/s): foreground %.6g (alone %.6g), background "
                     "%.6g, total %.6g; data parallel alone %.6g; total over data parallel "
                     "%.3fx\n", m->foreground, m->foreground_alone, m->background, m->total,
                     m->dp_alone, m->gain);
    if (r->n_scaling > 0) {
        comet_buf_printf(b, "\nstrong scaling at global batch %lld (samples/s):\n",
                         (long long)p->global_batch);
        comet_buf_printf(b, "  %8s %14s %14s %14s %10s %10s\n", "GPUs", "data parallel",
                         "burst", "burst+bg", "burst/dp", "total/dp");
        for (int i = 0; i < r->n_scaling; i++) {
            const comet_dp_scaling_point *pt = &r->scaling[i];
            comet_buf_printf(b, "  %8lld %14.6g %14.6g %14.6g %9.3fx %9.3fx\n",
                             (long long)pt->gpus, pt->dp, pt->burst, pt->total,
                             pt->burst / pt->dp, pt->total / pt->dp);
        }
    }
}

static void json_plan(comet_buf *b, const char *name, const comet_dp_plan *P, bool groups)
{
    comet_buf_printf(b, "\"%s\":{\"iteration_s\":", name);
    report_json_number(b, P->iteration, 10);
    comet_buf_printf(b, ",\"samples_per_s\":");
    report_json_number(b, P->throughput, 10);
    const struct {
        const char *k;
        double v;
    } parts[] = {{"compute_s", P->compute}, {"allreduce_s", P->allreduce},
                 {"transfer_s", P->transfer}, {"optimizer_s", P->optimizer},
                 {"idle_share", P->idle_share}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        comet_buf_printf(b, ",\"%s\":", parts[i].k);
        report_json_number(b, parts[i].v, 10);
    }
    if (groups) {
        comet_buf_printf(b, ",\"runs\":[");
        for (int g = 0; g < P->n_groups; g++) {
            const comet_dp_group *G = &P->groups[g];
            comet_buf_printf(b, "%s{\"first\":%d,\"last\":%d,\"gpus\":%lld,\"per_gpu_batch\":%lld,"
                             "\"compute_s\":", g ? "," : "", G->first, G->last,
                             (long long)G->width, (long long)G->per_gpu_batch);
            report_json_number(b, G->compute, 10);
            comet_buf_printf(b, ",\"allreduce_s\":");
            report_json_number(b, G->allreduce, 10);
            comet_buf_printf(b, ",\"optimizer_s\":");
            report_json_number(b, G->optimizer, 10);
            comet_buf_printf(b, ",\"transfer_in_s\":");
            report_json_number(b, G->transfer_in, 10);
            comet_buf_printf(b, "}");
        }
        comet_buf_printf(b, "]");
    }
    comet_buf_printf(b, "}");
}

/* A name as a JSON string (names are checked by the reader: no quotes or
 * control characters reach here, but escape them anyway). */
static void json_name(comet_buf *b, const char *s)
{
    comet_buf_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            comet_buf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            comet_buf_printf(b, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            comet_buf_printf(b, "%c", *s);
    }
    comet_buf_printf(b, "\"");
}

void comet_deeppool_json(comet_buf *b, const comet_deeppool_problem *p,
                         const comet_deeppool_result *r)
{
    comet_buf_printf(b, "{\"name\":");
    json_name(b, p->name);
    comet_buf_printf(b, ",\"model\":");
    json_name(b, p->model.name);
    comet_buf_printf(b, ",\"system\":");
    json_name(b, p->system.name);
    comet_buf_printf(b, ",\"gpus\":%lld,\"global_batch\":%lld,\"interference\":",
                     (long long)p->gpus, (long long)p->global_batch);
    report_json_number(b, p->interference, 10);
    comet_buf_printf(b, ",\"layers\":[");
    for (int i = 0; i < r->n_layers; i++) {
        comet_buf_printf(b, "%s{\"name\":", i ? "," : "");
        json_name(b, r->layers[i].name);
        comet_buf_printf(b, ",\"gpus\":%lld}", (long long)r->width[i]);
    }
    comet_buf_printf(b, "],");
    json_plan(b, "burst", &r->burst, true);
    comet_buf_printf(b, ",");
    json_plan(b, "data_parallel", &r->dp, false);
    comet_buf_printf(b, ",\"speedup\":");
    report_json_number(b, r->speedup, 10);
    const comet_dp_mux *m = &r->mux;
    comet_buf_printf(b, ",\"multiplexing\":{\"foreground_alone\":");
    report_json_number(b, m->foreground_alone, 10);
    comet_buf_printf(b, ",\"foreground\":");
    report_json_number(b, m->foreground, 10);
    comet_buf_printf(b, ",\"background\":");
    report_json_number(b, m->background, 10);
    comet_buf_printf(b, ",\"total\":");
    report_json_number(b, m->total, 10);
    comet_buf_printf(b, ",\"data_parallel_alone\":");
    report_json_number(b, m->dp_alone, 10);
    comet_buf_printf(b, ",\"total_over_data_parallel\":");
    report_json_number(b, m->gain, 10);
    comet_buf_printf(b, ",\"break_even_interference\":");
    report_json_number(b, m->break_even, 10);
    comet_buf_printf(b, ",\"jobs\":[");
    for (int j = 0; j < p->n_background; j++) {
        comet_buf_printf(b, "%s{\"model\":", j ? "," : "");
        json_name(b, p->background[j].model.name);
        comet_buf_printf(b, ",\"gpus\":%lld,\"gpu_share\":", (long long)m->jobs[j].gpus);
        report_json_number(b, m->jobs[j].gpu_share, 10);
        comet_buf_printf(b, ",\"alone_per_gpu\":");
        report_json_number(b, m->jobs[j].alone, 10);
        comet_buf_printf(b, ",\"samples_per_s\":");
        report_json_number(b, m->jobs[j].throughput, 10);
        comet_buf_printf(b, "}");
    }
    comet_buf_printf(b, "]},\"scaling\":[");
    for (int i = 0; i < r->n_scaling; i++) {
        const comet_dp_scaling_point *pt = &r->scaling[i];
        comet_buf_printf(b, "%s{\"gpus\":%lld,\"data_parallel\":", i ? "," : "",
                         (long long)pt->gpus);
        report_json_number(b, pt->dp, 10);
        comet_buf_printf(b, ",\"burst\":");
        report_json_number(b, pt->burst, 10);
        comet_buf_printf(b, ",\"total\":");
        report_json_number(b, pt->total, 10);
        comet_buf_printf(b, "}");
    }
    comet_buf_printf(b, "]}\n");
}

void comet_report_page_deeppool(comet_page *pg, const comet_deeppool_problem *p,
                                const comet_deeppool_result *r)
{
    char s1[48];
    comet_page_section(pg, "Burst parallelism and GPU multiplexing");
    comet_page_fact(pg, "model", "%s", p->model.name);
    comet_page_fact(pg, "system", "%s, %lld GPUs", p->system.name, (long long)p->gpus);
    comet_page_fact(pg, "global batch", "%lld samples", (long long)p->global_batch);
    comet_page_fact(pg, "burst iteration", "%s (%d runs)",
                    secs(r->burst.iteration, s1, sizeof s1), r->burst.n_groups);
    comet_page_fact(pg, "data-parallel iteration", "%s", secs(r->dp.iteration, s1, sizeof s1));
    comet_page_fact(pg, "burst over data parallel", "%.3fx", r->speedup);
    comet_page_fact(pg, "total with background over data parallel", "%.3fx", r->mux.gain);

    comet_chart *c = comet_page_chart(pg, COMET_CHART_BARS, "widths", "GPUs per layer");
    if (c) {
        snprintf(c->x_label, sizeof c->x_label, "GPUs");
        c->x_unit = COMET_QTY_COUNT;
        comet_chart_series(c, "GPUs");
        for (int i = 0; i < r->n_layers && i < COMET_CHART_MAX_CATS; i++) {
            int cat = comet_chart_cat(c, r->layers[i].name);
            if (cat >= 0)
                comet_chart_set(c, cat, 0, (double)r->width[i]);
        }
    }
    c = comet_page_chart(pg, COMET_CHART_STACKED, "iteration",
                         "Where the iteration goes: burst against data parallel");
    if (c) {
        snprintf(c->x_label, sizeof c->x_label, "iteration time");
        c->x_unit = COMET_QTY_SECONDS;
        const char *parts[] = {"compute", "allreduce", "transfer", "optimizer"};
        for (int k = 0; k < 4; k++)
            comet_chart_series(c, parts[k]);
        const comet_dp_plan *plans[2] = {&r->burst, &r->dp};
        const char *names[2] = {"burst", "data parallel"};
        for (int i = 0; i < 2; i++) {
            int cat = comet_chart_cat(c, names[i]);
            comet_chart_set(c, cat, 0, plans[i]->compute);
            comet_chart_set(c, cat, 1, plans[i]->allreduce);
            comet_chart_set(c, cat, 2, plans[i]->transfer);
            comet_chart_set(c, cat, 3, plans[i]->optimizer);
        }
    }
    if (r->n_scaling > 0) {
        c = comet_page_chart(pg, COMET_CHART_SCATTER, "scaling",
                             "Strong scaling at a fixed global batch (highlighted: burst "
                             "parallelism; others: data parallelism)");
        if (c) {
            snprintf(c->x_label, sizeof c->x_label, "GPUs");
            snprintf(c->y_label, sizeof c->y_label, "samples per second");
            c->x_unit = COMET_QTY_COUNT;
            c->y_unit = COMET_QTY_COUNT;
            for (int i = 0; i < r->n_scaling; i++) {
                const comet_dp_scaling_point *pt = &r->scaling[i];
                char lab[96];
                snprintf(lab, sizeof lab, "data parallel on %lld GPUs", (long long)pt->gpus);
                comet_chart_point_add(c, (double)pt->gpus, pt->dp, 0, 0, lab);
                snprintf(lab, sizeof lab, "burst on %lld GPUs", (long long)pt->gpus);
                comet_chart_point_add(c, (double)pt->gpus, pt->burst, 0, 1, lab);
            }
        }
    }
    comet_table *t = comet_page_table(pg, "runs", "The burst plan's runs of layers");
    if (t) {
        int cl = comet_table_col(t, "layers", COMET_QTY_NONE);
        int cg = comet_table_col(t, "GPUs", COMET_QTY_COUNT);
        int cb = comet_table_col(t, "per-GPU batch", COMET_QTY_COUNT);
        int cc = comet_table_col(t, "compute", COMET_QTY_SECONDS);
        int ca = comet_table_col(t, "all-reduce", COMET_QTY_SECONDS);
        int cx = comet_table_col(t, "transfer in", COMET_QTY_SECONDS);
        for (int g = 0; g < r->burst.n_groups; g++) {
            const comet_dp_group *G = &r->burst.groups[g];
            long row = comet_table_row(t);
            char span[96];
            snprintf(span, sizeof span, "%.40s .. %.40s", r->layers[G->first].name,
                     r->layers[G->last].name);
            comet_table_text(t, row, cl, span);
            comet_table_num(t, row, cg, (double)G->width);
            comet_table_num(t, row, cb, (double)G->per_gpu_batch);
            comet_table_num(t, row, cc, G->compute);
            comet_table_num(t, row, ca, G->allreduce);
            comet_table_num(t, row, cx, G->transfer_in);
        }
    }
    if (p->n_background > 0) {
        comet_page_section(pg, "Background jobs in the idle GPU time");
        comet_page_fact(pg, "interference", "%.3g (break-even %.3g)", p->interference,
                        r->mux.break_even);
        comet_page_fact(pg, "foreground", "%.6g samples/s (alone %.6g)", r->mux.foreground,
                        r->mux.foreground_alone);
        comet_page_fact(pg, "background", "%.6g samples/s", r->mux.background);
        comet_page_fact(pg, "total", "%.6g samples/s; data parallel alone %.6g",
                        r->mux.total, r->mux.dp_alone);
    }
}
