/*
 * pl_wait_events.c — seed 004 §9 "Wait and events": lifetime pins and
 * POLLERR, FD bits, event fields, caller-owned event arrays, signals.
 */
#include "pl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>

/* A socket closed while registered (while a wait is active, or before the
 * first wait) reports POLLERR once and stays registered. */
static void closed_socket_reports_pollerr_once(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    void *p = zlt_poller_new();
    int ud;
    zlt_poller_add(p, b, &ud, ZLINK_POLLIN);
    /* Closed by another thread while a wait is active: the wait ends. */
    zlt_waiter_t w;
    zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
    ZT_EQ_INT(zlink_close(b), ZLINK_CLOSE_OK); /* the poller holds no gate */
    zlt_waiter_join(&w);
    zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLERR);
    ZT_CHECK(w.ev[0].socket == b && w.ev[0].user_data == &ud);
    /* Once: the only registration is a reported closed socket, so nothing
     * can become ready and the wait returns at once despite -1. */
    zlink_poller_event_t ev[4];
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, -1), 0);
    ZT_CHECK(zt_now_ms() - t0 < ZLT_EDGE_BOUND_MS);
    /* Still registered. */
    ZT_EQ_INT(zlink_poller_size(p, NULL), 1);
    ZT_EQ_INT(zlink_poller_modify(p, b, ZLINK_POLLIN | ZLINK_POLLOUT), ZLINK_CONFIG_OK);
    zlt_expect_config(zlink_poller_add(p, b, NULL, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE,
                      ESHUTDOWN);
    /* Other sources go on; the closed one stays silent. */
    void *t = zlink_timer_new();
    ZT_EQ_INT(zlink_poller_add_timer(p, t, &ud), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_timer_start(t, 1 * ZLT_NS_PER_MS, 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, ZLT_LONG_WAIT_MS), 1);
    ZT_EQ_INT(ev[0].source_kind, ZLINK_POLLER_SOURCE_TIMER);
    ZT_EQ_INT(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_poller_remove(p, b), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_size(p, NULL), 0);

    /* Closed before the first wait: reported by that wait, at once. */
    void *c = zlt_sock(ctx, ZLINK_PAIR);
    zlt_poller_add(p, c, NULL, ZLINK_POLLIN);
    zlt_close(c);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_CHECK(ev[0].socket == c);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, -1), 0);
    zlt_poller_destroy(p); /* unpins c */
    zlt_finish(ctx, a);
}

/* The pin keeps a closed socket's memory after zlink_ctx_term; the poller's
 * last reference frees it (ASan checks both halves). */
static void pin_outlives_ctx_term(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    void *p = zlt_poller_new();
    zlt_poller_add(p, s, NULL, ZLINK_POLLIN | ZLINK_POLLOUT);
    zlt_close(s);
    zlt_ctx_term(ctx);
    zlink_poller_event_t ev[2];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, -1), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 2, 0), 0);
    ZT_EQ_INT(zlink_poller_remove(p, s), ZLINK_CONFIG_OK); /* frees the socket */
    zlt_poller_destroy(p);
}

/* The lifetime pin: closing a registered socket before removing it is
 * safe; it reports POLLERR once and stays registered until removed. */
void pl_closed_socket_pinned_pollerr_once(const conf_params_t *params)
{
    (void)params;
    closed_socket_reports_pollerr_once();
    pin_outlives_ctx_term();
}

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

/* Platform POLLPRI on an FD is ZLINK_POLLPRI; every other platform error
 * bit (POLLERR, POLLHUP) is ZLINK_POLLERR. */
