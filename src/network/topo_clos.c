/* Clos networks: a fat tree and a rail-optimized network, both 2 or 3
 * tiers of radix-port switches with an oversubscription (down:up ports)
 * per tier (comet_clos_ports_of). Every NPU has one port of B. A fat tree
 * fills its leaves with the pod's NPUs in order (a node's NICs on one
 * leaf); a rail network puts NIC k of every node on rail leaf k, so a
 * group along the dimension (same inner position) shares its leaves with
 * no other group. All the inner positions run a phase at once (a training
 * step's groups do), so a leaf carries the traffic of every group on it:
 * a pattern's load is the larger of the NPU port's and each tier's
 * uplinks' (what leaves a leaf or pod over its up ports), flows spread
 * evenly over equal paths (routing: spray). Under ECMP every connection
 * keeps the path its hash picks, so a tier's busiest uplink (or downlink)
 * in the whole pod carries more than the mean, and every step of a
 * symmetric collective waits on it: the expected busiest of the pod's
 * links, each holding a Binomial count of the connections that could
 * take it: the mean over hashings (docs/fabric.md, "ECMP"). */
#include "families.h"

#include <math.h>
#include <stdio.h>

/* How a group of n sits on the tree: c[t] of its members share one leaf
 * (t 0) or pod (t 1); act[t] NPUs on it run the pattern at once (every
 * group does: all its ports); a ring leaves it on g[t] edges; up[t]
 * uplinks leave it. */
typedef struct clos_view {
    int tiers;
    double n, c[2], g[2], act[2], up[2];
    bool ecmp;
    double channels;     /* connections per flow, each 1/channels of it (ECMP hashes them apart) */
    double links[2];     /* a tier's hashed links in the pod: every leaf's (block's) up and down */
} clos_view;

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

static clos_view clos_view_of(const comet_link *l, bool rail)
{
    comet_net_shape fallback = {0};
    fallback.radix = 64;
    comet_clos_ports p;
    comet_clos_ports_of(l->topology, l->shape ? l->shape : &fallback, &p);
    clos_view v = {p.tiers, (double)l->n, {1, 1}, {1, 1}, {1, 1}, {1, 1}, false, 1, {1, 1}};
    int64_t inner = l->inner > 1 ? l->inner : 1;
    int64_t held[2] = {p.down[0], p.down[0] * p.down[1]};
    v.up[0] = p.up_cap[0];
    v.up[1] = p.up_cap[0] * p.up_cap[1];
    const comet_net_shape *sh = l->shape ? l->shape : &fallback;
    v.ecmp = sh->routing == COMET_ROUTE_ECMP && l->topology != COMET_TOPO_FRED;
    v.channels = sh->channels > 1 ? (double)sh->channels : 1.0;
    double pod = (double)(l->size > l->n ? l->size : l->n) * (double)inner;
    for (int t = 0; t < 2; t++)
        v.links[t] = 2.0 * ceil(pod / (double)held[t]) * v.up[t];
    /* a group's members sit `gap` places apart along the dimension (the
     * strategy's inner rank digits between them), so fewer share a leaf */
    int64_t gap = l->spacing > 1 ? l->spacing : 1;
    for (int t = 0; t < 2; t++) {
        v.act[t] = (double)held[t];
        if (rail) {          /* one rail per leaf; a pod's leaves are one rail's */
            v.c[t] = dmin(v.n, (double)(held[t] > gap ? held[t] / gap : 1));
            v.g[t] = dmax(1.0, (double)held[t] / v.c[t]);
        } else if (inner * gap >= held[t]) {
            v.c[t] = 1.0;
            v.g[t] = (double)held[t];
        } else {
            /* one exit per group (a leaf that splits a node, held not a
             * multiple of inner, has a few more on its worst leaf, but the
             * rings' steps do not all wait there at once: the flows find
             * the mean, docs/fabric.md) */
            v.c[t] = dmin(v.n, (double)(held[t] / (inner * gap)));
            v.g[t] = (double)(inner * gap);
        }
    }
    return v;
}

/* The expected busiest of m links, each holding a Binomial(T, p) count of
 * the T connections that could take it (each picks one of 1/p equal links
 * by its hash): E[max] = sum over k >= 1 of 1 - F(k - 1)^m, F the count's
 * distribution, summed from about ten deviations below the mean (where
 * F^m is 0 to double precision) until the terms vanish. Past 64
 * deviations' width the maximum of m normal counts stands in for it
 * (its Gumbel location plus Euler's constant over its scale), within a
 * few hundredths of a connection there. With m = 1 the mean. */
#define EULER_GAMMA 0.5772156649015329
#define FOUR_PI 12.566370614359172

static double expected_busiest(double trials, double p, double m)
{
    double T = floor(trials + 0.5), mean = T * p;
    if (!(T >= 1.0) || !(p > 0.0) || p >= 1.0 || !(m > 1.0))
        return mean;
    double sd = sqrt(mean * (1.0 - p));
    if (sd > 64.0) {
        double l = 2.0 * log(m), a = sqrt(l);
        double b = a - (log(log(m)) + log(FOUR_PI)) / (2.0 * a);
        return mean + sd * (b + EULER_GAMMA / a);
    }
    double k = dmax(0.0, floor(mean - 10.0 * sd - 1.0));
    double pmf = exp(lgamma(T + 1.0) - lgamma(k + 1.0) - lgamma(T - k + 1.0) + k * log(p) +
                     (T - k) * log1p(-p));
    double cdf = 0.0, sum = k; /* terms 1..k: F(k - 1)^m is 0 there */
    for (; k < T; k += 1.0) {
        cdf += pmf;
        double term = -expm1(m * log(dmin(cdf, 1.0)));
        sum += term;
        if (term < 1e-12 && k > mean)
            break;
        pmf *= (T - k) / (k + 1.0) * p / (1.0 - p);
    }
    return sum;
}

