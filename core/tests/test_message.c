/*
 * test_message.c — core-contract §8 "02-message", items 1-14 and 17,
 * through the public API only (zlink.h).
 *
 * Items 15 (a failed part send consumes only that part and ends the
 * sequence) and 16 (no interleaving from other senders) need sockets; the
 * socket send tests cover them. Item 5's "after send" half is there too;
 * here it is checked for close.
 */
#include "zlink.h"
#include "zltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A free function that counts its calls and checks its arguments. */
static atomic_int ffn_calls;
static void *ffn_expect_data;
static void *ffn_expect_hint;

static void counting_ffn(void *data, void *hint)
{
    ZT_CHECK(data == ffn_expect_data);
    ZT_CHECK(hint == ffn_expect_hint);
    atomic_fetch_add(&ffn_calls, 1);
}

static void ffn_reset(void *data, void *hint)
{
    atomic_store(&ffn_calls, 0);
    ffn_expect_data = data;
    ffn_expect_hint = hint;
}

/* A free function that frees data (a malloc'd buffer) and counts. */
static atomic_int free_calls;
static void freeing_ffn(void *data, void *hint)
{
    (void)hint;
    free(data);
    atomic_fetch_add(&free_calls, 1);
}

static void test_init_size_zero(void)
{
    printf("# covers 02-message/1\n");
    zlink_msg_t m;
    memset(&m, 0xA5, sizeof m);
    ZT_EQ_INT(zlink_msg_init(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_refcnt(&m, NULL), 1);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
}

static void test_init_size(void)
{
    printf("# covers 02-message/2\n");
    size_t sizes[] = {0, 1, ZLINK_MSG_INLINE_MAX, ZLINK_MSG_INLINE_MAX + 1, 4096, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        zlink_msg_t m;
        ZT_EQ_INT(zlink_msg_init_size(&m, sizes[i]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_msg_size(&m), sizes[i]);
        unsigned char *p = zlink_msg_data(&m);
        ZT_CHECK(p != NULL);
        memset(p, 0x5A, sizes[i]); /* the whole payload is writable */
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    }
    /* Too large for memory: ENOMEM (config has no OOM row: INTERNAL). */
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, SIZE_MAX), ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(zlink_errno(), ENOMEM);
    ZT_CHECK(zlink_msg_data(&m) == NULL); /* left uninitialized */
    ZT_EQ_INT(zlink_msg_init_size(&m, SIZE_MAX / 2 + 1), ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(zlink_errno(), ENOMEM);
}

static void test_data_uninitialized(void)
{
    printf("# covers 02-message/3\n");
    zlink_msg_t m;
    memset(&m, 0, sizeof m);
    ZT_CHECK(zlink_msg_data(&m) == NULL);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    memset(&m, 0xFF, sizeof m);
    ZT_CHECK(zlink_msg_data(&m) == NULL);
    ZT_CHECK(zlink_msg_data(NULL) == NULL);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* A closed message is uninitialized again. */
    ZT_EQ_INT(zlink_msg_init_size(&m, 100), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&m) == NULL);
}

static void test_close_once_reinit(void)
{
    printf("# covers 02-message/4\n");
    static char buf[64] = "payload";
    zlink_msg_t m;
    ffn_reset(buf, NULL);
    ZT_EQ_INT(zlink_msg_init_data(&m, buf, sizeof buf, counting_ffn, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&ffn_calls), 1);
    /* A second close fails and frees nothing. */
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(atomic_load(&ffn_calls), 1);
    /* Re-init makes it usable again. */
    ZT_EQ_INT(zlink_msg_init_size(&m, 200), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m), "again", 5);
    ZT_EQ_INT(zlink_msg_size(&m), 200);
    ZT_EQ_MEM(zlink_msg_data(&m), "again", 5);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_INVALID_HANDLE);
}

static void test_ffn_on_close(void)
{
    printf("# covers 02-message/5\n");
    static char buf[8] = "tiny";
    int hint_obj;
    zlink_msg_t m, c;
    /* Small sizes stay zero-copy: the data pointer is the caller's. */
    ffn_reset(buf, &hint_obj);
    ZT_EQ_INT(zlink_msg_init_data(&m, buf, 4, counting_ffn, &hint_obj), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&m) == buf);
    ZT_EQ_INT(zlink_msg_size(&m), 4);
    ZT_EQ_INT(zlink_msg_init(&c), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_copy(&c, &m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&ffn_calls), 0); /* c still holds it */
    ZT_EQ_INT(zlink_msg_close(&c), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&ffn_calls), 1);

    /* A heap buffer handed over with a freeing ffn (ASan checks the free). */
    atomic_store(&free_calls, 0);
    char *heap = malloc(1000);
    ZT_CHECK(heap != NULL);
    ZT_EQ_INT(zlink_msg_init_data(&m, heap, 1000, freeing_ffn, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&free_calls), 1);
}

