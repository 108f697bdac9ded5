/* The ring topology (bidirectional): two neighbour links per NPU, B/2 per
 * direction each; messages to non-neighbours are forwarded hop by hop the
 * shorter way, so distance costs both latency and link load. D = floor(n/2)
 * is the diameter, Q = floor(n^2/4) the hops one NPU's messages to all
 * others travel. No switch, so no in-network reduction.
 *
 * A group need not be the whole ring: a training step's groups tile it,
 * n members `spacing` (s) places apart, every group at once. Where the
 * group closes its own ring (n s = the ring's size) s groups interleave
 * and every hop crosses s links: each pattern costs s times its cost on a
 * ring of n. Where it does not (n s < size, a tensor group of 4 on a ring
 * of 8), the group is a line: its ring closes back over the line's links,
 * as a mesh line's (topo_torus.c), again times s. On a unidirectional ring
 * every message goes forward, however far that is: a pattern's per-link
 * load is the forward distance its messages travel, summed, over n.
 * Formulas and derivations: docs/collectives.md, docs/fabric.md. */
#include "families.h"

#include <math.h>

/* How a group sits on the ring: n members s places apart on a ring of
 * `size`, and whether it closes its own ring. */
typedef struct ring_group {
    double n, s, size;
    bool closed, uni;
} ring_group;

static ring_group group_of(const comet_link *l)
{
    int64_t s = l->spacing > 1 ? l->spacing : 1;
    int64_t size = l->size > l->n * s ? l->size : l->n * s;
    return (ring_group){(double)l->n, (double)s, (double)size, l->n * s >= size,
                        l->shape && l->shape->unidirectional && size > 2};
}

/* The group as a mesh line of its own n members, side by side. */
static comet_link as_line(const comet_link *l)
{
    comet_link line = *l;
    line.topology = COMET_TOPO_MESH;
    line.shape = NULL;
    line.size = l->n;
    line.spacing = 1;
    return line;
}

/* Pairs half the ring apart, s of them interleaved (n = 2, closed): each
 * member's messages go the s hops either way, a tie, which the fabric
 * breaks by the sender's parity (even NPUs forward); with s odd a link
 * then carries ceil(s/2) of the s where an even split gives s/2. The
 * factor over that split. */
static double pair_ties(const ring_group *g)
{
    bool odd = fmod(g->s, 2.0) == 1.0;
    return g->closed && g->n == 2.0 && g->s > 1.0 && odd ? (g->s + 1.0) / g->s : 1.0;
}

/* The whole-ring pattern `on_ring` as the group's: times s on a closed
 * group (and pair_ties), a mesh line's times s on a partial one. */
static net_cost placed(const comet_link *l, const ring_group *g, net_pattern_fn on_ring,
                       net_pattern_fn on_line)
{
    net_cost c;
    if (g->closed) {
        c = on_ring(l);
    } else {
        comet_link line = as_line(l);
        c = on_line(&line);
    }
    return net_cost_scaled(c, g->s, g->s * pair_ties(g));
}

/* ---- one way round: every message forward ---------------------------------- */

/* Forward distance from member i to member j (i != j) of a group. */
static double forward(const ring_group *g, double i, double j)
{
    return j > i ? (j - i) * g->s : g->size - (i - j) * g->s;
}

/* Every member sends to the member k on (mod n): the messages' forward
 * distances sum to k size, whatever the placement; the farthest is
 * size - (n-k) s away (k s on a closed group). */
static double shift_hops(const ring_group *g, double k)
{
    double a = forward(g, 0.0, k), b = forward(g, g->n - k, 0.0);
    return a > b ? a : b;
}

/* n-1 steps of S/n to the next member: the group's messages go once round
 * the ring, size/n groups' worth on every link. */
static net_cost uni_pass(const ring_group *g)
{
    double n = g->n;
    return net_linear((n - 1.0) * shift_hops(g, 1.0), g->size / n * (n - 1.0) / n);
}

/* Every member S/n to every other (pairwise rounds or all at once): the
 * shifts k = 1..n-1 sum to size n (n-1)/2 hops of S/n over n links. Shift
 * k's farthest message goes size - (n-k) s (k s on a closed group, the
 * same), so the rounds wait (n-1) size - s n (n-1)/2 hops, all at once
 * size - s (closed forms: n may be large). */
