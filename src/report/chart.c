/* The data behind a chart: categories, series, a value grid, limits and
 * points, filled by the report builders, and the CSV of that data (what
 * `--plots DIR` writes beside each SVG, for papers and slides). Drawing is
 * in svg.c. */
#include "comet/chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void comet_chart_init(comet_chart *c, comet_chart_kind kind, const char *id, const char *title)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->title, sizeof c->title, "%s", title);
    for (int i = 0; i < COMET_CHART_MAX_VALUES; i++)
        c->values[i] = NAN;
    for (int i = 0; i < COMET_CHART_MAX_CATS; i++)
        c->limits[i] = c->band_low[i] = c->band_high[i] = NAN;
}

bool comet_chart_has_bands(const comet_chart *c)
{
    for (int k = 0; k < c->n_cats; k++)
        if (isfinite(c->band_low[k]) && isfinite(c->band_high[k]))
            return true;
    return false;
}

void comet_chart_free(comet_chart *c)
{
    free(c->points);
    c->points = NULL;
    c->n_points = c->cap_points = 0;
}

int comet_chart_series(comet_chart *c, const char *name)
{
    if (c->n_series >= COMET_CHART_MAX_SERIES) {
        c->failed = true;
        return -1;
    }
    snprintf(c->series[c->n_series], COMET_CHART_NAME_LEN, "%s", name);
    return c->n_series++;
}

int comet_chart_cat(comet_chart *c, const char *name)
{
    if (c->n_cats >= COMET_CHART_MAX_CATS) {
        c->failed = true;
        return -1;
    }
    snprintf(c->cats[c->n_cats], COMET_CHART_NAME_LEN, "%s", name);
    return c->n_cats++;
}

/* The value grid is laid out by COMET_CHART_MAX_SERIES columns, so series
 * may be added after values are set. */
static int slot(int cat, int series)
{
    if (cat < 0 || series < 0 || series >= COMET_CHART_MAX_SERIES)
        return -1;
    long i = (long)cat * COMET_CHART_MAX_SERIES + series;
    return i < COMET_CHART_MAX_VALUES ? (int)i : -1;
}

void comet_chart_set(comet_chart *c, int cat, int series, double v)
{
    int i = slot(cat, series);
    if (i < 0)
        c->failed = true;
    else
        c->values[i] = v;
}

double comet_chart_get(const comet_chart *c, int cat, int series)
{
    int i = slot(cat, series);
    return i < 0 ? NAN : c->values[i];
}

void comet_chart_point_add(comet_chart *c, double x, double y, int lane, int series,
                           const char *label)
{
    if (c->failed)
        return;
    if (c->n_points == c->cap_points) {
        size_t cap = c->cap_points ? c->cap_points * 2 : 64;
        comet_chart_point *p = realloc(c->points, sizeof *p * cap);
        if (!p) {
            c->failed = true;
            return;
        }
        c->points = p;
        c->cap_points = cap;
    }
    comet_chart_point *p = &c->points[c->n_points++];
    p->x = x;
    p->y = y;
    p->lane = lane;
    p->series = series;
    p->link = -1;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
}

void comet_chart_point_link(comet_chart *c, const char *table_id, long row)
{
    if (c->failed || c->n_points == 0)
        return;
    snprintf(c->link, sizeof c->link, "%s", table_id);
    c->points[c->n_points - 1].link = row;
}

static void csv_number(comet_buf *b, double v)
{
    if (isfinite(v))
        comet_buf_printf(b, ",%.10g", v);
    else
        comet_buf_append(b, ",", 1);
}

/* A column's name with its SI unit, "forward (s)", as a CSV field. */
static void csv_head(comet_buf *b, const char *name, comet_quantity unit)
{
    char head[COMET_CHART_NAME_LEN + 16];
    const char *si = comet_unit_si(unit);
    snprintf(head, sizeof head, si[0] ? "%s (%s)" : "%s", name, si);
    comet_buf_csv_field(b, head);
}

