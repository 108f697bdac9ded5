/* ASTRA-sim's input files as comet knobs: the network YAML (per-dimension
 * topology, NPU count, bandwidth in GB/s where GB = 2^30 bytes, latency in
 * ns), the system JSON (collective algorithm per dimension, dataset splits,
 * active chunks, endpoint delay in ns, local memory bandwidth in GB/s of
 * 10^9 bytes, roofline peak in TFLOPS) and the remote-memory JSON. Read
 * with comet's YAML/JSON tree, so errors name file:line:col and the key.
 * Keys comet does not model (scheduling policy, collective optimisation,
 * boost mode, ...) are accepted and ignored; unknown keys are errors. The
 * comm-group JSON maps group names to member ranks; each group is checked
 * against the network as read (no rank twice, none outside it, a sub-grid)
 * so the error can point at the file, the group and the rank. These are
 * files read like comet's own, so they are read here in config/, and the
 * Chakra simulator (src/chakra/) is handed the comet_astra_inputs only. */
#include "comet/chakra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read.h"
#include "sections.h"
#include "../vocab/vocab.h"

typedef comet_status (*doc_fn)(cfg_ctx *c, const cfg_node *root, comet_astra_inputs *out);

static comet_status with_document(const char *path, doc_fn fn, comet_astra_inputs *out,
                                  comet_error *err)
{
    char *text = NULL;
    size_t len = 0;
    comet_status st = cfg_load_file(path, &text, &len, err);
    cfg_node *root = NULL;
    if (!st)
        st = cfg_tree_parse(text, len, path, &root, err);
    cfg_ctx c = {.file = path, .err = err};
    if (!st && (!root || root->kind != CFG_MAP))
        st = comet_error_set(err, COMET_EINPUT, path, root ? root->line : 0,
                             root ? root->column : 0, NULL, "expected a mapping of settings");
    if (!st)
        st = fn(&c, root, out);
    cfg_tree_free(root);
    free(text);
    return st;
}

/* Unknown keys are errors; the ones listed are read by the caller. */
static comet_status only_keys(cfg_ctx *c, const cfg_node *root, const char *const *known)
{
    for (size_t i = 0; i < root->n; i++) {
        const cfg_node *k = cfg_map_key(root, i);
        bool ok = false;
        for (int j = 0; known[j] && !ok; j++)
            ok = strcmp(known[j], k->text) == 0;
        if (!ok) {
            const char *near = cfg_suggest(k->text, known);
            return near ? cfg_fail(c, k, k->text, "unknown key (did you mean \"%s\"?)", near)
                        : cfg_fail(c, k, k->text, "unknown key");
        }
    }
    return COMET_OK;
}

static const cfg_node *list(cfg_ctx *c, const cfg_node *root, const char *key, size_t n,
                            comet_status *st)
{
    const cfg_node *v = cfg_map_find(root, key);
    if (!v) {
        *st = cfg_fail(c, root, key, "missing key \"%s\"", key);
        return NULL;
    }
    if (v->kind != CFG_SEQ || (n && v->n != n)) {
        *st = cfg_fail(c, v, key, n ? "expected a list of %zu values, one per dimension"
                                    : "expected a list, one value per dimension",
                       n);
        return NULL;
    }
    return v;
}

const char *const cfg_astra_topology_names[COMET_TOPO_COUNT + 1] = {
    [COMET_TOPO_RING] = "Ring",
    [COMET_TOPO_FULLY_CONNECTED] = "FullyConnected",
    [COMET_TOPO_SWITCH] = "Switch",
    [COMET_TOPO_COUNT] = NULL,
};

const char *const cfg_astra_algorithm_names[COMET_ALGO_COUNT] = {
    [COMET_ALGO_RING] = "ring",
    [COMET_ALGO_DIRECT] = "direct",
    [COMET_ALGO_HALVING_DOUBLING] = "halvingDoubling",
    [COMET_ALGO_DOUBLE_BINARY_TREE] = "doubleBinaryTree",
};

