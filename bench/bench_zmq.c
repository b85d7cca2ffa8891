/*
 * bench_zmq.c — the libzmq half of core_vs_libzmq (the baseline, D1).
 *
 * Design notes
 * ------------
 * The same measurements as bench_zlink.c, with libzmq 4.3 calls. The main
 * thread creates the contexts and sockets, binds and connects, and hands the
 * sockets to two worker threads (bench_run_threads); thread creation orders
 * the hand-over, which libzmq allows for non-thread-safe sockets. Afterwards
 * the main thread closes the sockets and terminates the contexts.
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
 * Settings: libzmq defaults (SNDHWM = RCVHWM = 1000 messages), except
 *   - LINGER 0 everywhere, so an aborted run cannot block zmq_ctx_term;
 *   - ROUTER_MANDATORY 1 on every ROUTER: a ROUTER then blocks at the HWM
 *     instead of dropping, and reports a missing route as EHOSTUNREACH;
 *   - pub_sub: SNDHWM = RCVHWM = 100000 and XPUB_NODROP 1 on the PUB, so the
 *     publisher blocks instead of dropping (ZLink: PUB_NODROP 1).
 *
 * Failure: the first worker that fails prints the ERROR line, sets
 * run->failed and shuts the contexts down (zmq_ctx_shutdown), which makes the
 * other worker's blocking call return ETERM; that worker then leaves quietly.
 */
#include "bench_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define PUBSUB_HWM 100000

typedef struct zmq_run {
    const bench_case_t *c;
    void *ctx[2];      /* ctx[1] == ctx[0] for inproc */
    void *sock[4];     /* see the role tables: [0] sender/client, [1] receiver/server,
                          pub_sub latency: [2] server PUB, [3] client SUB */
    char endpoint[2][256]; /* bound endpoints, for ipc cleanup */
    atomic_int failed;
    atomic_int sub_ready;  /* pub_sub throughput: the receiver saw a warm-up message */
    double msgs_per_s;     /* throughput result */
    double *rtt_us;        /* latency result */
} zmq_run_t;

static const unsigned char peer_rid[] = BENCH_PEER_RID;
#define PEER_RID_LEN (sizeof peer_rid - 1)

/* First failure wins: prints the ERROR line and unblocks the other worker. */
static void run_fail(zmq_run_t *r, const char *what)
{
    int err = errno;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&r->failed, &expected, 1))
        return;
    bench_error(r->c, "%s: %s (errno %d)", what, zmq_strerror(err), err);
    zmq_ctx_shutdown(r->ctx[0]);
    if (r->ctx[1] != r->ctx[0])
        zmq_ctx_shutdown(r->ctx[1]);
}

/* ------------------------------------------------------------------ setup */

static void *new_socket(zmq_run_t *r, int side, int type)
{
    void *s = zmq_socket(r->ctx[side], type);
    if (!s) {
        run_fail(r, "zmq_socket");
        return NULL;
    }
    int zero = 0, one = 1;
    int rc = zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    if (rc == 0 && type == ZMQ_ROUTER)
        rc = zmq_setsockopt(s, ZMQ_ROUTER_MANDATORY, &one, sizeof one);
    if (rc == 0 && r->c->pattern == BENCH_PUB_SUB) {
        int hwm = PUBSUB_HWM;
        rc = zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm);
        if (rc == 0)
            rc = zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm);
        if (rc == 0 && type == ZMQ_PUB)
            rc = zmq_setsockopt(s, ZMQ_XPUB_NODROP, &one, sizeof one);
        if (rc == 0 && type == ZMQ_SUB)
            rc = zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
    }
    if (rc != 0) {
        run_fail(r, "zmq_setsockopt");
        zmq_close(s);
        return NULL;
    }
    return s;
}

/* Binds s to a fresh endpoint; the connectable address goes to r->endpoint[slot]. */
static int bind_any(zmq_run_t *r, void *s, int slot)
{
    char ep[256];
    bench_endpoint(r->c->transport, "*", ep, sizeof ep);
    if (zmq_bind(s, ep) != 0) {
        run_fail(r, "zmq_bind");
        return -1;
    }
    size_t len = sizeof r->endpoint[slot];
    if (zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, r->endpoint[slot], &len) != 0) {
        run_fail(r, "zmq_getsockopt(LAST_ENDPOINT)");
        return -1;
    }
    return 0;
}

