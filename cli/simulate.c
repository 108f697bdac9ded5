/* comet simulate: the event-driven engine, in two modes. With
 * --collective, one collective over all NPUs of a system, chunk by chunk
 * on every network dimension (fidelity and chunk scheduler by flag).
 * Otherwise one training step of a model, system and strategy (read like
 * comet estimate), as a task graph per pipeline stage, next to the
 * analytical estimate, with an optional Chrome trace. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "comet/network.h"
#include "comet/simulate.h"
#include "inputs.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: comet simulate [FILE.yaml ...] [estimate's inputs and knobs]\n"
            "                      [--congestion | --flows | --no-flows]\n"
            "                      [--scheduler baseline|themis]\n"
            "                      [--max-tasks N] [--trace FILE] [--json] [--report FILE.html] [--plots DIR]\n"
            "       comet simulate --collective KIND --size SIZE [options]\n"
            "       comet simulate --chakra PREFIX --astra-network NET.yml\n"
            "                      [--astra-system SYS.json] [--astra-memory MEM.json]\n"
            "                      [--astra-comm-group GROUPS.json] [--flows [--max-flows N]]\n"
            "                      [--json] [--output FILE]\n"
            "                      [--max-trace-nodes N] [--max-trace-bytes SIZE]\n"
            "                      [--max-trace-memory SIZE] [--max-trace-deps N]\n\n"
            "The first form simulates one training step as a task graph (1F1B or\n"
            "interleaved pipeline, TP collectives per layer, DP buckets during the last\n"
            "backward, ZeRO) and prints it beside comet estimate's answer; --congestion makes\n"
            "collectives and sends share each network link's bandwidth; --flows runs every\n"
            "collective and pipeline send as flows of every NPU on the system's fabric,\n"
            "all sharing its links (docs/fabric.md), which it does by itself where the NPUs\n"
            "see unlike networks (an oversubscribed or hashed tier, a mesh) and --no-flows\n"
            "never; with either, --scheduler themis orders each chunk's dimensions least\n"
            "loaded first; --trace writes a\n"
            "Chrome trace-event file (open it in Perfetto or chrome://tracing); --report\n"
            "writes an HTML report with a timeline per NPU stream and busy time per stage\n"
            "(on the fabric, both also show its most utilized links over time).\n"
            "--max-tasks N bounds the tasks a simulated graph holds (default 8000000,\n"
            "about 700 MB): a larger step is simulated through its repeating steady state\n"
            "and extrapolated exactly, or refused when even that does not fit.\n\n"
            "The second simulates one collective over all NPUs of a system, event by event.\n"
            "  --collective KIND      all-reduce, reduce-scatter, all-gather, all-to-all,\n"
            "                         broadcast, reduce, gather, scatter or barrier (the\n"
            "                         last five priced as docs/collectives.md says)\n"
            "  --size SIZE            buffer per NPU, e.g. \"1 GiB\"\n"
            "  --max-size SIZE        a table over sizes from --size up to this one, as\n"
            "                         nccl-tests prints it: time, algbw, busbw and the\n"
            "                         protocol each dimension is priced with\n"
            "  --step-factor F        size ratio between rows of the table (default 2)\n"
            "  --system NAME|FILE     system preset or file (default a100-80g-selene)\n"
            "  --npus N               NPUs (default: all of a fixed-size system; needed when\n"
            "                         its outermost dimension is auto)\n"
            "  --splits K             chunks (default: the system's collective_chunks)\n"
            "  --active-chunks A      chunks a dimension works on at once (default 1)\n"
            "  --scheduler baseline|themis   order of dimensions per chunk (default baseline)\n"
            "  --congestion           phases on one dimension share its bandwidth\n"
            "  --endpoint-delay TIME  per message sent, e.g. \"10 ns\"\n"
            "  --local-mem-bw BW      memory bandwidth for reductions, e.g. \"1600 GB/s\"\n"
            "  --astra-rounding       whole nanoseconds per memory pass, as ASTRA-sim\n"
            "  --json                 machine-readable output\n"
            "  --flows                every transfer a flow on the system's fabric (its links,\n"
            "                         switches and routes), every NPU simulated, links shared\n"
            "                         max-min fairly (docs/fabric.md); with it:\n"
            "  --span A,B,...         NPUs per group along each dimension (default: all)\n"
            "  --scheduler themis     each chunk's order of dimensions as Themis picks it\n"
            "  --concurrent N         identical collectives issued at once (default 1)\n"
            "  --one-group            only the first group runs (default: every group)\n"
            "  --max-flows N          refuse past N flows (default 250000000)\n"
            "  --trace FILE           a Chrome trace of the hottest links' utilization\n"
            "  --report FILE.html     a report: the hottest links, bytes per tier, and\n"
            "                         their utilization over time (--plots DIR: its charts)\n\n"
            "The third runs an ASTRA-sim experiment unmodified: the Chakra execution trace\n"
            "PREFIX.0.et, PREFIX.1.et, ... (plain or gzip) on the network, system,\n"
            "remote-memory and comm-group files ASTRA-sim takes (collectives with a\n"
            "pg_name run on that group, others on the dimensions in involved_dim); it\n"
            "prints each rank's finish time and exposed communication, and compute,\n"
            "communication and memory busy time. --flows runs the collectives as flows\n"
            "on the network's fabric, all in flight sharing its links (docs/chakra.md).\n"
            "Reading stops with an error past\n"
            "  --max-trace-nodes N       nodes over all ranks (default 10000000)\n"
            "  --max-trace-bytes SIZE    bytes read, after gzip (default \"2 GiB\")\n"
            "  --max-trace-deps N        dependencies over all ranks (default 50000000)\n"
            "  --max-trace-memory SIZE   the reader's memory: nodes, dependencies, names and\n"
            "                            the message being decoded (default \"2 GiB\");\n"
            "0 means no limit.\n"
            "Exit status: 0 ok, 1 a failure mid-way, 2 bad input or an unusable output path.\n");
}

typedef struct sim_args {
    const char *system;
    comet_collective collective;
    double size;
    double max_size;            /* 0: one size */
    int64_t step_factor;        /* 0: 2 */
    int64_t npus;
    int64_t active_chunks;      /* 0: the default */
    bool congestion;
    comet_sim_options opt;
    bool json;
    cli_flow_args flows;
} sim_args;

