/* RePurpose (Abdi, Rashidi, Fekri, Krishna, AAAI 2023): place a trained
 * multilayer perceptron's neurons on workers so that the workers depend on
 * each other as little as possible, then prune the weak cross-worker
 * weights under a budget (docs/partition.md has the formulas).
 * Why this shape: each layer is an assignment problem whose cost is the
 * squared weight mass a neuron would receive from other workers, given
 * where the previous layer's neurons went, so earlier layers constrain
 * later ones; the l0-penalized fit of the kept weights to the original
 * ones keeps a weight exactly when its square is above a threshold, so
 * pruning under a budget removes the smallest cross-worker weights. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#define KMEANS_ROUNDS 8
#define REFINE_ROUNDS 2

static double sq(double x) { return x * x; }

/* Balanced capacities: n over workers, the first n % workers one more. */
static void capacities(int64_t n, int workers, int64_t *cap)
{
    for (int w = 0; w < workers; w++)
        cap[w] = n / workers + (w < n % workers);
}

static void contiguous(int64_t n, int workers, int *worker_of)
{
    int64_t k = 0;
    for (int w = 0; w < workers; w++) {
        int64_t c = n / workers + (w < n % workers);
        for (int64_t i = 0; i < c; i++)
            worker_of[k++] = w;
    }
}

/* Cost of each output neuron on each worker: its squared incoming weight
 * mass from inputs on other workers. Returns the sum of the minimum. */
static void cross_cost(const comet_dense *L, const int *worker_of_in, int workers, double *cost)
{
    for (int64_t j = 0; j < L->out; j++) {
        double *c = cost + (size_t)j * (size_t)workers;
        for (int w = 0; w < workers; w++)
            c[w] = 0;
        double total = 0;
        const float *row = L->weight + j * L->in;
        for (int64_t i = 0; i < L->in; i++) {
            double m = sq(row[i]);
            total += m;
            c[worker_of_in[i]] += m;
        }
        for (int w = 0; w < workers; w++)
            c[w] = total - c[w];
    }
}

/* The inputs' cost given where the layer's outputs went: each input's
 * squared outgoing mass to outputs on other workers. */
static void cross_cost_back(const comet_dense *L, const int *worker_of_out, int workers,
                            double *cost)
{
    memset(cost, 0, (size_t)L->in * (size_t)workers * sizeof *cost);
    double *total = calloc((size_t)L->in, sizeof *total);
    if (!total)
        return;
    for (int64_t j = 0; j < L->out; j++) {
        const float *row = L->weight + j * L->in;
        int w = worker_of_out[j];
        for (int64_t i = 0; i < L->in; i++) {
            double m = sq(row[i]);
            total[i] += m;
            cost[(size_t)i * (size_t)workers + (size_t)w] += m;
        }
    }
    for (int64_t i = 0; i < L->in; i++)
        for (int w = 0; w < workers; w++) {
            double *c = &cost[(size_t)i * (size_t)workers + (size_t)w];
            *c = total[i] - *c;
        }
    free(total);
}

/* The network's inputs have no earlier layer to follow: group them by
 * what they feed. Each input is the column of |W| of the first layer,
 * normalized; balanced spherical k-means, seeded by the farthest-point
 * rule, each round's assignment solved exactly by the balanced Munkres. */
