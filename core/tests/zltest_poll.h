/*
 * zltest_poll.h — helpers for tests of zlink_poll, the poller and the
 * completion queue, header only, on top of zltest_zlink.h. Public API
 * (zlink.h) only; shared by core/tests/test_poll*.c and the C conformance
 * runner (conformance/c).
 *
 * Every helper checks what it does; the ones that compare a result are
 * macros that report the caller's file and line.
 *
 * "Woken by the edge": a thread starts a wait with ZLT_LONG_WAIT_MS,
 * zlt_waiter_start / zlt_poll_thread_start return once it sleeps inside
 * ZLink (as far as /proc can tell), the caller makes a source ready, and
 * the result must come back before ZLT_EDGE_BOUND_MS: only the edge, never
 * the timeout, can end such a wait that early.
 */
#ifndef ZLTEST_POLL_H
#define ZLTEST_POLL_H

#include "zltest_zlink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

/* A timer interval of one millisecond, in nanoseconds. */
#define ZLT_NS_PER_MS 1000000ull

/* A long timeout for waits that must end early, and the bound they must
 * beat (both scaled by ZT_TIMEOUT_MULT). */
#define ZLT_LONG_WAIT_MS ZT_MS(20000)
#define ZLT_EDGE_BOUND_MS ZT_MS(5000)

/* ------------------------------------------------------------- pollers */

static inline void *zlt_poller_new(void)
{
    void *p = zlink_poller_new();
    if (p == NULL)
        ZT_FAIL("zlink_poller_new: NULL, errno %d", zlink_errno());
    return p;
}

/* Destroys p and checks that the handle became NULL. */
static inline void zlt_poller_destroy(void *p)
{
    ZT_EQ_INT(zlink_poller_destroy(&p), ZLINK_CLOSE_OK);
    ZT_CHECK(p == NULL);
}

/* zlink_poller_add of a socket, monitor or timer must succeed. */
#define zlt_poller_add(p, s, ud, ev) zlt__poller_add(__FILE__, __LINE__, (p), (s), (ud), (ev))
static inline void zlt__poller_add(const char *file, int line, void *p, void *s, void *ud,
                                   short ev)
{
    zlink_config_result_t r = zlink_poller_add(p, s, ud, ev);
    if (r != ZLINK_CONFIG_OK)
        zt__fail(file, line, "zlink_poller_add(events %d): result %d, errno %d", ev, (int)r,
                 zlink_errno());
}

/* A configuration result must be want, with errno err when want is not OK. */
#define zlt_expect_config(got, want, err) \
    zlt__expect_config(__FILE__, __LINE__, (got), (want), (err))
static inline void zlt__expect_config(const char *file, int line, zlink_config_result_t got,
                                      zlink_config_result_t want, int err)
{
    int e = zlink_errno();
    if (got != want || (want != ZLINK_CONFIG_OK && e != err))
        zt__fail(file, line, "result %d errno %d, expected %d errno %d", (int)got, e,
                 (int)want, want != ZLINK_CONFIG_OK ? err : 0);
}

/* zlink_poller_wait with a fresh error_out that must succeed; the count. */
#define zlt_wait_ok(p, ev, cap, ms) zlt__wait_ok(__FILE__, __LINE__, (p), (ev), (cap), (ms))
static inline int zlt__wait_ok(const char *file, int line, void *p, zlink_poller_event_t *ev,
                               int cap, long ms)
{
    zlink_config_result_t err = (zlink_config_result_t)-1;
    int n = zlink_poller_wait(p, ev, cap, ms, &err);
    if (n < 0)
        zt__fail(file, line, "zlink_poller_wait: -1, result %d, errno %d", (int)err,
                 zlink_errno());
    if (err != ZLINK_CONFIG_OK)
        zt__fail(file, line, "zlink_poller_wait returned %d with error_out %d", n, (int)err);
    return n;
}

/* zlink_poller_wait must fail with -1, want in error_out and errno err. */
#define zlt_wait_fails(p, ev, cap, ms, want, err) \
    zlt__wait_fails(__FILE__, __LINE__, (p), (ev), (cap), (ms), (want), (err))