/* The factor a tier's uplinks slow `flows` concurrent NPU-rate flows by:
 * their mean share sprayed, the expected busiest link's hashed (ECMP),
 * each flow `channels` connections of 1/channels of it. `paired`: every
 * connection leaving a leaf (pod) goes to one other, as a ring's and a
 * halving step's do, so the downlinks into it repeat the uplinks' counts
 * and only half the tier's links are independent draws. */
static double tier_factor(const clos_view *v, int t, double flows, bool paired)
{
    if (t >= v->tiers - 1)
        return 1.0;
    double mean = flows / v->up[t];
    if (!v->ecmp)
        return dmax(1.0, mean);
    double m = paired ? 0.5 * v->links[t] : v->links[t];
    double busiest = expected_busiest(flows * v->channels, 1.0 / v->up[t], m);
    return dmax(1.0, busiest / v->channels);
}

/* One hop is a: up to the leaf and down (a/2 a link); each tier a path
 * climbs past adds a. A pattern whose every member talks across a leaf
 * (pod) waits that much per step. */
static double clos_hops(const clos_view *v)
{
    double h = 1.0;
    for (int t = 0; t < 2 && t < v->tiers - 1; t++)
        if (v->c[t] < v->n)
            h += 1.0;
    return h;
}

static double busiest_block_ring_edges(const comet_link *l, int64_t held);

/* Ring schedule: each group's ring leaves a leaf (pod) once when it has
 * members elsewhere, so g flows share the up ports. Its steps wait on one
 * another around the ring, so the latency is the sum over its edges: one
 * in c crosses a leaf (pod). */
static net_cost clos_ring_pass(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double f = 1.0, hops = v.n - 1.0;
    for (int t = 0; t < 2 && t < v.tiers - 1; t++) {
        /* a fat tree's blocks that split groups counted edge by edge, even
         * where one group fits in one (it may straddle two) */
        double exact = rail ? -1.0 : busiest_block_ring_edges(l, (int64_t)v.act[t]);
        if (exact > 0.0 || (exact < 0.0 && v.c[t] < v.n))
            f = dmax(f, tier_factor(&v, t, exact >= 0.0 ? exact : v.g[t], true));
        if (v.c[t] < v.n)
            hops += (v.n - 1.0) / v.c[t];
    }
    return net_linear(hops, (v.n - 1.0) / v.n * f);
}

/* How many of a's members lie in [lo, hi], a's members first, first +
 * gap, ... (n of them); none where hi < lo. */
static int64_t members_within(int64_t first, int64_t gap, int64_t n, int64_t lo, int64_t hi)
{
    if (hi < lo)
        return 0;
    int64_t j0 = lo <= first ? 0 : (lo - first + gap - 1) / gap;
    int64_t j1 = hi < first ? -1 : (hi - first) / gap;
    j1 = j1 < n - 1 ? j1 : n - 1;
    return j1 >= j0 ? j1 - j0 + 1 : 0;
}

/* Fat trees past this many NPUs take every leaf (pod) as the first. */
#define CLOS_LEAF_SCAN (1 << 20)

/* The dimension's NPUs as a fat tree lays them: n members a group, each
 * `inner` NPUs wide, members `gap` positions apart; npus in all. */
typedef struct fat_lay {
    int64_t n, inner, gap, npus;
} fat_lay;

/* What NPU i adds to its block [first, end). */
typedef double (*npu_part_fn)(const fat_lay *f, int64_t i, int64_t first, int64_t end,
                              const void *ctx);

/* Link l's dimension as a fat tree lays it. */
static fat_lay fat_lay_of(const comet_link *l)
{
    fat_lay f = {l->n, l->inner > 1 ? l->inner : 1, l->spacing > 1 ? l->spacing : 1, 0};
    f.npus = (l->size > f.n ? l->size : f.n) * f.inner;
    return f;
}

/* The most any block of `held` NPUs (a leaf, a pod) adds up, block by
 * block, every group at once; -1 past CLOS_LEAF_SCAN NPUs. */
static double busiest_block(const comet_link *l, int64_t held, npu_part_fn part, const void *ctx)
{
    fat_lay f = fat_lay_of(l);
    if (f.npus > CLOS_LEAF_SCAN || held < 1)
        return -1.0;
    double most = 0.0;
    for (int64_t first = 0; first < f.npus; first += held) {
        int64_t end = first + held < f.npus ? first + held : f.npus;
        double sum = 0.0;
        for (int64_t i = first; i < end; i++)
            sum += part(&f, i, first, end, ctx);
        most = sum > most ? sum : most;
    }
    return most;
}

/* The connections NPU i sends off its block: one to each member of its
 * group elsewhere. */
static double off_block_members(const fat_lay *f, int64_t i, int64_t first, int64_t end,
                                const void *ctx)
{
    (void)ctx;
    int64_t in = i % f->inner, pos = i / f->inner;
    int64_t head = pos / (f->n * f->gap) * f->n * f->gap + pos % f->gap; /* its group's first */
    /* positions whose NPU at `in` lies on the block */
    int64_t lo = first <= in ? 0 : (first - in + f->inner - 1) / f->inner;
    int64_t hi = (end - 1 - in) / f->inner;
    return (double)(f->n - members_within(head, f->gap, f->n, lo, hi));
}

/* Whether blocks of `held` NPUs (leaves, pods) cut the groups unevenly:
 * neither inside one member's stride (the NPUs inside a member times the
 * spacing) nor whole strides holding whole groups or whole blocks of a
 * group. */
static bool blocks_split_groups(const comet_link *l, int64_t held)
{
    fat_lay f = fat_lay_of(l);
    int64_t stride = f.inner * f.gap, block = f.n * stride;
    return held >= 1 && stride % held != 0 &&
           !(held % stride == 0 && (block % held == 0 || held % block == 0));
}

