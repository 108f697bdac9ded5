/* DeepPool files for comet deeppool: one `deeppool:` section with the
 * foreground model, the system, the fixed global batch, the cluster size,
 * the sizes of the strong-scaling curve, the interference of multiplexing
 * and the background jobs. The model and system reuse the ordinary
 * section readers; this file reads the rest and checks the whole problem
 * before the planner runs, so a global batch below the GPU count, a
 * cluster the system's dimensions cannot hold or a negative interference
 * cost a one-line error naming file:line:column and the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/deeppool.h"
#include "comet/strategy.h"
#include "sections.h"
#include "srcmap.h"

/* Every key of mapping n is one of keys[]; records where each one is. */
static comet_status known_keys(cfg_ctx *c, const cfg_node *n, const char *path,
                               const char *const *keys)
{
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *k = cfg_map_key(n, i);
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, k->text);
        const cfg_node *v = cfg_map_value(n, i);
        cfg_record(c, kpath, v && v->kind == CFG_SCALAR ? v : k);
        bool known = false;
        for (int j = 0; keys[j]; j++)
            known = known || strcmp(keys[j], k->text) == 0;
        if (!known)
            return cfg_fail_unknown(c, k, kpath, "key", keys);
    }
    return COMET_OK;
}

static comet_status read_background(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                                    void *out)
{
    comet_dp_background *b = (comet_dp_background *)out + i;
    static const char *const keys[] = {"model", "batch", "priority", "gpus", NULL};
    CFG_TRY(known_keys(c, n, path, keys));
    const cfg_node *v;
    char kpath[CFG_PATH_LEN];
    if (!(v = cfg_map_find(n, "model")))
        return cfg_fail(c, n, path, "missing key \"model\"");
    cfg_path_key(kpath, sizeof kpath, path, "model");
    CFG_TRY(cfg_section_read(c, v, kpath, &cfg_model_section, &b->model));
    if (!(v = cfg_map_find(n, "batch")))
        return cfg_fail(c, n, path, "missing key \"batch\" (samples per GPU)");
    cfg_path_key(kpath, sizeof kpath, path, "batch");
    CFG_TRY(cfg_read_int(c, v, kpath, 1, COMET_MAX_BATCH, &b->batch));
    b->priority = 1.0;
    if ((v = cfg_map_find(n, "priority"))) {
        cfg_path_key(kpath, sizeof kpath, path, "priority");
        CFG_TRY(cfg_read_real(c, v, kpath, false, &b->priority));
    }
    if ((v = cfg_map_find(n, "gpus"))) {
        cfg_path_key(kpath, sizeof kpath, path, "gpus");
        CFG_TRY(cfg_read_int(c, v, kpath, 0, COMET_DP_MAX_GPUS, &b->gpus));
    }
    return COMET_OK;
}

static comet_status read_size(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                              void *out)
{
    return cfg_read_int(c, n, path, 1, COMET_DP_MAX_GPUS, (int64_t *)out + i);
}

/* The cluster of `gpus` data parallel on the system: the one check the
 * planner's own layout makes, worded at the key that set the size. */
static comet_status check_cluster(cfg_ctx *c, const comet_deeppool_problem *p, int64_t gpus,
                                  const char *key)
{
    if (p->global_batch < gpus)
        return cfg_fail_key(c, key, "%lld GPUs but a global batch of %lld: data parallelism "
                            "needs at least one sample per GPU (global_batch >= gpus)",
                            (long long)gpus, (long long)p->global_batch);
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.dp = gpus;
    s.global_batch = gpus;
    comet_error e;
    comet_error_clear(&e);
    if (comet_strategy_resolve(&p->model, &p->system, &s, NULL, &e) != COMET_OK)
        return cfg_fail_key(c, key, "%lld GPUs data parallel on %s: %s", (long long)gpus,
                            p->system.name, e.message);
    return COMET_OK;
}

