/* ZeRO 3 as FSDP and DeepSpeed run it: each layer's weights are
 * all-gathered before the layer computes, once in forward and again in
 * backward, and its gradients reduce-scattered as its backward ends; all
 * of these are collectives of their own, issued in order on one
 * communication stream. A gather may run at most `prefetch` layers ahead
 * of the layer computing. This file works out, for one pass over the
 * layers of a stage, how long the compute waits for its gathers and how
 * long the last reduce-scatter runs past it: a max-plus recurrence over
 * the layers, cheap because all layers of a run are equal, so once its
 * state moves by the same amount per layer the rest of the run is skipped
 * in one step. The simulator builds the same thing task by task
 * (src/sim/step_sim.c); the two agree exactly without congestion.
 * Equations: docs/model.md, frameworks. */
#include "cost.h"

#include <math.h>
#include <string.h>

/* State of the recurrence after layer j of the pass: the compute end
 * times of layers j-d .. j, the end times of the gathers already issued
 * for layers j+1 .. j+d+1, and when the stream is next free. */
typedef struct fsdp_state {
    double end[COMET_MAX_PREFETCH + 1];      /* end[k]: compute end of layer j-k */
    double gathered[COMET_MAX_PREFETCH + 1]; /* gathered[k]: gather end of layer j+1+k */
    double stream;
} fsdp_state;

typedef struct fsdp_walk {
    const fsdp_run *runs;
    int n_runs;
    bool backward;
    int depth;
    int64_t total;             /* layers in the pass */
} fsdp_walk;

/* The run holding layer i of the pass (backward walks the runs in reverse). */
static const fsdp_run *run_of(const fsdp_walk *w, int64_t i)
{
    for (int k = 0; k < w->n_runs; k++) {
        const fsdp_run *r = &w->runs[w->backward ? w->n_runs - 1 - k : k];
        int64_t n = (int64_t)r->count;
        if (i < n)
            return r;
        i -= n;
    }
    return NULL;
}

/* The gather of layer i, issued once layer i-d-1 has computed (at `after`)
 * and the stream is free. */
static double issue_gather(const fsdp_walk *w, fsdp_state *st, int64_t i, double after)
{
    const fsdp_run *r = run_of(w, i);
    if (!r)
        return 0.0;
    st->stream = fmax(st->stream, after) + r->gather;
    return st->stream;
}

/* One layer j: its compute once its gather is in, then (backward) its
 * reduce-scatter, then the gather of layer j+d+1. */
static void step(const fsdp_walk *w, fsdp_state *st, int64_t j, const fsdp_run *r)
{
    int d = w->depth;
    double start = fmax(st->end[0], st->gathered[0]);
    for (int k = d; k > 0; k--)
        st->end[k] = st->end[k - 1];
    st->end[0] = start + r->compute;
    for (int k = 0; k < d; k++)
        st->gathered[k] = st->gathered[k + 1];
    if (w->backward)
        st->stream = fmax(st->stream, st->end[0]) + r->reduce;
    st->gathered[d] = j + d + 1 < w->total ? issue_gather(w, st, j + d + 1, st->end[0]) : 0.0;
}

/* Has the whole state moved by one amount since `prev`? Then every
 * further equal layer moves it by that amount again. */
static bool steady(const fsdp_state *prev, const fsdp_state *st, int d, double *shift)
{
    double p = st->end[0] - prev->end[0];
    double tol = 1e-12 * fmax(fabs(st->end[0]), 1e-30);
    for (int k = 0; k <= d; k++)
        if (fabs(st->end[k] - prev->end[k] - p) > tol ||
            fabs(st->gathered[k] - prev->gathered[k] - p) > tol)
            return false;
    if (fabs(st->stream - prev->stream - p) > tol)
        return false;
    *shift = p;
    return true;
}

static void advance(fsdp_state *st, int d, double by)
{
    for (int k = 0; k <= d; k++) {
        st->end[k] += by;
        st->gathered[k] += by;
    }
    st->stream += by;
}

void fsdp_pass(const fsdp_run *runs, int n_runs, int64_t prefetch, bool backward, fsdp_time *out)
{
    memset(out, 0, sizeof *out);
    fsdp_walk w = {.runs = runs, .n_runs = n_runs, .backward = backward,
                   .depth = (int)(prefetch < COMET_MAX_PREFETCH ? prefetch : COMET_MAX_PREFETCH)};
    for (int k = 0; k < n_runs; k++) {
        w.total += (int64_t)runs[k].count;
        out->compute += runs[k].count * runs[k].compute;
        out->comm += runs[k].count * (runs[k].gather + (backward ? runs[k].reduce : 0.0));
    }
    if (w.total == 0)
        return;
    fsdp_state st;
    memset(&st, 0, sizeof st);
    /* the first d+1 gathers go out at once */
    for (int k = 0; k <= w.depth; k++)
        st.gathered[k] = k < w.total ? issue_gather(&w, &st, k, 0.0) : 0.0;
    int64_t j = 0;
    for (int k = 0; k < n_runs; k++) {
        const fsdp_run *r = &runs[backward ? n_runs - 1 - k : k];
        int64_t last = j + (int64_t)r->count; /* one past the run */
        /* layers whose prefetched gathers stay inside the run may be
         * skipped once the state is steady */
        int64_t skippable = last - w.depth - 1;
        fsdp_state prev;
        for (; j < last; j++) {
            prev = st;
            step(&w, &st, j, r);
            double shift;
            if (j + 1 < skippable && j > 0 && steady(&prev, &st, w.depth, &shift)) {
                int64_t skip = skippable - (j + 1);
                advance(&st, w.depth, (double)skip * shift);
                j += skip;
            }
        }
    }
    double end = fmax(st.end[0], st.stream);
    out->exposed = fmax(0.0, end - out->compute);
    out->hidden = fmax(0.0, out->comm - out->exposed);
}
