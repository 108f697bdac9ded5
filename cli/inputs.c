/* The command line shared by comet estimate, search, export and the step
 * form of simulate: input files and presets (read in order), strategy
 * knobs (applied after the inputs, so they win whatever their position),
 * output options and each command's own options. The flags here and the
 * library's knob table (comet/knobs.h: each knob's flag, limits and help
 * line) make one table per command, walked by the CLI's one flag parser
 * (args.c), so which command accepts what is decided here and "takes a
 * value" and "unknown option" there. */
#define _XOPEN_SOURCE 700
#include "inputs.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "comet/api.h"


/* A flag of the job commands and the commands that accept it. */
typedef struct input_flag {
    cli_arg arg;
    unsigned commands;  /* cli_command bits */
} input_flag;

#define EST (CMD_ESTIMATE | CMD_SIMULATE | CMD_EXPORT)
#define BOTH (CMD_ESTIMATE | CMD_SEARCH | CMD_SIMULATE | CMD_EXPORT)
#define REPORTS (CMD_ESTIMATE | CMD_SEARCH | CMD_SIMULATE)
#define AT(field) .offset = offsetof(cli_inputs, field)

static comet_status load_flag(const cli_arg *f, const char *value, void *dest,
                                    comet_error *err);
static comet_status format_flag(const cli_arg *f, const char *value, void *dest,
                                comet_error *err);
static comet_status objective_flag(const cli_arg *f, const char *value, void *dest,
                                   comet_error *err);
static comet_status knob_flag(const cli_arg *f, const char *value, void *dest, comet_error *err);

static const input_flag flag_table[] = {
    {{.name = "--model", .kind = CLI_ARG_CALL, .value = true, .call = load_flag,
      .ctx = "models"}, BOTH},
    {{.name = "--system", .kind = CLI_ARG_CALL, .value = true, .call = load_flag,
      .ctx = "systems"}, BOTH},
    {{.name = "--strategy", .kind = CLI_ARG_CALL, .value = true, .call = load_flag,
      .ctx = "strategies"}, BOTH},
    {{.name = "--json", .kind = CLI_ARG_CALL, .call = format_flag}, REPORTS},
    {{.name = "--csv", .kind = CLI_ARG_CALL, .call = format_flag}, REPORTS},
    {{.name = "-o", .alias = "--output", .kind = CLI_ARG_TEXT, AT(output)}, REPORTS},
    {CLI_ARG_HELP_FLAGS, BOTH},
    {{.name = "--report", .kind = CLI_ARG_TEXT, AT(report)}, REPORTS},
    {{.name = "--plots", .kind = CLI_ARG_TEXT, AT(plots)}, REPORTS},
    {{.name = "--trace", .kind = CLI_ARG_TEXT, AT(trace)}, CMD_SIMULATE},
    {{.name = "--chakra", .kind = CLI_ARG_TEXT, AT(chakra)}, CMD_EXPORT},
    {{.name = "--congestion", .kind = CLI_ARG_SWITCH, AT(congestion)}, CMD_SIMULATE},
    {{.name = "--flows", .kind = CLI_ARG_SWITCH, AT(flows)}, CMD_SIMULATE},
    {{.name = "--no-flows", .kind = CLI_ARG_SWITCH, AT(no_flows)}, CMD_SIMULATE},
    {{.name = "--scheduler", .kind = CLI_ARG_TEXT, AT(scheduler)}, CMD_SIMULATE},
    {{.name = "--max-tasks", .kind = CLI_ARG_INT, AT(max_tasks), .min = 1,
      .max = COMET_SIM_MAX_TASKS_LIMIT}, CMD_SIMULATE},
    {{.name = "--npus", .kind = CLI_ARG_INT, AT(npus), .min = 1, .max = COMET_MAX_NPUS},
     CMD_SEARCH},
    {{.name = "--max-gbs", .kind = CLI_ARG_INT, AT(max_global_batch), .min = 1,
      .max = COMET_MAX_BATCH}, CMD_SEARCH},
    {{.name = "--max-mb", .kind = CLI_ARG_INT, AT(max_microbatch), .min = 1,
      .max = COMET_MAX_BATCH}, CMD_SEARCH},
    {{.name = "--max-cp", .kind = CLI_ARG_INT, AT(max_cp), .min = 1, .max = COMET_MAX_NPUS},
     CMD_SEARCH},
    {{.name = "--top", .kind = CLI_ARG_INT, AT(top), .min = 1, .max = COMET_SEARCH_MAX_TOP},
     CMD_SEARCH},
    {{.name = "-j", .alias = "--threads", .kind = CLI_ARG_INT, AT(threads), .min = 1,
      .max = 256}, CMD_SEARCH},
    {{.name = "--objective", .kind = CLI_ARG_CALL, .value = true, .call = objective_flag},
     CMD_SEARCH},
    {{.name = "--keep-dominated", .kind = CLI_ARG_SWITCH, AT(keep_dominated)}, CMD_SEARCH},
    {{.name = "--no-flash", .kind = CLI_ARG_SWITCH, AT(no_flash)}, CMD_SEARCH},
    {{.name = "--no-offload", .kind = CLI_ARG_SWITCH, AT(no_offload)}, CMD_SEARCH},
    {{.name = "--quiet", .alias = "-q", .kind = CLI_ARG_SWITCH, AT(quiet)}, CMD_SEARCH},
};
#define N_FLAGS (sizeof flag_table / sizeof flag_table[0])

