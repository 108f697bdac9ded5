/* The study's findings for people: the printed summary (at most 30 lines:
 * one block per COMET step, the assumptions, where the report is) and the
 * report page (a section per step, with the sweep report as step 4).
 * Everything shown is computed by comet/methodology.h from the real
 * estimator and search. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/methodology.h"
#include "comet/report.h"
#include "parts.h"

#define Q(v, unit, buf) comet_format_quantity((v), (unit), 0, (buf), sizeof(buf))

/* 1.25x, 18.1x, 2139579x: plain ASCII, for terminals and logs. */
static const char *ratio_text(double r, char *out, size_t cap)
{
    snprintf(out, cap, r < 10.0 ? "%.2fx" : r < 100.0 ? "%.1fx" : "%.0fx", r);
    return out;
}

/* What holds a strategy back: the biggest part of its step that is not
 * compute ("pipeline bubble", "exposed TP communication", ...). */
static const char *biggest_loss(const comet_result *r, double *share)
{
    struct {
        const char *name;
        double t;
    } loss[] = {{"the pipeline bubble", r->bubble},
                {"exposed TP communication", r->tp_exposed},
                {"exposed PP communication", r->pp_exposed},
                {"exposed DP communication", r->dp_exposed},
                {"exposed expansion-memory traffic", r->offload_exposed},
                {"recomputation", r->recompute},
                {"the optimizer step", r->optimizer}};
    int k = 0;
    for (int i = 1; i < (int)(sizeof loss / sizeof loss[0]); i++)
        if (loss[i].t > loss[k].t)
            k = i;
    *share = r->step_time > 0.0 ? loss[k].t / r->step_time : 0.0;
    return loss[k].name;
}

static double state_total(const comet_findings *f)
{
    return f->state_bytes[0] + f->state_bytes[1] + f->state_bytes[2];
}

/* ---- the printed summary --------------------------------------------------- */

/* The best strategy's uncertainty band, under step 2 (include/comet/band.h). */
static void best_band_text(comet_buf *b, const comet_band *band)
{
    if (band)
        comet_report_band_text(b, band, 3);
}

/* One system of a study's system axis: its fastest step, its speedup
 * over the axis's first system, and the traffic its links carried as
 * flows (or why they were not run). */
static const char *pick_system_name(const comet_study *study, const comet_system_pick *p)
{
    return p->system >= 0 && p->system < study->n_systems ? study->systems[p->system].name : "?";
}

static void pick_text(comet_buf *b, const comet_system_pick *p)
{
    char q1[48], q2[48], q3[48], label[160];
    if (!p->row) {
        comet_buf_printf(b, "%s", p->why);
        return;
    }
    comet_buf_printf(b, "%s (%s), %.2fx", Q(p->row->result.step_time, COMET_QTY_SECONDS, q1),
                     report_strategy_label(&p->row->strategy, label, sizeof label), p->speedup);
    if (p->traced)
        comet_buf_printf(b, "; busiest link %s (%s at %s), all links %s",
                         Q(p->busiest_bytes, COMET_QTY_BYTES, q1), p->busiest_name,
                         Q(p->busiest_bandwidth, COMET_QTY_BYTES_PER_S, q2),
                         Q(p->total_bytes, COMET_QTY_BYTES, q3));
    if (p->traced)
        comet_buf_printf(b, "; as flows %s (%.2fx), compute waiting %s",
                         Q(p->simulated, COMET_QTY_SECONDS, q1), p->simulated_speedup,
                         Q(p->compute_wait, COMET_QTY_SECONDS, q2));
    if (p->traced && p->cc.fluid)
        comet_buf_printf(b, ", PFC pause %s over %lld links, peak queue %s",
                         Q(p->cc.pause_time, COMET_QTY_SECONDS, q2),
                         (long long)p->cc.paused_links, Q(p->cc.peak_queue, COMET_QTY_BYTES, q3));
    comet_buf_printf(b, "%s%s", p->why[0] ? "; " : "", p->why);
}

