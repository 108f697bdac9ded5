/* Chrome trace-event output (the JSON that Perfetto and chrome://tracing
 * open): one process per pipeline stage, one thread per stream (compute,
 * TP, the two p2p directions, DP), a complete ("X") slice per task named
 * after its kind, microbatch and layer, times in microseconds. */
#include "trace.h"

#include <stdio.h>

static const char *const stream_names[] = {"compute", "tensor-parallel", "send forward",
                                           "send backward", "data-parallel"};
#define STREAMS 5

void sim_trace_write(const sim_graph *g, const char *const *kind_names, comet_buf *out)
{
    comet_buf_printf(out, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    int stages = g->n_resources / STREAMS;
    for (int s = 0; s < stages; s++) {
        comet_buf_printf(out,
                         "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": "
                         "{\"name\": \"stage %d\"}},\n",
                         s, s);
        for (int k = 0; k < STREAMS; k++)
            comet_buf_printf(out,
                             "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": "
                             "%d, \"args\": {\"name\": \"%s\"}},\n",
                             s, k, stream_names[k]);
    }
    for (int i = 0; i < g->n; i++) {
        const sim_task *t = &g->tasks[i];
        if (t->end - t->start <= 0.0)
            continue;
        comet_buf_printf(out,
                         "{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                         "\"name\": \"%s\", \"args\": {\"microbatch\": %d, \"layer\": %d}},\n",
                         t->resource / STREAMS, t->resource % STREAMS, t->start * 1e6,
                         (t->end - t->start) * 1e6, kind_names[t->kind], t->micro, t->layer);
    }
    /* close the array without a trailing comma */
    comet_buf_printf(out, "{\"ph\": \"M\", \"name\": \"end\", \"pid\": 0, \"args\": {}}\n]}\n");
}
