/* Studies and sweeps: design points decode to the right systems, bad
 * studies are refused with file:line:col and key before any work, the
 * summaries are right on known rows, and the sweep command gives the same
 * bytes at 1 and 2 threads and after a crash (a torn line) and --resume. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#define _DEFAULT_SOURCE   /* flock */
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comet/comet.h"
#include "comet/files.h"
#include "comet/study.h"
#include "comet/report.h"
#include "comet/results.h"
#include "comet/sweep.h"
#include "tests.h"

const char test_small_study[] =
    "study:\n"
    "  name: small\n"
    "  models: [megatron-22b]\n"
    "  system: a100-80g-selene\n"
    "  npus: 16\n"
    "  global_batch: 16\n"
    "  axes:\n"
    "    hbm_capacity: [\"40 GiB\", \"80 GiB\"]\n"
    "    network:\n"
    "      infiniband:\n"
    "        bandwidth: [\"12.5 GB/s\", \"25 GB/s\", \"50 GB/s\"]\n"
    "        topology: [switch]\n"
    "  search: {max_microbatch: 4, offload: false}\n";

static void test_points_decode(void **state)
{
    (void)state;
    comet_study st;
    comet_error err;
    assert_int_equal(comet_study_read_text(test_small_study, strlen(test_small_study), "s.yaml", &st, &err),
                     COMET_OK);
    assert_int_equal(st.n_axes, 3);
    assert_string_equal(st.axes[2].name, "network.infiniband.topology");
    assert_close(st.axes[2].values[0], (double)COMET_TOPO_SWITCH, 0.0);
    assert_int_equal(comet_study_points(&st), 6);
    assert_string_equal(st.axes[1].name, "network.infiniband.bandwidth");
    /* point 4 = hbm value 1 (80 GiB), bandwidth value 1 (25 GB/s) */
    int model;
    comet_system sys;
    int64_t npus;
    double values[COMET_STUDY_MAX_AXES];
    comet_study_point(&st, 4, &model, &sys, &npus, values);
    assert_int_equal(model, 0);
    assert_int_equal(npus, 16);
    assert_close(sys.hbm.capacity, 80.0 * 1073741824.0, 0.0);
    assert_close(sys.dims[1].bandwidth, 25e9, 0.0);
    assert_close(values[1], 25e9, 0.0);
    char text[32];
    assert_string_equal(comet_axis_format(&st.axes[0], values[0], text, sizeof text), "80 GiB");
    /* a point's row: same answer as an independent search of that design */
    comet_sweep_row row;
    assert_int_equal(comet_sweep_point(&st, 4, &row, &err), COMET_OK);
    assert_int_equal(row.status, COMET_POINT_OK);
    assert_close(row.cost, comet_system_cost(&sys, 16), 0.0);
    comet_result again;
    assert_int_equal(comet_estimate(&st.models[0], &sys, &row.best.strategy, &again, &err),
                     COMET_OK);
    assert_close(again.step_time, row.best.result.step_time, 1e-15);
}

void test_expect_study_error(const char *text, const char *expected)
{
    comet_study *st = malloc(sizeof *st);
    comet_error err;
    assert_int_equal(comet_study_read_text(text, strlen(text), "bad.yaml", st, &err),
                     COMET_EINPUT);
    char line[600];
    assert_string_equal(comet_error_format(&err, line, sizeof line), expected);
    free(st);
}

static void test_bad_studies(void **state)
{
    (void)state;
    test_expect_study_error("study:\n  models: [gpt3-175b]\n  system: a100-80g-selene\n  npus: 64\n"
                       "  global_batch: 64\n  axes:\n    hbm_capacity: []\n",
                       "bad.yaml:7:19: study.axes.hbm_capacity: is empty: give at least one value");
    test_expect_study_error("study:\n  models: [gpt3-175b]\n  system: a100-80g-selene\n"
                       "  global_batch: 64\n  axes:\n    npus: [64, 128]\n"
                       "  constraints: {npus: 64}\n",
                       "bad.yaml:7:23: study.constraints.npus: contradicts the npus axis: fix the "
                       "NPU count or vary it, not both");
    test_expect_study_error("study:\n  models: [gpt3-175b]\n  system: a100-80g-selene\n  npus: 64\n"
                       "  global_batch: 64\n  axes:\n    hbm_capacty: [\"80 GiB\"]\n",
                       "bad.yaml:7:5: study.axes.hbm_capacty: unknown resource (did you mean "
                       "\"hbm_capacity\"?)");
    test_expect_study_error("study:\n  models: [gpt3-175b]\n  system: a100-80g-selene\n  npus: 64\n"
                       "  global_batch: 64\n  axes:\n    network:\n      ethernet:\n"
                       "        bandwidth: [\"1 GB/s\"]\n",
                       "bad.yaml:8:7: study.axes.network.ethernet: system a100-80g-selene has no "
                       "network dimension named so (it has: nvlink, infiniband)");
    test_expect_study_error("study:\n  models: [gpt3-175b]\n  system: a100-80g-selene\n"
                       "  global_batch: 64\n  axes:\n    npus: [64, 12]\n",
                       "bad.yaml:6:16: study.axes.npus[1]: 12 NPUs do not fit system "
                       "a100-80g-selene: 12 NPUs are not a multiple of network dimension nvlink "
                       "(size 8)");
    test_expect_study_error("study:\n  models: [gpt3-175b]\n  system: a100-80g-selene\n  npus: 64\n",
                       "bad.yaml:2:3: study: needs global_batch or max_global_batch");
}

/* A topology or size swept onto a network dimension must build, as the
 * system reader checks the base system's: the error names the axis value
 * and the shape key it breaks. */
#define SHAPED_STUDY(network, axes)                                                       \
    "study:\n  models: [gpt3-175b]\n  npus: 64\n  global_batch: 64\n"                    \
    "  system:\n    preset: a100-80g-selene\n    network:\n"                              \
    "      - {name: node, size: 8, bandwidth: 300 GB/s}\n" network                       \
    "  axes:\n    network:\n" axes

