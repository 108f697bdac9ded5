/* comet allocate: reads an allocation file (an `allocate:` section: the
 * network, a budget per NPU, bounds per dimension, weighted workloads, an
 * objective), splits the budget over the network's dimensions with the
 * library's comet_allocate and prints the splits as a table, JSON or CSV,
 * with an HTML report on request. The work is the library's; this file
 * parses flags and writes files. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "cli.h"
#include "comet/allocate.h"

typedef struct allocate_args {
    const char *file;
    const char *output, *report, *plots;
    bool json, csv, no_sweep;
    int64_t threads;
} allocate_args;

static void help(void)
{
    printf("usage: comet allocate FILE.yaml [options]\n\n"
           "Splits a per-NPU bandwidth budget (GB/s, or dollars at a cost per GB/s on each\n"
           "dimension) over the network's dimensions to minimize the weighted step time of\n"
           "the file's workloads, or to maximize performance per cost (docs/allocate.md).\n"
           "Prints the optimum, the closed-form start, the equal split and the system's own\n"
           "split with their gap to the optimum, each dimension's utilization and what one\n"
           "more GB/s buys there, and the step time across budgets.\n"
           "  FILE.yaml         a document with one allocate: section (docs/config.md)\n"
           "  --json | --csv    machine-readable output (default: a table)\n"
           "  -o FILE           write to FILE atomically instead of stdout\n"
           "  --report FILE     also write an HTML report with charts\n"
           "  --plots DIR       also write each chart as DIR/ID.svg and DIR/ID.csv\n"
           "  --no-sweep        skip the step time across budgets (faster)\n"
           "  -j N              threads for searched strategies (default: all cores)\n"
           "Exit status: 0 ok, 1 a failure mid-way, 2 bad input or an unusable output path.\n");
}

#define AT(m) .offset = offsetof(allocate_args, m)

int cli_allocate(int argc, char **argv)
{
    static const cli_arg flags[] = {
        CLI_ARG_HELP_FLAGS,
        {.name = "--json", .kind = CLI_ARG_SWITCH, AT(json)},
        {.name = "--csv", .kind = CLI_ARG_SWITCH, AT(csv)},
        {.name = "--no-sweep", .kind = CLI_ARG_SWITCH, AT(no_sweep)},
        {.name = "-o", .alias = "--output", .kind = CLI_ARG_TEXT, AT(output)},
        {.name = "--report", .kind = CLI_ARG_TEXT, AT(report)},
        {.name = "--plots", .kind = CLI_ARG_TEXT, AT(plots)},
        {.name = "-j", .kind = CLI_ARG_INT, AT(threads), .min = 1, .max = 256},
    };
    const cli_args_spec spec = {.command = "allocate",
                                .flags = flags,
                                .n_flags = (int)(sizeof flags / sizeof flags[0]),
                                .help = CLI_HELP_OPTION,
                                .single = "allocation file",
                                .single_offset = offsetof(allocate_args, file)};
    allocate_args a = {0};
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    if (cli_args_parse(&spec, argc, argv, &a, &wants_help, &err))
        return cli_report_error("allocate", &err);
    if (wants_help) {
        help();
        return CLI_OK;
    }
    if (!a.file) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, NULL,
                        "needs an allocation file (see 'comet allocate --help')");
        return cli_report_error("allocate", &err);
    }
    if (a.json && a.csv) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--csv", "give --json or --csv, not both");
        return cli_report_error("allocate", &err);
    }
    if (cli_check_output(a.output, CLI_OUT_FILE, "-o", &err) ||
        cli_check_output(a.report, CLI_OUT_FILE, "--report", &err) ||
        cli_check_output(a.plots, CLI_OUT_DIR, "--plots", &err))
        return cli_report_error("allocate", &err);
    comet_alloc_problem *p = calloc(1, sizeof *p);
    comet_alloc_result *r = calloc(1, sizeof *r);
    comet_status st = !p || !r ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                 "out of memory")
                               : comet_alloc_read_file(a.file, p, &err);
    if (!st) {
        p->threads = cli_threads(a.threads);
        st = comet_allocate(p, !a.no_sweep, r, &err);
        if (st)
            comet_srcmap_locate(&p->srcmap, &err);
    }
    if (!st) {
        comet_buf out;
        comet_buf_init(&out);
        if (a.json)
            comet_alloc_json(&out, p, r);
        else if (a.csv)
            comet_alloc_csv(&out, p, r);
        else
            comet_alloc_text(&out, p, r);
        st = out.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                          "out of memory rendering the output")
                        : cli_write_output(a.output, out.data, out.len, &err);
        comet_buf_free(&out);
    }
    if (!st && (a.report || a.plots)) {
        comet_page *page = comet_page_new("comet allocate");
        if (page)
            comet_report_page_allocate(page, p, r);
        st = cli_write_report(page, a.report, a.plots, &err);
    }
    free(p);
    free(r);
    return st ? cli_report_error("allocate", &err) : CLI_OK;
}