#define SYSTEMS_INTRO "each its fastest design; traffic per step from its step run as flows on " \
                      "the fabric"

static void systems_text(comet_buf *b, const comet_study *study, const comet_conclusions *c)
{
    if (c->n_systems == 0)
        return;
    comet_buf_printf(b, "   by system (" SYSTEMS_INTRO "):\n");
    for (int i = 0; i < c->n_systems; i++) {
        comet_buf_printf(b, "     %-16s ", pick_system_name(study, &c->systems[i]));
        pick_text(b, &c->systems[i]);
        comet_buf_printf(b, "\n");
    }
}

static void systems_facts(comet_page *p, const comet_study *study, const comet_conclusions *c)
{
    if (c->n_systems == 0)
        return;
    comet_page_fact(p, "by system", "%s", SYSTEMS_INTRO);
    for (int i = 0; i < c->n_systems; i++) {
        comet_buf line;
        comet_buf_init(&line);
        pick_text(&line, &c->systems[i]);
        if (line.data)
            comet_page_fact(p, pick_system_name(study, &c->systems[i]), "%s", line.data);
        comet_buf_free(&line);
    }
}

void comet_study_summary(comet_buf *b, const comet_study *study, const comet_findings *f,
                         const comet_conclusions *c, int n_models, const comet_results *r,
                         const char *report_path, const comet_band *best_bands)
{
    char q1[48], q2[48], q3[48], q4[48], label[160];
    comet_buf_printf(b, "comet study %s: %d model%s, %llu cluster designs\n", study->name,
                     n_models, n_models == 1 ? "" : "s",
                     (unsigned long long)(comet_study_points(study) / (uint64_t)n_models));
    for (int m = 0; m < n_models; m++) {
        const comet_findings *fm = &f[m];
        const comet_conclusions *cm = &c[m];
        const char *name = study->models[m].name;
        comet_buf_printf(b, "1. workload  %s: %s parameters, %s per step; state %s, "
                            "activations %s per sample\n",
                         name, Q(fm->params, COMET_QTY_COUNT, q1),
                         Q(fm->model_flops, COMET_QTY_FLOP, q2),
                         Q(state_total(fm), COMET_QTY_BYTES, q3),
                         Q(fm->activation_bytes, COMET_QTY_BYTES, q4));
        if (!fm->has_best) {
            comet_buf_printf(b, "2. strategies: none of %llu fits on %lld NPUs of %s\n",
                             (unsigned long long)fm->space.enumerated, (long long)fm->npus,
                             study->system.name);
        } else {
            double share;
            const char *loss = biggest_loss(&fm->space.worst.result, &share);
            comet_buf_printf(b, "2. strategies on %lld x %s: %llu of %llu fit; best %s (%s), "
                                "worst %s: %s apart, %.0f %% of the worst is %s\n",
                             (long long)fm->npus, study->system.name,
                             (unsigned long long)fm->space.feasible,
                             (unsigned long long)fm->space.enumerated,
                             Q(fm->best.result.step_time, COMET_QTY_SECONDS, q1),
                             report_strategy_label(&fm->best.strategy, label, sizeof label),
                             Q(fm->space.worst.result.step_time, COMET_QTY_SECONDS, q2),
                             ratio_text(fm->space.worst.result.step_time /
                                            fm->best.result.step_time, q3, sizeof q3),
                             100.0 * share, loss);
            best_band_text(b, best_bands ? &best_bands[m] : NULL);
        }
        comet_buf_printf(b, "3. memory: %llu strategies fit in HBM alone%s%s%s", 
                         (unsigned long long)fm->hbm_only.feasible,
                         fm->has_best_hbm_only ? " (best " : "",
                         fm->has_best_hbm_only
                             ? Q(fm->best_hbm_only.result.step_time, COMET_QTY_SECONDS, q1)
                             : "",
                         fm->has_best_hbm_only ? ")" : "");
        if (fm->expansion_tried)
            comet_buf_printf(b, "; with %s of expansion at %s: %llu (best %s, %s exposed "
                                "traffic)\n",
                             comet_format_setting(fm->expansion_capacity, COMET_QTY_BYTES, q2,
                                                  sizeof q2),
                             comet_format_setting(fm->expansion_bandwidth,
                                                  COMET_QTY_BYTES_PER_S, q3, sizeof q3),
                             (unsigned long long)fm->with_expansion.feasible,
                             fm->has_best_with_expansion
                                 ? Q(fm->best_with_expansion.result.step_time, COMET_QTY_SECONDS,
                                     q4)
                                 : "none",
                             fm->has_best_with_expansion
                                 ? Q(fm->best_with_expansion.result.offload_exposed,
                                     COMET_QTY_SECONDS, q1)
                                 : "no");
        else
            comet_buf_printf(b, "; no expansion tier in this study\n");
        if (!cm->fastest) {
            comet_buf_printf(b, "4. designs: none of %zu fits\n", cm->designs);
            continue;
        }
        comet_buf_printf(b, "4. designs: %zu of %zu fit; fastest %s, slowest %s: %.2fx apart\n",
                         cm->feasible, cm->designs,
                         Q(cm->fastest->result.step_time, COMET_QTY_SECONDS, q1),
                         Q(cm->slowest->result.step_time, COMET_QTY_SECONDS, q2), cm->spread);
        if (cm->expansion_pairs)
            comet_buf_printf(b, "   memory expansion: up to %.2fx faster, and %zu of %zu designs "
                                "fit only with it\n",
                             cm->expansion_best_speedup, cm->expansion_enables,
                             cm->expansion_pairs);
        if (cm->headroom.axis >= 0) {
            comet_buf_printf(b, "   ");
            comet_headroom_text(b, r, &cm->headroom);
            comet_buf_printf(b, "\n");
        }
        systems_text(b, study, cm);
        char design[200];
        comet_results_design_label(r, cm->fastest, design, sizeof design);
        comet_buf_printf(b, "5. for performance pick %s with %s (%s per step", design,
                         report_strategy_label(&cm->fastest->strategy, label, sizeof label),
                         Q(cm->fastest->result.step_time, COMET_QTY_SECONDS, q1));
        if (cm->checked)
            comet_buf_printf(b, "; simulated %s, %+.1f %%",
                             Q(cm->pick_simulated, COMET_QTY_SECONDS, q2),
                             100.0 * (cm->pick_simulated / cm->pick_estimate - 1.0));
        comet_buf_printf(b, ")\n");
        if (cm->best_value) {
            comet_results_design_label(r, cm->best_value, design, sizeof design);
            comet_buf_printf(b, "   for performance per dollar pick %s (%s, %s per 1M tokens/s)",
                             design, Q(cm->best_value->cost, COMET_QTY_MONEY, q1),
                             Q(cm->best_value->result.cost_per_mtoken_s, COMET_QTY_MONEY, q2));
        } else
            comet_buf_printf(b, "   (no costs in the system file: no performance-per-dollar pick)");
        if (cm->invest_axis >= 0) {
            const comet_axis *ax = &r->study.axes[cm->invest_axis];
            char axis_name[64];
            comet_buf_printf(b, "; then invest in %s (to %s: %.2fx faster for %s)\n",
                             comet_axis_short_name(ax, axis_name, sizeof axis_name),
                             comet_axis_format(ax, cm->invest_value_after, q3, sizeof q3),
                             cm->invest_speedup,
                             cm->invest_extra_cost > 0.0
                                 ? Q(cm->invest_extra_cost, COMET_QTY_MONEY, q4)
                                 : "no extra cost");
        } else
            comet_buf_printf(b, "; no single step up an axis makes it faster\n");
        if (cm->allocated) {
            comet_buf_printf(b, "   its %s of network per NPU split best as",
                             Q(cm->split_budget, COMET_QTY_BYTES_PER_S, q1));
            for (int d = 0; d < cm->split_dims; d++)
                comet_buf_printf(b, "%s %s %s", d ? " ·" : "", cm->split_names[d],
                                 Q(cm->split_bw[d], COMET_QTY_BYTES_PER_S, q2));
            comet_buf_printf(b, ": %.3fx faster than as built, %.3fx faster than an equal split\n",
                             cm->split_speedup, cm->split_equal_slowdown);
        }
    }
    const char *const *lines;
    int n = comet_study_assumptions(&lines);
    comet_buf_printf(b, "assumptions:\n");
    for (int i = 0; i < n; i++)
        comet_buf_printf(b, "  - %s\n", lines[i]);
    if (report_path)
        comet_buf_printf(b, "report: %s (charts); every design in results.csv and "
                            "results.jsonl\n",
                         report_path);
}

