/* Simulating a Chakra trace on a network given by ASTRA-sim's files. Every
 * node of every rank becomes a task of comet's engine: compute on the
 * rank's compute stream (or its CPU stream for is_cpu_op), memory loads and
 * stores on its memory stream, sends on its communication stream. As in
 * ASTRA-sim, compute and communication overlap but two compute nodes of a
 * rank do not. A collective is one task shared by the ranks of its group
 * (those differing only along the dimensions it involves): it starts when
 * all of them have reached it and lasts what comet_sim_collective gives on
 * those dimensions. A receive
 * completes when the matching send (same source, destination and tag, in
 * order) does. Bad traces (missing dependencies, mismatched collectives,
 * sizes that do not split over the group, cycles) are errors that name
 * the file and the node id. */
#include "comet/chakra.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/network.h"
#include "../sim/engine.h"

enum { S_COMPUTE, S_COMM, S_CPU, S_MEM, S_PER_RANK };

typedef struct id_index {
    uint64_t id;
    int task;
} id_index;

typedef struct trace_sim {
    const comet_et_trace *t;
    const comet_astra_inputs *in;
    sim_graph g;
    int instant;            /* a shared resource where zero-cost and collective tasks run */
    id_index **by_id;       /* per rank, sorted by node id */
    int **task_of;          /* per rank, node index -> task */
    const char *prefix;
} trace_sim;

static int by_id_cmp(const void *a, const void *b)
{
    const id_index *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int find(const trace_sim *s, int rank, uint64_t id)
{
    size_t lo = 0, hi = s->t->rank[rank].n;
    const id_index *v = s->by_id[rank];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->t->rank[rank].n && v[lo].id == id ? v[lo].task : -1;
}

static void file_of(const trace_sim *s, int rank, char *out, size_t cap)
{
    snprintf(out, cap, "%s.%d.et", s->prefix, rank);
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
 * only along the dimensions it involves. The j-th collective a rank runs
 * over a given set of dimensions is the j-th of its group, so groups in
 * different pipeline stages (say) proceed independently, as ASTRA-sim's
 * communicators do. Matching is by (dimension mask, group leader, j). */
typedef struct coll_slot {
    uint64_t key;           /* 0 = empty */
    int task;
    int members;
    int rank0;              /* first rank seen, and its node index */
    size_t node0;
    int64_t group;          /* ranks that must reach it */
} coll_slot;

typedef struct coll_table {
    coll_slot *slot;
    size_t cap, used;
} coll_table;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb3f94d1a85ebULL;
    return x ^ (x >> 33);
}

static coll_slot *coll_find(coll_table *t, uint64_t key)
{
    if (2 * (t->used + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        coll_slot *s = calloc(cap, sizeof *s);
        if (!s)
            return NULL;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i].key) {
                size_t h = mix(t->slot[i].key) & (cap - 1);
                while (s[h].key)
                    h = (h + 1) & (cap - 1);
                s[h] = t->slot[i];
            }
        free(t->slot);
        t->slot = s;
        t->cap = cap;
    }
    size_t h = mix(key) & (t->cap - 1);
    while (t->slot[h].key && t->slot[h].key != key)
        h = (h + 1) & (t->cap - 1);
    if (!t->slot[h].key) {
        t->slot[h] = (coll_slot){.key = key, .task = -1};
        t->used++;
    }
    return &t->slot[h];
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

static comet_status collective_task(trace_sim *s, int r, size_t i, coll_slot *slot,
                                    const int64_t span[COMET_MAX_DIMS], int64_t group,
                                    comet_error *err)
{
    const comet_et_node *n = &s->t->rank[r].nodes[i];
    char file[4200];
    file_of(s, r, file, sizeof file);
    if (slot->task >= 0) {
        const comet_et_node *first = &s->t->rank[slot->rank0].nodes[slot->node0];
        if (n->comm_type != first->comm_type || n->comm_size != first->comm_size)
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "node %llu: collective of type %d and %.0f bytes, but its "
                                   "group's rank %d has type %d and %.0f bytes there (node %llu)",
                                   (unsigned long long)n->id, n->comm_type, n->comm_size,
                                   slot->rank0, first->comm_type, first->comm_size,
                                   (unsigned long long)first->id);
        return COMET_OK;
    }
    comet_collective c = coll_of(n->comm_type);
    if (c == COMET_COLL_NONE)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "node %llu: collective type %d is not simulated (all-reduce, "
                               "all-gather, reduce-scatter, all-to-all)",
                               (unsigned long long)n->id, n->comm_type);
    /* As ASTRA-sim reads comm_size: an all-gather's is each rank's shard
     * (the result is group times larger); the others' is the whole buffer
     * each rank holds, split across the group. comet's collectives take
     * the whole buffer. */
    bool gather = c == COMET_COLL_ALL_GATHER;
    if (!(n->comm_size > 0) || (!gather && fmod(n->comm_size, (double)group) != 0.0))
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "node %llu: comm_size %.0f does not divide across its group of "
                               "%lld NPUs",
                               (unsigned long long)n->id, n->comm_size, (long long)group);
    double bytes = gather ? n->comm_size * (double)group : n->comm_size;
    comet_sim_collective_result res;
    comet_status st = comet_sim_collective(&s->in->system, span, c, bytes, &s->in->options, &res,
                                           err);
    if (st)
        return st;
    slot->task = sim_add_task(&s->g, s->instant, res.time, COMET_ET_COLLECTIVE, 0, (int)i, r);
    slot->rank0 = r;
    slot->node0 = i;
    slot->group = group;
    if (slot->task < 0)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    return COMET_OK;
}

