/* RoCE congestion control on the fabric (docs/roce.md, src/network/cc_*.c):
 * the fluid model against closed forms (a lone flow at line rate, an
 * N-to-1 incast at N x size / B, PFC's queue bound by xoff), congestion
 * control cutting an incast's queue and pause time against PFC alone,
 * a ring all-reduce on a non-blocking fat tree the same under every
 * scheme, an oversubscribed spine's all-to-all, two jobs on one spine, a
 * PFC deadlock named, and the configuration's errors. */
#include "tests.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comet/comet.h"
#include "toy.h"
#include "../src/network/cc.h"

#define GIB 1073741824.0
#define MIB 1048576.0

/* A dimension with ring collectives under scheme cc (toy_add_dim). */
static comet_net_dim *add_dim(comet_system *s, const char *name, int64_t size, comet_topology t,
                              double bw, double lat, comet_cc_scheme cc)
{
    comet_net_dim *d = toy_add_dim(s, name, size, t, COMET_ALGO_RING, bw, lat);
    d->cc.scheme = cc;
    return d;
}

/* n sends from[i] -> to[i] of `bytes` each, run to their end: the time,
 * and the run's figures into out. */
static double sends(const comet_system *s, const int64_t *from, const int64_t *to, int64_t n,
                    double bytes, comet_flow_result *out)
{
    comet_fabric *f = test_fabric_of(s);
    comet_error err;
    comet_fabric_run *r;
    assert_int_equal(comet_fabric_run_new(f, s, 0, &r, &err), COMET_OK);
    int64_t id;
    assert_int_equal(comet_fabric_run_sends(r, from, to, n, bytes, &id, &err), COMET_OK);
    if (comet_fabric_run_finish(r, &err))
        fail_msg("%s", err.message);
    double t = comet_fabric_run_now(r);
    memset(out, 0, sizeof *out);
    comet_fabric_run_links(r, t, out);
    comet_fabric_run_free(r);
    comet_fabric_free(f);
    return t;
}

/* N senders of a switch (NPUs 1..N) to NPU 0, `bytes` each. */
static double incast(comet_cc_scheme cc, int n, double bytes, double bw, comet_flow_result *out)
{
    comet_system s;
    toy_bare_system(&s, "incast");
    add_dim(&s, "sw", n + 1, COMET_TOPO_SWITCH, bw, 0.0, cc);
    int64_t from[64], to[64];
    for (int i = 0; i < n; i++) {
        from[i] = i + 1;
        to[i] = 0;
    }
    return sends(&s, from, to, n, bytes, out);
}

/* A collective of `bytes` per NPU on a fat tree of n NPUs, radix-port
 * switches in 2 tiers, leaves oversubscribed o:1, every group spanning
 * span NPUs. */
static double on_tree(comet_cc_scheme cc, int64_t n, int64_t radix, double o, comet_routing rt,
                      comet_collective c, int64_t span, double bytes, comet_flow_result *out)
{
    comet_system s;
    toy_bare_system(&s, "tree");
    comet_net_dim *d = add_dim(&s, "ib", n, COMET_TOPO_FAT_TREE, 50e9, 1e-6, cc);
    d->shape.tiers = 2;
    d->shape.radix = radix;
    d->shape.oversubscription[0] = o;
    d->shape.routing = rt;
    comet_fabric *f = test_fabric_of(&s);
    comet_flow_options opt;
    comet_flow_options_defaults(&opt);
    int64_t sp[COMET_MAX_DIMS] = {span};
    comet_error err;
    if (comet_fabric_collective(f, &s, sp, c, bytes, &opt, out, &err))
        fail_msg("%s", err.message);
    comet_fabric_free(f);
    return out->time;
}

