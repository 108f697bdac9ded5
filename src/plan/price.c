/* A partition's price on a comet system: how long one inference batch
 * takes when each worker is one NPU of the system, against the naive
 * contiguous split. Why through src/hardware and src/network: a worker's
 * share of a layer is a GEMM priced by the system's own compute model, and
 * an exchange is a point-to-point transfer priced by its network, so the
 * numbers agree with every other comet price (docs/partition.md). */
#include <math.h>
#include <string.h>

#include "../hardware/hardware.h"
#include "comet/network.h"
#include "plan.h"

/* The dimension a transfer between NPUs a and b crosses: the outermost
 * one along which their coordinates differ (innermost first, as comet
 * numbers NPUs; an outermost size of 0 holds the rest). Two NPUs of one
 * node differ only on the node's dimension; NPUs of two nodes go over the
 * network between them whatever their local indices. */
static int dim_between(const comet_system *sys, int64_t a, int64_t b)
{
    int64_t stride = 1;
    int outermost = 0;
    for (int d = 0; d < sys->n_dims; d++) {
        int64_t size = sys->dims[d].size;
        bool last = d == sys->n_dims - 1 || size < 1;
        int64_t ca = last ? a / stride : (a / stride) % size;
        int64_t cb = last ? b / stride : (b / stride) % size;
        if (ca != cb)
            outermost = d;
        if (last)
            break;
        stride *= size;
    }
    return outermost;
}

comet_status comet_partition_price_on(const comet_partition *p, bool naive,
                                      const comet_system *sys, comet_dtype dtype, int64_t batch,
                                      comet_partition_price *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    if (batch < 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "batch",
                               "the batch must be at least 1, got %lld", (long long)batch);
    if (sys->compute.matrix_flops[dtype] <= 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "dtype",
                               "the system has no %s matrix rate", comet_dtype_name(dtype));
    /* an outermost size of 0 grows to what is needed */
    int64_t npus = 1;
    for (int d = 0; d < sys->n_dims; d++)
        npus = sys->dims[d].size > 0 && npus < INT64_C(1) << 40 ? npus * sys->dims[d].size
                                                                : INT64_C(1) << 40;
    if (sys->n_dims < 1 || npus < p->workers)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "workers",
                               "%d workers on a system of %lld NPUs", p->workers,
                               (long long)npus);
    hw_rates rates;
    hw_rates_init(&rates, sys, dtype);
    double elem = comet_dtype_bytes(dtype);
    int G = p->workers;
    out->n_layers = p->n_layers;
    for (int l = 0; l < p->n_layers; l++) {
        const comet_partition_layer *L = &p->layers[l];
        const int64_t *pairs = naive ? L->pair_naive : L->pair_kept;
        double slowest = 0, slowest_send = 0;
        for (int w = 0; w < G; w++) {
            double weights = (double)(naive ? L->local_naive[w] : L->local_kept[w]);
            double rows = (double)(L->out / G + (w < L->out % G));
            if (!naive)
                rows = (double)L->rows_of_worker[w];
            /* its rows times the batch: weights once, inputs in, outputs out */
            double flops = 2.0 * (double)batch * weights;
            double bytes = weights * elem + (double)batch * elem * (rows + weights / fmax(rows, 1));
            double t = weights > 0 ? hw_gemm_time(&rates, flops, bytes, false,
                                                  weights / fmax(rows, 1))
                                   : 0;
            if (t > slowest)
                slowest = t;
            /* its sends, one after another */
            double send = 0;
            for (int v = 0; v < G; v++) {
                int64_t n = pairs[(size_t)w * (size_t)G + (size_t)v];
                if (v == w || n == 0)
                    continue;
                double b = (double)n * elem * (double)batch;
                out->bytes += b;
                send += comet_p2p_time_on(sys, dim_between(sys, w, v), b);
            }
            if (send > slowest_send)
                slowest_send = send;
        }
        out->compute += slowest;
        out->exchange += slowest_send;
        if (l < 64) {
            out->layer_compute[l] = slowest;
            out->layer_exchange[l] = slowest_send;
        }
    }
    out->latency = out->compute + out->exchange;
    out->throughput = out->latency > 0 ? (double)batch / out->latency : INFINITY;
    return COMET_OK;
}
