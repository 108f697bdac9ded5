/* The simulated step as busy spans per pipeline stage and stream, for the
 * report's Gantt chart. Tasks on the same stream that follow each other
 * without a gap, belong to the same microbatch and are of the same kind
 * (layer after layer) are merged, and the blocking TP collectives between
 * them are folded into their neighbours, so a chart draws one bar per
 * microbatch's forward or backward, not thousands of slivers; gaps on the
 * compute stream are the pipeline bubbles. Network
 * links (congestion mode) are left out: their phases are drawn through
 * the collectives that own them. */
#include <stdlib.h>
#include <string.h>

#include "chrome_trace.h"

void comet_sim_timeline_free(comet_sim_timeline *t)
{
    if (!t)
        return;
    free(t->spans);
    memset(t, 0, sizeof *t);
}

static int by_lane_then_start(const void *x, const void *y)
{
    const comet_sim_span *a = x, *b = y;
    if (a->stage != b->stage)
        return a->stage < b->stage ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

comet_status sim_timeline_collect(const sim_graph *g, int per_stage,
                                  const char *const *stream_names, int n_streams,
                                  const char *const *kind_names, int n_kinds, int folded,
                                  comet_sim_timeline *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    out->stream_names = stream_names;
    out->n_streams = n_streams;
    out->kind_names = kind_names;
    out->n_kinds = n_kinds;
    out->stages = per_stage > 0 ? g->n_resources / per_stage : 0;
    out->spans = malloc(sizeof *out->spans * (size_t)(g->n > 0 ? g->n : 1));
    if (!out->spans)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    double makespan = 0.0;
    for (int i = 0; i < g->n; i++)
        if (g->tasks[i].end > makespan)
            makespan = g->tasks[i].end;
    size_t n = 0;
    for (int i = 0; i < g->n; i++) {
        const sim_task *t = &g->tasks[i];
        int stream = t->resource % per_stage;
        if (stream >= n_streams || t->end <= t->start)
            continue;
        out->spans[n++] = (comet_sim_span){t->resource / per_stage, stream, t->kind, t->micro,
                                           t->start, t->end};
    }
    qsort(out->spans, n, sizeof out->spans[0], by_lane_then_start);
    /* merge touching spans of one kind and microbatch on one lane; spans of
     * kind `folded` join whichever neighbour they touch */
    double touch = makespan * 1e-9;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        comet_sim_span *last = kept ? &out->spans[kept - 1] : NULL;
        const comet_sim_span s = out->spans[i];
        if (last && last->stage == s.stage && last->stream == s.stream &&
            last->micro == s.micro && s.start <= last->end + touch &&
            (last->kind == s.kind || s.kind == folded || last->kind == folded)) {
            if (s.end > last->end)
                last->end = s.end;
            if (last->kind == folded)
                last->kind = s.kind;
            continue;
        }
        out->spans[kept++] = s;
    }
    out->n = kept;
    return COMET_OK;
}
