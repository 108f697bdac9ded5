/* Strategy defaults and resolution: checks that a strategy can run a model
 * on a system (the knob table's limits, divisibility, NPU count, batch) and
 * lays its parallel groups onto the network dimensions. Every error names
 * the strategy key, so the config layer can point it at a file position,
 * and comes with a fault code, so callers that count refusals (the search)
 * need not read keys. */
#include "comet/strategy.h"

#include <stdio.h>
#include <string.h>

#include "comet/knobs.h"

/* Integer ranges this small are spelled out in errors: "0, 1, 2 or 3". */
#define SPELLED_RANGE 8

void comet_strategy_defaults(comet_strategy *s)
{
    memset(s, 0, sizeof *s);
    s->tp = s->pp = s->dp = s->cp = s->ep = 1;
    s->cp_comm = COMET_CP_RING;
    s->global_batch = 1;
    s->microbatch = 1;
    s->interleave = 1;
    s->recompute = COMET_RECOMPUTE_NONE;
    s->overlap_dp = true;
    s->overlap_tp = false;
    s->framework = COMET_FRAMEWORK_AUTO;
    s->prefetch = 1; /* FSDP's default backward_prefetch, BACKWARD_PRE: the next layer */
    s->expert_tp = 0;  /* as tp */
    s->moe_dispatcher = COMET_MOE_ALLTOALL;
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        s->place_etp[d] = 1;
    static const comet_group megatron[] = {COMET_GROUP_TP, COMET_GROUP_DP, COMET_GROUP_PP};
    comet_strategy_order_complete(megatron, 3, s->order);
}

void comet_strategy_order_complete(const comet_group *given, int n,
                                   comet_group out[COMET_GROUP_COUNT])
{
    bool has_cp = false, has_ep = false;
    for (int i = 0; i < n; i++) {
        has_cp |= given[i] == COMET_GROUP_CP;
        has_ep |= given[i] == COMET_GROUP_EP;
    }
    int k = 0;
    for (int i = 0; i < n && k < COMET_GROUP_COUNT; i++) {
        if (given[i] == COMET_GROUP_DP && !has_ep)
            out[k++] = COMET_GROUP_EP;
        out[k++] = given[i];
        if (given[i] == COMET_GROUP_TP && !has_cp)
            out[k++] = COMET_GROUP_CP;
    }
}

comet_framework comet_strategy_framework(const comet_strategy *s)
{
    if (s->framework != COMET_FRAMEWORK_AUTO)
        return s->framework;
    return s->zero_stage >= 3 ? COMET_FRAMEWORK_FSDP : COMET_FRAMEWORK_MEGATRON;
}

int64_t comet_strategy_npus(const comet_strategy *s)
{
    return s->tp * s->cp * s->pp * s->dp;
}

/* Expert parameters have a gradient group of their own: with expert
 * parallelism, or folded (experts split over fewer ranks than tp). */
static bool experts_apart(const comet_strategy *s)
{
    return s->ep > 1 || comet_strategy_folded(s);
}

void comet_strategy_expert_dp_spans(const comet_strategy *s, int64_t out[COMET_MAX_DIMS])
{
    bool folded = comet_strategy_folded(s);
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        int64_t ep = s->place[COMET_GROUP_EP][d] > 0 ? s->place[COMET_GROUP_EP][d] : 1;
        int64_t dp = s->place[COMET_GROUP_DP][d] > 0 ? s->place[COMET_GROUP_DP][d] : 1;
        if (folded) {
            /* the rest of the stage's tp*cp*dp ranks past expert-TP and EP */
            int64_t cp = s->place[COMET_GROUP_CP][d] > 0 ? s->place[COMET_GROUP_CP][d] : 1;
            int64_t tp = s->place[COMET_GROUP_TP][d] > 0 ? s->place[COMET_GROUP_TP][d] : 1;
            int64_t etp = s->place_etp[d] > 0 ? s->place_etp[d] : 1;
            out[d] = tp * cp * dp / (etp * ep);
        } else {
            out[d] = dp / ep;
        }
    }
}

void comet_strategy_grad_spans(const comet_strategy *s, bool expert, int64_t out[COMET_MAX_DIMS])
{
    bool apart = expert && experts_apart(s);
    if (apart)
        comet_strategy_expert_dp_spans(s, out);
    else
        memcpy(out, s->place[COMET_GROUP_DP], sizeof s->place[COMET_GROUP_DP]);
    /* folded, the expert-DP spans already hold the context-parallel ranks */
    if (apart && comet_strategy_folded(s))
        return;
    for (int d = 0; s->cp > 1 && d < COMET_MAX_DIMS; d++)
        out[d] *= s->place[COMET_GROUP_CP][d] > 0 ? s->place[COMET_GROUP_CP][d] : 1;
}

