/* comet study: the COMET methodology end to end, the main job. It reads a
 * study (a file, or a built-in one by name; transformer-1t by default),
 * runs the cluster design sweep into DIR/results.csv and results.jsonl
 * (the same run as comet sweep: threads, MPI ranks, Ctrl-C and --resume),
 * then works out steps 1-3 on the base cluster and step 5 from the saved
 * rows, prints a summary of at most 30 lines and writes DIR/summary.txt
 * and the report DIR/report.html. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "comet/api.h"
#include "comet/methodology.h"
#include "sweep_files.h"

#define DEFAULT_STUDY "transformer-1t"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: comet study [STUDY.yaml | NAME] [-o DIR] [-j N] [--resume | --force] [--quiet]\n"
            "                   [--report FILE] [--plots DIR2] [--heatmap X,Y] [--max-designs N]\n\n"
            "Runs the COMET methodology on a study (default: the built-in %s):\n"
            "  1. workload: parameters, FLOPs, state and activation memory, communication\n"
            "     volume per parallel group as the strategy changes\n"
            "  2. strategies on the base cluster: best and worst, and why\n"
            "  3. memory: what fits in HBM alone, what an expansion tier makes feasible\n"
            "  4. the cluster design sweep over the study's axes\n"
            "  5. the design and strategy to pick, and the resource to invest in next\n"
            "It prints a summary and writes, in DIR (default: study-NAME):\n"
            "  results.csv, results.jsonl  every design point (as comet sweep writes them)\n"
            "  summary.txt                 the printed summary\n"
            "  report.html                 every step with charts (--report FILE moves it)\n"
            "Built-in studies (presets/studies/): ",
            DEFAULT_STUDY);
    const char *const *names = comet_preset_names("studies");
    for (int i = 0; names && names[i]; i++)
        fprintf(out, "%s%s", i ? ", " : "", names[i]);
    fprintf(out, "\n  -j N        threads per process (default: all cores)\n"
                 "  --resume    continue an interrupted study in DIR\n"
                 "  --force     start over, replacing DIR's results\n"
                 "  --quiet     no progress bar\n"
                 "  --max-designs N  refuse a study of more than N designs (default: %d, about an\n"
                 "              hour on a laptop; 0: no limit)\n"
                 "Exit status: 0 done, 1 a failure mid-way, 2 bad input, an unusable output path or\n"
                 "DIR in use by another run (DIR/.comet-lock), 130 interrupted (resumable).\n",
                 SWEEP_DEFAULT_MAX_DESIGNS);
}


/* steps 1-3 and 5, worked out by the library (comet/api.h) */
typedef comet_study_outcome study_run;

static int conclude(const sweep_args *a, const comet_study *study)
{
    comet_error err;
    comet_error_clear(&err);
    study_run *run = calloc(1, sizeof *run);
    if (!run) {
        comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        return cli_report_error("study", &err);
    }
    int threads = cli_threads(a->threads);
    char csv[4096], report[4096], summary_path[4096];
    sweep_join(csv, sizeof csv, a->dir, "results.csv");
    sweep_join(summary_path, sizeof summary_path, a->dir, "summary.txt");
    if (a->report)
        snprintf(report, sizeof report, "%s", a->report);
    else
        sweep_join(report, sizeof report, a->dir, "report.html");
    comet_band_model *bands = NULL;
    comet_status st = cli_band_model(&bands, &err);
    if (!st)
        st = comet_study_outcome_run(study, csv, threads, bands, run, &err);
    comet_band_model_free(bands);
    int axes[2];
    if (!st)
        st = cli_heatmap_axes(a->heatmap, &run->results.study, axes, &err);
    if (!st) {
        comet_buf text;
        comet_buf_init(&text);
        comet_study_summary(&text, study, run->findings, run->conclusions, study->n_models,
                            &run->results, report, run->best_bands);
        st = text.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory")
                         : cli_write_output(summary_path, text.data, text.len, &err);
        if (!st) {
            char title[300];
            snprintf(title, sizeof title, "comet study: %s", study->name);
            comet_page *page = comet_page_new(title);
            comet_report_page_study(page, study, run->findings, run->conclusions,
                                    study->n_models, &run->results, axes, run->best_bands);
            st = cli_write_report(page, report, a->plots, &err);
        }
        if (!st)
            fputs(text.data, stdout);
        comet_buf_free(&text);
    }
    comet_study_outcome_free(run);
    free(run);
    return st ? cli_report_error("study", &err) : CLI_OK;
}

/* A file when one exists at that path, else a built-in study by name;
 * the default study when none is named. */
static comet_status read_named(const char *name, comet_study *study, comet_error *err)
{
    return sweep_read_study(name ? name : DEFAULT_STUDY, study, err);
}

int cli_study(int argc, char **argv)
{
    static const sweep_command study = {"study", usage, read_named, conclude};
    return sweep_main(argc, argv, &study);
}
