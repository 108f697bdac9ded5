/* The command line shared by comet estimate and comet search: input
 * files and presets (read in order), strategy knobs (applied after the
 * inputs, so they win whatever their position), output options and the
 * search's own options. One table of flags drives both passes, so "takes
 * a value", "unknown option" and which command accepts what are decided in
 * one place. */
#define _XOPEN_SOURCE 700
#include "inputs.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define DEFAULT_MODEL "gpt3-175b"
#define DEFAULT_SYSTEM "a100-80g-selene"
#define DEFAULT_STRATEGY "gpt3-175b-selene"

typedef enum flag_kind {
    FLAG_INPUT,     /* --model/--system/--strategy NAME|FILE */
    FLAG_INT,       /* integer strategy knob */
    FLAG_KNOB,      /* other strategy knob */
    FLAG_OUTPUT,    /* output selection */
    FLAG_COMMAND    /* a command's own options (search, simulate) */
} flag_kind;

typedef struct flag_spec {
    const char *name;
    const char *alias;
    flag_kind kind;
    bool value;         /* takes a value */
    const char *key;    /* strategy key it sets, for error messages */
    int64_t min, max;   /* FLAG_INT and integer FLAG_COMMAND range */
    unsigned commands;  /* cli_command bits that accept it */
} flag_spec;

#define EST (CMD_ESTIMATE | CMD_SIMULATE | CMD_EXPORT)
#define BOTH (CMD_ESTIMATE | CMD_SEARCH | CMD_SIMULATE | CMD_EXPORT)
#define REPORTS (CMD_ESTIMATE | CMD_SEARCH | CMD_SIMULATE)

