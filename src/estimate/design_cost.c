/* What a cluster design costs: the per-NPU parts (the NPU, its HBM
 * capacity and bandwidth, its 16-bit peak, its network bandwidth per
 * dimension), the expansion memory, and the switches and cables of every
 * dimension that prices them: a Clos counted from the tree's port split so
 * that an oversubscribed tree, with fewer uplinks and upper switches, costs
 * less; a ring, torus or mesh by the neighbour links of its shape; a fully
 * connected dimension by its pairs; a switch dimension by its one switch.
 * One function prices a design for the estimate, the strategy search and
 * the sweep alike (docs/study.md, "Costs"). */
#include "comet/estimate.h"

#include <string.h>

#include "comet/network.h"
#include "comet/units.h"
#include "../hardware/hardware.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : 0;
}

/* Cables one instance of a ring, torus or mesh of n NPUs has: per axis of
 * k (a ring is one axis of n), n/k lines of k links with wrap-around (one
 * where k is 2: both ports on the one neighbour, docs/fabric.md) or k - 1
 * without. */
static int64_t grid_links(const comet_net_dim *dim, int64_t n)
{
    const comet_net_shape *sh = &dim->shape;
    bool wrap = dim->topology != COMET_TOPO_MESH;
    int64_t one[1] = {n};
    const int64_t *axes = sh->n_axes > 0 && dim->topology != COMET_TOPO_RING ? sh->axes : one;
    int m = axes == one ? 1 : sh->n_axes;
    int64_t links = 0;
    for (int i = 0; i < m && i < COMET_MAX_AXES; i++) {
        int64_t k = axes[i];
        if (k < 2)
            continue;
        links += n / k * (!wrap ? k - 1 : k > 2 ? k : 1);
    }
    return links;
}

/* The hardware of a dimension without a Clos, built once per instance (the
 * NPUs that differ only in its coordinate): a ring, torus or mesh its
 * neighbour links, a fully connected one a link per pair, a switch
 * dimension one switch of a port per NPU and a cable each. */
static void direct_hardware(const comet_net_dim *dim, int64_t n, int64_t npus,
                            comet_net_hardware *out)
{
    if (n < 2)
        return;
    out->pods = npus > n ? ceil_div(npus, n) : 1;
    int64_t links;
    switch (dim->topology) {
    case COMET_TOPO_FULLY_CONNECTED:
        links = n * (n - 1) / 2;
        break;
    case COMET_TOPO_SWITCH:
        links = n;
        out->switches = out->pods;
        out->switch_ports = out->pods * n;
        break;
    default:
        links = grid_links(dim, n);
        break;
    }
    out->links = out->pods * links;
    out->cost = (double)out->switch_ports * dim->cost_per_switch_port +
                (double)out->links * dim->cost_per_link;
}

void comet_net_hardware_of(const comet_system *sys, int d, int64_t npus,
                           comet_net_hardware *out)
{
    memset(out, 0, sizeof *out);
    if (d < 0 || d >= sys->n_dims)
        return;
    const comet_net_dim *dim = &sys->dims[d];
    bool rail = dim->topology == COMET_TOPO_RAIL;
    /* the sizes, an auto (outermost) one taking what npus leaves */
    int64_t fixed = 1, size[COMET_MAX_DIMS];
    for (int i = 0; i < sys->n_dims; i++) {
        size[i] = sys->dims[i].size;
        if (size[i] > 0)
            fixed *= size[i];
    }
    int64_t inner = 1;
    for (int i = 0; i < sys->n_dims; i++) {
        if (size[i] <= 0)
            size[i] = npus > fixed ? ceil_div(npus, fixed) : 1;
        if (i < d)
            inner *= size[i];
    }
    if (!rail && dim->topology != COMET_TOPO_FAT_TREE) {
        direct_hardware(dim, size[d], npus, out);
        return;
    }
    int64_t pod = inner * size[d], radix = dim->shape.radix;
    if (radix < 2)
        return; /* the shape check refuses a Clos without a radix */
    comet_clos_ports p;
    comet_clos_ports_of(dim->topology, &dim->shape, &p);
    out->pods = npus > pod ? ceil_div(npus, pod) : 1;
    out->leaves = comet_clos_leaves(dim->topology, size[d], inner, &p);
    int64_t cables = pod; /* the NPUs' ports */
    if (out->leaves > 1 && p.tiers == 2) {
        cables += out->leaves * p.up[0];
        out->spines = ceil_div(out->leaves * p.up[0], radix);
    } else if (out->leaves > 1) {
        int64_t blocks = ceil_div(out->leaves, p.down[1]);
        out->aggregation = blocks * p.up[0];
        cables += out->leaves * p.up[0];
        if (blocks > 1) {
            cables += out->aggregation * p.up[1];
            out->spines = ceil_div(out->aggregation * p.up[1], radix);
        }
    }
    out->switches = out->pods * (out->leaves + out->aggregation + out->spines);
    out->switch_ports = out->switches * radix;
    out->links = out->pods * cables;
    out->cost = (double)out->switch_ports * dim->cost_per_switch_port +
                (double)out->links * dim->cost_per_link;
}

double comet_system_cost(const comet_system *sys, int64_t npus)
{
    const double gib = COMET_GIB;
    double peak16 = sys->compute.matrix_flops[COMET_DTYPE_BF16] > 0.0
                        ? sys->compute.matrix_flops[COMET_DTYPE_BF16]
                        : sys->compute.matrix_flops[COMET_DTYPE_FP16];
    double per_npu = sys->cost_per_npu + sys->hbm.capacity / gib * sys->cost_per_gib_hbm +
                     peak16 / 1e12 * sys->cost_per_tflops +
                     sys->hbm.bandwidth / 1e9 * sys->cost_per_gbps_hbm;
    for (int d = 0; d < sys->n_dims; d++)
        per_npu += sys->dims[d].bandwidth / 1e9 * sys->dims[d].cost_per_gbps;
    double cost = per_npu * (double)npus;
    if (sys->expansion.present)
        cost += hw_expansion_capacity(sys, npus) * (double)npus / gib *
                sys->cost_per_gib_expansion;
    for (int d = 0; d < sys->n_dims; d++) {
        if (!(sys->dims[d].cost_per_switch_port > 0.0 || sys->dims[d].cost_per_link > 0.0))
            continue;
        comet_net_hardware hw;
        comet_net_hardware_of(sys, d, npus, &hw);
        cost += hw.cost;
    }
    return cost;
}