/* The most connections (S/n each) leaving one block of `held` NPUs (a
 * leaf, or a pod) of a fat tree when every group sends each member not on
 * the block S/n: NPU i's group has c_i of its n members on i's block,
 * counted exactly, block by block, so a block that splits groups (held
 * not a multiple of the NPUs inside a member times the spacing: 64-port
 * leaves at 2:1 hold 42 NPUs, 5.25 nodes of 8) carries what its pieces of
 * several groups send. -1 past CLOS_LEAF_SCAN NPUs, and where blocks hold
 * whole members' strides and whole groups (or whole blocks of a group):
 * every NPU's c_i is then the view's c. */
static double busiest_block_conns(const comet_link *l, int64_t held)
{
    if (!blocks_split_groups(l, held))
        return -1.0;
    return busiest_block(l, held, off_block_members, NULL);
}

/* NPUs in [0, x) that are their group's last member: member j of NPU i
 * is (i / D) mod n, D the NPUs between members (inside one, times the
 * spacing), so the last members fill the last D of every n D. */
static int64_t last_members_before(int64_t x, int64_t D, int64_t n)
{
    int64_t over = x % (n * D) - (n - 1) * D;
    return x / (n * D) * D + (over > 0 ? over : 0);
}

/* The most ring connections leaving one block of `held` NPUs, every
 * group at once, where the blocks split groups unevenly (a group's ring
 * may leave and come back to a leaf that splits its members: 42-NPU
 * leaves of 8-GPU nodes); -1 where each group's ring leaves a block
 * once (the view's g), or past CLOS_LEAF_SCAN. Member j sends to j + 1,
 * D NPUs on: off the block [first, end) from its last D NPUs but for the
 * last members, which send (n - 1) D back: off it from its first
 * (n - 1) D. Counted block by block in O(1), as a pricing's
 * per-NPU walk would cost O(NPUs) every time (the oversubscription
 * study 5 x). */
static double busiest_block_ring_edges(const comet_link *l, int64_t held)
{
    if (!blocks_split_groups(l, held))
        return -1.0;
    fat_lay f = fat_lay_of(l);
    int64_t n = f.n, D = f.inner * f.gap, npus = f.npus, most = 0;
    if (npus > CLOS_LEAF_SCAN)
        return -1.0;
    for (int64_t first = 0; first < npus; first += held) {
        int64_t end = first + held < npus ? first + held : npus;
        int64_t tail = end - D > first ? end - D : first;
        int64_t back = first + (n - 1) * D < end ? first + (n - 1) * D : end;
        int64_t off = (end - tail) -
                      (last_members_before(end, D, n) - last_members_before(tail, D, n)) +
                      last_members_before(back, D, n) - last_members_before(first, D, n);
        most = off > most ? off : most;
    }
    return (double)most;
}

/* Every member sends (n - c)/n of its buffer off its leaf (pod). */
static net_cost clos_scatter(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double load = (v.n - 1.0) / v.n;
    for (int t = 0; t < 2 && t < v.tiers - 1; t++) {
        /* a fat tree's blocks counted as they hold the groups, even where
         * one group fits in one (it may straddle two) */
        double exact = rail ? -1.0 : busiest_block_conns(l, (int64_t)v.act[t]);
        if (v.c[t] < v.n || exact > 0.0) {
            /* the connections leaving a leaf (pod), S/n each: their mean per
             * uplink sprayed, hashed the busiest link's (over the whole
             * collective, the busiest link's bytes bound it) */
            double conns = exact >= 0.0 ? exact : v.act[t] * (v.n - v.c[t]);
            double per_link = conns / v.up[t];
            if (v.ecmp)
                per_link = expected_busiest(conns, 1.0 / v.up[t], v.links[t]);
            load = dmax(load, per_link / v.n);
        }
    }
    return net_linear(clos_hops(&v), load);
}

/* A scatter from each group's first member (a gather the mirror): its
 * port carries (n-1)/n of S, and (n - c)/n of S leaves its leaf (pod)
 * from every group's root there: a leaf holds the first c members of
 * act/c groups, their roots all on the first leaf. Sprayed, their mean
 * per uplink; hashed, the busiest of the leaf's uplinks. */
static net_cost clos_root_scatter(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double load = (v.n - 1.0) / v.n;
    for (int t = 0; t < 2 && t < v.tiers - 1; t++)
        if (v.c[t] < v.n) {
            double conns = v.act[t] / v.c[t] * (v.n - v.c[t]), per_link = conns / v.up[t];
            if (v.ecmp)
                per_link = expected_busiest(conns, 1.0 / v.up[t], v.up[t]);
            load = dmax(load, per_link / v.n);
        }
    return net_linear(clos_hops(&v), load);
}

/* A broadcast as a chain of n pieces along the ring's order (a reduce
 * toward the root), 2(n-1) steps, where the ring's every step runs at the
 * port's full bandwidth; where a tier's uplinks slow the ring, the chain
 * (one file through the leaves) would wait on them at every step: the
 * scatter and the all-gather instead (on FRED with its uplinks at 1/8
 * 3.5 x against the chain's 5.0 x). The chain pipelines the chunks of a
 * split buffer where the scatter's n-1 connections through the root's
 * port would starve the ring behind them. */
static bool clos_root_chain(const comet_link *l, bool rail, net_cost *out, double *head)
{
    net_cost pass = clos_ring_pass(l, rail);
    double n = (double)l->n;
    if (pass.load > (n - 1.0) / n * (1.0 + 1e-12))
        return false;
    *out = net_linear(2.0 * pass.hops, 2.0 * pass.load);
    *head = n / (2.0 * (n - 1.0)); /* n of its 2(n-1) steps */
    return true;
}

