/*
 * test_monitor.c — the socket monitor (core-contract §6 "Monitor";
 * §8 "06-monitoring" and "04-events"), through the public API with real
 * tcp and ipc connections. doc/contract-tests/monitor.md maps each
 * contract item to the case that checks it.
 *
 * Conventions: events are awaited by blocking in zlink_socket_monitor_recv
 * (the monitored socket's RCVTIMEO, 2 s x ZT_TIMEOUT_MULT from zlt_sock),
 * never by sleeping. Queue budgets are filled with BIND_FAILED events
 * (a bind to a port above 65535 fails synchronously on the calling
 * thread), so their number and order are exact. Malformed handshakes come
 * from a raw client socket in this process.
 */
#include "zltest.h"
#include "zltest_zlink.h"
#include "zlink.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

static const char *const TRS[] = {"tcp", "ipc"};
#define NTRS 2

#define CHARGE ZLINK_MONITOR_EVENT_CHARGE

/* ------------------------------------------------------------- helpers */

static const char *ev_name(uint64_t e)
{
    switch (e) {
    case ZLINK_EVENT_CONNECTED: return "CONNECTED";
    case ZLINK_EVENT_CONNECT_DELAYED: return "CONNECT_DELAYED";
    case ZLINK_EVENT_CONNECT_RETRIED: return "CONNECT_RETRIED";
    case ZLINK_EVENT_LISTENING: return "LISTENING";
    case ZLINK_EVENT_BIND_FAILED: return "BIND_FAILED";
    case ZLINK_EVENT_ACCEPTED: return "ACCEPTED";
    case ZLINK_EVENT_ACCEPT_FAILED: return "ACCEPT_FAILED";
    case ZLINK_EVENT_CLOSED: return "CLOSED";
    case ZLINK_EVENT_DISCONNECTED: return "DISCONNECTED";
    case ZLINK_EVENT_MONITOR_STOPPED: return "MONITOR_STOPPED";
    case ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL: return "HANDSHAKE_FAILED_NO_DETAIL";
    case ZLINK_EVENT_CONNECTION_READY: return "CONNECTION_READY";
    case ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL: return "HANDSHAKE_FAILED_PROTOCOL";
    case ZLINK_EVENT_PEER_WEIGHT_CHANGED: return "PEER_WEIGHT_CHANGED";
    default: return "?";
    }
}

static void *mon_open(void *s, uint32_t events, uint64_t hwm)
{
    zlink_monitor_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.events = events;
    cfg.monitor_hwm_bytes = hwm;
    void *m = zlink_socket_monitor_open(s, &cfg);
    if (m == NULL)
        ZT_FAIL("zlink_socket_monitor_open: errno %d", zlink_errno());
    return m;
}

static void mon_close(void *m)
{
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    ZT_CHECK(m == NULL);
}

/* The next event (waits up to the socket's RCVTIMEO). */
#define mon_next(m) mon__next(__FILE__, __LINE__, (m))
static zlink_monitor_event_t mon__next(const char *file, int line, void *m)
{
    zlink_monitor_event_t ev;
    memset(&ev, 0, sizeof ev);
    zlink_recv_result_t r = zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE);
    if (r != ZLINK_RECV_OK)
        zt__fail(file, line, "waiting for an event: result %d, errno %d", (int)r, zlink_errno());
    return ev;
}

/* The next event must be want. */
#define mon_expect(m, want) mon__expect(__FILE__, __LINE__, (m), (want))
static zlink_monitor_event_t mon__expect(const char *file, int line, void *m, uint64_t want)
{
    zlink_monitor_event_t ev = mon__next(file, line, m);
    if (ev.event != want)
        zt__fail(file, line, "event %s (value %llu), expected %s", ev_name(ev.event),
                 (unsigned long long)ev.value, ev_name(want));
    return ev;
}

/* Skips events until one of kind want arrives. */
#define mon_wait(m, want) mon__wait(__FILE__, __LINE__, (m), (want))
static zlink_monitor_event_t mon__wait(const char *file, int line, void *m, uint64_t want)
{
    for (;;) {
        zlink_monitor_event_t ev = mon__next(file, line, m);
        if (ev.event == want)
            return ev;
    }
}

/* Receives events until one of kind until; returns the kinds seen. */
static uint32_t collect_until(void *m, uint64_t until)
{
    uint32_t seen = 0;
    for (;;) {
        zlink_monitor_event_t ev = mon_next(m);
        seen |= (uint32_t)ev.event;
        if (ev.event == until)
            return seen;
    }
}

/* Nothing is queued now. */
#define mon_none(m) mon__none(__FILE__, __LINE__, (m))
static void mon__none(const char *file, int line, void *m)
{
    zlink_monitor_event_t ev;
    memset(&ev, 0, sizeof ev);
    zlink_recv_result_t r = zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT);
    if (r == ZLINK_RECV_OK)
        zt__fail(file, line, "expected no event, got %s (value %llu)", ev_name(ev.event),
                 (unsigned long long)ev.value);
    if (r != ZLINK_RECV_NO_DATA || zlink_errno() != EAGAIN)
        zt__fail(file, line, "expected NO_DATA/EAGAIN, got %d errno %d", (int)r, zlink_errno());
}

/* A bind that fails at once (port out of range): one BIND_FAILED each. */
static void bad_bind(void *s, int i)
{
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", 70000 + i);
    ZT_EQ_INT(zlink_bind(s, ep), ZLINK_BIND_INVALID_ARGUMENT);
}