static const flag_spec flag_table[] = {
    {"--model", NULL, FLAG_INPUT, true, "models", 0, 0, BOTH},
    {"--system", NULL, FLAG_INPUT, true, "systems", 0, 0, BOTH},
    {"--strategy", NULL, FLAG_INPUT, true, "strategies", 0, 0, BOTH},
    {"--tp", NULL, FLAG_INT, true, "strategy.tp", 1, 262144, EST},
    {"--pp", NULL, FLAG_INT, true, "strategy.pp", 1, 262144, EST},
    {"--dp", NULL, FLAG_INT, true, "strategy.dp", 1, 262144, EST},
    {"--mb", "--microbatch", FLAG_INT, true, "strategy.microbatch", 1, 2147483648LL, BOTH},
    {"--gbs", "--global-batch", FLAG_INT, true, "strategy.global_batch", 1, 2147483648LL, BOTH},
    {"--interleave", NULL, FLAG_INT, true, "strategy.interleave", 1, 4096, EST},
    {"--zero", NULL, FLAG_INT, true, "strategy.zero", 0, 3, EST},
    {"--sp", NULL, FLAG_KNOB, false, "strategy.sp", 0, 0, EST},
    {"--no-sp", NULL, FLAG_KNOB, false, "strategy.sp", 0, 0, EST},
    {"--recompute", NULL, FLAG_KNOB, true, "strategy.recompute", 0, 0, EST},
    {"--offload", NULL, FLAG_KNOB, true, "strategy.offload", 0, 0, EST},
    {"--overlap-dp", NULL, FLAG_KNOB, true, "strategy.overlap.dp", 0, 0, EST},
    {"--overlap-tp", NULL, FLAG_KNOB, true, "strategy.overlap.tp", 0, 0, EST},
    {"--grad-fp32", NULL, FLAG_KNOB, false, "strategy.grad_fp32", 0, 0, BOTH},
    {"--flash-attention", NULL, FLAG_KNOB, false, "strategy.flash_attention", 0, 0, EST},
    {"--order", NULL, FLAG_KNOB, true, "strategy.order", 0, 0, EST},
    {"--json", NULL, FLAG_OUTPUT, false, NULL, 0, 0, REPORTS},
    {"--csv", NULL, FLAG_OUTPUT, false, NULL, 0, 0, REPORTS},
    {"-o", "--output", FLAG_OUTPUT, true, NULL, 0, 0, REPORTS},
    {"--help", "-h", FLAG_OUTPUT, false, NULL, 0, 0, BOTH},
    {"--report", NULL, FLAG_OUTPUT, true, NULL, 0, 0, REPORTS},
    {"--plots", NULL, FLAG_OUTPUT, true, NULL, 0, 0, REPORTS},
    {"--trace", NULL, FLAG_OUTPUT, true, NULL, 0, 0, CMD_SIMULATE},
    {"--chakra", NULL, FLAG_OUTPUT, true, NULL, 0, 0, CMD_EXPORT},
    {"--congestion", NULL, FLAG_COMMAND, false, NULL, 0, 0, CMD_SIMULATE},
    {"--max-tasks", NULL, FLAG_COMMAND, true, NULL, 1, COMET_SIM_MAX_TASKS_LIMIT, CMD_SIMULATE},
    {"--npus", NULL, FLAG_COMMAND, true, NULL, 1, 262144, CMD_SEARCH},
    {"--max-gbs", NULL, FLAG_COMMAND, true, NULL, 1, 2147483648LL, CMD_SEARCH},
    {"--max-mb", NULL, FLAG_COMMAND, true, NULL, 1, 2147483648LL, CMD_SEARCH},
    {"--top", NULL, FLAG_COMMAND, true, NULL, 1, COMET_SEARCH_MAX_TOP, CMD_SEARCH},
    {"-j", "--threads", FLAG_COMMAND, true, NULL, 1, 256, CMD_SEARCH},
    {"--objective", NULL, FLAG_COMMAND, true, NULL, 0, 0, CMD_SEARCH},
    {"--keep-dominated", NULL, FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
    {"--no-flash", NULL, FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
    {"--no-offload", NULL, FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
    {"--quiet", "-q", FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
};
#define N_FLAGS (sizeof flag_table / sizeof flag_table[0])

static const flag_spec *find_flag(const char *arg, cli_command cmd)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if ((flag_table[i].commands & cmd) &&
            (strcmp(arg, flag_table[i].name) == 0 ||
             (flag_table[i].alias && strcmp(arg, flag_table[i].alias) == 0)))
            return &flag_table[i];
    return NULL;
}

bool cli_wants_help(int argc, char **argv, cli_command cmd)
{
    for (int i = 1; i < argc; i++) {
        const flag_spec *f = find_flag(argv[i], cmd);
        if (f && strcmp(f->name, "--help") == 0)
            return true;
        if (f && f->value)
            i++;
    }
    return false;
}

static bool is_file_arg(const char *arg)
{
    struct stat st;
    return strchr(arg, '/') || strstr(arg, ".yaml") || strstr(arg, ".yml") ||
           strstr(arg, ".json") || stat(arg, &st) == 0;
}

static bool *section_flag(comet_job *job, const char *kind)
{
    return kind[1] == 'o' ? &job->has_model : kind[1] == 'y' ? &job->has_system
                                                             : &job->has_strategy;
}

/* Load NAME or FILE for one kind ("models", "systems", "strategies"); the
 * input must provide that section. */
static comet_status load_input(const char *kind, const char *arg, comet_job *job, comet_error *err)
{
    static const char *const nouns[] = {"model", "system", "strategy"};
    const char *noun = nouns[kind[1] == 'o' ? 0 : kind[1] == 'y' ? 1 : 2];
    bool *has = section_flag(job, kind);
    bool had = *has;
    *has = false;
    comet_status st;
    if (is_file_arg(arg)) {
        st = comet_config_read_file(arg, job, err);
    } else {
        const char *text = comet_preset_text(kind, arg);
        if (!text) {
            char known[512] = "";
            const char *const *names = comet_preset_names(kind);
            for (size_t i = 0; names && names[i]; i++) {
                if (i)
                    strncat(known, ", ", sizeof known - strlen(known) - 1);
                strncat(known, names[i], sizeof known - strlen(known) - 1);
            }
            *has = had;
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "unknown %s preset \"%s\" (known: %s)", noun, arg, known);
        }
        char label[128];
        snprintf(label, sizeof label, "preset %s", arg);
        st = comet_config_read_text(text, strlen(text), label, job, err);
    }
    if (!st && !*has)
        st = comet_error_set(err, COMET_EINPUT, arg, 0, 0, NULL, "has no %s: section", noun);
    if (st)
        *has = had;
    return st;
}

static void note_flag(cli_inputs *a, const char *key, const char *flag)
{
    for (int i = 0; i < a->n_flag_keys; i++)
        if (strcmp(a->flag_key[i], key) == 0) {
            a->flag_name[i] = flag;
            return;
        }
    if (a->n_flag_keys < CLI_MAX_FLAG_KEYS) {
        a->flag_key[a->n_flag_keys] = key;
        a->flag_name[a->n_flag_keys] = flag;
        a->n_flag_keys++;
    }
}

static comet_status parse_on_off(const char *flag, const char *v, bool *out, comet_error *err)
{
    if (strcmp(v, "on") == 0 || strcmp(v, "true") == 0) {
        *out = true;
        return COMET_OK;
    }
    if (strcmp(v, "off") == 0 || strcmp(v, "false") == 0) {
        *out = false;
        return COMET_OK;
    }
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag, "expected on or off, got \"%s\"",
                           v);
}

static comet_status parse_offload(const char *v, comet_strategy *s, comet_error *err)
{
    s->offload_optimizer = s->offload_weights = s->offload_activations = false;
    if (strcmp(v, "none") == 0)
        return COMET_OK;
    char list[128];
    snprintf(list, sizeof list, "%s", v);
    int parts = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        parts++;
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
    if (parts == 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--offload",
                               "expected none or a list of optimizer, weights, activations");
    return COMET_OK;
}

static comet_status parse_order(const char *v, comet_strategy *s, comet_error *err)
{
    char list[64];
    snprintf(list, sizeof list, "%s", v);
    int n = 0, seen = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        comet_group g;
        if (n >= COMET_GROUP_COUNT || comet_group_parse(tok, &g) || (seen & (1 << g)))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--order",
                                   "expected a permutation of tp,dp,pp, got \"%s\"", v);
        seen |= 1 << g;
        s->order[n++] = g;
    }
    if (n != COMET_GROUP_COUNT)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--order",
                               "expected a permutation of tp,dp,pp, got \"%s\"", v);
    s->placement_given = false;
    return COMET_OK;
}

