/* Allocation files for comet allocate: one `allocate:` section with the
 * network (a system), the budget per NPU (GB/s, or dollars at each
 * dimension's cost per GB/s), bounds per dimension (continuous, or whole
 * links of one speed), weighted workloads and the objective. The system,
 * models and strategies reuse the ordinary section readers; this file
 * reads the rest and checks the whole problem before the solver runs, so
 * a budget below the minimums, a negative cost or inverted bounds cost a
 * one-line error naming file:line:column and the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/allocate.h"
#include "sections.h"
#include "srcmap.h"

/* One dimension's bounds, read into a comet_alloc_dim. */
static const cfg_field dim_fields[] = {
    CFG_QTY("min", comet_alloc_dim, min, CFG_UNIT_BANDWIDTH),
    CFG_QTY("max", comet_alloc_dim, max, CFG_UNIT_BANDWIDTH),
    CFG_REAL("cost_per_gbps", comet_alloc_dim, cost_per_gbps),
    CFG_QTY("link", comet_alloc_dim, link_bandwidth, CFG_UNIT_BANDWIDTH),
    CFG_INT("min_links", comet_alloc_dim, min_links, 0, COMET_ALLOC_MAX_LINKS),
    CFG_INT("max_links", comet_alloc_dim, max_links, 1, COMET_ALLOC_MAX_LINKS),
    CFG_END,
};

static int dim_index(const comet_system *sys, const char *name)
{
    for (int d = 0; d < sys->n_dims; d++)
        if (strcmp(sys->dims[d].name, name) == 0)
            return d;
    return -1;
}

static comet_status read_dims(cfg_ctx *c, comet_alloc_problem *p, const cfg_node *n,
                              const char *path, bool given[COMET_MAX_DIMS])
{
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    const char *names[COMET_MAX_DIMS + 1];
    for (int d = 0; d < p->system.n_dims; d++)
        names[d] = p->system.dims[d].name;
    names[p->system.n_dims] = NULL;
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *k = cfg_map_key(n, i);
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, k->text);
        cfg_record(c, kpath, k);
        int d = dim_index(&p->system, k->text);
        if (d < 0)
            return cfg_fail_unknown(c, k, kpath, "network dimension", names);
        comet_alloc_dim *a = &p->dims[d];
        double sys_cost = a->cost_per_gbps;
        a->cost_per_gbps = -1.0;
        CFG_TRY(cfg_fields_read(c, cfg_map_value(n, i), kpath, dim_fields, a));
        if (a->cost_per_gbps < 0.0)
            a->cost_per_gbps = sys_cost;
        given[d] = true;
    }
    return COMET_OK;
}

static comet_status read_workload(cfg_ctx *c, const cfg_node *n, const char *path, size_t i,
                                  void *out)
{
    comet_alloc_workload *w = (comet_alloc_workload *)out + i;
    static const char *const keys[] = {"model", "npus", "global_batch", "weight", "strategy",
                                       NULL};
    CFG_TRY(cfg_expect(c, n, path, CFG_MAP));
    for (size_t j = 0; j < n->n; j++) {
        const cfg_node *k = cfg_map_key(n, j);
        bool known = false;
        for (int m = 0; keys[m]; m++)
            known = known || strcmp(keys[m], k->text) == 0;
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, path, k->text);
        const cfg_node *v = cfg_map_value(n, j);
        cfg_record(c, kpath, v && v->kind == CFG_SCALAR ? v : k);
        if (!known)
            return cfg_fail_unknown(c, k, kpath, "key", keys);
    }
    const cfg_node *v;
    char kpath[CFG_PATH_LEN];
    w->weight = 1.0;
    comet_strategy_defaults(&w->strategy);
    if (!(v = cfg_map_find(n, "model")))
        return cfg_fail(c, n, path, "missing key \"model\"");
    cfg_path_key(kpath, sizeof kpath, path, "model");
    CFG_TRY(cfg_section_read(c, v, kpath, &cfg_model_section, &w->model));
    if (!(v = cfg_map_find(n, "npus")))
        return cfg_fail(c, n, path, "missing key \"npus\"");
    cfg_path_key(kpath, sizeof kpath, path, "npus");
    CFG_TRY(cfg_read_int(c, v, kpath, 1, COMET_MAX_NPUS, &w->npus));
    if (!(v = cfg_map_find(n, "global_batch")))
        return cfg_fail(c, n, path, "missing key \"global_batch\"");
    cfg_path_key(kpath, sizeof kpath, path, "global_batch");
    CFG_TRY(cfg_read_int(c, v, kpath, 1, COMET_MAX_BATCH, &w->global_batch));
    if ((v = cfg_map_find(n, "weight"))) {
        cfg_path_key(kpath, sizeof kpath, path, "weight");
        CFG_TRY(cfg_read_real(c, v, kpath, true, &w->weight));
    }
    if ((v = cfg_map_find(n, "strategy"))) {
        cfg_path_key(kpath, sizeof kpath, path, "strategy");
        CFG_TRY(cfg_section_read(c, v, kpath, &cfg_strategy_section, &w->strategy));
        w->fixed = true;
    }
    w->strategy.global_batch = w->global_batch;
    return COMET_OK;
}