/* One round trip DEALER -> ROUTER -> DEALER: both sides are attached. */
static void round_trip(void *dealer, void *router)
{
    zlt_send_ok(dealer, "ping");
    zlink_routing_id_t rid;
    char buf[64];
    ZT_EQ_INT(zlt_router_recv_str(router, &rid, buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_EQ_STR(buf, "ping");
    ZT_EQ_INT(zlt_send_to(router, &rid, "pong", 4, 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(dealer, "pong");
}

/* ---------------------------------------------------------- raw client */

/* A plain stream socket connected to a tcp or ipc endpoint. */
static int raw_connect(const char *ep)
{
    int fd;
    if (strncmp(ep, "tcp://127.0.0.1:", 16) == 0) {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)atoi(ep + 16));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        ZT_CHECK(fd >= 0);
        ZT_EQ_INT(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    } else {
        ZT_CHECK(strncmp(ep, "ipc://", 6) == 0);
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", ep + 6);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        ZT_CHECK(fd >= 0);
        ZT_EQ_INT(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    }
    return fd;
}

/* Appends one ZMP frame (8-byte header) to buf at *len. */
static void frame(uint8_t *buf, size_t *len, uint8_t flags, const void *body, size_t n)
{
    uint8_t *p = buf + *len;
    p[0] = 0x5A;
    p[1] = 0x01;
    p[2] = flags;
    p[3] = 0;
    p[4] = (uint8_t)(n >> 24);
    p[5] = (uint8_t)(n >> 16);
    p[6] = (uint8_t)(n >> 8);
    p[7] = (uint8_t)n;
    memcpy(p + 8, body, n);
    *len += 8 + n;
}

/* Appends one READY property. */
static void prop(uint8_t *body, size_t *len, const char *name, const void *val, uint32_t vlen)
{
    uint8_t *p = body + *len;
    size_t nl = strlen(name);
    p[0] = (uint8_t)nl;
    memcpy(p + 1, name, nl);
    p += 1 + nl;
    p[0] = (uint8_t)(vlen >> 24);
    p[1] = (uint8_t)(vlen >> 16);
    p[2] = (uint8_t)(vlen >> 8);
    p[3] = (uint8_t)vlen;
    memcpy(p + 4, val, vlen);
    *len += 1 + nl + 4 + vlen;
}

static void raw_send(int fd, const uint8_t *buf, size_t len)
{
    ZT_EQ_INT(send(fd, buf, len, MSG_NOSIGNAL), (long long)len);
}

/* Reads until the peer closes (EOF or reset). */
static void raw_wait_closed(int fd)
{
    char junk[512];
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int n = poll(&pfd, 1, ZT_MS(5000));
        if (n <= 0)
            ZT_FAIL("the server did not close the raw connection");
        ssize_t r = recv(fd, junk, sizeof junk, 0);
        if (r <= 0)
            break;
    }
    close(fd);
}

/* ================================================== 06-monitoring 1 */

/* events 0 receives nothing; ZLINK_EVENT_ALL receives every kind the
 * socket produces. */
static void events_zero_receive_none_all_receive_all(void)
{
    printf("# covers 06-monitoring/1\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        void *m = mon_open(server, 0, 0);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *c1 = zlt_sock(ctx, ZLINK_DEALER);
        zlt_connect(c1, ep);
        round_trip(c1, server);
        zlt_close(c1);
        bad_bind(server, 1);
        mon_none(m);
        mon_close(m);

        /* ALL: every kind the sockets produce here arrives. */
        m = mon_open(server, ZLINK_EVENT_ALL, 0);
        void *c2 = zlt_sock(ctx, ZLINK_DEALER);
        void *cm = mon_open(c2, ZLINK_EVENT_ALL, 0);
        zlt_set_int(c2, ZLINK_RECONNECT_IVL, 10);
        zlt_connect(c2, ep);
        round_trip(c2, server);
        uint32_t seen = collect_until(m, ZLINK_EVENT_CONNECTION_READY);
        zlt_set_int(server, ZLINK_ROUTER_WEIGHT, 7);
        uint32_t cseen = collect_until(cm, ZLINK_EVENT_PEER_WEIGHT_CHANGED);
        char ep2[256];
        zlt_bind(server, tr, ep2, sizeof ep2); /* LISTENING */
        bad_bind(server, 2);                   /* BIND_FAILED */
        int fd = raw_connect(ep2);             /* ACCEPTED */
        static const uint8_t bad[] = {0x5A, 0x01, 0x02, 0x00, 0, 0, 0, 4, 0x01, 0x99, 0x99, 0};
        raw_send(fd, bad, sizeof bad);         /* HANDSHAKE_FAILED_PROTOCOL */
        raw_wait_closed(fd);
        seen |= collect_until(m, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        ZT_EQ_INT(zlink_unbind(server, ep2), ZLINK_CONNECT_OK);
        seen |= collect_until(m, ZLINK_EVENT_CLOSED);
        zlt_close(server); /* DISCONNECTED, MONITOR_STOPPED; the client retries */
        seen |= collect_until(m, ZLINK_EVENT_MONITOR_STOPPED);
        cseen |= collect_until(cm, ZLINK_EVENT_CONNECT_RETRIED);
        uint32_t want_server = ZLINK_EVENT_ACCEPTED | ZLINK_EVENT_CONNECTION_READY |
                               ZLINK_EVENT_LISTENING | ZLINK_EVENT_BIND_FAILED |
                               ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZLINK_EVENT_DISCONNECTED | ZLINK_EVENT_CLOSED |
                               ZLINK_EVENT_MONITOR_STOPPED;
        uint32_t want_client = ZLINK_EVENT_CONNECTED | ZLINK_EVENT_CONNECTION_READY |
                               ZLINK_EVENT_PEER_WEIGHT_CHANGED | ZLINK_EVENT_DISCONNECTED |
                               ZLINK_EVENT_CONNECT_DELAYED | ZLINK_EVENT_CONNECT_RETRIED;
        ZT_EQ_U64(seen, want_server);
        ZT_EQ_U64(cseen, want_client);
        mon_close(m);
        mon_close(cm);
        zlt_finish(ctx, c2);
    }
}

/* ================================================== 06-monitoring 2 */

static void open_failure_returns_null_with_errno(void)
{
    printf("# covers 06-monitoring/2\n");
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    zlink_monitor_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.events = ZLINK_EVENT_ALL;

    ZT_CHECK(zlink_socket_monitor_open(NULL, &cfg) == NULL);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_CHECK(zlink_socket_monitor_open(ctx, &cfg) == NULL); /* not a socket */
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_CHECK(zlink_socket_monitor_open(s, NULL) == NULL);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    cfg.events = ZLINK_EVENT_ALL | (1u << 19);
    ZT_CHECK(zlink_socket_monitor_open(s, &cfg) == NULL);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    cfg.events = ZLINK_EVENT_ALL;
    cfg.reserved = 1;
    ZT_CHECK(zlink_socket_monitor_open(s, &cfg) == NULL);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    cfg.reserved = 0;

    /* One monitor per socket: a second open is EBUSY and leaves the first
     * working; after closing it a new one opens. */
    void *m = mon_open(s, ZLINK_EVENT_ALL, 0);
    ZT_CHECK(zlink_socket_monitor_open(s, &cfg) == NULL);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    bad_bind(s, 1);
    ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_BIND_FAILED).value, EINVAL);
    mon_close(m);
    m = mon_open(s, ZLINK_EVENT_ALL, 0);
    mon_close(m);

    /* A closed socket, a shut-down context. */
    zlt_close(s);
    ZT_CHECK(zlink_socket_monitor_open(s, &cfg) == NULL);
    ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
    void *s2 = zlt_sock(ctx, ZLINK_DEALER);
    ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
    ZT_CHECK(zlink_socket_monitor_open(s2, &cfg) == NULL);
    ZT_EQ_INT(zlink_errno(), ETERM);
    zlt_finish(ctx, s2);
}

/* ================================================== 06-monitoring 3 */

static void dontwait_with_nothing_is_no_data_and_output_unchanged(void)
{
    printf("# covers 06-monitoring/3\n");
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *m = mon_open(s, ZLINK_EVENT_ALL, 0);
    zlink_monitor_event_t ev, before;
    memset(&ev, 0x5C, sizeof ev);
    memcpy(&before, &ev, sizeof ev);
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    ZT_EQ_MEM(&ev, &before, sizeof ev);

    /* NONE waits up to the socket's RCVTIMEO, then NO_DATA, unchanged. */
    zlt_set_int(s, ZLINK_RCVTIMEO, 0);
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlt_set_int(s, ZLINK_RCVTIMEO, 30);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NO_DATA);
    ZT_CHECK(zt_now_ms() - t0 >= 25);
    ZT_EQ_MEM(&ev, &before, sizeof ev);

    /* Argument and handle errors. */
    ZT_EQ_INT(zlink_socket_monitor_recv(m, NULL, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, (zlink_recv_flags_t)4), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_socket_monitor_recv(s, &ev, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_socket_monitor_recv(NULL, &ev, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_MEM(&ev, &before, sizeof ev);
    void *none = NULL;
    ZT_EQ_INT(zlink_monitor_close(&none), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_monitor_close(NULL), ZLINK_CLOSE_INVALID_HANDLE);
    mon_close(m);
    zlt_finish(ctx, s);
}

/* ================================================== 06-monitoring 5 */

/* The events of one connecter come in the order they happened: connect,
 * ready, lost, each reconnect delay and attempt, connect, ready. */
static void events_come_in_commit_order(void)
{
    printf("# covers 06-monitoring/5\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *client = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_int(client, ZLINK_RECONNECT_IVL, 20);
        void *m = mon_open(client, ZLINK_EVENT_ALL, 0);
        zlt_connect(client, ep);
        zlink_monitor_event_t c1 = mon_expect(m, ZLINK_EVENT_CONNECTED);
        zlink_monitor_event_t r1 = mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_U64(r1.value, 1);
        ZT_EQ_U64(r1.flags, ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE);
        ZT_EQ_U64(r1.connection_id, c1.connection_id);
        round_trip(client, server);

        zlt_close(server);
        zlink_monitor_event_t d = mon_expect(m, ZLINK_EVENT_DISCONNECTED);
        ZT_EQ_U64(d.value, ZLINK_DISCONNECT_TRANSPORT_ERROR);
        ZT_EQ_U64(d.connection_id, c1.connection_id);
        zlink_monitor_event_t r0 = mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_U64(r0.value, 0);
        ZT_EQ_U64(r0.flags, 0); /* a count snapshot, not an edge */
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_CONNECT_DELAYED).value, 20);
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_CONNECT_RETRIED).value, 20);

        /* A new server on the same address: the next attempt gets through. */
        server = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_bind_at(server, ep);
        zlink_monitor_event_t ev;
        int pairs = 1;
        for (;;) {
            ev = mon_next(m);
            if (ev.event == ZLINK_EVENT_CONNECTED)
                break;
            /* Attempts made before the bind failed: DELAYED, RETRIED again. */
            ZT_EQ_U64(ev.event, ZLINK_EVENT_CONNECT_DELAYED);
            ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_CONNECT_RETRIED).value, 20);
            pairs++;
        }
        ZT_CHECK(ev.connection_id != c1.connection_id);
        zlink_monitor_event_t r2 = mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_U64(r2.value, 1);
        ZT_EQ_U64(r2.connection_id, ev.connection_id);
        round_trip(client, server);
        mon_none(m);
        printf("# %d reconnect attempt(s)\n", pairs);
        mon_close(m);
        zlt_finish(ctx, client, server);
    }
}

