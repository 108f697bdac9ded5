/* Step 4 along a study's system axis: whole systems side by side (the FRED
 * study's mesh wafer, FRED-C and FRED-D, issue 17). For each system, the
 * fastest design of the model on it, its speedup over the axis's first
 * system, and what its links carry: the design's best strategy is found
 * again with its placement (search_again.h: the overall fastest design's
 * search is the one the pick's check made) and its step run as flows on
 * the system's fabric, every NPU's transfers sharing the links, so the
 * busiest link's bytes are the routed traffic, in-network reduction and
 * multicast included, not a closed form's; under a congestion-control
 * scheme the flows run through its fluid model, which gives the step's
 * time with queues and pauses (the RoCE study compares schemes so). The
 * flows are bounded (COMET_SIM_AUTO_MAX_FLOWS); a step past that, or one the fabric cannot
 * place, is reported untraced with the reason rather than failing the
 * study. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/methodology.h"
#include "comet/simulate.h"
#include "comet/sweep.h"
#include "search_again.h"

static int system_axis_of(const comet_results *r)
{
    for (int a = 0; a < r->study.n_axes; a++)
        if (r->study.axes[a].kind == COMET_AXIS_SYSTEM)
            return a;
    return -1;
}

/* The fastest fitting design of model `model` whose system axis holds v. */
static const comet_results_row *fastest_on(const comet_results *r, int model, int axis, double v)
{
    const comet_results_row *best = NULL;
    for (size_t i = 0; i < r->n_rows; i++) {
        const comet_results_row *row = &r->rows[i];
        if (row->model != model || row->values[axis] != v || !comet_results_row_fits(row))
            continue;
        if (!best || row->result.step_time < best->result.step_time)
            best = row;
    }
    return best;
}

/* The step of the design's best strategy as flows on its fabric. */
static comet_status trace_pick(const comet_study *study, comet_conclusions *c,
                               comet_system_pick *pick, comet_error *err)
{
    comet_sweep_row *row = malloc(sizeof *row);
    comet_sim_step_result *sim = malloc(sizeof *sim);
    comet_sim_fabric_links *links = calloc(1, sizeof *links);
    comet_system *sys = malloc(sizeof *sys);
    comet_status st = row && sim && links && sys
                          ? search_again(study, c, pick->row->index, row, err)
                          : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                            "out of memory");
    if (!st && row->status != COMET_POINT_OK)
        snprintf(pick->why, sizeof pick->why, "its search found no strategy again");
    else if (!st) {
        int model;
        int64_t npus;
        double values[COMET_STUDY_MAX_AXES];
        comet_study_point(study, row->index, &model, sys, &npus, values);
        comet_sim_step_options o = {.fidelity = COMET_SIM_UNAWARE,
                                    .fabric = COMET_SIM_FABRIC_ON,
                                    .links = links,
                                    .max_flows = COMET_SIM_AUTO_MAX_FLOWS};
        comet_error why;
        comet_status sst = comet_sim_step(&study->models[model], sys, &row->best.strategy, &o,
                                          sim, &why);
        if (sst == COMET_ENOMEM) {
            *err = why;
            st = sst;
        } else if (sst) {
            snprintf(pick->why, sizeof pick->why, "not run as flows: %.140s", why.message);
        } else if (links->n_hot > 0) {
            pick->traced = true;
            pick->busiest_bytes = links->hot[0].bytes;
            pick->busiest_bandwidth = links->hot[0].bandwidth;
            snprintf(pick->busiest_name, sizeof pick->busiest_name, "%s", links->hot[0].name);
            for (int t = 0; t < 3; t++)
                pick->total_bytes += links->bytes_per_tier[t];
            pick->simulated = sim->step_time;
            double busiest = 0.0;
            for (int g = 0; g < sim->stages && g < COMET_SIM_MAX_STAGES; g++)
                busiest = sim->compute_busy[g] > busiest ? sim->compute_busy[g] : busiest;
            pick->compute_wait = sim->step_time > busiest ? sim->step_time - busiest : 0.0;
            pick->cc = links->cc;
            if (sim->simulated_microbatches < sim->microbatches)
                snprintf(pick->why, sizeof pick->why,
                         "over %lld of its %lld microbatches (the rest extrapolated)",
                         (long long)sim->simulated_microbatches, (long long)sim->microbatches);
        } else {
            snprintf(pick->why, sizeof pick->why, "its step moves nothing over the network");
        }
        comet_sim_fabric_links_free(links);
    }
    free(row);
    free(sim);
    free(links);
    free(sys);
    return st;
}

comet_status comet_study_compare_systems(const comet_study *study, const comet_results *r,
                                         comet_conclusions *c, comet_error *err)
{
    c->n_systems = 0;
    int axis = system_axis_of(r);
    if (axis < 0)
        return COMET_OK;
    const comet_axis *ax = &r->study.axes[axis];
    int n = ax->n < COMET_STUDY_MAX_SYSTEMS ? ax->n : COMET_STUDY_MAX_SYSTEMS;
    for (int i = 0; i < n; i++) {
        comet_system_pick *pick = &c->systems[i];
        memset(pick, 0, sizeof *pick);
        pick->system = (int)ax->values[i];
        pick->row = fastest_on(r, c->model, axis, ax->values[i]);
        if (!pick->row) {
            snprintf(pick->why, sizeof pick->why, "no design fits");
            continue;
        }
        comet_status st = trace_pick(study, c, pick, err);
        if (st)
            return st;
    }
    c->n_systems = n;
    const comet_system_pick *first = &c->systems[0];
    for (int i = 0; i < n; i++) {
        comet_system_pick *pick = &c->systems[i];
        pick->speedup = first->row && pick->row && pick->row->result.step_time > 0.0
                            ? first->row->result.step_time / pick->row->result.step_time
                            : 0.0;
        pick->simulated_speedup = first->traced && pick->traced && pick->simulated > 0.0
                                      ? first->simulated / pick->simulated
                                      : 0.0;
    }
    return COMET_OK;
}
