/* The `system:` section: accelerator compute (peaks per datatype and a
 * GEMM efficiency curve), memory tiers (HBM and an optional expansion tier)
 * and the network as a list of dimensions, innermost first, each with its
 * topology's shape keys checked against its size by the one shape check
 * the fabric applies (comet_net_shape_problem), so a network that reads
 * is a network that builds. Lists replace a preset's lists; mappings
 * merge into a preset's values. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "comet/network.h"
#include "../vocab/vocab.h"
#include "sections.h"

#define MAX_DIM_SIZE 16777216
#define MAX_NPUS (1LL << 30) /* as comet simulate --npus */
#define MAX_CHUNKS 1024
#define MAX_SHARED 65536

#define PEAK(k, dt)                                                                     \
    {.key = (k), .type = CFG_T_QTY, .offset = (dt) * sizeof(double),                    \
     .size = sizeof(double), .nonneg = true, .unit = CFG_UNIT_FLOP_RATE}

/* Keys of a double[COMET_DTYPE_COUNT] of peaks. */
static const cfg_field peak_fields[] = {
    PEAK("fp32", COMET_DTYPE_FP32), PEAK("tf32", COMET_DTYPE_TF32),
    PEAK("fp16", COMET_DTYPE_FP16), PEAK("bf16", COMET_DTYPE_BF16),
    PEAK("fp8", COMET_DTYPE_FP8),   CFG_END,
};

static const cfg_field point_fields[] = {
    CFG_QTY("size", comet_eff_point, flops, CFG_UNIT_FLOPS),
    CFG_FRACTION("efficiency", comet_eff_point, efficiency),
    CFG_END,
};

/* The points of a curve: two positive numbers each, a size and a value,
 * stored as a struct of two doubles, with sizes increasing. */
typedef struct curve_kind {
    const cfg_field *fields; /* "size" and value_key */
    const char *value_key;
    const char *unit;        /* the size's, for the error */
} curve_kind;

_Static_assert(sizeof(comet_eff_point) == 2 * sizeof(double) &&
                   offsetof(comet_eff_point, efficiency) == sizeof(double),
               "a GEMM efficiency point is (size, value)");
_Static_assert(sizeof(comet_bus_point) == 2 * sizeof(double) &&
                   offsetof(comet_bus_point, busbw) == sizeof(double),
               "a bus-bandwidth point is (size, value)");

static comet_status read_curve_point(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                                     double (*points)[2], const curve_kind *k)
{
    double *p = points[i];
    p[0] = p[1] = 0.0;
    CFG_TRY(cfg_fields_read(c, n, path, k->fields, p));
    if (p[0] <= 0)
        return cfg_missing(c, path, "size");
    if (p[1] <= 0)
        return cfg_missing(c, path, k->value_key);
    if (i == 0 || p[0] > points[i - 1][0])
        return COMET_OK;
    char key[CFG_PATH_LEN];
    cfg_path_key(key, sizeof key, path, "size");
    return cfg_fail_key(c, key, "sizes must increase (the point before has %g %s)",
                        points[i - 1][0], k->unit);
}

static const curve_kind gemm_curve = {point_fields, "efficiency", "FLOP"};

static comet_status read_point(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                               void *out)
{
    return read_curve_point(c, n, path, i, out, &gemm_curve);
}

static comet_status read_gemm_curve(cfg_ctx *c, const cfg_node *n, const char *path,
                                    void *base)
{
    comet_compute *cc = base;
    return cfg_list_read(c, n, path, COMET_MAX_EFF_POINTS, read_point, cc->gemm_eff,
                         &cc->n_gemm_eff);
}

static void write_gemm_curve(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_compute *cc = base;
    cfg_write_list(b, indent, key, point_fields, cc->gemm_eff, sizeof cc->gemm_eff[0],
                   cc->n_gemm_eff, true);
}

static const cfg_field attn_point_fields[] = {
    CFG_REAL("seq", comet_attn_point, seq),
    CFG_REAL("head_dim", comet_attn_point, head_dim),
    CFG_FRACTION("forward", comet_attn_point, forward),
    CFG_FRACTION("forward_backward", comet_attn_point, forward_backward),
    CFG_FRACTION("causal_forward", comet_attn_point, causal_forward),
    CFG_FRACTION("causal_forward_backward", comet_attn_point, causal_forward_backward),
    CFG_END,
};

/* One shape of the fused-attention curve: every non-causal key given,
 * positive (the causal pair is optional, each defaulting to its non-causal
 * value), and the points in increasing head_dim, then increasing seq
 * within a head_dim (a kernel takes the points of the nearest head_dim,
 * interpolated over seq). */
