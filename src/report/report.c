/* Renders one estimate for people (an aligned table with a bar per time
 * component and memory per tier) and for machines (JSON and CSV with the
 * same fields, SI units: seconds, bytes, FLOP). */
#include "comet/report.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/knobs.h"
#include "parts.h"

int report_time_parts(const comet_result *r, time_part parts[REPORT_TIME_PARTS])
{
    const time_part all[] = {
        {"forward", r->forward},         {"backward", r->backward},
        {"recompute", r->recompute},     {"optimizer", r->optimizer},
        {"pipeline bubble", r->bubble},  {"TP comm (exposed)", r->tp_exposed},
        {"PP comm (exposed)", r->pp_exposed}, {"DP comm (exposed)", r->dp_exposed},
        {"expansion memory (exposed)", r->offload_exposed},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        parts[n++] = all[i];
    /* only mixtures of experts with ep > 1 have all-to-alls */
    if (r->ep_comm_time > 0.0)
        parts[n++] = (time_part){"EP comm (exposed)", r->ep_exposed};
    return n;
}

/* 1.79e6 -> "1.79 M": costs are read by people, not parsed. */
static void money(comet_buf *b, double v)
{
    static const char *const suffix[] = {"", " k", " M", " B", " T"};
    int i = 0;
    while (v >= 1000.0 && i < 4) {
        v /= 1000.0;
        i++;
    }
    comet_buf_printf(b, "%.3g%s", v, suffix[i]);
}

static void bar(comet_buf *b, double share)
{
    int cells = (int)lround(share * 30.0);
    for (int i = 0; i < cells; i++)
        comet_buf_append(b, "#", 1);
}

static void strategy_line(comet_buf *b, const comet_strategy *s)
{
    comet_buf_printf(b, "tp %lld  pp %lld  dp %lld  sp %s  microbatch %lld  global batch %lld  "
                        "interleave %lld  recompute %s  zero %d",
                     (long long)s->tp, (long long)s->pp, (long long)s->dp, s->sp ? "on" : "off",
                     (long long)s->microbatch, (long long)s->global_batch,
                     (long long)s->interleave, comet_recompute_name(s->recompute), s->zero_stage);
    if (s->cp > 1)
        comet_buf_printf(b, "  cp %lld %s", (long long)s->cp, comet_cp_comm_name(s->cp_comm));
    if (s->ep > 1)
        comet_buf_printf(b, "  ep %lld", (long long)s->ep);
    if (comet_strategy_folded(s))
        comet_buf_printf(b, "  expert tp %lld (folded)", (long long)comet_strategy_expert_tp(s));
    if (s->moe_dispatcher != COMET_MOE_ALLTOALL)
        comet_buf_printf(b, "  dispatcher %s", comet_moe_dispatcher_name(s->moe_dispatcher));
    if (s->grad_fp32)
        comet_buf_printf(b, "  grad fp32");
    if (s->optimizer_state != COMET_OPTIM_FP32)
        comet_buf_printf(b, "  optimizer %s", comet_optimizer_state_name(s->optimizer_state));
    if (s->flash_attention)
        comet_buf_printf(b, "  flash attention");
    if (s->flash_attention && s->attention_kernel != COMET_ATTN_AUTO)
        comet_buf_printf(b, " (%s)", comet_attn_kernel_name(s->attention_kernel));
    if (s->fp8)
        comet_buf_printf(b, "  fp8");
    if (s->schedule != COMET_SCHEDULE_1F1B)
        comet_buf_printf(b, "  schedule %s", comet_schedule_name(s->schedule));
    if (s->first_stage_layers > 0)
        comet_buf_printf(b, "  first stage %lld layers", (long long)s->first_stage_layers);
    if (s->last_stage_layers > 0)
        comet_buf_printf(b, "  last stage %lld layers", (long long)s->last_stage_layers);
    if (s->offload_optimizer || s->offload_weights || s->offload_activations ||
        s->offload_gradients)
        comet_buf_printf(b, "  offload%s%s%s%s", s->offload_optimizer ? " optimizer" : "",
                         s->offload_weights ? " weights" : "",
                         s->offload_gradients ? " gradients" : "",
                         s->offload_activations ? " activations" : "");
}

/* 174.6e9 -> "174.6 B", 25.6e6 -> "25.6 M". */
static void count(comet_buf *b, double v)
{
    if (v >= 1e9)
        comet_buf_printf(b, "%.1f B", v / 1e9);
    else if (v >= 1e6)
        comet_buf_printf(b, "%.1f M", v / 1e6);
    else
        comet_buf_printf(b, "%.0f", v);
}

void comet_report_band_text(comet_buf *b, const comet_band *band, int indent)
{
    comet_buf_printf(b, "%*s", indent, "");
    if (band->low > 0.0)
        comet_buf_printf(b, "%.0f %% band %.3f to %.3f s (%d validation rows: %s",
                         100.0 * band->level, band->low, band->high, band->rows, band->basis);
    else
        comet_buf_printf(b, "no uncertainty band (%s", band->basis);
    if (band->spread > 0.0)
        comet_buf_printf(b, "; kernel-rate spread %.1f %% of the step", 100.0 * band->spread);
    comet_buf_printf(b, ")\n");
    for (int i = 0; i < band->n_notes; i++)
        comet_buf_printf(b, "%*s  note: %s\n", indent, "", band->notes[i]);
}

void comet_report_text(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r, const comet_band *band)
{
    comet_buf_printf(b, "%s on %s, %lld NPUs, ", m->name, sys->name, (long long)r->npus);
    count(b, r->params);
    comet_buf_printf(b, " parameters");
    if (m->kind == COMET_MODEL_TRANSFORMER && m->moe.experts > 0) {
        comet_buf_printf(b, " (");
        count(b, comet_model_active_params(m));
        comet_buf_printf(b, " active)");
    }
    comet_buf_printf(b, "\n");
    strategy_line(b, s);
    /* Layer-list models without a token count are measured in samples. */
    bool samples = m->kind == COMET_MODEL_LAYERS && comet_model_tokens_per_sample(m) == 1;
    comet_buf_printf(b, "\n\nstep time %.3f s   %.0f %s/s   MFU %.1f %%   HFU %.1f %%   "
                        "%.1f TFLOP/s per NPU\n",
                     r->step_time, samples ? r->samples_per_s : r->tokens_per_s,
                     samples ? "samples" : "tokens", 100.0 * r->mfu, 100.0 * r->hfu,
                     r->tflops_per_npu);
    if (band)
        comet_report_band_text(b, band, 0);
    if (r->cost > 0.0) {
        comet_buf_printf(b, "cluster cost ");
        money(b, r->cost);
        comet_buf_printf(b, "   cost per 1M tokens/s of throughput ");
        money(b, r->cost_per_mtoken_s);
        comet_buf_append(b, "\n", 1);
    }

    time_part parts[REPORT_TIME_PARTS];
    int n = report_time_parts(r, parts);
    comet_buf_printf(b, "\n%-28s %10s %7s\n", "where the time goes", "seconds", "share");
    for (int i = 0; i < n; i++) {
        double share = r->step_time > 0.0 ? parts[i].seconds / r->step_time : 0.0;
        comet_buf_printf(b, "  %-26s %10.3f %6.1f%%  ", parts[i].name, parts[i].seconds,
                         100.0 * share);
        bar(b, share);
        comet_buf_append(b, "\n", 1);
    }
    comet_buf_printf(b, "  %-26s %10.3f %6.1f%%\n", "step", r->step_time, 100.0);

    comet_buf_printf(b, "\n%-28s %10s", "memory per NPU (GiB)", "HBM");
    bool exp = sys->expansion.present;
    if (exp)
        comet_buf_printf(b, " %10s", "expansion");
    comet_buf_append(b, "\n", 1);
    for (int k = 0; k < COMET_MEM_KIND_COUNT; k++) {
        comet_buf_printf(b, "  %-26s %10.2f", comet_mem_kind_name((comet_mem_kind)k),
                         r->mem[COMET_TIER_HBM][k] / COMET_GIB);
        if (exp)
            comet_buf_printf(b, " %10.2f", r->mem[COMET_TIER_EXPANSION][k] / COMET_GIB);
        comet_buf_append(b, "\n", 1);
    }
    comet_buf_printf(b, "  %-26s %10.2f", "total", r->mem_total[COMET_TIER_HBM] / COMET_GIB);
    if (exp)
        comet_buf_printf(b, " %10.2f", r->mem_total[COMET_TIER_EXPANSION] / COMET_GIB);
    comet_buf_printf(b, "\n  %-26s %10.2f", "capacity",
                     r->mem_capacity[COMET_TIER_HBM] / COMET_GIB);
    if (exp)
        comet_buf_printf(b, " %10.2f", r->mem_capacity[COMET_TIER_EXPANSION] / COMET_GIB);
    char reason[160];
    comet_buf_printf(b, "\n\n%s\n",
                     r->feasible ? "fits in memory"
                                 : comet_result_reason(r, reason, sizeof reason));
}

/* The machine-readable fields, in one table used by both JSON and CSV. */
#define RESULT_FIELDS_MAX 64
typedef struct field {
    const char *name;
    double value;
} field;

/* Each machine-readable field: its name in JSON and CSV and where it
 * lives in comet_result, so that writing and reading back share one list. */
typedef enum { RESULT_REAL, RESULT_INT } result_type;
typedef struct result_def {
    const char *name;
    size_t offset;
    result_type type;
} result_def;

#define MEM(tier, kind) offsetof(comet_result, mem[COMET_TIER_##tier][COMET_MEM_##kind])
#define TIER(what, tier) offsetof(comet_result, mem_##what[COMET_TIER_##tier])
static const result_def result_defs[] = {
    {"step_time_s", offsetof(comet_result, step_time), RESULT_REAL},
    {"forward_s", offsetof(comet_result, forward), RESULT_REAL},
    {"backward_s", offsetof(comet_result, backward), RESULT_REAL},
    {"recompute_s", offsetof(comet_result, recompute), RESULT_REAL},
    {"optimizer_s", offsetof(comet_result, optimizer), RESULT_REAL},
    {"bubble_s", offsetof(comet_result, bubble), RESULT_REAL},
    {"tp_exposed_s", offsetof(comet_result, tp_exposed), RESULT_REAL},
    {"pp_exposed_s", offsetof(comet_result, pp_exposed), RESULT_REAL},
    {"dp_exposed_s", offsetof(comet_result, dp_exposed), RESULT_REAL},
    {"offload_exposed_s", offsetof(comet_result, offload_exposed), RESULT_REAL},
    {"tp_comm_s", offsetof(comet_result, tp_comm_time), RESULT_REAL},
    {"pp_comm_s", offsetof(comet_result, pp_comm_time), RESULT_REAL},
    {"dp_comm_s", offsetof(comet_result, dp_comm_time), RESULT_REAL},
    {"offload_s", offsetof(comet_result, offload_time), RESULT_REAL},
    {"tp_bytes", offsetof(comet_result, tp_bytes), RESULT_REAL},
    {"pp_bytes", offsetof(comet_result, pp_bytes), RESULT_REAL},
    {"dp_bytes", offsetof(comet_result, dp_bytes), RESULT_REAL},
    {"hbm_weights_bytes", MEM(HBM, WEIGHTS), RESULT_REAL},
    {"hbm_gradients_bytes", MEM(HBM, GRADIENTS), RESULT_REAL},
    {"hbm_optimizer_bytes", MEM(HBM, OPTIMIZER), RESULT_REAL},
    {"hbm_activations_bytes", MEM(HBM, ACTIVATIONS), RESULT_REAL},
    {"hbm_total_bytes", TIER(total, HBM), RESULT_REAL},
    {"hbm_capacity_bytes", TIER(capacity, HBM), RESULT_REAL},
    {"expansion_weights_bytes", MEM(EXPANSION, WEIGHTS), RESULT_REAL},
    {"expansion_gradients_bytes", MEM(EXPANSION, GRADIENTS), RESULT_REAL},
    {"expansion_optimizer_bytes", MEM(EXPANSION, OPTIMIZER), RESULT_REAL},
    {"expansion_activations_bytes", MEM(EXPANSION, ACTIVATIONS), RESULT_REAL},
    {"expansion_total_bytes", TIER(total, EXPANSION), RESULT_REAL},
    {"expansion_capacity_bytes", TIER(capacity, EXPANSION), RESULT_REAL},
    {"npus", offsetof(comet_result, npus), RESULT_INT},
    {"microbatches", offsetof(comet_result, microbatches), RESULT_INT},
    {"params", offsetof(comet_result, params), RESULT_REAL},
    {"model_flops", offsetof(comet_result, model_flops), RESULT_REAL},
    {"hardware_flops", offsetof(comet_result, hardware_flops), RESULT_REAL},
    {"mfu", offsetof(comet_result, mfu), RESULT_REAL},
    {"hfu", offsetof(comet_result, hfu), RESULT_REAL},
    {"tokens_per_s", offsetof(comet_result, tokens_per_s), RESULT_REAL},
    {"samples_per_s", offsetof(comet_result, samples_per_s), RESULT_REAL},
    {"tflops_per_npu", offsetof(comet_result, tflops_per_npu), RESULT_REAL},
    {"cost", offsetof(comet_result, cost), RESULT_REAL},
    {"cost_per_mtoken_s", offsetof(comet_result, cost_per_mtoken_s), RESULT_REAL},
    /* expert parallelism's all-to-alls, part of the step; context
     * parallelism's exchange, already inside the tp_* figures */
    {"ep_exposed_s", offsetof(comet_result, ep_exposed), RESULT_REAL},
    {"ep_comm_s", offsetof(comet_result, ep_comm_time), RESULT_REAL},
    {"ep_bytes", offsetof(comet_result, ep_bytes), RESULT_REAL},
    {"cp_exposed_s", offsetof(comet_result, cp_exposed), RESULT_REAL},
    {"cp_comm_s", offsetof(comet_result, cp_comm_time), RESULT_REAL},
    {"cp_bytes", offsetof(comet_result, cp_bytes), RESULT_REAL},
};
#undef MEM
#undef TIER
#define N_RESULT_DEFS (int)(sizeof result_defs / sizeof result_defs[0])

static double result_get(const comet_result *r, const result_def *d)
{
    const char *base = (const char *)r + d->offset;
    if (d->type == RESULT_INT) {
        int64_t v;
        memcpy(&v, base, sizeof v);
        return (double)v;
    }
    double v;
    memcpy(&v, base, sizeof v);
    return v;
}

bool comet_result_set_field(comet_result *r, const char *name, double value)
{
    for (int i = 0; i < N_RESULT_DEFS; i++) {
        if (strcmp(result_defs[i].name, name) != 0)
            continue;
        char *base = (char *)r + result_defs[i].offset;
        if (result_defs[i].type == RESULT_INT) {
            /* a count: whole and within int64 (converting inf, NaN or
             * 1e300 would be undefined behaviour) */
            if (!(value >= -9223372036854775808.0 && value < 9223372036854775808.0) ||
                value != trunc(value))
                return false;
            int64_t v = (int64_t)value;
            memcpy(base, &v, sizeof v);
        } else
            memcpy(base, &value, sizeof value);
        return true;
    }
    return false;
}

int comet_result_field_count(void)
{
    return N_RESULT_DEFS;
}

const char *comet_result_field_name(int i)
{
    return i >= 0 && i < N_RESULT_DEFS ? result_defs[i].name : NULL;
}

int comet_result_values(const comet_result *r, double *out, int cap)
{
    int n = 0;
    for (; n < N_RESULT_DEFS && n < cap; n++)
        out[n] = result_get(r, &result_defs[n]);
    return n;
}

static int result_fields(const comet_result *r, field f[RESULT_FIELDS_MAX])
{
    int n = 0;
    for (int i = 0; i < N_RESULT_DEFS && n < RESULT_FIELDS_MAX; i++)
        f[n++] = (field){result_defs[i].name, result_get(r, &result_defs[i])};
    return n;
}

void report_json_number(comet_buf *b, double v, int digits)
{
    if (isfinite(v))
        comet_buf_printf(b, "%.*g", digits, v);
    else
        comet_buf_printf(b, "null");
}

/* JSON has no NaN/inf; the estimator never produces them. */
static void json_number(comet_buf *b, double v) { report_json_number(b, v, 10); }

/* The strategy's knobs, in one table used by both JSON and CSV. */
#define STRATEGY_FIELDS_MAX 32

typedef struct strategy_field {
    const char *name;
    long long value;
    bool boolean;
    const char *text;       /* non-NULL for text fields */
    char buf[96];
} strategy_field;

void comet_report_placement_text(const comet_strategy *s, int n_dims, char *out, size_t cap)
{
    int last = n_dims - 1;
    for (int d = 0; n_dims <= 0 && d < COMET_MAX_DIMS; d++)
        for (int g = 0; g < COMET_GROUP_COUNT; g++)
            if (s->place[g][d] > 1)
                last = d;
    if (last < 0)
        last = 0;
    size_t n = 0;
    out[0] = '\0';
    for (int g = 0; g < COMET_GROUP_COUNT && n < cap; g++) {
        if (g >= COMET_LAYER_GROUPS && comet_strategy_group_size(s, (comet_group)g) <= 1)
            continue; /* cp and ep show when they are used */
        n += (size_t)snprintf(out + n, cap - n, "%s%s:", g ? " " : "",
                              comet_group_name((comet_group)g));
        for (int d = 0; d <= last && n < cap; d++)
            n += (size_t)snprintf(out + n, cap - n, "%s%lld", d ? "x" : "",
                                  (long long)(s->place[g][d] > 0 ? s->place[g][d] : 1));
    }
}

/* The strategy's knobs as named fields, in the knob table's report
 * columns (comet/knobs.h); comet_strategy_set_field reads them back. */
static int strategy_fields(const comet_strategy *s, strategy_field f[STRATEGY_FIELDS_MAX])
{
    int n = 0;
    const comet_knob *k;
    for (int column = 0; (k = comet_knob_in_column(column)) && n < STRATEGY_FIELDS_MAX; column++) {
        strategy_field *x = &f[n++];
        *x = (strategy_field){.name = k->name};
        switch (k->type) {
        case COMET_KNOB_T_BOOL:
            x->boolean = true;
            x->value = (long long)comet_knob_value(k, s);
            break;
        case COMET_KNOB_T_CHOICE:
            x->text = k->value_name((int)comet_knob_value(k, s));
            break;
        case COMET_KNOB_T_PLACEMENT:
            comet_report_placement_text(s, 0, x->buf, sizeof x->buf);
            x->text = x->buf;
            break;
        case COMET_KNOB_T_INT:
        case COMET_KNOB_T_ORDER:
            x->value = (long long)comet_knob_value(k, s);
            if (k == comet_knob_get(COMET_KNOB_EXPERT_TP))
                x->value = (long long)comet_strategy_expert_tp(s); /* 0 stands for tp */
            break;
        }
    }
    return n;
}

bool comet_strategy_set_field(comet_strategy *s, const char *name, const char *text)
{
    const comet_knob *k = comet_knob_named(name);
    return k && comet_knob_set_text(k, s, text);
}

bool comet_knob_set_text(const comet_knob *k, comet_strategy *s, const char *text)
{
    if (k->type == COMET_KNOB_T_CHOICE) {
        for (int v = 0; v < k->n_values; v++)
            if (strcmp(text, k->value_name(v)) == 0) {
                comet_knob_set_value(k, s, v);
                return true;
            }
        return false;
    }
    if (k->type == COMET_KNOB_T_BOOL) {
        bool yes = strcmp(text, "1") == 0 || strcmp(text, "true") == 0;
        if (!yes && strcmp(text, "0") != 0 && strcmp(text, "false") != 0)
            return false;
        comet_knob_set_value(k, s, yes);
        return true;
    }
    if (k->type != COMET_KNOB_T_INT)
        return false;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end)
        return false;
    if (k->size != sizeof(int64_t) && (v < INT_MIN || v > INT_MAX))
        return false;
    comet_knob_set_value(k, s, v);
    return true;
}