void comet_strategy_digit_spans(const comet_strategy *s,
                                int64_t out[COMET_RANK_DIGITS][COMET_MAX_DIMS])
{
    int64_t edp[COMET_MAX_DIMS];
    comet_strategy_expert_dp_spans(s, edp);
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        const int64_t v[COMET_RANK_DIGITS] = {
            [COMET_DIGIT_TP] = s->place[COMET_GROUP_TP][d],
            [COMET_DIGIT_CP] = s->place[COMET_GROUP_CP][d],
            [COMET_DIGIT_EP] = s->place[COMET_GROUP_EP][d],
            [COMET_DIGIT_EDP] = edp[d],
            [COMET_DIGIT_PP] = s->place[COMET_GROUP_PP][d]};
        for (int i = 0; i < COMET_RANK_DIGITS; i++)
            out[i][d] = v[i] > 0 ? v[i] : 1;
    }
}

/* The spacing of a group made of the digits in `mask` (a bit per digit):
 * per dimension, the spans of the digits inside the first of them that
 * spans it (comet_strategy_digit_spans' digits, read straight from place[]:
 * the strategy search asks for it at every point). */
static void spacing_of(const comet_strategy *s, unsigned mask, int n_dims,
                       int64_t out[COMET_MAX_DIMS])
{
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        out[d] = 1;
    if (mask == 1u << COMET_DIGIT_TP || comet_strategy_folded(s))
        return; /* the innermost digit; a folded layout does not tile */
    for (int d = 0; d < n_dims && d < COMET_MAX_DIMS; d++) {
        int64_t v[COMET_RANK_DIGITS] = {
            [COMET_DIGIT_TP] = s->place[COMET_GROUP_TP][d],
            [COMET_DIGIT_CP] = s->place[COMET_GROUP_CP][d],
            [COMET_DIGIT_EP] = s->place[COMET_GROUP_EP][d],
            [COMET_DIGIT_EDP] = s->place[COMET_GROUP_DP][d],
            [COMET_DIGIT_PP] = s->place[COMET_GROUP_PP][d]};
        for (int i = 0; i < COMET_RANK_DIGITS; i++)
            v[i] = v[i] > 0 ? v[i] : 1;
        if (v[COMET_DIGIT_EP] > 1)
            v[COMET_DIGIT_EDP] /= v[COMET_DIGIT_EP]; /* dp's span over ep's */
        int64_t gap = 1;
        int i = 0;
        for (; i < COMET_RANK_DIGITS && !((mask >> i & 1u) && v[i] > 1); i++)
            gap *= v[i];
        out[d] = i == COMET_RANK_DIGITS ? 1 : gap;
    }
}

void comet_strategy_group_spacing(const comet_strategy *s, comet_group g, int n_dims,
                                  int64_t out[COMET_MAX_DIMS])
{
    static const unsigned digits[COMET_GROUP_COUNT] = {
        [COMET_GROUP_TP] = 1u << COMET_DIGIT_TP,
        [COMET_GROUP_CP] = 1u << COMET_DIGIT_CP,
        [COMET_GROUP_EP] = 1u << COMET_DIGIT_EP,
        [COMET_GROUP_DP] = 1u << COMET_DIGIT_EP | 1u << COMET_DIGIT_EDP,
        [COMET_GROUP_PP] = 1u << COMET_DIGIT_PP};
    spacing_of(s, (unsigned)g < COMET_GROUP_COUNT ? digits[g] : 0u, n_dims, out);
}

void comet_strategy_grad_spacing(const comet_strategy *s, bool expert, int n_dims,
                                 int64_t out[COMET_MAX_DIMS])
{
    unsigned cp = s->cp > 1 ? 1u << COMET_DIGIT_CP : 0u;
    spacing_of(s,
               cp | (expert && experts_apart(s) ? 1u << COMET_DIGIT_EDP
                                                : 1u << COMET_DIGIT_EP | 1u << COMET_DIGIT_EDP),
               n_dims, out);
}

void comet_strategy_digit_counts(const comet_strategy *s, int64_t out[COMET_RANK_DIGITS])
{
    int64_t ep = s->ep > 1 ? s->ep : 1;
    out[COMET_DIGIT_TP] = s->tp;
    out[COMET_DIGIT_CP] = s->cp;
    out[COMET_DIGIT_EP] = ep;
    out[COMET_DIGIT_EDP] = s->dp / ep;
    out[COMET_DIGIT_PP] = s->pp;
}

int64_t comet_strategy_npu_of(const int64_t spans[COMET_RANK_DIGITS][COMET_MAX_DIMS],
                              const int64_t *sizes, int n_dims,
                              const int64_t idx[COMET_RANK_DIGITS])
{
    int64_t rest[COMET_RANK_DIGITS], npu = 0, stride = 1;
    memcpy(rest, idx, sizeof rest);
    for (int d = 0; d < n_dims; d++) {
        int64_t coord = 0, scale = 1;
        for (int i = 0; i < COMET_RANK_DIGITS; i++) { /* inner to outer */
            coord += (rest[i] % spans[i][d]) * scale;
            rest[i] /= spans[i][d];
            scale *= spans[i][d];
        }
        npu += coord * stride;
        stride *= sizes[d];
    }
    return npu;
}

