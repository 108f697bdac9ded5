/* Tests of the collective cost formulas (src/network): every algorithm x
 * collective x topology against a value worked out by hand from the
 * formula in docs/collectives.md, the degenerate cases, in-network
 * reduction, hierarchical composition over several dimensions, chunk
 * pipelining, point-to-point, and the ASTRA-sim 2.0 reference figure from
 * DESIGN.md; the registry of topologies and algorithms (every enum value
 * has its member) and the patterns each topology prices. The expected numbers in the comments were computed exactly
 * (rational arithmetic) and are asserted to 1e-12 relative. */
#include <math.h>
#include <string.h>

#include "comet/network.h"
#include "tests.h"
#include "../src/network/families.h"

#define EXACT 1e-12

/* The common case: S = 1 GiB, n = 8, B = 50e9 B/s, a = 500 ns.
 * x = S/B = 2^30 / 50e9 = 0.02147483648 s; S/(nB) = 0.00268435456 s. */
static const double GIB = 1073741824.0;
static const double BW = 50e9;
static const double ALPHA = 500e-9;

static comet_link mk(int64_t n, comet_topology topo, comet_algorithm algo)
{
    comet_link l;
    memset(&l, 0, sizeof l);
    l.n = n;
    l.topology = topo;
    l.algorithm = algo;
    l.bandwidth = BW;
    l.latency = ALPHA;
    l.in_network_reduction = false;
    return l;
}

static double t1d(comet_collective c, comet_link l, double bytes)
{
    return comet_collective_time_1d(c, &l, bytes);
}

static void set_dim(comet_system *s, int d, int64_t size, comet_topology topo,
                    comet_algorithm algo, double bw, double eff, double lat)
{
    s->dims[d].size = size;
    s->dims[d].topology = topo;
    s->dims[d].algorithm = algo;
    s->dims[d].bandwidth = bw;
    s->dims[d].efficiency = eff;
    s->dims[d].latency = lat;
    if (s->n_dims < d + 1)
        s->n_dims = d + 1;
}

/* ---- ring algorithm ------------------------------------------------------ */

static void test_ring_switch(void **state)
{
    (void)state;
    comet_link l = mk(8, COMET_TOPO_SWITCH, COMET_ALGO_RING);
    /* AR: 2*7*(500e-9 + 2^30/(8*50e9)) = 14 * 0.00268485456 = 0.03758796384 */
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 0.03758796384, EXACT);
    /* RS = AG = 7 * 0.00268485456 = 0.01879398192 */
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 0.01879398192, EXACT);
    assert_close(t1d(COMET_COLL_ALL_GATHER, l, GIB), 0.01879398192, EXACT);
    /* A2A (pairwise exchange, n-1 shifts of S/n, shift d beside n-d: two
     * rounds in flight, as the flows run them): RS's bandwidth, 4 rounds'
     * latency, 4*500e-9 + 7/8 * 0.02147483648 = 0.01879248192 */
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, l, GIB), 0.01879248192, EXACT);
}

static void test_ring_other_topologies(void **state)
{
    (void)state;
    /* The ring schedule reaches full bandwidth on every topology for
     * RS/AG/AR (two counter-rotating rings; concurrent rings on FC). The
     * shaped topologies (torus, mesh, Clos) have their own tests
     * (test_fabric.c): a mesh's line, for one, halves it. */
    for (int t = 0; t <= COMET_TOPO_SWITCH; t++) {
        comet_link l = mk(8, (comet_topology)t, COMET_ALGO_RING);
        assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 0.03758796384, EXACT);
        assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 0.01879398192, EXACT);
        assert_close(t1d(COMET_COLL_ALL_GATHER, l, GIB), 0.01879398192, EXACT);
    }
    /* A2A on a ring topology: blocks relayed the shorter way, the pairs
     * of rounds by distance one after another, 1 + 2 + 3 + 4 hops:
     * 10a + floor(n^2/4)/n * x = 10*500e-9 + 16/8 * 0.02147483648
     * = 5e-6 + 0.04294967296 = 0.04295467296 */
    comet_link r = mk(8, COMET_TOPO_RING, COMET_ALGO_RING);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, r, GIB), 0.04295467296, EXACT);
    /* fully connected: nothing orders the rounds, every block posted at
     * once over its own link, one latency: the direct all-to-all's
     * 500e-9 + 7/8 * 0.02147483648 */
    comet_link fc = mk(8, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_RING);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, fc, GIB), 0.01879098192, EXACT);
}

/* ---- direct ------------------------------------------------------------- */

static void test_direct(void **state)
{
    (void)state;
    /* switch and fully connected: RS = AG = A2A = a + 7/8 x
     * = 500e-9 + 0.01879048192 = 0.01879098192; AR = 2x that */
    for (int t = COMET_TOPO_FULLY_CONNECTED; t <= COMET_TOPO_SWITCH; t++) {
        comet_link l = mk(8, (comet_topology)t, COMET_ALGO_DIRECT);
        assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 0.01879098192, EXACT);
        assert_close(t1d(COMET_COLL_ALL_GATHER, l, GIB), 0.01879098192, EXACT);
        assert_close(t1d(COMET_COLL_ALL_TO_ALL, l, GIB), 0.01879098192, EXACT);
        assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 0.03758196384, EXACT);
    }
    /* ring topology: floor(n^2/4)/n x = 2x over the busiest link, which
     * takes d pieces of x/4 from d = 1..3 hops and 2 from 4: it is busy
     * from the neighbours' latency on while the farther ones' run,
     * max(a + 2x, 4a + 1.25x) = 500e-9 + 0.04294967296 = 0.04295017296
     * (floor(n/2) a + 2x before: 0.04295167296) */
    comet_link r = mk(8, COMET_TOPO_RING, COMET_ALGO_DIRECT);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, r, GIB), 0.04295017296, EXACT);
    assert_close(t1d(COMET_COLL_ALL_GATHER, r, GIB), 0.04295017296, EXACT);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, r, GIB), 0.04295017296, EXACT);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, r, GIB), 2 * 0.04295017296, EXACT);
    /* latency-bound (1 KiB): 4a and the farthest pieces' 0.5 x,
     * x = 1024 / 50e9 */
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, r, 1024.0), 4 * 500e-9 + 0.5 * 1024.0 / 50e9,
                 EXACT);
    /* n = 3 on a ring: every peer is a neighbour, direct = ring bandwidth:
     * 1*a + (1*2)/3 x */
    comet_link r3 = mk(3, COMET_TOPO_RING, COMET_ALGO_DIRECT);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, r3, GIB),
                 500e-9 + 2.0 / 3.0 * 0.02147483648, EXACT);
}

/* ---- halving-doubling ----------------------------------------------------- */

static void test_halving_doubling(void **state)
{
    (void)state;
    comet_link l = mk(8, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING);
    /* RS = AG = log2(8) a + 7/8 x = 1.5e-6 + 0.01879048192 = 0.01879198192 */
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 0.01879198192, EXACT);
    assert_close(t1d(COMET_COLL_ALL_GATHER, l, GIB), 0.01879198192, EXACT);
    /* AR = RS + AG = 0.03758396384 */
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 0.03758396384, EXACT);
    /* A2A (Bruck): log2(8) a + log2(8)/2 x = 1.5e-6 + 1.5*0.02147483648
     * = 0.03221375472 */
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, l, GIB), 0.03221375472, EXACT);

    /* fully connected: one partner per step over one link of B/7:
     * RS = 3a + 7*7/8 x = 1.5e-6 + 6.125*0.02147483648 = 0.13153487344
     * A2A = 3a + 7*3/2 x = 1.5e-6 + 10.5 x = 0.22548728304 */
    comet_link fc = mk(8, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_HALVING_DOUBLING);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, fc, GIB), 0.13153487344, EXACT);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, fc, GIB), 2 * 0.13153487344, EXACT);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, fc, GIB), 0.22548728304, EXACT);

    /* ring topology, distance doubling: hops 1+2+4 = 7, bandwidth
     * (L - 1/2) x = 2.5 x: 3.5e-6 + 0.0536870912 = 0.0536905912.
     * Bruck: shifts of 1, 2, 4 the shorter way, the last a tie split
     * both ways: 7 a + (1 + 2 + 2) x = 3.5e-6 + 5 x = 0.1073776824 */
    comet_link r = mk(8, COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, r, GIB), 0.0536905912, EXACT);
    assert_close(t1d(COMET_COLL_ALL_GATHER, r, GIB), 0.0536905912, EXACT);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, r, GIB), 2 * 0.0536905912, EXACT);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, r, GIB), 0.1073776824, EXACT);
    /* n = 2 on a ring: one exchange with the neighbour = ring: a + x/2 */
    comet_link r2 = mk(2, COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING);
    comet_link r2r = mk(2, COMET_TOPO_RING, COMET_ALGO_RING);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, r2, GIB),
                 t1d(COMET_COLL_REDUCE_SCATTER, r2r, GIB), EXACT);
}

