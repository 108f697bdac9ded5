/* The training step's task graph, for code that wants the graph itself
 * rather than its simulation (the Chakra exporter). Built as comet
 * simulate builds it, congestion-unaware, with one task per tensor-
 * parallel collective; each collective task records its type, group and
 * bytes so it can be written out as a collective of that size. */
#ifndef COMET_SIM_STEP_GRAPH_H
#define COMET_SIM_STEP_GRAPH_H

#include "comet/comet.h"
#include "engine.h"

/* Per stage, resources stage * per_stage + one of these. */
enum { STEP_R_COMPUTE, STEP_R_TP, STEP_R_PP_FWD, STEP_R_PP_BWD, STEP_R_DP, STEP_R_MEM,
       STEP_R_PER_STAGE };
/* Task kinds (sim_task.kind). */
enum { STEP_K_FWD, STEP_K_BWD, STEP_K_RECOMPUTE, STEP_K_TP, STEP_K_SEND_FWD, STEP_K_SEND_BWD,
       STEP_K_DP, STEP_K_OPTIMIZER, STEP_K_GATHER, STEP_K_LOAD_WEIGHTS, STEP_K_STORE_ACT,
       STEP_K_LOAD_ACT, STEP_K_OPT_STATE, STEP_K_STORE_WEIGHTS, STEP_K_COUNT };

typedef struct step_coll {
    comet_collective coll;     /* COMET_COLL_NONE: not a collective */
    comet_group group;
    double bytes;              /* per NPU */
} step_coll;

typedef struct step_graph {
    comet_strategy s;          /* resolved */
    sim_graph g;               /* task.stage is the pipeline stage */
    int stages, per_stage;
    step_coll *coll;           /* per task */
    double p2p_bytes;          /* per pipeline send */
    double exp_bw, exp_latency;
    const char *const *kind_names;
} step_graph;

comet_status sim_step_graph_build(const comet_model *m, const comet_system *sys,
                                  const comet_strategy *s, step_graph *out, comet_error *err);
void sim_step_graph_free(step_graph *g);

#endif
