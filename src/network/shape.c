/* What a dimension's topology shape allows: the port split of a Clos from
 * its radix and oversubscription, how many NPUs it connects, and the one
 * check both the config reader (naming the key) and the fabric builder
 * (with the sizes resolved) apply, so a shape that reads is a shape that
 * builds. docs/fabric.md, "Topologies". */
#include "comet/network.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int64_t comet_net_pod_npus(const comet_system *sys, int d)
{
    int64_t p = 1;
    for (int i = 0; i <= d && i < sys->n_dims; i++) {
        if (sys->dims[i].size <= 0)
            return 0;
        p *= sys->dims[i].size;
    }
    return p;
}

static bool is_clos(comet_topology t)
{
    return t == COMET_TOPO_FAT_TREE || t == COMET_TOPO_RAIL || t == COMET_TOPO_FRED;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* Ports down = floor(radix * o / (1 + o)), at least 1 and at most
 * radix - 1, so a switch always has an uplink to the tier above. */
static void split_ports(int64_t radix, double o, int64_t *down, int64_t *up)
{
    if (!(o >= 1.0))
        o = 1.0;
    double d = (double)radix * o / (1.0 + o);
    int64_t dn = d >= (double)radix ? radix - 1 : (int64_t)d;
    if (dn < 1)
        dn = 1;
    if (dn > radix - 1)
        dn = radix - 1;
    *down = dn;
    *up = radix - dn;
}

void comet_clos_ports_of(comet_topology t, const comet_net_shape *sh, comet_clos_ports *out)
{
    int tiers = sh->tiers == 3 ? 3 : 2;
    int64_t radix = sh->radix >= 2 ? sh->radix : 2;
    memset(out, 0, sizeof *out);
    out->tiers = tiers;
    if (t == COMET_TOPO_FRED) {
        /* radix NPUs per L1; the one L2 (built of as many chiplets as it
         * takes) holds every L1; an L1's uplink any fraction of its NPUs' */
        double o = sh->oversubscription[0] >= 1.0 ? sh->oversubscription[0] : 1.0;
        out->tiers = 2;
        out->down[0] = radix;
        out->up_cap[0] = (double)radix / o;
        out->up[0] = (int64_t)ceil(out->up_cap[0]);
        out->down[1] = INT64_MAX / 4 / radix;
        out->max_endpoints = out->down[1] * radix;
        return;
    }
    split_ports(radix, sh->oversubscription[0], &out->down[0], &out->up[0]);
    if (tiers == 3)
        split_ports(radix, sh->oversubscription[1], &out->down[1], &out->up[1]);
    else
        out->down[1] = out->up[1] = 0;
    /* the top tier's switches give every port to the tier below: one per
     * leaf (2 tiers) or per pod (3 tiers) */
    out->down[tiers - 1] = radix;
    out->up[tiers - 1] = 0;
    for (int i = 0; i < tiers; i++)
        out->up_cap[i] = (double)out->up[i];
    out->max_endpoints = tiers == 2 ? radix * out->down[0] : radix * out->down[1] * out->down[0];
}

int64_t comet_clos_leaves(comet_topology t, int64_t size, int64_t inner,
                          const comet_clos_ports *p)
{
    int64_t down = p->down[0] > 0 ? p->down[0] : 1;
    return t == COMET_TOPO_RAIL ? inner * ceil_div(size, down) : ceil_div(size * inner, down);
}

static const char *problem(char *msg, size_t cap, const char *key, const char *text)
{
    snprintf(msg, cap, "%s", text);
    return key;
}

static const char *clos_problem(const comet_net_dim *dim, int64_t size, int64_t inner, char *msg,
                                size_t cap)
{
    const comet_net_shape *sh = &dim->shape;
    const char *name = comet_topology_name(dim->topology);
    if (dim->topology == COMET_TOPO_FRED) {
        if (sh->radix < 2) {
            snprintf(msg, cap, "fred needs the NPUs per L1 switch (radix, at least 2)%s",
                     sh->radix ? "" : ", missing");
            return "radix";
        }
        if (sh->tiers != 0 && sh->tiers != 2)
            return problem(msg, cap, "tiers", "fred has 2 levels (L1 switches under one L2)");
        if (sh->oversubscription[0] != 0.0 && !(sh->oversubscription[0] >= 1.0))
            return problem(msg, cap, "oversubscription",
                           "the L1 switches' down:up bandwidth must be at least 1");
        if (sh->oversubscription[1] != 0.0)
            return problem(msg, cap, "oversubscription", "fred has one ratio (its L1 uplinks)");
        if (sh->channels > 1)
            return problem(msg, cap, "channels", "fred spreads every flow over its paths: "
                                                 "channels do not apply");
        return NULL;
    }
    if (sh->radix < 4) {
        snprintf(msg, cap, "%s needs a switch radix of at least 4 ports%s", name,
                 sh->radix ? "" : " (missing)");
        return "radix";
    }
    if (sh->tiers != 0 && sh->tiers != 2 && sh->tiers != 3)
        return problem(msg, cap, "tiers", "must be 2 or 3");
    for (int t = 0; t < COMET_MAX_TIERS - 1; t++)
        if (sh->oversubscription[t] != 0.0 && !(sh->oversubscription[t] >= 1.0))
            return problem(msg, cap, "oversubscription",
                           "each ratio (down:up ports) must be at least 1");
    if (sh->oversubscription[1] != 0.0 && sh->tiers != 3)
        return problem(msg, cap, "oversubscription",
                       "gives a second ratio, which only 3 tiers have");
    if (size <= 0)
        return NULL; /* auto: checked once the NPU count is known */
    comet_clos_ports p;
    comet_clos_ports_of(dim->topology, sh, &p);
    int64_t leaves = comet_clos_leaves(dim->topology, size, inner, &p);
    int64_t roots = p.tiers == 2 ? leaves : ceil_div(leaves, p.down[1]);
    if (roots > sh->radix) {
        snprintf(msg, cap,
                 "%d tiers of %lld-port switches (leaves %lld down / %lld up) connect %lld %s "
                 "at most, this dimension needs %lld (%lld NPUs along it, %lld inside it): "
                 "raise radix or tiers",
                 p.tiers, (long long)sh->radix, (long long)p.down[0], (long long)p.up[0],
                 (long long)sh->radix, p.tiers == 2 ? "leaves" : "pods", (long long)roots,
                 (long long)size, (long long)inner);
        return "radix";
    }
    return NULL;
}

static const char *axes_problem(const comet_net_dim *dim, int64_t size, char *msg, size_t cap)
{
    const comet_net_shape *sh = &dim->shape;
    if (size <= 0)
        return problem(msg, cap, "size", "a torus or mesh needs a fixed size, not auto");
    if (sh->n_axes == 0)
        return NULL; /* one axis of `size` */
    int64_t prod = 1;
    for (int i = 0; i < sh->n_axes; i++) {
        if (sh->axes[i] < 2)
            return problem(msg, cap, "shape", "every axis needs at least 2 NPUs");
        prod *= sh->axes[i];
    }
    if (prod != size) {
        snprintf(msg, cap, "axes multiply to %lld NPUs, the dimension's size is %lld",
                 (long long)prod, (long long)size);
        return "shape";
    }
    return NULL;
}

const char *comet_net_shape_problem(const comet_net_dim *dim, int64_t size, int64_t inner,
                                    char *msg, size_t cap)
{
    const comet_net_shape *sh = &dim->shape;
    comet_topology t = dim->topology;
    bool axes = t == COMET_TOPO_TORUS || t == COMET_TOPO_MESH;
    if (sh->n_axes && !axes)
        return problem(msg, cap, "shape", "applies to torus and mesh only");
    if (sh->unidirectional && t != COMET_TOPO_RING)
        return problem(msg, cap, "bidirectional", "false applies to ring only");
    if (!is_clos(t)) {
        if (sh->radix || sh->tiers || sh->oversubscription[0] || sh->oversubscription[1])
            return problem(msg, cap, sh->radix ? "radix" : sh->tiers ? "tiers" : "oversubscription",
                           "applies to fat_tree, rail and fred only");
        if (sh->routing != COMET_ROUTE_ECMP)
            return problem(msg, cap, "routing", "applies to fat_tree and rail only");
    }
    if (axes)
        return axes_problem(dim, size, msg, cap);
    if (is_clos(t))
        return clos_problem(dim, size, inner < 1 ? 1 : inner, msg, cap);
    return NULL;
}