/* Named groups (comm-group JSON): each must be a sub-grid of the network,
 * so its collective runs on the dimensions it spans; span[] per group. */
typedef struct named_groups {
    int n;
    int **sorted;            /* members, sorted, per group */
    int64_t (*span)[COMET_MAX_DIMS];
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
    free(ng->by_name);
    free(ng->seen);
    free(ng->touched);
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
    ng->by_name = malloc(sizeof *ng->by_name * (size_t)ng->n);
    ng->seen = calloc((size_t)ng->n, sizeof *ng->seen);
    ng->touched = malloc(sizeof *ng->touched * (size_t)ng->n);
    if (!ng->sorted || !ng->span || !ng->by_name || !ng->seen || !ng->touched)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int g = 0; g < ng->n; g++)
        ng->by_name[g] = &in->groups[g];
    qsort(ng->by_name, (size_t)ng->n, sizeof *ng->by_name, group_name_cmp);
    for (int g = 0; g < ng->n; g++) {
        const comet_comm_group *cg = &in->groups[g];
        int *m = malloc(sizeof *m * (size_t)cg->n);
        if (!m)
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        memcpy(m, cg->ranks, sizeof *m * (size_t)cg->n);
        qsort(m, (size_t)cg->n, sizeof *m, int_cmp);
        ng->sorted[g] = m;
        /* distinct coordinates per dimension; their product must be the size */
        int64_t product = 1;
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
    if (g >= 0)
        comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                        "node %llu: rank %d is not in its comm group \"%s\"",
                        (unsigned long long)n->id, r, n->pg_name);
    else
        comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                        "node %llu: comm group \"%s\" is not in the comm-group file",
                        (unsigned long long)n->id, n->pg_name);
    return -1;
}

static comet_status collectives(trace_sim *s, comet_error *err)
{
    const comet_et_trace *t = s->t;
    const comet_system *sys = &s->in->system;
    coll_table table = {0}, named_table = {0};
    named_groups ng = {0};
    comet_status st = named_prepare(s, &ng, err);
    uint32_t seen[256]; /* per rank: collectives so far over each dimension mask */
    for (int r = 0; r < t->ranks && !st; r++) {
        memset(seen, 0, sizeof seen);
        const comet_et_rank *rk = &t->rank[r];
        for (size_t i = 0; i < rk->n && !st; i++) {
            const comet_et_node *n = &rk->nodes[i];
            if (n->type != COMET_ET_COLLECTIVE)
                continue;
            coll_slot *slot;
            int64_t span[COMET_MAX_DIMS], group;
            if (n->pg_name[0]) {
                int g = named_lookup(s, &ng, r, n, err);
                if (g < 0) {
                    st = err->status;
                    break;
                }
                memcpy(span, ng.span[g], sizeof span);
                group = s->in->groups[g].n;
                if (ng.seen[g] == 0)
                    ng.touched[ng.n_touched++] = g;
                slot = coll_find(&named_table, ((uint64_t)ng.seen[g]++ << 32 | (uint32_t)g) + 1);
            } else {
                unsigned mask;
                int leader = group_of(sys, n, r, &mask);
                group = span_of(sys, n, span);
                uint64_t key = ((uint64_t)seen[mask]++ << 40) ^ ((uint64_t)mask << 32) ^
                               (uint64_t)(uint32_t)leader;
                slot = coll_find(&table, key + 1);
            }
            if (!slot) {
                st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
                break;
            }
            st = collective_task(s, r, i, slot, span, group, err);
            slot->members++;
            s->task_of[r][i] = slot->task;
        }
        /* named groups count per rank too */
        for (int k = 0; k < ng.n_touched; k++)
            ng.seen[ng.touched[k]] = 0;
        ng.n_touched = 0;
    }
    /* every member of every group must have reached each collective */
    coll_table *tables[2] = {&table, &named_table};
    for (int k = 0; k < 2 && !st; k++)
        for (size_t j = 0; j < tables[k]->cap && !st; j++) {
            coll_slot *slot = &tables[k]->slot[j];
            if (!slot->key || slot->members == slot->group)
                continue;
            char file[4200];
            file_of(s, slot->rank0, file, sizeof file);
            st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                 "node %llu: only %d of the %lld ranks of its group reach this "
                                 "collective (collectives must match across the group)",
                                 (unsigned long long)t->rank[slot->rank0].nodes[slot->node0].id,
                                 slot->members, (long long)slot->group);
        }
    free(table.slot);
    free(named_table.slot);
    named_free(&ng);
    return st;
}

