/*
 * bench_zlink.c — the ZLink half of core_vs_libzmq.
 *
 * Design notes
 * ------------
 * Mirrors bench_zmq.c call for call, with the G3 whole-record API of
 * abi/include/zlink.h: one zlink_send / zlink_send_rid / zlink_publish per
 * message, one zlink_recv / zlink_router_recv / zlink_subscribe per message.
 * The main thread creates the contexts and sockets, binds and connects, and
 * hands the sockets to two worker threads (bench_run_threads); afterwards it
 * closes the sockets and terminates the contexts.
 *
 * Roles (binding side first):
 *   throughput  pair           receiver PAIR   <- sender PAIR
 *               dealer_router  receiver ROUTER <- sender DEALER
 *               router_router  sender ROUTER   -> receiver ROUTER (id BENCH_PEER_RID)
 *               pub_sub        sender PUB      -> receiver SUB ("")
 *   latency     pair           server PAIR     <- client PAIR
 *               dealer_router  server ROUTER   <- client DEALER
 *               router_router  client ROUTER   -> server ROUTER (id BENCH_PEER_RID)
 *               pub_sub        client PUB -> server SUB, server PUB -> client SUB
 *
 * Settings: ZLink defaults (byte HWM 4,096,000 per pipe, ROUTER_MANDATORY 1),
 * except
 *   - SNDTIMEO = RCVTIMEO = -1 (the default 1000 ms would end a blocked call);
 *   - LINGER 0, so an aborted run cannot block zlink_ctx_term;
 *   - pub_sub: PUB_NODROP 1, so the publisher blocks instead of dropping.
 *
 * Message ownership: every send consumes its parts (success or failure) and
 * leaves them empty but initialized, so the sender re-initializes the same
 * zlink_msg_t for the next message. Received parts belong to the receiver
 * until zlink_multipart_close, or until they are handed to a send (the echo
 * server sends the received parts back without copying).
 *
 * Failure: the first worker that fails prints the ERROR line, sets
 * run->failed and shuts the contexts down (zlink_ctx_shutdown), which makes
 * the other worker's blocking call return; that worker then leaves quietly.
 */
#include "bench_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlink.h"

#define MAX_PARTS 4

typedef struct zl_run {
    const bench_case_t *c;
    void *ctx[2];      /* ctx[1] == ctx[0] for inproc */
    void *sock[4];     /* [0] sender/client, [1] receiver/server,
                          pub_sub latency: [2] server PUB, [3] client SUB */
    char endpoint[2][256];
    atomic_int failed;
    atomic_int sub_ready;
    double msgs_per_s;
    double *rtt_us;
} zl_run_t;

static const char peer_rid_bytes[] = BENCH_PEER_RID;
#define PEER_RID_LEN (sizeof peer_rid_bytes - 1)

/* First failure wins: prints the ERROR line (with the result code, when
 * nonzero, and the thread's zlink_errno) and unblocks the other worker. */
static void run_fail(zl_run_t *r, const char *what, int result)
{
    int err = zlink_errno();
    int expected = 0;
    if (!atomic_compare_exchange_strong(&r->failed, &expected, 1))
        return;
    if (result != 0)
        bench_error(r->c, "%s: result %d errno %d (%s)", what, result, err, zlink_strerror(err));
    else
        bench_error(r->c, "%s", what);
    zlink_ctx_shutdown(r->ctx[0]);
    if (r->ctx[1] != r->ctx[0])
        zlink_ctx_shutdown(r->ctx[1]);
}

/* Failures after another worker failed are that failure's echo. */
static int run_aborted(zl_run_t *r)
{
    return atomic_load(&r->failed);
}

/* ------------------------------------------------------------------ setup */

static int set_int(zl_run_t *r, void *s, int option, int value, const char *name)
{
    zlink_config_result_t rc = zlink_setsockopt(s, option, &value, sizeof value);
    if (rc != ZLINK_CONFIG_OK) {
        run_fail(r, name, rc);
        return -1;
    }
    return 0;
}

