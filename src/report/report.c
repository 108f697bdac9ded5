/* Renders one estimate for people (an aligned table with a bar per time
 * component and memory per tier) and for machines (JSON and CSV with the
 * same fields, SI units: seconds, bytes, FLOP). */
#include "comet/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GIB 1073741824.0

typedef struct time_part {
    const char *name;
    double seconds;
} time_part;

static int time_parts(const comet_result *r, time_part parts[10])
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
    if (s->grad_fp32)
        comet_buf_printf(b, "  grad fp32");
    if (s->flash_attention)
        comet_buf_printf(b, "  flash attention");
    if (s->offload_optimizer || s->offload_weights || s->offload_activations)
        comet_buf_printf(b, "  offload%s%s%s", s->offload_optimizer ? " optimizer" : "",
                         s->offload_weights ? " weights" : "",
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

void comet_report_text(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r)
{
    comet_buf_printf(b, "%s on %s, %lld NPUs, ", m->name, sys->name, (long long)r->npus);
    count(b, r->params);
    comet_buf_printf(b, " parameters\n");
    strategy_line(b, s);
    /* Layer-list models without a token count are measured in samples. */
    bool samples = m->kind == COMET_MODEL_LAYERS && comet_model_tokens_per_sample(m) == 1;
    comet_buf_printf(b, "\n\nstep time %.3f s   %.0f %s/s   MFU %.1f %%   HFU %.1f %%   "
                        "%.1f TFLOP/s per NPU\n",
                     r->step_time, samples ? r->samples_per_s : r->tokens_per_s,
                     samples ? "samples" : "tokens", 100.0 * r->mfu, 100.0 * r->hfu,
                     r->tflops_per_npu);
    if (r->cost > 0.0) {
        comet_buf_printf(b, "cluster cost ");
        money(b, r->cost);
        comet_buf_printf(b, "   cost per 1M tokens/s of throughput ");
        money(b, r->cost_per_mtoken_s);
        comet_buf_append(b, "\n", 1);
    }

    time_part parts[10];
    int n = time_parts(r, parts);
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
                         r->mem[COMET_TIER_HBM][k] / GIB);
        if (exp)
            comet_buf_printf(b, " %10.2f", r->mem[COMET_TIER_EXPANSION][k] / GIB);
        comet_buf_append(b, "\n", 1);
    }
    comet_buf_printf(b, "  %-26s %10.2f", "total", r->mem_total[COMET_TIER_HBM] / GIB);
    if (exp)
        comet_buf_printf(b, " %10.2f", r->mem_total[COMET_TIER_EXPANSION] / GIB);
    comet_buf_printf(b, "\n  %-26s %10.2f", "capacity", r->mem_capacity[COMET_TIER_HBM] / GIB);
    if (exp)
        comet_buf_printf(b, " %10.2f", r->mem_capacity[COMET_TIER_EXPANSION] / GIB);
    char reason[160];
    comet_buf_printf(b, "\n\n%s\n",
                     r->feasible ? "fits in memory"
                                 : comet_result_reason(r, reason, sizeof reason));
}

/* The machine-readable fields, in one table used by both JSON and CSV. */
#define RESULT_FIELDS_MAX 48
typedef struct field {
    const char *name;
    double value;
} field;

