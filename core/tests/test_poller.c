/*
 * test_poller.c — the reusable poller (zlink_poller_*) through the public
 * API: seed 004 §9 / core-contract §8 "05-polling", the items that do not
 * need request/reply, plus the wake-up guarantees of seed 004 §3 and §5.
 *
 *   4   test_add_twice_is_conflict
 *   5   test_timer_in_two_pollers_is_invalid_state,
 *       test_destroy_registered_timer_is_busy
 *   6   test_one_socket_in_two_pollers
 *   7   test_missing_source_is_not_found
 *   8   test_bad_bit_is_invalid_argument, test_unsupported_bit_is_not_supported
 *   9   test_completion_bit_on_completion_sockets (add/modify, alone and OR'ed,
 *       EINVAL elsewhere), test_completion_reports_writable (WRITABLE only;
 *       REQUEST records belong to the request/reply tests)
 *   10  test_second_completion_owner_is_invalid_state
 *   11  test_closed_socket_reports_pollerr_once, test_pin_outlives_ctx_term
 *   12  test_fd_pri_and_error_bits
 *   13  test_event_fields_per_kind
 *   14  test_event_array_is_caller_owned
 *   15  test_signal_does_not_interrupt_wait
 *   21  test_destroy_during_wait_is_busy
 *   22  test_calls_during_wait_are_busy
 *   23  test_new_and_destroy
 *   24  test_size_counts_registrations
 *   25  test_wait_results
 *   26  test_nothing_waitable_returns_at_once
 *   27  test_error_out_may_be_null
 *   §5  test_shutdown_ends_wait_with_eterm
 *   §3  test_socket_in_wakes_waiter (inproc, tcp), test_socket_out_wakes_waiter,
 *       test_fd_source_wakes_waiter, test_timer_source_wakes_waiter,
 *       test_route_change_wakes_waiter, test_small_event_array_rotates,
 *       test_monitor_handle_as_source (a monitor registered like a socket)
 * (zlink_poll is in test_poll.c, the many-repetition races in
 * test_poll_stress.c.)
 *
 * "Woken by the edge": a waiting thread is started with a long timeout, the
 * main thread waits until it sleeps in the kernel (zt_wait_blocked), makes
 * the source ready, and the case checks that the wait returned the event
 * long before the timeout.
 */
#include "zlink.h"
#include "zltest.h"
#include "zltest_zlink.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#define MS 1000000ull

/* A long timeout for waits that must end early, and the bound they must
 * beat. */
#define LONG_WAIT_MS ZT_MS(20000)
#define EDGE_BOUND_MS ZT_MS(5000)

/* --------------------------------------------------------------- helpers */

static void *poller_new(void)
{
    void *p = zlink_poller_new();
    ZT_CHECK(p != NULL);
    return p;
}

static void poller_destroy(void *p)
{
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_OK);
    ZT_CHECK(p == NULL);
}

static void add_ok(void *p, void *s, void *ud, short ev)
{
    zlink_config_result_t r = zlink_poller_add(p, s, ud, ev);
    if (r != ZLINK_CONFIG_OK)
        ZT_FAIL("zlink_poller_add(events %d): result %d, errno %d", ev, (int)r, zlink_errno());
}

static void expect_config(zlink_config_result_t got, zlink_config_result_t want, int err)
{
    ZT_EQ_INT(got, want);
    if (want != ZLINK_CONFIG_OK)
        ZT_EQ_INT(zlink_errno(), err);
}

/* zlink_poller_wait with a fresh error_out; checks the success path. */
static int wait_ok(void *p, zlink_poller_event_t *ev, int cap, long ms)
{
    zlink_config_result_t err = (zlink_config_result_t)-1;
    int n = zlink_poller_wait(p, ev, cap, ms, &err);
    if (n < 0)
        ZT_FAIL("zlink_poller_wait: -1, result %d, errno %d", (int)err, zlink_errno());
    ZT_EQ_INT(err, ZLINK_CONFIG_OK);
    return n;
}

/* Two connected PAIR sockets of ctx on transport tr; for tcp the link is
 * proven by one record each way, so later records arrive promptly. */
static void pair_link(void *ctx, const char *tr, void **a, void **b)
{
    *a = zlt_sock(ctx, ZLINK_PAIR);
    *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_link(*a, *b, tr);
    zlt_send_ok(*a, "hi");
    zlt_expect_str(*b, "hi");
    zlt_send_ok(*b, "hi");
    zlt_expect_str(*a, "hi");
}

static void make_pipe(int fds[2])
{
    ZT_EQ_INT(pipe(fds), 0);
}

static void write_byte(int fd)
{
    char c = 'x';
    ZT_EQ_INT(write(fd, &c, 1), 1);
}

static void read_byte(int fd)
{
    char c;
    ZT_EQ_INT(read(fd, &c, 1), 1);
}

/* A thread waiting in zlink_poller_wait. */
struct waiter {
    void *poller;
    long timeout_ms;
    int cap;
    pthread_t th;
    _Atomic long tid;
    int rc;
    zlink_config_result_t err;
    int errnum;
    int64_t elapsed_ms;
    zlink_poller_event_t ev[8];
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    atomic_store(&w->tid, zt_gettid());
    int64_t t0 = zt_now_ms();
    w->rc = zlink_poller_wait(w->poller, w->ev, w->cap > 0 ? w->cap : 8, w->timeout_ms, &w->err);
    w->errnum = zlink_errno();
    w->elapsed_ms = zt_now_ms() - t0;
    return NULL;
}

/* Starts w waiting on p and returns once it sleeps inside the wait (as far
 * as /proc can tell). */
static void waiter_start(struct waiter *w, void *p, long timeout_ms)
{
    memset(w, 0, sizeof *w);
    w->poller = p;
    w->timeout_ms = timeout_ms;
    ZT_EQ_INT(pthread_create(&w->th, NULL, waiter_main, w), 0);
    ZT_EVENTUALLY(atomic_load(&w->tid) != 0, 2000);
    zt_wait_blocked(atomic_load(&w->tid));
}

static void waiter_join(struct waiter *w)
{
    ZT_EQ_INT(pthread_join(w->th, NULL), 0);
}

/* The waiter returned exactly one event of kind with these bits, early. */
static void waiter_got_one(struct waiter *w, zlink_poller_source_kind_t kind, short events)
{
    if (w->rc != 1)
        ZT_FAIL("wait returned %d (result %d, errno %d) after %lld ms", w->rc, (int)w->err,
                w->errnum, (long long)w->elapsed_ms);
    ZT_EQ_INT(w->err, ZLINK_CONFIG_OK);
    ZT_EQ_INT(w->ev[0].source_kind, kind);
    ZT_EQ_INT(w->ev[0].events, events);
    if (w->elapsed_ms >= EDGE_BOUND_MS)
        ZT_FAIL("woken after %lld ms: by the timeout, not the edge", (long long)w->elapsed_ms);
}

