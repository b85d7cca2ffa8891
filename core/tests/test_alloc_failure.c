/*
 * test_alloc_failure.c — ZLink when the system runs out of memory: no
 * abort, a clear error where a caller can be told, nothing lost or leaked,
 * and the socket works afterwards.
 *
 * Each case drives the public API so that one particular allocation fails
 * (zltest_alloc_fail.h: by size, on the calling thread or on every thread
 * for what an I/O thread does) and checks the result, errno, what the peer
 * receives and that later traffic flows. Where the fix is "reserve at
 * admission, so the later step needs no memory", the case fails every
 * allocation around that later step and checks that none was even asked
 * for. The allocation sites, and the case that reaches each:
 *
 *   queue.c  zl_q_push chunk            push_needs_a_chunk_send_is_oom,
 *                                       multipart_push_is_all_or_nothing
 *   queue.c  zl_fq_splice (deliver)     engine_delivery_without_memory_ends_connection
 *   queue.c  zl_fq_splice (all or none) unit_splice_is_all_or_nothing,
 *                                       unit_take_all_into_busy_batch
 *   queue.c  zl_q_inject (STREAM)       stream_disconnect_notice_is_reserved,
 *                                       stream_connect_notice_without_memory_refuses
 *   queue.c  zl_q_push_ctl (inproc)     inproc_subscribe_without_memory,
 *                                       inproc_weight_and_flow_without_memory
 *   queue.c  drop_named_controls        unit_latest_control_replaces_in_place
 *   socket.c zl_socket_stash            sub_short_topic_stash_needs_no_memory
 *   completion.c token_publish          writable_record_needs_no_memory
 *   request.c req_complete              request_timeout_record_needs_no_memory,
 *                                       request_reply_record_needs_no_memory
 *   hmap.c   first bucket array         first_request_without_bucket_memory,
 *                                       router_token_without_bucket_memory,
 *                                       unit_hmap_without_buckets
 *
 * The last site of the list, engine/conn.c zl_conn_close, belongs to the
 * engine robustness work and is not covered here.
 */
#include "zltest_alloc_fail.h"
#include "zltest_zlink.h"
#define ZR_MAX_UNREAD (1u << 18)
#include "zltest_rawzmp.h"

#include "sock/completion.h"
#include "util/hmap.h"
#include "msg/queue.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one queue chunk costs (queue.h): the allocation the queue cases
 * fail. No other allocation in these cases has this size. */
#define CHUNK_BYTES sizeof(zl_fq_chunk_t)

/* A rule failing every chunk allocation on every thread. */
static zt_alloc_rule_t chunk_rule_all_threads(void)
{
    zt_alloc_rule_t r = zt_alloc_size(CHUNK_BYTES);
    r.all_threads = 1;
    return r;
}

/* ------------------------------------------------------------- helpers */

/* Sends the one-part record text; the part is consumed either way. */
static zlink_submit_result_t send_text(void *s, const char *text, int flags)
{
    return zlt_send_str(s, text, flags);
}

/* A record of n parts "p0".."p{n-1}" with a prefix: sends it, returns the
 * result, checks every part was consumed (empty, still closable). */
static zlink_submit_result_t send_parts(void *s, const char *prefix, size_t n, int flags)
{
    zlink_msg_t parts[8];
    ZT_CHECK(n <= 8);
    for (size_t i = 0; i < n; i++) {
        char b[32];
        snprintf(b, sizeof b, "%s%zu", prefix, i);
        zlt_msg_set(&parts[i], b, strlen(b));
    }
    zlink_submit_result_t r = zlink_send(s, parts, n, (zlink_send_flags_t)flags, NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        ZT_EQ_INT(zlink_msg_size(&parts[i]), 0);
        ZT_EQ_INT(zlink_msg_close(&parts[i]), ZLINK_CONFIG_OK);
    }
    return r;
}

