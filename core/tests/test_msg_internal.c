/*
 * test_msg_internal.c — unit tests of core/src/msg.h internals: the
 * message types (INLINE, HEAP, EXT, BORROW, SLICE), the reference count
 * of shared content, receive chunks and their slices, the multipart
 * release helpers, and the small-block pool behind HEAP payloads.
 *
 * Design notes
 *  - Cases look inside zl_msg_t (type, inline size, content pointer,
 *    reference count) as msg.h lays it out: that layout is what the rest of
 *    the core relies on. What the last release frees is checked by a
 *    counting free function (EXT) and by ASan's leak check (HEAP, SLICE).
 *  - The public behaviour of zlink_msg_* is test_message.c's; this file is
 *    about what lies under it.
 */
#include "msg/msg.h"
#include "zltest.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static atomic_int freed;
static void *freed_data;
static void *freed_hint;

static void count_free(void *data, void *hint)
{
    freed_data = data;
    freed_hint = hint;
    atomic_fetch_add(&freed, 1);
}

static uint32_t refs_of(const zlink_msg_t *m)
{
    return atomic_load(&zl_cmsg(m)->u.ref.content->refs);
}

/* Payloads up to ZLINK_MSG_INLINE_MAX live in the message (INLINE, no
 * content); one byte more is a HEAP payload with one reference, aligned
 * for any type; NULL data leaves the bytes unwritten but sized. */
static void init_copy_inline_or_heap(void)
{
    unsigned char src[ZLINK_MSG_INLINE_MAX + 1];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i + 1);
    zlink_msg_t m;

    ZT_EQ_INT(zl_msg_init_copy(&m, src, ZLINK_MSG_INLINE_MAX), 0);
    ZT_CHECK(zl_msg_valid(&m));
    ZT_EQ_INT(zl_cmsg(&m)->type, ZL_MSG_INLINE);
    ZT_EQ_INT(zl_cmsg(&m)->isize, ZLINK_MSG_INLINE_MAX);
    ZT_EQ_INT(zl_msg_size(&m), ZLINK_MSG_INLINE_MAX);
    ZT_CHECK(zl_msg_data(&m) == (void *)zl_msg(&m)->u.inl);
    ZT_EQ_MEM(zl_msg_data(&m), src, ZLINK_MSG_INLINE_MAX);
    zl_msg_release(&m);
    ZT_CHECK(!zl_msg_valid(&m));

    ZT_EQ_INT(zl_msg_init_copy(&m, src, sizeof src), 0);
    ZT_EQ_INT(zl_cmsg(&m)->type, ZL_MSG_HEAP);
    ZT_EQ_INT(zl_msg_size(&m), sizeof src);
    ZT_CHECK(zl_msg_data(&m) != (void *)zl_msg(&m)->u.inl);
    ZT_EQ_MEM(zl_msg_data(&m), src, sizeof src);
    ZT_EQ_INT((uintptr_t)zl_msg_data(&m) % alignof(max_align_t), 0);
    ZT_EQ_INT(refs_of(&m), 1);
    ZT_EQ_INT(zl_cmsg(&m)->u.ref.content->kind, ZL_MSG_HEAP);
    zl_msg_release(&m);
    ZT_CHECK(!zl_msg_valid(&m));

    ZT_EQ_INT(zl_msg_init_copy(&m, NULL, 100000), 0); /* sized, unwritten */
    ZT_EQ_INT(zl_msg_size(&m), 100000);
    memset(zl_msg_data(&m), 0xab, 100000); /* all of it is writable */
    zl_msg_release(&m);

    ZT_EQ_INT(zl_msg_init_copy(&m, NULL, 0), 0);
    ZT_EQ_INT(zl_cmsg(&m)->type, ZL_MSG_INLINE);
    ZT_EQ_INT(zl_msg_size(&m), 0);
    zl_msg_release(&m);
}

/* A size no allocation can hold is ENOMEM before any allocation, and the
 * message is left exactly as it was. */
static void init_copy_too_big_touches_nothing(void)
{
    zlink_msg_t m, before;
    memset(&m, 0x77, sizeof m);
    memcpy(&before, &m, sizeof m);
    ZT_EQ_INT(zl_msg_init_copy(&m, NULL, SIZE_MAX), ENOMEM);
    ZT_EQ_MEM(&m, &before, sizeof m);
    ZT_EQ_INT(zl_msg_init_copy(&m, NULL, (size_t)PTRDIFF_MAX), ENOMEM);
    ZT_EQ_MEM(&m, &before, sizeof m);
    ZT_CHECK(zl_chunk_new(SIZE_MAX) == NULL);
}

