/*
 * test_context.c — core-contract §8 "01-context" items 1-4 and 6-11, plus
 * the context option values of §1, through the public API only (zlink.h).
 *
 * Item 5 (term interrupted by a signal gives EINTR) was removed in 1.9: no
 * ZLink call returns EINTR, so it has no case here.
 *
 * Blocking cases never sleep to let another thread get somewhere: a thread
 * blocked in a call is released by the event under test (shutdown, term)
 * and joined; the contract says blocking calls return ETERM whether they
 * started before or after the shutdown, so either order is a valid run.
 */
#include "zltest_zlink.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* a binds "inproc://name", b connects: a connected PAIR in ctx. */
static void inproc_pair(void *ctx, const char *name, void **a, void **b)
{
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://%s", name);
    *a = zlt_socket(ctx, ZLINK_PAIR);
    *b = zlt_socket(ctx, ZLINK_PAIR);
    zlt_bind_at(*a, ep);
    zlt_connect(*b, ep);
}

/* ------------------------------------------------------------ item 1 */

static void test_new_returns_context(void)
{
    void *ctx[4];
    for (int i = 0; i < 4; i++) {
        ctx[i] = zlink_ctx_new();
        ZT_CHECK(ctx[i] != NULL);
        for (int j = 0; j < i; j++)
            ZT_CHECK(ctx[i] != ctx[j]);
    }
    /* Each is usable, and each is its own world: the same inproc name
     * binds in every context, and data stays in its context. */
    void *a[4], *b[4];
    for (int i = 0; i < 4; i++)
        inproc_pair(ctx[i], "same-name", &a[i], &b[i]);
    for (int i = 0; i < 4; i++) {
        char msg[16];
        snprintf(msg, sizeof msg, "ctx %d", i);
        ZT_EQ_INT(zlt_send_str(a[i], msg, ZLINK_SEND_FLAGS_NONE), ZLINK_SUBMIT_OK);
    }
    for (int i = 3; i >= 0; i--) {
        char msg[16];
        snprintf(msg, sizeof msg, "ctx %d", i);
        zlt_expect_str(b[i], msg);
    }
    for (int i = 0; i < 4; i++) {
        zlt_finish(ctx[i], a[i], b[i]);
    }
}

/* ------------------------------------------------------------ item 2 */

/* Starts a NONE receive (or send) with an infinite timeout on s on another
 * thread. With wait, returns once the thread sleeps inside the call (when
 * /proc can tell); otherwise at once, so the call may start before or
 * after whatever the caller does next. */
static void start_blocked(zlt_blocked_t *bc, void *s, bool send, bool wait)
{
    *bc = (zlt_blocked_t){.sock = s, .send = send, .size = 5, .tag = 's', .timeo = -1};
    (void)zlt_blocked_start(bc, wait);
}

/* Joins bc: its call ended with TERMINATED/ETERM and wrote no output. */
static void join_terminated(zlt_blocked_t *bc)
{
    zlt_blocked_join(bc);
    ZT_EQ_INT(bc->result, bc->send ? (int)ZLINK_SUBMIT_TERMINATED : (int)ZLINK_RECV_TERMINATED);
    ZT_EQ_INT(bc->err, ETERM);
    ZT_EQ_INT(bc->count, ZLT_COUNT_UNSET);
}

static void test_shutdown_wakes_blocked_recv(void)
{
    /* Even rounds: the receive is asleep inside before the shutdown. Odd
     * rounds: it may start before or after. */
    for (int round = 0; round < 20; round++) {
        void *ctx = zlt_ctx_new();
        void *a, *b;
        inproc_pair(ctx, "wake", &a, &b);
        zlt_blocked_t bc;
        start_blocked(&bc, b, false, round % 2 == 0);
        ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK); /* does not block */
        join_terminated(&bc);
        zlt_finish(ctx, a, b);
    }
}

