/* The measurement files comet calibrate reads: a CSV of kernel timings
 * (GEMMs, fused attention, memory-bound kernels; a header names the
 * columns) and what nccl-tests prints. Both are read strictly where a value
 * is meant (every error names file, line, column and the column's name)
 * and loosely around it (comments, blank lines, NCCL's log lines), so a
 * transcription of a lab notebook or a raw nccl-tests log reads as it is.
 * The format is in docs/calibrate.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vocab/vocab.h"
#include "comet/calibrate.h"
#include "sections.h"

#define MAX_FIELDS 32
#define MAX_ROWS 1000000
#define LINE_MAX_LEN 4096

/* ---- lines ------------------------------------------------------------------ */

/* The next line of text[*at, len): its start and length without the line
 * break (and a '\r' before it); false at the end. */
static bool next_line(const char *text, size_t len, size_t *at, const char **line, size_t *n)
{
    if (*at >= len)
        return false;
    const char *s = text + *at;
    const char *nl = memchr(s, '\n', len - *at);
    size_t k = nl ? (size_t)(nl - s) : len - *at;
    *at += k + (nl ? 1 : 0);
    if (k && s[k - 1] == '\r')
        k--;
    *line = s;
    *n = k;
    return true;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* A field of a line: its text (NUL-terminated copy, blanks trimmed) and
 * where it starts (1-based column). */
typedef struct field {
    char text[128];
    int column;
    bool truncated;
} field;

/* Split line by `sep` (',' for CSV; 0: runs of blanks) into at most
 * MAX_FIELDS fields; returns how many, or -1 when there are more. */
static int split(const char *line, size_t n, char sep, field *out)
{
    int count = 0;
    size_t i = 0;
    while (i <= n) {
        if (!sep) {
            while (i < n && is_blank(line[i]))
                i++;
            if (i >= n)
                break;
        }
        size_t start = i;
        while (i < n && (sep ? line[i] != sep : !is_blank(line[i])))
            i++;
        size_t a = start, b = i;
        while (a < b && is_blank(line[a]))
            a++;
        while (b > a && is_blank(line[b - 1]))
            b--;
        if (count == MAX_FIELDS)
            return -1;
        field *f = &out[count++];
        size_t k = b - a < sizeof f->text - 1 ? b - a : sizeof f->text - 1;
        memcpy(f->text, line + a, k);
        f->text[k] = '\0';
        f->truncated = b - a > k;
        f->column = (int)(a < n || !sep ? a : start) + 1;
        i++; /* past the separator */
        if (!sep && i > n)
            break;
    }
    return count;
}

/* A strictly decimal number filling the whole text. */
static bool parse_number(const char *text, double *out)
{
    size_t span = cfg_number_span(text);
    if (!span || text[span])
        return false;
    *out = strtod(text, NULL);
    return true;
}

/* ---- the kernel CSV ---------------------------------------------------------- */

typedef enum col {
    COL_KIND, COL_M, COL_N, COL_K, COL_DTYPE, COL_BATCH, COL_HEADS, COL_SEQ, COL_HEAD_DIM,
    COL_CAUSAL, COL_PASS, COL_SUBKIND, COL_BYTES, COL_SECONDS, COL_TFLOPS, COL_GBPS, COL_COUNT
} col;

static const char *const col_names[] = {"kind",   "m",      "n",        "k",      "dtype",
                                        "batch",  "heads",  "seq",      "head_dim", "causal",
                                        "pass",   "subkind", "bytes",   "seconds", "tflops",
                                        "gbps",   NULL};
_Static_assert(sizeof col_names / sizeof col_names[0] == COL_COUNT + 1, "a name per column");

static const char *const kind_names[] = {"gemm", "attention", "memory", NULL};

#define BIT(c) (1u << (c))
/* the columns each kind of row may fill */
static const unsigned kind_columns[COMET_KERNEL_KIND_COUNT] = {
    [COMET_KERNEL_GEMM] = BIT(COL_KIND) | BIT(COL_M) | BIT(COL_N) | BIT(COL_K) | BIT(COL_DTYPE) |
                          BIT(COL_SECONDS) | BIT(COL_TFLOPS),
    [COMET_KERNEL_ATTENTION] = BIT(COL_KIND) | BIT(COL_DTYPE) | BIT(COL_BATCH) | BIT(COL_HEADS) |
                               BIT(COL_SEQ) | BIT(COL_HEAD_DIM) | BIT(COL_CAUSAL) |
                               BIT(COL_PASS) | BIT(COL_SECONDS) | BIT(COL_TFLOPS),
    [COMET_KERNEL_MEMORY] = BIT(COL_KIND) | BIT(COL_SUBKIND) | BIT(COL_BYTES) | BIT(COL_SECONDS) |
                            BIT(COL_GBPS),
};

/* One row being read: the file, line and where each column's field is. */
typedef struct csv_row {
    const char *file;
    int line;
    const field *at[COL_COUNT];  /* NULL: empty or not in the header */
    int pos[COL_COUNT];          /* where each column's field starts, empty ones too (0: none) */
    int line_end;                /* column just past the line, for columns it lacks */
    comet_error *err;
} csv_row;

static comet_status row_fail(const csv_row *r, col c, const char *fmt, const char *a,
                             const char *b)
{
    char key[48];
    snprintf(key, sizeof key, "column '%s'", col_names[c]);
    return comet_error_set(r->err, COMET_EINPUT, r->file, r->line,
                           r->pos[c] ? r->pos[c] : r->line_end, key, fmt, a, b);
}

static comet_status missing(const csv_row *r, col c, const char *why)
{
    return row_fail(r, c, "missing (%s%s)", why, "");
}

/* A positive number in column c, or 0 when the field is empty. */
static comet_status number(const csv_row *r, col c, double *out)
{
    *out = 0.0;
    if (!r->at[c])
        return COMET_OK;
    const char *t = r->at[c]->text;
    double v;
    if (!parse_number(t, &v) || !(v > 0.0) || v > 1e15)
        return row_fail(r, c, "expected a positive number, got \"%s\"%s", t,
                        r->at[c]->truncated ? "..." : "");
    *out = v;
    return COMET_OK;
}

/* A number that converts to SI by `scale` and must lie in kind's sane range. */
static comet_status quantity(const csv_row *r, col c, double scale, cfg_unit_kind kind,
                             double *out)
{
    CFG_TRY(number(r, c, out));
    if (*out > 0.0 && !cfg_units_in_range(kind, *out * scale))
        return row_fail(r, c, "%s is outside the sane range %s", r->at[c]->text,
                        cfg_units_range(kind));
    *out *= scale;
    return COMET_OK;
}

static comet_status name_in(const csv_row *r, col c, const char *const *names, int *out)
{
    int i = vocab_name_index(names, r->at[c]->text);
    if (i >= 0) {
        *out = i;
        return COMET_OK;
    }
    char list[160];
    cfg_join(list, sizeof list, names);
    return row_fail(r, c, "unknown value \"%s\" (expected one of %s)", r->at[c]->text, list);
}

/* The time, or the rate in column rate_col (scaled to SI): exactly one. */
static comet_status measurement(const csv_row *r, col rate_col, double scale,
                                cfg_unit_kind kind, comet_kernel_row *k)
{
    if (r->at[COL_SECONDS] && r->at[rate_col])
        return row_fail(r, rate_col, "give seconds or %s, not both%s", col_names[rate_col], "");
    if (!r->at[COL_SECONDS] && !r->at[rate_col])
        return row_fail(r, COL_SECONDS, "missing (give seconds or %s)%s", col_names[rate_col], "");
    CFG_TRY(quantity(r, COL_SECONDS, 1.0, CFG_UNIT_TIME, &k->seconds));
    return quantity(r, rate_col, scale, kind, &k->rate);
}

static comet_status read_gemm(const csv_row *r, comet_kernel_row *k)
{
    static const col need[] = {COL_M, COL_N, COL_K};
    for (size_t i = 0; i < 3; i++)
        if (!r->at[need[i]])
            return missing(r, need[i], "gemm rows need m, n and k");
    CFG_TRY(number(r, COL_M, &k->m));
    CFG_TRY(number(r, COL_N, &k->n));
    CFG_TRY(number(r, COL_K, &k->k));
    double flops = 2.0 * k->m * k->n * k->k;
    if (!cfg_units_in_range(CFG_UNIT_FLOPS, flops)) {
        char text[48];
        snprintf(text, sizeof text, "%g", flops);
        return row_fail(r, COL_M, "the GEMM's 2mnk, %s FLOP, is outside the sane range %s",
                        text, cfg_units_range(CFG_UNIT_FLOPS));
    }
    return measurement(r, COL_TFLOPS, 1e12, CFG_UNIT_FLOP_RATE, k);
}

static comet_status read_attention(const csv_row *r, comet_kernel_row *k)
{
    if (!r->at[COL_SEQ])
        return missing(r, COL_SEQ, "attention rows need seq, head_dim and pass");
    if (!r->at[COL_HEAD_DIM])
        return missing(r, COL_HEAD_DIM, "attention rows need seq, head_dim and pass");
    if (!r->at[COL_PASS])
        return missing(r, COL_PASS, "attention rows need seq, head_dim and pass");
    CFG_TRY(number(r, COL_SEQ, &k->seq));
    CFG_TRY(number(r, COL_HEAD_DIM, &k->head_dim));
    CFG_TRY(number(r, COL_BATCH, &k->batch));
    CFG_TRY(number(r, COL_HEADS, &k->heads));
    static const char *const passes[] = {"fwd", "fwd_bwd", NULL};
    int pass = 0;
    CFG_TRY(name_in(r, COL_PASS, passes, &pass));
    k->fwd_bwd = pass == 1;
    k->causal = true;
    if (r->at[COL_CAUSAL]) {
        static const char *const flags[] = {"false", "true", "0", "1", NULL};
        int v = 1;
        CFG_TRY(name_in(r, COL_CAUSAL, flags, &v));
        k->causal = v % 2 == 1;
    }
    CFG_TRY(measurement(r, COL_TFLOPS, 1e12, CFG_UNIT_FLOP_RATE, k));
    if (k->seconds > 0.0 && !(k->batch > 0.0))
        return missing(r, COL_BATCH, "a time needs batch and heads to count the FLOPs");
    if (k->seconds > 0.0 && !(k->heads > 0.0))
        return missing(r, COL_HEADS, "a time needs batch and heads to count the FLOPs");
    if (!(k->batch > 0.0))
        k->batch = 1.0;
    if (!(k->heads > 0.0))
        k->heads = 1.0;
    return COMET_OK;
}

static comet_status read_memory(const csv_row *r, comet_kernel_row *k)
{
    if (!r->at[COL_SUBKIND])
        return missing(r, COL_SUBKIND, "memory rows name their kind of kernel");
    int kind = 0;
    CFG_TRY(name_in(r, COL_SUBKIND, vocab_mem_kernel_names, &kind));
    k->mem = (comet_mem_kernel)kind;
    CFG_TRY(quantity(r, COL_BYTES, 1.0, CFG_UNIT_BYTES, &k->bytes));
    CFG_TRY(measurement(r, COL_GBPS, 1e9, CFG_UNIT_BANDWIDTH, k));
    if (k->seconds > 0.0 && !(k->bytes > 0.0))
        return missing(r, COL_BYTES, "a time needs the bytes moved");
    return COMET_OK;
}

static comet_status push_row(comet_kernel_rows *out, const comet_kernel_row *k, comet_error *err)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 64;
        comet_kernel_row *p = realloc(out->rows, cap * sizeof *p);
        if (!p)
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        out->rows = p;
        out->cap = cap;
    }
    out->rows[out->n++] = *k;
    return COMET_OK;
}