/* A JSON string literal; names come from user files and may hold anything. */
void comet_report_json_string(comet_buf *b, const char *text)
{
    comet_buf_json_string(b, text);
}

/* "step_time_band": {...}, the band's fields and notes. */
static void band_json(comet_buf *b, const comet_band *band)
{
    comet_buf_printf(b, "  \"step_time_band\": {\"low\": ");
    json_number(b, band->low);
    comet_buf_printf(b, ", \"high\": ");
    json_number(b, band->high);
    comet_buf_printf(b, ", \"level\": ");
    json_number(b, band->level);
    comet_buf_printf(b, ", \"rows\": %d, \"basis\": ", band->rows);
    comet_report_json_string(b, band->basis);
    comet_buf_printf(b, ", \"spread\": ");
    json_number(b, band->spread);
    comet_buf_printf(b, ", \"notes\": [");
    for (int i = 0; i < band->n_notes; i++) {
        comet_buf_printf(b, "%s", i ? ", " : "");
        comet_report_json_string(b, band->notes[i]);
    }
    comet_buf_printf(b, "]},\n");
}

static void estimate_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r, const comet_band *band,
                          bool version)
{
    comet_buf_printf(b, "{\n");
    if (version)
        comet_buf_printf(b, "  \"schema_version\": %d,\n", COMET_JSON_SCHEMA_VERSION);
    comet_buf_printf(b, "  \"model\": ");
    comet_report_json_string(b, m->name);
    comet_buf_printf(b, ",\n  \"system\": ");
    comet_report_json_string(b, sys->name);
    comet_buf_printf(b, ",\n");
    strategy_field sf[STRATEGY_FIELDS_MAX];
    int ns = strategy_fields(s, sf);
    comet_buf_printf(b, "  \"strategy\": {");
    for (int i = 0; i < ns; i++) {
        comet_buf_printf(b, "%s\"%s\": ", i ? ", " : "", sf[i].name);
        if (sf[i].text)
            comet_report_json_string(b, sf[i].text);
        else if (sf[i].boolean)
            comet_buf_printf(b, "%s", sf[i].value ? "true" : "false");
        else
            comet_buf_printf(b, "%lld", sf[i].value);
    }
    comet_buf_printf(b, "},\n");
    char reason[160];
    comet_buf_printf(b, "  \"feasible\": %s,\n  \"reason\": \"%s\",\n",
                     r->feasible ? "true" : "false", comet_result_reason(r, reason, sizeof reason));
    if (band)
        band_json(b, band);
    field f[RESULT_FIELDS_MAX];
    int n = result_fields(r, f);
    for (int i = 0; i < n; i++) {
        comet_buf_printf(b, "  \"%s\": ", f[i].name);
        json_number(b, f[i].value);
        comet_buf_printf(b, "%s\n", i + 1 < n ? "," : "");
    }
    comet_buf_printf(b, "}\n");
}