static void test_shutdown_wakes_blocked_send(void)
{
    for (int round = 0; round < 20; round++) {
        void *ctx = zlt_ctx_new();
        zlt_blocked_t bc[2];
        /* One sender waits for a peer that never comes ... */
        void *lonely = zlt_socket(ctx, ZLINK_PAIR);
        zlt_bind_at(lonely, "inproc://nobody-comes");
        start_blocked(&bc[0], lonely, true, round % 2 == 0);
        /* ... the other for room at a full HWM. */
        void *a = zlt_socket(ctx, ZLINK_PAIR), *b = zlt_socket(ctx, ZLINK_PAIR);
        zlt_set_u64(a, ZLINK_SNDHWM, 100);
        zlt_link(a, b, "inproc");
        ZT_EQ_INT(zlt_send_str(a, "fills the queue", ZLINK_SEND_FLAGS_DONTWAIT), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_str(a, "no room", ZLINK_SEND_FLAGS_DONTWAIT),
                  ZLINK_SUBMIT_BACKPRESSURED);
        start_blocked(&bc[1], a, true, round % 2 == 0);

        ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
        join_terminated(&bc[0]);
        join_terminated(&bc[1]);
        zlt_finish(ctx, lonely, a, b);
    }
}

static void test_calls_after_shutdown_get_eterm(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    inproc_pair(ctx, "after", &a, &b);
    ZT_EQ_INT(zlt_send_str(a, "queued before", ZLINK_SEND_FLAGS_NONE), ZLINK_SUBMIT_OK);
    zlt_set_int(a, ZLINK_SNDTIMEO, -1);
    zlt_set_int(b, ZLINK_RCVTIMEO, -1);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);

    /* Blocking calls started after the shutdown: ETERM at once, even with
     * an infinite timeout and even with a record waiting. */
    ZT_EQ_INT(zlt_send_str(a, "after", ZLINK_SEND_FLAGS_NONE), ZLINK_SUBMIT_TERMINATED);
    ZT_EQ_INT(zlink_errno(), ETERM);
    zlink_msg_t m[2];
    size_t n = 5;
    ZT_EQ_INT(zlink_recv(b, NULL, m, 2, &n, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_TERMINATED);
    ZT_EQ_INT(zlink_errno(), ETERM);
    ZT_EQ_INT(n, 5);
    /* No new sockets in a shut-down context. */
    ZT_CHECK(zlink_socket(ctx, ZLINK_PAIR) == NULL);
    ZT_EQ_INT(zlink_errno(), ETERM);
    /* Closing is still allowed, and term finishes. */
    zlt_finish(ctx, a, b);
}

/* ------------------------------------------------------------ item 3 */

static void test_term_after_close(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    inproc_pair(ctx, "t", &a, &b);
    ZT_EQ_INT(zlt_send_str(a, "unread", ZLINK_SEND_FLAGS_NONE), ZLINK_SUBMIT_OK);
    zlt_close(a);
    zlt_close(b); /* unread record discarded */
    zlt_ctx_term(ctx);
    /* A context with no socket at all. */
    ctx = zlt_ctx_new();
    zlt_ctx_term(ctx);
}

/* The application's side of term: a thread blocked in recv gets ETERM and
 * then closes its own socket, as the contract asks; term returns only
 * after that close (it "blocks until all sockets close"). */
struct term_worker {
    void *sock;
    int recv_result, recv_err;
    int close_result, close_err;
    _Atomic long tid;
};

static void *term_worker_main(void *arg)
{
    struct term_worker *w = arg;
    atomic_store(&w->tid, zt_gettid());
    zlink_msg_t m[2];
    size_t n = 0;
    w->recv_result = zlink_recv(w->sock, NULL, m, 2, &n, ZLINK_RECV_FLAGS_NONE);
    w->recv_err = zlink_errno();
    w->close_result = zlink_close(w->sock);
    w->close_err = zlink_errno();
    return NULL;
}