/* The header: every field a known column, once; kind and a measurement. */
static comet_status read_header(const char *file, int line, const field *f, int n,
                                int columns[MAX_FIELDS], comet_error *err)
{
    bool seen[COL_COUNT] = {false};
    for (int i = 0; i < n; i++) {
        int c = vocab_name_index(col_names, f[i].text);
        if (c < 0) {
            const char *near = cfg_suggest(f[i].text, col_names);
            char list[200];
            cfg_join(list, sizeof list, col_names);
            if (near)
                return comet_error_set(err, COMET_EINPUT, file, line, f[i].column, NULL,
                                       "unknown column \"%s\" (did you mean \"%s\"?)",
                                       f[i].text, near);
            return comet_error_set(err, COMET_EINPUT, file, line, f[i].column, NULL,
                                   "unknown column \"%s\" (columns: %s)", f[i].text, list);
        }
        if (seen[c])
            return comet_error_set(err, COMET_EINPUT, file, line, f[i].column, NULL,
                                   "column \"%s\" given twice", f[i].text);
        seen[c] = true;
        columns[i] = c;
    }
    if (!seen[COL_KIND])
        return comet_error_set(err, COMET_EINPUT, file, line, 1, NULL,
                               "the header has no \"kind\" column (the first line that is "
                               "not a comment names the columns)");
    if (!seen[COL_SECONDS] && !seen[COL_TFLOPS] && !seen[COL_GBPS])
        return comet_error_set(err, COMET_EINPUT, file, line, 1, NULL,
                               "the header has no measurement column (seconds, tflops or "
                               "gbps)");
    return COMET_OK;
}

