/* Collectives and point-to-point transfers over a group that spans several
 * network dimensions. A multi-dimensional collective is run hierarchically
 * (ASTRA-sim 2.0, Won et al. 2023; Themis, Rashidi et al. 2022): reduce-
 * scatter up the spanned dimensions with the data shrinking by each span,
 * all-reduce on the outermost, all-gather back down; all-to-all runs once per
 * dimension on the full buffer (or, de-duplicated as DeepEP dispatches,
 * on a smaller buffer past the innermost spanned dimension: the _split
 * variants). The buffer is cut into
 * sys->collective_chunks chunks that flow through these phases as a
 * pipeline, so the total is sum_i T_i + (k-1) * max_i T_i with every stage
 * time T_i taken for one chunk; a stage is one dimension (an inner
 * dimension's reduce-scatter and all-gather share its links). One plan
 * (comet_collective_plan) serves this closed form and the simulator's
 * per-chunk phases (src/sim/phases.c). Called in the inner loop of the
 * strategy search: fixed-size arrays on the stack, no allocation.
 * Formulas and sources: docs/collectives.md. */
#include "comet/network.h"
#include "families.h"

#include <math.h>
#include <string.h>

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
    l->size_model = d->protocols != COMET_PROTOCOLS_NONE || d->bus.n_curves > 0 ? d : NULL;
    l->shape = &d->shape;
    l->inner = 1;
    l->size = d->size > n ? d->size : n;
    l->spacing = 1;
    l->chunks = 1;
}

static inline int n_dims_of(const comet_system *sys)
{
    int nd = sys->n_dims;
    if (nd < 0)
        return 0;
    return nd > COMET_MAX_DIMS ? COMET_MAX_DIMS : nd;
}

/* Inline: the closed form below runs it in the strategy search's inner loop. */
static inline int span_links(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                             const int64_t *spacing, comet_link links[COMET_MAX_DIMS],
                             int dims[COMET_MAX_DIMS])
{
    int m = 0;
    int nd = n_dims_of(sys);
    int64_t inner = 1;
    for (int d = 0; d < nd; d++) {
        if (span[d] > 1) {
            comet_link_of(&sys->dims[d], span[d], &links[m]);
            links[m].inner = inner;
            links[m].chunks = comet_collective_chunks(sys);
            if (spacing && spacing[d] > 1)
                links[m].spacing = spacing[d];
            dims[m++] = d;
        }
        inner *= sys->dims[d].size > 0 ? sys->dims[d].size : 1;
    }
    return m;
}

int comet_span_links(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                     comet_link links[COMET_MAX_DIMS], int dims[COMET_MAX_DIMS])
{
    return span_links(sys, span, NULL, links, dims);
}

int comet_span_links_placed(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                            const int64_t *spacing, comet_link links[COMET_MAX_DIMS],
                            int dims[COMET_MAX_DIMS])
{
    return span_links(sys, span, spacing, links, dims);
}

int comet_collective_plan(comet_collective c, const comet_link *links, const int *order, int m,
                          double bytes, comet_coll_phase out[COMET_MAX_COLL_PHASES])
{
    return comet_collective_plan_split(c, links, order, m, bytes, 0.0, out);
}