static net_cost uni_all_pairs(const ring_group *g, bool rounds)
{
    double n = g->n;
    double hops = rounds ? (n - 1.0) * g->size - g->s * n * (n - 1.0) / 2.0 : g->size - g->s;
    if (rounds && g->closed) {
        /* the rounds go two at a time (the shifts d and n-d), each once
         * all but one of those before have arrived: in latency alone their
         * chain is ceil(n(n-1)/4) hops (n even; (n^2-1)/4 odd) where one
         * round after another is n(n-1)/2. The transfers then add in
         * full: conservative where they overlap the latencies (the flows
         * +2.8 % at one chunk, +21 % at 16 chunks and 5 us on 8) */
        double chain = fmod(n, 2.0) == 0.0 ? ceil(n * (n - 1.0) / 4.0) : (n * n - 1.0) / 4.0;
        hops = chain * g->s;
    }
    net_cost c = net_linear(hops, g->size * (n - 1.0) / (2.0 * n));
    /* all at once on a closed group: a link takes s d pieces of 1/n x
     * from d s hops, d = 1..n-1 */
    return rounds || !g->closed ? c : net_spread(c, g->s, g->s, g->s / n, g->s / n);
}

/* Recursive halving: in step i each pair of partners 2^i apart exchanges
 * S/2^(i+1), the two ways summing to size: size/2 S/2^(i+1) a link. */
static net_cost uni_halving(const ring_group *g, int L)
{
    double hops = 0.0, load = 0.0, piece = 0.5;
    for (int i = 0; i < L; i++, piece *= 0.5) {
        double d = (double)((int64_t)1 << i) * g->s, far = g->size - d;
        hops += far > d ? far : d;
        load += 0.5 * g->size * piece;
    }
    return net_linear(hops, load);
}

/* Bruck: step i ships S/2 to the member 2^i on, forward distances summing
 * to 2^i size. */
static net_cost uni_bruck(const ring_group *g, int L)
{
    double hops = 0.0, load = 0.0;
    for (int i = 0; i < L; i++) {
        double k = (double)((int64_t)1 << i);
        hops += shift_hops(g, k < g->n ? k : g->n - 1.0);
        load += 0.5 * k * g->size / g->n;
    }
    return net_linear(hops, load);
}

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

/* Pairwise exchange: the blocks are relayed hop by hop the shorter way,
 * Q/n x (every NPU's blocks travel Q hops over 2n links of B/2). The
 * rounds go by distance, both ways at once (the shifts d and n-d, one
 * way each), each pair once the pair before has arrived, so they wait
 * 1 + 2 + ... + D hops, not one a round: 10 on 8, 36 on 16 (n-1 before:
 * the flows 11 % over the estimate at 16 chunks and 5 us on 8). */
static net_cost whole_pairwise_exchange(const comet_link *l)
{
    double n = (double)l->n, d = (double)(l->n / 2);
    return net_linear(d * (d + 1.0) / 2.0, quarter_sq(l->n) / n);
}

/* All peers at once along shortest paths: the farthest is D hops away,
 * Q/n x; a link takes d pieces of 2/n x from d hops (d < n/2; of the ties
 * at n/2, n/4 each way), so the latencies spread (net_spread), one piece
 * more each hop farther, which leaves the n/4 of the ties last. */
static net_cost whole_scatter_to_all(const comet_link *l)
{
    double n = (double)l->n;
    net_cost c = net_linear((double)(l->n / 2), quarter_sq(l->n) / n);
    return net_spread(c, 1.0, 1.0, 2.0 / n, 2.0 / n);
}

/* Halving-doubling in distance-doubling order (big messages on short
 * distances): each step costs x except the last, x/2: H hops, (L - 1/2) x. */
static net_cost whole_recursive_halving(const comet_link *l)
{
    int L = net_ceil_log2(l->n);
    return net_linear(logstep_hops(l->n, L), ((double)L - 0.5));
}

/* Bruck: step i ships S/2 to the member d = 2^i on, the shorter way (the
 * fabric's routes; a tie splits): min(d, n-d) messages a link that way,
 * d/2 each way on a tie, at B/2: x each (5 x on 8, where splitting every
 * shift over both ways would take 4.375 x). */
static net_cost whole_bruck(const comet_link *l)
{
    int L = net_ceil_log2(l->n);
    double hops = 0.0, load = 0.0;
    for (int i = 0; i < L; i++) {
        double h;
        load += net_shift_flows((int64_t)1 << i, l->n, true, &h);
        hops += h;
    }
    return net_linear(hops, load);
}

/* Double binary tree, roughly (rings past NET_TREE_LINKS links): level
 * j's edges span 2^(j-1) hops, each directed link carries about half the
 * levels of each tree: 2H hops, max(2, L) x. */
static net_cost whole_double_tree(const comet_link *l)
{
    int L = net_ceil_log2(l->n);
    double Ld = (double)L;
    return net_linear(2.0 * logstep_hops(l->n, L), Ld > 2.0 ? Ld : 2.0);
}

