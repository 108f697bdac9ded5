/* Multilayer perceptrons and labelled data built from tensor files, and
 * the plain C forward pass that checks a partitioned network's accuracy.
 * Why: the partitioner needs a network whose layer shapes chain and whose
 * weights are finite, and the user needs to see what pruning costs in
 * accuracy on their own data; both checks say what is wrong in one line. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

void comet_mlp_free(comet_mlp *m)
{
    if (!m)
        return;
    for (int l = 0; l < m->n_layers; l++) {
        free(m->layers[l].weight);
        free(m->layers[l].bias);
    }
    free(m->layers);
    m->layers = NULL;
    m->n_layers = 0;
}

comet_status comet_mlp_copy(const comet_mlp *m, comet_mlp *out, comet_error *err)
{
    out->n_layers = 0;
    out->layers = calloc((size_t)(m->n_layers ? m->n_layers : 1), sizeof *out->layers);
    if (!out->layers)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int l = 0; l < m->n_layers; l++) {
        const comet_dense *src = &m->layers[l];
        comet_dense *d = &out->layers[l];
        *d = *src;
        d->weight = malloc((size_t)(src->in * src->out) * sizeof(float));
        d->bias = malloc((size_t)src->out * sizeof(float));
        out->n_layers = l + 1;
        if (!d->weight || !d->bias) {
            comet_mlp_free(out);
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        }
        memcpy(d->weight, src->weight, (size_t)(src->in * src->out) * sizeof(float));
        memcpy(d->bias, src->bias, (size_t)src->out * sizeof(float));
    }
    return COMET_OK;
}

/* The first number in a name ("layers.12.weight" -> 12), or -1. */
static long name_number(const char *name)
{
    for (const char *p = name; *p; p++)
        if (isdigit((unsigned char)*p))
            return strtol(p, NULL, 10);
    return -1;
}

/* The bias name that goes with a weight name, or "" when none is implied. */
static void bias_name_of(const char *weight, char *out, size_t cap)
{
    const char *w = strstr(weight, "weight");
    if (w) {
        snprintf(out, cap, "%.*sbias%s", (int)(w - weight), weight, w + 6);
        return;
    }
    if (weight[0] == 'w' || weight[0] == 'W') {
        snprintf(out, cap, "%c%s", weight[0] == 'w' ? 'b' : 'B', weight + 1);
        return;
    }
    out[0] = 0;
}

typedef struct weight_ref {
    int index;     /* in the set */
    long number;   /* from the name */
} weight_ref;

static int by_number(const void *a, const void *b)
{
    const weight_ref *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static bool is_weight(const comet_tensor *t)
{
    return t->ndim == 2 || (t->ndim == 4 && t->shape[2] == 1 && t->shape[3] == 1);
}

comet_status comet_mlp_from_tensors(const comet_tensor_set *s, comet_weight_layout layout,
                                    const char *file, comet_mlp *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    weight_ref *refs = malloc((size_t)(s->n ? s->n : 1) * sizeof *refs);
    if (!refs)
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (is_weight(&s->tensors[i]))
            refs[n++] = (weight_ref){i, name_number(s->tensors[i].name)};
    if (n == 0) {
        free(refs);
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "no weight matrices (2-D tensors) in the file");
    }
    qsort(refs, (size_t)n, sizeof *refs, by_number);
    out->layers = calloc((size_t)n, sizeof *out->layers);
    if (!out->layers) {
        free(refs);
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    }
    comet_status st = COMET_OK;
    for (int l = 0; l < n && !st; l++) {
        const comet_tensor *t = &s->tensors[refs[l].index];
        comet_dense *d = &out->layers[l];
        out->n_layers = l + 1;
        snprintf(d->name, sizeof d->name, "%s", t->name);
        bool transpose = layout == COMET_LAYOUT_IN_OUT && t->ndim == 2;
        d->out = transpose ? t->shape[1] : t->shape[0];
        d->in = transpose ? t->shape[0] : t->shape[1];
        if (d->in == 0 || d->out == 0) {
            st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                 "layer %d (%s) has an empty weight matrix", l, t->name);
            break;
        }
        if (l > 0 && out->layers[l - 1].out != d->in) {
            st = comet_error_set(
                err, COMET_EINPUT, file, 0, 0, NULL,
                "layer shapes do not chain: layer %d (%s) gives %lld outputs, layer %d (%s) "
                "takes %lld inputs%s",
                l - 1, out->layers[l - 1].name, (long long)out->layers[l - 1].out, l, t->name,
                (long long)d->in,
                layout == COMET_LAYOUT_OUT_IN ? " (weights laid out (in, out)? try --layout in-out)"
                                              : "");
            break;
        }
        d->weight = malloc((size_t)t->count * sizeof(float));
        d->bias = calloc((size_t)d->out, sizeof(float));
        if (!d->weight || !d->bias) {
            st = comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
            break;
        }
        for (int64_t j = 0; j < d->out; j++)
            for (int64_t i = 0; i < d->in; i++)
                d->weight[j * d->in + i] =
                    transpose ? t->values[i * d->out + j] : t->values[j * d->in + i];
        char bias[160];
        bias_name_of(t->name, bias, sizeof bias);
        const comet_tensor *b = bias[0] ? comet_tensors_find(s, bias) : NULL;
        if (b) {
            if (b->ndim != 1 || b->shape[0] != d->out) {
                st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                     "bias %s has %lld values for %lld outputs of %s", b->name,
                                     (long long)b->count, (long long)d->out, t->name);
                break;
            }
            memcpy(d->bias, b->values, (size_t)d->out * sizeof(float));
        }
        for (int64_t k = 0; k < t->count && !st; k++)
            if (!isfinite(d->weight[k]))
                st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                     "layer %d (%s): weight [%lld, %lld] is %s", l, t->name,
                                     (long long)(k / d->in), (long long)(k % d->in),
                                     isnan(d->weight[k]) ? "NaN" : "infinite");
        for (int64_t k = 0; k < d->out && !st; k++)
            if (!isfinite(d->bias[k]))
                st = comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                     "layer %d (%s): bias [%lld] is %s", l, t->name, (long long)k,
                                     isnan(d->bias[k]) ? "NaN" : "infinite");
    }
    free(refs);
    if (st)
        comet_mlp_free(out);
    return st;
}

