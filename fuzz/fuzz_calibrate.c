/* libFuzzer target for comet calibrate's measurement files: any bytes,
 * read as a kernel CSV (byte 0 even) or nccl-tests output (odd; bit 1
 * picks fit or curve mode), must give rows or one error with a message,
 * never a crash, a leak or undefined behaviour; and what reads must fit
 * on the h100-80g-dgx preset (or fail with a message), and the system it
 * fits must be written as a file the config reader takes back. Built by
 * `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comet/calibrate.h"
#include "comet/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The fitted system, written and read back: it must read. */
static void write_and_read(const comet_system *sys)
{
    comet_buf b;
    comet_buf_init(&b);
    comet_error err;
    comet_error_clear(&err);
    if (comet_system_write_yaml(sys, &b, &err) == COMET_OK) {
        comet_job *job = malloc(sizeof *job);
        if (job) {
            comet_job_init(job);
            if (comet_config_read_text(b.data, b.len, "fitted.yaml", job, &err) != COMET_OK)
                abort(); /* the writer wrote what the reader refuses */
            free(job);
        }
    }
    comet_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    comet_system base;
    comet_error err;
    comet_error_clear(&err);
    if (comet_preset_system("h100-80g-dgx", &base, &err) != COMET_OK)
        abort();
    comet_kernel_rows rows;
    comet_nccl_runs runs;
    memset(&rows, 0, sizeof rows);
    memset(&runs, 0, sizeof runs);
    comet_calib_nccl placed[8];
    comet_calib_request req = {.base = &base};
    comet_status st;
    if (data[0] % 2 == 0) {
        st = comet_kernels_read_text(text, len, "fuzz.csv", &rows, &err);
        req.kernels = &rows;
    } else {
        st = comet_nccl_read_text(text, len, "fuzz.txt", COMET_COLL_NONE, &runs, &err);
        for (size_t i = 0; i < runs.n && i < 8; i++)
            placed[i] = (comet_calib_nccl){&runs.series[i], (int)(i % 2), 8};
        req.nccl = placed;
        req.n_nccl = runs.n < 8 ? runs.n : 8;
        req.net_mode = data[0] & 2 ? COMET_CALIB_NET_CURVE : COMET_CALIB_NET_FIT;
    }
    if (st != COMET_OK && !err.message[0])
        abort(); /* a failure must say why */
    if (st == COMET_OK) {
        comet_calib_result *r = calloc(1, sizeof *r);
        if (r) {
            comet_error_clear(&err);
            st = comet_calibrate(&req, r, &err);
            if (st != COMET_OK && !err.message[0])
                abort();
            if (st == COMET_OK)
                write_and_read(&r->system);
            comet_calib_result_free(r);
            free(r);
        }
    }
    comet_kernel_rows_free(&rows);
    comet_nccl_runs_free(&runs);
    return 0;
}
