/* Calibration: a system's efficiency curves fitted to measurements a user
 * brings. Kernel timings (a CSV of GEMMs, fused attention and memory-bound
 * kernels) fix the GEMM curve and its short-reduction term, the attention
 * curve by shape and each kind of memory-bound kernel's share of HBM
 * bandwidth; nccl-tests output fixes a network dimension's latency and
 * efficiency, or becomes its measured bus-bandwidth curve. Every fitted
 * value is checked by pricing the measurements with the fitted system
 * through the same functions an estimate uses. docs/calibrate.md has the
 * file formats, the fits and the command. */
#ifndef COMET_CALIBRATE_H
#define COMET_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/error.h"
#include "comet/model.h"
#include "comet/system.h"
#include "comet/validate.h"

/* ---- kernel measurements (a CSV file) ------------------------------------ */

typedef enum comet_kernel_kind {
    COMET_KERNEL_GEMM = 0,
    COMET_KERNEL_ATTENTION,
    COMET_KERNEL_MEMORY,
    COMET_KERNEL_KIND_COUNT
} comet_kernel_kind;

/* One measured kernel: its shape and either its time or its rate. */
typedef struct comet_kernel_row {
    comet_kernel_kind kind;
    int line;                 /* in its file, from 1 */
    comet_dtype dtype;        /* gemm, attention  [bf16] */
    double m, n, k;           /* gemm: (m x k) by (k x n), 2mnk FLOP, reducing over k */
    double batch, heads;      /* attention  [1 each] */
    double seq, head_dim;     /* attention */
    bool causal;              /* attention  [true] */
    bool fwd_bwd;             /* attention: forward and backward (pass fwd_bwd), else forward */
    comet_mem_kernel mem;     /* memory: the kind of kernel */
    double bytes;             /* memory: bytes read and written (0: not given) */
    double seconds;           /* the measured time, or 0 when a rate is given */
    /* the measured rate when no time is: FLOP/s (gemm: 2mnk per call;
     * attention: the non-causal 4*batch*heads*seq^2*head_dim per forward,
     * 3 times that for fwd_bwd, as comet counts) or bytes/s (memory) */
    double rate;
} comet_kernel_row;

typedef struct comet_kernel_rows {
    char file[256];
    size_t n, cap;
    comet_kernel_row *rows;
} comet_kernel_rows;

/* Read a kernel CSV (docs/calibrate.md): '#' comment lines, a header
 * naming the columns in any order, one kernel per row. Errors name the
 * file, line and column: `k.csv:4:7: column 'm': expected a positive
 * number, got "abc"`. `out` starts empty (zeroed) and is freed with
 * comet_kernel_rows_free, also after an error. */
comet_status comet_kernels_read_text(const char *text, size_t len, const char *filename,
                                     comet_kernel_rows *out, comet_error *err);
comet_status comet_kernels_read_file(const char *path, comet_kernel_rows *out, comet_error *err);
void comet_kernel_rows_free(comet_kernel_rows *rows);

/* ---- collective measurements (nccl-tests output) -------------------------- */

/* One result row of nccl-tests: its "size" (bytes per rank, as comet's
 * collectives count them) and its time, the mean of the out-of-place and
 * in-place columns (either alone when the other is not a number). */
typedef struct comet_nccl_row {
    int line;
    double bytes;
    double seconds;
} comet_nccl_row;

/* The rows of one test run (a file may hold several, one after each
 * "# Collective test starting:" line). */
typedef struct comet_nccl_series {
    char file[256];
    int line;                    /* where the run starts */
    comet_collective collective;
    int64_t ranks;               /* ranks its "#  Rank N ..." lines list (0: none listed) */
    size_t n, cap;
    comet_nccl_row *rows;        /* in file order, sizes of 0 left out */
} comet_nccl_series;

typedef struct comet_nccl_runs {
    size_t n, cap;
    comet_nccl_series *series;
} comet_nccl_runs;

/* Read what an nccl-tests binary printed (all_reduce_perf, all_gather_perf,
 * reduce_scatter_perf, alltoall_perf) and append its runs to out. The
 * collective comes from `# Collective test starting: NAME_perf` (or the
 * binary's name on another line), or is `collective` when that is not
 * COMET_COLL_NONE. Comment lines ('#') and other text (NCCL INFO lines)
 * are skipped; a row starts with its size. `out` starts zeroed and is
 * freed with comet_nccl_runs_free, also after an error. */
comet_status comet_nccl_read_text(const char *text, size_t len, const char *filename,
                                  comet_collective collective, comet_nccl_runs *out,
                                  comet_error *err);
comet_status comet_nccl_read_file(const char *path, comet_collective collective,
                                  comet_nccl_runs *out, comet_error *err);
void comet_nccl_runs_free(comet_nccl_runs *runs);

