/* The fabric and its flow-level simulation (src/network/fabric*.c,
 * flows.c, topo_*.c): closed forms the flows must reproduce (the ring
 * all-reduce, two concurrent all-reduces taking twice as long, the
 * bisection bound of a torus all-to-all, a spine-bound oversubscribed
 * fat tree, in-network reduction's bytes), the estimator's topology-aware
 * closed forms against the flows on every topology kind, routes and link
 * counts worked out by hand, and the errors. */
#include "tests.h"

#include <math.h>
#include <string.h>

#include "comet/comet.h"
#include "toy.h"
#include "../src/network/families.h"

#define GIB 1073741824.0
#define MIB 1048576.0

static const comet_fabric_schedule one_chunk = {.chunks = 1, .concurrent = 1};

comet_fabric *test_fabric_of(const comet_system *s)
{
    comet_error err;
    comet_fabric *f = NULL;
    if (comet_fabric_build(s, 0, &f, &err))
        fail_msg("%s: %s: %s", s->name, err.key, err.message);
    return f;
}

/* The flows' time of collective c of `bytes` per NPU on every group of
 * span[] (or the first only), `concurrent` at once. */
static double flows(const comet_system *s, const int64_t *span, comet_collective c, double bytes,
                    int concurrent, bool one_group, comet_flow_result *out)
{
    comet_error err;
    comet_error_clear(&err);
    comet_fabric *f = test_fabric_of(s);
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    o.concurrent = concurrent;
    o.one_group = one_group;
    comet_flow_result r;
    comet_status st = comet_fabric_collective(f, s, span, c, bytes, &o, &r, &err);
    if (st)
        fail_msg("%s: %s", s->name, err.message);
    comet_fabric_free(f);
    if (out)
        *out = r;
    return r.time;
}

/* The flows' time of collective c of `bytes` per NPU on every group of
 * span[], the buffer cut into `chunks`. */
static double flows_in_chunks(const comet_system *s, const int64_t *span, comet_collective c,
                              double bytes, int64_t chunks)
{
    comet_error err;
    comet_error_clear(&err);
    comet_fabric *f = test_fabric_of(s);
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    o.chunks = chunks;
    comet_flow_result r;
    if (comet_fabric_collective(f, s, span, c, bytes, &o, &r, &err))
        fail_msg("%s: %s", s->name, err.message);
    comet_fabric_free(f);
    comet_flow_result_free(&r);
    return r.time;
}

/* The phase-level simulator's time (comet simulate --collective without
 * --flows): one representative NPU, one active chunk a dimension. */
static double phases(const comet_system *s, const int64_t *span, comet_collective c, double bytes)
{
    comet_error err;
    comet_error_clear(&err);
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    comet_sim_collective_result r;
    if (comet_sim_collective(s, span, c, bytes, &o, &r, &err))
        fail_msg("%s: %s", s->name, err.message);
    return r.time;
}

static void span_all(const comet_system *s, int64_t *span)
{
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        span[d] = d < s->n_dims ? s->dims[d].size : 1;
}

/* ---- closed forms ----------------------------------------------------------- */

/* Ring all-reduce on an 8-NPU bidirectional ring: 2(n-1) steps of
 * a + S/(nB) (two counter-rotating rings, half the data each, B/2 a way),
 * the closed form exactly; a unidirectional ring of the same B the same. */
static void test_ring_all_reduce(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ring8");
    comet_net_dim *d = toy_add_dim(&s, "r", 8, COMET_TOPO_RING, COMET_ALGO_RING, 50e9, 500e-9);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    double want = 14.0 * (500e-9 + GIB / (8.0 * 50e9));
    comet_flow_result r;
    assert_close(flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r), want, 1e-8);
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), want, 1e-12);
    /* 2 rings x 8 NPUs x 14 steps */
    assert_int_equal(r.flows, 224);
    /* every link carries 14 blocks of S/16 and is busy the whole time,
     * bar the latencies */
    assert_close(r.hot[0].bytes, 14.0 * GIB / 16.0, 1e-12);
    assert_close(r.hot[0].utilization, 1.0, 1e-3);
    d->shape.unidirectional = true;
    assert_close(flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL), want, 1e-8);
    /* on a switch, 4 channels (NCCL's rings, a connection each) move the
     * same bytes in 4 times the flows, in the same time */
    d->topology = COMET_TOPO_SWITCH;
    d->shape.unidirectional = false;
    comet_flow_result one, four;
    double t1 = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &one);
    d->shape.channels = 4;
    assert_close(flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &four), t1, 1e-9);
    assert_int_equal(four.flows, 4 * one.flows);
}

/* Runs r until transfer `id` ends, or until the clock would pass `until`
 * (then it stops there); returns the time id ended, or -1. */
static double run_until(comet_fabric_run *r, int64_t id, double until, double *other_end)
{
    comet_error err;
    for (;;) {
        double at;
        if (comet_fabric_run_next(r, &at, &err))
            fail_msg("%s", err.message);
        if (!isfinite(at) || at > until) {
            if (isfinite(until))
                comet_fabric_run_advance(r, until);
            return -1.0;
        }
        const int64_t *done;
        int n;
        if (comet_fabric_run_step(r, &done, &n, &err))
            fail_msg("%s", err.message);
        double found = -1.0;
        for (int i = 0; i < n; i++) {
            if (done[i] == id)
                found = comet_fabric_run_now(r);
            else if (other_end)
                *other_end = comet_fabric_run_now(r);
        }
        comet_fabric_run_release(r);
        if (found >= 0.0)
            return found;
    }
}

/* Rooted collectives and the barrier (docs/collectives.md, "Rooted
 * collectives"), rooted at each group's first member: each topology's
 * closed form, worked out here from what the root's links carry (x =
 * S/B, a the latency of a hop, one chunk), and the flows running the
 * same plan. A switch scatters the root's (n-1)/n S through its port in
 * one hop and broadcasts down a chain of n pieces (a reduce up it): the
 * head sends piece q+1 once piece q has arrived, 2(n-1) steps of a +
 * x/n, the ring all-reduce's time. A barrier is an all-reduce of 4
 * bytes. */
static void test_rooted_collectives(void **state)
{
    (void)state;
    const double a = 1e-6, x = GIB / 50e9;
    comet_system s;
    toy_bare_system(&s, "sw8");
    comet_net_dim *d = toy_add_dim(&s, "s", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 0.0);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    double ar = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(ar, 14.0 / 8.0 * x, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB), ar, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_REDUCE, GIB), ar, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_GATHER, GIB), 7.0 / 8.0 * x, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, GIB), 7.0 / 8.0 * x, 1e-12);
    assert_close(comet_busbw_factor(COMET_COLL_BROADCAST, 8), 1.0, 1e-12);
    assert_close(comet_busbw_factor(COMET_COLL_GATHER, 8), 7.0 / 8.0, 1e-12);
    comet_flow_result r;
    assert_close(flows(&s, span, COMET_COLL_BROADCAST, GIB, 1, false, &r), ar, 1e-9);
    assert_int_equal(r.flows, 7 * 8); /* 7 hops, 8 pieces */
    assert_close(flows(&s, span, COMET_COLL_REDUCE, GIB, 1, false, NULL), ar, 1e-9);
    assert_close(flows(&s, span, COMET_COLL_SCATTER, GIB, 1, false, &r), 7.0 / 8.0 * x, 1e-9);
    assert_int_equal(r.flows, 7);
    assert_close(flows(&s, span, COMET_COLL_GATHER, GIB, 1, false, NULL), 7.0 / 8.0 * x, 1e-9);
    /* with latency: 2(n-1) steps for the broadcast, one for the scatter */
    d->latency = a;
    double bcast = 14.0 * (a + x / 8.0);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB), bcast, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, GIB), a + 7.0 / 8.0 * x,
                 1e-12);
    assert_close(flows(&s, span, COMET_COLL_BROADCAST, GIB, 1, false, NULL), bcast, 1e-6);
    /* a barrier: an all-reduce of 4 bytes, latency-bound */
    double barrier = comet_collective_time(&s, span, COMET_COLL_BARRIER, 0.0);
    assert_close(barrier, 14.0 * (a + 4.0 / (8.0 * 50e9)), 1e-9);
    assert_close(flows(&s, span, COMET_COLL_BARRIER, GIB, 1, false, NULL), barrier, 1e-9);
    /* a bidirectional ring: the root's pieces go the shorter way, n/2 of
     * them on its fuller link of B/2, the farthest n/2 hops away, the
     * nearest moving while the farther ones' latencies run: max(a + x,
     * n/2 a + 2x/n) (the all-gather's (n-1)/n x, +14 % at 8; it was n/2 a
     * + x); of 7, 3 a way: a + 6/7 x. A broadcast (reduce) is two
     * counter-rotating chains of n pieces, 2(n-1) steps of a + x/n, as the
     * ring all-reduce */
    d->topology = COMET_TOPO_RING;
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, GIB), a + x, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB),
                 14.0 * (a + x / 8.0), 1e-12);
    d->latency = 0.0;
    assert_close(flows(&s, span, COMET_COLL_BROADCAST, GIB, 1, false, NULL), 14.0 / 8.0 * x, 1e-9);
    assert_close(flows(&s, span, COMET_COLL_REDUCE, GIB, 1, false, NULL), 14.0 / 8.0 * x, 1e-9);
    assert_close(flows(&s, span, COMET_COLL_GATHER, GIB, 1, false, NULL), x, 1e-9);
    d->size = 7;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_GATHER, GIB), 6.0 / 7.0 * x, 1e-12);
    assert_close(flows(&s, span, COMET_COLL_SCATTER, GIB, 1, false, NULL), 6.0 / 7.0 * x, 1e-9);
    /* one way round (8 NPUs): all n-1 pieces on the root's one link of B,
     * the last n-1 hops away: max(a + 7/8 x, 7a + x/8), the flows' time
     * (it was 7a + 7/8 x); the reduce's chain runs forward too */
    d->size = 8;
    d->shape.unidirectional = true;
    d->latency = a;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, GIB), a + 7.0 / 8.0 * x,
                 1e-12);
    assert_close(flows(&s, span, COMET_COLL_SCATTER, GIB, 1, false, NULL), a + 7.0 / 8.0 * x, 1e-9);
    double tiny = 8.0 * 64.0; /* 64 bytes a piece: latency-bound */
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, tiny),
                 7.0 * a + 64.0 / 50e9, 1e-12);
    assert_close(flows(&s, span, COMET_COLL_SCATTER, tiny, 1, false, NULL), 7.0 * a + 64.0 / 50e9,
                 1e-9);
    d->latency = 0.0;
    assert_close(flows(&s, span, COMET_COLL_REDUCE, GIB, 1, false, NULL), 14.0 / 8.0 * x, 1e-9);
    /* a mesh line of 16 (B/2 a link): the root at its end sends all 15
     * pieces of a scatter on one link, 2 (15/16) x; a broadcast is one
     * chain of 2n pieces of S/(2n), 2n steps for the root's and n - 2 for
     * the last piece's way on: (3n - 2)(a + x/n), 2.875 x where the ring
     * all-reduce it was priced as takes 3.75 x */
    d->topology = COMET_TOPO_MESH;
    d->size = 16;
    d->shape.unidirectional = false;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, GIB), 30.0 / 16.0 * x, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB), 46.0 / 16.0 * x,
                 1e-12);
    assert_close(flows(&s, span, COMET_COLL_BROADCAST, GIB, 1, false, NULL), 46.0 / 16.0 * x, 1e-9);
    d->latency = a;
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB),
                 46.0 * (a + x / 16.0), 1e-12);
    /* a 3 x 3 x 3 torus (B/6 a link): part j of three scatters along axis
     * j, j+1, j+2 from the root, each axis's line sending 1 of 3 pieces
     * each way: (2/3)(1/3 + 1/9 + 1/27) 3 = 26/27 x, the least the root's
     * links can carry, where one scatter's dimension-order routes leave on
     * its axis-0 links (2 x); a broadcast is that and the all-gather,
     * 52/27 x, the all-reduce's; a 4 x 4 one (B/4 a link) sends 2 of 4
     * pieces the fuller way: (1 + 1/4) x, and the all-gather's 15/16 x */
    d->latency = 0.0;
    d->size = 27;
    d->topology = COMET_TOPO_TORUS;
    d->shape.n_axes = 3;
    d->shape.axes[0] = d->shape.axes[1] = d->shape.axes[2] = 3;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, GIB), 26.0 / 27.0 * x, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB),
                 comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), 1e-12);
    assert_close(flows(&s, span, COMET_COLL_BROADCAST, GIB, 1, false, NULL), 52.0 / 27.0 * x, 1e-9);
    assert_close(flows(&s, span, COMET_COLL_REDUCE, GIB, 1, false, NULL), 52.0 / 27.0 * x, 1e-9);
    d->size = 16;
    d->shape.n_axes = 2;
    d->shape.axes[0] = d->shape.axes[1] = 4;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_GATHER, GIB), 1.25 * x, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB), (1.25 + 15.0 / 16.0) * x,
                 1e-12);
    /* 3 x 4: part 0 scatters 2/3 x on axis 0 then 1/3 x on axis 1, part 1
     * 1 x on axis 1 then 1/6 x on axis 0; at 2/3 x part 0 joins part 1 on
     * the root's axis-1 links, which they share until 4/3 x, and part 1's
     * last phase runs alone: 1.5 x (the busiest axis: 4/3 x); the gather,
     * whose first phases run on every line, keeps to the busiest axis */
    d->size = 12;
    d->shape.axes[0] = 3;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_SCATTER, GIB), 1.5 * x, 1e-12);
    assert_close(flows(&s, span, COMET_COLL_SCATTER, GIB, 1, false, NULL), 1.5 * x, 1e-9);
    assert_close(comet_collective_time(&s, span, COMET_COLL_GATHER, GIB), 4.0 / 3.0 * x, 1e-12);
    assert_close(flows(&s, span, COMET_COLL_GATHER, GIB, 1, false, NULL), 4.0 / 3.0 * x, 1e-9);
    /* two dimensions: 8 x 16 switches, 450 and 50 GB/s: scatter (reduce-
     * scatter) on the inner one, the broadcast (reduce) on the outer, and
     * all-gather (gather) back */
    comet_system two;
    toy_bare_system(&two, "sw8x16");
    toy_add_dim(&two, "nvlink", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 450e9, 0.0);
    toy_add_dim(&two, "ib", 16, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 0.0);
    span_all(&two, span);
    const comet_collective rooted[] = {COMET_COLL_BROADCAST, COMET_COLL_REDUCE,
                                       COMET_COLL_SCATTER, COMET_COLL_GATHER};
    for (size_t i = 0; i < sizeof rooted / sizeof rooted[0]; i++) {
        double want = comet_collective_time(&two, span, rooted[i], 256.0 * 1048576.0);
        double got = flows(&two, span, rooted[i], 256.0 * 1048576.0, 1, false, NULL);
        printf("  %s on 8 x 16: flows %.6f ms, closed form %.6f ms\n",
               comet_collective_name(rooted[i]), got * 1e3, want * 1e3);
        assert_close(got, want, 1e-9);
    }
}

/* Chunks down a chain (docs/collectives.md, "Rooted collectives"): a
 * broadcast of k chunks of n pieces is one chain of k n pieces, k n + n -
 * 2 steps of x/(k n) (a switch of 16 at 4 chunks: 78/64 x where one chunk
 * after another took 30/16 x), the flows with it: each chain of a ring's
 * two takes the next chunk's pieces on once the last chunk's have passed
 * (they waited for the NPU's whole phase: +181 % at 8). A gather's member
 * sends the next chunk's piece once the chunk's gather is through (all
 * at once they shared the root's port: +49 % on 8 x 128 switches). */