void comet_report_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r, const comet_band *band)
{
    estimate_json(b, m, sys, s, r, band, true);
}

void report_estimate_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r, const comet_band *band)
{
    estimate_json(b, m, sys, s, r, band, false);
}

void comet_report_search_json(comet_buf *b, const comet_search_request *req,
                              const comet_ranked *top, int n, const comet_search_stats *st,
                              const comet_band *bands)
{
    comet_buf_printf(b,
                     "{\"schema_version\": %d, \"npus\": %lld, \"objective\": \"%s\", "
                     "\"enumerated\": %llu, "
                     "\"evaluated\": %llu, \"feasible\": %llu, \"no_fit_hbm\": %llu, "
                     "\"no_fit_expansion\": %llu, \"dominated\": %llu, \"invalid\": %llu, "
                     "\"invalid_tp\": %llu, \"invalid_batch\": %llu, \"invalid_layout\": %llu,\n"
                     "\"top\": [\n",
                     COMET_JSON_SCHEMA_VERSION, (long long)req->space.npus,
                     comet_objective_name(req->objective),
                     (unsigned long long)st->enumerated, (unsigned long long)st->evaluated,
                     (unsigned long long)st->feasible, (unsigned long long)st->no_fit_hbm,
                     (unsigned long long)st->no_fit_expansion, (unsigned long long)st->dominated,
                     (unsigned long long)st->invalid, (unsigned long long)st->invalid_tp,
                     (unsigned long long)st->invalid_batch, (unsigned long long)st->invalid_layout);
    for (int i = 0; i < n; i++) {
        comet_buf_printf(b, "{\"rank\": %d, \"score\": %.10g, \"index\": %llu, \"estimate\":\n",
                         i + 1, top[i].score, (unsigned long long)top[i].index);
        report_estimate_json(b, req->model, req->system, &top[i].strategy, &top[i].result,
                             &bands[i]);
        comet_buf_printf(b, "}%s\n", i + 1 < n ? "," : "");
    }
    comet_buf_printf(b, "]}\n");
}

