/* comet partition: RePurpose for a trained network. Reads its weights
 * (.npy, .npz or safetensors), places its neurons on --workers workers
 * layer by layer (Munkres), prunes the weak cross-worker weights under a
 * budget, prices one inference batch on a comet system against the naive
 * contiguous split, and with --data checks the accuracy before and after.
 * Text, --json, and an HTML --report (docs/partition.md). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "comet/partition.h"
#include "comet/report.h"

#define DEFAULT_SYSTEM "h100-80g-dgx"

typedef struct partition_args {
    cli_file_args io; /* first: CLI_FILE_FLAGS point into it; io.file is the weights file */
    const char *system;
    const char *data;
    int64_t workers, batch;
    bool no_curve;
    double budget, max_loss;
    comet_prune_kind prune;
    bool budget_set;
    comet_dtype dtype;
    comet_weight_layout layout;
} partition_args;

static void help(void)
{
    printf("usage: comet partition WEIGHTS --workers N [options]\n\n"
           "Splits a trained multilayer perceptron across N workers for inference, the\n"
           "RePurpose way (docs/partition.md): each layer's neurons are placed on workers by\n"
           "the Munkres assignment so strongly connected neurons stay together, then the\n"
           "weakest cross-worker weights are pruned (an l0 criterion) under a budget. The\n"
           "result is priced on a comet system against the naive contiguous split.\n"
           "  WEIGHTS                 .npy, .npz or .safetensors: every 2-D tensor is a\n"
           "                          layer's weight, ordered by the first number in its\n"
           "                          name; NAME.bias (or b<k> for w<k>) is its bias; ReLU\n"
           "                          between layers\n"
           "  --workers N             workers (NPUs 0..N-1 of the system), 1 to %d\n"
           "  --system NAME|FILE      a system preset or YAML file (default %s)\n"
           "  --prune-fraction F      prune at most F of the cross-worker weights, by count\n"
           "                          (0 to 1, or a percentage like 20%%; default 0)\n"
           "  --prune-mass F          ... at most F of their squared mass instead\n"
           "  --max-accuracy-loss A   the largest count budget losing at most A accuracy on\n"
           "                          --data (e.g. 0.01 or 1%%)\n"
           "  --data FILE             labelled data (.npz with x and y) for the accuracy check\n"
           "  --layout out-in|in-out  weight layout (default out-in, PyTorch's)\n"
           "  --batch N               samples per inference batch (default 1)\n"
           "  --dtype NAME            datatype of weights and activations (default bf16)\n"
           "  --no-curve              skip the accuracy/traffic curve over the budget\n"
           "  --json                  JSON (every layer's neuron order) instead of text\n"
           "  -o FILE                 write to FILE atomically instead of stdout\n"
           "  --report FILE.html      an HTML report: block structure, traffic, trade-off\n"
           "  --plots DIR             each chart of the report as SVG + CSV\n"
           "Exit status: 0 ok, 1 a failure mid-way, 2 bad input or an unusable path.\n",
           COMET_PARTITION_MAX_WORKERS, DEFAULT_SYSTEM);
}

/* A share: 0.2 or 20%. */
static comet_status parse_share(const cli_arg *f, const char *value, double *out,
                                comet_error *err)
{
    char *end;
    double v = strtod(value, &end);
    if (end != value && *end == '%' && end[1] == 0) {
        v /= 100;
        end++;
    }
    if (end == value || *end || !(v >= 0 && v <= 1))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "expected a share from 0 to 1 (or 0%% to 100%%), got \"%s\"",
                               value);
    *out = v;
    return COMET_OK;
}

/* --prune-fraction, --prune-mass and --max-accuracy-loss: one of them. */
static comet_status budget_flag(const cli_arg *f, const char *value, void *dest,
                                comet_error *err)
{
    partition_args *a = dest;
    bool loss = strcmp(f->name, "--max-accuracy-loss") == 0;
    comet_status st = parse_share(f, value, loss ? &a->max_loss : &a->budget, err);
    if (st)
        return st;
    if (a->budget_set)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "give one of --prune-fraction, --prune-mass, --max-accuracy-loss");
    a->budget_set = true;
    a->prune = strcmp(f->name, "--prune-mass") == 0 ? COMET_PRUNE_MASS : COMET_PRUNE_COUNT;
    return COMET_OK;
}

