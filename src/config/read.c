/* Typed readers for document values: integers, numbers, fractions,
 * booleans, names, enum names and quantities with units. Each one checks
 * its range and, on failure, writes a one-line error at the value's
 * position that says what was expected and what was found. */
#include "read.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vocab/vocab.h"
#include "srcmap.h"

/* Integer ranges with an upper end below this are part of the meaning (a
 * ZeRO stage); larger upper ends are sanity limits and reported as such. */
#define SMALL_RANGE 100

static comet_status fail_v(const cfg_ctx *c, int line, int column, const char *path,
                           const char *fmt, va_list ap)
{
    char msg[sizeof c->err->message];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return comet_error_set(c->err, COMET_EINPUT, c->file, line, column, path, "%s", msg);
}

comet_status cfg_fail(const cfg_ctx *c, const cfg_node *at, const char *path, const char *fmt,
                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    comet_status st = fail_v(c, at ? at->line : 0, at ? at->column : 0, path, fmt, ap);
    va_end(ap);
    return st;
}

comet_status cfg_fail_key(const cfg_ctx *c, const char *path, const char *fmt, ...)
{
    const comet_srcmap_entry *e = c->map ? cfg_srcmap_find(c->map, path) : NULL;
    va_list ap;
    va_start(ap, fmt);
    comet_status st = fail_v(c, e ? e->line : 0, e ? e->column : 0, path, fmt, ap);
    va_end(ap);
    if (e && c->err)
        snprintf(c->err->file, sizeof c->err->file, "%s", cfg_srcmap_file(c->map, e));
    return st;
}

comet_status cfg_missing(const cfg_ctx *c, const char *path, const char *key)
{
    return cfg_fail_key(c, path, "missing key \"%s\"", key);
}

void cfg_record(const cfg_ctx *c, const char *path, const cfg_node *at)
{
    if (c->map)
        cfg_srcmap_add(c->map, path, at->line, at->column);
}

const char *cfg_describe(const cfg_node *n, char *buf, size_t cap)
{
    if (n->kind == CFG_SEQ)
        snprintf(buf, cap, "a list");
    else if (n->kind == CFG_MAP)
        snprintf(buf, cap, "a mapping");
    else if (n->plain && n->text[0] == '\0')
        snprintf(buf, cap, "nothing");
    else if (strlen(n->text) > 40)
        snprintf(buf, cap, "\"%.37s...\"", n->text);
    else
        snprintf(buf, cap, "\"%s\"", n->text);
    return buf;
}

/* "expected WHAT, got DESCRIPTION" at n. */
static comet_status fail_expected(const cfg_ctx *c, const cfg_node *n, const char *path,
                                  const char *what)
{
    char got[64];
    return cfg_fail(c, n, path, "expected %s, got %s", what, cfg_describe(n, got, sizeof got));
}

comet_status cfg_expect(const cfg_ctx *c, const cfg_node *n, const char *path,
                        cfg_node_kind kind)
{
    static const char *const what[] = {"a value", "a list", "a mapping"};
    return n->kind == kind ? COMET_OK : fail_expected(c, n, path, what[kind]);
}

/* Case-insensitive equality of two ASCII strings. */
static bool same_ascii_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

typedef enum int_parse { INT_OK, INT_BAD, INT_HUGE } int_parse;

/* Plain decimal integer with optional sign; INT_HUGE when it does not fit
 * (then *out is INT64_MAX or INT64_MIN). */
