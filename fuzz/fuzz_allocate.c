/* libFuzzer target for comet allocate's problem files (docs/allocate.md):
 * any bytes, read as a YAML or JSON document with one allocate: section,
 * must give a problem or one clean error naming where, never a crash, a
 * leak or undefined behaviour. Only the reader runs: the solver's work
 * grows with the problem the file states, which the reader bounds.
 * Built by `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "comet/allocate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    comet_alloc_problem *p = malloc(sizeof *p);
    if (!p)
        return 0;
    comet_error err;
    comet_error_clear(&err);
    comet_status st = comet_alloc_read_text((const char *)data, size, "fuzz.yaml", p, &err);
    if (st == COMET_OK && err.message[0])
        abort(); /* success must leave the error untouched */
    if (st != COMET_OK && !err.message[0])
        abort(); /* every failure must say why */
    free(p);
    return 0;
}
