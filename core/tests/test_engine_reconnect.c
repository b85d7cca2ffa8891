/*
 * test_engine_reconnect.c — connecters that retry and reconnect, and the
 * endpoint calls that stop them (doc/protocol.md section 13, zlink.h).
 *
 *   - Connect before bind: a PAIR connects to a tcp port / ipc path where
 *     nothing listens (its first attempt fails at once), then a child
 *     process binds there; a record sent with an SNDTIMEO that covers the
 *     wait arrives, and the answer comes back.
 *   - The bound peer is a child process (zt_spawn_self). It exits abruptly
 *     (_exit, nothing closed: for ipc the socket file stays behind); a new
 *     child binds the same tcp port / ipc path. The connecter reconnects by
 *     itself within RECONNECT_IVL-based time (measured from the moment the
 *     new child reports its bind) and records flow again. No record sent
 *     before the loss is replayed: the new child fails if it sees one, and
 *     it must see exactly the records sent after the reconnect.
 *   - RECONNECT_IVL -1: after the loss, no attempt reaches a new listener
 *     on the same endpoint. zlink_disconnect: no attempt either, whether
 *     the connecter was connected or still retrying. Both are watched with
 *     a raw listener that identifies every incoming connection by the
 *     routing id in its HELLO; a second connecter with RECONNECT_IVL 20 on
 *     the same endpoint is the control that must show up in the same
 *     window.
 *   - zlink_unbind closes the connections accepted through that endpoint
 *     (a raw client reads EOF; a ZLink DEALER's sends go from accepted to
 *     backpressured, its blocking send times out), refuses new ones, keeps
 *     the socket's other endpoint working, and removes the ipc file.
 *
 * Ordering note: zlink_disconnect, zlink_unbind and zlink_close hand their
 * work to the I/O thread. Each test context has one I/O thread
 * (ZLINK_IO_THREADS 1), which runs requests in the order they were made;
 * io_barrier() makes one more request that waits for the I/O thread (a
 * bind) so that everything asked before it has been done. Only then is a
 * new listener opened on the old endpoint, so an attempt already under way
 * at the moment of the call cannot be mistaken for a later one.
 */
#include "zlink.h"
#include "zltest.h"
#include "zltest_rawzmp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ------------------------------------------------------ ZLink helpers */

static void *ctx_new1(void)
{
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 1), ZLINK_CONFIG_OK);
    return ctx;
}

static void set_int(void *s, int opt, int v)
{
    ZT_EQ_INT(zlink_setsockopt(s, opt, &v, sizeof v), ZLINK_CONFIG_OK);
}

static void *sock_new(void *ctx, int type, const char *rid, int ivl)
{
    void *s = zlink_socket(ctx, type);
    ZT_CHECK(s != NULL);
    set_int(s, ZLINK_RCVTIMEO, T(5000));
    set_int(s, ZLINK_SNDTIMEO, T(5000));
    set_int(s, ZLINK_LINGER, 0);
    set_int(s, ZLINK_RECONNECT_IVL, ivl);
    if (rid != NULL)
        ZT_EQ_INT(zlink_set_routing_id(s, rid, strlen(rid)), ZLINK_CONFIG_OK);
    return s;
}

static void sock_close(void *s)
{
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
}

static zlink_submit_result_t send_str(void *s, const char *text, int flags)
{
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, strlen(text)), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m), text, strlen(text));
    return zlink_send(s, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
}

/* Receives a one-part record into buf (NUL-terminated). */
static zlink_recv_result_t recv_str(void *s, char *buf, size_t cap, int flags)
{
    zlink_msg_t m;
    size_t count = 0;
    zlink_recv_result_t rc = zlink_recv(s, NULL, &m, 1, &count, (zlink_recv_flags_t)flags);
    if (rc != ZLINK_RECV_OK)
        return rc;
    ZT_EQ_INT(count, 1);
    size_t n = zlink_msg_size(&m);
    ZT_CHECK(n < cap);
    memcpy(buf, zlink_msg_data(&m), n);
    buf[n] = '\0';
    zlink_msg_close(&m);
    return rc;
}