/* Not a power of two: folded as MPICH folds it (net_hd; Thakur,
 * Rabenseifner & Gropp 2005, Sec. 4). n = 6: p = 4, r = 2; members 0 and
 * 2 send their whole buffer to 1 and 3 (x through a port), the four run
 * the power-of-two halving and doubling on S (2 x 3/4 x), 1 and 3 send
 * the result back (x): AR = 6 a + 3.5 x, where the old L = 3 steps of
 * the power-of-two term priced 6 a + 5/3 x. A reduce-scatter alone
 * carries blocks of S/6, two on each of ranks 0 and 1 (the survivors 1
 * and 3): the fold S, steps of 3 and 2 blocks (the sets based at rank
 * 0), the unfold's block: 4 a + (1 + 6/6) x = 4 a + 2 x; the all-gather
 * is its mirror. */
static void test_halving_doubling_non_power_of_two(void **state)
{
    (void)state;
    const double x = 0.02147483648; /* 1 GiB at 50 GB/s */
    comet_link l = mk(6, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 6 * 500e-9 + 3.5 * x, EXACT);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 4 * 500e-9 + 2.0 * x, EXACT);
    assert_close(t1d(COMET_COLL_ALL_GATHER, l, GIB), 4 * 500e-9 + 2.0 * x, EXACT);
    /* a power of two is not folded: n = 8, 3 steps, 7/8 x a pass */
    comet_link l8 = mk(8, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l8, GIB), 1.5e-6 + 0.875 * x, EXACT);
    assert_true(t1d(COMET_COLL_ALL_REDUCE, l8, GIB) < t1d(COMET_COLL_ALL_REDUCE, l, GIB));
    /* n = 5 (r = 1): blocks 3 + 1 + 1 = 5 in the halving, 1 + 6/5 x;
     * n = 9 (p = 8, r = 1): 7 + 1 + 1 + 1 = 10, 1 + 11/9 x, 5 steps */
    comet_link l5 = mk(5, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING);
    comet_link l9 = mk(9, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l5, GIB), 2e-6 + 2.2 * x, EXACT);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l9, GIB), 2.5e-6 + 20.0 / 9.0 * x, EXACT);
    /* fully connected: every message on one link of B/5 */
    comet_link f6 = mk(6, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_HALVING_DOUBLING);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, f6, GIB), 6 * 500e-9 + 17.5 * x, EXACT);
    /* ring topology, n = 6 (links of B/2: S takes 2 x on one): the folds
     * 0 -> 1 and 2 -> 3, 2 x; 1 and 3 (2 apart) exchange S/2, 1 x, while
     * 4 and 5 ran theirs during the fold; 1 - 4 (3 apart, the tie's
     * halves on opposite links) and 3 - 5 share links both ways, S/4 each:
     * 1 x; the doubling the mirror (1 x, 1 x) and the unfold 2 x:
     * 8 x, hops 1 + 2 + 3 each way: 12 a. (The old closed form: 12 a +
     * 5 x.) Bruck's all-to-all is unchanged: shifts 1, 2 and 4 (2 the
     * other way): 5 a + (1 + 2 + 2) x = 2.5e-6 + 5 x */
    comet_link r6 = mk(6, COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, r6, GIB), 12 * 500e-9 + 8.0 * x, EXACT);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, r6, GIB), 2.5e-6 + 5.0 * x, EXACT);
}

/* ---- double binary tree --------------------------------------------------- */

static void test_double_binary_tree(void **state)
{
    (void)state;
    comet_link l = mk(8, COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE);
    /* AR = 2 log2(8) a + 2 x = 3e-6 + 0.04294967296 = 0.04295267296 */
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 0.04295267296, EXACT);
    /* RS, AG, A2A fall back to the ring schedule (A2A: pairwise rounds,
     * two at once) */
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 0.01879398192, EXACT);
    assert_close(t1d(COMET_COLL_ALL_GATHER, l, GIB), 0.01879398192, EXACT);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, l, GIB), 0.01879248192, EXACT);
    /* fully connected: a tree edge carries S/2 each way over one B/7
     * link, and NPUs 2 and 5 are an edge of both heaps (S each way):
     * 2*3 a + 7 x = 3e-6 + 7 x = 0.15032685536 */
    comet_link fc = mk(8, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_DOUBLE_BINARY_TREE);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, fc, GIB), 0.15032685536, EXACT);
    /* on 4 NPUs or fewer no port moves 2S: 1.5 x on 3 and 4, x on 2 */
    comet_link l4 = mk(4, COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE);
    comet_link l2 = mk(2, COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l4, GIB), 4 * 500e-9 + 1.5 * GIB / 50e9, EXACT);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l2, GIB), 2 * 500e-9 + GIB / 50e9, EXACT);
    /* ring topology: the heaps' edges the shorter way round (a tie by
     * parity); the links 2-3, 3-4 and 4-5 carry six edges' S/2 each way
     * at B/2, 6 x; the longest root-to-leaf route 0-1-3-7 is 1+2+4 hops:
     * 14 a + 6 x = 7e-6 + 0.12884901888 = 0.12885601888; RS falls back
     * to the ring (0.01879398192) */
    comet_link r = mk(8, COMET_TOPO_RING, COMET_ALGO_DOUBLE_BINARY_TREE);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, r, GIB), 0.12885601888, EXACT);
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, r, GIB), 0.01879398192, EXACT);
    /* small messages: the tree's 2 log2 n latency beats the ring's 2(n-1):
     * n = 64, 1 KiB: tree 12a + 2 KiB/B, ring 126a + ... */
    comet_link t64 = mk(64, COMET_TOPO_SWITCH, COMET_ALGO_DOUBLE_BINARY_TREE);
    comet_link r64 = mk(64, COMET_TOPO_SWITCH, COMET_ALGO_RING);
    assert_close(t1d(COMET_COLL_ALL_REDUCE, t64, 1024.0), 12 * 500e-9 + 2048.0 / 50e9, EXACT);
    assert_true(t1d(COMET_COLL_ALL_REDUCE, t64, 1024.0) < t1d(COMET_COLL_ALL_REDUCE, r64, 1024.0));
}

/* ---- in-network reduction -------------------------------------------------- */

static void test_in_network_reduction(void **state)
{
    (void)state;
    comet_link l = mk(8, COMET_TOPO_SWITCH, COMET_ALGO_RING);
    l.in_network_reduction = true;
    /* AR = 2a + x = 1e-6 + 0.02147483648 = 0.02147583648 */
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 0.02147583648, EXACT);
    /* the same whatever the algorithm */
    l.algorithm = COMET_ALGO_DOUBLE_BINARY_TREE;
    assert_close(t1d(COMET_COLL_ALL_REDUCE, l, GIB), 0.02147583648, EXACT);
    /* halves the ring's bandwidth term for large n: n = 1024, no latency */
    comet_link big = mk(1024, COMET_TOPO_SWITCH, COMET_ALGO_RING);
    big.latency = 0.0;
    double ring = t1d(COMET_COLL_ALL_REDUCE, big, GIB);
    big.in_network_reduction = true;
    double inr = t1d(COMET_COLL_ALL_REDUCE, big, GIB);
    assert_close(inr / ring, 1024.0 / (2.0 * 1023.0), EXACT);
    /* reduce-scatter, all-gather, all-to-all are not changed */
    l.algorithm = COMET_ALGO_RING;
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 0.01879398192, EXACT);
    assert_close(t1d(COMET_COLL_ALL_GATHER, l, GIB), 0.01879398192, EXACT);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, l, GIB), 0.01879248192, EXACT);
    /* ignored without a switch */
    comet_link fc = mk(8, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_RING);
    fc.in_network_reduction = true;
    assert_close(t1d(COMET_COLL_ALL_REDUCE, fc, GIB), 0.03758796384, EXACT);
}

