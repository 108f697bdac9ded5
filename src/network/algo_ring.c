/* The ring schedule (Patarasuk & Yuan, "Bandwidth optimal all-reduce
 * algorithms for clusters of workstations", JPDC 69(2), 2009; Thakur,
 * Rabenseifner & Gropp, IJHPCA 19(1), 2005): reduce-scatter is n-1
 * neighbour steps of S/n, all-gather the same with copies, all-reduce the
 * two: RS = AG = (n-1) a + (n-1)/n x, AR = 2 RS, the bandwidth lower bound
 * of all-reduce. All-to-all is a pairwise exchange, n-1 shifts of S/n.
 * What each pattern costs is the topology's (topo_*.c); docs/collectives.md
 * "Ring schedule". */
#include "families.h"

/* Collective c of the schedule: one pass (reduce-scatter, all-gather) or
 * two (all-reduce), unless the topology prices them as a whole. */
static double schedule(const net_topology *t, const comet_link *l, double a, double x,
                       comet_collective c)
{
    if (t->ring_schedule)
        return net_seconds(t->ring_schedule(l, c), a, x);
    double passes = c == COMET_COLL_ALL_REDUCE ? 2.0 : 1.0;
    return passes * net_seconds(t->ring_pass(l), a, x);
}

double net_ring_schedule_reduce_scatter(const net_topology *t, const comet_link *l, double a,
                                        double x)
{
    return schedule(t, l, a, x, COMET_COLL_REDUCE_SCATTER);
}

double net_ring_schedule_all_gather(const net_topology *t, const comet_link *l, double a,
                                    double x)
{
    return schedule(t, l, a, x, COMET_COLL_ALL_GATHER);
}

double net_ring_schedule_all_to_all(const net_topology *t, const comet_link *l, double a,
                                    double x)
{
    return net_seconds(t->pairwise_exchange(l), a, x);
}

/* Reduce-scatter then all-gather. */
static double ring_all_reduce(const net_topology *t, const comet_link *l, double a, double x)
{
    return schedule(t, l, a, x, COMET_COLL_ALL_REDUCE);
}

/* n-1 neighbour steps, one message each. */
static double ring_pass_messages(int64_t n)
{
    return (double)(n - 1);
}

const net_algorithm net_algorithm_ring = {
    .id = COMET_ALGO_RING,
    .time = {
        [COMET_COLL_ALL_REDUCE] = ring_all_reduce,
        [COMET_COLL_REDUCE_SCATTER] = net_ring_schedule_reduce_scatter,
        [COMET_COLL_ALL_GATHER] = net_ring_schedule_all_gather,
        [COMET_COLL_ALL_TO_ALL] = net_ring_schedule_all_to_all,
    },
    .pass_messages = ring_pass_messages,
};
