/*
 * test_poller.c — the reusable poller (zlink_poller_*) through the public
 * API: the wake-up guarantees of seed 004 §3 and the shutdown rule of §5,
 * and ZLink's own choices for them (doc/decisions.md "Poller and timers").
 *
 *   §5  test_shutdown_ends_wait_with_eterm
 *   §3  test_socket_in_wakes_waiter (inproc, tcp), test_socket_out_wakes_waiter,
 *       test_fd_source_wakes_waiter, test_timer_source_wakes_waiter,
 *       test_route_change_wakes_waiter, test_small_event_array_rotates,
 *       test_monitor_handle_as_source (a monitor registered like a socket)
 *
 * The verification items of seed 004 §9 are conformance cases: their one
 * home is the C conformance runner (conformance/c, doc/conformance.md).
 * zlink_poll is in test_poll.c, the many-repetition races in
 * test_poll_stress.c. Shared helpers: zltest_poll.h.
 */
#include "zlink.h"
#include "zltest.h"
#include "zltest_poll.h"
#include "zltest_zlink.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

/* ------------------------------------------------ §5: shutdown -> ETERM */

static void test_shutdown_ends_wait_with_eterm(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    void *p = zlt_poller_new();
    zlt_poller_add(p, b, NULL, ZLINK_POLLIN);
    /* A poller with no socket of that context is not affected. */
    int fds[2];
    zlt_pipe(fds);
    void *q = zlt_poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(q, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);

    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
    zlt_waiter_join(&w);
    ZT_EQ_INT(w.rc, -1);
    ZT_EQ_INT(w.err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(w.errnum, ETERM);
    ZT_CHECK(w.elapsed_ms < ZLT_EDGE_BOUND_MS);
    /* Later waits too, at once, even with a record ready elsewhere. */
    zlink_poller_event_t ev[2];
    zlt_write_byte(fds[1]);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_wait(p, ev, 2, -1, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(zlink_errno(), ETERM);
    ZT_EQ_INT(zlt_wait_ok(q, ev, 2, 0), 1);
    zlt_read_byte(fds[0]);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_wait_ok(q, ev, 2, 30), 0); /* q waits out its timeout */
    ZT_CHECK(zt_now_ms() - t0 >= 30);
    /* Removing the socket ends it. */
    ZT_EQ_INT(zlink_poller_remove(p, b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    /* So does closing it: a closed socket reports POLLERR, not ETERM. */
    zlt_poller_add(p, a, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_wait(p, ev, 2, 0, &err), -1);
    ZT_EQ_INT(zlink_errno(), ETERM);
    zlt_close(a);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    zlt_poller_destroy(p);
    zlt_poller_destroy(q);
    zlt_pipe_close(fds);
    zlt_finish(ctx, b);
}

/* ------------------------------------------------ §3: wake-ups by edges */

static void test_socket_in_wakes_waiter(void)
{
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *a, *b;
        zlt_pair_link(ctx, tr, &a, &b);
        void *p = zlt_poller_new();
        int ud;
        zlt_poller_add(p, b, &ud, ZLINK_POLLIN);
        zlink_poller_event_t ev[2];
        ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
        for (int round = 0; round < 3; round++) {
            zlt_waiter_t w;
            zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
            zlt_send_ok(a, "x");
            zlt_waiter_join(&w);
            zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
            ZT_CHECK(w.ev[0].socket == b && w.ev[0].user_data == &ud);
            /* Level: still ready until received. */
            ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 1);
            zlt_expect_str(b, "x");
            ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
        }
        zlt_poller_destroy(p);
    }
}

static void test_socket_out_wakes_waiter(void)
{
    void *ctx = zlt_ctx_new();
    void *a = zlt_sock(ctx, ZLINK_PAIR), *b = zlt_sock(ctx, ZLINK_PAIR);
    void *p = zlt_poller_new();
    zlt_poller_add(p, a, NULL, ZLINK_POLLOUT);
    zlink_poller_event_t ev[2];
    /* No peer yet: nowhere to send. The connection itself is an edge. */
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    zlt_set_u64(a, ZLINK_SNDHWM, 100);
    char ep[256];
    zlt_bind(b, "inproc", ep, sizeof ep);
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    zlt_connect(a, ep);
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLOUT);
    /* Full: not writable; the peer's receive returns credit: writable. */
    ZT_EQ_INT(zlt_send_str(a, "fills the queue", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    zlt_expect_str(b, "fills the queue");
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLOUT);
    zlt_poller_destroy(p);
    zlt_finish(ctx, a, b);
}

static void test_fd_source_wakes_waiter(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    int fds[2];
    zlt_pipe(fds);
    void *p = zlt_poller_new();
    int ud;
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    /* FD only: ppoll wakes for the byte. */
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    zlt_write_byte(fds[1]);
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
    ZT_CHECK(w.ev[0].fd == fds[0] && w.ev[0].user_data == &ud);
    zlt_read_byte(fds[0]);
    /* FD and socket: the waiter sleeps in ppoll, the socket must still
     * wake it (through the poller's eventfd). */
    zlt_poller_add(p, b, NULL, ZLINK_POLLIN);
    for (int round = 0; round < 3; round++) {
        zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
        zlt_send_ok(a, "x");
        zlt_waiter_join(&w);
        zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        zlt_expect_str(b, "x");
        zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
        zlt_write_byte(fds[1]);
        zlt_waiter_join(&w);
        zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
        zlt_read_byte(fds[0]);
    }
    /* Writable end: OUT at once. */
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[1], NULL, ZLINK_POLLOUT), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[4];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].fd, fds[1]);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLOUT);
    zlt_poller_destroy(p);
    zlt_pipe_close(fds);
    zlt_finish(ctx, a, b);
}

