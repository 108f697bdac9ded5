/* Whole-model facts derived from a model description (parameter count,
 * pipeline depth and tokens per sample), and work_build, the workload
 * builder's entry, which picks the Transformer or the layer-list builder. */
#include "workload.h"

double comet_model_params(const comet_model *m)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        return (double)m->layers * work_transformer_block_params(m)
             + work_transformer_embedding_params(m);
    double total = 0.0;
    for (int i = 0; i < m->n_layer_kinds; i++)
        total += (double)m->layer_list[i].count * m->layer_list[i].params;
    return total;
}

int64_t comet_model_depth(const comet_model *m)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        return m->layers;
    int64_t depth = 0;
    for (int i = 0; i < m->n_layer_kinds; i++)
        depth += m->layer_list[i].count;
    return depth;
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

int64_t comet_model_tokens_per_sample(const comet_model *m)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        return m->seq;
    return m->sample_tokens > 0 ? m->sample_tokens : 1;
}

/* The builders fill the stage; the whole-model count is the model's own
 * fact (above), so the builders never call back into this file. */
void work_build(const comet_model *m, const comet_strategy *s, work_stage *out)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        work_build_transformer(m, s, out);
    else
        work_build_layers(m, s, out);
    out->params_total = comet_model_params(m);
}

