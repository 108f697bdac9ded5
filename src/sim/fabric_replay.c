/* A replay's collectives sharing the fabric's links (comet simulate
 * --chakra --flows): every collective whose group the fabric can run is
 * started as flows on one fabric run when the engine reaches its task
 * (sim_outside), and its task ends when its last flow does, so two
 * collectives that overlap in time (two groups' on one spine, a rank's two
 * collectives in flight at once) share the links they meet on, as the
 * training step's transfers do on the fabric (fabric_step.c; the glue to
 * the engine is fabric_outside.c's). What each
 * collective needs is small (its task, collective, bytes, shape and first
 * NPU: 24 bytes), and the groups' members are laid out only when one
 * starts; the fabric's NPU -> member index map is kept once per group
 * shape, each NPU's index within its own group (so one map serves every
 * group of the shape), never per group. A collective's task ends a tail
 * after its last flow: what ASTRA-sim's endpoint delays and reduction
 * memory passes add to it (the caller's figure; no link shares them). A
 * group that does not tile (a named group's ranks 2 to 5 of a ring of 8)
 * is a shape of its own, listed: its positions along each dimension in
 * the order its ring visits them, its members and their map (4 bytes an
 * NPU per such group). A collective of a shape the fabric cannot run as a
 * group (a listed one on a torus or mesh) is priced alone, as before
 * (sim_fabric_price: every group of its span at once, remembered).
 * docs/fabric.md, docs/chakra.md. */
#include "sim.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comet/fabric.h"
#include "comet/network.h"

typedef struct replay_shape {
    int64_t span[COMET_MAX_DIMS], stride[COMET_MAX_DIMS];
    int64_t n;                   /* NPUs in a group */
    int32_t *local;              /* NPU -> its index in its own group of this shape */
    /* a listed group (one group, its own shape): its positions along each
     * dimension in ring order (NULL where it spans one), and its members */
    int64_t *coord[COMET_MAX_DIMS];
    int64_t *members;
} replay_shape;

typedef struct replay_coll {
    double bytes;
    double tail;                 /* seconds after its flows: endpoint delays, memory passes */
    int task;
    int32_t shape;
    int32_t first;               /* the group's first NPU */
    uint8_t c;                   /* comet_collective */
} replay_coll;

struct sim_fabric_replay {
    sim_fabric_prices *prices;   /* the fabric, and the alone collectives' prices */
    const comet_fabric *f;
    const comet_system *sys;     /* its sizes resolved */
    int64_t npus, max_flows;
    int active_chunks;           /* each collective's limit per dimension (0: none) */
    int64_t size[COMET_MAX_DIMS], inner[COMET_MAX_DIMS];
    replay_shape *shapes;
    size_t n_shapes, cap_shapes;
    replay_coll *colls;          /* by task, ascending */
    size_t n_colls, cap_colls;
    int64_t alone;
    int64_t *members;            /* a starting group's, a scratch of npus */
    uint64_t flows;              /* the last run's */
};

/* v (of n items of `size` bytes, room for *cap) with room for one more:
 * v itself or moved, NULL when out of memory (v then unchanged). */
static void *room_for_one(void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return v;
    size_t more = *cap ? 2 * *cap : 16;
    void *x = realloc(v, size * more);
    if (x)
        *cap = more;
    return x;
}

comet_status sim_fabric_replay_new(const comet_system *sys, int64_t max_flows, int active_chunks,
                                   sim_fabric_replay **out, comet_error *err)
{
    *out = NULL;
    sim_fabric_replay *fr = calloc(1, sizeof *fr);
    comet_status st = fr ? sim_fabric_prices_new(sys, 0, &fr->prices, err)
                         : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_fabric_info info = {0};
    if (!st) {
        fr->f = sim_fabric_prices_fabric(fr->prices, &fr->sys);
        fr->max_flows = max_flows;
        fr->active_chunks = active_chunks;
        comet_fabric_info_of(fr->f, &info);
        fr->npus = info.npus;
    }
    for (int d = 0; !st && d < COMET_MAX_DIMS; d++) {
        fr->size[d] = d < info.n_dims ? info.sizes[d] : 1;
        fr->inner[d] = d ? fr->inner[d - 1] * fr->size[d - 1] : 1;
    }
    if (!st && fr->npus > INT32_MAX)
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                             "the fabric has %lld NPUs; the replay takes at most %d",
                             (long long)fr->npus, INT32_MAX);
    if (!st && !(fr->members = malloc(sizeof *fr->members * (size_t)(fr->npus > 0 ? fr->npus : 1))))
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (st) {
        sim_fabric_replay_free(fr);
        return st;
    }
    *out = fr;
    return COMET_OK;
}