int64_t comet_strategy_grad_size(const comet_strategy *s, bool expert)
{
    if (expert && comet_strategy_folded(s))
        return s->tp * s->cp * s->dp / (comet_strategy_expert_tp(s) * s->ep);
    return (expert && s->ep > 1 ? s->dp / s->ep : s->dp) * s->cp;
}

bool comet_strategy_experts_apart(const comet_strategy *s)
{
    return experts_apart(s);
}

int64_t comet_strategy_microbatches(const comet_strategy *s)
{
    return s->global_batch / (s->microbatch * s->dp);
}

bool comet_strategy_dualpipe_runs(const comet_strategy *s)
{
    int64_t micro = comet_strategy_microbatches(s);
    return s->pp >= 2 && s->pp % 2 == 0 && s->interleave == 1 && micro % 2 == 0 &&
           micro >= 2 * s->pp;
}

static void note(comet_strategy_refusal *why, comet_strategy_fault fault, comet_knob_id knob)
{
    why->fault = fault;
    why->knob = knob;
}

/* Note which rule was broken and fill err with the message under the knob's
 * key; evaluates to COMET_EINPUT. */
#define REFUSE(why, fault, knob, err, ...) \
    (note((why), (fault), (knob)), comet_error_set((err), COMET_EINPUT, NULL, 0, 0, \
                                                   comet_knob_get(knob)->key, __VA_ARGS__))

/* "0, 1, 2 or 3". */
static void spell_range(char *out, size_t cap, int64_t lo, int64_t hi)
{
    size_t n = 0;
    out[0] = '\0';
    for (int64_t v = lo; v <= hi && n < cap; v++)
        n += (size_t)snprintf(out + n, cap - n, "%s%lld", v == lo ? "" : v == hi ? " or " : ", ",
                              (long long)v);
}

/* Every integer knob within the limits of the knob table. */
static comet_status check_limits(const comet_strategy *s, comet_strategy_refusal *why,
                                 comet_error *err)
{
    const comet_knob *table = comet_knob_table();
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = &table[i];
        if (k->type != COMET_KNOB_T_INT)
            continue;
        long long v = (long long)comet_knob_value(k, s);
        if (v >= k->lo && v <= k->hi)
            continue;
        if (k->hi - k->lo < SPELLED_RANGE) {
            char values[64];
            spell_range(values, sizeof values, k->lo, k->hi);
            return REFUSE(why, COMET_FAULT_LIMIT, i, err, "must be %s, got %lld", values, v);
        }
        if (v < k->lo && k->lo == 1)
            return REFUSE(why, COMET_FAULT_LIMIT, i, err, "must be a positive integer, got %lld", v);
        if (v < k->lo)
            return REFUSE(why, COMET_FAULT_LIMIT, i, err, "must be at least %lld, got %lld",
                          (long long)k->lo, v);
        return REFUSE(why, COMET_FAULT_LIMIT, i, err, "%lld is past comet's limit of %lld", v,
                      (long long)k->hi);
    }
    /* tp*cp*pp*dp could overflow before the limit check. */
    double npus = (double)s->tp * (double)s->cp * (double)s->pp * (double)s->dp;
    if (npus > COMET_MAX_NPUS)
        return REFUSE(why, COMET_FAULT_NPUS_LIMIT, COMET_KNOB_DP, err,
                      "%s = %.0f NPUs is past comet's limit of %d",
                      s->cp > 1 ? "tp*cp*pp*dp" : "tp*pp*dp", npus, COMET_MAX_NPUS);
    return COMET_OK;
}

/* Context parallelism splits a Transformer's sequence: into 2 cp chunks
 * for the ring (each rank takes one from each end, the causal load
 * balance), or cp ways for Ulysses, whose all-to-all regroups by heads. */
static comet_status check_context(const comet_model *m, const comet_strategy *s,
                                  comet_strategy_refusal *why, comet_error *err)
{
    if (s->cp == 1)
        return COMET_OK;
    long long cp = (long long)s->cp;
    if (m->kind != COMET_MODEL_TRANSFORMER)
        return REFUSE(why, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, err,
                      "context parallelism applies to Transformer models only, not to the layer "
                      "list %s", m->name);
    if (s->cp_comm == COMET_CP_RING && m->seq % (2 * s->cp))
        return REFUSE(why, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, err,
                      "ring context parallelism splits the sequence into 2*cp = %lld chunks, "
                      "which does not divide seq (%lld)", 2 * cp, (long long)m->seq);
    if (s->cp_comm == COMET_CP_ULYSSES) {
        if (m->seq % s->cp)
            return REFUSE(why, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, err,
                          "%lld does not divide seq (%lld)", cp, (long long)m->seq);
        if ((m->heads / s->tp) % s->cp)
            return REFUSE(why, COMET_FAULT_CP_SPLIT, COMET_KNOB_CP, err,
                          "Ulysses splits the heads: cp %lld does not divide the %lld heads each "
                          "tp rank holds", cp, (long long)(m->heads / s->tp));
    }
    return COMET_OK;
}