/* ---------------------------------------------------------- item 4: dup */

static void test_add_twice_is_conflict(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new();
    int fds[2];
    make_pipe(fds);
    void *p = poller_new();
    add_ok(p, s, NULL, ZLINK_POLLIN);
    expect_config(zlink_poller_add(p, s, NULL, ZLINK_POLLOUT), ZLINK_CONFIG_CONFLICT, EEXIST);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLOUT), ZLINK_CONFIG_CONFLICT,
                  EEXIST);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_CONFLICT, EEXIST);
    expect_config(zlink_poller_add(p, t, NULL, ZLINK_POLLIN), ZLINK_CONFIG_CONFLICT, EEXIST);
    ZT_EQ_INT(zlink_poller_size(p, NULL), 3);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, s);
}

/* ---------------------------------------------------- item 5: timer owners */

static void test_timer_in_two_pollers_is_invalid_state(void)
{
    void *t = zlink_timer_new();
    void *p1 = poller_new(), *p2 = poller_new();
    ZT_EQ_INT(zlink_poller_add_timer(p1, t, NULL), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_add_timer(p2, t, NULL), ZLINK_CONFIG_INVALID_STATE, EBUSY);
    expect_config(zlink_poller_add(p2, t, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE,
                  EBUSY);
    ZT_EQ_INT(zlink_poller_size(p2, NULL), 0);
    /* Once p1 lets go, p2 may take it. */
    ZT_EQ_INT(zlink_poller_remove_timer(p1, t), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(p2, t, NULL), ZLINK_CONFIG_OK);
    /* Destroying p2 lets go as well. */
    poller_destroy(p2);
    ZT_EQ_INT(zlink_poller_add_timer(p1, t, NULL), ZLINK_CONFIG_OK);
    poller_destroy(p1);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
}

static void test_destroy_registered_timer_is_busy(void)
{
    void *t = zlink_timer_new();
    void *p = poller_new();
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    void *keep = t;
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_CHECK(t == keep);
    /* Still registered and working. */
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 1), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(wait_ok(p, ev, 2, LONG_WAIT_MS), 1);
    ZT_CHECK(ev[0].timer == t);
    ZT_EQ_INT(zlink_poller_remove(p, t), ZLINK_CONFIG_OK); /* generic remove works too */
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    ZT_CHECK(t == NULL);
    poller_destroy(p);
}

/* ------------------------------------------------- item 6: two pollers */

