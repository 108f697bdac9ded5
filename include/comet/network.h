/* Collective and point-to-point communication times on a multi-dimensional
 * network: one-dimension algorithms (ring, direct, halving-doubling, double
 * binary tree) composed hierarchically across the dimensions a group spans. */
#ifndef COMET_NETWORK_H
#define COMET_NETWORK_H

#include <stdbool.h>
#include <stdint.h>
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
} comet_link;

/* The link parameters of dimension d for a group of n NPUs along it
 * (efficiency applied to the bandwidth; 0 efficiency counts as 1). */
void comet_link_of(const comet_net_dim *d, int64_t n, comet_link *l);

/* Time of collective c of `bytes` per NPU (the full buffer each NPU holds
 * before a reduce-scatter / after an all-gather / the all-reduce buffer)
 * on one dimension. Returns 0 for n <= 1 or bytes <= 0. */
double comet_collective_time_1d(comet_collective c, const comet_link *link, double bytes);

/* Time of collective c of `bytes` per NPU over a group that spans span[d]
 * NPUs of each dimension d of sys (spans of 1 are skipped). Hierarchical:
 * reduce-scatter up the dimensions, all-reduce on the last, all-gather back
 * down; data shrinks by the span at each step; sys->collective_chunks chunks
 * pipeline across the phases. */
double comet_collective_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                             comet_collective c, double bytes);

/* Point-to-point transfer of bytes between neighbours of a group that
 * spans span[] (pipeline stage boundary): uses the outermost spanned dim. */
double comet_p2p_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS], double bytes);

#endif