static int_parse parse_int(const char *s, int64_t *out)
{
    int neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return INT_BAD;
    uint64_t v = 0;
    int huge = 0;
    for (; isdigit((unsigned char)*s); s++) {
        if (v > (UINT64_MAX - 9) / 10)
            huge = 1;
        else
            v = v * 10 + (uint64_t)(*s - '0');
    }
    if (*s)
        return INT_BAD;
    if (huge || v > (uint64_t)INT64_MAX) {
        *out = neg ? INT64_MIN : INT64_MAX;
        return INT_HUGE;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return INT_OK;
}

static void int_what(char *buf, size_t cap, int64_t lo, int64_t hi)
{
    if (hi < SMALL_RANGE)
        snprintf(buf, cap, "an integer from %lld to %lld", (long long)lo, (long long)hi);
    else if (lo == 1)
        snprintf(buf, cap, "a positive integer");
    else if (lo == 0)
        snprintf(buf, cap, "a non-negative integer");
    else
        snprintf(buf, cap, "an integer of at least %lld", (long long)lo);
}

comet_status cfg_read_int(const cfg_ctx *c, const cfg_node *n, const char *path, int64_t lo,
                          int64_t hi, int64_t *out)
{
    char what[64];
    int_what(what, sizeof what, lo, hi);
    int64_t v = 0;
    int_parse r = n->kind == CFG_SCALAR ? parse_int(n->text, &v) : INT_BAD;
    if (r == INT_BAD || v < lo)
        return fail_expected(c, n, path, what);
    if (v > hi && hi >= SMALL_RANGE)
        return cfg_fail(c, n, path, "%.40s is above comet's limit of %lld", n->text,
                        (long long)hi);
    if (v > hi)
        return fail_expected(c, n, path, what);
    *out = v;
    return COMET_OK;
}

/* YAML's and C's spellings of infinity and not-a-number. */
static bool names_nonfinite(const char *s)
{
    static const char *const words[] = {"inf", "infinity", "nan", NULL};
    s += (*s == '+' || *s == '-');
    s += (*s == '.');
    for (size_t i = 0; words[i]; i++)
        if (same_ascii_nocase(s, words[i]))
            return true;
    return false;
}

/* A plain decimal number (no hex, inf or nan); may overflow to inf. */
static int parse_real(const cfg_node *n, double *out)
{
    if (n->kind != CFG_SCALAR)
        return 0;
    size_t span = cfg_number_span(n->text);
    if (!span || n->text[span])
        return 0;
    *out = strtod(n->text, NULL);
    return 1;
}

comet_status cfg_read_real(const cfg_ctx *c, const cfg_node *n, const char *path,
                           bool positive, double *out)
{
    double v = 0;
    int ok = parse_real(n, &v);
    if ((ok && !isfinite(v)) || (n->kind == CFG_SCALAR && names_nonfinite(n->text)))
        return fail_expected(c, n, path, "a finite number");
    if (!ok || v < 0 || (positive && v == 0))
        return fail_expected(c, n, path, positive ? "a positive number" : "a non-negative number");
    if (v > 1e15)
        return fail_expected(c, n, path, "a number up to 1e15");
    *out = v;
    return COMET_OK;
}

comet_status cfg_read_real_in(const cfg_ctx *c, const cfg_node *n, const char *path,
                              cfg_unit_kind kind, double scale, const char *unit, bool positive,
                              double *out)
{
    double v;
    CFG_TRY(cfg_read_real(c, n, path, positive, &v));
    v *= scale;
    if (v != 0 && !cfg_units_in_range(kind, v))
        return cfg_fail(c, n, path, "%.40s %s is outside the sane range %s", n->text, unit,
                        cfg_units_range(kind));
    *out = v;
    return COMET_OK;
}

comet_status cfg_read_fraction(const cfg_ctx *c, const cfg_node *n, const char *path,
                               double *out)
{
    double v;
    if (!parse_real(n, &v) || !(v >= 1e-3 && v <= 1))
        return fail_expected(c, n, path, "a number from 0.001 to 1");
    *out = v;
    return COMET_OK;
}

comet_status cfg_read_bool(const cfg_ctx *c, const cfg_node *n, const char *path, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", NULL};
    static const char *const no[] = {"false", "False", "FALSE", NULL};
    if (n->kind == CFG_SCALAR && vocab_name_index(yes, n->text) >= 0)
        *out = true;
    else if (n->kind == CFG_SCALAR && vocab_name_index(no, n->text) >= 0)
        *out = false;
    else
        return fail_expected(c, n, path, "true or false");
    return COMET_OK;
}

comet_status cfg_read_name(const cfg_ctx *c, const cfg_node *n, const char *path, char *out,
                           size_t cap)
{
    if (n->kind != CFG_SCALAR || cfg_is_null(n) || n->text[0] == '\0')
        return fail_expected(c, n, path, "a name");
    size_t len = strlen(n->text);
    if (len >= cap)
        return cfg_fail(c, n, path, "name is longer than %zu characters", cap - 1);
    for (size_t i = 0; i < len; i++)
        if (iscntrl((unsigned char)n->text[i]))
            return cfg_fail(c, n, path, "names may not contain control characters");
    /* the whole buffer: a name read over an inherited one (a preset's)
     * leaves no tail of it, so equal settings are equal bytes */
    memset(out, 0, cap);
    memcpy(out, n->text, len);
    return COMET_OK;
}

comet_status cfg_read_enum(const cfg_ctx *c, const cfg_node *n, const char *path,
                           const char *const *names, int *out)
{
    char list[200];
    cfg_join(list, sizeof list, names);
    if (n->kind != CFG_SCALAR) {
        char got[64];
        return cfg_fail(c, n, path, "expected one of %s; got %s", list,
                        cfg_describe(n, got, sizeof got));
    }
    int i = vocab_name_index(names, n->text);
    if (i >= 0) {
        *out = i;
        return COMET_OK;
    }
    const char *near = cfg_suggest(n->text, names);
    if (near)
        return cfg_fail(c, n, path, "unknown value \"%.40s\" (did you mean \"%s\"?)", n->text,
                        near);
    return cfg_fail(c, n, path, "unknown value \"%.40s\" (expected one of %s)", n->text, list);
}

comet_status cfg_read_quantity(const cfg_ctx *c, const cfg_node *n, const char *path,
                               cfg_unit_kind unit, bool positive, double *out)
{
    char like[64];
    snprintf(like, sizeof like, "a %s like \"%s\"", cfg_units_noun(unit),
             cfg_units_example(unit));
    if (n->kind != CFG_SCALAR)
        return fail_expected(c, n, path, like);
    double v = 0;
    const char *u = NULL;
    switch (cfg_units_parse(n->text, unit, &v, &u)) {
    case CFG_UNITS_OK:
        break;
    case CFG_UNITS_NO_UNIT:
        return cfg_fail(c, n, path, "needs a unit, e.g. \"%s\" (units: %s)",
                        cfg_units_example(unit), cfg_units_accepted(unit));
    case CFG_UNITS_BAD_UNIT:
        return cfg_fail(c, n, path, "unknown unit \"%.20s\" (units: %s)", u,
                        cfg_units_accepted(unit));
    case CFG_UNITS_RANGE:
        return fail_expected(c, n, path, "a finite quantity");
    default:
        return fail_expected(c, n, path, like);
    }
    if (v < 0 || (positive && v == 0)) {
        snprintf(like, sizeof like, "a %s %s", positive ? "positive" : "non-negative",
                 cfg_units_noun(unit));
        return fail_expected(c, n, path, like);
    }
    if (v != 0 && !cfg_units_in_range(unit, v))
        return cfg_fail(c, n, path, "%.40s is outside the sane range %s", n->text,
                        cfg_units_range(unit));
    *out = v;
    return COMET_OK;
}

#define SUGGEST_MAX 64

/* Levenshtein distance of two short strings. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t prev[SUGGEST_MAX + 1], cur[SUGGEST_MAX + 1];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof cur[0]);
    }
    return prev[lb];
}

const char *cfg_suggest(const char *word, const char *const *candidates)
{
    size_t len = strlen(word);
    if (len == 0 || len > SUGGEST_MAX)
        return NULL;
    const char *best = NULL;
    size_t best_d = 3;   /* suggest only within two edits */
    for (size_t i = 0; candidates[i]; i++) {
        if (strlen(candidates[i]) > SUGGEST_MAX)
            continue;
        size_t d = edit_distance(word, candidates[i]);
        if (d < best_d && d < len) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}

void cfg_join(char *out, size_t cap, const char *const *names)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; names[i] && n < cap; i++) {
        int w = snprintf(out + n, cap - n, "%s%s", i ? ", " : "", names[i]);
        n += w > 0 ? (size_t)w : 0;
    }
}

comet_status cfg_fail_unknown(const cfg_ctx *c, const cfg_node *key, const char *path,
                              const char *what, const char *const *names)
{
    const char *near = cfg_suggest(key->text, names);
    if (near)
        return cfg_fail(c, key, path, "unknown %s (did you mean \"%s\"?)", what, near);
    char list[384];
    cfg_join(list, sizeof list, names);
    return cfg_fail(c, key, path, "unknown %s (allowed: %s)", what, list);
}
