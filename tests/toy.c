/* The toy the closed-form tests work out by hand: a system and a model
 * built in C whose every step time can be checked with a pencil. Shared
 * by the estimator's suite (tests/test_estimate.c) and the core model's
 * stand-alone check (tests/layers/core_model.c), which links it without
 * cmocka or the config reader. Also the bare systems the fabric suites
 * (test_fabric.c, test_roce.c) give their networks, one dimension at a
 * time. */
#include "toy.h"

#include <stdio.h>
#include <string.h>

void toy_system(comet_system *sys)
{
    memset(sys, 0, sizeof *sys);
    snprintf(sys->name, sizeof sys->name, "toy");
    sys->compute.matrix_flops[COMET_DTYPE_FP16] = 100e12;
    sys->compute.vector_flops[COMET_DTYPE_FP16] = 100e12;
    sys->compute.vector_efficiency = 1.0;
    sys->hbm.present = true;
    sys->hbm.capacity = 80.0 * COMET_GIB;
    sys->hbm.bandwidth = 1e12;
    sys->hbm.efficiency = 1.0;
    sys->n_dims = 1;
    snprintf(sys->dims[0].name, sizeof sys->dims[0].name, "net");
    sys->dims[0].size = 0;
    sys->dims[0].topology = COMET_TOPO_SWITCH;
    sys->dims[0].algorithm = COMET_ALGO_RING;
    sys->dims[0].bandwidth = 100e9;
    sys->dims[0].efficiency = 1.0;
    sys->collective_chunks = 1;
}

void toy_model(comet_model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "toy");
    m->kind = COMET_MODEL_LAYERS;
    m->dtype = COMET_DTYPE_FP16;
    m->n_layer_kinds = 1;
    comet_layer *l = &m->layer_list[0];
    snprintf(l->name, sizeof l->name, "dense");
    l->count = 8;
    l->fwd_flops = 1e12;
    l->params = 1e9;
    l->act_bytes = 1e6;
    l->out_bytes = 1e6;
    m->sample_tokens = 1;
}

void toy_strategy(comet_strategy *s)
{
    comet_strategy_defaults(s);
    s->pp = 2;
    s->dp = 2;
    s->global_batch = 8;
    s->microbatch = 1;
    s->overlap_dp = false;
}

void toy_bare_system(comet_system *s, const char *name)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->compute.matrix_flops[COMET_DTYPE_BF16] = 100e12;
    s->hbm.present = true;
    s->hbm.capacity = 80.0 * COMET_GIB;
    s->hbm.bandwidth = 2e12;
    s->collective_chunks = 1;
}

comet_net_dim *toy_add_dim(comet_system *s, const char *name, int64_t size, comet_topology t,
                           comet_algorithm a, double bw, double lat)
{
    comet_net_dim *d = &s->dims[s->n_dims++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->size = size;
    d->topology = t;
    d->algorithm = a;
    d->bandwidth = bw;
    d->latency = lat;
    d->efficiency = 1.0;
    return d;
}
