/* A report page and its HTML: an ordered list of blocks (section headings,
 * paragraphs, notices, facts, charts, tables) rendered as one file that
 * needs nothing else: the SVG is inline, the style is in the head, and a
 * short hand-written script makes the tables explorable (a heading click
 * sorts, words typed in the box above a table filter its rows, a row's
 * click shows its drill-down, a click on a linked chart point shows its
 * row). The page reads the same without the script. A chart or table that
 * could not be built renders as a notice, so a page is never broken. */
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
    free(t->drill);
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

void comet_table_drill_add(comet_table *t, long row, const char *group, const char *name,
                           double value, comet_quantity unit)
{
    if (!t || t->failed || row < 0 || (size_t)row >= t->n_rows)
        return;
    if (t->n_drill == t->cap_drill) {
        size_t cap = t->cap_drill ? t->cap_drill * 2 : 64;
        comet_table_drill *d = realloc(t->drill, sizeof *d * cap);
        if (!d) {
            t->failed = true;
            return;
        }
        t->drill = d;
        t->cap_drill = cap;
    }
    comet_table_drill *d = &t->drill[t->n_drill++];
    d->row = row;
    snprintf(d->group, sizeof d->group, "%s", group);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->value = value;
    d->unit = unit;
}

void comet_table_csv(comet_buf *b, const comet_table *t)
{
    comet_buf_csv_version_head(b);
    for (int c = 0; c < t->n_cols; c++) {
        if (c)
            comet_buf_append(b, ",", 1);
        const char *si = comet_unit_si(t->units[c]);
        char head[sizeof t->cols[0] + 16];
        snprintf(head, sizeof head, si[0] ? "%s (%s)" : "%s", t->cols[c], si);
        comet_buf_csv_field(b, head);
    }
    comet_buf_append(b, "\n", 1);
    for (size_t r = 0; r < t->n_rows; r++) {
        comet_buf_csv_version(b);
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

/* Whether row r has a drill-down; entries of one row are added together,
 * so a cursor walks them in order. */
static size_t drill_from(const comet_table *t, size_t at, size_t r)
{
    while (at < t->n_drill && (size_t)t->drill[at].row < r)
        at++;
    return at;
}

/* A row's drill-down as a template the script shows on a click: each group
 * a small table of values with bars against the group's largest. */
static void drill_html(comet_buf *b, const comet_table *t, size_t from, size_t r)
{
    comet_buf_printf(b, "<template id=\"drill-");
    comet_buf_escape(b, t->id);
    comet_buf_printf(b, "-%zu\"><div class=\"drill\">", r);
    size_t i = from;
    while (i < t->n_drill && (size_t)t->drill[i].row == r) {
        size_t end = i;
        double top = 0.0;
        while (end < t->n_drill && (size_t)t->drill[end].row == r &&
               strcmp(t->drill[end].group, t->drill[i].group) == 0) {
            if (isfinite(t->drill[end].value))
                top = fmax(top, fabs(t->drill[end].value));
            end++;
        }
        comet_buf_printf(b, "<table class=\"drill-group\"><caption>");
        comet_buf_escape(b, t->drill[i].group);
        comet_buf_printf(b, "</caption>");
        for (; i < end; i++) {
            const comet_table_drill *d = &t->drill[i];
            char q[64];
            double w = top > 0.0 && isfinite(d->value) ? 100.0 * fabs(d->value) / top : 0.0;
            comet_buf_printf(b, "<tr><td>");
            comet_buf_escape(b, d->name);
            comet_buf_printf(b, "</td><td data-v=\"%.10g\">", d->value);
            comet_buf_escape(b, comet_format_quantity(d->value, d->unit, 0.0, q, sizeof q));
            comet_buf_printf(b, "</td><td class=\"mini\"><span style=\"width:%.1f%%\"></span>"
                                "</td></tr>",
                             w);
        }
        comet_buf_printf(b, "</table>");
    }
    comet_buf_printf(b, "</div></template>\n");
}

static void table_html(comet_buf *b, const comet_table *t)
{
    comet_buf_printf(b, "<div class=\"table-wrap\"><table class=\"sortable\" id=\"table-");
    comet_buf_escape(b, t->id);
    comet_buf_printf(b, "\">\n<caption>");
    comet_buf_escape(b, t->title);
    comet_buf_printf(b, " <span class=\"hint\">(click a heading to sort%s)</span></caption>\n"
                        "<thead><tr>",
                     t->n_drill ? ", a row to see its details" : "");
    for (int c = 0; c < t->n_cols; c++) {
        comet_buf_printf(b, "<th scope=\"col\">");
        comet_buf_escape(b, t->cols[c]);
        comet_buf_printf(b, "</th>");
    }
    comet_buf_printf(b, "</tr></thead>\n<tbody>\n");
    size_t at = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
        at = drill_from(t, at, r);
        comet_buf_printf(b, "<tr id=\"row-");
        comet_buf_escape(b, t->id);
        comet_buf_printf(b, "-%zu\"%s>", r,
                         at < t->n_drill && (size_t)t->drill[at].row == r ? " data-drill=\"1\""
                                                                           : "");
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
    at = 0;
    for (size_t r = 0; r < t->n_rows && t->n_drill; r++) {
        at = drill_from(t, at, r);
        if (at < t->n_drill && (size_t)t->drill[at].row == r)
            drill_html(b, t, at, r);
    }
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
    "input.filter{margin:.6em 0 0;padding:.2em .4em;width:24em;font:inherit;font-size:.85em}"
    "th[data-dir=asc]::after{content:' \\25B2'}th[data-dir=desc]::after{content:' \\25BC'}"
    "tbody tr[data-drill]{cursor:pointer}tr.selected td{background:#fff1c6}\n"
    ".drill-panel{border:1px solid #ccc;background:#fafafa;padding:.3em 1em;margin:0 0 1em}"
    ".drill-panel h3{font-size:1em;margin:.4em 0}.drill{display:flex;flex-wrap:wrap;gap:0 2em}"
    "table.drill-group{margin:.3em 0}td.mini{width:8em}"
    "td.mini span{display:block;height:.7em;background:#0072B2}\n"
    "circle[data-link]{cursor:pointer}circle.picked{stroke:#000;stroke-width:3}\n"
    "@media print{body{max-width:none;margin:0}figure,table,.notice{break-inside:avoid}"
    ".hint,input.filter,.drill-panel{display:none}}\n";

/* The page's script, run once at the end of the body: sorting on a heading
 * click (numbers by data-v, texts alphabetically, blanks last; a second
 * click reverses), a filter box above each table (rows holding every word
 * typed stay), a row's drill-down template shown under its table when the
 * row is clicked (and closed when the filter hides that row), and chart
 * points with data-link showing their row. The URL's fragment can click for a reader (#sort=C&filter=W&point=K), which
 * is how the browser test drives it without a driver. data-ready on the
 * body says the script ran to its end. */
static const char script[] =
    "(function(){\n"
    "function num(td){var v=td&&td.getAttribute('data-v');return v===null||v===undefined?null"
    ":parseFloat(v);}\n"
    "function rowsOf(table){return Array.prototype.slice.call(table.tBodies[0].rows);}\n"
    "function sortRows(table,col,dir){\n"
    "var body=table.tBodies[0],rows=rowsOf(table);\n"
    "rows.sort(function(a,b){\n"
    "var x=a.cells[col],y=b.cells[col],u=num(x),v=num(y);\n"
    "if(u!==null&&v!==null)return dir*(u-v);\n"
    "if(u!==null||v!==null)return u===null?1:-1;\n"
    "var s=x?x.textContent:'',t=y?y.textContent:'';\n"
    "if(!s||!t)return s?-1:t?1:0;\n"
    "return dir*s.localeCompare(t);\n"
    "});\n"
    "rows.forEach(function(r){body.appendChild(r);});\n"
    "}\n"
    "function pick(row){\n"
    "var table=row.parentNode.parentNode;\n"
    "rowsOf(table).forEach(function(r){r.classList.remove('selected');});\n"
    "document.querySelectorAll('.picked').forEach(function(e){e.classList.remove('picked');});\n"
    "row.classList.add('selected');row.hidden=false;\n"
    "document.querySelectorAll('[data-link=\"'+row.id+'\"]').forEach(function(e){e.classList."
    "add('picked');});\n"
    "var panel=document.getElementById('panel-'+table.id),tpl=document.getElementById('drill-"
    "'+row.id.slice(4));\n"
    "if(!panel||!tpl)return;\n"
    "var h=document.createElement('h3'),names=[];\n"
    "for(var c=0;c<row.cells.length&&c<4;c++)names.push(row.cells[c].textContent);\n"
    "h.textContent=names.join(' \\u00b7 ');\n"
    "panel.textContent='';panel.appendChild(h);panel.appendChild(tpl.content.cloneNode(true))"
    ";panel.hidden=false;\n"
    "}\n"
    "function unpick(table,row){\n"
    "row.classList.remove('selected');\n"
    "document.querySelectorAll('[data-link=\"'+row.id+'\"]').forEach(function(e){e.classList."
    "remove('picked');});\n"
    "var panel=document.getElementById('panel-'+table.id);\n"
    "if(panel){panel.hidden=true;panel.textContent='';}\n"
    "}\n"
    "document.querySelectorAll('table.sortable').forEach(function(table){\n"
    "var wrap=table.parentNode,n=rowsOf(table).length;\n"
    "var box=document.createElement('input'),count=document.createElement('span');\n"
    "table.filterBox=box;box.type='search';box.className='filter';box.placeholder='filter: wo"
    "rds each row shown contains';\n"
    "box.setAttribute('aria-label','filter the rows of '+table.id);count.className='hint';\n"
    "wrap.parentNode.insertBefore(box,wrap);wrap.parentNode.insertBefore(count,wrap);\n"
    "box.addEventListener('input',function(){\n"
    "var words=box.value.toLowerCase().split(/\\s+/).filter(function(w){return w;}),shown=0;\n"
    "rowsOf(table).forEach(function(r){\n"
    "var text=r.textContent.toLowerCase(),ok=words.every(function(w){return text.indexOf(w)>="
    "0;});\n"
    "r.hidden=!ok;shown+=ok?1:0;\n"
    "});\n"
    "count.textContent=words.length?' '+shown+' of '+n+' rows':'';\n"
    "var sel=table.querySelector('tr.selected');\n"
    "if(sel&&sel.hidden)unpick(table,sel);\n"
    "});\n"
    "table.querySelectorAll('th').forEach(function(th,col){\n"
    "th.addEventListener('click',function(){\n"
    "var dir=th.getAttribute('data-dir')==='asc'?-1:1;\n"
    "table.querySelectorAll('th').forEach(function(o){o.removeAttribute('data-dir');});\n"
    "sortRows(table,col,dir);\n"
    "th.setAttribute('data-dir',dir===1?'asc':'desc');\n"
    "});\n"
    "});\n"
    "if(table.querySelector('tr[data-drill]')){\n"
    "var panel=document.createElement('div');\n"
    "panel.className='drill-panel';panel.id='panel-'+table.id;panel.hidden=true;\n"
    "wrap.parentNode.insertBefore(panel,wrap.nextSibling);\n"
    "rowsOf(table).forEach(function(r){r.addEventListener('click',function(){pick(r);});});\n"
    "}\n"
    "});\n"
    "document.querySelectorAll('[data-link]').forEach(function(el){\n"
    "el.addEventListener('click',function(){\n"
    "var row=document.getElementById(el.getAttribute('data-link'));\n"
    "if(row){pick(row);row.scrollIntoView({block:'center'});}\n"
    "});\n"
    "});\n"
    "/* #sort=C&filter=WORDS&point=K: what a reader would click, for tests */\n"
    "var click=function(e){if(e)e.dispatchEvent(new MouseEvent('click',{bubbles:true}));};\n"
    "location.hash.slice(1).split('&').forEach(function(kv){\n"
    "var i=kv.indexOf('='),k=kv.slice(0,i),v=decodeURIComponent(kv.slice(i+1));\n"
    "var first=document.querySelector('table.sortable');\n"
    "if(k==='filter'&&first){first.filterBox.value=v;first.filterBox.dispatchEvent(new Event("
    "'input'));}\n"
    "if(k==='sort'&&first)click(first.querySelectorAll('th')[+v]);\n"
    "if(k==='point')click(document.querySelectorAll('[data-link]')[+v]);\n"
    "});\n"
    "document.body.setAttribute('data-ready','1');\n"
    "})();\n";

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
