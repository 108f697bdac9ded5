/* comet partition's library: the tensor readers (every format on the same
 * values, truncated and lying files), Munkres against brute force, the
 * balanced assignment against Munkres on the slot matrix, a block-diagonal
 * network recovered exactly, pruning at budget 0 keeping accuracy, the
 * traffic priced equal to the kept cross-worker weights, the bad inputs'
 * one-line errors, and the command's text and JSON on the digits MLP. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/partition.h"
#include "comet/report.h"
#include "tests.h"

static void data_path(char *out, size_t cap, const char *name)
{
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(out, cap, "%s/data/%s", dir ? dir : "tests", name);
}

/* A deterministic generator, so every run sees the same matrices. */
static double rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static void assert_one_line(const comet_error *err, const char *part)
{
    if (!strstr(err->message, part))
        fail_msg("error \"%s\" does not say \"%s\"", err->message, part);
    assert_null(strchr(err->message, '\n'));
}

/* ---- readers */

static void expect_w(const comet_tensor *t)
{
    assert_non_null(t);
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[0], 2);
    assert_int_equal(t->shape[1], 3);
    for (int i = 0; i < 6; i++)
        assert_true(t->values[i] == (float)(i + 1));
}

static void test_readers(void **state)
{
    (void)state;
    static const char *const npys[] = {"partition/w.npy", "partition/w_fortran.npy",
                                       "partition/w_big.npy"};
    char path[512];
    comet_error err;
    for (int k = 0; k < 3; k++) {
        comet_tensor_set s;
        data_path(path, sizeof path, npys[k]);
        assert_int_equal(comet_tensors_read(path, &s, &err), COMET_OK);
        assert_int_equal(s.n, 1);
        expect_w(&s.tensors[0]);
        /* in-out: W (out, in) is the stored matrix transposed */
        comet_mlp m;
        assert_int_equal(comet_mlp_from_tensors(&s, COMET_LAYOUT_IN_OUT, path, &m, &err),
                         COMET_OK);
        assert_int_equal(m.layers[0].in, 2);
        assert_int_equal(m.layers[0].out, 3);
        assert_true(m.layers[0].weight[1] == 4.0f && m.layers[0].bias[2] == 0);
        comet_mlp_free(&m);
        comet_tensors_free(&s);
    }
    static const char *const models[] = {"partition/compressed.npz",
                                         "partition/model.safetensors"};
    for (int k = 0; k < 2; k++) {
        comet_tensor_set s;
        data_path(path, sizeof path, models[k]);
        assert_int_equal(comet_tensors_read(path, &s, &err), COMET_OK);
        expect_w(comet_tensors_find(&s, "fc1.weight"));
        const comet_tensor *b = comet_tensors_find(&s, "fc1.bias");
        assert_non_null(b);
        assert_true(b->values[0] == 0.5f && b->values[1] == -0.5f);
        comet_mlp m;
        assert_int_equal(comet_mlp_from_tensors(&s, COMET_LAYOUT_OUT_IN, path, &m, &err),
                         COMET_OK);
        assert_int_equal(m.n_layers, 1);
        assert_int_equal(m.layers[0].in, 3);
        assert_int_equal(m.layers[0].out, 2);
        assert_true(m.layers[0].bias[1] == -0.5f);
        comet_mlp_free(&m);
        /* the other layout transposes: the bias no longer fits */
        assert_int_equal(comet_mlp_from_tensors(&s, COMET_LAYOUT_IN_OUT, path, &m, &err),
                         COMET_EINPUT);
        assert_one_line(&err, "bias fc1.bias has 2 values for 3 outputs of fc1.weight");
        comet_tensors_free(&s);
    }
}