/* Expert parallelism splits an MoE layer's experts over ep ranks of the
 * data-parallel group, or folded (expert_tp < tp) of the stage's
 * tp*cp*dp ranks past the expert-TP ranks; expert_tp divides tp. */
static comet_status check_experts(const comet_model *m, const comet_strategy *s,
                                  comet_strategy_refusal *why, comet_error *err)
{
    if (s->expert_tp > 0 && s->tp % s->expert_tp)
        return REFUSE(why, COMET_FAULT_EP_SPLIT, COMET_KNOB_EXPERT_TP, err,
                      "%lld does not divide tp (%lld): each expert is split over a part of "
                      "the tensor-parallel ranks", (long long)s->expert_tp, (long long)s->tp);
    bool moe = m->kind == COMET_MODEL_TRANSFORMER && m->moe.experts > 0;
    if (moe && comet_strategy_folded(s) && !s->sp)
        return REFUSE(why, COMET_FAULT_EP_SPLIT, COMET_KNOB_EXPERT_TP, err,
                      "%lld below tp (%lld) needs sequence parallelism (sp): folded experts take "
                      "each tensor-parallel rank's sequence shard (Megatron-Core refuses MoE "
                      "with tp > 1 and no sp)", (long long)s->expert_tp, (long long)s->tp);
    if (s->ep == 1)
        return COMET_OK;
    long long ep = (long long)s->ep;
    if (m->kind != COMET_MODEL_TRANSFORMER || m->moe.experts <= 0)
        return REFUSE(why, COMET_FAULT_EP_SPLIT, COMET_KNOB_EP, err,
                      "expert parallelism needs a mixture-of-experts model; %s has no experts "
                      "(model.moe.experts)", m->name);
    if (m->moe.experts % s->ep)
        return REFUSE(why, COMET_FAULT_EP_SPLIT, COMET_KNOB_EP, err,
                      "%lld does not divide the %lld experts (model.moe.experts)", ep,
                      (long long)m->moe.experts);
    if (comet_strategy_folded(s)) {
        int64_t block = s->tp * s->cp * s->dp / comet_strategy_expert_tp(s);
        if (block % s->ep)
            return REFUSE(why, COMET_FAULT_EP_SPLIT, COMET_KNOB_EP, err,
                          "%lld does not divide tp*cp*dp/expert_tp (%lld): folded expert-"
                          "parallel ranks are drawn from a stage's tensor-, context- and data-"
                          "parallel ranks past the expert-TP ranks", ep, (long long)block);
        return COMET_OK;
    }
    if (s->dp % s->ep)
        return REFUSE(why, COMET_FAULT_EP_SPLIT, COMET_KNOB_EP, err,
                      "%lld does not divide dp (%lld): expert-parallel ranks are drawn from the "
                      "data-parallel group (or set expert_tp below tp to fold them over the "
                      "tensor-parallel ranks too)", ep, (long long)s->dp);
    return COMET_OK;
}

/* Uneven first and last stages (Megatron-LM's --decoder-first- and
 * --decoder-last-pipeline-num-layers): Transformer blocks only, one model
 * chunk per stage, and every stage left at least one block. */
static comet_status check_uneven_stages(const comet_model *m, const comet_strategy *s,
                                        int64_t depth, comet_strategy_refusal *why,
                                        comet_error *err)
{
    int64_t first = s->first_stage_layers, last = s->last_stage_layers;
    if (first == 0 && last == 0)
        return COMET_OK;
    comet_knob_id key = first > 0 ? COMET_KNOB_FIRST_STAGE_LAYERS : COMET_KNOB_LAST_STAGE_LAYERS;
    long long given = (long long)(first > 0 ? first : last);
    if (m->kind != COMET_MODEL_TRANSFORMER)
        return REFUSE(why, COMET_FAULT_UNEVEN_STAGES, key, err,
                      "uneven stages apply to Transformer models only, not to the layer list %s",
                      m->name);
    if (s->pp == 1)
        return REFUSE(why, COMET_FAULT_UNEVEN_STAGES, key, err,
                      "%lld needs pipeline parallelism (pp > 1)", given);
    if (s->interleave > 1)
        return REFUSE(why, COMET_FAULT_UNEVEN_STAGES, key, err,
                      "uneven stages run without interleaving, got interleave %lld",
                      (long long)s->interleave);
    for (int i = 0; i < 2; i++) {
        int64_t n = i == 0 ? first : last;
        if (n > depth)
            return REFUSE(why, COMET_FAULT_UNEVEN_STAGES,
                          i == 0 ? COMET_KNOB_FIRST_STAGE_LAYERS : COMET_KNOB_LAST_STAGE_LAYERS,
                          err, "%lld exceeds the model's %lld layers", (long long)n,
                          (long long)depth);
    }
    int64_t rest = depth - first - last, stages = s->pp - (first > 0) - (last > 0);
    key = last > 0 ? COMET_KNOB_LAST_STAGE_LAYERS : COMET_KNOB_FIRST_STAGE_LAYERS;
    if (stages == 0 && rest != 0)
        return REFUSE(why, COMET_FAULT_UNEVEN_STAGES, key, err,
                      "first and last stage hold %lld layers of the model's %lld (pp 2: they "
                      "must hold all)", (long long)(first + last), (long long)depth);
    if (rest < stages)
        return REFUSE(why, COMET_FAULT_UNEVEN_STAGES, key, err,
                      "first_stage_layers %lld and last_stage_layers %lld leave %lld layers for "
                      "%lld %s stages (each needs one)",
                      (long long)first, (long long)last, (long long)(rest < 0 ? 0 : rest),
                      (long long)stages, first > 0 && last > 0 ? "middle" : "other");
    return COMET_OK;
}

