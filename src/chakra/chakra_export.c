/* Exporting a training step as Chakra traces for ASTRA-sim (and comet).
 * The step graph comet simulate builds (one task per collective) becomes
 * one node list per pipeline stage; every NPU of the stage gets that list
 * with its own communicator groups and pipeline and ring peers. Ranks are
 * numbered so every group is a sub-grid of the network: within each
 * dimension TP innermost, then CP, then DP, then PP (Megatron's order),
 * DP's digit split into the EP digit (low) and the expert-DP digit (high),
 * as place[EP]'s spans divide place[DP]'s. Collectives name their group
 * with pg_name (a number), listed in the comm-group JSON: TP, dense
 * gradient (dp x cp), expert gradient ((dp/ep) x cp), EP and CP groups.
 * Ring context parallelism's K/V exchange is written as point-to-point
 * sends and receives around the CP ring beside the layer's compute
 * (docs/chakra.md, Export). Stream order survives
 * as control dependencies on the previous task of the same stream. Compute
 * time is written both as duration_micros and as num_ops at a roofline
 * peak of 1 TFLOP/s, so it survives to the picosecond. Beside the traces:
 * the network YAML, system JSON and remote-memory JSON for the same run
 * (a network ASTRA-sim cannot draw, a torus, mesh or Clos dimension or a
 * one-way ring, is refused up front).
 * Every file goes to a temporary first and all are renamed into place only
 * when all were written (comet/files.h): a failed export leaves no file,
 * and an earlier export under the same prefix stays whole. Ranks an
 * earlier, larger export left (PREFIX.N.et from this export's rank count
 * on, up to the first name missing or not a regular file) are removed in
 * the same commit; ranks past such a gap stay (docs/chakra.md). */
#include "comet/chakra.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comet/network.h"
#include "comet/strategy.h"
#include "../sim/sim.h"
#include "comet/files.h"
#include "../config/config.h"
#include "../vocab/vocab.h"
#include "et_write.h"

/* A rank's coordinates: its index in each group (DP's index split as
 * EP's, low, and the expert-DP group's, dp/ep, high). */
enum { XI_TP = COMET_DIGIT_TP, XI_CP = COMET_DIGIT_CP, XI_EP = COMET_DIGIT_EP,
       XI_EDP = COMET_DIGIT_EDP, XI_PP = COMET_DIGIT_PP, XI_COUNT = COMET_RANK_DIGITS };
/* The groups written: step_group's (sim.h), each group's members
 * differing in step_group_digits' coordinates. */
typedef step_group export_group;
/* Coordinates outer to inner, for numbering groups and listing members. */
static const int xi_order[XI_COUNT] = {XI_TP, XI_PP, XI_EDP, XI_EP, XI_CP};

typedef struct exporter {
    const comet_system *sys;
    step_graph sg;
    int64_t sizes[COMET_MAX_DIMS];
    int64_t spans[XI_COUNT][COMET_MAX_DIMS]; /* each coordinate's, per dimension */
    int64_t counts[XI_COUNT];                /* the values each coordinate takes */
    int64_t npus;
    int *in_first, *in_edges;  /* incoming edges grouped by task */
    int *send_to;              /* per task: the stage a send feeds, else -1 */
    int *stage_first, *stage_tasks; /* the tasks of each stage, in id order */
    /* zero-length joins are not written (ASTRA-sim has no use for them and
     * rejects metadata nodes): who depends on one depends on its own
     * dependencies instead, kept in the stage's pool at fold_at, fold_n */
    bool *folded;
    size_t *fold_at, *fold_n;
    const char *prefix;
    const comet_export_options *options; /* the cancel callback, or NULL */
    comet_files *files;        /* every file written, renamed into place at the end */
} exporter;

/* The span of coordinate i in network dimension d (1 where unused). */
static int64_t coord_span(const exporter *x, int i, int d)
{
    return x->spans[i][d];
}

/* How many values coordinate i takes. */
static int64_t coord_count(const exporter *x, int i)
{
    return x->counts[i];
}

/* idx[] -> rank (see the top comment). */
static int64_t rank_of(const exporter *x, const int64_t idx[XI_COUNT])
{
    return comet_strategy_npu_of(x->spans, x->sizes, x->sys->n_dims, idx);
}

/* The members of a group, or (fixed) how many groups of the kind there are. */
static int64_t group_size(const exporter *x, export_group g)
{
    int64_t n = 1;
    for (int i = 0; i < XI_COUNT; i++)
        if (step_group_digits(g) >> i & 1u)
            n *= coord_count(x, i);
    return n;
}

static int64_t group_count(const exporter *x, export_group g)
{
    int64_t n = 1;
    for (int i = 0; i < XI_COUNT; i++)
        if (!(step_group_digits(g) >> i & 1u) && i != XI_PP)
            n *= coord_count(x, i);
    return n * x->sg.s.pp;
}

/* Whether groups of kind g are written: more than one member, and the
 * expert gradient groups only with expert parallelism (else no expert
 * gradients are reduced apart). */
static bool group_written(const exporter *x, export_group g)
{
    return group_size(x, g) > 1 && (g != STEP_G_EXPERT_GRAD || x->sg.s.ep > 1);
}

/* The coordinates in `mask` of idx[] as one number (xi_order, outer to
 * inner), and back. */
static int64_t coords_pack(const exporter *x, unsigned mask, const int64_t idx[XI_COUNT])
{
    int64_t n = 0;
    for (int k = 0; k < XI_COUNT; k++)
        if (mask >> xi_order[k] & 1u)
            n = n * coord_count(x, xi_order[k]) + idx[xi_order[k]];
    return n;
}

