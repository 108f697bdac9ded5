/* Tensor files for `comet partition`: NumPy .npy, NumPy .npz (a zip of
 * .npy members, stored by np.savez or deflated by np.savez_compressed)
 * and safetensors, read without Python into named float tensors.
 * Why here: a trained network arrives in one of these, and the reader
 * must hold on any bytes (a truncated download, a lying header): every
 * length is checked against what is left before it is used, element
 * counts are capped, and each problem is one line naming the file. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "plan.h"

#define NPY_MAGIC "\x93NUMPY"
#define MAX_FILE_BYTES (INT64_C(1) << 36)   /* 64 GiB: far above any file we can hold */
#define MAX_JSON_DEPTH 16

/* ------------------------------------------------------------------ */
/* element types */

typedef enum elem_kind { ELEM_FLOAT, ELEM_INT, ELEM_UINT, ELEM_BOOL, ELEM_BFLOAT } elem_kind;

typedef struct elem_type {
    elem_kind kind;
    int size;         /* bytes */
    bool big_endian;
} elem_type;

static uint64_t load_uint(const unsigned char *p, int size, bool big_endian)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++) {
        int k = big_endian ? i : size - 1 - i;
        v = (v << 8) | p[k];
    }
    return v;
}

static float half_to_float(uint16_t h)
{
    int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double v;
    if (exponent == 0)
        v = ldexp(mantissa, -24);
    else if (exponent == 31)
        v = mantissa ? NAN : INFINITY;
    else
        v = ldexp(mantissa + 1024, exponent - 25);
    return (float)(sign ? -v : v);
}

static float elem_value(const unsigned char *p, const elem_type *t)
{
    uint64_t bits = load_uint(p, t->size, t->big_endian);
    switch (t->kind) {
    case ELEM_BOOL:
        return bits ? 1.0f : 0.0f;
    case ELEM_UINT:
        return (float)bits;
    case ELEM_INT: {
        int shift = 64 - 8 * t->size;
        int64_t v = (int64_t)(bits << shift) >> shift;
        return (float)v;
    }
    case ELEM_BFLOAT: {
        uint32_t w = (uint32_t)bits << 16;
        float f;
        memcpy(&f, &w, sizeof f);
        return f;
    }
    case ELEM_FLOAT:
        if (t->size == 2)
            return half_to_float((uint16_t)bits);
        if (t->size == 4) {
            uint32_t w = (uint32_t)bits;
            float f;
            memcpy(&f, &w, sizeof f);
            return f;
        } else {
            double d;
            memcpy(&d, &bits, sizeof d);
            return (float)d;
        }
    }
    return NAN;
}

/* Fill t->values from raw bytes (count elements of type et); fortran:
 * the bytes are in column-major order. */
static comet_status fill_values(comet_tensor *t, const unsigned char *data, const elem_type *et,
                                bool fortran, const char *file, comet_error *err)
{
    t->values = malloc((size_t)(t->count ? t->count : 1) * sizeof(float));
    if (!t->values)
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL,
                               "out of memory for tensor \"%s\"", t->name);
    if (!fortran || t->ndim < 2) {
        for (int64_t i = 0; i < t->count; i++)
            t->values[i] = elem_value(data + i * et->size, et);
        return COMET_OK;
    }
    /* column-major source: walk its order, place each at its C index */
    int64_t index[COMET_TENSOR_MAX_DIMS] = {0};
    int64_t stride[COMET_TENSOR_MAX_DIMS];
    stride[t->ndim - 1] = 1;
    for (int d = t->ndim - 2; d >= 0; d--)
        stride[d] = stride[d + 1] * t->shape[d + 1];
    for (int64_t k = 0; k < t->count; k++) {
        int64_t c = 0;
        for (int d = 0; d < t->ndim; d++)
            c += index[d] * stride[d];
        t->values[c] = elem_value(data + k * et->size, et);
        for (int d = 0; d < t->ndim; d++) {
            if (++index[d] < t->shape[d])
                break;
            index[d] = 0;
        }
    }
    return COMET_OK;
}

