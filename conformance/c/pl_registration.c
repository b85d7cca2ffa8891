/*
 * pl_registration.c — seed 004 §9 "Poller registration": add, modify and
 * remove, timer and completion-bit owners.
 */
#include "pl.h"

/* One source of each kind (a PAIR socket, a pipe's read end, a timer) and
 * a poller that holds none of them yet. */
typedef struct sources {
    void *ctx, *s, *t, *p;
    int fds[2];
} sources_t;

static void sources_open(sources_t *x)
{
    x->ctx = zlt_ctx_new();
    x->s = zlt_sock(x->ctx, ZLINK_PAIR);
    x->t = zlink_timer_new();
    ZT_CHECK(x->t != NULL);
    zlt_pipe(x->fds);
    x->p = zlt_poller_new();
}

/* Checks that the poller holds `registered` registrations; frees it all. */
static void sources_close(sources_t *x, int registered)
{
    ZT_EQ_INT(zlink_poller_size(x->p, NULL), registered);
    zlt_poller_destroy(x->p);
    ZT_EQ_INT(zlink_timer_destroy(&x->t), ZLINK_CLOSE_OK);
    zlt_pipe_close(x->fds);
    zlt_finish(x->ctx, x->s);
}

/* Adding a registered socket, FD or timer again is CONFLICT/EEXIST. */
void pl_add_twice_is_conflict(const conf_params_t *params)
{
    (void)params;
    sources_t x;
    sources_open(&x);
    zlt_poller_add(x.p, x.s, NULL, ZLINK_POLLIN);
    zlt_expect_config(zlink_poller_add(x.p, x.s, NULL, ZLINK_POLLOUT), ZLINK_CONFIG_CONFLICT,
                      EEXIST);
    ZT_EQ_INT(zlink_poller_add_fd(x.p, x.fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_add_fd(x.p, x.fds[0], NULL, ZLINK_POLLOUT),
                      ZLINK_CONFIG_CONFLICT, EEXIST);
    ZT_EQ_INT(zlink_poller_add_timer(x.p, x.t, NULL), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_add_timer(x.p, x.t, NULL), ZLINK_CONFIG_CONFLICT, EEXIST);
    zlt_expect_config(zlink_poller_add(x.p, x.t, NULL, ZLINK_POLLIN), ZLINK_CONFIG_CONFLICT,
                      EEXIST);
    sources_close(&x, 3);
}

/* A timer held by one poller cannot be added to another. */
static void timer_in_two_pollers_is_invalid_state(void)
{
    void *t = zlink_timer_new();
    void *p1 = zlt_poller_new(), *p2 = zlt_poller_new();
    ZT_EQ_INT(zlink_poller_add_timer(p1, t, NULL), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_add_timer(p2, t, NULL), ZLINK_CONFIG_INVALID_STATE, EBUSY);
    zlt_expect_config(zlink_poller_add(p2, t, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE,
                      EBUSY);
    ZT_EQ_INT(zlink_poller_size(p2, NULL), 0);
    /* Once p1 lets go, p2 may take it. */
    ZT_EQ_INT(zlink_poller_remove_timer(p1, t), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(p2, t, NULL), ZLINK_CONFIG_OK);
    /* Destroying p2 lets go as well. */
    zlt_poller_destroy(p2);
    ZT_EQ_INT(zlink_poller_add_timer(p1, t, NULL), ZLINK_CONFIG_OK);
    zlt_poller_destroy(p1);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
}

/* A registered timer cannot be destroyed. */
static void destroy_registered_timer_is_busy(void)
{
    void *t = zlink_timer_new();
    void *p = zlt_poller_new();
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    void *keep = t;
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_BUSY);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_CHECK(t == keep);
    /* Still registered and working. */
    ZT_EQ_INT(zlink_timer_start(t, 1 * ZLT_NS_PER_MS, 1), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, ZLT_LONG_WAIT_MS), 1);
    ZT_CHECK(ev[0].timer == t);
    ZT_EQ_INT(zlink_poller_remove(p, t), ZLINK_CONFIG_OK); /* generic remove works too */
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    ZT_CHECK(t == NULL);
    zlt_poller_destroy(p);
}