static int connect_to(zmq_run_t *r, void *s, int slot)
{
    if (zmq_connect(s, r->endpoint[slot]) != 0) {
        run_fail(r, "zmq_connect");
        return -1;
    }
    return 0;
}

static int set_peer_rid(zmq_run_t *r, void *s)
{
    if (zmq_setsockopt(s, ZMQ_ROUTING_ID, peer_rid, PEER_RID_LEN) != 0) {
        run_fail(r, "zmq_setsockopt(ROUTING_ID)");
        return -1;
    }
    return 0;
}

static void run_close(zmq_run_t *r);

static int run_open(zmq_run_t *r, const bench_case_t *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    r->ctx[0] = zmq_ctx_new();
    if (!r->ctx[0]) {
        bench_error(c, "zmq_ctx_new: %s", zmq_strerror(errno));
        return -1;
    }
    r->ctx[1] = r->ctx[0];
    if (c->transport != BENCH_INPROC) {
        r->ctx[1] = zmq_ctx_new();
        if (!r->ctx[1]) {
            bench_error(c, "zmq_ctx_new: %s", zmq_strerror(errno));
            zmq_ctx_term(r->ctx[0]);
            return -1;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (zmq_ctx_set(r->ctx[i], ZMQ_IO_THREADS, 1) != 0) {
            run_fail(r, "zmq_ctx_set(IO_THREADS)");
            run_close(r);
            return -1;
        }
    }
    return 0;
}

static void run_close(zmq_run_t *r)
{
    bench_phase("teardown");
    for (int i = 0; i < 4; i++) {
        if (r->sock[i])
            zmq_close(r->sock[i]);
    }
    zmq_ctx_term(r->ctx[0]);
    if (r->ctx[1] && r->ctx[1] != r->ctx[0])
        zmq_ctx_term(r->ctx[1]);
    for (int i = 0; i < 2; i++)
        bench_endpoint_cleanup(r->endpoint[i]);
}

static void print_settings(zmq_run_t *r, void *sender, void *receiver, const char *mode)
{
    int sndhwm = -1, rcvhwm = -1;
    size_t len = sizeof sndhwm;
    zmq_getsockopt(sender, ZMQ_SNDHWM, &sndhwm, &len);
    len = sizeof rcvhwm;
    zmq_getsockopt(receiver, ZMQ_RCVHWM, &rcvhwm, &len);
    bench_pattern_t p = r->c->pattern;
    printf("SETTINGS,libzmq,%s,%s,%s,io_threads=1 contexts=%d sndhwm=%d msgs rcvhwm=%d msgs "
           "linger=0%s\n",
           mode, bench_pattern_name(p), bench_transport_name(r->c->transport),
           r->ctx[0] == r->ctx[1] ? 1 : 2, sndhwm, rcvhwm,
           p == BENCH_PUB_SUB ? " xpub_nodrop=1"
           : (p == BENCH_DEALER_ROUTER || p == BENCH_ROUTER_ROUTER) ? " router_mandatory=1"
                                                                    : "");
}

/* ------------------------------------------------------------- primitives */

/* Sends one payload message, preceded by the routing frame of a ROUTER or
 * the topic frame of a PUB. On a ROUTER, EHOSTUNREACH is retried (the route
 * is not up yet) for up to BENCH_STALL_NS. Returns 0 or -1 (run failed). */
static int send_payload(zmq_run_t *r, void *s, const void *head, size_t head_len,
                        const unsigned char *payload, size_t size)
{
    if (head) {
        uint64_t deadline = 0;
        while (zmq_send(s, head, head_len, ZMQ_SNDMORE) < 0) {
            if (errno != EHOSTUNREACH) {
                run_fail(r, "zmq_send(head frame)");
                return -1;
            }
            uint64_t now = bench_now_ns();
            if (deadline == 0)
                deadline = now + BENCH_STALL_NS;
            else if (now > deadline) {
                run_fail(r, "no route to the peer ROUTER within 10 s");
                return -1;
            }
            bench_sleep_us(BENCH_RETRY_SLEEP_US);
        }
    }
    zmq_msg_t msg;
    if (payload != NULL && size >= BENCH_ZERO_COPY_MIN) {
        /* borrowed: a NULL free function makes it a constant message */
        if (zmq_msg_init_data(&msg, (void *)payload, size, NULL, NULL) != 0) {
            run_fail(r, "zmq_msg_init_data");
            return -1;
        }
    } else if (zmq_msg_init_size(&msg, size) != 0) {
        run_fail(r, "zmq_msg_init_size");
        return -1;
    } else if (size) {
        memcpy(zmq_msg_data(&msg), payload, size);
    }
    if (zmq_msg_send(&msg, s, 0) < 0) {
        zmq_msg_close(&msg);
        run_fail(r, "zmq_msg_send");
        return -1;
    }
    return 0;
}

/* Receives one frame into msg (already initialized). more_expected: whether
 * another frame must follow. Returns 0, or -1 (run failed or aborted). */
static int recv_frame(zmq_run_t *r, void *s, zmq_msg_t *msg, int more_expected, int flags)
{
    if (zmq_msg_recv(msg, s, flags) < 0) {
        if (errno == EAGAIN && (flags & ZMQ_DONTWAIT))
            return 1;
        run_fail(r, "zmq_msg_recv");
        return -1;
    }
    if (zmq_msg_more(msg) != more_expected) {
        errno = EPROTO;
        run_fail(r, more_expected ? "expected another frame" : "unexpected extra frame");
        return -1;
    }
    return 0;
}

static int check_size(zmq_run_t *r, zmq_msg_t *msg, size_t size)
{
    if (zmq_msg_size(msg) != size) {
        errno = EPROTO;
        char what[96];
        snprintf(what, sizeof what, "received %zu bytes; expected %zu", zmq_msg_size(msg), size);
        run_fail(r, what);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- throughput */

static void *thr_sender(void *arg)
{
    zmq_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *s = r->sock[0];
    const void *head = NULL;
    size_t head_len = 0;

    if (c->pattern == BENCH_ROUTER_ROUTER) {
        head = peer_rid;
        head_len = PEER_RID_LEN;
    } else if (c->pattern == BENCH_PUB_SUB) {
        head = BENCH_TOPIC_DATA;
        head_len = 1;
        /* Publish warm-up messages until the subscriber has seen one. */
        uint64_t deadline = bench_now_ns() + BENCH_STALL_NS;
        while (!atomic_load(&r->sub_ready)) {
            if (bench_now_ns() > deadline) {
                errno = ETIMEDOUT;
                run_fail(r, "subscription not established within 10 s");
                return NULL;
            }
            if (send_payload(r, s, BENCH_TOPIC_WARMUP, 1, NULL, 0) != 0)
                return NULL;
            bench_sleep_us(1000);
        }
    }
    for (uint64_t i = 0; i < c->count; i++) {
        if (send_payload(r, s, head, head_len, c->payload, c->size) != 0)
            return NULL;
        bench_progress_set(0, i + 1);
    }
    return NULL;
}

static void *thr_receiver(void *arg)
{
    zmq_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *s = r->sock[1];
    int router = c->pattern == BENCH_DEALER_ROUTER || c->pattern == BENCH_ROUTER_ROUTER;
    int sub = c->pattern == BENCH_PUB_SUB;
    zmq_msg_t head, msg;
    zmq_msg_init(&head);
    zmq_msg_init(&msg);
    uint64_t first = 0, last = 0;

    for (uint64_t got = 0; got < c->count;) {
        if (router || sub) {
            if (recv_frame(r, s, &head, 1, 0) != 0)
                goto out;
        }
        if (recv_frame(r, s, &msg, 0, 0) != 0)
            goto out;
        if (sub && zmq_msg_size(&head) == 1 &&
            memcmp(zmq_msg_data(&head), BENCH_TOPIC_WARMUP, 1) == 0) {
            atomic_store(&r->sub_ready, 1);
            continue;
        }
        if (check_size(r, &msg, c->size) != 0)
            goto out;
        last = bench_now_ns();
        if (got == 0)
            first = last;
        got++;
        bench_progress_set(1, got);
    }
    r->msgs_per_s = (double)(c->count - 1) * 1e9 / (double)(last - first);
out:
    zmq_msg_close(&head);
    zmq_msg_close(&msg);
    return NULL;
}

static int zmq_throughput(const bench_case_t *c, double *msgs_per_s)
{
    zmq_run_t run, *r = &run;
    bench_phase("setup");
    if (run_open(r, c) != 0)
        return -1;
    /* side 0 = sender's context, side 1 = receiver's */
    int ok = -1;
    switch (c->pattern) {
    case BENCH_PAIR:
    case BENCH_DEALER_ROUTER:
        r->sock[1] = new_socket(r, 1, c->pattern == BENCH_PAIR ? ZMQ_PAIR : ZMQ_ROUTER);
        r->sock[0] = new_socket(r, 0, c->pattern == BENCH_PAIR ? ZMQ_PAIR : ZMQ_DEALER);
        if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[1], 0) == 0 &&
            connect_to(r, r->sock[0], 0) == 0)
            ok = 0;
        break;
    case BENCH_ROUTER_ROUTER:
        r->sock[0] = new_socket(r, 0, ZMQ_ROUTER);
        r->sock[1] = new_socket(r, 1, ZMQ_ROUTER);
        if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[0], 0) == 0 &&
            set_peer_rid(r, r->sock[1]) == 0 && connect_to(r, r->sock[1], 0) == 0)
            ok = 0;
        break;
    case BENCH_PUB_SUB:
        r->sock[0] = new_socket(r, 0, ZMQ_PUB);
        r->sock[1] = new_socket(r, 1, ZMQ_SUB);
        if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[0], 0) == 0 &&
            connect_to(r, r->sock[1], 0) == 0)
            ok = 0;
        break;
    default:
        break;
    }
    if (ok == 0 && c->print_settings)
        print_settings(r, r->sock[0], r->sock[1], "throughput");
    if (ok == 0) {
        bench_phase("throughput");
        if (bench_run_threads(thr_sender, r, thr_receiver, r) != 0) {
            errno = EAGAIN;
            run_fail(r, "pthread_create");
        }
    }
    ok = atomic_load(&r->failed) ? -1 : 0;
    if (ok == 0)
        *msgs_per_s = r->msgs_per_s;
    run_close(r);
    return ok;
}

