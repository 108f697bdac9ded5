/* The core model stands on its own: this program is linked from the
 * objects of the core folders alone (CORE_DIRS in the Makefile: core,
 * vocab, parallel, workload, hardware, network, estimate, sim), without
 * config/, report/, explore/ or chakra/ and without libyaml or protobuf-c,
 * so a call from the core up into a reader or a renderer fails the link.
 * It builds a model, a system and a strategy in C (no files, no presets),
 * estimates a step, checks the closed form against numbers worked out by
 * hand (the toy of tests/toy.c, as tests/test_estimate.c does), and simulates the same step,
 * which must agree with the estimate within 0.1 %. `make check-layers` runs it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/estimate.h"
#include "comet/simulate.h"
#include "../toy.h"

static int failures;

static void expect(const char *what, double got, double want, double rel)
{
    double tol = rel * fabs(want);
    if (!(fabs(got - want) <= tol)) {
        fprintf(stderr, "check-layers: %s is %.17g, expected %.17g\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    comet_system sys;
    comet_model m;
    comet_strategy s;
    toy_system(&sys);
    toy_model(&m);
    toy_strategy(&s);

    comet_result r;
    comet_error err;
    if (comet_estimate(&m, &sys, &s, &r, &err) != COMET_OK) {
        fprintf(stderr, "check-layers: estimate failed: %s\n", err.message);
        return 1;
    }
    /* 4 microbatches, 4 layers (4e12 FLOP forward) per stage at 100 TFLOPS */
    expect("forward", r.forward, 4 * 0.04, 1e-12);
    expect("backward", r.backward, 4 * 0.08, 1e-12);
    expect("bubble", r.bubble, 0.12, 1e-12);
    /* two 1 MB sends per microbatch at 100 GB/s */
    expect("pipeline sends", r.pp_exposed, 4 * 2 * 1e6 / 100e9, 1e-12);
    /* ring all-reduce of 4e9 fp16 gradients over 2 NPUs: 2(n-1)S/(nB) */
    expect("DP all-reduce", r.dp_exposed, 2.0 * 8e9 / (2 * 100e9), 1e-12);
    /* Adam at 1 TB/s, 44 bytes per parameter */
    expect("optimizer", r.optimizer, 4e9 * 44.0 / 1e12, 1e-12);
    expect("step time", r.step_time, 0.16 + 0.32 + 0.12 + 8e-5 + 0.08 + 0.176, 1e-12);
    if (!r.feasible) {
        fprintf(stderr, "check-layers: the toy should fit in 80 GiB\n");
        failures++;
    }

    static comet_sim_step_result sim;
    if (comet_sim_step(&m, &sys, &s, NULL, &sim, &err) != COMET_OK) {
        fprintf(stderr, "check-layers: simulation failed: %s\n", err.message);
        return 1;
    }
    /* the task graph and the closed form agree (tests/test_simulate.c asks
     * 1 % of the presets; on this toy they are 0.005 % apart) */
    expect("simulated step time", sim.step_time, r.step_time, 1e-3);

    if (failures)
        return 1;
    printf("check-layers: the core model links and runs alone (step %.6f s, simulated %.6f s)\n",
           r.step_time, sim.step_time);
    return 0;
}
