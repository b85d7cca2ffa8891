/*
 * test_poll.c — the one-shot zlink_poll through the public API: seed 004 §9
 * "zlink_poll" / core-contract §8 "05-polling" items 1-3, the items that
 * name zlink_poll (9: COMPLETION in an item; 15: signals; 27: error_out),
 * and the wake-up and lifetime rules of seed 004 §3 and §5 as they apply to
 * a one-shot wait.
 *
 *   1   test_poll_returns_count_zero_or_minus_one
 *   2   test_poll_infinite_and_immediate
 *   3   test_poll_revents_is_a_snapshot
 *   9   test_poll_completion_item_is_einval
 *   15  test_poll_signal_does_not_interrupt
 *   27  test_poll_error_out_may_be_null
 *   §3  test_poll_socket_wakes_waiter (inproc, tcp), test_poll_fd_pipe,
 *       test_poll_fd_and_socket_mixed, test_poll_unsupported_bits,
 *       test_poll_many_items
 *   §5  test_poll_eterm_after_shutdown, test_poll_closed_socket_is_pollerr
 */
#include "zlink.h"
#include "zltest.h"
#include "zltest_zlink.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#define LONG_WAIT_MS ZT_MS(20000)
#define EDGE_BOUND_MS ZT_MS(5000)

static void pair_link(void *ctx, const char *tr, void **a, void **b)
{
    *a = zlt_sock(ctx, ZLINK_PAIR);
    *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_link(*a, *b, tr);
    zlt_send_ok(*a, "hi");
    zlt_expect_str(*b, "hi");
}

static zlink_pollitem_t sock_item(void *s, short events)
{
    zlink_pollitem_t it;
    memset(&it, 0, sizeof it);
    it.socket = s;
    it.fd = -1;
    it.events = events;
    return it;
}

static zlink_pollitem_t fd_item(int fd, short events)
{
    zlink_pollitem_t it;
    memset(&it, 0, sizeof it);
    it.fd = fd;
    it.events = events;
    return it;
}

static int poll_ok(zlink_pollitem_t *items, int n, long ms)
{
    zlink_config_result_t err = (zlink_config_result_t)-1;
    int rc = zlink_poll(items, n, ms, &err);
    if (rc < 0)
        ZT_FAIL("zlink_poll: -1, result %d, errno %d", (int)err, zlink_errno());
    ZT_EQ_INT(err, ZLINK_CONFIG_OK);
    return rc;
}

static void poll_fails(zlink_pollitem_t *items, int n, long ms, zlink_config_result_t want,
                       int want_errno)
{
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poll(items, n, ms, &err), -1);
    ZT_EQ_INT(err, want);
    ZT_EQ_INT(zlink_errno(), want_errno);
}

/* A thread blocked in zlink_poll. */
struct poller_thread {
    zlink_pollitem_t items[4];
    int n;
    long timeout_ms;
    pthread_t th;
    _Atomic long tid;
    int rc;
    zlink_config_result_t err;
    int errnum;
    int64_t elapsed_ms;
};

static void *poll_main(void *arg)
{
    struct poller_thread *pt = arg;
    atomic_store(&pt->tid, zt_gettid());
    int64_t t0 = zt_now_ms();
    pt->rc = zlink_poll(pt->items, pt->n, pt->timeout_ms, &pt->err);
    pt->errnum = zlink_errno();
    pt->elapsed_ms = zt_now_ms() - t0;
    return NULL;
}

static void poll_start(struct poller_thread *pt)
{
    atomic_store(&pt->tid, 0);
    ZT_EQ_INT(pthread_create(&pt->th, NULL, poll_main, pt), 0);
    ZT_EVENTUALLY(atomic_load(&pt->tid) != 0, 2000);
    zt_wait_blocked(atomic_load(&pt->tid));
}

