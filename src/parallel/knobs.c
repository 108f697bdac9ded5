/* The one table of strategy knobs (comet/knobs.h): for each knob its report
 * name, file key, type, limits, command-line flag, help line and field.
 * The strategy file reader, the command line, the report's knob columns and
 * comet_strategy_resolve all read their knobs from here, so a knob's name,
 * flag and limits cannot disagree between them. The table is in the order
 * strategy files list their keys; report columns and help lines have their
 * own positions, since those orders are part of comet's output. */
#include "comet/knobs.h"

#include <string.h>

static const char *recompute_value(int value)
{
    return comet_recompute_name((comet_recompute)value);
}

static const char *cp_comm_value(int value)
{
    return comet_cp_comm_name((comet_cp_comm)value);
}

static const char *schedule_value(int value)
{
    return comet_schedule_name((comet_schedule)value);
}

static const char *framework_value(int value)
{
    return comet_framework_name((comet_framework)value);
}

static const char *moe_dispatcher_value(int value)
{
    return comet_moe_dispatcher_name((comet_moe_dispatcher)value);
}

static const char *optimizer_state_value(int value)
{
    return comet_optimizer_state_name((comet_optimizer_state)value);
}

static const char *attention_kernel_value(int value)
{
    return comet_attn_kernel_name((comet_attn_kernel)value);
}

#define FIELD(member) .offset = offsetof(comet_strategy, member), \
                      .size = sizeof(((comet_strategy *)0)->member)
#define INT_KNOB(member, lo_, hi_) .type = COMET_KNOB_T_INT, FIELD(member), .lo = (lo_), .hi = (hi_)
#define BOOL_KNOB(member) .type = COMET_KNOB_T_BOOL, FIELD(member)

