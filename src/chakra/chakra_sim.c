/* Simulating a Chakra trace on a network given by ASTRA-sim's files. Every
 * node of every rank becomes a task of comet's engine: compute on the
 * rank's compute stream (or its CPU stream for is_cpu_op), memory loads and
 * stores on its memory stream, sends on its communication stream. As in
 * ASTRA-sim, compute and communication overlap but two compute nodes of a
 * rank do not. A collective is one task shared by the ranks of its group
 * (those differing only along the dimensions it involves): it starts when
 * all of them have reached it and lasts what comet_sim_collective gives on
 * those dimensions (with --flows: until its flows on the fabric end, every
 * collective in flight sharing the fabric's links; sim_fabric_replay). A
 * receive completes when the matching send (same source, destination and
 * tag, in order) does. A rank's nodes run in dependency order whatever their order
 * in the file (file order where it already respects the dependencies).
 * Bad traces (missing dependencies, dependency cycles, peers outside the
 * trace, mismatched collectives, sizes that do not split over the group)
 * are errors that name the file and the node id; a deadlock across ranks
 * names every node of its cycle as rank:id.
 *
 * comet_astra_ring gives the inputs of the plainest run, one ring and no
 * files (the files themselves are read in src/config/astra_reader.c).
 *
 * Memory: besides the engine's task (64 bytes) and successor entries, the
 * simulator keeps 8 bytes per node (its task, its place in the order);
 * the id index (8 to 16 bytes per node) lives for one rank at a time;
 * --flows adds 24 bytes per collective and 4 per NPU per group shape. */
#include "comet/chakra.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/network.h"
#include "../sim/sim.h"

enum { S_COMPUTE, S_COMM, S_CPU, S_MEM, S_PER_RANK };

/* The engine numbers tasks and edges with int and doubles its arrays. */
#define MAX_TASKS_OR_EDGES ((size_t)1 << 30)

typedef struct trace_sim {
    const comet_et_trace *t;
    const comet_astra_inputs *in;
    sim_graph g;
    int instant;            /* a shared resource where zero-cost and collective tasks run */
    int **task_of;          /* per rank, node index -> task */
    uint32_t **order;       /* per rank, node indices in dependency order */
    const char *prefix;
    /* in->flows: collectives as flows on the fabric, sharing its links; NULL otherwise */
    sim_fabric_replay *replay;
} trace_sim;

static comet_status out_of_memory(comet_error *err)
{
    return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
}

static void file_of(const trace_sim *s, int rank, char *out, size_t cap)
{
    snprintf(out, cap, "%s.%d.et", s->prefix, rank);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb3f94d1a85ebULL;
    return x ^ (x >> 33);
}

/* ---- node ids ----------------------------------------------------------------- */

/* One rank's node ids -> node indices: open addressing over node indices
 * (the ids are read from the nodes themselves), 2 to 4 slots of 4 bytes
 * per node, linear time whatever the ids are. */
typedef struct id_table {
    const comet_et_rank *rk;
    uint32_t *slot;         /* node index + 1; 0 = empty */
    size_t mask;
} id_table;

static comet_status id_table_build(const trace_sim *s, int r, id_table *tab, comet_error *err)
{
    const comet_et_rank *rk = &s->t->rank[r];
    size_t cap = 16;
    while (cap < 2 * rk->n)
        cap *= 2;
    tab->rk = rk;
    tab->mask = cap - 1;
    tab->slot = calloc(cap, sizeof *tab->slot);
    if (!tab->slot)
        return out_of_memory(err);
    for (size_t i = 0; i < rk->n; i++) {
        uint64_t id = rk->nodes[i].id;
        size_t h = mix(id) & tab->mask;
        for (; tab->slot[h]; h = (h + 1) & tab->mask)
            if (rk->nodes[tab->slot[h] - 1].id == id) {
                char file[4200];
                file_of(s, r, file, sizeof file);
                return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                       "node %llu appears twice", (unsigned long long)id);
            }
        tab->slot[h] = (uint32_t)i + 1;
    }
    return COMET_OK;
}

/* The node index of an id, or -1. */
static long id_table_find(const id_table *tab, uint64_t id)
{
    for (size_t h = mix(id) & tab->mask; tab->slot[h]; h = (h + 1) & tab->mask)
        if (tab->rk->nodes[tab->slot[h] - 1].id == id)
            return (long)tab->slot[h] - 1;
    return -1;
}

/* ---- dependency order ------------------------------------------------------------- */

typedef struct dfs_frame {
    uint32_t node;
    size_t next_dep;        /* the node's next dependency to look at */
} dfs_frame;

/* The cycle on the search stack from node `first` up to its top, whose
 * node depends on `first`: every node on it, each depending on the next,
 * as many as the message holds. */
static comet_status cycle_error(const trace_sim *s, int r, const dfs_frame *stack, size_t depth,
                                uint32_t first, comet_error *err)
{
    const comet_et_node *nodes = s->t->rank[r].nodes;
    size_t from = depth - 1;
    while (stack[from].node != first)
        from--;
    size_t length = depth - from, shown = 0;
    char chain[200] = "";
    size_t used = 0;
    for (size_t k = from; k < depth; k++) {
        char one[32];
        int len = snprintf(one, sizeof one, "%llu -> ",
                           (unsigned long long)nodes[stack[k].node].id);
        if (used + (size_t)len + 24 >= sizeof chain)
            break;
        memcpy(chain + used, one, (size_t)len + 1);
        used += (size_t)len;
        shown++;
    }
    char file[4200];
    file_of(s, r, file, sizeof file);
    unsigned long long back = (unsigned long long)nodes[first].id;
    if (shown == length)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "rank %d: dependency cycle %s%llu (each node depends on the "
                               "next)",
                               r, chain, back);
    return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                           "rank %d: dependency cycle of %zu nodes %s... -> %llu (each node "
                           "depends on the next; the first %zu shown)",
                           r, length, chain, back, shown);
}

/* Rank r's nodes in an order that puts every node after its dependencies:
 * file order wherever the file already respects them (so such traces run
 * exactly as listed); otherwise a node's unplaced dependencies just before
 * it. A depth-first search with an explicit stack, linear in nodes and
 * dependencies, that names a missing dependency and a whole cycle. */
