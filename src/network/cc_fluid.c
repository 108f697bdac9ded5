/* The fluid engine of congestion control (docs/roce.md). Where a network
 * dimension runs a scheme other than none, the flow engine (flows.c)
 * hands the running flows here instead of sharing links max-min, through
 * the stepper interface it owns (flows_impl.h; cc_fluid.h names this
 * member, for whoever builds a flow engine): rates
 * and queues advance in small fixed time steps (cut short where a flow is
 * projected to finish or a waiting one starts, so completions land on
 * their time), and the same flows, waiting queue and callbacks carry on.
 *
 * What one step of h seconds does, why this way:
 * - each sender's scheme reads its path's signals of the step before (ECN
 *   marking fraction, HPCC's telemetry) and sets its injection rate;
 * - every flow keeps, per hop, the bytes waiting in the egress queue of
 *   that hop's link (a per-flow FIFO share: a fluid FIFO serves each flow
 *   in proportion to what it holds and brings). A link serves h times its
 *   bandwidth, split in proportion to each flow's weight (its backlog
 *   there plus its arrival rate of the step before times h); bytes go
 *   through a whole path in one step (cut-through), so an idle network
 *   adds no delay and a lone flow runs at its port's rate exactly;
 * - a paused link serves nothing (PFC's head-of-line blocking: every flow
 *   through it stalls, whatever its egress), nor does a link whose next
 *   queue is full (the buffer), and the bytes stay queued upstream;
 * - afterwards the egress queues and per-ingress counters are summed from
 *   the flows' backlogs, an ingress link is PAUSEd past xoff and RESUMEd
 *   under xon, and each queue's ECN marking probability is set (0 to
 *   pmax between kmin and kmax, 1 past kmax).
 * If a step moves nothing while links are paused, a greatest fixpoint
 * finds the links that can never resume (each held past xon by bytes
 * waiting behind other such links): a PFC deadlock, named with its cycle
 * of links and the flows caught in it, never a hang. A run past the
 * scheme's max_time is refused as well. */
#include "cc_fluid.h"

#include "cc.h"
#include "flows_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A quiet fabric (no queue, no pause, every sender's rate steady) moves
 * in steps this many times longer: nothing in it changes until a flow
 * ends or starts, which end a step anyway. */
#define QUIET_STEPS 1000.0

/* A flow's fluid state, by flow id. */
typedef struct ccf_flow {
    cc_state st;
    const cc_scheme *cs;
    const comet_cc_params *p;
    double size, sent, delivered;
    double last_out, last_h;        /* delivered in the last step, and its length */
    double born;                    /* when its message was handed over (for its FCT) */
    double *heap;                   /* backlog and arrival rate per hop, past INLINE_PATH */
    double inl[2 * INLINE_PATH];
} ccf_flow;

/* A link's fluid state. */
typedef struct ccf_link {
    double q;                       /* its egress queue, bytes */
    double ing;                     /* bytes it brought that wait at the next hop (PFC's counter) */
    double w, tx;                   /* this step: the weight offered it, the bytes it sent */
    double mark;                    /* ECN marking probability */
    double pause_time, peak, qint;  /* figures: time paused, peak queue, queue times time */
    int32_t n;                      /* flows through it this step */
    uint32_t stamp;                 /* the step that last put it in hot_next */
    uint8_t paused, full, ever;     /* PAUSEd, its queue at the buffer, ever PAUSEd */
} ccf_link;

typedef struct ccf_engine {
    const comet_fabric *f;
    double dt, max_time;
    ccf_flow *fl;
    int64_t cap;
    ccf_link *link;                 /* per link */
    int32_t *hot, *hot_next;
    int64_t n_hot;
    uint32_t now_stamp;
    /* the last step changed nothing: no queue, no pause, no sender's rate
     * moved; the next may be long (QUIET_STEPS steps) */
    bool quiet;
    /* figures */
    uint64_t steps;
    int64_t pauses, done;
    double fct_sum, fct_min, fct_max;
} ccf_engine;

static const comet_cc_params *link_params(const ccf_engine *c, int64_t l)
{
    return &c->f->dims[c->f->dim_of[l]].cc;
}

