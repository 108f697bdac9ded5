/* Torus and mesh: NPUs on a grid of 1-3 axes (shape), each linked to its
 * two neighbours along every axis, with wrap-around links on a torus and
 * none on a mesh. B is split over the NPU's 2m ports (m the topology's
 * axes): B/(2m) per link and direction; an axis of 2 on a torus has both
 * ports on the one neighbour (one link of B/m). A group of n NPUs takes
 * the axes innermost first (partial axes are lines, without wrap-around).
 * The ring schedule runs per axis with the buffer split in one part per
 * axis, the parts visiting the axes in rotated orders (a part's phases
 * telescope to (n-1)/n x whatever the order); a line's bisection is one
 * link, a ring's two, so every pattern costs a line twice a ring's
 * bandwidth. Dimension-order routing. Formulas: docs/fabric.md. */
#include "families.h"

#include <stdio.h>

typedef struct grid {
    int m;               /* the topology's axes: ports 2m */
    int g;               /* the group's axes */
    int64_t k[COMET_MAX_AXES];
    double line[COMET_MAX_AXES]; /* 1 on a whole torus axis, 2 on a line (bisection) */
    /* Places between the members along the axis: a group whose inner
     * groups (a tensor group's, say) take part of the axis sits gap
     * apart, and gap such groups interleave on its links: every pattern on
     * the axis costs gap times its load and hops (1 on the axes past it). */
    double gap[COMET_MAX_AXES];
} grid;

/* A part's phases at most: an all-reduce's two passes over the axes. */
#define GRID_MAX_PHASES (2 * COMET_MAX_AXES)
/* chunks the ring schedule's closed form runs one by one; past twice as
 * many, their steady period (grid_ring_schedule) */
#define GRID_EXACT_CHUNKS 16

/* The topology's axes into axes[], their count returned; no shape: one
 * axis, the whole dimension (a group of part of it is a line). */
static int shape_axes(const comet_link *l, int64_t axes[COMET_MAX_AXES])
{
    const comet_net_shape *sh = l->shape;
    axes[0] = l->size > l->n ? l->size : l->n;
    axes[1] = axes[2] = 0;
    if (!sh || sh->n_axes <= 0)
        return 1;
    int m = sh->n_axes > COMET_MAX_AXES ? COMET_MAX_AXES : sh->n_axes;
    for (int i = 0; i < m; i++)
        axes[i] = sh->axes[i];
    return m;
}

/* The group's axes: innermost first, each as much of the topology's axis
 * as the NPUs left fill. A group `spacing` places apart (comet_link)
 * starts past the axes its inner groups fill, on the first every gap-th
 * NPU; spacing that does not tile the axes is priced as neighbours. */
static grid grid_of(const comet_link *l, bool wrap)
{
    grid gr = {1, 0, {0}, {0}, {0}};
    int64_t axes[COMET_MAX_AXES];
    int m = shape_axes(l, axes);
    gr.m = m;
    int64_t left = l->n, gap = l->spacing > 1 ? l->spacing : 1;
    int i = 0;
    while (i < m && gap > 1 && axes[i] > 0 && gap % axes[i] == 0)
        gap /= axes[i++];
    if (i == m || (gap > 1 && axes[i] % gap)) {
        i = 0;
        gap = 1;
    }
    for (; i < m && left > 1; i++, gap = 1) {
        int64_t room = axes[i] / gap, k = room < left ? room : left;
        if (k < 2)
            continue;
        gr.k[gr.g] = k;
        gr.line[gr.g] = wrap && k == room ? 1.0 : 2.0;
        gr.gap[gr.g] = (double)gap;
        gr.g++;
        left = (left + k - 1) / k;
    }
    if (gr.g == 0) {
        gr.k[0] = l->n;
        gr.line[0] = wrap ? 1.0 : 2.0;
        gr.gap[0] = 1.0;
        gr.g = 1;
    }
    return gr;
}

static double quarter_sq(int64_t n)
{
    return (double)(n / 2) * (double)(n - n / 2);
}

/* Neighbour steps on one axis: a ring's neighbours are one hop apart, a
 * line's ring folds back (every other NPU each way): two hops. */
static double step_hops(const grid *gr, int i)
{
    return gr->k[i] > 2 && gr->line[i] > 1.0 ? 2.0 : 1.0;
}

/* What one part's phase on axis i costs, per unit of what the part holds
 * as it starts (bandwidth, at B/m per axis), and the hops it waits. */
