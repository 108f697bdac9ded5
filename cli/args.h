/* Flag parsing for every command: a command declares its flags in a const
 * table and cli_args_parse walks argv against it, the one place that says
 * "unknown option", "needs a value", parses integer and quantity values
 * and answers --help. */
#ifndef COMET_CLI_ARGS_H
#define COMET_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/comet.h"

typedef struct cli_arg cli_arg;

/* A flag's own action: value is NULL for a flag that takes none; dest is
 * the command's argument struct handed to cli_args_parse. */
typedef comet_status (*cli_arg_call)(const cli_arg *flag, const char *value, void *dest,
                                     comet_error *err);

typedef enum cli_arg_kind {
    CLI_ARG_SWITCH,   /* no value: the bool at offset becomes true */
    CLI_ARG_TEXT,     /* the value as given: a const char * at offset */
    CLI_ARG_INT,      /* an integer in [min, max]: an int64_t at offset */
    CLI_ARG_QUANTITY, /* a quantity with its unit ("1 GiB"): a double at offset, in SI */
    CLI_ARG_CALL,     /* call(), with a value when `value` is set */
    CLI_ARG_HELP      /* --help: see cli_help_rule */
} cli_arg_kind;

struct cli_arg {
    const char *name;       /* its usual spelling, which errors name */
    const char *alias;      /* another spelling, or NULL */
    cli_arg_kind kind;
    bool value;             /* CLI_ARG_CALL: takes a value (the other kinds know) */
    bool late;              /* acts in a second pass, after every other argument acted */
    size_t offset;          /* SWITCH, TEXT, INT, QUANTITY: where in dest */
    int64_t min, max;       /* INT: the range */
    comet_unit_kind unit;   /* QUANTITY */
    cli_arg_call call;      /* CALL */
    const void *ctx;        /* CALL: what call() needs to know (a knob, a preset kind) */
};

/* --help and -h, as every command spells them. */
#define CLI_ARG_HELP_FLAGS {.name = "--help", .alias = "-h", .kind = CLI_ARG_HELP}

/* When --help counts; each command keeps the rule it always had. */
typedef enum cli_help_rule {
    CLI_HELP_OPTION,   /* as an option anywhere (not as a flag's value), before any error */
    CLI_HELP_ANYWHERE, /* any argument spelled so, even a flag's value, before any error */
    CLI_HELP_IN_ORDER, /* when the walk reaches it: an error before it wins */
    CLI_HELP_ALONE     /* only as the one argument; with others it is an unknown option */
} cli_help_rule;

/* A command's command line. Arguments that are not flags ("-" and "" are
 * not flags either) go to `positional`, in order, or are the one argument
 * `single` names; without either they are unknown options. */
typedef struct cli_args_spec {
    const char *command;    /* names the help in "unknown option" errors */
    const cli_arg *flags;
    int n_flags;
    cli_help_rule help;
    comet_status (*positional)(const char *arg, void *dest, comet_error *err);
    /* or one such argument, a const char * at single_offset; a second is
     * refused as "one SINGLE at a time" (e.g. "study file") */
    const char *single;
    size_t single_offset;
    /* after the first pass, before the late flags act (NULL: none): how
     * many positional arguments and late flags the command line holds */
    comet_status (*between)(void *dest, int positionals, int lates, comet_error *err);
    /* the wording of "unknown option \"ARG\"[ CONTEXT] (HINT)": HINT is
     * "see 'comet COMMAND --help'" unless given */
    const char *unknown_context;
    const char *unknown_hint;
    /* comet simulate --collective's wording, kept: an unknown last
     * argument (or one followed by "") "needs a value", or "is not an
     * option" when it is not a flag */
    bool trailing_unknown_needs_value;
} cli_args_spec;

/* Whether argv asks for help under spec's rule (CLI_HELP_IN_ORDER: only
 * the walk can tell, so false). */
bool cli_args_wants_help(const cli_args_spec *spec, int argc, char **argv);

/* Whether an argument is spelled exactly `name`, wherever it stands. */
bool cli_args_present(int argc, char **argv, const char *name);

/* Walk argv (argv[0] is the command's name) against spec into dest: each
 * flag acts in order (a repeated one acts again: the last value wins),
 * then `between`, then the late flags in order. On --help, *help is set
 * and nothing more is read. An error fills err (a COMET_EINPUT about the
 * command line, or what a call or positional returned). */
comet_status cli_args_parse(const cli_args_spec *spec, int argc, char **argv, void *dest,
                            bool *help, comet_error *err);

/* Strict integer parsing of a flag value within [min, max]. */
comet_status cli_parse_int(const char *flag, const char *text, int64_t min, int64_t max,
                           int64_t *out, comet_error *err);

#endif
