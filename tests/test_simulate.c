/* The collective simulator: ASTRA-sim 2.0's analytical-backend reference
 * to the nanosecond, agreement with the closed forms, the Themis scheduler
 * against the baseline on an unbalanced 2-D network, and bandwidth sharing
 * under congestion. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comet/comet.h"
#include "comet/simulate.h"
#include "tests.h"

#define GIB 1073741824.0

static void dims(comet_system *s, int n, const int64_t *sizes, const double *bw, double lat,
                 comet_topology topo)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "net");
    s->n_dims = n;
    for (int d = 0; d < n; d++) {
        snprintf(s->dims[d].name, sizeof s->dims[d].name, "d%d", d);
        s->dims[d].size = sizes[d];
        s->dims[d].topology = topo;
        s->dims[d].algorithm = COMET_ALGO_RING;
        s->dims[d].bandwidth = bw[d];
        s->dims[d].latency = lat;
        s->dims[d].efficiency = 1.0;
    }
}

/* 1 GiB ring all-reduce on Ring(8), 50 GB/s (GB = 2^30 B in ASTRA-sim),
 * 500 ns, endpoint delay 10 ns, 1600 GB/s local memory, 4 splits, one
 * active chunk: ASTRA-sim 2.0 reports 36,790,164 ns. Per chunk: 14 steps of
 * (500 + 625,000) ns, 7 reduce steps of 3 whole-ns memory passes of
 * 20,971 ns, 15 sends of 10 ns. */
static void test_astra_reference(void **state)
{
    (void)state;
    comet_system s;
    const int64_t n[1] = {8};
    const double bw[1] = {50.0 * GIB};
    dims(&s, 1, n, bw, 500e-9, COMET_TOPO_RING);
    int64_t span[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    o.splits = 4;
    o.endpoint_delay = 10e-9;
    o.local_mem_bw = 1600e9;
    o.astra_rounding = true;
    comet_sim_collective_result r;
    comet_error err;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_OK);
    assert_true(fabs(r.time * 1e9 - 36790164.0) < 0.5);
    /* 4 x (14 x 625,500 + 21 x 20,971 + 150) by hand */
    assert_true(fabs(r.time * 1e9 - 4.0 * (14 * 625500.0 + 21 * 20971.0 + 150.0)) < 0.5);
}

/* Without endpoint or memory costs the simulator is the closed form:
 * one dimension with k chunks, and two dimensions with one chunk. */
static void test_matches_closed_forms(void **state)
{
    (void)state;
    comet_system s;
    const int64_t n[2] = {8, 4};
    const double bw[2] = {300e9, 25e9};
    dims(&s, 2, n, bw, 2e-6, COMET_TOPO_SWITCH);
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    comet_sim_collective_result r;
    comet_error err;
    int64_t one[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    int64_t two[COMET_MAX_DIMS] = {8, 4, 1, 1, 1, 1, 1, 1};
    comet_collective kinds[3] = {COMET_COLL_ALL_REDUCE, COMET_COLL_REDUCE_SCATTER,
                                 COMET_COLL_ALL_TO_ALL};
    for (int i = 0; i < 3; i++) {
        s.collective_chunks = 8;
        o.splits = 8;
        assert_int_equal(comet_sim_collective(&s, one, kinds[i], GIB, &o, &r, &err), COMET_OK);
        assert_close(r.time, comet_collective_time(&s, one, kinds[i], GIB), 1e-12);
        s.collective_chunks = 1;
        o.splits = 1;
        assert_int_equal(comet_sim_collective(&s, two, kinds[i], GIB, &o, &r, &err), COMET_OK);
        assert_close(r.time, comet_collective_time(&s, two, kinds[i], GIB), 1e-12);
    }
}

/* Two equal dimensions of 8: in fixed order, dimension 0 carries the
 * full chunks and dimension 1 an eighth, so dimension 1 idles; Themis
 * sends chunks through the less loaded dimension first and keeps both
 * busy (Rashidi et al. 2022 report 1.72x on average). */
static void test_themis_balances(void **state)
{
    (void)state;
    comet_system s;
    const int64_t n[2] = {8, 8};
    const double bw[2] = {100e9, 100e9};
    dims(&s, 2, n, bw, 1e-6, COMET_TOPO_SWITCH);
    int64_t span[COMET_MAX_DIMS] = {8, 8, 1, 1, 1, 1, 1, 1};
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    o.splits = 64;
    comet_sim_collective_result base, themis;
    comet_error err;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &base, &err),
                     COMET_OK);
    o.scheduler = COMET_SCHED_THEMIS;
    assert_int_equal(
        comet_sim_collective(&s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &themis, &err), COMET_OK);
    printf("  baseline %.3f ms (utilization %.0f%% / %.0f%%), Themis %.3f ms (%.0f%% / %.0f%%): "
           "%.2fx\n",
           base.time * 1e3, 100 * base.utilization[0], 100 * base.utilization[1],
           themis.time * 1e3, 100 * themis.utilization[0], 100 * themis.utilization[1],
           base.time / themis.time);
    assert_true(base.time / themis.time > 1.6);
    assert_true(base.utilization[1] < 0.2);
    assert_true(themis.utilization[0] > 0.95 && themis.utilization[1] > 0.95);
}

/* Four chunks at once on one link: without congestion each runs at full
 * bandwidth (one chunk's time); with congestion they share it and take as
 * long as running them one after another. */
static void test_congestion_shares_bandwidth(void **state)
{
    (void)state;
    comet_system s;
    const int64_t n[1] = {8};
    const double bw[1] = {100e9};
    dims(&s, 1, n, bw, 0.0, COMET_TOPO_SWITCH);
    int64_t span[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    o.splits = 4;
    comet_sim_collective_result serial, parallel, shared;
    comet_error err;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_GATHER, GIB, &o, &serial, &err),
                     COMET_OK);
    o.active_chunks = 4;
    assert_int_equal(
        comet_sim_collective(&s, span, COMET_COLL_ALL_GATHER, GIB, &o, &parallel, &err), COMET_OK);
    o.fidelity = COMET_SIM_CONGESTION;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_GATHER, GIB, &o, &shared, &err),
                     COMET_OK);
    /* ring all-gather of S/4: 7/8 * S/4 / B */
    assert_close(parallel.time, 7.0 / 8.0 * GIB / 4.0 / 100e9, 1e-12);
    assert_close(serial.time, 4.0 * parallel.time, 1e-12);
    assert_close(shared.time, serial.time, 1e-12);
}

static void test_sim_bad_input(void **state)
{
    (void)state;
    comet_system s;
    const int64_t n[1] = {8};
    const double bw[1] = {100e9};
    dims(&s, 1, n, bw, 0.0, COMET_TOPO_SWITCH);
    int64_t span[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    comet_sim_collective_result r;
    comet_error err;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_REDUCE, -1.0, &o, &r, &err),
                     COMET_EINPUT);
    o.active_chunks = 0;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "--active-chunks");
    comet_sim_options_defaults(&o);
    o.splits = 1000000;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_EINPUT);
}

void suite_simulate(test_tally *t)
{
    const struct CMUnitTest simulate[] = {
        cmocka_unit_test(test_astra_reference),
        cmocka_unit_test(test_matches_closed_forms),
        cmocka_unit_test(test_themis_balances),
        cmocka_unit_test(test_congestion_shares_bandwidth),
        cmocka_unit_test(test_sim_bad_input),
    };
    RUN_GROUP(t, simulate);
}
