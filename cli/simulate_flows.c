/* comet simulate --collective ... --flows: one collective as flows on the
 * system's fabric, every NPU simulated, printed beside the closed form the
 * estimator prices it with, with the most utilized links. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* "A,B,..." into span[], one value per dimension. */
static comet_status parse_span(const char *text, const comet_system *sys, const int64_t *sizes,
                               int64_t *span, comet_error *err)
{
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        span[d] = d < sys->n_dims ? sizes[d] : 1;
    if (!text)
        return COMET_OK;
    const char *p = text;
    for (int d = 0; d < sys->n_dims; d++) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 1 || v > sizes[d] || sizes[d] % v)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--span",
                                   "expected one NPU count per dimension (%d), comma-separated, "
                                   "each dividing its dimension's size (%s has %lld), got \"%s\"",
                                   sys->n_dims, sys->dims[d].name, (long long)sizes[d], text);
        span[d] = v;
        p = end;
        if (d + 1 < sys->n_dims) {
            if (*p != ',')
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--span",
                                       "expected one NPU count per dimension (%d), comma-separated, "
                                       "got \"%s\"",
                                       sys->n_dims, text);
            p++;
        }
    }
    if (*p)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--span",
                               "expected one NPU count per dimension (%d), comma-separated, got "
                               "\"%s\"",
                               sys->n_dims,
                               text);
    return COMET_OK;
}