static void test_null_ffn_borrows(void)
{
    printf("# covers 02-message/6\n");
    char buf[100];
    memset(buf, 'b', sizeof buf);
    zlink_msg_t m, c;
    ZT_EQ_INT(zlink_msg_init_data(&m, buf, sizeof buf, NULL, NULL), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&m) == buf); /* zero-copy */
    ZT_EQ_INT(zlink_msg_size(&m), sizeof buf);
    ZT_EQ_INT(zlink_msg_init(&c), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_copy(&c, &m), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&c) == buf);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&c), ZLINK_CONFIG_OK);
    /* Nothing was called or freed: buf is a stack array and is intact. */
    for (size_t i = 0; i < sizeof buf; i++)
        ZT_EQ_INT(buf[i], 'b');
    /* A zero-size borrow of NULL is valid. */
    ZT_EQ_INT(zlink_msg_init_data(&m, NULL, 0, NULL, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
}

static void test_move_empties_src(void)
{
    printf("# covers 02-message/7\n");
    zlink_msg_t src, dst;
    /* Large (shared storage). */
    ZT_EQ_INT(zlink_msg_init_size(&src, 500), ZLINK_CONFIG_OK);
    memset(zlink_msg_data(&src), 'x', 500);
    void *p = zlink_msg_data(&src);
    ZT_EQ_INT(zlink_msg_init(&dst), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_move(&dst, &src), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_size(&src), 0);
    ZT_EQ_INT(zlink_msg_size(&dst), 500);
    ZT_CHECK(zlink_msg_data(&dst) == p); /* moved, not copied */
    ZT_EQ_INT(zlink_msg_refcnt(&dst, NULL), 1);

    /* Inline, into a dst whose old payload must be released. */
    static char ext[40];
    ffn_reset(ext, NULL);
    zlink_msg_t dst2;
    ZT_EQ_INT(zlink_msg_init_data(&dst2, ext, sizeof ext, counting_ffn, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&src, 3), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&src), "abc", 3);
    ZT_EQ_INT(zlink_msg_move(&dst2, &src), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&ffn_calls), 1); /* dst's old content freed */
    ZT_EQ_INT(zlink_msg_size(&dst2), 3);
    ZT_EQ_MEM(zlink_msg_data(&dst2), "abc", 3);
    ZT_EQ_INT(zlink_msg_size(&src), 0);

    /* src stays initialized and reusable; moving onto itself keeps it. */
    ZT_EQ_INT(zlink_msg_move(&dst2, &dst2), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_size(&dst2), 3);
    ZT_EQ_INT(zlink_msg_close(&src), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&dst), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&dst2), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&ffn_calls), 1);
}

