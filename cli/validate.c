/* comet validate: runs validation tables of published measurements
 * (embedded under presets/validation/, or YAML files) through the library's
 * comet_validate and prints each row's measured and predicted step time
 * with the signed error, and the summary, as text, Markdown, CSV or JSON.
 * docs/validation.md is made from its Markdown. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "comet/validate.h"

#define MAX_TABLES 16

typedef struct validate_args {
    const char *tables[MAX_TABLES];
    int n_tables;
    const char *output;
    comet_validation_format format;
} validate_args;

static void help(void)
{
    printf("usage: comet validate [TABLE ...] [--format text|md|csv|json] [-o FILE]\n\n"
           "Runs each row of a validation table (a published training measurement with its\n"
           "model, system and strategy) through comet's estimate and prints the measured and\n"
           "predicted step time, the signed error, and the mean, median and worst error and\n"
           "the bias, overall and by system and framework (docs/validation.md).\n"
           "  TABLE              a built-in table by name, or a YAML file (default: every\n"
           "                     built-in table: ");
    const char *const *names = comet_preset_names("validation");
    for (int i = 0; names && names[i]; i++)
        printf("%s%s", i ? ", " : "", names[i]);
    printf(")\n"
           "  --format FORMAT    text (default), md (Markdown), csv, json\n"
           "  -o FILE            write to FILE atomically instead of stdout\n"
           "Exit status: 0 ok (whatever the errors), 1 a failure mid-way, 2 bad input or an\n"
           "unusable output path.\n");
}

static comet_status format_flag(const cli_arg *f, const char *value, void *dest,
                                comet_error *err)
{
    static const char *const names[] = {"text", "md", "csv", "json"};
    for (int i = 0; i < 4; i++)
        if (strcmp(value, names[i]) == 0) {
            ((validate_args *)dest)->format = (comet_validation_format)i;
            return COMET_OK;
        }
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                           "expected text, md, csv or json, got \"%s\"", value);
}

static comet_status table_arg(const char *arg, void *dest, comet_error *err)
{
    validate_args *a = dest;
    if (!arg[0])
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "a table name is empty");
    if (a->n_tables == MAX_TABLES)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "more than %d tables at once", MAX_TABLES);
    a->tables[a->n_tables++] = arg;
    return COMET_OK;
}

static comet_status read_table(const char *name, comet_validation_table **t, comet_error *err)
{
    if (cli_is_file_arg(name))
        return comet_validation_read_file(name, t, err);
    return comet_validation_preset(name, t, err);
}

/* Read, run and render one table into out. */
static comet_status one_table(const validate_args *a, const char *name, comet_buf *out,
                              comet_error *err)
{
    comet_validation_table *t = NULL;
    comet_status st = read_table(name, &t, err);
    if (st)
        return st;
    comet_validation_report r;
    st = comet_validate(t, &r, err);
    if (!st) {
        for (int i = 0; i < r.n_rows; i++)
            if (r.rows[i].status == COMET_VALIDATION_REFUSED)
                comet_validation_locate(t, i, &r.rows[i].why);
        comet_validation_render(out, a->format, t, &r);
        comet_validation_report_free(&r);
    }
    comet_validation_free(t);
    return st;
}

int cli_validate(int argc, char **argv)
{
    static const cli_arg flags[] = {
        {.name = "--format", .kind = CLI_ARG_CALL, .value = true, .call = format_flag},
        {.name = "-o", .alias = "--output", .kind = CLI_ARG_TEXT,
         .offset = offsetof(validate_args, output)},
        CLI_ARG_HELP_FLAGS,
    };
    const cli_args_spec spec = {.command = "validate",
                                .flags = flags,
                                .n_flags = (int)(sizeof flags / sizeof flags[0]),
                                .help = CLI_HELP_OPTION,
                                .positional = table_arg};
    validate_args a = {.format = COMET_VALIDATION_TEXT};
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    if (cli_args_parse(&spec, argc, argv, &a, &wants_help, &err) ||
        (!wants_help && cli_check_output(a.output, CLI_OUT_FILE, "-o", &err)))
        return cli_report_error("validate", &err);
    if (wants_help) {
        help();
        return CLI_OK;
    }
    if (a.n_tables == 0) {
        const char *const *names = comet_preset_names("validation");
        for (int i = 0; names && names[i] && a.n_tables < MAX_TABLES; i++)
            a.tables[a.n_tables++] = names[i];
    }
    comet_buf out;
    comet_buf_init(&out);
    if (a.format == COMET_VALIDATION_CSV)
        comet_validation_csv_header(&out);
    if (a.format == COMET_VALIDATION_JSON)
        comet_buf_printf(&out, "[\n");
    comet_status st = COMET_OK;
    for (int i = 0; !st && i < a.n_tables; i++) {
        if (i && a.format == COMET_VALIDATION_JSON)
            comet_buf_printf(&out, ",\n");
        else if (i && a.format != COMET_VALIDATION_CSV)
            comet_buf_printf(&out, "\n");
        st = one_table(&a, a.tables[i], &out, &err);
    }
    if (a.format == COMET_VALIDATION_JSON)
        comet_buf_printf(&out, "]\n");
    if (!st && out.failed)
        st = comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (!st)
        st = cli_write_output(a.output, out.data, out.len, &err);
    comet_buf_free(&out);
    return st ? cli_report_error("validate", &err) : CLI_OK;
}
