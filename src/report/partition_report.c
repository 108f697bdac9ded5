/* comet partition's outcome for people and programs: a text summary, JSON
 * with every layer's neuron order, and an HTML page with the weight
 * matrices' block structure before and after (heat maps), the traffic
 * matrix between workers and the accuracy/traffic trade-off curve.
 * Why here: like every report, the library renders into a buffer or a
 * page and the CLI decides where it goes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/partition.h"
#include "comet/report.h"

#include "parts.h"

#define HEAT_CELLS 48   /* a heat map's rows and columns at most */

static const char *qty(double v, comet_quantity unit, char *out, size_t cap)
{
    return comet_format_quantity(v, unit, 0, out, cap);
}

static const char *prune_name(comet_prune_kind k)
{
    return k == COMET_PRUNE_MASS ? "squared mass" : "count";
}

/* Bytes from src to dst per batch over all layers. */
static double pair_bytes(const comet_partition_outcome *o, int src, int dst, bool naive)
{
    const comet_partition *p = o->part;
    double n = 0;
    for (int l = 0; l < p->n_layers; l++) {
        const int64_t *pairs = naive ? p->layers[l].pair_naive : p->layers[l].pair_kept;
        n += (double)pairs[(size_t)src * (size_t)p->workers + (size_t)dst];
    }
    return n * comet_dtype_bytes(o->dtype) * (double)o->batch;
}

