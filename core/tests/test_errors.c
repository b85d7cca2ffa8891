/*
 * test_errors.c — core-contract §8 "03-errors" items that need no sockets
 * (1, 2, 3, 4, 5, 6, 16, 17, 18) and zlink_has (§1 Transports), through the
 * public API only. Failures are provoked with message calls, whose results
 * are of the config family.
 *
 * Items 7-15 need sockets, requests or the flow setter; their own tests
 * cover them.
 */
#include "zlink.h"
#include "zltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Failure provokers, each with a known errno. */
static void fail_efault(void)
{
    zlink_config_result_t r;
    ZT_EQ_INT(zlink_msg_refcnt(NULL, &r), -1);
    ZT_EQ_INT(r, ZLINK_CONFIG_INVALID_HANDLE);
}

static void fail_einval(void)
{
    ZT_EQ_INT(zlink_msg_init_data(NULL, NULL, 1, NULL, NULL), ZLINK_CONFIG_INVALID_ARGUMENT);
}

static void test_success_is_zero(void)
{
    printf("# covers 03-errors/1\n");
    ZT_CHECK(ZLINK_SUBMIT_OK == 0 && ZLINK_REQUEST_OK == 0 && ZLINK_RECV_OK == 0);
    ZT_CHECK(ZLINK_HANDLER_OK == 0 && ZLINK_CLOSE_OK == 0 && ZLINK_BIND_OK == 0);
    ZT_CHECK(ZLINK_CONNECT_OK == 0 && ZLINK_CONFIG_OK == 0);
    zlink_msg_t m;
    zlink_config_result_t r = ZLINK_CONFIG_INTERNAL;
    ZT_EQ_INT(zlink_msg_init(&m), 0);
    ZT_EQ_INT(zlink_msg_refcnt(&m, &r), 1);
    ZT_EQ_INT(r, 0);
    ZT_EQ_INT(zlink_msg_close(&m), 0);
}

static void test_errno_in_row(void)
{
    printf("# covers 03-errors/2\n");
    /* IH 701 <- EFAULT */
    fail_efault();
    ZT_EQ_INT(zlink_errno(), EFAULT);
    zlink_msg_t m;
    memset(&m, 0, sizeof m);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* IA 702 <- EINVAL */
    zlink_msg_t a, b;
    ZT_EQ_INT(zlink_msg_init(&a), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_adopt(&a, &b), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* An errno without a row of its own -> INTERNAL, errno kept (ENOMEM). */
    ZT_EQ_INT(zlink_msg_init_size(&m, SIZE_MAX), ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(zlink_errno(), ENOMEM);
    ZT_EQ_INT(zlink_msg_close(&a), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&b), ZLINK_CONFIG_OK);
}

static void test_precedence(void)
{
    printf("# covers 03-errors/3\n");
    /* Both an argument error (data NULL, size 5) and a handle error (msg
     * NULL): the argument error wins. */
    ZT_EQ_INT(zlink_msg_init_data(NULL, NULL, 5, NULL, NULL), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* adopt onto an initialized dst from an invalid src: argument first. */
    zlink_msg_t dst, bad;
    memset(&bad, 0, sizeof bad);
    ZT_EQ_INT(zlink_msg_init(&dst), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_adopt(&dst, &bad), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_msg_close(&dst), ZLINK_CONFIG_OK);
}

static void test_no_errno_after_success(void)
{
    printf("# covers 03-errors/4\n");
    /* A stale errno from an earlier failure does not turn a later success
     * into a failure: the result alone decides. */
    fail_efault();
    ZT_EQ_INT(zlink_errno(), EFAULT);
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, 10), ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_msg_data(&m) != NULL);
    ZT_EQ_INT(zlink_msg_size(&m), 10);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
}

/* ---- item 5: errno is per thread */

static pthread_barrier_t pt_barrier;

static void *pt_efault(void *p)
{
    (void)p;
    fail_efault();
    pthread_barrier_wait(&pt_barrier); /* both have failed */
    pthread_barrier_wait(&pt_barrier); /* main has failed too */
    ZT_EQ_INT(zlink_errno(), EFAULT);
    return NULL;
}

static void *pt_einval(void *p)
{
    (void)p;
    fail_einval();
    pthread_barrier_wait(&pt_barrier);
    pthread_barrier_wait(&pt_barrier);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    return NULL;
}

