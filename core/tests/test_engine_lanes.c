/*
 * test_engine_lanes.c — lanes (doc/protocol.md section 10): how many
 * transport connections a logical connection uses, what the handshake says
 * about them, and what happens when one of them dies.
 *
 *   - Counting: ROUTER-ROUTER uses two connections, DEALER-ROUTER (either
 *     side binding) and DEALER-DEALER one, on tcp and ipc. The count is read
 *     from the kernel: established TCP sockets whose local port is the bound
 *     port (/proc/net/tcp), connected unix sockets bound to the ipc path
 *     (/proc/net/unix). Records flow both ways first, with
 *     CONNECT_ROUTING_ID naming the ROUTER peer.
 *   - Killing a lane: a ROUTER connects to a ROUTER through a small TCP /
 *     unix proxy (a thread of this test) that can close one forwarded
 *     connection and then stops forwarding closes: each ZLink side must
 *     close the other lane by itself. The connecter then reconnects both
 *     lanes (lane 0 first, then lane 1, same Routing-Id) and records flow
 *     again, still under the CONNECT_ROUTING_ID alias.
 *   - The wire: a raw POSIX peer on either side of the handshake reads the
 *     READY ZLink sends (lane count 1/1/2 whichever side connects; property
 *     order and layout; no lane properties from PAIR/PUB/SUB; metadata),
 *     plays both lanes of a ROUTER against a ZLink listener and a ZLink
 *     connecter (pairing by routing id, LANE_REJECTED, HANDSHAKE_TIMEOUT,
 *     nothing sent on lane 1, lane 1 input delivered, one lane's close ends
 *     the other), and checks that a bad lane count fails the handshake with
 *     READY_MALFORMED before any payload is written.
 *   - Records on the wire: a multipart record is one 8-byte-header frame per
 *     part (MORE on all but the last), byte-identical on tcp and ipc; a
 *     ROUTER puts no routing id on the wire; envelope look-alike parts (and
 *     the IDENTITY flag) stay payload; data right behind a peer's READY is
 *     buffered until the attach; unknown READY properties are skipped.
 * The codec's lane-count function and READY checks are unit-tested in
 * test_zmp_codec.c (test_type_matrix, test_ready_lane_rules); here the same
 * rules are checked on the wire.
 */
#include "zlink.h"
#include "zltest.h"

#define ZR_MAX_UNREAD (1u << 16) /* what the ZLink side may send one raw peer */
#include "zltest_rawzmp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAXF 64

/* ------------------------------------------- raw peers (zltest_rawzmp.h) */

/* A raw peer (heap) connected to ep. */
static raw_t *raw_open(const char *ep)
{
    raw_t *r = malloc(sizeof *r);
    ZT_CHECK(r != NULL);
    raw_connect(r, ep);
    return r;
}

static void raw_free(raw_t *r)
{
    raw_close(r);
    free(r);
}

static size_t raw_data_frames(const raw_t *r)
{
    rframe_t f[MAXF];
    size_t n = raw_frames(r, f, MAXF), k = 0;
    for (size_t i = 0; i < n; i++)
        if ((f[i].flags & 0x1E) == 0)
            k++;
    return k;
}

/* A raw listener (tcp 127.0.0.1:0 or an ipc path). */
typedef struct rlisten {
    int fd;
    char ep[128];
} rlisten_t;

static void rlisten_open(rlisten_t *l, const char *ipc_ep)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (ipc_ep != NULL) {
        snprintf(l->ep, sizeof l->ep, "%s", ipc_ep);
        unlink(ipc_ep + 6);
        len = ep_sockaddr(l->ep, &ss);
    } else {
        len = ep_sockaddr("tcp://127.0.0.1:0", &ss);
    }
    l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ZT_CHECK(l->fd >= 0);
    ZT_EQ_INT(bind(l->fd, (struct sockaddr *)&ss, len), 0);
    ZT_EQ_INT(listen(l->fd, 16), 0);
    if (ipc_ep == NULL) {
        struct sockaddr_in sin;
        socklen_t sl = sizeof sin;
        ZT_EQ_INT(getsockname(l->fd, (struct sockaddr *)&sin, &sl), 0);
        snprintf(l->ep, sizeof l->ep, "tcp://127.0.0.1:%d", ntohs(sin.sin_port));
    }
}

static void rlisten_close(rlisten_t *l)
{
    raw_unlisten(l->fd, l->ep);
}

/* Accepts one connection within ms, or returns NULL. */
static raw_t *rlisten_accept(rlisten_t *l, int ms)
{
    raw_t *r = malloc(sizeof *r);
    ZT_CHECK(r != NULL);
    if (!raw_accept_within(l->fd, r, ms)) {
        free(r);
        return NULL;
    }
    return r;
}

/* ------------------------------------------------------ READY parsing */

typedef struct ready {
    int nprops;
    char name[8][32];
    uint32_t vlen[8];
    uint8_t val[8][64];
} ready_t;

/* Parses a READY frame body (04 + properties) with its own reader. */
static void parse_ready(const rframe_t *f, ready_t *out)
{
    memset(out, 0, sizeof *out);
    ZT_EQ_INT(f->flags, 0x02);
    ZT_EQ_INT(f->kind, 0);
    ZT_CHECK(f->size >= 1);
    ZT_EQ_INT(f->body[0], 0x04);
    size_t at = 1;
    while (at < f->size) {
        ZT_CHECK(out->nprops < 8);
        uint8_t nl = f->body[at++];
        ZT_CHECK(nl >= 1 && nl < 32 && at + nl + 4 <= f->size);
        memcpy(out->name[out->nprops], f->body + at, nl);
        at += nl;
        const uint8_t *v = f->body + at;
        uint32_t vl = ((uint32_t)v[0] << 24) | ((uint32_t)v[1] << 16) | ((uint32_t)v[2] << 8) | v[3];
        at += 4;
        ZT_CHECK(vl <= 64 && at + vl <= f->size);
        out->vlen[out->nprops] = vl;
        memcpy(out->val[out->nprops], f->body + at, vl);
        at += vl;
        out->nprops++;
    }
    ZT_EQ_INT(at, f->size);
}

static void prop_is(const ready_t *r, int i, const char *name, const void *val, uint32_t vlen)
{
    ZT_CHECK(i < r->nprops);
    ZT_EQ_STR(r->name[i], name);
    ZT_EQ_INT(r->vlen[i], vlen);
    ZT_EQ_MEM(r->val[i], val, vlen);
}

/* A DEALER / ROUTER READY: exactly Socket-Type, Routing-Id,
 * Zlink-Lane-Count, Zlink-Lane, Zlink-Weight, in this order. */
static void check_dr_ready(const rframe_t *f, int type, const char *rid, int count, int lane)
{
    ready_t r;
    parse_ready(f, &r);
    ZT_EQ_INT(r.nprops, 5);
    prop_is(&r, 0, "Socket-Type", type_name(type), (uint32_t)strlen(type_name(type)));
    prop_is(&r, 1, "Routing-Id", rid, (uint32_t)strlen(rid));
    uint8_t c = (uint8_t)count, l = (uint8_t)lane;
    prop_is(&r, 2, "Zlink-Lane-Count", &c, 1);
    prop_is(&r, 3, "Zlink-Lane", &l, 1);
    const uint8_t wt[4] = {0, 0, 0, 100};
    prop_is(&r, 4, "Zlink-Weight", wt, 4);
}

