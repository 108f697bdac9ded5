/* The toy system and model whose step is worked out by hand (tests/toy.c). */
#ifndef COMET_TESTS_TOY_H
#define COMET_TESTS_TOY_H

#include "comet/model.h"
#include "comet/strategy.h"
#include "comet/system.h"

/* 100 TFLOPS, 1 TB/s HBM of 80 GiB, one auto-sized switch dimension of
 * 100 GB/s per NPU with ring collectives and no latency. */
void toy_system(comet_system *sys);
/* Eight identical layers of 1 TFLOP per sample, no memory traffic, 1e9
 * parameters, 1 MB activations and outputs each. */
void toy_model(comet_model *m);
/* Two pipeline stages, two replicas, 8 samples in microbatches of 1, DP
 * not overlapped: 4 microbatches per pipeline. */
void toy_strategy(comet_strategy *s);

/* The fabric tests' systems (test_fabric.c, test_roce.c): named, 100
 * TFLOPS bf16, 80 GiB of 2 TB/s HBM, one collective chunk, no network
 * until toy_add_dim appends its dimensions: name, NPUs, topology,
 * algorithm, bandwidth (bytes/s), latency (s), efficiency 1, no
 * congestion control (the dimension comes back for more settings). */
void toy_bare_system(comet_system *s, const char *name);
comet_net_dim *toy_add_dim(comet_system *s, const char *name, int64_t size, comet_topology t,
                           comet_algorithm a, double bw, double lat);

#endif
