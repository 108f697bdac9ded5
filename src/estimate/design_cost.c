/* What a cluster design costs: the per-NPU parts (the NPU, its HBM
 * capacity and bandwidth, its 16-bit peak, its network bandwidth per
 * dimension), the expansion memory, and the switches and cables of every
 * Clos dimension, counted from the tree's port split so that an
 * oversubscribed tree, with fewer uplinks and upper switches, costs less.
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

void comet_net_hardware_of(const comet_system *sys, int d, int64_t npus,
                           comet_net_hardware *out)
{
    memset(out, 0, sizeof *out);
    if (d < 0 || d >= sys->n_dims)
        return;
    const comet_net_dim *dim = &sys->dims[d];
    bool rail = dim->topology == COMET_TOPO_RAIL;
    if (!rail && dim->topology != COMET_TOPO_FAT_TREE)
        return;
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
    int64_t pod = inner * size[d], radix = dim->shape.radix;
    if (radix < 2)
        return; /* the shape check refuses a Clos without a radix */
    comet_clos_ports p;
    comet_clos_ports_of(&dim->shape, &p);
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