int comet_collective_plan_split(comet_collective c, const comet_link *links, const int *order,
                                int m, double bytes, double outer,
                                comet_coll_phase out[COMET_MAX_COLL_PHASES])
{
    c = comet_collective_priced_as(c, &bytes);
    int n = 0;
    double s = bytes;
    if (m > COMET_MAX_DIMS)
        m = COMET_MAX_DIMS;
    switch (c) {
    case COMET_COLL_ALL_REDUCE:
    case COMET_COLL_BROADCAST:
    case COMET_COLL_REDUCE: {
        /* up the first m-1 links, the collective itself on the last, back
         * down: reduce-scatter and all-gather around an all-reduce; from
         * the root, scatter and all-gather around a broadcast; to it,
         * reduce-scatter and gather around a reduce */
        comet_collective up =
            c == COMET_COLL_BROADCAST ? COMET_COLL_SCATTER : COMET_COLL_REDUCE_SCATTER;
        comet_collective down = c == COMET_COLL_REDUCE ? COMET_COLL_GATHER : COMET_COLL_ALL_GATHER;
        double sizes[COMET_MAX_DIMS];
        for (int i = 0; i < m - 1; i++) {
            sizes[i] = s;
            out[n++] = (comet_coll_phase){order[i], up, s};
            s /= (double)links[order[i]].n;
        }
        if (m > 0)
            out[n++] = (comet_coll_phase){order[m - 1], c, s};
        for (int i = m - 2; i >= 0; i--)
            out[n++] = (comet_coll_phase){order[i], down, sizes[i]};
        break;
    }
    case COMET_COLL_REDUCE_SCATTER:
    case COMET_COLL_ALL_GATHER:
    case COMET_COLL_SCATTER:
        /* all-gather mirrors reduce-scatter: the same phases in reverse
         * order, so the same sizes (and the same sum and maximum); a
         * scatter runs them from the root out, each line's buffer the
         * part of S its root got */
        for (int i = 0; i < m; i++) {
            out[n++] = (comet_coll_phase){order[i], c, s};
            s /= (double)links[order[i]].n;
        }
        break;
    case COMET_COLL_GATHER: {
        /* the scatter's phases backwards, toward the root */
        double sizes[COMET_MAX_DIMS];
        for (int i = 0; i < m; i++) {
            sizes[i] = s;
            s /= (double)links[order[i]].n;
        }
        for (int i = m - 1; i >= 0; i--)
            out[n++] = (comet_coll_phase){order[i], c, sizes[i]};
        break;
    }
    case COMET_COLL_ALL_TO_ALL:
        /* link 0 is the group's innermost spanned dimension */
        for (int i = 0; i < m; i++)
            out[n++] = (comet_coll_phase){order[i], c,
                                          order[i] == 0 || !(outer > 0.0) ? s : outer};
        break;
    default:
        break;
    }
    return n;
}

/* A broadcast's root sends a chunk's scatter on an inner dimension once
 * the chunk before is through its all-gather there (the scatter's n-1
 * connections through the root's links would starve the ring behind
 * it): it holds the dimension from its scatter to its all-gather, through
 * the outer dimensions' phases between (the root a chain's head there,
 * until it has sent its pieces). hold[] gets those spans. */
NET_COLD static void broadcast_holds(const comet_link *links, const int *order, int m,
                                     double bytes, double *hold)
{
    comet_coll_phase plan[COMET_MAX_COLL_PHASES];
    int n = comet_collective_plan(COMET_COLL_BROADCAST, links, order, m, bytes, plan);
    for (int i = 0; i < n; i++) {
        if (plan[i].collective != COMET_COLL_SCATTER)
            continue;
        double span = 0.0;
        int j = i;
        for (; j < n; j++) {
            const comet_link *l = &links[plan[j].link];
            span += comet_collective_time_1d(plan[j].collective, l, plan[j].bytes) *
                    comet_collective_chunk_hold(plan[j].collective, l);
            if (j > i && plan[j].link == plan[i].link)
                break;
        }
        if (j < n)
            hold[plan[i].link] = span;
    }
}

/* What a chunk's phase of time t (bytes on link l) holds the link for
 * before the next chunk's may start, as its transfer's and its latency's
 * parts: the transfer for the chunk-hold share, the latency for the
 * latency's (an all-reduce's two passes run their latencies beside the
 * next chunk's; comet_collective_chunk_hold,
 * comet_collective_chunk_hold_latency). */
static void chunk_held(comet_collective c, const comet_link *l, double bytes, double t,
                       bool split, double *transfer, double *latency)
{
    double hold = comet_collective_chunk_hold(c, l);
    double latency_hold = net_chunk_hold_latency(c, l, hold);
    if (!(l->latency > 0.0) || (!split && latency_hold == hold)) {
        *transfer = hold * t;
        *latency = 0.0;
        return;
    }
    double part = comet_collective_cost_1d(c, l, bytes).transfer;
    *transfer = hold * part;
    *latency = latency_hold * (t - part);
}

