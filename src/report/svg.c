/* Draws a comet_chart as SVG: stacked and plain horizontal bars, heatmaps,
 * scatter plots with a highlighted front, and Gantt timelines. Every chart
 * has a title, axis titles with units, a legend and tooltips, in a
 * colour-blind-safe palette (Okabe & Ito's eight colours, then Tol's
 * indigo; viridis for heatmaps). Elements carry classes (bar-row, bar,
 * cell, point, span) that tests count. Output depends only on the data, so
 * golden files can pin it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/chart.h"

#define WIDTH 760.0
#define TITLE_H 30.0
#define LEGEND_ROW 18.0
#define FONT "font-family=\"sans-serif\""

static const char *const palette[] = {"#0072B2", "#56B4E9", "#CC79A7", "#F0E442", "#999999",
                                      "#E69F00", "#009E73", "#D55E00", "#332288", "#000000"};
#define N_PALETTE (int)(sizeof palette / sizeof palette[0])

static const char *colour(int series)
{
    return palette[(series % N_PALETTE + N_PALETTE) % N_PALETTE];
}

/* ---- axes ------------------------------------------------------------------ */

typedef struct axis {
    double lo, hi, step;   /* ticks lo, lo + step, ... hi */
    double scale;          /* SI value of one displayed unit */
} axis;

static double nice_step(double span)
{
    if (!(span > 0.0))
        return 1.0;
    double raw = span / 5.0;
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
}

/* Ticks covering [lo, hi]; a range of zero width is widened. */
static axis make_axis(double lo, double hi, comet_quantity unit)
{
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0.0;
        hi = 1.0;
    }
    if (hi <= lo) {
        double pad = lo != 0.0 ? fabs(lo) * 0.1 : 1.0;
        lo -= pad;
        hi += pad;
        if (lo < 0.0 && hi - pad >= 0.0 && lo + pad >= 0.0)
            lo = 0.0;
    }
    axis a;
    /* ticks are nice numbers in the unit people read (GiB, not bytes) */
    a.scale = comet_unit_scale(unit, fmax(fabs(lo), fabs(hi)));
    double l = lo / a.scale, h = hi / a.scale;
    double step = nice_step(h - l);
    a.lo = floor(l / step + 1e-9) * step * a.scale;
    a.hi = ceil(h / step - 1e-9) * step * a.scale;
    a.step = step * a.scale;
    if (a.hi <= a.lo)
        a.hi = a.lo + a.step;
    return a;
}

static double at(const axis *a, double v, double from, double to)
{
    return from + (v - a->lo) / (a->hi - a->lo) * (to - from);
}

static void tick_text(char *out, size_t cap, const axis *a, double v)
{
    double shown = v / a->scale;
    if (fabs(shown) < 1e-9 * (a->hi - a->lo) / a->scale)
        shown = 0.0;
    snprintf(out, cap, "%.4g", shown);
}

static void axis_title(comet_buf *b, const char *label, comet_quantity unit, const axis *a)
{
    comet_buf_escape(b, label);
    if (unit != COMET_QTY_NONE) {
        char u[32];
        comet_unit_label(unit, fmax(fabs(a->lo), fabs(a->hi)), u, sizeof u);
        if (u[0]) {
            comet_buf_append(b, " (", 2);
            comet_buf_escape(b, u);
            comet_buf_append(b, ")", 1);
        }
    }
}

/* A horizontal value axis at y, spanning [x0, x1], with grid lines up to top. */
static void x_axis(comet_buf *b, const axis *a, double x0, double x1, double y, double top,
                   const char *label, comet_quantity unit)
{
    int n = (int)lround((a->hi - a->lo) / a->step);
    for (int i = 0; i <= n && i <= 20; i++) {
        double v = a->lo + a->step * i, x = at(a, v, x0, x1);
        char t[32];
        tick_text(t, sizeof t, a, v);
        comet_buf_printf(b,
                         "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"#dddddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                         "text-anchor=\"middle\">%s</text>\n",
                         x, top, x, y, x, y + 14.0, t);
    }
    comet_buf_printf(b,
                     "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n"
                     "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                     "text-anchor=\"middle\">",
                     x0, y, x1, y, (x0 + x1) / 2.0, y + 32.0);
    axis_title(b, label, unit, a);
    comet_buf_printf(b, "</text>\n");
}

