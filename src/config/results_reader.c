/* Reads the results a sweep saved (results.csv or results.jsonl) back into
 * rows, so `comet report` can draw a sweep long after it ran, and `comet
 * sweep --report` draws from exactly what it wrote. Columns are found by
 * name; result and strategy fields go through the same name tables the
 * writers use (comet_result_set_field, comet_strategy_set_field). A file
 * that lacks the columns a report needs was written by an older comet or
 * another tool: that is reported as the page's problem, not an error.
 * Every file comet reads is parsed in config/: this reader uses the same
 * YAML/JSON tree and file loading as the config reader; the report layer
 * only draws the rows. */
#include "comet/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/report.h"
#include "sections.h"
#include "tree.h"

#define MAX_FIELDS 256

void comet_results_free(comet_results *r)
{
    if (!r)
        return;
    free(r->rows);
    r->rows = NULL;
    r->n_rows = 0;
}

static void skip_line(comet_results *r, size_t line, const char *why)
{
    if (!r->skipped++)
        snprintf(r->first_skipped, sizeof r->first_skipped, "line %zu: %s", line, why);
}

static int model_index(comet_results *r, const char *name)
{
    comet_study *st = &r->study;
    for (int m = 0; m < st->n_models; m++)
        if (strcmp(st->models[m].name, name) == 0)
            return m;
    if (st->n_models >= COMET_STUDY_MAX_MODELS)
        return -1;
    snprintf(st->models[st->n_models].name, sizeof st->models[0].name, "%s", name);
    return st->n_models++;
}

/* Record an axis value (first appearance order); false when the axis has
 * more distinct values than a study holds. */
static bool axis_value(comet_axis *a, double v)
{
    for (int i = 0; i < a->n; i++)
        if (a->values[i] == v)
            return true;
    if (a->n >= COMET_STUDY_MAX_VALUES)
        return false;
    a->values[a->n++] = v;
    return true;
}

static bool status_parse(const char *text, comet_point_status *out)
{
    for (int s = COMET_POINT_OK; s <= COMET_POINT_NO_LAYOUT; s++)
        if (strcmp(text, comet_point_status_name((comet_point_status)s)) == 0) {
            *out = (comet_point_status)s;
            return true;
        }
    return false;
}

static bool number(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno)
        return false;
    *out = v;
    return true;
}

/* An index or an NPU count: a whole number from 0 to 2^53 (past that a
 * double is not exact, and converting one out of range to an integer is
 * undefined). */
static bool whole_number(const char *text, double *out)
{
    double v;
    if (!number(text, &v) || !(v >= 0.0 && v <= 9007199254740992.0) || v != (double)(int64_t)v)
        return false;
    *out = v;
    return true;
}

/* The next line (its '\n' replaced by NUL) or NULL at the end. */
static char *next_line(char **cursor)
{
    char *line = *cursor;
    if (!line || !*line)
        return NULL;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *cursor = nl + 1;
    } else
        *cursor = line + strlen(line);
    return line;
}

static bool blank(const char *line)
{
    return !line[0] || (line[0] == '\r' && !line[1]);
}

static comet_results_row *new_row(comet_results *r, size_t line)
{
    if (r->n_rows >= COMET_RESULTS_MAX_ROWS) {
        skip_line(r, line, "more rows than a report holds");
        return NULL;
    }
    if ((r->n_rows & (r->n_rows - 1)) == 0) { /* grow at powers of two */
        size_t cap = r->n_rows ? r->n_rows * 2 : 64;
        comet_results_row *p = realloc(r->rows, sizeof *p * cap);
        if (!p)
            return NULL;
        r->rows = p;
    }
    comet_results_row *row = &r->rows[r->n_rows];
    memset(row, 0, sizeof *row);
    comet_strategy_defaults(&row->strategy);
    return row;
}

/* ---- CSV ------------------------------------------------------------------- */

