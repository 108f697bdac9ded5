/* The `model:` section: a Transformer given by its shape, or a generic
 * list of layers, each given by its numbers or by its shape (a CNN's
 * convolutions, pools, batch norms, ReLUs, fc and bottleneck blocks,
 * whose numbers src/workload/cnn.c derives). Besides types and ranges
 * this checks what can be checked on the model alone (heads divisible by
 * kv_heads, a parameter count comet can handle, shapes that chain);
 * checks that need the strategy too live in src/parallel. */
#include <stdio.h>
#include <string.h>

#include "../vocab/vocab.h"
#include "sections.h"

#define MAX_LAYERS 65536
#define MAX_WIDTH 1048576
#define MAX_HEADS 65536
#define MAX_TOKENS 16777216
#define MAX_PARAMS 4e12
#define MAX_SIDE 65536      /* a feature map's height or width, a kernel, stride or padding */

/* A layer's `in:` (its input shape): [height, width, channels], or one
 * number of features (1 x 1 x n), for an fc after a flatten. */
static comet_status read_layer_in(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_layer *l = base;
    static const int64_t hi[3] = {MAX_SIDE, MAX_SIDE, MAX_WIDTH};
    if (n->kind == CFG_SCALAR) {
        l->shape.in[0] = l->shape.in[1] = 1;
        return cfg_read_int(c, n, path, 1, MAX_WIDTH, &l->shape.in[2]);
    }
    CFG_TRY(cfg_expect(c, n, path, CFG_SEQ));
    if (n->n != 3)
        return cfg_fail(c, n, path, "expected [height, width, channels] or a number of "
                        "features, got a list of %zu", n->n);
    for (size_t i = 0; i < 3; i++) {
        char ipath[CFG_PATH_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        CFG_TRY(cfg_read_int(c, cfg_seq_item(n, i), ipath, 1, hi[i], &l->shape.in[i]));
    }
    return COMET_OK;
}

static const cfg_field layer_fields[] = {
    CFG_NAME("name", comet_layer, name),
    CFG_INT("count", comet_layer, count, 1, MAX_LAYERS),
    CFG_QTY0("fwd_flops", comet_layer, fwd_flops, CFG_UNIT_FLOPS),
    CFG_QTY0("fwd_bytes", comet_layer, fwd_bytes, CFG_UNIT_BYTES),
    CFG_REAL("params", comet_layer, params),
    CFG_QTY0("act_bytes", comet_layer, act_bytes, CFG_UNIT_BYTES),
    CFG_QTY0("out_bytes", comet_layer, out_bytes, CFG_UNIT_BYTES),
    CFG_BOOL("tp_sharded", comet_layer, tp_sharded),
    CFG_BOOL("model_parallel", comet_layer, model_parallel),
    CFG_ENUM("comm", comet_layer, comm, vocab_collective_names),
    CFG_ENUM("comm_group", comet_layer, comm_group, vocab_layer_group_names),
    CFG_QTY0("comm_bytes", comet_layer, comm_bytes, CFG_UNIT_BYTES),
    /* the shape form (docs/model.md 13.1) */
    CFG_ENUM("op", comet_layer, shape.op, vocab_layer_op_names),
    CFG_CUSTOM("in", read_layer_in),
    CFG_INT("out_channels", comet_layer, shape.out_channels, 1, MAX_WIDTH),
    CFG_INT("out_features", comet_layer, shape.out_channels, 1, MAX_WIDTH),
    CFG_INT("width", comet_layer, shape.width, 1, MAX_WIDTH),
    CFG_INT("kernel", comet_layer, shape.kernel, 1, MAX_SIDE),
    CFG_INT("stride", comet_layer, shape.stride, 1, MAX_SIDE),
    CFG_INT("padding", comet_layer, shape.padding, 0, MAX_SIDE),
    CFG_INT("groups", comet_layer, shape.groups, 1, MAX_WIDTH),
    CFG_BOOL("bias", comet_layer, shape.bias),
    CFG_ENUM("pool", comet_layer, shape.pool, vocab_pool_names),
    CFG_BOOL("global", comet_layer, shape.global),
    CFG_ENUM("stride_at", comet_layer, shape.stride_at, vocab_stride_at_names),
    CFG_ENUM("variant", comet_layer, shape.variant, vocab_inception_names),
    CFG_END,
};

/* The keys comet derives from a shape, and the shape keys each op takes
 * (indexed by comet_layer_op; `in` goes with every op). */
static const char *const derived_keys[] = {"fwd_flops", "fwd_bytes", "params", "act_bytes",
                                           "out_bytes", NULL};
static const char *const shape_keys[] = {"in", "out_channels", "out_features", "width", "kernel",
                                         "stride", "padding", "groups", "bias", "pool", "global",
                                         "stride_at", "variant", NULL};
static const char *const op_keys[COMET_OP_COUNT][8] = {
    [COMET_OP_CONV] = {"in", "out_channels", "kernel", "stride", "padding", "groups", "bias"},
    [COMET_OP_POOL] = {"in", "pool", "kernel", "stride", "padding", "global"},
    [COMET_OP_BATCHNORM] = {"in"},
    [COMET_OP_RELU] = {"in"},
    [COMET_OP_FC] = {"in", "out_features", "bias"},
    [COMET_OP_BOTTLENECK] = {"in", "width", "out_channels", "stride", "stride_at"},
    [COMET_OP_DROPOUT] = {"in"},
    [COMET_OP_INCEPTION] = {"in", "variant", "width"},
};

/* An entry is given by its numbers or by its shape, not both, and an op
 * takes only its own shape keys. */
static comet_status check_layer_form(cfg_ctx *c, const cfg_node *n, const char *path,
                                     const comet_layer *l)
{
    comet_layer_op op = l->shape.op;
    for (size_t i = 0; i < n->n; i++) {
        const char *key = cfg_map_key(n, i)->text;
        char kpath[CFG_PATH_LEN], allowed[160];
        cfg_path_key(kpath, sizeof kpath, path, key);
        if (op == COMET_OP_NONE && vocab_name_index(shape_keys, key) >= 0)
            return cfg_fail_key(c, kpath, "describes a shape: give op (conv, pool, batchnorm, "
                                "relu, fc or bottleneck) too");
        if (op != COMET_OP_NONE && vocab_name_index(derived_keys, key) >= 0)
            return cfg_fail_key(c, kpath, "comet computes it from the shape (op: %s): leave it "
                                "out", vocab_layer_op_names[op]);
        if (op != COMET_OP_NONE && vocab_name_index(shape_keys, key) >= 0 &&
            vocab_name_index(op_keys[op], key) < 0) {
            cfg_join(allowed, sizeof allowed, op_keys[op]);
            return cfg_fail_key(c, kpath, "does not apply to op: %s (its keys: %s)",
                                vocab_layer_op_names[op], allowed);
        }
    }
    return COMET_OK;
}

static comet_status read_layer(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                               void *out)
{
    comet_layer *l = (comet_layer *)out + i;
    memset(l, 0, sizeof *l);
    l->count = 1;
    l->comm_group = COMET_GROUP_DP;
    CFG_TRY(cfg_fields_read(c, n, path, layer_fields, l));
    if (!l->name[0])
        return cfg_missing(c, path, "name");
    CFG_TRY(check_layer_form(c, n, path, l));
    if (l->comm != COMET_COLL_NONE && l->comm_bytes <= 0)
        return cfg_fail_key(c, path, "comm is %s but comm_bytes is not set",
                            comet_collective_name(l->comm));
    return COMET_OK;
}

static comet_status read_layer_list(cfg_ctx *c, const cfg_node *n, const char *path, void *base)
{
    comet_model *m = base;
    memset(m->layer_list, 0, sizeof m->layer_list);
    return cfg_list_read(c, n, path, COMET_MAX_LAYER_KINDS, read_layer, m->layer_list,
                         &m->n_layer_kinds);
}

#define MAX_EXPERTS 65536

static const cfg_field moe_fields[] = {
    CFG_INT("experts", comet_moe, experts, 1, MAX_EXPERTS),
    CFG_INT("top_k", comet_moe, top_k, 1, MAX_EXPERTS),
    CFG_INT("shared_experts", comet_moe, shared, 0, MAX_EXPERTS),
    CFG_INT("expert_ffn", comet_moe, ffn, 1, MAX_WIDTH),
    CFG_INT("every", comet_moe, every, 1, MAX_LAYERS),
    CFG_INT("first_dense", comet_moe, first_dense, 0, MAX_LAYERS),
    CFG_REAL("capacity_factor", comet_moe, capacity_factor),
    CFG_REAL("imbalance", comet_moe, imbalance),
    CFG_INT("max_nodes", comet_moe, max_nodes, 0, MAX_EXPERTS),
    CFG_END,
};

static const cfg_field model_fields[] = {
    CFG_SKIP("preset"),
    CFG_NAME("name", comet_model, name),
    CFG_ENUM("kind", comet_model, kind, vocab_model_kind_names),
    CFG_INT("layers", comet_model, layers, 1, MAX_LAYERS),
    CFG_INT("hidden", comet_model, hidden, 1, MAX_WIDTH),
    CFG_INT("heads", comet_model, heads, 1, MAX_HEADS),
    CFG_INT("kv_heads", comet_model, kv_heads, 1, MAX_HEADS),
    CFG_INT("head_dim", comet_model, head_dim, 1, MAX_WIDTH),
    CFG_INT("ffn", comet_model, ffn, 1, MAX_WIDTH),
    CFG_INT("seq", comet_model, seq, 1, MAX_TOKENS),
    CFG_INT("vocab", comet_model, vocab, 1, MAX_TOKENS),
    CFG_BOOL("gated_mlp", comet_model, gated_mlp),
    CFG_BOOL("tied_embeddings", comet_model, tied_embeddings),
    CFG_BOOL("learned_positions", comet_model, learned_positions),
    CFG_BOOL("biases", comet_model, biases),
    CFG_BOOL("dropout", comet_model, dropout),
    CFG_BOOL("causal", comet_model, causal),
    CFG_ENUM("dtype", comet_model, dtype, vocab_dtype_names),
    CFG_INT("sample_tokens", comet_model, sample_tokens, 1, MAX_TOKENS),
    CFG_SUB("moe", comet_model, moe, moe_fields),
    CFG_CUSTOM("layer_list", read_layer_list),
    CFG_END,
};

static void model_defaults(void *obj)
{
    comet_model *m = obj;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "custom");
    m->kind = COMET_MODEL_TRANSFORMER;
    m->dtype = COMET_DTYPE_BF16;
    m->sample_tokens = 1;
    m->biases = true;
    m->causal = true;
    m->moe.every = 1;
    m->moe.imbalance = 1.0;
}