static void coords_unpack(const exporter *x, unsigned mask, int64_t n, int64_t idx[XI_COUNT])
{
    for (int k = XI_COUNT - 1; k >= 0; k--)
        if (mask >> xi_order[k] & 1u) {
            idx[xi_order[k]] = n % coord_count(x, xi_order[k]);
            n /= coord_count(x, xi_order[k]);
        }
}

/* Groups are numbered as PyTorch numbers process groups (Chakra's pg_name
 * holds such numbers, and ASTRA-sim reads them as integers): 1, 2, ...,
 * kind after kind (TP, dense gradient, expert gradient, EP, CP; kinds of
 * one member left out), and within a kind by the coordinates its members
 * share, in xi_order (so TP groups go by (pp, dp, cp), the dense gradient
 * groups by (tp, pp), as before context and expert parallelism). */
static int64_t group_id(const exporter *x, export_group g, const int64_t idx[XI_COUNT])
{
    int64_t base = 1;
    for (int k = 0; k < (int)g; k++)
        if (group_written(x, (export_group)k))
            base += group_count(x, (export_group)k);
    return base + coords_pack(x, ~step_group_digits(g) & ((1u << XI_COUNT) - 1), idx);
}

static void group_name(const exporter *x, export_group g, const int64_t idx[XI_COUNT], char *out,
                       size_t cap)
{
    snprintf(out, cap, "%lld", (long long)group_id(x, g, idx));
}

/* Whether the caller asked to stop: COMET_ECANCELED, else COMET_OK. */
static comet_status check_cancel(const exporter *x, comet_error *err)
{
    const comet_export_options *o = x->options;
    if (o && o->cancelled && o->cancelled(o->context))
        return comet_error_set(err, COMET_ECANCELED, NULL, 0, 0, NULL,
                               "export interrupted; none of its files was left");
    return COMET_OK;
}

/* ---- the side files --------------------------------------------------------------- */

typedef enum { SIDE_NETWORK, SIDE_SYSTEM, SIDE_MEMORY, SIDE_GROUPS, SIDE_COUNT } side_file;
static const char *const side_suffix[SIDE_COUNT] = {"network.yml", "system.json", "memory.json",
                                                    "groups.json"};

/* Write the side file PREFIX.suffix from b into the set, then empty b
 * for the next. */
static comet_status write_side(const exporter *x, comet_buf *b, side_file which,
                               comet_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.%s", x->prefix, side_suffix[which]);
    comet_status st = COMET_OK;
    FILE *f = NULL;
    if (b->failed)
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    else if (!(st = comet_files_begin(x->files, path, &f, err)))
        st = comet_files_end(x->files, fputs(b->data ? b->data : "", f) < 0, err);
    comet_buf_free(b);
    comet_buf_init(b);
    return st;
}

/* What the network and memory files hold, as ASTRA-sim's units: the
 * bandwidth of a link in GB/s of 2^30 bytes (after efficiency), its
 * latency per link in ns (a switch's two links share it), the remote
 * memory's latency in ns and bandwidth in GB/s of 10^9 bytes. */
static double net_bandwidth_gb(const comet_net_dim *dim)
{
    double eff = vocab_efficiency(dim->efficiency);
    return dim->bandwidth * eff / COMET_GIB;
}

static double net_latency_ns(const comet_net_dim *dim)
{
    return dim->latency / cfg_astra_links_per_message(dim->topology) * 1e9;
}

/* One value as comet's ASTRA-sim reader reads it back (file value times
 * the file's unit, zero allowed where the reader allows it) against the
 * same sane range; refused naming the system key it comes from. */
static comet_status check_written(double file_value, double scale, const char *unit,
                                  cfg_unit_kind kind, bool zero_ok, const char *file,
                                  const char *key, comet_error *err)
{
    double si = file_value * scale;
    if ((zero_ok && si == 0.0) || cfg_units_in_range(kind, si))
        return COMET_OK;
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, key,
                           "the export would write %.6g %s into %s, outside the sane range "
                           "%s that comet simulate --chakra accepts",
                           file_value, unit, file, cfg_units_range(kind));
}

/* Every value of the network and memory files (the system file holds only
 * constants) readable by comet simulate --chakra, checked before any file
 * is written. */
static comet_status check_side_values(const exporter *x, comet_error *err)
{
    const comet_system *sys = x->sys;
    char key[160];
    for (int d = 0; d < sys->n_dims; d++) {
        if (x->sizes[d] <= 1)
            continue; /* not written (write_side_files) */
        const comet_net_dim *dim = &sys->dims[d];
        snprintf(key, sizeof key, "system.network[%d].bandwidth", d);
        comet_status st = check_written(net_bandwidth_gb(dim), COMET_GIB, "GB/s",
                                        CFG_UNIT_BANDWIDTH, false, "the network file", key, err);
        if (st)
            return st;
        snprintf(key, sizeof key, "system.network[%d].latency", d);
        st = check_written(net_latency_ns(dim), 1e-9, "ns", CFG_UNIT_TIME, true,
                           "the network file", key, err);
        if (st)
            return st;
    }
    if (!(x->sg.exp_bw > 0.0))
        return COMET_OK;
    comet_status st = check_written(x->sg.exp_latency * 1e9, 1e-9, "ns", CFG_UNIT_TIME, true,
                                    "the memory file", "system.expansion.latency", err);
    if (!st)
        st = check_written(x->sg.exp_bw / 1e9, 1e9, "GB/s", CFG_UNIT_BANDWIDTH, false,
                           "the memory file", "system.expansion.bandwidth", err);
    return st;
}

/* ASTRA-sim's network file knows Ring, FullyConnected and Switch, its
 * rings running both ways: an exported dimension (more than one NPU) of
 * any other topology, or a one-way ring, is refused before any file is
 * written, naming the dimension's key. */
