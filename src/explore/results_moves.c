/* Moving about a sweep's rows: the slot of a value on an axis, and the
 * same design with one axis at another value, found by its index (rows
 * are in point order, the last axis fastest). The study's conclusions
 * (methodology.c) and its oversubscription headroom (headroom.c) both
 * walk the designs this way. */
#include "comet/methodology.h"

#include <stdlib.h>

/* Index distance between neighbouring values of axis a. */
static uint64_t stride(const comet_study *st, int a)
{
    uint64_t s = 1;
    for (int b = a + 1; b < st->n_axes; b++)
        s *= (uint64_t)st->axes[b].n;
    return s;
}

int comet_axis_slot(const comet_axis *ax, double v)
{
    for (int i = 0; i < ax->n; i++)
        if (ax->values[i] == v)
            return i;
    return -1;
}

static int by_index(const void *key, const void *item)
{
    uint64_t k = *(const uint64_t *)key, i = ((const comet_results_row *)item)->index;
    return k < i ? -1 : k > i;
}

/* The row of design `index` (rows are in point order), or NULL. */
static const comet_results_row *row_at(const comet_results *r, uint64_t index)
{
    return bsearch(&index, r->rows, r->n_rows, sizeof r->rows[0], by_index);
}

const comet_results_row *comet_results_moved(const comet_results *r, const comet_results_row *row,
                                      int a, int to)
{
    int from = comet_axis_slot(&r->study.axes[a], row->values[a]);
    if (from < 0 || to < 0 || to >= r->study.axes[a].n)
        return NULL;
    uint64_t s = stride(&r->study, a);
    uint64_t index = row->index - (uint64_t)from * s + (uint64_t)to * s;
    const comet_results_row *m = row_at(r, index);
    return m && m->model == row->model ? m : NULL;
}

bool comet_results_row_fits(const comet_results_row *row)
{
    return row && row->status == COMET_POINT_OK && row->result.step_time > 0.0;
}