static comet_status read_attn_point(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                                    void *out)
{
    comet_attn_point *p = (comet_attn_point *)out + i;
    memset(p, 0, sizeof *p);
    CFG_TRY(cfg_fields_read(c, n, path, attn_point_fields, p));
    static const char *const keys[] = {"seq", "head_dim", "forward", "forward_backward"};
    const double vals[] = {p->seq, p->head_dim, p->forward, p->forward_backward};
    for (int k = 0; k < 4; k++)
        if (!(vals[k] > 0.0))
            return cfg_missing(c, path, keys[k]);
    if (i == 0)
        return COMET_OK;
    const comet_attn_point *q = p - 1;
    char key[CFG_PATH_LEN];
    if (p->head_dim < q->head_dim) {
        cfg_path_key(key, sizeof key, path, "head_dim");
        return cfg_fail_key(c, key,
                            "points must come in increasing head_dim (the point before has %g)",
                            q->head_dim);
    }
    if (p->head_dim == q->head_dim && p->seq <= q->seq) {
        cfg_path_key(key, sizeof key, path, "seq");
        return cfg_fail_key(c, key,
                            "points of one head_dim must increase in seq (the point before has "
                            "%g)",
                            q->seq);
    }
    return COMET_OK;
}

static comet_status read_attn_curve(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_compute *cc = base;
    return cfg_list_read(c, n, path, COMET_MAX_ATTN_POINTS, read_attn_point, cc->attn_eff,
                         &cc->n_attn_eff);
}

static void write_attn_curve(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_compute *cc = base;
    cfg_write_list(b, indent, key, attn_point_fields, cc->attn_eff, sizeof cc->attn_eff[0],
                   cc->n_attn_eff, true);
}

/* attention_kernels.NAME: another kernel's curve, read as the main one. */
static comet_status read_alt_curve(cfg_ctx *c, const cfg_node *n, const char *path,
                                   comet_compute *cc, comet_attn_kernel k)
{
    CFG_TRY(cfg_list_read(c, n, path, COMET_MAX_ATTN_POINTS, read_attn_point, cc->attn_alt[k],
                          &cc->n_attn_alt[k]));
    if (cc->n_attn_alt[k] == 0)
        return cfg_fail(c, n, path, "needs at least one point");
    return COMET_OK;
}

#define ATTN_KERNEL_CURVE(fn, write_fn, kernel)                                            \
    static comet_status fn(cfg_ctx *c, const cfg_node *n, const char *path, void *base)   \
    {                                                                                     \
        return read_alt_curve(c, n, path, base, kernel);                                  \
    }                                                                                     \
    static void write_fn(comet_buf *b, int indent, const char *key, const void *base)     \
    {                                                                                     \
        const comet_compute *cc = base;                                                   \
        cfg_write_list(b, indent, key, attn_point_fields, cc->attn_alt[kernel],           \
                       sizeof cc->attn_alt[kernel][0], cc->n_attn_alt[kernel], true);      \
    }
ATTN_KERNEL_CURVE(read_attn_cudnn, write_attn_cudnn, COMET_ATTN_CUDNN)
ATTN_KERNEL_CURVE(read_attn_flash2, write_attn_flash2, COMET_ATTN_FLASH2)
ATTN_KERNEL_CURVE(read_attn_flash3, write_attn_flash3, COMET_ATTN_FLASH3)

static const cfg_field attn_kernel_fields[] = {
    CFG_CUSTOM_RW("cudnn", read_attn_cudnn, write_attn_cudnn),
    CFG_CUSTOM_RW("flash2", read_attn_flash2, write_attn_flash2),
    CFG_CUSTOM_RW("flash3", read_attn_flash3, write_attn_flash3),
    CFG_END,
};

/* A count of elements a GEMM term stands for, 0 (off) to 1e9. */
static comet_status read_elements(cfg_ctx *c, const cfg_node *n, const char *path, double *v)
{
    CFG_TRY(cfg_read_real(c, n, path, false, v));
    if (!(*v >= 0.0) || *v > 1e9)
        return cfg_fail_key(c, path, "must be between 0 and 1e9 elements, got %g", *v);
    return COMET_OK;
}

static comet_status read_k_overhead(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    return read_elements(c, n, path, &((comet_compute *)base)->gemm_k_overhead);
}

/* A share from 0 to 1, 0 allowed (the key's default). */
static comet_status read_share(cfg_ctx *c, const cfg_node *n, const char *path, double *v)
{
    CFG_TRY(cfg_read_real(c, n, path, false, v));
    if (!(*v >= 0.0 && *v <= 1.0))
        return cfg_fail_key(c, path, "must be a share from 0 to 1, got %g", *v);
    return COMET_OK;
}

/* compute.overlap_slowdown: a share of compute throughput, 0 (free) to 1
 * (an overlapped collective costs as much as an exposed one). */
static comet_status read_overlap_slowdown(cfg_ctx *c, const cfg_node *n, const char *path,
                                          void *base)
{
    return read_share(c, n, path, &((comet_compute *)base)->overlap_slowdown);
}

