/* Validation tables (comet validate): a document with one `validation:`
 * section, its rows each a published measurement with the model, system
 * and strategy it ran. A row's `model:`, `system:` and `strategy:` are
 * read by the same section readers as an input document (presets with
 * overrides included), or the row starts from a strategy preset that holds
 * all three (`input: NAME`), so a row is written exactly like an input
 * file and nothing about models or strategies is read twice. Each row
 * keeps its own source map, so an error comet_estimate finds later (it
 * names "strategy.tp") is pointed at that row's line. The `measured:`
 * section says how the source stated its number; converting it to a step
 * time is comet_validate's (src/explore/validate.c). */
#include "comet/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vocab/vocab.h"
#include "presets.h"
#include "sections.h"
#include "srcmap.h"

#define ROOT "validation"

/* measured: exactly one way of stating it, and flops/peak where it needs them. */
static comet_status row_measured(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    static const cfg_field keys[] = {
        CFG_SKIP("step_time"), CFG_SKIP("tokens_per_s_per_gpu"), CFG_SKIP("model_tflops_per_gpu"),
        CFG_SKIP("mfu"), CFG_SKIP("gpu_hours_per_trillion_tokens"), CFG_SKIP("flops"),
        CFG_SKIP("peak"), CFG_END,
    };
    comet_measured *m = &((comet_validation_row *)base)->measured;
    CFG_TRY(cfg_fields_read(c, n, path, keys, NULL));
    int given = -1;
    for (int k = 0; k < COMET_MEASURE_KIND_COUNT; k++) {
        const cfg_node *v = cfg_map_find(n, vocab_measure_kind_names[k]);
        if (!v)
            continue;
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, vocab_measure_kind_names[k]);
        if (given >= 0)
            return cfg_fail(c, v, kpath, "a second measurement (%s is given): give one",
                            vocab_measure_kind_names[given]);
        given = k;
        m->kind = (comet_measure_kind)k;
        if (k == COMET_MEASURE_STEP_TIME)
            CFG_TRY(cfg_read_quantity(c, v, kpath, CFG_UNIT_TIME, true, &m->value));
        else if (k == COMET_MEASURE_MFU)
            CFG_TRY(cfg_read_fraction(c, v, kpath, &m->value));
        else
            CFG_TRY(cfg_read_real(c, v, kpath, true, &m->value));
    }
    if (given < 0)
        return cfg_fail(c, n, path, "needs one of step_time, tokens_per_s_per_gpu, "
                                    "model_tflops_per_gpu, mfu, gpu_hours_per_trillion_tokens");
    bool counts_flops = given == COMET_MEASURE_MODEL_TFLOPS || given == COMET_MEASURE_MFU;
    const cfg_node *flops = cfg_map_find(n, "flops"), *peak = cfg_map_find(n, "peak");
    char fpath[CFG_PATH_LEN], ppath[CFG_PATH_LEN];
    cfg_path_key(fpath, sizeof fpath, path, "flops");
    cfg_path_key(ppath, sizeof ppath, path, "peak");
    if (counts_flops && !flops)
        return cfg_fail(c, n, path, "%s needs flops: the source's FLOP convention (%s)",
                        vocab_measure_kind_names[given], "megatron, megatron_causal, 6n");
    if (!counts_flops && flops)
        return cfg_fail(c, flops, fpath, "counts nothing here: only model_tflops_per_gpu and "
                                         "mfu are stated under a FLOP convention");
    if (flops) {
        int v;
        CFG_TRY(cfg_read_enum(c, flops, fpath, vocab_flops_convention_names, &v));
        m->flops = (comet_flops_convention)v;
    }
    if ((given == COMET_MEASURE_MFU) != (peak != NULL))
        return peak ? cfg_fail(c, peak, ppath, "only an mfu is a fraction of a peak")
                    : cfg_fail(c, n, path, "mfu needs peak: the FLOP/s it is a fraction of");
    if (peak)
        CFG_TRY(cfg_read_quantity(c, peak, ppath, CFG_UNIT_FLOP_RATE, true, &m->peak));
    return COMET_OK;
}

/* input: NAME, a strategy preset holding model, system and strategy, read
 * as the row's starting job; the row's own sections then replace its. */
