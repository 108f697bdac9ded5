/* comet simulate --chakra: an ASTRA-sim experiment run unmodified. Reads
 * the Chakra trace PREFIX.<rank>.et and ASTRA-sim's network YAML, system
 * JSON, optional remote-memory JSON and optional comm-group JSON,
 * simulates the trace, and reports
 * what ASTRA-sim reports (per-rank finish and exposed communication) plus
 * compute, communication and memory busy time per rank. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "comet/chakra.h"
#include "comet/config.h"
#include "comet/report.h"

typedef struct chakra_args {
    const char *prefix, *network, *system, *memory, *groups, *output;
    const char *max_nodes, *max_bytes, *max_memory, *max_deps;
    bool json, flows;
    int64_t max_flows;
    comet_et_limits limits;
} chakra_args;

/* The flag that sets each field of comet_et_limits (the reader's errors
 * name the field; the user is told the flag). */
static const struct {
    const char *field, *flag;
} limit_flags[] = {{"max_nodes", "--max-trace-nodes"},
                   {"max_bytes", "--max-trace-bytes"},
                   {"max_memory", "--max-trace-memory"},
                   {"max_deps", "--max-trace-deps"}};

/* A byte limit: "0" (none) or a size with its unit, e.g. "512 MiB". */
static comet_status byte_limit(const char *flag, const char *text, uint64_t *out,
                               comet_error *err)
{
    if (strcmp(text, "0") == 0) {
        *out = 0;
        return COMET_OK;
    }
    double v;
    if (comet_parse_quantity(text, COMET_UNIT_BYTES, flag, &v, err))
        return err->status;
    if (!(v >= 1.0 && v < 0x1p63))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "expected 0 (no limit) or a size of at least 1 B, got \"%s\"",
                               text);
    *out = (uint64_t)v;
    return COMET_OK;
}

static comet_status read_limits(chakra_args *a, comet_error *err)
{
    comet_et_limits_default(&a->limits);
    int64_t nodes = 0, deps = 0;
    if (a->max_nodes &&
        cli_parse_int("--max-trace-nodes", a->max_nodes, 0, INT64_MAX, &nodes, err))
        return err->status;
    if (a->max_nodes)
        a->limits.max_nodes = (uint64_t)nodes;
    if (a->max_deps && cli_parse_int("--max-trace-deps", a->max_deps, 0, INT64_MAX, &deps, err))
        return err->status;
    if (a->max_deps)
        a->limits.max_deps = (uint64_t)deps;
    if (a->max_bytes && byte_limit("--max-trace-bytes", a->max_bytes, &a->limits.max_bytes, err))
        return err->status;
    if (a->max_memory &&
        byte_limit("--max-trace-memory", a->max_memory, &a->limits.max_memory, err))
        return err->status;
    return COMET_OK;
}

#define AT(field) .offset = offsetof(chakra_args, field)

/* The Chakra form's flags (its --help is the whole command's: cli_simulate
 * looks for it first); the limits are read after the command line. */
static const cli_arg chakra_flags[] = {
    {.name = "--json", .kind = CLI_ARG_SWITCH, AT(json)},
    {.name = "--flows", .kind = CLI_ARG_SWITCH, AT(flows)},
    {.name = "--max-flows", .kind = CLI_ARG_INT, AT(max_flows), .min = 1, .max = 2000000000},
    {.name = "--chakra", .kind = CLI_ARG_TEXT, AT(prefix)},
    {.name = "--astra-network", .kind = CLI_ARG_TEXT, AT(network)},
    {.name = "--astra-system", .kind = CLI_ARG_TEXT, AT(system)},
    {.name = "--astra-memory", .kind = CLI_ARG_TEXT, AT(memory)},
    {.name = "--astra-comm-group", .kind = CLI_ARG_TEXT, AT(groups)},
    {.name = "--output", .kind = CLI_ARG_TEXT, AT(output)},
    {.name = "--max-trace-nodes", .kind = CLI_ARG_TEXT, AT(max_nodes)},
    {.name = "--max-trace-bytes", .kind = CLI_ARG_TEXT, AT(max_bytes)},
    {.name = "--max-trace-memory", .kind = CLI_ARG_TEXT, AT(max_memory)},
    {.name = "--max-trace-deps", .kind = CLI_ARG_TEXT, AT(max_deps)},
};

static comet_status parse(int argc, char **argv, chakra_args *a, comet_error *err)
{
    memset(a, 0, sizeof *a);
    static const cli_args_spec spec = {
        .command = "simulate",
        .flags = chakra_flags,
        .n_flags = sizeof chakra_flags / sizeof chakra_flags[0],
        .help = CLI_HELP_ANYWHERE,
        .unknown_context = "with --chakra",
    };
    bool help;
    if (cli_args_parse(&spec, argc, argv, a, &help, err))
        return err->status;
    if (!a->network)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--astra-network",
                               "is required with --chakra (ASTRA-sim's network YAML)");
    if (a->max_flows && !a->flows)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--max-flows",
                               "needs --flows (it bounds the flows the collectives start)");
    return read_limits(a, err);
}

