/*
 * test_router.c — core-contract §8 "ROUTER [G3]" and the routing-id rules
 * of §1 (default UUIDv4 ids, CONNECT_ROUTING_ID, duplicate ids), through
 * the public API (zlink.h) only. doc/contract-tests/
 * dealer_router_pubsub_stream.md maps every item to a function here or
 * says why it is elsewhere or later.
 *
 * Each case runs over inproc and tcp where the transport matters. tcp
 * binds "tcp://127.0.0.1:0" and connects to ZLINK_LAST_ENDPOINT. No
 * sleeps: a DEALER's NONE send waits for its first peer; when a ROUTER
 * must reach a peer it has not heard from, it retries its non-blocking
 * submit while MANDATORY routing reports NOT_CONNECTED (bounded), which
 * ends as soon as the handshake is done.
 */
#include "zlink.h"
#include "zltest.h"

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

#define T_MS(ms) ((int)((ms) * zt_timeout_mult()))

static const char *const TRANSPORTS[] = {"inproc", "tcp"};
#define NTRANSPORTS 2

static void *ctx_new(void)
{
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    return ctx;
}

static void ctx_term(void *ctx)
{
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static void set_int(void *s, int opt, int v)
{
    ZT_EQ_INT(zlink_setsockopt(s, opt, &v, sizeof v), ZLINK_CONFIG_OK);
}

static int get_int(void *s, int opt)
{
    int v = -12345;
    size_t n = sizeof v;
    ZT_EQ_INT(zlink_getsockopt(s, opt, &v, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(n, sizeof v);
    return v;
}

/* LINGER 0 and generous (scaled) timeouts: a failing case reports instead
 * of hanging, and ctx_term never waits for a peer. */
static void *sock_new(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    ZT_CHECK(s != NULL);
    set_int(s, ZLINK_LINGER, 0);
    set_int(s, ZLINK_SNDTIMEO, T_MS(2000));
    set_int(s, ZLINK_RCVTIMEO, T_MS(2000));
    return s;
}

static void sock_close(void *s)
{
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
}

static void set_rid(void *s, const char *id)
{
    ZT_EQ_INT(zlink_set_routing_id(s, id, strlen(id)), ZLINK_CONFIG_OK);
}

static bool is_tcp(const char *tr)
{
    return strcmp(tr, "tcp") == 0;
}

static void bind_ep(void *s, const char *tr, char *ep, size_t cap)
{
    static int counter;
    if (is_tcp(tr)) {
        ZT_EQ_INT(zlink_bind(s, "tcp://127.0.0.1:0"), ZLINK_BIND_OK);
        size_t n = cap;
        ZT_EQ_INT(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &n), ZLINK_CONFIG_OK);
        ZT_CHECK(strncmp(ep, "tcp://127.0.0.1:", 16) == 0);
        ZT_CHECK(strcmp(ep, "tcp://127.0.0.1:0") != 0);
    } else {
        snprintf(ep, cap, "inproc://router-%ld-%d", (long)getpid(), ++counter);
        ZT_EQ_INT(zlink_bind(s, ep), ZLINK_BIND_OK);
    }
}

static void connect_ep(void *s, const char *ep)
{
    ZT_EQ_INT(zlink_connect(s, ep), ZLINK_CONNECT_OK);
}

static void msg_set(zlink_msg_t *m, const void *data, size_t len)
{
    ZT_EQ_INT(zlink_msg_init_size(m, len), ZLINK_CONFIG_OK);
    if (len > 0)
        memcpy(zlink_msg_data(m), data, len);
}

static void rid_set(zlink_routing_id_t *r, const char *s)
{
    memset(r, 0, sizeof *r);
    r->size = (uint8_t)strlen(s);
    memcpy(r->data, s, r->size);
}

static bool rid_is(const zlink_routing_id_t *r, const char *s)
{
    return r != NULL && r->size == strlen(s) && memcmp(r->data, s, r->size) == 0;
}

static zlink_submit_result_t send_str(void *s, const char *text, int flags)
{
    zlink_msg_t m;
    msg_set(&m, text, strlen(text));
    zlink_submit_result_t rc = zlink_send(s, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return rc;
}

static zlink_submit_result_t send_to(void *s, const zlink_routing_id_t *rid, const char *text,
                                     int flags)
{
    zlink_msg_t m;
    msg_set(&m, text, strlen(text));
    zlink_submit_result_t rc = zlink_send_rid(s, rid, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
    ZT_EQ_INT(zlink_msg_size(&m), 0); /* consumed on success and failure */
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return rc;
}

static zlink_submit_result_t send_rid_str(void *s, const char *rid, const char *text, int flags)
{
    zlink_routing_id_t r;
    rid_set(&r, rid);
    return send_to(s, &r, text, flags);
}

static zlink_recv_result_t d_recv(void *s, char *buf, size_t cap, int flags)
{
    zlink_msg_t parts[4];
    size_t count = 0;
    zlink_recv_result_t rc = zlink_recv(s, NULL, parts, 4, &count, (zlink_recv_flags_t)flags);
    if (rc != ZLINK_RECV_OK)
        return rc;
    ZT_EQ_INT(count, 1);
    size_t n = zlink_msg_size(&parts[0]);
    ZT_CHECK(n < cap);
    if (n > 0)
        memcpy(buf, zlink_msg_data(&parts[0]), n);
    buf[n] = '\0';
    zlink_multipart_close(parts, count);
    return rc;
}

static void d_expect(void *s, const char *want)
{
    char buf[256];
    ZT_EQ_INT(d_recv(s, buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_EQ_STR(buf, want);
}

/* One single-part record from a ROUTER; *rid_out gets a copy of the view. */
static zlink_recv_result_t r_recv(void *r, zlink_routing_id_t *rid_out, char *buf, size_t cap,
                                  int flags)
{
    zlink_msg_t parts[4];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 99;
    zlink_recv_result_t rc =
        zlink_router_recv(r, &rid, &tok, parts, 4, &count, (zlink_recv_flags_t)flags);
    if (rc != ZLINK_RECV_OK)
        return rc;
    ZT_CHECK(rid != NULL);
    ZT_EQ_U64(tok, 0);
    ZT_EQ_INT(count, 1);
    if (rid_out != NULL)
        *rid_out = *rid;
    size_t n = zlink_msg_size(&parts[0]);
    ZT_CHECK(n < cap);
    if (n > 0)
        memcpy(buf, zlink_msg_data(&parts[0]), n);
    buf[n] = '\0';
    zlink_multipart_close(parts, count);
    return rc;
}

static void r_expect_from(void *r, const char *rid, const char *want)
{
    char buf[256];
    zlink_routing_id_t got;
    ZT_EQ_INT(r_recv(r, &got, buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_EQ_STR(buf, want);
    if (rid != NULL && !rid_is(&got, rid))
        ZT_FAIL("record '%s' came from a %u-byte id, not '%s'", want, got.size, rid);
}

/* Router r sends one record to rid once it has a route (bounded retry of
 * a non-blocking submit while the handshake is not done). */
static void router_send_when_routable(void *r, const char *rid, const char *text)
{
    int64_t end = zt_now_ms() + T_MS(3000);
    for (;;) {
        zlink_submit_result_t rc = send_rid_str(r, rid, text, ZLINK_DONTWAIT);
        if (rc == ZLINK_SUBMIT_OK)
            return;
        ZT_EQ_INT(rc, ZLINK_SUBMIT_NOT_CONNECTED);
        if (zt_now_ms() > end)
            ZT_FAIL("no route from the router to '%s'", rid);
        sched_yield();
    }
}

/* A router (bound) and a dealer with routing id drid that has sent one
 * record, received by the router: both directions work. */
static void *dealer_to(void *ctx, void *r, const char *ep, const char *drid)
{
    void *d = sock_new(ctx, ZLINK_DEALER);
    if (drid != NULL)
        set_rid(d, drid);
    connect_ep(d, ep);
    ZT_EQ_INT(send_str(d, "hello", 0), ZLINK_SUBMIT_OK); /* waits for the peer */
    r_expect_from(r, drid, "hello");
    return d;
}

static bool is_uuid4(const zlink_routing_id_t *r)
{
    return r->size == 16 && (r->data[6] & 0xF0) == 0x40 && (r->data[8] & 0xC0) == 0x80;
}

/* ------------------------------------------------------------------ cases */

/* ROUTER 1: getsockopt writes the value's length into *size and nothing
 * beyond it; a too small buffer is EINVAL with nothing written. */
static void router_01_get_writes_optvallen(void)
{
    printf("# covers ROUTER/1\n");
    void *ctx = ctx_new();
    void *r = sock_new(ctx, ZLINK_ROUTER);
    const int opts[] = {ZLINK_ROUTER_MANDATORY, ZLINK_ROUTER_PROBE,
                        ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, ZLINK_ROUTER_WEIGHT, ZLINK_TYPE};
    const int want[] = {1, 0, ZLINK_REQUEST_TIMEOUT_DFLT, ZLINK_WEIGHT_DFLT, ZLINK_ROUTER};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        unsigned char buf[16];
        memset(buf, 0xCD, sizeof buf);
        size_t n = sizeof buf;
        ZT_EQ_INT(zlink_getsockopt(r, opts[i], buf, &n), ZLINK_CONFIG_OK);
        ZT_EQ_INT(n, sizeof(int));
        int v;
        memcpy(&v, buf, sizeof v);
        ZT_EQ_INT(v, want[i]);
        for (size_t k = sizeof(int); k < sizeof buf; k++)
            ZT_EQ_INT(buf[k], 0xCD);
        memset(buf, 0xCD, sizeof buf);
        n = 3;
        ZT_EQ_INT(zlink_getsockopt(r, opts[i], buf, &n), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        for (size_t k = 0; k < sizeof buf; k++)
            ZT_EQ_INT(buf[k], 0xCD);
    }
    /* A DEALER option on a ROUTER is EINVAL. */
    int v;
    size_t n = sizeof v;
    ZT_EQ_INT(zlink_getsockopt(r, ZLINK_DEALER_WEIGHT, &v, &n), ZLINK_CONFIG_INVALID_ARGUMENT);
    sock_close(r);
    ctx_term(ctx);
}

/* ROUTER 2: defaults MANDATORY 1, PROBE 0, REQUEST_TIMEOUT 5000,
 * WEIGHT 100; each reads back what was set; WEIGHT keeps its range. */
static void router_02_defaults(void)
{
    printf("# covers ROUTER/2, ROUTER/6 (weight range)\n");
    void *ctx = ctx_new();
    void *r = zlink_socket(ctx, ZLINK_ROUTER);
    ZT_CHECK(r != NULL);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_MANDATORY), 1);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_PROBE), 0);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS), 5000);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_WEIGHT), 100);
    /* The shared defaults a ROUTER starts with. */
    ZT_EQ_INT(get_int(r, ZLINK_SNDTIMEO), ZLINK_TIMEO_DFLT);
    ZT_EQ_INT(get_int(r, ZLINK_RCVTIMEO), ZLINK_TIMEO_DFLT);
    uint64_t hwm = 0;
    size_t n = sizeof hwm;
    ZT_EQ_INT(zlink_getsockopt(r, ZLINK_SNDHWM, &hwm, &n), ZLINK_CONFIG_OK);
    ZT_EQ_U64(hwm, ZLINK_HWM_DFLT);
    ZT_EQ_INT(zlink_getsockopt(r, ZLINK_RCVHWM, &hwm, &n), ZLINK_CONFIG_OK);
    ZT_EQ_U64(hwm, ZLINK_HWM_DFLT);

    set_int(r, ZLINK_ROUTER_MANDATORY, 0);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_MANDATORY), 0);
    set_int(r, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, 1234);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS), 1234);
    set_int(r, ZLINK_ROUTER_WEIGHT, 0);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_WEIGHT), 0);
    set_int(r, ZLINK_ROUTER_WEIGHT, 10000);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_WEIGHT), 10000);
    const int bad_weights[] = {-1, 10001};
    for (int i = 0; i < 2; i++) {
        ZT_EQ_INT(zlink_setsockopt(r, ZLINK_ROUTER_WEIGHT, &bad_weights[i], sizeof(int)),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(get_int(r, ZLINK_ROUTER_WEIGHT), 10000);
    }
    int v = 2;
    ZT_EQ_INT(zlink_setsockopt(r, ZLINK_ROUTER_MANDATORY, &v, sizeof v),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    /* ROUTER options are EINVAL on a DEALER. */
    void *d = zlink_socket(ctx, ZLINK_DEALER);
    ZT_CHECK(d != NULL);
    v = 1;
    ZT_EQ_INT(zlink_setsockopt(d, ZLINK_ROUTER_MANDATORY, &v, sizeof v),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_setsockopt(d, ZLINK_ROUTER_WEIGHT, &v, sizeof v),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    sock_close(d);
    sock_close(r);
    ctx_term(ctx);
}

/* ROUTER 3: MANDATORY 1 (default): a routing id with no route is
 * NOT_CONNECTED/EHOSTUNREACH (parts consumed, id_out 0); MANDATORY 0: the
 * send is OK and the record is dropped (the peer never sees it). */
static void router_03_mandatory_unknown_rid(void)
{
    printf("# covers ROUTER/3\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *d = dealer_to(ctx, r, ep, "D");

        zlink_routing_id_t nobody;
        rid_set(&nobody, "nobody");
        zlink_completion_id_t id = 1234;
        zlink_msg_t m[2];
        msg_set(&m[0], "a", 1);
        msg_set(&m[1], "b", 1);
        ZT_EQ_INT(zlink_send_rid(r, &nobody, m, 2, ZLINK_SEND_FLAGS_NONE, NULL, &id),
                  ZLINK_SUBMIT_NOT_CONNECTED);
        ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_size(&m[1]), 0);
        zlink_multipart_close(m, 2);
        ZT_EQ_INT(send_rid_str(r, "nobody", "x", ZLINK_DONTWAIT), ZLINK_SUBMIT_NOT_CONNECTED);
        ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
        /* A prefix or extension of a known id is not that id. */
        ZT_EQ_INT(send_rid_str(r, "DD", "x", 0), ZLINK_SUBMIT_NOT_CONNECTED);
        /* Missing or empty routing id: INVALID_ARGUMENT. */
        zlink_routing_id_t empty;
        memset(&empty, 0, sizeof empty);
        ZT_EQ_INT(send_to(r, &empty, "x", 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(send_to(r, NULL, "x", 0), ZLINK_SUBMIT_INVALID_ARGUMENT);

        set_int(r, ZLINK_ROUTER_MANDATORY, 0);
        id = 99;
        msg_set(&m[0], "dropped", 7);
        ZT_EQ_INT(zlink_send_rid(r, &nobody, m, 1, ZLINK_SEND_FLAGS_NONE, NULL, &id),
                  ZLINK_SUBMIT_OK);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(send_rid_str(r, "DD", "dropped-too", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(send_rid_str(r, "D", "kept", 0), ZLINK_SUBMIT_OK);
        d_expect(d, "kept"); /* nothing else arrived first */
        char buf[64];
        ZT_EQ_INT(d_recv(d, buf, sizeof buf, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
        /* The peer gone: its id is unknown again. */
        set_int(r, ZLINK_ROUTER_MANDATORY, 1);
        sock_close(d);
        int64_t end = zt_now_ms() + T_MS(3000);
        zlink_submit_result_t rc;
        while ((rc = send_rid_str(r, "D", "late", ZLINK_DONTWAIT)) == ZLINK_SUBMIT_OK) {
            ZT_CHECK(zt_now_ms() < end); /* tcp: the close reaches r asynchronously */
            sched_yield();
        }
        ZT_EQ_INT(rc, ZLINK_SUBMIT_NOT_CONNECTED);
        sock_close(r);
        ctx_term(ctx);
    }
}

/* ROUTER 4 (option part): PROBE is 0 by default, 0/1 accepted, else EINVAL. */
static void router_04_probe_option(void)
{
    printf("# covers ROUTER/4 (option values)\n");
    void *ctx = ctx_new();
    void *r = sock_new(ctx, ZLINK_ROUTER);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_PROBE), 0);
    set_int(r, ZLINK_ROUTER_PROBE, 1);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_PROBE), 1);
    int v = -1;
    ZT_EQ_INT(zlink_setsockopt(r, ZLINK_ROUTER_PROBE, &v, sizeof v),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(get_int(r, ZLINK_ROUTER_PROBE), 1);
    sock_close(r);
    ctx_term(ctx);
}

/* ROUTER 5: ZLINK_CONNECT_ROUTING_ID names the peer of the next connect
 * (it replaces the id the peer announces), only that connect; it is
 * set-only and ROUTER-only. */
static void router_05_connect_routing_id(void)
{
    printf("# covers ROUTER/5\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep1[256], ep2[256];
        void *d1 = sock_new(ctx, ZLINK_DEALER);
        void *d2 = sock_new(ctx, ZLINK_DEALER);
        set_rid(d1, "real1");
        set_rid(d2, "real2");
        bind_ep(d1, tr, ep1, sizeof ep1);
        bind_ep(d2, tr, ep2, sizeof ep2);
        void *rc = sock_new(ctx, ZLINK_ROUTER);
        ZT_EQ_INT(zlink_setsockopt(rc, ZLINK_CONNECT_ROUTING_ID, "alias1", 6), ZLINK_CONFIG_OK);
        connect_ep(rc, ep1);
        connect_ep(rc, ep2); /* no alias for this one */
        router_send_when_routable(rc, "alias1", "to-alias1");
        d_expect(d1, "to-alias1");
        router_send_when_routable(rc, "real2", "to-real2");
        d_expect(d2, "to-real2");
        /* d1 is known only by its alias. */
        ZT_EQ_INT(send_rid_str(rc, "real1", "x", 0), ZLINK_SUBMIT_NOT_CONNECTED);
        char buf[64];
        ZT_EQ_INT(d_recv(d1, buf, sizeof buf, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
        /* Records from d1 carry the alias, from d2 its own id. */
        ZT_EQ_INT(send_str(d1, "from-d1", 0), ZLINK_SUBMIT_OK);
        r_expect_from(rc, "alias1", "from-d1");
        ZT_EQ_INT(send_str(d2, "from-d2", 0), ZLINK_SUBMIT_OK);
        r_expect_from(rc, "real2", "from-d2");
        /* Set-only; ROUTER-only; 1..255 bytes. */
        char out[256];
        size_t n = sizeof out;
        ZT_EQ_INT(zlink_getsockopt(rc, ZLINK_CONNECT_ROUTING_ID, out, &n),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_setsockopt(d1, ZLINK_CONNECT_ROUTING_ID, "x", 1),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_setsockopt(rc, ZLINK_CONNECT_ROUTING_ID, "x", 0),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        char big[256];
        memset(big, 'b', sizeof big);
        ZT_EQ_INT(zlink_setsockopt(rc, ZLINK_CONNECT_ROUTING_ID, big, 256),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        sock_close(rc);
        sock_close(d1);
        sock_close(d2);
        ctx_term(ctx);
    }
}

/* ROUTER 7 (DATA part): a DATA record comes with token 0. */
static void router_07_data_token_zero(void)
{
    printf("# covers ROUTER/7 (DATA part)\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *d = sock_new(ctx, ZLINK_DEALER);
        set_rid(d, "D");
        connect_ep(d, ep);
        for (int i = 0; i < 5; i++)
            ZT_EQ_INT(send_str(d, "data", 0), ZLINK_SUBMIT_OK);
        for (int i = 0; i < 5; i++) {
            zlink_msg_t parts[2];
            size_t count = 0;
            const zlink_routing_id_t *rid = NULL;
            zlink_reply_token_t tok = 0xDEADBEEFull;
            ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 2, &count, 0), ZLINK_RECV_OK);
            ZT_EQ_U64(tok, 0);
            ZT_CHECK(rid_is(rid, "D"));
            zlink_multipart_close(parts, count);
        }
        sock_close(d);
        sock_close(r);
        ctx_term(ctx);
    }
}

/* ROUTER 8: every receive is one whole record with the one routing id it
 * came from, even with two peers sending multipart records at once. */
static void router_08_whole_record_one_rid(void)
{
    printf("# covers ROUTER/8\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *d1 = dealer_to(ctx, r, ep, "d1");
        void *d2 = dealer_to(ctx, r, ep, "d2");
        enum { N = 100 };
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < 2; k++) {
                zlink_msg_t m[3];
                msg_set(&m[0], k == 0 ? "d1" : "d2", 2);
                msg_set(&m[1], &i, sizeof i);
                msg_set(&m[2], "end", 3);
                ZT_EQ_INT(zlink_send(k == 0 ? d1 : d2, m, 3, 0, NULL, NULL), ZLINK_SUBMIT_OK);
            }
        }
        int next[2] = {0, 0};
        for (int j = 0; j < 2 * N; j++) {
            zlink_msg_t parts[4];
            size_t count = 0;
            const zlink_routing_id_t *rid = NULL;
            zlink_reply_token_t tok = 7;
            ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 4, &count, 0), ZLINK_RECV_OK);
            ZT_EQ_INT(count, 3);
            ZT_EQ_U64(tok, 0);
            ZT_CHECK(rid != NULL && rid->size == 2);
            ZT_EQ_INT(zlink_msg_size(&parts[0]), 2);
            ZT_EQ_MEM(zlink_msg_data(&parts[0]), rid->data, 2); /* the one source */
            int k = rid_is(rid, "d1") ? 0 : 1;
            ZT_CHECK(k == 1 ? rid_is(rid, "d2") : true);
            int i;
            memcpy(&i, zlink_msg_data(&parts[1]), sizeof i);
            ZT_EQ_INT(i, next[k]);
            next[k]++;
            ZT_EQ_MEM(zlink_msg_data(&parts[2]), "end", 3);
            zlink_multipart_close(parts, count);
        }
        ZT_EQ_INT(next[0], N);
        ZT_EQ_INT(next[1], N);
        sock_close(d1);
        sock_close(d2);
        sock_close(r);
        ctx_term(ctx);
    }
}

/* ROUTER 10: nothing queued: DONTWAIT is NO_DATA/EAGAIN at once, NONE
 * after RCVTIMEO; outputs untouched. */
static void router_10_no_data(void)
{
    printf("# covers ROUTER/10\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *d = dealer_to(ctx, r, ep, "D");
        zlink_msg_t parts[2];
        size_t count = 5;
        const zlink_routing_id_t *rid = (const zlink_routing_id_t *)(uintptr_t)0x8;
        zlink_reply_token_t tok = 77;
        ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 2, &count, ZLINK_DONTWAIT),
                  ZLINK_RECV_NO_DATA);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_EQ_INT(count, 5);
        ZT_EQ_U64(tok, 77);
        ZT_CHECK(rid == (const zlink_routing_id_t *)(uintptr_t)0x8);
        set_int(r, ZLINK_RCVTIMEO, 40);
        int64_t t0 = zt_now_ms();
        ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 2, &count, 0), ZLINK_RECV_NO_DATA);
        int64_t waited = zt_now_ms() - t0;
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_CHECK(waited >= 40);
        ZT_CHECK(waited < T_MS(1000));
        ZT_EQ_INT(count, 5);
        sock_close(d);
        sock_close(r);
        ctx_term(ctx);
    }
}

