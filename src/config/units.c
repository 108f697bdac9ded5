/* Unit parsing for config quantities. Sizes, rates and times are written
 * with their units so that "GB" versus "GiB" or bytes versus bits is never
 * a guess: GB = 1e9 bytes, GiB = 2^30, "Gb/s" is gigabits. Everything is
 * converted to SI base values (bytes, bytes/s, s, FLOP/s, FLOP) here, once. */
#include "units.h"

#include "comet/config.h"

#include <ctype.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct unit_def {
    const char *name;
    double scale;
} unit_def;

#define KI 1024.0
#define END {NULL, 0}

static const unit_def bytes_units[] = {
    {"B", 1},           {"KB", 1e3},           {"MB", 1e6},
    {"GB", 1e9},        {"TB", 1e12},          {"PB", 1e15},
    {"EB", 1e18},       {"KiB", KI},
    {"MiB", KI * KI},   {"GiB", COMET_GIB},    {"TiB", COMET_GIB * KI},
    END,
};

static const unit_def bandwidth_units[] = {
    {"B/s", 1},           {"KB/s", 1e3},          {"MB/s", 1e6},  {"GB/s", 1e9},
    {"TB/s", 1e12},       {"PB/s", 1e15},         {"KiB/s", KI},  {"MiB/s", KI * KI},
    {"GiB/s", COMET_GIB},                         {"TiB/s", COMET_GIB * KI},
    {"b/s", 1.0 / 8},     {"Kb/s", 1e3 / 8},      {"Mb/s", 1e6 / 8},
    {"Gb/s", 1e9 / 8},    {"Tb/s", 1e12 / 8},     END,
};

static const unit_def time_units[] = {
    {"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ms", 1e-3}, {"s", 1}, END,
};

static const unit_def flop_rate_units[] = {
    {"FLOPS", 1},     {"KFLOPS", 1e3},  {"MFLOPS", 1e6}, {"GFLOPS", 1e9},
    {"TFLOPS", 1e12}, {"PFLOPS", 1e15}, {"EFLOPS", 1e18}, END,
};

static const unit_def flops_units[] = {
    {"FLOP", 1},     {"KFLOP", 1e3},  {"MFLOP", 1e6}, {"GFLOP", 1e9},
    {"TFLOP", 1e12}, {"PFLOP", 1e15}, {"EFLOP", 1e18}, {"ZFLOP", 1e21}, END,
};

typedef struct unit_family {
    const unit_def *units;
    const char *accepted;
    const char *example;
    const char *noun;
} unit_family;

static const unit_family families[CFG_UNIT_COUNT] = {
    [CFG_UNIT_BYTES] = {bytes_units, "B, KB, MB, GB, TB, PB, EB, KiB, MiB, GiB, TiB", "80 GiB", "size"},
    [CFG_UNIT_BANDWIDTH] = {bandwidth_units,
                            "B/s, KB/s, MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, "
                            "b/s, Kb/s, Mb/s, Gb/s, Tb/s",
                            "300 GB/s", "bandwidth"},
    [CFG_UNIT_TIME] = {time_units, "ps, ns, us, ms, s", "500 ns", "time"},
    [CFG_UNIT_FLOP_RATE] = {flop_rate_units, "FLOPS, KFLOPS, MFLOPS, GFLOPS, TFLOPS, PFLOPS, EFLOPS",
                            "312 TFLOPS", "FLOP rate"},
    [CFG_UNIT_FLOPS] = {flops_units, "FLOP, KFLOP, MFLOP, GFLOP, TFLOP, PFLOP, EFLOP, ZFLOP", "2 GFLOP",
                        "FLOP count"},
};

/* The bounds below lie far outside every real system, so only typos and
 * hostile values hit them: sizes from one byte to an exabyte (a cluster's
 * whole memory is petabytes); bandwidths from 1 KB/s (a 1980s modem; links
 * are GB/s) to 10 PB/s (a thousand times today's fastest HBM); times from a
 * picosecond (below one clock cycle) to 1000 s (a latency or delay longer
 * than a quarter of an hour stops any training); FLOP rates from 1 MFLOPS to
 * 10 EFLOPS per device; FLOP counts from 1 to 1 ZFLOP per layer. */