static void expect_parts(void *s, const char *prefix, size_t n)
{
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    ZT_EQ_INT(zlink_recv(s, &rid, parts, ZLT_MAXP, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_OK);
    ZT_EQ_INT(count, n);
    for (size_t i = 0; i < n; i++) {
        char b[32];
        snprintf(b, sizeof b, "%s%zu", prefix, i);
        ZT_EQ_INT(zlink_msg_size(&parts[i]), strlen(b));
        ZT_EQ_MEM(zlink_msg_data(&parts[i]), b, strlen(b));
    }
    zlink_multipart_close(parts, count);
}

/* An inproc PAIR link: a binds, b connects. */
static void pair_link(void *ctx, void **a, void **b)
{
    *a = zlt_sock(ctx, ZLINK_PAIR);
    *b = zlt_sock(ctx, ZLINK_PAIR);
    char ep[256];
    zlt_bind(*a, "inproc", ep, sizeof ep);
    zlt_connect(*b, ep);
}

/* A monitor of s for the status snapshot and DISCONNECTED events. */
static void *monitor_of(void *s)
{
    zlink_monitor_config_t cfg = {ZLINK_EVENT_DISCONNECTED, 0, 0};
    void *m = zlink_socket_monitor_open(s, &cfg);
    ZT_CHECK(m != NULL);
    return m;
}

static uint64_t rcv_pending(void *mon)
{
    zlink_monitor_status_t st;
    ZT_EQ_INT(zlink_monitor_status(mon, &st), ZLINK_CONFIG_OK);
    return st.rcv_pending_msgs;
}

/* Waits for a DISCONNECTED event and returns its value. */
static uint64_t expect_disconnected(void *mon)
{
    zlink_monitor_event_t ev;
    int64_t end = zt_now_ms() + ZT_MS(5000);
    for (;;) {
        memset(&ev, 0, sizeof ev);
        zlink_recv_result_t r = zlink_socket_monitor_recv(mon, &ev, ZLINK_RECV_FLAGS_NONE);
        if (r == ZLINK_RECV_OK && ev.event == ZLINK_EVENT_DISCONNECTED)
            return ev.value;
        if (zt_now_ms() > end)
            ZT_FAIL("no DISCONNECTED event (last result %d)", (int)r);
    }
}

/* The port of a socket bound with zlt_bind(s, "tcp", ...). */
static int port_of(void *s)
{
    char ep[256];
    zlt_last_endpoint(s, ep, sizeof ep);
    return tcp_port_of(ep);
}

/* A raw ZMP PAIR peer connected to 127.0.0.1:port, past the handshake:
 * HELLO and READY both ways. */
static void raw_pair_peer(raw_t *r, int port)
{
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    raw_connect(r, ep);
    wire_t w, none;
    w_init(&w);
    w_init(&none);
    w_hello(&w, ZLINK_PAIR, "");
    w_ready(&w, &none);
    raw_send(r, &w);
    w_free(&w);
    w_free(&none);
    raw_wait_frames(r, 2); /* the ZLink side's HELLO and READY */
}

static void raw_send_record(raw_t *r, const char *text)
{
    wire_t w;
    w_init(&w);
    w_data(&w, false, text);
    raw_send(r, &w);
    w_free(&w);
}

/* ============================================== queue.c: zl_q_push */

/* The out queue of an inproc PAIR holds 64 records (one whole chunk): the
 * next send needs a new chunk. Without one it is OUT_OF_MEMORY/ENOMEM, the
 * part consumed, nothing queued; the next send goes through and the peer
 * receives everything else, in order, and not the refused record. */
static void push_needs_a_chunk_send_is_oom(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, &a, &b);
    char t[32];
    for (int i = 0; i < ZL_FQ_CHUNK; i++) {
        snprintf(t, sizeof t, "r%d", i);
        ZT_EQ_INT(send_text(b, t, 0), ZLINK_SUBMIT_OK);
    }
    zt_alloc_rule_t rule = zt_alloc_size(CHUNK_BYTES);
    zt_alloc_fail_begin(&rule);
    zlink_submit_result_t r = send_text(b, "refused", ZLINK_DONTWAIT);
    int err = zlink_errno();
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1);
    ZT_EQ_INT(r, ZLINK_SUBMIT_OUT_OF_MEMORY);
    ZT_EQ_INT(err, ENOMEM);
    ZT_EQ_INT(send_text(b, "after", 0), ZLINK_SUBMIT_OK);
    for (int i = 0; i < ZL_FQ_CHUNK; i++) {
        snprintf(t, sizeof t, "r%d", i);
        zlt_expect_str(a, t);
    }
    zlt_expect_str(a, "after");
    zlt_expect_no_data(a);
    zlt_finish(ctx, a, b);
}

/* A three-part record whose third frame would need a new chunk (62 of 64
 * slots used): refused whole (OUT_OF_MEMORY), no part of it queued; the
 * same record sent again arrives whole, after the 62 before it. */
static void multipart_push_is_all_or_nothing(void)
{
    void *ctx = zlt_ctx_new();
    void *a, *b;
    pair_link(ctx, &a, &b);
    char t[32];
    for (int i = 0; i < ZL_FQ_CHUNK - 2; i++) {
        snprintf(t, sizeof t, "r%d", i);
        ZT_EQ_INT(send_text(b, t, 0), ZLINK_SUBMIT_OK);
    }
    zt_alloc_rule_t rule = zt_alloc_size(CHUNK_BYTES);
    zt_alloc_fail_begin(&rule);
    zlink_submit_result_t r = send_parts(b, "m", 3, 0);
    int err = zlink_errno();
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1);
    ZT_EQ_INT(r, ZLINK_SUBMIT_OUT_OF_MEMORY);
    ZT_EQ_INT(err, ENOMEM);
    ZT_EQ_INT(send_parts(b, "m", 3, 0), ZLINK_SUBMIT_OK);
    for (int i = 0; i < ZL_FQ_CHUNK - 2; i++) {
        snprintf(t, sizeof t, "r%d", i);
        zlt_expect_str(a, t);
    }
    expect_parts(a, "m", 3);
    zlt_expect_no_data(a);
    zlt_finish(ctx, a, b);
}

/* ================================ queue.c: zl_fq_splice in a delivery */

/* A tcp PAIR whose in queue holds exactly one full chunk (64 records from
 * a raw peer, delivered in at least two reads so that the engine keeps a
 * chunk of its own for the next read). The next record needs a chunk in
 * the in queue on the I/O thread; without one the connection ends with
 * ENOMEM: ERROR INTERNAL (0x0A) to the peer, DISCONNECTED TRANSPORT_ERROR
 * on the monitor. The 64 records delivered before stay receivable, the one
 * that could not be delivered is gone with the connection (never half a
 * record), and a new peer is served as usual. */
