/* Private to src/network: the two families a one-dimension collective is
 * priced with, each a struct of function pointers with one file per member,
 * and the registry that maps the public enums to them.
 *
 * - A topology (topo_*.c) says what the traffic patterns the algorithms use
 *   cost on it: how many one-hop latencies a pattern waits for in sequence
 *   and how much bandwidth time it takes, in units of x = S/B (S bytes per
 *   NPU, B the NPU's injection bandwidth, docs/collectives.md).
 * - An algorithm (algo_*.c) prices each collective as one or more of those
 *   patterns: time = hops * a + load * x, a the latency of one hop.
 *
 * A new topology is one topo_*.c that fills a net_topology plus its row in
 * the registry (registry.c); a new algorithm likewise with algo_*.c. The
 * formulas are the inner loop of the strategy search: patterns are closed
 * forms, no allocation, no libm. */
#ifndef COMET_NETWORK_FAMILIES_H
#define COMET_NETWORK_FAMILIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comet/network.h"
#include "fabric.h"

/* What one traffic pattern costs on one dimension: hops a + load x.
 * Where the busiest link takes pieces that come from different distances
 * at once (a scatter over a ring, the direct algorithm's messages), the
 * nearest start once `lead` hops' latency is out and keep the link busy
 * while the farther ones' latencies run (net_spread, net_seconds).
 * lead 0: one chain, linear. */
typedef struct net_cost {
    double hops; /* one-hop latencies waited for one after another */
    double load; /* bandwidth time in units of x = S/B */
    double lead; /* hops before the busiest link starts (0: hops, linear) */
    double step; /* hops between the distances the pieces come from */
    double near; /* load the nearest distance brings (x) */
    double grow; /* how much more each farther distance brings (x) */
} net_cost;

/* A pattern of `hops` latencies in sequence and `load` x. */
static inline net_cost net_linear(double hops, double load)
{
    return (net_cost){hops, load, 0.0, 0.0, 0.0, 0.0};
}

/* The busiest link of a pattern whose pieces come over distances lead,
 * lead + step, ... hops, the m-th farther bringing near + m grow x (grow
 * 0: at least near, each), as the flows run it: each piece's bytes start
 * once its latency is out and the link carries whatever has started, so
 * it is busy from lead a on and finishes at the largest over m of
 * (lead + m step) a + W_m x, W_m = load - m near - m(m-1)/2 grow the load
 * from the m-th distance on (net_seconds). With grow 0 that bound is the
 * larger of its two ends (each step adds at most step a - near x), exact
 * where the latency or the bandwidth dominates. docs/collectives.md,
 * "Latency spread over distances". */
static inline net_cost net_spread(net_cost c, double lead, double step, double near, double grow)
{
    if (!(lead > 0.0) || !(c.hops > lead) || !(step > 0.0) || !(near >= 0.0) || !(grow >= 0.0))
        return c;
    c.lead = lead;
    c.step = step;
    c.near = near;
    c.grow = grow;
    return c;
}

/* The pattern c with its hops (lead and step included) times h and its
 * load (near and grow included) times w: s interleaved groups' patterns,
 * each hop across s links. */
static inline net_cost net_cost_scaled(net_cost c, double h, double w)
{
    return (net_cost){c.hops * h, c.load * w, c.lead * h, c.step * h, c.near * w, c.grow * w};
}

/* Halving-doubling on n members that are not a power of two, folded as
 * MPICH folds them (Thakur, Rabenseifner & Gropp 2005, Sec. 4): with
 * p = 2^floor(log2 n) and r = n - p, member 2i (i < r) first sends to
 * member 2i+1, the p left run the power-of-two schedule (rank q: member
 * 2q+1 below r, q+r above), and 2i+1 sends the result back. A pass of a
 * reduce-scatter (or all-gather) folds and unfolds and carries the
 * n blocks of S/n, a doubled block for each rank below r; an
 * all-reduce's two halves fold the whole buffer once, run the p ranks on
 * it in halves, and unfold it once. docs/collectives.md. */
