/* The flow-level engine (flows.h). Max-min fair rates by progressive
 * filling: every link's fair share (bandwidth left over its unfrozen
 * flows) sits in a heap; the smallest share is the next bottleneck, whose
 * flows freeze at it. Freezing a flow at the smallest share only raises
 * the shares of the other links on its path, so a heap entry is a lower
 * bound: a popped entry that has grown goes back with its new share
 * (lazy), and none is pushed when a share changes. One recomputation
 * costs O(P + L log L) for P path entries over L links in use.
 * Flows ending within a relative 1e-9 of each other end together, so a
 * symmetric collective takes one event per step, whatever its size.
 * Each NPU remembers its last route (its links, their latency and the
 * path's key): a collective's NPU sends step after step to one peer over
 * one connection, so the route is worked out once per connection, not
 * once per flow. Where the fabric is fluid (a dimension runs congestion
 * control) the stepper handed to fl_new (flows_impl.h; the fluid engine,
 * cc_fluid.c) moves the running flows in time steps instead, over the
 * same queues and callbacks. */
#include "flows_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "time_queue.h"

#define END_TOLERANCE 1e-9
/* Flows are visited in the order of their queues, not of their slots:
 * the one this many places ahead is fetched early (each visit otherwise
 * waits on memory, the flows in flight outgrowing the caches). */
#define PREFETCH_AHEAD 8
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

fl_engine *fl_new(const comet_fabric *f, const fl_stepper *fluid)
{
    fl_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->f = f;
    size_t L = (size_t)(f->n_links > 0 ? f->n_links : 1);
    e->left = calloc(L, sizeof *e->left);
    e->bytes = calloc(L, sizeof *e->bytes);
    e->count = calloc(L, sizeof *e->count);
    e->first = calloc(L, sizeof *e->first);
    e->used = calloc(L, sizeof *e->used);
    e->load = calloc(L, sizeof *e->load);
    e->max_rate = calloc(L, sizeof *e->max_rate);
    e->n_on = calloc(L, sizeof *e->n_on);
    if (!e->left || !e->bytes || !e->count || !e->first || !e->used || !e->load ||
        !e->max_rate || !e->n_on) {
        fl_free(e);
        return NULL;
    }
    if (f->fluid) {
        e->fluid = fluid;
        if (!fluid || !(e->fluid_state = fluid->create(f))) {
            fl_free(e);
            return NULL;
        }
    }
    return e;
}

void fl_free(fl_engine *e)
{
    if (!e)
        return;
    for (int64_t i = 0; i < e->n_flows; i++)
        free(e->flows[i].heap_path);
    free(e->flows);
    free(e->free_ids);
    free(e->active);
    tq_free(&e->wait);
    tq_free(&e->ends);
    free(e->old_rate);
    free(e->left);
    free(e->bytes);
    free(e->count);
    free(e->first);
    free(e->used);
    free(e->load);
    free(e->max_rate);
    free(e->n_on);
    free(e->by_link);
    free(e->heap);
    free(e->ended);
    free(e->last_route);
    if (e->fluid)
        e->fluid->destroy(e->fluid_state);
    for (int i = 0; i < CACHE_SETS; i++) {
        free(e->cache[i].keys);
        free(e->cache[i].rates);
    }
    free(e);
}

/* A flow slot: a freed one (lowest ids reused last-in first-out, which is
 * deterministic) or a new one. */
static int64_t new_flow(fl_engine *e)
{
    if (e->n_free > PREFETCH_AHEAD)
        PREFETCH(&e->flows[e->free_ids[e->n_free - 1 - PREFETCH_AHEAD]]);
    if (e->n_free > 0)
        return e->free_ids[--e->n_free];
    if (e->n_flows == e->cap_flows) {
        int64_t cap = e->cap_flows ? 2 * e->cap_flows : 1024;
        fl_flow *fl = realloc(e->flows, (size_t)cap * sizeof *fl);
        int64_t *fr = realloc(e->free_ids, (size_t)cap * sizeof *fr);
        int64_t *ac = realloc(e->active, (size_t)cap * sizeof *ac);
        if (fl)
            e->flows = fl;
        if (fr)
            e->free_ids = fr;
        if (ac)
            e->active = ac;
        if (!fl || !fr || !ac)
            return -1;
        e->cap_flows = cap;
    }
    fl_flow *w = &e->flows[e->n_flows];
    w->heap_path = NULL;
    w->len = 0;
    w->version = 0;
    return e->n_flows++;
}

