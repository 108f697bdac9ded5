/* Chakra execution traces (MLCommons): one file per rank, PREFIX.<rank>.et,
 * holding a varint-length-prefixed GlobalMetadata then Nodes, plain or
 * gzip-compressed. comet reads them into its own node structs (decoupled
 * from the protobuf types), writes them, and simulates them on a network
 * described by ASTRA-sim's input files. */
#ifndef COMET_CHAKRA_H
#define COMET_CHAKRA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/error.h"
#include "comet/simulate.h"
#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

typedef enum comet_et_type {
    COMET_ET_INVALID = 0,
    COMET_ET_METADATA = 1,
    COMET_ET_MEM_LOAD = 2,
    COMET_ET_MEM_STORE = 3,
    COMET_ET_COMPUTE = 4,
    COMET_ET_SEND = 5,
    COMET_ET_RECV = 6,
    COMET_ET_COLLECTIVE = 7
} comet_et_type;

/* Chakra's CollectiveCommType values. */
typedef enum comet_et_coll {
    COMET_ET_ALL_REDUCE = 0,
    COMET_ET_REDUCE = 1,
    COMET_ET_ALL_GATHER = 2,
    COMET_ET_GATHER = 3,
    COMET_ET_SCATTER = 4,
    COMET_ET_BROADCAST = 5,
    COMET_ET_ALL_TO_ALL = 6,
    COMET_ET_REDUCE_SCATTER = 7,
    COMET_ET_REDUCE_SCATTER_BLOCK = 8,
    COMET_ET_BARRIER = 9
} comet_et_coll;

/* One node, kept small (104 bytes on LP64) because a trace may hold tens
 * of millions: the strings are pointers, not arrays. The reader points
 * them into its rank's string pool and never leaves them NULL ("" when
 * absent); a caller building nodes for comet_et_write may leave them NULL. */
typedef struct comet_et_node {
    uint64_t id;
    uint64_t duration_micros;
    double num_ops;
    double tensor_size;
    double comm_size;              /* bytes */
    int64_t comm_tag;
    const char *name;              /* the reader keeps its first 63 bytes */
    const char *pg_name;           /* process group (comm-group JSON); "" or NULL = by involved_dim */
    uint64_t *deps;                /* data and control dependencies together */
    uint32_t n_deps;
    int32_t comm_src, comm_dst;    /* ranks; -1 = not given */
    int32_t comm_priority;
    comet_et_type type;
    uint8_t comm_type;             /* comet_et_coll */
    bool is_cpu_op;
    uint8_t n_involved;            /* 0 = all dimensions */
    bool involved_dim[COMET_MAX_DIMS];
} comet_et_node;

/* Names and group names of a rank's nodes, in blocks that never move. */
typedef struct comet_et_strings comet_et_strings;

typedef struct comet_et_rank {
    char version[32];
    size_t n;
    comet_et_node *nodes;
    uint64_t *dep_pool;            /* all nodes' deps point into this */
    size_t n_dep_pool;
    comet_et_strings *strings;     /* all nodes' names point into this */
} comet_et_rank;

typedef struct comet_et_trace {
    char prefix[4000];             /* files are prefix.<rank>.et (errors name them) */
    int ranks;
    comet_et_rank *rank;
    uint64_t nodes;                /* over all ranks */
    uint64_t bytes;                /* read from the files, after decompression */
    uint64_t deps;                 /* dependencies over all ranks */
    uint64_t memory;               /* held by nodes, dependencies and names */
    uint64_t peak_memory;          /* the most counted against max_memory at one time */
} comet_et_trace;

/* What reading a trace may take, so that a small hostile file (a gzip
 * bomb, a length prefix claiming gigabytes, a node with millions of
 * dependencies) cannot exhaust the machine: nodes and dependencies over
 * all ranks, bytes after decompression over all files, and the reader's
 * memory at any time: its node and dependency arrays as allocated, names,
 * the message buffer and, while a message of n bytes is decoded, 56n more
 * (protobuf-c's worst case for this schema: an 8-byte number per byte of
 * a packed list, 104 bytes per 2-byte empty attribute). The simulator then adds memory per node and per dependency
 * (docs/chakra.md), so max_nodes and max_deps bound it too.
 * 0 = no limit. */
