/* A growable text buffer. Report renderers write into it so that the
 * library never touches stdout; the CLI decides where the text goes. */
#ifndef COMET_BUF_H
#define COMET_BUF_H

#include <stddef.h>

typedef struct comet_buf {
    char *data;   /* always NUL-terminated when len > 0 or after first append */
    size_t len;
    size_t cap;
    int failed;   /* set once an allocation fails; later appends are no-ops */
} comet_buf;

void comet_buf_init(comet_buf *b);
void comet_buf_free(comet_buf *b);
void comet_buf_append(comet_buf *b, const char *text, size_t n);
void comet_buf_printf(comet_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* One CSV field, quoted the RFC 4180 way when it holds a comma, a quote or
 * a line break. */
void comet_buf_csv_field(comet_buf *b, const char *text);
/* Every CSV comet writes (results.csv, pareto.csv, --csv outputs, the
 * --plots data) carries its format's version in its first column,
 * schema_version, on every line: pandas.read_csv and other readers take
 * it as an ordinary column. The version grows only when a column changes
 * meaning or goes away; a new column keeps it. Files written before the
 * column existed are version 0 and are still read. */
#define COMET_CSV_SCHEMA_VERSION 1
/* The version column's header, "schema_version,", and a row's "1,". */
void comet_buf_csv_version_head(comet_buf *b);
void comet_buf_csv_version(comet_buf *b);
/* CSV text (a header line, then rows) appended with the version column
 * put first on every line. */
void comet_buf_csv_versioned(comet_buf *b, const char *csv, size_t len);
/* A JSON string literal of text (quotes, backslashes, control characters escaped). */
void comet_buf_json_string(comet_buf *b, const char *text);
/* Text escaped for HTML and XML (&, <, >, "; control characters become spaces). */
void comet_buf_escape(comet_buf *b, const char *text);

#endif
