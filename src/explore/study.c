/* Design points of a study: point i is a model and one value from every
 * axis (mixed radix, the first axis varying slowest after the model), and
 * the system it describes is the base system (or, with a system axis, the
 * point's system of that axis) with those values applied.
 * Axis values are numbers; a torus's shape, a list, is one number too (a
 * code of its axes) so that every axis compares, sorts and indexes alike,
 * and results files write it as "4x4". */
#include "comet/study.h"
#include "comet/quantity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vocab/vocab.h"

bool comet_axis_kind_from_name(const char *name, comet_axis_kind *kind)
{
    static const struct {
        const char *name;
        comet_axis_kind kind;
    } plain[] = {{"npus", COMET_AXIS_NPUS},
                 {"system_index", COMET_AXIS_SYSTEM},
                 {"peak_compute", COMET_AXIS_PEAK_COMPUTE},
                 {"hbm_capacity", COMET_AXIS_HBM_CAPACITY},
                 {"hbm_bandwidth", COMET_AXIS_HBM_BANDWIDTH},
                 {"expansion_capacity", COMET_AXIS_EXPANSION_CAPACITY},
                 {"expansion_bandwidth", COMET_AXIS_EXPANSION_BANDWIDTH}},
      dim[] = {{"bandwidth", COMET_AXIS_DIM_BANDWIDTH},
               {"size", COMET_AXIS_DIM_SIZE},
               {"latency", COMET_AXIS_DIM_LATENCY},
               {"topology", COMET_AXIS_DIM_TOPOLOGY},
               {"oversubscription", COMET_AXIS_DIM_OVERSUBSCRIPTION},
               {"radix", COMET_AXIS_DIM_RADIX},
               {"tiers", COMET_AXIS_DIM_TIERS},
               {"shape", COMET_AXIS_DIM_SHAPE},
               {"routing", COMET_AXIS_DIM_ROUTING},
               {"aggregation_oversubscription", COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION}};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strcmp(name, plain[i].name) == 0) {
            *kind = plain[i].kind;
            return true;
        }
    const char *last = strrchr(name, '.');
    if (strncmp(name, "network.", 8) != 0 || !last || last == name + 7)
        return false;
    for (size_t i = 0; i < sizeof dim / sizeof dim[0]; i++)
        if (strcmp(last + 1, dim[i].name) == 0) {
            *kind = dim[i].kind;
            return true;
        }
    return false;
}

const char *comet_axis_unit_suffix(comet_axis_kind kind)
{
    switch (kind) {
    case COMET_AXIS_PEAK_COMPUTE:
        return "_flop_per_s";
    case COMET_AXIS_HBM_CAPACITY:
    case COMET_AXIS_EXPANSION_CAPACITY:
        return "_bytes";
    case COMET_AXIS_HBM_BANDWIDTH:
    case COMET_AXIS_EXPANSION_BANDWIDTH:
    case COMET_AXIS_DIM_BANDWIDTH:
        return "_bytes_per_s";
    case COMET_AXIS_DIM_LATENCY:
        return "_s";
    default:
        return "";
    }
}

void comet_axis_column(const comet_axis *axis, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", axis->name, comet_axis_unit_suffix(axis->kind));
}

bool comet_axis_from_column(const char *column, char *out, size_t cap, comet_axis_kind *kind)
{
    /* longest first: "_bytes_per_s" also ends in "_s" */
    static const char *const suffixes[] = {"_bytes_per_s", "_flop_per_s", "_bytes", "_s"};
    size_t n = strlen(column);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        size_t k = strlen(suffixes[i]);
        if (n <= k || strcmp(column + n - k, suffixes[i]) != 0 || n - k >= cap)
            continue;
        snprintf(out, cap, "%.*s", (int)(n - k), column);
        if (comet_axis_kind_from_name(out, kind) &&
            strcmp(comet_axis_unit_suffix(*kind), suffixes[i]) == 0)
            return true;
    }
    snprintf(out, cap, "%s", column);
    return comet_axis_kind_from_name(out, kind);
}

