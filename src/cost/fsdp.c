/* ZeRO 3 as FSDP and DeepSpeed run it: each layer's weights are
 * all-gathered before the layer computes, once in forward and again in
 * backward, and its gradients reduce-scattered as its backward ends; all
 * of these are collectives of their own, issued in order on one
 * communication stream. A gather may run at most `prefetch` layers ahead
 * of the layer computing. This file works out, for one pass over the
 * layers of a stage, how long the compute waits for its gathers and how
 * long the last reduce-scatter runs past it: a max-plus recurrence over
 * the layers. All layers of a run are equal, so inside a run the
 * recurrence has a closed form: after its first d+1 layers (2d+1 when the
 * stream is the bottleneck) the compute ends and the stream's times are
 * straight lines in the layer number, or the larger of two, and the run's
 * middle is added in one step; only its first and last layers, whose
 * gathers belong to other runs, are stepped. That keeps a pass at
 * O(runs x prefetch) whatever the layer counts, and fsdp_pass_cached keeps
 * passes by their exact inputs for a caller that prices many alike (each
 * thread of the strategy search). The simulator builds the
 * same thing task by task (src/sim/step_sim.c); the two agree exactly
 * without congestion. Equations: docs/model.md, frameworks. */
#include "cost.h"

#include <math.h>
#include <string.h>

/* The larger of two finite times (fmax, without its NaN handling, which
 * the compiler will not inline). */
static inline double later(double a, double b)
{
    return a > b ? a : b;
}

/* The pass's runs in pass order (backward walks them in reverse), and a
 * cursor on the layer whose gather goes out next. */
typedef struct fsdp_walk {
    const fsdp_run *runs;
    int n_runs;
    bool backward;
    int depth;                 /* d: layers a gather runs ahead */
    int64_t total;             /* layers in the pass */
    int issue_run;             /* pass-order run holding the next gather's layer */
    int64_t issue_left;        /* ... its layers whose gathers are still to go out */
} fsdp_walk;

/* State of the recurrence before layer j of the pass: when the compute
 * and the stream are next free, and the end times of the gathers already
 * issued (layers j .. j+d), layer i's at slot i mod (d+1). */
typedef struct fsdp_state {
    double end;
    double stream;
    double gathered[COMET_MAX_PREFETCH + 1];
    int slot;                  /* j mod (d+1) */
} fsdp_state;

static const fsdp_run *run_at(const fsdp_walk *w, int k)
{
    return &w->runs[w->backward ? w->n_runs - 1 - k : k];
}

static int64_t layers_of(const fsdp_run *r)
{
    return (int64_t)r->count;
}

/* The gather of the next layer, issued once the layer d+1 before it has
 * computed (at `after`) and the stream is free; returns its end. */
static double issue_gather(fsdp_walk *w, fsdp_state *st, double after)
{
    while (w->issue_left == 0 && w->issue_run + 1 < w->n_runs) {
        w->issue_run++;
        w->issue_left = layers_of(run_at(w, w->issue_run));
    }
    w->issue_left--;
    st->stream = later(st->stream, after) + run_at(w, w->issue_run)->gather;
    return st->stream;
}

/* Layer j (of run r): its compute once its gather is in, then (backward)
 * its reduce-scatter, then the gather of layer j+d+1 into the slot j
 * frees. */
static void step(fsdp_walk *w, fsdp_state *st, int64_t j, const fsdp_run *r)
{
    st->end = later(st->end, st->gathered[st->slot]) + r->compute;
    if (w->backward)
        st->stream = later(st->stream, st->end) + r->reduce;
    if (j + w->depth + 1 < w->total)
        st->gathered[st->slot] = issue_gather(w, st, st->end);
    st->slot = st->slot == w->depth ? 0 : st->slot + 1;
}

/* Inside a run of equal layers (compute c; q on the stream per layer: its
 * gather, and in backward its reduce-scatter), once layer a of the run has
 * been stepped, with E_a = st->end and T_a = st->stream, every layer m
 * after it whose own gather and the one it issues are the run's follows
 * (docs/model.md, frameworks):
 *   d = 0:            E_m = T_{m-1} + c,  T_m = T_{m-1} + c + q    (a >= 0)
 *   d >= 1, q <= c:   E_m = E_a + (m-a) c,
 *                     T_m = max(T_a + (m-a) q, E_m + q)            (a >= d)
 *   d >= 1, q > c:    T_m = T_a + (m-a) q,
 *                     E_m = max(E_a + (m-a) c, T_{m-d-1} + c)      (a >= 2d)
 * Moves the state by `skip` layers, to after layer b = a + skip, with the
 * gathers of layers b+1 .. b+d+1 issued (T_{b-d} .. T_b); skip > d. */
