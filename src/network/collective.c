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
 * L = ceil(log2 n), x = S/B. A dimension with a size model (a protocol
 * model or measured curves, protocol.c and bus_curve.c) is priced by it
 * instead; the closed forms above stay as they are for every other. */
#include "families.h"

#include <math.h>

/* The symmetric collective whose measured curve or protocol model prices a
 * rooted one (nccl-tests measure only those, NCCL's protocols are tuned
 * for them): a scatter or a gather moves the root's (n-1)/n S, an
 * all-gather's, a broadcast or a reduce an all-reduce's 2(n-1) steps. */
static comet_collective symmetric_of(comet_collective c)
{
    switch (c) {
    case COMET_COLL_BROADCAST:
    case COMET_COLL_REDUCE:
        return COMET_COLL_ALL_REDUCE;
    case COMET_COLL_GATHER:
    case COMET_COLL_SCATTER:
        return COMET_COLL_ALL_GATHER;
    default:
        return c;
    }
}

/* The chain a broadcast runs down from the root, or a reduce toward it. */
static bool chain_of(comet_collective c, const net_topology *t, const comet_link *l,
                     net_cost *out, double *head)
{
    if (c == COMET_COLL_REDUCE && t->root_chain_toward)
        return t->root_chain_toward(l, out, head);
    return t->root_chain && t->root_chain(l, out, head);
}

/* Rooted at the group's first member. A scatter (gather) is the
 * topology's scatter pattern; a broadcast (reduce) its chain where it has
 * one, else the scatter after the algorithm's all-gather (the gather
 * after its reduce-scatter): van de Geijn's broadcast and Rabenseifner's
 * reduce. docs/collectives.md, "Rooted collectives". */
NET_COLD static double rooted_time(comet_collective c, const net_topology *t, const comet_link *l,
                                double a, double x)
{
    net_cost chain;
    double head;
    bool toward = c == COMET_COLL_GATHER || c == COMET_COLL_REDUCE;
    net_pattern_fn rooted = toward && t->root_gather ? t->root_gather : t->root_scatter;
    if (c == COMET_COLL_GATHER || c == COMET_COLL_SCATTER)
        return net_seconds(rooted(l), a, x);
    if (chain_of(c, t, l, &chain, &head))
        return net_seconds(chain, a, x);
    comet_collective pass = toward ? COMET_COLL_REDUCE_SCATTER : COMET_COLL_ALL_GATHER;
    return net_seconds(rooted(l), a, x) + net_algorithm_of(l->algorithm)->time[pass](t, l, a, x);
}

/* The closed form of collective c on a link: a rooted one by its own,
 * the symmetric ones by net_closed_form. */
static inline double closed_form(comet_collective c, const comet_link *l, double a, double x)
{
    if (c >= COMET_COLL_SYMMETRIC)
        return rooted_time(c, net_topology_of(l->topology), l, a, x);
    return net_closed_form(c, l, a, x);
}

/* A link whose dimension has a size model: its measured curve for c, else
 * its protocol model, else the closed form (a dimension may carry curves
 * for some collectives only). Kept out of line and cold: the strategy
 * search's systems mostly have none, and their path stays as it was. */
NET_COLD static comet_coll_cost sized_cost(comet_collective c, const comet_link *link,
                                           double bytes, double a, double x)
{
    comet_coll_cost r;
    comet_collective sym = symmetric_of(c);
    if (net_bus_curve_cost(sym, link, bytes, &r))
        return r;
    comet_protocol_model pm = link->size_model->protocols;
    if (pm > COMET_PROTOCOLS_NONE && pm < COMET_PROTOCOLS_COUNT)
        return net_protocol_cost(sym, link, a, x);
    return (comet_coll_cost){closed_form(c, link, a, x), closed_form(c, link, 0.0, x),
                             COMET_PROTO_NONE};
}

/* Whether the link's size model prices its chunks (sized_cost: an
 * all-reduce's measured curve or a protocol model), each chunk a call of
 * its own held whole. */
static bool by_size_model(const comet_link *l)
{
    if (!l->size_model)
        return false;
    comet_protocol_model pm = l->size_model->protocols;
    return l->size_model->bus.curve[COMET_COLL_ALL_REDUCE].n_points > 0 ||
           (pm > COMET_PROTOCOLS_NONE && pm < COMET_PROTOCOLS_COUNT);
}