/* Pairwise exchange: the scatter's blocks one peer per round, the rounds
 * pipelined, each waiting for a path's latency (the flows add what the
 * rounds' uneven finishes cost on a large tree, docs/fabric.md). */
static net_cost clos_pairwise(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    net_cost c = clos_scatter(l, rail);
    c.hops = (double)(l->n - 1) * clos_hops(&v);
    return c;
}

/* Step s's partner is 2^s away: off the leaf (pod) once 2^s >= c, when
 * every member on it sends its S/2^(s+1) up. */
static double logstep_factor(const clos_view *v, double d)
{
    double f = 1.0;
    for (int t = 0; t < 2; t++)
        if (d >= v->c[t])
            f = dmax(f, tier_factor(v, t, v->act[t], true));
    return f;
}

/* A log step's partner: the member d on (xor: the one whose index
 * differs in d, halving's; else d on round the group, Bruck's). */
typedef struct log_step {
    int64_t d;
    bool xor;
} log_step;

/* 1 where NPU i's partner in the step lies off its block. */
static double crosses(const fat_lay *f, int64_t i, int64_t first, int64_t end, const void *ctx)
{
    const log_step *st = ctx;
    int64_t in = i % f->inner, pos = i / f->inner, j = (pos / f->gap) % f->n;
    int64_t to = st->xor ? j ^ st->d : (j + st->d) % f->n;
    if (to >= f->n)
        return 0.0;
    int64_t peer = (pos + (to - j) * f->gap) * f->inner + in;
    return peer < first || peer >= end ? 1.0 : 0.0;
}

/* A fat tree's NPUs in blocks of `held` (leaves, pods): the most of one
 * block whose partner in a log step lies off it, every group at once.
 * Where blocks split groups unevenly (42-NPU leaves of 8-GPU nodes) a
 * step crosses on some leaves before 2^s reaches the c members a leaf
 * holds on average. -1 past CLOS_LEAF_SCAN NPUs. */
static double step_crossers(const comet_link *l, int64_t held, int64_t d, bool xor)
{
    log_step st = {d, xor};
    return busiest_block(l, held, crosses, &st);
}

/* The step's slowdown over the tiers: its crossers on the busiest block
 * counted (a fat tree), else every member once 2^s reaches c. tier[t]
 * gets each tier's. */
static double step_factor(const comet_link *l, const clos_view *v, bool rail, int64_t d, bool xor,
                          double tier[2])
{
    double f = 1.0;
    for (int t = 0; t < 2; t++) {
        double flows = rail || t >= v->tiers - 1
                           ? -1.0
                           : step_crossers(l, (int64_t)v->act[t], d, xor);
        if (flows < 0.0)
            flows = (double)d >= v->c[t] ? v->act[t] : 0.0;
        tier[t] = flows > 0.0 ? tier_factor(v, t, flows, true) : 0.0;
        f = dmax(f, tier[t]);
    }
    return f;
}

static net_cost clos_halving(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    int L = net_ceil_log2(l->n);
    double load = 0.0, part = 0.5;
    double hops = 0.0;
    for (int s = 0; s < L; s++, part *= 0.5) {
        double d = (double)((int64_t)1 << s), tier[2];
        load += part * step_factor(l, &v, rail, (int64_t)1 << s, true, tier);
        hops += 1.0 + (d >= v.c[0] && v.tiers > 1) + (d >= v.c[1] && v.tiers > 2);
    }
    return net_linear(hops, load);
}

/* The pass's busiest link over its steps: the NPU's port carries every
 * step's part, (n-1)/n of S; a tier's uplinks the parts of the steps that
 * leave a leaf (pod), each slowed as the step is (they are what paces
 * it); the larger of those. A chunk's halving and the chunk before's
 * doubling then share the port and the uplinks (halving_link_total). */
static double clos_halving_link_total(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    int L = net_ceil_log2(l->n);
    double port = 0.0, up[2] = {0.0, 0.0}, part = 0.5;
    for (int s = 0; s < L; s++, part *= 0.5) {
        double tier[2];
        port += part;
        step_factor(l, &v, rail, (int64_t)1 << s, true, tier);
        for (int t = 0; t < 2; t++)
            up[t] += part * tier[t];
    }
    return dmax(port, dmax(up[0], up[1]));
}

static net_cost clos_bruck(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    int L = net_ceil_log2(l->n);
    double load = 0.0, hops = 0.0;
    for (int s = 0; s < L; s++) {
        double d = (double)((int64_t)1 << s), tier[2];
        load += 0.5 * step_factor(l, &v, rail, (int64_t)1 << s, false, tier);
        hops += 1.0 + (d >= v.c[0] && v.tiers > 1) + (d >= v.c[1] && v.tiers > 2);
    }
    return net_linear(hops, load);
}

/* Not a power of two: folded (net_hd). Past CLOS_HD_MEMBERS members,
 * each step at its farthest pair's: whether it leaves a leaf (pod), its
 * busiest pair's bytes through the ports, slowed as the power-of-two
 * steps are. */
#define CLOS_HD_MEMBERS 2048
static net_cost clos_fold_step(const void *ctx, const net_hd *h, int st)
{
    const clos_view *v = ctx;
    double d = (double)net_hd_distance(h, st);
    return net_linear(1.0 + (d >= v->c[0] && v->tiers > 1) + (d >= v->c[1] && v->tiers > 2),
                      logstep_factor(v, d));
}

/* How much a message from member i to j is slowed where it leaves a
 * leaf (pod): the connections leaving i's (entering j's) there, every
 * group on it sending alike (out and in: this step's per block). Its
 * hops into *hops. */
