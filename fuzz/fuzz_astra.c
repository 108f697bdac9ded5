/* libFuzzer target for ASTRA-sim's input files as `comet simulate --chakra`
 * reads them: any bytes, as the network YAML, the system JSON, the
 * remote-memory JSON or the comm-group JSON, must give either inputs or one
 * clean error naming that file, never a crash, a hang, a leak or undefined
 * behaviour. The first byte picks which file the rest is ('0' network,
 * '1' system, '2' memory, '3' comm groups, by its value mod 4); the other
 * three are small valid files. As in the CLI, the reader works on paths, so
 * the input is written to a per-process temporary file. Inputs that read
 * are then used to simulate a fixed two-rank trace (compute, an all-reduce
 * over all dimensions, one over comm group "1", a memory load, a send and
 * its receive), so the knobs reach the simulator too. Built by `make fuzz`. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comet/chakra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { NETWORK, SYSTEM, MEMORY, GROUPS, N_FILES };

static const char *const valid_file[N_FILES] = {
    "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n",
    "{\"endpoint-delay\": 10, \"preferred-dataset-splits\": 4, \"active-chunks-per-dimension\": 1,"
    " \"all-reduce-implementation\": [\"ring\"], \"local-mem-bw\": 1600}\n",
    "{\"memory-type\": \"PER_NPU_MEMORY_EXPANSION\", \"remote-mem-latency\": 100,"
    " \"remote-mem-bw\": 64}\n",
    "{\"1\": [0, 1]}\n",
};

typedef struct fixture {
    char valid_path[N_FILES][96];  /* the valid files, written once */
    char input_path[96];           /* this run's fuzzed file */
    char trace_path[2][128];       /* PREFIX.0.et, PREFIX.1.et */
    comet_et_trace trace;          /* the two-rank trace, read once */
} fixture;

static fixture the_fixture;

/* the temporary files go when the fuzzer exits */
static void remove_files(void)
{
    for (int i = 0; i < N_FILES; i++)
        remove(the_fixture.valid_path[i]);
    remove(the_fixture.input_path);
    for (int rank = 0; rank < 2; rank++)
        remove(the_fixture.trace_path[rank]);
    comet_et_free(&the_fixture.trace);
}

static void fixed_trace(const char *prefix, fixture *fx)
{
    for (int rank = 0; rank < 2; rank++) {
        comet_et_node nodes[5];
        memset(nodes, 0, sizeof nodes);
        uint64_t after_compute[1] = {1};
        nodes[0] = (comet_et_node){.id = 1, .type = COMET_ET_COMPUTE, .num_ops = 1e9,
                                   .tensor_size = 1e6, .duration_micros = 10};
        nodes[1] = (comet_et_node){.id = 2, .type = COMET_ET_COLLECTIVE,
                                   .comm_type = COMET_ET_ALL_REDUCE, .comm_size = 1 << 20,
                                   .n_deps = 1, .deps = after_compute};
        nodes[2] = (comet_et_node){.id = 3, .type = COMET_ET_COLLECTIVE,
                                   .comm_type = COMET_ET_ALL_REDUCE, .comm_size = 4096};
        nodes[2].pg_name = "1";
        nodes[3] = (comet_et_node){.id = 4, .type = COMET_ET_MEM_LOAD, .tensor_size = 1e6};
        nodes[4] = (comet_et_node){.id = 5, .type = rank == 0 ? COMET_ET_SEND : COMET_ET_RECV,
                                   .comm_size = 1000, .comm_src = 0, .comm_dst = 1,
                                   .comm_tag = 7};
        snprintf(fx->trace_path[rank], sizeof fx->trace_path[rank], "%s.%d.et", prefix, rank);
        comet_error err;
        comet_error_clear(&err);
        if (comet_et_write(fx->trace_path[rank], NULL, nodes, 5, &err) != COMET_OK)
            abort();
    }
    comet_error err;
    comet_error_clear(&err);
    if (comet_et_read(prefix, 2, NULL, &fx->trace, &err) != COMET_OK)
        abort();
}

static fixture *setup(void)
{
    fixture *fx = &the_fixture;
    static int ready;
    if (ready)
        return fx;
    static const char *const ext[N_FILES] = {"network.yml", "system.json", "memory.json",
                                             "groups.json"};
    char prefix[64];
    snprintf(prefix, sizeof prefix, "/tmp/comet-fuzz-astra-%d", (int)getpid());
    for (int i = 0; i < N_FILES; i++) {
        snprintf(fx->valid_path[i], sizeof fx->valid_path[i], "%s.%s", prefix, ext[i]);
        FILE *f = fopen(fx->valid_path[i], "wb");
        if (!f || fputs(valid_file[i], f) < 0 || fclose(f) != 0)
            abort();
    }
    snprintf(fx->input_path, sizeof fx->input_path, "%s.input", prefix);
    fixed_trace(prefix, fx);
    atexit(remove_files);
    ready = 1;
    return fx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    fixture *fx = setup();
    int which = data[0] % N_FILES;
    FILE *f = fopen(fx->input_path, "wb");
    if (!f)
        abort();
    if (fwrite(data + 1, 1, size - 1, f) != size - 1 || fclose(f) != 0)
        abort();
    const char *path[N_FILES];
    for (int i = 0; i < N_FILES; i++)
        path[i] = i == which ? fx->input_path : fx->valid_path[i];

    /* as cli/simulate_chakra.c reads them */
    comet_astra_inputs in;
    comet_error err;
    comet_error_clear(&err);
    comet_status st = comet_astra_read(path[NETWORK], path[SYSTEM], path[MEMORY], &in, &err);
    bool groups_failed = false;
    if (st == COMET_OK) {
        st = comet_astra_read_groups(path[GROUPS], &in, &err);
        groups_failed = st != COMET_OK;
    }
    if (st != COMET_OK) {
        /* every failure says why, and names the file it is about: the
         * fuzzed one, or the comm-group file, whose ranks are checked
         * against the (fuzzed) network */
        bool named = strcmp(err.file, fx->input_path) == 0 ||
                     (groups_failed && strcmp(err.file, path[GROUPS]) == 0);
        if (!err.message[0] || !named)
            abort();
        comet_astra_free(&in);
        return 0;
    }
    if (err.message[0])
        abort(); /* success leaves the error untouched */
    comet_et_result res;
    st = comet_et_simulate(&fx->trace, &in, &res, &err);
    if (st == COMET_OK) {
        if (!(res.finish >= 0) || res.ranks != 2)
            abort();
        comet_et_result_free(&res);
    } else if (!err.message[0]) {
        abort();
    }
    comet_astra_free(&in);
    return 0;
}
