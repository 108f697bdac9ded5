/* comet report: an HTML report from saved sweep results (results.csv or
 * results.jsonl), and the writer every command's --report and --plots
 * share: the page as one HTML file, each chart as SVG plus CSV. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "cli.h"
#include "comet/files.h"
#include "comet/results.h"

static comet_status write_buf(const char *path, const comet_buf *b, comet_error *err)
{
    if (b->failed)
        return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
    return cli_write_output(path, b->data ? b->data : "", b->len, err);
}

static comet_status write_plot(const char *dir, const char *id, const char *ext,
                               const comet_buf *b, comet_error *err)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s.%s", dir, id, ext) >= (int)sizeof path)
        return comet_error_set(err, COMET_EINPUT, dir, 0, 0, "--plots", "path too long");
    return write_buf(path, b, err);
}

comet_status cli_write_report(comet_page *page, const char *report_path, const char *plots_dir,
                              comet_error *err)
{
    if (!page)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                               "out of memory building the report");
    comet_status st = COMET_OK;
    comet_buf b;
    comet_buf_init(&b);
    if (report_path) {
        comet_page_html(&b, page);
        st = write_buf(report_path, &b, err);
    }
    if (!st && plots_dir) {
        if (mkdir(plots_dir, 0777) != 0 && errno != EEXIST)
            st = comet_error_set(err, comet_errno_status(errno), plots_dir, 0, 0, "--plots",
                                 "cannot create the directory: %s", strerror(errno));
        for (int i = 0; !st && i < comet_page_n_charts(page); i++) {
            const comet_chart *c = comet_page_chart_at(page, i);
            b.len = 0;
            comet_chart_svg(&b, c, true);
            st = write_plot(plots_dir, c->id, "svg", &b, err);
            b.len = 0;
            comet_chart_csv(&b, c);
            if (!st)
                st = write_plot(plots_dir, c->id, "csv", &b, err);
        }
        for (int i = 0; !st && i < comet_page_n_tables(page); i++) {
            const comet_table *t = comet_page_table_at(page, i);
            b.len = 0;
            comet_table_csv(&b, t);
            st = write_plot(plots_dir, t->id, "csv", &b, err);
        }
    }
    comet_buf_free(&b);
    if (!st && report_path)
        fprintf(stderr, "comet: report written to %s\n", report_path);
    if (!st && plots_dir)
        fprintf(stderr, "comet: %d charts written to %s (SVG and CSV)\n",
                comet_page_n_charts(page), plots_dir);
    comet_page_free(page);
    return st;
}

comet_status cli_heatmap_axes(const char *spec, const comet_study *st, int out[2],
                              comet_error *err)
{
    out[0] = out[1] = -1;
    if (!spec)
        return COMET_OK;
    char names[2][128] = {"", ""};
    const char *comma = strchr(spec, ',');
    if (comma && (size_t)(comma - spec) < sizeof names[0]) {
        memcpy(names[0], spec, (size_t)(comma - spec));
        snprintf(names[1], sizeof names[1], "%s", comma + 1);
    }
    if (!names[0][0] || !names[1][0] || strchr(names[1], ','))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--heatmap",
                               "expected two axes as X,Y, got \"%s\"", spec);
    for (int i = 0; i < 2; i++) {
        char known[512] = "";
        for (int a = 0; a < st->n_axes; a++) {
            if (strcmp(st->axes[a].name, names[i]) == 0)
                out[i] = a;
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", a ? ", " : "",
                     st->axes[a].name);
        }
        if (out[i] < 0)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--heatmap",
                                   "no axis \"%s\" (axes: %s)", names[i],
                                   known[0] ? known : "none");
    }
    if (out[0] == out[1])
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--heatmap",
                               "needs two different axes, got \"%s\" twice", names[0]);
    return COMET_OK;
}

static void help(void)
{
    printf("usage: comet report RESULTS.csv|RESULTS.jsonl [-o REPORT.html] [--plots DIR]\n\n"
           "Builds a self-contained HTML report (inline SVG charts, no network) from the\n"
           "results a sweep saved: best and worst designs, a heatmap of the two axes that\n"
           "move step time most, the Pareto front of step time against cost, sensitivity\n"
           "bars, the fastest designs as a sortable table and their step-time breakdown.\n\n"
           "  -o FILE      where to write the report (default: RESULTS with .html)\n"
           "  --plots DIR  also write each chart as DIR/ID.svg and its data as DIR/ID.csv\n"
           "  --heatmap X,Y  the two axes of the heatmap (X across, Y down; default: the two\n"
           "               that move step time most), e.g. hbm_capacity,network.nvlink.bandwidth\n"
           "Exit status: 0 ok, 1 a failure mid-way, 2 bad input (a file that holds no sweep\n"
           "results) or an unusable output path (see 'comet help').\n");
}

/* results.csv -> results.html */
static void default_output(const char *in, char *out, size_t cap)
{
    snprintf(out, cap, "%s", in);
    char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
    if (dot && (!slash || dot > slash))
        *dot = '\0';
    size_t n = strlen(out);
    snprintf(out + n, cap - n, ".html");
}