/* ---- the fit --------------------------------------------------------------- */

typedef enum comet_calib_net_mode {
    COMET_CALIB_NET_FIT = 0,  /* fit the dimension's latency and efficiency */
    COMET_CALIB_NET_CURVE     /* write the measured bus bandwidth as its curve */
} comet_calib_net_mode;

/* One nccl-tests run placed on a network dimension of the base system. */
typedef struct comet_calib_nccl {
    const comet_nccl_series *series;
    int dim;                  /* index into the base system's dimensions */
    int64_t npus;             /* the ranks it ran on, >= 2 */
} comet_calib_nccl;

#define COMET_CALIB_MAX_GEMM_POINTS COMET_MAX_EFF_POINTS

typedef struct comet_calib_request {
    const comet_system *base;           /* the system to start from */
    const comet_kernel_rows *kernels;   /* NULL: no kernel measurements */
    const comet_calib_nccl *nccl;
    size_t n_nccl;
    comet_calib_net_mode net_mode;
    /* points of the GEMM size curve: 1 a flat curve (e_max) with k0, the
     * closed form; 2..16 a curve in log(FLOP) with k0; 0: the fewest the
     * data call for (1 unless more lower the Bayesian information
     * criterion of the fit) */
    int gemm_points;
    const char *name;                   /* the new system's; NULL: BASE-calibrated */
    /* measured training steps (a validation table; each row's system is
     * replaced by the fitted one): fit compute.framework_efficiency to
     * them after the kernel and network fits; NULL: none */
    const comet_validation_table *steps;
    /* the attention rows' kernel: auto (or the one the base's own curve
     * measured) fits compute.attention_efficiency, another name that
     * kernel's curve under compute.attention_kernels */
    comet_attn_kernel attention_kernel;
} comet_calib_request;

typedef enum comet_calib_group {
    COMET_CALIB_GEMM = 0,
    COMET_CALIB_ATTENTION,
    COMET_CALIB_MEMORY,
    COMET_CALIB_NETWORK,
    COMET_CALIB_STEP,           /* a measured training step */
    COMET_CALIB_GROUP_COUNT
} comet_calib_group;

/* One measurement against the fitted system's price of it. */
typedef struct comet_calib_point {
    comet_calib_group group;
    const char *file;           /* the request's input it came from (borrowed) */
    int line;
    char what[96];              /* "gemm 8192x8192x8192 bf16", "all_reduce 1 MiB x8" */
    double measured_s;          /* 0 when the row gave a rate and no bytes */
    double fitted_s;
    /* FLOP/s (gemm, attention: comet's count of the work, causal halved),
     * bytes/s (memory), nccl-tests' bus bandwidth (network) or tokens/s
     * (a training step) */
    double measured_rate;
    double fitted_rate;
    double residual;            /* fitted time / measured time - 1 */
} comet_calib_point;

typedef enum comet_calib_unit {
    COMET_CALIB_FRACTION = 0,   /* an efficiency */
    COMET_CALIB_ELEMENTS,       /* gemm_k_overhead */
    COMET_CALIB_SECONDS,        /* a latency */
    COMET_CALIB_FLOP,           /* a GEMM curve point's size */
    COMET_CALIB_POINTS          /* a measured curve: its points */
} comet_calib_unit;

/* One fitted key of the new system against the base system's value. */
typedef struct comet_calib_param {
    comet_calib_group group;
    char key[96];               /* where it is in the system section: compute.gemm_k_overhead */
    char label[64];             /* what it is: "k0", "forward at seq 2048, head_dim 64" */
    comet_calib_unit unit;
    double base;                /* NAN when the base system has no such value */
    double fitted;
    int points;                 /* measurements it was fitted from */
    char note[160];             /* how, when it is not the plain fit (clamped, kept, ...) */
} comet_calib_param;

typedef struct comet_calib_result {
    comet_system system;        /* the base with the fitted keys replaced */
    const comet_system *base;
    int gemm_points;            /* points of the fitted GEMM curve (0: no GEMM rows) */
    size_t n_points, cap_points;
    comet_calib_point *points;
    size_t n_params, cap_params;
    comet_calib_param *params;
    /* after an error about a training step: its row in req->steps, whose
     * key comet_validation_locate points at the row in the file; else -1 */
    int step_row;
} comet_calib_result;

/* Fit what the measurements cover; every other key stays the base's.
 * Bad measurements (a dtype without a matrix peak, a time below the
 * kernel launch, a dimension the base does not have) are COMET_EINPUT
 * errors naming the row. `out` starts zeroed and is freed with
 * comet_calib_result_free, also after an error. */
comet_status comet_calibrate(const comet_calib_request *req, comet_calib_result *out,
                             comet_error *err);
void comet_calib_result_free(comet_calib_result *r);

#endif