/* ---- degenerate inputs ------------------------------------------------------ */

static void test_degenerate(void **state)
{
    (void)state;
    for (int a = 0; a < COMET_ALGO_COUNT; a++)
        for (int t = 0; t < COMET_TOPO_COUNT; t++)
            for (int c = COMET_COLL_ALL_REDUCE; c < COMET_COLL_COUNT; c++) {
                comet_link l = mk(8, (comet_topology)t, (comet_algorithm)a);
                if (c == COMET_COLL_BARRIER) {
                    /* a barrier moves its 4 bytes whatever it is given */
                    assert_true(t1d((comet_collective)c, l, 0.0) > 0.0);
                    l.n = 1;
                    assert_true(t1d((comet_collective)c, l, GIB) == 0.0);
                    continue;
                }
                assert_true(t1d((comet_collective)c, l, 0.0) == 0.0);
                assert_true(t1d((comet_collective)c, l, -5.0) == 0.0);
                assert_true(t1d((comet_collective)c, l, NAN) == 0.0);
                l.n = 1;
                assert_true(t1d((comet_collective)c, l, GIB) == 0.0);
                l.n = 0;
                assert_true(t1d((comet_collective)c, l, GIB) == 0.0);
                l.n = -3;
                assert_true(t1d((comet_collective)c, l, GIB) == 0.0);
                /* zero or negative bandwidth: infinitely slow, never NaN */
                l.n = 8;
                l.bandwidth = 0.0;
                assert_true(isinf(t1d((comet_collective)c, l, GIB)));
                l.bandwidth = -1.0;
                assert_true(isinf(t1d((comet_collective)c, l, GIB)));
                /* zero bandwidth but nothing to send: 0 */
                assert_true(t1d((comet_collective)c, l, 0.0) == 0.0);
            }
    comet_link l = mk(8, COMET_TOPO_SWITCH, COMET_ALGO_RING);
    assert_true(comet_collective_time_1d(COMET_COLL_NONE, &l, GIB) == 0.0);
    assert_true(comet_collective_time_1d(COMET_COLL_ALL_REDUCE, NULL, GIB) == 0.0);
    /* a negative latency counts as 0 */
    l.latency = -1.0;
    assert_close(t1d(COMET_COLL_REDUCE_SCATTER, l, GIB), 7.0 / 8.0 * 0.02147483648, EXACT);
}

/* Finite, non-negative and non-decreasing in bytes and in n for every
 * combination, from 1 byte to 1 TiB and n up to 2^40. */
static void test_sane_everywhere(void **state)
{
    (void)state;
    static const int64_t ns[] = {2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 64, 100, 1024, 4096,
                                 (int64_t)1 << 40};
    for (int a = 0; a < COMET_ALGO_COUNT; a++)
        for (int t = 0; t < COMET_TOPO_COUNT; t++)
            for (int c = COMET_COLL_ALL_REDUCE; c < COMET_COLL_COUNT; c++)
                for (int inr = 0; inr < 2; inr++)
                    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
                        comet_link l = mk(ns[i], (comet_topology)t, (comet_algorithm)a);
                        l.in_network_reduction = inr != 0;
                        double prev = 0.0;
                        for (double b = 1.0; b <= 1.1e12; b *= 10.0) {
                            double v = t1d((comet_collective)c, l, b);
                            assert_true(isfinite(v));
                            assert_true(v > 0.0);
                            assert_true(v >= prev);
                            prev = v;
                        }
                    }
    /* on a ring topology no algorithm beats the ring schedule's bandwidth
     * for RS/AG/AR (Patarasuk & Yuan): latency-free check at n = 2..64 */
    for (int64_t n = 2; n <= 64; n++)
        for (int a = 0; a < COMET_ALGO_COUNT; a++)
            for (int c = COMET_COLL_ALL_REDUCE; c <= COMET_COLL_ALL_GATHER; c++) {
                comet_link l = mk(n, COMET_TOPO_RING, (comet_algorithm)a);
                comet_link r = mk(n, COMET_TOPO_RING, COMET_ALGO_RING);
                l.latency = r.latency = 0.0;
                assert_true(t1d((comet_collective)c, l, GIB) >=
                            t1d((comet_collective)c, r, GIB) * (1.0 - 1e-12));
            }
}

/* ---- the families: registry, topology patterns, every combination -------- */

/* Every enum value has its member, the member says which value it is, and
 * every entry a caller may reach is filled in. */
static void test_registry_covers_every_enum(void **state)
{
    (void)state;
    for (int t = 0; t < COMET_TOPO_COUNT; t++) {
        const net_topology *topo = net_topologies[t];
        assert_non_null(topo);
        assert_int_equal(topo->id, t);
        assert_ptr_equal(net_topology_of((comet_topology)t), topo);
        assert_non_null(topo->ring_pass);
        assert_non_null(topo->pairwise_exchange);
        assert_non_null(topo->scatter_to_all);
        assert_non_null(topo->recursive_halving);
        assert_non_null(topo->bruck);
        assert_non_null(topo->double_tree);
    }
    for (int a = 0; a < COMET_ALGO_COUNT; a++) {
        const net_algorithm *algo = net_algorithms[a];
        assert_non_null(algo);
        assert_int_equal(algo->id, a);
        assert_ptr_equal(net_algorithm_of((comet_algorithm)a), algo);
        for (int c = COMET_COLL_ALL_REDUCE; c < COMET_COLL_SYMMETRIC; c++)
            assert_non_null(algo->time[c]);
        assert_non_null(algo->pass_messages);
    }
    /* messages per NPU (the simulator's endpoint delays): n-1 per pass for
     * the ring and direct, ceil(log2 n) for the log-step algorithms; an
     * all-reduce is two passes; nothing on one NPU */
    comet_link l8 = {.n = 8, .topology = COMET_TOPO_SWITCH, .bandwidth = 1e9};
    comet_link l5 = l8;
    l5.n = 5;
    static const double per_pass8[COMET_ALGO_COUNT] = {
        [COMET_ALGO_RING] = 7.0, [COMET_ALGO_DIRECT] = 7.0,
        [COMET_ALGO_HALVING_DOUBLING] = 3.0, [COMET_ALGO_DOUBLE_BINARY_TREE] = 3.0};
    static const double per_pass5[COMET_ALGO_COUNT] = {
        [COMET_ALGO_RING] = 4.0, [COMET_ALGO_DIRECT] = 4.0,
        [COMET_ALGO_HALVING_DOUBLING] = 3.0, [COMET_ALGO_DOUBLE_BINARY_TREE] = 3.0};
    for (int a = 0; a < COMET_ALGO_COUNT; a++) {
        l8.algorithm = l5.algorithm = (comet_algorithm)a;
        assert_true(comet_collective_messages(COMET_COLL_REDUCE_SCATTER, &l8) == per_pass8[a]);
        assert_true(comet_collective_messages(COMET_COLL_ALL_GATHER, &l8) == per_pass8[a]);
        assert_true(comet_collective_messages(COMET_COLL_ALL_TO_ALL, &l8) == per_pass8[a]);
        assert_true(comet_collective_messages(COMET_COLL_ALL_REDUCE, &l8) == 2.0 * per_pass8[a]);
        assert_true(comet_collective_messages(COMET_COLL_ALL_REDUCE, &l5) == 2.0 * per_pass5[a]);
        comet_link one = l8;
        one.n = 1;
        assert_true(comet_collective_messages(COMET_COLL_ALL_REDUCE, &one) == 0.0);
    }
    /* only the switch reduces in the network */
    assert_non_null(net_topology_switch.in_network_all_reduce);
    assert_null(net_topology_ring.in_network_all_reduce);
    assert_null(net_topology_fully_connected.in_network_all_reduce);
    /* values out of range: a switch, the ring algorithm */
    assert_ptr_equal(net_topology_of((comet_topology)COMET_TOPO_COUNT), &net_topology_switch);
    assert_ptr_equal(net_topology_of((comet_topology)-1), &net_topology_switch);
    assert_ptr_equal(net_algorithm_of((comet_algorithm)COMET_ALGO_COUNT), &net_algorithm_ring);
    assert_ptr_equal(net_algorithm_of((comet_algorithm)-1), &net_algorithm_ring);
}