static void *new_socket(zl_run_t *r, int side, int type)
{
    void *s = zlink_socket(r->ctx[side], type);
    if (!s) {
        run_fail(r, "zlink_socket", -1);
        return NULL;
    }
    int rc = set_int(r, s, ZLINK_SNDTIMEO, -1, "setsockopt(SNDTIMEO)");
    if (rc == 0)
        rc = set_int(r, s, ZLINK_RCVTIMEO, -1, "setsockopt(RCVTIMEO)");
    if (rc == 0)
        rc = set_int(r, s, ZLINK_LINGER, 0, "setsockopt(LINGER)");
    for (int opt = ZLINK_SNDHWM; rc == 0 && r->c->zlink_hwm > 0; opt = ZLINK_RCVHWM) {
        uint64_t v = r->c->zlink_hwm;
        zlink_config_result_t cr = zlink_setsockopt(s, opt, &v, sizeof v);
        if (cr != ZLINK_CONFIG_OK) {
            run_fail(r, "setsockopt(HWM)", cr);
            rc = -1;
        }
        if (opt == ZLINK_RCVHWM)
            break;
    }
    if (rc == 0 && type == ZLINK_PUB)
        rc = set_int(r, s, ZLINK_PUB_NODROP, 1, "setsockopt(PUB_NODROP)");
    if (rc == 0 && type == ZLINK_SUB) {
        zlink_config_result_t cr = zlink_set_subscription(s, "");
        if (cr != ZLINK_CONFIG_OK) {
            run_fail(r, "zlink_set_subscription", cr);
            rc = -1;
        }
    }
    if (rc != 0) {
        zlink_close(s);
        return NULL;
    }
    return s;
}

static int bind_any(zl_run_t *r, void *s, int slot)
{
    char ep[256];
    bench_endpoint(r->c->transport, "0", ep, sizeof ep);
    zlink_bind_result_t rc = zlink_bind(s, ep);
    if (rc != ZLINK_BIND_OK) {
        run_fail(r, "zlink_bind", rc);
        return -1;
    }
    char *buf = r->endpoint[slot];
    size_t len = sizeof r->endpoint[slot] - 1;
    memset(buf, 0, sizeof r->endpoint[slot]);
    zlink_config_result_t cr = zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, buf, &len);
    if (cr != ZLINK_CONFIG_OK || buf[0] == '\0') {
        run_fail(r, "getsockopt(LAST_ENDPOINT)", cr);
        return -1;
    }
    return 0;
}

static int connect_to(zl_run_t *r, void *s, int slot)
{
    zlink_connect_result_t rc = zlink_connect(s, r->endpoint[slot]);
    if (rc != ZLINK_CONNECT_OK) {
        run_fail(r, "zlink_connect", rc);
        return -1;
    }
    return 0;
}

static int set_peer_rid(zl_run_t *r, void *s)
{
    zlink_config_result_t rc = zlink_set_routing_id(s, peer_rid_bytes, PEER_RID_LEN);
    if (rc != ZLINK_CONFIG_OK) {
        run_fail(r, "zlink_set_routing_id", rc);
        return -1;
    }
    return 0;
}

static void run_close(zl_run_t *r);