static comet_status read_kernel_line(const char *file, int line, const field *f, int n,
                                     const int columns[MAX_FIELDS], int n_columns, int line_end,
                                     comet_kernel_rows *out, comet_error *err)
{
    csv_row r = {.file = file, .line = line, .line_end = line_end, .err = err};
    if (n > n_columns)
        return comet_error_set(err, COMET_EINPUT, file, line, f[n_columns].column, NULL,
                               "%d fields, the header names %d columns", n, n_columns);
    for (int i = 0; i < n; i++) {
        r.pos[columns[i]] = f[i].column;
        if (f[i].text[0])
            r.at[columns[i]] = &f[i];
    }
    if (!r.at[COL_KIND])
        return missing(&r, COL_KIND, "gemm, attention or memory");
    comet_kernel_row k;
    memset(&k, 0, sizeof k);
    k.line = line;
    k.dtype = COMET_DTYPE_BF16;
    int kind = 0;
    CFG_TRY(name_in(&r, COL_KIND, kind_names, &kind));
    k.kind = (comet_kernel_kind)kind;
    for (int c = 0; c < COL_COUNT; c++)
        if (r.at[c] && !(kind_columns[kind] & BIT(c)))
            return row_fail(&r, (col)c, "not used by %s rows%s", kind_names[kind], "");
    if (r.at[COL_DTYPE]) {
        int dt = 0;
        CFG_TRY(name_in(&r, COL_DTYPE, vocab_dtype_names, &dt));
        k.dtype = (comet_dtype)dt;
    }
    comet_status st = kind == COMET_KERNEL_GEMM        ? read_gemm(&r, &k)
                      : kind == COMET_KERNEL_ATTENTION ? read_attention(&r, &k)
                                                       : read_memory(&r, &k);
    if (st)
        return st;
    if (out->n >= MAX_ROWS)
        return comet_error_set(err, COMET_EINPUT, file, line, 0, NULL,
                               "more than %d rows; comet's limit", MAX_ROWS);
    return push_row(out, &k, err);
}