static comet_status row_input(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_job *job = &((comet_validation_row *)base)->job;
    char name[COMET_NAME_LEN];
    CFG_TRY(cfg_read_name(c, n, path, name, sizeof name));
    const comet_embedded_preset *p = cfg_preset_find("strategies", name);
    if (!p) {
        char known[256];
        cfg_join(known, sizeof known, comet_preset_names("strategies"));
        return cfg_fail(c, n, path, "unknown strategy preset \"%s\" (known: %s)", name, known);
    }
    char file[256];
    snprintf(file, sizeof file, "presets/strategies/%s.yaml", p->name);
    CFG_TRY(cfg_read_document(p->text, p->len, file, c->preset_depth + 1, job, c->err));
    cfg_srcmap_use_file(c->map, c->file);   /* the row's own keys are the table's */
    return COMET_OK;
}

/* A row's keys are read in two passes over its mapping: its own into the
 * row, then the input document's sections into its job with the document
 * reader's own section readers (config.c). */
static const cfg_field row_fields[] = {
    CFG_NAME("id", comet_validation_row, id),
    CFG_NAME("source", comet_validation_row, source),
    CFG_NAME("notes", comet_validation_row, notes),
    CFG_SKIP("input"),
    CFG_SKIP("model"),
    CFG_SKIP("system"),
    CFG_SKIP("strategy"),
    CFG_CUSTOM("measured", row_measured),
    CFG_BOOL("fitted", comet_validation_row, fitted),
    CFG_END,
};

static const cfg_field job_fields[] = {
    CFG_SKIP("id"),
    CFG_SKIP("source"),
    CFG_SKIP("notes"),
    CFG_SKIP("input"),
    CFG_CUSTOM("model", cfg_job_read_model),
    CFG_CUSTOM("system", cfg_job_read_system),
    CFG_CUSTOM("strategy", cfg_job_read_strategy),
    CFG_SKIP("measured"),
    CFG_SKIP("fitted"),
    CFG_END,
};

static comet_status read_row(cfg_ctx *table, const cfg_node *n, const char *path,
                             comet_validation_row *row)
{
    comet_job_init(&row->job);
    cfg_srcmap_use_file(&row->job.srcmap, table->file);
    cfg_ctx c = *table;
    c.map = &row->job.srcmap;
    cfg_record(&c, path, n);
    CFG_TRY(cfg_expect(&c, n, path, CFG_MAP));
    const cfg_node *input = cfg_map_find(n, "input");
    if (input) {   /* first, whatever its place: the sections override it */
        char ipath[CFG_PATH_LEN];
        cfg_path_key(ipath, sizeof ipath, path, "input");
        cfg_record(&c, ipath, input);
        CFG_TRY(row_input(&c, input, ipath, row));
    }
    CFG_TRY(cfg_fields_read(&c, n, path, row_fields, row));
    CFG_TRY(cfg_fields_read(&c, n, path, job_fields, &row->job));
    static const char *const needed[] = {"id", "source", "measured", NULL};
    for (int i = 0; needed[i]; i++)
        if (!cfg_map_find(n, needed[i]))
            return cfg_fail(&c, n, path, "missing key \"%s\"", needed[i]);
    const char *missing = !row->job.has_model    ? "model"
                        : !row->job.has_system   ? "system"
                        : !row->job.has_strategy ? "strategy"
                                                 : NULL;
    if (missing)
        return cfg_fail(&c, n, path, "missing key \"%s\" (or an input: preset that has it)",
                        missing);
    bool counts_flops = row->measured.kind == COMET_MEASURE_MODEL_TFLOPS ||
                        row->measured.kind == COMET_MEASURE_MFU;
    if (counts_flops && row->job.model.kind != COMET_MODEL_TRANSFORMER) {
        char mpath[CFG_PATH_LEN];
        cfg_path_key(mpath, sizeof mpath, path, "measured");
        return cfg_fail(&c, cfg_map_find(n, "measured"), mpath,
                        "FLOP conventions count Transformers only; state a step time or "
                        "tokens/s for model %s", row->job.model.name);
    }
    return COMET_OK;
}

