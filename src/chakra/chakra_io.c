/* Reading and writing Chakra execution-trace files. A file is a stream of
 * protobuf messages, each behind a varint length (at most 5 bytes):
 * a GlobalMetadata, then Nodes. zlib's gz functions read plain and
 * gzip-compressed files alike. Decoding uses protobuf-c with comet's own
 * copy of the schema (schema/chakra/et_def.proto); nodes are copied into
 * comet's structs so nothing else depends on the protobuf types. Every
 * error names the file and, when there is one, the node id and attribute.
 * Traces come from anywhere, so reading is bounded (comet_et_limits: nodes,
 * dependencies, bytes inflated, and memory: arrays as allocated, names,
 * the message buffer and a message's worst case while it is decoded),
 * every number is range-checked before it becomes an integer or a
 * duration, and zlib's own error is reported. Bytes after the end of a
 * gzip stream are ignored, as zlib's gzread does (docs/chakra.md). */
#include "comet/chakra.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "comet/files.h"
#include "et_write.h"
#include "et_def.pb-c.h"

#define MAX_MESSAGE (64u << 20) /* bytes in one message, at most */
#define MAX_NAME 63             /* bytes of a node's name kept (names label errors) */
#define MAX_GROUP_NAME 31       /* characters of a pg_name, at most */
#define MAX_DURATION_MICROS (1ull << 53) /* exact as a double; 285 years */
/* Decoding a message of n bytes may allocate up to this many bytes per
 * byte of it, besides the message itself. protobuf-c records each field it
 * meets (32 bytes), unpacks each byte of a packed list into an 8-byte
 * number, and each 2-byte empty attribute into a 64-byte struct and an
 * 8-byte pointer: 52 bytes per byte, the worst of the schema (measured,
 * docs/chakra.md). */
#define DECODE_BYTES_PER_BYTE 56u

/* protobuf-c allocates every sub-message and string of a node separately;
 * a bump arena, reset after each node, makes decoding allocation-free in
 * the steady state. When the first block is full, further blocks of at
 * least 1 MiB are chained (one malloc per request would add its own
 * headers to each 64-byte attribute), freed at the next reset. */
typedef struct block {
    struct block *next;
    size_t used, cap;
    max_align_t data[];
} block;

#define ARENA_FIRST (64u * 1024)
#define ARENA_MORE (1u << 20)

typedef struct arena {
    block *first, *current;
} arena;

static block *block_new(size_t cap)
{
    block *b = malloc(sizeof *b + cap);
    if (b)
        *b = (block){.cap = cap};
    return b;
}

static void *arena_alloc(void *ctx, size_t size)
{
    arena *a = ctx;
    size = (size + 15) & ~(size_t)15;
    block *b = a->current;
    if (b->cap - b->used < size) {
        block *more = block_new(size > ARENA_MORE ? size : ARENA_MORE);
        if (!more)
            return NULL;
        b->next = more;
        a->current = b = more;
    }
    void *p = (unsigned char *)b->data + b->used;
    b->used += size;
    return p;
}

static void arena_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p; /* released together at the next reset */
}

/* Back to the first block, empty; with `all`, that one freed too. */
static void arena_reset(arena *a, bool all)
{
    block *b = a->first->next;
    while (b) {
        block *next = b->next;
        free(b);
        b = next;
    }
    a->first->next = NULL;
    a->first->used = 0;
    a->current = a->first;
    if (all)
        free(a->first);
}

/* ---- reading: limits, zlib's errors, strings -------------------------------- */

static const char *const no_text = "";

/* What the files read so far have used of the limits (over all ranks). */
typedef struct budget {
    const comet_et_limits *limits;
    uint64_t nodes, deps, bytes;
    uint64_t memory, peak; /* held now; held plus a decoding message, at most */
} budget;

/* A limit passed: the error names the file, the limit and its value. */
static comet_status over_limit(comet_error *err, const char *path, const char *limit,
                               uint64_t value, const char *what)
{
    return comet_error_set(err, COMET_EINPUT, path, 0, 0, limit,
                           "the trace has more than %llu %s, past the read limit; raise the "
                           "limit to read it",
                           (unsigned long long)value, what);
}