static comet_status node_tasks(trace_sim *s, comet_error *err)
{
    const comet_astra_inputs *in = s->in;
    for (int r = 0; r < s->t->ranks; r++) {
        const comet_et_rank *rk = &s->t->rank[r];
        for (size_t i = 0; i < rk->n; i++) {
            const comet_et_node *n = &rk->nodes[i];
            int res = -1;
            double dur = 0.0;
            switch (n->type) {
            case COMET_ET_COMPUTE:
                res = r * S_PER_RANK + (n->is_cpu_op ? S_CPU : S_COMPUTE);
                dur = compute_time(in, n);
                break;
            case COMET_ET_MEM_LOAD:
            case COMET_ET_MEM_STORE: {
                double bw = in->mem_bandwidth > 0 ? in->mem_bandwidth : in->options.local_mem_bw;
                res = r * S_PER_RANK + S_MEM;
                dur = in->mem_latency + (bw > 0 ? n->tensor_size / bw : 0.0);
                break;
            }
            case COMET_ET_SEND: {
                /* the first dimension along which source and destination differ */
                int64_t a = n->comm_src >= 0 ? n->comm_src : r, b = n->comm_dst, stride = 1;
                const comet_system *sys = &in->system;
                int d = 0;
                for (; d < sys->n_dims - 1; d++) {
                    int64_t size = sys->dims[d].size;
                    if ((a / stride) % size != (b / stride) % size)
                        break;
                    stride *= size;
                }
                double lat = sys->dims[d].latency, bw = sys->dims[d].bandwidth;
                res = r * S_PER_RANK + S_COMM;
                dur = lat + (bw > 0 ? n->comm_size / bw : 0.0) + in->options.endpoint_delay;
                break;
            }
            case COMET_ET_COLLECTIVE:
                continue; /* one task for all ranks, made by collectives() */
            default: /* receives and metadata complete instantly once ready */
                res = s->instant;
                break;
            }
            /* the rank is known from a stream task's resource; tasks on the
             * shared resource carry it in `layer` */
            int task = sim_add_task(&s->g, res, dur, (uint8_t)n->type, 0, (int)i,
                                    res == s->instant ? r : 0);
            if (task < 0)
                return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
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
    size_t order;           /* node index on the source rank */
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
        for (size_t i = 0; i < s->t->rank[r].n; i++) {
            const comet_et_node *m = &s->t->rank[r].nodes[i];
            if (m->type == COMET_ET_SEND)
                v[n++] = (send_entry){r, (int)m->comm_dst, m->comm_tag, i, s->task_of[r][i], 0};
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

static comet_status edges_indexed(trace_sim *s, send_entry *sends, size_t n_sends,
                                   comet_error *err)
{
    char file[4200];
    for (int r = 0; r < s->t->ranks; r++) {
        const comet_et_rank *rk = &s->t->rank[r];
        for (size_t i = 0; i < rk->n; i++)
            s->by_id[r][i] = (id_index){rk->nodes[i].id, s->task_of[r][i]};
        qsort(s->by_id[r], rk->n, sizeof s->by_id[r][0], by_id_cmp);
        for (size_t i = 1; i < rk->n; i++)
            if (s->by_id[r][i].id == s->by_id[r][i - 1].id) {
                file_of(s, r, file, sizeof file);
                return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                       "node %llu appears twice",
                                       (unsigned long long)s->by_id[r][i].id);
            }
    }
    for (int r = 0; r < s->t->ranks; r++) {
        const comet_et_rank *rk = &s->t->rank[r];
        for (size_t i = 0; i < rk->n; i++) {
            const comet_et_node *n = &rk->nodes[i];
            for (size_t k = 0; k < n->n_deps; k++) {
                int before = find(s, r, n->deps[k]);
                if (before < 0) {
                    file_of(s, r, file, sizeof file);
                    return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                           "node %llu depends on node %llu, which does not exist",
                                           (unsigned long long)n->id,
                                           (unsigned long long)n->deps[k]);
                }
                if (sim_add_dep(&s->g, before, s->task_of[r][i]))
                    return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            }
            if (n->type != COMET_ET_RECV)
                continue;
            /* the matching send: the next unmatched one from comm_src with this tag */
            int src = (int)n->comm_src;
            if (src < 0 || src >= s->t->ranks) {
                file_of(s, r, file, sizeof file);
                return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                       "node %llu receives from rank %d, which does not exist",
                                       (unsigned long long)n->id, src);
            }
            int send = next_send(sends, n_sends, src, r, n->comm_tag);
            if (send < 0) {
                file_of(s, r, file, sizeof file);
                return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                       "node %llu receives from rank %d with tag %lld, but no "
                                       "send matches",
                                       (unsigned long long)n->id, src, (long long)n->comm_tag);
            }
            sim_add_dep(&s->g, send, s->task_of[r][i]);
        }
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
    comet_status st = edges_indexed(s, sends, n_sends, err);
    free(sends);
    return st;
}

typedef struct describe_ctx {
    const trace_sim *s;
} describe_ctx;

static void describe(const sim_task *t, void *ctx, char *out, size_t cap)
{
    const trace_sim *s = ((const describe_ctx *)ctx)->s;
    int r = t->resource < s->instant ? t->resource / S_PER_RANK : t->layer;
    if (r >= 0 && r < s->t->ranks && t->micro >= 0 && (size_t)t->micro < s->t->rank[r].n)
        snprintf(out, cap, "%s.%d.et node %llu \"%s\"", s->prefix, r,
                 (unsigned long long)s->t->rank[r].nodes[t->micro].id,
                 s->t->rank[r].nodes[t->micro].name);
    else
        snprintf(out, cap, "a collective");
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

comet_status comet_et_simulate(const comet_et_trace *t, const comet_astra_inputs *in,
                               comet_et_result *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    int64_t npus = 1;
    for (int d = 0; d < in->system.n_dims; d++)
        npus *= in->system.dims[d].size;
    if (npus != t->ranks) {
        char files[4100];
        snprintf(files, sizeof files, "%s.*.et", t->prefix[0] ? t->prefix : "trace");
        return comet_error_set(err, COMET_EINPUT, files, 0, 0, NULL,
                               "the trace has %d ranks but the network has %lld NPUs", t->ranks,
                               (long long)npus);
    }
    trace_sim s = {.t = t, .in = in, .prefix = t->prefix[0] ? t->prefix : "trace"};
    sim_graph_init(&s.g, t->ranks * S_PER_RANK + 1);
    s.instant = t->ranks * S_PER_RANK;
    sim_set_shared(&s.g, s.instant);
    s.by_id = calloc((size_t)t->ranks, sizeof *s.by_id);
    s.task_of = calloc((size_t)t->ranks, sizeof *s.task_of);
    comet_status st = s.by_id && s.task_of ? COMET_OK
                                           : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                             "out of memory");
    for (int r = 0; !st && r < t->ranks; r++) {
        size_t n = t->rank[r].n ? t->rank[r].n : 1;
        s.by_id[r] = malloc(sizeof *s.by_id[r] * n);
        s.task_of[r] = malloc(sizeof *s.task_of[r] * n);
        if (!s.by_id[r] || !s.task_of[r])
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    if (!st)
        st = node_tasks(&s, err);
    if (!st)
        st = collectives(&s, err);
    if (!st)
        st = edges(&s, err);
    double makespan = 0.0;
    describe_ctx dc = {&s};
    if (!st)
        st = sim_run(&s.g, &makespan, describe, &dc, err);
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
    for (int r = 0; r < t->ranks; r++) {
        if (s.by_id)
            free(s.by_id[r]);
        if (s.task_of)
            free(s.task_of[r]);
    }
    free(s.by_id);
    free(s.task_of);
    sim_graph_free(&s.g);
    return st;
}