/* compute.efficiency_spread: the relative 1-sigma spread of the measured
 * kernel rates about the efficiencies (include/comet/band.h). */
static comet_status read_efficiency_spread(cfg_ctx *c, const cfg_node *n, const char *path,
                                           void *base)
{
    return read_share(c, n, path, &((comet_compute *)base)->efficiency_spread);
}

/* compute.framework_efficiency: a factor on every kernel rate, above 0 and
 * at most 2 (a framework can run kernels faster than comet's kernel rows
 * say, not without bound). */
static comet_status read_framework_efficiency(cfg_ctx *c, const cfg_node *n, const char *path,
                                              void *base)
{
    double *v = &((comet_compute *)base)->framework_efficiency;
    CFG_TRY(cfg_read_real(c, n, path, false, v));
    if (!(*v > 0.0 && *v <= 2.0))
        return cfg_fail_key(c, path, "must be above 0 and at most 2, got %g", *v);
    return COMET_OK;
}

/* A plain number key, written only when set (0 is its default). */
static void write_positive(comet_buf *b, int indent, const char *key, double v)
{
    char num[40];
    if (v > 0.0)
        comet_buf_printf(b, "%*s%s: %s\n", indent, "", key, cfg_format_number(v, num, sizeof num));
}

static void write_overlap_slowdown(comet_buf *b, int indent, const char *key, const void *base)
{
    write_positive(b, indent, key, ((const comet_compute *)base)->overlap_slowdown);
}

static void write_efficiency_spread(comet_buf *b, int indent, const char *key, const void *base)
{
    write_positive(b, indent, key, ((const comet_compute *)base)->efficiency_spread);
}

static void write_framework_efficiency(comet_buf *b, int indent, const char *key,
                                       const void *base)
{
    write_positive(b, indent, key, ((const comet_compute *)base)->framework_efficiency);
}

/* compute.grouped_gemm_m0: elements, as gemm_k_overhead. */
static comet_status read_grouped_m0(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    return read_elements(c, n, path, &((comet_compute *)base)->grouped_gemm_m0);
}

static void write_grouped_m0(comet_buf *b, int indent, const char *key, const void *base)
{
    write_positive(b, indent, key, ((const comet_compute *)base)->grouped_gemm_m0);
}

static void write_k_overhead(comet_buf *b, int indent, const char *key, const void *base)
{
    write_positive(b, indent, key, ((const comet_compute *)base)->gemm_k_overhead);
}

#define MEM_KIND(k, kind)                                                               \
    {.key = (k), .type = CFG_T_FRACTION, .offset = (kind) * sizeof(double),            \
     .size = sizeof(double)}

/* Keys of a double[COMET_MEMK_COUNT] of HBM efficiencies per kernel kind. */
static const cfg_field mem_kind_fields[] = {
    MEM_KIND("elementwise", COMET_MEMK_ELEMENTWISE), MEM_KIND("norm", COMET_MEMK_NORM),
    MEM_KIND("activation", COMET_MEMK_ACTIVATION),   MEM_KIND("softmax", COMET_MEMK_SOFTMAX),
    MEM_KIND("rope", COMET_MEMK_ROPE),               MEM_KIND("cast", COMET_MEMK_CAST),
    MEM_KIND("optimizer", COMET_MEMK_OPTIMIZER),     MEM_KIND("batchnorm", COMET_MEMK_BATCHNORM),
    MEM_KIND("pool", COMET_MEMK_POOL),               CFG_END,
};

static const cfg_field compute_fields[] = {
    CFG_SUB("matrix", comet_compute, matrix_flops, peak_fields),
    CFG_SUB("vector", comet_compute, vector_flops, peak_fields),
    CFG_CUSTOM_RW("gemm_efficiency", read_gemm_curve, write_gemm_curve),
    CFG_CUSTOM_RW("gemm_k_overhead", read_k_overhead, write_k_overhead),
    CFG_CUSTOM_RW("grouped_gemm_m0", read_grouped_m0, write_grouped_m0),
    CFG_FRACTION("fp8_gemm_efficiency", comet_compute, fp8_gemm_efficiency),
    CFG_FRACTION("vector_efficiency", comet_compute, vector_efficiency),
    CFG_QTY0("kernel_launch", comet_compute, kernel_launch, CFG_UNIT_TIME),
    CFG_QTY0("kernel_issue", comet_compute, kernel_issue, CFG_UNIT_TIME),
    CFG_CUSTOM_RW("attention_efficiency", read_attn_curve, write_attn_curve),
    CFG_ENUM("attention_kernel", comet_compute, attn_kernel, vocab_attn_kernel_names),
    CFG_GROUP("attention_kernels", attn_kernel_fields),
    CFG_SUB("memory_efficiency", comet_compute, mem_efficiency, mem_kind_fields),
    CFG_CUSTOM_RW("overlap_slowdown", read_overlap_slowdown, write_overlap_slowdown),
    CFG_CUSTOM_RW("efficiency_spread", read_efficiency_spread, write_efficiency_spread),
    CFG_CUSTOM_RW("framework_efficiency", read_framework_efficiency, write_framework_efficiency),
    CFG_END,
};