static comet_status read_rows(cfg_ctx *c, const cfg_node *n, comet_validation_table *t)
{
    const char *path = ROOT ".rows";
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n == 0)
        return cfg_fail(c, n, path, "is empty: give at least one row");
    if (n->n > COMET_VALIDATION_MAX_ROWS)
        return cfg_fail(c, n, path, "has %zu rows; at most %d", n->n, COMET_VALIDATION_MAX_ROWS);
    t->rows = calloc(n->n, sizeof *t->rows);
    if (!t->rows)
        return comet_error_set(c->err, COMET_ENOMEM, c->file, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < n->n; i++) {
        char ipath[CFG_PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        const cfg_node *item = cfg_seq_item(n, i);
        CFG_TRY(read_row(c, item, ipath, &t->rows[i]));
        t->n_rows = (int)i + 1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->rows[j].id, t->rows[i].id) == 0) {
                char kpath[CFG_PATH_LEN];
                cfg_path_key(kpath, sizeof kpath, ipath, "id");
                return cfg_fail(c, cfg_map_find(item, "id"), kpath,
                                "repeats the id of row %zu", j);
            }
    }
    return COMET_OK;
}

static comet_status read_table(cfg_ctx *c, const cfg_node *root, comet_validation_table *t)
{
    if (!root)
        return comet_error_set(c->err, COMET_EINPUT, c->file, 0, 0, NULL,
                               "empty document; expected a validation: section");
    if (root->kind != CFG_MAP || root->n != 1 || !cfg_map_find(root, ROOT))
        return cfg_fail(c, root, NULL, "expected a document with one validation: section");
    static const cfg_field fields[] = {
        CFG_NAME("name", comet_validation_table, name),
        CFG_NAME("about", comet_validation_table, about),
        CFG_SKIP("rows"),
        CFG_END,
    };
    const cfg_node *v = cfg_map_find(root, ROOT);
    CFG_TRY(cfg_fields_read(c, v, ROOT, fields, t));
    const cfg_node *rows = cfg_map_find(v, "rows");
    if (!rows)
        return cfg_fail(c, v, ROOT, "missing key \"rows\"");
    return read_rows(c, rows, t);
}

comet_status comet_validation_read_text(const char *text, size_t len, const char *filename,
                                        comet_validation_table **out, comet_error *err)
{
    const char *file = filename ? filename : "<validation>";
    *out = NULL;
    cfg_node *root;
    CFG_TRY(cfg_tree_parse(text ? text : "", text ? len : 0, file, &root, err));
    comet_validation_table *t = calloc(1, sizeof *t);
    comet_srcmap *map = malloc(sizeof *map);
    comet_status st;
    if (!t || !map) {
        st = comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    } else {
        memset(map, 0, sizeof *map);
        cfg_srcmap_use_file(map, file);
        snprintf(t->name, sizeof t->name, "validation");
        snprintf(t->file, sizeof t->file, "%s", file);
        cfg_ctx c = {.file = file, .err = err, .map = map};
        st = read_table(&c, root, t);
    }
    free(map);
    cfg_tree_free(root);
    if (st)
        comet_validation_free(t);
    else
        *out = t;
    return st;
}

comet_status comet_validation_read_file(const char *path, comet_validation_table **out,
                                        comet_error *err)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    CFG_TRY(cfg_load_file(path, &text, &len, err));
    comet_status st = comet_validation_read_text(text, len, path, out, err);
    free(text);
    return st;
}

comet_status comet_validation_preset(const char *name, comet_validation_table **out,
                                     comet_error *err)
{
    *out = NULL;
    const comet_embedded_preset *p = cfg_preset_find("validation", name);
    if (!p) {
        char known[256];
        cfg_join(known, sizeof known, comet_preset_names("validation"));
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "unknown validation table \"%s\" (known: %s)", name ? name : "",
                               known);
    }
    char file[256];
    snprintf(file, sizeof file, "presets/validation/%s.yaml", p->name);
    return comet_validation_read_text(p->text, p->len, file, out, err);
}

void comet_validation_free(comet_validation_table *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t);
}

void comet_validation_locate(const comet_validation_table *t, int row, comet_error *err)
{
    if (!t || row < 0 || row >= t->n_rows || !err || err->line > 0)
        return;
    char key[sizeof err->key];
    snprintf(key, sizeof key, ROOT ".rows[%d]%s%.96s", row, err->key[0] ? "." : "", err->key);
    memcpy(err->key, key, sizeof key);
    comet_srcmap_locate(&t->rows[row].job.srcmap, err);
    if (err->line == 0)
        snprintf(err->file, sizeof err->file, "%s", t->file);
}
