/* comet deeppool: reads a DeepPool file (a `deeppool:` section: the
 * foreground model, the system, a fixed global batch, the cluster size,
 * the strong-scaling sizes, background jobs and their interference),
 * plans burst parallelism with the library's comet_deeppool against
 * plain data parallelism, multiplexes the background jobs and prints the
 * plan as a table or JSON, with an HTML report on request. The work is
 * the library's, the command's body file_command.c's (cli_run_file_command);
 * this file says what is deeppool's: its flags, help and calls. */
#include <stddef.h>
#include <stdio.h>

#include "args.h"
#include "cli.h"
#include "comet/deeppool.h"

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

static comet_status read_problem(const char *path, void *problem, comet_error *err)
{
    return comet_deeppool_read_file(path, problem, err);
}

static comet_status solve(const void *args, void *problem, void *result, comet_error *err)
{
    (void)args;
    return comet_deeppool(problem, result, err);
}

static void render(comet_buf *out, const void *args, const void *problem, const void *result)
{
    const cli_file_args *a = args;
    if (a->json)
        comet_deeppool_json(out, problem, result);
    else
        comet_deeppool_text(out, problem, result);
}

static void draw_page(comet_page *pg, const void *problem, const void *result)
{
    comet_report_page_deeppool(pg, problem, result);
}

int cli_deeppool(int argc, char **argv)
{
    static const cli_arg flags[] = {CLI_ARG_HELP_FLAGS, CLI_FILE_FLAGS};
    static const cli_file_command cmd = {
        .name = "deeppool",
        .file_kind = "deeppool file",
        .article = "a",
        .flags = flags,
        .n_flags = (int)(sizeof flags / sizeof flags[0]),
        .help = help,
        .problem_size = sizeof(comet_deeppool_problem),
        .result_size = sizeof(comet_deeppool_result),
        .srcmap_offset = offsetof(comet_deeppool_problem, srcmap),
        .read = read_problem,
        .solve = solve,
        .render = render,
        .page = draw_page,
    };
    cli_file_args a = {0};
    return cli_run_file_command(&cmd, argc, argv, &a);
}
