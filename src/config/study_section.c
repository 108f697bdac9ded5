/* Study files for comet sweep: one `study:` section with the models, the
 * base system, the axes to vary and the constraints. The models, system
 * and base strategy reuse the ordinary section readers; this file reads
 * the axes and constraints and checks the whole study before any work
 * starts, so a mistake costs a one-line error, not a half-run sweep; the
 * shape axes swept onto a network dimension (topology, size, shape,
 * routing, tiers, radix and both oversubscription ratios) are held, in
 * every combination, to the same shape check as the base system's own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/network.h"
#include "comet/study.h"
#include "../vocab/vocab.h"
#include "sections.h"
#include "srcmap.h"

#define UNIT_INTEGER CFG_UNIT_COUNT /* NPU counts and sizes: plain integers, not a quantity */
#define UNIT_TOPOLOGY (CFG_UNIT_COUNT + 1) /* topology names */
#define UNIT_RATIO (CFG_UNIT_COUNT + 2)    /* a plain positive number (down:up ports) */
#define UNIT_RADIX (CFG_UNIT_COUNT + 3)    /* ports per switch, 1..CFG_MAX_RADIX */
#define UNIT_TIERS (CFG_UNIT_COUNT + 4)    /* Clos tiers, 2..COMET_MAX_TIERS */
#define UNIT_SHAPE (CFG_UNIT_COUNT + 5)    /* a torus's axes, [4, 4] (comet_axis_shape_value) */
#define UNIT_ROUTING (CFG_UNIT_COUNT + 6)  /* ecmp | spray */

/* One value of a shape axis: the system's shape reader, then each axis
 * small enough for the value's code. */
static comet_status read_shape_value(cfg_ctx *c, const cfg_node *item, const char *ipath,
                                     double *v)
{
    comet_net_dim dim = {0};
    CFG_TRY(cfg_read_dim_shape(c, item, ipath, &dim));
    for (int a = 0; a < dim.shape.n_axes; a++)
        if (dim.shape.axes[a] >= COMET_AXIS_SHAPE_BASE) {
            char apath[CFG_PATH_LEN];
            cfg_path_index(apath, sizeof apath, ipath, (size_t)a);
            return cfg_fail(c, cfg_seq_item(item, (size_t)a), apath,
                            "a swept shape's axes hold at most %d NPUs each, got %lld",
                            COMET_AXIS_SHAPE_BASE - 1, (long long)dim.shape.axes[a]);
        }
    *v = comet_axis_shape_value(dim.shape.n_axes, dim.shape.axes);
    return COMET_OK;
}

/* A list of quantities (or plain numbers, names or integers by unit);
 * "none" is allowed as 0 when allow_none. What a radix or ratio must be
 * for its topology is the shape check's (check_dim_axes). */
static comet_status read_values(cfg_ctx *c, const cfg_node *n, const char *path, int unit,
                                bool allow_none, comet_axis *axis)
{
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n == 0)
        return cfg_fail(c, n, path, "is empty: give at least one value");
    if (n->n > COMET_STUDY_MAX_VALUES)
        return cfg_fail(c, n, path, "has %zu values; at most %d", n->n, COMET_STUDY_MAX_VALUES);
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *item = cfg_seq_item(n, i);
        char ipath[CFG_PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        cfg_record(c, ipath, item);
        double v;
        if (allow_none && item->kind == CFG_SCALAR && strcmp(item->text, "none") == 0) {
            v = 0.0;
        } else if (unit == UNIT_TOPOLOGY || unit == UNIT_ROUTING) {
            int t;
            CFG_TRY(cfg_read_enum(c, item, ipath,
                                  unit == UNIT_TOPOLOGY ? vocab_topology_names
                                                        : vocab_routing_names,
                                  &t));
            v = (double)t;
        } else if (unit == UNIT_SHAPE) {
            CFG_TRY(read_shape_value(c, item, ipath, &v));
        } else if (unit == UNIT_INTEGER || unit == UNIT_RADIX || unit == UNIT_TIERS) {
            int64_t k;
            CFG_TRY(cfg_read_int(c, item, ipath, unit == UNIT_TIERS ? 2 : 1,
                                 unit == UNIT_TIERS   ? COMET_MAX_TIERS
                                 : unit == UNIT_RADIX ? CFG_MAX_RADIX
                                                      : COMET_MAX_NPUS,
                                 &k));
            v = (double)k;
        } else if (unit == UNIT_RATIO) {
            CFG_TRY(cfg_read_real(c, item, ipath, true, &v));
        } else {
            CFG_TRY(cfg_read_quantity(c, item, ipath, (cfg_unit_kind)unit, true, &v));
        }
        for (size_t j = 0; j < i; j++)
            if (axis->values[j] == v)
                return cfg_fail(c, item, ipath, "repeats an earlier value");
        axis->values[i] = v;
    }
    axis->n = (int)n->n;
    return COMET_OK;
}