static void test_term_blocks_until_sockets_closed(void)
{
    for (int round = 0; round < 20; round++) {
        void *ctx = zlt_ctx_new();
        void *a, *b;
        inproc_pair(ctx, "term", &a, &b);
        zlt_close(a);
        zlt_set_int(b, ZLINK_RCVTIMEO, -1);
        struct term_worker w = {b, -1, 0, -1, 0, 0};
        pthread_t t;
        ZT_EQ_INT(pthread_create(&t, NULL, term_worker_main, &w), 0);
        if (round % 2 == 0) { /* the receive is asleep before term starts */
            while (atomic_load(&w.tid) == 0)
                sched_yield();
            (void)zt_wait_blocked(atomic_load(&w.tid));
        }
        ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK); /* once; it may block */
        ZT_EQ_INT(pthread_join(t, NULL), 0);
        ZT_EQ_INT(w.recv_result, ZLINK_RECV_TERMINATED);
        ZT_EQ_INT(w.recv_err, ETERM);
        if (w.close_result != ZLINK_CLOSE_OK)
            ZT_FAIL("round %d: the worker's close after ETERM gave %d (errno %d): term "
                    "closed the socket itself instead of waiting for the application",
                    round, w.close_result, w.close_err);
    }
}

/* ------------------------------------------------------------ item 4 */