/* Count `bytes` more held, and `passing` more for a moment (a message
 * being decoded), against the memory limit. */
static comet_status charge_memory(budget *b, uint64_t bytes, uint64_t passing, const char *path,
                                  comet_error *err)
{
    b->memory += bytes;
    uint64_t now = b->memory + passing;
    if (now > b->peak)
        b->peak = now;
    if (b->limits->max_memory && now > b->limits->max_memory)
        return over_limit(err, path, "max_memory", b->limits->max_memory,
                          "bytes in the reader's memory (nodes, dependencies, names and the "
                          "message being decoded)");
    return COMET_OK;
}

/* `array` (capacity *cap elements of `size` bytes) with room for `need`
 * (more than *cap): grown by half, or to `need` when `exact`, the growth
 * counted against the memory limit before it is allocated. NULL, with
 * the error set, past the limit or out of memory (`array` is kept). */
static void *grow(void *array, size_t *cap, size_t need, size_t size, bool exact, budget *b,
                  const char *path, comet_error *err)
{
    size_t c = exact ? need : *cap + *cap / 2 + 256;
    if (c < need)
        c = need;
    if (c > SIZE_MAX / size) {
        comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
        return NULL;
    }
    if (charge_memory(b, (uint64_t)(c - *cap) * size, 0, path, err))
        return NULL;
    void *p = realloc(array, c * size);
    if (!p) {
        comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
        return NULL;
    }
    *cap = c;
    return p;
}

/* Why zlib returned less than asked: COMET_OK when the data simply ended,
 * else an error with zlib's own words (corrupt data, a bad CRC, compressed
 * data cut short, a read error). */
static comet_status gz_failure(gzFile f, const char *path, comet_error *err)
{
    int code = Z_OK;
    const char *text = gzerror(f, &code);
    if (code == Z_OK || code == Z_STREAM_END)
        return COMET_OK;
    /* zlib's message starts with the name it was opened under ("<fd:3>: ") */
    const char *sep = text ? strstr(text, ": ") : NULL;
    const char *why = sep && text[0] == '<' ? sep + 2 : text ? text : "";
    switch (code) {
    case Z_BUF_ERROR:
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                               "truncated: the gzip data ends early (zlib: %s)", why);
    case Z_MEM_ERROR:
        return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory (zlib)");
    case Z_ERRNO:
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot read: %s", why);
    default:
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                               "corrupt gzip data (zlib: %s)", why);
    }
}

/* Next varint-prefixed message: 1 read, 0 clean end of file, -1 error. */
static int read_message(gzFile f, uint8_t **buf, size_t *cap, size_t *len, budget *b,
                        const char *path, comet_error *err)
{
    uint32_t n = 0;
    for (int shift = 0;; shift += 7) {
        int c = gzgetc(f);
        if (c < 0) {
            if (gz_failure(f, path, err))
                return -1;
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
        b->bytes++;
        n |= (uint32_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            break;
    }
    if (n > MAX_MESSAGE) {
        comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                        "a message claims %u bytes, more than comet reads (%u)", n, MAX_MESSAGE);
        return -1;
    }
    b->bytes += n;
    if (b->limits->max_bytes && b->bytes > b->limits->max_bytes) {
        over_limit(err, path, "max_bytes", b->limits->max_bytes,
                   "bytes over all files after decompression");
        return -1;
    }
    if (n > *cap) {
        uint8_t *p = grow(*buf, cap, n, 1, true, b, path, err);
        if (!p)
            return -1;
        *buf = p;
    }
    int got = n ? gzread(f, *buf, n) : 0;
    if (got < 0 || (uint32_t)got != n) {
        if (!gz_failure(f, path, err))
            comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                            "truncated: a message of %u bytes ends after %d", n,
                            got < 0 ? 0 : got);
        return -1;
    }
    *len = n;
    return 1;
}