static void test_rooted_chunks(void **state)
{
    (void)state;
    const double x = GIB / 100e9;
    comet_system s;
    toy_bare_system(&s, "sw16");
    comet_net_dim *d = toy_add_dim(&s, "s", 16, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 0.0);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    s.collective_chunks = 4;
    double chain = 78.0 / 64.0 * x;
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB), chain, 1e-12);
    assert_close(comet_collective_time(&s, span, COMET_COLL_REDUCE, GIB), chain, 1e-12);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_BROADCAST, GIB, 4), chain, 1e-9);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_REDUCE, GIB, 4), chain, 1e-9);
    /* the phase-level simulator's chunks follow each other down the chain
     * too (each frees the dimension once its head has sent its pieces;
     * it ran them one after another: 4 x (16 + 14)/64 x, +54 %) */
    assert_close(phases(&s, span, COMET_COLL_BROADCAST, GIB), chain, 1e-12);
    assert_close(phases(&s, span, COMET_COLL_REDUCE, GIB), chain, 1e-12);
    /* the scatter's chunks one after another: (n-1)/n x whatever k */
    assert_close(flows_in_chunks(&s, span, COMET_COLL_SCATTER, GIB, 4), 15.0 / 16.0 * x, 1e-9);
    /* a bidirectional ring of 8, two chains of S/2 at B/2: (32 + 6)/32 x;
     * with 1 us a hop every one of the 38 steps waits for it */
    d->topology = COMET_TOPO_RING;
    d->size = 8;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB), 38.0 / 32.0 * x,
                 1e-12);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_BROADCAST, GIB, 4), 38.0 / 32.0 * x, 1e-9);
    d->latency = 1e-6;
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB),
                 38.0 * (1e-6 + x / 32.0), 1e-12);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_BROADCAST, GIB, 4), 38.0 * (1e-6 + x / 32.0),
                 1e-6);
    assert_close(phases(&s, span, COMET_COLL_BROADCAST, GIB), 38.0 * (1e-6 + x / 32.0), 1e-12);
    /* a mesh line of 16: one chain of 2n pieces a chunk, 2n k + n - 2
     * steps of x/(2n k) at B/2 a link: 142/128 x 2 */
    d->latency = 0.0;
    d->topology = COMET_TOPO_MESH;
    d->size = 16;
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB), 142.0 / 64.0 * x,
                 1e-12);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_BROADCAST, GIB, 4), 142.0 / 64.0 * x, 1e-9);
    /* 8 x 128 switches (100 and 50 GB/s): the gather of 4 chunks, each
     * chunk's the 128's of S/8 (127/128 x/4 at half the bandwidth) then
     * the 8's of S (7/8 x/4), pipelined: their sum and 3 times the larger */
    comet_system two;
    toy_bare_system(&two, "sw8x128");
    toy_add_dim(&two, "a", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 0.0);
    toy_add_dim(&two, "b", 128, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 0.0);
    two.collective_chunks = 4;
    span_all(&two, span);
    double outer = 127.0 / 128.0 * x / 16.0, inner = 7.0 / 8.0 * x / 4.0;
    double gather = outer + inner + 3.0 * inner;
    assert_close(comet_collective_time(&two, span, COMET_COLL_GATHER, GIB), gather, 1e-12);
    assert_close(flows_in_chunks(&two, span, COMET_COLL_GATHER, GIB, 4), gather, 1e-9);
}

/* A 4 x 4 torus of 16 NPUs at 100 GB/s, latency a hop, in k chunks, its
 * span in span[]. */
static comet_net_dim *torus_4x4_in_chunks(comet_system *s, const char *name,
                                          comet_algorithm algo, double latency, int64_t k,
                                          int64_t span[COMET_MAX_DIMS])
{
    toy_bare_system(s, name);
    comet_net_dim *d = toy_add_dim(s, "a", 16, COMET_TOPO_TORUS, algo, 100e9, latency);
    d->shape.n_axes = 2;
    d->shape.axes[0] = d->shape.axes[1] = 4;
    s->collective_chunks = k;
    span_all(s, span);
    return d;
}

/* A ring all-reduce in k chunks with latency: each chunk's reduce-scatter
 * takes the dimension after the last chunk's (one chunk a phase), beside
 * the last chunk's all-gather, so their messages' latencies run side by
 * side and the chunks pay (k + 1)(n - 1) latencies, not 2k(n - 1) (the
 * transfer stays 2(n - 1)/n S/B). The estimate prices it so: on a switch
 * of 16 at 5 us, 64 MiB at 100 GB/s, 4 chunks, 15 (5 a + 8 t) with
 * t = S/(4 n B) a message; over an NVLink-like switch under a slower
 * switch or ring (1 us, 3 us) the inner dimension's reduce-scatter and
 * all-gather latencies likewise (they were 4 to 45 % over the flows):
 * equal under the switch, within 1 % under the ring (-0.3 % at 4 chunks,
 * +0.7 % at 16: the inner switch's bound takes its two passes' latencies
 * as one, the flows overlap them a little further). */
static void test_latency_in_chunks(void **state)
{
    (void)state;
    const double bytes = 64.0 * 1048576.0;
    comet_system one;
    toy_bare_system(&one, "switch16");
    toy_add_dim(&one, "a", 16, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 5e-6);
    one.collective_chunks = 4;
    int64_t span[COMET_MAX_DIMS];
    span_all(&one, span);
    double t = bytes / (4.0 * 16.0 * 100e9);
    double est = comet_collective_time(&one, span, COMET_COLL_ALL_REDUCE, bytes);
    assert_close(est, 15.0 * (5.0 * 5e-6 + 8.0 * t), 1e-12);
    assert_close(flows_in_chunks(&one, span, COMET_COLL_ALL_REDUCE, bytes, 4), est, 1e-6);
    one.collective_chunks = 16;
    est = comet_collective_time(&one, span, COMET_COLL_ALL_REDUCE, bytes);
    assert_close(flows_in_chunks(&one, span, COMET_COLL_ALL_REDUCE, bytes, 16), est, 1e-6);
    /* the ring schedule's all-to-all: pairwise rounds two at once through
     * the port (8 rounds' latencies of 15 a chunk), every block at once
     * over a fully-connected group (one); 16 chunks */
    est = comet_collective_time(&one, span, COMET_COLL_ALL_TO_ALL, bytes);
    assert_close(est, 16.0 * 8.0 * 5e-6 + 15.0 / 16.0 * bytes / 100e9, 1e-12);
    assert_close(flows_in_chunks(&one, span, COMET_COLL_ALL_TO_ALL, bytes, 16), est, 1e-6);
    comet_system fc;
    toy_bare_system(&fc, "fc8");
    toy_add_dim(&fc, "a", 8, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_RING, 100e9, 5e-6);
    fc.collective_chunks = 16;
    span_all(&fc, span);
    est = comet_collective_time(&fc, span, COMET_COLL_ALL_TO_ALL, bytes);
    assert_close(est, 16.0 * 5e-6 + 7.0 / 8.0 * bytes / 100e9, 1e-12);
    assert_close(flows_in_chunks(&fc, span, COMET_COLL_ALL_TO_ALL, bytes, 16), est, 1e-6);
    /* the double binary tree's 64 pieces a chunk, each 1/16 of a
     * latency long: a piece waiting on its connection takes its latency
     * from when it was there, so they stream (each paid its latency in
     * turn: the flows 4 to 5 times the estimate's latency a chunk) */
    one.dims[0].algorithm = COMET_ALGO_DOUBLE_BINARY_TREE;
    one.collective_chunks = 4;
    span_all(&one, span);
    est = comet_collective_time(&one, span, COMET_COLL_ALL_REDUCE, bytes);
    assert_close(flows_in_chunks(&one, span, COMET_COLL_ALL_REDUCE, bytes, 4), est, 1e-2);
    /* a 4 x 4 torus's ring schedule: each part visits the two axes in
     * turn, the next chunk one phase behind, so a chunk holds the torus
     * for half its pass's latency (it was priced the whole: the
     * reduce-scatter +6.6 %, the all-reduce +7.4 % at 16 chunks and
     * 1 us); the all-reduce's parts overlap theirs further (+3.9 %) */
    comet_system grid;
    torus_4x4_in_chunks(&grid, "torus4x4", COMET_ALGO_RING, 1e-6, 16, span);
    est = comet_collective_time(&grid, span, COMET_COLL_REDUCE_SCATTER, bytes);
    assert_close(flows_in_chunks(&grid, span, COMET_COLL_REDUCE_SCATTER, bytes, 16), est, 1e-6);
    est = comet_collective_time(&grid, span, COMET_COLL_ALL_REDUCE, bytes);
    assert_close(flows_in_chunks(&grid, span, COMET_COLL_ALL_REDUCE, bytes, 16), est, 0.05);
    const comet_topology outer[2] = {COMET_TOPO_SWITCH, COMET_TOPO_RING};
    for (int o = 0; o < 2; o++)
        for (int64_t k = 4; k <= 16; k *= 4) {
            comet_system two;
            toy_bare_system(&two, o ? "sw8+ring8" : "sw8+sw16");
            toy_add_dim(&two, "a", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 200e9, 1e-6);
            toy_add_dim(&two, "b", o ? 8 : 16, outer[o], COMET_ALGO_RING, 50e9, 3e-6);
            two.collective_chunks = k;
            span_all(&two, span);
            est = comet_collective_time(&two, span, COMET_COLL_ALL_REDUCE, bytes);
            double fl = flows_in_chunks(&two, span, COMET_COLL_ALL_REDUCE, bytes, k);
            printf("  %s, %lld chunks: flows %.6f ms, estimate %.6f ms (%+.2f %%)\n", two.name,
                   (long long)k, fl * 1e3, est * 1e3, 100.0 * (est - fl) / fl);
            assert_close(fl, est, o ? 1e-2 : 1e-6);
        }
    /* Latency spread over distances: on a ring of 8 at 5 us a chunk's
     * gather takes the root's fuller link from its neighbour's latency
     * on, the farther pieces' latencies running meanwhile, so 16 chunks
     * take 16 (a + x/16), x = S/(B/2) 4/8 (0.991 ms, +32 %, while every
     * chunk waited the farthest piece's 4 a); the direct algorithm's
     * reduce-scatter a + (Q/n) x/16 a chunk (it waited D a: +17 %), on a
     * ring, a 4 x 4 torus and a one-way ring (docs/collectives.md,
     * "Latency spread over distances") */
    comet_system ring;
    toy_bare_system(&ring, "ring8");
    toy_add_dim(&ring, "a", 8, COMET_TOPO_RING, COMET_ALGO_DIRECT, 100e9, 5e-6);
    ring.collective_chunks = 16;
    span_all(&ring, span);
    double x = bytes / 100e9;
    est = comet_collective_time(&ring, span, COMET_COLL_GATHER, bytes);
    assert_close(est, 16.0 * 5e-6 + x, 1e-12);
    assert_close(flows_in_chunks(&ring, span, COMET_COLL_GATHER, bytes, 16), est, 1e-6);
    est = comet_collective_time(&ring, span, COMET_COLL_REDUCE_SCATTER, bytes);
    assert_close(est, 16.0 * 5e-6 + 2.0 * x, 1e-12);
    assert_close(flows_in_chunks(&ring, span, COMET_COLL_REDUCE_SCATTER, bytes, 16), est, 1e-6);
    /* the ring schedule's all-to-all there: pairwise rounds by distance,
     * a pair each way once the pair before is in, 1 + 2 + 3 + 4 hops a
     * chunk (it took n - 1 = 7: the flows 11 % over it) */
    ring.dims[0].algorithm = COMET_ALGO_RING;
    est = comet_collective_time(&ring, span, COMET_COLL_ALL_TO_ALL, bytes);
    assert_close(est, 16.0 * 10.0 * 5e-6 + 2.0 * x, 1e-12);
    assert_close(flows_in_chunks(&ring, span, COMET_COLL_ALL_TO_ALL, bytes, 16), est, 1e-6);
    torus_4x4_in_chunks(&ring, "torus4x4 direct", COMET_ALGO_DIRECT, 5e-6, 16, span);
    est = comet_collective_time(&ring, span, COMET_COLL_ALL_TO_ALL, bytes);
    assert_close(flows_in_chunks(&ring, span, COMET_COLL_ALL_TO_ALL, bytes, 16), est, 1e-6);
    /* its gather over the two axes, a hop a phase at least (+16 % while
     * each phase waited its farthest piece) */
    est = comet_collective_time(&ring, span, COMET_COLL_GATHER, bytes);
    assert_close(flows_in_chunks(&ring, span, COMET_COLL_GATHER, bytes, 16), est, 1e-6);
    toy_bare_system(&ring, "one-way ring8");
    comet_net_dim *g = toy_add_dim(&ring, "a", 8, COMET_TOPO_RING, COMET_ALGO_DIRECT, 100e9, 5e-6);
    g->shape.unidirectional = true;
    ring.collective_chunks = 16;
    span_all(&ring, span);
    est = comet_collective_time(&ring, span, COMET_COLL_ALL_TO_ALL, bytes);
    assert_close(flows_in_chunks(&ring, span, COMET_COLL_ALL_TO_ALL, bytes, 16), est, 1e-6);
    est = comet_collective_time(&ring, span, COMET_COLL_SCATTER, bytes);
    assert_close(est, 16.0 * 5e-6 + 7.0 / 8.0 * x, 1e-12);
    assert_close(flows_in_chunks(&ring, span, COMET_COLL_SCATTER, bytes, 16), est, 1e-6);
}

/* An all-reduce in chunks over two or three dimensions: an inner
 * dimension reduce-scatters the next chunks while a chunk is outside, so
 * the estimate takes each dimension's own work, with the phases that must
 * come before its first and after its last, not the chunk's whole pass
 * through it (docs/collectives.md, "Chunk pipelining"). Ring 8 (100 GB/s)
 * under a ring of 4 (25 GB/s), 4 chunks: the ring of 8 does RS + AG of
 * S/4 four times, 4 (7/4) x/4 = 1.75 x, x = S/100 GB/s, which the flows
 * and the phase-level simulator take too; it was 1.94 x (+10.8 % over
 * both). With 1 and 2 us a hop and on three switches (200, 100 and
 * 50 GB/s; the middle one's bound) within 0.3 % of the flows. A
 * broadcast's inner dimension is the chunk's from its scatter to its
 * all-gather, and the phase-level simulator keeps it so (it ran the
 * next chunk's scatter meanwhile: -13 % under the estimate and the
 * flows); its chunk waits for the outer chain's last piece where the
 * estimate and the flows let the root's ring start on it: +7.7 % over
 * them (docs/fabric.md, "Not yet"). */
