/* Numbers for people: a value in SI units and what it measures become
 * "1.23 s", "45.6 GiB", "312 TFLOP/s", "$1.79 M", "61.8 %". Reports,
 * charts, summaries and axis values all format here. */
#ifndef COMET_QUANTITY_H
#define COMET_QUANTITY_H

#include <stddef.h>

typedef enum comet_quantity {
    COMET_QTY_NONE = 0,
    COMET_QTY_SECONDS,
    COMET_QTY_BYTES,          /* binary prefixes: GiB */
    COMET_QTY_BYTES_PER_S,    /* decimal: GB/s */
    COMET_QTY_FLOP_PER_S,     /* TFLOP/s */
    COMET_QTY_FLOP,
    COMET_QTY_MONEY,          /* $1.79 M */
    COMET_QTY_FRACTION,       /* 0.618 -> 61.8 % */
    COMET_QTY_RATIO,          /* 1.12x */
    COMET_QTY_COUNT,          /* 175 B, 1536 */
    COMET_QTY_TOKENS_PER_S
} comet_quantity;

/* v in `unit` for people, with 3 significant digits; the prefix is chosen
 * by `ref` (so the ticks of one axis share a prefix) or by v itself when
 * ref is 0. Returns out. */
const char *comet_format_quantity(double v, comet_quantity unit, double ref, char *out, size_t cap);
/* The unit's name at the prefix `ref` selects ("GiB", "ms"), for axis titles. */
const char *comet_unit_label(comet_quantity unit, double ref, char *out, size_t cap);

/* The SI unit a value of this quantity is stored in, for the headers of
 * files for machines ("s", "B", "B/s", "FLOP/s", "FLOP", "USD", "fraction",
 * "ratio", "tokens/s"); "" for plain numbers and counts. */
const char *comet_unit_si(comet_quantity unit);

/* What the prefix `ref` selects is worth in SI units (GiB: 2^30; % : 0.01). */
double comet_unit_scale(comet_quantity unit, double ref);

/* The shortest exact-looking form for a setting people chose: up to four
 * significant digits, no trailing zeros ("4 TB/s", "12.5 GB/s", "1 TiB"). */
const char *comet_format_setting(double v, comet_quantity unit, char *out, size_t cap);

#endif
