/* comet search: the best parallelization strategies for one model on one
 * cluster. Reads the model and system like comet estimate, enumerates the
 * whole strategy space on all cores and prints the top k with the best
 * one's breakdown, plus what was enumerated and why points were dropped.
 * With a report it keeps more: every strategy that fits, up to
 * COMET_SEARCH_MAX_KEEP, for the page's table; the text, CSV and JSON
 * still hold the top k. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "inputs.h"

static void help(void)
{
    printf("usage: comet search [FILE.yaml|FILE.json ...] --npus N (--gbs N | --max-gbs N) [options]\n\n"
           "Enumerates every valid strategy: TP x CP x PP x DP, expert parallelism (MoE\n"
           "models), placement of the groups on the network dimensions, microbatch,\n"
           "interleaving, sequence parallelism, fused attention, ring or Ulysses context\n"
           "parallelism, recomputation, ZeRO stage, offloads (with an expansion tier) and\n"
           "overlap, and ranks them.\n\n"
           "Inputs: --model NAME|FILE, --system NAME|FILE, --strategy NAME|FILE (its\n"
           "  fixed knobs, e.g. grad_fp32, are kept), --grad-fp32\n"
           "  --npus N               NPUs to use (required)\n"
           "  --gbs N                global batch in samples\n"
           "  --max-gbs N            instead: try dp * 2^k samples up to N\n"
           "  --max-mb N             largest microbatch to try\n"
           "  --max-cp N             largest context parallelism to try (default: while\n"
           "                         each rank keeps >= 4096 tokens of a sequence)\n"
           "  --objective time|throughput|cost   rank by step time (default), tokens/s,\n"
           "                         or tokens/s per unit of cluster cost\n"
           "  --top K                how many to keep (default 10)\n"
           "  -j N                   threads (default: all cores)\n"
           "  --no-flash             do not try fused attention\n"
           "  --no-offload           do not try offloading to an expansion tier\n"
           "  --keep-dominated       also evaluate overlap off (never faster in the model)\n"
           "  --json | --csv, -o FILE\n"
           "  --report FILE.html     also write an HTML report (a table of every strategy\n"
           "                         that fits, up to the best 20000; breakdowns)\n"
           "  --plots DIR            also write each chart as DIR/ID.svg and DIR/ID.csv\n"
           "Exit status: 0 ok, 1 a failure mid-way, 2 bad input or an unusable output path.\n");
}

static void offload_text(const comet_strategy *s, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s%s", s->offload_optimizer ? "o" : "", s->offload_weights ? "w" : "",
             s->offload_gradients ? "g" : "", s->offload_activations ? "a" : "");
    if (!out[0])
        snprintf(out, cap, "-");
}

static void render_text(const cli_inputs *in, const comet_search_request *req,
                        const comet_ranked *top, int n, const comet_search_stats *st,
                        double seconds, int threads, comet_buf *b, const comet_band *bands)
{
    const comet_model *m = req->model;
    comet_buf_printf(b, "%s on %s: %lld NPUs, global batch %s%lld, ranked by %s\n\n", m->name,
                     req->system->name, (long long)req->space.npus,
                     req->space.max_global_batch > 0 ? "up to " : "",
                     (long long)(req->space.max_global_batch > 0 ? req->space.max_global_batch
                                                                 : req->space.global_batch),
                     comet_objective_name(req->objective));
    comet_buf_printf(b, "%4s %9s %10s %6s %4s %4s %4s %4s %4s %3s %3s %-9s %4s %3s %-5s %-5s %8s  %s\n",
                     "rank", "step s", "tokens/s", "MFU", "tp", "pp", "dp", "mb", "v", "sp", "fa",
                     "recompute", "zero", "off", "ovl", "sched", "HBM GiB", "placement");
    for (int i = 0; i < n; i++) {
        const comet_strategy *s = &top[i].strategy;
        const comet_result *r = &top[i].result;
        char off[8];
        offload_text(s, off, sizeof off);
        comet_buf_printf(b, "%4d %9.3f %10.0f %5.1f%% %4lld %4lld %4lld %4lld %4lld %3s %3s %-9s %4d "
                            "%3s %-5s %-5s %8.1f  ",
                         i + 1, r->step_time, r->tokens_per_s, 100.0 * r->mfu, (long long)s->tp,
                         (long long)s->pp, (long long)s->dp, (long long)s->microbatch,
                         (long long)s->interleave, s->sp ? "on" : "-",
                         s->flash_attention ? "on" : "-", comet_recompute_name(s->recompute),
                         s->zero_stage, off,
                         s->overlap_dp && s->overlap_tp ? "dp+tp"
                         : s->overlap_dp               ? "dp"
                         : s->overlap_tp               ? "tp"
                                                       : "-",
                         comet_schedule_name(s->schedule), r->mem_total[COMET_TIER_HBM] / COMET_GIB);
        char placement[160];
        comet_report_placement_text(s, req->system->n_dims, placement, sizeof placement);
        comet_buf_printf(b, "%s\n", placement);
    }
    if (n == 0)
        comet_buf_printf(b, "   no strategy fits\n");
    comet_buf_printf(b,
                     "\n%llu points enumerated in %.2f s on %d thread%s (%.2f M points/s): "
                     "%llu fit, %llu did not fit in HBM, %llu not in expansion memory, "
                     "%llu dominated (overlap off, or 1F1B where ZB-H1 fits); "
                     "%llu layouts invalid (TP vs heads/ffn %llu, "
                     "batch %llu, network %llu)\n",
                     (unsigned long long)st->enumerated, seconds, threads, threads == 1 ? "" : "s",
                     seconds > 0 ? (double)st->enumerated / seconds / 1e6 : 0.0,
                     (unsigned long long)st->feasible, (unsigned long long)st->no_fit_hbm,
                     (unsigned long long)st->no_fit_expansion, (unsigned long long)st->dominated,
                     (unsigned long long)st->invalid, (unsigned long long)st->invalid_tp,
                     (unsigned long long)st->invalid_batch, (unsigned long long)st->invalid_layout);
    if (n > 0) {
        comet_buf_printf(b, "\nbest strategy:\n");
        comet_report_text(b, m, req->system, &top[0].strategy, &top[0].result, &bands[0]);
    }
    (void)in;
}

static void render_csv(const comet_search_request *req, const comet_ranked *top, int n,
                       comet_buf *b, const comet_band *bands)
{
    comet_buf_csv_version_head(b);
    comet_buf_printf(b, "rank,");
    comet_report_csv_header(b);
    for (int i = 0; i < n; i++) {
        comet_buf_csv_version(b);
        comet_buf_printf(b, "%d,", i + 1);
        comet_report_csv_row(b, req->model, req->system, &top[i].strategy, &top[i].result,
                             &bands[i]);
    }
}

static comet_status build_request(const cli_inputs *in, comet_search_request *req,
                                  comet_error *err)
{
    memset(req, 0, sizeof *req);
    req->model = &in->job.model;
    req->system = &in->job.system;
    comet_search_space_defaults(&req->space);
    req->space.base = in->job.strategy;
    req->space.npus = in->npus;
    req->space.global_batch = in->job.strategy.global_batch;
    req->space.max_global_batch = in->max_global_batch;
    req->space.max_microbatch = in->max_microbatch;
    req->space.max_cp = in->max_cp;
    req->space.vary_flash = !in->no_flash;
    req->space.vary_offload = !in->no_offload;
    req->space.keep_dominated = in->keep_dominated;
    req->objective = in->objective;
    req->top_k = (int)in->top;
    req->shard = 0;
    req->shards = 1;
    if (in->npus < 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--npus",
                               "is required: how many NPUs to search over");
    if (!in->job.has_strategy && in->max_global_batch == 0 && req->space.global_batch <= 1 &&
        !in->n_flag_keys)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--gbs",
                               "is required (or --max-gbs): the global batch to search for");
    return COMET_OK;
}

int cli_search(int argc, char **argv)
{
    int code;
    cli_inputs *in = cli_inputs_start(argc, argv, CMD_SEARCH, help, &code);
    if (!in)
        return code;
    comet_error err;
    comet_error_clear(&err);
    comet_search_request req;
    if (build_request(in, &req, &err))
        return cli_report_error("search", &err);
    int threads = cli_threads(in->threads);
    int top_k = req.top_k; /* what the text, CSV and JSON show */
    if (in->report || in->plots)
        req.top_k = COMET_SEARCH_MAX_KEEP;

    comet_ranked *top = calloc((size_t)req.top_k, sizeof *top);
    if (!top) {
        comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        return cli_report_error("search", &err);
    }
    int n = 0;
    comet_search_stats stats;
    double t0 = cli_now();
    comet_status st = comet_search_threads(&req, threads, top, &n, &stats, &err);
    double seconds = cli_now() - t0;
    if (st) {
        free(top);
        cli_inputs_locate(in, &err);
        return cli_report_error("search", &err);
    }
    /* each ranked strategy's uncertainty band, from the built-in validation tables */
    comet_band *bands = calloc((size_t)(n > 0 ? n : 1), sizeof *bands);
    comet_band_model *band_model = NULL;
    if (!bands || cli_band_model(&band_model, &err)) {
        if (!bands)
            comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        free(bands);
        free(top);
        return cli_report_error("search", &err);
    }
    for (int i = 0; i < n; i++)
        comet_band_for(band_model, req.model, req.system, &top[i].strategy, &top[i].result,
                       &bands[i]);
    comet_band_model_free(band_model);
    int shown = n < top_k ? n : top_k;
    comet_buf out;
    comet_buf_init(&out);
    if (in->format == OUT_JSON)
        comet_report_search_json(&out, &req, top, shown, &stats, bands);
    else if (in->format == OUT_CSV)
        render_csv(&req, top, shown, &out, bands);
    else
        render_text(in, &req, top, shown, &stats, seconds, threads, &out, bands);
    st = out.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                      "out of memory rendering the report")
                    : cli_write_output(in->output, out.data, out.len, &err);
    comet_buf_free(&out);
    if (!st && (in->report || in->plots)) {
        comet_page *page = comet_page_new("comet search");
        comet_report_page_search(page, req.model, req.system, req.space.npus, top, n, &stats,
                                 bands);
        st = cli_write_report(page, in->report, in->plots, &err);
    }
    free(bands);
    free(top);
    return st ? cli_report_error("search", &err) : CLI_OK;
}
