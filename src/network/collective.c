/* Collective time on one network dimension: the alpha-beta cost of each
 * (algorithm, topology) pair for all-reduce, reduce-scatter, all-gather and
 * all-to-all. These closed forms are the inner loop of the strategy search
 * (millions of calls per second), so they are branch-and-multiply only: no
 * allocation, no libm, integer ceil(log2 n). Every formula, its derivation
 * and its source is in docs/collectives.md; the comments here only name them.
 *
 * Conventions: S = bytes per NPU (full buffer), B = link->bandwidth (bytes/s
 * the NPU can inject into this dimension, efficiency already applied),
 * a = link->latency (seconds per step / per hop), n participants,
 * L = ceil(log2 n), x = S/B. */
#include "comet/network.h"

#include <math.h>

/* ceil(log2 n) for n >= 2. */
static inline int ceil_log2(int64_t n)
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

/* Hops waited for by a log-step schedule (halving-doubling, Bruck) laid on a
 * bidirectional ring: step i talks to the peer 2^i away, at most n/2 hops by
 * the shorter way. Sum_{i<L} min(2^i, floor(n/2)). */
static inline double logstep_ring_hops(int64_t n, int L)
{
    uint64_t half = (uint64_t)(n / 2);
    double hops = 0.0;
    uint64_t d = 1;
    for (int i = 0; i < L; i++, d <<= 1)
        hops += (double)(d < half ? d : half);
    return hops;
}

/* floor(n^2/4) = floor(n/2)*ceil(n/2) = sum_{d=1}^{n-1} min(d, n-d): the
 * hops one NPU's messages to all others travel along shortest paths of a
 * bidirectional ring. */
static inline double quarter_sq(int64_t n)
{
    return (double)(n / 2) * (double)(n - n / 2);
}

/* Ring schedule (Patarasuk & Yuan 2009; Thakur et al. 2005): n-1 neighbour
 * steps of S/n each per reduce-scatter or all-gather pass. On every topology
 * the schedule reaches the NPU's full bandwidth: on a ring topology as two
 * counter-rotating rings with half the data each, on a fully-connected one
 * as concurrent rings over disjoint links (NCCL channels). */
static double ring_time(comet_collective c, comet_topology topo, double n, int64_t ni, double a,
                        double x)
{
    double step = (n - 1.0) * a + (n - 1.0) / n * x;
    switch (c) {
    case COMET_COLL_ALL_REDUCE:
        return 2.0 * step;
    case COMET_COLL_REDUCE_SCATTER:
    case COMET_COLL_ALL_GATHER:
        return step;
    case COMET_COLL_ALL_TO_ALL:
        if (topo == COMET_TOPO_RING) {
            /* blocks relayed hop by hop the shorter way: floor(n^2/4)/n * x */
            return (n - 1.0) * a + quarter_sq(ni) / n * x;
        }
        return step;   /* pairwise exchange: n-1 shifts of S/n */
    default:
        return 0.0;
    }
}

/* Direct: every NPU sends its n-1 blocks of S/n to all peers at once. */
static double direct_time(comet_collective c, comet_topology topo, double n, int64_t ni,
                          double a, double x)
{
    double one;
    if (topo == COMET_TOPO_RING) {
        /* shortest paths on a bidirectional ring, B/2 per direction */
        one = (double)(ni / 2) * a + quarter_sq(ni) / n * x;
    } else {
        one = a + (n - 1.0) / n * x;
    }
    return c == COMET_COLL_ALL_REDUCE ? 2.0 * one : one;
}

/* Halving-doubling (Rabenseifner; Thakur et al. 2005) for reduce-scatter,
 * all-gather and all-reduce; Bruck et al. 1997 for all-to-all (the log-step
 * all-to-all). Non-power-of-two n: L = ceil(log2 n) steps with the
 * power-of-two bandwidth term (optimistic, see docs). */
static double hd_time(comet_collective c, comet_topology topo, double n, int64_t ni, double a,
                      double x)
{
    int L = ceil_log2(ni);
    double Ld = (double)L;
    if (c == COMET_COLL_ALL_TO_ALL) {
        switch (topo) {
        case COMET_TOPO_RING: {
            /* step i shifts S/2 by 2^i, split over both directions */
            double p2 = (double)((uint64_t)1 << L);
            double sum = ((p2 - 1.0) * n - (p2 * p2 - 1.0) / 3.0) / n;
            return logstep_ring_hops(ni, L) * a + sum * x;
        }
        case COMET_TOPO_FULLY_CONNECTED:
            return Ld * a + (n - 1.0) * Ld * 0.5 * x;
        default:
            return Ld * a + Ld * 0.5 * x;
        }
    }
    double one;
    switch (topo) {
    case COMET_TOPO_RING:
        /* distance-doubling order: each step costs x except the last, x/2 */
        one = logstep_ring_hops(ni, L) * a + (Ld - 0.5) * x;
        break;
    case COMET_TOPO_FULLY_CONNECTED:
        /* one partner per step: one link of B/(n-1) */
        one = Ld * a + (n - 1.0) * (n - 1.0) / n * x;
        break;
    default:
        one = Ld * a + (n - 1.0) / n * x;
        break;
    }
    return c == COMET_COLL_ALL_REDUCE ? 2.0 * one : one;
}

/* Double binary tree all-reduce (Sanders, Speck & Traeff 2009; NCCL):
 * reduce up and broadcast down two trees carrying half the data each, fully
 * pipelined; every NPU injects 2S in total. Other collectives: ring. */
static double tree_time(comet_collective c, comet_topology topo, double n, int64_t ni, double a,
                        double x)
{
    if (c != COMET_COLL_ALL_REDUCE)
        return ring_time(c, topo, n, ni, a, x);
    int L = ceil_log2(ni);
    double Ld = (double)L;
    switch (topo) {
    case COMET_TOPO_RING: {
        double bw = Ld > 2.0 ? Ld : 2.0;
        return 2.0 * logstep_ring_hops(ni, L) * a + bw * x;
    }
    case COMET_TOPO_FULLY_CONNECTED: {
        double link = 0.5 * (n - 1.0);   /* S/2 per tree edge over one B/(n-1) link */
        return 2.0 * Ld * a + (link > 2.0 ? link : 2.0) * x;
    }
    default:
        return 2.0 * Ld * a + 2.0 * x;
    }
}

double comet_collective_time_1d(comet_collective c, const comet_link *link, double bytes)
{
    if (!link || link->n <= 1 || !(bytes > 0.0))
        return 0.0;
    if (c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return 0.0;
    if (!(link->bandwidth > 0.0))
        return (double)INFINITY;
    double n = (double)link->n;
    double a = link->latency > 0.0 ? link->latency : 0.0;
    double x = bytes / link->bandwidth;

    /* In-network reduction (SHARP-like switch): send S up once, receive the
     * reduced S once, two link traversals. All-reduce only. */
    if (c == COMET_COLL_ALL_REDUCE && link->in_network_reduction &&
        link->topology == COMET_TOPO_SWITCH)
        return 2.0 * a + x;

    switch (link->algorithm) {
    case COMET_ALGO_DIRECT:
        return direct_time(c, link->topology, n, link->n, a, x);
    case COMET_ALGO_HALVING_DOUBLING:
        return hd_time(c, link->topology, n, link->n, a, x);
    case COMET_ALGO_DOUBLE_BINARY_TREE:
        return tree_time(c, link->topology, n, link->n, a, x);
    case COMET_ALGO_RING:
    default:
        return ring_time(c, link->topology, n, link->n, a, x);
    }
}
