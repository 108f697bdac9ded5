/* The command line shared by comet estimate and comet search: input
 * files and presets (read in order), strategy knobs (applied after the
 * inputs, so they win whatever their position), output options and the
 * search's own options. One table of flags here and the library's knob
 * table (comet/knobs.h: each knob's flag, limits and help line) drive both
 * passes, so "takes a value", "unknown option" and which command accepts
 * what are decided in one place. */
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
    FLAG_OUTPUT,    /* output selection */
    FLAG_COMMAND    /* a command's own options (search, simulate) */
} flag_kind;

typedef struct flag_spec {
    const char *name;
    const char *alias;
    flag_kind kind;
    bool value;         /* takes a value */
    const char *key;    /* FLAG_INPUT: the kind of preset */
    int64_t min, max;   /* integer FLAG_COMMAND range */
    unsigned commands;  /* cli_command bits that accept it */
} flag_spec;

#define EST (CMD_ESTIMATE | CMD_SIMULATE | CMD_EXPORT)
#define BOTH (CMD_ESTIMATE | CMD_SEARCH | CMD_SIMULATE | CMD_EXPORT)
#define REPORTS (CMD_ESTIMATE | CMD_SEARCH | CMD_SIMULATE)

static const flag_spec flag_table[] = {
    {"--model", NULL, FLAG_INPUT, true, "models", 0, 0, BOTH},
    {"--system", NULL, FLAG_INPUT, true, "systems", 0, 0, BOTH},
    {"--strategy", NULL, FLAG_INPUT, true, "strategies", 0, 0, BOTH},
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
    {"--npus", NULL, FLAG_COMMAND, true, NULL, 1, COMET_MAX_NPUS, CMD_SEARCH},
    {"--max-gbs", NULL, FLAG_COMMAND, true, NULL, 1, COMET_MAX_BATCH, CMD_SEARCH},
    {"--max-mb", NULL, FLAG_COMMAND, true, NULL, 1, COMET_MAX_BATCH, CMD_SEARCH},
    {"--top", NULL, FLAG_COMMAND, true, NULL, 1, COMET_SEARCH_MAX_TOP, CMD_SEARCH},
    {"-j", "--threads", FLAG_COMMAND, true, NULL, 1, 256, CMD_SEARCH},
    {"--objective", NULL, FLAG_COMMAND, true, NULL, 0, 0, CMD_SEARCH},
    {"--keep-dominated", NULL, FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
    {"--no-flash", NULL, FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
    {"--no-offload", NULL, FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
    {"--quiet", "-q", FLAG_COMMAND, false, NULL, 0, 0, CMD_SEARCH},
};
#define N_FLAGS (sizeof flag_table / sizeof flag_table[0])

/* A flag found on the command line: one of flag_table's, or a knob's. */
typedef struct flag_match {
    const char *name;           /* its usual spelling, which errors name */
    bool value;                 /* takes a value */
    const flag_spec *spec;      /* from flag_table, or NULL */
    const comet_knob *knob;     /* a knob's flag, or NULL */
} flag_match;

static bool same_flag(const char *arg, const char *name, const char *alias)
{
    return (name && strcmp(arg, name) == 0) || (alias && strcmp(arg, alias) == 0);
}

static bool find_knob_flag(const char *arg, cli_command cmd, flag_match *m)
{
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        if (!k->flag || !(cmd & (k->search_flag ? BOTH : EST)))
            continue;
        bool on = same_flag(arg, k->flag, k->flag_alias);
        if (on || same_flag(arg, k->flag_off, NULL)) {
            *m = (flag_match){.name = on ? k->flag : k->flag_off, .knob = k,
                              .value = k->flag_form == COMET_FLAG_VALUE ||
                                       k->flag_form == COMET_FLAG_ON_OFF ||
                                       k->flag_form == COMET_FLAG_PART};
            return true;
        }
    }
    return false;
}

static bool find_flag(const char *arg, cli_command cmd, flag_match *m)
{
    for (size_t i = 0; i < N_FLAGS; i++)
        if ((flag_table[i].commands & cmd) &&
            same_flag(arg, flag_table[i].name, flag_table[i].alias)) {
            *m = (flag_match){.name = flag_table[i].name, .value = flag_table[i].value,
                              .spec = &flag_table[i]};
            return true;
        }
    return find_knob_flag(arg, cmd, m);
}

bool cli_wants_help(int argc, char **argv, cli_command cmd)
{
    for (int i = 1; i < argc; i++) {
        flag_match f;
        if (!find_flag(argv[i], cmd, &f))
            continue;
        if (f.spec && strcmp(f.name, "--help") == 0)
            return true;
        if (f.value)
            i++;
    }
    return false;
}

/* The knob lines of a command's help, from the knob table. */
void cli_print_knob_help(void)
{
    for (int line = 0;; line++) {
        const comet_knob *first = NULL;
        for (int i = 0; i < COMET_KNOB_COUNT && !first; i++) {
            const comet_knob *k = comet_knob_get((comet_knob_id)i);
            if (k->help_line == line && k->help_usage)
                first = k;
        }
        if (!first)
            return;
        if (first->help)
            printf("  %-22s %s\n", first->help_usage, first->help);
        else
            printf("  %s\n", first->help_usage);
    }
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

/* Remember that flag set the strategy key (its first key_len characters),
 * so errors about that key name the flag. */
static void note_flag(cli_inputs *a, const char *key, size_t key_len, const char *flag)
{
    char k[sizeof a->flag_key[0]];
    snprintf(k, sizeof k, "%.*s", (int)key_len, key);
    for (int i = 0; i < a->n_flag_keys; i++)
        if (strcmp(a->flag_key[i], k) == 0) {
            a->flag_name[i] = flag;
            return;
        }
    if (a->n_flag_keys < CLI_MAX_FLAG_KEYS) {
        memcpy(a->flag_key[a->n_flag_keys], k, sizeof k);
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

/* "a, b or c" (or, with last NULL, "a, b, c"): the words a flag takes. */
static void join_words(char *out, size_t cap, const char *const *words, int n, const char *last)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s",
                                i == 0 ? "" : i == n - 1 && last ? last : ", ", words[i]);
}

static comet_status parse_choice(const comet_knob *k, const char *flag, const char *v,
                                 comet_strategy *s, comet_error *err)
{
    const char *names[COMET_KNOB_MAX_VALUES];
    for (int i = 0; i < k->n_values; i++) {
        names[i] = k->value_name(i);
        if (strcmp(v, names[i]) == 0) {
            comet_knob_set_value(k, s, i);
            return COMET_OK;
        }
    }
    char expected[160];
    join_words(expected, sizeof expected, names, k->n_values, " or ");
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag, "expected %s, got \"%s\"",
                           expected, v);
}

/* A list flag (--offload optimizer,weights) shared by the knobs of one key
 * group: each is named in the list by its key's last word. */
static comet_status parse_parts(const char *flag, const char *v, comet_strategy *s,
                                comet_error *err)
{
    const comet_knob *parts[COMET_KNOB_COUNT];
    const char *words[COMET_KNOB_COUNT + 1];
    int n = 0;
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        if (k->flag_form != COMET_FLAG_PART || strcmp(k->flag, flag) != 0)
            continue;
        parts[n] = k;
        words[n++] = strrchr(k->key, '.') + 1;
        comet_knob_set_value(k, s, false);
    }
    if (strcmp(v, "none") == 0)
        return COMET_OK;
    char list[128];
    snprintf(list, sizeof list, "%s", v);
    int listed = 0;
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        listed++;
        int i = 0;
        while (i < n && strcmp(tok, words[i]) != 0)
            i++;
        if (i < n) {
            comet_knob_set_value(parts[i], s, true);
            continue;
        }
        char known[160];
        words[n] = "none";
        join_words(known, sizeof known, words, n + 1, NULL);
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "unknown part \"%s\" (%s)", tok, known);
    }
    if (listed > 0)
        return COMET_OK;
    char known[160];
    join_words(known, sizeof known, words, n, NULL);
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                           "expected none or a list of %s", known);
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
        flag_match m;
        if (!find_flag(arg, cmd, &m))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "unknown option \"%s\" (see 'comet %s --help')", arg,
                                   command_name(cmd));
        const char *val = m.value ? argv[i + 1] : NULL;
        if (m.value && (i + 1 >= argc || !val[0]))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, m.name, "needs a value");
        if (m.value)
            i++;
        const flag_spec *f = m.spec;
        if (!f) {
            any = true;     /* a knob, set in pass 2 */
        } else if (f->kind == FLAG_INPUT) {
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
        }
    }
    if (cmd != CMD_SEARCH && !any && load_input("strategies", DEFAULT_STRATEGY, &a->job, err))
        return err->status;
    if (!a->job.has_model && load_input("models", DEFAULT_MODEL, &a->job, err))
        return err->status;
    if (!a->job.has_system && load_input("systems", DEFAULT_SYSTEM, &a->job, err))
        return err->status;
    return COMET_OK;
}

