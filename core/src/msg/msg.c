/*
 * msg.c — storage of message payloads: inline bytes, heap buffers, user
 * buffers with a free function, borrowed buffers and receive-chunk slices.
 *
 * Design notes
 *  - The layout is fixed by msg.h. This file owns the rules for the shared
 *    owner (zl_content_t): who takes references, who drops them, and what
 *    the last release does for each kind.
 *  - Reference counts are C11 atomics and nothing here takes a lock. A new
 *    reference (zl_msg_share in msg.h, zl_msg_init_slice here) is a relaxed
 *    increment: the taker already holds a reference, so the content cannot
 *    vanish under it. A drop uses acq_rel so
 *    every holder's writes to the payload happen before the free.
 *  - A holder that sees a count of 1 is the only holder left (no one else
 *    can reach the content to copy it), so it frees without the atomic
 *    read-modify-write: the common "init, send, close" path pays one load.
 *  - HEAP: one malloc holds the header (rounded up to max_align_t) and the
 *    payload. EXT: the header is malloc'd, the payload is the user's; ffn
 *    runs exactly once, on the thread that drops the last reference. SLICE:
 *    the header is the first member of a zl_chunk_t; the chunk is freed when
 *    the engine's reference and every slice's reference are gone. BORROW
 *    and INLINE have no header at all.
 *  - Threads: a message is used by one thread at a time; content may be
 *    released from any thread.
 *  - HEAP blocks up to 2 KiB (header + payload; two size classes) come from
 *    a block pool. The usual pattern is "an application thread allocates, an I/O
 *    thread frees after writing", which makes malloc take the allocating
 *    thread's arena lock on both sides for every message. The pool gives
 *    each thread a private cache; a thread that frees more than it
 *    allocates hands whole batches of ZL_POOL_BATCH blocks to its class's
 *    global list (one lock per batch), where allocating threads pick them
 *    up. A thread's cache goes back to the global lists when the thread
 *    exits. A global list keeps at most ZL_POOL_LIST_BYTES; what a burst
 *    frees beyond that goes back to free(), so the pool never holds more
 *    than that per class plus the threads' caches.
 *  - Blocks of 64 KiB to about 4 MiB (HEAP payloads, receive chunks) come
 *    from a large-block cache: one list under one lock (a lock per block
 *    costs nothing next to filling one), sizes rounded up to 4 KiB, a
 *    block taken when it is at most a quarter larger than asked. Without
 *    it each such block was a fresh mapping, or heap memory that malloc
 *    had just trimmed back: a page fault and a cleared page for every
 *    4 KiB, on the thread that fills the block. The cache keeps at most
 *    BIG_BYTES; a miss drops its oldest block, so blocks of sizes no
 *    longer asked for do not stay. The block's size is kept in the
 *    content (block), its origin in hint.
 */
#include "msg/msg.h"

#include <assert.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

/* Payload offset inside a HEAP allocation: the header rounded up so the
 * payload is aligned for any type. */
#define ZL_HEAP_HDR                                                           \
    ((sizeof(zl_content_t) + alignof(max_align_t) - 1) &                      \
     ~(size_t)(alignof(max_align_t) - 1))

/* Largest payload we ask the allocator for. Objects above PTRDIFF_MAX cannot
 * exist in C; refusing them early also keeps sanitizer allocators from
 * aborting on absurd sizes. */
#define ZL_PAYLOAD_MAX ((size_t)PTRDIFF_MAX - ZL_HEAP_HDR - sizeof(zl_chunk_t))

/* --------------------------------------------------------- block pool */

/* Block sizes of the pool's classes, header included: 256 bytes holds the
 * payloads just above the inline limit, 2,048 those up to about 2 KiB
 * (1 KiB records, which otherwise cost a malloc and a free each on two
 * threads). Larger payloads go to malloc. Under AddressSanitizer there is
 * no class: every block goes through malloc/free so that a use after free
 * of a message payload is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define ZL_POOL_CLASSES 0
static const size_t pool_block_size[2] = {1, 1}; /* never used */
#else
#define ZL_POOL_CLASSES 2
static const size_t pool_block_size[2] = {256, 2048};
#endif
#define ZL_POOL_BATCH 64          /* blocks moved to or from a global list at once */
#define ZL_POOL_LIST_BYTES (8u << 20) /* a global list holds at most this much;
                                         blocks past it go back to free() */

/* A free block; the first block of a batch also links the next batch. */
typedef struct pool_block {
    struct pool_block *next;
    struct pool_block *next_batch;
} pool_block_t;