static void render(comet_buf *b, const chakra_args *a, const comet_et_result *r,
                   double read_s, double sim_s)
{
    if (a->json) {
        comet_buf_printf(b, "{\"schema_version\": %d, \"trace\": ", COMET_JSON_SCHEMA_VERSION);
        comet_buf_json_string(b, a->prefix); /* a path may hold quotes */
        comet_buf_printf(b, ", \"ranks\": %d, \"nodes\": %zu, \"finish_s\": %.10g, "
                            "\"events\": %llu, \"rank\": [",
                         r->ranks, r->nodes, r->finish, (unsigned long long)r->events);
        for (int i = 0; i < r->ranks; i++)
            comet_buf_printf(b, "%s{\"finish_s\": %.10g, \"compute_s\": %.10g, "
                                "\"exposed_comm_s\": %.10g, \"comm_s\": %.10g, "
                                "\"memory_s\": %.10g}",
                             i ? ", " : "", r->rank_finish[i], r->rank_compute[i],
                             r->rank_exposed_comm[i], r->rank_comm[i], r->rank_memory[i]);
        comet_buf_printf(b, "]");
        if (a->flows)
            comet_buf_printf(b, ", \"fabric\": {\"collectives\": %d, \"shared\": %d, "
                                "\"alone\": %d, \"alone_distinct\": %d, \"flows\": %llu}",
                             r->fabric_collectives, r->fabric_shared,
                             r->fabric_collectives - r->fabric_shared, r->fabric_alone_distinct,
                             (unsigned long long)r->fabric_flows);
        comet_buf_printf(b, "}\n");
        return;
    }
    comet_buf_printf(b, "Chakra trace %s: %d ranks, %zu nodes (read in %.3f s, simulated in "
                        "%.3f s, %llu events)\n\n",
                     a->prefix, r->ranks, r->nodes, read_s, sim_s,
                     (unsigned long long)r->events);
    comet_buf_printf(b, "finished after %.0f ns (%.6f ms)\n", r->finish * 1e9, r->finish * 1e3);
    if (a->flows) {
        int alone = r->fabric_collectives - r->fabric_shared;
        comet_buf_printf(b, "collectives on the fabric: %d, %d as flows sharing its links",
                         r->fabric_collectives, r->fabric_shared);
        if (alone > 0)
            comet_buf_printf(b, ", %d priced alone (groups it cannot run as one; %d distinct, "
                                "every group of each span at once)",
                             alone, r->fabric_alone_distinct);
        comet_buf_printf(b, " (%llu flows)\n", (unsigned long long)r->fabric_flows);
    }
    comet_buf_printf(b, "\n");
    comet_buf_printf(b, "%6s %16s %16s %14s %14s %14s %9s\n", "rank", "finish ns",
                     "exposed comm ns", "compute ms", "comm ms", "memory ms", "hidden");
    for (int i = 0; i < r->ranks; i++) {
        if (r->ranks > 20 && i >= 8 && i < r->ranks - 8) {
            if (i == 8)
                comet_buf_printf(b, "%6s\n", "...");
            continue;
        }
        double hidden_comm = r->rank_comm[i] - r->rank_exposed_comm[i];
        double hidden = r->rank_comm[i] > 0 ? hidden_comm / r->rank_comm[i] : 0.0;
        if (hidden < 0)
            hidden = 0;
        comet_buf_printf(b, "%6d %16.0f %16.0f %14.6f %14.6f %14.6f %8.1f%%\n", i,
                         r->rank_finish[i] * 1e9, r->rank_exposed_comm[i] * 1e9,
                         r->rank_compute[i] * 1e3, r->rank_comm[i] * 1e3,
                         r->rank_memory[i] * 1e3, 100.0 * hidden);
    }
    comet_buf_printf(b, "\nexposed comm = finish - compute (ASTRA-sim's definition); hidden = "
                        "share of communication time overlapped by compute\n");
}

int cli_simulate_chakra(int argc, char **argv)
{
    comet_error err;
    comet_error_clear(&err);
    chakra_args a;
    static comet_astra_inputs in;
    if (parse(argc, argv, &a, &err) ||
        comet_astra_read(a.network, a.system, a.memory, &in, &err) ||
        comet_astra_read_groups(a.groups, &in, &err)) {
        comet_astra_free(&in);
        return cli_report_error("simulate", &err);
    }
    comet_et_trace t;
    double t0 = cli_now();
    if (comet_et_read(a.prefix, 0, &a.limits, &t, &err)) {
        for (size_t k = 0; k < sizeof limit_flags / sizeof limit_flags[0]; k++)
            if (strcmp(err.key, limit_flags[k].field) == 0)
                snprintf(err.key, sizeof err.key, "%s", limit_flags[k].flag);
        comet_astra_free(&in);
        return cli_report_error("simulate", &err);
    }
    double t1 = cli_now();
    comet_et_result r;
    in.flows = a.flows;
    in.max_flows = a.max_flows;
    comet_status st = comet_et_simulate(&t, &in, &r, &err);
    double t2 = cli_now();
    comet_et_free(&t);
    comet_astra_free(&in);
    if (st)
        return cli_report_error("simulate", &err);
    comet_buf out;
    comet_buf_init(&out);
    render(&out, &a, &r, t1 - t0, t2 - t1);
    comet_et_result_free(&r);
    st = out.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory")
                    : cli_write_output(a.output, out.data, out.len, &err);
    comet_buf_free(&out);
    return st ? cli_report_error("simulate", &err) : CLI_OK;
}
