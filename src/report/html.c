/* A report page and its HTML: an ordered list of blocks (section headings,
 * paragraphs, notices, facts, charts, tables) rendered as one file that
 * needs nothing else: the SVG is inline, the style is in the head, and a
 * few lines of script sort tables when a column heading is clicked. A
 * chart or table that could not be built renders as a notice, so a page
 * is never broken. */
#include "comet/page.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum block_kind { B_SECTION, B_TEXT, B_NOTICE, B_FACT, B_CHART, B_TABLE } block_kind;

typedef struct block {
    block_kind kind;
    char *text;        /* heading, paragraph, notice, fact value */
    char *key;         /* fact key */
    comet_chart *chart;
    comet_table *table;
} block;

struct comet_page {
    char *title;
    size_t n, cap;
    block *blocks;
    bool failed;
};

comet_page *comet_page_new(const char *title)
{
    comet_page *p = calloc(1, sizeof *p);
    if (p && !(p->title = strdup(title))) {
        free(p);
        return NULL;
    }
    return p;
}

static void table_free(comet_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_rows * COMET_TABLE_MAX_COLS; i++)
        free(t->cells[i].text);
    free(t->cells);
    free(t);
}

void comet_page_free(comet_page *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->blocks[i].text);
        free(p->blocks[i].key);
        if (p->blocks[i].chart) {
            comet_chart_free(p->blocks[i].chart);
            free(p->blocks[i].chart);
        }
        table_free(p->blocks[i].table);
    }
    free(p->blocks);
    free(p->title);
    free(p);
}