static void engine_delivery_without_memory_ends_connection(void)
{
    void *ctx = zlt_ctx_new();
    void *s = zlt_sock(ctx, ZLINK_PAIR);
    char ep[256];
    zlt_bind(s, "tcp", ep, sizeof ep);
    void *mon = monitor_of(s);
    raw_t r;
    raw_pair_peer(&r, port_of(s));
    raw_send_record(&r, "d0");
    ZT_EVENTUALLY(rcv_pending(mon) == 1, 5000);
    wire_t w;
    w_init(&w);
    for (int i = 1; i < ZL_FQ_CHUNK; i++) {
        char t[16];
        snprintf(t, sizeof t, "d%d", i);
        w_data(&w, false, t);
    }
    raw_send(&r, &w);
    w_free(&w);
    ZT_EVENTUALLY(rcv_pending(mon) == ZL_FQ_CHUNK, 5000);

    zt_alloc_rule_t rule = chunk_rule_all_threads();
    zt_alloc_fail_begin(&rule);
    raw_send_record(&r, "lost");
    raw_wait_closed(&r);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1);
    ZT_EQ_INT(raw_error_code(&r), 0x0A);
    raw_close(&r);
    ZT_EQ_U64(expect_disconnected(mon), ZLINK_DISCONNECT_TRANSPORT_ERROR);

    for (int i = 0; i < ZL_FQ_CHUNK; i++) {
        char t[16];
        snprintf(t, sizeof t, "d%d", i);
        zlt_expect_str(s, t);
    }
    zlt_expect_no_data(s);

    raw_t r2;
    raw_pair_peer(&r2, port_of(s));
    raw_send_record(&r2, "again");
    zlt_expect_str(s, "again");
    raw_close(&r2);
    ZT_EQ_INT(zlink_monitor_close(&mon), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* ================================ queue.c: zl_q_inject (STREAM notices) */

static void *stream_sock(void *ctx)
{
    void *s = zlt_sock(ctx, ZLINK_STREAM);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    zlt_set_int(s, ZLINK_STREAM_NOTIFY, 1);
    return s;
}

/* One STREAM receive: its routing id (4 bytes) into *id, payload into
 * buf; returns the payload size. */
static size_t stream_recv(void *s, uint32_t *id, char *buf, size_t cap)
{
    zlink_msg_t part;
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_recv_result_t r = zlink_recv(s, &rid, &part, 1, &count, ZLINK_RECV_FLAGS_NONE);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("STREAM receive: result %d, errno %d", (int)r, zlink_errno());
    ZT_EQ_INT(count, 1);
    ZT_CHECK(rid != NULL && rid->size == 4);
    *id = be32(rid->data);
    size_t n = zlink_msg_size(&part);
    ZT_CHECK(n <= cap);
    if (n > 0)
        memcpy(buf, zlink_msg_data(&part), n);
    zlink_msg_close(&part);
    return n;
}

/* STREAM with NOTIFY: the in queue of a peer holds a full chunk (its
 * connect notice and 63 one-byte reads, each waited for) when the peer
 * closes. The disconnect notice then finds no room and no memory; it uses
 * the chunk set aside at attach and arrives after all the data. */
static void stream_disconnect_notice_is_reserved(void)
{
    void *ctx = zlt_ctx_new();
    void *s = stream_sock(ctx);
    char ep[256];
    zlt_bind(s, "tcp", ep, sizeof ep);
    void *mon = monitor_of(s);
    raw_t c;
    raw_connect(&c, ep);
    ZT_EVENTUALLY(rcv_pending(mon) == 1, 5000);
    for (int i = 1; i < ZL_FQ_CHUNK; i++) {
        char byte = (char)('A' + i % 26);
        raw_send_bytes(&c, &byte, 1);
        ZT_EVENTUALLY(rcv_pending(mon) == (uint64_t)i + 1, 5000);
    }

    zt_alloc_rule_t rule = chunk_rule_all_threads();
    zt_alloc_fail_begin(&rule);
    raw_close(&c);
    ZT_EVENTUALLY(rcv_pending(mon) == ZL_FQ_CHUNK + 1, 5000);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1); /* the notice asked for a chunk, then used its own */

    uint32_t id0, id;
    char buf[64];
    ZT_EQ_INT(stream_recv(s, &id0, buf, sizeof buf), 0); /* connect notice */
    for (int i = 1; i < ZL_FQ_CHUNK; i++) {
        ZT_EQ_INT(stream_recv(s, &id, buf, sizeof buf), 1);
        ZT_EQ_INT(id, id0);
        ZT_EQ_INT(buf[0], 'A' + i % 26);
    }
    ZT_EQ_INT(stream_recv(s, &id, buf, sizeof buf), 0); /* disconnect notice */
    ZT_EQ_INT(id, id0);
    zlt_expect_no_data(s);

    raw_t c2;
    raw_connect(&c2, ep);
    raw_send_bytes(&c2, "z", 1);
    ZT_EQ_INT(stream_recv(s, &id, buf, sizeof buf), 0);
    ZT_CHECK(id != id0);
    ZT_EQ_INT(stream_recv(s, &id, buf, sizeof buf), 1);
    ZT_EQ_INT(buf[0], 'z');
    raw_close(&c2);
    ZT_EQ_INT(zlink_monitor_close(&mon), ZLINK_CLOSE_OK);
    zlt_finish(ctx, s);
}

/* STREAM with NOTIFY: a connection whose connect notice cannot get a chunk
 * is refused at once (closed by the socket, nothing queued for it); the
 * next connection is served. */
static void stream_connect_notice_without_memory_refuses(void)
{
    void *ctx = zlt_ctx_new();
    void *s = stream_sock(ctx);
    char ep[256];
    zlt_bind(s, "tcp", ep, sizeof ep);
    zt_alloc_rule_t rule = chunk_rule_all_threads();
    zt_alloc_fail_begin(&rule);
    raw_t c;
    raw_connect(&c, ep);
    raw_wait_closed(&c);
    unsigned failed = zt_alloc_fail_end();
    ZT_CHECK(failed >= 1);
    raw_close(&c);
    zlt_expect_no_data(s);

    raw_t c2;
    raw_connect(&c2, ep);
    raw_send_bytes(&c2, "y", 1);
    uint32_t id;
    char buf[8];
    ZT_EQ_INT(stream_recv(s, &id, buf, sizeof buf), 0);
    ZT_EQ_INT(stream_recv(s, &id, buf, sizeof buf), 1);
    ZT_EQ_INT(buf[0], 'y');
    raw_close(&c2);
    zlt_finish(ctx, s);
}

