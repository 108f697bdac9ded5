/* Double binary tree all-reduce (Sanders, Speck & Traeff, "Two-tree
 * algorithms for full bandwidth broadcast, reduction and scan", Parallel
 * Computing 35(12), 2009; NCCL 2.4): two binary trees, every NPU an inner
 * node of at most one, each reducing half the buffer to its root and
 * broadcasting it back, pipelined; every NPU injects 2S. The pipeline's
 * fill term is left out, as in NCCL's base cost model. Reduce-scatter,
 * all-gather and all-to-all have no tree form: they run the ring schedule,
 * as in NCCL. docs/collectives.md, "Double binary tree (all-reduce)". */
#include "families.h"

static double tree_all_reduce(const net_topology *t, const comet_link *l, double a, double x)
{
    return net_seconds(t->double_tree(l), a, x);
}

/* L = ceil(log2 n) levels of the trees. Counted so for every collective,
 * though reduce-scatter, all-gather and all-to-all run the ring schedule
 * here (n-1 messages): what the simulator has always charged. */
static double tree_pass_messages(int64_t n)
{
    return (double)net_ceil_log2(n);
}

const net_algorithm net_algorithm_double_binary_tree = {
    .id = COMET_ALGO_DOUBLE_BINARY_TREE,
    .time = {
        [COMET_COLL_ALL_REDUCE] = tree_all_reduce,
        [COMET_COLL_REDUCE_SCATTER] = net_ring_schedule_reduce_scatter,
        [COMET_COLL_ALL_GATHER] = net_ring_schedule_all_gather,
        [COMET_COLL_ALL_TO_ALL] = net_ring_schedule_all_to_all,
    },
    .pass_messages = tree_pass_messages,
};