static const char *gbps(double bytes_per_s, char *out, size_t cap)
{
    snprintf(out, cap, "%.6g GB/s", bytes_per_s / 1e9);
    return out;
}

/* Bounds in order, budgets that cover the minimums, costs where dollars
 * are spent, whole links that make sense, workloads that fit. */
static comet_status check(cfg_ctx *c, comet_alloc_problem *p, const bool given[])
{
    bool dollars = p->budget_kind == COMET_ALLOC_BUDGET_DOLLARS;
    const char *budget_key = dollars ? "allocate.budget_dollars" : "allocate.budget";
    double least = 0.0;
    for (int d = 0; d < p->system.n_dims; d++) {
        comet_alloc_dim *a = &p->dims[d];
        char path[CFG_PATH_LEN], key[CFG_PATH_LEN + 32], b1[48], b2[48];
        snprintf(path, sizeof path, "allocate.dimensions.%s", p->system.dims[d].name);
        if (dollars && !(a->cost_per_gbps > 0.0)) {
            return cfg_fail_key(c, given[d] ? path : budget_key,
                                "dimension %s has no cost per GB/s (give cost_per_gbps "
                                "under allocate.dimensions.%s or in the system)",
                                p->system.dims[d].name, p->system.dims[d].name);
        }
        if (a->link_bandwidth > 0.0) {
            if (a->min > 0.0 || a->max > 0.0) {
                snprintf(key, sizeof key, "%s.link", path);
                return cfg_fail_key(c, key, "whole links take min_links and max_links, "
                                    "not min and max");
            }
            if (a->min_links == 0)
                a->min_links = 1;
            if (a->max_links == 0) {
                double most = p->budget / (dollars ? a->cost_per_gbps / 1e9 : 1.0) /
                              a->link_bandwidth;
                a->max_links = most >= COMET_ALLOC_MAX_LINKS ? COMET_ALLOC_MAX_LINKS
                               : most < (double)a->min_links ? a->min_links
                                                             : (int64_t)floor(most + 1e-9);
            }
            if (a->max_links < a->min_links) {
                snprintf(key, sizeof key, "%s.max_links", path);
                return cfg_fail_key(c, key, "%lld is below min_links %lld",
                                    (long long)a->max_links, (long long)a->min_links);
            }
        } else {
            if (a->min_links > 0 || a->max_links > 0) {
                snprintf(key, sizeof key, "%s.%s", path, a->min_links ? "min_links" : "max_links");
                return cfg_fail_key(c, key, "needs link: the speed of one link");
            }
            if (!(a->min > 0.0))
                a->min = 1e9; /* 1 GB/s: every dimension keeps some bandwidth */
            if (a->max > 0.0 && a->max < a->min) {
                snprintf(key, sizeof key, "%s.max", path);
                return cfg_fail_key(c, key, "%s is below min %s", gbps(a->max, b1, sizeof b1),
                                    gbps(a->min, b2, sizeof b2));
            }
        }
        double lo = a->link_bandwidth > 0.0 ? (double)a->min_links * a->link_bandwidth : a->min;
        least += (dollars ? a->cost_per_gbps / 1e9 : 1.0) * lo;
    }
    if (least > p->budget * (1.0 + 1e-12)) {
        char b1[48], b2[48];
        if (dollars)
            return cfg_fail_key(c, budget_key, "%.6g is below the %.6g the dimensions' "
                                "minimums cost", p->budget, least);
        return cfg_fail_key(c, budget_key, "%s is below the sum of the dimensions' minimums, %s",
                            gbps(p->budget, b1, sizeof b1), gbps(least, b2, sizeof b2));
    }
    if (p->objective == COMET_ALLOC_PERF_PER_COST) {
        bool priced = p->system.cost_per_npu > 0.0;
        for (int d = 0; d < p->system.n_dims; d++)
            priced = priced || p->dims[d].cost_per_gbps > 0.0;
        if (!priced)
            return cfg_fail_key(c, "allocate.objective", "perf_per_cost needs costs: the "
                                "system's (cost.per_npu) or a cost_per_gbps per dimension");
    }
    for (int k = 0; k < p->n_workloads; k++) {
        comet_alloc_workload *w = &p->workloads[k];
        comet_strategy s = w->strategy;
        if (!w->fixed) {
            comet_strategy_defaults(&s);
            s.dp = w->npus;
            s.global_batch = w->npus;
        }
        comet_error e;
        comet_error_clear(&e);
        char path[CFG_PATH_LEN];
        snprintf(path, sizeof path, "allocate.workloads[%d].%s", k, w->fixed ? "strategy" : "npus");
        if (comet_strategy_resolve(&w->model, &p->system, &s, NULL, &e) != COMET_OK)
            return cfg_fail_key(c, path, "%s%s%s", e.key[0] ? e.key : "", e.key[0] ? ": " : "",
                                e.message);
        if (w->fixed && comet_strategy_npus(&s) != w->npus) {
            snprintf(path, sizeof path, "allocate.workloads[%d].npus", k);
            return cfg_fail_key(c, path, "%lld NPUs, but the strategy uses %lld",
                                (long long)w->npus, (long long)comet_strategy_npus(&s));
        }
    }
    return COMET_OK;
}

