/* Collectives as flows on the fabric. The collective is planned as the
 * closed form plans it (comet_collective_plan: reduce-scatter up the
 * spanned dimensions, all-reduce on the last, all-gather back down; an
 * all-reduce is a reduce-scatter then an all-gather, two pipelined trees
 * (double binary tree), or reduced in the network by a switch or a Clos's
 * aggregation tree; rooted collectives are scatters, gathers and chains
 * over those plans), then every NPU of every group runs it as a
 * state machine: per chunk and phase it sends its algorithm's messages as
 * flows and moves on as the messages it needs arrive, so the flows in
 * flight, not all of them, are held. A torus or mesh dimension under the
 * ring algorithm runs per axis, the buffer in one part per axis visiting
 * the axes in rotated orders (as its closed form says). A chunk enters a
 * phase once the chunk before it (of the same part) has left it, one
 * chunk per phase at a time, as the closed form pipelines them (a rooted
 * collective's chunk holds the dimension through its last phase there,
 * hold_to, where the NPU's line has work there still, held_to, but a
 * chain's chunks follow one another down it); under an
 * active-chunks limit (and for a reduce over three or more dimensions,
 * one chunk a dimension) instead once its dimension has room, as the step
 * simulation's dimensions take chunks (comet_sim_collective). Many
 * collectives and sends can run on one fabric at once, started and
 * stepped by a simulator (comet_fabric_run: a training step's transfers),
 * each flow carrying its transfer as owner. docs/fabric.md, "Collectives
 * as flows". */
#include "families.h"
#include "cc_fluid.h"
#include "flows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FLOW_PHASES 32
#define MAX_STREAMS 64
#define MAX_CHUNKS 1024
#define MAX_CHANNELS 1024
#define DEFAULT_MAX_FLOWS 250000000
/* In-network reduction streams its buffer through the switch in this many
 * pieces: piece i+1 goes up while the reduced piece i comes down, so the
 * phase takes S/B (1 + 1/pieces) where the closed form has S/B. */
#define IN_NETWORK_PIECES 64
/* The double binary tree's all-reduce pipelines each tree's half of the
 * buffer in this many pieces: 2L stages of fill against 2x of streaming,
 * so the flows take about 2x (1 + 2L/64) where the closed form has 2x. */
#define TREE_PIECES 64

void comet_flow_result_free(comet_flow_result *r)
{
    for (int i = 0; i < r->n_series && i < COMET_FABRIC_HOT_LINKS; i++) {
        free(r->series[i].t);
        free(r->series[i].utilization);
        free(r->series[i].queue);
        free(r->series[i].paused);
        r->series[i] = (comet_link_series){0};
    }
    r->n_series = 0;
}

void comet_flow_options_defaults(comet_flow_options *o)
{
    memset(o, 0, sizeof *o);
    o->concurrent = 1;
}

typedef enum fc_algo { FC_RING, FC_DIRECT, FC_HALVING, FC_BRUCK, FC_PAIRWISE, FC_IN_NETWORK,
                       FC_SCATTER, FC_GATHER, FC_CHAIN, FC_TREE } fc_algo;

typedef struct fc_phase {
    int dim;             /* system dimension */
    int axis;            /* the group's torus/mesh axis, -1: the whole dimension */
    fc_algo algo;
    comet_collective c;  /* reduce-scatter, all-gather or all-to-all (all-reduce in network) */
    double bytes;        /* per NPU as the phase starts */
    bool mirror;         /* halving-doubling's all-gather: distances halve; a chain: it runs
                            toward the root (reduce), not from it (broadcast) */
    /* rooted phases (scatter, gather): only the NPUs at index 0 of their
     * group along these dimensions (bits) take part, member 0 of each line
     * the root */
    uint8_t root_mask;
    /* a ring's: each connection's messages one after another, in order
     * (set where the dimension is uneven: on a dimension alike for every
     * NPU no message is ready before the one ahead of it on its
     * connection has arrived, so the bookkeeping is skipped) */
    bool in_order;
    /* a rooted phase on one axis of a torus or mesh group: only the NPUs
     * at index 0 along these axes of the group (bits) take part */
    uint8_t axis_mask;
    /* a chain on a unidirectional ring: a reduce's runs forward too */
    bool one_way;
    /* an NPU enters it once every part of the chunk has reached it there
     * (a broadcast's all-gather behind its per-axis scatter) */
    bool sync_parts;
    /* a chunk enters it once the chunk before has left this phase and
     * every later one up to this index (make_plans: a rooted
     * collective's chunk holds a dimension through its last phase there) */
    int8_t hold_to;
    /* halving-doubling: which pass of the folded schedule (net_hd_part:
     * a reduce-scatter's, an all-gather's, an all-reduce's halves) */
    uint8_t hd;
} fc_phase;

typedef struct fc_plan {
    int n;
    fc_phase ph[MAX_FLOW_PHASES];
} fc_plan;

/* Per NPU, stream (concurrent copy x part), chunk: the phase it is in. */
typedef struct fc_chunk_state {
    int8_t cur;          /* phase it is in or waiting for */
    int8_t entered;      /* it has sent what the phase starts with */
    /* under an active-chunks limit: the dimension (+1) whose slot it holds
     * and the one whose queue it waits in (0: none) */
    int8_t held, queued;
} fc_chunk_state;

/* Under an active-chunks limit, per NPU, stream and dimension: the chunks
 * working on it and the queue of those waiting, first come first in
 * (chunks linked through fc_run.wait_next; -1: none). */
typedef struct fc_slots {
    int32_t busy, head, tail;
} fc_slots;

/* Per NPU, stream, chunk, phase, channel: messages sent and received
 * (and which steps arrived, for the log-step schedules). */
typedef struct fc_count {
    int32_t sent, recv;
    union {
        uint64_t steps;
        double ready;        /* a ring's: when its next message was ready behind the last
                                one on its connection (0: none waits) */
    };
    int32_t acked;           /* its sends that arrived (a ring's, a tree's pieces up) */
    int32_t down;            /* a tree's pieces sent down */
    double up_ready;         /* a tree's: when its next piece up was ready behind the last
                                one on its connection (0: none waits); a leaf's: when
                                its pieces were (it holds them all from the start) */
} fc_count;

/* One collective (or one set of point-to-point sends) running on the
 * fabric: its groups, plan and per-member state. Its member NPUs are the
 * whole fabric, or a list (a pipeline stage's) with local indices. */
/* A block of an in-network tree's line: its first member, leaves and
 * members (block_of). */
typedef struct fc_block {
    int32_t first, leaves, members;
} fc_block;

typedef struct fc_run {
    const comet_fabric *f;
    uint32_t owner;          /* its flows' owner: its slot in the fabric run */
    bool sends;              /* point-to-point sends: only `left` counts */
    const int32_t *local;    /* NPU -> its index among the members, -1 not one (NULL: all) */
    int64_t n_members;
    int64_t left;            /* member streams' chunks (sends: flows) not yet through */
    int64_t span[COMET_MAX_DIMS];
    int64_t stride[COMET_MAX_DIMS]; /* positions between a group's members along d */
    /* a group listed by its positions along d (comet_fabric_group.coord):
     * them in ring order, and each position's index among them (-1: none) */
    int64_t *coord[COMET_MAX_DIMS];
    int32_t *index_at[COMET_MAX_DIMS];
    int64_t group_axes[COMET_MAX_DIMS][COMET_MAX_AXES]; /* per torus/mesh dim */
    /* whether the group's line along that axis is a whole axis of the
     * topology (a torus's ring) */
    bool group_whole[COMET_MAX_DIMS][COMET_MAX_AXES];
    int group_m[COMET_MAX_DIMS];
    int parts, streams;      /* parts: a torus's or mesh's axis orders (streams: x copies) */
    bool sync_parts;         /* some phase waits for the chunk's other parts */
    bool hold_parts;         /* a chunk enters a dimension once every part of the chunk
                                before has left it (a rooted collective's, in parts) */
    int64_t chunks;
    /* chunks each dimension works on at once per NPU and stream (0: no
     * limit, each phase one chunk at a time): slots[npu][stream][dim],
     * wait_next[npu][stream][chunk] */
    int active;
    fc_slots *slots;
    int32_t *wait_next;
    /* Themis: chunks visiting the dimensions in one order form a class;
     * chunk k is of class class_of[k] (NULL: one class), and waits in each
     * phase for the chunk before it in its class (prev[k], -1 none) */
    int classes;
    uint16_t *class_of;
    int32_t *prev, *next;
    fc_plan *plan;                       /* [class][part] */
    int (*channels)[MAX_FLOW_PHASES];    /* per plan and phase */
    int32_t *plan_at;                    /* [stream][chunk]: its plan's index, looked up per flow */
    int max_channels, max_phases;
    fc_chunk_state *chunk;   /* [npu][stream][chunk] */
    fc_count *count;         /* [phase][channel][stream][chunk][npu] */
    int32_t *arrived;        /* in-network: pieces reaching a leaf, per leaf's first member */
    int32_t *arrived_top;    /* ... and reaching the line's top switch, per line's first */
    int32_t *line_leaves;    /* per line's first member: the leaves its line spans (0: not
                                yet counted) */
    int32_t *line_blocks;    /* ... and the blocks of its tree (0: not yet counted) */
    fc_block *blocks;        /* per leaf's first member: its block (members 0: not yet found) */
    int32_t *mid;            /* per block's first member and piece: its state (block_up) */
    int64_t max_flows;
    bool failed;
    bool too_many;           /* stopped at max_flows */
} fc_run;

static int64_t local_of(const fc_run *r, int64_t npu)
{
    return r->local ? r->local[npu] : npu;
}

static bool grid_topo(comet_topology t)
{
    return t == COMET_TOPO_TORUS || t == COMET_TOPO_MESH;
}

/* ---- tags: who a finished flow is for ------------------------------------ */

enum { KIND_PEER = 0, KIND_UP = 1 };

static uint64_t tag_of(int64_t npu, int stream, int64_t chunk, int phase, int channel, int kind)
{
    return (uint64_t)npu | (uint64_t)stream << 31 | (uint64_t)chunk << 37 |
           (uint64_t)phase << 47 | (uint64_t)channel << 52 | (uint64_t)kind << 63;
}

static void untag(uint64_t t, int64_t *npu, int *stream, int64_t *chunk, int *phase,
                  int *channel, int *kind)
{
    *npu = (int64_t)(t & 0x7fffffffULL);
    *stream = (int)(t >> 31 & 63);
    *chunk = (int64_t)(t >> 37 & 1023);
    *phase = (int)(t >> 47 & 31);
    *channel = (int)(t >> 52 & 2047);
    *kind = (int)(t >> 63);
}

/* ---- lines: the NPUs a phase runs among ----------------------------------- */

typedef struct fc_line {
    int64_t n, me;       /* members and this NPU's index among them */
    int64_t base, step;  /* member j is NPU base + j * step */
    bool ring_axis;      /* a whole torus axis (or a ring dimension): neighbours wrap */
    bool folded;         /* a line: the ring runs 0, 2, 4, ..., 5, 3, 1 */
    int dim, axis;       /* the phases it is the line of: those on this dimension and axis */
    const int64_t *coord; /* a listed group's positions: member j is base + coord[j] * step */
} fc_line;

/* a / b and a % b, skipping the division where b is 1, as it often is (a
 * division costs tens of cycles, and a run asks for tens of millions of
 * lines) */
static int64_t div_by(int64_t a, int64_t b)
{
    return b == 1 ? a : a / b;
}

static int64_t mod_by(int64_t a, int64_t b)
{
    return b == 1 ? 0 : a % b;
}

static fc_line line_of(const fc_run *r, const fc_phase *ph, int64_t npu)
{
    const fab_dim *d = &r->f->dims[ph->dim];
    int64_t pos = div_by(npu, d->inner), span = r->span[ph->dim];
    if (d->outer > 1)
        pos %= d->size;
    int64_t stride = r->stride[ph->dim];
    int64_t i = div_by(pos, stride); /* index in the group along the dimension */
    if (span != d->size || stride != 1)
        i %= span;
    fc_line l = {span, i, npu - i * stride * d->inner, stride * d->inner, true, false, ph->dim,
                 ph->axis, NULL};
    if (r->coord[ph->dim]) { /* a listed group (never on a torus or mesh: no axis) */
        l.me = r->index_at[ph->dim][pos];
        l.base = npu - pos * d->inner;
        l.step = d->inner;
        l.coord = r->coord[ph->dim];
        return l;
    }
    if (ph->axis >= 0) {
        int64_t st = 1;
        for (int a = 0; a < ph->axis; a++)
            st *= r->group_axes[ph->dim][a];
        int64_t k = r->group_axes[ph->dim][ph->axis], c = mod_by(div_by(i, st), k);
        l.n = k;
        l.me = c;
        l.base = npu - c * st * stride * d->inner;
        l.step = st * stride * d->inner;
        /* a group's line along a whole axis is that axis's ring, whatever
         * the group's other axes */
        l.ring_axis = d->wrap && r->group_whole[ph->dim][ph->axis];
        l.folded = !l.ring_axis && k > 2;
    }
    return l;
}

static int64_t member(const fc_line *l, int64_t j)
{
    return l->base + (l->coord ? l->coord[j] : j) * l->step;
}

/* *l made npu's line in phase ph, unless it is that already (the line of
 * npu in another phase on the same dimension and axis): the callers pass
 * one line down through the calls an arrival makes. */
static const fc_line *line_into(const fc_run *r, const fc_phase *ph, int64_t npu, fc_line *l)
{
    if (l->dim != ph->dim || l->axis != ph->axis || member(l, l->me) != npu)
        *l = line_of(r, ph, npu);
    return l;
}

/* The same line, as member j sees it. */
static fc_line line_at(const fc_line *l, int64_t j)
{
    fc_line x = *l;
    x.me = j;
    return x;
}

/* No line yet: line_into computes it. */
#define NO_LINE ((fc_line){.dim = -1})

/* Position in ring order of member j, and the member at ring position q. */
static int64_t ring_pos(const fc_line *l, int64_t j)
{
    if (!l->folded)
        return j;
    return j % 2 == 0 ? j / 2 : l->n - 1 - j / 2;
}

static int64_t ring_member(const fc_line *l, int64_t q)
{
    if (!l->folded)
        return q;
    int64_t evens = (l->n + 1) / 2;
    return q < evens ? 2 * q : 2 * (l->n - 1 - q) + 1;
}

/* ---- the state ------------------------------------------------------------- */

