/* Error objects: filled by the library, rendered by the caller. Keeping
 * file, line, column and key apart lets the CLI print one precise line and
 * lets the config layer add a position to errors found after parsing. */
#include "comet/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void comet_error_clear(comet_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

/* Append text with control characters escaped (\n, \t, \xNN), so an error
 * stays one line and cannot drive the terminal, whatever the input held. */
static size_t append_escaped(char *out, size_t n, size_t cap, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p && n + 1 < cap; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            out[n++] = (char)*p;
            continue;
        }
        char esc[8];
        int w = *p == '\n' ? snprintf(esc, sizeof esc, "\\n")
              : *p == '\t' ? snprintf(esc, sizeof esc, "\\t")
                           : snprintf(esc, sizeof esc, "\\x%02x", *p);
        for (int i = 0; i < w && n + 1 < cap; i++)
            out[n++] = esc[i];
    }
    out[n] = '\0';
    return n;
}

comet_status comet_error_set(comet_error *err, comet_status status, const char *file,
                             int line, int column, const char *key, const char *fmt, ...)
{
    if (!err)
        return status;
    err->status = status;
    err->line = line;
    err->column = column;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    snprintf(err->key, sizeof err->key, "%s", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    char raw[sizeof err->message];
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* the message quotes input (a value, a name) that may hold a newline or
     * a terminal's control bytes: kept escaped, it is one line by itself */
    append_escaped(err->message, 0, sizeof err->message, raw);
    return status;
}

const char *comet_error_format(const comet_error *err, char *out, size_t cap)
{
    size_t n = 0;
    if (!cap)
        return out;
    out[0] = '\0';
    char num[32];
    if (err->file[0]) {
        n = append_escaped(out, n, cap, err->file);
        n = append_escaped(out, n, cap, ":");
        if (err->line > 0) {
            snprintf(num, sizeof num, "%d:", err->line);
            n = append_escaped(out, n, cap, num);
            if (err->column > 0) {
                snprintf(num, sizeof num, "%d:", err->column);
                n = append_escaped(out, n, cap, num);
            }
        }
        n = append_escaped(out, n, cap, " ");
    }
    if (err->key[0]) {
        n = append_escaped(out, n, cap, err->key);
        n = append_escaped(out, n, cap, ": ");
    }
    append_escaped(out, n, cap, err->message);
    return out;
}