/* The patterns as the group sits (group_of): the whole ring's above on a
 * ring of n, else placed or one way round. */
static net_cost ring_pass(const comet_link *l)
{
    ring_group g = group_of(l);
    if (g.uni)
        return uni_pass(&g);
    if (g.closed && g.s == 1.0)
        return net_full_bandwidth_steps(l);
    return placed(l, &g, net_full_bandwidth_steps, net_topology_mesh.ring_pass);
}

static net_cost ring_pairwise_exchange(const comet_link *l)
{
    ring_group g = group_of(l);
    if (g.uni)
        return uni_all_pairs(&g, true);
    return placed(l, &g, whole_pairwise_exchange, net_topology_mesh.pairwise_exchange);
}

static net_cost ring_scatter_to_all(const comet_link *l)
{
    ring_group g = group_of(l);
    if (g.uni)
        return uni_all_pairs(&g, false);
    return placed(l, &g, whole_scatter_to_all, net_topology_mesh.scatter_to_all);
}

static net_cost ring_recursive_halving(const comet_link *l)
{
    ring_group g = group_of(l);
    if (g.uni)
        return uni_halving(&g, net_ceil_log2(l->n));
    return placed(l, &g, whole_recursive_halving, net_topology_mesh.recursive_halving);
}

/* Not a power of two: folded (net_hd), every message routed as the
 * flows route it, every group at once; past its links roughly. */
static double ring_shift_load(const comet_link *l, int64_t stride);
static net_cost ring_folded_halving(const comet_link *l, net_hd_part part)
{
    ring_group g = group_of(l);
    net_direct d = {1, {(int64_t)g.size, 0, 0}, {true, false, false}, g.uni};
    net_cost c;
    if (net_hd_direct(l, &d, part, &c))
        return c;
    return net_hd_rough(l, part, ring_recursive_halving(l), ring_shift_load(l, 1));
}

/* The pass's busiest link over all its steps, each message routed as
 * the flows route it (a step 2^i away loads the links between a pair's
 * ends, the first step only every other link). */
static double ring_halving_link_total(const comet_link *l)
{
    ring_group g = group_of(l);
    net_direct d = {1, {(int64_t)g.size, 0, 0}, {true, false, false}, g.uni};
    double total;
    return net_hd_link_total(l, &d, &total) ? total : 0.0;
}

static net_cost ring_bruck(const comet_link *l)
{
    ring_group g = group_of(l);
    if (g.uni)
        return uni_bruck(&g, net_ceil_log2(l->n));
    return placed(l, &g, whole_bruck, net_topology_mesh.bruck);
}

/* The trees' edges routed as the flows route them, every group at once
 * (net_direct_double_tree: the ring one axis of `size`, one way round
 * too); past its links the approximation above, as the group sits. */
static net_cost ring_double_tree(const comet_link *l)
{
    ring_group g = group_of(l);
    net_direct d = {1, {(int64_t)g.size, 0, 0}, {true, false, false}, g.uni};
    net_cost c;
    if (net_direct_double_tree(l, &d, &c))
        return c;
    return placed(l, &g, whole_double_tree, net_topology_mesh.double_tree);
}

/* Rooted collectives. A scatter from the root: its pieces go the shorter
 * way (a tie forward), so floor(n/2) of S/n leave on its fuller link of
 * B/2 and the farthest is D hops away: D a + 2 floor(n/2)/n x (x for an
 * even n, where the all-gather's pass is (n-1)/n x). One way round (a
 * unidirectional ring, or a ring of 2, whose one link is B) all n-1 go on
 * the one link and the last is n-1 hops away. */
static net_cost whole_root_scatter(const comet_link *l)
{
    double n = (double)l->n;
    /* one piece from each distance on the root's link */
    if (l->n == 2 || (l->shape && l->shape->unidirectional))
        return net_spread(net_linear(n - 1.0, (n - 1.0) / n), 1.0, 1.0, 1.0 / n, 0.0);
    double half = (double)(l->n / 2);
    return net_spread(net_linear(half, 2.0 * half / n), 1.0, 1.0, 2.0 / n, 0.0);
}

/* As the group sits (group_of): placed, a line's from its end; one way
 * round the root's link carries its own pieces and those of the s groups
 * interleaved with it. */
