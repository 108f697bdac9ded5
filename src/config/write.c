/* Writing a section back as YAML from the same field tables its reader
 * walks (fields.h): each key in the form its reader takes back to the
 * identical value (quantities with a unit that parses back to the same
 * double, numbers in their shortest exact decimal), so a key added to a
 * table is written as soon as it can be read, and a written file reads
 * back into the struct it came from. comet calibrate writes the systems it
 * fits this way (comet_system_write_yaml, system_section.c). */
#include <inttypes.h>
#include <string.h>

#include "fields.h"

static void pad(comet_buf *b, int indent)
{
    comet_buf_printf(b, "%*s", indent, "");
}

/* A name as a double-quoted YAML scalar (names hold no control characters). */
static void quoted(comet_buf *b, const char *text)
{
    comet_buf_append(b, "\"", 1);
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            comet_buf_append(b, "\\", 1);
        comet_buf_append(b, p, 1);
    }
    comet_buf_append(b, "\"", 1);
}

static int64_t load_int(const char *at, size_t size)
{
    if (size == sizeof(int64_t)) {
        int64_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    int i;
    memcpy(&i, at, sizeof i);
    return i;
}

static void write_field(comet_buf *b, int indent, const cfg_field *f, const void *base)
{
    const char *at = (const char *)base + f->offset;
    char text[80];
    double v = 0.0;
    if (f->type == CFG_T_REAL || f->type == CFG_T_FRACTION || f->type == CFG_T_QTY)
        memcpy(&v, at, sizeof v);
    switch (f->type) {
    case CFG_T_INT: {
        int64_t i = load_int(at, f->size);
        if (i >= f->lo)
            comet_buf_printf(b, "%*s%s: %" PRId64 "\n", indent, "", f->key, i);
        return;
    }
    case CFG_T_REAL:
    case CFG_T_FRACTION:
        if (v > 0.0)
            comet_buf_printf(b, "%*s%s: %s\n", indent, "", f->key,
                             cfg_format_number(v, text, sizeof text));
        return;
    case CFG_T_QTY:
        if (v > 0.0)
            comet_buf_printf(b, "%*s%s: \"%s\"\n", indent, "", f->key,
                             cfg_units_format(f->unit, v, text, sizeof text));
        return;
    case CFG_T_BOOL: {
        bool on;
        memcpy(&on, at, sizeof on);
        comet_buf_printf(b, "%*s%s: %s\n", indent, "", f->key, on ? "true" : "false");
        return;
    }
    case CFG_T_NAME:
        if (at[0]) {
            comet_buf_printf(b, "%*s%s: ", indent, "", f->key);
            quoted(b, at);
            comet_buf_append(b, "\n", 1);
        }
        return;
    case CFG_T_ENUM: {
        int e;
        memcpy(&e, at, sizeof e);
        int n = 0;
        while (f->names[n])
            n++;
        if (e >= 0 && e < n)
            comet_buf_printf(b, "%*s%s: %s\n", indent, "", f->key, f->names[e]);
        return;
    }
    case CFG_T_SUB: {
        comet_buf inner;
        comet_buf_init(&inner);
        /* CFG_GROUP has no offset: its keys live in base itself */
        cfg_fields_write(&inner, indent + 2, f->sub, at);
        if (inner.len) {
            comet_buf_printf(b, "%*s%s:\n", indent, "", f->key);
            comet_buf_append(b, inner.data, inner.len);
        }
        b->failed |= inner.failed;
        comet_buf_free(&inner);
        return;
    }
    case CFG_T_CUSTOM:
    case CFG_T_SKIP:
        return;
    }
}

void cfg_fields_write(comet_buf *b, int indent, const cfg_field *fields, const void *base)
{
    for (const cfg_field *f = fields; f->key; f++) {
        if (f->write)
            f->write(b, indent, f->key, base);
        else
            write_field(b, indent, f, base);
    }
}

/* One item of a list: its keys at indent + 2, the first after "- ". */
static void block_item(comet_buf *b, int indent, const cfg_field *fields, const void *item)
{
    comet_buf lines;
    comet_buf_init(&lines);
    cfg_fields_write(&lines, indent + 2, fields, item);
    size_t skip = (size_t)indent + 2;
    if (lines.len > skip) {
        pad(b, indent);
        comet_buf_append(b, "- ", 2);
        comet_buf_append(b, lines.data + skip, lines.len - skip);
    }
    b->failed |= lines.failed;
    comet_buf_free(&lines);
}

/* One item of flat keys on one line: "- {key: value, key: value}". */
static void flow_item(comet_buf *b, int indent, const cfg_field *fields, const void *item)
{
    comet_buf lines;
    comet_buf_init(&lines);
    cfg_fields_write(&lines, 0, fields, item);
    pad(b, indent);
    comet_buf_append(b, "- {", 3);
    const char *p = lines.data ? lines.data : "";
    for (bool first = true; *p; first = false) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (!first)
            comet_buf_append(b, ", ", 2);
        comet_buf_append(b, p, n);
        p += n + (end ? 1 : 0);
    }
    comet_buf_append(b, "}\n", 2);
    b->failed |= lines.failed;
    comet_buf_free(&lines);
}

void cfg_write_list(comet_buf *b, int indent, const char *key, const cfg_field *fields,
                    const void *items, size_t stride, int n, bool flow)
{
    if (n <= 0)
        return;
    comet_buf_printf(b, "%*s%s:\n", indent, "", key);
    for (int i = 0; i < n; i++) {
        const void *item = (const char *)items + (size_t)i * stride;
        if (flow)
            flow_item(b, indent + 2, fields, item);
        else
            block_item(b, indent + 2, fields, item);
    }
}
