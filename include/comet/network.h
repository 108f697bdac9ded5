/* Collective and point-to-point communication times on a multi-dimensional
 * network: one-dimension algorithms (ring, direct, halving-doubling, double
 * binary tree) composed hierarchically across the dimensions a group spans. */
#ifndef COMET_NETWORK_H
#define COMET_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/error.h"
#include "comet/model.h"
#include "comet/system.h"

/* Parameters of one dimension as seen by one collective. */
typedef struct comet_link {
    int64_t n;                 /* participants along this dimension */
    comet_topology topology;
    comet_algorithm algorithm;
    double bandwidth;          /* effective bytes/s per NPU (efficiency applied) */
    double latency;            /* seconds per step */
    bool in_network_reduction;
    /* The dimension, when its collectives are priced by message size
     * beyond the alpha-beta closed forms (a protocol model or measured
     * bus-bandwidth curves); NULL for the closed forms alone. */
    const comet_net_dim *size_model;
    /* The topology's shape (torus axes, Clos tiers) and the NPUs of the
     * dimensions inside this one: a Clos carries that many groups'
     * collectives at once (every inner position runs the same phase in a
     * training step), so its oversubscribed tiers are priced with them.
     * NULL / 1 from comet_link_of; comet_span_links sets inner. */
    const comet_net_shape *shape;
    int64_t inner;
    /* NPUs along the whole dimension (0: n): a Clos's pod, whose uplinks
     * ECMP hashes every group's connections onto */
    int64_t size;
    /* Places between the group's members along the dimension (1: next to
     * each other): a strategy's group sits the spans of the rank digits
     * inside its own apart (comet_strategy_group_spacing), so fewer of its
     * members share a Clos's leaf. 1 from comet_link_of. */
    int64_t spacing;
    /* The chunks the buffer is cut into (the system's collective_chunks):
     * a torus or mesh group whose axes differ pipelines them through its
     * parts (docs/fabric.md). 1 from comet_link_of. */
    int64_t chunks;
} comet_link;

/* ---- topology shapes (src/network/shape.c, docs/fabric.md) ------------------ */

/* NPUs the dimensions 0..d of sys hold together (one Clos pod's
 * endpoints); 0 when one of them is auto (size 0). */
int64_t comet_net_pod_npus(const comet_system *sys, int d);

/* A Clos's port split: leaf down and up ports, aggregation down and up
 * (3 tiers), from radix and oversubscription (down:up = o:1, down =
 * floor(radix * o / (1 + o))). */
typedef struct comet_clos_ports {
    int tiers;
    int64_t down[COMET_MAX_TIERS], up[COMET_MAX_TIERS];
    /* a tier-t switch's uplink bandwidth in NPU ports: up[t] on a fat tree
     * or rail, radix / oversubscription (any ratio) on FRED's L1s */
    double up_cap[COMET_MAX_TIERS];
    int64_t max_endpoints;     /* NPUs the tree connects at most */
} comet_clos_ports;

void comet_clos_ports_of(comet_topology t, const comet_net_shape *sh, comet_clos_ports *out);

/* Leaves one pod of a Clos dimension has, `size` NPUs along it and `inner`
 * inside it: a fat tree fills each leaf with the pod's NPUs in order
 * (ceil(size x inner / down)); a rail network gives each of the `inner`
 * rails its own (inner x ceil(size / down)). The fabric, the shape check
 * and the design's cost all count them so. */
int64_t comet_clos_leaves(comet_topology t, int64_t size, int64_t inner,
                          const comet_clos_ports *p);

/* Whether dimension d of a system can be built with `size` NPUs along it
 * and `inner` NPUs inside it (sizes resolved): NULL when it can, else
 * the key at fault ("shape", "radix", "tiers", "oversubscription",
 * "bidirectional", "routing", "size") with the reason in msg. */
const char *comet_net_shape_problem(const comet_net_dim *dim, int64_t size, int64_t inner,
                                    char *msg, size_t cap);

/* The protocol a collective call is priced with (docs/collectives.md,
 * "Protocols and measured curves"). */
