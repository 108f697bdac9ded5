/* Traffic patterns whose cost is the same on several topologies, so each
 * topology file (topo_*.c) can name them instead of repeating them. Both
 * reach the NPU's full injection bandwidth B. Derivations:
 * docs/collectives.md, "What B means on each topology". */
#include "families.h"

/* n-1 steps, each moving S/n per NPU at the full bandwidth: the ring
 * schedule's pass on every topology here (on a ring as two counter-rotating
 * rings with half the data each, on a fully-connected dimension as
 * concurrent rings over edge-disjoint Hamiltonian cycles, NCCL's channels),
 * and the pairwise exchange where every peer is one hop away. */
net_cost net_full_bandwidth_steps(const comet_link *l)
{
    double n = (double)l->n;
    return (net_cost){n - 1.0, (n - 1.0) / n};
}

/* S/n to every peer at once, every peer one hop away: the switch port
 * carries (n-1)S/n in one step; on a fully-connected dimension each of the
 * n-1 links carries S/n at B/(n-1). The same time either way. */
net_cost net_one_hop_scatter(const comet_link *l)
{
    double n = (double)l->n;
    return (net_cost){1.0, (n - 1.0) / n};
}

/* A broadcast pipelined down chains of n pieces from the root (a reduce
 * toward it), each at the full bandwidth: two counter-rotating chains of
 * S/2 at B/2 a way on a ring, one of S at B through a switch port. The
 * head sends piece q+1 once piece q has arrived, and the last piece then
 * travels the n-1 hops: 2(n-1) steps of a + S/(nB), the ring all-reduce's
 * time; pieces of the next chunk follow on behind once the head has sent
 * its n: n of the 2(n-1) steps. */
bool net_pipelined_chain(const comet_link *l, net_cost *out, double *head)
{
    net_cost pass = net_full_bandwidth_steps(l);
    *out = (net_cost){2.0 * pass.hops, 2.0 * pass.load};
    *head = (double)l->n / (2.0 * pass.hops);
    return true;
}

/* On a ring every message goes min(d, k-d) hops one way, so every link
 * that way carries that many (half each way on a tie, d = k/2); on a line
 * the messages of the first k-d members go d forward and the last d's
 * k-d back, the busiest link carrying min(d, k-d) either way. */
double net_shift_flows(int64_t delta, int64_t k, bool wrap, double *hops)
{
    int64_t d = k > 0 ? ((delta % k) + k) % k : 0, back = k - d;
    if (d == 0) {
        *hops = 0.0;
        return 0.0;
    }
    double near = (double)(d < back ? d : back);
    if (!wrap) {
        *hops = (double)(d > back ? d : back);
        return near;
    }
    *hops = near;
    return d == back ? 0.5 * (double)d : near;
}

/* An inner node of one heap with two children moves S/2 up and S down,
 * and as a leaf of the other S/2 more: 2S, once n >= 5 has one that is
 * not a root (node 1 of the first heap is a leaf of the reversed one);
 * on 3 or 4 the busiest moves 1.5S, on 2 S (its one edge in both). */
double net_double_tree_port_load(int64_t n)
{
    return n <= 2 ? 1.0 : n <= 4 ? 1.5 : 2.0;
}