static comet_status collective_flag(const cli_arg *f, const char *v, void *dest,
                                    comet_error *err)
{
    return cli_parse_collective(f->name, v, &((sim_args *)dest)->collective, err);
}

static comet_status scheduler_flag(const cli_arg *f, const char *v, void *dest,
                                   comet_error *err)
{
    comet_sim_options *opt = &((sim_args *)dest)->opt;
    if (strcmp(v, "baseline") == 0)
        opt->scheduler = COMET_SCHED_BASELINE;
    else if (strcmp(v, "themis") == 0)
        opt->scheduler = COMET_SCHED_THEMIS;
    else
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "expected baseline or themis, got \"%s\"", v);
    return COMET_OK;
}

#define AT(field) .offset = offsetof(sim_args, field)

/* The collective form's flags; --help is the whole command's (cli_simulate
 * looks for it before choosing the form). */
static const cli_arg collective_flags[] = {
    CLI_ARG_HELP_FLAGS,
    {.name = "--congestion", .kind = CLI_ARG_SWITCH, AT(congestion)},
    {.name = "--astra-rounding", .kind = CLI_ARG_SWITCH, AT(opt.astra_rounding)},
    {.name = "--json", .kind = CLI_ARG_SWITCH, AT(json)},
    {.name = "--collective", .kind = CLI_ARG_CALL, .value = true, .call = collective_flag},
    {.name = "--size", .kind = CLI_ARG_QUANTITY, AT(size), .unit = COMET_UNIT_BYTES},
    {.name = "--max-size", .kind = CLI_ARG_QUANTITY, AT(max_size), .unit = COMET_UNIT_BYTES},
    {.name = "--step-factor", .kind = CLI_ARG_INT, AT(step_factor), .min = 2, .max = 1024},
    {.name = "--system", .kind = CLI_ARG_TEXT, AT(system)},
    {.name = "--npus", .kind = CLI_ARG_INT, AT(npus), .min = 1, .max = 1 << 30},
    {.name = "--splits", .kind = CLI_ARG_INT, AT(opt.splits), .min = 1, .max = 65536},
    {.name = "--active-chunks", .kind = CLI_ARG_INT, AT(active_chunks), .min = 1, .max = 64},
    {.name = "--scheduler", .kind = CLI_ARG_CALL, .value = true, .call = scheduler_flag},
    {.name = "--endpoint-delay", .kind = CLI_ARG_QUANTITY, AT(opt.endpoint_delay),
     .unit = COMET_UNIT_TIME},
    {.name = "--local-mem-bw", .kind = CLI_ARG_QUANTITY, AT(opt.local_mem_bw),
     .unit = COMET_UNIT_BANDWIDTH},
    {.name = "--flows", .kind = CLI_ARG_SWITCH, AT(flows.on)},
    {.name = "--one-group", .kind = CLI_ARG_SWITCH, AT(flows.one_group)},
    {.name = "--concurrent", .kind = CLI_ARG_INT, AT(flows.concurrent), .min = 1, .max = 16},
    {.name = "--max-flows", .kind = CLI_ARG_INT, AT(flows.max_flows), .min = 1,
     .max = 2000000000},
    {.name = "--span", .kind = CLI_ARG_TEXT, AT(flows.span)},
    {.name = "--trace", .kind = CLI_ARG_TEXT, AT(flows.trace)},
    {.name = "--report", .kind = CLI_ARG_TEXT, AT(flows.report)},
    {.name = "--plots", .kind = CLI_ARG_TEXT, AT(flows.plots)},
};