/* Two jobs of sends on one fabric, started together: each one's end. */
static void two_jobs(const comet_system *s, const int64_t *fa, const int64_t *ta, int64_t na,
                     const int64_t *fb, const int64_t *tb, int64_t nb, double bytes,
                     double *end_a, double *end_b, comet_flow_result *out)
{
    comet_fabric *f = test_fabric_of(s);
    comet_error err;
    comet_fabric_run *r;
    assert_int_equal(comet_fabric_run_new(f, s, 0, &r, &err), COMET_OK);
    int64_t a, b;
    assert_int_equal(comet_fabric_run_sends(r, fa, ta, na, bytes, &a, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_sends(r, fb, tb, nb, bytes, &b, &err), COMET_OK);
    *end_a = *end_b = -1.0;
    while (*end_a < 0.0 || *end_b < 0.0) {
        double at;
        if (comet_fabric_run_next(r, &at, &err))
            fail_msg("%s", err.message);
        assert_true(isfinite(at));
        const int64_t *done;
        int n;
        if (comet_fabric_run_step(r, &done, &n, &err))
            fail_msg("%s", err.message);
        for (int i = 0; i < n; i++)
            *(done[i] == a ? end_a : end_b) = comet_fabric_run_now(r);
        comet_fabric_run_release(r);
    }
    memset(out, 0, sizeof *out);
    comet_fabric_run_links(r, comet_fabric_run_now(r), out);
    comet_fabric_run_free(r);
    comet_fabric_free(f);
}

/* A lone flow moves at its port's rate under every scheme: size / B plus
 * its path's latency, exactly (HPCC aims its sender at eta of the link:
 * within 6 %). */
static void test_lone_flow_at_line_rate(void **state)
{
    (void)state;
    for (int cc = 0; cc < COMET_CC_COUNT; cc++) {
        comet_system s;
        toy_bare_system(&s, "two");
        add_dim(&s, "sw", 2, COMET_TOPO_SWITCH, 50e9, 2e-6, (comet_cc_scheme)cc);
        int64_t from = 0, to = 1;
        comet_flow_result r;
        double t = sends(&s, &from, &to, 1, 64 * MIB, &r);
        double want = 64 * MIB / 50e9 + 2e-6; /* two links of a/2 */
        assert_close(t, want, cc == COMET_CC_HPCC ? 0.06 : 1e-9);
        assert_true(r.cc.fluid == (cc != COMET_CC_NONE));
        if (cc != COMET_CC_NONE) {
            assert_true(r.cc.peak_queue == 0.0);
            assert_true(r.cc.pause_time == 0.0);
            assert_int_equal(r.cc.flows_done, 1);
            assert_close(r.cc.fct_max, t, 1e-9);
        }
    }
}

/* N-to-1 incast under PFC alone, lossless: the receiver's port is busy
 * throughout, so it ends at N size / B as max-min does; the queue behind
 * it is held near N xoff (each sender's ingress counter at xoff, plus at
 * most one step of its line rate before the PAUSE lands); every sender
 * is paused (N-1)/N of the time. */
static void test_incast_pfc_closed_forms(void **state)
{
    (void)state;
    const int n = 8;
    const double B = 50e9, S = 64 * MIB, xoff = 512e3, step = 1e-6;
    comet_flow_result r;
    double ideal = incast(COMET_CC_NONE, n, S, B, &r);
    assert_close(ideal, n * S / B, 1e-9);
    double t = incast(COMET_CC_PFC, n, S, B, &r);
    assert_close(t, n * S / B, 1e-6);
    assert_true(r.cc.peak_queue >= n * xoff);
    assert_true(r.cc.peak_queue <= n * (xoff + B * step));
    /* every sender's link paused (n-1)/n of the run, the receiver's never */
    assert_int_equal(r.cc.paused_links, n);
    assert_close(r.cc.pause_time, n * (n - 1.0) / n * t, 0.02);
    assert_close(r.cc.max_pause, (n - 1.0) / n * t, 0.02);
    /* all senders share the port fairly: they end together */
    assert_close(r.cc.fct_min, r.cc.fct_max, 1e-6);
}

/* Congestion control against PFC alone on the same incast: DCQCN and
 * HPCC cut the PFC pause time and the standing queue. HPCC holds the
 * port near eta and ends within 2 % of the lossless bound; DCQCN with
 * its published (40 Gb/s era) parameters overshoots its cut and recovers
 * at R_AI, so it leaves the port idle part of the time (docs/roce.md). */
static void test_incast_congestion_control_cuts_queue_and_pauses(void **state)
{
    (void)state;
    const int n = 8;
    const double B = 50e9, S = 64 * MIB;
    comet_flow_result pfc, dcqcn, hpcc;
    incast(COMET_CC_PFC, n, S, B, &pfc);
    double t_dcqcn = incast(COMET_CC_DCQCN, n, S, B, &dcqcn);
    double t_hpcc = incast(COMET_CC_HPCC, n, S, B, &hpcc);
    printf("incast: pause pfc %.4f dcqcn %.4f hpcc %.4f ms; mean queue %.0f %.0f %.0f KB; "
           "peak %.0f %.0f %.0f KB; t dcqcn %.4f hpcc %.4f ms\n",
           pfc.cc.pause_time * 1e3, dcqcn.cc.pause_time * 1e3, hpcc.cc.pause_time * 1e3,
           pfc.cc.mean_queue / 1e3, dcqcn.cc.mean_queue / 1e3, hpcc.cc.mean_queue / 1e3,
           pfc.cc.peak_queue / 1e3, dcqcn.cc.peak_queue / 1e3, hpcc.cc.peak_queue / 1e3,
           t_dcqcn * 1e3, t_hpcc * 1e3);
    assert_true(dcqcn.cc.pause_time < 0.05 * pfc.cc.pause_time);
    assert_true(hpcc.cc.pause_time < 0.05 * pfc.cc.pause_time);
    assert_true(dcqcn.cc.mean_queue < 0.5 * pfc.cc.mean_queue);
    assert_true(hpcc.cc.mean_queue < 0.5 * pfc.cc.mean_queue);
    assert_true(hpcc.cc.peak_queue < 0.5 * pfc.cc.peak_queue);
    assert_close(t_hpcc, n * S / B, 0.02);
    assert_true(t_dcqcn >= n * S / B * (1.0 - 1e-9));
    assert_true(t_dcqcn < 2.0 * n * S / B);
}

/* A ring all-reduce on a non-blocking fat tree meets no congestion: PFC
 * and DCQCN end exactly as the ideal max-min flows (no queue, no mark, no
 * pause), HPCC within 3 % (it paces at eta of the port). */
static void test_ring_on_a_non_blocking_tree_is_the_same_under_every_scheme(void **state)
{
    (void)state;
    comet_flow_result r;
    double t[COMET_CC_COUNT];
    for (int rt = 0; rt < 2; rt++)
        for (int cc = 0; cc < COMET_CC_COUNT; cc++) {
            t[cc] = on_tree((comet_cc_scheme)cc, 64, 16, 1, (comet_routing)rt,
                            COMET_COLL_ALL_REDUCE, 64, 64 * MIB, &r);
            if (cc != COMET_CC_NONE) {
                assert_true(r.cc.pause_time == 0.0);
                assert_true(r.cc.peak_queue < 1e3);
            }
            assert_close(t[cc], t[COMET_CC_NONE], cc == COMET_CC_HPCC ? 0.03 : 1e-6);
        }
    /* the ring's closed form, 2 (n-1) steps of S/n at B and a route's
     * latency each (1 us within a leaf, 2 across), between the two */
    double x = 64 * MIB / 64 / 50e9;
    assert_true(t[COMET_CC_NONE] > 2.0 * 63 * (x + 1e-6));
    assert_true(t[COMET_CC_NONE] < 2.0 * 63 * (x + 2e-6));
}

/* An all-to-all across a 3:1 oversubscribed spine: max-min shares the
 * uplinks ideally; PFC alone pauses the NPUs' ports behind the full
 * uplink queues, which stalls their traffic to their own leaf too
 * (head-of-line blocking), and is well over the ideal; HPCC keeps the
 * queues short, never pauses and beats PFC. */
static void test_all_to_all_over_an_oversubscribed_spine(void **state)
{
    (void)state;
    comet_flow_result r[COMET_CC_COUNT];
    double t[COMET_CC_COUNT];
    for (int cc = 0; cc < COMET_CC_COUNT; cc++)
        t[cc] = on_tree((comet_cc_scheme)cc, 64, 16, 3, COMET_ROUTE_SPRAY, COMET_COLL_ALL_TO_ALL,
                        64, 64 * MIB, &r[cc]);
    printf("a2a 3:1: none %.4f pfc %.4f dcqcn %.4f hpcc %.4f ms; pause %.3f %.3f %.3f ms\n",
           t[0] * 1e3, t[1] * 1e3, t[2] * 1e3, t[3] * 1e3, r[1].cc.pause_time * 1e3,
           r[2].cc.pause_time * 1e3, r[3].cc.pause_time * 1e3);
    assert_true(t[COMET_CC_PFC] > 1.3 * t[COMET_CC_NONE]);
    assert_true(r[COMET_CC_PFC].cc.pause_time > 0.0);
    assert_true(t[COMET_CC_HPCC] < 0.9 * t[COMET_CC_PFC]);
    assert_true(r[COMET_CC_HPCC].cc.pause_time == 0.0);
    assert_true(r[COMET_CC_HPCC].cc.peak_queue < 0.5 * r[COMET_CC_PFC].cc.peak_queue);
    for (int cc = 0; cc < COMET_CC_COUNT; cc++)
        assert_true(t[cc] >= t[COMET_CC_NONE] * (1.0 - 1e-9));
}

/* Two jobs on one spine: job A sends 3 flows from leaf 0 to leaf 1, job B
 * is an 8-to-1 incast from leaves 2 and 3 into another NPU of leaf 1.
 * Max-min gives A's flows their ports (S / B). Under PFC alone the
 * incast's queue pauses the spine's link into leaf 1, which carries A's
 * flows too: A, an innocent job, is slowed (congestion spreading). HPCC
 * cuts B's senders within an RTT, before the pause, and gives A back its
 * time. DCQCN reacts over its 50 us CNP interval: the pause comes first,
 * A's bytes queue at the spine behind B's and get marked too (the victim
 * flow problem), and A stays slow (docs/roce.md). */
static void test_two_jobs_share_a_spine(void **state)
{
    (void)state;
    const double S = 32 * MIB, B = 50e9;
    int64_t fa[3] = {0, 1, 2}, ta[3] = {4, 6, 7};
    int64_t fb[8], tb[8];
    for (int i = 0; i < 8; i++) {
        fb[i] = 8 + i;
        tb[i] = 5;
    }
    double a[COMET_CC_COUNT], b[COMET_CC_COUNT];
    comet_flow_result r[COMET_CC_COUNT];
    for (int cc = 0; cc < COMET_CC_COUNT; cc++) {
        comet_system s;
        toy_bare_system(&s, "jobs");
        comet_net_dim *d = add_dim(&s, "ib", 32, COMET_TOPO_FAT_TREE, B, 1e-6, (comet_cc_scheme)cc);
        d->shape.tiers = 2;
        d->shape.radix = 8;
        d->shape.routing = COMET_ROUTE_SPRAY;
        two_jobs(&s, fa, ta, 3, fb, tb, 8, S, &a[cc], &b[cc], &r[cc]);
    }
    printf("two jobs: A none %.4f pfc %.4f dcqcn %.4f hpcc %.4f ms; B %.4f %.4f %.4f %.4f ms\n",
           a[0] * 1e3, a[1] * 1e3, a[2] * 1e3, a[3] * 1e3, b[0] * 1e3, b[1] * 1e3, b[2] * 1e3,
           b[3] * 1e3);
    assert_close(a[COMET_CC_NONE], S / B + 2e-6, 1e-6);
    assert_close(b[COMET_CC_NONE], 8 * S / B + 2e-6, 1e-6);
    assert_true(a[COMET_CC_PFC] > 4.0 * a[COMET_CC_NONE]);
    assert_true(r[COMET_CC_PFC].cc.pause_time > 0.0);
    assert_close(b[COMET_CC_PFC], b[COMET_CC_NONE], 0.01); /* the port stays busy */
    assert_close(a[COMET_CC_HPCC], a[COMET_CC_NONE], 0.2);
    assert_close(b[COMET_CC_HPCC], b[COMET_CC_NONE], 0.05);
    assert_true(r[COMET_CC_HPCC].cc.pause_time == 0.0);
    assert_true(a[COMET_CC_DCQCN] > 4.0 * a[COMET_CC_NONE]);
    assert_true(b[COMET_CC_DCQCN] < 2.0 * b[COMET_CC_NONE]);
}

/* A cyclic buffer dependency: four NPUs on a one-way ring each send two
 * hops on, with PFC thresholds of a few KB. Every link's ingress fills
 * with bytes waiting behind the next link, which is paused for the same
 * reason: a PFC deadlock, refused with its cycle of links named, not a
 * hang. */
static void test_pfc_deadlock_is_named(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ring4");
    comet_net_dim *d = add_dim(&s, "r", 4, COMET_TOPO_RING, 50e9, 1e-6, COMET_CC_PFC);
    d->shape.unidirectional = true;
    d->cc.mtu = 1024;
    d->cc.xoff = 8e3;
    d->cc.xon = 4e3;
    comet_fabric *f = test_fabric_of(&s);
    comet_error err;
    comet_fabric_run *r;
    assert_int_equal(comet_fabric_run_new(f, &s, 0, &r, &err), COMET_OK);
    int64_t from[4] = {0, 1, 2, 3}, to[4] = {2, 3, 0, 1}, id;
    assert_int_equal(comet_fabric_run_sends(r, from, to, 4, 64 * MIB, &id, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_finish(r, &err), COMET_EINPUT);
    printf("%s\n", err.message);
    assert_non_null(strstr(err.message, "PFC deadlock"));
    assert_non_null(strstr(err.message, "4 paused links"));
    assert_non_null(strstr(err.message, "npu 0 -> npu 1"));
    assert_non_null(strstr(err.message, "4 flows stalled"));
    assert_string_equal(err.key, "congestion_control");
    comet_fabric_run_free(r);
    /* the same ring with the default thresholds runs through */
    d->cc = (comet_cc_params){.scheme = COMET_CC_PFC};
    comet_flow_result res;
    double t = sends(&s, from, to, 4, 64 * MIB, &res);
    assert_true(t > 0.0 && isfinite(t));
    comet_fabric_free(f);
}

/* A run past max_time is refused naming the key. */
static void test_max_time_bounds_a_run(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "two");
    comet_net_dim *d = add_dim(&s, "sw", 2, COMET_TOPO_SWITCH, 50e9, 0.0, COMET_CC_DCQCN);
    d->cc.max_time = 1e-4;
    comet_fabric *f = test_fabric_of(&s);
    comet_error err;
    comet_fabric_run *r;
    assert_int_equal(comet_fabric_run_new(f, &s, 0, &r, &err), COMET_OK);
    int64_t from = 0, to = 1, id;
    assert_int_equal(comet_fabric_run_sends(r, &from, &to, 1, GIB, &id, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_finish(r, &err), COMET_EINPUT);
    assert_string_equal(err.key, "congestion_control.max_time");
    assert_true(comet_fabric_run_now(r) <= 1e-4 + 1e-6);
    comet_fabric_run_free(r);
    comet_fabric_free(f);
}

/* The parameters' checks, as the fabric build and the config reader run
 * them: the key at fault named. */
static void test_parameter_errors(void **state)
{
    (void)state;
    struct {
        comet_cc_params p;
        const char *key;
    } bad[] = {
        {{.scheme = COMET_CC_DCQCN, .kmin = 400e3, .kmax = 200e3}, "kmin"},
        {{.scheme = COMET_CC_PFC, .xoff = 100e3, .xon = 200e3}, "xon"},
        {{.scheme = COMET_CC_PFC, .buffer = 1000}, "buffer"},
        {{.scheme = COMET_CC_HPCC, .xoff = 32e6}, "xoff"},
        {{.scheme = COMET_CC_DCQCN, .g = 2}, "g"},
        {{.scheme = COMET_CC_HPCC, .eta = 1.5}, "eta"},
        {{.scheme = COMET_CC_PFC, .step = 1.0}, "step"},
    };
    char msg[200];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        comet_cc_defaults(&bad[i].p, 50e9);
        const char *key = comet_cc_problem(&bad[i].p, msg, sizeof msg);
        assert_non_null(key);
        assert_string_equal(key, bad[i].key);
    }
    /* the registry holds a member for every scheme, each its own */
    static const char *const names[COMET_CC_COUNT] = {"none", "pfc", "dcqcn", "hpcc"};
    for (int i = 0; i < COMET_CC_COUNT; i++) {
        assert_non_null(cc_schemes[i]);
        assert_int_equal(cc_schemes[i]->id, i);
        assert_string_equal(comet_cc_scheme_name((comet_cc_scheme)i), names[i]);
    }
    assert_false(cc_scheme_of(COMET_CC_NONE)->fluid);
    comet_cc_params ok = {.scheme = COMET_CC_DCQCN};
    comet_cc_defaults(&ok, 50e9);
    assert_null(comet_cc_problem(&ok, msg, sizeof msg));
    assert_close(ok.g, 1.0 / 256.0, 1e-12);
    assert_close(ok.kmin, 150e3, 1e-12);
    /* the fabric refuses it with the dimension's key */
    comet_system s;
    toy_bare_system(&s, "bad");
    comet_net_dim *d = add_dim(&s, "sw", 4, COMET_TOPO_SWITCH, 50e9, 0.0, COMET_CC_DCQCN);
    d->cc.kmin = 400e3;
    d->cc.kmax = 200e3;
    comet_fabric *f = NULL;
    comet_error err;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_EINPUT);
    assert_string_equal(err.key, "system.network[0].congestion_control.kmin");
}