/* A path's key (flows on one path share a rate) and latency (its links'
 * summed in order). */
static void path_key_lat(const fl_engine *e, const int32_t *path, int len, uint64_t *key,
                         double *lat)
{
    uint64_t k = 0x5bd1e995ULL;
    double l = 0.0;
    for (int i = 0; i < len; i++) {
        k = fab_mix(k ^ (uint64_t)(uint32_t)path[i]);
        l += e->f->lat[path[i]];
    }
    *key = k;
    *lat = l;
}

/* A flow on `path` (its key and latency given) whose message was handed
 * over at `since` (<= now) waits out what is left of the path's latency
 * from then. */
static int send_path(fl_engine *e, const int32_t *path, int len, uint64_t key, double lat,
                     double bytes, uint32_t owner, uint64_t tag, double since)
{
    int64_t id = new_flow(e);
    if (id < 0)
        return -1;
    fl_flow *w = &e->flows[id];
    if (w->heap_path) {
        free(w->heap_path);
        w->heap_path = NULL;
    }
    w->len = 0;
    if (len > INLINE_PATH) {
        w->heap_path = malloc((size_t)len * sizeof *w->heap_path);
        if (!w->heap_path) {
            e->free_ids[e->n_free++] = id;
            return -1;
        }
    }
    w->len = len;
    int32_t *links = path_of(w);
    memcpy(links, path, (size_t)len * sizeof *links);
    if (bytes > 0.0)
        for (int i = 0; i < len; i++)
            e->bytes[path[i]] += bytes;
    w->key = key;
    w->version++; /* a slot's earlier flow's projections go stale */
    w->rem = bytes > 0.0 && len > 0 ? bytes : 0.0;
    w->rate = 0.0;
    w->tag = tag;
    w->owner = owner;
    w->slot = -1;
    w->start_at = since + lat > e->now ? since + lat : e->now;
    e->started++;
    return tq_push(&e->wait, w->start_at, id, 0);
}

int fl_send_path(fl_engine *e, const int32_t *path, int len, double bytes, uint32_t owner,
                 uint64_t tag)
{
    uint64_t key;
    double lat;
    path_key_lat(e, path, len, &key, &lat);
    return send_path(e, path, len, key, lat, bytes, owner, tag, e->now);
}

int fl_send_since(fl_engine *e, int64_t a, int64_t b, double bytes, uint64_t hash,
                  uint32_t owner, uint64_t tag, double since)
{
    if (a == b) /* no path: it ends at once, moving nothing */
        return fl_send_path(e, e->route, 0, 0.0, owner, tag);
    if (since > e->now)
        since = e->now;
    if (a < 0 || a >= e->f->npus)
        return -1;
    if (!e->last_route) {
        e->last_route = malloc((size_t)e->f->npus * sizeof *e->last_route);
        if (!e->last_route)
            return -1;
        for (int64_t i = 0; i < e->f->npus; i++)
            e->last_route[i].to = -1;
    }
    fl_route *rt = &e->last_route[a];
    if (rt->to == b && rt->hash == hash)
        return send_path(e, rt->path, rt->len, rt->key, rt->lat, bytes, owner, tag, since);
    int len = comet_fabric_route(e->f, a, b, hash, e->route, FAB_MAX_PATH);
    if (len < 0)
        return -1;
    uint64_t key;
    double lat;
    path_key_lat(e, e->route, len, &key, &lat);
    if (len <= INLINE_PATH) { /* a longer one is worked out each time */
        *rt = (fl_route){b, hash, key, lat, len, {0}};
        memcpy(rt->path, e->route, (size_t)len * sizeof *rt->path);
    }
    return send_path(e, e->route, len, key, lat, bytes, owner, tag, since);
}