static inline void zlt__wait_fails(const char *file, int line, void *p,
                                   zlink_poller_event_t *ev, int cap, long ms,
                                   zlink_config_result_t want, int err)
{
    zlink_config_result_t got = ZLINK_CONFIG_OK;
    int n = zlink_poller_wait(p, ev, cap, ms, &got);
    int e = zlink_errno();
    if (n != -1 || got != want || e != err)
        zt__fail(file, line, "zlink_poller_wait: %d, result %d errno %d; expected -1, %d/%d",
                 n, (int)got, e, (int)want, err);
}

/* ----------------------------------------------------- sockets and FDs */

/* Two connected PAIR sockets of ctx on transport tr; the link is proven by
 * one record each way, so later records arrive promptly. */
static inline void zlt_pair_link(void *ctx, const char *tr, void **a, void **b)
{
    *a = zlt_sock(ctx, ZLINK_PAIR);
    *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_link(*a, *b, tr);
    zlt_send_ok(*a, "hi");
    zlt_expect_str(*b, "hi");
    zlt_send_ok(*b, "hi");
    zlt_expect_str(*a, "hi");
}

static inline void zlt_pipe(int fds[2])
{
    ZT_EQ_INT(pipe(fds), 0);
}

static inline void zlt_pipe_close(int fds[2])
{
    close(fds[0]);
    close(fds[1]);
}

static inline void zlt_write_byte(int fd)
{
    char c = 'x';
    ZT_EQ_INT(write(fd, &c, 1), 1);
}

static inline void zlt_read_byte(int fd)
{
    char c;
    ZT_EQ_INT(read(fd, &c, 1), 1);
}

/* A completion record ready for zlink_completion_recv. */
static inline void zlt_completion_init(zlink_completion_t *c)
{
    memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
}

/* ---------------------------------------------------- a thread in a wait */

/* A thread in zlink_poller_wait (poller set) or zlink_poll (poller NULL,
 * on items[0..n)); zlt_poll_thread_t is the same thing. */
typedef struct zlt_waiter {
    void *poller;
    zlink_pollitem_t items[4];
    int n;
    long timeout_ms;
    pthread_t th;
    _Atomic long tid;
    int rc;
    zlink_config_result_t err;
    int errnum;
    int64_t elapsed_ms;
    zlink_poller_event_t ev[8];
} zlt_waiter_t;

typedef zlt_waiter_t zlt_poll_thread_t;

static inline void *zlt__waiter_main(void *arg)
{
    zlt_waiter_t *w = (zlt_waiter_t *)arg;
    atomic_store(&w->tid, zt_gettid());
    int64_t t0 = zt_now_ms();
    if (w->poller != NULL)
        w->rc = zlink_poller_wait(w->poller, w->ev, 8, w->timeout_ms, &w->err);
    else
        w->rc = zlink_poll(w->items, w->n, w->timeout_ms, &w->err);
    w->errnum = zlink_errno();
    w->elapsed_ms = zt_now_ms() - t0;
    return NULL;
}

/* Starts w and returns once it sleeps inside the wait (as far as /proc can
 * tell). */
static inline void zlt__waiter_run(zlt_waiter_t *w)
{
    atomic_store(&w->tid, 0);
    ZT_EQ_INT(pthread_create(&w->th, NULL, zlt__waiter_main, w), 0);
    ZT_EVENTUALLY(atomic_load(&w->tid) != 0, 2000);
    zt_wait_blocked(atomic_load(&w->tid));
}

/* Starts w waiting on poller p. */
static inline void zlt_waiter_start(zlt_waiter_t *w, void *p, long timeout_ms)
{
    memset(w, 0, sizeof *w);
    w->poller = p;
    w->timeout_ms = timeout_ms;
    zlt__waiter_run(w);
}

static inline void zlt_waiter_join(zlt_waiter_t *w)
{
    ZT_EQ_INT(pthread_join(w->th, NULL), 0);
}

/* The joined waiter returned exactly one event of kind with these bits,
 * before ZLT_EDGE_BOUND_MS. */
#define zlt_waiter_got_one(w, kind, events) \
    zlt__waiter_got_one(__FILE__, __LINE__, (w), (kind), (events))