/* Names live in blocks that never move, so nodes can point into them. */
struct comet_et_strings {
    comet_et_strings *next;
    size_t used, cap;
    char text[];
};

#define STRING_BLOCK (64u * 1024)

static void strings_free(comet_et_strings *s)
{
    while (s) {
        comet_et_strings *next = s->next;
        free(s);
        s = next;
    }
}

/* A copy of text's first `keep` bytes in the rank's pool ("" costs nothing). */
static const char *keep_text(comet_et_rank *r, const char *text, size_t keep, budget *b,
                             const char *path, comet_error *err)
{
    if (!text || !text[0])
        return no_text;
    size_t n = strnlen(text, keep);
    comet_et_strings *s = r->strings;
    if (!s || s->cap - s->used < n + 1) {
        s = malloc(sizeof *s + STRING_BLOCK);
        if (!s) {
            comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
            return NULL;
        }
        s->next = r->strings;
        s->used = 0;
        s->cap = STRING_BLOCK;
        r->strings = s;
        if (charge_memory(b, sizeof *s + STRING_BLOCK, 0, path, err))
            return NULL;
    }
    char *out = s->text + s->used;
    memcpy(out, text, n);
    out[n] = '\0';
    s->used += n + 1;
    return out;
}

/* ---- reading: attributes -------------------------------------------------------- */

/* An attribute's number: exact when the encoding is an integer that fits
 * int64, else as a double (floats, and uint64 values past INT64_MAX). */
typedef struct number {
    bool exact;
    int64_t whole;
    double real;
} number;

static bool attr_number(const ChakraProtoMsg__AttributeProto *a, number *v)
{
    *v = (number){.exact = true};
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: v->whole = a->int32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: v->whole = a->int64_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: v->whole = a->uint32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: v->whole = a->sint32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: v->whole = a->sint64_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: v->whole = a->fixed32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: v->whole = a->sfixed32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: v->whole = a->sfixed64_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: v->whole = a->bool_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL: {
        uint64_t u = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL
                         ? a->uint64_val
                         : a->fixed64_val;
        v->exact = u <= INT64_MAX;
        v->whole = v->exact ? (int64_t)u : 0;
        v->real = (double)u;
        return true;
    }
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL:
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FLOAT_VAL:
        v->exact = false;
        v->real = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL
                      ? a->double_val
                      : (double)a->float_val;
        return true;
    default:
        return false;
    }
    v->real = (double)v->whole;
    return true;
}

/* Where a bad attribute is: its file, node and name. */
typedef struct attr_at {
    const char *path;
    uint64_t node;
    const char *name;
    comet_error *err;
} attr_at;

static comet_status bad_value(const attr_at *at, const number *v, const char *expected)
{
    char shown[48];
    if (v->exact)
        snprintf(shown, sizeof shown, "%lld", (long long)v->whole);
    else
        snprintf(shown, sizeof shown, "%.17g", v->real);
    return comet_error_set(at->err, COMET_EINPUT, at->path, 0, 0, at->name,
                           "node %llu: %s is %s; expected %s", (unsigned long long)at->node,
                           at->name, shown, expected);
}

/* A whole number in [lo, hi], however encoded (a float must have no fraction). */
static comet_status attr_whole(const attr_at *at, const number *v, int64_t lo, int64_t hi,
                               int64_t *out)
{
    char expected[96];
    snprintf(expected, sizeof expected, "a whole number from %lld to %lld", (long long)lo,
             (long long)hi);
    if (v->exact) {
        if (v->whole < lo || v->whole > hi)
            return bad_value(at, v, expected);
        *out = v->whole;
        return COMET_OK;
    }
    /* (double)hi + 1 is exact for the bounds used here (up to 2^63) */
    if (!(v->real >= (double)lo && v->real < (double)hi + 1.0) || v->real != floor(v->real))
        return bad_value(at, v, expected);
    *out = (int64_t)v->real;
    return COMET_OK;
}

/* A count of operations or bytes: finite, from 0 to below 2^63 (so it
 * also survives comet_et_write's integer encoding). */