typedef enum comet_protocol {
    COMET_PROTO_NONE = 0,   /* the alpha-beta closed form, no protocol model */
    COMET_PROTO_LL,         /* NCCL's low-latency protocol: 8-byte stores, half of them flags */
    COMET_PROTO_LL128,      /* 128-byte lines, 8 bytes of each a flag */
    COMET_PROTO_SIMPLE,     /* bulk copies behind a fence */
    COMET_PROTO_MEASURED,   /* a measured bus-bandwidth curve */
    COMET_PROTO_COUNT
} comet_protocol;

const char *comet_protocol_name(comet_protocol p);

/* One collective call on one dimension: its time, the part of it that is
 * bandwidth (what concurrent transfers share under congestion; the rest is
 * latency), and the protocol it is priced with. */
typedef struct comet_coll_cost {
    double time;
    double transfer;
    comet_protocol protocol;
} comet_coll_cost;

/* The link parameters of dimension d for a group of n NPUs along it
 * (efficiency applied to the bandwidth; 0 efficiency counts as 1). */
void comet_link_of(const comet_net_dim *d, int64_t n, comet_link *l);

/* Chunks a collective's buffer is cut into, pipelined through its phases:
 * sys->collective_chunks, 1 when it is not given (0) or below 1. */
static inline int64_t comet_collective_chunks(const comet_system *sys)
{
    return sys->collective_chunks > 1 ? sys->collective_chunks : 1;
}

/* The links of a group that spans span[d] NPUs of each dimension d of sys:
 * one per dimension it spans (spans of 1 are skipped), innermost first,
 * with dims[i] the dimension of links[i]. Returns how many. */
int comet_span_links(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                     comet_link links[COMET_MAX_DIMS], int dims[COMET_MAX_DIMS]);

/* The same for a group whose members sit spacing[d] apart along each
 * dimension d (NULL: adjacent; comet_strategy_group_spacing), which the
 * Clos view reads (comet_link.spacing). */
int comet_span_links_placed(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                            const int64_t *spacing, comet_link links[COMET_MAX_DIMS],
                            int dims[COMET_MAX_DIMS]);

/* Time of collective c of `bytes` per NPU (the full buffer each NPU holds
 * before a reduce-scatter / after an all-gather / the all-reduce buffer)
 * on one dimension. Returns 0 for n <= 1 or bytes <= 0. */
double comet_collective_time_1d(comet_collective c, const comet_link *link, double bytes);

/* The same call with its bandwidth part and protocol; .time is what
 * comet_collective_time_1d returns. */
comet_coll_cost comet_collective_cost_1d(comet_collective c, const comet_link *link, double bytes);

/* The share of collective c's time on a link that one chunk holds it
 * before the next chunk may start: 1 but for a chain (a broadcast or a
 * reduce pipelined in pieces), whose next chunk's pieces follow the last
 * piece its head sent, so k chunks down a chain of n pieces are one chain
 * of k n pieces, and for a halving-doubling all-reduce whose steps load
 * different links (a ring, torus, mesh or fully-connected group of a
 * power of two), whose next chunk's halving runs beside its doubling (the
 * estimate's chunk pipeline and the simulators' phases both take it from
 * here). */
double comet_collective_chunk_hold(comet_collective c, const comet_link *link);
/* The share of the latency part (comet_collective_cost_1d's time less its
 * transfer) that one chunk holds the link for. An all-reduce run as a
 * reduce-scatter pass then an all-gather pass (any algorithm but the
 * double binary tree and in-network reduction) takes one pass's: the next
 * chunk's reduce-scatter runs beside this chunk's all-gather, their
 * messages' latencies side by side, so a ring all-reduce of k chunks pays
 * (k + 1)(n - 1) hop latencies, not 2k(n - 1). The ring schedule over a
 * torus's or mesh's g axes is a pass of g phases, the next chunk one phase
 * behind: 1/g of a pass's latency (1/(2g) of an all-reduce's). Otherwise
 * the share comet_collective_chunk_hold gives the whole time. The
 * phase-level simulator keeps ASTRA-sim's one active chunk and holds the
 * whole latency (docs/collectives.md, "Latency in chunks"). */
double comet_collective_chunk_hold_latency(comet_collective c, const comet_link *link);