typedef struct pool_cache {
    pool_block_t *head;
    int count;
} pool_cache_t;

/* One class's global list of full batches. */
typedef struct pool_class {
    pthread_mutex_t lk;
    pool_block_t *batches; /* under lk */
    size_t nbatches;       /* under lk */
} pool_class_t;

/* Room for the classes (none are used under AddressSanitizer). */
#define ZL_POOL_SLOTS 2
static pool_class_t pool_classes[ZL_POOL_SLOTS] = {{PTHREAD_MUTEX_INITIALIZER, NULL, 0},
                                                   {PTHREAD_MUTEX_INITIALIZER, NULL, 0}};
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static _Thread_local pool_cache_t pool_cache[ZL_POOL_SLOTS];
static _Thread_local bool pool_registered; /* the exit hook knows this thread */

/* The class whose blocks hold n bytes, or -1 (malloc). */
static int pool_class_of(size_t n)
{
    for (int k = 0; k < ZL_POOL_CLASSES; k++)
        if (n <= pool_block_size[k])
            return k;
    return -1;
}

/* Hands one batch (linked by next) of class k to its global list, or back
 * to free() when the list is full. Any thread. */
static void pool_give_batch(int k, pool_block_t *first)
{
    pool_class_t *pcl = &pool_classes[k];
    size_t cap = ZL_POOL_LIST_BYTES / (ZL_POOL_BATCH * pool_block_size[k]);
    pthread_mutex_lock(&pcl->lk);
    bool kept = pcl->nbatches < cap;
    if (kept) {
        first->next_batch = pcl->batches;
        pcl->batches = first;
        pcl->nbatches++;
    }
    pthread_mutex_unlock(&pcl->lk);
    while (!kept && first != NULL) {
        pool_block_t *next = first->next;
        free(first);
        first = next;
    }
}

/* Thread exit: each class's cached blocks go to its global list. */
static void pool_thread_exit(void *arg)
{
    pool_cache_t *caches = arg;
    for (int k = 0; k < ZL_POOL_CLASSES; k++) {
        pool_block_t *first = caches[k].head;
        caches[k].head = NULL;
        caches[k].count = 0;
        if (first != NULL)
            pool_give_batch(k, first);
    }
}

static void pool_init_key(void)
{
    (void)pthread_key_create(&pool_key, pool_thread_exit);
}

static void pool_register(void)
{
    pthread_once(&pool_once, pool_init_key);
    (void)pthread_setspecific(pool_key, pool_cache);
    pool_registered = true;
}

/* A block of class k, or NULL. Any thread; locks the class's list once per
 * ZL_POOL_BATCH blocks at most. */
static void *pool_alloc(int k)
{
    pool_cache_t *pc = &pool_cache[k];
    if (pc->head == NULL) {
        pool_class_t *pcl = &pool_classes[k];
        pthread_mutex_lock(&pcl->lk);
        pool_block_t *batch = pcl->batches;
        if (batch != NULL) {
            pcl->batches = batch->next_batch;
            pcl->nbatches--;
        }
        pthread_mutex_unlock(&pcl->lk);
        if (batch == NULL)
            return malloc(pool_block_size[k]);
        if (!pool_registered)
            pool_register();
        pc->head = batch;
        pc->count = 0;
        for (pool_block_t *b = batch; b != NULL; b = b->next)
            pc->count++;
    }
    pool_block_t *b = pc->head;
    pc->head = b->next;
    pc->count--;
    return b;
}

/* Returns a block of class k to the calling thread's cache; past two
 * batches, one batch moves to the global list. Any thread. */
static void pool_free(void *p, int k)
{
    pool_cache_t *pc = &pool_cache[k];
    if (!pool_registered)
        pool_register();
    pool_block_t *b = p;
    b->next = pc->head;
    pc->head = b;
    if (++pc->count < 2 * ZL_POOL_BATCH)
        return;
    /* Detach the first ZL_POOL_BATCH blocks as one batch. */
    pool_block_t *last = b;
    for (int i = 1; i < ZL_POOL_BATCH; i++)
        last = last->next;
    pc->head = last->next;
    last->next = NULL;
    pc->count -= ZL_POOL_BATCH;
    pool_give_batch(k, b);
}

/* --------------------------------------------------- large blocks */