static void test_bad_shaped_axes(void **state)
{
    (void)state;
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: auto, bandwidth: 25 GB/s}\n",
                                    "      ib: {topology: [switch, fat_tree]}\n"),
                       "bad.yaml:12:31: study.axes.network.ib.topology[1]: fat_tree with auto "
                       "NPUs along ib and 8 inside: study.system.network[1].radix: fat_tree "
                       "needs a switch radix of at least 4 ports (missing)");
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: auto, bandwidth: 25 GB/s}\n",
                                    "      ib: {topology: [torus]}\n"),
                       "bad.yaml:12:23: study.axes.network.ib.topology[0]: torus with auto NPUs "
                       "along ib and 8 inside: study.system.network[1].size: a torus or mesh "
                       "needs a fixed size, not auto");
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: 8, topology: torus, shape: [2, 4],\n"
                                    "         bandwidth: 25 GB/s}\n",
                                    "      ib: {size: [8, 16]}\n"),
                       "bad.yaml:13:22: study.axes.network.ib.size[1]: torus 2x4 with 16 NPUs "
                       "along ib and 8 inside: study.system.network[1].shape: axes multiply to 8 NPUs, "
                       "the dimension's size is 16");
    /* 12-port switches, 6 down per leaf, take 8 NPUs x 8 inside (11 leaves),
     * not 8 x 64: the inner size is at fault */
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: 8, topology: fat_tree, radix: 12,\n"
                                    "         bandwidth: 25 GB/s}\n",
                                    "      node: {size: [8, 64]}\n"),
                       "bad.yaml:13:24: study.axes.network.node.size[1]: fat_tree with 8 NPUs "
                       "along ib and 64 inside: study.system.network[1].radix: 2 tiers of "
                       "12-port switches (leaves 6 down / 6 up) connect 12 leaves at most, this "
                       "dimension needs 86 (8 NPUs along it, 64 inside it): raise radix or "
                       "tiers");

    /* every value builds: the study reads, and its torus point is priced */
    const char text[] = SHAPED_STUDY("      - {name: ib, size: 8, bandwidth: 25 GB/s}\n",
                                     "      ib: {topology: [switch, torus, mesh, ring]}\n");
    comet_study *st = malloc(sizeof *st);
    comet_error err;
    if (comet_study_read_text(text, strlen(text), "ok.yaml", st, &err))
        fail_msg("%s: %s", err.key, err.message);
    comet_system sys;
    comet_study_point_system(st, 1, &sys);
    assert_int_equal(sys.dims[1].topology, COMET_TOPO_TORUS);
    comet_sweep_row row;
    assert_int_equal(comet_sweep_point(st, 1, &row, &err), COMET_OK);
    assert_int_equal(row.status, COMET_POINT_OK);
    free(st);
}

/* The Clos shape axes (oversubscription, radix, tiers) are held to the
 * shape check in every combination with each other and with the sizes
 * inside: the error names the axis value at fault and the key it breaks. */
static void test_bad_clos_axes(void **state)
{
    (void)state;
#define IB_CLOS "      - {name: ib, size: auto, topology: fat_tree, radix: 64, bandwidth: 25 GB/s}\n"
    test_expect_study_error(SHAPED_STUDY(IB_CLOS, "      ib: {oversubscription: [2, 0.5]}\n"),
                       "bad.yaml:12:34: study.axes.network.ib.oversubscription[1]: fat_tree with "
                       "auto NPUs along ib and 8 inside: study.system.network[1].oversubscription: "
                       "each ratio (down:up ports) must be at least 1");
    test_expect_study_error(SHAPED_STUDY(IB_CLOS, "      ib: {radix: [64, 2]}\n"),
                       "bad.yaml:12:24: study.axes.network.ib.radix[1]: fat_tree with auto NPUs "
                       "along ib and 8 inside: study.system.network[1].radix: fat_tree needs a "
                       "switch radix of at least 4 ports");
    test_expect_study_error(SHAPED_STUDY(IB_CLOS, "      ib: {tiers: [2, 4]}\n"),
                       "bad.yaml:12:23: study.axes.network.ib.tiers[1]: expected an integer from 2 to 3, "
                       "got \"4\"");
    test_expect_study_error(SHAPED_STUDY(IB_CLOS, "      ib: {oversubscripton: [2]}\n"),
                       "bad.yaml:12:12: study.axes.network.ib.oversubscripton: unknown resource "
                       "(did you mean \"oversubscription\"?)");
    /* a torus's shape swept onto a Clos (tests/test_sweep_axes.c has the
     * shape axis) */
    test_expect_study_error(SHAPED_STUDY(IB_CLOS, "      ib: {shape: [[2, 4]]}\n"),
                       "bad.yaml:12:20: study.axes.network.ib.shape[0]: fat_tree 2x4 with auto "
                       "NPUs along ib and 8 inside: study.system.network[1].shape: applies to "
                       "torus and mesh only");
    /* a ratio on a switch, which has no uplinks to thin */
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: auto, bandwidth: 25 GB/s}\n",
                                    "      ib: {oversubscription: [1, 2]}\n"),
                       "bad.yaml:12:31: study.axes.network.ib.oversubscription[0]: switch with "
                       "auto NPUs along ib and 8 inside: study.system.network[1].oversubscription: "
                       "applies to fat_tree, rail and fred only");
    /* 16-port switches hold 64 NPUs x 8 inside in 3 tiers, not in 2: only
     * the combination of tiers 2 and radix 16 is refused */
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: 64, topology: fat_tree, radix: 64,\n"
                                    "         bandwidth: 25 GB/s}\n",
                                    "      ib: {tiers: [3, 2], radix: [16, 64]}\n"),
                       "bad.yaml:13:35: study.axes.network.ib.radix[0]: fat_tree with 64 NPUs "
                       "along ib and 8 inside: study.system.network[1].radix: 2 tiers of "
                       "16-port switches (leaves 8 down / 8 up) connect 16 leaves at most, this "
                       "dimension needs 64 (64 NPUs along it, 8 inside it): raise radix or tiers");
    /* two tiers leave the base system's second ratio without a tier */
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: auto, topology: fat_tree, tiers: 3,\n"
                                    "         radix: 64, oversubscription: [2, 1], "
                                    "bandwidth: 25 GB/s}\n",
                                    "      ib: {tiers: [3, 2]}\n"),
                       "bad.yaml:13:23: study.axes.network.ib.tiers[1]: fat_tree with auto NPUs "
                       "along ib and 8 inside: study.system.network[1].oversubscription: gives a "
                       "second ratio, which only 3 tiers have");
    /* the scale-up domain grows inside the Clos: 8-port switches hold 8 x 8
     * in 2 tiers (16 leaves of 4 > 8), so the largest inner size is tried */
    test_expect_study_error(SHAPED_STUDY("      - {name: ib, size: 8, topology: fat_tree, radix: 16,\n"
                                    "         bandwidth: 25 GB/s}\n",
                                    "      node: {size: [4, 8]}\n      ib: {radix: [16, 8]}\n"),
                       "bad.yaml:14:24: study.axes.network.ib.radix[1]: fat_tree with 8 NPUs "
                       "along ib and 8 inside: study.system.network[1].radix: 2 tiers of 8-port "
                       "switches (leaves 4 down / 4 up) connect 8 leaves at most, this dimension "
                       "needs 16 (8 NPUs along it, 8 inside it): raise radix or tiers");