/* ---- the report page ------------------------------------------------------- */

static void workload_section(comet_page *p, const comet_study *study, const comet_findings *f)
{
    char q[48], q2[48], title[200], id[48];
    const char *name = study->models[f->model].name;
    snprintf(title, sizeof title, "1. Workload: %s", name);
    comet_page_section(p, title);
    comet_page_fact(p, "parameters", "%s", Q(f->params, COMET_QTY_COUNT, q));
    comet_page_fact(p, "work per step", "%s of model FLOPs over %s tokens",
                    Q(f->model_flops, COMET_QTY_FLOP, q), Q(f->tokens_per_step, COMET_QTY_COUNT, q2));
    comet_page_fact(p, "weights", "%s", Q(f->state_bytes[0], COMET_QTY_BYTES, q));
    comet_page_fact(p, "gradients", "%s", Q(f->state_bytes[1], COMET_QTY_BYTES, q));
    comet_page_fact(p, "optimizer state", "%s", Q(f->state_bytes[2], COMET_QTY_BYTES, q));
    comet_page_fact(p, "activations", "%s per sample through every layer, nothing recomputed",
                    Q(f->activation_bytes, COMET_QTY_BYTES, q));
    if (f->n_by_tp == 0) {
        comet_page_notice(p, "No strategy fits on the base cluster, so there is no "
                             "communication volume to show.");
        return;
    }
    comet_page_text(p, "How the communication each NPU does per step moves between the parallel "
                       "groups as the tensor-parallel degree grows (the best strategy found at "
                       "each degree):");
    snprintf(id, sizeof id, "volume-%d", f->model);
    snprintf(title, sizeof title, "%s: communication per NPU per step by TP degree", name);
    comet_chart *c = comet_page_chart(p, COMET_CHART_STACKED, id, title);
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "bytes per NPU per step");
    snprintf(c->y_label, sizeof c->y_label, "strategy");
    c->x_unit = COMET_QTY_BYTES;
    comet_chart_series(c, "tensor-parallel");
    comet_chart_series(c, "pipeline-parallel");
    comet_chart_series(c, "data-parallel");
    for (int i = 0; i < f->n_by_tp; i++) {
        char label[160];
        int k = comet_chart_cat(c, report_strategy_label(&f->by_tp[i].strategy, label,
                                                         sizeof label));
        comet_chart_set(c, k, 0, f->by_tp[i].result.tp_bytes);
        comet_chart_set(c, k, 1, f->by_tp[i].result.pp_bytes);
        comet_chart_set(c, k, 2, f->by_tp[i].result.dp_bytes);
    }
}