static const cfg_field hbm_fields[] = {
    CFG_QTY("capacity", comet_mem_tier, capacity, CFG_UNIT_BYTES),
    CFG_QTY("bandwidth", comet_mem_tier, bandwidth, CFG_UNIT_BANDWIDTH),
    CFG_FRACTION("efficiency", comet_mem_tier, efficiency),
    CFG_QTY0("latency", comet_mem_tier, latency, CFG_UNIT_TIME),
    CFG_END,
};

static const cfg_field expansion_fields[] = {
    CFG_QTY("capacity", comet_mem_tier, capacity, CFG_UNIT_BYTES),
    CFG_QTY("bandwidth", comet_mem_tier, bandwidth, CFG_UNIT_BANDWIDTH),
    CFG_FRACTION("efficiency", comet_mem_tier, efficiency),
    CFG_QTY0("latency", comet_mem_tier, latency, CFG_UNIT_TIME),
    CFG_ENUM("attach", comet_mem_tier, attach, vocab_attach_names),
    CFG_INT("shared_by", comet_mem_tier, shared_by, 1, MAX_SHARED),
    CFG_END,
};

static void tier_defaults(comet_mem_tier *t)
{
    memset(t, 0, sizeof *t);
    t->efficiency = 1.0;
    t->attach = COMET_ATTACH_PER_NPU;
    t->shared_by = 0; /* per_node: the NPUs of a node (innermost dimension) */
}

/* `expansion: none` (or null) removes a preset's expansion tier. */
static comet_status read_expansion(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_mem_tier *t = &((comet_system *)base)->expansion;
    if (cfg_is_null(n) || (n->kind == CFG_SCALAR && strcmp(n->text, "none") == 0)) {
        tier_defaults(t);
        return COMET_OK;
    }
    if (!t->present)
        tier_defaults(t);
    t->present = true;
    return cfg_fields_read(c, n, path, expansion_fields, t);
}

static void write_expansion(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_mem_tier *t = &((const comet_system *)base)->expansion;
    if (!t->present)
        return;
    comet_buf_printf(b, "%*s%s:\n", indent, "", key);
    cfg_fields_write(b, indent + 2, expansion_fields, t);
}

/* size: a count, or "auto" (stored as 0) for as many as needed. */
static comet_status read_dim_size(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_net_dim *d = base;
    if (n->kind == CFG_SCALAR && strcmp(n->text, "auto") == 0) {
        d->size = 0;
        return COMET_OK;
    }
    return cfg_read_int(c, n, path, 0, MAX_DIM_SIZE, &d->size);
}

static void write_dim_size(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_net_dim *d = base;
    if (d->size == 0)
        comet_buf_printf(b, "%*s%s: auto\n", indent, "", key);
    else
        comet_buf_printf(b, "%*s%s: %lld\n", indent, "", key, (long long)d->size);
}

static const cfg_field bus_point_fields[] = {
    CFG_QTY("size", comet_bus_point, bytes, CFG_UNIT_BYTES),
    CFG_QTY("bandwidth", comet_bus_point, busbw, CFG_UNIT_BANDWIDTH),
    CFG_END,
};

/* One row of a measured curve: size and bus bandwidth. */
static const curve_kind bus_curve = {bus_point_fields, "bandwidth", "B"};

static comet_status read_bus_point(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                                   void *out)
{
    return read_curve_point(c, n, path, i, out, &bus_curve);
}

static comet_status read_bus_curve(cfg_ctx *c, const cfg_node *n, const char *path,
                                   comet_bus_curves *bus, comet_collective coll)
{
    comet_bus_curve *cv = &bus->curve[coll];
    CFG_TRY(cfg_list_read(c, n, path, COMET_MAX_BUS_POINTS, read_bus_point, cv->points,
                          &cv->n_points));
    if (cv->n_points == 0)
        return cfg_fail(c, n, path, "needs at least one point");
    return COMET_OK;
}

static void write_bus_curve(comet_buf *b, int indent, const char *key,
                            const comet_bus_curves *bus, comet_collective coll)
{
    const comet_bus_curve *cv = &bus->curve[coll];
    cfg_write_list(b, indent, key, bus_point_fields, cv->points, sizeof cv->points[0],
                   cv->n_points, true);
}

#define BUS_CURVE_READER(fn, write_fn, coll)                                              \
    static comet_status fn(cfg_ctx *c, const cfg_node *n, const char *path, void *base)   \
    {                                                                                     \
        return read_bus_curve(c, n, path, base, coll);                                    \
    }                                                                                     \
    static void write_fn(comet_buf *b, int indent, const char *key, const void *base)     \
    {                                                                                     \
        write_bus_curve(b, indent, key, base, coll);                                      \
    }
