/* Event-driven simulation of one collective on a multi-dimensional
 * network. The buffer is cut into chunks; each chunk runs a list of
 * phases, one per dimension (reduce-scatter up the dimensions, all-reduce
 * on the last, all-gather back down; or one all-to-all per dimension), and
 * each dimension works on at most `active_chunks` phases at once, in
 * arrival order. A phase costs its algorithm's latency terms, endpoint
 * delays and reduction memory passes (fixed) plus its bandwidth term; with
 * congestion the phases running on one dimension share its bandwidth
 * (processor sharing), without it each runs as if alone. A chain's phase
 * (a broadcast or reduce pipelined in pieces) frees its dimension once its
 * head has sent its pieces and drains beside the next chunk's; a
 * broadcast's scatter keeps its dimension until the chunk's all-gather
 * there is done. The baseline
 * sends every chunk through the dimensions in order; Themis gives each
 * chunk's largest phase to the dimension with the least work assigned so
 * far (Rashidi et al. 2022). All NPUs of a collective do the same work, so
 * one representative NPU is simulated, whatever the NPU count. */
#include "comet/simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comet/network.h"
#include "phases.h"

#define MAX_SPLITS 65536

void comet_sim_options_defaults(comet_sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->fidelity = COMET_SIM_UNAWARE;
    o->scheduler = COMET_SCHED_BASELINE;
    o->active_chunks = 1;
}

typedef struct job {
    int chunk;
    double fixed_until;   /* absolute time its fixed part ends */
    double remaining;     /* bandwidth seconds left (at full rate) */
    bool parked;          /* a kept phase done: the slot waits for the chunk's
                           * next phase on this dimension */
} job;

typedef struct dim_state {
    comet_link link;
    int running;
    job jobs[64];         /* running, at most active_chunks */
    int *queue;           /* waiting chunks, FIFO */
    int head, tail;
    double busy;
} dim_state;

typedef struct sim {
    const comet_sim_options *o;
    int m;
    comet_link links[COMET_MAX_DIMS];
    dim_state dims[COMET_MAX_DIMS];
    chunk *chunks;
    int64_t n_chunks, done;
    /* chunks past the held part of a chain's phase, their dimension free
     * for the next chunk, until their last pieces are through */
    int *draining;
    double *drained_at;
    int n_draining;
    double now;
    uint64_t events;
} sim;

static void start_jobs(sim *s, int d)
{
    dim_state *ds = &s->dims[d];
    while (ds->running < s->o->active_chunks && ds->head < ds->tail) {
        int c = ds->queue[ds->head++];
        const phase *p = &s->chunks[c].phases[s->chunks[c].next];
        ds->jobs[ds->running++] = (job){c, s->now + p->fixed, p->bw, false};
    }
}

static void enqueue(sim *s, int c)
{
    chunk *ch = &s->chunks[c];
    if (ch->next >= ch->n_phases) {
        s->done++;
        return;
    }
    const phase *p = &ch->phases[ch->next];
    dim_state *ds = &s->dims[p->dim];
    for (int j = 0; j < ds->running; j++)
        if (ds->jobs[j].parked && ds->jobs[j].chunk == c) {
            /* the slot its kept phase held: it runs there at once */
            ds->jobs[j] = (job){c, s->now + p->fixed, p->bw, false};
            return;
        }
    ds->queue[ds->tail++] = c;
}

/* Rate at which a job's bandwidth work proceeds on dimension d. */
static double rate(const sim *s, int d)
{
    if (s->o->fidelity == COMET_SIM_UNAWARE)
        return 1.0;
    int sharing = 0;
    for (int j = 0; j < s->dims[d].running; j++)
        sharing += s->dims[d].jobs[j].fixed_until <= s->now ? 1 : 0;
    return sharing > 0 ? 1.0 / sharing : 1.0;
}

/* Whether time t has come (tolerance for rounding). */
static bool reached(const sim *s, double t)
{
    return t <= s->now * (1.0 + 1e-15) + 1e-18;
}

/* Advance to the next completion (or end of a fixed part); false when
 * nothing is running. */