const char *const cfg_astra_all_to_all_names[COMET_ALGO_COUNT] = {
    [COMET_ALGO_RING] = "direct1",
    [COMET_ALGO_DIRECT] = "direct",
    [COMET_ALGO_HALVING_DOUBLING] = "halvingDoubling",
    [COMET_ALGO_DOUBLE_BINARY_TREE] = "direct1",
};

static comet_status read_network(cfg_ctx *c, const cfg_node *root, comet_astra_inputs *out)
{
    static const char *const known[] = {"topology", "npus_count", "bandwidth", "latency", NULL};
    CFG_TRY(only_keys(c, root, known));
    comet_status st = COMET_OK;
    const cfg_node *topo = list(c, root, "topology", 0, &st);
    if (st)
        return st;
    if (topo->n < 1 || topo->n > COMET_MAX_DIMS)
        return cfg_fail(c, topo, "topology", "needs 1 to %d dimensions", COMET_MAX_DIMS);
    const cfg_node *npus = list(c, root, "npus_count", topo->n, &st);
    const cfg_node *bw = st ? NULL : list(c, root, "bandwidth", topo->n, &st);
    const cfg_node *lat = st ? NULL : list(c, root, "latency", topo->n, &st);
    if (st)
        return st;
    comet_system *sys = &out->system;
    snprintf(sys->name, sizeof sys->name, "astra-network");
    sys->n_dims = (int)topo->n;
    for (size_t d = 0; d < topo->n; d++) {
        char path[64];
        int t;
        snprintf(path, sizeof path, "topology[%zu]", d);
        CFG_TRY(cfg_read_enum(c, cfg_seq_item(topo, d), path, cfg_astra_topology_names, &t));
        comet_net_dim *dim = &sys->dims[d];
        snprintf(dim->name, sizeof dim->name, "dim%zu", d);
        dim->topology = (comet_topology)t;
        snprintf(path, sizeof path, "npus_count[%zu]", d);
        CFG_TRY(cfg_read_int(c, cfg_seq_item(npus, d), path, 1, 1 << 20, &dim->size));
        double v;
        snprintf(path, sizeof path, "bandwidth[%zu]", d);
        /* ASTRA-sim's GB is 2^30 bytes */
        CFG_TRY(cfg_read_real_in(c, cfg_seq_item(bw, d), path, CFG_UNIT_BANDWIDTH, COMET_GIB,
                                 "GB/s", true, &dim->bandwidth));
        snprintf(path, sizeof path, "latency[%zu]", d);
        CFG_TRY(cfg_read_real_in(c, cfg_seq_item(lat, d), path, CFG_UNIT_TIME, 1e-9, "ns", false,
                                 &v));
        /* ASTRA-sim charges the latency per link traversed; comet's is the
         * whole message's */
        dim->latency = v * cfg_astra_links_per_message(dim->topology);
        dim->efficiency = 1.0;
        dim->algorithm = COMET_ALGO_RING;
    }
    return COMET_OK;
}

static comet_status algorithms(cfg_ctx *c, const cfg_node *v, const char *key, comet_system *sys)
{
    static const char *const names[] = {"ring",   "oneRing",         "direct",
                                        "oneDirect", "halvingDoubling", "oneHalvingDoubling",
                                        "doubleBinaryTree", NULL};
    static const comet_algorithm map[] = {COMET_ALGO_RING, COMET_ALGO_RING, COMET_ALGO_DIRECT,
                                          COMET_ALGO_DIRECT, COMET_ALGO_HALVING_DOUBLING,
                                          COMET_ALGO_HALVING_DOUBLING,
                                          COMET_ALGO_DOUBLE_BINARY_TREE};
    CFG_TRY(cfg_expect(c, v, key, CFG_SEQ));
    for (size_t d = 0; d < v->n && d < (size_t)sys->n_dims; d++) {
        char path[64];
        snprintf(path, sizeof path, "%s[%zu]", key, d);
        const cfg_node *item = cfg_seq_item(v, d);
        /* direct may carry a window, e.g. "direct4": the window is not modelled */
        char name[32];
        snprintf(name, sizeof name, "%s", item->kind == CFG_SCALAR ? item->text : "");
        for (char *p = name; *p; p++)
            if (*p >= '0' && *p <= '9')
                *p = '\0';
        int a = vocab_name_index(names, name);
        if (a < 0)
            return cfg_fail(c, item, path,
                            "unknown collective implementation (ring, oneRing, direct, "
                            "oneDirect, halvingDoubling, oneHalvingDoubling, doubleBinaryTree)");
        /* comet uses one algorithm per dimension: the all-reduce one wins */
        if (strcmp(key, "all-reduce-implementation") == 0)
            sys->dims[d].algorithm = map[a];
    }
    return COMET_OK;
}

