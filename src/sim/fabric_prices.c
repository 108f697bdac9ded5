/* Collectives priced as flows on the fabric, for the simulators that hold
 * many collectives (a training step, a Chakra trace): each distinct one
 * (group span, collective, bytes) is simulated once on the system's
 * fabric with every group of its shape at once, its time (the slowest
 * group's) remembered, so a step of a thousand TP all-reduces of one size
 * costs one flow simulation (sim.h, docs/fabric.md). The Chakra replay
 * prices so the collectives whose groups the fabric cannot run as one,
 * and runs the others as shared flows on this same fabric
 * (fabric_replay.c). */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#include "comet/fabric.h"
#include "comet/network.h"

typedef struct fab_price {
    int64_t span[COMET_MAX_DIMS];
    comet_collective c;
    double bytes, time;
} fab_price;

struct sim_fabric_prices {
    comet_fabric *f;
    comet_system sys;    /* its sizes resolved */
    fab_price *items;
    int n, cap;
    uint64_t flows;
    comet_status st;     /* the first failure */
    comet_error err;
};

comet_status sim_fabric_prices_new(const comet_system *sys, int64_t npus,
                                   sim_fabric_prices **out, comet_error *err)
{
    *out = NULL;
    sim_fabric_prices *p = calloc(1, sizeof *p);
    if (!p)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_status st = comet_fabric_build(sys, npus, &p->f, err);
    if (st) {
        free(p);
        return st;
    }
    comet_fabric_system(p->f, sys, &p->sys);
    *out = p;
    return COMET_OK;
}

void sim_fabric_prices_free(sim_fabric_prices *p)
{
    if (!p)
        return;
    comet_fabric_free(p->f);
    free(p->items);
    free(p);
}

double sim_fabric_price(sim_fabric_prices *p, const int64_t span[COMET_MAX_DIMS],
                        comet_collective c, double bytes)
{
    for (int i = 0; i < p->n; i++)
        if (p->items[i].c == c && p->items[i].bytes == bytes &&
            memcmp(p->items[i].span, span, sizeof p->items[i].span) == 0)
            return p->items[i].time;
    double t = comet_collective_time(&p->sys, span, c, bytes);
    if (p->st || !(bytes > 0.0))
        return t;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        fab_price *x = realloc(p->items, sizeof *x * (size_t)cap);
        if (!x) {
            p->st = comet_error_set(&p->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            return t;
        }
        p->items = x;
        p->cap = cap;
    }
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    comet_flow_result r;
    p->st = comet_fabric_collective(p->f, &p->sys, span, c, bytes, &o, &r, &p->err);
    if (p->st)
        return t;
    fab_price *it = &p->items[p->n++];
    memcpy(it->span, span, sizeof it->span);
    it->c = c;
    it->bytes = bytes;
    it->time = r.time;
    p->flows += r.flows;
    return r.time;
}

const comet_fabric *sim_fabric_prices_fabric(const sim_fabric_prices *p,
                                            const comet_system **sys)
{
    *sys = &p->sys;
    return p->f;
}

comet_status sim_fabric_prices_status(const sim_fabric_prices *p, comet_error *err)
{
    if (p->st && err)
        *err = p->err;
    return p->st;
}

void sim_fabric_prices_counts(const sim_fabric_prices *p, int *collectives, uint64_t *flows)
{
    *collectives = p->n;
    *flows = p->flows;
}