typedef double (*axis_cost_fn)(const grid *gr, int i, double *hops);

/* The ring schedule's phase: (k-1)/k of what it holds, twice on a line
 * (its bisection is one link), k-1 neighbour steps. */
static double ring_axis(const grid *gr, int i, double *hops)
{
    double k = (double)gr->k[i];
    *hops = (k - 1.0) * step_hops(gr, i) * gr->gap[i];
    return gr->line[i] * (k - 1.0) / k * gr->gap[i];
}

/* The buffer in one part per axis, part j visiting the axes j, j+1, ...
 * (mod g), each axis's phase moving what the part holds then (which
 * shrinks by k_i after it): cost[j][p] and axis[j][p] of part j's phase p;
 * returns the most hops a part waits. */
static double part_phases(const grid *gr, axis_cost_fn axis_cost,
                          double cost[][GRID_MAX_PHASES], int axis[][GRID_MAX_PHASES])
{
    double hops = 0.0;
    for (int j = 0; j < gr->g; j++) {
        double held = 1.0, h = 0.0;
        for (int p = 0; p < gr->g; p++) {
            int i = (j + p) % gr->g;
            double axis_hops;
            cost[j][p] = axis_cost(gr, i, &axis_hops) * held;
            axis[j][p] = i;
            held /= (double)gr->k[i];
            h += axis_hops;
        }
        if (h > hops)
            hops = h;
    }
    return hops;
}

/* The parts' phases run one after another per part, all parts at once:
 * phases on the same axis at once share its links equally (each moves
 * over every line of the axis), and a part goes on to its next phase as
 * its last ends. Their makespan, phase by phase: on 3 x 4 a scatter's
 * later phase slows another part's first, which ends later and leaves its
 * own later phases alone at the end (1.5 x where the busiest axis says
 * 4/3 x). cost[j][p] is what part j's phase p takes alone, for each of k
 * chunks of the buffer, each part's chunks in order behind each other:
 * chunk c's phase p starts once its phase p-1 and chunk c-1's phase p are
 * done (the flows' hold of one phase). The chunks in flight a part are
 * those whose phases are strictly behind the chunk before's, at most
 * phases + 1 of them, so a window of that many per part is all there is
 * to keep, whatever k. */
static double parts_makespan(int parts, int phases, const double cost[][GRID_MAX_PHASES],
                             const int axis[][GRID_MAX_PHASES], int64_t k)
{
    enum { WINDOW = GRID_MAX_PHASES + 1 };
    int at[COMET_MAX_AXES][WINDOW];
    double left[COMET_MAX_AXES][WINDOW];
    int64_t lo[COMET_MAX_AXES];
    for (int j = 0; j < parts; j++) {
        lo[j] = 0;
        for (int w = 0; w < WINDOW; w++) {
            at[j][w] = 0;
            left[j][w] = cost[j][0];
        }
    }
    double t = 0.0;
    for (;;) {
        int on[COMET_MAX_AXES] = {0};
        bool runs[COMET_MAX_AXES][WINDOW];
        for (int j = 0; j < parts; j++)
            for (int w = 0; w < WINDOW; w++) {
                runs[j][w] = lo[j] + w < k && at[j][w] < phases &&
                             (w == 0 || at[j][w - 1] > at[j][w]);
                if (runs[j][w])
                    on[axis[j][at[j][w]]]++;
            }
        double dt = -1.0;
        for (int j = 0; j < parts; j++)
            for (int w = 0; w < WINDOW; w++)
                if (runs[j][w]) {
                    double end = left[j][w] * (double)on[axis[j][at[j][w]]];
                    dt = dt < 0.0 || end < dt ? end : dt;
                }
        if (dt < 0.0)
            return t;
        t += dt;
        for (int j = 0; j < parts; j++) {
            for (int w = 0; w < WINDOW; w++) {
                if (!runs[j][w])
                    continue;
                int shared = on[axis[j][at[j][w]]];
                if (left[j][w] * (double)shared <= dt * (1.0 + 1e-12)) {
                    at[j][w]++;
                    left[j][w] = at[j][w] < phases ? cost[j][at[j][w]] : 0.0;
                } else {
                    left[j][w] -= dt / (double)shared;
                }
            }
            while (lo[j] < k && at[j][0] >= phases) { /* the part's first chunk is through */
                for (int w = 0; w + 1 < WINDOW; w++) {
                    at[j][w] = at[j][w + 1];
                    left[j][w] = left[j][w + 1];
                }
                at[j][WINDOW - 1] = 0;
                left[j][WINDOW - 1] = cost[j][0];
                lo[j]++;
            }
        }
    }
}

