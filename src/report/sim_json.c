/* The simulator's results for machines: `comet simulate --json` for a
 * training step and for one collective. They live in the library so that
 * the CLI and the entry layer (comet/api.h, the Python package) print the
 * same object from the same code. */
#include <stdio.h>

#include "comet/report.h"

static void hot_links_json(comet_buf *b, const comet_sim_fabric_links *l)
{
    comet_buf_printf(b, ", \"hot_links\": [");
    for (int i = 0; l && i < l->n_hot; i++) {
        comet_buf_printf(b, "%s{\"name\": ", i ? ", " : "");
        comet_buf_json_string(b, l->hot[i].name);
        comet_buf_printf(b, ", \"tier\": %d, \"bytes\": %.17g, \"alone_bytes\": %.17g, "
                            "\"utilization\": %.6f}",
                         l->hot[i].tier, l->hot[i].bytes, l->hot[i].alone_bytes,
                         l->hot[i].utilization);
    }
    comet_buf_printf(b, "]");
}

void comet_report_sim_step_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                                const comet_sim_step_result *r, const comet_result *est,
                                const comet_sim_fabric_links *links)
{
    comet_buf_printf(b, "{\"schema_version\": %d, \"model\": \"%s\", \"system\": \"%s\", "
                        "\"step_time_s\": %.10g, "
                        "\"estimate_s\": %.10g, \"tasks\": %llu, \"events\": %llu, "
                        "\"microbatches\": %lld, \"simulated_microbatches\": %lld, "
                        "\"round_s\": %.10g, \"stages\": [",
                     COMET_JSON_SCHEMA_VERSION, m->name, sys->name, r->step_time, est->step_time,
                     (unsigned long long)r->tasks, (unsigned long long)r->events,
                     (long long)r->microbatches, (long long)r->simulated_microbatches,
                     r->round_time);
    for (int s = 0; s < r->stages; s++)
        comet_buf_printf(b, "%s{\"forward_s\": %.10g, \"backward_s\": %.10g, "
                            "\"recompute_s\": %.10g, \"optimizer_s\": %.10g, "
                            "\"idle_s\": %.10g, \"tp_busy_s\": %.10g, \"pp_busy_s\": %.10g, "
                            "\"dp_busy_s\": %.10g, \"memory_busy_s\": %.10g}",
                         s ? ", " : "", r->forward[s], r->backward[s], r->recompute[s],
                         r->optimizer[s], r->step_time - r->compute_stream_busy[s],
                         r->tp_busy[s], r->pp_busy[s], r->dp_busy[s], r->mem_busy[s]);
    comet_buf_printf(b, "]");
    if (r->fabric_npus > 0 || r->fabric_why[0]) {
        comet_buf_printf(b, ", \"fabric\": {\"npus\": %lld, ", (long long)r->fabric_npus);
        if (r->fabric_npus > 0)
            comet_buf_printf(b, "\"transfers_as_flows\": %lld, \"transfers_alone\": %lld, "
                                "\"kinds\": %d, \"flows\": %llu, ",
                             (long long)r->fabric_transfers, (long long)r->fabric_alone,
                             r->fabric_kinds, (unsigned long long)r->fabric_flows);
        comet_buf_printf(b, "\"why\": ");
        comet_buf_json_string(b, r->fabric_why);
        comet_buf_printf(b, "}");
    }
    if (r->fabric_npus > 0)
        hot_links_json(b, links);
    comet_buf_printf(b, "}\n");
}

void comet_report_sim_collective_json(comet_buf *b, const comet_system *sys,
                                      const int64_t sizes[COMET_MAX_DIMS], int64_t npus,
                                      comet_collective c, double bytes,
                                      const comet_sim_collective_result *r, double analytic)
{
    comet_buf_printf(b, "{\"schema_version\": %d, \"collective\": \"%s\", \"bytes\": %.10g, "
                        "\"npus\": %lld, "
                        "\"time_s\": %.10g, \"analytic_s\": %.10g, \"chunks\": %llu, "
                        "\"events\": %llu, \"dims\": [",
                     COMET_JSON_SCHEMA_VERSION, comet_collective_name(c), bytes, (long long)npus,
                     r->time, analytic,
                     (unsigned long long)r->chunks, (unsigned long long)r->events);
    for (int d = 0; d < sys->n_dims; d++)
        comet_buf_printf(b, "%s{\"name\": \"%s\", \"size\": %lld, \"busy_s\": %.10g, "
                            "\"utilization\": %.6f}",
                         d ? ", " : "", sys->dims[d].name, (long long)sizes[d], r->busy[d],
                         r->utilization[d]);
    comet_buf_printf(b, "]}\n");
}