typedef struct comet_et_limits {
    uint64_t max_nodes;
    uint64_t max_bytes;
    uint64_t max_memory;
    uint64_t max_deps;
} comet_et_limits;

/* The defaults fit a laptop: 10 M nodes, 50 M dependencies, 2 GiB read,
 * 2 GiB of reader memory (see docs/chakra.md for the arithmetic and the
 * measured worst case). */
#define COMET_ET_DEFAULT_MAX_NODES 10000000u
#define COMET_ET_DEFAULT_MAX_DEPS 50000000u
#define COMET_ET_DEFAULT_MAX_BYTES (2ull << 30)
#define COMET_ET_DEFAULT_MAX_MEMORY (2ull << 30)
void comet_et_limits_default(comet_et_limits *limits);

/* Read PREFIX.0.et, PREFIX.1.et, ... (ranks files; 0 = as many as exist)
 * within limits (NULL = the defaults). Every error names the file and,
 * where there is one, the node id and attribute. A limit exceeded is an
 * error whose key is the field of comet_et_limits ("max_nodes", ...). */
comet_status comet_et_read(const char *prefix, int ranks, const comet_et_limits *limits,
                           comet_et_trace *out, comet_error *err);
void comet_et_free(comet_et_trace *t);

/* Write one rank's file: a GlobalMetadata with `version`, then the nodes. */
comet_status comet_et_write(const char *path, const char *version, const comet_et_node *nodes,
                            size_t n, comet_error *err);

/* ASTRA-sim's communicator groups: group name -> member ranks. */
typedef struct comet_comm_group {
    char name[32];
    int n;
    int *ranks;
} comet_comm_group;

/* ASTRA-sim's inputs as comet knobs. */
typedef struct comet_astra_inputs {
    comet_system system;           /* network dimensions from the network YAML */
    comet_sim_options options;     /* splits, active chunks, endpoint delay, local memory */
    bool roofline;                 /* compute time from num_ops at peak_perf / local memory */
    double peak_perf;              /* FLOP/s */
    double mem_latency;            /* remote memory: seconds per access */
    double mem_bandwidth;          /* bytes/s; 0 = no memory expansion */
    int n_groups;                  /* communicator groups (comm-group JSON), malloc'd */
    comet_comm_group *groups;
    char network_file[512];        /* the files read, for errors ("" = none) */
    char groups_file[512];
    /* Each collective as flows on the fabric of `system` instead of
     * comet_sim_collective, started when its group reaches it, sharing the
     * fabric's links with every collective in flight (a group the fabric
     * cannot run as one: priced alone, every group of its span at once;
     * docs/chakra.md); options then unused but for splits. max_flows:
     * refuse to start more flows (0: the fabric's default, 250 million). */
    bool flows;
    int64_t max_flows;
} comet_astra_inputs;

/* Network YAML (topology, npus_count, bandwidth in GB = 2^30 B per s,
 * latency in ns), system JSON and, optionally, remote-memory JSON. */
comet_status comet_astra_read(const char *network, const char *system, const char *memory,
                              comet_astra_inputs *out, comet_error *err);

/* The plainest experiment, without files: one ring of `npus` NPUs at this
 * bandwidth (bytes/s) and latency (s), a collective in one chunk, no
 * endpoint or memory costs. For quick runs of a trace, tests and tools. */
void comet_astra_ring(comet_astra_inputs *out, int64_t npus, double bandwidth, double latency);

/* ASTRA-sim's comm-group JSON ({"name": [rank, ...], ...}; the path
 * "empty" means none), read into in->groups. Collective nodes name their
 * group with the pg_name attribute. */
comet_status comet_astra_read_groups(const char *path, comet_astra_inputs *in, comet_error *err);
void comet_astra_free(comet_astra_inputs *in);

