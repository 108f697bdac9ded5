/* Internal: a YAML/JSON document as a tree of scalars, sequences and
 * mappings, each with its 1-based line and column, plus key paths such as
 * "system.network[1].bandwidth" that name a place in it. */
#ifndef COMET_CONFIG_TREE_H
#define COMET_CONFIG_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include "comet/error.h"

#define CFG_MAX_DEPTH 64        /* nesting levels */
#define CFG_MAX_NODES 20000     /* nodes in one document */
#define CFG_MAX_TEXT (16u << 20) /* bytes in one document */
#define CFG_PATH_LEN 128

typedef enum cfg_node_kind { CFG_SCALAR, CFG_SEQ, CFG_MAP } cfg_node_kind;

typedef struct cfg_node {
    cfg_node_kind kind;
    int line, column;
    bool plain;                /* scalar written without quotes */
    char *text;                /* scalar text, NUL-terminated (NULL otherwise) */
    size_t n;                  /* sequence: items; mapping: complete key/value pairs */
    size_t n_child, cap;       /* entries used and allocated in child */
    struct cfg_node **child;   /* sequence: items; mapping: key0, value0, key1, ... */
} cfg_node;

/* Build the tree of a single-document stream. An empty stream gives
 * *root == NULL. Errors (syntax, aliases, anchors, tags, duplicate keys,
 * several documents, too deep or too large) are "file:line:col: message". */
comet_status cfg_tree_parse(const char *text, size_t len, const char *file, cfg_node **root,
                            comet_error *err);
void cfg_tree_free(cfg_node *root);

const cfg_node *cfg_map_key(const cfg_node *map, size_t i);
const cfg_node *cfg_map_value(const cfg_node *map, size_t i);
/* Value under key in a mapping, or NULL (also when node is no mapping). */
const cfg_node *cfg_map_find(const cfg_node *map, const char *key);
const cfg_node *cfg_seq_item(const cfg_node *seq, size_t i);

/* A plain empty, "~" or "null" scalar. */
bool cfg_is_null(const cfg_node *n);

/* out = parent.key (or key at the root); out = parent[i]. */
void cfg_path_key(char *out, size_t cap, const char *parent, const char *key);
void cfg_path_index(char *out, size_t cap, const char *parent, size_t i);

#endif
