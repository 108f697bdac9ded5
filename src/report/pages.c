/* HTML report pages for one job: an estimate (facts, where the step time
 * goes, memory per tier against capacity), a strategy search (every
 * strategy that fits, up to the best COMET_SEARCH_MAX_KEEP, as a table to
 * sort, filter and drill into, and the best side by side as breakdowns), and a
 * simulated step (busy time per pipeline stage and a Gantt timeline per
 * NPU stream, where the pipeline bubbles show as gaps). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/report.h"
#include "parts.h"

const char *report_strategy_label(const comet_strategy *s, char *out, size_t cap)
{
    int n = snprintf(out, cap, "tp %lld · pp %lld · dp %lld · mb %lld", (long long)s->tp,
                     (long long)s->pp, (long long)s->dp, (long long)s->microbatch);
#define MORE(...)                                                                         \
    do {                                                                                  \
        if (n >= 0 && (size_t)n < cap)                                                    \
            n += snprintf(out + n, cap - (size_t)n, __VA_ARGS__);                          \
    } while (0)
    if (s->interleave > 1)
        MORE(" · v %lld", (long long)s->interleave);
    if (s->cp > 1)
        MORE(" · cp %lld", (long long)s->cp);
    if (s->ep > 1)
        MORE(" · ep %lld", (long long)s->ep);
    if (comet_strategy_folded(s))
        MORE(" · etp %lld", (long long)comet_strategy_expert_tp(s));
    if (s->moe_dispatcher != COMET_MOE_ALLTOALL)
        MORE(" · %s", comet_moe_dispatcher_name(s->moe_dispatcher));
    if (s->sp && s->tp > 1)
        MORE(" · sp");
    if (s->zero_stage)
        MORE(" · zero %d", s->zero_stage);
    if (s->recompute != COMET_RECOMPUTE_NONE)
        MORE(" · %s recompute", comet_recompute_name(s->recompute));
    if (s->flash_attention)
        MORE(" · flash");
    if (s->flash_attention && s->attention_kernel != COMET_ATTN_AUTO)
        MORE(" %s", comet_attn_kernel_name(s->attention_kernel));
    if (s->fp8)
        MORE(" · fp8");
    if (s->optimizer_state != COMET_OPTIM_FP32)
        MORE(" · adam %s", comet_optimizer_state_name(s->optimizer_state));
    if (s->schedule != COMET_SCHEDULE_1F1B)
        MORE(" · %s", comet_schedule_name(s->schedule));
    if (s->first_stage_layers > 0 || s->last_stage_layers > 0)
        MORE(" · stages %lld/…/%lld", (long long)s->first_stage_layers,
             (long long)s->last_stage_layers);
    if (s->offload_optimizer || s->offload_weights || s->offload_activations ||
        s->offload_gradients)
        MORE(" · offload%s%s%s%s", s->offload_optimizer ? " opt" : "",
             s->offload_weights ? " w" : "", s->offload_gradients ? " grad" : "",
             s->offload_activations ? " act" : "");
#undef MORE
    return out;
}

comet_chart *report_breakdown_chart(comet_page *p, const char *id, const char *title)
{
    comet_chart *c = comet_page_chart(p, COMET_CHART_STACKED, id, title);
    if (!c)
        return NULL;
    snprintf(c->x_label, sizeof c->x_label, "step time");
    snprintf(c->y_label, sizeof c->y_label, "configuration");
    c->x_unit = COMET_QTY_SECONDS;
    comet_result zero;
    memset(&zero, 0, sizeof zero);
    time_part parts[REPORT_TIME_PARTS];
    int n = report_time_parts(&zero, parts);
    for (int i = 0; i < n; i++)
        comet_chart_series(c, parts[i].name);
    return c;
}

void report_breakdown_add(comet_chart *c, const char *label, const comet_result *r,
                          const comet_band *band)
{
    if (!c)
        return;
    int k = comet_chart_cat(c, label);
    if (k >= 0 && band && band->low > 0.0) {
        c->band_low[k] = band->low;
        c->band_high[k] = band->high;
        c->band_level = band->level;
    }
    time_part parts[REPORT_TIME_PARTS];
    int n = report_time_parts(r, parts);
    /* the chart's series are a dense model's parts; an MoE's exposed
     * all-to-alls (the last part) join the TP segment, its layers' comms */
    for (int i = 0; i < n && i < c->n_series; i++)
        comet_chart_set(c, k, i, parts[i].seconds + (i == 5 && n > c->n_series ? parts[n - 1].seconds : 0.0));
}

