/* One design point of a sweep: apply the point's axis values to the base
 * system, price the design, and run the strategy search for the point's
 * model on it, keeping the best strategy. A point that cannot be laid out,
 * costs more than the budget, or fits no strategy is a result with that
 * status, not an error. */
#include "comet/sweep.h"

#include <string.h>

const char *comet_point_status_name(comet_point_status s)
{
    static const char *const names[] = {"ok", "no_fit", "over_budget", "no_layout"};
    return (unsigned)s <= COMET_POINT_NO_LAYOUT ? names[s] : "?";
}

comet_status comet_sweep_point(const comet_study *study, uint64_t index, comet_sweep_row *row,
                               comet_error *err)
{
    memset(row, 0, sizeof *row);
    row->index = index;
    comet_system sys;
    comet_study_point(study, index, &row->model, &sys, &row->npus, row->values);
    row->cost = comet_system_cost(&sys, row->npus);
    if (study->budget > 0.0 && row->cost > study->budget) {
        row->status = COMET_POINT_OVER_BUDGET;
        return COMET_OK;
    }
    comet_search_request req = {
        .model = &study->models[row->model],
        .system = &sys,
        .objective = study->objective,
        .top_k = 1,
        .shard = 0,
        .shards = 1,
    };
    comet_search_space_defaults(&req.space);
    req.space.base = study->base;
    req.space.npus = row->npus;
    req.space.global_batch = study->global_batch;
    req.space.max_global_batch = study->max_global_batch;
    req.space.max_microbatch = study->max_microbatch;
    req.space.vary_flash = study->vary_flash;
    req.space.vary_offload = study->vary_offload;
    int n = 0;
    comet_status st = comet_search(&req, &row->best, &n, &row->stats, err);
    if (st)
        return st;
    if (n > 0)
        row->status = COMET_POINT_OK;
    else if (row->stats.enumerated == 0)
        row->status = COMET_POINT_NO_LAYOUT;
    else
        row->status = COMET_POINT_NO_FIT;
    return COMET_OK;
}