static void test_chunks_on_several_dimensions(void **state)
{
    (void)state;
    const double x = GIB / 100e9;
    comet_system s;
    toy_bare_system(&s, "r8r4");
    comet_net_dim *a = toy_add_dim(&s, "a", 8, COMET_TOPO_RING, COMET_ALGO_RING, 100e9, 0.0);
    comet_net_dim *b = toy_add_dim(&s, "b", 4, COMET_TOPO_RING, COMET_ALGO_RING, 25e9, 0.0);
    s.collective_chunks = 4;
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    double est = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(est, 1.75 * x, 1e-12);
    assert_close(phases(&s, span, COMET_COLL_ALL_REDUCE, GIB), est, 1e-12);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_ALL_REDUCE, GIB, 4), est, 2e-3);
    /* the outer ring the bound at 5 GB/s: its AR of S/32 a chunk, 15/16 x
     * each, four times between one RS and one AG of 7/32 x */
    b->bandwidth = 5e9;
    double slow = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    double rs = 7.0 / 8.0 * x / 4.0, ar = 2.0 * 3.0 / 4.0 * (GIB / 32.0) / 5e9;
    assert_close(slow, rs + 4.0 * ar + rs, 1e-12);
    assert_close(phases(&s, span, COMET_COLL_ALL_REDUCE, GIB), slow, 1e-12);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_ALL_REDUCE, GIB, 4), slow, 3e-3);
    b->bandwidth = 25e9;
    a->latency = 1e-6;
    b->latency = 2e-6;
    est = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_ALL_REDUCE, GIB, 4), est, 3e-3);
    /* the broadcast: the phase-level simulator within 8 % over the
     * estimate, which the flows keep to 0.1 % */
    double bcast = comet_collective_time(&s, span, COMET_COLL_BROADCAST, GIB);
    assert_close(flows_in_chunks(&s, span, COMET_COLL_BROADCAST, GIB, 4), bcast, 1e-3);
    double ph = phases(&s, span, COMET_COLL_BROADCAST, GIB);
    assert_true(ph >= bcast && ph <= 1.08 * bcast);
    comet_system three;
    toy_bare_system(&three, "sw3");
    toy_add_dim(&three, "a", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 200e9, 1e-6);
    toy_add_dim(&three, "b", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 1e-6);
    toy_add_dim(&three, "c", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 2e-6);
    three.collective_chunks = 4;
    span_all(&three, span);
    est = comet_collective_time(&three, span, COMET_COLL_ALL_REDUCE, GIB);
    /* the estimate and the flows run a chunk's reduce-scatter and
     * all-gather latencies on an inner switch (3 x 1 us each) side by
     * side with the next chunk's, the phase-level simulator (one active
     * chunk, as ASTRA-sim) in turn: 3 more chunks x 3 us */
    assert_close(phases(&three, span, COMET_COLL_ALL_REDUCE, GIB), est + 3.0 * 3e-6, 1e-12);
    assert_close(flows_in_chunks(&three, span, COMET_COLL_ALL_REDUCE, GIB, 4), est, 3e-3);
    /* a reduce over three switches (100, 50, 25 GB/s, no latency): the
     * reduce-scatters 0.75, 0.375 x, the last switch's reduce 0.375 x,
     * the gathers 0.375, 0.75 x: one chunk 2.625 x; in k chunks the
     * first switch's 1.5 x bounds it, but at 2 chunks it idles while
     * the first chunk is out (1.125 x / 2 against the other chunk's
     * reduce-scatter, 0.375 x): 1.6875 x. The flows (one chunk per
     * dimension at a time) agree; they held the first switch from a
     * chunk's reduce-scatter to its gather, 4 chunks +47 % over */
    comet_system sw3;
    toy_bare_system(&sw3, "sw3r");
    toy_add_dim(&sw3, "a", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 0.0);
    toy_add_dim(&sw3, "b", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 0.0);
    toy_add_dim(&sw3, "c", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 25e9, 0.0);
    span_all(&sw3, span);
    static const int64_t reduce_chunks[] = {1, 2, 4, 40};
    static const double reduce_x[] = {2.625, 1.6875, 1.5, 1.5};
    for (int i = 0; i < 4; i++) {
        sw3.collective_chunks = reduce_chunks[i];
        double r = comet_collective_time(&sw3, span, COMET_COLL_REDUCE, GIB);
        assert_close(r, reduce_x[i] * x, 1e-9);
        assert_close(flows_in_chunks(&sw3, span, COMET_COLL_REDUCE, GIB, reduce_chunks[i]), r,
                     1e-3);
    }
    /* a reduce over two (a switch of 4 at 200 GB/s under a ring of 4 at
     * 50 GB/s, 256 MiB): the inner switch is a chunk's from its
     * reduce-scatter to its gather on the root's line only; the other
     * lines reduce-scatter the next chunk while they pass this one down
     * the ring's chain. When every line held it until it had passed its
     * part on, the flows ran 10 %, 17 % and 21 % over the closed form at
     * 2, 4 and 8 chunks (18 to 23 % with 1 and 3 us a hop) */
    comet_system sr;
    toy_bare_system(&sr, "sw4+ring4");
    comet_net_dim *inner = toy_add_dim(&sr, "a", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 200e9, 0.0);
    comet_net_dim *outer = toy_add_dim(&sr, "b", 4, COMET_TOPO_RING, COMET_ALGO_RING, 50e9, 0.0);
    span_all(&sr, span);
    for (int lat = 0; lat < 2; lat++) {
        inner->latency = lat * 1e-6;
        outer->latency = lat * 3e-6;
        for (int64_t k = 2; k <= 8; k *= 2) {
            sr.collective_chunks = k;
            double r = comet_collective_time(&sr, span, COMET_COLL_REDUCE, GIB / 4.0);
            assert_close(flows_in_chunks(&sr, span, COMET_COLL_REDUCE, GIB / 4.0, k), r, 1e-6);
        }
    }
    /* inside one dimension: a torus or mesh whose axes differ runs its
     * parts' chunks behind each other on the axes, and the closed form
     * runs them so (past 32 chunks, 32 and then the steady period): at
     * 0 latency equal to the flows, 2 to 40 chunks. It took the first
     * chunk's makespan and then the busiest axis a chunk: the 2 x 4 x 4
     * all-reduce +11.7 % at 2 chunks, +6.4 % at 4 (and a group of 8 on
     * a 4 x 4 torus +10 % at 4: test_groups_on_part_of_direct_networks) */
    static const struct {
        comet_topology topo;
        int64_t axes[3];
    } grids[] = {{COMET_TOPO_TORUS, {2, 4, 4}}, {COMET_TOPO_TORUS, {4, 2, 1}},
                 {COMET_TOPO_MESH, {5, 4, 1}}};
    static const int64_t chunk_counts[] = {2, 4, 40};
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
        comet_system grid;
        toy_bare_system(&grid, "grid");
        int64_t n = grids[gi].axes[0] * grids[gi].axes[1] * grids[gi].axes[2];
        comet_net_dim *d = toy_add_dim(&grid, "x", n, grids[gi].topo, COMET_ALGO_RING, 100e9, 0.0);
        d->shape.n_axes = grids[gi].axes[2] > 1 ? 3 : 2;
        for (int i = 0; i < d->shape.n_axes; i++)
            d->shape.axes[i] = grids[gi].axes[i];
        span_all(&grid, span);
        for (size_t ki = 0; ki < sizeof chunk_counts / sizeof chunk_counts[0]; ki++) {
            grid.collective_chunks = chunk_counts[ki];
            for (comet_collective c = COMET_COLL_ALL_REDUCE; c <= COMET_COLL_ALL_GATHER; c++) {
                double e = comet_collective_time(&grid, span, c, GIB);
                double f = flows_in_chunks(&grid, span, c, GIB, chunk_counts[ki]);
                if (fabs(e / f - 1.0) > 1e-6)
                    fail_msg("%lld NPUs, %lld chunks, collective %d: estimate %.9g, flows %.9g",
                             (long long)n, (long long)chunk_counts[ki], (int)c, e, f);
            }
        }
    }
}

/* 8 NPUs per node on an NVLink switch, 16 nodes on a 2-tier fat tree of
 * 24-port switches at 2:1 (16 down, 8 up per leaf: 2 nodes per leaf),
 * zero latency: its scale-out dimension. */
static comet_net_dim *fat_tree_16(comet_system *s, const char *name, comet_algorithm a,
                                  comet_routing routing)
{
    toy_bare_system(s, name);
    toy_add_dim(s, "nvl", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 450e9, 0.0);
    comet_net_dim *ib = toy_add_dim(s, "ib", 16, COMET_TOPO_FAT_TREE, a, 50e9, 0.0);
    ib->shape.radix = 24;
    ib->shape.oversubscription[0] = 2.0;
    ib->shape.routing = routing;
    return ib;
}

/* Halving-doubling's all-reduce in chunks: the next chunk's halving
 * runs beside a chunk's doubling, and where the steps load different
 * links (every topology but a switch's ports) the two share them, so
 * chunks follow each other at the larger of one pass and twice the
 * pass's busiest link summed over its steps, h of the all-reduce's time
 * T: k chunks take T (1 + (k - 1) h) / k. h by hand: a fully-connected
 * group of n, each step on a link of its own, the first step's S/2 on
 * the busiest, n / (2 (n - 1)); a ring of 16, 11/14 (its link 2 -> 3
 * carries 1/2, 1/4, 3/8 and 1/4 of S in the four steps, at B/2, against
 * a pass of 3.5 x); a 4 x 4 torus 0.8, a 4 x 4 mesh 0.6 (the busiest
 * link 3/4 of S at B/4 each pass, against passes of 3.75 and 5 x). The
 * estimate, the phase-level simulator and the flows agree; they took
 * the chunks one whole all-reduce after another, k T / k = T (the
 * flows 25 % under on the group of 4 at 4 chunks, 35 % on the mesh at
 * 8). A switch's ports carry every step: h = 1. Where the all-reduce
 * is the outer dimension's (a switch of 8 inside) the same, where
 * before the flows ran 28 % under at 4 chunks. */
static void test_halving_doubling_in_chunks(void **state)
{
    (void)state;
    static const struct {
        comet_topology topo;
        int64_t n, axes[2];
        double hold;
    } cases[] = {
        {COMET_TOPO_FULLY_CONNECTED, 4, {0, 0}, 2.0 / 3.0},
        {COMET_TOPO_FULLY_CONNECTED, 8, {0, 0}, 4.0 / 7.0},
        {COMET_TOPO_RING, 16, {0, 0}, 11.0 / 14.0},
        {COMET_TOPO_TORUS, 16, {4, 4}, 0.8},
        {COMET_TOPO_MESH, 16, {4, 4}, 0.6},
        {COMET_TOPO_SWITCH, 8, {0, 0}, 1.0},
    };
    int64_t span[COMET_MAX_DIMS];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        comet_system s;
        toy_bare_system(&s, "hd");
        comet_net_dim *d = toy_add_dim(&s, "a", cases[i].n, cases[i].topo,
                                       COMET_ALGO_HALVING_DOUBLING, 200e9, 0.0);
        if (cases[i].axes[0]) {
            d->shape.n_axes = 2;
            d->shape.axes[0] = cases[i].axes[0];
            d->shape.axes[1] = cases[i].axes[1];
        }
        span_all(&s, span);
        s.collective_chunks = 1;
        double whole = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
        comet_link l;
        comet_link_of(d, cases[i].n, &l);
        assert_close(comet_collective_chunk_hold(COMET_COLL_ALL_REDUCE, &l), cases[i].hold, 1e-12);
        for (int64_t k = 4; k <= 8; k *= 2) {
            s.collective_chunks = k;
            double est = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
            double want = whole * (1.0 + (double)(k - 1) * cases[i].hold) / (double)k;
            if (fabs(est / want - 1.0) > 1e-9)
                fail_msg("case %zu, %lld chunks: estimate %.9g, closed form %.9g", i,
                         (long long)k, est, want);
            assert_close(phases(&s, span, COMET_COLL_ALL_REDUCE, GIB), est, 1e-9);
            double f = flows_in_chunks(&s, span, COMET_COLL_ALL_REDUCE, GIB, k);
            if (fabs(f / est - 1.0) > 1e-3)
                fail_msg("case %zu, %lld chunks: flows %.9g, estimate %.9g", i, (long long)k, f,
                         est);
        }
    }
    /* a 2:1 fat tree (fat_tree_16: 2 nodes a leaf), the first step on
     * the leaf and three over its uplinks at half the port's rate: a pass
     * of 1/2 + 2 (1/4 + 1/8 + 1/16) = 1.375 x, its port busiest, 15/16 x:
     * h = 15/22; the flows within 1 % at 4 chunks (they ran 13 % under
     * the chunks taken one after another) */
    comet_system fat;
    comet_net_dim *ib = fat_tree_16(&fat, "hd-fat", COMET_ALGO_HALVING_DOUBLING,
                                    COMET_ROUTE_SPRAY);
    int64_t nodes[COMET_MAX_DIMS] = {1, 16, 1, 1, 1, 1, 1, 1};
    comet_link fl;
    comet_link_of(ib, 16, &fl);
    fl.inner = 8;
    assert_close(comet_collective_chunk_hold(COMET_COLL_ALL_REDUCE, &fl), 15.0 / 22.0, 1e-12);
    fat.collective_chunks = 1;
    double whole = comet_collective_time(&fat, nodes, COMET_COLL_ALL_REDUCE, GIB);
    fat.collective_chunks = 4;
    double est4 = comet_collective_time(&fat, nodes, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(est4, whole * (1.0 + 3.0 * 15.0 / 22.0) / 4.0, 1e-9);
    assert_close(flows_in_chunks(&fat, nodes, COMET_COLL_ALL_REDUCE, GIB, 4), est4, 1e-2);
    /* the outer dimension's all-reduce */
    comet_system two;
    toy_bare_system(&two, "sw-fc");
    toy_add_dim(&two, "a", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 200e9, 0.0);
    toy_add_dim(&two, "b", 8, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_HALVING_DOUBLING, 100e9,
                0.0);
    span_all(&two, span);
    two.collective_chunks = 4;
    double est = comet_collective_time(&two, span, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(phases(&two, span, COMET_COLL_ALL_REDUCE, GIB), est, 1e-9);
    assert_close(flows_in_chunks(&two, span, COMET_COLL_ALL_REDUCE, GIB, 4), est, 1e-3);
}

/* A group on part of a fully-connected dimension reaches only the links
 * to its members, each B/(N-1): 2 of 8 one link of B/7, their ring
 * all-reduce 2 (1/2)(7) x = 7 x; 4 of 8 three links, 2 (3/4)(7/3) x =
 * 3.5 x. The estimate took the group's links for all of B (x and
 * 1.5 x); the flows, which lay the real links, agree with the closed
 * form for every algorithm and collective, one chunk and four. */
static void test_fully_connected_groups_on_part(void **state)
{
    (void)state;
    const double x = GIB / 200e9;
    comet_system s;
    toy_bare_system(&s, "fc8");
    comet_net_dim *d = toy_add_dim(&s, "a", 8, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_RING,
                                   200e9, 0.0);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    span[0] = 2;
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), 7.0 * x, 1e-12);
    span[0] = 4;
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), 3.5 * x, 1e-12);
    static const comet_algorithm algos[] = {COMET_ALGO_RING, COMET_ALGO_DIRECT,
                                            COMET_ALGO_HALVING_DOUBLING,
                                            COMET_ALGO_DOUBLE_BINARY_TREE};
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
        for (int64_t n = 2; n <= 4; n += 2)
            for (int64_t k = 1; k <= 4; k *= 4)
                for (comet_collective c = COMET_COLL_ALL_REDUCE; c < COMET_COLL_COUNT; c++) {
                    if (c == COMET_COLL_BARRIER)
                        continue;
                    d->algorithm = algos[a];
                    s.collective_chunks = k;
                    span[0] = n;
                    double e = comet_collective_time(&s, span, c, GIB);
                    double f = flows_in_chunks(&s, span, c, GIB, k);
                    /* the double binary tree's all-reduce on 4 of 8: the
                     * flows +1.2 % at one chunk, +1.8 % at four (its trees' fill) */
                    double tol = algos[a] == COMET_ALGO_DOUBLE_BINARY_TREE ? 2.5e-2 : 5e-3;
                    if (fabs(f / e - 1.0) > tol)
                        fail_msg("algorithm %d, %lld of 8, %lld chunks, collective %d: estimate "
                                 "%.9g, flows %.9g",
                                 (int)algos[a], (long long)n, (long long)k, (int)c, e, f);
                }
}

/* Every topology kind's rooted closed forms against the flows, one
 * chunk and four, 1 us a hop, within 5 %: rings both ways, fully
 * connected, switch, 2-D and 3-D tori, meshes (a line and a grid), Clos
 * (fat tree, rail, FRED with its L1 uplinks at 1/8), and tori and a ring
 * under a switch dimension, 8 x 128 switches; on tori whose axes differ
 * (3 x 4, 4 x 4 x 8, 2 x 4 x 4, alone and under a switch) too, but for
 * the gather and the reduce on 2 x 4 x 4 (+5.8 % either chunk count, and
 * +4.2 % and +6.7 % at 1 and 4: the gather's first phases, on every line
 * of their axes, keep it above the busiest axis the closed form takes,
 * and at 4 chunks the closed form's reduce-scatter pipelines the chunks
 * on the axes where the flows hold the dimension per chunk) and a broadcast on 2 x 4
 * under a switch (-6.0 %, one chunk: the parts' phases overlap across the
 * dimensions where the closed form adds them up), bounded here
 * (docs/fabric.md, "Not yet").
 * Groups along one whole axis of a 4 x 4 torus are rings (two chains
 * each); groups on part of an axis, or spaced, are swept by
 * test_groups_on_part_of_direct_networks. */
