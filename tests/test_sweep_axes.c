/* The network axes a study sweeps beyond bandwidth and size: a torus's
 * shape, a Clos's routing and the aggregation tier's oversubscription.
 * Each reads with file:line:col errors naming the axis value, is held to
 * the shape check in every combination, applies to its design point, is
 * priced switch by switch and cable by cable (counts checked by closed
 * form), moves the estimate as the closed forms say (or, for routing,
 * provably not at all), and survives the results files' round trip. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/methodology.h"
#include "comet/network.h"
#include "comet/report.h"
#include "comet/results.h"
#include "comet/study.h"
#include "comet/sweep.h"
#include "tests.h"

#define GIB 1073741824.0

static comet_study *read_study(const char *text)
{
    comet_study *st = malloc(sizeof *st);
    assert_non_null(st);
    comet_error err;
    if (comet_study_read_text(text, strlen(text), "ok.yaml", st, &err))
        fail_msg("%s: %s", err.key, err.message);
    return st;
}

/* A sweep's rows as results.csv and results.jsonl write them. */
static void write_results(const comet_study *st, const comet_sweep_row *rows, int n,
                          comet_buf *csv, comet_buf *jsonl)
{
    comet_buf_init(csv);
    comet_buf_init(jsonl);
    comet_sweep_csv_header(csv, st);
    for (int i = 0; i < n; i++) {
        comet_sweep_csv_row(csv, st, &rows[i]);
        comet_sweep_jsonl_row(jsonl, st, &rows[i]);
    }
}

/* A results file read back: n rows, none skipped. */
static comet_results *read_results(const comet_buf *file, const char *name, size_t n)
{
    comet_results *res = calloc(1, sizeof *res);
    assert_non_null(res);
    comet_error err;
    assert_int_equal(comet_results_parse(file->data, file->len, name, res, &err), COMET_OK);
    assert_int_equal(res->n_rows, n);
    assert_int_equal(res->skipped, 0);
    return res;
}

/* A one-dimension system of the a100 preset: `dim` is its network. */
#define ONE_DIM_STUDY(npus, dim, axes)                                                     \
    "study:\n  models: [dlrm]\n  npus: " npus "\n  global_batch: 65536\n"                   \
    "  system:\n    preset: a100-80g-selene\n    network:\n" dim                             \
    "  axes:\n    network:\n" axes

#define TORUS16 "      - {name: grid, size: 16, topology: torus, bandwidth: 100 GB/s,\n" \
                "         cost_per_link: 100}\n"

/* A 16-NPU torus swept over [16], [4, 4] and [2, 8]. Its direct all-to-all
 * (topo_torus.c, grid_scatter) loads the busiest link m Q(k)/k x per axis of
 * k (m axes, Q(k) = floor(k^2/4)): one ring of 16, 1 x 64/16 = 4 x; 4 x 4,
 * 2 x 4/4 = 2 x (the bisection twice a ring's); 2 x 8, the 8-axis 2 x 16/8 =
 * 4 x again. Its ring all-reduce telescopes to 15/16 x on every shape. So
 * DLRM (an all-to-all per step) runs faster on 4 x 4 and the same on 2 x 8
 * as on the ring. Cables at $100: a ring of 16 is 16; 4 x 4 is 2 axes of 4
 * lines of 4 = 32; 2 x 8 is 8 pairs (an axis of 2 is one link) + 2 lines of
 * 8 = 24. */
