/* Reading and writing Chakra execution-trace files. A file is a stream of
 * protobuf messages, each behind a varint length (at most 5 bytes):
 * a GlobalMetadata, then Nodes. zlib's gz functions read plain and
 * gzip-compressed files alike. Decoding uses protobuf-c with comet's own
 * copy of the schema (schema/chakra/et_def.proto); nodes are copied into
 * comet's structs so nothing else depends on the protobuf types. Every
 * error names the file and, when there is one, the node id. */
#include "comet/chakra.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "comet/files.h"
#include "et_write.h"
#include "et_def.pb-c.h"

#define MAX_MESSAGE (64u << 20) /* bytes in one message, at most */

/* protobuf-c allocates every sub-message and string of a node separately;
 * a bump arena, reset after each node, makes decoding allocation-free in
 * the steady state. Requests that do not fit get their own block, freed
 * at the next reset. */
typedef struct overflow {
    struct overflow *next;
    max_align_t data[];
} overflow;

typedef struct arena {
    unsigned char *base;
    size_t used, cap;
    overflow *big;
} arena;

static void *arena_alloc(void *ctx, size_t size)
{
    arena *a = ctx;
    size = (size + 15) & ~(size_t)15;
    if (a->used + size <= a->cap) {
        void *p = a->base + a->used;
        a->used += size;
        return p;
    }
    overflow *o = malloc(sizeof *o + size);
    if (!o)
        return NULL;
    o->next = a->big;
    a->big = o;
    return o->data;
}

static void arena_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p; /* released together at the next reset */
}

static void arena_reset(arena *a)
{
    while (a->big) {
        overflow *o = a->big;
        a->big = o->next;
        free(o);
    }
    a->used = 0;
}

/* Next varint-prefixed message: 1 read, 0 clean end of file, -1 error. */
static int read_message(gzFile f, uint8_t **buf, size_t *cap, size_t *len, const char *path,
                        comet_error *err)
{
    uint32_t n = 0;
    for (int shift = 0;; shift += 7) {
        int c = gzgetc(f);
        if (c < 0) {
            if (shift == 0)
                return 0;
            comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                            "truncated: the file ends inside a length prefix");
            return -1;
        }
        if (shift > 28) {
            comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                            "not a Chakra trace: a length prefix is longer than 5 bytes");
            return -1;
        }
        n |= (uint32_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            break;
    }
    if (n > MAX_MESSAGE) {
        comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                        "a message claims %u bytes, more than comet reads (%u)", n, MAX_MESSAGE);
        return -1;
    }
    if (n > *cap) {
        uint8_t *p = realloc(*buf, n);
        if (!p) {
            comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
            return -1;
        }
        *buf = p;
        *cap = n;
    }
    int got = n ? gzread(f, *buf, n) : 0;
    if (got < 0 || (uint32_t)got != n) {
        comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                        "truncated: a message of %u bytes ends after %d", n, got < 0 ? 0 : got);
        return -1;
    }
    *len = n;
    return 1;
}

static int64_t attr_int(const ChakraProtoMsg__AttributeProto *a, bool *ok)
{
    *ok = true;
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: return a->int32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: return a->int64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: return a->uint32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL: return (int64_t)a->uint64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: return a->sint32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: return a->sint64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: return a->fixed32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL: return (int64_t)a->fixed64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: return a->sfixed32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: return a->sfixed64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: return a->bool_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL: return (int64_t)a->double_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL: return (int64_t)a->float_val;
    default:
        *ok = false;
        return 0;
    }
}