int fl_send(fl_engine *e, int64_t a, int64_t b, double bytes, uint64_t hash, uint32_t owner,
            uint64_t tag)
{
    return fl_send_since(e, a, b, bytes, hash, owner, tag, e->now);
}

/* The running flows' summed and largest rate per link, after the rates
 * were set anew. */
static void rebuild_loads(fl_engine *e)
{
    for (int64_t k = 0; k < e->n_active; k++) {
        fl_flow *w = &e->flows[e->active[k]];
        const int32_t *links = path_of(w);
        for (int i = 0; i < w->len; i++)
            e->load[links[i]] = e->max_rate[links[i]] = 0.0;
    }
    for (int64_t k = 0; k < e->n_active; k++) {
        fl_flow *w = &e->flows[e->active[k]];
        const int32_t *links = path_of(w);
        for (int i = 0; i < w->len; i++) {
            e->load[links[i]] += w->rate;
            if (w->rate > e->max_rate[links[i]])
                e->max_rate[links[i]] = w->rate;
        }
    }
}

static bool saturated(const fl_engine *e, int32_t l)
{
    return e->load[l] >= e->f->cap[l] * (1.0 - 1e-9);
}

/* A flow starting into a max-min allocation keeps it max-min, without a
 * recomputation, when no link on its path is saturated (so no running
 * flow's bottleneck is there) and it takes the smallest spare bandwidth on
 * its path, r, where no other flow runs faster than r (its bottleneck:
 * saturated, it the fastest there). Else false: recompute. */
static bool fast_start(fl_engine *e, fl_flow *w)
{
    const int32_t *links = path_of(w);
    double r = INFINITY;
    for (int i = 0; i < w->len; i++) {
        double spare = e->f->cap[links[i]] - e->load[links[i]];
        if (spare < r)
            r = spare;
    }
    if (!(r > 0.0) || !isfinite(r))
        return false;
    for (int i = 0; i < w->len; i++) {
        int32_t l = links[i];
        if (saturated(e, l))
            return false;
        double spare = e->f->cap[l] - e->load[l];
        if (spare <= r * (1.0 + 1e-9) && e->n_on[l] > 1 && e->max_rate[l] > r * (1.0 + 1e-9))
            return false;
    }
    w->rate = r;
    for (int i = 0; i < w->len; i++) {
        e->load[links[i]] += r;
        if (r > e->max_rate[links[i]])
            e->max_rate[links[i]] = r;
    }
    return true;
}

/* A flow ending leaves the others max-min when no link on its path is
 * saturated with another flow on it (only a saturated link is anyone's
 * bottleneck). Else false: recompute. */
static bool fast_end(fl_engine *e, fl_flow *w)
{
    const int32_t *links = path_of(w);
    for (int i = 0; i < w->len; i++)
        if (e->n_on[links[i]] > 1 && saturated(e, links[i]))
            return false;
    for (int i = 0; i < w->len; i++)
        e->load[links[i]] -= w->rate;
    return true;
}

/* Remembers the rates just computed for the running set, in the oldest
 * of the cache's sets. */
static void cache_store(fl_engine *e)
{
    rate_cache *c = &e->cache[e->cache_next];
    e->cache_next = (e->cache_next + 1) % CACHE_SETS;
    c->n = 0;
    int64_t cap = 64;
    while (cap < 2 * e->n_active)
        cap *= 2;
    if (cap > c->cap) {
        uint64_t *k = realloc(c->keys, (size_t)cap * sizeof *k);
        if (k)
            c->keys = k;
        double *r = realloc(c->rates, (size_t)cap * sizeof *r);
        if (r)
            c->rates = r;
        if (!k || !r)
            return;
        c->cap = cap;
    }
    memset(c->keys, 0, (size_t)c->cap * sizeof *c->keys);
    uint64_t mask = (uint64_t)c->cap - 1;
    for (int64_t a = 0; a < e->n_active; a++) {
        const fl_flow *w = &e->flows[e->active[a]];
        uint64_t key = w->key | 1; /* 0 marks an empty slot */
        uint64_t i = key & mask;
        while (c->keys[i] && c->keys[i] != key)
            i = (i + 1) & mask;
        if (c->keys[i] == key && c->rates[i] != w->rate)
            return; /* two rates on one path: never reuse this set */
        c->keys[i] = key;
        c->rates[i] = w->rate;
    }
    c->set_hash = e->set_hash;
    c->n = e->n_active;
}