/* A vertical value axis at x, spanning [y0 (bottom), y1 (top)]. */
static void y_axis(comet_buf *b, const axis *a, double x, double right, double y0, double y1,
                   const char *label, comet_quantity unit)
{
    int n = (int)lround((a->hi - a->lo) / a->step);
    for (int i = 0; i <= n && i <= 20; i++) {
        double v = a->lo + a->step * i, y = at(a, v, y0, y1);
        char t[32];
        tick_text(t, sizeof t, a, v);
        comet_buf_printf(b,
                         "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                         "stroke=\"#dddddd\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                         "text-anchor=\"end\">%s</text>\n",
                         x, y, right, y, x - 5.0, y + 4.0, t);
    }
    comet_buf_printf(b,
                     "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n"
                     "<text class=\"axis-title\" transform=\"translate(%.1f %.1f) rotate(-90)\" "
                     "font-size=\"12\" text-anchor=\"middle\">",
                     x, y0, x, y1, x - 48.0, (y0 + y1) / 2.0);
    axis_title(b, label, unit, a);
    comet_buf_printf(b, "</text>\n");
}

/* ---- frame, title, legend -------------------------------------------------- */

static void open_svg(comet_buf *b, const comet_chart *c, bool standalone, double height)
{
    if (standalone)
        comet_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    comet_buf_printf(b, "<svg %sclass=\"chart chart-%s\" id=\"chart-",
                     standalone ? "xmlns=\"http://www.w3.org/2000/svg\" " : "",
                     c->kind == COMET_CHART_STACKED   ? "stacked"
                     : c->kind == COMET_CHART_HEATMAP ? "heatmap"
                     : c->kind == COMET_CHART_SCATTER ? "scatter"
                     : c->kind == COMET_CHART_BARS    ? "bars"
                                                      : "gantt");
    comet_buf_escape(b, c->id);
    comet_buf_printf(b,
                     "\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                     "%s>\n<title>",
                     WIDTH, height, WIDTH, height, FONT);
    comet_buf_escape(b, c->title);
    comet_buf_printf(b, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
                        "<text class=\"chart-title\" x=\"10\" y=\"20\" font-size=\"15\" "
                        "font-weight=\"bold\">");
    comet_buf_escape(b, c->title);
    comet_buf_printf(b, "</text>\n");
}

static void close_svg(comet_buf *b, const comet_chart *c, double height)
{
    if (c->note[0]) {
        comet_buf_printf(b, "<text class=\"note\" x=\"10\" y=\"%.1f\" font-size=\"11\" "
                            "fill=\"#555555\">",
                         height - 8.0);
        comet_buf_escape(b, c->note);
        comet_buf_printf(b, "</text>\n");
    }
    comet_buf_printf(b, "</svg>\n");
}

typedef struct legend_item {
    const char *name;
    const char *fill;
    bool circle;
} legend_item;

/* Rows of swatches from y; returns the height used. Layout is measured
 * with a fixed advance per character, which is all SVG allows offline. */
static double legend_height(const legend_item *items, int n)
{
    double x = 10.0;
    int rows = n > 0 ? 1 : 0;
    for (int i = 0; i < n; i++) {
        double w = 22.0 + 6.5 * (double)strlen(items[i].name) + 14.0;
        if (x + w > WIDTH - 10.0 && x > 10.0) {
            rows++;
            x = 10.0;
        }
        x += w;
    }
    return rows * LEGEND_ROW;
}