/* ================================================== 06-monitoring 7 */

static void full_queue_drops_the_newest(void)
{
    printf("# covers 06-monitoring/7\n");
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    void *m = mon_open(s, ZLINK_EVENT_ALL, 2 * CHARGE);
    for (int i = 1; i <= 5; i++)
        bad_bind(s, i);
    /* The two oldest stay; 3, 4 and 5 were dropped; nothing is coalesced
     * or counted. */
    ZT_EQ_STR(mon_expect(m, ZLINK_EVENT_BIND_FAILED).local_addr, "tcp://127.0.0.1:70001");
    ZT_EQ_STR(mon_expect(m, ZLINK_EVENT_BIND_FAILED).local_addr, "tcp://127.0.0.1:70002");
    mon_none(m);
    /* Room again: new events are admitted. */
    bad_bind(s, 6);
    ZT_EQ_STR(mon_expect(m, ZLINK_EVENT_BIND_FAILED).local_addr, "tcp://127.0.0.1:70006");
    mon_none(m);
    mon_close(m);
    zlt_finish(ctx, s);
}

/* ================================================== 06-monitoring 8 */

/* A monitor nobody reads (its queue full from the first event) never
 * holds the socket back: connections come and go and records flow. */
static void slow_consumer_never_blocks_sends(void)
{
    printf("# covers 06-monitoring/8\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        void *m = mon_open(server, ZLINK_EVENT_ALL, 1); /* one event, then full */
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        for (int i = 0; i < 20; i++) {
            void *c = zlt_sock(ctx, ZLINK_DEALER);
            zlt_connect(c, ep);
            round_trip(c, server);
            zlt_close(c);
        }
        void *c = zlt_sock(ctx, ZLINK_DEALER);
        zlt_connect(c, ep);
        round_trip(c, server);
        for (int i = 0; i < 2000; i++)
            zlt_send_ok(c, "x");
        char buf[16];
        for (int i = 0; i < 2000; i++)
            ZT_EQ_INT(zlt_router_recv_str(server, NULL, buf, sizeof buf, 0), ZLINK_RECV_OK);
        /* Only the first event (LISTENING) was kept. */
        /* Close: nothing can be queued after this. Only the first event
         * (LISTENING) was kept; even MONITOR_STOPPED found the queue full. */
        zlt_close(c);
        zlt_close(server);
        ZT_EQ_STR(mon_expect(m, ZLINK_EVENT_LISTENING).local_addr, ep);
        zlink_monitor_event_t ev;
        ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        mon_close(m);
        zlt_ctx_term(ctx);
    }
}

/* ================================================== 06-monitoring 9 */

