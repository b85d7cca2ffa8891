/*
 * test_stream.c — core-contract §8 "STREAM" (RAW and PACKET modes; the
 * PACKET cases are the stream_packet_* at the end) through the public
 * API (zlink.h) only, against plain POSIX TCP sockets in this process and
 * against a STREAM socket in a second process. doc/contract-tests/
 * dealer_router_pubsub_stream.md maps every item to a function here or
 * says why it is elsewhere or later.
 *
 * STREAM is tcp only (inproc is NOT_SUPPORTED). Raw bytes have no record
 * boundaries: a receive returns what one read produced, so a case
 * accumulates bytes per routing id until it has what it expects. With
 * ZLINK_STREAM_NOTIFY=1 a connection's arrival and departure are
 * zero-length records from its id, in order with its data. No sleeps: POSIX
 * sockets get SO_RCVTIMEO / poll() timeouts, ZLink calls their RCVTIMEO.
 */
#include "zltest_zlink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

/* A RAW STREAM socket (NOTIFY as given), LINGER 0, scaled timeouts. */
static void *stream_new(void *ctx, int notify)
{
    void *s = zlt_sock(ctx, ZLINK_STREAM);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    zlt_set_int(s, ZLINK_STREAM_NOTIFY, notify);
    return s;
}

/* The tcp port s is bound to, from ZLINK_LAST_ENDPOINT. */
static int stream_port(void *s)
{
    char ep[256];
    zlt_last_endpoint(s, ep, sizeof ep);
    return atoi(ep + strlen("tcp://127.0.0.1:"));
}

/* Binds s on 127.0.0.1, ephemeral port; returns the port. */
static int stream_bind(void *s)
{
    char ep[256];
    zlt_bind(s, "tcp", ep, sizeof ep); /* checks the port */
    return atoi(ep + 16);
}

static void fd_timeouts(int fd)
{
    struct timeval tv = {ZT_MS(2000) / 1000, (ZT_MS(2000) % 1000) * 1000};
    ZT_EQ_INT(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    ZT_EQ_INT(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
}

/* A plain TCP client connected to 127.0.0.1:port. */
static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ZT_CHECK(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ZT_EQ_INT(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    fd_timeouts(fd);
    return fd;
}

/* A plain TCP listener on 127.0.0.1, ephemeral port (*port). */
static int raw_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ZT_CHECK(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ZT_EQ_INT(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ZT_EQ_INT(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    ZT_EQ_INT(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* accept() with a timeout (poll). */
static int raw_accept(int lfd)
{
    struct pollfd p = {lfd, POLLIN, 0};
    ZT_EQ_INT(poll(&p, 1, ZT_MS(3000)), 1);
    int fd = accept(lfd, NULL, NULL);
    ZT_CHECK(fd >= 0);
    fd_timeouts(fd);
    return fd;
}

static void raw_send(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0)
            ZT_FAIL("send: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

/* Reads exactly n bytes (fails on EOF or timeout). */
static void raw_recv_exact(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0)
            ZT_FAIL("recv: %s", r == 0 ? "EOF" : strerror(errno));
        p += r;
        n -= (size_t)r;
    }
}

static void raw_expect(int fd, const char *text)
{
    char buf[256];
    size_t n = strlen(text);
    ZT_CHECK(n < sizeof buf);
    raw_recv_exact(fd, buf, n);
    ZT_EQ_MEM(buf, text, n);
}

/* The peer closed: recv reports EOF (within the timeout). */
static void raw_expect_eof(int fd)
{
    char c;
    ssize_t r = recv(fd, &c, 1, 0);
    if (r != 0)
        ZT_FAIL("expected EOF, got %zd (%s)", r, r < 0 ? strerror(errno) : "data");
}

/* One STREAM receive: a copy of the routing id and the bytes (<= cap). */
static zlink_recv_result_t st_recv(void *s, zlink_routing_id_t *rid, void *buf, size_t cap,
                                   size_t *len, int flags)
{
    zlink_msg_t part[1];
    size_t count = 0;
    const zlink_routing_id_t *view = NULL;
    zlink_recv_result_t rc = zlink_recv(s, &view, part, 1, &count, (zlink_recv_flags_t)flags);
    if (rc != ZLINK_RECV_OK)
        return rc;
    ZT_EQ_INT(count, 1);
    ZT_CHECK(view != NULL);
    ZT_EQ_INT(view->size, 4);
    *rid = *view;
    size_t n = zlink_msg_size(&part[0]);
    ZT_CHECK(n <= cap);
    if (n > 0)
        memcpy(buf, zlink_msg_data(&part[0]), n);
    *len = n;
    zlink_multipart_close(part, count);
    return rc;
}

/* Receives a connect or disconnect notice: a zero-length record. */
static void st_expect_notice(void *s, zlink_routing_id_t *rid)
{
    char buf[64];
    size_t len = 99;
    ZT_EQ_INT(st_recv(s, rid, buf, sizeof buf, &len, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(len, 0);
}

/* Receives records from `rid` until n bytes have arrived (a record from
 * another id or a notice fails), into buf. */
static void st_recv_bytes(void *s, const zlink_routing_id_t *rid, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        zlink_routing_id_t from;
        size_t len = 0;
        ZT_EQ_INT(st_recv(s, &from, (char *)buf + got, n - got, &len, 0), ZLINK_RECV_OK);
        ZT_CHECK(zlt_rid_eq(&from, rid));
        ZT_CHECK(len > 0);
        got += len;
    }
}

static void st_expect_bytes(void *s, const zlink_routing_id_t *rid, const char *text)
{
    char buf[256];
    size_t n = strlen(text);
    st_recv_bytes(s, rid, buf, n);
    ZT_EQ_MEM(buf, text, n);
}

static zlink_submit_result_t st_send_str(void *s, const zlink_routing_id_t *rid,
                                         const char *text)
{
    return zlt_send_to(s, rid, text, strlen(text), 0);
}

/* A bound STREAM (NOTIFY 1) with one raw client whose connect notice has
 * been received: *rid names the client. */
static void *stream_with_client(void *ctx, int *fd, zlink_routing_id_t *rid)
{
    void *s = stream_new(ctx, 1);
    int port = stream_bind(s);
    *fd = raw_connect(port);
    st_expect_notice(s, rid);
    return s;
}

static unsigned char pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 31u + seed * 17u + (i >> 8)) & 0xFF);
}

/* ------------------------------------------------------------------ cases */

/* STREAM 1: with RECV_MODE UNSPECIFIED (the default) bind and connect are
 * INVALID_ARGUMENT/EINVAL; RAW makes them work. */
static void stream_01_unspecified_mode(void)
{
    printf("# covers STREAM/1\n");
    void *ctx = zlt_ctx_new();
    void *s = zlt_socket_linger0(ctx, ZLINK_STREAM);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_STREAM_OPT_RECV_MODE), ZLINK_STREAM_RECV_UNSPECIFIED);
    ZT_EQ_INT(zlink_bind(s, "tcp://127.0.0.1:0"), ZLINK_BIND_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_connect(s, "tcp://127.0.0.1:9"), ZLINK_CONNECT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* Explicitly UNSPECIFIED is the same. */
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_UNSPECIFIED);
    ZT_EQ_INT(zlink_bind(s, "tcp://127.0.0.1:0"), ZLINK_BIND_INVALID_ARGUMENT);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_STREAM_OPT_RECV_MODE), ZLINK_STREAM_RECV_RAW);
    ZT_EQ_INT(zlink_bind(s, "tcp://127.0.0.1:0"), ZLINK_BIND_OK);
    zlt_finish(ctx, s);
}

/* STREAM 2: RAW: raw receive only (the packet receive is NOT_SUPPORTED);
 * out-of-range modes are EINVAL; the calls of other socket types are
 * NOT_SUPPORTED on a STREAM; inproc is NOT_SUPPORTED; set_routing_id is
 * EINVAL. */
static void stream_02_raw_only(void)
{
    printf("# covers STREAM/2, §1 (S set_routing_id)\n");
    void *ctx = zlt_ctx_new();
    void *s = zlt_socket_linger0(ctx, ZLINK_STREAM);
    int v;
    const int bad[] = {3, -1, 100};
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_setsockopt(s, ZLINK_STREAM_OPT_RECV_MODE, &bad[i], sizeof(int)),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
    }
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    {
        /* The packet family belongs to PACKET mode. */
        zlink_msg_t h, b;
        ZT_EQ_INT(zlink_msg_init(&h), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
        const zlink_routing_id_t *view = NULL;
        ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, &b, ZLINK_DONTWAIT),
                  ZLINK_RECV_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        ZT_CHECK(view == NULL);
        zlink_msg_close(&h);
        zlink_msg_close(&b);
    }
    /* inproc is not a STREAM transport. */
    ZT_EQ_INT(zlink_bind(s, "inproc://stream-x"), ZLINK_BIND_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_connect(s, "inproc://stream-x"), ZLINK_CONNECT_NOT_SUPPORTED);
    /* A STREAM names its peers itself. */
    ZT_EQ_INT(zlink_set_routing_id(s, "abcd", 4), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* Other receive and send families. */
    zlink_msg_t parts[2];
    size_t count = 0, tlen = 0;
    const zlink_routing_id_t *rid = NULL;
    char topic[8];
    ZT_EQ_INT(zlink_router_recv(s, &rid, NULL, parts, 2, &count, ZLINK_DONTWAIT),
              ZLINK_RECV_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_subscribe(s, NULL, topic, sizeof topic, &tlen, parts, 2, &count,
                              ZLINK_DONTWAIT),
              ZLINK_RECV_NOT_SUPPORTED);
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(s, &m, 1, 0, NULL, NULL), ZLINK_SUBMIT_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    /* The mode option belongs to STREAM only. */
    void *d = zlt_socket(ctx, ZLINK_DEALER);
    v = ZLINK_STREAM_RECV_RAW;
    ZT_CHECK(zlink_setsockopt(d, ZLINK_STREAM_OPT_RECV_MODE, &v, sizeof v) != ZLINK_CONFIG_OK);
    ZT_CHECK(zlink_setsockopt(d, ZLINK_STREAM_NOTIFY, &v, sizeof v) != ZLINK_CONFIG_OK);
    zlt_finish(ctx, d, s);
}

/* STREAM 4: a failed bind does not freeze the mode; after a successful
 * bind or connect, changing it is INVALID_STATE/EBUSY. */