static void test_rooted_every_kind(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        comet_topology topo;
        comet_algorithm algo;
        int64_t size;
        int axes[3];
        bool uni, outer;
        double bound;
        int64_t group; /* NPUs of the dimension in a group (0: all), or the size of a second
                          switch dimension (with outer) */
    } cases[] = {
        {"ring", COMET_TOPO_RING, COMET_ALGO_RING, 8, {0}, false, false, 0.05, 0},
        {"ring of 7", COMET_TOPO_RING, COMET_ALGO_RING, 7, {0}, false, false, 0.05, 0},
        {"one-way ring", COMET_TOPO_RING, COMET_ALGO_RING, 8, {0}, true, false, 0.05, 0},
        {"fully connected", COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_RING, 8, {0}, false, false, 0.05, 0},
        {"switch", COMET_TOPO_SWITCH, COMET_ALGO_RING, 16, {0}, false, false, 0.05, 0},
        {"switch, halving-doubling", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, 16, {0}, false, false, 0.05, 0},
        {"torus 4 x 4", COMET_TOPO_TORUS, COMET_ALGO_RING, 16, {4, 4, 0}, false, false, 0.05, 0},
        {"torus 4 x 4, groups along axis 0", COMET_TOPO_TORUS, COMET_ALGO_RING, 16, {4, 4, 0}, false, false, 0.05, 4},
        {"torus 4 x 4, direct", COMET_TOPO_TORUS, COMET_ALGO_DIRECT, 16, {4, 4, 0}, false, false, 0.05, 0},
        {"torus 3 x 3 x 3", COMET_TOPO_TORUS, COMET_ALGO_RING, 27, {3, 3, 3}, false, false, 0.05, 0},
        {"torus 4 x 4 x 4", COMET_TOPO_TORUS, COMET_ALGO_RING, 64, {4, 4, 4}, false, false, 0.05, 0},
        {"torus 3 x 4", COMET_TOPO_TORUS, COMET_ALGO_RING, 12, {3, 4, 0}, false, false, 0.05, 0},
        {"torus 2 x 4 x 4", COMET_TOPO_TORUS, COMET_ALGO_RING, 32, {2, 4, 4}, false, false, 0.10, 0},
        {"torus 4 x 4 x 8", COMET_TOPO_TORUS, COMET_ALGO_RING, 128, {4, 4, 8}, false, false, 0.05, 0},
        {"mesh line", COMET_TOPO_MESH, COMET_ALGO_RING, 16, {0}, false, false, 0.05, 0},
        {"mesh 5 x 4", COMET_TOPO_MESH, COMET_ALGO_RING, 20, {5, 4, 0}, false, false, 0.05, 0},
        {"fat tree", COMET_TOPO_FAT_TREE, COMET_ALGO_RING, 16, {0}, false, false, 0.05, 0},
        {"rail", COMET_TOPO_RAIL, COMET_ALGO_RING, 16, {0}, false, false, 0.05, 0},
        {"fred 8:1", COMET_TOPO_FRED, COMET_ALGO_RING, 20, {0}, false, false, 0.05, 0},
        {"ring under a switch", COMET_TOPO_RING, COMET_ALGO_RING, 8, {0}, false, true, 0.05, 0},
        {"torus 4 x 4 under a switch", COMET_TOPO_TORUS, COMET_ALGO_RING, 16, {4, 4, 0}, false, true, 0.05, 0},
        {"torus 3 x 3 x 3 under a switch", COMET_TOPO_TORUS, COMET_ALGO_RING, 27, {3, 3, 3}, false, true, 0.05, 0},
        {"8 x 128 switches", COMET_TOPO_SWITCH, COMET_ALGO_RING, 8, {0}, false, true, 0.05, 128},
        {"torus 3 x 4 under a switch", COMET_TOPO_TORUS, COMET_ALGO_RING, 12, {3, 4, 0}, false, true, 0.05, 0},
        {"torus 2 x 4 under a switch", COMET_TOPO_TORUS, COMET_ALGO_RING, 8, {2, 4, 0}, false, true, 0.07, 0},
        {"torus 2 x 4 x 4 under a switch", COMET_TOPO_TORUS, COMET_ALGO_RING, 32, {2, 4, 4}, false, true, 0.10, 0},
        {"torus 4 x 4 x 8 under a switch", COMET_TOPO_TORUS, COMET_ALGO_RING, 128, {4, 4, 8}, false, true, 0.05, 0},
    };
    const comet_collective rooted[] = {COMET_COLL_BROADCAST, COMET_COLL_REDUCE,
                                       COMET_COLL_SCATTER, COMET_COLL_GATHER};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        comet_system s;
        toy_bare_system(&s, cases[i].what);
        comet_topology t = cases[i].topo;
        bool clos = t == COMET_TOPO_FAT_TREE || t == COMET_TOPO_RAIL;
        if (clos)
            toy_add_dim(&s, "nvl", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 450e9, 0.0);
        comet_net_dim *d = toy_add_dim(&s, "x", cases[i].size, t, cases[i].algo, 100e9, 1e-6);
        d->shape.unidirectional = cases[i].uni;
        for (int k = 0; k < 3 && cases[i].axes[k]; k++)
            d->shape.axes[d->shape.n_axes++] = cases[i].axes[k];
        if (clos || t == COMET_TOPO_FRED) {
            d->shape.radix = clos ? 24 : 4;
            d->shape.oversubscription[0] = clos ? 2.0 : 8.0;
            d->shape.routing = COMET_ROUTE_SPRAY;
        }
        if (cases[i].outer)
            toy_add_dim(&s, "sw", cases[i].group ? cases[i].group : 4, COMET_TOPO_SWITCH,
                        COMET_ALGO_RING, 50e9, 1e-6);
        int64_t span[COMET_MAX_DIMS];
        span_all(&s, span);
        if (clos)
            span[0] = 1;
        if (cases[i].group && !cases[i].outer)
            span[0] = cases[i].group;
        for (int64_t k = 1; k <= 4; k *= 4)
            for (size_t c = 0; c < sizeof rooted / sizeof rooted[0]; c++) {
                s.collective_chunks = k;
                double f = flows_in_chunks(&s, span, rooted[c], GIB, k);
                double e = comet_collective_time(&s, span, rooted[c], GIB);
                if (fabs(f - e) > cases[i].bound * f)
                    fail_msg("%s, %s, %lld chunks: flows %.6g s, estimate %.6g s (%+.1f%%)",
                             cases[i].what, comet_collective_name(rooted[c]), (long long)k, f, e,
                             100.0 * (e - f) / f);
            }
    }
}

/* Transfers started as a simulator goes share what they meet: an
 * all-reduce alone on an 8-NPU ring (no latency) takes T; a second one
 * started at T/2 halves both rates (every link carries one flow of each:
 * the ring keeps every link busy), so the first ends at 1.5 T and the
 * second, half done by then, at 2 T. Point-to-point sends from every NPU
 * to the next take bytes / B and come back as one transfer. */
static void test_run_started_midway(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ring8");
    toy_add_dim(&s, "r", 8, COMET_TOPO_RING, COMET_ALGO_RING, 50e9, 0.0);
    comet_error err;
    comet_fabric *f = NULL;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_OK);
    comet_fabric_group all = {.members = NULL};
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        all.span[d] = d == 0 ? 8 : 1;
    comet_fabric_run *r;
    int64_t a, b;
    assert_int_equal(comet_fabric_run_new(f, &s, 0, &r, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_collective(r, &all, COMET_COLL_ALL_REDUCE, GIB, &one_chunk, &a, &err),
                     COMET_OK);
    double T = run_until(r, a, INFINITY, NULL);
    assert_close(T, 14.0 * GIB / (8.0 * 50e9), 1e-9);
    comet_fabric_run_free(r);
    assert_int_equal(comet_fabric_run_new(f, &s, 0, &r, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_collective(r, &all, COMET_COLL_ALL_REDUCE, GIB, &one_chunk, &a, &err),
                     COMET_OK);
    assert_true(run_until(r, a, T / 2.0, NULL) < 0.0);
    assert_close(comet_fabric_run_now(r), T / 2.0, 1e-12);
    assert_int_equal(comet_fabric_run_collective(r, &all, COMET_COLL_ALL_REDUCE, GIB, &one_chunk, &b, &err),
                     COMET_OK);
    double b_end = -1.0;
    assert_close(run_until(r, a, INFINITY, NULL), 1.5 * T, 1e-9);
    assert_close(run_until(r, b, INFINITY, &b_end), 2.0 * T, 1e-9);
    /* sends: NPU i to i+1, 1 GiB each, one way round: each on its own link,
     * B/2 a way (a bidirectional ring's B is both directions') */
    int64_t from[8], to[8], c;
    for (int i = 0; i < 8; i++) {
        from[i] = i;
        to[i] = (i + 1) % 8;
    }
    double now = comet_fabric_run_now(r);
    assert_int_equal(comet_fabric_run_sends(r, from, to, 8, GIB, &c, &err), COMET_OK);
    assert_close(run_until(r, c, INFINITY, NULL) - now, GIB / 25e9, 1e-9);
    /* a group list that leaves out a member of a group is refused */
    int64_t half[4] = {0, 1, 2, 3};
    int32_t local[8] = {0, 1, 2, 3, -1, -1, -1, -1};
    comet_fabric_group g = all;
    g.members = half;
    g.local = local;
    g.n_members = 4;
    assert_int_equal(comet_fabric_run_collective(r, &g, COMET_COLL_ALL_REDUCE, GIB, &one_chunk, &c, &err),
                     COMET_EINTERNAL);
    /* the same 4 as groups of 2 along the ring, 4 apart: 0+4 is not listed either */
    g.span[0] = 2;
    g.stride[0] = 4;
    assert_int_equal(comet_fabric_run_collective(r, &g, COMET_COLL_ALL_REDUCE, GIB, &one_chunk, &c, &err),
                     COMET_EINTERNAL);
    comet_fabric_run_free(r);
    comet_fabric_free(f);
}

/* Two independent 1 GiB all-reduces issued together on the same ring take
 * twice the bandwidth time of one (they share every link), not the same. */
static void test_two_concurrent_all_reduces(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ring8");
    toy_add_dim(&s, "r", 8, COMET_TOPO_RING, COMET_ALGO_RING, 50e9, 0.0);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    double one = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL);
    double two = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 2, false, NULL);
    assert_close(one, 14.0 * GIB / (8.0 * 50e9), 1e-8);
    assert_close(two, 2.0 * one, 1e-8);
}

/* An all-to-all on a ring relays blocks hop by hop: Q/n x (Q = n^2/4 hops
 * per NPU's blocks over 2n links of B/2), not the (n-1)/n x of a switch. */
static void test_ring_all_to_all_multi_hop(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ring8");
    toy_add_dim(&s, "r", 8, COMET_TOPO_RING, COMET_ALGO_RING, 50e9, 0.0);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    double x = GIB / 50e9;
    assert_close(flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL), 2.0 * x, 1e-8);
    s.dims[0].topology = COMET_TOPO_SWITCH;
    assert_close(flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL), 7.0 / 8.0 * x,
                 1e-8);
}

/* A 4x4 torus all-to-all meets its bisection bound: n^2/4 blocks of S/n
 * cross each way over 2k links of B/4 (4 ports per NPU): k/2 x = 2 x; a
 * mesh has half the bisection: 4 x. */
static void test_torus_all_to_all_bisection(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "torus");
    comet_net_dim *d = toy_add_dim(&s, "t", 16, COMET_TOPO_TORUS, COMET_ALGO_DIRECT, 100e9, 0.0);
    d->shape.n_axes = 2;
    d->shape.axes[0] = d->shape.axes[1] = 4;
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    double x = GIB / 100e9;
    double torus = flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL);
    assert_close(torus, 2.0 * x, 1e-6);
    d->topology = COMET_TOPO_MESH;
    double mesh = flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL);
    assert_close(mesh, 4.0 * x, 1e-6);
}

/* On fat_tree_16, every node's 8 NPUs run their cross-node all-to-all at
 * once: each leaf sends 16 x 14/16 S up 8 links, 1.75 x, where the NPU
 * port needs 15/16 x: the spine bounds it. At 1:1 (32 ports: 16 down, 16 up) the port does. A
 * rail network puts each rail on its own leaf: no spine traffic at all. */
static void test_fat_tree_spine_bound(void **state)
{
    (void)state;
    comet_system s;
    comet_net_dim *ib = fat_tree_16(&s, "fat", COMET_ALGO_DIRECT, COMET_ROUTE_SPRAY);
    int64_t span[COMET_MAX_DIMS] = {1, 16, 1, 1, 1, 1, 1, 1};
    double x = GIB / 50e9;
    comet_flow_result r;
    double over = flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, &r);
    assert_int_equal(r.groups, 8);
    assert_close(over, 1.75 * x, 1e-6);
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_TO_ALL, GIB), 1.75 * x, 1e-12);
    ib->shape.radix = 32;
    ib->shape.oversubscription[0] = 0.0;
    double full = flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL);
    assert_close(full, 15.0 / 16.0 * x, 1e-6);
    ib->topology = COMET_TOPO_RAIL;
    ib->shape.radix = 24;
    ib->shape.oversubscription[0] = 2.0;
    comet_flow_result rail;
    assert_close(flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, &rail), 15.0 / 16.0 * x,
                 1e-6);
    assert_close(rail.bytes_per_tier[1], 0.0, 0.0);
    /* ECMP hashing can only collide where spraying spreads */
    ib->topology = COMET_TOPO_FAT_TREE;
    ib->shape.routing = COMET_ROUTE_ECMP;
    assert_true(flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL) >= over * (1 - 1e-9));
}

/* Leaves that split nodes: 30-port switches at 2:1 hold 20 NPUs (2.5
 * nodes of 8) under 10 uplinks. Groups of 4 nodes (one NPU each, every
 * local rank's group at once) straddle leaves: the busiest leaf (NPUs
 * 20-39: node 2's last four, nodes 3 and 4) sends 52 connections of S/4
 * off it (local ranks 4-7 of nodes 2 and 3 two to a group there, 4 x 2
 * x 2; ranks 0-3 of node 3 and all of node 4, the next group's, alone,
 * 12 x 3), 1.3 x over its uplinks, where two members of a group to every
 * leaf gave 20 x 2 = 40, 1.0 x (the flows 1.3 x); groups of 8 nodes 124,
 * 1.55 x (1.5 x before). */
static void test_fat_tree_leaves_split_groups(void **state)
{
    (void)state;
    comet_system s;
    comet_net_dim *ib = fat_tree_16(&s, "split", COMET_ALGO_DIRECT, COMET_ROUTE_SPRAY);
    ib->shape.radix = 30;
    double x = GIB / 50e9;
    static const struct {
        int64_t n;
        double load;
    } cases[] = {{4, 1.3}, {8, 1.55}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t span[COMET_MAX_DIMS] = {1, cases[i].n, 1, 1, 1, 1, 1, 1};
        double e = comet_collective_time(&s, span, COMET_COLL_ALL_TO_ALL, GIB);
        assert_close(e, cases[i].load * x, 1e-12);
        assert_close(flows(&s, span, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL), e, 5e-3);
    }
    /* the log steps the same, crossers counted leaf by leaf: groups of 4
     * nodes, halving's step 1 crosses for 12 NPUs of the busiest leaf
     * (1.2 x over 10 uplinks), step 2 for all 20 (2 x): a pass of
     * 0.5 (1.2) + 0.25 (2) = 1.1 x, the all-reduce 2.2 x (2.0 x where
     * step 1 was taken to stay on the leaf, c = 2); Bruck's steps 16 and
     * 20: 0.5 (1.6 + 2) = 1.8 x (1.5 x; the flows 1.95 x, +8.4 %, where
     * they were +30 %: not yet explained, docs/fabric.md "Not yet") */
    ib->algorithm = COMET_ALGO_HALVING_DOUBLING;
    int64_t four[COMET_MAX_DIMS] = {1, 4, 1, 1, 1, 1, 1, 1};
    double ar = comet_collective_time(&s, four, COMET_COLL_ALL_REDUCE, GIB);
    double bruck = comet_collective_time(&s, four, COMET_COLL_ALL_TO_ALL, GIB);
    assert_close(ar, 2.2 * x, 1e-12);
    assert_close(bruck, 1.8 * x, 1e-12);
    assert_close(flows(&s, four, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL), ar, 2e-2);
    assert_close(flows(&s, four, COMET_COLL_ALL_TO_ALL, GIB, 1, false, NULL), bruck, 0.09);
    /* the double binary tree's edges counted leaf by leaf: on groups of 4
     * the heaps' edges are 1-0, 2-0, 3-1 and, mirrored, 2-3, 1-3, 0-2,
     * S/2 each way. The busiest leaf (as above) has ranks 4-7 of members
     * 2 and 3 with 4 edges off it a rank, ranks 0-3 of member 3 with 3,
     * and node 4 (the next group's member 0) 3: 16 + 12 + 24 = 52 edges
     * over 10 uplinks, 5.2 S/2 against the busiest port's 1.5 S: 2.6 x
     * (1.6 x where a leaf held two members of every group, 4 edges each) */
    ib->algorithm = COMET_ALGO_DOUBLE_BINARY_TREE;
    double tree = comet_collective_time(&s, four, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(tree, 2.6 * x, 1e-12);
    assert_close(flows(&s, four, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL), tree, 2e-2);
    /* a ring's edges the same, where a group fits in a leaf but may
     * straddle two: pairs of nodes, the busiest leaf (NPUs 20-39) has
     * ranks 0-3 of node 3 sending to node 2 off it and all of node 4 to
     * node 5: 12 connections over 10 uplinks, each pass 1.2 x the port's
     * 1/2 (1.0 x where the pair was taken as inside a leaf) */
    ib->algorithm = COMET_ALGO_RING;
    int64_t two[COMET_MAX_DIMS] = {1, 2, 1, 1, 1, 1, 1, 1};
    double ring = comet_collective_time(&s, two, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(ring, 1.2 * x, 1e-12);
    assert_close(flows(&s, two, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL), ring, 5e-3);
}

/* A ring hashed over a Clos (ECMP) is paced by its busiest link. Every
 * link carries whole connections, each 2(n-1)/n S/N with N channels (the
 * ring all-reduce's bytes, NCCL's rings a connection each), so the busiest
 * carries k of them, and no schedule ends before it has: k 2(n-1)/n S/(N B)
 * is a bound. A connection carrying its messages one after another meets
 * it, the link busy throughout; when its messages shared the link side by
 * side they piled up behind it and arrived together, the ring lost its
 * pipelining and took 2.1x the bound with 4 channels (docs/fabric.md,
 * "ECMP"). On fat_tree_16 every local rank's ring over the 16 nodes at
 * once: each leaf sends 8 N connections up its 8 uplinks, N on each as the
 * mean. */
static void test_ecmp_channels_meet_the_busiest_link(void **state)
{
    (void)state;
    comet_system s;
    comet_net_dim *ib = fat_tree_16(&s, "ecmp-channels", COMET_ALGO_RING, COMET_ROUTE_ECMP);
    int64_t span[COMET_MAX_DIMS] = {1, 16, 1, 1, 1, 1, 1, 1};
    double one_conn = 2.0 * 15.0 / 16.0 * GIB; /* a connection's bytes, one channel */
    comet_flow_result r1, r4;
    double t1 = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r1);
    ib->shape.channels = 4;
    double t4 = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r4);
    /* the busiest link carries whole connections, and the collective
     * takes just its bytes at B */
    double k1 = r1.hot[0].bytes / one_conn, k4 = r4.hot[0].bytes / (one_conn / 4.0);
    assert_close(k1, round(k1), 1e-9);
    assert_close(k4, round(k4), 1e-9);
    assert_close(t1, r1.hot[0].bytes / 50e9, 1e-6);
    assert_close(t4, r4.hot[0].bytes / 50e9, 1e-6);
    assert_close(r4.hot[0].utilization, 1.0, 1e-6);
    /* hashing collides (more than the mean of 4 a link), and the channels
     * still spread the load: faster than one ring on its busiest link */
    assert_true(k4 > 4.5);
    assert_true(t4 < t1);
}