#undef IB_CLOS

    /* a scale-up size swept inside a rail network builds and is priced at
     * each size: 64 NPUs as 4 x 16 (4 rails of ceil(16 / 8) leaves) or 8 x 8
     * (8 rails of 1), 16-port leaves of 8 down, ceil(8 x 8 / 16) = 4 spines,
     * 64 + 64 cables */
    const char text[] = SHAPED_STUDY("      - {name: ib, size: auto, topology: rail, radix: 16,\n"
                                     "         bandwidth: 25 GB/s}\n",
                                     "      node: {size: [4, 8]}\n");
    comet_study *st = malloc(sizeof *st);
    comet_error err;
    if (comet_study_read_text(text, strlen(text), "ok.yaml", st, &err))
        fail_msg("%s: %s", err.key, err.message);
    for (uint64_t i = 0; i < 2; i++) {
        comet_system sys;
        comet_study_point_system(st, i, &sys);
        assert_int_equal(sys.dims[0].size, 4 << i);
        comet_net_hardware hw;
        comet_net_hardware_of(&sys, 1, 64, &hw);
        assert_int_equal(hw.leaves, 8);
        assert_int_equal(hw.spines, 4);
        assert_int_equal(hw.links, 128);
        comet_sweep_row row;
        assert_int_equal(comet_sweep_point(st, i, &row, &err), COMET_OK);
        assert_int_equal(row.status, COMET_POINT_OK);
    }
    free(st);
}

/* A study sweeping a fat tree's oversubscription, radix and tiers: each
 * design point's dimension takes the values, the results name the axes as
 * columns, and the design cost counts the tree's switch ports and cables,
 * so the 3:1 tree is cheaper by what its missing spines and uplinks cost
 * (512 NPUs on 64-port switches, 2 tiers: 1:1 is 16 leaves of 32 down +
 * 512 x 32 / 64 = 8 spines, 1536 ports, 512 + 512 cables; 3:1 is
 * ceil(512 / 48) = 11 leaves of 48 down / 16 up + ceil(176 / 64) = 3
 * spines, 896 ports, 512 + 176 cables; at $500 a port and $100 a cable
 * 870,400 and 516,800). */
static void test_clos_axes(void **state)
{
    (void)state;
    const char text[] =
        "study:\n  name: clos\n  models: [gpt3-175b]\n  npus: 512\n  global_batch: 512\n"
        "  system:\n    preset: a100-80g-selene\n    network:\n"
        "      - {name: node, size: 8, bandwidth: 300 GB/s}\n"
        "      - {name: ib, size: auto, topology: fat_tree, radix: 64, bandwidth: 25 GB/s,\n"
        "         cost_per_switch_port: 500, cost_per_link: 100}\n"
        "  axes:\n    network:\n"
        "      ib: {oversubscription: [1, 3], radix: [64, 32], tiers: [2, 3]}\n"
        "  search: {max_microbatch: 1, offload: false, flash_attention: false}\n";
    comet_study *st = malloc(sizeof *st);
    comet_error err;
    if (comet_study_read_text(text, strlen(text), "clos.yaml", st, &err))
        fail_msg("%s: %s", err.key, err.message);
    assert_int_equal(st->n_axes, 3);
    assert_int_equal(comet_study_points(st), 8);
    assert_string_equal(st->axes[0].name, "network.ib.oversubscription");
    assert_int_equal(st->axes[0].kind, COMET_AXIS_DIM_OVERSUBSCRIPTION);
    assert_int_equal(st->axes[1].kind, COMET_AXIS_DIM_RADIX);
    assert_int_equal(st->axes[2].kind, COMET_AXIS_DIM_TIERS);
    comet_axis_kind kind;
    assert_true(comet_axis_kind_from_name("network.ib.oversubscription", &kind));
    assert_int_equal(kind, COMET_AXIS_DIM_OVERSUBSCRIPTION);
    assert_true(comet_axis_kind_from_name("network.ib.radix", &kind));
    assert_int_equal(kind, COMET_AXIS_DIM_RADIX);
    assert_true(comet_axis_kind_from_name("network.ib.tiers", &kind));
    assert_int_equal(kind, COMET_AXIS_DIM_TIERS);
    char v[32];
    assert_string_equal(comet_axis_format(&st->axes[0], 3.0, v, sizeof v), "3:1");
    assert_string_equal(comet_axis_format(&st->axes[0], 1.5, v, sizeof v), "1.5:1");
    assert_string_equal(comet_axis_format(&st->axes[1], 32.0, v, sizeof v), "32");
    assert_string_equal(comet_axis_short_name(&st->axes[0], v, sizeof v), "ib oversubscription");
    assert_string_equal(comet_axis_short_name(&st->axes[2], v, sizeof v), "ib tiers");
    /* point 5: oversubscription 3 (slot 1), radix 64 (slot 0), tiers 3 (slot 1) */
    comet_system sys;
    comet_study_point_system(st, 5, &sys);
    assert_close(sys.dims[1].shape.oversubscription[0], 3.0, 0.0);
    assert_close(sys.dims[1].shape.oversubscription[1], 0.0, 0.0);
    assert_int_equal(sys.dims[1].shape.radix, 64);
    assert_int_equal(sys.dims[1].shape.tiers, 3);
    /* points 0 and 4: 2 tiers of 64 ports at 1:1 and 3:1 */
    comet_sweep_row one, three;
    assert_int_equal(comet_sweep_point(st, 0, &one, &err), COMET_OK);
    assert_int_equal(comet_sweep_point(st, 4, &three, &err), COMET_OK);
    assert_int_equal(one.status, COMET_POINT_OK);
    assert_close(one.cost - three.cost, 870400.0 - 516800.0, 1e-6);
    comet_study_point_system(st, 4, &sys);
    comet_net_hardware hw;
    comet_net_hardware_of(&sys, 1, 512, &hw);
    assert_int_equal(hw.switch_ports, 896);
    assert_int_equal(hw.links, 688);
    assert_close(hw.cost, 516800.0, 0.0);
    /* the results name and hold the axes as the other axes */
    comet_buf b;
    comet_buf_init(&b);
    comet_sweep_csv_header(&b, st);
    assert_non_null(strstr(b.data, "index,status,design_cost_usd,network.ib.oversubscription,"
                                   "network.ib.radix,network.ib.tiers,npus,"));
    comet_sweep_csv_row(&b, st, &three);
    assert_non_null(strstr(b.data, "\n1,4,ok,"));
    assert_non_null(strstr(b.data, ",3,64,2,512,gpt3-175b,"));
    comet_sweep_jsonl_row(&b, st, &three);
    assert_non_null(strstr(b.data, "\"axes\": {\"network.ib.oversubscription\": 3, "
                                   "\"network.ib.radix\": 64, \"network.ib.tiers\": 2}"));
    comet_buf_free(&b);
    free(st);
}

/* 64 values of one unit: ["1 GiB", "2 GiB", ...]. */
static void sixty_four(char *out, size_t cap, const char *unit)
{
    snprintf(out, cap, "[");
    for (int v = 1; v <= 64; v++)
        snprintf(out + strlen(out), cap - strlen(out), "%s\"%d %s\"", v > 1 ? ", " : "", v, unit);
    snprintf(out + strlen(out), cap - strlen(out), "]");
}

/* Design points are counted from the axes' lengths, never wrapping: 8
 * models x 16 axes of 64 values is 2^99, which saturates; a study of more
 * than 2^40 points is refused where its axes are written. */