static void check_hello(const rframe_t *f, int type, const char *rid)
{
    ZT_EQ_INT(f->flags, 0x02);
    ZT_EQ_INT(f->size, 4 + strlen(rid));
    ZT_EQ_INT(f->body[0], 0x01);
    ZT_EQ_INT((f->body[1] << 8) | f->body[2], type);
    ZT_EQ_INT(f->body[3], strlen(rid));
    ZT_EQ_MEM(f->body + 4, rid, strlen(rid));
}

/* -------------------------------------------------- ZLink side helpers */

static void set_int(void *s, int opt, int v)
{
    ZT_EQ_INT(zlink_setsockopt(s, opt, &v, sizeof v), ZLINK_CONFIG_OK);
}

static void *sock_new(void *ctx, int type, const char *rid)
{
    void *s = zlink_socket(ctx, type);
    ZT_CHECK(s != NULL);
    set_int(s, ZLINK_RCVTIMEO, T(5000));
    set_int(s, ZLINK_SNDTIMEO, T(5000));
    set_int(s, ZLINK_LINGER, 0);
    set_int(s, ZLINK_RECONNECT_IVL, 20);
    if (rid != NULL)
        ZT_EQ_INT(zlink_set_routing_id(s, rid, strlen(rid)), ZLINK_CONFIG_OK);
    return s;
}

static void sock_close(void *s)
{
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
}

static void bind_ep(void *s, const char *want, char *ep, size_t cap)
{
    ZT_EQ_INT(zlink_bind(s, want), ZLINK_BIND_OK);
    size_t len = cap;
    ZT_EQ_INT(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &len), ZLINK_CONFIG_OK);
}

static bool rid_is(const zlink_routing_id_t *r, const char *s)
{
    return r->size == strlen(s) && memcmp(r->data, s, r->size) == 0;
}

static void rid_set(zlink_routing_id_t *r, const char *s)
{
    memset(r, 0, sizeof *r);
    r->size = (uint8_t)strlen(s);
    memcpy(r->data, s, r->size);
}

static zlink_submit_result_t send_str(void *s, int type, const char *rid, const char *text,
                                      int flags)
{
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, strlen(text)), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m), text, strlen(text));
    if (type == ZLINK_ROUTER) {
        zlink_routing_id_t r;
        rid_set(&r, rid);
        return zlink_send_rid(s, &r, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
    }
    return zlink_send(s, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
}

/* A ROUTER sends once it has a route to rid (bounded retry of a
 * non-blocking submit while the handshake completes). */
static void router_send_when_routable(void *r, const char *rid, const char *text)
{
    int64_t end = zt_now_ms() + T(5000);
    for (;;) {
        zlink_submit_result_t rc = send_str(r, ZLINK_ROUTER, rid, text, ZLINK_DONTWAIT);
        if (rc == ZLINK_SUBMIT_OK)
            return;
        ZT_EQ_INT(rc, ZLINK_SUBMIT_NOT_CONNECTED);
        if (zt_now_ms() > end)
            ZT_FAIL("no route to '%s'", rid);
        sched_yield();
    }
}

/* Receives one single-part record and checks text (and the sender's id for
 * a ROUTER). */
static void expect_str(void *s, int type, const char *from, const char *text)
{
    zlink_msg_t m[4];
    size_t count = 0;
    zlink_recv_result_t rc;
    const zlink_routing_id_t *rid = NULL;
    if (type == ZLINK_ROUTER) {
        zlink_reply_token_t tok;
        rc = zlink_router_recv(s, &rid, &tok, m, 4, &count, 0);
    } else {
        rc = zlink_recv(s, NULL, m, 4, &count, 0);
    }
    ZT_EQ_INT(rc, ZLINK_RECV_OK);
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(zlink_msg_size(&m[0]), strlen(text));
    ZT_EQ_MEM(zlink_msg_data(&m[0]), text, strlen(text));
    if (type == ZLINK_ROUTER) {
        ZT_CHECK(rid != NULL);
        if (!rid_is(rid, from))
            ZT_FAIL("'%s' came from a %u-byte id, not '%s'", text, rid->size, from);
    }
    zlink_multipart_close(m, count);
}

/* --------------------------------------------------- connection counts */

/* Established TCP connections whose local port is `port` (the accepted
 * side of connections to a listener on 127.0.0.1:port). */
static int count_tcp_established(int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    ZT_CHECK(f != NULL);
    char line[512];
    int n = 0;
    ZT_CHECK(fgets(line, sizeof line, f) != NULL); /* header */
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned lport = 0, st = 0;
        char local[64], remote[64];
        if (sscanf(line, " %*d: %63s %63s %x", local, remote, &st) != 3)
            continue;
        char *colon = strchr(local, ':');
        if (colon == NULL || sscanf(colon + 1, "%x", &lport) != 1)
            continue;
        if ((int)lport == port && st == 0x01)
            n++;
    }
    fclose(f);
    return n;
}

/* Connected unix stream sockets bound to path (accepted connections). */
static int count_unix_connected(const char *path)
{
    FILE *f = fopen("/proc/net/unix", "r");
    ZT_CHECK(f != NULL);
    char line[512];
    int n = 0;
    ZT_CHECK(fgets(line, sizeof line, f) != NULL);
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned st = 0, type = 0;
        char p[256] = "";
        /* Num RefCount Protocol Flags Type St Inode Path */
        int k = sscanf(line, "%*s %*s %*s %*s %x %x %*s %255s", &type, &st, p);
        if (k == 3 && type == 1 && st == 0x03 && strcmp(p, path) == 0)
            n++;
    }
    fclose(f);
    return n;
}

static int count_connections(const char *bound_ep)
{
    if (strncmp(bound_ep, "ipc://", 6) == 0)
        return count_unix_connected(bound_ep + 6);
    return count_tcp_established(tcp_port_of(bound_ep));
}

/* =============================================== counts on tcp and ipc */

static const char *tr_bind(const char *tr, char *buf, size_t cap, const char *tag)
{
    if (strcmp(tr, "ipc") == 0)
        return zt_ipc_endpoint(buf, cap, tag);
    return "tcp://127.0.0.1:0";
}

/* binder (type bt) and connecter (type ct) exchange records both ways;
 * then the kernel shows `want` connections to the bound endpoint. */