void sim_fabric_replay_free(sim_fabric_replay *fr)
{
    if (!fr)
        return;
    for (size_t i = 0; i < fr->n_shapes; i++) {
        free(fr->shapes[i].local);
        free(fr->shapes[i].members);
        for (int d = 0; d < COMET_MAX_DIMS; d++)
            free(fr->shapes[i].coord[d]);
    }
    free(fr->shapes);
    free(fr->colls);
    sim_fabric_prices_free(fr->prices);
    free(fr->members);
    free(fr);
}

/* NPU npu's coordinate along dimension d. */
static int64_t coord(const sim_fabric_replay *fr, int64_t npu, int d)
{
    return (npu / fr->inner[d]) % fr->size[d];
}

/* npu's index in its group of shape sh: its coordinates' indices in the
 * group along each dimension, innermost first, as one mixed-radix number. */
static int64_t index_in_group(const sim_fabric_replay *fr, const replay_shape *sh, int64_t npu)
{
    int64_t index = 0, radix = 1;
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        index += (coord(fr, npu, d) / sh->stride[d]) % sh->span[d] * radix;
        radix *= sh->span[d];
    }
    return index;
}

int sim_fabric_replay_shape(sim_fabric_replay *fr, const int64_t span[COMET_MAX_DIMS],
                            const int64_t stride[COMET_MAX_DIMS])
{
    replay_shape sh = {.n = 1};
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        sh.span[d] = span[d] > 1 ? span[d] : 1;
        sh.stride[d] = sh.span[d] > 1 && stride && stride[d] > 1 ? stride[d] : 1;
        comet_topology topo = d < fr->sys->n_dims ? fr->sys->dims[d].topology : COMET_TOPO_RING;
        if (fr->size[d] % (sh.span[d] * sh.stride[d]) != 0 ||
            (sh.stride[d] > 1 && (topo == COMET_TOPO_TORUS || topo == COMET_TOPO_MESH)))
            return -1;
        sh.n *= sh.span[d];
    }
    for (size_t i = 0; i < fr->n_shapes; i++)
        if (memcmp(fr->shapes[i].span, sh.span, sizeof sh.span) == 0 &&
            memcmp(fr->shapes[i].stride, sh.stride, sizeof sh.stride) == 0)
            return (int)i;
    replay_shape *x = room_for_one(fr->shapes, fr->n_shapes, &fr->cap_shapes, sizeof *x);
    sh.local = x ? malloc(sizeof *sh.local * (size_t)fr->npus) : NULL;
    if (x)
        fr->shapes = x;
    if (!sh.local)
        return -2;
    for (int64_t npu = 0; npu < fr->npus; npu++)
        sh.local[npu] = (int32_t)index_in_group(fr, &sh, npu);
    fr->shapes[fr->n_shapes] = sh;
    return (int)fr->n_shapes++;
}

int sim_fabric_replay_listed(sim_fabric_replay *fr, const int64_t span[COMET_MAX_DIMS],
                             const int64_t *const coord[COMET_MAX_DIMS])
{
    replay_shape sh = {.n = 1};
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        sh.span[d] = span[d] > 1 ? span[d] : 1;
        sh.stride[d] = 1;
        comet_topology topo = d < fr->sys->n_dims ? fr->sys->dims[d].topology : COMET_TOPO_RING;
        if (sh.span[d] > 1 && (topo == COMET_TOPO_TORUS || topo == COMET_TOPO_MESH))
            return -1;
        sh.n *= sh.span[d];
    }
    replay_shape *x = room_for_one(fr->shapes, fr->n_shapes, &fr->cap_shapes, sizeof *x);
    if (!x)
        return -2;
    fr->shapes = x;
    bool ok = (sh.local = malloc(sizeof *sh.local * (size_t)fr->npus)) != NULL &&
              (sh.members = malloc(sizeof *sh.members * (size_t)sh.n)) != NULL;
    for (int d = 0; ok && d < COMET_MAX_DIMS; d++)
        if (sh.span[d] > 1 && (ok = (sh.coord[d] = malloc(sizeof **sh.coord *
                                                           (size_t)sh.span[d])) != NULL))
            memcpy(sh.coord[d], coord[d], sizeof **sh.coord * (size_t)sh.span[d]);
    if (!ok) {
        free(sh.local);
        free(sh.members);
        for (int d = 0; d < COMET_MAX_DIMS; d++)
            free(sh.coord[d]);
        return -2;
    }
    for (int64_t npu = 0; npu < fr->npus; npu++)
        sh.local[npu] = -1;
    /* member i: its index along each dimension as a mixed-radix number,
     * innermost first, as the tiled shapes number theirs */
    for (int64_t i = 0; i < sh.n; i++) {
        int64_t npu = 0, rest = i;
        for (int d = 0; d < COMET_MAX_DIMS; d++) {
            npu += (sh.coord[d] ? sh.coord[d][rest % sh.span[d]] : 0) * fr->inner[d];
            rest /= sh.span[d];
        }
        sh.members[i] = npu;
        sh.local[npu] = (int32_t)i;
    }
    fr->shapes[fr->n_shapes] = sh;
    return (int)fr->n_shapes++;
}

