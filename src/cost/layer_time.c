/* The price of one layer of a kind: forward, backward and recompute
 * compute time on the accelerator's roofline, and its collectives' time
 * per pass. The estimator sums these over the stage; the simulator turns
 * each into a task. One place prices a layer, so the two agree. */
#include <math.h>
#include <string.h>

#include "comet/network.h"
#include "cost.h"

static double comm_time(const comet_system *sys, const comet_strategy *s, coll_memo *memo,
                        const work_comm *c)
{
    int64_t buf[COMET_MAX_DIMS];
    const int64_t *gap = plan_spacing(sys, s, c->group, PLAN_GROUP_RANKS, buf);
    return coll_memo_time_split(memo, sys, s->place[c->group], gap, c->collective, c->bytes,
                                c->outer_bytes);
}

void cp_ring_times(const comet_system *sys, const comet_strategy *s, double kv_bytes,
                   double core_fwd, double core_bwd, cp_ring *out)
{
    memset(out, 0, sizeof *out);
    if (s->cp <= 1 || !(kv_bytes > 0.0))
        return;
    double cp = (double)s->cp;
    int dim = comet_p2p_dim(sys, s->place[COMET_GROUP_CP]);
    out->send_one = comet_p2p_time_on(sys, dim, kv_bytes);
    out->send_two = comet_p2p_time_on(sys, dim, 2.0 * kv_bytes);
    out->step_fwd = core_fwd / cp;
    out->step_bwd = core_bwd / cp;
    /* forward: steps 0..cp-2 each send one block */
    out->sends_fwd = (cp - 1.0) * out->send_one;
    out->exposed_fwd = (cp - 1.0) * comet_fmax(0.0, out->send_one - out->step_fwd);
    out->bytes_fwd = (cp - 1.0) * kv_bytes;
    /* backward: steps 0 and cp-1 send one block, the cp-2 between two */
    out->sends_bwd = 2.0 * out->send_one + (cp - 2.0) * out->send_two;
    out->exposed_bwd = 2.0 * comet_fmax(0.0, out->send_one - out->step_bwd) +
                       (cp - 2.0) * comet_fmax(0.0, out->send_two - out->step_bwd);
    out->bytes_bwd = 2.0 * (cp - 1.0) * kv_bytes;
    /* the sends that hide take their share of the core they hide behind */
    double share = overlap_share(sys, s);
    if (share > 0.0) {
        out->exposed_fwd += share * (out->sends_fwd - out->exposed_fwd);
        out->exposed_bwd += share * (out->sends_bwd - out->exposed_bwd);
    }
}

/* One op's forward and backward time. A GEMM's backward is its input-
 * and weight-gradient GEMMs (each of the forward's size, with their own
 * reduction lengths); a memory-bound op's backward one kernel moving
 * twice the forward's bytes, or the bytes the op says it moves. */
static void op_times(const work_op *op, const hw_rates *r, double *fwd, double *bwd, double *wgrad)
{
    if (op->kind == WORK_GEMM) {
        const double k[3] = {op->k_fwd, op->k_dgrad, op->k_wgrad};
        double t[3];
        hw_gemm_passes(r, op->flops, op->bytes, op->fp8, k, op->m_group, t);
        *fwd = t[0];
        *wgrad = t[2];
        *bwd = t[1] + t[2];
    } else {
        *fwd = hw_vector_time(r, op->mem, op->flops, op->bytes);
        *bwd = hw_vector_time(r, op->mem, 2.0 * op->flops,
                              op->bwd_bytes > 0.0 ? op->bwd_bytes : 2.0 * op->bytes);
        *wgrad = 0.0;
    }
}

/* The host issues each kernel in hw.issue seconds; a pass of a layer
 * whose kernels run shorter than that on average waits for the host (in a
 * stack of equal layers the host cannot run ahead of the GPU for long:
 * the period's time is the slower of the two). The weight-gradient share
 * of the backward scales with it. docs/model.md 6.2. */
static void host_issue_floor(const hw_rates *r, double kernels_fwd, double kernels_bwd,
                             layer_time *out)
{
    if (r->issue <= 0.0)
        return;
    double host_fwd = kernels_fwd * r->issue, host_bwd = kernels_bwd * r->issue;
    if (host_fwd > out->fwd) {
        out->gemm_fwd *= out->fwd > 0.0 ? host_fwd / out->fwd : 0.0;
        out->fwd = host_fwd;
    }
    if (host_bwd > out->bwd) {
        out->wgrad *= out->bwd > 0.0 ? host_bwd / out->bwd : 0.0;
        out->bwd = host_bwd;
    }
}