static void test_points_count_saturates(void **state)
{
    (void)state;
    comet_study *st = calloc(1, sizeof *st);
    comet_error err;
    assert_int_equal(comet_study_read_text(test_small_study, strlen(test_small_study), "s.yaml",
                                           st, &err),
                     COMET_OK);
    st->n_models = 8;
    st->n_axes = 8;
    for (int a = 0; a < COMET_STUDY_MAX_AXES; a++)
        st->axes[a].n = COMET_STUDY_MAX_VALUES;
    assert_true(comet_study_points(st) == (uint64_t)1 << 51);
    st->n_axes = 10; /* 2^63: still exact */
    assert_true(comet_study_points(st) == (uint64_t)1 << 63);
    st->n_axes = 11; /* 2^69 */
    assert_true(comet_study_points(st) == UINT64_MAX);
    st->n_axes = COMET_STUDY_MAX_AXES; /* 2^99, which wrapped to 0 before */
    assert_true(comet_study_points(st) == UINT64_MAX);
    free(st);

    char sizes[1200], rates[1200], times[1200], flops[1200];
    sixty_four(sizes, sizeof sizes, "GiB");
    sixty_four(rates, sizeof rates, "GB/s");
    sixty_four(times, sizeof times, "us");
    sixty_four(flops, sizeof flops, "TFLOPS");
    char *text = malloc(12000);
    snprintf(text, 12000,
             "study:\n  models: [gpt3-175b]\n  system: a100-80g-selene\n  npus: 64\n"
             "  global_batch: 64\n  axes:\n    hbm_capacity: %s\n    hbm_bandwidth: %s\n"
             "    peak_compute: %s\n    network:\n      nvlink: {bandwidth: %s, latency: %s}\n"
             "      infiniband: {bandwidth: %s, latency: %s}\n",
             sizes, rates, flops, rates, times, rates, times);
    test_expect_study_error(text, "bad.yaml: study.axes: 4398046511104 design points is too many "
                             "(at most 2^40)");
    free(text);
}

/* Two designs on one front: (1 s, $3) and (2 s, $1); (2 s, $4) is not. */
static void test_summary(void **state)
{
    (void)state;
    comet_study *st = calloc(1, sizeof *st);
    comet_error err;
    assert_int_equal(comet_study_read_text(test_small_study, strlen(test_small_study), "s.yaml", st, &err),
                     COMET_OK);
    comet_summary *sum = malloc(sizeof *sum);
    comet_summary_init(sum, st);
    double v[COMET_STUDY_MAX_AXES];
    v[0] = st->axes[0].values[0];
    v[1] = st->axes[1].values[0];
    v[2] = st->axes[2].values[0];
    comet_summary_add(sum, 0, 0, v, COMET_POINT_OK, 2.0, 1.0);
    v[1] = st->axes[1].values[1];
    comet_summary_add(sum, 0, 1, v, COMET_POINT_OK, 2.0, 4.0);
    v[0] = st->axes[0].values[1];
    comet_summary_add(sum, 0, 4, v, COMET_POINT_OK, 1.0, 3.0);
    comet_summary_add(sum, 0, 5, v, COMET_POINT_NO_FIT, 0.0, 3.0);
    comet_buf b;
    comet_buf_init(&b);
    comet_summary_pareto_csv(&b, sum);
    assert_string_equal(b.data, "schema_version,model,index,design_cost_usd,step_time_s\n"
                                "1,megatron-22b,0,1,2\n1,megatron-22b,4,3,1\n");
    comet_buf_free(&b);
    comet_buf_init(&b);
    comet_summary_text(&b, sum);
    /* HBM: geometric means 2 s (40 GiB: 2, 2) and 1 s (80 GiB): ratio 2 */
    assert_non_null(strstr(b.data, "megatron-22b: 4 design points, 3 with a strategy that fits, "
                                   "2 on the Pareto front"));
    assert_non_null(strstr(b.data, "hbm_capacity                           2.00x   fastest at "
                                   "80 GiB (1.000 s), slowest at 40 GiB (2.000 s)"));
    comet_buf_free(&b);
    free(sum);
    free(st);
}

/* What render writes of summaries a and b is the same text. */
static void expect_same_text(void (*render)(comet_buf *, const comet_summary *),
                             const comet_summary *a, const comet_summary *b)
{
    comet_buf x, y;
    comet_buf_init(&x);
    comet_buf_init(&y);
    render(&x, a);
    render(&y, b);
    assert_string_equal(x.data, y.data);
    comet_buf_free(&x);
    comet_buf_free(&y);
}

/* Two summaries of one study agree: the same counts, the same front
 * (indices exact; times and costs to the ten digits a results file
 * keeps), the same sums per axis value, and the same pareto.csv and
 * summary text. */
static void expect_same_summary(const comet_summary *a, const comet_summary *b)
{
    const comet_study *st = a->study;
    for (int m = 0; m < st->n_models; m++) {
        assert_int_equal(a->points[m], b->points[m]);
        assert_int_equal(a->feasible[m], b->feasible[m]);
        assert_int_equal(a->n_front[m], b->n_front[m]);
        for (int i = 0; i < a->n_front[m]; i++) {
            assert_int_equal(a->front[m][i].index, b->front[m][i].index);
            assert_close(b->front[m][i].step_time, a->front[m][i].step_time, 1e-9);
            assert_close(b->front[m][i].cost, a->front[m][i].cost, 1e-9);
        }
        for (int x = 0; x < st->n_axes; x++)
            for (int v = 0; v < st->axes[x].n; v++) {
                assert_int_equal(a->count[m][x][v], b->count[m][x][v]);
                assert_close(b->log_sum[m][x][v], a->log_sum[m][x][v], 1e-8);
            }
    }
    expect_same_text(comet_summary_pareto_csv, a, b);
    expect_same_text(comet_summary_text, a, b);
}

/* The summary of saved results is the one the runner's rows give: the
 * small study's six points, each searched, added to a summary as they
 * come and written as results.csv; that text read back and summarized
 * with the study gives the same summary (design values by index), and on
 * the reader's study shell (no study) the same counts, front and axis
 * effects. */