static comet_status read_system(cfg_ctx *c, const cfg_node *root, comet_astra_inputs *out)
{
    static const char *const known[] = {
        "scheduling-policy", "endpoint-delay", "active-chunks-per-dimension",
        "preferred-dataset-splits", "all-reduce-implementation", "all-gather-implementation",
        "reduce-scatter-implementation", "all-to-all-implementation", "collective-optimization",
        "local-mem-bw", "boost-mode", "roofline-enabled", "peak-perf", "local-reduction-delay",
        "model-shared-bus", "injection-scale", "trace-enabled", "replay-only", "track-local-mem",
        "intra-dimension-scheduling", "inter-dimension-scheduling", NULL};
    CFG_TRY(only_keys(c, root, known));
    const cfg_node *v;
    int64_t k;
    if ((v = cfg_map_find(root, "preferred-dataset-splits"))) {
        CFG_TRY(cfg_read_int(c, v, "preferred-dataset-splits", 1, 65536, &k));
        out->options.splits = k;
    }
    if ((v = cfg_map_find(root, "active-chunks-per-dimension"))) {
        CFG_TRY(cfg_read_int(c, v, "active-chunks-per-dimension", 1, 64, &k));
        out->options.active_chunks = (int)k;
    }
    if ((v = cfg_map_find(root, "endpoint-delay"))) {
        CFG_TRY(cfg_read_real_in(c, v, "endpoint-delay", CFG_UNIT_TIME, 1e-9, "ns", false,
                                 &out->options.endpoint_delay));
    }
    if ((v = cfg_map_find(root, "local-mem-bw"))) {
        /* here GB is 10^9 bytes */
        CFG_TRY(cfg_read_real_in(c, v, "local-mem-bw", CFG_UNIT_BANDWIDTH, 1e9, "GB/s", true,
                                 &out->options.local_mem_bw));
    }
    if ((v = cfg_map_find(root, "roofline-enabled"))) {
        CFG_TRY(cfg_read_int(c, v, "roofline-enabled", 0, 1, &k));
        out->roofline = k == 1;
    }
    if ((v = cfg_map_find(root, "peak-perf"))) {
        CFG_TRY(cfg_read_real_in(c, v, "peak-perf", CFG_UNIT_FLOP_RATE, 1e12, "TFLOPS", true,
                                 &out->peak_perf));
    }
    if ((v = cfg_map_find(root, "inter-dimension-scheduling")) && v->kind == CFG_SCALAR &&
        strcmp(v->text, "themis") == 0)
        out->options.scheduler = COMET_SCHED_THEMIS;
    static const char *const impls[] = {"all-reduce-implementation", "all-gather-implementation",
                                        "reduce-scatter-implementation",
                                        "all-to-all-implementation", NULL};
    for (int i = 0; impls[i]; i++)
        if ((v = cfg_map_find(root, impls[i])))
            CFG_TRY(algorithms(c, v, impls[i], &out->system));
    return COMET_OK;
}