void report_drill_result(comet_table *t, long row, const comet_result *r)
{
    time_part parts[REPORT_TIME_PARTS];
    int n = report_time_parts(r, parts);
    for (int i = 0; i < n; i++)
        comet_table_drill_add(t, row, "where the step time goes", parts[i].name,
                              parts[i].seconds, COMET_QTY_SECONDS);
    comet_table_drill_add(t, row, "where the step time goes", "step time", r->step_time,
                          COMET_QTY_SECONDS);
    for (int k = 0; k < COMET_TIER_COUNT; k++) {
        if (k != COMET_TIER_HBM && r->mem_capacity[k] <= 0.0 && r->mem_total[k] <= 0.0)
            continue;
        char group[32];
        snprintf(group, sizeof group, "memory per NPU: %s", comet_tier_name((comet_tier)k));
        for (int m = 0; m < COMET_MEM_KIND_COUNT; m++)
            if (r->mem[k][m] > 0.0)
                comet_table_drill_add(t, row, group, comet_mem_kind_name((comet_mem_kind)m),
                                      r->mem[k][m], COMET_QTY_BYTES);
        comet_table_drill_add(t, row, group, "total", r->mem_total[k], COMET_QTY_BYTES);
        comet_table_drill_add(t, row, group, "capacity", r->mem_capacity[k], COMET_QTY_BYTES);
    }
}

void report_memory_chart(comet_page *p, const char *id, const comet_result *r)
{
    comet_chart *c = comet_page_chart(p, COMET_CHART_STACKED, id,
                                      "Memory per NPU by tier, against capacity");
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "memory per NPU");
    snprintf(c->y_label, sizeof c->y_label, "tier");
    c->x_unit = COMET_QTY_BYTES;
    for (int k = 0; k < COMET_MEM_KIND_COUNT; k++)
        comet_chart_series(c, comet_mem_kind_name((comet_mem_kind)k));
    for (int t = 0; t < COMET_TIER_COUNT; t++) {
        if (t != COMET_TIER_HBM && r->mem_capacity[t] <= 0.0 && r->mem_total[t] <= 0.0)
            continue;
        int cat = comet_chart_cat(c, comet_tier_name((comet_tier)t));
        for (int k = 0; k < COMET_MEM_KIND_COUNT; k++)
            comet_chart_set(c, cat, k, r->mem[t][k]);
        if (cat >= 0)
            c->limits[cat] = r->mem_capacity[t];
    }
    char reason[160];
    snprintf(c->note, sizeof c->note, "%s",
             r->feasible ? "The black mark is each tier's capacity; everything fits."
                         : comet_result_reason(r, reason, sizeof reason));
}

void report_result_facts(comet_page *p, const comet_result *r)
{
    char q[64], q2[64];
    comet_page_fact(p, "step time", "%s", comet_format_quantity(r->step_time,
                                                                COMET_QTY_SECONDS, 0, q,
                                                                sizeof q));
    comet_page_fact(p, "throughput", "%s (%s samples/s)",
                    comet_format_quantity(r->tokens_per_s, COMET_QTY_TOKENS_PER_S, 0, q,
                                          sizeof q),
                    comet_format_quantity(r->samples_per_s, COMET_QTY_NONE, 0, q2, sizeof q2));
    comet_page_fact(p, "model FLOPs utilization", "%s (hardware %s)",
                    comet_format_quantity(r->mfu, COMET_QTY_FRACTION, 0, q, sizeof q),
                    comet_format_quantity(r->hfu, COMET_QTY_FRACTION, 0, q2, sizeof q2));
    comet_page_fact(p, "per NPU", "%s of model FLOPs",
                    comet_format_quantity(r->tflops_per_npu * 1e12, COMET_QTY_FLOP_PER_S, 0, q,
                                          sizeof q));
    if (r->cost > 0.0)
        comet_page_fact(p, "cluster cost", "%s (%s per 1M tokens/s)",
                        comet_format_quantity(r->cost, COMET_QTY_MONEY, 0, q, sizeof q),
                        comet_format_quantity(r->cost_per_mtoken_s, COMET_QTY_MONEY, 0, q2,
                                              sizeof q2));
    char reason[160];
    comet_page_fact(p, "memory", "%s",
                    r->feasible ? "fits" : comet_result_reason(r, reason, sizeof reason));
}

static void job_facts(comet_page *p, const comet_model *m, const comet_system *sys, int64_t npus,
                      double params)
{
    char q[64];
    comet_page_fact(p, "model", "%s (%s parameters)", m->name,
                    comet_format_quantity(params, COMET_QTY_COUNT, 0, q, sizeof q));
    comet_page_fact(p, "system", "%s, %lld NPUs", sys->name, (long long)npus);
}