static void set_int(comet_strategy *s, const char *key, int64_t v)
{
    if (strcmp(key, "strategy.tp") == 0)
        s->tp = v;
    else if (strcmp(key, "strategy.pp") == 0)
        s->pp = v;
    else if (strcmp(key, "strategy.dp") == 0)
        s->dp = v;
    else if (strcmp(key, "strategy.microbatch") == 0)
        s->microbatch = v;
    else if (strcmp(key, "strategy.global_batch") == 0)
        s->global_batch = v;
    else if (strcmp(key, "strategy.interleave") == 0)
        s->interleave = v;
    else
        s->zero_stage = (int)v;
}

/* Pass 1: check every argument against the table, read the inputs in
 * order, note the output options. With no input and no knob at all, the
 * default job runs: default model and system with the default strategy. */
static comet_status apply_command_option(const flag_spec *f, const char *val, cli_inputs *a,
                                        comet_error *err)
{
    const char *n = f->name;
    int64_t *target = strcmp(n, "--npus") == 0      ? &a->npus
                    : strcmp(n, "--max-gbs") == 0   ? &a->max_global_batch
                    : strcmp(n, "--max-mb") == 0    ? &a->max_microbatch
                    : strcmp(n, "--top") == 0       ? &a->top
                    : strcmp(n, "-j") == 0          ? &a->threads
                    : strcmp(n, "--max-tasks") == 0 ? &a->max_tasks
                                                    : NULL;
    if (target)
        return cli_parse_int(n, val, f->min, f->max, target, err);
    if (strcmp(n, "--objective") == 0 && comet_objective_parse(val, &a->objective))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, n,
                               "expected time, throughput or cost, got \"%s\"", val);
    if (strcmp(n, "--keep-dominated") == 0)
        a->keep_dominated = true;
    else if (strcmp(n, "--no-flash") == 0)
        a->no_flash = true;
    else if (strcmp(n, "--no-offload") == 0)
        a->no_offload = true;
    else if (strcmp(n, "--quiet") == 0)
        a->quiet = true;
    else if (strcmp(n, "--congestion") == 0)
        a->congestion = true;
    return COMET_OK;
}

static const char *command_name(cli_command cmd)
{
    return cmd == CMD_SEARCH     ? "search"
         : cmd == CMD_SIMULATE ? "simulate"
         : cmd == CMD_EXPORT   ? "export"
                               : "estimate";
}

static comet_status parse_inputs(int argc, char **argv, cli_command cmd, cli_inputs *a,
                                 comet_error *err)
{
    bool any = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0') {
            if (!arg[0])
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                       "an input file name is empty");
            comet_status st = comet_config_read_file(arg, &a->job, err);
            if (st)
                return st;
            any = true;
            continue;
        }
        const flag_spec *f = find_flag(arg, cmd);
        if (!f)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "unknown option \"%s\" (see 'comet %s --help')", arg,
                                   command_name(cmd));
        const char *val = f->value ? argv[i + 1] : NULL;
        if (f->value && (i + 1 >= argc || !val[0]))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name, "needs a value");
        if (f->value)
            i++;
        if (f->kind == FLAG_INPUT) {
            comet_status st = load_input(f->key, val, &a->job, err);
            if (st)
                return st;
        } else if (f->kind == FLAG_OUTPUT) {
            if (strcmp(f->name, "-o") == 0)
                a->output = val;
            else if (strcmp(f->name, "--trace") == 0)
                a->trace = val;
            else if (strcmp(f->name, "--report") == 0)
                a->report = val;
            else if (strcmp(f->name, "--plots") == 0)
                a->plots = val;
            else if (strcmp(f->name, "--chakra") == 0)
                a->chakra = val;
            else if (strcmp(f->name, "--json") == 0 || strcmp(f->name, "--csv") == 0)
                a->format = f->name[2] == 'j' ? OUT_JSON : OUT_CSV;
            continue;
        } else if (f->kind == FLAG_COMMAND) {
            comet_status st = apply_command_option(f, val, a, err);
            if (st)
                return st;
            continue;
        }
        any = true;
    }
    if (cmd != CMD_SEARCH && !any && load_input("strategies", DEFAULT_STRATEGY, &a->job, err))
        return err->status;
    if (!a->job.has_model && load_input("models", DEFAULT_MODEL, &a->job, err))
        return err->status;
    if (!a->job.has_system && load_input("systems", DEFAULT_SYSTEM, &a->job, err))
        return err->status;
    return COMET_OK;
}

