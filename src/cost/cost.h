/* Internal: what one training step costs, shared by both engines. The
 * estimator's closed form (src/estimate) and the simulator's task graph
 * (src/sim) read the same three things from here, so every step-level
 * fact is worked out once:
 *   - layer prices: a layer's forward, backward and recompute time and its
 *     collectives' time per pass (layer_time.c);
 *   - the memory footprint per tier and what is offloaded (footprint.c);
 *   - the step plan: the microbatch count, data-parallel reductions and
 *     ZeRO gathers with their collectives and bytes, the optimizer's bytes,
 *     expansion-memory moves and the pipeline sends with their network
 *     dimension (step_plan.c).
 * ZeRO 3 under fsdp's per-layer passes (fsdp.c) and a memo of collective
 * prices for callers that price many alike (coll_memo.c) sit beside them.
 * This is the cost folder's interface to other folders. */
#ifndef COMET_COST_H
#define COMET_COST_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include "comet/estimate.h"
#include "comet/network.h"
#include "../core/core.h"
#include "../hardware/hardware.h"
#include "../workload/workload.h"

/* ---- collective prices kept (coll_memo.c) ---- */

/* comet_collective_time's answers, by their exact inputs: direct-mapped
 * slots, a newer price taking an older one's slot. */
enum { COLL_MEMO_SLOTS = 128 };

typedef struct coll_memo_entry {
    const comet_system *sys;   /* NULL: empty */
    int64_t span[COMET_MAX_DIMS], spacing[COMET_MAX_DIMS];
    comet_collective collective;
    double bytes, outer, time;     /* outer: comet_collective_time_split's */
} coll_memo_entry;

/* A pipeline send's load (comet_p2p_shift_load), by its inputs. */
typedef struct shift_memo_entry {
    const comet_system *sys;   /* NULL: empty */
    int dim;
    int64_t stride, along;
    double load;
} shift_memo_entry;
enum { SHIFT_MEMO_SLOTS = 16 };

typedef struct coll_memo {
    coll_memo_entry entry[COLL_MEMO_SLOTS];
    shift_memo_entry shift[SHIFT_MEMO_SLOTS];
} coll_memo;

void coll_memo_init(coll_memo *m);

/* comet_collective_time_placed(sys, span, spacing, c, bytes, 0), from `m`
 * where it holds it (m NULL: priced every time). */
double coll_memo_time(coll_memo *m, const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                      const int64_t spacing[COMET_MAX_DIMS], comet_collective c, double bytes);
/* comet_p2p_shift_load(sys, d, stride, along), from `m` where it holds it
 * (m NULL: priced every time). */
double coll_memo_shift_load(coll_memo *m, const comet_system *sys, int d, int64_t stride,
                            int64_t along);
/* ... with an all-to-all de-duplicated past the innermost dimension
 * (outer, comet_collective_time_split's). */
double coll_memo_time_split(coll_memo *m, const comet_system *sys,
                            const int64_t span[COMET_MAX_DIMS],
                            const int64_t spacing[COMET_MAX_DIMS], comet_collective c,
                            double bytes, double outer);

/* ---- layer prices (layer_time.c) ---- */

/* One layer of a kind, priced (seconds per layer, per NPU, per microbatch). */
typedef struct layer_time {
    double fwd, bwd, recompute;               /* compute */
    double gemm_fwd;                          /* GEMM share of fwd */
    double wgrad;                             /* the weight-gradient share of bwd (W): one
                                                 GEMM per forward GEMM with weights; the rest
                                                 of bwd is the input gradient (B) */
    double comm_fwd[COMET_GROUP_COUNT];       /* the layer's collectives, by pass: what */
    double comm_bwd[COMET_GROUP_COUNT];       /* blocks the compute after them (for ring */
    double comm_rc[COMET_GROUP_COUNT];        /* CP, the exchange's exposed part) */
    double cp_hidden;                         /* ring CP: its sends' time hidden behind the
                                               * attention core, all passes */
    double cp_ring_bytes;                     /* ring CP: bytes its sends carry, all passes */
    double flops, recompute_flops;            /* per NPU */
} layer_time;