/* The attributes comet honours (ASTRA-sim's names). */
static comet_status read_attrs(const ChakraProtoMsg__Node *pn, comet_et_node *n, const char *path,
                               comet_error *err)
{
    n->comm_src = n->comm_dst = -1;
    for (size_t i = 0; i < pn->n_attr; i++) {
        const ChakraProtoMsg__AttributeProto *a = pn->attr[i];
        const char *name = a->name ? a->name : "";
        bool ok;
        if (strcmp(name, "involved_dim") == 0) {
            if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST)
                return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                       "node %llu: involved_dim must be a bool list",
                                       (unsigned long long)pn->id);
            size_t k = a->bool_list->n_values;
            n->n_involved = (int)(k < COMET_MAX_DIMS ? k : COMET_MAX_DIMS);
            for (int d = 0; d < n->n_involved; d++)
                n->involved_dim[d] = a->bool_list->values[d];
            continue;
        }
        if (strcmp(name, "pg_name") == 0 &&
            a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
            if (strlen(a->string_val) >= sizeof n->pg_name)
                return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                       "node %llu: pg_name \"%.40s\" is longer than %zu "
                                       "characters",
                                       (unsigned long long)pn->id, a->string_val,
                                       sizeof n->pg_name - 1);
            snprintf(n->pg_name, sizeof n->pg_name, "%s", a->string_val);
            continue;
        }
        int64_t v = attr_int(a, &ok);
        double dv = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL
                        ? a->double_val
                        : (double)v;
        if (!ok)
            continue; /* strings and lists of other attributes are not used */
        if (strcmp(name, "num_ops") == 0)
            n->num_ops = dv;
        else if (strcmp(name, "tensor_size") == 0)
            n->tensor_size = dv;
        else if (strcmp(name, "comm_type") == 0)
            n->comm_type = (int)v;
        else if (strcmp(name, "comm_size") == 0)
            n->comm_size = dv;
        else if (strcmp(name, "comm_src") == 0)
            n->comm_src = v;
        else if (strcmp(name, "comm_dst") == 0)
            n->comm_dst = v;
        else if (strcmp(name, "comm_tag") == 0)
            n->comm_tag = v;
        else if (strcmp(name, "comm_priority") == 0)
            n->comm_priority = v;
        else if (strcmp(name, "is_cpu_op") == 0)
            n->is_cpu_op = v != 0;
    }
    return COMET_OK;
}

static comet_status copy_node(const ChakraProtoMsg__Node *pn, comet_et_rank *r, size_t *dep_cap,
                              const char *path, comet_error *err)
{
    comet_et_node *n = &r->nodes[r->n];
    memset(n, 0, sizeof *n);
    n->id = pn->id;
    if ((int)pn->type < COMET_ET_METADATA || (int)pn->type > COMET_ET_COLLECTIVE)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                               "node %llu: unknown node type %d", (unsigned long long)pn->id,
                               (int)pn->type);
    n->type = (comet_et_type)pn->type;
    snprintf(n->name, sizeof n->name, "%s", pn->name ? pn->name : "");
    n->duration_micros = pn->duration_micros;
    n->n_deps = pn->n_ctrl_deps + pn->n_data_deps;
    if (n->n_deps) {
        /* into the rank's pool; n->deps is set once the pool stops moving */
        if (r->n_dep_pool + n->n_deps > *dep_cap) {
            size_t c = 2 * (*dep_cap + n->n_deps) + 256;
            uint64_t *p = realloc(r->dep_pool, sizeof *p * c);
            if (!p)
                return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
            r->dep_pool = p;
            *dep_cap = c;
        }
        uint64_t *d = r->dep_pool + r->n_dep_pool;
        if (pn->n_ctrl_deps)
            memcpy(d, pn->ctrl_deps, sizeof *d * pn->n_ctrl_deps);
        if (pn->n_data_deps)
            memcpy(d + pn->n_ctrl_deps, pn->data_deps, sizeof *d * pn->n_data_deps);
        r->n_dep_pool += n->n_deps;
    }
    return read_attrs(pn, n, path, err);
}

