/* Workload builder for mixture-of-experts blocks (Mixtral, DeepSeek-V3,
 * Qwen3-MoE, Llama 4): the dense block's attention part with its MLP
 * replaced by a router, the dispatch and combine all-to-alls over the
 * expert-parallel group, the routed experts of the busiest EP rank and the
 * shared experts, per NPU and per microbatch, as Megatron-Core's
 * all-to-all token dispatcher runs them (expert tensor parallelism = tp,
 * or folded below it), or DeepEP's de-duplicated dispatch.
 * It lives apart from transformer.c so the dense block stays one place;
 * the estimator, the simulator and the export all read what it builds.
 * Formulas and sources: docs/model.md, "Mixture of experts". */
#include <math.h>

#include "workload.h"

/* An MLP of inner size f_local per NPU on `tokens` tokens (fp8 as the
 * dense block's linears), its weights read `copies` times over (a grouped
 * GEMM over this NPU's experts reads each expert's weights once); its
 * first GEMM's stashed input has `in_rows` rows (what ZB-H1's W reads).
 * Returns the weight elements. */
static double add_mlp(work_layer *l, const comet_model *m, double tokens, double in_rows,
                      double f_local, double copies, double e, bool fp8)
{
    double h = (double)m->hidden, mats = m->gated_mlp ? 3.0 : 2.0;
    double wbytes = fp8 ? 1.0 : e;
    double w = work_add_linear(l, tokens, (mats - 1.0) * f_local, h, in_rows, e, fp8);
    l->ops[l->n_ops - 1].bytes += (copies - 1.0) * w * wbytes;
    /* a grouped GEMM's weight gradient reduces over one expert's tokens,
     * its other passes run each expert's few rows (one expert: a plain
     * GEMM) */
    double m_group = copies > 1.0 ? tokens / copies : 0.0;
    l->ops[l->n_ops - 1].k_wgrad = tokens / copies;
    l->ops[l->n_ops - 1].m_group = m_group;
    work_add_vector(l, COMET_MEMK_ACTIVATION, 8.0 * tokens * f_local,
                    (m->gated_mlp ? 3.0 : 2.0) * e * tokens * f_local, false);
    double w2 = work_add_linear(l, tokens, h, f_local, tokens, e, fp8);
    l->ops[l->n_ops - 1].bytes += (copies - 1.0) * w2 * wbytes;
    l->ops[l->n_ops - 1].k_wgrad = tokens / copies;
    l->ops[l->n_ops - 1].m_group = m_group;
    return copies * (w + w2);
}

double work_moe_distinct(double experts, double buckets, double top_k)
{
    if (!(buckets > 1.0))
        return buckets > 0.0 ? 1.0 : 0.0;
    /* C(E - E/n, k) / C(E, k) = prod_{i<k} (E - E/n - i) / (E - i): the
     * chance that a bucket holds none of the k */
    double other = experts - experts / buckets, miss = 1.0;
    for (double i = 0.0; i < top_k && miss > 0.0; i++)
        miss *= other - i > 0.0 ? (other - i) / (experts - i) : 0.0;
    return buckets * (1.0 - miss);
}

void work_moe_dispatch_buffers(const comet_model *m, const comet_strategy *s, double unit,
                               double *inner, double *outer)
{
    double k = (double)m->moe.top_k, E = (double)m->moe.experts, ep = (double)s->ep;
    /* the outer buckets (nodes) of the EP group: its spans past the
     * innermost spanned dimension */
    double nodes = 1.0;
    bool inner_seen = false;
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        double span = s->place[COMET_GROUP_EP][d] > 1 ? (double)s->place[COMET_GROUP_EP][d] : 1.0;
        if (inner_seen)
            nodes *= span;
        inner_seen = inner_seen || span > 1.0;
    }
    if (s->moe_dispatcher != COMET_MOE_DEEPEP) {
        *inner = unit * k;
        *outer = nodes > 1.0 ? unit * k : 0.0;
        return;
    }
    /* node-limited routing: the token's experts lie on M of the nodes, k
     * of the E M / nodes experts there */
    double M = m->moe.max_nodes > 0 && (double)m->moe.max_nodes < nodes ? (double)m->moe.max_nodes
                                                                         : nodes;
    double reach = M / nodes;
    *inner = unit * work_moe_distinct(E * reach, ep * reach, k);
    *outer = nodes > 1.0 ? unit * work_moe_distinct(E * reach, M, k) : 0.0;
}