static int result_fields(const comet_result *r, field f[RESULT_FIELDS_MAX])
{
    int n = 0;
#define F(name_, v_) f[n++] = (field){name_, (double)(v_)}
    F("step_time_s", r->step_time);
    F("forward_s", r->forward);
    F("backward_s", r->backward);
    F("recompute_s", r->recompute);
    F("optimizer_s", r->optimizer);
    F("bubble_s", r->bubble);
    F("tp_exposed_s", r->tp_exposed);
    F("pp_exposed_s", r->pp_exposed);
    F("dp_exposed_s", r->dp_exposed);
    F("offload_exposed_s", r->offload_exposed);
    F("tp_comm_s", r->tp_comm_time);
    F("pp_comm_s", r->pp_comm_time);
    F("dp_comm_s", r->dp_comm_time);
    F("offload_s", r->offload_time);
    F("hbm_weights_bytes", r->mem[COMET_TIER_HBM][COMET_MEM_WEIGHTS]);
    F("hbm_gradients_bytes", r->mem[COMET_TIER_HBM][COMET_MEM_GRADIENTS]);
    F("hbm_optimizer_bytes", r->mem[COMET_TIER_HBM][COMET_MEM_OPTIMIZER]);
    F("hbm_activations_bytes", r->mem[COMET_TIER_HBM][COMET_MEM_ACTIVATIONS]);
    F("hbm_total_bytes", r->mem_total[COMET_TIER_HBM]);
    F("hbm_capacity_bytes", r->mem_capacity[COMET_TIER_HBM]);
    F("expansion_weights_bytes", r->mem[COMET_TIER_EXPANSION][COMET_MEM_WEIGHTS]);
    F("expansion_gradients_bytes", r->mem[COMET_TIER_EXPANSION][COMET_MEM_GRADIENTS]);
    F("expansion_optimizer_bytes", r->mem[COMET_TIER_EXPANSION][COMET_MEM_OPTIMIZER]);
    F("expansion_activations_bytes", r->mem[COMET_TIER_EXPANSION][COMET_MEM_ACTIVATIONS]);
    F("expansion_total_bytes", r->mem_total[COMET_TIER_EXPANSION]);
    F("expansion_capacity_bytes", r->mem_capacity[COMET_TIER_EXPANSION]);
    F("npus", r->npus);
    F("microbatches", r->microbatches);
    F("params", r->params);
    F("model_flops", r->model_flops);
    F("hardware_flops", r->hardware_flops);
    F("mfu", r->mfu);
    F("hfu", r->hfu);
    F("tokens_per_s", r->tokens_per_s);
    F("samples_per_s", r->samples_per_s);
    F("tflops_per_npu", r->tflops_per_npu);
    F("cost", r->cost);
    F("cost_per_mtoken_s", r->cost_per_mtoken_s);
#undef F
    return n;
}

/* JSON has no NaN/inf; the estimator never produces them, but a result
 * must stay valid JSON whatever happens. */
static void json_number(comet_buf *b, double v)
{
    if (isfinite(v))
        comet_buf_printf(b, "%.10g", v);
    else
        comet_buf_printf(b, "null");
}

/* The strategy's knobs, in one table used by both JSON and CSV. */
#define STRATEGY_FIELDS_MAX 24

typedef struct strategy_field {
    const char *name;
    long long value;
    bool boolean;
    const char *text;       /* non-NULL for text fields */
    char buf[96];
} strategy_field;

/* "tp:8x1 pp:1x8 dp:1x1": each group's span on each network dimension. */
static void placement_text(const comet_strategy *s, char *out, size_t cap)
{
    static const char *const names[COMET_GROUP_COUNT] = {"tp", "pp", "dp"};
    int last = 0;
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        for (int g = 0; g < COMET_GROUP_COUNT; g++)
            if (s->place[g][d] > 1)
                last = d;
    size_t n = 0;
    out[0] = '\0';
    for (int g = 0; g < COMET_GROUP_COUNT && n < cap; g++) {
        n += (size_t)snprintf(out + n, cap - n, "%s%s:", g ? " " : "", names[g]);
        for (int d = 0; d <= last && n < cap; d++)
            n += (size_t)snprintf(out + n, cap - n, "%s%lld", d ? "x" : "",
                                  (long long)(s->place[g][d] > 0 ? s->place[g][d] : 1));
    }
}