/* Read a file whole (tests' small files). */
static unsigned char *slurp(const char *name, size_t *size)
{
    char path[512];
    data_path(path, sizeof path, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *buf = malloc(1 << 20);
    *size = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static void test_truncated_files(void **state)
{
    (void)state;
    static const char *const files[] = {"partition/w.npy", "partition/compressed.npz",
                                        "partition/model.safetensors", "digits_mlp.npz"};
    for (int k = 0; k < 4; k++) {
        size_t size;
        unsigned char *buf = slurp(files[k], &size);
        /* every cut gives a one-line error, never a crash */
        for (size_t cut = 0; cut < size; cut += cut < 300 ? 1 : 97) {
            comet_tensor_set s;
            comet_error err;
            comet_error_clear(&err);
            comet_status st = comet_tensors_parse(buf, cut, files[k], &s, &err);
            if (st == COMET_OK)
                fail_msg("%s cut at %zu of %zu bytes was read", files[k], cut, size);
            assert_int_equal(st, COMET_EINPUT);
            assert_null(strchr(err.message, '\n'));
        }
        free(buf);
    }
    /* a truncated .npy says so */
    size_t size;
    unsigned char *buf = slurp("partition/w.npy", &size);
    comet_tensor_set s;
    comet_error err;
    assert_int_equal(comet_tensors_parse(buf, size - 4, "w.npy", &s, &err), COMET_EINPUT);
    assert_one_line(&err, "truncated .npy data (20 bytes of 24)");
    /* a shape that lies about the data */
    char *shape = NULL;
    for (size_t i = 0; i + 6 <= size && !shape; i++)
        if (memcmp(buf + i, "(2, 3)", 6) == 0)
            shape = (char *)buf + i;
    assert_non_null(shape);
    shape[1] = '9';
    assert_int_equal(comet_tensors_parse(buf, size, "w.npy", &s, &err), COMET_EINPUT);
    assert_one_line(&err, "truncated .npy data");
    free(buf);
}

/* ---- Munkres */

static double brute_force(const double *cost, int n, int *perm, int k, double so_far)
{
    if (k == n)
        return so_far;
    double best = INFINITY;
    for (int i = k; i < n; i++) {
        int t = perm[k];
        perm[k] = perm[i];
        perm[i] = t;
        double v = brute_force(cost, n, perm, k + 1, so_far + cost[k * n + perm[k]]);
        if (v < best)
            best = v;
        perm[i] = perm[k];
        perm[k] = t;
    }
    return best;
}

static void test_munkres_brute_force(void **state)
{
    (void)state;
    uint64_t seed = 22;
    for (int trial = 0; trial < 200; trial++) {
        double cost[36];
        for (int k = 0; k < 36; k++)
            cost[k] = trial % 2 ? floor(rnd(&seed) * 10) : rnd(&seed) * 100 - 50;
        int perm[6] = {0, 1, 2, 3, 4, 5}, col[6];
        double best = brute_force(cost, 6, perm, 0, 0);
        double got = comet_hungarian(6, 6, cost, col);
        assert_close(got, best, 1e-12);
        /* the assignment is a permutation and costs what it says */
        int seen[6] = {0};
        double sum = 0;
        for (int i = 0; i < 6; i++) {
            assert_true(col[i] >= 0 && col[i] < 6 && !seen[col[i]]);
            seen[col[i]] = 1;
            sum += cost[i * 6 + col[i]];
        }
        assert_close(sum, got, 1e-12);
    }
}

static void test_balanced_equals_munkres(void **state)
{
    (void)state;
    uint64_t seed = 7;
    for (int trial = 0; trial < 60; trial++) {
        int groups = 2 + trial % 4;
        int64_t cap[5];
        int n = 0;
        for (int g = 0; g < groups; g++) {
            cap[g] = 1 + (int64_t)(rnd(&seed) * 5);
            n += (int)cap[g];
        }
        int rows = trial % 3 ? n : n - 1; /* a spare slot sometimes */
        double *cost = malloc((size_t)rows * (size_t)groups * sizeof *cost);
        double *slots = malloc((size_t)rows * (size_t)n * sizeof *slots);
        for (int i = 0; i < rows * groups; i++)
            cost[i] = trial % 2 ? floor(rnd(&seed) * 4) : rnd(&seed);
        for (int i = 0; i < rows; i++) {
            int c = 0;
            for (int g = 0; g < groups; g++)
                for (int k = 0; k < cap[g]; k++)
                    slots[i * n + c++] = cost[i * groups + g];
        }
        int *group = malloc((size_t)rows * sizeof *group), *col = malloc((size_t)rows * sizeof *col);
        double a = comet_assign_balanced(rows, groups, cost, cap, group);
        double b = comet_hungarian(rows, n, slots, col);
        assert_close(a, b, 1e-9);
        int64_t load[5] = {0};
        for (int i = 0; i < rows; i++)
            load[group[i]]++;
        for (int g = 0; g < groups; g++)
            assert_true(load[g] <= cap[g]);
        free(cost);
        free(slots);
        free(group);
        free(col);
    }
}

/* ---- the partitioner */

/* A network of `layers` square layers of width n in `blocks` blocks: each
 * layer block-diagonal under a random permutation of its neurons. */
static void block_network(comet_mlp *m, int layers, int n, int blocks, int **block_of)
{
    uint64_t seed = 99;
    m->n_layers = layers;
    m->layers = calloc((size_t)layers, sizeof *m->layers);
    /* block_of[l]: block of neuron i of level l (level 0: the inputs) */
    for (int l = 0; l <= layers; l++) {
        block_of[l] = malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++)
            block_of[l][i] = i % blocks;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(rnd(&seed) * (i + 1)), t = block_of[l][i];
            block_of[l][i] = block_of[l][j];
            block_of[l][j] = t;
        }
    }
    for (int l = 0; l < layers; l++) {
        comet_dense *d = &m->layers[l];
        snprintf(d->name, sizeof d->name, "fc%d", l);
        d->in = d->out = n;
        d->weight = calloc((size_t)(n * n), sizeof(float));
        d->bias = calloc((size_t)n, sizeof(float));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                if (block_of[l + 1][j] == block_of[l][i])
                    d->weight[j * n + i] = (float)(0.1 + rnd(&seed)) * (rnd(&seed) < 0.5 ? -1 : 1);
    }
}