/* The parts' load: the slowest part's phases one after another, or, when
 * the axes differ, the busiest axis's work over all the parts that share
 * its links (on a 5 x 4 line grid the ring schedule's axis of 5 carries
 * 2.0 where each part's own phases sum to 1.9), times m/g when the group
 * leaves some of the NPU's axes idle. */
static net_cost grid_parts(const comet_link *l, bool wrap, axis_cost_fn axis_cost)
{
    grid gr = grid_of(l, wrap);
    double cost[COMET_MAX_AXES][GRID_MAX_PHASES], worst = 0.0, on_axis[COMET_MAX_AXES] = {0};
    int axis[COMET_MAX_AXES][GRID_MAX_PHASES];
    double hops = part_phases(&gr, axis_cost, cost, axis);
    for (int j = 0; j < gr.g; j++) {
        double load = 0.0;
        for (int p = 0; p < gr.g; p++) {
            load += cost[j][p];
            on_axis[axis[j][p]] += cost[j][p];
        }
        if (load > worst)
            worst = load;
    }
    for (int i = 0; i < gr.g; i++)
        if (on_axis[i] > worst)
            worst = on_axis[i];
    return net_linear(hops, worst * (double)gr.m / (double)gr.g);
}

/* The ring schedule: per axis, the parts in rotated orders (telescoping
 * to (n-1)/n of the buffer each), as their makespan: a reduce-scatter's
 * phases, an all-gather's the same backwards, an all-reduce's the one then
 * the other (docs/fabric.md). Where the group's axes differ the parts
 * meet on them: on 4 x 2 (a ring and a line) the reduce-scatter takes
 * 1.625 x where the slowest part alone takes 1.375 x. */
static net_cost grid_ring_schedule(const comet_link *l, bool wrap, comet_collective c)
{
    grid gr = grid_of(l, wrap);
    double cost[COMET_MAX_AXES][GRID_MAX_PHASES];
    int axis[COMET_MAX_AXES][GRID_MAX_PHASES];
    double hops = part_phases(&gr, ring_axis, cost, axis);
    int g = gr.g, phases = c == COMET_COLL_ALL_REDUCE ? 2 * g : g;
    for (int j = 0; j < g; j++) /* the reduce-scatter's phases, backwards */
        for (int p = 0; p < g; p++) {
            int from = g - 1 - p;
            if (c == COMET_COLL_ALL_REDUCE) {
                cost[j][g + p] = cost[j][from];
                axis[j][g + p] = axis[j][from];
            } else if (c == COMET_COLL_ALL_GATHER && p < from) {
                double tc = cost[j][p];
                int ta = axis[j][p];
                cost[j][p] = cost[j][from];
                axis[j][p] = axis[j][from];
                cost[j][from] = tc;
                axis[j][from] = ta;
            }
        }
    if (c == COMET_COLL_ALL_REDUCE)
        hops *= 2.0;
    if (g == 1)
        return net_linear(hops, cost[0][0] * (double)phases * (double)gr.m);
    /* k chunks: the next chunks' phases fill the axes the first leaves
     * idle, each part's chunks behind each other as the flows run them
     * (on 4 x 2 the all-reduce's 3.5 x at one chunk, 2.5 x at two and
     * more): a chunk's share of their makespan, which the chunk pipeline
     * multiplies back (src/network/network.c) */
    int64_t k = l->chunks > 1 ? l->chunks : 1;
    double t;
    if (k > 2 * GRID_EXACT_CHUNKS) {
        /* past the first chunks the makespan grows by a steady period:
         * the mean over the second GRID_EXACT_CHUNKS carries it on */
        double m1 = parts_makespan(g, phases, cost, axis, GRID_EXACT_CHUNKS);
        double m2 = parts_makespan(g, phases, cost, axis, 2 * GRID_EXACT_CHUNKS);
        t = (m2 + (double)(k - 2 * GRID_EXACT_CHUNKS) * (m2 - m1) / GRID_EXACT_CHUNKS) /
            (double)k;
    } else {
        t = parts_makespan(g, phases, cost, axis, k) / (double)k;
    }
    return net_linear(hops, t * (double)gr.m / (double)g);
}