static comet_status add_axis(cfg_ctx *c, comet_study *st, const cfg_node *n, const char *path,
                             const char *name, comet_axis_kind kind, int dim, int unit,
                             bool allow_none)
{
    if (st->n_axes == COMET_STUDY_MAX_AXES)
        return cfg_fail(c, n, path, "too many axes; at most %d", COMET_STUDY_MAX_AXES);
    comet_axis *a = &st->axes[st->n_axes];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->dim = dim;
    snprintf(a->name, sizeof a->name, "%s", name);
    CFG_TRY(read_values(c, n, path, unit, allow_none, a));
    st->n_axes++;
    return COMET_OK;
}

/* axes.network.DIM: {bandwidth: [...], size: [...], latency: [...], topology: [...],
 * shape: [[...], ...], routing: [...], oversubscription: [...],
 * aggregation_oversubscription: [...], radix: [...], tiers: [...]} */
static comet_status read_dim_axes(cfg_ctx *c, comet_study *st, const cfg_node *n,
                                  const char *path, int dim)
{
    static const struct {
        const char *key;
        comet_axis_kind kind;
        int unit;
    } dim_axes[] = {
        {"bandwidth", COMET_AXIS_DIM_BANDWIDTH, CFG_UNIT_BANDWIDTH},
        {"size", COMET_AXIS_DIM_SIZE, UNIT_INTEGER},
        {"latency", COMET_AXIS_DIM_LATENCY, CFG_UNIT_TIME},
        {"topology", COMET_AXIS_DIM_TOPOLOGY, UNIT_TOPOLOGY},
        {"oversubscription", COMET_AXIS_DIM_OVERSUBSCRIPTION, UNIT_RATIO},
        {"radix", COMET_AXIS_DIM_RADIX, UNIT_RADIX},
        {"tiers", COMET_AXIS_DIM_TIERS, UNIT_TIERS},
        {"shape", COMET_AXIS_DIM_SHAPE, UNIT_SHAPE},
        {"routing", COMET_AXIS_DIM_ROUTING, UNIT_ROUTING},
        {"aggregation_oversubscription", COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION, UNIT_RATIO},
    };
    enum { N_KEYS = sizeof dim_axes / sizeof dim_axes[0] };
    const char *keys[N_KEYS + 1];
    for (int j = 0; j < N_KEYS; j++)
        keys[j] = dim_axes[j].key;
    keys[N_KEYS] = NULL;
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *k = cfg_map_key(n, i), *v = cfg_map_value(n, i);
        char kpath[CFG_PATH_LEN], name[64];
        cfg_path_key(kpath, sizeof kpath, path, k->text);
        snprintf(name, sizeof name, "network.%s.%s", st->system.dims[dim].name, k->text);
        int j = 0;
        while (j < N_KEYS && strcmp(k->text, dim_axes[j].key))
            j++;
        if (j < N_KEYS) {
            CFG_TRY(add_axis(c, st, v, kpath, name, dim_axes[j].kind, dim, dim_axes[j].unit,
                             false));
            continue;
        }
        return cfg_fail_unknown(c, k, kpath, "resource", keys);
    }
    return COMET_OK;
}