static void test_torus_shape_axis(void **state)
{
    (void)state;
    comet_study *st = read_study(
        ONE_DIM_STUDY("16", TORUS16, "      grid: {shape: [[16], [4, 4], [2, 8]]}\n"));
    assert_int_equal(st->n_axes, 1);
    const comet_axis *ax = &st->axes[0];
    assert_string_equal(ax->name, "network.grid.shape");
    assert_int_equal(ax->kind, COMET_AXIS_DIM_SHAPE);
    assert_int_equal(comet_study_points(st), 3);
    char v[48];
    assert_string_equal(comet_axis_format(ax, ax->values[0], v, sizeof v), "16");
    assert_string_equal(comet_axis_format(ax, ax->values[1], v, sizeof v), "4x4");
    assert_string_equal(comet_axis_format(ax, ax->values[2], v, sizeof v), "2x8");
    assert_string_equal(comet_axis_short_name(ax, v, sizeof v), "grid shape");
    comet_axis_kind kind;
    assert_true(comet_axis_kind_from_name("network.grid.shape", &kind));
    assert_int_equal(kind, COMET_AXIS_DIM_SHAPE);
    /* 4 + 4 x 2^17: the axes, exact in a double */
    assert_close(ax->values[1], 4.0 + 4.0 * 131072.0, 0.0);

    const int64_t want_axes[3][2] = {{16, 0}, {4, 4}, {2, 8}};
    const int want_n[3] = {1, 2, 2};
    const double want_load[3] = {4.0, 2.0, 4.0};
    /* a ring of 16 and a 4 x 4 torus: 2 x 15/16; on 2 x 8 the axis of 8
     * carries one part's 7/8 and the other's 7/16 (what it holds after
     * the axis of 2): 2 x 21/16, the flows' time exactly */
    const double want_all_reduce[3] = {2.0 * 15.0 / 16.0, 2.0 * 15.0 / 16.0, 2.0 * 21.0 / 16.0};
    const int64_t want_links[3] = {16, 32, 24};
    comet_sweep_row rows[3];
    comet_error err;
    for (int i = 0; i < 3; i++) {
        comet_system sys;
        comet_study_point_system(st, (uint64_t)i, &sys);
        assert_int_equal(sys.dims[0].topology, COMET_TOPO_TORUS);
        assert_int_equal(sys.dims[0].shape.n_axes, want_n[i]);
        for (int a = 0; a < want_n[i]; a++)
            assert_int_equal(sys.dims[0].shape.axes[a], want_axes[i][a]);
        int64_t span[COMET_MAX_DIMS] = {16, 1, 1, 1, 1, 1, 1, 1};
        assert_close(comet_collective_time(&sys, span, COMET_COLL_ALL_TO_ALL, GIB),
                     want_load[i] * GIB / 100e9, 1e-12);
        comet_system one_chunk = sys; /* the preset's 4 chunks pipeline the 2 x 8's parts */
        one_chunk.collective_chunks = 1;
        assert_close(comet_collective_time(&one_chunk, span, COMET_COLL_ALL_REDUCE, GIB),
                     want_all_reduce[i] * GIB / 100e9, 1e-12);
        comet_net_hardware hw;
        comet_net_hardware_of(&sys, 0, 16, &hw);
        assert_int_equal(hw.pods, 1);
        assert_int_equal(hw.links, want_links[i]);
        assert_int_equal(hw.switches, 0);
        assert_close(hw.cost, 100.0 * (double)want_links[i], 0.0);
        assert_int_equal(comet_sweep_point(st, (uint64_t)i, &rows[i], &err), COMET_OK);
        assert_int_equal(rows[i].status, COMET_POINT_OK);
        assert_close(rows[i].cost, comet_system_cost(&sys, 16), 0.0);
    }
    assert_close(rows[1].cost - rows[0].cost, 1600.0, 1e-9);
    assert_close(rows[2].cost - rows[0].cost, 800.0, 1e-9);
    assert_true(rows[1].best.result.step_time < rows[0].best.result.step_time * 0.9);
    assert_close(rows[2].best.result.step_time, rows[0].best.result.step_time, 1e-12);

    /* the results write a shape as 4x4 and read it back to the same value */
    comet_buf csv, jsonl;
    write_results(st, rows, 3, &csv, &jsonl);
    assert_non_null(strstr(csv.data, "schema_version,index,status,design_cost_usd,network.grid.shape,npus,"));
    assert_non_null(strstr(csv.data, "\n1,1,ok,403200,4x4,16,dlrm,"));
    assert_non_null(strstr(jsonl.data, "\"axes\": {\"network.grid.shape\": \"2x8\"}"));
    const comet_buf *files[2] = {&csv, &jsonl};
    const char *names[2] = {"results.csv", "results.jsonl"};
    for (int f = 0; f < 2; f++) {
        comet_results *res = read_results(files[f], names[f], 3);
        assert_int_equal(res->study.axes[0].kind, COMET_AXIS_DIM_SHAPE);
        assert_int_equal(res->study.axes[0].n, 3);
        for (int i = 0; i < 3; i++) {
            assert_close(res->rows[i].values[0], ax->values[i], 0.0);
            assert_close(res->rows[i].result.step_time, rows[i].best.result.step_time, 1e-9);
        }
        assert_string_equal(
            comet_axis_format(&res->study.axes[0], res->rows[1].values[0], v, sizeof v), "4x4");
        comet_results_free(res);
        free(res);
    }
    comet_buf_free(&csv);
    comet_buf_free(&jsonl);
    free(st);
}

