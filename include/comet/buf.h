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
/* A JSON string literal of text (quotes, backslashes, control characters escaped). */
void comet_buf_json_string(comet_buf *b, const char *text);
/* Text escaped for HTML and XML (&, <, >, "; control characters become spaces). */
void comet_buf_escape(comet_buf *b, const char *text);

#endif