static comet_status read_network_axes(cfg_ctx *c, comet_study *st, const cfg_node *n,
                                      const char *path)
{
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *k = cfg_map_key(n, i);
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, k->text);
        int dim = -1;
        for (int d = 0; d < st->system.n_dims; d++)
            if (strcmp(st->system.dims[d].name, k->text) == 0)
                dim = d;
        if (dim < 0) {
            char known[256] = "";
            for (int d = 0; d < st->system.n_dims; d++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                         d ? ", " : "", st->system.dims[d].name);
            return cfg_fail(c, k, kpath, "system %s has no network dimension named so (it has: %s)",
                            st->system.name, known);
        }
        CFG_TRY(read_dim_axes(c, st, cfg_map_value(n, i), kpath, dim));
    }
    return COMET_OK;
}

/* axes.system: [NAME or {preset: NAME, ...}, ...]: whole systems, each
 * read as a study's `system` is; value i is systems[i]. The network axes
 * name a system's dimensions, which differ from system to system, so they
 * do not go with it. */
static comet_status read_system_axis(cfg_ctx *c, comet_study *st, const cfg_node *n,
                                     const char *path)
{
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n == 0)
        return cfg_fail(c, n, path, "is empty: give at least one system");
    if (n->n > COMET_STUDY_MAX_SYSTEMS)
        return cfg_fail(c, n, path, "has %zu systems; at most %d", n->n, COMET_STUDY_MAX_SYSTEMS);
    if (st->n_axes == COMET_STUDY_MAX_AXES)
        return cfg_fail(c, n, path, "too many axes; at most %d", COMET_STUDY_MAX_AXES);
    comet_axis *a = &st->axes[st->n_axes];
    memset(a, 0, sizeof *a);
    a->kind = COMET_AXIS_SYSTEM;
    a->dim = -1;
    /* results files hold the index under this name, beside the estimate's
     * own `system` column (the name) */
    snprintf(a->name, sizeof a->name, "system_index");
    for (size_t i = 0; i < n->n; i++) {
        char ipath[CFG_PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        CFG_TRY(cfg_section_read(c, cfg_seq_item(n, i), ipath, &cfg_system_section,
                                 &st->systems[i]));
        for (size_t j = 0; j < i; j++)
            if (strcmp(st->systems[j].name, st->systems[i].name) == 0)
                return cfg_fail(c, cfg_seq_item(n, i), ipath, "system \"%s\" is on this axis "
                                "already: give each its own name", st->systems[i].name);
        snprintf(a->labels[i], sizeof a->labels[i], "%s", st->systems[i].name);
        a->values[i] = (double)i;
    }
    a->n = (int)n->n;
    st->n_systems = (int)n->n;
    st->n_axes++;
    return COMET_OK;
}

static comet_status read_axes(cfg_ctx *c, comet_study *st, const cfg_node *n, const char *path)
{
    static const struct {
        const char *key;
        comet_axis_kind kind;
        int unit;
        bool none;
    } simple[] = {
        {"npus", COMET_AXIS_NPUS, UNIT_INTEGER, false},
        {"peak_compute", COMET_AXIS_PEAK_COMPUTE, CFG_UNIT_FLOP_RATE, false},
        {"hbm_capacity", COMET_AXIS_HBM_CAPACITY, CFG_UNIT_BYTES, false},
        {"hbm_bandwidth", COMET_AXIS_HBM_BANDWIDTH, CFG_UNIT_BANDWIDTH, false},
        {"expansion_capacity", COMET_AXIS_EXPANSION_CAPACITY, CFG_UNIT_BYTES, true},
        {"expansion_bandwidth", COMET_AXIS_EXPANSION_BANDWIDTH, CFG_UNIT_BANDWIDTH, false},
    };
    static const char *const keys[] = {"npus", "peak_compute", "hbm_capacity", "hbm_bandwidth",
                                       "expansion_capacity", "expansion_bandwidth", "network",
                                       "system", NULL};
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    const cfg_node *systems = cfg_map_find(n, "system");
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *k = cfg_map_key(n, i), *v = cfg_map_value(n, i);
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, k->text);
        cfg_record(c, kpath, k);
        if (strcmp(k->text, "system") == 0) {
            CFG_TRY(read_system_axis(c, st, v, kpath));
            continue;
        }
        if (strcmp(k->text, "network") == 0) {
            if (systems)
                return cfg_fail(c, k, kpath, "network axes name one system's dimensions: they do "
                                "not go with a system axis (vary the systems themselves)");
            CFG_TRY(read_network_axes(c, st, v, kpath));
            continue;
        }
        size_t j = 0;
        while (j < sizeof simple / sizeof simple[0] && strcmp(simple[j].key, k->text))
            j++;
        if (j == sizeof simple / sizeof simple[0])
            return cfg_fail_unknown(c, k, kpath, "resource", keys);
        CFG_TRY(add_axis(c, st, v, kpath, simple[j].key, simple[j].kind, -1, simple[j].unit,
                         simple[j].none));
    }
    return COMET_OK;
}