/* The first character that is not a blank: '#' starts a comment. */
static bool is_comment_or_blank(const char *line, size_t n)
{
    size_t i = 0;
    while (i < n && is_blank(line[i]))
        i++;
    return i == n || line[i] == '#';
}

comet_status comet_kernels_read_text(const char *text, size_t len, const char *filename,
                                     comet_kernel_rows *out, comet_error *err)
{
    const char *file = filename ? filename : "<kernels>";
    snprintf(out->file, sizeof out->file, "%s", file);
    int columns[MAX_FIELDS], n_columns = 0;
    size_t at = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0; /* a UTF-8 BOM */
    const char *line;
    size_t n;
    field f[MAX_FIELDS];
    for (int lineno = 1; next_line(text, len, &at, &line, &n); lineno++) {
        if (is_comment_or_blank(line, n))
            continue;
        if (n > LINE_MAX_LEN)
            return comet_error_set(err, COMET_EINPUT, file, lineno, 0, NULL,
                                   "line longer than %d characters", LINE_MAX_LEN);
        if (memchr(line, '\0', n))
            return comet_error_set(err, COMET_EINPUT, file, lineno, 0, NULL,
                                   "a NUL byte: not a text file");
        int k = split(line, n, ',', f);
        if (k < 0)
            return comet_error_set(err, COMET_EINPUT, file, lineno, 0, NULL,
                                   "more than %d fields", MAX_FIELDS);
        if (!n_columns) {
            CFG_TRY(read_header(file, lineno, f, k, columns, err));
            n_columns = k;
            continue;
        }
        CFG_TRY(read_kernel_line(file, lineno, f, k, columns, n_columns, (int)n + 1, out, err));
    }
    if (!out->n)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               n_columns ? "no measurement rows after the header"
                                         : "no header and no rows (see docs/calibrate.md)");
    return COMET_OK;
}