static void legend(comet_buf *b, const legend_item *items, int n, double y)
{
    double x = 10.0;
    comet_buf_printf(b, "<g class=\"legend\">\n");
    for (int i = 0; i < n; i++) {
        double w = 22.0 + 6.5 * (double)strlen(items[i].name) + 14.0;
        if (x + w > WIDTH - 10.0 && x > 10.0) {
            y += LEGEND_ROW;
            x = 10.0;
        }
        if (items[i].circle)
            comet_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" "
                                "stroke=\"#333333\" stroke-width=\"0.5\"/>",
                             x + 6.0, y + 6.0, items[i].fill);
        else
            comet_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" "
                                "fill=\"%s\" stroke=\"#333333\" stroke-width=\"0.5\"/>",
                             x, y, items[i].fill);
        comet_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", x + 18.0, y + 10.5);
        comet_buf_escape(b, items[i].name);
        comet_buf_printf(b, "</text>\n");
        x += w;
    }
    comet_buf_printf(b, "</g>\n");
}

/* Series that hold any non-zero value, as legend items. */
static int series_legend(const comet_chart *c, legend_item *items, bool used[])
{
    int n = 0;
    for (int s = 0; s < c->n_series; s++) {
        used[s] = false;
        for (size_t i = 0; i < c->n_points && c->kind == COMET_CHART_GANTT && !used[s]; i++)
            used[s] = c->points[i].series == s;
        for (int k = 0; k < c->n_cats && !used[s]; k++) {
            double v = comet_chart_get(c, k, s);
            used[s] = isfinite(v) && v != 0.0;
        }
        if (used[s])
            items[n++] = (legend_item){c->series[s], colour(s), false};
    }
    return n;
}

/* A label of at most max_chars characters (not bytes: labels hold "·" and
 * other UTF-8), cut with an ellipsis; never splits a character, so the SVG
 * stays valid UTF-8. */
static void label_text(comet_buf *b, const char *text, size_t max_chars)
{
    size_t chars = 0, keep = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p & 0xC0) != 0x80 && ++chars == max_chars)
            keep = (size_t)((const char *)p - text); /* the byte where the last char starts */
    if (chars <= max_chars) {
        comet_buf_escape(b, text);
        return;
    }
    char cut[COMET_CHART_NAME_LEN + 4];
    if (keep > COMET_CHART_NAME_LEN - 1)
        keep = COMET_CHART_NAME_LEN - 1;
    while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
        keep--; /* never end inside a character */
    snprintf(cut, sizeof cut, "%.*s…", (int)keep, text);
    comet_buf_escape(b, cut);
}

/* ---- bars ------------------------------------------------------------------ */

#define BAR_LEFT 270.0
#define BAR_H 22.0
#define BAR_GAP 8.0

/* A category's band on its total: a line across the bar's middle from the
 * low to the high end, with a tick at each. */
/* A value to ten significant digits in the prefix it reads best in, for
 * tooltips: " (13.62231106 s)" after the rounded "13.6 s"; nothing when
 * the rounded value is exact. */
static void exact_value(comet_buf *b, double v, comet_quantity unit)
{
    if (!isfinite(v))
        return;
    double ref = v != 0.0 ? v : 1.0;
    char lab[32];
    comet_unit_label(unit, ref, lab, sizeof lab);
    double x = v / comet_unit_scale(unit, ref);
    char rounded[32];
    snprintf(rounded, sizeof rounded, "%.3g", x);
    if (strtod(rounded, NULL) == x)
        return; /* the three digits shown are the value */
    if (unit == COMET_QTY_MONEY)
        comet_buf_printf(b, " ($%.10g%s%s)", x, lab[1] ? " " : "", lab + 1);
    else
        comet_buf_printf(b, " (%.10g%s%s)", x, lab[0] && unit != COMET_QTY_RATIO ? " " : "",
                         lab);
}

static void band_whisker(comet_buf *b, const comet_chart *c, const axis *a, double x0, double x1,
                         double y, int k, const char *name)
{
    double xl = at(a, c->band_low[k], x0, x1), xh = at(a, c->band_high[k], x0, x1);
    double ym = y + 0.5 * BAR_H;
    char ql[48], qh[48];
    comet_format_quantity(c->band_low[k], c->x_unit, 0.0, ql, sizeof ql);
    comet_format_quantity(c->band_high[k], c->x_unit, 0.0, qh, sizeof qh);
    comet_buf_printf(b, "<g class=\"band\" stroke=\"#444444\" stroke-width=\"2\"><title>");
    comet_buf_escape(b, name);
    comet_buf_printf(b, ": ");
    comet_buf_escape(b, ql);
    comet_buf_printf(b, " to ");
    comet_buf_escape(b, qh);
    comet_buf_printf(b, "</title><line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>"
                        "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>"
                        "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/></g>\n",
                     xl, ym, xh, ym, xl, ym - 6.0, xl, ym + 6.0, xh, ym - 6.0, xh, ym + 6.0);
}

