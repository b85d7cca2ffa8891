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
#include "zltest_zlink.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static bool is_uuid4(const zlink_routing_id_t *r)
{
    return r->size == 16 && (r->data[6] & 0xF0) == 0x40 && (r->data[8] & 0xC0) == 0x80;
}

/* A ROUTER bound on tr and a DEALER "D" connected to it; nothing sent. */
static void *router_and_dealer(void *ctx, const char *tr, void **d)
{
    char ep[256];
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_bind(r, tr, ep, sizeof ep);
    *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(*d, "D");
    zlt_connect(*d, ep);
    return r;
}

/* A ROUTER bound on tr with DEALERs "d1" and "d2" connected, each having
 * sent one record the ROUTER received (both directions up). */
static void *router_with_two_dealers(void *ctx, const char *tr, void **d1, void **d2)
{
    char ep[256];
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_bind(r, tr, ep, sizeof ep);
    *d1 = zlt_dealer_to(ctx, r, ep, "d1");
    *d2 = zlt_dealer_to(ctx, r, ep, "d2");
    return r;
}

/* ------------------------------------------------------------------ cases */

/* ROUTER 1: getsockopt writes the value's length into *size and nothing
 * beyond it; a too small buffer is EINVAL with nothing written. */
static void router_01_get_writes_optvallen(void)
{
    printf("# covers ROUTER/1\n");
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_check_get_int_exact(r, ZLINK_ROUTER_MANDATORY, 1);
    zlt_check_get_int_exact(r, ZLINK_ROUTER_PROBE, 0);
    zlt_check_get_int_exact(r, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, ZLINK_REQUEST_TIMEOUT_DFLT);
    zlt_check_get_int_exact(r, ZLINK_ROUTER_WEIGHT, ZLINK_WEIGHT_DFLT);
    zlt_check_get_int_exact(r, ZLINK_TYPE, ZLINK_ROUTER);
    /* A DEALER option on a ROUTER is EINVAL. */
    zlt_get_fails(r, ZLINK_DEALER_WEIGHT, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_finish(ctx, r);
}

/* ROUTER 2: defaults MANDATORY 1, PROBE 0, REQUEST_TIMEOUT 5000,
 * WEIGHT 100; each reads back what was set; WEIGHT keeps its range. */
static void router_02_defaults(void)
{
    printf("# covers ROUTER/2, ROUTER/6 (weight range)\n");
    void *ctx = zlt_ctx_new();
    void *r = zlt_socket(ctx, ZLINK_ROUTER);
    ZT_EQ_INT(zlt_get_int(r, ZLINK_ROUTER_MANDATORY), 1);
    ZT_EQ_INT(zlt_get_int(r, ZLINK_ROUTER_PROBE), 0);
    ZT_EQ_INT(zlt_get_int(r, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS), 5000);
    ZT_EQ_INT(zlt_get_int(r, ZLINK_ROUTER_WEIGHT), 100);
    /* The shared defaults a ROUTER starts with. */
    ZT_EQ_INT(zlt_get_int(r, ZLINK_SNDTIMEO), ZLINK_TIMEO_DFLT);
    ZT_EQ_INT(zlt_get_int(r, ZLINK_RCVTIMEO), ZLINK_TIMEO_DFLT);
    ZT_EQ_U64(zlt_get_u64(r, ZLINK_SNDHWM), ZLINK_HWM_DFLT);
    ZT_EQ_U64(zlt_get_u64(r, ZLINK_RCVHWM), ZLINK_HWM_DFLT);

    zlt_set_int_check(r, ZLINK_ROUTER_MANDATORY, 0);
    zlt_set_int_check(r, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, 1234);
    zlt_set_int_check(r, ZLINK_ROUTER_WEIGHT, 0);
    zlt_set_int_check(r, ZLINK_ROUTER_WEIGHT, 10000);
    zlt_set_int_fails(r, ZLINK_ROUTER_WEIGHT, -1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_set_int_fails(r, ZLINK_ROUTER_WEIGHT, 10001, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_set_int_fails(r, ZLINK_ROUTER_MANDATORY, 2, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    /* ROUTER options are EINVAL on a DEALER. */
    void *d = zlt_socket(ctx, ZLINK_DEALER);
    zlt_set_int_fails(d, ZLINK_ROUTER_MANDATORY, 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_set_int_fails(d, ZLINK_ROUTER_WEIGHT, 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_finish(ctx, d, r);
}

/* ROUTER 3: MANDATORY 1 (default): a routing id with no route is
 * NOT_CONNECTED/EHOSTUNREACH (parts consumed, id_out 0); MANDATORY 0: the
 * send is OK and the record is dropped (the peer never sees it). */
static void router_03_mandatory_unknown_rid(void)
{
    printf("# covers ROUTER/3\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);

        zlink_routing_id_t nobody;
        zlt_rid_set(&nobody, "nobody");
        zlink_completion_id_t id = 1234;
        zlink_msg_t m[2];
        zlt_msg_set(&m[0], "a", 1);
        zlt_msg_set(&m[1], "b", 1);
        ZT_EQ_INT(zlink_send_rid(r, &nobody, m, 2, ZLINK_SEND_FLAGS_NONE, NULL, &id),
                  ZLINK_SUBMIT_NOT_CONNECTED);
        ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_size(&m[1]), 0);
        zlink_multipart_close(m, 2);
        ZT_EQ_INT(zlt_send_rid_str(r, "nobody", "x", ZLINK_DONTWAIT), ZLINK_SUBMIT_NOT_CONNECTED);
        ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
        /* A prefix or extension of a known id is not that id. */
        ZT_EQ_INT(zlt_send_rid_str(r, "DD", "x", 0), ZLINK_SUBMIT_NOT_CONNECTED);
        /* Missing or empty routing id: INVALID_ARGUMENT. */
        zlink_routing_id_t empty;
        memset(&empty, 0, sizeof empty);
        ZT_EQ_INT(zlt_send_to(r, &empty, "x", 1, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(zlt_send_to(r, NULL, "x", 1, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);

        zlt_set_int(r, ZLINK_ROUTER_MANDATORY, 0);
        id = 99;
        zlt_msg_set(&m[0], "dropped", 7);
        ZT_EQ_INT(zlink_send_rid(r, &nobody, m, 1, ZLINK_SEND_FLAGS_NONE, NULL, &id),
                  ZLINK_SUBMIT_OK);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlt_send_rid_str(r, "DD", "dropped-too", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "kept", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "kept"); /* nothing else arrived first */
        zlt_expect_no_data(d);
        /* The peer gone: its id is unknown again. */
        zlt_set_int(r, ZLINK_ROUTER_MANDATORY, 1);
        zlt_close(d);
        int64_t end = zt_now_ms() + ZT_MS(3000);
        zlink_submit_result_t rc;
        while ((rc = zlt_send_rid_str(r, "D", "late", ZLINK_DONTWAIT)) == ZLINK_SUBMIT_OK) {
            ZT_CHECK(zt_now_ms() < end); /* tcp: the close reaches r asynchronously */
            sched_yield();
        }
        ZT_EQ_INT(rc, ZLINK_SUBMIT_NOT_CONNECTED);
    }
}

/* ROUTER 4 (option part): PROBE is 0 by default, 0/1 accepted, else EINVAL. */
static void router_04_probe_option(void)
{
    printf("# covers ROUTER/4 (option values)\n");
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_check_bool_option(r, ZLINK_ROUTER_PROBE, 0);
    zlt_finish(ctx, r);
}

/* ROUTER 4: with PROBE 1 set before connect, the peer (a DEALER) receives
 * one empty record (one part of size 0) as soon as the connection is up,
 * before anything the ROUTER sends; with PROBE 0 the first record is the
 * data. */
static void router_04_probe_empty_record(void)
{
    printf("# covers ROUTER/4 (the empty record on connect)\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        for (int probe = 0; probe <= 1; probe++) {
            char ep[256];
            void *d = zlt_sock(ctx, ZLINK_DEALER);
            zlt_set_rid(d, "D");
            zlt_bind(d, tr, ep, sizeof ep);
            void *r = zlt_sock(ctx, ZLINK_ROUTER);
            zlt_set_int(r, ZLINK_ROUTER_PROBE, probe);
            zlt_connect(r, ep);
            if (probe) /* nothing sent yet: a blocking receive gets the probe */
                zlt_expect_str(d, "");
            zlt_router_send_when_routable(r, "D", "data");
            zlt_expect_str(d, "data");
            zlt_expect_no_data(d); /* one probe, no more */
        }
    }
}

/* ROUTER 5: ZLINK_CONNECT_ROUTING_ID names the peer of the next connect
 * (it replaces the id the peer announces), only that connect; it is
 * set-only and ROUTER-only. */
static void router_05_connect_routing_id(void)
{
    printf("# covers ROUTER/5\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep1[256], ep2[256];
        void *d1 = zlt_sock(ctx, ZLINK_DEALER);
        void *d2 = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d1, "real1");
        zlt_set_rid(d2, "real2");
        zlt_bind(d1, tr, ep1, sizeof ep1);
        zlt_bind(d2, tr, ep2, sizeof ep2);
        void *rc = zlt_sock(ctx, ZLINK_ROUTER);
        ZT_EQ_INT(zlink_setsockopt(rc, ZLINK_CONNECT_ROUTING_ID, "alias1", 6), ZLINK_CONFIG_OK);
        zlt_connect(rc, ep1);
        zlt_connect(rc, ep2); /* no alias for this one */
        zlt_router_send_when_routable(rc, "alias1", "to-alias1");
        zlt_expect_str(d1, "to-alias1");
        zlt_router_send_when_routable(rc, "real2", "to-real2");
        zlt_expect_str(d2, "to-real2");
        /* d1 is known only by its alias. */
        ZT_EQ_INT(zlt_send_rid_str(rc, "real1", "x", 0), ZLINK_SUBMIT_NOT_CONNECTED);
        zlt_expect_no_data(d1);
        /* Records from d1 carry the alias, from d2 its own id. */
        ZT_EQ_INT(zlt_send_str(d1, "from-d1", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(rc, "alias1", "from-d1");
        ZT_EQ_INT(zlt_send_str(d2, "from-d2", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(rc, "real2", "from-d2");
        /* Set-only; ROUTER-only; 1..255 bytes. */
        zlt_get_fails(rc, ZLINK_CONNECT_ROUTING_ID, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        ZT_EQ_INT(zlink_setsockopt(d1, ZLINK_CONNECT_ROUTING_ID, "x", 1),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_setsockopt(rc, ZLINK_CONNECT_ROUTING_ID, "x", 0),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        char big[256];
        memset(big, 'b', sizeof big);
        ZT_EQ_INT(zlink_setsockopt(rc, ZLINK_CONNECT_ROUTING_ID, big, 256),
                  ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
    }
}

/* ROUTER 7 (DATA part): a DATA record comes with token 0. */
static void router_07_data_token_zero(void)
{
    printf("# covers ROUTER/7 (DATA part)\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d;
        void *r = router_and_dealer(ctx, tr, &d);
        for (int i = 0; i < 5; i++)
            ZT_EQ_INT(zlt_send_str(d, "data", 0), ZLINK_SUBMIT_OK);
        for (int i = 0; i < 5; i++) {
            zlink_msg_t parts[2];
            size_t count = 0;
            const zlink_routing_id_t *rid = NULL;
            zlink_reply_token_t tok = 0xDEADBEEFull;
            ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 2, &count, 0), ZLINK_RECV_OK);
            ZT_EQ_U64(tok, 0);
            ZT_CHECK(zlt_rid_is(rid, "D"));
            zlink_multipart_close(parts, count);
        }
    }
}

/* ROUTER 8: every receive is one whole record with the one routing id it
 * came from, even with two peers sending multipart records at once. */
static void router_08_whole_record_one_rid(void)
{
    printf("# covers ROUTER/8\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d1, *d2;
        void *r = router_with_two_dealers(ctx, tr, &d1, &d2);
        enum { N = 100 };
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < 2; k++) {
                zlink_msg_t m[3];
                zlt_msg_set(&m[0], k == 0 ? "d1" : "d2", 2);
                zlt_msg_set(&m[1], &i, sizeof i);
                zlt_msg_set(&m[2], "end", 3);
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
            int k = zlt_rid_is(rid, "d1") ? 0 : 1;
            ZT_CHECK(k == 1 ? zlt_rid_is(rid, "d2") : true);
            int i;
            memcpy(&i, zlink_msg_data(&parts[1]), sizeof i);
            ZT_EQ_INT(i, next[k]);
            next[k]++;
            ZT_EQ_MEM(zlink_msg_data(&parts[2]), "end", 3);
            zlink_multipart_close(parts, count);
        }
        ZT_EQ_INT(next[0], N);
        ZT_EQ_INT(next[1], N);
    }
}

/* ROUTER 10: nothing queued: DONTWAIT is NO_DATA/EAGAIN at once, NONE
 * after RCVTIMEO; outputs untouched. */
static void router_10_no_data(void)
{
    printf("# covers ROUTER/10\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r; /* a connected, idle peer */
        zlt_dr_pair(ctx, tr, &d, &r);
        (void)d;
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
        zlt_set_int(r, ZLINK_RCVTIMEO, 40);
        int64_t t0 = zt_now_ms();
        ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 2, &count, 0), ZLINK_RECV_NO_DATA);
        int64_t waited = zt_now_ms() - t0;
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_CHECK(waited >= 40);
        ZT_CHECK(waited < ZT_MS(1000));
        ZT_EQ_INT(count, 5);
    }
}

/* ROUTER 11: received parts belong to the caller: they outlive the next
 * receive and the socket's close; the routing id view shows the id of the
 * record just received and is not disturbed by sends. */
static void router_11_ownership(void)
{
    printf("# covers ROUTER/11\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d1, *d2;
        void *r = router_with_two_dealers(ctx, tr, &d1, &d2);
        static unsigned char big[5000];
        memset(big, 0x5C, sizeof big);
        zlink_msg_t m[2];
        zlt_msg_set(&m[0], "first", 5);
        zlt_msg_set(&m[1], big, sizeof big);
        ZT_EQ_INT(zlink_send(d1, m, 2, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        zlink_multipart_close(m, 2);

        zlink_msg_t a[2], b[2];
        size_t na = 0, nb = 0;
        const zlink_routing_id_t *rid = NULL;
        ZT_EQ_INT(zlink_router_recv(r, &rid, NULL, a, 2, &na, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(na, 2);
        ZT_CHECK(zlt_rid_is(rid, "d1"));
        /* Sends do not disturb the view. */
        ZT_EQ_INT(zlt_send_rid_str(r, "d2", "ping", 0), ZLINK_SUBMIT_OK);
        ZT_CHECK(zlt_rid_is(rid, "d1"));
        zlt_expect_str(d2, "ping");
        ZT_EQ_INT(zlt_send_str(d2, "second", 0), ZLINK_SUBMIT_OK);
        const zlink_routing_id_t *rid2 = NULL;
        ZT_EQ_INT(zlink_router_recv(r, &rid2, NULL, b, 2, &nb, 0), ZLINK_RECV_OK);
        ZT_CHECK(zlt_rid_is(rid2, "d2"));
        ZT_EQ_INT(nb, 1);
        /* The first record's parts are intact after another receive ... */
        ZT_EQ_MEM(zlink_msg_data(&a[0]), "first", 5);
        zlt_close(d1);
        zlt_close(d2);
        zlt_close(r);
        /* ... and after the socket is gone. */
        ZT_EQ_INT(zlink_msg_size(&a[1]), sizeof big);
        ZT_EQ_MEM(zlink_msg_data(&a[1]), big, sizeof big);
        ZT_EQ_MEM(zlink_msg_data(&b[0]), "second", 6);
        zlink_multipart_close(a, na);
        zlink_multipart_close(b, nb);
    }
}

/* ROUTER 12: more parts than cap: BUFFER_TOO_SMALL/ENOBUFS with the needed
 * count, nothing consumed; the retry returns the same record once. */
static void router_12_buffer_too_small(void)
{
    printf("# covers ROUTER/12\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        zlink_msg_t m[4];
        for (int i = 0; i < 4; i++)
            zlt_msg_set(&m[i], "part", 4);
        ZT_EQ_INT(zlink_send(d, m, 4, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_str(d, "after", 0), ZLINK_SUBMIT_OK);
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
        ZT_CHECK(zlt_rid_is(rid, "D"));
        ZT_EQ_U64(tok, 0);
        for (int i = 0; i < 4; i++)
            ZT_EQ_MEM(zlink_msg_data(&parts[i]), "part", 4);
        zlink_multipart_close(parts, count);
        zlt_router_expect(r, "D", "after");
    }
}

/* ROUTER 13: a DEALER sends three records and closes at once: the ROUTER
 * still receives all three, in order. */
static void router_13_dealer_sends_3_and_closes(void)
{
    printf("# covers ROUTER/13\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d;
        void *r = router_and_dealer(ctx, tr, &d);
        zlt_set_int(d, ZLINK_LINGER, ZT_MS(2000)); /* flush what was admitted */
        ZT_EQ_INT(zlt_send_str(d, "one", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_str(d, "two", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_str(d, "three", 0), ZLINK_SUBMIT_OK);
        zlt_close(d);
        zlt_router_expect(r, "D", "one");
        zlt_router_expect(r, "D", "two");
        zlt_router_expect(r, "D", "three");
        char buf[32];
        zlt_set_int(r, ZLINK_RCVTIMEO, 50);
        ZT_EQ_INT(zlt_router_recv_str(r, NULL, buf, sizeof buf, 0), ZLINK_RECV_NO_DATA);
    }
}

/* ROUTER 16: zlink_recv on a ROUTER (and the other typed calls that are
 * not for ROUTERs) is NOT_SUPPORTED/ENOTSUP; a send that is refused still
 * consumes its parts. */
static void router_16_recv_not_supported(void)
{
    printf("# covers ROUTER/16\n");
    void *ctx = zlt_ctx_new();
    char ep[256];
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_bind(r, "inproc", ep, sizeof ep);
    void *d = zlt_dealer_to(ctx, r, ep, "D");
    ZT_EQ_INT(zlt_send_str(d, "queued", 0), ZLINK_SUBMIT_OK);
    zlink_msg_t parts[2];
    size_t count = 9;
    ZT_EQ_INT(zlink_recv(r, NULL, parts, 2, &count, 0), ZLINK_RECV_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    ZT_EQ_INT(count, 9);
    char topic[8];
    size_t tlen = 0;
    ZT_EQ_INT(zlink_subscribe(r, NULL, topic, sizeof topic, &tlen, parts, 2, &count, 0),
              ZLINK_RECV_NOT_SUPPORTED);
    ZT_EQ_INT(zlt_send_str(r, "x", 0), ZLINK_SUBMIT_NOT_SUPPORTED); /* checks consumption */
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    zlink_msg_t m;
    zlt_msg_set(&m, "x", 1);
    ZT_EQ_INT(zlink_publish(r, "t", &m, 1, 0), ZLINK_SUBMIT_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    /* zlink_router_recv on a DEALER is NOT_SUPPORTED too. */
    const zlink_routing_id_t *rid = NULL;
    ZT_EQ_INT(zlink_router_recv(d, &rid, NULL, parts, 2, &count, 0), ZLINK_RECV_NOT_SUPPORTED);
    /* The record is still there for zlink_router_recv. */
    zlt_router_expect(r, "D", "queued");
    zlt_finish(ctx, d, r);
}

/* socket/README 28 (ROUTER): zlink_disconnect_rid closes the connection of
 * the live peer named rid. The route is gone at once (sends to it are
 * NOT_CONNECTED/EHOSTUNREACH, a second call NOT_FOUND/ENOENT). Over tcp the
 * DEALER reconnects by itself (RECONNECT_IVL 250 ms, so the checks above
 * run well before it is back): the route returns and the DEALER's next
 * record arrives from the same routing id. Over inproc the pipe ends:
 * neither side has a peer, and a new DEALER may take the id. An unknown id
 * is NOT_FOUND/ENOENT, a missing or empty one INVALID_ARGUMENT/EINVAL;
 * other socket types are NOT_SUPPORTED/ENOTSUP. */
static void readme_28_router_disconnect_rid(void)
{
    printf("# covers socket/README 28 (zlink_disconnect_rid on ROUTER and others)\n");
    zlink_routing_id_t rid, nobody, empty;
    zlt_rid_set(&rid, "D");
    zlt_rid_set(&nobody, "nobody");
    memset(&empty, 0, sizeof empty);
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *r = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_bind(r, tr, ep, sizeof ep);
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d, "D");
        zlt_set_int(d, ZLINK_RECONNECT_IVL, ZT_MS(250)); /* before connect: the first interval */
        zlt_connect(d, ep);
        ZT_EQ_INT(zlt_send_str(d, "hello", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(r, "D", "hello");
        ZT_EQ_INT(zlink_disconnect_rid(r, &nobody), ZLINK_CONNECT_NOT_FOUND);
        ZT_EQ_INT(zlink_errno(), ENOENT);
        ZT_EQ_INT(zlink_disconnect_rid(r, &empty), ZLINK_CONNECT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(zlink_disconnect_rid(r, NULL), ZLINK_CONNECT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "still-here", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "still-here"); /* the failed calls closed nothing */

        ZT_EQ_INT(zlink_disconnect_rid(r, &rid), ZLINK_CONNECT_OK);
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "gone", ZLINK_DONTWAIT), ZLINK_SUBMIT_NOT_CONNECTED);
        ZT_EQ_INT(zlink_errno(), EHOSTUNREACH);
        ZT_EQ_INT(zlink_disconnect_rid(r, &rid), ZLINK_CONNECT_NOT_FOUND);
        ZT_EQ_INT(zlink_errno(), ENOENT);
        if (zlt_is_tcp(tr)) {
            /* NOT_CONNECTED until the DEALER is back, then delivered. */
            zlt_router_send_when_routable(r, "D", "back");
            zlt_expect_str(d, "back");
            ZT_EQ_INT(zlt_send_str(d, "again", 0), ZLINK_SUBMIT_OK);
            zlt_router_expect(r, "D", "again");
        } else {
            ZT_EQ_INT(zlt_send_str(d, "no-peer", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
            ZT_EQ_INT(zlink_errno(), EAGAIN);
            zlt_expect_no_data(d);
            zlt_router_expect_no_data(r);
            zlt_dealer_to(ctx, r, ep, "D"); /* the id is free again */
        }
    }
    /* Other socket types. */
    void *ctx = zlt_ctx_new();
    const int types[] = {ZLINK_DEALER, ZLINK_PAIR, ZLINK_PUB, ZLINK_SUB};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        void *s = zlt_sock(ctx, types[i]);
        ZT_EQ_INT(zlink_disconnect_rid(s, &rid), ZLINK_CONNECT_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        zlt_close(s);
    }
    zlt_ctx_term(ctx);
}

/* §1: without zlink_set_routing_id a peer is named by 16 bytes in UUIDv4
 * layout (version 4, RFC 4122 variant), distinct per socket, and that id
 * routes back to it. */
static void router_default_rid_uuid4(void)
{
    printf("# covers socket/README 24 (default RID 16-byte UUIDv4), core-contract §1\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *r = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_bind(r, tr, ep, sizeof ep);
        void *ds[3];
        zlink_routing_id_t ids[3];
        for (int i = 0; i < 3; i++) {
            ds[i] = zlt_sock(ctx, ZLINK_DEALER);
            zlt_connect(ds[i], ep);
            char text[32];
            snprintf(text, sizeof text, "from-%d", i);
            ZT_EQ_INT(zlt_send_str(ds[i], text, 0), ZLINK_SUBMIT_OK);
            char buf[32];
            ZT_EQ_INT(zlt_router_recv_str(r, &ids[i], buf, sizeof buf, 0), ZLINK_RECV_OK);
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
            ZT_EQ_INT(zlt_send_to(r, &ids[i], text, strlen(text), 0), ZLINK_SUBMIT_OK);
            zlt_expect_str(ds[i], text);
        }
        for (int i = 0; i < 3; i++)
            zlt_close(ds[i]);
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
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *r = zlt_sock(ctx, ZLINK_ROUTER);
        ZT_EQ_INT(zlt_get_int(r, ZLINK_OPT_RID_DUPLICATE_POLICY), ZLINK_RID_DUPLICATE_REJECT);
        zlt_bind(r, tr, ep, sizeof ep);
        void *d1 = zlt_dealer_to(ctx, r, ep, "dup");
        void *d2 = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d2, "dup");
        zlt_set_int(d2, ZLINK_SNDTIMEO, 200);
        zlink_connect_result_t crc = zlink_connect(d2, ep);
        if (zlt_is_tcp(tr)) {
            ZT_EQ_INT(crc, ZLINK_CONNECT_OK);
            /* Either never attached (BACKPRESSURED after 200 ms) or admitted
             * into a connection the ROUTER then refuses. */
            zlink_submit_result_t src = zlt_send_str(d2, "from-d2", 0);
            ZT_CHECK(src == ZLINK_SUBMIT_OK || src == ZLINK_SUBMIT_BACKPRESSURED);
        } else {
            ZT_EQ_INT(crc, ZLINK_CONNECT_CONFLICT);
            ZT_EQ_INT(zlink_errno(), EEXIST);
            ZT_EQ_INT(zlt_send_str(d2, "from-d2", ZLINK_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
        }
        for (int i = 0; i < 20; i++) {
            char text[32];
            snprintf(text, sizeof text, "to-dup-%d", i);
            ZT_EQ_INT(zlt_send_rid_str(r, "dup", text, 0), ZLINK_SUBMIT_OK);
        }
        for (int i = 0; i < 20; i++) {
            char text[32];
            snprintf(text, sizeof text, "to-dup-%d", i);
            zlt_expect_str(d1, text);
        }
        char buf[64];
        zlt_expect_no_data(d2);
        /* The old pipe still carries d1's records; d2's never arrive. */
        ZT_EQ_INT(zlt_send_str(d1, "d1-still-here", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(r, "dup", "d1-still-here");
        zlt_set_int(r, ZLINK_RCVTIMEO, 50);
        ZT_EQ_INT(zlt_router_recv_str(r, NULL, buf, sizeof buf, 0), ZLINK_RECV_NO_DATA);
    }
}

#define NPEERS 200

/* A ROUTER bound on transport tr and NPEERS DEALERs connected to it, peer i
 * with routing id "peer-<i>" in d[i]. Returns the ROUTER. */
static void *router_with_peers(void *ctx, const char *tr, void *d[NPEERS])
{
    char ep[256], name[32];
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_bind(r, tr, ep, sizeof ep);
    for (int i = 0; i < NPEERS; i++) {
        snprintf(name, sizeof name, "peer-%d", i);
        d[i] = zlt_dealer_to(ctx, r, ep, name);
    }
    return r;
}

/* Many peers on one ROUTER: every send by routing id reaches its own peer
 * (the route is a hash lookup, core/src/sock/pipe.c zl_socket_route, whose
 * table doubles several times on the way to NPEERS); a peer removed by id is
 * no route any more while every other one still is. */
static void router_many_peers_by_rid(void)
{
    printf("# covers core-contract §1 (ROUTER send by routing id) with %d peers\n", NPEERS);
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char name[32], text[48];
        void *d[NPEERS];
        void *r = router_with_peers(ctx, tr, d);
        /* In an order unlike the attach order. */
        for (int k = 0; k < NPEERS; k++) {
            int i = (k * 7) % NPEERS;
            snprintf(name, sizeof name, "peer-%d", i);
            snprintf(text, sizeof text, "to-%d", i);
            ZT_EQ_INT(zlt_send_rid_str(r, name, text, 0), ZLINK_SUBMIT_OK);
        }
        for (int i = 0; i < NPEERS; i++) {
            snprintf(text, sizeof text, "to-%d", i);
            zlt_expect_str(d[i], text);
        }
        for (int i = 0; i < NPEERS; i += 3) {
            zlink_routing_id_t rid;
            snprintf(name, sizeof name, "peer-%d", i);
            zlt_rid_set(&rid, name);
            ZT_EQ_INT(zlink_disconnect_rid(r, &rid), ZLINK_CONNECT_OK);
        }
        for (int i = NPEERS - 1; i >= 0; i--) {
            snprintf(name, sizeof name, "peer-%d", i);
            snprintf(text, sizeof text, "again-%d", i);
            ZT_EQ_INT(zlt_send_rid_str(r, name, text, ZLINK_DONTWAIT),
                      i % 3 == 0 ? ZLINK_SUBMIT_NOT_CONNECTED : ZLINK_SUBMIT_OK);
        }
        for (int i = 0; i < NPEERS; i++) {
            if (i % 3 == 0)
                continue;
            snprintf(text, sizeof text, "again-%d", i);
            zlt_expect_str(d[i], text);
        }
    }
}

/* The fair queue over many peers (core/src/sock/recv.c: a receive looks
 * only at the pipes that may hold records; a pipe found empty comes back
 * through its input queue's notify). Every peer sends three times, one
 * record at a time, in an order unlike the attach order, each after its
 * pipe was found empty: each record is received, from its own peer. Over
 * inproc, where a record is queued when its send returns, every peer then
 * queues two records: the first NPEERS receives name every peer once
 * (each its first record), and so do the next NPEERS (each its second). */
static void router_many_peers_fair_queue(void)
{
    printf("# covers core-contract §8 (ROUTER fair queue) with %d peers\n", NPEERS);
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char name[32], text[48];
        void *d[NPEERS];
        void *r = router_with_peers(ctx, tr, d);
        zlt_router_expect_no_data(r);
        for (int k = 0; k < 3 * NPEERS; k++) {
            int i = (k * 37) % NPEERS;
            snprintf(name, sizeof name, "peer-%d", i);
            snprintf(text, sizeof text, "one-%d", k);
            ZT_EQ_INT(zlt_send_str(d[i], text, 0), ZLINK_SUBMIT_OK);
            zlt_router_expect(r, name, text);
        }
        zlt_router_expect_no_data(r);
        if (zlt_is_tcp(tr))
            continue;
        for (int i = 0; i < NPEERS; i++) {
            for (int m = 0; m < 2; m++) {
                snprintf(text, sizeof text, "%d:%d", m, i);
                ZT_EQ_INT(zlt_send_str(d[i], text, 0), ZLINK_SUBMIT_OK);
            }
        }
        for (int m = 0; m < 2; m++) {
            bool seen[NPEERS] = {false};
            for (int k = 0; k < NPEERS; k++) {
                char buf[64];
                zlink_routing_id_t got;
                ZT_EQ_INT(zlt_router_recv_str(r, &got, buf, sizeof buf, 0), ZLINK_RECV_OK);
                char *colon = strchr(buf, ':');
                ZT_CHECK(colon != NULL && buf[0] - '0' == m);
                int i = atoi(colon + 1);
                ZT_CHECK(i >= 0 && i < NPEERS && !seen[i]);
                seen[i] = true;
                snprintf(name, sizeof name, "peer-%d", i);
                ZT_CHECK(zlt_rid_is(&got, name));
            }
        }
        zlt_router_expect_no_data(r);
    }
}

static const zt_case_t cases[] = {
    ZT_CASE(router_01_get_writes_optvallen),
    ZT_CASE(router_02_defaults),
    ZT_CASE(router_03_mandatory_unknown_rid),
    ZT_CASE(router_04_probe_option),
    ZT_CASE(router_04_probe_empty_record),
    ZT_CASE(router_05_connect_routing_id),
    ZT_CASE(router_07_data_token_zero),
    ZT_CASE(router_08_whole_record_one_rid),
    ZT_CASE(router_10_no_data),
    ZT_CASE(router_11_ownership),
    ZT_CASE(router_12_buffer_too_small),
    ZT_CASE(router_13_dealer_sends_3_and_closes),
    ZT_CASE(router_16_recv_not_supported),
    ZT_CASE(readme_28_router_disconnect_rid),
    ZT_CASE(router_default_rid_uuid4),
    ZT_CASE(router_duplicate_rid_rejected),
    ZT_CASE(router_many_peers_by_rid),
    ZT_CASE(router_many_peers_fair_queue),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