/* Before keys override a preset: sizes that followed the shape (kv_heads =
 * heads, ffn = 4 hidden) follow the new shape unless they are set too. */
static void model_loosen(void *obj)
{
    comet_model *m = obj;
    if (m->kv_heads == m->heads)
        m->kv_heads = 0;
    if (m->ffn == 4 * m->hidden)
        m->ffn = 0;
    if (m->moe.ffn == m->ffn)
        m->moe.ffn = 0;
}

/* The moe: sub-map: experts and top_k both given, top_k within the
 * experts, the factors in range, some layer left to be MoE. */
static comet_status check_moe(cfg_ctx *c, const char *path, comet_model *m)
{
    comet_moe *e = &m->moe;
    char moe[CFG_PATH_LEN], key[CFG_PATH_LEN];
    cfg_path_key(moe, sizeof moe, path, "moe");
    bool any = e->experts > 0 || e->top_k > 0 || e->shared > 0 || e->ffn > 0 ||
               e->first_dense > 0 || e->every != 1 || e->capacity_factor != 0.0 ||
               e->imbalance != 1.0 || e->max_nodes != 0;
    if (!any)
        return COMET_OK;
    if (m->kind != COMET_MODEL_TRANSFORMER)
        return cfg_fail_key(c, moe, "mixture-of-experts layers need a Transformer model, not a "
                                    "layer list");
    if (e->experts <= 0)
        return cfg_missing(c, moe, "experts");
    if (e->top_k <= 0)
        return cfg_missing(c, moe, "top_k");
    if (e->top_k > e->experts) {
        cfg_path_key(key, sizeof key, moe, "top_k");
        return cfg_fail_key(c, key, "%lld is more than the %lld experts", (long long)e->top_k,
                            (long long)e->experts);
    }
    if (e->ffn == 0)
        e->ffn = m->ffn;
    if (e->capacity_factor != 0.0 && !(e->capacity_factor >= 1.0 && e->capacity_factor <= 1e3)) {
        cfg_path_key(key, sizeof key, moe, "capacity_factor");
        return cfg_fail_key(c, key, "must be 0 (no token dropping) or between 1 and 1000, got %g",
                            e->capacity_factor);
    }
    if (!(e->imbalance >= 1.0 && e->imbalance <= (double)e->experts)) {
        cfg_path_key(key, sizeof key, moe, "imbalance");
        return cfg_fail_key(c, key, "must be between 1 (balanced) and experts (%lld), got %g",
                            (long long)e->experts, e->imbalance);
    }
    if (comet_model_moe_layers(m, 0, m->layers) == 0) {
        /* name the key that rules every layer out: first_dense when it
         * reaches past the last layer, else every */
        bool past = e->first_dense >= m->layers;
        cfg_path_key(key, sizeof key, moe, past ? "first_dense" : "every");
        return cfg_fail_key(c, key, "with every = %lld and first_dense = %lld none of the %lld "
                            "layers is a mixture-of-experts layer", (long long)e->every,
                            (long long)e->first_dense, (long long)m->layers);
    }
    return COMET_OK;
}