static comet_status check_model(const comet_model *m, const comet_strategy *s,
                               comet_strategy_refusal *why, comet_error *err)
{
    long long tp = (long long)s->tp;
    if (m->kind == COMET_MODEL_TRANSFORMER) {
        if (m->heads % s->tp)
            return REFUSE(why, COMET_FAULT_TP_SPLIT, COMET_KNOB_TP, err,
                          "%lld does not divide heads (%lld)", tp, (long long)m->heads);
        if (m->kv_heads % s->tp && s->tp % m->kv_heads)
            return REFUSE(why, COMET_FAULT_TP_SPLIT, COMET_KNOB_TP, err,
                          "%lld and kv_heads (%lld) do not divide each other", tp,
                          (long long)m->kv_heads);
        if (m->ffn % s->tp)
            return REFUSE(why, COMET_FAULT_TP_SPLIT, COMET_KNOB_TP, err,
                          "%lld does not divide ffn (%lld)", tp, (long long)m->ffn);
    }
    comet_status st = check_context(m, s, why, err);
    if (!st)
        st = check_experts(m, s, why, err);
    if (st)
        return st;
    /* Stages may hold unequal numbers of layers (Llama 3 405B ran 126
     * layers on 16 stages); every stage needs at least one. */
    int64_t depth = comet_model_depth(m);
    if (depth < s->pp * s->interleave) {
        if (s->interleave > 1)
            return REFUSE(why, COMET_FAULT_CHUNKS, COMET_KNOB_INTERLEAVE, err,
                          "pp*interleave = %lld model chunks for only %lld layers",
                          (long long)(s->pp * s->interleave), (long long)depth);
        return REFUSE(why, COMET_FAULT_STAGES, COMET_KNOB_PP, err,
                      "%lld stages for only %lld layers", (long long)s->pp, (long long)depth);
    }
    if (s->interleave > 1 && s->pp == 1)
        return REFUSE(why, COMET_FAULT_CHUNKS, COMET_KNOB_INTERLEAVE, err,
                      "%lld needs pipeline parallelism (pp > 1)", (long long)s->interleave);
    if (s->zero_stage >= 3 && s->framework == COMET_FRAMEWORK_MEGATRON)
        return REFUSE(why, COMET_FAULT_FRAMEWORK, COMET_KNOB_FRAMEWORK, err,
                      "megatron shards optimizer state and gradients (ZeRO 1 and 2), not the "
                      "weights: ZeRO 3 needs framework fsdp (or ideal)");
    if (s->schedule == COMET_SCHEDULE_ZB_H1 && s->interleave > 1)
        return REFUSE(why, COMET_FAULT_SCHEDULE, COMET_KNOB_SCHEDULE, err,
                      "zb-h1 runs one model chunk per stage, got interleave %lld (interleave > 1 "
                      "runs interleaved 1F1B)", (long long)s->interleave);
    /* DualPipe (DeepSeek-V3 report, Sec. 3.2.1; deepseek-ai/DualPipe asserts
     * the same): stage i holds stages i and pp-1-i, so pp is even, and
     * half the microbatches enter from each end */
    if (s->schedule == COMET_SCHEDULE_DUALPIPE && s->interleave > 1)
        return REFUSE(why, COMET_FAULT_SCHEDULE, COMET_KNOB_SCHEDULE, err,
                      "dualpipe holds two model chunks per stage of its own, got interleave %lld "
                      "(it needs interleave 1)", (long long)s->interleave);
    if (s->schedule == COMET_SCHEDULE_DUALPIPE && (s->pp < 2 || s->pp % 2))
        return REFUSE(why, COMET_FAULT_SCHEDULE, COMET_KNOB_SCHEDULE, err,
                      "dualpipe pairs stage i with stage pp-1-i, so pp must be even and at least "
                      "2, got pp %lld", (long long)s->pp);
    comet_status uneven = check_uneven_stages(m, s, depth, why, err);
    if (uneven)
        return uneven;
    if (s->global_batch % (s->microbatch * s->dp))
        return REFUSE(why, COMET_FAULT_BATCH_SPLIT, COMET_KNOB_GLOBAL_BATCH, err,
                      "%lld is not a multiple of microbatch*dp (%lld)", (long long)s->global_batch,
                      (long long)(s->microbatch * s->dp));
    int64_t micro = comet_strategy_microbatches(s);
    if (s->interleave > 1 && micro % s->pp)
        return REFUSE(why, COMET_FAULT_BATCH_SPLIT, COMET_KNOB_GLOBAL_BATCH, err,
                      "interleaved schedule needs microbatches (%lld) to be a multiple of pp "
                      "(%lld)", (long long)micro, (long long)s->pp);
    if (s->schedule == COMET_SCHEDULE_DUALPIPE && (micro % 2 || micro < 2 * s->pp))
        return REFUSE(why, COMET_FAULT_SCHEDULE, COMET_KNOB_SCHEDULE, err,
                      "dualpipe sends half the microbatches from each end: it needs an even "
                      "number of them, at least 2*pp (%lld), got %lld (global_batch / "
                      "(microbatch*dp))", (long long)(2 * s->pp), (long long)micro);
    return COMET_OK;
}

