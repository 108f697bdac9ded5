/* A study: the COMET cluster-design sweep. One or more models, a base
 * system, axes of resources to vary (compute, HBM, expansion memory,
 * network bandwidth and shape, NPU count) and constraints (a fixed NPU
 * count or a budget). Every point of the product of the axes is a cluster
 * design; the sweep finds the best strategy for each. */
#ifndef COMET_STUDY_H
#define COMET_STUDY_H

#include <stdbool.h>
#include <stdint.h>
#include "comet/config.h"
#include "comet/error.h"
#include "comet/model.h"
#include "comet/search.h"
#include "comet/strategy.h"
#include "comet/system.h"

#define COMET_STUDY_MAX_MODELS 8
#define COMET_STUDY_MAX_AXES 16
#define COMET_STUDY_MAX_VALUES 64
#define COMET_STUDY_MAX_SYSTEMS 8   /* whole systems on a `system` axis */

typedef enum comet_axis_kind {
    COMET_AXIS_NPUS = 0,
    COMET_AXIS_PEAK_COMPUTE,        /* matrix peak for the model's datatype (others scale along) */
    COMET_AXIS_HBM_CAPACITY,
    COMET_AXIS_HBM_BANDWIDTH,
    COMET_AXIS_EXPANSION_CAPACITY,  /* 0 = no expansion tier */
    COMET_AXIS_EXPANSION_BANDWIDTH,
    COMET_AXIS_DIM_BANDWIDTH,       /* of network dimension `dim` */
    COMET_AXIS_DIM_SIZE,
    COMET_AXIS_DIM_LATENCY,
    COMET_AXIS_DIM_TOPOLOGY,        /* values are comet_topology numbers */
    COMET_AXIS_DIM_OVERSUBSCRIPTION, /* a Clos's leaf down:up ratio (shape.oversubscription[0]) */
    COMET_AXIS_DIM_RADIX,           /* a Clos's ports per switch (shape.radix) */
    COMET_AXIS_DIM_TIERS,           /* a Clos's switch tiers, 2 or 3 (shape.tiers) */
    COMET_AXIS_DIM_SHAPE,           /* a torus's or mesh's axes (shape.axes), values
                                       comet_axis_shape_value codes */
    COMET_AXIS_DIM_ROUTING,         /* a Clos's routing, values comet_routing numbers */
    COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION, /* a 3-tier Clos's aggregation switches'
                                                    down:up ratio (shape.oversubscription[1]) */
    COMET_AXIS_SYSTEM               /* whole systems: value i is the study's systems[i] */
} comet_axis_kind;

typedef struct comet_axis {
    comet_axis_kind kind;
    int dim;                        /* network dimension for the DIM_* kinds */
    char name[64];                  /* "hbm_capacity", "network.nvlink.bandwidth", ... */
    int n;
    double values[COMET_STUDY_MAX_VALUES];   /* SI units; NPU counts, sizes, ratios, radixes
                                                and tiers as numbers; names (topology,
                                                routing) as their enum's numbers; shapes as
                                                comet_axis_shape_value codes; systems as
                                                their index */
    char labels[COMET_STUDY_MAX_SYSTEMS][COMET_NAME_LEN]; /* a system axis: its systems' names */
} comet_axis;

typedef struct comet_study {
    char name[COMET_NAME_LEN];
    int n_models;
    comet_model models[COMET_STUDY_MAX_MODELS];
    comet_system system;            /* the base system (with a system axis, its first) */
    int n_systems;                  /* a system axis's systems: each point of it starts */
    comet_system systems[COMET_STUDY_MAX_SYSTEMS]; /* from systems[value], not the base */
    comet_strategy base;            /* fixed knobs for every search (e.g. grad_fp32) */
    int64_t npus;                   /* fixed count (when there is no npus axis) */
    int64_t global_batch;           /* per step, or ... */
    int64_t max_global_batch;       /* > 0: searched up to this */
    double budget;                  /* > 0: designs costing more are skipped */
    comet_objective objective;
    int64_t max_microbatch;
    bool vary_flash;
    bool vary_offload;
    int n_axes;
    comet_axis axes[COMET_STUDY_MAX_AXES];
    comet_srcmap srcmap;
} comet_study;

