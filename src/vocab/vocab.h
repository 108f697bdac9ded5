/* The vocabulary folder's interface: the name tables behind the public
 * *_name / *_parse functions (indexed by the enum value, ending in NULL),
 * shared with the config readers so that error messages can list the
 * accepted names, and the small domain conventions every layer follows.
 * It sits below every other folder and includes only public headers. */
#ifndef COMET_VOCAB_H
#define COMET_VOCAB_H

#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

extern const char *const vocab_dtype_names[];
extern const char *const vocab_model_kind_names[];
extern const char *const vocab_collective_names[];
extern const char *const vocab_group_names[];
/* The groups a generic layer's own communication may name (tp, pp, dp). */
extern const char *const vocab_layer_group_names[];
/* A layer-list entry given by its shape: its op, a pool's kind, and
 * which of a bottleneck's convolutions is strided. */
extern const char *const vocab_layer_op_names[];
extern const char *const vocab_pool_names[];
extern const char *const vocab_stride_at_names[];
extern const char *const vocab_inception_names[];
extern const char *const vocab_topology_names[];
extern const char *const vocab_routing_names[];
extern const char *const vocab_cc_names[];
extern const char *const vocab_algorithm_names[];
extern const char *const vocab_protocol_model_names[];
extern const char *const vocab_attach_names[];
extern const char *const vocab_mem_kernel_names[];
extern const char *const vocab_recompute_names[];
extern const char *const vocab_cp_comm_names[];
extern const char *const vocab_schedule_names[];
extern const char *const vocab_framework_names[];
extern const char *const vocab_moe_dispatcher_names[];
extern const char *const vocab_optimizer_state_names[];
extern const char *const vocab_attn_kernel_names[];
extern const char *const vocab_objective_names[];
extern const char *const vocab_measure_kind_names[];
extern const char *const vocab_flops_convention_names[];

/* Index of name in a NULL-terminated table, or -1. */
int vocab_name_index(const char *const *names, const char *name);

/* An efficiency (of a link, a memory tier, the vector units) as used: 0
 * means "not given" and counts as 1, as every file format and preset has
 * it; any other value is used as given. */
static inline double vocab_efficiency(double given)
{
    return given > 0.0 ? given : 1.0;
}

#endif