BUS_CURVE_READER(read_bus_all_reduce, write_bus_all_reduce, COMET_COLL_ALL_REDUCE)
BUS_CURVE_READER(read_bus_reduce_scatter, write_bus_reduce_scatter, COMET_COLL_REDUCE_SCATTER)
BUS_CURVE_READER(read_bus_all_gather, write_bus_all_gather, COMET_COLL_ALL_GATHER)
BUS_CURVE_READER(read_bus_all_to_all, write_bus_all_to_all, COMET_COLL_ALL_TO_ALL)

static const cfg_field bus_fields[] = {
    CFG_INT("npus", comet_bus_curves, npus, 2, MAX_DIM_SIZE),
    CFG_CUSTOM_RW("all_reduce", read_bus_all_reduce, write_bus_all_reduce),
    CFG_CUSTOM_RW("reduce_scatter", read_bus_reduce_scatter, write_bus_reduce_scatter),
    CFG_CUSTOM_RW("all_gather", read_bus_all_gather, write_bus_all_gather),
    CFG_CUSTOM_RW("all_to_all", read_bus_all_to_all, write_bus_all_to_all),
    CFG_END,
};

/* bus_bandwidth only when the dimension has a curve (npus alone is refused). */
static void write_bus(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_net_dim *d = base;
    if (d->bus.n_curves <= 0)
        return;
    comet_buf_printf(b, "%*s%s:\n", indent, "", key);
    cfg_fields_write(b, indent + 2, bus_fields, &d->bus);
}

/* bus_bandwidth: the measured curves; npus defaults to the dimension's
 * size, and must be given when that is auto. */
static comet_status check_bus(cfg_ctx *c, const char *path, comet_net_dim *d)
{
    comet_bus_curves *bus = &d->bus;
    bus->n_curves = 0;
    for (int k = 0; k < COMET_COLL_SYMMETRIC; k++)
        bus->n_curves += bus->curve[k].n_points > 0;
    if (bus->n_curves == 0 && bus->npus == 0)
        return COMET_OK;
    char key[CFG_PATH_LEN];
    cfg_path_key(key, sizeof key, path, "bus_bandwidth");
    if (bus->n_curves == 0)
        return cfg_fail_key(c, key, "needs a curve (all_reduce, reduce_scatter, all_gather "
                                    "or all_to_all)");
    if (bus->npus == 0 && d->size < 2)
        return cfg_missing(c, key, "npus");
    if (bus->npus == 0)
        bus->npus = d->size;
    return COMET_OK;
}

/* `key: [a, b]` from n numbers, each in its shortest exact decimal. */
static void write_numbers(comet_buf *b, int indent, const char *key, const double *v, int n)
{
    char num[40];
    comet_buf_printf(b, "%*s%s: [", indent, "", key);
    for (int i = 0; i < n; i++)
        comet_buf_printf(b, "%s%s", i ? ", " : "", cfg_format_number(v[i], num, sizeof num));
    comet_buf_printf(b, "]\n");
}

static comet_status read_axis(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                              void *out)
{
    return cfg_read_int(c, n, path, 2, MAX_DIM_SIZE, (int64_t *)out + i);
}

/* shape: a torus's or mesh's axes, 1 to 3 of at least 2 NPUs each (that
 * they multiply to the size is the shape check's, in read_network). */
comet_status cfg_read_dim_shape(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_net_shape *sh = &((comet_net_dim *)base)->shape;
    memset(sh->axes, 0, sizeof sh->axes);
    sh->n_axes = 0;
    CFG_TRY(cfg_list_read(c, n, path, COMET_MAX_AXES, read_axis, sh->axes, &sh->n_axes));
    if (sh->n_axes == 0)
        return cfg_fail(c, n, path, "needs 1 to %d axes, e.g. [4, 4]", COMET_MAX_AXES);
    return COMET_OK;
}

static void write_dim_shape(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_net_shape *sh = &((const comet_net_dim *)base)->shape;
    int n = sh->n_axes < COMET_MAX_AXES ? sh->n_axes : COMET_MAX_AXES;
    double axes[COMET_MAX_AXES];
    for (int i = 0; i < n; i++)
        axes[i] = (double)sh->axes[i]; /* at most 2^24: exact */
    if (n > 0)
        write_numbers(b, indent, key, axes, n);
}

/* bidirectional: false makes a ring's links one way (shape.unidirectional). */
static comet_status read_bidirectional(cfg_ctx *c, const cfg_node *n, const char *path,
                                       void *base)
{
    bool both = true;
    CFG_TRY(cfg_read_bool(c, n, path, &both));
    ((comet_net_dim *)base)->shape.unidirectional = !both;
    return COMET_OK;
}