static void test_per_thread_errno(void)
{
    printf("# covers 03-errors/5\n");
    pthread_t a, b;
    ZT_EQ_INT(pthread_barrier_init(&pt_barrier, NULL, 3), 0);
    ZT_EQ_INT(pthread_create(&a, NULL, pt_efault, NULL), 0);
    ZT_EQ_INT(pthread_create(&b, NULL, pt_einval, NULL), 0);
    pthread_barrier_wait(&pt_barrier);
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, SIZE_MAX), ZLINK_CONFIG_INTERNAL); /* ENOMEM */
    pthread_barrier_wait(&pt_barrier);
    ZT_EQ_INT(zlink_errno(), ENOMEM);
    ZT_EQ_INT(pthread_join(a, NULL), 0);
    ZT_EQ_INT(pthread_join(b, NULL), 0);
    ZT_EQ_INT(zlink_errno(), ENOMEM);
    pthread_barrier_destroy(&pt_barrier);
}

static void test_errno_fallbacks(void)
{
    printf("# covers 03-errors/6\n");
    const int always[] = {ESTALE, EALREADY, EDEADLK, ESHUTDOWN, EPROTOTYPE, EOVERFLOW};
    const int own[] = {EFSM, ENOCOMPATPROTO, ETERM, EMTHREAD};
    const int n_always = (int)(sizeof always / sizeof always[0]);
    /* Each is the platform's value or ZLink's fallback at HAUSNUMERO+19..24. */
    for (int i = 0; i < n_always; i++) {
        ZT_CHECK(always[i] > 0);
        ZT_CHECK(always[i] < ZLINK_HAUSNUMERO || always[i] == ZLINK_HAUSNUMERO + 19 + i);
    }
    for (int i = 0; i < 4; i++)
        ZT_EQ_INT(own[i], ZLINK_HAUSNUMERO + 51 + i);
    /* All ten are distinct, and distinct from the common errnos. */
    int all[10];
    memcpy(all, always, sizeof always);
    memcpy(all + 6, own, sizeof own);
    const int common[] = {EINVAL, EFAULT, EAGAIN, ENOMEM, EBUSY, ENOENT, EEXIST,
                          EACCES, EPERM, ENOTSUP, EMSGSIZE, ETIMEDOUT, ENOBUFS};
    for (int i = 0; i < 10; i++) {
        for (int j = i + 1; j < 10; j++)
            ZT_CHECK(all[i] != all[j]);
        for (size_t k = 0; k < sizeof common / sizeof common[0]; k++)
            ZT_CHECK(all[i] != common[k]);
        /* Each has a text of its own. */
        const char *s = zlink_strerror(all[i]);
        ZT_CHECK(s != NULL && s[0] != '\0');
        ZT_CHECK(strcmp(s, zlink_strerror(987654321)) != 0);
    }
}

static void test_version(void)
{
    printf("# covers 03-errors/16\n");
    int major = -1, minor = -1, patch = -1;
    zlink_version(&major, &minor, &patch);
    ZT_EQ_INT(major, ZLINK_VERSION_MAJOR);
    ZT_EQ_INT(minor, ZLINK_VERSION_MINOR);
    ZT_EQ_INT(patch, ZLINK_VERSION_PATCH);
    ZT_EQ_INT(ZLINK_VERSION, ZLINK_MAKE_VERSION(major, minor, patch));
    ZT_EQ_INT(ZLINK_MAKE_VERSION(1, 2, 3), 10203);
    ZT_EQ_INT(ZLINK_MAKE_VERSION(0, 18, 0), 1800);
}

/* ---- item 17: strerror from many threads at once */

#define SE_THREADS 8
#define SE_ROUNDS 2000

static const int se_errnums[] = {
    0, EINVAL, EFAULT, EAGAIN, ENOMEM, ETERM, EFSM, ENOCOMPATPROTO, EMTHREAD,
    ESTALE, EOVERFLOW, EHOSTUNREACH, EILSEQ, EROFS, EXDEV, E2BIG, -1,
    987654321, ZLINK_HAUSNUMERO + 99, 300, 511, 512, INT32_MIN, INT32_MAX,
};
#define SE_N (sizeof se_errnums / sizeof se_errnums[0])

static pthread_barrier_t se_barrier;
/* First text seen for each errnum, recorded single-threaded beforehand. */
static char se_expected[SE_N][256];

static void *se_worker(void *p)
{
    size_t offset = (size_t)(uintptr_t)p;
    const char *first[SE_N];
    pthread_barrier_wait(&se_barrier);
    for (size_t i = 0; i < SE_N; i++)
        first[i] = zlink_strerror(se_errnums[(i + offset) % SE_N]);
    for (int r = 0; r < SE_ROUNDS; r++) {
        for (size_t i = 0; i < SE_N; i++) {
            size_t k = (i + offset + (size_t)r) % SE_N;
            const char *s = zlink_strerror(se_errnums[k]);
            ZT_CHECK(s != NULL && s[0] != '\0');
            ZT_EQ_STR(s, se_expected[k]);
        }
    }
    /* Pointers returned earlier still hold their text after every other
     * thread's calls. */
    for (size_t i = 0; i < SE_N; i++)
        ZT_EQ_STR(first[i], se_expected[(i + offset) % SE_N]);
    return NULL;
}