static void draw_bars(comet_buf *b, const comet_chart *c, bool standalone)
{
    bool stacked = c->kind == COMET_CHART_STACKED;
    int n_series = stacked ? c->n_series : 1;
    legend_item items[COMET_CHART_MAX_SERIES + 1];
    bool used[COMET_CHART_MAX_SERIES] = {false};
    int n_items = stacked ? series_legend(c, items, used) : 0;
    if (!stacked) {
        used[0] = true;
        items[n_items++] = (legend_item){c->n_series ? c->series[0] : c->x_label, colour(0),
                                         false};
    }
    bool any_limit = false;
    double lo = 0.0, hi = 0.0;
    for (int k = 0; k < c->n_cats; k++) {
        double pos = 0.0, neg = 0.0;
        for (int s = 0; s < n_series; s++) {
            double v = comet_chart_get(c, k, s);
            if (isfinite(v))
                *(v >= 0.0 ? &pos : &neg) += v;
        }
        hi = fmax(hi, pos);
        lo = fmin(lo, neg);
        if (stacked && isfinite(c->limits[k])) {
            hi = fmax(hi, c->limits[k]);
            any_limit = true;
        }
    }
    bool bands = stacked && comet_chart_has_bands(c);
    for (int k = 0; bands && k < c->n_cats; k++)
        if (isfinite(c->band_high[k]))
            hi = fmax(hi, c->band_high[k]);
    char band_name[48];
    snprintf(band_name, sizeof band_name, "%.0f %% band", 100.0 * c->band_level);
    if (any_limit)
        items[n_items++] = (legend_item){"capacity", "#000000", false};
    if (bands)
        items[n_items++] = (legend_item){band_name, "#444444", false};
    double lh = legend_height(items, n_items);
    double top = TITLE_H + lh + 10.0;
    double rows_h = c->n_cats * (BAR_H + BAR_GAP);
    double height = top + rows_h + 50.0 + (c->note[0] ? 16.0 : 0.0);
    axis a = make_axis(lo, hi > lo ? hi : lo + 1.0, c->x_unit);
    double x0 = BAR_LEFT, x1 = WIDTH - 90.0, base = top + rows_h;
    open_svg(b, c, standalone, height);
    legend(b, items, n_items, TITLE_H);
    x_axis(b, &a, x0, x1, base, top - 4.0, c->x_label, c->x_unit);
    for (int k = 0; k < c->n_cats; k++) {
        double y = top + k * (BAR_H + BAR_GAP);
        comet_buf_printf(b, "<g class=\"bar-row\">\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                            "text-anchor=\"end\">",
                         x0 - 6.0, y + 15.0);
        label_text(b, c->cats[k], 40);
        comet_buf_printf(b, "<title>");
        comet_buf_escape(b, c->cats[k]);
        comet_buf_printf(b, "</title></text>\n");
        double pos = 0.0, neg = 0.0, total = 0.0;
        for (int s = 0; s < n_series; s++) {
            double v = comet_chart_get(c, k, s);
            if (!isfinite(v) || v == 0.0)
                continue;
            double from = v >= 0.0 ? pos : neg + v;
            *(v >= 0.0 ? &pos : &neg) += v;
            total += v;
            double xa = at(&a, from, x0, x1), xb = at(&a, from + fabs(v), x0, x1);
            char q[48];
            comet_buf_printf(b, "<rect class=\"bar\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                                "height=\"%.0f\" fill=\"%s\"><title>",
                             xa, y, fmax(xb - xa, 0.0), BAR_H, colour(s));
            if (stacked) {
                comet_buf_escape(b, c->series[s]);
                comet_buf_append(b, ": ", 2);
            }
            comet_buf_escape(b, comet_format_quantity(v, c->x_unit, 0.0, q, sizeof q));
            exact_value(b, v, c->x_unit);
            comet_buf_printf(b, "</title></rect>\n");
        }
        char q[48];
        comet_format_quantity(total, c->x_unit, 0.0, q, sizeof q);
        comet_buf_printf(b, "<text class=\"total\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">",
                         at(&a, pos, x0, x1) + 4.0, y + 15.0);
        comet_buf_escape(b, q);
        comet_buf_printf(b, "</text>\n");
        if (stacked && isfinite(c->limits[k])) {
            double xl = at(&a, c->limits[k], x0, x1);
            comet_format_quantity(c->limits[k], c->x_unit, 0.0, q, sizeof q);
            comet_buf_printf(b, "<line class=\"limit\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
                                "y2=\"%.1f\" stroke=\"#000000\" stroke-width=\"3\"><title>"
                                "capacity: ",
                             xl, y - 3.0, xl, y + BAR_H + 3.0);
            comet_buf_escape(b, q);
            comet_buf_printf(b, "</title></line>\n");
        }
        if (bands && isfinite(c->band_low[k]) && isfinite(c->band_high[k]))
            band_whisker(b, c, &a, x0, x1, y, k, band_name);
        comet_buf_printf(b, "</g>\n");
    }
    close_svg(b, c, height);
}