static comet_status read_models(cfg_ctx *c, comet_study *st, const cfg_node *n,
                                const char *path)
{
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n == 0)
        return cfg_fail(c, n, path, "is empty: give at least one model");
    if (n->n > COMET_STUDY_MAX_MODELS)
        return cfg_fail(c, n, path, "has %zu models; at most %d", n->n, COMET_STUDY_MAX_MODELS);
    for (size_t i = 0; i < n->n; i++) {
        char ipath[CFG_PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        CFG_TRY(cfg_section_read(c, cfg_seq_item(n, i), ipath, &cfg_model_section,
                                 &st->models[i]));
    }
    st->n_models = (int)n->n;
    return COMET_OK;
}

/* The key order inside `study:` must not matter: read the system before
 * the axes that name its dimensions. */
static comet_status read_study(cfg_ctx *c, comet_study *st, const cfg_node *n)
{
    static const char *const keys[] = {"name", "models", "system", "strategy", "npus",
                                       "global_batch", "max_global_batch", "axes",
                                       "constraints", "search", NULL};
    CFG_TRY(cfg_expect(c, n, "study", CFG_MAP));
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *k = cfg_map_key(n, i);
        bool known = false;
        for (int j = 0; keys[j]; j++)
            known = known || strcmp(keys[j], k->text) == 0;
        if (!known) {
            char kpath[CFG_PATH_LEN];
            cfg_path_key(kpath, sizeof kpath, "study", k->text);
            const char *near = cfg_suggest(k->text, keys);
            return near ? cfg_fail(c, k, kpath, "unknown key (did you mean \"%s\"?)", near)
                        : cfg_fail(c, k, kpath, "unknown key");
        }
    }
    const cfg_node *v;
    if ((v = cfg_map_find(n, "name")))
        CFG_TRY(cfg_read_name(c, v, "study.name", st->name, sizeof st->name));
    if (!(v = cfg_map_find(n, "models")))
        return cfg_fail(c, n, "study", "missing key \"models\"");
    CFG_TRY(read_models(c, st, v, "study.models"));
    const cfg_node *axes = cfg_map_find(n, "axes");
    bool system_axis = cfg_map_find(axes, "system") != NULL;
    if ((v = cfg_map_find(n, "system")))
        CFG_TRY(cfg_section_read(c, v, "study.system", &cfg_system_section, &st->system));
    else if (!system_axis)
        return cfg_fail(c, n, "study", "missing key \"system\" (or an axis of systems, "
                        "axes.system)");
    if ((v = cfg_map_find(n, "strategy")))
        CFG_TRY(cfg_section_read(c, v, "study.strategy", &cfg_strategy_section, &st->base));
    if ((v = cfg_map_find(n, "npus")))
        CFG_TRY(cfg_read_int(c, v, "study.npus", 1, COMET_MAX_NPUS, &st->npus));
    if ((v = cfg_map_find(n, "global_batch")))
        CFG_TRY(cfg_read_int(c, v, "study.global_batch", 1, COMET_MAX_BATCH, &st->global_batch));
    if ((v = cfg_map_find(n, "max_global_batch")))
        CFG_TRY(cfg_read_int(c, v, "study.max_global_batch", 1, COMET_MAX_BATCH,
                             &st->max_global_batch));
    if (axes)
        CFG_TRY(read_axes(c, st, axes, "study.axes"));
    if (!cfg_map_find(n, "system")) /* the system axis's first is the base */
        st->system = st->systems[0];
    if ((v = cfg_map_find(n, "constraints"))) {
        static const cfg_field constraint_fields[] = {
            CFG_INT("npus", comet_study, npus, 1, COMET_MAX_NPUS),
            CFG_REAL("budget", comet_study, budget),
            CFG_END,
        };
        CFG_TRY(cfg_fields_read(c, v, "study.constraints", constraint_fields, st));
    }
    if ((v = cfg_map_find(n, "search"))) {
        static const cfg_field search_fields[] = {
            CFG_ENUM("objective", comet_study, objective, vocab_objective_names),
            CFG_INT("max_microbatch", comet_study, max_microbatch, 1, COMET_MAX_BATCH),
            CFG_BOOL("flash_attention", comet_study, vary_flash),
            CFG_BOOL("offload", comet_study, vary_offload),
            CFG_END,
        };
        CFG_TRY(cfg_fields_read(c, v, "study.search", search_fields, st));
    }
    return COMET_OK;
}