/* The congestion_control key of a network dimension in a file: a name
 * alone or a mapping, read back as written, and each bad value a one-line
 * error at its file:line:column with its key. */
static const char *cc_doc(const char *cc)
{
    static char doc[1024];
    snprintf(doc, sizeof doc,
             "system:\n"
             "  compute: {matrix: {bf16: \"989 TFLOPS\"}}\n"
             "  hbm: {capacity: \"80 GiB\", bandwidth: \"3 TB/s\"}\n"
             "  network:\n"
             "    - name: roce\n"
             "      size: 8\n"
             "      bandwidth: \"400 Gb/s\"\n"
             "      congestion_control:%s\n",
             cc);
    return doc;
}

static void expect_config_error(const char *cc, const char *expected)
{
    const char *doc = cc_doc(cc);
    comet_job *job = malloc(sizeof *job);
    assert_non_null(job);
    comet_job_init(job);
    comet_error err;
    comet_error_clear(&err);
    assert_int_equal(comet_config_read_text(doc, strlen(doc), "roce.yaml", job, &err),
                     COMET_EINPUT);
    char line[600];
    assert_string_equal(comet_error_format(&err, line, sizeof line), expected);
    free(job);
}

static void test_config_key(void **state)
{
    (void)state;
    comet_job *job = malloc(sizeof *job);
    assert_non_null(job);
    comet_job_init(job);
    comet_error err;
    const char *doc = cc_doc(" dcqcn");
    assert_int_equal(comet_config_read_text(doc, strlen(doc), "roce.yaml", job, &err), COMET_OK);
    assert_int_equal(job->system.dims[0].cc.scheme, COMET_CC_DCQCN);
    assert_true(job->system.dims[0].cc.kmin == 0.0); /* the default, filled at build */
    comet_job_init(job);
    doc = cc_doc("\n        scheme: hpcc\n        xoff: \"256 KB\"\n        eta: 0.9");
    assert_int_equal(comet_config_read_text(doc, strlen(doc), "roce.yaml", job, &err), COMET_OK);
    assert_int_equal(job->system.dims[0].cc.scheme, COMET_CC_HPCC);
    assert_close(job->system.dims[0].cc.xoff, 256e3, 1e-12);
    assert_close(job->system.dims[0].cc.eta, 0.9, 1e-12);
    /* written back and read again: the same parameters */
    comet_buf b;
    comet_buf_init(&b);
    assert_int_equal(comet_system_write_yaml(&job->system, &b, &err), COMET_OK);
    assert_non_null(strstr(b.data, "congestion_control:"));
    comet_job *again = malloc(sizeof *again);
    assert_non_null(again);
    comet_job_init(again);
    assert_int_equal(comet_config_read_text(b.data, b.len, "back.yaml", again, &err), COMET_OK);
    assert_memory_equal(&again->system.dims[0].cc, &job->system.dims[0].cc, sizeof(comet_cc_params));
    comet_buf_free(&b);
    free(again);
    free(job);
    expect_config_error("\n        scheme: dcqcn\n        kmin: \"400 KB\"\n        kmax: \"200 KB\"",
                        "roce.yaml:10:15: system.network[0].congestion_control.kmin: kmin "
                        "(400000 bytes) is above kmax (200000 bytes)");
    expect_config_error("\n        xoff: \"100 KB\"\n        xon: \"200 KB\"",
                        "roce.yaml:10:14: system.network[0].congestion_control.xon: xon "
                        "(200000 bytes) is above xoff (100000 bytes)");
    expect_config_error("\n        scheme: pfc\n        buffer: \"1 KB\"",
                        "roce.yaml:10:17: system.network[0].congestion_control.buffer: a buffer "
                        "of 1000 bytes is smaller than one MTU (4096 bytes)");
    expect_config_error("\n        scheme: dcqcn\n        rai: \"0 Gb/s\"",
                        "roce.yaml:10:14: system.network[0].congestion_control.rai: expected a "
                        "positive bandwidth, got \"0 Gb/s\"");
    expect_config_error(" dcqnc", "roce.yaml:8:27: system.network[0].congestion_control: unknown "
                                   "value \"dcqnc\" (did you mean \"dcqcn\"?)");
}

