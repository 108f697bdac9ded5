/* The registry of the network families: which topology (topo_*.c) and
 * which collective algorithm (algo_*.c) each value of the public enums
 * comet_topology and comet_algorithm stands for, and which congestion-control
 * scheme (cc_*.c) each comet_cc_scheme value. Adding a member is adding
 * its file and its row here; a test checks that every enum value has one. */
#include "cc.h"
#include "families.h"

const net_topology *const net_topologies[COMET_TOPO_COUNT] = {
    [COMET_TOPO_RING] = &net_topology_ring,
    [COMET_TOPO_FULLY_CONNECTED] = &net_topology_fully_connected,
    [COMET_TOPO_SWITCH] = &net_topology_switch,
    [COMET_TOPO_TORUS] = &net_topology_torus,
    [COMET_TOPO_MESH] = &net_topology_mesh,
    [COMET_TOPO_FAT_TREE] = &net_topology_fat_tree,
    [COMET_TOPO_RAIL] = &net_topology_rail,
    [COMET_TOPO_FRED] = &net_topology_fred,
};

const net_algorithm *const net_algorithms[COMET_ALGO_COUNT] = {
    [COMET_ALGO_RING] = &net_algorithm_ring,
    [COMET_ALGO_DIRECT] = &net_algorithm_direct,
    [COMET_ALGO_HALVING_DOUBLING] = &net_algorithm_halving_doubling,
    [COMET_ALGO_DOUBLE_BINARY_TREE] = &net_algorithm_double_binary_tree,
};

const cc_scheme *const cc_schemes[COMET_CC_COUNT] = {
    [COMET_CC_NONE] = &cc_scheme_none,
    [COMET_CC_PFC] = &cc_scheme_pfc,
    [COMET_CC_DCQCN] = &cc_scheme_dcqcn,
    [COMET_CC_HPCC] = &cc_scheme_hpcc,
};