comet_status comet_mlp_read(const char *path, comet_weight_layout layout, comet_mlp *out,
                            comet_error *err)
{
    memset(out, 0, sizeof *out);
    comet_tensor_set s;
    comet_status st = comet_tensors_read(path, &s, err);
    if (st)
        return st;
    st = comet_mlp_from_tensors(&s, layout, path, out, err);
    comet_tensors_free(&s);
    return st;
}

void comet_labelled_free(comet_labelled *d)
{
    if (!d)
        return;
    free(d->x);
    free(d->y);
    d->x = NULL;
    d->y = NULL;
    d->n = d->dim = 0;
}

comet_status comet_labelled_from_tensors(const comet_tensor_set *s, const char *file,
                                         comet_labelled *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    const comet_tensor *x = comet_tensors_find(s, "x");
    const comet_tensor *y = comet_tensors_find(s, "y");
    if (!x)
        x = comet_tensors_find(s, "X");
    if (!y)
        y = comet_tensors_find(s, "Y");
    if (!x || !y)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "labelled data needs members x (samples, features) and y (labels)");
    if (x->ndim != 2 || x->shape[0] == 0 || x->shape[1] == 0)
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "x must be 2-D (samples, features) and not empty");
    if (y->ndim != 1 || y->shape[0] != x->shape[0])
        return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                               "y must be 1-D with one label per sample (%lld samples, %lld "
                               "labels)",
                               (long long)x->shape[0], (long long)y->count);
    out->n = x->shape[0];
    out->dim = x->shape[1];
    out->x = malloc((size_t)x->count * sizeof(float));
    out->y = malloc((size_t)out->n * sizeof(int32_t));
    if (!out->x || !out->y) {
        comet_labelled_free(out);
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    }
    memcpy(out->x, x->values, (size_t)x->count * sizeof(float));
    for (int64_t i = 0; i < out->n; i++) {
        float v = y->values[i];
        if (!(v >= 0 && v < 2147483647.0f) || v != floorf(v)) {
            comet_labelled_free(out);
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "label %lld is %g, not a whole number >= 0", (long long)i,
                                   (double)v);
        }
        out->y[i] = (int32_t)v;
    }
    for (int64_t k = 0; k < x->count; k++)
        if (!isfinite(out->x[k])) {
            comet_labelled_free(out);
            return comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                   "sample %lld has a value that is not finite",
                                   (long long)(k / x->shape[1]));
        }
    return COMET_OK;
}

comet_status comet_labelled_read(const char *path, comet_labelled *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    comet_tensor_set s;
    comet_status st = comet_tensors_read(path, &s, err);
    if (st)
        return st;
    st = comet_labelled_from_tensors(&s, path, out, err);
    comet_tensors_free(&s);
    return st;
}

comet_status comet_mlp_accuracy(const comet_mlp *m, const comet_labelled *d, double *accuracy,
                                comet_error *err)
{
    *accuracy = NAN;
    if (m->n_layers == 0 || d->n == 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "no network or no samples");
    if (d->dim != m->layers[0].in)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "the data has %lld features, the network takes %lld inputs",
                               (long long)d->dim, (long long)m->layers[0].in);
    int64_t classes = m->layers[m->n_layers - 1].out;
    for (int64_t s = 0; s < d->n; s++)
        if (d->y[s] >= classes)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "label %d of sample %lld is not below the network's %lld "
                                   "outputs",
                                   d->y[s], (long long)s, (long long)classes);
    int64_t widest = d->dim;
    for (int l = 0; l < m->n_layers; l++)
        if (m->layers[l].out > widest)
            widest = m->layers[l].out;
    double *a = malloc((size_t)widest * sizeof(double));
    double *b = malloc((size_t)widest * sizeof(double));
    if (!a || !b) {
        free(a);
        free(b);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    int64_t right = 0;
    for (int64_t s = 0; s < d->n; s++) {
        for (int64_t i = 0; i < d->dim; i++)
            a[i] = d->x[s * d->dim + i];
        for (int l = 0; l < m->n_layers; l++) {
            const comet_dense *L = &m->layers[l];
            for (int64_t j = 0; j < L->out; j++) {
                const float *row = L->weight + j * L->in;
                double sum = L->bias[j];
                for (int64_t i = 0; i < L->in; i++)
                    sum += (double)row[i] * a[i];
                b[j] = (l + 1 < m->n_layers && sum < 0) ? 0 : sum;
            }
            double *swap = a;
            a = b;
            b = swap;
        }
        int64_t best = 0;
        for (int64_t j = 1; j < classes; j++)
            if (a[j] > a[best])
                best = j;
        right += best == d->y[s];
    }
    free(a);
    free(b);
    *accuracy = (double)right / (double)d->n;
    return COMET_OK;
}