static const comet_axis *find_axis(const comet_study *st, comet_axis_kind kind)
{
    for (int i = 0; i < st->n_axes; i++)
        if (st->axes[i].kind == kind)
            return &st->axes[i];
    return NULL;
}

/* Every NPU count must fit the base system's network (every value of a
 * dimension-size axis is tried with it), and every system's of a system
 * axis. */
static comet_status check_npus(cfg_ctx *c, const comet_study *st)
{
    const comet_axis *npus_axis = find_axis(st, COMET_AXIS_NPUS);
    int n = npus_axis ? npus_axis->n : 1;
    for (int k = 0; k <= st->n_systems; k++)
    for (int i = 0; i < n; i++) {
        int64_t npus = npus_axis ? (int64_t)npus_axis->values[i] : st->npus;
        comet_strategy s;
        comet_strategy_defaults(&s);
        s.dp = npus;
        s.global_batch = npus;
        comet_system sys = k < st->n_systems ? st->systems[k] : st->system;
        for (int a = 0; a < st->n_axes; a++)
            if (st->axes[a].kind == COMET_AXIS_DIM_SIZE)
                sys.dims[st->axes[a].dim].size = (int64_t)st->axes[a].values[0];
        comet_model m = st->models[0];
        comet_error e;
        if (comet_strategy_resolve(&m, &sys, &s, NULL, &e) == COMET_OK)
            continue;
        char path[64];
        if (npus_axis)
            snprintf(path, sizeof path, "study.axes.npus[%d]", i);
        else
            snprintf(path, sizeof path, "study.npus");
        return cfg_fail_key(c, path, "%lld NPUs do not fit system %s: %s", (long long)npus,
                            sys.name, e.message);
    }
    return COMET_OK;
}

static const comet_axis *find_dim_axis(const comet_study *st, comet_axis_kind kind, int dim)
{
    for (int i = 0; i < st->n_axes; i++)
        if (st->axes[i].kind == kind && st->axes[i].dim == dim)
            return &st->axes[i];
    return NULL;
}

static int largest_value(const comet_axis *axis)
{
    int k = 0;
    for (int i = 1; i < axis->n; i++)
        if (axis->values[i] > axis->values[k])
            k = i;
    return k;
}

/* The axes that shape a network dimension, as check_dim_axes tries them
 * (in this order when none sweeps the key at fault); a problem's key
 * names the axis at fault where one sweeps it. */
enum {
    AT_TOPOLOGY,
    AT_SIZE,
    AT_TIERS,
    AT_RADIX,
    AT_OVERSUBSCRIPTION,
    AT_SHAPE,
    AT_ROUTING,
    AT_AGGREGATION,
    N_SHAPE_AXES
};
static const struct {
    comet_axis_kind kind;
    const char *key;
} shape_axes[N_SHAPE_AXES] = {
    [AT_TOPOLOGY] = {COMET_AXIS_DIM_TOPOLOGY, "topology"},
    [AT_SIZE] = {COMET_AXIS_DIM_SIZE, "size"},
    [AT_TIERS] = {COMET_AXIS_DIM_TIERS, "tiers"},
    [AT_RADIX] = {COMET_AXIS_DIM_RADIX, "radix"},
    [AT_OVERSUBSCRIPTION] = {COMET_AXIS_DIM_OVERSUBSCRIPTION, "oversubscription"},
    [AT_SHAPE] = {COMET_AXIS_DIM_SHAPE, "shape"},
    [AT_ROUTING] = {COMET_AXIS_DIM_ROUTING, "routing"},
    /* the system's key for both ratios: blames() tells them apart */
    [AT_AGGREGATION] = {COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION, "oversubscription"},
};

