/* Traffic patterns whose cost is the same on several topologies, so each
 * topology file (topo_*.c) can name them instead of repeating them. Both
 * reach the NPU's full injection bandwidth B. Derivations:
 * docs/collectives.md, "What B means on each topology". */
#include "families.h"

/* n-1 steps, each moving S/n per NPU at the full bandwidth: the ring
 * schedule's pass on every topology here (on a ring as two counter-rotating
 * rings with half the data each, on a fully-connected dimension as
 * concurrent rings over edge-disjoint Hamiltonian cycles, NCCL's channels),
 * and the pairwise exchange where every peer is one hop away. */
net_cost net_full_bandwidth_steps(const comet_link *l)
{
    double n = (double)l->n;
    return (net_cost){n - 1.0, (n - 1.0) / n};
}

/* S/n to every peer at once, every peer one hop away: the switch port
 * carries (n-1)S/n in one step; on a fully-connected dimension each of the
 * n-1 links carries S/n at B/(n-1). The same time either way. */
net_cost net_one_hop_scatter(const comet_link *l)
{
    double n = (double)l->n;
    return (net_cost){1.0, (n - 1.0) / n};
}

/* A broadcast pipelined down chains of n pieces from the root (a reduce
 * toward it), each at the full bandwidth: two counter-rotating chains of
 * S/2 at B/2 a way on a ring, one of S at B through a switch port. The
 * head sends piece q+1 once piece q has arrived, and the last piece then
 * travels the n-1 hops: 2(n-1) steps of a + S/(nB), the ring all-reduce's
 * time; pieces of the next chunk follow on behind once the head has sent
 * its n: n of the 2(n-1) steps. */
bool net_pipelined_chain(const comet_link *l, net_cost *out, double *head)
{
    net_cost pass = net_full_bandwidth_steps(l);
    *out = (net_cost){2.0 * pass.hops, 2.0 * pass.load};
    *head = (double)l->n / (2.0 * pass.hops);
    return true;
}

/* On a ring every message goes min(d, k-d) hops one way, so every link
 * that way carries that many (half each way on a tie, d = k/2); on a line
 * the messages of the first k-d members go d forward and the last d's
 * k-d back, the busiest link carrying min(d, k-d) either way. */
double net_shift_flows(int64_t delta, int64_t k, bool wrap, double *hops)
{
    int64_t d = k > 0 ? ((delta % k) + k) % k : 0, back = k - d;
    if (d == 0) {
        *hops = 0.0;
        return 0.0;
    }
    double near = (double)(d < back ? d : back);
    if (!wrap) {
        *hops = (double)(d > back ? d : back);
        return near;
    }
    *hops = near;
    return d == back ? 0.5 * (double)d : near;
}

/* An inner node of one heap with two children moves S/2 up and S down,
 * and as a leaf of the other S/2 more: 2S, once n >= 5 has one that is
 * not a root (node 1 of the first heap is a leaf of the reversed one);
 * on 3 or 4 the busiest moves 1.5S, on 2 S (its one edge in both). */
double net_double_tree_port_load(int64_t n)
{
    return n <= 2 ? 1.0 : n <= 4 ? 1.5 : 2.0;
}

/* The link before a group's first member carries every interleaved
 * group's pieces that go that way, floor((k-1)/2) each, and the tie's
 * (k even) of the groups whose roots sit on even places, ceil(s/2). */
double net_interleaved_scatter_pieces(int64_t k, int64_t s)
{
    return (double)s * (double)((k - 1) / 2) + (k % 2 ? 0.0 : (double)((s + 1) / 2));
}

/* Adds one edge's S/2 to h links of one line of an axis from coordinate
 * lo on, wrapping past k, in diff (a difference array of S/2 counts: the
 * line's link at coordinate c is diff[first + c step]). */
static void tree_arc(int32_t *diff, int64_t first, int64_t step, int64_t k, int64_t lo,
                     int64_t h)
{
    diff[first + lo * step]++;
    if (lo + h < k) {
        diff[first + (lo + h) * step]--;
    } else if (lo + h > k) {
        diff[first]++;
        diff[first + (lo + h - k) * step]--;
    }
}

/* One tree edge's S/2 from position a to b along the fabric's routes
 * (ring_route, grid_route): dimension order, each axis the shorter way on
 * a ring (a tie forward from an even coordinate, back from an odd one;
 * forward only one way round or on an axis of 2), straight on a line.
 * Link (pos m + axis) 2 + dir, as grid_link; returns the hops. */