/* nccl-tests' bus-bandwidth factor of collective c on n NPUs: busbw =
 * algbw * factor, algbw = bytes / time; 2(n-1)/n for all-reduce, (n-1)/n
 * for reduce-scatter, all-gather and all-to-all; 0 for n <= 1. */
double comet_busbw_factor(comet_collective c, int64_t n);

/* What nccl-tests would print for collective c of `bytes` per NPU (its
 * "size") run as one call over n NPUs of dimension dim of sys. */
typedef struct comet_coll_price {
    double time;             /* seconds */
    double algbw;            /* bytes / time */
    double busbw;            /* algbw * comet_busbw_factor(c, n) */
    comet_protocol protocol; /* what priced it */
} comet_coll_price;

/* Fails (COMET_EINPUT, the argument named) for a dimension sys does not
 * have, n < 2, bytes <= 0 or a collective out of range. */
comet_status comet_collective_price_on(const comet_system *sys, int dim, comet_collective c,
                                       int64_t n, double bytes, comet_coll_price *out,
                                       comet_error *err);

/* The protocol each spanned dimension's first phase is priced with when
 * collective c of `bytes` per NPU runs over a group spanning span[] (one
 * chunk of bytes / collective_chunks, as comet_collective_time prices it):
 * out[d] for every dimension d of sys, COMET_PROTO_NONE where the group
 * spans none or the dimension has no size model. */
void comet_collective_protocols(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                comet_collective c, double bytes,
                                comet_protocol out[COMET_MAX_DIMS]);

/* Messages one NPU sends in collective c on one dimension, as its
 * algorithm runs it (an all-reduce is two passes); 0 for n <= 1. The
 * simulator charges an endpoint delay per message. */
double comet_collective_messages(comet_collective c, const comet_link *link);

/* One phase of a collective over several dimensions: collective c of
 * `bytes` per NPU on the link links[link] (an index into the links given
 * to comet_collective_plan). */
typedef struct comet_coll_phase {
    int link;
    comet_collective collective;
    double bytes;
} comet_coll_phase;

#define COMET_MAX_COLL_PHASES (2 * COMET_MAX_DIMS - 1)

/* A barrier is an all-reduce of one fp32 element, as
 * torch.distributed.barrier runs it on NCCL. */
#define COMET_BARRIER_BYTES 4.0

/* The collective a barrier is priced as: an all-reduce of
 * COMET_BARRIER_BYTES, which *bytes becomes. Every other collective is
 * returned as it is: the rooted ones (broadcast, reduce, gather, scatter)
 * have closed forms of their own per topology (docs/collectives.md,
 * "Rooted collectives"); on a dimension with measured curves or a
 * protocol model a scatter or gather takes the all-gather's, a broadcast
 * or reduce the all-reduce's. Every pricing function below applies it. */
comet_collective comet_collective_priced_as(comet_collective c, double *bytes);

/* The hierarchical plan of collective c of `bytes` per NPU over m links
 * visited in the order order[0..m-1] (innermost first for the closed
 * form; the simulator's schedulers may pick another order per chunk):
 * all-reduce is a reduce-scatter up the first m-1 links with the data
 * shrinking by each link's size, an all-reduce on the last and an
 * all-gather back down; reduce-scatter and all-gather visit every link
 * once with the same shrinking sizes (all-gather's phases mirror
 * reduce-scatter's); all-to-all runs once per link on the full buffer.
 * Rooted collectives (rooted at the group's first member): a broadcast
 * is planned as an all-reduce with scatters for its reduce-scatters and
 * a broadcast on the last link, a reduce with a reduce on the last and
 * gathers for its all-gathers; a scatter as an all-gather (from the root
 * out), a gather the same phases in reverse order (toward the root).
 * Fills out[] and returns the number of phases (0 for an unknown c). */
int comet_collective_plan(comet_collective c, const comet_link *links, const int *order, int m,
                          double bytes, comet_coll_phase out[COMET_MAX_COLL_PHASES]);
