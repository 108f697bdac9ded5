/* Building a system's fabric: each network dimension lays out its switches
 * and links (its topology's fab_ops, in the topology's own file), in one
 * allocation sized up front, and routes along it by formula. A transfer
 * between NPUs that differ in several coordinates is routed dimension by
 * dimension, innermost first. The shape check is the config reader's
 * (comet_net_shape_problem), rerun here with the sizes resolved. */
#include "cc.h"
#include "families.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vocab/vocab.h"

void comet_fabric_free(comet_fabric *f)
{
    if (!f)
        return;
    free(f->from);
    free(f->to);
    free(f->cap);
    free(f->lat);
    free(f->dim_of);
    free(f->tier);
    free(f);
}

/* The NPUs along each dimension, the auto outermost one taking what npus
 * leaves. */
static comet_status resolve_sizes(const comet_system *sys, int64_t npus, int64_t *sizes,
                                  int64_t *total, comet_error *err)
{
    int64_t fixed = 1;
    int nd = sys->n_dims;
    if (nd < 1 || nd > COMET_MAX_DIMS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "system.network",
                               "needs 1 to %d dimensions", COMET_MAX_DIMS);
    for (int d = 0; d < nd; d++) {
        sizes[d] = sys->dims[d].size;
        if (sizes[d] > 0)
            fixed *= sizes[d];
        if (fixed > (int64_t)1 << 31)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "system.network",
                                   "more than 2^31 NPUs: too large for a fabric");
    }
    if (sizes[nd - 1] <= 0) {
        if (npus <= 0 || npus % fixed)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--npus",
                                   "the outermost dimension is auto: give an NPU count that is "
                                   "a multiple of %lld",
                                   (long long)fixed);
        sizes[nd - 1] = npus / fixed;
        fixed = npus;
    } else if (npus > 0 && npus != fixed) {
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--npus",
                               "the system's dimensions hold %lld NPUs, not %lld",
                               (long long)fixed, (long long)npus);
    }
    *total = fixed;
    return COMET_OK;
}

static comet_status check_dim(const comet_system *sys, int d, const fab_dim *fd, comet_error *err)
{
    char msg[400];
    char path[96];
    const char *key = comet_cc_problem(&fd->cc, msg, sizeof msg);
    if (key) {
        snprintf(path, sizeof path, "system.network[%d].congestion_control.%s", d, key);
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, path, "%s", msg);
    }
    key = comet_net_shape_problem(&sys->dims[d], fd->size, fd->inner, msg, sizeof msg);
    if (!key)
        return COMET_OK;
    snprintf(path, sizeof path, "system.network[%d].%s", d, key);
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, path, "%s", msg);
}