static void test_summary_from_results(void **state)
{
    (void)state;
    comet_study *st = calloc(1, sizeof *st);
    comet_summary *rows = malloc(sizeof *rows), *exact = malloc(sizeof *exact),
                  *shell = malloc(sizeof *shell);
    comet_results *res = calloc(1, sizeof *res);
    assert_true(st && rows && exact && shell && res);
    comet_error err;
    assert_int_equal(comet_study_read_text(test_small_study, strlen(test_small_study), "s.yaml",
                                           st, &err),
                     COMET_OK);
    comet_summary_init(rows, st);
    comet_buf csv;
    comet_buf_init(&csv);
    comet_sweep_csv_header(&csv, st);
    for (uint64_t i = 0; i < comet_study_points(st); i++) {
        comet_sweep_row row;
        assert_int_equal(comet_sweep_point(st, i, &row, &err), COMET_OK);
        comet_summary_add(rows, row.model, row.index, row.values, row.status,
                          row.best.result.step_time, row.cost);
        comet_sweep_csv_row(&csv, st, &row);
    }
    assert_int_equal(comet_results_parse(csv.data, csv.len, "results.csv", res, &err), COMET_OK);
    assert_int_equal(res->n_rows, 6);
    assert_int_equal(rows->points[0], 6);
    assert_int_equal(rows->feasible[0], 6);
    /* 80 GiB: ZeRO 2 under megatron hides its gradient reduction and its
     * weight gather behind compute at every bandwidth, so the cheapest
     * link is as fast as the others and alone on the front */
    assert_int_equal(rows->n_front[0], 1);
    assert_int_equal(rows->front[0][0].index, 3);

    comet_summary_from_results(exact, res, st);
    assert_ptr_equal(exact->study, st);
    expect_same_summary(rows, exact);

    comet_summary_from_results(shell, res, NULL);
    assert_ptr_equal(shell->study, &res->study);
    assert_int_equal(shell->points[0], rows->points[0]);
    assert_int_equal(shell->feasible[0], rows->feasible[0]);
    assert_int_equal(shell->n_front[0], rows->n_front[0]);
    expect_same_text(comet_summary_pareto_csv, rows, shell);
    for (int x = 0; x < st->n_axes; x++) {
        int slow, fast, slow2, fast2;
        double e = comet_summary_axis_effect(rows, 0, x, &slow, &fast);
        assert_close(comet_summary_axis_effect(shell, 0, x, &slow2, &fast2), e, 1e-8);
        if (slow >= 0 && slow != fast) {
            assert_close(res->study.axes[x].values[slow2], st->axes[x].values[slow], 1e-9);
            assert_close(res->study.axes[x].values[fast2], st->axes[x].values[fast], 1e-9);
        }
    }
    comet_buf_free(&csv);
    comet_results_free(res);
    free(res);
    free(shell);
    free(exact);
    free(rows);
    free(st);
}

/* ---- the sweep command ------------------------------------------------------ */

static char dir[256];

static int run_cmd(const char *fmt, const char *arg)
{
    char cmd[2048], bin[1024];
    const char *b = getenv("COMET_BIN");
    snprintf(bin, sizeof bin, "%s", b ? b : "build/comet");
    snprintf(cmd, sizeof cmd, fmt, bin, arg);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static void expect_same_file(const char *a_dir, const char *b_dir, const char *name)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/%s", a_dir, name);
    snprintf(b, sizeof b, "%s/%s", b_dir, name);
    char *x = slurp(a), *y = slurp(b);
    size_t at = 0;
    while (x && y && x[at] && x[at] == y[at])
        at++;
    bool same = x && y && x[at] == y[at];
    char got[64] = "", want[64] = "";
    if (!same && x && y) {
        snprintf(want, sizeof want, "%.60s", x + at);
        snprintf(got, sizeof got, "%.60s", y + at);
    }
    free(x);
    free(y);
    if (!same)
        fail_msg("%s differs between %s and %s at byte %zu: \"%s\" against \"%s\"", name, b_dir,
                 a_dir, at, got, want);
}

static int sweep_setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/comet-sweep-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char path[512];
    snprintf(path, sizeof path, "%s/small.yaml", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(test_small_study, f);
    fclose(f);
    return 0;
}