/* Product of a shape, or -1 when a dimension is negative or the product
 * passes the element cap. */
static int64_t shape_count(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || (shape[d] && n > COMET_TENSOR_MAX_ELEMENTS / shape[d]))
            return -1;
        n *= shape[d];
    }
    return n > COMET_TENSOR_MAX_ELEMENTS ? -1 : n;
}

/* ------------------------------------------------------------------ */
/* .npy */

/* The value text after 'key': in a NumPy header dict, or NULL. */
static const char *npy_field(const char *header, const char *key)
{
    char quoted[32];
    for (int q = 0; q < 2; q++) {
        snprintf(quoted, sizeof quoted, q ? "\"%s\"" : "'%s'", key);
        const char *p = strstr(header, quoted);
        if (p) {
            p += strlen(quoted);
            while (*p == ' ')
                p++;
            if (*p != ':')
                return NULL;
            p++;
            while (*p == ' ')
                p++;
            return p;
        }
    }
    return NULL;
}

static bool npy_descr(const char *v, elem_type *et)
{
    if (*v != '\'' && *v != '"')
        return false;
    char q = *v++;
    char code[8];
    int n = 0;
    while (v[n] && v[n] != q && n < 7) {
        code[n] = v[n];
        n++;
    }
    if (v[n] != q || n < 2)
        return false;
    code[n] = 0;
    const char *c = code;
    et->big_endian = false;
    if (*c == '<' || *c == '=' || *c == '|')
        c++;
    else if (*c == '>') {
        et->big_endian = true;
        c++;
    }
    char k = *c++;
    char *end;
    long size = strtol(c, &end, 10);
    if (*end || end == c)
        return false;
    et->size = (int)size;
    switch (k) {
    case 'f':
        et->kind = ELEM_FLOAT;
        return size == 2 || size == 4 || size == 8;
    case 'i':
        et->kind = ELEM_INT;
        return size == 1 || size == 2 || size == 4 || size == 8;
    case 'u':
        et->kind = ELEM_UINT;
        return size == 1 || size == 2 || size == 4 || size == 8;
    case 'b':
        et->kind = ELEM_BOOL;
        return size == 1;
    default:
        return false;
    }
}

static int npy_shape(const char *v, int64_t *shape)
{
    if (*v++ != '(')
        return -1;
    int nd = 0;
    for (;;) {
        while (*v == ' ')
            v++;
        if (*v == ')')
            return nd;
        if (*v < '0' || *v > '9' || nd == COMET_TENSOR_MAX_DIMS)
            return -1;
        char *end;
        errno = 0;
        long long d = strtoll(v, &end, 10);
        if (errno || d > COMET_TENSOR_MAX_ELEMENTS)
            return -1;
        shape[nd++] = d;
        v = end;
        while (*v == ' ' || *v == 'L')
            v++;
        if (*v == ',')
            v++;
        else if (*v != ')')
            return -1;
    }
}

