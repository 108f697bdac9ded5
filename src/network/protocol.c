/* NCCL's protocol model for one collective call on one dimension. NCCL
 * runs each call with one of three protocols and picks, per call, the one
 * its tuning model says is fastest (time = latency + size / bandwidth):
 *
 * - LL: 8-byte stores of 4 bytes of data and a 4-byte flag, so the
 *   receiver polls without a fence: the lowest latency, half the bandwidth;
 * - LL128: 128-byte lines of which 8 bytes are a flag: near-full bandwidth
 *   at a latency between the two;
 * - Simple: bulk copies behind a memory fence: the full bandwidth, the
 *   highest latency per step.
 *
 * We price the dimension's algorithm (hops h of latency, load in units of
 * x = S/B, the closed forms of docs/collectives.md) three ways:
 *
 *   T_p = base_p + h * (step_p + a) + load * x / share_p
 *
 * and keep the fastest; an all-reduce the switch can reduce in the network
 * is a fourth candidate (Simple only, as NCCL's NVLS and CollNet). Why: a
 * single efficiency per link cannot make small messages slow and large
 * ones fast at the same time; the protocols' latencies and shares do, and
 * give the bus-bandwidth curve against size its shape.
 *
 * The numbers are facts from NCCL 2.30.7, src/graph/tuning.cc
 * (ncclTunerConstantsDefaults, ncclTopoTuneModel, ncclTopoGetAlgoTime);
 * docs/collectives.md, "Protocols and measured curves", lists them with
 * what we leave out. No code of NCCL's is used. */
#include "families.h"

#include <math.h>

enum { LL, LL128, SIMPLE, N_PROTO };
enum { ROW_RING, ROW_TREE }; /* NCCL's algorithm rows: the tree's for its all-reduce only */
enum { HW_NVLINK, HW_PCI, HW_NET };

/* Latency once per call, microseconds (baseLatencies). */
static const double base_us[2][N_PROTO] = {
    [ROW_RING] = {6.6, 14.0, 8.4},
    [ROW_TREE] = {6.8, 14.0, 8.4},
};

/* Latency per step (per hop of the closed form), microseconds, by the
 * hardware the dimension is (hwLatencies). */
static const double step_us[3][2][N_PROTO] = {
    [HW_NVLINK] = {[ROW_RING] = {0.6, 1.9, 3.4}, [ROW_TREE] = {0.6, 1.25, 4.0}},
    [HW_PCI] = {[ROW_RING] = {1.0, 2.5, 5.7}, [ROW_TREE] = {1.0, 1.9, 4.0}},
    [HW_NET] = {[ROW_RING] = {2.7, 4.0, 14.0}, [ROW_TREE] = {5.0, 8.5, 14.0}},
};

/* Share of the link's bus bandwidth each protocol reaches. Ring: LL half
 * (a flag per data word), LL128 0.92 (NCCL's figure for 120 of 128 bytes),
 * Simple all. Tree all-reduce: 0.92 for every protocol, then LL 1/3.8 of
 * that and LL128 7/9 within a node or 120/128 across nodes. */
static const double ring_share[N_PROTO] = {0.5, 0.92, 1.0};
static const double tree_share[3][N_PROTO] = {
    [HW_NVLINK] = {0.92 / 3.8, 0.92 * 7.0 / 9.0, 0.92},
    [HW_PCI] = {0.92 / 3.8, 0.92 * 7.0 / 9.0, 0.92},
    [HW_NET] = {0.92 / 3.8, 0.92 * 120.0 / 128.0, 0.92},
};

/* In-network all-reduce, Simple only, its whole latency, microseconds:
 * NVLS on NVLink (25), CollNet Direct across nodes (31); none over PCIe. */
static const double in_network_us[3] = {[HW_NVLINK] = 25.0, [HW_PCI] = 0.0, [HW_NET] = 31.0};

/* A multi-node ring all-reduce with Simple pays 1.4 times its latency
 * (NCCL's "plateau effect of ring", compute capability 8.0 and later). */
#define RING_PLATEAU 1.4

comet_coll_cost net_protocol_cost(comet_collective c, const comet_link *l, double a, double x)
{
    int hw = (int)l->size_model->protocols - 1; /* COMET_PROTOCOLS_NCCL_*, checked by the caller */
    const net_topology *topo = net_topology_of(l->topology);
    const net_algorithm *algo = net_algorithm_of(l->algorithm);
    /* the closed form is hops * a + load * x: read its two coefficients */
    double hops = algo->time[c](topo, l, 1.0, 0.0);
    double load = algo->time[c](topo, l, 0.0, 1.0);
    int row = c == COMET_COLL_ALL_REDUCE && l->algorithm == COMET_ALGO_DOUBLE_BINARY_TREE
                  ? ROW_TREE
                  : ROW_RING;
    const double *share = row == ROW_TREE ? tree_share[hw] : ring_share;
    bool plateau = hw == HW_NET && c == COMET_COLL_ALL_REDUCE && l->algorithm == COMET_ALGO_RING;

    comet_coll_cost best = {(double)INFINITY, (double)INFINITY, COMET_PROTO_NONE};
    for (int p = 0; p < N_PROTO; p++) {
        double lat = (base_us[row][p] + hops * step_us[hw][row][p]) * 1e-6 + hops * a;
        if (plateau && p == SIMPLE)
            lat *= RING_PLATEAU;
        double transfer = load * x / share[p];
        if (lat + transfer < best.time)
            best = (comet_coll_cost){lat + transfer, transfer, (comet_protocol)(COMET_PROTO_LL + p)};
    }
    if (c == COMET_COLL_ALL_REDUCE && l->in_network_reduction && topo->in_network_all_reduce &&
        in_network_us[hw] > 0.0) {
        net_cost inc = topo->in_network_all_reduce(l);
        double lat = in_network_us[hw] * 1e-6 + inc.hops * a;
        double transfer = inc.load * x;
        if (lat + transfer < best.time)
            best = (comet_coll_cost){lat + transfer, transfer, COMET_PROTO_SIMPLE};
    }
    return best;
}