static void assert_cost(net_cost got, double hops, double load)
{
    assert_close(got.hops, hops, EXACT);
    assert_close(got.load, load, EXACT);
}

/* The patterns on n = 8 (D = 4, Q = 16, L = 3, H = 1+2+4 = 7), in hops
 * and multiples of x, worked out from docs/collectives.md. */
static void test_topology_patterns(void **state)
{
    (void)state;
    comet_link l = mk(8, COMET_TOPO_RING, COMET_ALGO_RING);
    const net_topology *r = &net_topology_ring;
    assert_cost(r->ring_pass(&l), 7.0, 7.0 / 8.0);
    assert_cost(r->pairwise_exchange(&l), 10.0, 16.0 / 8.0); /* 1 + 2 + 3 + 4 */
    assert_cost(r->scatter_to_all(&l), 4.0, 16.0 / 8.0);
    /* its busiest link takes d pieces of x/4 from d = 1, 2, 3 hops and 2
     * from 4 (the ties, half each way): from the neighbours' latency on,
     * at a = x/2 the largest of a + 2x, 2a + 1.75x, 3a + 1.25x, 4a + 0.5x
     * is 2.75x at 3 hops (the ends give 2.5 x) */
    net_cost spread = r->scatter_to_all(&l);
    assert_close(spread.lead, 1.0, EXACT);
    assert_close(spread.near, 0.25, EXACT);
    assert_close(spread.grow, 0.25, EXACT);
    assert_close(net_seconds(spread, 0.5, 1.0), 2.75, EXACT);
    assert_close(net_seconds(spread, 0.0, 1.0), 2.0, EXACT);
    assert_close(net_seconds(spread, 1.0, 0.0), 4.0, EXACT);
    assert_close(net_seconds(spread, 1.0, 1.0), 4.5, EXACT); /* 3a + 1.25x, 4a + 0.5x */
    /* one way round: the shifts d and n-d both forward, the next once all
     * but one before have arrived: a chain of 1, 7; 2 (at 1), 6 (at 3);
     * 3 (at 7), 5 (at 9); 4 (at 10): 14 hops, where one round after
     * another waits 1 + 2 + ... + 7 = 28 */
    comet_net_shape ahead = {.unidirectional = true};
    comet_link forward = l;
    forward.shape = &ahead;
    assert_cost(r->pairwise_exchange(&forward), 14.0, 8.0 * 7.0 / 16.0);
    forward.n = 9;
    assert_cost(r->pairwise_exchange(&forward), 20.0, 9.0 * 8.0 / 18.0); /* (n^2 - 1)/4 */
    assert_cost(r->recursive_halving(&l), 7.0, 2.5);
    assert_cost(r->bruck(&l), 7.0, 1.0 + 2.0 + 2.0); /* shifts 1, 2, 4 (a tie: half each way) */
    assert_cost(r->double_tree(&l), 14.0, 6.0); /* 3S each way over 3-4, at B/2 */
    /* the trees on direct networks, each edge on the fabric's route: one
     * way round every edge's S/2 goes d hops down and 8-d back up, link
     * 0->1 carrying 14 of them at B (7 x), the longest route 3 edges of
     * 8 hops; a 4 x 4 torus's busiest link carries 2S at B/4 (8 x), the
     * route 0-2-5-11 7 hops each way; a mesh line of 16's middle link 8S
     * each way at B/2 (16 x), 0-1-3-7-15 1+2+4+8 hops each way; groups
     * of 4, 2 apart, on a ring of 8: two interleaved trees, 3S on the
     * busiest link at B/2 (6 x), the route 0-2-6 2+4 hops each way */
    comet_net_shape one_way = {.unidirectional = true};
    comet_net_shape four_by_four = {.n_axes = 2, .axes = {4, 4}};
    comet_link u = l, t = mk(16, COMET_TOPO_TORUS, COMET_ALGO_DOUBLE_BINARY_TREE);
    u.shape = &one_way;
    assert_cost(r->double_tree(&u), 24.0, 7.0);
    t.shape = &four_by_four;
    assert_cost(net_topology_torus.double_tree(&t), 14.0, 8.0);
    t.shape = NULL;
    t.topology = COMET_TOPO_MESH;
    assert_cost(net_topology_mesh.double_tree(&t), 30.0, 16.0);
    comet_link spaced = mk(4, COMET_TOPO_RING, COMET_ALGO_DOUBLE_BINARY_TREE);
    spaced.size = 8;
    spaced.spacing = 2;
    assert_cost(r->double_tree(&spaced), 12.0, 6.0);
    /* past the links counted, a group that tiles part of the dimension is
     * counted on its block: 8 side by side on a ring of 8192 as on a ring
     * of 16 (a line of 8: 8 x), 32 on a 16 x 16 x 16 torus on a ring of 16
     * by a line of 2 (21 edges' S/2 on the busiest link at B/6: 63 x; the
     * flows take 1.2 % longer) */
    comet_link part = mk(8, COMET_TOPO_RING, COMET_ALGO_DOUBLE_BINARY_TREE);
    part.size = 16;
    assert_cost(r->double_tree(&part), 14.0, 8.0);
    part.size = 8192;
    assert_cost(r->double_tree(&part), 14.0, 8.0);
    comet_net_shape cube = {.n_axes = 3, .axes = {16, 16, 16}};
    comet_link slab = mk(32, COMET_TOPO_TORUS, COMET_ALGO_DOUBLE_BINARY_TREE);
    slab.shape = &cube;
    slab.size = 4096;
    assert_cost(net_topology_torus.double_tree(&slab), 32.0, 63.0);

    const net_topology *fc = &net_topology_fully_connected;
    assert_cost(fc->ring_pass(&l), 7.0, 7.0 / 8.0);
    assert_cost(fc->pairwise_exchange(&l), 1.0, 7.0 / 8.0); /* every block at once */
    assert_cost(fc->scatter_to_all(&l), 1.0, 7.0 / 8.0);
    assert_cost(fc->recursive_halving(&l), 3.0, 49.0 / 8.0); /* one B/7 link per step */
    assert_cost(fc->bruck(&l), 3.0, 7.0 * 1.5);
    assert_cost(fc->double_tree(&l), 6.0, 7.0); /* a pair is an edge of both heaps */

    const net_topology *sw = &net_topology_switch;
    assert_cost(sw->ring_pass(&l), 7.0, 7.0 / 8.0);
    assert_cost(sw->pairwise_exchange(&l), 4.0, 7.0 / 8.0); /* two rounds at once */
    assert_cost(sw->scatter_to_all(&l), 1.0, 7.0 / 8.0);
    assert_cost(sw->recursive_halving(&l), 3.0, 7.0 / 8.0);
    assert_cost(sw->bruck(&l), 3.0, 1.5);
    assert_cost(sw->double_tree(&l), 6.0, 2.0);
    assert_cost(sw->in_network_all_reduce(&l), 2.0, 1.0);
    /* n = 2: one neighbour, every topology alike for the log-step ones */
    comet_link two = mk(2, COMET_TOPO_RING, COMET_ALGO_RING);
    assert_cost(r->recursive_halving(&two), 1.0, 0.5);
    assert_cost(fc->recursive_halving(&two), 1.0, 0.5);
    assert_cost(sw->recursive_halving(&two), 1.0, 0.5);
}

/* The double binary tree on a whole bidirectional ring of n, counted hop
 * by hop as the flows route it (both heaps, S/2 each way an edge, the
 * shorter way, a tie forward from an even NPU): the busiest directed
 * link's S at B/2 (B on a ring of 2) into *load, the longest
 * root-to-leaf route down and back up into *hops. Past 4096 NPUs the closed form's rough
 * 2H a + max(2, L) x: false. */