/* One .npy image (data, size) into t; name is the tensor's name. */
static comet_status npy_parse(const unsigned char *data, size_t size, const char *name,
                              const char *file, comet_tensor *t, comet_error *err)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    if (size < 10 || memcmp(data, NPY_MAGIC, 6) != 0)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: not a .npy array (no \\x93NUMPY magic)", name);
    int major = data[6];
    size_t header_len, start;
    if (major == 1) {
        header_len = (size_t)load_uint(data + 8, 2, false);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "%s: truncated .npy header", name);
        header_len = (size_t)load_uint(data + 8, 4, false);
        start = 12;
    } else
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: .npy format version %d is not known", name, major);
    if (header_len > size - start || header_len > 65536)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: truncated .npy header (says %zu bytes, %zu left)", name,
                               header_len, size - start);
    char *header = malloc(header_len + 1);
    if (!header)
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    memcpy(header, data + start, header_len);
    header[header_len] = 0;
    for (size_t i = 0; i < header_len; i++)
        if (!header[i])
            header[i] = ' ';
    elem_type et;
    const char *descr = npy_field(header, "descr");
    const char *fortran = npy_field(header, "fortran_order");
    const char *shape = npy_field(header, "shape");
    comet_status st = COMET_OK;
    if (!descr || !npy_descr(descr, &et))
        st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                             "%s: .npy dtype missing or not supported (floats, integers, bools)",
                             name);
    else if (!fortran || (strncmp(fortran, "False", 5) && strncmp(fortran, "True", 4)))
        st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                             "%s: .npy header has no fortran_order", name);
    else if (!shape || (t->ndim = npy_shape(shape, t->shape)) < 0)
        st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                             "%s: .npy shape missing or malformed (at most %d dimensions)", name,
                             COMET_TENSOR_MAX_DIMS);
    else if ((t->count = shape_count(t->shape, t->ndim)) < 0)
        st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                             "%s: .npy shape holds more than 2^31 elements", name);
    bool is_fortran = !st && strncmp(fortran, "True", 4) == 0;
    free(header);
    if (st)
        return st;
    size_t need = (size_t)t->count * (size_t)et.size;
    size_t have = size - start - header_len;
    if (have < need)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: truncated .npy data (%zu bytes of %zu)", name, have, need);
    if (have > need)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: %zu bytes after the .npy data (a lying shape?)", name,
                               have - need);
    return fill_values(t, data + start + header_len, &et, is_fortran, file, err);
}

/* ------------------------------------------------------------------ */
/* the growing set */

static comet_status set_push(comet_tensor_set *s, comet_tensor *t, const char *file,
                             comet_error *err)
{
    if (s->n == COMET_TENSOR_MAX_COUNT) {
        free(t->values);
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "more than %d tensors in one file", COMET_TENSOR_MAX_COUNT);
    }
    if ((s->n & (s->n - 1)) == 0) {
        size_t cap = s->n ? (size_t)s->n * 2 : 4;
        comet_tensor *grown = realloc(s->tensors, cap * sizeof *grown);
        if (!grown) {
            free(t->values);
            return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
        }
        s->tensors = grown;
    }
    s->tensors[s->n++] = *t;
    return COMET_OK;
}

void comet_tensors_free(comet_tensor_set *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        free(s->tensors[i].values);
    free(s->tensors);
    s->tensors = NULL;
    s->n = 0;
}

const comet_tensor *comet_tensors_find(const comet_tensor_set *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->tensors[i].name, name) == 0)
            return &s->tensors[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* .npz: a zip archive */

typedef struct zip_member {
    char name[128];
    uint32_t crc;
    int method;
    uint64_t packed, unpacked, local_offset;
} zip_member;

/* The zip64 extra field's 64-bit sizes and offset replace the 32-bit
 * ones that are 0xffffffff. */
static bool zip64_extra(const unsigned char *x, size_t len, zip_member *m, bool need_unpacked,
                        bool need_packed, bool need_offset)
{
    while (len >= 4) {
        unsigned id = (unsigned)load_uint(x, 2, false);
        size_t n = (size_t)load_uint(x + 2, 2, false);
        if (n > len - 4)
            return false;
        if (id == 1) {
            const unsigned char *p = x + 4;
            size_t left = n;
            uint64_t *fields[3] = {need_unpacked ? &m->unpacked : NULL,
                                   need_packed ? &m->packed : NULL,
                                   need_offset ? &m->local_offset : NULL};
            for (int f = 0; f < 3; f++) {
                if (!fields[f])
                    continue;
                if (left < 8)
                    return false;
                *fields[f] = load_uint(p, 8, false);
                p += 8;
                left -= 8;
            }
            return true;
        }
        x += 4 + n;
        len -= 4 + n;
    }
    return !(need_unpacked || need_packed || need_offset);
}

static comet_status zip_inflate(const unsigned char *in, size_t in_len, unsigned char *out,
                                size_t out_len, const char *file, const char *name,
                                comet_error *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory (zlib)");
    size_t done_in = 0, done_out = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
        size_t in_step = in_len - done_in, out_step = out_len - done_out;
        z.next_in = (unsigned char *)in + done_in;
        z.avail_in = (uInt)(in_step > UINT_MAX ? UINT_MAX : in_step);
        z.next_out = out + done_out;
        z.avail_out = (uInt)(out_step > UINT_MAX ? UINT_MAX : out_step);
        uInt before_in = z.avail_in, before_out = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        done_in += before_in - z.avail_in;
        done_out += before_out - z.avail_out;
        if (rc == Z_OK && before_in == z.avail_in && before_out == z.avail_out)
            rc = Z_BUF_ERROR;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || done_out != out_len)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: deflated data is corrupt or truncated", name);
    return COMET_OK;
}

