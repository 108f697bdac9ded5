/* Private to src/network: the fabric as a graph (NPUs, switches and
 * directed links with a bandwidth and a latency each), the part of it each
 * network dimension owns, and the two functions every topology gives the
 * fabric (topo_*.c): how many switches and links one dimension adds, and
 * the path between two NPUs along it. Link ids are laid out by formula per
 * topology, so routing is arithmetic, not a graph search. docs/fabric.md. */
#ifndef COMET_NETWORK_FABRIC_H
#define COMET_NETWORK_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comet/fabric.h"
#include "comet/network.h"

/* Longest path a route may have (3-tier Clos: 6 links, a ring or a line
 * axis up to its size: routes longer than this are refused at build). */
#define FAB_MAX_PATH 4096

typedef struct fab_dim {
    int index;
    comet_topology topo;
    int64_t size, inner, outer;   /* NPUs along it, inside it, instances outside it */
    int64_t link0, n_links;       /* its links: [link0, link0 + n_links) */
    int64_t node0, n_switches;    /* its switches: node ids from node0 */
    double bw, lat;               /* B (efficiency applied) and a */
    /* torus / mesh */
    int m;
    int64_t axes[COMET_MAX_AXES], stride[COMET_MAX_AXES];
    bool wrap;
    /* ring */
    bool uni;
    /* Clos: per pod (outer instance) P endpoints on L1 leaves; 3 tiers group
     * the leaves into Q aggregation blocks */
    comet_clos_ports ports;
    bool rail, spray;
    uint64_t seed;                /* ECMP: the hashing's seed (0: the default hashing) */
    int64_t P, L1, G, Q;
    int64_t leaf_links0, up_links0, top_links0; /* NPU-leaf, leaf-up, agg-core link bases */
    /* whether its NPUs see unlike networks (its topology's uneven, asked
     * once at build) and why */
    bool uneven;
    char why_uneven[160];
    /* congestion control on its links, defaults filled (docs/roce.md) */
    comet_cc_params cc;
} fab_dim;

struct comet_fabric {
    int64_t npus, n_nodes, n_links;
    int n_dims;
    bool fluid;                   /* a dimension runs congestion control: the fluid engine */
    fab_dim dims[COMET_MAX_DIMS];
    int32_t *from, *to;
    double *cap, *lat;
    uint8_t *dim_of, *tier;       /* per link: dimension, tier (0 the NPU's own port) */
    char system[COMET_NAME_LEN];
    char dim_names[COMET_MAX_DIMS][32];
};

/* One topology's part of the fabric (a member of net_topology). */
typedef struct fab_ops {
    /* Fill d->n_links and d->n_switches (and any layout fields). */
    void (*layout)(fab_dim *d);
    /* Write the dimension's links with fab_set (from link d->link0 on). */
    void (*build)(comet_fabric *f, const fab_dim *d);
    /* The links from position a to position b along d, for the NPUs at
     * inner index `in` of outer instance `out`; returns the count (<= cap).
     * `pick` chooses among equal paths as it is (the caller mixed a hash
     * into it, or pinned it). */
    int (*route)(const comet_fabric *f, const fab_dim *d, int64_t in, int64_t out, int64_t a,
                 int64_t b, uint64_t pick, int32_t *path, int cap);
    /* The NPU's own port on a switch: its link up to it (down: from it);
     * NULL where NPUs hang off no switch of their own (rings, tori). */
    int32_t (*port)(const fab_dim *d, int64_t in, int64_t out, int64_t pos, bool down);
    /* Whether the NPUs along d see unlike networks (hashed routes, an
     * oversubscribed tier, leaves filled unevenly, a mesh's edges), the
     * reason into why (named by the dimension `name`); NULL: never, every
     * NPU's view is every other's (rings, fully connected, switches). */
    bool (*uneven)(const fab_dim *d, const char *name, char *why, size_t cap);
} fab_ops;

static inline void fab_set(comet_fabric *f, int64_t id, int64_t from, int64_t to, double cap,
                           double lat, const fab_dim *d, int tier)
{
    f->from[id] = (int32_t)from;
    f->to[id] = (int32_t)to;
    f->cap[id] = cap;
    f->lat[id] = lat;
    f->dim_of[id] = (uint8_t)d->index;
    f->tier[id] = (uint8_t)tier;
}

/* The NPU at position pos of dimension d, inner index in, instance out. */
static inline int64_t fab_npu(const fab_dim *d, int64_t in, int64_t out, int64_t pos)
{
    return in + d->inner * (pos + d->size * out);
}

/* The instance index of a per-instance topology (ring, torus, switch). */
static inline int64_t fab_instance(const fab_dim *d, int64_t in, int64_t out)
{
    return out * d->inner + in;
}

/* A 64-bit mix (splitmix64's finalizer): ECMP's reproducible hash. */
static inline uint64_t fab_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

#endif