static int run_open(zl_run_t *r, const bench_case_t *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->ctx[0] = zlink_ctx_new();
    if (!r->ctx[0]) {
        bench_error(c, "zlink_ctx_new: errno %d (%s)", zlink_errno(),
                    zlink_strerror(zlink_errno()));
        return -1;
    }
    r->ctx[1] = r->ctx[0];
    if (c->transport != BENCH_INPROC) {
        r->ctx[1] = zlink_ctx_new();
        if (!r->ctx[1]) {
            bench_error(c, "zlink_ctx_new: errno %d (%s)", zlink_errno(),
                        zlink_strerror(zlink_errno()));
            zlink_ctx_term(r->ctx[0]);
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        zlink_config_result_t rc = zlink_ctx_set(r->ctx[i], ZLINK_IO_THREADS, 1);
        if (rc != ZLINK_CONFIG_OK) {
            run_fail(r, "zlink_ctx_set(IO_THREADS)", rc);
            run_close(r);
            return -1;
        }
        rc = zlink_ctx_set(r->ctx[i], ZLINK_SPIN_US, c->zlink_spin_us);
        if (rc == ZLINK_CONFIG_OK)
            rc = zlink_ctx_set(r->ctx[i], ZLINK_IO_SPIN_US, c->zlink_io_spin_us);
        if (rc != ZLINK_CONFIG_OK) {
            run_fail(r, "zlink_ctx_set(SPIN_US, IO_SPIN_US)", rc);
            run_close(r);
            return -1;
        }
    }
    return 0;
}

static void run_close(zl_run_t *r)
{
    bench_phase("teardown");
    for (int i = 0; i < 4; i++) {
        if (r->sock[i])
            zlink_close(r->sock[i]);
    }
    zlink_ctx_term(r->ctx[0]);
    if (r->ctx[1] && r->ctx[1] != r->ctx[0])
        zlink_ctx_term(r->ctx[1]);
    for (int i = 0; i < 2; i++)
        bench_endpoint_cleanup(r->endpoint[i]);
}

static void print_settings(zl_run_t *r, void *sender, void *receiver, const char *mode)
{
    uint64_t sndhwm = 0, rcvhwm = 0;
    size_t len = sizeof sndhwm;
    char snd[32] = "?", rcv[32] = "?";
    if (zlink_getsockopt(sender, ZLINK_SNDHWM, &sndhwm, &len) == ZLINK_CONFIG_OK)
        snprintf(snd, sizeof snd, "%llu", (unsigned long long)sndhwm);
    len = sizeof rcvhwm;
    if (zlink_getsockopt(receiver, ZLINK_RCVHWM, &rcvhwm, &len) == ZLINK_CONFIG_OK)
        snprintf(rcv, sizeof rcv, "%llu", (unsigned long long)rcvhwm);
    bench_pattern_t p = r->c->pattern;
    printf("SETTINGS,zlink,%s,%s,%s,io_threads=1 contexts=%d sndhwm=%s bytes rcvhwm=%s bytes "
           "linger=0 sndtimeo=-1 rcvtimeo=-1%s\n",
           mode, bench_pattern_name(p), bench_transport_name(r->c->transport),
           r->ctx[0] == r->ctx[1] ? 1 : 2, snd, rcv,
           p == BENCH_PUB_SUB ? " pub_nodrop=1"
           : (p == BENCH_DEALER_ROUTER || p == BENCH_ROUTER_ROUTER) ? " router_mandatory=1(default)"
                                                                    : "");
}

/* ------------------------------------------------------------- primitives */

/* How a socket sends one record. */
typedef enum send_kind { SEND_PLAIN, SEND_RID, SEND_TOPIC } send_kind_t;

/* Sends parts[0..n) (consumed). SEND_RID retries NOT_CONNECTED (no route
 * yet) for up to BENCH_STALL_NS, rebuilding the message from payload each
 * time since a failed send empties it. Returns 0 or -1 (run failed). */
static int send_record(zl_run_t *r, void *s, send_kind_t kind, const zlink_routing_id_t *rid,
                       const char *topic, zlink_msg_t *parts, size_t n)
{
    switch (kind) {
    case SEND_PLAIN: {
        zlink_submit_result_t rc = zlink_send(s, parts, n, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
        if (rc != ZLINK_SUBMIT_OK) {
            if (!run_aborted(r))
                run_fail(r, "zlink_send", rc);
            return -1;
        }
        return 0;
    }
    case SEND_TOPIC: {
        zlink_submit_result_t rc = zlink_publish(s, topic, parts, n, ZLINK_SEND_FLAGS_NONE);
        if (rc != ZLINK_SUBMIT_OK) {
            if (!run_aborted(r))
                run_fail(r, "zlink_publish", rc);
            return -1;
        }
        return 0;
    }
    default: {
        zlink_submit_result_t rc =
            zlink_send_rid(s, rid, parts, n, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
        if (rc != ZLINK_SUBMIT_OK) {
            if (!run_aborted(r))
                run_fail(r, "zlink_send_rid", rc);
            return -1;
        }
        return 0;
    }
    }
}

static int make_msg(zl_run_t *r, zlink_msg_t *m, const unsigned char *payload, size_t size)
{
    if (payload != NULL && size >= BENCH_ZERO_COPY_MIN) {
        zlink_config_result_t rc = zlink_msg_init_data(m, (void *)payload, size, NULL, NULL);
        if (rc != ZLINK_CONFIG_OK) {
            run_fail(r, "zlink_msg_init_data", rc);
            return -1;
        }
        return 0;
    }
    zlink_config_result_t rc = zlink_msg_init_size(m, size);
    if (rc != ZLINK_CONFIG_OK) {
        run_fail(r, "zlink_msg_init_size", rc);
        return -1;
    }
    if (size)
        memcpy(zlink_msg_data(m), payload, size);
    return 0;
}

/* Builds and sends one payload message. */
static int send_payload(zl_run_t *r, void *s, send_kind_t kind, const zlink_routing_id_t *rid,
                        const char *topic, const unsigned char *payload, size_t size)
{
    zlink_msg_t part;
    if (make_msg(r, &part, payload, size) != 0)
        return -1;
    return send_record(r, s, kind, rid, topic, &part, 1);
}

/* The first message to a ROUTER peer: NOT_CONNECTED means the route is not
 * up yet, so it is retried (up to BENCH_STALL_NS). */
static int send_first_rid(zl_run_t *r, void *s, const zlink_routing_id_t *rid,
                          const unsigned char *payload, size_t size)
{
    uint64_t deadline = bench_now_ns() + BENCH_STALL_NS;
    for (;;) {
        zlink_msg_t part;
        if (make_msg(r, &part, payload, size) != 0)
            return -1;
        zlink_submit_result_t rc =
            zlink_send_rid(s, rid, &part, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
        if (rc == ZLINK_SUBMIT_OK)
            return 0;
        zlink_msg_close(&part);
        if (rc != ZLINK_SUBMIT_NOT_CONNECTED) {
            if (!run_aborted(r))
                run_fail(r, "zlink_send_rid", rc);
            return -1;
        }
        if (bench_now_ns() > deadline) {
            run_fail(r, "no route to the peer ROUTER within 10 s (NOT_CONNECTED)", rc);
            return -1;
        }
        bench_sleep_us(BENCH_RETRY_SLEEP_US);
    }
}

/* One received record: parts, its routing id (ROUTER) or topic (SUB). */
typedef struct received {
    zlink_msg_t parts[MAX_PARTS];
    size_t count;
    const zlink_routing_id_t *rid;
    char topic[64];
    size_t topic_len;
} received_t;

typedef enum recv_kind { RECV_PLAIN, RECV_ROUTER, RECV_SUB } recv_kind_t;

/* Receives one record into *m. Returns 0, 1 for NO_DATA with DONTWAIT, or
 * -1 (run failed or aborted). */
static int recv_record(zl_run_t *r, void *s, recv_kind_t kind, received_t *m, int dontwait)
{
    zlink_recv_flags_t flags = dontwait ? ZLINK_RECV_FLAGS_DONTWAIT : ZLINK_RECV_FLAGS_NONE;
    zlink_recv_result_t rc;
    const char *what;
    m->count = 0;
    switch (kind) {
    case RECV_ROUTER: {
        zlink_reply_token_t token = 0;
        rc = zlink_router_recv(s, &m->rid, &token, m->parts, MAX_PARTS, &m->count, flags);
        what = "zlink_router_recv";
        break;
    }
    case RECV_SUB:
        rc = zlink_subscribe(s, NULL, m->topic, sizeof m->topic - 1, &m->topic_len, m->parts,
                             MAX_PARTS, &m->count, flags);
        what = "zlink_subscribe";
        break;
    default:
        rc = zlink_recv(s, NULL, m->parts, MAX_PARTS, &m->count, flags);
        what = "zlink_recv";
        break;
    }
    if (rc == ZLINK_RECV_OK)
        return 0;
    m->count = 0;
    if (rc == ZLINK_RECV_NO_DATA && dontwait)
        return 1;
    if (!run_aborted(r))
        run_fail(r, what, rc);
    return -1;
}

static int is_topic(const received_t *m, const char *topic)
{
    size_t n = strlen(topic);
    return m->topic_len == n && memcmp(m->topic, topic, n) == 0;
}

/* The record must be one part of size bytes; closes the parts either way. */
static int check_and_close(zl_run_t *r, received_t *m, size_t size)
{
    int ok = m->count == 1 && zlink_msg_size(&m->parts[0]) == size;
    size_t got_count = m->count, got_size = m->count ? zlink_msg_size(&m->parts[0]) : 0;
    zlink_multipart_close(m->parts, m->count);
    m->count = 0;
    if (!ok) {
        char what[128];
        snprintf(what, sizeof what, "received %zu part(s) / %zu bytes; expected 1 / %zu",
                 got_count, got_size, size);
        run_fail(r, what, 0);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- throughput */

static void *thr_sender(void *arg)
{
    zl_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *s = r->sock[0];
    send_kind_t kind = SEND_PLAIN;
    zlink_routing_id_t rid = {0};
    uint64_t i = 0;

    if (c->pattern == BENCH_ROUTER_ROUTER) {
        kind = SEND_RID;
        rid.size = (uint8_t)PEER_RID_LEN;
        memcpy(rid.data, peer_rid_bytes, PEER_RID_LEN);
        if (send_first_rid(r, s, &rid, c->payload, c->size) != 0)
            return NULL;
        i = 1;
    } else if (c->pattern == BENCH_PUB_SUB) {
        kind = SEND_TOPIC;
        uint64_t deadline = bench_now_ns() + BENCH_STALL_NS;
        while (!atomic_load(&r->sub_ready)) {
            if (bench_now_ns() > deadline) {
                run_fail(r, "subscription not established within 10 s", 0);
                return NULL;
            }
            if (send_payload(r, s, SEND_TOPIC, NULL, BENCH_TOPIC_WARMUP, NULL, 0) != 0)
                return NULL;
            bench_sleep_us(1000);
        }
    }
    for (; i < c->count; i++) {
        zlink_msg_t part;
        if (make_msg(r, &part, c->payload, c->size) != 0)
            return NULL;
        if (send_record(r, s, kind, &rid, BENCH_TOPIC_DATA, &part, 1) != 0)
            return NULL;
        bench_progress_set(0, i + 1);
    }
    return NULL;
}

static void *thr_receiver(void *arg)
{
    zl_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *s = r->sock[1];
    recv_kind_t kind = c->pattern == BENCH_PUB_SUB ? RECV_SUB
                       : (c->pattern == BENCH_DEALER_ROUTER || c->pattern == BENCH_ROUTER_ROUTER)
                           ? RECV_ROUTER
                           : RECV_PLAIN;
    received_t m;
    uint64_t first = 0, last = 0;

    for (uint64_t got = 0; got < c->count;) {
        if (recv_record(r, s, kind, &m, 0) != 0)
            return NULL;
        if (kind == RECV_SUB && is_topic(&m, BENCH_TOPIC_WARMUP)) {
            zlink_multipart_close(m.parts, m.count);
            atomic_store(&r->sub_ready, 1);
            continue;
        }
        if (check_and_close(r, &m, c->size) != 0)
            return NULL;
        last = bench_now_ns();
        if (got == 0)
            first = last;
        got++;
        bench_progress_set(1, got);
    }
    r->msgs_per_s = (double)(c->count - 1) * 1e9 / (double)(last - first);
    return NULL;
}

static int zl_throughput(const bench_case_t *c, double *msgs_per_s)
{
    zl_run_t run, *r = &run;
    bench_phase("setup");
    if (run_open(r, c) != 0)
        return -1;
    int ok = -1;
    {
        switch (c->pattern) {
        case BENCH_PAIR:
        case BENCH_DEALER_ROUTER:
            r->sock[1] = new_socket(r, 1, c->pattern == BENCH_PAIR ? ZLINK_PAIR : ZLINK_ROUTER);
            r->sock[0] = new_socket(r, 0, c->pattern == BENCH_PAIR ? ZLINK_PAIR : ZLINK_DEALER);
            if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[1], 0) == 0 &&
                connect_to(r, r->sock[0], 0) == 0)
                ok = 0;
            break;
        case BENCH_ROUTER_ROUTER:
            r->sock[0] = new_socket(r, 0, ZLINK_ROUTER);
            r->sock[1] = new_socket(r, 1, ZLINK_ROUTER);
            if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[0], 0) == 0 &&
                set_peer_rid(r, r->sock[1]) == 0 && connect_to(r, r->sock[1], 0) == 0)
                ok = 0;
            break;
        case BENCH_PUB_SUB:
            r->sock[0] = new_socket(r, 0, ZLINK_PUB);
            r->sock[1] = new_socket(r, 1, ZLINK_SUB);
            if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[0], 0) == 0 &&
                connect_to(r, r->sock[1], 0) == 0)
                ok = 0;
            break;
        default:
            break;
        }
    }
    if (ok == 0 && c->print_settings)
        print_settings(r, r->sock[0], r->sock[1], "throughput");
    if (ok == 0) {
        bench_phase("throughput");
        if (bench_run_threads(thr_sender, r, thr_receiver, r) != 0)
            run_fail(r, "pthread_create", 0);
    }
    ok = run_aborted(r) ? -1 : 0;
    if (ok == 0)
        *msgs_per_s = r->msgs_per_s;
    run_close(r);
    return ok;
}