/* ---- heatmap --------------------------------------------------------------- */

/* viridis at t in [0, 1], from five anchors */
static void viridis(double t, char out[8], bool *dark)
{
    static const double anchor[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140},
                                        {94, 201, 98}, {253, 231, 37}};
    if (!(t >= 0.0))
        t = 0.0;
    if (t > 1.0)
        t = 1.0;
    double p = t * 4.0;
    int i = p >= 4.0 ? 3 : (int)p;
    double f = p - i;
    int rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)lround(anchor[i][k] + (anchor[i + 1][k] - anchor[i][k]) * f);
    snprintf(out, 8, "#%02x%02x%02x", rgb[0] & 255, rgb[1] & 255, rgb[2] & 255);
    *dark = t < 0.55;
}

static void draw_heatmap(comet_buf *b, const comet_chart *c, bool standalone)
{
    double lo = INFINITY, hi = -INFINITY;
    bool any_missing = false;
    for (int k = 0; k < c->n_cats; k++)
        for (int s = 0; s < c->n_series; s++) {
            double v = comet_chart_get(c, k, s);
            if (isfinite(v)) {
                lo = fmin(lo, v);
                hi = fmax(hi, v);
            } else
                any_missing = true;
        }
    double left = 130.0, right = 20.0;
    double cell_w = c->n_series ? fmin(90.0, (WIDTH - left - right) / c->n_series) : 90.0;
    double cell_h = 28.0;
    double top = TITLE_H + LEGEND_ROW + 16.0;
    double grid_h = c->n_cats * cell_h;
    double height = top + grid_h + 64.0 + (c->note[0] ? 16.0 : 0.0);
    open_svg(b, c, standalone, height);
    /* legend: a colour ramp from lo to hi, and the mark of a cell with no value */
    comet_buf_printf(b, "<g class=\"legend\">\n<defs><linearGradient id=\"ramp-");
    comet_buf_escape(b, c->id);
    comet_buf_printf(b, "\">");
    for (int i = 0; i <= 4; i++) {
        char col[8];
        bool dark;
        viridis(i / 4.0, col, &dark);
        comet_buf_printf(b, "<stop offset=\"%d%%\" stop-color=\"%s\"/>", i * 25, col);
    }
    char qlo[48], qhi[48];
    comet_format_quantity(lo, c->value_unit, 0.0, qlo, sizeof qlo);
    comet_format_quantity(hi, c->value_unit, 0.0, qhi, sizeof qhi);
    comet_buf_printf(b, "</linearGradient></defs>\n<text x=\"10\" y=\"%.1f\" font-size=\"12\">",
                     TITLE_H + 10.5);
    label_text(b, c->value_label, 26);
    comet_buf_printf(b, ":</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                        "text-anchor=\"end\">",
                     196.0, TITLE_H + 10.5);
    comet_buf_escape(b, isfinite(lo) ? qlo : "–");
    comet_buf_printf(b, "</text>\n<rect x=\"200\" y=\"%.1f\" width=\"160\" height=\"12\" "
                        "fill=\"url(#ramp-",
                     TITLE_H);
    comet_buf_escape(b, c->id);
    comet_buf_printf(b, ")\"/>\n<text x=\"366\" y=\"%.1f\" font-size=\"11\">", TITLE_H + 10.5);
    comet_buf_escape(b, isfinite(hi) ? qhi : "–");
    comet_buf_printf(b, "</text>\n");
    if (any_missing)
        comet_buf_printf(b, "<rect x=\"460\" y=\"%.1f\" width=\"12\" height=\"12\" "
                            "fill=\"#eeeeee\" stroke=\"#999999\"/><text x=\"463\" y=\"%.1f\" "
                            "font-size=\"11\">×</text><text x=\"478\" y=\"%.1f\" "
                            "font-size=\"12\">no feasible strategy</text>\n",
                         TITLE_H, TITLE_H + 10.0, TITLE_H + 10.5);
    comet_buf_printf(b, "</g>\n");
    for (int k = 0; k < c->n_cats; k++) {
        double y = top + k * cell_h;
        comet_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">",
                         left - 6.0, y + cell_h / 2.0 + 4.0);
        label_text(b, c->cats[k], 18);
        comet_buf_printf(b, "</text>\n");
        for (int s = 0; s < c->n_series; s++) {
            double x = left + s * cell_w, v = comet_chart_get(c, k, s);
            char q[48];
            if (!isfinite(v)) {
                comet_buf_printf(b, "<g class=\"cell infeasible\"><rect x=\"%.1f\" y=\"%.1f\" "
                                    "width=\"%.1f\" height=\"%.1f\" fill=\"#eeeeee\" "
                                    "stroke=\"#ffffff\"/><text x=\"%.1f\" y=\"%.1f\" "
                                    "font-size=\"12\" text-anchor=\"middle\" fill=\"#777777\">"
                                    "×</text><title>",
                                 x, y, cell_w, cell_h, x + cell_w / 2.0, y + cell_h / 2.0 + 4.0);
                comet_buf_escape(b, c->cats[k]);
                comet_buf_append(b, ", ", 2);
                comet_buf_escape(b, c->series[s]);
                comet_buf_printf(b, ": no feasible strategy</title></g>\n");
                continue;
            }
            char col[8];
            bool dark;
            viridis(hi > lo ? (v - lo) / (hi - lo) : 1.0, col, &dark);
            comet_format_quantity(v, c->value_unit, 0.0, q, sizeof q);
            comet_buf_printf(b, "<g class=\"cell\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                "height=\"%.1f\" fill=\"%s\" stroke=\"#ffffff\"/>",
                             x, y, cell_w, cell_h, col);
            if (cell_w >= 56.0) {
                comet_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                                    "text-anchor=\"middle\" fill=\"%s\">",
                                 x + cell_w / 2.0, y + cell_h / 2.0 + 3.5,
                                 dark ? "#ffffff" : "#000000");
                comet_buf_escape(b, q);
                comet_buf_printf(b, "</text>");
            }
            comet_buf_printf(b, "<title>");
            comet_buf_escape(b, c->cats[k]);
            comet_buf_append(b, ", ", 2);
            comet_buf_escape(b, c->series[s]);
            comet_buf_append(b, ": ", 2);
            comet_buf_escape(b, q);
            exact_value(b, v, c->value_unit);
            comet_buf_printf(b, "</title></g>\n");
        }
    }
    for (int s = 0; s < c->n_series; s++) {
        comet_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                            "text-anchor=\"middle\">",
                         left + (s + 0.5) * cell_w, top + grid_h + 14.0);
        label_text(b, c->series[s], (size_t)fmax(4.0, cell_w / 6.5));
        comet_buf_printf(b, "</text>\n");
    }
    comet_buf_printf(b, "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                        "text-anchor=\"middle\">",
                     left + c->n_series * cell_w / 2.0, top + grid_h + 34.0);
    comet_buf_escape(b, c->x_label);
    comet_buf_printf(b, "</text>\n<text class=\"axis-title\" transform=\"translate(14 %.1f) "
                        "rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">",
                     top + grid_h / 2.0);
    comet_buf_escape(b, c->y_label);
    comet_buf_printf(b, "</text>\n");
    close_svg(b, c, height);
}

