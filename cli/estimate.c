/* comet estimate: reads a model, a system and a strategy (files, presets
 * and flags, later ones overriding earlier ones), runs the analytical
 * model and prints a table, JSON or CSV. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define DEFAULT_MODEL "gpt3-175b"
#define DEFAULT_SYSTEM "a100-80g-selene"
#define DEFAULT_STRATEGY "gpt3-175b-selene"

typedef enum { OUT_TEXT, OUT_JSON, OUT_CSV } out_format;

typedef struct estimate_args {
    comet_job job;
    out_format format;
    const char *output;
    /* strategy keys set by flags: errors about them name the flag */
    int n_flag_keys;
    const char *flag_key[32];
    const char *flag_name[32];
} estimate_args;

static void help(void)
{
    printf("usage: comet estimate [FILE.yaml|FILE.json ...] [options]\n\n"
           "Inputs (files hold model:, system: and strategy: sections; later inputs win):\n"
           "  --model NAME|FILE      model preset or file (default " DEFAULT_MODEL ")\n"
           "  --system NAME|FILE     system preset or file (default " DEFAULT_SYSTEM ")\n"
           "  --strategy NAME|FILE   strategy preset or file (default: " DEFAULT_STRATEGY
           " when no input\n"
           "                         and no knob is given, else tp=pp=dp=1, batch 1)\n"
           "Strategy knobs:\n"
           "  --tp N --pp N --dp N   tensor, pipeline, data parallel sizes\n"
           "  --mb N, --gbs N        microbatch and global batch (samples)\n"
           "  --interleave N         virtual pipeline stages per rank\n"
           "  --sp | --no-sp         sequence parallelism\n"
           "  --recompute none|selective|full\n"
           "  --zero 0|1|2|3         ZeRO stage\n"
           "  --offload LIST         none, or any of optimizer,weights,activations\n"
           "  --overlap-dp on|off    overlap DP gradient communication with backward\n"
           "  --overlap-tp on|off    overlap TP communication with compute\n"
           "  --grad-fp32            keep 4-byte gradients\n"
           "  --flash-attention      fused attention (no score matrix in memory)\n"
           "  --order LIST           auto placement order, innermost first (default tp,dp,pp)\n"
           "Output:\n"
           "  --json | --csv         machine-readable output (default: a table)\n"
           "  -o FILE                write to FILE atomically instead of stdout\n"
           "Exit status: 0 ok, 1 I/O failure, 2 bad input.\n");
}

static bool is_file_arg(const char *arg)
{
    struct stat st;
    return strchr(arg, '/') || strstr(arg, ".yaml") || strstr(arg, ".yml") ||
           strstr(arg, ".json") || stat(arg, &st) == 0;
}

/* Load NAME or FILE for one section kind ("models", "systems", "strategies"). */
static comet_status load_input(const char *kind, const char *arg, comet_job *job, comet_error *err)
{
    if (is_file_arg(arg))
        return comet_config_read_file(arg, job, err);
    const char *text = comet_preset_text(kind, arg);
    if (!text) {
        char known[512] = "";
        const char *const *names = comet_preset_names(kind);
        for (size_t i = 0; names && names[i]; i++) {
            if (i)
                strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, names[i], sizeof known - strlen(known) - 1);
        }
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "unknown %.*s preset \"%s\" (known: %s)", (int)strlen(kind) - 1,
                               kind, arg, known);
    }
    char label[128];
    snprintf(label, sizeof label, "preset %s", arg);
    return comet_config_read_text(text, strlen(text), label, job, err);
}

static void note_flag(estimate_args *a, const char *key, const char *flag)
{
    if (a->n_flag_keys < 32) {
        a->flag_key[a->n_flag_keys] = key;
        a->flag_name[a->n_flag_keys] = flag;
        a->n_flag_keys++;
    }
}

static comet_status parse_on_off(const char *flag, const char *v, bool *out, comet_error *err)
{
    if (v && (strcmp(v, "on") == 0 || strcmp(v, "true") == 0)) {
        *out = true;
        return COMET_OK;
    }
    if (v && (strcmp(v, "off") == 0 || strcmp(v, "false") == 0)) {
        *out = false;
        return COMET_OK;
    }
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag, "expected on or off, got \"%s\"",
                           v ? v : "");
}

