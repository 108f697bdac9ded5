/* Internal: Chrome trace-event JSON of a simulated task graph. */
#ifndef COMET_SIM_CHROME_TRACE_H
#define COMET_SIM_CHROME_TRACE_H

#include "comet/buf.h"
#include "comet/simulate.h"
#include "sim.h"

/* One process per pipeline stage, one thread per resource of the stage
 * (per_stage of them: the streams named by stream_names, then one per
 * network link named by link_names); kind_names[t->kind] names slices;
 * fabric (may be NULL): its watched links as counter tracks of a process
 * after the stages'. */
void sim_chrome_trace_write(const sim_graph *g, int per_stage, const char *const *stream_names,
                     int n_streams, const char *const *link_names,
                     const char *const *kind_names, const comet_sim_fabric_links *fabric,
                     comet_buf *out);

/* The graph's stream tasks as merged busy spans (see comet_sim_timeline);
 * tasks of kind `folded` (blocking TP collectives) join their neighbours. */
comet_status sim_timeline_collect(const sim_graph *g, int per_stage,
                                  const char *const *stream_names, int n_streams,
                                  const char *const *kind_names, int n_kinds, int folded,
                                  comet_sim_timeline *out, comet_error *err);

#endif