void pl_fd_pri_and_error_bits(const conf_params_t *params)
{
    (void)params;
    void *p = zlt_poller_new();
    zlink_poller_event_t ev[4];
    int ud;

    /* Urgent TCP data is platform POLLPRI -> ZLINK_POLLPRI. */
    int c, s;
    tcp_pair(&c, &s);
    ZT_EQ_INT(zlink_poller_add_fd(p, s, &ud, ZLINK_POLLPRI), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 0);
    ZT_EQ_INT(send(c, "!", 1, MSG_OOB), 1);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, ZLT_LONG_WAIT_MS), 1);
    ZT_EQ_INT(ev[0].source_kind, ZLINK_POLLER_SOURCE_FD);
    ZT_EQ_INT(ev[0].fd, s);
    ZT_CHECK(ev[0].events & ZLINK_POLLPRI);
    ZT_EQ_INT(ev[0].events & ~(ZLINK_POLLPRI | ZLINK_POLLIN), 0);
    ZT_EQ_INT(zlink_poller_remove_fd(p, s), ZLINK_CONFIG_OK);
    close(c);
    close(s);

    /* Platform POLLERR (a pipe whose reader is gone) -> ZLINK_POLLERR. */
    int fds[2];
    zlt_pipe(fds);
    close(fds[0]);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[1], &ud, ZLINK_POLLOUT), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].fd, fds[1]);
    ZT_CHECK(ev[0].events & ZLINK_POLLERR);
    ZT_EQ_INT(ev[0].events & ~(ZLINK_POLLERR | ZLINK_POLLOUT), 0);
    /* ERR needs no request: reported with an empty-but-registered mask too. */
    ZT_EQ_INT(zlink_poller_modify_fd(p, fds[1], ZLINK_POLLERR), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(zlink_poller_remove_fd(p, fds[1]), ZLINK_CONFIG_OK);
    close(fds[1]);

    /* Platform POLLHUP (the writer is gone) is another error bit -> ERR. */
    zlt_pipe(fds);
    close(fds[1]);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 1);
    ZT_EQ_INT(ev[0].events, ZLINK_POLLERR);
    ZT_EQ_INT(zlink_poller_remove_fd(p, fds[0]), ZLINK_CONFIG_OK);
    close(fds[0]);
    zlt_poller_destroy(p);
}

/* socket, fd and timer are set for their own kind of source only;
 * user_data comes back as registered. */
void pl_event_fields_per_kind(const conf_params_t *params)
{
    (void)params;
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    zlt_send_ok(a, "x");
    void *t = zlink_timer_new();
    ZT_EQ_INT(zlink_timer_start(t, 1 * ZLT_NS_PER_MS, 1), ZLINK_CONFIG_OK);
    int fds[2];
    zlt_pipe(fds);
    zlt_write_byte(fds[1]);
    int ud_sock, ud_fd;
    void *p = zlt_poller_new();
    ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK); /* NULL user data */
    /* The timer alone first: this wait ends at its fire (and consumes
     * nothing), so the next one sees all three sources ready. */
    zlink_poller_event_t ev[8];
    ZT_EQ_INT(zlt_wait_ok(p, ev, 8, ZLT_LONG_WAIT_MS), 1);
    zlt_poller_add(p, b, &ud_sock, ZLINK_POLLIN);
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud_fd, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 8, 0), 3);
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
    zlt_read_byte(fds[0]);
    uint64_t count;
    ZT_EQ_INT(zlink_timer_recv(t, &count, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_OK);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 8, 0), 0);
    zlt_poller_destroy(p);
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_pipe_close(fds);
    zlt_finish(ctx, a, b);
}

/* The event array is the caller's and holds no pointer into the library. */
void pl_event_array_is_caller_owned(const conf_params_t *params)
{
    (void)params;
    int fds[2];
    zlt_pipe(fds);
    zlt_write_byte(fds[1]);
    int ud;
    void *p = zlt_poller_new();
    ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], &ud, ZLINK_POLLIN), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[4];
    memset(ev, 0xA5, sizeof ev);
    ZT_EQ_INT(zlt_wait_ok(p, ev, 4, 0), 1);
    /* Only the returned entry was written ... */
    unsigned char pattern[sizeof ev[0]];
    memset(pattern, 0xA5, sizeof pattern);
    for (int i = 1; i < 4; i++)
        ZT_EQ_MEM(&ev[i], pattern, sizeof ev[i]);
    /* ... it holds values, no pointer into the library: it stays valid after
     * the poller is gone. */
    zlink_poller_event_t copy = ev[0];
    zlt_poller_destroy(p);
    ZT_EQ_INT(copy.source_kind, ZLINK_POLLER_SOURCE_FD);
    ZT_EQ_INT(copy.fd, fds[0]);
    ZT_CHECK(copy.user_data == &ud && copy.socket == NULL && copy.timer == NULL);
    ZT_EQ_MEM(&copy, &ev[0], sizeof copy);
    zlt_pipe_close(fds);
}

static _Atomic int g_signals;

static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&g_signals, 1);
}

/* Interrupts thread th (kernel id tid) times times while it waits. */
static void pester(pthread_t th, long tid, int times)
{
    for (int i = 0; i < times; i++) {
        zt_wait_blocked(tid);
        int before = atomic_load(&g_signals);
        ZT_EQ_INT(pthread_kill(th, SIGUSR1), 0);
        ZT_EVENTUALLY(atomic_load(&g_signals) > before, 2000);
    }
}

/* zlink_poller_wait in three sleeps: the futex (socket only), the futex
 * with a timer bound, and ppoll (an FD source). */