static comet_status check_transformer(cfg_ctx *c, const char *path, comet_model *m)
{
    static const char *const required[] = {"layers", "hidden", "heads", "seq", "vocab"};
    const int64_t given[] = {m->layers, m->hidden, m->heads, m->seq, m->vocab};
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++)
        if (given[i] <= 0)
            return cfg_missing(c, path, required[i]);
    if (m->kv_heads == 0)
        m->kv_heads = m->heads;
    if (m->ffn == 0)
        m->ffn = 4 * m->hidden;
    char key[CFG_PATH_LEN];
    if (m->head_dim == 0 && m->hidden % m->heads) {
        cfg_path_key(key, sizeof key, path, "hidden");
        return cfg_fail_key(c, key, "%lld is not a multiple of heads (%lld)", (long long)m->hidden,
                            (long long)m->heads);
    }
    if (m->heads % m->kv_heads) {
        cfg_path_key(key, sizeof key, path, "kv_heads");
        return cfg_fail_key(c, key, "heads (%lld) must be a multiple of kv_heads (%lld)",
                            (long long)m->heads, (long long)m->kv_heads);
    }
    return COMET_OK;
}

/* The numbers of the entries given by their shape, at the model's dtype
 * (again after keys override a preset: the dtype may have changed). */
static comet_status derive_shapes(cfg_ctx *c, const char *path, comet_model *m)
{
    comet_error e;
    comet_error_clear(&e);
    if (comet_model_derive_shapes(m, &e) == COMET_OK)
        return COMET_OK;
    char key[CFG_PATH_LEN];
    cfg_path_key(key, sizeof key, path, e.key);
    return cfg_fail_key(c, key, "%s", e.message);
}