/* ROUTER 11: received parts belong to the caller: they outlive the next
 * receive and the socket's close; the routing id view shows the id of the
 * record just received and is not disturbed by sends. */
static void router_11_ownership(void)
{
    printf("# covers ROUTER/11\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *d1 = dealer_to(ctx, r, ep, "d1");
        void *d2 = dealer_to(ctx, r, ep, "d2");
        static unsigned char big[5000];
        memset(big, 0x5C, sizeof big);
        zlink_msg_t m[2];
        msg_set(&m[0], "first", 5);
        msg_set(&m[1], big, sizeof big);
        ZT_EQ_INT(zlink_send(d1, m, 2, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        zlink_multipart_close(m, 2);

        zlink_msg_t a[2], b[2];
        size_t na = 0, nb = 0;
        const zlink_routing_id_t *rid = NULL;
        ZT_EQ_INT(zlink_router_recv(r, &rid, NULL, a, 2, &na, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(na, 2);
        ZT_CHECK(rid_is(rid, "d1"));
        /* Sends do not disturb the view. */
        ZT_EQ_INT(send_rid_str(r, "d2", "ping", 0), ZLINK_SUBMIT_OK);
        ZT_CHECK(rid_is(rid, "d1"));
        d_expect(d2, "ping");
        ZT_EQ_INT(send_str(d2, "second", 0), ZLINK_SUBMIT_OK);
        const zlink_routing_id_t *rid2 = NULL;
        ZT_EQ_INT(zlink_router_recv(r, &rid2, NULL, b, 2, &nb, 0), ZLINK_RECV_OK);
        ZT_CHECK(rid_is(rid2, "d2"));
        ZT_EQ_INT(nb, 1);
        /* The first record's parts are intact after another receive ... */
        ZT_EQ_MEM(zlink_msg_data(&a[0]), "first", 5);
        sock_close(d1);
        sock_close(d2);
        sock_close(r);
        /* ... and after the socket is gone. */
        ZT_EQ_INT(zlink_msg_size(&a[1]), sizeof big);
        ZT_EQ_MEM(zlink_msg_data(&a[1]), big, sizeof big);
        ZT_EQ_MEM(zlink_msg_data(&b[0]), "second", 6);
        zlink_multipart_close(a, na);
        zlink_multipart_close(b, nb);
        ctx_term(ctx);
    }
}

/* ROUTER 12: more parts than cap: BUFFER_TOO_SMALL/ENOBUFS with the needed
 * count, nothing consumed; the retry returns the same record once. */
static void router_12_buffer_too_small(void)
{
    printf("# covers ROUTER/12\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *d = dealer_to(ctx, r, ep, "D");
        zlink_msg_t m[4];
        for (int i = 0; i < 4; i++)
            msg_set(&m[i], "part", 4);
        ZT_EQ_INT(zlink_send(d, m, 4, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(send_str(d, "after", 0), ZLINK_SUBMIT_OK);
        zlink_msg_t parts[4];
        size_t count = 0;
        const zlink_routing_id_t *rid = (const zlink_routing_id_t *)(uintptr_t)0x8;
        zlink_reply_token_t tok = 5;
        ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 3, &count, 0),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(zlink_errno(), ENOBUFS);
        ZT_EQ_INT(count, 4);
        ZT_CHECK(rid == (const zlink_routing_id_t *)(uintptr_t)0x8);
        count = 0;
        ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 1, &count, ZLINK_DONTWAIT),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(count, 4);
        ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 4, &count, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(count, 4);
        ZT_CHECK(rid_is(rid, "D"));
        ZT_EQ_U64(tok, 0);
        for (int i = 0; i < 4; i++)
            ZT_EQ_MEM(zlink_msg_data(&parts[i]), "part", 4);
        zlink_multipart_close(parts, count);
        r_expect_from(r, "D", "after");
        sock_close(d);
        sock_close(r);
        ctx_term(ctx);
    }
}

/* ROUTER 13: a DEALER sends three records and closes at once: the ROUTER
 * still receives all three, in order. */
static void router_13_dealer_sends_3_and_closes(void)
{
    printf("# covers ROUTER/13\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *d = sock_new(ctx, ZLINK_DEALER);
        set_int(d, ZLINK_LINGER, T_MS(2000)); /* flush what was admitted */
        set_rid(d, "D");
        connect_ep(d, ep);
        ZT_EQ_INT(send_str(d, "one", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(send_str(d, "two", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(send_str(d, "three", 0), ZLINK_SUBMIT_OK);
        sock_close(d);
        r_expect_from(r, "D", "one");
        r_expect_from(r, "D", "two");
        r_expect_from(r, "D", "three");
        char buf[32];
        set_int(r, ZLINK_RCVTIMEO, 50);
        ZT_EQ_INT(r_recv(r, NULL, buf, sizeof buf, 0), ZLINK_RECV_NO_DATA);
        sock_close(r);
        ctx_term(ctx);
    }
}

/* ROUTER 16: zlink_recv on a ROUTER (and the other typed calls that are
 * not for ROUTERs) is NOT_SUPPORTED/ENOTSUP; a send that is refused still
 * consumes its parts. */
static void router_16_recv_not_supported(void)
{
    printf("# covers ROUTER/16\n");
    void *ctx = ctx_new();
    char ep[256];
    void *r = sock_new(ctx, ZLINK_ROUTER);
    bind_ep(r, "inproc", ep, sizeof ep);
    void *d = dealer_to(ctx, r, ep, "D");
    ZT_EQ_INT(send_str(d, "queued", 0), ZLINK_SUBMIT_OK);
    zlink_msg_t parts[2];
    size_t count = 9;
    ZT_EQ_INT(zlink_recv(r, NULL, parts, 2, &count, 0), ZLINK_RECV_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    ZT_EQ_INT(count, 9);
    char topic[8];
    size_t tlen = 0;
    ZT_EQ_INT(zlink_subscribe(r, NULL, topic, sizeof topic, &tlen, parts, 2, &count, 0),
              ZLINK_RECV_NOT_SUPPORTED);
    ZT_EQ_INT(send_str(r, "x", 0), ZLINK_SUBMIT_NOT_SUPPORTED); /* checks consumption */
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    zlink_msg_t m;
    msg_set(&m, "x", 1);
    ZT_EQ_INT(zlink_publish(r, "t", &m, 1, 0), ZLINK_SUBMIT_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    /* zlink_router_recv on a DEALER is NOT_SUPPORTED too. */
    const zlink_routing_id_t *rid = NULL;
    ZT_EQ_INT(zlink_router_recv(d, &rid, NULL, parts, 2, &count, 0), ZLINK_RECV_NOT_SUPPORTED);
    /* The record is still there for zlink_router_recv. */
    r_expect_from(r, "D", "queued");
    sock_close(d);
    sock_close(r);
    ctx_term(ctx);
}

/* §1: without zlink_set_routing_id a peer is named by 16 bytes in UUIDv4
 * layout (version 4, RFC 4122 variant), distinct per socket, and that id
 * routes back to it. */
static void router_default_rid_uuid4(void)
{
    printf("# covers socket/README 24 (default RID 16-byte UUIDv4), core-contract §1\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        bind_ep(r, tr, ep, sizeof ep);
        void *ds[3];
        zlink_routing_id_t ids[3];
        for (int i = 0; i < 3; i++) {
            ds[i] = sock_new(ctx, ZLINK_DEALER);
            connect_ep(ds[i], ep);
            char text[32];
            snprintf(text, sizeof text, "from-%d", i);
            ZT_EQ_INT(send_str(ds[i], text, 0), ZLINK_SUBMIT_OK);
            char buf[32];
            ZT_EQ_INT(r_recv(r, &ids[i], buf, sizeof buf, 0), ZLINK_RECV_OK);
            ZT_EQ_STR(buf, text);
            ZT_EQ_INT(ids[i].size, 16);
            if (!is_uuid4(&ids[i]))
                ZT_FAIL("id of dealer %d: byte6 %02x byte8 %02x", i, ids[i].data[6],
                        ids[i].data[8]);
        }
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 3; j++)
                ZT_CHECK(memcmp(ids[i].data, ids[j].data, 16) != 0);
        for (int i = 0; i < 3; i++) {
            char text[32];
            snprintf(text, sizeof text, "to-%d", i);
            ZT_EQ_INT(send_to(r, &ids[i], text, 0), ZLINK_SUBMIT_OK);
            d_expect(ds[i], text);
        }
        for (int i = 0; i < 3; i++)
            sock_close(ds[i]);
        sock_close(r);
        ctx_term(ctx);
    }
}

/* §1: RID_DUPLICATE_POLICY REJECT (the default): a second peer announcing a
 * routing id already in use is refused and the old pipe is kept: records
 * to that id keep reaching the first peer and the second peer's records
 * never reach the ROUTER. Over inproc the refusal is the connect result
 * (CONFLICT/EEXIST); over tcp it happens in the handshake. */
static void router_duplicate_rid_rejected(void)
{
    printf("# covers core-contract §1 (RID_DUPLICATE_POLICY REJECT default)\n");
    for (int t = 0; t < NTRANSPORTS; t++) {
        const char *tr = TRANSPORTS[t];
        printf("# transport %s\n", tr);
        void *ctx = ctx_new();
        char ep[256];
        void *r = sock_new(ctx, ZLINK_ROUTER);
        ZT_EQ_INT(get_int(r, ZLINK_OPT_RID_DUPLICATE_POLICY), ZLINK_RID_DUPLICATE_REJECT);
        bind_ep(r, tr, ep, sizeof ep);
        void *d1 = dealer_to(ctx, r, ep, "dup");
        void *d2 = sock_new(ctx, ZLINK_DEALER);
        set_rid(d2, "dup");
        set_int(d2, ZLINK_SNDTIMEO, 200);
        zlink_connect_result_t crc = zlink_connect(d2, ep);
        if (is_tcp(tr)) {
            ZT_EQ_INT(crc, ZLINK_CONNECT_OK);
            /* Either never attached (BACKPRESSURED after 200 ms) or admitted
             * into a connection the ROUTER then refuses. */
            zlink_submit_result_t src = send_str(d2, "from-d2", 0);
            ZT_CHECK(src == ZLINK_SUBMIT_OK || src == ZLINK_SUBMIT_BACKPRESSURED);
        } else {
            ZT_EQ_INT(crc, ZLINK_CONNECT_CONFLICT);
            ZT_EQ_INT(zlink_errno(), EEXIST);
            ZT_EQ_INT(send_str(d2, "from-d2", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
        }
        for (int i = 0; i < 20; i++) {
            char text[32];
            snprintf(text, sizeof text, "to-dup-%d", i);
            ZT_EQ_INT(send_rid_str(r, "dup", text, 0), ZLINK_SUBMIT_OK);
        }
        for (int i = 0; i < 20; i++) {
            char text[32];
            snprintf(text, sizeof text, "to-dup-%d", i);
            d_expect(d1, text);
        }
        char buf[64];
        ZT_EQ_INT(d_recv(d2, buf, sizeof buf, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
        /* The old pipe still carries d1's records; d2's never arrive. */
        ZT_EQ_INT(send_str(d1, "d1-still-here", 0), ZLINK_SUBMIT_OK);
        r_expect_from(r, "dup", "d1-still-here");
        set_int(r, ZLINK_RCVTIMEO, 50);
        ZT_EQ_INT(r_recv(r, NULL, buf, sizeof buf, 0), ZLINK_RECV_NO_DATA);
        sock_close(d2);
        sock_close(d1);
        sock_close(r);
        ctx_term(ctx);
    }
}

int main(void)
{
    ZT_RUN(router_01_get_writes_optvallen);
    ZT_RUN(router_02_defaults);
    ZT_RUN(router_03_mandatory_unknown_rid);
    ZT_RUN(router_04_probe_option);
    ZT_RUN(router_05_connect_routing_id);
    ZT_RUN(router_07_data_token_zero);
    ZT_RUN(router_08_whole_record_one_rid);
    ZT_RUN(router_10_no_data);
    ZT_RUN(router_11_ownership);
    ZT_RUN(router_12_buffer_too_small);
    ZT_RUN(router_13_dealer_sends_3_and_closes);
    ZT_RUN(router_16_recv_not_supported);
    ZT_RUN(router_default_rid_uuid4);
    ZT_RUN(router_duplicate_rid_rejected);
    return zt_done();
}