static fc_chunk_state *chunk_at(fc_run *r, int64_t npu, int s, int64_t k)
{
    return &r->chunk[(local_of(r, npu) * r->streams + s) * r->chunks + k];
}

/* The members' counts of one phase, channel, stream and chunk lie side by
 * side: a step's arrivals, member after member, touch a few cache lines
 * rather than one each. */
static fc_count *count_at(fc_run *r, int64_t npu, int s, int64_t k, int p, int ch)
{
    return &r->count[(((int64_t)p * r->max_channels + ch) * r->streams + s) * r->chunks *
                         r->n_members +
                     k * r->n_members + local_of(r, npu)];
}

/* The plan chunk k of stream s follows: its class's, for its part. */
static const fc_plan *plan_of(const fc_run *r, int s, int64_t k)
{
    return &r->plan[r->plan_at[s * r->chunks + k]];
}

static int channels_at(const fc_run *r, int s, int64_t k, int p)
{
    return r->channels[r->plan_at[s * r->chunks + k]][p];
}

/* Every stream's and chunk's plan: its class's for its part (stream s
 * runs part s % parts). Returns 0 or -1 (memory). */
static int index_plans(fc_run *r)
{
    r->plan_at = malloc(sizeof *r->plan_at * (size_t)r->streams * (size_t)r->chunks);
    if (!r->plan_at)
        return -1;
    for (int s = 0; s < r->streams; s++)
        for (int64_t k = 0; k < r->chunks; k++)
            r->plan_at[s * r->chunks + k] =
                (r->class_of ? r->class_of[k] : 0) * r->parts + s % r->parts;
    return 0;
}

/* The chunk before k in its class and the one after (-1: none). */
static int64_t prev_chunk(const fc_run *r, int64_t k)
{
    return r->prev ? r->prev[k] : k - 1;
}

static int64_t next_chunk(const fc_run *r, int64_t k)
{
    return r->next ? r->next[k] : k + 1 < r->chunks ? k + 1 : -1;
}

static int log_steps(int64_t n)
{
    return n > 1 ? net_ceil_log2(n) : 0;
}

/* npu's index in its group along dimension d. */
static int64_t group_index(const fc_run *r, int d, int64_t npu)
{
    const fab_dim *fd = &r->f->dims[d];
    int64_t pos = (npu / fd->inner) % fd->size;
    return r->coord[d] ? r->index_at[d][pos] : (pos / r->stride[d]) % r->span[d];
}

/* Whether npu is at index 0 of its group along every dimension of mask
 * (bits): on the lines a rooted phase runs on. */
static bool on_root_lines(const fc_run *r, uint8_t mask, int64_t npu)
{
    for (int d = 0; d < r->f->n_dims; d++)
        if ((mask >> d & 1u) && group_index(r, d, npu) != 0)
            return false;
    return true;
}

/* Whether npu takes part in a rooted phase: index 0 of its group along
 * every dimension of the mask, and along every axis of its axis mask. */
static bool takes_part(const fc_run *r, const fc_phase *ph, int64_t npu)
{
    if (!on_root_lines(r, ph->root_mask, npu))
        return false;
    if (ph->axis_mask) {
        int64_t i = group_index(r, ph->dim, npu);
        for (int a = 0; a < r->group_m[ph->dim]; a++) {
            int64_t k = r->group_axes[ph->dim][a];
            if ((ph->axis_mask >> a & 1u) && i % k != 0)
                return false;
            i /= k;
        }
    }
    return true;
}

/* Messages a phase has each NPU send (and receive) per channel. */
static int64_t messages(const fc_phase *ph, const fc_line *l)
{
    switch (ph->algo) {
    case FC_SCATTER:
    case FC_GATHER:
        return l->n - 1; /* the root's; see needs() */
    case FC_CHAIN:
        return l->ring_axis ? l->n : 2 * l->n; /* pieces: a line's one chain 2n */
    case FC_TREE:
        return TREE_PIECES; /* per tree; tree_done says when a phase is through */
    case FC_RING:
    case FC_DIRECT:
    case FC_PAIRWISE:
        return l->n - 1;
    case FC_HALVING:
        return net_hd_of(l->n, (net_hd_part)ph->hd).steps; /* steps; see needs() */
    case FC_BRUCK:
        return log_steps(l->n);
    case FC_IN_NETWORK:
        return IN_NETWORK_PIECES;
    }
    return 0;
}

/* A chain (pipelined broadcast or reduce) on channel ch: position d of a
 * member from the root (index 0) in index order, one way round per
 * channel (two counter-rotating chains on a ring or a torus axis, one
 * along a line, from its end); the chain runs from the root (broadcast)
 * or toward it (reduce, mirror); on a unidirectional ring channel 0 runs
 * forward either way (a reduce from the root's successor round to it). */
static bool chain_forward(const fc_phase *ph, int ch)
{
    return (ch == 0) != (ph->mirror && ph->one_way);
}

static int64_t chain_pos(const fc_phase *ph, const fc_line *l, int64_t j, int ch)
{
    int64_t d = chain_forward(ph, ch) ? j : (l->n - j) % l->n;
    return ph->mirror ? l->n - 1 - d : d;
}

/* The index of the member at chain position pos, and that member. */
static int64_t chain_index(const fc_phase *ph, const fc_line *l, int64_t pos, int ch)
{
    int64_t d = ph->mirror ? l->n - 1 - pos : pos;
    return chain_forward(ph, ch) ? d : (l->n - d) % l->n;
}

static int64_t chain_member(const fc_phase *ph, const fc_line *l, int64_t pos, int ch)
{
    return member(l, chain_index(ph, l, pos, ch));
}

/* Messages npu sends and receives in phase ph per channel: the same both
 * ways in the symmetric patterns; from the root to each other member in a
 * scatter, the other way in a gather, down a chain (the head's receipts
 * are its pieces' arrivals), none for an NPU not taking part. A scatter's
 * member also waits for the root to be through (a second receipt): the
 * line leaves the phase together, as the collective returns, so members
 * near the root do not start the next phase's traffic on links the root's
 * last pieces still cross (a broadcast's all-gather behind its scatter on
 * a torus axis of even size, whose root sends one piece more one way). A
 * gather's member waits likewise, for the whole gather to be through
 * (gather_through). */
static void needs(const fc_run *r, const fc_phase *ph, const fc_line *l, int64_t npu, int ch,
                  int64_t *sent, int64_t *recv)
{
    *sent = *recv = messages(ph, l);
    if (ph->algo == FC_HALVING) {
        /* every step taken (sent counts them), its messages received */
        net_hd h = net_hd_of(l->n, (net_hd_part)ph->hd);
        *recv = 0;
        for (int st = 0; st < h.steps; st++)
            *recv += net_hd_recv(&h, st, l->me);
        return;
    }
    if (ph->algo == FC_CHAIN) {
        bool tail = chain_pos(ph, l, l->me, ch) == l->n - 1;
        int64_t pieces = *sent;
        *sent = !takes_part(r, ph, npu) || tail ? 0 : pieces;
        *recv = !takes_part(r, ph, npu) ? 0 : pieces;
        return;
    }
    if (ph->algo != FC_SCATTER && ph->algo != FC_GATHER)
        return;
    bool root = l->me == 0, part = takes_part(r, ph, npu);
    bool sends = ph->algo == FC_SCATTER ? root : !root;
    *sent = !part ? 0 : sends ? (root ? l->n - 1 : 1) : 0;
    *recv = !part ? 0 : root ? l->n - 1 : ph->algo == FC_SCATTER ? 2 : 1;
}

/* NPU npu's own port on its switch dimension d (the topology's layout). */
static int32_t switch_port(const fab_dim *d, int64_t npu, bool down)
{
    const fab_ops *ops = net_topology_of(d->topo)->fabric;
    return ops->port(d, npu % d->inner, npu / (d->inner * d->size), (npu / d->inner) % d->size,
                     down);
}

/* ---- in-network reduction: a tree of the line's leaves under one top ---- */

/* The legs of in-network work: a member's port up to its leaf, a leaf up
 * to the line's top switch, the top down to a leaf, a leaf down a port. */
typedef enum in_network_leg { LEG_PORT_UP, LEG_LEAF_UP, LEG_TOP_DOWN, LEG_PORT_DOWN } in_network_leg;

/* What one piece of the phase carries on a leg, `count` the members on
 * the leaf concerned. An all-reduce moves the whole piece every leg. A
 * reduce-scatter reduced in the switches (FRED's R micro-switches) sends
 * up all but the member's own share, a leaf's partial sums of the other
 * leaves' shares go up, the top's sums of the leaf's members' shares come
 * down, and each member gets its share. An all-gather multicast by the
 * switches (FRED's D micro-switches) is its mirror: a member's shard goes
 * up once and comes down to every other member. */
static double in_network_piece(const fc_phase *ph, int64_t n, int64_t count, in_network_leg leg)
{
    double piece = ph->bytes / IN_NETWORK_PIECES, nn = (double)n, c = (double)count;
    static const double none[4] = {1.0, 1.0, 1.0, 1.0};
    double rs[4] = {(nn - 1.0) / nn, (nn - c) / nn, c / nn, 1.0 / nn};
    double ag[4] = {1.0 / nn, c / nn, (nn - c) / nn, (nn - 1.0) / nn};
    const double *share = ph->c == COMET_COLL_REDUCE_SCATTER ? rs
                          : ph->c == COMET_COLL_ALL_GATHER   ? ag
                                                             : none;
    return piece * share[leg];
}

/* The switch an NPU's port goes up to (its leaf on a Clos). */
static int32_t leaf_of(const fc_run *r, const fc_phase *ph, int64_t npu)
{
    return r->f->to[switch_port(&r->f->dims[ph->dim], npu, false)];
}

/* The run of consecutive members on member j's leaf: its first and count
 * (a line fills its leaves in order, checked at the phase's start). */
static void leaf_run(const fc_run *r, const fc_phase *ph, const fc_line *l, int64_t j,
                     int64_t *first, int64_t *count)
{
    int32_t leaf = leaf_of(r, ph, member(l, j));
    int64_t a = j, b = j;
    while (a > 0 && leaf_of(r, ph, member(l, a - 1)) == leaf)
        a--;
    while (b + 1 < l->n && leaf_of(r, ph, member(l, b + 1)) == leaf)
        b++;
    *first = a;
    *count = b - a + 1;
}

/* A piece's counter slot, for member npu (a leaf's or a line's first). */
static int64_t piece_slot(const fc_run *r, int64_t npu, int s, int64_t k, int p, int piece)
{
    return (((local_of(r, npu) * r->streams + s) * r->chunks + k) * r->max_phases + p) *
               IN_NETWORK_PIECES +
           piece;
}

/* The leaves a line spans (counted once per line). */
static int64_t line_leaves(fc_run *r, const fc_phase *ph, const fc_line *l)
{
    int32_t *n = &r->line_leaves[local_of(r, member(l, 0))];
    if (*n == 0) {
        int32_t c = 1;
        for (int64_t j = 1; j < l->n; j++)
            c += leaf_of(r, ph, member(l, j)) != leaf_of(r, ph, member(l, j - 1));
        *n = c;
    }
    return *n;
}

/* The links from the leaf of member a up to the line's top switch (up) or
 * down from it (the reverse): the route to (or from) the line's end that
 * climbs highest. The tree is placed, not hashed: a fabric manager (SHARP's
 * aggregation manager) gives each group its own tree, so every leaf of the
 * line takes the uplink its pick names, the pick being where the line's
 * first member sits in the pod: lines that share a leaf start at different
 * places on it and spread over its uplinks (and an aggregation block's
 * cores) in turn. Returns how many, or -1. */
static int top_segment(const fc_run *r, const fc_line *l, int64_t a, int dim, bool down,
                       int32_t *seg)
{
    int32_t p0[8], p1[8];
    const fab_dim *fd = &r->f->dims[dim];
    int64_t ma = member(l, a), m0 = member(l, 0), m1 = member(l, l->n - 1);
    uint64_t pick = (uint64_t)(m0 % (fd->inner * fd->size));
    int n0 = down ? comet_fabric_route_pinned(r->f, m0, ma, pick, p0, 8)
                  : comet_fabric_route_pinned(r->f, ma, m0, pick, p0, 8);
    int n1 = down ? comet_fabric_route_pinned(r->f, m1, ma, pick, p1, 8)
                  : comet_fabric_route_pinned(r->f, ma, m1, pick, p1, 8);
    const int32_t *p = n1 > n0 ? p1 : p0;
    int n = n1 > n0 ? n1 : n0;
    if (n < 4)
        return -1;
    int climb = (n - 2) / 2; /* tiers climbed: the port up, `climb` up, `climb` down, the port */
    for (int i = 0; i < climb; i++)
        seg[i] = down ? p[1 + climb + i] : p[1 + i];
    return climb;
}

/* A message handed over at `since` (now, unless it waited for its
 * connection). */
static int send_since(fc_run *r, fl_engine *e, int64_t from, int64_t to, double bytes,
                      uint64_t tag, uint64_t hash, double since)
{
    if (fl_flows(e) >= (uint64_t)r->max_flows) {
        r->too_many = true;
        return -1;
    }
    return fl_send_since(e, from, to, bytes, hash ^ (uint64_t)to * 0xc2b2ae3d27d4eb4fULL,
                         r->owner, tag, since);
}

static int send(fc_run *r, fl_engine *e, int64_t from, int64_t to, double bytes, uint64_t tag,
                uint64_t hash)
{
    return send_since(r, e, from, to, bytes, tag, hash, fl_now(e));
}

static int tree_progress(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int p, int t,
                         fc_line *line);
static int resume(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int p, int ch,
                  fc_line *line);

/* Whether chunk k's pieces on chain ch of phase p may leave npu: the
 * chunk before is past the phase, or through on that chain here (its
 * pieces all passed on; the head's, all arrived). Under an active-chunks
 * limit the dimension's slots order the chunks instead. */
static bool chain_free(fc_run *r, int64_t npu, int s, int64_t k, int p, int ch, const fc_line *l)
{
    int64_t before = r->active ? -1 : prev_chunk(r, k);
    if (before < 0 || chunk_at(r, npu, s, before)->cur != p)
        return true;
    int64_t need, need_recv;
    needs(r, &plan_of(r, s, before)->ph[p], l, npu, ch, &need, &need_recv);
    const fc_count *c = count_at(r, npu, s, before, p, ch);
    return c->sent >= need && c->recv >= need_recv;
}

/* The ring position channel ch of nch sends to, ahead of the NPU's: on a
 * ring, torus or mesh +1 / -1 (two counter-rotating rings), on a
 * fully-connected dimension ch + 1 (its rings over every link), on a
 * switch or Clos +1 (the same ring, another connection). */
