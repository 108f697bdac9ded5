/* The training step on the fabric, every NPU at once (comet simulate
 * --flows): the step graph's compute stays one task per stage (the NPUs
 * of a stage compute alike), while every transfer runs outside the
 * engine as flows on one shared fabric (sim_outside): each collective on
 * every group of its kind among its stage's NPUs, each pipeline send from
 * every NPU of the stage to its peer in the next (or previous) stage. A
 * task ends when the last of its flows does, so a stage waits for its
 * slowest group, and transfers that overlap in time (a stage's gradient
 * all-reduce under another's pipeline sends, two stages' collectives on
 * one spine) share the links they meet on. Ranks sit on the network as
 * the Chakra export numbers them (comet_strategy_digit_spans).
 *
 * Seeing it (comet_sim_step_options.links): a transfer's routes do not
 * depend on timing, so what each link carries over the step is each
 * kind's bytes per link (from its measurement) times how often it runs,
 * flows and alone alike: the hottest links are known before the run and
 * watched in it, one run. The series come from the flows; a kind that
 * runs alone moves none, so its bytes count in the totals, not in them.
 * docs/fabric.md, "The training step on the fabric" and "Seeing it". */
#include "sim.h"
#include "phases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comet/fabric.h"
#include "comet/network.h"
#include "comet/strategy.h"

/* One kind of transfer: a stream's collective of one size on its
 * stage's groups, or its stage's pipeline sends one way. Simulated once
 * alone (every group of the stage at once), it knows its time and the
 * links it uses; a kind whose links no other stream's transfers use runs
 * alone whenever it runs (its stream runs one transfer at a time), so it
 * takes that time without flows, exactly. */
typedef struct xfer_kind {
    int resource;                /* the stream issuing it (stage * per_stage + stream) */
    int stage;
    int group;                   /* a step_group, or SEND_FWD / SEND_BWD */
    comet_collective c;
    double bytes;
    double time;                 /* alone */
    int32_t *links;              /* the links it uses */
    double *link_bytes;          /* what it carries on each of them */
    int64_t n_links;
    int64_t uses;                /* its transfers in this run's graph */
    int64_t ran_alone;           /* of them, run alone so far */
    bool alone;                  /* in this run no other stream's transfers use them */
} xfer_kind;

enum { SEND_FWD = STEP_G_COUNT, SEND_BWD };

struct sim_fabric_step {
    comet_fabric *f;
    comet_system sys;            /* its sizes resolved */
    int64_t npus, per_stage_npus, f_links;
    int stages;
    int64_t *stage_npus;         /* [stage][i]: the stage's NPUs, ascending */
    int32_t *local;              /* NPU -> its index in its stage */
    comet_fabric_group groups[STEP_G_COUNT];
    bool group_ok[STEP_G_COUNT];
    char group_why[STEP_G_COUNT][160];
    int64_t *from, *to;          /* a send's ends, per member */
    /* the kinds of transfer met so far (kept across runs) */
    xfer_kind *kinds;
    int n_kinds, cap_kinds;
    int32_t *link_owner;         /* per link: the one stream whose transfers use it, -1 none,
                                    -2 several */
    /* one run of the step */
    comet_fabric_run *run;
    sim_graph *g;
    const step_coll *coll;
    int per_stage;
    double p2p_bytes;
    int32_t *kind_of;            /* per task: its transfer kind, -1 none */
    uint64_t flows_transfers, alone_transfers, flows;
    comet_sim_fabric_links *links; /* NULL: not asked */
    int64_t max_flows;             /* per run and per measurement (0: the fabric's default) */
    /* Themis: per stage, the seconds of work its collectives have given
     * each dimension so far in this run ([stage][dim]); NULL: baseline */
    double *themis_load;
    uint8_t order[1024 * COMET_MAX_DIMS]; /* a collective's chunks' orders, a scratch */
    double *link_total;          /* per link: bytes over the run, a scratch */
    comet_status st;
    comet_error err;
};