static const cli_args_spec collective_spec = {
    .command = "simulate",
    .flags = collective_flags,
    .n_flags = sizeof collective_flags / sizeof collective_flags[0],
    .help = CLI_HELP_ANYWHERE,
    .trailing_unknown_needs_value = true,
};

static comet_status parse_args(int argc, char **argv, sim_args *a, comet_error *err)
{
    memset(a, 0, sizeof a[0]);
    a->system = "a100-80g-selene";
    comet_sim_options_defaults(&a->opt);
    bool help;
    if (cli_args_parse(&collective_spec, argc, argv, a, &help, err))
        return err->status;
    if (a->congestion)
        a->opt.fidelity = COMET_SIM_CONGESTION;
    const char *flows_only = a->flows.span         ? "--span"
                             : a->flows.concurrent ? "--concurrent"
                             : a->flows.one_group  ? "--one-group"
                             : a->flows.max_flows  ? "--max-flows"
                             : a->flows.trace      ? "--trace"
                             : a->flows.report     ? "--report"
                             : a->flows.plots      ? "--plots"
                                                   : NULL;
    if (!a->flows.on && flows_only)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flows_only,
                               "needs --flows with --collective (it sets up the flow-level "
                               "simulation)");
    if (a->flows.plots && !a->flows.report)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--plots",
                               "needs --report (it writes the report's charts as files)");
    if (a->flows.on && (a->congestion || a->max_size > 0.0 || a->active_chunks ||
                        a->opt.endpoint_delay > 0.0 || a->opt.local_mem_bw > 0.0 ||
                        a->opt.astra_rounding))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--flows",
                               "takes --splits, --span, --concurrent, --one-group, --scheduler "
                               "and --max-flows, not the per-dimension simulator's options");
    a->flows.themis = a->opt.scheduler == COMET_SCHED_THEMIS;
    if (a->active_chunks)
        a->opt.active_chunks = (int)a->active_chunks;
    if (a->collective == COMET_COLL_NONE)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--collective",
                               "is required (this release simulates single collectives)");
    if (!(a->size > 0.0))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--size", "is required");
    if (a->max_size > 0.0 && a->max_size < a->size)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--max-size",
                               "must be at least --size (%g B), got %g B", a->size, a->max_size);
    if (a->step_factor && !(a->max_size > 0.0))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--step-factor",
                               "needs --max-size (it spaces the rows of a table over sizes)");
    if (!a->step_factor)
        a->step_factor = 2;
    return COMET_OK;
}

