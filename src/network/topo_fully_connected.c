/* The fully-connected topology: N-1 direct links per NPU, each B/(N-1),
 * N the dimension's NPUs. Patterns that spread an NPU's traffic over all
 * its peers reach the full B; a pattern that talks to one partner at a
 * time gets one link, B/(N-1), which is what costs log-step schedules and
 * trees here; a group of n < N reaches n-1 links, (n-1)/(N-1) of B (two
 * NPUs of eight, one link: B/7). No switch, so no in-network reduction.
 * Formulas: docs/collectives.md. */
#include "families.h"

/* How much slower a group's links are than a whole dimension's of its
 * size: (N-1)/(n-1), 1 for the whole dimension. */
static double part_links(const comet_link *l)
{
    int64_t size = l->size > l->n ? l->size : l->n;
    return l->n > 1 ? (double)(size - 1) / (double)(l->n - 1) : 1.0;
}

static net_cost on_part(net_cost c, const comet_link *l)
{
    return net_linear(c.hops, c.load * part_links(l));
}

/* Ring passes and pairwise rounds spread over the group's n-1 links;
 * S/n to every peer at once the same. */
static net_cost fully_connected_steps(const comet_link *l)
{
    return on_part(net_full_bandwidth_steps(l), l);
}

static net_cost fully_connected_scatter(const comet_link *l)
{
    return on_part(net_one_hop_scatter(l), l);
}

/* Halving-doubling, one partner per step over one link of B/(N-1):
 * L hops, (n-1)(N-1)/n x. */
static net_cost fully_connected_recursive_halving(const comet_link *l)
{
    double n = (double)l->n;
    double Ld = (double)net_ceil_log2(l->n);
    return on_part(net_linear(Ld, (n - 1.0) * (n - 1.0) / n), l);
}

/* Each step's partner is over a link of its own, so the busiest link
 * carries the first step's S/2 alone: (N-1)/2 x. */
static double fully_connected_halving_link_total(const comet_link *l)
{
    return ((double)l->n - 1.0) * 0.5 * part_links(l);
}

/* Not a power of two: folded (net_hd), every message on its own link of
 * B/(n-1). */
static net_cost one_link(const void *ctx, const net_hd *h, int st)
{
    (void)st;
    return net_linear(1.0, ((double)h->n - 1.0) * part_links(ctx));
}

static net_cost fully_connected_folded_halving(const comet_link *l, net_hd_part part)
{
    return net_hd_port(l, part, one_link, l);
}

/* Bruck, S/2 per step over one link: L hops, (N-1) L/2 x. */
static net_cost fully_connected_bruck(const comet_link *l)
{
    double n = (double)l->n;
    double Ld = (double)net_ceil_log2(l->n);
    return on_part(net_linear(Ld, (n - 1.0) * Ld * 0.5), l);
}

/* Double binary tree: a tree edge carries S/2 each way over one B/(N-1)
 * link, and some pair of NPUs is an edge of both heaps (fabric_coll.c's
 * trees: for every n), whose link carries S each way: 2L hops, (N-1) x. */
static net_cost fully_connected_double_tree(const comet_link *l)
{
    double n = (double)l->n;
    double Ld = (double)net_ceil_log2(l->n);
    return on_part(net_linear(2.0 * Ld, n - 1.0), l);
}

/* ---- the fabric: a direct link between every pair of each instance ----- */

/* Pipeline sends: each on its own link to the peer, B/(n-1) of the NPU's
 * bandwidth: n-1 times a send at B. */
static double fully_connected_shift_load(const comet_link *l, int64_t stride)
{
    (void)stride;
    int64_t size = l->size > l->n ? l->size : l->n;
    return (double)(size - 1);
}

static void fully_connected_layout(fab_dim *d)
{
    d->n_links = d->inner * d->outer * d->size * (d->size - 1);
    d->n_switches = 0;
}

static int64_t fully_connected_link(const fab_dim *d, int64_t inst, int64_t a, int64_t b)
{
    return d->link0 + (inst * d->size + a) * (d->size - 1) + (b < a ? b : b - 1);
}

static void fully_connected_build(comet_fabric *f, const fab_dim *d)
{
    double cap = d->bw / (double)(d->size - 1);
    for (int64_t out = 0; out < d->outer; out++)
        for (int64_t in = 0; in < d->inner; in++)
            for (int64_t a = 0; a < d->size; a++)
                for (int64_t b = 0; b < d->size; b++)
                    if (a != b)
                        fab_set(f, fully_connected_link(d, fab_instance(d, in, out), a, b),
                                fab_npu(d, in, out, a), fab_npu(d, in, out, b), cap, d->lat, d,
                                0);
}

static int fully_connected_route(const comet_fabric *f, const fab_dim *d, int64_t in,
                                 int64_t out, int64_t a, int64_t b, uint64_t hash,
                                 int32_t *path, int cap)
{
    (void)f;
    (void)hash;
    if (cap < 1)
        return -1;
    path[0] = (int32_t)fully_connected_link(d, fab_instance(d, in, out), a, b);
    return 1;
}

static const fab_ops fully_connected_fabric = {fully_connected_layout, fully_connected_build,
                                               fully_connected_route, NULL, NULL};

const net_topology net_topology_fully_connected = {
    .id = COMET_TOPO_FULLY_CONNECTED,
    .fabric = &fully_connected_fabric,
    .ring_pass = fully_connected_steps,
    /* nothing orders the rounds on a direct network: every block is
     * posted at once, one hop */
    .pairwise_exchange = fully_connected_scatter,
    .scatter_to_all = fully_connected_scatter,
    .recursive_halving = fully_connected_recursive_halving,
    .folded_halving = fully_connected_folded_halving,
    .halving_link_total = fully_connected_halving_link_total,
    .bruck = fully_connected_bruck,
    .double_tree = fully_connected_double_tree,
    .in_network_all_reduce = NULL,
    /* a scatter: S/n on each of the root's n-1 links of B/(N-1),
     * (N-1)/n x; a broadcast that and the all-gather (a chain would use
     * one link) */
    .root_scatter = fully_connected_scatter,
    .shift_load = fully_connected_shift_load,
};
