/* Writes the example Chakra trace examples/chakra/step.<rank>.et with
 * comet's own writer: on each of 8 ranks, 20 ms of compute, a dependent
 * 1 GiB all-reduce, and 12 ms of compute that does not wait for it, the
 * shape of a layer whose gradient reduction overlaps the next layer's
 * work. Usage: example_trace DIR (regenerate with `make example-trace`). */
#include <stdio.h>

#include "comet/chakra.h"
#include "comet/units.h"

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "examples/chakra";
    uint64_t first = 1;
    comet_et_node n[3] = {
        {.id = 1, .type = COMET_ET_COMPUTE, .name = "backward_layer2", .duration_micros = 20000},
        {.id = 2, .type = COMET_ET_COLLECTIVE, .name = "allreduce_grad_layer2",
         .comm_type = COMET_ET_ALL_REDUCE, .comm_size = COMET_GIB, .n_deps = 1, .deps = &first},
        {.id = 3, .type = COMET_ET_COMPUTE, .name = "backward_layer1", .duration_micros = 12000,
         .n_deps = 1, .deps = &first},
    };
    for (int r = 0; r < 8; r++) {
        char path[512];
        snprintf(path, sizeof path, "%s/step.%d.et", dir, r);
        comet_error err;
        comet_error_clear(&err);
        if (comet_et_write(path, "0.0.4", n, 3, &err)) {
            fprintf(stderr, "example_trace: %s: %s\n", path, err.message);
            return 1;
        }
    }
    return 0;
}