static void render(comet_buf *b, const cli_flow_args *a, const comet_system *sys,
                   const comet_fabric *f, const int64_t *span, const comet_flow_result *r,
                   double analytic, double seconds)
{
    comet_fabric_info info;
    comet_fabric_info_of(f, &info);
    const char *name = comet_collective_name(a->collective);
    double diff = analytic > 0.0 ? (r->time - analytic) / analytic : 0.0;
    if (a->json) {
        comet_buf_printf(b, "{\"collective\": \"%s\", \"bytes\": %.10g, \"npus\": %lld, "
                            "\"switches\": %lld, \"links\": %lld, \"groups\": %lld, "
                            "\"concurrent\": %lld, \"time_s\": %.10g, \"analytic_s\": %.10g, "
                            "\"flows\": %llu, \"events\": %llu, \"rate_updates\": %llu, "
                            "\"scheduler\": \"%s\", \"hot_links\": [",
                         name, a->size, (long long)info.npus, (long long)info.switches,
                         (long long)info.links, (long long)r->groups,
                         (long long)(a->concurrent ? a->concurrent : 1), r->time, analytic,
                         (unsigned long long)r->flows, (unsigned long long)r->events,
                         (unsigned long long)r->rate_updates, a->themis ? "themis" : "baseline");
        for (int i = 0; i < r->n_hot; i++) {
            char ln[160];
            comet_fabric_link_name(f, r->hot[i].link, ln, sizeof ln);
            comet_buf_printf(b, "%s{\"link\": \"%s\", \"bytes\": %.10g, \"utilization\": %.6f}",
                             i ? ", " : "", ln, r->hot[i].bytes, r->hot[i].utilization);
        }
        comet_buf_printf(b, "]");
        if (r->cc.fluid)
            comet_buf_printf(b, ", \"congestion_control\": {\"steps\": %llu, "
                                "\"peak_queue_bytes\": %.10g, \"mean_queue_bytes\": %.10g, \"pause_s\": %.10g, "
                                "\"max_link_pause_s\": %.10g, \"pauses\": %lld, "
                                "\"paused_links\": %lld, \"flows\": %lld, "
                                "\"fct_min_s\": %.10g, \"fct_mean_s\": %.10g, "
                                "\"fct_max_s\": %.10g}",
                             (unsigned long long)r->cc.steps, r->cc.peak_queue, r->cc.mean_queue, r->cc.pause_time,
                             r->cc.max_pause, (long long)r->cc.pauses,
                             (long long)r->cc.paused_links, (long long)r->cc.flows_done,
                             r->cc.fct_min, r->cc.fct_mean, r->cc.fct_max);
        comet_buf_printf(b, "}\n");
        return;
    }
    comet_buf_printf(b, "%s of %.6g GiB per NPU, groups of ", name, a->size / COMET_GIB);
    for (int d = 0; d < sys->n_dims; d++)
        comet_buf_printf(b, "%s%lld", d ? "x" : "", (long long)span[d]);
    comet_buf_printf(b, " on %lld NPUs of %s (", (long long)info.npus, sys->name);
    for (int d = 0; d < sys->n_dims; d++)
        comet_buf_printf(b, "%s%s %s %lld", d ? ", " : "", sys->dims[d].name,
                         comet_topology_name(sys->dims[d].topology), (long long)info.sizes[d]);
    comet_buf_printf(b, "): %lld switches, %lld links\n", (long long)info.switches,
                     (long long)info.links);
    comet_buf_printf(b, "%lld group%s at once, %lld collective%s each, flow-level, %s%s\n\n",
                     (long long)r->groups, r->groups == 1 ? "" : "s",
                     (long long)(a->concurrent ? a->concurrent : 1),
                     a->concurrent > 1 ? "s" : "",
                     r->cc.fluid ? "congestion control as a fluid (docs/roce.md)"
                                 : "max-min fair",
                     a->themis ? ", chunks ordered by Themis" : "");
    comet_buf_printf(b, "flows       %.6f ms  (%llu flows, %llu events, %llu rate updates, "
                        "%.3f s to simulate)\n",
                     r->time * 1e3, (unsigned long long)r->flows, (unsigned long long)r->events,
                     (unsigned long long)r->rate_updates, seconds);
    comet_buf_printf(b, "analytical  %.6f ms  (%sflows %+.1f%%)\n", analytic * 1e3,
                     a->concurrent > 1 ? "one collective alone; " : "", 100.0 * diff);
    if (r->cc.fluid) {
        char ql[160] = "-", pl[160] = "-";
        if (r->cc.peak_queue_link >= 0)
            comet_fabric_link_name(f, r->cc.peak_queue_link, ql, sizeof ql);
        if (r->cc.max_pause_link >= 0)
            comet_fabric_link_name(f, r->cc.max_pause_link, pl, sizeof pl);
        comet_buf_printf(b, "\ncongestion control (%llu time steps)\n",
                         (unsigned long long)r->cc.steps);
        comet_buf_printf(b, "  peak queue    %10.1f KB  on %s (the most queued link: %.1f KB on "
                            "average)\n",
                         r->cc.peak_queue / 1e3, ql, r->cc.mean_queue / 1e3);
        comet_buf_printf(b, "  PFC pause     %10.4f ms  summed over %lld links (%lld PAUSEs); "
                            "most %.4f ms on %s\n",
                         r->cc.pause_time * 1e3, (long long)r->cc.paused_links,
                         (long long)r->cc.pauses, r->cc.max_pause * 1e3, pl);
        comet_buf_printf(b, "  flow completion  min %.4f  mean %.4f  max %.4f ms over %lld flows\n",
                         r->cc.fct_min * 1e3, r->cc.fct_mean * 1e3, r->cc.fct_max * 1e3,
                         (long long)r->cc.flows_done);
    }
    if (r->n_hot == 0)
        return;
    comet_buf_printf(b, "\nmost utilized links%*s %10s %12s\n", 42, "", "GiB", "utilization");
    for (int i = 0; i < r->n_hot; i++) {
        char ln[160];
        comet_fabric_link_name(f, r->hot[i].link, ln, sizeof ln);
        comet_buf_printf(b, "  %-58s %11.4f %11.1f%%\n", ln, r->hot[i].bytes / COMET_GIB,
                         100.0 * r->hot[i].utilization);
    }
}

/* The watched links' utilization as Chrome trace-event counters (one
 * track per link, in percent; open it in Perfetto or chrome://tracing). */