static comet_status apply_knob(const flag_spec *f, const char *val, cli_inputs *a,
                               comet_error *err)
{
    comet_strategy *s = &a->job.strategy;
    note_flag(a, f->key, f->name);
    if (f->kind == FLAG_INT) {
        int64_t v;
        if (cli_parse_int(f->name, val, f->min, f->max, &v, err))
            return err->status;
        set_int(s, f->key, v);
        return COMET_OK;
    }
    const char *n = f->name;
    if (strcmp(n, "--sp") == 0 || strcmp(n, "--no-sp") == 0)
        s->sp = n[2] == 's';
    else if (strcmp(n, "--grad-fp32") == 0)
        s->grad_fp32 = true;
    else if (strcmp(n, "--flash-attention") == 0)
        s->flash_attention = true;
    else if (strcmp(n, "--recompute") == 0 && comet_recompute_parse(val, &s->recompute))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, n,
                               "expected none, selective or full, got \"%s\"", val);
    else if (strcmp(n, "--offload") == 0)
        return parse_offload(val, s, err);
    else if (strcmp(n, "--overlap-dp") == 0)
        return parse_on_off(n, val, &s->overlap_dp, err);
    else if (strcmp(n, "--overlap-tp") == 0)
        return parse_on_off(n, val, &s->overlap_tp, err);
    else if (strcmp(n, "--order") == 0)
        return parse_order(val, s, err);
    return COMET_OK;
}

/* Pass 2: strategy knobs, in the order given (the last one wins). */
static comet_status parse_knobs(int argc, char **argv, cli_command cmd, cli_inputs *a,
                                comet_error *err)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-' || argv[i][1] == '\0')
            continue;
        const flag_spec *f = find_flag(argv[i], cmd);
        const char *val = f->value ? argv[++i] : NULL;
        if (f->kind == FLAG_INT || f->kind == FLAG_KNOB) {
            comet_status st = apply_knob(f, val, a, err);
            if (st)
                return st;
        }
    }
    return COMET_OK;
}

comet_status cli_inputs_parse(int argc, char **argv, cli_command cmd, cli_inputs *in,
                              comet_error *err)
{
    comet_job_init(&in->job);
    in->top = 10;
    comet_status st = parse_inputs(argc, argv, cmd, in, err);
    return st ? st : parse_knobs(argc, argv, cmd, in, err);
}

void cli_inputs_locate(const cli_inputs *a, comet_error *err)
{
    for (int i = 0; i < a->n_flag_keys; i++)
        if (strcmp(err->key, a->flag_key[i]) == 0) {
            snprintf(err->key, sizeof err->key, "%s", a->flag_name[i]);
            return;
        }
    comet_srcmap_locate(&a->job.srcmap, err);
}


cli_inputs *cli_inputs_start(int argc, char **argv, cli_command cmd, void (*help)(void),
                             int *code)
{
    static cli_inputs inputs;
    if (help && cli_wants_help(argc, argv, cmd)) {
        help();
        *code = CLI_OK;
        return NULL;
    }
    memset(&inputs, 0, sizeof inputs);
    comet_error err;
    comet_error_clear(&err);
    /* outputs are checked before any work, so a run does not fail at its end */
    if (cli_inputs_parse(argc, argv, cmd, &inputs, &err) ||
        cli_check_output(inputs.output, CLI_OUT_FILE, NULL, &err) ||
        cli_check_output(inputs.trace, CLI_OUT_FILE, NULL, &err) ||
        cli_check_output(inputs.report, CLI_OUT_FILE, NULL, &err) ||
        cli_check_output(inputs.plots, CLI_OUT_DIR, "--plots", &err) ||
        cli_check_output(inputs.chakra, CLI_OUT_PREFIX, "--chakra", &err)) {
        *code = cli_report_error(command_name(cmd), &err);
        return NULL;
    }
    return &inputs;
}