static bool ring_tree(int64_t n, double *hops, double *load)
{
    static double bytes[2 * 4096];
    static int64_t path[4096];
    if (n > 4096)
        return false;
    memset(bytes, 0, sizeof bytes);
    int64_t far = 0;
    path[0] = 0;
    for (int t = 0; t < 2; t++)
        for (int64_t q = 1; q < n; q++) {
            int64_t p = (q - 1) / 2, a = t ? n - 1 - q : q, b = t ? n - 1 - p : p;
            int64_t h = 0;
            for (int e = 0; e < 2; e++) {
                int64_t from = e ? b : a, to = e ? a : b, fwd = ((to - from) % n + n) % n;
                bool back = n > 2 && (n - fwd < fwd || (n - fwd == fwd && (from & 1)));
                int64_t way = back ? n - fwd : fwd;
                h += way;
                for (int64_t k = 0, at = from; k < way; k++) {
                    bytes[2 * at + (back ? 1 : 0)] += 0.5;
                    at = back ? (at + n - 1) % n : (at + 1) % n;
                }
            }
            path[q] = path[p] + h;
            far = path[q] > far ? path[q] : far;
        }
    double most = 0.0;
    for (int64_t i = 0; i < 2 * n; i++)
        most = bytes[i] > most ? bytes[i] : most;
    *hops = (double)far;
    *load = (n > 2 ? 2.0 : 1.0) * most;
    return true;
}

/* The summary tables of docs/collectives.md, one dimension, in seconds:
 * the closed form of collective c with algorithm algo on topology topo. */
static double closed_form(comet_algorithm algo, comet_topology topo, comet_collective c,
                          int64_t ni, double a, double x)
{
    double n = (double)ni, D = (double)(ni / 2), Q = D * (double)(ni - ni / 2);
    int L = 0;
    while (((int64_t)1 << L) < ni)
        L++;
    double H = 0.0;
    for (int i = 0; i < L; i++)
        H += fmin(ldexp(1.0, i), D);
    double Ld = (double)L, spread = (n - 1.0) / n;
    /* Bruck on a ring: the shift by d the shorter way, min(d, n-d) hops
     * and messages a link, d/2 each way on a tie */
    double bruck_hops = 0.0, bruck_load = 0.0;
    for (int i = 0; i < L; i++) {
        double d = ldexp(1.0, i), near = fmin(d, n - d);
        bruck_hops += near;
        bruck_load += 2.0 * d == n ? d / 2.0 : near;
    }
    bool ring = topo == COMET_TOPO_RING, fc = topo == COMET_TOPO_FULLY_CONNECTED;
    if (algo == COMET_ALGO_DOUBLE_BINARY_TREE) {
        double th, tl;
        if (c == COMET_COLL_ALL_REDUCE && ring && ring_tree(ni, &th, &tl))
            return th * a + tl * x;
        if (c == COMET_COLL_ALL_REDUCE)
            return ring ? 2.0 * H * a + fmax(2.0, Ld) * x
                        : 2.0 * Ld * a +
                              (fc ? n - 1.0 : ni <= 2 ? 1.0 : ni <= 4 ? 1.5 : 2.0) * x;
        algo = COMET_ALGO_RING; /* the rest runs the ring schedule */
    }
    double rs = 0.0, a2a = 0.0;
    switch (algo) {
    case COMET_ALGO_RING:
        rs = (n - 1.0) * a + spread * x;
        /* pairwise rounds: relayed round a ring; two at once through a
         * switch's port; all at once over a fully-connected group */
        a2a = (ring ? D * (D + 1.0) / 2.0 : fc ? 1.0 : (double)(ni / 2)) * a +
              (ring ? Q / n : spread) * x;
        break;
    case COMET_ALGO_DIRECT:
        /* on a ring the near messages fill the links while the far
         * ones' latencies run: d pieces of 2x/n a link from d hops, so the
         * link is through at the largest over d of d a + (Q - d(d-1))/n x,
         * concave in d: at d = 1, D or beside (a n / x + 1) / 2 */
        if (ring) {
            double best = 0.0, top = x > 0.0 ? (a * n / x + 1.0) / 2.0 : D;
            double tries[4] = {1.0, D, floor(top), floor(top) + 1.0};
            for (int t = 0; t < 4; t++) {
                double d = fmin(fmax(tries[t], 1.0), D);
                best = fmax(best, d * a + (Q - d * (d - 1.0)) / n * x);
            }
            rs = a2a = best;
        } else {
            rs = a2a = a + spread * x;
        }
        break;
    case COMET_ALGO_HALVING_DOUBLING:
        rs = ring ? H * a + (Ld - 0.5) * x : Ld * a + (fc ? (n - 1.0) * spread : spread) * x;
        a2a = ring ? bruck_hops * a + bruck_load * x
                   : Ld * a + (fc ? (n - 1.0) : 1.0) * Ld / 2.0 * x;
        if (ni & (ni - 1)) {
            /* folded (MPICH): p = 2^(L-1), r = n - p; on a ring the
             * routed schedule (test_fabric's sweeps), NaN here */
            if (ring && c != COMET_COLL_ALL_TO_ALL)
                return NAN;
            double p = ldexp(1.0, L - 1), r = n - p, link = fc ? n - 1.0 : 1.0, blocks = p - 1.0;
            for (int j = 0; j < L - 1; j++)
                blocks += ceil(r / ldexp(1.0, j + 1));
            /* the fold (S, or the own block), the weighted halving, the
             * unfold (the block, or S) */
            rs = (Ld + 1.0) * a + (1.0 + (blocks + 1.0) / n) * link * x;
            if (c == COMET_COLL_ALL_REDUCE)
                return 2.0 * Ld * a + (2.0 + 2.0 * (p - 1.0) / p) * link * x;
        }
        break;
    default:
        fail();
    }
    return c == COMET_COLL_ALL_REDUCE ? 2.0 * rs : c == COMET_COLL_ALL_TO_ALL ? a2a : rs;
}

/* Every (algorithm, topology, collective) on many n equals its closed
 * form; in-network reduction on a switch is 2a + x whatever the algorithm. */
/* Groups of a billion NPUs, on part of a ring (side by side and spaced),
 * one way round, on a torus without a shape and a Clos's double binary
 * tree: every pattern is a closed form (or a bounded count), so pricing
 * them returns at once, finite, whatever n (a loop over the members or
 * the shifts would not). A one-way ring's all-to-all: size (n-1)/(2n) x. */