static comet_status npz_parse(const unsigned char *data, size_t size, const char *file,
                              comet_tensor_set *out, comet_error *err)
{
    /* the end-of-central-directory record, within the last 64 KiB + 22 */
    size_t eocd = SIZE_MAX;
    size_t lowest = size > 65557 ? size - 65557 : 0;
    for (size_t i = size >= 22 ? size - 22 + 1 : 0; i-- > lowest;)
        if (memcmp(data + i, "PK\5\6", 4) == 0) {
            eocd = i;
            break;
        }
    if (eocd == SIZE_MAX)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "not a whole .npz (zip) archive: no end of central directory "
                               "(truncated?)");
    uint64_t entries = load_uint(data + eocd + 10, 2, false);
    uint64_t cd_size = load_uint(data + eocd + 12, 4, false);
    uint64_t cd_offset = load_uint(data + eocd + 16, 4, false);
    if (cd_offset == 0xffffffffu || entries == 0xffff) {
        /* zip64: its locator sits just before */
        if (eocd < 20 || memcmp(data + eocd - 20, "PK\6\7", 4) != 0)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "zip64 archive without its locator");
        uint64_t z64 = load_uint(data + eocd - 20 + 8, 8, false);
        if (z64 > size - 56 || size < 56 || memcmp(data + z64, "PK\6\6", 4) != 0)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "zip64 end of central directory missing");
        entries = load_uint(data + z64 + 32, 8, false);
        cd_size = load_uint(data + z64 + 40, 8, false);
        cd_offset = load_uint(data + z64 + 48, 8, false);
    }
    if (cd_offset > size || cd_size > size - cd_offset)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "zip central directory lies outside the file (truncated?)");
    if (entries > COMET_TENSOR_MAX_COUNT)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "more than %d members in the archive", COMET_TENSOR_MAX_COUNT);
    const unsigned char *p = data + cd_offset;
    size_t left = (size_t)cd_size;
    for (uint64_t e = 0; e < entries; e++) {
        if (left < 46 || memcmp(p, "PK\1\2", 4) != 0)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "zip central directory entry %llu is malformed",
                                   (unsigned long long)e + 1);
        zip_member m;
        memset(&m, 0, sizeof m);
        int flags = (int)load_uint(p + 8, 2, false);
        m.method = (int)load_uint(p + 10, 2, false);
        m.crc = (uint32_t)load_uint(p + 16, 4, false);
        m.packed = load_uint(p + 20, 4, false);
        m.unpacked = load_uint(p + 24, 4, false);
        size_t name_len = (size_t)load_uint(p + 28, 2, false);
        size_t extra_len = (size_t)load_uint(p + 30, 2, false);
        size_t comment_len = (size_t)load_uint(p + 32, 2, false);
        m.local_offset = load_uint(p + 42, 4, false);
        if (46 + name_len + extra_len + comment_len > left)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "zip central directory entry %llu runs past its end",
                                   (unsigned long long)e + 1);
        if (!zip64_extra(p + 46 + name_len, extra_len, &m, m.unpacked == 0xffffffffu,
                         m.packed == 0xffffffffu, m.local_offset == 0xffffffffu))
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "zip64 sizes missing for member %llu",
                                   (unsigned long long)e + 1);
        size_t keep = name_len < sizeof m.name - 1 ? name_len : sizeof m.name - 1;
        memcpy(m.name, p + 46, keep);
        m.name[keep] = 0;
        for (size_t i = 0; i < keep; i++)
            if ((unsigned char)m.name[i] < 0x20 || m.name[i] == 0x7f)
                m.name[i] = '?'; /* names go into one-line errors */
        p += 46 + name_len + extra_len + comment_len;
        left -= 46 + name_len + extra_len + comment_len;
        if (flags & 1)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "%s: encrypted archive members are not supported", m.name);
        if (m.method != 0 && m.method != 8)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "%s: zip compression method %d (only stored and deflated)",
                                   m.name, m.method);
        /* the local header: its own name and extra lengths */
        if (m.local_offset > size || size - m.local_offset < 30 ||
            memcmp(data + m.local_offset, "PK\3\4", 4) != 0)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "%s: zip local header missing (truncated?)", m.name);
        size_t start = (size_t)m.local_offset + 30 +
                       (size_t)load_uint(data + m.local_offset + 26, 2, false) +
                       (size_t)load_uint(data + m.local_offset + 28, 2, false);
        if (start > size || m.packed > size - start)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "%s: truncated zip member (%llu bytes said, %zu left)", m.name,
                                   (unsigned long long)m.packed, start > size ? 0 : size - start);
        if (m.method == 0 && m.packed != m.unpacked)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "%s: stored member with two sizes", m.name);
        /* deflate expands at most 1032:1; a bigger claim is a lie */
        if (m.unpacked > (uint64_t)COMET_TENSOR_MAX_ELEMENTS * 8 + 65536 ||
            m.unpacked / 1032 > m.packed + 1)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "%s: implausible uncompressed size %llu", m.name,
                                   (unsigned long long)m.unpacked);
        const unsigned char *image = data + start;
        unsigned char *inflated = NULL;
        comet_status st = COMET_OK;
        if (m.method == 8) {
            inflated = malloc(m.unpacked ? (size_t)m.unpacked : 1);
            if (!inflated)
                return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
            st = zip_inflate(image, (size_t)m.packed, inflated, (size_t)m.unpacked, file, m.name,
                             err);
            image = inflated;
        }
        if (!st && (uint32_t)crc32_z(0L, image, (z_size_t)m.unpacked) != m.crc)
            st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                 "%s: CRC mismatch (corrupt archive)", m.name);
        comet_tensor t;
        char tensor_name[128];
        snprintf(tensor_name, sizeof tensor_name, "%s", m.name);
        size_t nl = strlen(tensor_name);
        if (nl > 4 && strcmp(tensor_name + nl - 4, ".npy") == 0)
            tensor_name[nl - 4] = 0;
        if (!st)
            st = npy_parse(image, (size_t)m.unpacked, tensor_name, file, &t, err);
        free(inflated);
        if (!st)
            st = set_push(out, &t, file, err);
        if (st)
            return st;
    }
    return COMET_OK;
}