comet_status comet_kernels_read_file(const char *path, comet_kernel_rows *out, comet_error *err)
{
    char *text = NULL;
    size_t len = 0;
    CFG_TRY(cfg_load_file(path, &text, &len, err));
    comet_status st = comet_kernels_read_text(text, len, path, out, err);
    free(text);
    return st;
}

void comet_kernel_rows_free(comet_kernel_rows *rows)
{
    if (!rows)
        return;
    free(rows->rows);
    rows->rows = NULL;
    rows->n = rows->cap = 0;
}

/* ---- nccl-tests output ------------------------------------------------------- */

/* nccl-tests' binaries and the collectives comet prices. */
static const struct {
    const char *binary;
    comet_collective collective;
} nccl_binaries[] = {
    {"all_reduce_perf", COMET_COLL_ALL_REDUCE},
    {"all_gather_perf", COMET_COLL_ALL_GATHER},
    {"reduce_scatter_perf", COMET_COLL_REDUCE_SCATTER},
    {"alltoall_perf", COMET_COLL_ALL_TO_ALL},
};
static const char *const unpriced_binaries[] = {"broadcast_perf", "reduce_perf", "sendrecv_perf",
                                                "scatter_perf",   "gather_perf", "hypercube_perf",
                                                NULL};

/* The collective a word names when it ends in an nccl-tests binary's name
 * ("./build/all_reduce_perf"): 1 found (*out set), -1 a binary comet does
 * not price, 0 none. */
static int binary_collective(const char *word, comet_collective *out)
{
    const char *base = strrchr(word, '/');
    base = base ? base + 1 : word;
    for (size_t i = 0; i < sizeof nccl_binaries / sizeof nccl_binaries[0]; i++)
        if (strcmp(base, nccl_binaries[i].binary) == 0) {
            *out = nccl_binaries[i].collective;
            return 1;
        }
    return vocab_name_index(unpriced_binaries, base) >= 0 ? -1 : 0;
}

/* Where the columns a row is read by stand, from the header line. */
typedef struct nccl_layout {
    int size, time_out, time_in;   /* field indexes; time_in -1: none */
    int fields;
} nccl_layout;

/* nccl-tests 2.x: size count type redop root time algbw busbw #wrong (twice) */
static const nccl_layout default_layout = {0, 5, 9, 13};

static bool is_unsigned(const char *t)
{
    if (!*t)
        return false;
    for (; *t; t++)
        if (*t < '0' || *t > '9')
            return false;
    return true;
}

static comet_status new_series(comet_nccl_runs *out, const char *file, int line,
                               comet_collective forced, comet_error *err)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 4;
        comet_nccl_series *p = realloc(out->series, cap * sizeof *p);
        if (!p)
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        out->series = p;
        out->cap = cap;
    }
    comet_nccl_series *s = &out->series[out->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->file, sizeof s->file, "%s", file);
    s->line = line;
    s->collective = forced;
    return COMET_OK;
}