static comet_status group_inputs(const comet_dense *L, int workers, const int64_t *cap,
                                 int *worker_of_in)
{
    int64_t n = L->in, d = L->out;
    float *col = calloc((size_t)(n * d), sizeof *col);        /* n x d, normalized columns */
    double *centre = calloc((size_t)workers * (size_t)d, sizeof *centre);
    double *cost = malloc((size_t)n * (size_t)workers * sizeof *cost);
    double *closest = malloc((size_t)n * sizeof *closest);
    comet_status st = COMET_ENOMEM;
    if (!col || !centre || !cost || !closest)
        goto done;
    for (int64_t j = 0; j < d; j++)
        for (int64_t i = 0; i < n; i++)
            col[i * d + j] = fabsf(L->weight[j * n + i]);
    int64_t first = 0;
    double first_norm = -1;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t j = 0; j < d; j++)
            s += sq(col[i * d + j]);
        s = sqrt(s);
        if (s > first_norm) {
            first_norm = s;
            first = i;
        }
        for (int64_t j = 0; j < d && s > 0; j++)
            col[i * d + j] = (float)(col[i * d + j] / s);
    }
    /* farthest point: each next seed is the input least like any seed so far */
    for (int64_t i = 0; i < n; i++)
        closest[i] = -INFINITY;
    int64_t seed = first;
    for (int g = 0; g < workers; g++) {
        for (int64_t j = 0; j < d; j++)
            centre[(size_t)g * (size_t)d + (size_t)j] = col[seed * d + j];
        int64_t next = -1;
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int64_t j = 0; j < d; j++)
                s += col[i * d + j] * col[seed * d + j];
            if (s > closest[i])
                closest[i] = s;
            if (i == seed)
                closest[i] = INFINITY;
            if (next < 0 || closest[i] < closest[next])
                next = i;
        }
        seed = next;
    }
    int *previous = malloc((size_t)n * sizeof *previous);
    if (!previous)
        goto done;
    for (int round = 0; round < KMEANS_ROUNDS; round++) {
        for (int64_t i = 0; i < n; i++)
            for (int g = 0; g < workers; g++) {
                double s = 0;
                const double *c = centre + (size_t)g * (size_t)d;
                for (int64_t j = 0; j < d; j++)
                    s += col[i * d + j] * c[j];
                cost[(size_t)i * (size_t)workers + (size_t)g] = -s;
            }
        if (isnan(comet_assign_balanced(n, workers, cost, cap, worker_of_in))) {
            free(previous);
            goto done;
        }
        if (round > 0 && memcmp(previous, worker_of_in, (size_t)n * sizeof *previous) == 0)
            break; /* settled */
        memcpy(previous, worker_of_in, (size_t)n * sizeof *previous);
        memset(centre, 0, (size_t)workers * (size_t)d * sizeof *centre);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < d; j++)
                centre[(size_t)worker_of_in[i] * (size_t)d + (size_t)j] += col[i * d + j];
        for (int g = 0; g < workers; g++) {
            double s = 0;
            for (int64_t j = 0; j < d; j++)
                s += sq(centre[(size_t)g * (size_t)d + (size_t)j]);
            s = sqrt(s);
            for (int64_t j = 0; j < d && s > 0; j++)
                centre[(size_t)g * (size_t)d + (size_t)j] /= s;
        }
    }
    free(previous);
    st = COMET_OK;
done:
    free(col);
    free(centre);
    free(cost);
    free(closest);
    return st;
}

/* Squared cross-worker mass of a whole assignment. */
static double total_cross(const comet_mlp *m, int *const *worker_of, const int *worker_of_in)
{
    double total = 0;
    for (int l = 0; l < m->n_layers; l++) {
        const comet_dense *L = &m->layers[l];
        const int *win = l ? worker_of[l - 1] : worker_of_in;
        for (int64_t j = 0; j < L->out; j++)
            for (int64_t i = 0; i < L->in; i++)
                if (win[i] != worker_of[l][j])
                    total += sq(L->weight[j * L->in + i]);
    }
    return total;
}

void comet_partition_free(comet_partition *p)
{
    if (!p)
        return;
    for (int l = 0; p->layers && l < p->n_layers; l++) {
        comet_partition_layer *L = &p->layers[l];
        free(L->worker_of_out);
        free(L->order);
        free(L->pair_kept);
        free(L->pair_naive);
        free(L->rows_of_worker);
        free(L->local_kept);
        free(L->local_naive);
    }
    free(p->layers);
    free(p->worker_of_input);
    comet_mlp_free(&p->pruned);
    memset(p, 0, sizeof *p);
}

/* A pseudo-random pivot of keys[lo..hi] (a fixed sequence: reproducible). */
static float pick_pivot(const float *keys, int64_t lo, int64_t hi, uint64_t *state)
{
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    return keys[lo + (int64_t)((*state >> 33) % (uint64_t)(hi - lo + 1))];
}

/* Three-way partition of keys[lo..hi] around pivot: < pivot in [lo, *lt),
 * == in [*lt, *gt], > after; returns the sum of those below. */
static double partition3(float *keys, int64_t lo, int64_t hi, float pivot, int64_t *lt,
                         int64_t *gt)
{
    int64_t a = lo, i = lo, b = hi;
    double less = 0;
    while (i <= b) {
        float t = keys[i];
        if (t < pivot) {
            less += t;
            keys[i++] = keys[a];
            keys[a++] = t;
        } else if (t > pivot) {
            keys[i] = keys[b];
            keys[b--] = t;
        } else
            i++;
    }
    *lt = a;
    *gt = b;
    return less;
}