void work_build_moe_block(const comet_model *m, const comet_strategy *s, const work_layer *dense,
                          double tokens, double tokens_rep, work_layer *l, double *fp8_bytes)
{
    const comet_moe *moe = &m->moe;
    double t = (double)s->tp, ep = (double)s->ep, e = comet_dtype_bytes(m->dtype);
    double etp = (double)comet_strategy_expert_tp(s);
    bool folded = comet_strategy_folded(s);
    double h = (double)m->hidden, k = (double)moe->top_k, E = (double)moe->experts;
    double mats = m->gated_mlp ? 3.0 : 2.0;
    double fe_local = work_moe_expert_ffn(m) / etp, f_local = (double)m->ffn / t;
    double fe_shared = work_moe_expert_ffn(m) / t; /* shared experts split over tp */
    bool fp8 = s->fp8, routed = moe->experts > 1;
    /* Routed slots through this NPU's experts: every token's top_k, on
     * the busiest EP rank imbalance times the mean, at most the capacity
     * factor times it when tokens are dropped; each expert-TP rank of the
     * expert sees all of its expert-TP group's (expert TP = tp: the
     * microbatch's; folded, the T/tp that each of expert_tp ranks
     * dispatches). One EP rank is its own mean. */
    double skew = s->ep > 1 ? fmin(moe->imbalance, ep) : 1.0; /* at most all on one rank */
    if (moe->capacity_factor > 0.0 && moe->capacity_factor < skew)
        skew = moe->capacity_factor;
    double tokens_tp = tokens / t;          /* tokens each TP rank dispatches */
    double slots = (folded ? tokens_tp * etp : tokens) * k * skew;
    double local_experts = E / ep;

    /* the attention part and the residual after the MLP, the MLP replaced */
    *l = *dense;
    /* Folded to expert_tp 1 with no shared experts, nothing of the MLP
     * half is split over tp: the routed experts take the sequence-parallel
     * shard as it is (Megatron-Core's dispatcher gathers over the
     * expert-TP group only, token_dispatcher.py), so the MLP's TP
     * synchronisation (the second of the dense block's two) goes. A shared
     * expert keeps it (its MLP is split over tp); 1 < expert_tp < tp keeps
     * it as the stand-in for the expert-TP gather, as expert_tp = tp does. */
    if (folded && etp == 1.0 && moe->shared == 0 && s->tp > 1) {
        int sync = s->sp ? 3 : 1, first = -1, seen = 0;
        for (int i = 0; i < l->n_comms && first < 0; i++)
            if (l->comms[i].group == COMET_GROUP_TP && ++seen == sync + 1)
                first = i;
        if (first >= 0) {
            for (int i = first; i + sync < l->n_comms; i++)
                l->comms[i] = l->comms[i + sync];
            l->n_comms -= sync;
        }
    }
    l->moe = true;
    l->n_ops = dense->mlp_op;
    l->wgrad_bytes -= dense->mlp_wgrad_bytes; /* the experts' own come with their GEMMs */
    /* the router GEMM, then one memory-bound op for the routing around
     * the experts: softmax and top-k over the logits, the permutation of
     * the tokens into expert order and back, and the weighted combine
     * (one op, so a block fits WORK_MAX_OPS with fp8, dropout and shared
     * experts) */
    if (routed) {
        work_add_gemm(l, tokens_rep, E, h, e, false);
        work_add_vector(l, COMET_MEMK_ELEMENTWISE, 6.0 * tokens_rep * E + tokens_tp * k * h,
                        2.0 * e * tokens_rep * E + 5.0 * e * tokens_tp * k * h, false);
    }
    /* the routed experts' input: the dispatched slots, kept whole (with
     * one expert and no routing, the block's own sequence-parallel input,
     * as the dense MLP's) */
    double fp8_weights = add_mlp(l, m, slots, routed ? slots : tokens_rep, fe_local, local_experts,
                                 e, fp8);
    double gemms = 2.0 * local_experts;
    if (moe->shared > 0) {
        fp8_weights += add_mlp(l, m, tokens, tokens_rep, (double)moe->shared * fe_shared, 1.0, e,
                               fp8);
        gemms += 2.0;
    }
    l->mlp_end = l->n_ops;
    for (int i = dense->mlp_end; i < dense->n_ops; i++)
        l->ops[l->n_ops++] = dense->ops[i];

    /* Dispatch and combine: each TP rank's share of the tokens over the
     * EP group, top_k copies each (alltoall) or one per node and GPU
     * reached (deepep); backward mirrors both. */
    if (s->ep > 1) {
        double inner, outer;
        work_moe_dispatch_buffers(m, s, tokens_tp * h * e, &inner, &outer);
        for (int i = 0; i < 2; i++)
            work_add_comm(l, COMET_COLL_ALL_TO_ALL, COMET_GROUP_EP, inner)->outer_bytes =
                s->moe_dispatcher == COMET_MOE_DEEPEP ? outer : 0.0;
    }

    /* Parameters per NPU: the attention part and the shared experts split
     * by tp, the router replicated, this EP rank's experts split by
     * expert_tp. */
    double expert = work_mlp_params(m, work_moe_expert_ffn(m));
    double attention = work_transformer_block_params(m) - work_mlp_params(m, (double)m->ffn);
    l->expert_params = local_experts * expert / etp;
    l->params = (attention + (double)moe->shared * expert) / t + work_router_params(m) + l->expert_params;

    /* fp8: the dense block's copies less its MLP's, plus this NPU's experts'
     * and the shared experts' and their GEMMs' scaling state. */
    if (fp8)
        *fp8_bytes += fp8_weights - mats * h * f_local +
                      (gemms - 2.0) * WORK_FP8_TENSORS_PER_GEMM * (WORK_FP8_AMAX_HISTORY + 2.0) * 4.0;

    /* Stashed activations: the dense MLP's intermediates give way to the
     * routed slots' and the shared experts' (the same per-token bytes),
     * and routing keeps the router's fp32 logits and probabilities and,
     * per routed slot, the dispatched expert input and its fp32 routing
     * probability. The probability weights the expert's activation
     * output, so the combine after the experts is a plain sum that keeps
     * nothing: the expert output is not stashed (Megatron-Core since
     * "Memory efficient token permutation", NVIDIA/Megatron-LM 2659630721,
     * 2025-04-09: weighted_bias_swiglu in TEGroupedMLP; NeMo AutoModel's
     * grouped experts likewise). Before it Megatron-Core's unpermute
     * applied the probabilities and kept the expert output, h·e bytes
     * more per slot (docs/model.md 17.3). */
    double in = fp8 ? 1.0 : e;
    double per_f = e * (mats - 1.0) + in;
    double delta = (slots * fe_local + tokens * (double)moe->shared * fe_shared - tokens * f_local) *
                   per_f;
    if (routed)
        delta += 8.0 * tokens_rep * E + slots * (h * in + 4.0);
    l->act_bytes += delta;
    l->act_bytes_selective += delta;
}