static comet_status parse_offload(const char *v, comet_strategy *s, comet_error *err)
{
    s->offload_optimizer = s->offload_weights = s->offload_activations = false;
    if (!v)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--offload", "needs a value");
    if (strcmp(v, "none") == 0)
        return COMET_OK;
    char list[128];
    snprintf(list, sizeof list, "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "optimizer") == 0)
            s->offload_optimizer = true;
        else if (strcmp(tok, "weights") == 0)
            s->offload_weights = true;
        else if (strcmp(tok, "activations") == 0)
            s->offload_activations = true;
        else
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--offload",
                                   "unknown part \"%s\" (optimizer, weights, activations, none)",
                                   tok);
    }
    return COMET_OK;
}

static comet_status parse_order(const char *v, comet_strategy *s, comet_error *err)
{
    char list[64];
    snprintf(list, sizeof list, "%s", v ? v : "");
    int n = 0, seen = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        comet_group g;
        if (n >= COMET_GROUP_COUNT || comet_group_parse(tok, &g) || (seen & (1 << g)))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--order",
                                   "expected a permutation of tp,dp,pp, got \"%s\"", v ? v : "");
        seen |= 1 << g;
        s->order[n++] = g;
    }
    if (n != COMET_GROUP_COUNT)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--order",
                               "expected a permutation of tp,dp,pp, got \"%s\"", v ? v : "");
    s->placement_given = false;
    return COMET_OK;
}

typedef struct int_flag {
    const char *flag;
    const char *alias;
    const char *key;
    int64_t min, max;
} int_flag;

static const int_flag int_flags[] = {
    {"--tp", NULL, "strategy.tp", 1, 262144},
    {"--pp", NULL, "strategy.pp", 1, 262144},
    {"--dp", NULL, "strategy.dp", 1, 262144},
    {"--mb", "--microbatch", "strategy.microbatch", 1, 2147483648LL},
    {"--gbs", "--global-batch", "strategy.global_batch", 1, 2147483648LL},
    {"--interleave", NULL, "strategy.interleave", 1, 4096},
    {"--zero", NULL, "strategy.zero", 0, 3},
};

static void set_int(comet_strategy *s, size_t which, int64_t v)
{
    switch (which) {
    case 0: s->tp = v; break;
    case 1: s->pp = v; break;
    case 2: s->dp = v; break;
    case 3: s->microbatch = v; break;
    case 4: s->global_batch = v; break;
    case 5: s->interleave = v; break;
    default: s->zero_stage = (int)v; break;
    }
}

/* Inputs first (so flags override them whatever their order), then knobs.
 * With no input and no knob at all, the default job runs: the default
 * model and system with the default strategy preset. */
static comet_status parse_inputs(int argc, char **argv, estimate_args *a, comet_error *err)
{
    bool any = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *kind = strcmp(arg, "--model") == 0      ? "models"
                         : strcmp(arg, "--system") == 0     ? "systems"
                         : strcmp(arg, "--strategy") == 0   ? "strategies"
                                                            : NULL;
        comet_status st = COMET_OK;
        if (kind) {
            if (i + 1 >= argc)
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, arg, "needs a value");
            st = load_input(kind, argv[++i], &a->job, err);
            any = true;
        } else if (arg[0] != '-') {
            st = comet_config_read_file(arg, &a->job, err);
            any = true;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0 ||
                   (strncmp(arg, "--", 2) == 0 && strcmp(arg, "--sp") && strcmp(arg, "--no-sp") &&
                    strcmp(arg, "--json") && strcmp(arg, "--csv") && strcmp(arg, "--grad-fp32") &&
                    strcmp(arg, "--flash-attention") &&
                    strcmp(arg, "--help"))) {
            i++; /* a knob with a value: handled in parse_knobs */
            any = any || (strcmp(arg, "-o") && strcmp(arg, "--output"));
        } else if (strcmp(arg, "--sp") == 0 || strcmp(arg, "--no-sp") == 0 ||
                   strcmp(arg, "--grad-fp32") == 0 || strcmp(arg, "--flash-attention") == 0) {
            any = true;
        }
        if (st)
            return st;
    }
    if (!any) {
        comet_status st = load_input("strategies", DEFAULT_STRATEGY, &a->job, err);
        if (st)
            return st;
    }
    if (!a->job.has_model && load_input("models", DEFAULT_MODEL, &a->job, err))
        return err->status;
    if (!a->job.has_system && load_input("systems", DEFAULT_SYSTEM, &a->job, err))
        return err->status;
    return COMET_OK;
}

