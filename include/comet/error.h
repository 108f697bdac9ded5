/* Error objects and status codes shared by every libcomet module.
 * The library never prints: a failing call fills a comet_error and returns
 * a non-zero status, and the caller (usually the CLI) renders it. */
#ifndef COMET_ERROR_H
#define COMET_ERROR_H

#include <stddef.h>

typedef enum comet_status {
    COMET_OK = 0,
    COMET_EINPUT = 2,  /* bad user input: config, flags, impossible strategy */
    COMET_ENOMEM = 3,  /* allocation failed */
    COMET_EIO = 4,     /* file could not be read or written */
    COMET_EINTERNAL = 5,
    COMET_ECANCELED = 6 /* stopped when the caller's cancel callback asked (nothing left) */
} comet_status;

/* Where an error was found and what went wrong. Empty file/key and zero
 * line/column mean "not applicable". Lines and columns are 1-based. */
typedef struct comet_error {
    comet_status status;
    int line;
    int column;
    char file[256];
    char key[128];     /* dotted key path, e.g. "strategy.tp" */
    char message[512];
} comet_error;

/* Reset to "no error". */
void comet_error_clear(comet_error *err);

/* Fill err (if non-NULL) and return status. file/key may be NULL. */
comet_status comet_error_set(comet_error *err, comet_status status,
                             const char *file, int line, int column,
                             const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* One line "file:line:col: key: message" (parts that are absent are left
 * out) into out; returns out. */
const char *comet_error_format(const comet_error *err, char *out, size_t cap);

#endif
