/* Reading a whole config document into a comet_job: the document is a
 * mapping with any of `model:`, `system:` and `strategy:`; sections present
 * replace those of the job. A document is read all or nothing, so a job is
 * never left half-updated by an error. Also the file entry point. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sections.h"
#include "srcmap.h"

void comet_job_init(comet_job *job)
{
    memset(job, 0, sizeof *job);
    comet_strategy_defaults(&job->strategy);
}

static comet_status read_model(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_job *job = base;
    CFG_TRY(cfg_section_read(c, n, path, &cfg_model_section, &job->model));
    job->has_model = true;
    return COMET_OK;
}

static comet_status read_system(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_job *job = base;
    CFG_TRY(cfg_section_read(c, n, path, &cfg_system_section, &job->system));
    job->has_system = true;
    return COMET_OK;
}

static comet_status read_strategy(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_job *job = base;
    CFG_TRY(cfg_section_read(c, n, path, &cfg_strategy_section, &job->strategy));
    job->has_strategy = true;
    return COMET_OK;
}

static const cfg_field document_fields[] = {
    CFG_CUSTOM("model", read_model),
    CFG_CUSTOM("system", read_system),
    CFG_CUSTOM("strategy", read_strategy),
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