/* The k-th smallest (0-based) of keys[0..n) (reordered). */
static float kth_smallest(float *keys, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    uint64_t state = 0x9e3779b97f4a7c15u;
    while (lo < hi) {
        float pivot = pick_pivot(keys, lo, hi, &state);
        int64_t lt, gt;
        partition3(keys, lo, hi, pivot, &lt, &gt);
        if (k < lt)
            hi = lt - 1;
        else if (k > gt)
            lo = gt + 1;
        else
            return pivot;
    }
    return keys[lo];
}

/* How many of the smallest keys fit in a mass budget: the largest r with
 * the r smallest summing to at most budget (weighted selection, O(n)). */
static int64_t fit_in_mass(float *keys, int64_t n, double budget)
{
    int64_t lo = 0, hi = n - 1, count = 0;
    uint64_t state = 0x2545f4914f6cdd1du;
    while (lo <= hi) {
        float pivot = pick_pivot(keys, lo, hi, &state);
        int64_t lt, gt;
        double less = partition3(keys, lo, hi, pivot, &lt, &gt);
        if (less > budget) {
            hi = lt - 1;
            continue;
        }
        budget -= less;
        count += lt - lo;
        int64_t equal = gt - lt + 1;
        int64_t take = pivot > 0 ? (int64_t)fmin((double)equal, floor(budget / pivot)) : equal;
        count += take;
        budget -= (double)take * pivot;
        if (take < equal)
            break;
        lo = gt + 1;
    }
    return count;
}

/* Prune one layer: zero the `removed` smallest cross-worker weights (by
 * square; ties in row-major order) of the pruned copy, from the
 * original's values. keys has room for every cross-worker weight. */
static void prune_layer(const comet_dense *orig, comet_dense *pruned, const int *win,
                        const int *wout, comet_prune_kind kind, double budget, double cross_mass,
                        float *keys)
{
    memcpy(pruned->weight, orig->weight, (size_t)(orig->in * orig->out) * sizeof(float));
    if (budget <= 0)
        return;
    int64_t n_cross = 0;
    for (int64_t j = 0; j < orig->out; j++) {
        const float *row = orig->weight + j * orig->in;
        int w = wout[j];
        for (int64_t i = 0; i < orig->in; i++)
            if (win[i] != w && row[i] != 0)
                keys[n_cross++] = row[i] * row[i];
    }
    if (n_cross == 0)
        return;
    int64_t removed = kind == COMET_PRUNE_COUNT
                          ? (int64_t)floor(budget * (double)n_cross + 1e-9)
                          : fit_in_mass(keys, n_cross, budget * cross_mass * (1 + 1e-12));
    if (removed > n_cross)
        removed = n_cross;
    if (removed <= 0)
        return;
    float threshold = removed == n_cross ? INFINITY : kth_smallest(keys, n_cross, removed);
    /* everything below the threshold goes; then, of the ties, the first ones */
    int64_t below = 0;
    for (int64_t j = 0; j < orig->out; j++) {
        float *row = pruned->weight + j * orig->in;
        int w = wout[j];
        for (int64_t i = 0; i < orig->in; i++)
            if (win[i] != w && row[i] != 0 && row[i] * row[i] < threshold) {
                row[i] = 0;
                below++;
            }
    }
    int64_t ties = removed - below;
    for (int64_t j = 0; j < orig->out && ties > 0; j++) {
        float *row = pruned->weight + j * orig->in;
        int w = wout[j];
        for (int64_t i = 0; i < orig->in && ties > 0; i++)
            if (win[i] != w && row[i] != 0 && row[i] * row[i] == threshold) {
                row[i] = 0;
                ties--;
            }
    }
}

/* Fill the layer's counters from the original and pruned weights. */
static void count_layer(const comet_dense *orig, const comet_dense *pruned, const int *win,
                        const int *naive_in, const int *naive_out, int workers,
                        comet_partition_layer *P)
{
    size_t gg = (size_t)workers * (size_t)workers;
    memset(P->pair_kept, 0, gg * sizeof *P->pair_kept);
    memset(P->pair_naive, 0, gg * sizeof *P->pair_naive);
    memset(P->rows_of_worker, 0, (size_t)workers * sizeof *P->rows_of_worker);
    memset(P->local_kept, 0, (size_t)workers * sizeof *P->local_kept);
    memset(P->local_naive, 0, (size_t)workers * sizeof *P->local_naive);
    P->weights = P->cross_naive = P->cross_before = P->cross_after = 0;
    P->mass = P->cross_mass_before = P->cross_mass_after = P->cross_mass_naive = 0;
    for (int64_t j = 0; j < orig->out; j++) {
        int w = P->worker_of_out[j];
        P->rows_of_worker[w]++;
        for (int64_t i = 0; i < orig->in; i++) {
            float a = orig->weight[j * orig->in + i], b = pruned->weight[j * orig->in + i];
            if (a == 0)
                continue;
            P->weights++;
            P->mass += sq(a);
            P->local_naive[naive_out[j]]++;
            if (naive_in[i] != naive_out[j]) {
                P->cross_naive++;
                P->cross_mass_naive += sq(a);
                P->pair_naive[(size_t)naive_in[i] * (size_t)workers + (size_t)naive_out[j]]++;
            }
            if (b != 0)
                P->local_kept[w]++;
            if (win[i] == w)
                continue;
            P->cross_before++;
            P->cross_mass_before += sq(a);
            if (b != 0) {
                P->cross_after++;
                P->cross_mass_after += sq(a);
                P->pair_kept[(size_t)win[i] * (size_t)workers + (size_t)w]++;
            }
        }
    }
}