/* ------------------------------------------------------------------ */
/* safetensors: 8-byte header length, a JSON header, the data */

typedef struct json_in {
    const char *p, *end;
    int depth;
} json_in;

static void json_space(json_in *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static bool json_lit(json_in *j, char c)
{
    json_space(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

/* A string into out (truncated to cap - 1; escapes kept as the char after
 * the backslash, \u as '?'). */
static bool json_string(json_in *j, char *out, size_t cap)
{
    if (!json_lit(j, '"'))
        return false;
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\') {
            if (j->p >= j->end)
                return false;
            c = *j->p++;
            if (c == 'u') {
                if (j->end - j->p < 4)
                    return false;
                j->p += 4;
                c = '?';
            }
        }
        if ((unsigned char)c < 0x20)
            return false;
        if (n + 1 < cap)
            out[n++] = c;
    }
    if (cap)
        out[n] = 0;
    return json_lit(j, '"');
}

static bool json_skip(json_in *j);

static bool json_skip_container(json_in *j, char close, bool keys)
{
    if (++j->depth > MAX_JSON_DEPTH)
        return false;
    if (json_lit(j, close)) {
        j->depth--;
        return true;
    }
    do {
        char scratch[8];
        if (keys && (!json_string(j, scratch, sizeof scratch) || !json_lit(j, ':')))
            return false;
        if (!json_skip(j))
            return false;
    } while (json_lit(j, ','));
    j->depth--;
    return json_lit(j, close);
}

static bool json_skip(json_in *j)
{
    json_space(j);
    if (j->p >= j->end)
        return false;
    char c = *j->p;
    if (c == '"') {
        char scratch[8];
        return json_string(j, scratch, sizeof scratch);
    }
    if (c == '{') {
        j->p++;
        return json_skip_container(j, '}', true);
    }
    if (c == '[') {
        j->p++;
        return json_skip_container(j, ']', false);
    }
    const char *start = j->p;
    while (j->p < j->end && strchr("+-.0123456789eEtruefalsn", *j->p))
        j->p++;
    return j->p > start;
}

static bool json_uint(json_in *j, uint64_t *out)
{
    json_space(j);
    const char *start = j->p;
    uint64_t v = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*j->p++ - '0');
    }
    *out = v;
    return j->p > start;
}