/* ---- scatter --------------------------------------------------------------- */

static int by_x(const void *p, const void *q)
{
    const comet_chart_point *a = *(const comet_chart_point *const *)p;
    const comet_chart_point *bb = *(const comet_chart_point *const *)q;
    return a->x < bb->x ? -1 : a->x > bb->x ? 1 : (a->y < bb->y ? -1 : a->y > bb->y);
}

static void draw_scatter(comet_buf *b, const comet_chart *c, bool standalone)
{
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    size_t n_front = 0;
    for (size_t i = 0; i < c->n_points; i++) {
        const comet_chart_point *p = &c->points[i];
        xlo = fmin(xlo, p->x);
        xhi = fmax(xhi, p->x);
        ylo = fmin(ylo, p->y);
        yhi = fmax(yhi, p->y);
        n_front += p->series != 0;
    }
    legend_item items[2] = {{c->n_series > 0 ? c->series[0] : "point", "#56B4E9", true},
                            {c->n_series > 1 ? c->series[1] : "highlighted", "#D55E00", true}};
    double top = TITLE_H + LEGEND_ROW + 14.0, plot_h = 300.0;
    double x0 = 80.0, x1 = WIDTH - 30.0, y0 = top + plot_h;
    double height = y0 + 50.0 + (c->note[0] ? 16.0 : 0.0);
    axis ax = make_axis(xlo, xhi, c->x_unit), ay = make_axis(ylo, yhi, c->y_unit);
    open_svg(b, c, standalone, height);
    legend(b, items, n_front ? 2 : 1, TITLE_H);
    x_axis(b, &ax, x0, x1, y0, top, c->x_label, c->x_unit);
    y_axis(b, &ay, x0, x1, y0, top, c->y_label, c->y_unit);
    const comet_chart_point **front = NULL;
    if (n_front) {
        front = malloc(sizeof *front * n_front);
        size_t k = 0;
        for (size_t i = 0; front && i < c->n_points; i++)
            if (c->points[i].series)
                front[k++] = &c->points[i];
        if (front) {
            qsort(front, n_front, sizeof *front, by_x);
            comet_buf_printf(b, "<polyline class=\"front-line\" fill=\"none\" stroke=\"#D55E00\" "
                                "stroke-width=\"1.5\" points=\"");
            for (size_t i = 0; i < n_front; i++)
                comet_buf_printf(b, "%s%.2f,%.2f", i ? " " : "", at(&ax, front[i]->x, x0, x1),
                                 at(&ay, front[i]->y, y0, top));
            comet_buf_printf(b, "\"/>\n");
        }
    }
    for (int pass = 0; pass < 2; pass++) /* the front on top */
        for (size_t i = 0; i < c->n_points; i++) {
            const comet_chart_point *p = &c->points[i];
            if ((p->series != 0) != (pass == 1))
                continue;
            char qx[48], qy[48];
            comet_buf_printf(b, "<circle class=\"point%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"%s\" "
                                "fill=\"%s\" fill-opacity=\"%s\" stroke=\"#333333\" "
                                "stroke-width=\"0.5\"",
                             pass ? " front" : "", at(&ax, p->x, x0, x1), at(&ay, p->y, y0, top),
                             pass ? "5" : "3.5", pass ? "#D55E00" : "#56B4E9",
                             pass ? "1" : "0.7");
            if (c->link[0] && p->link >= 0 && !standalone) {
                comet_buf_printf(b, " data-link=\"row-");
                comet_buf_escape(b, c->link);
                comet_buf_printf(b, "-%ld\"", p->link);
            }
            comet_buf_printf(b, "><title>");
            if (p->label[0]) {
                comet_buf_escape(b, p->label);
                comet_buf_append(b, ": ", 2);
            }
            comet_buf_escape(b, comet_format_quantity(p->x, c->x_unit, 0.0, qx, sizeof qx));
            exact_value(b, p->x, c->x_unit);
            comet_buf_append(b, ", ", 2);
            comet_buf_escape(b, comet_format_quantity(p->y, c->y_unit, 0.0, qy, sizeof qy));
            exact_value(b, p->y, c->y_unit);
            comet_buf_printf(b, "</title></circle>\n");
        }
    free(front);
    close_svg(b, c, height);
}