static comet_status order_rank(const trace_sim *s, int r, const id_table *ids, uint32_t *order,
                               comet_error *err)
{
    const comet_et_rank *rk = &s->t->rank[r];
    size_t n = rk->n ? rk->n : 1, placed = 0;
    unsigned char *state = calloc(n, 1); /* 0 unseen, 1 on the stack, 2 placed */
    dfs_frame *stack = malloc(sizeof *stack * n);
    comet_status st = state && stack ? COMET_OK : out_of_memory(err);
    for (size_t root = 0; !st && root < rk->n; root++) {
        if (state[root])
            continue;
        size_t depth = 0;
        stack[depth++] = (dfs_frame){(uint32_t)root, 0};
        state[root] = 1;
        while (!st && depth > 0) {
            dfs_frame *top = &stack[depth - 1];
            const comet_et_node *v = &rk->nodes[top->node];
            if (top->next_dep == v->n_deps) {
                state[top->node] = 2;
                order[placed++] = top->node;
                depth--;
                continue;
            }
            uint64_t dep = v->deps[top->next_dep++];
            long j = id_table_find(ids, dep);
            if (j < 0) {
                char file[4200];
                file_of(s, r, file, sizeof file);
                st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                     "node %llu depends on node %llu, which does not exist",
                                     (unsigned long long)v->id, (unsigned long long)dep);
            } else if (state[j] == 1) {
                st = cycle_error(s, r, stack, depth, (uint32_t)j, err);
            } else if (state[j] == 0) {
                state[j] = 1;
                stack[depth++] = (dfs_frame){(uint32_t)j, 0};
            }
        }
    }
    free(state);
    free(stack);
    return st;
}

/* Every rank's order (s->order), each rank's id index built and dropped
 * in turn. */
static comet_status order_ranks(trace_sim *s, comet_error *err)
{
    comet_status st = COMET_OK;
    for (int r = 0; !st && r < s->t->ranks; r++) {
        id_table ids = {0};
        st = id_table_build(s, r, &ids, err);
        if (!st)
            st = order_rank(s, r, &ids, s->order[r], err);
        free(ids.slot);
    }
    return st;
}

static double compute_time(const comet_astra_inputs *in, const comet_et_node *n)
{
    if (in->roofline && n->num_ops > 0 && in->peak_perf > 0) {
        double perf = in->peak_perf;
        if (n->tensor_size > 0 && in->options.local_mem_bw > 0) {
            double bound = in->options.local_mem_bw * n->num_ops / n->tensor_size;
            perf = bound < perf ? bound : perf;
        }
        return n->num_ops / perf;
    }
    return (double)n->duration_micros * 1e-6;
}

static comet_collective coll_of(int type)
{
    switch (type) {
    case COMET_ET_ALL_REDUCE: return COMET_COLL_ALL_REDUCE;
    case COMET_ET_ALL_GATHER: return COMET_COLL_ALL_GATHER;
    case COMET_ET_REDUCE_SCATTER:
    case COMET_ET_REDUCE_SCATTER_BLOCK: return COMET_COLL_REDUCE_SCATTER;
    case COMET_ET_ALL_TO_ALL: return COMET_COLL_ALL_TO_ALL;
    case COMET_ET_BROADCAST: return COMET_COLL_BROADCAST;
    case COMET_ET_REDUCE: return COMET_COLL_REDUCE;
    case COMET_ET_GATHER: return COMET_COLL_GATHER;
    case COMET_ET_SCATTER: return COMET_COLL_SCATTER;
    case COMET_ET_BARRIER: return COMET_COLL_BARRIER;
    default: return COMET_COLL_NONE;
    }
}

/* The dimensions a collective spans: all, or those marked involved. */
static int64_t span_of(const comet_system *sys, const comet_et_node *n,
                       int64_t span[COMET_MAX_DIMS])
{
    int64_t group = 1;
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        bool in = d < sys->n_dims && (n->n_involved == 0 || (d < n->n_involved && n->involved_dim[d]));
        span[d] = in ? sys->dims[d].size : 1;
        group *= span[d];
    }
    return group;
}

/* A collective is shared by the ranks of one group: those that differ
 * only along the dimensions it involves, or a named group. The j-th
 * collective a rank runs in a group is the j-th of that group, so groups
 * in different pipeline stages (say) proceed independently, as ASTRA-sim's
 * communicators do. Each group keeps its collectives in an array indexed
 * by j (16 bytes each); the groups themselves, few, sit in a hash table
 * keyed by (dimension mask, group leader) or by the named group. */
typedef struct coll_slot {
    int task;               /* -1 until the first member makes it */
    int members;            /* ranks that have reached it */
    int rank0;              /* the first of them, and its node index */
    uint32_t node0;
} coll_slot;

typedef struct coll_group {
    uint64_t key;           /* 0 = an empty entry of the table */
    int64_t size;           /* ranks that must reach each collective */
    coll_slot *slot;
    size_t n, cap;
} coll_group;

typedef struct coll_groups {
    coll_group *entry;
    size_t cap, used;
} coll_groups;

static coll_group *coll_group_find(coll_groups *t, uint64_t key, int64_t size)
{
    if (2 * (t->used + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        coll_group *e = calloc(cap, sizeof *e);
        if (!e)
            return NULL;
        for (size_t i = 0; i < t->cap; i++)
            if (t->entry[i].key) {
                size_t h = mix(t->entry[i].key) & (cap - 1);
                while (e[h].key)
                    h = (h + 1) & (cap - 1);
                e[h] = t->entry[i];
            }
        free(t->entry);
        t->entry = e;
        t->cap = cap;
    }
    size_t h = mix(key) & (t->cap - 1);
    while (t->entry[h].key && t->entry[h].key != key)
        h = (h + 1) & (t->cap - 1);
    if (!t->entry[h].key) {
        t->entry[h] = (coll_group){.key = key, .size = size};
        t->used++;
    }
    return &t->entry[h];
}

/* The group's j-th collective; j is at most the number it has so far. */
static coll_slot *coll_slot_at(coll_group *grp, uint32_t j)
{
    if (j < grp->n)
        return &grp->slot[j];
    if (grp->n == grp->cap) {
        size_t cap = grp->cap ? 2 * grp->cap : 16;
        coll_slot *v = realloc(grp->slot, sizeof *v * cap);
        if (!v)
            return NULL;
        grp->slot = v;
        grp->cap = cap;
    }
    grp->slot[grp->n] = (coll_slot){.task = -1};
    return &grp->slot[grp->n++];
}

static void coll_groups_free(coll_groups *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->entry[i].slot);
    free(t->entry);
}

/* The group's leader (its rank with coordinate 0 along every involved
 * dimension) and the involved-dimension mask. */
static int group_of(const comet_system *sys, const comet_et_node *n, int rank, unsigned *mask)
{
    int leader = 0, stride = 1, rest = rank;
    *mask = 0;
    for (int d = 0; d < sys->n_dims; d++) {
        int size = (int)sys->dims[d].size, coord = rest % size;
        rest /= size;
        bool in = n->n_involved == 0 || (d < n->n_involved && n->involved_dim[d]);
        if (in)
            *mask |= 1u << d;
        else
            leader += coord * stride;
        stride *= size;
    }
    return leader;
}