/* A system whose dimensions all have fixed sizes is a cluster of exactly
 * their product; one with an open (auto) outermost dimension grows to fit. */
static comet_status check_fixed_size(const comet_system *sys, int64_t npus, comet_error *err)
{
    double total = 1.0;
    for (int d = 0; d < sys->n_dims; d++) {
        if (sys->dims[d].size == 0)
            return COMET_OK;
        total *= (double)sys->dims[d].size;
    }
    if ((double)npus == total)
        return COMET_OK;
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy",
                           "tp*pp*dp = %lld NPUs, but system %s has %.0f (all its network "
                           "dimensions have fixed sizes)",
                           (long long)npus, sys->name, total);
}

/* Effective size of each dimension for npus NPUs, innermost first. */
comet_status comet_system_layout(const comet_system *sys, int64_t npus,
                                 int64_t sizes[COMET_MAX_DIMS], comet_error *err)
{
    comet_status st = check_fixed_size(sys, npus, err);
    if (st)
        return st;
    int64_t left = npus;
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        sizes[d] = 1;
    for (int d = 0; d < sys->n_dims; d++) {
        int64_t size = sys->dims[d].size;
        if (size == 0 || left <= size) {
            if (size != 0 && size % left)
                return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy",
                                       "%lld NPUs do not fill network dimension %s (size %lld) evenly",
                                       (long long)npus, sys->dims[d].name, (long long)size);
            sizes[d] = left;
            left = 1;
            continue;
        }
        if (left % size)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy",
                                   "%lld NPUs are not a multiple of network dimension %s (size %lld)",
                                   (long long)npus, sys->dims[d].name, (long long)size);
        sizes[d] = size;
        left /= size;
    }
    if (left != 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy",
                               "strategy needs %lld NPUs but system %s has only %lld",
                               (long long)npus, sys->name, (long long)(npus / left));
    return COMET_OK;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

int64_t comet_strategy_group_size(const comet_strategy *s, comet_group g)
{
    switch (g) {
    case COMET_GROUP_TP: return s->tp;
    case COMET_GROUP_PP: return s->pp;
    case COMET_GROUP_CP: return s->cp;
    case COMET_GROUP_EP: return s->ep;
    default: return s->dp;
    }
}

/* Ranks a group lays out on its own in the order: dp's place in the order
 * is that of its ranks outside expert parallelism. Folded, expert
 * parallelism is laid out afterwards over the stage's ranks (carve_folded)
 * and takes no place of its own. */
static int64_t layout_size(const comet_strategy *s, comet_group g)
{
    if (comet_strategy_folded(s))
        return g == COMET_GROUP_EP ? 1 : comet_strategy_group_size(s, g);
    return g == COMET_GROUP_DP ? s->dp / s->ep : comet_strategy_group_size(s, g);
}

/* Folded experts (Megatron-Core's MoE Parallel Folding, arXiv 2504.14960;
 * parallel_state.py's expert rank generator, order tp-ep-dp over the
 * ranks of a pipeline stage): per network dimension the stage's ranks are
 * tp*cp*dp; expert-TP takes the innermost of them, then EP (unless its
 * spans are given), the expert-DP group the rest. With tp 2, ep 8 and
 * expert_tp 1 on 8-NPU nodes the EP group is one node. */
