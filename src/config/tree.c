/* The document tree: libyaml parser events folded into scalars, sequences
 * and mappings that remember their line and column, so that every later
 * error can point at the exact place in the file. libyaml also reads JSON,
 * so both formats share this reader. YAML features that make a config file
 * hard to read or easy to abuse (aliases, anchors, tags, duplicate keys,
 * several documents) are refused here, and depth and size are bounded so
 * that hostile input cannot exhaust the stack or memory. */
#include "tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct builder {
    const char *text;
    size_t len;
    const char *file;
    comet_error *err;
    cfg_node *root;
    cfg_node *stack[CFG_MAX_DEPTH];  /* open sequences and mappings */
    int depth;
    size_t nodes;
    int documents;
} builder;

static comet_status fail_at(const builder *b, int line, int column, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static comet_status fail_at(const builder *b, int line, int column, const char *fmt, ...)
{
    char msg[sizeof b->err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return comet_error_set(b->err, COMET_EINPUT, b->file, line, column, NULL, "%s", msg);
}

#define MARK(m) (int)(m).line + 1, (int)(m).column + 1

void cfg_path_key(char *out, size_t cap, const char *parent, const char *key)
{
    if (parent && parent[0])
        snprintf(out, cap, "%s.%s", parent, key);
    else
        snprintf(out, cap, "%s", key);
}

void cfg_path_index(char *out, size_t cap, const char *parent, size_t i)
{
    snprintf(out, cap, "%s[%zu]", parent ? parent : "", i);
}

/* Key path of the innermost open container. */
static void open_path(const builder *b, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i + 1 < b->depth; i++) {
        const cfg_node *f = b->stack[i];
        char tmp[CFG_PATH_LEN];
        if (f->kind == CFG_MAP)
            cfg_path_key(tmp, sizeof tmp, out, f->child[f->n_child - 2]->text);
        else
            cfg_path_index(tmp, sizeof tmp, out, f->n_child - 1);
        snprintf(out, cap, "%s", tmp);
    }
}

static comet_status new_node(builder *b, cfg_node_kind kind, yaml_mark_t mark, cfg_node **out)
{
    if (b->nodes >= CFG_MAX_NODES)
        return fail_at(b, MARK(mark), "document has more than %d values", CFG_MAX_NODES);
    cfg_node *n = calloc(1, sizeof *n);
    if (!n)
        return comet_error_set(b->err, COMET_ENOMEM, b->file, 0, 0, NULL, "out of memory");
    n->kind = kind;
    n->line = (int)mark.line + 1;
    n->column = (int)mark.column + 1;
    b->nodes++;
    *out = n;
    return COMET_OK;
}

static comet_status append_child(builder *b, cfg_node *parent, cfg_node *child)
{
    if (parent->n_child == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 8;
        cfg_node **p = realloc(parent->child, cap * sizeof *p);
        if (!p)
            return comet_error_set(b->err, COMET_ENOMEM, b->file, 0, 0, NULL, "out of memory");
        parent->child = p;
        parent->cap = cap;
    }
    parent->child[parent->n_child++] = child;
    parent->n = parent->kind == CFG_MAP ? parent->n_child / 2 : parent->n_child;
    return COMET_OK;
}

static comet_status check_key(const builder *b, const cfg_node *map, const cfg_node *key)
{
    if (key->kind != CFG_SCALAR)
        return fail_at(b, key->line, key->column, "mapping keys must be plain names");
    for (size_t i = 0; i < map->n_child; i += 2) {
        if (strcmp(map->child[i]->text, key->text) != 0)
            continue;
        char parent[CFG_PATH_LEN], path[CFG_PATH_LEN];
        open_path(b, parent, sizeof parent);
        cfg_path_key(path, sizeof path, parent, key->text);
        return comet_error_set(b->err, COMET_EINPUT, b->file, key->line, key->column, path,
                               "duplicate key (first at line %d)", map->child[i]->line);
    }
    return COMET_OK;
}

/* Hang a new node under the innermost open container (or make it the root).
 * On failure the node is freed. */
static comet_status attach(builder *b, cfg_node *node)
{
    comet_status st = COMET_OK;
    if (b->depth == 0) {
        b->root = node;
        return COMET_OK;
    }
    cfg_node *parent = b->stack[b->depth - 1];
    if (parent->kind == CFG_MAP && parent->n_child % 2 == 0)
        st = check_key(b, parent, node);
    if (!st)
        st = append_child(b, parent, node);
    if (st)
        cfg_tree_free(node);
    return st;
}

static comet_status check_plain_event(const builder *b, yaml_mark_t mark, const yaml_char_t *anchor,
                                      const yaml_char_t *tag)
{
    if (anchor)
        return fail_at(b, MARK(mark), "anchors (&%s) are not supported; write the values out",
                       (const char *)anchor);
    if (tag)
        return fail_at(b, MARK(mark), "tags (%s) are not supported", (const char *)tag);
    return COMET_OK;
}

static comet_status on_scalar(builder *b, const yaml_event_t *ev)
{
    comet_status st = check_plain_event(b, ev->start_mark, ev->data.scalar.anchor,
                                        ev->data.scalar.tag);
    if (st)
        return st;
    size_t len = ev->data.scalar.length;
    const char *value = (const char *)ev->data.scalar.value;
    if (memchr(value, '\0', len))
        return fail_at(b, MARK(ev->start_mark), "text contains a NUL character");
    cfg_node *n = NULL;
    if ((st = new_node(b, CFG_SCALAR, ev->start_mark, &n)))
        return st;
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    n->text = malloc(len + 1);
    if (!n->text) {
        cfg_tree_free(n);
        return comet_error_set(b->err, COMET_ENOMEM, b->file, 0, 0, NULL, "out of memory");
    }
    memcpy(n->text, value, len);
    n->text[len] = '\0';
    return attach(b, n);
}

static comet_status on_open(builder *b, const yaml_event_t *ev, cfg_node_kind kind)
{
    const yaml_char_t *anchor = kind == CFG_MAP ? ev->data.mapping_start.anchor
                                                : ev->data.sequence_start.anchor;
    const yaml_char_t *tag = kind == CFG_MAP ? ev->data.mapping_start.tag
                                             : ev->data.sequence_start.tag;
    comet_status st = check_plain_event(b, ev->start_mark, anchor, tag);
    if (st)
        return st;
    if (b->depth == CFG_MAX_DEPTH)
        return fail_at(b, MARK(ev->start_mark), "nesting deeper than %d levels", CFG_MAX_DEPTH);
    cfg_node *n = NULL;
    if ((st = new_node(b, kind, ev->start_mark, &n)) || (st = attach(b, n)))
        return st;
    b->stack[b->depth++] = n;
    return COMET_OK;
}

static comet_status on_event(builder *b, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (b->documents++ > 0)
            return fail_at(b, MARK(ev->start_mark), "only one document per file is allowed");
        return COMET_OK;
    case YAML_ALIAS_EVENT:
        return fail_at(b, MARK(ev->start_mark), "aliases (*%s) are not supported",
                       (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_open(b, ev, CFG_SEQ);
    case YAML_MAPPING_START_EVENT:
        return on_open(b, ev, CFG_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        return COMET_OK;
    default:
        return COMET_OK;
    }
}

/* Line and column of a byte offset (reader errors carry only the offset). */
static void offset_position(const builder *b, size_t offset, int *line, int *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < offset && i < b->len; i++) {
        if (b->text[i] == '\n') {
            ++*line;
            *column = 1;
        } else {
            ++*column;
        }
    }
}

static comet_status parser_error(const builder *b, const yaml_parser_t *p)
{
    const char *problem = p->problem ? p->problem : "invalid YAML";
    if (p->error == YAML_MEMORY_ERROR)
        return comet_error_set(b->err, COMET_ENOMEM, b->file, 0, 0, NULL, "out of memory");
    if (p->error == YAML_READER_ERROR) {
        int line, column;
        offset_position(b, p->problem_offset, &line, &column);
        return fail_at(b, line, column, "%s", problem);
    }
    if (p->context)
        return fail_at(b, MARK(p->problem_mark), "%s %s", problem, p->context);
    return fail_at(b, MARK(p->problem_mark), "%s", problem);
}

comet_status cfg_tree_parse(const char *text, size_t len, const char *file, cfg_node **root,
                            comet_error *err)
{
    builder b = {.text = text, .len = len, .file = file, .err = err};
    *root = NULL;
    if (len > CFG_MAX_TEXT)
        return fail_at(&b, 0, 0, "document is larger than %u bytes", CFG_MAX_TEXT);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    comet_status st = COMET_OK;
    for (int done = 0; !done && !st;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            st = parser_error(&b, &parser);
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        st = on_event(&b, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    if (st) {
        cfg_tree_free(b.root);
        return st;
    }
    *root = b.root;
    return COMET_OK;
}

void cfg_tree_free(cfg_node *root)
{
    if (!root)
        return;
    for (size_t i = 0; i < root->n_child; i++)
        cfg_tree_free(root->child[i]);
    free(root->child);
    free(root->text);
    free(root);
}

const cfg_node *cfg_map_key(const cfg_node *map, size_t i)
{
    return map->child[2 * i];
}

const cfg_node *cfg_map_value(const cfg_node *map, size_t i)
{
    return map->child[2 * i + 1];
}

const cfg_node *cfg_map_find(const cfg_node *map, const char *key)
{
    if (!map || map->kind != CFG_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(cfg_map_key(map, i)->text, key) == 0)
            return cfg_map_value(map, i);
    return NULL;
}

const cfg_node *cfg_seq_item(const cfg_node *seq, size_t i)
{
    return seq->child[i];
}

bool cfg_is_null(const cfg_node *n)
{
    return n->kind == CFG_SCALAR && n->plain &&
           (n->text[0] == '\0' || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0);
}