static void test_huge_groups_in_closed_form(void **state)
{
    (void)state;
    const int64_t n = (int64_t)1 << 30;
    comet_net_shape one_way = {0}, tree = {0};
    one_way.unidirectional = true;
    tree.radix = 64;
    tree.oversubscription[0] = 2;
    struct {
        comet_topology topo;
        const comet_net_shape *shape;
        int64_t size, spacing;
    } cases[] = {{COMET_TOPO_RING, &one_way, 2 * n, 1}, {COMET_TOPO_RING, NULL, 4 * n, 2},
                 {COMET_TOPO_RING, NULL, 2 * n, 1},     {COMET_TOPO_TORUS, NULL, 2 * n, 2},
                 {COMET_TOPO_MESH, NULL, 4 * n, 1},     {COMET_TOPO_FAT_TREE, &tree, 2 * n, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int algo = 0; algo < COMET_ALGO_COUNT; algo++)
            for (int c = COMET_COLL_ALL_REDUCE; c < COMET_COLL_COUNT; c++) {
                if (c == COMET_COLL_BARRIER)
                    continue;
                comet_link l = mk(n, cases[i].topo, (comet_algorithm)algo);
                l.shape = cases[i].shape;
                l.size = cases[i].size;
                l.spacing = cases[i].spacing;
                double t = t1d((comet_collective)c, l, GIB);
                assert_true(t > 0.0 && isfinite(t));
            }
    comet_link l = mk(n, COMET_TOPO_RING, COMET_ALGO_RING);
    l.shape = &one_way;
    l.size = 2 * n;
    double load = 2.0 * (double)n * ((double)n - 1.0) / (2.0 * (double)n);
    assert_close(t1d(COMET_COLL_ALL_TO_ALL, l, GIB),
                 ((double)n - 1.0) * (2.0 * (double)n - (double)n / 2.0) * ALPHA +
                     load * GIB / BW,
                 1e-9);
}

static void test_every_combination_matches_closed_form(void **state)
{
    (void)state;
    static const int64_t big[] = {64, 100, 127, 128, 1000, 1024, 4096, 4097, (int64_t)1 << 40};
    const double x = GIB / BW;
    for (size_t k = 0; k < 39 + sizeof big / sizeof big[0]; k++) {
        int64_t n = k < 39 ? (int64_t)k + 2 : big[k - 39];
        for (int algo = 0; algo < COMET_ALGO_COUNT; algo++)
            for (int topo = 0; topo <= COMET_TOPO_SWITCH; topo++)
                for (int c = COMET_COLL_ALL_REDUCE; c < COMET_COLL_SYMMETRIC; c++) {
                    comet_link l = mk(n, (comet_topology)topo, (comet_algorithm)algo);
                    double want = closed_form((comet_algorithm)algo, (comet_topology)topo,
                                              (comet_collective)c, n, ALPHA, x);
                    if (isnan(want))
                        continue;
                    assert_close(t1d((comet_collective)c, l, GIB), want, EXACT);
                    l.in_network_reduction = true;
                    if (topo == COMET_TOPO_SWITCH && c == COMET_COLL_ALL_REDUCE)
                        want = 2.0 * ALPHA + x;
                    assert_close(t1d((comet_collective)c, l, GIB), want, EXACT);
                }
    }
}

/* ---- several dimensions ------------------------------------------------------ */

/* dim0: Ring(8), ring algorithm, 300e9 B/s, 1 us.
 * dim1: Switch(4), ring algorithm, 25e9 B/s at efficiency 0.8 = 20e9, 5 us. */
static void two_dim_system(comet_system *s, int64_t chunks)
{
    memset(s, 0, sizeof *s);
    set_dim(s, 0, 8, COMET_TOPO_RING, COMET_ALGO_RING, 300e9, 1.0, 1e-6);
    set_dim(s, 1, 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 25e9, 0.8, 5e-6);
    s->collective_chunks = chunks;
}

static void test_hierarchical_all_reduce(void **state)
{
    (void)state;
    comet_system s;
    two_dim_system(&s, 1);
    int64_t span[COMET_MAX_DIMS] = {8, 4, 1, 1, 1, 1, 1, 1};
    /* RS(dim0, S)   = 7 (1e-6 + 2^30/(8*300e9))        = 0.00313874698666667
     * AR(dim1, S/8) = 6 (5e-6 + (2^30/8)/(4*20e9))     = 0.0100963296
     * AG(dim0, S)   = RS(dim0, S)
     * total = 0.0163738235733333 */
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB),
                 0.016373823573333335, EXACT);
    /* the same from the 1-D function */
    comet_link l0 = {.n = 8, .topology = COMET_TOPO_RING, .algorithm = COMET_ALGO_RING,
                     .bandwidth = 300e9, .latency = 1e-6};
    comet_link l1 = {.n = 4, .topology = COMET_TOPO_SWITCH, .algorithm = COMET_ALGO_RING,
                     .bandwidth = 20e9, .latency = 5e-6};
    double want = comet_collective_time_1d(COMET_COLL_REDUCE_SCATTER, &l0, GIB) +
                  comet_collective_time_1d(COMET_COLL_ALL_REDUCE, &l1, GIB / 8) +
                  comet_collective_time_1d(COMET_COLL_ALL_GATHER, &l0, GIB);
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), want, EXACT);
}

static void test_hierarchical_three_dims(void **state)
{
    (void)state;
    /* dim0: Switch(2) direct 400e9, 100 ns; dim1: FC(4) direct 100e9, 1 us;
     * dim2: Switch(2) halving-doubling 50e9, 2 us. */
    comet_system s;
    memset(&s, 0, sizeof s);
    set_dim(&s, 0, 2, COMET_TOPO_SWITCH, COMET_ALGO_DIRECT, 400e9, 1.0, 1e-7);
    set_dim(&s, 1, 4, COMET_TOPO_FULLY_CONNECTED, COMET_ALGO_DIRECT, 100e9, 1.0, 1e-6);
    set_dim(&s, 2, 2, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, 50e9, 1.0, 2e-6);
    s.collective_chunks = 1;
    int64_t span[COMET_MAX_DIMS] = {2, 4, 2, 1, 1, 1, 1, 1};
    /* RS: P0 = 1e-7 + 1/2 * 2^30/400e9          = 0.00134227728
     *     P1 = 1e-6 + 3/4 * (2^30/2)/100e9      = 0.00402753184
     *     P2 = 1*2e-6 + 1/2 * (2^30/8)/50e9     = 0.00134417728
     *     sum = 0.0067139864 */
    assert_close(comet_collective_time(&s, span, COMET_COLL_REDUCE_SCATTER, GIB), 0.0067139864,
                 EXACT);
    /* AG mirrors RS */
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_GATHER, GIB), 0.0067139864,
                 EXACT);
    /* AR = 2 P0 + 2 P1 + AR(dim2, S/8) = 2 P0 + 2 P1 + 2 P2 = 0.0134279728 */
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), 0.0134279728,
                 EXACT);
    /* A2A on dims 0 and 1 only, full S on each:
     * (1e-7 + 1/2 * 2^30/400e9) + (1e-6 + 3/4 * 2^30/100e9) = 0.00939634096 */
    int64_t span01[COMET_MAX_DIMS] = {2, 4, 1, 1, 1, 1, 1, 1};
    assert_close(comet_collective_time(&s, span01, COMET_COLL_ALL_TO_ALL, GIB), 0.00939634096,
                 EXACT);
}

static void test_spans_skipped(void **state)
{
    (void)state;
    comet_system s;
    two_dim_system(&s, 1);
    set_dim(&s, 2, 16, COMET_TOPO_SWITCH, COMET_ALGO_HALVING_DOUBLING, 10e9, 0.0, 3e-6);
    /* only dim1 spanned: the 1-D time with efficiency applied */
    int64_t span[COMET_MAX_DIMS] = {1, 4, 1, 1, 1, 1, 1, 1};
    comet_link l1 = {.n = 4, .topology = COMET_TOPO_SWITCH, .algorithm = COMET_ALGO_RING,
                     .bandwidth = 20e9, .latency = 5e-6};
    for (int c = COMET_COLL_ALL_REDUCE; c < COMET_COLL_COUNT; c++)
        assert_close(comet_collective_time(&s, span, (comet_collective)c, GIB),
                     comet_collective_time_1d((comet_collective)c, &l1, GIB), EXACT);
    /* efficiency 0 means "not given" = 1: dim2 at the full 10e9.
     * HD RS n=16: 4*3e-6 + 15/16 * 2^30/10e9 */
    int64_t span2[COMET_MAX_DIMS] = {1, 1, 16, 1, 1, 1, 1, 1};
    assert_close(comet_collective_time(&s, span2, COMET_COLL_REDUCE_SCATTER, GIB),
                 12e-6 + 15.0 / 16.0 * GIB / 10e9, EXACT);
    /* no spanned dimension, zero bytes, NONE, spans beyond n_dims: 0 */
    int64_t ones[COMET_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    int64_t outside[COMET_MAX_DIMS] = {1, 1, 1, 8, 8, 1, 1, 1};
    assert_true(comet_collective_time(&s, ones, COMET_COLL_ALL_REDUCE, GIB) == 0.0);
    assert_true(comet_collective_time(&s, outside, COMET_COLL_ALL_REDUCE, GIB) == 0.0);
    assert_true(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, 0.0) == 0.0);
    assert_true(comet_collective_time(&s, span, COMET_COLL_NONE, GIB) == 0.0);
    assert_true(comet_collective_time(NULL, span, COMET_COLL_ALL_REDUCE, GIB) == 0.0);
    /* a zero-bandwidth spanned dimension makes it infinite, even chunked */
    s.dims[1].bandwidth = 0.0;
    s.collective_chunks = 4;
    assert_true(isinf(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB)));
}