static int sweep_teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_sweep_threads_and_resume(void **state)
{
    (void)state;
    char args[1024];
    /* uninterrupted, 1 thread */
    snprintf(args, sizeof args, "%s/small.yaml -o %s/one -j 1 --quiet >/dev/null", dir, dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    /* 2 threads: the same bytes */
    snprintf(args, sizeof args, "%s/small.yaml -o %s/two -j 2 --quiet >/dev/null", dir, dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    char one[300], two[300], crash[300];
    snprintf(one, sizeof one, "%s/one", dir);
    snprintf(two, sizeof two, "%s/two", dir);
    snprintf(crash, sizeof crash, "%s/crash", dir);
    expect_same_file(one, two, "results.csv");
    expect_same_file(one, two, "results.jsonl");
    expect_same_file(one, two, "pareto.csv");
    expect_same_file(one, two, "summary.txt");
    /* killed mid-write after 2 rows, leaving torn lines: exit by SIGKILL */
    snprintf(args, sizeof args, "%s/small.yaml -o %s/crash -j 2 --quiet >/dev/null 2>&1", dir, dir);
    assert_int_not_equal(run_cmd("COMET_SWEEP_CRASH_AFTER=2 %s sweep %s", args), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/results.jsonl", crash);
    char *torn = slurp(path);
    assert_non_null(torn);
    assert_non_null(strstr(torn, "{\"index\": 999999, \"sta"));
    free(torn);
    /* a fresh run refuses to overwrite it */
    snprintf(args, sizeof args, "%s/small.yaml -o %s/crash --quiet >/dev/null 2>&1", dir, dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 2);
    /* --resume drops the torn lines and finishes: identical to the uninterrupted run */
    snprintf(args, sizeof args, "%s/small.yaml -o %s/crash -j 2 --resume --quiet >/dev/null", dir,
             dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    expect_same_file(one, crash, "results.csv");
    expect_same_file(one, crash, "results.jsonl");
    expect_same_file(one, crash, "summary.txt");
    /* resuming a finished sweep changes nothing */
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    expect_same_file(one, crash, "results.csv");
    /* a file an older comet began, without the version column (and its
     * columns named without units: cost, mfu, the axes; before that also
     * design_cost, step_time_low, step_time_high), resumes too: it keeps
     * its header and gets the rows of the uninterrupted run, less their
     * version */
    comet_study study;
    comet_error err;
    assert_int_equal(comet_study_read_text(test_small_study, strlen(test_small_study), "s.yaml",
                                           &study, &err),
                     COMET_OK);
    snprintf(path, sizeof path, "%s/results.csv", one);
    char *whole = slurp(path);
    assert_non_null(whole);
    assert_true(strncmp(whole, "schema_version,index,status,design_cost_usd,hbm_capacity_bytes,"
                               "network.infiniband.bandwidth_bytes_per_s,"
                               "network.infiniband.topology,npus,model,", 121) == 0);
    assert_non_null(strstr(whole, ",mfu_fraction,hfu_fraction,"));
    assert_non_null(strstr(whole, ",cost_usd,cost_usd_per_mtoken_s,"));
    assert_true(strncmp(strchr(whole, '\n'), "\n1,0,ok,", 8) == 0);
    char *began = NULL, *resumed = NULL;
    for (int which = 0; which < 2; which++) {
        snprintf(args, sizeof args, "%s/small.yaml -o %s/older%d -j 2 --quiet >/dev/null 2>&1",
                 dir, dir, which);
        assert_int_not_equal(run_cmd("COMET_SWEEP_CRASH_AFTER=2 %s sweep %s", args), 0);
        snprintf(path, sizeof path, "%s/older%d/results.csv", dir, which);
        began = slurp(path);
        assert_non_null(began);
        comet_buf older, rows, want;
        comet_buf_init(&older);
        comet_buf_init(&rows);
        comet_buf_init(&want);
        assert_true(comet_sweep_rows_format.csv_header_older(&older, &study, which));
        /* the rows, and the whole run's, without their first field */
        for (const char *line = strchr(began, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
            if (strchr(line + 1, '\n'))
                comet_buf_append(&rows, strchr(line, ',') + 1,
                                 (size_t)(strchr(line + 1, '\n') - strchr(line, ',')));
        for (const char *line = strchr(whole, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
            comet_buf_append(&want, strchr(line, ',') + 1,
                             (size_t)(strchr(line + 1, '\n') - strchr(line, ',')));
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fprintf(f, "%s%s", older.data, rows.data ? rows.data : "");
        fclose(f);
        snprintf(args, sizeof args,
                 "%s/small.yaml -o %s/older%d -j 2 --resume --quiet >/dev/null", dir, dir,
                 which);
        assert_int_equal(run_cmd("%s sweep %s", args), 0);
        resumed = slurp(path);
        assert_non_null(resumed);
        assert_true(strncmp(resumed, older.data, older.len) == 0);
        assert_string_equal(resumed + older.len, want.data);
        assert_true(strncmp(resumed, which ? "index,status,design_cost,hbm_capacity,"
                                           : "index,status,design_cost_usd,hbm_capacity,",
                            which ? 38 : 42) == 0);
        assert_non_null(strstr(resumed, which ? ",step_time_low,step_time_high\n"
                                              : ",step_time_low_s,step_time_high_s\n"));
        assert_non_null(strstr(resumed, ",mfu,hfu,"));
        comet_buf_free(&older);
        comet_buf_free(&rows);
        comet_buf_free(&want);
        free(began);
        free(resumed);
    }
    comet_buf b;
    comet_buf_init(&b);
    assert_false(comet_sweep_rows_format.csv_header_older(&b, &study, 2));
    comet_buf_free(&b);
    free(whole);
}

/* ---- the library's runner, driven directly (no CLI) ---------------------------- */

typedef struct run_watch {
    uint64_t began_at, began_total, last_done;
    _Atomic uint64_t rows;     /* written by the writer, read by workers through stop */
    uint64_t stop_after;       /* ask to stop once this many rows are written (0: never) */
    bool ordered;              /* every row_written's done was the one before plus one */
} run_watch;

static bool watch_stop(void *ctx)
{
    const run_watch *w = ctx;
    return w->stop_after && w->rows >= w->stop_after;
}

static void watch_begin(void *ctx, uint64_t start, uint64_t total)
{
    run_watch *w = ctx;
    w->began_at = start;
    w->began_total = total;
    w->last_done = start;
    w->ordered = true;
}

static void watch_row(void *ctx, uint64_t done, uint64_t total, uint64_t start)
{
    run_watch *w = ctx;
    w->ordered = w->ordered && done == w->last_done + 1 && total == w->began_total &&
                 start == w->began_at;
    w->last_done = done;
    w->rows++;
}

/* The small study, read (a study is too big for the stack). */
static comet_study *small_study(void)
{
    comet_study *st = malloc(sizeof *st);
    assert_non_null(st);
    comet_error err;
    assert_int_equal(comet_study_read_text(test_small_study, strlen(test_small_study), "s.yaml",
                                           st, &err),
                     COMET_OK);
    return st;
}

static comet_status run_banded(const comet_study *st, const char *sub, int threads,
                               bool resume, run_watch *w, const comet_band_model *bands,
                               comet_error *err)
{
    char out[512];
    snprintf(out, sizeof out, "%s/%s", dir, sub);
    comet_sweep_options opt = {
        .dir = out,
        .format = &comet_sweep_rows_format,
        .threads = threads,
        .resume = resume,
        .hooks = {.ctx = w, .stop = watch_stop, .rows_begin = watch_begin,
                  .row_written = watch_row},
        .bands = bands,
    };
    int lock = -1;
    comet_status status = comet_sweep_run(st, &opt, &lock, err);
    assert_true(lock >= 0); /* held for the caller until it is done */
    comet_dir_unlock(lock);
    return status;
}

static comet_status run_library(const comet_study *st, const char *sub, int threads,
                                bool resume, run_watch *w, comet_error *err)
{
    return run_banded(st, sub, threads, resume, w, NULL, err);
}

/* comet_sweep_run without the CLI: 2 threads write the bytes 1 thread
 * writes, rows reach the hooks in point order; a stop asked through the
 * hook ends it COMET_ECANCELED with whole rows only, and resume finishes
 * with the same bytes. */
static void test_sweep_run_library(void **state)
{
    (void)state;
    comet_error err;
    comet_study *st = small_study();
    run_watch one = {0}, two = {0};
    assert_int_equal(run_library(st, "lib1", 1, false, &one, &err), COMET_OK);
    assert_int_equal(run_library(st, "lib2", 2, false, &two, &err), COMET_OK);
    for (const run_watch *w = &one; w; w = w == &one ? &two : NULL) {
        assert_int_equal(w->began_at, 0);
        assert_int_equal(w->began_total, 6);
        assert_int_equal(w->rows, 6);
        assert_true(w->ordered);
    }
    char lib1[300], lib2[300], path[512];
    snprintf(lib1, sizeof lib1, "%s/lib1", dir);
    snprintf(lib2, sizeof lib2, "%s/lib2", dir);
    expect_same_file(lib1, lib2, "results.csv");
    expect_same_file(lib1, lib2, "results.jsonl");
    snprintf(path, sizeof path, "%s/results.csv", lib1);
    char *csv = slurp(path);
    assert_non_null(csv);
    int lines = 0;
    for (const char *c = csv; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 7); /* the header and 6 rows */
    assert_non_null(strstr(csv, "\n1,5,"));
    free(csv);

    /* a rerun without resume or force refuses the results there */
    run_watch again = {0};
    assert_int_equal(run_library(st, "lib1", 2, false, &again, &err), COMET_EINPUT);
    assert_non_null(strstr(err.message, "already holds sweep results"));
    assert_int_equal(again.rows, 0);

    /* no thread to compute a row: refused before DIR is touched (the
     * writer once waited for a row no one would compute) */
    comet_sweep_options none = {.dir = "unused", .format = &comet_sweep_rows_format};
    int lock = 0;
    assert_int_equal(comet_sweep_run(st, &none, &lock, &err), COMET_EINPUT);
    assert_int_equal(lock, -1);
    assert_non_null(strstr(err.message, "at least one thread"));

    /* stopped after 2 rows: whole rows only, then resumed to the same bytes */
    run_watch stopped = {.stop_after = 2};
    assert_int_equal(run_library(st, "stop", 2, false, &stopped, &err), COMET_ECANCELED);
    /* workers poll the stop before claiming a point, the writer counts
     * rows: on a fast run both threads may have claimed every point
     * before the writer's second row, and those points are still written */
    assert_true(stopped.rows >= 2 && stopped.rows <= 6);
    run_watch rest = {0};
    assert_int_equal(run_library(st, "stop", 2, true, &rest, &err), COMET_OK);
    assert_int_equal(rest.began_at, stopped.rows);
    assert_int_equal(rest.rows, 6 - stopped.rows);
    assert_true(rest.ordered);
    char stop[300];
    snprintf(stop, sizeof stop, "%s/stop", dir);
    expect_same_file(lib1, stop, "results.csv");
    expect_same_file(lib1, stop, "results.jsonl");
    free(st);
}

/* With a band model every ok row carries its best's band: the CSV's last
 * two columns hold it (low < step time < high; empty without a model) and
 * the JSON line's best has "step_time_band"; the bytes are the same at 1
 * and 2 threads. */
static void test_sweep_bands(void **state)
{
    (void)state;
    comet_error err;
    comet_study *st = small_study();
    comet_validation_table *t;
    comet_validation_report r;
    assert_int_equal(comet_validation_preset("korthikanti2022", &t, &err), COMET_OK);
    assert_int_equal(comet_validate(t, &r, &err), COMET_OK);
    const comet_validation_table *tables[1] = {t};
    const comet_validation_report *reports[1] = {&r};
    comet_band_model *bm;
    assert_int_equal(comet_band_model_new(tables, reports, 1, &bm, &err), COMET_OK);
    run_watch one = {0}, two = {0};
    assert_int_equal(run_banded(st, "band1", 1, false, &one, bm, &err), COMET_OK);
    assert_int_equal(run_banded(st, "band2", 2, false, &two, bm, &err), COMET_OK);
    char b1[300], b2[300], path[512];
    snprintf(b1, sizeof b1, "%s/band1", dir);
    snprintf(b2, sizeof b2, "%s/band2", dir);
    expect_same_file(b1, b2, "results.csv");
    expect_same_file(b1, b2, "results.jsonl");

    comet_results *res = malloc(sizeof *res); /* holds a study: too big for the stack */
    assert_non_null(res);
    snprintf(path, sizeof path, "%s/results.csv", b1);
    assert_int_equal(comet_results_read(path, res, &err), COMET_OK);
    char *csv = slurp(path);
    assert_non_null(csv);
    assert_non_null(strstr(csv, ",step_time_low_s,step_time_high_s\n"));
    int banded = 0;
    size_t k = 0; /* the reader's rows, in the file's order */
    for (char *line = strchr(csv, '\n') + 1; *line; line = strchr(line, '\n') + 1, k++) {
        char *end = strchr(line, '\n');
        *end = '\0';
        char *hi = strrchr(line, ','), *lo;
        *hi = '\0';
        lo = strrchr(line, ',');
        line = strchr(line, ',') + 1; /* past the version */
        bool ok = strncmp(strchr(line, ',') + 1, "ok,", 3) == 0;
        assert_true(k < res->n_rows);
        assert_int_equal(res->rows[k].index, strtoull(line, NULL, 10));
        if (ok) {
            double low = strtod(lo + 1, NULL), high = strtod(hi + 1, NULL);
            double step = res->rows[k].result.step_time;
            assert_true(low > 0.0 && low < step && step < high);
            /* the reader keeps it */
            assert_true(res->rows[k].band_low == low && res->rows[k].band_high == high);
            banded++;
        } else {
            assert_string_equal(lo, ","); /* both empty */
        }
        *hi = ',';
        *end = '\n';
    }
    assert_true(banded > 0);
    free(csv);
    /* the JSON lines give the same bands back; the report draws them (the
     * top designs' two band columns, the breakdown's whiskers) */
    comet_results *again = malloc(sizeof *again);
    assert_non_null(again);
    snprintf(path, sizeof path, "%s/results.jsonl", b1);
    assert_int_equal(comet_results_read(path, again, &err), COMET_OK);
    assert_int_equal(again->n_rows, res->n_rows);
    for (size_t i = 0; i < res->n_rows; i++)
        assert_true(again->rows[i].band_low == res->rows[i].band_low &&
                    again->rows[i].band_high == res->rows[i].band_high);
    comet_page *page = comet_page_new("bands");
    comet_report_page_sweep(page, again, NULL);
    comet_buf html;
    comet_buf_init(&html);
    comet_page_html(&html, page);
    assert_non_null(strstr(html.data, "band low"));
    comet_buf_free(&html);
    comet_page_free(page);
    comet_results_free(again);
    free(again);
    comet_results_free(res);
    free(res);
    snprintf(path, sizeof path, "%s/results.jsonl", b1);
    char *jsonl = slurp(path);
    assert_non_null(jsonl);
    assert_non_null(strstr(jsonl, "\"step_time_band\": {\"low\": "));
    free(jsonl);

    /* without a model: the columns are there, empty */
    run_watch plain = {0};
    assert_int_equal(run_library(st, "band0", 1, false, &plain, &err), COMET_OK);
    snprintf(path, sizeof path, "%s/band0/results.csv", dir);
    csv = slurp(path);
    assert_non_null(csv);
    assert_non_null(strstr(csv, ",,\n"));
    assert_null(strstr(csv, "step_time_band"));
    free(csv);
    comet_band_model_free(bm);
    comet_validation_report_free(&r);
    comet_validation_free(t);
    free(st);
}

/* SIGTERM mid-sweep: exit 130, whole lines only, CSV and JSONL agreeing;
 * --resume then finishes with the bytes of an uninterrupted run. */
static void test_sweep_sigterm(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/mid.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("study:\n  name: mid\n  models: [megatron-22b]\n  system: a100-80g-selene\n"
          "  npus: 64\n  global_batch: 512\n  axes:\n"
          "    hbm_capacity: [\"40 GiB\", \"48 GiB\", \"64 GiB\", \"80 GiB\"]\n"
          "    hbm_bandwidth: [\"1.5 TB/s\", \"2 TB/s\", \"2.5 TB/s\", \"3 TB/s\"]\n"
          "    network:\n      infiniband:\n"
          "        bandwidth: [\"12.5 GB/s\", \"25 GB/s\", \"50 GB/s\", \"100 GB/s\"]\n"
          "      nvlink:\n        bandwidth: [\"150 GB/s\", \"300 GB/s\", \"600 GB/s\"]\n"
          "  search: {max_microbatch: 8, offload: false}\n",
          f);
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "%s/mid.yaml -o %s/full -j 2 --quiet >/dev/null", dir, dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    snprintf(args, sizeof args, "%s/mid.yaml -o %s/cut -j 1 --quiet >/dev/null 2>&1", dir, dir);
    assert_int_equal(run_cmd("timeout --preserve-status -s TERM 0.5 %s sweep %s", args), 130);
    char csv_path[512], jsonl_path[512];
    snprintf(csv_path, sizeof csv_path, "%s/cut/results.csv", dir);
    snprintf(jsonl_path, sizeof jsonl_path, "%s/cut/results.jsonl", dir);
    char *csv = slurp(csv_path), *jsonl = slurp(jsonl_path);
    assert_non_null(csv);
    assert_non_null(jsonl);
    size_t nc = strlen(csv), nj = strlen(jsonl);
    assert_true(nc > 0 && csv[nc - 1] == '\n');
    assert_true(nj == 0 || jsonl[nj - 1] == '\n');
    int csv_lines = 0, jsonl_lines = 0;
    for (size_t i = 0; i < nc; i++)
        csv_lines += csv[i] == '\n';
    for (size_t i = 0; i < nj; i++)
        jsonl_lines += jsonl[i] == '\n';
    assert_int_equal(csv_lines - 1, jsonl_lines);
    assert_true(jsonl_lines < 192);
    free(csv);
    free(jsonl);
    snprintf(args, sizeof args, "%s/mid.yaml -o %s/cut -j 2 --resume --quiet >/dev/null", dir, dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    char full[300], cut[300];
    snprintf(full, sizeof full, "%s/full", dir);
    snprintf(cut, sizeof cut, "%s/cut", dir);
    expect_same_file(full, cut, "results.csv");
    expect_same_file(full, cut, "results.jsonl");
    expect_same_file(full, cut, "summary.txt");
    /* a stop before the first row leaves the header alone: --resume
     * writes it once (it had written it twice) */
    csv = slurp(csv_path);
    assert_non_null(csv);
    char *eol = strchr(csv, '\n');
    assert_non_null(eol);
    f = fopen(csv_path, "w");
    assert_non_null(f);
    fwrite(csv, 1, (size_t)(eol - csv + 1), f);
    fclose(f);
    free(csv);
    f = fopen(jsonl_path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(args, sizeof args, "%s/mid.yaml -o %s/cut -j 2 --resume --quiet >/dev/null", dir, dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    expect_same_file(full, cut, "results.csv");
    expect_same_file(full, cut, "results.jsonl");
}

/* While one run holds an output directory (here the test, as a running
 * sweep would: an flock on DIR/.comet-lock holding its pid), a sweep or a
 * study into it fails at once with exit 2, one line naming the directory
 * and the process, and writes no row; once the holder is gone the lock
 * file it leaves is no obstacle. */
static void test_sweep_lock(void **state)
{
    (void)state;
    char out[300], lock[400], args[1024], errpath[400], csv[400];
    snprintf(out, sizeof out, "%s/busy", dir);
    snprintf(lock, sizeof lock, "%s/.comet-lock", out);
    snprintf(errpath, sizeof errpath, "%s/err.txt", dir);
    snprintf(csv, sizeof csv, "%s/results.csv", out);
    assert_int_equal(mkdir(out, 0777), 0);
    int fd = open(lock, O_RDWR | O_CREAT, 0666);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    char pid[32], want[800];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    assert_int_equal(write(fd, pid, (size_t)n), n);
    static const char *const commands[] = {"sweep", "study"};
    for (int c = 0; c < 2; c++) {
        char fmt[100];
        snprintf(fmt, sizeof fmt, "%%s %s %%s", commands[c]);
        snprintf(args, sizeof args, "%s/small.yaml -o %s -j 1 --quiet >/dev/null 2>%s", dir, out,
                 errpath);
        assert_int_equal(run_cmd(fmt, args), 2);
        char *err = slurp(errpath);
        assert_non_null(err);
        snprintf(want, sizeof want,
                 "comet %s: %s: is in use by comet process %ld (locked through .comet-lock); "
                 "wait for it to finish or choose another output directory\n",
                 commands[c], out, (long)getpid());
        assert_string_equal(err, want);
        free(err);
        assert_int_equal(access(csv, F_OK), -1);
    }
    close(fd); /* the holder ends; its lock file stays */
    snprintf(args, sizeof args, "%s/small.yaml -o %s -j 1 --quiet >/dev/null", dir, out);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    assert_int_equal(access(csv, F_OK), 0);
    /* the run wrote its own pid into the lock file */
    char *holder = slurp(lock);
    assert_non_null(holder);
    assert_true(atol(holder) > 0);
    assert_true(atol(holder) != (long)getpid());
    free(holder);
}

/* The same sweep split over 2 and 3 MPI ranks (oversubscribed on this
 * machine) writes the same bytes as one process. */
static void test_sweep_mpi(void **state)
{
    (void)state;
    char args[1024];
    if (run_cmd("%s version %s", "| grep -q 'built with MPI'") != 0 ||
        system("command -v mpirun >/dev/null 2>&1") != 0)
        TEST_SKIP("comet was built without MPI or mpirun is missing: the MPI sweep test needs "
                  "both (scripts/install-deps.sh installs OpenMPI)");
    snprintf(args, sizeof args, "%s/small.yaml -o %s/one -j 1 --quiet >/dev/null", dir, dir);
    assert_int_equal(run_cmd("%s sweep %s", args), 0);
    char one[300], many[300];
    snprintf(one, sizeof one, "%s/one", dir);
    for (int ranks = 2; ranks <= 3; ranks++) {
        snprintf(many, sizeof many, "%s/mpi%d", dir, ranks);
        char cmd[1400];
        snprintf(cmd, sizeof cmd,
                 "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                 "ASAN_OPTIONS=detect_leaks=0 mpirun --oversubscribe -n %d %%s sweep %s/small.yaml "
                 "-o %s -j 1 --quiet >/dev/null 2>&1",
                 ranks, dir, many);
        assert_int_equal(run_cmd(cmd, ""), 0);
        expect_same_file(one, many, "results.csv");
        expect_same_file(one, many, "results.jsonl");
        expect_same_file(one, many, "pareto.csv");
        expect_same_file(one, many, "summary.txt");
    }
}

void suite_sweep(test_tally *t)
{
    const struct CMUnitTest sweep[] = {
        cmocka_unit_test(test_points_decode),
        cmocka_unit_test(test_points_count_saturates),
        cmocka_unit_test(test_bad_studies),
        cmocka_unit_test(test_bad_shaped_axes),
        cmocka_unit_test(test_bad_clos_axes),
        cmocka_unit_test(test_clos_axes),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_summary_from_results),
        cmocka_unit_test_setup_teardown(test_sweep_threads_and_resume, sweep_setup,
                                        sweep_teardown),
        cmocka_unit_test_setup_teardown(test_sweep_bands, sweep_setup, sweep_teardown),
        cmocka_unit_test_setup_teardown(test_sweep_run_library, sweep_setup, sweep_teardown),
        cmocka_unit_test_setup_teardown(test_sweep_sigterm, sweep_setup, sweep_teardown),
        cmocka_unit_test_setup_teardown(test_sweep_lock, sweep_setup, sweep_teardown),
        cmocka_unit_test_setup_teardown(test_sweep_mpi, sweep_setup, sweep_teardown),
    };
    RUN_GROUP(t, sweep);
}