static double clos_fold_pair(const clos_view *v, int32_t (*out)[CLOS_HD_MEMBERS],
                             int32_t (*in)[CLOS_HD_MEMBERS], int64_t i, int64_t j,
                             double *hops)
{
    double f = 1.0;
    *hops = 1.0;
    for (int t = 0; t < 2 && t < v->tiers - 1; t++) {
        int64_t c = (int64_t)v->c[t];
        if (i / c == j / c)
            continue;
        double crowd = dmax(out[t][i / c], in[t][j / c]) * v->act[t] / v->c[t];
        f = dmax(f, tier_factor(v, t, crowd, true));
        *hops += 1.0;
    }
    return f;
}

/* The members through the steps as the flows' (a pair once both ends
 * are there, each message at its port's pace or its leaf's uplinks'),
 * so the members the fold leaves out cross the uplinks during it: the
 * slowest member's time and hops. */
static net_cost clos_folded_halving(const comet_link *l, net_hd_part part, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    if (l->n > CLOS_HD_MEMBERS)
        return net_hd_port(l, part, clos_fold_step, &v);
    net_hd h = net_hd_of(l->n, part);
    int64_t n = l->n;
    double t[CLOS_HD_MEMBERS], hop[CLOS_HD_MEMBERS];
    int32_t out[2][CLOS_HD_MEMBERS], in[2][CLOS_HD_MEMBERS];
    for (int64_t i = 0; i < n; i++)
        t[i] = hop[i] = 0.0;
    for (int st = 0; st < h.steps; st++) {
        for (int k = 0; k < 2; k++)
            for (int64_t i = 0; i < n; i++)
                out[k][i] = in[k][i] = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t to;
            if (!(net_hd_send(&h, st, i, &to) > 0.0))
                continue;
            for (int k = 0; k < 2; k++) {
                int64_t c = (int64_t)v.c[k];
                if (i / c != to / c) {
                    out[k][i / c]++;
                    in[k][to / c]++;
                }
            }
        }
        for (int64_t i = 0; i < n; i++) {
            int64_t to, j;
            double wi = net_hd_send(&h, st, i, &to), wj = 0.0;
            j = wi > 0.0 ? to : net_hd_from(&h, st, i);
            if (j <= i) /* each pair once, from its lower end */
                continue;
            if (net_hd_recv(&h, st, i))
                wj = net_hd_send(&h, st, j, &to);
            double hi, hj;
            double d = dmax(wi * clos_fold_pair(&v, out, in, i, j, &hi),
                            wj * clos_fold_pair(&v, out, in, j, i, &hj));
            net_hd_pair(t, hop, i, j, d, dmax(hi, hj));
        }
    }
    return net_hd_slowest(t, hop, n);
}

/* The most edges of the flows' two heaps (net_double_tree_port_load) with
 * one end in a block of c consecutive members of n and the other out: a
 * leaf's (pod's) share of the trees' traffic, S/2 each way an edge. -1
 * past 256 blocks or 16,384 members (the caller then takes every member's
 * traffic as leaving). */
#define TREE_BLOCKS 256
#define TREE_MAX_MEMBERS 16384 /* the edges counted at most: 2 (n-1) */
static double tree_crossings(double n, double c)
{
    int64_t N = (int64_t)n, C = c >= 1.0 ? (int64_t)c : 1;
    if (C >= N)
        return 0.0;
    int64_t blocks = (N + C - 1) / C;
    if (blocks > TREE_BLOCKS || N > TREE_MAX_MEMBERS)
        return -1.0;
    int32_t count[TREE_BLOCKS] = {0};
    int32_t most = 0;
    for (int t = 0; t < 2; t++)
        for (int64_t q = 1; q < N; q++) {
            int64_t p = (q - 1) / 2, a = t ? N - 1 - q : q, b = t ? N - 1 - p : p;
            if (a / C == b / C)
                continue;
            int32_t ca = ++count[a / C], cb = ++count[b / C];
            most = ca > most ? ca : most;
            most = cb > most ? cb : most;
        }
    return (double)most;
}

/* The edges of both trees (the heaps over the group's members, the
 * second mirrored, as the flows lay them) from NPU i's member to members
 * off i's block. */
static double tree_edges_off_block(const fat_lay *f, int64_t i, int64_t first, int64_t end,
                                   const void *ctx)
{
    (void)ctx;
    int64_t in = i % f->inner, pos = i / f->inner, j = (pos / f->gap) % f->n, off = 0;
    for (int t = 0; t < 2; t++) {
        int64_t q = t ? f->n - 1 - j : j, heap[3] = {(q - 1) / 2, 2 * q + 1, 2 * q + 2};
        for (int e = q > 0 ? 0 : 1; e < 3; e++) {
            if (heap[e] >= f->n)
                continue;
            int64_t m = t ? f->n - 1 - heap[e] : heap[e];
            int64_t peer = (pos + (m - j) * f->gap) * f->inner + in;
            off += peer < first || peer >= end;
        }
    }
    return (double)off;
}

/* The most tree edges (S/2 each way) leaving one block of `held` NPUs,
 * every group at once, where the blocks split groups unevenly (as
 * busiest_block_conns); -1 where every block holds its groups alike
 * (tree_crossings then counts one group's) or past CLOS_LEAF_SCAN. */
static double busiest_block_tree_edges(const comet_link *l, int64_t held)
{
    if (!blocks_split_groups(l, held))
        return -1.0;
    return busiest_block(l, held, tree_edges_off_block, NULL);
}

/* Double binary tree: the busiest port's load of the trees
 * (net_double_tree_port_load), or a tier's uplinks': the g groups on a
 * leaf (pod) send S/2 each way over every tree edge leaving it, g X
 * connections, each 1/(2 port load) of the port's time, spread (sprayed)
 * or hashed (ECMP: the expected busiest uplink's count) over the up
 * ports (8 nodes of 8 GPUs on two leaves of a 2:1 tree: 8 edges leave
 * each, 64 connections on 16 uplinks, no slower than the port; 16 nodes:
 * 15 edges, 1.875 x). */