static comet_status check_topologies(const exporter *x, comet_error *err)
{
    const char *const *astra = cfg_astra_topology_names;
    char key[64];
    for (int d = 0; d < x->sys->n_dims; d++) {
        const comet_net_dim *dim = &x->sys->dims[d];
        if (x->sizes[d] <= 1)
            continue; /* not written (write_side_files) */
        if (dim->shape.unidirectional) {
            snprintf(key, sizeof key, "system.network[%d].bidirectional", d);
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, key,
                                   "false: ASTRA-sim's Ring sends both ways; export a system "
                                   "whose rings are bidirectional");
        }
        if ((unsigned)dim->topology < COMET_TOPO_COUNT && astra[dim->topology])
            continue;
        char theirs[96] = "", ours[96] = "";
        int n = 0;
        while (astra[n])
            n++;
        for (int t = 0; t < n; t++) {
            size_t a = strlen(theirs), o = strlen(ours);
            snprintf(theirs + a, sizeof theirs - a, "%s%s", t ? ", " : "", astra[t]);
            snprintf(ours + o, sizeof ours - o, "%s%s", t == 0 ? "" : t + 1 < n ? ", " : " or ",
                     comet_topology_name((comet_topology)t));
        }
        snprintf(key, sizeof key, "system.network[%d].topology", d);
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, key,
                               "%s has no ASTRA-sim equivalent (%s); export a system with %s "
                               "dimensions",
                               comet_topology_name(dim->topology), theirs, ours);
    }
    return COMET_OK;
}

static comet_status write_side_files(const exporter *x, comet_buf *b, comet_error *err)
{
    const char *const *topo = cfg_astra_topology_names, *const *algo = cfg_astra_algorithm_names;
    const comet_system *sys = x->sys;
    /* dimensions of one NPU are left out: ASTRA-sim rejects them, and they
     * change neither the rank numbering nor any collective */
    int keep[COMET_MAX_DIMS], nk = 0;
    for (int d = 0; d < sys->n_dims; d++)
        if (x->sizes[d] > 1)
            keep[nk++] = d;
    comet_buf_printf(b, "# written by comet export for %s\ntopology: [", sys->name);
    for (int k = 0; k < nk; k++)
        comet_buf_printf(b, "%s %s", k ? "," : "", topo[sys->dims[keep[k]].topology]);
    comet_buf_printf(b, " ]\nnpus_count: [");
    for (int k = 0; k < nk; k++)
        comet_buf_printf(b, "%s %lld", k ? "," : "", (long long)x->sizes[keep[k]]);
    comet_buf_printf(b, " ]\nbandwidth: [");
    for (int k = 0; k < nk; k++)
        comet_buf_printf(b, "%s %.17g", k ? "," : "", net_bandwidth_gb(&sys->dims[keep[k]]));
    comet_buf_printf(b, " ]\nlatency: [");
    /* per link, as ASTRA-sim counts it: a switch's two links share the latency */
    for (int k = 0; k < nk; k++)
        comet_buf_printf(b, "%s %.17g", k ? "," : "", net_latency_ns(&sys->dims[keep[k]]));
    comet_buf_printf(b, " ]\n");
    comet_status st = write_side(x, b, SIDE_NETWORK, err);
    if (st)
        return st;

    comet_buf_printf(b, "{\n  \"scheduling-policy\": \"FIFO\",\n  \"endpoint-delay\": 0,\n"
                        "  \"active-chunks-per-dimension\": 1,\n"
                        "  \"preferred-dataset-splits\": %lld,\n",
                     (long long)comet_collective_chunks(sys));
    static const char *const impls[] = {"all-reduce-implementation", "all-gather-implementation",
                                        "reduce-scatter-implementation",
                                        "all-to-all-implementation"};
    for (int i = 0; i < 4; i++) {
        const char *const *names = i == 3 ? cfg_astra_all_to_all_names : algo;
        comet_buf_printf(b, "  \"%s\": [", impls[i]);
        for (int k = 0; k < nk; k++)
            comet_buf_printf(b, "%s\"%s\"", k ? ", " : "", names[sys->dims[keep[k]].algorithm]);
        comet_buf_printf(b, "],\n");
    }
    /* local memory far faster than anything else: ASTRA-sim's roofline
     * needs a bandwidth, and reductions then cost (almost) nothing, as in
     * comet's closed forms; 10^7 GB/s is 10 PB/s, the top of the sane
     * range comet's readers accept (docs/config.md) */
    /* comet's all-reduce over several dimensions reduce-scatters on each
     * inner one, all-reduces on the outermost and all-gathers back
     * (comet_collective_plan): ASTRA-sim's localBWAware; its baseline
     * all-reduces the whole buffer on every dimension (Sys.cc) */
    comet_buf_printf(b, "  \"collective-optimization\": \"localBWAware\",\n"
                        "  \"local-mem-bw\": 10000000,\n"
                        "  \"roofline-enabled\": 1,\n  \"peak-perf\": 1\n}\n");
    st = write_side(x, b, SIDE_SYSTEM, err);
    if (st)
        return st;

    if (x->sg.exp_bw > 0.0)
        comet_buf_printf(b, "{\n  \"memory-type\": \"PER_NPU_MEMORY_EXPANSION\",\n"
                            "  \"remote-mem-latency\": %.17g,\n  \"remote-mem-bw\": %.17g\n}\n",
                         x->sg.exp_latency * 1e9, x->sg.exp_bw / 1e9);
    else
        comet_buf_printf(b, "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n");
    st = write_side(x, b, SIDE_MEMORY, err);
    if (st)
        return st;

    /* every group of more than one rank (PP has no collectives), in the
     * order of their numbers */
    comet_buf_printf(b, "{");
    bool first = true;
    const unsigned all = (1u << XI_COUNT) - 1;
    for (int g = 0; g < STEP_G_COUNT; g++) {
        int64_t size = group_size(x, (export_group)g), count = group_count(x, (export_group)g);
        if (!group_written(x, (export_group)g))
            continue;
        for (int64_t k = 0; k < count; k++) {
            int64_t idx[XI_COUNT] = {0};
            coords_unpack(x, ~step_group_digits(g) & all, k, idx);
            char name[32];
            group_name(x, (export_group)g, idx, name, sizeof name);
            comet_buf_printf(b, "%s\n  \"%s\": [", first ? "" : ",", name);
            first = false;
            for (int64_t j = 0; j < size; j++) {
                coords_unpack(x, step_group_digits(g), j, idx);
                comet_buf_printf(b, "%s%lld", j ? ", " : "", (long long)rank_of(x, idx));
            }
            comet_buf_printf(b, "]");
        }
    }
    comet_buf_printf(b, "\n}\n");
    return write_side(x, b, SIDE_GROUPS, err);
}

