/* Presets: model and system descriptions embedded in the library at build
 * time (tools/embed.c), so `model: gpt3-175b` works without an install
 * path. A preset file is an ordinary config document, read by the same
 * reader; a section may name one or start from one with `preset:` and then
 * override keys. Nesting is bounded so presets cannot loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "presets.h"
#include "sections.h"

static const comet_embedded_preset *find_preset(const char *kind, const char *name)
{
    for (size_t i = 0; kind && name && i < comet_embedded_preset_count; i++) {
        const comet_embedded_preset *p = &comet_embedded_presets[i];
        if (strcmp(p->kind, kind) == 0 && strcmp(p->name, name) == 0)
            return p;
    }
    return NULL;
}

const char *const *comet_preset_names(const char *kind)
{
    static const struct {
        const char *kind;
        const char *const *names;
    } lists[] = {
        {"models", comet_embedded_model_names},
        {"systems", comet_embedded_system_names},
        {"strategies", comet_embedded_strategy_names},
        {"studies", comet_embedded_study_names},
    };
    for (size_t i = 0; kind && i < sizeof lists / sizeof lists[0]; i++)
        if (strcmp(lists[i].kind, kind) == 0)
            return lists[i].names;
    return NULL;
}

const char *comet_preset_text(const char *kind, const char *name)
{
    const comet_embedded_preset *p = find_preset(kind, name);
    return p ? p->text : NULL;
}

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
    const comet_embedded_preset *p = find_preset(kind, name);
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