/* ---------------------------------------------------------------- latency */

/* Client: sends a request, waits for its echo, records the round trip. */
static void *lat_client(void *arg)
{
    zmq_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *out = r->sock[0];
    void *in = c->pattern == BENCH_PUB_SUB ? r->sock[3] : r->sock[0];
    int router = c->pattern == BENCH_ROUTER_ROUTER;
    int sub = c->pattern == BENCH_PUB_SUB;
    const void *head = NULL;
    size_t head_len = 0;
    zmq_msg_t hmsg, msg;
    zmq_msg_init(&hmsg);
    zmq_msg_init(&msg);

    if (router) {
        head = peer_rid;
        head_len = PEER_RID_LEN;
    } else if (sub) {
        head = BENCH_TOPIC_DATA;
        head_len = 1;
        /* Both subscriptions are up once a warm-up message comes back. */
        uint64_t deadline = bench_now_ns() + BENCH_STALL_NS;
        int seen = 0;
        while (!seen) {
            if (bench_now_ns() > deadline) {
                errno = ETIMEDOUT;
                run_fail(r, "subscriptions not established within 10 s");
                goto out;
            }
            if (send_payload(r, out, BENCH_TOPIC_WARMUP, 1, NULL, 0) != 0)
                goto out;
            bench_sleep_us(1000);
            for (;;) {
                int rc = recv_frame(r, in, &hmsg, 1, ZMQ_DONTWAIT);
                if (rc < 0)
                    goto out;
                if (rc > 0)
                    break;
                if (recv_frame(r, in, &msg, 0, 0) != 0)
                    goto out;
                seen = 1;
            }
        }
    }

    uint64_t total = (uint64_t)c->rtt_warmup + c->rtt_count;
    for (uint64_t i = 0; i < total; i++) {
        uint64_t t0 = bench_now_ns();
        if (send_payload(r, out, head, head_len, c->payload, c->size) != 0)
            goto out;
        for (;;) {
            if (router || sub) {
                if (recv_frame(r, in, &hmsg, 1, 0) != 0)
                    goto out;
            }
            if (recv_frame(r, in, &msg, 0, 0) != 0)
                goto out;
            /* pub_sub: late echoes of warm-up messages are skipped */
            if (sub && memcmp(zmq_msg_data(&hmsg), BENCH_TOPIC_DATA, 1) != 0)
                continue;
            break;
        }
        uint64_t t1 = bench_now_ns();
        if (check_size(r, &msg, c->size) != 0)
            goto out;
        if (i >= c->rtt_warmup)
            r->rtt_us[i - c->rtt_warmup] = (double)(t1 - t0) / 1000.0;
        bench_progress_set(0, i + 1);
    }
out:
    zmq_msg_close(&hmsg);
    zmq_msg_close(&msg);
    return NULL;
}