static int torus_ring_phases(const comet_link *l)
{
    return grid_of(l, true).g;
}

static int mesh_ring_phases(const comet_link *l)
{
    return grid_of(l, false).g;
}

static net_cost grid_ring_pass(const comet_link *l, bool wrap)
{
    return grid_ring_schedule(l, wrap, COMET_COLL_REDUCE_SCATTER);
}

/* A rooted scatter's phase on axis i: the NPUs the part has reached send
 * what they hold over their line, held/k to each other member, along
 * dimension-order routes from index 0: on a whole torus axis the fuller
 * way carries floor(k/2) pieces (both ports are one link on an axis of
 * 2), floor(k/2) hops; on a line all k-1 leave on one link, k-1 hops.
 * Groups gap apart: the link before the first member carries every
 * interleaved group's pieces that way, a tie's (k even) from the groups
 * whose roots sit on even places (ties go forward from there):
 * gap floor((k-1)/2) + ceil(gap/2) on a ring, gap (k-1) on a line. */
static double scatter_axis(const grid *gr, int i, double *hops)
{
    double k = (double)gr->k[i], gap = gr->gap[i];
    if (gr->line[i] > 1.0) {
        *hops = (k - 1.0) * gap;
        return 2.0 * (k - 1.0) / k * gap;
    }
    if (gr->k[i] == 2 && gap == 1.0) {
        *hops = 1.0;
        return 0.5;
    }
    double pieces = net_interleaved_scatter_pieces(gr->k[i], (int64_t)gap);
    *hops = (double)(gr->k[i] / 2) * gap;
    return 2.0 * pieces / k;
}

/* A rooted scatter or gather over axes of neighbours: on each axis the
 * line's first link takes one piece from each distance (what the part
 * holds then over k, at B/(2m)), the nearest moving while the farther
 * ones' latencies run, so a part's phases wait a hop each at least and
 * each phase's D - 1 farther hops trade against its pieces past the
 * nearest (net_spread, with their mean over those hops as `near`). The
 * parts' phases share the root's links (parts_makespan), which this
 * leaves to the load: the flows within 2 % at 1 us and 16 chunks, +2
 * to +8 % at 5 us (docs/collectives.md). */
static net_cost rooted_spread(const grid *gr, net_cost c)
{
    /* per part, each phase's pieces past its nearest: (D_i - 1) pieces
     * of what it holds then; the least over the parts */
    double spread = -1.0, extra_hops = 0.0;
    for (int j = 0; j < gr->g; j++) {
        double held = 1.0, sum = 0.0, hops = 0.0;
        for (int p = 0; p < gr->g; p++) {
            int i = (j + p) % gr->g;
            if (gr->gap[i] != 1.0)
                return c;
            bool two = gr->k[i] == 2 && gr->line[i] == 1.0; /* one link of B/m */
            double d = gr->line[i] > 1.0 ? (double)(gr->k[i] - 1) : (double)(gr->k[i] / 2);
            sum += (d - 1.0) * (two ? 0.5 : 2.0 / (double)gr->k[i]) * held;
            hops += d - 1.0;
            held /= (double)gr->k[i];
        }
        spread = spread < 0.0 || sum < spread ? sum : spread;
        extra_hops = hops;
    }
    if (!(extra_hops > 0.0))
        return c;
    return net_spread(c, (double)gr->g, 1.0,
                      spread / extra_hops * (double)gr->m / (double)gr->g, 0.0);
}

/* A scatter axis by axis, part j from axis j on, so the root's traffic
 * leaves on all its links: on 3 x 3 x 3 the (n-1)/n x the root must send
 * at least, where one direct scatter's routes all leave on the root's
 * axis-0 links (2 x). Every part's phase on an axis starts at the root,
 * whose links on that axis the phases on it at once share equally (each
 * sends as many pieces each way): the parts' makespan, times m/g. */
static net_cost grid_root_scatter(const comet_link *l, bool wrap)
{
    grid gr = grid_of(l, wrap);
    double cost[COMET_MAX_AXES][GRID_MAX_PHASES];
    int axis[COMET_MAX_AXES][GRID_MAX_PHASES];
    double hops = part_phases(&gr, scatter_axis, cost, axis);
    double t = parts_makespan(gr.g, gr.g, cost, axis, 1);
    return rooted_spread(&gr, net_linear(hops, t * (double)gr.m / (double)gr.g));
}