static void test_block_diagonal_recovered(void **state)
{
    (void)state;
    comet_mlp m;
    int *block_of[4];
    block_network(&m, 3, 32, 4, block_of);
    comet_partition p;
    comet_error err;
    comet_partition_request req = {.workers = 4, .prune = COMET_PRUNE_COUNT, .budget = 0};
    assert_int_equal(comet_partition_run(&m, &req, &p, &err), COMET_OK);
    for (int l = 0; l < 3; l++) {
        assert_int_equal(p.layers[l].cross_before, 0);
        assert_int_equal(p.layers[l].cross_after, 0);
        assert_true(p.layers[l].cross_mass_before == 0);
        assert_true(p.layers[l].cross_naive > 0);
        /* each block on one worker, each worker one block */
        int worker_of_block[4] = {-1, -1, -1, -1};
        for (int j = 0; j < 32; j++) {
            int b = block_of[l + 1][j], w = p.layers[l].worker_of_out[j];
            if (worker_of_block[b] < 0)
                worker_of_block[b] = w;
            assert_int_equal(worker_of_block[b], w);
        }
        for (int w = 0; w < 4; w++)
            assert_int_equal(p.layers[l].rows_of_worker[w], 8);
    }
    for (int w = 0; w < 16; w++)
        assert_int_equal(p.layers[1].pair_kept[w], 0);
    comet_partition_free(&p);
    comet_mlp_free(&m);
    for (int l = 0; l < 4; l++)
        free(block_of[l]);
}

static void read_digits(comet_mlp *m, comet_labelled *d)
{
    char path[512];
    comet_error err;
    data_path(path, sizeof path, "digits_mlp.npz");
    assert_int_equal(comet_mlp_read(path, COMET_LAYOUT_OUT_IN, m, &err), COMET_OK);
    data_path(path, sizeof path, "digits_test.npz");
    assert_int_equal(comet_labelled_read(path, d, &err), COMET_OK);
}

