/* The fabric's links on a report page: a collective simulated as flows
 * (comet simulate --collective ... --flows --report) and a training step
 * on the fabric (comet simulate ... --flows --report) show the same
 * parts: the most utilized links, the bytes each tier carried, and the
 * hot links' utilization over time as a heatmap (links by time bins), so
 * a hot spine link or a straggling rail shows where and when; under
 * congestion control also their queues and PFC pauses over time. */
#include <math.h>
#include <stdio.h>

#include "comet/report.h"
#include "parts.h"

#define TIME_BINS 24

/* What a watched link's series shows (under congestion control, its
 * queue and pause too, docs/roce.md). */
typedef enum series_value { SV_UTILIZATION, SV_QUEUE, SV_PAUSED } series_value;

static double value_at(const comet_link_series *s, series_value v, size_t i)
{
    return v == SV_QUEUE ? s->queue[i] : v == SV_PAUSED ? (s->paused[i] ? 1.0 : 0.0)
                                                        : s->utilization[i];
}

/* A watched link's mean utilization (queue, paused fraction) over
 * [t0, t1) from its steps. */
static double mean_over(const comet_link_series *s, series_value v, double t0, double t1,
                        double end)
{
    double area = 0.0;
    for (size_t i = 0; i < s->n; i++) {
        double a = s->t[i], b = i + 1 < s->n ? s->t[i + 1] : end;
        double lo = a > t0 ? a : t0, hi = b < t1 ? b : t1;
        if (hi > lo)
            area += (hi - lo) * value_at(s, v, i);
    }
    return t1 > t0 ? area / (t1 - t0) : 0.0;
}

static void hot_links(comet_page *p, const report_links *l)
{
    comet_table *t = comet_page_table(p, "hot-links-table", "Most utilized links");
    if (t) {
        comet_table_col(t, "link", COMET_QTY_NONE);
        comet_table_col(t, "carried", COMET_QTY_BYTES);
        if (l->alone_per_tier)
            comet_table_col(t, "of which alone", COMET_QTY_BYTES);
        comet_table_col(t, "utilization", COMET_QTY_FRACTION);
        for (int i = 0; i < l->n_hot; i++) {
            long row = comet_table_row(t);
            int col = 0;
            comet_table_text(t, row, col++, l->hot[i].name);
            comet_table_num(t, row, col++, l->hot[i].bytes);
            if (l->alone_per_tier)
                comet_table_num(t, row, col++, l->hot[i].alone_bytes);
            comet_table_num(t, row, col, l->hot[i].utilization);
        }
    }
    comet_chart *c = comet_page_chart(p, COMET_CHART_BARS, "hot-links", "Most utilized links");
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "bytes / (bandwidth x time)");
    c->x_unit = COMET_QTY_FRACTION;
    comet_chart_series(c, "utilization");
    for (int i = 0; i < l->n_hot; i++) {
        int cat = comet_chart_cat(c, l->hot[i].name);
        if (cat >= 0)
            comet_chart_set(c, cat, 0, l->hot[i].utilization);
    }
}

static void tier_bytes(comet_page *p, const report_links *l)
{
    static const char *const tiers[] = {"NPU ports and neighbour links", "tier 1 (leaf up)",
                                        "tier 2 (aggregation up)"};
    comet_chart *t = comet_page_chart(p, COMET_CHART_BARS, "tier-bytes",
                                      "Bytes carried per tier (summed over links)");
    if (!t)
        return;
    snprintf(t->x_label, sizeof t->x_label, "bytes");
    t->x_unit = COMET_QTY_BYTES;
    comet_chart_series(t, l->alone_per_tier ? "as flows" : "bytes");
    if (l->alone_per_tier)
        comet_chart_series(t, "alone (no flows)");
    for (int i = 0; i < 3; i++) {
        if (!(l->bytes_per_tier[i] > 0.0))
            continue;
        int cat = comet_chart_cat(t, tiers[i]);
        double alone = l->alone_per_tier ? l->alone_per_tier[i] : 0.0;
        comet_chart_set(t, cat, 0, l->bytes_per_tier[i] - alone);
        if (l->alone_per_tier)
            comet_chart_set(t, cat, 1, alone);
    }
}