/* ---- the traces ------------------------------------------------------------------- */

/* Incoming edges of every task, grouped (counting sort by target). */
static comet_status index_edges(exporter *x, comet_error *err)
{
    const sim_graph *g = &x->sg.g;
    x->in_first = calloc((size_t)g->n + 1, sizeof *x->in_first);
    x->in_edges = malloc(sizeof *x->in_edges * (size_t)(g->n_edges ? g->n_edges : 1));
    if (!x->in_first || !x->in_edges)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int e = 0; e < g->n_edges; e++)
        x->in_first[g->edge_to[e] + 1]++;
    for (int t = 0; t < g->n; t++)
        x->in_first[t + 1] += x->in_first[t];
    int *fill = malloc(sizeof *fill * (size_t)(g->n ? g->n : 1));
    x->send_to = malloc(sizeof *x->send_to * (size_t)(g->n ? g->n : 1));
    if (!fill || !x->send_to) {
        free(fill);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    for (int t = 0; t < g->n; t++)
        x->send_to[t] = -1;
    for (int e = 0; e < g->n_edges; e++)
        if (g->tasks[g->edge_from[e]].stage != g->tasks[g->edge_to[e]].stage)
            x->send_to[g->edge_from[e]] = g->tasks[g->edge_to[e]].stage;
    memcpy(fill, x->in_first, sizeof *fill * (size_t)g->n);
    for (int e = 0; e < g->n_edges; e++)
        x->in_edges[fill[g->edge_to[e]]++] = g->edge_from[e];
    free(fill);
    /* tasks by stage (counting sort keeps id order within a stage) */
    int stages = x->sg.stages;
    x->stage_first = calloc((size_t)stages + 1, sizeof *x->stage_first);
    x->stage_tasks = malloc(sizeof *x->stage_tasks * (size_t)(g->n ? g->n : 1));
    x->folded = calloc((size_t)g->n + 1, sizeof *x->folded);
    x->fold_at = calloc((size_t)g->n + 1, sizeof *x->fold_at);
    x->fold_n = calloc((size_t)g->n + 1, sizeof *x->fold_n);
    if (!x->stage_first || !x->stage_tasks || !x->folded || !x->fold_at || !x->fold_n)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int t = 0; t < g->n; t++)
        x->stage_first[g->tasks[t].stage + 1]++;
    for (int st = 0; st < stages; st++)
        x->stage_first[st + 1] += x->stage_first[st];
    int *at = malloc(sizeof *at * (size_t)(stages ? stages : 1));
    if (!at)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    memcpy(at, x->stage_first, sizeof *at * (size_t)stages);
    for (int t = 0; t < g->n; t++)
        x->stage_tasks[at[g->tasks[t].stage]++] = t;
    free(at);
    return COMET_OK;
}

typedef struct stage_nodes {
    comet_et_node *nodes;
    size_t n, cap;
    uint64_t *deps;          /* pool; node.deps are offsets until fixed up */
    size_t n_deps, cap_deps;
    int *peer_stage;         /* per node: the other stage of a send or receive, else -1 */
    signed char *peer_cp;    /* per node: a ring send's next CP rank (+1), a ring
                              * receive's previous (-1), else 0 */
    export_group *group;     /* per node: a collective's group */
    char (*names)[64];       /* per node: its name (node.name points here when written) */
} stage_nodes;

static bool grow_nodes(stage_nodes *sn)
{
    if (sn->n < sn->cap)
        return true;
    size_t cap = sn->cap ? 2 * sn->cap : 1024;
    comet_et_node *n = realloc(sn->nodes, sizeof *n * cap);
    if (n)
        sn->nodes = n;
    int *p = n ? realloc(sn->peer_stage, sizeof *p * cap) : NULL;
    if (p)
        sn->peer_stage = p;
    signed char *c = p ? realloc(sn->peer_cp, sizeof *c * cap) : NULL;
    if (c)
        sn->peer_cp = c;
    export_group *g = c ? realloc(sn->group, sizeof *g * cap) : NULL;
    if (g)
        sn->group = g;
    char(*names)[64] = g ? realloc(sn->names, sizeof *names * cap) : NULL;
    if (names)
        sn->names = names;
    if (!n || !p || !c || !g || !names)
        return false;
    sn->cap = cap;
    return true;
}

static bool add_dep(stage_nodes *sn, uint64_t id)
{
    if (sn->n_deps == sn->cap_deps) {
        size_t cap = sn->cap_deps ? 2 * sn->cap_deps : 4096;
        uint64_t *p = realloc(sn->deps, sizeof *p * cap);
        if (!p)
            return false;
        sn->deps = p;
        sn->cap_deps = cap;
    }
    sn->deps[sn->n_deps++] = id;
    return true;
}

