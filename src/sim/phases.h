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
    int dim;              /* index into the links given to sim_plan_chunk */
    double fixed;         /* seconds not shared: latency, endpoint, memory passes */
    double bw;            /* seconds of bandwidth at full rate */
} phase;

typedef struct chunk {
    int n_phases, next;   /* phases and the next one to run */
    phase phases[MAX_PHASES];
} chunk;

/* The phases of one chunk of `bytes` visiting links[order[0..m-1]]:
 * reduce-scatter up, all-reduce on the last, all-gather down (or one
 * all-to-all per dimension; or the reduce-scatter or all-gather phases). */
void sim_plan_chunk(const comet_sim_options *o, const comet_link *links, const int *order, int m,
                    comet_collective c, double bytes, double outer, chunk *ch);

/* Themis (Rashidi et al. 2022): the order of the m links for a chunk of
 * `bytes` that keeps the most loaded link least loaded once the chunk's
 * phases are added to loads[] (seconds of work assigned per link so far):
 * every order for up to five links, least loaded first beyond. */
void sim_themis_order(const comet_sim_options *o, const double *loads, const comet_link *links,
                      int m, comet_collective c, double bytes, double outer, int *order);

#endif