void layer_times(const work_layer *l, const hw_rates *r, const comet_system *sys,
                 const comet_strategy *s, layer_time *out)
{
    layer_times_memo(l, r, sys, s, NULL, out);
}

void layer_times_memo(const work_layer *l, const hw_rates *r, const comet_system *sys,
                      const comet_strategy *s, coll_memo *memo, layer_time *out)
{
    memset(out, 0, sizeof *out);
    /* Fused (flash) attention with a measured curve is one kernel each
     * way, priced by its shape; otherwise the core is its GEMMs and
     * softmax. */
    bool fused = s->flash_attention && l->attn_seq > 0.0 && hw_has_attention_curve(r);
    double core = 0.0, core_bwd = 0.0, core_flops = 0.0, core_matrix = 0.0;
    double kernels_fwd = 0.0, kernels_bwd = 0.0; /* kernels each pass launches */
    for (int i = 0; i < l->n_ops; i++) {
        const work_op *op = &l->ops[i];
        out->flops += op->flops;
        if (op->attention_core) {
            core_flops += op->flops;
            if (op->kind == WORK_GEMM)
                core_matrix += op->flops;
            if (fused)
                continue;
        }
        double f, b, w;
        op_times(op, r, &f, &b, &w);
        kernels_fwd += 1.0;
        kernels_bwd += op->kind == WORK_GEMM ? 2.0 : 1.0;
        out->fwd += f;
        out->bwd += b;
        if (op->kind == WORK_GEMM)
            out->gemm_fwd += f;
        /* the attention core's GEMMs have no weights: both their backward
         * GEMMs are input gradients */
        if (!op->attention_core)
            out->wgrad += w;
        else {
            core += f;
            core_bwd += b;
        }
    }
    bool recomputed = l->where == WORK_EVERY_STAGE;
    bool full = recomputed && s->recompute == COMET_RECOMPUTE_FULL;
    /* The fused backward kernel rebuilds the scores itself: counted as the
     * core's recompute (below) unless full recompute reruns the forward. */
    double rebuild_in_kernel = 0.0;
    if (fused) {
        double fwd_bwd;
        hw_attention_times(r, core_matrix, l->attn_seq, l->attn_head_dim, l->causal,
                           l->attn_causal_share, &core, &fwd_bwd);
        core_bwd = comet_fmax(fwd_bwd - core, 0.0);
        out->fwd += core;
        out->gemm_fwd += core;
        rebuild_in_kernel = full ? 0.0 : comet_fmin(core, core_bwd);
        out->bwd += core_bwd - rebuild_in_kernel;
        kernels_fwd += 1.0;
        kernels_bwd += 1.0;
    }
    host_issue_floor(r, kernels_fwd, kernels_bwd, out);
    /* Only transformer blocks (every-stage layers) are recomputed; the
     * embedding and LM head are not. */
    if (full) {
        out->recompute = out->fwd;
        out->recompute_flops = out->flops;
    } else if (recomputed && (s->recompute == COMET_RECOMPUTE_SELECTIVE || s->flash_attention)) {
        /* selective recompute, and fused attention's own backward, rebuild
         * the attention core */
        out->recompute = fused ? rebuild_in_kernel : core;
        out->recompute_flops = core_flops;
    }
    if (l->cp_kv_bytes > 0.0) {
        /* Ring CP: backward's steps run the core's backward and, under
         * fused attention or selective recompute, its rebuild (flash
         * attention's backward kernel recomputes the scores step by step);
         * full recompute reruns the forward, its ring included. */
        double rebuilt = full || fused ? 0.0 : out->recompute;
        cp_ring ring;
        cp_ring_times(sys, s, l->cp_kv_bytes, core, core_bwd + rebuilt, &ring);
        out->comm_fwd[COMET_GROUP_CP] += ring.exposed_fwd;
        out->comm_bwd[COMET_GROUP_CP] += ring.exposed_bwd;
        double rc = full ? 1.0 : 0.0;
        out->comm_rc[COMET_GROUP_CP] += rc * ring.exposed_fwd;
        out->cp_hidden = (1.0 + rc) * (ring.sends_fwd - ring.exposed_fwd) + ring.sends_bwd -
                         ring.exposed_bwd;
        out->cp_ring_bytes = (1.0 + rc) * ring.bytes_fwd + ring.bytes_bwd;
    }
    for (int i = 0; i < l->n_comms; i++) {
        const work_comm *c = &l->comms[i];
        double t = comm_time(sys, s, memo, c);
        if (c->in_forward)
            out->comm_fwd[c->group] += t;
        if (c->in_backward)
            out->comm_bwd[c->group] += t;
        if (c->recomputed && full)
            out->comm_rc[c->group] += t;
    }
}