/* The cached rates, when the running set is one the cache holds (a
 * symmetric collective's every step, or the few states an uneven one
 * cycles through). */
static bool cache_reuse(fl_engine *e)
{
    for (int j = 0; j < CACHE_SETS; j++) {
        rate_cache *c = &e->cache[j];
        if (c->n != e->n_active || c->set_hash != e->set_hash)
            continue;
        uint64_t mask = (uint64_t)c->cap - 1;
        int64_t a = 0;
        for (; a < e->n_active; a++) {
            fl_flow *w = &e->flows[e->active[a]];
            uint64_t key = w->key | 1;
            uint64_t i = key & mask;
            while (c->keys[i] && c->keys[i] != key)
                i = (i + 1) & mask;
            if (c->keys[i] != key)
                break;
            w->rate = c->rates[i];
        }
        if (a == e->n_active) {
            e->dirty = false;
            rebuild_loads(e);
            return true;
        }
    }
    return false;
}

/* Max-min fair rates of the running flows (progressive filling). */
static int update_rates(fl_engine *e)
{
    if (e->n_active == 0) { /* nothing to share: keep the cache for the next set */
        e->dirty = false;
        return 0;
    }
    if (cache_reuse(e))
        return 0;
    e->updates++;
    int64_t n_used = 0, entries = 0;
    for (int64_t k = 0; k < e->n_active; k++) {
        fl_flow *w = &e->flows[e->active[k]];
        const int32_t *links = path_of(w);
        for (int i = 0; i < w->len; i++) {
            int32_t l = links[i];
            if (e->count[l]++ == 0)
                e->used[n_used++] = l;
        }
        entries += w->len;
    }
    if (entries > e->cap_by_link) {
        int64_t *b = realloc(e->by_link, (size_t)entries * sizeof *b);
        if (!b)
            return -1;
        e->by_link = b;
        e->cap_by_link = entries;
    }
    /* every link once (a stale one goes back only after it was popped) */
    if (n_used + 16 > e->cap_heap) {
        int64_t cap = n_used + 16;
        kh_item *h = realloc(e->heap, (size_t)cap * sizeof *h);
        if (!h)
            return -1;
        e->heap = h;
        e->cap_heap = cap;
    }
    /* flows by link: first[l] is where link l's list starts */
    int64_t at = 0;
    for (int64_t u = 0; u < n_used; u++) {
        int32_t l = e->used[u];
        e->first[l] = (int32_t)at;
        at += e->count[l];
        e->left[l] = e->f->cap[l];
    }
    for (int64_t u = 0; u < n_used; u++)
        e->count[e->used[u]] = 0;
    for (int64_t k = 0; k < e->n_active; k++) {
        fl_flow *w = &e->flows[e->active[k]];
        const int32_t *links = path_of(w);
        w->rate = -1.0; /* unfrozen */
        for (int i = 0; i < w->len; i++) {
            int32_t l = links[i];
            e->by_link[e->first[l] + e->count[l]++] = e->active[k];
        }
    }
    /* the heap built bottom-up in O(L) */
    e->n_heap = n_used;
    for (int64_t u = 0; u < n_used; u++) {
        int32_t l = e->used[u];
        e->heap[u] = (kh_item){e->left[l] / (double)e->count[l], l};
    }
    for (int64_t i = n_used / 2 - 1; i >= 0; i--)
        kh_sift_down(e->heap, e->n_heap, i);
    /* count[l] now counts l's unfrozen flows; stop once every flow is frozen */
    int64_t unfrozen = e->n_active;
    while (e->n_heap > 0 && unfrozen > 0) {
        kh_item top = kh_pop(e->heap, &e->n_heap);
        int32_t l = (int32_t)top.id;
        if (e->count[l] == 0)
            continue;
        double share = e->left[l] / (double)e->count[l];
        if (share != top.key) {
            kh_push(e->heap, &e->n_heap, (kh_item){share, l});
            continue;
        }
        if (share < 0.0)
            share = 0.0;
        /* the list holds every flow that runs through l: freeze the unfrozen */
        for (int64_t j = e->first[l]; e->count[l] > 0; j++) {
            fl_flow *w = &e->flows[e->by_link[j]];
            if (w->rate >= 0.0)
                continue;
            w->rate = share;
            unfrozen--;
            const int32_t *links = path_of(w);
            for (int i = 0; i < w->len; i++) {
                int32_t m = links[i];
                e->left[m] -= share;
                --e->count[m];
            }
        }
    }
    for (int64_t u = 0; u < n_used; u++)
        e->count[e->used[u]] = 0;
    e->dirty = false;
    rebuild_loads(e);
    cache_store(e);
    return 0;
}