/* Behind a hashed scale-out the local ranks' rings end at different
 * times (each its own hashing), so the NPUs of a node enter the NVLink
 * all-gather after it at different times: a ring connection there must
 * still carry its messages one after another. An NPU entering late found
 * several steps' messages from its predecessor waiting and sent them all
 * at once, side by side: they arrived together and the all-gather took
 * 3.3 times its time (docs/fabric.md, "ECMP"). The all-reduce over 8 x 16
 * is then its three phases end to end: the reduce-scatter and all-gather
 * inside the node (8 x 1) and the scale-out rings' all-reduce of S/8
 * (1 x 16, the same connections, the same hashing). */
static void test_ring_keeps_order_behind_an_uneven_dimension(void **state)
{
    (void)state;
    comet_system s;
    fat_tree_16(&s, "ring-order", COMET_ALGO_RING, COMET_ROUTE_ECMP);
    int64_t both[COMET_MAX_DIMS] = {8, 16, 1, 1, 1, 1, 1, 1};
    int64_t node[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    int64_t out[COMET_MAX_DIMS] = {1, 16, 1, 1, 1, 1, 1, 1};
    double inner = flows(&s, node, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL);
    double outer = flows(&s, out, COMET_COLL_ALL_REDUCE, GIB / 8.0, 1, false, NULL);
    double all = flows(&s, both, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL);
    assert_close(inner, 2.0 * 7.0 / 8.0 * GIB / 450e9, 1e-6);
    /* the hashing makes some ranks' rings slower than others' */
    assert_true(outer > 1.5 * 2.0 * 15.0 / 16.0 * GIB / 8.0 / 50e9);
    assert_close(all, inner + outer, 1e-6);
}

/* The estimate prices a hashed (ECMP) tier by its expected busiest link
 * over all hashings; ecmp_seed draws other hashings, and the flows'
 * mean over 16 of them meets the estimate within 5 % (docs/fabric.md,
 * "ECMP"): a ring all-reduce over fat_tree_16's 16 nodes, every local
 * rank's at once, with 1 and 4 channels, and an all-to-all, whose
 * downlinks draw apart from its uplinks. Each seed's flows take their
 * busiest link's bytes at B, so the seeds spread: the estimate is no
 * one hashing's. */
static void test_ecmp_estimate_is_the_mean_over_hashings(void **state)
{
    (void)state;
    static const struct {
        comet_algorithm algo;
        comet_collective c;
        int channels;
    } cases[] = {
        {COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 1},
        {COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 4},
        {COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        comet_system s;
        comet_net_dim *ib = fat_tree_16(&s, "ecmp-seeds", cases[i].algo, COMET_ROUTE_ECMP);
        ib->shape.channels = cases[i].channels;
        int64_t span[COMET_MAX_DIMS] = {1, 16, 1, 1, 1, 1, 1, 1};
        double sum = 0.0, lo = INFINITY, hi = 0.0;
        const int seeds = 16;
        for (int seed = 0; seed < seeds; seed++) {
            ib->shape.ecmp_seed = seed;
            double t = flows(&s, span, cases[i].c, 64.0 * MIB, 1, false, NULL);
            sum += t;
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
        }
        double mean = sum / seeds, e = comet_collective_time(&s, span, cases[i].c, 64.0 * MIB);
        print_message("  ECMP %s, %d channel(s): flows %.3f ms on average over %d hashings "
                      "(%.3f to %.3f), estimate %.3f ms\n",
                      comet_collective_name(cases[i].c), cases[i].channels, mean * 1e3, seeds,
                      lo * 1e3, hi * 1e3, e * 1e3);
        if (fabs(e - mean) > 0.05 * mean)
            fail_msg("case %zu: flows' mean over %d hashings %.6g s, estimate %.6g s (%+.1f%%)", i,
                     seeds, mean, e, 100.0 * (e - mean) / mean);
        assert_true(hi > lo * 1.05);
    }
}

/* In-network reduction: each NPU sends its buffer up once (S), where the
 * ring sends 2(n-1)/n S; streamed in 32 pieces it takes S/B (1 + 1/32). */
static void test_in_network_halves_bytes(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "sharp");
    comet_net_dim *d = toy_add_dim(&s, "sw", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 0.0);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    comet_flow_result ring, sharp;
    flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &ring);
    d->in_network_reduction = true;
    double t = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &sharp);
    /* tier 0 counts both directions of every port: up S and down S per NPU */
    assert_close(sharp.bytes_per_tier[0], 8.0 * 2.0 * GIB, 1e-12);
    assert_close(ring.bytes_per_tier[0], 8.0 * 2.0 * 2.0 * 7.0 / 8.0 * GIB, 1e-12);
    assert_close(t, GIB / 50e9 * (1.0 + 1.0 / 64.0), 1e-6);
}

/* A watched link's utilization over time: on the 8-NPU ring with 500 ns
 * hops, each of the 14 steps waits out its hop (0 %) then moves its block
 * (100 %), and the link is idle at the end; the steps' mean is the
 * bandwidth share of the time. */
static void test_watched_link_series(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ring8");
    toy_add_dim(&s, "r", 8, COMET_TOPO_RING, COMET_ALGO_RING, 50e9, 500e-9);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    comet_error err;
    comet_fabric *f = NULL;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_OK);
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    o.n_watch = 1;
    o.watch[0] = 0; /* npu 0 -> npu 1 */
    comet_flow_result r;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_OK);
    const comet_link_series *sr = &r.series[0];
    assert_int_equal(r.n_series, 1);
    assert_int_equal(sr->n, 2 * 14 + 1);
    double busy = 0.0;
    for (size_t i = 0; i < sr->n; i++) {
        double until = i + 1 < sr->n ? sr->t[i + 1] : r.time;
        busy += sr->utilization[i] * (until - sr->t[i]);
        assert_true(sr->utilization[i] == 0.0 || fabs(sr->utilization[i] - 1.0) < 1e-9);
    }
    assert_close(sr->utilization[0], 0.0, 0.0);
    assert_close(sr->utilization[1], 1.0, 1e-9);
    assert_close(sr->t[1], 500e-9, 1e-9);
    assert_close(sr->utilization[sr->n - 1], 0.0, 0.0);
    assert_close(busy, 14.0 * GIB / (8.0 * 50e9), 1e-6);
    comet_flow_result_free(&r);
    /* a link the fabric does not have */
    o.watch[0] = 16;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_EINPUT);
    comet_fabric_free(f);
}

/* ---- the estimator against the flows, every topology kind -------------------- */

typedef struct kind_case {
    const char *what;
    comet_topology topo;
    comet_algorithm algo;
    comet_collective c;
    int64_t size;
    int axes[2];
    int64_t radix;
    double over;
    int tiers;
    bool in_network;
} kind_case;

static void test_estimator_within_5_percent(void **state)
{
    (void)state;
    static const kind_case cases[] = {
        {"ring AR", COMET_TOPO_RING, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 8, {0, 0}, 0, 0, 0, false},
        {"ring A2A", COMET_TOPO_RING, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 8, {0, 0}, 0, 0, 0, false},
        {"fc AR", COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 8, {0, 0}, 0, 0, 0, false},
        {"fc A2A", COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 8, {0, 0}, 0, 0, 0, false},
        {"switch AR", COMET_TOPO_SWITCH, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 0, 0, 0, false},
        {"switch HD", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 0, 0, 0, false},
        {"torus AR", COMET_TOPO_TORUS, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 16, {4, 4}, 0, 0, 0, false},
        {"torus A2A", COMET_TOPO_TORUS, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 16, {4, 4}, 0, 0, 0, false},
        {"mesh AR", COMET_TOPO_MESH, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 16, {4, 4}, 0, 0, 0, false},
        {"mesh A2A", COMET_TOPO_MESH, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 16, {4, 4}, 0, 0, 0, false},
        {"fat AR", COMET_TOPO_FAT_TREE, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 24, 2, 0, false},
        {"fat A2A", COMET_TOPO_FAT_TREE, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 16, {0, 0}, 24, 2, 0, false},
        {"fat HD", COMET_TOPO_FAT_TREE, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 24, 2, 0, false},
        /* the trees' edges that leave a leaf, 2:1 (tree_crossings) */
        {"fat DBT", COMET_TOPO_FAT_TREE, COMET_ALGO_DOUBLE_BINARY_TREE, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 24, 2, 0, false},
        {"fat DBT 1:1", COMET_TOPO_FAT_TREE, COMET_ALGO_DOUBLE_BINARY_TREE, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 24, 1, 0, false},
        {"switch DBT", COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 0, 0, 0, false},
        {"fc DBT", COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_DOUBLE_BINARY_TREE, COMET_COLL_ALL_REDUCE, 8, {0, 0}, 0, 0, 0, false},
        {"rail AR", COMET_TOPO_RAIL, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 24, 2, 0, false},
        {"rail A2A", COMET_TOPO_RAIL, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 16, {0, 0}, 24, 2, 0, false},
        /* leaves of 10 ports split the nodes of 8 */
        {"fat odd AR", COMET_TOPO_FAT_TREE, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 16, 2, 0, false},
        {"fat odd A2A", COMET_TOPO_FAT_TREE, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 16, {0, 0}, 16, 2, 0, false},
        /* 3 tiers of 8 ports: leaves of 4 NPUs, pods of 16 */
        {"fat3 AR", COMET_TOPO_FAT_TREE, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 8, 1, 3, false},
        {"fat3 A2A", COMET_TOPO_FAT_TREE, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 16, {0, 0}, 8, 1, 3, false},
        {"fat3 HD", COMET_TOPO_FAT_TREE, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 16, {0, 0}, 8, 1, 3, false},
        /* a FRED wafer of 20 NPUs, 4 per L1: non-blocking (FRED-C/D) and
         * its L1 uplinks at 1/8 (FRED-A/B), with and without in-switch
         * reduction; its 5 x 4 mesh counterpart */
        {"fred AR", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 20, {0, 0}, 4, 1, 0, false},
        {"fred RS", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_REDUCE_SCATTER, 20, {0, 0}, 4, 1, 0, false},
        {"fred A2A", COMET_TOPO_FRED, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 20, {0, 0}, 4, 1, 0, false},
        {"fred in-switch AR", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 20, {0, 0}, 4, 1, 0, true},
        {"fred 8:1 AR", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 20, {0, 0}, 4, 8, 0, false},
        {"fred 8:1 AG", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_ALL_GATHER, 20, {0, 0}, 4, 8, 0, false},
        {"fred 8:1 A2A", COMET_TOPO_FRED, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 20, {0, 0}, 4, 8, 0, false},
        {"fred 8:1 in-switch AR", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 20, {0, 0}, 4, 8, 0, true},
        {"fred in-switch RS", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_REDUCE_SCATTER, 20, {0, 0}, 4, 1, 0, true},
        {"fred in-switch AG", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_ALL_GATHER, 20, {0, 0}, 4, 1, 0, true},
        {"fred 8:1 in-switch RS", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_REDUCE_SCATTER, 20, {0, 0}, 4, 8, 0, true},
        {"fred 8:1 in-switch AG", COMET_TOPO_FRED, COMET_ALGO_RING, COMET_COLL_ALL_GATHER, 20, {0, 0}, 4, 8, 0, true},
        {"wafer mesh AR", COMET_TOPO_MESH, COMET_ALGO_RING, COMET_COLL_ALL_REDUCE, 20, {5, 4}, 0, 0, 0, false},
        {"wafer mesh A2A", COMET_TOPO_MESH, COMET_ALGO_DIRECT, COMET_COLL_ALL_TO_ALL, 20, {5, 4}, 0, 0, 0, false},
        /* halving-doubling on groups that are not a power of two, folded
         * (net_hd): the closed form per step, the flows' sendrecvs */
        {"switch 6 HD", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 6, {0, 0}, 0, 0, 0, false},
        {"switch 6 HD RS", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_REDUCE_SCATTER, 6, {0, 0}, 0, 0, 0, false},
        {"switch 6 HD AG", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_GATHER, 6, {0, 0}, 0, 0, 0, false},
        {"switch 12 HD", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 12, {0, 0}, 0, 0, 0, false},
        {"switch 12 HD RS", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_REDUCE_SCATTER, 12, {0, 0}, 0, 0, 0, false},
        {"switch 7 HD", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 7, {0, 0}, 0, 0, 0, false},
        {"switch 7 HD AG", COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_GATHER, 7, {0, 0}, 0, 0, 0, false},
        {"fc 6 HD", COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 6, {0, 0}, 0, 0, 0, false},
        {"fc 6 HD RS", COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_REDUCE_SCATTER, 6, {0, 0}, 0, 0, 0, false},
        {"ring 12 HD", COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 12, {0, 0}, 0, 0, 0, false},
        {"ring 7 HD", COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 7, {0, 0}, 0, 0, 0, false},
        {"torus 3 x 4 HD", COMET_TOPO_TORUS, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 12, {3, 4}, 0, 0, 0, false},
        {"torus 3 x 4 HD AG", COMET_TOPO_TORUS, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_GATHER, 12, {3, 4}, 0, 0, 0, false},
        {"mesh 6 x 2 HD", COMET_TOPO_MESH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 12, {6, 2}, 0, 0, 0, false},
        {"mesh 3 x 2 HD", COMET_TOPO_MESH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 6, {3, 2}, 0, 0, 0, false},
        {"mesh 3 x 4 HD RS", COMET_TOPO_MESH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_REDUCE_SCATTER, 12, {3, 4}, 0, 0, 0, false},
        {"torus 3 x 3 HD", COMET_TOPO_TORUS, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 9, {3, 3}, 0, 0, 0, false},
        {"ring 24 HD", COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 24, {0, 0}, 0, 0, 0, false},
        {"mesh 24 HD", COMET_TOPO_MESH, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 24, {0, 0}, 0, 0, 0, false},
        {"fat3 12 HD", COMET_TOPO_FAT_TREE, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 12, {0, 0}, 8, 1, 3, false},
        {"rail 12 HD", COMET_TOPO_RAIL, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 12, {0, 0}, 24, 2, 0, false},
        {"fat 12 HD", COMET_TOPO_FAT_TREE, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 12, {0, 0}, 24, 2, 0, false},
        {"fat 12 HD RS", COMET_TOPO_FAT_TREE, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_REDUCE_SCATTER, 12, {0, 0}, 24, 2, 0, false},
        {"fat 12 HD AG", COMET_TOPO_FAT_TREE, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_GATHER, 12, {0, 0}, 24, 2, 0, false},
        {"fred 8:1 20 HD", COMET_TOPO_FRED, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 20, {0, 0}, 4, 8, 0, false},
        {"fred 20 HD", COMET_TOPO_FRED, COMET_ALGO_HALVING_DOUBLING, COMET_COLL_ALL_REDUCE, 20, {0, 0}, 4, 1, 0, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const kind_case *k = &cases[i];
        comet_system s;
        toy_bare_system(&s, k->what);
        bool clos = k->topo == COMET_TOPO_FAT_TREE || k->topo == COMET_TOPO_RAIL;
        if (clos)
            toy_add_dim(&s, "nvl", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 450e9, 0.0);
        comet_net_dim *d = toy_add_dim(&s, "x", k->size, k->topo, k->algo, 100e9, 1e-6);
        if (k->axes[0]) {
            d->shape.n_axes = 2;
            d->shape.axes[0] = k->axes[0];
            d->shape.axes[1] = k->axes[1];
        }
        if (clos || k->topo == COMET_TOPO_FRED) {
            d->shape.radix = k->radix;
            d->shape.tiers = k->tiers;
            d->shape.oversubscription[0] = k->over;
            d->shape.routing = COMET_ROUTE_SPRAY;
        }
        d->in_network_reduction = k->in_network;
        int64_t span[COMET_MAX_DIMS];
        span_all(&s, span);
        if (clos)
            span[0] = 1;
        double f = flows(&s, span, k->c, GIB, 1, false, NULL);
        double e = comet_collective_time(&s, span, k->c, GIB);
        if (fabs(f - e) > 0.05 * f)
            fail_msg("%s: flows %.6g s, estimate %.6g s (%+.1f%%)", k->what, f, e,
                     100.0 * (e - f) / f);
    }
}

/* Halving-doubling on groups that are not a power of two, folded as
 * MPICH folds them (net_hd): the flows run the fold, the power-of-two
 * steps and the unfold as sendrecvs (a message goes once both ends are
 * at its step), the closed form prices the same steps. A switch of 6:
 * the fold S (x), 2 x 3/4 x, the unfold x, 6 hops: 6 a + 3.5 x (the old
 * closed form 6 a + 5/3 x; the old flows, with steps to no partner,
 * 2.07 x). A ring of 6 at no latency: 8 x both (test_network derives
 * it). Where the closed form's steps part from the flows' (meshes and a
 * torus whose pairs' steps meet on links across steps), the gaps are
 * held where they are (docs/fabric.md, "Not yet"). */
static void test_halving_doubling_folded(void **state)
{
    (void)state;
    const double x = GIB / 100e9, a = 1e-6;
    comet_system s;
    toy_bare_system(&s, "switch 6");
    toy_add_dim(&s, "x", 6, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, 100e9, a);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    double e = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(e, 6.0 * a + 3.5 * x, 1e-12);
    assert_close(flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL), e, 1e-3 * e);
    /* the reduce-scatter alone: 4 a + 2 x, blocks of S/6 (test_network) */
    e = comet_collective_time(&s, span, COMET_COLL_REDUCE_SCATTER, GIB);
    assert_close(e, 4.0 * a + 2.0 * x, 1e-12);
    assert_close(flows(&s, span, COMET_COLL_REDUCE_SCATTER, GIB, 1, false, NULL), e, 1e-3 * e);

    toy_bare_system(&s, "ring 6");
    toy_add_dim(&s, "x", 6, COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING, 100e9, 0.0);
    span_all(&s, span);
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), 8.0 * x, 1e-12);
    assert_close(flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL), 8.0 * x,
                 1e-6 * x);

    /* where the closed form's steps part from the flows' (docs/fabric.md,
     * "Not yet"): estimate against flows, all-reduce, 1 us a hop */
    static const struct {
        const char *what;
        comet_topology topo;
        int64_t size;
        int axes[2];
        double lo, hi;
    } gaps[] = {
        {"mesh 3 x 4", COMET_TOPO_MESH, 12, {3, 4}, -0.07, -0.05},
        {"mesh 5 x 2", COMET_TOPO_MESH, 10, {5, 2}, 0.13, 0.16},
        {"mesh 5 x 4", COMET_TOPO_MESH, 20, {5, 4}, -0.20, -0.18},
        {"torus 5 x 4", COMET_TOPO_TORUS, 20, {5, 4}, 0.04, 0.07},
    };
    for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
        toy_bare_system(&s, gaps[i].what);
        comet_net_dim *d = toy_add_dim(&s, "x", gaps[i].size, gaps[i].topo,
                                       COMET_ALGO_HALVING_DOUBLING, 100e9, a);
        d->shape.n_axes = 2;
        d->shape.axes[0] = gaps[i].axes[0];
        d->shape.axes[1] = gaps[i].axes[1];
        span_all(&s, span);
        double f = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL);
        e = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
        print_message("  %s: flows %.6g s, estimate %.6g s (%+.1f%%)\n", gaps[i].what, f, e,
                      100.0 * (e - f) / f);
        assert_true((e - f) / f > gaps[i].lo && (e - f) / f < gaps[i].hi);
    }
}

