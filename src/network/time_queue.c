/* The flow engine's timed events in buckets of one time (time_queue.h):
 * a min-heap of buckets by (time, index), and the last few buckets pushed
 * to remembered, so a collective step's thousands of flows starting or
 * ending together cost one heap entry, not thousands. The heap itself is
 * the small keyed heap the max-min filling uses too. */
#include "time_queue.h"

#include <stdlib.h>

static int kh_less(const kh_item *a, const kh_item *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}

void kh_sift_down(kh_item *h, int64_t n, int64_t i)
{
    kh_item it = h[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && kh_less(&h[c + 1], &h[c]))
            c++;
        if (!kh_less(&h[c], &it))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = it;
}

void kh_push(kh_item *h, int64_t *n, kh_item it)
{
    int64_t i = (*n)++;
    while (i > 0 && kh_less(&it, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = it;
}

kh_item kh_pop(kh_item *h, int64_t *n)
{
    kh_item top = h[0];
    if (--*n > 0) {
        h[0] = h[*n];
        kh_sift_down(h, *n, 0);
    }
    return top;
}

void tq_free(time_queue *q)
{
    for (int64_t b = 0; b < q->n_buckets; b++)
        free(q->buckets[b].items);
    free(q->buckets);
    free(q->spare);
    free(q->heap);
    *q = (time_queue){0};
}

/* A bucket for time `at`, new or reused, in the heap and the recent list. */
static int64_t new_bucket(time_queue *q, double at)
{
    int64_t b;
    if (q->n_spare > 0) {
        b = q->spare[--q->n_spare];
    } else {
        if (q->n_buckets == q->cap_buckets) {
            int64_t cap = q->cap_buckets ? 2 * q->cap_buckets : 64;
            tq_bucket *x = realloc(q->buckets, (size_t)cap * sizeof *x);
            if (!x)
                return -1;
            q->buckets = x;
            int64_t *s = realloc(q->spare, (size_t)cap * sizeof *s);
            if (!s)
                return -1;
            q->spare = s;
            q->cap_buckets = cap;
        }
        b = q->n_buckets++;
        q->buckets[b] = (tq_bucket){0};
    }
    if (q->n_heap == q->cap_heap) {
        int64_t cap = q->cap_heap ? 2 * q->cap_heap : 64;
        kh_item *x = realloc(q->heap, (size_t)cap * sizeof *x);
        if (!x) {
            q->spare[q->n_spare++] = b;
            return -1;
        }
        q->heap = x;
        q->cap_heap = cap;
    }
    tq_bucket *bk = &q->buckets[b];
    bk->at = at;
    bk->n = bk->head = 0;
    kh_push(q->heap, &q->n_heap, (kh_item){at, b});
    int keep = q->n_recent < TQ_RECENT ? q->n_recent : TQ_RECENT - 1;
    for (int k = keep; k > 0; k--)
        q->recent[k] = q->recent[k - 1];
    q->recent[0] = b;
    q->n_recent = keep + 1;
    return b;
}

int tq_push(time_queue *q, double at, int64_t id, uint32_t version)
{
    int64_t b = -1;
    for (int k = 0; k < q->n_recent && b < 0; k++)
        if (q->buckets[q->recent[k]].at == at)
            b = q->recent[k];
    if (b < 0 && (b = new_bucket(q, at)) < 0)
        return -1;
    tq_bucket *bk = &q->buckets[b];
    if (bk->n == bk->cap) {
        int64_t cap = bk->cap ? 2 * bk->cap : 16;
        tq_item *x = realloc(bk->items, (size_t)cap * sizeof *x);
        if (!x)
            return -1;
        bk->items = x;
        bk->cap = cap;
    }
    bk->items[bk->n++] = (tq_item){at, id, version};
    q->items++;
    return 0;
}

/* Drops the heap's top bucket (emptied) from the heap and the recent list. */
static void retire_top(time_queue *q)
{
    int64_t b = kh_pop(q->heap, &q->n_heap).id;
    for (int k = 0; k < q->n_recent; k++)
        if (q->recent[k] == b) {
            for (int j = k; j + 1 < q->n_recent; j++)
                q->recent[j] = q->recent[j + 1];
            q->n_recent--;
            break;
        }
    q->spare[q->n_spare++] = b;
}

const tq_item *tq_peek(time_queue *q)
{
    while (q->n_heap > 0) {
        tq_bucket *bk = &q->buckets[q->heap[0].id];
        if (bk->head < bk->n)
            return &bk->items[bk->head];
        retire_top(q);
    }
    return NULL;
}

void tq_pop(time_queue *q)
{
    if (q->n_heap > 0) {
        q->buckets[q->heap[0].id].head++;
        q->items--;
    }
}

int64_t tq_ahead(const time_queue *q, int64_t ahead)
{
    if (q->n_heap == 0)
        return -1;
    const tq_bucket *bk = &q->buckets[q->heap[0].id];
    return bk->head + ahead < bk->n ? bk->items[bk->head + ahead].id : -1;
}

void tq_clear(time_queue *q)
{
    while (q->n_heap > 0)
        retire_top(q);
    q->items = 0;
}