static comet_status read_memory(cfg_ctx *c, const cfg_node *root, comet_astra_inputs *out)
{
    static const char *const known[] = {"memory-type", "num-nodes", "num-npus-per-node",
                                        "remote-mem-latency", "remote-mem-bw", NULL};
    static const char *const types[] = {"NO_MEMORY_EXPANSION", "PER_NODE_MEMORY_EXPANSION",
                                        "PER_NPU_MEMORY_EXPANSION", "MEMORY_POOL", NULL};
    CFG_TRY(only_keys(c, root, known));
    const cfg_node *v = cfg_map_find(root, "memory-type");
    if (!v)
        return cfg_fail(c, root, "memory-type", "missing key \"memory-type\"");
    int t;
    CFG_TRY(cfg_read_enum(c, v, "memory-type", types, &t));
    if (t == 0)
        return COMET_OK;
    if ((v = cfg_map_find(root, "remote-mem-latency"))) {
        CFG_TRY(cfg_read_real_in(c, v, "remote-mem-latency", CFG_UNIT_TIME, 1e-9, "ns", false,
                                 &out->mem_latency));
    }
    if (!(v = cfg_map_find(root, "remote-mem-bw")))
        return cfg_fail(c, root, "remote-mem-bw", "missing key \"remote-mem-bw\"");
    CFG_TRY(cfg_read_real_in(c, v, "remote-mem-bw", CFG_UNIT_BANDWIDTH, 1e9, "GB/s", true,
                             &out->mem_bandwidth));
    return COMET_OK;
}

comet_status comet_astra_read(const char *network, const char *system, const char *memory,
                              comet_astra_inputs *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    comet_sim_options_defaults(&out->options);
    out->options.astra_rounding = true;
    out->system.collective_chunks = 1;
    snprintf(out->network_file, sizeof out->network_file, "%s", network);
    comet_status st = with_document(network, read_network, out, err);
    if (!st && system)
        st = with_document(system, read_system, out, err);
    if (!st && memory)
        st = with_document(memory, read_memory, out, err);
    return st;
}

#define MAX_RANKS (1 << 20) /* as many trace files as comet reads */

static int rank_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* NPUs of the network, or MAX_RANKS when it has more (or none is known). */
static int64_t network_ranks(const comet_system *sys)
{
    int64_t npus = sys->n_dims > 0 ? 1 : MAX_RANKS;
    for (int d = 0; d < sys->n_dims && npus < MAX_RANKS; d++)
        npus = sys->dims[d].size > 0 && sys->dims[d].size < MAX_RANKS
                   ? npus * sys->dims[d].size
                   : MAX_RANKS;
    return npus < MAX_RANKS ? npus : MAX_RANKS;
}

/* A rank the group lacks to be a sub-grid of the network (every
 * combination of the coordinates its members take along each dimension),
 * or -1 when it is one. member marks the group's ranks. */
static int64_t missing_rank(const comet_system *sys, const comet_comm_group *g,
                            const unsigned char *member, comet_status *st, comet_error *err)
{
    int dims = sys->n_dims;
    int64_t *coords[COMET_MAX_DIMS] = {0}, n_coords[COMET_MAX_DIMS] = {0};
    int64_t stride[COMET_MAX_DIMS], combos = 1, found = -1;
    for (int d = 0; d < dims; d++) {
        /* ranks are below MAX_RANKS: past it, every coordinate is 0 */
        stride[d] = d == 0 ? 1
                    : stride[d - 1] >= MAX_RANKS || sys->dims[d - 1].size >= MAX_RANKS
                        ? MAX_RANKS
                        : stride[d - 1] * sys->dims[d - 1].size;
        coords[d] = malloc(sizeof *coords[d] * (size_t)g->n);
        if (!coords[d]) {
            *st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            goto done;
        }
        for (int k = 0; k < g->n; k++)
            coords[d][k] = (g->ranks[k] / stride[d]) % sys->dims[d].size;
        qsort(coords[d], (size_t)g->n, sizeof *coords[d], rank_cmp);
        for (int k = 0; k < g->n; k++)
            if (k == 0 || coords[d][k] != coords[d][n_coords[d] - 1])
                coords[d][n_coords[d]++] = coords[d][k];
        combos = combos > g->n ? combos : combos * n_coords[d];
    }
    if (combos <= g->n)
        goto done; /* as many combinations as (distinct) members: all there */
    /* count through the combinations; one of the first n + 1 is missing */
    int64_t at[COMET_MAX_DIMS] = {0};
    for (;;) {
        int64_t rank = 0;
        for (int d = 0; d < dims; d++)
            rank += coords[d][at[d]] * stride[d];
        if (!member[rank]) {
            found = rank;
            break;
        }
        int d = 0;
        while (d < dims && ++at[d] == n_coords[d])
            at[d++] = 0;
        if (d == dims)
            break;
    }
done:
    for (int d = 0; d < dims; d++)
        free(coords[d]);
    return found;
}