/* Ring context parallelism's K/V exchange in one layer (docs/model.md,
 * context parallelism): the pass's attention core runs in cp steps, one
 * per K/V block; while a step computes, the rank sends the block it holds
 * to its ring neighbour (and receives the next). Forward: cp-1 sends of the
 * K/V block. Backward, as Transformer Engine runs it: the first step
 * sends K/V, steps 1..cp-2 K/V with the dK/dV accumulated so far (two
 * blocks' bytes, one message), the last dK/dV alone: 2(cp-1) blocks. A
 * send hides behind its step's compute; what it takes beyond is exposed;
 * the last step has no send (nothing left to pass on). */
typedef struct cp_ring {
    double send_one, send_two;     /* one send of one block, of two blocks */
    double step_fwd, step_bwd;     /* attention core compute of one step */
    double sends_fwd, sends_bwd;   /* the pass's sends, hidden or not */
    double exposed_fwd, exposed_bwd;
    double bytes_fwd, bytes_bwd;   /* (cp-1) and 2(cp-1) blocks */
} cp_ring;

/* The ring exchange of a `kv_bytes` block over strategy s's cp group (its
 * sends on the outermost network dimension the group spans: the slowest
 * hop paces every step), around an attention core of core_fwd seconds
 * forward and core_bwd backward. All zero when cp is 1 or kv_bytes 0. */
void cp_ring_times(const comet_system *sys, const comet_strategy *s, double kv_bytes,
                   double core_fwd, double core_bwd, cp_ring *out);

/* Layer l priced under s; layer_times_memo prices its collectives through
 * `memo` (NULL: none), to the same doubles. */
void layer_times(const work_layer *l, const hw_rates *r, const comet_system *sys,
                 const comet_strategy *s, layer_time *out);
void layer_times_memo(const work_layer *l, const hw_rates *r, const comet_system *sys,
                      const comet_strategy *s, coll_memo *memo, layer_time *out);

/* Activation bytes one layer stashes per microbatch under the strategy's
 * recomputation (inline: the footprint asks per layer kind in the
 * search's inner loop). */
static inline double layer_stashed_bytes(const work_layer *l, comet_recompute rc)
{
    return rc == COMET_RECOMPUTE_FULL        ? l->act_bytes_full
         : rc == COMET_RECOMPUTE_SELECTIVE ? l->act_bytes_selective
                                           : l->act_bytes;
}

/* ---- memory footprint (footprint.c) ---- */

typedef struct footprint {
    double optimizer_offloaded;   /* fraction of optimizer state in the expansion tier */
    double weights_offloaded;
    double activations_offloaded;
    double gradients_offloaded;
    /* Expansion traffic that streams behind compute, on the tier's one
     * channel per NPU: per microbatch and pass (forward: weights in and
     * activations out; backward: weights in and activations back), and
     * the updated weights written once at the end; each in one transfer
     * per layer. */
    double pass_bytes;
    double pass_transfers;
    double final_bytes;
    double final_transfers;
    /* Offloaded gradients (their ZeRO shard, not fsdp's one-layer working
     * buffer): written in every microbatch's backward, read back to
     * accumulate from the second microbatch on, and read once by the
     * optimizer step; each way in grad_transfers transfers (one per layer). */
    double grad_bytes;
    double grad_transfers;
} footprint;

struct step_plan;

/* Fill out->mem, mem_total, mem_capacity, feasible and infeasible, and fp,
 * for the step `plan` (step_plan_build of the same inputs): ZeRO's
 * sharding and the microbatch count come from it. Explicit offloads move a
 * whole kind; when HBM still overflows and an expansion tier exists,
 * optimizer state spills first, then weights, then gradients, then
 * activations, each only as much as needed. */
/* The most activation memory any stage holds, its program walked: a pass
 * through virtual stage vs stashes full[k] until its backward or, split,
 * keeps wg[k] from its input gradient to its W (k 0 for the first
 * virtual stage, 2 the last, 1 any other); O(p^2) per call whatever the
 * microbatches. The reference for a schedule's stash_most. */