/* ============================= queue.c: zl_q_push_ctl (inproc controls) */

/* Receives one publication (NONE) and checks its topic and one part. */
static void expect_publication(void *sub, const char *topic, const char *text)
{
    char t[64];
    size_t tlen = 0, count = 0;
    zlink_msg_t parts[4];
    ZT_EQ_INT(zlink_subscribe(sub, NULL, t, sizeof t, &tlen, parts, 4, &count,
                              ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_OK);
    ZT_EQ_INT(tlen, strlen(topic));
    ZT_EQ_MEM(t, topic, tlen);
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), strlen(text));
    ZT_EQ_MEM(zlink_msg_data(&parts[0]), text, strlen(text));
    zlink_multipart_close(parts, count);
}

/* An inproc SUB whose first SUBSCRIBE needs the first chunk of the control
 * list toward its PUB: without memory zlink_set_subscription reports
 * INTERNAL/ENOMEM and nothing changed (no topic recorded, the PUB was not
 * told); the same call then works and publications flow. */
static void inproc_subscribe_without_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *pub = zlt_sock(ctx, ZLINK_PUB);
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    char ep[256];
    zlt_bind(pub, "inproc", ep, sizeof ep);
    zlt_connect(sub, ep);

    zt_alloc_rule_t rule = zt_alloc_size(CHUNK_BYTES);
    zt_alloc_fail_begin(&rule);
    zlink_config_result_t r = zlink_set_subscription(sub, "news");
    int err = zlink_errno();
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1);
    ZT_EQ_INT(r, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(err, ENOMEM);
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 0);

    ZT_EQ_INT(zlink_set_subscription(sub, "news"), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 1);
    /* The PUB applies the subscription at its next call, before it looks
     * for matching pipes: this publication reaches the SUB. */
    zlink_msg_t m;
    zlt_msg_set(&m, "hello", 5);
    ZT_EQ_INT(zlink_publish(pub, "news", &m, 1, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlink_msg_close(&m);
    expect_publication(sub, "news", "hello");
    zlt_finish(ctx, sub, pub);
}

/* An inproc DEALER-ROUTER link: WEIGHT and FLOWSTATE changes go to the
 * peer through the control list. Without memory for it, the option and
 * the flow state report ENOMEM and keep their old value (the peer was not
 * told); the same calls then work. */
static void inproc_weight_and_flow_without_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    int old_weight = zlt_get_int(d, ZLINK_DEALER_WEIGHT);
    int w = old_weight + 7;

    zt_alloc_rule_t rule = zt_alloc_size(CHUNK_BYTES);
    zt_alloc_fail_begin(&rule);
    zlink_config_result_t cr = zlink_setsockopt(d, ZLINK_DEALER_WEIGHT, &w, sizeof w);
    int err = zlink_errno();
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1);
    ZT_EQ_INT(cr, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(err, ENOMEM);
    ZT_EQ_INT(zlt_get_int(d, ZLINK_DEALER_WEIGHT), old_weight);

    zt_alloc_fail_begin(&rule);
    cr = zlink_socket_set_receive_flow_state(d, ZLINK_RECEIVE_FLOW_PAUSED);
    err = zlink_errno();
    failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1);
    ZT_EQ_INT(cr, ZLINK_CONFIG_INTERNAL);
    ZT_EQ_INT(err, ENOMEM);
    /* Not paused: the ROUTER can still send to the DEALER. */
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "still-running", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "still-running");

    zlt_set_int(d, ZLINK_DEALER_WEIGHT, w);
    ZT_EQ_INT(zlt_get_int(d, ZLINK_DEALER_WEIGHT), w);
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(d, ZLINK_RECEIVE_FLOW_RUNNING),
              ZLINK_CONFIG_OK);
    ZT_EQ_INT(send_text(d, "ping", 0), ZLINK_SUBMIT_OK);
    zlt_router_expect(r, "D", "ping");
    zlt_finish(ctx, d, r);
}

/* ============================================ socket.c: zl_socket_stash */

/* A SUB receive with a topic buffer too short hands the record back
 * (BUFFER_TOO_SMALL, the needed length written). Handing back needs no
 * memory: with every allocation of the thread failing none is asked for,
 * and the next receive returns the whole record. */
