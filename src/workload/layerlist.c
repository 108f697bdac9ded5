/* Workload builder for generic layer lists (DLRM-like, CNNs, anything
 * described layer by layer): each layer's forward FLOPs and bytes become
 * one roofline op (an entry given by its shape: one op per kernel it
 * runs, each convolution a GEMM with its reduction lengths and each batch
 * norm, ReLU, add or pool a memory-bound kernel of its kind, since kernels
 * run one after another and a convolution's time hides none of the
 * traffic around it), its own collective is kept, and TP-sharded layers get a
 * tensor-parallel all-reduce of their output. The pipeline splits the
 * layer list evenly: each stage carries 1/pp of every layer kind (a
 * fractional count), so the stage is the average stage (docs/model.md). */
#include "workload.h"

/* The kind of memory-bound kernel a shape's kernel is priced as. */
static const comet_mem_kernel mem_of[WORK_SHAPE_KIND_COUNT] = {
    [WORK_SHAPE_BATCHNORM] = COMET_MEMK_BATCHNORM,
    [WORK_SHAPE_ACTIVATION] = COMET_MEMK_ACTIVATION,
    [WORK_SHAPE_ELEMENTWISE] = COMET_MEMK_ELEMENTWISE,
    [WORK_SHAPE_POOL] = COMET_MEMK_POOL,
};

/* An entry given by its shape: its kernels, each priced on its own, with
 * bytes of `elem` per element, for a microbatch of b over `shard` NPUs.
 * False when it has none (then it is priced by its numbers). */
static bool add_kernels(const comet_layer_shape *sh, double b, double shard, double elem,
                        work_layer *l)
{
    work_shape_kernel kernels[WORK_SHAPE_MAX_KERNELS];
    int n = work_shape_kernels(sh, elem, kernels);
    for (int i = 0; i < n; i++) {
        const work_shape_kernel *k = &kernels[i];
        double weights = k->weights * elem / shard, flops = b * k->flops / shard;
        double bytes = b * (k->traffic - k->weights) * elem / shard + weights;
        if (k->kind == WORK_SHAPE_GEMM)
            work_add_gemm_op(l, flops, bytes, false, k->k_fwd, k->k_dgrad, b * k->k_wgrad);
        else if (k->bwd_traffic > 0.0)
            work_add_vector(l, mem_of[k->kind], flops, bytes, false)->bwd_bytes =
                b * k->bwd_traffic * elem / shard + weights;
        else
            work_add_vector(l, mem_of[k->kind], flops, bytes, false);
    }
    return n > 0;
}

static void build_one(const comet_layer *src, const comet_strategy *s, double elem,
                      double per_stage, work_layer *l)
{
    double b = (double)s->microbatch;
    double shard = src->tp_sharded ? (double)s->tp : 1.0;
    l->n_ops = 0;
    if (!add_kernels(&src->shape, b, shard, elem, l)) /* by its numbers: one op, no
                                                          reduction-length term */
        work_add_gemm_op(l, b * src->fwd_flops / shard, b * src->fwd_bytes / shard, false, 0.0,
                         0.0, 0.0);
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
        build_one(src, s, comet_dtype_bytes(m->dtype), (double)src->count / pp, l);
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
