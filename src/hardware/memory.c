/* Memory tiers: what one NPU gets of an expansion tier (CXL-attached DRAM
 * and the like) depending on how it is attached. A per-NPU device is
 * private; a per-node device is shared by the NPUs of a node (shared_by,
 * or by default the innermost network dimension, which is the node); a
 * pool is shared by the whole job, so capacity and bandwidth divide. */
#include "hardware.h"
#include "../vocab/vocab.h"

static double sharers(const comet_system *sys, int64_t npus)
{
    const comet_mem_tier *t = &sys->expansion;
    switch (t->attach) {
    case COMET_ATTACH_PER_NODE: {
        int64_t node = sys->n_dims > 0 && sys->dims[0].size > 0 ? sys->dims[0].size : 1;
        int64_t n = t->shared_by > 0 ? t->shared_by : node;
        return (double)(n < npus ? n : npus);
    }
    case COMET_ATTACH_POOL:
        return (double)(npus > 0 ? npus : 1);
    case COMET_ATTACH_PER_NPU:
    default:
        return 1.0;
    }
}

double hw_expansion_bandwidth(const comet_system *sys, int64_t npus)
{
    const comet_mem_tier *t = &sys->expansion;
    if (!t->present)
        return 0.0;
    double eff = vocab_efficiency(t->efficiency);
    return t->bandwidth * eff / sharers(sys, npus);
}

double hw_expansion_capacity(const comet_system *sys, int64_t npus)
{
    if (!sys->expansion.present)
        return 0.0;
    return sys->expansion.capacity / sharers(sys, npus);
}
