/* The price of one layer of a kind: forward, backward and recompute
 * compute time on the accelerator's roofline, and its collectives' time
 * per pass. The estimator sums these over the stage; the simulator turns
 * each into a task. One place prices a layer, so the two agree. */
#include <math.h>
#include <string.h>

#include "comet/network.h"
#include "cost.h"

static double comm_time(const comet_system *sys, const comet_strategy *s, const work_comm *c)
{
    return comet_collective_time(sys, s->place[c->group], c->collective, c->bytes);
}

void layer_times(const work_layer *l, const hw_rates *r, const comet_system *sys,
                 const comet_strategy *s, layer_time *out)
{
    memset(out, 0, sizeof *out);
    double core = 0.0, core_flops = 0.0;
    for (int i = 0; i < l->n_ops; i++) {
        const work_op *op = &l->ops[i];
        double t = op->kind == WORK_GEMM ? hw_gemm_time(r, op->flops, op->bytes, op->fp8)
                                         : hw_vector_time(r, op->flops, op->bytes);
        out->fwd += t;
        out->flops += op->flops;
        if (op->kind == WORK_GEMM)
            out->gemm_fwd += t;
        /* a GEMM with weights: dX (B) and dW (W) each cost one forward
         * GEMM; the attention core's GEMMs have no weights, both their
         * backward GEMMs are input gradients */
        if (op->kind == WORK_GEMM && !op->attention_core)
            out->wgrad += t;
        if (op->attention_core) {
            core += t;
            core_flops += op->flops;
        }
    }
    /* Backward: two GEMMs of each forward GEMM's size, twice the vector
     * traffic. Only transformer blocks (every-stage layers) are
     * recomputed; the embedding and LM head are not. */
    out->bwd = 2.0 * out->fwd;
    bool recomputed = l->where == WORK_EVERY_STAGE;
    bool full = recomputed && s->recompute == COMET_RECOMPUTE_FULL;
    if (full) {
        out->recompute = out->fwd;
        out->recompute_flops = out->flops;
    } else if (recomputed && (s->recompute == COMET_RECOMPUTE_SELECTIVE || s->flash_attention)) {
        /* selective recompute, and fused attention's own backward, rebuild
         * the attention core */
        out->recompute = core;
        out->recompute_flops = core_flops;
    }
    for (int i = 0; i < l->n_comms; i++) {
        const work_comm *c = &l->comms[i];
        double t = comm_time(sys, s, c);
        if (c->in_forward)
            out->comm_fwd[c->group] += t;
        if (c->in_backward)
            out->comm_bwd[c->group] += t;
        if (c->recomputed && full)
            out->comm_rc[c->group] += t;
    }
}
