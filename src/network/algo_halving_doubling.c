/* Halving-doubling (Rabenseifner, ICCS 2004; Thakur, Rabenseifner & Gropp
 * 2005): reduce-scatter by recursive halving, L = ceil(log2 n) steps of
 * S/2, S/4, ..., S/n with the partner 2^i away; all-gather by recursive
 * doubling, its mirror; all-reduce the two. All-to-all is Bruck's log-step
 * algorithm (Bruck, Ho, Kipnis, Upfal & Weathersby, IEEE TPDS 8(11), 1997):
 * L steps of about S/2. Non-power-of-two n: L steps with the power-of-two
 * bandwidth term, which is optimistic (MPICH folds the extra NPUs first).
 * docs/collectives.md, "Halving-doubling (Rabenseifner) and Bruck". */
#include "families.h"

static double hd_one_pass(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(t->recursive_halving(l), a, x);
}

static double hd_all_reduce(const net_topology *t, const comet_link *l, double a, double x)
{
    return 2.0 * hd_one_pass(t, l, a, x);
}

static double hd_all_to_all(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(t->bruck(l), a, x);
}

/* L = ceil(log2 n) steps, one message each (Bruck's all-to-all too). */
static double hd_pass_messages(int64_t n)
{
    return (double)net_ceil_log2(n);
}

const net_algorithm net_algorithm_halving_doubling = {
    .id = COMET_ALGO_HALVING_DOUBLING,
    .time = {
        [COMET_COLL_ALL_REDUCE] = hd_all_reduce,
        [COMET_COLL_REDUCE_SCATTER] = hd_one_pass,
        [COMET_COLL_ALL_GATHER] = hd_one_pass,
        [COMET_COLL_ALL_TO_ALL] = hd_all_to_all,
    },
    .pass_messages = hd_pass_messages,
};