static bool st_dtype(const char *s, elem_type *et)
{
    static const struct {
        const char *name;
        elem_kind kind;
        int size;
    } known[] = {{"F64", ELEM_FLOAT, 8}, {"F32", ELEM_FLOAT, 4}, {"F16", ELEM_FLOAT, 2},
                 {"BF16", ELEM_BFLOAT, 2}, {"I64", ELEM_INT, 8},  {"I32", ELEM_INT, 4},
                 {"I16", ELEM_INT, 2},    {"I8", ELEM_INT, 1},    {"U64", ELEM_UINT, 8},
                 {"U32", ELEM_UINT, 4},   {"U16", ELEM_UINT, 2},  {"U8", ELEM_UINT, 1},
                 {"BOOL", ELEM_BOOL, 1}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(s, known[i].name) == 0) {
            et->kind = known[i].kind;
            et->size = known[i].size;
            et->big_endian = false;
            return true;
        }
    return false;
}

/* One tensor's entry {"dtype": ..., "shape": [...], "data_offsets": [a, b]}. */
static comet_status st_entry(json_in *j, const char *name, const unsigned char *body,
                             size_t body_len, const char *file, comet_tensor_set *out,
                             comet_error *err)
{
    comet_tensor t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", name);
    elem_type et = {ELEM_FLOAT, 0, false};
    bool have_dtype = false, have_shape = false, have_offsets = false;
    uint64_t begin = 0, end = 0;
    if (!json_lit(j, '{'))
        goto malformed;
    if (!json_lit(j, '}'))
        do {
            char key[32], text[16];
            if (!json_string(j, key, sizeof key) || !json_lit(j, ':'))
                goto malformed;
            if (strcmp(key, "dtype") == 0) {
                if (!json_string(j, text, sizeof text))
                    goto malformed;
                if (!st_dtype(text, &et))
                    return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                           "%s: safetensors dtype \"%s\" is not supported", name,
                                           text);
                have_dtype = true;
            } else if (strcmp(key, "shape") == 0) {
                if (!json_lit(j, '['))
                    goto malformed;
                if (!json_lit(j, ']')) {
                    do {
                        uint64_t d;
                        if (t.ndim == COMET_TENSOR_MAX_DIMS || !json_uint(j, &d) ||
                            d > (uint64_t)COMET_TENSOR_MAX_ELEMENTS)
                            goto malformed;
                        t.shape[t.ndim++] = (int64_t)d;
                    } while (json_lit(j, ','));
                    if (!json_lit(j, ']'))
                        goto malformed;
                }
                have_shape = true;
            } else if (strcmp(key, "data_offsets") == 0) {
                if (!json_lit(j, '[') || !json_uint(j, &begin) || !json_lit(j, ',') ||
                    !json_uint(j, &end) || !json_lit(j, ']'))
                    goto malformed;
                have_offsets = true;
            } else if (!json_skip(j))
                goto malformed;
        } while (json_lit(j, ','));
    if (!json_lit(j, '}') || !have_dtype || !have_shape || !have_offsets)
        goto malformed;
    t.count = shape_count(t.shape, t.ndim);
    if (t.count < 0)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: shape holds more than 2^31 elements", name);
    if (end < begin || end > body_len)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: data_offsets [%llu, %llu] outside the %zu data bytes "
                               "(truncated?)",
                               name, (unsigned long long)begin, (unsigned long long)end, body_len);
    if (end - begin != (uint64_t)t.count * (uint64_t)et.size)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s: %llu data bytes for a shape of %lld elements of %d bytes",
                               name, (unsigned long long)(end - begin), (long long)t.count,
                               et.size);
    comet_status st = fill_values(&t, body + begin, &et, false, file, err);
    return st ? st : set_push(out, &t, file, err);