static comet_status read_rank(const char *path, comet_et_rank *r, comet_error *err)
{
    memset(r, 0, sizeof *r);
    gzFile f = gzopen(path, "rb");
    if (!f)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "cannot read");
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0, cap_nodes = 0, dep_cap = 0;
    arena scratch = {.cap = 64 * 1024};
    scratch.base = malloc(scratch.cap);
    if (!scratch.base) {
        gzclose(f);
        return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    ProtobufCAllocator alloc = {.alloc = arena_alloc, .free = arena_free, .allocator_data = &scratch};
    gzbuffer(f, 256 * 1024);
    comet_status st = COMET_OK;
    int rc = read_message(f, &buf, &cap, &len, path, err);
    if (rc <= 0) {
        st = rc < 0 ? err->status
                    : comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                      "empty: a Chakra trace starts with a GlobalMetadata");
    } else {
        ChakraProtoMsg__GlobalMetadata *meta =
            chakra_proto_msg__global_metadata__unpack(NULL, len, buf);
        if (!meta)
            st = comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                 "not a Chakra trace: the first message is not a GlobalMetadata");
        else
            snprintf(r->version, sizeof r->version, "%s", meta->version ? meta->version : "");
        if (meta)
            chakra_proto_msg__global_metadata__free_unpacked(meta, NULL);
    }
    while (!st && (rc = read_message(f, &buf, &cap, &len, path, err)) > 0) {
        arena_reset(&scratch);
        ChakraProtoMsg__Node *pn = chakra_proto_msg__node__unpack(&alloc, len, buf);
        if (!pn) {
            st = comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                 "message %zu is not a Chakra node (after node %llu)", r->n + 1,
                                 r->n ? (unsigned long long)r->nodes[r->n - 1].id : 0ULL);
            break;
        }
        if (r->n == cap_nodes) {
            size_t c = cap_nodes ? 2 * cap_nodes : 256;
            comet_et_node *p = realloc(r->nodes, sizeof *p * c);
            if (!p) {
                st = comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
                break;
            }
            r->nodes = p;
            cap_nodes = c;
        }
        st = copy_node(pn, r, &dep_cap, path, err);
        r->n++;
    }
    /* the pool no longer moves: point each node at its dependencies */
    for (size_t i = 0, at = 0; i < r->n; i++) {
        r->nodes[i].deps = r->nodes[i].n_deps ? r->dep_pool + at : NULL;
        at += r->nodes[i].n_deps;
    }
    if (!st && rc < 0)
        st = err->status;
    arena_reset(&scratch);
    free(scratch.base);
    free(buf);
    gzclose(f);
    return st;
}

static void free_rank(comet_et_rank *r)
{
    free(r->dep_pool);
    free(r->nodes);
    memset(r, 0, sizeof *r);
}

void comet_et_free(comet_et_trace *t)
{
    for (int i = 0; i < t->ranks; i++)
        free_rank(&t->rank[i]);
    free(t->rank);
    memset(t, 0, sizeof *t);
}

comet_status comet_et_read(const char *prefix, int ranks, comet_et_trace *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    if (ranks <= 0) { /* as many consecutive files as exist */
        for (ranks = 0; ranks < 1 << 20; ranks++) {
            snprintf(path, sizeof path, "%s.%d.et", prefix, ranks);
            FILE *f = fopen(path, "rb");
            if (!f)
                break;
            fclose(f);
        }
        if (ranks == 0)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "no trace files %s.0.et, %s.1.et, ...", prefix, prefix);
    }
    out->rank = calloc((size_t)ranks, sizeof *out->rank);
    if (!out->rank)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    out->ranks = ranks;
    snprintf(out->prefix, sizeof out->prefix, "%s", prefix);
    for (int r = 0; r < ranks; r++) {
        snprintf(path, sizeof path, "%s.%d.et", prefix, r);
        comet_status st = read_rank(path, &out->rank[r], err);
        if (st) {
            comet_et_free(out);
            return st;
        }
    }
    return COMET_OK;
}

/* ---- writing ------------------------------------------------------------------ */