static bool lossless(const ccf_engine *c, int64_t l)
{
    return cc_scheme_of(link_params(c, l)->scheme)->fluid;
}

/* A sprayed Clos merges a switch's equal links into one of their summed
 * bandwidth: its thresholds are the ports' summed. */
static double link_scale(const ccf_engine *c, int64_t l)
{
    double bw = c->f->dims[c->f->dim_of[l]].bw;
    double k = bw > 0.0 ? floor(c->f->cap[l] / bw + 0.5) : 1.0;
    return k > 1.0 ? k : 1.0;
}

static double *hops_of(ccf_flow *cf, int len)
{
    return len > INLINE_PATH ? cf->heap : cf->inl;
}

static void ccf_free(void *state)
{
    ccf_engine *c = state;
    if (!c)
        return;
    for (int64_t i = 0; i < c->cap; i++)
        free(c->fl[i].heap);
    free(c->fl);
    free(c->link);
    free(c->hot);
    free(c->hot_next);
    free(c);
}

static void *ccf_new(const comet_fabric *f)
{
    ccf_engine *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->f = f;
    c->dt = INFINITY;
    c->max_time = INFINITY;
    for (int d = 0; d < f->n_dims; d++) {
        const comet_cc_params *p = &f->dims[d].cc;
        if (!cc_scheme_of(p->scheme)->fluid)
            continue;
        if (p->step < c->dt)
            c->dt = p->step;
        if (p->max_time < c->max_time)
            c->max_time = p->max_time;
    }
    size_t L = (size_t)(f->n_links > 0 ? f->n_links : 1);
    c->link = calloc(L, sizeof *c->link);
    c->hot = calloc(L, sizeof *c->hot);
    c->hot_next = calloc(L, sizeof *c->hot_next);
    if (!c->link || !c->hot || !c->hot_next || !isfinite(c->dt)) {
        ccf_free(c);
        return NULL;
    }
    c->fct_min = INFINITY;
    return c;
}

static int ccf_start(fl_engine *e, int64_t id)
{
    ccf_engine *c = e->fluid_state;
    if (id >= c->cap) {
        int64_t cap = c->cap ? c->cap : 1024;
        while (cap <= id)
            cap *= 2;
        ccf_flow *x = realloc(c->fl, (size_t)cap * sizeof *x);
        if (!x)
            return -1;
        memset(x + c->cap, 0, (size_t)(cap - c->cap) * sizeof *x);
        c->fl = x;
        c->cap = cap;
    }
    fl_flow *w = &e->flows[id];
    ccf_flow *cf = &c->fl[id];
    int len = w->len;
    free(cf->heap);
    cf->heap = NULL;
    if (len > INLINE_PATH && !(cf->heap = calloc(2 * (size_t)len, sizeof *cf->heap)))
        return -1;
    memset(cf->inl, 0, sizeof cf->inl);
    const int32_t *path = path_of(w);
    double lat = 0.0;
    const comet_cc_params *p = NULL;
    for (int i = 0; i < len; i++) {
        lat += c->f->lat[path[i]];
        if (lossless(c, path[i]))
            p = link_params(c, path[i]); /* the outermost controlled dimension's scheme */
    }
    cf->cs = p ? cc_scheme_of(p->scheme) : &cc_scheme_none;
    cf->p = p ? p : link_params(c, path[0]);
    cf->size = w->rem;
    cf->sent = cf->delivered = cf->last_out = cf->last_h = 0.0;
    cf->born = w->start_at - lat;
    cf->st = (cc_state){.line = c->f->cap[path[0]]};
    double rtt = 2.0 * lat;
    cf->st.rtt = rtt > 4.0 * c->dt ? rtt : 4.0 * c->dt;
    cf->cs->start(cf->p, &cf->st);
    c->quiet = false;
    return 0;
}

static double ccf_queue(const void *state, int64_t link)
{
    const ccf_engine *c = state;
    return c->link[link].q;
}

static bool ccf_paused(const void *state, int64_t link)
{
    const ccf_engine *c = state;
    return c->link[link].paused != 0;
}