double footprint_walked_stash(const comet_strategy *s, double micro, const double full[3],
                              const double wg[3]);

void footprint_compute(const comet_system *sys, const comet_strategy *s, const work_stage *w,
                       const struct step_plan *plan, footprint *fp, comet_result *out);

/* ---- ZeRO 3 under fsdp: per-layer gathers (fsdp.c) ---- */

/* A run of equal layers of one pass, in forward order: how many, one
 * layer's compute (with what its own collectives leave exposed), the
 * all-gather of its weights and (backward) the reduce-scatter of its
 * gradients, each as priced on the data-parallel group. */
typedef struct fsdp_run {
    double count;
    double compute, gather, reduce;
} fsdp_run;

typedef struct fsdp_time {
    double compute;            /* the pass's compute */
    double comm;               /* its gathers and reduce-scatters, end to end */
    double exposed;            /* the time the pass takes beyond its compute */
    double hidden;             /* communication that ran while the compute did */
} fsdp_time;

/* One pass (forward, or backward: runs walked in reverse, a reduce-scatter
 * after each layer) over n_runs runs: gathers go out on one stream in
 * layer order, at most `prefetch` layers ahead of the layer computing
 * (prefetch 0: a layer's gather starts when the layer before it has
 * computed); a layer computes once its gather is in. docs/model.md,
 * frameworks. */
void fsdp_pass(const fsdp_run *runs, int n_runs, int64_t prefetch, bool backward, fsdp_time *out);

/* Passes already worked out, by their exact inputs: a strategy search's
 * thread keeps one from point to point, since points that differ only in
 * their offloads or pipeline schedule run the same passes. */
enum { FSDP_CACHE_SLOTS = 8, FSDP_CACHE_RUNS = 8 };

typedef struct fsdp_cache_entry {
    int n_runs;                /* 0: empty */
    bool backward;
    int64_t prefetch;
    fsdp_run runs[FSDP_CACHE_RUNS];
    fsdp_time out;
} fsdp_cache_entry;

typedef struct fsdp_cache {
    fsdp_cache_entry entry[FSDP_CACHE_SLOTS];
    int next;                  /* the slot the next new pass takes */
} fsdp_cache;

void fsdp_cache_init(fsdp_cache *c);

/* fsdp_pass, through `cache` where one is given (NULL: none). */
void fsdp_pass_cached(fsdp_cache *cache, const fsdp_run *runs, int n_runs, int64_t prefetch,
                      bool backward, fsdp_time *out);

/* Where the system prices a group's spacing (comet_spacing_priced): that
 * of group g's ranks into buf, or, grads set, of a gradient group's
 * (comet_strategy_grad_spans: PLAN_DENSE_GRADS, PLAN_EXPERT_GRADS);
 * else NULL, side by side. */
enum { PLAN_GROUP_RANKS = 0, PLAN_DENSE_GRADS = 1, PLAN_EXPERT_GRADS = 2 };

static inline const int64_t *plan_spacing(const comet_system *sys, const comet_strategy *s,
                                          comet_group g, int grads,
                                          int64_t buf[COMET_MAX_DIMS])
{
    if (!comet_spacing_priced(sys))
        return NULL;
    if (grads)
        comet_strategy_grad_spacing(s, grads == PLAN_EXPERT_GRADS, sys->n_dims, buf);
    else
        comet_strategy_group_spacing(s, g, sys->n_dims, buf);
    return buf;
}

/* The share of compute throughput overlapped communication takes under
 * strategy s (the system's compute.overlap_slowdown; 0 under framework
 * ideal, which keeps overlap free). */
static inline double overlap_share(const comet_system *sys, const comet_strategy *s)
{
    return comet_strategy_framework(s) == COMET_FRAMEWORK_IDEAL ? 0.0
                                                                 : sys->compute.overlap_slowdown;
}

/* What of one layer instance's TP communication `comm` (all its passes)
 * stays exposed under TP overlap (docs/model.md 7.4): it hides behind the
 * GEMMs of the same passes, `gemm_window`, only as chunks (collective
 * matmul), so the first chunk's share stays exposed, and what hides takes
 * its share of the GEMMs. Without overlap all of it. The estimate and the
 * step simulator both price a layer's TP exposure with it. */