static void test_bad_handle_term_shutdown(void)
{
    static uint64_t zeroed[64]; /* mapped, aligned, not a context */
    memset(zeroed, 0, sizeof zeroed);
    void *bad[2] = {NULL, zeroed};
    for (int i = 0; i < 2; i++) {
        ZT_EQ_INT(zlink_ctx_shutdown(bad[i]), ZLINK_CLOSE_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_ctx_term(bad[i]), ZLINK_CLOSE_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
    }
    /* A socket is not a context. */
    void *ctx = zlt_ctx_new();
    void *s = zlt_socket(ctx, ZLINK_PAIR);
    ZT_EQ_INT(zlink_ctx_shutdown(s), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_ctx_term(s), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* The failed calls did nothing to the real context. */
    zlt_finish(ctx, s);
}

/* ------------------------------------------------------------ item 6 */

static void test_set_bad_option_or_value(void)
{
    void *ctx = zlt_ctx_new();
    /* Unknown options. */
    const int unknown[] = {0, 11, 13, 15, 16, 18, 24, 99, -1, 0x3012};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        ZT_EQ_INT(zlink_ctx_set(ctx, unknown[i], 1), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        zlink_config_result_t r = ZLINK_CONFIG_OK;
        ZT_EQ_INT(zlink_ctx_get(ctx, unknown[i], &r), -1);
        ZT_EQ_INT(r, ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
    }
    /* Values out of range. */
    struct { int opt, value; } bad[] = {
        {ZLINK_IO_THREADS, 0},          {ZLINK_IO_THREADS, -1},
        {ZLINK_MAX_SOCKETS, 0},         {ZLINK_MAX_SOCKETS, -5},
        {ZLINK_CTX_OPT_BLOCKY, 2},      {ZLINK_CTX_OPT_BLOCKY, -1},
        {ZLINK_AUTO_HWM_ENABLE, 2},     {ZLINK_PROFILE, -1},
        {ZLINK_PROFILE, 4},             {ZLINK_MAX_MSGSZ, -1},
        {ZLINK_AUTO_HWM_RECALC_DEBOUNCE_MS, -1},
        {ZLINK_SPIN_US, -1},            {ZLINK_SPIN_US, ZLINK_SPIN_US_MAX + 1},
        {ZLINK_IO_SPIN_US, -1},         {ZLINK_IO_SPIN_US, ZLINK_SPIN_US_MAX + 1},
        /* read-only */
        {ZLINK_SOCKET_LIMIT, 10},       {ZLINK_MSG_T_SIZE, 64},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int before = zlink_ctx_get(ctx, bad[i].opt, NULL);
        zlink_config_result_t r = zlink_ctx_set(ctx, bad[i].opt, bad[i].value);
        if (r != ZLINK_CONFIG_INVALID_ARGUMENT || zlink_errno() != EINVAL)
            ZT_FAIL("ctx_set(%d, %d): result %d errno %d, expected INVALID_ARGUMENT/EINVAL",
                    bad[i].opt, bad[i].value, (int)r, zlink_errno());
        ZT_EQ_INT(zlink_ctx_get(ctx, bad[i].opt, NULL), before); /* unchanged */
    }
    /* Valid values are accepted and read back. */
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 2), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_ctx_get(ctx, ZLINK_IO_THREADS, NULL), 2);
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_MAX_SOCKETS, 100), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_ctx_get(ctx, ZLINK_MAX_SOCKETS, NULL), 100);
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_PROFILE, ZLINK_PROFILE_THROUGHPUT), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_ctx_get(ctx, ZLINK_PROFILE, NULL), ZLINK_PROFILE_THROUGHPUT);

    /* Bad handles: EFAULT, whatever the option. */
    static uint64_t zeroed[64];
    void *bad_handles[2] = {NULL, zeroed};
    for (int i = 0; i < 2; i++) {
        void *h = bad_handles[i];
        ZT_EQ_INT(zlink_ctx_set(h, ZLINK_IO_THREADS, 1), ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        zlink_config_result_t r = ZLINK_CONFIG_OK;
        ZT_EQ_INT(zlink_ctx_get(h, ZLINK_IO_THREADS, &r), -1);
        ZT_EQ_INT(r, ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_ctx_get(h, ZLINK_IO_THREADS, NULL), -1); /* result may be NULL */
        ZT_EQ_INT(zlink_errno(), EFAULT);
        uint64_t v = 1;
        size_t size = 8;
        ZT_EQ_INT(zlink_ctx_set_data(h, ZLINK_CORE_BUDGET_BYTES, &v, 8),
                  ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_ctx_get_data(h, ZLINK_CORE_BUDGET_BYTES, &v, &size),
                  ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
    }
    zlt_ctx_term(ctx);
}

/* ------------------------------------------------------------ item 7 */

static void test_get_socket_limit(void)
{
    void *ctx = zlt_ctx_new();
    ZT_EQ_INT(ZLINK_SOCKET_LIMIT, 3);
    zlink_config_result_t r = ZLINK_CONFIG_INTERNAL;
    int limit = zlink_ctx_get(ctx, 3, &r);
    ZT_EQ_INT(r, ZLINK_CONFIG_OK);
    /* The largest number of sockets a context can have: at least the
     * default MAX_SOCKETS. THREAD_PRIORITY shares the number 3 and is
     * unreachable: get(3) is the socket limit. */
    ZT_CHECK(limit >= ZLINK_MAX_SOCKETS_DFLT);
    ZT_EQ_INT(zlink_ctx_get(ctx, ZLINK_THREAD_PRIORITY, NULL), limit);
    /* Read-only, and unaffected by MAX_SOCKETS. */
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_SOCKET_LIMIT, limit), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_MAX_SOCKETS, 10), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_ctx_get(ctx, ZLINK_SOCKET_LIMIT, NULL), limit);
    zlt_ctx_term(ctx);
}