/* Keeps the first failure (its message is in fs->err). */
static comet_status fail(sim_fabric_step *fs, comet_status st)
{
    if (!fs->st)
        fs->st = st;
    return fs->st;
}

/* Group kind fg along every dimension: the span its digits take there and
 * how many positions apart its members are (the digits below it). */
static void group_layout(sim_fabric_step *fs, const int64_t spans[COMET_RANK_DIGITS][COMET_MAX_DIMS],
                         int fg)
{
    comet_fabric_group *g = &fs->groups[fg];
    fs->group_ok[fg] = true;
    for (int d = 0; d < fs->sys.n_dims; d++) {
        int64_t span = 1, stride = 1, below = 1;
        int lo = -1, hi = -1;
        for (int i = 0; i < COMET_RANK_DIGITS; i++) {
            if (spans[i][d] > 1 && (step_group_digits((step_group)fg) >> i & 1u)) {
                if (lo < 0) {
                    lo = i;
                    stride = below;
                }
                hi = i;
                span *= spans[i][d];
            }
            below *= spans[i][d];
        }
        for (int i = lo + 1; lo >= 0 && i < hi; i++)
            if (spans[i][d] > 1 && !(step_group_digits((step_group)fg) >> i & 1u)) {
                char why[sizeof fs->group_why[fg]]; /* the name is fs's too: not in place */
                fs->group_ok[fg] = false;
                snprintf(why, sizeof why,
                         "its members along %s are not evenly spaced (another group's ranks "
                         "lie between)",
                         fs->sys.dims[d].name);
                memcpy(fs->group_why[fg], why, sizeof why);
            }
        g->span[d] = span;
        g->stride[d] = stride;
    }
    g->members = NULL; /* set per stage */
    g->local = fs->local;
    g->n_members = fs->per_stage_npus;
}

void sim_fabric_step_free(sim_fabric_step *fs);

static int by_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