static int64_t ring_shift(const fc_run *r, const fc_phase *ph, const fc_line *l, int ch, int nch)
{
    comet_topology t = r->f->dims[ph->dim].topo;
    if (t == COMET_TOPO_FULLY_CONNECTED)
        return ch + 1;
    if (t != COMET_TOPO_SWITCH && t != COMET_TOPO_FAT_TREE && t != COMET_TOPO_RAIL)
        return nch == 2 && ch == 1 ? l->n - 1 : 1;
    return 1;
}

/* A connection (what ECMP hashes): the NPU's, per stream and channel (a
 * tree for the double binary tree), to each peer (send() adds the peer);
 * the chunks and phases of one collective reuse it, as NCCL's rings reuse
 * their connections. */
static uint64_t conn_hash(int64_t npu, int s, int ch)
{
    return (uint64_t)npu * 0x9e3779b97f4a7c15ULL ^ (uint64_t)s << 20 ^ (uint64_t)ch << 27;
}

/* ---- halving-doubling: the folded schedule (net_hd), step by step ----
 * A member takes step st once it is through the steps before it: its
 * message of each posted, the one for it arrived. A message goes once
 * both ends are at its step, a rendezvous, as MPI's large sends wait for
 * their receives (MPICH's halving-doubling is sendrecv after sendrecv):
 * a member left out of the fold does not send its first step to a
 * partner still receiving the fold; and it is through a step once its
 * own message has arrived too, as a sendrecv returns. count: sent the
 * steps taken, steps the arrivals, acked its posted sends and down its
 * delivered ones (a bit per step each). */

static bool hd_at(fc_run *r, int64_t npu, int s, int64_t k, int p, int st)
{
    const fc_chunk_state *cs = chunk_at(r, npu, s, k);
    return cs->entered && cs->cur == p && count_at(r, npu, s, k, p, 0)->sent == st;
}

static bool hd_through(const net_hd *h, const fc_line *l, const fc_count *c, int st)
{
    int64_t to;
    bool sends = net_hd_send(h, st, l->me, &to) > 0.0;
    return (!sends || ((uint32_t)c->down >> st & 1u)) &&
           (!net_hd_recv(h, st, l->me) || (c->steps >> st & 1u));
}

/* Member l->me's message of step st, once both ends are there: 1 posted
 * now, 0 not, -1 on error. */
static int hd_post(fc_run *r, fl_engine *e, const fc_phase *ph, const net_hd *h,
                   const fc_line *l, int s, int64_t k, int p, int st)
{
    int64_t from = member(l, l->me), j;
    double part = net_hd_send(h, st, l->me, &j);
    fc_count *c = count_at(r, from, s, k, p, 0);
    if (!(part > 0.0) || ((uint32_t)c->acked >> st & 1u))
        return 0;
    int64_t to = member(l, j);
    if (!hd_at(r, from, s, k, p, st) || !hd_at(r, to, s, k, p, st))
        return 0;
    c->acked = (int32_t)((uint32_t)c->acked | 1u << st);
    return send(r, e, from, to, part * ph->bytes, tag_of(to, s, k, p, st, KIND_PEER),
                conn_hash(from, s, 0)) != 0
               ? -1
               : 1;
}

static int hd_progress(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int p,
                       const fc_line *l)
{
    const fc_phase *ph = &plan_of(r, s, k)->ph[p];
    net_hd h = net_hd_of(l->n, (net_hd_part)ph->hd);
    fc_count *c = count_at(r, npu, s, k, p, 0);
    while (c->sent < h.steps) {
        int st = c->sent;
        if (hd_post(r, e, ph, &h, l, s, k, p, st) < 0)
            return -1;
        /* the member sending to this one, if it waited for it */
        int64_t from = net_hd_from(&h, st, l->me);
        if (from >= 0) {
            fc_line lf = line_at(l, from);
            int64_t fnpu = member(&lf, lf.me);
            int got = hd_post(r, e, ph, &h, &lf, s, k, p, st);
            if (got < 0)
                return -1;
            if (got > 0 && hd_through(&h, &lf, count_at(r, fnpu, s, k, p, 0), st) &&
                resume(r, e, fnpu, s, k, p, 0, &lf) != 0)
                return -1;
        }
        if (!hd_through(&h, l, c, st))
            break;
        c->sent++;
    }
    return 0;
}

/* Sends what phase p's state allows: ring steps once the step before has
 * arrived, log steps once the last one has. *line: npu's (line_into).
 * *short_of (if given) is set where the channel has yet to send or
 * receive what the phase needs of it, so the phase is not through (a
 * ring's; false: not known). */
static int progress(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int p, int ch,
                    fc_line *line, bool *short_of)
{
    const fc_phase *ph = &plan_of(r, s, k)->ph[p];
    const fc_line l = *line_into(r, ph, npu, line);
    fc_count *cnt = count_at(r, npu, s, k, p, ch);
    int64_t need, need_recv;
    needs(r, ph, &l, npu, ch, &need, &need_recv);
    int nch = channels_at(r, s, k, p);
    uint64_t hash = conn_hash(npu, s, ch);
    switch (ph->algo) {
    case FC_RING: {
        /* a step once the last one has arrived from behind; on its
         * connection behind the message before it, in order, as a
         * connection (a queue pair) delivers them: one moving at a time,
         * the next's latency running meanwhile. Were a connection's
         * messages to share a slow (hashed) link they would arrive
         * together at the end, and the ring clump behind it
         * (docs/fabric.md, "ECMP"). */
        double unit = ph->bytes / (double)l.n / (double)nch;
        int64_t q = ring_pos(&l, l.me);
        int64_t to = member(&l, ring_member(&l, (q + ring_shift(r, ph, &l, ch, nch)) % l.n));
        while (cnt->sent < need && cnt->sent <= cnt->recv) {
            if (ph->in_order && cnt->sent > cnt->acked) { /* the connection is busy: wait */
                if (!(cnt->ready > 0.0))
                    cnt->ready = fl_now(e);
                break;
            }
            double since = cnt->ready > 0.0 ? cnt->ready : fl_now(e);
            cnt->ready = 0.0;
            if (send_since(r, e, npu, to, unit, tag_of(to, s, k, p, ch, KIND_PEER), hash,
                           since) != 0)
                return -1;
            cnt->sent++;
        }
        if (short_of)
            *short_of = cnt->sent < need || cnt->recv < need_recv;
        return 0;
    }
    case FC_PAIRWISE: {
        /* rounds by distance, both ways at once: shifts 1 and n-1, then 2
         * and n-2, ... (two rounds in flight), as a bidirectional link
         * carries them */
        double unit = ph->bytes / (double)l.n;
        while (cnt->sent < need && cnt->sent <= cnt->recv + 1) {
            int64_t t = cnt->sent, d = t / 2 + 1;
            int64_t shift = t % 2 == 0 ? d : l.n - d;
            int64_t to = member(&l, (l.me + shift) % l.n);
            if (send(r, e, npu, to, unit, tag_of(to, s, k, p, ch, KIND_PEER), hash) != 0)
                return -1;
            cnt->sent++;
        }
        return 0;
    }
    case FC_SCATTER:
    case FC_GATHER: {
        /* a scatter's root sends a piece to every other member at once
         * (through once all have arrived: its recv counts them), a
         * gather's members each theirs to the root */
        double unit = ph->bytes / (double)l.n;
        while (cnt->sent < need) {
            int64_t j = cnt->sent + 1;
            int64_t to = ph->algo == FC_GATHER ? member(&l, 0) : member(&l, j);
            if (send(r, e, npu, to, unit, tag_of(to, s, k, p, ch, KIND_PEER), hash) != 0)
                return -1;
            cnt->sent++;
        }
        return 0;
    }
    case FC_TREE:
        return tree_progress(r, e, npu, s, k, p, ch, line);
    case FC_CHAIN: {
        /* the head sends its pieces one after another, each once the last
         * has arrived (its recv counts the arrivals); the others pass each
         * piece on as it arrives. A chunk's pieces follow the chunk
         * before's down each chain, as one longer chain: a member starts
         * on them once it is through the last chunk's on that chain, not
         * once it is through the phase (a member of a ring's two chains
         * ends one and heads the other) */
        if (!chain_free(r, npu, s, k, p, ch, &l))
            return 0;
        double unit = ph->bytes / (double)messages(ph, &l) / (double)nch;
        int64_t pos = chain_pos(ph, &l, l.me, ch);
        if (pos < l.n - 1) {
            int64_t to = chain_member(ph, &l, pos + 1, ch);
            while (cnt->sent < need &&
                   (pos == 0 ? cnt->sent <= cnt->recv : cnt->sent < cnt->recv)) {
                if (send(r, e, npu, to, unit, tag_of(to, s, k, p, ch, KIND_PEER), hash) != 0)
                    return -1;
                cnt->sent++;
            }
        }
        int64_t after = next_chunk(r, k);
        if (after >= 0 && cnt->sent >= need && cnt->recv >= need_recv)
            return resume(r, e, npu, s, after, p, ch, line);
        return 0;
    }
    case FC_DIRECT: {
        double unit = ph->bytes / (double)l.n;
        for (int64_t j = 1; j < l.n && cnt->sent < need; j++) {
            int64_t to = member(&l, (l.me + j) % l.n);
            if (send(r, e, npu, to, unit, tag_of(to, s, k, p, ch, KIND_PEER), hash) != 0)
                return -1;
            cnt->sent++;
        }
        return 0;
    }
    case FC_HALVING:
        return hd_progress(r, e, npu, s, k, p, &l);
    case FC_BRUCK: {
        int L = log_steps(l.n);
        while (cnt->sent < L && (cnt->sent == 0 || (cnt->steps >> (cnt->sent - 1) & 1))) {
            int st = cnt->sent;
            int64_t to = member(&l, (l.me + ((int64_t)1 << st)) % l.n);
            if (send(r, e, npu, to, 0.5 * ph->bytes, tag_of(to, s, k, p, st, KIND_PEER), hash) !=
                0)
                return -1;
            cnt->sent++;
        }
        return 0;
    }
    case FC_IN_NETWORK: {
        /* the next piece up the NPU's port to the switch, once the last
         * one is there (on_done calls back); the switch sends each reduced
         * piece down every port once all of it has arrived */
        if (cnt->sent >= need || (uint64_t)cnt->sent > cnt->steps)
            return 0;
        int32_t up = switch_port(&r->f->dims[ph->dim], npu, false);
        if (fl_flows(e) >= (uint64_t)r->max_flows) {
            r->too_many = true;
            return -1;
        }
        int piece = cnt->sent++;
        return fl_send_path(e, &up, 1, in_network_piece(ph, l.n, 1, LEG_PORT_UP), r->owner,
                            tag_of(npu, s, k, p, piece, KIND_UP));
    }
    }
    return 0;
}

/* ---- the double binary tree (NCCL's): two heaps over the line, the second
 * over the members reversed, so the leaves of one are inner nodes of the
 * other; each reduces half the buffer up and broadcasts it down, pieces
 * pipelined ---- */

/* Member j's position in tree t, and the member at position q. */
static int64_t tree_pos(const fc_line *l, int64_t j, int t)
{
    return t == 0 ? j : l->n - 1 - j;
}

static int64_t tree_member(const fc_line *l, int64_t q, int t)
{
    return member(l, t == 0 ? q : l->n - 1 - q);
}

static int tree_children(const fc_line *l, int64_t q)
{
    return (2 * q + 1 < l->n) + (2 * q + 2 < l->n);
}

/* Pieces npu has from all its children (the fewer of the two counts). */
static int64_t tree_from_children(const fc_count *c, int kids)
{
    int64_t a = (int64_t)(c->steps & 0xffffffffu), b = (int64_t)(c->steps >> 32);
    return kids == 0 ? TREE_PIECES : kids == 1 ? a : (a < b ? a : b);
}

/* Sends what tree t lets npu send: a piece up once it has it from every
 * child and its last piece up has arrived, the waiting piece's latency
 * running meanwhile (a connection carries one piece
 * at a time, as a ring's: an inner node sending all it had at once took
 * its port from its children's paced pieces, +12 % on 8, +26 % on 16),
 * the root's reduced pieces down, and every piece from the parent on down. The
 * channel tags the tree, and on the way up which child it comes from. */
static int tree_progress(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int p, int t,
                         fc_line *line)
{
    const fc_phase *ph = &plan_of(r, s, k)->ph[p];
    const fc_line l = *line_into(r, ph, npu, line);
    fc_count *c = count_at(r, npu, s, k, p, t);
    int64_t q = tree_pos(&l, l.me, t);
    int kids = tree_children(&l, q);
    double unit = ph->bytes / 2.0 / TREE_PIECES;
    uint64_t hash = conn_hash(npu, s, t);
    int64_t have = tree_from_children(c, kids);
    if (q > 0) {
        int64_t parent = tree_member(&l, (q - 1) / 2, t);
        int side = (int)((q - 1) % 2);
        double sent_since = -1.0; /* the since of a piece sent just now */
        while (c->sent < TREE_PIECES && c->sent < have) {
            if (c->sent > c->acked) { /* the connection is busy: wait, as a ring's */
                /* a piece that waits behind one sent just now was there
                 * with it (its children's pieces arrive faster than the
                 * connection takes them): its latency runs from the same
                 * time; else from now, when it came */
                if (kids > 0 && !(c->up_ready > 0.0))
                    c->up_ready = sent_since >= 0.0 ? sent_since : fl_now(e);
                break;
            }
            double since;
            if (kids == 0) {
                /* a leaf holds every piece from the start, so each one's
                 * latency runs from then and the next follows the last
                 * right behind it, as on a pipelined link (taking each
                 * one's as it found the connection free paid a latency a
                 * piece: a 16-chunk all-reduce on a ring of 8 at 5 us
                 * 4x its time); its up_ready, which waits on no children,
                 * keeps that start */
                if (c->sent == 0)
                    c->up_ready = fl_now(e);
                since = c->up_ready;
            } else {
                since = c->up_ready > 0.0 ? c->up_ready : fl_now(e);
                c->up_ready = 0.0;
            }
            if (send_since(r, e, npu, parent, unit,
                           tag_of(parent, s, k, p, t + 2 * (1 + side), KIND_PEER), hash,
                           since) != 0)
                return -1;
            sent_since = since;
            c->sent++;
        }
    }
    /* down: the root's reduced pieces, the others' pieces from the parent */
    int64_t ready = q == 0 ? have : c->recv;
    while (kids > 0 && c->down < ready) {
        for (int side = 0; side < kids; side++) {
            int64_t child = tree_member(&l, 2 * q + 1 + side, t);
            if (send(r, e, npu, child, unit, tag_of(child, s, k, p, t, KIND_PEER), hash) != 0)
                return -1;
        }
        c->down++;
    }
    return 0;
}

