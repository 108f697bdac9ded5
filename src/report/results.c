/* Saved sweep results for people: a design named by the axes it sweeps
 * ("HBM 80 GiB · expansion none"), as the sweep and study pages and their
 * tables label it, and how far an oversubscription axis goes before step
 * time grows (the sweep and study summaries and the study page). Reading
 * the file back is config/'s (results_reader.c). */
#include "comet/report.h"

#include <math.h>
#include <stdio.h>

const char *comet_results_design_label(const comet_results *r, const comet_results_row *row,
                                       char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int a = 0; a < r->study.n_axes && n < cap; a++) {
        const comet_axis *ax = &r->study.axes[a];
        if (ax->n < 2)
            continue;
        char name[64], v[48];
        n += (size_t)snprintf(out + n, cap - n, "%s%s %s", n ? " · " : "",
                              comet_axis_short_name(ax, name, sizeof name),
                              comet_axis_format(ax, row->values[a], v, sizeof v));
    }
    if (!out[0])
        snprintf(out, cap, "the base design");
    return out;
}

void comet_headroom_text(comet_buf *b, const comet_results *r, const comet_headroom *h)
{
    if (h->axis < 0 || h->axis >= r->study.n_axes)
        return;
    const comet_axis *ax = &r->study.axes[h->axis];
    char name[64], lowest[32], v[32], q1[48], q2[48], q3[48], q4[48];
    comet_axis_short_name(ax, name, sizeof name);
    comet_axis_format(ax, ax->values[h->base_slot], lowest, sizeof lowest);
    if (h->slot < 0) {
        comet_buf_printf(b, "%s: no design fits at %s", name, lowest);
        return;
    }
    double pct = 100.0 * (h->slowdown - 1.0);
    if (fabs(pct) < 0.05)
        pct = 0.0; /* "+0.0 %", never "-0.0 %" */
    if (h->slot == h->base_slot)
        comet_buf_printf(b, "%s: nothing above %s within %.0f %%", name, lowest,
                         100.0 * h->tolerance);
    else
        comet_buf_printf(b, "%s: up to %s%s within %.0f %% of %s (step %s vs %s, %+.1f %%; "
                            "design %s vs %s)",
                         name, comet_axis_format(ax, ax->values[h->slot], v, sizeof v),
                         h->past_slot < 0 ? ", the most swept," : "", 100.0 * h->tolerance,
                         lowest,
                         comet_format_quantity(h->at->result.step_time, COMET_QTY_SECONDS, 0, q1,
                                               sizeof q1),
                         comet_format_quantity(h->base->result.step_time, COMET_QTY_SECONDS, 0,
                                               q2, sizeof q2),
                         pct,
                         comet_format_quantity(h->at->cost, COMET_QTY_MONEY, 0, q3, sizeof q3),
                         comet_format_quantity(h->base->cost, COMET_QTY_MONEY, 0, q4, sizeof q4));
    if (h->past_slot < 0)
        return;
    comet_axis_format(ax, ax->values[h->past_slot], v, sizeof v);
    if (isinf(h->past_slowdown))
        comet_buf_printf(b, "; at %s a design no longer fits", v);
    else
        comet_buf_printf(b, "; %s is %+.1f %%", v, 100.0 * (h->past_slowdown - 1.0));
}

void comet_headroom_summary(comet_buf *b, const comet_results *r)
{
    for (int a = 0; a < r->study.n_axes; a++) {
        if (r->study.axes[a].kind != COMET_AXIS_DIM_OVERSUBSCRIPTION &&
            r->study.axes[a].kind != COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION)
            continue;
        for (int m = 0; m < r->study.n_models; m++) {
            comet_headroom h;
            comet_results_headroom(r, m, a, COMET_HEADROOM_TOLERANCE, &h);
            comet_buf_printf(b, "  %s: ", r->study.models[m].name);
            comet_headroom_text(b, r, &h);
            comet_buf_printf(b, "\n");
        }
    }
}