/* Every rank once, in the network, and the group a sub-grid of it (comet
 * times a collective on the dimensions its group spans). */
static comet_status check_group(cfg_ctx *c, const cfg_node *list, const comet_comm_group *g,
                                const comet_system *sys, unsigned char *member)
{
    int64_t npus = network_ranks(sys);
    comet_status st = COMET_OK;
    int k = 0;
    for (; k < g->n && !st; k++) {
        char path[64];
        snprintf(path, sizeof path, "%s[%d]", g->name, k);
        if (g->ranks[k] >= npus)
            st = cfg_fail(c, cfg_seq_item(list, (size_t)k), path,
                          "comm group \"%s\": rank %d is not in the network's %lld NPUs",
                          g->name, g->ranks[k], (long long)npus);
        else if (member[g->ranks[k]])
            st = cfg_fail(c, cfg_seq_item(list, (size_t)k), path,
                          "comm group \"%s\": rank %d is listed twice", g->name, g->ranks[k]);
        else
            member[g->ranks[k]] = 1;
    }
    bool grid = sys->n_dims > 0;
    for (int d = 0; d < sys->n_dims; d++)
        grid = grid && sys->dims[d].size >= 1;
    if (!st && grid) {
        int64_t lacks = missing_rank(sys, g, member, &st, c->err);
        if (!st && lacks >= 0)
            st = cfg_fail(c, list, g->name,
                          "comm group \"%s\" lacks rank %lld to be a sub-grid of the network "
                          "(comet times a collective on the dimensions its group spans)",
                          g->name, (long long)lacks);
    }
    while (k-- > 0) /* clear the marks for the next group */
        if (g->ranks[k] < npus)
            member[g->ranks[k]] = 0;
    return st;
}

static comet_status read_group_list(cfg_ctx *c, const cfg_node *k, const cfg_node *v,
                                    comet_comm_group *g, const comet_system *sys,
                                    unsigned char *member)
{
    if (strlen(k->text) >= sizeof g->name)
        return cfg_fail(c, k, k->text, "group names are at most %zu characters",
                        sizeof g->name - 1);
    snprintf(g->name, sizeof g->name, "%s", k->text);
    CFG_TRY(cfg_expect(c, v, k->text, CFG_SEQ));
    if (v->n < 1)
        return cfg_fail(c, v, k->text, "a group needs at least one rank");
    g->ranks = malloc(sizeof *g->ranks * v->n);
    if (!g->ranks)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t r = 0; r < v->n; r++) {
        char path[64];
        int64_t rank;
        snprintf(path, sizeof path, "%s[%zu]", g->name, r);
        CFG_TRY(cfg_read_int(c, cfg_seq_item(v, r), path, 0, MAX_RANKS - 1, &rank));
        g->ranks[g->n++] = (int)rank;
    }
    return check_group(c, v, g, sys, member);
}

static comet_status read_groups(cfg_ctx *c, const cfg_node *root, comet_astra_inputs *out)
{
    out->groups = calloc(root->n ? root->n : 1, sizeof *out->groups);
    if (!out->groups)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    unsigned char *member = calloc(MAX_RANKS, 1); /* marks one group's ranks */
    if (!member)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = COMET_OK;
    for (size_t i = 0; i < root->n && !st; i++)
        st = read_group_list(c, cfg_map_key(root, i), cfg_map_value(root, i),
                             &out->groups[out->n_groups++], &out->system, member);
    free(member);
    return st;
}

comet_status comet_astra_read_groups(const char *path, comet_astra_inputs *in, comet_error *err)
{
    if (!path || strcmp(path, "empty") == 0)
        return COMET_OK;
    snprintf(in->groups_file, sizeof in->groups_file, "%s", path);
    comet_status st = with_document(path, read_groups, in, err);
    return st;
}

void comet_astra_free(comet_astra_inputs *in)
{
    for (int i = 0; i < in->n_groups; i++)
        free(in->groups[i].ranks);
    free(in->groups);
    in->groups = NULL;
    in->n_groups = 0;
}
