/*
 * pl_poll.c — seed 004 §9 "zlink_poll": the one-shot wait.
 */
#include "pl.h"

/* Returns the number of ready items, 0 on timeout, -1 with error_out and
 * errno on failure. */
void pl_poll_returns_count_zero_or_minus_one(const conf_params_t *params)
{
    const long quiet_ms = ZT_MS(conf_int(params, "timeout_ms"));
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    int fds[2];
    zlt_pipe(fds);
    zlink_pollitem_t items[3] = {zlt_item_sock(b, ZLINK_POLLIN), zlt_item_fd(fds[0], ZLINK_POLLIN),
                                 zlt_item_sock(a, ZLINK_POLLOUT)};
    /* One ready (a can send). */
    ZT_EQ_INT(zlt_poll_ok(items, 3, 0), 1);
    ZT_EQ_INT(items[2].revents, ZLINK_POLLOUT);
    /* Three ready. */
    zlt_send_ok(a, "x");
    zlt_write_byte(fds[1]);
    ZT_EQ_INT(zlt_poll_ok(items, 3, 0), 3);
    ZT_EQ_INT(items[0].revents, ZLINK_POLLIN);
    ZT_EQ_INT(items[1].revents, ZLINK_POLLIN);
    /* 0 on timeout, after the timeout. */
    zlink_pollitem_t quiet[1] = {zlt_item_sock(a, ZLINK_POLLIN)};
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_poll_ok(quiet, 1, quiet_ms), 0);
    ZT_CHECK(zt_now_ms() - t0 >= quiet_ms);
    /* -1 with both error outputs. */
    zlt_poll_fails(NULL, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_poll_fails(items, -1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    uint64_t junk[16] = {0};
    zlink_pollitem_t bad[1] = {zlt_item_sock(junk, ZLINK_POLLIN)};
    zlt_poll_fails(bad, 1, 0, ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    zlink_pollitem_t badbit[1] = {zlt_item_sock(b, ZLINK_POLLIN | ZLINK_POLLITEMS_DFLT)};
    zlt_poll_fails(badbit, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t badfd[1] = {zlt_item_fd(-1, ZLINK_POLLIN)};
    zlt_poll_fails(badfd, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    /* Arguments before handles, across items. */
    zlink_pollitem_t mixed[2] = {zlt_item_sock(junk, ZLINK_POLLIN), zlt_item_fd(fds[0], 256)};
    zlt_poll_fails(mixed, 2, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_expect_str(b, "x");
    zlt_pipe_close(fds);
    zlt_finish(ctx, a, b);
}

/* timeout_ms 0 returns at once; -1 waits as long as it takes. */
void pl_poll_infinite_and_immediate(const conf_params_t *params)
{
    const int late_ms = (int)conf_int(params, "late_edge_ms");
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    zlink_pollitem_t items[1] = {zlt_item_sock(b, ZLINK_POLLIN)};
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_poll_ok(items, 1, 0), 0);
    ZT_CHECK(zt_now_ms() - t0 < ZLT_EDGE_BOUND_MS);
    /* -1: the record comes late on purpose (the only delay in the case);
     * the wait is still there and returns it. */
    zlt_poll_thread_t pt;
    memset(&pt, 0, sizeof pt);
    pt.items[0] = zlt_item_sock(b, ZLINK_POLLIN);
    pt.n = 1;
    pt.timeout_ms = -1;
    zlt_poll_thread_start(&pt);
    zt_sleep_ms(late_ms);
    zlt_send_ok(a, "x");
    zlt_poll_thread_join_early(&pt, 1);
    ZT_EQ_INT(pt.items[0].revents, ZLINK_POLLIN);
    ZT_CHECK(pt.elapsed_ms >= late_ms);
    zlt_expect_str(b, "x");
    zlt_finish(ctx, a, b);
}

/* revents is cleared on entry and is a snapshot of the call's result. */
void pl_poll_revents_is_a_snapshot(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    zlink_pollitem_t items[2] = {zlt_item_sock(b, ZLINK_POLLIN), zlt_item_sock(a, 0)};
    items[0].revents = 0x7777; /* garbage in: cleared on entry */
    items[1].revents = 0x5555; /* also for an item with no events */
    ZT_EQ_INT(zlt_poll_ok(items, 2, 0), 0);
    ZT_EQ_INT(items[0].revents, 0);
    ZT_EQ_INT(items[1].revents, 0);
    zlt_send_ok(a, "x");
    ZT_EQ_INT(zlt_poll_ok(items, 2, 0), 1);
    ZT_EQ_INT(items[0].revents, ZLINK_POLLIN);
    ZT_EQ_INT(items[1].revents, 0);
    /* The snapshot does not follow later changes; the next call does. */
    zlt_expect_str(b, "x");
    ZT_EQ_INT(items[0].revents, ZLINK_POLLIN);
    ZT_EQ_INT(zlt_poll_ok(items, 2, 0), 0);
    ZT_EQ_INT(items[0].revents, 0);
    /* Even a failing call clears it first. */
    items[0].revents = 9;
    items[1].events = 1024;
    zlt_poll_fails(items, 2, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(items[0].revents, 0);
    zlt_finish(ctx, a, b);
}