/* Whether shape axis k (swept: ax[k]) sweeps the key `bad` the shape check
 * names. Both ratios are the key oversubscription: a bad leaf ratio is the
 * leaf axis's, anything else (a second ratio below 1 or on 2 tiers) the
 * aggregation axis's where one is swept. */
static bool blames(int k, const char *bad, const comet_axis *const ax[N_SHAPE_AXES],
                   const comet_net_dim *dim)
{
    if (!ax[k] || strcmp(bad, shape_axes[k].key) != 0)
        return false;
    double leaf = dim->shape.oversubscription[0];
    bool leaf_bad = leaf != 0.0 && !(leaf >= 1.0);
    if (k == AT_OVERSUBSCRIPTION)
        return leaf_bad || !ax[AT_AGGREGATION];
    if (k == AT_AGGREGATION)
        return !leaf_bad;
    return true;
}

/* The shape axes swept onto a network dimension must make one that builds,
 * by the shape check the system reader applies to the base system
 * (comet_net_shape_problem): every combination of their values, the
 * dimensions inside at their largest sizes (every combination is a design
 * point, and a Clos needs the most ports there). The error names the axis
 * value at fault (the axis of the shape key it breaks, else this
 * dimension's topology, else its size, else the size inside that made it
 * too big, else its tiers, radix, ratios, shape or routing) and the key. */
static comet_status check_dim_axes(cfg_ctx *c, const comet_study *st)
{
    int64_t inner = 1;
    const comet_axis *inner_axis = NULL; /* the last size axis inside, at its largest */
    comet_system sys = st->system;
    for (int d = 0; d < st->system.n_dims; d++) {
        const comet_axis *ax[N_SHAPE_AXES];
        int at[N_SHAPE_AXES] = {0};
        bool swept = inner_axis != NULL;
        for (int k = 0; k < N_SHAPE_AXES; k++) {
            ax[k] = find_dim_axis(st, shape_axes[k].kind, d);
            swept = swept || ax[k];
        }
        /* every combination, the last axis varying fastest */
        for (bool more = swept; more;) {
            int64_t npus = 0;
            for (int k = 0; k < N_SHAPE_AXES; k++)
                if (ax[k])
                    comet_axis_apply(ax[k], ax[k]->values[at[k]], COMET_DTYPE_BF16, &sys, &npus);
            const comet_net_dim *dim = &sys.dims[d];
            char msg[256];
            const char *bad = comet_net_shape_problem(dim, dim->size, inner, msg, sizeof msg);
            if (bad) {
                const comet_axis *fault = NULL; /* the axis of the key at fault, */
                int slot = 0;
                for (int k = 0; k < N_SHAPE_AXES && !fault; k++)
                    if (blames(k, bad, ax, dim)) {
                        fault = ax[k];
                        slot = at[k];
                    }
                /* else the topology, the size, the size inside, the tiers, ... */
                for (int k = 0; k < N_SHAPE_AXES && !fault; k++) {
                    if (k == AT_TIERS && inner_axis) {
                        fault = inner_axis;
                        slot = largest_value(inner_axis);
                    } else if (ax[k]) {
                        fault = ax[k];
                        slot = at[k];
                    }
                }
                char path[CFG_PATH_LEN], along[24], grid[64] = "";
                snprintf(path, sizeof path, "study.axes.%s[%d]", fault->name, slot);
                if (dim->size > 0)
                    snprintf(along, sizeof along, "%lld", (long long)dim->size);
                else
                    snprintf(along, sizeof along, "auto");
                for (int i = 0; i < dim->shape.n_axes && i < COMET_MAX_AXES; i++) /* " 2x4" */
                    snprintf(grid + strlen(grid), sizeof grid - strlen(grid), "%s%lld",
                             i ? "x" : " ", (long long)dim->shape.axes[i]);
                return cfg_fail_key(c, path,
                                    "%s%s with %s NPUs along %s and %lld inside: "
                                    "study.system.network[%d].%s: %s",
                                    comet_topology_name(dim->topology), grid, along, dim->name,
                                    (long long)inner, d, bad, msg);
            }
            more = false;
            for (int k = N_SHAPE_AXES - 1; k >= 0 && !more; k--) {
                if (!ax[k])
                    continue;
                at[k] = (at[k] + 1) % ax[k]->n;
                more = at[k] != 0;
            }
        }
        const comet_axis *size = ax[AT_SIZE];
        if (size)
            inner_axis = size;
        int64_t most = size ? (int64_t)size->values[largest_value(size)] : st->system.dims[d].size;
        if (most > 0)
            inner = most > COMET_MAX_NPUS / inner ? COMET_MAX_NPUS : inner * most;
    }
    return COMET_OK;
}

