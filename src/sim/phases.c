/* A collective as per-dimension phases: the closed forms of
 * docs/collectives.md split into the part links do not share (latency
 * terms, endpoint delays, reduction memory passes) and the bandwidth part.
 * Used by the collective simulator and by the step simulator under
 * congestion, so both cost a phase the same way, and both order a chunk's
 * dimensions the same way under Themis. */
#include "phases.h"

#include <math.h>
#include <string.h>

/* Seconds of one reduction memory pass (read two, write one = 3 passes of
 * the message), per reduce step; ASTRA-sim keeps whole nanoseconds. */
static double memory_time(const comet_sim_options *o, comet_collective c, const comet_link *l,
                          double bytes)
{
    if (o->local_mem_bw <= 0.0 ||
        (c != COMET_COLL_ALL_REDUCE && c != COMET_COLL_REDUCE_SCATTER && c != COMET_COLL_REDUCE) ||
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
    /* the network's price of this chunk's call, by the chunk's own size
     * (under a protocol model the size picks the protocol), split into
     * its latency and its bandwidth part */
    comet_coll_cost cost = comet_collective_cost_1d(c, l, bytes);
    phase p = {.dim = dim, .bw = cost.transfer};
    /* an endpoint delay per message the algorithm sends, and one more */
    double endpoint = o->endpoint_delay > 0.0
                          ? (comet_collective_messages(c, l) + 1.0) * o->endpoint_delay
                          : 0.0;
    p.fixed = (cost.time - cost.transfer) + memory_time(o, c, l, bytes) + endpoint;
    /* a chain holds its dimension for the share its head sends in; the
     * rest, its last pieces going down the chain, runs beside the next
     * chunk's (the estimate's chunk pipeline, docs/collectives.md) */
    double hold = comet_collective_chunk_hold(c, l);
    if (hold < 1.0) {
        p.tail = (1.0 - hold) * (p.fixed + p.bw);
        p.fixed *= hold;
        p.bw *= hold;
    }
    return p;
}

/* The phases of one chunk visiting the spanned dimensions in `order`:
 * the network's own plan (comet_collective_plan_split: an all-to-all of
 * `outer` bytes past links[0] where outer > 0), each phase split into
 * its unshared and bandwidth parts. */
static void plan_chunk(const comet_sim_options *o, const comet_link *links, const int *order,
                       int m, comet_collective c, double bytes, double outer, chunk *ch)
{
    comet_coll_phase plan[COMET_MAX_COLL_PHASES];
    int n = comet_collective_plan_split(c, links, order, m, bytes, outer, plan);
    ch->n_phases = 0;
    ch->next = 0;
    for (int i = 0; i < n && i < MAX_PHASES; i++)
        ch->phases[ch->n_phases++] =
            make_phase(o, plan[i].link, &links[plan[i].link], plan[i].collective, plan[i].bytes);
    /* a broadcast's root sends a chunk's scatter on a dimension once the
     * chunk before is through its all-gather there */
    for (int i = 0; c == COMET_COLL_BROADCAST && i < ch->n_phases; i++)
        for (int j = i + 1; plan[i].collective == COMET_COLL_SCATTER && j < ch->n_phases; j++)
            if (ch->phases[j].dim == ch->phases[i].dim) {
                ch->phases[i].keep_to = j;
                break;
            }
}

/* Themis: the order of dimensions for the next chunk that keeps the most
 * loaded dimension least loaded once the chunk's phases are added (so the
 * chunk's big first phase goes where there is room). All orders are tried
 * for up to five dimensions; beyond that, dimensions are taken least
 * loaded first. Ties keep the earlier (baseline-like) order. */
static void themis_order(const comet_sim_options *o, const double *loads,
                         const comet_link *links, int m, comet_collective c, double bytes,
                         double outer, int *order)
{
    for (int i = 0; i < m; i++)
        order[i] = i;
    if (m > 5) {
        for (int i = 1; i < m; i++)
            for (int j = i; j > 0 && loads[order[j]] < loads[order[j - 1]]; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        return;
    }
    int perm[COMET_MAX_DIMS], best[COMET_MAX_DIMS];
    for (int i = 0; i < m; i++)
        perm[i] = best[i] = i;
    double best_peak = INFINITY;
    for (;;) {
        chunk trial;
        plan_chunk(o, links, perm, m, c, bytes, outer, &trial);
        double load[COMET_MAX_DIMS];
        for (int d = 0; d < m; d++)
            load[d] = loads[d];
        for (int p = 0; p < trial.n_phases; p++)
            load[trial.phases[p].dim] += trial.phases[p].fixed + trial.phases[p].bw;
        double peak = 0.0;
        for (int d = 0; d < m; d++)
            peak = load[d] > peak ? load[d] : peak;
        if (peak < best_peak * (1.0 - 1e-12)) {
            best_peak = peak;
            memcpy(best, perm, sizeof(int) * (size_t)m);
        }
        /* next permutation in lexicographic order */
        int i = m - 2;
        while (i >= 0 && perm[i] > perm[i + 1])
            i--;
        if (i < 0)
            break;
        int j = m - 1;
        while (perm[j] < perm[i])
            j--;
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
        for (int l = i + 1, r = m - 1; l < r; l++, r--) {
            t = perm[l];
            perm[l] = perm[r];
            perm[r] = t;
        }
    }
    memcpy(order, best, sizeof(int) * (size_t)m);
}

void sim_next_chunk(const comet_sim_options *o, double *loads, const comet_link *links, int m,
                    comet_collective c, double bytes, double outer, int *order, chunk *ch)
{
    if (loads && c != COMET_COLL_ALL_TO_ALL) {
        themis_order(o, loads, links, m, c, bytes, outer, order);
    } else {
        for (int i = 0; i < m; i++)
            order[i] = i;
    }
    plan_chunk(o, links, order, m, c, bytes, outer, ch);
    for (int p = 0; loads && p < ch->n_phases; p++)
        loads[ch->phases[p].dim] += ch->phases[p].fixed + ch->phases[p].bw;
}

int sim_themis_rows(const comet_sim_options *o, const comet_system *sys,
                    const int64_t span[COMET_MAX_DIMS], comet_collective c, double bytes,
                    int64_t chunks, double *load, uint8_t *order)
{
    comet_link links[COMET_MAX_DIMS];
    int map[COMET_MAX_DIMS], row[COMET_MAX_DIMS];
    int m = comet_span_links(sys, span, links, map);
    c = comet_collective_priced_as(c, &bytes);
    double by_link[COMET_MAX_DIMS];
    for (int i = 0; i < m; i++)
        by_link[i] = load[map[i]];
    for (int64_t k = 0; k < chunks && m > 0; k++) {
        chunk ch;
        sim_next_chunk(o, by_link, links, m, c, bytes / (double)chunks, 0.0, row, &ch);
        for (int i = 0; i < m; i++)
            order[k * m + i] = (uint8_t)row[i];
    }
    for (int i = 0; i < m; i++)
        load[map[i]] = by_link[i];
    return m;
}