static comet_status check_layers(cfg_ctx *c, const char *path, comet_model *m)
{
    if (m->n_layer_kinds == 0)
        return cfg_missing(c, path, "layer_list");
    CFG_TRY(derive_shapes(c, path, m));
    int64_t depth = 0;
    double work = 0.0;
    for (int i = 0; i < m->n_layer_kinds; i++) {
        depth += m->layer_list[i].count;
        work += m->layer_list[i].fwd_flops + m->layer_list[i].fwd_bytes;
    }
    if (work <= 0.0) {
        char key[CFG_PATH_LEN];
        cfg_path_key(key, sizeof key, path, "layer_list");
        return cfg_fail_key(c, key, "every layer has zero fwd_flops and fwd_bytes: nothing to time");
    }
    if (depth > MAX_LAYERS) {
        char key[CFG_PATH_LEN];
        cfg_path_key(key, sizeof key, path, "layer_list");
        return cfg_fail_key(c, key, "counts add up to %lld layers; comet's limit is %d",
                            (long long)depth, MAX_LAYERS);
    }
    return COMET_OK;
}

static comet_status model_check(cfg_ctx *c, const char *path, void *obj)
{
    comet_model *m = obj;
    if (m->kind == COMET_MODEL_TRANSFORMER)
        CFG_TRY(check_transformer(c, path, m));
    else
        CFG_TRY(check_layers(c, path, m));
    CFG_TRY(check_moe(c, path, m));
    double params = comet_model_params(m);
    if (!(params <= MAX_PARAMS))
        return cfg_fail_key(c, path, "model has %.1e parameters; comet's limit is 4e12", params);
    return COMET_OK;
}

const cfg_section cfg_model_section = {
    .kind = "models",
    .fields = model_fields,
    .defaults = model_defaults,
    .loosen = model_loosen,
    .check = model_check,
};