static void write_bidirectional(comet_buf *b, int indent, const char *key, const void *base)
{
    if (((const comet_net_dim *)base)->shape.unidirectional)
        comet_buf_printf(b, "%*s%s: false\n", indent, "", key);
}

static comet_status read_ratio(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                               void *out)
{
    return cfg_read_real(c, n, path, true, (double *)out + i);
}

/* oversubscription: the leaves' down:up ratio, or a list of it and the
 * aggregation tier's (3 tiers); which ratios a topology takes, and that
 * each is at least 1, is the shape check's. */
static comet_status read_oversubscription(cfg_ctx *c, const cfg_node *n, const char *path,
                                          void *base)
{
    double *o = ((comet_net_dim *)base)->shape.oversubscription;
    memset(o, 0, sizeof(double) * (COMET_MAX_TIERS - 1));
    if (n->kind != CFG_SEQ)
        return read_ratio(c, n, path, 0, o);
    int count = 0;
    CFG_TRY(cfg_list_read(c, n, path, COMET_MAX_TIERS - 1, read_ratio, o, &count));
    if (count == 0)
        return cfg_fail(c, n, path, "needs 1 or 2 ratios, e.g. [2, 1.5]");
    return COMET_OK;
}

/* One ratio as a number, two as a list; an unset first ratio beside a set
 * second is 1 (what 0 means), which the reader takes. */
static void write_oversubscription(comet_buf *b, int indent, const char *key, const void *base)
{
    const double *o = ((const comet_net_dim *)base)->shape.oversubscription;
    if (o[1] > 0.0) {
        double both[2] = {o[0] > 0.0 ? o[0] : 1.0, o[1]};
        write_numbers(b, indent, key, both, 2);
    } else {
        write_positive(b, indent, key, o[0]);
    }
}

/* routing only when not the default (ecmp). */
static void write_routing(comet_buf *b, int indent, const char *key, const void *base)
{
    comet_routing r = ((const comet_net_dim *)base)->shape.routing;
    if (r != COMET_ROUTE_ECMP)
        comet_buf_printf(b, "%*s%s: %s\n", indent, "", key, comet_routing_name(r));
}

/* congestion_control: a scheme's name, or a mapping of the scheme and
 * its parameters (docs/roce.md); zeros stay "the scheme's default". */
static const cfg_field cc_fields[] = {
    CFG_ENUM("scheme", comet_cc_params, scheme, vocab_cc_names),
    CFG_QTY("mtu", comet_cc_params, mtu, CFG_UNIT_BYTES),
    CFG_QTY("buffer", comet_cc_params, buffer, CFG_UNIT_BYTES),
    CFG_QTY("xoff", comet_cc_params, xoff, CFG_UNIT_BYTES),
    CFG_QTY("xon", comet_cc_params, xon, CFG_UNIT_BYTES),
    CFG_QTY("kmin", comet_cc_params, kmin, CFG_UNIT_BYTES),
    CFG_QTY("kmax", comet_cc_params, kmax, CFG_UNIT_BYTES),
    CFG_FRACTION("pmax", comet_cc_params, pmax),
    CFG_QTY("step", comet_cc_params, step, CFG_UNIT_TIME),
    CFG_QTY("max_time", comet_cc_params, max_time, CFG_UNIT_TIME),
    CFG_FRACTION("g", comet_cc_params, g),
    CFG_QTY("rai", comet_cc_params, rai, CFG_UNIT_BANDWIDTH),
    CFG_QTY("rate_timer", comet_cc_params, rate_timer, CFG_UNIT_TIME),
    CFG_QTY("byte_counter", comet_cc_params, byte_counter, CFG_UNIT_BYTES),
    CFG_QTY("alpha_timer", comet_cc_params, alpha_timer, CFG_UNIT_TIME),
    CFG_QTY("cnp_interval", comet_cc_params, cnp_interval, CFG_UNIT_TIME),
    CFG_REAL("fast_recovery", comet_cc_params, fast_recovery),
    CFG_QTY("min_rate", comet_cc_params, min_rate, CFG_UNIT_BANDWIDTH),
    CFG_FRACTION("eta", comet_cc_params, eta),
    CFG_REAL("max_stage", comet_cc_params, max_stage),
    CFG_QTY("wai", comet_cc_params, wai, CFG_UNIT_BYTES),
    CFG_END,
};

static comet_status read_cc(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_cc_params *p = &((comet_net_dim *)base)->cc;
    memset(p, 0, sizeof *p);
    if (n->kind == CFG_SCALAR) {
        int v = 0;
        CFG_TRY(cfg_read_enum(c, n, path, vocab_cc_names, &v));
        p->scheme = (comet_cc_scheme)v;
        return COMET_OK;
    }
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    p->scheme = COMET_CC_PFC;
    return cfg_fields_read(c, n, path, cc_fields, p);
}

