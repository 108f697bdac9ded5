/* Traffic patterns whose cost is the same on several topologies, so each
 * topology file (topo_*.c) can name them instead of repeating them, and
 * the schedules both the closed forms and the flows follow: halving-
 * doubling folded to a power of two (net_hd_*), which the flows run and
 * every topology prices, and the routing of messages on a direct network
 * (net_direct_*). Derivations: docs/collectives.md. */
#include "families.h"

/* n-1 steps, each moving S/n per NPU at the full bandwidth: the ring
 * schedule's pass on every topology here (on a ring as two counter-rotating
 * rings with half the data each, on a fully-connected dimension as
 * concurrent rings over edge-disjoint Hamiltonian cycles, NCCL's channels),
 * and the pairwise exchange where every peer is one hop away. */
net_cost net_full_bandwidth_steps(const comet_link *l)
{
    double n = (double)l->n;
    return net_linear(n - 1.0, (n - 1.0) / n);
}

/* Pairwise rounds through one port: n-1 shifts of S/n, shift d beside
 * shift n-d (both ways at once, two rounds in flight, as the flows run
 * them), so ceil((n-1)/2) rounds' latencies. */
net_cost net_pairwise_rounds(const comet_link *l)
{
    double n = (double)l->n;
    return net_linear((double)(l->n / 2), (n - 1.0) / n);
}

/* S/n to every peer at once, every peer one hop away: the switch port
 * carries (n-1)S/n in one step; on a fully-connected dimension each of the
 * n-1 links carries S/n at B/(n-1). The same time either way. */
net_cost net_one_hop_scatter(const comet_link *l)
{
    double n = (double)l->n;
    return net_linear(1.0, (n - 1.0) / n);
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
    *out = net_linear(2.0 * pass.hops, 2.0 * pass.load);
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

/* Adds w (a message's bytes, in the caller's unit) to h links of one
 * line of an axis from coordinate lo on, wrapping past k, in diff (a
 * difference array: the line's link at coordinate c is
 * diff[first + c step]). */
static void route_arc(double *diff, int64_t first, int64_t step, int64_t k, int64_t lo,
                      int64_t h, double w)
{
    diff[first + lo * step] += w;
    if (lo + h < k) {
        diff[first + (lo + h) * step] -= w;
    } else if (lo + h > k) {
        diff[first] += w;
        diff[first + (lo + h - k) * step] -= w;
    }
}

/* S at a link of axis i's bandwidth, in x: B over it (2m, m where the
 * axis has one link; m_whole the dimension's axes). */
static double link_per(const net_direct *g, int i, double m_whole)
{
    return m_whole * (g->uni || (g->wrap[i] && g->axes[i] == 2) ? 1.0 : 2.0);
}

/* One message of w from position a to b along the fabric's routes
 * (ring_route, grid_route): dimension order, each axis the shorter way on
 * a ring (a tie forward from an even coordinate, back from an odd one;
 * forward only one way round or on an axis of 2), straight on a line.
 * Link (pos m + axis) 2 + dir, as grid_link; returns the hops. With
 * `most`, diff is each link's load instead, and *most becomes the
 * busiest link's on the way, in x. */
static int64_t direct_route(const net_direct *g, double *diff, int64_t a, int64_t b, double w,
                            double *most, double m_whole)
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
        if (most) { /* diff holds each link's load: the busiest on the way, in x */
            for (int64_t c = 0; c < h; c++) {
                double v = diff[first + ((lo + c) % k) * stride * g->m * 2] * link_per(g, i, m_whole);
                *most = v > *most ? v : *most;
            }
        } else {
            route_arc(diff, first, stride * g->m * 2, k, lo, h, w);
        }
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

/* The busiest directed link's load in diff (a difference array per line,
 * direct_route's), one unit there being a message of S, in x. */
static double busiest_link(const net_direct *g, const net_direct *whole, const double *diff,
                           int64_t size)
{
    double most = 0.0;
    int64_t stride = 1;
    for (int i = 0; i < g->m; stride *= g->axes[i], i++) {
        int64_t k = g->axes[i];
        double per = link_per(g, i, (double)whole->m);
        for (int64_t pos = 0; pos < size; pos++) {
            if ((pos / stride) % k)
                continue;
            for (int dir = 0; dir < 2; dir++) {
                double run = 0.0;
                for (int64_t c = 0; c < k; c++) {
                    run += diff[((pos + c * stride) * g->m + i) * 2 + dir];
                    most = run * per > most ? run * per : most;
                }
            }
        }
    }
    return most;
}

/* The positions of the block (tree_block) a group is counted on: false
 * past NET_TREE_LINKS links or where the group does not fit. */
static bool block_size(const comet_link *l, const net_direct *g, int64_t *size)
{
    *size = 1;
    for (int i = 0; i < g->m; i++)
        *size *= g->axes[i];
    return g->m >= 1 && *size * g->m * 2 <= NET_TREE_LINKS && l->n >= 2 && l->n <= *size;
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
    int64_t size;
    if (!block_size(l, g, &size))
        return false;
    double diff[NET_TREE_LINKS]; /* only the dimension's links cleared */
    for (int64_t i = 0; i < size * g->m * 2; i++)
        diff[i] = 0.0;
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
                    path[q] += (int32_t)(direct_route(g, diff, pa, pb, 0.5, NULL, 0.0) +
                                         direct_route(g, diff, pb, pa, 0.5, NULL, 0.0));
                    far = path[q] > far ? path[q] : far;
                }
    *out = net_linear((double)far, busiest_link(g, whole, diff, size));
    return true;
}