static comet_et_node *new_node(stage_nodes *sn, uint64_t id, comet_et_type type, const char *name)
{
    if (!grow_nodes(sn))
        return NULL;
    comet_et_node *n = &sn->nodes[sn->n];
    memset(n, 0, sizeof *n);
    n->id = id;
    n->type = type;
    n->comm_src = n->comm_dst = -1;
    snprintf(sn->names[sn->n], sizeof sn->names[sn->n], "%s", name);
    n->deps = (uint64_t *)(uintptr_t)sn->n_deps; /* offset, fixed up later */
    sn->peer_stage[sn->n] = -1;
    sn->peer_cp[sn->n] = 0;
    sn->group[sn->n] = STEP_G_TP;
    sn->n++;
    return n;
}

/* A dependency on task `from`: its node, or what a folded join waited for. */
static bool dep_on(stage_nodes *sn, int from, const bool *folded, const size_t *fold_at,
                   const size_t *fold_n)
{
    if (!folded[from])
        return add_dep(sn, (uint64_t)from + 1);
    for (size_t i = 0; i < fold_n[from]; i++)
        if (!add_dep(sn, sn->deps[fold_at[from] + i])) /* by index: the pool may move */
            return false;
    return true;
}

/* Ring context parallelism's K/V exchange of ring task t (recorded by the
 * step graph after pass task `pass`): per step a send of the block to the
 * next CP rank and a receive of one from the previous, the forward's cp-1
 * blocks as cp-1 messages, the backward's 2(cp-1) as cp messages (K/V, then
 * K/V with the gradient block, then the last gradient block), the sizes
 * cp_ring_times prices. The first send and receive wait for what the pass
 * waits for, so they run beside its compute; each later one waits for the
 * receive before it (a rank forwards what it received). Ids from *next_id
 * on; tags t * cp + step past the task count, so unique. *last_recv: the
 * last receive, which the layer's next work waits for. */
static comet_status ring_nodes(const exporter *x, stage_nodes *sn, int t, int pass,
                               uint64_t *next_id, uint64_t *last_recv, comet_error *err)
{
    const sim_graph *g = &x->sg.g;
    const step_coll *c = &x->sg.coll[t];
    int64_t cp = x->sg.s.cp;
    bool backward = c->on == STEP_ON_RING_BWD;
    int64_t messages = backward ? cp : cp - 1;
    double block = ceil(c->bytes);
    if ((double)g->n + (double)(t + 1) * (double)cp >= 2147483647.0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy.cp",
                               "the ring's tags would pass 2^31 - 1, the most Chakra's "
                               "comm_tag holds for ASTRA-sim");
    const sim_task *k = &g->tasks[t];
    size_t start_at = pass >= 0 ? x->fold_at[pass] : 0, start_n = pass >= 0 ? x->fold_n[pass] : 0;
    uint64_t prev_recv = 0;
    for (int64_t step = 0; step < messages; step++) {
        double bytes = backward && step > 0 && step < cp - 1 ? 2.0 * block : block;
        for (int dir = 1; dir >= -1; dir -= 2) {
            char name[64];
            snprintf(name, sizeof name, "cp ring %s%s mb%d layer%d step%lld",
                     dir > 0 ? "send" : "recv", backward ? " bwd" : "", k->micro, k->layer,
                     (long long)step);
            size_t first_dep = sn->n_deps;
            if (step == 0) {
                for (size_t i = 0; i < start_n; i++)
                    if (!add_dep(sn, sn->deps[start_at + i])) /* by index: the pool may move */
                        goto oom;
            } else if (!add_dep(sn, prev_recv)) {
                goto oom;
            }
            comet_et_node *n = new_node(sn, *next_id, dir > 0 ? COMET_ET_SEND : COMET_ET_RECV,
                                        name);
            if (!n)
                goto oom;
            n->comm_size = bytes;
            n->comm_tag = (int64_t)g->n + (int64_t)t * cp + step;
            n->deps = (uint64_t *)(uintptr_t)first_dep;
            n->n_deps = sn->n_deps - first_dep;
            sn->peer_cp[sn->n - 1] = (signed char)dir;
            if (dir < 0)
                prev_recv = *next_id;
            ++*next_id;
        }
    }
    *last_recv = prev_recv;
    return COMET_OK;
oom:
    return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
}

