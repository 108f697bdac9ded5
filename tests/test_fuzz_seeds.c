/* The committed fuzz seeds are valid inputs, read the way their fuzz
 * target reads them: a seed that stopped reading (after a change of the
 * file format, say) would leave its fuzzer mutating one early error
 * instead of starting from the paths a real file takes. Covers the
 * ASTRA-sim input files (fuzz/corpus-astra: byte 0 mod 4 picks network,
 * system, memory or comm groups, the rest is the file) and the Chakra
 * traces (fuzz/corpus-chakra: each is the only rank's file). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comet/chakra.h"
#include "tests.h"

/* Copy seed `name` of `folder`, less its first `skip` bytes, to `to`; the
 * skipped bytes go to head[]. */
static void copy_seed(const char *folder, const char *name, const char *to, size_t skip,
                      unsigned char *head)
{
    char from[192];
    snprintf(from, sizeof from, "%s/%.63s", folder, name);
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    int c;
    for (size_t i = 0; (c = fgetc(in)) != EOF; i++)
        if (i < skip)
            head[i] = (unsigned char)c;
        else
            fputc(c, out);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* A seed folder's file names, sorted, and an empty temporary folder to
 * copy them into. */
typedef struct seed_list {
    char names[64][64];
    int n;
    char dir[32];
} seed_list;

static void list_seeds(const char *folder, int at_least, seed_list *out)
{
    DIR *d = opendir(folder);
    assert_non_null(d);
    out->n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] != '.' && out->n < 64 && len < sizeof out->names[0])
            memcpy(out->names[out->n++], e->d_name, len + 1);
    }
    closedir(d);
    qsort(out->names, (size_t)out->n, sizeof out->names[0], by_name);
    assert_in_range(out->n, at_least, 63);
    snprintf(out->dir, sizeof out->dir, "/tmp/comet-seeds-XXXXXX");
    assert_non_null(mkdtemp(out->dir));
}

static void test_astra_seeds(void **state)
{
    (void)state;
    enum { NETWORK, SYSTEM, MEMORY, GROUPS, N_FILES };
    seed_list seeds;
    list_seeds("fuzz/corpus-astra", N_FILES, &seeds);
    char input[64], network[64];
    snprintf(input, sizeof input, "%s/input", seeds.dir);
    snprintf(network, sizeof network, "%s/network.yml", seeds.dir);
    FILE *f = fopen(network, "w");
    assert_non_null(f);
    fputs("topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n", f);
    assert_int_equal(fclose(f), 0);
    int per_kind[N_FILES] = {0};
    for (int i = 0; i < seeds.n; i++) {
        unsigned char head[1];
        copy_seed("fuzz/corpus-astra", seeds.names[i], input, 1, head);
        int which = head[0] % N_FILES;
        per_kind[which]++;
        comet_astra_inputs in;
        comet_error err;
        comet_error_clear(&err);
        comet_status st = comet_astra_read(which == NETWORK ? input : network,
                                           which == SYSTEM ? input : NULL,
                                           which == MEMORY ? input : NULL, &in, &err);
        if (!st && which == GROUPS)
            st = comet_astra_read_groups(input, &in, &err);
        if (st)
            fail_msg("seed %s: %s", seeds.names[i], err.message);
        /* the fuzz target's trace has two ranks: every network seed has 2 NPUs */
        int64_t npus = 1;
        for (int d = 0; d < in.system.n_dims; d++)
            npus *= in.system.dims[d].size;
        assert_int_equal(npus, 2);
        comet_astra_free(&in);
    }
    remove(input);
    remove(network);
    rmdir(seeds.dir);
    for (int k = 0; k < N_FILES; k++)
        assert_true(per_kind[k] >= 1); /* every kind of file has a seed */
}

static void test_chakra_seeds(void **state)
{
    (void)state;
    seed_list seeds;
    list_seeds("fuzz/corpus-chakra", 1, &seeds);
    char prefix[64], rank0[80];
    snprintf(prefix, sizeof prefix, "%s/seed", seeds.dir);
    snprintf(rank0, sizeof rank0, "%s.0.et", prefix);
    for (int i = 0; i < seeds.n; i++) {
        copy_seed("fuzz/corpus-chakra", seeds.names[i], rank0, 0, NULL);
        comet_et_trace t;
        comet_error err;
        comet_error_clear(&err);
        if (comet_et_read(prefix, 1, NULL, &t, &err))
            fail_msg("seed %s: %s", seeds.names[i], err.message);
        assert_int_equal(t.ranks, 1);
        assert_true(t.rank[0].n >= 1);
        comet_et_free(&t);
    }
    remove(rank0);
    rmdir(seeds.dir);
}

void suite_fuzz_seeds(test_tally *t)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_astra_seeds),
        cmocka_unit_test(test_chakra_seeds),
    };
    RUN_GROUP(t, tests);
}