/* Collective node i of rank r, the j-th of its group (slot): the group's
 * task, made by its first member. Under --flows a group of fabric shape
 * `shape` (>= 0) runs as flows sharing the fabric when its task starts;
 * one the fabric cannot run as a group (-1) is priced alone. */
static comet_status collective_task(trace_sim *s, int r, size_t i, uint32_t j, coll_slot *slot,
                                    const int64_t span[COMET_MAX_DIMS], int64_t group, int shape,
                                    comet_error *err)
{
    const comet_et_node *n = &s->t->rank[r].nodes[i];
    char file[4200];
    file_of(s, r, file, sizeof file);
    if (slot->task >= 0) {
        const comet_et_node *first = &s->t->rank[slot->rank0].nodes[slot->node0];
        if (n->comm_type != first->comm_type || n->comm_size != first->comm_size)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "node %llu: collective number %lu of its group, of type %d "
                                   "and %.0f bytes, is of type %d and %.0f bytes on rank %d "
                                   "(node %llu): a group's ranks must run its collectives in "
                                   "the same order",
                                   (unsigned long long)n->id, (unsigned long)j + 1, n->comm_type,
                                   n->comm_size, first->comm_type, first->comm_size,
                                   slot->rank0, (unsigned long long)first->id);
        return COMET_OK;
    }
    comet_collective c = coll_of(n->comm_type);
    if (c == COMET_COLL_NONE)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "node %llu: collective type %d is not one Chakra defines",
                               (unsigned long long)n->id, n->comm_type);
    /* As ASTRA-sim reads comm_size: an all-gather's is each rank's shard
     * (the result is group times larger); the others' is the whole buffer
     * each rank holds, split across the group. comet's collectives take
     * the whole buffer. */
    bool gather = c == COMET_COLL_ALL_GATHER || c == COMET_COLL_GATHER;
    bool barrier = c == COMET_COLL_BARRIER; /* its size is COMET_BARRIER_BYTES, whatever it says */
    if (!barrier && (!(n->comm_size > 0) || !isfinite(n->comm_size)))
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "node %llu: comm_size %g is not a positive number of bytes",
                               (unsigned long long)n->id, n->comm_size);
    bool splits = c == COMET_COLL_ALL_REDUCE || c == COMET_COLL_REDUCE_SCATTER ||
                  c == COMET_COLL_ALL_TO_ALL || c == COMET_COLL_SCATTER;
    if (splits && fmod(n->comm_size, (double)group) != 0.0)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "node %llu: comm_size %.17g does not divide across its group of "
                               "%lld NPUs",
                               (unsigned long long)n->id, n->comm_size, (long long)group);
    double bytes = barrier ? COMET_BARRIER_BYTES
                 : gather  ? n->comm_size * (double)group
                           : n->comm_size;
    comet_sim_collective_result res = {0};
    comet_status st = COMET_OK;
    if (s->replay && shape < 0)
        st = sim_fabric_replay_alone(s->replay, span, c, bytes, &res.time, err);
    else if (!s->replay)
        st = comet_sim_collective(&s->in->system, span, c, bytes, &s->in->options, &res, err);
    if (st)
        return st;
    /* as flows its task ends when its flows do: its duration is not used */
    slot->task = sim_add_task(&s->g, s->instant, res.time, COMET_ET_COLLECTIVE, 0, (int)i, r);
    slot->rank0 = r;
    slot->node0 = (uint32_t)i;
    if (slot->task < 0)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (s->replay && shape >= 0) {
        /* as flows the links' part runs on the fabric; what no link shares
         * (ASTRA-sim's endpoint delays and the reductions' local-memory
         * passes) is the step simulation's price with them less without */
        double tail = 0.0;
        if (s->in->options.endpoint_delay > 0.0 || s->in->options.local_mem_bw > 0.0) {
            comet_sim_options bare = s->in->options;
            bare.endpoint_delay = 0.0;
            bare.local_mem_bw = 0.0;
            comet_sim_collective_result with, without;
            st = comet_sim_collective(&s->in->system, span, c, bytes, &s->in->options, &with, err);
            if (!st)
                st = comet_sim_collective(&s->in->system, span, c, bytes, &bare, &without, err);
            if (st)
                return st;
            tail = with.time > without.time ? with.time - without.time : 0.0;
        }
        return sim_fabric_replay_add(s->replay, slot->task, shape, r, c, bytes, tail, err);
    }
    return COMET_OK;
}

/* Named groups (comm-group JSON): each must be a sub-grid of the network,
 * so its collective runs on the dimensions it spans; span[] per group.
 * Under --flows, shape[] is its fabric shape (named_shape), -1 for a group
 * the fabric cannot run as one (on a torus or mesh, its coordinates along
 * the grid not evenly spaced, or not a block of the tiling). */
typedef struct named_groups {
    int n;
    int **sorted;            /* members, sorted, per group */
    int64_t (*span)[COMET_MAX_DIMS];
    int *shape;
    const comet_comm_group **by_name; /* the groups sorted by name */
    uint32_t *seen;          /* per group: collectives so far on the current rank */
    int *touched, n_touched; /* the groups whose seen[] the current rank raised */
} named_groups;

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int group_name_cmp(const void *a, const void *b)
{
    return strcmp((*(const comet_comm_group *const *)a)->name,
                  (*(const comet_comm_group *const *)b)->name);
}

static int name_key_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, (*(const comet_comm_group *const *)elem)->name);
}

static void named_free(named_groups *ng)
{
    for (int i = 0; ng->sorted && i < ng->n; i++)
        free(ng->sorted[i]);
    free(ng->sorted);
    free(ng->span);
    free(ng->shape);
    free(ng->by_name);
    free(ng->seen);
    free(ng->touched);
}

/* Under --flows, named group cg's fabric shape (its span per dimension,
 * apart[] its spacing where it tiles the network, else NULL) into *shape,
 * -1 where the fabric cannot run it. Its ring visits its positions along
 * each dimension in the order the comm-group file first names them
 * (ASTRA-sim keeps a group's ranks in the file's order and runs its ring
 * through them so); a group that tiles and lists them in ascending order
 * shares its shape with the groups like it, any other is listed. */