static bool tree_done(fc_run *r, const fc_line *l, int64_t npu, int s, int64_t k, int p)
{
    for (int t = 0; t < 2; t++) {
        const fc_count *c = count_at(r, npu, s, k, p, t);
        int64_t q = tree_pos(l, l->me, t);
        int kids = tree_children(l, q);
        if (tree_from_children(c, kids) < TREE_PIECES || (kids > 0 && c->down < TREE_PIECES))
            return false;
        if (q > 0 && (c->sent < TREE_PIECES || c->recv < TREE_PIECES))
            return false;
    }
    return true;
}

static bool phase_done(fc_run *r, int64_t npu, int s, int64_t k, int p, fc_line *line)
{
    const fc_phase *ph = &plan_of(r, s, k)->ph[p];
    const fc_line l = *line_into(r, ph, npu, line);
    if (ph->algo == FC_TREE)
        return tree_done(r, &l, npu, s, k, p);
    for (int ch = 0; ch < channels_at(r, s, k, p); ch++) {
        int64_t need_sent, need_recv;
        needs(r, ph, &l, npu, ch, &need_sent, &need_recv);
        const fc_count *c = count_at(r, npu, s, k, p, ch);
        if (c->sent < need_sent || c->recv < need_recv)
            return false;
    }
    return true;
}

static int try_enter(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, fc_line *line);

/* ---- the active-chunks limit: each dimension works on at most r->active
 * chunks at once per NPU and stream, the others waiting their turn in
 * the order they came (as comet_sim_collective's dimensions take them);
 * a chunk keeps its slot through consecutive phases on one dimension (a
 * torus's axes, an all-reduce's two halves), as one phase there ---- */

static fc_slots *slots_at(fc_run *r, int64_t npu, int s, int dim)
{
    return &r->slots[(local_of(r, npu) * r->streams + s) * r->f->n_dims + dim];
}

static int32_t *wait_next_at(fc_run *r, int64_t npu, int s, int64_t k)
{
    return &r->wait_next[(local_of(r, npu) * r->streams + s) * r->chunks + k];
}

/* Whether chunk k may work on the dimension of its phase now: it holds
 * that dimension's slot already, or is first in its queue with a slot
 * free (it joins the queue otherwise). *also: the chunk next in that
 * queue where a slot is still free (-1: none), for the caller to try. */
static bool take_slot(fc_run *r, int64_t npu, int s, int64_t k, fc_chunk_state *cs, int64_t *also)
{
    *also = -1;
    int d = plan_of(r, s, k)->ph[cs->cur].dim;
    if (cs->held == d + 1)
        return true;
    fc_slots *q = slots_at(r, npu, s, d);
    if (!cs->queued) {
        *wait_next_at(r, npu, s, k) = -1;
        if (q->tail >= 0)
            *wait_next_at(r, npu, s, q->tail) = (int32_t)k;
        else
            q->head = (int32_t)k;
        q->tail = (int32_t)k;
        cs->queued = (int8_t)(d + 1);
    }
    if (q->head != k || q->busy >= r->active)
        return false;
    q->head = *wait_next_at(r, npu, s, k);
    if (q->head < 0)
        q->tail = -1;
    q->busy++;
    cs->queued = 0;
    cs->held = (int8_t)(d + 1);
    *also = q->busy < r->active ? q->head : -1;
    return true;
}

/* Chunk k, through a phase, gives up its dimension's slot unless its next
 * phase is on the same dimension: the chunk first in that dimension's
 * queue, to be tried, or -1. */
static int64_t give_slot(fc_run *r, int64_t npu, int s, int64_t k, fc_chunk_state *cs)
{
    const fc_plan *pl = plan_of(r, s, k);
    if (!cs->held || (cs->cur < pl->n && pl->ph[cs->cur].dim + 1 == cs->held))
        return -1;
    fc_slots *q = slots_at(r, npu, s, cs->held - 1);
    q->busy--;
    cs->held = 0;
    return q->head;
}

/* npu has left phase q, a gather: where q ends the gathers on its
 * dimension, npu is through with them (the last root, once it has every
 * piece; a line's root, once its own root is through), and so are the
 * members of the lines it is the root of there, one phase's after
 * another's back toward the first. A member is through once the whole
 * gather is, as the closed form's pipeline stage holds the dimension: the
 * next chunk's ring (a reduce's reduce-scatter), one connection a link,
 * would else start beside the gather's last phases, whose floor(k/2)
 * connections a link toward the root would starve it (a reduce +45 % on
 * a 4 x 4 x 8 torus at 4 chunks). */
static int gather_through(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int q)
{
    const fc_plan *pl = plan_of(r, s, k);
    const fc_phase *ph = &pl->ph[q];
    if (q + 1 < pl->n && pl->ph[q + 1].algo == FC_GATHER && pl->ph[q + 1].dim == ph->dim)
        return 0;
    for (int p = q; p >= 0 && pl->ph[p].algo == FC_GATHER && pl->ph[p].dim == ph->dim; p--) {
        const fc_phase *pp = &pl->ph[p];
        fc_line l = line_of(r, pp, npu);
        if (l.me != 0 || !takes_part(r, pp, npu))
            continue;
        for (int64_t j = 1; j < l.n; j++) {
            fc_line lj = line_at(&l, j);
            count_at(r, member(&lj, j), s, k, p, 0)->recv++;
            if (resume(r, e, member(&lj, j), s, k, p, 0, &lj) != 0)
                return -1;
        }
    }
    return 0;
}

/* After phase p of chunk k moved: leave it when done, enter the next, and
 * let chunk k+1 in (under an active-chunks limit: the chunk first in line
 * for the dimension it leaves). */
static int advance(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, fc_line *line)
{
    fc_chunk_state *cs = chunk_at(r, npu, s, k);
    int n = plan_of(r, s, k)->n;
    while (cs->cur < n && cs->entered && phase_done(r, npu, s, k, cs->cur, line)) {
        if (plan_of(r, s, k)->ph[cs->cur].algo == FC_GATHER &&
            gather_through(r, e, npu, s, k, cs->cur) != 0)
            return -1;
        cs->cur++;
        cs->entered = 0;
        if (cs->cur == n)
            r->left--;
        int64_t after = r->active ? give_slot(r, npu, s, k, cs) : next_chunk(r, k);
        if (after >= 0 && try_enter(r, e, npu, s, after, line) != 0)
            return -1;
        if (try_enter(r, e, npu, s, k, line) != 0)
            return -1;
        /* the chunk's other parts may wait for this one, and with them
         * the next chunk's */
        for (int q = 0; (r->sync_parts || r->hold_parts) && q < r->parts; q++) {
            int sq = s - s % r->parts + q;
            if (sq != s && r->sync_parts && try_enter(r, e, npu, sq, k, line))
                return -1;
            if (sq != s && r->hold_parts && after >= 0 && try_enter(r, e, npu, sq, after, line))
                return -1;
        }
    }
    return 0;
}

/* How far phase p's hold reaches for npu: a rooted collective's chunk
 * holds a dimension through its last phase there (hold_to), but across
 * the outer dimensions' phases between only where the NPU's line (its
 * instance of the dimension) still has work on it after them: a reduce's
 * gather into the root's line holds that line, not the lines that only
 * pass their part down the outer chain meanwhile (they reduce-scatter the
 * next chunk beside it, as the closed form pipelines them). Inside the
 * root's line the hold stays whole, whichever NPUs the gather's axes
 * reach: its connections toward the root would starve the next chunk's
 * ring. */
static int held_to(const fc_run *r, const fc_plan *pl, int p, int64_t npu)
{
    int to = pl->ph[p].hold_to, dim = pl->ph[p].dim;
    bool across = false;
    for (int q = p + 1; q < to && !across; q++)
        across = pl->ph[q].dim != dim;
    if (!across)
        return to;
    for (int q = to; q > p; q--)
        if (pl->ph[q].dim == dim &&
            on_root_lines(r, (uint8_t)(pl->ph[q].root_mask & ~(1u << dim)), npu))
            return q;
    return p;
}

static int try_enter(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, fc_line *line)
{
    fc_chunk_state *cs = chunk_at(r, npu, s, k);
    int n = plan_of(r, s, k)->n;
    if (cs->entered || cs->cur >= n)
        return 0;
    int64_t before = r->active ? -1 : prev_chunk(r, k);
    const fc_phase *ph = &plan_of(r, s, k)->ph[cs->cur];
    if (before >= 0) {
        /* the chunk before still holds this phase (or its dimension); a
         * chain's it need only have entered (its pieces follow the chunk
         * before's: progress) */
        const fc_chunk_state *bs = chunk_at(r, npu, s, before);
        bool follow = ph->algo == FC_CHAIN && bs->cur == cs->cur && bs->entered &&
                      ph->hold_to == cs->cur;
        int hold = held_to(r, plan_of(r, s, k), cs->cur, npu);
        if (bs->cur <= hold && !follow)
            return 0;
        for (int q = 0; r->hold_parts && !follow && q < r->parts; q++)
            if (chunk_at(r, npu, s - s % r->parts + q, before)->cur <= hold)
                return 0; /* another part of the chunk before holds the dimension */
    }
    if (plan_of(r, s, k)->ph[cs->cur].sync_parts)
        for (int q = 0; q < r->parts; q++)
            if (chunk_at(r, npu, s - s % r->parts + q, k)->cur < cs->cur)
                return 0; /* another part of the chunk has yet to reach it */
    int64_t also = -1;
    if (r->active && !take_slot(r, npu, s, k, cs, &also))
        return 0; /* its dimension works on as many chunks as it may */
    cs->entered = 1;
    int p = cs->cur;
    for (int ch = 0; ch < channels_at(r, s, k, p); ch++)
        if (progress(r, e, npu, s, k, p, ch, line, NULL) != 0)
            return -1;
    int64_t after = r->active ? -1 : next_chunk(r, k);
    if (ph->algo == FC_CHAIN && after >= 0 && try_enter(r, e, npu, s, after, line) != 0)
        return -1;
    if (advance(r, e, npu, s, k, line) != 0)
        return -1;
    return also >= 0 ? try_enter(r, e, npu, s, also, line) : 0;
}

/* Something arrived for npu's chunk k in phase p: if the NPU is in that
 * phase it sends what it now may and moves on when through (else it is
 * kept until the NPU enters the phase). */
static int resume(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int p, int ch,
                  fc_line *line)
{
    const fc_chunk_state *cs = chunk_at(r, npu, s, k);
    if (!cs->entered || cs->cur != p)
        return 0;
    bool short_of = false;
    if (progress(r, e, npu, s, k, p, ch, line, &short_of) != 0)
        return -1;
    /* a channel short of its needs keeps the phase from being through:
     * nothing for advance to do (most arrivals of a ring's steps) */
    return short_of ? 0 : advance(r, e, npu, s, k, line);
}

/* The tree's middle level. On a 3-tier Clos a line that spans aggregation
 * blocks climbs to a core, and each block's aggregation switch reduces
 * its leaves' pieces before passing one up (SHARP reduces at every switch
 * of its tree): a block is a run of the line's leaves under one
 * aggregation switch. Elsewhere the leaves' parent is the top itself and
 * the line has one block. */
static int32_t leaf_parent(const fc_run *r, const fc_line *l, int64_t first, int dim)
{
    int32_t seg[8];
    return top_segment(r, l, first, dim, false, seg) < 1 ? -1 : r->f->to[seg[0]];
}

/* The block of the leaf whose first member is `first`: its first member,
 * leaves and members, found once per leaf. */
static fc_block block_of(fc_run *r, const fc_phase *ph, const fc_line *l, int64_t first)
{
    fc_block *b = &r->blocks[local_of(r, member(l, first))];
    if (b->members == 0) {
        int32_t up = leaf_parent(r, l, first, ph->dim);
        int64_t lo = first, hi, count, f;
        leaf_run(r, ph, l, first, &f, &count);
        hi = first + count;
        int32_t leaves = 1;
        while (lo > 0) {
            leaf_run(r, ph, l, lo - 1, &f, &count);
            if (leaf_parent(r, l, f, ph->dim) != up)
                break;
            lo = f;
            leaves++;
        }
        while (hi < l->n) {
            leaf_run(r, ph, l, hi, &f, &count);
            if (leaf_parent(r, l, f, ph->dim) != up)
                break;
            hi += count;
            leaves++;
        }
        *b = (fc_block){(int32_t)lo, leaves, (int32_t)(hi - lo)};
    }
    return *b;
}

/* How many blocks the line's tree has (1: no middle level), counted once
 * per line. */
static int64_t line_blocks(fc_run *r, const fc_phase *ph, const fc_line *l)
{
    int32_t *n = &r->line_blocks[local_of(r, member(l, 0))];
    if (*n == 0) {
        int32_t seg[8], c = 1;
        if (top_segment(r, l, 0, ph->dim, false, seg) >= 2)
            for (int64_t j = block_of(r, ph, l, 0).members; j < l->n;
                 j += block_of(r, ph, l, j).members)
                c++;
        *n = c;
    }
    return *n;
}

/* A leaf's reduced pieces up to its parent (the line's top, or its
 * block's aggregation switch), one at a time: each once all its members'
 * piece has arrived and the leaf's piece before it has reached the parent
 * (a switch forwards in order; sent together, the pieces would share an
 * oversubscribed uplink and all arrive at its end, the top sending none
 * down meanwhile). The leaf's first member counts them: acked sent up,
 * down arrived. */
static int leaf_up(fc_run *r, fl_engine *e, const fc_phase *ph, const fc_line *l, int64_t first,
                   int64_t count, int s, int64_t k, int p)
{
    int64_t head = member(l, first);
    fc_count *c = count_at(r, head, s, k, p, 0);
    double bytes = in_network_piece(ph, l->n, count, LEG_LEAF_UP);
    int32_t seg[8];
    while (c->acked < IN_NETWORK_PIECES && c->acked == c->down &&
           r->arrived[piece_slot(r, head, s, k, p, c->acked)] == count) {
        if (top_segment(r, l, first, ph->dim, false, seg) < 1 ||
            fl_send_path(e, seg, 1, bytes, r->owner,
                         tag_of(head, s, k, p, IN_NETWORK_PIECES + c->acked, KIND_UP)) != 0)
            return -1;
        c->acked++;
    }
    return 0;
}