/* §1 option values: defaults and the read-only MSG_T_SIZE. */
static void test_option_defaults(void)
{
    void *ctx = zlt_ctx_new();
    struct { int opt, value; } dflt[] = {
        {ZLINK_IO_THREADS, ZLINK_IO_THREADS_DFLT},
        {ZLINK_MAX_SOCKETS, ZLINK_MAX_SOCKETS_DFLT},
        {ZLINK_THREAD_SCHED_POLICY, -1},
        {ZLINK_MAX_MSGSZ, INT_MAX},
        {ZLINK_MSG_T_SIZE, (int)sizeof(zlink_msg_t)},
        {ZLINK_CTX_OPT_BLOCKY, 1},
        {ZLINK_AUTO_HWM_ENABLE, 1},
        {ZLINK_AUTO_HWM_RECALC_DEBOUNCE_MS, 3000},
        {ZLINK_PROFILE, ZLINK_PROFILE_BALANCED},
        {ZLINK_SPIN_US, 0},
        {ZLINK_IO_SPIN_US, 0},
    };
    for (size_t i = 0; i < sizeof dflt / sizeof dflt[0]; i++) {
        zlink_config_result_t r = ZLINK_CONFIG_INTERNAL;
        int v = zlink_ctx_get(ctx, dflt[i].opt, &r);
        if (r != ZLINK_CONFIG_OK || v != dflt[i].value)
            ZT_FAIL("ctx_get(%d) = %d (result %d), expected %d", dflt[i].opt, v, (int)r,
                    dflt[i].value);
    }
    ZT_EQ_INT(zlink_ctx_get(ctx, ZLINK_MSG_T_SIZE, NULL), 64);
    /* The uint64 byte options start unset (0). */
    const int u64opts[] = {ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES, ZLINK_RUNTIME_MEMORY_LIMIT_BYTES,
                           ZLINK_CORE_BUDGET_BYTES};
    for (int i = 0; i < 3; i++) {
        uint64_t v = 99;
        size_t size = 8;
        ZT_EQ_INT(zlink_ctx_get_data(ctx, u64opts[i], &v, &size), ZLINK_CONFIG_OK);
        ZT_EQ_INT(size, 8);
        ZT_EQ_U64(v, 0);
    }
    /* BLOCKY 0: sockets created afterwards default to LINGER 0; before, -1. */
    void *before = zlt_socket(ctx, ZLINK_PAIR);
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_CTX_OPT_BLOCKY, 0), ZLINK_CONFIG_OK);
    void *after = zlt_socket(ctx, ZLINK_PAIR);
    int linger = 12345;
    size_t size = sizeof linger;
    ZT_EQ_INT(zlink_getsockopt(before, ZLINK_LINGER, &linger, &size), ZLINK_CONFIG_OK);
    ZT_EQ_INT(linger, -1);
    ZT_EQ_INT(zlink_getsockopt(after, ZLINK_LINGER, &linger, &size), ZLINK_CONFIG_OK);
    ZT_EQ_INT(linger, 0);
    zlt_finish(ctx, before, after);
}

