/* Internal: a collective as a list of per-dimension phases, each with an
 * unshared part (latency terms, endpoint delays, reduction memory passes)
 * and a bandwidth part, shared by the collective simulator and the step
 * simulator under congestion. */
#ifndef COMET_SIM_PHASES_H
#define COMET_SIM_PHASES_H

#include "comet/network.h"
#include "comet/simulate.h"

#define MAX_PHASES (2 * COMET_MAX_DIMS)

typedef struct phase {
    int dim;              /* index into the links given to sim_next_chunk */
    double fixed;         /* seconds not shared: latency, endpoint, memory passes */
    double bw;            /* seconds of bandwidth at full rate */
    double tail;          /* seconds the phase runs on after it frees its dimension
                           * for the next chunk: a chain's last pieces draining
                           * (comet_collective_chunk_hold), 0 for the others */
    int keep_to;          /* a broadcast's scatter: the chunk's next phase on its
                           * dimension (its all-gather there), until whose end the
                           * dimension stays the chunk's (the root's links would
                           * starve the ring behind it, as the estimate holds it);
                           * 0 for the others */
} phase;

typedef struct chunk {
    int n_phases, next;   /* phases and the next one to run */
    phase phases[MAX_PHASES];
} chunk;

/* The next chunk of `bytes` of a collective: the order of the m links it
 * visits into order[] (Themis's when loads is given
 * and c is not an all-to-all; else innermost first), its phases into *ch,
 * and its phases' work added to loads[] (per link, seconds). The
 * collective simulator, the step under congestion and the step on the
 * fabric all schedule chunks through it. */
void sim_next_chunk(const comet_sim_options *o, double *loads, const comet_link *links, int m,
                    comet_collective c, double bytes, double outer, int *order, chunk *ch);

/* Themis's orders for `chunks` chunks of collective c (rooted ones over
 * the plan they are priced as) of `bytes` per NPU on groups spanning span:
 * chunk k's order of the m spanned dimensions into order[k*m .. k*m+m),
 * from the work load[] (per system dimension, seconds; updated) holds,
 * each phase costed as o says.
 * Returns m. */
int sim_themis_rows(const comet_sim_options *o, const comet_system *sys,
                    const int64_t span[COMET_MAX_DIMS], comet_collective c, double bytes,
                    int64_t chunks, double *load, uint8_t *order);

#endif