static void count_case(const char *tr, int bt, int ct, int want)
{
    printf("# %s binds, %s connects, %s: %d connection(s)\n", type_name(bt), type_name(ct), tr,
           want);
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    char buf[128], ep[128];
    void *b = sock_new(ctx, bt, "binder");
    void *c = sock_new(ctx, ct, "connecter");
    bind_ep(b, tr_bind(tr, buf, sizeof buf, "count"), ep, sizeof ep);
    /* A ROUTER connecter names its peer with CONNECT_ROUTING_ID. */
    const char *peer = "binder";
    if (ct == ZLINK_ROUTER) {
        peer = "alias-of-binder";
        ZT_EQ_INT(zlink_setsockopt(c, ZLINK_CONNECT_ROUTING_ID, peer, strlen(peer)),
                  ZLINK_CONFIG_OK);
    }
    ZT_EQ_INT(zlink_connect(c, ep), ZLINK_CONNECT_OK);
    if (ct == ZLINK_ROUTER)
        router_send_when_routable(c, peer, "c->b");
    else
        ZT_EQ_INT(send_str(c, ct, NULL, "c->b", 0), ZLINK_SUBMIT_OK);
    expect_str(b, bt, "connecter", "c->b");
    ZT_EQ_INT(send_str(b, bt, "connecter", "b->c", 0), ZLINK_SUBMIT_OK);
    expect_str(c, ct, peer, "b->c");
    ZT_EQ_INT(count_connections(ep), want);
    /* A second round trip: still the same connections, none added. */
    ZT_EQ_INT(send_str(c, ct, peer, "c->b 2", 0), ZLINK_SUBMIT_OK);
    expect_str(b, bt, "connecter", "c->b 2");
    ZT_EQ_INT(count_connections(ep), want);
    sock_close(c);
    sock_close(b);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static void counts_tcp(void)
{
    count_case("tcp", ZLINK_ROUTER, ZLINK_ROUTER, 2);
    count_case("tcp", ZLINK_ROUTER, ZLINK_DEALER, 1);
    count_case("tcp", ZLINK_DEALER, ZLINK_ROUTER, 1);
    count_case("tcp", ZLINK_DEALER, ZLINK_DEALER, 1);
    count_case("tcp", ZLINK_PAIR, ZLINK_PAIR, 1);
}

static void counts_ipc(void)
{
    count_case("ipc", ZLINK_ROUTER, ZLINK_ROUTER, 2);
    count_case("ipc", ZLINK_ROUTER, ZLINK_DEALER, 1);
    count_case("ipc", ZLINK_DEALER, ZLINK_ROUTER, 1);
    count_case("ipc", ZLINK_DEALER, ZLINK_DEALER, 1);
    count_case("ipc", ZLINK_PAIR, ZLINK_PAIR, 1);
}

/* ================================================================ proxy */

#define PROXY_MAX 16

typedef struct pconn {
    int cfd, ufd;      /* client side, upstream side */
    bool c_eof, u_eof; /* that side closed (EOF or error) */
    bool closed;       /* the proxy closed both fds */
    uint8_t head[1024]; /* first bytes from the client (HELLO + READY) */
    size_t head_n;
} pconn_t;

typedef struct proxy {
    int lfd;
    char ep[128];       /* where clients connect */
    char up[128];       /* where the proxy connects */
    int wake[2];
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pconn_t c[PROXY_MAX];
    int n;
    bool hold;          /* record EOFs without closing the other side; accept nothing */
    int kill;           /* index to close, or -1 */
    bool stop;
} proxy_t;

static void px_close_conn(pconn_t *c)
{
    if (!c->closed) {
        close(c->cfd);
        close(c->ufd);
        c->closed = true;
    }
}

static void *px_main(void *arg)
{
    proxy_t *p = arg;
    for (;;) {
        struct pollfd fds[2 + 2 * PROXY_MAX];
        int who[2 + 2 * PROXY_MAX];
        int nf = 0;
        pthread_mutex_lock(&p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        if (p->kill >= 0) {
            px_close_conn(&p->c[p->kill]);
            p->kill = -1;
        }
        for (int i = 0; i < p->n; i++)
            if (!p->hold && (p->c[i].c_eof || p->c[i].u_eof))
                px_close_conn(&p->c[i]);
        fds[nf].fd = p->wake[0];
        fds[nf].events = POLLIN;
        who[nf++] = -1;
        if (!p->hold && p->n < PROXY_MAX) {
            fds[nf].fd = p->lfd;
            fds[nf].events = POLLIN;
            who[nf++] = -2;
        }
        for (int i = 0; i < p->n; i++) {
            pconn_t *c = &p->c[i];
            if (c->closed)
                continue;
            if (!c->c_eof) {
                fds[nf].fd = c->cfd;
                fds[nf].events = POLLIN;
                who[nf++] = 2 * i;
            }
            if (!c->u_eof) {
                fds[nf].fd = c->ufd;
                fds[nf].events = POLLIN;
                who[nf++] = 2 * i + 1;
            }
        }
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);

        if (poll(fds, (nfds_t)nf, -1) < 0)
            continue;
        for (int k = 0; k < nf; k++) {
            if (fds[k].revents == 0)
                continue;
            if (who[k] == -1) {
                char b[64];
                (void)!read(p->wake[0], b, sizeof b);
            } else if (who[k] == -2) {
                int cfd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
                if (cfd < 0)
                    continue;
                struct sockaddr_storage ss;
                socklen_t len = ep_sockaddr(p->up, &ss);
                int ufd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (ufd < 0 || connect(ufd, (struct sockaddr *)&ss, len) != 0) {
                    close(cfd);
                    if (ufd >= 0)
                        close(ufd);
                    continue;
                }
                pthread_mutex_lock(&p->mu);
                pconn_t *c = &p->c[p->n++];
                memset(c, 0, sizeof *c);
                c->cfd = cfd;
                c->ufd = ufd;
                pthread_mutex_unlock(&p->mu);
            } else {
                int i = who[k] / 2;
                bool from_client = (who[k] % 2) == 0;
                pconn_t *c = &p->c[i];
                uint8_t buf[65536];
                ssize_t r = recv(from_client ? c->cfd : c->ufd, buf, sizeof buf, 0);
                pthread_mutex_lock(&p->mu);
                if (r > 0) {
                    if (from_client && c->head_n < sizeof c->head) {
                        size_t room = sizeof c->head - c->head_n;
                        size_t k2 = (size_t)r < room ? (size_t)r : room;
                        memcpy(c->head + c->head_n, buf, k2);
                        c->head_n += k2;
                    }
                    int to = from_client ? c->ufd : c->cfd;
                    pthread_mutex_unlock(&p->mu);
                    size_t at = 0;
                    while (at < (size_t)r) {
                        ssize_t w = send(to, buf + at, (size_t)r - at, MSG_NOSIGNAL);
                        if (w <= 0)
                            break; /* the other side is gone: its EOF comes by poll */
                        at += (size_t)w;
                    }
                    continue;
                }
                if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                    if (from_client)
                        c->c_eof = true;
                    else
                        c->u_eof = true;
                }
                pthread_mutex_unlock(&p->mu);
            }
        }
    }
    return NULL;
}

static void px_wake(proxy_t *p)
{
    (void)!write(p->wake[1], "x", 1);
}