/* A gather, the scatter's phases in the reverse order toward the root:
 * its first phases run on every line of their axes, not on the root's
 * alone, and the flows keep closer to the busiest axis or the slowest
 * part than to the scatter's makespan (on 4 x 4 x 8 1.344 x: the busiest
 * axis 1.313 x, the makespan 1.469 x). */
static net_cost grid_root_gather(const comet_link *l, bool wrap)
{
    grid gr = grid_of(l, wrap);
    return rooted_spread(&gr, grid_parts(l, wrap, scatter_axis));
}

/* A broadcast on a group along one axis of k: on a whole torus axis the
 * ring's two counter-rotating chains of n pieces at B/(2m) a link, 2(k-1)
 * steps of a + m x/k; on a line, whose root is at its end with one link,
 * one chain of 2k pieces of S/(2k): the root sends each once the last has
 * arrived, 2k steps, and the last piece travels the k-2 hops left, (3k-2)
 * steps of a + m x/k (two chains would share the root's one link, and the
 * one coming back would cross the whole line per piece). A group of
 * several axes is scattered and all-gathered per axis instead (a chain
 * would cross the grid in one file). */
static bool grid_root_chain(const comet_link *l, bool wrap, net_cost *out, double *head)
{
    grid gr = grid_of(l, wrap);
    if (gr.g > 1)
        return false;
    double k = (double)gr.k[0], m = (double)gr.m;
    bool line = gr.line[0] > 1.0;
    double steps = line ? 3.0 * k - 2.0 : 2.0 * (k - 1.0);
    *out = net_linear(steps * gr.gap[0], m * steps / k * gr.gap[0]);
    *head = (line ? 2.0 * k : k) / steps; /* the root sends its 2k (k) pieces */
    return true;
}

/* Every NPU sends S/n to every other at once, dimension-order routed:
 * axis i carries m Q(k_i)/k_i x per link on a ring axis (twice on a line:
 * its middle link carries Q(k) blocks each way), and no NPU injects more
 * than (n-1)/n x. */
static net_cost grid_scatter(const comet_link *l, bool wrap)
{
    grid gr = grid_of(l, wrap);
    double n = (double)l->n;
    double load = (n - 1.0) / n, hops = 0.0;
    bool spread = true; /* the busiest link an axis's, its members neighbours */
    for (int i = 0; i < gr.g; i++) {
        double k = (double)gr.k[i];
        double axis = gr.line[i] * (double)gr.m * quarter_sq(gr.k[i]) / k * gr.gap[i];
        if (axis > load)
            load = axis;
        spread = spread && gr.gap[i] == 1.0;
        hops += (gr.line[i] > 1.0 ? k - 1.0 : (double)(gr.k[i] / 2)) * gr.gap[i];
    }
    net_cost c = net_linear(hops, load);
    /* the busiest link takes, from every distance 1..hops, at least the
     * one piece (S/n at B/(2m)) of its own neighbours */
    if (spread && load > (n - 1.0) / n)
        c = net_spread(c, 1.0, 1.0, 2.0 * (double)gr.m / n, 0.0);
    return c;
}

/* Pairwise exchange: on a network of direct links nothing orders the
 * rounds, so every block is posted at once: the scatter. */
static net_cost grid_pairwise(const comet_link *l, bool wrap)
{
    return grid_scatter(l, wrap);
}

/* Log-step schedules run on one axis at a time, bit by bit of the rank
 * (axis 0's bits first), with what the earlier axes left: step s of axis
 * i sends held/2^(s+1) to the NPU 2^s away, which loads the busiest link
 * with 2^s such blocks on a line (m held x a step) and splits the last
 * step both ways on a ring. */
static net_cost grid_halving(const comet_link *l, bool wrap)
{
    grid gr = grid_of(l, wrap);
    double load = 0.0, hops = 0.0, held = 1.0;
    for (int i = 0; i < gr.g; i++) {
        int L = net_ceil_log2(gr.k[i]);
        double steps = gr.line[i] > 1.0 ? (double)L : (double)L - 0.5;
        load += (double)gr.m * held * steps * gr.gap[i];
        int64_t half = gr.k[i] / 2;
        for (int s = 0; s < L; s++) {
            int64_t d = (int64_t)1 << s;
            hops += (double)(gr.line[i] > 1.0 || d < half ? d : half) * gr.gap[i];
        }
        held /= (double)gr.k[i];
    }
    return net_linear(hops, load);
}

