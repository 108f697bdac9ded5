/* Numbers for people: a value and its unit become "1.23 s", "45.6 GiB",
 * "312 TFLOP/s", "$1.79 M" or "61.8 %", with three significant digits and
 * the prefix that suits a reference value, so that every tick of one axis
 * uses the same prefix; and settings (axis values people chose) in their
 * shortest form. Reports, charts, summaries and studies all format here. */
#include <math.h>
#include <stdio.h>

#include "comet/quantity.h"
#include "comet/units.h"

typedef struct prefix {
    double scale;
    const char *name;
} prefix;

/* The largest prefix whose scale is at most |ref| (the smallest when none). */
static const prefix *pick(const prefix *p, int n, double ref)
{
    double a = fabs(ref);
    const prefix *best = &p[0];
    for (int i = 0; i < n; i++)
        if (a >= p[i].scale * (1.0 - 1e-12))
            best = &p[i];
    return best;
}

static const prefix seconds[] = {{1e-9, "ns"}, {1e-6, "µs"}, {1e-3, "ms"}, {1.0, "s"}};
static const prefix bytes[] = {{1.0, "B"},
                               {1024.0, "KiB"},
                               {1048576.0, "MiB"},
                               {COMET_GIB, "GiB"},
                               {1099511627776.0, "TiB"},
                               {1125899906842624.0, "PiB"}};
static const prefix rate[] = {{1.0, "B/s"}, {1e3, "kB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"},
                              {1e12, "TB/s"}};
static const prefix flops[] = {{1.0, "FLOP/s"},   {1e9, "GFLOP/s"},  {1e12, "TFLOP/s"},
                               {1e15, "PFLOP/s"}, {1e18, "EFLOP/s"}};
static const prefix flop[] = {{1.0, "FLOP"}, {1e9, "GFLOP"}, {1e12, "TFLOP"}, {1e15, "PFLOP"},
                              {1e18, "EFLOP"}, {1e21, "ZFLOP"}};
static const prefix counts[] = {{1.0, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "B"}, {1e12, "T"}};
static const prefix tokens[] = {{1.0, "tokens/s"}, {1e3, "k tokens/s"}, {1e6, "M tokens/s"}};

#define PICK(table, ref) pick(table, (int)(sizeof table / sizeof table[0]), ref)

static const prefix *prefix_for(comet_quantity unit, double ref)
{
    switch (unit) {
    case COMET_QTY_SECONDS: return PICK(seconds, ref);
    case COMET_QTY_BYTES: return PICK(bytes, ref);
    case COMET_QTY_BYTES_PER_S: return PICK(rate, ref);
    case COMET_QTY_FLOP_PER_S: return PICK(flops, ref);
    case COMET_QTY_FLOP: return PICK(flop, ref);
    case COMET_QTY_MONEY:
    case COMET_QTY_COUNT: return PICK(counts, ref);
    case COMET_QTY_TOKENS_PER_S: return PICK(tokens, ref);
    default: return NULL;
    }
}

/* Three significant digits, never an exponent: 1.23, 45.6, 312, 4096. */
static void digits(char *out, size_t cap, double v)
{
    double a = fabs(v);
    if (a == 0.0 || a >= 100.0)
        snprintf(out, cap, "%.0f", v);
    else if (a >= 10.0)
        snprintf(out, cap, "%.1f", v);
    else if (a >= 1.0)
        snprintf(out, cap, "%.2f", v);
    else
        snprintf(out, cap, "%.3g", v);
}

const char *comet_format_quantity(double v, comet_quantity unit, double ref, char *out, size_t cap)
{
    if (!cap)
        return out;
    if (!isfinite(v)) {
        snprintf(out, cap, "–");
        return out;
    }
    if (ref == 0.0)
        ref = v != 0.0 ? v : 1.0; /* zero reads in the base unit: "0 s", not "0 ns" */
    char num[48];
    switch (unit) {
    case COMET_QTY_FRACTION:
        digits(num, sizeof num, v * 100.0);
        snprintf(out, cap, "%s %%", num);
        return out;
    case COMET_QTY_RATIO:
        digits(num, sizeof num, v);
        snprintf(out, cap, "%s×", num);
        return out;
    case COMET_QTY_NONE:
        if (v == floor(v) && fabs(v) < 1e15)
            snprintf(num, sizeof num, "%.0f", v); /* counts stay whole: 8, 1536 */
        else
            digits(num, sizeof num, v);
        snprintf(out, cap, "%s", num);
        return out;
    default:
        break;
    }
    const prefix *p = prefix_for(unit, ref);
    digits(num, sizeof num, v / p->scale);
    if (unit == COMET_QTY_MONEY)
        snprintf(out, cap, "$%s%s%s", num, p->name[0] ? " " : "", p->name);
    else
        snprintf(out, cap, "%s%s%s", num, p->name[0] ? " " : "", p->name);
    return out;
}

const char *comet_unit_si(comet_quantity unit)
{
    switch (unit) {
    case COMET_QTY_SECONDS: return "s";
    case COMET_QTY_BYTES: return "B";
    case COMET_QTY_BYTES_PER_S: return "B/s";
    case COMET_QTY_FLOP_PER_S: return "FLOP/s";
    case COMET_QTY_FLOP: return "FLOP";
    case COMET_QTY_MONEY: return "USD";
    case COMET_QTY_FRACTION: return "fraction";
    case COMET_QTY_RATIO: return "ratio";
    case COMET_QTY_TOKENS_PER_S: return "tokens/s";
    case COMET_QTY_NONE:
    case COMET_QTY_COUNT: break;
    }
    return "";
}

double comet_unit_scale(comet_quantity unit, double ref)
{
    if (unit == COMET_QTY_FRACTION)
        return 0.01;
    const prefix *p = prefix_for(unit, ref);
    return p ? p->scale : 1.0;
}

const char *comet_unit_label(comet_quantity unit, double ref, char *out, size_t cap)
{
    if (!cap)
        return out;
    const prefix *p = prefix_for(unit, ref);
    if (unit == COMET_QTY_MONEY)
        snprintf(out, cap, "$%s", p->name);
    else if (unit == COMET_QTY_FRACTION)
        snprintf(out, cap, "%%");
    else if (unit == COMET_QTY_RATIO)
        snprintf(out, cap, "×");
    else
        snprintf(out, cap, "%s", p ? p->name : "");
    return out;
}

const char *comet_format_setting(double v, comet_quantity unit, char *out, size_t cap)
{
    if (!cap)
        return out;
    /* a size people gave in decimal units stays decimal: "141 GB", not "131.3 GiB" */
    static const prefix decimal[] = {{1e9, "GB"}, {1e12, "TB"}};
    for (int i = 0; unit == COMET_QTY_BYTES && i < 2; i++)
        if (v >= decimal[i].scale && fmod(v, decimal[i].scale) == 0.0 &&
            fmod(v, COMET_GIB) != 0.0 && (i == 1 || v < 1e12 || fmod(v, 1e12) != 0.0)) {
            snprintf(out, cap, "%.4g %s", v / decimal[i].scale, decimal[i].name);
            return out;
        }
    const prefix *p = prefix_for(unit, v != 0.0 ? v : 1.0);
    if (!p) {
        snprintf(out, cap, "%.4g", v);
        return out;
    }
    double shown = v / p->scale;
    if (unit == COMET_QTY_MONEY)
        snprintf(out, cap, "$%.4g%s%s", shown, p->name[0] ? " " : "", p->name);
    else
        snprintf(out, cap, "%.4g%s%s", shown, p->name[0] ? " " : "", p->name);
    return out;
}