/* ---- structure and errors -------------------------------------------------- */

/* A 3-tier fat tree of 8-port switches at 1:1: leaves 4 down / 4 up, aggs
 * 4 down / 4 up, 4 blocks of 4 leaves: 64 NPUs. Switches: 16 leaves, 16
 * aggs, 16 cores; links: 2 x (64 ports + 64 leaf uplinks + 64 agg
 * uplinks). A route across blocks climbs to a core: 6 links. */
/* In-network reduction on a sprayed Clos (SHARP's aggregation tree): each
 * NPU sends S up its port and gets S back, each leaf sends one reduced S
 * up and gets one back (16 NPUs on 4 leaves of 8-port switches: ports 32 S
 * in all, leaf uplinks 8 S), against the ring's 2 x 2 x 15/16 S through
 * each leaf's uplinks (one ring edge out and one in per leaf, per pass).
 * Its 64 pieces pass four store-and-forward stages: the port up, the
 * leaf's sprayed uplinks (4 B) up and down, the port down, so the time is
 * S/B (1 + 1/64 + 2/256) where the closed form streams S/B. */
static void test_in_network_on_a_clos(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "sharp");
    comet_net_dim *d = toy_add_dim(&s, "ib", 16, COMET_TOPO_FAT_TREE, COMET_ALGO_RING, 50e9, 0.0);
    d->shape.radix = 8;
    d->shape.routing = COMET_ROUTE_SPRAY;
    d->in_network_reduction = true;
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    comet_flow_result r;
    double t = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r);
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), GIB / 50e9, 1e-12);
    assert_close(t, GIB / 50e9 * (1.0 + 1.0 / 64.0 + 2.0 / 256.0), 1e-9);
    assert_close(r.bytes_per_tier[0], 32.0 * GIB, 1e-12);
    assert_close(r.bytes_per_tier[1], 8.0 * GIB, 1e-12);
    d->in_network_reduction = false;
    flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r);
    printf("  ring through the leaves' uplinks: %.4f GiB\n", r.bytes_per_tier[1] / GIB);
    assert_close(r.bytes_per_tier[1], 4.0 * 2.0 * 2.0 * 15.0 / 16.0 * GIB, 1e-12);
}

/* A group whose members sit apart along a Clos dimension (a strategy's
 * data-parallel ranks past its context- or expert-parallel ones) spans
 * more leaves than one whose members sit side by side, and more groups'
 * rings leave each leaf: on fat_tree_16 (2 nodes a leaf, 2:1, 8 uplinks)
 * groups of 4 nodes side by side leave a leaf once per local rank (8 rings
 * over 8 uplinks), 2 apart twice as many (16 over 8: the uplinks bind at
 * 2x). The flows of every such group at once, sprayed and hashed (the
 * mean over 32 hashings: one hashing's busiest link lands a connection or
 * two off), agree with the estimate given the spacing within 5 %: 64.4
 * and 64.4 ms sprayed (32.2 side by side), 183 and 179 ms hashed (117
 * and 115). */
static void test_spaced_groups_on_a_clos(void **state)
{
    (void)state;
    for (int hashed = 0; hashed < 2; hashed++) {
        comet_system s;
        comet_net_dim *ib = fat_tree_16(&s, "spaced", COMET_ALGO_RING,
                                        hashed ? COMET_ROUTE_ECMP : COMET_ROUTE_SPRAY);
        comet_error err;
        int64_t span[COMET_MAX_DIMS] = {1, 4, 1, 1, 1, 1, 1, 1};
        int64_t gap[COMET_MAX_DIMS] = {1, 2, 1, 1, 1, 1, 1, 1};
        double t[2] = {0.0, 0.0}, e[2];
        const int seeds = hashed ? 32 : 1; /* hashed: the mean over hashings */
        for (int spaced = 0; spaced < 2; spaced++) {
            comet_fabric_group g = {.members = NULL};
            for (int d = 0; d < COMET_MAX_DIMS; d++) {
                g.span[d] = span[d];
                g.stride[d] = spaced ? gap[d] : 1;
            }
            for (int seed = 0; seed < seeds; seed++) {
                ib->shape.ecmp_seed = seed;
                comet_fabric *f = test_fabric_of(&s);
                comet_fabric_run *r;
                int64_t id;
                assert_int_equal(comet_fabric_run_new(f, &s, 0, &r, &err), COMET_OK);
                assert_int_equal(comet_fabric_run_collective(r, &g, COMET_COLL_ALL_REDUCE, GIB,
                                                             &one_chunk, &id, &err),
                                 COMET_OK);
                t[spaced] += run_until(r, id, INFINITY, NULL) / seeds;
                comet_fabric_run_free(r);
                comet_fabric_free(f);
            }
            e[spaced] = comet_collective_time_placed(&s, span, spaced ? gap : NULL,
                                                     COMET_COLL_ALL_REDUCE, GIB, 0.0);
            print_message("  %s, %s: flows %.3f ms, estimate %.3f ms\n",
                          hashed ? "hashed (mean of 32)" : "sprayed",
                          spaced ? "2 apart" : "side by side", t[spaced] * 1e3, e[spaced] * 1e3);
            if (fabs(e[spaced] - t[spaced]) > 0.05 * t[spaced])
                fail_msg("%s, spacing %d: flows %.6g s, estimate %.6g s", hashed ? "ECMP" : "spray",
                         spaced + 1, t[spaced], e[spaced]);
        }
        assert_true(t[1] > 1.5 * t[0]);
        if (!hashed)
            assert_close(t[1], 2.0 * t[0], 1e-6);
    }
}

/* The flows of collective c on every group of `span` NPUs `stride` apart
 * along the one dimension of s, all at once, `chunks` chunks. */
static double flows_spaced(const comet_system *s, int64_t span, int64_t stride,
                           comet_collective c, int64_t chunks)
{
    comet_error err;
    comet_fabric *f = test_fabric_of(s);
    comet_fabric_run *r;
    int64_t id;
    comet_fabric_group g = {.members = NULL};
    for (int d = 0; d < COMET_MAX_DIMS; d++)
        g.span[d] = g.stride[d] = 1;
    g.span[0] = span;
    g.stride[0] = stride;
    comet_fabric_schedule sch = {.chunks = chunks, .concurrent = 1};
    assert_int_equal(comet_fabric_run_new(f, s, 0, &r, &err), COMET_OK);
    if (comet_fabric_run_collective(r, &g, c, GIB, &sch, &id, &err))
        fail_msg("%s: %lld apart %lld: %s", s->name, (long long)span, (long long)stride,
                 err.message);
    double t = run_until(r, id, INFINITY, NULL);
    comet_fabric_run_free(r);
    comet_fabric_free(f);
    return t;
}

/* Groups on part of a ring, torus or mesh, side by side or spaced (a
 * strategy's data-parallel ranks past its tensor-parallel ones), every
 * group at once: the estimate given the spacing agrees with the flows
 * within 5 % for every span and spacing that tiles the dimension, on a
 * ring of 8 and of 12, one way round (of 8 and of 6), a torus without a shape, 4 x 4
 * tori and meshes and a 2 x 4 x 4 torus, for the ring, direct,
 * halving-doubling and double binary tree algorithms' all-reduce,
 * reduce-scatter, all-gather and all-to-all (Bruck's under
 * halving-doubling: its shifts in rank order, each line of an axis one
 * shift) and the rooted broadcast, reduce, gather and scatter (1 us a
 * hop, one chunk; the double binary tree's all-reduce priced by routing
 * its heaps' edges as the flows do, net_direct_double_tree;
 * halving-doubling on groups that are not a power of two folded as
 * MPICH folds them, net_hd_direct). Rooted collectives on 2 x 4 x 4 and
 * chains of spaced grid groups within 9 % (below). Closed
 * forms at 0 latency: a group of 4 side by side on a ring of 8 is a line,
 * its ring closing back over the line's links (2 (n-1)/n x = 1.5 x a
 * pass, twice the ring's); 4 groups 2 apart each close a ring whose every
 * step crosses 2 links, each shared by 2 groups ((n-1)/n 2 x = 1.5 x);
 * on a one-way ring every group's ring goes once round the whole ring
 * (size/n (n-1)/n x: 2 x for groups of 2). On a 4 x 4 torus a group of 8
 * is a ring and a line whose parts meet on the axes: the reduce-scatter
 * 1.625 x at one chunk where the slowest part alone is 1.375 x; at 4
 * chunks the parts' phases fill the axes and the all-reduce takes the
 * busiest axis's load, 2.5 x, estimate and flows (the estimate took the
 * first chunk's makespan and then the busiest axis a chunk: +10 %). */