static void test_copy_shares(void)
{
    printf("# covers 02-message/8\n");
    zlink_msg_t a, b, c;
    ZT_EQ_INT(zlink_msg_init_size(&a, 256), ZLINK_CONFIG_OK);
    memset(zlink_msg_data(&a), 'q', 256);
    ZT_EQ_INT(zlink_msg_refcnt(&a, NULL), 1);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&c), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_copy(&b, &a), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&b) == zlink_msg_data(&a)); /* shared, not copied */
    ZT_EQ_INT(zlink_msg_size(&b), 256);
    ZT_EQ_INT(zlink_msg_refcnt(&a, NULL), 2);
    ZT_EQ_INT(zlink_msg_copy(&c, &b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_refcnt(&a, NULL), 3);
    ZT_EQ_INT(zlink_msg_refcnt(&c, NULL), 3);
    ZT_EQ_INT(zlink_msg_close(&a), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_refcnt(&b, NULL), 2);
    /* Copying onto a holder of the same content keeps the count right. */
    ZT_EQ_INT(zlink_msg_copy(&c, &b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_refcnt(&b, NULL), 2);
    ZT_EQ_INT(zlink_msg_close(&b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_refcnt(&c, NULL), 1);
    ZT_EQ_INT(((unsigned char *)zlink_msg_data(&c))[255], 'q');
    ZT_EQ_INT(zlink_msg_close(&c), ZLINK_CONFIG_OK);

    /* A copy into an initialized dst releases dst's old content. */
    static char ext[64];
    ffn_reset(ext, NULL);
    ZT_EQ_INT(zlink_msg_init_data(&a, ext, sizeof ext, counting_ffn, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&b, 10), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_copy(&a, &b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&ffn_calls), 1);
    ZT_EQ_INT(zlink_msg_close(&a), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&b), ZLINK_CONFIG_OK);
}

static void test_refcnt_inline_borrowed(void)
{
    printf("# covers 02-message/9\n");
    zlink_msg_t a, b;
    /* Inline: a copy duplicates the bytes; both count 1. */
    ZT_EQ_INT(zlink_msg_init_size(&a, ZLINK_MSG_INLINE_MAX), ZLINK_CONFIG_OK);
    memset(zlink_msg_data(&a), 'i', ZLINK_MSG_INLINE_MAX);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_copy(&b, &a), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_refcnt(&a, NULL), 1);
    ZT_EQ_INT(zlink_msg_refcnt(&b, NULL), 1);
    ZT_CHECK(zlink_msg_data(&a) != zlink_msg_data(&b));
    ZT_EQ_MEM(zlink_msg_data(&a), zlink_msg_data(&b), ZLINK_MSG_INLINE_MAX);
    ZT_EQ_INT(zlink_msg_close(&a), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&b), ZLINK_CONFIG_OK);

    /* Borrowed: a copy shares the pointer; both still count 1. */
    char buf[300];
    zlink_config_result_t r = ZLINK_CONFIG_INTERNAL;
    ZT_EQ_INT(zlink_msg_init_data(&a, buf, sizeof buf, NULL, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_refcnt(&a, &r), 1);
    ZT_EQ_INT(r, ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_copy(&b, &a), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&b) == buf);
    ZT_EQ_INT(zlink_msg_refcnt(&a, NULL), 1);
    ZT_EQ_INT(zlink_msg_refcnt(&b, NULL), 1);
    ZT_EQ_INT(zlink_msg_close(&a), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&b), ZLINK_CONFIG_OK);
}

static void test_adopt(void)
{
    printf("# covers 02-message/10\n");
    static char ext[128];
    zlink_msg_t src, dst;
    ffn_reset(ext, NULL);
    ZT_EQ_INT(zlink_msg_init_data(&src, ext, sizeof ext, counting_ffn, NULL), ZLINK_CONFIG_OK);
    memset(&dst, 0, sizeof dst); /* uninitialized */
    ZT_EQ_INT(zlink_msg_adopt(&dst, &src), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&dst) == ext);
    ZT_EQ_INT(zlink_msg_size(&dst), sizeof ext);
    ZT_EQ_INT(zlink_msg_refcnt(&dst, NULL), 1);
    ZT_EQ_INT(zlink_msg_size(&src), 0); /* empty but initialized */
    ZT_CHECK(zlink_msg_data(&src) != NULL);
    ZT_EQ_INT(zlink_msg_close(&src), ZLINK_CONFIG_OK); /* harmless */
    ZT_EQ_INT(atomic_load(&ffn_calls), 0);
    ZT_EQ_INT(zlink_msg_close(&dst), ZLINK_CONFIG_OK);
    ZT_EQ_INT(atomic_load(&ffn_calls), 1);
}