void comet_partition_text(comet_buf *b, const comet_partition_outcome *o)
{
    const comet_partition *p = o->part;
    char t1[48], t2[48], t3[48];
    comet_buf_printf(b, "comet partition: %s, %d layer%s, %d worker%s on %s (%s, batch %lld)\n",
                     o->weights_file, p->n_layers, p->n_layers == 1 ? "" : "s", p->workers,
                     p->workers == 1 ? "" : "s", o->system_name,
                     comet_dtype_name(o->dtype), (long long)o->batch);
    if (isfinite(o->max_loss))
        comet_buf_printf(b, "pruning: the largest share of cross-worker weights (by count) that "
                            "loses at most %.2f %% accuracy: %.1f %%\n",
                         100 * o->max_loss, 100 * o->budget);
    else
        comet_buf_printf(b, "pruning: at most %.1f %% of the cross-worker weights by %s\n",
                         100 * o->budget, prune_name(o->prune));
    comet_buf_printf(b, "\n%-5s %-12s %10s %12s %12s %12s %10s\n", "layer", "shape", "weights",
                     "cross naive", "cross placed", "cross kept", "mass kept");
    int64_t tw = 0, tn = 0, tb = 0, ta = 0;
    for (int l = 0; l < p->n_layers; l++) {
        const comet_partition_layer *L = &p->layers[l];
        char shape[32];
        snprintf(shape, sizeof shape, "%lldx%lld", (long long)L->out, (long long)L->in);
        double mass_kept = L->cross_mass_before > 0 ? L->cross_mass_after / L->cross_mass_before
                                                    : 1;
        comet_buf_printf(b, "%-5d %-12s %10lld %12lld %12lld %12lld %9.1f%%\n", l, shape,
                         (long long)L->weights, (long long)L->cross_naive,
                         (long long)L->cross_before, (long long)L->cross_after, 100 * mass_kept);
        tw += L->weights;
        tn += L->cross_naive;
        tb += L->cross_before;
        ta += L->cross_after;
    }
    comet_buf_printf(b, "%-5s %-12s %10lld %12lld %12lld %12lld\n", "all", "", (long long)tw,
                     (long long)tn, (long long)tb, (long long)ta);
    comet_buf_printf(b, "\n%-26s %14s %14s\n", "per batch", "contiguous", "repurpose");
    comet_buf_printf(b, "%-26s %14s %14s\n", "compute",
                     qty(o->naive.compute, COMET_QTY_SECONDS, t1, sizeof t1),
                     qty(o->price.compute, COMET_QTY_SECONDS, t2, sizeof t2));
    comet_buf_printf(b, "%-26s %14s %14s\n", "exchange",
                     qty(o->naive.exchange, COMET_QTY_SECONDS, t1, sizeof t1),
                     qty(o->price.exchange, COMET_QTY_SECONDS, t2, sizeof t2));
    comet_buf_printf(b, "%-26s %14s %14s  (%.2fx)\n", "latency",
                     qty(o->naive.latency, COMET_QTY_SECONDS, t1, sizeof t1),
                     qty(o->price.latency, COMET_QTY_SECONDS, t2, sizeof t2),
                     o->price.latency > 0 ? o->naive.latency / o->price.latency : 1.0);
    comet_buf_printf(b, "%-26s %14.4g %14.4g\n", "throughput (samples/s)", o->naive.throughput,
                     o->price.throughput);
    comet_buf_printf(b, "%-26s %14s %14s\n", "bytes exchanged",
                     qty(o->naive.bytes, COMET_QTY_BYTES, t1, sizeof t1),
                     qty(o->price.bytes, COMET_QTY_BYTES, t2, sizeof t2));
    if (isfinite(o->accuracy_before))
        comet_buf_printf(b, "%-26s %13.2f%% %13.2f%%\n", "accuracy", 100 * o->accuracy_before,
                         100 * o->accuracy_after);
    if (p->workers <= 16) {
        comet_buf_printf(b, "\nbytes per batch from worker (row) to worker (column), repurpose:\n");
        comet_buf_printf(b, "%6s", "");
        for (int w = 0; w < p->workers; w++)
            comet_buf_printf(b, " %9s%-2d", "w", w);
        comet_buf_printf(b, "\n");
        for (int v = 0; v < p->workers; v++) {
            comet_buf_printf(b, "w%-5d", v);
            for (int w = 0; w < p->workers; w++)
                if (v == w)
                    comet_buf_printf(b, " %11s", "-");
                else
                    comet_buf_printf(b, " %11s",
                                     qty(pair_bytes(o, v, w, false), COMET_QTY_BYTES, t3,
                                         sizeof t3));
            comet_buf_printf(b, "\n");
        }
    }
    if (o->n_points > 0) {
        comet_buf_printf(b, "\ntrade-off over the budget (by %s):\n%8s %10s %12s %12s %10s\n",
                         prune_name(o->prune), "budget", "kept", "bytes", "latency", "accuracy");
        for (int i = 0; i < o->n_points; i++) {
            const comet_partition_point *q = &o->points[i];
            comet_buf_printf(b, "%7.0f%% %9.1f%% %12s %12s", 100 * q->budget,
                             100 * q->kept_share, qty(q->bytes, COMET_QTY_BYTES, t1, sizeof t1),
                             qty(q->latency, COMET_QTY_SECONDS, t2, sizeof t2));
            if (isfinite(q->accuracy))
                comet_buf_printf(b, " %9.2f%%\n", 100 * q->accuracy);
            else
                comet_buf_printf(b, " %10s\n", "-");
        }
    }
    bool small = true;
    for (int l = 0; l < p->n_layers; l++)
        small = small && p->layers[l].out <= 64;
    if (small) {
        comet_buf_printf(b, "\nneurons of each layer, worker by worker (original indices):\n");
        for (int l = 0; l < p->n_layers; l++) {
            const comet_partition_layer *L = &p->layers[l];
            comet_buf_printf(b, "layer %d:", l);
            int64_t k = 0;
            for (int w = 0; w < p->workers; w++) {
                comet_buf_printf(b, " [");
                for (int64_t i = 0; i < L->rows_of_worker[w]; i++, k++)
                    comet_buf_printf(b, "%s%lld", i ? " " : "", (long long)L->order[k]);
                comet_buf_printf(b, "]");
            }
            comet_buf_printf(b, "\n");
        }
    } else
        comet_buf_printf(b, "\n(each layer's neuron order: --json)\n");
}

static void json_num(comet_buf *b, double v) { report_json_number(b, v, 17); }

/* Text, then a number (null when not finite). */
static void json_after(comet_buf *b, const char *text, double v)
{
    comet_buf_printf(b, "%s", text);
    json_num(b, v);
}