/* ---------------------------------------------------------------- latency */

static void *lat_client(void *arg)
{
    zl_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *out = r->sock[0];
    void *in = c->pattern == BENCH_PUB_SUB ? r->sock[3] : r->sock[0];
    send_kind_t skind = SEND_PLAIN;
    recv_kind_t rkind = RECV_PLAIN;
    zlink_routing_id_t rid = {0};
    received_t m;
    uint64_t i = 0;
    uint64_t total = (uint64_t)c->rtt_warmup + c->rtt_count;

    if (c->pattern == BENCH_ROUTER_ROUTER) {
        skind = SEND_RID;
        rkind = RECV_ROUTER;
        rid.size = (uint8_t)PEER_RID_LEN;
        memcpy(rid.data, peer_rid_bytes, PEER_RID_LEN);
    } else if (c->pattern == BENCH_PUB_SUB) {
        skind = SEND_TOPIC;
        rkind = RECV_SUB;
        /* Both subscriptions are up once a warm-up message comes back. */
        uint64_t deadline = bench_now_ns() + BENCH_STALL_NS;
        int seen = 0;
        while (!seen) {
            if (bench_now_ns() > deadline) {
                run_fail(r, "subscriptions not established within 10 s", 0);
                return NULL;
            }
            if (send_payload(r, out, SEND_TOPIC, NULL, BENCH_TOPIC_WARMUP, NULL, 0) != 0)
                return NULL;
            bench_sleep_us(1000);
            for (;;) {
                int rc = recv_record(r, in, RECV_SUB, &m, 1);
                if (rc < 0)
                    return NULL;
                if (rc > 0)
                    break;
                zlink_multipart_close(m.parts, m.count);
                seen = 1;
            }
        }
    }

    for (; i < total; i++) {
        uint64_t t0 = bench_now_ns();
        int sent;
        if (skind == SEND_RID && i == 0)
            sent = send_first_rid(r, out, &rid, c->payload, c->size);
        else
            sent = send_payload(r, out, skind, &rid, BENCH_TOPIC_DATA, c->payload, c->size);
        if (sent != 0)
            return NULL;
        for (;;) {
            if (recv_record(r, in, rkind, &m, 0) != 0)
                return NULL;
            /* pub_sub: late echoes of warm-up messages are skipped */
            if (rkind == RECV_SUB && !is_topic(&m, BENCH_TOPIC_DATA)) {
                zlink_multipart_close(m.parts, m.count);
                continue;
            }
            break;
        }
        uint64_t t1 = bench_now_ns();
        if (check_and_close(r, &m, c->size) != 0)
            return NULL;
        if (i >= c->rtt_warmup)
            r->rtt_us[i - c->rtt_warmup] = (double)(t1 - t0) / 1000.0;
        bench_progress_set(0, i + 1);
    }
    return NULL;
}