static void heatmap(comet_page *p, const report_links *l, series_value v)
{
    static const char *const ids[] = {"hot-links-time", "hot-links-queue", "hot-links-pause"};
    static const char *const titles[] = {
        "The hottest links' utilization over time",
        "The hottest links' egress queue over time (congestion control)",
        "The hottest links' PFC pause over time (fraction of each bin paused)"};
    static const char *const values[] = {"utilization", "queue", "paused"};
    comet_chart *h = comet_page_chart(p, COMET_CHART_HEATMAP, ids[v], titles[v]);
    if (!h)
        return;
    /* milliseconds for a collective, seconds for a step */
    bool ms = l->time < 1.0;
    double scale = ms ? 1e3 : 1.0;
    const char *unit = ms ? "ms" : "s";
    snprintf(h->x_label, sizeof h->x_label, "time (bins of %.3g %s)", l->time * scale / TIME_BINS,
             unit);
    snprintf(h->y_label, sizeof h->y_label, "link");
    snprintf(h->value_label, sizeof h->value_label, "%s", values[v]);
    h->value_unit = v == SV_QUEUE ? COMET_QTY_BYTES : COMET_QTY_FRACTION;
    for (int b = 0; b < TIME_BINS; b++) {
        char label[32];
        snprintf(label, sizeof label, "%.3g %s", l->time * scale * (b + 0.5) / TIME_BINS, unit);
        comet_chart_series(h, label);
    }
    for (int i = 0; i < l->n_series; i++) {
        int cat = comet_chart_cat(h, l->series_name[i]);
        for (int b = 0; cat >= 0 && b < TIME_BINS; b++)
            comet_chart_set(h, cat, b,
                            mean_over(&l->series[i], v, l->time * b / TIME_BINS,
                                      l->time * (b + 1) / TIME_BINS, l->time));
    }
    snprintf(h->note, sizeof h->note, "%s%s", l->series_note ? l->series_note : "",
             l->series_cut ? " The series stop after 1,000,000 changes a link; later bins "
                             "undercount."
                           : "");
}

void report_fabric_links(comet_page *p, const report_links *l)
{
    if (l->n_hot == 0) {
        comet_page_notice(p, "No link carried anything: the groups hold one NPU each.");
        return;
    }
    hot_links(p, l);
    tier_bytes(p, l);
    if (l->n_series == 0 || !(l->time > 0.0)) {
        comet_page_notice(p, "%s", l->no_series ? l->no_series
                                                : "No link was watched over time, so there is "
                                                  "no heatmap.");
        return;
    }
    heatmap(p, l, SV_UTILIZATION);
    bool cc = true;
    for (int i = 0; i < l->n_series; i++)
        cc &= l->series[i].queue != NULL && l->series[i].paused != NULL;
    if (cc) {
        heatmap(p, l, SV_QUEUE);
        heatmap(p, l, SV_PAUSED);
    }
}

