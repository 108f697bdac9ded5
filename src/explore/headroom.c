/* How much a network can be oversubscribed before training slows: from a
 * sweep's rows, each design at the oversubscription axis's lowest ratio is
 * paired with the same design (the other axes unchanged, found by index)
 * at every higher ratio; a ratio is within tolerance when its worst pair
 * is. The answer is the largest ratio that is, with every ratio below it;
 * the study preset oversubscription-h100 asks exactly this (docs/study.md). */
#include "comet/methodology.h"

#include <math.h>
#include <string.h>

/* The worst step-time ratio of the model's designs moved from slot `from`
 * to slot `to` of axis a, and a pair that has it; 0 when no design fits at
 * `from`, INFINITY when one stops fitting. */
static double worst_move(const comet_results *r, int model, int a, int from, int to,
                         const comet_results_row **base, const comet_results_row **at)
{
    double worst = 0.0;
    double v = r->study.axes[a].values[from];
    for (size_t i = 0; i < r->n_rows; i++) {
        const comet_results_row *row = &r->rows[i];
        if (row->model != model || row->values[a] != v || !comet_results_row_fits(row))
            continue;
        const comet_results_row *moved = comet_results_moved(r, row, a, to);
        double ratio = comet_results_row_fits(moved)
                           ? moved->result.step_time / row->result.step_time
                           : INFINITY;
        if (!*base || ratio > worst) {
            worst = ratio;
            *base = row;
            *at = moved;
        }
    }
    return worst;
}

void comet_results_headroom(const comet_results *r, int model, int axis, double tolerance,
                            comet_headroom *out)
{
    memset(out, 0, sizeof *out);
    out->axis = axis;
    out->tolerance = tolerance;
    out->slot = out->past_slot = -1;
    if (axis < 0 || axis >= r->study.n_axes)
        return;
    const comet_axis *ax = &r->study.axes[axis];
    /* the slots by value, lowest first (a file may list them in any order) */
    int order[COMET_STUDY_MAX_VALUES];
    for (int i = 0; i < ax->n; i++) {
        int j = i;
        for (; j > 0 && ax->values[order[j - 1]] > ax->values[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    out->base_slot = order[0];
    const comet_results_row *base = NULL, *at = NULL;
    if (worst_move(r, model, axis, order[0], order[0], &base, &at) == 0.0)
        return; /* nothing fits at the lowest ratio */
    out->slot = order[0];
    out->slowdown = 1.0;
    out->base = base;
    out->at = at;
    for (int i = 1; i < ax->n; i++) {
        base = at = NULL;
        double worst = worst_move(r, model, axis, order[0], order[i], &base, &at);
        if (!(worst <= 1.0 + tolerance)) {
            out->past_slot = order[i];
            out->past_slowdown = worst;
            return;
        }
        out->slot = order[i];
        out->slowdown = worst;
        out->base = base;
        out->at = at;
    }
}