static comet_status apply_knob(const flag_match *m, const char *val, cli_inputs *a,
                               comet_error *err)
{
    const comet_knob *k = m->knob;
    comet_strategy *s = &a->job.strategy;
    /* a list flag sets its whole key group: errors about the group name it */
    size_t key_len = k->flag_form == COMET_FLAG_PART ? (size_t)(strrchr(k->key, '.') - k->key)
                                                     : strlen(k->key);
    note_flag(a, k->key, key_len, m->name);
    switch (k->flag_form) {
    case COMET_FLAG_SWITCH:
        comet_knob_set_value(k, s, true);
        return COMET_OK;
    case COMET_FLAG_PAIR:
        comet_knob_set_value(k, s, strcmp(m->name, k->flag) == 0);
        return COMET_OK;
    case COMET_FLAG_ON_OFF: {
        bool on = false;
        if (parse_on_off(m->name, val, &on, err))
            return err->status;
        comet_knob_set_value(k, s, on);
        return COMET_OK;
    }
    case COMET_FLAG_PART:
        return parse_parts(k->flag, val, s, err);
    case COMET_FLAG_VALUE:
    case COMET_FLAG_NONE:
        break;
    }
    if (k->type == COMET_KNOB_T_CHOICE)
        return parse_choice(k, m->name, val, s, err);
    if (k->type == COMET_KNOB_T_ORDER)
        return parse_order(val, s, err);
    int64_t v;
    if (cli_parse_int(m->name, val, k->lo, k->hi, &v, err))
        return err->status;
    comet_knob_set_value(k, s, v);
    return COMET_OK;
}

/* Pass 2: strategy knobs, in the order given (the last one wins). */
static comet_status parse_knobs(int argc, char **argv, cli_command cmd, cli_inputs *a,
                                comet_error *err)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-' || argv[i][1] == '\0')
            continue;
        flag_match m;
        find_flag(argv[i], cmd, &m);    /* pass 1 found every flag */
        const char *val = m.value ? argv[++i] : NULL;
        if (m.knob) {
            comet_status st = apply_knob(&m, val, a, err);
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