static comet_status carve_folded(comet_strategy *s, bool ep_given, comet_error *err)
{
    int64_t room[COMET_MAX_DIMS];
    int64_t left_etp = comet_strategy_expert_tp(s), left_ep = ep_given ? 1 : s->ep;
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        room[d] = s->place[COMET_GROUP_TP][d] * s->place[COMET_GROUP_CP][d] *
                  s->place[COMET_GROUP_DP][d];
        if (ep_given)
            room[d] /= s->place[COMET_GROUP_EP][d];
    }
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        s->place_etp[d] = gcd64(left_etp, room[d]);
        left_etp /= s->place_etp[d];
        room[d] /= s->place_etp[d];
    }
    for (int d = 0; !ep_given && d < COMET_MAX_DIMS; d++) {
        s->place[COMET_GROUP_EP][d] = gcd64(left_ep, room[d]);
        left_ep /= s->place[COMET_GROUP_EP][d];
    }
    if (left_etp != 1 || left_ep != 1)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0,
                               left_etp != 1 ? "strategy.expert_tp" : "strategy.ep",
                               "cannot lay the folded expert %s group (%lld NPUs) onto the "
                               "spans of the stage's tp*cp*dp ranks",
                               left_etp != 1 ? "tensor-parallel" : "parallel",
                               (long long)(left_etp != 1 ? comet_strategy_expert_tp(s) : s->ep));
    return COMET_OK;
}

/* Fill dimensions innermost first, taking groups in s->order. */
static comet_status place_auto(comet_strategy *s, const int64_t sizes[COMET_MAX_DIMS], int n_dims,
                               comet_error *err)
{
    int64_t room[COMET_MAX_DIMS];
    memcpy(room, sizes, sizeof room);
    memset(s->place, 0, sizeof s->place);
    for (int gi = 0; gi < COMET_GROUP_COUNT; gi++) {
        comet_group g = s->order[gi];
        int64_t left = layout_size(s, g);
        for (int d = 0; d < COMET_MAX_DIMS; d++) {
            int64_t span = d < n_dims ? gcd64(left, room[d]) : 1;
            s->place[g][d] = span;
            left /= span;
            room[d] /= span;
        }
        if (left != 1)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy.order",
                                   "cannot lay the %s group (%lld NPUs) onto the network dimensions",
                                   comet_group_name(g), (long long)layout_size(s, g));
    }
    if (comet_strategy_folded(s))
        return carve_folded(s, false, err);
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        s->place[COMET_GROUP_DP][d] *= s->place[COMET_GROUP_EP][d];
    return COMET_OK;
}

/* Given spans without ep's: expert parallelism takes the innermost of the
 * dp group's spans. */
static void carve_ep(comet_strategy *s)
{
    int64_t left = s->ep;
    for (int d = 0; d < COMET_MAX_DIMS; d++) {
        int64_t span = gcd64(left, s->place[COMET_GROUP_DP][d]);
        s->place[COMET_GROUP_EP][d] = span;
        left /= span;
    }
}

#define BAD(err, key, ...) comet_error_set((err), COMET_EINPUT, NULL, 0, 0, (key), __VA_ARGS__)

static comet_status check_placement(comet_strategy *s, const int64_t sizes[COMET_MAX_DIMS],
                                    int n_dims, comet_error *err)
{
    static const char *const keys[COMET_GROUP_COUNT] = {
        "strategy.placement.tp", "strategy.placement.pp", "strategy.placement.dp",
        "strategy.placement.cp", "strategy.placement.ep"};
    int64_t ep_given = 1;
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        ep_given *= s->place[COMET_GROUP_EP][d] > 0 ? s->place[COMET_GROUP_EP][d] : 1;
    bool folded = comet_strategy_folded(s);
    if (ep_given == 1 && s->ep > 1 && !folded)
        carve_ep(s);
    if (ep_given == 1 && folded)
        for (int d = 0; d < COMET_MAX_DIMS; d++)
            s->place[COMET_GROUP_EP][d] = 1;
    for (int g = 0; g < COMET_GROUP_COUNT; g++) {
        int64_t prod = 1;
        for (int d = 0; d < COMET_MAX_DIMS; d++) {
            int64_t span = s->place[g][d];
            if (span < 1 || (d >= n_dims && span != 1) || span > sizes[d])
                return BAD(err, keys[g], "span %lld on dimension %lld is not possible",
                           (long long)span, (long long)d);
            prod *= span; /* <= product of dimension sizes <= COMET_MAX_NPUS: no overflow */
        }
        int64_t want = comet_strategy_group_size(s, (comet_group)g);
        if (folded && g == COMET_GROUP_EP && ep_given == 1)
            want = 1; /* carved below */
        if (prod != want)
            return BAD(err, keys[g], "spans multiply to %lld but the group has %lld NPUs",
                       (long long)prod, (long long)want);
    }
    for (int d = 0; d < n_dims; d++) {
        int64_t stage = s->place[COMET_GROUP_TP][d] * s->place[COMET_GROUP_CP][d] *
                        s->place[COMET_GROUP_DP][d];
        if (folded && stage % s->place[COMET_GROUP_EP][d])
            return BAD(err, keys[COMET_GROUP_EP], "span %lld on dimension %lld does not divide "
                       "the span of the stage's tp*cp*dp ranks there (%lld): folded expert "
                       "parallelism is a part of them", (long long)s->place[COMET_GROUP_EP][d],
                       (long long)d, (long long)stage);
        if (!folded && s->place[COMET_GROUP_DP][d] % s->place[COMET_GROUP_EP][d])
            return BAD(err, keys[COMET_GROUP_EP], "span %lld on dimension %lld does not divide dp's "
                       "span there (%lld): expert parallelism is a part of the dp group",
                       (long long)s->place[COMET_GROUP_EP][d], (long long)d,
                       (long long)s->place[COMET_GROUP_DP][d]);
        int64_t prod = s->place[COMET_GROUP_TP][d] * s->place[COMET_GROUP_PP][d] *
                       s->place[COMET_GROUP_DP][d] * s->place[COMET_GROUP_CP][d];
        if (prod != sizes[d])
            return BAD(err, "strategy.placement", "groups use %lld NPUs of a dimension of size %lld",
                       (long long)prod, (long long)sizes[d]);
    }
    return folded ? carve_folded(s, ep_given > 1, err) : COMET_OK;
}