static void test_groups_on_part_of_direct_networks(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        comet_topology topo;
        int64_t size;
        int axes[3];
        bool uni;
    } nets[] = {
        {"ring 8", COMET_TOPO_RING, 8, {0}, false},
        {"one-way ring 8", COMET_TOPO_RING, 8, {0}, true},
        {"one-way ring 16", COMET_TOPO_RING, 16, {0}, true},
        {"ring 12", COMET_TOPO_RING, 12, {0}, false},
        {"ring 10", COMET_TOPO_RING, 10, {0}, false},
        {"one-way ring 6", COMET_TOPO_RING, 6, {0}, true},
        {"torus 16", COMET_TOPO_TORUS, 16, {0}, false},
        {"torus 4 x 4", COMET_TOPO_TORUS, 16, {4, 4, 0}, false},
        {"mesh 4 x 4", COMET_TOPO_MESH, 16, {4, 4, 0}, false},
        {"torus 2 x 4 x 4", COMET_TOPO_TORUS, 32, {2, 4, 4}, false},
    };
    const comet_algorithm algos[] = {COMET_ALGO_RING, COMET_ALGO_DIRECT,
                                     COMET_ALGO_HALVING_DOUBLING,
                                     COMET_ALGO_DOUBLE_BINARY_TREE};
    const comet_collective colls[] = {COMET_COLL_ALL_REDUCE, COMET_COLL_REDUCE_SCATTER,
                                      COMET_COLL_ALL_GATHER, COMET_COLL_ALL_TO_ALL,
                                      COMET_COLL_BROADCAST,  COMET_COLL_REDUCE,
                                      COMET_COLL_GATHER,     COMET_COLL_SCATTER};
    int checked = 0;
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
            comet_system s;
            toy_bare_system(&s, nets[i].what);
            comet_net_dim *d = toy_add_dim(&s, "x", nets[i].size, nets[i].topo, algos[a], 100e9,
                                           1e-6);
            d->shape.unidirectional = nets[i].uni;
            for (int k = 0; k < 3 && nets[i].axes[k]; k++)
                d->shape.axes[d->shape.n_axes++] = nets[i].axes[k];
            for (int64_t n = 2; n <= nets[i].size; n++)
                for (int64_t gap = 1; n * gap <= nets[i].size; gap++) {
                    if (nets[i].size % (n * gap))
                        continue;
                    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
                        comet_collective cl = colls[c];
                        bool grid = nets[i].topo != COMET_TOPO_RING;
                        bool chained = cl == COMET_COLL_BROADCAST || cl == COMET_COLL_REDUCE;
                        bool rooted = chained || cl == COMET_COLL_GATHER ||
                                      cl == COMET_COLL_SCATTER;
                        /* rooted on 2 x 4 x 4 and chains of spaced grid
                         * groups: within 9 % of the flows (a gather of
                         * all 32 the estimate -5.4 %, a reduce of 4 on
                         * 2 x 4 x 4 or of 4 2 apart on a 4 x 4 mesh
                         * +8.3 %) */
                        double tol =
                            rooted && grid && (nets[i].size == 32 || (chained && gap > 1))
                                ? 0.09
                                : 0.05;
                        /* halving-doubling's all-gather of 5 on a ring of
                         * 10, side by side or 2 apart: +9.1 % (its folded
                         * steps meet on links across steps, docs/fabric.md) */
                        if (algos[a] == COMET_ALGO_HALVING_DOUBLING && (n & (n - 1)) != 0 &&
                            nets[i].size == 10)
                            tol = 0.10;
                        /* the double binary tree's all-reduce on a whole
                         * ring of 8: the flows +4.5 % at 0 latency, +3.9 %
                         * at 1 us a hop, a tree's pieces going up behind
                         * each other on their connection, each one's
                         * latency from when it was there (+5.3 % while a
                         * piece waiting behind another took its latency
                         * from when the connection came free, +4.4 %
                         * while they paid it piece by piece); on a whole
                         * one-way ring of 16 +6.3 % at 0 latency and
                         * +5.8 % at 1 us (the 64 pieces' fill over the
                         * one-way ring's longer routes) */
                        if (algos[a] == COMET_ALGO_DOUBLE_BINARY_TREE && !grid &&
                            (n == 8 || (nets[i].uni && n == 16)))
                            tol = 0.07;
                        int64_t span[COMET_MAX_DIMS] = {n, 1, 1, 1, 1, 1, 1, 1};
                        int64_t spacing[COMET_MAX_DIMS] = {gap, 1, 1, 1, 1, 1, 1, 1};
                        double f = flows_spaced(&s, n, gap, cl, 1);
                        double e = comet_collective_time_placed(&s, span, spacing, cl, GIB, 0.0);
                        if (fabs(e - f) > tol * f)
                            fail_msg("%s, algorithm %d, collective %d, %lld NPUs %lld apart: "
                                     "flows %.6g s, estimate %.6g s (%+.1f%%)",
                                     nets[i].what, (int)algos[a], (int)cl, (long long)n,
                                     (long long)gap, f, e, 100.0 * (e - f) / f);
                        checked++;
                    }
                }
        }
    print_message("  %d setups within 5 %% (9 %% the rooted corners above)\n", checked);
    assert_true(checked > 500);

    /* the closed forms, 0 latency: x = 1 GiB / 100 GB/s */
    const double x = GIB / 100e9;
    comet_system s;
    toy_bare_system(&s, "ring 8");
    comet_net_dim *d = toy_add_dim(&s, "x", 8, COMET_TOPO_RING, COMET_ALGO_RING, 100e9, 0.0);
    assert_close(flows_spaced(&s, 4, 1, COMET_COLL_REDUCE_SCATTER, 1), 1.5 * x, 1e-6);
    assert_close(flows_spaced(&s, 4, 2, COMET_COLL_REDUCE_SCATTER, 1), 1.5 * x, 1e-6);
    /* pairs half a ring of 10 apart, 5 interleaved: each member's S/2
     * goes 5 hops, a tie the fabric breaks by the sender's parity, so a
     * link carries 3 of the 5 pairs' halves one way (not 2.5): 3 x */
    d->size = 10;
    int64_t pair[COMET_MAX_DIMS] = {2, 1, 1, 1, 1, 1, 1, 1};
    int64_t apart5[COMET_MAX_DIMS] = {5, 1, 1, 1, 1, 1, 1, 1};
    assert_close(flows_spaced(&s, 2, 5, COMET_COLL_REDUCE_SCATTER, 1), 3.0 * x, 1e-6);
    assert_close(comet_collective_time_placed(&s, pair, apart5, COMET_COLL_REDUCE_SCATTER, GIB,
                                              0.0),
                 3.0 * x, 1e-12);
    d->size = 8;
    d->shape.unidirectional = true;
    assert_close(flows_spaced(&s, 2, 1, COMET_COLL_REDUCE_SCATTER, 1), 2.0 * x, 1e-6);
    /* a reduce of 4 side by side one way round: each chain's last hop
     * comes back round past the other group, 2 chains a link, and the
     * fill of 2 steps of x/4 alone: 2.5 x; at 4 chunks the fill once,
     * 2 x + x/8 (it was priced as the broadcast's lone chain, 1.5 x) */
    int64_t span4[COMET_MAX_DIMS] = {4, 1, 1, 1, 1, 1, 1, 1};
    int64_t apart1[COMET_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_close(flows_spaced(&s, 4, 1, COMET_COLL_REDUCE, 1), 2.5 * x, 1e-6);
    assert_close(comet_collective_time_placed(&s, span4, apart1, COMET_COLL_REDUCE, GIB, 0.0),
                 2.5 * x, 1e-12);
    s.collective_chunks = 4;
    assert_close(flows_spaced(&s, 4, 1, COMET_COLL_REDUCE, 4), 2.125 * x, 1e-6);
    assert_close(comet_collective_time_placed(&s, span4, apart1, COMET_COLL_REDUCE, GIB, 0.0),
                 2.125 * x, 1e-12);
    s.collective_chunks = 1;
    /* Bruck on the two-way ring of 8: shifts of 1, 2 and 4, the last a
     * tie split both ways: 1 + 2 + 2 = 5 x */
    d->shape.unidirectional = false;
    d->algorithm = COMET_ALGO_HALVING_DOUBLING;
    assert_close(flows_spaced(&s, 8, 1, COMET_COLL_ALL_TO_ALL, 1), 5.0 * x, 1e-6);
    d->algorithm = COMET_ALGO_RING;
    toy_bare_system(&s, "torus 4 x 4");
    d = toy_add_dim(&s, "x", 16, COMET_TOPO_TORUS, COMET_ALGO_RING, 100e9, 0.0);
    d->shape.n_axes = 2;
    d->shape.axes[0] = d->shape.axes[1] = 4;
    int64_t span8[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    assert_close(flows_spaced(&s, 8, 1, COMET_COLL_REDUCE_SCATTER, 1), 1.625 * x, 1e-6);
    assert_close(comet_collective_time(&s, span8, COMET_COLL_REDUCE_SCATTER, GIB), 1.625 * x,
                 1e-6);
    s.collective_chunks = 4;
    double f4 = flows_spaced(&s, 8, 1, COMET_COLL_ALL_REDUCE, 4);
    double e4 = comet_collective_time(&s, span8, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(f4, 2.5 * x, 1e-6);
    assert_close(e4, 2.5 * x, 1e-9);
}

/* Pipeline sends on direct networks: every NPU of the first stage (the
 * `stride` NPUs before the pipeline's digit) sends to its peer `stride`
 * places on, as flows, against the estimate's one send at B times the
 * topology's shift load (comet_p2p_shift_load): a ring's link carries
 * B/2 and the stage's `stride` sends all cross its last sender's link
 * (2 x 1 on a ring of 8 with a stage of 1, 2 x 2 with a stage of 2, the
 * tie at 4 split both ways: 2 x 2); a one-way ring B and `stride` sends; a
 * 4 x 4 torus's links B/4, a stage of one axis-0 line each sending one hop
 * along axis 1 (4); a fully connected dimension of 8 a link of B/7 per
 * peer (7). Equal to 1e-9 at zero latency. */
static void test_sends_on_direct_networks(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        comet_topology topo;
        int64_t size, stride;
        int axes[2];
        bool uni;
        double load;
    } cases[] = {
        {"ring, stage of 1", COMET_TOPO_RING, 8, 1, {0, 0}, false, 2.0},
        {"ring, stage of 2", COMET_TOPO_RING, 8, 2, {0, 0}, false, 4.0},
        {"ring, stage of 4", COMET_TOPO_RING, 8, 4, {0, 0}, false, 4.0},
        {"one-way ring, stage of 2", COMET_TOPO_RING, 8, 2, {0, 0}, true, 2.0},
        {"torus 4 x 4, stage of 4", COMET_TOPO_TORUS, 16, 4, {4, 4}, false, 4.0},
        {"mesh 4 x 4, stage of 2", COMET_TOPO_MESH, 16, 2, {4, 4}, false, 8.0},
        {"fully connected 8", COMET_TOPO_FULLY_CONNECTED, 8, 1, {0, 0}, false, 7.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        comet_system s;
        toy_bare_system(&s, cases[i].what);
        comet_net_dim *d = toy_add_dim(&s, "x", cases[i].size, cases[i].topo, COMET_ALGO_RING,
                                       100e9, 0.0);
        d->shape.unidirectional = cases[i].uni;
        if (cases[i].axes[0]) {
            d->shape.n_axes = 2;
            d->shape.axes[0] = cases[i].axes[0];
            d->shape.axes[1] = cases[i].axes[1];
        }
        int64_t from[16], to[16], n = cases[i].stride;
        for (int64_t k = 0; k < n; k++) {
            from[k] = k;
            to[k] = k + n;
        }
        comet_error err;
        comet_fabric *f = test_fabric_of(&s);
        comet_fabric_run *r;
        int64_t id;
        assert_int_equal(comet_fabric_run_new(f, &s, 0, &r, &err), COMET_OK);
        assert_int_equal(comet_fabric_run_sends(r, from, to, n, GIB, &id, &err), COMET_OK);
        double flows = run_until(r, id, INFINITY, NULL);
        comet_fabric_run_free(r);
        comet_fabric_free(f);
        double load = comet_p2p_shift_load(&s, 0, n, cases[i].size);
        print_message("  %s: flows %.4f ms, shift load %g\n", cases[i].what, flows * 1e3, load);
        assert_close(load, cases[i].load, 1e-12);
        assert_close(flows, comet_p2p_time_on(&s, 0, GIB) * load, 1e-9);
    }
}

/* SHARP's trees on a hashed (ECMP) Clos are placed, not hashed, and
 * reduced at every switch of the tree. Three tiers of 16-port switches
 * (leaves and aggregation switches 8 down, 8 up) under 16 nodes of 8:
 * each of the 8 local ranks' lines has one member per leaf, its 16 leaves
 * in 2 blocks. The 8 lines sharing a leaf take its 8 uplinks in turn, and
 * each block's aggregation switch sends one reduced stream to the core:
 * tier 2 carries 2 blocks x 8 lines x 2 S (up and down), where sending
 * every leaf's piece to the core carried 8 times that. Each piece passes
 * six store-and-forward links at B: S/B (1 + 5/64). With 11-port leaves
 * at 8:3 (8 down, 3 up), 8 nodes a leaf each, the 8 lines share 3 uplinks
 * 3, 3 and 2: the busiest carries ceil(8/3) = 3 streams where spraying
 * spreads 8/3 over them. The estimate prices both within 5 %. */
static void test_in_network_trees_are_placed(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "sharp3");
    toy_add_dim(&s, "nvl", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 450e9, 0.0);
    comet_net_dim *ib = toy_add_dim(&s, "ib", 16, COMET_TOPO_FAT_TREE, COMET_ALGO_RING, 50e9, 0.0);
    ib->shape.radix = 16;
    ib->shape.tiers = 3;
    ib->shape.routing = COMET_ROUTE_ECMP;
    ib->in_network_reduction = true;
    int64_t span[COMET_MAX_DIMS] = {1, 16, 1, 1, 1, 1, 1, 1};
    comet_flow_result r;
    double t = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r);
    double e = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    print_message("  3 tiers, placed trees: flows %.4f ms, estimate %.4f ms\n", t * 1e3, e * 1e3);
    assert_close(r.bytes_per_tier[0], 256.0 * GIB, 1e-12);
    assert_close(r.bytes_per_tier[1], 256.0 * GIB, 1e-12);
    assert_close(r.bytes_per_tier[2], 32.0 * GIB, 1e-12);
    assert_close(t, GIB / 50e9 * (1.0 + 5.0 / 64.0), 1e-9);
    assert_close(e, GIB / 50e9, 1e-12);
    assert_true(fabs(e - t) <= 0.08 * t);

    ib->shape.radix = 11;
    ib->shape.tiers = 2;
    ib->shape.oversubscription[0] = 8.0 / 3.0;
    ib->size = span[1] = 8;
    t = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r);
    e = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    print_message("  8:3 leaves, placed trees: flows %.4f ms, estimate %.4f ms\n", t * 1e3,
                  e * 1e3);
    assert_close(r.hot[0].bytes, 3.0 * GIB, 1e-12);
    assert_close(e, 3.0 * GIB / 50e9, 1e-12);
    if (fabs(t - e) > 0.05 * t)
        fail_msg("8:3 placed trees: flows %.6g s, estimate %.6g s", t, e);
}

/* An NPU's own port (fab_ops.port, what in-network reduction sends on) is
 * the first link of its route to an NPU on another leaf, and the last of
 * the route back, on a switch of two dimensions and a 3-tier Clos. */
static void test_ports_are_the_routes_ends(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ports");
    toy_add_dim(&s, "nv", 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 400e9, 0.0);
    comet_net_dim *d = toy_add_dim(&s, "ib", 16, COMET_TOPO_FAT_TREE, COMET_ALGO_RING, 50e9, 1e-6);
    d->shape.tiers = 3;
    d->shape.radix = 8;
    comet_error err;
    comet_fabric *f = NULL;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_OK);
    int32_t path[16];
    for (int dim = 0; dim < 2; dim++) {
        const fab_dim *fd = &f->dims[dim];
        const fab_ops *ops = net_topology_of(fd->topo)->fabric;
        for (int64_t npu = 0; npu < f->npus; npu += 7) {
            int64_t in = npu % fd->inner, pos = (npu / fd->inner) % fd->size;
            int64_t out = npu / (fd->inner * fd->size);
            int64_t far = npu + fd->inner * (((pos + fd->size / 2) % fd->size) - pos);
            int n = comet_fabric_route(f, npu, far, 0, path, 16);
            assert_true(n >= 2);
            assert_int_equal(path[0], ops->port(fd, in, out, pos, false));
            n = comet_fabric_route(f, far, npu, 0, path, 16);
            assert_int_equal(path[n - 1], ops->port(fd, in, out, pos, true));
        }
    }
    comet_fabric_free(f);
}

static void test_three_tier_layout(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "fat3");
    comet_net_dim *d = toy_add_dim(&s, "ib", 64, COMET_TOPO_FAT_TREE, COMET_ALGO_RING, 50e9, 1e-6);
    d->shape.tiers = 3;
    d->shape.radix = 8;
    comet_error err;
    comet_fabric *f = NULL;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_OK);
    comet_fabric_info info;
    comet_fabric_info_of(f, &info);
    assert_int_equal(info.switches, 48);
    assert_int_equal(info.links, 2 * (64 + 64 + 64));
    int32_t path[16];
    assert_int_equal(comet_fabric_route(f, 0, 63, 7, path, 16), 6);
    assert_int_equal(comet_fabric_route(f, 0, 5, 7, path, 16), 4);  /* same block */
    assert_int_equal(comet_fabric_route(f, 0, 3, 7, path, 16), 2);  /* same leaf */
    comet_fabric_link l;
    comet_fabric_link_of(f, path[0], &l);
    assert_int_equal(l.from, 0);
    assert_close(l.latency, 0.5e-6, 1e-12);
    comet_fabric_free(f);
    /* 8 blocks of 16 NPUs fill the cores' 8 ports: 128 NPUs, not 256 */
    d->size = 256;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_EINPUT);
    assert_string_equal(err.key, "system.network[0].radix");
}

/* The double binary tree's all-reduce as flows: two heaps over the 8 NPUs
 * of a switch (the second over them reversed), each reducing half the
 * buffer up its 7 edges and broadcasting it down, in 64 pieces: 2 x 14 x 64
 * flows, each of S/128, through an up port and a down port (28 S in all).
 * Every NPU sends 2S through its port (inner in one tree, a leaf in the
 * other), so 2 S/B bounds it from below, the closed form; the pipeline's
 * fill (2L of 64 stages) adds 1.9 %. Every tree connection, as a ring's,
 * carries one piece at a time (before, an inner node sent every piece it
 * had at once, and the leaves' paced pieces shared its port with them:
 * +12 % on 8, +26 % on 16). */
static void test_double_binary_tree(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "dbt8");
    toy_add_dim(&s, "s", 8, COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE, 50e9, 0.0);
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    comet_flow_result r;
    double t = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r);
    double x = GIB / 50e9;
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), 2.0 * x, 1e-12);
    assert_int_equal(r.flows, 2 * 14 * 64);
    assert_close(r.bytes_per_tier[0], 28.0 * GIB, 1e-12);
    printf("  double binary tree on 8: flows %.6f ms, closed form %.6f ms\n", t * 1e3, 2e3 * x);
    assert_true(t >= 2.0 * x * (1.0 - 1e-9) && t <= 2.0 * x * 1.03);
    /* the busiest port's load (switch: 2S from 5 NPUs on, 1.5S on 3 and
     * 4, S on 2) and the busiest link's (fully connected: a pair that is
     * an edge of both heaps, S each way at B/(n-1)); the flows add the
     * 64 pieces' fill, +3.4 % on 16 */
    static const struct {
        comet_topology topo;
        int64_t n;
        double load;
    } kinds[] = {{COMET_TOPO_SWITCH, 2, 1.0},           {COMET_TOPO_SWITCH, 3, 1.5},
                 {COMET_TOPO_SWITCH, 4, 1.5},           {COMET_TOPO_SWITCH, 16, 2.0},
                 {COMET_TOPO_FULLY_CONNECTED, 4, 3.0},  {COMET_TOPO_FULLY_CONNECTED, 8, 7.0}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        toy_bare_system(&s, "dbt");
        toy_add_dim(&s, "s", kinds[i].n, kinds[i].topo, COMET_ALGO_DOUBLE_BINARY_TREE, 50e9, 0.0);
        span_all(&s, span);
        double f = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, NULL);
        double e = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
        print_message("  %s of %lld: flows %.4f ms, closed form %.4f ms\n",
                      kinds[i].topo == COMET_TOPO_SWITCH ? "switch" : "fully connected",
                      (long long)kinds[i].n, f * 1e3, e * 1e3);
        assert_close(e, kinds[i].load * x, 1e-12);
        assert_true(f >= e * (1.0 - 1e-9) && f <= e * 1.04);
    }
    /* with 1 us a hop a piece's latency runs while it waits behind the
     * one before on its connection: 64 MiB on a switch of 2 at 4 chunks
     * within 1 % of the closed form (each piece paid it in turn: +37 %),
     * on 16 within 4 % (+13 %) */
    for (int64_t n = 2; n <= 16; n *= 8) {
        toy_bare_system(&s, "dbt-latency");
        toy_add_dim(&s, "s", n, COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE, 100e9, 1e-6);
        s.collective_chunks = 4;
        span_all(&s, span);
        double e = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, 64.0 * MIB);
        double f = flows_in_chunks(&s, span, COMET_COLL_ALL_REDUCE, 64.0 * MIB, 4);
        assert_true(f >= e * 0.99 && f <= e * (n == 2 ? 1.01 : 1.04));
    }
}

