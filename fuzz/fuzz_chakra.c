/* libFuzzer target for the Chakra trace reader: any bytes, as the only
 * rank's file PREFIX.0.et, must give either a trace or one clean error
 * naming the file, never a crash, a hang, a leak or undefined behaviour.
 * A trace that reads is also simulated on a one-NPU network, so the graph
 * checks (dependencies, cycles, collectives) see fuzzed input too. The
 * reader works on files (zlib decides plain or gzip), so each input is
 * written to a per-process temporary file. Built by `make fuzz`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comet/chakra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char prefix[64], path[80];
    snprintf(prefix, sizeof prefix, "/tmp/comet-fuzz-chakra-%d", (int)getpid());
    snprintf(path, sizeof path, "%s.0.et", prefix);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    comet_et_trace t;
    comet_error err;
    comet_error_clear(&err);
    /* small limits keep a gzip bomb from spending the run on one input */
    const comet_et_limits limits = {.max_nodes = 100000, .max_bytes = 16u << 20,
                                    .max_memory = 64u << 20};
    comet_status st = comet_et_read(prefix, 1, &limits, &t, &err);
    if (st != COMET_OK && (!err.message[0] || !strstr(err.file, "comet-fuzz-chakra")))
        abort(); /* every failure must say why, and name the file */
    if (st == COMET_OK) {
        comet_astra_inputs in;
        comet_astra_ring(&in, 1, 1e9, 0.0);
        comet_et_result res;
        comet_error_clear(&err);
        if (comet_et_simulate(&t, &in, &res, &err) == COMET_OK)
            comet_et_result_free(&res);
        else if (!err.message[0])
            abort();
        comet_et_free(&t);
    }
    remove(path);
    return 0;
}