/* The same with, for an all-to-all, a buffer of `outer` bytes on every
 * link but links[0] (the group's innermost spanned dimension), which
 * keeps `bytes`: an all-to-all whose copies are de-duplicated per
 * destination across the outer dimensions (DeepEP's dispatch, docs/
 * model.md 17.1). outer <= 0, or another collective: the plan above. */
int comet_collective_plan_split(comet_collective c, const comet_link *links, const int *order,
                                int m, double bytes, double outer,
                                comet_coll_phase out[COMET_MAX_COLL_PHASES]);

/* Time of collective c of `bytes` per NPU over a group that spans span[d]
 * NPUs of each dimension d of sys (spans of 1 are skipped). Hierarchical:
 * reduce-scatter up the dimensions, all-reduce on the last, all-gather back
 * down; data shrinks by the span at each step; sys->collective_chunks chunks
 * pipeline across the phases. */
double comet_collective_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                             comet_collective c, double bytes);
/* ... with an all-to-all's buffer past the innermost spanned dimension
 * `outer` bytes (comet_collective_plan_split; outer <= 0: bytes). */
double comet_collective_time_split(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                   comet_collective c, double bytes, double outer);
/* ... over a group whose members along dimension d sit spacing[d] places
 * apart (a strategy's groups: comet_strategy_group_spacing; NULL: next to
 * each other, as the two above take them). Only a Clos prices it: it
 * decides how many members share a leaf. */
double comet_collective_time_placed(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                    const int64_t *spacing, comet_collective c, double bytes,
                                    double outer);
/* Whether a group's spacing changes any price on sys (a dimension is a
 * Clos); where not, callers may pass NULL and skip working it out. */
bool comet_spacing_priced(const comet_system *sys);

/* The chunks a collective of `bytes` over span[] is cut into: the
 * system's collective_chunks, or, where a spanned dimension prices calls
 * by size (protocols, bus_bandwidth), the fastest of 1, 2, 4, ... up to
 * it (docs/collectives.md, chunk pipelining). comet_collective_time and
 * the simulator use the same count. */
int64_t comet_collective_chunks_for(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                    comet_collective c, double bytes);
int64_t comet_collective_chunks_split(const comet_system *sys,
                                      const int64_t span[COMET_MAX_DIMS], comet_collective c,
                                      double bytes, double outer);

/* Point-to-point transfer of bytes between neighbours of a group that
 * spans span[] (pipeline stage boundary): uses the outermost spanned dim. */
double comet_p2p_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS], double bytes);

/* The dimension such a transfer uses: the outermost one span[] spans;
 * -1 when it spans none. */
int comet_p2p_dim(const comet_system *sys, const int64_t span[COMET_MAX_DIMS]);

/* The dimension a transfer between NPUs a and b (numbered innermost
 * dimension first) uses: the first along which their coordinates
 * differ; the outermost dimension when they differ on none before it. */
int comet_p2p_dim_between(const comet_system *sys, int64_t a, int64_t b);

/* A point-to-point transfer of bytes on dimension d: its latency plus
 * the bytes at its effective bandwidth (efficiency applied), the latency
 * alone for 0 bytes; infinite on a dimension without bandwidth, 0 for no
 * such dimension. */
double comet_p2p_time_on(const comet_system *sys, int d, double bytes);

/* The factor on the bytes' time of a transfer on dimension d when every
 * NPU of the system sends one at once to the NPU `stride` places on along
 * d (a pipeline's stage boundary: every rank of a stage sends to its peer
 * in the next), `along` places of d in use (a dimension of size auto has
 * no size of its own): 1 where each send has its path to itself (a
 * switch, a ring's neighbours); on a Clos the sends that leave a leaf
 * (pod) share its uplinks, their count over the uplinks sprayed, the
 * expected busiest uplink's hashed (ECMP); at least 1 (docs/fabric.md,
 * "Pipeline sends"). */
double comet_p2p_shift_load(const comet_system *sys, int d, int64_t stride, int64_t along);

/* The same transfer in its two parts, latency (*latency) and bytes at the
 * bandwidth (*transfer: infinite without bandwidth); both 0 for no such
 * dimension. comet_p2p_time_on is their sum. */
void comet_p2p_parts_on(const comet_system *sys, int d, double bytes, double *latency,
                        double *transfer);

#endif