static inline double layer_tp_exposed(const comet_system *sys, const comet_strategy *s,
                                      double comm, double gemm_window)
{
    if (!s->overlap_tp)
        return comm;
    double exposed = comet_fmax(comm / (double)comet_collective_chunks(sys), comm - gemm_window);
    return exposed + overlap_share(sys, s) * (comm - exposed);
}

/* The GEMMs a layer's TP communication can hide behind: its forward's,
 * twice that in backward, and the recomputed forward's under full
 * recompute (blocks only). */
static inline double layer_gemm_window(const work_layer *l, const comet_strategy *s,
                                       const layer_time *lt)
{
    bool full = l->where == WORK_EVERY_STAGE && s->recompute == COMET_RECOMPUTE_FULL;
    return lt->gemm_fwd * (3.0 + (full ? 1.0 : 0.0));
}

/* ---- the step plan (step_plan.c) ---- */

/* When a step-level collective may run behind compute: not at all, or
 * behind one microbatch's forward or backward (overlap on). */
typedef enum plan_window {
    PLAN_EXPOSED = 0,
    PLAN_BEHIND_FORWARD,
    PLAN_BEHIND_BACKWARD,
    PLAN_WINDOW_COUNT
} plan_window;

/* What data parallelism and ZeRO do with each replicated parameter (model-
 * parallel parameters, such as embedding tables split over all NPUs, are
 * neither reduced nor gathered nor sharded). */
typedef struct plan_dp {
    bool active;                 /* dp x cp > 1: dense gradients are reduced */
    bool expert_active;          /* (dp/ep) x cp > 1: expert gradients are reduced */
    bool expert_apart;           /* ep > 1: expert parameters are reduced, gathered and
                                  * sharded over their own group (else with the dense ones) */
    bool overlap;                /* reductions and gathers may hide behind compute */
    comet_collective reduce;     /* of the gradients: all-reduce (ZeRO 0) or reduce-scatter */
    bool reduce_each_micro;      /* ZeRO 2/3 keep a gradient shard only: every microbatch's
                                  * gradients are reduced as its backward ends; else once,
                                  * after the last microbatch */
    bool gather_each_pass;       /* ZeRO 3: weights gathered before each forward and backward */
    bool gather_after_step;      /* ZeRO 1/2: updated weights gathered once after the optimizer */
    plan_window gather_window;   /* ... behind the next forward (megatron) or exposed */
    bool per_layer;              /* ZeRO 3 under fsdp: each layer's gathers and reduce-scatter
                                  * are collectives of their own on one stream, priced layer
                                  * by layer (fsdp.c), not as step-level comms */
    int64_t prefetch;            /* ... layers a gather may run ahead */
    double gather_bucket;        /* ... parameters per all-gather message (0: a layer's) */
    double reduce_bucket;        /* ... parameters per reduce-scatter message (0: a layer's) */
    double grad_bytes;           /* bytes per parameter reduced (4 with fp32 gradients) */
    double grad_held_bytes;      /* ... held between backward and the optimizer: grad_bytes,
                                  * or the model's dtype when the optimizer keeps no master
                                  * copy (it updates the weights with gradients of their type) */
    double weight_bytes;         /* bytes per parameter gathered (the model's dtype) */
    double optimizer_state_bytes; /* bytes of optimizer state per parameter (docs/model.md 9.1) */
    /* Copies one NPU holds a 1/shards share of: the gradient group's
     * size (dp x cp, comet_strategy_grad_size) for what ZeRO shards
     * (weights from stage 3, gradients from 2, optimizer state from 1),
     * else 1; the expert_ ones for expert parameters ((dp/ep) x cp). */
    double weight_shards, grad_shards, optimizer_shards;
    double expert_weight_shards, expert_grad_shards, expert_optimizer_shards;
} plan_dp;

/* Of `params` replicated parameters, `expert` of them experts: what one
 * NPU holds of them when ZeRO keeps a 1/shards share (dense / shards +
 * expert / expert shards). */
