/* The `strategy:` section: degrees of tensor, pipeline and data
 * parallelism, batch sizes, recomputation, ZeRO, offload, overlap and the
 * placement of the parallel groups on the network dimensions. Its keys,
 * types and limits come from the knob table (comet/knobs.h), the same one
 * the command line and the reports use; this file turns that table into
 * fields for the table-driven reader and reads the two keys that need more
 * than a type (order, placement). Whether the strategy suits a model and a
 * system is checked by comet_strategy_resolve; this file checks only what
 * the section says on its own. */
#include <stdio.h>
#include <string.h>

#include "comet/knobs.h"
#include "../vocab/vocab.h"
#include "sections.h"

#define GROUP_KEY_LEN 32

/* order: tp, pp and dp once each, cp and ep at most once, innermost
 * first; comet_strategy_order_complete places those left out. */
static comet_status read_order(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_strategy *s = base;
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n < COMET_LAYER_GROUPS || n->n > COMET_GROUP_COUNT)
        return cfg_fail(c, n, path, "must list tp, pp and dp once each (and cp, ep at most once)");
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
    for (int g = 0; g < COMET_LAYER_GROUPS; g++)
        if (!seen[g])
            return cfg_fail(c, n, path, "does not list %s", vocab_group_names[g]);
    comet_strategy_order_complete(order, (int)n->n, s->order);
    return COMET_OK;
}

static comet_status read_span(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                              void *out)
{
    return cfg_read_int(c, n, path, 1, COMET_MAX_NPUS, (int64_t *)out + i);
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

static comet_status read_spans_cp(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    return read_spans(c, n, path, base, COMET_GROUP_CP);
}

static comet_status read_spans_ep(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    return read_spans(c, n, path, base, COMET_GROUP_EP);
}

/* ep's spans are a part of dp's (comet/strategy.h); left out, ep takes
 * dp's innermost. */
static const cfg_field placement_fields[] = {
    CFG_CUSTOM("tp", read_spans_tp),
    CFG_CUSTOM("pp", read_spans_pp),
    CFG_CUSTOM("dp", read_spans_dp),
    CFG_CUSTOM("cp", read_spans_cp),
    CFG_CUSTOM("ep", read_spans_ep),
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

/* The section's fields, made from the knob table in its order: a knob
 * whose key has a group (offload.optimizer) is read inside that group's
 * entry, whose own table lies in subs. */
typedef struct knob_fields {
    cfg_field top[COMET_KNOB_COUNT + 1];
    cfg_field subs[2 * COMET_KNOB_COUNT];       /* each group's knobs, then CFG_END */
    char group_keys[COMET_KNOB_COUNT][GROUP_KEY_LEN];
    const char *choices[COMET_KNOB_COUNT][COMET_KNOB_MAX_VALUES + 1];
} knob_fields;

static cfg_field knob_field(const comet_knob *k, const char *key, const char **choices)
{
    cfg_field f = {.key = key, .offset = k->offset, .size = k->size};
    switch (k->type) {
    case COMET_KNOB_T_INT:
        f.type = CFG_T_INT;
        f.lo = k->lo;
        f.hi = k->hi;
        break;
    case COMET_KNOB_T_BOOL:
        f.type = CFG_T_BOOL;
        break;
    case COMET_KNOB_T_CHOICE:
        for (int v = 0; v < k->n_values; v++)
            choices[v] = k->value_name(v);
        choices[k->n_values] = NULL;
        f.type = CFG_T_ENUM;
        f.names = choices;
        break;
    case COMET_KNOB_T_ORDER:
        f.type = CFG_T_CUSTOM;
        f.custom = read_order;
        break;
    case COMET_KNOB_T_PLACEMENT:
        f.type = CFG_T_CUSTOM;
        f.custom = read_placement;
        break;
    }
    return f;
}

static void knob_fields_make(knob_fields *kf)
{
    int n_top = 0, n_sub = 0;
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        const char *key = comet_knob_file_key(k);
        const char *dot = strchr(key, '.');
        if (!dot) {
            kf->top[n_top++] = knob_field(k, key, kf->choices[i]);
            continue;
        }
        int len = (int)(dot - key);
        cfg_field *group = n_top ? &kf->top[n_top - 1] : NULL;
        if (group && group->type == CFG_T_SUB && strncmp(group->key, key, (size_t)len) == 0 &&
            group->key[len] == '\0') {
            n_sub--;    /* the knob joins the group: its entry replaces the CFG_END */
        } else {
            snprintf(kf->group_keys[i], GROUP_KEY_LEN, "%.*s", len, key);
            kf->top[n_top++] = (cfg_field)CFG_GROUP(kf->group_keys[i], &kf->subs[n_sub]);
        }
        kf->subs[n_sub++] = knob_field(k, dot + 1, kf->choices[i]);
        kf->subs[n_sub++] = (cfg_field)CFG_END;
    }
    kf->top[n_top] = (cfg_field)CFG_END;
}

static comet_status read_strategy(cfg_ctx *c, const cfg_node *n, const char *path, void *obj)
{
    knob_fields kf;
    knob_fields_make(&kf);
    return cfg_fields_read(c, n, path, kf.top, obj);
}

static void strategy_defaults(void *obj)
{
    comet_strategy_defaults(obj);
}

const cfg_section cfg_strategy_section = {
    .kind = NULL,
    .read = read_strategy,
    .defaults = strategy_defaults,
};