/* CSV columns name the unit where the JSON key (and the Python package's
 * attribute) does not: the same field with its unit spelled out. */
static const char *const csv_units[][2] = {
    {"cost", "cost_usd"},
    {"cost_per_mtoken_s", "cost_usd_per_mtoken_s"},
    {"mfu", "mfu_fraction"},
    {"hfu", "hfu_fraction"},
};
#define N_CSV_UNITS (sizeof csv_units / sizeof csv_units[0])

const char *comet_result_csv_column(const char *name)
{
    for (size_t i = 0; i < N_CSV_UNITS; i++)
        if (strcmp(name, csv_units[i][0]) == 0)
            return csv_units[i][1];
    return name;
}

const char *comet_result_field_of_column(const char *column)
{
    for (size_t i = 0; i < N_CSV_UNITS; i++)
        if (strcmp(column, csv_units[i][1]) == 0)
            return csv_units[i][0];
    return column;
}

void report_csv_columns(comet_buf *b, report_csv_era era)
{
    comet_result zero = {0};
    field f[RESULT_FIELDS_MAX];
    int n = result_fields(&zero, f);
    comet_strategy none;
    comet_strategy_defaults(&none);
    strategy_field sf[STRATEGY_FIELDS_MAX];
    int ns = strategy_fields(&none, sf);
    comet_buf_printf(b, "model,system");
    for (int i = 0; i < ns; i++)
        comet_buf_printf(b, ",%s", sf[i].name);
    comet_buf_printf(b, ",feasible");
    for (int i = 0; i < n; i++)
        comet_buf_printf(b, ",%s",
                         era == REPORT_CSV_NOW ? comet_result_csv_column(f[i].name) : f[i].name);
    comet_buf_printf(b, era == REPORT_CSV_BEFORE_UNITS ? ",step_time_low,step_time_high\n"
                                                       : ",step_time_low_s,step_time_high_s\n");
}

void comet_report_csv_header(comet_buf *b)
{
    report_csv_columns(b, REPORT_CSV_NOW);
}

void comet_report_csv_row(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r, const comet_band *band)
{
    comet_buf_csv_field(b, m->name);
    comet_buf_append(b, ",", 1);
    comet_buf_csv_field(b, sys->name);
    strategy_field sf[STRATEGY_FIELDS_MAX];
    int ns = strategy_fields(s, sf);
    for (int i = 0; i < ns; i++) {
        comet_buf_append(b, ",", 1);
        if (sf[i].text)
            comet_buf_csv_field(b, sf[i].text);
        else
            comet_buf_printf(b, "%lld", sf[i].value);
    }
    comet_buf_printf(b, ",%d", r->feasible ? 1 : 0);
    field f[RESULT_FIELDS_MAX];
    int n = result_fields(r, f);
    for (int i = 0; i < n; i++) {
        if (isfinite(f[i].value))
            comet_buf_printf(b, ",%.10g", f[i].value);
        else
            comet_buf_append(b, ",", 1);
    }
    if (band && band->low > 0.0)
        comet_buf_printf(b, ",%.10g,%.10g\n", band->low, band->high);
    else
        comet_buf_append(b, ",,\n", 3);
}