/* A block's reduced pieces up from its aggregation switch to the core,
 * in order as a leaf's: the block's first member's slot of r->mid holds,
 * per piece, the leaves whose piece has arrived (up to b->leaves), then
 * +1 sent up, +2 at the core, +3 sent down, +4 back at the aggregation
 * switch. */
static int block_up(fc_run *r, fl_engine *e, const fc_phase *ph, const fc_line *l,
                    const fc_block *b, int s, int64_t k, int p)
{
    int64_t head = member(l, b->first);
    int32_t full = b->leaves;
    for (int x = 0; x < IN_NETWORK_PIECES; x++) {
        int32_t *at = &r->mid[piece_slot(r, head, s, k, p, x)];
        if (*at < full || (*at == full + 1))
            return 0; /* not all in yet, or the piece before still on its way */
        if (*at > full)
            continue;
        int32_t seg[8];
        if (top_segment(r, l, b->first, ph->dim, false, seg) < 2 ||
            fl_send_path(e, seg + 1, 1, in_network_piece(ph, l->n, b->members, LEG_LEAF_UP),
                         r->owner, tag_of(head, s, k, p, 3 * IN_NETWORK_PIECES + x, KIND_UP)) != 0)
            return -1;
        *at = full + 1;
        return 0;
    }
    return 0;
}

/* The core's piece down to a block's aggregation switch, in order (piece
 * x once x - 1 has arrived there), once every block's piece reached it. */
static int core_down(fc_run *r, fl_engine *e, const fc_phase *ph, const fc_line *l,
                     const fc_block *b, int s, int64_t k, int p, int piece)
{
    if (piece >= IN_NETWORK_PIECES)
        return 0;
    int64_t head = member(l, b->first);
    int32_t full = b->leaves, *at = &r->mid[piece_slot(r, head, s, k, p, piece)];
    if (*at != full + 2 ||
        r->arrived_top[piece_slot(r, member(l, 0), s, k, p, piece)] < line_blocks(r, ph, l))
        return 0;
    if (piece > 0 && r->mid[piece_slot(r, head, s, k, p, piece - 1)] != full + 4)
        return 0;
    int32_t seg[8];
    if (top_segment(r, l, b->first, ph->dim, true, seg) < 2 ||
        fl_send_path(e, seg, 1, in_network_piece(ph, l->n, b->members, LEG_TOP_DOWN), r->owner,
                     tag_of(head, s, k, p, 4 * IN_NETWORK_PIECES + piece, KIND_UP)) != 0)
        return -1;
    *at = full + 3;
    return 0;
}

/* The parent's piece down to the leaf whose first member is f0 (`count`
 * members), in order: a switch forwards a port's packets first in, first
 * out, so piece j leaves only once piece j - 1 has reached the leaf (sent
 * together, the pieces would share the downlink and all arrive late, the
 * leaf's ports idle meanwhile). The parent has it once every leaf's (or,
 * a block's aggregation switch, the core's) piece has arrived. A leaf's
 * counter slot for piece j holds count once its members' pieces are in,
 * count + 1 once the parent has sent j down, count + 2 once it arrived. */
static int leaf_down(fc_run *r, fl_engine *e, const fc_phase *ph, const fc_line *l, int64_t f0,
                     int64_t count, int s, int64_t k, int p, int piece)
{
    if (piece >= IN_NETWORK_PIECES)
        return 0;
    int64_t head = member(l, f0);
    int32_t *at = &r->arrived[piece_slot(r, head, s, k, p, piece)];
    if (*at != count)
        return 0; /* sent already */
    if (line_blocks(r, ph, l) > 1) {
        fc_block b = block_of(r, ph, l, f0);
        if (r->mid[piece_slot(r, member(l, b.first), s, k, p, piece)] != b.leaves + 4)
            return 0; /* not yet back at the aggregation switch */
    } else if (r->arrived_top[piece_slot(r, member(l, 0), s, k, p, piece)] <
               line_leaves(r, ph, l)) {
        return 0; /* not yet reduced at the top */
    }
    if (piece > 0 && r->arrived[piece_slot(r, head, s, k, p, piece - 1)] != count + 2)
        return 0; /* the piece before it still on its way */
    int32_t seg[8];
    int n = top_segment(r, l, f0, ph->dim, true, seg);
    if (n < 1 || fl_send_path(e, seg + n - 1, 1, in_network_piece(ph, l->n, count, LEG_TOP_DOWN),
                              r->owner,
                              tag_of(head, s, k, p, 2 * IN_NETWORK_PIECES + piece, KIND_UP)) != 0)
        return -1;
    *at = (int32_t)count + 1;
    return 0;
}

/* Every leaf of block b: its piece down from the aggregation switch. */
static int block_leaves_down(fc_run *r, fl_engine *e, const fc_phase *ph, const fc_line *l,
                             const fc_block *b, int s, int64_t k, int p, int piece)
{
    int64_t f0, count;
    for (int64_t j = b->first; j < b->first + b->members; j = f0 + count) {
        leaf_run(r, ph, l, j, &f0, &count);
        if (leaf_down(r, e, ph, l, f0, count, s, k, p, piece) != 0)
            return -1;
    }
    return 0;
}

/* In-network reduction's pieces: `ch` is the piece plus IN_NETWORK_PIECES
 * times its stage: 0 a member's piece reached its leaf, 1 a leaf's reduced
 * piece reached its parent, 2 the parent's result reached a leaf (npu the
 * leaf's first member for 1 and 2), 3 a block's piece reached the core,
 * 4 the core's result reached the block's aggregation switch (npu the
 * block's first member). On one leaf (a switch) the leaf is the top: its
 * result goes down every port at once. */
static int in_network_done(fc_run *r, fl_engine *e, int64_t npu, int s, int64_t k, int p, int ch)
{
    const fc_phase *ph = &plan_of(r, s, k)->ph[p];
    int stage = ch / IN_NETWORK_PIECES, piece = ch % IN_NETWORK_PIECES;
    fc_line l = line_of(r, ph, npu);
    double bytes = in_network_piece(ph, l.n, 1, LEG_PORT_DOWN);
    int64_t leaves = line_leaves(r, ph, &l);
    int64_t first, count;
    leaf_run(r, ph, &l, l.me, &first, &count);
    if (stage == 0) {
        /* the sender may send its next piece (steps counts its pieces up) */
        fc_count *own = count_at(r, npu, s, k, p, 0);
        own->steps++;
        fc_line line = l; /* npu's, for the calls below to pass on */
        if (progress(r, e, npu, s, k, p, 0, &line, NULL) != 0)
            return -1;
        int64_t slot = piece_slot(r, member(&l, first), s, k, p, piece);
        if (++r->arrived[slot] == count) {
            if (leaves == 1) {
                for (int64_t j = 0; j < l.n; j++) {
                    int64_t to = member(&l, j);
                    int32_t down = switch_port(&r->f->dims[ph->dim], to, true);
                    if (fl_send_path(e, &down, 1, bytes, r->owner,
                                     tag_of(to, s, k, p, 0, KIND_PEER)) != 0)
                        return -1;
                }
            } else if (leaf_up(r, e, ph, &l, first, count, s, k, p) != 0) {
                return -1;
            }
        }
        return advance(r, e, npu, s, k, &line);
    }
    int64_t blocks = line_blocks(r, ph, &l);
    int32_t *top = &r->arrived_top[piece_slot(r, member(&l, 0), s, k, p, piece)];
    if (stage == 1) {
        /* npu is the leaf's first member: its next piece may go up */
        count_at(r, npu, s, k, p, 0)->down++;
        if (leaf_up(r, e, ph, &l, first, count, s, k, p) != 0)
            return -1;
        if (blocks > 1) {
            fc_block b = block_of(r, ph, &l, first);
            if (++r->mid[piece_slot(r, member(&l, b.first), s, k, p, piece)] == b.leaves)
                return block_up(r, e, ph, &l, &b, s, k, p);
            return 0;
        }
        if (++*top < leaves)
            return 0;
        for (int64_t j = 0; j < l.n; j += count) {
            int64_t f0;
            leaf_run(r, ph, &l, j, &f0, &count);
            if (leaf_down(r, e, ph, &l, f0, count, s, k, p, piece) != 0)
                return -1;
        }
        return 0;
    }
    if (stage == 3 || stage == 4) {
        /* npu is the block's first member */
        fc_block b = block_of(r, ph, &l, first);
        int32_t *at = &r->mid[piece_slot(r, npu, s, k, p, piece)];
        if (stage == 4) {
            /* back at the aggregation switch: down its leaves, and the
             * core's next piece to it */
            *at = b.leaves + 4;
            if (core_down(r, e, ph, &l, &b, s, k, p, piece + 1) != 0)
                return -1;
            return block_leaves_down(r, e, ph, &l, &b, s, k, p, piece);
        }
        *at = b.leaves + 2;
        if (block_up(r, e, ph, &l, &b, s, k, p) != 0)
            return -1;
        if (++*top < blocks)
            return 0;
        for (int64_t j = 0; j < l.n; j += b.members) {
            b = block_of(r, ph, &l, j);
            if (core_down(r, e, ph, &l, &b, s, k, p, piece) != 0)
                return -1;
        }
        return 0;
    }
    /* stage 2: down every port of the leaf, and the parent's next piece to it */
    r->arrived[piece_slot(r, npu, s, k, p, piece)] = (int32_t)count + 2;
    if (leaf_down(r, e, ph, &l, first, count, s, k, p, piece + 1) != 0)
        return -1;
    for (int64_t j = first; j < first + count; j++) {
        int64_t to = member(&l, j);
        int32_t down = switch_port(&r->f->dims[ph->dim], to, true);
        if (fl_send_path(e, &down, 1, bytes, r->owner, tag_of(to, s, k, p, 0, KIND_PEER)) != 0)
            return -1;
    }
    return 0;
}

/* A flow of collective r ended. */
static int coll_flow_done(fc_run *r, fl_engine *e, uint64_t tag)
{
    int64_t npu, k;
    int s, p, ch, kind;
    untag(tag, &npu, &s, &k, &p, &ch, &kind);
    const fc_phase *ph = &plan_of(r, s, k)->ph[p];
    if (kind == KIND_UP)
        return in_network_done(r, e, npu, s, k, p, ch);
    if (ph->algo == FC_TREE) {
        int t = ch % 2;
        fc_count *c = count_at(r, npu, s, k, p, t);
        if (ch >= 2) {
            /* a child's piece up: count it on its side; the child, a leaf,
             * may send its next */
            int side = ch / 2 - 1;
            c->steps += side == 0 ? 1u : (uint64_t)1 << 32;
            fc_line tl = line_of(r, ph, npu);
            fc_line cl = line_at(&tl, tree_pos(&tl, 2 * tree_pos(&tl, tl.me, t) + 1 + side, t));
            int64_t child = member(&cl, cl.me);
            count_at(r, child, s, k, p, t)->acked++;
            if (resume(r, e, child, s, k, p, t, &cl) != 0)
                return -1;
            return resume(r, e, npu, s, k, p, t, &tl);
        }
        c->recv++;
        fc_line own = NO_LINE;
        return resume(r, e, npu, s, k, p, t, &own);
    }
    const fc_line rl = line_of(r, ph, npu);
    if (ph->algo == FC_SCATTER || (ph->algo == FC_CHAIN && chain_pos(ph, &rl, rl.me, ch) == 1)) {
        /* the root's (the chain head's) send arrived: it counts the
         * arrivals (a chain's head sends its next piece) and is through
         * once all are delivered, as a blocking scatter returns */
        fc_line root =
            line_at(&rl, ph->algo == FC_SCATTER ? 0 : chain_index(ph, &rl, 0, ch));
        int64_t head = member(&root, root.me);
        fc_count *hc = count_at(r, head, s, k, p, ch);
        hc->recv++;
        if (resume(r, e, head, s, k, p, ch, &root) != 0)
            return -1;
        for (int64_t j = 1; ph->algo == FC_SCATTER && hc->recv == rl.n - 1 && j < rl.n; j++) {
            /* the root is through: so is its line, each member once its
             * own piece is there too */
            fc_line lj = line_at(&rl, j);
            int64_t mj = member(&lj, j);
            count_at(r, mj, s, k, p, ch)->recv++;
            if (resume(r, e, mj, s, k, p, ch, &lj) != 0)
                return -1;
        }
    }
    int step = -1;
    if (ph->algo == FC_HALVING || ph->algo == FC_BRUCK) {
        step = ch; /* the log-step schedules tag the step, on channel 0 */
        ch = 0;
    }
    if (ph->algo == FC_HALVING) {
        /* the sender's message is delivered: it may be through the step */
        net_hd h = net_hd_of(rl.n, (net_hd_part)ph->hd);
        fc_line sl = line_at(&rl, net_hd_from(&h, step, rl.me));
        int64_t from = member(&sl, sl.me);
        fc_count *fc = count_at(r, from, s, k, p, 0);
        fc->down = (int32_t)((uint32_t)fc->down | 1u << step);
        if (resume(r, e, from, s, k, p, 0, &sl) != 0)
            return -1;
    }
    if (ph->algo == FC_RING && ph->in_order) {
        /* the sender's connection is free: it sends its next if that one
         * waits for it */
        int64_t q = ring_pos(&rl, rl.me) - ring_shift(r, ph, &rl, ch, channels_at(r, s, k, p));
        fc_line sender = line_at(&rl, ring_member(&rl, q >= 0 ? q : q + rl.n));
        int64_t from = member(&sender, sender.me);
        fc_count *fc = count_at(r, from, s, k, p, ch);
        fc->acked++;
        if (fc->sent == fc->acked && fc->sent < messages(ph, &rl) && fc->sent <= fc->recv &&
            resume(r, e, from, s, k, p, ch, &sender) != 0)
            return -1;
    }
    fc_count *c = count_at(r, npu, s, k, p, ch);
    if (step >= 0)
        c->steps |= (uint64_t)1 << step;
    c->recv++;
    if (ph->algo == FC_RING && ph->in_order && c->sent > c->acked &&
        c->sent < messages(ph, &rl) && c->sent <= c->recv) {
        /* its next step waits for its connection from now (if it is in
         * the phase), and goes when the last one arrives */
        const fc_chunk_state *cs = chunk_at(r, npu, s, k);
        if (cs->entered && cs->cur == p && !(c->ready > 0.0))
            c->ready = fl_now(e);
        return 0;
    }
    fc_line own = rl;
    return resume(r, e, npu, s, k, p, ch, &own);
}