/* ---- halving-doubling folded to a power of two ---------------------------- */

/* Blocks (of S/n) in the set of the p folded ranks q = base + t stride
 * (t >= 0): one each, two for those below r (a survivor holds its folded
 * partner's block too). */
static double hd_weight(const net_hd *h, int64_t base, int64_t stride)
{
    int64_t w = h->p / stride;
    if (h->r > base)
        w += (h->r - base + stride - 1) / stride;
    return (double)w;
}

net_hd net_hd_of(int64_t n, net_hd_part part)
{
    net_hd h = {n, 1, 0, 0, 0, part};
    while (h.p * 2 <= n) {
        h.p *= 2;
        h.L++;
    }
    h.r = n - h.p;
    h.steps = h.L + (h.r > 0 && part != NET_HD_AR_AG) + (h.r > 0 && part != NET_HD_AR_RS);
    return h;
}

/* Whether step st is the fold (0) or the unfold (the last), and the
 * halving step it is otherwise. */
static bool hd_fold(const net_hd *h, int st)
{
    return st == 0 && h->r > 0 && h->part != NET_HD_AR_AG;
}

static bool hd_unfold(const net_hd *h, int st)
{
    return st == h->steps - 1 && h->r > 0 && h->part != NET_HD_AR_RS;
}

static bool hd_gather(const net_hd *h)
{
    return h->part == NET_HD_AG || h->part == NET_HD_AR_AG;
}

/* Member i's rank among the p (-1: folded out), and the member of rank q. */
static int64_t hd_rank(const net_hd *h, int64_t i)
{
    return i >= 2 * h->r ? i - h->r : i % 2 ? i / 2 : -1;
}

static int64_t hd_member(const net_hd *h, int64_t q)
{
    return q < h->r ? 2 * q + 1 : q + h->r;
}

double net_hd_send(const net_hd *h, int st, int64_t i, int64_t *to)
{
    bool gather = hd_gather(h);
    /* the fold: a reduce-scatter's or all-reduce's whole buffer, an
     * all-gather's own block; the unfold: the folded member's block of a
     * reduce-scatter, the whole buffer of the others */
    if (hd_fold(h, st) || hd_unfold(h, st)) {
        bool fold = hd_fold(h, st);
        if (i >= 2 * h->r || (i % 2 == 0) != fold)
            return 0.0;
        *to = fold ? i + 1 : i - 1;
        return gather == fold ? 1.0 / (double)h->n : 1.0;
    }
    int64_t q = hd_rank(h, i);
    if (q < 0)
        return 0.0;
    int j = st - (h->r > 0 && h->part != NET_HD_AR_AG);
    int d = gather ? h->L - 1 - j : j;
    int64_t pq = q ^ ((int64_t)1 << d), stride = (int64_t)1 << (d + 1);
    *to = hd_member(h, pq);
    if (h->part == NET_HD_AR_RS || h->part == NET_HD_AR_AG)
        return 1.0 / (double)stride;
    /* halving: the blocks of the partner's half of what i still holds;
     * doubling: all i holds */
    int64_t base = (gather ? q : pq) & (stride - 1);
    return hd_weight(h, base, stride) / (double)h->n;
}

bool net_hd_recv(const net_hd *h, int st, int64_t i)
{
    if (hd_fold(h, st))
        return i < 2 * h->r && i % 2;
    if (hd_unfold(h, st))
        return i < 2 * h->r && i % 2 == 0;
    return hd_rank(h, i) >= 0;
}