/* Themis inside the flows: on two switches of 8 at B each, the baseline
 * all-reduce of S in 16 chunks reduces S on the first and S/8 on the
 * second, 2 (7/8) S/B (1 + 1/8) of work on the first while the second
 * idles; Themis alternates which dimension a chunk starts on, so each
 * takes half the chunks' big phases: 2 (7/8) S/B (9/16) = (63/64) S/B,
 * the per-dimension simulator's Themis time exactly. On a 4x4 torus
 * under an 8-switch (its axes' rotated parts inside each order class)
 * Themis is no slower than the baseline. An order that is not a
 * permutation, or one without its chunks counted, is refused. */
static void test_themis_in_the_flows(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "two-switches");
    toy_add_dim(&s, "a", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 0.0);
    toy_add_dim(&s, "b", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 0.0);
    s.collective_chunks = 16;
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    uint8_t order[16 * COMET_MAX_DIMS];
    assert_int_equal(comet_sim_themis_orders(&s, span, COMET_COLL_ALL_REDUCE, GIB, 16, order), 2);
    int b_first = 0;
    for (int k = 0; k < 16; k++)
        b_first += order[2 * k] == 1;
    assert_int_equal(b_first, 8);
    comet_error err;
    comet_fabric *f = test_fabric_of(&s);
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    comet_flow_result r;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_OK);
    double baseline = r.time;
    o.chunks = 16;
    o.order = order;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_OK);
    double themis = r.time;
    comet_sim_options so;
    comet_sim_options_defaults(&so);
    so.scheduler = COMET_SCHED_THEMIS;
    comet_sim_collective_result sr;
    assert_int_equal(comet_sim_collective(&s, span, COMET_COLL_ALL_REDUCE, GIB, &so, &sr, &err),
                     COMET_OK);
    printf("  Themis on 8x8 switches: flows %.6f ms (baseline %.6f ms), per dimension %.6f ms\n",
           themis * 1e3, baseline * 1e3, sr.time * 1e3);
    assert_close(themis, 63.0 / 64.0 * GIB / 100e9, 1e-9);
    assert_close(sr.time, themis, 1e-9);
    /* the baseline: the first dimension's work bounds it, plus at most one
     * chunk's phases on the second */
    double first = 2.0 * 7.0 / 8.0 * GIB / 100e9;
    assert_true(baseline >= first * (1.0 - 1e-9) && baseline <= first * (1.0 + 1.0 / 128.0));
    /* refused: a chunk visiting dimension 0 twice, an order without chunks */
    order[0] = order[1] = 0;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "order");
    o.chunks = 0;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_EINPUT);
    comet_fabric_free(f);

    comet_system t;
    toy_bare_system(&t, "torus-and-switch");
    comet_net_dim *d = toy_add_dim(&t, "t", 16, COMET_TOPO_TORUS, COMET_ALGO_RING, 100e9, 0.0);
    d->shape.n_axes = 2;
    d->shape.axes[0] = d->shape.axes[1] = 4;
    toy_add_dim(&t, "s", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 0.0);
    t.collective_chunks = 8;
    span_all(&t, span);
    assert_int_equal(comet_sim_themis_orders(&t, span, COMET_COLL_ALL_REDUCE, GIB, 8, order), 2);
    f = test_fabric_of(&t);
    comet_flow_options_defaults(&o);
    o.chunks = 8;
    assert_int_equal(comet_fabric_collective(f, &t, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_OK);
    baseline = r.time;
    o.order = order;
    assert_int_equal(comet_fabric_collective(f, &t, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_OK);
    printf("  Themis on a 4x4 torus x 8-switch: flows %.6f ms (baseline %.6f ms)\n", r.time * 1e3,
           baseline * 1e3);
    assert_true(r.time <= baseline * (1.0 + 1e-9));
    comet_fabric_free(f);
}

/* Which fabrics every NPU sees alike (comet_fabric_uneven): switches,
 * rings and tori are; a mesh's edges, a hashed (ECMP) or oversubscribed
 * Clos, leaves filled unevenly or splitting nodes are not, each named. */
static void test_uneven_fabrics(void **state)
{
    (void)state;
    char why[200];
    comet_system s;
    toy_bare_system(&s, "switches");
    toy_add_dim(&s, "nvlink", 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 300e9, 0.0);
    comet_net_dim *out = toy_add_dim(&s, "ib", 4, COMET_TOPO_RING, COMET_ALGO_RING, 50e9, 0.0);
    comet_fabric *f = test_fabric_of(&s);
    assert_false(comet_fabric_uneven(f, why, sizeof why));
    assert_string_equal(why, "");
    comet_fabric_free(f);
    /* a 2-D torus, then the same as a mesh */
    out->topology = COMET_TOPO_TORUS;
    out->size = 16;
    out->shape.n_axes = 2;
    out->shape.axes[0] = out->shape.axes[1] = 4;
    f = test_fabric_of(&s);
    assert_false(comet_fabric_uneven(f, why, sizeof why));
    comet_fabric_free(f);
    out->topology = COMET_TOPO_MESH;
    f = test_fabric_of(&s);
    assert_true(comet_fabric_uneven(f, why, sizeof why));
    assert_string_equal(why, "ib is a mesh: the NPUs at its edges have fewer links");
    comet_fabric_free(f);
    /* a sprayed fat tree of 16-port leaves at 1:1 holding whole nodes;
     * hashed; 2:1; 12-port leaves splitting nodes of 8 */
    memset(&out->shape, 0, sizeof out->shape);
    out->topology = COMET_TOPO_FAT_TREE;
    out->size = 8;
    out->shape.radix = 16;
    out->shape.oversubscription[0] = 1.0;
    out->shape.routing = COMET_ROUTE_SPRAY;
    f = test_fabric_of(&s);
    assert_false(comet_fabric_uneven(f, why, sizeof why));
    comet_fabric_free(f);
    out->shape.routing = COMET_ROUTE_ECMP;
    f = test_fabric_of(&s);
    assert_true(comet_fabric_uneven(f, why, sizeof why));
    assert_string_equal(why, "ib hashes each flow onto one of its equal paths (ECMP)");
    comet_fabric_free(f);
    out->shape.routing = COMET_ROUTE_SPRAY;
    out->shape.radix = 24;
    out->shape.oversubscription[0] = 2.0;
    f = test_fabric_of(&s);
    assert_true(comet_fabric_uneven(f, why, sizeof why));
    assert_string_equal(why, "ib is a fat tree oversubscribed 2:1");
    comet_fabric_free(f);
    out->shape.oversubscription[0] = 1.0;
    f = test_fabric_of(&s);
    assert_true(comet_fabric_uneven(f, why, sizeof why)); /* 64 NPUs on 12-port leaves */
    assert_string_equal(why, "ib's 12-port leaves are not all filled alike");
    comet_fabric_free(f);
    out->size = 3;
    f = test_fabric_of(&s);
    assert_true(comet_fabric_uneven(f, why, sizeof why)); /* 24 NPUs: 2 leaves, 1.5 nodes each */
    assert_string_equal(why, "ib's 12-port leaves split nodes of 8 NPUs");
    comet_fabric_free(f);
}

/* A FRED wafer (Rashidi et al., ISCA 2025): 20 NPUs, 4 per L1 switch.
 * In-switch all-reduce moves each NPU's buffer once up its port and once
 * down (ports 2 x 20 S), each L1 once up to the L2 and once down (uplinks
 * 2 x 5 S), where the endpoint ring's all-reduce moves 2 (n-1)/n S each
 * way per NPU: the traffic the paper halves. With its L1 uplinks at 1/8
 * of their NPUs' bandwidth (FRED-A/B) the fabric is uneven. On the 5 x 4
 * mesh of the same NPUs, 10 transfers of S across the cut between rows 1
 * and 2 (its 5 links) take twice the time of 10 that stay on their own
 * links: the bisection ratio. */
static void test_fred_and_the_wafer_mesh(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "fred");
    comet_net_dim *d = toy_add_dim(&s, "fred", 20, COMET_TOPO_FRED, COMET_ALGO_RING, 3e12, 0.0);
    d->shape.radix = 4;
    d->in_network_reduction = true;
    int64_t span[COMET_MAX_DIMS];
    span_all(&s, span);
    comet_flow_result r, ring;
    double t = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &r);
    assert_close(r.bytes_per_tier[0], 2.0 * 20.0 * GIB, 1e-12);
    assert_close(r.bytes_per_tier[1], 2.0 * 5.0 * GIB, 1e-12);
    d->in_network_reduction = false;
    double tr = flows(&s, span, COMET_COLL_ALL_REDUCE, GIB, 1, false, &ring);
    assert_close(ring.bytes_per_tier[0], 2.0 * 20.0 * 2.0 * 19.0 / 20.0 * GIB, 1e-12);
    printf("  FRED all-reduce of 1 GiB on 20 NPUs: in-switch %.4f ms, ring %.4f ms\n", t * 1e3,
           tr * 1e3);
    assert_true(t < 0.55 * tr);
    /* reduce-scatter in the switches and all-gather multicast: each port
     * carries (n - 1)/n S one way and S/n the other, where the ring's
     * carries (n - 1)/n S both ways; a leaf's uplink carries the other
     * leaves' shares, (20 - 4)/20 S, one way and its own 4/20 S the other */
    comet_flow_result rs, ag, ring_rs;
    d->in_network_reduction = true;
    double t_rs = flows(&s, span, COMET_COLL_REDUCE_SCATTER, GIB, 1, false, &rs);
    double t_ag = flows(&s, span, COMET_COLL_ALL_GATHER, GIB, 1, false, &ag);
    for (int i = 0; i < 2; i++) {
        const comet_flow_result *x = i ? &ag : &rs;
        assert_close(x->bytes_per_tier[0], 20.0 * (19.0 / 20.0 + 1.0 / 20.0) * GIB, 1e-9);
        assert_close(x->bytes_per_tier[1], 5.0 * (16.0 / 20.0 + 4.0 / 20.0) * GIB, 1e-9);
    }
    d->in_network_reduction = false;
    double t_ring_rs = flows(&s, span, COMET_COLL_REDUCE_SCATTER, GIB, 1, false, &ring_rs);
    assert_close(ring_rs.bytes_per_tier[0], 20.0 * 2.0 * 19.0 / 20.0 * GIB, 1e-9);
    /* the same bandwidth time as the ring's, (n - 1)/n S/B, within the
     * pieces' store-and-forward */
    printf("  FRED 1 GiB in the switches: reduce-scatter %.4f ms, all-gather %.4f ms; ring "
           "reduce-scatter %.4f ms\n",
           t_rs * 1e3, t_ag * 1e3, t_ring_rs * 1e3);
    assert_close(t_rs, t_ring_rs, 0.01);
    assert_close(t_ag, t_ring_rs, 0.01);
    char why[200];
    comet_fabric *f = test_fabric_of(&s);
    assert_false(comet_fabric_uneven(f, why, sizeof why));
    comet_fabric_free(f);
    d->shape.oversubscription[0] = 8.0;
    f = test_fabric_of(&s);
    assert_true(comet_fabric_uneven(f, why, sizeof why));
    assert_string_equal(why, "fred is a FRED fabric oversubscribed 8:1");
    comet_fabric_free(f);

    comet_system w;
    toy_bare_system(&w, "wafer-mesh");
    comet_net_dim *m = toy_add_dim(&w, "mesh", 20, COMET_TOPO_MESH, COMET_ALGO_RING, 3e12, 0.0);
    m->shape.n_axes = 2;
    m->shape.axes[0] = 5;
    m->shape.axes[1] = 4;
    f = test_fabric_of(&w);
    int64_t from[10], near[10], across[10];
    for (int x = 0; x < 5; x++)
        for (int y = 0; y < 2; y++) {
            from[2 * x + y] = x + 5 * (2 * y);       /* rows 0 and 2 */
            near[2 * x + y] = x + 5 * (2 * y + 1);   /* to rows 1 and 3 */
        }
    comet_error err;
    comet_fabric_run *run;
    int64_t id;
    double tn, ta;
    assert_int_equal(comet_fabric_run_new(f, &w, 0, &run, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_sends(run, from, near, 10, GIB, &id, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_finish(run, &err), COMET_OK);
    tn = comet_fabric_run_now(run);
    comet_fabric_run_free(run);
    for (int x = 0; x < 5; x++)
        for (int y = 0; y < 2; y++) {
            from[2 * x + y] = x + 5 * y;             /* rows 0 and 1 */
            across[2 * x + y] = x + 5 * (y + 2);     /* to rows 2 and 3 */
        }
    assert_int_equal(comet_fabric_run_new(f, &w, 0, &run, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_sends(run, from, across, 10, GIB, &id, &err), COMET_OK);
    assert_int_equal(comet_fabric_run_finish(run, &err), COMET_OK);
    ta = comet_fabric_run_now(run);
    comet_fabric_run_free(run);
    comet_fabric_free(f);
    assert_close(tn, GIB / (3e12 / 4.0), 1e-9);  /* a link is B/4 of the NPU's 4 */
    assert_close(ta, 2.0 * tn, 1e-9);
}

static void test_errors(void **state)
{
    (void)state;
    comet_system s;
    toy_bare_system(&s, "ring8");
    comet_net_dim *d = toy_add_dim(&s, "r", 8, COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE, 50e9,
                               0.0);
    comet_error err;
    comet_fabric *f = NULL;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_OK);
    comet_flow_options o;
    comet_flow_options_defaults(&o);
    comet_flow_result r;
    int64_t span[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    /* the double binary tree runs (test_double_binary_tree); the errors: */
    d->algorithm = COMET_ALGO_RING;
    span[0] = 3;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "--span");
    span[0] = 8;
    o.max_flows = 10;
    assert_int_equal(comet_fabric_collective(f, &s, span, COMET_COLL_ALL_REDUCE, GIB, &o, &r, &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "--max-flows");
    comet_fabric_free(f);
    /* a torus whose axes do not multiply to its size */
    d->topology = COMET_TOPO_TORUS;
    d->shape.n_axes = 2;
    d->shape.axes[0] = 3;
    d->shape.axes[1] = 3;
    assert_int_equal(comet_fabric_build(&s, 0, &f, &err), COMET_EINPUT);
    assert_string_equal(err.key, "system.network[0].shape");
}

void suite_fabric(test_tally *t)
{
    const struct CMUnitTest fabric[] = {
        cmocka_unit_test(test_ring_all_reduce),
        cmocka_unit_test(test_two_concurrent_all_reduces),
        cmocka_unit_test(test_run_started_midway),
        cmocka_unit_test(test_rooted_collectives),
        cmocka_unit_test(test_rooted_chunks),
        cmocka_unit_test(test_chunks_on_several_dimensions),
        cmocka_unit_test(test_latency_in_chunks),
        cmocka_unit_test(test_halving_doubling_in_chunks),
        cmocka_unit_test(test_fully_connected_groups_on_part),
        cmocka_unit_test(test_rooted_every_kind),
        cmocka_unit_test(test_ring_all_to_all_multi_hop),
        cmocka_unit_test(test_torus_all_to_all_bisection),
        cmocka_unit_test(test_fat_tree_spine_bound),
        cmocka_unit_test(test_fat_tree_leaves_split_groups),
        cmocka_unit_test(test_ring_keeps_order_behind_an_uneven_dimension),
        cmocka_unit_test(test_ecmp_channels_meet_the_busiest_link),
        cmocka_unit_test(test_ecmp_estimate_is_the_mean_over_hashings),
        cmocka_unit_test(test_in_network_halves_bytes),
        cmocka_unit_test(test_watched_link_series),
        cmocka_unit_test(test_estimator_within_5_percent),
        cmocka_unit_test(test_halving_doubling_folded),
        cmocka_unit_test(test_three_tier_layout),
        cmocka_unit_test(test_ports_are_the_routes_ends),
        cmocka_unit_test(test_in_network_on_a_clos),
        cmocka_unit_test(test_in_network_trees_are_placed),
        cmocka_unit_test(test_spaced_groups_on_a_clos),
        cmocka_unit_test(test_groups_on_part_of_direct_networks),
        cmocka_unit_test(test_sends_on_direct_networks),
        cmocka_unit_test(test_double_binary_tree),
        cmocka_unit_test(test_themis_in_the_flows),
        cmocka_unit_test(test_uneven_fabrics),
        cmocka_unit_test(test_fred_and_the_wafer_mesh),
        cmocka_unit_test(test_errors),
    };
    RUN_GROUP(t, fabric);
}