/* ---- planning ---------------------------------------------------------------- */

static comet_status add_phase(fc_plan *pl, fc_phase ph, comet_error *err)
{
    if (pl->n >= MAX_FLOW_PHASES)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "more than %d phases per chunk", MAX_FLOW_PHASES);
    pl->ph[pl->n++] = ph;
    return COMET_OK;
}

/* Part `part`'s order of the group's axes on torus or mesh dimension dim
 * (part, part+1, ... mod g) and what the part holds as it enters each
 * (it shrinks by each axis's size); returns g, the group's axes. */
static int part_axes(const fc_run *r, int dim, int part, double bytes, int *order, double *held)
{
    int g = r->group_m[dim];
    double h = bytes;
    for (int t = 0; t < g; t++) {
        order[t] = (part + t) % g;
        held[t] = h;
        h /= (double)r->group_axes[dim][order[t]];
    }
    return g;
}

/* One reduce-scatter, all-gather or all-to-all phase of the closed form's
 * plan, as the phases the flows run: per axis on a torus or mesh under the
 * ring algorithm (part j starting at axis j), else on the whole line. */
static comet_status expand(fc_run *r, const comet_system *sys, fc_plan *pl, int part, int dim,
                           comet_collective c, double bytes, comet_error *err)
{
    comet_algorithm a = sys->dims[dim].algorithm;
    /* a listed group's messages queue on their connections too: its
     * steps cross unlike routes, so a message may be ready before the one
     * ahead of it has arrived; and so do any dimension's where another is
     * uneven: its NPUs then enter the phase at different times (a ring
     * all-gather inside 8-GPU nodes behind a hashed scale-out ring, the
     * members through at 1.8 to 3.1 ms: those entering last sent up to 4
     * steps at once, which then shared the link and arrived together, and
     * the all-gather took 3.3 times its 0.59 ms) */
    bool staggered = r->coord[dim] != NULL || comet_fabric_uneven(r->f, NULL, 0);
    fc_phase ph = {dim, -1, FC_RING, c, bytes, false, 0, staggered, 0, false, false, 0, 0};
    if (c == COMET_COLL_ALL_TO_ALL) {
        /* on a direct network (fully connected, torus, mesh) nothing orders
         * the pairwise rounds: every block is posted at once, as the direct
         * schedule (docs/fabric.md) */
        comet_topology t = sys->dims[dim].topology;
        bool fc = t == COMET_TOPO_FULLY_CONNECTED || t == COMET_TOPO_TORUS || t == COMET_TOPO_MESH;
        ph.algo = a == COMET_ALGO_DIRECT || (fc && a != COMET_ALGO_HALVING_DOUBLING) ? FC_DIRECT
                  : a == COMET_ALGO_HALVING_DOUBLING                                 ? FC_BRUCK
                                                                                     : FC_PAIRWISE;
        return add_phase(pl, ph, err);
    }
    if (a == COMET_ALGO_DIRECT) {
        ph.algo = FC_DIRECT;
        return add_phase(pl, ph, err);
    }
    if (a == COMET_ALGO_HALVING_DOUBLING) {
        ph.algo = FC_HALVING;
        ph.mirror = c == COMET_COLL_ALL_GATHER;
        ph.hd = (uint8_t)(ph.mirror ? NET_HD_AG : NET_HD_RS);
        return add_phase(pl, ph, err);
    }
    /* the ring schedule (the double binary tree runs it too but for all-reduce) */
    if (!grid_topo(sys->dims[dim].topology))
        return add_phase(pl, ph, err);
    int order[COMET_MAX_AXES];
    double held[COMET_MAX_AXES];
    int g = part_axes(r, dim, part, bytes, order, held);
    /* an all-gather runs the reduce-scatter's phases backwards (bytes is
     * the full buffer either way) */
    bool mirror = c == COMET_COLL_ALL_GATHER;
    for (int i = 0; i < g; i++) {
        int t = mirror ? g - 1 - i : i;
        fc_phase x = ph;
        x.axis = order[t];
        x.bytes = held[t];
        comet_status st = add_phase(pl, x, err);
        if (st)
            return st;
    }
    return COMET_OK;
}

/* The group's axes on a torus or mesh dimension of size `size` spanning
 * span NPUs: the topology's axes innermost first, a partial last one. A
 * group `stride` places apart starts past the axes its inner groups fill,
 * on every gap-th NPU of the next (the closed form's grid_of). */
static comet_status group_axes(fc_run *r, int dim, comet_error *err)
{
    const fab_dim *d = &r->f->dims[dim];
    int64_t left = r->span[dim], gap = r->stride[dim];
    int g = 0, i = 0;
    while (i < d->m && gap > 1 && gap % d->axes[i] == 0)
        gap /= d->axes[i++];
    if (i < d->m && d->axes[i] % gap == 0)
        for (; i < d->m && left > 1; i++, gap = 1) {
            int64_t room = d->axes[i] / gap, k = room < left ? room : left;
            if (left % k)
                break;
            r->group_whole[dim][g] = k == room;
            r->group_axes[dim][g++] = k;
            left /= k;
        }
    if (left != 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "a group of %lld NPUs %lld apart along %s is not whole axes of "
                               "its %s (the flow simulation needs groups that are)",
                               (long long)r->span[dim], (long long)r->stride[dim],
                               r->f->dim_names[dim], d->wrap ? "torus" : "mesh");
    r->group_m[dim] = g > 0 ? g : 1;
    if (g == 0)
        r->group_axes[dim][0] = 1;
    return COMET_OK;
}

static int channels_of(const fc_run *r, const comet_system *sys, const fc_phase *ph)
{
    if (ph->algo == FC_TREE) /* two trees */
        return 2;
    if (ph->algo == FC_CHAIN) { /* two counter-rotating chains on a ring or a torus axis */
        comet_topology t = sys->dims[ph->dim].topology;
        bool ring = (t == COMET_TOPO_RING && !r->f->dims[ph->dim].uni) ||
                    (grid_topo(t) && line_of(r, ph, 0).ring_axis);
        return ring && r->span[ph->dim] >= 3 ? 2 : 1;
    }
    if (ph->algo != FC_RING)
        return 1;
    const fab_dim *d = &r->f->dims[ph->dim];
    int64_t n = ph->axis >= 0 ? r->group_axes[ph->dim][ph->axis] : r->span[ph->dim];
    switch (sys->dims[ph->dim].topology) {
    case COMET_TOPO_RING:
        return !d->uni && n >= 3 ? 2 : 1;
    case COMET_TOPO_FULLY_CONNECTED:
        return (int)(n - 1);
    case COMET_TOPO_TORUS:
    case COMET_TOPO_MESH:
        return n >= 3 ? 2 : 1;
    default: /* a switch or Clos: the dimension's channels, each hashed apart */
        return sys->dims[ph->dim].shape.channels > 1 ? sys->dims[ph->dim].shape.channels : 1;
    }
}

/* A scatter (down) or a gather on dimension d among the NPUs at index 0
 * along the dimensions of mask: one phase on the whole line, or on a
 * torus or mesh group of several axes one per axis (as its closed form,
 * the topology's root_scatter, says): part j visits the axes j, j+1, ...
 * from the root (a gather the reverse, toward it), each phase among the
 * NPUs at index 0 along the axes the part has yet to visit (has left), so
 * the root's traffic leaves on all its links rather than on the axis-0
 * links its dimension-order routes to everyone would take. */
static comet_status scatter_phases(fc_run *r, const comet_system *sys, fc_plan *pl, int j, int d,
                                   comet_collective c, double bytes, bool down, uint8_t mask,
                                   comet_error *err)
{
    fc_phase ph = {d, -1, down ? FC_SCATTER : FC_GATHER, c, bytes, false, mask, false,
                   0, false, false, 0, 0};
    if (!grid_topo(sys->dims[d].topology) || r->group_m[d] <= 1)
        return add_phase(pl, ph, err);
    int order[COMET_MAX_AXES];
    double held[COMET_MAX_AXES];
    int g = part_axes(r, d, j, bytes, order, held);
    comet_status st = COMET_OK;
    for (int i = 0; i < g && !st; i++) {
        int t = down ? i : g - 1 - i;
        fc_phase x = ph;
        x.axis = order[t];
        x.bytes = held[t];
        for (int u = t + 1; u < g; u++)
            x.axis_mask = (uint8_t)(x.axis_mask | 1u << order[u]);
        st = add_phase(pl, x, err);
    }
    return st;
}

/* A broadcast's all-gather on dimension d behind its scatter there. On a
 * torus or mesh of several axes the parts end their scatters at different
 * times: each NPU starts the all-gather once it has all its parts, so the
 * rings of the parts that ended first do not share links with the
 * others' last scatter phases (+29 % on 2 x 4 x 4; as much under a second
 * dimension, whose broadcast comes between). */
static comet_status all_gather_behind(fc_run *r, const comet_system *sys, fc_plan *pl, int j,
                                      int d, double bytes, comet_error *err)
{
    int first = pl->n;
    comet_status st = expand(r, sys, pl, j, d, COMET_COLL_ALL_GATHER, bytes, err);
    if (!st && first < pl->n && grid_topo(sys->dims[d].topology) && r->group_m[d] > 1) {
        pl->ph[first].sync_parts = true;
        r->sync_parts = true;
    }
    return st;
}

/* A rooted collective's phases for part j, from its plan
 * (comet_collective_plan): a scatter phase from each line's root among
 * the NPUs at index 0 along the dimensions the data has yet to reach, a
 * gather toward it among those at index 0 along the dimensions it has
 * left; the reduce-scatters and all-gathers of a reduce and a broadcast
 * as the all-reduce runs them; the broadcast (reduce) on the last
 * dimension a chain of n pieces from each line's root (toward it) where
 * the topology has one (root_chain: a ring, a torus or mesh group along
 * one axis), else a scatter then an all-gather (a reduce-scatter then a
 * gather). */
static comet_status rooted_phases(fc_run *r, const comet_system *sys, const comet_link *links,
                                  fc_plan *pl, int j, const int *dims,
                                  const comet_coll_phase *phases, int np, comet_error *err)
{
    comet_status st = COMET_OK;
    uint8_t later[MAX_FLOW_PHASES + 1] = {0};
    for (int i = np - 1; i >= 0; i--) {
        comet_collective pc = phases[i].collective;
        bool reach = pc == COMET_COLL_SCATTER || pc == COMET_COLL_BROADCAST;
        later[i] = (uint8_t)(later[i + 1] | (reach ? 1u << dims[phases[i].link] : 0u));
    }
    uint8_t before = 0;
    for (int i = 0; i < np && !st; i++) {
        int d = dims[phases[i].link];
        comet_collective pc = phases[i].collective;
        double bytes = phases[i].bytes;
        const net_topology *topo = net_topology_of(sys->dims[d].topology);
        net_cost chain;
        double head;
        if (pc == COMET_COLL_SCATTER) {
            st = scatter_phases(r, sys, pl, j, d, pc, bytes, true, later[i + 1], err);
        } else if (pc == COMET_COLL_GATHER) {
            st = scatter_phases(r, sys, pl, j, d, pc, bytes, false, before, err);
            before = (uint8_t)(before | 1u << d);
        } else if (pc == COMET_COLL_BROADCAST || pc == COMET_COLL_REDUCE) {
            bool down = pc == COMET_COLL_BROADCAST;
            if (topo->root_chain && topo->root_chain(&links[phases[i].link], &chain, &head)) {
                /* a torus or mesh group along one axis: a line from its
                 * end, but where it is a whole torus axis, which wraps (as
                 * the closed form's grid_of sees it) */
                const fab_dim *fd = &r->f->dims[d];
                bool ring = fd->wrap && r->group_whole[d][0];
                int axis = grid_topo(sys->dims[d].topology) && !ring ? 0 : -1;
                fc_phase ph = {d, axis, FC_CHAIN, pc, bytes, !down, 0, false, 0,
                               r->f->dims[d].uni, false, 0, 0};
                st = add_phase(pl, ph, err);
            } else if (down) {
                st = scatter_phases(r, sys, pl, j, d, pc, bytes, true, later[i + 1], err);
                if (!st)
                    st = all_gather_behind(r, sys, pl, j, d, bytes, err);
            } else {
                st = expand(r, sys, pl, j, d, COMET_COLL_REDUCE_SCATTER, bytes, err);
                if (!st)
                    st = scatter_phases(r, sys, pl, j, d, pc, bytes, false, before, err);
            }
            before = (uint8_t)(1u << d);
        } else if (pc == COMET_COLL_ALL_GATHER) {
            st = all_gather_behind(r, sys, pl, j, d, bytes, err); /* a broadcast's, going down */
        } else {
            st = expand(r, sys, pl, j, d, pc, bytes, err);
        }
    }
    return st;
}

/* Themis's classes: the chunks whose rows of order (chunks x m, each a
 * permutation of the spanned dimensions 0..m-1) are alike, numbered by
 * first appearance, each chunk linked to the one before and after it in
 * its class; *rep the first chunk of each class. No order: one class. */
static comet_status make_classes(fc_run *r, const uint8_t *order, int m, int64_t **rep,
                                 comet_error *err)
{
    r->classes = 1;
    *rep = NULL;
    if (!order)
        return COMET_OK;
    r->class_of = malloc(sizeof *r->class_of * (size_t)r->chunks);
    r->prev = malloc(sizeof *r->prev * (size_t)r->chunks);
    r->next = malloc(sizeof *r->next * (size_t)r->chunks);
    int64_t *first = malloc(sizeof *first * (size_t)r->chunks);
    int64_t *last = malloc(sizeof *last * (size_t)r->chunks);
    if (!r->class_of || !r->prev || !r->next || !first || !last) {
        free(first);
        free(last);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    int classes = 0;
    for (int64_t k = 0; k < r->chunks; k++) {
        const uint8_t *row = order + k * m;
        unsigned seen = 0;
        for (int i = 0; i < m; i++)
            seen |= row[i] < m ? 1u << row[i] : 1u << COMET_MAX_DIMS;
        if (seen != (1u << m) - 1u) {
            free(first);
            free(last);
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "order",
                                   "chunk %lld's order of dimensions is not a permutation of "
                                   "the %d the group spans",
                                   (long long)k, m);
        }
        int cl = 0;
        while (cl < classes && memcmp(order + first[cl] * m, row, (size_t)m) != 0)
            cl++;
        if (cl == classes) {
            first[classes++] = k;
            r->prev[k] = -1;
        } else {
            r->prev[k] = (int32_t)last[cl];
            r->next[last[cl]] = (int32_t)k;
        }
        r->next[k] = -1;
        last[cl] = k;
        r->class_of[k] = (uint16_t)cl;
    }
    free(last);
    r->classes = classes;
    *rep = first;
    return COMET_OK;
}

