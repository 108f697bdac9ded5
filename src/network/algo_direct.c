/* Direct: every NPU sends its n-1 blocks of S/n to all peers at once, for
 * reduce-scatter, all-gather and all-to-all alike; all-reduce is a
 * reduce-scatter then an all-gather. On a switch or a fully-connected
 * dimension RS = AG = A2A = a + (n-1)/n x; on a ring D a + (Q/n) x
 * (docs/collectives.md, "Direct"). */
#include "families.h"

static double direct_one_pass(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(t->scatter_to_all(l), a, x);
}

static double direct_all_reduce(const net_topology *t, const comet_link *l, double a, double x)
{
    return 2.0 * direct_one_pass(t, l, a, x);
}

/* One message to each of the n-1 peers. */
static double direct_pass_messages(int64_t n)
{
    return (double)(n - 1);
}

const net_algorithm net_algorithm_direct = {
    .id = COMET_ALGO_DIRECT,
    .time = {
        [COMET_COLL_ALL_REDUCE] = direct_all_reduce,
        [COMET_COLL_REDUCE_SCATTER] = direct_one_pass,
        [COMET_COLL_ALL_GATHER] = direct_one_pass,
        [COMET_COLL_ALL_TO_ALL] = direct_one_pass,
    },
    .pass_messages = direct_pass_messages,
};