int64_t net_hd_from(const net_hd *h, int st, int64_t i)
{
    int64_t to;
    if (!net_hd_recv(h, st, i))
        return -1;
    if (hd_fold(h, st))
        return i - 1;
    if (hd_unfold(h, st))
        return i + 1;
    net_hd_send(h, st, i, &to); /* a halving step's pairs send both ways */
    return to;
}

int64_t net_hd_distance(const net_hd *h, int st)
{
    if (hd_fold(h, st) || hd_unfold(h, st))
        return 1;
    int j = st - (h->r > 0 && h->part != NET_HD_AR_AG);
    int64_t d = (int64_t)1 << (hd_gather(h) ? h->L - 1 - j : j);
    /* ranks below r sit two apart; a pair across r the farthest */
    return h->r == 0 ? d : h->r > d ? 2 * d : d + h->r - 1;
}

/* The most any member sends or receives in step st (in units of S): the
 * sets based at rank 0, which hold the most doubled blocks. */
static double hd_step_max(const net_hd *h, int st)
{
    int64_t to;
    if (hd_fold(h, st))
        return net_hd_send(h, st, 0, &to);
    if (hd_unfold(h, st))
        return net_hd_send(h, st, 1, &to);
    int j = st - (h->r > 0 && h->part != NET_HD_AR_AG);
    int d = hd_gather(h) ? h->L - 1 - j : j;
    int64_t stride = (int64_t)1 << (d + 1);
    if (h->part == NET_HD_AR_RS || h->part == NET_HD_AR_AG)
        return 1.0 / (double)stride;
    return hd_weight(h, 0, stride) / (double)h->n;
}

/* Every step one message per member through its port (or its link to
 * the partner): each step waits for the busiest pair, the critical path
 * through rank 0 (docs/collectives.md). */
net_cost net_hd_port(const comet_link *l, net_hd_part part,
                     net_cost (*step)(const void *ctx, const net_hd *h, int st), const void *ctx)
{
    net_hd h = net_hd_of(l->n, part);
    net_cost c = net_linear(0.0, 0.0);
    for (int st = 0; st < h.steps; st++) {
        net_cost s = step ? step(ctx, &h, st) : net_linear(1.0, 1.0);
        c.hops += s.hops;
        c.load += s.load * hd_step_max(&h, st);
    }
    return c;
}

/* Past a direct network's NET_HD_LINKS: the power-of-two pattern
 * `pow2` (its ceil(log2 n) steps) and the fold and unfold as a send to
 * the neighbour, `neighbour` x for S (the topology's shift_load). */
net_cost net_hd_rough(const comet_link *l, net_hd_part part, net_cost pow2, double neighbour)
{
    net_hd h = net_hd_of(l->n, part);
    for (int st = 0; st < h.steps; st++)
        if (hd_fold(&h, st) || hd_unfold(&h, st)) {
            pow2.hops += (double)(l->spacing > 1 ? l->spacing : 1);
            pow2.load += neighbour * hd_step_max(&h, st);
        }
    return pow2;
}

void net_hd_pair(double *t, double *hop, int64_t a, int64_t b, double d, double hops)
{
    bool later = t[a] > t[b] || (t[a] == t[b] && hop[a] >= hop[b]);
    double start = later ? t[a] : t[b], h0 = later ? hop[a] : hop[b];
    t[a] = t[b] = start + d;
    hop[a] = hop[b] = h0 + hops;
}

net_cost net_hd_slowest(const double *t, const double *hop, int64_t count)
{
    net_cost c = net_linear(0.0, 0.0);
    for (int64_t i = 0; i < count; i++)
        if (t[i] > c.load || (t[i] == c.load && hop[i] > c.hops))
            c = net_linear(hop[i], t[i]);
    return c;
}

/* Each link's load (the sum of its line's differences up to it), in
 * place. */
static void link_loads(const net_direct *g, double *diff, int64_t size)
{
    int64_t stride = 1;
    for (int i = 0; i < g->m; stride *= g->axes[i], i++)
        for (int64_t pos = 0; pos < size; pos++) {
            if ((pos / stride) % g->axes[i])
                continue;
            for (int dir = 0; dir < 2; dir++) {
                double run = 0.0;
                for (int64_t c = 0; c < g->axes[i]; c++) {
                    double *v = &diff[((pos + c * stride) * g->m + i) * 2 + dir];
                    run += *v;
                    *v = run;
                }
            }
        }
}