/* Halving the time step moves the incast's figures little: the fluid
 * model has converged at the default step (docs/roce.md, error). */
static void test_time_step_convergence(void **state)
{
    (void)state;
    double t[2], pause[2];
    for (int k = 0; k < 2; k++) {
        comet_system s;
        toy_bare_system(&s, "incast");
        comet_net_dim *d = add_dim(&s, "sw", 9, COMET_TOPO_SWITCH, 50e9, 0.0, COMET_CC_DCQCN);
        d->cc.step = k ? 0.5e-6 : 1e-6;
        int64_t from[8], to[8];
        for (int i = 0; i < 8; i++) {
            from[i] = i + 1;
            to[i] = 0;
        }
        comet_flow_result r;
        t[k] = sends(&s, from, to, 8, 64 * MIB, &r);
        pause[k] = r.cc.pause_time;
    }
    printf("step 1 us: %.4f ms (pause %.4f); 0.5 us: %.4f ms (pause %.4f)\n", t[0] * 1e3,
           pause[0] * 1e3, t[1] * 1e3, pause[1] * 1e3);
    assert_close(t[0], t[1], 0.05);
}

void suite_roce(test_tally *t)
{
    const struct CMUnitTest roce[] = {
        cmocka_unit_test(test_lone_flow_at_line_rate),
        cmocka_unit_test(test_incast_pfc_closed_forms),
        cmocka_unit_test(test_incast_congestion_control_cuts_queue_and_pauses),
        cmocka_unit_test(test_ring_on_a_non_blocking_tree_is_the_same_under_every_scheme),
        cmocka_unit_test(test_all_to_all_over_an_oversubscribed_spine),
        cmocka_unit_test(test_two_jobs_share_a_spine),
        cmocka_unit_test(test_pfc_deadlock_is_named),
        cmocka_unit_test(test_max_time_bounds_a_run),
        cmocka_unit_test(test_parameter_errors),
        cmocka_unit_test(test_config_key),
        cmocka_unit_test(test_time_step_convergence),
    };
    RUN_GROUP(t, roce);
}