static void test_timer_source_wakes_waiter(void)
{
    void *t = zlink_timer_new();
    void *p = zlt_poller_new();
    int ud;
    ZT_EQ_INT(zlink_poller_add_timer(p, t, &ud), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[2];
    /* A stopped timer: nothing ready, the wait runs to its timeout. */
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 20), 0);
    /* The wait is bounded by the next fire, not only by the timeout. */
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_timer_start(t, 30 * ZLT_NS_PER_MS, 2), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, ZLT_LONG_WAIT_MS), 1);
    ZT_CHECK(zt_now_ms() - t0 >= 30);
    ZT_CHECK(zt_now_ms() - t0 < ZLT_EDGE_BOUND_MS);
    ZT_CHECK(ev[0].timer == t && ev[0].user_data == &ud);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLIN);
    /* Level until received. */
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 1);
    uint64_t count = 0, total = 0;
    ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
    total += count;
    if (total < 2) {
        ZT_EQ_INT(zlt_wait_ok(p, ev, 2, ZLT_LONG_WAIT_MS), 1);
        ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
        total += count;
    }
    ZT_EQ_U64(total, 2);
    /* Finished its repeat count: never ready again. */
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 40), 0);
    /* Started by another thread while the poller waits without limit: the
     * wait learns the new deadline. */
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, -1);
    ZT_EQ_INT(zlink_timer_start(t, 1 * ZLT_NS_PER_MS, 1), ZLINK_CONFIG_OK);
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_TIMER, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
    ZT_EQ_U64(count, 1);
    /* modify to 0: not watched. */
    ZT_EQ_INT(zlink_timer_start(t, 1 * ZLT_NS_PER_MS, 1), ZLINK_CONFIG_OK);
    zt_sleep_ms(3);
    ZT_EQ_INT(zlink_poller_modify(p, t, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    ZT_EQ_INT(zlink_poller_modify(p, t, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 1);
    zlt_poller_destroy(p);
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
    void *p = zlt_poller_new();
    zlt_poller_add(p, r, NULL, ZLINK_POLLROUTE);
    zlink_poller_event_t ev[2];
    zlink_router_route_t rows[4];
    size_t n = 0;
    ZT_EQ_INT(zlink_router_routes_snapshot(r, rows, 4, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_connect(d, ep);
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLROUTE);
    ZT_EQ_INT(zlink_router_routes_snapshot(r, rows, 4, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(n, 1);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    zlt_poller_destroy(p);
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
    void *p = zlt_poller_new();
    int ud;
    zlt_poller_add(p, mon, &ud, ZLINK_POLLIN);
    zlt_expect_config(zlink_poller_modify(p, mon, ZLINK_POLLOUT), ZLINK_CONFIG_NOT_SUPPORTED,
                      ENOTSUP);
    zlt_expect_config(zlink_poller_modify(p, mon, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_expect_config(zlink_poller_add(p, mon, NULL, ZLINK_POLLIN), ZLINK_CONFIG_CONFLICT, EEXIST);
    zlink_poller_event_t ev[4];
    char ep[256];
    zlt_bind(r, "tcp", ep, sizeof ep); /* LISTENING, posted at once */
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, ZLT_LONG_WAIT_MS), 1);
    ZT_CHECK(ev[0].socket == mon && ev[0].user_data == &ud);
    ZT_EQ_INT(ev[0].source_kind, ZLINK_POLLER_SOURCE_SOCKET);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLIN);
    ZT_CHECK(drain_monitor(mon, NULL) >= 1);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    /* An accept happens on an I/O thread: it wakes the waiting poller. */
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_connect(d, ep);
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
    /* The socket closes: MONITOR_STOPPED is still delivered (IN), then the
     * monitor can give nothing more: POLLERR once, then not waitable. */
    zlt_close(r);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, ZLT_LONG_WAIT_MS), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLIN);
    bool stopped = false;
    drain_monitor(mon, &stopped);
    ZT_CHECK(stopped);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_CHECK(ev[0].socket == mon);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, -1), 0);
    /* Closing the handle while registered is safe (the poller pins it). */
    void *keep = mon;
    ZT_EQ_INT(zlink_monitor_close(&mon), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    ZT_EQ_INT(zlink_poller_remove(p, keep), ZLINK_CONFIG_OK);

    /* A monitor of a shut-down context ends waits with ETERM. (This one
     * subscribes to nothing, so d's reconnect events cannot interfere.) */
    zlink_monitor_config_t none = {0, 0, 0};
    void *m2 = zlink_socket_monitor_open(d, &none);
    ZT_CHECK(m2 != NULL);
    zlt_poller_add(p, m2, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_wait(p, ev, 4, -1, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(zlink_errno(), ETERM);
    /* A closed monitor handle reports POLLERR once. */
    ZT_EQ_INT(zlink_monitor_close(&m2), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, -1), 0);
    zlt_poller_destroy(p);
    zlt_finish(ctx, d);
}

/* More ready sources than event slots: successive waits take turns. */
static void test_small_event_array_rotates(void)
{
    int fds[3][2];
    void *p = zlt_poller_new();
    for (int i = 0; i < 3; i++) {
        zlt_pipe(fds[i]);
        zlt_write_byte(fds[i][1]);
        ZT_EQ_INT(zlink_poller_add_fd(p, fds[i][0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    }
    zlink_poller_event_t ev[1];
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlt_wait_ok(p, ev, 1, 0), 1);
        for (int k = 0; k < 3; k++) {
            if (ev[0].fd == fds[k][0])
                seen |= 1 << k;
        }
    }
    ZT_EQ_INT(seen, 7);
    zlt_poller_destroy(p);
    for (int i = 0; i < 3; i++) {
        close(fds[i][0]);
        close(fds[i][1]);
    }
}

static const zt_case_t cases[] = {
    ZT_CASE(test_shutdown_ends_wait_with_eterm),
    ZT_CASE(test_socket_in_wakes_waiter),
    ZT_CASE(test_socket_out_wakes_waiter),
    ZT_CASE(test_fd_source_wakes_waiter),
    ZT_CASE(test_timer_source_wakes_waiter),
    ZT_CASE(test_route_change_wakes_waiter),
    ZT_CASE(test_small_event_array_rotates),
    ZT_CASE(test_monitor_handle_as_source),
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