static void sub_short_topic_stash_needs_no_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *pub = zlt_sock(ctx, ZLINK_PUB);
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    char ep[256];
    zlt_bind(pub, "inproc", ep, sizeof ep);
    zlt_connect(sub, ep);
    ZT_EQ_INT(zlink_set_subscription(sub, ""), ZLINK_CONFIG_OK);
    /* A first record received makes the receive path warm (its scratch
     * allocated); the PUB applies the subscription at this publish. */
    zlink_msg_t w;
    zlt_msg_set(&w, "w", 1);
    ZT_EQ_INT(zlink_publish(pub, "warm", &w, 1, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlink_msg_close(&w);
    expect_publication(sub, "warm", "w");
    zlink_msg_t m[2];
    zlt_msg_set(&m[0], "a", 1);
    zlt_msg_set(&m[1], "b", 1);
    ZT_EQ_INT(zlink_publish(pub, "a-long-topic", m, 2, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    zlink_multipart_close(m, 2);

    char topic[4];
    size_t tlen = 0, count = 0;
    zlink_msg_t parts[4];
    zt_alloc_fail_begin(NULL);
    zlink_recv_result_t rr = zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 4,
                                             &count, ZLINK_DONTWAIT);
    int err = zlink_errno();
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rr, ZLINK_RECV_BUFFER_TOO_SMALL);
    ZT_EQ_INT(err, ENOBUFS);
    ZT_EQ_INT(tlen, strlen("a-long-topic"));
    ZT_EQ_INT(failed, 0); /* nothing was even asked for */

    char big[32];
    ZT_EQ_INT(zlink_subscribe(sub, NULL, big, sizeof big, &tlen, parts, 4, &count,
                              ZLINK_DONTWAIT),
              ZLINK_RECV_OK);
    ZT_EQ_INT(tlen, strlen("a-long-topic"));
    ZT_EQ_MEM(big, "a-long-topic", tlen);
    ZT_EQ_INT(count, 2);
    ZT_EQ_MEM(zlink_msg_data(&parts[0]), "a", 1);
    ZT_EQ_MEM(zlink_msg_data(&parts[1]), "b", 1);
    zlink_multipart_close(parts, count);
    zlt_finish(ctx, sub, pub);
}

/* ========================================= completion.c: token_publish */

/* A DONTWAIT send refused at the HWM leaves a wait token; once the peer
 * drained, the WRITABLE record is published at the next completion
 * receive. Publishing turns the token into the record in place: with every
 * allocation of 16 bytes or more failing (the receive's own 8-byte sorting
 * array still works), none is asked for and the record arrives. */
static void writable_record_needs_no_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *a = zlt_sock(ctx, ZLINK_PAIR);
    void *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_set_u64(b, ZLINK_SNDHWM, 4 * (ZL_FRAME_OVERHEAD + 8));
    char ep[256];
    zlt_bind(a, "inproc", ep, sizeof ep);
    zlt_connect(b, ep);
    zlink_completion_id_t id = 0;
    int sent = 0;
    for (;;) {
        zlink_msg_t m;
        zlt_msg_set(&m, "xxxxxxxx", 8);
        zlink_submit_result_t r = zlink_send(b, &m, 1, ZLINK_DONTWAIT, (void *)&id, &id);
        zlink_msg_close(&m);
        if (r == ZLINK_SUBMIT_BACKPRESSURED)
            break;
        ZT_EQ_INT(r, ZLINK_SUBMIT_OK);
        ZT_CHECK(++sent < 100);
    }
    ZT_CHECK(id != 0);
    for (int i = 0; i < sent; i++)
        zlt_expect_str(a, "xxxxxxxx");

    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    zt_alloc_rule_t rule = {16, 0, 0, 0, 0, 0, NULL, 0};
    zt_alloc_fail_begin(&rule);
    zlink_recv_result_t rr = zlink_completion_recv(b, &c, ZLINK_DONTWAIT);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rr, ZLINK_RECV_OK);
    ZT_EQ_INT(failed, 0);
    ZT_EQ_INT(c.kind, ZLINK_COMPLETION_WRITABLE);
    ZT_EQ_U64(c.completion_id, id);
    ZT_CHECK(c.user_context == (void *)&id);
    ZT_EQ_INT(c.send_result, ZLINK_SEND_ADMITTED);
    zlink_completion_close(&c);
    ZT_EQ_INT(send_text(b, "again", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(a, "again");
    zlt_finish(ctx, a, b);
}

/* ============================================ request.c: req_complete */

/* Sends one request "q" from d; returns its completion id. */
static zlink_completion_id_t request_of(void *d, uint32_t timeout_ms)
{
    zlink_msg_t m;
    zlt_msg_set(&m, "q", 1);
    zlink_completion_id_t id = 0;
    ZT_EQ_INT(zlink_request(d, NULL, &m, 1, ZLINK_SEND_FLAGS_NONE, timeout_ms, NULL, &id),
              ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    zlink_msg_close(&m);
    ZT_CHECK(id != 0);
    return id;
}

/* The ROUTER receives the request "q" from "D" and replies text. */
static void router_answers(void *r, const char *text)
{
    zlink_msg_t parts[4];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 0;
    ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 4, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_OK);
    ZT_CHECK(tok != 0);
    ZT_EQ_INT(count, 1);
    ZT_EQ_MEM(zlink_msg_data(&parts[0]), "q", 1);
    zlink_routing_id_t src = *rid;
    zlink_multipart_close(parts, count);
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    ZT_EQ_INT(zlink_reply(r, &src, tok, &m, 1), ZLINK_SUBMIT_OK);
    zlink_msg_close(&m);
}

/* An admitted request that times out ends as one REQUEST record
 * TIMED_OUT. Its record is the request's own memory: the completion
 * receive that waits for it succeeds with every allocation of the thread
 * failing, and asks for none. */
static void request_timeout_record_needs_no_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    zlink_completion_id_t id = request_of(d, 30);
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    zt_alloc_fail_begin(NULL);
    zlink_recv_result_t rr = zlink_completion_recv(d, &c, ZLINK_RECV_FLAGS_NONE);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rr, ZLINK_RECV_OK);
    ZT_EQ_INT(failed, 0);
    ZT_EQ_INT(c.kind, ZLINK_COMPLETION_REQUEST);
    ZT_EQ_U64(c.completion_id, id);
    ZT_EQ_INT(c.request_result, ZLINK_REQUEST_TIMED_OUT);
    ZT_CHECK(c.reply_parts == NULL && c.reply_part_count == 0);
    zlink_completion_close(&c);
    /* The ROUTER still got the request; its late reply is dropped. */
    router_answers(r, "late");
    zlink_completion_id_t id2 = request_of(d, 5000);
    router_answers(r, "pong");
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    ZT_EQ_INT(zlink_completion_recv(d, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_U64(c.completion_id, id2);
    ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
    ZT_EQ_INT(c.reply_part_count, 1);
    ZT_EQ_MEM(zlink_msg_data(&c.reply_parts[0]), "pong", 4);
    zlink_completion_close(&c);
    zlt_finish(ctx, d, r);
}

/* A request answered by its ROUTER: the completion receive takes the reply
 * (its parts array, 64 bytes, is the one allocation it needs) and ends the
 * request OK without allocating its record: allocations the size of a
 * record or larger all fail, and none is asked for. */
static void request_reply_record_needs_no_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    zlink_completion_id_t id = request_of(d, 5000);
    router_answers(r, "pong");
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    zt_alloc_rule_t rule = {sizeof(zl_cq_rec_t), 0, 0, 0, 0, 0, NULL, 0};
    zt_alloc_fail_begin(&rule);
    zlink_recv_result_t rr = zlink_completion_recv(d, &c, ZLINK_RECV_FLAGS_NONE);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rr, ZLINK_RECV_OK);
    ZT_EQ_INT(failed, 0);
    ZT_EQ_U64(c.completion_id, id);
    ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
    ZT_EQ_INT(c.reply_part_count, 1);
    ZT_EQ_MEM(zlink_msg_data(&c.reply_parts[0]), "pong", 4);
    zlink_completion_close(&c);
    zlt_finish(ctx, d, r);
}