static comet_status layout_flag(const cli_arg *f, const char *value, void *dest,
                                comet_error *err)
{
    partition_args *a = dest;
    if (strcmp(value, "out-in") == 0)
        a->layout = COMET_LAYOUT_OUT_IN;
    else if (strcmp(value, "in-out") == 0)
        a->layout = COMET_LAYOUT_IN_OUT;
    else
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "expected out-in or in-out, got \"%s\"", value);
    return COMET_OK;
}

static comet_status dtype_flag(const cli_arg *f, const char *value, void *dest,
                               comet_error *err)
{
    partition_args *a = dest;
    if (comet_dtype_parse(value, &a->dtype))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "unknown datatype \"%s\"", value);
    return COMET_OK;
}

/* Prune at `budget`, price it and (with data) measure its accuracy. */
static comet_status evaluate(const comet_mlp *net, comet_partition *part,
                             const partition_args *a, const comet_system *sys,
                             const comet_labelled *data, double budget,
                             comet_partition_point *pt, comet_partition_price *price,
                             comet_error *err)
{
    comet_status st = comet_partition_prune(net, part, a->prune, budget, err);
    comet_partition_price local;
    if (!price)
        price = &local;
    if (!st)
        st = comet_partition_price_on(part, false, sys, a->dtype, a->batch, price, err);
    pt->budget = budget;
    pt->accuracy = NAN;
    int64_t placed = 0, kept = 0;
    for (int l = 0; l < part->n_layers; l++) {
        placed += part->layers[l].cross_before;
        kept += part->layers[l].cross_after;
    }
    pt->kept_share = placed ? (double)kept / (double)placed : 1;
    pt->bytes = price->bytes;
    pt->latency = price->latency;
    if (!st && data)
        st = comet_mlp_accuracy(&part->pruned, data, &pt->accuracy, err);
    return st;
}

/* The largest count budget whose accuracy loss stays within max_loss:
 * bisection over [0, 1] (the loss assumed to grow with the budget). */
static comet_status budget_for_loss(const comet_mlp *net, comet_partition *part,
                                    const partition_args *a, const comet_system *sys,
                                    const comet_labelled *data, double before, double *budget,
                                    comet_error *err)
{
    double lo = 0, hi = 1;
    comet_partition_point pt;
    comet_status st = evaluate(net, part, a, sys, data, 1, &pt, NULL, err);
    if (st)
        return st;
    if (before - pt.accuracy <= a->max_loss) {
        *budget = 1;
        return COMET_OK;
    }
    for (int step = 0; step < 14 && !st; step++) {
        double mid = (lo + hi) / 2;
        st = evaluate(net, part, a, sys, data, mid, &pt, NULL, err);
        if (!st && before - pt.accuracy <= a->max_loss)
            lo = mid;
        else
            hi = mid;
    }
    *budget = lo;
    return st;
}

static void draw_page(comet_page *page, const void *ctx)
{
    comet_report_page_partition(page, ctx);
}