static net_cost clos_double_tree(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double Ld = (double)net_ceil_log2(l->n);
    double port = net_double_tree_port_load(l->n), factor = 1.0;
    for (int t = 0; t < 2 && t < v.tiers - 1; t++) {
        /* a fat tree's blocks that split groups counted edge by edge */
        double exact = rail ? -1.0 : busiest_block_tree_edges(l, (int64_t)v.act[t]);
        double x = exact >= 0.0 ? 0.0 : tree_crossings(v.n, v.c[t]);
        /* the edges' connections of S/2 each way (g X where every block
         * holds its groups alike), a port-load's 1/(2 port) */
        double f = x < 0.0 ? logstep_factor(&v, v.n - 1.0)
                           : tier_factor(&v, t, exact >= 0.0 ? exact : v.g[t] * x, false) /
                                 (2.0 * port);
        factor = dmax(factor, f);
    }
    return net_linear(2.0 * Ld * clos_hops(&v), port * factor);
}

/* The factor the groups' aggregation trees slow a tier's uplinks by. The
 * trees are placed, not hashed: a fabric manager (SHARP's aggregation
 * manager) builds each group's tree, and the groups sharing a leaf (pod)
 * take its uplinks in turn, so the busiest carries ceil(g / up) streams
 * where spraying spreads g / up over them (docs/fabric.md, "In-network
 * reduction"). */
static double tree_factor(const clos_view *v, int t)
{
    if (t >= v->tiers - 1)
        return 1.0;
    double mean = v->g[t] / v->up[t];
    return dmax(1.0, v->ecmp ? ceil(mean - 1e-9) : mean);
}

/* In-network reduction (SHARP): each group reduces up one tree, one stream
 * of S per group leaving a leaf (pod), and the result comes back down:
 * up to the top switch the group reaches and back, streamed. */
static net_cost clos_in_network(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double f = 1.0;
    for (int t = 0; t < 2; t++)
        if (v.c[t] < v.n)
            f = dmax(f, tree_factor(&v, t));
    return net_linear(clos_hops(&v), f);
}

/* Reduce-scatter in the switches (all-gather, multicast, is its mirror):
 * each member sends all but its own share up and gets its share down, so
 * its port carries (n - 1)/n of S one way, as the ring's does, in one
 * pass up and down the tree instead of n - 1 steps; a leaf (pod) sends
 * up the partial sums of the shares of members elsewhere, (n - c)/n of S
 * per group, and gets its own members' back. */
static net_cost clos_in_network_shard(const comet_link *l, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    double load = (v.n - 1.0) / v.n;
    for (int t = 0; t < 2; t++)
        if (v.c[t] < v.n)
            load = dmax(load, (v.n - v.c[t]) / v.n * tree_factor(&v, t));
    return net_linear(clos_hops(&v), load);
}

/* Pipeline sends: every NPU sends S to the NPU `stride` places on. Of a
 * leaf's (pod's) c places, the last min(c, stride) send off it, so
 * act min(1, stride / c) connections leave it, one each (no channels),
 * each to one other leaf (pod): the tier's factor over them. */
static double clos_shift_load(const comet_link *l, int64_t stride, bool rail)
{
    clos_view v = clos_view_of(l, rail);
    v.channels = 1.0;
    double load = 1.0;
    for (int t = 0; t < 2 && t < v.tiers - 1; t++)
        if (v.c[t] < v.n)
            load = dmax(load, tier_factor(&v, t, v.act[t] * dmin(1.0, (double)stride / v.c[t]),
                                          true));
    return load;
}

static double fat_shift_load(const comet_link *l, int64_t stride)
{
    return clos_shift_load(l, stride, false);
}

static double rail_shift_load(const comet_link *l, int64_t stride)
{
    return clos_shift_load(l, stride, true);
}

static net_cost fred_in_network_shard(const comet_link *l) { return clos_in_network_shard(l, false); }
static net_cost fat_ring_pass(const comet_link *l) { return clos_ring_pass(l, false); }
static net_cost fat_scatter(const comet_link *l) { return clos_scatter(l, false); }
static net_cost fat_pairwise(const comet_link *l) { return clos_pairwise(l, false); }
static net_cost fat_halving(const comet_link *l) { return clos_halving(l, false); }
static net_cost fat_bruck(const comet_link *l) { return clos_bruck(l, false); }
static double fat_halving_link_total(const comet_link *l)
{
    return clos_halving_link_total(l, false);
}
static double rail_halving_link_total(const comet_link *l)
{
    return clos_halving_link_total(l, true);
}
static net_cost fat_folded_halving(const comet_link *l, net_hd_part part)
{
    return clos_folded_halving(l, part, false);
}
static net_cost rail_folded_halving(const comet_link *l, net_hd_part part)
{
    return clos_folded_halving(l, part, true);
}
static net_cost fat_double_tree(const comet_link *l) { return clos_double_tree(l, false); }
static net_cost fat_in_network(const comet_link *l) { return clos_in_network(l, false); }
static net_cost fat_root_scatter(const comet_link *l) { return clos_root_scatter(l, false); }
static net_cost rail_ring_pass(const comet_link *l) { return clos_ring_pass(l, true); }
static net_cost rail_root_scatter(const comet_link *l) { return clos_root_scatter(l, true); }
static bool fat_root_chain(const comet_link *l, net_cost *out, double *head)
{
    return clos_root_chain(l, false, out, head);
}
static bool rail_root_chain(const comet_link *l, net_cost *out, double *head)
{
    return clos_root_chain(l, true, out, head);
}
static net_cost rail_scatter(const comet_link *l) { return clos_scatter(l, true); }
static net_cost rail_pairwise(const comet_link *l) { return clos_pairwise(l, true); }
static net_cost rail_halving(const comet_link *l) { return clos_halving(l, true); }
static net_cost rail_bruck(const comet_link *l) { return clos_bruck(l, true); }
static net_cost rail_double_tree(const comet_link *l) { return clos_double_tree(l, true); }
static net_cost rail_in_network(const comet_link *l) { return clos_in_network(l, true); }