/* Every class's plan for every part: the closed form's phases for the
 * class's order of dimensions, as flows' phases, and their channels. */
static comet_status make_plans(fc_run *r, const comet_system *sys, const comet_link *links,
                               const int *dims, int m, comet_collective c, double chunk_bytes,
                               const uint8_t *order, comet_error *err)
{
    r->parts = 1;
    bool rooted = c == COMET_COLL_BROADCAST || c == COMET_COLL_REDUCE ||
                  c == COMET_COLL_GATHER || c == COMET_COLL_SCATTER;
    for (int i = 0; i < m; i++) {
        int d = dims[i];
        if (!grid_topo(sys->dims[d].topology))
            continue;
        comet_status st = group_axes(r, d, err);
        if (st)
            return st;
        /* a rooted collective's scatters and gathers run per axis, in
         * parts, whatever the algorithm */
        if (sys->dims[d].algorithm == COMET_ALGO_RING ||
            sys->dims[d].algorithm == COMET_ALGO_DOUBLE_BINARY_TREE || rooted)
            if (c != COMET_COLL_ALL_TO_ALL && r->group_m[d] > r->parts)
                r->parts = r->group_m[d];
    }
    int64_t *rep;
    comet_status st = make_classes(r, order, m, &rep, err);
    if (st)
        return st;
    int n_plans = r->classes * r->parts;
    r->plan = calloc((size_t)n_plans, sizeof *r->plan);
    r->channels = calloc((size_t)n_plans, sizeof *r->channels);
    if (!r->plan || !r->channels) {
        free(rep);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    double part_bytes = chunk_bytes / (double)r->parts;
    for (int cl = 0; cl < r->classes && !st; cl++) {
        int row[COMET_MAX_DIMS];
        for (int i = 0; i < m; i++)
            row[i] = rep ? order[rep[cl] * m + i] : i;
        comet_coll_phase phases[COMET_MAX_COLL_PHASES];
        int np = comet_collective_plan(c, links, row, m, part_bytes, phases);
        for (int j = 0; j < r->parts && !st; j++) {
            fc_plan *pl = &r->plan[cl * r->parts + j];
            if (rooted) {
                st = rooted_phases(r, sys, links, pl, j, dims, phases, np, err);
                continue;
            }
            for (int i = 0; i < np && !st; i++) {
                int d = dims[phases[i].link];
                const comet_net_dim *nd = &sys->dims[d];
                comet_collective pc = phases[i].collective;
                const net_topology *topo = net_topology_of(nd->topology);
                bool in_net = links[phases[i].link].in_network_reduction &&
                              (pc == COMET_COLL_ALL_REDUCE ? topo->in_network_all_reduce != NULL
                               : pc == COMET_COLL_REDUCE_SCATTER || pc == COMET_COLL_ALL_GATHER
                                   ? topo->in_network_shard != NULL
                                   : false);
                if (in_net && pc != COMET_COLL_ALL_REDUCE) {
                    fc_phase ph = {d, -1, FC_IN_NETWORK, pc, phases[i].bytes, false, 0, false,
                                   0, false, false, 0, 0};
                    st = add_phase(pl, ph, err);
                } else if (pc == COMET_COLL_ALL_REDUCE) {
                    if (in_net) {
                        fc_phase ph = {d, -1, FC_IN_NETWORK, pc, phases[i].bytes, false, 0, false,
                                   0, false, false, 0, 0};
                        st = add_phase(pl, ph, err);
                    } else if (nd->algorithm == COMET_ALGO_DOUBLE_BINARY_TREE) {
                        fc_phase ph = {d, -1, FC_TREE, pc, phases[i].bytes, false, 0, false, 0,
                                       false, false, 0, 0};
                        st = add_phase(pl, ph, err);
                    } else {
                        int first = pl->n;
                        st = expand(r, sys, pl, j, d, COMET_COLL_REDUCE_SCATTER, phases[i].bytes,
                                    err);
                        if (!st)
                            st = expand(r, sys, pl, j, d, COMET_COLL_ALL_GATHER, phases[i].bytes,
                                        err);
                        /* halving-doubling folds the whole buffer once
                         * for both halves (net_hd) */
                        if (!st && nd->algorithm == COMET_ALGO_HALVING_DOUBLING &&
                            pl->n == first + 2) {
                            pl->ph[first].hd = NET_HD_AR_RS;
                            pl->ph[first + 1].hd = NET_HD_AR_AG;
                        }
                    }
                } else {
                    st = expand(r, sys, pl, j, d, pc, phases[i].bytes, err);
                }
            }
        }
    }
    free(rep);
    if (st)
        return st;
    r->max_channels = 1;
    r->max_phases = 1;
    r->hold_parts = rooted && r->parts > 1;
    for (int j = 0; j < n_plans; j++) {
        if (r->plan[j].n > r->max_phases)
            r->max_phases = r->plan[j].n;
        /* A rooted collective's chunk holds a dimension from its first
         * phase there through its last, as the closed form's pipeline
         * stage (and ASTRA-sim's one active chunk per dimension): the next
         * chunk's scatter, n-1 connections through the root's links,
         * would otherwise share them with the chunk's ring behind it, one
         * connection a link, and starve it (a broadcast +110 % on a ring
         * of 8 under a switch, 4 chunks). The symmetric collectives hold
         * one phase. */
        fc_plan *pl = &r->plan[j];
        for (int p = 0; p < pl->n; p++) {
            pl->ph[p].hold_to = (int8_t)p;
            for (int q = p + 1; rooted && q < pl->n; q++)
                if (pl->ph[q].dim == pl->ph[p].dim)
                    pl->ph[p].hold_to = (int8_t)q;
        }
        for (int p = 0; p < r->plan[j].n; p++) {
            int ch = channels_of(r, sys, &r->plan[j].ph[p]);
            if (ch > MAX_CHANNELS)
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                       "a fully-connected group of more than %d NPUs",
                                       MAX_CHANNELS + 1);
            r->channels[j][p] = ch;
            if (ch > r->max_channels)
                r->max_channels = ch;
        }
    }
    return COMET_OK;
}

/* ---- the run: collectives and sends started as a simulator asks -------------- */

struct comet_fabric_run {
    const comet_fabric *f;
    comet_system sys;        /* its sizes resolved, so plans see the fabric's */
    fl_engine *e;
    int64_t max_flows;
    fc_run **slots;          /* by owner; NULL: free */
    uint32_t n_slots, cap_slots;
    uint32_t *free_slots;
    uint32_t n_free;
    int64_t *done;           /* transfers finished in the last step */
    int n_done, cap_done;
    bool too_many;
};

static void run_free_slot(comet_fabric_run *fr, uint32_t id)
{
    fc_run *r = fr->slots[id];
    if (!r)
        return;
    free(r->chunk);
    free(r->count);
    free(r->arrived);
    free(r->arrived_top);
    free(r->line_leaves);
    free(r->line_blocks);
    free(r->blocks);
    free(r->mid);
    free(r->class_of);
    free(r->prev);
    free(r->next);
    free(r->plan);
    free(r->channels);
    free(r->plan_at);
    free(r->slots);
    free(r->wait_next);
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        free(r->coord[d]);
        free(r->index_at[d]);
    }
    free(r);
    fr->slots[id] = NULL;
    fr->free_slots[fr->n_free++] = id;
}

static int run_finished(comet_fabric_run *fr, uint32_t id)
{
    if (fr->n_done == fr->cap_done) {
        int cap = fr->cap_done ? 2 * fr->cap_done : 64;
        int64_t *x = realloc(fr->done, (size_t)cap * sizeof *x);
        if (!x)
            return -1;
        fr->done = x;
        fr->cap_done = cap;
    }
    fr->done[fr->n_done++] = id;
    return 0;
}

static int on_done(void *ctx, fl_engine *e, uint32_t owner, uint64_t tag)
{
    comet_fabric_run *fr = ctx;
    fc_run *r = owner < fr->n_slots ? fr->slots[owner] : NULL;
    if (!r)
        return -1;
    if (r->sends) {
        r->left--;
    } else if (coll_flow_done(r, e, tag) != 0) {
        fr->too_many |= r->too_many;
        return -1;
    }
    return r->left == 0 ? run_finished(fr, owner) : 0;
}

comet_status comet_fabric_run_new(const comet_fabric *f, const comet_system *sys,
                                  int64_t max_flows, comet_fabric_run **out, comet_error *err)
{
    *out = NULL;
    if (sys->n_dims != f->n_dims)
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "the fabric was built from another system");
    comet_fabric_run *fr = calloc(1, sizeof *fr);
    if (!fr || !(fr->e = fl_new(f, &cc_fluid_stepper))) {
        free(fr);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    fr->f = f;
    comet_fabric_system(f, sys, &fr->sys);
    fr->max_flows = max_flows > 0 ? max_flows : DEFAULT_MAX_FLOWS;
    *out = fr;
    return COMET_OK;
}

void comet_fabric_run_free(comet_fabric_run *fr)
{
    if (!fr)
        return;
    for (uint32_t i = 0; i < fr->n_slots; i++)
        run_free_slot(fr, i);
    free(fr->slots);
    free(fr->free_slots);
    free(fr->done);
    fl_free(fr->e);
    free(fr);
}

/* A new transfer's slot, its owner id. */
static fc_run *run_slot(comet_fabric_run *fr)
{
    if (fr->n_free == 0 && fr->n_slots == fr->cap_slots) {
        uint32_t cap = fr->cap_slots ? 2 * fr->cap_slots : 64;
        fc_run **x = realloc(fr->slots, cap * sizeof *x);
        uint32_t *y = realloc(fr->free_slots, cap * sizeof *y);
        if (x)
            fr->slots = x;
        if (y)
            fr->free_slots = y;
        if (!x || !y)
            return NULL;
        fr->cap_slots = cap;
    }
    fc_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    uint32_t id = fr->n_free > 0 ? fr->free_slots[--fr->n_free] : fr->n_slots++;
    fr->slots[id] = r;
    r->owner = id;
    r->f = fr->f;
    r->max_flows = fr->max_flows;
    return r;
}

static comet_status too_many_flows(comet_error *err, int64_t max_flows)
{
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--max-flows",
                           "the flow simulation needs more than %lld flows: raise "
                           "--max-flows, or simulate fewer NPUs (--one-group) or chunks",
                           (long long)max_flows);
}

/* Every member of every phase's line is a member of the run (a list that
 * holds whole groups). */
static comet_status check_members(const fc_run *r, const int64_t *members, comet_error *err)
{
    for (int64_t i = 0; members && i < r->n_members; i++)
        for (int j = 0; j < r->classes * r->parts; j++)
            for (int p = 0; p < r->plan[j].n; p++) {
                fc_line l = line_of(r, &r->plan[j].ph[p], members[i]);
                for (int64_t q = 0; q < l.n; q++) {
                    int64_t m = member(&l, q);
                    if (m < 0 || m >= r->f->npus || r->local[m] < 0)
                        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                               "NPU %lld's group holds NPU %lld, which does not "
                                               "take part",
                                               (long long)members[i], (long long)m);
                }
            }
    return COMET_OK;
}

/* A group listed by its positions along dimension d (g->coord[d]): they
 * are checked (distinct, on the dimension, a list of members given, not a
 * torus or mesh) and copied, in the group's order, but ascending where the
 * dimension reduces in the network (its tree is placed by position, and a
 * leaf's members must come one after another), and each position's index
 * among them noted. r->coord[d] stays NULL when out of memory. */
static comet_status listed_positions(fc_run *r, const comet_fabric_run *fr,
                                     const comet_fabric_group *g, int d, comet_error *err)
{
    const fab_dim *fd = &r->f->dims[d];
    if (!g->members)
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "a group listed by its positions along %s without its members",
                               r->f->dim_names[d]);
    if (grid_topo(fd->topo) && r->span[d] > 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "a group listed by its positions along the %s %s (the flow "
                               "simulation runs torus and mesh groups of neighbours only)",
                               r->f->dim_names[d], fd->wrap ? "torus" : "mesh");
    int64_t *coord = malloc(sizeof *coord * (size_t)r->span[d]);
    int32_t *at = malloc(sizeof *at * (size_t)fd->size);
    if (!coord || !at) {
        free(coord);
        free(at);
        return COMET_OK;
    }
    r->coord[d] = coord;
    r->index_at[d] = at;
    for (int64_t x = 0; x < fd->size; x++)
        at[x] = -1;
    for (int64_t j = 0; j < r->span[d]; j++) {
        int64_t x = g->coord[d][j];
        if (x < 0 || x >= fd->size || at[x] >= 0)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "a group's position %lld along %s is %s", (long long)x,
                                   r->f->dim_names[d],
                                   x < 0 || x >= fd->size ? "not on it" : "listed twice");
        at[x] = 0;
    }
    bool sorted = fr->sys.dims[d].in_network_reduction;
    for (int64_t x = 0, j = 0; x < fd->size; x++) /* ascending, where the tree needs it */
        if (sorted && at[x] >= 0)
            coord[j++] = x;
    for (int64_t j = 0; j < r->span[d]; j++) {
        if (!sorted)
            coord[j] = g->coord[d][j];
        at[coord[j]] = (int32_t)j;
    }
    return COMET_OK;
}

