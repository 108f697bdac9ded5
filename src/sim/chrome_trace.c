/* Chrome trace-event output (the JSON that Perfetto and chrome://tracing
 * open): one process per pipeline stage, one thread per stream (compute,
 * TP, the two p2p directions, DP) and, under congestion, per network link;
 * a complete ("X") slice per task named after its kind, microbatch and
 * layer, times in microseconds; on the fabric (--flows), a counter track
 * per hot link of its utilization (the collective form's trace has the
 * same tracks). */
#include "chrome_trace.h"

#include <stdio.h>
#include <stdlib.h>

/* A change in the number of transfers on a link. */
typedef struct step_change {
    double time;
    int delta;
} step_change;

static int by_time(const void *a, const void *b)
{
    const step_change *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->delta - y->delta; /* ends before starts at the same instant */
}

/* Counter tracks: how many transfers each link carries over time. */
static void link_counters(const sim_graph *g, int per_stage, int n_streams,
                          const char *const *link_names, comet_buf *out)
{
    step_change *ch = malloc(sizeof *ch * 2 * (size_t)(g->n > 0 ? g->n : 1));
    if (!ch)
        return;
    for (int r = 0; r < g->n_resources; r++) {
        int k = r % per_stage;
        if (k < n_streams)
            continue;
        int n = 0;
        for (int i = 0; i < g->n; i++) {
            const sim_task *t = &g->tasks[i];
            if (t->resource != r || t->end <= t->start)
                continue;
            ch[n++] = (step_change){t->start, 1};
            ch[n++] = (step_change){t->end, -1};
        }
        if (n == 0)
            continue;
        qsort(ch, (size_t)n, sizeof ch[0], by_time);
        int active = 0;
        for (int i = 0; i < n; i++) {
            active += ch[i].delta;
            if (i + 1 < n && ch[i + 1].time == ch[i].time)
                continue;
            comet_buf_printf(out,
                             "{\"ph\": \"C\", \"pid\": %d, \"name\": \"link %s transfers\", "
                             "\"ts\": %.3f, \"args\": {\"active\": %d}},\n",
                             r / per_stage, link_names[k - n_streams], ch[i].time * 1e6, active);
        }
    }
    free(ch);
}

void comet_sim_trace_link_counters(comet_buf *b, int pid, const char *process, int n,
                                   const comet_link_series *series, const char *const *names)
{
    comet_buf_printf(b, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                        "\"args\": {\"name\": ",
                     pid);
    comet_buf_json_string(b, process);
    comet_buf_printf(b, "}}");
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < series[i].n; k++) {
            comet_buf_printf(b, ",\n{\"name\": ");
            comet_buf_json_string(b, names[i]);
            comet_buf_printf(b, ", \"ph\": \"C\", \"pid\": %d, \"ts\": %.6f, "
                                "\"args\": {\"utilization %%\": %.4f}}",
                             pid, series[i].t[k] * 1e6, 100.0 * series[i].utilization[k]);
            if (!series[i].queue)
                continue;
            /* congestion control's tracks: the egress queue and PFC pause */
            char qname[224];
            snprintf(qname, sizeof qname, "%s: queue and PFC pause", names[i]);
            comet_buf_printf(b, ",\n{\"name\": ");
            comet_buf_json_string(b, qname);
            comet_buf_printf(b, ", \"ph\": \"C\", \"pid\": %d, \"ts\": %.6f, "
                                "\"args\": {\"queue KB\": %.3f, \"paused\": %d}}",
                             pid, series[i].t[k] * 1e6, series[i].queue[k] / 1e3,
                             series[i].paused[k] ? 1 : 0);
        }
}

void sim_chrome_trace_write(const sim_graph *g, int per_stage, const char *const *stream_names,
                     int n_streams, const char *const *link_names,
                     const char *const *kind_names, const comet_sim_fabric_links *fabric,
                     comet_buf *out)
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
    link_counters(g, per_stage, n_streams, link_names, out);
    /* close the array without a trailing comma */
    comet_buf_printf(out, "{\"ph\": \"M\", \"name\": \"end\", \"pid\": 0, \"args\": {}}");
    if (fabric && fabric->n_series > 0) {
        /* the fabric's hot links, a process after the stages' */
        const char *names[COMET_FABRIC_HOT_LINKS];
        for (int i = 0; i < fabric->n_series; i++)
            names[i] = fabric->hot[i].name;
        comet_buf_printf(out, ",\n");
        comet_sim_trace_link_counters(out, stages, "fabric links (utilization of the flows)",
                                      fabric->n_series, fabric->series, names);
    }
    comet_buf_printf(out, "\n]}\n");
}
