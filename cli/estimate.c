/* comet estimate: reads a model, a system and a strategy (files, presets
 * and flags, see inputs.c), runs the analytical model and prints a table,
 * JSON or CSV. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "inputs.h"

static void help(void)
{
    printf("usage: comet estimate [FILE.yaml|FILE.json ...] [options]\n\n"
           "Inputs (files hold model:, system: and strategy: sections; later inputs win):\n"
           "  --model NAME|FILE      model preset or file (default gpt3-175b)\n"
           "  --system NAME|FILE     system preset or file (default a100-80g-selene)\n"
           "  --strategy NAME|FILE   strategy preset or file (default: gpt3-175b-selene when\n"
           "                         no input and no knob is given, else tp=pp=dp=1, batch 1)\n"
           "Strategy knobs (override the inputs):\n");
    cli_print_knob_help();
    printf("Output:\n"
           "  --json | --csv         machine-readable output (default: a table)\n"
           "  -o FILE                write to FILE atomically instead of stdout\n"
           "  --report FILE.html     also write an HTML report with charts\n"
           "  --plots DIR            also write each chart as DIR/ID.svg and DIR/ID.csv\n"
           "Exit status: 0 ok, 1 a failure mid-way, 2 bad input or an unusable output path.\n");
}

static void render(const cli_inputs *in, const comet_result *r, const comet_band *band,
                   comet_buf *out)
{
    const comet_job *j = &in->job;
    if (in->format == OUT_JSON) {
        comet_report_json(out, &j->model, &j->system, &j->strategy, r, band);
    } else if (in->format == OUT_CSV) {
        comet_buf_csv_version_head(out);
        comet_report_csv_header(out);
        comet_buf_csv_version(out);
        comet_report_csv_row(out, &j->model, &j->system, &j->strategy, r, band);
    } else {
        comet_report_text(out, &j->model, &j->system, &j->strategy, r, band);
    }
}

int cli_estimate(int argc, char **argv)
{
    int code;
    cli_inputs *in = cli_inputs_start(argc, argv, CMD_ESTIMATE, help, &code);
    if (!in)
        return code;
    comet_error err;
    comet_error_clear(&err);

    /* resolved in place so the report shows the placement used */
    comet_result r;
    if (comet_strategy_resolve(&in->job.model, &in->job.system, &in->job.strategy, NULL, &err) ||
        comet_estimate(&in->job.model, &in->job.system, &in->job.strategy, &r, &err)) {
        cli_inputs_locate(in, &err);
        return cli_report_error("estimate", &err);
    }
    /* the step time's uncertainty band, from every built-in validation table */
    comet_band_model *bands;
    if (cli_band_model(&bands, &err))
        return cli_report_error("estimate", &err);
    comet_band band;
    comet_band_for(bands, &in->job.model, &in->job.system, &in->job.strategy, &r, &band);
    comet_band_model_free(bands);
    comet_buf out;
    comet_buf_init(&out);
    render(in, &r, &band, &out);
    comet_status st = out.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                   "out of memory rendering the report")
                                 : cli_write_output(in->output, out.data, out.len, &err);
    comet_buf_free(&out);
    if (!st && (in->report || in->plots)) {
        comet_page *page = comet_page_new("comet estimate");
        comet_report_page_estimate(page, &in->job.model, &in->job.system, &in->job.strategy, &r,
                                   &band);
        st = cli_write_report(page, in->report, in->plots, &err);
    }
    return st ? cli_report_error("estimate", &err) : CLI_OK;
}