double comet_axis_shape_value(int n_axes, const int64_t axes[])
{
    double v = 0.0, place = 1.0;
    for (int i = 0; i < n_axes && i < COMET_MAX_AXES; i++) {
        v += (double)axes[i] * place;
        place *= COMET_AXIS_SHAPE_BASE;
    }
    return v;
}

int comet_axis_shape_of(double v, int64_t axes[COMET_MAX_AXES])
{
    const double most = (double)COMET_AXIS_SHAPE_BASE * COMET_AXIS_SHAPE_BASE *
                        COMET_AXIS_SHAPE_BASE;
    memset(axes, 0, sizeof axes[0] * COMET_MAX_AXES);
    if (!(v >= 2.0 && v < most) || v != (double)(int64_t)v)
        return 0;
    int64_t code = (int64_t)v;
    int n = 0;
    while (code > 0 && n < COMET_MAX_AXES) {
        axes[n] = code % COMET_AXIS_SHAPE_BASE;
        if (axes[n] < 2) {
            memset(axes, 0, sizeof axes[0] * COMET_MAX_AXES);
            return 0;
        }
        code /= COMET_AXIS_SHAPE_BASE;
        n++;
    }
    return n;
}

/* "4x4", "16", "2x2x4"; "?" for a value that is no shape code. */
static const char *shape_text(double v, char *out, size_t cap)
{
    int64_t axes[COMET_MAX_AXES];
    int n = comet_axis_shape_of(v, axes);
    if (cap)
        out[0] = '\0';
    if (n == 0)
        snprintf(out, cap, "?");
    for (int i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, cap > len ? cap - len : 0, "%s%lld", i ? "x" : "",
                 (long long)axes[i]);
    }
    return out;
}

const char *comet_axis_value_text(const comet_axis *axis, double v, char *out, size_t cap)
{
    if (axis->kind == COMET_AXIS_DIM_SHAPE)
        return shape_text(v, out, cap);
    snprintf(out, cap, "%.10g", v);
    return out;
}

bool comet_axis_value_parse(comet_axis_kind kind, const char *text, double *value)
{
    int64_t axes[COMET_MAX_AXES];
    int n = 0;
    const char *p = text;
    char *end;
    errno = 0;
    if (kind != COMET_AXIS_DIM_SHAPE) {
        double v = strtod(text, &end);
        if (end == text || *end || errno)
            return false;
        *value = v;
        return true;
    }
    for (;;) { /* "4x4": 1 to 3 whole numbers of 2..base-1 joined by 'x' */
        if (n == COMET_MAX_AXES || *p < '0' || *p > '9')
            return false;
        long long a = strtoll(p, &end, 10);
        if (errno || a < 2 || a >= COMET_AXIS_SHAPE_BASE)
            return false;
        axes[n++] = a;
        if (*end == '\0')
            break;
        if (*end != 'x')
            return false;
        p = end + 1;
    }
    *value = comet_axis_shape_value(n, axes);
    return true;
}