typedef enum net_hd_part { NET_HD_RS, NET_HD_AG, NET_HD_AR_RS, NET_HD_AR_AG } net_hd_part;
typedef struct net_hd {
    int64_t n, p, r;
    int L, steps;     /* log2 p; the steps, fold and unfold included */
    net_hd_part part;
} net_hd;
net_hd net_hd_of(int64_t n, net_hd_part part);
/* What member i sends in step st, in units of S (0: nothing), and to whom
 * (*to, a member's index); whether it receives something in that step. */
double net_hd_send(const net_hd *h, int st, int64_t i, int64_t *to);
bool net_hd_recv(const net_hd *h, int st, int64_t i);
/* The member that sends to member i in step st (-1: none). */
int64_t net_hd_from(const net_hd *h, int st, int64_t i);
/* The members' walk through the steps (per member: t the time in x it
 * is through the last step, hop its hops): members a and b's step
 * starts once both are through the one before (the later one's time and
 * hops) and takes d and `hops`; the slowest member's time and hops. */
void net_hd_pair(double *t, double *hop, int64_t a, int64_t b, double d, double hops);
net_cost net_hd_slowest(const double *t, const double *hop, int64_t count);
/* How far apart (in members) step st's farthest pair is. */
int64_t net_hd_distance(const net_hd *h, int st);

/* comet_collective_chunk_hold_latency with the chunk hold (the
 * transfer's share, comet_collective_chunk_hold) already worked out. */
double net_chunk_hold_latency(comet_collective c, const comet_link *l, double hold);

/* A spread pattern's time if its busiest link waits for the m-th
 * distance's latency and then carries the load from there on. */
static inline double net_spread_at(net_cost c, double m, double a, double x)
{
    double w = c.load - m * c.near - 0.5 * m * (m - 1.0) * c.grow;
    return (c.lead + m * c.step) * a + (w > 0.0 ? w : 0.0) * x;
}

/* Seconds of a pattern at latency a per hop and x = S/B. */
static inline double net_seconds(net_cost c, double a, double x)
{
    if (!(c.lead > 0.0))
        return c.hops * a + c.load * x;
    double last = (c.hops - c.lead) / c.step; /* the farthest distance's m */
    double t = net_spread_at(c, 0.0, a, x), far = net_spread_at(c, last, a, x);
    t = far > t ? far : t;
    if (c.grow > 0.0 && x > 0.0) {
        /* concave in m: the largest at the integers beside its top */
        double top = (c.step * a - c.near * x) / (c.grow * x) + 0.5;
        if (top > 0.0 && top < last) {
            double lo = (double)(int64_t)top;
            double mid = net_spread_at(c, lo, a, x), next = net_spread_at(c, lo + 1.0, a, x);
            t = mid > t ? mid : t;
            t = next > t ? next : t;
        }
    }
    return t;
}

/* The patterns, each on the link's n NPUs with S bytes per NPU. */
typedef net_cost (*net_pattern_fn)(const comet_link *l);