/* Bruck: step s ships S/2 to the member d = 2^s on in rank order, along
 * dimension-order routes. Every line of axis a carries one shift, the
 * digit of d there plus the carry out of the axes inside (the same for
 * the whole line: its members share those coordinates), its busiest link
 * net_shift_flows of them at B/(2m) (gap times, spaced): the step takes
 * the busiest axis's (8 x on 4 x 4, 2 x each step; 15 x on a mesh line of
 * 16, whose last step's 8 messages all cross the middle). */
static net_cost grid_bruck(const comet_link *l, bool wrap)
{
    grid gr = grid_of(l, wrap);
    int L = net_ceil_log2(l->n);
    double load = 0.0, hops = 0.0;
    for (int s = 0; s < L; s++) {
        int64_t rest = (int64_t)1 << s;
        bool carries = false; /* the digits inside not all 0: some lines carry 1 */
        double busiest = 0.0;
        for (int i = 0; i < gr.g; i++) {
            int64_t digit = rest % gr.k[i];
            rest /= gr.k[i];
            double far = 0.0;
            for (int carry = 0; carry < (carries ? 2 : 1); carry++) {
                double h, f = net_shift_flows(digit + carry, gr.k[i], gr.line[i] == 1.0, &h);
                busiest = f * gr.gap[i] > busiest ? f * gr.gap[i] : busiest;
                far = h > far ? h : far;
            }
            hops += far * gr.gap[i];
            carries = carries || digit > 0;
        }
        load += busiest * (double)gr.m;
    }
    return net_linear(hops, load);
}

/* Double binary tree: the trees' edges routed in dimension order as the
 * flows route them, every group at once (net_direct_double_tree); past
 * its links roughly: the edges laid along the rank order cross the
 * busiest link about once per level each way (per axis). */
static net_cost grid_double_tree(const comet_link *l, bool wrap)
{
    net_direct d = {1, {0}, {wrap, wrap, wrap}, false};
    d.m = shape_axes(l, d.axes);
    net_cost c;
    if (net_direct_double_tree(l, &d, &c))
        return c;
    c = grid_halving(l, wrap);
    return net_linear(2.0 * c.hops, c.load > 1.0 ? 2.0 * c.load : 2.0);
}

/* Not a power of two: folded (net_hd), every message routed in
 * dimension order as the flows route it, every group at once; past its
 * links roughly. */
static double grid_shift_load(const comet_link *l, int64_t stride, bool wrap);
static net_cost grid_folded_halving(const comet_link *l, net_hd_part part, bool wrap)
{
    net_direct d = {1, {0}, {wrap, wrap, wrap}, false};
    d.m = shape_axes(l, d.axes);
    net_cost c;
    if (net_hd_direct(l, &d, part, &c))
        return c;
    return net_hd_rough(l, part, grid_halving(l, wrap), grid_shift_load(l, 1, wrap));
}

/* The pass's busiest link over all its steps, each message routed in
 * dimension order as the flows route it. */
static double grid_halving_link_total(const comet_link *l, bool wrap)
{
    net_direct d = {1, {0}, {wrap, wrap, wrap}, false};
    d.m = shape_axes(l, d.axes);
    double total;
    return net_hd_link_total(l, &d, &total) ? total : 0.0;
}
static double torus_halving_link_total(const comet_link *l)
{
    return grid_halving_link_total(l, true);
}
static double mesh_halving_link_total(const comet_link *l)
{
    return grid_halving_link_total(l, false);
}