comet_status comet_partition_prune(const comet_mlp *m, comet_partition *p, comet_prune_kind kind,
                                   double budget, comet_error *err)
{
    if (!(budget >= 0 && budget <= 1))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "budget",
                               "the pruning budget must be a fraction in [0, 1], got %g", budget);
    int64_t widest = m->layers[0].in;
    for (int l = 0; l < m->n_layers; l++)
        if (m->layers[l].out > widest)
            widest = m->layers[l].out;
    int64_t most = 0; /* the largest layer: room for its cross-worker weights */
    for (int l = 0; l < m->n_layers; l++)
        if (m->layers[l].in * m->layers[l].out > most)
            most = m->layers[l].in * m->layers[l].out;
    int *naive_in = malloc((size_t)widest * sizeof *naive_in);
    int *naive_out = malloc((size_t)widest * sizeof *naive_out);
    float *keys = budget > 0 ? malloc((size_t)most * sizeof *keys) : NULL;
    comet_status st = naive_in && naive_out && (keys || budget <= 0) ? COMET_OK : COMET_ENOMEM;
    for (int l = 0; l < m->n_layers && !st; l++) {
        const comet_dense *L = &m->layers[l];
        const int *win = l ? p->layers[l - 1].worker_of_out : p->worker_of_input;
        comet_partition_layer *P = &p->layers[l];
        contiguous(L->in, p->workers, naive_in);
        contiguous(L->out, p->workers, naive_out);
        /* the cross mass the budget is a share of */
        double cross_mass = 0;
        for (int64_t j = 0; j < L->out; j++)
            for (int64_t i = 0; i < L->in; i++)
                if (win[i] != P->worker_of_out[j])
                    cross_mass += sq(L->weight[j * L->in + i]);
        prune_layer(L, &p->pruned.layers[l], win, P->worker_of_out, kind, budget, cross_mass, keys);
        count_layer(L, &p->pruned.layers[l], win, naive_in, naive_out, p->workers, P);
    }
    free(keys);
    free(naive_in);
    free(naive_out);
    if (st)
        return comet_error_set(err, st, NULL, 0, 0, NULL, "out of memory while pruning");
    return COMET_OK;
}

/* Output orders: neurons worker by worker, each worker's in their
 * original order. */
static void fill_order(int64_t n, const int *worker_of, int workers, int64_t *order)
{
    int64_t k = 0;
    for (int w = 0; w < workers; w++)
        for (int64_t i = 0; i < n; i++)
            if (worker_of[i] == w)
                order[k++] = i;
}

