/* libFuzzer target for comet deeppool's reader: any bytes, read as a
 * deeppool document, must give either a problem or one clean one-line
 * error, never a crash, a leak or undefined behaviour; a small problem
 * that reads is planned, and its plan must keep the planner's promises:
 * without an amplification limit burst parallelism is never slower than
 * data parallelism, and multiplexing never leaves less in total than the
 * foreground alone. Built by `make fuzz`. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comet/deeppool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    comet_deeppool_problem *p = malloc(sizeof *p);
    comet_deeppool_result *r = malloc(sizeof *r);
    if (!p || !r) {
        free(p);
        free(r);
        return 0;
    }
    comet_error err;
    comet_error_clear(&err);
    comet_status st = comet_deeppool_read_text((const char *)data, size, "fuzz.yaml", p, &err);
    if (st == COMET_OK && err.message[0])
        abort(); /* success must leave the error untouched */
    if (st != COMET_OK && (!err.message[0] || strchr(err.message, '\n')))
        abort(); /* every failure says why, on one line */
    if (st == COMET_OK && p->gpus <= 64 && p->n_scaling <= 2) {
        st = comet_deeppool(p, r, &err);
        if (st != COMET_OK && !err.message[0])
            abort();
        if (st == COMET_OK) {
            if (p->amplification == 0.0 && !(r->burst.iteration <= r->dp.iteration * (1 + 1e-9)))
                abort();
            if (!(r->mux.total >= r->mux.foreground_alone * (1 - 1e-12)))
                abort();
        }
    }
    free(p);
    free(r);
    return 0;
}