/* The node list of one stage (ranks fill in peers and groups). */
static comet_status stage_template(const exporter *x, int stage, stage_nodes *sn,
                                   comet_error *err)
{
    const sim_graph *g = &x->sg.g;
    int last_on[STEP_R_PER_STAGE];
    for (int r = 0; r < STEP_R_PER_STAGE; r++)
        last_on[r] = -1;
    uint64_t recv_id = (uint64_t)g->n + 1;
    int pass_task = -1; /* the last forward, backward or recompute task */
    /* deps stay within the stage, so fold entries of other stages are never read */
    bool *folded = x->folded;
    size_t *fold_at = x->fold_at, *fold_n = x->fold_n;
    for (int at = x->stage_first[stage]; at < x->stage_first[stage + 1]; at++) {
        int t = x->stage_tasks[at];
        const sim_task *k = &g->tasks[t];
        int res = k->resource % x->sg.per_stage;
        /* a receive for every edge from another stage (a pipeline send) */
        uint64_t recvs[8];
        int n_recvs = 0;
        for (int e = x->in_first[t]; e < x->in_first[t + 1] && n_recvs < 8; e++) {
            int from = x->in_edges[e];
            if (g->tasks[from].stage == stage)
                continue;
            comet_et_node *rv = new_node(sn, recv_id, COMET_ET_RECV, "recv");
            if (!rv)
                goto oom;
            rv->comm_tag = from;
            rv->comm_size = x->sg.p2p_bytes;
            sn->peer_stage[sn->n - 1] = g->tasks[from].stage;
            recvs[n_recvs++] = recv_id++;
        }
        /* dependencies: same-stage edges, those receives, stream order */
        size_t first_dep = sn->n_deps;
        for (int e = x->in_first[t]; e < x->in_first[t + 1]; e++) {
            int from = x->in_edges[e];
            if (g->tasks[from].stage == stage && !dep_on(sn, from, folded, fold_at, fold_n))
                goto oom;
        }
        for (int i = 0; i < n_recvs; i++)
            if (!add_dep(sn, recvs[i]))
                goto oom;
        if (last_on[res] >= 0 && !dep_on(sn, last_on[res], folded, fold_at, fold_n))
            goto oom;
        last_on[res] = t;
        double dur = k->duration;
        const step_coll *c = &x->sg.coll[t];
        if (k->kind == STEP_K_FWD || k->kind == STEP_K_BWD || k->kind == STEP_K_RECOMPUTE)
            pass_task = t;
        if (c->on == STEP_ON_RING_FWD || c->on == STEP_ON_RING_BWD) {
            /* ring CP: sends and receives beside the pass's compute; the
             * task itself becomes a join on its dependencies and the last
             * receive */
            uint64_t last_recv = 0;
            size_t own = sn->n_deps - first_dep;
            comet_status st = ring_nodes(x, sn, t, pass_task, &recv_id, &last_recv, err);
            if (st)
                return st;
            /* the join's dependencies: its own (before the ring's nodes'
             * in the pool), then the last receive */
            size_t join_at = sn->n_deps;
            for (size_t i = 0; i < own; i++)
                if (!add_dep(sn, sn->deps[first_dep + i]))
                    goto oom;
            if (!add_dep(sn, last_recv))
                goto oom;
            folded[t] = true;
            fold_at[t] = join_at;
            fold_n[t] = sn->n_deps - join_at;
            continue;
        }
        const char *kind = k->kind < STEP_K_COUNT ? x->sg.kind_names[k->kind] : "task";
        char name[64];
        snprintf(name, sizeof name, "%s mb%d layer%d", kind, k->micro, k->layer);
        comet_et_node *n = NULL;
        comet_et_type type = COMET_ET_METADATA; /* a zero-length join: folded */
        if (c->coll != COMET_COLL_NONE && group_size(x, step_group_of(c)) > 1 && dur > 0)
            type = COMET_ET_COLLECTIVE;
        else if ((k->kind == STEP_K_SEND_FWD || k->kind == STEP_K_SEND_BWD) && dur > 0 &&
                 x->send_to[t] >= 0)
            type = COMET_ET_SEND;
        else if (res == STEP_R_MEM && dur > 0)
            type = k->kind == STEP_K_LOAD_WEIGHTS || k->kind == STEP_K_LOAD_ACT ||
                           k->kind == STEP_K_OPT_STATE || k->kind == STEP_K_LOAD_GRAD
                       ? COMET_ET_MEM_LOAD
                       : COMET_ET_MEM_STORE;
        else if (dur > 0)
            type = COMET_ET_COMPUTE;
        if (type == COMET_ET_METADATA) {
            folded[t] = true;
            fold_at[t] = first_dep;
            fold_n[t] = sn->n_deps - first_dep;
            continue;
        }
        n = new_node(sn, (uint64_t)t + 1, type, name);
        if (!n)
            goto oom;
        if (type == COMET_ET_COLLECTIVE) {
            static const int types[COMET_COLL_COUNT] = {
                [COMET_COLL_ALL_REDUCE] = COMET_ET_ALL_REDUCE,
                [COMET_COLL_ALL_GATHER] = COMET_ET_ALL_GATHER,
                [COMET_COLL_REDUCE_SCATTER] = COMET_ET_REDUCE_SCATTER,
                [COMET_COLL_ALL_TO_ALL] = COMET_ET_ALL_TO_ALL,
                [COMET_COLL_BROADCAST] = COMET_ET_BROADCAST, [COMET_COLL_REDUCE] = COMET_ET_REDUCE,
                [COMET_COLL_GATHER] = COMET_ET_GATHER, [COMET_COLL_SCATTER] = COMET_ET_SCATTER,
                [COMET_COLL_BARRIER] = COMET_ET_BARRIER};
            n->comm_type = types[c->coll];
            /* ASTRA-sim's sizes: an all-gather's (and a gather's) is each
             * rank's shard, the others' the whole buffer (a multiple of the
             * group, so it splits) */
            double members = (double)group_size(x, step_group_of(c));
            bool shard = c->coll == COMET_COLL_ALL_GATHER || c->coll == COMET_COLL_GATHER;
            n->comm_size = shard ? ceil(c->bytes / members) : ceil(c->bytes / members) * members;
            sn->group[sn->n - 1] = step_group_of(c);
        } else if (type == COMET_ET_SEND) {
            n->comm_size = x->sg.p2p_bytes;
            n->comm_tag = t;
            sn->peer_stage[sn->n - 1] = x->send_to[t];
        } else if (type == COMET_ET_MEM_LOAD || type == COMET_ET_MEM_STORE) {
            n->tensor_size = c->bytes;
        } else if (type == COMET_ET_COMPUTE) {
            /* num_ops is an int64 in the file: a task past 2^63 ops at
             * 1 TFLOP/s (about 107 days) cannot be written */
            if (!(dur * 1e12 < 0x1p63))
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "system",
                                       "task \"%s\" lasts %.4g s, longer than a Chakra compute "
                                       "node can hold (num_ops up to 9.2e18 at 1 TFLOP/s, about "
                                       "107 days)",
                                       name, dur);
            n->duration_micros = (uint64_t)llround(dur * 1e6);
            n->num_ops = round(dur * 1e12); /* at peak-perf 1 TFLOP/s */
            /* a finite operational intensity (ASTRA-sim divides by it) far
             * above the ridge point, so the roofline gives the peak */
            n->tensor_size = 1.0;
        }
        n->deps = (uint64_t *)(uintptr_t)first_dep;
        n->n_deps = sn->n_deps - first_dep;
        /* where a ring's sends find the start of the layer */
        fold_at[t] = first_dep;
        fold_n[t] = sn->n_deps - first_dep;
    }
    /* the pool is final: offsets become pointers */
    for (size_t i = 0; i < sn->n; i++)
        sn->nodes[i].deps = sn->nodes[i].n_deps ? sn->deps + (uintptr_t)sn->nodes[i].deps : NULL;
    return COMET_OK;