static void poll_join_early(struct poller_thread *pt, int want_rc)
{
    ZT_EQ_INT(pthread_join(pt->th, NULL), 0);
    if (pt->rc != want_rc)
        ZT_FAIL("zlink_poll returned %d (result %d, errno %d), expected %d", pt->rc,
                (int)pt->err, pt->errnum, want_rc);
    if (pt->elapsed_ms >= EDGE_BOUND_MS)
        ZT_FAIL("woken after %lld ms: by the timeout, not the edge",
                (long long)pt->elapsed_ms);
}

/* item 1 */
static void test_poll_returns_count_zero_or_minus_one(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    zlink_pollitem_t items[3] = {sock_item(b, ZLINK_POLLIN), fd_item(fds[0], ZLINK_POLLIN),
                                 sock_item(a, ZLINK_POLLOUT)};
    /* One ready (a can send). */
    ZT_EQ_INT(poll_ok(items, 3, 0), 1);
    ZT_EQ_INT(items[2].revents, ZLINK_POLLOUT);
    /* Three ready. */
    zlt_send_ok(a, "x");
    ZT_EQ_INT(write(fds[1], "y", 1), 1);
    ZT_EQ_INT(poll_ok(items, 3, 0), 3);
    ZT_EQ_INT(items[0].revents, ZLINK_POLLIN);
    ZT_EQ_INT(items[1].revents, ZLINK_POLLIN);
    /* 0 on timeout. */
    zlink_pollitem_t quiet[1] = {sock_item(a, ZLINK_POLLIN)};
    ZT_EQ_INT(poll_ok(quiet, 1, 20), 0);
    /* -1 with both error outputs. */
    poll_fails(NULL, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    poll_fails(items, -1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    uint64_t junk[16] = {0};
    zlink_pollitem_t bad[1] = {sock_item(junk, ZLINK_POLLIN)};
    poll_fails(bad, 1, 0, ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    zlink_pollitem_t badbit[1] = {sock_item(b, ZLINK_POLLIN | ZLINK_POLLITEMS_DFLT)};
    poll_fails(badbit, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t badfd[1] = {fd_item(-1, ZLINK_POLLIN)};
    poll_fails(badfd, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    /* Arguments before handles, across items. */
    zlink_pollitem_t mixed[2] = {sock_item(junk, ZLINK_POLLIN), fd_item(fds[0], 256)};
    poll_fails(mixed, 2, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_expect_str(b, "x");
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

/* item 2 */
static void test_poll_infinite_and_immediate(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    zlink_pollitem_t items[1] = {sock_item(b, ZLINK_POLLIN)};
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(poll_ok(items, 1, 0), 0);
    ZT_CHECK(zt_now_ms() - t0 < EDGE_BOUND_MS);
    /* -1: waits until the record comes, however long that is. */
    struct poller_thread pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = sock_item(b, ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = -1;
    poll_start(&pt);
    zt_sleep_ms(50);
    zlt_send_ok(a, "x");
    poll_join_early(&pt, 1);
    ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
    ZT_CHECK(pt.elapsed_ms >= 50);
    zlt_expect_str(b, "x");
    zlt_finish(ctx, a, b);
}

/* item 3 */
static void test_poll_revents_is_a_snapshot(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    zlink_pollitem_t items[2] = {sock_item(b, ZLINK_POLLIN), sock_item(a, 0)};
    items[0].revents = 0x7777;  /* garbage in: cleared on entry */
    items[1].revents = 0x5555;  /* also for an item with no events */
    ZT_EQ_INT(poll_ok(items, 2, 0), 0);
    ZT_EQ_INT(items[0].revents, 0);
    ZT_EQ_INT(items[1].revents, 0);
    zlt_send_ok(a, "x");
    ZT_EQ_INT(poll_ok(items, 2, 0), 1);
    ZT_EQ_INT(items[0].revents, ZLINK_POLLIN);
    ZT_EQ_INT(items[1].revents, 0);
    /* The snapshot does not follow later changes; the next call does. */
    zlt_expect_str(b, "x");
    ZT_EQ_INT(items[0].revents, ZLINK_POLLIN);
    ZT_EQ_INT(poll_ok(items, 2, 0), 0);
    ZT_EQ_INT(items[0].revents, 0);
    /* Even a failing call clears it first. */
    items[0].revents = 9;
    items[1].events = 1024;
    poll_fails(items, 2, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(items[0].revents, 0);
    zlt_finish(ctx, a, b);
}

/* item 9: COMPLETION is for pollers only. */
static void test_poll_completion_item_is_einval(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    zlink_pollitem_t a[1] = {sock_item(s, ZLINK_POLLCOMPLETION)};
    poll_fails(a, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t b[1] = {sock_item(s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION)};
    poll_fails(b, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t c[1] = {fd_item(fds[0], ZLINK_POLLCOMPLETION)};
    poll_fails(c, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, s);
}

static void test_poll_unsupported_bits(void)
{
    void *ctx = zlt_ctx_new();
    void *pair = zlt_sock(ctx, ZLINK_PAIR), *router = zlt_sock(ctx, ZLINK_ROUTER);
    void *t = zlink_timer_new();
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    zlink_pollitem_t a[1] = {sock_item(pair, ZLINK_POLLPRI)};
    poll_fails(a, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlink_pollitem_t b[1] = {sock_item(pair, ZLINK_POLLROUTE)};
    poll_fails(b, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlink_pollitem_t c[1] = {fd_item(fds[0], ZLINK_POLLROUTE)};
    poll_fails(c, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    /* Timers are watched through a poller. */
    zlink_pollitem_t d[1] = {sock_item(t, ZLINK_POLLIN)};
    poll_fails(d, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    /* ROUTE on a ROUTER is fine (nothing changed: not ready). */
    zlink_pollitem_t e[1] = {sock_item(router, ZLINK_POLLROUTE)};
    ZT_EQ_INT(poll_ok(e, 1, 0), 0);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, pair, router);
}

/* item 27 and "nothing to wait for" */
static void test_poll_error_out_may_be_null(void)
{
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    ZT_EQ_INT(write(fds[1], "y", 1), 1);
    zlink_pollitem_t items[2] = {fd_item(fds[0], ZLINK_POLLIN), fd_item(fds[1], 0)};
    ZT_EQ_INT(zlink_poll(items, 2, 0, NULL), 1);
    ZT_EQ_INT(zlink_poll(NULL, 3, 0, NULL), -1);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* No items, or only zero masks: 0/OK at once, whatever the timeout. */
    zlink_config_result_t err = (zlink_config_result_t)-1;
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_poll(NULL, 0, -1, &err), 0);
    ZT_EQ_INT(err, ZLINK_CONFIG_OK);
    items[0].events = 0;
    ZT_EQ_INT(zlink_poll(items, 2, -1, NULL), 0);
    ZT_CHECK(zt_now_ms() - t0 < EDGE_BOUND_MS);
    close(fds[0]);
    close(fds[1]);
}

/* §3: a record sent by another thread wakes a blocked zlink_poll. */
static void test_poll_socket_wakes_waiter(void)
{
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *a, *b;
        pair_link(ctx, tr, &a, &b);
        for (int round = 0; round < 3; round++) {
            struct poller_thread pt;
            memset(&pt, 0, sizeof pt);
            pt.items[0] = sock_item(b, ZLINK_POLLIN);
            pt.n = 1;
            pt.timeout_ms = LONG_WAIT_MS;
            poll_start(&pt);
            zlt_send_ok(a, "x");
            poll_join_early(&pt, 1);
            ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
            zlt_expect_str(b, "x");
        }
    }
}

static void test_poll_fd_pipe(void)
{
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    struct poller_thread pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = fd_item(fds[0], ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = LONG_WAIT_MS;
    poll_start(&pt);
    ZT_EQ_INT(write(fds[1], "y", 1), 1);
    poll_join_early(&pt, 1);
    ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
    /* Writable end, error bits. */
    zlink_pollitem_t w[1] = {fd_item(fds[1], ZLINK_POLLOUT)};
    ZT_EQ_INT(poll_ok(w, 1, 0), 1);
    ZT_EQ_INT(w[0].revents, ZLINK_POLLOUT);
    close(fds[0]);
    ZT_EQ_INT(poll_ok(w, 1, 0), 1);
    ZT_CHECK(w[0].revents & ZLINK_POLLERR);
    close(fds[1]);
}

/* An FD and a socket in one call: the waiter sleeps in ppoll; the socket
 * must still end the sleep. */
static void test_poll_fd_and_socket_mixed(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    for (int round = 0; round < 4; round++) {
        struct poller_thread pt;
        memset(&pt, 0, sizeof pt);
        pt.items[0] = fd_item(fds[0], ZLINK_POLLIN);
        pt.items[1] = sock_item(b, ZLINK_POLLIN);
        pt.n = 2;
        pt.timeout_ms = LONG_WAIT_MS;
        poll_start(&pt);
        if (round % 2 == 0)
            zlt_send_ok(a, "x");
        else
            ZT_EQ_INT(write(fds[1], "y", 1), 1);
        poll_join_early(&pt, 1);
        if (round % 2 == 0) {
            ZT_EQ_INT(pt.items[1].revents, ZLINK_POLLIN);
            zlt_expect_str(b, "x");
        } else {
            ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
            char c;
            ZT_EQ_INT(read(fds[0], &c, 1), 1);
        }
    }
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

/* More items than fit on the stack; the same socket twice is allowed. */
static void test_poll_many_items(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    enum { N = 40 };
    int fds[N / 2][2];
    zlink_pollitem_t items[N + 2];
    for (int i = 0; i < N / 2; i++) {
        ZT_EQ_INT(pipe(fds[i]), 0);
        items[2 * i] = fd_item(fds[i][0], ZLINK_POLLIN);
        items[2 * i + 1] = fd_item(fds[i][1], ZLINK_POLLOUT);
    }
    items[N] = sock_item(b, ZLINK_POLLIN);
    items[N + 1] = sock_item(b, ZLINK_POLLIN | ZLINK_POLLOUT);
    ZT_EQ_INT(poll_ok(items, N + 2, 0), N / 2 + 1); /* every write end, b's OUT */
    ZT_EQ_INT(items[N].revents, 0);
    ZT_EQ_INT(items[N + 1].revents, ZLINK_POLLOUT);
    ZT_EQ_INT(write(fds[7][1], "y", 1), 1);
    zlt_send_ok(a, "x");
    ZT_EQ_INT(poll_ok(items, N + 2, 0), N / 2 + 3);
    ZT_EQ_INT(items[14].revents, ZLINK_POLLIN);
    ZT_EQ_INT(items[N].revents, ZLINK_POLLIN);
    ZT_EQ_INT(items[N + 1].revents, ZLINK_POLLIN | ZLINK_POLLOUT);
    zlt_expect_str(b, "x");
    for (int i = 0; i < N / 2; i++) {
        close(fds[i][0]);
        close(fds[i][1]);
    }
    zlt_finish(ctx, a, b);
}

/* §5: shutdown ends a blocked zlink_poll with INTERNAL/ETERM; FD-only calls
 * are not affected. */
static void test_poll_eterm_after_shutdown(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    struct poller_thread pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = sock_item(b, ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = LONG_WAIT_MS;
    poll_start(&pt);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
    poll_join_early(&pt, -1);
    ZT_EQ_INT(pt.err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(pt.errnum, ETERM);
    zlink_pollitem_t again[1] = {sock_item(a, ZLINK_POLLOUT)};
    poll_fails(again, 1, -1, ZLINK_CONFIG_INTERNAL, ETERM);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    zlink_pollitem_t fdonly[1] = {fd_item(fds[0], ZLINK_POLLIN)};
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(poll_ok(fdonly, 1, 30), 0);
    ZT_CHECK(zt_now_ms() - t0 >= 30);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

/* A socket closed before the call, or while it waits, reports POLLERR. */
static void test_poll_closed_socket_is_pollerr(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    struct poller_thread pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = sock_item(b, ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = LONG_WAIT_MS;
    poll_start(&pt);
    ZT_EQ_INT(zlink_close(b), ZLINK_CLOSE_OK);
    poll_join_early(&pt, 1);
    ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLERR);
    zlink_pollitem_t items[1] = {sock_item(b, ZLINK_POLLIN)};
    ZT_EQ_INT(poll_ok(items, 1, -1), 1);
    ZT_EQ_INT(items[0].revents, ZLINK_POLLERR);
    zlt_finish(ctx, a);
}

/* item 15 */
static _Atomic int g_signals;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&g_signals, 1);
}

static void pester(struct poller_thread *pt, int times)
{
    for (int i = 0; i < times; i++) {
        zt_wait_blocked(atomic_load(&pt->tid));
        int before = atomic_load(&g_signals);
        ZT_EQ_INT(pthread_kill(pt->th, SIGUSR1), 0);
        ZT_EVENTUALLY(atomic_load(&g_signals) > before, 2000);
    }
}

static void test_poll_signal_does_not_interrupt(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = 0; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    ZT_EQ_INT(sigaction(SIGUSR1, &sa, NULL), 0);

    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    const long timeout = ZT_MS(400);
    /* Socket only (futex), FD only (ppoll), both (ppoll + eventfd). */
    for (int variant = 0; variant < 3; variant++) {
        struct poller_thread pt;
        memset(&pt, 0, sizeof pt);
        if (variant != 1)
            pt.items[pt.n++] = sock_item(b, ZLINK_POLLIN);
        if (variant != 0)
            pt.items[pt.n++] = fd_item(fds[0], ZLINK_POLLIN);
        pt.timeout_ms = timeout;
        poll_start(&pt);
        pester(&pt, 3);
        ZT_EQ_INT(pthread_join(pt.th, NULL), 0);
        if (pt.rc != 0)
            ZT_FAIL("variant %d: zlink_poll returned %d (result %d, errno %d)", variant,
                    pt.rc, (int)pt.err, pt.errnum);
        ZT_EQ_INT(pt.err, ZLINK_CONFIG_OK);
        ZT_CHECK(pt.elapsed_ms >= timeout);

        /* Signal, then an event within the timeout: the event. */
        pt.timeout_ms = LONG_WAIT_MS;
        poll_start(&pt);
        pester(&pt, 2);
        if (variant == 1)
            ZT_EQ_INT(write(fds[1], "y", 1), 1);
        else
            zlt_send_ok(a, "x");
        poll_join_early(&pt, 1);
        if (variant == 1) {
            char c;
            ZT_EQ_INT(read(fds[0], &c, 1), 1);
        } else {
            zlt_expect_str(b, "x");
        }
    }
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    ZT_RUN(test_poll_returns_count_zero_or_minus_one);
    ZT_RUN(test_poll_infinite_and_immediate);
    ZT_RUN(test_poll_revents_is_a_snapshot);
    ZT_RUN(test_poll_completion_item_is_einval);
    ZT_RUN(test_poll_unsupported_bits);
    ZT_RUN(test_poll_error_out_may_be_null);
    ZT_RUN(test_poll_socket_wakes_waiter);
    ZT_RUN(test_poll_fd_pipe);
    ZT_RUN(test_poll_fd_and_socket_mixed);
    ZT_RUN(test_poll_many_items);
    ZT_RUN(test_poll_eterm_after_shutdown);
    ZT_RUN(test_poll_closed_socket_is_pollerr);
    ZT_RUN(test_poll_signal_does_not_interrupt);
    return zt_done();
}
