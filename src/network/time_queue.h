/* Private to src/network: the flow engine's queue of timed events (a
 * flow's latency over, a flow's projected end), ordered by time. Flows of
 * a collective's step start and end at the very same times, so items of
 * one time share a bucket: a push that meets a recent bucket of its time
 * appends to it, and the heap orders buckets, not items. An uneven run
 * degrades to one item a bucket, a plain heap. */
#ifndef COMET_NETWORK_TIME_QUEUE_H
#define COMET_NETWORK_TIME_QUEUE_H

#include <stdint.h>

/* A binary min-heap of (key, id), ties broken by id, in a caller's array:
 * the time queue's buckets and the max-min filling's link shares. */
typedef struct kh_item {
    double key;
    int64_t id;
} kh_item;

void kh_sift_down(kh_item *h, int64_t n, int64_t i);
/* Appends it at h[*n] (room for it is the caller's) and sifts it up. */
void kh_push(kh_item *h, int64_t *n, kh_item it);
/* Removes and returns h[0]; *n > 0. */
kh_item kh_pop(kh_item *h, int64_t *n);

typedef struct tq_item {
    double at;
    int64_t id;
    uint32_t version;
} tq_item;

typedef struct tq_bucket {
    double at;
    tq_item *items;
    int64_t n, cap, head;   /* items[head..n) still queued */
} tq_bucket;

#define TQ_RECENT 8

typedef struct time_queue {
    tq_bucket *buckets;
    int64_t n_buckets, cap_buckets;
    int64_t *spare;          /* emptied buckets, for reuse */
    int64_t n_spare;
    kh_item *heap;           /* buckets by (at, index) */
    int64_t n_heap, cap_heap;
    int64_t recent[TQ_RECENT];
    int n_recent;
    int64_t items;           /* queued */
} time_queue;

void tq_free(time_queue *q);
/* Returns 0, or -1 when out of memory. */
int tq_push(time_queue *q, double at, int64_t id, uint32_t version);
/* The earliest item (the first pushed of its time), NULL when empty. */
const tq_item *tq_peek(time_queue *q);
/* Removes the item tq_peek returned. */
void tq_pop(time_queue *q);
/* The id of the item `ahead` places after the one tq_peek returned, when
 * it is of the same time (-1 otherwise): what a caller walking the queue
 * will soon read, for it to fetch early. */
int64_t tq_ahead(const time_queue *q, int64_t ahead);
/* Empties the queue (keeping its memory). */
void tq_clear(time_queue *q);

#endif