oom:
    return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
}

static comet_status write_stage(const exporter *x, int stage, stage_nodes *sn,
                                comet_export_info *info, comet_error *err)
{
    const comet_strategy *s = &x->sg.s;
    const unsigned not_pp = ((1u << XI_COUNT) - 1) & ~(1u << XI_PP);
    int64_t per_stage = s->tp * s->cp * s->dp;
    for (int64_t r = 0; r < per_stage; r++) {
        int64_t idx[XI_COUNT] = {0};
        idx[XI_PP] = stage;
        coords_unpack(x, not_pp, r, idx);
        int64_t me = rank_of(x, idx);
        char group_names[STEP_G_COUNT][24] = {{0}};
        for (int g = 0; g < STEP_G_COUNT; g++)
            group_name(x, (export_group)g, idx, group_names[g], sizeof group_names[g]);
        for (size_t i = 0; i < sn->n; i++) {
            comet_et_node *n = &sn->nodes[i];
            n->name = sn->names[i];
            if (n->type == COMET_ET_COLLECTIVE)
                n->pg_name = group_names[sn->group[i]];
            if (sn->peer_stage[i] >= 0 || sn->peer_cp[i]) {
                int64_t peer[XI_COUNT];
                memcpy(peer, idx, sizeof peer);
                if (sn->peer_stage[i] >= 0)
                    peer[XI_PP] = sn->peer_stage[i];
                else
                    peer[XI_CP] = (idx[XI_CP] + s->cp + sn->peer_cp[i]) % s->cp;
                int64_t other = rank_of(x, peer);
                n->comm_src = n->type == COMET_ET_SEND ? me : other;
                n->comm_dst = n->type == COMET_ET_SEND ? other : me;
            }
        }
        char path[4200];
        snprintf(path, sizeof path, "%s.%lld.et", x->prefix, (long long)me);
        FILE *f;
        comet_status st = check_cancel(x, err);
        if (st)
            return st;
        st = comet_files_begin(x->files, path, &f, err);
        if (!st) {
            bool failed = !chakra_write_nodes(f, "0.0.4", sn->nodes, sn->n);
            long at = failed ? -1 : ftell(f);
            if (at > 0)
                info->bytes += (uint64_t)at;
            st = comet_files_end(x->files, failed, err);
        }
        if (st)
            return st;
        info->nodes += sn->n;
        for (size_t i = 0; i < sn->n; i++)
            info->deps += sn->nodes[i].n_deps;
    }
    return COMET_OK;
}

int comet_export_reader_flags(const comet_export_info *info, char *flags, size_t flags_cap,
                              char *why, size_t why_cap)
{
    comet_et_limits lim;
    comet_et_limits_default(&lim);
    struct {
        uint64_t have, limit;
        const char *flag, *what;
    } const over[] = {
        {info->nodes, lim.max_nodes, "--max-trace-nodes", "nodes"},
        {info->deps, lim.max_deps, "--max-trace-deps", "dependencies"},
        {info->bytes, lim.max_bytes, "--max-trace-bytes", "bytes"},
    };
    int n = 0;
    size_t fl = 0, wl = 0;
    if (flags_cap)
        flags[0] = '\0';
    if (why_cap)
        why[0] = '\0';
    for (size_t i = 0; i < sizeof over / sizeof over[0]; i++) {
        if (!over[i].limit || over[i].have <= over[i].limit)
            continue;
        if (fl < flags_cap)
            fl += (size_t)snprintf(flags + fl, flags_cap - fl, " %s %llu", over[i].flag,
                                   (unsigned long long)over[i].have);
        if (wl < why_cap)
            wl += (size_t)snprintf(why + wl, why_cap - wl, "%s%llu %s (default limit %llu)",
                                   n ? ", " : "", (unsigned long long)over[i].have,
                                   over[i].what, (unsigned long long)over[i].limit);
        n++;
    }
    return n;
}

/* The rank N of a directory entry named BASE.N.et (N written plainly: no
 * sign, no leading zero), or -1. */
static int64_t rank_in_name(const char *name, const char *base)
{
    size_t len = strlen(base);
    if (strncmp(name, base, len) != 0 || name[len] != '.')
        return -1;
    const char *digits = name + len + 1;
    size_t n = strspn(digits, "0123456789");
    if (n == 0 || n > 18 || (n > 1 && digits[0] == '0') || strcmp(digits + n, ".et") != 0)
        return -1;
    return strtoll(digits, NULL, 10);
}