static int run(const partition_args *a)
{
    comet_error err;
    comet_error_clear(&err);
    comet_system *sys = malloc(sizeof *sys);
    comet_mlp net = {0};
    comet_labelled data = {0};
    comet_partition part;
    memset(&part, 0, sizeof part);
    comet_partition_outcome o;
    memset(&o, 0, sizeof o);
    comet_buf out;
    comet_buf_init(&out);
    comet_status st = sys ? COMET_OK
                          : comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (!st)
        st = cli_load_system(a->system, sys, &err);
    if (!st)
        st = comet_mlp_read(a->io.file, a->layout, &net, &err);
    if (!st && a->data)
        st = comet_labelled_read(a->data, &data, &err);
    comet_partition_request req = {.workers = (int)a->workers, .prune = a->prune, .budget = 0};
    if (!st)
        st = comet_partition_run(&net, &req, &part, &err);
    if (st && err.key[0] && strcmp(err.key, "workers") == 0)
        snprintf(err.key, sizeof err.key, "--workers");
    o.net = &net;
    o.part = &part;
    o.weights_file = a->io.file;
    o.system_name = a->system;
    o.dtype = a->dtype;
    o.batch = a->batch;
    o.prune = a->prune;
    o.budget = a->budget;
    o.max_loss = a->data && a->max_loss >= 0 ? a->max_loss : NAN;
    o.accuracy_before = o.accuracy_after = NAN;
    if (!st && a->data)
        st = comet_mlp_accuracy(&net, &data, &o.accuracy_before, &err);
    if (!st && isfinite(o.max_loss))
        st = budget_for_loss(&net, &part, a, sys, &data, o.accuracy_before, &o.budget, &err);
    if (!st && !a->no_curve) {
        for (int i = 0; i <= 10 && !st; i++)
            st = evaluate(&net, &part, a, sys, a->data ? &data : NULL, i / 10.0,
                          &o.points[o.n_points++], NULL, &err);
        /* the budget applied, when it is not on the grid */
        if (!st && fabs(o.budget * 10 - round(o.budget * 10)) > 1e-9) {
            comet_partition_point pt;
            st = evaluate(&net, &part, a, sys, a->data ? &data : NULL, o.budget, &pt, NULL, &err);
            int k = o.n_points++;
            while (k > 0 && o.points[k - 1].budget > pt.budget) {
                o.points[k] = o.points[k - 1];
                k--;
            }
            o.points[k] = pt;
        }
    }
    comet_partition_point applied = {.accuracy = NAN};
    if (!st)
        st = evaluate(&net, &part, a, sys, a->data ? &data : NULL, o.budget, &applied, &o.price,
                      &err);
    o.accuracy_after = applied.accuracy;
    if (!st)
        st = comet_partition_price_on(&part, true, sys, a->dtype, a->batch, &o.naive, &err);
    if (st && err.key[0] && strcmp(err.key, "budget") == 0)
        snprintf(err.key, sizeof err.key, "--prune-fraction");
    if (!st) {
        if (a->io.json)
            comet_partition_json(&out, &o);
        else
            comet_partition_text(&out, &o);
        st = cli_write_file_outputs(&a->io, &out, "comet partition", draw_page, &o, &err);
    }
    comet_buf_free(&out);
    comet_partition_free(&part);
    comet_labelled_free(&data);
    comet_mlp_free(&net);
    free(sys);
    return st ? cli_report_error("partition", &err) : CLI_OK;
}

int cli_partition(int argc, char **argv)
{
    static const cli_arg flags[] = {
        {.name = "--workers", .kind = CLI_ARG_INT, .offset = offsetof(partition_args, workers),
         .min = 1, .max = COMET_PARTITION_MAX_WORKERS},
        {.name = "--system", .kind = CLI_ARG_TEXT, .offset = offsetof(partition_args, system)},
        {.name = "--prune-fraction", .kind = CLI_ARG_CALL, .value = true, .call = budget_flag},
        {.name = "--prune-mass", .kind = CLI_ARG_CALL, .value = true, .call = budget_flag},
        {.name = "--max-accuracy-loss", .kind = CLI_ARG_CALL, .value = true, .call = budget_flag},
        {.name = "--data", .kind = CLI_ARG_TEXT, .offset = offsetof(partition_args, data)},
        {.name = "--layout", .kind = CLI_ARG_CALL, .value = true, .call = layout_flag},
        {.name = "--batch", .kind = CLI_ARG_INT, .offset = offsetof(partition_args, batch),
         .min = 1, .max = INT64_C(1) << 30},
        {.name = "--dtype", .kind = CLI_ARG_CALL, .value = true, .call = dtype_flag},
        {.name = "--no-curve", .kind = CLI_ARG_SWITCH, .offset = offsetof(partition_args, no_curve)},
        CLI_FILE_FLAGS,
        CLI_ARG_HELP_FLAGS,
    };
    const cli_args_spec spec = {.command = "partition",
                                .flags = flags,
                                .n_flags = (int)(sizeof flags / sizeof flags[0]),
                                .help = CLI_HELP_OPTION,
                                .single = "weights file",
                                .single_offset = offsetof(partition_args, io.file)};
    partition_args a = {.system = DEFAULT_SYSTEM,
                        .batch = 1,
                        .max_loss = -1,
                        .dtype = COMET_DTYPE_BF16,
                        .layout = COMET_LAYOUT_OUT_IN,
                        .prune = COMET_PRUNE_COUNT};
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    if (cli_args_parse(&spec, argc, argv, &a, &wants_help, &err))
        return cli_report_error("partition", &err);
    if (wants_help) {
        help();
        return CLI_OK;
    }
    if (!a.io.file)
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, NULL,
                        "a weights file is needed (see 'comet partition --help')");
    else if (a.workers == 0)
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--workers", "is needed");
    else if (a.max_loss >= 0 && !a.data)
        comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--max-accuracy-loss",
                        "needs labelled data (--data)");
    else
        cli_check_file_outputs(&a.io, &err);
    if (err.status)
        return cli_report_error("partition", &err);
    return run(&a);
}