/* The band as facts: its range and what it rests on, and each note. */
void report_band_facts(comet_page *p, const comet_band *band)
{
    if (!band)
        return;
    if (band->low > 0.0)
        comet_page_fact(p, "uncertainty", "%.0f %% band %.3f to %.3f s, from %d validation rows "
                                          "(%s)%s",
                        100.0 * band->level, band->low, band->high, band->rows, band->basis,
                        band->spread > 0.0 ? ", widened by the kernel-rate spread" : "");
    for (int i = 0; i < band->n_notes; i++)
        comet_page_notice(p, "Uncertainty: %s.", band->notes[i]);
}

void comet_report_page_estimate(comet_page *p, const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, const comet_result *r,
                                const comet_band *band)
{
    char label[160];
    comet_page_section(p, "The job");
    job_facts(p, m, sys, r->npus, r->params);
    comet_page_fact(p, "strategy", "%s", report_strategy_label(s, label, sizeof label));
    report_result_facts(p, r);
    report_band_facts(p, band);
    comet_page_section(p, "Where the step time goes");
    comet_page_text(p, "The parts add up to the step time: compute, the pipeline bubble, and "
                       "the communication and memory traffic that is not hidden behind "
                       "compute.");
    report_breakdown_add(report_breakdown_chart(p, "breakdown", "Step time breakdown"), label, r,
                         band);
    comet_page_section(p, "Memory footprint");
    report_memory_chart(p, "memory", r);
}

/* Rows of the search's table that get a drill-down: the best this many.
 * A drill-down is about 2 kB of the page against half a kilobyte for its
 * row, so details for 20000 rows would make a 50 MB page. */
#define SEARCH_DRILL_ROWS 1000

/* The strategies kept, best first, as a table people can sort and filter;
 * with bands, each step time's uncertainty band as two more columns; the
 * best SEARCH_DRILL_ROWS with their drill-downs. */
static void top_table(comet_page *p, const comet_ranked *top, int n, uint64_t feasible,
                      const comet_band *bands)
{
    char title[96];
    if ((uint64_t)n >= feasible)
        snprintf(title, sizeof title, "Every strategy that fits (%d), best first", n);
    else
        snprintf(title, sizeof title, "The best %d strategies that fit", n);
    comet_table *t = comet_page_table(p, "top", title);
    static const struct {
        const char *name;
        comet_quantity unit;
    } cols[] = {{"rank", COMET_QTY_NONE},          {"tp", COMET_QTY_NONE},
                {"pp", COMET_QTY_NONE},            {"dp", COMET_QTY_NONE},
                {"microbatch", COMET_QTY_NONE},    {"interleave", COMET_QTY_NONE},
                {"sp", COMET_QTY_NONE},            {"zero", COMET_QTY_NONE},
                {"recompute", COMET_QTY_NONE},     {"flash", COMET_QTY_NONE},
                {"offload", COMET_QTY_NONE},       {"step time", COMET_QTY_SECONDS},
                {"throughput", COMET_QTY_TOKENS_PER_S}, {"MFU", COMET_QTY_FRACTION},
                {"HBM used", COMET_QTY_BYTES},     {"exposed comm", COMET_QTY_SECONDS},
                {"bubble", COMET_QTY_SECONDS}};
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
        comet_table_col(t, cols[c].name, cols[c].unit);
    if (bands) {
        comet_table_col(t, "band low", COMET_QTY_SECONDS);
        comet_table_col(t, "band high", COMET_QTY_SECONDS);
    }
    for (int i = 0; i < n; i++) {
        const comet_strategy *s = &top[i].strategy;
        const comet_result *r = &top[i].result;
        long row = comet_table_row(t);
        int c = 0;
        comet_table_num(t, row, c++, i + 1);
        comet_table_num(t, row, c++, (double)s->tp);
        comet_table_num(t, row, c++, (double)s->pp);
        comet_table_num(t, row, c++, (double)s->dp);
        comet_table_num(t, row, c++, (double)s->microbatch);
        comet_table_num(t, row, c++, (double)s->interleave);
        comet_table_text(t, row, c++, s->sp ? "on" : "off");
        comet_table_num(t, row, c++, s->zero_stage);
        comet_table_text(t, row, c++, comet_recompute_name(s->recompute));
        comet_table_text(t, row, c++, s->flash_attention ? "on" : "off");
        char off[48];
        snprintf(off, sizeof off, "%s%s%s%s", s->offload_optimizer ? "optimizer " : "",
                 s->offload_weights ? "weights " : "", s->offload_gradients ? "gradients " : "",
                 s->offload_activations ? "activations" : "");
        comet_table_text(t, row, c++, off[0] ? off : "none");
        comet_table_num(t, row, c++, r->step_time);
        comet_table_num(t, row, c++, r->tokens_per_s);
        comet_table_num(t, row, c++, r->mfu);
        comet_table_num(t, row, c++, r->mem_total[COMET_TIER_HBM]);
        comet_table_num(t, row, c++, r->tp_exposed + r->pp_exposed + r->dp_exposed +
                                         r->offload_exposed);
        comet_table_num(t, row, c++, r->bubble);
        if (bands && bands[i].low > 0.0) {
            comet_table_num(t, row, c++, bands[i].low);
            comet_table_num(t, row, c++, bands[i].high);
        }
        if (i < SEARCH_DRILL_ROWS)
            report_drill_result(t, row, r);
    }
}