/* Server: echoes every message back, the received message objects themselves
 * (no copy), until it has echoed rtt_warmup + rtt_count measured ones. */
static void *lat_server(void *arg)
{
    zmq_run_t *r = arg;
    const bench_case_t *c = r->c;
    void *in = r->sock[1];
    void *out = c->pattern == BENCH_PUB_SUB ? r->sock[2] : r->sock[1];
    int framed = c->pattern != BENCH_PAIR; /* a routing-id or topic frame first */
    int sub = c->pattern == BENCH_PUB_SUB;
    zmq_msg_t hmsg, msg;
    zmq_msg_init(&hmsg);
    zmq_msg_init(&msg);

    uint64_t total = (uint64_t)c->rtt_warmup + c->rtt_count;
    for (uint64_t n = 0; n < total;) {
        if (framed && recv_frame(r, in, &hmsg, 1, 0) != 0)
            goto out;
        if (recv_frame(r, in, &msg, 0, 0) != 0)
            goto out;
        int measured = !sub || memcmp(zmq_msg_data(&hmsg), BENCH_TOPIC_DATA, 1) == 0;
        if (framed && zmq_msg_send(&hmsg, out, ZMQ_SNDMORE) < 0) {
            run_fail(r, "zmq_msg_send(echo head)");
            goto out;
        }
        if (zmq_msg_send(&msg, out, 0) < 0) {
            run_fail(r, "zmq_msg_send(echo)");
            goto out;
        }
        if (measured) {
            n++;
            bench_progress_set(1, n);
        }
    }
out:
    zmq_msg_close(&hmsg);
    zmq_msg_close(&msg);
    return NULL;
}

