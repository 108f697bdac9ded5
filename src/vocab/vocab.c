/* The domain's vocabulary: names of the enumerations users write in config
 * files and on the command line (datatypes, model kinds, collectives,
 * groups, layer-list ops, topologies, algorithms, attach kinds, recompute modes, context-
 * parallel exchanges, frameworks,
 * objectives, how a validation row's measurement is stated and under
 * which FLOP-counting convention), the names reports give memory kinds and tiers, and the size
 * of each datatype. One table per enum, indexed by value, so that name and
 * parse can never disagree and error messages can list what is accepted.
 * It lives below every layer that speaks these words (workload, parallel,
 * estimate, sim, the readers and the reports), so none of them depends on
 * the config reader for a name. */
#include "vocab.h"

#include <string.h>

#include "comet/estimate.h"
#include "comet/network.h"
#include "comet/search.h"
#include "comet/validate.h"

const char *const vocab_dtype_names[] = {"fp32", "tf32", "fp16", "bf16", "fp8", NULL};
const char *const vocab_model_kind_names[] = {"transformer", "layers", NULL};
const char *const vocab_collective_names[] = {"none", "all_reduce", "reduce_scatter",
                                            "all_gather", "all_to_all", "broadcast", "reduce", "gather",
                                            "scatter", "barrier", NULL};
const char *const vocab_group_names[] = {"tp", "pp", "dp", "cp", "ep", NULL};
const char *const vocab_layer_group_names[] = {"tp", "pp", "dp", NULL};
const char *const vocab_layer_op_names[] = {"none", "conv", "pool", "batchnorm", "relu", "fc",
                                            "bottleneck", "dropout", "inception", NULL};
const char *const vocab_pool_names[] = {"max", "avg", NULL};
const char *const vocab_stride_at_names[] = {"1x1", "3x3", NULL};
const char *const vocab_inception_names[] = {"a", "b", "c", "d", "e", NULL};
const char *const vocab_topology_names[] = {"ring", "fully_connected", "switch", "torus",
                                            "mesh", "fat_tree", "rail", "fred", NULL};
const char *const vocab_routing_names[] = {"ecmp", "spray", NULL};
const char *const vocab_cc_names[] = {"none", "pfc", "dcqcn", "hpcc", NULL};
const char *const vocab_algorithm_names[] = {"ring", "direct", "halving_doubling",
                                           "double_binary_tree", NULL};
const char *const vocab_protocol_model_names[] = {"none", "nccl_nvlink", "nccl_pci", "nccl_net",
                                                NULL};
/* the protocol a collective call ran with (comet_protocol, network.h) */
static const char *const protocol_names[] = {"-", "LL", "LL128", "Simple", "measured", NULL};
const char *const vocab_attach_names[] = {"per_npu", "per_node", "pool", NULL};
const char *const vocab_objective_names[] = {"time", "throughput", "cost", NULL};
const char *const vocab_recompute_names[] = {"none", "selective", "full", NULL};
const char *const vocab_cp_comm_names[] = {"ring", "ulysses", NULL};
const char *const vocab_schedule_names[] = {"1f1b", "zb-h1", "dualpipe", NULL};
const char *const vocab_framework_names[] = {"auto", "megatron", "fsdp", "ideal", NULL};
const char *const vocab_moe_dispatcher_names[] = {"alltoall", "deepep", NULL};
const char *const vocab_optimizer_state_names[] = {"fp32", "remainders", "bf16-moments", "bf16",
                                                   NULL};
const char *const vocab_attn_kernel_names[] = {"auto", "cudnn", "flash2", "flash3", NULL};
/* the keys of a validation row's `measured:` section, one per way of stating it */
const char *const vocab_measure_kind_names[] = {"step_time", "tokens_per_s_per_gpu",
                                                "model_tflops_per_gpu", "mfu",
                                                "gpu_hours_per_trillion_tokens", NULL};
const char *const vocab_flops_convention_names[] = {"megatron", "megatron_causal", "6n", NULL};
static const char *const validation_status_names[] = {"ok", "no fit", "refused", NULL};
/* kinds of memory-bound kernel (comet_mem_kernel, system.h): the keys of
 * compute.memory_efficiency and the subkinds of comet calibrate's rows */
const char *const vocab_mem_kernel_names[] = {"elementwise", "norm",      "activation", "softmax",
                                              "rope",        "cast",      "optimizer",  "batchnorm",
                                              "pool",        NULL};