static void strategy_section(comet_page *p, const comet_study *study, const comet_findings *f,
                             const comet_band *band)
{
    char q[48], q2[48], title[200], id[48], label[160];
    const char *name = study->models[f->model].name;
    snprintf(title, sizeof title, "2. Strategies for %s on the base cluster", name);
    comet_page_section(p, title);
    comet_page_fact(p, "base cluster", "%lld NPUs of %s", (long long)f->npus, study->system.name);
    comet_page_fact(p, "strategies", "%llu in the space, %llu fit in memory",
                    (unsigned long long)f->space.enumerated,
                    (unsigned long long)f->space.feasible);
    if (!f->has_best) {
        comet_page_notice(p, "No strategy fits on the base cluster.");
        return;
    }
    double share;
    const char *loss = biggest_loss(&f->space.worst.result, &share);
    comet_page_fact(p, "best", "%s per step with %s",
                    Q(f->best.result.step_time, COMET_QTY_SECONDS, q),
                    report_strategy_label(&f->best.strategy, label, sizeof label));
    report_band_facts(p, band);
    comet_page_fact(p, "worst that fits", "%s per step with %s",
                    Q(f->space.worst.result.step_time, COMET_QTY_SECONDS, q2),
                    report_strategy_label(&f->space.worst.strategy, label, sizeof label));
    char ratio[48];
    comet_page_fact(p, "why", "the worst is %s slower; %.0f %% of its step is %s",
                    ratio_text(f->space.worst.result.step_time / f->best.result.step_time,
                               ratio, sizeof ratio),
                    100.0 * share, loss);
    snprintf(id, sizeof id, "best-worst-%d", f->model);
    snprintf(title, sizeof title, "%s: best and worst strategy that fit", name);
    comet_chart *c = report_breakdown_chart(p, id, title);
    report_breakdown_add(c, report_strategy_label(&f->best.strategy, label, sizeof label),
                         &f->best.result, band);
    report_breakdown_add(c, report_strategy_label(&f->space.worst.strategy, label, sizeof label),
                         &f->space.worst.result, NULL);
}