/* ================================================ hmap.c: first buckets */

#define FIRST_BUCKETS_BYTES (ZL_HMAP_INITIAL_BUCKETS * sizeof(zl_hnode_t *))

/* A DEALER's first request indexes it in a hash table whose first bucket
 * array is allocated then. Without it the request is still admitted (the
 * table chains on one inline bucket), its reply completes it, and the
 * next request (with memory again) works as well. */
static void first_request_without_bucket_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    zt_alloc_rule_t rule = zt_alloc_size(FIRST_BUCKETS_BYTES);
    zt_alloc_fail_begin(&rule);
    zlink_completion_id_t id = request_of(d, 5000);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 1);
    zlink_completion_id_t id2 = request_of(d, 5000);
    router_answers(r, "one");
    router_answers(r, "two");
    zlink_completion_t c;
    for (int i = 0; i < 2; i++) {
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        ZT_EQ_INT(zlink_completion_recv(d, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
        ZT_EQ_U64(c.completion_id, i == 0 ? id : id2);
        ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
        ZT_EQ_INT(c.reply_part_count, 1);
        ZT_EQ_MEM(zlink_msg_data(&c.reply_parts[0]), i == 0 ? "one" : "two", 3);
        zlink_completion_close(&c);
    }
    zlt_finish(ctx, d, r);
}

/* The ROUTER answers "ok" with tok; the DEALER's request id completes OK. */
static void reply_completes(void *r, void *d, const zlink_routing_id_t *src,
                            zlink_reply_token_t tok, zlink_completion_id_t id)
{
    zlink_msg_t m;
    zlt_msg_set(&m, "ok", 2);
    ZT_EQ_INT(zlink_reply(r, src, tok, &m, 1), ZLINK_SUBMIT_OK);
    zlink_msg_close(&m);
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    ZT_EQ_INT(zlink_completion_recv(d, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_U64(c.completion_id, id);
    ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
    zlink_completion_close(&c);
}

/* A ROUTER's first received request gets a reply token indexed in two
 * hash tables whose bucket arrays are allocated then. Without them the
 * token is still issued and the reply reaches the requester. */
static void router_token_without_bucket_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    zlink_completion_id_t id = request_of(d, 5000);
    zt_alloc_rule_t rule = zt_alloc_size(FIRST_BUCKETS_BYTES);
    zt_alloc_fail_begin(&rule);
    zlink_msg_t parts[4];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 0;
    zlink_recv_result_t rr =
        zlink_router_recv(r, &rid, &tok, parts, 4, &count, ZLINK_RECV_FLAGS_NONE);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rr, ZLINK_RECV_OK);
    ZT_EQ_INT(failed, 2); /* by token and by (source, sequence) */
    ZT_CHECK(tok != 0);
    zlink_routing_id_t src = *rid;
    zlink_multipart_close(parts, count);
    reply_completes(r, d, &src, tok, id);
    /* The token was retired by the reply: a second reply finds nothing. */
    zlink_msg_t m;
    zlt_msg_set(&m, "ok", 2);
    ZT_EQ_INT(zlink_reply(r, &src, tok, &m, 1), ZLINK_SUBMIT_NOT_FOUND);
    zlink_msg_close(&m);
    zlt_finish(ctx, d, r);
}

/* A ROUTER receiving a REQUEST needs a reply token. Without memory for
 * it the receive takes nothing (INTERNAL/ENOMEM) instead of handing out a
 * REQUEST nobody could answer; the next receive gets the REQUEST with a
 * token, and the reply completes the request. */
static void router_reply_token_without_memory(void)
{
    void *ctx = zlt_ctx_new();
    void *d, *r;
    zlt_dr_pair(ctx, "inproc", &d, &r);
    /* A first REQUEST takes the token the earlier receives set aside. */
    zlink_completion_id_t first = request_of(d, 5000);
    router_answers(r, "a");
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    ZT_EQ_INT(zlink_completion_recv(d, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_U64(c.completion_id, first);
    zlink_completion_close(&c);

    zlink_completion_id_t id = request_of(d, 5000);
    zlink_msg_t parts[4];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 0;
    zt_alloc_rule_t rule = zt_alloc_size(sizeof(zl_rtoken_t));
    zt_alloc_fail_begin(&rule);
    zlink_recv_result_t rr =
        zlink_router_recv(r, &rid, &tok, parts, 4, &count, ZLINK_RECV_FLAGS_DONTWAIT);
    int err = zlink_errno();
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rr, ZLINK_RECV_INTERNAL);
    ZT_EQ_INT(err, ENOMEM);
    ZT_CHECK(failed >= 1);
    ZT_CHECK(rid == NULL);
    ZT_EQ_INT(tok, 0);
    ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, parts, 4, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_OK);
    ZT_CHECK(tok != 0);
    zlink_routing_id_t src = *rid;
    zlink_multipart_close(parts, count);
    reply_completes(r, d, &src, tok, id);
    zlt_finish(ctx, d, r);
}

/* ====================================================== internal units */

/* A frame whose message holds the text; flags as given. */
static void frame_set(zl_frame_t *f, const char *text, uint8_t flags)
{
    memset(f, 0, sizeof *f);
    ZT_EQ_INT(zl_msg_init_copy(&f->msg, text, strlen(text)), 0);
    f->flags = flags;
}

static void fq_push_text(zl_fq_t *q, const char *text)
{
    zl_frame_t *f = zl_fq_push(q);
    ZT_CHECK(f != NULL);
    frame_set(f, text, 0);
}

static void fq_expect(zl_fq_t *q, size_t i, const char *text)
{
    zl_frame_t *f = zl_fq_at(q, i);
    ZT_EQ_INT(zl_msg_size(&f->msg), strlen(text));
    ZT_EQ_MEM(zl_msg_data(&f->msg), text, strlen(text));
}

/* zl_fq_splice into a FIFO whose last chunk is full: without memory for
 * the chunk it needs, ENOMEM and both FIFOs exactly as they were; with
 * memory, every frame moved in order. (Reached through the engine in
 * engine_delivery_without_memory_ends_connection; here the all-or-nothing
 * promise itself.) */
static void unit_splice_is_all_or_nothing(void)
{
    zl_fq_t dst, src;
    zl_fq_init(&dst);
    zl_fq_init(&src);
    char t[16];
    for (int i = 0; i < ZL_FQ_CHUNK; i++) {
        snprintf(t, sizeof t, "d%d", i);
        fq_push_text(&dst, t);
    }
    for (int i = 0; i < 70; i++) {
        snprintf(t, sizeof t, "s%d", i);
        fq_push_text(&src, t);
    }
    zt_alloc_fail_begin(NULL);
    int rc = zl_fq_splice(&dst, &src);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rc, ENOMEM);
    ZT_EQ_INT(failed, 1);
    ZT_EQ_INT(dst.count, ZL_FQ_CHUNK);
    ZT_EQ_INT(src.count, 70);
    fq_expect(&dst, ZL_FQ_CHUNK - 1, "d63");
    fq_expect(&src, 0, "s0");
    fq_expect(&src, 69, "s69");

    ZT_EQ_INT(zl_fq_splice(&dst, &src), 0);
    ZT_EQ_INT(src.count, 0);
    ZT_EQ_INT(dst.count, ZL_FQ_CHUNK + 70);
    for (int i = 0; i < 70; i++) {
        snprintf(t, sizeof t, "s%d", i);
        fq_expect(&dst, ZL_FQ_CHUNK + (size_t)i, t);
    }
    zl_fq_fini(&dst);
    zl_fq_fini(&src);
}