static void expect_str(void *s, const char *want)
{
    char buf[256];
    ZT_EQ_INT(recv_str(s, buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_EQ_STR(buf, want);
}

static void bind_ep(void *s, const char *want, char *ep, size_t cap)
{
    ZT_EQ_INT(zlink_bind(s, want), ZLINK_BIND_OK);
    size_t len = cap;
    ZT_EQ_INT(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &len), ZLINK_CONFIG_OK);
}

/* See the file comment: returns once the I/O thread has done every
 * request made before the call. */
static void io_barrier(void *ctx)
{
    void *s = zlink_socket(ctx, ZLINK_PAIR);
    ZT_CHECK(s != NULL);
    ZT_EQ_INT(zlink_bind(s, "tcp://127.0.0.1:0"), ZLINK_BIND_OK);
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
}

/* ------------------------------------------------------- raw sockets */

/* A tcp port nobody listens on, held (bound, SO_REUSEADDR, not listening)
 * so no other process takes it: connects are refused, and a listener with
 * SO_REUSEADDR (libuv sets it) may still bind it. Returns the fd. */
static int reserve_port(char *ep, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ZT_CHECK(fd >= 0);
    int one = 1;
    ZT_EQ_INT(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ZT_EQ_INT(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    socklen_t len = sizeof sin;
    ZT_EQ_INT(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    snprintf(ep, cap, "tcp://127.0.0.1:%d", ntohs(sin.sin_port));
    return fd;
}

/* A raw listener on ep (an address a ZLink socket used before). */
static int raw_listen(const char *ep)
{
    struct sockaddr_storage ss;
    socklen_t len = ep_sockaddr(ep, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ZT_CHECK(fd >= 0);
    if (ss.ss_family == AF_INET) {
        int one = 1;
        ZT_EQ_INT(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    } else {
        unlink(ep + 6);
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0)
        ZT_FAIL("raw bind %s: %s", ep, strerror(errno));
    ZT_EQ_INT(listen(fd, 64), 0);
    return fd;
}

/* Reads a HELLO from fd (within 5 s) and copies its routing id into rid;
 * returns false if the connection closed before a whole HELLO arrived. */
static bool read_hello_rid(int fd, char *rid, size_t cap)
{
    uint8_t b[8 + 4 + 255];
    size_t n = 0;
    int64_t end = zt_now_ms() + T(5000);
    for (;;) {
        if (n >= 12) {
            size_t want = 8 + (size_t)((b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7]);
            ZT_CHECK(want <= sizeof b);
            if (n >= want) {
                ZT_EQ_INT(b[0], 0x5A);
                ZT_EQ_INT(b[2], 0x02);
                ZT_EQ_INT(b[8], 0x01);
                size_t l = b[11];
                ZT_CHECK(l < cap && 12 + l <= want);
                memcpy(rid, b + 12, l);
                rid[l] = '\0';
                return true;
            }
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(end - zt_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            ZT_FAIL("no HELLO within %d ms", T(5000));
        size_t want = n < 12 ? 12 : 8 + (size_t)((b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7]);
        if (want > sizeof b)
            want = sizeof b;
        ssize_t k = recv(fd, b + n, want - n, 0);
        if (k <= 0)
            return false;
        n += (size_t)k;
    }
}

/* Watches a raw listener for window_ms: every connection must say who it
 * is in its HELLO. `control` must show up (at least once); `never` must
 * not. */
static void watch_listener(int lfd, int window_ms, const char *control, const char *never)
{
    int control_seen = 0;
    int64_t end = zt_now_ms() + window_ms;
    for (;;) {
        int left = (int)(end - zt_now_ms());
        if (left <= 0)
            break;
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        int rc = poll(&p, 1, left);
        if (rc < 0 && errno == EINTR)
            continue;
        ZT_CHECK(rc >= 0);
        if (rc == 0)
            break;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        ZT_CHECK(fd >= 0);
        char rid[256];
        if (!read_hello_rid(fd, rid, sizeof rid))
            ZT_FAIL("a connection closed before saying who it is (%s expected)", control);
        close(fd);
        if (strcmp(rid, never) == 0)
            ZT_FAIL("'%s' connected again", never);
        if (strcmp(rid, control) != 0)
            ZT_FAIL("unexpected connection from '%s'", rid);
        control_seen++;
    }
    if (control_seen == 0)
        ZT_FAIL("the control connecter '%s' did not reconnect within %d ms", control, window_ms);
    printf("# %d attempt(s) from '%s', none from '%s'\n", control_seen, control, never);
}

/* ------------------------------------------------------ child processes */

/* Role "binder", arg "ENDPOINT FD FORBIDDEN": binds a PAIR at ENDPOINT,
 * writes the bound endpoint and '\n' to FD, then echoes every record as
 * "echo:<text>". On "exit-now" it _exits at once (no close: an abrupt
 * end). On "bye" it answers, closes and exits 0, or 3 if it received a
 * record starting with FORBIDDEN (a replay). */
static int run_binder(const char *arg)
{
    char ep[256], forbidden[64];
    int fd = -1;
    if (arg == NULL || sscanf(arg, "%255s %d %63s", ep, &fd, forbidden) != 3)
        return 10;
    void *ctx = ctx_new1();
    void *s = sock_new(ctx, ZLINK_PAIR, NULL, 100);
    set_int(s, ZLINK_RCVTIMEO, T(20000));
    char bound[256];
    bind_ep(s, ep, bound, sizeof bound);
    size_t len = strlen(bound);
    bound[len++] = '\n';
    ZT_EQ_INT(write(fd, bound, len), (ssize_t)len);
    close(fd);
    int replays = 0;
    for (;;) {
        char buf[256];
        ZT_EQ_INT(recv_str(s, buf, sizeof buf, 0), ZLINK_RECV_OK);
        if (strcmp(buf, "exit-now") == 0)
            _exit(0);
        if (strncmp(buf, forbidden, strlen(forbidden)) == 0)
            replays++;
        char echo[300];
        snprintf(echo, sizeof echo, "echo:%s", buf);
        ZT_EQ_INT(send_str(s, echo, 0), ZLINK_SUBMIT_OK);
        if (strcmp(buf, "bye") == 0)
            break;
    }
    set_int(s, ZLINK_LINGER, T(5000)); /* the last echo must leave */
    sock_close(s);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    return replays > 0 ? 3 : 0;
}

typedef struct child {
    pid_t pid;
    int rfd; /* read end of the report pipe */
    char ep[256];
} child_t;

/* Starts a binder child on ep; forbidden: text prefix it must never get. */
static void child_start(child_t *c, const char *ep, const char *forbidden)
{
    int pfd[2];
    ZT_EQ_INT(pipe(pfd), 0); /* the write end is inherited across exec */
    fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
    char arg[400];
    snprintf(arg, sizeof arg, "%s %d %s", ep, pfd[1], forbidden);
    c->pid = zt_spawn_self("binder", arg);
    close(pfd[1]);
    c->rfd = pfd[0];
    c->ep[0] = '\0';
}

/* Waits (poll, 10 s) for the child's report of its bound endpoint. */
static void child_wait_bound(child_t *c)
{
    size_t n = 0;
    int64_t end = zt_now_ms() + T(10000);
    while (n == 0 || c->ep[n - 1] != '\n') {
        struct pollfd p = {.fd = c->rfd, .events = POLLIN};
        int left = (int)(end - zt_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            ZT_FAIL("the binder child did not report its bind within %d ms", T(10000));
        ssize_t k = read(c->rfd, c->ep + n, sizeof c->ep - 1 - n);
        if (k <= 0)
            ZT_FAIL("the binder child ended before binding (exit %d)", zt_wait(c->pid));
        n += (size_t)k;
    }
    c->ep[n - 1] = '\0';
    close(c->rfd);
    c->rfd = -1;
}

static const char *tr_ep(const char *tr, char *buf, size_t cap, const char *tag)
{
    if (strcmp(tr, "ipc") == 0)
        return zt_ipc_endpoint(buf, cap, tag);
    return "tcp://127.0.0.1:0";
}

/* ================================================ connect before bind */

static void connect_before_bind_case(const char *tr)
{
    printf("# %s\n", tr);
    char ep[256];
    int resv = -1;
    if (strcmp(tr, "ipc") == 0) {
        zt_ipc_endpoint(ep, sizeof ep, "late");
        unlink(ep + 6);
    } else {
        resv = reserve_port(ep, sizeof ep);
    }
    void *ctx = ctx_new1();
    void *p = sock_new(ctx, ZLINK_PAIR, NULL, 20);
    set_int(p, ZLINK_SNDTIMEO, T(10000));
    set_int(p, ZLINK_RCVTIMEO, T(10000));
    /* The first attempt is made (and fails) before zlink_connect returns. */
    ZT_EQ_INT(zlink_connect(p, ep), ZLINK_CONNECT_OK);
    child_t c;
    child_start(&c, ep, "never-sent");
    /* Blocks until the child has bound and the connecter got through. */
    ZT_EQ_INT(send_str(p, "early", 0), ZLINK_SUBMIT_OK);
    child_wait_bound(&c);
    ZT_EQ_STR(c.ep, ep);
    expect_str(p, "echo:early");
    ZT_EQ_INT(send_str(p, "bye", 0), ZLINK_SUBMIT_OK);
    expect_str(p, "echo:bye");
    ZT_EQ_INT(zt_wait(c.pid), 0);
    if (resv >= 0)
        close(resv);
    sock_close(p);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static void connect_before_bind_tcp(void)
{
    connect_before_bind_case("tcp");
}

static void connect_before_bind_ipc(void)
{
    connect_before_bind_case("ipc");
}

/* ============================== the bound process exits; a new one binds */

#define IVL 50

static void reconnect_case(const char *tr)
{
    printf("# %s\n", tr);
    char buf[256];
    child_t c1, c2;
    child_start(&c1, tr_ep(tr, buf, sizeof buf, "rebind"), "never-sent");
    child_wait_bound(&c1);
    printf("# first binder at %s\n", c1.ep);

    void *ctx = ctx_new1();
    void *p = sock_new(ctx, ZLINK_PAIR, NULL, IVL);
    set_int(p, ZLINK_RECONNECT_IVL_MAX, 0); /* a constant interval */
    ZT_EQ_INT(zlink_connect(p, c1.ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(send_str(p, "r1-a", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(send_str(p, "r1-b", 0), ZLINK_SUBMIT_OK);
    expect_str(p, "echo:r1-a");
    expect_str(p, "echo:r1-b");

    /* The binder process ends abruptly. */
    ZT_EQ_INT(send_str(p, "exit-now", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zt_wait(c1.pid), 0);
    /* A record sent around the loss: accepted into the dying connection or
     * refused for lack of a peer; it must never reach the next binder. */
    zlink_submit_result_t late = send_str(p, "r1-late", ZLINK_DONTWAIT);
    ZT_CHECK(late == ZLINK_SUBMIT_OK || late == ZLINK_SUBMIT_BACKPRESSURED);

    /* A new process binds the same port / path (ipc: over the stale file). */
    child_start(&c2, c1.ep, "r1");
    child_wait_bound(&c2);
    int64_t t0 = zt_now_ms();
    ZT_EQ_STR(c2.ep, c1.ep);
    ZT_EQ_INT(send_str(p, "r2-first", 0), ZLINK_SUBMIT_OK); /* waits for the reconnect */
    expect_str(p, "echo:r2-first");
    int64_t took = zt_now_ms() - t0;
    printf("# reconnected and echoed %lld ms after the new bind (RECONNECT_IVL %d)\n",
           (long long)took, IVL);
    if (took > IVL + T(1000))
        ZT_FAIL("reconnect took %lld ms, RECONNECT_IVL is %d", (long long)took, IVL);
    ZT_EQ_INT(send_str(p, "bye", 0), ZLINK_SUBMIT_OK);
    expect_str(p, "echo:bye");
    /* 0: the new binder saw no r1-* record (3 would be a replay). */
    ZT_EQ_INT(zt_wait(c2.pid), 0);
    char none[256];
    ZT_EQ_INT(recv_str(p, none, sizeof none, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    sock_close(p);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    if (strcmp(tr, "ipc") == 0)
        ZT_CHECK(access(c1.ep + 6, F_OK) != 0); /* the clean close removed it */
}

static void reconnect_after_peer_process_exits_tcp(void)
{
    reconnect_case("tcp");
}

static void reconnect_after_peer_process_exits_ipc(void)
{
    reconnect_case("ipc");
}

/* ================================================ when not to reconnect */

#define WATCH_MS 300

/* DEALERs p (rid "p-...", RECONNECT_IVL pivl) and q ("q-again", 20) are
 * connected to a DEALER b at ep and have each sent a record to it. */
static void two_connecters(void *ctx, void *b, const char *ep, void **p, const char *prid,
                           int pivl, void **q)
{
    *p = sock_new(ctx, ZLINK_DEALER, prid, pivl);
    *q = sock_new(ctx, ZLINK_DEALER, "q-again", 20);
    ZT_EQ_INT(zlink_connect(*p, ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(zlink_connect(*q, ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(send_str(*p, "from-p", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(send_str(*q, "from-q", 0), ZLINK_SUBMIT_OK);
    char x[64], y[64];
    ZT_EQ_INT(recv_str(b, x, sizeof x, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(recv_str(b, y, sizeof y, 0), ZLINK_RECV_OK);
    ZT_CHECK((strcmp(x, "from-p") == 0 && strcmp(y, "from-q") == 0) ||
             (strcmp(x, "from-q") == 0 && strcmp(y, "from-p") == 0));
}

/* RECONNECT_IVL -1: after the binder is gone, a listener on the same
 * endpoint sees the control connecter come back, never p. */
static void no_reconnect_ivl_minus_1_case(const char *tr)
{
    printf("# %s\n", tr);
    char buf[256], ep[256];
    void *ctx = ctx_new1();
    void *b = sock_new(ctx, ZLINK_DEALER, "binder", 100);
    bind_ep(b, tr_ep(tr, buf, sizeof buf, "ivl-1"), ep, sizeof ep);
    void *p, *q;
    two_connecters(ctx, b, ep, &p, "p-once", -1, &q);
    sock_close(b);
    io_barrier(ctx);
    int lfd = raw_listen(ep);
    watch_listener(lfd, T(WATCH_MS), "q-again", "p-once");
    sock_close(p);
    sock_close(q);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    raw_unlisten(lfd, ep);
}

static void no_reconnect_ivl_minus_1_tcp(void)
{
    no_reconnect_ivl_minus_1_case("tcp");
}

static void no_reconnect_ivl_minus_1_ipc(void)
{
    no_reconnect_ivl_minus_1_case("ipc");
}

/* zlink_disconnect while connected: the connection ends and no attempt
 * follows (q, not disconnected, comes back). A second disconnect of the
 * same endpoint: NOT_FOUND. */
static void disconnect_connected_case(const char *tr)
{
    printf("# %s, connected\n", tr);
    char buf[256], ep[256];
    void *ctx = ctx_new1();
    void *b = sock_new(ctx, ZLINK_DEALER, "binder", 100);
    bind_ep(b, tr_ep(tr, buf, sizeof buf, "disc"), ep, sizeof ep);
    void *p, *q;
    two_connecters(ctx, b, ep, &p, "p-disconnected", 20, &q);
    ZT_EQ_INT(zlink_disconnect(p, ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(zlink_disconnect(p, ep), ZLINK_CONNECT_NOT_FOUND);
    ZT_EQ_INT(zlink_errno(), ENOENT);
    /* p has no peer left: its blocking send times out. */
    set_int(p, ZLINK_SNDTIMEO, 50);
    io_barrier(ctx);
    ZT_EQ_INT(send_str(p, "after", 0), ZLINK_SUBMIT_BACKPRESSURED);
    sock_close(b);
    io_barrier(ctx);
    int lfd = raw_listen(ep);
    watch_listener(lfd, T(WATCH_MS), "q-again", "p-disconnected");
    sock_close(p);
    sock_close(q);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    raw_unlisten(lfd, ep);
}

/* zlink_disconnect while still retrying (nothing bound yet): a listener
 * opened afterwards never hears from p. */
static void disconnect_retrying_case(const char *tr)
{
    printf("# %s, retrying\n", tr);
    char ep[256];
    int resv = -1;
    if (strcmp(tr, "ipc") == 0) {
        zt_ipc_endpoint(ep, sizeof ep, "disc-retry");
        unlink(ep + 6);
    } else {
        resv = reserve_port(ep, sizeof ep);
    }
    void *ctx = ctx_new1();
    void *p = sock_new(ctx, ZLINK_DEALER, "p-disconnected", 20);
    void *q = sock_new(ctx, ZLINK_DEALER, "q-again", 20);
    ZT_EQ_INT(zlink_connect(p, ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(zlink_connect(q, ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(zlink_disconnect(p, ep), ZLINK_CONNECT_OK);
    io_barrier(ctx);
    int lfd = raw_listen(ep);
    if (resv >= 0)
        close(resv);
    watch_listener(lfd, T(WATCH_MS), "q-again", "p-disconnected");
    sock_close(p);
    sock_close(q);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    raw_unlisten(lfd, ep);
}

static void disconnect_stops_reconnecting_tcp(void)
{
    disconnect_connected_case("tcp");
    disconnect_retrying_case("tcp");
}

static void disconnect_stops_reconnecting_ipc(void)
{
    disconnect_connected_case("ipc");
    disconnect_retrying_case("ipc");
}

/* ============================================================== unbind */

/* A raw DEALER on ep, handshaken, that sent "raw-alive" (received by b). */
static int raw_dealer(void *b, const char *ep)
{
    struct sockaddr_storage ss;
    socklen_t len = ep_sockaddr(ep, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ZT_CHECK(fd >= 0);
    ZT_EQ_INT(connect(fd, (struct sockaddr *)&ss, len), 0);
    /* HELLO DEALER "raw"; READY with the four lane-era properties (no
     * Zlink-Weight: absent means 100); one record "raw-alive". */
    wire_t w = {.n = 0}, props = {.n = 0};
    w_hello(&w, ZLINK_DEALER, "raw");
    w_prop(&props, "Socket-Type", "DEALER", 6);
    w_prop(&props, "Routing-Id", "raw", 3);
    w_prop(&props, "Zlink-Lane-Count", "\x01", 1);
    w_prop(&props, "Zlink-Lane", "\x00", 1);
    w_ready(&w, &props);
    w_data(&w, false, "raw-alive");
    ZT_EQ_INT(send(fd, w.b, w.n, MSG_NOSIGNAL), (ssize_t)w.n);
    w_free(&props);
    w_free(&w);
    expect_str(b, "raw-alive");
    return fd;
}

/* Reads (and drops) until fd reaches EOF or a reset; fails after 5 s. */
static void raw_wait_eof(int fd)
{
    int64_t end = zt_now_ms() + T(5000);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(end - zt_now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            ZT_FAIL("the unbound endpoint's connection stayed open for %d ms", T(5000));
        char b[4096];
        ssize_t k = recv(fd, b, sizeof b, 0);
        if (k == 0 || (k < 0 && (errno == ECONNRESET || errno == EPIPE)))
            return;
    }
}

/* p's records are accepted until it notices the loss; then refused. */
static void wait_send_backpressured(void *p)
{
    int64_t end = zt_now_ms() + T(5000);
    for (;;) {
        zlink_submit_result_t rc = send_str(p, "into the void", ZLINK_DONTWAIT);
        if (rc == ZLINK_SUBMIT_BACKPRESSURED)
            return;
        ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
        if (zt_now_ms() > end)
            ZT_FAIL("the peer of an unbound endpoint still takes records after %d ms", T(5000));
        sched_yield();
    }
}

/* Unbinding `gone` (of b, bound to both gone and kept): its accepted
 * connections close, new ones are refused, the other endpoint works. */
static void unbind_one(void *ctx, void *b, const char *gone, const char *kept)
{
    printf("# unbind %s, keep %s\n", gone, kept);
    int raw = raw_dealer(b, gone);
    void *p = sock_new(ctx, ZLINK_DEALER, "p", 20);
    void *k = sock_new(ctx, ZLINK_DEALER, "k", 20);
    ZT_EQ_INT(zlink_connect(p, gone), ZLINK_CONNECT_OK);
    ZT_EQ_INT(zlink_connect(k, kept), ZLINK_CONNECT_OK);
    ZT_EQ_INT(send_str(p, "p-alive", 0), ZLINK_SUBMIT_OK);
    expect_str(b, "p-alive");
    ZT_EQ_INT(send_str(k, "k-alive", 0), ZLINK_SUBMIT_OK);
    expect_str(b, "k-alive");

    ZT_EQ_INT(zlink_unbind(b, gone), ZLINK_CONNECT_OK);
    raw_wait_eof(raw);
    close(raw);
    wait_send_backpressured(p);
    set_int(p, ZLINK_SNDTIMEO, 100);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(send_str(p, "blocked", 0), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_CHECK(zt_now_ms() - t0 >= 90);
    /* Nothing from the closed connections reached b. */
    char x[64];
    ZT_EQ_INT(recv_str(b, x, sizeof x, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    /* The other endpoint still works, both ways. */
    ZT_EQ_INT(send_str(k, "k-still", 0), ZLINK_SUBMIT_OK);
    expect_str(b, "k-still");
    ZT_EQ_INT(send_str(b, "to-k", 0), ZLINK_SUBMIT_OK);
    expect_str(k, "to-k");
    /* No listener anymore. */
    io_barrier(ctx);
    struct sockaddr_storage ss;
    socklen_t len = ep_sockaddr(gone, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ZT_CHECK(fd >= 0);
    int rc = connect(fd, (struct sockaddr *)&ss, len);
    int e = errno;
    close(fd);
    ZT_EQ_INT(rc, -1);
    if (ss.ss_family == AF_UNIX) {
        ZT_EQ_INT(e, ENOENT); /* the socket file was removed */
        ZT_CHECK(access(gone + 6, F_OK) != 0);
    } else {
        ZT_EQ_INT(e, ECONNREFUSED);
    }
    ZT_EQ_INT(zlink_unbind(b, gone), ZLINK_CONNECT_NOT_FOUND);
    sock_close(p);
    sock_close(k);
}

static void unbind_closes_accepted_connections(void)
{
    char buf[256], tcp[256], ipc[256];
    void *ctx = ctx_new1();
    void *b = sock_new(ctx, ZLINK_DEALER, "binder", 100);
    bind_ep(b, "tcp://127.0.0.1:0", tcp, sizeof tcp);
    bind_ep(b, zt_ipc_endpoint(buf, sizeof buf, "unbind"), ipc, sizeof ipc);
    unbind_one(ctx, b, tcp, ipc);
    /* And the other way round, on a fresh tcp endpoint. */
    bind_ep(b, "tcp://127.0.0.1:0", tcp, sizeof tcp);
    unbind_one(ctx, b, ipc, tcp);
    sock_close(b);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static const zt_case_t cases[] = {
    ZT_CASE(connect_before_bind_tcp),
    ZT_CASE(connect_before_bind_ipc),
    ZT_CASE(reconnect_after_peer_process_exits_tcp),
    ZT_CASE(reconnect_after_peer_process_exits_ipc),
    ZT_CASE(no_reconnect_ivl_minus_1_tcp),
    ZT_CASE(no_reconnect_ivl_minus_1_ipc),
    ZT_CASE(disconnect_stops_reconnecting_tcp),
    ZT_CASE(disconnect_stops_reconnecting_ipc),
    ZT_CASE(unbind_closes_accepted_connections),
};

static const zt_role_t roles[] = {
    ZT_ROLE("binder", run_binder),
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    return zt_main_roles(argc, argv, cases, ZT_NCASES(cases), roles, ZT_NCASES(roles));
}
