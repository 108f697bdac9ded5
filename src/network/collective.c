/* Collective time on one network dimension: the alpha-beta cost of
 * all-reduce, reduce-scatter, all-gather and all-to-all for the dimension's
 * (algorithm, topology) pair. The algorithm (algo_*.c) says which traffic
 * patterns a collective is made of, the topology (topo_*.c) what each
 * pattern costs; the registry (registry.c) maps the enums to them
 * (families.h). These closed forms are the inner loop of the strategy
 * search (millions of calls per second), so they are branch-and-multiply
 * only: no allocation, no libm, integer ceil(log2 n). Every formula, its
 * derivation and its source is in docs/collectives.md.
 *
 * Conventions: S = bytes per NPU (full buffer), B = link->bandwidth (bytes/s
 * the NPU can inject into this dimension, efficiency already applied),
 * a = link->latency (seconds per step / per hop), n participants,
 * L = ceil(log2 n), x = S/B. */
#include "families.h"

#include <math.h>

double comet_collective_time_1d(comet_collective c, const comet_link *link, double bytes)
{
    if (!link || link->n <= 1 || !(bytes > 0.0))
        return 0.0;
    if (c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return 0.0;
    if (!(link->bandwidth > 0.0))
        return (double)INFINITY;
    double a = link->latency > 0.0 ? link->latency : 0.0;
    double x = bytes / link->bandwidth;
    const net_topology *topo = net_topology_of(link->topology);

    /* In-network reduction replaces the algorithm for all-reduce only, on
     * a topology that can reduce (docs/collectives.md, "In-network
     * reduction"). */
    if (c == COMET_COLL_ALL_REDUCE && link->in_network_reduction && topo->in_network_all_reduce)
        return net_seconds(topo->in_network_all_reduce(link), a, x);

    return net_algorithm_of(link->algorithm)->time[c](topo, link, a, x);
}

double comet_collective_messages(comet_collective c, const comet_link *link)
{
    if (!link || link->n <= 1)
        return 0.0;
    double pass = net_algorithm_of(link->algorithm)->pass_messages(link->n);
    return c == COMET_COLL_ALL_REDUCE ? 2.0 * pass : pass;
}