comet_status comet_fabric_build(const comet_system *sys, int64_t npus, comet_fabric **out,
                                comet_error *err)
{
    *out = NULL;
    int64_t sizes[COMET_MAX_DIMS], total = 0;
    comet_status st = resolve_sizes(sys, npus, sizes, &total, err);
    if (st)
        return st;
    comet_fabric *f = calloc(1, sizeof *f);
    if (!f)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    snprintf(f->system, sizeof f->system, "%s", sys->name);
    f->npus = total;
    f->n_dims = sys->n_dims;
    int64_t inner = 1, links = 0, nodes = total;
    for (int d = 0; d < sys->n_dims; d++) {
        const comet_net_dim *nd = &sys->dims[d];
        fab_dim *fd = &f->dims[d];
        snprintf(f->dim_names[d], sizeof f->dim_names[d], "%s", nd->name);
        fd->index = d;
        fd->topo = nd->topology;
        fd->size = sizes[d];
        fd->inner = inner;
        fd->outer = total / (inner * sizes[d]);
        fd->bw = nd->bandwidth * vocab_efficiency(nd->efficiency);
        fd->lat = nd->latency > 0.0 ? nd->latency : 0.0;
        fd->uni = nd->shape.unidirectional;
        fd->m = 1;
        fd->axes[0] = fd->size;
        if (nd->shape.n_axes > 0) {
            fd->m = nd->shape.n_axes;
            for (int i = 0; i < fd->m; i++)
                fd->axes[i] = nd->shape.axes[i];
        }
        fd->wrap = fd->topo == COMET_TOPO_TORUS;
        fd->rail = fd->topo == COMET_TOPO_RAIL;
        /* FRED's switches spread every flow over their paths */
        fd->spray = nd->shape.routing == COMET_ROUTE_SPRAY || fd->topo == COMET_TOPO_FRED;
        fd->seed = (uint64_t)nd->shape.ecmp_seed;
        comet_clos_ports_of(fd->topo, &nd->shape, &fd->ports);
        fd->cc = nd->cc;
        comet_cc_defaults(&fd->cc, fd->bw);
        f->fluid |= cc_scheme_of(fd->cc.scheme)->fluid;
        if ((st = check_dim(sys, d, fd, err)) != COMET_OK) {
            comet_fabric_free(f);
            return st;
        }
        if (!(fd->bw > 0.0)) {
            comet_fabric_free(f);
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "network dimension %s has no bandwidth", nd->name);
        }
        const fab_ops *ops = net_topology_of(fd->topo)->fabric;
        ops->layout(fd);
        fd->uneven = fd->size > 1 && ops->uneven &&
                     ops->uneven(fd, f->dim_names[d], fd->why_uneven, sizeof fd->why_uneven);
        if (!fd->uneven && fd->size > 1 && cc_scheme_of(fd->cc.scheme)->fluid) {
            /* queues and pauses are every NPU's flows' together */
            fd->uneven = true;
            snprintf(fd->why_uneven, sizeof fd->why_uneven,
                     "%s runs congestion control (%s)", nd->name,
                     comet_cc_scheme_name(fd->cc.scheme));
        }
        fd->link0 = links;
        fd->node0 = nodes;
        links += fd->n_links;
        nodes += fd->n_switches;
        inner *= sizes[d];
        if (links > COMET_FABRIC_MAX_LINKS || nodes > INT32_MAX) {
            comet_fabric_free(f);
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "system.network",
                                   "the fabric would hold %lld links and %lld nodes by "
                                   "dimension %s, past comet's limit of %d links",
                                   (long long)links, (long long)nodes, nd->name,
                                   COMET_FABRIC_MAX_LINKS);
        }
    }
    f->n_links = links;
    f->n_nodes = nodes;
    size_t n = (size_t)(links > 0 ? links : 1);
    f->from = malloc(n * sizeof *f->from);
    f->to = malloc(n * sizeof *f->to);
    f->cap = malloc(n * sizeof *f->cap);
    f->lat = malloc(n * sizeof *f->lat);
    f->dim_of = malloc(n);
    f->tier = malloc(n);
    if (!f->from || !f->to || !f->cap || !f->lat || !f->dim_of || !f->tier) {
        comet_fabric_free(f);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                               "out of memory for a fabric of %lld links", (long long)links);
    }
    for (int d = 0; d < f->n_dims; d++) {
        fab_dim *fd = &f->dims[d];
        net_topology_of(fd->topo)->fabric->build(f, fd);
    }
    *out = f;
    return COMET_OK;
}

void comet_fabric_info_of(const comet_fabric *f, comet_fabric_info *out)
{
    memset(out, 0, sizeof *out);
    out->npus = f->npus;
    out->switches = f->n_nodes - f->npus;
    out->links = f->n_links;
    out->n_dims = f->n_dims;
    for (int d = 0; d < f->n_dims; d++)
        out->sizes[d] = f->dims[d].size;
}

bool comet_fabric_uneven(const comet_fabric *f, char *why, size_t cap)
{
    for (int d = 0; d < f->n_dims; d++)
        if (f->dims[d].uneven) {
            snprintf(why, cap, "%s", f->dims[d].why_uneven);
            return true;
        }
    if (cap > 0)
        why[0] = '\0';
    return false;
}

