/* Internal: reading typed values out of document nodes. Every failure is
 * an EINPUT error at the node's file:line:col naming the key path. */
#ifndef COMET_CONFIG_READ_H
#define COMET_CONFIG_READ_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/config.h"
#include "tree.h"
#include "units.h"

#define CFG_MAX_PRESET_DEPTH 4

typedef struct cfg_ctx {
    const char *file;       /* for error messages */
    comet_error *err;
    comet_srcmap *map;      /* positions of the keys read so far */
    int preset_depth;       /* presets read to get here */
} cfg_ctx;

#define CFG_TRY(expr)                                                         \
    do {                                                                      \
        comet_status st_ = (expr);                                            \
        if (st_ != COMET_OK)                                                  \
            return st_;                                                       \
    } while (0)

/* Error at node `at` (no position when NULL) under key path. */
comet_status cfg_fail(const cfg_ctx *c, const cfg_node *at, const char *path, const char *fmt,
                      ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Error under key path, placed where the source map has it or its parent. */
comet_status cfg_fail_key(const cfg_ctx *c, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
comet_status cfg_missing(const cfg_ctx *c, const char *path, const char *key);

void cfg_record(const cfg_ctx *c, const char *path, const cfg_node *at);

/* "a mapping", "a list" or the scalar's text in quotes (shortened). */
const char *cfg_describe(const cfg_node *n, char *buf, size_t cap);

comet_status cfg_expect(const cfg_ctx *c, const cfg_node *n, const char *path,
                        cfg_node_kind kind);

comet_status cfg_read_int(const cfg_ctx *c, const cfg_node *n, const char *path, int64_t lo,
                          int64_t hi, int64_t *out);
comet_status cfg_read_real(const cfg_ctx *c, const cfg_node *n, const char *path,
                           bool positive, double *out);
comet_status cfg_read_fraction(const cfg_ctx *c, const cfg_node *n, const char *path,
                               double *out);
comet_status cfg_read_bool(const cfg_ctx *c, const cfg_node *n, const char *path, bool *out);
comet_status cfg_read_name(const cfg_ctx *c, const cfg_node *n, const char *path, char *out,
                           size_t cap);
comet_status cfg_read_enum(const cfg_ctx *c, const cfg_node *n, const char *path,
                           const char *const *names, int *out);
comet_status cfg_read_quantity(const cfg_ctx *c, const cfg_node *n, const char *path,
                               cfg_unit_kind unit, bool positive, double *out);
/* A bare number in a unit the file format fixes (ASTRA-sim writes 50 for
 * 50 GB/s): *out = number * scale in SI, checked against kind's sane range;
 * unit names the implied unit in messages. */
comet_status cfg_read_real_in(const cfg_ctx *c, const cfg_node *n, const char *path,
                              cfg_unit_kind kind, double scale, const char *unit, bool positive,
                              double *out);

/* The candidate closest to word by edit distance when close enough, else NULL. */
const char *cfg_suggest(const char *word, const char *const *candidates);
/* "a, b, c" from a NULL-terminated list. */
void cfg_join(char *out, size_t cap, const char *const *names);
/* An unknown key (or resource: `what`) at node key: "unknown WHAT (did you
 * mean "x"?)" when one of names is close, else "unknown WHAT (allowed: a,
 * b, c)". */
comet_status cfg_fail_unknown(const cfg_ctx *c, const cfg_node *key, const char *path,
                              const char *what, const char *const *names);

#endif