/* Takes flow id off the running set (if it ran) and frees its slot. */
void fl_finish(fl_engine *e, int64_t id)
{
    fl_flow *w = &e->flows[id];
    if (w->slot >= 0) {
        if (!e->fluid && !e->dirty && !fast_end(e, w))
            e->dirty = true;
        const int32_t *links = path_of(w);
        for (int i = 0; i < w->len; i++)
            if (--e->n_on[links[i]] == 0)
                e->load[links[i]] = e->max_rate[links[i]] = 0.0;
        e->set_hash -= fab_mix(w->key);
        int64_t last = e->active[--e->n_active];
        e->active[w->slot] = last;
        e->flows[last].slot = w->slot;
        w->slot = -1;
    }
    e->free_ids[e->n_free++] = id;
}


#define SERIES_CAP 1000000

int fl_watch(fl_engine *e, int n, comet_link_series *series, bool *cut)
{
    e->n_watch = n < COMET_FABRIC_HOT_LINKS ? (n > 0 ? n : 0) : COMET_FABRIC_HOT_LINKS;
    e->watch = series;
    e->watch_cut = cut;
    for (int i = 0; i < e->n_watch; i++)
        if (series[i].link < 0 || series[i].link >= e->f->n_links)
            return -1;
    return 0;
}

/* The watched links' utilization from now on, where it changed. */
int fl_record(fl_engine *e)
{
    for (int i = 0; i < e->n_watch; i++) {
        comet_link_series *sr = &e->watch[i];
        double cap = e->f->cap[sr->link];
        double u = cap > 0.0 ? e->load[sr->link] / cap : 0.0;
        double q = e->fluid ? e->fluid->queue(e->fluid_state, sr->link) : 0.0;
        bool paused = e->fluid && e->fluid->paused(e->fluid_state, sr->link);
        if (sr->n > 0 && sr->utilization[sr->n - 1] == u &&
            (!e->fluid || (sr->queue[sr->n - 1] == q && sr->paused[sr->n - 1] == paused)))
            continue;
        if (sr->n == SERIES_CAP) {
            *e->watch_cut = true;
            continue;
        }
        if (sr->n == e->watch_cap[i]) {
            size_t c = e->watch_cap[i] ? 2 * e->watch_cap[i] : 256;
            double *t = realloc(sr->t, c * sizeof *t);
            if (t)
                sr->t = t;
            double *v = realloc(sr->utilization, c * sizeof *v);
            if (v)
                sr->utilization = v;
            if (!t || !v)
                return -1;
            if (e->fluid) {
                double *qq = realloc(sr->queue, c * sizeof *qq);
                if (qq)
                    sr->queue = qq;
                bool *pp = realloc(sr->paused, c * sizeof *pp);
                if (pp)
                    sr->paused = pp;
                if (!qq || !pp)
                    return -1;
            }
            e->watch_cap[i] = c;
        }
        sr->t[sr->n] = e->now;
        if (e->fluid) {
            sr->queue[sr->n] = q;
            sr->paused[sr->n] = paused;
        }
        sr->utilization[sr->n++] = u;
    }
    return 0;
}