static net_cost torus_ring_pass(const comet_link *l) { return grid_ring_pass(l, true); }
static net_cost torus_ring_schedule(const comet_link *l, comet_collective c)
{
    return grid_ring_schedule(l, true, c);
}
static net_cost mesh_ring_schedule(const comet_link *l, comet_collective c)
{
    return grid_ring_schedule(l, false, c);
}
static net_cost torus_scatter(const comet_link *l) { return grid_scatter(l, true); }
static net_cost torus_pairwise(const comet_link *l) { return grid_pairwise(l, true); }
static net_cost torus_halving(const comet_link *l) { return grid_halving(l, true); }
static net_cost torus_folded_halving(const comet_link *l, net_hd_part part)
{
    return grid_folded_halving(l, part, true);
}
static net_cost mesh_folded_halving(const comet_link *l, net_hd_part part)
{
    return grid_folded_halving(l, part, false);
}
static net_cost torus_bruck(const comet_link *l) { return grid_bruck(l, true); }
static net_cost torus_double_tree(const comet_link *l) { return grid_double_tree(l, true); }
static net_cost torus_root_scatter(const comet_link *l) { return grid_root_scatter(l, true); }
static net_cost torus_root_gather(const comet_link *l) { return grid_root_gather(l, true); }
static bool torus_root_chain(const comet_link *l, net_cost *out, double *head)
{
    return grid_root_chain(l, true, out, head);
}
static net_cost mesh_ring_pass(const comet_link *l) { return grid_ring_pass(l, false); }
static net_cost mesh_root_scatter(const comet_link *l) { return grid_root_scatter(l, false); }
static net_cost mesh_root_gather(const comet_link *l) { return grid_root_gather(l, false); }
static bool mesh_root_chain(const comet_link *l, net_cost *out, double *head)
{
    return grid_root_chain(l, false, out, head);
}
static net_cost mesh_scatter(const comet_link *l) { return grid_scatter(l, false); }
static net_cost mesh_pairwise(const comet_link *l) { return grid_pairwise(l, false); }
static net_cost mesh_halving(const comet_link *l) { return grid_halving(l, false); }
static net_cost mesh_bruck(const comet_link *l) { return grid_bruck(l, false); }
static net_cost mesh_double_tree(const comet_link *l) { return grid_double_tree(l, false); }

/* Pipeline sends: every NPU of a stage sends to its peer `stride` places
 * on along dimension-order routes, each line of an axis carrying one
 * shift (the stride's digit there, plus the carry from the axes inside),
 * its busiest link net_shift_flows of them at B/(2m): a lone send to a
 * neighbour takes 2m times a send at B (both ports of an axis of 2 on a
 * torus: m). */
static double grid_shift_load(const comet_link *l, int64_t stride, bool wrap)
{
    int64_t axes[COMET_MAX_AXES];
    int m = shape_axes(l, axes);
    int64_t rest = stride;
    bool carries = false;
    double busiest = 0.0;
    for (int i = 0; i < m && axes[i] > 0; i++) {
        int64_t digit = rest % axes[i];
        rest /= axes[i];
        for (int carry = 0; carry < (carries ? 2 : 1); carry++) {
            double hops, f = net_shift_flows(digit + carry, axes[i], wrap, &hops);
            busiest = f > busiest ? f : busiest;
        }
        carries = carries || digit > 0;
    }
    return 2.0 * (double)m * busiest;
}

static double torus_shift_load(const comet_link *l, int64_t stride)
{
    return grid_shift_load(l, stride, true);
}

static double mesh_shift_load(const comet_link *l, int64_t stride)
{
    return grid_shift_load(l, stride, false);
}

/* ---- the fabric: per NPU and axis a link each way ----------------------- */

/* Link ((inst * size + pos) * m + axis) * 2 + dir, dir 0 towards +1 along
 * the axis, 1 towards -1. A link with no neighbour (a mesh's edge, the
 * second port of a torus axis of 2, whose first carries both: B/m) has no
 * bandwidth and no route uses it. */
static void grid_layout(fab_dim *d)
{
    d->stride[0] = 1;
    for (int i = 1; i < d->m; i++)
        d->stride[i] = d->stride[i - 1] * d->axes[i - 1];
    d->n_links = d->inner * d->outer * d->size * d->m * 2;
    d->n_switches = 0;
}

static int64_t grid_link(const fab_dim *d, int64_t inst, int64_t pos, int axis, int dir)
{
    return d->link0 + ((inst * d->size + pos) * d->m + axis) * 2 + dir;
}

static void grid_build(comet_fabric *f, const fab_dim *d)
{
    double port = d->bw / (2.0 * (double)d->m);
    for (int64_t out = 0; out < d->outer; out++)
        for (int64_t in = 0; in < d->inner; in++) {
            int64_t inst = fab_instance(d, in, out);
            for (int64_t pos = 0; pos < d->size; pos++)
                for (int i = 0; i < d->m; i++) {
                    int64_t k = d->axes[i], c = (pos / d->stride[i]) % k, me = fab_npu(d, in, out, pos);
                    for (int dir = 0; dir < 2; dir++) {
                        int64_t nc = dir == 0 ? c + 1 : c - 1;
                        double cap = port;
                        if (d->wrap)
                            nc = (nc + k) % k;
                        if (nc < 0 || nc >= k)
                            cap = 0.0;
                        if (d->wrap && k == 2)
                            cap = dir == 0 ? 2.0 * port : 0.0;
                        int64_t to = cap > 0.0 ? fab_npu(d, in, out, pos + (nc - c) * d->stride[i]) : me;
                        fab_set(f, grid_link(d, inst, pos, i, dir), me, to, cap, d->lat, d, 0);
                    }
                }
        }
}

