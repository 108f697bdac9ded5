/* The report page of a collective simulated as flows on the fabric
 * (comet simulate --collective ... --flows --report): what ran and how
 * long it took beside the estimate, the most utilized links, the bytes
 * each tier carried, and the hot links' utilization over time as a
 * heatmap (links by time bins), so a hot spine link or a straggling rail
 * shows where and when. */
#include <math.h>
#include <stdio.h>

#include "comet/report.h"

#define TIME_BINS 24

/* A watched link's mean utilization over [t0, t1) from its steps. */
static double mean_over(const comet_link_series *s, double t0, double t1, double end)
{
    double area = 0.0;
    for (size_t i = 0; i < s->n; i++) {
        double a = s->t[i], b = i + 1 < s->n ? s->t[i + 1] : end;
        double lo = a > t0 ? a : t0, hi = b < t1 ? b : t1;
        if (hi > lo)
            area += (hi - lo) * s->utilization[i];
    }
    return t1 > t0 ? area / (t1 - t0) : 0.0;
}

void comet_report_page_flows(comet_page *p, const comet_system *sys, const comet_fabric *f,
                             const char *what, const comet_flow_result *r, double analytic)
{
    comet_fabric_info info;
    comet_fabric_info_of(f, &info);
    comet_page_section(p, "Collective on the fabric");
    comet_page_text(p, "%s on %s, every message a flow on its route, links shared max-min "
                       "fairly (docs/fabric.md).",
                    what, sys->name);
    comet_page_fact(p, "fabric", "%lld NPUs, %lld switches, %lld links", (long long)info.npus,
                    (long long)info.switches, (long long)info.links);
    comet_page_fact(p, "time (flows)", "%.6f ms", r->time * 1e3);
    comet_page_fact(p, "estimate", "%.6f ms (flows %+.1f %%)", analytic * 1e3,
                    analytic > 0.0 ? 100.0 * (r->time - analytic) / analytic : 0.0);
    comet_page_fact(p, "groups", "%lld at once", (long long)r->groups);
    comet_page_fact(p, "work", "%llu flows, %llu events, %llu rate recomputations",
                    (unsigned long long)r->flows, (unsigned long long)r->events,
                    (unsigned long long)r->rate_updates);
    if (r->n_hot == 0) {
        comet_page_notice(p, "No link carried anything: the groups hold one NPU each.");
        return;
    }
    comet_chart *c = comet_page_chart(p, COMET_CHART_BARS, "hot-links", "Most utilized links");
    if (c) {
        snprintf(c->x_label, sizeof c->x_label, "bytes / (bandwidth x time)");
        c->x_unit = COMET_QTY_FRACTION;
        comet_chart_series(c, "utilization");
        for (int i = 0; i < r->n_hot; i++) {
            char name[COMET_CHART_NAME_LEN];
            comet_fabric_link_name(f, r->hot[i].link, name, sizeof name);
            int cat = comet_chart_cat(c, name);
            if (cat >= 0)
                comet_chart_set(c, cat, 0, r->hot[i].utilization);
        }
    }
    static const char *const tiers[] = {"NPU ports and neighbour links", "tier 1 (leaf up)",
                                        "tier 2 (aggregation up)"};
    comet_chart *t = comet_page_chart(p, COMET_CHART_BARS, "tier-bytes",
                                      "Bytes carried per tier (summed over links)");
    if (t) {
        snprintf(t->x_label, sizeof t->x_label, "bytes");
        t->x_unit = COMET_QTY_BYTES;
        comet_chart_series(t, "bytes");
        for (int i = 0; i < 3; i++)
            if (r->bytes_per_tier[i] > 0.0)
                comet_chart_set(t, comet_chart_cat(t, tiers[i]), 0, r->bytes_per_tier[i]);
    }
    if (r->n_series == 0 || !(r->time > 0.0)) {
        comet_page_notice(p, "No link was watched over time, so there is no heatmap.");
        return;
    }
    comet_chart *h = comet_page_chart(p, COMET_CHART_HEATMAP, "hot-links-time",
                                      "The hottest links' utilization over time");
    if (!h)
        return;
    snprintf(h->x_label, sizeof h->x_label, "time (bins of %.3g ms)",
             r->time * 1e3 / TIME_BINS);
    snprintf(h->y_label, sizeof h->y_label, "link");
    snprintf(h->value_label, sizeof h->value_label, "utilization");
    h->value_unit = COMET_QTY_FRACTION;
    for (int b = 0; b < TIME_BINS; b++) {
        char label[32];
        snprintf(label, sizeof label, "%.3g ms", r->time * 1e3 * (b + 0.5) / TIME_BINS);
        comet_chart_series(h, label);
    }
    for (int i = 0; i < r->n_series; i++) {
        char name[COMET_CHART_NAME_LEN];
        comet_fabric_link_name(f, r->series[i].link, name, sizeof name);
        int cat = comet_chart_cat(h, name);
        for (int b = 0; cat >= 0 && b < TIME_BINS; b++)
            comet_chart_set(h, cat, b,
                            mean_over(&r->series[i], r->time * b / TIME_BINS,
                                      r->time * (b + 1) / TIME_BINS, r->time));
    }
    if (r->series_cut)
        snprintf(h->note, sizeof h->note,
                 "The series stop after 1,000,000 changes a link; later bins undercount.");
}