static comet_status attr_amount(const attr_at *at, const number *v, double *out)
{
    double x = v->exact ? (double)v->whole : v->real;
    if (!(x >= 0.0 && x < 0x1p63))
        return bad_value(at, v, "a finite number from 0 to 9.2e18");
    *out = x;
    return COMET_OK;
}

/* The attributes comet honours (ASTRA-sim's names). */
static comet_status read_attrs(const ChakraProtoMsg__Node *pn, comet_et_node *n,
                               comet_et_rank *r, budget *b, const char *path, comet_error *err)
{
    n->comm_src = n->comm_dst = -1;
    for (size_t i = 0; i < pn->n_attr; i++) {
        const ChakraProtoMsg__AttributeProto *a = pn->attr[i];
        const char *name = a->name ? a->name : "";
        attr_at at = {path, pn->id, name, err};
        if (strcmp(name, "involved_dim") == 0) {
            if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST)
                return comet_error_set(err, COMET_EINPUT, path, 0, 0, name,
                                       "node %llu: involved_dim must be a bool list",
                                       (unsigned long long)pn->id);
            size_t k = a->bool_list->n_values;
            n->n_involved = (uint8_t)(k < COMET_MAX_DIMS ? k : COMET_MAX_DIMS);
            for (int d = 0; d < n->n_involved; d++)
                n->involved_dim[d] = a->bool_list->values[d];
            continue;
        }
        if (strcmp(name, "pg_name") == 0 &&
            a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
            if (strlen(a->string_val) > MAX_GROUP_NAME)
                return comet_error_set(err, COMET_EINPUT, path, 0, 0, name,
                                       "node %llu: pg_name \"%.40s\" is longer than %d "
                                       "characters",
                                       (unsigned long long)pn->id, a->string_val,
                                       MAX_GROUP_NAME);
            if (!(n->pg_name = keep_text(r, a->string_val, MAX_GROUP_NAME, b, path, err)))
                return err->status;
            continue;
        }
        number v;
        if (!attr_number(a, &v))
            continue; /* strings and lists of other attributes are not used */
        int64_t whole = 0;
        comet_status st = COMET_OK;
        if (strcmp(name, "num_ops") == 0)
            st = attr_amount(&at, &v, &n->num_ops);
        else if (strcmp(name, "tensor_size") == 0)
            st = attr_amount(&at, &v, &n->tensor_size);
        else if (strcmp(name, "comm_size") == 0)
            st = attr_amount(&at, &v, &n->comm_size);
        else if (strcmp(name, "comm_type") == 0 &&
                 !(st = attr_whole(&at, &v, COMET_ET_ALL_REDUCE, COMET_ET_BARRIER, &whole)))
            n->comm_type = (uint8_t)whole;
        else if (strcmp(name, "comm_src") == 0 &&
                 !(st = attr_whole(&at, &v, -1, INT32_MAX, &whole)))
            n->comm_src = (int32_t)whole; /* -1: not given, as comet_et_write writes it */
        else if (strcmp(name, "comm_dst") == 0 &&
                 !(st = attr_whole(&at, &v, -1, INT32_MAX, &whole)))
            n->comm_dst = (int32_t)whole;
        else if (strcmp(name, "comm_tag") == 0)
            st = attr_whole(&at, &v, INT64_MIN, INT64_MAX, &n->comm_tag);
        else if (strcmp(name, "comm_priority") == 0 &&
                 !(st = attr_whole(&at, &v, INT32_MIN, INT32_MAX, &whole)))
            n->comm_priority = (int32_t)whole;
        else if (strcmp(name, "is_cpu_op") == 0 && !(st = attr_whole(&at, &v, 0, 1, &whole)))
            n->is_cpu_op = whole != 0;
        if (st)
            return st;
    }
    return COMET_OK;
}

/* ---- reading: nodes and files --------------------------------------------------- */