/* zl_q_take_all into a private batch that still holds frames (the engine's
 * write FIFO between two writes): without memory to append, nothing is
 * taken (0, no eof, the queue unchanged and still charged); with memory,
 * everything. */
static void unit_take_all_into_busy_batch(void)
{
    zl_q_end_t none = {NULL, NULL};
    zl_q_t *q = zl_q_new(0, none, none);
    ZT_CHECK(q != NULL);
    zl_frame_t f;
    for (int i = 0; i < 3; i++) {
        frame_set(&f, "rec", 0);
        ZT_EQ_INT(zl_q_push(q, &f, 1, false), ZL_Q_OK);
    }
    zl_fq_t out;
    zl_fq_init(&out);
    for (int i = 0; i < ZL_FQ_CHUNK; i++)
        fq_push_text(&out, "old");
    uint64_t charge = 0;
    bool eof = true;
    zt_alloc_fail_begin(NULL);
    size_t n = zl_q_take_all(q, &out, &charge, &eof);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(n, 0);
    ZT_EQ_INT(failed, 1);
    ZT_CHECK(!eof);
    ZT_EQ_U64(charge, 0);
    ZT_EQ_INT(zl_q_records(q), 3);
    ZT_EQ_U64(zl_q_bytes(q), 3 * (3 + ZL_FRAME_OVERHEAD));
    ZT_EQ_INT(out.count, ZL_FQ_CHUNK);
    n = zl_q_take_all(q, &out, &charge, &eof);
    ZT_EQ_INT(n, 3);
    ZT_EQ_U64(charge, 3 * (3 + ZL_FRAME_OVERHEAD));
    ZT_EQ_INT(out.count, ZL_FQ_CHUNK + 3);
    zl_fq_fini(&out);
    zl_q_unref(q);
    zl_q_unref(q);
}

/* zl_q_push_control_latest replaces a queued control of the same name in
 * place (the FIFO is compacted, never rebuilt): with every allocation
 * failing it still works when the tail has room, asks for nothing, keeps
 * the order of everything else and never touches a frame inside a
 * multipart record. Also across chunks (150 frames). */
