/* Table-driven mapping reader: each section of the schema is described by
 * a table of (key, type, offset, range) and read here, which keeps the
 * section files declarative and every key checked the same way. */
#include "fields.h"

#include <string.h>

#define MAX_KEYS 48

static const cfg_field *find_field(const cfg_field *fields, const char *key)
{
    for (const cfg_field *f = fields; f->key; f++)
        if (strcmp(f->key, key) == 0)
            return f;
    return NULL;
}

static comet_status unknown_key(const cfg_ctx *c, const cfg_node *key, const char *path,
                                const cfg_field *fields)
{
    const char *names[MAX_KEYS + 1];
    size_t n = 0;
    for (const cfg_field *f = fields; f->key && n < MAX_KEYS; f++)
        names[n++] = f->key;
    names[n] = NULL;
    return cfg_fail_unknown(c, key, path, "key", names);
}

static void store_int(void *p, size_t size, int64_t v)
{
    if (size == sizeof(int64_t)) {
        memcpy(p, &v, sizeof v);
    } else {
        int i = (int)v;
        memcpy(p, &i, sizeof i);
    }
}

static comet_status read_int(cfg_ctx *c, const cfg_field *f, const cfg_node *n,
                             const char *path, char *at)
{
    int64_t v;
    CFG_TRY(cfg_read_int(c, n, path, f->lo, f->hi, &v));
    store_int(at, f->size, v);
    return COMET_OK;
}

static comet_status read_enum(cfg_ctx *c, const cfg_field *f, const cfg_node *n,
                              const char *path, char *at)
{
    int v;
    CFG_TRY(cfg_read_enum(c, n, path, f->names, &v));
    memcpy(at, &v, sizeof v);   /* every config enum is int-sized (fields.h) */
    return COMET_OK;
}

static comet_status read_field(cfg_ctx *c, const cfg_field *f, const cfg_node *n,
                               const char *path, void *base)
{
    char *at = (char *)base + f->offset;
    switch (f->type) {
    case CFG_T_INT:
        return read_int(c, f, n, path, at);
    case CFG_T_REAL:
        return cfg_read_real(c, n, path, false, (double *)(void *)at);
    case CFG_T_FRACTION:
        return cfg_read_fraction(c, n, path, (double *)(void *)at);
    case CFG_T_BOOL:
        return cfg_read_bool(c, n, path, (bool *)(void *)at);
    case CFG_T_NAME:
        return cfg_read_name(c, n, path, at, f->size);
    case CFG_T_ENUM:
        return read_enum(c, f, n, path, at);
    case CFG_T_QTY:
        return cfg_read_quantity(c, n, path, f->unit, !f->nonneg, (double *)(void *)at);
    case CFG_T_SUB:
        return cfg_fields_read(c, n, path, f->sub, at);
    case CFG_T_CUSTOM:
        return f->custom(c, n, path, base);
    case CFG_T_SKIP:
        return COMET_OK;
    }
    return COMET_EINTERNAL;
}

comet_status cfg_fields_read(cfg_ctx *c, const cfg_node *n, const char *path,
                             const cfg_field *fields, void *base)
{
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *key = cfg_map_key(n, i);
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, key->text);
        const cfg_field *f = find_field(fields, key->text);
        if (!f)
            return unknown_key(c, key, kpath, fields);
        const cfg_node *value = cfg_map_value(n, i);
        cfg_record(c, kpath, value->kind == CFG_SCALAR ? value : key);
        CFG_TRY(read_field(c, f, value, kpath, base));
    }
    return COMET_OK;
}

comet_status cfg_list_read(cfg_ctx *c, const cfg_node *n, const char *path, size_t max,
                           cfg_item_fn item, void *out, int *count)
{
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n > max)
        return cfg_fail(c, n, path, "has %zu entries; comet's limit is %zu", n->n, max);
    for (size_t i = 0; i < n->n; i++) {
        char ipath[CFG_PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        cfg_record(c, ipath, cfg_seq_item(n, i));
        CFG_TRY(item(c, cfg_seq_item(n, i), ipath, i, out));
    }
    *count = (int)n->n;
    return COMET_OK;
}