static void chart_csv_body(comet_buf *b, const comet_chart *c)
{
    switch (c->kind) {
    case COMET_CHART_STACKED:
    case COMET_CHART_BARS:
        comet_buf_csv_field(b, c->y_label[0] ? c->y_label : "category");
        for (int s = 0; s < c->n_series; s++) {
            comet_buf_append(b, ",", 1);
            csv_head(b, c->series[s], c->x_unit);
        }
        bool bands = comet_chart_has_bands(c);
        if (c->kind == COMET_CHART_STACKED) {
            comet_buf_append(b, ",", 1);
            csv_head(b, "limit", c->x_unit);
        }
        if (bands) {
            comet_buf_append(b, ",", 1);
            csv_head(b, "band low", c->x_unit);
            comet_buf_append(b, ",", 1);
            csv_head(b, "band high", c->x_unit);
        }
        comet_buf_append(b, "\n", 1);
        for (int k = 0; k < c->n_cats; k++) {
            comet_buf_csv_field(b, c->cats[k]);
            for (int s = 0; s < c->n_series; s++)
                csv_number(b, comet_chart_get(c, k, s));
            if (c->kind == COMET_CHART_STACKED)
                csv_number(b, c->limits[k]);
            if (bands) {
                csv_number(b, c->band_low[k]);
                csv_number(b, c->band_high[k]);
            }
            comet_buf_append(b, "\n", 1);
        }
        break;
    case COMET_CHART_HEATMAP:
        comet_buf_csv_field(b, c->y_label);
        comet_buf_append(b, ",", 1);
        comet_buf_csv_field(b, c->x_label);
        comet_buf_append(b, ",", 1);
        csv_head(b, c->value_label[0] ? c->value_label : "value", c->value_unit);
        comet_buf_append(b, "\n", 1);
        for (int k = 0; k < c->n_cats; k++)
            for (int s = 0; s < c->n_series; s++) {
                comet_buf_csv_field(b, c->cats[k]);
                comet_buf_append(b, ",", 1);
                comet_buf_csv_field(b, c->series[s]);
                csv_number(b, comet_chart_get(c, k, s));
                comet_buf_append(b, "\n", 1);
            }
        break;
    case COMET_CHART_SCATTER:
        comet_buf_printf(b, "label,");
        csv_head(b, c->x_label[0] ? c->x_label : "x", c->x_unit);
        comet_buf_append(b, ",", 1);
        csv_head(b, c->y_label[0] ? c->y_label : "y", c->y_unit);
        comet_buf_printf(b, ",highlighted\n");
        for (size_t i = 0; i < c->n_points; i++) {
            comet_buf_csv_field(b, c->points[i].label);
            csv_number(b, c->points[i].x);
            csv_number(b, c->points[i].y);
            comet_buf_printf(b, ",%d\n", c->points[i].series);
        }
        break;
    case COMET_CHART_GANTT:
        comet_buf_printf(b, "lane,kind,start_s,end_s,label\n");
        for (size_t i = 0; i < c->n_points; i++) {
            const comet_chart_point *p = &c->points[i];
            comet_buf_csv_field(b, p->lane >= 0 && p->lane < c->n_cats ? c->cats[p->lane] : "");
            comet_buf_append(b, ",", 1);
            comet_buf_csv_field(b, p->series >= 0 && p->series < c->n_series ? c->series[p->series] : "");
            csv_number(b, p->x);
            csv_number(b, p->y);
            comet_buf_append(b, ",", 1);
            comet_buf_csv_field(b, p->label);
            comet_buf_append(b, "\n", 1);
        }
        break;
    }
}

void comet_chart_csv(comet_buf *b, const comet_chart *c)
{
    comet_buf body;
    comet_buf_init(&body);
    chart_csv_body(&body, c);
    if (body.failed)
        b->failed = 1;
    else if (body.data)
        comet_buf_csv_versioned(b, body.data, body.len);
    comet_buf_free(&body);
}