/* Brings a running flow's bytes left up to now, at the rate it had. */
static void settle(fl_engine *e, fl_flow *w)
{
    w->rem -= w->rate * (e->now - w->t0);
    w->t0 = e->now;
}

/* A running flow's projected end at its rate, in the end heap (an older
 * projection goes stale). */
static int project(fl_engine *e, int64_t id)
{
    fl_flow *w = &e->flows[id];
    w->version++;
    double at = w->rem <= 0.0 ? e->now : w->rate > 0.0 ? e->now + w->rem / w->rate : INFINITY;
    return isfinite(at) ? tq_push(&e->ends, at, id, w->version) : 0;
}

/* New rates for every running flow: their bytes settled at the old ones,
 * the allocation recomputed (or taken from the cache), and the flows whose
 * rate changed projected anew (their old projections go stale). */
static int reallocate(fl_engine *e)
{
    if (e->n_active > e->cap_old) {
        double *x = realloc(e->old_rate, (size_t)e->n_active * sizeof *x);
        if (!x)
            return -1;
        e->old_rate = x;
        e->cap_old = e->n_active;
    }
    for (int64_t k = 0; k < e->n_active; k++) {
        fl_flow *w = &e->flows[e->active[k]];
        settle(e, w);
        e->old_rate[k] = w->rate;
    }
    if (update_rates(e) != 0)
        return -1;
    /* a flow whose rate stayed keeps its projection (the same time) */
    for (int64_t k = 0; k < e->n_active; k++)
        if (e->flows[e->active[k]].rate != e->old_rate[k] && project(e, e->active[k]) != 0)
            return -1;
    return 0;
}

/* The end queue's first item, stale projections (a flow that ended, or
 * whose rate changed) dropped. */
static const tq_item *next_end(fl_engine *e)
{
    const tq_item *t;
    while ((t = tq_peek(&e->ends)) != NULL) {
        const fl_flow *w = &e->flows[t->id];
        if (w->slot >= 0 && w->version == t->version)
            return t;
        tq_pop(&e->ends);
    }
    return NULL;
}

comet_status fl_next(fl_engine *e, double *at, comet_error *err)
{
    *at = INFINITY;
    if (e->fluid)
        return e->fluid->next(e, at, err);
    if ((e->dirty && reallocate(e) != 0) || fl_record(e) != 0)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (e->wait.items == 0 && e->n_active == 0)
        return COMET_OK;
    /* the next event: a flow ends or one's latency is over */
    const tq_item *end = next_end(e);
    const tq_item *started = tq_peek(&e->wait);
    double next = end ? end->at : INFINITY;
    if (started && started->at < next)
        next = started->at;
    if (!isfinite(next))
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "%lld flows cannot move: a link on their path has no bandwidth",
                               (long long)e->n_active);
    *at = next > e->now ? next : e->now;
    return COMET_OK;
}

void fl_advance(fl_engine *e, double t)
{
    if (t > e->now) {
        if (e->fluid)
            e->fluid->advance(e, t);
        e->now = t;
    }
}

int fl_reserve_ended(fl_engine *e)
{
    if (e->n_active + e->wait.items > e->cap_ended) {
        int64_t cap = 2 * (e->n_active + e->wait.items) + 64;
        ended_flow *x = realloc(e->ended, (size_t)cap * sizeof *x);
        if (!x)
            return -1;
        e->ended = x;
        e->cap_ended = cap;
    }
    return 0;
}

