/* Reading a whole config document into a comet_job: the document is a
 * mapping with any of `model:`, `system:` and `strategy:`; sections present
 * replace those of the job. A document is read all or nothing, so a job is
 * never left half-updated by an error. Also the file entry point, and the
 * reading of a section, which may name an embedded preset (presets.c finds
 * it) that is itself a document: that recursion stays in this file, with
 * nesting bounded so presets cannot loop. And the documents of one
 * section (a study, an allocation, a DeepPool problem: cfg_one_section),
 * read all or nothing the same way, each section's file saying only what
 * is its own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "presets.h"
#include "sections.h"
#include "srcmap.h"

void comet_job_init(comet_job *job)
{
    memset(job, 0, sizeof *job);
    comet_strategy_defaults(&job->strategy);
}

comet_status cfg_job_read_model(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_job *job = base;
    CFG_TRY(cfg_section_read(c, n, path, &cfg_model_section, &job->model));
    job->has_model = true;
    return COMET_OK;
}

comet_status cfg_job_read_system(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_job *job = base;
    CFG_TRY(cfg_section_read(c, n, path, &cfg_system_section, &job->system));
    job->has_system = true;
    return COMET_OK;
}

comet_status cfg_job_read_strategy(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_job *job = base;
    CFG_TRY(cfg_section_read(c, n, path, &cfg_strategy_section, &job->strategy));
    job->has_strategy = true;
    return COMET_OK;
}

static const cfg_field document_fields[] = {
    CFG_CUSTOM("model", cfg_job_read_model),
    CFG_CUSTOM("system", cfg_job_read_system),
    CFG_CUSTOM("strategy", cfg_job_read_strategy),
    CFG_END,
};

/* With system and placement in one document, one span per dimension. */
static comet_status check_placement(cfg_ctx *c, const cfg_node *root, const comet_job *job)
{
    const cfg_node *placement = cfg_map_find(cfg_map_find(root, "strategy"), "placement");
    if (!placement || !cfg_map_find(root, "system"))
        return COMET_OK;
    int spans = cfg_placement_dims(placement);
    if (spans == job->system.n_dims)
        return COMET_OK;
    return cfg_fail_key(c, "strategy.placement", "gives %d spans per group but the system has "
                        "%d network dimensions", spans, job->system.n_dims);
}

static comet_status read_root(cfg_ctx *c, const cfg_node *root, comet_job *job)
{
    if (!root)
        return comet_error_set(c->err, COMET_EINPUT, c->file, 0, 0, NULL,
                               "empty document; expected model:, system: or strategy:");
    if (root->kind != CFG_MAP)
        return cfg_fail(c, root, NULL, "expected a mapping with model:, system: or strategy:");
    for (size_t i = 0; i < root->n; i++)
        cfg_srcmap_drop(c->map, cfg_map_key(root, i)->text);
    CFG_TRY(cfg_fields_read(c, root, NULL, document_fields, job));
    return check_placement(c, root, job);
}

comet_status cfg_read_document(const char *text, size_t len, const char *file, int preset_depth,
                               comet_job *job, comet_error *err)
{
    cfg_node *root;
    CFG_TRY(cfg_tree_parse(text, len, file, &root, err));
    comet_job *work = malloc(sizeof *work);
    if (!work) {
        cfg_tree_free(root);
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    }
    memcpy(work, job, sizeof *work);
    cfg_srcmap_use_file(&work->srcmap, file);
    cfg_ctx c = {.file = file, .err = err, .map = &work->srcmap, .preset_depth = preset_depth};
    comet_status st = read_root(&c, root, work);
    if (!st)
        memcpy(job, work, sizeof *job);
    free(work);
    cfg_tree_free(root);
    return st;
}

comet_status comet_config_read_text(const char *text, size_t len, const char *filename,
                                    comet_job *job, comet_error *err)
{
    return cfg_read_document(text ? text : "", text ? len : 0, filename ? filename : "<config>",
                             0, job, err);
}

/* A file that cannot be opened is bad input (the user named it); one that
 * fails while being read is an I/O failure. */
comet_status cfg_one_section_read_text(const cfg_one_section *d, const char *text, size_t len,
                                       const char *filename, void *out, comet_error *err)
{
    const char *file = filename ? filename : d->unnamed;
    cfg_node *root;
    CFG_TRY(cfg_tree_parse(text ? text : "", text ? len : 0, file, &root, err));
    void *obj = calloc(1, d->size);
    if (!obj) {
        cfg_tree_free(root);
        return comet_error_set(err, COMET_ENOMEM, file, 0, 0, NULL, "out of memory");
    }
    if (d->init)
        d->init(obj);
    comet_srcmap *map = (comet_srcmap *)((char *)obj + d->map_offset);
    cfg_srcmap_use_file(map, file);
    cfg_ctx c = {.file = file, .err = err, .map = map};
    comet_status status;
    if (!root || root->kind != CFG_MAP || root->n != 1 || !cfg_map_find(root, d->name))
        status = root ? cfg_fail(&c, root, NULL, "expected a document with one %s: section",
                                 d->name)
                      : comet_error_set(err, COMET_EINPUT, file, 0, 0, NULL,
                                        "empty document; expected %s %s: section", d->article,
                                        d->name);
    else
        status = d->read(&c, obj, cfg_map_find(root, d->name));
    if (!status)
        memcpy(out, obj, d->size);
    free(obj);
    cfg_tree_free(root);
    return status;
}

comet_status cfg_one_section_read_file(const cfg_one_section *d, const char *path, void *out,
                                       comet_error *err)
{
    char *text = NULL;
    size_t len = 0;
    comet_status st = cfg_load_file(path, &text, &len, err);
    if (st)
        return st;
    st = cfg_one_section_read_text(d, text, len, path, out, err);
    free(text);
    return st;
}

