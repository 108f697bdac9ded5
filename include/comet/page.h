/* A report page: sections of text, notices, charts and sortable tables,
 * rendered as one self-contained HTML file (inline SVG, CSS and a short
 * script: tables sorted by a heading click and filtered by words, a row's
 * drill-down shown on a click, chart points linked to their table rows;
 * nothing fetched, prints cleanly). The
 * report builders fill a page from estimate, search, simulate and sweep
 * results; the CLI writes it, and with --plots each chart as SVG + CSV. */
#ifndef COMET_PAGE_H
#define COMET_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include "comet/buf.h"
#include "comet/chart.h"
#include "comet/error.h"

#define COMET_TABLE_MAX_COLS 32

typedef struct comet_table_cell {
    double value;      /* sorts the column; formatted in the column's unit when text is NULL */
    char *text;
} comet_table_cell;

/* One value of a row's drill-down: what the page shows under the table
 * when that row (or a chart point linked to it) is clicked. */
typedef struct comet_table_drill {
    long row;
    char group[32];    /* "where the step time goes", "memory per NPU" */
    char name[48];
    double value;
    comet_quantity unit;
} comet_table_drill;

typedef struct comet_table {
    char id[48];
    char title[160];
    int n_cols;
    char cols[COMET_TABLE_MAX_COLS][48];
    comet_quantity units[COMET_TABLE_MAX_COLS];
    size_t n_rows, cap_rows;
    comet_table_cell *cells;   /* n_rows * COMET_TABLE_MAX_COLS */
    size_t n_drill, cap_drill;
    comet_table_drill *drill;  /* in the order added, a row's values together */
    bool failed;
} comet_table;

int comet_table_col(comet_table *t, const char *name, comet_quantity unit);
/* Starts a row; returns its index or -1. Cells default to empty text. */
long comet_table_row(comet_table *t);
void comet_table_num(comet_table *t, long row, int col, double value);
void comet_table_text(comet_table *t, long row, int col, const char *text);
/* Adds a value to the row's drill-down, in a named group (values of one
 * group are drawn as bars against the group's largest). A row's values
 * are added together, after comet_table_row made it and before the next
 * row's; groups in the order they should show. */
void comet_table_drill_add(comet_table *t, long row, const char *group, const char *name,
                           double value, comet_quantity unit);
/* The table as CSV (numbers in SI units, named in the header: "step time
 * (s)"; texts as they are), each line opening with the schema_version
 * column (comet/buf.h). */
void comet_table_csv(comet_buf *b, const comet_table *t);

typedef struct comet_page comet_page;

comet_page *comet_page_new(const char *title);
void comet_page_free(comet_page *p);

/* Blocks, in order. Texts are plain (escaped on output). */
void comet_page_section(comet_page *p, const char *heading);
void comet_page_text(comet_page *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A highlighted box saying what is missing or wrong, instead of a chart. */
void comet_page_notice(comet_page *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A key/value line in a facts list ("step time: 1.23 s"). */
void comet_page_fact(comet_page *p, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A new chart or table owned by the page, placed here; NULL when memory
 * runs out (the page then renders a notice in its place). */
comet_chart *comet_page_chart(comet_page *p, comet_chart_kind kind, const char *id,
                              const char *title);
comet_table *comet_page_table(comet_page *p, const char *id, const char *title);

/* The page's charts and tables, for --plots. */
int comet_page_n_charts(const comet_page *p);
const comet_chart *comet_page_chart_at(const comet_page *p, int i);
int comet_page_n_tables(const comet_page *p);
const comet_table *comet_page_table_at(const comet_page *p, int i);
int comet_page_n_notices(const comet_page *p);

void comet_page_html(comet_buf *b, const comet_page *p);

#endif