static void values_follow_the_contract(void)
{
    printf("# covers 06-monitoring/9\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_set_rid(server, "srv");
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);

        /* BIND_FAILED: the errno (the address is taken). */
        void *other = zlt_sock(ctx, ZLINK_ROUTER);
        void *om = mon_open(other, ZLINK_EVENT_BIND_FAILED, 0);
        ZT_EQ_INT(zlink_bind(other, ep), ZLINK_BIND_ADDR_IN_USE);
        zlink_monitor_event_t bf = mon_expect(om, ZLINK_EVENT_BIND_FAILED);
        ZT_EQ_U64(bf.value, EADDRINUSE);
        ZT_EQ_STR(bf.local_addr, ep);
        mon_close(om);
        zlt_close(other);

        /* PEER_WEIGHT_CHANGED: the new weight, with the peer's id. */
        void *client = zlt_sock(ctx, ZLINK_DEALER);
        void *m = mon_open(client, ZLINK_EVENT_ALL, 0);
        zlt_connect(client, ep);
        mon_expect(m, ZLINK_EVENT_CONNECTED);
        mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        round_trip(client, server);
        zlt_set_int(server, ZLINK_ROUTER_WEIGHT, 250);
        zlink_monitor_event_t w = mon_expect(m, ZLINK_EVENT_PEER_WEIGHT_CHANGED);
        ZT_EQ_U64(w.value, 250);
        ZT_CHECK(zlt_rid_is(&w.rid, "srv"));
        ZT_EQ_U64(w.transport_lane, ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION);
        zlt_set_int(server, ZLINK_ROUTER_WEIGHT, 250); /* no change: no event */

        /* DISCONNECTED TRANSPORT_ERROR: the peer went away. */
        zlt_close(server);
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_DISCONNECTED).value,
                  ZLINK_DISCONNECT_TRANSPORT_ERROR);
        mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        /* CONNECT_DELAYED / _RETRIED: the delay in ms (RECONNECT_IVL 100). */
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_CONNECT_DELAYED).value, 100);
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_CONNECT_RETRIED).value, 100);

        /* DISCONNECTED UNKNOWN: we dropped it (disconnect). */
        server = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_bind_at(server, ep);
        mon_wait(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_INT(zlink_disconnect(client, ep), ZLINK_CONNECT_OK);
        mon_expect(m, ZLINK_EVENT_CLOSED);
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_DISCONNECTED).value, ZLINK_DISCONNECT_UNKNOWN);
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_CONNECTION_READY).value, 0);

        /* DISCONNECTED CTX_TERM: closed after the context shut down. A new
         * routing id, so the server cannot mistake the new connection for
         * the old one it may not have dropped yet (REJECT policy). */
        zlt_set_rid(client, "second");
        zlt_connect(client, ep);
        round_trip(client, server);
        ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
        zlink_monitor_event_t ev;
        zlink_recv_result_t r;
        while ((r = zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE)) == ZLINK_RECV_OK) {
        }
        ZT_EQ_INT(r, ZLINK_RECV_TERMINATED); /* nothing left: ETERM at once */
        ZT_EQ_INT(zlink_errno(), ETERM);
        zlt_close(client);
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_DISCONNECTED).value, ZLINK_DISCONNECT_CTX_TERM);
        mon_expect(m, ZLINK_EVENT_MONITOR_STOPPED);
        ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        mon_close(m);
        zlt_finish(ctx, server);
    }
}

/* ================================================== 06-monitoring 10 */

/* A malformed HELLO reports the HELLO code; a READY with a bad lane count
 * reports the READY code before DISCONNECTED; neither makes the peer
 * ready nor delivers its payload. */