typedef struct net_topology {
    comet_topology id;
    /* One pass of the ring schedule: n-1 steps, in each every NPU sends
     * S/n to its successor on a ring laid over the topology. */
    net_pattern_fn ring_pass;
    /* The ring schedule's reduce-scatter, all-gather or all-reduce where it
     * is not ring_pass once or twice (a torus or mesh group whose parts
     * meet on axes that differ); NULL: it is. */
    net_cost (*ring_schedule)(const comet_link *l, comet_collective c);
    /* The phases one pass of the ring schedule runs one after another (a
     * torus or mesh group's axes, each part visiting them in turn), the
     * pass's latency shared among them: a chunk's pass holds its first
     * phase for that share before the next chunk's follows it, one chunk
     * a phase (comet_collective_chunk_hold_latency); NULL: 1. */
    int (*ring_phases)(const comet_link *l);
    /* Pairwise exchange: n-1 rounds, in round k every NPU sends S/n to
     * the NPU k places on. */
    net_pattern_fn pairwise_exchange;
    /* Every NPU sends S/n to each of its n-1 peers at once. */
    net_pattern_fn scatter_to_all;
    /* Recursive halving (reduce-scatter; recursive doubling is its mirror):
     * L = ceil(log2 n) steps, in step i every NPU exchanges S/2^(i+1) with a
     * partner, the NPU 2^i away. */
    net_pattern_fn recursive_halving;
    /* The same on n that is not a power of two, folded (net_hd): one
     * pass (part: a reduce-scatter, an all-gather, or either half of an
     * all-reduce). */
    net_cost (*folded_halving)(const comet_link *l, net_hd_part part);
    /* The power-of-two halving pass's busiest link, its load summed over
     * the pass's steps (in x, as the pass's load); NULL or 0 where every
     * step loads it alike (the pass's load). A chunk's reduce-scatter
     * runs beside the chunk before's all-gather, its mirror, and where
     * the steps load different links the two share them: an all-reduce's
     * chunks follow each other at the larger of one pass and twice this
     * (comet_collective_chunk_hold). */
    double (*halving_link_total)(const comet_link *l);
    /* Bruck's all-to-all: L steps, in step i every NPU ships about S/2 to
     * the NPU 2^i away. */
    net_pattern_fn bruck;
    /* Double binary tree all-reduce: S/2 reduced up and broadcast down each
     * of two trees, pipelined; every NPU injects 2S. */
    net_pattern_fn double_tree;
    /* All-reduce reduced inside the network (SHARP-like): NULL where the
     * topology has nothing to reduce in. */
    net_pattern_fn in_network_all_reduce;
    /* Reduce-scatter reduced in the switches and all-gather multicast by
     * them (mirrors, one pattern): NULL where the switches run all-reduce
     * alone (SHARP, NVLS as comet prices them) or there are none. */
    net_pattern_fn in_network_shard;
    /* Every NPU along the dimension sends S to the NPU `stride` places on,
     * all at once: the bandwidth time in units of x (at least 1); NULL
     * where each such send has its links to itself. */
    double (*shift_load)(const comet_link *l, int64_t stride);
    /* Rooted collectives, rooted at the group's first member
     * (docs/collectives.md, "Rooted collectives"). A scatter: the root
     * sends S/n to every other member at once (a gather: every member its
     * S/n to the root, the mirror). */
    net_pattern_fn root_scatter;
    /* The gather where it is not the scatter's price (NULL: it is). */
    net_pattern_fn root_gather;
    /* A broadcast pipelined in pieces down a chain from the root (a
     * reduce: toward it); NULL or false where the topology runs a
     * broadcast as its scatter then the algorithm's all-gather (a reduce:
     * the reduce-scatter then the gather). *head: the share of the
     * chain's steps its head sends in, the time a chunk holds the chain
     * before the next chunk's pieces follow it (network.c). The flows ask
     * it too, so both run the same plan. */
    bool (*root_chain)(const comet_link *l, net_cost *out, double *head);
    /* The reduce's chain where it is not the broadcast's mirror (NULL:
     * it is): on part of a one-way ring the chain toward the root comes
     * back round past the other groups. */
    bool (*root_chain_toward)(const comet_link *l, net_cost *out, double *head);
    /* Whether its patterns read comet_link.spacing (a Clos: where a
     * group's members sit decides how many share a leaf). */
    bool prices_spacing;
    /* Its part of the fabric: switches, links and routes (fabric.h). */
    const fab_ops *fabric;
} net_topology;

/* Seconds of one collective with this algorithm on topology t; a = latency
 * of one hop (>= 0), x = S/B (> 0), l->n >= 2. */
typedef double (*net_collective_fn)(const net_topology *t, const comet_link *l, double a,
                                    double x);

typedef struct net_algorithm {
    comet_algorithm id;
    net_collective_fn time[COMET_COLL_SYMMETRIC]; /* by collective; [COMET_COLL_NONE] unused */
    /* Messages one NPU sends in one pass (a reduce-scatter, an all-gather
     * or an all-to-all) on n >= 2 NPUs; an all-reduce is two passes. The
     * simulator charges its endpoint delay per message. */
    double (*pass_messages)(int64_t n);
    /* The share of an all-reduce's time a chunk holds its dimension
     * before the next chunk's reduce-scatter runs beside its all-gather
     * (NULL: all of it, the two sharing every link alike). */
    double (*all_reduce_hold)(const net_topology *t, const comet_link *l);
} net_algorithm;