static const comet_knob knobs[COMET_KNOB_COUNT] = {
    [COMET_KNOB_TP] = {
        .name = "tp", .key = "strategy.tp", INT_KNOB(tp, 1, COMET_MAX_NPUS),
        .flag = "--tp", .flag_form = COMET_FLAG_VALUE, .column = 0, .help_line = 0,
        .help_usage = "--tp N --pp N --dp N", .help = "tensor, pipeline, data parallel sizes"},
    [COMET_KNOB_PP] = {
        .name = "pp", .key = "strategy.pp", INT_KNOB(pp, 1, COMET_MAX_NPUS),
        .flag = "--pp", .flag_form = COMET_FLAG_VALUE, .column = 1, .help_line = 0},
    [COMET_KNOB_DP] = {
        .name = "dp", .key = "strategy.dp", INT_KNOB(dp, 1, COMET_MAX_NPUS),
        .flag = "--dp", .flag_form = COMET_FLAG_VALUE, .column = 2, .help_line = 0},
    [COMET_KNOB_SP] = {
        .name = "sp", .key = "strategy.sp", BOOL_KNOB(sp),
        .flag = "--sp", .flag_off = "--no-sp", .flag_form = COMET_FLAG_PAIR, .column = 3,
        .help_line = 3, .help_usage = "--sp | --no-sp", .help = "sequence parallelism"},
    [COMET_KNOB_GLOBAL_BATCH] = {
        .name = "global_batch", .key = "strategy.global_batch",
        INT_KNOB(global_batch, 1, COMET_MAX_BATCH),
        .flag = "--gbs", .flag_alias = "--global-batch", .flag_form = COMET_FLAG_VALUE,
        .search_flag = true, .column = 5, .help_line = 1},
    [COMET_KNOB_MICROBATCH] = {
        .name = "microbatch", .key = "strategy.microbatch",
        INT_KNOB(microbatch, 1, COMET_MAX_BATCH),
        .flag = "--mb", .flag_alias = "--microbatch", .flag_form = COMET_FLAG_VALUE,
        .search_flag = true, .column = 4, .help_line = 1,
        .help_usage = "--mb N, --gbs N", .help = "microbatch and global batch (samples)"},
    [COMET_KNOB_INTERLEAVE] = {
        .name = "interleave", .key = "strategy.interleave",
        INT_KNOB(interleave, 1, COMET_MAX_INTERLEAVE),
        .flag = "--interleave", .flag_form = COMET_FLAG_VALUE, .column = 6, .help_line = 2,
        .help_usage = "--interleave N", .help = "virtual pipeline stages per rank"},
    [COMET_KNOB_RECOMPUTE] = {
        .name = "recompute", .key = "strategy.recompute", .type = COMET_KNOB_T_CHOICE,
        FIELD(recompute), .n_values = COMET_RECOMPUTE_FULL + 1, .value_name = recompute_value,
        .flag = "--recompute", .flag_form = COMET_FLAG_VALUE, .column = 7, .help_line = 4,
        .help_usage = "--recompute none|selective|full"},
    [COMET_KNOB_ZERO] = {
        .name = "zero", .key = "strategy.zero", INT_KNOB(zero_stage, 0, 3),
        .flag = "--zero", .flag_form = COMET_FLAG_VALUE, .column = 8, .help_line = 5,
        .help_usage = "--zero 0|1|2|3", .help = "ZeRO stage"},
    [COMET_KNOB_OFFLOAD_OPTIMIZER] = {
        .name = "offload_optimizer", .key = "strategy.offload.optimizer",
        BOOL_KNOB(offload_optimizer), .flag = "--offload", .flag_form = COMET_FLAG_PART,
        .column = 11, .help_line = 6, .help_usage = "--offload LIST",
        .help = "none, or any of optimizer,weights,gradients,activations"},
    [COMET_KNOB_OFFLOAD_WEIGHTS] = {
        .name = "offload_weights", .key = "strategy.offload.weights",
        BOOL_KNOB(offload_weights), .flag = "--offload", .flag_form = COMET_FLAG_PART,
        .column = 12, .help_line = 6},
    [COMET_KNOB_OFFLOAD_ACTIVATIONS] = {
        .name = "offload_activations", .key = "strategy.offload.activations",
        BOOL_KNOB(offload_activations), .flag = "--offload", .flag_form = COMET_FLAG_PART,
        .column = 13, .help_line = 6},
    [COMET_KNOB_OFFLOAD_GRADIENTS] = {
        .name = "offload_gradients", .key = "strategy.offload.gradients",
        BOOL_KNOB(offload_gradients), .flag = "--offload", .flag_form = COMET_FLAG_PART,
        .column = 27, .help_line = 6},
    [COMET_KNOB_OVERLAP_DP] = {
        .name = "overlap_dp", .key = "strategy.overlap.dp", BOOL_KNOB(overlap_dp),
        .flag = "--overlap-dp", .flag_form = COMET_FLAG_ON_OFF, .column = 14, .help_line = 7,
        .help_usage = "--overlap-dp on|off",
        .help = "overlap DP gradient communication with backward"},
    [COMET_KNOB_OVERLAP_TP] = {
        .name = "overlap_tp", .key = "strategy.overlap.tp", BOOL_KNOB(overlap_tp),
        .flag = "--overlap-tp", .flag_form = COMET_FLAG_ON_OFF, .column = 15, .help_line = 8,
        .help_usage = "--overlap-tp on|off", .help = "overlap TP communication with compute"},
    [COMET_KNOB_GRAD_FP32] = {
        .name = "grad_fp32", .key = "strategy.grad_fp32", BOOL_KNOB(grad_fp32),
        .flag = "--grad-fp32", .flag_form = COMET_FLAG_SWITCH, .search_flag = true,
        .column = 10, .help_line = 9, .help_usage = "--grad-fp32",
        .help = "keep 4-byte gradients"},
    [COMET_KNOB_OPTIMIZER_STATE] = {
        .name = "optimizer_state", .key = "strategy.optimizer_state",
        .type = COMET_KNOB_T_CHOICE, FIELD(optimizer_state), .n_values = COMET_OPTIM_BF16 + 1,
        .value_name = optimizer_state_value, .flag = "--optimizer-state",
        .flag_form = COMET_FLAG_VALUE, .search_flag = true, .column = -1, .help_line = 24,
        .help_usage = "--optimizer-state NAME",
        .help = "fp32 (12 B/param), remainders (10), bf16-moments (8) or bf16 (4)"},
    [COMET_KNOB_FLASH_ATTENTION] = {
        .name = "flash_attention", .key = "strategy.flash_attention",
        BOOL_KNOB(flash_attention), .flag = "--flash-attention",
        .flag_form = COMET_FLAG_SWITCH, .column = 9, .help_line = 10,
        .help_usage = "--flash-attention", .help = "fused attention (no score matrix in memory)"},
    [COMET_KNOB_FP8] = {
        .name = "fp8", .key = "strategy.fp8", BOOL_KNOB(fp8), .flag = "--fp8",
        .flag_form = COMET_FLAG_SWITCH, .search_flag = true, .column = 17, .help_line = 11,
        .help_usage = "--fp8", .help = "linear GEMMs in FP8 (needs an fp8 matrix peak)"},
    [COMET_KNOB_CP] = {
        .name = "cp", .key = "strategy.cp", INT_KNOB(cp, 1, COMET_MAX_NPUS),
        .flag = "--cp", .flag_form = COMET_FLAG_VALUE, .column = 18, .help_line = 12,
        .help_usage = "--cp N --ep N", .help = "context and expert parallel sizes (ep divides dp)"},
    [COMET_KNOB_CP_COMM] = {
        .name = "cp_comm", .key = "strategy.cp_comm", .type = COMET_KNOB_T_CHOICE,
        FIELD(cp_comm), .n_values = COMET_CP_ULYSSES + 1, .value_name = cp_comm_value,
        .flag = "--cp-comm", .flag_form = COMET_FLAG_VALUE, .column = 19, .help_line = 13,
        .help_usage = "--cp-comm ring|ulysses", .help = "context parallelism's K/V exchange"},
    [COMET_KNOB_EP] = {
        .name = "ep", .key = "strategy.ep", INT_KNOB(ep, 1, COMET_MAX_NPUS),
        .flag = "--ep", .flag_form = COMET_FLAG_VALUE, .column = 20, .help_line = 12},
    [COMET_KNOB_EXPERT_TP] = {
        .name = "expert_tp", .key = "strategy.expert_tp", INT_KNOB(expert_tp, 0, COMET_MAX_NPUS),
        .flag = "--expert-tp", .flag_form = COMET_FLAG_VALUE, .column = 24, .help_line = 21,
        .help_usage = "--expert-tp N",
        .help = "ranks each expert is split over (divides tp; default tp; below tp: folded)"},
    [COMET_KNOB_MOE_DISPATCHER] = {
        .name = "moe_dispatcher", .key = "strategy.moe_dispatcher", .type = COMET_KNOB_T_CHOICE,
        FIELD(moe_dispatcher), .n_values = COMET_MOE_DEEPEP + 1,
        .value_name = moe_dispatcher_value, .flag = "--moe-dispatcher",
        .flag_form = COMET_FLAG_VALUE, .search_flag = true, .column = 25, .help_line = 22,
        .help_usage = "--moe-dispatcher NAME",
        .help = "alltoall (top_k copies) or deepep (one per node and GPU reached)"},
    [COMET_KNOB_ATTENTION_KERNEL] = {
        .name = "attention_kernel", .key = "strategy.attention_kernel",
        .type = COMET_KNOB_T_CHOICE, FIELD(attention_kernel),
        .n_values = COMET_ATTN_KERNEL_COUNT, .value_name = attention_kernel_value,
        .flag = "--attention-kernel", .flag_form = COMET_FLAG_VALUE, .search_flag = true,
        .column = 26, .help_line = 23, .help_usage = "--attention-kernel NAME",
        .help = "auto (the system's curve), cudnn, flash2 or flash3"},
    [COMET_KNOB_SCHEDULE] = {
        .name = "schedule", .key = "strategy.schedule", .type = COMET_KNOB_T_CHOICE,
        FIELD(schedule), .n_values = COMET_SCHEDULE_DUALPIPE + 1, .value_name = schedule_value,
        .flag = "--schedule", .flag_form = COMET_FLAG_VALUE, .column = 21, .help_line = 15,
        .help_usage = "--schedule 1f1b|zb-h1|dualpipe",
        .help = "pipeline schedule (zb-h1, dualpipe: interleave 1)"},
    [COMET_KNOB_FRAMEWORK] = {
        .name = "framework", .key = "strategy.framework", .type = COMET_KNOB_T_CHOICE,
        FIELD(framework), .n_values = COMET_FRAMEWORK_IDEAL + 1, .value_name = framework_value,
        .flag = "--framework", .flag_form = COMET_FLAG_VALUE, .search_flag = true,
        .column = -1, .help_line = 18, .help_usage = "--framework NAME",
        .help = "auto|megatron|fsdp|ideal (auto: fsdp for ZeRO 3, else megatron)"},
    [COMET_KNOB_PREFETCH] = {
        .name = "prefetch", .key = "strategy.zero3.prefetch",
        INT_KNOB(prefetch, 0, COMET_MAX_PREFETCH), .flag = "--prefetch",
        .flag_form = COMET_FLAG_VALUE, .search_flag = true, .column = -1, .help_line = 19,
        .help_usage = "--prefetch N", .help = "fsdp ZeRO 3: layers gathered ahead (default 1)"},
    [COMET_KNOB_GATHER_BUCKET] = {
        .name = "gather_bucket", .key = "strategy.zero3.gather_bucket",
        INT_KNOB(gather_bucket, 0, COMET_MAX_BUCKET), .flag = "--gather-bucket",
        .flag_form = COMET_FLAG_VALUE, .search_flag = true, .column = -1, .help_line = 20,
        .help_usage = "--gather-bucket N --reduce-bucket N",
        .help = "fsdp ZeRO 3: parameters per message (0: a layer's)"},
    [COMET_KNOB_REDUCE_BUCKET] = {
        .name = "reduce_bucket", .key = "strategy.zero3.reduce_bucket",
        INT_KNOB(reduce_bucket, 0, COMET_MAX_BUCKET), .flag = "--reduce-bucket",
        .flag_form = COMET_FLAG_VALUE, .search_flag = true, .column = -1, .help_line = 20},
    [COMET_KNOB_FIRST_STAGE_LAYERS] = {
        .name = "first_stage_layers", .key = "strategy.first_stage_layers",
        INT_KNOB(first_stage_layers, 0, COMET_MAX_STAGE_LAYERS), .flag = "--first-stage-layers",
        .flag_form = COMET_FLAG_VALUE, .search_flag = true, .column = 22, .help_line = 16,
        .help_usage = "--first-stage-layers N",
        .help = "blocks on the first stage (0: even split)"},
    [COMET_KNOB_LAST_STAGE_LAYERS] = {
        .name = "last_stage_layers", .key = "strategy.last_stage_layers",
        INT_KNOB(last_stage_layers, 0, COMET_MAX_STAGE_LAYERS), .flag = "--last-stage-layers",
        .flag_form = COMET_FLAG_VALUE, .search_flag = true, .column = 23, .help_line = 17,
        .help_usage = "--last-stage-layers N", .help = "blocks on the last stage (0: even split)"},
    [COMET_KNOB_ORDER] = {
        .name = "order", .key = "strategy.order", .type = COMET_KNOB_T_ORDER, FIELD(order),
        .flag = "--order", .flag_form = COMET_FLAG_VALUE, .column = -1, .help_line = 14,
        .help_usage = "--order LIST",
        .help = "auto placement order, innermost first (default tp,cp,ep,dp,pp)"},
    [COMET_KNOB_PLACEMENT] = {
        .name = "placement", .key = "strategy.placement", .type = COMET_KNOB_T_PLACEMENT,
        FIELD(place), .flag_form = COMET_FLAG_NONE, .column = 16, .help_line = -1},
};