/* zl_msg_valid tells an initialized message from anything else. */
static void valid_and_empty(void)
{
    zlink_msg_t m;
    ZT_CHECK(!zl_msg_valid(NULL));
    memset(&m, 0, sizeof m);
    ZT_CHECK(!zl_msg_valid(&m));
    zl_msg_init_empty(&m);
    ZT_CHECK(zl_msg_valid(&m));
    ZT_EQ_INT(zl_cmsg(&m)->type, ZL_MSG_INLINE);
    ZT_EQ_INT(zl_msg_size(&m), 0);
    zl_msg_release(&m);
    ZT_CHECK(!zl_msg_valid(&m));
}

/* Sharing: an inline payload is copied (the copies are independent);
 * HEAP content gains a reference and both see the same bytes; each
 * release drops one, the bytes stay readable until the last. */
static void share_inline_copies_heap_counts(void)
{
    zlink_msg_t a, b;
    ZT_EQ_INT(zl_msg_init_copy(&a, "hello", 5), 0);
    zl_msg_share(&b, &a);
    ((char *)zl_msg_data(&b))[0] = 'j';
    ZT_EQ_MEM(zl_msg_data(&a), "hello", 5);
    ZT_EQ_MEM(zl_msg_data(&b), "jello", 5);
    zl_msg_release(&a);
    zl_msg_release(&b);

    char big[1000];
    memset(big, 'x', sizeof big);
    ZT_EQ_INT(zl_msg_init_copy(&a, big, sizeof big), 0);
    zl_msg_share(&b, &a);
    ZT_CHECK(zl_msg_data(&a) == zl_msg_data(&b));
    ZT_CHECK(zl_cmsg(&a)->u.ref.content == zl_cmsg(&b)->u.ref.content);
    ZT_EQ_INT(refs_of(&a), 2);
    zlink_msg_t c;
    zl_msg_share(&c, &b);
    ZT_EQ_INT(refs_of(&a), 3);
    zl_msg_release(&a);
    ZT_EQ_INT(refs_of(&b), 2);
    ZT_EQ_MEM(zl_msg_data(&c), big, sizeof big);
    zl_msg_release(&c);
    ZT_EQ_INT(refs_of(&b), 1);
    ZT_EQ_MEM(zl_msg_data(&b), big, sizeof big);
    zl_msg_release(&b); /* the last: freed (ASan's leak check) */
}

/* EXT content runs its free function exactly once, at the last release,
 * with the user's pointer and hint; BORROW never frees and counts
 * nothing; a move hands the payload over and leaves the source empty. */