void comet_report_page_search(comet_page *p, const comet_model *m, const comet_system *sys,
                              int64_t npus, const comet_ranked *top, int n_top,
                              const comet_search_stats *stats, const comet_band *bands)
{
    comet_page_section(p, "The search");
    job_facts(p, m, sys, npus, n_top > 0 ? top[0].result.params : 0.0);
    comet_page_fact(p, "strategies", "%llu in the space, %llu priced, %llu fit in memory",
                    (unsigned long long)stats->enumerated, (unsigned long long)stats->evaluated,
                    (unsigned long long)stats->feasible);
    comet_page_fact(p, "ruled out", "%llu do not fit in HBM, %llu not in the expansion tier, "
                                    "%llu layouts invalid, %llu dominated",
                    (unsigned long long)stats->no_fit_hbm,
                    (unsigned long long)stats->no_fit_expansion,
                    (unsigned long long)stats->invalid, (unsigned long long)stats->dominated);
    if (n_top <= 0) {
        comet_page_notice(p, "No strategy fits in memory on this cluster, so there is nothing "
                             "to rank. More HBM, an expansion tier, ZeRO, recomputation or "
                             "more NPUs may help.");
        return;
    }
    char label[160];
    comet_page_section(p, "The best strategy");
    comet_page_fact(p, "strategy", "%s",
                    report_strategy_label(&top[0].strategy, label, sizeof label));
    report_result_facts(p, &top[0].result);
    report_band_facts(p, bands);
    int shown = n_top < 10 ? n_top : 10;
    char title[96];
    snprintf(title, sizeof title, "Step time breakdown of the best %d strategies", shown);
    comet_chart *c = report_breakdown_chart(p, "breakdown", title);
    for (int i = 0; i < shown; i++) {
        char cat[COMET_CHART_NAME_LEN];
        snprintf(cat, sizeof cat, "#%d %s", i + 1,
                 report_strategy_label(&top[i].strategy, label, sizeof label));
        report_breakdown_add(c, cat, &top[i].result, bands ? &bands[i] : NULL);
    }
    comet_page_section(p, "Memory footprint of the best strategy");
    report_memory_chart(p, "memory", &top[0].result);
    comet_page_section(p, "Strategies that fit");
    if (stats->feasible > (uint64_t)n_top)
        comet_page_notice(p, "The table lists the best %d of the %llu strategies that fit; the "
                             "other %llu are left out%s.",
                          n_top, (unsigned long long)stats->feasible,
                          (unsigned long long)(stats->feasible - (uint64_t)n_top),
                          n_top >= COMET_SEARCH_MAX_KEEP
                              ? ": a page holds at most that many rows, more would make a "
                                "file of tens of megabytes that a browser sorts slowly"
                              : " (the search kept only these)");
    if (n_top > SEARCH_DRILL_ROWS)
        comet_page_text(p, "Click one of the best %d rows (by rank) for its time breakdown and "
                           "memory; the other rows have no details, to keep the page small.",
                        SEARCH_DRILL_ROWS);
    top_table(p, top, n_top, stats->feasible, bands);
}

/* ---- simulate -------------------------------------------------------------- */

#define GANTT_MAX_STAGES 16