static void render(comet_buf *b, const sim_args *a, const comet_system *sys,
                   const int64_t sizes[COMET_MAX_DIMS], int64_t npus,
                   const comet_sim_collective_result *r, double analytic, double seconds)
{
    const char *name = comet_collective_name(a->collective);
    if (a->json) {
        comet_report_sim_collective_json(b, sys, sizes, npus, a->collective, a->size, r, analytic);
        return;
    }
    comet_buf_printf(b, "%s of %.6g GiB per NPU on %lld NPUs of %s (", name,
                     a->size / COMET_GIB, (long long)npus, sys->name);
    for (int d = 0; d < sys->n_dims; d++)
        comet_buf_printf(b, "%s%lld", d ? "x" : "", (long long)sizes[d]);
    comet_buf_printf(b, "), %s, %s scheduler\n\n",
                     a->opt.fidelity == COMET_SIM_CONGESTION ? "congestion-aware"
                                                             : "congestion-unaware",
                     a->opt.scheduler == COMET_SCHED_THEMIS ? "Themis" : "baseline");
    comet_buf_printf(b, "simulated   %.6f ms  (%llu chunks, %llu events, %.3f s to simulate)\n",
                     r->time * 1e3, (unsigned long long)r->chunks, (unsigned long long)r->events,
                     seconds);
    comet_buf_printf(b, "analytical  %.6f ms\n\n%-16s %6s %12s %12s\n", analytic * 1e3,
                     "dimension", "NPUs", "busy ms", "utilization");
    for (int d = 0; d < sys->n_dims; d++)
        comet_buf_printf(b, "%-16s %6lld %12.6f %11.1f%%\n", sys->dims[d].name,
                         (long long)sizes[d], r->busy[d] * 1e3, 100.0 * r->utilization[d]);
}

/* One row of the table over sizes. */
typedef struct size_row {
    double bytes, time, analytic;
    unsigned long long chunks;  /* the calls the simulator cut it into */
    comet_protocol protocols[COMET_MAX_DIMS];
} size_row;

#define MAX_SIZE_ROWS 128

/* The protocols of the spanned dimensions, innermost first, "/"-joined. */
static void protocol_text(char *out, size_t cap, const size_row *row,
                          const int64_t sizes[COMET_MAX_DIMS], int n_dims)
{
    size_t len = 0;
    out[0] = '\0';
    for (int d = 0; d < n_dims && len < cap; d++)
        if (sizes[d] > 1)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "/" : "",
                                    comet_protocol_name(row->protocols[d]));
}

/* nccl-tests' table: size, time, algbw = size / time, busbw = algbw times
 * the collective's factor over the whole group. */
static void render_sizes(comet_buf *b, const sim_args *a, const comet_system *sys,
                         const int64_t sizes[COMET_MAX_DIMS], int64_t npus, const size_row *rows,
                         int n_rows)
{
    int64_t chunks = comet_collective_chunks(sys);
    const char *name = comet_collective_name(a->collective);
    double factor = comet_busbw_factor(a->collective, npus);
    char protocols[128];
    if (a->json) {
        comet_buf_printf(b, "{\"collective\": \"%s\", \"npus\": %lld, \"system\": \"%s\", "
                            "\"chunks\": %lld, \"busbw_factor\": %.10g, \"rows\": [",
                         name, (long long)npus, sys->name, (long long)chunks, factor);
        for (int i = 0; i < n_rows; i++) {
            const size_row *r = &rows[i];
            double algbw = r->time > 0.0 ? r->bytes / r->time : 0.0;
            comet_buf_printf(b, "%s\n  {\"bytes\": %.10g, \"time_s\": %.10g, "
                                "\"analytic_s\": %.10g, \"algbw_Bps\": %.10g, "
                                "\"busbw_Bps\": %.10g, \"chunks\": %llu, \"protocols\": [",
                             i ? "," : "", r->bytes, r->time, r->analytic, algbw, algbw * factor,
                             r->chunks);
            int k = 0;
            for (int d = 0; d < sys->n_dims; d++)
                if (sizes[d] > 1)
                    comet_buf_printf(b, "%s\"%s\"", k++ ? ", " : "",
                                     comet_protocol_name(r->protocols[d]));
            comet_buf_printf(b, "]}");
        }
        comet_buf_printf(b, "\n]}\n");
        return;
    }
    comet_buf_printf(b, "%s on %lld NPUs of %s (", name, (long long)npus, sys->name);
    for (int d = 0; d < sys->n_dims; d++)
        comet_buf_printf(b, "%s%lld", d ? "x" : "", (long long)sizes[d]);
    comet_buf_printf(b, "), up to %lld chunk%s, %s; busbw = algbw x %.4g\n\n",
                     (long long)chunks, chunks == 1 ? "" : "s",
                     a->opt.fidelity == COMET_SIM_CONGESTION ? "congestion-aware"
                                                             : "congestion-unaware",
                     factor);
    comet_buf_printf(b, "%15s %14s %12s %12s %7s  %s\n", "size (B)", "time (us)",
                     "algbw (GB/s)", "busbw (GB/s)", "chunks", "protocol per dimension");
    for (int i = 0; i < n_rows; i++) {
        const size_row *r = &rows[i];
        double algbw = r->time > 0.0 ? r->bytes / r->time : 0.0;
        protocol_text(protocols, sizeof protocols, r, sizes, sys->n_dims);
        comet_buf_printf(b, "%15.0f %14.2f %12.2f %12.2f %7llu  %s\n", r->bytes, r->time * 1e6,
                         algbw / 1e9, algbw * factor / 1e9, r->chunks, protocols);
    }
}