static void malformed_handshakes_report_protocol_codes(void)
{
    printf("# covers 06-monitoring/10\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *m = mon_open(server, ZLINK_EVENT_ALL, 0);

        /* HELLO with an unknown socket type. */
        uint8_t buf[512];
        size_t len = 0;
        static const uint8_t bad_hello[] = {0x01, 0x99, 0x99, 0x00};
        frame(buf, &len, 0x02, bad_hello, sizeof bad_hello);
        int fd = raw_connect(ep);
        raw_send(fd, buf, len);
        zlink_monitor_event_t a = mon_expect(m, ZLINK_EVENT_ACCEPTED);
        zlink_monitor_event_t p = mon_expect(m, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        ZT_EQ_U64(p.value, ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_HELLO);
        ZT_EQ_U64(p.connection_id, a.connection_id);
        zlink_monitor_event_t d = mon_expect(m, ZLINK_EVENT_DISCONNECTED);
        ZT_EQ_U64(d.value, ZLINK_DISCONNECT_HANDSHAKE_FAILED);
        ZT_EQ_U64(d.connection_id, a.connection_id);
        raw_wait_closed(fd);

        /* A DEALER's HELLO, then a READY announcing 2 lanes (DEALER-ROUTER
         * has 1), then a record. */
        len = 0;
        static const uint8_t hello[] = {0x01, 0x10, 0x04, 0x01, 'x'};
        frame(buf, &len, 0x02, hello, sizeof hello);
        uint8_t ready[128];
        size_t rl = 0;
        ready[rl++] = 0x04;
        prop(ready, &rl, "Socket-Type", "DEALER", 6);
        prop(ready, &rl, "Routing-Id", "x", 1);
        prop(ready, &rl, "Zlink-Lane-Count", "\x02", 1);
        prop(ready, &rl, "Zlink-Lane", "\x00", 1);
        frame(buf, &len, 0x02, ready, rl);
        frame(buf, &len, 0x00, "payload", 7);
        fd = raw_connect(ep);
        raw_send(fd, buf, len);
        a = mon_expect(m, ZLINK_EVENT_ACCEPTED);
        p = mon_expect(m, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        ZT_EQ_U64(p.value, ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_READY);
        ZT_CHECK(zlt_rid_is(&p.rid, "x"));
        d = mon_expect(m, ZLINK_EVENT_DISCONNECTED);
        ZT_EQ_U64(d.value, ZLINK_DISCONNECT_HANDSHAKE_FAILED);
        ZT_EQ_U64(d.connection_id, a.connection_id);
        raw_wait_closed(fd);
        mon_none(m); /* no CONNECTION_READY */
        char text[64];
        ZT_EQ_INT(zlt_router_recv_str(server, NULL, text, sizeof text, ZLINK_DONTWAIT),
                  ZLINK_RECV_NO_DATA);
        mon_close(m);
        zlt_finish(ctx, server);
    }
}

/* ================================================== 06-monitoring 11 */

/* One CONNECTION_READY edge per logical peer: a DEALER-ROUTER connection
 * counts once, a ROUTER-ROUTER pair of lanes counts once too. */
static void one_ready_edge_per_logical_peer(void)
{
    printf("# covers 06-monitoring/11 06-monitoring/12\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_set_rid(server, "srv");
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *m = mon_open(server, ZLINK_EVENT_CONNECTION_READY, 0);

        void *d1 = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d1, "d1");
        zlt_connect(d1, ep);
        zlink_monitor_event_t e = mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_U64(e.value, 1);
        ZT_EQ_U64(e.flags, ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE);
        ZT_CHECK(zlt_rid_is(&e.rid, "d1"));
        void *d2 = zlt_sock(ctx, ZLINK_DEALER);
        zlt_connect(d2, ep);
        e = mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_U64(e.value, 2);
        ZT_EQ_U64(e.flags, ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE);

        /* ROUTER-ROUTER: two connections (lanes), one logical peer. */
        void *r = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_set_rid(r, "rr");
        void *rm = mon_open(r, ZLINK_EVENT_CONNECTION_READY | ZLINK_EVENT_CONNECTED, 0);
        zlt_connect(r, ep);
        zlink_monitor_event_t c0 = mon_expect(rm, ZLINK_EVENT_CONNECTED);
        zlink_monitor_event_t c1 = mon_expect(rm, ZLINK_EVENT_CONNECTED);
        ZT_EQ_U64(c0.transport_lane, ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION);
        ZT_EQ_U64(c1.transport_lane, ZLINK_MONITOR_TRANSPORT_LANE_COMPLETION);
        e = mon_expect(rm, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_U64(e.value, 1);
        ZT_EQ_U64(e.flags, ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE);
        ZT_EQ_U64(e.transport_lane, ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION);
        ZT_CHECK(zlt_rid_is(&e.rid, "srv"));
        e = mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_EQ_U64(e.value, 3);
        ZT_CHECK(zlt_rid_is(&e.rid, "rr"));
        /* Traffic both ways: nothing else becomes ready. */
        ZT_EQ_INT(zlt_send_rid_str(r, "srv", "hi", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(server, "rr", "hi");
        ZT_EQ_INT(zlt_send_rid_str(server, "rr", "ho", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(r, "srv", "ho");
        round_trip(d1, server);
        round_trip(d2, server);
        mon_none(rm);
        mon_none(m);
        mon_close(rm);
        mon_close(m);
        zlt_finish(ctx, r, d1, d2, server);
    }
}

/* ================================================== 06-monitoring 13 */

/* connection_id follows one physical connection from CONNECTED to
 * DISCONNECTED and differs for the next one; DEALER-ROUTER events are all
 * on the Application lane. */
static void connection_id_is_per_physical_connection(void)
{
    printf("# covers 06-monitoring/13 06-monitoring/12\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *sm = mon_open(server, ZLINK_EVENT_ALL, 0);
        void *client = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_int(client, ZLINK_RECONNECT_IVL, 10);
        void *m = mon_open(client, ZLINK_EVENT_ALL, 0);
        zlt_connect(client, ep);
        zlink_monitor_event_t c = mon_expect(m, ZLINK_EVENT_CONNECTED);
        zlink_monitor_event_t r = mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        ZT_CHECK(c.connection_id != 0);
        ZT_EQ_U64(r.connection_id, c.connection_id);
        zlink_monitor_event_t a = mon_expect(sm, ZLINK_EVENT_ACCEPTED);
        zlink_monitor_event_t sr = mon_expect(sm, ZLINK_EVENT_CONNECTION_READY);
        ZT_CHECK(a.connection_id != 0 && a.connection_id != c.connection_id);
        ZT_EQ_U64(sr.connection_id, a.connection_id);
        ZT_EQ_U64(c.transport_lane | r.transport_lane | a.transport_lane | sr.transport_lane,
                  ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION);
        if (zlt_is_tcp(tr)) {
            /* Each side's local address is the other's remote address. */
            ZT_EQ_STR(c.local_addr, a.remote_addr);
            ZT_EQ_STR(c.remote_addr, a.local_addr);
        } else {
            ZT_EQ_STR(c.remote_addr, ep);
            ZT_EQ_STR(a.local_addr, ep);
        }
        round_trip(client, server);
        /* The server drops the peer (disconnect_rid): both sides end it. */
        zlink_routing_id_t rid = sr.rid;
        ZT_EQ_INT(zlink_disconnect_rid(server, &rid), ZLINK_CONNECT_OK);
        zlink_monitor_event_t sd = mon_expect(sm, ZLINK_EVENT_DISCONNECTED);
        ZT_EQ_U64(sd.connection_id, a.connection_id);
        ZT_EQ_U64(sd.value, ZLINK_DISCONNECT_UNKNOWN);
        zlink_monitor_event_t d = mon_expect(m, ZLINK_EVENT_DISCONNECTED);
        ZT_EQ_U64(d.connection_id, c.connection_id);
        zlink_monitor_event_t c2 = mon_wait(m, ZLINK_EVENT_CONNECTED);
        ZT_CHECK(c2.connection_id != c.connection_id && c2.connection_id != 0);
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_CONNECTION_READY).connection_id, c2.connection_id);
        mon_close(m);
        mon_close(sm);
        zlt_finish(ctx, client, server);
    }
}

/* ================================================== 06-monitoring 14 */

/* CLOSED only for listeners and connecters; an established connection
 * ends with exactly one DISCONNECTED; inproc reports nothing of the kind;
 * a lost connection is retried. */
static void closed_only_for_endpoints_one_disconnected_per_connection(void)
{
    printf("# covers 06-monitoring/14\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        void *sm = mon_open(server, ZLINK_EVENT_ALL, 0);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        ZT_EQ_STR(mon_expect(sm, ZLINK_EVENT_LISTENING).local_addr, ep);
        void *client = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_int(client, ZLINK_RECONNECT_IVL, 10);
        void *m = mon_open(client, ZLINK_EVENT_ALL, 0);
        zlt_connect(client, ep);
        round_trip(client, server);
        mon_expect(sm, ZLINK_EVENT_ACCEPTED);
        mon_expect(sm, ZLINK_EVENT_CONNECTION_READY);
        mon_expect(m, ZLINK_EVENT_CONNECTED);
        mon_expect(m, ZLINK_EVENT_CONNECTION_READY);

        /* Unbind: the listener's CLOSED, then its connection's one
         * DISCONNECTED; the client loses it and retries. */
        ZT_EQ_INT(zlink_unbind(server, ep), ZLINK_CONNECT_OK);
        ZT_EQ_STR(mon_expect(sm, ZLINK_EVENT_CLOSED).local_addr, ep);
        ZT_EQ_U64(mon_expect(sm, ZLINK_EVENT_DISCONNECTED).value, ZLINK_DISCONNECT_UNKNOWN);
        mon_expect(sm, ZLINK_EVENT_CONNECTION_READY); /* count snapshot 0 */
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_DISCONNECTED).value,
                  ZLINK_DISCONNECT_TRANSPORT_ERROR);
        mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        mon_expect(m, ZLINK_EVENT_CONNECT_DELAYED);
        mon_expect(m, ZLINK_EVENT_CONNECT_RETRIED); /* reconnect continues */
        bad_bind(server, 1);                        /* a marker after everything */
        mon_expect(sm, ZLINK_EVENT_BIND_FAILED);
        mon_none(sm);

        /* Disconnect: the connecter's CLOSED (remote = the endpoint). */
        ZT_EQ_INT(zlink_disconnect(client, ep), ZLINK_CONNECT_OK);
        zlink_monitor_event_t cl = mon_wait(m, ZLINK_EVENT_CLOSED);
        ZT_EQ_STR(cl.remote_addr, ep);
        ZT_EQ_STR(cl.local_addr, "");

        /* inproc: binds, connects and their ends report nothing. */
        char iep[256];
        zlt_bind(server, "inproc", iep, sizeof iep);
        void *ic = zlt_sock(ctx, ZLINK_DEALER);
        void *im = mon_open(ic, ZLINK_EVENT_ALL, 0);
        zlt_connect(ic, iep);
        round_trip(ic, server);
        ZT_EQ_INT(zlink_disconnect(ic, iep), ZLINK_CONNECT_OK);
        ZT_EQ_INT(zlink_unbind(server, iep), ZLINK_CONNECT_OK);
        mon_none(im);
        bad_bind(server, 2);
        mon_expect(sm, ZLINK_EVENT_BIND_FAILED); /* nothing inproc before it */
        mon_close(im);
        mon_close(m);
        mon_close(sm);
        zlt_finish(ctx, ic, client, server);
    }
}

/* ================================================== 06-monitoring 15 */

static void disconnected_even_with_data_queued(void)
{
    printf("# covers 06-monitoring/15\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_PAIR);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *m = mon_open(server, ZLINK_EVENT_DISCONNECTED | ZLINK_EVENT_CONNECTION_READY, 0);
        void *client = zlt_socket(ctx, ZLINK_PAIR); /* LINGER -1: flushed before close */
        zlt_connect(client, ep);
        mon_expect(m, ZLINK_EVENT_CONNECTION_READY);
        zlt_send_ok(client, "one");
        zlt_send_ok(client, "two");
        zlt_send_ok(client, "three");
        zlt_close(client);
        /* Nothing was received, yet the end is reported. */
        ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_DISCONNECTED).value,
                  ZLINK_DISCONNECT_TRANSPORT_ERROR);
        zlink_monitor_status_t st;
        ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
        ZT_EQ_U64(st.rcv_pending_msgs, 3);
        ZT_EQ_U64(st.rcv_pending_bytes, 3 * 64 + 3 + 3 + 5);
        zlt_expect_str(server, "one");
        zlt_expect_str(server, "two");
        zlt_expect_str(server, "three");
        mon_close(m);
        zlt_finish(ctx, server);
    }
}