static void stage_chart(comet_page *p, const comet_sim_step_result *r)
{
    comet_chart *c = comet_page_chart(p, COMET_CHART_STACKED, "stages",
                                      "Compute stream of each pipeline stage");
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "time in the step");
    snprintf(c->y_label, sizeof c->y_label, "pipeline stage");
    c->x_unit = COMET_QTY_SECONDS;
    static const char *const series[] = {"forward", "backward", "recompute", "optimizer",
                                         "blocking communication", "idle (bubble, waits)"};
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++)
        comet_chart_series(c, series[i]);
    int stages = r->stages < 64 ? r->stages : 64;
    for (int s = 0; s < stages; s++) {
        char name[32];
        snprintf(name, sizeof name, "stage %d", s);
        int k = comet_chart_cat(c, name);
        comet_chart_set(c, k, 0, r->forward[s]);
        comet_chart_set(c, k, 1, r->backward[s]);
        comet_chart_set(c, k, 2, r->recompute[s]);
        comet_chart_set(c, k, 3, r->optimizer[s]);
        comet_chart_set(c, k, 4, fmax(r->compute_stream_busy[s] - r->compute_busy[s], 0.0));
        comet_chart_set(c, k, 5, fmax(r->step_time - r->compute_stream_busy[s], 0.0));
    }
    if (r->stages > stages)
        snprintf(c->note, sizeof c->note, "The first %d of %d stages are shown.", stages,
                 r->stages);
}

static void gantt_chart(comet_page *p, const comet_sim_timeline *t)
{
    comet_chart *c = comet_page_chart(p, COMET_CHART_GANTT, "timeline",
                                      "Timeline of the step per NPU stream");
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "time");
    c->x_unit = COMET_QTY_SECONDS;
    for (int k = 0; k < t->n_kinds; k++)
        comet_chart_series(c, t->kind_names[k]);
    int stages = t->stages < GANTT_MAX_STAGES ? t->stages : GANTT_MAX_STAGES;
    /* lanes: only the streams that did something */
    int lane[GANTT_MAX_STAGES][16];
    for (int s = 0; s < stages; s++)
        for (int k = 0; k < 16; k++)
            lane[s][k] = -1;
    for (size_t i = 0; i < t->n; i++) {
        const comet_sim_span *sp = &t->spans[i];
        if (sp->stage >= stages || sp->stream < 0 || sp->stream >= 16 ||
            lane[sp->stage][sp->stream] >= 0)
            continue;
        char name[COMET_CHART_NAME_LEN];
        snprintf(name, sizeof name, "stage %d %s", sp->stage,
                 sp->stream < t->n_streams ? t->stream_names[sp->stream] : "?");
        lane[sp->stage][sp->stream] = comet_chart_cat(c, name);
    }
    for (size_t i = 0; i < t->n; i++) {
        const comet_sim_span *sp = &t->spans[i];
        if (sp->stage >= stages || sp->stream < 0 || sp->stream >= 16)
            continue;
        char label[32] = "";
        if (sp->micro >= 0)
            snprintf(label, sizeof label, "microbatch %d", sp->micro);
        comet_chart_point_add(c, sp->start, sp->end, lane[sp->stage][sp->stream], sp->kind,
                              label);
    }
    snprintf(c->note, sizeof c->note, "%sGaps in a compute lane are pipeline bubbles or waits.",
             t->stages > stages ? "The first 16 stages are shown. " : "");
}

void comet_report_page_simulate(comet_page *p, const comet_model *m, const comet_system *sys,
                                const comet_strategy *s, const comet_sim_step_result *r,
                                const comet_sim_timeline *timeline, const comet_result *estimate)
{
    char label[160], q[64], q2[64];
    comet_page_section(p, "The simulated step");
    job_facts(p, m, sys, comet_strategy_npus(s), estimate ? estimate->params : 0.0);
    comet_page_fact(p, "strategy", "%s", report_strategy_label(s, label, sizeof label));
    comet_page_fact(p, "simulated step time", "%s",
                    comet_format_quantity(r->step_time, COMET_QTY_SECONDS, 0, q, sizeof q));
    if (estimate && estimate->step_time > 0.0)
        comet_page_fact(p, "analytical estimate", "%s (simulation %+.2f %%)",
                        comet_format_quantity(estimate->step_time, COMET_QTY_SECONDS, 0, q2,
                                              sizeof q2),
                        100.0 * (r->step_time / estimate->step_time - 1.0));
    comet_page_fact(p, "simulation", "%llu tasks, %llu events, %d pipeline stages",
                    (unsigned long long)r->tasks, (unsigned long long)r->events, r->stages);
    comet_page_section(p, "Busy and idle time per stage");
    stage_chart(p, r);
    comet_page_section(p, "Timeline");
    if (!timeline || timeline->n == 0)
        comet_page_notice(p, "No timeline was recorded for this simulation.");
    else
        gantt_chart(p, timeline);
}
