/* The building blocks of a layer's work, shared by the Transformer and the
 * mixture-of-experts builders: one op (FLOPs, bytes), a GEMM, a linear
 * layer's GEMM (with FP8's cast and the weight-gradient inputs ZB-H1
 * keeps), one collective. Apart from both builders so that neither calls
 * into the other for them. */
#include <string.h>

#include "workload.h"

static work_op *push_op(work_layer *l, work_op_kind kind, double flops, double bytes, bool core)
{
    work_op *op = &l->ops[l->n_ops++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->flops = flops;
    op->bytes = bytes;
    op->attention_core = core;
    return op;
}

/* One memory-bound op of a layer's forward: its kind of kernel, FLOPs, HBM
 * bytes, and whether it is part of the attention core (recomputed under
 * selective recompute). */
work_op *work_add_vector(work_layer *l, comet_mem_kernel kind, double flops, double bytes,
                         bool core)
{
    work_op *op = push_op(l, WORK_VECTOR, flops, bytes, core);
    op->mem = kind;
    return op;
}

/* One GEMM with its reduction lengths in forward and in its backward GEMMs. */
work_op *work_add_gemm_op(work_layer *l, double flops, double bytes, bool core, double k_fwd,
                          double k_dgrad, double k_wgrad)
{
    work_op *op = push_op(l, WORK_GEMM, flops, bytes, core);
    op->k_fwd = k_fwd;
    op->k_dgrad = k_dgrad;
    op->k_wgrad = k_wgrad;
    return op;
}

/* A GEMM of (M x K) by (K x N): 2MNK FLOPs, reads both inputs, writes the
 * output. Its input gradient (M x N by N x K) reduces over N, its weight
 * gradient (K x M by M x N) over M. */
void work_add_gemm(work_layer *l, double mdim, double ndim, double kdim, double elem, bool core)
{
    work_add_gemm_op(l, 2.0 * mdim * ndim * kdim, elem * (mdim * kdim + kdim * ndim + mdim * ndim),
                     core, kdim, ndim, mdim);
}

/* A linear layer's GEMM of a block, whose input the layer stashes as
 * `in_rows` rows (fewer than mdim when sequence parallelism shards it; the
 * backward gathers it again). Without fp8 the GEMM above. With fp8
 * (Transformer Engine style) first a cast kernel: the activation input
 * (M x K) read in the model's dtype, scaled, its amax taken and written as
 * 1-byte FP8 (2 FLOPs and e + 1 bytes per element, a vector op); then the
 * GEMM at the fp8 peak, reading both inputs in FP8 (the weight's FP8 copy)
 * and writing its output in the model's dtype. Backward charges the cast
 * twice, like every vector op: the output gradient's cast (and its
 * transposed copy for the weight gradient). Returns the weight's elements. */
double work_add_linear(work_layer *l, double mdim, double ndim, double kdim, double in_rows,
                         double elem, bool fp8)
{
    /* a split backward's W reads the stashed input and the output's
     * gradient, kept from B until W runs (ZB-H1) */
    l->wgrad_bytes += (fp8 ? 1.0 : elem) * in_rows * kdim + elem * mdim * ndim;
    if (!fp8) {
        work_add_gemm(l, mdim, ndim, kdim, elem, false);
        return kdim * ndim;
    }
    work_add_vector(l, COMET_MEMK_CAST, 2.0 * mdim * kdim, (elem + 1.0) * mdim * kdim, false);
    work_add_gemm_op(l, 2.0 * mdim * ndim * kdim, mdim * kdim + kdim * ndim + elem * mdim * ndim,
                     false, kdim, ndim, mdim)->fp8 = true;
    return kdim * ndim;
}

work_comm *work_add_comm(work_layer *l, comet_collective c, comet_group g, double bytes)
{
    work_comm *cm = &l->comms[l->n_comms++];
    cm->collective = c;
    cm->group = g;
    cm->bytes = bytes;
    cm->outer_bytes = 0.0;
    cm->in_forward = true;
    cm->in_backward = true;
    cm->recomputed = true;
    return cm;
}