/* ================================================== 06-monitoring 16 */

/* recv writes the whole layout: nothing of the caller's old bytes stays. */
static void recv_writes_the_full_layout(void)
{
    printf("# covers 06-monitoring/16\n");
    void *ctx = zlt_ctx_new();
    void *server = zlt_sock(ctx, ZLINK_ROUTER);
    void *m = mon_open(server, ZLINK_EVENT_ALL, 0);
    char ep[256];
    zlt_bind(server, "tcp", ep, sizeof ep);
    zlink_monitor_event_t ev, zero;
    memset(&zero, 0, sizeof zero);
    memset(&ev, 0xEE, sizeof ev);
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_U64(ev.event, ZLINK_EVENT_LISTENING);
    ZT_EQ_U64(ev.value, 0);
    ZT_EQ_MEM(&ev.rid, &zero.rid, sizeof ev.rid);
    ZT_EQ_STR(ev.local_addr, ep);
    size_t n = strlen(ep);
    ZT_EQ_MEM(ev.local_addr + n, zero.local_addr + n, sizeof ev.local_addr - n);
    ZT_EQ_MEM(ev.remote_addr, zero.remote_addr, sizeof ev.remote_addr);
    ZT_EQ_U64(ev.connection_id, 0);
    ZT_EQ_U64(ev.transport_lane, 0);
    ZT_EQ_U64(ev.flags, 0);

    /* An event with a routing id: the id's unused bytes are zero too. */
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "abc");
    zlt_connect(d, ep);
    zlink_monitor_event_t r = mon_wait(m, ZLINK_EVENT_CONNECTION_READY);
    memset(&ev, 0xEE, sizeof ev);
    memcpy(&ev, &r, sizeof ev);
    ZT_EQ_INT(ev.rid.size, 3);
    ZT_EQ_MEM(ev.rid.data, "abc", 3);
    ZT_EQ_MEM(ev.rid.data + 3, zero.rid.data + 3, sizeof ev.rid.data - 3);
    mon_close(m);
    zlt_finish(ctx, d, server);
}

/* ================================================== 06-monitoring 17, 18 */