static bool step(sim *s)
{
    double next = INFINITY;
    for (int d = 0; d < s->m; d++) {
        double r = rate(s, d);
        for (int j = 0; j < s->dims[d].running; j++) {
            const job *jb = &s->dims[d].jobs[j];
            double t = jb->fixed_until > s->now ? jb->fixed_until : s->now + jb->remaining / r;
            next = t < next ? t : next;
        }
    }
    for (int i = 0; i < s->n_draining; i++)
        next = s->drained_at[i] < next ? s->drained_at[i] : next;
    if (next == INFINITY)
        return false;
    double dt = next - s->now;
    for (int d = 0; d < s->m; d++) {
        double r = rate(s, d);
        dim_state *ds = &s->dims[d];
        if (ds->running > 0)
            ds->busy += dt;
        for (int j = 0; j < ds->running; j++)
            if (ds->jobs[j].fixed_until <= s->now)
                ds->jobs[j].remaining -= dt * r;
    }
    s->now = next;
    s->events++;
    /* finish what is done (tolerance for rounding), in chunk order */
    for (int d = 0; d < s->m; d++) {
        dim_state *ds = &s->dims[d];
        int kept = 0;
        int finished[64], n_finished = 0;
        for (int j = 0; j < ds->running; j++) {
            job *jb = &ds->jobs[j];
            if (reached(s, jb->fixed_until) && jb->remaining <= 1e-15 * (1.0 + s->now)) {
                finished[n_finished++] = jb->chunk;
                const chunk *ch = &s->chunks[jb->chunk];
                if (ch->phases[ch->next].keep_to > 0)
                    ds->jobs[kept++] = (job){jb->chunk, (double)INFINITY, 0.0, true};
            } else {
                ds->jobs[kept++] = *jb;
            }
        }
        ds->running = kept;
        for (int f = 0; f < n_finished; f++) {
            chunk *ch = &s->chunks[finished[f]];
            if (ch->phases[ch->next].tail > 0.0) {
                s->draining[s->n_draining] = finished[f];
                s->drained_at[s->n_draining++] = s->now + ch->phases[ch->next].tail;
                continue;
            }
            ch->next++;
            enqueue(s, finished[f]);
        }
    }
    int still = 0;
    for (int i = 0; i < s->n_draining; i++) {
        if (reached(s, s->drained_at[i])) {
            s->chunks[s->draining[i]].next++;
            enqueue(s, s->draining[i]);
        } else {
            s->draining[still] = s->draining[i];
            s->drained_at[still++] = s->drained_at[i];
        }
    }
    s->n_draining = still;
    for (int d = 0; d < s->m; d++)
        start_jobs(s, d);
    return true;
}

comet_status comet_sim_collective(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                                  comet_collective c, double bytes, const comet_sim_options *o,
                                  comet_sim_collective_result *out, comet_error *err)
{
    memset(out, 0, sizeof *out);
    if (c <= COMET_COLL_NONE || c >= COMET_COLL_COUNT)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--collective",
                               "unknown collective");
    if (!(bytes > 0.0) || !isfinite(bytes))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--size", "must be positive");
    if (o->active_chunks < 1 || o->active_chunks > 64)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--active-chunks",
                               "must be from 1 to 64, got %d", o->active_chunks);
    int64_t splits = o->splits > 0 ? o->splits : comet_collective_chunks_for(sys, span, c, bytes);
    if (splits > MAX_SPLITS)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--splits",
                               "must be from 1 to %d, got %lld", MAX_SPLITS, (long long)splits);
    sim s;
    memset(&s, 0, sizeof s);
    s.o = o;
    int map[COMET_MAX_DIMS];
    s.m = comet_span_links(sys, span, s.links, map);
    for (int i = 0; i < s.m; i++) {
        s.dims[i].link = s.links[i];
        if (!(s.links[i].bandwidth > 0.0))
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                                   "network dimension %s has no bandwidth",
                                   sys->dims[map[i]].name);
    }
    if (s.m == 0)
        return COMET_OK; /* one NPU: nothing to do */
    s.n_chunks = splits;
    s.chunks = calloc((size_t)splits, sizeof *s.chunks);
    s.draining = calloc((size_t)splits, sizeof *s.draining);
    s.drained_at = calloc((size_t)splits, sizeof *s.drained_at);
    bool ok = s.chunks != NULL && s.draining != NULL && s.drained_at != NULL;
    for (int d = 0; d < s.m && ok; d++)
        ok = (s.dims[d].queue = calloc(2 * (size_t)splits, sizeof(int))) != NULL; /* RS and AG */
    if (!ok) {
        for (int d = 0; d < s.m; d++)
            free(s.dims[d].queue);
        free(s.chunks);
        free(s.draining);
        free(s.drained_at);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    int order[COMET_MAX_DIMS];
    double load[COMET_MAX_DIMS] = {0};
    for (int64_t k = 0; k < splits; k++) {
        sim_next_chunk(o, o->scheduler == COMET_SCHED_THEMIS ? load : NULL, s.links, s.m, c,
                       bytes / (double)splits, 0.0, order, &s.chunks[k]);
        enqueue(&s, (int)k);
    }
    for (int d = 0; d < s.m; d++)
        start_jobs(&s, d);
    while (step(&s))
        ;
    out->time = s.now;
    out->events = s.events;
    out->chunks = (uint64_t)splits;
    for (int d = 0; d < s.m; d++) {
        out->busy[map[d]] = s.dims[d].busy;
        out->utilization[map[d]] = s.now > 0 ? s.dims[d].busy / s.now : 0.0;
        free(s.dims[d].queue);
    }
    free(s.chunks);
    free(s.draining);
    free(s.drained_at);
    if (s.done != s.n_chunks)
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "simulation stopped with %lld of %lld chunks done",
                               (long long)s.done, (long long)s.n_chunks);
    return COMET_OK;
}

int comet_sim_themis_orders(const comet_system *sys, const int64_t span[COMET_MAX_DIMS],
                            comet_collective c, double bytes, int64_t chunks, uint8_t *order)
{
    double load[COMET_MAX_DIMS] = {0};
    comet_sim_options o;
    comet_sim_options_defaults(&o);
    return sim_themis_rows(&o, sys, span, c, bytes, chunks, load, order);
}