typedef struct report_args {
    const char *input, *output, *plots, *heatmap;
} report_args;

#define AT(field) .offset = offsetof(report_args, field)

/* -o and --output are two rows: an error names the spelling given. */
static const cli_arg report_flags[] = {
    CLI_ARG_HELP_FLAGS,
    {.name = "-o", .kind = CLI_ARG_TEXT, AT(output)},
    {.name = "--output", .kind = CLI_ARG_TEXT, AT(output)},
    {.name = "--plots", .kind = CLI_ARG_TEXT, AT(plots)},
    {.name = "--heatmap", .kind = CLI_ARG_TEXT, AT(heatmap)},
};

int cli_report(int argc, char **argv)
{
    static const cli_args_spec spec = {
        .command = "report",
        .flags = report_flags,
        .n_flags = sizeof report_flags / sizeof report_flags[0],
        .help = CLI_HELP_IN_ORDER,
        .single = "results file",
        .single_offset = offsetof(report_args, input),
    };
    report_args args = {0};
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    if (cli_args_parse(&spec, argc, argv, &args, &wants_help, &err))
        return cli_report_error("report", &err);
    if (wants_help) {
        help();
        return CLI_OK;
    }
    const char *input = args.input, *output = args.output, *plots = args.plots,
               *heatmap = args.heatmap;
    if (!input) {
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, NULL,
                        "which results? usage: comet report RESULTS.csv|RESULTS.jsonl");
        return cli_report_error("report", &err);
    }
    char out_path[4096];
    if (!output) {
        default_output(input, out_path, sizeof out_path);
        output = out_path;
    }
    comet_results *res = calloc(1, sizeof *res);
    comet_page *page = NULL;
    comet_status st = res ? comet_results_read(input, res, &err)
                          : comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    /* a file that holds no sweep results (garbage, empty, another tool's)
     * is bad input, not a report about nothing */
    if (!st && res->problem[0])
        st = comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, NULL, "%s", res->problem);
    if (!st && (cli_check_output(output, CLI_OUT_FILE, NULL, &err) ||
                cli_check_output(plots, CLI_OUT_DIR, "--plots", &err)))
        st = err.status;
    int axes[2];
    if (!st)
        st = cli_heatmap_axes(heatmap, &res->study, axes, &err);
    if (!st) {
        char title[400];
        snprintf(title, sizeof title, "comet sweep report: %s", input);
        page = comet_page_new(title);
        comet_report_page_sweep(page, res, axes);
    }
    if (!st)
        st = cli_write_report(page, output, plots, &err);
    if (res)
        comet_results_free(res);
    free(res);
    return st ? cli_report_error("report", &err) : CLI_OK;
}