static comet_status named_shape(const trace_sim *s, const comet_comm_group *cg,
                                const int64_t span[COMET_MAX_DIMS], const int64_t *apart,
                                int *shape, comet_error *err)
{
    const comet_system *sys = &s->in->system;
    int64_t *coord[COMET_MAX_DIMS] = {NULL};
    bool ascending = true, ok = true;
    for (int d = 0, stride = 1; d < COMET_MAX_DIMS && d < sys->n_dims; d++) {
        int64_t size = sys->dims[d].size, n = 0;
        if (span[d] > 1 && (coord[d] = malloc(sizeof **coord * (size_t)span[d])) == NULL)
            ok = false;
        for (int k = 0; coord[d] && k < cg->n; k++) {
            int64_t x = (cg->ranks[k] / stride) % size, j = 0;
            while (j < n && coord[d][j] != x)
                j++;
            if (j == n && n < span[d]) {
                ascending = ascending && (n == 0 || x > coord[d][n - 1]);
                coord[d][n++] = x;
            }
        }
        stride *= (int)size;
    }
    *shape = -1;
    if (ok && apart && ascending)
        *shape = sim_fabric_replay_shape(s->replay, span, apart);
    if (ok && *shape == -1) /* (evenly spaced, its spacing may still not tile) */
        *shape = sim_fabric_replay_listed(s->replay, span, (const int64_t *const *)coord);
    if (ok && *shape == -1 && apart && !ascending) /* a torus or mesh: the tiling's order */
        *shape = sim_fabric_replay_shape(s->replay, span, apart);
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        free(coord[d]);
    return ok && *shape >= -1 ? COMET_OK : out_of_memory(err);
}

static comet_status named_prepare(const trace_sim *s, named_groups *ng, comet_error *err)
{
    const comet_astra_inputs *in = s->in;
    const comet_system *sys = &in->system;
    ng->n = in->n_groups;
    if (ng->n == 0)
        return COMET_OK;
    ng->sorted = calloc((size_t)ng->n, sizeof *ng->sorted);
    ng->span = calloc((size_t)ng->n, sizeof *ng->span);
    ng->shape = calloc((size_t)ng->n, sizeof *ng->shape);
    ng->by_name = malloc(sizeof *ng->by_name * (size_t)ng->n);
    ng->seen = calloc((size_t)ng->n, sizeof *ng->seen);
    ng->touched = malloc(sizeof *ng->touched * (size_t)ng->n);
    if (!ng->sorted || !ng->span || !ng->shape || !ng->by_name || !ng->seen || !ng->touched)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int g = 0; g < ng->n; g++)
        ng->by_name[g] = &in->groups[g];
    qsort(ng->by_name, (size_t)ng->n, sizeof *ng->by_name, group_name_cmp);
    for (int g = 0; g < ng->n; g++) {
        const comet_comm_group *cg = &in->groups[g];
        int *m = malloc(sizeof *m * (size_t)(cg->n > 0 ? cg->n : 1));
        if (!m)
            return out_of_memory(err);
        if (cg->n > 0)
            memcpy(m, cg->ranks, sizeof *m * (size_t)cg->n);
        qsort(m, (size_t)(cg->n > 0 ? cg->n : 0), sizeof *m, int_cmp);
        ng->sorted[g] = m;
        if (cg->n < 1)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, cg->name,
                                   "comm group \"%s\" has no ranks", cg->name);
        if (m[0] < 0 || m[cg->n - 1] >= s->t->ranks)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, cg->name,
                                   "comm group \"%s\" names rank %d, which is not in the trace "
                                   "(ranks 0 to %d)",
                                   cg->name, m[0] < 0 ? m[0] : m[cg->n - 1], s->t->ranks - 1);
        /* distinct coordinates per dimension; their product must be the
         * size. On the fabric: evenly spaced (apart[d]), the first a
         * multiple of span x spacing, as the fabric's groups tile */
        int64_t product = 1, apart[COMET_MAX_DIMS];
        bool tiles = true;
        for (int d = 0, stride = 1; d < COMET_MAX_DIMS; d++) {
            int64_t size = d < sys->n_dims ? sys->dims[d].size : 1, distinct = 0;
            unsigned char *hit = calloc((size_t)size, 1);
            if (!hit)
                return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            for (int k = 0; k < cg->n; k++) {
                int64_t coord = (m[k] / stride) % size;
                distinct += !hit[coord];
                hit[coord] = 1;
            }
            int64_t first = -1, last = -1;
            apart[d] = 0;
            for (int64_t x = 0; x < size && tiles; x++) {
                if (!hit[x])
                    continue;
                if (first < 0)
                    first = x;
                else if (apart[d] == 0)
                    apart[d] = x - first;
                else
                    tiles = x - last == apart[d];
                last = x;
            }
            if (apart[d] > 0)
                tiles = tiles && (first / apart[d]) % distinct == 0;
            free(hit);
            ng->span[g][d] = distinct;
            product *= distinct;
            stride *= (int)size;
        }
        for (int k = 1; k < cg->n && product == cg->n; k++)
            if (m[k] == m[k - 1])
                product = 0;
        if (product != cg->n || m[cg->n - 1] >= s->t->ranks)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, cg->name,
                                   "comm group \"%s\" (%d ranks) is not a sub-grid of the "
                                   "network's %d ranks: comet times a collective on the "
                                   "dimensions its group spans",
                                   cg->name, cg->n, s->t->ranks);
        ng->shape[g] = -1;
        if (s->replay) {
            comet_status st = named_shape(s, cg, ng->span[g], tiles ? apart : NULL,
                                          &ng->shape[g], err);
            if (st)
                return st;
        }
    }
    return COMET_OK;
}

/* The named group of collective node n on rank r: its index, or an error. */
static int named_lookup(const trace_sim *s, const named_groups *ng, int r, const comet_et_node *n,
                        comet_error *err)
{
    const comet_comm_group *const *hit =
        ng->n ? bsearch(n->pg_name, ng->by_name, (size_t)ng->n, sizeof *ng->by_name, name_key_cmp)
              : NULL;
    int g = hit ? (int)(*hit - s->in->groups) : -1;
    if (g >= 0 && bsearch(&r, ng->sorted[g], (size_t)s->in->groups[g].n, sizeof(int), int_cmp))
        return g;
    char file[4200];
    file_of(s, r, file, sizeof file);
    const char *groups = s->in->groups_file[0] ? s->in->groups_file : "the comm-group file";
    if (g >= 0)
        comet_error_set(err, COMET_EINPUT, file, 0, 0, "pg_name",
                        "node %llu: rank %d is not in its comm group \"%s\" in %s",
                        (unsigned long long)n->id, r, n->pg_name, groups);
    else if (s->in->n_groups == 0 && !s->in->groups_file[0])
        comet_error_set(err, COMET_EINPUT, file, 0, 0, "pg_name",
                        "node %llu: comm group \"%s\" is named, but no comm-group file was "
                        "given",
                        (unsigned long long)n->id, n->pg_name);
    else
        comet_error_set(err, COMET_EINPUT, file, 0, 0, "pg_name",
                        "node %llu: comm group \"%s\" is not in %s",
                        (unsigned long long)n->id, n->pg_name, groups);
    return -1;
}