/* Step st's messages of every group of the block (the groups side by
 * side, and interleaved `spacing` apart), each on the fabric's route,
 * added to diff. */
static void hd_route_step(const comet_link *l, const net_hd *h, int st, const net_direct *g,
                          int64_t size, double mw, double *diff)
{
    int64_t n = l->n, s = l->spacing > 1 ? l->spacing : 1;
    int64_t blocks = size / (n * s) > 1 ? size / (n * s) : 1;
    for (int64_t blk = 0; blk < blocks; blk++)
        for (int64_t o = 0; o < s; o++)
            for (int64_t i = 0; i < n; i++) {
                int64_t to;
                double w = net_hd_send(h, st, i, &to);
                int64_t pa = blk * n * s + o + i * s, pb = blk * n * s + o + to * s;
                if (w > 0.0 && pa < size && pb < size)
                    direct_route(g, diff, pa, pb, w, NULL, mw);
            }
}

/* The same on a ring, torus or mesh, every group of the dimension at
 * once, each message on the fabric's route. The members go through the
 * steps as the flows' do: a pair's messages start once both ends are
 * there and take the busiest link on their way (its load the step's
 * messages that cross it), so the members left out of the fold run
 * their first steps meanwhile; the slowest member's time (and its
 * hops). */
bool net_hd_direct(const comet_link *l, const net_direct *whole, net_hd_part part, net_cost *out)
{
    net_direct block;
    const net_direct *g = tree_block(l, whole, &block);
    int64_t size;
    if (!block_size(l, g, &size) || size * g->m * 2 > NET_HD_LINKS)
        return false;
    double diff[NET_HD_LINKS];
    double t[NET_HD_LINKS / 2], hop[NET_HD_LINKS / 2]; /* per position (size <= links / 2) */
    net_hd h = net_hd_of(l->n, part);
    int64_t n = l->n, s = l->spacing > 1 ? l->spacing : 1;
    int64_t blocks = size / (n * s) > 1 ? size / (n * s) : 1;
    double mw = (double)whole->m;
    for (int64_t i = 0; i < size; i++)
        t[i] = hop[i] = 0.0;
    for (int st = 0; st < h.steps; st++) {
        for (int64_t i = 0; i < size * g->m * 2; i++)
            diff[i] = 0.0;
        hd_route_step(l, &h, st, g, size, mw, diff);
        link_loads(g, diff, size);
        for (int64_t blk = 0; blk < blocks; blk++)
            for (int64_t o = 0; o < s; o++)
                for (int64_t i = 0; i < n; i++) {
                    int64_t to, j = -1;
                    bool sends = net_hd_send(&h, st, i, &to) > 0.0;
                    j = sends ? to : net_hd_from(&h, st, i);
                    if (j <= i) /* each pair once, from its lower end */
                        continue;
                    int64_t pa = blk * n * s + o + i * s, pb = blk * n * s + o + j * s;
                    if (pa >= size || pb >= size)
                        continue;
                    double d = 0.0, hops = 0.0;
                    if (sends)
                        hops = (double)direct_route(g, diff, pa, pb, 0.0, &d, mw);
                    if (net_hd_recv(&h, st, i)) {
                        double hb = (double)direct_route(g, diff, pb, pa, 0.0, &d, mw);
                        hops = hb > hops ? hb : hops;
                    }
                    net_hd_pair(t, hop, pa, pb, d, hops);
                }
    }
    *out = net_hd_slowest(t, hop, size);
    return true;
}

/* Every step of the pass routed into one set of link loads: the busiest
 * link's sum over the steps (net_hd_direct takes each step's alone). */
bool net_hd_link_total(const comet_link *l, const net_direct *whole, double *out)
{
    net_direct block;
    const net_direct *g = tree_block(l, whole, &block);
    int64_t size;
    net_hd h = net_hd_of(l->n, NET_HD_AR_RS);
    if (h.r > 0 || !block_size(l, g, &size) || size * g->m * 2 > NET_HD_LINKS)
        return false;
    double diff[NET_HD_LINKS];
    double mw = (double)whole->m;
    for (int64_t i = 0; i < size * g->m * 2; i++)
        diff[i] = 0.0;
    for (int st = 0; st < h.steps; st++)
        hd_route_step(l, &h, st, g, size, mw, diff);
    link_loads(g, diff, size);
    double most = 0.0;
    for (int64_t i = 0; i < size * g->m * 2; i++) {
        double v = diff[i] * link_per(g, (int)((i / 2) % g->m), mw);
        most = v > most ? v : most;
    }
    *out = most;
    return true;
}