/* The closed form runs the plan with its links innermost first; a chunk
 * pipeline's stage is one dimension. For a rooted collective an inner
 * dimension's phases (a reduce's reduce-scatter and gather, a broadcast's
 * scatter and all-gather) are one stage, their times added up, held by a
 * chunk until its last phase there:
 * total = sum_i T_i + (k - 1) max_i H_i over the dimensions' busy times
 * T_i, H_i the time a chunk holds the stage before the next may start: T_i
 * but where the stage is a chain (a broadcast or a reduce pipelined in
 * pieces), whose next chunk's pieces follow the last piece its head sent
 * (comet_collective_chunk_hold): k chunks down a chain of n pieces and d
 * steps more are one chain of k n pieces. A symmetric collective's
 * dimension works on other chunks between a chunk's phases there (an
 * all-reduce's inner dimension reduce-scatters the next chunks while this
 * one is outside), so each dimension bounds the total by its own work and
 * what must come before its first phase and after its last:
 * total = max(sum_i T_i, max_i (F_i + k T_i + D_i)), F_i the phases before
 * dimension i's first, D_i those after its last, for one chunk (for
 * reduce-scatter, all-gather and all-to-all, one phase a dimension, it is
 * the sum above; an all-reduce's inner dimension bounds it by k times its
 * reduce-scatter and all-gather, as the flows run it). A reduce over three
 * or more dimensions is bounded so too, each dimension working on one
 * chunk at a time (the flows' per-dimension queues), a dimension's bound
 * raised by what it idles while the first chunk is out on the outer
 * dimensions beyond the other chunks' reduce-scatters there. */
static double pipelined_time(const comet_link *links, int m, comet_collective c, double bytes,
                             double outer, double k)
{
    double sum = 0.0, max = 0.0;
    if (m == 1) {
        /* the common case: the plan is the collective itself on one link */
        sum = max = comet_collective_time_1d(c, &links[0], bytes / k);
        if (k > 1.0) {
            double transfer, latency;
            chunk_held(c, &links[0], bytes / k, sum, false, &transfer, &latency);
            max = transfer + latency;
        }
    } else {
        comet_coll_phase plan[COMET_MAX_COLL_PHASES];
        int order[COMET_MAX_DIMS];
        for (int i = 0; i < COMET_MAX_DIMS; i++)
            order[i] = i;
        int n = comet_collective_plan_split(c, links, order, m, bytes / k, outer / k, plan);
        double busy[COMET_MAX_DIMS], hold[COMET_MAX_DIMS], times[COMET_MAX_COLL_PHASES];
        double waits[COMET_MAX_DIMS]; /* an all-reduce's: its phases' latencies there */
        for (int i = 0; i < m; i++)
            busy[i] = hold[i] = waits[i] = 0.0;
        for (int i = 0; i < n; i++) {
            const comet_link *l = &links[plan[i].link];
            double t = comet_collective_time_1d(plan[i].collective, l, plan[i].bytes);
            times[i] = t;
            busy[plan[i].link] += t;
            if (!(k > 1.0)) {
                hold[plan[i].link] += t;
                continue;
            }
            double transfer, latency;
            chunk_held(plan[i].collective, l, plan[i].bytes, t, c == COMET_COLL_ALL_REDUCE,
                       &transfer, &latency);
            hold[plan[i].link] += transfer;
            /* an all-reduce's reduce-scatter and all-gather on an inner
             * dimension run their messages' latencies side by side (the
             * next chunk's beside this one's), as its two passes on one */
            if (c == COMET_COLL_ALL_REDUCE)
                waits[plan[i].link] =
                    latency > waits[plan[i].link] ? latency : waits[plan[i].link];
            else
                hold[plan[i].link] += latency;
        }
        for (int i = 0; i < m; i++)
            hold[i] += waits[i];
        if (c == COMET_COLL_BROADCAST && k > 1.0)
            broadcast_holds(links, order, m, bytes / k, hold);
        for (int i = 0; i < m; i++)
            sum += busy[i];
        if ((c < COMET_COLL_SYMMETRIC || (c == COMET_COLL_REDUCE && m > 2)) && k > 1.0) {
            double total = sum;
            for (int d = 0; d < m; d++) {
                double before = 0.0, after = 0.0;
                int first = n, last = -1;
                for (int i = 0; i < n; i++)
                    if (plan[i].link == d) {
                        first = i < first ? i : first;
                        last = i;
                    }
                for (int i = 0; i < first; i++)
                    before += times[i];
                for (int i = last + 1; i < n; i++)
                    after += times[i];
                /* a chunk's all-reduce there holds it for its hold
                 * share, the next chunk's beside the rest */
                double bound = before + busy[d] + (k - 1.0) * hold[d] + after;
                if (c == COMET_COLL_REDUCE) {
                    /* the dimension's gather waits for the first chunk
                     * back from the outer dimensions: it idles where
                     * that trip outlasts the other chunks'
                     * reduce-scatters there */
                    double up = 0.0, out = 0.0;
                    int i = first;
                    for (; i <= last && plan[i].link == d; i++)
                        up += times[i];
                    for (; i <= last && plan[i].link != d; i++)
                        out += times[i];
                    if (out > (k - 1.0) * up)
                        bound += out - (k - 1.0) * up;
                }
                total = bound > total ? bound : total;
            }
            return total < (double)INFINITY ? total : (double)INFINITY;
        }
        for (int i = 0; i < m; i++)
            max = hold[i] > max ? hold[i] : max;
    }
    if (!(sum < (double)INFINITY))
        return (double)INFINITY;
    return k > 1.0 ? sum + (k - 1.0) * max : sum;
}

