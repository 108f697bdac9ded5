/* Whole-model facts derived from a model description (parameter count
 * and tokens per sample), and work_build, the workload
 * builder's entry, which picks the Transformer or the layer-list builder
 * and lists a pipeline's stages as runs of alike ones. */
#include "workload.h"

/* A Transformer's parameters with every expert (active = false) or those
 * one token uses: its dense blocks, its MoE blocks, embedding and head. */
static double transformer_params(const comet_model *m, bool active)
{
    double moe = (double)comet_model_moe_layers(m, 0, m->layers);
    double total = (double)m->layers * work_transformer_block_params(m)
                 + work_transformer_embedding_params(m);
    if (moe > 0.0)
        total += moe * (work_moe_block_params(m, active) - work_transformer_block_params(m));
    return total;
}

double comet_model_active_params(const comet_model *m)
{
    return m->kind == COMET_MODEL_TRANSFORMER ? transformer_params(m, true) : comet_model_params(m);
}

double comet_model_params(const comet_model *m)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        return transformer_params(m, false);
    double total = 0.0;
    for (int i = 0; i < m->n_layer_kinds; i++)
        total += (double)m->layer_list[i].count * m->layer_list[i].params;
    return total;
}

int64_t comet_model_tokens_per_sample(const comet_model *m)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        return m->seq;
    return m->sample_tokens > 0 ? m->sample_tokens : 1;
}

/* The builders fill the stage; the whole-model count is the model's own
 * fact (above), so the builders never call back into this file. */
/* out->stage_runs: the stages in order, a new run wherever the blocks
 * change and at the second and the last stage (the first holds the
 * embedding, the last the LM head). */
static void stage_runs(const comet_model *m, const comet_strategy *s, work_stage *out)
{
    out->n_stage_runs = 0;
    if (m->kind != COMET_MODEL_TRANSFORMER || s->pp < 2 || s->interleave != 1)
        return;
    for (int64_t st = 0; st < s->pp; st++) {
        int64_t blocks, moe;
        work_stage_block_counts(m, s, st, &blocks, &moe);
        work_stage_run *r = &out->stage_runs[out->n_stage_runs - (st > 0)];
        if (st > 1 && st < s->pp - 1 && r->blocks == blocks && r->moe == moe) {
            r->last = st;
            continue;
        }
        if (st > 0 && out->n_stage_runs == WORK_STAGE_RUNS) {
            out->n_stage_runs = 0;
            return;
        }
        out->stage_runs[out->n_stage_runs++] = (work_stage_run){st, st, blocks, moe};
    }
}

void work_build(const comet_model *m, const comet_strategy *s, work_stage *out)
{
    if (m->kind == COMET_MODEL_TRANSFORMER)
        work_build_transformer(m, s, out);
    else
        work_build_layers(m, s, out);
    out->params_total = comet_model_params(m);
    stage_runs(m, s, out);
}