/* ---- Gantt ----------------------------------------------------------------- */

#define LANE_H 16.0

static void draw_gantt(comet_buf *b, const comet_chart *c, bool standalone)
{
    legend_item items[COMET_CHART_MAX_SERIES];
    bool used[COMET_CHART_MAX_SERIES];
    int n_items = series_legend(c, items, used);
    double end = 0.0;
    for (size_t i = 0; i < c->n_points; i++)
        end = fmax(end, c->points[i].y);
    double lh = legend_height(items, n_items);
    double top = TITLE_H + lh + 10.0, lanes_h = c->n_cats * (LANE_H + 3.0);
    double x0 = 150.0, x1 = WIDTH - 20.0, base = top + lanes_h;
    double height = base + 50.0 + (c->note[0] ? 16.0 : 0.0);
    axis a = make_axis(0.0, end > 0.0 ? end : 1.0, c->x_unit);
    open_svg(b, c, standalone, height);
    legend(b, items, n_items, TITLE_H);
    x_axis(b, &a, x0, x1, base, top - 4.0, c->x_label, c->x_unit);
    for (int k = 0; k < c->n_cats; k++) {
        double y = top + k * (LANE_H + 3.0);
        comet_buf_printf(b, "<rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                            "height=\"%.0f\" fill=\"#f3f3f3\"/><text x=\"%.1f\" y=\"%.1f\" "
                            "font-size=\"11\" text-anchor=\"end\">",
                         x0, y, x1 - x0, LANE_H, x0 - 6.0, y + 12.0);
        label_text(b, c->cats[k], 22);
        comet_buf_printf(b, "</text>\n");
    }
    for (size_t i = 0; i < c->n_points; i++) {
        const comet_chart_point *p = &c->points[i];
        if (p->lane < 0 || p->lane >= c->n_cats)
            continue;
        double y = top + p->lane * (LANE_H + 3.0);
        double xa = at(&a, p->x, x0, x1), xb = at(&a, p->y, x0, x1);
        char qa[48], qb[48];
        comet_buf_printf(b, "<rect class=\"span\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                            "height=\"%.0f\" fill=\"%s\"><title>",
                         xa, y, fmax(xb - xa, 0.3), LANE_H, colour(p->series));
        if (p->series >= 0 && p->series < c->n_series)
            comet_buf_escape(b, c->series[p->series]);
        if (p->label[0]) {
            comet_buf_append(b, " ", 1);
            comet_buf_escape(b, p->label);
        }
        comet_buf_printf(b, ": %s – %s</title></rect>\n",
                         comet_format_quantity(p->x, c->x_unit, end, qa, sizeof qa),
                         comet_format_quantity(p->y, c->x_unit, end, qb, sizeof qb));
    }
    close_svg(b, c, height);
}

void comet_chart_svg(comet_buf *b, const comet_chart *c, bool standalone)
{
    switch (c->kind) {
    case COMET_CHART_STACKED:
    case COMET_CHART_BARS: draw_bars(b, c, standalone); break;
    case COMET_CHART_HEATMAP: draw_heatmap(b, c, standalone); break;
    case COMET_CHART_SCATTER: draw_scatter(b, c, standalone); break;
    case COMET_CHART_GANTT: draw_gantt(b, c, standalone); break;
    }
}