static void json_price(comet_buf *b, const char *name, const comet_partition_price *q)
{
    comet_buf_printf(b, "  \"%s\": {\"compute_s\": ", name);
    json_num(b, q->compute);
    json_after(b, ", \"exchange_s\": ", q->exchange);
    json_after(b, ", \"latency_s\": ", q->latency);
    json_after(b, ", \"throughput_per_s\": ", q->throughput);
    json_after(b, ", \"bytes\": ", q->bytes);
    comet_buf_printf(b, "},\n");
}

void comet_partition_json(comet_buf *b, const comet_partition_outcome *o)
{
    const comet_partition *p = o->part;
    int G = p->workers;
    comet_buf_printf(b, "{\n  \"schema_version\": %d,\n  \"weights\": ",
                     COMET_JSON_SCHEMA_VERSION);
    comet_buf_json_string(b, o->weights_file);
    comet_buf_printf(b, ",\n  \"system\": ");
    comet_buf_json_string(b, o->system_name);
    comet_buf_printf(b, ",\n  \"workers\": %d,\n  \"dtype\": \"%s\",\n  \"batch\": %lld,\n", G,
                     comet_dtype_name(o->dtype), (long long)o->batch);
    comet_buf_printf(b, "  \"prune\": \"%s\",\n  \"budget\": ",
                     o->prune == COMET_PRUNE_MASS ? "mass" : "count");
    json_num(b, o->budget);
    json_after(b, ",\n  \"max_accuracy_loss\": ", o->max_loss);
    json_after(b, ",\n  \"accuracy_before\": ", o->accuracy_before);
    json_after(b, ",\n  \"accuracy_after\": ", o->accuracy_after);
    comet_buf_printf(b, ",\n");
    json_price(b, "repurpose", &o->price);
    json_price(b, "contiguous", &o->naive);
    comet_buf_printf(b, "  \"input_workers\": [");
    for (int64_t i = 0; i < p->layers[0].in; i++)
        comet_buf_printf(b, "%s%d", i ? ", " : "", p->worker_of_input[i]);
    comet_buf_printf(b, "],\n  \"layers\": [\n");
    for (int l = 0; l < p->n_layers; l++) {
        const comet_partition_layer *L = &p->layers[l];
        comet_buf_printf(b, "    {\"name\": ");
        comet_buf_json_string(b, o->net->layers[l].name);
        comet_buf_printf(b,
                         ", \"in\": %lld, \"out\": %lld, \"weights\": %lld, \"cross_naive\": "
                         "%lld, \"cross_placed\": %lld, \"cross_kept\": %lld,\n     "
                         "\"cross_mass_placed\": ",
                         (long long)L->in, (long long)L->out, (long long)L->weights,
                         (long long)L->cross_naive, (long long)L->cross_before,
                         (long long)L->cross_after);
        json_num(b, L->cross_mass_before);
        json_after(b, ", \"cross_mass_naive\": ", L->cross_mass_naive);
        json_after(b, ", \"cross_mass_kept\": ", L->cross_mass_after);
        json_after(b, ", \"compute_s\": ", l < 64 ? o->price.layer_compute[l] : NAN);
        json_after(b, ", \"exchange_s\": ", l < 64 ? o->price.layer_exchange[l] : NAN);
        comet_buf_printf(b, ",\n     \"order\": [");
        for (int64_t i = 0; i < L->out; i++)
            comet_buf_printf(b, "%s%lld", i ? ", " : "", (long long)L->order[i]);
        comet_buf_printf(b, "],\n     \"worker_of_neuron\": [");
        for (int64_t i = 0; i < L->out; i++)
            comet_buf_printf(b, "%s%d", i ? ", " : "", L->worker_of_out[i]);
        comet_buf_printf(b, "],\n     \"bytes_between_workers\": [");
        for (int v = 0; v < G; v++) {
            comet_buf_printf(b, "%s[", v ? ", " : "");
            for (int w = 0; w < G; w++)
                comet_buf_printf(b, "%s%.17g", w ? ", " : "",
                                 (double)L->pair_kept[(size_t)v * (size_t)G + (size_t)w] *
                                     comet_dtype_bytes(o->dtype) * (double)o->batch);
            comet_buf_printf(b, "]");
        }
        comet_buf_printf(b, "]}%s\n", l + 1 < p->n_layers ? "," : "");
    }
    comet_buf_printf(b, "  ],\n  \"trade_off\": [");
    for (int i = 0; i < o->n_points; i++) {
        const comet_partition_point *q = &o->points[i];
        comet_buf_printf(b, "%s\n    {\"budget\": ", i ? "," : "");
        json_num(b, q->budget);
        json_after(b, ", \"kept_share\": ", q->kept_share);
        json_after(b, ", \"bytes\": ", q->bytes);
        json_after(b, ", \"latency_s\": ", q->latency);
        json_after(b, ", \"accuracy\": ", q->accuracy);
        comet_buf_printf(b, "}");
    }
    comet_buf_printf(b, "%s]\n}\n", o->n_points ? "\n  " : "");
}