static comet_status read_error(const char *path, comet_status status, int errnum,
                               comet_error *err)
{
    char reason[128];
    if (strerror_r(errnum, reason, sizeof reason) != 0)
        snprintf(reason, sizeof reason, "error %d", errnum);
    return comet_error_set(err, status, path, 0, 0, NULL, "cannot read: %s", reason);
}

/* Whole file into a NUL-terminated heap buffer, at most max bytes. */
static comet_status read_stream(FILE *f, const char *path, size_t max, char **out, size_t *len,
                                comet_error *err)
{
    size_t cap = 1u << 16, n = 0;
    char *buf = NULL;
    errno = 0;
    for (;;) {
        char *grown = realloc(buf, cap + 1);
        if (!grown) {
            free(buf);
            return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
        }
        buf = grown;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || cap > max || ferror(f))
            break;
        cap *= 2;
    }
    if (ferror(f)) {
        int saved = errno ? errno : EIO;
        free(buf);
        return read_error(path, saved == EISDIR ? COMET_EINPUT : COMET_EIO, saved, err);
    }
    if (n > max) {
        free(buf);
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                               "cannot read: larger than %zu bytes", max);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return COMET_OK;
}

comet_status cfg_load_file_limit(const char *path, size_t max, char **text, size_t *len,
                                 comet_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return read_error(path, COMET_EINPUT, errno, err);
    comet_status st = read_stream(f, path, max, text, len, err);
    fclose(f);
    return st;
}

comet_status cfg_load_file(const char *path, char **text, size_t *len, comet_error *err)
{
    return cfg_load_file_limit(path, CFG_MAX_TEXT, text, len, err);
}

comet_status comet_config_read_file(const char *path, comet_job *job, comet_error *err)
{
    char *text = NULL;
    size_t len = 0;
    comet_status st = cfg_load_file(path, &text, &len, err);
    if (st)
        return st;
    st = cfg_read_document(text, len, path, 0, job, err);
    free(text);
    return st;
}

/* ---- presets: documents embedded in the library --------------------------- */

/* "model" for "models": the section key a preset of this kind fills. */
static const char *section_of(const char *kind)
{
    return strcmp(kind, "models") == 0 ? "model" : "system";
}

static comet_status read_preset(const cfg_ctx *c, const comet_embedded_preset *p, void *out)
{
    comet_job *job = malloc(sizeof *job);
    if (!job)
        return comet_error_set(c->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_job_init(job);
    char file[256];
    snprintf(file, sizeof file, "presets/%s/%s.yaml", p->kind, p->name);
    comet_status st = cfg_read_document(p->text, p->len, file, c->preset_depth + 1, job, c->err);
    bool models = strcmp(p->kind, "models") == 0;
    if (!st && !(models ? job->has_model : job->has_system))
        st = comet_error_set(c->err, COMET_EINPUT, file, 0, 0, NULL, "preset has no %s: section",
                             section_of(p->kind));
    if (!st && models)
        memcpy(out, &job->model, sizeof job->model);
    else if (!st)
        memcpy(out, &job->system, sizeof job->system);
    free(job);
    return st;
}

comet_status cfg_preset_load(const cfg_ctx *c, const cfg_node *n, const char *name,
                             const char *path, const char *kind, void *out)
{
    char given[COMET_NAME_LEN];
    if (n) {
        CFG_TRY(cfg_read_name(c, n, path, given, sizeof given));
        name = given;
    }
    const comet_embedded_preset *p = cfg_preset_find(kind, name);
    if (!p) {
        char known[256];
        cfg_join(known, sizeof known, comet_preset_names(kind));
        return cfg_fail(c, n, path, "unknown %s preset \"%s\" (known: %s)", section_of(kind),
                        name, known);
    }
    if (c->preset_depth >= CFG_MAX_PRESET_DEPTH)
        return cfg_fail(c, n, path, "presets nest more than %d deep", CFG_MAX_PRESET_DEPTH);
    return read_preset(c, p, out);
}

comet_status cfg_section_read(cfg_ctx *c, const cfg_node *n, const char *path,
                              const cfg_section *sec, void *obj)
{
    if (sec->kind && cfg_is_null(n)) {
        return cfg_fail(c, n, path, "expected a preset name or a mapping, got nothing");
    } else if (sec->kind && n->kind == CFG_SCALAR) {
        CFG_TRY(cfg_preset_load(c, n, NULL, path, sec->kind, obj));
    } else {
        CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
        sec->defaults(obj);
        const cfg_node *preset = sec->kind ? cfg_map_find(n, "preset") : NULL;
        if (preset) {
            char ppath[CFG_PATH_LEN];
            cfg_path_key(ppath, sizeof ppath, path, "preset");
            CFG_TRY(cfg_preset_load(c, preset, NULL, ppath, sec->kind, obj));
            if (sec->loosen)
                sec->loosen(obj);
        }
        CFG_TRY(sec->read ? sec->read(c, n, path, obj)
                          : cfg_fields_read(c, n, path, sec->fields, obj));
    }
    return sec->check ? sec->check(c, path, obj) : COMET_OK;
}

comet_status comet_preset_model(const char *name, comet_model *out, comet_error *err)
{
    cfg_ctx c = {.err = err};
    return cfg_preset_load(&c, NULL, name ? name : "", NULL, "models", out);
}

comet_status comet_preset_system(const char *name, comet_system *out, comet_error *err)
{
    cfg_ctx c = {.err = err};
    return cfg_preset_load(&c, NULL, name ? name : "", NULL, "systems", out);
}