static comet_status copy_node(const ChakraProtoMsg__Node *pn, comet_et_rank *r, size_t *dep_cap,
                              budget *b, const char *path, comet_error *err)
{
    comet_et_node *n = &r->nodes[r->n];
    memset(n, 0, sizeof *n);
    n->id = pn->id;
    n->name = n->pg_name = no_text;
    if ((int)pn->type < COMET_ET_METADATA || (int)pn->type > COMET_ET_COLLECTIVE)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, "type",
                               "node %llu: unknown node type %d", (unsigned long long)pn->id,
                               (int)pn->type);
    n->type = (comet_et_type)pn->type;
    if (pn->duration_micros > MAX_DURATION_MICROS)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, "duration_micros",
                               "node %llu: duration_micros is %llu; expected at most %llu "
                               "(2^53, 285 years)",
                               (unsigned long long)pn->id,
                               (unsigned long long)pn->duration_micros,
                               (unsigned long long)MAX_DURATION_MICROS);
    n->duration_micros = pn->duration_micros;
    if (!(n->name = keep_text(r, pn->name, MAX_NAME, b, path, err)))
        return err->status;
    size_t deps = pn->n_ctrl_deps + pn->n_data_deps;
    b->deps += deps;
    if (b->limits->max_deps && b->deps > b->limits->max_deps)
        return over_limit(err, path, "max_deps", b->limits->max_deps,
                          "dependencies over all ranks");
    if (deps) {
        /* into the rank's pool; n->deps is set once the pool stops moving */
        if (r->n_dep_pool + deps > *dep_cap) {
            uint64_t *p = grow(r->dep_pool, dep_cap, r->n_dep_pool + deps,
                               sizeof *r->dep_pool, false, b, path, err);
            if (!p)
                return err->status;
            r->dep_pool = p;
        }
        uint64_t *d = r->dep_pool + r->n_dep_pool;
        if (pn->n_ctrl_deps)
            memcpy(d, pn->ctrl_deps, sizeof *d * pn->n_ctrl_deps);
        if (pn->n_data_deps)
            memcpy(d + pn->n_ctrl_deps, pn->data_deps, sizeof *d * pn->n_data_deps);
        r->n_dep_pool += deps;
        n->n_deps = (uint32_t)deps; /* a 64 MiB message holds fewer than 2^32 */
    }
    return read_attrs(pn, n, r, b, path, err);
}

/* Open a rank's file for zlib, saying what is wrong when it cannot be read
 * as one (missing, unreadable, a directory). */
static gzFile open_trace(const char *path, comet_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
        return NULL;
    }
    struct stat info;
    int why = fstat(fd, &info) != 0 ? errno : S_ISDIR(info.st_mode) ? EISDIR : 0;
    if (why) { /* "Is a directory", as comet's other readers say it */
        comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "cannot read: %s", strerror(why));
        close(fd);
        return NULL;
    }
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        close(fd);
        comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    return f;
}

/* Arrays grown by half are cut to their size once read (*cap = n; the
 * memory given back is no longer counted). */
static void *fit(void *p, size_t *cap, size_t n, size_t size, budget *b)
{
    void *q = NULL;
    if (n == 0)
        free(p);
    else if (!(q = realloc(p, n * size)))
        return p;
    b->memory -= (uint64_t)(*cap - n) * size;
    *cap = n;
    return q;
}

