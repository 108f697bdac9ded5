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
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

const char *comet_error_format(const comet_error *err, char *out, size_t cap)
{
    size_t n = 0;
    if (!cap)
        return out;
    out[0] = '\0';
#define APPEND(...)                                                           \
    do {                                                                      \
        if (n < cap) {                                                        \
            int w = snprintf(out + n, cap - n, __VA_ARGS__);                  \
            n += w > 0 ? (size_t)w : 0;                                       \
        }                                                                     \
    } while (0)
    if (err->file[0]) {
        APPEND("%s:", err->file);
        if (err->line > 0)
            APPEND("%d:", err->line);
        if (err->line > 0 && err->column > 0)
            APPEND("%d:", err->column);
        APPEND(" ");
    }
    if (err->key[0])
        APPEND("%s: ", err->key);
    APPEND("%s", err->message);
#undef APPEND
    return out;
}
