/* Chrome trace-event output (the JSON that Perfetto and chrome://tracing
 * open): one process per pipeline stage, one thread per stream (compute,
 * TP, the two p2p directions, DP) and, under congestion, per network link;
 * a complete ("X") slice per task named after its kind, microbatch and
 * layer, times in microseconds. */
#include "trace.h"

#include <stdio.h>

void sim_trace_write(const sim_graph *g, int per_stage, const char *const *stream_names,
                     int n_streams, const char *const *link_names,
                     const char *const *kind_names, comet_buf *out)
{
    comet_buf_printf(out, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    int stages = g->n_resources / per_stage;
    for (int s = 0; s < stages; s++) {
        comet_buf_printf(out,
                         "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": "
                         "{\"name\": \"stage %d\"}},\n",
                         s, s);
        for (int k = 0; k < per_stage; k++)
            comet_buf_printf(out,
                             "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": "
                             "%d, \"args\": {\"name\": \"%s%s\"}},\n",
                             s, k, k < n_streams ? "" : "link ",
                             k < n_streams ? stream_names[k] : link_names[k - n_streams]);
    }
    for (int i = 0; i < g->n; i++) {
        const sim_task *t = &g->tasks[i];
        if (t->end - t->start <= 0.0)
            continue;
        comet_buf_printf(out,
                         "{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                         "\"name\": \"%s\", \"args\": {\"microbatch\": %d, \"layer\": %d}},\n",
                         t->resource / per_stage, t->resource % per_stage, t->start * 1e6,
                         (t->end - t->start) * 1e6, kind_names[t->kind], t->micro, t->layer);
    }
    /* close the array without a trailing comma */
    comet_buf_printf(out, "{\"ph\": \"M\", \"name\": \"end\", \"pid\": 0, \"args\": {}}\n]}\n");
}