static void poller_wait_not_interrupted(void *a, void *b, long timeout, int signals)
{
    void *t = zlink_timer_new();
    int fds[2];
    zlt_pipe(fds);
    for (int variant = 0; variant < 3; variant++) {
        void *p = zlt_poller_new();
        zlt_poller_add(p, b, NULL, ZLINK_POLLIN);
        if (variant == 1) {
            ZT_EQ_INT(zlink_poller_add_timer(p, t, NULL), ZLINK_CONFIG_OK);
            ZT_EQ_INT(zlink_timer_start(t, 3600000 * ZLT_NS_PER_MS, 0), ZLINK_CONFIG_OK);
        }
        if (variant == 2)
            ZT_EQ_INT(zlink_poller_add_fd(p, fds[0], NULL, ZLINK_POLLIN), ZLINK_CONFIG_OK);
        /* No event: 0 after the whole timeout. */
        zlt_waiter_t w;
        zlt_waiter_start(&w, p, timeout);
        pester(w.th, atomic_load(&w.tid), signals);
        zlt_waiter_join(&w);
        if (w.rc != 0 || w.err != ZLINK_CONFIG_OK)
            ZT_FAIL("poller variant %d: wait returned %d (result %d, errno %d)", variant, w.rc,
                    (int)w.err, w.errnum);
        ZT_CHECK(w.elapsed_ms >= timeout);
        /* Signals, then an event within the timeout: the event. */
        zlt_waiter_start(&w, p, ZLT_LONG_WAIT_MS);
        pester(w.th, atomic_load(&w.tid), signals);
        zlt_send_ok(a, "x");
        zlt_waiter_join(&w);
        zlt_waiter_got_one(&w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        zlt_expect_str(b, "x");
        if (variant == 1) {
            ZT_EQ_INT(zlink_timer_stop(t), ZLINK_CONFIG_OK);
            ZT_EQ_INT(zlink_poller_remove_timer(p, t), ZLINK_CONFIG_OK);
        }
        zlt_poller_destroy(p);
    }
    ZT_EQ_INT(zlink_timer_destroy(&t), ZLINK_CLOSE_OK);
    zlt_pipe_close(fds);
}

/* zlink_poll on a socket only (futex), an FD only (ppoll), both (ppoll and
 * the poller's eventfd). */
static void poll_not_interrupted(void *a, void *b, long timeout, int signals)
{
    int fds[2];
    zlt_pipe(fds);
    for (int variant = 0; variant < 3; variant++) {
        zlt_poll_thread_t pt;
        memset(&pt, 0, sizeof pt);
        if (variant != 1)
            pt.items[pt.n++] = zlt_item_sock(b, ZLINK_POLLIN);
        if (variant != 0)
            pt.items[pt.n++] = zlt_item_fd(fds[0], ZLINK_POLLIN);
        pt.timeout_ms = timeout;
        zlt_poll_thread_start(&pt);
        pester(pt.th, atomic_load(&pt.tid), signals);
        ZT_EQ_INT(pthread_join(pt.th, NULL), 0);
        if (pt.rc != 0 || pt.err != ZLINK_CONFIG_OK)
            ZT_FAIL("zlink_poll variant %d: returned %d (result %d, errno %d)", variant, pt.rc,
                    (int)pt.err, pt.errnum);
        ZT_CHECK(pt.elapsed_ms >= timeout);
        pt.timeout_ms = ZLT_LONG_WAIT_MS;
        zlt_poll_thread_start(&pt);
        pester(pt.th, atomic_load(&pt.tid), signals);
        if (variant == 1)
            zlt_write_byte(fds[1]);
        else
            zlt_send_ok(a, "x");
        zlt_poll_thread_join_early(&pt, 1);
        if (variant == 1)
            zlt_read_byte(fds[0]);
        else
            zlt_expect_str(b, "x");
    }
    zlt_pipe_close(fds);
}

/* A signal installed without SA_RESTART does not make zlink_poll or
 * zlink_poller_wait fail with EINTR: the event if it comes within the
 * timeout, else 0 after the whole timeout. */
void pl_signal_does_not_interrupt_waits(const conf_params_t *params)
{
    const long timeout = ZT_MS(conf_int(params, "timeout_ms"));
    const int signals = (int)conf_int(params, "signals");
    ZT_CHECK(signals >= 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = 0; /* no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    ZT_EQ_INT(sigaction(SIGUSR1, &sa, NULL), 0);
    void *ctx = zlt_ctx_new();
    void *a, *b;
    zlt_pair_link(ctx, "inproc", &a, &b);
    poller_wait_not_interrupted(a, b, timeout, signals);
    poll_not_interrupted(a, b, timeout, signals);
    zlt_finish(ctx, a, b);
}