static void *lat_server(void *arg)
{
    zl_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *in = r->sock[1];
    void *out = c->pattern == BENCH_PUB_SUB ? r->sock[2] : r->sock[1];
    recv_kind_t rkind = c->pattern == BENCH_PUB_SUB ? RECV_SUB
                        : c->pattern == BENCH_PAIR  ? RECV_PLAIN
                                                    : RECV_ROUTER;
    received_t m;
    uint64_t total = (uint64_t)c->rtt_warmup + c->rtt_count;

    for (uint64_t n = 0; n < total;) {
        if (recv_record(r, in, rkind, &m, 0) != 0)
            return NULL;
        int measured = 1;
        int rc;
        switch (rkind) {
        case RECV_ROUTER:
            /* m.rid is borrowed until the next receive on this socket */
            rc = send_record(r, out, SEND_RID, m.rid, NULL, m.parts, m.count);
            break;
        case RECV_SUB:
            measured = is_topic(&m, BENCH_TOPIC_DATA);
            m.topic[m.topic_len] = '\0';
            rc = send_record(r, out, SEND_TOPIC, NULL, m.topic, m.parts, m.count);
            break;
        default:
            rc = send_record(r, out, SEND_PLAIN, NULL, NULL, m.parts, m.count);
            break;
        }
        /* the parts were consumed by the send and left empty */
        zlink_multipart_close(m.parts, m.count);
        if (rc != 0)
            return NULL;
        if (measured) {
            n++;
            bench_progress_set(1, n);
        }
    }
    return NULL;
}