#if defined(__SANITIZE_ADDRESS__)
#define BIG_CACHE 0 /* no cache: a use after free stays visible */
#else
#define BIG_CACHE 1
#endif
#define BIG_MIN (64u * 1024)                  /* smallest block cached */
#define BIG_MAX ((size_t)4 * 1024 * 1024 + 64 * 1024) /* largest */
#define BIG_ROUND 4096u                       /* sizes rounded up to this */
#define BIG_BYTES (8u << 20)                  /* the cache keeps at most this */
#define BIG_SLOTS (BIG_BYTES / BIG_MIN)

typedef struct big_slot {
    void *p;
    size_t size;
} big_slot_t;

/* The cached blocks, oldest first. */
static struct {
    pthread_mutex_t lk;
    size_t n;     /* under lk */
    size_t bytes; /* under lk */
    big_slot_t slot[BIG_SLOTS];
} big_cache = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {{NULL, 0}}};

/* Whether a block of n bytes goes through the cache. */
static bool big_sized(size_t n)
{
    return BIG_CACHE && n >= BIG_MIN && n <= BIG_MAX;
}

/* A block of at least n bytes (big_sized(n)); *got = its size. The newest
 * fitting block is taken (its pages are the most likely to be warm); on a
 * miss the oldest block is dropped and a block of n rounded up is
 * allocated. NULL when out of memory. Any thread. */
static void *big_alloc(size_t n, size_t *got)
{
    size_t r = (n + BIG_ROUND - 1) & ~(size_t)(BIG_ROUND - 1);
    void *p = NULL, *stale = NULL;
    pthread_mutex_lock(&big_cache.lk);
    size_t i = big_cache.n;
    bool hit = false;
    while (i > 0 && !hit) {
        const big_slot_t *b = &big_cache.slot[--i];
        hit = b->size >= r && b->size - r <= r / 4;
    }
    if (hit) {
        p = big_cache.slot[i].p;
        *got = big_cache.slot[i].size;
    } else if (big_cache.n > 0) {
        i = 0; /* a miss: the oldest goes */
        stale = big_cache.slot[0].p;
    }
    if (hit || stale != NULL) {
        big_cache.bytes -= big_cache.slot[i].size;
        big_cache.n--;
        memmove(&big_cache.slot[i], &big_cache.slot[i + 1],
                (big_cache.n - i) * sizeof big_cache.slot[0]);
    }
    pthread_mutex_unlock(&big_cache.lk);
    free(stale);
    if (p == NULL) {
        p = malloc(r);
        *got = r;
    }
    return p;
}

/* Gives a block from big_alloc back: kept when the cache has room, else
 * freed. Any thread. */
static void big_free(void *p, size_t size)
{
    pthread_mutex_lock(&big_cache.lk);
    if (big_cache.n < BIG_SLOTS && big_cache.bytes + size <= BIG_BYTES) {
        big_cache.slot[big_cache.n].p = p;
        big_cache.slot[big_cache.n].size = size;
        big_cache.n++;
        big_cache.bytes += size;
        p = NULL;
    }
    pthread_mutex_unlock(&big_cache.lk);
    free(p);
}

size_t zl_msg_big_cached_bytes(void)
{
    pthread_mutex_lock(&big_cache.lk);
    size_t bytes = big_cache.bytes;
    pthread_mutex_unlock(&big_cache.lk);
    return bytes;
}

size_t zl_msg_pool_listed_bytes(void)
{
    size_t total = 0;
    for (int k = 0; k < ZL_POOL_CLASSES; k++) {
        pthread_mutex_lock(&pool_classes[k].lk);
        total += pool_classes[k].nbatches * ZL_POOL_BATCH * pool_block_size[k];
        pthread_mutex_unlock(&pool_classes[k].lk);
    }
    return total;
}

/* Runs the last-release action of c. Called by content_release only, on the
 * thread that dropped the final reference; no lock. */
static void content_destroy(zl_content_t *c)
{
    switch (c->kind) {
    case ZL_MSG_EXT: {
        zlink_free_fn *ffn = c->ffn;
        void *data = c->data;
        void *hint = c->hint;
        free(c);
        ffn(data, hint);
        break;
    }
    case ZL_MSG_SLICE: {
        zl_chunk_t *ch = (zl_chunk_t *)(void *)((char *)c - offsetof(zl_chunk_t, c));
        if (c->hint == (void *)&big_cache)
            big_free(ch, c->block);
        else
            free(ch);
        break;
    }
    case ZL_MSG_HEAP: {
        /* hint points at the class of a pooled block, or at the large-block
         * cache (HEAP uses it for nothing else). */
        pool_class_t *pcl = c->hint;
        if (c->hint == (void *)&big_cache)
            big_free(c, c->block);
        else if (pcl >= pool_classes && pcl < pool_classes + ZL_POOL_CLASSES)
            pool_free(c, (int)(pcl - pool_classes));
        else
            free(c);
        break;
    }
    default:
        free(c);
        break;
    }
}