static void test_chunk_pipelining(void **state)
{
    (void)state;
    comet_system s;
    two_dim_system(&s, 4);
    int64_t span[COMET_MAX_DIMS] = {8, 4, 1, 1, 1, 1, 1, 1};
    /* k = 4, phases on S/4:
     * T1 = RS(dim0, S/4)   = 7 (1e-6 + 2^28/(8*300e9))    = 0.000789936746666667
     * T2 = AR(dim1, S/32)  = 6 (5e-6 + 2^25/(4*20e9))     = 0.0025465824
     * T3 = AG(dim0, S/4)   = T1
     * dim1 bounds it: T1 + T2 + T3 + (4-1) H2, where a chunk holds dim1
     * for its all-reduce's transfer and one pass's latency (the next
     * chunk's reduce-scatter latencies beside its all-gather's):
     * H2 = T2 - 3 * 5e-6; total = 0.0117662030933333 - 9 * 5e-6 */
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB),
                 0.011766203093333334 - 45e-6, EXACT);
    /* fewer than 1 chunk counts as 1 */
    two_dim_system(&s, 0);
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB),
                 0.016373823573333335, EXACT);
    two_dim_system(&s, -7);
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB),
                 0.016373823573333335, EXACT);
    /* one dimension, k chunks: the chunk time and k-1 more, each holding
     * the dimension for its transfer and one pass's latency (its
     * all-gather's run beside the next chunk's reduce-scatter's): T(S) +
     * (k-1) (n-1) latency terms. Switch(4) ring AR at k = 4:
     * 4 * 6 (5e-6 + 2^28/(4*20e9)) - 3 * 3 * 5e-6 */
    int64_t span1[COMET_MAX_DIMS] = {1, 4, 1, 1, 1, 1, 1, 1};
    two_dim_system(&s, 4);
    assert_close(comet_collective_time(&s, span1, COMET_COLL_ALL_REDUCE, GIB),
                 24.0 * (5e-6 + 268435456.0 / 80e9) - 9.0 * 5e-6, EXACT);
    /* a reduce-scatter alone is one pass: its chunks take their
     * latencies in turn, k times the chunk time */
    assert_close(comet_collective_time(&s, span1, COMET_COLL_REDUCE_SCATTER, GIB),
                 12.0 * (5e-6 + 268435456.0 / 80e9), EXACT);
}

/* The reduce-scatter and the all-gather of an inner dimension share its
 * links: an all-reduce over 4 x 4 equal dimensions can never beat the
 * all-reduce over the first 4 alone, but the inner dimension reduce-
 * scatters the next chunks while a chunk is outside. With k = 4, x = S/B:
 * dim0 does RS + AG on S/4 = 2 (3/4) x/4 = 0.375 x a chunk, 4 of them
 * 1.5 x, with nothing before its first phase or after its last; dim1's
 * AR on S/16 = 0.09375 x a chunk comes after a reduce-scatter and before
 * an all-gather of 0.1875 x each: 0.375 x + 4 (0.09375 x) = 0.75 x. The
 * total is 1.5 x (the flows run it in 16.106127 ms at 100 GB/s, 1.5 x),
 * where one stage of RS + AG through which a chunk passes whole took
 * 0.46875 x + 3 (0.375 x) = 1.59375 x. */