double comet_collective_chunk_hold(comet_collective c, const comet_link *l)
{
    net_cost chain;
    double head = 1.0;
    const net_topology *t = net_topology_of(l->topology);
    bool all_reduce = c == COMET_COLL_ALL_REDUCE &&
                      !(l->in_network_reduction && t->in_network_all_reduce);
    if ((c != COMET_COLL_BROADCAST && c != COMET_COLL_REDUCE && !all_reduce) || l->n < 2)
        return 1.0;
    if (by_size_model(l))
        return 1.0;
    if (all_reduce) {
        const net_algorithm *a = net_algorithm_of(l->algorithm);
        return a->all_reduce_hold ? a->all_reduce_hold(t, l) : 1.0;
    }
    if (!chain_of(c, t, l, &chain, &head))
        return 1.0;
    return head;
}

double comet_collective_chunk_hold_latency(comet_collective c, const comet_link *l)
{
    return net_chunk_hold_latency(c, l, comet_collective_chunk_hold(c, l));
}

double net_chunk_hold_latency(comet_collective c, const comet_link *l, double hold)
{
    const net_topology *t = net_topology_of(l->topology);
    bool two_passes = c == COMET_COLL_ALL_REDUCE && l->n >= 2 && !by_size_model(l) &&
                      !(l->in_network_reduction && t->in_network_all_reduce) &&
                      l->algorithm != COMET_ALGO_DOUBLE_BINARY_TREE;
    /* the ring schedule over a grid's axes: a pass of g phases, the next
     * chunk one phase behind */
    bool ring = l->algorithm == COMET_ALGO_RING ||
                (l->algorithm == COMET_ALGO_DOUBLE_BINARY_TREE && c != COMET_COLL_ALL_REDUCE);
    int phases = 1;
    if (ring && t->ring_phases && l->n >= 2 && !by_size_model(l) &&
        (c == COMET_COLL_REDUCE_SCATTER || c == COMET_COLL_ALL_GATHER || two_passes))
        phases = t->ring_phases(l);
    if (phases > 1)
        return (two_passes ? 0.5 : 1.0) / (double)phases;
    return two_passes ? 0.5 : hold;
}

comet_collective comet_collective_priced_as(comet_collective c, double *bytes)
{
    if (c != COMET_COLL_BARRIER)
        return c;
    *bytes = COMET_BARRIER_BYTES;
    return COMET_COLL_ALL_REDUCE;
}

double comet_collective_time_1d(comet_collective c, const comet_link *link, double bytes)
{
    c = comet_collective_priced_as(c, &bytes);
    if (!link || link->n <= 1 || !(bytes > 0.0))
        return 0.0;
    if (c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return 0.0;
    if (!(link->bandwidth > 0.0))
        return (double)INFINITY;
    double a = link->latency > 0.0 ? link->latency : 0.0;
    double x = bytes / link->bandwidth;
    if (link->size_model)
        return sized_cost(c, link, bytes, a, x).time;
    return closed_form(c, link, a, x);
}

comet_coll_cost comet_collective_cost_1d(comet_collective c, const comet_link *link, double bytes)
{
    c = comet_collective_priced_as(c, &bytes);
    if (link && link->size_model && link->n > 1 && bytes > 0.0 && c > COMET_COLL_NONE &&
        c < COMET_COLL_COUNT && link->bandwidth > 0.0)
        return sized_cost(c, link, bytes, link->latency > 0.0 ? link->latency : 0.0,
                          bytes / link->bandwidth);
    /* the closed form's bandwidth part is its time without latency,
     * computed so (not as hops * a subtracted) as the simulator always has */
    comet_coll_cost r = {comet_collective_time_1d(c, link, bytes), 0.0, COMET_PROTO_NONE};
    if (link) {
        comet_link no_latency = *link;
        no_latency.latency = 0.0;
        r.transfer = comet_collective_time_1d(c, &no_latency, bytes);
    }
    return r;
}

double comet_collective_messages(comet_collective c, const comet_link *link)
{
    if (!link || link->n <= 1)
        return 0.0;
    double bytes = 0.0;
    c = symmetric_of(comet_collective_priced_as(c, &bytes));
    double pass = net_algorithm_of(link->algorithm)->pass_messages(link->n);
    return c == COMET_COLL_ALL_REDUCE ? 2.0 * pass : pass;
}