/* Split one line in place into fields (RFC 4180 quotes); returns the count. */
static int split_csv(char *line, char **field, int max)
{
    int n = 0;
    char *out = line, *p = line;
    while (n < max) {
        field[n++] = out;
        bool quoted = false;
        for (;; p++) {
            if (quoted) {
                if (*p == '"' && p[1] == '"')
                    *out++ = *p++;
                else if (*p == '"')
                    quoted = false;
                else if (!*p)
                    break;
                else
                    *out++ = *p;
            } else if (*p == '"')
                quoted = true;
            else if (*p == ',' || !*p || *p == '\n' || *p == '\r')
                break;
            else
                *out++ = *p;
        }
        bool more = *p == ',';
        *out++ = '\0';
        if (!more)
            break;
        p++;
    }
    return n;
}

typedef struct csv_columns {
    int n;
    char *name[MAX_FIELDS];
    int index, status, cost, npus, model;
    int first_axis, n_axes;
    int version;  /* the schema_version column, -1 in a file written before it */
} csv_columns;

/* Columns an older comet named without their units read as today's, and
 * the estimate's columns that name a unit (cost_usd, mfu_fraction, ...)
 * as the fields they fill (cost, mfu, ...). */
static void rename_older_columns(csv_columns *c)
{
    static const char *const names[][2] = {{"design_cost", "design_cost_usd"},
                                           {"step_time_low", "step_time_low_s"},
                                           {"step_time_high", "step_time_high_s"}};
    for (int i = 0; i < c->n; i++) {
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            if (strcmp(c->name[i], names[k][0]) == 0)
                c->name[i] = (char *)names[k][1];
        c->name[i] = (char *)comet_result_field_of_column(c->name[i]);
    }
}

static int find(const csv_columns *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->name[i], name) == 0)
            return i;
    return -1;
}

static void require(comet_results *r, const csv_columns *c, const char *const *names, int n)
{
    char missing[200] = "";
    for (int i = 0; i < n; i++)
        if (find(c, names[i]) < 0)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", names[i]);
    if (missing[0])
        snprintf(r->problem, sizeof r->problem,
                 "%s has no column %s: it was written by an older comet or by another tool. "
                 "Run the sweep again with this comet to report it.",
                 r->path, missing);
}

/* A system axis's value is an index; the row's estimate names the system
 * (its `system` field), which labels that value for the reports. */
static void label_systems(comet_results *r, const double *values, const char *system)
{
    for (int a = 0; system && a < r->study.n_axes; a++) {
        comet_axis *ax = &r->study.axes[a];
        if (ax->kind != COMET_AXIS_SYSTEM ||
            !(values[a] >= 0.0 && values[a] < COMET_STUDY_MAX_SYSTEMS))
            continue;
        int i = (int)values[a];
        if (!ax->labels[i][0])
            snprintf(ax->labels[i], sizeof ax->labels[i], "%s", system);
    }
}

/* A band is kept only when it is one: 0 < low <= high, finite. */
static void band_check(comet_results_row *row)
{
    if (!(row->band_low > 0.0 && row->band_low <= row->band_high && isfinite(row->band_high)))
        row->band_low = row->band_high = 0.0;
}

