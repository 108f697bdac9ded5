/* libFuzzer target for comet partition's tensor files: any bytes, read as
 * .npy, .npz (stored or deflated) or safetensors, must give tensors or one
 * error with a one-line message, never a crash, a leak, undefined
 * behaviour or a huge allocation; what reads is turned into a network and,
 * when it is one, partitioned over two workers. Built by `make fuzz`. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comet/partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    comet_tensor_set s;
    comet_error err;
    comet_error_clear(&err);
    if (comet_tensors_parse(data, size, "fuzz.npz", &s, &err) != COMET_OK) {
        if (!err.message[0] || strchr(err.message, '\n'))
            abort(); /* a failure says why, on one line */
        return 0;
    }
    if (s.n < 1)
        abort();
    comet_mlp m;
    int64_t weights = 0;
    for (int i = 0; i < s.n; i++)
        weights += s.tensors[i].count;
    /* keep each input quick: partition only small networks */
    if (weights <= 1 << 16 &&
        comet_mlp_from_tensors(&s, COMET_LAYOUT_OUT_IN, "fuzz.npz", &m, &err) == COMET_OK) {
        comet_partition p;
        comet_partition_request req = {.workers = 2, .prune = COMET_PRUNE_MASS, .budget = 0.5};
        if (comet_partition_run(&m, &req, &p, &err) == COMET_OK) {
            for (int l = 0; l < p.n_layers; l++)
                if (p.layers[l].cross_after > p.layers[l].cross_before)
                    abort(); /* pruning never adds */
            comet_partition_free(&p);
        }
        comet_mlp_free(&m);
    }
    comet_tensors_free(&s);
    return 0;
}