static comet_status read_rank(const char *path, comet_et_rank *r, budget *b, comet_error *err)
{
    memset(r, 0, sizeof *r);
    gzFile f = open_trace(path, err);
    if (!f)
        return err->status;
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0, cap_nodes = 0, dep_cap = 0;
    arena scratch = {.first = block_new(ARENA_FIRST)};
    scratch.current = scratch.first;
    if (!scratch.first) {
        gzclose(f);
        return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
    }
    ProtobufCAllocator alloc = {.alloc = arena_alloc, .free = arena_free, .allocator_data = &scratch};
    gzbuffer(f, 256 * 1024);
    comet_status st = COMET_OK;
    int rc = read_message(f, &buf, &cap, &len, b, path, err);
    if (rc <= 0) {
        st = rc < 0 ? err->status
                    : comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                      "empty: a Chakra trace starts with a GlobalMetadata");
    } else if (!(st = charge_memory(b, 0, (uint64_t)len * DECODE_BYTES_PER_BYTE, path, err))) {
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
    while (!st && (rc = read_message(f, &buf, &cap, &len, b, path, err)) > 0) {
        arena_reset(&scratch, false);
        if ((st = charge_memory(b, 0, (uint64_t)len * DECODE_BYTES_PER_BYTE, path, err)))
            break;
        ChakraProtoMsg__Node *pn = chakra_proto_msg__node__unpack(&alloc, len, buf);
        if (!pn) {
            st = comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                 "message %zu is not a Chakra node (after node %llu)", r->n + 1,
                                 r->n ? (unsigned long long)r->nodes[r->n - 1].id : 0ULL);
            break;
        }
        if (b->limits->max_nodes && b->nodes >= b->limits->max_nodes) {
            st = over_limit(err, path, "max_nodes", b->limits->max_nodes,
                            "nodes over all ranks");
            break;
        }
        if (r->n == cap_nodes) {
            comet_et_node *p = grow(r->nodes, &cap_nodes, r->n + 1, sizeof *p, false, b, path,
                                    err);
            if (!p) {
                st = err->status;
                break;
            }
            r->nodes = p;
        }
        st = copy_node(pn, r, &dep_cap, b, path, err);
        r->n++;
        b->nodes++;
    }
    r->nodes = fit(r->nodes, &cap_nodes, r->n, sizeof *r->nodes, b);
    r->dep_pool = fit(r->dep_pool, &dep_cap, r->n_dep_pool, sizeof *r->dep_pool, b);
    /* the pool no longer moves: point each node at its dependencies */
    for (size_t i = 0, at = 0; i < r->n; i++) {
        r->nodes[i].deps = r->nodes[i].n_deps ? r->dep_pool + at : NULL;
        at += r->nodes[i].n_deps;
    }
    if (!st && rc < 0)
        st = err->status;
    arena_reset(&scratch, true);
    free(buf);
    b->memory -= cap;
    gzclose(f);
    return st;
}

static void free_rank(comet_et_rank *r)
{
    free(r->dep_pool);
    free(r->nodes);
    strings_free(r->strings);
    memset(r, 0, sizeof *r);
}

void comet_et_free(comet_et_trace *t)
{
    for (int i = 0; i < t->ranks; i++)
        free_rank(&t->rank[i]);
    free(t->rank);
    memset(t, 0, sizeof *t);
}

void comet_et_limits_default(comet_et_limits *limits)
{
    limits->max_nodes = COMET_ET_DEFAULT_MAX_NODES;
    limits->max_bytes = COMET_ET_DEFAULT_MAX_BYTES;
    limits->max_memory = COMET_ET_DEFAULT_MAX_MEMORY;
    limits->max_deps = COMET_ET_DEFAULT_MAX_DEPS;
}

comet_status comet_et_read(const char *prefix, int ranks, const comet_et_limits *limits,
                           comet_et_trace *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    comet_et_limits defaults;
    comet_et_limits_default(&defaults);
    budget b = {.limits = limits ? limits : &defaults};
    char path[4096];
    if (ranks <= 0) { /* as many consecutive files as exist */
        for (ranks = 0; ranks < 1 << 20; ranks++) {
            snprintf(path, sizeof path, "%s.%d.et", prefix, ranks);
            if (access(path, F_OK) != 0)
                break;
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
        comet_status st = read_rank(path, &out->rank[r], &b, err);
        if (st) {
            comet_et_free(out);
            return st;
        }
    }
    out->nodes = b.nodes;
    out->bytes = b.bytes;
    out->deps = b.deps;
    out->memory = b.memory;
    out->peak_memory = b.peak;
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
        if (n->pg_name && n->pg_name[0])
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
        pn.name = (char *)(nodes[i].name ? nodes[i].name : "");
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
    return comet_file_produce(path, produce_nodes, &l, err);
}