/* INVALID_STATE/EBUSY for a timer another poller holds; CLOSE_BUSY/EBUSY
 * for destroying a registered timer. */
void pl_timer_owner_and_destroy_busy(const conf_params_t *params)
{
    (void)params;
    timer_in_two_pollers_is_invalid_state();
    destroy_registered_timer_is_busy();
}

/* One socket in two pollers for readiness bits: both registrations work,
 * each reports readiness on its own. */
void pl_socket_in_two_pollers(const conf_params_t *params)
{
    const char *trs[PL_MAX_TRANSPORTS];
    size_t ntr = conf_strings(params, "transports", trs, PL_MAX_TRANSPORTS);
    for (size_t k = 0; k < ntr; k++) {
        const char *tr = trs[k];
        void *ctx = zlt_round_begin(tr);
        void *a, *b;
        zlt_pair_link(ctx, tr, &a, &b);
        void *p1 = zlt_poller_new(), *p2 = zlt_poller_new();
        int ud1, ud2;
        zlt_poller_add(p1, b, &ud1, ZLINK_POLLIN);
        zlt_poller_add(p2, b, &ud2, ZLINK_POLLIN | ZLINK_POLLOUT);
        zlink_poller_event_t ev[4];
        /* p2 sees OUT (a peer with room), p1 asked for IN only: nothing. */
        ZT_EQ_INT(zlt_wait_ok(p1, ev, 4, 0), 0);
        ZT_EQ_INT(zlt_wait_ok(p2, ev, 4, 0), 1);
        ZT_EQ_INT(ev[0].events, ZLINK_POLLOUT);
        ZT_CHECK(ev[0].user_data == &ud2);
        ZT_EQ_INT(zlink_poller_modify(p2, b, ZLINK_POLLIN), ZLINK_CONFIG_OK);

        /* Both wait on other threads; one record wakes both. */
        zlt_waiter_t w1, w2;
        zlt_waiter_start(&w1, p1, ZLT_LONG_WAIT_MS);
        zlt_waiter_start(&w2, p2, ZLT_LONG_WAIT_MS);
        zlt_send_ok(a, "x");
        zlt_waiter_join(&w1);
        zlt_waiter_join(&w2);
        zlt_waiter_got_one(&w1, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        zlt_waiter_got_one(&w2, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        ZT_CHECK(w1.ev[0].user_data == &ud1 && w2.ev[0].user_data == &ud2);

        /* Independent registrations: removing one leaves the other. */
        ZT_EQ_INT(zlink_poller_remove(p1, b), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlt_wait_ok(p1, ev, 4, 0), 0);
        ZT_EQ_INT(zlt_wait_ok(p2, ev, 4, 0), 1);
        zlt_expect_str(b, "x");
        ZT_EQ_INT(zlt_wait_ok(p2, ev, 4, 0), 0);
        zlt_poller_destroy(p1);
        zlt_poller_destroy(p2);
        zlt_round_end();
    }
}

/* modify and remove of a source that is not registered: NOT_FOUND/ENOENT. */
void pl_missing_source_is_not_found(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *other = zlt_sock(ctx, ZLINK_PAIR);
    void *t = zlink_timer_new();
    void *p = zlt_poller_new();
    zlt_poller_add(p, other, NULL, ZLINK_POLLIN);
    zlt_expect_config(zlink_poller_modify(p, s, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    zlt_expect_config(zlink_poller_remove(p, s), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    zlt_expect_config(zlink_poller_modify_fd(p, 0, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    zlt_expect_config(zlink_poller_remove_fd(p, 0), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    zlt_expect_config(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    zlt_expect_config(zlink_poller_modify(p, t, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    zlt_expect_config(zlink_poller_remove(p, t), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    /* Something that is no source at all is a bad handle, not a missing one. */
    uint64_t junk[16] = {0};
    zlt_expect_config(zlink_poller_remove(p, junk), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    zlt_expect_config(zlink_poller_remove(p, NULL), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    zlt_expect_config(zlink_poller_remove_timer(p, s), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    /* A removed source is missing afterwards. */
    ZT_EQ_INT(zlink_poller_remove(p, other), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_remove(p, other), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    ZT_EQ_INT(zlink_poller_size(p, NULL), 0);
    zlt_poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s, other);
}

/* Unknown bits are INVALID_ARGUMENT/EINVAL. */
static void bad_bit_is_invalid_argument(void)
{
    sources_t x;
    sources_open(&x);
    const short bad[] = {
        ZLINK_POLLITEMS_DFLT, ZLINK_POLLIN | ZLINK_POLLITEMS_DFLT, 128, 0x100, (short)0x8000, -1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        zlt_expect_config(zlink_poller_add(x.p, x.s, NULL, bad[i]), ZLINK_CONFIG_INVALID_ARGUMENT,
                          EINVAL);
        zlt_expect_config(zlink_poller_add_fd(x.p, x.fds[0], NULL, bad[i]),
                          ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    }
    zlt_expect_config(zlink_poller_add_fd(x.p, -1, NULL, ZLINK_POLLIN),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_poller_add(x.p, x.s, NULL, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_add_fd(x.p, x.fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_add_timer(x.p, x.t, NULL), ZLINK_CONFIG_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        zlt_expect_config(zlink_poller_modify(x.p, x.s, bad[i]), ZLINK_CONFIG_INVALID_ARGUMENT,
                          EINVAL);
        zlt_expect_config(zlink_poller_modify_fd(x.p, x.fds[0], bad[i]),
                          ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        zlt_expect_config(zlink_poller_modify(x.p, x.t, bad[i]), ZLINK_CONFIG_INVALID_ARGUMENT,
                          EINVAL);
    }
    /* The argument is checked before the handles. */
    zlt_expect_config(zlink_poller_add(NULL, x.s, NULL, 128), ZLINK_CONFIG_INVALID_ARGUMENT,
                      EINVAL);
    /* Bad handles. */
    uint64_t junk[16] = {0};
    zlt_expect_config(zlink_poller_add(NULL, x.s, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                      EFAULT);
    zlt_expect_config(zlink_poller_add(junk, x.s, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                      EFAULT);
    zlt_expect_config(zlink_poller_add(x.p, NULL, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                      EFAULT);
    zlt_expect_config(zlink_poller_add(x.p, junk, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
                      EFAULT);
    zlt_expect_config(zlink_poller_add_timer(x.p, junk, NULL), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    zlt_expect_config(zlink_poller_add_timer(x.p, x.s, NULL), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    /* A closed socket cannot be added. */
    void *closed = zlt_sock(x.ctx, ZLINK_PAIR);
    zlt_close(closed);
    zlt_expect_config(zlink_poller_add(x.p, closed, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE,
                      ESHUTDOWN);
    /* Nothing changed on any failure. */
    sources_close(&x, 3);
}

/* Bits the source lacks are NOT_SUPPORTED/ENOTSUP. */
static void unsupported_bit_is_not_supported(void)
{
    void *ctx = zlt_ctx_new();
    void *pair = zlt_sock(ctx, ZLINK_PAIR);
    void *dealer = zlt_sock(ctx, ZLINK_DEALER);
    void *router = zlt_sock(ctx, ZLINK_ROUTER);
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    void *t = zlink_timer_new();
    int fds[2];
    zlt_pipe(fds);
    void *p = zlt_poller_new();
    /* PRI is for FDs. */
    zlt_expect_config(zlink_poller_add(p, pair, NULL, ZLINK_POLLIN | ZLINK_POLLPRI),
                      ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    /* ROUTE is for ROUTERs. */
    zlt_expect_config(zlink_poller_add(p, pair, NULL, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                      ENOTSUP);
    zlt_expect_config(zlink_poller_add(p, dealer, NULL, ZLINK_POLLIN | ZLINK_POLLROUTE),
                      ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlt_expect_config(zlink_poller_add(p, sub, NULL, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                      ENOTSUP);
    zlt_expect_config(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLROUTE),
                      ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlt_poller_add(p, router, NULL, ZLINK_POLLIN | ZLINK_POLLROUTE);
    /* A timer has IN only. */
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_modify(p, t, ZLINK_POLLOUT), ZLINK_CONFIG_NOT_SUPPORTED,
                      ENOTSUP);
    zlt_expect_config(zlink_poller_modify(p, t, ZLINK_POLLIN | ZLINK_POLLPRI),
                      ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlt_expect_config(zlink_poller_modify(p, t, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                      ENOTSUP);
    ZT_EQ_INT(zlink_poller_modify(p, t, 0), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_modify(p, t, ZLINK_POLLIN | ZLINK_POLLERR), ZLINK_CONFIG_OK);
    /* modify checks like add, and leaves the mask alone on failure. */
    zlt_poller_add(p, pair, NULL, ZLINK_POLLIN);
    zlt_expect_config(zlink_poller_modify(p, pair, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED,
                      ENOTSUP);
    zlink_poller_event_t ev[4];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0); /* pair: IN only, no OUT reported */
    ZT_EQ_INT(zlink_poller_size(p, NULL), 3);
    zlt_poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_pipe_close(fds);
    zlt_finish(ctx, pair, dealer, router, sub);
}

/* Invalid bits are INVALID_ARGUMENT/EINVAL, bits the source does not
 * support NOT_SUPPORTED/ENOTSUP, and a refused call changes nothing. */
void pl_bad_and_unsupported_bits(const conf_params_t *params)
{
    (void)params;
    bad_bit_is_invalid_argument();
    unsupported_bit_is_not_supported();
}

/* COMPLETION is added and removed by add or modify, alone or OR'ed. */
static void completion_bit_on_completion_sockets(void)
{
    void *ctx = zlt_ctx_new();
    const int types[] = {ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_STREAM};
    void *p = zlt_poller_new();
    void *socks[4];
    for (int i = 0; i < 4; i++) {
        socks[i] = zlt_sock(ctx, types[i]);
        zlt_poller_add(p, socks[i], NULL, ZLINK_POLLCOMPLETION);                    /* alone */
        ZT_EQ_INT(zlink_poller_modify(p, socks[i], ZLINK_POLLIN), ZLINK_CONFIG_OK); /* off */
        ZT_EQ_INT(
            zlink_poller_modify(p, socks[i], ZLINK_POLLIN | ZLINK_POLLOUT | ZLINK_POLLCOMPLETION),
            ZLINK_CONFIG_OK); /* on again, OR'ed */
        ZT_EQ_INT(zlink_poller_remove(p, socks[i]), ZLINK_CONFIG_OK);
        zlt_poller_add(p, socks[i], NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION);
    }
    /* Nothing is queued: no COMPLETION readiness. */
    zlink_poller_event_t ev[8];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 8, 0), 0);
    /* Elsewhere: EINVAL. */
    void *pub = zlt_sock(ctx, ZLINK_PUB), *sub = zlt_sock(ctx, ZLINK_SUB);
    void *t = zlink_timer_new();
    int fds[2];
    zlt_pipe(fds);
    zlt_expect_config(zlink_poller_add(p, pub, NULL, ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_expect_config(zlink_poller_add(p, sub, NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_expect_config(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_expect_config(zlink_poller_add(p, t, NULL, ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_modify(p, t, ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_modify_fd(p, fds[0], ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_pipe_close(fds);
    zlt_finish(ctx, socks[0], socks[1], socks[2], socks[3], pub, sub);
}

/* The completion bit on PAIR, DEALER, ROUTER and STREAM (add and modify,
 * alone or OR'ed); INVALID_ARGUMENT/EINVAL on other sources and in
 * zlink_poll items; it reports REQUEST and WRITABLE records. */
void pl_completion_bit_sources_and_kinds(const conf_params_t *params)
{
    (void)params;
    completion_bit_on_completion_sockets();

    /* zlink_poll items: EINVAL, alone, OR'ed, on an FD. */
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    int fds[2];
    zlt_pipe(fds);
    zlink_pollitem_t a[1] = {zlt_item_sock(s, ZLINK_POLLCOMPLETION)};
    zlt_poll_fails(a, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t b[1] = {zlt_item_sock(s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION)};
    zlt_poll_fails(b, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t c[1] = {zlt_item_fd(fds[0], ZLINK_POLLCOMPLETION)};
    zlt_poll_fails(c, 1, 0, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_pipe_close(fds);
    zlt_finish(ctx, s);

    /* The two record kinds. REQUEST: a DEALER's answered request. */
    ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    void *p = zlt_poller_new();
    zlt_poller_add(p, d, NULL, ZLINK_POLLCOMPLETION);
    static int req_ctx, wr_ctx;
    zlink_completion_id_t id = pl_request_answered(d, r, "q", &req_ctx);
    pl_expect_event(p, d, ZLT_LONG_WAIT_MS, ZLINK_POLLCOMPLETION);
    pl_expect_record(d, ZLINK_COMPLETION_REQUEST, id, &req_ctx, "q");
    pl_expect_no_record(d);
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    /* WRITABLE: a refused PAIR send whose target recovers. */
    void *pa, *pb;
    zlink_completion_id_t token = pl_full_pair_refused(ctx, &pa, &pb, &wr_ctx);
    zlt_poller_add(p, pa, NULL, ZLINK_POLLCOMPLETION);
    zlt_expect_str(pb, "fills the queue");
    pl_expect_event(p, pa, ZLT_LONG_WAIT_MS, ZLINK_POLLCOMPLETION);
    pl_expect_record(pa, ZLINK_COMPLETION_WRITABLE, token, &wr_ctx, NULL);
    pl_expect_no_record(pa);
    zlt_poller_destroy(p);
    zlt_finish(ctx, pa, pb, d, r);
}

/* A second owner of a socket's completion bit is INVALID_STATE/EBUSY, the
 * existing registration unchanged; ownership moves (by modify, by remove,
 * by destroying the owner) without losing queued records or readiness. */
void pl_completion_bit_has_one_owner(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlt_ctx_new();
    void *s, *r;
    zlt_dr_pair(ctx, "inproc", &s, &r);
    void *p1 = zlt_poller_new(), *p2 = zlt_poller_new();
    zlt_poller_add(p1, s, NULL, ZLINK_POLLCOMPLETION);
    zlt_expect_config(zlink_poller_add(p2, s, NULL, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_STATE, EBUSY);
    ZT_EQ_INT(zlink_poller_size(p2, NULL), 0);
    /* Without the bit the same socket may be added ... */
    zlt_poller_add(p2, s, NULL, ZLINK_POLLIN);
    /* ... but not given the bit by modify; its registration is unchanged:
     * p2 still reports IN (and nothing else) for s. */
    zlt_expect_config(zlink_poller_modify(p2, s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
                      ZLINK_CONFIG_INVALID_STATE, EBUSY);
    ZT_EQ_INT(zlink_poller_size(p2, NULL), 1);
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "data", 0), ZLINK_SUBMIT_OK);
    pl_expect_event(p2, s, ZLT_LONG_WAIT_MS, ZLINK_POLLIN);
    zlt_expect_str(s, "data");

    /* Two records queued while p1 owns the bit. */
    static int u1, u2;
    zlink_completion_id_t id1 = pl_request_answered(s, r, "one", &u1);
    zlink_completion_id_t id2 = pl_request_answered(s, r, "two", &u2);
    pl_expect_event(p1, s, 0, ZLINK_POLLCOMPLETION);
    /* The owner drops the bit (modify): p2 takes it, readiness and both
     * records intact; p1 cannot take it back meanwhile. */
    ZT_EQ_INT(zlink_poller_modify(p1, s, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_modify(p2, s, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_modify(p1, s, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_STATE,
                      EBUSY);
    pl_expect_event(p2, s, 0, ZLINK_POLLCOMPLETION);
    pl_expect_record(s, ZLINK_COMPLETION_REQUEST, id1, &u1, "one");
    /* p2 removes its registration: p1 takes the bit, the second record
     * still there and ready. */
    ZT_EQ_INT(zlink_poller_remove(p2, s), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_modify(p1, s, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
    pl_expect_event(p1, s, 0, ZLINK_POLLCOMPLETION);
    /* Destroying the owner releases the bit too; still nothing lost. */
    zlt_poller_destroy(p1);
    zlt_poller_add(p2, s, NULL, ZLINK_POLLCOMPLETION);
    pl_expect_event(p2, s, 0, ZLINK_POLLCOMPLETION);
    pl_expect_record(s, ZLINK_COMPLETION_REQUEST, id2, &u2, "two");
    pl_expect_no_record(s);
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(zlt_wait_ok(p2, ev, 2, 0), 0);
    zlt_poller_destroy(p2);
    zlt_finish(ctx, s, r);
}