/* ECN marking probability of a queue of q bytes (RED-like, as DCQCN's
 * switches mark). */
static double marking(const comet_cc_params *p, double q, double scale)
{
    double lo = p->kmin * scale, hi = p->kmax * scale;
    if (q <= lo)
        return 0.0;
    if (q > hi)
        return 1.0;
    return hi > lo ? p->pmax * (q - lo) / (hi - lo) : p->pmax;
}

/* Each sender's rate from its path's signals of the step before; false
 * unless every one stayed at its line rate (and none is clocked per RTT). */
static bool senders(fl_engine *e, double h)
{
    bool steady = true;
    ccf_engine *c = e->fluid_state;
    for (int64_t k = 0; k < e->n_active; k++) {
        int64_t id = e->active[k];
        fl_flow *w = &e->flows[id];
        ccf_flow *cf = &c->fl[id];
        const int32_t *path = path_of(w);
        cc_signal sig = {0.0, 0.0};
        if (cf->cs->ecn) {
            double keep = 1.0;
            for (int i = 0; i < w->len; i++)
                keep *= 1.0 - c->link[path[i]].mark;
            sig.p_mark = 1.0 - keep;
        }
        if (cf->cs->telemetry) {
            double t = cf->st.rtt;
            for (int i = 0; i < w->len; i++) {
                int32_t l = path[i];
                double b = c->f->cap[l];
                double u = c->link[l].q / (b * t) + e->load[l] / b;
                if (u > sig.u_max)
                    sig.u_max = u;
            }
        }
        double before = cf->st.rate;
        cf->cs->update(cf->p, &sig, h, &cf->st);
        steady &= !cf->cs->clocked && fabs(cf->st.rate - before) <= 1e-12 * before &&
                  cf->st.rate >= cf->st.line * (1.0 - 1e-12);
    }
    return steady;
}

/* Flow cf's weight at hop i on its link: what it offers there this step. */
static double weight(const ccf_flow *cf, const double *hb, int len, int i, double h)
{
    if (i == 0) {
        double left = cf->size - cf->sent;
        double offer = cf->st.rate * h;
        return offer < left ? offer : left;
    }
    return hb[i] + hb[len + i] * h;
}

static void add_hot(ccf_engine *c, int32_t l, int64_t *n)
{
    if (c->link[l].stamp != c->now_stamp) {
        c->link[l].stamp = c->now_stamp;
        c->hot_next[(*n)++] = l;
        c->link[l].w = c->link[l].tx = 0.0;
        c->link[l].n = 0;
    }
}

static comet_status deadlock(fl_engine *e, comet_error *err);