/* Dimension order: axis 0 first, each the shorter way on a torus (on a
 * tie forward from an even coordinate, back from an odd one; always
 * forward on an axis of 2), straight on a mesh. */
static int grid_route(const comet_fabric *f, const fab_dim *d, int64_t in, int64_t out,
                      int64_t a, int64_t b, uint64_t hash, int32_t *path, int cap)
{
    (void)f;
    (void)hash;
    int64_t inst = fab_instance(d, in, out), pos = a;
    int n = 0;
    for (int i = 0; i < d->m; i++) {
        int64_t k = d->axes[i], ca = (pos / d->stride[i]) % k, cb = (b / d->stride[i]) % k;
        if (ca == cb)
            continue;
        int dir;
        int64_t hops;
        if (d->wrap) {
            int64_t fwd = ((cb - ca) % k + k) % k;
            dir = k > 2 && (k - fwd < fwd || (k - fwd == fwd && (ca & 1))) ? 1 : 0;
            hops = dir ? k - fwd : fwd;
        } else {
            dir = cb > ca ? 0 : 1;
            hops = dir ? ca - cb : cb - ca;
        }
        if (hops > cap - n)
            return -1;
        for (int64_t h = 0; h < hops; h++) {
            path[n++] = (int32_t)grid_link(d, inst, pos, i, dir);
            int64_t c = (pos / d->stride[i]) % k;
            int64_t nc = dir == 0 ? (c + 1) % k : (c + k - 1) % k;
            pos += (nc - c) * d->stride[i];
        }
    }
    return n;
}

/* A torus is alike for every NPU; a mesh's NPUs at its edges have fewer
 * links than those inside (an axis of two aside). */
static bool grid_uneven(const fab_dim *d, const char *name, char *why, size_t cap)
{
    for (int i = 0; !d->wrap && i < d->m; i++)
        if (d->axes[i] > 2) {
            snprintf(why, cap, "%s is a mesh: the NPUs at its edges have fewer links", name);
            return true;
        }
    return false;
}

static const fab_ops grid_fabric = {grid_layout, grid_build, grid_route, NULL, grid_uneven};

const net_topology net_topology_torus = {
    .id = COMET_TOPO_TORUS,
    .fabric = &grid_fabric,
    .ring_pass = torus_ring_pass,
    .ring_schedule = torus_ring_schedule,
    .ring_phases = torus_ring_phases,
    .pairwise_exchange = torus_pairwise,
    .scatter_to_all = torus_scatter,
    .recursive_halving = torus_halving,
    .folded_halving = torus_folded_halving,
    .halving_link_total = torus_halving_link_total,
    .bruck = torus_bruck,
    .double_tree = torus_double_tree,
    .in_network_all_reduce = NULL,
    .root_scatter = torus_root_scatter,
    .root_gather = torus_root_gather,
    .root_chain = torus_root_chain,
    .shift_load = torus_shift_load,
    .prices_spacing = true,
};

const net_topology net_topology_mesh = {
    .id = COMET_TOPO_MESH,
    .fabric = &grid_fabric,
    .ring_pass = mesh_ring_pass,
    .ring_schedule = mesh_ring_schedule,
    .ring_phases = mesh_ring_phases,
    .pairwise_exchange = mesh_pairwise,
    .scatter_to_all = mesh_scatter,
    .recursive_halving = mesh_halving,
    .folded_halving = mesh_folded_halving,
    .halving_link_total = mesh_halving_link_total,
    .bruck = mesh_bruck,
    .double_tree = mesh_double_tree,
    .in_network_all_reduce = NULL,
    .root_scatter = mesh_root_scatter,
    .root_gather = mesh_root_gather,
    .root_chain = mesh_root_chain,
    .shift_load = mesh_shift_load,
    .prices_spacing = true,
};