static void memory_section(comet_page *p, const comet_study *study, const comet_findings *f)
{
    char q[48], q2[48], q3[48], title[200], id[48];
    const char *name = study->models[f->model].name;
    snprintf(title, sizeof title, "3. Memory footprint of %s", name);
    comet_page_section(p, title);
    comet_page_fact(p, "HBM alone", "%llu strategies fit; %llu need more HBM%s%s",
                    (unsigned long long)f->hbm_only.feasible,
                    (unsigned long long)f->hbm_only.no_fit_hbm,
                    f->has_best_hbm_only ? "; best " : "",
                    f->has_best_hbm_only
                        ? Q(f->best_hbm_only.result.step_time, COMET_QTY_SECONDS, q)
                        : "");
    if (!f->expansion_tried) {
        comet_page_notice(p, "This study has no expansion tier: add an expansion_capacity axis "
                             "(with none among its values) to see what one makes feasible.");
        return;
    }
    comet_page_fact(p, "with an expansion tier", "%s at %s (%s): %llu strategies fit%s%s",
                    comet_format_setting(f->expansion_capacity, COMET_QTY_BYTES, q, sizeof q),
                    comet_format_setting(f->expansion_bandwidth, COMET_QTY_BYTES_PER_S, q2,
                                         sizeof q2),
                    study->system.expansion.attach == COMET_ATTACH_POOL       ? "one pool"
                    : study->system.expansion.attach == COMET_ATTACH_PER_NODE ? "per node"
                                                                               : "per NPU",
                    (unsigned long long)f->with_expansion.feasible,
                    f->has_best_with_expansion ? "; best " : "",
                    f->has_best_with_expansion
                        ? Q(f->best_with_expansion.result.step_time, COMET_QTY_SECONDS, q3)
                        : "");
    if (f->has_best_with_expansion)
        comet_page_fact(p, "its cost", "%s of expansion traffic per step, %s of it exposed",
                        Q(f->best_with_expansion.result.offload_time, COMET_QTY_SECONDS, q),
                        Q(f->best_with_expansion.result.offload_exposed, COMET_QTY_SECONDS, q2));
    snprintf(id, sizeof id, "feasible-%d", f->model);
    snprintf(title, sizeof title, "%s: strategies that fit, by memory", name);
    comet_chart *c = comet_page_chart(p, COMET_CHART_BARS, id, title);
    if (c) {
        snprintf(c->x_label, sizeof c->x_label, "strategies that fit");
        c->x_unit = COMET_QTY_COUNT;
        comet_chart_series(c, "strategies that fit");
        comet_chart_set(c, comet_chart_cat(c, "HBM alone"), 0, (double)f->hbm_only.feasible);
        comet_chart_set(c, comet_chart_cat(c, "with the expansion tier"), 0,
                        (double)f->with_expansion.feasible);
    }
    if (f->has_best_with_expansion) {
        snprintf(id, sizeof id, "memory-expansion-%d", f->model);
        report_memory_chart(p, id, &f->best_with_expansion.result);
    }
}