static void jump(fsdp_state *st, int d, double c, double q, int64_t skip)
{
    double e = st->end, t = st->stream;
    st->slot = (int)((st->slot + skip) % (d + 1));
    for (int i = 0; i <= d; i++) { /* T_{b-d+i}, the gather of layer b+1+i */
        double k = (double)(skip - d + i);
        double g = d == 0 ? t + k * (c + q) : q <= c ? later(t + k * q, e + k * c + q) : t + k * q;
        int s = st->slot + i;
        st->gathered[s > d ? s - d - 1 : s] = g;
        st->stream = g;
    }
    if (d == 0)
        st->end = t + (double)(skip - 1) * (c + q) + c;
    else if (q <= c)
        st->end = e + (double)skip * c;
    else
        st->end = later(e + (double)skip * c, t + (double)(skip - d - 1) * q + c);
}

void fsdp_pass(const fsdp_run *runs, int n_runs, int64_t prefetch, bool backward, fsdp_time *out)
{
    memset(out, 0, sizeof *out);
    fsdp_walk w = {.runs = runs, .n_runs = n_runs, .backward = backward,
                   .depth = (int)(prefetch < COMET_MAX_PREFETCH ? prefetch : COMET_MAX_PREFETCH)};
    for (int k = 0; k < n_runs; k++) {
        w.total += layers_of(&runs[k]);
        out->compute += runs[k].count * runs[k].compute;
        out->comm += runs[k].count * (runs[k].gather + (backward ? runs[k].reduce : 0.0));
    }
    if (w.total == 0)
        return;
    int d = w.depth;
    w.issue_left = layers_of(run_at(&w, 0));
    fsdp_state st; /* its gathers set as they are issued */
    st.end = st.stream = 0.0;
    st.slot = 0;
    /* the first d+1 gathers go out at once */
    for (int k = 0; k <= d; k++)
        st.gathered[k] = k < w.total ? issue_gather(&w, &st, 0.0) : 0.0;
    int64_t j = 0;
    for (int k = 0; k < n_runs; k++) {
        const fsdp_run *r = run_at(&w, k);
        int64_t n = layers_of(r), first = j;
        double q = r->gather + (backward ? r->reduce : 0.0);
        /* layers stepped before the closed form holds, and the run's last
         * layer whose gather and the one it issues are both the run's */
        int64_t a = d == 0 || q <= r->compute ? d : 2 * d;
        int64_t b = n - d - 2;
        for (; j < first + n; j++) {
            step(&w, &st, j, r);
            if (j == first + a && b - a > d) {
                jump(&st, d, r->compute, q, b - a);
                w.issue_left -= b - a;
                j = first + b;
            }
        }
    }
    double end = later(st.end, st.stream);
    out->exposed = comet_fmax(0.0, end - out->compute);
    out->hidden = comet_fmax(0.0, out->comm - out->exposed);
}

void fsdp_cache_init(fsdp_cache *c)
{
    for (int i = 0; i < FSDP_CACHE_SLOTS; i++)
        c->entry[i].n_runs = 0;
    c->next = 0;
}

static bool same_runs(const fsdp_run *a, const fsdp_run *b, int n)
{
    for (int k = 0; k < n; k++)
        if (a[k].count != b[k].count || a[k].compute != b[k].compute ||
            a[k].gather != b[k].gather || a[k].reduce != b[k].reduce)
            return false;
    return true;
}

void fsdp_pass_cached(fsdp_cache *cache, const fsdp_run *runs, int n_runs, int64_t prefetch,
                      bool backward, fsdp_time *out)
{
    if (!cache || n_runs < 1 || n_runs > FSDP_CACHE_RUNS) {
        fsdp_pass(runs, n_runs, prefetch, backward, out);
        return;
    }
    for (int i = 0; i < FSDP_CACHE_SLOTS; i++) {
        const fsdp_cache_entry *e = &cache->entry[i];
        if (e->n_runs == n_runs && e->backward == backward && e->prefetch == prefetch &&
            same_runs(e->runs, runs, n_runs)) {
            *out = e->out;
            return;
        }
    }
    fsdp_pass(runs, n_runs, prefetch, backward, out);
    fsdp_cache_entry *e = &cache->entry[cache->next];
    cache->next = (cache->next + 1) % FSDP_CACHE_SLOTS;
    e->n_runs = n_runs;
    e->backward = backward;
    e->prefetch = prefetch;
    memcpy(e->runs, runs, (size_t)n_runs * sizeof runs[0]);
    e->out = *out;
}
