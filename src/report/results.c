/* Saved sweep results for people: a design named by the axes it sweeps
 * ("HBM 80 GiB · expansion none"), as the sweep and study pages and their
 * tables label it. Reading the file back is config/'s (results_reader.c). */
#include "comet/report.h"

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
