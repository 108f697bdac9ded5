/* The `strategy:` section: degrees of tensor, pipeline and data
 * parallelism, batch sizes, recomputation, ZeRO, offload, overlap and the
 * placement of the parallel groups on the network dimensions. Whether the
 * strategy suits a model and a system is checked by comet_strategy_resolve;
 * this file checks only what the section says on its own. */
#include <stdio.h>
#include <string.h>

#include "../vocab/vocab.h"
#include "sections.h"

#define MAX_DEGREE 262144
#define MAX_BATCH 2147483648LL
#define MAX_INTERLEAVE 65536

static const cfg_field offload_fields[] = {
    CFG_BOOL("optimizer", comet_strategy, offload_optimizer),
    CFG_BOOL("weights", comet_strategy, offload_weights),
    CFG_BOOL("activations", comet_strategy, offload_activations),
    CFG_END,
};

static const cfg_field overlap_fields[] = {
    CFG_BOOL("dp", comet_strategy, overlap_dp),
    CFG_BOOL("tp", comet_strategy, overlap_tp),
    CFG_END,
};

/* order: a permutation of tp, pp, dp, innermost first. */
static comet_status read_order(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_strategy *s = base;
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n != COMET_GROUP_COUNT)
        return cfg_fail(c, n, path, "must list tp, pp and dp once each");
    comet_group order[COMET_GROUP_COUNT];
    bool seen[COMET_GROUP_COUNT] = {false};
    for (size_t i = 0; i < n->n; i++) {
        char ipath[CFG_PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        int g;
        CFG_TRY(cfg_read_enum(c, cfg_seq_item(n, i), ipath, vocab_group_names, &g));
        if (seen[g])
            return cfg_fail(c, cfg_seq_item(n, i), ipath, "%s is listed twice", vocab_group_names[g]);
        seen[g] = true;
        order[i] = (comet_group)g;
    }
    memcpy(s->order, order, sizeof order);
    return COMET_OK;
}

static comet_status read_span(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                              void *out)
{
    return cfg_read_int(c, n, path, 1, MAX_DEGREE, (int64_t *)out + i);
}

static comet_status read_spans(cfg_ctx *c, const cfg_node *n, const char *path,
                               comet_strategy *s, comet_group g)
{
    int count;
    return cfg_list_read(c, n, path, COMET_MAX_DIMS, read_span, s->place[g], &count);
}

static comet_status read_spans_tp(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    return read_spans(c, n, path, base, COMET_GROUP_TP);
}

static comet_status read_spans_pp(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    return read_spans(c, n, path, base, COMET_GROUP_PP);
}

static comet_status read_spans_dp(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    return read_spans(c, n, path, base, COMET_GROUP_DP);
}

static const cfg_field placement_fields[] = {
    CFG_CUSTOM("tp", read_spans_tp),
    CFG_CUSTOM("pp", read_spans_pp),
    CFG_CUSTOM("dp", read_spans_dp),
    CFG_END,
};

int cfg_placement_dims(const cfg_node *placement)
{
    size_t dims = 0;
    for (int g = 0; g < COMET_GROUP_COUNT; g++) {
        const cfg_node *spans = cfg_map_find(placement, vocab_group_names[g]);
        if (spans && spans->kind == CFG_SEQ && spans->n > dims)
            dims = spans->n;
    }
    return (int)dims;
}

/* placement: {tp: [8, 1], pp: [1, 8], dp: [1, 1]}, one span per network
 * dimension for each group; a group left out spans 1 on every dimension,
 * as does every group on dimensions past the lists. */
static comet_status read_placement(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_strategy *s = base;
    for (int g = 0; g < COMET_GROUP_COUNT; g++)
        for (int d = 0; d < COMET_MAX_DIMS; d++)
            s->place[g][d] = 1;
    CFG_TRY(cfg_fields_read(c, n, path, placement_fields, s));
    int dims = cfg_placement_dims(n);
    if (dims == 0)
        return cfg_fail(c, n, path, "needs spans for tp, pp and dp, e.g. "
                        "{tp: [8, 1], pp: [1, 8], dp: [1, 1]}");
    for (int g = 0; g < COMET_GROUP_COUNT; g++) {
        const cfg_node *spans = cfg_map_find(n, vocab_group_names[g]);
        if (!spans || (int)spans->n == dims)
            continue;
        char key[CFG_PATH_LEN];
        cfg_path_key(key, sizeof key, path, vocab_group_names[g]);
        return cfg_fail(c, spans, key, "lists %d span%s but another group lists %d; give one "
                        "span per network dimension", (int)spans->n, spans->n == 1 ? "" : "s", dims);
    }
    s->placement_given = true;
    return COMET_OK;
}

static const cfg_field strategy_fields[] = {
    CFG_INT("tp", comet_strategy, tp, 1, MAX_DEGREE),
    CFG_INT("pp", comet_strategy, pp, 1, MAX_DEGREE),
    CFG_INT("dp", comet_strategy, dp, 1, MAX_DEGREE),
    CFG_BOOL("sp", comet_strategy, sp),
    CFG_INT("global_batch", comet_strategy, global_batch, 1, MAX_BATCH),
    CFG_INT("microbatch", comet_strategy, microbatch, 1, MAX_BATCH),
    CFG_INT("interleave", comet_strategy, interleave, 1, MAX_INTERLEAVE),
    CFG_ENUM("recompute", comet_strategy, recompute, vocab_recompute_names),
    CFG_INT("zero", comet_strategy, zero_stage, 0, 3),
    CFG_GROUP("offload", offload_fields),
    CFG_GROUP("overlap", overlap_fields),
    CFG_BOOL("grad_fp32", comet_strategy, grad_fp32),
    CFG_BOOL("flash_attention", comet_strategy, flash_attention),
    CFG_CUSTOM("order", read_order),
    CFG_CUSTOM("placement", read_placement),
    CFG_END,
};

static void strategy_defaults(void *obj)
{
    comet_strategy_defaults(obj);
}

const cfg_section cfg_strategy_section = {
    .kind = NULL,
    .fields = strategy_fields,
    .defaults = strategy_defaults,
};
