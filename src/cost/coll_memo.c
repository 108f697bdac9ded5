/* Collective times already priced, by their exact inputs. A strategy
 * search prices the same collectives over and over: a layer's TP
 * collectives are the same for every recompute, ZeRO, offload, overlap
 * and schedule choice over one workload, and the data-parallel ones for
 * every choice but ZeRO's; since NCCL's protocol model and the chunk-
 * count choice price a collective several times over (network.c), each
 * price is worth keeping. comet_collective_time_placed is a pure function
 * of (system, the span and spacing of the system's dimensions, collective,
 * bytes, outer), so
 * a kept price is the same double it would return. A memo belongs to one caller at a time (each thread of
 * the search keeps its own, estimate.h); the library keeps none. */
#include "cost.h"

#include <string.h>

#include "comet/network.h"

void coll_memo_init(coll_memo *m)
{
    for (int i = 0; i < COLL_MEMO_SLOTS; i++)
        m->entry[i].sys = NULL;
    for (int i = 0; i < SHIFT_MEMO_SLOTS; i++)
        m->shift[i].sys = NULL;
}

double coll_memo_shift_load(coll_memo *m, const comet_system *sys, int d, int64_t stride,
                            int64_t along)
{
    if (!m)
        return comet_p2p_shift_load(sys, d, stride, along);
    uint64_t h = ((uint64_t)(d + 1) * 0x9e3779b97f4a7c15u ^ (uint64_t)stride) *
                     0xff51afd7ed558ccdu ^
                 (uint64_t)along;
    shift_memo_entry *e = &m->shift[(h ^ h >> 29) % SHIFT_MEMO_SLOTS];
    if (e->sys == sys && e->dim == d && e->stride == stride && e->along == along)
        return e->load;
    *e = (shift_memo_entry){sys, d, stride, along, comet_p2p_shift_load(sys, d, stride, along)};
    return e->load;
}

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

double coll_memo_time(coll_memo *m, const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                      const int64_t spacing[COMET_MAX_DIMS], comet_collective c, double bytes)
{
    return coll_memo_time_split(m, sys, span, spacing, c, bytes, 0.0);
}

double coll_memo_time_split(coll_memo *m, const comet_system *sys,
                            const int64_t span[COMET_MAX_DIMS],
                            const int64_t spacing[COMET_MAX_DIMS], comet_collective c,
                            double bytes, double outer)
{
    if (!m || !sys || !span)
        return comet_collective_time_placed(sys, span, spacing, c, bytes, outer);
    /* the price reads the span and spacing of the system's dimensions only */
    int n = sys->n_dims < 0 ? 0 : sys->n_dims > COMET_MAX_DIMS ? COMET_MAX_DIMS : sys->n_dims;
    int64_t gap[COMET_MAX_DIMS]; /* NULL and 1s alike: side by side */
    for (int i = 0; i < COMET_MAX_DIMS; i++)
        gap[i] = spacing && i < n && spacing[i] > 1 ? spacing[i] : 1;
    uint64_t bits = bits_of(bytes), obits = bits_of(outer), h = (uint64_t)c + 1;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)span[i] ^ (uint64_t)gap[i] << 32) * 0x9e3779b97f4a7c15u;
    h = (h ^ bits ^ (obits >> 1)) * 0xff51afd7ed558ccdu;
    coll_memo_entry *e = &m->entry[(h ^ h >> 33) % COLL_MEMO_SLOTS];
    bool hit = e->sys == sys && e->collective == c && bits_of(e->bytes) == bits &&
               bits_of(e->outer) == obits;
    for (int i = 0; hit && i < n; i++)
        hit = e->span[i] == span[i] && e->spacing[i] == gap[i];
    if (hit)
        return e->time;
    e->sys = sys;
    memcpy(e->span, span, sizeof e->span);
    memcpy(e->spacing, gap, sizeof e->spacing);
    e->collective = c;
    e->bytes = bytes;
    e->outer = outer;
    e->time = comet_collective_time_placed(sys, span, gap, c, bytes, outer);
    return e->time;
}