/* ---- the fabric: one tree per pod (outer instance) ----------------------- */

/* Per pod: P NPUs on L1 leaves; with 2 tiers every leaf has a link to each
 * of the u0 spines, with 3 the leaves form Q blocks of down1, each with u0
 * aggregation switches (leaf j-th uplink to the block's agg j), and agg j
 * of every block links to the u1 cores of core group j. Spraying merges
 * each tier's parallel links into one of their summed bandwidth (a flow
 * split evenly over equal paths shares them as one). Links per pod: the
 * NPU ports (2 each: up, down), the leaf uplinks, the agg uplinks. */
static void clos_layout(fab_dim *d)
{
    const comet_clos_ports *p = &d->ports;
    int64_t u0 = p->up[0], u1 = p->up[1];
    d->P = d->size * d->inner;
    d->G = (d->size + p->down[0] - 1) / p->down[0];
    d->L1 = comet_clos_leaves(d->topo, d->size, d->inner, p);
    d->Q = p->tiers == 3 ? (d->L1 + p->down[1] - 1) / p->down[1] : 0;
    int64_t sw, up, top;
    if (p->tiers == 2) {
        sw = d->L1 + (d->spray ? 1 : u0);
        up = d->spray ? d->L1 : d->L1 * u0;
        top = 0;
    } else {
        sw = d->L1 + (d->spray ? d->Q + 1 : d->Q * u0 + u0 * u1);
        up = d->spray ? d->L1 : d->L1 * u0;
        top = d->spray ? d->Q : d->Q * u0 * u1;
    }
    d->leaf_links0 = 0;
    d->up_links0 = 2 * d->P;
    d->top_links0 = 2 * d->P + 2 * up;
    d->n_links = d->outer * (d->top_links0 + 2 * top);
    d->n_switches = d->outer * sw;
}

static int64_t clos_pod_links(const fab_dim *d)
{
    return d->n_links / d->outer;
}

static int64_t clos_leaf_of(const fab_dim *d, int64_t e)
{
    if (d->rail)
        return (e % d->inner) * d->G + (e / d->inner) / d->ports.down[0];
    return e / d->ports.down[0];
}

/* Node ids of a pod's switches: leaves, then tier 2 (spines, or the
 * blocks' aggs), then the cores. */
static int64_t clos_node(const fab_dim *d, int64_t pod, int tier, int64_t i)
{
    int64_t per = d->n_switches / d->outer, base = d->node0 + pod * per;
    if (tier == 0)
        return base + i;
    if (tier == 1)
        return base + d->L1 + i;
    int64_t t2 = d->spray ? d->Q : d->Q * d->ports.up[0];
    return base + d->L1 + t2 + i;
}

static void clos_build(comet_fabric *f, const fab_dim *d)
{
    const comet_clos_ports *p = &d->ports;
    int64_t u0 = p->up[0], u1 = p->up[1];
    double a = 0.5 * d->lat, B = d->bw;
    for (int64_t pod = 0; pod < d->outer; pod++) {
        int64_t L = d->link0 + pod * clos_pod_links(d);
        for (int64_t e = 0; e < d->P; e++) {
            int64_t npu = e + d->P * pod, leaf = clos_node(d, pod, 0, clos_leaf_of(d, e));
            fab_set(f, L + 2 * e, npu, leaf, B, a, d, 0);
            fab_set(f, L + 2 * e + 1, leaf, npu, B, a, d, 0);
        }
        for (int64_t l = 0; l < d->L1; l++) {
            int64_t leaf = clos_node(d, pod, 0, l);
            int64_t block = p->tiers == 3 ? l / p->down[1] : 0;
            for (int64_t j = 0; j < (d->spray ? 1 : u0); j++) {
                int64_t up = p->tiers == 2 ? clos_node(d, pod, 1, d->spray ? 0 : j)
                                           : clos_node(d, pod, 1, d->spray ? block : block * u0 + j);
                int64_t id = L + d->up_links0 + 2 * (l * (d->spray ? 1 : u0) + j);
                double cap = d->spray ? B * p->up_cap[0] : B;
                fab_set(f, id, leaf, up, cap, a, d, 1);
                fab_set(f, id + 1, up, leaf, cap, a, d, 1);
            }
        }
        for (int64_t q = 0; q < d->Q; q++)
            for (int64_t j = 0; j < (d->spray ? 1 : u0); j++)
                for (int64_t c = 0; c < (d->spray ? 1 : u1); c++) {
                    int64_t agg = clos_node(d, pod, 1, d->spray ? q : q * u0 + j);
                    int64_t core = clos_node(d, pod, 2, d->spray ? 0 : j * u1 + c);
                    int64_t id = L + d->top_links0 + 2 * ((q * (d->spray ? 1 : u0) + j) *
                                                              (d->spray ? 1 : u1) + c);
                    double cap = d->spray ? B * p->up_cap[0] * p->up_cap[1] : B;
                    fab_set(f, id, agg, core, cap, a, d, 2);
                    fab_set(f, id + 1, core, agg, cap, a, d, 2);
                }
    }
}

/* Up to the lowest switch both ends share and down: the NPU's port, the
 * leaf uplink to spine (or agg) j = pick mod u0 (pick: the hash mixed
 * with the dimension's ecmp_seed, or pinned), with 3 tiers across blocks
 * the agg uplink to core (pick / u0) mod u1, and back down the same way;
 * a spraying tree takes the merged links. */
