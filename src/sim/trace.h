/* Internal: Chrome trace-event JSON of a simulated task graph. */
#ifndef COMET_SIM_TRACE_H
#define COMET_SIM_TRACE_H

#include "comet/buf.h"
#include "engine.h"

/* One process per pipeline stage, one thread per stream; kind_names[t->kind]
 * names the slices. */
void sim_trace_write(const sim_graph *g, const char *const *kind_names, comet_buf *out);

#endif