comet_status sim_fabric_replay_add(sim_fabric_replay *fr, int task, int shape, int64_t npu,
                                   comet_collective c, double bytes, double tail,
                                   comet_error *err)
{
    if (shape < 0 || (size_t)shape >= fr->n_shapes || npu < 0 || npu >= fr->npus ||
        (fr->n_colls > 0 && task <= fr->colls[fr->n_colls - 1].task))
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "a collective of shape %d on NPU %lld added as task %d, out of "
                               "turn",
                               shape, (long long)npu, task);
    replay_coll *x = room_for_one(fr->colls, fr->n_colls, &fr->cap_colls, sizeof *x);
    if (!x)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    fr->colls = x;
    /* the group's first NPU: npu less its place along every dimension */
    const replay_shape *sh = &fr->shapes[shape];
    int64_t first = npu;
    for (int d = 0; d < COMET_MAX_DIMS && !sh->members; d++)
        first -= (coord(fr, npu, d) / sh->stride[d]) % sh->span[d] * sh->stride[d] * fr->inner[d];
    if (sh->members)
        first = sh->members[0];
    fr->colls[fr->n_colls++] = (replay_coll){bytes, tail, task, (int32_t)shape, (int32_t)first,
                                             (uint8_t)c};
    return COMET_OK;
}

comet_status sim_fabric_replay_alone(sim_fabric_replay *fr, const int64_t span[COMET_MAX_DIMS],
                                     comet_collective c, double bytes, double *time,
                                     comet_error *err)
{
    *time = sim_fabric_price(fr->prices, span, c, bytes);
    fr->alone++;
    return sim_fabric_prices_status(fr->prices, err);
}

/* The collective of task, or NULL. */
static const replay_coll *coll_of_task(const sim_fabric_replay *fr, int task)
{
    size_t lo = 0, hi = fr->n_colls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fr->colls[mid].task < task)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < fr->n_colls && fr->colls[lo].task == task ? &fr->colls[lo] : NULL;
}

/* Starts task's collective on run, if it is one of ours. */
static int start(void *ctx, int task, comet_fabric_run *run, int64_t *id, double *tail,
                 comet_error *err)
{
    sim_fabric_replay *fr = ctx;
    const replay_coll *x = coll_of_task(fr, task);
    if (!x)
        return 0; /* not one of ours: it runs for its duration */
    const replay_shape *sh = &fr->shapes[x->shape];
    *tail = x->tail;
    for (int64_t i = 0; i < sh->n && !sh->members; i++) {
        int64_t npu = x->first, rest = i;
        for (int d = 0; d < COMET_MAX_DIMS; d++) {
            npu += rest % sh->span[d] * sh->stride[d] * fr->inner[d];
            rest /= sh->span[d];
        }
        fr->members[i] = npu;
    }
    comet_fabric_group g = {.members = sh->members ? sh->members : fr->members,
                            .local = sh->local,
                            .n_members = sh->n};
    memcpy(g.span, sh->span, sizeof g.span);
    memcpy(g.stride, sh->stride, sizeof g.stride);
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        g.coord[d] = sh->coord[d];
    comet_fabric_schedule sch = {.concurrent = 1, .active_chunks = fr->active_chunks};
    return comet_fabric_run_collective(run, &g, (comet_collective)x->c, x->bytes, &sch, id, err)
               ? -1
               : 1;
}

comet_status sim_fabric_replay_run(sim_fabric_replay *fr, sim_graph *g, double *makespan,
                                   void (*describe)(const sim_task *t, void *ctx, char *out,
                                                    size_t cap),
                                   void *ctx, comet_error *err)
{
    *makespan = 0.0;
    comet_fabric_run *run;
    comet_status st = comet_fabric_run_new(fr->f, fr->sys, fr->max_flows, &run, err);
    if (st)
        return st;
    st = sim_run_on_fabric(g, run, start, fr, makespan, describe, ctx, err);
    uint64_t events, updates;
    comet_fabric_run_stats(run, &fr->flows, &events, &updates);
    comet_fabric_run_free(run);
    return st;
}

void sim_fabric_replay_counts(const sim_fabric_replay *fr, int64_t *shared, int64_t *alone,
                              int *alone_distinct, uint64_t *flows)
{
    uint64_t priced;
    sim_fabric_prices_counts(fr->prices, alone_distinct, &priced);
    *shared = (int64_t)fr->n_colls;
    *alone = fr->alone;
    *flows = fr->flows + priced;
}