/* Room for the command's flags: flag_table's and each knob's on and off. */
#define MAX_FLAGS (N_FLAGS + 2 * COMET_KNOB_COUNT)

/* The flags cmd accepts: flag_table's, then the knobs' from the knob table
 * (comet/knobs.h), which act late: after the inputs, so they win whatever
 * their position. Returns how many. */
static int command_flags(cli_command cmd, cli_arg out[MAX_FLAGS])
{
    int n = 0;
    for (size_t i = 0; i < N_FLAGS; i++)
        if (flag_table[i].commands & cmd)
            out[n++] = flag_table[i].arg;
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        if (!k->flag || !(cmd & (k->search_flag ? BOTH : EST)))
            continue;
        bool value = k->flag_form == COMET_FLAG_VALUE || k->flag_form == COMET_FLAG_ON_OFF ||
                     k->flag_form == COMET_FLAG_PART;
        out[n++] = (cli_arg){.name = k->flag, .alias = k->flag_alias, .kind = CLI_ARG_CALL,
                             .value = value, .late = true, .call = knob_flag, .ctx = k};
        if (k->flag_off)
            out[n++] = (cli_arg){.name = k->flag_off, .kind = CLI_ARG_CALL, .value = value,
                                 .late = true, .call = knob_flag, .ctx = k};
    }
    return n;
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

static bool *section_flag(comet_job *job, const char *kind)
{
    return kind[1] == 'o' ? &job->has_model : kind[1] == 'y' ? &job->has_system
                                                             : &job->has_strategy;
}

/* Load NAME or FILE for one kind ("models", "systems", "strategies"); the
 * input must provide that section. A preset is read by the library
 * (comet_job_read_preset), as the Python package reads one. */
static comet_status load_input(const char *kind, const char *arg, comet_job *job, comet_error *err)
{
    if (!cli_is_file_arg(arg))
        return comet_job_read_preset(job, kind, arg, err);
    static const char *const nouns[] = {"model", "system", "strategy"};
    const char *noun = nouns[kind[1] == 'o' ? 0 : kind[1] == 'y' ? 1 : 2];
    bool *has = section_flag(job, kind);
    bool had = *has;
    *has = false;
    comet_status st = comet_config_read_file(arg, job, err);
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
    comet_group given[COMET_GROUP_COUNT];
    const int needed = (1 << COMET_GROUP_TP) | (1 << COMET_GROUP_PP) | (1 << COMET_GROUP_DP);
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        comet_group g;
        if (n >= COMET_GROUP_COUNT || comet_group_parse(tok, &g) || (seen & (1 << g)))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--order",
                                   "expected a permutation of tp,dp,pp (cp and ep optional), "
                                   "got \"%s\"", v);
        seen |= 1 << g;
        given[n++] = g;
    }
    if ((seen & needed) != needed)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--order",
                               "expected a permutation of tp,dp,pp (cp and ep optional), got \"%s\"",
                               v);
    comet_strategy_order_complete(given, n, s->order);
    s->placement_given = false;
    return COMET_OK;
}

static comet_status load_flag(const cli_arg *f, const char *value, void *dest,
                                    comet_error *err)
{
    return load_input(f->ctx, value, &((cli_inputs *)dest)->job, err);
}

