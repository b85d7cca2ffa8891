/*
 * pl_lifetime.c — seed 004 §9 "Lifetime" and "Poller function returns and
 * outputs": calls during a wait, new/destroy, size, wait results, waits
 * with nothing to wait for, optional error outputs.
 */
#include "pl.h"

/* Destroying a poller while a wait is active is CLOSE_BUSY/EBUSY. */
void pl_destroy_during_wait_is_busy(const conf_params_t *params)
{
    (void)params;
    int fds[2];
    zlt_pipe(fds);
    void *p = zlt_poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    void *keep = p;
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_CHECK(p == keep);
    zlt_write_byte(fds[1]);
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
    zlt_poller_destroy(p);
    zlt_pipe_close(fds);
}

/* While a wait is active, size, add, modify, remove (the _fd and _timer
 * variants too) and wait are CONFIG_BUSY/EBUSY; nothing changes. */
void pl_calls_during_wait_are_busy(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    void *other = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new(), *t2 = zlink_timer_new();
    int fds[2], fds2[2];
    zlt_pipe(fds);
    zlt_pipe(fds2);
    void *p = zlt_poller_new();
    zlt_poller_add(p, b, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);

    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    ZT_EQ_INT(zlink_poller_size(p, &err), -1);
    ZT_EQ_INT(err, ZLINK_CONFIG_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    zlt_expect_config(zlink_poller_add(p, other, NULL, ZLINK_POLLIN), ZLINK_CONFIG_BUSY, EBUSY);
    zlt_expect_config(zlink_poller_modify(p, b, ZLINK_POLLOUT), ZLINK_CONFIG_BUSY, EBUSY);
    zlt_expect_config(zlink_poller_remove(p, b), ZLINK_CONFIG_BUSY, EBUSY);
    zlt_expect_config(zlink_poller_add_fd(p, fds2[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_BUSY,
                      EBUSY);
    zlt_expect_config(zlink_poller_modify_fd(p, fds[0], ZLINK_POLLOUT), ZLINK_CONFIG_BUSY, EBUSY);
    zlt_expect_config(zlink_poller_remove_fd(p, fds[0]), ZLINK_CONFIG_BUSY, EBUSY);
    zlt_expect_config(zlink_poller_add_timer(p, t2, NULL), ZLINK_CONFIG_BUSY, EBUSY);
    zlt_expect_config(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_BUSY, EBUSY);
    zlink_poller_event_t ev[4];
    zlt_wait_fails(p, ev, 4, 0, ZLINK_CONFIG_BUSY, EBUSY);
    /* Nothing changed: b still wakes the wait with IN (not OUT). */
    zlt_send_ok(a, "x");
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_size(p, NULL), 3);
    /* t2 was not taken, t was not released. */
    ZT_EQ_INT(zlink_timer_destroy(&t2), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_BUSY);
    zlt_expect_str(b, "x");
    zlt_poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_pipe_close(fds);
    zlt_pipe_close(fds2);
    zlt_finish(ctx, a, b, other);
}

/* zlink_poller_new: NULL/ENOMEM when allocation fails; a successful
 * zlink_poller_destroy sets the caller's pointer to NULL. */
void pl_new_enomem_and_destroy_nulls(const conf_params_t *params)
{
    (void)params;
    /* The system is out of memory for this thread (alloc_fail.c). */
    conf_alloc_fail_begin();
    void *none = zlink_poller_new();
    int err = zlink_errno();
    unsigned failed = conf_alloc_fail_end();
    if (failed == 0)
        ZT_FAIL("zlink_poller_new allocated nothing through malloc/calloc: the failure "
                "injection did not reach it (%s)",
                none != NULL ? "it returned a poller" : "NULL");
    ZT_CHECK(none == NULL);
    ZT_EQ_INT(err, ENOMEM);
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
    zlt_poller_add(q, s, NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION | ZLINK_POLLROUTE);
    ZT_EQ_INT(zlink_poller_add_timer(q, t, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_fd(q, 0, NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_destroy(&q), ZLINK_CLOSE_OK);
    ZT_CHECK(q == NULL);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    void *r = zlt_poller_new();
    zlt_poller_add(r, s, NULL, ZLINK_POLLCOMPLETION); /* the completion bit is free */
    zlt_poller_destroy(r);
    zlt_finish(ctx, s);
}

/* zlink_poller_size: the number of registrations, or -1 on failure. */
void pl_size_counts_registrations(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new();
    void *p = zlt_poller_new();
    zlink_config_result_t err = (zlink_config_result_t)-1;
    ZT_EQ_INT(zlink_poller_size(p, &err), 0);
    ZT_EQ_INT(err, ZLINK_CONFIG_OK);
    zlt_poller_add(p, s, NULL, 0); /* a zero mask is still a registration */
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
    zlt_poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* zlink_poller_wait: the number of events, 0 on timeout, -1 on failure;
 * events NULL or event_capacity <= 0 is EINVAL. */
void pl_wait_results(const conf_params_t *params)
{
    const long quiet_ms = ZT_MS(conf_int(params, "timeout_ms"));
    int fds[2];
    zlt_pipe(fds);
    void *p = zlt_poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[2];
    /* Argument errors: EINVAL, before the handle. */
    zlt_wait_fails(p, NULL, 2, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_wait_fails(p, ev, 0, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_wait_fails(p, ev, -3, -1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_wait_fails(NULL, NULL, 0, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    /* Bad handle. */
    zlt_wait_fails(NULL, ev, 2, 0, ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    /* 0 on timeout: immediately for 0, after the time otherwise. */
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    ZT_CHECK(zt_now_ms() - t0 < ZLT_EDGE_BOUND_MS);
    t0 = zt_now_ms();
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, quiet_ms), 0);
    ZT_CHECK(zt_now_ms() - t0 >= quiet_ms);
    /* The count of events written. */
    zlt_write_byte(fds[1]);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, -1), 1);
    /* Every negative timeout waits without limit (here: until the edge). */
    zlt_read_byte(fds[0]);
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, -7);
    zlt_write_byte(fds[1]);
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
    zlt_poller_destroy(p);
    zlt_pipe_close(fds);
}

/* With no nonzero mask, or only closed sockets, a wait returns at once
 * whatever its timeout: a POLLERR not yet returned, else 0. */
void pl_nothing_waitable_returns_at_once(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *p = zlt_poller_new();
    zlink_poller_event_t ev[2];
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, -1), 0); /* empty */
    zlt_poller_add(p, s, NULL, 0);
    ZT_EQ_INT(zlink_poller_add_fd(p, 0, NULL, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, -1), 0); /* only zero masks */
    ZT_CHECK(zt_now_ms() - t0 < ZLT_EDGE_BOUND_MS);
    /* A closed socket is not waitable either; its POLLERR comes first. The
     * zero mask does not hide it. */
    zlt_close(s);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, -1), 0);
    ZT_CHECK(zt_now_ms() - t0 < ZLT_EDGE_BOUND_MS);
    zlt_poller_destroy(p);
    zlt_ctx_term(ctx);
}

/* The error_out of zlink_poll, zlink_poller_size and zlink_poller_wait may
 * be NULL; errno still tells. */
void pl_error_out_may_be_null(const conf_params_t *params)
{
    (void)params;
    int fds[2];
    zlt_pipe(fds);
    zlt_write_byte(fds[1]);
    void *p = zlt_poller_new();
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(zlink_poller_size(p, NULL), 0);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_wait(p, ev, 2, 0, NULL), 1);
    ZT_EQ_INT(zlink_poller_size(NULL, NULL), -1);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_poller_wait(p, NULL, 2, 0, NULL), -1);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    zlt_poller_destroy(p);
    /* zlink_poll, on success, on failure and with nothing to wait for. */
    zlink_pollitem_t items[2] = {zlt_item_fd(fds[0], ZLINK_POLLIN), zlt_item_fd(fds[1], 0)};
    ZT_EQ_INT(zlink_poll(items, 2, 0, NULL), 1);
    ZT_EQ_INT(zlink_poll(NULL, 3, 0, NULL), -1);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    int64_t t0 = zt_now_ms();
    items[0].events = 0;
    ZT_EQ_INT(zlink_poll(items, 2, -1, NULL), 0);
    ZT_EQ_INT(zlink_poll(NULL, 0, -1, NULL), 0);
    ZT_CHECK(zt_now_ms() - t0 < ZLT_EDGE_BOUND_MS);
    zlt_pipe_close(fds);
}