static inline void zlt__waiter_got_one(const char *file, int line, zlt_waiter_t *w,
                                       zlink_poller_source_kind_t kind, short events)
{
    if (w->rc != 1 || w->err != ZLINK_CONFIG_OK)
        zt__fail(file, line, "wait returned %d (result %d, errno %d) after %lld ms", w->rc,
                 (int)w->err, w->errnum, (long long)w->elapsed_ms);
    if (w->ev[0].source_kind != kind || w->ev[0].events != events)
        zt__fail(file, line, "event of kind %d with bits %d, expected kind %d bits %d",
                 (int)w->ev[0].source_kind, w->ev[0].events, (int)kind, events);
    if (w->elapsed_ms >= ZLT_EDGE_BOUND_MS)
        zt__fail(file, line, "woken after %lld ms: by the timeout, not the edge",
                 (long long)w->elapsed_ms);
}

/* -------------------------------------------------------------- zlink_poll */

static inline zlink_pollitem_t zlt_item_sock(void *s, short events)
{
    zlink_pollitem_t it;
    memset(&it, 0, sizeof it);
    it.socket = s;
    it.fd = -1;
    it.events = events;
    return it;
}

static inline zlink_pollitem_t zlt_item_fd(int fd, short events)
{
    zlink_pollitem_t it;
    memset(&it, 0, sizeof it);
    it.fd = fd;
    it.events = events;
    return it;
}

/* zlink_poll with a fresh error_out that must succeed; the count. */
#define zlt_poll_ok(items, n, ms) zlt__poll_ok(__FILE__, __LINE__, (items), (n), (ms))
static inline int zlt__poll_ok(const char *file, int line, zlink_pollitem_t *items, int n,
                               long ms)
{
    zlink_config_result_t err = (zlink_config_result_t)-1;
    int rc = zlink_poll(items, n, ms, &err);
    if (rc < 0)
        zt__fail(file, line, "zlink_poll: -1, result %d, errno %d", (int)err, zlink_errno());
    if (err != ZLINK_CONFIG_OK)
        zt__fail(file, line, "zlink_poll returned %d with error_out %d", rc, (int)err);
    return rc;
}

/* zlink_poll must fail with -1, want in error_out and errno err. */
#define zlt_poll_fails(items, n, ms, want, err) \
    zlt__poll_fails(__FILE__, __LINE__, (items), (n), (ms), (want), (err))
static inline void zlt__poll_fails(const char *file, int line, zlink_pollitem_t *items, int n,
                                   long ms, zlink_config_result_t want, int err)
{
    zlink_config_result_t got = ZLINK_CONFIG_OK;
    int rc = zlink_poll(items, n, ms, &got);
    int e = zlink_errno();
    if (rc != -1 || got != want || e != err)
        zt__fail(file, line, "zlink_poll: %d, result %d errno %d; expected -1, %d/%d", rc,
                 (int)got, e, (int)want, err);
}

/* Starts pt (items, n and timeout_ms filled in) in zlink_poll. */
static inline void zlt_poll_thread_start(zlt_poll_thread_t *pt)
{
    pt->poller = NULL;
    zlt__waiter_run(pt);
}

/* Joins pt: it returned want_rc before ZLT_EDGE_BOUND_MS. */
#define zlt_poll_thread_join_early(pt, want_rc) \
    zlt__poll_thread_join_early(__FILE__, __LINE__, (pt), (want_rc))
static inline void zlt__poll_thread_join_early(const char *file, int line, zlt_poll_thread_t *pt,
                                               int want_rc)
{
    ZT_EQ_INT(pthread_join(pt->th, NULL), 0);
    if (pt->rc != want_rc)
        zt__fail(file, line, "zlink_poll returned %d (result %d, errno %d), expected %d",
                 pt->rc, (int)pt->err, pt->errnum, want_rc);
    if (pt->elapsed_ms >= ZLT_EDGE_BOUND_MS)
        zt__fail(file, line, "woken after %lld ms: by the timeout, not the edge",
                 (long long)pt->elapsed_ms);
}

#endif /* ZLTEST_POLL_H */