static comet_status format_flag(const cli_arg *f, const char *value, void *dest,
                                comet_error *err)
{
    (void)value, (void)err;
    ((cli_inputs *)dest)->format = f->name[2] == 'j' ? OUT_JSON : OUT_CSV;
    return COMET_OK;
}

static comet_status objective_flag(const cli_arg *f, const char *value, void *dest,
                                   comet_error *err)
{
    if (comet_objective_parse(value, &((cli_inputs *)dest)->objective))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "expected time, throughput or cost, got \"%s\"", value);
    return COMET_OK;
}

/* An input file, read where it stands among the inputs. */
static comet_status input_file(const char *arg, void *dest, comet_error *err)
{
    if (!arg[0])
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "an input file name is empty");
    return comet_config_read_file(arg, &((cli_inputs *)dest)->job, err);
}

/* After the inputs, before the knobs: with no input file, no knob and no
 * --strategy at all, the default job runs (default model and system with
 * the default strategy); a missing model or system is the default one. */
static comet_status default_inputs(void *dest, int files, int knobs, comet_error *err)
{
    cli_inputs *a = dest;
    return comet_job_defaults(&a->job, a->command != CMD_SEARCH && files + knobs == 0, err);
}

static const char *command_name(cli_command cmd)
{
    return cmd == CMD_SEARCH     ? "search"
         : cmd == CMD_SIMULATE ? "simulate"
         : cmd == CMD_EXPORT   ? "export"
                               : "estimate";
}

/* A strategy knob's flag, in the order given (the last one wins). */
static comet_status knob_flag(const cli_arg *f, const char *val, void *dest, comet_error *err)
{
    const comet_knob *k = f->ctx;
    cli_inputs *a = dest;
    comet_strategy *s = &a->job.strategy;
    /* a list flag sets its whole key group: errors about the group name it */
    size_t key_len = k->flag_form == COMET_FLAG_PART ? (size_t)(strrchr(k->key, '.') - k->key)
                                                     : strlen(k->key);
    note_flag(a, k->key, key_len, f->name);
    switch (k->flag_form) {
    case COMET_FLAG_SWITCH:
        comet_knob_set_value(k, s, true);
        return COMET_OK;
    case COMET_FLAG_PAIR:
        comet_knob_set_value(k, s, strcmp(f->name, k->flag) == 0);
        return COMET_OK;
    case COMET_FLAG_ON_OFF: {
        bool on = false;
        if (parse_on_off(f->name, val, &on, err))
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
        return parse_choice(k, f->name, val, s, err);
    if (k->type == COMET_KNOB_T_ORDER)
        return parse_order(val, s, err);
    int64_t v;
    if (cli_parse_int(f->name, val, k->lo, k->hi, &v, err))
        return err->status;
    comet_knob_set_value(k, s, v);
    return COMET_OK;
}

comet_status cli_inputs_parse(int argc, char **argv, cli_command cmd, cli_inputs *in,
                              bool *help, comet_error *err)
{
    comet_job_init(&in->job);
    in->command = cmd;
    in->top = 10;
    cli_arg flags[MAX_FLAGS];
    const cli_args_spec spec = {.command = command_name(cmd),
                                .flags = flags,
                                .n_flags = command_flags(cmd, flags),
                                .help = CLI_HELP_OPTION,
                                .positional = input_file,
                                .between = default_inputs};
    return cli_args_parse(&spec, argc, argv, in, help, err);
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
    memset(&inputs, 0, sizeof inputs);
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    /* outputs are checked before any work, so a run does not fail at its end */
    if (cli_inputs_parse(argc, argv, cmd, &inputs, &wants_help, &err) ||
        (!wants_help &&
         (cli_check_output(inputs.output, CLI_OUT_FILE, NULL, &err) ||
          cli_check_output(inputs.trace, CLI_OUT_FILE, NULL, &err) ||
          cli_check_output(inputs.report, CLI_OUT_FILE, NULL, &err) ||
          cli_check_output(inputs.plots, CLI_OUT_DIR, "--plots", &err) ||
          cli_check_output(inputs.chakra, CLI_OUT_PREFIX, "--chakra", &err)))) {
        *code = cli_report_error(command_name(cmd), &err);
        return NULL;
    }
    if (wants_help) {
        if (help)
            help();
        *code = CLI_OK;
        return NULL;
    }
    return &inputs;
}