typedef struct unit_range {
    double lo, hi;
    const char *text;
} unit_range;

static const unit_range ranges[CFG_UNIT_COUNT] = {
    [CFG_UNIT_BYTES] = {1.0, 1e18, "1 B to 1 EB"},
    [CFG_UNIT_BANDWIDTH] = {1e3, 1e16, "1 KB/s to 10 PB/s"},
    [CFG_UNIT_TIME] = {1e-12, 1e3, "1 ps to 1000 s"},
    [CFG_UNIT_FLOP_RATE] = {1e6, 1e19, "1 MFLOPS to 10 EFLOPS"},
    [CFG_UNIT_FLOPS] = {1.0, 1e21, "1 FLOP to 1 ZFLOP"},
};

bool cfg_units_in_range(cfg_unit_kind kind, double si_value)
{
    return si_value >= ranges[kind].lo && si_value <= ranges[kind].hi;
}

const char *cfg_units_range(cfg_unit_kind kind)
{
    return ranges[kind].text;
}

static size_t digits(const char *s)
{
    size_t n = 0;
    while (isdigit((unsigned char)s[n]))
        n++;
    return n;
}

size_t cfg_number_span(const char *s)
{
    size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
    size_t whole = digits(s + i);
    i += whole;
    size_t frac = 0;
    if (s[i] == '.') {
        frac = digits(s + i + 1);
        if (whole || frac)
            i += 1 + frac;
    }
    if (!whole && !frac)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1 + ((s[i + 1] == '+' || s[i + 1] == '-') ? 1 : 0);
        size_t exp = digits(s + j);
        if (exp)
            i = j + exp;
    }
    return i;
}

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* Does the unit text [u, end-of-string minus trailing blanks) equal name? */
static int unit_matches(const char *u, const char *name)
{
    size_t n = strlen(name);
    return strncmp(u, name, n) == 0 && *skip_space(u + n) == '\0';
}

cfg_unit_status cfg_units_parse(const char *text, cfg_unit_kind kind, double *out,
                                const char **unit_at)
{
    const char *s = skip_space(text);
    size_t span = cfg_number_span(s);
    if (unit_at)
        *unit_at = s + span;
    if (!span)
        return CFG_UNITS_NOT_NUMBER;
    const char *u = skip_space(s + span);
    if (unit_at)
        *unit_at = u;
    if (*u == '\0')
        return CFG_UNITS_NO_UNIT;
    for (const unit_def *d = families[kind].units; d->name; d++) {
        if (!unit_matches(u, d->name))
            continue;
        double v = strtod(s, NULL) * d->scale;
        if (!isfinite(v))
            return CFG_UNITS_RANGE;
        *out = v;
        return CFG_UNITS_OK;
    }
    return CFG_UNITS_BAD_UNIT;
}

const char *cfg_units_accepted(cfg_unit_kind kind)
{
    return families[kind].accepted;
}

const char *cfg_units_example(cfg_unit_kind kind)
{
    return families[kind].example;
}

const char *cfg_units_noun(cfg_unit_kind kind)
{
    return families[kind].noun;
}

const char *cfg_format_number(double v, char *out, size_t cap)
{
    /* the shortest text that reads back ("80" rather than "8e+01") */
    char best[40] = "", text[40];
    size_t best_len = 0;
    for (int p = 1; p <= 17; p++) {
        snprintf(text, sizeof text, "%.*g", p, v);
        /* a tie goes to the form without an exponent ("40000", not "4e+04") */
        size_t len = 2 * strlen(text) + (strchr(text, 'e') != NULL);
        if (strtod(text, NULL) == v && (!best[0] || len < best_len)) {
            memcpy(best, text, sizeof best);
            best_len = len;
        }
    }
    snprintf(out, cap, "%s", best[0] ? best : "0");
    return out;
}

/* Whether text names the same double as v when read as a quantity. */
static bool reads_back(const char *text, cfg_unit_kind kind, double v)
{
    double back = 0.0;
    return cfg_units_parse(text, kind, &back, NULL) == CFG_UNITS_OK && back == v;
}