const char *comet_axis_format(const comet_axis *axis, double v, char *out, size_t cap)
{
    switch (axis->kind) {
    case COMET_AXIS_PEAK_COMPUTE:
        return comet_format_setting(v, COMET_QTY_FLOP_PER_S, out, cap);
    case COMET_AXIS_HBM_CAPACITY:
    case COMET_AXIS_EXPANSION_CAPACITY:
        if (v == 0.0) {
            snprintf(out, cap, "none");
            return out;
        }
        return comet_format_setting(v, COMET_QTY_BYTES, out, cap);
    case COMET_AXIS_HBM_BANDWIDTH:
    case COMET_AXIS_EXPANSION_BANDWIDTH:
    case COMET_AXIS_DIM_BANDWIDTH:
        return comet_format_setting(v, COMET_QTY_BYTES_PER_S, out, cap);
    case COMET_AXIS_DIM_LATENCY:
        return comet_format_setting(v, COMET_QTY_SECONDS, out, cap);
    case COMET_AXIS_DIM_TOPOLOGY:
        snprintf(out, cap, "%s", comet_topology_name((comet_topology)(int)v));
        return out;
    case COMET_AXIS_DIM_OVERSUBSCRIPTION: /* down:up, "2:1", "1.5:1" */
    case COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION:
        snprintf(out, cap, "%.4g:1", v);
        return out;
    case COMET_AXIS_DIM_SHAPE:
        return shape_text(v, out, cap);
    case COMET_AXIS_DIM_ROUTING:
        snprintf(out, cap, "%s", comet_routing_name((comet_routing)(int)v));
        return out;
    case COMET_AXIS_SYSTEM:
        if (v >= 0.0 && v < COMET_STUDY_MAX_SYSTEMS && axis->labels[(int)v][0])
            snprintf(out, cap, "%s", axis->labels[(int)v]);
        else /* read back from results without the study: its index */
            snprintf(out, cap, "system %.0f", v);
        return out;
    case COMET_AXIS_NPUS:
    case COMET_AXIS_DIM_SIZE:
    case COMET_AXIS_DIM_RADIX:
    case COMET_AXIS_DIM_TIERS:
    default:
        snprintf(out, cap, "%.0f", v);
        return out;
    }
}

const char *comet_axis_short_name(const comet_axis *axis, char *out, size_t cap)
{
    static const char *const plain[] = {
        [COMET_AXIS_NPUS] = "NPUs",
        [COMET_AXIS_PEAK_COMPUTE] = "compute",
        [COMET_AXIS_HBM_CAPACITY] = "HBM",
        [COMET_AXIS_HBM_BANDWIDTH] = "HBM bandwidth",
        [COMET_AXIS_EXPANSION_CAPACITY] = "expansion",
        [COMET_AXIS_EXPANSION_BANDWIDTH] = "expansion bandwidth",
    };
    static const char *const dim_suffix[] = {
        [COMET_AXIS_DIM_BANDWIDTH] = "", [COMET_AXIS_DIM_SIZE] = " size",
        [COMET_AXIS_DIM_LATENCY] = " latency", [COMET_AXIS_DIM_TOPOLOGY] = " topology",
        [COMET_AXIS_DIM_OVERSUBSCRIPTION] = " oversubscription", [COMET_AXIS_DIM_RADIX] = " radix",
        [COMET_AXIS_DIM_TIERS] = " tiers", [COMET_AXIS_DIM_SHAPE] = " shape",
        [COMET_AXIS_DIM_ROUTING] = " routing",
        [COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION] = " aggregation oversubscription"};
    if (axis->kind <= COMET_AXIS_EXPANSION_BANDWIDTH) {
        snprintf(out, cap, "%s", plain[axis->kind]);
        return out;
    }
    if (axis->kind == COMET_AXIS_SYSTEM) {
        snprintf(out, cap, "system");
        return out;
    }
    /* "network.nvlink.size" -> "nvlink size" */
    const char *dim = strncmp(axis->name, "network.", 8) == 0 ? axis->name + 8 : axis->name;
    const char *dot = strrchr(dim, '.');
    int len = dot ? (int)(dot - dim) : (int)strlen(dim);
    snprintf(out, cap, "%.*s%s", len, dim, dim_suffix[axis->kind]);
    return out;
}

uint64_t comet_study_points(const comet_study *study)
{
    /* 8 models x 16 axes of 64 values is 2^99: saturate, never wrap */
    uint64_t n = (uint64_t)study->n_models;
    for (int a = 0; a < study->n_axes; a++) {
        uint64_t values = (uint64_t)study->axes[a].n;
        if (values && n > UINT64_MAX / values)
            return UINT64_MAX;
        n *= values;
    }
    return n;
}

static void scale_peaks(double peaks[COMET_DTYPE_COUNT], double factor)
{
    for (int d = 0; d < COMET_DTYPE_COUNT; d++)
        peaks[d] *= factor;
}

