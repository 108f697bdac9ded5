/* Measured bus bandwidth: a dimension may carry, per collective, the curve
 * nccl-tests prints (busbw against size) measured on `npus` NPUs, and that
 * curve then prices the collective on the dimension instead of any model.
 * This is what calibrating against a real cluster fills in: the curve has
 * every protocol switch, channel count and driver overhead in it.
 *
 * nccl-tests' convention: algbw = size / time, busbw = algbw * factor,
 * factor 2(n-1)/n for all-reduce and (n-1)/n for reduce-scatter,
 * all-gather and all-to-all, so time = size * factor / busbw.
 *
 * Another group size n: the curve is read at the size that gives the same
 * block per NPU, size * npus / n. On a ring every step moves one block of
 * size/n, so busbw = (size/n) / (a + (size/n)/B) depends on the block
 * alone; reading the curve by block keeps both the latency-bound end
 * (time grows with the n-1 steps) and the bandwidth-bound end (busbw the
 * same) right. Between points log(busbw) is linear in log(size)
 * (so the time moves monotonically between two points' times); below the
 * smallest point it falls in proportion to size (the time stays that of
 * the smallest point: latency-bound), above the largest it stays the
 * largest point's. docs/collectives.md, "Measured curves". */
#include "families.h"

#include <math.h>

double comet_busbw_factor(comet_collective c, int64_t n)
{
    if (n <= 1)
        return 0.0;
    double share = (double)(n - 1) / (double)n;
    switch (c) {
    case COMET_COLL_ALL_REDUCE:
        return 2.0 * share;
    case COMET_COLL_REDUCE_SCATTER:
    case COMET_COLL_ALL_GATHER:
    case COMET_COLL_ALL_TO_ALL:
    case COMET_COLL_GATHER:
    case COMET_COLL_SCATTER:
        return share;
    case COMET_COLL_BROADCAST:
    case COMET_COLL_REDUCE:
        return 1.0; /* nccl-tests: the root's S at the bus rate */
    default:
        return 0.0;
    }
}

double net_bus_curve_at(const comet_bus_curve *cv, double bytes)
{
    int k = cv->n_points < COMET_MAX_BUS_POINTS ? cv->n_points : COMET_MAX_BUS_POINTS;
    const comet_bus_point *p = cv->points;
    if (bytes <= p[0].bytes)
        return p[0].busbw * bytes / p[0].bytes;
    if (bytes >= p[k - 1].bytes)
        return p[k - 1].busbw;
    int i = 1;
    while (p[i].bytes < bytes)
        i++;
    double t = log(bytes / p[i - 1].bytes) / log(p[i].bytes / p[i - 1].bytes);
    return p[i - 1].busbw * pow(p[i].busbw / p[i - 1].busbw, t);
}

bool net_bus_curve_cost(comet_collective c, const comet_link *l, double bytes, comet_coll_cost *out)
{
    const comet_bus_curves *bus = &l->size_model->bus;
    const comet_bus_curve *cv = &bus->curve[c];
    if (cv->n_points < 1)
        return false;
    int k = cv->n_points < COMET_MAX_BUS_POINTS ? cv->n_points : COMET_MAX_BUS_POINTS;
    double peak = 0.0;
    for (int i = 0; i < k; i++)
        peak = cv->points[i].busbw > peak ? cv->points[i].busbw : peak;
    double npus = bus->npus >= 2 ? (double)bus->npus : (double)l->n;
    double busbw = net_bus_curve_at(cv, bytes * npus / (double)l->n);
    double moved = bytes * comet_busbw_factor(c, l->n);
    /* the bandwidth part is the time at the curve's best bus bandwidth:
     * what links deliver when they are the limit; the rest is latency */
    if (!(busbw > 0.0)) /* points are positive when read from a file */
        *out = (comet_coll_cost){(double)INFINITY, (double)INFINITY, COMET_PROTO_MEASURED};
    else
        *out = (comet_coll_cost){moved / busbw, moved / peak, COMET_PROTO_MEASURED};
    return true;
}