static comet_status collectives(trace_sim *s, comet_error *err)
{
    const comet_et_trace *t = s->t;
    const comet_system *sys = &s->in->system;
    coll_groups groups = {0};
    named_groups ng = {0};
    comet_status st = named_prepare(s, &ng, err);
    uint32_t seen[256]; /* per rank: collectives so far over each dimension mask */
    int mask_shape[256]; /* under --flows: each mask's fabric shape, -3 not yet asked */
    for (int k = 0; k < 256; k++)
        mask_shape[k] = -3;
    for (int r = 0; r < t->ranks && !st; r++) {
        memset(seen, 0, sizeof seen);
        const comet_et_rank *rk = &t->rank[r];
        for (size_t k = 0; k < rk->n && !st; k++) {
            size_t i = s->order[r][k];
            const comet_et_node *n = &rk->nodes[i];
            if (n->type != COMET_ET_COLLECTIVE)
                continue;
            coll_group *grp;
            uint32_t j;
            int64_t span[COMET_MAX_DIMS];
            int shape = -1;
            if (n->pg_name && n->pg_name[0]) {
                int g = named_lookup(s, &ng, r, n, err);
                if (g < 0) {
                    st = err->status;
                    break;
                }
                memcpy(span, ng.span[g], sizeof span);
                shape = ng.shape[g];
                if (ng.seen[g] == 0)
                    ng.touched[ng.n_touched++] = g;
                j = ng.seen[g]++;
                grp = coll_group_find(&groups, 1ULL << 63 | (uint32_t)g, s->in->groups[g].n);
            } else {
                unsigned mask;
                int leader = group_of(sys, n, r, &mask);
                int64_t size = span_of(sys, n, span);
                if (s->replay && mask_shape[mask] == -3)
                    mask_shape[mask] = sim_fabric_replay_shape(s->replay, span, NULL);
                if (s->replay)
                    shape = mask_shape[mask];
                j = seen[mask]++;
                grp = coll_group_find(&groups, ((uint64_t)mask << 32 | (uint32_t)leader) + 1,
                                      size);
            }
            coll_slot *slot = grp && shape >= -1 ? coll_slot_at(grp, j) : NULL;
            if (!slot) {
                st = out_of_memory(err);
                break;
            }
            st = collective_task(s, r, i, j, slot, span, grp->size, shape, err);
            slot->members++;
            s->task_of[r][i] = slot->task;
        }
        /* named groups count per rank too */
        for (int k = 0; k < ng.n_touched; k++)
            ng.seen[ng.touched[k]] = 0;
        ng.n_touched = 0;
    }
    /* every member of every group must have reached each collective */
    for (size_t e = 0; e < groups.cap && !st; e++)
        for (size_t j = 0; j < groups.entry[e].n && !st; j++) {
            const coll_group *grp = &groups.entry[e];
            const coll_slot *slot = &grp->slot[j];
            if (slot->members == grp->size)
                continue;
            char file[4200];
            file_of(s, slot->rank0, file, sizeof file);
            st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                 "node %llu: only %d of the %lld ranks of its group reach this "
                                 "collective (collectives must match across the group)",
                                 (unsigned long long)t->rank[slot->rank0].nodes[slot->node0].id,
                                 slot->members, (long long)grp->size);
        }
    coll_groups_free(&groups);
    named_free(&ng);
    return st;
}

/* A peer attribute of a send or receive (comm_src, comm_dst): a rank of
 * the trace, or -1 (absent) where the node can do without it. */
static comet_status check_peer(const trace_sim *s, int r, const comet_et_node *n,
                               const char *attribute, int64_t peer, bool required,
                               comet_error *err)
{
    if ((peer >= 0 && peer < s->t->ranks) || (peer == -1 && !required))
        return COMET_OK;
    char file[4200];
    file_of(s, r, file, sizeof file);
    if (peer == -1)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "node %llu on rank %d: a %s needs %s (its peer rank)",
                               (unsigned long long)n->id, r,
                               n->type == COMET_ET_SEND ? "send" : "receive", attribute);
    return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                           "node %llu on rank %d: %s names rank %lld, which does not exist "
                           "(the trace has ranks 0 to %d)",
                           (unsigned long long)n->id, r, attribute, (long long)peer,
                           s->t->ranks - 1);
}

/* A send needs comm_dst and a receive comm_src; the other may be absent. */
static comet_status check_peers(const trace_sim *s, int r, const comet_et_node *n,
                                comet_error *err)
{
    bool send = n->type == COMET_ET_SEND;
    comet_status st = check_peer(s, r, n, send ? "comm_dst" : "comm_src",
                                 send ? n->comm_dst : n->comm_src, true, err);
    return st ? st
              : check_peer(s, r, n, send ? "comm_src" : "comm_dst",
                           send ? n->comm_src : n->comm_dst, false, err);
}

/* A send's time: a point-to-point transfer, priced by the network, on
 * the first dimension along which source and destination differ, plus the
 * endpoint delay. */
static double send_time(const comet_astra_inputs *in, int r, const comet_et_node *n)
{
    int64_t a = n->comm_src >= 0 ? n->comm_src : r;
    int d = comet_p2p_dim_between(&in->system, a, n->comm_dst);
    return comet_p2p_time_on(&in->system, d, (double)n->comm_size) + in->options.endpoint_delay;
}

/* One task per node but collectives, each rank's in dependency order, so
 * a stream's program order never waits on a later node. */
static comet_status node_tasks(trace_sim *s, comet_error *err)
{
    const comet_astra_inputs *in = s->in;
    for (int r = 0; r < s->t->ranks; r++) {
        const comet_et_rank *rk = &s->t->rank[r];
        for (size_t k = 0; k < rk->n; k++) {
            size_t i = s->order[r][k];
            const comet_et_node *n = &rk->nodes[i];
            int res = -1;
            double dur = 0.0;
            const char *from = NULL; /* the attribute the time comes from */
            comet_status st = COMET_OK;
            switch (n->type) {
            case COMET_ET_COMPUTE:
                res = r * S_PER_RANK + (n->is_cpu_op ? S_CPU : S_COMPUTE);
                dur = compute_time(in, n);
                from = "num_ops (with tensor_size)";
                break;
            case COMET_ET_MEM_LOAD:
            case COMET_ET_MEM_STORE: {
                double bw = in->mem_bandwidth > 0 ? in->mem_bandwidth : in->options.local_mem_bw;
                res = r * S_PER_RANK + S_MEM;
                dur = in->mem_latency + (bw > 0 ? n->tensor_size / bw : 0.0);
                from = "tensor_size";
                break;
            }
            case COMET_ET_SEND:
                st = check_peers(s, r, n, err);
                res = r * S_PER_RANK + S_COMM;
                dur = st ? 0.0 : send_time(in, r, n);
                from = "comm_size";
                break;
            case COMET_ET_RECV:
                st = check_peers(s, r, n, err);
                res = s->instant;
                break;
            case COMET_ET_COLLECTIVE:
                continue; /* one task for all ranks, made by collectives() */
            default: /* metadata completes instantly once ready */
                res = s->instant;
                break;
            }
            if (st)
                return st;
            if (!(dur >= 0.0) || !isfinite(dur)) {
                char file[4200];
                file_of(s, r, file, sizeof file);
                return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                       "node %llu: its %s gives a time of %g s (it must be "
                                       "finite and not negative)",
                                       (unsigned long long)n->id, from, dur);
            }
            /* the rank is known from a stream task's resource; tasks on the
             * shared resource carry it in `layer` */
            int task = sim_add_task(&s->g, res, dur, (uint8_t)n->type, 0, (int)i,
                                    res == s->instant ? r : 0);
            if (task < 0)
                return out_of_memory(err);
            s->task_of[r][i] = task;
        }
    }
    return COMET_OK;
}