/* Speedup per design from its expansion tier, in design order. */
typedef struct expansion_bars {
    const comet_results *r;
    comet_chart *chart;
    int shown, skipped;
} expansion_bars;

static void add_expansion_bar(const comet_results_row *with, const comet_results_row *without,
                              void *ctx)
{
    expansion_bars *e = ctx;
    if (!comet_results_row_fits(with) || !comet_results_row_fits(without))
        return;
    if (e->shown >= 40) {
        e->skipped++;
        return;
    }
    char label[COMET_CHART_NAME_LEN];
    comet_results_design_label(e->r, with, label, sizeof label);
    int k = comet_chart_cat(e->chart, label);
    comet_chart_set(e->chart, k, 0, without->result.step_time / with->result.step_time - 1.0);
    e->shown++;
}

static void expansion_chart(comet_page *p, const comet_results *r, int model)
{
    bool swept = false;
    for (int i = 0; i < r->study.n_axes; i++)
        swept |= r->study.axes[i].kind == COMET_AXIS_EXPANSION_CAPACITY;
    if (!swept)
        return;
    char title[200], id[48];
    snprintf(id, sizeof id, "expansion-%d", model);
    snprintf(title, sizeof title, "%s: step time saved by memory expansion, per design",
             r->study.models[model].name);
    comet_chart *c = comet_page_chart(p, COMET_CHART_BARS, id, title);
    if (!c)
        return;
    snprintf(c->x_label, sizeof c->x_label, "faster than the same design without expansion");
    c->x_unit = COMET_QTY_FRACTION;
    comet_chart_series(c, "speedup - 1");
    expansion_bars e = {r, c, 0, 0};
    comet_results_expansion_pairs(r, model, add_expansion_bar, &e);
    if (e.skipped)
        snprintf(c->note, sizeof c->note, "The first 40 of %d designs are shown.",
                 e.shown + e.skipped);
    else if (!e.shown)
        snprintf(c->note, sizeof c->note,
                 "No design fits both with and without the tier, so there is nothing to "
                 "compare.");
}

