/* The fully-connected topology: n-1 direct links per NPU, each B/(n-1).
 * Patterns that spread an NPU's traffic over all its peers reach the full
 * B; a pattern that talks to one partner at a time gets one link, B/(n-1),
 * which is what costs log-step schedules and trees here. No switch, so no
 * in-network reduction. Formulas: docs/collectives.md. */
#include "families.h"

/* Halving-doubling, one partner per step over one link of B/(n-1):
 * L hops, (n-1)(n-1)/n x. */
static net_cost fully_connected_recursive_halving(const comet_link *l)
{
    double n = (double)l->n;
    double Ld = (double)net_ceil_log2(l->n);
    return (net_cost){Ld, (n - 1.0) * (n - 1.0) / n};
}

/* Bruck, S/2 per step over one link: L hops, (n-1) L/2 x. */
static net_cost fully_connected_bruck(const comet_link *l)
{
    double n = (double)l->n;
    double Ld = (double)net_ceil_log2(l->n);
    return (net_cost){Ld, (n - 1.0) * Ld * 0.5};
}

/* Double binary tree: a tree edge carries S/2 each way over one B/(n-1)
 * link, which binds once (n-1)/2 > 2: 2L hops, max(2, (n-1)/2) x. */
static net_cost fully_connected_double_tree(const comet_link *l)
{
    double n = (double)l->n;
    double Ld = (double)net_ceil_log2(l->n);
    double link = 0.5 * (n - 1.0);   /* S/2 per tree edge over one B/(n-1) link */
    return (net_cost){2.0 * Ld, link > 2.0 ? link : 2.0};
}

const net_topology net_topology_fully_connected = {
    .id = COMET_TOPO_FULLY_CONNECTED,
    .ring_pass = net_full_bandwidth_steps,
    .pairwise_exchange = net_full_bandwidth_steps,
    .scatter_to_all = net_one_hop_scatter,
    .recursive_halving = fully_connected_recursive_halving,
    .bruck = fully_connected_bruck,
    .double_tree = fully_connected_double_tree,
    .in_network_all_reduce = NULL,
};