/* A heat map cell's label: the position of its first neuron and that
 * neuron's worker ("16 w1"). */
static const char *cell_label(char *out, size_t cap, int cell, int cells, int64_t n,
                              const int64_t *order, const int *worker)
{
    int64_t first = (int64_t)cell * n / cells;
    snprintf(out, cap, "%lld w%d", (long long)first, worker[order ? order[first] : first]);
    return out;
}

/* A weight matrix as a heat map of mean |w| over blocks of at most
 * HEAT_CELLS x HEAT_CELLS cells, rows and columns in the given orders
 * (NULL: the original); worker boundaries named in the labels. */
static void weight_heat(comet_page *page, const char *id, const char *title,
                        const comet_dense *L, const int64_t *row_order, const int64_t *col_order,
                        const int *row_worker, const int *col_worker)
{
    comet_chart *c = comet_page_chart(page, COMET_CHART_HEATMAP, id, title);
    if (!c)
        return;
    int R = L->out < HEAT_CELLS ? (int)L->out : HEAT_CELLS;
    int C = L->in < HEAT_CELLS ? (int)L->in : HEAT_CELLS;
    snprintf(c->x_label, sizeof c->x_label, "inputs (worker of the first in each cell)");
    snprintf(c->y_label, sizeof c->y_label, "outputs");
    snprintf(c->value_label, sizeof c->value_label, "mean |weight|");
    c->value_unit = COMET_QTY_NONE;
    char name[48];
    for (int x = 0; x < C; x++)
        comet_chart_series(c, cell_label(name, sizeof name, x, C, L->in, col_order, col_worker));
    for (int y = 0; y < R; y++)
        comet_chart_cat(c, cell_label(name, sizeof name, y, R, L->out, row_order, row_worker));
    for (int y = 0; y < R; y++) {
        int64_t r0 = (int64_t)y * L->out / R, r1 = (int64_t)(y + 1) * L->out / R;
        for (int x = 0; x < C; x++) {
            int64_t c0 = (int64_t)x * L->in / C, c1 = (int64_t)(x + 1) * L->in / C;
            double sum = 0;
            for (int64_t a = r0; a < r1; a++) {
                int64_t j = row_order ? row_order[a] : a;
                for (int64_t k = c0; k < c1; k++) {
                    int64_t i = col_order ? col_order[k] : k;
                    sum += fabs(L->weight[j * L->in + i]);
                }
            }
            comet_chart_set(c, y, x, sum / (double)((r1 - r0) * (c1 - c0)));
        }
    }
}