static void test_one_socket_in_two_pollers(void)
{
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *a, *b;
        pair_link(ctx, tr, &a, &b);
        void *p1 = poller_new(), *p2 = poller_new();
        int ud1, ud2;
        add_ok(p1, b, &ud1, ZLINK_POLLIN);
        add_ok(p2, b, &ud2, ZLINK_POLLIN | ZLINK_POLLOUT);
        zlink_poller_event_t ev[4];
        /* p2 sees OUT (a peer with room), p1 asked for IN only: nothing. */
        ZT_EQ_INT(wait_ok(p1, ev, 4, 0), 0);
        ZT_EQ_INT(wait_ok(p2, ev, 4, 0), 1);
        ZT_EQ_INT(ev[0].events, ZLINK_POLLOUT);
        ZT_CHECK(ev[0].user_data == &ud2);
        ZT_EQ_INT(zlink_poller_modify(p2, b, ZLINK_POLLIN), ZLINK_CONFIG_OK);

        /* Both wait on other threads; one record wakes both. */
        struct waiter w1, w2;
        waiter_start(&w1, p1, LONG_WAIT_MS);
        waiter_start(&w2, p2, LONG_WAIT_MS);
        zlt_send_ok(a, "x");
        waiter_join(&w1);
        waiter_join(&w2);
        waiter_got_one(&w1, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        waiter_got_one(&w2, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        ZT_CHECK(w1.ev[0].user_data == &ud1 && w2.ev[0].user_data == &ud2);

        /* Independent registrations: removing one leaves the other. */
        ZT_EQ_INT(zlink_poller_remove(p1, b), ZLINK_CONFIG_OK);
        ZT_EQ_INT(wait_ok(p1, ev, 4, 0), 0);
        ZT_EQ_INT(wait_ok(p2, ev, 4, 0), 1);
        zlt_expect_str(b, "x");
        ZT_EQ_INT(wait_ok(p2, ev, 4, 0), 0);
        poller_destroy(p1);
        poller_destroy(p2);
    }
}

/* ---------------------------------------------------- item 7: not found */

static void test_missing_source_is_not_found(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *other = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new();
    void *p = poller_new();
    add_ok(p, other, NULL, ZLINK_POLLIN);
    expect_config(zlink_poller_modify(p, s, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    expect_config(zlink_poller_remove(p, s), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    expect_config(zlink_poller_modify_fd(p, 0, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    expect_config(zlink_poller_remove_fd(p, 0), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    expect_config(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    expect_config(zlink_poller_modify(p, t, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    expect_config(zlink_poller_remove(p, t), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    /* Something that is no source at all is a bad handle, not a missing one. */
    uint64_t junk[16] = {0};
    expect_config(zlink_poller_remove(p, junk), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    expect_config(zlink_poller_remove(p, NULL), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    expect_config(zlink_poller_remove_timer(p, s), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    /* A removed source is missing afterwards. */
    ZT_EQ_INT(zlink_poller_remove(p, other), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_remove(p, other), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    ZT_EQ_INT(zlink_poller_size(p, NULL), 0);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s, other);
}

/* ------------------------------------------------------ item 8: bad bits */

static void test_bad_bit_is_invalid_argument(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new();
    int fds[2];
    make_pipe(fds);
    void *p = poller_new();
    const short bad[] = {ZLINK_POLLITEMS_DFLT, ZLINK_POLLIN | ZLINK_POLLITEMS_DFLT, 128, 0x100,
                         (short)0x8000, -1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_config(zlink_poller_add(p, s, NULL, bad[i]), ZLINK_CONFIG_INVALID_ARGUMENT,
                      EINVAL);
        expect_config(zlink_poller_add_fd(p, fds[0], NULL, bad[i]),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    }
    expect_config(zlink_poller_add_fd(p, -1, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_ARGUMENT,
                  EINVAL);
    add_ok(p, s, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_config(zlink_poller_modify(p, s, bad[i]), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        expect_config(zlink_poller_modify_fd(p, fds[0], bad[i]), ZLINK_CONFIG_INVALID_ARGUMENT,
                      EINVAL);
        expect_config(zlink_poller_modify(p, t, bad[i]), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    }
    /* The argument is checked before the handles. */
    expect_config(zlink_poller_add(NULL, s, NULL, 128), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    /* Bad handles. */
    uint64_t junk[16] = {0};
    expect_config(zlink_poller_add(NULL, s, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                  EFAULT);
    expect_config(zlink_poller_add(junk, s, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                  EFAULT);
    expect_config(zlink_poller_add(p, NULL, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                  EFAULT);
    expect_config(zlink_poller_add(p, junk, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                  EFAULT);
    expect_config(zlink_poller_add_timer(p, junk, NULL), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    expect_config(zlink_poller_add_timer(p, s, NULL), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    /* A closed socket cannot be added. */
    void *closed = zlt_sock(ctx, ZLINK_PAIR);
    zlt_close(closed);
    expect_config(zlink_poller_add(p, closed, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE,
                  ESHUTDOWN);
    /* Nothing changed on any failure. */
    ZT_EQ_INT(zlink_poller_size(p, NULL), 3);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, s);
}

static void test_unsupported_bit_is_not_supported(void)
{
    void *ctx = zlt_ctx_new();
    void *pair = zlt_sock(ctx, ZLINK_PAIR);
    void *dealer = zlt_sock(ctx, ZLINK_DEALER);
    void *router = zlt_sock(ctx, ZLINK_ROUTER);
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    void *t = zlink_timer_new();
    int fds[2];
    make_pipe(fds);
    void *p = poller_new();
    /* PRI is for FDs. */
    expect_config(zlink_poller_add(p, pair, NULL, ZLINK_POLLIN | ZLINK_POLLPRI),
                  ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    /* ROUTE is for ROUTERs. */
    expect_config(zlink_poller_add(p, pair, NULL, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                  ENOTSUP);
    expect_config(zlink_poller_add(p, dealer, NULL, ZLINK_POLLIN | ZLINK_POLLROUTE),
                  ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    expect_config(zlink_poller_add(p, sub, NULL, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                  ENOTSUP);
    expect_config(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLROUTE),
                  ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    add_ok(p, router, NULL, ZLINK_POLLIN | ZLINK_POLLROUTE);
    /* A timer has IN only. */
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_modify(p, t, ZLINK_POLLOUT), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    expect_config(zlink_poller_modify(p, t, ZLINK_POLLIN | ZLINK_POLLPRI),
                  ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    expect_config(zlink_poller_modify(p, t, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                  ENOTSUP);
    ZT_EQ_INT(zlink_poller_modify(p, t, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_modify(p, t, ZLINK_POLLIN | ZLINK_POLLERR), ZLINK_CONFIG_OK);
    /* modify checks like add, and leaves the mask alone on failure. */
    add_ok(p, pair, NULL, ZLINK_POLLIN);
    expect_config(zlink_poller_modify(p, pair, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                  ENOTSUP);
    zlink_poller_event_t ev[4];
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 0); /* pair: IN only, no OUT reported */
    ZT_EQ_INT(zlink_poller_size(p, NULL), 3);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, pair, dealer, router, sub);
}

/* ---------------------------------------------- items 9, 10: completion */

static void test_completion_bit_on_completion_sockets(void)
{
    void *ctx = zlt_ctx_new();
    const int types[] = {ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_STREAM};
    void *p = poller_new();
    void *socks[4];
    for (int i = 0; i < 4; i++) {
        socks[i] = zlt_sock(ctx, types[i]);
        add_ok(p, socks[i], NULL, ZLINK_POLLCOMPLETION); /* alone */
        ZT_EQ_INT(zlink_poller_modify(p, socks[i], ZLINK_POLLIN), ZLINK_CONFIG_OK); /* off */
        ZT_EQ_INT(zlink_poller_modify(p, socks[i],
                                      ZLINK_POLLIN | ZLINK_POLLOUT | ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_OK); /* on again, OR'ed */
        ZT_EQ_INT(zlink_poller_remove(p, socks[i]), ZLINK_CONFIG_OK);
        add_ok(p, socks[i], NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION);
    }
    /* Nothing is queued: no COMPLETION readiness. */
    zlink_poller_event_t ev[8];
    ZT_EQ_INT(wait_ok(p, ev, 8, 0), 0);
    /* Elsewhere: EINVAL. */
    void *pub = zlt_sock(ctx, ZLINK_PUB), *sub = zlt_sock(ctx, ZLINK_SUB);
    void *t = zlink_timer_new();
    int fds[2];
    make_pipe(fds);
    expect_config(zlink_poller_add(p, pub, NULL, ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    expect_config(zlink_poller_add(p, sub, NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    expect_config(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    expect_config(zlink_poller_add(p, t, NULL, ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_modify(p, t, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_ARGUMENT,
                  EINVAL);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_modify_fd(p, fds[0], ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, socks[0], socks[1], socks[2], socks[3], pub, sub);
}

static void test_second_completion_owner_is_invalid_state(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    void *p1 = poller_new(), *p2 = poller_new();
    add_ok(p1, s, NULL, ZLINK_POLLCOMPLETION);
    expect_config(zlink_poller_add(p2, s, NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_STATE, EBUSY);
    ZT_EQ_INT(zlink_poller_size(p2, NULL), 0);
    /* Without the bit the same socket may be added ... */
    add_ok(p2, s, NULL, ZLINK_POLLIN);
    /* ... but not given the bit by modify; its registration is unchanged. */
    expect_config(zlink_poller_modify(p2, s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_STATE, EBUSY);
    ZT_EQ_INT(zlink_poller_size(p2, NULL), 1);
    /* The owner drops the bit (modify): p2 may take it; and back again after
     * p2 removes its registration. */
    ZT_EQ_INT(zlink_poller_modify(p1, s, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_modify(p2, s, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_modify(p1, s, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_STATE,
                  EBUSY);
    ZT_EQ_INT(zlink_poller_remove(p2, s), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_modify(p1, s, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
    /* Destroying the owner releases the bit too. */
    poller_destroy(p1);
    add_ok(p2, s, NULL, ZLINK_POLLCOMPLETION);
    poller_destroy(p2);
    zlt_finish(ctx, s);
}

/* A refused DONTWAIT send leaves a wait token; when the peer makes room the
 * WRITABLE record raises POLLCOMPLETION (and POLLOUT) in a waiting poller,
 * and reading it clears COMPLETION. */
static void test_completion_reports_writable(void)
{
    void *ctx = zlt_ctx_new();
    void *a = zlt_sock(ctx, ZLINK_PAIR), *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_set_u64(a, ZLINK_SNDHWM, 100);
    zlt_link(a, b, "inproc");
    ZT_EQ_INT(zlt_send_str(a, "fills the queue", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlink_msg_t m;
    zlt_msg_set(&m, "refused", 7);
    zlink_completion_id_t token = 0;
    ZT_EQ_INT(zlink_send(a, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, &token, &token),
              ZLINK_SUBMIT_BACKPRESSURED);
    zlink_msg_close(&m);
    ZT_CHECK(token != 0);

    void *p = poller_new();
    add_ok(p, a, NULL, ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
    zlink_poller_event_t ev[4];
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 0);
    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    zlt_expect_str(b, "fills the queue"); /* credit returns: the token recovers */
    waiter_join(&w);
    ZT_EQ_INT(w.rc, 1);
    ZT_CHECK(w.ev[0].events & ZLINK_POLLCOMPLETION);
    ZT_CHECK(w.ev[0].events & ZLINK_POLLOUT);
    ZT_CHECK(w.elapsed_ms < EDGE_BOUND_MS);
    /* Level: a wait consumes nothing. */
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 1);
    ZT_CHECK(ev[0].events & ZLINK_POLLCOMPLETION);
    zlink_completion_t rec;
    memset(&rec, 0, sizeof rec);
    rec.struct_size = sizeof rec;
    ZT_EQ_INT(zlink_completion_recv(a, &rec, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
    ZT_EQ_INT(rec.kind, ZLINK_COMPLETION_WRITABLE);
    ZT_EQ_U64(rec.completion_id, token);
    zlink_completion_close(&rec);
    /* Drained: COMPLETION is gone (OUT stays: there is room). */
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLOUT);
    poller_destroy(p);
    zlt_finish(ctx, a, b);
}

/* ------------------------------------------------ item 11: pins, POLLERR */

static void test_closed_socket_reports_pollerr_once(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    void *p = poller_new();
    int ud;
    add_ok(p, b, &ud, ZLINK_POLLIN);
    /* Closed by another thread while a wait is active: the wait ends. */
    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    ZT_EQ_INT(zlink_close(b), ZLINK_CLOSE_OK); /* the poller holds no gate */
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLERR);
    ZT_CHECK(w.ev[0].socket == b && w.ev[0].user_data == &ud);
    /* Once: the only registration is a reported closed socket, so nothing
     * can become ready and the wait returns at once despite -1. */
    zlink_poller_event_t ev[4];
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(wait_ok(p, ev, 4, -1), 0);
    ZT_CHECK(zt_now_ms() - t0 < EDGE_BOUND_MS);
    /* Still registered. */
    ZT_EQ_INT(zlink_poller_size(p, NULL), 1);
    ZT_EQ_INT(zlink_poller_modify(p, b, ZLINK_POLLIN | ZLINK_POLLOUT), ZLINK_CONFIG_OK);
    expect_config(zlink_poller_add(p, b, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE,
                  ESHUTDOWN);
    /* Other sources go on; the closed one stays silent. */
    void *t = zlink_timer_new();
    ZT_EQ_INT(zlink_poller_add_timer(p, t, &ud), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 4, LONG_WAIT_MS), 1);
    ZT_EQ_INT(ev[0].source_kind, ZLINK_POLLER_SOURCE_TIMER);
    ZT_EQ_INT(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_poller_remove(p, b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_size(p, NULL), 0);

    /* Closed before the first wait: reported by that wait, at once. */
    void *c = zlt_sock(ctx, ZLINK_PAIR);
    add_ok(p, c, NULL, ZLINK_POLLIN);
    zlt_close(c);
    ZT_EQ_INT(wait_ok(p, ev, 4, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_CHECK(ev[0].socket == c);
    ZT_EQ_INT(wait_ok(p, ev, 4, -1), 0);
    poller_destroy(p); /* unpins c */
    zlt_finish(ctx, a);
}

/* The pin keeps a closed socket's memory after zlink_ctx_term; the poller's
 * last reference frees it (ASan checks both halves). */
static void test_pin_outlives_ctx_term(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    void *p = poller_new();
    add_ok(p, s, NULL, ZLINK_POLLIN | ZLINK_POLLOUT);
    zlt_close(s);
    zlt_ctx_term(ctx);
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(wait_ok(p, ev, 2, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    ZT_EQ_INT(zlink_poller_remove(p, s), ZLINK_CONFIG_OK); /* frees the socket */
    poller_destroy(p);
}

/* ------------------------------------------------------- item 12: FD bits */

/* A connected loopback TCP pair of plain sockets. */
static void tcp_pair(int *client, int *server)
{
    int lst = socket(AF_INET, SOCK_STREAM, 0);
    ZT_CHECK(lst >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ZT_EQ_INT(bind(lst, (struct sockaddr *)&sa, sizeof sa), 0);
    ZT_EQ_INT(listen(lst, 1), 0);
    socklen_t len = sizeof sa;
    ZT_EQ_INT(getsockname(lst, (struct sockaddr *)&sa, &len), 0);
    *client = socket(AF_INET, SOCK_STREAM, 0);
    ZT_CHECK(*client >= 0);
    ZT_EQ_INT(connect(*client, (struct sockaddr *)&sa, sizeof sa), 0);
    *server = accept(lst, NULL, NULL);
    ZT_CHECK(*server >= 0);
    close(lst);
}

static void test_fd_pri_and_error_bits(void)
{
    void *p = poller_new();
    zlink_poller_event_t ev[4];
    int ud;

    /* Urgent TCP data is platform POLLPRI -> ZLINK_POLLPRI. */
    int c, s;
    tcp_pair(&c, &s);
    ZT_EQ_INT(zlink_poller_add_fd(p, s, &ud, ZLINK_POLLPRI), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 0);
    ZT_EQ_INT(send(c, "!", 1, MSG_OOB), 1);
    ZT_EQ_INT(wait_ok(p, ev, 4, LONG_WAIT_MS), 1);
    ZT_EQ_INT(ev[0].source_kind, ZLINK_POLLER_SOURCE_FD);
    ZT_EQ_INT(ev[0].fd, s);
    ZT_CHECK(ev[0].events & ZLINK_POLLPRI);
    ZT_EQ_INT(ev[0].events & ~(ZLINK_POLLPRI | ZLINK_POLLIN), 0);
    ZT_EQ_INT(zlink_poller_remove_fd(p, s), ZLINK_CONFIG_OK);
    close(c);
    close(s);

    /* Platform POLLERR (a pipe whose reader is gone) -> ZLINK_POLLERR. */
    int fds[2];
    make_pipe(fds);
    close(fds[0]);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[1], &ud, ZLINK_POLLOUT), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].fd, fds[1]);
    ZT_CHECK(ev[0].events & ZLINK_POLLERR);
    ZT_EQ_INT(ev[0].events & ~(ZLINK_POLLERR | ZLINK_POLLOUT), 0);
    /* ERR needs no request: reported with an empty-but-registered mask too. */
    ZT_EQ_INT(zlink_poller_modify_fd(p, fds[1], ZLINK_POLLERR), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(zlink_poller_remove_fd(p, fds[1]), ZLINK_CONFIG_OK);
    close(fds[1]);

    /* Platform POLLHUP (the writer is gone) is another error bit -> ERR. */
    make_pipe(fds);
    close(fds[1]);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(zlink_poller_remove_fd(p, fds[0]), ZLINK_CONFIG_OK);
    close(fds[0]);
    poller_destroy(p);
}

/* ------------------------------------------------ items 13, 14: events */

static void test_event_fields_per_kind(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    zlt_send_ok(a, "x");
    void *t = zlink_timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 1), ZLINK_CONFIG_OK);
    int fds[2];
    make_pipe(fds);
    write_byte(fds[1]);
    int ud_sock, ud_fd;
    void *p = poller_new();
    add_ok(p, b, &ud_sock, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud_fd, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK); /* NULL user data */
    zt_sleep_ms(3);
    zlink_poller_event_t ev[8];
    ZT_EQ_INT(wait_ok(p, ev, 8, LONG_WAIT_MS), 3);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        switch (ev[i].source_kind) {
        case ZLINK_POLLER_SOURCE_SOCKET:
            ZT_CHECK(ev[i].socket == b && ev[i].user_data == &ud_sock);
            ZT_CHECK(ev[i].timer == NULL && ev[i].fd == -1);
            ZT_EQ_INT(ev[i].events, ZLINK_POLLIN);
            seen |= 1;
            break;
        case ZLINK_POLLER_SOURCE_FD:
            ZT_CHECK(ev[i].fd == fds[0] && ev[i].user_data == &ud_fd);
            ZT_CHECK(ev[i].socket == NULL && ev[i].timer == NULL);
            ZT_EQ_INT(ev[i].events, ZLINK_POLLIN);
            seen |= 2;
            break;
        case ZLINK_POLLER_SOURCE_TIMER:
            ZT_CHECK(ev[i].timer == t && ev[i].user_data == NULL);
            ZT_CHECK(ev[i].socket == NULL && ev[i].fd == -1);
            ZT_EQ_INT(ev[i].events, ZLINK_POLLIN);
            seen |= 4;
            break;
        default:
            ZT_FAIL("unknown source kind %d", (int)ev[i].source_kind);
        }
    }
    ZT_EQ_INT(seen, 7);
    /* Draining each source clears its readiness. */
    zlt_expect_str(b, "x");
    read_byte(fds[0]);
    uint64_t count;
    ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
    ZT_EQ_INT(wait_ok(p, ev, 8, 0), 0);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

static void test_event_array_is_caller_owned(void)
{
    int fds[2];
    make_pipe(fds);
    write_byte(fds[1]);
    int ud;
    void *p = poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[4];
    memset(ev, 0xA5, sizeof ev);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 1);
    /* Only the returned entry was written ... */
    unsigned char pattern[sizeof ev[0]];
    memset(pattern, 0xA5, sizeof pattern);
    for (int i = 1; i < 4; i++)
        ZT_EQ_MEM(&ev[i], pattern, sizeof ev[i]);
    /* ... it holds values, no pointer into the library: it stays valid after
     * the poller is gone. */
    zlink_poller_event_t copy = ev[0];
    poller_destroy(p);
    ZT_EQ_INT(copy.source_kind, ZLINK_POLLER_SOURCE_FD);
    ZT_EQ_INT(copy.fd, fds[0]);
    ZT_CHECK(copy.user_data == &ud && copy.socket == NULL && copy.timer == NULL);
    ZT_EQ_MEM(&copy, &ev[0], sizeof copy);
    close(fds[0]);
    close(fds[1]);
}

/* ------------------------------------------------------- item 15: signals */

static _Atomic int g_signals;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&g_signals, 1);
}

/* SIGUSR1 without SA_RESTART. */
static void install_usr1(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    ZT_EQ_INT(sigaction(SIGUSR1, &sa, NULL), 0);
}

/* Interrupts w a few times while it waits. */
static void pester(struct waiter *w, int times)
{
    for (int i = 0; i < times; i++) {
        zt_wait_blocked(atomic_load(&w->tid));
        int before = atomic_load(&g_signals);
        ZT_EQ_INT(pthread_kill(w->th, SIGUSR1), 0);
        ZT_EVENTUALLY(atomic_load(&g_signals) > before, 2000);
    }
}

static void test_signal_does_not_interrupt_wait(void)
{
    install_usr1();
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    void *t = zlink_timer_new();
    int fds[2];
    make_pipe(fds);
    const long timeout = ZT_MS(400);
    /* Three sleeps: the futex (socket only), the futex with a timer bound,
     * and ppoll (an FD source). Each: no event -> 0 after the full timeout. */
    for (int variant = 0; variant < 3; variant++) {
        void *p = poller_new();
        add_ok(p, b, NULL, ZLINK_POLLIN);
        if (variant == 1) {
            ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
            ZT_EQ_INT(zlink_timer_start(t, 3600000 * MS, 0), ZLINK_CONFIG_OK);
        }
        if (variant == 2)
            ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
        struct waiter w;
        waiter_start(&w, p, timeout);
        pester(&w, 3);
        waiter_join(&w);
        if (w.rc != 0)
            ZT_FAIL("variant %d: wait returned %d (result %d, errno %d)", variant, w.rc,
                    (int)w.err, w.errnum);
        ZT_EQ_INT(w.err, ZLINK_CONFIG_OK);
        ZT_CHECK(w.elapsed_ms >= timeout);

        /* A signal, then an event within the timeout: the event. */
        waiter_start(&w, p, LONG_WAIT_MS);
        pester(&w, 2);
        zlt_send_ok(a, "x");
        waiter_join(&w);
        waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        zlt_expect_str(b, "x");
        if (variant == 1) {
            ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
            ZT_EQ_INT(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_OK);
        }
        poller_destroy(p);
    }
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

/* ------------------------------------------ items 21, 22: busy during wait */

static void test_destroy_during_wait_is_busy(void)
{
    int fds[2];
    make_pipe(fds);
    void *p = poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    void *keep = p;
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_CHECK(p == keep);
    write_byte(fds[1]);
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
    poller_destroy(p);
    close(fds[0]);
    close(fds[1]);
}

static void expect_busy(zlink_config_result_t r)
{
    ZT_EQ_INT(r, ZLINK_CONFIG_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
}

static void test_calls_during_wait_are_busy(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    void *other = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new(), *t2 = zlink_timer_new();
    int fds[2], fds2[2];
    make_pipe(fds);
    make_pipe(fds2);
    void *p = poller_new();
    add_ok(p, b, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);

    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_size(p, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    expect_busy(zlink_poller_add(p, other, NULL, ZLINK_POLLIN));
    expect_busy(zlink_poller_modify(p, b, ZLINK_POLLOUT));
    expect_busy(zlink_poller_remove(p, b));
    expect_busy(zlink_poller_add_fd(p, fds2[0], NULL, ZLINK_POLLIN));
    expect_busy(zlink_poller_modify_fd(p, fds[0], ZLINK_POLLOUT));
    expect_busy(zlink_poller_remove_fd(p, fds[0]));
    expect_busy(zlink_poller_add_timer(p, t2, NULL));
    expect_busy(zlink_poller_remove_timer(p, t));
    zlink_poller_event_t ev[4];
    err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_wait(p, ev, 4, 0, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    /* Nothing changed: b still wakes the wait with IN (not OUT). */
    zlt_send_ok(a, "x");
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_size(p, NULL), 3);
    /* t2 was not taken, t was not released. */
    ZT_EQ_INT(zlink_timer_destroy(&t2), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_BUSY);
    zlt_expect_str(b, "x");
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    close(fds[0]);
    close(fds[1]);
    close(fds2[0]);
    close(fds2[1]);
    zlt_finish(ctx, a, b, other);
}

/* ----------------------------------------------------- items 23 - 27 */

static void test_new_and_destroy(void)
{
    /* ENOMEM cannot be provoked through the public API. */
    void *p = zlink_poller_new();
    void *q = zlink_poller_new();
    ZT_CHECK(p != NULL && q != NULL && p != q);
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_OK);
    ZT_CHECK(p == NULL);
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_poller_destroy(NULL), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* Destroying a poller with registrations releases them all. */
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_ROUTER);
    void *t = zlink_timer_new();
    add_ok(q, s, NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION | ZLINK_POLLROUTE);
    ZT_EQ_INT(zlink_poller_add_timer(q, t, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_fd(q, 0, NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_destroy(&q), ZLINK_CLOSE_OK);
    ZT_CHECK(q == NULL);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    void *r = poller_new();
    add_ok(r, s, NULL, ZLINK_POLLCOMPLETION); /* the completion bit is free */
    poller_destroy(r);
    zlt_finish(ctx, s);
}

static void test_size_counts_registrations(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new();
    void *p = poller_new();
    zlink_config_result_t err = (zlink_config_result_t)-1;
    ZT_EQ_INT(zlink_poller_size(p, &err), 0);
    ZT_EQ_INT(err, ZLINK_CONFIG_OK);
    add_ok(p, s, NULL, 0); /* a zero mask is still a registration */
    ZT_EQ_INT(zlink_poller_add_fd(p, 0, NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_size(p, &err), 3);
    ZT_EQ_INT(zlink_poller_remove_fd(p, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_size(p, &err), 2);
    err = ZLINK_CONFIG_OK;
    uint64_t junk[16] = {0};
    ZT_EQ_INT(zlink_poller_size(junk, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_poller_size(NULL, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INVALID_HANDLE);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

static void test_wait_results(void)
{
    int fds[2];
    make_pipe(fds);
    void *p = poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[2];
    zlink_config_result_t err;
    /* Argument errors: EINVAL, before the handle. */
    err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_wait(p, NULL, 2, 0, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_poller_wait(p, ev, 0, 0, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_poller_wait(p, ev, -3, 0, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_poller_wait(NULL, NULL, 0, 0, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INVALID_ARGUMENT);
    /* Bad handle. */
    ZT_EQ_INT(zlink_poller_wait(NULL, ev, 2, 0, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* 0 on timeout: immediately for 0, after the time otherwise. */
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    ZT_CHECK(zt_now_ms() - t0 < EDGE_BOUND_MS);
    t0 = zt_now_ms();
    ZT_EQ_INT(wait_ok(p, ev, 2, 50), 0);
    ZT_CHECK(zt_now_ms() - t0 >= 50);
    /* The count of events written. */
    write_byte(fds[1]);
    ZT_EQ_INT(wait_ok(p, ev, 2, -1), 1);
    /* Every negative timeout waits without limit (here: until the edge). */
    read_byte(fds[0]);
    struct waiter w;
    waiter_start(&w, p, -7);
    write_byte(fds[1]);
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
    poller_destroy(p);
    close(fds[0]);
    close(fds[1]);
}

static void test_nothing_waitable_returns_at_once(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *p = poller_new();
    zlink_poller_event_t ev[2];
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(wait_ok(p, ev, 2, -1), 0); /* empty */
    add_ok(p, s, NULL, 0);
    ZT_EQ_INT(zlink_poller_add_fd(p, 0, NULL, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 2, -1), 0); /* only zero masks */
    ZT_CHECK(zt_now_ms() - t0 < EDGE_BOUND_MS);
    /* A closed socket is not waitable either; its POLLERR comes first. The
     * zero mask does not hide it. */
    zlt_close(s);
    ZT_EQ_INT(wait_ok(p, ev, 2, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(wait_ok(p, ev, 2, -1), 0);
    ZT_CHECK(zt_now_ms() - t0 < EDGE_BOUND_MS);
    poller_destroy(p);
    zlt_ctx_term(ctx);
}

static void test_error_out_may_be_null(void)
{
    int fds[2];
    make_pipe(fds);
    write_byte(fds[1]);
    void *p = poller_new();
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(zlink_poller_size(p, NULL), 0);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_wait(p, ev, 2, 0, NULL), 1);
    ZT_EQ_INT(zlink_poller_size(NULL, NULL), -1);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_poller_wait(p, NULL, 2, 0, NULL), -1);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    poller_destroy(p);
    close(fds[0]);
    close(fds[1]);
}

/* ------------------------------------------------ §5: shutdown -> ETERM */

static void test_shutdown_ends_wait_with_eterm(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    void *p = poller_new();
    add_ok(p, b, NULL, ZLINK_POLLIN);
    /* A poller with no socket of that context is not affected. */
    int fds[2];
    make_pipe(fds);
    void *q = poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(q, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);

    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
    waiter_join(&w);
    ZT_EQ_INT(w.rc, -1);
    ZT_EQ_INT(w.err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(w.errnum, ETERM);
    ZT_CHECK(w.elapsed_ms < EDGE_BOUND_MS);
    /* Later waits too, at once, even with a record ready elsewhere. */
    zlink_poller_event_t ev[2];
    write_byte(fds[1]);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_wait(p, ev, 2, -1, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(zlink_errno(), ETERM);
    ZT_EQ_INT(wait_ok(q, ev, 2, 0), 1);
    read_byte(fds[0]);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(wait_ok(q, ev, 2, 30), 0); /* q waits out its timeout */
    ZT_CHECK(zt_now_ms() - t0 >= 30);
    /* Removing the socket ends it. */
    ZT_EQ_INT(zlink_poller_remove(p, b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    /* So does closing it: a closed socket reports POLLERR, not ETERM. */
    add_ok(p, a, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_wait(p, ev, 2, 0, &err), -1);
    ZT_EQ_INT(zlink_errno(), ETERM);
    zlt_close(a);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    poller_destroy(p);
    poller_destroy(q);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, b);
}

/* ------------------------------------------------ §3: wake-ups by edges */

static void test_socket_in_wakes_waiter(void)
{
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *a, *b;
        pair_link(ctx, tr, &a, &b);
        void *p = poller_new();
        int ud;
        add_ok(p, b, &ud, ZLINK_POLLIN);
        zlink_poller_event_t ev[2];
        ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
        for (int round = 0; round < 3; round++) {
            struct waiter w;
            waiter_start(&w, p, LONG_WAIT_MS);
            zlt_send_ok(a, "x");
            waiter_join(&w);
            waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
            ZT_CHECK(w.ev[0].socket == b && w.ev[0].user_data == &ud);
            /* Level: still ready until received. */
            ZT_EQ_INT(wait_ok(p, ev, 2, 0), 1);
            zlt_expect_str(b, "x");
            ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
        }
        poller_destroy(p);
    }
}

static void test_socket_out_wakes_waiter(void)
{
    void *ctx = zlt_ctx_new();
    void *a = zlt_sock(ctx, ZLINK_PAIR), *b = zlt_sock(ctx, ZLINK_PAIR);
    void *p = poller_new();
    add_ok(p, a, NULL, ZLINK_POLLOUT);
    zlink_poller_event_t ev[2];
    /* No peer yet: nowhere to send. The connection itself is an edge. */
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    zlt_set_u64(a, ZLINK_SNDHWM, 100);
    char ep[256];
    zlt_bind(b, "inproc", ep, sizeof ep);
    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    zlt_connect(a, ep);
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLOUT);
    /* Full: not writable; the peer's receive returns credit: writable. */
    ZT_EQ_INT(zlt_send_str(a, "fills the queue", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    waiter_start(&w, p, LONG_WAIT_MS);
    zlt_expect_str(b, "fills the queue");
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLOUT);
    poller_destroy(p);
    zlt_finish(ctx, a, b);
}

static void test_fd_source_wakes_waiter(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, "inproc", &a, &b);
    int fds[2];
    make_pipe(fds);
    void *p = poller_new();
    int ud;
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    /* FD only: ppoll wakes for the byte. */
    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    write_byte(fds[1]);
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
    ZT_CHECK(w.ev[0].fd == fds[0] && w.ev[0].user_data == &ud);
    read_byte(fds[0]);
    /* FD and socket: the waiter sleeps in ppoll, the socket must still
     * wake it (through the poller's eventfd). */
    add_ok(p, b, NULL, ZLINK_POLLIN);
    for (int round = 0; round < 3; round++) {
        waiter_start(&w, p, LONG_WAIT_MS);
        zlt_send_ok(a, "x");
        waiter_join(&w);
        waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        zlt_expect_str(b, "x");
        waiter_start(&w, p, LONG_WAIT_MS);
        write_byte(fds[1]);
        waiter_join(&w);
        waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
        read_byte(fds[0]);
    }
    /* Writable end: OUT at once. */
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[1], NULL, ZLINK_POLLOUT), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[4];
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].fd, fds[1]);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLOUT);
    poller_destroy(p);
    close(fds[0]);
    close(fds[1]);
    zlt_finish(ctx, a, b);
}

struct starter {
    void *timer;
    struct waiter *w;
};

static void test_timer_source_wakes_waiter(void)
{
    void *t = zlink_timer_new();
    void *p = poller_new();
    int ud;
    ZT_EQ_INT(zlink_poller_add_timer(p, t, &ud), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[2];
    /* A stopped timer: nothing ready, the wait runs to its timeout. */
    ZT_EQ_INT(wait_ok(p, ev, 2, 20), 0);
    /* The wait is bounded by the next fire, not only by the timeout. */
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_timer_start(t, 30 * MS, 2), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 2, LONG_WAIT_MS), 1);
    ZT_CHECK(zt_now_ms() - t0 >= 30);
    ZT_CHECK(zt_now_ms() - t0 < EDGE_BOUND_MS);
    ZT_CHECK(ev[0].timer == t && ev[0].user_data == &ud);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLIN);
    /* Level until received. */
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 1);
    uint64_t count = 0, total = 0;
    ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
    total += count;
    if (total < 2) {
        ZT_EQ_INT(wait_ok(p, ev, 2, LONG_WAIT_MS), 1);
        ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
        total += count;
    }
    ZT_EQ_U64(total, 2);
    /* Finished its repeat count: never ready again. */
    ZT_EQ_INT(wait_ok(p, ev, 2, 40), 0);
    /* Started by another thread while the poller waits without limit: the
     * wait learns the new deadline. */
    struct waiter w;
    waiter_start(&w, p, -1);
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 1), ZLINK_CONFIG_OK);
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_TIMER, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
    ZT_EQ_U64(count, 1);
    /* modify to 0: not watched. */
    ZT_EQ_INT(zlink_timer_start(t, 1 * MS, 1), ZLINK_CONFIG_OK);
    zt_sleep_ms(3);
    ZT_EQ_INT(zlink_poller_modify(p, t, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    ZT_EQ_INT(zlink_poller_modify(p, t, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 1);
    poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
}

/* POLLROUTE: a ROUTER's route set changes on an I/O thread (a DEALER
 * connects over tcp); a waiting poller wakes; a snapshot clears it. */
static void test_route_change_wakes_waiter(void)
{
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    char ep[256];
    zlt_bind(r, "tcp", ep, sizeof ep);
    void *p = poller_new();
    add_ok(p, r, NULL, ZLINK_POLLROUTE);
    zlink_poller_event_t ev[2];
    zlink_router_route_t rows[4];
    size_t n = 0;
    ZT_EQ_INT(zlink_router_routes_snapshot(r, rows, 4, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_connect(d, ep);
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLROUTE);
    ZT_EQ_INT(zlink_router_routes_snapshot(r, rows, 4, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(n, 1);
    ZT_EQ_INT(wait_ok(p, ev, 2, 0), 0);
    poller_destroy(p);
    zlt_finish(ctx, d, r);
}

/* ------------------------------------------ seed 004 §3: monitor handles */

/* Drains a monitor; returns how many events it held and whether one of
 * them was MONITOR_STOPPED. */
static int drain_monitor(void *mon, bool *stopped)
{
    int n = 0;
    zlink_monitor_event_t e;
    while (zlink_socket_monitor_recv(mon, &e, ZLINK_RECV_FLAGS_DONTWAIT) == ZLINK_RECV_OK) {
        n++;
        if (stopped != NULL && e.event == ZLINK_EVENT_MONITOR_STOPPED)
            *stopped = true;
    }
    return n;
}

/* A monitor handle is registered like a socket: POLLIN while it holds
 * events (woken by the I/O thread that posts them), OUT unsupported,
 * POLLERR once when it can deliver nothing more, ETERM after shutdown. */
static void test_monitor_handle_as_source(void)
{
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlink_monitor_config_t cfg = {ZLINK_EVENT_ALL, 0, 0};
    void *mon = zlink_socket_monitor_open(r, &cfg);
    ZT_CHECK(mon != NULL);
    void *p = poller_new();
    int ud;
    add_ok(p, mon, &ud, ZLINK_POLLIN);
    expect_config(zlink_poller_modify(p, mon, ZLINK_POLLOUT), ZLINK_CONFIG_NOT_SUPPORTED,
                  ENOTSUP);
    expect_config(zlink_poller_modify(p, mon, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                  ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    expect_config(zlink_poller_add(p, mon, NULL, ZLINK_POLLIN), ZLINK_CONFIG_CONFLICT, EEXIST);
    zlink_poller_event_t ev[4];
    char ep[256];
    zlt_bind(r, "tcp", ep, sizeof ep); /* LISTENING, posted at once */
    ZT_EQ_INT(wait_ok(p, ev, 4, LONG_WAIT_MS), 1);
    ZT_CHECK(ev[0].socket == mon && ev[0].user_data == &ud);
    ZT_EQ_INT(ev[0].source_kind, ZLINK_POLLER_SOURCE_SOCKET);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLIN);
    ZT_CHECK(drain_monitor(mon, NULL) >= 1);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 0);
    /* An accept happens on an I/O thread: it wakes the waiting poller. */
    struct waiter w;
    waiter_start(&w, p, LONG_WAIT_MS);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_connect(d, ep);
    waiter_join(&w);
    waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
    /* The socket closes: MONITOR_STOPPED is still delivered (IN), then the
     * monitor can give nothing more: POLLERR once, then not waitable. */
    zlt_close(r);
    ZT_EQ_INT(wait_ok(p, ev, 4, LONG_WAIT_MS), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLIN);
    bool stopped = false;
    drain_monitor(mon, &stopped);
    ZT_CHECK(stopped);
    ZT_EQ_INT(wait_ok(p, ev, 4, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_CHECK(ev[0].socket == mon);
    ZT_EQ_INT(wait_ok(p, ev, 4, -1), 0);
    /* Closing the handle while registered is safe (the poller pins it). */
    void *keep = mon;
    ZT_EQ_INT(zlink_monitor_close(&mon), ZLINK_CLOSE_OK);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 0);
    ZT_EQ_INT(zlink_poller_remove(p, keep), ZLINK_CONFIG_OK);

    /* A monitor of a shut-down context ends waits with ETERM. (This one
     * subscribes to nothing, so d's reconnect events cannot interfere.) */
    zlink_monitor_config_t none = {0, 0, 0};
    void *m2 = zlink_socket_monitor_open(d, &none);
    ZT_CHECK(m2 != NULL);
    add_ok(p, m2, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(wait_ok(p, ev, 4, 0), 0);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_wait(p, ev, 4, -1, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(zlink_errno(), ETERM);
    /* A closed monitor handle reports POLLERR once. */
    ZT_EQ_INT(zlink_monitor_close(&m2), ZLINK_CLOSE_OK);
    ZT_EQ_INT(wait_ok(p, ev, 4, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(wait_ok(p, ev, 4, -1), 0);
    poller_destroy(p);
    zlt_finish(ctx, d);
}

/* More ready sources than event slots: successive waits take turns. */
static void test_small_event_array_rotates(void)
{
    int fds[3][2];
    void *p = poller_new();
    for (int i = 0; i < 3; i++) {
        make_pipe(fds[i]);
        write_byte(fds[i][1]);
        ZT_EQ_INT(zlink_poller_add_fd(p, fds[i][0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    }
    zlink_poller_event_t ev[1];
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(wait_ok(p, ev, 1, 0), 1);
        for (int k = 0; k < 3; k++) {
            if (ev[0].fd == fds[k][0])
                seen |= 1 << k;
        }
    }
    ZT_EQ_INT(seen, 7);
    poller_destroy(p);
    for (int i = 0; i < 3; i++) {
        close(fds[i][0]);
        close(fds[i][1]);
    }
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    ZT_RUN(test_add_twice_is_conflict);
    ZT_RUN(test_timer_in_two_pollers_is_invalid_state);
    ZT_RUN(test_destroy_registered_timer_is_busy);
    ZT_RUN(test_one_socket_in_two_pollers);
    ZT_RUN(test_missing_source_is_not_found);
    ZT_RUN(test_bad_bit_is_invalid_argument);
    ZT_RUN(test_unsupported_bit_is_not_supported);
    ZT_RUN(test_completion_bit_on_completion_sockets);
    ZT_RUN(test_second_completion_owner_is_invalid_state);
    ZT_RUN(test_completion_reports_writable);
    ZT_RUN(test_closed_socket_reports_pollerr_once);
    ZT_RUN(test_pin_outlives_ctx_term);
    ZT_RUN(test_fd_pri_and_error_bits);
    ZT_RUN(test_event_fields_per_kind);
    ZT_RUN(test_event_array_is_caller_owned);
    ZT_RUN(test_signal_does_not_interrupt_wait);
    ZT_RUN(test_destroy_during_wait_is_busy);
    ZT_RUN(test_calls_during_wait_are_busy);
    ZT_RUN(test_new_and_destroy);
    ZT_RUN(test_size_counts_registrations);
    ZT_RUN(test_wait_results);
    ZT_RUN(test_nothing_waitable_returns_at_once);
    ZT_RUN(test_error_out_may_be_null);
    ZT_RUN(test_shutdown_ends_wait_with_eterm);
    ZT_RUN(test_socket_in_wakes_waiter);
    ZT_RUN(test_socket_out_wakes_waiter);
    ZT_RUN(test_fd_source_wakes_waiter);
    ZT_RUN(test_timer_source_wakes_waiter);
    ZT_RUN(test_route_change_wakes_waiter);
    ZT_RUN(test_small_event_array_rotates);
    ZT_RUN(test_monitor_handle_as_source);
    return zt_done();
}