static int strategy_fields(const comet_strategy *s, strategy_field f[STRATEGY_FIELDS_MAX])
{
    int n = 0;
#define I(name_, v_) f[n++] = (strategy_field){.name = name_, .value = (long long)(v_)}
#define B(name_, v_) f[n++] = (strategy_field){.name = name_, .value = (v_) ? 1 : 0, .boolean = true}
    I("tp", s->tp);
    I("pp", s->pp);
    I("dp", s->dp);
    B("sp", s->sp);
    I("microbatch", s->microbatch);
    I("global_batch", s->global_batch);
    I("interleave", s->interleave);
    f[n++] = (strategy_field){.name = "recompute", .text = comet_recompute_name(s->recompute)};
    I("zero", s->zero_stage);
    B("flash_attention", s->flash_attention);
    B("grad_fp32", s->grad_fp32);
    B("offload_optimizer", s->offload_optimizer);
    B("offload_weights", s->offload_weights);
    B("offload_activations", s->offload_activations);
    B("overlap_dp", s->overlap_dp);
    B("overlap_tp", s->overlap_tp);
#undef I
#undef B
    f[n].name = "placement";
    f[n].value = 0;
    f[n].boolean = false;
    placement_text(s, f[n].buf, sizeof f[n].buf);
    f[n].text = f[n].buf;
    n++;
    return n;
}

/* A JSON string literal; names come from user files and may hold anything. */
static void json_string(comet_buf *b, const char *text)
{
    comet_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            comet_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            comet_buf_printf(b, "\\u%04x", *p);
        else
            comet_buf_append(b, (const char *)p, 1);
    }
    comet_buf_append(b, "\"", 1);
}

void comet_report_json(comet_buf *b, const comet_model *m, const comet_system *sys,
                       const comet_strategy *s, const comet_result *r)
{
    comet_buf_printf(b, "{\n  \"model\": ");
    json_string(b, m->name);
    comet_buf_printf(b, ",\n  \"system\": ");
    json_string(b, sys->name);
    comet_buf_printf(b, ",\n");
    strategy_field sf[STRATEGY_FIELDS_MAX];
    int ns = strategy_fields(s, sf);
    comet_buf_printf(b, "  \"strategy\": {");
    for (int i = 0; i < ns; i++) {
        comet_buf_printf(b, "%s\"%s\": ", i ? ", " : "", sf[i].name);
        if (sf[i].text)
            json_string(b, sf[i].text);
        else if (sf[i].boolean)
            comet_buf_printf(b, "%s", sf[i].value ? "true" : "false");
        else
            comet_buf_printf(b, "%lld", sf[i].value);
    }
    comet_buf_printf(b, "},\n");
    char reason[160];
    comet_buf_printf(b, "  \"feasible\": %s,\n  \"reason\": \"%s\",\n",
                     r->feasible ? "true" : "false", comet_result_reason(r, reason, sizeof reason));
    field f[RESULT_FIELDS_MAX];
    int n = result_fields(r, f);
    for (int i = 0; i < n; i++) {
        comet_buf_printf(b, "  \"%s\": ", f[i].name);
        json_number(b, f[i].value);
        comet_buf_printf(b, "%s\n", i + 1 < n ? "," : "");
    }
    comet_buf_printf(b, "}\n");
}

void comet_report_csv_header(comet_buf *b)
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
        comet_buf_printf(b, ",%s", f[i].name);
    comet_buf_append(b, "\n", 1);
}

/* One CSV field, quoted the RFC 4180 way when it holds a comma, a quote or
 * a line break. */
static void csv_field(comet_buf *b, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        comet_buf_append(b, text, strlen(text));
        return;
    }
    comet_buf_append(b, "\"", 1);
    for (const char *p = text; *p; p++) {
        if (*p == '"')
            comet_buf_append(b, "\"", 1);
        comet_buf_append(b, p, 1);
    }
    comet_buf_append(b, "\"", 1);
}

void comet_report_csv_row(comet_buf *b, const comet_model *m, const comet_system *sys,
                          const comet_strategy *s, const comet_result *r)
{
    csv_field(b, m->name);
    comet_buf_append(b, ",", 1);
    csv_field(b, sys->name);
    strategy_field sf[STRATEGY_FIELDS_MAX];
    int ns = strategy_fields(s, sf);
    for (int i = 0; i < ns; i++) {
        comet_buf_append(b, ",", 1);
        if (sf[i].text)
            csv_field(b, sf[i].text);
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
    comet_buf_append(b, "\n", 1);
}