/* Shape values as text: what reads, what does not. */
static void test_shape_value_text(void **state)
{
    (void)state;
    comet_axis ax = {.kind = COMET_AXIS_DIM_SHAPE};
    double v;
    char t[48];
    assert_true(comet_axis_value_parse(COMET_AXIS_DIM_SHAPE, "2x2x4", &v));
    assert_close(v, 2.0 + 2.0 * 131072.0 + 4.0 * 131072.0 * 131072.0, 0.0);
    assert_string_equal(comet_axis_value_text(&ax, v, t, sizeof t), "2x2x4");
    int64_t axes[COMET_MAX_AXES];
    assert_int_equal(comet_axis_shape_of(v, axes), 3);
    assert_int_equal(axes[2], 4);
    assert_true(comet_axis_value_parse(COMET_AXIS_DIM_SHAPE, "131071", &v));
    assert_close(v, 131071.0, 0.0);
    const char *bad[] = {"", "4x", "x4", "4x1", "4x4x4x4", "131072", "4,4", "-4", "4.5", "4x 4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (comet_axis_value_parse(COMET_AXIS_DIM_SHAPE, bad[i], &v))
            fail_msg("\"%s\" read as a shape", bad[i]);
    /* other kinds stay numbers */
    comet_axis radix = {.kind = COMET_AXIS_DIM_RADIX};
    assert_true(comet_axis_value_parse(COMET_AXIS_DIM_RADIX, "64", &v));
    assert_string_equal(comet_axis_value_text(&radix, v, t, sizeof t), "64");
    assert_false(comet_axis_value_parse(COMET_AXIS_DIM_RADIX, "4x4", &v));
    assert_int_equal(comet_axis_shape_of(0.0, axes), 0);
    assert_int_equal(comet_axis_shape_of(4.0 + 1.0 * 131072.0, axes), 0); /* an axis of 1 */
}

/* Mistakes in the new axes, each one line naming the axis value at fault. */
static void test_bad_network_axes(void **state)
{
    (void)state;
    /* axes that multiply to another size: the value and its product */
    test_expect_study_error(
        ONE_DIM_STUDY("16", TORUS16, "      grid: {shape: [[4, 4], [2, 4]]}\n"),
        "bad.yaml:12:30: study.axes.network.grid.shape[1]: torus 2x4 with 16 NPUs along grid "
        "and 1 inside: study.system.network[0].shape: axes multiply to 8 NPUs, the dimension's "
        "size is 16");
    /* a shape against a swept size: every combination */
    test_expect_study_error(
        ONE_DIM_STUDY("32", TORUS16, "      grid: {size: [16, 32], shape: [[4, 4]]}\n"),
        "bad.yaml:12:38: study.axes.network.grid.shape[0]: torus 4x4 with 32 NPUs along grid "
        "and 1 inside: study.system.network[0].shape: axes multiply to 16 NPUs, the "
        "dimension's size is 32");
    test_expect_study_error(ONE_DIM_STUDY("16", TORUS16, "      grid: {shape: [[4, 1]]}\n"),
                            "bad.yaml:12:26: study.axes.network.grid.shape[0][1]: expected an "
                            "integer of at least 2, got \"1\"");
    test_expect_study_error(ONE_DIM_STUDY("16", TORUS16, "      grid: {shape: [[]]}\n"),
                            "bad.yaml:12:22: study.axes.network.grid.shape[0]: needs 1 to 3 "
                            "axes, e.g. [4, 4]");
    test_expect_study_error(
        ONE_DIM_STUDY("16", TORUS16, "      grid: {shape: [[4, 4], [4, 4]]}\n"),
        "bad.yaml:12:30: study.axes.network.grid.shape[1]: repeats an earlier value");
    test_expect_study_error(
        ONE_DIM_STUDY("16", TORUS16, "      grid: {shape: [[2, 131072]]}\n"),
        "bad.yaml:12:26: study.axes.network.grid.shape[0][1]: a swept shape's axes hold at "
        "most 131071 NPUs each, got 131072");
    /* a shape where the topology axis makes no torus or mesh */
    test_expect_study_error(
        ONE_DIM_STUDY("16", TORUS16,
                      "      grid: {topology: [torus, ring], shape: [[4, 4]]}\n"),
        "bad.yaml:12:47: study.axes.network.grid.shape[0]: ring 4x4 with 16 NPUs along grid "
        "and 1 inside: study.system.network[0].shape: applies to torus and mesh only");
    /* routing on a torus, and a name that is no routing */
    test_expect_study_error(ONE_DIM_STUDY("16", TORUS16, "      grid: {routing: [ecmp, spray]}\n"),
                            "bad.yaml:12:30: study.axes.network.grid.routing[1]: torus with 16 "
                            "NPUs along grid and 1 inside: study.system.network[0].routing: "
                            "applies to fat_tree and rail only");
#define CLOS3 "      - {name: ib, size: 64, topology: fat_tree, tiers: 3, radix: 8,\n" \
              "         bandwidth: 25 GB/s}\n"
    test_expect_study_error(ONE_DIM_STUDY("64", CLOS3, "      ib: {routing: [ecmp, sprya]}\n"),
                            "bad.yaml:12:28: study.axes.network.ib.routing[1]: unknown value "
                            "\"sprya\" (did you mean \"spray\"?)");
    /* the aggregation ratio: below 1 (blamed on it, not the leaf axis beside
     * it), and on 2 tiers, which have no aggregation switches */
    test_expect_study_error(
        ONE_DIM_STUDY("64", CLOS3,
                      "      ib: {oversubscription: [1, 2], "
                      "aggregation_oversubscription: [1, 0.5]}\n"),
        "bad.yaml:12:72: study.axes.network.ib.aggregation_oversubscription[1]: fat_tree with "
        "64 NPUs along ib and 1 inside: study.system.network[0].oversubscription: each ratio "
        "(down:up ports) must be at least 1");
    test_expect_study_error(
        ONE_DIM_STUDY("64", CLOS3,
                      "      ib: {oversubscription: [1, 0.5], "
                      "aggregation_oversubscription: [2]}\n"),
        "bad.yaml:12:34: study.axes.network.ib.oversubscription[1]: fat_tree with 64 NPUs "
        "along ib and 1 inside: study.system.network[0].oversubscription: each ratio "
        "(down:up ports) must be at least 1");
    test_expect_study_error(
        ONE_DIM_STUDY("64", CLOS3,
                      "      ib: {tiers: [3, 2], aggregation_oversubscription: [2]}\n"),
        "bad.yaml:12:58: study.axes.network.ib.aggregation_oversubscription[0]: fat_tree with "
        "64 NPUs along ib and 1 inside: study.system.network[0].oversubscription: gives a "
        "second ratio, which only 3 tiers have");
    test_expect_study_error(
        ONE_DIM_STUDY("64", CLOS3, "      ib: {aggregation_oversubscripton: [2]}\n"),
        "bad.yaml:12:12: study.axes.network.ib.aggregation_oversubscripton: unknown resource "
        "(did you mean \"aggregation_oversubscription\"?)");
    /* a topology axis of torus and mesh takes a shape axis */
    comet_study *st = read_study(
        ONE_DIM_STUDY("16", TORUS16, "      grid: {topology: [torus, mesh], shape: [[4, 4]]}\n"));
    comet_system sys;
    comet_study_point_system(st, 1, &sys);
    assert_int_equal(sys.dims[0].topology, COMET_TOPO_MESH);
    assert_int_equal(sys.dims[0].shape.n_axes, 2);
    comet_net_hardware hw; /* a 4 x 4 mesh: 2 axes of 4 lines of 3 */
    comet_net_hardware_of(&sys, 0, 16, &hw);
    assert_int_equal(hw.links, 24);
    free(st);
}

/* A 3-tier fat tree of 8-port switches, 64 NPUs, leaves 1:1 (4 down, 4 up),
 * the aggregation switches swept 1:1 and 3:1, ECMP and spray.
 * 1:1: aggregation 4 down / 4 up: 16 leaves, 4 blocks of 4 aggregation
 *      switches, 4 x 4 x 4 / 8 = 8 cores: 40 switches, 320 ports; cables
 *      64 + 16 x 4 + 16 x 4 = 192.
 * 3:1: aggregation floor(8 x 3/4) = 6 down / 2 up: ceil(16/6) = 3 blocks,
 *      12 aggregation switches, ceil(3 x 4 x 2 / 8) = 3 cores: 31 switches,
 *      248 ports; cables 64 + 64 + 12 x 2 = 152.
 * At $500 a port and $100 a cable: 179,200 and 139,200.
 * The all-to-all over all 64 (topo_clos.c, clos_scatter): a pod of
 * 4 x 4 = 16 NPUs sends 16 x 48/64 of a port's data over 4 x 4 = 16 uplinks
 * (0.75 x), under the port's 63/64 x; at 3:1 a pod of 4 x 6 = 24 sends
 * 24 x 40/64 over 4 x 2 = 8 uplinks: 1.875 x. DLRM's step slows by it.
 * ECMP and spray cost the same; hashed, the busiest uplink sets a ring's
 * pace (docs/fabric.md, "ECMP"), so the ECMP rows are never faster. */
static void test_aggregation_and_routing_axes(void **state)
{
    (void)state;
    comet_study *st =
        read_study(ONE_DIM_STUDY("64",
                                 "      - {name: ib, size: 64, topology: fat_tree, tiers: 3, "
                                 "radix: 8,\n         bandwidth: 25 GB/s, "
                                 "cost_per_switch_port: 500, cost_per_link: 100}\n",
                                 "      ib: {aggregation_oversubscription: [1, 3], "
                                 "routing: [ecmp, spray]}\n"));
    assert_int_equal(st->n_axes, 2);
    const comet_axis *agg = &st->axes[0], *route = &st->axes[1];
    assert_string_equal(agg->name, "network.ib.aggregation_oversubscription");
    assert_int_equal(agg->kind, COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION);
    assert_int_equal(route->kind, COMET_AXIS_DIM_ROUTING);
    assert_close(route->values[1], (double)COMET_ROUTE_SPRAY, 0.0);
    char v[64];
    assert_string_equal(comet_axis_format(agg, 3.0, v, sizeof v), "3:1");
    assert_string_equal(comet_axis_format(route, route->values[0], v, sizeof v), "ecmp");
    assert_string_equal(comet_axis_format(route, route->values[1], v, sizeof v), "spray");
    assert_string_equal(comet_axis_short_name(agg, v, sizeof v), "ib aggregation oversubscription");
    assert_string_equal(comet_axis_short_name(route, v, sizeof v), "ib routing");
    comet_axis_kind kind;
    assert_true(comet_axis_kind_from_name("network.ib.aggregation_oversubscription", &kind));
    assert_int_equal(kind, COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION);
    assert_true(comet_axis_kind_from_name("network.ib.routing", &kind));
    assert_int_equal(kind, COMET_AXIS_DIM_ROUTING);

    const int64_t ports[2] = {320, 248}, links[2] = {192, 152}, cores[2] = {8, 3},
                  aggs[2] = {16, 12};
    const double a2a[2] = {63.0 / 64.0, 1.875};
    comet_sweep_row rows[4];
    comet_error err;
    for (int i = 0; i < 4; i++) {
        int r = i / 2; /* the ratio's slot; routing varies fastest */
        comet_system sys;
        comet_study_point_system(st, (uint64_t)i, &sys);
        assert_close(sys.dims[0].shape.oversubscription[0], 0.0, 0.0);
        assert_close(sys.dims[0].shape.oversubscription[1], r ? 3.0 : 1.0, 0.0);
        assert_int_equal(sys.dims[0].shape.routing, i % 2 ? COMET_ROUTE_SPRAY : COMET_ROUTE_ECMP);
        comet_net_hardware hw;
        comet_net_hardware_of(&sys, 0, 64, &hw);
        assert_int_equal(hw.leaves, 16);
        assert_int_equal(hw.aggregation, aggs[r]);
        assert_int_equal(hw.spines, cores[r]);
        assert_int_equal(hw.switch_ports, ports[r]);
        assert_int_equal(hw.links, links[r]);
        assert_close(hw.cost, 500.0 * (double)ports[r] + 100.0 * (double)links[r], 0.0);
        int64_t span[COMET_MAX_DIMS] = {64, 1, 1, 1, 1, 1, 1, 1};
        /* sprayed, the uplinks' mean; hashed, their busiest: more */
        double a2a_time = comet_collective_time(&sys, span, COMET_COLL_ALL_TO_ALL, GIB);
        if (i % 2)
            assert_close(a2a_time, a2a[r] * GIB / 25e9, 1e-12);
        else
            assert_true(a2a_time > a2a[r] * GIB / 25e9 * 1.05);
        assert_int_equal(comet_sweep_point(st, (uint64_t)i, &rows[i], &err), COMET_OK);
        assert_int_equal(rows[i].status, COMET_POINT_OK);
    }
    assert_close(rows[0].cost - rows[2].cost, 179200.0 - 139200.0, 1e-9);
    assert_true(rows[2].best.result.step_time > rows[0].best.result.step_time * 1.1);
    /* ECMP and spray: the same price; hashed, the busiest uplink sets the
     * pace (docs/fabric.md, "ECMP"), so never faster, and here slower */
    bool slower = false;
    for (int r = 0; r < 2; r++) {
        assert_true(rows[2 * r].best.result.step_time >=
                    rows[2 * r + 1].best.result.step_time * (1.0 - 1e-12));
        slower |= rows[2 * r].best.result.step_time > rows[2 * r + 1].best.result.step_time * 1.01;
        assert_close(rows[2 * r + 1].cost, rows[2 * r].cost, 0.0);
    }
    assert_true(slower);
    /* both columns are numbers; they read back */
    comet_buf csv;
    comet_buf_init(&csv);
    comet_sweep_csv_header(&csv, st);
    for (int i = 0; i < 4; i++)
        comet_sweep_csv_row(&csv, st, &rows[i]);
    assert_non_null(strstr(csv.data, "design_cost_usd,network.ib.aggregation_oversubscription,"
                                     "network.ib.routing,npus,"));
    assert_non_null(strstr(csv.data, "\n1,3,ok,1739200,3,1,64,dlrm,"));
    comet_results *res = calloc(1, sizeof *res);
    assert_non_null(res);
    assert_int_equal(comet_results_parse(csv.data, csv.len, "results.csv", res, &err), COMET_OK);
    assert_int_equal(res->n_rows, 4);
    assert_int_equal(res->study.axes[0].kind, COMET_AXIS_DIM_AGGREGATION_OVERSUBSCRIPTION);
    assert_int_equal(res->study.axes[1].kind, COMET_AXIS_DIM_ROUTING);
    assert_string_equal(comet_axis_format(&res->study.axes[1], res->rows[3].values[1], v, sizeof v),
                        "spray");
    /* the summary says how far the aggregation tier goes within 5 % */
    comet_buf sum;
    comet_buf_init(&sum);
    comet_headroom_summary(&sum, res);
    assert_non_null(strstr(sum.data, "dlrm: ib aggregation oversubscription: nothing above 1:1 "
                                     "within 5 %; 3:1 is +"));
    comet_buf_free(&sum);
    comet_results_free(res);
    free(res);
    comet_buf_free(&csv);
    free(st);
}

/* Cables and switches of the topologies without a Clos, per instance of
 * the dimension (ceil(npus / size) instances). */
static void test_direct_hardware(void **state)
{
    (void)state;
    comet_system sys;
    memset(&sys, 0, sizeof sys);
    sys.n_dims = 2;
    snprintf(sys.dims[0].name, sizeof sys.dims[0].name, "in");
    snprintf(sys.dims[1].name, sizeof sys.dims[1].name, "out");
    sys.dims[0].size = 16;
    sys.dims[1].size = 0; /* auto: what 64 NPUs leave, 4 */
    sys.dims[0].cost_per_link = 10.0;
    sys.dims[0].cost_per_switch_port = 1.0;
    static const struct {
        comet_topology t;
        int n_axes;
        int64_t axes[3];
        int64_t links, ports;
    } cases[] = {
        {COMET_TOPO_RING, 0, {0}, 16, 0},                 /* 16 neighbour links */
        {COMET_TOPO_TORUS, 0, {0}, 16, 0},                /* one axis: a ring */
        {COMET_TOPO_TORUS, 2, {4, 4}, 32, 0},             /* 2 x 4 lines of 4 */
        {COMET_TOPO_TORUS, 3, {4, 2, 2}, 32, 0},          /* 16 + 8 + 8 */
        {COMET_TOPO_MESH, 2, {4, 4}, 24, 0},              /* 2 x 4 lines of 3 */
        {COMET_TOPO_MESH, 2, {2, 8}, 22, 0},              /* 8 x 1 + 2 x 7 */
        {COMET_TOPO_FULLY_CONNECTED, 0, {0}, 120, 0},     /* 16 x 15 / 2 */
        {COMET_TOPO_SWITCH, 0, {0}, 16, 16},              /* one 16-port switch */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sys.dims[0].topology = cases[i].t;
        sys.dims[0].shape.n_axes = cases[i].n_axes;
        memcpy(sys.dims[0].shape.axes, cases[i].axes, sizeof cases[i].axes);
        comet_net_hardware hw;
        comet_net_hardware_of(&sys, 0, 64, &hw);
        assert_int_equal(hw.pods, 4);
        assert_int_equal(hw.links, 4 * cases[i].links);
        assert_int_equal(hw.switch_ports, 4 * cases[i].ports);
        assert_int_equal(hw.switches, cases[i].ports ? 4 : 0);
        assert_close(hw.cost, 40.0 * (double)cases[i].links + 4.0 * (double)cases[i].ports, 0.0);
    }
    /* a ring of 2 is one link; the auto outer ring of 4 has 16 instances */
    sys.dims[0].topology = COMET_TOPO_RING;
    sys.dims[0].shape.n_axes = 0;
    sys.dims[0].size = 2;
    comet_net_hardware hw;
    comet_net_hardware_of(&sys, 0, 64, &hw);
    assert_int_equal(hw.links, 32);
    sys.dims[0].size = 16;
    sys.dims[1].topology = COMET_TOPO_RING;
    comet_net_hardware_of(&sys, 1, 64, &hw);
    assert_int_equal(hw.pods, 16);
    assert_int_equal(hw.links, 64);
}

/* A system axis: whole systems, each point starting from its own (with the
 * other axes applied on it), the first the study's base when `system` is
 * left out. The wafers of the FRED study (presets/studies/fred.yaml): a
 * 1 GiB all-reduce on each is its closed form (FRED-D's in-switch one
 * half FRED-C's ring, the mesh slower again), each point's cost and best
 * are those of its own system, the direction of the paper's speedups
 * holds for every workload that fits (none slower on FRED than on the
 * mesh), and the results files name each system (system_index beside the
 * estimate's system) and read back with its name. Errors: network axes
 * with a system axis, a system twice, a system that cannot hold the NPUs. */
static void test_system_axis(void **state)
{
    (void)state;
    comet_study *st = read_study("study:\n  models: [resnet152, transformer-17b]\n  npus: 20\n"
                                 "  global_batch: 320\n  axes:\n"
                                 "    hbm_capacity: [\"80 GiB\"]\n"
                                 "    system: [mesh-wafer, fred-c-wafer, fred-wafer]\n");
    assert_int_equal(st->n_axes, 2);
    const comet_axis *ax = &st->axes[1];
    assert_int_equal(ax->kind, COMET_AXIS_SYSTEM);
    assert_string_equal(ax->name, "system_index");
    assert_int_equal(st->n_systems, 3);
    assert_string_equal(st->system.name, "mesh-wafer"); /* the first is the base */
    assert_int_equal(comet_study_points(st), 6);
    char v[64];
    assert_string_equal(comet_axis_format(ax, 2.0, v, sizeof v), "fred-wafer");
    assert_string_equal(comet_axis_short_name(ax, v, sizeof v), "system");
    comet_sweep_row rows[6];
    comet_error err;
    double ar[3];
    for (int i = 0; i < 6; i++) {
        comet_system sys;
        comet_study_point_system(st, (uint64_t)i, &sys);
        assert_string_equal(sys.name, ax->labels[i % 3]);
        assert_int_equal(comet_sweep_point(st, (uint64_t)i, &rows[i], &err), COMET_OK);
        assert_int_equal(rows[i].status, COMET_POINT_OK);
        assert_close(rows[i].cost, comet_system_cost(&sys, 20), 0.0);
        if (i < 3) {
            const int64_t span[COMET_MAX_DIMS] = {20};
            ar[i] = comet_collective_time(&sys, span, COMET_COLL_ALL_REDUCE, GIB);
        }
    }
    /* 1 GiB at 3 TB/s per NPU: in-switch S/B (each byte once up, once down),
     * FRED-C's ring 2 (19/20) S/B, the 5 x 4 mesh's per-axis rings at a
     * quarter of the NPU's bandwidth per link */
    assert_close(ar[2], GIB / 3e12, 0.01);
    assert_close(ar[1], 2.0 * 19.0 / 20.0 * GIB / 3e12, 0.01);
    assert_true(ar[0] > 1.9 * ar[1]);
    for (int m = 0; m < 2; m++) {
        double mesh = rows[3 * m].best.result.step_time;
        assert_true(rows[3 * m + 1].best.result.step_time <= mesh);
        assert_true(rows[3 * m + 2].best.result.step_time <= mesh);
    }

    comet_buf csv, jsonl;
    write_results(st, rows, 6, &csv, &jsonl);
    assert_non_null(strstr(csv.data, "schema_version,index,status,design_cost_usd,hbm_capacity_bytes,system_index,npus,"));
    assert_non_null(strstr(jsonl.data, "\"axes\": {\"hbm_capacity\": 8.589934592e+10, "
                                       "\"system_index\": 2}"));
    const comet_buf *files[2] = {&csv, &jsonl};
    const char *names[2] = {"results.csv", "results.jsonl"};
    for (int f = 0; f < 2; f++) {
        comet_results *res = read_results(files[f], names[f], 6);
        assert_int_equal(res->study.axes[1].kind, COMET_AXIS_SYSTEM);
        assert_string_equal(comet_axis_format(&res->study.axes[1], 1.0, v, sizeof v),
                            "fred-c-wafer");
        comet_results_free(res);
        free(res);
    }
    comet_buf_free(&csv);
    comet_buf_free(&jsonl);
    free(st);

    test_expect_study_error(
        "study:\n  models: [resnet152]\n  npus: 20\n  global_batch: 320\n  axes:\n"
        "    system: [mesh-wafer, fred-wafer]\n    network:\n      mesh: {bandwidth: [1 TB/s]}\n",
        "bad.yaml:7:5: study.axes.network: network axes name one system's dimensions: they do not "
        "go with a system axis (vary the systems themselves)");
    test_expect_study_error(
        "study:\n  models: [resnet152]\n  npus: 20\n  global_batch: 320\n  axes:\n"
        "    system: [fred-wafer, fred-wafer]\n",
        "bad.yaml:6:26: study.axes.system[1]: system \"fred-wafer\" is on this axis already: "
        "give each its own name");
    test_expect_study_error(
        "study:\n  models: [resnet152]\n  npus: 16\n  global_batch: 320\n  axes:\n"
        "    system: [a100-80g-selene, fred-wafer]\n",
        "bad.yaml: study.npus: 16 NPUs do not fit system fred-wafer: tp*pp*dp = 16 NPUs, but "
        "system fred-wafer has 20 (all its network dimensions have fixed sizes)");
    test_expect_study_error("study:\n  models: [resnet152]\n  npus: 20\n  global_batch: 320\n",
                            "bad.yaml:2:3: study: missing key \"system\" (or an axis of systems, "
                            "axes.system)");
}

/* The FRED study as shipped (presets/studies/fred.yaml): every workload
 * fits, Transformer-1T with its gradients streamed to the off-wafer
 * memory (offload.gradients, or spilled there), and runs no slower on
 * either FRED wafer than on the mesh (docs/fabric.md, "FRED"). */
static comet_study *fred_study(void)
{
    char path[4200];
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(path, sizeof path, "%s/../presets/studies/fred.yaml", dir ? dir : "tests");
    comet_study *st = malloc(sizeof *st);
    assert_non_null(st);
    comet_error err;
    assert_int_equal(comet_study_read_file(path, st, &err), COMET_OK);
    return st;
}

static void test_fred_study(void **state)
{
    (void)state;
    comet_study *st = fred_study();
    comet_error err;
    assert_int_equal(comet_study_points(st), 12);
    for (int m = 0; m < 4; m++) {
        comet_sweep_row row[3];
        for (int i = 0; i < 3; i++)
            assert_int_equal(comet_sweep_point(st, (uint64_t)(3 * m + i), &row[i], &err),
                             COMET_OK);
        /* every workload fits: Transformer-1T's 14.7 TiB of state only
         * with its gradients streamed to the off-wafer memory too */
        bool t1t = strcmp(st->models[m].name, "transformer-1t") == 0;
        for (int i = 0; i < 3; i++) {
            assert_int_equal(row[i].status, COMET_POINT_OK);
            assert_true(isfinite(row[i].best.result.step_time));
            if (t1t)
                assert_true(row[i].best.result.mem[COMET_TIER_EXPANSION][COMET_MEM_GRADIENTS] >
                            0.0);
        }
        assert_true(row[1].best.result.step_time <= row[0].best.result.step_time);
        assert_true(row[2].best.result.step_time <= row[0].best.result.step_time);
    }
    free(st);
}

/* A results shell of the study's first n points, each searched now, as
 * a sweep would have saved them. */
static void results_of_points(const comet_study *st, comet_results *r, size_t n)
{
    comet_error err;
    r->study = *st;
    r->n_rows = n;
    r->rows = calloc(n, sizeof *r->rows);
    assert_non_null(r->rows);
    for (size_t i = 0; i < n; i++) {
        comet_sweep_row row;
        assert_int_equal(comet_sweep_point(st, (uint64_t)i, &row, &err), COMET_OK);
        assert_int_equal(row.status, COMET_POINT_OK);
        r->rows[i] = (comet_results_row){.index = row.index, .model = row.model,
                                         .status = row.status, .cost = row.cost,
                                         .npus = row.npus, .strategy = row.best.strategy,
                                         .result = row.best.result};
        memcpy(r->rows[i].values, row.values, sizeof row.values);
    }
}

/* The study's comparison along its system axis (step 4): ResNet-152's
 * fastest design on each wafer, and the traffic of its step run as flows.
 * Its pick (dp 20, ZeRO 1) reduce-scatters and all-gathers the gradients:
 * at the endpoints (FRED-C) every NPU's port carries 2 x 19/20 of them
 * each way, the ring's closed form; in FRED-D's switches 19/20 + 1/20,
 * the reduce-scatter's and the multicast all-gather's, 1.9x less. */
static void test_fred_by_system(void **state)
{
    (void)state;
    comet_study *st = fred_study();
    comet_results *r = calloc(1, sizeof *r);
    comet_conclusions *c = calloc(1, sizeof *c);
    assert_true(r && c);
    comet_error err;
    assert_string_equal(st->models[0].name, "resnet152");
    results_of_points(st, r, 3);
    comet_study_conclude(r, 0, c);
    assert_int_equal(comet_study_compare_systems(st, r, c, &err), COMET_OK);
    assert_int_equal(c->n_systems, 3);
    const char *names[3] = {"mesh-wafer", "fred-c-wafer", "fred-wafer"};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(st->systems[c->systems[i].system].name, names[i]);
        assert_ptr_equal(c->systems[i].row, &r->rows[i]);
        assert_true(c->systems[i].traced);
        assert_true(c->systems[i].total_bytes >= c->systems[i].busiest_bytes);
    }
    assert_close(c->systems[0].speedup, 1.0, 1e-12);
    assert_close(c->systems[1].speedup,
                 r->rows[0].result.step_time / r->rows[1].result.step_time, 1e-12);
    const comet_results_row *fred_c = c->systems[1].row;
    assert_int_equal(fred_c->strategy.dp, 20);
    assert_int_equal(fred_c->strategy.zero_stage, 1);
    double grads = 2.0 * comet_model_params(&st->models[0]); /* bf16 */
    assert_close(c->systems[1].busiest_bytes, 2.0 * 19.0 / 20.0 * grads, 0.005);
    assert_close(c->systems[1].busiest_bandwidth, 3e12, 1e-9);
    assert_close(c->systems[2].busiest_bytes, grads, 0.005);
    assert_close(c->systems[1].total_bytes / c->systems[2].total_bytes, 1.9, 0.01);
    assert_int_equal(r->rows[2].strategy.zero_stage, 1);
    /* the mesh spreads its ring over more, slower links: less on each */
    assert_true(c->systems[0].busiest_bytes < c->systems[1].busiest_bytes);
    free(r->rows);
    free(c);
    free(r);
    free(st);
}

