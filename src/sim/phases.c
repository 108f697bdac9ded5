/* A collective as per-dimension phases: the closed forms of
 * docs/collectives.md split into the part links do not share (latency
 * terms, endpoint delays, reduction memory passes) and the bandwidth part.
 * Used by the collective simulator and by the step simulator under
 * congestion, so both cost a phase the same way. */
#include "phases.h"

#include <math.h>
#include <string.h>

/* Messages one NPU sends in a phase on n NPUs with this algorithm. */
static double sends(comet_algorithm a, comet_collective c, int64_t n)
{
    double steps = (a == COMET_ALGO_HALVING_DOUBLING || a == COMET_ALGO_DOUBLE_BINARY_TREE)
                       ? ceil(log2((double)n))
                       : (double)(n - 1);
    return c == COMET_COLL_ALL_REDUCE ? 2.0 * steps : steps;
}

/* Seconds of one reduction memory pass (read two, write one = 3 passes of
 * the message), per reduce step; ASTRA-sim keeps whole nanoseconds. */
static double memory_time(const comet_sim_options *o, comet_collective c, const comet_link *l,
                          double bytes)
{
    if (o->local_mem_bw <= 0.0 || (c != COMET_COLL_ALL_REDUCE && c != COMET_COLL_REDUCE_SCATTER) ||
        l->in_network_reduction)
        return 0.0;
    double steps = (double)(l->n - 1);
    double pass = bytes / (double)l->n / o->local_mem_bw;
    if (o->astra_rounding)
        pass = floor(pass * 1e9) * 1e-9;
    return steps * 3.0 * pass;
}

static phase make_phase(const comet_sim_options *o, int dim, const comet_link *l,
                        comet_collective c, double bytes)
{
    comet_link no_latency = *l;
    no_latency.latency = 0.0;
    double total = comet_collective_time_1d(c, l, bytes);
    double bw = comet_collective_time_1d(c, &no_latency, bytes);
    phase p = {.dim = dim, .bw = bw};
    p.fixed = (total - bw) + memory_time(o, c, l, bytes) +
              (o->endpoint_delay > 0.0 ? (sends(l->algorithm, c, l->n) + 1.0) * o->endpoint_delay
                                       : 0.0);
    return p;
}

/* The phases of one chunk visiting the spanned dimensions in `order`. */
void sim_plan_chunk(const comet_sim_options *o, const comet_link *links, const int *order, int m,
                    comet_collective c, double bytes, chunk *ch)
{
    ch->n_phases = 0;
    ch->next = 0;
    double s = bytes;
    if (c == COMET_COLL_ALL_TO_ALL) {
        for (int i = 0; i < m; i++)
            ch->phases[ch->n_phases++] = make_phase(o, order[i], &links[order[i]], c, s);
        return;
    }
    if (c == COMET_COLL_ALL_REDUCE) {
        double sizes[COMET_MAX_DIMS];
        for (int i = 0; i < m - 1; i++) {
            sizes[i] = s;
            ch->phases[ch->n_phases++] =
                make_phase(o, order[i], &links[order[i]], COMET_COLL_REDUCE_SCATTER, s);
            s /= (double)links[order[i]].n;
        }
        ch->phases[ch->n_phases++] =
            make_phase(o, order[m - 1], &links[order[m - 1]], COMET_COLL_ALL_REDUCE, s);
        for (int i = m - 2; i >= 0; i--)
            ch->phases[ch->n_phases++] =
                make_phase(o, order[i], &links[order[i]], COMET_COLL_ALL_GATHER, sizes[i]);
        return;
    }
    for (int i = 0; i < m; i++) { /* reduce-scatter, or all-gather (same sizes, as the model) */
        ch->phases[ch->n_phases++] = make_phase(o, order[i], &links[order[i]], c, s);
        s /= (double)links[order[i]].n;
    }
}