static void unit_latest_control_replaces_in_place(void)
{
    zl_q_end_t none = {NULL, NULL};
    zl_q_t *q = zl_q_new(0, none, none);
    ZT_CHECK(q != NULL);
    zl_frame_t f;
    char t[16];
    int weights = 0;
    /* d0, W, d1, W, ... with a multipart record "m|WEIGHTx" at 40 whose
     * second frame looks like a WEIGHT but is data. */
    for (int i = 0; i < 70; i++) {
        snprintf(t, sizeof t, "d%d", i);
        frame_set(&f, t, 0);
        ZT_EQ_INT(zl_q_push(q, &f, 1, false), ZL_Q_OK);
        if (i == 40) {
            zl_frame_t mp[2];
            frame_set(&mp[0], "m", ZMP_F_MORE);
            frame_set(&mp[1], "WEIGHTxxxx", ZMP_F_CONTROL);
            ZT_EQ_INT(zl_q_push(q, mp, 2, false), ZL_Q_OK);
        }
        if (i % 9 == 0) {
            frame_set(&f, "WEIGHTold!", ZMP_F_CONTROL);
            ZT_EQ_INT(zl_q_push_control_latest(q, &f, "WEIGHT", 6), ZL_Q_OK);
            weights = 1;
        }
    }
    ZT_EQ_INT(weights, 1);
    size_t before = zl_q_records(q);
    frame_set(&f, "WEIGHTnew!", ZMP_F_CONTROL);
    zt_alloc_fail_begin(NULL);
    int rc = zl_q_push_control_latest(q, &f, "WEIGHT", 6);
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(rc, ZL_Q_OK);
    ZT_EQ_INT(failed, 0);
    ZT_EQ_INT(zl_q_records(q), before); /* one old WEIGHT out, the new one in */

    zl_fq_t out;
    zl_fq_init(&out);
    uint64_t charge = 0;
    bool eof = false;
    ZT_EQ_INT(zl_q_take_all(q, &out, &charge, &eof), 70 + 2 + 1);
    for (int i = 0, at = 0; i < 70; i++) {
        snprintf(t, sizeof t, "d%d", i);
        fq_expect(&out, (size_t)at++, t);
        if (i == 40) {
            fq_expect(&out, (size_t)at++, "m");
            fq_expect(&out, (size_t)at++, "WEIGHTxxxx");
        }
    }
    fq_expect(&out, 72, "WEIGHTnew!");
    ZT_EQ_U64(charge, zl_q_bytes(q));
    zl_q_release(q, charge);
    zl_fq_fini(&out);
    zl_q_unref(q);
    zl_q_unref(q);
}

typedef struct item {
    zl_hnode_t node;
    int value;
} item_t;

/* A hash table whose first bucket array cannot be allocated keeps working
 * on its inline chain: inserts, lookups (several nodes per key), removal
 * and a walk over every node; the next insert with memory moves everything
 * into buckets. */
static void unit_hmap_without_buckets(void)
{
    zl_hmap_t m;
    memset(&m, 0, sizeof m);
    item_t it[40];
    zt_alloc_fail_begin(NULL);
    for (int i = 0; i < 40; i++) {
        it[i].value = i;
        zl_hmap_insert(&m, &it[i].node, (uint64_t)(i % 20));
    }
    unsigned failed = zt_alloc_fail_end();
    ZT_EQ_INT(failed, 40);
    ZT_EQ_INT(m.count, 40);
    for (int k = 0; k < 20; k++) {
        int seen = 0;
        for (zl_hnode_t *x = zl_hmap_first(&m, (uint64_t)k); x != NULL; x = zl_hmap_next(x))
            seen += ((item_t *)(void *)x)->value % 20 == k;
        ZT_EQ_INT(seen, 2);
    }
    zl_hmap_remove(&m, &it[3].node);
    ZT_CHECK(((item_t *)(void *)zl_hmap_first(&m, 3))->value == 23);
    ZT_CHECK(zl_hmap_next(zl_hmap_first(&m, 3)) == NULL);
    item_t extra = {{NULL, 0}, 99};
    zl_hmap_insert(&m, &extra.node, 99); /* memory again: buckets now */
    ZT_CHECK(zl_hmap_chains(&m) > 1);
    size_t total = 0;
    for (size_t i = 0; i < zl_hmap_chains(&m); i++)
        for (zl_hnode_t *x = zl_hmap_chain(&m, i); x != NULL; x = x->next)
            total++;
    ZT_EQ_INT(total, 40);
    ZT_CHECK(((item_t *)(void *)zl_hmap_first(&m, 99))->value == 99);
    ZT_CHECK(((item_t *)(void *)zl_hmap_first(&m, 3))->value == 23);
    zl_hmap_fini(&m);
}

static const zt_case_t cases[] = {
    ZT_CASE(push_needs_a_chunk_send_is_oom),
    ZT_CASE(multipart_push_is_all_or_nothing),
    ZT_CASE(engine_delivery_without_memory_ends_connection),
    ZT_CASE(stream_disconnect_notice_is_reserved),
    ZT_CASE(stream_connect_notice_without_memory_refuses),
    ZT_CASE(inproc_subscribe_without_memory),
    ZT_CASE(inproc_weight_and_flow_without_memory),
    ZT_CASE(sub_short_topic_stash_needs_no_memory),
    ZT_CASE(writable_record_needs_no_memory),
    ZT_CASE(request_timeout_record_needs_no_memory),
    ZT_CASE(request_reply_record_needs_no_memory),
    ZT_CASE(first_request_without_bucket_memory),
    ZT_CASE(router_token_without_bucket_memory),
    ZT_CASE(router_reply_token_without_memory),
    ZT_CASE(unit_splice_is_all_or_nothing),
    ZT_CASE(unit_take_all_into_busy_batch),
    ZT_CASE(unit_latest_control_replaces_in_place),
    ZT_CASE(unit_hmap_without_buckets),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
