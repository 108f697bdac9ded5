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
    return net_linear(Ld, (n - 1.0) / n);
}

/* Not a power of two: folded (net_hd), each step's busiest pair through
 * its ports: an all-reduce's fold and unfold x each. */
static net_cost switch_folded_halving(const comet_link *l, net_hd_part part)
{
    return net_hd_port(l, part, NULL, NULL);
}

/* Bruck: L steps of S/2 each through the port. */
static net_cost switch_bruck(const comet_link *l)
{
    double Ld = (double)net_ceil_log2(l->n);
    return net_linear(Ld, Ld * 0.5);
}

/* Double binary tree: 2 log2 n hops (up and down), 2S injected at B
 * (NCCL's tree cost model, src/graph/tuning.cc), less on 4 NPUs or fewer,
 * whose busiest port moves 1.5S (S on 2: net_double_tree_port_load). */
static net_cost switch_double_tree(const comet_link *l)
{
    double Ld = (double)net_ceil_log2(l->n);
    return net_linear(2.0 * Ld, net_double_tree_port_load(l->n));
}

/* In-network reduction (SHARP, Graham et al. 2016; NCCL CollNet/NVLS): S up
 * once, the reduced S down once, send and receive overlapped: 2a + x. */
static net_cost switch_in_network_all_reduce(const comet_link *l)
{
    (void)l;
    return net_linear(2.0, 1.0);
}

/* ---- the fabric: one non-blocking switch per instance ------------------ */

/* NPU p's port: link 2p up to the switch, 2p+1 down from it; each half of
 * the one-hop latency. */
static void switch_layout(fab_dim *d)
{
    d->n_switches = d->inner * d->outer;
    d->n_links = d->n_switches * d->size * 2;
}

static void switch_build(comet_fabric *f, const fab_dim *d)
{
    for (int64_t out = 0; out < d->outer; out++)
        for (int64_t in = 0; in < d->inner; in++) {
            int64_t inst = fab_instance(d, in, out), sw = d->node0 + inst;
            for (int64_t p = 0; p < d->size; p++) {
                int64_t id = d->link0 + (inst * d->size + p) * 2, me = fab_npu(d, in, out, p);
                fab_set(f, id, me, sw, d->bw, 0.5 * d->lat, d, 0);
                fab_set(f, id + 1, sw, me, d->bw, 0.5 * d->lat, d, 0);
            }
        }
}

static int switch_route(const comet_fabric *f, const fab_dim *d, int64_t in, int64_t out,
                        int64_t a, int64_t b, uint64_t hash, int32_t *path, int cap)
{
    (void)f;
    (void)hash;
    if (cap < 2)
        return -1;
    int64_t base = d->link0 + fab_instance(d, in, out) * d->size * 2;
    path[0] = (int32_t)(base + 2 * a);
    path[1] = (int32_t)(base + 2 * b + 1);
    return 2;
}

static int32_t switch_port(const fab_dim *d, int64_t in, int64_t out, int64_t pos, bool down)
{
    return (int32_t)(d->link0 + (fab_instance(d, in, out) * d->size + pos) * 2 + (down ? 1 : 0));
}

static const fab_ops switch_fabric = {switch_layout, switch_build, switch_route, switch_port,
                                      NULL};

const net_topology net_topology_switch = {
    .id = COMET_TOPO_SWITCH,
    .fabric = &switch_fabric,
    .ring_pass = net_full_bandwidth_steps,
    .pairwise_exchange = net_pairwise_rounds,
    .scatter_to_all = net_one_hop_scatter,
    .recursive_halving = switch_recursive_halving,
    .folded_halving = switch_folded_halving,
    .bruck = switch_bruck,
    .double_tree = switch_double_tree,
    .in_network_all_reduce = switch_in_network_all_reduce,
    /* a scatter: (n-1)/n S through the root's port, one hop; a broadcast
     * a chain: the scatter and the all-gather would take n steps for the
     * same bandwidth, but the next chunk's scatter, n-1 connections
     * through the root's port, would starve the ring's one behind it */
    .root_scatter = net_one_hop_scatter,
    .root_chain = net_pipelined_chain,
};