static comet_status parse_knob(int argc, char **argv, int *i, estimate_args *a, comet_error *err)
{
    const char *arg = argv[*i];
    const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    comet_strategy *s = &a->job.strategy;
    for (size_t k = 0; k < sizeof int_flags / sizeof int_flags[0]; k++) {
        const int_flag *f = &int_flags[k];
        if (strcmp(arg, f->flag) && !(f->alias && strcmp(arg, f->alias) == 0))
            continue;
        int64_t v;
        if (cli_parse_int(f->flag, val, f->min, f->max, &v, err))
            return err->status;
        set_int(s, k, v);
        note_flag(a, f->key, f->flag);
        (*i)++;
        return COMET_OK;
    }
    if (strcmp(arg, "--sp") == 0 || strcmp(arg, "--no-sp") == 0) {
        s->sp = arg[2] == 's';
        note_flag(a, "strategy.sp", arg);
        return COMET_OK;
    }
    if (strcmp(arg, "--grad-fp32") == 0) {
        s->grad_fp32 = true;
        return COMET_OK;
    }
    if (strcmp(arg, "--flash-attention") == 0) {
        s->flash_attention = true;
        return COMET_OK;
    }
    if (strcmp(arg, "--json") == 0 || strcmp(arg, "--csv") == 0) {
        a->format = arg[2] == 'j' ? OUT_JSON : OUT_CSV;
        return COMET_OK;
    }
    if (!val)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, arg, "needs a value");
    (*i)++;
    if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
        a->output = val;
        return COMET_OK;
    }
    if (strcmp(arg, "--recompute") == 0) {
        note_flag(a, "strategy.recompute", arg);
        if (comet_recompute_parse(val, &s->recompute))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, arg,
                                   "expected none, selective or full, got \"%s\"", val);
        return COMET_OK;
    }
    if (strcmp(arg, "--offload") == 0) {
        note_flag(a, "strategy.offload", arg);
        return parse_offload(val, s, err);
    }
    if (strcmp(arg, "--overlap-dp") == 0)
        return parse_on_off(arg, val, &s->overlap_dp, err);
    if (strcmp(arg, "--overlap-tp") == 0)
        return parse_on_off(arg, val, &s->overlap_tp, err);
    if (strcmp(arg, "--order") == 0) {
        note_flag(a, "strategy.order", arg);
        return parse_order(val, s, err);
    }
    if (strcmp(arg, "--model") == 0 || strcmp(arg, "--system") == 0 ||
        strcmp(arg, "--strategy") == 0)
        return COMET_OK;
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                           "unknown option \"%s\" (see 'comet estimate --help')", arg);
}

static comet_status parse_knobs(int argc, char **argv, estimate_args *a, comet_error *err)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-')
            continue;
        comet_status st = parse_knob(argc, argv, &i, a, err);
        if (st)
            return st;
    }
    return COMET_OK;
}

/* Point an error about a strategy key at the flag or the file that set it. */
static void locate(const estimate_args *a, comet_error *err)
{
    for (int i = a->n_flag_keys - 1; i >= 0; i--)
        if (strcmp(err->key, a->flag_key[i]) == 0) {
            snprintf(err->key, sizeof err->key, "%s", a->flag_name[i]);
            return;
        }
    comet_srcmap_locate(&a->job.srcmap, err);
}

static void render(const estimate_args *a, const comet_result *r, comet_buf *out)
{
    const comet_job *j = &a->job;
    if (a->format == OUT_JSON) {
        comet_report_json(out, &j->model, &j->system, &j->strategy, r);
    } else if (a->format == OUT_CSV) {
        comet_report_csv_header(out);
        comet_report_csv_row(out, &j->model, &j->system, &j->strategy, r);
    } else {
        comet_report_text(out, &j->model, &j->system, &j->strategy, r);
    }
}

int cli_estimate(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help();
            return CLI_OK;
        }
    static estimate_args a; /* large (srcmap); one per process */
    memset(&a, 0, sizeof a);
    comet_job_init(&a.job);
    comet_error err;
    comet_error_clear(&err);
    if (parse_inputs(argc, argv, &a, &err) || parse_knobs(argc, argv, &a, &err))
        return cli_report_error("estimate", &err);

    comet_result r;
    if (comet_estimate(&a.job.model, &a.job.system, &a.job.strategy, &r, &err)) {
        locate(&a, &err);
        return cli_report_error("estimate", &err);
    }
    comet_buf out;
    comet_buf_init(&out);
    render(&a, &r, &out);
    comet_status st = out.failed ? comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                                   "out of memory rendering the report")
                                 : cli_write_output(a.output, out.data, out.len, &err);
    comet_buf_free(&out);
    return st ? cli_report_error("estimate", &err) : CLI_OK;
}
