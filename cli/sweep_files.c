/* The files of a sweep: checking and trimming results for --resume,
 * appending rows, and at the end the summaries and the HTML report, all
 * from results.csv read once (written atomically). */
#define _XOPEN_SOURCE 700
#include "sweep_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "comet/results.h"

void sweep_join(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* Complete lines of a file: the length up to the last '\n', and how many
 * lines that is. A missing file has none. */
static comet_status complete_lines(const char *path, long *bytes, uint64_t *lines,
                                   comet_error *err)
{
    *bytes = 0;
    *lines = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? COMET_OK
                               : comet_error_set(err, COMET_EIO, path, 0, 0, NULL,
                                                 "cannot read: %s", strerror(errno));
    long pos = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        pos++;
        if (c == '\n') {
            *bytes = pos;
            (*lines)++;
        }
    }
    fclose(f);
    return COMET_OK;
}

/* Keep the first `lines` lines of a file (dropping a torn last line). */
static comet_status keep_lines(const char *path, uint64_t lines, comet_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot read: %s",
                               strerror(errno));
    long pos = 0;
    uint64_t seen = 0;
    int c;
    while (seen < lines && (c = fgetc(f)) != EOF) {
        pos++;
        if (c == '\n')
            seen++;
    }
    fclose(f);
    if (truncate(path, pos) != 0)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot truncate: %s",
                               strerror(errno));
    return COMET_OK;
}

/* The header line results.csv must start with, for this study. */
char *sweep_csv_header(const comet_study *study)
{
    comet_buf b;
    comet_buf_init(&b);
    comet_sweep_csv_header(&b, study);
    return b.data;
}

/* Where to start: 0 for a fresh sweep, else the rows both files hold. */
comet_status sweep_prepare_outputs(const char *dir, bool resume, bool force,
                                   const comet_study *study, const char *csv, const char *jsonl,
                                   uint64_t *start, comet_error *err)
{
    *start = 0;
    long csv_bytes, jsonl_bytes;
    uint64_t csv_lines, jsonl_lines;
    if (complete_lines(csv, &csv_bytes, &csv_lines, err) ||
        complete_lines(jsonl, &jsonl_bytes, &jsonl_lines, err))
        return err->status;
    bool exists = access(csv, F_OK) == 0 || access(jsonl, F_OK) == 0;
    if (!resume) {
        if (exists && !force)
            return comet_error_set(err, COMET_EINPUT, dir, 0, 0, NULL,
                                   "already holds sweep results; use --resume to continue or "
                                   "--force to start over");
        remove(csv);
        remove(jsonl);
        return COMET_OK;
    }
    if (!exists || csv_lines == 0)
        return COMET_OK; /* nothing to resume: a fresh start */
    char *header = sweep_csv_header(study);
    FILE *f = fopen(csv, "rb");
    char *line = NULL;
    size_t cap = 0;
    bool same = f && getline(&line, &cap, f) > 0 && header && strcmp(line, header) == 0;
    if (f)
        fclose(f);
    free(line);
    free(header);
    if (!same)
        return comet_error_set(err, COMET_EINPUT, csv, 1, 1, NULL,
                               "was written for a different study (its columns differ); "
                               "use --force to start over");
    uint64_t rows = csv_lines - 1 < jsonl_lines ? csv_lines - 1 : jsonl_lines;
    if (keep_lines(csv, rows + 1, err) || keep_lines(jsonl, rows, err))
        return err->status;
    *start = rows;
    return COMET_OK;
}

comet_status sweep_append_line(FILE *f, const char *path, const char *text, size_t len,
                                comet_error *err)
{
    if (fwrite(text, 1, len, f) != len || fflush(f) != 0)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "write failed: %s",
                               strerror(errno));
    return COMET_OK;
}

/* The sweep's summaries from the rows it wrote: the design values come
 * from the study by index (exact, not re-read from text). */
static void summarize(const comet_study *study, const comet_results *res, comet_summary *sum)
{
    comet_summary_init(sum, study);
    for (size_t i = 0; i < res->n_rows; i++) {
        const comet_results_row *row = &res->rows[i];
        int model;
        comet_system sys;
        int64_t npus;
        double values[COMET_STUDY_MAX_AXES];
        comet_study_point(study, row->index, &model, &sys, &npus, values);
        comet_summary_add(sum, model, row->index, values, row->status, row->result.step_time,
                          row->cost);
    }
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
        summarize(study, res, sum);
        comet_summary_pareto_csv(&pareto, sum);
        comet_summary_text(&text, sum);
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