static block *add(comet_page *p, block_kind kind)
{
    if (!p || p->failed)
        return NULL;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        block *nb = realloc(p->blocks, sizeof *nb * cap);
        if (!nb) {
            p->failed = true;
            return NULL;
        }
        p->blocks = nb;
        p->cap = cap;
    }
    block *b = &p->blocks[p->n++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

static char *vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

void comet_page_section(comet_page *p, const char *heading)
{
    block *b = add(p, B_SECTION);
    if (b)
        b->text = strdup(heading);
}

static void add_text(comet_page *p, block_kind kind, const char *fmt, va_list ap)
{
    block *b = add(p, kind);
    if (b)
        b->text = vformat(fmt, ap);
}

void comet_page_text(comet_page *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_text(p, B_TEXT, fmt, ap);
    va_end(ap);
}

void comet_page_notice(comet_page *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_text(p, B_NOTICE, fmt, ap);
    va_end(ap);
}

void comet_page_fact(comet_page *p, const char *key, const char *fmt, ...)
{
    block *b = add(p, B_FACT);
    if (!b)
        return;
    va_list ap;
    va_start(ap, fmt);
    b->text = vformat(fmt, ap);
    va_end(ap);
    b->key = strdup(key);
}

comet_chart *comet_page_chart(comet_page *p, comet_chart_kind kind, const char *id,
                              const char *title)
{
    block *b = add(p, B_CHART);
    if (!b)
        return NULL;
    b->chart = malloc(sizeof *b->chart);
    if (b->chart)
        comet_chart_init(b->chart, kind, id, title);
    return b->chart;
}

comet_table *comet_page_table(comet_page *p, const char *id, const char *title)
{
    block *b = add(p, B_TABLE);
    if (!b)
        return NULL;
    b->table = calloc(1, sizeof *b->table);
    if (b->table) {
        snprintf(b->table->id, sizeof b->table->id, "%s", id);
        snprintf(b->table->title, sizeof b->table->title, "%s", title);
    }
    return b->table;
}

static int count_kind(const comet_page *p, block_kind kind)
{
    int n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += p->blocks[i].kind == kind && (kind != B_CHART || p->blocks[i].chart) &&
             (kind != B_TABLE || p->blocks[i].table);
    return n;
}

static const block *nth_kind(const comet_page *p, block_kind kind, int k)
{
    for (size_t i = 0; i < p->n; i++) {
        const block *b = &p->blocks[i];
        if (b->kind == kind && (b->chart || b->table) && k-- == 0)
            return b;
    }
    return NULL;
}

int comet_page_n_charts(const comet_page *p) { return count_kind(p, B_CHART); }
int comet_page_n_tables(const comet_page *p) { return count_kind(p, B_TABLE); }
int comet_page_n_notices(const comet_page *p) { return count_kind(p, B_NOTICE); }

const comet_chart *comet_page_chart_at(const comet_page *p, int i)
{
    const block *b = nth_kind(p, B_CHART, i);
    return b ? b->chart : NULL;
}

const comet_table *comet_page_table_at(const comet_page *p, int i)
{
    const block *b = nth_kind(p, B_TABLE, i);
    return b ? b->table : NULL;
}

/* ---- tables ---------------------------------------------------------------- */

int comet_table_col(comet_table *t, const char *name, comet_quantity unit)
{
    if (!t || t->n_cols >= COMET_TABLE_MAX_COLS || t->n_rows > 0) {
        if (t)
            t->failed = true;
        return -1;
    }
    snprintf(t->cols[t->n_cols], sizeof t->cols[0], "%s", name);
    t->units[t->n_cols] = unit;
    return t->n_cols++;
}

long comet_table_row(comet_table *t)
{
    if (!t || t->failed)
        return -1;
    if (t->n_rows == t->cap_rows) {
        size_t cap = t->cap_rows ? t->cap_rows * 2 : 16;
        comet_table_cell *c = realloc(t->cells, sizeof *c * cap * COMET_TABLE_MAX_COLS);
        if (!c) {
            t->failed = true;
            return -1;
        }
        t->cells = c;
        t->cap_rows = cap;
    }
    comet_table_cell *row = &t->cells[t->n_rows * COMET_TABLE_MAX_COLS];
    for (int i = 0; i < COMET_TABLE_MAX_COLS; i++)
        row[i] = (comet_table_cell){NAN, NULL};
    return (long)t->n_rows++;
}

static comet_table_cell *cell(comet_table *t, long row, int col)
{
    if (!t || row < 0 || (size_t)row >= t->n_rows || col < 0 || col >= t->n_cols)
        return NULL;
    return &t->cells[(size_t)row * COMET_TABLE_MAX_COLS + (size_t)col];
}

void comet_table_num(comet_table *t, long row, int col, double value)
{
    comet_table_cell *c = cell(t, row, col);
    if (c)
        c->value = value;
}

void comet_table_text(comet_table *t, long row, int col, const char *text)
{
    comet_table_cell *c = cell(t, row, col);
    if (!c)
        return;
    free(c->text);
    c->text = strdup(text);
    if (!c->text)
        t->failed = true;
}

void comet_table_csv(comet_buf *b, const comet_table *t)
{
    for (int c = 0; c < t->n_cols; c++) {
        if (c)
            comet_buf_append(b, ",", 1);
        comet_buf_csv_field(b, t->cols[c]);
    }
    comet_buf_append(b, "\n", 1);
    for (size_t r = 0; r < t->n_rows; r++) {
        for (int c = 0; c < t->n_cols; c++) {
            const comet_table_cell *x = &t->cells[r * COMET_TABLE_MAX_COLS + (size_t)c];
            if (c)
                comet_buf_append(b, ",", 1);
            if (x->text)
                comet_buf_csv_field(b, x->text);
            else if (isfinite(x->value))
                comet_buf_printf(b, "%.10g", x->value);
        }
        comet_buf_append(b, "\n", 1);
    }
}

static void table_html(comet_buf *b, const comet_table *t)
{
    comet_buf_printf(b, "<div class=\"table-wrap\"><table class=\"sortable\" id=\"table-");
    comet_buf_escape(b, t->id);
    comet_buf_printf(b, "\">\n<caption>");
    comet_buf_escape(b, t->title);
    comet_buf_printf(b, " <span class=\"hint\">(click a heading to sort)</span></caption>\n"
                        "<thead><tr>");
    for (int c = 0; c < t->n_cols; c++) {
        comet_buf_printf(b, "<th scope=\"col\">");
        comet_buf_escape(b, t->cols[c]);
        comet_buf_printf(b, "</th>");
    }
    comet_buf_printf(b, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < t->n_rows; r++) {
        comet_buf_printf(b, "<tr>");
        for (int c = 0; c < t->n_cols; c++) {
            const comet_table_cell *x = &t->cells[r * COMET_TABLE_MAX_COLS + (size_t)c];
            char q[64];
            const char *shown = x->text ? x->text
                                : isfinite(x->value)
                                    ? comet_format_quantity(x->value, t->units[c], 0.0, q, sizeof q)
                                    : "";
            if (isfinite(x->value))
                comet_buf_printf(b, "<td data-v=\"%.10g\">", x->value);
            else
                comet_buf_printf(b, "<td>");
            comet_buf_escape(b, shown);
            comet_buf_printf(b, "</td>");
        }
        comet_buf_printf(b, "</tr>\n");
    }
    comet_buf_printf(b, "</tbody></table></div>\n");
}

/* ---- the page -------------------------------------------------------------- */

static const char style[] =
    "body{font-family:sans-serif;color:#222;max-width:800px;margin:2em auto;padding:0 1em;"
    "line-height:1.45}\n"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;border-bottom:1px solid #ccc;"
    "padding-bottom:.2em;margin-top:2em}\n"
    "figure{margin:1em 0}svg.chart{max-width:100%;height:auto}\n"
    ".notice{border-left:4px solid #E69F00;background:#fff6e0;padding:.6em 1em;margin:1em 0}\n"
    "dl.facts{display:grid;grid-template-columns:max-content auto;gap:.2em 1.2em}"
    "dl.facts dt{color:#555}dl.facts dd{margin:0;font-variant-numeric:tabular-nums}\n"
    ".table-wrap{overflow-x:auto}table{border-collapse:collapse;font-size:.85em;margin:1em 0}"
    "caption{text-align:left;font-weight:bold;padding-bottom:.4em}"
    ".hint{font-weight:normal;color:#777}th,td{border-bottom:1px solid #ddd;padding:.25em .6em;"
    "text-align:right;white-space:nowrap}th{cursor:pointer;background:#f3f3f3}"
    "td:first-child,th:first-child{text-align:left}\n"
    "footer{margin-top:3em;color:#777;font-size:.85em}\n"
    "@media print{body{max-width:none;margin:0}figure,table,.notice{break-inside:avoid}"
    ".hint{display:none}}\n";

/* Sorting on a heading click: numbers by data-v, texts alphabetically;
 * a second click reverses. */
static const char script[] =
    "document.querySelectorAll('table.sortable').forEach(function(table){\n"
    "  table.querySelectorAll('th').forEach(function(th,col){\n"
    "    th.addEventListener('click',function(){\n"
    "      var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);\n"
    "      var dir=th.getAttribute('data-dir')==='asc'?-1:1;\n"
    "      rows.sort(function(a,b){\n"
    "        var x=a.cells[col],y=b.cells[col];\n"
    "        var u=x.getAttribute('data-v'),v=y.getAttribute('data-v');\n"
    "        if(u!==null&&v!==null)return dir*(parseFloat(u)-parseFloat(v));\n"
    "        return dir*x.textContent.localeCompare(y.textContent);\n"
    "      });\n"
    "      rows.forEach(function(r){body.appendChild(r);});\n"
    "      th.setAttribute('data-dir',dir===1?'asc':'desc');\n"
    "    });\n"
    "  });\n"
    "});\n"
    "document.body.setAttribute('data-ready','1');\n";

void comet_page_html(comet_buf *b, const comet_page *p)
{
    comet_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                        "<title>");
    comet_buf_escape(b, p->title);
    comet_buf_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    comet_buf_escape(b, p->title);
    comet_buf_printf(b, "</h1>\n");
    bool in_section = false, in_facts = false;
    for (size_t i = 0; i < p->n; i++) {
        const block *bl = &p->blocks[i];
        if (in_facts && bl->kind != B_FACT) {
            comet_buf_printf(b, "</dl>\n");
            in_facts = false;
        }
        switch (bl->kind) {
        case B_SECTION:
            if (in_section)
                comet_buf_printf(b, "</section>\n");
            comet_buf_printf(b, "<section>\n<h2>");
            comet_buf_escape(b, bl->text ? bl->text : "");
            comet_buf_printf(b, "</h2>\n");
            in_section = true;
            break;
        case B_TEXT:
            comet_buf_printf(b, "<p>");
            comet_buf_escape(b, bl->text ? bl->text : "");
            comet_buf_printf(b, "</p>\n");
            break;
        case B_NOTICE:
            comet_buf_printf(b, "<p class=\"notice\">");
            comet_buf_escape(b, bl->text ? bl->text : "");
            comet_buf_printf(b, "</p>\n");
            break;
        case B_FACT:
            if (!in_facts)
                comet_buf_printf(b, "<dl class=\"facts\">\n");
            in_facts = true;
            comet_buf_printf(b, "<dt>");
            comet_buf_escape(b, bl->key ? bl->key : "");
            comet_buf_printf(b, "</dt><dd>");
            comet_buf_escape(b, bl->text ? bl->text : "");
            comet_buf_printf(b, "</dd>\n");
            break;
        case B_CHART:
            if (!bl->chart || bl->chart->failed) {
                comet_buf_printf(b, "<p class=\"notice\">This chart could not be drawn: it has "
                                    "more data than a chart holds, or memory ran out.</p>\n");
                break;
            }
            comet_buf_printf(b, "<figure>\n");
            comet_chart_svg(b, bl->chart, false);
            comet_buf_printf(b, "</figure>\n");
            break;
        case B_TABLE:
            if (!bl->table || bl->table->failed)
                comet_buf_printf(b, "<p class=\"notice\">This table could not be built: memory "
                                    "ran out.</p>\n");
            else
                table_html(b, bl->table);
            break;
        }
    }
    if (in_facts)
        comet_buf_printf(b, "</dl>\n");
    if (in_section)
        comet_buf_printf(b, "</section>\n");
    if (p->failed)
        comet_buf_printf(b, "<p class=\"notice\">Part of this report is missing: memory ran "
                            "out while it was built.</p>\n");
    comet_buf_printf(b, "<footer>Made by comet, the cluster design-space explorer. Every figure "
                        "comes from comet's analytical model or simulator.</footer>\n"
                        "<script>\n%s</script>\n</body>\n</html>\n",
                     script);
}
