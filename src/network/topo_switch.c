/* The switch topology: one port of bandwidth B per NPU, every pair of NPUs
 * one hop apart, concurrent messages of one NPU share its port. Partners of
 * a log-step schedule are one hop away and get the whole port, and the
 * switch can reduce in the network. Formulas: docs/collectives.md. */
#include "families.h"

/* Halving-doubling on a switch: L steps, (n-1)/n x in all (S/2 + S/4 +
 * ... + S/n through one port). */
static net_cost switch_recursive_halving(const comet_link *l)
{
    double n = (double)l->n;
    double Ld = (double)net_ceil_log2(l->n);
    return (net_cost){Ld, (n - 1.0) / n};
}

/* Bruck: L steps of S/2 each through the port. */
static net_cost switch_bruck(const comet_link *l)
{
    double Ld = (double)net_ceil_log2(l->n);
    return (net_cost){Ld, Ld * 0.5};
}

/* Double binary tree: 2 log2 n hops (up and down), 2S injected at B
 * (NCCL's tree cost model, src/graph/tuning.cc). */
static net_cost switch_double_tree(const comet_link *l)
{
    double Ld = (double)net_ceil_log2(l->n);
    return (net_cost){2.0 * Ld, 2.0};
}

/* In-network reduction (SHARP, Graham et al. 2016; NCCL CollNet/NVLS): S up
 * once, the reduced S down once, send and receive overlapped: 2a + x. */
static net_cost switch_in_network_all_reduce(const comet_link *l)
{
    (void)l;
    return (net_cost){2.0, 1.0};
}

const net_topology net_topology_switch = {
    .id = COMET_TOPO_SWITCH,
    .ring_pass = net_full_bandwidth_steps,
    .pairwise_exchange = net_full_bandwidth_steps,
    .scatter_to_all = net_one_hop_scatter,
    .recursive_halving = switch_recursive_halving,
    .bruck = switch_bruck,
    .double_tree = switch_double_tree,
    .in_network_all_reduce = switch_in_network_all_reduce,
};