static void proxy_start(proxy_t *p, const char *up, const char *ipc_ep)
{
    memset(p, 0, sizeof *p);
    p->kill = -1;
    snprintf(p->up, sizeof p->up, "%s", up);
    rlisten_t l;
    rlisten_open(&l, ipc_ep);
    p->lfd = l.fd;
    snprintf(p->ep, sizeof p->ep, "%s", l.ep);
    ZT_EQ_INT(pipe2(p->wake, O_CLOEXEC), 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    ZT_EQ_INT(pthread_create(&p->th, NULL, px_main, p), 0);
}

static void proxy_stop(proxy_t *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_mutex_unlock(&p->mu);
    px_wake(p);
    pthread_join(p->th, NULL);
    for (int i = 0; i < p->n; i++)
        px_close_conn(&p->c[i]);
    close(p->lfd);
    close(p->wake[0]);
    close(p->wake[1]);
    if (strncmp(p->ep, "ipc://", 6) == 0)
        unlink(p->ep + 6);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

typedef bool (*px_pred_t)(proxy_t *p, int arg);

/* Waits (on the proxy's condition variable) until pred holds. */
static void proxy_wait(proxy_t *p, px_pred_t pred, int arg, const char *what)
{
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    int64_t ns = dl.tv_nsec + (int64_t)T(5000) * 1000000;
    dl.tv_sec += ns / 1000000000;
    dl.tv_nsec = ns % 1000000000;
    pthread_mutex_lock(&p->mu);
    while (!pred(p, arg)) {
        if (pthread_cond_timedwait(&p->cv, &p->mu, &dl) == ETIMEDOUT && !pred(p, arg)) {
            pthread_mutex_unlock(&p->mu);
            ZT_FAIL("proxy: still not %s after %d ms", what, T(5000));
        }
    }
    pthread_mutex_unlock(&p->mu);
}

static bool px_accepted(proxy_t *p, int n)
{
    return p->n >= n;
}

/* Both ZLink sides closed their end of connection i. */
static bool px_both_closed(proxy_t *p, int i)
{
    return i < p->n && p->c[i].c_eof && p->c[i].u_eof;
}

/* The Zlink-Lane and Routing-Id the client announced on connection i. */
static void px_client_lane(proxy_t *p, int i, int *lane, char *rid, size_t cap)
{
    uint8_t head[sizeof p->c[i].head];
    raw_t r = {.fd = -1, .in = head, .cap = sizeof head};
    pthread_mutex_lock(&p->mu);
    memcpy(head, p->c[i].head, p->c[i].head_n);
    r.n = p->c[i].head_n;
    pthread_mutex_unlock(&p->mu);
    rframe_t f[MAXF];
    ZT_CHECK(raw_frames(&r, f, MAXF) >= 2);
    ready_t rd;
    parse_ready(&f[1], &rd);
    *lane = -1;
    rid[0] = '\0';
    for (int k = 0; k < rd.nprops; k++) {
        if (strcmp(rd.name[k], "Zlink-Lane") == 0 && rd.vlen[k] == 1)
            *lane = rd.val[k][0];
        if (strcmp(rd.name[k], "Routing-Id") == 0 && rd.vlen[k] < cap) {
            memcpy(rid, rd.val[k], rd.vlen[k]);
            rid[rd.vlen[k]] = '\0';
        }
    }
}

/* ========================================================= killing lanes */

static void check_lane_pair(proxy_t *p, int first)
{
    int lane;
    char rid[64];
    px_client_lane(p, first, &lane, rid, sizeof rid);
    ZT_EQ_INT(lane, 0);
    ZT_EQ_STR(rid, "B");
    px_client_lane(p, first + 1, &lane, rid, sizeof rid);
    ZT_EQ_INT(lane, 1);
    ZT_EQ_STR(rid, "B");
}

/* ROUTER B connects to ROUTER A through the proxy; the proxy closes lane
 * `victim` (0 or 1) and then forwards no close: A and B must each close the
 * other lane themselves. Then B reconnects both lanes and records flow. */
static void kill_lane_case(const char *tr, int victim)
{
    printf("# %s: kill lane %d\n", tr, victim);
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    char buf[128], pbuf[128], ep[128];
    void *a = sock_new(ctx, ZLINK_ROUTER, "A");
    void *b = sock_new(ctx, ZLINK_ROUTER, "B");
    bind_ep(a, tr_bind(tr, buf, sizeof buf, "lanes-a"), ep, sizeof ep);
    proxy_t px;
    proxy_start(&px, ep,
                strcmp(tr, "ipc") == 0 ? zt_ipc_endpoint(pbuf, sizeof pbuf, "lanes-px") : NULL);
    ZT_EQ_INT(zlink_setsockopt(b, ZLINK_CONNECT_ROUTING_ID, "peer-a", 6), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_connect(b, px.ep), ZLINK_CONNECT_OK);

    router_send_when_routable(b, "peer-a", "b->a");
    expect_str(a, ZLINK_ROUTER, "B", "b->a");
    ZT_EQ_INT(send_str(a, ZLINK_ROUTER, "B", "a->b", 0), ZLINK_SUBMIT_OK);
    expect_str(b, ZLINK_ROUTER, "peer-a", "a->b");
    proxy_wait(&px, px_accepted, 2, "2 connections");
    pthread_mutex_lock(&px.mu);
    ZT_EQ_INT(px.n, 2);
    pthread_mutex_unlock(&px.mu);
    check_lane_pair(&px, 0);
    ZT_EQ_INT(count_connections(ep), 2); /* A's side: the proxy's two */

    /* Kill one lane; hold every other close (and accept nothing). */
    pthread_mutex_lock(&px.mu);
    px.hold = true;
    px.kill = victim;
    pthread_mutex_unlock(&px.mu);
    px_wake(&px);
    proxy_wait(&px, px_both_closed, 1 - victim, "both ends of the surviving lane closed");
    /* Both logical connections ended: no route either way (B's reconnect
     * waits in the proxy's backlog). */
    ZT_EQ_INT(send_str(a, ZLINK_ROUTER, "B", "lost", ZLINK_DONTWAIT),
              ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(send_str(b, ZLINK_ROUTER, "peer-a", "lost", ZLINK_DONTWAIT),
              ZLINK_SUBMIT_NOT_CONNECTED);

    /* Let the proxy work again: B reconnects both lanes from the start. */
    pthread_mutex_lock(&px.mu);
    px.hold = false;
    pthread_mutex_unlock(&px.mu);
    px_wake(&px);
    router_send_when_routable(b, "peer-a", "b->a again");
    expect_str(a, ZLINK_ROUTER, "B", "b->a again");
    ZT_EQ_INT(send_str(a, ZLINK_ROUTER, "B", "a->b again", 0), ZLINK_SUBMIT_OK);
    expect_str(b, ZLINK_ROUTER, "peer-a", "a->b again");
    pthread_mutex_lock(&px.mu);
    ZT_EQ_INT(px.n, 4);
    pthread_mutex_unlock(&px.mu);
    check_lane_pair(&px, 2);
    ZT_EQ_INT(count_connections(ep), 2);

    sock_close(b);
    sock_close(a);
    proxy_stop(&px);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static void killing_one_lane_closes_both_tcp(void)
{
    kill_lane_case("tcp", 1);
    kill_lane_case("tcp", 0);
}

static void killing_one_lane_closes_both_ipc(void)
{
    kill_lane_case("ipc", 1);
    kill_lane_case("ipc", 0);
}

/* ================================================ the READY on the wire */

static int expected_lanes(int a, int b)
{
    return a == ZLINK_ROUTER && b == ZLINK_ROUTER ? 2 : 1;
}

/* A ZLink DEALER/ROUTER accepts a raw DEALER/ROUTER: its READY (sent after
 * ours) carries the lane count of the pair and echoes lane 0. */
static void accepting_side_ready(void)
{
    const int types[2] = {ZLINK_DEALER, ZLINK_ROUTER};
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            int zt = types[i], rt = types[j], want = expected_lanes(zt, rt);
            printf("# ZLink %s accepts raw %s: count %d\n", type_name(zt), type_name(rt), want);
            void *ctx = zlink_ctx_new();
            char ep[128];
            void *z = sock_new(ctx, zt, "zl");
            bind_ep(z, "tcp://127.0.0.1:0", ep, sizeof ep);
            raw_t *r = raw_open(ep);
            wire_t w = {.n = 0};
            w_hello(&w, rt, "raw");
            raw_send(r, &w);
            /* The accepting side sends HELLO at once, READY only after ours. */
            raw_wait_frames(r, 1);
            rframe_t f[MAXF];
            ZT_EQ_INT(raw_frames(r, f, MAXF), 1);
            check_hello(&f[0], zt, "zl");
            ZT_CHECK(!raw_fill(r, 50)); /* nothing more before our READY */
            w.n = 0;
            w_ready_dr(&w, rt, "raw", want, 0);
            raw_send(r, &w);
            raw_wait_frames(r, 2);
            raw_frames(r, f, MAXF);
            check_dr_ready(&f[1], zt, "zl", want, 0);
            raw_free(r);
            sock_close(z);
            ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
            w_free(&w);
        }
    }
}

/* A ZLink DEALER/ROUTER connects to a raw listener: after the raw HELLO it
 * sends READY with the same count as when it accepts (direction does not
 * matter), lane 0. A DEALER opens no second connection; a ROUTER talking to
 * a ROUTER opens lane 1 with the same Routing-Id. */
static void connecting_side_ready(void)
{
    const int types[2] = {ZLINK_DEALER, ZLINK_ROUTER};
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            int zt = types[i], rt = types[j], want = expected_lanes(zt, rt);
            printf("# ZLink %s connects to raw %s: count %d\n", type_name(zt), type_name(rt),
                   want);
            void *ctx = zlink_ctx_new();
            rlisten_t l;
            rlisten_open(&l, NULL);
            void *z = sock_new(ctx, zt, "zl");
            ZT_EQ_INT(zlink_connect(z, l.ep), ZLINK_CONNECT_OK);
            raw_t *r = rlisten_accept(&l, T(5000));
            ZT_CHECK(r != NULL);
            raw_wait_frames(r, 1);
            rframe_t f[MAXF];
            ZT_EQ_INT(raw_frames(r, f, MAXF), 1); /* HELLO only: READY needs our HELLO */
            check_hello(&f[0], zt, "zl");
            ZT_CHECK(!raw_fill(r, 50));
            wire_t w = {.n = 0};
            w_hello(&w, rt, "raw");
            raw_send(r, &w);
            raw_wait_frames(r, 2);
            raw_frames(r, f, MAXF);
            check_dr_ready(&f[1], zt, "zl", want, 0);
            w.n = 0;
            w_ready_dr(&w, rt, "raw", want, 0);
            raw_send(r, &w);
            raw_t *l1 = rlisten_accept(&l, want == 2 ? T(5000) : 100);
            if (want == 1) {
                ZT_CHECK(l1 == NULL); /* one lane: no second connection */
            } else {
                ZT_CHECK(l1 != NULL);
                raw_wait_frames(l1, 1);
                rframe_t g[MAXF];
                raw_frames(l1, g, MAXF);
                check_hello(&g[0], zt, "zl");
                w.n = 0;
                w_hello(&w, rt, "raw");
                raw_send(l1, &w);
                raw_wait_frames(l1, 2);
                raw_frames(l1, g, MAXF);
                check_dr_ready(&g[1], zt, "zl", 2, 1);
                raw_free(l1);
            }
            raw_free(r);
            sock_close(z);
            rlisten_close(&l);
            ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
            w_free(&w);
        }
    }
}