comet_status sim_fabric_step_new(const comet_system *sys, const comet_strategy *s,
                                 comet_sim_fabric_links *links, bool themis, int64_t max_flows,
                                 sim_fabric_step **out, comet_error *err)
{
    *out = NULL;
    if (comet_strategy_folded(s))
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--flows",
                               "a folded expert layout (expert tensor parallelism unlike the "
                               "dense one) does not yet run on the fabric");
    sim_fabric_step *fs = calloc(1, sizeof *fs);
    if (!fs)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    fs->links = links;
    fs->max_flows = max_flows;
    fs->npus = comet_strategy_npus(s);
    fs->stages = (int)s->pp;
    fs->per_stage_npus = fs->npus / s->pp;
    int64_t spans[COMET_RANK_DIGITS][COMET_MAX_DIMS], counts[COMET_RANK_DIGITS];
    comet_strategy_digit_spans(s, spans);
    comet_strategy_digit_counts(s, counts);
    comet_status st = comet_fabric_build(sys, fs->npus, &fs->f, err);
    if (!st)
        comet_fabric_system(fs->f, sys, &fs->sys);
    int64_t sizes[COMET_MAX_DIMS];
    for (int d = 0; !st && d < sys->n_dims; d++) {
        sizes[d] = fs->sys.dims[d].size;
        int64_t used = 1;
        for (int i = 0; i < COMET_RANK_DIGITS; i++)
            used *= spans[i][d];
        if (used != sizes[d])
            st = comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "strategy",
                                 "the strategy uses %lld of the %lld NPUs of network dimension "
                                 "%s; the fabric's step simulation needs one rank per NPU",
                                 (long long)used, (long long)sizes[d], sys->dims[d].name);
    }
    if (!st) {
        comet_fabric_info info;
        comet_fabric_info_of(fs->f, &info);
        fs->f_links = info.links;
        size_t n = (size_t)(info.links > 0 ? info.links : 1);
        fs->link_owner = malloc(sizeof *fs->link_owner * n);
        if (links)
            fs->link_total = malloc(sizeof *fs->link_total * n);
        if (!fs->link_owner || (links && !fs->link_total))
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    if (!st) {
        fs->stage_npus = malloc(sizeof *fs->stage_npus * (size_t)fs->npus);
        fs->local = malloc(sizeof *fs->local * (size_t)fs->npus);
        fs->from = malloc(sizeof *fs->from * (size_t)fs->per_stage_npus);
        fs->to = malloc(sizeof *fs->to * (size_t)fs->per_stage_npus);
        if (themis)
            fs->themis_load = calloc((size_t)fs->stages * COMET_MAX_DIMS,
                                     sizeof *fs->themis_load);
        if (!fs->stage_npus || !fs->local || !fs->from || !fs->to || (themis && !fs->themis_load))
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    if (!st) {
        /* every rank's NPU, listed by stage: ranks in order of their other
         * digits, so member i of every stage is the same rank of its stage */
        int64_t digit[COMET_RANK_DIGITS] = {0};
        int64_t *filled = calloc((size_t)fs->stages, sizeof *filled);
        if (!filled)
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        for (int64_t r = 0; !st && r < fs->npus; r++) {
            int64_t rest = r;
            for (int i = 0; i < COMET_RANK_DIGITS; i++) {
                digit[i] = rest % counts[i];
                rest /= counts[i];
            }
            int64_t npu = comet_strategy_npu_of(spans, sizes, sys->n_dims, digit);
            int stage = (int)digit[COMET_DIGIT_PP];
            fs->stage_npus[stage * fs->per_stage_npus + filled[stage]] = npu;
            fs->local[npu] = (int32_t)filled[stage]++;
        }
        free(filled);
    }
    if (!st) {
        /* the NPUs of a stage ascending, so member i matches across stages
         * (an NPU's id is its other digits' part plus its stage's part) */
        for (int stage = 0; stage < fs->stages; stage++) {
            int64_t *m = fs->stage_npus + stage * fs->per_stage_npus;
            qsort(m, (size_t)fs->per_stage_npus, sizeof *m, by_id);
            for (int64_t i = 0; i < fs->per_stage_npus; i++)
                fs->local[m[i]] = (int32_t)i;
        }
        for (int fg = 0; fg < STEP_G_COUNT; fg++)
            group_layout(fs, spans, fg);
    }
    if (st) {
        sim_fabric_step_free(fs);
        return st;
    }
    *out = fs;
    return COMET_OK;
}

bool sim_fabric_step_uneven(const sim_fabric_step *fs, char *why, size_t cap)
{
    return comet_fabric_uneven(fs->f, why, cap);
}

void sim_fabric_step_free(sim_fabric_step *fs)
{
    if (!fs)
        return;
    comet_fabric_run_free(fs->run);
    comet_fabric_free(fs->f);
    for (int k = 0; k < fs->n_kinds; k++) {
        free(fs->kinds[k].links);
        free(fs->kinds[k].link_bytes);
    }
    free(fs->kinds);
    free(fs->link_owner);
    free(fs->link_total);
    free(fs->stage_npus);
    free(fs->local);
    free(fs->from);
    free(fs->to);
    free(fs->themis_load);
    free(fs->kind_of);
    free(fs);
}

static comet_status oom(sim_fabric_step *fs)
{
    return fail(fs, comet_error_set(&fs->err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
}

/* What task moves, as a kind (not yet in the table): *is false for a task
 * that moves nothing on the fabric (compute, expansion memory, ring CP's
 * exposed part and DeepEP's split all-to-all, which keep their closed
 * forms). */
static xfer_kind kind_of_task(const sim_fabric_step *fs, int task_id, bool *is)
{
    const sim_task *t = &fs->g->tasks[task_id];
    int stream = t->resource % fs->per_stage;
    xfer_kind k = {.resource = t->resource, .stage = t->stage, .group = -1};
    *is = false;
    if ((t->kind == STEP_K_SEND_FWD && stream == STEP_R_PP_FWD) ||
        (t->kind == STEP_K_SEND_BWD && stream == STEP_R_PP_BWD)) {
        *is = fs->p2p_bytes > 0.0 && fs->stages > 1;
        k.group = t->kind == STEP_K_SEND_FWD ? SEND_FWD : SEND_BWD;
        k.bytes = fs->p2p_bytes;
        return k;
    }
    const step_coll *c = &fs->coll[task_id];
    bool ring = c->on == STEP_ON_RING_FWD || c->on == STEP_ON_RING_BWD;
    *is = c->coll != COMET_COLL_NONE && !ring && c->bytes > 0.0 && !(c->outer > 0.0);
    k.group = step_group_of(c);
    k.c = c->coll;
    k.bytes = c->bytes;
    return k;
}

/* Whether Themis orders kind k's chunks: a collective (not an
 * all-to-all, whose order stays innermost first) over two or more
 * dimensions, when the run asks for Themis. */
static bool themis_orders(const sim_fabric_step *fs, const xfer_kind *k)
{
    if (!fs->themis_load || k->group < 0 || k->group >= STEP_G_COUNT ||
        k->c == COMET_COLL_ALL_TO_ALL || k->c == COMET_COLL_BARRIER)
        return false;
    int m = 0;
    for (int d = 0; d < fs->sys.n_dims; d++)
        m += fs->groups[k->group].span[d] > 1;
    return m >= 2;
}

/* Themis's schedule for kind k starting now on its stage: each chunk's
 * order of its dimensions from the work the stage's collectives have
 * given them (sim_next_chunk, as the step under congestion picks them),
 * the chunk's work then added. */
static comet_fabric_schedule themis_schedule(sim_fabric_step *fs, const xfer_kind *k)
{
    const int64_t *span = fs->groups[k->group].span;
    int64_t chunks = comet_collective_chunks_for(&fs->sys, span, k->c, k->bytes);
    if (chunks * COMET_MAX_DIMS > (int64_t)sizeof fs->order)
        return (comet_fabric_schedule){0, 1, NULL, 0}; /* more than the flows take: refused there */
    comet_sim_options o;
    comet_sim_options_defaults(&o); /* the flows' costs: no endpoint delay, no memory passes */
    sim_themis_rows(&o, &fs->sys, span, k->c, k->bytes, chunks,
                    fs->themis_load + (size_t)k->stage * COMET_MAX_DIMS, fs->order);
    return (comet_fabric_schedule){chunks, 1, fs->order, 0};
}

/* Starts a transfer of kind k on run r now (ordered by Themis when the
 * run asks and `scheduled`); *id names it. */
static comet_status start(sim_fabric_step *fs, comet_fabric_run *r, const xfer_kind *k,
                          bool scheduled, int64_t *id)
{
    const int64_t *members = fs->stage_npus + (int64_t)k->stage * fs->per_stage_npus;
    if (k->group == SEND_FWD || k->group == SEND_BWD) {
        int peer = (k->stage + (k->group == SEND_FWD ? 1 : fs->stages - 1)) % fs->stages;
        const int64_t *them = fs->stage_npus + (int64_t)peer * fs->per_stage_npus;
        for (int64_t i = 0; i < fs->per_stage_npus; i++) {
            fs->from[i] = members[i];
            fs->to[i] = them[i];
        }
        return fail(fs, comet_fabric_run_sends(r, fs->from, fs->to, fs->per_stage_npus, k->bytes,
                                               id, &fs->err));
    }
    if (!fs->group_ok[k->group])
        return fail(fs, comet_error_set(&fs->err, COMET_EINPUT, NULL, 0, 0, "--flows",
                                        "a collective's group cannot run on the fabric: %s",
                                        fs->group_why[k->group]));
    comet_fabric_group g = fs->groups[k->group];
    g.members = members;
    comet_fabric_schedule sch = {0, 1, NULL, 0};
    if (scheduled && themis_orders(fs, k))
        sch = themis_schedule(fs, k);
    return fail(fs, comet_fabric_run_collective(r, &g, k->c, k->bytes, &sch, id, &fs->err));
}

/* Kind k simulated alone: its time, the links it used and their bytes. */
static comet_status measure(sim_fabric_step *fs, xfer_kind *k)
{
    comet_fabric_run *r;
    if (fail(fs, comet_fabric_run_new(fs->f, &fs->sys, fs->max_flows, &r, &fs->err)))
        return fs->st;
    int64_t id;
    comet_status st = start(fs, r, k, false, &id); /* its links, whatever its order */
    if (!st)
        st = fail(fs, comet_fabric_run_finish(r, &fs->err));
    if (!st) {
        k->time = comet_fabric_run_now(r);
        const double *bytes = comet_fabric_run_link_bytes(r);
        for (int64_t l = 0; l < fs->f_links; l++)
            k->n_links += bytes[l] > 0.0;
        size_t n_links = (size_t)(k->n_links > 0 ? k->n_links : 1);
        k->links = malloc(sizeof *k->links * n_links);
        k->link_bytes = malloc(sizeof *k->link_bytes * n_links);
        if (!k->links || !k->link_bytes)
            st = oom(fs);
        for (int64_t l = 0, n = 0; !st && l < fs->f_links; l++)
            if (bytes[l] > 0.0) {
                k->link_bytes[n] = bytes[l];
                k->links[n++] = (int32_t)l;
            }
    }
    comet_fabric_run_free(r);
    return st;
}

static bool same_kind(const xfer_kind *a, const xfer_kind *b)
{
    return a->resource == b->resource && a->group == b->group && a->c == b->c &&
           a->bytes == b->bytes;
}

/* The table's kind equal to k, added (and measured) when new. */
static int kind_index(sim_fabric_step *fs, const xfer_kind *k)
{
    for (int i = fs->n_kinds - 1; i >= 0; i--)
        if (same_kind(&fs->kinds[i], k))
            return i;
    if (fs->n_kinds == fs->cap_kinds) {
        int cap = fs->cap_kinds ? 2 * fs->cap_kinds : 32;
        xfer_kind *x = realloc(fs->kinds, sizeof *x * (size_t)cap);
        if (!x) {
            oom(fs);
            return -1;
        }
        fs->kinds = x;
        fs->cap_kinds = cap;
    }
    xfer_kind *x = &fs->kinds[fs->n_kinds];
    *x = *k;
    x->links = NULL;
    x->link_bytes = NULL;
    x->n_links = 0;
    if (measure(fs, x) != COMET_OK) {
        free(x->links);
        free(x->link_bytes);
        return -1;
    }
    return fs->n_kinds++;
}

/* Every task's kind, and which kinds run alone in this graph: those whose
 * links no other stream's transfers use. */
static comet_status classify(sim_fabric_step *fs)
{
    const sim_graph *g = fs->g;
    free(fs->kind_of);
    fs->kind_of = malloc(sizeof *fs->kind_of * (size_t)(g->n > 0 ? g->n : 1));
    if (!fs->kind_of)
        return oom(fs);
    for (int k = 0; k < fs->n_kinds; k++)
        fs->kinds[k].uses = fs->kinds[k].ran_alone = 0;
    int last = -1;
    for (int t = 0; t < g->n; t++) {
        bool is;
        xfer_kind k = kind_of_task(fs, t, &is);
        fs->kind_of[t] = -1;
        if (!is)
            continue;
        int i = last >= 0 && same_kind(&fs->kinds[last], &k) ? last : kind_index(fs, &k);
        if (i < 0)
            return fs->st;
        fs->kinds[i].uses++;
        fs->kind_of[t] = last = i;
    }
    for (int64_t l = 0; l < fs->f_links; l++)
        fs->link_owner[l] = -1;
    for (int k = 0; k < fs->n_kinds; k++) {
        const xfer_kind *x = &fs->kinds[k];
        for (int64_t j = 0; x->uses > 0 && j < x->n_links; j++) {
            int32_t *o = &fs->link_owner[x->links[j]];
            *o = *o == -1 || *o == x->resource ? x->resource : -2;
        }
    }
    for (int k = 0; k < fs->n_kinds; k++) {
        xfer_kind *x = &fs->kinds[k];
        /* under Themis a collective over several dimensions is ordered
         * by what its stage ran before it: not one time, so flows */
        x->alone = !themis_orders(fs, x);
        for (int64_t j = 0; x->uses > 0 && j < x->n_links && x->alone; j++)
            x->alone = fs->link_owner[x->links[j]] == x->resource;
    }
    return COMET_OK;
}

/* As the engine starts task_id: a transfer that runs alone takes its
 * kind's time (0: the engine runs it for that duration); one that shares
 * links starts its flows on the run (1). */
static int start_task(void *ctx, int task_id, comet_fabric_run *run, int64_t *id,
                      double *tail, comet_error *err)
{
    sim_fabric_step *fs = ctx;
    (void)tail; /* the step's transfers wait nothing past their flows */
    int k = fs->kind_of[task_id];
    if (k < 0)
        return 0;
    xfer_kind *x = &fs->kinds[k];
    if (x->alone) {
        /* nothing else on its links, ever: its time alone, exactly */
        fs->g->tasks[task_id].duration = x->time;
        fs->alone_transfers++;
        x->ran_alone++;
        return 0;
    }
    if (start(fs, run, x, true, id) != COMET_OK) {
        *err = fs->err;
        return -1;
    }
    fs->flows_transfers++;
    return 1;
}

/* ---- seeing it: the links over the step ---------------------------------------- */

void comet_sim_fabric_links_free(comet_sim_fabric_links *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n_series && i < COMET_FABRIC_HOT_LINKS; i++) {
        free(l->series[i].t);
        free(l->series[i].utilization);
        free(l->series[i].queue);
        free(l->series[i].paused);
    }
    memset(l, 0, sizeof *l);
}

/* fs->link_total: each kind's bytes per link times its count, alone kinds
 * only or every kind (counted: ran_alone, or uses). */
static void kinds_bytes(sim_fabric_step *fs, bool alone_only)
{
    for (int64_t l = 0; l < fs->f_links; l++)
        fs->link_total[l] = 0.0;
    for (int k = 0; k < fs->n_kinds; k++) {
        const xfer_kind *x = &fs->kinds[k];
        double times = (double)(alone_only ? x->ran_alone : x->uses);
        for (int64_t j = 0; times > 0.0 && j < x->n_links; j++)
            fs->link_total[x->links[j]] += times * x->link_bytes[j];
    }
}

typedef struct link_load {
    double per_bandwidth;        /* bytes / bandwidth: utilization times the time */
    int64_t link;
} link_load;

static int by_load(const void *a, const void *b)
{
    const link_load *x = a, *y = b;
    if (x->per_bandwidth != y->per_bandwidth)
        return x->per_bandwidth > y->per_bandwidth ? -1 : 1;
    return (x->link > y->link) - (x->link < y->link);
}

/* Before the run: the links that will be the most utilized (the most
 * bytes per bandwidth over the graph: every transfer's bytes per link
 * are its kind's), named, and watched on the run. */
static comet_status watch_hot(sim_fabric_step *fs)
{
    comet_sim_fabric_links *out = fs->links;
    comet_sim_fabric_links_free(out); /* an earlier run's (extrapolated steps run several) */
    kinds_bytes(fs, false);
    int64_t n = 0;
    for (int64_t l = 0; l < fs->f_links; l++)
        n += fs->link_total[l] > 0.0;
    link_load *load = malloc(sizeof *load * (size_t)(n > 0 ? n : 1));
    if (!load)
        return oom(fs);
    n = 0;
    for (int64_t l = 0; l < fs->f_links; l++) {
        comet_fabric_link info;
        comet_fabric_link_of(fs->f, l, &info);
        if (fs->link_total[l] > 0.0 && info.bandwidth > 0.0)
            load[n++] = (link_load){fs->link_total[l] / info.bandwidth, l};
    }
    qsort(load, (size_t)n, sizeof *load, by_load);
    out->n_hot = n < COMET_FABRIC_HOT_LINKS ? (int)n : COMET_FABRIC_HOT_LINKS;
    for (int i = 0; i < out->n_hot; i++) {
        comet_sim_link *h = &out->hot[i];
        comet_fabric_link info;
        comet_fabric_link_of(fs->f, load[i].link, &info);
        h->link = load[i].link;
        h->tier = info.tier < 3 ? info.tier : 2;
        h->bandwidth = info.bandwidth;
        comet_fabric_link_name(fs->f, h->link, h->name, sizeof h->name);
        out->series[i].link = h->link;
    }
    free(load);
    out->n_series = out->n_hot;
    return fail(fs, comet_fabric_run_watch(fs->run, out->n_series, out->series,
                                           &out->series_cut, &fs->err));
}

/* After the run: what every link carried, the flows' bytes (the run's)
 * and the alone kinds' (their measurements, as often as they ran). */
static void settle_links(sim_fabric_step *fs, double time)
{
    comet_sim_fabric_links *out = fs->links;
    const double *flows = comet_fabric_run_link_bytes(fs->run);
    kinds_bytes(fs, true);
    out->time = time;
    comet_fabric_run_cc(fs->run, &out->cc);
    for (int64_t l = 0; l < fs->f_links; l++) {
        if (flows[l] <= 0.0 && fs->link_total[l] <= 0.0)
            continue;
        comet_fabric_link info;
        comet_fabric_link_of(fs->f, l, &info);
        int tier = info.tier < 3 ? info.tier : 2;
        out->bytes_per_tier[tier] += flows[l] + fs->link_total[l];
        out->alone_per_tier[tier] += fs->link_total[l];
    }
    for (int i = 0; i < out->n_hot; i++) {
        comet_sim_link *h = &out->hot[i];
        h->alone_bytes = fs->link_total[h->link];
        h->bytes = flows[h->link] + h->alone_bytes;
        h->utilization = time > 0.0 ? h->bytes / (h->bandwidth * time) : 0.0;
    }
}

comet_status sim_fabric_step_run(sim_fabric_step *fs, sim_graph *g, const step_coll *coll,
                                 int per_stage, double p2p_bytes, double *makespan,
                                 void (*name_task)(const sim_task *t, void *ctx, char *out,
                                                  size_t cap),
                                 comet_error *err)
{
    comet_fabric_run_free(fs->run);
    fs->run = NULL;
    fs->g = g;
    fs->coll = coll;
    fs->per_stage = per_stage;
    fs->p2p_bytes = p2p_bytes;
    fs->st = COMET_OK;
    fs->flows_transfers = fs->alone_transfers = 0;
    if (fs->themis_load)
        memset(fs->themis_load, 0, sizeof *fs->themis_load * (size_t)fs->stages * COMET_MAX_DIMS);
    comet_status st = comet_fabric_run_new(fs->f, &fs->sys, fs->max_flows, &fs->run, err);
    if (!st && classify(fs) != COMET_OK) {
        *err = fs->err;
        st = fs->st;
    }
    if (!st && fs->links && watch_hot(fs) != COMET_OK) {
        *err = fs->err;
        st = fs->st;
    }
    if (st)
        return st;
    st = sim_run_on_fabric(g, fs->run, start_task, fs, makespan, name_task, NULL, err);
    double ignored;
    if (!st && fs->links && !(st = comet_fabric_run_next(fs->run, &ignored, err)))
        settle_links(fs, *makespan); /* the next call recorded the watched links' last step */
    uint64_t events, updates;
    comet_fabric_run_stats(fs->run, &fs->flows, &events, &updates);
    return st;
}

void sim_fabric_step_counts(const sim_fabric_step *fs, int64_t *npus, uint64_t *flows_transfers,
                            uint64_t *alone_transfers, int *kinds, uint64_t *flows)
{
    *npus = fs->npus;
    *flows_transfers = fs->flows_transfers;
    *alone_transfers = fs->alone_transfers;
    *kinds = fs->n_kinds;
    *flows = fs->flows;
}