comet_status comet_system_uneven(const comet_system *sys, int64_t npus, bool *uneven, char *why,
                                 size_t cap, comet_error *err)
{
    *uneven = false;
    if (cap > 0)
        why[0] = '\0';
    bool may = false; /* a dimension whose topology can be uneven: only then is it built */
    for (int d = 0; d < sys->n_dims; d++)
        may |= net_topology_of(sys->dims[d].topology)->fabric->uneven != NULL ||
               cc_scheme_of(sys->dims[d].cc.scheme)->fluid;
    if (!may)
        return COMET_OK;
    comet_fabric *f;
    comet_status st = comet_fabric_build(sys, npus, &f, err);
    if (st)
        return st;
    *uneven = comet_fabric_uneven(f, why, cap);
    comet_fabric_free(f);
    return COMET_OK;
}

void comet_fabric_system(const comet_fabric *f, const comet_system *sys, comet_system *out)
{
    if (out != sys)
        *out = *sys;
    for (int d = 0; d < f->n_dims && d < out->n_dims; d++)
        out->dims[d].size = f->dims[d].size;
}

/* The route dimension by dimension; each Clos gets its pick among equal
 * paths: the hash mixed (with the dimension's ecmp_seed when it has one),
 * or, pinned, the pick as given. */
static int route_along(const comet_fabric *f, int64_t a, int64_t b, uint64_t hash, bool pinned,
                       int32_t *path, int cap)
{
    if (a < 0 || b < 0 || a >= f->npus || b >= f->npus)
        return -1;
    int n = 0;
    int64_t cur = a;
    for (int d = 0; d < f->n_dims; d++) {
        const fab_dim *fd = &f->dims[d];
        int64_t in = cur % fd->inner;
        int64_t pa = (cur / fd->inner) % fd->size;
        int64_t pb = (b / fd->inner) % fd->size;
        int64_t out = cur / (fd->inner * fd->size);
        if (pa == pb)
            continue;
        uint64_t pick = pinned ? hash : fab_mix(fd->seed ? hash ^ fab_mix(fd->seed) : hash);
        int k = net_topology_of(fd->topo)->fabric->route(f, fd, in, out, pa, pb, pick, path + n,
                                                         cap - n);
        if (k < 0)
            return -1;
        n += k;
        cur = fab_npu(fd, in, out, pb);
    }
    return n;
}

int comet_fabric_route(const comet_fabric *f, int64_t a, int64_t b, uint64_t hash,
                       int32_t *path, int cap)
{
    return route_along(f, a, b, hash, false, path, cap);
}

int comet_fabric_route_pinned(const comet_fabric *f, int64_t a, int64_t b, uint64_t pick,
                              int32_t *path, int cap)
{
    return route_along(f, a, b, pick, true, path, cap);
}

void comet_fabric_link_of(const comet_fabric *f, int64_t id, comet_fabric_link *out)
{
    memset(out, 0, sizeof *out);
    if (id < 0 || id >= f->n_links)
        return;
    out->from = f->from[id];
    out->to = f->to[id];
    out->bandwidth = f->cap[id];
    out->latency = f->lat[id];
    out->dim = f->dim_of[id];
    out->tier = f->tier[id];
}

/* "npu 12" or "switch 3 of ib" for a node. */
static void node_name(const comet_fabric *f, int64_t node, char *out, size_t cap)
{
    if (node < f->npus) {
        snprintf(out, cap, "npu %lld", (long long)node);
        return;
    }
    for (int d = 0; d < f->n_dims; d++) {
        const fab_dim *fd = &f->dims[d];
        if (node >= fd->node0 && node < fd->node0 + fd->n_switches) {
            snprintf(out, cap, "%s switch %lld", f->dim_names[d], (long long)(node - fd->node0));
            return;
        }
    }
    snprintf(out, cap, "node %lld", (long long)node);
}

void comet_fabric_link_name(const comet_fabric *f, int64_t id, char *name, size_t cap)
{
    if (id < 0 || id >= f->n_links) {
        snprintf(name, cap, "link %lld", (long long)id);
        return;
    }
    static const char *const tiers[] = {"port", "tier 1", "tier 2"};
    char a[64], b[64];
    node_name(f, f->from[id], a, sizeof a);
    node_name(f, f->to[id], b, sizeof b);
    int t = f->tier[id] < 3 ? f->tier[id] : 2;
    snprintf(name, cap, "%s %s: %s -> %s", f->dim_names[f->dim_of[id]], tiers[t], a, b);
}