void comet_report_page_partition(comet_page *page, const comet_partition_outcome *o)
{
    const comet_partition *p = o->part;
    int G = p->workers;
    char t1[48], t2[48];
    comet_page_section(page, "Partition");
    comet_page_fact(page, "network", "%s, %d layers", o->weights_file, p->n_layers);
    comet_page_fact(page, "workers", "%d on %s (%s, batch %lld)", G, o->system_name,
                    comet_dtype_name(o->dtype), (long long)o->batch);
    comet_page_fact(page, "pruning budget", "%.1f %% of cross-worker weights by %s",
                    100 * o->budget, prune_name(o->prune));
    comet_page_fact(page, "latency per batch", "%s contiguous, %s repurpose",
                    qty(o->naive.latency, COMET_QTY_SECONDS, t1, sizeof t1),
                    qty(o->price.latency, COMET_QTY_SECONDS, t2, sizeof t2));
    comet_page_fact(page, "bytes exchanged per batch", "%s contiguous, %s repurpose",
                    qty(o->naive.bytes, COMET_QTY_BYTES, t1, sizeof t1),
                    qty(o->price.bytes, COMET_QTY_BYTES, t2, sizeof t2));
    if (isfinite(o->accuracy_before))
        comet_page_fact(page, "accuracy", "%.2f %% before, %.2f %% after",
                        100 * o->accuracy_before, 100 * o->accuracy_after);
    comet_table *t = comet_page_table(page, "layers", "Cross-worker weights per layer");
    if (t) {
        int c_layer = comet_table_col(t, "layer", COMET_QTY_COUNT);
        int c_w = comet_table_col(t, "weights", COMET_QTY_COUNT);
        int c_n = comet_table_col(t, "cross, contiguous", COMET_QTY_COUNT);
        int c_b = comet_table_col(t, "cross, placed", COMET_QTY_COUNT);
        int c_a = comet_table_col(t, "cross, kept", COMET_QTY_COUNT);
        int c_m = comet_table_col(t, "cross mass kept", COMET_QTY_FRACTION);
        int c_t = comet_table_col(t, "compute", COMET_QTY_SECONDS);
        int c_x = comet_table_col(t, "exchange", COMET_QTY_SECONDS);
        for (int l = 0; l < p->n_layers; l++) {
            const comet_partition_layer *L = &p->layers[l];
            long r = comet_table_row(t);
            if (r < 0)
                break;
            comet_table_num(t, r, c_layer, l);
            comet_table_num(t, r, c_w, (double)L->weights);
            comet_table_num(t, r, c_n, (double)L->cross_naive);
            comet_table_num(t, r, c_b, (double)L->cross_before);
            comet_table_num(t, r, c_a, (double)L->cross_after);
            comet_table_num(t, r, c_m,
                            L->cross_mass_before > 0 ? L->cross_mass_after / L->cross_mass_before
                                                     : 1);
            if (l < 64) {
                comet_table_num(t, r, c_t, o->price.layer_compute[l]);
                comet_table_num(t, r, c_x, o->price.layer_exchange[l]);
            }
        }
    }

    comet_page_section(page, "Block structure of the weight matrices");
    comet_page_text(page, "Each layer's |weights| before (original order: the contiguous split "
                          "gives worker k the k-th slice) and after (neurons grouped worker by "
                          "worker, pruned weights zero). Blocks on the diagonal stay on one "
                          "worker; everything off it crosses the network.");
    int64_t widest = p->layers[0].in;
    for (int l = 0; l < p->n_layers; l++)
        if (p->layers[l].out > widest)
            widest = p->layers[l].out;
    int *naive_in = malloc((size_t)widest * sizeof *naive_in);
    int *naive_out = malloc((size_t)widest * sizeof *naive_out);
    int64_t *input_order = malloc((size_t)p->layers[0].in * sizeof *input_order);
    if (!naive_in || !naive_out || !input_order)
        comet_page_notice(page, "out of memory drawing the weight matrices");
    for (int l = 0; l < p->n_layers && naive_in && naive_out && input_order && l < 12; l++) {
        const comet_partition_layer *L = &p->layers[l];
        /* the contiguous split's workers: balanced slices */
        int64_t k = 0;
        for (int w = 0; w < G; w++)
            for (int64_t c = 0; c < L->in / G + (w < L->in % G); c++)
                naive_in[k++] = w;
        k = 0;
        for (int w = 0; w < G; w++)
            for (int64_t c = 0; c < L->out / G + (w < L->out % G); c++)
                naive_out[k++] = w;
        const int *win = l ? p->layers[l - 1].worker_of_out : p->worker_of_input;
        const int64_t *col_order = l ? p->layers[l - 1].order : NULL;
        if (!l) {
            int64_t q = 0;
            for (int w = 0; w < G; w++)
                for (int64_t i = 0; i < L->in; i++)
                    if (p->worker_of_input[i] == w)
                        input_order[q++] = i;
            col_order = input_order;
        }
        char id[48], title[160];
        snprintf(id, sizeof id, "layer%d_before", l);
        snprintf(title, sizeof title, "Layer %d (%.80s) before: contiguous split", l,
                 o->net->layers[l].name);
        weight_heat(page, id, title, &o->net->layers[l], NULL, NULL, naive_out, naive_in);
        snprintf(id, sizeof id, "layer%d_after", l);
        snprintf(title, sizeof title, "Layer %d (%.80s) after: placed and pruned", l,
                 o->net->layers[l].name);
        weight_heat(page, id, title, &p->pruned.layers[l], L->order, col_order,
                    L->worker_of_out, win);
    }
    if (p->n_layers > 12)
        comet_page_notice(page, "only the first 12 layers are drawn");
    free(naive_in);
    free(naive_out);
    free(input_order);

    comet_page_section(page, "Traffic between workers");
    if (G > COMET_CHART_MAX_SERIES)
        comet_page_notice(page, "%d workers: too many to draw (the JSON has the matrix)", G);
    else {
        for (int naive = 1; naive >= 0; naive--) {
            comet_chart *c = comet_page_chart(page, COMET_CHART_HEATMAP,
                                              naive ? "traffic_contiguous" : "traffic_repurpose",
                                              naive ? "Bytes per batch, contiguous split"
                                                    : "Bytes per batch, repurpose");
            if (!c)
                continue;
            snprintf(c->x_label, sizeof c->x_label, "to worker");
            snprintf(c->y_label, sizeof c->y_label, "from worker");
            snprintf(c->value_label, sizeof c->value_label, "bytes per batch");
            c->value_unit = COMET_QTY_BYTES;
            for (int w = 0; w < G; w++) {
                char name[16];
                snprintf(name, sizeof name, "w%d", w);
                comet_chart_series(c, name);
                comet_chart_cat(c, name);
            }
            for (int v = 0; v < G; v++)
                for (int w = 0; w < G; w++)
                    if (v != w)
                        comet_chart_set(c, v, w, pair_bytes(o, v, w, naive));
            snprintf(c->note, sizeof c->note, "× : a worker does not send to itself.");
        }
    }

    comet_page_section(page, "Accuracy and traffic over the pruning budget");
    if (o->n_points == 0)
        comet_page_notice(page, "no trade-off curve was computed");
    else {
        bool have_acc = isfinite(o->points[0].accuracy);
        comet_chart *c = comet_page_chart(page, COMET_CHART_SCATTER, "trade_off",
                                          have_acc ? "Accuracy against bytes exchanged"
                                                   : "Cross-worker weights kept against bytes");
        if (c) {
            snprintf(c->x_label, sizeof c->x_label, "bytes exchanged per batch");
            snprintf(c->y_label, sizeof c->y_label,
                     have_acc ? "accuracy" : "cross-worker weights kept");
            c->x_unit = COMET_QTY_BYTES;
            c->y_unit = COMET_QTY_FRACTION;
            for (int i = 0; i < o->n_points; i++) {
                const comet_partition_point *q = &o->points[i];
                char label[160];
                snprintf(label, sizeof label, "budget %.0f %%: %s, latency %s", 100 * q->budget,
                         qty(q->bytes, COMET_QTY_BYTES, t1, sizeof t1),
                         qty(q->latency, COMET_QTY_SECONDS, t2, sizeof t2));
                comet_chart_point_add(c, q->bytes, have_acc ? q->accuracy : q->kept_share, 0,
                                      fabs(q->budget - o->budget) < 1e-9, label);
            }
            snprintf(c->note, sizeof c->note,
                     "One point per budget (share of cross-worker weights removed, by %s); "
                     "highlighted: the budget applied.",
                     prune_name(o->prune));
        }
    }
}
