/* Clos networks: a fat tree and a rail-optimized network, both 2 or 3
 * tiers of radix-port switches with an oversubscription (down:up ports)
 * per tier (comet_clos_ports_of). Every NPU has one port of B. A fat tree
 * fills its leaves with the pod's NPUs in order (a node's NICs on one
 * leaf); a rail network puts NIC k of every node on rail leaf k, so a
 * group along the dimension (same inner position) shares its leaves with
 * no other group. All the inner positions run a phase at once (a training
 * step's groups do), so a leaf carries the traffic of every group on it:
 * a pattern's load is the larger of the NPU port's and each tier's
 * uplinks' (what leaves a leaf or pod over its up ports), flows spread
 * evenly over equal paths (routing: spray; ECMP's hash collisions are the
 * flow simulation's, docs/fabric.md). */
#include "families.h"

/* How a group of n sits on the tree: c[t] of its members share one leaf
 * (t 0) or pod (t 1), g[t] groups share it, up[t] uplinks leave it. */
typedef struct clos_view {
    int tiers;
    double n, c[2], g[2], up[2];
} clos_view;

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

static clos_view clos_view_of(const comet_link *l, bool rail)
{
    comet_net_shape fallback = {0};
    fallback.radix = 64;
    comet_clos_ports p;
    comet_clos_ports_of(l->shape ? l->shape : &fallback, &p);
    clos_view v = {p.tiers, (double)l->n, {1, 1}, {1, 1}, {1, 1}};
    double inner = l->inner > 1 ? (double)l->inner : 1.0;
    double held[2] = {(double)p.down[0], (double)p.down[0] * (double)p.down[1]};
    v.up[0] = (double)p.up[0];
    v.up[1] = (double)p.up[0] * (double)p.up[1];
    for (int t = 0; t < 2; t++) {
        if (rail) {          /* one rail per leaf; a pod's leaves are one rail's */
            v.c[t] = dmin(v.n, held[t]);
            v.g[t] = 1.0;
        } else if (inner >= held[t]) {
            v.c[t] = 1.0;
            v.g[t] = held[t];
        } else {
            v.c[t] = dmin(v.n, (double)(int64_t)(held[t] / inner));
            v.g[t] = inner;
        }
    }
    return v;
}

/* The factor a tier's uplinks slow `flows` concurrent NPU-rate flows by. */
static double tier_factor(const clos_view *v, int t, double flows)
{
    if (t >= v->tiers - 1)
        return 1.0;
    return dmax(1.0, flows / v->up[t]);
}

/* Ring schedule: each group's ring leaves a leaf (pod) once when it has
 * members elsewhere, so g flows share the up ports. */
static net_cost clos_ring_pass(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double f = 1.0;
    for (int t = 0; t < 2; t++)
        if (v.c[t] < v.n)
            f = dmax(f, tier_factor(&v, t, v.g[t]));
    return (net_cost){v.n - 1.0, (v.n - 1.0) / v.n * f};
}

/* Every member sends (n - c)/n of its buffer off its leaf (pod). */
static net_cost clos_scatter(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double load = (v.n - 1.0) / v.n, hops = 1.0;
    for (int t = 0; t < 2; t++)
        if (v.c[t] < v.n && t < v.tiers - 1) {
            load = dmax(load, v.g[t] * v.c[t] * (v.n - v.c[t]) / (v.n * v.up[t]));
            hops = 1.0;
        }
    return (net_cost){hops, load};
}

/* Pairwise exchange: the scatter's blocks one peer per round, pipelined
 * (the same approximation as on a grid). */
static net_cost clos_pairwise(const comet_link *l, bool rail)
{
    net_cost c = clos_scatter(l, rail);
    c.hops = (double)(l->n - 1);
    return c;
}

/* Step s's partner is 2^s away: off the leaf (pod) once 2^s >= c, when
 * every member on it sends its S/2^(s+1) up. */
static double logstep_factor(const clos_view *v, double d)
{
    double f = 1.0;
    for (int t = 0; t < 2; t++)
        if (d >= v->c[t])
            f = dmax(f, tier_factor(v, t, v->g[t] * v->c[t]));
    return f;
}

static net_cost clos_halving(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    int L = net_ceil_log2(l->n);
    double load = 0.0, part = 0.5;
    for (int s = 0; s < L; s++, part *= 0.5)
        load += part * logstep_factor(&v, (double)((int64_t)1 << s));
    return (net_cost){(double)L, load};
}

static net_cost clos_bruck(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    int L = net_ceil_log2(l->n);
    double load = 0.0;
    for (int s = 0; s < L; s++)
        load += 0.5 * logstep_factor(&v, (double)((int64_t)1 << s));
    return (net_cost){(double)L, load};
}

/* Double binary tree: a switch's 2S through the port, each tree edge off
 * a leaf carrying it at the tier's share (its worst level). */
static net_cost clos_double_tree(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double Ld = (double)net_ceil_log2(l->n);
    return (net_cost){2.0 * Ld, 2.0 * logstep_factor(&v, v.n)};
}

/* In-network reduction (SHARP): each group reduces up one tree, one stream
 * of S per group leaving a leaf (pod), and the result comes back down. */
static net_cost clos_in_network(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double f = 1.0;
    for (int t = 0; t < 2; t++)
        if (v.c[t] < v.n)
            f = dmax(f, tier_factor(&v, t, v.g[t]));
    return (net_cost){2.0 * (double)v.tiers, f};
}

static net_cost fat_ring_pass(const comet_link *l) { return clos_ring_pass(l, false); }
static net_cost fat_scatter(const comet_link *l) { return clos_scatter(l, false); }
static net_cost fat_pairwise(const comet_link *l) { return clos_pairwise(l, false); }
static net_cost fat_halving(const comet_link *l) { return clos_halving(l, false); }
static net_cost fat_bruck(const comet_link *l) { return clos_bruck(l, false); }
static net_cost fat_double_tree(const comet_link *l) { return clos_double_tree(l, false); }
static net_cost fat_in_network(const comet_link *l) { return clos_in_network(l, false); }
static net_cost rail_ring_pass(const comet_link *l) { return clos_ring_pass(l, true); }
static net_cost rail_scatter(const comet_link *l) { return clos_scatter(l, true); }
static net_cost rail_pairwise(const comet_link *l) { return clos_pairwise(l, true); }
static net_cost rail_halving(const comet_link *l) { return clos_halving(l, true); }
static net_cost rail_bruck(const comet_link *l) { return clos_bruck(l, true); }
static net_cost rail_double_tree(const comet_link *l) { return clos_double_tree(l, true); }
static net_cost rail_in_network(const comet_link *l) { return clos_in_network(l, true); }

const net_topology net_topology_fat_tree = {
    .id = COMET_TOPO_FAT_TREE,
    .ring_pass = fat_ring_pass,
    .pairwise_exchange = fat_pairwise,
    .scatter_to_all = fat_scatter,
    .recursive_halving = fat_halving,
    .bruck = fat_bruck,
    .double_tree = fat_double_tree,
    .in_network_all_reduce = fat_in_network,
};

const net_topology net_topology_rail = {
    .id = COMET_TOPO_RAIL,
    .ring_pass = rail_ring_pass,
    .pairwise_exchange = rail_pairwise,
    .scatter_to_all = rail_scatter,
    .recursive_halving = rail_halving,
    .bruck = rail_bruck,
    .double_tree = rail_double_tree,
    .in_network_all_reduce = rail_in_network,
};