static int clos_route(const comet_fabric *f, const fab_dim *d, int64_t in, int64_t out,
                      int64_t a, int64_t b, uint64_t pick, int32_t *path, int cap)
{
    (void)f;
    const comet_clos_ports *p = &d->ports;
    if (cap < 6)
        return -1;
    int64_t u0 = p->up[0], u1 = p->up[1], L = d->link0 + out * clos_pod_links(d);
    int64_t ea = in + d->inner * a, eb = in + d->inner * b;
    int64_t la = clos_leaf_of(d, ea), lb = clos_leaf_of(d, eb);
    uint64_t h = pick;
    int64_t j = d->spray ? 0 : (int64_t)(h % (uint64_t)u0);
    int64_t c = d->spray ? 0 : (int64_t)((h / (uint64_t)u0) % (uint64_t)(u1 > 0 ? u1 : 1));
    int64_t w0 = d->spray ? 1 : u0, w1 = d->spray ? 1 : u1;
    int n = 0;
    path[n++] = (int32_t)(L + 2 * ea);
    if (la != lb) {
        path[n++] = (int32_t)(L + d->up_links0 + 2 * (la * w0 + j));
        if (p->tiers == 3) {
            int64_t qa = la / p->down[1], qb = lb / p->down[1];
            if (qa != qb) {
                path[n++] = (int32_t)(L + d->top_links0 + 2 * ((qa * w0 + j) * w1 + c));
                path[n++] = (int32_t)(L + d->top_links0 + 2 * ((qb * w0 + j) * w1 + c) + 1);
            }
        }
        path[n++] = (int32_t)(L + d->up_links0 + 2 * (lb * w0 + j) + 1);
    }
    path[n++] = (int32_t)(L + 2 * eb + 1);
    return n;
}

/* The NPU's port: its link up to its leaf (down: from it). */
static int32_t clos_port(const fab_dim *d, int64_t in, int64_t out, int64_t pos, bool down)
{
    return (int32_t)(d->link0 + out * clos_pod_links(d) + 2 * (in + d->inner * pos) + (down ? 1 : 0));
}

/* A Clos is alike for every NPU when it sprays (no hash picks some
 * NPUs' paths over others'), no tier is oversubscribed (whether a
 * group's traffic climbs past a leaf, and meets others there, depends on
 * where its members sit), its leaves and blocks are filled alike, and no
 * leaf splits a node's NPUs unevenly. */
static bool clos_uneven(const fab_dim *d, const char *name, char *why, size_t cap)
{
    const comet_clos_ports *p = &d->ports;
    const char *kind = d->rail                     ? "rail network"
                       : d->topo == COMET_TOPO_FRED ? "FRED fabric"
                                                    : "fat tree";
    if (!d->spray) {
        snprintf(why, cap, "%s hashes each flow onto one of its equal paths (ECMP)", name);
        return true;
    }
    for (int t = 0; t + 1 < p->tiers; t++)
        if ((double)p->down[t] > p->up_cap[t] * (1.0 + 1e-12)) {
            snprintf(why, cap, "%s is a %s oversubscribed %.3g:1", name, kind,
                     (double)p->down[t] / p->up_cap[t]);
            return true;
        }
    int64_t on_leaves = d->rail ? d->size : d->P;
    if (on_leaves % p->down[0] != 0 || (p->tiers == 3 && d->L1 % p->down[1] != 0)) {
        snprintf(why, cap, "%s's %lld-port leaves are not all filled alike", name,
                 (long long)p->down[0]);
        return true;
    }
    if (!d->rail && p->down[0] % d->inner != 0 && d->inner % p->down[0] != 0) {
        snprintf(why, cap, "%s's %lld-port leaves split nodes of %lld NPUs", name,
                 (long long)p->down[0], (long long)d->inner);
        return true;
    }
    return false;
}

static const fab_ops clos_fabric = {clos_layout, clos_build, clos_route, clos_port, clos_uneven};

/* A fat tree's fabric and patterns, for the topologies priced as one. */
#define FAT_TREE_MEMBERS                                                                       \
    .fabric = &clos_fabric, .ring_pass = fat_ring_pass, .pairwise_exchange = fat_pairwise,     \
    .scatter_to_all = fat_scatter, .recursive_halving = fat_halving, .bruck = fat_bruck,       \
    .folded_halving = fat_folded_halving, .halving_link_total = fat_halving_link_total,       \
    .double_tree = fat_double_tree, .in_network_all_reduce = fat_in_network,                 \
    .shift_load = fat_shift_load, .root_scatter = fat_root_scatter,                          \
    .root_chain = fat_root_chain, .prices_spacing = true

const net_topology net_topology_fat_tree = {.id = COMET_TOPO_FAT_TREE, FAT_TREE_MEMBERS};

/* FRED: a 2-level tree whose L1 uplinks may carry any fraction of their
 * NPUs' bandwidth, spraying always; priced as a fat tree of that shape,
 * its switches reducing in the network where the system says so: every
 * all-reduce, reduce-scatter and all-gather (its R and D micro-switches
 * reduce, scatter and multicast, Rashidi et al. ISCA 2025, §4). */
const net_topology net_topology_fred = {.id = COMET_TOPO_FRED, FAT_TREE_MEMBERS,
                                        .in_network_shard = fred_in_network_shard};

const net_topology net_topology_rail = {
    .id = COMET_TOPO_RAIL,
    .fabric = &clos_fabric,
    .ring_pass = rail_ring_pass,
    .pairwise_exchange = rail_pairwise,
    .scatter_to_all = rail_scatter,
    .recursive_halving = rail_halving,
    .folded_halving = rail_folded_halving,
    .halving_link_total = rail_halving_link_total,
    .bruck = rail_bruck,
    .double_tree = rail_double_tree,
    .in_network_all_reduce = rail_in_network,
    .shift_load = rail_shift_load,
    .root_scatter = rail_root_scatter,
    .root_chain = rail_root_chain,
    .prices_spacing = true,
};