/* The section's keys (a cfg_one_section's read). */
static comet_status read_allocate(cfg_ctx *c, void *obj, const cfg_node *n)
{
    comet_alloc_problem *p = obj;
    static const char *const keys[] = {"name", "system", "budget", "budget_dollars",
                                       "objective", "dimensions", "workloads", NULL};
    CFG_TRY(cfg_expect(c, n, "allocate", CFG_MAP));
    for (size_t i = 0; i < n->n; i++) {
        const cfg_node *k = cfg_map_key(n, i);
        char kpath[CFG_PATH_LEN];
        cfg_path_key(kpath, sizeof kpath, "allocate", k->text);
        const cfg_node *v = cfg_map_value(n, i);
        cfg_record(c, kpath, v && v->kind == CFG_SCALAR ? v : k);
        bool known = false;
        for (int j = 0; keys[j]; j++)
            known = known || strcmp(keys[j], k->text) == 0;
        if (!known)
            return cfg_fail_unknown(c, k, kpath, "key", keys);
    }
    const cfg_node *v;
    if ((v = cfg_map_find(n, "name")))
        CFG_TRY(cfg_read_name(c, v, "allocate.name", p->name, sizeof p->name));
    if (!(v = cfg_map_find(n, "system")))
        return cfg_fail(c, n, "allocate", "missing key \"system\"");
    CFG_TRY(cfg_section_read(c, v, "allocate.system", &cfg_system_section, &p->system));
    for (int d = 0; d < p->system.n_dims; d++)
        p->dims[d].cost_per_gbps = p->system.dims[d].cost_per_gbps;
    const cfg_node *bw = cfg_map_find(n, "budget"), *usd = cfg_map_find(n, "budget_dollars");
    if (bw && usd)
        return cfg_fail(c, usd, "allocate.budget_dollars",
                        "give one budget: budget (GB/s per NPU) or budget_dollars, not both");
    if (bw) {
        p->budget_kind = COMET_ALLOC_BUDGET_BANDWIDTH;
        CFG_TRY(cfg_read_quantity(c, bw, "allocate.budget", CFG_UNIT_BANDWIDTH, true,
                                  &p->budget));
    } else if (usd) {
        p->budget_kind = COMET_ALLOC_BUDGET_DOLLARS;
        CFG_TRY(cfg_read_real(c, usd, "allocate.budget_dollars", true, &p->budget));
    } else {
        return cfg_fail(c, n, "allocate", "missing key \"budget\" (GB/s per NPU) or "
                        "\"budget_dollars\" (per NPU)");
    }
    if ((v = cfg_map_find(n, "objective"))) {
        static const char *const objectives[] = {"step_time", "perf_per_cost", NULL};
        int o;
        CFG_TRY(cfg_read_enum(c, v, "allocate.objective", objectives, &o));
        p->objective = (comet_alloc_objective)o;
    }
    bool given[COMET_MAX_DIMS] = {false};
    if ((v = cfg_map_find(n, "dimensions")))
        CFG_TRY(read_dims(c, p, v, "allocate.dimensions", given));
    if (!(v = cfg_map_find(n, "workloads")))
        return cfg_fail(c, n, "allocate", "missing key \"workloads\"");
    CFG_TRY(cfg_expect(c, v, "allocate.workloads", CFG_SEQ));
    if (v->n == 0)
        return cfg_fail(c, v, "allocate.workloads", "is empty: give at least one workload");
    CFG_TRY(cfg_list_read(c, v, "allocate.workloads", COMET_ALLOC_MAX_WORKLOADS, read_workload,
                          p->workloads, &p->n_workloads));
    return check(c, p, given);
}

static void allocate_init(void *obj)
{
    comet_alloc_problem *p = obj;
    snprintf(p->name, sizeof p->name, "allocate");
    p->threads = 1;
}

static const cfg_one_section allocate_document = {
    .name = "allocate",
    .article = "an",
    .unnamed = "<allocate>",
    .size = sizeof(comet_alloc_problem),
    .map_offset = offsetof(comet_alloc_problem, srcmap),
    .init = allocate_init,
    .read = read_allocate,
};

comet_status comet_alloc_read_text(const char *text, size_t len, const char *filename,
                                   comet_alloc_problem *p, comet_error *err)
{
    return cfg_one_section_read_text(&allocate_document, text, len, filename, p, err);
}

comet_status comet_alloc_read_file(const char *path, comet_alloc_problem *p, comet_error *err)
{
    return cfg_one_section_read_file(&allocate_document, path, p, err);
}