static inline double plan_held(double params, double expert, double shards, double expert_shards)
{
    return (params - expert) / shards + expert / expert_shards;
}


/* A step-level collective of the busiest stage, per NPU. */
typedef struct plan_comm {
    comet_collective collective;
    comet_group group;
    double bytes;              /* per issue */
    bool each_micro;           /* issued once per microbatch, else once per step */
    plan_window window;
    bool gather;               /* a ZeRO weight gather (else a gradient reduction) */
    bool expert;               /* over the expert-DP group (comet_strategy_grad_spans) */
} plan_comm;

#define PLAN_MAX_COMMS 8

/* Expansion-memory traffic of the step (none when the tier cannot move data). */
typedef struct plan_expansion {
    double bandwidth;          /* bytes/s one NPU gets of the tier; 0: no usable tier */
    double latency;            /* seconds per transfer */
} plan_expansion;

/* Pipeline sends between neighbouring stages. */
typedef struct plan_send {
    double bytes;              /* activation (forward) or its gradient (backward), per microbatch */
    int dim;                   /* network dimension they use; -1 without a pipeline */
    double per_micro;          /* sends per microbatch on the busiest stage: forward and
                                * backward through each of its v model chunks */
    double load;               /* the factor on their bytes' time: every rank of a stage
                                * sends at once, sharing a Clos's uplinks
                                * (comet_p2p_shift_load) */
} plan_send;

typedef struct step_plan {
    int64_t microbatches;      /* per step, per data-parallel replica */
    double elem;               /* bytes of one element of the model's dtype */
    plan_dp dp;
    int n_comms;               /* the busiest stage's step-level DP collectives */
    plan_comm comms[PLAN_MAX_COMMS];
    double optimizer_bytes_per_param;  /* HBM bytes the optimizer step moves per parameter */
    plan_expansion expansion;
    plan_send send;
} step_plan;

/* The plan of one step for the busiest stage of `w` under the resolved
 * strategy s: its memory facts (step_plan_memory: microbatches, element
 * size, the DP and ZeRO rules, the expansion tier's rate and latency),
 * all the footprint needs, then its traffic (step_plan_traffic: the DP
 * collectives, optimizer bytes, pipeline sends). The strategy search ranks
 * only what fits, so the estimator builds the traffic once memory fits. */
void step_plan_build(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                     const work_stage *w, step_plan *out);
void step_plan_memory(const comet_model *m, const comet_system *sys, const comet_strategy *s,
                      step_plan *out);
void step_plan_traffic(const comet_system *sys, const comet_strategy *s, coll_memo *memo,
                       const work_stage *w, step_plan *out);

/* Messages one layer's collective of `params` parameters goes out in,
 * under a bucket of `bucket` parameters (0: one message). */
static inline double plan_messages(double params, double bucket)
{
    return bucket > 0.0 && params > bucket ? ceil(params / bucket) : 1.0;
}

/* Under per-layer ZeRO 3: the time of one layer's weight all-gather
 * (gather) or gradient reduce-scatter, `params` parameters of which
 * `expert` experts, as messages of at most the plan's bucket over the
 * gradient group (the experts' over theirs, after); priced through `memo`
 * (NULL: none). */
double plan_layer_collective(const comet_system *sys, const comet_strategy *s, const plan_dp *dp,
                             coll_memo *memo, bool gather, double params, double expert);

/* HBM bytes the optimizer step moves per parameter it updates. */
double optimizer_bytes_per_param(const comet_strategy *s, double elem);
/* Bytes of optimizer state per parameter (12 for fp32 Adam). */
double optimizer_state_bytes(const comet_strategy *s, double elem);

/* HBM bytes the optimizer step of a stage holding `replicated` parameters,
 * `expert` of them experts (and w's model-parallel tables), reads and writes. */
double plan_optimizer_bytes(const step_plan *p, const work_stage *w, double replicated,
                            double expert);

/* Seconds of one transfer of `bytes` to or from the expansion tier: its
 * latency and the bytes at one NPU's share of its bandwidth; 0 when
 * nothing moves or no tier can move it. */
double plan_expansion_time(const plan_expansion *e, double bytes);

#endif
