/* What a model's shape implies on its own, before any strategy: its depth
 * in layers (what pipeline stages split; the strategy checks read it), and
 * for a Transformer the width of a head, the parameters of a dense block,
 * of the embedding and LM head and of an MoE block, the MLPs' model FLOPs,
 * and which layers are mixture-of-experts layers. Below the builders
 * (transformer.c, moe.c) and the whole-model facts (model.c), which all
 * read it, and calling none of them. */
#include "workload.h"

int64_t comet_model_depth(const comet_model *m)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        return m->layers;
    int64_t depth = 0;
    for (int i = 0; i < m->n_layer_kinds; i++)
        depth += m->layer_list[i].count;
    return depth;
}

double work_head_dim(const comet_model *m)
{
    return m->head_dim > 0 ? (double)m->head_dim : (double)m->hidden / (double)m->heads;
}

double work_transformer_block_params(const comet_model *m)
{
    double h = (double)m->hidden, f = (double)m->ffn;
    double q = (double)m->heads * work_head_dim(m);              /* Q width */
    double kv = 2.0 * (double)m->kv_heads * work_head_dim(m);    /* K and V widths */
    double mats = m->gated_mlp ? 3.0 : 2.0;
    double weights = h * (q + kv) + q * h + mats * h * f;
    double biases = m->biases ? (q + kv) + h + (m->gated_mlp ? 2.0 * f : f) + h : 0.0;
    double norms = m->biases ? 4.0 * h : 2.0 * h; /* LayerNorm: gain+bias; RMSNorm: gain */
    return weights + biases + norms;
}

double work_transformer_embedding_params(const comet_model *m)
{
    double h = (double)m->hidden, v = (double)m->vocab;
    double table = v * h;
    double head = m->tied_embeddings ? 0.0 : v * h;
    double pos = m->learned_positions ? (double)m->seq * h : 0.0;
    double final_norm = m->biases ? 2.0 * h : h;
    return table + head + pos + final_norm;
}

bool comet_model_is_moe_layer(const comet_model *m, int64_t layer)
{
    return m->kind == COMET_MODEL_TRANSFORMER && m->moe.experts > 0 && layer >= m->moe.first_dense &&
           (layer + 1) % m->moe.every == 0;
}

int64_t comet_model_moe_layers(const comet_model *m, int64_t first, int64_t count)
{
    if (m->kind != COMET_MODEL_TRANSFORMER || m->moe.experts <= 0 || count <= 0)
        return 0;
    int64_t lo = first > m->moe.first_dense ? first : m->moe.first_dense;
    int64_t hi = first + count;
    if (hi <= lo)
        return 0;
    /* layer i qualifies when i + 1 is a multiple of every: count the
     * multiples in lo+1 .. hi */
    return hi / m->moe.every - lo / m->moe.every;
}

double work_moe_expert_ffn(const comet_model *m)
{
    return m->moe.ffn > 0 ? (double)m->moe.ffn : (double)m->ffn;
}

/* One MLP of inner size f: its weight matrices and, for models with
 * biases, the biases (the same count as work_transformer_block_params). */
double work_mlp_params(const comet_model *m, double f)
{
    double h = (double)m->hidden;
    double mats = m->gated_mlp ? 3.0 : 2.0;
    double biases = m->biases ? (m->gated_mlp ? 2.0 * f : f) + h : 0.0;
    return mats * h * f + biases;
}

/* The router: a hidden x experts linear layer, none with one expert
 * (nothing to route). */
double work_router_params(const comet_model *m)
{
    return m->moe.experts > 1 ? (double)m->hidden * (double)m->moe.experts : 0.0;
}

double work_moe_block_params(const comet_model *m, bool active)
{
    double attention = work_transformer_block_params(m) - work_mlp_params(m, (double)m->ffn);
    double routed = (double)(active ? m->moe.top_k : m->moe.experts);
    return attention + work_router_params(m) +
           (routed + (double)m->moe.shared) * work_mlp_params(m, work_moe_expert_ffn(m));
}

double work_dense_mlp_model_flops(const comet_model *m, double tokens)
{
    return 2.0 * (m->gated_mlp ? 3.0 : 2.0) * tokens * (double)m->hidden * (double)m->ffn;
}

double work_moe_mlp_model_flops(const comet_model *m, double tokens)
{
    double used = (double)(m->moe.top_k + m->moe.shared);
    return 2.0 * tokens * work_router_params(m) +
           2.0 * (m->gated_mlp ? 3.0 : 2.0) * tokens * (double)m->hidden * work_moe_expert_ffn(m) *
               used;
}

