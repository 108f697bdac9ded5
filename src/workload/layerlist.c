/* Workload builder for generic layer lists (DLRM-like, CNNs, anything
 * described layer by layer): each layer's forward FLOPs and bytes become
 * one roofline op, its own collective is kept, and TP-sharded layers get a
 * tensor-parallel all-reduce of their output. The pipeline splits the
 * layer list evenly: each stage carries 1/pp of every layer kind (a
 * fractional count), so the stage is the average stage (docs/model.md). */
#include "workload.h"

static void build_one(const comet_layer *src, const comet_strategy *s, double per_stage,
                      work_layer *l)
{
    double b = (double)s->microbatch;
    double shard = src->tp_sharded ? (double)s->tp : 1.0;
    l->n_ops = 0;
    /* shape unknown: no reduction-length term */
    work_add_gemm_op(l, b * src->fwd_flops / shard, b * src->fwd_bytes / shard, false, 0.0, 0.0,
                     0.0);
    l->n_comms = 0;
    if (src->tp_sharded && s->tp > 1)
        work_add_comm(l, COMET_COLL_ALL_REDUCE, COMET_GROUP_TP, b * src->out_bytes);
    if (src->comm != COMET_COLL_NONE && src->comm_bytes > 0.0)
        work_add_comm(l, src->comm, src->comm_group, b * src->comm_bytes)->recomputed = false;
    l->count = per_stage;
    l->where = WORK_EVERY_STAGE;
    l->model_parallel = src->model_parallel;
    l->params = src->params / (src->model_parallel ? (double)(s->tp * s->dp) : shard);
    l->act_bytes = b * src->act_bytes / shard;
    l->act_bytes_selective = l->act_bytes;
    l->act_bytes_full = b * src->out_bytes;
    l->moe = false;
    l->expert_params = 0.0;
    l->mlp_op = l->mlp_end = l->n_ops;
    l->mlp_wgrad_bytes = 0.0;
    l->cp_kv_bytes = 0.0; /* context parallelism is refused for layer lists */
    l->attn_seq = 0.0;
    /* its input (what it stashes) and its output's gradient */
    l->wgrad_bytes = l->act_bytes + b * src->out_bytes;
}

void work_build_layers(const comet_model *m, const comet_strategy *s, work_stage *out)
{
    double b = (double)s->microbatch;
    double pp = (double)s->pp;
    double depth = 0.0, out_sum = 0.0, flops = 0.0;
    out->n_layers = 0;
    out->params_npu = 0.0;
    out->params_mp_npu = 0.0;
    out->mp_lookup_bytes = 0.0;
    for (int i = 0; i < m->n_layer_kinds; i++) {
        const comet_layer *src = &m->layer_list[i];
        work_layer *l = &out->layers[out->n_layers++];
        build_one(src, s, (double)src->count / pp, l);
        *(l->model_parallel ? &out->params_mp_npu : &out->params_npu) += l->params * l->count;
        if (l->model_parallel)
            out->mp_lookup_bytes += l->ops[0].bytes * l->count;
        depth += (double)src->count;
        out_sum += (double)src->count * src->out_bytes;
        flops += (double)src->count * src->fwd_flops;
    }
    out->p2p_bytes = depth > 0.0 ? b * out_sum / depth : 0.0;
    out->first_stage_count = out->last_stage_count = -1.0; /* every stage alike */
    out->middle_stage_count = -1.0;
    out->busiest_is_first = out->busiest_is_middle = false;
    out->moe_first_count = out->moe_last_count = 0.0;
    out->params_expert_npu = 0.0;
    out->fwd_flops_model = b * flops;
    out->act_extra = 0.0;
    out->cp_buffer_bytes = 0.0;
    out->fp8_bytes = 0.0; /* fp8 is refused for layer lists (comet_strategy_resolve) */
}