static void stream_04_mode_frozen_after_bind(void)
{
    printf("# covers STREAM/4\n");
    void *ctx = zlt_ctx_new();
    void *s = zlt_socket_linger0(ctx, ZLINK_STREAM);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    ZT_CHECK(zlink_bind(s, "tcp://127.0.0.1:notaport") != ZLINK_BIND_OK);
    ZT_CHECK(zlink_bind(s, "inproc://nope") != ZLINK_BIND_OK);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_UNSPECIFIED); /* not frozen */
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    stream_bind(s);
    int v = ZLINK_STREAM_RECV_UNSPECIFIED;
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_STREAM_OPT_RECV_MODE, &v, sizeof v),
              ZLINK_CONFIG_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    v = ZLINK_STREAM_RECV_RAW;
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_STREAM_OPT_RECV_MODE, &v, sizeof v),
              ZLINK_CONFIG_INVALID_STATE);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_STREAM_OPT_RECV_MODE), ZLINK_STREAM_RECV_RAW);
    /* The same after a connect. */
    void *c = zlt_socket_linger0(ctx, ZLINK_STREAM);
    zlt_set_int(c, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    int lport;
    int lfd = raw_listen(&lport);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", lport);
    ZT_EQ_INT(zlink_connect(c, ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(zlink_setsockopt(c, ZLINK_STREAM_OPT_RECV_MODE, &v, sizeof v),
              ZLINK_CONFIG_INVALID_STATE);
    zlt_close(c);
    close(lfd);
    zlt_finish(ctx, s);
}

/* STREAM 6: NOTIFY 1: connect and disconnect arrive as zero-length records
 * from the peer's id, in order with its data. NOTIFY 0 (default): none. */
static void stream_06_notify(void)
{
    printf("# covers STREAM/6\n");
    void *ctx = zlt_ctx_new();
    int fd;
    zlink_routing_id_t rid, from;
    void *s = stream_with_client(ctx, &fd, &rid);
    raw_send(fd, "hello", 5);
    st_expect_bytes(s, &rid, "hello");
    raw_send(fd, "bye", 3);
    close(fd);
    st_expect_bytes(s, &rid, "bye"); /* data first ... */
    st_expect_notice(s, &from);      /* ... then the disconnect notice */
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    char buf[8];
    size_t len;
    ZT_EQ_INT(st_recv(s, &from, buf, sizeof buf, &len, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    zlt_close(s);

    /* NOTIFY 0 (the default): the first record is data; no notices. */
    void *q = zlt_socket(ctx, ZLINK_STREAM);
    ZT_EQ_INT(zlt_get_int(q, ZLINK_STREAM_NOTIFY), 0);
    zlt_set_int(q, ZLINK_LINGER, 0);
    zlt_set_int(q, ZLINK_RCVTIMEO, ZT_MS(2000));
    zlt_set_int(q, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    int port = stream_bind(q);
    fd = raw_connect(port);
    raw_send(fd, "x", 1);
    ZT_EQ_INT(st_recv(q, &rid, buf, sizeof buf, &len, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(len, 1);
    ZT_EQ_INT(buf[0], 'x');
    close(fd);
    /* Once the id is unknown (the close was processed), nothing is queued. */
    int64_t end = zt_now_ms() + ZT_MS(3000);
    while (zlt_send_to(q, &rid, "?", 1, ZLINK_DONTWAIT) == ZLINK_SUBMIT_OK) {
        ZT_CHECK(zt_now_ms() < end);
        sched_yield();
    }
    ZT_EQ_INT(st_recv(q, &from, buf, sizeof buf, &len, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    zlt_finish(ctx, q);
}

/* STREAM 8: a zero-length send closes that peer after the data queued
 * before it: the client reads it all, then EOF; the id is gone (NOT_
 * CONNECTED) and the disconnect notice arrives. */
static void stream_08_zero_length_send_closes(void)
{
    printf("# covers STREAM/8\n");
    void *ctx = zlt_ctx_new();
    int fd;
    zlink_routing_id_t rid, from;
    void *s = stream_with_client(ctx, &fd, &rid);
    raw_send(fd, "hi", 2);
    st_expect_bytes(s, &rid, "hi");
    static unsigned char big[200000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = pattern(i, 8);
    ZT_EQ_INT(st_send_str(s, &rid, "bye-1,"), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlt_send_to(s, &rid, big, sizeof big, 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(st_send_str(s, &rid, "bye-2"), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlt_send_to(s, &rid, "", 0, 0), ZLINK_SUBMIT_OK);
    /* Gone as a route at once. */
    ZT_EQ_INT(st_send_str(s, &rid, "late"), ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
    raw_expect(fd, "bye-1,");
    static unsigned char got[sizeof big];
    raw_recv_exact(fd, got, sizeof got);
    ZT_EQ_MEM(got, big, sizeof big);
    raw_expect(fd, "bye-2");
    raw_expect_eof(fd);
    st_expect_notice(s, &from);
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 9: the part is consumed (empty, reusable) on success and on every
 * failure: bad part count, bad id size, unknown id. */
static void stream_09_parts_consumed(void)
{
    printf("# covers STREAM/9\n");
    void *ctx = zlt_ctx_new();
    int fd;
    zlink_routing_id_t rid;
    void *s = stream_with_client(ctx, &fd, &rid);
    zlink_msg_t m[2];
    /* Success. */
    ZT_EQ_INT(zlink_msg_init_size(&m[0], 3), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m[0]), "abc", 3);
    ZT_EQ_INT(zlink_send_rid(s, &rid, m, 1, 0, NULL, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
    raw_expect(fd, "abc");
    /* Two parts: INVALID_ARGUMENT, both consumed. */
    ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&m[0], 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&m[1], 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send_rid(s, &rid, m, 2, 0, NULL, NULL), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
    ZT_EQ_INT(zlink_msg_size(&m[1]), 0);
    zlink_multipart_close(m, 2);
    /* Wrong id size. */
    zlink_routing_id_t five = rid;
    five.size = 5;
    ZT_EQ_INT(zlt_send_to(s, &five, "x", 1, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
    /* Unknown id. */
    zlink_routing_id_t other = rid;
    other.data[3] ^= 0x5A;
    ZT_EQ_INT(zlt_send_to(s, &other, "x", 1, 0), ZLINK_SUBMIT_NOT_CONNECTED);
    /* The client got only the successful send. */
    raw_send(fd, "ping", 4);
    st_expect_bytes(s, &rid, "ping");
    ZT_EQ_INT(st_send_str(s, &rid, "pong"), ZLINK_SUBMIT_OK);
    raw_expect(fd, "pong");
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 10 (and 11's immediate half): an admitted send, NONE or
 * DONTWAIT, writes 0 to completion_id_out. */
static void stream_10_none_id_zero(void)
{
    printf("# covers STREAM/10, STREAM/11 (immediate success)\n");
    void *ctx = zlt_ctx_new();
    int fd;
    zlink_routing_id_t rid;
    void *s = stream_with_client(ctx, &fd, &rid);
    for (int flags = 0; flags <= ZLINK_DONTWAIT; flags++) {
        zlink_completion_id_t id = 0xABCDEF;
        zlink_msg_t m;
        ZT_EQ_INT(zlink_msg_init_size(&m, 2), ZLINK_CONFIG_OK);
        memcpy(zlink_msg_data(&m), flags ? "dw" : "nw", 2);
        ZT_EQ_INT(zlink_send_rid(s, &rid, &m, 1, (zlink_send_flags_t)flags, NULL, &id),
                  ZLINK_SUBMIT_OK);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
        raw_expect(fd, flags ? "dw" : "nw");
    }
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 13: an id with no connection is NOT_CONNECTED/EHOSTUNREACH, also
 * once its peer has gone. */
static void stream_13_no_connection(void)
{
    printf("# covers STREAM/13\n");
    void *ctx = zlt_ctx_new();
    void *s = stream_new(ctx, 1);
    stream_bind(s);
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    rid.size = 4;
    memcpy(rid.data, "\x00\x00\x00\x01", 4);
    zlink_completion_id_t id = 5;
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send_rid(s, &rid, &m, 1, 0, NULL, &id), ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
    ZT_EQ_U64(id, 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_send_to(s, &rid, "", 0, 0), ZLINK_SUBMIT_NOT_CONNECTED); /* close: same */
    zlt_close(s);
    /* A peer that left. */
    int fd;
    zlink_routing_id_t from;
    s = stream_with_client(ctx, &fd, &rid);
    close(fd);
    st_expect_notice(s, &from);
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    ZT_EQ_INT(st_send_str(s, &rid, "gone"), ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
    zlt_finish(ctx, s);
}

/* STREAM 14: a received part is the caller's: it outlives later receives
 * and the socket. */
static void stream_14_receive_ownership(void)
{
    printf("# covers STREAM/14\n");
    void *ctx = zlt_ctx_new();
    int fd;
    zlink_routing_id_t rid;
    void *s = stream_with_client(ctx, &fd, &rid);
    raw_send(fd, "first", 5);
    zlink_msg_t a[1], b[1];
    size_t na = 0, nb = 0;
    const zlink_routing_id_t *view = NULL;
    /* Wait until exactly "first" is in one record (it was one write). */
    ZT_EQ_INT(zlink_recv(s, &view, a, 1, &na, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(na, 1);
    ZT_EQ_INT(zlink_msg_size(&a[0]), 5);
    raw_send(fd, "second", 6);
    ZT_EQ_INT(zlink_recv(s, &view, b, 1, &nb, 0), ZLINK_RECV_OK);
    ZT_EQ_MEM(zlink_msg_data(&a[0]), "first", 5);
    close(fd);
    zlt_close(s);
    ZT_EQ_MEM(zlink_msg_data(&a[0]), "first", 5);
    ZT_CHECK(zlink_msg_size(&b[0]) >= 1);
    ZT_EQ_MEM(zlink_msg_data(&b[0]), "second", zlink_msg_size(&b[0]));
    zlink_multipart_close(a, na);
    zlink_multipart_close(b, nb);
    zlt_ctx_term(ctx);
}

/* STREAM 16: nothing queued: DONTWAIT NO_DATA/EAGAIN at once, NONE after
 * RCVTIMEO; outputs untouched. */
static void stream_16_no_data(void)
{
    printf("# covers STREAM/16\n");
    void *ctx = zlt_ctx_new();
    int fd;
    zlink_routing_id_t rid;
    void *s = stream_with_client(ctx, &fd, &rid);
    zlink_msg_t part[1];
    size_t count = 3;
    const zlink_routing_id_t *view = (const zlink_routing_id_t *)(uintptr_t)0x8;
    ZT_EQ_INT(zlink_recv(s, &view, part, 1, &count, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    ZT_EQ_INT(count, 3);
    ZT_CHECK(view == (const zlink_routing_id_t *)(uintptr_t)0x8);
    zlt_set_int(s, ZLINK_RCVTIMEO, 40);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_recv(s, &view, part, 1, &count, 0), ZLINK_RECV_NO_DATA);
    int64_t waited = zt_now_ms() - t0;
    ZT_CHECK(waited >= 40);
    ZT_CHECK(waited < ZT_MS(1000));
    ZT_EQ_INT(count, 3);
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 17: the routing id view names the record just received, stays
 * the same across other calls (sends) and follows the next receive. */
static void stream_17_rid_lifetime(void)
{
    printf("# covers STREAM/17\n");
    void *ctx = zlt_ctx_new();
    void *s = stream_new(ctx, 1);
    int port = stream_bind(s);
    int fd1 = raw_connect(port);
    zlink_routing_id_t r1, r2;
    st_expect_notice(s, &r1);
    int fd2 = raw_connect(port);
    st_expect_notice(s, &r2);
    ZT_CHECK(!zlt_rid_eq(&r1, &r2)); /* one id per connection */
    raw_send(fd1, "a", 1);
    zlink_msg_t part[1];
    size_t count = 0;
    const zlink_routing_id_t *view = NULL;
    ZT_EQ_INT(zlink_recv(s, &view, part, 1, &count, 0), ZLINK_RECV_OK);
    zlink_multipart_close(part, count);
    ZT_CHECK(view != NULL && zlt_rid_eq(view, &r1));
    ZT_EQ_INT(st_send_str(s, &r2, "to-2"), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(st_send_str(s, &r1, "to-1"), ZLINK_SUBMIT_OK);
    ZT_CHECK(zlt_rid_eq(view, &r1)); /* sends leave it alone */
    raw_expect(fd2, "to-2");
    raw_expect(fd1, "to-1");
    raw_send(fd2, "b", 1);
    const zlink_routing_id_t *view2 = NULL;
    ZT_EQ_INT(zlink_recv(s, &view2, part, 1, &count, 0), ZLINK_RECV_OK);
    zlink_multipart_close(part, count);
    ZT_CHECK(view2 != NULL && zlt_rid_eq(view2, &r2));
    close(fd1);
    close(fd2);
    zlt_finish(ctx, s);
}

/* STREAM 21: per routing id, bytes arrive in order and never mix with
 * another peer's, in both directions, with two peers writing at once. */
static void stream_21_per_rid_order(void)
{
    printf("# covers STREAM/21\n");
    enum { N = 256 * 1024, CHUNK = 997 };
    void *ctx = zlt_ctx_new();
    void *s = stream_new(ctx, 1);
    int port = stream_bind(s);
    int fd[2];
    zlink_routing_id_t rid[2];
    for (int k = 0; k < 2; k++) {
        fd[k] = raw_connect(port);
        st_expect_notice(s, &rid[k]);
    }
    static unsigned char want[2][N], got[2][N];
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < N; i++)
            want[k][i] = pattern(i, (unsigned)k + 1);
    /* Interleaved writes from both clients (both fit in kernel buffers
     * plus the socket's queues, so no reader is needed meanwhile). */
    size_t off[2] = {0, 0};
    while (off[0] < N || off[1] < N) {
        for (int k = 0; k < 2; k++) {
            size_t n = N - off[k] < CHUNK ? N - off[k] : CHUNK;
            if (n > 0) {
                raw_send(fd[k], want[k] + off[k], n);
                off[k] += n;
            }
        }
    }
    size_t have[2] = {0, 0};
    while (have[0] < N || have[1] < N) {
        zlink_routing_id_t from;
        size_t len = 0;
        static unsigned char buf[N];
        ZT_EQ_INT(st_recv(s, &from, buf, sizeof buf, &len, 0), ZLINK_RECV_OK);
        int k = zlt_rid_eq(&from, &rid[0]) ? 0 : 1;
        ZT_CHECK(zlt_rid_eq(&from, &rid[k]));
        ZT_CHECK(len > 0 && have[k] + len <= N);
        memcpy(got[k] + have[k], buf, len);
        have[k] += len;
    }
    ZT_EQ_MEM(got[0], want[0], N);
    ZT_EQ_MEM(got[1], want[1], N);
    /* The other direction: interleaved sends, each client reads its own. */
    for (size_t o = 0; o < N; o += 4096) {
        for (int k = 0; k < 2; k++)
            ZT_EQ_INT(zlt_send_to(s, &rid[k], want[1 - k] + o, 4096, 0), ZLINK_SUBMIT_OK);
    }
    for (int k = 0; k < 2; k++) {
        raw_recv_exact(fd[k], got[k], N);
        ZT_EQ_MEM(got[k], want[1 - k], N);
    }
    close(fd[0]);
    close(fd[1]);
    zlt_finish(ctx, s);
}

/* STREAM 22: at RCVHWM the STREAM stops reading the connection and drops
 * nothing. A raw client writes 2 MB (non-blocking, a small send buffer)
 * while the STREAM has a 16 KB RCVHWM and is not read: the writer stalls
 * well before 2 MB (poll for POLLOUT times out), showing that reads
 * stopped and the pressure reached the client. Then the STREAM is read
 * and every byte arrives, in order, followed by the disconnect notice. */
enum { S22_TOTAL = 2 * 1024 * 1024 };

struct writer22 {
    int fd;
    pthread_mutex_t lk;
    pthread_cond_t cv;
    size_t written;
    size_t stalled_at; /* 0 = not (yet) stalled */
    bool done;
    bool failed;
};

static void *writer22_main(void *arg)
{
    struct writer22 *w = arg;
    static unsigned char chunk[16384];
    size_t off = 0;
    while (off < S22_TOTAL) {
        size_t n = S22_TOTAL - off < sizeof chunk ? S22_TOTAL - off : sizeof chunk;
        for (size_t i = 0; i < n; i++)
            chunk[i] = pattern(off + i, 22);
        size_t sent = 0;
        while (sent < n) {
            ssize_t r = send(w->fd, chunk + sent, n - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (r > 0) {
                sent += (size_t)r;
                continue;
            }
            if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                w->failed = true;
                goto out;
            }
            struct pollfd p = {w->fd, POLLOUT, 0};
            int pr = poll(&p, 1, ZT_MS(300));
            if (pr == 0) {
                pthread_mutex_lock(&w->lk);
                if (w->stalled_at == 0)
                    w->stalled_at = off + sent;
                pthread_cond_broadcast(&w->cv);
                pthread_mutex_unlock(&w->lk);
                /* Keep waiting for room (the reader will come). */
                pr = poll(&p, 1, ZT_MS(10000));
                if (pr <= 0) {
                    w->failed = true;
                    goto out;
                }
            }
        }
        off += n;
        pthread_mutex_lock(&w->lk);
        w->written = off;
        pthread_mutex_unlock(&w->lk);
    }
out:
    pthread_mutex_lock(&w->lk);
    w->done = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lk);
    return NULL;
}

static void stream_22_rcvhwm_stops_reads_no_drop(void)
{
    printf("# covers STREAM/22\n");
    void *ctx = zlt_ctx_new();
    void *s = stream_new(ctx, 1);
    zlt_set_u64(s, ZLINK_RCVHWM, 16384);
    int port = stream_bind(s);
    struct writer22 w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.lk, NULL);
    pthread_cond_init(&w.cv, NULL);
    w.fd = raw_connect(port);
    int sndbuf = 32768;
    ZT_EQ_INT(setsockopt(w.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
    zlink_routing_id_t rid, from;
    st_expect_notice(s, &rid);
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, writer22_main, &w), 0);
    /* Wait (bounded) for the writer to stall or finish. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ZT_MS(5000) / 1000 + 1;
    pthread_mutex_lock(&w.lk);
    while (w.stalled_at == 0 && !w.done) {
        if (pthread_cond_timedwait(&w.cv, &w.lk, &until) != 0)
            break;
    }
    size_t stalled_at = w.stalled_at;
    bool done_early = w.done;
    pthread_mutex_unlock(&w.lk);
    printf("# writer stalled at %zu bytes\n", stalled_at);
    ZT_CHECK(!done_early);
    ZT_CHECK(stalled_at > 0 && stalled_at < S22_TOTAL);
    /* Read everything slowly enough: one record at a time, verifying. */
    static unsigned char buf[65536 * 4];
    size_t have = 0;
    while (have < S22_TOTAL) {
        size_t len = 0;
        ZT_EQ_INT(st_recv(s, &from, buf, sizeof buf, &len, 0), ZLINK_RECV_OK);
        ZT_CHECK(zlt_rid_eq(&from, &rid));
        ZT_CHECK(len > 0 && have + len <= S22_TOTAL);
        for (size_t i = 0; i < len; i++) {
            if (buf[i] != pattern(have + i, 22))
                ZT_FAIL("byte %zu: %02x, want %02x", have + i, buf[i], pattern(have + i, 22));
        }
        have += len;
    }
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    ZT_CHECK(!w.failed);
    ZT_EQ_INT(w.written, S22_TOTAL);
    close(w.fd);
    st_expect_notice(s, &from); /* after all the data */
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.lk);
    zlt_finish(ctx, s);
}

/* STREAM 23 (RAW): a client that writes and closes mid-stream, while the
 * STREAM has stopped reading at its RCVHWM: every byte written before the
 * close arrives, exactly, then the disconnect notice; nothing after it. */
static void stream_23_midstream_close(void)
{
    printf("# covers STREAM/23 (RAW: close mid-stream)\n");
    enum { N = 300000 };
    void *ctx = zlt_ctx_new();
    void *s = stream_new(ctx, 1);
    zlt_set_u64(s, ZLINK_RCVHWM, 8192);
    int port = stream_bind(s);
    int fd = raw_connect(port);
    zlink_routing_id_t rid, from;
    st_expect_notice(s, &rid);
    static unsigned char data[N], got[N];
    for (size_t i = 0; i < N; i++)
        data[i] = pattern(i, 23);
    raw_send(fd, data, N); /* fits in the kernel buffers */
    close(fd);             /* orderly close right after the last byte */
    st_recv_bytes(s, &rid, got, N);
    ZT_EQ_MEM(got, data, N);
    st_expect_notice(s, &from);
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    char b[8];
    size_t len;
    zlt_set_int(s, ZLINK_RCVTIMEO, 50);
    ZT_EQ_INT(st_recv(s, &from, b, sizeof b, &len, 0), ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(st_send_str(s, &rid, "x"), ZLINK_SUBMIT_NOT_CONNECTED);
    zlt_finish(ctx, s);
}

/* STREAM 28: peers are addressed by exactly 4-byte ids: any other size is
 * INVALID_ARGUMENT/EINVAL for data, for the zero-length close and for
 * zlink_disconnect_rid, and the peer stays connected; n != 1 is
 * INVALID_ARGUMENT too; an unknown 4-byte id is NOT_FOUND/ENOENT for
 * zlink_disconnect_rid. */
static void stream_28_rid_must_be_4_bytes(void)
{
    printf("# covers STREAM/28 (send_rid, close by rid, zlink_disconnect_rid: 4-byte ids)\n");
    void *ctx = zlt_ctx_new();
    int fd;
    zlink_routing_id_t rid;
    void *s = stream_with_client(ctx, &fd, &rid);
    const uint8_t sizes[] = {1, 3, 5, 16, 255};
    for (size_t i = 0; i < sizeof sizes; i++) {
        zlink_routing_id_t r = rid;
        r.size = sizes[i];
        ZT_EQ_INT(zlt_send_to(s, &r, "data", 4, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(zlt_send_to(s, &r, "", 0, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(zlink_disconnect_rid(s, &r), ZLINK_CONNECT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
    }
    zlink_routing_id_t empty;
    memset(&empty, 0, sizeof empty);
    ZT_EQ_INT(zlt_send_to(s, &empty, "", 0, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_disconnect_rid(s, &empty), ZLINK_CONNECT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_disconnect_rid(s, NULL), ZLINK_CONNECT_INVALID_ARGUMENT);
    zlink_routing_id_t other = rid;
    other.data[3] ^= 0x5A;
    ZT_EQ_INT(zlink_disconnect_rid(s, &other), ZLINK_CONNECT_NOT_FOUND);
    ZT_EQ_INT(zlink_errno(), ENOENT);
    zlink_msg_t m[2];
    ZT_EQ_INT(zlink_msg_init(&m[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send_rid(s, &rid, m, 0, 0, NULL, NULL), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_msg_init(&m[1]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send_rid(s, &rid, m, 2, 0, NULL, NULL), ZLINK_SUBMIT_INVALID_ARGUMENT);
    zlink_multipart_close(m, 2);
    /* Still connected: data flows both ways, then a 4-byte close works. */
    ZT_EQ_INT(st_send_str(s, &rid, "still"), ZLINK_SUBMIT_OK);
    raw_expect(fd, "still");
    raw_send(fd, "here", 4);
    st_expect_bytes(s, &rid, "here");
    ZT_EQ_INT(zlt_send_to(s, &rid, "", 0, 0), ZLINK_SUBMIT_OK);
    raw_expect_eof(fd);
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 28: zlink_disconnect_rid with a live raw client's id closes that
 * connection: the client's recv() returns 0 (EOF) within a bounded poll(),
 * the disconnect notice follows, the id is NOT_CONNECTED for sends and
 * NOT_FOUND for another disconnect; a second client is not affected. */
static void stream_28_disconnect_rid_closes_peer(void)
{
    printf("# covers STREAM/28 (zlink_disconnect_rid closes a live peer)\n");
    void *ctx = zlt_ctx_new();
    int fd, fd2;
    zlink_routing_id_t rid, rid2, from;
    void *s = stream_with_client(ctx, &fd, &rid);
    fd2 = raw_connect(stream_port(s));
    st_expect_notice(s, &rid2);
    raw_send(fd, "hi", 2);
    st_expect_bytes(s, &rid, "hi");
    ZT_EQ_INT(zlink_disconnect_rid(s, &rid), ZLINK_CONNECT_OK);
    struct pollfd p = {fd, POLLIN, 0};
    ZT_EQ_INT(poll(&p, 1, ZT_MS(3000)), 1);
    char c;
    ZT_EQ_INT(recv(fd, &c, 1, MSG_DONTWAIT), 0); /* EOF */
    st_expect_notice(s, &from);
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    ZT_EQ_INT(st_send_str(s, &rid, "late"), ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(zlink_disconnect_rid(s, &rid), ZLINK_CONNECT_NOT_FOUND);
    ZT_EQ_INT(zlink_errno(), ENOENT);
    /* The other client still talks both ways. */
    ZT_EQ_INT(st_send_str(s, &rid2, "to-2"), ZLINK_SUBMIT_OK);
    raw_expect(fd2, "to-2");
    raw_send(fd2, "from-2", 6);
    st_expect_bytes(s, &rid2, "from-2");
    close(fd);
    close(fd2);
    zlt_finish(ctx, s);
}

/* STREAM connects too: to a plain TCP listener; the connect notice names
 * the connection; bytes flow both ways; the server's close gives the
 * disconnect notice; the STREAM reconnects and the new connection gets a
 * new id. */
static void stream_connect_outbound(void)
{
    printf("# covers core-contract §1 (S connects once its mode is set), STREAM/6\n");
    void *ctx = zlt_ctx_new();
    int lport;
    int lfd = raw_listen(&lport);
    void *s = stream_new(ctx, 1);
    zlt_set_int(s, ZLINK_RECONNECT_IVL, 20);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", lport);
    ZT_EQ_INT(zlink_connect(s, ep), ZLINK_CONNECT_OK);
    int fd = raw_accept(lfd);
    zlink_routing_id_t rid, from;
    st_expect_notice(s, &rid);
    ZT_EQ_INT(rid.size, 4);
    ZT_EQ_INT(st_send_str(s, &rid, "hi server"), ZLINK_SUBMIT_OK);
    raw_expect(fd, "hi server");
    raw_send(fd, "hi stream", 9);
    st_expect_bytes(s, &rid, "hi stream");
    close(fd);
    st_expect_notice(s, &from);
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    /* Reconnect: a new connection, a new id. */
    fd = raw_accept(lfd);
    zlink_routing_id_t rid2;
    st_expect_notice(s, &rid2);
    ZT_CHECK(!zlt_rid_eq(&rid2, &rid));
    ZT_EQ_INT(st_send_str(s, &rid2, "again"), ZLINK_SUBMIT_OK);
    raw_expect(fd, "again");
    ZT_EQ_INT(st_send_str(s, &rid, "old"), ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(zlink_disconnect(s, ep), ZLINK_CONNECT_OK);
    raw_expect_eof(fd);
    close(fd);
    close(lfd);
    zlt_finish(ctx, s);
}

/* STREAM against a second process: the child runs its own context and a
 * STREAM that connects to ours; both sides exchange bytes, the child closes
 * with a zero-length send and exits 0 when all it saw was right. */
static int stream_child(const char *port)
{
    void *ctx = zlt_ctx_new();
    void *c = stream_new(ctx, 1);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%s", port != NULL ? port : "0");
    ZT_EQ_INT(zlink_connect(c, ep), ZLINK_CONNECT_OK);
    zlink_routing_id_t rid;
    st_expect_notice(c, &rid);
    char hello[64];
    int n = snprintf(hello, sizeof hello, "hello from %ld", (long)getpid());
    ZT_EQ_INT(zlt_send_to(c, &rid, hello, (size_t)n, 0), ZLINK_SUBMIT_OK);
    char reply[64];
    n = snprintf(reply, sizeof reply, "world to %ld", (long)getpid());
    st_expect_bytes(c, &rid, reply);
    ZT_EQ_INT(zlt_send_to(c, &rid, "", 0, 0), ZLINK_SUBMIT_OK);
    zlink_routing_id_t from;
    st_expect_notice(c, &from);
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    zlt_finish(ctx, c);
    return 0;
}

static void stream_second_process(void)
{
    printf("# covers STREAM against a second process\n");
    void *ctx = zlt_ctx_new();
    void *s = stream_new(ctx, 1);
    int port = stream_bind(s);
    char arg[16];
    snprintf(arg, sizeof arg, "%d", port);
    pid_t pid = zt_spawn_self("stream-child", arg);
    zlink_routing_id_t rid, from;
    st_expect_notice(s, &rid);
    char hello[64];
    int n = snprintf(hello, sizeof hello, "hello from %ld", (long)pid);
    st_expect_bytes(s, &rid, hello);
    char reply[64];
    n = snprintf(reply, sizeof reply, "world to %ld", (long)pid);
    ZT_EQ_INT(zlt_send_to(s, &rid, reply, (size_t)n, 0), ZLINK_SUBMIT_OK);
    st_expect_notice(s, &from); /* the child's zero-length send closed it */
    ZT_CHECK(zlt_rid_eq(&from, &rid));
    ZT_EQ_INT(zt_wait(pid), 0);
    zlt_finish(ctx, s);
}

/* ============================================================ PACKET mode
 *
 * A PACKET STREAM frames what it receives as [u16 BE hlen][u32 BE blen]
 * [hdr][body] and hands out whole packets with zlink_stream_recv_packet;
 * its sends stay raw. The raw clients below write packets (whole, split at
 * every byte, malformed, cut by a close) and the cases check what the
 * STREAM delivers, what its monitor reports and what the client sees. */

/* A PACKET STREAM (LINGER 0, scaled timeouts). */
static void *packet_stream_new(void *ctx)
{
    void *s = zlt_sock(ctx, ZLINK_STREAM);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_PACKET);
    return s;
}

/* Writes the length prefix of a packet into w[0..6). */
static void pk_prefix(unsigned char *w, uint32_t hlen, uint32_t blen)
{
    w[0] = (unsigned char)(hlen >> 8);
    w[1] = (unsigned char)hlen;
    w[2] = (unsigned char)(blen >> 24);
    w[3] = (unsigned char)(blen >> 16);
    w[4] = (unsigned char)(blen >> 8);
    w[5] = (unsigned char)blen;
}

/* The wire bytes of one packet, appended at w + *len (cap bytes in all). */
static void pk_append(unsigned char *w, size_t cap, size_t *len, const void *hdr, size_t hlen,
                      const void *body, size_t blen)
{
    ZT_CHECK(hlen <= 0xFFFF);
    ZT_CHECK(*len + 6 + hlen + blen <= cap);
    pk_prefix(w + *len, (uint32_t)hlen, (uint32_t)blen);
    if (hlen > 0)
        memcpy(w + *len + 6, hdr, hlen);
    if (blen > 0)
        memcpy(w + *len + 6 + hlen, body, blen);
    *len += 6 + hlen + blen;
}

/* Sends one packet of two strings on a raw client. */
static void pk_send(int fd, const char *hdr, const char *body)
{
    unsigned char w[512];
    size_t n = 0;
    pk_append(w, sizeof w, &n, hdr, strlen(hdr), body, strlen(body));
    raw_send(fd, w, n);
}

/* One zlink_stream_recv_packet with fresh outputs; on OK the header and
 * body are copied out (up to the caps; longer parts fail) and closed. */
static zlink_recv_result_t pk_recv(void *s, zlink_routing_id_t *rid, void *hbuf, size_t hcap,
                                   size_t *hlen, void *bbuf, size_t bcap, size_t *blen,
                                   int flags)
{
    zlink_msg_t h, b;
    ZT_EQ_INT(zlink_msg_init(&h), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    const zlink_routing_id_t *view = NULL;
    zlink_recv_result_t r = zlink_stream_recv_packet(s, &view, &h, &b, (zlink_recv_flags_t)flags);
    if (r == ZLINK_RECV_OK) {
        ZT_CHECK(view != NULL);
        ZT_EQ_INT(view->size, 4);
        *rid = *view;
        *hlen = zlink_msg_size(&h);
        *blen = zlink_msg_size(&b);
        ZT_CHECK(*hlen <= hcap && *blen <= bcap);
        if (*hlen > 0)
            memcpy(hbuf, zlink_msg_data(&h), *hlen);
        if (*blen > 0)
            memcpy(bbuf, zlink_msg_data(&b), *blen);
    } else {
        ZT_CHECK(view == NULL);
        ZT_EQ_INT(zlink_msg_size(&h), 0);
        ZT_EQ_INT(zlink_msg_size(&b), 0);
    }
    ZT_EQ_INT(zlink_msg_close(&h), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&b), ZLINK_CONFIG_OK);
    return r;
}

/* Receives one packet (waiting up to RCVTIMEO) and checks it is (hdr,
 * body). *rid: when its size is 0 it learns the sender, else the packet
 * must come from it. */
#define pk_expect(s, rid, hdr, body) pk__expect(__FILE__, __LINE__, (s), (rid), (hdr), (body))
static void pk__expect(const char *file, int line, void *s, zlink_routing_id_t *rid,
                       const char *hdr, const char *body)
{
    char hb[512], bb[512];
    size_t hl = 0, bl = 0;
    zlink_routing_id_t from;
    zlink_recv_result_t r = pk_recv(s, &from, hb, sizeof hb, &hl, bb, sizeof bb, &bl, 0);
    if (r != ZLINK_RECV_OK)
        zt__fail(file, line, "packet (%s, %s): result %d errno %d", hdr, body, (int)r,
                 zlink_errno());
    if (hl != strlen(hdr) || memcmp(hb, hdr, hl) != 0 || bl != strlen(body) ||
        memcmp(bb, body, bl) != 0)
        zt__fail(file, line, "packet (%.*s, %.*s), expected (%s, %s)", (int)hl, hb, (int)bl,
                 bb, hdr, body);
    if (rid->size == 0)
        *rid = from;
    else if (!zlt_rid_eq(&from, rid))
        zt__fail(file, line, "packet (%s, %s) from another routing id", hdr, body);
}

/* Nothing to receive now (DONTWAIT). */
static void pk_expect_none(void *s)
{
    zlink_routing_id_t from;
    char hb[8], bb[8];
    size_t hl = 0, bl = 0;
    ZT_EQ_INT(pk_recv(s, &from, hb, sizeof hb, &hl, bb, sizeof bb, &bl, ZLINK_DONTWAIT),
              ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
}

/* zlink_poll on s for POLLIN with a timeout (ms, scaled): 1 ready, 0 not. */
static int pk_pollin(void *s, int ms)
{
    zlink_pollitem_t it;
    memset(&it, 0, sizeof it);
    it.socket = s;
    it.events = ZLINK_POLLIN;
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    int n = zlink_poll(&it, 1, ZT_MS(ms), &err);
    ZT_CHECK(n >= 0);
    return n > 0 && (it.revents & ZLINK_POLLIN) ? 1 : 0;
}

static void *pk_monitor(void *s, uint32_t events)
{
    zlink_monitor_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.events = events;
    void *m = zlink_socket_monitor_open(s, &cfg);
    if (m == NULL)
        ZT_FAIL("zlink_socket_monitor_open: errno %d", zlink_errno());
    return m;
}

/* The next monitor event of kind want, skipping others (waits up to the
 * socket's RCVTIMEO for each). CONNECTION_READY means a new connection:
 * the count snapshots that follow a DISCONNECTED are skipped too. */
static zlink_monitor_event_t pk_event(void *m, uint64_t want)
{
    for (;;) {
        zlink_monitor_event_t ev;
        memset(&ev, 0, sizeof ev);
        zlink_recv_result_t r = zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_NONE);
        if (r != ZLINK_RECV_OK)
            ZT_FAIL("waiting for event %llu: result %d errno %d", (unsigned long long)want,
                    (int)r, zlink_errno());
        if (ev.event == want && (want != ZLINK_EVENT_CONNECTION_READY ||
                                 (ev.flags & ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE)))
            return ev;
    }
}

/* Records queued for receiving on the monitored socket, from the status. */
static uint64_t pk_pending(void *m)
{
    zlink_monitor_status_t st;
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    ZT_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS);
    return st.rcv_pending_msgs;
}

/* The raw client's side of a STREAM disconnect: EOF or a reset, within
 * the timeout (fails on data or silence). */
static void raw_expect_gone(int fd)
{
    char c[64];
    for (;;) {
        ssize_t r = recv(fd, c, sizeof c, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            return;
        if (r < 0)
            ZT_FAIL("expected EOF or reset, got %s", strerror(errno));
        ZT_FAIL("expected EOF or reset, got %zd bytes", r);
    }
}

/* STREAM 3: PACKET: packet receive only. zlink_recv is NOT_SUPPORTED on a
 * PACKET STREAM; the packet receive is NOT_SUPPORTED before a mode is
 * chosen and on other socket types; a packet from a raw client arrives
 * whole with the client's 4-byte id. */
static void stream_packet_03_packet_receive_only(void)
{
    printf("# covers STREAM/3\n");
    void *ctx = zlt_ctx_new();
    void *u = zlt_socket_linger0(ctx, ZLINK_STREAM); /* UNSPECIFIED */
    void *d = zlt_socket_linger0(ctx, ZLINK_DEALER);
    void *others[2] = {u, d};
    for (int i = 0; i < 2; i++) {
        zlink_msg_t h, b;
        ZT_EQ_INT(zlink_msg_init(&h), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
        const zlink_routing_id_t *view = NULL;
        ZT_EQ_INT(zlink_stream_recv_packet(others[i], &view, &h, &b, ZLINK_DONTWAIT),
                  ZLINK_RECV_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        zlink_msg_close(&h);
        zlink_msg_close(&b);
    }
    void *s = packet_stream_new(ctx);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_STREAM_OPT_RECV_MODE), ZLINK_STREAM_RECV_PACKET);
    int port = stream_bind(s);
    int fd = raw_connect(port);
    pk_send(fd, "head", "the body");
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    pk_expect(s, &rid, "head", "the body");
    /* The raw family refuses, whatever is queued. */
    pk_send(fd, "h2", "b2");
    ZT_EQ_INT(pk_pollin(s, 3000), 1);
    zlink_msg_t part[1];
    size_t count = 7;
    const zlink_routing_id_t *view = NULL;
    ZT_EQ_INT(zlink_recv(s, &view, part, 1, &count, ZLINK_DONTWAIT), ZLINK_RECV_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    ZT_EQ_INT(count, 7);
    ZT_CHECK(view == NULL);
    ZT_EQ_INT(zlink_recv(s, &view, part, 1, &count, 0), ZLINK_RECV_NOT_SUPPORTED);
    pk_expect(s, &rid, "h2", "b2"); /* still there */
    close(fd);
    zlt_finish(ctx, s, u, d);
}

/* STREAM 4 (PACKET): a failed bind does not fix the mode; a successful
 * one does, for good: changing it is INVALID_STATE/EBUSY, also after the
 * endpoint was unbound again. */
static void stream_packet_04_mode_fixed(void)
{
    printf("# covers STREAM/4 (PACKET; fixed also after unbind)\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    ZT_CHECK(zlink_bind(s, "tcp://127.0.0.1:notaport") != ZLINK_BIND_OK);
    ZT_CHECK(zlink_bind(s, "inproc://nope") != ZLINK_BIND_OK);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW); /* not fixed */
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_PACKET);
    char ep[256];
    zlt_bind(s, "tcp", ep, sizeof ep);
    const int modes[] = {ZLINK_STREAM_RECV_UNSPECIFIED, ZLINK_STREAM_RECV_RAW,
                         ZLINK_STREAM_RECV_PACKET};
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_setsockopt(s, ZLINK_STREAM_OPT_RECV_MODE, &modes[i], sizeof(int)),
                  ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), EBUSY);
    }
    ZT_EQ_INT(zlink_unbind(s, ep), ZLINK_CONNECT_OK);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_STREAM_OPT_RECV_MODE, &modes[1], sizeof(int)),
              ZLINK_CONFIG_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EBUSY);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_STREAM_OPT_RECV_MODE), ZLINK_STREAM_RECV_PACKET);
    zlt_finish(ctx, s);
}

/* STREAM 5: PACKET with NOTIFY=1 is NOT_SUPPORTED/ENOTSUP, in either
 * order, and changes neither option. */
static void stream_packet_05_notify_not_supported(void)
{
    printf("# covers STREAM/5\n");
    void *ctx = zlt_ctx_new();
    void *a = zlt_socket_linger0(ctx, ZLINK_STREAM);
    zlt_set_int(a, ZLINK_STREAM_NOTIFY, 1);
    int v = ZLINK_STREAM_RECV_PACKET;
    ZT_EQ_INT(zlink_setsockopt(a, ZLINK_STREAM_OPT_RECV_MODE, &v, sizeof v),
              ZLINK_CONFIG_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    ZT_EQ_INT(zlt_get_int(a, ZLINK_STREAM_OPT_RECV_MODE), ZLINK_STREAM_RECV_UNSPECIFIED);
    ZT_EQ_INT(zlt_get_int(a, ZLINK_STREAM_NOTIFY), 1);
    zlt_set_int(a, ZLINK_STREAM_NOTIFY, 0);
    zlt_set_int(a, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_PACKET); /* now fine */
    void *b = packet_stream_new(ctx);
    v = 1;
    ZT_EQ_INT(zlink_setsockopt(b, ZLINK_STREAM_NOTIFY, &v, sizeof v),
              ZLINK_CONFIG_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    ZT_EQ_INT(zlt_get_int(b, ZLINK_STREAM_NOTIFY), 0);
    zlt_set_int(b, ZLINK_STREAM_NOTIFY, 0);
    ZT_EQ_INT(zlt_get_int(b, ZLINK_STREAM_OPT_RECV_MODE), ZLINK_STREAM_RECV_PACKET);
    zlt_finish(ctx, a, b);
}

/* STREAM 6 (PACKET): connections are reported by the monitor, never as
 * records: CONNECTION_READY (edge) names the new connection's 4-byte id,
 * its packets come from that id, and its close gives DISCONNECTED with
 * the same id (UNKNOWN: an orderly close between packets); nothing else
 * is received. Our zero-length send closes a peer the same way. */
static void stream_packet_06_monitor_reports_connections(void)
{
    printf("# covers STREAM/6 (PACKET uses the monitor)\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    void *m = pk_monitor(s, ZLINK_EVENT_CONNECTION_READY | ZLINK_EVENT_DISCONNECTED);
    int port = stream_bind(s);
    int fd = raw_connect(port);
    zlink_monitor_event_t ev = pk_event(m, ZLINK_EVENT_CONNECTION_READY);
    ZT_EQ_INT(ev.flags & ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE,
              ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE);
    ZT_EQ_INT(ev.rid.size, 4);
    zlink_routing_id_t rid = ev.rid;
    pk_expect_none(s); /* no zero-length record for the connect */
    pk_send(fd, "h", "b");
    pk_expect(s, &rid, "h", "b");
    close(fd);
    ev = pk_event(m, ZLINK_EVENT_DISCONNECTED);
    ZT_CHECK(zlt_rid_eq(&ev.rid, &rid));
    ZT_EQ_U64(ev.value, ZLINK_DISCONNECT_UNKNOWN);
    pk_expect_none(s); /* nor for the disconnect */
    ZT_EQ_INT(st_send_str(s, &rid, "gone"), ZLINK_SUBMIT_NOT_CONNECTED);

    /* A second client, closed by our zero-length send. */
    fd = raw_connect(port);
    ev = pk_event(m, ZLINK_EVENT_CONNECTION_READY);
    ZT_EQ_INT(ev.rid.size, 4);
    ZT_CHECK(!zlt_rid_eq(&ev.rid, &rid));
    rid = ev.rid;
    ZT_EQ_INT(zlt_send_to(s, &rid, "", 0, 0), ZLINK_SUBMIT_OK);
    raw_expect_eof(fd);
    ev = pk_event(m, ZLINK_EVENT_DISCONNECTED);
    ZT_CHECK(zlt_rid_eq(&ev.rid, &rid));
    pk_expect_none(s);
    close(fd);
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* PACKET mode sends stay raw: the part's bytes reach the client exactly,
 * with no prefix added, whatever they look like. */
static void stream_packet_sends_are_raw(void)
{
    printf("# covers core-contract §5 STREAM (send_rid n=1 in PACKET mode: raw bytes)\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    int fd = raw_connect(stream_bind(s));
    pk_send(fd, "hello", "");
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    pk_expect(s, &rid, "hello", "");
    ZT_EQ_INT(st_send_str(s, &rid, "plain"), ZLINK_SUBMIT_OK);
    unsigned char w[64];
    size_t n = 0;
    pk_append(w, sizeof w, &n, "ph", 2, "pb", 2);
    ZT_EQ_INT(zlt_send_to(s, &rid, w, n, 0), ZLINK_SUBMIT_OK);
    raw_expect(fd, "plain");
    unsigned char got[64];
    raw_recv_exact(fd, got, n);
    ZT_EQ_MEM(got, w, n);
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 18: lengths may be 0: a 0+0 packet gives two empty messages;
 * 0+n and n+0 packets give one empty part each; all in order. */
static void stream_packet_18_empty_parts(void)
{
    printf("# covers STREAM/18\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    int fd = raw_connect(stream_bind(s));
    unsigned char w[128];
    size_t n = 0;
    pk_append(w, sizeof w, &n, "", 0, "", 0);
    pk_append(w, sizeof w, &n, "", 0, "only body", 9);
    pk_append(w, sizeof w, &n, "only header", 11, "", 0);
    pk_append(w, sizeof w, &n, "", 0, "", 0);
    raw_send(fd, w, n);
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    zlink_msg_t h, b;
    ZT_EQ_INT(zlink_msg_init(&h), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    const zlink_routing_id_t *view = NULL;
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, &b, 0), ZLINK_RECV_OK);
    ZT_CHECK(view != NULL && view->size == 4);
    rid = *view;
    ZT_EQ_INT(zlink_msg_size(&h), 0);
    ZT_EQ_INT(zlink_msg_size(&b), 0);
    ZT_EQ_INT(zlink_msg_close(&h), ZLINK_CONFIG_OK); /* two real messages */
    ZT_EQ_INT(zlink_msg_close(&b), ZLINK_CONFIG_OK);
    pk_expect(s, &rid, "", "only body");
    pk_expect(s, &rid, "only header", "");
    pk_expect(s, &rid, "", "");
    pk_expect_none(s);
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 19: a packet written one byte at a time (prefix included) is
 * one packet; POLLIN and the receive see nothing until its last byte. The
 * client sends with TCP_NODELAY and the negative poll between bytes gives
 * the STREAM time to read each one on its own. */
static void stream_packet_19_split_prefix(void)
{
    printf("# covers STREAM/19\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    int fd = raw_connect(stream_bind(s));
    int one = 1;
    ZT_EQ_INT(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
    unsigned char w[64];
    size_t n = 0;
    pk_append(w, sizeof w, &n, "hd", 2, "body", 4);
    for (size_t i = 0; i + 1 < n; i++) {
        raw_send(fd, w + i, 1);
        ZT_EQ_INT(pk_pollin(s, 20), 0);
        pk_expect_none(s);
    }
    raw_send(fd, w + n - 1, 1);
    ZT_EQ_INT(pk_pollin(s, 3000), 1);
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    pk_expect(s, &rid, "hd", "body");
    /* A prefix cut in two halves, its rest together with the next packet. */
    n = 0;
    pk_append(w, sizeof w, &n, "second", 6, "packet", 6);
    pk_append(w, sizeof w, &n, "third", 5, "", 0);
    raw_send(fd, w, 3);
    ZT_EQ_INT(pk_pollin(s, 50), 0);
    raw_send(fd, w + 3, n - 3);
    pk_expect(s, &rid, "second", "packet");
    pk_expect(s, &rid, "third", "");
    pk_expect_none(s);
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 20: the outputs are validated before anything is taken: NULL rid,
 * header or body is INVALID_HANDLE/EFAULT; the same message twice, an
 * overlapping pair, an uninitialized or a non-empty message is
 * INVALID_STATE/EINVAL (a non-empty one keeps its payload); so is an
 * unknown flag. The packet stays queued and the next valid call gets it.
 * A zero-length user buffer with a free function counts as empty and is
 * released when the packet replaces it. */
static int g_pk_freed;
static void pk_free_fn(void *data, void *hint)
{
    (void)data;
    (void)hint;
    g_pk_freed++;
}

static void stream_packet_20_output_validation(void)
{
    printf("# covers STREAM/20\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    int fd = raw_connect(stream_bind(s));
    pk_send(fd, "kept", "packet");
    ZT_EQ_INT(pk_pollin(s, 3000), 1);
    zlink_msg_t h, b, full, pair[2];
    ZT_EQ_INT(zlink_msg_init(&h), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    const zlink_routing_id_t *view = (const zlink_routing_id_t *)(uintptr_t)0x10;
    ZT_EQ_INT(zlink_stream_recv_packet(s, NULL, &h, &b, 0), ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, NULL, &b, 0), ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, NULL, 0), ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, &h, 0), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* Overlapping slots (a misuse a cast can produce). */
    zlink_msg_t two[2];
    ZT_EQ_INT(zlink_msg_init(&two[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&two[1]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &two[0],
                                       (zlink_msg_t *)(void *)((char *)two + 8), 0),
              ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    zlink_msg_t garbage;
    memset(&garbage, 0xA5, sizeof garbage);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &garbage, &b, 0), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, &garbage, 0), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_msg_init_size(&full, 3), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&full), "xyz", 3);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &full, &b, 0), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, &full, 0), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_msg_size(&full), 3);
    ZT_EQ_MEM(zlink_msg_data(&full), "xyz", 3);
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, &b, (zlink_recv_flags_t)2),
              ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_CHECK(view == (const zlink_routing_id_t *)(uintptr_t)0x10);
    ZT_EQ_INT(zlink_msg_size(&h), 0);
    ZT_EQ_INT(zlink_msg_size(&b), 0);
    /* Adjacent (not overlapping) slots of one array are fine; the body
     * slot holds zero-length user memory with a free function. */
    static char ext[1];
    ZT_EQ_INT(zlink_msg_init(&pair[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_data(&pair[1], ext, 0, pk_free_fn, NULL), ZLINK_CONFIG_OK);
    g_pk_freed = 0;
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &pair[0], &pair[1], ZLINK_DONTWAIT),
              ZLINK_RECV_OK);
    ZT_EQ_INT(g_pk_freed, 1);
    ZT_CHECK(view != NULL && view->size == 4);
    ZT_EQ_INT(zlink_msg_size(&pair[0]), 4);
    ZT_EQ_MEM(zlink_msg_data(&pair[0]), "kept", 4);
    ZT_EQ_INT(zlink_msg_size(&pair[1]), 6);
    ZT_EQ_MEM(zlink_msg_data(&pair[1]), "packet", 6);
    zlink_multipart_close(pair, 2);
    pk_expect_none(s);
    zlink_msg_close(&h);
    zlink_msg_close(&b);
    zlink_msg_close(&full);
    zlink_multipart_close(two, 2);
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 21: per connection, packets come in wire order; across
 * connections, in the order they were completed. Three clients send one
 * packet each in a fixed interleaving, each waited for (the monitor's
 * pending count) before the next is sent; the receive order is the send
 * order, not a round-robin over the connections. Then two clients each
 * send 2000 packets of growing sizes in large writes at the same time:
 * each client's packets arrive complete and in order. */
static void stream_packet_21_order(void)
{
    printf("# covers STREAM/21 (PACKET: per-RID order, admission order across RIDs)\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    void *m = pk_monitor(s, 0);
    int port = stream_bind(s);
    int fd[3];
    zlink_routing_id_t rid[3];
    char tag[16];
    for (int k = 0; k < 3; k++) {
        fd[k] = raw_connect(port);
        snprintf(tag, sizeof tag, "hello-%d", k);
        pk_send(fd[k], tag, "");
        memset(&rid[k], 0, sizeof rid[k]);
        pk_expect(s, &rid[k], tag, "");
    }
    static const int order[] = {0, 0, 1, 0, 2, 2, 1, 1, 0, 2, 1, 0, 0, 0, 2, 1};
    enum { N = sizeof order / sizeof order[0] };
    for (int i = 0; i < N; i++) {
        snprintf(tag, sizeof tag, "p%02d", i);
        pk_send(fd[order[i]], tag, tag);
        ZT_EVENTUALLY(pk_pending(m) == (uint64_t)(i + 1), 3000);
    }
    for (int i = 0; i < N; i++) {
        snprintf(tag, sizeof tag, "p%02d", i);
        pk_expect(s, &rid[order[i]], tag, tag);
    }
    pk_expect_none(s);

    /* Bulk: both clients at once, packets cut anywhere by the reads. */
    enum { M = 2000 };
    size_t cap = (size_t)M * (6 + 8 + 700);
    unsigned char *w[2];
    size_t len[2] = {0, 0};
    static unsigned char body[700];
    for (int k = 0; k < 2; k++) {
        w[k] = malloc(cap);
        ZT_CHECK(w[k] != NULL);
        for (int i = 0; i < M; i++) {
            char h[16];
            snprintf(h, sizeof h, "%d%07d", k, i);
            size_t bl = (size_t)(i * 7 + k) % sizeof body;
            for (size_t j = 0; j < bl; j++)
                body[j] = pattern(j + (size_t)i, (unsigned)k);
            pk_append(w[k], cap, &len[k], h, 8, body, bl);
        }
    }
    /* Interleaved 50 KB writes; the STREAM takes all of it (well below
     * its default RCVHWM), so the writes never wait for our reads. */
    size_t off[2] = {0, 0};
    while (off[0] < len[0] || off[1] < len[1]) {
        for (int k = 0; k < 2; k++) {
            size_t n = len[k] - off[k] < 50000 ? len[k] - off[k] : 50000;
            if (n > 0) {
                raw_send(fd[k], w[k] + off[k], n);
                off[k] += n;
            }
        }
    }
    int next[2] = {0, 0};
    static unsigned char hb[16], bb[700];
    while (next[0] < M || next[1] < M) {
        zlink_routing_id_t from;
        size_t hl = 0, bl = 0;
        ZT_EQ_INT(pk_recv(s, &from, hb, sizeof hb, &hl, bb, sizeof bb, &bl, 0), ZLINK_RECV_OK);
        int k = zlt_rid_eq(&from, &rid[0]) ? 0 : 1;
        ZT_CHECK(zlt_rid_eq(&from, &rid[k]));
        int i = next[k]++;
        ZT_CHECK(i < M);
        char h[16];
        snprintf(h, sizeof h, "%d%07d", k, i);
        ZT_EQ_INT(hl, 8);
        ZT_EQ_MEM(hb, h, 8);
        size_t want = (size_t)(i * 7 + k) % sizeof body;
        ZT_EQ_INT(bl, want);
        for (size_t j = 0; j < bl; j++) {
            if (bb[j] != pattern(j + (size_t)i, (unsigned)k))
                ZT_FAIL("client %d packet %d byte %zu differs", k, i, j);
        }
    }
    pk_expect_none(s);
    free(w[0]);
    free(w[1]);
    for (int k = 0; k < 3; k++)
        close(fd[k]);
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* A thread writing a buffer to a non-blocking raw client; it records
 * where a write first had to wait longer than 300 ms (the STREAM stopped
 * reading), then keeps waiting for room. */
struct pk_writer {
    int fd;
    const unsigned char *data;
    size_t len;
    pthread_mutex_t lk;
    pthread_cond_t cv;
    size_t stalled_at; /* 0 = not (yet) stalled */
    bool done;
    bool failed;
};

static void *pk_writer_main(void *arg)
{
    struct pk_writer *w = arg;
    size_t off = 0;
    while (off < w->len) {
        ssize_t r = send(w->fd, w->data + off, w->len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (r > 0) {
            off += (size_t)r;
            continue;
        }
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            w->failed = true;
            break;
        }
        struct pollfd p = {w->fd, POLLOUT, 0};
        if (poll(&p, 1, ZT_MS(300)) == 0) {
            pthread_mutex_lock(&w->lk);
            if (w->stalled_at == 0)
                w->stalled_at = off;
            pthread_cond_broadcast(&w->cv);
            pthread_mutex_unlock(&w->lk);
            if (poll(&p, 1, ZT_MS(10000)) <= 0) {
                w->failed = true;
                break;
            }
        }
    }
    pthread_mutex_lock(&w->lk);
    w->done = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->lk);
    return NULL;
}

/* STREAM 22 (PACKET): at RCVHWM the STREAM stops reading and drops
 * nothing. A raw client writes 2 MB of 1 KB packets while the STREAM has
 * a 16 KB RCVHWM and is not read: the writer stalls well before the end,
 * and what the STREAM holds stays near its HWM (one read beyond it at
 * most). Then every packet arrives, whole and in order. */
static void stream_packet_22_rcvhwm_stops_reads(void)
{
    printf("# covers STREAM/22 (PACKET)\n");
    enum { BODY = 1000, COUNT = 2 * 1024 * 1024 / (6 + 8 + BODY) };
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    zlt_set_u64(s, ZLINK_RCVHWM, 16384);
    void *m = pk_monitor(s, 0);
    int port = stream_bind(s);
    size_t cap = (size_t)COUNT * (6 + 8 + BODY);
    unsigned char *data = malloc(cap);
    ZT_CHECK(data != NULL);
    size_t len = 0;
    static unsigned char body[BODY];
    for (int i = 0; i < COUNT; i++) {
        char h[16];
        snprintf(h, sizeof h, "%08d", i);
        for (size_t j = 0; j < BODY; j++)
            body[j] = pattern(j, (unsigned)i);
        pk_append(data, cap, &len, h, 8, body, BODY);
    }
    struct pk_writer w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.lk, NULL);
    pthread_cond_init(&w.cv, NULL);
    w.fd = raw_connect(port);
    w.data = data;
    w.len = len;
    int sndbuf = 32768;
    ZT_EQ_INT(setsockopt(w.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, pk_writer_main, &w), 0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ZT_MS(5000) / 1000 + 1;
    pthread_mutex_lock(&w.lk);
    while (w.stalled_at == 0 && !w.done) {
        if (pthread_cond_timedwait(&w.cv, &w.lk, &until) != 0)
            break;
    }
    size_t stalled_at = w.stalled_at;
    bool done_early = w.done;
    pthread_mutex_unlock(&w.lk);
    printf("# writer stalled at %zu of %zu bytes\n", stalled_at, len);
    ZT_CHECK(!done_early);
    ZT_CHECK(stalled_at > 0 && stalled_at < len);
    zlink_monitor_status_t st;
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    printf("# STREAM holds %llu packets, %llu bytes\n", (unsigned long long)st.rcv_pending_msgs,
           (unsigned long long)st.rcv_pending_bytes);
    ZT_CHECK(st.rcv_pending_msgs > 0);
    ZT_CHECK(st.rcv_pending_bytes <= 16384 + 2 * 65536);
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    static unsigned char hb[16], bb[BODY];
    for (int i = 0; i < COUNT; i++) {
        zlink_routing_id_t from;
        size_t hl = 0, bl = 0;
        ZT_EQ_INT(pk_recv(s, &from, hb, sizeof hb, &hl, bb, sizeof bb, &bl, 0), ZLINK_RECV_OK);
        if (i == 0)
            rid = from;
        ZT_CHECK(zlt_rid_eq(&from, &rid));
        char h[16];
        snprintf(h, sizeof h, "%08d", i);
        ZT_EQ_INT(hl, 8);
        ZT_EQ_MEM(hb, h, 8);
        ZT_EQ_INT(bl, BODY);
        for (size_t j = 0; j < BODY; j++) {
            if (bb[j] != pattern(j, (unsigned)i))
                ZT_FAIL("packet %d byte %zu differs", i, j);
        }
    }
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    ZT_CHECK(!w.failed);
    pk_expect_none(s);
    close(w.fd);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.lk);
    free(data);
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* One malformed-stream scenario of STREAM 23: a raw client writes `bad`
 * (after one valid packet, in the same write when together is set) and
 * maybe closes; the valid packet arrives, nothing after it, the client is
 * disconnected and the monitor reports DISCONNECTED(TRANSPORT_ERROR) with
 * its id. */
static void pk_expect_fault(void *s, void *m, int port, const unsigned char *bad, size_t n,
                            bool close_after)
{
    int fd = raw_connect(port);
    zlink_monitor_event_t ev = pk_event(m, ZLINK_EVENT_CONNECTION_READY);
    zlink_routing_id_t rid = ev.rid;
    ZT_EQ_INT(rid.size, 4);
    unsigned char w[512];
    size_t len = 0;
    pk_append(w, sizeof w, &len, "valid", 5, "before", 6);
    ZT_CHECK(len + n <= sizeof w);
    memcpy(w + len, bad, n);
    raw_send(fd, w, len + n);
    if (close_after)
        shutdown(fd, SHUT_WR);
    ev = pk_event(m, ZLINK_EVENT_DISCONNECTED);
    ZT_CHECK(zlt_rid_eq(&ev.rid, &rid));
    ZT_EQ_U64(ev.value, ZLINK_DISCONNECT_TRANSPORT_ERROR);
    if (!close_after)
        raw_expect_gone(fd);
    pk_expect(s, &rid, "valid", "before");
    pk_expect_none(s);
    ZT_EQ_INT(st_send_str(s, &rid, "x"), ZLINK_SUBMIT_NOT_CONNECTED);
    close(fd);
}

/* STREAM 23 (PACKET): with MAXMSGSIZE 100, a header, a body or their sum
 * over 100 is malformed (exactly 100 is fine); so is a close inside a
 * prefix, a header or a body. Each disconnects that client at once with
 * no partial delivery, after the whole packets before it. */
static void stream_packet_23_malformed_and_cut(void)
{
    printf("# covers STREAM/23 (PACKET: over MAXMSGSIZE, close mid-packet)\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    zlt_set_i64(s, ZLINK_MAXMSGSIZE, 100);
    void *m = pk_monitor(s, ZLINK_EVENT_CONNECTION_READY | ZLINK_EVENT_DISCONNECTED);
    int port = stream_bind(s);
    static unsigned char fill[200];
    memset(fill, 'z', sizeof fill);

    /* At the limit: accepted. */
    int fd = raw_connect(port);
    unsigned char w[512];
    size_t n = 0;
    pk_append(w, sizeof w, &n, fill, 40, fill, 60);
    raw_send(fd, w, n);
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    char hb[128], bb[128];
    size_t hl = 0, bl = 0;
    ZT_EQ_INT(pk_recv(s, &rid, hb, sizeof hb, &hl, bb, sizeof bb, &bl, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(hl, 40);
    ZT_EQ_INT(bl, 60);
    close(fd);
    pk_event(m, ZLINK_EVENT_DISCONNECTED);

    /* Over the limit: header, body, sum. The bytes after the prefix follow
     * or not; nothing of them is delivered. */
    const uint32_t over[3][2] = {{101, 0}, {0, 101}, {60, 60}};
    for (int i = 0; i < 3; i++) {
        unsigned char bad[6 + 20];
        pk_prefix(bad, over[i][0], over[i][1]);
        memset(bad + 6, 'q', 20);
        pk_expect_fault(s, m, port, bad, i == 1 ? 6 : sizeof bad, false);
    }
    /* Cut by the client's close: inside the prefix, the header, the body. */
    unsigned char cut[6 + 30];
    pk_prefix(cut, 10, 20);
    memset(cut + 6, 'c', 30);
    const size_t keep[3] = {3, 6 + 4, 6 + 10 + 19};
    for (int i = 0; i < 3; i++)
        pk_expect_fault(s, m, port, cut, keep[i], true);
    /* An orderly close right after a whole packet is no fault. */
    fd = raw_connect(port);
    zlink_monitor_event_t ev = pk_event(m, ZLINK_EVENT_CONNECTION_READY);
    pk_send(fd, "last", "one");
    close(fd);
    ev = pk_event(m, ZLINK_EVENT_DISCONNECTED);
    ZT_EQ_U64(ev.value, ZLINK_DISCONNECT_UNKNOWN);
    memset(&rid, 0, sizeof rid);
    pk_expect(s, &rid, "last", "one");
    ZT_CHECK(zlt_rid_eq(&rid, &ev.rid));
    pk_expect_none(s);
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* STREAM 23: MAXMSGSIZE is taken at each packet's prefix, from the socket
 * as it is then: lowering it on a bound STREAM with a connected client
 * applies to that client's next packet. */
static void stream_packet_23_limit_at_prefix(void)
{
    printf("# covers STREAM/23 (MAXMSGSIZE snapshot at the prefix)\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    void *m = pk_monitor(s, ZLINK_EVENT_DISCONNECTED);
    int port = stream_bind(s);
    int fd = raw_connect(port);
    pk_send(fd, "unlimited", "so far");
    zlink_routing_id_t rid;
    memset(&rid, 0, sizeof rid);
    pk_expect(s, &rid, "unlimited", "so far");
    zlt_set_i64(s, ZLINK_MAXMSGSIZE, 16);
    pk_send(fd, "12345678", "12345678"); /* 16: fine */
    pk_expect(s, &rid, "12345678", "12345678");
    pk_send(fd, "12345678", "123456789"); /* 17: over */
    zlink_monitor_event_t ev = pk_event(m, ZLINK_EVENT_DISCONNECTED);
    ZT_CHECK(zlt_rid_eq(&ev.rid, &rid));
    ZT_EQ_U64(ev.value, ZLINK_DISCONNECT_TRANSPORT_ERROR);
    raw_expect_gone(fd);
    pk_expect_none(s);
    close(fd);
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* The process's peak virtual memory size (VmPeak, bytes; Linux). */
static uint64_t vm_peak_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    ZT_CHECK(f != NULL);
    char line[256];
    unsigned long long kb = 0;
    bool found = false;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "VmPeak: %llu kB", &kb) == 1) {
            found = true;
            break;
        }
    }
    fclose(f);
    ZT_CHECK(found);
    return (uint64_t)kb * 1024;
}

/* The decoder reserves nothing for a claim: with no MAXMSGSIZE a client
 * claims a 4 GiB body and sends 100 bytes of it; the process's peak
 * virtual size does not grow by anything near the claim, the connection
 * stays up while the STREAM serves another client, and its close is a
 * fault with nothing delivered. Large real packets (a 65535-byte header,
 * a 1 MiB body, cut across many reads) arrive whole. Packets left unread,
 * and one half gathered, are released by the close (ASan's leak check). */
static void stream_packet_large_and_claimed(void)
{
    printf("# covers STREAM/23 (bounded decoder), large packets, close with unread packets\n");
    void *ctx = zlt_ctx_new();
    void *s = packet_stream_new(ctx);
    void *m = pk_monitor(s, ZLINK_EVENT_CONNECTION_READY | ZLINK_EVENT_DISCONNECTED);
    int port = stream_bind(s);
    int liar = raw_connect(port);
    zlink_routing_id_t liar_rid = pk_event(m, ZLINK_EVENT_CONNECTION_READY).rid;
    unsigned char claim[6 + 100];
    pk_prefix(claim, 0, 0xFFFFFFFFu);
    memset(claim + 6, 'L', 100);
    uint64_t peak_before = vm_peak_bytes();
    raw_send(liar, claim, sizeof claim);

    int fd = raw_connect(port);
    zlink_routing_id_t rid = pk_event(m, ZLINK_EVENT_CONNECTION_READY).rid;
    enum { HL = 65535, BL = 1024 * 1024 + 3 };
    size_t cap = 3 * (6 + (size_t)HL + BL);
    unsigned char *w = malloc(cap);
    ZT_CHECK(w != NULL);
    unsigned char *hdr = malloc(HL), *body = malloc(BL);
    ZT_CHECK(hdr != NULL && body != NULL);
    for (size_t i = 0; i < HL; i++)
        hdr[i] = pattern(i, 1);
    for (size_t i = 0; i < BL; i++)
        body[i] = pattern(i, 2);
    size_t n = 0;
    pk_append(w, cap, &n, "a", 1, "b", 1);
    pk_append(w, cap, &n, hdr, HL, body, BL);
    pk_append(w, cap, &n, "c", 1, "d", 1);
    raw_send(fd, w, n);
    pk_expect(s, &rid, "a", "b");
    zlink_msg_t h, b;
    ZT_EQ_INT(zlink_msg_init(&h), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&b), ZLINK_CONFIG_OK);
    const zlink_routing_id_t *view = NULL;
    ZT_EQ_INT(zlink_stream_recv_packet(s, &view, &h, &b, 0), ZLINK_RECV_OK);
    ZT_CHECK(view != NULL && zlt_rid_eq(view, &rid));
    ZT_EQ_INT(zlink_msg_size(&h), HL);
    ZT_EQ_INT(zlink_msg_size(&b), BL);
    ZT_EQ_MEM(zlink_msg_data(&h), hdr, HL);
    ZT_EQ_MEM(zlink_msg_data(&b), body, BL);
    zlink_msg_close(&h);
    zlink_msg_close(&b);
    pk_expect(s, &rid, "c", "d");

    /* The liar is still connected (no event since its READY). */
    zlink_monitor_event_t ev;
    memset(&ev, 0, sizeof ev);
    ZT_EQ_INT(zlink_socket_monitor_recv(m, &ev, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_NO_DATA);
    /* Its close: a fault, and its bytes never surface. */
    close(liar);
    ev = pk_event(m, ZLINK_EVENT_DISCONNECTED);
    ZT_CHECK(zlt_rid_eq(&ev.rid, &liar_rid));
    ZT_EQ_U64(ev.value, ZLINK_DISCONNECT_TRANSPORT_ERROR);
    pk_expect_none(s);
    uint64_t grown = vm_peak_bytes() - peak_before;
    printf("# peak virtual size grew by %llu KiB\n", (unsigned long long)(grown / 1024));
    ZT_CHECK(grown < 1024ull * 1024 * 1024);

    /* Left for the close: a whole large packet, a small one, and the
     * first half of another large one. */
    n = 0;
    pk_append(w, cap, &n, hdr, HL, body, BL);
    pk_append(w, cap, &n, "e", 1, "f", 1);
    pk_append(w, cap, &n, hdr, HL, body, BL);
    raw_send(fd, w, n - BL / 2);
    void *mm = m;
    ZT_EVENTUALLY(pk_pending(mm) == 2, 5000);
    ZT_EQ_INT(zlink_monitor_close(&m), ZLINK_CLOSE_OK);
    zlt_close(s);
    close(fd);
    free(w);
    free(hdr);
    free(body);
    zlt_ctx_term(ctx);
}

static const zt_case_t cases[] = {
    ZT_CASE(stream_01_unspecified_mode),
    ZT_CASE(stream_02_raw_only),
    ZT_CASE(stream_04_mode_frozen_after_bind),
    ZT_CASE(stream_06_notify),
    ZT_CASE(stream_08_zero_length_send_closes),
    ZT_CASE(stream_09_parts_consumed),
    ZT_CASE(stream_10_none_id_zero),
    ZT_CASE(stream_13_no_connection),
    ZT_CASE(stream_14_receive_ownership),
    ZT_CASE(stream_16_no_data),
    ZT_CASE(stream_17_rid_lifetime),
    ZT_CASE(stream_21_per_rid_order),
    ZT_CASE(stream_22_rcvhwm_stops_reads_no_drop),
    ZT_CASE(stream_23_midstream_close),
    ZT_CASE(stream_28_rid_must_be_4_bytes),
    ZT_CASE(stream_28_disconnect_rid_closes_peer),
    ZT_CASE(stream_connect_outbound),
    ZT_CASE(stream_second_process),
    ZT_CASE(stream_packet_03_packet_receive_only),
    ZT_CASE(stream_packet_04_mode_fixed),
    ZT_CASE(stream_packet_05_notify_not_supported),
    ZT_CASE(stream_packet_06_monitor_reports_connections),
    ZT_CASE(stream_packet_sends_are_raw),
    ZT_CASE(stream_packet_18_empty_parts),
    ZT_CASE(stream_packet_19_split_prefix),
    ZT_CASE(stream_packet_20_output_validation),
    ZT_CASE(stream_packet_21_order),
    ZT_CASE(stream_packet_22_rcvhwm_stops_reads),
    ZT_CASE(stream_packet_23_malformed_and_cut),
    ZT_CASE(stream_packet_23_limit_at_prefix),
    ZT_CASE(stream_packet_large_and_claimed),
};

static const zt_role_t roles[] = {
    ZT_ROLE("stream-child", stream_child),
};

int main(int argc, char **argv)
{
    return zt_main_roles(argc, argv, cases, ZT_NCASES(cases), roles, ZT_NCASES(roles));
}
