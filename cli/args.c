/* The one flag parser of the command line. Each command declares its flags
 * in a table (cli_arg: spellings, whether a value follows, where the value
 * goes or which function takes it) and cli_args_parse walks argv against
 * it, so "unknown option", "needs a value", integer and quantity values
 * and --help are worded and decided here and nowhere else. What differed
 * between commands before there was one parser (when --help counts, the
 * hint after "unknown option") is a field of the command's spec, so no
 * command's messages changed. */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool spelled(const cli_arg *f, const char *arg)
{
    return strcmp(arg, f->name) == 0 || (f->alias && strcmp(arg, f->alias) == 0);
}

static const cli_arg *find(const cli_args_spec *spec, const char *arg)
{
    for (int i = 0; i < spec->n_flags; i++)
        if (spelled(&spec->flags[i], arg))
            return &spec->flags[i];
    return NULL;
}

static bool takes_value(const cli_arg *f)
{
    return f->kind == CLI_ARG_TEXT || f->kind == CLI_ARG_INT || f->kind == CLI_ARG_QUANTITY ||
           (f->kind == CLI_ARG_CALL && f->value);
}

/* "-" and "" are not flags: a file named "-" (stdout) or an empty name. */
static bool is_flag(const char *arg)
{
    return arg[0] == '-' && arg[1] != '\0';
}

bool cli_args_present(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return true;
    return false;
}

bool cli_args_wants_help(const cli_args_spec *spec, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const cli_arg *f = find(spec, argv[i]);
        switch (spec->help) {
        case CLI_HELP_OPTION:
            if (f && f->kind == CLI_ARG_HELP)
                return true;
            if (f && takes_value(f))
                i++;
            break;
        case CLI_HELP_ANYWHERE:
            if (f && f->kind == CLI_ARG_HELP)
                return true;
            break;
        case CLI_HELP_ALONE:
            return argc == 2 && f && f->kind == CLI_ARG_HELP;
        case CLI_HELP_IN_ORDER:
            return false;
        }
    }
    return false;
}

static comet_status unknown(const cli_args_spec *spec, const char *arg, comet_error *err)
{
    char hint[128];
    if (spec->unknown_hint)
        snprintf(hint, sizeof hint, "%s", spec->unknown_hint);
    else
        snprintf(hint, sizeof hint, "see 'comet %s --help'", spec->command);
    const char *context = spec->unknown_context;
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "unknown option \"%s\"%s%s (%s)",
                           arg, context ? " " : "", context ? context : "", hint);
}

/* One flag's action with its value (NULL when it takes none). */
static comet_status act(const cli_arg *f, const char *value, void *dest, comet_error *err)
{
    char *at = (char *)dest + f->offset;
    switch (f->kind) {
    case CLI_ARG_SWITCH:
        *(bool *)at = true;
        return COMET_OK;
    case CLI_ARG_TEXT:
        *(const char **)at = value;
        return COMET_OK;
    case CLI_ARG_INT:
        return cli_parse_int(f->name, value, f->min, f->max, (int64_t *)at, err);
    case CLI_ARG_QUANTITY:
        return comet_parse_quantity(value, f->unit, f->name, (double *)at, err);
    case CLI_ARG_CALL:
        return f->call(f, value, dest, err);
    case CLI_ARG_HELP:
        break;
    }
    return COMET_OK;
}

static comet_status positional(const cli_args_spec *spec, const char *arg, void *dest,
                               comet_error *err)
{
    if (spec->positional)
        return spec->positional(arg, dest, err);
    const char **at = (const char **)((char *)dest + spec->single_offset);
    if (*at)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "one %s at a time (got \"%s\" and \"%s\")", spec->single, *at,
                               arg);
    *at = arg;
    return COMET_OK;
}

comet_status cli_args_parse(const cli_args_spec *spec, int argc, char **argv, void *dest,
                            bool *help, comet_error *err)
{
    *help = cli_args_wants_help(spec, argc, argv);
    if (*help)
        return COMET_OK;
    int positionals = 0, lates = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const cli_arg *f = find(spec, arg);
        bool last = i + 1 >= argc || !argv[i + 1][0];
        if (f && f->kind == CLI_ARG_HELP && spec->help != CLI_HELP_ALONE) {
            *help = true; /* only CLI_HELP_IN_ORDER gets here: the others looked first */
            return COMET_OK;
        }
        if (!f || f->kind == CLI_ARG_HELP) { /* the help of CLI_HELP_ALONE: unknown here */
            if (!is_flag(arg) && (spec->positional || spec->single)) {
                comet_status st = positional(spec, arg, dest, err);
                if (st)
                    return st;
                positionals++;
                continue;
            }
            if (spec->trailing_unknown_needs_value && last)
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, arg,
                                       arg[0] == '-' ? "needs a value" : "is not an option");
            return unknown(spec, arg, err);
        }
        const char *value = NULL;
        if (takes_value(f)) {
            if (last)
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name, "needs a value");
            value = argv[++i];
        }
        if (f->late) {
            lates++;
            continue;
        }
        comet_status st = act(f, value, dest, err);
        if (st)
            return st;
    }
    if (spec->between) {
        comet_status st = spec->between(dest, positionals, lates, err);
        if (st)
            return st;
    }
    for (int i = 1; lates > 0 && i < argc; i++) {
        const cli_arg *f = is_flag(argv[i]) ? find(spec, argv[i]) : NULL;
        if (!f)
            continue; /* a positional: the first pass read it */
        const char *value = takes_value(f) ? argv[++i] : NULL;
        if (f->late) {
            comet_status st = act(f, value, dest, err);
            if (st)
                return st;
        }
    }
    return COMET_OK;
}

comet_status cli_parse_int(const char *flag, const char *text, int64_t min, int64_t max,
                           int64_t *out, comet_error *err)
{
    char *end = NULL;
    errno = 0;
    /* digits with an optional minus sign, nothing else (no spaces, no '+') */
    bool plain = text && (isdigit((unsigned char)text[0]) ||
                          (text[0] == '-' && isdigit((unsigned char)text[1])));
    long long v = plain ? strtoll(text, &end, 10) : 0;
    if (!plain || *end || errno == ERANGE)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "expected an integer, got \"%s\"", text ? text : "");
    if (v < min || v > max)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "%lld is out of range [%lld, %lld]", v, (long long)min,
                               (long long)max);
    *out = (int64_t)v;
    return COMET_OK;
}