comet_status comet_fabric_run_collective(comet_fabric_run *fr, const comet_fabric_group *g,
                                         comet_collective c, double bytes,
                                         const comet_fabric_schedule *sch, int64_t *id,
                                         comet_error *err)
{
    const comet_fabric *f = fr->f;
    *id = -1;
    int64_t chunks = sch ? sch->chunks : 0;
    int concurrent = sch && sch->concurrent > 0 ? sch->concurrent : 1;
    const uint8_t *order = sch ? sch->order : NULL;
    if (order && chunks <= 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--splits",
                               "an order of dimensions per chunk needs the chunks counted");
    bool barrier = c == COMET_COLL_BARRIER;
    if (barrier) /* an all-reduce of one element, whatever bytes says, never cut */
        c = comet_collective_priced_as(c, &bytes);
    if (c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--collective", "unknown collective");
    if (!(bytes > 0.0) || !isfinite(bytes))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--size", "must be positive");
    if (concurrent < 1 || concurrent > 16)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--concurrent",
                               "must be from 1 to 16, got %d", concurrent);
    int active = sch ? sch->active_chunks : 0;
    if (active < 0 || active > 64)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--active-chunks",
                               "must be from 1 to 64, got %d", active);
    fc_run *r = run_slot(fr);
    if (!r)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = COMET_OK;
    r->local = g->members ? g->local : NULL;
    r->n_members = g->members ? g->n_members : f->npus;
    for (int d = 0; d < f->n_dims; d++) {
        r->span[d] = g->span[d] > 0 ? g->span[d] : 1;
        r->stride[d] = g->stride[d] > 0 ? g->stride[d] : 1;
        if (g->coord[d]) {
            if ((st = listed_positions(r, fr, g, d, err)) != COMET_OK)
                goto fail;
            if (!r->coord[d])
                goto oom;
            continue;
        }
        if (f->dims[d].size % (r->span[d] * r->stride[d])) {
            st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--span",
                                 "a group of %lld NPUs along %s does not tile its %lld",
                                 (long long)r->span[d], f->dim_names[d],
                                 (long long)f->dims[d].size);
            goto fail;
        }
    }
    /* the group as placed (its members stride apart), as the estimate sees
     * it: which chain a rooted collective runs depends on it */
    comet_link links[COMET_MAX_DIMS];
    int dims[COMET_MAX_DIMS];
    int m = comet_span_links_placed(&fr->sys, r->span, r->stride, links, dims);
    if (m == 0) { /* nothing to move: done at once */
        if (run_finished(fr, r->owner) != 0)
            goto oom;
        *id = r->owner;
        return COMET_OK;
    }
    if (barrier)
        order = NULL;
    r->chunks = barrier      ? 1
                : chunks > 0 ? chunks
                             : comet_collective_chunks_for(&fr->sys, r->span, c, bytes);
    if (r->chunks > MAX_CHUNKS) {
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--splits",
                             "the flow simulation cuts a buffer into %d chunks at most",
                             MAX_CHUNKS);
        goto fail;
    }
    if ((st = make_plans(r, &fr->sys, links, dims, m, c, bytes / (double)r->chunks, order,
                         err)) != COMET_OK)
        goto fail;
    if ((st = check_members(r, g->members, err)) != COMET_OK)
        goto fail;
    r->streams = concurrent * r->parts;
    if (index_plans(r) != 0)
        goto oom;
    double cells = (double)r->n_members * r->streams * (double)r->chunks;
    double mem = cells * (sizeof(fc_chunk_state) +
                          (double)r->max_phases *
                              (r->max_channels * sizeof(fc_count) + 12 * IN_NETWORK_PIECES)) +
                 4.0 * (double)r->n_members;
    if (mem > 4e9) {
        st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                             "the flow simulation's state would take %.1f GB (NPUs x chunks x "
                             "phases x channels): fewer chunks or NPUs",
                             mem / 1e9);
        goto fail;
    }
    r->chunk = calloc((size_t)cells, sizeof *r->chunk);
    r->count = calloc((size_t)cells * (size_t)(r->max_phases * r->max_channels), sizeof *r->count);
    r->arrived = calloc((size_t)cells * (size_t)(r->max_phases * IN_NETWORK_PIECES),
                        sizeof *r->arrived);
    r->arrived_top = calloc((size_t)cells * (size_t)(r->max_phases * IN_NETWORK_PIECES),
                            sizeof *r->arrived_top);
    r->line_leaves = calloc((size_t)r->n_members, sizeof *r->line_leaves);
    r->line_blocks = calloc((size_t)r->n_members, sizeof *r->line_blocks);
    r->blocks = calloc((size_t)r->n_members, sizeof *r->blocks);
    r->mid = calloc((size_t)cells * (size_t)(r->max_phases * IN_NETWORK_PIECES), sizeof *r->mid);
    if (!r->chunk || !r->count || !r->arrived || !r->arrived_top || !r->line_leaves ||
        !r->line_blocks || !r->blocks || !r->mid)
        goto oom;
    /* A reduce over three or more dimensions: each dimension works on one
     * chunk at a time per NPU, the others queued in the order they came,
     * as ASTRA-sim's per-dimension queues run a hierarchical collective.
     * Holding an inner dimension from a chunk's reduce-scatter there to
     * its gather, through the outer dimensions' phases, ran 4 chunks as
     * slow as 1 (+47 % over the closed form on three switches); letting
     * the next chunk's reduce-scatter share the dimension with a gather
     * starved it at 40 chunks (+20 %). */
    if (!active && c == COMET_COLL_REDUCE && m > 2)
        active = 1;
    r->active = active;
    if (active) {
        size_t n_slots = (size_t)r->n_members * (size_t)r->streams * (size_t)f->n_dims;
        r->slots = malloc(n_slots * sizeof *r->slots);
        r->wait_next = malloc((size_t)cells * sizeof *r->wait_next);
        if (!r->slots || !r->wait_next)
            goto oom;
        for (size_t i = 0; i < n_slots; i++)
            r->slots[i] = (fc_slots){0, -1, -1};
    }
    r->left = (int64_t)cells;
    fc_line line = NO_LINE;
    /* every chunk that waits for no other of its class (under a limit:
     * every chunk, in order, so each dimension takes them as they come) */
    for (int64_t i = 0; i < r->n_members && !r->failed; i++) {
        int64_t npu = g->members ? g->members[i] : i;
        for (int s = 0; s < r->streams; s++)
            for (int64_t k = 0; k < r->chunks && !r->failed; k++)
                if ((active || prev_chunk(r, k) < 0) &&
                    try_enter(r, fr->e, npu, s, k, &line) != 0)
                    r->failed = true;
    }
    if (r->too_many) {
        st = too_many_flows(err, r->max_flows);
        goto fail;
    }
    if (r->failed)
        goto oom;
    if (r->left == 0 && run_finished(fr, r->owner) != 0)
        goto oom;
    *id = r->owner;
    return COMET_OK;
oom:
    st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                         "out of memory (or a route longer than %d links) starting the "
                         "first flows",
                         FAB_MAX_PATH);
fail:
    run_free_slot(fr, r->owner);
    return st;
}

comet_status comet_fabric_run_sends(comet_fabric_run *fr, const int64_t *from, const int64_t *to,
                                    int64_t n, double bytes, int64_t *id, comet_error *err)
{
    *id = -1;
    fc_run *r = run_slot(fr);
    if (!r)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    r->sends = true;
    r->left = n;
    for (int64_t i = 0; i < n; i++) {
        if (from[i] < 0 || from[i] >= fr->f->npus || to[i] < 0 || to[i] >= fr->f->npus) {
            run_free_slot(fr, r->owner);
            return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                   "a send between NPUs %lld and %lld of %lld",
                                   (long long)from[i], (long long)to[i],
                                   (long long)fr->f->npus);
        }
        if (fl_flows(fr->e) >= (uint64_t)fr->max_flows) {
            run_free_slot(fr, r->owner);
            return too_many_flows(err, fr->max_flows);
        }
        uint64_t hash = (uint64_t)from[i] * 0x9e3779b97f4a7c15ULL ^ (uint64_t)to[i];
        if (fl_send(fr->e, from[i], to[i], bytes, hash, r->owner, (uint64_t)i) != 0) {
            run_free_slot(fr, r->owner);
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        }
    }
    if (n == 0 && run_finished(fr, r->owner) != 0)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    *id = r->owner;
    return COMET_OK;
}

comet_status comet_fabric_run_next(comet_fabric_run *fr, double *at, comet_error *err)
{
    if (fr->n_done > 0) { /* finished at once, not yet collected */
        *at = fl_now(fr->e);
        return COMET_OK;
    }
    return fl_next(fr->e, at, err);
}

void comet_fabric_run_advance(comet_fabric_run *fr, double t)
{
    fl_advance(fr->e, t);
}

double comet_fabric_run_now(const comet_fabric_run *fr)
{
    return fl_now(fr->e);
}

comet_status comet_fabric_run_step(comet_fabric_run *fr, const int64_t **done, int *n_done,
                                   comet_error *err)
{
    /* the transfers the last call handed back are over: free their slots */
    comet_status st = COMET_OK;
    if (fr->n_done == 0) {
        st = fl_step(fr->e, on_done, fr, err);
        if (st && fr->too_many)
            st = too_many_flows(err, fr->max_flows);
    }
    *done = fr->done;
    *n_done = fr->n_done;
    return st;
}

void comet_fabric_run_release(comet_fabric_run *fr)
{
    for (int i = 0; i < fr->n_done; i++)
        run_free_slot(fr, (uint32_t)fr->done[i]);
    fr->n_done = 0;
}

comet_status comet_fabric_run_finish(comet_fabric_run *fr, comet_error *err)
{
    for (;;) {
        const int64_t *done;
        int n_done;
        double at;
        comet_status st = comet_fabric_run_next(fr, &at, err);
        if (st)
            return st;
        if (!isfinite(at)) /* flows all ended, the transfer not through: a state machine stuck */
            return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                                   "a transfer's flows ended with NPUs left in its phases");
        if ((st = comet_fabric_run_step(fr, &done, &n_done, err)) != COMET_OK)
            return st;
        if (n_done > 0) {
            comet_fabric_run_release(fr);
            return COMET_OK;
        }
    }
}

void comet_fabric_run_stats(const comet_fabric_run *fr, uint64_t *flows, uint64_t *events,
                            uint64_t *rate_updates)
{
    *flows = fl_flows(fr->e);
    *events = fl_events(fr->e);
    *rate_updates = fl_rate_updates(fr->e);
}

/* ---- one collective, run to its end ----------------------------------------------- */

static void hot_links(const comet_fabric *f, const double *bytes, double time,
                      comet_flow_result *out)
{
    out->n_hot = 0;
    for (int64_t l = 0; l < f->n_links; l++) {
        if (bytes[l] <= 0.0)
            continue;
        int t = f->tier[l] < 3 ? f->tier[l] : 2;
        out->bytes_per_tier[t] += bytes[l];
        double u = time > 0.0 && f->cap[l] > 0.0 ? bytes[l] / (f->cap[l] * time) : 0.0;
        int at = out->n_hot;
        while (at > 0 && out->hot[at - 1].utilization < u)
            at--;
        if (at >= COMET_FABRIC_HOT_LINKS)
            continue;
        int last = out->n_hot < COMET_FABRIC_HOT_LINKS ? out->n_hot : COMET_FABRIC_HOT_LINKS - 1;
        for (int i = last; i > at; i--)
            out->hot[i] = out->hot[i - 1];
        out->hot[at] = (comet_fabric_hot_link){l, bytes[l], u};
        if (out->n_hot < COMET_FABRIC_HOT_LINKS)
            out->n_hot++;
    }
}

comet_status comet_fabric_run_watch(comet_fabric_run *fr, int n, comet_link_series *series,
                                    bool *cut, comet_error *err)
{
    if (fl_watch(fr->e, n, series, cut) != 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "a watched link is not a link of the fabric (it has %lld)",
                               (long long)fr->f->n_links);
    return COMET_OK;
}

const double *comet_fabric_run_link_bytes(const comet_fabric_run *fr)
{
    return fl_link_bytes(fr->e);
}

void comet_fabric_run_cc(const comet_fabric_run *fr, comet_cc_stats *out)
{
    fl_cc_stats(fr->e, out);
}

void comet_fabric_run_links(const comet_fabric_run *fr, double time, comet_flow_result *out)
{
    memset(out->bytes_per_tier, 0, sizeof out->bytes_per_tier);
    hot_links(fr->f, fl_link_bytes(fr->e), time, out);
    fl_cc_stats(fr->e, &out->cc);
}

comet_status comet_fabric_collective(const comet_fabric *f, const comet_system *sys,
                                     const int64_t span[COMET_MAX_DIMS], comet_collective c,
                                     double bytes, const comet_flow_options *o,
                                     comet_flow_result *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    comet_flow_options defaults;
    if (!o) {
        comet_flow_options_defaults(&defaults);
        o = &defaults;
    }
    comet_fabric_run *fr;
    comet_status st = comet_fabric_run_new(f, sys, o->max_flows, &fr, err);
    if (st)
        return st;
    comet_fabric_group g = {.members = NULL};
    int64_t *first = NULL;
    int32_t *local = NULL;
    int64_t per_group = 1;
    for (int d = 0; d < f->n_dims; d++) {
        g.span[d] = span[d] > 0 ? span[d] : 1;
        g.stride[d] = 1;
        per_group *= g.span[d] <= f->dims[d].size ? g.span[d] : 1;
    }
    if (o->one_group) {
        /* the first group: positions below its span along every dimension */
        first = malloc((size_t)per_group * sizeof *first);
        local = malloc((size_t)f->npus * sizeof *local);
        if (!first || !local) {
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            goto done;
        }
        int64_t n = 0;
        for (int64_t npu = 0; npu < f->npus; npu++) {
            bool in = true;
            for (int d = 0; d < f->n_dims && in; d++)
                in = (npu / f->dims[d].inner) % f->dims[d].size < g.span[d];
            local[npu] = in && n < per_group ? (int32_t)n : -1;
            if (in && n < per_group)
                first[n++] = npu;
        }
        g.members = first;
        g.local = local;
        g.n_members = n;
    }
    for (int i = 0; i < o->n_watch && i < COMET_FABRIC_HOT_LINKS; i++)
        out->series[i].link = o->watch[i];
    out->n_series = o->n_watch < COMET_FABRIC_HOT_LINKS ? o->n_watch : COMET_FABRIC_HOT_LINKS;
    if (out->n_series > 0 &&
        (st = comet_fabric_run_watch(fr, out->n_series, out->series, &out->series_cut, err)))
        goto done;
    int64_t id;
    comet_fabric_schedule sch = {o->chunks, o->concurrent, o->order, 0};
    if ((st = comet_fabric_run_collective(fr, &g, c, bytes, &sch, &id, err)))
        goto done;
    st = comet_fabric_run_finish(fr, err);
    if (!st && fl_busy(fr->e))
        st = fl_run(fr->e, on_done, fr, err); /* a finished collective leaves no flow: guard */
    if (!st) {
        double ignored;
        st = fl_next(fr->e, &ignored, err); /* the watched links' last step */
    }
    if (!st) {
        out->time = fl_now(fr->e);
        out->groups = (g.members ? g.n_members : f->npus) / per_group;
        comet_fabric_run_stats(fr, &out->flows, &out->events, &out->rate_updates);
        comet_fabric_run_links(fr, out->time, out);
    }
done:
    if (st)
        comet_flow_result_free(out);
    free(first);
    free(local);
    comet_fabric_run_free(fr);
    return st;
}