static void test_inner_dimension_is_one_stage(void **state)
{
    (void)state;
    comet_system s;
    memset(&s, 0, sizeof s);
    set_dim(&s, 0, 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 1.0, 0.0);
    set_dim(&s, 1, 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 100e9, 1.0, 0.0);
    s.collective_chunks = 4;
    int64_t both[COMET_MAX_DIMS] = {4, 4, 1, 1, 1, 1, 1, 1};
    int64_t inner[COMET_MAX_DIMS] = {4, 1, 1, 1, 1, 1, 1, 1};
    double x = GIB / 100e9;
    double two = comet_collective_time(&s, both, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(two, 1.5 * x, EXACT);
    assert_true(two >= comet_collective_time(&s, inner, COMET_COLL_ALL_REDUCE, GIB));
}

/* ---- point to point ------------------------------------------------------------ */

static void test_p2p(void **state)
{
    (void)state;
    comet_system s;
    two_dim_system(&s, 4);
    set_dim(&s, 2, 2, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 0.5, 2e-6);
    /* outermost spanned dim is dim2: 2e-6 + 1e8 / (50e9 * 0.5) = 0.004002 */
    int64_t span[COMET_MAX_DIMS] = {8, 4, 2, 1, 1, 1, 1, 1};
    assert_close(comet_p2p_time(&s, span, 1e8), 0.004002, EXACT);
    /* only dim0 spanned: 1e-6 + 1e8/300e9 */
    int64_t span0[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    assert_close(comet_p2p_time(&s, span0, 1e8), 1e-6 + 1e8 / 300e9, EXACT);
    /* chunks do not apply to p2p; nothing spanned or nothing sent: 0 */
    int64_t ones[COMET_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_true(comet_p2p_time(&s, ones, 1e8) == 0.0);
    assert_true(comet_p2p_time(&s, span, 0.0) == 0.0);
    s.dims[2].bandwidth = 0.0;
    assert_true(isinf(comet_p2p_time(&s, span, 1e8)));
}

/* The one hierarchical plan both engines run: all-reduce over links of 8,
 * 4 and 2 NPUs is RS(S) on 8, RS(S/8) on 4, AR(S/32) on 2, then AG(S/8)
 * on 4 and AG(S) on 8; a scheduler's order (here 2, 0, 1) reorders the
 * links and the sizes shrink in that order; all-to-all keeps S on each. */
static void test_collective_plan(void **state)
{
    (void)state;
    comet_link links[3] = {mk(8, COMET_TOPO_SWITCH, COMET_ALGO_RING),
                           mk(4, COMET_TOPO_SWITCH, COMET_ALGO_RING),
                           mk(2, COMET_TOPO_SWITCH, COMET_ALGO_RING)};
    comet_coll_phase ph[COMET_MAX_COLL_PHASES];
    int inner_first[3] = {0, 1, 2}, themis[3] = {2, 0, 1};
    assert_int_equal(comet_collective_plan(COMET_COLL_ALL_REDUCE, links, inner_first, 3, 64.0, ph),
                     5);
    const struct { int link; comet_collective c; double bytes; } want[5] = {
        {0, COMET_COLL_REDUCE_SCATTER, 64.0}, {1, COMET_COLL_REDUCE_SCATTER, 8.0},
        {2, COMET_COLL_ALL_REDUCE, 2.0},      {1, COMET_COLL_ALL_GATHER, 8.0},
        {0, COMET_COLL_ALL_GATHER, 64.0}};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(ph[i].link, want[i].link);
        assert_int_equal(ph[i].collective, want[i].c);
        assert_true(ph[i].bytes == want[i].bytes);
    }
    assert_int_equal(comet_collective_plan(COMET_COLL_REDUCE_SCATTER, links, themis, 3, 64.0, ph),
                     3);
    assert_true(ph[0].link == 2 && ph[0].bytes == 64.0 && ph[1].link == 0 && ph[1].bytes == 32.0 &&
                ph[2].link == 1 && ph[2].bytes == 4.0);
    assert_int_equal(comet_collective_plan(COMET_COLL_ALL_TO_ALL, links, inner_first, 3, 64.0, ph),
                     3);
    assert_true(ph[0].bytes == 64.0 && ph[1].bytes == 64.0 && ph[2].bytes == 64.0);
    assert_int_equal(comet_collective_plan(COMET_COLL_NONE, links, inner_first, 3, 64.0, ph), 0);
    /* the closed form is the plan's phases, a dimension's phases summed
     * into one pipeline stage: one chunk, so the plain sum */
    comet_system sys;
    memset(&sys, 0, sizeof sys);
    for (int d = 0; d < 3; d++)
        set_dim(&sys, d, links[d].n, COMET_TOPO_SWITCH, COMET_ALGO_RING, BW, 1.0, ALPHA);
    int64_t span[COMET_MAX_DIMS] = {8, 4, 2, 1, 1, 1, 1, 1};
    double sum = 0.0;
    comet_collective_plan(COMET_COLL_ALL_REDUCE, links, inner_first, 3, GIB, ph);
    for (int i = 0; i < 5; i++)
        sum += comet_collective_time_1d(ph[i].collective, &links[ph[i].link], ph[i].bytes);
    assert_close(comet_collective_time(&sys, span, COMET_COLL_ALL_REDUCE, GIB), sum, EXACT);
}

/* A transfer between two NPUs uses the first dimension along which their
 * coordinates differ (NPUs numbered innermost dimension first), priced
 * with the dimension's efficiency; a 0-byte message pays the latency. */
static void test_p2p_between(void **state)
{
    (void)state;
    comet_system s;
    memset(&s, 0, sizeof s);
    set_dim(&s, 0, 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 300e9, 0.5, 1e-6);
    set_dim(&s, 1, 4, COMET_TOPO_SWITCH, COMET_ALGO_RING, 50e9, 1.0, 2e-6);
    set_dim(&s, 2, 0, COMET_TOPO_SWITCH, COMET_ALGO_RING, 25e9, 1.0, 5e-6);
    assert_int_equal(comet_p2p_dim_between(&s, 0, 7), 0);
    assert_int_equal(comet_p2p_dim_between(&s, 3, 11), 1);
    assert_int_equal(comet_p2p_dim_between(&s, 5, 37), 2);
    assert_int_equal(comet_p2p_dim_between(&s, 2, 34), 2);
    assert_close(comet_p2p_time_on(&s, 0, 1.5e8), 1e-6 + 1.5e8 / 150e9, EXACT);
    assert_true(comet_p2p_time_on(&s, 1, 0.0) == 2e-6);
    assert_true(comet_p2p_time_on(&s, 3, 1e8) == 0.0);
    int64_t span[COMET_MAX_DIMS] = {8, 4, 1, 1, 1, 1, 1, 1};
    assert_int_equal(comet_p2p_dim(&s, span), 1);
    span[1] = 1;
    assert_int_equal(comet_p2p_dim(&s, span), 0);
    span[0] = 1;
    assert_int_equal(comet_p2p_dim(&s, span), -1);
    /* the same transfer in its parts: latency, and bytes at the bandwidth */
    double lat, xfer;
    comet_p2p_parts_on(&s, 0, 1.5e8, &lat, &xfer);
    assert_true(lat == 1e-6);
    assert_close(xfer, 1.5e8 / 150e9, EXACT);
    comet_p2p_parts_on(&s, 3, 1e8, &lat, &xfer);
    assert_true(lat == 0.0 && xfer == 0.0);
    s.dims[1].bandwidth = 0.0;
    comet_p2p_parts_on(&s, 1, 1e8, &lat, &xfer);
    assert_true(lat == 2e-6 && isinf(xfer));
    assert_true(isinf(comet_p2p_time_on(&s, 1, 1e8)));
}

/* The links a group spans: one per spanned dimension, innermost first,
 * each with its dimension's index, size and efficiency-applied bandwidth. */
static void test_span_links(void **state)
{
    (void)state;
    comet_system s;
    memset(&s, 0, sizeof s);
    set_dim(&s, 0, 8, COMET_TOPO_SWITCH, COMET_ALGO_RING, 300e9, 0.5, 1e-6);
    set_dim(&s, 1, 4, COMET_TOPO_RING, COMET_ALGO_HALVING_DOUBLING, 50e9, 1.0, 2e-6);
    set_dim(&s, 2, 0, COMET_TOPO_SWITCH, COMET_ALGO_DIRECT, 25e9, 0.0, 5e-6);
    comet_link links[COMET_MAX_DIMS];
    int dims[COMET_MAX_DIMS];
    int64_t span[COMET_MAX_DIMS] = {2, 1, 16, 1, 1, 1, 1, 1};
    assert_int_equal(comet_span_links(&s, span, links, dims), 2);
    assert_int_equal(dims[0], 0);
    assert_int_equal(dims[1], 2);
    assert_int_equal(links[0].n, 2);
    assert_close(links[0].bandwidth, 150e9, EXACT);
    assert_int_equal(links[1].n, 16);
    assert_int_equal(links[1].algorithm, COMET_ALGO_DIRECT);
    assert_close(links[1].bandwidth, 25e9, EXACT); /* efficiency 0 means 1 */
    assert_true(links[1].latency == 5e-6);
    int64_t ones[COMET_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(comet_span_links(&s, ones, links, dims), 0);
}

/* ---- ASTRA-sim 2.0 reference ------------------------------------------------------ */

/* DESIGN.md: ASTRA-sim 2.0 analytical backend, ring all-reduce of 1 GiB on
 * Ring(8), 50 GB/s, 500 ns, endpoint delay 10 ns, local memory 1600 GB/s,
 * 4 splits, one active chunk: 36,790,164 ns. ASTRA-sim's network GB/s is
 * 2^30 B/s, so B = 50 * 2^30 and x = 1/50 s.
 *
 * comet, k = 4 chunks in one phase: 4 * 2*7 * (500e-9 + 2^28/(8 * 50 * 2^30))
 * = 56 * (500 ns + 625,000 ns) = 35,028,000 ns, less the 3 * 7 all-gather
 * latencies of 500 ns that run beside the next chunk's reduce-scatter:
 * 35,017,500 ns, 4.82 % below ASTRA-sim.
 *
 * The gap is, beside those 10,500 ns (ASTRA-sim's one active chunk runs a
 * chunk's all-reduce whole before the next), two per-step costs of
 * ASTRA-sim's system layer that this model leaves out (docs/collectives.md): each of the 7 reduce steps of a
 * chunk reads and writes the 32 MiB message three times in local memory at
 * 1600e9 B/s (its local-mem-bw is decimal GB/s), truncated to whole ns:
 * 3 * floor(2^25 / 1600) ns = 3 * 20,971 ns; and each of the 15 message
 * injections of a chunk pays the 10 ns endpoint delay. Per chunk:
 * 7 * 62,913 + 15 * 10 = 440,541 ns; times 4 chunks = 1,762,164 ns;
 * 35,017,500 + 10,500 + 1,762,164 = 36,790,164 ns exactly.
 *
 * Tolerance: 5 %, one-sided. comet charges no local-memory time for the
 * reduction arithmetic, so it must land below ASTRA-sim by that 4.82 %; 5 %
 * is the smallest round bound that holds it. The 5 % check alone would let
 * the formula drift by 0.2 %, so the test also adds the two missing terms
 * back and demands agreement to 1e-12: that pins the network part exactly. */
static void test_astra_sim_reference(void **state)
{
    (void)state;
    const double astra = 36790164e-9;
    comet_system s;
    memset(&s, 0, sizeof s);
    set_dim(&s, 0, 8, COMET_TOPO_RING, COMET_ALGO_RING, 50.0 * 1073741824.0, 1.0, 500e-9);
    s.collective_chunks = 4;
    int64_t span[COMET_MAX_DIMS] = {8, 1, 1, 1, 1, 1, 1, 1};
    double ours = comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB);
    assert_close(ours, 35028000e-9 - 10500e-9, EXACT);
    assert_close(ours, astra, 0.05);
    assert_true(ours < astra);
    /* add back the two terms the model leaves out, and the latencies of
     * a chunk's all-gather that the estimate runs beside the next chunk's
     * reduce-scatter ((k - 1)(n - 1) a = 3 * 7 * 500 ns, as the flows do)
     * where ASTRA-sim's one active chunk runs them in turn: exact
     * agreement (comet_sim_collective with its ASTRA-sim conventions
     * matches ASTRA-sim itself: test_simulate.c) */
    double mem_per_chunk = 7.0 * 3.0 * 20971e-9;
    double endpoint_per_chunk = 15.0 * 10e-9;
    assert_close(ours + 4.0 * (mem_per_chunk + endpoint_per_chunk) + 10500e-9, astra, 1e-12);
    /* one chunk (k = 1): 14 * (500 ns + 2.5 ms) = 35,007,000 ns */
    s.collective_chunks = 1;
    assert_close(comet_collective_time(&s, span, COMET_COLL_ALL_REDUCE, GIB), 35007000e-9,
                 EXACT);
}

void suite_network(test_tally *t)
{
    const struct CMUnitTest network_tests[] = {
        cmocka_unit_test(test_ring_switch),
        cmocka_unit_test(test_ring_other_topologies),
        cmocka_unit_test(test_direct),
        cmocka_unit_test(test_halving_doubling),
        cmocka_unit_test(test_halving_doubling_non_power_of_two),
        cmocka_unit_test(test_double_binary_tree),
        cmocka_unit_test(test_in_network_reduction),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_sane_everywhere),
        cmocka_unit_test(test_registry_covers_every_enum),
        cmocka_unit_test(test_topology_patterns),
        cmocka_unit_test(test_every_combination_matches_closed_form),
        cmocka_unit_test(test_huge_groups_in_closed_form),
        cmocka_unit_test(test_hierarchical_all_reduce),
        cmocka_unit_test(test_hierarchical_three_dims),
        cmocka_unit_test(test_spans_skipped),
        cmocka_unit_test(test_chunk_pipelining),
        cmocka_unit_test(test_inner_dimension_is_one_stage),
        cmocka_unit_test(test_p2p),
        cmocka_unit_test(test_collective_plan),
        cmocka_unit_test(test_p2p_between),
        cmocka_unit_test(test_span_links),
        cmocka_unit_test(test_astra_sim_reference),
    };
    RUN_GROUP(t, network_tests);
}