/* only named, never read: private to this file */
static const char *const mem_kind_names[] = {"weights", "gradients", "optimizer", "activations",
                                             NULL};
static const char *const tier_names[] = {"hbm", "expansion", NULL};

int vocab_name_index(const char *const *names, const char *name)
{
    for (int i = 0; name && names[i]; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* Name of value v in a table of n entries, "?" when out of range. */
static const char *name_of(const char *const *names, int n, int v)
{
    return v >= 0 && v < n ? names[v] : "?";
}

#define COUNT(table) ((int)(sizeof(table) / sizeof((table)[0])) - 1)

_Static_assert(COUNT(mem_kind_names) == COMET_MEM_KIND_COUNT, "a name per memory kind");
_Static_assert(COUNT(tier_names) == COMET_TIER_COUNT, "a name per memory tier");
_Static_assert(COUNT(vocab_routing_names) == COMET_ROUTE_COUNT, "routing names");
_Static_assert(COUNT(vocab_cc_names) == COMET_CC_COUNT, "a name per congestion control");
_Static_assert(COUNT(vocab_layer_op_names) == COMET_OP_COUNT, "a name per layer op");
_Static_assert(COUNT(vocab_pool_names) == COMET_POOL_COUNT, "a name per pool kind");
_Static_assert(COUNT(vocab_stride_at_names) == COMET_STRIDE_AT_COUNT, "a name per stride place");
_Static_assert(COUNT(vocab_inception_names) == COMET_INCEPTION_COUNT,
               "a name per inception variant");
_Static_assert(COUNT(vocab_protocol_model_names) == COMET_PROTOCOLS_COUNT,
               "a name per protocol model");
_Static_assert(COUNT(protocol_names) == COMET_PROTO_COUNT, "a name per protocol");
_Static_assert(COUNT(vocab_mem_kernel_names) == COMET_MEMK_COUNT, "a name per memory kernel");
_Static_assert(COUNT(vocab_objective_names) == COMET_OBJECTIVE_COST + 1, "a name per objective");
_Static_assert(COUNT(vocab_framework_names) == COMET_FRAMEWORK_IDEAL + 1, "a name per framework");
_Static_assert(COUNT(vocab_moe_dispatcher_names) == COMET_MOE_DEEPEP + 1,
               "a name per MoE dispatcher");
_Static_assert(COUNT(vocab_optimizer_state_names) == COMET_OPTIM_BF16 + 1,
               "a name per optimizer state");
_Static_assert(COUNT(vocab_attn_kernel_names) == COMET_ATTN_KERNEL_COUNT,
               "a name per attention kernel");
_Static_assert(COUNT(vocab_measure_kind_names) == COMET_MEASURE_KIND_COUNT,
               "a name per way of stating a measurement");
_Static_assert(COUNT(vocab_flops_convention_names) == COMET_FLOPS_CONVENTION_COUNT,
               "a name per FLOP convention");
_Static_assert(COUNT(validation_status_names) == COMET_VALIDATION_REFUSED + 1,
               "a name per validation status");

/* Parse into an enum through an int; -1 leaves *out untouched. */
#define PARSE_INTO(table, name, out, type)                                    \
    do {                                                                      \
        int i_ = vocab_name_index(table, name);                                 \
        if (i_ < 0)                                                           \
            return -1;                                                        \
        *(out) = (type)i_;                                                    \
        return 0;                                                             \
    } while (0)

double comet_dtype_bytes(comet_dtype dt)
{
    static const double bytes[COMET_DTYPE_COUNT] = {4, 4, 2, 2, 1};
    int i = (int)dt;
    return i >= 0 && i < COMET_DTYPE_COUNT ? bytes[i] : 0;
}

const char *comet_dtype_name(comet_dtype dt)
{
    return name_of(vocab_dtype_names, COUNT(vocab_dtype_names), (int)dt);
}

int comet_dtype_parse(const char *name, comet_dtype *out)
{
    PARSE_INTO(vocab_dtype_names, name, out, comet_dtype);
}

const char *comet_collective_name(comet_collective c)
{
    return name_of(vocab_collective_names, COUNT(vocab_collective_names), (int)c);
}

int comet_collective_parse(const char *name, comet_collective *out)
{
    PARSE_INTO(vocab_collective_names, name, out, comet_collective);
}

const char *comet_group_name(comet_group g)
{
    return name_of(vocab_group_names, COUNT(vocab_group_names), (int)g);
}

int comet_group_parse(const char *name, comet_group *out)
{
    PARSE_INTO(vocab_group_names, name, out, comet_group);
}

const char *comet_topology_name(comet_topology t)
{
    return name_of(vocab_topology_names, COUNT(vocab_topology_names), (int)t);
}

int comet_topology_parse(const char *name, comet_topology *out)
{
    PARSE_INTO(vocab_topology_names, name, out, comet_topology);
}

const char *comet_routing_name(comet_routing r)
{
    return name_of(vocab_routing_names, COUNT(vocab_routing_names), (int)r);
}

const char *comet_cc_scheme_name(comet_cc_scheme s)
{
    return name_of(vocab_cc_names, COUNT(vocab_cc_names), (int)s);
}

int comet_cc_scheme_parse(const char *name, comet_cc_scheme *out)
{
    PARSE_INTO(vocab_cc_names, name, out, comet_cc_scheme);
}

const char *comet_algorithm_name(comet_algorithm a)
{
    return name_of(vocab_algorithm_names, COUNT(vocab_algorithm_names), (int)a);
}

int comet_algorithm_parse(const char *name, comet_algorithm *out)
{
    PARSE_INTO(vocab_algorithm_names, name, out, comet_algorithm);
}

const char *comet_protocol_model_name(comet_protocol_model p)
{
    return name_of(vocab_protocol_model_names, COUNT(vocab_protocol_model_names), (int)p);
}

const char *comet_protocol_name(comet_protocol p)
{
    return name_of(protocol_names, COUNT(protocol_names), (int)p);
}

const char *comet_recompute_name(comet_recompute r)
{
    return name_of(vocab_recompute_names, COUNT(vocab_recompute_names), (int)r);
}

int comet_recompute_parse(const char *name, comet_recompute *out)
{
    PARSE_INTO(vocab_recompute_names, name, out, comet_recompute);
}

const char *comet_cp_comm_name(comet_cp_comm c)
{
    return name_of(vocab_cp_comm_names, COUNT(vocab_cp_comm_names), (int)c);
}

const char *comet_schedule_name(comet_schedule sc)
{
    return name_of(vocab_schedule_names, COUNT(vocab_schedule_names), (int)sc);
}

const char *comet_framework_name(comet_framework f)
{
    return name_of(vocab_framework_names, COUNT(vocab_framework_names), (int)f);
}

const char *comet_moe_dispatcher_name(comet_moe_dispatcher d)
{
    return name_of(vocab_moe_dispatcher_names, COUNT(vocab_moe_dispatcher_names), (int)d);
}

const char *comet_optimizer_state_name(comet_optimizer_state o)
{
    return name_of(vocab_optimizer_state_names, COUNT(vocab_optimizer_state_names), (int)o);
}

const char *comet_attn_kernel_name(comet_attn_kernel k)
{
    return name_of(vocab_attn_kernel_names, COUNT(vocab_attn_kernel_names), (int)k);
}

const char *comet_objective_name(comet_objective o)
{
    return name_of(vocab_objective_names, COUNT(vocab_objective_names), (int)o);
}

int comet_objective_parse(const char *name, comet_objective *out)
{
    PARSE_INTO(vocab_objective_names, name, out, comet_objective);
}

const char *comet_mem_kind_name(comet_mem_kind k)
{
    return name_of(mem_kind_names, COUNT(mem_kind_names), (int)k);
}

const char *comet_tier_name(comet_tier t)
{
    return name_of(tier_names, COUNT(tier_names), (int)t);
}

const char *comet_measure_kind_name(comet_measure_kind k)
{
    return name_of(vocab_measure_kind_names, COUNT(vocab_measure_kind_names), (int)k);
}

const char *comet_flops_convention_name(comet_flops_convention c)
{
    return name_of(vocab_flops_convention_names, COUNT(vocab_flops_convention_names), (int)c);
}

const char *comet_validation_status_name(comet_validation_status s)
{
    return name_of(validation_status_names, COUNT(validation_status_names), (int)s);
}

const char *comet_mem_kernel_name(comet_mem_kernel k)
{
    return name_of(vocab_mem_kernel_names, COUNT(vocab_mem_kernel_names), (int)k);
}

int comet_mem_kernel_parse(const char *name, comet_mem_kernel *out)
{
    PARSE_INTO(vocab_mem_kernel_names, name, out, comet_mem_kernel);
}