/* The section's keys (a cfg_one_section's read). */
static comet_status read_deeppool(cfg_ctx *c, void *obj, const cfg_node *n)
{
    comet_deeppool_problem *p = obj;
    static const char *const keys[] = {"name", "model", "system", "global_batch", "gpus",
                                       "scaling", "interference", "amplification",
                                       "background", NULL};
    CFG_TRY(known_keys(c, n, "deeppool", keys));
    const cfg_node *v;
    if ((v = cfg_map_find(n, "name")))
        CFG_TRY(cfg_read_name(c, v, "deeppool.name", p->name, sizeof p->name));
    if (!(v = cfg_map_find(n, "model")))
        return cfg_fail(c, n, "deeppool", "missing key \"model\"");
    CFG_TRY(cfg_section_read(c, v, "deeppool.model", &cfg_model_section, &p->model));
    if (!(v = cfg_map_find(n, "system")))
        return cfg_fail(c, n, "deeppool", "missing key \"system\"");
    CFG_TRY(cfg_section_read(c, v, "deeppool.system", &cfg_system_section, &p->system));
    if (!(v = cfg_map_find(n, "global_batch")))
        return cfg_fail(c, n, "deeppool", "missing key \"global_batch\"");
    CFG_TRY(cfg_read_int(c, v, "deeppool.global_batch", 1, COMET_MAX_BATCH, &p->global_batch));
    if (!(v = cfg_map_find(n, "gpus")))
        return cfg_fail(c, n, "deeppool", "missing key \"gpus\"");
    CFG_TRY(cfg_read_int(c, v, "deeppool.gpus", 1, COMET_DP_MAX_GPUS, &p->gpus));
    if ((v = cfg_map_find(n, "scaling"))) {
        CFG_TRY(cfg_expect(c, v, "deeppool.scaling", CFG_SEQ));
        CFG_TRY(cfg_list_read(c, v, "deeppool.scaling", COMET_DP_MAX_SCALING, read_size,
                              p->scaling, &p->n_scaling));
    }
    if ((v = cfg_map_find(n, "interference"))) {
        CFG_TRY(cfg_read_real(c, v, "deeppool.interference", false, &p->interference));
        if (!(p->interference >= 0.0) || !isfinite(p->interference))
            return cfg_fail(c, v, "deeppool.interference", "must be 0 or more (the "
                            "foreground's slowdown while sharing its GPUs), got %g",
                            p->interference);
    }
    if ((v = cfg_map_find(n, "amplification"))) {
        CFG_TRY(cfg_read_real(c, v, "deeppool.amplification", false, &p->amplification));
        if (p->amplification != 0.0 && !(p->amplification >= 1.0))
            return cfg_fail(c, v, "deeppool.amplification", "must be 1 or more (a layer's "
                            "GPU-time over its least), or 0 for no limit; got %g",
                            p->amplification);
    }
    if ((v = cfg_map_find(n, "background"))) {
        CFG_TRY(cfg_expect(c, v, "deeppool.background", CFG_SEQ));
        CFG_TRY(cfg_list_read(c, v, "deeppool.background", COMET_DP_MAX_BACKGROUND,
                              read_background, p->background, &p->n_background));
    }
    CFG_TRY(check_cluster(c, p, p->gpus, "deeppool.gpus"));
    for (int i = 0; i < p->n_scaling; i++) {
        char key[CFG_PATH_LEN];
        snprintf(key, sizeof key, "deeppool.scaling[%d]", i);
        CFG_TRY(check_cluster(c, p, p->scaling[i], key));
    }
    return COMET_OK;
}

static void deeppool_init(void *obj)
{
    comet_deeppool_problem *p = obj;
    snprintf(p->name, sizeof p->name, "deeppool");
}

static const cfg_one_section deeppool_document = {
    .name = "deeppool",
    .article = "a",
    .unnamed = "<deeppool>",
    .size = sizeof(comet_deeppool_problem),
    .map_offset = offsetof(comet_deeppool_problem, srcmap),
    .init = deeppool_init,
    .read = read_deeppool,
};

comet_status comet_deeppool_read_text(const char *text, size_t len, const char *filename,
                                      comet_deeppool_problem *p, comet_error *err)
{
    return cfg_one_section_read_text(&deeppool_document, text, len, filename, p, err);
}

comet_status comet_deeppool_read_file(const char *path, comet_deeppool_problem *p,
                                      comet_error *err)
{
    return cfg_one_section_read_file(&deeppool_document, path, p, err);
}