malformed:
    return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                           "%s: malformed safetensors header entry", name);
}

static comet_status safetensors_parse(const unsigned char *data, size_t size, const char *file,
                                      comet_tensor_set *out, comet_error *err)
{
    uint64_t header_len = load_uint(data, 8, false);
    if (header_len > size - 8 || header_len > (UINT64_C(100) << 20))
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "safetensors header says %llu bytes, %zu left (truncated?)",
                               (unsigned long long)header_len, size - 8);
    json_in j = {(const char *)data + 8, (const char *)data + 8 + header_len, 0};
    const unsigned char *body = data + 8 + header_len;
    size_t body_len = size - 8 - (size_t)header_len;
    if (!json_lit(&j, '{'))
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "safetensors header is not a JSON object");
    if (json_lit(&j, '}'))
        return COMET_OK;
    do {
        char name[128];
        if (!json_string(&j, name, sizeof name) || !json_lit(&j, ':'))
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "malformed safetensors header");
        if (strcmp(name, "__metadata__") == 0) {
            if (!json_skip(&j))
                return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                       "malformed safetensors __metadata__");
            continue;
        }
        comet_status st = st_entry(&j, name, body, body_len, file, out, err);
        if (st)
            return st;
    } while (json_lit(&j, ','));
    if (!json_lit(&j, '}'))
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "malformed safetensors header (no closing brace)");
    return COMET_OK;
}

/* ------------------------------------------------------------------ */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

comet_status comet_tensors_parse(const void *bytes, size_t size, const char *name,
                                 comet_tensor_set *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    const unsigned char *data = bytes;
    comet_status st;
    if (size >= 6 && memcmp(data, NPY_MAGIC, 6) == 0) {
        char tensor_name[128];
        snprintf(tensor_name, sizeof tensor_name, "%s", base_name(name));
        size_t nl = strlen(tensor_name);
        if (nl > 4 && strcmp(tensor_name + nl - 4, ".npy") == 0)
            tensor_name[nl - 4] = 0;
        comet_tensor t;
        st = npy_parse(data, size, tensor_name, name, &t, err);
        if (!st)
            st = set_push(out, &t, name, err);
    } else if (size >= 4 && memcmp(data, "PK", 2) == 0)
        st = npz_parse(data, size, name, out, err);
    else if (size >= 10 && data[8] == '{')
        st = safetensors_parse(data, size, name, out, err);
    else
        st = comet_error_set(err, COMET_EINPUT, name, 0, 0, NULL,
                             "neither .npy, .npz nor safetensors (%zu bytes)", size);
    if (!st && out->n == 0)
        st = comet_error_set(err, COMET_EINPUT, name, 0, 0, NULL, "no tensors in the file");
    if (st)
        comet_tensors_free(out);
    return st;
}

comet_status comet_tensors_read(const char *path, comet_tensor_set *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return comet_error_set(err, comet_errno_status(errno), path, 0, 0, NULL,
                               "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "not a regular file");
    }
    if ((int64_t)sb.st_size > MAX_FILE_BYTES) {
        fclose(f);
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "file larger than 64 GiB");
    }
    size_t size = (size_t)sb.st_size;
    unsigned char *data = malloc(size ? size : 1);
    if (!data) {
        fclose(f);
        return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL,
                               "out of memory reading %zu bytes", size);
    }
    size_t got = fread(data, 1, size, f);
    bool failed = ferror(f);
    fclose(f);
    if (failed || got != size) {
        free(data);
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "read failed");
    }
    comet_status st = comet_tensors_parse(data, size, path, out, err);
    free(data);
    return st;
}