comet_status comet_export_chakra_check(const char *prefix, int64_t ranks, comet_error *err)
{
    char path[4200];
    for (int s = 0; s < SIDE_COUNT; s++) {
        snprintf(path, sizeof path, "%s.%s", prefix, side_suffix[s]);
        comet_status st = comet_file_check_destination(path, err);
        if (st)
            return st;
    }
    /* the ranks' names, found in one pass over the directory rather than
     * one look-up per rank */
    const char *slash = strrchr(prefix, '/');
    char dir[4200];
    snprintf(dir, sizeof dir, "%.*s", slash ? (slash == prefix ? 1 : (int)(slash - prefix)) : 1,
             slash ? prefix : ".");
    DIR *d = opendir(dir);
    if (!d)
        return COMET_OK; /* an unusable directory is named when the first file is created */
    comet_status st = COMET_OK;
    struct dirent *entry;
    while (!st && (entry = readdir(d)) != NULL) {
        int64_t rank = rank_in_name(entry->d_name, slash ? slash + 1 : prefix);
        if (rank < 0 || rank >= ranks)
            continue;
        snprintf(path, sizeof path, "%s.%lld.et", prefix, (long long)rank);
        st = comet_file_check_destination(path, err);
    }
    closedir(d);
    return st;
}

/* An earlier export with more ranks left PREFIX.N.et from this export's
 * rank count on: the commit removes them (regular files only, as many
 * consecutive ones as there are, the way comet simulate --chakra counts
 * ranks). */
static comet_status remove_stale_ranks(const exporter *x, comet_error *err)
{
    char path[4200];
    for (int64_t rank = x->npus; rank < x->npus + (1 << 20); rank++) {
        snprintf(path, sizeof path, "%s.%lld.et", x->prefix, (long long)rank);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            return COMET_OK;
        comet_status status = comet_files_remove(x->files, path, err);
        if (status)
            return status;
    }
    return COMET_OK;
}

comet_status comet_export_chakra(const comet_model *m, const comet_system *sys,
                                 const comet_strategy *strategy, const char *prefix,
                                 const comet_export_options *options, comet_export_info *info,
                                 comet_error *err)
{
    memset(info, 0, sizeof *info);
    /* The ranks are numbered with EP inside DP's digits, and Chakra's
     * all-to-all has one size on every dimension: folded experts and
     * DeepEP's de-duplicated dispatch are refused rather than written
     * wrong (docs/chakra.md, Export). */
    bool moe = m->kind == COMET_MODEL_TRANSFORMER && m->moe.experts > 1;
    if (moe && comet_strategy_folded(strategy))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy.expert_tp",
                               "the Chakra export draws expert parallelism from the data-"
                               "parallel ranks; folded experts (expert_tp %lld below tp %lld) "
                               "are not exported", (long long)comet_strategy_expert_tp(strategy),
                               (long long)strategy->tp);
    if (moe && strategy->ep > 1 && strategy->moe_dispatcher == COMET_MOE_DEEPEP)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy.moe_dispatcher",
                               "Chakra's all-to-all has one size on every network dimension; "
                               "deepep's de-duplicated dispatch is not exported (use alltoall)");
    comet_files files;
    comet_files_init(&files);
    exporter x = {.sys = sys, .prefix = prefix, .options = options, .files = &files};
    comet_status st = sim_step_graph_build(m, sys, strategy, &x.sg, err);
    if (st)
        return st;
    x.npus = comet_strategy_npus(&x.sg.s);
    comet_strategy_digit_spans(&x.sg.s, x.spans);
    comet_strategy_digit_counts(&x.sg.s, x.counts);
    st = comet_system_layout(sys, x.npus, x.sizes, err);
    for (int d = 0; !st && d < sys->n_dims; d++) {
        int64_t used = 1; /* TP, CP, DP (EP inside it) and PP */
        for (int i = 0; i < XI_COUNT; i++)
            used *= coord_span(&x, i, d);
        if (used != x.sizes[d])
            st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy",
                                 "the strategy uses %lld of the %lld NPUs of network dimension "
                                 "%s; Chakra traces need one rank per NPU",
                                 (long long)used, (long long)x.sizes[d], sys->dims[d].name);
    }
    if (!st)
        st = check_topologies(&x, err);
    if (!st && x.npus < 2)
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy",
                             "a Chakra export needs at least 2 NPUs (ASTRA-sim's networks do)");
    if (!st) /* before the work, so a destination no file can take fails fast */
        st = comet_export_chakra_check(prefix, x.npus, err);
    if (!st) /* every value the side files hold reads back (nothing written yet) */
        st = check_side_values(&x, err);
    if (!st) /* building the step graph may take a while */
        st = check_cancel(&x, err);
    if (!st)
        st = index_edges(&x, err);
    comet_buf b;
    comet_buf_init(&b);
    if (!st)
        st = write_side_files(&x, &b, err);
    comet_buf_free(&b);
    for (int stage = 0; !st && stage < x.sg.stages; stage++) {
        stage_nodes sn = {0};
        st = stage_template(&x, stage, &sn, err);
        if (!st)
            st = write_stage(&x, stage, &sn, info, err);
        free(sn.nodes);
        free(sn.deps);
        free(sn.peer_stage);
        free(sn.peer_cp);
        free(sn.group);
        free(sn.names);
    }
    if (!st)
        st = remove_stale_ranks(&x, err);
    if (!st)
        st = check_cancel(&x, err);
    /* every rank and side file, or none of them (the earlier set stays) */
    if (!st)
        st = comet_files_commit(&files, err);
    else
        comet_files_abandon(&files);
    info->ranks = (int)x.npus;
    free(x.in_first);
    free(x.in_edges);
    free(x.send_to);
    free(x.stage_first);
    free(x.stage_tasks);
    free(x.folded);
    free(x.fold_at);
    free(x.fold_n);
    sim_step_graph_free(&x.sg);
    return st;
}