/* Sends indexed by (source, destination, tag) in program order, so each
 * receive finds the next unmatched one with a binary search; `next` (kept
 * in a key's first entry) counts the key's sends already matched. */
typedef struct send_entry {
    int src, dst;
    int64_t tag;
    size_t order;           /* place in the source rank's dependency order */
    int task;
    int next;
} send_entry;

static int send_cmp(const void *a, const void *b)
{
    const send_entry *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static send_entry *index_sends(const trace_sim *s, size_t *n_out)
{
    size_t n = 0;
    for (int r = 0; r < s->t->ranks; r++)
        for (size_t i = 0; i < s->t->rank[r].n; i++)
            n += s->t->rank[r].nodes[i].type == COMET_ET_SEND;
    send_entry *v = malloc(sizeof *v * (n ? n : 1));
    if (!v)
        return NULL;
    n = 0;
    for (int r = 0; r < s->t->ranks; r++)
        for (size_t k = 0; k < s->t->rank[r].n; k++) {
            size_t i = s->order[r][k];
            const comet_et_node *m = &s->t->rank[r].nodes[i];
            if (m->type == COMET_ET_SEND)
                v[n++] = (send_entry){r, (int)m->comm_dst, m->comm_tag, k, s->task_of[r][i], 0};
        }
    qsort(v, n, sizeof *v, send_cmp);
    *n_out = n;
    return v;
}

/* The task of the next unmatched send from src to dst with this tag, or -1. */
static int next_send(send_entry *v, size_t n, int src, int dst, int64_t tag)
{
    send_entry key = {src, dst, tag, 0, 0, 0};
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the key's first entry */
        size_t mid = (lo + hi) / 2;
        if (send_cmp(&v[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n || v[lo].src != src || v[lo].dst != dst || v[lo].tag != tag)
        return -1;
    size_t at = lo + (size_t)v[lo].next;
    if (at >= n || v[at].src != src || v[at].dst != dst || v[at].tag != tag)
        return -1; /* all of them are matched already */
    v[lo].next++;
    return v[at].task;
}

/* Rank r's dependencies as edges, and each receive after its send, in the
 * rank's dependency order (so receives match sends in program order). */
static comet_status rank_edges(trace_sim *s, int r, const id_table *ids, send_entry *sends,
                               size_t n_sends, comet_error *err)
{
    const comet_et_rank *rk = &s->t->rank[r];
    for (size_t k = 0; k < rk->n; k++) {
        size_t i = s->order[r][k];
        const comet_et_node *n = &rk->nodes[i];
        /* order_rank found every dependency */
        for (size_t d = 0; d < n->n_deps; d++)
            if (sim_add_dep(&s->g, s->task_of[r][id_table_find(ids, n->deps[d])],
                            s->task_of[r][i]))
                return out_of_memory(err);
        if (n->type != COMET_ET_RECV)
            continue;
        /* the matching send: the next unmatched one from comm_src with this tag
         * (node_tasks checked that comm_src is a rank) */
        int src = (int)n->comm_src;
        int send = next_send(sends, n_sends, src, r, n->comm_tag);
        if (send < 0) {
            char file[4200];
            file_of(s, r, file, sizeof file);
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "node %llu receives from rank %d with tag %lld, but no "
                                   "send matches",
                                   (unsigned long long)n->id, src, (long long)n->comm_tag);
        }
        if (sim_add_dep(&s->g, send, s->task_of[r][i]))
            return out_of_memory(err);
    }
    return COMET_OK;
}

/* Dependencies by node id, and each receive after its send. */
static comet_status edges(trace_sim *s, comet_error *err)
{
    size_t n_sends = 0;
    send_entry *sends = index_sends(s, &n_sends);
    if (!sends)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = COMET_OK;
    for (int r = 0; !st && r < s->t->ranks; r++) {
        id_table ids = {0};
        st = id_table_build(s, r, &ids, err);
        if (!st)
            st = rank_edges(s, r, &ids, sends, n_sends, err);
        free(ids.slot);
    }
    free(sends);
    return st;
}

/* The rank of a task and its node there: a stream task's rank is its
 * resource's, a task on the shared resource carries it in `layer`; a
 * collective's are those of its first member. */
static int task_rank(const trace_sim *s, const sim_task *t)
{
    return t->resource < s->instant ? t->resource / S_PER_RANK : t->layer;
}

typedef struct describe_ctx {
    const trace_sim *s;
} describe_ctx;

static void describe(const sim_task *t, void *ctx, char *out, size_t cap)
{
    const trace_sim *s = ((const describe_ctx *)ctx)->s;
    int r = task_rank(s, t);
    if (r >= 0 && r < s->t->ranks && t->micro >= 0 && (size_t)t->micro < s->t->rank[r].n)
        snprintf(out, cap, "%s.%d.et node %llu \"%s\"", s->prefix, r,
                 (unsigned long long)s->t->rank[r].nodes[t->micro].id,
                 s->t->rank[r].nodes[t->micro].name);
    else
        snprintf(out, cap, "a collective");
}

/* ---- deadlocks across ranks ------------------------------------------------------ */

/* Each rank's order has every node after its dependencies, so a trace
 * that still cannot finish waits on itself across ranks: a receive on its
 * send, a collective on the other ranks of its group, a node on the one
 * ahead of it on its stream. The engine finds such a cycle of tasks once
 * it is stuck (nothing is spent on traces that finish); here it is named
 * node by node as rank:id. */

static bool is_collective(const trace_sim *s, int task)
{
    return s->g.tasks[task].kind == COMET_ET_COLLECTIVE && s->g.tasks[task].resource == s->instant;
}

/* Rank r's node in a collective task (a rank has at most one), or -1. */
static long member_on(const trace_sim *s, int task, int r)
{
    for (size_t i = 0; i < s->t->rank[r].n; i++)
        if (s->task_of[r][i] == task)
            return (long)i;
    return -1;
}

static bool depends_on(const comet_et_node *n, uint64_t id)
{
    for (size_t d = 0; d < n->n_deps; d++)
        if (n->deps[d] == id)
            return true;
    return false;
}

/* The rank on which task a waits on task b through a dependency: the rank
 * of whichever is not a collective; for two collectives, a rank whose
 * member of a depends on its member of b. */
static int wait_rank(const trace_sim *s, int a, int b)
{
    if (!is_collective(s, a))
        return task_rank(s, &s->g.tasks[a]);
    if (!is_collective(s, b))
        return task_rank(s, &s->g.tasks[b]);
    for (int r = 0; r < s->t->ranks; r++) {
        long ma = member_on(s, a, r), mb = member_on(s, b, r);
        if (ma >= 0 && mb >= 0 &&
            depends_on(&s->t->rank[r].nodes[ma], s->t->rank[r].nodes[mb].id))
            return r;
    }
    return task_rank(s, &s->g.tasks[a]);
}

/* "rank:id (what it is)" for a node on a cycle; a collective reached
 * again on another rank is "the same" one. */
static int cycle_node(const trace_sim *s, int r, long i, bool same, bool behind, char *out,
                      size_t cap)
{
    const comet_et_node *n = &s->t->rank[r].nodes[i];
    char what[80] = "";
    if (n->type == COMET_ET_SEND)
        snprintf(what, sizeof what, "send to rank %lld", (long long)n->comm_dst);
    else if (n->type == COMET_ET_RECV)
        snprintf(what, sizeof what, "receive from rank %lld", (long long)n->comm_src);
    else if (n->type == COMET_ET_COLLECTIVE)
        snprintf(what, sizeof what, "%s%s", same ? "the same " : "",
                 comet_collective_name(coll_of(n->comm_type)));
    if (behind)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%sbehind the next on its stream",
                 what[0] ? ", " : "");
    return snprintf(out, cap, "%d:%llu%s%s%s", r, (unsigned long long)n->id, what[0] ? " (" : "",
                    what, what[0] ? ")" : "");
}

/* The error for the engine's cycle (s->g.cycle), from its task on the
 * lowest rank with the lowest id, each node waiting on the next, as many
 * as the message holds. */
static comet_status wait_cycle_error(const trace_sim *s, comet_error *err)
{
    const sim_wait *cycle = s->g.cycle;
    int length = s->g.n_cycle, from = 0;
    for (int k = 1; k < length; k++) {
        const sim_task *a = &s->g.tasks[cycle[k].task], *b = &s->g.tasks[cycle[from].task];
        int ra = task_rank(s, a), rb = task_rank(s, b);
        if (ra < rb || (ra == rb && s->t->rank[ra].nodes[a->micro].id <
                                        s->t->rank[rb].nodes[b->micro].id))
            from = k;
    }
    char chain[200] = "", first[32] = "";
    size_t used = 0, shown = 0;
    int first_rank = -1;
    bool whole = true, many_ranks = false;
    for (int k = 0; k < length && whole; k++) {
        const sim_wait *w = &cycle[(from + k) % length];
        int task = w->task, r = task_rank(s, &s->g.tasks[task]);
        int ranks[2] = {r, r}, count = 1;
        if (is_collective(s, task)) {
            ranks[0] = wait_rank(s, cycle[(from + k + length - 1) % length].task, task);
            ranks[1] = wait_rank(s, task, cycle[(from + k + 1) % length].task);
            count = ranks[1] != ranks[0] ? 2 : 1;
        }
        for (int m = 0; m < count; m++) {
            long i = is_collective(s, task) ? member_on(s, task, ranks[m]) : s->g.tasks[task].micro;
            char one[160];
            int len = cycle_node(s, ranks[m], i, m == 1, w->behind, one, sizeof one);
            if (used + (size_t)len + 4 + 24 >= sizeof chain) {
                whole = false;
                break;
            }
            used += (size_t)snprintf(chain + used, sizeof chain - used, "%s -> ", one);
            if (first_rank < 0) {
                first_rank = ranks[m];
                snprintf(first, sizeof first, "%d:%llu", ranks[m],
                         (unsigned long long)s->t->rank[ranks[m]].nodes[i].id);
            }
            many_ranks |= ranks[m] != first_rank;
            shown++;
        }
    }
    for (int k = 0; k < length; k++)
        many_ranks |= task_rank(s, &s->g.tasks[cycle[k].task]) != first_rank;
    char file[4200], cycle_of[48];
    file_of(s, first_rank, file, sizeof file);
    if (many_ranks)
        snprintf(cycle_of, sizeof cycle_of, "dependency cycle across ranks");
    else
        snprintf(cycle_of, sizeof cycle_of, "rank %d: dependency cycle", first_rank);
    if (whole)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "%s %s%s (each node waits on the next)", cycle_of, chain, first);
    return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                           "%s through %d tasks %s... -> %s (each node waits on the next; the "
                           "first %zu nodes shown)",
                           cycle_of, length, chain, first, shown);
}

