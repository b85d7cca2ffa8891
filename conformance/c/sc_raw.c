/*
 * sc_raw.c — seed 000 §17 "Raw reply admission", at the Core level:
 * SC-14 (a raw reply to a DEALER obeys the Application connection: HWM,
 * PAUSED, SNDTIMEO; the async reply is BACKPRESSURED with a wait token)
 * and SC-15 (a raw reply to a ROUTER takes the HWM-free Completion lane),
 * over every transport of the case. Sockets come from core/tests'
 * public-API helpers (one round per transport).
 */
#include "sc.h"
#include "zltest_zlink.h"

#include <errno.h>
#include <string.h>

/* One received REQUEST at a ROUTER: its source and token. */
typedef struct rreq {
    zlink_routing_id_t rid;
    zlink_reply_token_t token;
} rreq_t;

static void recv_request(void *r, rreq_t *q, const char *want)
{
    const zlink_routing_id_t *rid = NULL;
    zlink_msg_t parts[2];
    size_t n = 0;
    q->token = 0;
    ZT_EQ_INT(zlink_router_recv(r, &rid, &q->token, parts, 2, &n, 0), ZLINK_RECV_OK);
    ZT_CHECK(q->token != 0);
    ZT_EQ_INT(n, 1);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), strlen(want));
    ZT_EQ_MEM(zlink_msg_data(&parts[0]), want, strlen(want));
    q->rid = *rid;
    zlink_multipart_close(parts, n);
}

static zlink_completion_id_t request(void *s, const zlink_routing_id_t *to, const char *text)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    zlink_completion_id_t id = 0;
    ZT_EQ_INT(zlink_request(s, to, &m, 1, 0, (uint32_t)ZT_MS(10000), NULL, &id), ZLINK_SUBMIT_OK);
    ZT_CHECK(id != 0);
    return id;
}

/* One DONTWAIT request of ROUTER s to rid to: true when admitted (the id
 * in *id), false while the route is not there yet. */
static bool try_request(void *s, const char *to, const char *text, zlink_completion_id_t *id)
{
    zlink_routing_id_t rid;
    zlt_rid_set(&rid, to);
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    *id = 0;
    zlink_submit_result_t rc =
        zlink_request(s, &rid, &m, 1, ZLINK_DONTWAIT, (uint32_t)ZT_MS(10000), NULL, id);
    if (rc == ZLINK_SUBMIT_OK)
        return true;
    ZT_EQ_INT(rc, ZLINK_SUBMIT_NOT_CONNECTED);
    return false;
}

static zlink_submit_result_t reply_async(void *r, const rreq_t *q, const char *text,
                                         zlink_completion_id_t *wt)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    *wt = 0;
    return zlink_reply_submit(r, &q->rid, q->token, 0, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT,
                              (void *)q, wt);
}

static zlink_submit_result_t reply_sync(void *r, const rreq_t *q, const char *text)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    return zlink_reply(r, &q->rid, q->token, &m, 1);
}

/* DATA from ROUTER r to rid `to` with DONTWAIT until refused; returns the
 * count admitted and the refusal's wait token in *wt. */
static int fill(void *r, const char *to, size_t size, zlink_completion_id_t *wt)
{
    char body[1024];
    memset(body, 'd', sizeof body);
    zlink_routing_id_t rid;
    zlt_rid_set(&rid, to);
    int64_t end = zt_now_ms() + ZT_MS(10000);
    for (int n = 0;; n++) {
        zlink_msg_t m;
        zlt_msg_set(&m, body, size);
        *wt = 0;
        zlink_submit_result_t rc =
            zlink_send_rid(r, &rid, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, wt);
        if (rc == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_EQ_INT(zlink_errno(), EAGAIN);
            ZT_CHECK(*wt != 0);
            zlink_msg_close(&m);
            return n;
        }
        ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
        if (zt_now_ms() > end || n > 1000000)
            ZT_FAIL("sends to '%s' were never refused", to);
    }
}

/* fill() until the refusal holds: over tcp the engine keeps moving
 * records into the kernel's buffers, and each such move is a WRITABLE
 * edge of the last refusal's token; the loop fills again after each edge
 * and stops when none comes within 100 ms (scaled): nothing reads, so
 * nothing can move any more. Returns the records admitted; *wt is the
 * last refusal's token (its WRITABLE record still to come). */
static int fill_stable(void *r, const char *to, size_t size, zlink_completion_id_t *wt)
{
    int total = 0;
    zlt_set_int(r, ZLINK_RCVTIMEO, ZT_MS(100));
    for (int round = 0;; round++) {
        ZT_CHECK(round < 100000);
        total += fill(r, to, size, wt);
        zlink_completion_t rec;
        memset(&rec, 0, sizeof rec);
        rec.struct_size = sizeof rec;
        if (zlink_completion_recv(r, &rec, 0) != ZLINK_RECV_OK)
            break; /* quiet: the refusal holds */
        zlink_completion_id_t got = rec.completion_id;
        ZT_EQ_INT(rec.kind, ZLINK_COMPLETION_WRITABLE);
        ZT_EQ_INT(rec.send_result, ZLINK_SEND_ADMITTED);
        zlink_completion_close(&rec);
        ZT_EQ_U64(got, *wt);
    }
    zlt_set_int(r, ZLINK_RCVTIMEO, ZT_MS(ZLT_TIMEO_MS));
    return total;
}