static void trace_json(comet_buf *b, const comet_system *sys, const comet_fabric *f,
                       const comet_flow_result *r)
{
    char names[COMET_FABRIC_HOT_LINKS][160];
    const char *name[COMET_FABRIC_HOT_LINKS];
    for (int i = 0; i < r->n_series; i++) {
        comet_fabric_link_name(f, r->series[i].link, names[i], sizeof names[i]);
        name[i] = names[i];
    }
    comet_buf_printf(b, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
    comet_sim_trace_link_counters(b, 1, sys->name, r->n_series, r->series, name);
    comet_buf_printf(b, "\n]}\n");
}

/* Runs it again watching the first run's hot links, for their series. */
static comet_status watch_hot(const comet_fabric *f, const comet_system *sys,
                              const int64_t *span, const cli_flow_args *a,
                              comet_flow_options *o, comet_flow_result *r, comet_error *err)
{
    o->n_watch = r->n_hot;
    for (int i = 0; i < r->n_hot; i++)
        o->watch[i] = r->hot[i].link;
    return comet_fabric_collective(f, sys, span, a->collective, a->size, o, r, err);
}

int cli_simulate_flows(const cli_flow_args *a, const comet_system *sys, int64_t npus)
{
    comet_error err;
    comet_error_clear(&err);
    comet_fabric *f = NULL;
    if (comet_fabric_build(sys, npus, &f, &err))
        return cli_report_error("simulate", &err);
    comet_fabric_info info;
    comet_fabric_info_of(f, &info);
    int64_t span[COMET_MAX_DIMS];
    comet_system resolved;
    comet_fabric_system(f, sys, &resolved);
    if (a->splits > 0)
        resolved.collective_chunks = a->splits;
    comet_status st = parse_span(a->span, sys, info.sizes, span, &err);
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    o.chunks = a->splits;
    o.concurrent = a->concurrent > 0 ? (int)a->concurrent : 1;
    o.one_group = a->one_group;
    o.max_flows = a->max_flows;
    uint8_t *order = NULL;
    if (!st && a->themis) {
        /* Themis orders each chunk's dimensions: the chunks counted here */
        o.chunks = a->splits > 0 ? a->splits
                                 : comet_collective_chunks_for(&resolved, span, a->collective,
                                                               a->size);
        order = malloc((size_t)o.chunks * COMET_MAX_DIMS);
        if (!order)
            st = comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        else
            comet_sim_themis_orders(&resolved, span, a->collective, a->size, o.chunks, order);
        o.order = order;
    }
    comet_flow_result r;
    double t0 = cli_now();
    if (!st)
        st = comet_fabric_collective(f, &resolved, span, a->collective, a->size, &o, &r, &err);
    double seconds = cli_now() - t0;
    if (st) {
        free(order);
        comet_fabric_free(f);
        return cli_report_error("simulate", &err);
    }
    double analytic = comet_collective_time(&resolved, span, a->collective, a->size);
    comet_buf out;
    comet_buf_init(&out);
    render(&out, a, &resolved, f, span, &r, analytic, seconds);
    if ((a->trace || a->report) && r.n_hot > 0)
        st = watch_hot(f, &resolved, span, a, &o, &r, &err);
    if (!st && a->trace) {
        comet_buf tr;
        comet_buf_init(&tr);
        trace_json(&tr, &resolved, f, &r);
        st = tr.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory")
                       : cli_write_output(a->trace, tr.data, tr.len, &err);
        comet_buf_free(&tr);
    }
    if (!st && a->report) {
        comet_page *page = comet_page_new("comet simulate --flows");
        char what[200];
        snprintf(what, sizeof what, "%s of %.6g GiB per NPU", comet_collective_name(a->collective),
                 a->size / COMET_GIB);
        comet_report_page_flows(page, &resolved, f, what, &r, analytic);
        st = cli_write_report(page, a->report, a->plots, &err);
    }
    comet_flow_result_free(&r);
    comet_fabric_free(f);
    free(order);
    if (!st)
        st = cli_write_output(NULL, out.data, out.len, &err);
    comet_buf_free(&out);
    return st ? cli_report_error("simulate", &err) : CLI_OK;
}
