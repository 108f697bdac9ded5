/* Growable text buffer used by the report renderers, so the library can
 * produce text without printing it, plus the escapes every text format
 * needs (a CSV field, HTML/XML text, a JSON string). */
#include "comet/buf.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void comet_buf_init(comet_buf *b)
{
    memset(b, 0, sizeof *b);
}

void comet_buf_free(comet_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int reserve(comet_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void comet_buf_append(comet_buf *b, const char *text, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->data + b->len, text, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void comet_buf_printf(comet_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int w = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (w < 0)
        return;
    if ((size_t)w < sizeof small) {
        comet_buf_append(b, small, (size_t)w);
        return;
    }
    if (reserve(b, (size_t)w))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)w + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)w;
}

void comet_buf_csv_field(comet_buf *b, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        comet_buf_append(b, text, strlen(text));
        return;
    }
    comet_buf_append(b, "\"", 1);
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            comet_buf_append(b, "\"", 1);
        comet_buf_append(b, p, 1);
    }
    comet_buf_append(b, "\"", 1);
}

void comet_buf_csv_version_head(comet_buf *b)
{
    comet_buf_printf(b, "schema_version,");
}

void comet_buf_csv_version(comet_buf *b)
{
    comet_buf_printf(b, "%d,", COMET_CSV_SCHEMA_VERSION);
}

void comet_buf_csv_versioned(comet_buf *b, const char *csv, size_t len)
{
    size_t at = 0;
    for (bool head = true; at < len; head = false) {
        const char *nl = memchr(csv + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - csv) + 1 : len;
        if (head)
            comet_buf_csv_version_head(b);
        else
            comet_buf_csv_version(b);
        comet_buf_append(b, csv + at, end - at);
        at = end;
    }
}

void comet_buf_escape(comet_buf *b, const char *text)
{
    for (const char *p = text; *p; p++) {
        switch (*p) {
        case '&': comet_buf_append(b, "&amp;", 5); break;
        case '<': comet_buf_append(b, "&lt;", 4); break;
        case '>': comet_buf_append(b, "&gt;", 4); break;
        case '"': comet_buf_append(b, "&quot;", 6); break;
        default:
            /* control characters cannot appear in XML 1.0 */
            if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
                comet_buf_append(b, " ", 1);
            else
                comet_buf_append(b, p, 1);
        }
    }
}

void comet_buf_json_string(comet_buf *b, const char *text)
{
    comet_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            comet_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            comet_buf_printf(b, "\\u%04x", *p);
        else
            comet_buf_append(b, (const char *)p, 1);
    }
    comet_buf_append(b, "\"", 1);
}