/* One fluid step of h > 0 seconds (the clock moves after it). */
static comet_status integrate(fl_engine *e, double h, bool check, comet_error *err)
{
    ccf_engine *c = e->fluid_state;
    c->steps++;
    bool steady = senders(e, h);
    /* the links in use this step and the ones still holding a queue or a
     * pause from the step before, each once */
    if (++c->now_stamp == 0) {
        for (int64_t l = 0; l < c->f->n_links; l++)
            c->link[l].stamp = 0;
        c->now_stamp = 1;
    }
    int64_t n_next = 0;
    for (int64_t k = 0; k < c->n_hot; k++)
        add_hot(c, c->hot[k], &n_next);
    for (int64_t k = 0; k < e->n_active; k++) {
        int64_t id = e->active[k];
        fl_flow *w = &e->flows[id];
        ccf_flow *cf = &c->fl[id];
        const int32_t *path = path_of(w);
        double *hb = hops_of(cf, w->len);
        for (int i = 0; i < w->len; i++) {
            add_hot(c, path[i], &n_next);
            c->link[path[i]].w += weight(cf, hb, w->len, i, h);
            c->link[path[i]].n++;
        }
    }
    /* every flow hop by hop: what each link serves of it */
    double moved = 0.0;
    for (int64_t k = 0; k < e->n_active; k++) {
        int64_t id = e->active[k];
        fl_flow *w = &e->flows[id];
        ccf_flow *cf = &c->fl[id];
        const int32_t *path = path_of(w);
        int len = w->len;
        double *hb = hops_of(cf, len);
        double in = 0.0;
        for (int i = 0; i < len; i++) {
            int32_t l = path[i];
            double cap = c->f->cap[l] * h;
            double wt = weight(cf, hb, len, i, h);
            double avail = i == 0 ? wt : hb[i] + in;
            double grant;
            if (c->link[l].paused || (i + 1 < len && c->link[path[i + 1]].full))
                grant = 0.0;
            else if (c->link[l].w > cap)
                grant = cap * wt / c->link[l].w;
            else
                grant = wt + (cap - c->link[l].w) / c->link[l].n;
            double out = avail < grant ? avail : grant;
            if (out < 0.0)
                out = 0.0;
            if (i == 0) {
                cf->sent += out;
            } else {
                hb[i] = avail - out;
                hb[len + i] = in / h;
            }
            c->link[l].tx += out;
            in = out;
        }
        cf->delivered += in;
        cf->last_out = in;
        cf->last_h = h;
        moved += in;
    }
    /* queues and ingress counters from the backlogs */
    for (int64_t k = 0; k < n_next; k++) {
        int32_t l = c->hot_next[k];
        c->link[l].q = c->link[l].ing = 0.0;
    }
    double held = 0.0;
    for (int64_t k = 0; k < e->n_active; k++) {
        int64_t id = e->active[k];
        fl_flow *w = &e->flows[id];
        const int32_t *path = path_of(w);
        double *hb = hops_of(&c->fl[id], w->len);
        for (int i = 1; i < w->len; i++) {
            c->link[path[i]].q += hb[i];
            c->link[path[i - 1]].ing += hb[i];
            held += hb[i];
        }
    }
    bool any_paused = false, any_queue = false;
    int64_t n_hot = 0;
    for (int64_t k = 0; k < n_next; k++) {
        int32_t l = c->hot_next[k];
        moved += c->link[l].tx;
        e->load[l] = c->link[l].tx / h;
        if (c->link[l].paused)
            c->link[l].pause_time += h;
        if (c->link[l].q > c->link[l].peak)
            c->link[l].peak = c->link[l].q;
        c->link[l].qint += c->link[l].q * h;
        if (lossless(c, l)) {
            const comet_cc_params *p = link_params(c, l);
            double s = link_scale(c, l);
            if (!c->link[l].paused && c->link[l].ing >= p->xoff * s) {
                c->link[l].paused = 1;
                c->link[l].ever = 1;
                c->pauses++;
            } else if (c->link[l].paused && c->link[l].ing <= p->xon * s) {
                c->link[l].paused = 0;
            }
            c->link[l].full = c->link[l].q >= p->buffer * s;
            c->link[l].mark = marking(p, c->link[l].q, s);
        }
        any_paused |= c->link[l].paused != 0;
        any_queue |= c->link[l].q > 0.0;
        if (c->link[l].q > 0.0 || c->link[l].ing > 0.0 || c->link[l].paused || c->link[l].tx > 0.0)
            c->hot[n_hot++] = l;
    }
    c->n_hot = n_hot;
    c->quiet = steady && !any_paused && !any_queue;
    if (check && !(moved > 0.0) && any_paused && held > 0.0)
        return deadlock(e, err);
    return COMET_OK;
}

/* Bytes left to deliver below which a flow has ended. */
static bool delivered_all(const ccf_flow *cf)
{
    return cf->size - cf->delivered <= 1e-9 * cf->size + 1e-6;
}