/* The fewest significant digits with which "NUMBER UNIT" in unit d reads
 * back to exactly v (the digits of v / scale at the precision that parses
 * back, not necessarily the quotient's own), 0 when none does; out gets
 * the shortest such text without an exponent where there is one ("80
 * GiB", not "8e+01 GiB"). */
static int digits_in(const unit_def *d, cfg_unit_kind kind, double v, char *out, size_t cap)
{
    double x = v / d->scale;
    char num[48], text[72];
    int fewest = 0;
    size_t best = 0;
    for (int p = 1; p <= 18; p++) {
        /* the last try: a whole number written out ("135050000000") */
        if (p == 18 && !(x == floor(x) && fabs(x) < 1e17))
            break;
        if (p == 18)
            snprintf(num, sizeof num, "%.0f", x);
        else
            snprintf(num, sizeof num, "%.*g", p, x);
        snprintf(text, sizeof text, "%s %s", num, d->name);
        if (!reads_back(text, kind, v))
            continue;
        size_t len = strlen(num) + (strchr(num, 'e') ? 100 : 0);
        if (!fewest)
            fewest = p;
        size_t text_len = strlen(text);
        if ((!best || len < best) && text_len < cap) {
            memcpy(out, text, text_len + 1);
            best = len;
        }
    }
    return fewest;
}

const char *cfg_units_format(cfg_unit_kind kind, double v, char *out, size_t cap)
{
    const unit_def *base = families[kind].units;
    while (base->name && base->scale != 1.0)
        base = base + 1;
    if (v == 0.0 || !isfinite(v)) {
        snprintf(out, cap, "%.17g %s", v, base->name);
        return out;
    }
    /* the fewest digits, where a number from 1 to 1000 is worth two and a
     * half digits ("512 B", not "0.5 KiB") and bytes rather than bits one
     * and a half ("135.05 GB/s", not "1.0804 Tb/s"), then the shorter
     * text ("0.5 us", not "500000 ps"), then the table's order (decimal
     * units before binary ones) */
    char best[64] = "", text[64];
    double best_score = 0.0;
    for (const unit_def *d = families[kind].units; d->name; d++) {
        if ((unsigned char)d->name[0] >= 0x80)
            continue; /* "µs": "us" says the same in ASCII */
        int digits = digits_in(d, kind, v, text, sizeof text);
        double x = fabs(v / d->scale);
        bool in_range = x >= 1.0 - 1e-12 && x < 1000.0 * (1.0 - 1e-12);
        bool bits = strstr(d->name, "b/s") != NULL;
        double score = digits + (in_range ? 0.0 : 2.5) + (bits ? 1.5 : 0.0) +
                       0.01 * (double)strlen(text); /* a tie: the shorter */
        if (digits && (!best[0] || score < best_score)) {
            memcpy(best, text, sizeof best);
            best_score = score;
        }
    }
    if (!best[0]) /* scale 1 always reads back exactly */
        snprintf(best, sizeof best, "%.17g %s", v, base->name);
    snprintf(out, cap, "%s", best);
    return out;
}

comet_status comet_parse_quantity(const char *text, comet_unit_kind kind, const char *what,
                                  double *out, comet_error *err)
{
    cfg_unit_kind k = (cfg_unit_kind)kind;
    const char *unit = NULL;
    switch (cfg_units_parse(text ? text : "", k, out, &unit)) {
    case CFG_UNITS_OK:
        if (!(*out > 0.0))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, what,
                                   "must be positive, got \"%s\"", text);
        if (!cfg_units_in_range(k, *out))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, what,
                                   "%.40s is outside the sane range %s", text, cfg_units_range(k));
        return COMET_OK;
    case CFG_UNITS_NO_UNIT:
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, what,
                               "needs a unit, e.g. \"%s\" (units: %s)", cfg_units_example(k),
                               cfg_units_accepted(k));
    case CFG_UNITS_BAD_UNIT:
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, what,
                               "unknown unit \"%.20s\" (units: %s)", unit ? unit : "",
                               cfg_units_accepted(k));
    default:
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, what,
                               "expected a quantity like \"%s\", got \"%s\"",
                               cfg_units_example(k), text ? text : "");
    }
}
