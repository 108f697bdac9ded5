/* The files of a sweep written after its rows (the library's runner
 * writes those): the Pareto front, the summary and the HTML report, all
 * from results.csv read once (written atomically). The library builds and
 * renders them; this file only asks, writes and prints. */
#include "sweep_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "comet/results.h"

comet_status sweep_read_study(const char *name, comet_study *study, comet_error *err)
{
    struct stat st;
    if (stat(name, &st) == 0 || strchr(name, '/') || strstr(name, ".yaml") ||
        strstr(name, ".json"))
        return comet_study_read_file(name, study, err);
    const char *text = comet_preset_text("studies", name);
    if (!text) {
        char known[512] = "";
        const char *const *names = comet_preset_names("studies");
        for (int i = 0; names && names[i]; i++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                     names[i]);
        return comet_error_set(err, COMET_EINPUT, name, 0, 0, NULL,
                               "no such study file, and no built-in study by that name "
                               "(built in: %s)",
                               known);
    }
    char path[256];
    snprintf(path, sizeof path, "presets/studies/%s.yaml", name);
    return comet_study_read_text(text, strlen(text), path, study, err);
}

void sweep_join(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* The HTML report, drawn from the rows just read (the same path `comet
 * report` takes later). */
static comet_status write_report(const sweep_args *a, const char *csv_path,
                                 const comet_results *res, comet_error *err)
{
    char path[4096];
    const char *report = a->report;
    if (!report) {
        sweep_join(path, sizeof path, a->dir, "report.html");
        report = path;
    }
    int axes[2];
    comet_status st = cli_heatmap_axes(a->heatmap, &res->study, axes, err);
    if (!st) {
        char title[400];
        snprintf(title, sizeof title, "comet sweep report: %s", csv_path);
        comet_page *page = comet_page_new(title);
        comet_report_page_sweep(page, res, axes);
        st = cli_write_report(page, report, a->plots, err);
    }
    return st;
}

int sweep_finish(const comet_study *study, const sweep_args *a, const char *csv_path)
{
    const char *dir = a->dir;
    comet_error err;
    comet_summary *sum = malloc(sizeof *sum);
    comet_results *res = malloc(sizeof *res);
    comet_status st = sum && res ? comet_results_read(csv_path, res, &err)
                                 : comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                   "out of memory");
    comet_buf pareto, text;
    comet_buf_init(&pareto);
    comet_buf_init(&text);
    if (!st) {
        comet_summary_from_results(sum, res, study); /* design values by index */
        comet_summary_pareto_csv(&pareto, sum);
        comet_summary_text(&text, sum);
        comet_headroom_summary(&text, res);
        char path[4096];
        sweep_join(path, sizeof path, dir, "pareto.csv");
        st = cli_write_output(path, pareto.data, pareto.len, &err);
        sweep_join(path, sizeof path, dir, "summary.txt");
        if (!st)
            st = cli_write_output(path, text.data, text.len, &err);
        if (!st)
            fputs(text.data, stdout);
        if (!st)
            st = write_report(a, csv_path, res, &err);
        comet_results_free(res);
    }
    comet_buf_free(&pareto);
    comet_buf_free(&text);
    free(sum);
    free(res);
    return st ? cli_report_error("sweep", &err) : CLI_OK;
}