/* With a size model on a spanned link (NCCL's protocols or a measured
 * curve) every chunk is a call that pays the call's latency, and a
 * runtime does not cut a latency-bound call: the chunk count is the
 * fastest of 1, 2, 4, ... up to the system's. Without one, the system's
 * count, as ASTRA-sim runs it. *time gets the time at that count. */
static int64_t chunks_and_time(const comet_system *sys, const comet_link *links, int m,
                               comet_collective c, double bytes, double outer, double *time)
{
    /* a barrier's one element is never cut */
    int64_t k = c == COMET_COLL_BARRIER ? 1 : comet_collective_chunks(sys);
    c = comet_collective_priced_as(c, &bytes);
    bool sized = false;
    for (int i = 0; i < m; i++)
        sized = sized || links[i].size_model != NULL;
    *time = pipelined_time(links, m, c, bytes, outer, (double)k);
    if (!sized || k == 1)
        return k;
    int64_t best = k;
    for (int64_t j = 1; j < k; j *= 2) {
        double t = pipelined_time(links, m, c, bytes, outer, (double)j);
        if (t < *time) {
            *time = t;
            best = j;
        }
    }
    return best;
}

double comet_collective_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                             comet_collective c, double bytes)
{
    return comet_collective_time_split(sys, span, c, bytes, 0.0);
}

double comet_collective_time_split(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                   comet_collective c, double bytes, double outer)
{
    return comet_collective_time_placed(sys, span, NULL, c, bytes, outer);
}

bool comet_spacing_priced(const comet_system *sys)
{
    int nd = sys ? n_dims_of(sys) : 0;
    for (int d = 0; d < nd; d++)
        if (net_topology_of(sys->dims[d].topology)->prices_spacing)
            return true;
    return false;
}

double comet_collective_time_placed(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                    const int64_t *spacing, comet_collective c, double bytes,
                                    double outer)
{
    if (c == COMET_COLL_BARRIER)
        bytes = COMET_BARRIER_BYTES;
    if (!sys || !span || !(bytes > 0.0) || c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return 0.0;

    comet_link links[COMET_MAX_DIMS];
    int dims[COMET_MAX_DIMS];
    int m = span_links(sys, span, spacing, links, dims);
    if (m == 0)
        return 0.0;
    double t;
    chunks_and_time(sys, links, m, c, bytes, outer, &t);
    return t;
}

int64_t comet_collective_chunks_for(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                    comet_collective c, double bytes)
{
    return comet_collective_chunks_split(sys, span, c, bytes, 0.0);
}

int64_t comet_collective_chunks_split(const comet_system *sys,
                                      const int64_t span[COMET_MAX_DIMS], comet_collective c,
                                      double bytes, double outer)
{
    if (c == COMET_COLL_BARRIER)
        bytes = COMET_BARRIER_BYTES;
    if (!sys || !span || !(bytes > 0.0) || c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return comet_collective_chunks(sys);
    comet_link links[COMET_MAX_DIMS];
    int dims[COMET_MAX_DIMS];
    int m = span_links(sys, span, NULL, links, dims);
    if (m == 0)
        return comet_collective_chunks(sys);
    double t;
    return chunks_and_time(sys, links, m, c, bytes, outer, &t);
}

comet_status comet_collective_price_on(const comet_system *sys, int dim, comet_collective c,
                                       int64_t n, double bytes, comet_coll_price *out,
                                       comet_error *err)
{
    memset(out, 0, sizeof *out);
    if (!sys || dim < 0 || dim >= n_dims_of(sys))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "dimension",
                               "%d is not a dimension of the system", dim);
    if (c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "collective", "unknown collective");
    if (n < 2)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "npus",
                               "a collective needs at least 2 NPUs, got %lld", (long long)n);
    if (!(bytes > 0.0))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "size",
                               "must be positive, got %g", bytes);
    comet_collective priced = comet_collective_priced_as(c, &bytes);
    comet_link l;
    comet_link_of(&sys->dims[dim], n, &l);
    comet_coll_cost cost = comet_collective_cost_1d(priced, &l, bytes);
    out->time = cost.time;
    out->protocol = cost.protocol;
    out->algbw = cost.time > 0.0 ? bytes / cost.time : 0.0;
    out->busbw = out->algbw * comet_busbw_factor(c, n);
    return COMET_OK;
}

