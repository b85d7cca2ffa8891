/*
 * test_poll.c — the one-shot zlink_poll through the public API: the
 * wake-up and lifetime rules of seed 004 §3 and §5 as they apply to a
 * one-shot wait, and ZLink's own choices (doc/decisions.md "Poller and
 * timers").
 *
 *   §3  test_poll_unsupported_bits, test_poll_socket_wakes_waiter (inproc,
 *       tcp), test_poll_fd_pipe, test_poll_fd_and_socket_mixed,
 *       test_poll_many_items
 *   §5  test_poll_eterm_after_shutdown, test_poll_closed_socket_is_pollerr
 *   core-contract §8 DEALER 29 / ROUTER 22 (POLLOUT is no promise):
 *       test_poll_pollout_not_a_guarantee; ROUTER 21 (POLLIN = a whole
 *       record): test_poll_pollin_whole_record_only
 *
 * The verification items of seed 004 §9 (zlink_poll's results, timeouts,
 * revents, COMPLETION in an item, signals, a NULL error_out) are
 * conformance cases: their one home is the C conformance runner
 * (conformance/c, doc/conformance.md). Shared helpers: zltest_poll.h.
 */
#include "zlink.h"
#include "zltest.h"
#include "zltest_poll.h"
#include "zltest_rawzmp.h"
#include "zltest_zlink.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static void test_poll_unsupported_bits(void)
{
    void *ctx = zlt_ctx_new();
    void *pair = zlt_sock(ctx, ZLINK_PAIR), *router = zlt_sock(ctx, ZLINK_ROUTER);
    void *t = zlink_timer_new();
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    zlink_pollitem_t a[1] = {zlt_item_sock(pair, ZLINK_POLLPRI)};
    zlt_poll_fails(a, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlink_pollitem_t b[1] = {zlt_item_sock(pair, ZLINK_POLLROUTE)};
    zlt_poll_fails(b, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlink_pollitem_t c[1] = {zlt_item_fd(fds[0], ZLINK_POLLROUTE)};
    zlt_poll_fails(c, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    /* Timers are watched through a poller. */
    zlink_pollitem_t d[1] = {zlt_item_sock(t, ZLINK_POLLIN)};
    zlt_poll_fails(d, 1, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    /* ROUTE on a ROUTER is fine (nothing changed: not ready). */
    zlink_pollitem_t e[1] = {zlt_item_sock(router, ZLINK_POLLROUTE)};
    ZT_EQ_INT(zlt_poll_ok(e, 1, 0), 0);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_pipe_close(fds);
    zlt_finish(ctx, pair, router);
}

/* §3: a record sent by another thread wakes a blocked zlink_poll. */
static void test_poll_socket_wakes_waiter(void)
{
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *a, *b;
        zlt_pair_link(ctx, tr, &a, &b);
        for (int round = 0; round < 3; round++) {
            zlt_poll_thread_t pt;
            memset(&pt, 0, sizeof pt);
            pt.items[0] = zlt_item_sock(b, ZLINK_POLLIN);
            pt.n = 1;
            pt.timeout_ms = ZLT_LONG_WAIT_MS;
            zlt_poll_thread_start(&pt);
            zlt_send_ok(a, "x");
            zlt_poll_thread_join_early(&pt, 1);
            ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
            zlt_expect_str(b, "x");
        }
    }
}

static void test_poll_fd_pipe(void)
{
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    zlt_poll_thread_t pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = zlt_item_fd(fds[0], ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = ZLT_LONG_WAIT_MS;
    zlt_poll_thread_start(&pt);
    ZT_EQ_INT(write(fds[1], "y", 1), 1);
    zlt_poll_thread_join_early(&pt, 1);
    ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
    /* Writable end, error bits. */
    zlink_pollitem_t w[1] = {zlt_item_fd(fds[1], ZLINK_POLLOUT)};
    ZT_EQ_INT(zlt_poll_ok(w, 1, 0), 1);
    ZT_EQ_INT(w[0].revents, ZLINK_POLLOUT);
    close(fds[0]);
    ZT_EQ_INT(zlt_poll_ok(w, 1, 0), 1);
    ZT_CHECK(w[0].revents & ZLINK_POLLERR);
    close(fds[1]);
}

/* An FD and a socket in one call: the waiter sleeps in ppoll; the socket
 * must still end the sleep. */
static void test_poll_fd_and_socket_mixed(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    for (int round = 0; round < 4; round++) {
        zlt_poll_thread_t pt;
        memset(&pt, 0, sizeof pt);
        pt.items[0] = zlt_item_fd(fds[0], ZLINK_POLLIN);
        pt.items[1] = zlt_item_sock(b, ZLINK_POLLIN);
        pt.n = 2;
        pt.timeout_ms = ZLT_LONG_WAIT_MS;
        zlt_poll_thread_start(&pt);
        if (round % 2 == 0)
            zlt_send_ok(a, "x");
        else
            ZT_EQ_INT(write(fds[1], "y", 1), 1);
        zlt_poll_thread_join_early(&pt, 1);
        if (round % 2 == 0) {
            ZT_EQ_INT(pt.items[1].revents, ZLINK_POLLIN);
            zlt_expect_str(b, "x");
        } else {
            ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
            char c;
            ZT_EQ_INT(read(fds[0], &c, 1), 1);
        }
    }
    zlt_pipe_close(fds);
    zlt_finish(ctx, a, b);
}

/* More items than fit on the stack; the same socket twice is allowed. */
static void test_poll_many_items(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    enum { N = 40 };
    int fds[N / 2][2];
    zlink_pollitem_t items[N + 2];
    for (int i = 0; i < N / 2; i++) {
        ZT_EQ_INT(pipe(fds[i]), 0);
        items[2 * i] = zlt_item_fd(fds[i][0], ZLINK_POLLIN);
        items[2 * i + 1] = zlt_item_fd(fds[i][1], ZLINK_POLLOUT);
    }
    items[N] = zlt_item_sock(b, ZLINK_POLLIN);
    items[N + 1] = zlt_item_sock(b, ZLINK_POLLIN | ZLINK_POLLOUT);
    ZT_EQ_INT(zlt_poll_ok(items, N + 2, 0), N / 2 + 1); /* every write end, b's OUT */
    ZT_EQ_INT(items[N].revents, 0);
    ZT_EQ_INT(items[N + 1].revents, ZLINK_POLLOUT);
    ZT_EQ_INT(write(fds[7][1], "y", 1), 1);
    zlt_send_ok(a, "x");
    ZT_EQ_INT(zlt_poll_ok(items, N + 2, 0), N / 2 + 3);
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
    zlt_pair_link(ctx, "inproc", &a, &b);
    zlt_poll_thread_t pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = zlt_item_sock(b, ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = ZLT_LONG_WAIT_MS;
    zlt_poll_thread_start(&pt);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
    zlt_poll_thread_join_early(&pt, -1);
    ZT_EQ_INT(pt.err, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(pt.errnum, ETERM);
    zlink_pollitem_t again[1] = {zlt_item_sock(a, ZLINK_POLLOUT)};
    zlt_poll_fails(again, 1, -1, ZLINK_CONFIG_INTERNAL, ETERM);
    int fds[2];
    ZT_EQ_INT(pipe(fds), 0);
    zlink_pollitem_t fdonly[1] = {zlt_item_fd(fds[0], ZLINK_POLLIN)};
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_poll_ok(fdonly, 1, 30), 0);
    ZT_CHECK(zt_now_ms() - t0 >= 30);
    zlt_pipe_close(fds);
    zlt_finish(ctx, a, b);
}

/* A socket closed before the call, or while it waits, reports POLLERR. */
static void test_poll_closed_socket_is_pollerr(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    zlt_poll_thread_t pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = zlt_item_sock(b, ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = ZLT_LONG_WAIT_MS;
    zlt_poll_thread_start(&pt);
    ZT_EQ_INT(zlink_close(b), ZLINK_CLOSE_OK);
    zlt_poll_thread_join_early(&pt, 1);
    ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLERR);
    zlink_pollitem_t items[1] = {zlt_item_sock(b, ZLINK_POLLIN)};
    ZT_EQ_INT(zlt_poll_ok(items, 1, -1), 1);
    ZT_EQ_INT(items[0].revents, ZLINK_POLLERR);
    zlt_finish(ctx, a);
}

/* DEALER 29, ROUTER 22: POLLOUT says a minimal record fits somewhere, not
 * that the next send will be admitted. */
static void test_poll_pollout_not_a_guarantee(void)
{
    printf("# covers DEALER/29, ROUTER/22\n");
    void *ctx = zlt_ctx_new();
    char ep[256];
    char big[1000];
    memset(big, 'b', sizeof big);
    /* DEALER: 1,064 of 2,000 bytes queued: POLLOUT, yet a second 1,000-byte
     * record does not fit (the pipe is not empty, so no oversize rule). */
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_u64(r, ZLINK_RCVHWM, 2000);
    zlt_bind(r, "inproc", ep, sizeof ep);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_u64(d, ZLINK_SNDHWM, 2000);
    zlt_set_rid(d, "D");
    zlt_connect(d, ep);
    ZT_EQ_INT(zlt_send_data(d, big, sizeof big, 0), ZLINK_SUBMIT_OK);
    zlink_pollitem_t it[1] = {zlt_item_sock(d, ZLINK_POLLOUT)};
    ZT_EQ_INT(zlt_poll_ok(it, 1, 0), 1);
    ZT_EQ_INT(it[0].revents, ZLINK_POLLOUT);
    ZT_EQ_INT(zlt_send_data(d, big, sizeof big, ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    /* ROUTER: one peer full, the other empty: POLLOUT, yet a send to the
     * full one is refused while one to the other is admitted. */
    void *e = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(e, "E");
    zlt_connect(e, ep);
    void *f = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(f, "F");
    zlt_set_u64(f, ZLINK_RCVHWM, 2000);
    zlt_connect(f, ep);
    int n = 0;
    while (zlt_send_rid_str(r, "F", "fill", ZLINK_DONTWAIT) == ZLINK_SUBMIT_OK)
        ZT_CHECK(++n < 10000);
    ZT_CHECK(n > 0);
    it[0] = zlt_item_sock(r, ZLINK_POLLOUT);
    ZT_EQ_INT(zlt_poll_ok(it, 1, 0), 1);
    ZT_EQ_INT(it[0].revents, ZLINK_POLLOUT);
    ZT_EQ_INT(zlt_send_rid_str(r, "F", "more", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    ZT_EQ_INT(zlt_send_rid_str(r, "E", "fits", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlt_finish(ctx, d, e, f, r);
}

/* ROUTER 21: POLLIN means a whole record can be received. A raw DEALER
 * sends a complete record and, behind it, the first frame (MORE) of a
 * second: POLLIN is set for the first only; after it is received POLLIN
 * is clear whatever part of the second has arrived; the last frame makes
 * it ready, and the record comes whole. */
static void test_poll_pollin_whole_record_only(void)
{
    printf("# covers ROUTER/21\n");
    void *ctx = zlt_ctx_new();
    char ep[256];
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(r, "R");
    zlt_bind(r, "tcp", ep, sizeof ep);
    raw_t c;
    raw_connect(&c, ep);
    wire_t w;
    w_init(&w);
    w_hello(&w, ZLINK_DEALER, "raw");
    w_ready_dr(&w, ZLINK_DEALER, "raw", 1, 0);
    w_data(&w, false, "whole");
    w_data(&w, true, "head");
    raw_send(&c, &w);
    raw_wait_frames(&c, 2); /* the ROUTER's HELLO and READY */
    zlink_pollitem_t it[1] = {zlt_item_sock(r, ZLINK_POLLIN)};
    ZT_EQ_INT(zlt_poll_ok(it, 1, ZLT_LONG_WAIT_MS), 1);
    zlt_router_expect(r, "raw", "whole");
    ZT_EQ_INT(zlt_poll_ok(it, 1, 0), 0);
    ZT_EQ_INT(it[0].revents, 0);
    w.n = 0;
    w_data(&w, false, "tail");
    raw_send(&c, &w);
    ZT_EQ_INT(zlt_poll_ok(it, 1, ZLT_LONG_WAIT_MS), 1);
    const char *const want[2] = {"head", "tail"};
    zlink_msg_t parts[4];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 1;
    ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 4, &count, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 2);
    ZT_EQ_INT(tok, 0);
    for (int i = 0; i < 2; i++) {
        ZT_EQ_U64(zlink_msg_size(&parts[i]), 4);
        ZT_EQ_MEM(zlink_msg_data(&parts[i]), want[i], 4);
    }
    zlink_multipart_close(parts, count);
    w_free(&w);
    raw_close(&c);
    zlt_finish(ctx, r);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_poll_unsupported_bits),
    ZT_CASE(test_poll_socket_wakes_waiter),
    ZT_CASE(test_poll_fd_pipe),
    ZT_CASE(test_poll_fd_and_socket_mixed),
    ZT_CASE(test_poll_many_items),
    ZT_CASE(test_poll_eterm_after_shutdown),
    ZT_CASE(test_poll_closed_socket_is_pollerr),
    ZT_CASE(test_poll_pollout_not_a_guarantee),
    ZT_CASE(test_poll_pollin_whole_record_only),
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