/* §1 THREAD_NAME_PREFIX: at most 16 bytes including the NUL, via set_data. */
static void test_thread_name_prefix(void)
{
    void *ctx = zlt_ctx_new();
    ZT_EQ_INT(zlink_ctx_set_data(ctx, ZLINK_THREAD_NAME_PREFIX, "app", 4), ZLINK_CONFIG_OK);
    char buf[32];
    memset(buf, 'x', sizeof buf);
    size_t size = sizeof buf;
    ZT_EQ_INT(zlink_ctx_get_data(ctx, ZLINK_THREAD_NAME_PREFIX, buf, &size), ZLINK_CONFIG_OK);
    ZT_EQ_INT(size, 4);
    ZT_EQ_STR(buf, "app");
    /* 15 characters and the NUL fit; 16 characters do not. */
    ZT_EQ_INT(zlink_ctx_set_data(ctx, ZLINK_THREAD_NAME_PREFIX, "123456789012345", 16),
              ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_ctx_set_data(ctx, ZLINK_THREAD_NAME_PREFIX, "1234567890123456", 17),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_ctx_set_data(ctx, ZLINK_THREAD_NAME_PREFIX, "1234567890123456", 16),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    size = sizeof buf;
    ZT_EQ_INT(zlink_ctx_get_data(ctx, ZLINK_THREAD_NAME_PREFIX, buf, &size), ZLINK_CONFIG_OK);
    ZT_EQ_STR(buf, "123456789012345");
    zlt_ctx_term(ctx);
}

/* ------------------------------------------------------------ item 8 */

static void test_byte_options_via_int_set(void)
{
    void *ctx = zlt_ctx_new();
    const int u64opts[] = {ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES, ZLINK_RUNTIME_MEMORY_LIMIT_BYTES,
                           ZLINK_CORE_BUDGET_BYTES};
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_ctx_set(ctx, u64opts[i], 1 << 20), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(zlink_ctx_set(ctx, u64opts[i], 0), ZLINK_CONFIG_INVALID_ARGUMENT);
        /* The set_data path takes them: exactly 8 bytes. */
        uint64_t v = 0x10000000ull + (uint64_t)i, got = 0;
        size_t size = 8;
        ZT_EQ_INT(zlink_ctx_set_data(ctx, u64opts[i], &v, 8), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_ctx_get_data(ctx, u64opts[i], &got, &size), ZLINK_CONFIG_OK);
        ZT_EQ_U64(got, v);
        uint32_t small = 5;
        ZT_EQ_INT(zlink_ctx_set_data(ctx, u64opts[i], &small, 4), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        uint64_t big[2] = {1, 2};
        ZT_EQ_INT(zlink_ctx_set_data(ctx, u64opts[i], big, 16), ZLINK_CONFIG_INVALID_ARGUMENT);
        size = 8;
        ZT_EQ_INT(zlink_ctx_get_data(ctx, u64opts[i], &got, &size), ZLINK_CONFIG_OK);
        ZT_EQ_U64(got, v); /* the refused sets changed nothing */
    }
    zlt_ctx_term(ctx);
}

/* ------------------------------------------------------------ item 9 */

static void test_get_data_size_not_8(void)
{
    void *ctx = zlt_ctx_new();
    uint64_t v = 4242;
    ZT_EQ_INT(zlink_ctx_set_data(ctx, ZLINK_CORE_BUDGET_BYTES, &v, 8), ZLINK_CONFIG_OK);
    const size_t sizes[] = {0, 1, 4, 7, 9, 16};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t buf[2] = {0, 0};
        size_t size = sizes[i];
        ZT_EQ_INT(zlink_ctx_get_data(ctx, ZLINK_CORE_BUDGET_BYTES, buf, &size),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(size, 8); /* tells the caller the size it needs */
    }
    uint64_t got = 0;
    size_t size = 8;
    ZT_EQ_INT(zlink_ctx_get_data(ctx, ZLINK_CORE_BUDGET_BYTES, &got, &size), ZLINK_CONFIG_OK);
    ZT_EQ_U64(got, 4242);
    zlt_ctx_term(ctx);
}

/* ------------------------------------------------------------ item 10 */

static void test_set_data_removed_option_18(void)
{
    void *ctx = zlt_ctx_new();
    uint64_t v = 1;
    ZT_EQ_INT(zlink_ctx_set_data(ctx, 18, &v, 8), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_ctx_set(ctx, 18, 1), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    size_t size = 8;
    ZT_EQ_INT(zlink_ctx_get_data(ctx, 18, &v, &size), ZLINK_CONFIG_INVALID_ARGUMENT);
    zlt_ctx_term(ctx);
}

/* ------------------------------------------------------------ item 11 */

#define WORKERS 8
#define ROUNDS 150

static void *g_shared_ctx;
static pthread_barrier_t g_go;
static atomic_int g_sockets_made;

static void *churn_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    static const int types[] = {ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER,
                                ZLINK_PUB,  ZLINK_SUB,    ZLINK_STREAM};
    pthread_barrier_wait(&g_go);
    for (int i = 0; i < ROUNDS; i++) {
        if (id == 0) {
            /* One thread reads and writes context options meanwhile. */
            ZT_EQ_INT(zlink_ctx_set(g_shared_ctx, ZLINK_PROFILE, i % 4), ZLINK_CONFIG_OK);
            ZT_CHECK(zlink_ctx_get(g_shared_ctx, ZLINK_MAX_SOCKETS, NULL) == 4095);
            continue;
        }
        void *s = zlink_socket(g_shared_ctx, types[(i + id) % 6]);
        if (s == NULL)
            ZT_FAIL("worker %d round %d: zlink_socket errno %d", id, i, zlink_errno());
        atomic_fetch_add(&g_sockets_made, 1);
        if (i % 3 == 0) {
            /* A PAIR link through the shared inproc registry. */
            char ep[64];
            snprintf(ep, sizeof ep, "inproc://churn-%d-%d", id, i);
            void *p = zlink_socket(g_shared_ctx, ZLINK_PAIR);
            void *q = zlink_socket(g_shared_ctx, ZLINK_PAIR);
            ZT_CHECK(p != NULL && q != NULL);
            ZT_EQ_INT(zlink_bind(p, ep), ZLINK_BIND_OK);
            ZT_EQ_INT(zlink_connect(q, ep), ZLINK_CONNECT_OK);
            ZT_EQ_INT(zlt_send_str(q, ep, ZLINK_SEND_FLAGS_NONE), ZLINK_SUBMIT_OK);
            zlt_expect_str(p, ep);
            zlt_close(q);
            zlt_close(p);
        }
        zlt_close(s);
    }
    return NULL;
}

static void test_thread_safe_create_close_then_term(void)
{
    g_shared_ctx = zlt_ctx_new();
    atomic_store(&g_sockets_made, 0);
    pthread_t t[WORKERS];
    ZT_EQ_INT(pthread_barrier_init(&g_go, NULL, WORKERS), 0);
    for (intptr_t i = 0; i < WORKERS; i++)
        ZT_EQ_INT(pthread_create(&t[i], NULL, churn_main, (void *)i), 0);
    for (int i = 0; i < WORKERS; i++)
        ZT_EQ_INT(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&g_go);
    ZT_EQ_INT(atomic_load(&g_sockets_made), (WORKERS - 1) * ROUNDS);
    /* Every slot was returned: MAX_SOCKETS more sockets still fit. */
    ZT_EQ_INT(zlink_ctx_set(g_shared_ctx, ZLINK_MAX_SOCKETS, 16), ZLINK_CONFIG_OK);
    void *s[16];
    for (int i = 0; i < 16; i++) {
        s[i] = zlink_socket(g_shared_ctx, ZLINK_PAIR);
        ZT_CHECK(s[i] != NULL);
    }
    for (int i = 0; i < 16; i++)
        zlt_close(s[i]);
    zlt_ctx_term(g_shared_ctx);
}

/* Two threads shut the same context down at once: both return OK, and a
 * blocked receive on a third ends with ETERM. */
static void *shutdown_main(void *arg)
{
    pthread_barrier_wait(&g_go);
    ZT_EQ_INT(zlink_ctx_shutdown(arg), ZLINK_CLOSE_OK);
    return NULL;
}

static void test_concurrent_shutdown(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    inproc_pair(ctx, "concurrent", &a, &b);
    pthread_t s1, s2;
    zlt_blocked_t bc;
    start_blocked(&bc, b, false, true);
    ZT_EQ_INT(pthread_barrier_init(&g_go, NULL, 2), 0);
    ZT_EQ_INT(pthread_create(&s1, NULL, shutdown_main, ctx), 0);
    ZT_EQ_INT(pthread_create(&s2, NULL, shutdown_main, ctx), 0);
    ZT_EQ_INT(pthread_join(s1, NULL), 0);
    ZT_EQ_INT(pthread_join(s2, NULL), 0);
    join_terminated(&bc);
    pthread_barrier_destroy(&g_go);
    zlt_finish(ctx, a, b);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_new_returns_context),
    ZT_CASE(test_shutdown_wakes_blocked_recv),
    ZT_CASE(test_shutdown_wakes_blocked_send),
    ZT_CASE(test_calls_after_shutdown_get_eterm),
    ZT_CASE(test_term_after_close),
    ZT_CASE(test_bad_handle_term_shutdown),
    ZT_CASE(test_set_bad_option_or_value),
    ZT_CASE(test_get_socket_limit),
    ZT_CASE(test_option_defaults),
    ZT_CASE(test_thread_name_prefix),
    ZT_CASE(test_byte_options_via_int_set),
    ZT_CASE(test_get_data_size_not_8),
    ZT_CASE(test_set_data_removed_option_18),
    ZT_CASE(test_thread_safe_create_close_then_term),
    ZT_CASE(test_concurrent_shutdown),
    ZT_CASE(test_term_blocks_until_sockets_closed),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