static void status_reports_kind_abi_and_size(void)
{
    printf("# covers 06-monitoring/17\n");
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    void *m = mon_open(s, 0, 0);
    zlink_monitor_status_t st;
    memset(&st, 0xCD, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    ZT_EQ_U64(st.abi_version, ZLINK_MONITOR_STATUS_ABI_VERSION);
    ZT_EQ_U64(st.abi_version, 4);
    ZT_EQ_U64(st.struct_size, sizeof st);
    ZT_EQ_U64(st.source_kind, ZLINK_MONITOR_SOURCE_SOCKET);
    ZT_EQ_U64(st.state_flags, 0); /* nothing bound, no peer */
    ZT_EQ_INT(zlink_monitor_status(m, NULL), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_monitor_status(s, &st), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* After the socket closed: CLOSED, nothing else. */
    zlt_close(s);
    memset(&st, 0xCD, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    ZT_EQ_U64(st.struct_size, sizeof st);
    ZT_EQ_U64(st.state_flags, ZLINK_MONITOR_STATE_CLOSED);
    ZT_EQ_U64(st.detail_flags, 0);
    ZT_EQ_U64(st.snd_pending_msgs | st.rcv_pending_msgs | st.flow_pause_applied_total, 0);
    mon_close(m);
    zlt_ctx_term(ctx);
}

/* Every field of a group whose detail bit is absent is 0. */
static void check_groups_zero_without_their_bit(const zlink_monitor_status_t *st)
{
    uint32_t d = st->detail_flags;
    if (!(d & ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS))
        ZT_EQ_U64(st->snd_pending_msgs | st->snd_pending_bytes, 0);
    if (!(d & ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS))
        ZT_EQ_U64(st->rcv_pending_msgs | st->rcv_pending_bytes, 0);
    if (!(d & ZLINK_MONITOR_STATUS_DETAIL_AUTO_HWM_BUDGET)) {
        ZT_EQ_U64(st->auto_hwm_enabled | st->auto_hwm_profile | st->auto_hwm_last_recalc_reason |
                      st->auto_hwm_send_blocked_ratio_ppm | st->auto_hwm_deferred_sndhwm_valid |
                      st->auto_hwm_deferred_rcvhwm_valid,
                  0);
        ZT_EQ_U64(st->auto_hwm_planned_sndhwm_bytes | st->auto_hwm_planned_rcvhwm_bytes |
                      st->auto_hwm_last_recalc_ms | st->auto_hwm_deferred_sndhwm_bytes |
                      st->auto_hwm_deferred_rcvhwm_bytes,
                  0);
    }
    if (!(d & ZLINK_MONITOR_STATUS_DETAIL_AUTO_HWM_BUFFERS)) {
        ZT_EQ_U64(st->auto_hwm_applied_sndhwm_bytes | st->auto_hwm_applied_rcvhwm_bytes |
                      st->snd_bytes_in_flight | st->rcv_bytes_in_flight |
                      st->minimum_core_message_charge_bytes |
                      st->oversize_message_admission_count |
                      st->oversize_message_admission_max_bytes,
                  0);
        ZT_EQ_INT(st->auto_hwm_effective_sndbuf, 0);
        ZT_EQ_INT(st->auto_hwm_effective_rcvbuf, 0);
    }
    if (!(d & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE))
        ZT_EQ_U64(st->flow_paused_connections | st->flow_pause_applied_total |
                      st->flow_resume_applied_total | st->flow_state_stale_total |
                      st->flow_pause_duration_ms,
                  0);
    ZT_EQ_U64(st->reserved, 0);
}

static void status_fields_without_their_bit_are_zero(void)
{
    printf("# covers 06-monitoring/18\n");
    void *ctx = zlt_ctx_new();
    /* PAIR: pending counts, no flow state. Two records wait in b. */
    void *a = zlt_sock(ctx, ZLINK_PAIR);
    void *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_link(a, b, "inproc");
    char ep[256];
    zlt_bind(b, "tcp", ep, sizeof ep);
    void *m = mon_open(b, 0, 0);
    zlt_send_ok(a, "12345");
    zlt_send_ok(a, "x");
    zlink_monitor_status_t st;
    memset(&st, 0xCD, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    ZT_EQ_U64(st.detail_flags, ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS |
                                   ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS);
    ZT_EQ_U64(st.state_flags, ZLINK_MONITOR_STATE_READY | ZLINK_MONITOR_STATE_BOUND_READY);
    ZT_EQ_U64(st.rcv_pending_msgs, 2);
    ZT_EQ_U64(st.rcv_pending_bytes, 2 * 64 + 5 + 1);
    ZT_EQ_U64(st.snd_pending_msgs, 0);
    ZT_EQ_U64(st.snd_pending_bytes, 0);
    check_groups_zero_without_their_bit(&st);
    zlt_expect_str(b, "12345");
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    ZT_EQ_U64(st.rcv_pending_msgs, 1);
    ZT_EQ_U64(st.rcv_pending_bytes, 64 + 1);
    mon_close(m);

    /* DEALER: FLOW_STATE too (the counters start at 0). */
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    m = mon_open(d, 0, 0);
    memset(&st, 0xCD, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    ZT_EQ_U64(st.detail_flags, ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS |
                                   ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS |
                                   ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
    ZT_EQ_U64(st.flow_paused_connections | st.flow_pause_applied_total, 0);
    check_groups_zero_without_their_bit(&st);
    mon_close(m);
    zlt_finish(ctx, a, b, d);
}

/* ================================================== 06-monitoring 23, 24 */

/* Fills a fresh monitor of budget hwm with `events` BIND_FAILED events and
 * returns how many were kept. */
static int kept_of(uint64_t hwm, int events)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    void *m = mon_open(s, ZLINK_EVENT_BIND_FAILED, hwm);
    for (int i = 0; i < events; i++)
        bad_bind(s, i);
    int kept = 0;
    zlink_monitor_event_t ev;
    while (zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT) == ZLINK_RECV_OK) {
        char want[64];
        snprintf(want, sizeof want, "tcp://127.0.0.1:%d", 70000 + kept);
        ZT_EQ_STR(ev.local_addr, want); /* the oldest, in order */
        kept++;
    }
    mon_close(m);
    zlt_finish(ctx, s);
    return kept;
}

static void hwm_bytes_exact_and_zero_is_the_default(void)
{
    printf("# covers 06-monitoring/23\n");
    ZT_EQ_U64(CHARGE, sizeof(zlink_monitor_event_t) + 64);
    ZT_EQ_INT(kept_of(3 * CHARGE, 5), 3);
    ZT_EQ_INT(kept_of(3 * CHARGE - 1, 5), 2);
    ZT_EQ_INT(kept_of(3 * CHARGE + CHARGE - 1, 5), 3);
    ZT_EQ_U64(ZLINK_MONITOR_HWM_DFLT, 4096 * CHARGE);
    ZT_EQ_INT(kept_of(0, 4097), 4096);
    ZT_EQ_INT(kept_of(ZLINK_MONITOR_HWM_DFLT, 4097), 4096);
}

static void byte_admission_one_oversize_event_on_empty(void)
{
    printf("# covers 06-monitoring/24\n");
    ZT_EQ_INT(kept_of(1, 3), 1);          /* oversize: admitted only on empty */
    ZT_EQ_INT(kept_of(CHARGE - 1, 3), 1);
    ZT_EQ_INT(kept_of(CHARGE, 3), 1);     /* exactly one fits */
    ZT_EQ_INT(kept_of(CHARGE + 1, 3), 1);
    ZT_EQ_INT(kept_of(2 * CHARGE, 3), 2);
    /* After draining, the next oversize event is admitted again. */
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    void *m = mon_open(s, ZLINK_EVENT_ALL, 1);
    bad_bind(s, 1);
    bad_bind(s, 2);
    ZT_EQ_STR(mon_expect(m, ZLINK_EVENT_BIND_FAILED).local_addr, "tcp://127.0.0.1:70001");
    mon_none(m);
    bad_bind(s, 3);
    ZT_EQ_STR(mon_expect(m, ZLINK_EVENT_BIND_FAILED).local_addr, "tcp://127.0.0.1:70003");
    mon_close(m);
    zlt_finish(ctx, s);
}

/* ================================================== close and stop */

/* Closing the socket reports DISCONNECTED for each ready peer and then
 * MONITOR_STOPPED, the last event; the monitor stays usable until closed,
 * and a blocked receive wakes up. */
static void socket_close_stops_the_monitor(void)
{
    printf("# covers 06-monitoring/14 (close)\n");
    void *ctx = zlt_ctx_new();
    void *server = zlt_sock(ctx, ZLINK_ROUTER);
    char ep[256];
    zlt_bind(server, "tcp", ep, sizeof ep);
    void *client = zlt_sock(ctx, ZLINK_DEALER);
    zlt_connect(client, ep);
    round_trip(client, server);
    void *m = mon_open(server, ZLINK_EVENT_ALL, 0);
    zlt_close(server);
    ZT_EQ_U64(mon_expect(m, ZLINK_EVENT_DISCONNECTED).value, ZLINK_DISCONNECT_UNKNOWN);
    mon_expect(m, ZLINK_EVENT_MONITOR_STOPPED);
    zlink_monitor_event_t ev;
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
    /* The socket can be monitored no more; the monitor outlives the ctx. */
    zlt_close(client);
    zlt_ctx_term(ctx);
    zlink_monitor_status_t st;
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    ZT_EQ_U64(st.state_flags, ZLINK_MONITOR_STATE_CLOSED);
    mon_close(m);
}

/* ================================================== 04-events 8, 9 */

static void flow_bits_16_to_18_and_all(void)
{
    printf("# covers 04-events/8\n");
    ZT_EQ_U64(ZLINK_EVENT_SEND_FLOW_PAUSED, 1u << 16);
    ZT_EQ_U64(ZLINK_EVENT_SEND_FLOW_RESUMED, 1u << 17);
    ZT_EQ_U64(ZLINK_EVENT_FLOW_STATE_STALE, 1u << 18);
    ZT_EQ_U64(ZLINK_EVENT_ALL, 0x7FFFF);
    uint32_t all = 0;
    for (int b = 0; b <= 18; b++)
        all |= 1u << b;
    ZT_EQ_U64(ZLINK_EVENT_ALL, all);
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_DEALER);
    void *m = mon_open(s, ZLINK_EVENT_SEND_FLOW_PAUSED | ZLINK_EVENT_SEND_FLOW_RESUMED |
                              ZLINK_EVENT_FLOW_STATE_STALE,
                       0);
    mon_close(m);
    m = mon_open(s, ZLINK_EVENT_ALL, 0);
    mon_close(m);
    zlt_finish(ctx, s);
}

/* An explicit mask receives exactly its own bits. */
static void explicit_mask_receives_only_its_bits(void)
{
    printf("# covers 04-events/9\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *client = zlt_sock(ctx, ZLINK_DEALER);
        void *m = mon_open(client, ZLINK_EVENT_DISCONNECTED | ZLINK_EVENT_CONNECT_DELAYED, 0);
        zlt_connect(client, ep);
        round_trip(client, server);
        zlt_close(server);
        ZT_EQ_U64(mon_next(m).event, ZLINK_EVENT_DISCONNECTED);
        ZT_EQ_U64(mon_next(m).event, ZLINK_EVENT_CONNECT_DELAYED);
        ZT_EQ_INT(zlink_disconnect(client, ep), ZLINK_CONNECT_OK);
        bad_bind(client, 1);
        /* CONNECTED, CONNECTION_READY, RETRIED, CLOSED, BIND_FAILED: not
         * subscribed (a DELAYED may still have been armed meanwhile). */
        zlink_monitor_event_t ev;
        while (zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT) == ZLINK_RECV_OK)
            ZT_EQ_U64(ev.event, ZLINK_EVENT_CONNECT_DELAYED);
        mon_close(m);
        zlt_finish(ctx, client);
    }
}

/* ================================================== 04-events 10 */

/* Weight changes arrive in the order the peer made them. Unsent WEIGHT
 * controls are coalesced (only the latest of a kind stays queued,
 * contract §7), so the events are an increasing subsequence of the
 * changes that always ends with the last one. */
static void weight_changes_arrive_in_commit_order(void)
{
    printf("# covers 04-events/10\n");
    for (int t = 0; t < NTRS; t++) {
        const char *tr = TRS[t];
        printf("# transport %s\n", tr);
        void *ctx = zlt_ctx_new();
        void *server = zlt_sock(ctx, ZLINK_ROUTER);
        char ep[256];
        zlt_bind(server, tr, ep, sizeof ep);
        void *client = zlt_sock(ctx, ZLINK_DEALER);
        void *m = mon_open(client, ZLINK_EVENT_PEER_WEIGHT_CHANGED, 0);
        zlt_connect(client, ep);
        round_trip(client, server);
        for (int w = 1; w <= 50; w++)
            zlt_set_int(server, ZLINK_ROUTER_WEIGHT, w);
        uint64_t last = 0;
        while (last != 50) {
            uint64_t w = mon_expect(m, ZLINK_EVENT_PEER_WEIGHT_CHANGED).value;
            if (w <= last || w > 50)
                ZT_FAIL("weight event %llu after %llu: not in commit order",
                        (unsigned long long)w, (unsigned long long)last);
            last = w;
        }
        mon_none(m);
        mon_close(m);
        zlt_finish(ctx, client, server);
    }
}

/* ================================================== 04-events 11 */

/* Events carry no clock: the record has exactly the contract's fields.
 * Connections on different I/O threads each keep their own order. */
static void no_clock_and_per_connection_order_across_io_threads(void)
{
    printf("# covers 04-events/11 06-monitoring/6\n");
    ZT_EQ_INT(sizeof(zlink_monitor_event_t),
              8 + 8 + sizeof(zlink_routing_id_t) + 256 + 256 + 8 + 4 + 4);
    void *ctx = zlt_ctx_new();
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 2), ZLINK_CONFIG_OK);
    void *s1 = zlt_sock(ctx, ZLINK_ROUTER);
    void *s2 = zlt_sock(ctx, ZLINK_ROUTER);
    char e1[256], e2[256];
    zlt_bind(s1, "tcp", e1, sizeof e1);
    zlt_bind(s2, "ipc", e2, sizeof e2);
    void *c = zlt_sock(ctx, ZLINK_DEALER);
    void *m = mon_open(c, ZLINK_EVENT_CONNECTED | ZLINK_EVENT_CONNECTION_READY, 0);
    zlt_connect(c, e1);
    zlt_connect(c, e2);
    uint64_t connected[2] = {0, 0};
    int nc = 0, nr = 0;
    while (nr < 2) {
        zlink_monitor_event_t ev = mon_next(m);
        if (ev.event == ZLINK_EVENT_CONNECTED) {
            ZT_CHECK(nc < 2);
            connected[nc++] = ev.connection_id;
        } else {
            /* Each READY follows its own connection's CONNECTED. */
            ZT_CHECK(ev.connection_id == connected[0] || ev.connection_id == connected[1]);
            nr++;
        }
    }
    mon_close(m);
    zlt_finish(ctx, c, s1, s2);
}