static void test_strerror_threads(void)
{
    printf("# covers 03-errors/17\n");
    /* Record each text once, before any other thread runs. */
    for (size_t i = 0; i < SE_N; i++) {
        const char *s = zlink_strerror(se_errnums[i]);
        ZT_CHECK(s != NULL && s[0] != '\0' && strlen(s) < sizeof se_expected[i]);
        strcpy(se_expected[i], s);
    }
    ZT_CHECK(strcmp(zlink_strerror(ETERM), zlink_strerror(EFSM)) != 0);
    ZT_CHECK(strcmp(zlink_strerror(EINVAL), zlink_strerror(EFAULT)) != 0);

    pthread_t th[SE_THREADS];
    ZT_EQ_INT(pthread_barrier_init(&se_barrier, NULL, SE_THREADS), 0);
    for (uintptr_t t = 0; t < SE_THREADS; t++)
        ZT_EQ_INT(pthread_create(&th[t], NULL, se_worker, (void *)(t * 3)), 0);
    for (int t = 0; t < SE_THREADS; t++)
        ZT_EQ_INT(pthread_join(th[t], NULL), 0);
    pthread_barrier_destroy(&se_barrier);
}

/* A string obtained on a thread stays valid after that thread exits. */
static void *se_get_on_thread(void *p)
{
    return (void *)zlink_strerror((int)(intptr_t)p);
}

static void test_strerror_outlives_thread(void)
{
    printf("# covers 03-errors/17\n");
    const int nums[] = {EROFS, ETERM, 400};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        pthread_t t;
        void *s = NULL;
        ZT_EQ_INT(pthread_create(&t, NULL, se_get_on_thread, (void *)(intptr_t)nums[i]), 0);
        ZT_EQ_INT(pthread_join(t, &s), 0);
        ZT_CHECK(s != NULL);
        ZT_EQ_STR((const char *)s, zlink_strerror(nums[i]));
    }
}

/* ---- item 18: errno and version from many threads at once */

#define CV_THREADS 8
#define CV_ROUNDS 20000

static pthread_barrier_t cv_barrier;

static void *cv_worker(void *p)
{
    int id = (int)(intptr_t)p;
    pthread_barrier_wait(&cv_barrier);
    for (int r = 0; r < CV_ROUNDS; r++) {
        int want;
        if ((r + id) % 2 == 0) {
            fail_efault();
            want = EFAULT;
        } else {
            fail_einval();
            want = EINVAL;
        }
        int major = -1, minor = -1, patch = -1;
        zlink_version(&major, &minor, &patch);
        ZT_CHECK(major == ZLINK_VERSION_MAJOR && minor == ZLINK_VERSION_MINOR &&
              patch == ZLINK_VERSION_PATCH);
        ZT_EQ_INT(zlink_errno(), want);
    }
    return NULL;
}

static void test_errno_version_concurrent(void)
{
    printf("# covers 03-errors/18\n");
    pthread_t th[CV_THREADS];
    ZT_EQ_INT(pthread_barrier_init(&cv_barrier, NULL, CV_THREADS), 0);
    for (intptr_t t = 0; t < CV_THREADS; t++)
        ZT_EQ_INT(pthread_create(&th[t], NULL, cv_worker, (void *)t), 0);
    for (int t = 0; t < CV_THREADS; t++)
        ZT_EQ_INT(pthread_join(th[t], NULL), 0);
    pthread_barrier_destroy(&cv_barrier);
}

static void test_has(void)
{
    printf("# covers 01-object/has\n");
    ZT_EQ_INT(zlink_has("tcp"), 1);
    ZT_EQ_INT(zlink_has("ipc"), 1);
    ZT_EQ_INT(zlink_has("inproc"), 1);
    ZT_EQ_INT(zlink_has("tls"), 0);
    ZT_EQ_INT(zlink_has("ws"), 0);
    ZT_EQ_INT(zlink_has("wss"), 0);
    ZT_EQ_INT(zlink_has(""), 0);
    ZT_EQ_INT(zlink_has("TCP"), 0);
    ZT_EQ_INT(zlink_has("tcpx"), 0);
    ZT_EQ_INT(zlink_has(NULL), 0);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_success_is_zero),
    ZT_CASE(test_errno_in_row),
    ZT_CASE(test_precedence),
    ZT_CASE(test_no_errno_after_success),
    ZT_CASE(test_per_thread_errno),
    ZT_CASE(test_errno_fallbacks),
    ZT_CASE(test_version),
    ZT_CASE(test_strerror_threads),
    ZT_CASE(test_strerror_outlives_thread),
    ZT_CASE(test_errno_version_concurrent),
    ZT_CASE(test_has),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
