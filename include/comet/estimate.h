/* The analytical model of one training step: time, its breakdown, the
 * memory footprint per tier with feasibility, utilization and cost. */
#ifndef COMET_ESTIMATE_H
#define COMET_ESTIMATE_H

#include <stdbool.h>
#include "comet/error.h"
#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

typedef enum comet_mem_kind {
    COMET_MEM_WEIGHTS = 0,
    COMET_MEM_GRADIENTS,
    COMET_MEM_OPTIMIZER,
    COMET_MEM_ACTIVATIONS,
    COMET_MEM_KIND_COUNT
} comet_mem_kind;

typedef enum comet_tier {
    COMET_TIER_HBM = 0,
    COMET_TIER_EXPANSION,
    COMET_TIER_COUNT
} comet_tier;

typedef enum comet_infeasible {
    COMET_FITS = 0,
    COMET_NO_FIT_HBM,
    COMET_NO_FIT_EXPANSION,
    COMET_NO_EXPANSION_TIER     /* offload asked for, but the system has no expansion tier */
} comet_infeasible;

typedef struct comet_result {
    /* Time of one step, seconds, and where it goes. The parts add up to
     * step_time: forward + backward + recompute + optimizer + bubble +
     * tp_exposed + pp_exposed + dp_exposed + offload_exposed + ep_exposed. */
    double step_time;
    double forward;
    double backward;
    double recompute;
    double optimizer;
    double bubble;
    double tp_exposed;
    double pp_exposed;
    double dp_exposed;
    double offload_exposed;
    double ep_exposed;             /* mixture of experts: dispatch and combine all-to-alls */

    /* Communication volume and raw (unhidden) time for context. */
    double tp_comm_time;
    double pp_comm_time;
    double dp_comm_time;
    double offload_time;
    double ep_comm_time;
    /* Communication volume per NPU per step: the buffers each NPU hands to
     * its group's collectives and sends (bytes, not wire traffic). */
    double tp_bytes;
    double pp_bytes;
    double dp_bytes;
    double ep_bytes;
    /* Of the tp_* figures above, context parallelism's exchange (ring
     * sends or Ulysses all-to-alls; 0 without cp): its exposed time, raw
     * time and bytes per NPU per step. Not a column of their own in the
     * report: the TP rows hold them. */
    double cp_exposed;
    double cp_comm_time;
    double cp_bytes;

    /* Memory per NPU per tier, bytes. */
    double mem[COMET_TIER_COUNT][COMET_MEM_KIND_COUNT];
    double mem_total[COMET_TIER_COUNT];
    double mem_capacity[COMET_TIER_COUNT];
    bool feasible;
    comet_infeasible infeasible;

    /* Work and rates. */
    int64_t npus;
    int64_t microbatches;          /* per pipeline per step */
    double model_flops;            /* per step, whole cluster, no recompute */
    double hardware_flops;         /* per step, whole cluster, with recompute */
    double mfu;                    /* model FLOPs / (step_time * npus * peak) */
    double hfu;
    double tokens_per_s;
    double samples_per_s;
    double tflops_per_npu;         /* model TFLOP/s per NPU */
    double params;                 /* model parameters */

    /* Cost (0 when the system gives none). */
    double cost;                   /* capital cost of the cluster */
    double cost_per_mtoken_s;      /* cost / (tokens/s / 1e6) */
} comet_result;

/* Estimate one step. The strategy is resolved (placement filled) in a
 * copy; errors (bad strategy for this model/system) name the key. An
 * infeasible memory footprint is not an error: result->feasible says it. */
comet_status comet_estimate(const comet_model *m, const comet_system *sys,
                            const comet_strategy *s, comet_result *out, comet_error *err);

/* Capital cost of npus NPUs of this system: NPUs, HBM, expansion memory,
 * network bandwidth, and the switch ports and cables of its Clos
 * dimensions (comet_net_hardware_of) at the system's unit costs (0 when
 * none given). docs/study.md, "Costs". */
double comet_system_cost(const comet_system *sys, int64_t npus);

/* The switches and cables dimension d of sys needs for npus NPUs, and
 * their price. A Clos (fat_tree, rail) is one tree per pod: the pod holds the
 * P NPUs of dimensions 0..d (an auto outermost size takes what npus
 * leaves), and there are ceil(npus / P) pods. Per pod, with the port split
 * of comet_clos_ports_of (down d0/d1, up u0/u1 per tier):
 *   leaves  L = ceil(P / d0) (a rail network: ceil(size / d0) per rail, one
 *           rail per NPU inside the dimension);
 *   2 tiers: spines ceil(L u0 / radix);
 *   3 tiers: blocks Q = ceil(L / d1) of u0 aggregation switches each, and
 *           cores ceil(Q u0 u1 / radix);
 * a tier above a single leaf (or a single block) is not built. Switches
 * are bought whole (radix ports each); cables are the NPUs' ports and
 * every uplink that is built. Other topologies are built once per instance
 * (pods: ceil(npus / size) instances of `size` NPUs), no leaves: a ring,
 * torus or mesh has, per axis of k NPUs (a ring one axis of size), size/k
 * lines of k cables with wrap-around (1 where k = 2) or k - 1 on a mesh; a
 * fully connected one size(size-1)/2; a switch one switch of size ports
 * (switches, switch_ports) and size cables. */
typedef struct comet_net_hardware {
    int64_t pods;              /* trees (Clos) or instances (other topologies) */
    int64_t leaves, aggregation, spines; /* per pod; spines: the top tier (2 tiers'
                                            spines, 3 tiers' cores) */
    int64_t switches;          /* all pods */
    int64_t switch_ports;      /* switches x radix (a switch dimension: x size) */
    int64_t links;             /* cables, all pods */
    double cost;               /* switch_ports x cost_per_switch_port + links x cost_per_link */
} comet_net_hardware;

void comet_net_hardware_of(const comet_system *sys, int d, int64_t npus,
                           comet_net_hardware *out);

/* One line saying why a result does not fit, e.g. "HBM: 93.1 GiB needed, 80.0 GiB available". */
const char *comet_result_reason(const comet_result *r, char *out, size_t cap);

const char *comet_mem_kind_name(comet_mem_kind k);
const char *comet_tier_name(comet_tier t);

#endif