static void test_adopt_failure(void)
{
    printf("# covers 02-message/11\n");
    zlink_msg_t src, dst;
    /* dst already initialized: EINVAL; neither message changes. */
    ZT_EQ_INT(zlink_msg_init_size(&src, 64), ZLINK_CONFIG_OK);
    memset(zlink_msg_data(&src), 's', 64);
    void *sp = zlink_msg_data(&src);
    ZT_EQ_INT(zlink_msg_init_size(&dst, 5), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&dst), "dddd", 5);
    ZT_EQ_INT(zlink_msg_adopt(&dst, &src), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_CHECK(zlink_msg_data(&src) == sp);
    ZT_EQ_INT(zlink_msg_size(&src), 64);
    ZT_EQ_INT(zlink_msg_size(&dst), 5);
    ZT_EQ_MEM(zlink_msg_data(&dst), "dddd", 5);
    ZT_EQ_INT(zlink_msg_close(&dst), ZLINK_CONFIG_OK);

    /* src invalid: EFAULT; dst stays uninitialized. */
    zlink_msg_t bad;
    memset(&bad, 0, sizeof bad);
    memset(&dst, 0, sizeof dst);
    ZT_EQ_INT(zlink_msg_adopt(&dst, &bad), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_CHECK(zlink_msg_data(&dst) == NULL);
    ZT_EQ_INT(zlink_msg_adopt(&dst, NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_CHECK(zlink_msg_data(&dst) == NULL);

    /* dst NULL: EFAULT; src keeps its payload. */
    ZT_EQ_INT(zlink_msg_adopt(NULL, &src), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_CHECK(zlink_msg_data(&src) == sp);
    ZT_EQ_INT(zlink_msg_size(&src), 64);

    /* After a failure the same src can still be adopted. */
    ZT_EQ_INT(zlink_msg_adopt(&dst, &src), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&dst) == sp);
    ZT_EQ_INT(zlink_msg_close(&src), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&dst), ZLINK_CONFIG_OK);
}

/* ---- item 12: copies of one buffer closed concurrently on many threads */

#define XT_THREADS 8
#define XT_COPIES 2000
#define XT_ROUNDS 50
#define XT_SIZE 4096

struct xt_arg {
    zlink_msg_t own; /* this thread's copy, made by the main thread */
    pthread_barrier_t *start;
    void *expect_data;
};

static void *xt_worker(void *p)
{
    struct xt_arg *a = p;
    pthread_barrier_wait(a->start);
    for (int i = 0; i < XT_COPIES; i++) {
        zlink_msg_t tmp;
        ZT_EQ_INT(zlink_msg_init(&tmp), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_msg_copy(&tmp, &a->own), ZLINK_CONFIG_OK);
        ZT_CHECK(zlink_msg_data(&tmp) == a->expect_data);
        ZT_EQ_INT(zlink_msg_size(&tmp), XT_SIZE);
        ZT_CHECK(zlink_msg_refcnt(&tmp, NULL) >= 2);
        /* Every holder may read the shared payload. */
        ZT_EQ_INT(((unsigned char *)zlink_msg_data(&tmp))[i % XT_SIZE], 0x7E);
        ZT_EQ_INT(zlink_msg_close(&tmp), ZLINK_CONFIG_OK);
    }
    ZT_EQ_INT(zlink_msg_close(&a->own), ZLINK_CONFIG_OK);
    return NULL;
}

static void test_cross_thread_copy_close(void)
{
    printf("# covers 02-message/12\n");
    for (int round = 0; round < XT_ROUNDS; round++) {
        bool main_closes_last = (round % 2) == 0;
        unsigned char *buf = malloc(XT_SIZE);
        ZT_CHECK(buf != NULL);
        memset(buf, 0x7E, XT_SIZE);
        atomic_store(&free_calls, 0);

        zlink_msg_t orig;
        ZT_EQ_INT(zlink_msg_init_data(&orig, buf, XT_SIZE, freeing_ffn, NULL), ZLINK_CONFIG_OK);

        pthread_barrier_t start;
        ZT_EQ_INT(pthread_barrier_init(&start, NULL, XT_THREADS + 1), 0);
        struct xt_arg args[XT_THREADS];
        pthread_t th[XT_THREADS];
        for (int t = 0; t < XT_THREADS; t++) {
            ZT_EQ_INT(zlink_msg_init(&args[t].own), ZLINK_CONFIG_OK);
            ZT_EQ_INT(zlink_msg_copy(&args[t].own, &orig), ZLINK_CONFIG_OK);
            args[t].start = &start;
            args[t].expect_data = buf;
        }
        ZT_EQ_INT(zlink_msg_refcnt(&orig, NULL), XT_THREADS + 1);
        for (int t = 0; t < XT_THREADS; t++)
            ZT_EQ_INT(pthread_create(&th[t], NULL, xt_worker, &args[t]), 0);

        if (!main_closes_last) /* a worker drops the last reference */
            ZT_EQ_INT(zlink_msg_close(&orig), ZLINK_CONFIG_OK);
        pthread_barrier_wait(&start);
        for (int t = 0; t < XT_THREADS; t++)
            ZT_EQ_INT(pthread_join(th[t], NULL), 0);
        pthread_barrier_destroy(&start);

        if (main_closes_last) {
            ZT_EQ_INT(atomic_load(&free_calls), 0); /* still held by orig */
            ZT_EQ_INT(zlink_msg_refcnt(&orig, NULL), 1);
            ZT_EQ_INT(zlink_msg_close(&orig), ZLINK_CONFIG_OK);
        }
        ZT_EQ_INT(atomic_load(&free_calls), 1); /* freed exactly once, at 0 */
    }
}

static void test_refcnt_failure(void)
{
    printf("# covers 02-message/13\n");
    zlink_config_result_t r = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_msg_refcnt(NULL, &r), -1);
    ZT_EQ_INT(r, ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);

    zlink_msg_t m;
    memset(&m, 0x3C, sizeof m);
    r = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_msg_refcnt(&m, &r), -1);
    ZT_EQ_INT(r, ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_refcnt(&m, NULL), -1); /* result pointer is optional */

    ZT_EQ_INT(zlink_msg_init_size(&m, 1000), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_refcnt(&m, &r), -1); /* closed */
    ZT_EQ_INT(r, ZLINK_CONFIG_INVALID_HANDLE);
}