static void recommendation(comet_page *p, const comet_study *study, const comet_conclusions *c,
                           const comet_results *r)
{
    char q[48], q2[48], title[200], design[200], label[160];
    snprintf(title, sizeof title, "5. Recommendation for %s", study->models[c->model].name);
    comet_page_section(p, title);
    if (!c->fastest) {
        comet_page_notice(p, "No design fits, so there is nothing to recommend: widen the axes "
                             "(more HBM, an expansion tier, more NPUs).");
        return;
    }
    comet_results_design_label(r, c->fastest, design, sizeof design);
    comet_page_fact(p, "for performance", "%s with %s: %s per step", design,
                    report_strategy_label(&c->fastest->strategy, label, sizeof label),
                    Q(c->fastest->result.step_time, COMET_QTY_SECONDS, q));
    if (c->checked)
        comet_page_fact(p, "cross-check", "the event-driven simulator runs that step in %s "
                                          "(%+.1f %% against the estimate)",
                        Q(c->pick_simulated, COMET_QTY_SECONDS, q2),
                        100.0 * (c->pick_simulated / c->pick_estimate - 1.0));
    if (c->best_value) {
        comet_results_design_label(r, c->best_value, design, sizeof design);
        comet_page_fact(p, "for performance per dollar", "%s with %s: %s, %s per 1M tokens/s",
                        design,
                        report_strategy_label(&c->best_value->strategy, label, sizeof label),
                        Q(c->best_value->cost, COMET_QTY_MONEY, q),
                        Q(c->best_value->result.cost_per_mtoken_s, COMET_QTY_MONEY, q2));
    }
    comet_page_fact(p, "spread", "the fastest design trains %.2fx faster than the slowest that "
                                 "fits",
                    c->spread);
    systems_facts(p, study, c);
    if (c->expansion_pairs)
        comet_page_fact(p, "memory expansion", "up to %.2fx faster; %zu of %zu designs fit "
                                               "only with it",
                        c->expansion_best_speedup, c->expansion_enables, c->expansion_pairs);
    if (c->headroom.axis >= 0) {
        comet_buf line;
        comet_buf_init(&line);
        comet_headroom_text(&line, r, &c->headroom);
        if (line.data)
            comet_page_fact(p, "oversubscription", "%s", line.data);
        comet_buf_free(&line);
    }
    if (c->invest_axis >= 0) {
        const comet_axis *ax = &r->study.axes[c->invest_axis];
        char v[48], name[64];
        comet_page_fact(p, "invest next in", "%s, to %s: %.2fx faster for %s",
                        comet_axis_short_name(ax, name, sizeof name),
                        comet_axis_format(ax, c->invest_value_after, v, sizeof v),
                        c->invest_speedup,
                        c->invest_extra_cost > 0.0 ? Q(c->invest_extra_cost, COMET_QTY_MONEY, q)
                                                   : "no extra cost");
    } else
        comet_page_fact(p, "invest next in", "nothing on these axes: no single step up makes "
                                             "the pick faster");
    if (c->allocated) {
        char split[400] = "";
        for (int d = 0; d < c->split_dims; d++) {
            char bw[48];
            size_t at = strlen(split);
            snprintf(split + at, sizeof split - at, "%s%s %s", d ? " · " : "", c->split_names[d],
                     Q(c->split_bw[d], COMET_QTY_BYTES_PER_S, bw));
        }
        comet_page_fact(p, "network split", "%s of %s per NPU: %.3fx faster than as built, "
                        "%.3fx faster than an equal split (comet allocate)", split,
                        Q(c->split_budget, COMET_QTY_BYTES_PER_S, q), c->split_speedup,
                        c->split_equal_slowdown);
    }
}

void comet_report_page_study(comet_page *p, const comet_study *study, const comet_findings *f,
                             const comet_conclusions *c, int n_models, const comet_results *r,
                             const int *heatmap, const comet_band *best_bands)
{
    if (!p)
        return;
    comet_page_section(p, "The study");
    comet_page_text(p, "The COMET methodology, step by step: characterize the workload, search "
                       "the parallelization strategies, check the memory footprint against each "
                       "tier, sweep the cluster designs, and recommend. Every figure below "
                       "comes from comet's analytical model and strategy search.");
    comet_page_fact(p, "study", "%s", study->name);
    comet_page_fact(p, "designs", "%llu",
                    (unsigned long long)comet_study_points(study));
    const char *const *lines;
    int n = comet_study_assumptions(&lines);
    comet_page_section(p, "Assumptions");
    for (int i = 0; i < n; i++)
        comet_page_text(p, "%s", lines[i]);
    for (int m = 0; m < n_models; m++) {
        workload_section(p, study, &f[m]);
        strategy_section(p, study, &f[m], best_bands ? &best_bands[m] : NULL);
        memory_section(p, study, &f[m]);
    }
    comet_page_section(p, "4. Cluster design sweep");
    comet_page_text(p, "The best strategy for every cluster design; the sections that follow "
                       "come from the saved results (results.csv).");
    comet_report_page_sweep(p, r, heatmap);
    for (int m = 0; m < n_models && !r->problem[0]; m++)
        expansion_chart(p, r, m);
    for (int m = 0; m < n_models; m++)
        recommendation(p, study, &c[m], r);
}