comet_status comet_partition_run(const comet_mlp *m, const comet_partition_request *req,
                                 comet_partition *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    int G = req->workers;
    if (m->n_layers < 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "the network has no layers");
    if (G < 1 || G > COMET_PARTITION_MAX_WORKERS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "workers",
                               "workers must be 1 to %d, got %d", COMET_PARTITION_MAX_WORKERS, G);
    if (m->layers[0].in < G)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "workers",
                               "more workers (%d) than the network's %lld inputs", G,
                               (long long)m->layers[0].in);
    for (int l = 0; l < m->n_layers; l++) {
        if (m->layers[l].out < G)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "workers",
                                   "more workers (%d) than the %lld neurons of layer %d (%s)", G,
                                   (long long)m->layers[l].out, l, m->layers[l].name);
        if (l && m->layers[l].in != m->layers[l - 1].out)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "layer shapes do not chain: layer %d gives %lld outputs, "
                                   "layer %d takes %lld inputs",
                                   l - 1, (long long)m->layers[l - 1].out, l,
                                   (long long)m->layers[l].in);
    }
    if (!(req->budget >= 0 && req->budget <= 1))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "budget",
                               "the pruning budget must be a fraction in [0, 1], got %g",
                               req->budget);
    out->workers = G;
    out->n_layers = m->n_layers;
    out->layers = calloc((size_t)m->n_layers, sizeof *out->layers);
    out->worker_of_input = malloc((size_t)m->layers[0].in * sizeof *out->worker_of_input);
    int64_t widest = m->layers[0].in;
    for (int l = 0; l < m->n_layers; l++)
        if (m->layers[l].out > widest)
            widest = m->layers[l].out;
    int64_t *cap = malloc((size_t)G * sizeof *cap);
    double *cost = malloc((size_t)widest * (size_t)G * sizeof *cost);
    int **best = calloc((size_t)m->n_layers, sizeof *best);
    int *best_in = malloc((size_t)m->layers[0].in * sizeof *best_in);
    int **worker_of = calloc((size_t)m->n_layers, sizeof *worker_of);
    comet_status st = COMET_OK;
    if (!out->layers || !out->worker_of_input || !cap || !cost || !best || !best_in || !worker_of)
        st = COMET_ENOMEM;
    size_t gg = (size_t)G * (size_t)G;
    for (int l = 0; l < m->n_layers && !st; l++) {
        comet_partition_layer *P = &out->layers[l];
        int64_t n = m->layers[l].out;
        P->in = m->layers[l].in;
        P->out = n;
        P->worker_of_out = malloc((size_t)n * sizeof(int));
        P->order = malloc((size_t)n * sizeof(int64_t));
        P->pair_kept = calloc(gg, sizeof(int64_t));
        P->pair_naive = calloc(gg, sizeof(int64_t));
        P->rows_of_worker = calloc((size_t)G, sizeof(int64_t));
        P->local_kept = calloc((size_t)G, sizeof(int64_t));
        P->local_naive = calloc((size_t)G, sizeof(int64_t));
        best[l] = malloc((size_t)n * sizeof(int));
        worker_of[l] = P->worker_of_out;
        if (!P->worker_of_out || !P->order || !P->pair_kept || !P->pair_naive ||
            !P->rows_of_worker || !P->local_kept || !P->local_naive || !best[l])
            st = COMET_ENOMEM;
    }
    if (!st) {
        capacities(m->layers[0].in, G, cap);
        st = group_inputs(&m->layers[0], G, cap, out->worker_of_input);
    }
    /* forward: each layer after the one before; then the inputs again
     * after the first layer, and forward once more; the better is kept */
    double best_total = INFINITY;
    for (int round = 0; round < REFINE_ROUNDS && !st; round++) {
        if (round > 0) {
            capacities(m->layers[0].in, G, cap);
            cross_cost_back(&m->layers[0], worker_of[0], G, cost);
            if (isnan(comet_assign_balanced(m->layers[0].in, G, cost, cap, out->worker_of_input)))
                st = COMET_ENOMEM;
        }
        for (int l = 0; l < m->n_layers && !st; l++) {
            const int *win = l ? worker_of[l - 1] : out->worker_of_input;
            capacities(m->layers[l].out, G, cap);
            cross_cost(&m->layers[l], win, G, cost);
            if (isnan(comet_assign_balanced(m->layers[l].out, G, cost, cap, worker_of[l])))
                st = COMET_ENOMEM;
        }
        if (st)
            break;
        double total = total_cross(m, worker_of, out->worker_of_input);
        if (total < best_total) {
            best_total = total;
            memcpy(best_in, out->worker_of_input, (size_t)m->layers[0].in * sizeof(int));
            for (int l = 0; l < m->n_layers; l++)
                memcpy(best[l], worker_of[l], (size_t)m->layers[l].out * sizeof(int));
        }
    }
    if (!st) {
        memcpy(out->worker_of_input, best_in, (size_t)m->layers[0].in * sizeof(int));
        for (int l = 0; l < m->n_layers; l++) {
            memcpy(worker_of[l], best[l], (size_t)m->layers[l].out * sizeof(int));
            fill_order(m->layers[l].out, worker_of[l], G, out->layers[l].order);
        }
    }
    for (int l = 0; best && l < m->n_layers; l++)
        free(best[l]);
    free(best);
    free(best_in);
    free(worker_of);
    free(cap);
    free(cost);
    if (st) {
        comet_partition_free(out);
        return comet_error_set(err, st, NULL, 0, 0, NULL, "out of memory while partitioning");
    }
    st = comet_mlp_copy(m, &out->pruned, err);
    if (!st)
        st = comet_partition_prune(m, out, req->prune, req->budget, err);
    if (st)
        comet_partition_free(out);
    return st;
}