/* Read a study file (a document with one `study:` section). Everything is
 * checked before any work starts: empty axes, unknown resources or network
 * dimensions, contradictory constraints, NPU counts the network cannot
 * hold; errors name file:line:column and the key. */
comet_status comet_study_read_file(const char *path, comet_study *study, comet_error *err);
comet_status comet_study_read_text(const char *text, size_t len, const char *filename,
                                   comet_study *study, comet_error *err);

/* An axis value for people: "80 GiB", "300 GB/s", "none", "256". */
const char *comet_axis_format(const comet_axis *axis, double value, char *out, size_t cap);
/* A torus's or mesh's shape as one axis value: axes a0 + a1 B + a2 B^2
 * with B = COMET_AXIS_SHAPE_BASE (0 past the last axis), exact in a double;
 * each axis 2..COMET_AXIS_SHAPE_BASE - 1. comet_axis_shape_of decodes one
 * into n_axes and axes[] (returns n_axes; 0 for a value that is no code). */
#define COMET_AXIS_SHAPE_BASE 131072
double comet_axis_shape_value(int n_axes, const int64_t axes[]);
int comet_axis_shape_of(double v, int64_t axes[COMET_MAX_AXES]);

/* An axis value as results.csv and results.jsonl hold it: a shape as
 * "4x4", anything else a number ("%.10g"); comet_axis_value_parse reads it
 * back (false when the text is no value of that kind). */
const char *comet_axis_value_text(const comet_axis *axis, double value, char *out, size_t cap);
bool comet_axis_value_parse(comet_axis_kind kind, const char *text, double *value);

/* What an axis varies, in a word or two: "HBM", "compute", "nvlink size". */
const char *comet_axis_short_name(const comet_axis *axis, char *out, size_t cap);

/* The kind of an axis from its name as results files write it
 * ("hbm_capacity", "network.nvlink.bandwidth"); false when unknown. */
bool comet_axis_kind_from_name(const char *name, comet_axis_kind *kind);

/* An axis's column in results.csv: its name and the unit of its values
 * ("hbm_capacity_bytes", "network.nvlink.bandwidth_bytes_per_s",
 * "peak_compute_flop_per_s", "network.ib.latency_s"); a count, a ratio
 * or a code (npus, size, topology, ...) is the name alone. The suffix is
 * "" for those. */
const char *comet_axis_unit_suffix(comet_axis_kind kind);
void comet_axis_column(const comet_axis *axis, char *out, size_t cap);
/* The axis a results.csv column names, today's (with its unit) or an
 * older comet's (the name alone): its name into out and its kind; false
 * when the name is no axis comet knows (out holds the column then). */
bool comet_axis_from_column(const char *column, char *out, size_t cap, comet_axis_kind *kind);

/* Set the resource an axis names to v in sys (or *npus), as a design point
 * does; peak_compute sets the matrix peak of dtype and scales the others.
 * A system axis sets nothing here: comet_study_point starts the point
 * from the study's system of that index. */
void comet_axis_apply(const comet_axis *axis, double v, comet_dtype dtype, comet_system *sys,
                      int64_t *npus);

/* Points: models x the product of the axes' values, counted without
 * enumerating them; UINT64_MAX when the product does not fit. */
uint64_t comet_study_points(const comet_study *study);

/* The design of point `index`: which model, the system with the axis
 * values applied, the NPU count, and the axis values (in axis order). */
void comet_study_point(const comet_study *study, uint64_t index, int *model,
                       comet_system *system, int64_t *npus, double values[COMET_STUDY_MAX_AXES]);
/* ... its system alone. */
void comet_study_point_system(const comet_study *study, uint64_t index, comet_system *system);

#endif