static int write_message(FILE *f, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t prefix[5];
    int k = 0;
    size_t v = n;
    do {
        prefix[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            prefix[k] |= 0x80;
        k++;
    } while (v && k < 5);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return -1;
    protobuf_c_message_pack(m, buf);
    int bad = fwrite(prefix, 1, (size_t)k, f) != (size_t)k || fwrite(buf, 1, n, f) != n;
    free(buf);
    return bad ? -1 : 0;
}

/* Attributes of a node, as Chakra's generators type them. */
typedef struct attr_set {
    ChakraProtoMsg__AttributeProto a[12];
    ChakraProtoMsg__AttributeProto *p[12];
    ChakraProtoMsg__BoolList involved;
    protobuf_c_boolean dims[COMET_MAX_DIMS];
    size_t n;
} attr_set;

/* The next attribute of the set, named, of the given value kind. */
static ChakraProtoMsg__AttributeProto *add_attr(attr_set *s, const char *name,
                                                ChakraProtoMsg__AttributeProto__ValueCase kind)
{
    ChakraProtoMsg__AttributeProto *a = &s->a[s->n];
    chakra_proto_msg__attribute_proto__init(a);
    a->name = (char *)name;
    a->value_case = kind;
    s->p[s->n++] = a;
    return a;
}

static void add_int(attr_set *s, const char *name, int64_t v)
{
    add_attr(s, name, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL)->int64_val = v;
}

static void add_uint(attr_set *s, const char *name, uint64_t v)
{
    add_attr(s, name, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL)->uint64_val = v;
}

static void node_attrs(const comet_et_node *n, attr_set *s)
{
    s->n = 0;
    add_attr(s, "is_cpu_op", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL)->bool_val =
        n->is_cpu_op;
    if (n->type == COMET_ET_COMPUTE) {
        if (n->num_ops > 0)
            add_int(s, "num_ops", (int64_t)n->num_ops);
        if (n->tensor_size > 0)
            add_uint(s, "tensor_size", (uint64_t)n->tensor_size);
    } else if (n->type == COMET_ET_MEM_LOAD || n->type == COMET_ET_MEM_STORE) {
        add_uint(s, "tensor_size", (uint64_t)n->tensor_size);
    } else if (n->type == COMET_ET_COLLECTIVE) {
        add_int(s, "comm_type", n->comm_type);
        add_int(s, "comm_size", (int64_t)n->comm_size);
        if (n->n_involved > 0) {
            chakra_proto_msg__bool_list__init(&s->involved);
            for (int d = 0; d < n->n_involved; d++)
                s->dims[d] = n->involved_dim[d];
            s->involved.n_values = (size_t)n->n_involved;
            s->involved.values = s->dims;
            add_attr(s, "involved_dim", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST)
                ->bool_list = &s->involved;
        }
        if (n->pg_name[0])
            add_attr(s, "pg_name", CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
                ->string_val = (char *)n->pg_name;
    } else if (n->type == COMET_ET_SEND || n->type == COMET_ET_RECV) {
        add_int(s, "comm_src", n->comm_src);
        add_int(s, "comm_dst", n->comm_dst);
        add_int(s, "comm_size", (int64_t)n->comm_size);
        add_int(s, "comm_tag", n->comm_tag);
    }
    if (n->comm_priority != 0 && (n->type == COMET_ET_COLLECTIVE || n->type == COMET_ET_SEND ||
                                  n->type == COMET_ET_RECV))
        add_int(s, "comm_priority", n->comm_priority);
}

bool chakra_write_nodes(FILE *f, const char *version, const comet_et_node *nodes, size_t n)
{
    ChakraProtoMsg__GlobalMetadata meta;
    chakra_proto_msg__global_metadata__init(&meta);
    meta.version = (char *)(version ? version : "1.0.0");
    int bad = write_message(f, &meta.base);
    for (size_t i = 0; i < n && !bad; i++) {
        ChakraProtoMsg__Node pn;
        chakra_proto_msg__node__init(&pn);
        pn.id = nodes[i].id;
        pn.name = (char *)nodes[i].name;
        pn.type = (ChakraProtoMsg__NodeType)nodes[i].type;
        pn.n_data_deps = nodes[i].n_deps;
        pn.data_deps = nodes[i].deps;
        pn.duration_micros = nodes[i].duration_micros;
        attr_set s;
        node_attrs(&nodes[i], &s);
        pn.n_attr = s.n;
        pn.attr = s.p;
        bad = write_message(f, &pn.base);
    }
    return bad == 0;
}

typedef struct node_list {
    const char *version;
    const comet_et_node *nodes;
    size_t n;
} node_list;

static bool produce_nodes(FILE *f, void *ctx)
{
    const node_list *l = ctx;
    return chakra_write_nodes(f, l->version, l->nodes, l->n);
}

comet_status comet_et_write(const char *path, const char *version, const comet_et_node *nodes,
                            size_t n, comet_error *err)
{
    node_list l = {version, nodes, n};
    return comet_file_produce(path, false, produce_nodes, &l, err);
}
