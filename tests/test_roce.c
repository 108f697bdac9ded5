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

#define GIB 1073741824.0
#define MIB 1048576.0

static void base_system(comet_system *s, const char *name)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->compute.matrix_flops[COMET_DTYPE_BF16] = 100e12;
    s->hbm.present = true;
    s->hbm.capacity = 80.0 * GIB;
    s->hbm.bandwidth = 2e12;
    s->collective_chunks = 1;
}

static comet_net_dim *add_dim(comet_system *s, const char *name, int64_t size, comet_topology t,
                              double bw, double lat, comet_cc_scheme cc)
{
    comet_net_dim *d = &s->dims[s->n_dims++];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->size = size;
    d->topology = t;
    d->algorithm = COMET_ALGO_RING;
    d->bandwidth = bw;
    d->latency = lat;
    d->efficiency = 1.0;
    d->cc.scheme = cc;
    return d;
}

static comet_fabric *fabric_of(const comet_system *s)
{
    comet_error err;
    comet_fabric *f = NULL;
    if (comet_fabric_build(s, 0, &f, &err))
        fail_msg("%s: %s: %s", s->name, err.key, err.message);
    return f;
}

/* n sends from[i] -> to[i] of `bytes` each, run to their end: the time,
 * and the run's figures into out. */
static double sends(const comet_system *s, const int64_t *from, const int64_t *to, int64_t n,
                    double bytes, comet_flow_result *out)
{
    comet_fabric *f = fabric_of(s);
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
    base_system(&s, "incast");
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
    base_system(&s, "tree");
    comet_net_dim *d = add_dim(&s, "ib", n, COMET_TOPO_FAT_TREE, 50e9, 1e-6, cc);
    d->shape.tiers = 2;
    d->shape.radix = radix;
    d->shape.oversubscription[0] = o;
    d->shape.routing = rt;
    comet_fabric *f = fabric_of(&s);
    comet_flow_options opt;
    comet_flow_options_defaults(&opt);
    int64_t sp[COMET_MAX_DIMS] = {span};
    comet_error err;
    if (comet_fabric_collective(f, &s, sp, c, bytes, &opt, out, &err))
        fail_msg("%s", err.message);
    comet_fabric_free(f);
    return out->time;
}

static void show(const char *what, comet_cc_scheme cc, double t, const comet_flow_result *r)
{
    printf("%-10s %-6s t %.6f ms steps %llu peakq %.0f KB pause %.3f ms pauses %lld fct %.3f/%.3f\n",
           what, comet_cc_scheme_name(cc), t * 1e3, (unsigned long long)r->cc.steps,
           r->cc.peak_queue / 1e3, r->cc.pause_time * 1e3, (long long)r->cc.pauses,
           r->cc.fct_mean * 1e3, r->cc.fct_max * 1e3);
}

static void test_probe2(void **state)
{
    (void)state;
    comet_flow_result r;
    for (int cc = 0; cc < COMET_CC_COUNT; cc++) {
        double t = on_tree((comet_cc_scheme)cc, 64, 16, 1, COMET_ROUTE_SPRAY, COMET_COLL_ALL_REDUCE, 64, 64 * MIB, &r);
        show("ring spray", (comet_cc_scheme)cc, t, &r);
        t = on_tree((comet_cc_scheme)cc, 64, 16, 1, COMET_ROUTE_ECMP, COMET_COLL_ALL_REDUCE, 64, 64 * MIB, &r);
        show("ring ecmp", (comet_cc_scheme)cc, t, &r);
        t = on_tree((comet_cc_scheme)cc, 64, 16, 3, COMET_ROUTE_SPRAY, COMET_COLL_ALL_TO_ALL, 64, 64 * MIB, &r);
        show("a2a 3:1", (comet_cc_scheme)cc, t, &r);
        t = on_tree((comet_cc_scheme)cc, 64, 16, 3, COMET_ROUTE_ECMP, COMET_COLL_ALL_TO_ALL, 64, 64 * MIB, &r);
        show("a2a 3:1 e", (comet_cc_scheme)cc, t, &r);
    }
}

static void test_probe(void **state)
{
    (void)state;
    comet_flow_result r;
    for (int cc = 0; cc < COMET_CC_COUNT; cc++) {
        double t = incast((comet_cc_scheme)cc, 8, 64 * MIB, 50e9, &r);
        printf("%-6s t %.6f ms (ideal %.6f) steps %llu peakq %.0f KB pause %.3f ms (max %.3f) pauses %lld fct %.3f/%.3f/%.3f\n",
               comet_cc_scheme_name((comet_cc_scheme)cc), t * 1e3, 8 * 64 * MIB / 50e9 * 1e3,
               (unsigned long long)r.cc.steps, r.cc.peak_queue / 1e3, r.cc.pause_time * 1e3,
               r.cc.max_pause * 1e3, (long long)r.cc.pauses, r.cc.fct_min * 1e3,
               r.cc.fct_mean * 1e3, r.cc.fct_max * 1e3);
    }
}

void suite_roce(test_tally *t)
{
    const struct CMUnitTest roce[] = {
        cmocka_unit_test(test_probe),
        cmocka_unit_test(test_probe2),
    };
    RUN_GROUP(t, roce);
}