static net_cost ring_root_scatter(const comet_link *l)
{
    ring_group g = group_of(l);
    if (g.uni) {
        net_cost c = whole_root_scatter(l);
        if (g.s > 1.0)
            c = net_linear(c.hops, c.load); /* other groups' pieces pass between */
        return net_cost_scaled(c, g.s, g.s);
    }
    if (g.closed && g.s > 1.0 && l->n > 2) {
        double pieces = net_interleaved_scatter_pieces(l->n, (int64_t)g.s);
        return net_linear((double)(l->n / 2) * g.s, 2.0 * pieces / g.n);
    }
    return placed(l, &g, whole_root_scatter, net_topology_mesh.root_scatter);
}

/* A gather one way round: every member's piece goes forward to its root,
 * round the ring past the other groups, so one link carries every group's
 * pieces but one: size/n (n-1)/n x. */
static net_cost ring_root_gather(const comet_link *l)
{
    ring_group g = group_of(l);
    if (g.uni && g.closed && g.s == 1.0)
        return whole_root_scatter(l); /* the scatter's mirror */
    if (g.uni)
        return net_linear(g.size - g.s, g.size / g.n * (g.n - 1.0) / g.n);
    if (g.closed)
        return ring_root_scatter(l); /* the scatter's mirror, the same links */
    return placed(l, &g, whole_root_scatter, net_topology_mesh.root_gather);
}

/* The broadcast's chains: two counter-rotating ones on a ring of its own,
 * a mesh line's one chain of 2n pieces on a line, times s (*head, the
 * share of the steps the head sends in, is the chain's own). */
static bool ring_root_chain(const comet_link *l, net_cost *out, double *head)
{
    ring_group g = group_of(l);
    net_cost c;
    if (g.closed || g.uni) {
        net_pipelined_chain(l, &c, head);
    } else {
        comet_link line = as_line(l);
        if (!net_topology_mesh.root_chain(&line, &c, head))
            return false;
    }
    *out = net_linear(c.hops * g.s, c.load * g.s * (g.uni ? 1.0 : pair_ties(&g)));
    return true;
}

/* A reduce's chain on part of a one-way ring: member 1 to n-1 forward,
 * then from the last back round to the root past the other groups, so
 * every group's chain crosses every link once, size/n chains a link
 * (side by side, where the broadcast's cross none of the others'), and
 * the last piece goes size - s links where the broadcast's goes (n-1) s.
 * The chains' n pieces stream through each link at its share; only the
 * fill, the n-2 steps before a link's streams all run, goes at the
 * interleaved groups' s: size/n + s (n-2)/n x (the flows' time at 2 to
 * 8 of a ring of 8 or 16, side by side or spaced; a closed group's
 * chains, size = n s, the broadcast's 2 s (n-1)/n). The next chunk's
 * pieces follow once a link has passed this chunk's: the head holds the
 * chain for the streaming part, (size/n) / (size/n + fill). */
static bool ring_root_reduce_chain(const comet_link *l, net_cost *out, double *head)
{
    ring_group g = group_of(l);
    if (!g.uni || g.closed)
        return ring_root_chain(l, out, head);
    net_cost c;
    net_pipelined_chain(l, &c, head);
    double fill = g.s * (g.n - 2.0) / g.n;
    *out = net_linear(c.hops * g.s + (g.size - g.n * g.s), g.size / g.n + fill);
    *head = g.size / g.n / (g.size / g.n + fill);
    return true;
}

/* Pipeline sends: every NPU of a stage sends to its peer `stride` places
 * on, all at once, the shorter way (a unidirectional ring: forward): the
 * busiest link carries net_shift_flows of them (stride, its last sender's
 * link crossed by all), at B/2 a link (B one way round, or on a ring of
 * 2): a lone send to the next NPU already takes twice a send at B. */
static double ring_shift_load(const comet_link *l, int64_t stride)
{
    int64_t size = l->size > l->n ? l->size : l->n;
    bool uni = l->shape && l->shape->unidirectional;
    if (uni || size == 2)
        return uni ? (double)(stride % size) : 1.0;
    double hops;
    return 2.0 * net_shift_flows(stride, size, true, &hops);
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
    .ring_pass = ring_pass,
    .pairwise_exchange = ring_pairwise_exchange,
    .scatter_to_all = ring_scatter_to_all,
    .recursive_halving = ring_recursive_halving,
    .folded_halving = ring_folded_halving,
    .halving_link_total = ring_halving_link_total,
    .bruck = ring_bruck,
    .double_tree = ring_double_tree,
    .in_network_all_reduce = NULL,
    .root_scatter = ring_root_scatter,
    .root_gather = ring_root_gather,
    .root_chain = ring_root_chain,
    .root_chain_toward = ring_root_reduce_chain,
    .shift_load = ring_shift_load,
    .prices_spacing = true,
};