static comet_status check_study(cfg_ctx *c, comet_study *st, const cfg_node *root)
{
    bool npus_axis = find_axis(st, COMET_AXIS_NPUS) != NULL;
    if (npus_axis && st->npus > 0)
        return cfg_fail_key(c, "study.constraints.npus",
                            "contradicts the npus axis: fix the NPU count or vary it, not both");
    if (!npus_axis && st->npus <= 0)
        return cfg_fail(c, root, "study", "needs npus (a fixed count) or an npus axis");
    if (st->global_batch <= 0 && st->max_global_batch <= 0)
        return cfg_fail(c, root, "study", "needs global_batch or max_global_batch");
    if (st->global_batch > 0 && st->max_global_batch > 0)
        return cfg_fail_key(c, "study.max_global_batch",
                            "contradicts global_batch: give one of the two");
    if (st->budget > 0.0 && st->system.cost_per_npu <= 0.0)
        return cfg_fail_key(c, "study.constraints.budget",
                            "system %s gives no costs (cost.per_npu), so no design can be priced",
                            st->system.name);
    bool has_expansion = st->system.expansion.present || find_axis(st, COMET_AXIS_EXPANSION_CAPACITY);
    if (find_axis(st, COMET_AXIS_EXPANSION_CAPACITY) && !st->system.expansion.present &&
        !find_axis(st, COMET_AXIS_EXPANSION_BANDWIDTH))
        return cfg_fail_key(c, "study.axes.expansion_capacity",
                            "system %s has no expansion tier to take its bandwidth from; add "
                            "expansion_bandwidth values",
                            st->system.name);
    if (find_axis(st, COMET_AXIS_EXPANSION_BANDWIDTH) && !has_expansion)
        return cfg_fail_key(c, "study.axes.expansion_bandwidth",
                            "system %s has no expansion tier; add expansion_capacity values",
                            st->system.name);
    for (int a = 0; a < st->n_axes; a++)
        for (int b = 0; b < a; b++)
            if (st->axes[a].kind == st->axes[b].kind && st->axes[a].dim == st->axes[b].dim)
                return cfg_fail_key(c, "study.axes", "%s is given twice", st->axes[a].name);
    uint64_t points = comet_study_points(st);
    if (points > (uint64_t)1 << 40)
        return cfg_fail_key(c, "study.axes", "%s%llu design points is too many (at most 2^40)",
                            points == UINT64_MAX ? "more than " : "",
                            (unsigned long long)points);
    CFG_TRY(check_dim_axes(c, st));
    return check_npus(c, st);
}

static void study_init(void *obj)
{
    comet_study *st = obj;
    comet_strategy_defaults(&st->base);
    snprintf(st->name, sizeof st->name, "study");
    st->vary_flash = true;
    st->vary_offload = true;
}

/* The section's keys, then the study checked whole (a cfg_one_section's
 * read). */
static comet_status study_read(cfg_ctx *c, void *obj, const cfg_node *section)
{
    CFG_TRY(read_study(c, obj, section));
    return check_study(c, obj, section);
}

static const cfg_one_section study_document = {
    .name = "study",
    .article = "a",
    .unnamed = "<study>",
    .size = sizeof(comet_study),
    .map_offset = offsetof(comet_study, srcmap),
    .init = study_init,
    .read = study_read,
};

comet_status comet_study_read_text(const char *text, size_t len, const char *filename,
                                   comet_study *study, comet_error *err)
{
    return cfg_one_section_read_text(&study_document, text, len, filename, study, err);
}

comet_status comet_study_read_file(const char *path, comet_study *study, comet_error *err)
{
    return cfg_one_section_read_file(&study_document, path, study, err);
}
