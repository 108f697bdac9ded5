/* Internal: reading a mapping into a struct from a table of fields, so
 * each section of the schema is a table rather than a chain of strcmp. */
#ifndef COMET_CONFIG_FIELDS_H
#define COMET_CONFIG_FIELDS_H

#include <stddef.h>
#include "comet/buf.h"
#include "read.h"

typedef enum cfg_type {
    CFG_T_INT,       /* int64_t or int in [lo, hi] */
    CFG_T_REAL,      /* double >= 0, a plain number */
    CFG_T_FRACTION,  /* double in (0, 1] */
    CFG_T_BOOL,
    CFG_T_NAME,      /* char array */
    CFG_T_ENUM,      /* enum (int-sized) from a names table */
    CFG_T_QTY,       /* double with a unit; positive unless .nonneg */
    CFG_T_SUB,       /* nested mapping read with .sub at base + offset */
    CFG_T_CUSTOM,    /* .custom(ctx, node, path, base) */
    CFG_T_SKIP       /* allowed here, read by the caller */
} cfg_type;

typedef comet_status (*cfg_custom_fn)(cfg_ctx *c, const cfg_node *n, const char *path,
                                      void *base);
/* Writes the field's key and value as YAML lines at `indent` spaces, from
 * the same base the reader fills (nothing when the value is absent). */
typedef void (*cfg_write_fn)(comet_buf *b, int indent, const char *key, const void *base);

typedef struct cfg_field {
    const char *key;        /* NULL ends a table */
    cfg_type type;
    size_t offset, size;
    int64_t lo, hi;
    bool nonneg;
    cfg_unit_kind unit;
    const char *const *names;
    const struct cfg_field *sub;
    cfg_custom_fn custom;
    cfg_write_fn write;     /* writes it instead of cfg_fields_write's rule for its type */
} cfg_field;

#define CFG_AT(k, ty, T, m) .key = (k), .type = (ty), .offset = offsetof(T, m), \
                            .size = sizeof(((T *)0)->m)
#define CFG_INT(k, T, m, lo_, hi_) {CFG_AT(k, CFG_T_INT, T, m), .lo = (lo_), .hi = (hi_)}
#define CFG_REAL(k, T, m) {CFG_AT(k, CFG_T_REAL, T, m)}
#define CFG_FRACTION(k, T, m) {CFG_AT(k, CFG_T_FRACTION, T, m)}
#define CFG_BOOL(k, T, m) {CFG_AT(k, CFG_T_BOOL, T, m)}
#define CFG_NAME(k, T, m) {CFG_AT(k, CFG_T_NAME, T, m)}
#define CFG_ENUM(k, T, m, names_) {CFG_AT(k, CFG_T_ENUM, T, m), .names = (names_)}
#define CFG_QTY(k, T, m, unit_) {CFG_AT(k, CFG_T_QTY, T, m), .unit = (unit_)}
#define CFG_QTY0(k, T, m, unit_) {CFG_AT(k, CFG_T_QTY, T, m), .unit = (unit_), .nonneg = true}
#define CFG_SUB(k, T, m, sub_) {CFG_AT(k, CFG_T_SUB, T, m), .sub = (sub_)}
/* Keys grouped under k that live in the same struct (strategy.offload.*). */
#define CFG_GROUP(k, sub_) {.key = (k), .type = CFG_T_SUB, .sub = (sub_)}
#define CFG_CUSTOM(k, fn_) {.key = (k), .type = CFG_T_CUSTOM, .custom = (fn_)}
/* A custom key that the writer writes back with write_ */
#define CFG_CUSTOM_RW(k, fn_, write_) {.key = (k), .type = CFG_T_CUSTOM, .custom = (fn_), \
                                       .write = (write_)}
#define CFG_SKIP(k) {.key = (k), .type = CFG_T_SKIP}
#define CFG_END {.key = NULL}

/* Read every key of mapping n (at key path `path`) into base; unknown keys
 * are errors that suggest the nearest allowed key. Records in the source
 * map where each key's value is (a scalar) or where the key is (a list or
 * mapping), which is where a later error about it should point. */
comet_status cfg_fields_read(cfg_ctx *c, const cfg_node *n, const char *path,
                             const cfg_field *fields, void *base);

/* Read a list whose items are read by item(ctx, node, "path[i]", i, out)
 * after checking it has at most max items; *count gets the number read. */
typedef comet_status (*cfg_item_fn)(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                                    void *out);
comet_status cfg_list_read(cfg_ctx *c, const cfg_node *n, const char *path, size_t max,
                           cfg_item_fn item, void *out, int *count);

/* Write every field of `fields` that base holds as YAML lines of `key:
 * value` at `indent` spaces, each in the form its reader takes back to the
 * same double, integer or name: quantities with a unit (cfg_units_format),
 * numbers in their shortest exact decimal, names quoted, enums by name,
 * mappings nested (left out when nothing in them is set). A value the
 * reader would not take (a zero quantity, fraction or real number, an
 * integer below its range, an empty name) is left out, so the reader's
 * default stands; a custom key is written by its field's `write` (left out
 * without one). */
void cfg_fields_write(comet_buf *b, int indent, const cfg_field *fields, const void *base);

/* `key:` and a list of n items (each `stride` bytes from the one before)
 * under it, each item's keys written from `fields`: one line each as a
 * flow mapping `- {size: "1 GiB", bandwidth: "40 GB/s"}` when `flow` (flat
 * keys only), else in block style. Nothing when n is 0. */
void cfg_write_list(comet_buf *b, int indent, const char *key, const cfg_field *fields,
                    const void *items, size_t stride, int n, bool flow);

/* CFG_T_ENUM stores an enum through an int. */
_Static_assert(sizeof(comet_dtype) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_model_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_collective) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_layer_op) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_pool_kind) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_stride_at) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_group) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_topology) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_algorithm) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_attach) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_recompute) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_protocol_model) == sizeof(int), "enum size");
_Static_assert(sizeof(comet_routing) == sizeof(int), "enum size");

#endif