static void ext_borrow_and_move(void)
{
    static char user[100];
    int hint = 0;
    zlink_msg_t a, b, c;
    atomic_store(&freed, 0);
    ZT_EQ_INT(zlink_msg_init_data(&a, user, sizeof user, count_free, &hint), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zl_cmsg(&a)->type, ZL_MSG_EXT);
    ZT_CHECK(zl_msg_data(&a) == user);
    zl_msg_share(&b, &a);
    ZT_EQ_INT(refs_of(&a), 2);
    zl_msg_move_raw(&c, &a);
    ZT_CHECK(zl_msg_valid(&a));
    ZT_EQ_INT(zl_msg_size(&a), 0);
    ZT_EQ_INT(zl_cmsg(&a)->type, ZL_MSG_INLINE);
    ZT_EQ_INT(refs_of(&c), 2); /* a move takes no reference */
    zl_msg_release(&a);
    zl_msg_release(&b);
    ZT_EQ_INT(atomic_load(&freed), 0);
    zl_msg_release(&c);
    ZT_EQ_INT(atomic_load(&freed), 1);
    ZT_CHECK(freed_data == user);
    ZT_CHECK(freed_hint == &hint);

    ZT_EQ_INT(zlink_msg_init_data(&a, user, 10, NULL, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zl_cmsg(&a)->type, ZL_MSG_BORROW);
    ZT_CHECK(zl_cmsg(&a)->u.ref.content == NULL);
    zl_msg_share(&b, &a);
    ZT_CHECK(zl_msg_data(&b) == user);
    zl_msg_release(&a);
    zl_msg_release(&b);
    ZT_EQ_INT(atomic_load(&freed), 1);
}

/* The multipart helpers release exactly the valid parts; the _init form
 * leaves every slot empty and initialized, and accepts NULL. */
static void multipart_release_helpers(void)
{
    static char user[3][64];
    zlink_msg_t parts[4];
    atomic_store(&freed, 0);
    for (int i = 0; i < 3; i++)
        ZT_EQ_INT(zlink_msg_init_data(&parts[i], user[i], 64, count_free, NULL),
                  ZLINK_CONFIG_OK);
    memset(&parts[3], 0, sizeof parts[3]); /* never initialized */
    zl_multipart_release(parts, 4);
    ZT_EQ_INT(atomic_load(&freed), 3);
    for (int i = 0; i < 4; i++)
        ZT_CHECK(!zl_msg_valid(&parts[i]));

    for (int i = 0; i < 3; i++)
        ZT_EQ_INT(zlink_msg_init_data(&parts[i], user[i], 64, count_free, NULL),
                  ZLINK_CONFIG_OK);
    zl_multipart_release_init(parts, 4);
    ZT_EQ_INT(atomic_load(&freed), 6);
    for (int i = 0; i < 3; i++) {
        ZT_CHECK(zl_msg_valid(&parts[i]));
        ZT_EQ_INT(zl_msg_size(&parts[i]), 0);
    }
    ZT_CHECK(!zl_msg_valid(&parts[3])); /* was not valid: left alone */
    zl_multipart_release_init(NULL, 4);
    zl_multipart_release_init(parts, 0);
    ZT_EQ_INT(atomic_load(&freed), 6);
    for (int i = 0; i < 3; i++)
        zl_msg_release(&parts[i]);
}

/* A receive chunk starts with the engine's reference; a slice bigger than
 * the inline limit points into the chunk and holds a reference (so do
 * its copies); a small one is copied inline and holds none. The chunk
 * lives until the engine and every slice let go. */
static void chunk_and_slices(void)
{
    zl_chunk_t *ch = zl_chunk_new(4096);
    ZT_CHECK(ch != NULL);
    ZT_EQ_INT(ch->cap, 4096);
    ZT_EQ_INT(ch->c.kind, ZL_MSG_SLICE);
    ZT_EQ_INT(atomic_load(&ch->c.refs), 1);
    for (int i = 0; i < 4096; i++)
        ch->data[i] = (unsigned char)i;

    zlink_msg_t small, big, copy;
    zl_msg_init_slice(&small, ch, ch->data + 10, ZLINK_MSG_INLINE_MAX);
    ZT_EQ_INT(zl_cmsg(&small)->type, ZL_MSG_INLINE);
    ZT_EQ_INT(atomic_load(&ch->c.refs), 1);
    ZT_EQ_MEM(zl_msg_data(&small), ch->data + 10, ZLINK_MSG_INLINE_MAX);

    zl_msg_init_slice(&big, ch, ch->data + 100, 1000);
    ZT_EQ_INT(zl_cmsg(&big)->type, ZL_MSG_SLICE);
    ZT_CHECK(zl_msg_data(&big) == ch->data + 100);
    ZT_EQ_INT(zl_msg_size(&big), 1000);
    ZT_EQ_INT(atomic_load(&ch->c.refs), 2);
    zl_msg_share(&copy, &big);
    ZT_EQ_INT(atomic_load(&ch->c.refs), 3);

    zl_chunk_release(ch); /* the engine is done with it */
    ZT_EQ_INT(atomic_load(&ch->c.refs), 2);
    zl_msg_release(&small);
    ZT_EQ_INT(atomic_load(&ch->c.refs), 2);
    zl_msg_release(&big);
    ZT_EQ_INT(atomic_load(&ch->c.refs), 1);
    for (int i = 0; i < 1000; i++)
        ZT_EQ_INT(((unsigned char *)zl_msg_data(&copy))[i], (unsigned char)(100 + i));
    zl_msg_release(&copy); /* the last: the chunk is freed (ASan) */
}

/* ------------------------------------------------------- across threads */

enum { SHARERS = 8 };

static zlink_msg_t shares[SHARERS];
static pthread_barrier_t start_line;

static void *release_one(void *arg)
{
    zlink_msg_t *m = arg;
    pthread_barrier_wait(&start_line);
    zl_msg_release(m);
    return NULL;
}

/* Copies of one EXT payload released on eight threads at once: the free
 * function runs exactly once, after every release (TSan checks the
 * ordering of the payload's last use before the free). */
static void concurrent_release_frees_once(void)
{
    static char user[256];
    pthread_t t[SHARERS];
    for (int round = 0; round < 200; round++) {
        atomic_store(&freed, 0);
        zlink_msg_t first;
        ZT_EQ_INT(zlink_msg_init_data(&first, user, sizeof user, count_free, NULL),
                  ZLINK_CONFIG_OK);
        for (int i = 0; i < SHARERS; i++)
            zl_msg_share(&shares[i], &first);
        zl_msg_release(&first);
        ZT_EQ_INT(pthread_barrier_init(&start_line, NULL, SHARERS), 0);
        for (int i = 0; i < SHARERS; i++)
            ZT_EQ_INT(pthread_create(&t[i], NULL, release_one, &shares[i]), 0);
        for (int i = 0; i < SHARERS; i++)
            ZT_EQ_INT(pthread_join(t[i], NULL), 0);
        pthread_barrier_destroy(&start_line);
        ZT_EQ_INT(atomic_load(&freed), 1);
    }
}

enum { HANDOFF = 512, HANDOFF_ROUNDS = 200 };

/* One slot per message in flight from the producer to the consumer. */
static zlink_msg_t handoff[HANDOFF];
static atomic_int handoff_ready[HANDOFF];

static void *consume_all(void *arg)
{
    (void)arg;
    for (int round = 0; round < HANDOFF_ROUNDS; round++) {
        for (int i = 0; i < HANDOFF; i++) {
            while (atomic_load(&handoff_ready[i]) != round + 1)
                sched_yield();
            unsigned char *p = zl_msg_data(&handoff[i]);
            size_t n = zl_msg_size(&handoff[i]);
            for (size_t k = 0; k < n; k++)
                ZT_EQ_INT(p[k], (unsigned char)(i + round));
            zl_msg_release(&handoff[i]);
            atomic_store(&handoff_ready[i], -(round + 1));
        }
    }
    return NULL;
}

/* The usual pattern of HEAP payloads: one thread allocates, another frees
 * (through the block pool's classes when it is built in). Every payload keeps
 * its own bytes while live, however blocks travel between the threads. */
static void alloc_here_free_there(void)
{
    pthread_t c;
    for (int i = 0; i < HANDOFF; i++)
        atomic_init(&handoff_ready[i], 0);
    ZT_EQ_INT(pthread_create(&c, NULL, consume_all, NULL), 0);
    for (int round = 0; round < HANDOFF_ROUNDS; round++) {
        for (int i = 0; i < HANDOFF; i++) {
            while (round > 0 && atomic_load(&handoff_ready[i]) != -round)
                sched_yield();
            /* Both pool classes and, past 2 KiB, malloc'd blocks. */
            unsigned char bytes[2600];
            size_t n = ZLINK_MSG_INLINE_MAX + 1 + (size_t)(i * 97 + round * 13) % 2500;
            memset(bytes, (unsigned char)(i + round), n);
            ZT_EQ_INT(zl_msg_init_copy(&handoff[i], bytes, n), 0);
            ZT_EQ_INT(zl_cmsg(&handoff[i])->type, ZL_MSG_HEAP);
            atomic_store(&handoff_ready[i], round + 1);
        }
    }
    ZT_EQ_INT(pthread_join(c, NULL), 0);
}

/* A burst: 12,000 records of 1 KiB (24 MB of the 2,048-byte class) made
 * on this thread and freed on another that then exits, so every block
 * reaches the global lists. They keep at most 8 MiB per class: the rest
 * went back to free(). Records made afterwards still carry their bytes. */
#define BURST 12000
static zlink_msg_t burst[BURST];

static void *free_burst(void *arg)
{
    (void)arg;
    for (int i = 0; i < BURST; i++)
        zl_msg_release(&burst[i]);
    return NULL;
}

static void pool_lists_are_bounded(void)
{
    unsigned char bytes[1024];
    for (int i = 0; i < BURST; i++) {
        memset(bytes, (unsigned char)i, sizeof bytes);
        ZT_EQ_INT(zl_msg_init_copy(&burst[i], bytes, sizeof bytes), 0);
    }
    pthread_t t;
    ZT_EQ_INT(pthread_create(&t, NULL, free_burst, NULL), 0);
    ZT_EQ_INT(pthread_join(t, NULL), 0);
    size_t listed = zl_msg_pool_listed_bytes();
    ZT_CHECK(listed <= 2 * (8u << 20)); /* two classes, 8 MiB each */
    for (int i = 0; i < BURST; i++) {
        memset(bytes, (unsigned char)(i + 1), sizeof bytes);
        ZT_EQ_INT(zl_msg_init_copy(&burst[i], bytes, sizeof bytes), 0);
    }
    for (int i = 0; i < BURST; i++) {
        const unsigned char *p = zl_msg_data(&burst[i]);
        ZT_EQ_INT(p[0], (unsigned char)(i + 1));
        ZT_EQ_INT(p[1023], (unsigned char)(i + 1));
        zl_msg_release(&burst[i]);
    }
}

/* Payloads of 64 KiB and more come from the large-block cache: a block
 * given back is handed out again for the next payload of about its size,
 * the cache never keeps more than 8 MiB, and payloads of other sizes get
 * blocks of their own. Under AddressSanitizer there is no cache. */
#define BIG_N 24
static zlink_msg_t big[BIG_N];

static void fill_big(zlink_msg_t *m, size_t size, unsigned char v)
{
    ZT_EQ_INT(zl_msg_init_copy(m, NULL, size), 0);
    ZT_EQ_INT(zl_msg_size(m), size);
    unsigned char *p = zl_msg_data(m);
    memset(p, v, size);
}

static void check_big(zlink_msg_t *m, size_t size, unsigned char v)
{
    ZT_EQ_INT(zl_msg_size(m), size);
    const unsigned char *p = zl_msg_data(m);
    for (size_t i = 0; i < size; i += 4093)
        ZT_EQ_INT(p[i], v);
    ZT_EQ_INT(p[size - 1], v);
}

static void big_blocks_are_reused_and_bounded(void)
{
    const size_t mib = (size_t)1 << 20;
    /* 24 MiB at once, then all given back: at most 8 MiB stay. */
    for (int i = 0; i < BIG_N; i++)
        fill_big(&big[i], mib, (unsigned char)i);
    for (int i = 0; i < BIG_N; i++) {
        check_big(&big[i], mib, (unsigned char)i);
        zl_msg_release(&big[i]);
    }
    ZT_CHECK(zl_msg_big_cached_bytes() <= (8u << 20));
#if !defined(__SANITIZE_ADDRESS__)
    ZT_CHECK(zl_msg_big_cached_bytes() >= 4 * mib);
    /* The next 1 MiB payload gets the block the last one gave back. */
    fill_big(&big[0], mib, 1);
    void *first = zl_msg_data(&big[0]);
    zl_msg_release(&big[0]);
    fill_big(&big[0], mib - 100, 2);
    ZT_CHECK(zl_msg_data(&big[0]) == first);
    check_big(&big[0], mib - 100, 2);
    zl_msg_release(&big[0]);
    /* A receive chunk of that size takes one of those blocks too. */
    zl_chunk_t *ch = zl_chunk_new(mib);
    ZT_CHECK(ch != NULL);
    memset(ch->data, 3, mib);
    zl_chunk_release(ch);
#endif
    /* Other sizes: each payload keeps its own bytes. */
    static const size_t sizes[] = {64 * 1024, 100 * 1024, 300 * 1024, 3 * (1u << 20), 65 * 1024};
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5; i++)
            fill_big(&big[i], sizes[i], (unsigned char)(round * 5 + i));
        for (int i = 0; i < 5; i++) {
            check_big(&big[i], sizes[i], (unsigned char)(round * 5 + i));
            zl_msg_release(&big[i]);
        }
    }
    ZT_CHECK(zl_msg_big_cached_bytes() <= (8u << 20));
}

static const zt_case_t cases[] = {
    ZT_CASE(init_copy_inline_or_heap),
    ZT_CASE(init_copy_too_big_touches_nothing),
    ZT_CASE(valid_and_empty),
    ZT_CASE(share_inline_copies_heap_counts),
    ZT_CASE(ext_borrow_and_move),
    ZT_CASE(multipart_release_helpers),
    ZT_CASE(chunk_and_slices),
    ZT_CASE(concurrent_release_frees_once),
    ZT_CASE(alloc_here_free_there),
    ZT_CASE(pool_lists_are_bounded),
    ZT_CASE(big_blocks_are_reused_and_bounded),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