static void csv_row(comet_results *r, const csv_columns *c, char **f, int n, size_t line)
{
    if (n != c->n) {
        skip_line(r, line, n < c->n ? "fewer fields than the header" : "more fields than the header");
        return;
    }
    double version;
    if (c->version >= 0 && (!whole_number(f[c->version], &version) ||
                            version > COMET_CSV_SCHEMA_VERSION)) {
        skip_line(r, line, "its schema_version is not one this comet reads (a newer comet's?)");
        return;
    }
    comet_point_status status;
    double index, cost, npus;
    if (!status_parse(f[c->status], &status) || !whole_number(f[c->index], &index) ||
        !number(f[c->cost], &cost) || !whole_number(f[c->npus], &npus)) {
        skip_line(r, line, "index, status, design_cost or npus does not read");
        return;
    }
    int m = model_index(r, f[c->model]);
    if (m < 0) {
        skip_line(r, line, "more models than a report holds");
        return;
    }
    double values[COMET_STUDY_MAX_AXES];
    for (int a = 0; a < c->n_axes; a++)
        if (!comet_axis_value_parse(r->study.axes[a].kind, f[c->first_axis + a], &values[a]) ||
            !axis_value(&r->study.axes[a], values[a])) {
            skip_line(r, line, "an axis value does not read, or an axis has too many values");
            return;
        }
    comet_results_row *row = new_row(r, line);
    if (!row)
        return;
    row->index = (uint64_t)index;
    row->status = status;
    row->cost = cost;
    row->npus = (int64_t)npus;
    row->model = m;
    memcpy(row->values, values, sizeof values[0] * (size_t)c->n_axes);
    /* The estimate's fields follow "model"; "npus" comes twice (design, then result);
     * the band's two columns close the line (empty without one). */
    for (int i = c->model + 1; i < n; i++) {
        double v;
        if (!number(f[i], &v))
            v = 0.0;
        if (strcmp(c->name[i], "system") == 0)
            label_systems(r, values, f[i]);
        else if (strcmp(c->name[i], "step_time_low_s") == 0)
            row->band_low = v;
        else if (strcmp(c->name[i], "step_time_high_s") == 0)
            row->band_high = v;
        else if (!comet_strategy_set_field(&row->strategy, c->name[i], f[i]) && v != 0.0)
            comet_result_set_field(&row->result, c->name[i], v);
    }
    band_check(row);
    row->result.feasible = status == COMET_POINT_OK;
    r->n_rows++;
}

static void parse_csv(comet_results *r, char *text)
{
    char *cursor = text;
    char *line = next_line(&cursor);
    static const char *const needed[] = {"index",       "status",     "design_cost_usd", "npus",
                                         "model",       "step_time_s", "tokens_per_s",
                                         "hbm_total_bytes"};
    csv_columns c;
    memset(&c, 0, sizeof c);
    c.n = split_csv(line, c.name, MAX_FIELDS);
    rename_older_columns(&c);
    require(r, &c, needed, (int)(sizeof needed / sizeof needed[0]));
    if (r->problem[0])
        return;
    c.index = find(&c, "index");
    c.version = find(&c, "schema_version");
    c.status = find(&c, "status");
    c.cost = find(&c, "design_cost_usd");
    /* an npus axis and the design's NPU count share the name: the count
     * is the column just before "model" */
    c.model = find(&c, "model");
    c.npus = c.model - 1;
    c.first_axis = c.cost + 1;
    c.n_axes = c.npus - c.first_axis;
    if (c.n_axes < 0 || c.n_axes > COMET_STUDY_MAX_AXES || strcmp(c.name[c.npus], "npus") != 0) {
        snprintf(r->problem, sizeof r->problem,
                 "%s does not have the columns of a sweep in the expected order (index, "
                 "status, design_cost_usd, the axes, npus, ...).",
                 r->path);
        return;
    }
    for (int a = 0; a < c.n_axes; a++) { /* "hbm_capacity_bytes" is the axis hbm_capacity */
        comet_axis *ax = &r->study.axes[a];
        if (!comet_axis_from_column(c.name[c.first_axis + a], ax->name, sizeof ax->name,
                                    &ax->kind))
            ax->kind = COMET_AXIS_NPUS; /* shown as a plain number */
    }
    r->study.n_axes = c.n_axes;
    size_t line_no = 1;
    char *fields[MAX_FIELDS];
    while ((line = next_line(&cursor))) {
        line_no++;
        if (blank(line))
            continue;
        int n = split_csv(line, fields, MAX_FIELDS);
        csv_row(r, &c, fields, n, line_no);
    }
}

/* ---- JSON lines ------------------------------------------------------------ */