static void test_budget_zero_keeps_accuracy(void **state)
{
    (void)state;
    comet_mlp m;
    comet_labelled d;
    read_digits(&m, &d);
    assert_int_equal(m.n_layers, 3);
    assert_int_equal(d.n, 450);
    comet_error err;
    double before, after;
    assert_int_equal(comet_mlp_accuracy(&m, &d, &before, &err), COMET_OK);
    assert_close(before, 438.0 / 450, 1e-12); /* the exporter printed 0.9733 */
    comet_partition p;
    comet_partition_request req = {.workers = 4, .prune = COMET_PRUNE_COUNT, .budget = 0};
    assert_int_equal(comet_partition_run(&m, &req, &p, &err), COMET_OK);
    assert_int_equal(comet_mlp_accuracy(&p.pruned, &d, &after, &err), COMET_OK);
    assert_true(after == before);
    for (int l = 0; l < 3; l++) {
        assert_memory_equal(p.pruned.layers[l].weight, m.layers[l].weight,
                            (size_t)(m.layers[l].in * m.layers[l].out) * sizeof(float));
        assert_int_equal(p.layers[l].cross_after, p.layers[l].cross_before);
        /* the placement moves less weight mass across workers than the contiguous split */
        assert_true(p.layers[l].cross_mass_before < p.layers[l].cross_mass_naive);
    }
    /* pruning everything cross-worker hurts; half of it by count removes the half */
    assert_int_equal(comet_partition_prune(&m, &p, COMET_PRUNE_COUNT, 0.5, &err), COMET_OK);
    for (int l = 0; l < 3; l++)
        assert_int_equal(p.layers[l].cross_after, p.layers[l].cross_before / 2);
    assert_int_equal(comet_partition_prune(&m, &p, COMET_PRUNE_MASS, 0.1, &err), COMET_OK);
    for (int l = 0; l < 3; l++) {
        double removed = p.layers[l].cross_mass_before - p.layers[l].cross_mass_after;
        assert_true(removed <= 0.1 * p.layers[l].cross_mass_before * (1 + 1e-9));
        assert_true(removed > 0.09 * p.layers[l].cross_mass_before);
    }
    comet_partition_free(&p);
    comet_labelled_free(&d);
    comet_mlp_free(&m);
}

static void test_traffic_is_kept_weights(void **state)
{
    (void)state;
    comet_mlp m;
    comet_labelled d;
    read_digits(&m, &d);
    comet_error err;
    comet_partition p;
    comet_partition_request req = {.workers = 4, .prune = COMET_PRUNE_COUNT, .budget = 0.3};
    assert_int_equal(comet_partition_run(&m, &req, &p, &err), COMET_OK);
    comet_system sys;
    assert_int_equal(comet_preset_system("h100-80g-dgx", &sys, &err), COMET_OK);
    comet_partition_price price, naive;
    assert_int_equal(comet_partition_price_on(&p, false, &sys, COMET_DTYPE_BF16, 3, &price, &err),
                     COMET_OK);
    assert_int_equal(comet_partition_price_on(&p, true, &sys, COMET_DTYPE_BF16, 3, &naive, &err),
                     COMET_OK);
    int64_t kept = 0, pairs = 0, naive_cross = 0;
    for (int l = 0; l < p.n_layers; l++) {
        kept += p.layers[l].cross_after;
        naive_cross += p.layers[l].cross_naive;
        for (int k = 0; k < 16; k++)
            pairs += p.layers[l].pair_kept[k];
        /* 30 % of each layer's cross-worker weights removed */
        assert_int_equal(p.layers[l].cross_after,
                         p.layers[l].cross_before - (int64_t)floor(0.3 * p.layers[l].cross_before));
    }
    assert_int_equal(pairs, kept);
    assert_true(price.bytes == (double)kept * 2 * 3);          /* bf16, batch 3 */
    assert_true(naive.bytes == (double)naive_cross * 2 * 3);
    assert_true(price.exchange < naive.exchange);
    assert_true(price.latency > 0 && price.throughput == 3 / price.latency);
    comet_partition_free(&p);
    comet_labelled_free(&d);
    comet_mlp_free(&m);
}

/* ---- bad input */

