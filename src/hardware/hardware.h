/* Internal: accelerator and memory-tier timing used by the estimator. */
#ifndef COMET_HARDWARE_H
#define COMET_HARDWARE_H

#include <stdbool.h>

#include "comet/system.h"

/* Effective rates for one datatype, efficiencies applied (except the
 * size-dependent GEMM efficiency, applied per operation). */
typedef struct hw_rates {
    const comet_compute *compute;
    double log_flops[COMET_MAX_EFF_POINTS];  /* log of each GEMM efficiency point's size */
    double matrix;   /* peak matrix FLOP/s */
    double matrix_fp8; /* peak fp8 matrix FLOP/s, for GEMMs in fp8 (0: none) */
    double vector;   /* achievable vector FLOP/s */
    double hbm;      /* achievable HBM bytes/s */
} hw_rates;

void hw_rates_init(hw_rates *r, const comet_system *sys, comet_dtype dt);
/* A GEMM at the dtype's matrix peak, or (fp8) at the fp8 peak, through
 * the same size-dependent efficiency curve. */
double hw_gemm_time(const hw_rates *r, double flops, double bytes, bool fp8);
double hw_vector_time(const hw_rates *r, double flops, double bytes);

/* Achievable expansion-tier bandwidth seen by one NPU when `active` NPUs
 * use the tier at once (per_node devices are shared by shared_by NPUs,
 * a pool by every NPU of the job). 0 when there is no tier. */
double hw_expansion_bandwidth(const comet_system *sys, int64_t npus);

/* Expansion-tier capacity available to one NPU. */
double hw_expansion_capacity(const comet_system *sys, int64_t npus);

#endif