static int64_t tree_route(const net_direct *g, int32_t *diff, int64_t a, int64_t b)
{
    int64_t pos = a, hops = 0, stride = 1;
    for (int i = 0; i < g->m; stride *= g->axes[i], i++) {
        int64_t k = g->axes[i], ca = (pos / stride) % k, cb = (b / stride) % k, h;
        if (ca == cb)
            continue;
        int dir;
        if (g->wrap[i]) {
            int64_t fwd = ((cb - ca) % k + k) % k;
            dir = !g->uni && k > 2 && (k - fwd < fwd || (k - fwd == fwd && (ca & 1))) ? 1 : 0;
            h = dir ? k - fwd : fwd;
        } else {
            dir = cb > ca ? 0 : 1;
            h = dir ? ca - cb : cb - ca;
        }
        /* the line's link at coordinate 0, in the axis's stride of links */
        int64_t first = ((pos - ca * stride) * g->m + i) * 2 + dir;
        int64_t lo = dir ? ((ca - h + 1) % k + k) % k : ca;
        tree_arc(diff, first, stride * g->m * 2, k, lo, h);
        pos += (cb - ca) * stride;
        hops += h;
    }
    return hops;
}

/* The block of positions a group and the groups interleaved with it
 * fill, where it is part of the dimension and tiles it: whole inner axes
 * (as they are) and part of the next (a line, shorter than half of it, so
 * every route stays inside), the same in every block and apart from the
 * others; two ways round only (one way round a route back goes round the
 * whole ring). *whole where it is not such a part. */
static const net_direct *tree_block(const comet_link *l, const net_direct *whole,
                                    net_direct *block)
{
    int64_t s = l->spacing > 1 ? l->spacing : 1, rest = l->n * s, size = 1;
    for (int i = 0; i < whole->m; i++)
        size *= whole->axes[i];
    if (whole->uni || rest >= size || rest < 2 || size % rest)
        return whole;
    *block = (net_direct){0, {0}, {false, false, false}, false};
    for (int i = 0; i < whole->m && rest > 1; i++) {
        int64_t k = whole->axes[i];
        if (rest % k == 0) {
            block->axes[block->m] = k;
            block->wrap[block->m++] = whole->wrap[i];
            rest /= k;
        } else if (k % rest == 0) {
            block->axes[block->m++] = rest;
            rest = 1;
        } else {
            return whole;
        }
    }
    return rest == 1 ? block : whole;
}

/* The flows' double binary tree (fabric_coll.c: a heap over the group's
 * members in rank order, one over them reversed, S/2 up and down every
 * edge) on a ring, torus or mesh: every group of the dimension at once
 * (n members `spacing` apart, the groups tiling the positions), each edge
 * routed as the fabric routes it; the load is the busiest directed
 * link's bytes at its bandwidth (B/(2m), B/m on a link that is its axis's
 * only one), the hops the longest root-to-leaf route's down plus its
 * leaf-to-root route's up (they differ one way round).
 * False past NET_TREE_LINKS links (the caller approximates). */
bool net_direct_double_tree(const comet_link *l, const net_direct *whole, net_cost *out)
{
    net_direct block;
    const net_direct *g = tree_block(l, whole, &block);
    int64_t size = 1;
    for (int i = 0; i < g->m; i++)
        size *= g->axes[i];
    if (g->m < 1 || size * g->m * 2 > NET_TREE_LINKS || l->n < 2 || l->n > size)
        return false;
    int32_t diff[NET_TREE_LINKS]; /* only the dimension's links cleared */
    for (int64_t i = 0; i < size * g->m * 2; i++)
        diff[i] = 0;
    int32_t path[NET_TREE_LINKS / 2]; /* hops root to heap node q and back (n <= size) */
    int64_t n = l->n, s = l->spacing > 1 ? l->spacing : 1, far = 0;
    int64_t blocks = size / (n * s) > 1 ? size / (n * s) : 1;
    path[0] = 0;
    for (int64_t blk = 0; blk < blocks; blk++)
        for (int64_t o = 0; o < s; o++)
            for (int t = 0; t < 2; t++)
                for (int64_t q = 1; q < n; q++) {
                    int64_t p = (q - 1) / 2, a = t ? n - 1 - q : q, b = t ? n - 1 - p : p;
                    int64_t pa = blk * n * s + o + a * s, pb = blk * n * s + o + b * s;
                    path[q] = path[p];
                    if (pa >= size || pb >= size)
                        continue;
                    path[q] += (int32_t)(tree_route(g, diff, pa, pb) + tree_route(g, diff, pb, pa));
                    far = path[q] > far ? path[q] : far;
                }
    double most = 0.0;
    int64_t stride = 1;
    for (int i = 0; i < g->m; stride *= g->axes[i], i++) {
        int64_t k = g->axes[i];
        /* S/2 at the link's bandwidth, in x: B over it (2m, m where the
         * axis has one link; m the dimension's axes), halved */
        double per = 0.5 * (double)whole->m * (g->uni || (g->wrap[i] && k == 2) ? 1.0 : 2.0);
        for (int64_t pos = 0; pos < size; pos++) {
            if ((pos / stride) % k)
                continue;
            for (int dir = 0; dir < 2; dir++) {
                int64_t run = 0;
                for (int64_t c = 0; c < k; c++) {
                    run += diff[((pos + c * stride) * g->m + i) * 2 + dir];
                    most = (double)run * per > most ? (double)run * per : most;
                }
            }
        }
    }
    *out = (net_cost){(double)far, most};
    return true;
}