const comet_knob *comet_knob_get(comet_knob_id id)
{
    return (unsigned)id < COMET_KNOB_COUNT ? &knobs[id] : NULL;
}

const comet_knob *comet_knob_table(void)
{
    return knobs;
}

const comet_knob *comet_knob_named(const char *name)
{
    for (int i = 0; i < COMET_KNOB_COUNT; i++)
        if (knobs[i].column >= 0 && strcmp(knobs[i].name, name) == 0)
            return &knobs[i];
    return NULL;
}

const comet_knob *comet_knob_in_column(int column)
{
    for (int i = 0; i < COMET_KNOB_COUNT; i++)
        if (column >= 0 && knobs[i].column == column)
            return &knobs[i];
    return NULL;
}

const char *comet_knob_file_key(const comet_knob *k)
{
    return strchr(k->key, '.') + 1;
}

int64_t comet_knob_value(const comet_knob *k, const comet_strategy *s)
{
    const char *at = (const char *)s + k->offset;
    if (k->type == COMET_KNOB_T_BOOL) {
        bool b;
        memcpy(&b, at, sizeof b);
        return b;
    }
    if (k->size == sizeof(int64_t)) {
        int64_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    int v;   /* int-sized: zero_stage and the choices' enums */
    memcpy(&v, at, sizeof v);
    return v;
}

void comet_knob_set_value(const comet_knob *k, comet_strategy *s, int64_t v)
{
    char *at = (char *)s + k->offset;
    if (k->type == COMET_KNOB_T_BOOL) {
        bool b = v != 0;
        memcpy(at, &b, sizeof b);
    } else if (k->size == sizeof(int64_t)) {
        memcpy(at, &v, sizeof v);
    } else {
        int i = (int)v;
        memcpy(at, &i, sizeof i);
    }
}