static comet_status push_nccl_row(comet_nccl_series *s, const comet_nccl_row *row,
                                  comet_error *err)
{
    if (s->n >= MAX_ROWS)
        return comet_error_set(err, COMET_EINPUT, s->file, row->line, 0, NULL,
                               "more than %d rows; comet's limit", MAX_ROWS);
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        comet_nccl_row *p = realloc(s->rows, cap * sizeof *p);
        if (!p)
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        s->rows = p;
        s->cap = cap;
    }
    s->rows[s->n++] = *row;
    return COMET_OK;
}

/* A comment line: the start of a run, a rank, the column header. */
static comet_status nccl_comment(const char *file, int line, const field *f, int n,
                                 comet_collective forced, comet_nccl_runs *out,
                                 nccl_layout *layout, comet_error *err)
{
    /* "# Collective test starting: all_reduce_perf" */
    if (n >= 5 && strcmp(f[1].text, "Collective") == 0 && strcmp(f[2].text, "test") == 0 &&
        strcmp(f[3].text, "starting:") == 0) {
        comet_collective c = COMET_COLL_NONE;
        int found = binary_collective(f[4].text, &c);
        if (found < 0 && forced == COMET_COLL_NONE)
            return comet_error_set(err, COMET_EINPUT, file, line, f[4].column, NULL,
                                   "%s: comet prices all_reduce, all_gather, reduce_scatter "
                                   "and all_to_all (alltoall_perf)",
                                   f[4].text);
        comet_nccl_series *cur = out->n ? &out->series[out->n - 1] : NULL;
        if (!cur || cur->n || cur->collective != COMET_COLL_NONE)
            CFG_TRY(new_series(out, file, line, forced, err));
        cur = &out->series[out->n - 1];
        if (forced == COMET_COLL_NONE && found > 0)
            cur->collective = c;
        return COMET_OK;
    }
    /* "#  Rank  3 Group  0 Pid ..." */
    double rank;
    if (n >= 3 && strcmp(f[1].text, "Rank") == 0 && parse_number(f[2].text, &rank) && out->n) {
        comet_nccl_series *cur = &out->series[out->n - 1];
        if (rank + 1.0 > (double)cur->ranks && rank < 1e9)
            cur->ranks = (int64_t)rank + 1;
        return COMET_OK;
    }
    /* "#       size         count      type   redop    root     time ..." */
    int size = -1, t1 = -1, t2 = -1;
    for (int i = 1; i < n; i++) {
        if (strcmp(f[i].text, "size") == 0 && size < 0)
            size = i - 1;
        else if (strcmp(f[i].text, "time") == 0 && t1 < 0)
            t1 = i - 1;
        else if (strcmp(f[i].text, "time") == 0 && t2 < 0)
            t2 = i - 1;
    }
    if (size >= 0 && t1 > size)
        *layout = (nccl_layout){size, t1, t2, n - 1};
    return COMET_OK;
}

/* A time field in microseconds: the seconds, or 0 when it is no number. */
static double micros(const field *f)
{
    double v;
    return parse_number(f->text, &v) && v > 0.0 && v < 1e12 ? v * 1e-6 : 0.0;
}

static comet_status nccl_row(const char *file, int line, const field *f, int n,
                             const nccl_layout *layout, comet_nccl_runs *out, comet_error *err)
{
    if (n <= layout->time_out || n <= layout->size)
        return comet_error_set(err, COMET_EINPUT, file, line, f[n - 1].column, NULL,
                               "a result row with %d fields; the column header has %d", n,
                               layout->fields);
    const field *size = &f[layout->size];
    double bytes;
    if (!is_unsigned(size->text) || !parse_number(size->text, &bytes) || bytes > 1e18)
        return comet_error_set(err, COMET_EINPUT, file, line, size->column, "column 'size'",
                               "expected a size in bytes, got \"%s\"", size->text);
    if (bytes == 0.0)
        return COMET_OK; /* nccl-tests prints sizes below one element per rank as 0 */
    double t_out = micros(&f[layout->time_out]);
    double t_in = layout->time_in >= 0 && layout->time_in < n ? micros(&f[layout->time_in]) : 0.0;
    if (!(t_out > 0.0) && !(t_in > 0.0))
        return comet_error_set(err, COMET_EINPUT, file, line, f[layout->time_out].column,
                               "column 'time'", "expected a time in us, got \"%s\"",
                               f[layout->time_out].text);
    comet_nccl_row row = {.line = line,
                          .bytes = bytes,
                          .seconds = t_out > 0.0 && t_in > 0.0 ? 0.5 * (t_out + t_in)
                                                               : (t_out > 0.0 ? t_out : t_in)};
    return push_nccl_row(&out->series[out->n - 1], &row, err);
}