comet_status comet_strategy_check_fp8(const comet_model *m, const comet_system *sys,
                                      const comet_strategy *s, comet_error *err)
{
    if (!s->fp8)
        return COMET_OK;
    if (!(sys->compute.matrix_flops[COMET_DTYPE_FP8] > 0.0))
        return BAD(err, "strategy.fp8", "system %s gives no fp8 matrix peak (compute.matrix.fp8)",
                   sys->name);
    if (m->kind != COMET_MODEL_TRANSFORMER)
        return BAD(err, "strategy.fp8", "fp8 applies to Transformer models only, not to the "
                                        "layer list %s", m->name);
    return COMET_OK;
}

/* A named attention kernel the system has a curve for (the one its own
 * curve measured, or one of its other kernels'); auto always. */
static comet_status check_attention_kernel(const comet_system *sys, const comet_strategy *s,
                                           comet_error *err)
{
    comet_attn_kernel k = s->attention_kernel;
    const comet_compute *c = &sys->compute;
    int points;
    if (comet_attention_curve(c, k, &points))
        return COMET_OK;
    char have[96] = "";
    size_t n = 0;
    for (int i = 1; i < COMET_ATTN_KERNEL_COUNT; i++)
        if (comet_attention_curve(c, (comet_attn_kernel)i, &points))
            n += (size_t)snprintf(have + n, sizeof have - n, "%s%s", n ? ", " : "",
                                  comet_attn_kernel_name((comet_attn_kernel)i));
    return BAD(err, "strategy.attention_kernel",
               "system %s has no %s attention curve (it has %s)", sys->name,
               comet_attn_kernel_name(k), n ? have : "none by name");
}

comet_status comet_strategy_resolve_why(const comet_model *m, const comet_system *sys,
                                        comet_strategy *s, int64_t dim_sizes[COMET_MAX_DIMS],
                                        comet_strategy_refusal *why, comet_error *err)
{
    note(why, COMET_FAULT_NONE, COMET_KNOB_COUNT);
    comet_status st = check_limits(s, why, err);
    if (!st)
        st = check_model(m, s, why, err);
    if (st)
        return st;
    if (!(sys->compute.matrix_flops[m->dtype] > 0.0))
        return note(why, COMET_FAULT_DTYPE, COMET_KNOB_COUNT),
               BAD(err, "model.dtype", "system %s gives no matrix peak for %s", sys->name,
                   comet_dtype_name(m->dtype));
    st = comet_strategy_check_fp8(m, sys, s, err);
    if (st)
        return note(why, COMET_FAULT_NO_FP8, COMET_KNOB_FP8), st;
    st = check_attention_kernel(sys, s, err);
    if (st)
        return note(why, COMET_FAULT_ATTENTION_KERNEL, COMET_KNOB_ATTENTION_KERNEL), st;
    if ((s->offload_optimizer || s->offload_weights || s->offload_activations ||
         s->offload_gradients) &&
        !sys->expansion.present)
        return note(why, COMET_FAULT_NO_EXPANSION, COMET_KNOB_COUNT),
               BAD(err, "strategy.offload", "system %s has no expansion memory tier to offload to",
                   sys->name);
    int64_t sizes[COMET_MAX_DIMS];
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        s->place_etp[d] = 1;
    st = comet_system_layout(sys, comet_strategy_npus(s), sizes, err);
    if (st)
        return note(why, COMET_FAULT_NETWORK, COMET_KNOB_COUNT), st;
    st = s->placement_given ? check_placement(s, sizes, sys->n_dims, err)
                            : place_auto(s, sizes, sys->n_dims, err);
    if (st)
        return note(why, COMET_FAULT_PLACEMENT,
                    s->placement_given ? COMET_KNOB_PLACEMENT : COMET_KNOB_ORDER), st;
    if (dim_sizes)
        memcpy(dim_sizes, sizes, sizeof sizes);
    return COMET_OK;
}

comet_status comet_strategy_resolve(const comet_model *m, const comet_system *sys,
                                    comet_strategy *s, int64_t dim_sizes[COMET_MAX_DIMS],
                                    comet_error *err)
{
    comet_strategy_refusal why;
    return comet_strategy_resolve_why(m, sys, s, dim_sizes, &why, err);
}
