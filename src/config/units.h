/* Internal: quantities with explicit units ("80 GiB", "300 GB/s", "1.5 us",
 * "312 TFLOPS", "2 GFLOP"), converted to SI base values: bytes, bytes/s,
 * seconds, FLOP/s and FLOP. */
#ifndef COMET_CONFIG_UNITS_H
#define COMET_CONFIG_UNITS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

typedef enum cfg_unit_status {
    CFG_UNITS_OK = 0,
    CFG_UNITS_NOT_NUMBER,  /* no number where the text starts */
    CFG_UNITS_NO_UNIT,     /* a bare number */
    CFG_UNITS_BAD_UNIT,    /* a unit not of this kind */
    CFG_UNITS_RANGE        /* the value overflows a double */
} cfg_unit_status;

/* Parse "NUMBER UNIT" (spaces optional) into SI; *unit_at points to where
 * the unit text starts (for messages), when unit_at is non-NULL. */
cfg_unit_status cfg_units_parse(const char *text, cfg_unit_kind kind, double *out,
                                const char **unit_at);

/* Comma-separated accepted units, e.g. "B, KB, MB, ...". */
const char *cfg_units_accepted(cfg_unit_kind kind);
/* An example value such as "80 GiB". */
const char *cfg_units_example(cfg_unit_kind kind);
/* What the quantity is called in messages: "size", "bandwidth", ... */
const char *cfg_units_noun(cfg_unit_kind kind);

/* v (in SI, >= 0 and finite) as "NUMBER UNIT" that cfg_units_parse reads
 * back to exactly v: the shortest such text over the kind's units (a
 * number from 1 to 1000 wins a tie), "80 GiB", "450 GB/s", "2 us"; 0 is
 * "0" and the unit of scale 1. Returns out. */
const char *cfg_units_format(cfg_unit_kind kind, double v, char *out, size_t cap);
/* The shortest decimal text that strtod reads back to exactly v. */
const char *cfg_format_number(double v, char *out, size_t cap);

/* Length of the decimal number at the start of s ([+-]digits[.digits][e[+-]digits]),
 * 0 if there is none. No hex, inf or nan. */
size_t cfg_number_span(const char *s);

#endif