/* The fabric's most utilized links over the step (with --flows). */
static void render_hot_links(comet_buf *b, const comet_sim_fabric_links *l)
{
    int n = l && l->n_hot < 3 ? l->n_hot : 3;
    /* the top three, and the first above the NPUs' ports if none of them is */
    int upper = -1;
    for (int i = 0; l && i < l->n_hot && upper < 0; i++)
        if (l->hot[i].tier > 0)
            upper = i;
    for (int i = 0; l && i < l->n_hot; i++) {
        if (i >= n && i != upper)
            continue;
        const comet_sim_link *h = &l->hot[i];
        const char *alone = !(h->alone_bytes > 0.0)           ? ""
                            : h->alone_bytes >= h->bytes * 0.999 ? ", all by transfers alone"
                                                                : ", partly by transfers alone";
        comet_buf_printf(b, "           %s %s  %.1f %% (%.2f GiB%s)\n",
                         i ? "                  " : "most utilized link", h->name,
                         100.0 * h->utilization, h->bytes / 1073741824.0, alone);
    }
    if (l && l->cc.fluid)
        comet_buf_printf(b, "           congestion control: peak queue %.1f KB, PFC pause %.4f ms "
                            "summed over %lld links, flows' completion mean %.4f ms, max %.4f ms\n",
                         l->cc.peak_queue / 1e3, l->cc.pause_time * 1e3,
                         (long long)l->cc.paused_links, l->cc.fct_mean * 1e3, l->cc.fct_max * 1e3);
}