static comet_status ccf_next(fl_engine *e, double *at, comet_error *err)
{
    ccf_engine *c = e->fluid_state;
    *at = INFINITY;
    if (fl_record(e) != 0)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    const tq_item *started = tq_peek(&e->wait);
    double next = started ? started->at : INFINITY;
    if (e->n_active > 0) {
        if (e->now >= c->max_time)
            return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "congestion_control.max_time",
                                   "the simulated time passed max_time (%g s) with %lld flows "
                                   "still running: raise it, or look for a stalled fabric",
                                   c->max_time, (long long)e->n_active);
        double h = c->quiet ? QUIET_STEPS * c->dt : c->dt;
        for (int64_t k = 0; k < e->n_active && h > 0.0; k++) {
            const ccf_flow *cf = &c->fl[e->active[k]];
            if (delivered_all(cf))
                h = 0.0;
            else if (cf->last_out > 0.0 && cf->last_h > 0.0) {
                double left = (cf->size - cf->delivered) / (cf->last_out / cf->last_h);
                if (left < h)
                    h = left;
            }
        }
        if (e->now + h > c->max_time && c->max_time > e->now)
            h = c->max_time - e->now;
        if (e->now + h < next)
            next = e->now + h;
    }
    if (isfinite(next))
        *at = next > e->now ? next : e->now;
    return COMET_OK;
}

static void ccf_advance(fl_engine *e, double t)
{
    if (t > e->now && e->n_active > 0)
        (void)integrate(e, t - e->now, false, NULL);
}

static comet_status ccf_step(fl_engine *e, double to, int64_t *n_ended, comet_error *err)
{
    ccf_engine *c = e->fluid_state;
    if (to > e->now && e->n_active > 0) {
        comet_status st = integrate(e, to - e->now, true, err);
        if (st)
            return st;
    }
    if (to > e->now)
        e->now = to;
    /* from the back: a finished flow's slot takes the last one, seen already */
    for (int64_t k = e->n_active - 1; k >= 0; k--) {
        int64_t id = e->active[k];
        ccf_flow *cf = &c->fl[id];
        if (!delivered_all(cf))
            continue;
        double fct = e->now - cf->born;
        c->done++;
        c->fct_sum += fct;
        if (fct < c->fct_min)
            c->fct_min = fct;
        if (fct > c->fct_max)
            c->fct_max = fct;
        fl_flow *w = &e->flows[id];
        w->rem = 0.0;
        w->t0 = e->now;
        e->ended[(*n_ended)++] = (ended_flow){id, w->tag, w->owner};
        fl_finish(e, id);
    }
    return COMET_OK;
}

static void ccf_stats(const void *state, double now, comet_cc_stats *out)
{
    const ccf_engine *c = state;
    memset(out, 0, sizeof *out);
    out->fluid = true;
    out->steps = c->steps;
    out->peak_queue_link = out->max_pause_link = -1;
    for (int64_t l = 0; l < c->f->n_links; l++) {
        if (c->link[l].peak > out->peak_queue) {
            out->peak_queue = c->link[l].peak;
            out->peak_queue_link = l;
        }
        if (now > 0.0 && c->link[l].qint / now > out->mean_queue)
            out->mean_queue = c->link[l].qint / now;
        out->pause_time += c->link[l].pause_time;
        if (c->link[l].pause_time > out->max_pause) {
            out->max_pause = c->link[l].pause_time;
            out->max_pause_link = l;
        }
        out->paused_links += c->link[l].ever;
    }
    out->pauses = c->pauses;
    out->flows_done = c->done;
    if (c->done > 0) {
        out->fct_min = c->fct_min;
        out->fct_max = c->fct_max;
        out->fct_mean = c->fct_sum / (double)c->done;
    }
}

/* ---- PFC deadlock ---------------------------------------------------------------- */


/* The links that can never resume: start from every paused link and drop
 * one whose counter would fall to xon once the bytes it holds behind
 * links outside the set drained, until none drops. Each link left holds
 * bytes behind another one left, so they form cycles: the first found is
 * named, with the flows that wait on it. */
