/* The ring topology (bidirectional): two neighbour links per NPU, B/2 per
 * direction each; messages to non-neighbours are forwarded hop by hop the
 * shorter way, so distance costs both latency and link load. D = floor(n/2)
 * is the diameter, Q = floor(n^2/4) the hops one NPU's messages to all
 * others travel. No switch, so no in-network reduction. Formulas and
 * derivations: docs/collectives.md. */
#include "families.h"

/* Hops waited for by a log-step schedule (halving-doubling, Bruck, the
 * tree's levels) laid on the ring: step i talks to the peer 2^i away, at
 * most n/2 hops by the shorter way. H = sum_{i<L} min(2^i, floor(n/2)). */
static double logstep_hops(int64_t n, int L)
{
    uint64_t half = (uint64_t)(n / 2);
    double hops = 0.0;
    uint64_t d = 1;
    for (int i = 0; i < L; i++, d <<= 1)
        hops += (double)(d < half ? d : half);
    return hops;
}

/* Q = floor(n^2/4) = floor(n/2)*ceil(n/2) = sum_{d=1}^{n-1} min(d, n-d). */
static double quarter_sq(int64_t n)
{
    return (double)(n / 2) * (double)(n - n / 2);
}

/* Pairwise exchange: the blocks are relayed hop by hop the shorter way:
 * n-1 rounds, Q/n x (every NPU's blocks travel Q hops over 2n links of
 * B/2). */
static net_cost ring_pairwise_exchange(const comet_link *l)
{
    double n = (double)l->n;
    return (net_cost){n - 1.0, quarter_sq(l->n) / n};
}

/* All peers at once along shortest paths: the farthest is D hops away,
 * Q/n x. */
static net_cost ring_scatter_to_all(const comet_link *l)
{
    double n = (double)l->n;
    return (net_cost){(double)(l->n / 2), quarter_sq(l->n) / n};
}

/* Halving-doubling in distance-doubling order (big messages on short
 * distances): each step costs x except the last, x/2: H hops, (L - 1/2) x. */
static net_cost ring_recursive_halving(const comet_link *l)
{
    int L = net_ceil_log2(l->n);
    return (net_cost){logstep_hops(l->n, L), ((double)L - 0.5)};
}

/* Bruck: a shift of S/2 by d = 2^i, split over both directions, costs
 * d(n-d)/n x; summed over i < L: [(2^L - 1) n - (4^L - 1)/3] / n x. */
static net_cost ring_bruck(const comet_link *l)
{
    double n = (double)l->n;
    int L = net_ceil_log2(l->n);
    double p2 = (double)((uint64_t)1 << L);
    double sum = ((p2 - 1.0) * n - (p2 * p2 - 1.0) / 3.0) / n;
    return (net_cost){logstep_hops(l->n, L), sum};
}

/* Double binary tree in in-order numbering: level j's edges span 2^(j-1)
 * hops, each directed link carries about half the levels of each tree:
 * 2H hops, max(2, L) x (an approximation; never better than the ring
 * schedule here). */
static net_cost ring_double_tree(const comet_link *l)
{
    int L = net_ceil_log2(l->n);
    double Ld = (double)L;
    return (net_cost){2.0 * logstep_hops(l->n, L), Ld > 2.0 ? Ld : 2.0};
}

/* Rooted collectives. A scatter from the root: its pieces go the shorter
 * way (a tie forward), so floor(n/2) of S/n leave on its fuller link of
 * B/2 and the farthest is D hops away: D a + 2 floor(n/2)/n x (x for an
 * even n, where the all-gather's pass is (n-1)/n x). One way round (a
 * unidirectional ring, or a ring of 2, whose one link is B) all n-1 go on
 * the one link and the last is n-1 hops away. */
static net_cost ring_root_scatter(const comet_link *l)
{
    double n = (double)l->n;
    if (l->n == 2 || (l->shape && l->shape->unidirectional))
        return (net_cost){n - 1.0, (n - 1.0) / n};
    double half = (double)(l->n / 2);
    return (net_cost){half, 2.0 * half / n};
}

/* ---- the fabric: one ring per instance of the dimension ----------------- */

/* A unidirectional ring, or a ring of 2 (both ports on the one neighbour),
 * has one link per NPU at B; a bidirectional ring two, each B/2. */
static bool ring_single(const fab_dim *d)
{
    return d->uni || d->size == 2;
}

static void ring_layout(fab_dim *d)
{
    int64_t per = ring_single(d) ? 1 : 2;
    d->n_links = d->inner * d->outer * d->size * per;
    d->n_switches = 0;
}

static void ring_build(comet_fabric *f, const fab_dim *d)
{
    bool single = ring_single(d);
    double cap = single ? d->bw : 0.5 * d->bw;
    int64_t id = d->link0, k = d->size;
    for (int64_t out = 0; out < d->outer; out++)
        for (int64_t in = 0; in < d->inner; in++)
            for (int64_t p = 0; p < k; p++) {
                int64_t me = fab_npu(d, in, out, p);
                fab_set(f, id++, me, fab_npu(d, in, out, (p + 1) % k), cap, d->lat, d, 0);
                if (!single)
                    fab_set(f, id++, me, fab_npu(d, in, out, (p + k - 1) % k), cap, d->lat, d, 0);
            }
}

/* The shorter way round, hop by hop; on a tie (n/2 away) forward from an
 * even position and back from an odd one, so the two ways carry half each. */
static int ring_route(const comet_fabric *f, const fab_dim *d, int64_t in, int64_t out,
                      int64_t a, int64_t b, uint64_t hash, int32_t *path, int cap)
{
    (void)f;
    (void)hash;
    int64_t k = d->size, fwd = ((b - a) % k + k) % k;
    int64_t base = d->link0 + fab_instance(d, in, out) * k * (ring_single(d) ? 1 : 2);
    bool back = !ring_single(d) && (k - fwd < fwd || (k - fwd == fwd && (a & 1)));
    int64_t hops = back ? k - fwd : fwd;
    if (hops > cap)
        return -1;
    int64_t p = a;
    for (int64_t h = 0; h < hops; h++) {
        path[h] = (int32_t)(ring_single(d) ? base + p : base + 2 * p + (back ? 1 : 0));
        p = back ? (p + k - 1) % k : (p + 1) % k;
    }
    return (int)hops;
}

static const fab_ops ring_fabric = {ring_layout, ring_build, ring_route, NULL, NULL};

const net_topology net_topology_ring = {
    .id = COMET_TOPO_RING,
    .fabric = &ring_fabric,
    .ring_pass = net_full_bandwidth_steps,
    .pairwise_exchange = ring_pairwise_exchange,
    .scatter_to_all = ring_scatter_to_all,
    .recursive_halving = ring_recursive_halving,
    .bruck = ring_bruck,
    .double_tree = ring_double_tree,
    .in_network_all_reduce = NULL,
    .root_scatter = ring_root_scatter,
    .root_chain = net_pipelined_chain,
};
