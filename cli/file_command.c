/* The body the commands over one input file share (comet allocate,
 * deeppool, partition): their outputs checked before any work and
 * written after it (the text to -o or stdout, then the HTML page and its
 * charts), and, for those that read a problem, solve it and render the
 * result, the whole command from flags to exit status, so each command's
 * file says only what is its own (cli.h: cli_file_args,
 * cli_file_command). It sits above the shared helpers (common.c) and the
 * report writer (report.c), which it calls. */
#include "args.h"
#include "cli.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

comet_status cli_check_file_outputs(const cli_file_args *a, comet_error *err)
{
    comet_status st = cli_check_output(a->output, CLI_OUT_FILE, "-o", err);
    if (!st)
        st = cli_check_output(a->report, CLI_OUT_FILE, "--report", err);
    if (!st)
        st = cli_check_output(a->plots, CLI_OUT_DIR, "--plots", err);
    return st;
}

comet_status cli_write_file_outputs(const cli_file_args *a, const comet_buf *out,
                                    const char *title,
                                    void (*draw)(comet_page *page, const void *ctx),
                                    const void *ctx, comet_error *err)
{
    comet_status st = out->failed ? comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                    "out of memory rendering the output")
                                  : cli_write_output(a->output, out->data, out->len, err);
    if (!st && (a->report || a->plots)) {
        comet_page *page = comet_page_new(title);
        if (page)
            draw(page, ctx);
        st = cli_write_report(page, a->report, a->plots, err);
    }
    return st;
}

/* A file command's problem and result, for its page. */
typedef struct file_run {
    const cli_file_command *cmd;
    const void *problem, *result;
} file_run;

static void draw_file_run(comet_page *page, const void *ctx)
{
    const file_run *fr = ctx;
    fr->cmd->page(page, fr->problem, fr->result);
}

int cli_run_file_command(const cli_file_command *cmd, int argc, char **argv, void *args)
{
    const char *name = cmd->name;
    const cli_args_spec spec = {.command = name,
                                .flags = cmd->flags,
                                .n_flags = cmd->n_flags,
                                .help = CLI_HELP_OPTION,
                                .single = cmd->file_kind,
                                .single_offset = offsetof(cli_file_args, file)};
    const cli_file_args *a = args;
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    if (cli_args_parse(&spec, argc, argv, args, &wants_help, &err))
        return cli_report_error(name, &err);
    if (wants_help) {
        cmd->help();
        return CLI_OK;
    }
    if (!a->file) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, NULL,
                        "needs %s %s (see 'comet %s --help')", cmd->article, cmd->file_kind,
                        name);
        return cli_report_error(name, &err);
    }
    if ((cmd->check && cmd->check(args, &err)) || cli_check_file_outputs(a, &err))
        return cli_report_error(name, &err);
    void *p = calloc(1, cmd->problem_size);
    void *r = calloc(1, cmd->result_size);
    comet_status st = !p || !r ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                 "out of memory")
                               : cmd->read(a->file, p, &err);
    if (!st) {
        st = cmd->solve(args, p, r, &err);
        if (st)
            comet_srcmap_locate((const comet_srcmap *)((const char *)p + cmd->srcmap_offset),
                                &err);
    }
    if (!st) {
        comet_buf out;
        comet_buf_init(&out);
        cmd->render(&out, args, p, r);
        char title[64];
        snprintf(title, sizeof title, "comet %s", name);
        const file_run fr = {cmd, p, r};
        st = cli_write_file_outputs(a, &out, title, draw_file_run, &fr, &err);
        comet_buf_free(&out);
    }
    free(p);
    free(r);
    return st ? cli_report_error(name, &err) : CLI_OK;
}
