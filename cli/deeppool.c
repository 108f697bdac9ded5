/* comet deeppool: reads a DeepPool file (a `deeppool:` section: the
 * foreground model, the system, a fixed global batch, the cluster size,
 * the strong-scaling sizes, background jobs and their interference),
 * plans burst parallelism with the library's comet_deeppool against
 * plain data parallelism, multiplexes the background jobs and prints the
 * plan as a table or JSON, with an HTML report on request. The work is
 * the library's; this file parses flags and writes files. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "cli.h"
#include "comet/deeppool.h"

typedef struct deeppool_args {
    const char *file;
    const char *output, *report, *plots;
    bool json;
} deeppool_args;

static void help(void)
{
    printf("usage: comet deeppool FILE.yaml [options]\n\n"
           "Burst parallelism and GPU multiplexing (DeepPool, docs/deeppool.md): for a fixed\n"
           "global batch, gives each run of consecutive layers its own number of GPUs to\n"
           "minimize the iteration time (dynamic programming over layers, counting the\n"
           "activations moved between runs of different widths and each run's gradient\n"
           "all-reduce), packs background jobs into the GPU time the plan leaves idle, and\n"
           "compares both with plain data parallelism, across the strong-scaling sizes.\n"
           "  FILE.yaml         a document with one deeppool: section (docs/deeppool.md)\n"
           "  --json            machine-readable output (default: a table)\n"
           "  -o FILE           write to FILE atomically instead of stdout\n"
           "  --report FILE     also write an HTML report with charts\n"
           "  --plots DIR       also write each chart as DIR/ID.svg and DIR/ID.csv\n"
           "Exit status: 0 ok, 1 a failure mid-way, 2 bad input or an unusable output path.\n");
}

#define AT(m) .offset = offsetof(deeppool_args, m)

int cli_deeppool(int argc, char **argv)
{
    static const cli_arg flags[] = {
        CLI_ARG_HELP_FLAGS,
        {.name = "--json", .kind = CLI_ARG_SWITCH, AT(json)},
        {.name = "-o", .alias = "--output", .kind = CLI_ARG_TEXT, AT(output)},
        {.name = "--report", .kind = CLI_ARG_TEXT, AT(report)},
        {.name = "--plots", .kind = CLI_ARG_TEXT, AT(plots)},
    };
    const cli_args_spec spec = {.command = "deeppool",
                                .flags = flags,
                                .n_flags = (int)(sizeof flags / sizeof flags[0]),
                                .help = CLI_HELP_OPTION,
                                .single = "deeppool file",
                                .single_offset = offsetof(deeppool_args, file)};
    deeppool_args a = {0};
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    if (cli_args_parse(&spec, argc, argv, &a, &wants_help, &err))
        return cli_report_error("deeppool", &err);
    if (wants_help) {
        help();
        return CLI_OK;
    }
    if (!a.file) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, NULL,
                        "needs a deeppool file (see 'comet deeppool --help')");
        return cli_report_error("deeppool", &err);
    }
    if (cli_check_output(a.output, CLI_OUT_FILE, "-o", &err) ||
        cli_check_output(a.report, CLI_OUT_FILE, "--report", &err) ||
        cli_check_output(a.plots, CLI_OUT_DIR, "--plots", &err))
        return cli_report_error("deeppool", &err);
    comet_deeppool_problem *p = calloc(1, sizeof *p);
    comet_deeppool_result *r = calloc(1, sizeof *r);
    comet_status st = !p || !r ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                 "out of memory")
                               : comet_deeppool_read_file(a.file, p, &err);
    if (!st) {
        st = comet_deeppool(p, r, &err);
        if (st)
            comet_srcmap_locate(&p->srcmap, &err);
    }
    if (!st) {
        comet_buf out;
        comet_buf_init(&out);
        if (a.json)
            comet_deeppool_json(&out, p, r);
        else
            comet_deeppool_text(&out, p, r);
        st = out.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                          "out of memory rendering the output")
                        : cli_write_output(a.output, out.data, out.len, &err);
        comet_buf_free(&out);
    }
    if (!st && (a.report || a.plots)) {
        comet_page *page = comet_page_new("comet deeppool");
        if (page)
            comet_report_page_deeppool(page, p, r);
        st = cli_write_report(page, a.report, a.plots, &err);
    }
    free(p);
    free(r);
    return st ? cli_report_error("deeppool", &err) : CLI_OK;
}