void comet_axis_apply(const comet_axis *axis, double v, comet_dtype dtype, comet_system *sys,
                      int64_t *npus)
{
    switch (axis->kind) {
    case COMET_AXIS_NPUS:
        *npus = (int64_t)v;
        break;
    case COMET_AXIS_PEAK_COMPUTE: {
        /* the model's datatype gets v; every other peak scales with it */
        double base = sys->compute.matrix_flops[dtype];
        double factor = base > 0.0 ? v / base : 1.0;
        scale_peaks(sys->compute.matrix_flops, factor);
        scale_peaks(sys->compute.vector_flops, factor);
        sys->compute.matrix_flops[dtype] = v;
        break;
    }
    case COMET_AXIS_HBM_CAPACITY:
        sys->hbm.capacity = v;
        break;
    case COMET_AXIS_HBM_BANDWIDTH:
        sys->hbm.bandwidth = v;
        break;
    case COMET_AXIS_EXPANSION_CAPACITY:
        sys->expansion.present = v > 0.0;
        sys->expansion.capacity = v;
        sys->expansion.efficiency = vocab_efficiency(sys->expansion.efficiency);
        break;
    case COMET_AXIS_EXPANSION_BANDWIDTH:
        sys->expansion.bandwidth = v;
        break;
    case COMET_AXIS_DIM_BANDWIDTH:
        sys->dims[axis->dim].bandwidth = v;
        break;
    case COMET_AXIS_DIM_SIZE:
        sys->dims[axis->dim].size = (int64_t)v;
        break;
    case COMET_AXIS_DIM_LATENCY:
        sys->dims[axis->dim].latency = v;
        break;
    case COMET_AXIS_DIM_TOPOLOGY:
        sys->dims[axis->dim].topology = (comet_topology)(int)v;
        break;
    case COMET_AXIS_DIM_OVERSUBSCRIPTION: /* the leaves' ratio; a 3-tier's second stays */
        sys->dims[axis->dim].shape.oversubscription[0] = v;
        break;
    case COMET_AXIS_DIM_RADIX:
        sys->dims[axis->dim].shape.radix = (int64_t)v;
        break;
    case COMET_AXIS_DIM_TIERS:
        sys->dims[axis->dim].shape.tiers = (int)v;
        break;
    case COMET_AXIS_DIM_SHAPE: {
        comet_net_shape *sh = &sys->dims[axis->dim].shape;
        sh->n_axes = comet_axis_shape_of(v, sh->axes);
        break;
    }
    case COMET_AXIS_DIM_ROUTING:
        sys->dims[axis->dim].shape.routing = (comet_routing)(int)v;
        break;
    case COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION: /* the aggregation tier's (3 tiers) */
        sys->dims[axis->dim].shape.oversubscription[1] = v;
        break;
    case COMET_AXIS_SYSTEM: /* the point starts from it: comet_study_point */
        break;
    }
}

void comet_study_point(const comet_study *study, uint64_t index, int *model,
                       comet_system *system, int64_t *npus, double values[COMET_STUDY_MAX_AXES])
{
    int digit[COMET_STUDY_MAX_AXES];
    for (int a = study->n_axes - 1; a >= 0; a--) {
        uint64_t n = (uint64_t)study->axes[a].n;
        digit[a] = (int)(index % n);
        index /= n;
    }
    *model = (int)index;
    *system = study->system;
    for (int a = 0; a < study->n_axes; a++) /* a whole system first, the other axes on it */
        if (study->axes[a].kind == COMET_AXIS_SYSTEM)
            *system = study->systems[(int)study->axes[a].values[digit[a]]];
    *npus = study->npus;
    comet_dtype dtype = study->models[*model].dtype;
    for (int a = 0; a < study->n_axes; a++) {
        values[a] = study->axes[a].values[digit[a]];
        comet_axis_apply(&study->axes[a], values[a], dtype, system, npus);
    }
}

void comet_study_point_system(const comet_study *study, uint64_t index, comet_system *system)
{
    int model;
    int64_t npus;
    double values[COMET_STUDY_MAX_AXES];
    comet_study_point(study, index, &model, system, &npus, values);
}