comet_status comet_nccl_read_text(const char *text, size_t len, const char *filename,
                                  comet_collective collective, comet_nccl_runs *out,
                                  comet_error *err)
{
    const char *file = filename ? filename : "<nccl-tests>";
    if (collective < COMET_COLL_NONE || collective >= COMET_COLL_SYMMETRIC)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, "collective",
                               "measured runs are of all-reduce, reduce-scatter, all-gather or "
                               "all-to-all, got %s",
                               comet_collective_name(collective));
    size_t first = out->n;
    nccl_layout layout = default_layout;
    size_t at = 0;
    const char *line;
    size_t n;
    field f[MAX_FIELDS + 1]; /* f[0] the comment mark, then the fields */
    CFG_TRY(new_series(out, file, 1, collective, err));
    for (int lineno = 1; next_line(text, len, &at, &line, &n); lineno++) {
        if (n > LINE_MAX_LEN || memchr(line, '\0', n))
            continue; /* not nccl-tests' own text */
        size_t i = 0;
        while (i < n && is_blank(line[i]))
            i++;
        bool comment = i < n && line[i] == '#';
        /* "#wrong" is one column name; a lone '#' starts the line */
        int k = split(line + i + comment, n - i - comment, 0, f + 1);
        if (k < 0)
            k = MAX_FIELDS; /* the first MAX_FIELDS fields of a longer line */
        for (int j = 1; j <= k; j++)
            f[j].column += (int)(i + comment);
        if (comment) {
            strcpy(f[0].text, "#");
            CFG_TRY(nccl_comment(file, lineno, f, k + 1, collective, out, &layout, err));
            continue;
        }
        if (k > 0 && is_unsigned(f[1].text)) {
            CFG_TRY(nccl_row(file, lineno, f + 1, k, &layout, out, err));
            continue;
        }
        /* other text: a command line may name the binary */
        comet_nccl_series *cur = &out->series[out->n - 1];
        for (int j = 1; j <= k && cur->collective == COMET_COLL_NONE && !cur->n; j++) {
            comet_collective c;
            if (binary_collective(f[j].text, &c) > 0)
                cur->collective = c;
        }
    }
    /* a run header with nothing after it (the first, empty series) */
    for (size_t s = first; s < out->n; s++) {
        comet_nccl_series *cur = &out->series[s];
        if (!cur->n && out->n - first > 1) {
            free(cur->rows);
            memmove(cur, cur + 1, (out->n - s - 1) * sizeof *cur);
            out->n--;
            s--;
            continue;
        }
        if (!cur->n)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "no result rows (is this what an nccl-tests binary printed?)");
        if (cur->collective == COMET_COLL_NONE)
            return comet_error_set(err, COMET_EINPUT, file, cur->line, 0, NULL,
                                   "cannot tell the collective (no \"# Collective test "
                                   "starting:\" line); name it with --nccl-collective");
    }
    return COMET_OK;
}

comet_status comet_nccl_read_file(const char *path, comet_collective collective,
                                  comet_nccl_runs *out, comet_error *err)
{
    char *text = NULL;
    size_t len = 0;
    CFG_TRY(cfg_load_file(path, &text, &len, err));
    comet_status st = comet_nccl_read_text(text, len, path, collective, out, err);
    free(text);
    return st;
}

void comet_nccl_runs_free(comet_nccl_runs *runs)
{
    if (!runs)
        return;
    for (size_t i = 0; i < runs->n; i++)
        free(runs->series[i].rows);
    free(runs->series);
    runs->series = NULL;
    runs->n = runs->cap = 0;
}