void comet_collective_protocols(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                comet_collective c, double bytes,
                                comet_protocol out[COMET_MAX_DIMS])
{
    c = comet_collective_priced_as(c, &bytes);
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        out[d] = COMET_PROTO_NONE;
    if (!sys || !span || !(bytes > 0.0) || c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return;
    comet_link links[COMET_MAX_DIMS];
    int dims[COMET_MAX_DIMS], order[COMET_MAX_DIMS];
    bool seen[COMET_MAX_DIMS] = {false};
    int m = span_links(sys, span, NULL, links, dims);
    for (int i = 0; i < m; i++)
        order[i] = i;
    comet_coll_phase plan[COMET_MAX_COLL_PHASES];
    int n = comet_collective_plan(c, links, order, m,
                                  bytes / (double)comet_collective_chunks_for(sys, span, c, bytes),
                                  plan);
    for (int i = 0; i < n; i++) {
        int k = plan[i].link;
        if (seen[k])
            continue;
        seen[k] = true;
        out[dims[k]] =
            comet_collective_cost_1d(plan[i].collective, &links[k], plan[i].bytes).protocol;
    }
}

int comet_p2p_dim(const comet_system *sys, const int64_t span[COMET_MAX_DIMS])
{
    if (!sys || !span)
        return -1;
    for (int d = n_dims_of(sys) - 1; d >= 0; d--)
        if (span[d] > 1)
            return d;
    return -1;
}

int comet_p2p_dim_between(const comet_system *sys, int64_t a, int64_t b)
{
    int nd = sys ? n_dims_of(sys) : 0;
    if (nd == 0)
        return -1;
    int64_t stride = 1;
    int d = 0;
    for (; d < nd - 1; d++) {
        int64_t size = sys->dims[d].size;
        if (size < 1 || (a / stride) % size != (b / stride) % size)
            break;
        stride *= size;
    }
    return d;
}

void comet_p2p_parts_on(const comet_system *sys, int d, double bytes, double *latency,
                        double *transfer)
{
    *latency = *transfer = 0.0;
    if (!sys || d < 0 || d >= n_dims_of(sys) || !(bytes >= 0.0))
        return;
    comet_link l;
    comet_link_of(&sys->dims[d], 2, &l);
    *latency = l.latency > 0.0 ? l.latency : 0.0;
    *transfer = l.bandwidth > 0.0 ? bytes / l.bandwidth : (double)INFINITY;
}

double comet_p2p_shift_load(const comet_system *sys, int d, int64_t stride, int64_t along)
{
    if (!sys || d < 0 || d >= n_dims_of(sys) || stride < 1 || along <= stride)
        return 1.0;
    const net_topology *t = net_topology_of(sys->dims[d].topology);
    if (!t->shift_load)
        return 1.0;
    int64_t span[COMET_MAX_DIMS];
    for (int i = 0; i < COMET_MAX_DIMS; i++)
        span[i] = i == d ? along : 1;
    comet_link links[COMET_MAX_DIMS]; /* d's alone (along >= 2), its inner NPUs set */
    int dims[COMET_MAX_DIMS];
    if (span_links(sys, span, NULL, links, dims) != 1)
        return 1.0;
    double f = t->shift_load(&links[0], stride);
    return f > 1.0 ? f : 1.0;
}

double comet_p2p_time_on(const comet_system *sys, int d, double bytes)
{
    double latency, transfer;
    comet_p2p_parts_on(sys, d, bytes, &latency, &transfer);
    return latency + transfer;
}

double comet_p2p_time(const comet_system *sys, const int64_t span[COMET_MAX_DIMS], double bytes)
{
    if (!(bytes > 0.0))
        return 0.0;
    return comet_p2p_time_on(sys, comet_p2p_dim(sys, span), bytes);
}