/* The scheme's name alone when no parameter is set, else the mapping. */
static void write_cc(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_cc_params *p = &((const comet_net_dim *)base)->cc;
    if (p->scheme == COMET_CC_NONE)
        return;
    comet_cc_params bare = {.scheme = p->scheme};
    if (!memcmp(&bare, p, sizeof bare)) {
        comet_buf_printf(b, "%*s%s: %s\n", indent, "", key, comet_cc_scheme_name(p->scheme));
        return;
    }
    comet_buf_printf(b, "%*s%s:\n", indent, "", key);
    cfg_fields_write(b, indent + 2, cc_fields, p);
}

/* The parameters against each other once the scheme's defaults fill the
 * rest: kmin above kmax, xon above xoff, a buffer under one MTU ... */
static comet_status check_cc(cfg_ctx *c, const char *path, comet_net_dim *d)
{
    comet_cc_params p = d->cc;
    comet_cc_defaults(&p, d->bandwidth * (d->efficiency > 0 ? d->efficiency : 1.0));
    char msg[200];
    const char *bad = comet_cc_problem(&p, msg, sizeof msg);
    if (!bad)
        return COMET_OK;
    char key[CFG_PATH_LEN];
    snprintf(key, sizeof key, "%s.congestion_control.%s", path, bad);
    return cfg_fail_key(c, key, "%s", msg);
}

static const cfg_field dim_fields[] = {
    CFG_NAME("name", comet_net_dim, name),
    CFG_CUSTOM_RW("size", read_dim_size, write_dim_size),
    CFG_ENUM("topology", comet_net_dim, topology, vocab_topology_names),
    CFG_CUSTOM_RW("shape", cfg_read_dim_shape, write_dim_shape),
    CFG_CUSTOM_RW("bidirectional", read_bidirectional, write_bidirectional),
    CFG_INT("tiers", comet_net_dim, shape.tiers, 2, COMET_MAX_TIERS),
    CFG_INT("radix", comet_net_dim, shape.radix, 1, CFG_MAX_RADIX),
    CFG_CUSTOM_RW("oversubscription", read_oversubscription, write_oversubscription),
    {CFG_AT("routing", CFG_T_ENUM, comet_net_dim, shape.routing), .names = vocab_routing_names,
     .write = write_routing},
    CFG_INT("channels", comet_net_dim, shape.channels, 1, 64),
    CFG_INT("ecmp_seed", comet_net_dim, shape.ecmp_seed, 1, 1000000000),
    CFG_ENUM("algorithm", comet_net_dim, algorithm, vocab_algorithm_names),
    CFG_QTY("bandwidth", comet_net_dim, bandwidth, CFG_UNIT_BANDWIDTH),
    CFG_QTY0("latency", comet_net_dim, latency, CFG_UNIT_TIME),
    CFG_FRACTION("efficiency", comet_net_dim, efficiency),
    CFG_BOOL("in_network_reduction", comet_net_dim, in_network_reduction),
    CFG_REAL("cost_per_gbps", comet_net_dim, cost_per_gbps),
    CFG_REAL("cost_per_switch_port", comet_net_dim, cost_per_switch_port),
    CFG_REAL("cost_per_link", comet_net_dim, cost_per_link),
    CFG_ENUM("protocols", comet_net_dim, protocols, vocab_protocol_model_names),
    {CFG_AT("bus_bandwidth", CFG_T_SUB, comet_net_dim, bus), .sub = bus_fields,
     .write = write_bus},
    CFG_CUSTOM_RW("congestion_control", read_cc, write_cc),
    CFG_END,
};

static comet_status read_dim(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                             void *out)
{
    comet_net_dim *d = (comet_net_dim *)out + i;
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "dim%u", (unsigned)i);
    d->size = -1;
    d->topology = COMET_TOPO_SWITCH;
    d->algorithm = COMET_ALGO_RING;
    d->efficiency = 1.0;
    CFG_TRY(cfg_fields_read(c, n, path, dim_fields, d));
    if (d->size < 0)
        return cfg_missing(c, path, "size");
    if (d->bandwidth <= 0)
        return cfg_missing(c, path, "bandwidth");
    CFG_TRY(check_cc(c, path, d));
    return check_bus(c, path, d);
}

