/* Charts for reports: the data of one chart (kind, title, axes with units,
 * series, categories, values, points) and its renderings, a standalone or
 * inline SVG drawn by comet itself and the CSV of the same data. Numbers
 * are formatted for people (comet/quantity.h). */
#ifndef COMET_CHART_H
#define COMET_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include "comet/buf.h"
#include "comet/quantity.h"

typedef enum comet_chart_kind {
    COMET_CHART_STACKED = 0, /* horizontal stacked bars: one per category, a segment per series;
                              * an optional limit per category is drawn as a marker, an
                              * optional band on its total as a whisker */
    COMET_CHART_HEATMAP,     /* categories = rows (y), series = columns (x); NAN cells are marked */
    COMET_CHART_SCATTER,     /* points (x, y), with a highlighted subset (a Pareto front) */
    COMET_CHART_BARS,        /* one horizontal bar per category (series 0) */
    COMET_CHART_GANTT        /* categories = lanes; points are spans (lane, series, start, end) */
} comet_chart_kind;

#define COMET_CHART_MAX_SERIES 64
#define COMET_CHART_MAX_CATS 256
#define COMET_CHART_MAX_VALUES 4096
#define COMET_CHART_NAME_LEN 96

typedef struct comet_chart_point {
    double x, y;        /* scatter: the point; gantt: start and end */
    int lane;           /* gantt: category */
    int series;         /* gantt: colour; scatter: 1 = highlighted (on the front) */
    char label[160];    /* tooltip */
    long link;          /* scatter: the row of the chart's linked table, -1 for none */
} comet_chart_point;

typedef struct comet_chart {
    comet_chart_kind kind;
    char id[48];                 /* file stem for standalone plots, and the SVG's id */
    char title[160];
    char x_label[80], y_label[80];
    comet_quantity x_unit, y_unit;   /* value axis of bars is x */
    char value_label[80];        /* heatmap: what the colour shows, in value_unit */
    comet_quantity value_unit;
    char note[200];              /* a line under the chart, e.g. how infeasible cells look */
    int n_series;
    char series[COMET_CHART_MAX_SERIES][COMET_CHART_NAME_LEN];
    int n_cats;
    char cats[COMET_CHART_MAX_CATS][COMET_CHART_NAME_LEN];
    double values[COMET_CHART_MAX_VALUES];  /* [cat * n_series + series] */
    double limits[COMET_CHART_MAX_CATS];    /* stacked: a capacity per category, NAN = none */
    /* stacked: an uncertainty band on each category's total, drawn as a
     * whisker (include/comet/band.h); NAN = none. band_level: its coverage. */
    double band_low[COMET_CHART_MAX_CATS], band_high[COMET_CHART_MAX_CATS];
    double band_level;
    size_t n_points, cap_points;
    comet_chart_point *points;
    char link[48];               /* scatter: the id of the table its points' rows are in */
    bool failed;                 /* something did not fit or memory ran out */
} comet_chart;

/* A chart of `kind` with no data; values and limits start as NAN. */
void comet_chart_init(comet_chart *c, comet_chart_kind kind, const char *id, const char *title);
void comet_chart_free(comet_chart *c);
/* Index of the new series or category, or -1 when full. */
int comet_chart_series(comet_chart *c, const char *name);
int comet_chart_cat(comet_chart *c, const char *name);
void comet_chart_set(comet_chart *c, int cat, int series, double v);
double comet_chart_get(const comet_chart *c, int cat, int series);
void comet_chart_point_add(comet_chart *c, double x, double y, int lane, int series,
                           const char *label);
/* Links the last point added to row `row` of the page's table `table_id`:
 * clicking the point in the HTML report shows that row and its drill-down. */
void comet_chart_point_link(comet_chart *c, const char *table_id, long row);
/* Whether any category carries a band (its CSV then has band columns). */
bool comet_chart_has_bands(const comet_chart *c);

/* The chart as SVG. standalone adds the XML declaration, namespace and
 * style so the file opens on its own; inline SVG relies on the page's. */
void comet_chart_svg(comet_buf *b, const comet_chart *c, bool standalone);
/* The chart's data as CSV, SI units, one header line; each line opens
 * with the schema_version column (comet/buf.h). */
void comet_chart_csv(comet_buf *b, const comet_chart *c);

#endif
