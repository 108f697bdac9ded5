/* comet allocate: reads an allocation file (an `allocate:` section: the
 * network, a budget per NPU, bounds per dimension, weighted workloads, an
 * objective), splits the budget over the network's dimensions with the
 * library's comet_allocate and prints the splits as a table, JSON or CSV,
 * with an HTML report on request. The work is the library's, the
 * command's body file_command.c's (cli_run_file_command); this file says what
 * is allocate's: its flags, help and calls. */
#include <stddef.h>
#include <stdio.h>

#include "args.h"
#include "cli.h"
#include "comet/allocate.h"

typedef struct allocate_args {
    cli_file_args io; /* first: CLI_FILE_FLAGS point into it */
    bool csv, no_sweep;
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

static comet_status check(const void *args, comet_error *err)
{
    const allocate_args *a = args;
    if (a->io.json && a->csv)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--csv",
                               "give --json or --csv, not both");
    return COMET_OK;
}

static comet_status read_problem(const char *path, void *problem, comet_error *err)
{
    return comet_alloc_read_file(path, problem, err);
}

static comet_status solve(const void *args, void *problem, void *result, comet_error *err)
{
    const allocate_args *a = args;
    comet_alloc_problem *p = problem;
    p->threads = cli_threads(a->threads);
    return comet_allocate(p, !a->no_sweep, result, err);
}

static void render(comet_buf *out, const void *args, const void *problem, const void *result)
{
    const allocate_args *a = args;
    if (a->io.json)
        comet_alloc_json(out, problem, result);
    else if (a->csv)
        comet_alloc_csv(out, problem, result);
    else
        comet_alloc_text(out, problem, result);
}

static void draw_page(comet_page *pg, const void *problem, const void *result)
{
    comet_report_page_allocate(pg, problem, result);
}

#define AT(m) .offset = offsetof(allocate_args, m)

int cli_allocate(int argc, char **argv)
{
    static const cli_arg flags[] = {
        CLI_ARG_HELP_FLAGS,
        CLI_FILE_FLAGS,
        {.name = "--csv", .kind = CLI_ARG_SWITCH, AT(csv)},
        {.name = "--no-sweep", .kind = CLI_ARG_SWITCH, AT(no_sweep)},
        {.name = "-j", .kind = CLI_ARG_INT, AT(threads), .min = 1, .max = 256},
    };
    static const cli_file_command cmd = {
        .name = "allocate",
        .file_kind = "allocation file",
        .article = "an",
        .flags = flags,
        .n_flags = (int)(sizeof flags / sizeof flags[0]),
        .help = help,
        .check = check,
        .problem_size = sizeof(comet_alloc_problem),
        .result_size = sizeof(comet_alloc_result),
        .srcmap_offset = offsetof(comet_alloc_problem, srcmap),
        .read = read_problem,
        .solve = solve,
        .render = render,
        .page = draw_page,
    };
    allocate_args a = {0};
    return cli_run_file_command(&cmd, argc, argv, &a);
}