/* The RoCE study's comparison (presets/studies/roce.yaml): Megatron 22B's
 * pick under no congestion control and under PFC alone, each step run as
 * flows, the PFC one through the fluid model: it pauses links and queues
 * bytes, and takes no less time than ideal max-min sharing, and not much
 * more (docs/roce.md: the seed study's conclusion). The other two systems
 * have no row here, so they are reported as not fitting. About 5 s; the
 * sanitizer run leaves it to the release run (the fluid model itself runs
 * under the sanitizers in the roce suite). */
static void test_roce_by_system(void **state)
{
    (void)state;
    if (getenv("COMET_SANITIZED")) {
        TEST_SKIP("the RoCE study's two flow runs take minutes under the sanitizers");
    }
    char path[4200];
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(path, sizeof path, "%s/../presets/studies/roce.yaml", dir ? dir : "tests");
    comet_study *st = malloc(sizeof *st);
    comet_results *r = calloc(1, sizeof *r);
    comet_conclusions *c = calloc(1, sizeof *c);
    assert_true(st && r && c);
    comet_error err;
    assert_int_equal(comet_study_read_file(path, st, &err), COMET_OK);
    assert_int_equal(st->n_systems, 4);
    results_of_points(st, r, 2);
    comet_study_conclude(r, 0, c);
    assert_int_equal(comet_study_compare_systems(st, r, c, &err), COMET_OK);
    assert_int_equal(c->n_systems, 4);
    const comet_system_pick *none = &c->systems[0], *pfc = &c->systems[1];
    assert_string_equal(st->systems[none->system].name, "roce-none");
    assert_string_equal(st->systems[pfc->system].name, "roce-pfc");
    assert_true(none->traced && pfc->traced);
    assert_false(none->cc.fluid);
    assert_true(pfc->cc.fluid);
    assert_true(pfc->cc.pause_time > 0.0 && pfc->cc.paused_links > 0);
    assert_true(pfc->cc.peak_queue > 0.0);
    assert_true(pfc->simulated >= none->simulated);
    assert_true(pfc->simulated <= 1.2 * none->simulated);
    /* the bubble is the same: what PFC adds shows as compute waiting */
    assert_true(none->compute_wait > 0.0 && none->compute_wait < none->simulated);
    assert_true(pfc->compute_wait >= none->compute_wait);
    assert_close(pfc->simulated_speedup, none->simulated / pfc->simulated, 1e-12);
    /* the estimate has no queues: the same pick and time under both */
    assert_close(pfc->speedup, 1.0, 1e-12);
    assert_null(c->systems[2].row);
    assert_string_equal(c->systems[2].why, "no design fits");
    free(r->rows);
    free(c);
    free(r);
    free(st);
}

void suite_sweep_axes(test_tally *t)
{
    const struct CMUnitTest sweep_axes[] = {
        cmocka_unit_test(test_torus_shape_axis),
        cmocka_unit_test(test_shape_value_text),
        cmocka_unit_test(test_bad_network_axes),
        cmocka_unit_test(test_aggregation_and_routing_axes),
        cmocka_unit_test(test_direct_hardware),
        cmocka_unit_test(test_system_axis),
        cmocka_unit_test(test_fred_study),
        cmocka_unit_test(test_fred_by_system),
        cmocka_unit_test(test_roce_by_system),
    };
    RUN_GROUP(t, sweep_axes);
}