static comet_status deadlock(fl_engine *e, comet_error *err)
{
    ccf_engine *c = e->fluid_state;
    int64_t n = c->n_hot;
    uint8_t *in = calloc((size_t)c->f->n_links, 1);
    double *drain = calloc((size_t)c->f->n_links, sizeof *drain);
    int32_t *next = malloc((size_t)c->f->n_links * sizeof *next);
    double *best = calloc((size_t)c->f->n_links, sizeof *best);
    if (!in || !drain || !next || !best) {
        free(in);
        free(drain);
        free(next);
        free(best);
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    int64_t left = 0;
    for (int64_t k = 0; k < n; k++)
        if (c->link[c->hot[k]].paused) {
            in[c->hot[k]] = 1;
            left++;
        }
    for (bool changed = true; changed && left > 0;) {
        changed = false;
        for (int64_t k = 0; k < n; k++)
            drain[c->hot[k]] = 0.0;
        for (int64_t a = 0; a < e->n_active; a++) {
            int64_t id = e->active[a];
            fl_flow *w = &e->flows[id];
            const int32_t *path = path_of(w);
            double *hb = hops_of(&c->fl[id], w->len);
            for (int i = 1; i < w->len; i++)
                if (in[path[i - 1]] && !in[path[i]])
                    drain[path[i - 1]] += hb[i];
        }
        for (int64_t k = 0; k < n; k++) {
            int32_t l = c->hot[k];
            if (in[l] && c->link[l].ing - drain[l] <= link_params(c, l)->xon * link_scale(c, l)) {
                in[l] = 0;
                left--;
                changed = true;
            }
        }
    }
    if (left == 0) {
        free(in);
        free(drain);
        free(next);
        free(best);
        return COMET_OK; /* a stall that will clear */
    }
    /* each stuck link's heaviest wait on another stuck link */
    for (int64_t k = 0; k < n; k++)
        next[c->hot[k]] = -1;
    for (int64_t a = 0; a < e->n_active; a++) {
        int64_t id = e->active[a];
        fl_flow *w = &e->flows[id];
        const int32_t *path = path_of(w);
        double *hb = hops_of(&c->fl[id], w->len);
        for (int i = 1; i < w->len; i++) {
            int32_t u = path[i - 1], v = path[i];
            if (in[u] && in[v] && hb[i] > best[u]) {
                best[u] = hb[i];
                next[u] = v;
            }
        }
    }
    int32_t start = -1;
    for (int64_t k = 0; k < n && start < 0; k++)
        if (in[c->hot[k]])
            start = c->hot[k];
    /* walk until a link repeats: the cycle starts there */
    for (int64_t s = 0; s < left && next[start] >= 0; s++)
        start = next[start];
    char links[600] = "", flows[600] = "", name[96];
    size_t at = 0;
    int count = 0;
    int32_t l = start;
    do {
        comet_fabric_link_name(c->f, l, name, sizeof name);
        if (at < sizeof links - 1)
            at += (size_t)snprintf(links + at, sizeof links - at, "%s%s", count ? ", " : "", name);
        count++;
        l = next[l];
    } while (l >= 0 && l != start && count < 64);
    /* the flows with bytes queued behind the cycle's links */
    int64_t caught = 0;
    size_t fat = 0;
    for (int64_t a = 0; a < e->n_active; a++) {
        int64_t id = e->active[a];
        fl_flow *w = &e->flows[id];
        const int32_t *path = path_of(w);
        double *hb = hops_of(&c->fl[id], w->len);
        bool stuck = false;
        for (int i = 1; i < w->len && !stuck; i++)
            stuck = in[path[i - 1]] && hb[i] > 0.0;
        if (!stuck)
            continue;
        if (caught < 8 && fat < sizeof flows - 1)
            fat += (size_t)snprintf(flows + fat, sizeof flows - fat, "%snpu %d -> npu %d",
                                    caught ? ", " : "", c->f->from[path[0]],
                                    c->f->to[path[w->len - 1]]);
        caught++;
    }
    free(in);
    free(drain);
    free(next);
    free(best);
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "congestion_control",
                           "PFC deadlock at %.6g ms: %d paused links wait on each other in a "
                           "cycle (%s), so none can resume; %lld flows stalled (%s%s)",
                           e->now * 1e3, count, links, (long long)caught, flows,
                           caught > 8 ? ", ..." : "");
}

const fl_stepper cc_fluid_stepper = {
    .create = ccf_new,
    .destroy = ccf_free,
    .next = ccf_next,
    .advance = ccf_advance,
    .step = ccf_step,
    .start = ccf_start,
    .queue = ccf_queue,
    .paused = ccf_paused,
    .stats = ccf_stats,
};