static int zl_latency(const bench_case_t *c, double *rtt_us)
{
    zl_run_t run, *r = &run;
    bench_phase("setup");
    if (run_open(r, c) != 0)
        return -1;
    r->rtt_us = rtt_us;
    int ok = -1;
    {
        switch (c->pattern) {
        case BENCH_PAIR:
        case BENCH_DEALER_ROUTER:
            r->sock[1] = new_socket(r, 1, c->pattern == BENCH_PAIR ? ZLINK_PAIR : ZLINK_ROUTER);
            r->sock[0] = new_socket(r, 0, c->pattern == BENCH_PAIR ? ZLINK_PAIR : ZLINK_DEALER);
            if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[1], 0) == 0 &&
                connect_to(r, r->sock[0], 0) == 0)
                ok = 0;
            break;
        case BENCH_ROUTER_ROUTER:
            r->sock[0] = new_socket(r, 0, ZLINK_ROUTER);
            r->sock[1] = new_socket(r, 1, ZLINK_ROUTER);
            if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[0], 0) == 0 &&
                set_peer_rid(r, r->sock[1]) == 0 && connect_to(r, r->sock[1], 0) == 0)
                ok = 0;
            break;
        case BENCH_PUB_SUB:
            r->sock[0] = new_socket(r, 0, ZLINK_PUB);
            r->sock[1] = new_socket(r, 1, ZLINK_SUB);
            r->sock[2] = new_socket(r, 1, ZLINK_PUB);
            r->sock[3] = new_socket(r, 0, ZLINK_SUB);
            if (r->sock[0] && r->sock[1] && r->sock[2] && r->sock[3] &&
                bind_any(r, r->sock[0], 0) == 0 && connect_to(r, r->sock[1], 0) == 0 &&
                bind_any(r, r->sock[2], 1) == 0 && connect_to(r, r->sock[3], 1) == 0)
                ok = 0;
            break;
        default:
            break;
        }
    }
    if (ok == 0 && c->print_settings)
        print_settings(r, r->sock[0], r->sock[1], "latency");
    if (ok == 0) {
        bench_phase("latency");
        if (bench_run_threads(lat_client, r, lat_server, r) != 0)
            run_fail(r, "pthread_create", 0);
    }
    ok = run_aborted(r) ? -1 : 0;
    run_close(r);
    return ok;
}

static void zl_version_string(char *buf, size_t cap)
{
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch);
    snprintf(buf, cap, "%d.%d.%d", major, minor, patch);
}

const bench_lib_t bench_lib_zlink = {
    .name = "zlink",
    .version = zl_version_string,
    .throughput = zl_throughput,
    .latency = zl_latency,
};
