/* Collectives and point-to-point transfers over a group that spans several
 * network dimensions. A multi-dimensional collective is run hierarchically
 * (ASTRA-sim 2.0, Won et al. 2023; Themis, Rashidi et al. 2022): reduce-
 * scatter up the spanned dimensions with the data shrinking by each span,
 * all-reduce on the outermost, all-gather back down; all-to-all runs once per
 * dimension on the full buffer. The buffer is cut into
 * sys->collective_chunks chunks that flow through these phases as a
 * pipeline, so the total is sum_i T_i + (k-1) * max_i T_i with every stage
 * time T_i taken for one chunk; a stage is one dimension (an inner
 * dimension's reduce-scatter and all-gather share its links). Called in the inner loop of the strategy
 * search: fixed-size arrays on the stack, no allocation.
 * Formulas and sources: docs/collectives.md. */
#include "comet/network.h"

#include <math.h>

#include "../vocab/vocab.h"

/* The one-dimension view of dims[d] for a group of n NPUs along it. An
 * efficiency of 0 means "not given" and counts as 1, as elsewhere in the
 * library. */
void comet_link_of(const comet_net_dim *d, int64_t n, comet_link *l)
{
    double eff = vocab_efficiency(d->efficiency);
    l->n = n;
    l->topology = d->topology;
    l->algorithm = d->algorithm;
    l->bandwidth = d->bandwidth * eff;
    l->latency = d->latency;
    l->in_network_reduction = d->in_network_reduction;
}

static inline int n_dims_of(const comet_system *sys)
{
    int nd = sys->n_dims;
    if (nd < 0)
        return 0;
    return nd > COMET_MAX_DIMS ? COMET_MAX_DIMS : nd;
}

/* Running sum and maximum of phase times, for the chunk pipeline. */
typedef struct phases {
    double sum;
    double max;
} phases;

static inline void add_phase(phases *p, double t)
{
    p->sum += t;
    p->max = t > p->max ? t : p->max;
}

double comet_collective_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                             comet_collective c, double bytes)
{
    if (!sys || !span || !(bytes > 0.0) || c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return 0.0;

    comet_link links[COMET_MAX_DIMS];
    int m = 0;
    int nd = n_dims_of(sys);
    for (int d = 0; d < nd; d++)
        if (span[d] > 1)
            comet_link_of(&sys->dims[d], span[d], &links[m++]);
    if (m == 0)
        return 0.0;

    double k = sys->collective_chunks > 1 ? (double)sys->collective_chunks : 1.0;
    double s = bytes / k;   /* one chunk, as it enters the first phase */
    phases ph = {0.0, 0.0};

    switch (c) {
    case COMET_COLL_ALL_REDUCE:
        for (int i = 0; i < m; i++) {
            if (i == m - 1) {
                add_phase(&ph, comet_collective_time_1d(COMET_COLL_ALL_REDUCE, &links[i], s));
            } else {
                /* RS and AG on one dimension share its links: the pipeline's
                 * steady state is bounded by each dimension's busy time. */
                add_phase(&ph, comet_collective_time_1d(COMET_COLL_REDUCE_SCATTER, &links[i], s) +
                                   comet_collective_time_1d(COMET_COLL_ALL_GATHER, &links[i], s));
                s /= (double)links[i].n;
            }
        }
        break;
    case COMET_COLL_REDUCE_SCATTER:
    case COMET_COLL_ALL_GATHER:
        /* all-gather mirrors reduce-scatter: the same phases in reverse
         * order, so the same sizes and the same sum and max */
        for (int i = 0; i < m; i++) {
            add_phase(&ph, comet_collective_time_1d(c, &links[i], s));
            s /= (double)links[i].n;
        }
        break;
    case COMET_COLL_ALL_TO_ALL:
        for (int i = 0; i < m; i++)
            add_phase(&ph, comet_collective_time_1d(c, &links[i], s));
        break;
    default:
        return 0.0;
    }
    if (!(ph.sum < (double)INFINITY))
        return (double)INFINITY;
    return k > 1.0 ? ph.sum + (k - 1.0) * ph.max : ph.sum;
}

double comet_p2p_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS], double bytes)
{
    if (!sys || !span || !(bytes > 0.0))
        return 0.0;
    for (int d = n_dims_of(sys) - 1; d >= 0; d--) {
        if (span[d] <= 1)
            continue;
        comet_link l;
        comet_link_of(&sys->dims[d], span[d], &l);
        if (!(l.bandwidth > 0.0))
            return (double)INFINITY;
        double a = l.latency > 0.0 ? l.latency : 0.0;
        return a + bytes / l.bandwidth;
    }
    return 0.0;
}