void comet_et_result_free(comet_et_result *r)
{
    free(r->rank_finish);
    free(r->rank_compute);
    free(r->rank_exposed_comm);
    free(r->rank_comm);
    free(r->rank_memory);
    memset(r, 0, sizeof *r);
}

/* The network must have as many NPUs as the trace has ranks; its sizes
 * are multiplied with overflow checks, stopping once past the rank count. */
static comet_status check_network(const comet_et_trace *t, const comet_astra_inputs *in,
                                  comet_error *err)
{
    char files[4100];
    snprintf(files, sizeof files, "%s.*.et", t->prefix[0] ? t->prefix : "trace");
    /* what is wrong with the network alone names its file, where there is one */
    const char *net = in->network_file[0] ? in->network_file : files;
    const comet_system *sys = &in->system;
    if (sys->n_dims < 1 || sys->n_dims > COMET_MAX_DIMS)
        return comet_error_set(err, COMET_EINPUT, net, 0, 0, NULL,
                               "the network has %d dimensions; comet simulates 1 to %d",
                               sys->n_dims, COMET_MAX_DIMS);
    int64_t npus = 1;
    for (int d = 0; d < sys->n_dims; d++) {
        int64_t size = sys->dims[d].size;
        if (size < 1)
            return comet_error_set(err, COMET_EINPUT, net, 0, 0, NULL,
                                   "network dimension %d (npus_count[%d]) has %lld NPUs", d, d,
                                   (long long)size);
        if (__builtin_mul_overflow(npus, size, &npus) || npus > INT_MAX)
            return comet_error_set(err, COMET_EINPUT, net, 0, 0, NULL,
                                   "the trace has %d ranks but the network's NPU count passes "
                                   "%d at dimension %d (npus_count[%d] = %lld)",
                                   t->ranks, INT_MAX, d, d, (long long)size);
    }
    if (npus != t->ranks)
        return comet_error_set(err, COMET_EINPUT, files, 0, 0, NULL,
                               "the trace has %d ranks but the network has %lld NPUs", t->ranks,
                               (long long)npus);
    return COMET_OK;
}