static comet_status read_network(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_system *s = base;
    memset(s->dims, 0, sizeof s->dims);
    CFG_TRY(cfg_list_read(c, n, path, COMET_MAX_DIMS, read_dim, s->dims, &s->n_dims));
    if (s->n_dims == 0)
        return cfg_fail(c, n, path, "needs at least one dimension");
    for (int i = 0; i + 1 < s->n_dims; i++) {
        if (s->dims[i].size > 0)
            continue;
        char key[CFG_PATH_LEN];
        snprintf(key, sizeof key, "%s[%d].size", path, i);
        return cfg_fail_key(c, key, "only the outermost (last) dimension may be auto");
    }
    /* the NPU count is the product of the sizes: past the limit it is a
     * typo, and three sizes of 2^24 would overflow int64 */
    int64_t npus = 1;
    for (int i = 0; i < s->n_dims && s->dims[i].size > 0; i++) {
        if (s->dims[i].size > MAX_NPUS / npus) {
            char key[CFG_PATH_LEN];
            snprintf(key, sizeof key, "%s[%d].size", path, i);
            return cfg_fail_key(c, key,
                                "the dimensions up to this one hold more than %lld NPUs, "
                                "comet's limit",
                                (long long)MAX_NPUS);
        }
        npus *= s->dims[i].size;
    }
    /* each dimension's shape keys against its topology, its size and the
     * NPUs of the dimensions inside it (an auto size is checked once the
     * NPU count is known) */
    int64_t inner = 1;
    for (int i = 0; i < s->n_dims; i++) {
        char msg[256];
        const char *bad =
            comet_net_shape_problem(&s->dims[i], s->dims[i].size, inner, msg, sizeof msg);
        if (bad) {
            char key[CFG_PATH_LEN];
            snprintf(key, sizeof key, "%s[%d].%s", path, i, bad);
            return cfg_fail_key(c, key, "%s", msg);
        }
        if (s->dims[i].size > 0)
            inner *= s->dims[i].size;
    }
    return COMET_OK;
}

static void write_network(comet_buf *b, int indent, const char *key, const void *base)
{
    const comet_system *s = base;
    cfg_write_list(b, indent, key, dim_fields, s->dims, sizeof s->dims[0], s->n_dims, false);
}

static const cfg_field cost_fields[] = {
    CFG_REAL("per_npu", comet_system, cost_per_npu),
    CFG_REAL("per_gib_hbm", comet_system, cost_per_gib_hbm),
    CFG_REAL("per_gib_expansion", comet_system, cost_per_gib_expansion),
    CFG_REAL("per_tflops", comet_system, cost_per_tflops),
    CFG_REAL("per_gbps_hbm", comet_system, cost_per_gbps_hbm),
    CFG_END,
};

static const cfg_field system_fields[] = {
    CFG_SKIP("preset"),
    CFG_NAME("name", comet_system, name),
    CFG_SUB("compute", comet_system, compute, compute_fields),
    CFG_SUB("hbm", comet_system, hbm, hbm_fields),
    CFG_CUSTOM_RW("expansion", read_expansion, write_expansion),
    CFG_CUSTOM_RW("network", read_network, write_network),
    CFG_INT("collective_chunks", comet_system, collective_chunks, 1, MAX_CHUNKS),
    CFG_GROUP("cost", cost_fields),
    CFG_END,
};

static void system_defaults(void *obj)
{
    comet_system *s = obj;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "custom");
    s->compute.vector_efficiency = 1.0;
    tier_defaults(&s->hbm);
    tier_defaults(&s->expansion);
    s->collective_chunks = 4;
}

static comet_status check_tier(cfg_ctx *c, const char *path, const char *name,
                               const comet_mem_tier *t)
{
    char key[CFG_PATH_LEN];
    cfg_path_key(key, sizeof key, path, name);
    if (t->capacity <= 0 && t->bandwidth <= 0)
        return cfg_missing(c, path, name);
    if (t->capacity <= 0)
        return cfg_missing(c, key, "capacity");
    if (t->bandwidth <= 0)
        return cfg_missing(c, key, "bandwidth");
    return COMET_OK;
}

static comet_status system_check(cfg_ctx *c, const char *path, void *obj)
{
    comet_system *s = obj;
    int peaks = 0;
    for (int i = 0; i < COMET_DTYPE_COUNT; i++)
        peaks += s->compute.matrix_flops[i] > 0;
    char key[CFG_PATH_LEN];
    if (!peaks) {
        cfg_path_key(key, sizeof key, path, "compute");
        return cfg_fail_key(c, key, "needs a matrix peak, e.g. matrix: {bf16: \"312 TFLOPS\"}");
    }
    CFG_TRY(check_tier(c, path, "hbm", &s->hbm));
    s->hbm.present = true;
    if (s->expansion.present)
        CFG_TRY(check_tier(c, path, "expansion", &s->expansion));
    if (s->n_dims == 0)
        return cfg_missing(c, path, "network");
    return COMET_OK;
}

const cfg_section cfg_system_section = {
    .kind = "systems",
    .fields = system_fields,
    .defaults = system_defaults,
    .check = system_check,
};

comet_status comet_system_write_yaml(const comet_system *sys, comet_buf *out, comet_error *err)
{
    comet_buf_printf(out, "system:\n");
    cfg_fields_write(out, 2, system_fields, sys);
    if (out->failed)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    return COMET_OK;
}