static int zmq_latency(const bench_case_t *c, double *rtt_us)
{
    zmq_run_t run, *r = &run;
    bench_phase("setup");
    if (run_open(r, c) != 0)
        return -1;
    r->rtt_us = rtt_us;
    /* side 0 = client's context, side 1 = server's */
    int ok = -1;
    switch (c->pattern) {
    case BENCH_PAIR:
    case BENCH_DEALER_ROUTER:
        r->sock[1] = new_socket(r, 1, c->pattern == BENCH_PAIR ? ZMQ_PAIR : ZMQ_ROUTER);
        r->sock[0] = new_socket(r, 0, c->pattern == BENCH_PAIR ? ZMQ_PAIR : ZMQ_DEALER);
        if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[1], 0) == 0 &&
            connect_to(r, r->sock[0], 0) == 0)
            ok = 0;
        break;
    case BENCH_ROUTER_ROUTER:
        r->sock[0] = new_socket(r, 0, ZMQ_ROUTER);
        r->sock[1] = new_socket(r, 1, ZMQ_ROUTER);
        if (r->sock[0] && r->sock[1] && bind_any(r, r->sock[0], 0) == 0 &&
            set_peer_rid(r, r->sock[1]) == 0 && connect_to(r, r->sock[1], 0) == 0)
            ok = 0;
        break;
    case BENCH_PUB_SUB:
        r->sock[0] = new_socket(r, 0, ZMQ_PUB);
        r->sock[1] = new_socket(r, 1, ZMQ_SUB);
        r->sock[2] = new_socket(r, 1, ZMQ_PUB);
        r->sock[3] = new_socket(r, 0, ZMQ_SUB);
        if (r->sock[0] && r->sock[1] && r->sock[2] && r->sock[3] &&
            bind_any(r, r->sock[0], 0) == 0 && connect_to(r, r->sock[1], 0) == 0 &&
            bind_any(r, r->sock[2], 1) == 0 && connect_to(r, r->sock[3], 1) == 0)
            ok = 0;
        break;
    default:
        break;
    }
    if (ok == 0 && c->print_settings)
        print_settings(r, r->sock[0], r->sock[1], "latency");
    if (ok == 0) {
        bench_phase("latency");
        if (bench_run_threads(lat_client, r, lat_server, r) != 0) {
            errno = EAGAIN;
            run_fail(r, "pthread_create");
        }
    }
    ok = atomic_load(&r->failed) ? -1 : 0;
    run_close(r);
    return ok;
}

static void zmq_version_string(char *buf, size_t cap)
{
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    snprintf(buf, cap, "%d.%d.%d", major, minor, patch);
}

const bench_lib_t bench_lib_zmq = {
    .name = "libzmq",
    .version = zmq_version_string,
    .throughput = zmq_throughput,
    .latency = zmq_latency,
};
