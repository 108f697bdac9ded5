/* libFuzzer target for the config reader: any bytes, read as a YAML or
 * JSON config document, must give either a job or one clean error, never
 * a crash, a leak or undefined behaviour. Built by `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comet/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    comet_job *job = malloc(sizeof *job);
    if (!job)
        return 0;
    comet_job_init(job);
    comet_error err;
    comet_error_clear(&err);
    comet_status st = comet_config_read_text((const char *)data, size, "fuzz.yaml", job, &err);
    char line[1024];
    comet_error_format(&err, line, sizeof line);
    if (st == COMET_OK && err.message[0])
        abort();   /* success must leave the error untouched */
    if (st != COMET_OK && !err.message[0])
        abort();   /* every failure must say why */
    free(job);
    return 0;
}