static void render_step(comet_buf *b, const cli_inputs *in, const comet_sim_step_result *r,
                        const comet_result *est, const comet_sim_fabric_links *links,
                        double seconds)
{
    const comet_job *j = &in->job;
    double diff = est->step_time > 0 ? (r->step_time - est->step_time) / est->step_time : 0.0;
    if (in->format == OUT_JSON) {
        comet_report_sim_step_json(b, &j->model, &j->system, r, est, links);
        return;
    }
    comet_buf_printf(b, "%s on %s, %lld NPUs, simulated step (%s%s%s)\n\n", j->model.name,
                     j->system.name, (long long)comet_strategy_npus(&j->strategy),
                     r->fabric_npus > 0 ? "compute one NPU per pipeline stage, transfers every "
                                          "NPU's on the fabric"
                                        : "one NPU per pipeline stage",
                     r->fabric_why[0] ? ": " : "", r->fabric_why);
    comet_buf_printf(b, "simulated  %.3f s   (%llu tasks, %llu events, %.2f s to simulate)\n",
                     r->step_time, (unsigned long long)r->tasks, (unsigned long long)r->events,
                     seconds);
    if (r->simulated_microbatches < r->microbatches)
        comet_buf_printf(b, "           %lld of %lld microbatches simulated, the rest extrapolated "
                            "from the steady state (%.6f s per round of %lld)\n",
                         (long long)r->simulated_microbatches, (long long)r->microbatches,
                         r->round_time, (long long)r->round);
    if (r->fabric_npus > 0)
        comet_buf_printf(b, "           on the fabric, every NPU (%lld): %lld transfers as flows "
                            "sharing links (%llu flows), %lld alone on theirs (%d kinds, each "
                            "simulated once)\n",
                         (long long)r->fabric_npus, (long long)r->fabric_transfers,
                         (unsigned long long)r->fabric_flows, (long long)r->fabric_alone,
                         r->fabric_kinds);
    if (r->fabric_npus > 0)
        render_hot_links(b, links);
    comet_buf_printf(b, "estimate   %.3f s   (simulated %+.2f %%)\n\n", est->step_time,
                     100.0 * diff);
    comet_buf_printf(b, "seconds per stage (compute stream: forward, backward, recompute, optimizer, "
                        "idle; other streams busy)\n");
    comet_buf_printf(b, "%5s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "stage", "forward", "backward",
                     "recompute", "optimizer", "idle", "TP", "PP", "DP", "memory");
    for (int s = 0; s < r->stages; s++) {
        if (r->stages > 16 && s >= 8 && s < r->stages - 8) {
            if (s == 8)
                comet_buf_printf(b, "%5s\n", "...");
            continue;
        }
        comet_buf_printf(b, "%5d %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", s,
                         r->forward[s], r->backward[s], r->recompute[s], r->optimizer[s],
                         r->step_time - r->compute_stream_busy[s], r->tp_busy[s], r->pp_busy[s],
                         r->dp_busy[s], r->mem_busy[s]);
    }
}

static int simulate_step(int argc, char **argv)
{
    int code; /* --help was handled by cli_simulate */
    cli_inputs *in = cli_inputs_start(argc, argv, CMD_SIMULATE, NULL, &code);
    if (!in)
        return code;
    comet_error err;
    comet_error_clear(&err);
    comet_job *j = &in->job;
    comet_result est;
    static comet_sim_step_result r;
    comet_buf trace;
    comet_buf_init(&trace);
    comet_sim_timeline timeline = {0};
    comet_sim_fabric_links links = {0}; /* the fabric's: the output's, the trace's, the report's */
    bool reporting = in->report || in->plots;
    comet_sim_step_options opt = {
        .trace = in->trace ? &trace : NULL,
        .timeline = reporting ? &timeline : NULL,
        .fidelity = in->congestion ? COMET_SIM_CONGESTION : COMET_SIM_UNAWARE,
        .fabric = in->flows      ? COMET_SIM_FABRIC_ON
                  : in->no_flows ? COMET_SIM_FABRIC_OFF
                                 : COMET_SIM_FABRIC_AUTO,
        .links = in->no_flows ? NULL : &links,
        .max_tasks = in->max_tasks,
    };
    if (in->flows && in->no_flows) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--no-flows",
                        "keeps the step off the fabric; --flows puts it there: use one of them");
        comet_buf_free(&trace);
        return cli_report_error("simulate", &err);
    }
    if (in->scheduler && strcmp(in->scheduler, "themis") == 0) {
        opt.scheduler = COMET_SCHED_THEMIS;
    } else if (in->scheduler && strcmp(in->scheduler, "baseline") != 0) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--scheduler",
                        "expected baseline or themis, got \"%s\"", in->scheduler);
        comet_buf_free(&trace);
        return cli_report_error("simulate", &err);
    }
    double t0 = cli_now();
    if (comet_strategy_resolve(&j->model, &j->system, &j->strategy, NULL, &err) ||
        comet_estimate(&j->model, &j->system, &j->strategy, &est, &err) ||
        comet_sim_step(&j->model, &j->system, &j->strategy, &opt, &r, &err)) {
        comet_buf_free(&trace);
        comet_sim_timeline_free(&timeline);
        cli_inputs_locate(in, &err);
        return cli_report_error("simulate", &err);
    }
    double seconds = cli_now() - t0;
    comet_status st = COMET_OK;
    if (in->trace)
        st = trace.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory")
                          : cli_write_output(in->trace, trace.data, trace.len, &err);
    comet_buf_free(&trace);
    comet_buf out;
    comet_buf_init(&out);
    render_step(&out, in, &r, &est, opt.links, seconds);
    if (!st)
        st = cli_write_output(in->output, out.data, out.len, &err);
    comet_buf_free(&out);
    if (!st && reporting) {
        comet_page *page = comet_page_new("comet simulate");
        comet_report_page_simulate(page, &j->model, &j->system, &j->strategy, &r, &timeline, &est);
        if (opt.links)
            comet_report_page_step_links(page, &r, &links);
        st = cli_write_report(page, in->report, in->plots, &err);
    }
    comet_sim_fabric_links_free(&links);
    comet_sim_timeline_free(&timeline);
    return st ? cli_report_error("simulate", &err) : CLI_OK;
}