/* Drops one reference; the last one destroys the content. Any thread; no
 * lock; never blocks (ffn may, at the user's choice). */
static void content_release(zl_content_t *c)
{
    if (atomic_load_explicit(&c->refs, memory_order_acquire) == 1 ||
        atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
        content_destroy(c);
}

void zl_msg_release(zlink_msg_t *m)
{
    zl_msg_t *x = zl_msg(m);
    switch (x->type) {
    case ZL_MSG_HEAP:
    case ZL_MSG_EXT:
    case ZL_MSG_SLICE:
        content_release(x->u.ref.content);
        break;
    default: /* INLINE and BORROW own nothing */
        break;
    }
    x->tag = 0;
}

/* Called by zlink_msg_init_size (data NULL: the payload is left unwritten),
 * zl_msg_init_slice and engines. Any thread; no lock; on ENOMEM m is not
 * touched and nothing is owned. */
int zl_msg_init_copy(zlink_msg_t *m, const void *data, size_t size)
{
    zl_msg_t *x = zl_msg(m);
    if (size <= ZLINK_MSG_INLINE_MAX) {
        x->type = ZL_MSG_INLINE;
        x->isize = (uint8_t)size;
        if (data != NULL && size > 0)
            memcpy(x->u.inl, data, size);
        x->tag = ZL_MSG_TAG;
        return 0;
    }
    if (size > ZL_PAYLOAD_MAX)
        return ENOMEM;
    size_t total = ZL_HEAP_HDR + size;
    int k = pool_class_of(total);
    bool big = k < 0 && big_sized(total);
    size_t block = 0;
    zl_content_t *c = k >= 0 ? pool_alloc(k) : big ? big_alloc(total, &block) : malloc(total);
    if (c == NULL)
        return ENOMEM;
    unsigned char *payload = (unsigned char *)c + ZL_HEAP_HDR;
    atomic_init(&c->refs, 1);
    c->kind = ZL_MSG_HEAP;
    c->ffn = NULL;
    /* hint marks a pooled HEAP block with its class, or a cached one with
     * the cache and block its size (HEAP never uses them otherwise). */
    c->hint = k >= 0 ? (void *)&pool_classes[k] : big ? (void *)&big_cache : NULL;
    if (big)
        c->block = block;
    if (data != NULL)
        memcpy(payload, data, size);
    x->type = ZL_MSG_HEAP;
    x->isize = 0;
    x->u.ref.data = payload;
    x->u.ref.size = size;
    x->u.ref.content = c;
    x->tag = ZL_MSG_TAG;
    return 0;
}

zl_chunk_t *zl_chunk_new(size_t cap)
{
    if (cap > ZL_PAYLOAD_MAX)
        return NULL;
    size_t total = sizeof(zl_chunk_t) + cap;
    bool big = big_sized(total);
    size_t block = 0;
    zl_chunk_t *ch = big ? big_alloc(total, &block) : malloc(total);
    if (ch == NULL)
        return NULL;
    atomic_init(&ch->c.refs, 1);
    ch->c.kind = ZL_MSG_SLICE;
    ch->c.ffn = NULL;
    /* A cached block: hint says so, block gives its size (content_destroy). */
    ch->c.hint = big ? (void *)&big_cache : NULL;
    if (big)
        ch->c.block = block;
    else
        ch->c.data = ch->data;
    ch->cap = cap;
    return ch;
}

void zl_chunk_release(zl_chunk_t *ch)
{
    content_release(&ch->c);
}

void zl_msg_init_slice(zlink_msg_t *m, zl_chunk_t *ch, const void *data, size_t size)
{
    assert((const unsigned char *)data >= ch->data &&
           (const unsigned char *)data + size <= ch->data + ch->cap);
    if (size <= ZLINK_MSG_INLINE_MAX) {
        (void)zl_msg_init_copy(m, data, size); /* inline: cannot fail */
        return;
    }
    zl_msg_t *x = zl_msg(m);
    atomic_fetch_add_explicit(&ch->c.refs, 1, memory_order_relaxed);
    x->type = ZL_MSG_SLICE;
    x->isize = 0;
    x->u.ref.data = (void *)data;
    x->u.ref.size = size;
    x->u.ref.content = &ch->c;
    x->tag = ZL_MSG_TAG;
}