/* Tasks and edges are numbered with int by the engine. The node count
 * (at least the task count) and the edge count go to *nodes, *edges. */
static comet_status check_size(const comet_et_trace *t, size_t *nodes_out, size_t *edges_out,
                               comet_error *err)
{
    size_t nodes = 0, deps = 0;
    for (int r = 0; r < t->ranks; r++) {
        nodes += t->rank[r].n;
        for (size_t i = 0; i < t->rank[r].n && deps < MAX_TASKS_OR_EDGES; i++)
            deps += t->rank[r].nodes[i].n_deps < MAX_TASKS_OR_EDGES
                        ? t->rank[r].nodes[i].n_deps + (t->rank[r].nodes[i].type == COMET_ET_RECV)
                        : MAX_TASKS_OR_EDGES;
    }
    *nodes_out = nodes;
    *edges_out = deps;
    if (nodes < MAX_TASKS_OR_EDGES && deps < MAX_TASKS_OR_EDGES)
        return COMET_OK;
    char files[4100];
    snprintf(files, sizeof files, "%s.*.et", t->prefix[0] ? t->prefix : "trace");
    return comet_error_set(err, COMET_EINPUT, files, 0, 0, NULL,
                           "the trace has %s%zu %s; the simulator takes fewer than %zu",
                           nodes < MAX_TASKS_OR_EDGES ? "at least " : "",
                           nodes < MAX_TASKS_OR_EDGES ? deps : nodes,
                           nodes < MAX_TASKS_OR_EDGES ? "dependencies" : "nodes",
                           MAX_TASKS_OR_EDGES);
}

static void free_per_rank(void **v, int ranks)
{
    for (int r = 0; v && r < ranks; r++)
        free(v[r]);
    free(v);
}

comet_status comet_et_simulate(const comet_et_trace *t, const comet_astra_inputs *in,
                               comet_et_result *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    size_t nodes = 0, edge_count = 0;
    comet_status st = check_network(t, in, err);
    if (!st)
        st = check_size(t, &nodes, &edge_count, err);
    if (st)
        return st;
    trace_sim s = {.t = t, .in = in, .prefix = t->prefix[0] ? t->prefix : "trace"};
    sim_graph_init(&s.g, t->ranks * S_PER_RANK + 1);
    s.g.drop_edges = true;
    s.instant = t->ranks * S_PER_RANK;
    s.task_of = calloc((size_t)t->ranks, sizeof *s.task_of);
    s.order = calloc((size_t)t->ranks, sizeof *s.order);
    /* at most one task per node (collectives share one), edges exactly */
    st = s.order && s.task_of && !sim_set_shared(&s.g, s.instant) &&
                 !sim_reserve(&s.g, (int)nodes, (int)edge_count)
             ? COMET_OK
             : out_of_memory(err);
    for (int r = 0; !st && r < t->ranks; r++) {
        size_t n = t->rank[r].n ? t->rank[r].n : 1;
        s.task_of[r] = malloc(sizeof *s.task_of[r] * n);
        s.order[r] = malloc(sizeof *s.order[r] * n);
        if (!s.task_of[r] || !s.order[r])
            st = out_of_memory(err);
    }
    if (!st && in->flows) {
        comet_system sys = in->system;
        if (in->options.splits > 0)
            sys.collective_chunks = in->options.splits;
        st = sim_fabric_replay_new(&sys, in->max_flows, in->options.active_chunks, &s.replay,
                                   err);
    }
    if (!st)
        st = order_ranks(&s, err);
    if (!st)
        st = node_tasks(&s, err);
    if (!st)
        st = collectives(&s, err);
    if (!st)
        st = edges(&s, err);
    free_per_rank((void **)s.order, t->ranks);
    s.order = NULL;
    double makespan = 0.0;
    describe_ctx dc = {&s};
    if (!st) {
        st = s.replay ? sim_fabric_replay_run(s.replay, &s.g, &makespan, describe, &dc, err)
                      : sim_run(&s.g, &makespan, describe, &dc, err);
        if (st == COMET_EINPUT && s.g.n_cycle > 0)
            st = wait_cycle_error(&s, err);
    }
    if (s.replay) {
        int64_t shared, alone;
        sim_fabric_replay_counts(s.replay, &shared, &alone, &out->fabric_alone_distinct,
                                 &out->fabric_flows);
        out->fabric_collectives = (int)(shared + alone);
        out->fabric_shared = (int)shared;
        sim_fabric_replay_free(s.replay);
    }
    if (!st) {
        out->finish = makespan;
        out->ranks = t->ranks;
        out->events = s.g.events;
        out->rank_finish = calloc((size_t)t->ranks, sizeof(double));
        out->rank_compute = calloc((size_t)t->ranks, sizeof(double));
        out->rank_exposed_comm = calloc((size_t)t->ranks, sizeof(double));
        out->rank_comm = calloc((size_t)t->ranks, sizeof(double));
        out->rank_memory = calloc((size_t)t->ranks, sizeof(double));
        if (!out->rank_finish || !out->rank_compute || !out->rank_exposed_comm ||
            !out->rank_comm || !out->rank_memory) {
            comet_et_result_free(out);
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        }
        for (int r = 0; !st && r < t->ranks; r++) {
            for (size_t i = 0; i < t->rank[r].n; i++) {
                const sim_task *k = &s.g.tasks[s.task_of[r][i]];
                if (k->end > out->rank_finish[r])
                    out->rank_finish[r] = k->end;
                comet_et_type type = t->rank[r].nodes[i].type;
                double busy = k->end - k->start;
                if (type == COMET_ET_COMPUTE)
                    out->rank_compute[r] += busy;
                else if (type == COMET_ET_MEM_LOAD || type == COMET_ET_MEM_STORE)
                    out->rank_memory[r] += busy;
                else if (type != COMET_ET_METADATA)
                    out->rank_comm[r] += busy;
            }
            out->nodes += t->rank[r].n;
            out->rank_exposed_comm[r] = out->rank_finish[r] - out->rank_compute[r];
        }
    }
    free_per_rank((void **)s.task_of, t->ranks);
    sim_graph_free(&s.g);
    return st;
}

/* The network a trace runs on when no ASTRA-sim files are given. */
void comet_astra_ring(comet_astra_inputs *out, int64_t npus, double bandwidth, double latency)
{
    memset(out, 0, sizeof *out);
    comet_sim_options_defaults(&out->options);
    out->options.splits = 1;
    out->system.collective_chunks = 1;
    out->system.n_dims = 1;
    comet_net_dim *d = &out->system.dims[0];
    snprintf(d->name, sizeof d->name, "ring");
    d->size = npus;
    d->topology = COMET_TOPO_RING;
    d->algorithm = COMET_ALGO_RING;
    d->bandwidth = bandwidth;
    d->latency = latency;
    d->efficiency = 1.0;
}