static void test_multipart_close(void)
{
    printf("# covers 02-message/14\n");
    zlink_msg_t parts[4];
    atomic_store(&free_calls, 0);
    char *h0 = malloc(50), *h1 = malloc(60);
    ZT_CHECK(h0 != NULL && h1 != NULL);
    ZT_EQ_INT(zlink_msg_init_data(&parts[0], h0, 50, freeing_ffn, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&parts[1], 7), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_data(&parts[2], h1, 60, freeing_ffn, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&parts[3], 5000), ZLINK_CONFIG_OK);
    zlink_multipart_close(parts, 4);
    ZT_EQ_INT(atomic_load(&free_calls), 2);
    for (int i = 0; i < 4; i++) {
        /* Each part is closed: a further close fails as for zlink_msg_close. */
        ZT_CHECK(zlink_msg_data(&parts[i]) == NULL);
        ZT_EQ_INT(zlink_msg_close(&parts[i]), ZLINK_CONFIG_INVALID_HANDLE);
    }
    /* Closing again, NULL parts or n == 0 are harmless. */
    zlink_multipart_close(parts, 4);
    zlink_multipart_close(NULL, 3);
    zlink_multipart_close(parts, 0);
    ZT_EQ_INT(atomic_load(&free_calls), 2);
}

/* 17: every call follows the typed-result-plus-errno convention; invalid
 * messages give EFAULT with IH, NULL, 0 or -1 by return type. */
static void test_convention(void)
{
    printf("# covers 02-message/17\n");
    zlink_msg_t bad, good;
    memset(&bad, 0, sizeof bad);
    ZT_EQ_INT(zlink_msg_init(&good), ZLINK_CONFIG_OK);

    ZT_EQ_INT(zlink_msg_init(NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_init_size(NULL, 1), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_init_data(NULL, &bad, 1, NULL, NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_close(&bad), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_close(NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_msg_move(&bad, &good), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_move(&good, &bad), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_msg_move(NULL, &good), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_msg_copy(&bad, &good), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_copy(&good, NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_msg_adopt(&bad, NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_CHECK(zlink_msg_data(&bad) == NULL);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_size(&bad), 0);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_size(NULL), 0);
    zlink_config_result_t r;
    ZT_CHECK(zlink_msg_refcnt(&bad, &r) == -1 && r == ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);

    /* Argument errors come before handle errors (core-contract §2). */
    ZT_EQ_INT(zlink_msg_init_data(NULL, NULL, 10, NULL, NULL), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_msg_init_data(&bad, NULL, 10, NULL, NULL), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_CHECK(zlink_msg_data(&bad) == NULL); /* failure left it uninitialized */

    /* The failed calls above changed nothing in good. */
    ZT_EQ_INT(zlink_msg_size(&good), 0);
    ZT_EQ_INT(zlink_msg_close(&good), ZLINK_CONFIG_OK);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_init_size_zero),
    ZT_CASE(test_init_size),
    ZT_CASE(test_data_uninitialized),
    ZT_CASE(test_close_once_reinit),
    ZT_CASE(test_ffn_on_close),
    ZT_CASE(test_null_ffn_borrows),
    ZT_CASE(test_move_empties_src),
    ZT_CASE(test_copy_shares),
    ZT_CASE(test_refcnt_inline_borrowed),
    ZT_CASE(test_adopt),
    ZT_CASE(test_adopt_failure),
    ZT_CASE(test_cross_thread_copy_close),
    ZT_CASE(test_refcnt_failure),
    ZT_CASE(test_multipart_close),
    ZT_CASE(test_convention),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