static const char *scalar(const cfg_node *map, const char *key)
{
    const cfg_node *v = cfg_map_find(map, key);
    return v && v->kind == CFG_SCALAR ? v->text : NULL;
}

static bool axis_named(comet_results *r, const char *name, int *out)
{
    comet_study *st = &r->study;
    for (int a = 0; a < st->n_axes; a++)
        if (strcmp(st->axes[a].name, name) == 0) {
            *out = a;
            return true;
        }
    if (st->n_axes >= COMET_STUDY_MAX_AXES)
        return false;
    comet_axis *ax = &st->axes[st->n_axes];
    snprintf(ax->name, sizeof ax->name, "%s", name);
    if (!comet_axis_kind_from_name(name, &ax->kind))
        ax->kind = COMET_AXIS_NPUS;
    *out = st->n_axes++;
    return true;
}

static void json_row(comet_results *r, const cfg_node *root, size_t line)
{
    const char *version = scalar(root, "schema_version"); /* none before it was written */
    double vv;
    if (version && (!whole_number(version, &vv) || vv > COMET_JSON_SCHEMA_VERSION)) {
        skip_line(r, line, "its schema_version is not one this comet reads (a newer comet's?)");
        return;
    }
    const char *index = scalar(root, "index"), *status = scalar(root, "status");
    const char *cost = scalar(root, "design_cost"), *npus = scalar(root, "npus");
    const cfg_node *axes = cfg_map_find(root, "axes"), *best = cfg_map_find(root, "best");
    const char *model = scalar(root, "model");
    if (!model && best && best->kind == CFG_MAP)
        model = scalar(best, "model");
    if (!index || !status || !cost || !npus || !axes || axes->kind != CFG_MAP || !model) {
        if (r->n_rows == 0 && !r->skipped)
            snprintf(r->problem, sizeof r->problem,
                     "%s: line %zu lacks index, status, design_cost, npus, model or axes: it "
                     "was written by an older comet or by another tool. Run the sweep again "
                     "with this comet to report it.",
                     r->path, line);
        skip_line(r, line, "index, status, design_cost, npus, model or axes is missing");
        return;
    }
    comet_point_status st;
    double vi, vc, vn;
    if (!status_parse(status, &st) || !whole_number(index, &vi) || !number(cost, &vc) ||
        !whole_number(npus, &vn)) {
        skip_line(r, line, "index, status, design_cost or npus does not read");
        return;
    }
    int m = model_index(r, model);
    double values[COMET_STUDY_MAX_AXES] = {0};
    for (size_t i = 0; m >= 0 && i < axes->n; i++) {
        const cfg_node *k = cfg_map_key(axes, i), *v = cfg_map_value(axes, i);
        int a;
        double x;
        comet_axis_kind kind = COMET_AXIS_NPUS; /* the value's kind before the axis is made */
        if (k->text)
            (void)comet_axis_kind_from_name(k->text, &kind);
        if (!k->text || v->kind != CFG_SCALAR || !comet_axis_value_parse(kind, v->text, &x) ||
            !axis_named(r, k->text, &a) || !axis_value(&r->study.axes[a], x)) {
            skip_line(r, line, "an axis value does not read, or there are too many axes");
            return;
        }
        values[a] = x;
    }
    if (m < 0) {
        skip_line(r, line, "more models than a report holds");
        return;
    }
    comet_results_row *row = new_row(r, line);
    if (!row)
        return;
    row->index = (uint64_t)vi;
    row->status = st;
    row->cost = vc;
    row->npus = (int64_t)vn;
    row->model = m;
    memcpy(row->values, values, sizeof values);
    if (best && best->kind == CFG_MAP) {
        label_systems(r, values, scalar(best, "system"));
        const cfg_node *strategy = cfg_map_find(best, "strategy");
        for (size_t i = 0; strategy && strategy->kind == CFG_MAP && i < strategy->n; i++) {
            const cfg_node *k = cfg_map_key(strategy, i), *v = cfg_map_value(strategy, i);
            if (k->text && v->kind == CFG_SCALAR && v->text)
                comet_strategy_set_field(&row->strategy, k->text, v->text);
        }
        for (size_t i = 0; i < best->n; i++) {
            const cfg_node *k = cfg_map_key(best, i), *v = cfg_map_value(best, i);
            double x;
            if (k->text && v->kind == CFG_SCALAR && v->text && number(v->text, &x))
                comet_result_set_field(&row->result, k->text, x);
        }
        const cfg_node *band = cfg_map_find(best, "step_time_band");
        const char *low = band && band->kind == CFG_MAP ? scalar(band, "low") : NULL;
        const char *high = band && band->kind == CFG_MAP ? scalar(band, "high") : NULL;
        if (low && high && number(low, &row->band_low) && number(high, &row->band_high))
            band_check(row);
    }
    row->result.feasible = st == COMET_POINT_OK;
    r->n_rows++;
}