int cli_simulate(int argc, char **argv)
{
    /* --help, anywhere, is the whole command's, whichever the form */
    if (cli_args_wants_help(&collective_spec, argc, argv)) {
        usage(stdout);
        return CLI_OK;
    }
    if (cli_args_present(argc, argv, "--chakra"))
        return cli_simulate_chakra(argc, argv);
    if (!cli_args_present(argc, argv, "--collective"))
        return simulate_step(argc, argv);
    comet_error err;
    comet_error_clear(&err);
    sim_args a;
    static comet_system sys;
    if (parse_args(argc, argv, &a, &err) || cli_load_system(a.system, &sys, &err))
        return cli_report_error("simulate", &err);
    int64_t npus = a.npus;
    if (npus == 0) {
        npus = 1;
        for (int d = 0; d < sys.n_dims; d++)
            npus *= sys.dims[d].size;
        if (npus == 0) {
            comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--npus",
                            "is needed: system %s grows to fit (its outermost dimension is auto)",
                            sys.name);
            return cli_report_error("simulate", &err);
        }
    }
    int64_t sizes[COMET_MAX_DIMS];
    if (comet_system_layout(&sys, npus, sizes, &err)) {
        snprintf(err.key, sizeof err.key, "--npus");
        return cli_report_error("simulate", &err);
    }
    if (a.flows.on) {
        a.flows.collective = a.collective;
        a.flows.size = a.size;
        a.flows.splits = a.opt.splits;
        a.flows.json = a.json;
        return cli_simulate_flows(&a.flows, &sys, npus);
    }
    comet_sim_collective_result r;
    comet_system chunked = sys;
    chunked.collective_chunks = a.opt.splits > 0 ? a.opt.splits : sys.collective_chunks;
    comet_buf out;
    comet_buf_init(&out);
    if (a.max_size > 0.0) {
        static size_row rows[MAX_SIZE_ROWS];
        int n_rows = 0;
        for (double bytes = a.size; bytes <= a.max_size * (1.0 + 1e-12) && n_rows < MAX_SIZE_ROWS;
             bytes *= (double)a.step_factor) {
            size_row *row = &rows[n_rows++];
            if (comet_sim_collective(&sys, sizes, a.collective, bytes, &a.opt, &r, &err)) {
                comet_buf_free(&out);
                return cli_report_error("simulate", &err);
            }
            row->bytes = bytes;
            row->time = r.time;
            row->chunks = (unsigned long long)r.chunks;
            row->analytic = comet_collective_time(&chunked, sizes, a.collective, bytes);
            comet_collective_protocols(&chunked, sizes, a.collective, bytes, row->protocols);
        }
        render_sizes(&out, &a, &chunked, sizes, npus, rows, n_rows);
    } else {
        double t0 = cli_now();
        if (comet_sim_collective(&sys, sizes, a.collective, a.size, &a.opt, &r, &err)) {
            comet_buf_free(&out);
            return cli_report_error("simulate", &err);
        }
        double seconds = cli_now() - t0;
        double analytic = comet_collective_time(&chunked, sizes, a.collective, a.size);
        render(&out, &a, &sys, sizes, npus, &r, analytic, seconds);
    }
    comet_status st = cli_write_output(NULL, out.data, out.len, &err);
    comet_buf_free(&out);
    return st ? cli_report_error("simulate", &err) : CLI_OK;
}