typedef struct comet_et_result {
    double finish;                 /* seconds until the last rank finishes */
    /* With in->flows: the collectives run on the fabric; of them, those run
     * as flows sharing its links (the rest, on groups the fabric cannot run
     * as one, priced alone); the distinct ones priced alone (each simulated
     * once, every group of its span at once); the flows of both. */
    int fabric_collectives;
    int fabric_shared;
    int fabric_alone_distinct;
    uint64_t fabric_flows;
    int ranks;
    double *rank_finish;           /* per rank (malloc'd; comet_et_result_free) */
    double *rank_compute;          /* compute busy per rank */
    double *rank_exposed_comm;     /* finish - compute: communication not hidden */
    double *rank_comm;             /* seconds of collectives and sends (may overlap compute) */
    double *rank_memory;           /* seconds of memory loads and stores */
    size_t nodes;                  /* nodes across all ranks */
    uint64_t events;
} comet_et_result;

/* Simulate the trace: one compute, one communication and one CPU stream
 * per rank (as ASTRA-sim: compute and communication overlap; two compute
 * nodes do not); collectives run when all ranks of their group reach
 * them, timed by comet_sim_collective on the network; sends pair with
 * receives by (source, destination, tag). */
comet_status comet_et_simulate(const comet_et_trace *t, const comet_astra_inputs *in,
                               comet_et_result *out, comet_error *err);
void comet_et_result_free(comet_et_result *r);

/* Write the training step of a model, system and strategy (the graph comet
 * simulate builds, one task per collective) as Chakra traces
 * PREFIX.<rank>.et, one per NPU, plus PREFIX.network.yml,
 * PREFIX.system.json, PREFIX.memory.json and PREFIX.groups.json (the
 * comm groups) for the same run in ASTRA-sim or comet simulate --chakra.
 * The files are written as one set (comet/files.h): on failure none is
 * left behind and an earlier export under the prefix stays as it was. On
 * success, PREFIX.N.et from the new rank count on (regular files left by
 * an earlier export with more ranks, as many consecutive ones as there
 * are) are removed in the same commit. */
typedef struct comet_export_info {
    int ranks;
    size_t nodes;                  /* over all ranks */
    uint64_t deps;                 /* dependencies over all ranks */
    uint64_t bytes;                /* the rank files' sizes, added up */
} comet_export_info;

/* How a caller stops an export mid-way (a CLI on SIGINT/SIGTERM): the
 * export asks cancelled(context) before each rank file and before the
 * commit; when it answers true, every temporary made so far is removed, the
 * prefix is left as it was, and the export returns COMET_ECANCELED. */
typedef struct comet_export_options {
    bool (*cancelled)(void *context);
    void *context;
} comet_export_options;

/* options may be NULL (never cancelled). */
comet_status comet_export_chakra(const comet_model *m, const comet_system *sys,
                                 const comet_strategy *strategy, const char *prefix,
                                 const comet_export_options *options, comet_export_info *info,
                                 comet_error *err);

/* The flags comet simulate --chakra needs to read an export that passes
 * the reader's default limits (COMET_ET_DEFAULT_MAX_NODES, _DEPS, _BYTES):
 * " --max-trace-nodes N", " --max-trace-deps N", " --max-trace-bytes N"
 * into flags, and which limits it passes ("12492864 nodes (default limit
 * 10000000)", comma-separated) into why; both "" and 0 returned when it
 * fits the defaults. Returns how many limits it passes. (The reader's
 * memory limit is not predicted.) */
int comet_export_reader_flags(const comet_export_info *info, char *flags, size_t flags_cap,
                              char *why, size_t why_cap);

/* Whether an export of `ranks` ranks can put its files under `prefix`: a
 * directory where a side file or PREFIX.N.et (N < ranks) goes is
 * COMET_EINPUT naming it. Cheap (one pass over the directory); export runs
 * it itself before the work, and a front end may run it earlier. */
comet_status comet_export_chakra_check(const char *prefix, int64_t ranks, comet_error *err);

#endif