static void parse_jsonl(comet_results *r, char *text)
{
    char *cursor = text, *line;
    size_t line_no = 0;
    while ((line = next_line(&cursor))) {
        line_no++;
        if (blank(line))
            continue;
        cfg_node *root = NULL;
        comet_error e;
        if (cfg_tree_parse(line, strlen(line), r->path, &root, &e) || !root ||
            root->kind != CFG_MAP) {
            skip_line(r, line_no, root ? "not a JSON object" : e.message);
            cfg_tree_free(root);
            continue;
        }
        json_row(r, root, line_no);
        cfg_tree_free(root);
        if (r->problem[0])
            return;
    }
}

/* Parse text the caller owns and lets the parser cut into lines
 * (NUL-terminated at len). */
static void parse_in_place(char *text, size_t len, const char *name, comet_results *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", name);
    snprintf(out->study.name, sizeof out->study.name, "%s", name);
    size_t start = 0;
    while (start < len && (text[start] == ' ' || text[start] == '\n' || text[start] == '\r' ||
                           text[start] == '\t'))
        start++;
    if (start == len) {
        snprintf(out->problem, sizeof out->problem,
                 "%s is empty: the sweep wrote no results (it may have stopped before its "
                 "first design point).",
                 name);
        return;
    }
    if (memchr(text, '\0', len)) {
        snprintf(out->problem, sizeof out->problem,
                 "%s holds binary data, not sweep results.", name);
        return;
    }
    size_t n = strlen(name);
    bool jsonl = text[start] == '{' || (n > 6 && strcmp(name + n - 6, ".jsonl") == 0);
    if (jsonl)
        parse_jsonl(out, text);
    else
        parse_csv(out, text);
    if (!out->problem[0] && out->n_rows == 0)
        snprintf(out->problem, sizeof out->problem,
                 "%s has no design point that could be read%s%s.", name,
                 out->skipped ? "; the first problem: " : "",
                 out->skipped ? out->first_skipped : "");
}

comet_status comet_results_parse(const char *text, size_t len, const char *name,
                                 comet_results *out, comet_error *err)
{
    char *copy = malloc(len + 1);
    if (!copy) {
        memset(out, 0, sizeof *out);
        return comet_error_set(err, COMET_ENOMEM, name, 0, 0, NULL, "out of memory");
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    parse_in_place(copy, len, name, out);
    free(copy);
    return COMET_OK;
}

comet_status comet_results_read(const char *path, comet_results *out, comet_error *err)
{
    memset(out, 0, sizeof *out); /* freeable even when the file cannot be read */
    /* config files are bounded; a sweep's results may be as long as it ran */
    char *text = NULL;
    size_t len = 0;
    comet_status st = cfg_load_file_limit(path, SIZE_MAX / 2, &text, &len, err);
    if (st)
        return st;
    parse_in_place(text, len, path, out); /* the loaded text is ours to cut */
    free(text);
    return COMET_OK;
}