/* PAIR, PUB and SUB send an empty READY (no lane property). With
 * ZMP_METADATA they add Socket-Type and Zlink-Max-Message-Size; a DEALER
 * adds Zlink-Max-Message-Size after its five properties. */
static void ready_without_lanes_and_metadata(void)
{
    const int types[3][2] = {{ZLINK_PAIR, ZLINK_PAIR}, {ZLINK_PUB, ZLINK_SUB},
                             {ZLINK_SUB, ZLINK_PUB}};
    for (int meta = 0; meta < 2; meta++) {
        for (int i = 0; i < 3; i++) {
            int zt = types[i][0];
            printf("# %s READY, metadata %s\n", type_name(zt), meta ? "on" : "off");
            void *ctx = zlink_ctx_new();
            char ep[128];
            void *z = sock_new(ctx, zt, NULL);
            set_int(z, ZLINK_ZMP_METADATA, meta);
            int64_t max = 123456;
            ZT_EQ_INT(zlink_setsockopt(z, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
            bind_ep(z, "tcp://127.0.0.1:0", ep, sizeof ep);
            raw_t *r = raw_open(ep);
            raw_wait_frames(r, 2); /* HELLO + READY without waiting for us */
            rframe_t f[MAXF];
            raw_frames(r, f, MAXF);
            check_hello(&f[0], zt, "");
            ready_t rd;
            parse_ready(&f[1], &rd);
            if (!meta) {
                ZT_EQ_INT(rd.nprops, 0);
                ZT_EQ_INT(f[1].size, 1);
            } else {
                ZT_EQ_INT(rd.nprops, 2);
                prop_is(&rd, 0, "Socket-Type", type_name(zt), (uint32_t)strlen(type_name(zt)));
                const uint8_t v[8] = {0, 0, 0, 0, 0, 0x01, 0xE2, 0x40};
                prop_is(&rd, 1, "Zlink-Max-Message-Size", v, 8);
            }
            raw_free(r);
            sock_close(z);
            ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
        }
    }
    printf("# DEALER READY, metadata on\n");
    void *ctx = zlink_ctx_new();
    rlisten_t l;
    rlisten_open(&l, NULL);
    void *z = sock_new(ctx, ZLINK_DEALER, "zl");
    set_int(z, ZLINK_ZMP_METADATA, 1);
    ZT_EQ_INT(zlink_connect(z, l.ep), ZLINK_CONNECT_OK);
    raw_t *r = rlisten_accept(&l, T(5000));
    ZT_CHECK(r != NULL);
    wire_t w = {.n = 0};
    w_hello(&w, ZLINK_ROUTER, "raw");
    raw_send(r, &w);
    raw_wait_frames(r, 2);
    rframe_t f[MAXF];
    raw_frames(r, f, MAXF);
    ready_t rd;
    parse_ready(&f[1], &rd);
    ZT_EQ_INT(rd.nprops, 6);
    prop_is(&rd, 0, "Socket-Type", "DEALER", 6);
    prop_is(&rd, 1, "Routing-Id", "zl", 2);
    const uint8_t zero8[8] = {0};
    prop_is(&rd, 5, "Zlink-Max-Message-Size", zero8, 8); /* unlimited */
    raw_free(r);
    sock_close(z);
    rlisten_close(&l);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    w_free(&w);
}

/* ================================ both lanes played by a raw ROUTER */

/* Raw lane `lane` of a ROUTER named rid to a ZLink ROUTER at ep. */
static raw_t *raw_lane(const char *ep, const char *rid, int lane)
{
    raw_t *r = raw_open(ep);
    wire_t w = {.n = 0};
    w_hello(&w, ZLINK_ROUTER, rid);
    w_ready_dr(&w, ZLINK_ROUTER, rid, 2, lane);
    raw_send(r, &w);
    w_free(&w);
    return r;
}

/* Against a ZLink ROUTER listener (HANDSHAKE_IVL 300 ms): a lane 1 with no
 * lane 0, or with another routing id, is refused (LANE_REJECTED); a lane 0
 * alone is attached to nothing and times out (HANDSHAKE_TIMEOUT); both
 * lanes attach: ZLink writes on lane 0 only, reads lane 1 too, and closing
 * lane 1 makes it close lane 0. */
static void listener_lane_pairing(void)
{
    void *ctx = zlink_ctx_new();
    char ep[128];
    void *z = sock_new(ctx, ZLINK_ROUTER, "zl");
    set_int(z, ZLINK_HANDSHAKE_IVL, 300);
    bind_ep(z, "tcp://127.0.0.1:0", ep, sizeof ep);

    printf("# lane 1 without a lane 0\n");
    raw_t *l1 = raw_lane(ep, "P", 1);
    raw_wait_closed(l1);
    ZT_EQ_INT(raw_error_code(l1), 0x08);
    raw_free(l1);

    printf("# lane 0 waits; a lane 1 of another id is refused; lane 0 times out\n");
    int64_t t0 = zt_now_ms();
    raw_t *l0 = raw_lane(ep, "P", 0);
    raw_wait_frames(l0, 2);
    rframe_t f[MAXF];
    raw_frames(l0, f, MAXF);
    check_dr_ready(&f[1], ZLINK_ROUTER, "zl", 2, 0);
    l1 = raw_lane(ep, "Q", 1);
    raw_wait_closed(l1);
    ZT_EQ_INT(raw_error_code(l1), 0x08);
    raw_free(l1);
    /* Nothing is attached while a lane is missing. */
    ZT_EQ_INT(send_str(z, ZLINK_ROUTER, "P", "early", ZLINK_DONTWAIT),
              ZLINK_SUBMIT_NOT_CONNECTED);
    raw_wait_closed(l0);
    ZT_EQ_INT(raw_error_code(l0), 0x07);
    ZT_CHECK(zt_now_ms() - t0 >= 250);
    raw_free(l0);

    printf("# both lanes\n");
    l0 = raw_lane(ep, "P", 0);
    raw_wait_frames(l0, 2);
    l1 = raw_lane(ep, "P", 1);
    raw_wait_frames(l1, 2);
    raw_frames(l1, f, MAXF);
    check_dr_ready(&f[1], ZLINK_ROUTER, "zl", 2, 1);
    router_send_when_routable(z, "P", "to-P");
    raw_wait_frames(l0, 3);
    raw_frames(l0, f, MAXF);
    ZT_EQ_INT(f[2].flags, 0x00);
    ZT_EQ_INT(f[2].size, 4);
    ZT_EQ_MEM(f[2].body, "to-P", 4);
    wire_t w = {.n = 0};
    w_data(&w, false, "via lane 0");
    raw_send(l0, &w);
    expect_str(z, ZLINK_ROUTER, "P", "via lane 0");

    printf("# a request from P on lane 0: the reply leaves on lane 1\n");
    w.n = 0;
    w_frame(&w, 0, 1, 7, "ask", 3);
    raw_send(l0, &w);
    zlink_msg_t m[2];
    size_t count = 0;
    const zlink_routing_id_t *src = NULL;
    zlink_reply_token_t tok = 0;
    ZT_EQ_INT(zlink_router_recv(z, &src, &tok, m, 2, &count, 0), ZLINK_RECV_OK);
    ZT_CHECK(tok != 0);
    ZT_CHECK(rid_is(src, "P"));
    zlink_routing_id_t rp;
    rid_set(&rp, "P");
    zlink_multipart_close(m, count);
    ZT_EQ_INT(zlink_msg_init_size(&m[0], 3), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m[0]), "ans", 3);
    ZT_EQ_INT(zlink_reply(z, &rp, tok, m, 1), ZLINK_SUBMIT_OK);
    raw_wait_frames(l1, 3);
    raw_frames(l1, f, MAXF);
    ZT_EQ_INT(f[2].kind, 2);
    ZT_EQ_INT(f[2].seq, 7);
    ZT_EQ_INT(f[2].size, 3);
    ZT_EQ_MEM(f[2].body, "ans", 3);

    printf("# our request to P on lane 0; P's reply on lane 1 completes it\n");
    ZT_EQ_INT(zlink_msg_init_size(&m[0], 1), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m[0]), "q", 1);
    zlink_completion_id_t id = 0;
    int uctx = 0;
    ZT_EQ_INT(zlink_request(z, &rp, m, 1, 0, 0, &uctx, &id), ZLINK_SUBMIT_OK);
    raw_wait_frames(l0, 4);
    raw_frames(l0, f, MAXF);
    ZT_EQ_INT(f[3].kind, 1);
    uint64_t seq = f[3].seq;
    ZT_CHECK(seq != 0);
    w.n = 0;
    w_frame(&w, 0, 2, seq, "re", 2);
    raw_send(l1, &w);
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    ZT_EQ_INT(zlink_completion_recv(z, &c, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(c.kind, ZLINK_COMPLETION_REQUEST);
    ZT_EQ_INT(c.completion_id, id);
    ZT_CHECK(c.user_context == &uctx);
    ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
    ZT_EQ_INT(c.reply_part_count, 1);
    ZT_EQ_MEM(zlink_msg_data(&c.reply_parts[0]), "re", 2);
    zlink_completion_close(&c);

    printf("# FLOWSTATE goes on lane 1\n");
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(z, ZLINK_RECEIVE_FLOW_PAUSED),
              ZLINK_CONFIG_OK);
    raw_wait_frames(l1, 4);
    raw_frames(l1, f, MAXF);
    ZT_EQ_INT(f[3].flags & ZR_F_CONTROL, ZR_F_CONTROL);
    ZT_CHECK(f[3].size >= 9 && memcmp(f[3].body, "FLOWSTATE", 9) == 0);
    ZT_CHECK(!raw_fill(l0, 50));
    ZT_EQ_INT(raw_frames(l0, f, MAXF), 4); /* nothing more on lane 0 */

    printf("# DATA on lane 1 is a protocol error: both lanes close\n");
    w.n = 0;
    w_data(&w, false, "via lane 1");
    raw_send(l1, &w);
    raw_wait_closed(l1);
    ZT_EQ_INT(raw_error_code(l1), 0x06);
    raw_wait_closed(l0);
    raw_free(l1);
    raw_free(l0);
    ZT_EQ_INT(send_str(z, ZLINK_ROUTER, "P", "gone", ZLINK_DONTWAIT),
              ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(zlink_router_recv(z, &src, &tok, m, 2, &count, ZLINK_DONTWAIT),
              ZLINK_RECV_NO_DATA); /* the refused DATA was not delivered */

    sock_close(z);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    w_free(&w);
}

/* A ZLink ROUTER connecter against a raw ROUTER listener: lane 1 follows
 * lane 0's handshake with the same Routing-Id; data flows on lane 0 both
 * ways; closing lane 1 makes ZLink close lane 0, then it reconnects
 * from lane 0. */
static void connecter_lanes(void)
{
    void *ctx = zlink_ctx_new();
    rlisten_t l;
    rlisten_open(&l, NULL);
    void *z = sock_new(ctx, ZLINK_ROUTER, "zl");
    ZT_EQ_INT(zlink_connect(z, l.ep), ZLINK_CONNECT_OK);
    raw_t *l0 = rlisten_accept(&l, T(5000));
    ZT_CHECK(l0 != NULL);
    wire_t w = {.n = 0};
    w_hello(&w, ZLINK_ROUTER, "raw");
    raw_send(l0, &w);
    raw_wait_frames(l0, 2);
    rframe_t f[MAXF];
    raw_frames(l0, f, MAXF);
    check_dr_ready(&f[1], ZLINK_ROUTER, "zl", 2, 0);
    /* No lane 1 before lane 0 is validated. */
    raw_t *none = rlisten_accept(&l, 50);
    ZT_CHECK(none == NULL);
    w.n = 0;
    w_ready_dr(&w, ZLINK_ROUTER, "raw", 2, 0);
    raw_send(l0, &w);
    raw_t *l1 = rlisten_accept(&l, T(5000));
    ZT_CHECK(l1 != NULL);
    raw_wait_frames(l1, 1);
    raw_frames(l1, f, MAXF);
    check_hello(&f[0], ZLINK_ROUTER, "zl");
    w.n = 0;
    w_hello(&w, ZLINK_ROUTER, "raw");
    raw_send(l1, &w);
    raw_wait_frames(l1, 2);
    raw_frames(l1, f, MAXF);
    check_dr_ready(&f[1], ZLINK_ROUTER, "zl", 2, 1);
    /* Nothing attached until lane 1 is validated too. */
    ZT_EQ_INT(send_str(z, ZLINK_ROUTER, "raw", "early", ZLINK_DONTWAIT),
              ZLINK_SUBMIT_NOT_CONNECTED);
    w.n = 0;
    w_ready_dr(&w, ZLINK_ROUTER, "raw", 2, 1);
    raw_send(l1, &w);
    router_send_when_routable(z, "raw", "to-raw");
    raw_wait_frames(l0, 3);
    raw_frames(l0, f, MAXF);
    ZT_EQ_INT(f[2].size, 6);
    ZT_EQ_MEM(f[2].body, "to-raw", 6);
    w.n = 0;
    w_data(&w, false, "from lane 0");
    raw_send(l0, &w);
    expect_str(z, ZLINK_ROUTER, "raw", "from lane 0");
    ZT_EQ_INT(raw_data_frames(l1), 0); /* DATA never leaves on lane 1 */

    raw_free(l1);
    raw_wait_closed(l0);
    raw_free(l0);
    /* Reconnect: a new lane 0 (READY lane 0 after our HELLO). */
    l0 = rlisten_accept(&l, T(5000));
    ZT_CHECK(l0 != NULL);
    w.n = 0;
    w_hello(&w, ZLINK_ROUTER, "raw");
    raw_send(l0, &w);
    raw_wait_frames(l0, 2);
    raw_frames(l0, f, MAXF);
    check_dr_ready(&f[1], ZLINK_ROUTER, "zl", 2, 0);
    raw_free(l0);
    sock_close(z);
    rlisten_close(&l);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    w_free(&w);
}

/* ============================ bad count: failure before any payload */

typedef struct sender {
    void *s;
    int rc;
} sender_t;

static void *blocking_send(void *arg)
{
    sender_t *a = arg;
    zlink_msg_t m;
    zlink_msg_init_size(&m, 7);
    memcpy(zlink_msg_data(&m), "payload", 7);
    a->rc = zlink_send(a->s, &m, 1, 0, NULL, NULL);
    return NULL;
}

/* A ZLink DEALER with a record waiting to be sent connects to a raw
 * ROUTER whose READY claims 2 lanes: ZLink answers ERROR READY_MALFORMED
 * and closes; no data frame ever reaches the wire and the raw peer's data
 * is not delivered. After the reconnect, with a right handshake, the
 * record is the first data frame. */
static void bad_count_fails_before_payload(void)
{
    void *ctx = zlink_ctx_new();
    rlisten_t l;
    rlisten_open(&l, NULL);
    void *z = sock_new(ctx, ZLINK_DEALER, "zl");
    set_int(z, ZLINK_SNDTIMEO, T(10000));
    ZT_EQ_INT(zlink_connect(z, l.ep), ZLINK_CONNECT_OK);
    sender_t a = {z, -1};
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, blocking_send, &a), 0);

    raw_t *r = rlisten_accept(&l, T(5000));
    ZT_CHECK(r != NULL);
    wire_t w = {.n = 0};
    w_hello(&w, ZLINK_ROUTER, "raw");
    raw_send(r, &w);
    raw_wait_frames(r, 2);       /* its HELLO and READY */
    ZT_CHECK(!raw_fill(r, 100)); /* and nothing else before our READY */
    w.n = 0;
    w_ready_dr(&w, ZLINK_ROUTER, "raw", 2, 0);
    w_data(&w, false, "from raw"); /* never delivered */
    raw_send(r, &w);
    raw_wait_closed(r);
    ZT_EQ_INT(raw_error_code(r), 0x05);
    ZT_EQ_INT(raw_data_frames(r), 0);
    raw_free(r);
    zlink_msg_t m;
    size_t count;
    ZT_EQ_INT(zlink_recv(z, NULL, &m, 1, &count, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);

    /* The reconnect, done right this time. */
    r = rlisten_accept(&l, T(5000));
    ZT_CHECK(r != NULL);
    w.n = 0;
    w_hello(&w, ZLINK_ROUTER, "raw");
    w_ready_dr(&w, ZLINK_ROUTER, "raw", 1, 0);
    raw_send(r, &w);
    raw_wait_frames(r, 3);
    rframe_t f[MAXF];
    raw_frames(r, f, MAXF);
    ZT_EQ_INT(f[2].flags, 0x00);
    ZT_EQ_INT(f[2].size, 7);
    ZT_EQ_MEM(f[2].body, "payload", 7);
    pthread_join(th, NULL);
    ZT_EQ_INT(a.rc, ZLINK_SUBMIT_OK);
    raw_free(r);
    sock_close(z);
    rlisten_close(&l);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    w_free(&w);
}

/* A ZLink ROUTER connecter (lane 0) gets a READY whose Zlink-Lane is 1, not
 * the 0 it announced: ERROR READY_MALFORMED, close, no lane 1 opened, and
 * no route ever existed. */
static void lane_not_echoed_fails(void)
{
    void *ctx = zlink_ctx_new();
    rlisten_t l;
    rlisten_open(&l, NULL);
    void *z = sock_new(ctx, ZLINK_ROUTER, "zl");
    set_int(z, ZLINK_RECONNECT_IVL, -1);
    ZT_EQ_INT(zlink_connect(z, l.ep), ZLINK_CONNECT_OK);
    raw_t *r = rlisten_accept(&l, T(5000));
    ZT_CHECK(r != NULL);
    wire_t w = {.n = 0};
    w_hello(&w, ZLINK_ROUTER, "raw");
    raw_send(r, &w);
    raw_wait_frames(r, 2);
    w.n = 0;
    w_ready_dr(&w, ZLINK_ROUTER, "raw", 2, 1);
    w_data(&w, false, "from raw");
    raw_send(r, &w);
    raw_wait_closed(r);
    ZT_EQ_INT(raw_error_code(r), 0x05);
    ZT_EQ_INT(raw_data_frames(r), 0);
    raw_free(r);
    ZT_CHECK(rlisten_accept(&l, 100) == NULL); /* no lane 1, no reconnect */
    ZT_EQ_INT(send_str(z, ZLINK_ROUTER, "raw", "x", ZLINK_DONTWAIT), ZLINK_SUBMIT_NOT_CONNECTED);
    zlink_msg_t m[2];
    size_t count;
    const zlink_routing_id_t *rid;
    zlink_reply_token_t tok;
    ZT_EQ_INT(zlink_router_recv(z, &rid, &tok, m, 2, &count, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    sock_close(z);
    rlisten_close(&l);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    w_free(&w);
}

/* ========================================== records on the wire */

struct send3 {
    void *s;
    zlink_msg_t *p;
    int rc;
};

static void *send3_main(void *arg)
{
    struct send3 *a = arg;
    a->rc = zlink_send(a->s, a->p, 3, 0, NULL, NULL);
    return NULL;
}


/* What a raw peer receives after ZLink's HELLO + READY (connection ep). */
static void wire_after_handshake(const char *ep, uint8_t *out, size_t *n)
{
    raw_t *r = raw_open(ep);
    wire_t w = {.n = 0};
    w_hello(&w, ZLINK_PAIR, "");
    w_hdr(&w, 0x02, 1);
    w_u8(&w, 0x04);
    raw_send(r, &w);
    raw_wait_frames(r, 5); /* HELLO, READY, 3 data frames */
    rframe_t f[MAXF];
    ZT_EQ_INT(raw_frames(r, f, MAXF), 5);
    size_t at = (size_t)(f[2].body - r->in) - 8;
    *n = r->n - at;
    memcpy(out, r->in + at, *n);
    raw_free(r);
    w_free(&w);
}

/* A 3-part record from a PAIR is exactly 3 data frames, MORE on all but the
 * last, kind 0, 8-byte headers, sizes excluding the header; the bytes are
 * the same on tcp and ipc. A ROUTER puts no routing id on the wire. A raw
 * DEALER's handshake with an unknown READY property, followed in the same
 * write by records whose parts look like an envelope (the first with the
 * IDENTITY flag), is accepted: the records are delivered unchanged, as
 * DATA (token 0). */
static void record_frames_on_the_wire(void)
{
    static const uint8_t want[] = {
        0x5A, 0x01, 0x01, 0x00, 0, 0, 0, 1, 'a',
        0x5A, 0x01, 0x01, 0x00, 0, 0, 0, 0,
        0x5A, 0x01, 0x00, 0x00, 0, 0, 0, 40,
        'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z',
        'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z',
        'z', 'z', 'z', 'z', 'z', 'z'};
    const char *trs[2] = {"tcp", "ipc"};
    for (int t = 0; t < 2; t++) {
        printf("# PAIR record on %s\n", trs[t]);
        void *ctx = zlink_ctx_new();
        char buf[128], ep[128];
        void *z = sock_new(ctx, ZLINK_PAIR, NULL);
        bind_ep(z, tr_bind(trs[t], buf, sizeof buf, "wire"), ep, sizeof ep);
        zlink_msg_t parts[3];
        ZT_EQ_INT(zlink_msg_init_size(&parts[0], 1), ZLINK_CONFIG_OK);
        memcpy(zlink_msg_data(&parts[0]), "a", 1);
        ZT_EQ_INT(zlink_msg_init(&parts[1]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_msg_init_size(&parts[2], 40), ZLINK_CONFIG_OK);
        memset(zlink_msg_data(&parts[2]), 'z', 40);
        uint8_t got[256];
        size_t n = 0;
        /* The PAIR's send waits for a peer: send from a helper thread. */
        struct send3 s3 = {z, parts, -1};
        pthread_t th;
        ZT_EQ_INT(pthread_create(&th, NULL, send3_main, &s3), 0);
        wire_after_handshake(ep, got, &n);
        pthread_join(th, NULL);
        ZT_EQ_INT(s3.rc, ZLINK_SUBMIT_OK);
        ZT_EQ_INT(n, sizeof want);
        ZT_EQ_MEM(got, want, sizeof want);
        sock_close(z);
        ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    }

    printf("# ROUTER <-> raw DEALER\n");
    void *ctx = zlink_ctx_new();
    char ep[128];
    void *z = sock_new(ctx, ZLINK_ROUTER, "zl");
    bind_ep(z, "tcp://127.0.0.1:0", ep, sizeof ep);
    raw_t *r = raw_open(ep);
    wire_t w = {.n = 0};
    w_hello(&w, ZLINK_DEALER, "raw");
    wire_t p = {.n = 0};
    w_prop(&p, "X-Future-Property", "v", 1); /* unknown: skipped */
    w_prop(&p, "Socket-Type", "DEALER", 6);
    w_prop(&p, "Routing-Id", "raw", 3);
    const uint8_t one = 1, zero = 0;
    w_prop(&p, "Zlink-Lane-Count", &one, 1);
    w_prop(&p, "Zlink-Lane", &zero, 1);
    w_hdr(&w, 0x02, (uint32_t)(1 + p.n));
    w_u8(&w, 0x04);
    w_bytes(&w, p.b, p.n);
    /* Right behind READY, before ZLink's READY: accepted and buffered. */
    w_hdr(&w, 0x05, 3); /* IDENTITY | MORE */
    w_bytes(&w, "raw", 3);
    w_data(&w, true, "");
    w_hdr(&w, 0x01, 8);
    w_bytes(&w, "\0\0\0\0\0\0\0\x07", 8);
    w_data(&w, false, "payload");
    w_data(&w, false, "second");
    raw_send(r, &w);
    zlink_msg_t m[8];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 99;
    ZT_EQ_INT(zlink_router_recv(z, &rid, &tok, m, 8, &count, 0), ZLINK_RECV_OK);
    ZT_CHECK(rid_is(rid, "raw"));
    ZT_EQ_U64(tok, 0);
    ZT_EQ_INT(count, 4);
    ZT_EQ_INT(zlink_msg_size(&m[0]), 3);
    ZT_EQ_MEM(zlink_msg_data(&m[0]), "raw", 3);
    ZT_EQ_INT(zlink_msg_size(&m[1]), 0);
    ZT_EQ_INT(zlink_msg_size(&m[2]), 8);
    ZT_EQ_MEM(zlink_msg_data(&m[2]), "\0\0\0\0\0\0\0\x07", 8);
    ZT_EQ_INT(zlink_msg_size(&m[3]), 7);
    ZT_EQ_MEM(zlink_msg_data(&m[3]), "payload", 7);
    zlink_multipart_close(m, count);
    expect_str(z, ZLINK_ROUTER, "raw", "second");
    /* ROUTER -> DEALER: the parts only, no routing id frame. */
    zlink_routing_id_t to;
    rid_set(&to, "raw");
    ZT_EQ_INT(zlink_msg_init_size(&m[0], 2), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m[0]), "r1", 2);
    ZT_EQ_INT(zlink_msg_init_size(&m[1], 2), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m[1]), "r2", 2);
    ZT_EQ_INT(zlink_send_rid(z, &to, m, 2, 0, NULL, NULL), ZLINK_SUBMIT_OK);
    raw_wait_frames(r, 4);
    ZT_CHECK(!raw_fill(r, 50));
    rframe_t f[MAXF];
    ZT_EQ_INT(raw_frames(r, f, MAXF), 4); /* HELLO, READY, 2 data frames */
    ZT_EQ_INT(f[2].flags, 0x01);
    ZT_EQ_INT(f[2].size, 2);
    ZT_EQ_MEM(f[2].body, "r1", 2);
    ZT_EQ_INT(f[3].flags, 0x00);
    ZT_EQ_MEM(f[3].body, "r2", 2);
    raw_free(r);
    sock_close(z);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
    w_free(&p);
    w_free(&w);
}

static const zt_case_t cases[] = {
    ZT_CASE(counts_tcp),
    ZT_CASE(counts_ipc),
    ZT_CASE(killing_one_lane_closes_both_tcp),
    ZT_CASE(killing_one_lane_closes_both_ipc),
    ZT_CASE(accepting_side_ready),
    ZT_CASE(connecting_side_ready),
    ZT_CASE(ready_without_lanes_and_metadata),
    ZT_CASE(listener_lane_pairing),
    ZT_CASE(connecter_lanes),
    ZT_CASE(bad_count_fails_before_payload),
    ZT_CASE(lane_not_echoed_fails),
    ZT_CASE(record_frames_on_the_wire),
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