void comet_report_page_flows(comet_page *p, const comet_system *sys, const comet_fabric *f,
                             const char *what, const comet_flow_result *r, double analytic)
{
    comet_fabric_info info;
    comet_fabric_info_of(f, &info);
    comet_page_section(p, "Collective on the fabric");
    comet_page_text(p, "%s on %s, every message a flow on its route, %s.", what, sys->name,
                    r->cc.fluid ? "links shared through switch queues, ECN marks and PFC pauses "
                                  "under congestion control (docs/roce.md)"
                                : "links shared max-min fairly (docs/fabric.md)");
    comet_page_fact(p, "fabric", "%lld NPUs, %lld switches, %lld links", (long long)info.npus,
                    (long long)info.switches, (long long)info.links);
    comet_page_fact(p, "time (flows)", "%.6f ms", r->time * 1e3);
    comet_page_fact(p, "estimate", "%.6f ms (flows %+.1f %%)", analytic * 1e3,
                    analytic > 0.0 ? 100.0 * (r->time - analytic) / analytic : 0.0);
    comet_page_fact(p, "groups", "%lld at once", (long long)r->groups);
    comet_page_fact(p, "work", "%llu flows, %llu events, %llu rate recomputations",
                    (unsigned long long)r->flows, (unsigned long long)r->events,
                    (unsigned long long)r->rate_updates);
    if (r->cc.fluid) {
        comet_page_fact(p, "peak queue", "%.1f KB (the most queued link: %.1f KB on average)",
                        r->cc.peak_queue / 1e3, r->cc.mean_queue / 1e3);
        comet_page_fact(p, "PFC pause", "%.4f ms summed over %lld links, %lld PAUSEs",
                        r->cc.pause_time * 1e3, (long long)r->cc.paused_links,
                        (long long)r->cc.pauses);
        comet_page_fact(p, "flow completion", "min %.4f, mean %.4f, max %.4f ms over %lld flows",
                        r->cc.fct_min * 1e3, r->cc.fct_mean * 1e3, r->cc.fct_max * 1e3,
                        (long long)r->cc.flows_done);
    }
    comet_sim_link hot[COMET_FABRIC_HOT_LINKS] = {{0}};
    char names[COMET_FABRIC_HOT_LINKS][COMET_SIM_LINK_NAME_LEN];
    report_links l = {.time = r->time, .n_hot = r->n_hot, .hot = hot,
                      .bytes_per_tier = r->bytes_per_tier, .n_series = r->n_series,
                      .series = r->series, .series_cut = r->series_cut};
    for (int i = 0; i < r->n_hot; i++) {
        comet_fabric_link_name(f, r->hot[i].link, hot[i].name, sizeof hot[i].name);
        hot[i].bytes = r->hot[i].bytes;
        hot[i].utilization = r->hot[i].utilization;
    }
    for (int i = 0; i < r->n_series; i++) {
        comet_fabric_link_name(f, r->series[i].link, names[i], sizeof names[i]);
        l.series_name[i] = names[i];
    }
    report_fabric_links(p, &l);
}

void comet_report_page_step_links(comet_page *p, const comet_sim_step_result *r,
                                  const comet_sim_fabric_links *links)
{
    comet_page_section(p, "The fabric's links");
    bool part = r->simulated_microbatches < r->microbatches;
    comet_page_text(p, "Every transfer of the step on the fabric, every NPU: %lld transfers ran "
                       "as flows sharing links, %lld alone on links no other stream uses (each "
                       "kind simulated once; docs/fabric.md). A link's bytes count both; its "
                       "utilization is those bytes over its bandwidth times the time %s.%s",
                    (long long)r->fabric_transfers, (long long)r->fabric_alone,
                    part ? "the simulated microbatches took" : "of the step",
                    part ? " The rest of the step was extrapolated: the links cover the "
                           "simulated microbatches, in their own time."
                         : "");
    char q[64];
    comet_page_fact(p, "over", "%s (%lld of %lld microbatches)",
                    comet_format_quantity(links->time, COMET_QTY_SECONDS, 0, q, sizeof q),
                    (long long)r->simulated_microbatches, (long long)r->microbatches);
    bool alone = r->fabric_alone > 0; /* say which part is which only where both are */
    report_links l = {.time = links->time, .n_hot = links->n_hot, .hot = links->hot,
                      .bytes_per_tier = links->bytes_per_tier,
                      .alone_per_tier = alone ? links->alone_per_tier : NULL,
                      .n_series = r->fabric_transfers > 0 ? links->n_series : 0,
                      .series = links->series, .series_cut = links->series_cut,
                      .series_note = alone ? "The flows' utilization: a transfer that ran alone "
                                             "moves no flow and adds nothing here (its bytes "
                                             "count above)."
                                           : NULL,
                      .no_series = "Every transfer ran alone on its links, as no flows, so "
                                   "there is no utilization over time to show."};
    for (int i = 0; i < links->n_series; i++)
        l.series_name[i] = links->hot[i].name;
    report_fabric_links(p, &l);
}