/* Members (one file each). */
extern const net_topology net_topology_ring;            /* topo_ring.c */
extern const net_topology net_topology_fully_connected; /* topo_fully_connected.c */
extern const net_topology net_topology_switch;          /* topo_switch.c */
extern const net_topology net_topology_torus;           /* topo_torus.c */
extern const net_topology net_topology_mesh;            /* topo_torus.c */
extern const net_topology net_topology_fat_tree;        /* topo_clos.c */
extern const net_topology net_topology_rail;            /* topo_clos.c */
extern const net_topology net_topology_fred;            /* topo_clos.c */
extern const net_algorithm net_algorithm_ring;          /* algo_ring.c */
extern const net_algorithm net_algorithm_direct;        /* algo_direct.c */
extern const net_algorithm net_algorithm_halving_doubling;   /* algo_halving_doubling.c */
extern const net_algorithm net_algorithm_double_binary_tree; /* algo_double_binary_tree.c */

/* The registry (registry.c): every enum value to its member. */
extern const net_topology *const net_topologies[COMET_TOPO_COUNT];
extern const net_algorithm *const net_algorithms[COMET_ALGO_COUNT];

/* The member for an enum value; a value out of range (never produced by
 * the readers) is priced as a switch, and with the ring algorithm. */
static inline const net_topology *net_topology_of(comet_topology t)
{
    return (unsigned)t < COMET_TOPO_COUNT ? net_topologies[t] : &net_topology_switch;
}

static inline const net_algorithm *net_algorithm_of(comet_algorithm a)
{
    return (unsigned)a < COMET_ALGO_COUNT ? net_algorithms[a] : &net_algorithm_ring;
}

/* The ring schedule's collectives (algo_ring.c), which the double binary
 * tree also runs for everything but all-reduce. */
double net_ring_schedule_reduce_scatter(const net_topology *t, const comet_link *l, double a,
                                        double x);
double net_ring_schedule_all_gather(const net_topology *t, const comet_link *l, double a,
                                    double x);
double net_ring_schedule_all_to_all(const net_topology *t, const comet_link *l, double a,
                                    double x);

/* Patterns that cost the same on several topologies (topology.c). */
net_cost net_full_bandwidth_steps(const comet_link *l); /* n-1 steps of S/n at full B */
net_cost net_one_hop_scatter(const comet_link *l);      /* S/n to every peer, one hop */
net_cost net_pairwise_rounds(const comet_link *l);      /* n-1 shifts, two at once */
bool net_pipelined_chain(const comet_link *l, net_cost *out, double *head); /* 2(n-1) steps
                                                                            of S/n */
/* Every member of a ring of k (wrap) or a line sends one message to the
 * member delta on (mod k), along the fabric's routes: the messages the
 * busiest link carries (a ring: the shorter way, a tie split evenly; a
 * line: straight, so those past its end travel back), and in *hops how
 * far the farthest goes. */
double net_shift_flows(int64_t delta, int64_t k, bool wrap, double *hops);
/* The double binary tree of the flows (fabric_coll.c: a heap over the
 * members and one over them reversed, each carrying S/2 up and down every
 * edge): the busiest NPU's bytes each way, in units of S. */
double net_double_tree_port_load(int64_t n);
/* s groups of k members each closing a ring, interleaved (every s-th
 * position), each root scattering S/k to its members the shorter way (a
 * tie forward from an even place, back from an odd one): the pieces the
 * busiest link out of the roots carries (floor(k/2) for one group). */
double net_interleaved_scatter_pieces(int64_t k, int64_t s);
/* A direct network's dimension as the fabric lays it (topo_ring.c,
 * topo_torus.c): m axes, innermost first, rings (wrap) or lines, one way
 * round (uni: a unidirectional ring). */
typedef struct net_direct {
    int m;
    int64_t axes[COMET_MAX_AXES];
    bool wrap[COMET_MAX_AXES], uni;
} net_direct;
/* The most directed links net_direct_double_tree counts on (its stack
 * arrays: 48 KiB; a ring of 4096, a torus of 8 x 8 x 16; a group that
 * tiles part of a larger one, two ways round, counts on its block). */
#define NET_TREE_LINKS 8192
/* The flows' double binary tree on a direct network, every group at
 * once, each edge on the fabric's route: the busiest link's load and the
 * trees' hops into *out; false past NET_TREE_LINKS links. */