/* No completion record is in s's queue. */
static void no_record(void *s)
{
    zlink_completion_t rec;
    memset(&rec, 0, sizeof rec);
    rec.struct_size = sizeof rec;
    ZT_EQ_INT(zlink_completion_recv(s, &rec, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_NO_DATA);
}

/* Reads s's completion records (blocking, RCVTIMEO) until the WRITABLE
 * record of token wt, which must say ADMITTED; the WRITABLE record of
 * tokens other[0..nother) may come first. */
static void expect_writable(void *s, zlink_completion_id_t wt, const zlink_completion_id_t *other,
                            size_t nother)
{
    for (;;) {
        zlink_completion_t rec;
        memset(&rec, 0, sizeof rec);
        rec.struct_size = sizeof rec;
        ZT_EQ_INT(zlink_completion_recv(s, &rec, 0), ZLINK_RECV_OK);
        zlink_completion_id_t got = rec.completion_id;
        ZT_EQ_INT(rec.kind, ZLINK_COMPLETION_WRITABLE);
        ZT_EQ_INT(rec.send_result, ZLINK_SEND_ADMITTED);
        zlink_completion_close(&rec);
        if (got == wt)
            return;
        bool known = false;
        for (size_t i = 0; i < nother; i++)
            known = known || got == other[i];
        if (!known)
            ZT_FAIL("a WRITABLE record of an unknown token %llu", (unsigned long long)got);
    }
}

/* The requester's REQUEST record id: OK with reply text. */
static void expect_reply(void *s, zlink_completion_id_t id, const char *text)
{
    zlink_completion_t rec;
    memset(&rec, 0, sizeof rec);
    rec.struct_size = sizeof rec;
    ZT_EQ_INT(zlink_completion_recv(s, &rec, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(rec.kind, ZLINK_COMPLETION_REQUEST);
    ZT_EQ_U64(rec.completion_id, id);
    ZT_EQ_INT(rec.request_result, ZLINK_REQUEST_OK);
    ZT_EQ_INT(rec.reply_part_count, 1);
    ZT_EQ_INT(zlink_msg_size(&rec.reply_parts[0]), strlen(text));
    ZT_EQ_MEM(zlink_msg_data(&rec.reply_parts[0]), text, strlen(text));
    zlink_completion_close(&rec);
}

static void drain_data(void *d, int n, size_t size)
{
    for (int i = 0; i < n; i++) {
        zlink_msg_t parts[2];
        size_t count = 0;
        ZT_EQ_INT(zlink_recv(d, NULL, parts, 2, &count, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(count, 1);
        ZT_EQ_INT(zlink_msg_size(&parts[0]), size);
        zlink_multipart_close(parts, count);
    }
}

/* -------------------------------------------------------------- SC-14 */

/* paused: the DEALER's receive flow is PAUSED; else its receive side is
 * full of unread DATA. */
static void reply_to_dealer(const char *tr, bool paused)
{
    void *ctx = zlt_round_begin(tr);
    char ep[256];
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(r, "R");
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    if (!paused) {
        zlt_set_u64(r, ZLINK_SNDHWM, 4096);
        zlt_set_u64(d, ZLINK_RCVHWM, 4096);
        if (zlt_is_tcp(tr)) {
            zlt_set_int(r, ZLINK_SNDBUF, 4096);
            zlt_set_int(d, ZLINK_RCVBUF, 4096);
        }
    }
    zlt_bind(r, tr, ep, sizeof ep);
    zlt_connect(d, ep);
    zlink_completion_id_t id = request(d, NULL, "q");
    rreq_t q;
    recv_request(r, &q, "q");

    size_t size = paused ? 1 : 1024;
    zlink_completion_id_t data_wt = 0;
    if (paused)
        ZT_EQ_INT(zlink_socket_set_receive_flow_state(d, ZLINK_RECEIVE_FLOW_PAUSED),
                  ZLINK_CONFIG_OK);
    /* Full: DATA until the HWM refuses. Paused: until the PAUSE arrived
     * (what was admitted before it waits unread). */
    int n = fill_stable(r, "D", size, &data_wt);
    /* Full: top up with empty records (the smallest charge) until even
     * those are refused, so no reply fits either. */
    zlink_completion_id_t empty_wt = 0;
    int empties = paused ? 0 : fill_stable(r, "D", 0, &empty_wt);
    zlink_completion_id_t others[2] = {data_wt, empty_wt};

    /* The async reply: BACKPRESSURED with a wait token, the token kept. */
    zlink_completion_id_t wt = 0;
    ZT_EQ_INT(reply_async(r, &q, "reply", &wt), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    ZT_CHECK(wt != 0 && wt != data_wt && wt != empty_wt);
    no_record(r); /* not admitted while the DEALER neither reads nor resumes */
    /* The sync reply with SNDTIMEO 50 ms times out, the token kept. */
    zlt_set_int(r, ZLINK_SNDTIMEO, 50);
    int64_t t0 = zt_now_ms();
    zlink_submit_result_t src = reply_sync(r, &q, "reply");
    if (src != ZLINK_SUBMIT_BACKPRESSURED)
        ZT_FAIL("%s %s: sync reply %d after %lld ms", tr, paused ? "paused" : "full", src,
                (long long)(zt_now_ms() - t0));
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    ZT_CHECK(zt_now_ms() - t0 >= 50);
    no_record(r);
    zlt_set_int(r, ZLINK_SNDTIMEO, ZT_MS(ZLT_TIMEO_MS));

    /* The DEALER drains (or resumes): then, and only then, the edge. */
    if (paused) {
        ZT_EQ_INT(zlink_socket_set_receive_flow_state(d, ZLINK_RECEIVE_FLOW_RUNNING),
                  ZLINK_CONFIG_OK);
    } else {
        drain_data(d, n, size);
        drain_data(d, empties, 0);
    }
    expect_writable(r, wt, others, paused ? 1 : 2);
    ZT_EQ_INT(reply_async(r, &q, "reply", &wt), ZLINK_SUBMIT_OK);
    if (paused)
        drain_data(d, n, size);
    expect_reply(d, id, "reply");
    zlt_round_end();
}

void sc14_raw_reply_to_dealer_backpressured(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++) {
        reply_to_dealer(trs[i], false);
        reply_to_dealer(trs[i], true);
    }
}

/* -------------------------------------------------------------- SC-15 */

static void reply_to_router(const char *tr)
{
    void *ctx = zlt_round_begin(tr);
    char ep[256];
    void *a = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(a, "A");
    zlt_set_u64(a, ZLINK_SNDHWM, 4096);
    void *b = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(b, "B");
    zlt_set_u64(b, ZLINK_RCVHWM, 4096);
    if (zlt_is_tcp(tr)) {
        zlt_set_int(a, ZLINK_SNDBUF, 4096);
        zlt_set_int(b, ZLINK_RCVBUF, 4096);
    }
    zlt_bind(a, tr, ep, sizeof ep);
    zlt_connect(b, ep);
    zlink_completion_id_t id1 = 0;
    ZT_EVENTUALLY(try_request(b, "A", "q1", &id1), 5000);
    zlink_routing_id_t to_a;
    zlt_rid_set(&to_a, "A");
    zlink_completion_id_t id2 = request(b, &to_a, "q2");
    rreq_t q1, q2;
    recv_request(a, &q1, "q1");
    recv_request(a, &q2, "q2");

    /* b PAUSED and the Application connection to b full of unread DATA. */
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(b, ZLINK_RECEIVE_FLOW_PAUSED), ZLINK_CONFIG_OK);
    zlink_completion_id_t data_wt = 0;
    int n = fill_stable(a, "B", 1024, &data_wt);
    zlink_completion_id_t more_wt = 0;
    ZT_EQ_INT(fill(a, "B", 1024, &more_wt), 0); /* still refused: full and paused */

    /* Replies are admitted at once, async and sync (SNDTIMEO 0). */
    zlink_completion_id_t wt = 0;
    ZT_EQ_INT(reply_async(a, &q1, "r1", &wt), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(wt, 0);
    zlt_set_int(a, ZLINK_SNDTIMEO, 0);
    ZT_EQ_INT(reply_sync(a, &q2, "r2"), ZLINK_SUBMIT_OK);
    /* ... and delivered while b is still PAUSED with the DATA unread. */
    expect_reply(b, id1, "r1");
    expect_reply(b, id2, "r2");
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(b, ZLINK_RECEIVE_FLOW_RUNNING), ZLINK_CONFIG_OK);
    for (int i = 0; i < n; i++) {
        const zlink_routing_id_t *rid = NULL;
        zlink_reply_token_t tok = 0;
        zlink_msg_t parts[2];
        size_t count = 0;
        ZT_EQ_INT(zlink_router_recv(b, &rid, &tok, parts, 2, &count, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(tok, 0);
        ZT_EQ_INT(zlink_msg_size(&parts[0]), 1024);
        zlink_multipart_close(parts, count);
    }
    zlt_round_end();
}

void sc15_raw_reply_to_router_hwm_free(const conf_params_t *params)
{
    const char *trs[SC_MAX_TRANSPORTS];
    size_t n = sc_transports(params, trs);
    for (size_t i = 0; i < n; i++)
        reply_to_router(trs[i]);
}