static const zt_case_t cases[] = {
    ZT_CASE(events_zero_receive_none_all_receive_all),
    ZT_CASE(open_failure_returns_null_with_errno),
    ZT_CASE(dontwait_with_nothing_is_no_data_and_output_unchanged),
    ZT_CASE(events_come_in_commit_order),
    ZT_CASE(full_queue_drops_the_newest),
    ZT_CASE(slow_consumer_never_blocks_sends),
    ZT_CASE(values_follow_the_contract),
    ZT_CASE(malformed_handshakes_report_protocol_codes),
    ZT_CASE(one_ready_edge_per_logical_peer),
    ZT_CASE(connection_id_is_per_physical_connection),
    ZT_CASE(closed_only_for_endpoints_one_disconnected_per_connection),
    ZT_CASE(disconnected_even_with_data_queued),
    ZT_CASE(recv_writes_the_full_layout),
    ZT_CASE(status_reports_kind_abi_and_size),
    ZT_CASE(status_fields_without_their_bit_are_zero),
    ZT_CASE(hwm_bytes_exact_and_zero_is_the_default),
    ZT_CASE(byte_admission_one_oversize_event_on_empty),
    ZT_CASE(socket_close_stops_the_monitor),
    ZT_CASE(flow_bits_16_to_18_and_all),
    ZT_CASE(explicit_mask_receives_only_its_bits),
    ZT_CASE(weight_changes_arrive_in_commit_order),
    ZT_CASE(no_clock_and_per_connection_order_across_io_threads),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
