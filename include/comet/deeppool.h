/* DeepPool (Park et al., MLSys 2022, "Efficient Strong Scaling Through
 * Burst Parallel Training"): for a fixed global batch on a cluster, give
 * each run of consecutive layers its own number of GPUs (burst
 * parallelism), chosen by dynamic programming to minimize the iteration
 * time with the activations and their gradients redistributed between
 * runs of different widths and each run's gradients all-reduced; then pack
 * background training jobs into the GPU time the plan leaves idle (GPU
 * multiplexing). Against plain data parallelism at the full width, over
 * the same pricing (docs/deeppool.md). */
#ifndef COMET_DEEPPOOL_H
#define COMET_DEEPPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "comet/config.h"
#include "comet/error.h"
#include "comet/model.h"
#include "comet/system.h"

#define COMET_DP_MAX_LAYERS 1024      /* planner layers: entries times their counts */
#define COMET_DP_MAX_WIDTHS 24        /* candidate GPU counts per layer */
#define COMET_DP_MAX_BACKGROUND 8
#define COMET_DP_MAX_SCALING 24       /* cluster sizes of the strong-scaling curve */
#define COMET_DP_MAX_GPUS 65536

/* A background job: a model trained on single GPUs at `batch` samples per
 * GPU, placed on the GPUs the foreground leaves most idle, jobs of higher
 * priority first; gpus: at most this many GPUs (0: every one left). */
typedef struct comet_dp_background {
    comet_model model;
    int64_t batch;
    double priority;
    int64_t gpus;
} comet_dp_background;

typedef struct comet_deeppool_problem {
    char name[COMET_NAME_LEN];
    comet_model model;
    comet_system system;
    int64_t global_batch;      /* samples per iteration, fixed (strong scaling) */
    int64_t gpus;              /* cluster size */
    int n_scaling;             /* the strong-scaling curve's cluster sizes (0: none) */
    int64_t scaling[COMET_DP_MAX_SCALING];
    /* The foreground's slowdown while background jobs share its GPUs: its
     * iteration takes (1 + interference) times as long (>= 0). */
    double interference;
    /* DeepPool's amplification limit: a layer may run on w GPUs only when
     * its GPU-time there, w x its compute, is at most this many times its
     * least GPU-time over the candidates (>= 1; 0: no limit, the fastest
     * plan). It trades the foreground's speed for GPU time left to the
     * background jobs. */
    double amplification;
    int n_background;
    comet_dp_background background[COMET_DP_MAX_BACKGROUND];
    comet_srcmap srcmap;
} comet_deeppool_problem;

/* One planner layer: a layer-list entry's repeat, or a Transformer's
 * embedding, block or head. */
typedef struct comet_dp_layer {
    char name[COMET_NAME_LEN];
    double params;             /* parameters (elements) */
    double out_bytes;          /* output per sample, bytes (what moves to a layer of
                                  another width, and its gradient back) */
} comet_dp_layer;

/* A run of consecutive layers [first, last] on the first `width` GPUs. */
typedef struct comet_dp_group {
    int first, last;
    int64_t width;
    int64_t per_gpu_batch;     /* ceil(global_batch / width) */
    double compute;            /* forward and backward of its layers at that batch, seconds */
    double allreduce;          /* its gradients all-reduced over the width */
    double optimizer;          /* the optimizer step over its parameters */
    double transfer_in;        /* activations in and their gradients back, from the
                                  run before (0 at the first run or the same width) */
} comet_dp_group;

typedef struct comet_dp_plan {
    int n_groups;
    comet_dp_group groups[COMET_DP_MAX_LAYERS];
    double iteration;          /* seconds */
    double throughput;         /* samples per second */
    double compute, allreduce, optimizer, transfer;   /* the iteration's parts */
    double busy;               /* GPU-seconds busy per iteration, all GPUs */
    double idle_share;         /* of the cluster's GPU time, the share left idle */
} comet_dp_plan;

typedef struct comet_dp_bg_result {
    int64_t gpus;              /* GPUs it got */
    double alone;              /* samples/s of one GPU running it alone */
    double gpu_share;          /* GPU time it got, in whole GPUs */
    double throughput;         /* samples/s over its GPUs */
} comet_dp_bg_result;

typedef struct comet_dp_mux {
    double foreground_alone;   /* the burst plan's samples/s with no background */
    double foreground;         /* ... slowed by the interference (when any job runs) */
    double background;         /* every job's samples/s */
    double total;              /* foreground + background */
    double dp_alone;           /* plain data parallelism's samples/s */
    double gain;               /* total / dp_alone */
    /* Whether jobs share GPUs the foreground also uses: the packer does so
     * only where that gives more in total than leaving those GPUs to the
     * foreground (below the break-even); else jobs take wholly idle GPUs
     * alone */
    bool shared;
    /* The interference at which total falls to foreground_alone:
     * background / (foreground_alone - background); INFINITY when the
     * background alone does as much as the foreground. The interference
     * applies only where a job shares a GPU the foreground also uses. */
    double break_even;
    comet_dp_bg_result jobs[COMET_DP_MAX_BACKGROUND];
} comet_dp_mux;

typedef struct comet_dp_scaling_point {
    int64_t gpus;
    double burst, dp;          /* samples/s */
    double total;              /* burst with the background jobs multiplexed */
} comet_dp_scaling_point;

typedef struct comet_deeppool_result {
    int n_layers;
    comet_dp_layer layers[COMET_DP_MAX_LAYERS];
    int64_t width[COMET_DP_MAX_LAYERS];       /* the burst plan's GPUs per layer */
    int n_widths;
    int64_t widths[COMET_DP_MAX_WIDTHS];      /* the candidates it chose from */
    comet_dp_plan burst, dp;
    double speedup;                           /* burst over data parallelism */
    comet_dp_mux mux;
    int n_scaling;
    comet_dp_scaling_point scaling[COMET_DP_MAX_SCALING];
} comet_deeppool_result;

/* Plan the problem's model on its cluster (and each size of the scaling
 * curve), and multiplex its background jobs. Bad problems (a global
 * batch below the GPU count, a cluster that does not fill the system's
 * dimensions) are COMET_EINPUT with a key under "deeppool". out is large:
 * allocate it. */
comet_status comet_deeppool(const comet_deeppool_problem *p, comet_deeppool_result *out,
                            comet_error *err);

/* One plan alone: the burst plan of model m for global_batch samples on
 * gpus GPUs of sys under an amplification limit (0: none), or with
 * data_parallel every layer at the full width. */
comet_status comet_deeppool_plan(const comet_model *m, const comet_system *sys,
                                 int64_t global_batch, int64_t gpus, bool data_parallel,
                                 double amplification, comet_dp_plan *plan, comet_error *err);

/* Read a document with one `deeppool:` section (docs/deeppool.md); every
 * check is made before any work: errors name file:line:column and key. */
comet_status comet_deeppool_read_file(const char *path, comet_deeppool_problem *p,
                                      comet_error *err);
comet_status comet_deeppool_read_text(const char *text, size_t len, const char *filename,
                                      comet_deeppool_problem *p, comet_error *err);

#endif
