/* Halving-doubling (Rabenseifner, ICCS 2004; Thakur, Rabenseifner & Gropp
 * 2005): reduce-scatter by recursive halving, L = log2 n steps of S/2,
 * S/4, ..., S/n with the partner 2^i away; all-gather by recursive
 * doubling, its mirror; all-reduce the two. A group that is not a power
 * of two is folded first, as MPICH folds it (Thakur et al. 2005, Sec. 4;
 * net_hd in families.h): r = n - 2^floor(log2 n) members hand their data
 * to a neighbour, the power of two runs, the result goes back. An
 * all-reduce folds the whole buffer once and unfolds it once; a
 * reduce-scatter or all-gather pass folds and unfolds its blocks. Each
 * topology prices the folded schedule (folded_halving) where the pairs'
 * routes land. All-to-all is Bruck's log-step algorithm (Bruck, Ho,
 * Kipnis, Upfal & Weathersby, IEEE TPDS 8(11), 1997): L steps of about
 * S/2, any n. docs/collectives.md, "Halving-doubling (Rabenseifner) and
 * Bruck". */
#include "families.h"

/* One pass (or an all-reduce's half): the power-of-two pattern, or the
 * folded one. */
static net_cost hd_pass(const net_topology *t, const comet_link *l, net_hd_part part)
{
    if ((l->n & (l->n - 1)) == 0 || !t->folded_halving)
        return t->recursive_halving(l);
    return t->folded_halving(l, part);
}

static double hd_reduce_scatter(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(hd_pass(t, l, NET_HD_RS), a, x);
}

static double hd_all_gather(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(hd_pass(t, l, NET_HD_AG), a, x);
}

static double hd_all_reduce(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(hd_pass(t, l, NET_HD_AR_RS), a, x) +
           net_seconds(hd_pass(t, l, NET_HD_AR_AG), a, x);
}

static double hd_all_to_all(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(t->bruck(l), a, x);
}

/* A chunk's all-reduce holds its dimension for the larger of one pass
 * and twice the pass's busiest link summed over its steps: the next
 * chunk's halving runs beside its doubling, and where the steps load
 * different links (a ring's, a torus's, a fully-connected group's) they
 * share them (docs/collectives.md, "Chunks"). The folded schedule's fold
 * and unfold gate its pairs' steps: held whole. */
static double hd_all_reduce_hold(const net_topology *t, const comet_link *l)
{
    if ((l->n & (l->n - 1)) != 0 || !t->halving_link_total)
        return 1.0;
    double pass = t->recursive_halving(l).load, link = t->halving_link_total(l);
    if (!(pass > 0.0) || !(link > 0.0))
        return 1.0;
    double hold = link / pass;
    return hold < 0.5 ? 0.5 : hold > 1.0 ? 1.0 : hold;
}

/* ceil(log2 n) messages at most: log2 p steps and the unfold (Bruck's
 * all-to-all: ceil(log2 n) steps). */
static double hd_pass_messages(int64_t n)
{
    return (double)net_ceil_log2(n);
}

const net_algorithm net_algorithm_halving_doubling = {
    .id = COMET_ALGO_HALVING_DOUBLING,
    .time = {
        [COMET_COLL_ALL_REDUCE] = hd_all_reduce,
        [COMET_COLL_REDUCE_SCATTER] = hd_reduce_scatter,
        [COMET_COLL_ALL_GATHER] = hd_all_gather,
        [COMET_COLL_ALL_TO_ALL] = hd_all_to_all,
    },
    .pass_messages = hd_pass_messages,
    .all_reduce_hold = hd_all_reduce_hold,
};