bool net_direct_double_tree(const comet_link *l, const net_direct *g, net_cost *out);
/* The most directed links net_hd_direct counts on: a pair's messages
 * walk their routes' links, n of them a step, so past a ring of 512 (a
 * torus of 16 x 16) it would take milliseconds (a ring of 1000: 2.4 ms,
 * of 3000: 93 ms). */
#define NET_HD_LINKS 1024
/* The power-of-two halving pass on a ring, torus or mesh, every group at
 * once, each message on the fabric's route: its busiest link's load
 * summed over the steps, in x (halving_link_total); false past
 * NET_HD_LINKS links or where the group is not a power of two. */
bool net_hd_link_total(const comet_link *l, const net_direct *whole, double *out);
/* The folded halving-doubling (net_hd) of every group at once on a
 * direct network, each message on the fabric's route, the members
 * going through the steps as the flows' do (a pair once both ends are
 * there, its messages at the busiest link on their way): the slowest
 * member's time and hops; false past NET_HD_LINKS links. */
bool net_hd_direct(const comet_link *l, const net_direct *g, net_hd_part part, net_cost *out);
/* Past NET_HD_LINKS: the power-of-two pattern pow2 plus the fold and
 * unfold as sends to the neighbour, `neighbour` x for S. */
net_cost net_hd_rough(const comet_link *l, net_hd_part part, net_cost pow2, double neighbour);
/* The folded halving-doubling where every step is one message per member
 * through its own port or link: per step the busiest member's bytes,
 * scaled by step(ctx, h, st)'s load and its hops added (NULL: 1 and 1). */
net_cost net_hd_port(const comet_link *l, net_hd_part part,
                     net_cost (*step)(const void *ctx, const net_hd *h, int st), const void *ctx);

/* The closed form of docs/collectives.md on a link for a symmetric
 * collective (rooted ones: collective.c): hops * a + load * x,
 * in-network reduction replacing the algorithm for all-reduce on a
 * topology that can reduce, and for reduce-scatter and all-gather on one
 * whose switches also scatter and multicast (FRED; "In-network
 * reduction"). */
static inline double net_closed_form(comet_collective c, const comet_link *l, double a, double x)
{
    const net_topology *topo = net_topology_of(l->topology);
    if (c == COMET_COLL_ALL_REDUCE && l->in_network_reduction && topo->in_network_all_reduce)
        return net_seconds(topo->in_network_all_reduce(l), a, x);
    if ((c == COMET_COLL_REDUCE_SCATTER || c == COMET_COLL_ALL_GATHER) &&
        l->in_network_reduction && topo->in_network_shard)
        return net_seconds(topo->in_network_shard(l), a, x);
    return net_algorithm_of(l->algorithm)->time[c](topo, l, a, x);
}

/* Out of line and cold (GCC, Clang): paths the strategy search's common
 * case never takes. */
#if defined(__GNUC__) || defined(__clang__)
#define NET_COLD __attribute__((cold, noinline))
#else
#define NET_COLD
#endif

/* Pricing by message size, for a link with a size_model (n >= 2, S > 0,
 * B > 0, a >= 0, x = S/B; docs/collectives.md, "Protocols and measured
 * curves"). NCCL's protocol model (protocol.c): the fastest of LL, LL128
 * and Simple; the model must be one of COMET_PROTOCOLS_NCCL_*. */
comet_coll_cost net_protocol_cost(comet_collective c, const comet_link *l, double a, double x);
/* A measured curve (bus_curve.c): false when the dimension has none for c. */
bool net_bus_curve_cost(comet_collective c, const comet_link *l, double bytes,
                        comet_coll_cost *out);
/* The curve's bus bandwidth at `bytes` (its own group size), n_points >= 1. */
double net_bus_curve_at(const comet_bus_curve *cv, double bytes);

/* ceil(log2 n) for n >= 2, integer arithmetic. */
static inline int net_ceil_log2(int64_t n)
{
    uint64_t v = (uint64_t)(n - 1);
#if defined(__GNUC__) || defined(__clang__)
    return 64 - __builtin_clzll(v);
#else
    int l = 0;
    while (v) {
        v >>= 1;
        l++;
    }
    return l;
#endif
}

#endif