static void test_bad_input(void **state)
{
    (void)state;
    comet_error err;
    float w1[6] = {1, 2, 3, 4, 5, 6}, w2[6] = {1, 2, 3, 4, 5, 6};
    comet_tensor t[2] = {{.name = "fc1.weight", .ndim = 2, .shape = {2, 3}, .count = 6, .values = w1},
                         {.name = "fc2.weight", .ndim = 2, .shape = {2, 3}, .count = 6, .values = w2}};
    comet_tensor_set s = {2, t};
    comet_mlp m;
    assert_int_equal(comet_mlp_from_tensors(&s, COMET_LAYOUT_OUT_IN, "net.npz", &m, &err),
                     COMET_EINPUT);
    assert_one_line(&err, "layer shapes do not chain: layer 0 (fc1.weight) gives 2 outputs, "
                          "layer 1 (fc2.weight) takes 3 inputs");
    t[1].shape[0] = 3;
    t[1].shape[1] = 2;
    w2[4] = NAN;
    assert_int_equal(comet_mlp_from_tensors(&s, COMET_LAYOUT_OUT_IN, "net.npz", &m, &err),
                     COMET_EINPUT);
    assert_one_line(&err, "layer 1 (fc2.weight): weight [2, 0] is NaN");
    w2[4] = 5;
    assert_int_equal(comet_mlp_from_tensors(&s, COMET_LAYOUT_OUT_IN, "net.npz", &m, &err),
                     COMET_OK);
    comet_partition p;
    comet_partition_request req = {.workers = 3, .prune = COMET_PRUNE_COUNT, .budget = 0};
    assert_int_equal(comet_partition_run(&m, &req, &p, &err), COMET_EINPUT);
    assert_one_line(&err, "more workers (3) than the 2 neurons of layer 0 (fc1.weight)");
    req.workers = 2;
    req.budget = 1.5;
    assert_int_equal(comet_partition_run(&m, &req, &p, &err), COMET_EINPUT);
    assert_one_line(&err, "budget must be a fraction in [0, 1]");
    comet_mlp_free(&m);
    /* a 1x1 convolution (out, in, 1, 1) is a fully connected layer */
    comet_tensor conv = {.name = "conv.weight", .ndim = 4, .shape = {2, 3, 1, 1}, .count = 6,
                         .values = w1};
    comet_tensor_set c = {1, &conv};
    assert_int_equal(comet_mlp_from_tensors(&c, COMET_LAYOUT_OUT_IN, "conv.npz", &m, &err),
                     COMET_OK);
    assert_int_equal(m.layers[0].in, 3);
    assert_int_equal(m.layers[0].out, 2);
    assert_true(m.layers[0].weight[5] == 6);
    comet_mlp_free(&m);
    /* a file of something else */
    comet_tensor_set r;
    assert_int_equal(comet_tensors_parse("hello, world", 12, "x.npy", &r, &err), COMET_EINPUT);
    assert_one_line(&err, "neither .npy, .npz nor safetensors");
}

/* ---- the command */

static char *run_comet(const char *args, int *status)
{
    const char *bin = getenv("COMET_BIN");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s partition %s 2>&1", bin ? bin : "build/comet", args);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char *out = calloc(1, 1 << 20);
    size_t n = fread(out, 1, (1 << 20) - 1, f);
    out[n] = 0;
    *status = pclose(f);
    return out;
}

static void test_command(void **state)
{
    (void)state;
    const char *dir = getenv("COMET_TESTS_DIR");
    char args[1024];
    snprintf(args, sizeof args,
             "%s/data/digits_mlp.npz --workers 4 --data %s/data/digits_test.npz --max-accuracy-loss "
             "1%% --json",
             dir ? dir : "tests", dir ? dir : "tests");
    int status;
    char *out = run_comet(args, &status);
    if (status != 0)
        fail_msg("comet partition %s: %s", args, out);
    assert_non_null(strstr(out, "\"accuracy_before\": 0.97333333333333338"));
    assert_non_null(strstr(out, "\"worker_of_neuron\": ["));
    assert_non_null(strstr(out, "\"trade_off\": ["));
    free(out);
    snprintf(args, sizeof args, "%s/data/digits_mlp.npz --workers 11", dir ? dir : "tests");
    out = run_comet(args, &status);
    assert_int_equal(WEXITSTATUS(status), 2);
    assert_non_null(strstr(out, "more workers (11) than the 10 neurons of layer 2"));
    assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));
    free(out);
}

void suite_partition(test_tally *t)
{
    const struct CMUnitTest partition[] = {
        cmocka_unit_test(test_readers),
        cmocka_unit_test(test_truncated_files),
        cmocka_unit_test(test_munkres_brute_force),
        cmocka_unit_test(test_balanced_equals_munkres),
        cmocka_unit_test(test_block_diagonal_recovered),
        cmocka_unit_test(test_budget_zero_keeps_accuracy),
        cmocka_unit_test(test_traffic_is_kept_weights),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_command),
    };
    RUN_GROUP(t, partition);
}