comet_status fl_start_due(fl_engine *e, double horizon, int64_t *n_ended, comet_error *err)
{
    const tq_item *started;
    for (started = tq_peek(&e->wait); started && started->at <= horizon;
         started = tq_peek(&e->wait)) {
        int64_t id = started->id, soon = tq_ahead(&e->wait, PREFETCH_AHEAD);
        if (soon >= 0)
            PREFETCH(&e->flows[soon]);
        tq_pop(&e->wait);
        fl_flow *w = &e->flows[id];
        if (w->rem <= 0.0) {
            e->ended[(*n_ended)++] = (ended_flow){id, w->tag, w->owner};
            fl_finish(e, id);
            continue;
        }
        w->slot = (int)e->n_active;
        w->t0 = e->now;
        e->active[e->n_active++] = id;
        e->set_hash += fab_mix(w->key);
        const int32_t *links = path_of(w);
        for (int i = 0; i < w->len; i++)
            e->n_on[links[i]]++;
        if (e->fluid) {
            if (e->fluid->start(e, id) != 0)
                return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            continue;
        }
        if (!e->dirty && !fast_start(e, w))
            e->dirty = true;
        if (!e->dirty && project(e, id) != 0)
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    return COMET_OK;
}

comet_status fl_callbacks(fl_engine *e, fl_done_fn done, void *ctx, int64_t n_ended,
                          comet_error *err)
{
    /* the callbacks in the order the flows ended (the queues' order:
     * deterministic, as everything before it) */
    for (int64_t k = 0; k < n_ended; k++)
        if (done(ctx, e, e->ended[k].owner, e->ended[k].tag) != 0)
            return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL,
                                   "out of memory (or a route failed) starting a flow");
    return COMET_OK;
}

comet_status fl_step(fl_engine *e, fl_done_fn done, void *ctx, comet_error *err)
{
    double next;
    comet_status st = fl_next(e, &next, err);
    if (st || !isfinite(next))
        return st;
    if (fl_reserve_ended(e) != 0)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    int64_t n_ended = 0;
    double horizon = next + END_TOLERANCE * (next > 0.0 ? next : 0.0);
    e->events++;
    if (e->fluid) {
        /* the fluid step to next, then the flows it delivered in full */
        if ((st = e->fluid->step(e, next, &n_ended, err)) != COMET_OK)
            return st;
    } else {
        e->now = next;
        /* the ended flows leave first (their tags kept: the callbacks
         * reuse the slots), then the flows whose latency is over start */
        const tq_item *end;
        for (end = next_end(e); end && end->at <= horizon; end = next_end(e)) {
            int64_t id = end->id, soon = tq_ahead(&e->ends, PREFETCH_AHEAD);
            if (soon >= 0)
                PREFETCH(&e->flows[soon]);
            tq_pop(&e->ends);
            e->flows[id].rem = 0.0;
            e->flows[id].t0 = e->now;
            e->ended[n_ended++] = (ended_flow){id, e->flows[id].tag, e->flows[id].owner};
            fl_finish(e, id);
        }
    }
    if ((st = fl_start_due(e, horizon, &n_ended, err)) != COMET_OK)
        return st;
    return fl_callbacks(e, done, ctx, n_ended, err);
}

bool fl_busy(const fl_engine *e)
{
    return e->wait.items > 0 || e->n_active > 0;
}

comet_status fl_run(fl_engine *e, fl_done_fn done, void *ctx, comet_error *err)
{
    comet_status st = COMET_OK;
    while (!st && fl_busy(e))
        st = fl_step(e, done, ctx, err);
    if (!st && fl_record(e) != 0)
        st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    return st;
}

double fl_now(const fl_engine *e)
{
    return e->now;
}

uint64_t fl_flows(const fl_engine *e)
{
    return e->started;
}

uint64_t fl_events(const fl_engine *e)
{
    return e->events;
}

uint64_t fl_rate_updates(const fl_engine *e)
{
    return e->updates;
}

void fl_cc_stats(const fl_engine *e, comet_cc_stats *out)
{
    memset(out, 0, sizeof *out);
    if (e->fluid)
        e->fluid->stats(e->fluid_state, e->now, out);
}

const double *fl_link_bytes(const fl_engine *e)
{
    return e->bytes;
}
