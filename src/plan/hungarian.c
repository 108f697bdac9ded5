/* Minimum-cost assignment: the Hungarian (Munkres) method, and its form
 * for workers that each take many neurons. Why both: RePurpose places
 * neurons on workers by solving an assignment problem (docs/partition.md);
 * written plainly on an n x n matrix it is O(n^3), 7e10 steps for a layer
 * of 4,096 neurons. Each worker's slots share one column of costs, so the
 * same shortest-augmenting-path method run over the workers instead of
 * their slots finds the same optimum in O(n^2 workers). A test checks the
 * two agree, and the plain one against brute force. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* Shortest augmenting paths with row and column potentials (the form of
 * Jonker-Volgenant and of the usual textbook Hungarian), 1-based inside. */
double comet_hungarian(int n, int m, const double *cost, int *row_to_col)
{
    if (n < 0 || n > m)
        return NAN;
    if (n == 0)
        return 0;
    size_t cols = (size_t)m + 1;
    double *u = calloc((size_t)n + 1, sizeof *u);
    double *v = calloc(cols, sizeof *v);
    double *minv = malloc(cols * sizeof *minv);
    int *p = calloc(cols, sizeof *p);
    int *way = calloc(cols, sizeof *way);
    char *used = malloc(cols);
    double total = NAN;
    if (!u || !v || !minv || !p || !way || !used)
        goto done;
    for (int i = 1; i <= n; i++) {
        p[0] = i;
        int j0 = 0;
        for (int j = 0; j <= m; j++) {
            minv[j] = INFINITY;
            used[j] = 0;
        }
        do {
            used[j0] = 1;
            int i0 = p[j0], j1 = 0;
            double delta = INFINITY;
            for (int j = 1; j <= m; j++)
                if (!used[j]) {
                    double cur = cost[(size_t)(i0 - 1) * (size_t)m + (size_t)(j - 1)] - u[i0] - v[j];
                    if (cur < minv[j]) {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if (minv[j] < delta) {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            if (j1 == 0) /* costs not finite: no column is reachable */
                goto done;
            for (int j = 0; j <= m; j++)
                if (used[j]) {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else
                    minv[j] -= delta;
            j0 = j1;
        } while (p[j0] != 0);
        do {
            int j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
        } while (j0);
    }
    total = 0;
    for (int j = 1; j <= m; j++)
        if (p[j]) {
            row_to_col[p[j] - 1] = j - 1;
            total += cost[(size_t)(p[j] - 1) * (size_t)m + (size_t)(j - 1)];
        }
done:
    free(u);
    free(v);
    free(minv);
    free(p);
    free(way);
    free(used);
    return total;
}

/* Rows join one at a time. The new row reaches group g directly at its
 * cost, or through a chain of moves: a row of group a moving to group b
 * costs cost[b] - cost[a] of that row, the cheapest such row for each
 * (a, b). The shortest such path (Bellman-Ford over the groups: the moves
 * form no negative cycle while the assignment so far is optimal) ending
 * at a group with a free slot is applied: the same augmenting step the
 * Hungarian method takes on the slot matrix. The table of cheapest moves
 * is kept up to date as rows join and move; a group's row of it is
 * rebuilt only when a row that was its cheapest leaves it. */
typedef struct balanced_state {
    int64_t n;
    int groups;
    const double *cost;
    double *move;        /* groups x groups: cheapest move from a to b */
    int64_t *move_row;   /* ... its row, -1: none */
    int64_t *members;    /* each group's rows, in slots from its offset */
    int64_t *offset;     /* groups: where each group's slots start */
    int64_t *load;       /* groups: rows in each */
    int64_t *slot;       /* n: each row's slot in members */
    char *stale;         /* groups: its row of the table needs a rebuild */
} balanced_state;

/* Row i now in group a: the moves from a it offers. */
static void offer_moves(balanced_state *s, int64_t i, int a)
{
    const double *ci = s->cost + (size_t)i * (size_t)s->groups;
    double *ma = s->move + (size_t)a * (size_t)s->groups;
    int64_t *mr = s->move_row + (size_t)a * (size_t)s->groups;
    for (int b = 0; b < s->groups; b++) {
        double d = ci[b] - ci[a];
        if (b != a && (mr[b] < 0 || d < ma[b])) {
            ma[b] = d;
            mr[b] = i;
        }
    }
}

static void join(balanced_state *s, int64_t i, int a, int *row_to_group)
{
    row_to_group[i] = a;
    s->slot[i] = s->offset[a] + s->load[a];
    s->members[s->slot[i]] = i;
    s->load[a]++;
    if (!s->stale[a])
        offer_moves(s, i, a);
}

static void leave(balanced_state *s, int64_t i, int a)
{
    int64_t last = s->members[s->offset[a] + s->load[a] - 1];
    s->members[s->slot[i]] = last;
    s->slot[last] = s->slot[i];
    s->load[a]--;
    for (int b = 0; b < s->groups && !s->stale[a]; b++)
        if (s->move_row[(size_t)a * (size_t)s->groups + (size_t)b] == i)
            s->stale[a] = 1;
}

static void rebuild(balanced_state *s, int a)
{
    for (int b = 0; b < s->groups; b++) {
        s->move[(size_t)a * (size_t)s->groups + (size_t)b] = INFINITY;
        s->move_row[(size_t)a * (size_t)s->groups + (size_t)b] = -1;
    }
    for (int64_t k = 0; k < s->load[a]; k++)
        offer_moves(s, s->members[s->offset[a] + k], a);
    s->stale[a] = 0;
}

double comet_assign_balanced(int64_t n, int groups, const double *cost, const int64_t *capacity,
                             int *row_to_group)
{
    if (n < 0 || groups < 1)
        return NAN;
    int64_t slots = 0;
    for (int g = 0; g < groups; g++) {
        if (capacity[g] < 0)
            return NAN;
        slots += capacity[g];
    }
    if (slots < n)
        return NAN;
    size_t gg = (size_t)groups * (size_t)groups;
    balanced_state s = {.n = n, .groups = groups, .cost = cost};
    s.move = malloc(gg * sizeof *s.move);
    s.move_row = malloc(gg * sizeof *s.move_row);
    s.members = malloc((size_t)(slots ? slots : 1) * sizeof *s.members);
    s.offset = malloc((size_t)groups * sizeof *s.offset);
    s.load = calloc((size_t)groups, sizeof *s.load);
    s.slot = malloc((size_t)(n ? n : 1) * sizeof *s.slot);
    s.stale = calloc((size_t)groups, 1);
    double *dist = malloc((size_t)groups * sizeof *dist);
    int *pred = malloc((size_t)groups * sizeof *pred);
    double total = NAN;
    if (!s.move || !s.move_row || !s.members || !s.offset || !s.load || !s.slot || !s.stale ||
        !dist || !pred)
        goto done;
    for (size_t k = 0; k < gg; k++) {
        s.move[k] = INFINITY;
        s.move_row[k] = -1;
    }
    int64_t at = 0;
    for (int g = 0; g < groups; at += capacity[g], g++)
        s.offset[g] = at;
    for (int64_t r = 0; r < n; r++) {
        const double *cr = cost + (size_t)r * (size_t)groups;
        /* a free group at the row's own lowest cost needs no moves */
        int best = -1;
        for (int g = 0; g < groups; g++)
            if (best < 0 || cr[g] < cr[best])
                best = g;
        if (s.load[best] < capacity[best]) {
            join(&s, r, best, row_to_group);
            continue;
        }
        for (int g = 0; g < groups; g++)
            if (s.stale[g])
                rebuild(&s, g);
        for (int g = 0; g < groups; g++) {
            dist[g] = cr[g];
            pred[g] = -1;
        }
        for (int pass = 0; pass < groups; pass++) {
            bool changed = false;
            for (int a = 0; a < groups; a++)
                for (int b = 0; b < groups; b++) {
                    if (a == b || s.move_row[(size_t)a * (size_t)groups + (size_t)b] < 0)
                        continue;
                    double d = dist[a] + s.move[(size_t)a * (size_t)groups + (size_t)b];
                    /* a strict gain beyond rounding, so no cycle of ties forms */
                    if (d < dist[b] - 1e-12 * (fabs(dist[b]) + 1)) {
                        dist[b] = d;
                        pred[b] = a;
                        changed = true;
                    }
                }
            if (!changed)
                break;
        }
        int end = -1;
        for (int g = 0; g < groups; g++)
            if (s.load[g] < capacity[g] && (end < 0 || dist[g] < dist[end]))
                end = g;
        if (end < 0 || !isfinite(dist[end]))
            goto done;
        /* the moves along the path, read before any of them changes the table */
        int64_t path_row[COMET_PARTITION_MAX_WORKERS + 1];
        int path_from[COMET_PARTITION_MAX_WORKERS + 1], path_to[COMET_PARTITION_MAX_WORKERS + 1];
        int steps = 0, b = end;
        while (pred[b] >= 0) {
            if (steps >= groups || steps > COMET_PARTITION_MAX_WORKERS)
                goto done; /* a cycle from rounding: should not happen */
            int a = pred[b];
            path_row[steps] = s.move_row[(size_t)a * (size_t)groups + (size_t)b];
            path_from[steps] = a;
            path_to[steps++] = b;
            b = a;
        }
        for (int k = 0; k < steps; k++) {
            leave(&s, path_row[k], path_from[k]);
            join(&s, path_row[k], path_to[k], row_to_group);
        }
        join(&s, r, b, row_to_group);
    }
    total = 0;
    for (int64_t r = 0; r < n; r++)
        total += cost[(size_t)r * (size_t)groups + (size_t)row_to_group[r]];
done:
    free(s.move);
    free(s.move_row);
    free(s.members);
    free(s.offset);
    free(s.load);
    free(s.slot);
    free(s.stale);
    free(dist);
    free(pred);
    return total;
}
