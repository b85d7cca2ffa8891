/*
 * test_socket_common.c — what every socket shares, through the public API
 * only (zlink.h): core-contract §8 "socket/README" items 1, 2, 3, 5-9, 11,
 * 13, 15-19, 21, 24, 25, 27 and 28 (BUSY after close; the rest of 28 is in
 * test_router.c and test_stream.c), plus the handle, argument and type
 * checks of every socket function, endpoints, and "a record is never
 * partially delivered". Shared helpers: zltest_zlink.h.
 *
 * HWM arithmetic (core-contract §3): a record's charge is the sum of
 * (payload + 64) over its parts; a queue admits a record when it is empty
 * or when bytes + charge <= HWM; a blocked writer is woken when the reader
 * brings bytes down to LWM = ceil(HWM / 2). For inproc the one queue
 * between two sockets has HWM = min(sender SNDHWM, receiver RCVHWM), 0
 * meaning unlimited, taken at connect: the cases set the options before
 * connecting and count records exactly.
 *
 * doc/contract-tests/context_pair_socket.md maps every item to its case.
 */
#include "zltest_zlink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXP 16
/* SNDTIMEO of a sender that waits for credit: long, so that a wake-up
 * that comes only with the timeout is told apart from a real one. */
#define WAKE_TIMEO 4000

static void *g_ctx;
static int g_seq;

static void ctx_begin(void)
{
    g_ctx = zlt_ctx_new();
}

static void ctx_end(void)
{
    zlt_ctx_term(g_ctx);
    g_ctx = NULL;
}

/* A socket of g_ctx with LINGER 0; every other default as it is. */
static void *sock(int type)
{
    return zlt_socket_linger0(g_ctx, type);
}

/* A fresh inproc endpoint name. */
static const char *fresh_inproc(char *buf, size_t cap)
{
    snprintf(buf, cap, "inproc://common-%d", ++g_seq);
    return buf;
}

/* A record of one part of size bytes, each byte = tag. Charge = size + 64. */
static zlink_submit_result_t send_sized(void *s, size_t size, unsigned char tag, int flags)
{
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, size), ZLINK_CONFIG_OK);
    if (size > 0)
        memset(zlink_msg_data(&m), tag, size);
    zlink_submit_result_t r = zlink_send(s, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return r;
}

#define send_sized_ok(s, size, tag) \
    ZT_EQ_INT(send_sized(s, size, tag, ZLINK_SEND_FLAGS_DONTWAIT), ZLINK_SUBMIT_OK)

static void expect_bp(void *s, size_t size)
{
    ZT_EQ_INT(send_sized(s, size, 0xEE, ZLINK_SEND_FLAGS_DONTWAIT), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
}

/* Receives one single-part record and checks its size and tag. */
static void recv_sized(void *s, size_t size, unsigned char tag)
{
    zlink_msg_t m[MAXP];
    size_t n = 0;
    zlink_recv_result_t r = zlink_recv(s, NULL, m, MAXP, &n, ZLINK_RECV_FLAGS_NONE);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("recv: result %d errno %d", (int)r, zlink_errno());
    ZT_EQ_INT(n, 1);
    ZT_EQ_INT(zlink_msg_size(&m[0]), size);
    const unsigned char *p = zlink_msg_data(&m[0]);
    for (size_t i = 0; i < size; i++)
        if (p[i] != tag)
            ZT_FAIL("byte %zu is %#x, expected %#x", i, p[i], tag);
    zlink_multipart_close(m, n);
}

/* ------------------------------------------------------------ item 1 */

static void test_socket_create_results(void)
{
    ctx_begin();
    const int types[] = {ZLINK_PAIR, ZLINK_PUB, ZLINK_SUB, ZLINK_DEALER, ZLINK_ROUTER,
                         ZLINK_STREAM};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        void *s = zlink_socket(g_ctx, types[i]);
        ZT_CHECK(s != NULL);
        ZT_EQ_INT(zlt_get_int(s, ZLINK_TYPE), types[i]);
        zlt_close(s);
    }
    /* ANY (0) is not creatable; nor is anything that is not a type. */
    const int bad[] = {0, -1, 0x1000, 0x1009, 0x2001, 1, 0x7FFFFFFF};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ZT_CHECK(zlink_socket(g_ctx, bad[i]) == NULL);
        ZT_EQ_INT(zlink_errno(), EINVAL);
    }
    /* EMFILE at MAX_SOCKETS; a close frees the slot. */
    ZT_EQ_INT(zlink_ctx_set(g_ctx, ZLINK_MAX_SOCKETS, 3), ZLINK_CONFIG_OK);
    void *s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = zlink_socket(g_ctx, ZLINK_PAIR);
        ZT_CHECK(s[i] != NULL);
    }
    ZT_CHECK(zlink_socket(g_ctx, ZLINK_DEALER) == NULL);
    ZT_EQ_INT(zlink_errno(), EMFILE);
    zlt_close(s[1]);
    s[1] = zlink_socket(g_ctx, ZLINK_DEALER);
    ZT_CHECK(s[1] != NULL);
    ZT_CHECK(zlink_socket(g_ctx, ZLINK_PAIR) == NULL);
    ZT_EQ_INT(zlink_errno(), EMFILE);
    /* ETERM once the context is shut down (EINVAL still wins for a bad type). */
    zlt_close(s[0]);
    ZT_EQ_INT(zlink_ctx_shutdown(g_ctx), ZLINK_CLOSE_OK);
    ZT_CHECK(zlink_socket(g_ctx, ZLINK_PAIR) == NULL);
    ZT_EQ_INT(zlink_errno(), ETERM);
    zlt_close(s[1]);
    zlt_close(s[2]);
    ctx_end();
    /* Not a context: EFAULT. */
    static uint64_t zeroed[64];
    ZT_CHECK(zlink_socket(NULL, ZLINK_PAIR) == NULL);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_CHECK(zlink_socket(zeroed, ZLINK_PAIR) == NULL);
    ZT_EQ_INT(zlink_errno(), EFAULT);
}

/* ------------------------------------------------------------ item 2 */

static void test_close_results(void)
{
    ctx_begin();
    void *s = sock(ZLINK_PAIR);
    zlt_close(s);
    /* A closed socket: ESTALE. */
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), ESTALE);
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), ESTALE);
    /* Never a socket: EFAULT. */
    static uint64_t zeroed[64];
    ZT_EQ_INT(zlink_close(NULL), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_close(zeroed), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_close(g_ctx), ZLINK_CLOSE_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    /* Closing with records queued both ways discards them. */
    void *a = sock(ZLINK_PAIR), *b = sock(ZLINK_PAIR);
    zlt_link(a, b, "inproc");
    send_sized_ok(a, 10, 1);
    send_sized_ok(b, 10, 2);
    zlt_close(b);
    zlt_close(a);
    ctx_end();
}

/* ------------------------------------------------------------ item 3 */

/* A call inside the socket makes close fail with EBUSY and leaves the
 * socket working: a thread blocks in a receive on b (or, for send_side, in
 * a send on a whose queue is full) while the main thread closes that
 * socket. Once the thread is seen asleep in the kernel it is inside and
 * close must say EBUSY. Where /proc cannot tell, a round may find the
 * thread not yet inside; it then checks the other outcome (the call gets
 * ESHUTDOWN) and tries again. */
static void close_gate_rounds(bool send_side)
{
    int saw_busy = 0;
    for (int round = 0; round < 2000 && !saw_busy; round++) {
        ctx_begin();
        void *a = sock(ZLINK_PAIR), *b = sock(ZLINK_PAIR);
        if (send_side)
            zlt_set_u64(a, ZLINK_SNDHWM, 100);
        zlt_link(a, b, "inproc");
        if (send_side)
            send_sized_ok(a, 100, 0x11); /* the queue is full now */
        void *inside = send_side ? a : b, *other = send_side ? b : a;
        /* A NONE receive, or a send of 100 bytes of 0x55, with no timeout. */
        zlt_blocked_t g = {.sock = inside, .send = send_side, .size = 100, .tag = 0x55,
                           .timeo = -1};
        int blocked = zlt_blocked_start(&g, true);
        zlink_close_result_t r = zlink_close(inside);
        if (blocked)
            ZT_EQ_INT(r, ZLINK_CLOSE_BUSY); /* it sleeps inside the call */
        if (r == ZLINK_CLOSE_BUSY) {
            saw_busy = 1;
            ZT_EQ_INT(zlink_errno(), EBUSY);
            ZT_EQ_INT(zlink_close(inside), ZLINK_CLOSE_BUSY); /* still inside */
            /* The socket is untouched: the blocked call completes. */
            if (send_side)
                recv_sized(b, 100, 0x11); /* makes room */
            else
                send_sized_ok(a, 5, 0x42); /* the record it waits for */
            zlt_blocked_join(&g);
            ZT_EQ_INT(g.result, 0); /* SUBMIT_OK / RECV_OK */
            if (send_side)
                recv_sized(b, 100, 0x55);
            else
                ZT_EQ_INT(g.count, 1);
            zlt_close(inside);
        } else {
            /* Close won: the call, when it comes, finds the gate shut. */
            ZT_EQ_INT(r, ZLINK_CLOSE_OK);
            zlt_blocked_join(&g);
            ZT_EQ_INT(g.result, send_side ? (int)ZLINK_SUBMIT_TERMINATED
                                          : (int)ZLINK_RECV_INVALID_STATE);
            ZT_EQ_INT(g.err, ESHUTDOWN);
            ZT_EQ_INT(g.count, ZLT_COUNT_UNSET); /* no output written */
        }
        zlt_close(other);
        ctx_end();
    }
    ZT_CHECK(saw_busy);
}

static void test_close_gate_busy(void)
{
    close_gate_rounds(false);
}

static void test_close_gate_busy_blocked_send(void)
{
    close_gate_rounds(true);
}

/* After close is accepted every call gets ESHUTDOWN in its own family. */
static void test_calls_after_close(void)
{
    ctx_begin();
    const int types[] = {ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_PUB, ZLINK_SUB};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        void *s = sock(types[k]);
        zlt_close(s);
        int v = 1;
        size_t size = sizeof v;
        ZT_EQ_INT(zlink_setsockopt(s, ZLINK_SNDTIMEO, &v, sizeof v),
                  ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_getsockopt(s, ZLINK_SNDTIMEO, &v, &size), ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_bind(s, "inproc://after-close"), ZLINK_BIND_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_connect(s, "inproc://after-close"), ZLINK_CONNECT_BUSY);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_unbind(s, "inproc://after-close"), ZLINK_CONNECT_BUSY);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_disconnect(s, "inproc://after-close"), ZLINK_CONNECT_BUSY);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_set_routing_id(s, "id", 2), ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);

        zlink_msg_t m;
        ZT_EQ_INT(zlink_msg_init_size(&m, 8), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_send(s, &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
                  ZLINK_SUBMIT_TERMINATED);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_msg_size(&m), 0); /* consumed */
        zlink_routing_id_t rid = {1, {'x'}};
        ZT_EQ_INT(zlink_msg_init_size(&m, 8), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_send_rid(s, &rid, &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
                  ZLINK_SUBMIT_TERMINATED);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_msg_init_size(&m, 8), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_publish(s, "t", &m, 1, ZLINK_SEND_FLAGS_NONE), ZLINK_SUBMIT_TERMINATED);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);

        zlink_msg_t parts[2];
        size_t count = 31;
        const zlink_routing_id_t *view = NULL;
        zlink_reply_token_t tok = 0;
        char topic[8];
        size_t tlen = 0;
        ZT_EQ_INT(zlink_recv(s, NULL, parts, 2, &count, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_router_recv(s, &view, &tok, parts, 2, &count, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_subscribe(s, &view, topic, sizeof topic, &tlen, parts, 2, &count,
                                  ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(count, 31);
        ZT_EQ_INT(zlink_set_subscription(s, "t"), ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_unset_subscription(s, "t"), ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        tlen = sizeof topic;
        ZT_EQ_INT(zlink_subscription_at(s, 0, topic, &tlen, NULL), ZLINK_CONFIG_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_disconnect_rid(s, &rid), ZLINK_CONNECT_BUSY);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), ESTALE);
    }
    ctx_end();
}

/* ------------------------------------------------------------ item 5 */

static void test_hwm_option_exactly_8_bytes(void)
{
    ctx_begin();
    void *s = sock(ZLINK_PAIR);
    const int opts[2] = {ZLINK_SNDHWM, ZLINK_RCVHWM};
    for (int k = 0; k < 2; k++) {
        int o = opts[k];
        ZT_EQ_U64(zlt_get_u64(s, o), ZLINK_HWM_DFLT);
        zlt_set_u64(s, o, 12345);
        ZT_EQ_U64(zlt_get_u64(s, o), 12345);
        zlt_set_u64(s, o, 0); /* unlimited */
        ZT_EQ_U64(zlt_get_u64(s, o), 0);
        zlt_set_u64(s, o, UINT64_MAX);
        ZT_EQ_U64(zlt_get_u64(s, o), UINT64_MAX);
        zlt_set_u64(s, o, 777);
        /* Set: any other size is EINVAL and changes nothing. */
        const size_t sizes[] = {0, 1, 4, 7, 9, 16};
        unsigned char buf[16];
        memset(buf, 0, sizeof buf);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            ZT_EQ_INT(zlink_setsockopt(s, o, buf, sizes[i]), ZLINK_CONFIG_INVALID_ARGUMENT);
            ZT_EQ_INT(zlink_errno(), EINVAL);
        }
        int iv = 5;
        ZT_EQ_INT(zlink_setsockopt(s, o, &iv, sizeof iv), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_setsockopt(s, o, NULL, 8), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_U64(zlt_get_u64(s, o), 777);
        /* Get: any other size is EINVAL with nothing written. */
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            memset(buf, 0xCD, sizeof buf);
            size_t size = sizes[i];
            ZT_EQ_INT(zlink_getsockopt(s, o, buf, &size), ZLINK_CONFIG_INVALID_ARGUMENT);
            ZT_EQ_INT(zlink_errno(), EINVAL);
            for (size_t j = 0; j < sizeof buf; j++)
                ZT_EQ_INT(buf[j], 0xCD);
        }
    }
    zlt_close(s);
    ctx_end();
}

/* ------------------------------------------------------------ items 6, 7 */

static void test_option_0x3034_einval(void)
{
    ctx_begin();
    void *s = sock(ZLINK_DEALER);
    zlt_set_int_fails(s, 0x3034, 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_get_fails(s, 0x3034, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_close(s);
    ctx_end();
}

static void test_blocky_not_supported(void)
{
    ctx_begin();
    const int types[] = {ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_PUB, ZLINK_SUB};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        void *s = sock(types[i]);
        zlt_set_int_fails(s, ZLINK_BLOCKY, 0, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
        zlt_get_fails(s, ZLINK_BLOCKY, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
        zlt_close(s);
    }
    ctx_end();
}

/* ------------------------------------------------------------ item 8 */

static void test_conflate_rules(void)
{
    ctx_begin();
    void *d = sock(ZLINK_DEALER);
    int one = 1, zero = 0;
    ZT_EQ_INT(zlink_setsockopt(d, ZLINK_CONFLATE, &one, sizeof one), ZLINK_CONFIG_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), ENOTSUP);
    ZT_EQ_INT(zlt_get_int(d, ZLINK_CONFLATE), 0);
    ZT_EQ_INT(zlink_setsockopt(d, ZLINK_CONFLATE, &zero, sizeof zero), ZLINK_CONFIG_OK);
    /* This version does not conflate: PUB and SUB refuse 1 like every other
     * type (accepting it would change nothing), and keep 0. */
    void *pub = sock(ZLINK_PUB), *sub = sock(ZLINK_SUB);
    zlt_set_int_fails(pub, ZLINK_CONFLATE, 1, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlt_set_int_fails(sub, ZLINK_CONFLATE, 1, ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlt_set_int_check(pub, ZLINK_CONFLATE, 0);
    zlt_set_int_check(sub, ZLINK_CONFLATE, 0);
    zlt_close(d);
    zlt_close(pub);
    zlt_close(sub);
    ctx_end();
}

/* ------------------------------------------------------------ item 9 */

static void test_option_errors(void)
{
    ctx_begin();
    void *s = sock(ZLINK_PAIR);
    int v = 100;
    size_t size = sizeof v;
    /* Unknown options. */
    const int unknown[] = {0, 1, 0x3000, 0x3002, 0x301F, 0x3021, 0x3034, 0x3FFF, -1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        zlt_set_int_fails(s, unknown[i], v, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        zlt_get_fails(s, unknown[i], ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    }
    /* Out of range: refused, the value unchanged. */
    struct { int opt, value; } range[] = {
        {ZLINK_SNDTIMEO, -2}, {ZLINK_RCVTIMEO, -2},  {ZLINK_LINGER, -2},
        {ZLINK_TCP_NODELAY, 2}, {ZLINK_IMMEDIATE, -1}, {ZLINK_CONFLATE, 2},
    };
    for (size_t i = 0; i < sizeof range / sizeof range[0]; i++) {
        (void)zlt_get_int(s, range[i].opt); /* readable, so the helper checks it */
        zlt_set_int_fails(s, range[i].opt, range[i].value, ZLINK_CONFIG_INVALID_ARGUMENT,
                          EINVAL);
    }
    /* Wrong size for an int option, and NULL values. */
    int64_t wide = 5;
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_SNDTIMEO, &wide, sizeof wide),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_SNDTIMEO, &v, 2), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_SNDTIMEO, NULL, sizeof v),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    size = 2;
    ZT_EQ_INT(zlink_getsockopt(s, ZLINK_SNDTIMEO, &v, &size), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* Read-only options refuse a set. */
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_TYPE, &v, sizeof v), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_setsockopt(s, ZLINK_LAST_ENDPOINT, "x", 2), ZLINK_CONFIG_INVALID_ARGUMENT);
    /* Timeouts: default 1000, -1 and 0 accepted. */
    ZT_EQ_INT(zlt_get_int(s, ZLINK_SNDTIMEO), ZLINK_TIMEO_DFLT);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_RCVTIMEO), ZLINK_TIMEO_DFLT);
    zlt_set_int(s, ZLINK_SNDTIMEO, -1);
    zlt_set_int(s, ZLINK_RCVTIMEO, 0);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_SNDTIMEO), -1);
    ZT_EQ_INT(zlt_get_int(s, ZLINK_RCVTIMEO), 0);
    zlt_close(s);
    ctx_end();
}

/* ------------------------------------------------------------ item 11 */


static void *sender_a, *receiver_b;

/* a -> b inproc with HWM min(a_snd, b_rcv). */
static void hwm_link(uint64_t a_snd, uint64_t b_rcv)
{
    sender_a = sock(ZLINK_PAIR);
    receiver_b = sock(ZLINK_PAIR);
    zlt_set_u64(sender_a, ZLINK_SNDHWM, a_snd);
    zlt_set_u64(receiver_b, ZLINK_RCVHWM, b_rcv);
    zlt_link(sender_a, receiver_b, "inproc");
}

static void hwm_unlink(void)
{
    zlt_close(sender_a);
    zlt_close(receiver_b);
}

/* Fills with 100-byte records (charge 164) until refused; returns how many. */
static int fill_count(void *s, int limit)
{
    for (int i = 0; i < limit; i++) {
        zlink_submit_result_t r = send_sized(s, 100, (unsigned char)i, ZLINK_SEND_FLAGS_DONTWAIT);
        if (r == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_EQ_INT(zlink_errno(), EAGAIN);
            return i;
        }
        ZT_EQ_INT(r, ZLINK_SUBMIT_OK);
    }
    return limit;
}

/* A NONE send of size bytes of tag on the sender with SNDTIMEO WAKE_TIMEO,
 * on another thread; returns once it sleeps in its send (or /proc cannot
 * tell). */
static void start_blocked_send(zlt_blocked_t *bs, size_t size, unsigned char tag)
{
    *bs = (zlt_blocked_t){.sock = sender_a, .send = true, .size = size, .tag = tag,
                          .timeo = WAKE_TIMEO};
    (void)zlt_blocked_start(bs, true);
}

/* Joins the sender: it must have been admitted because credit came back,
 * well before its SNDTIMEO ran out (an attempt made at the deadline may
 * also succeed, which would hide a missing wake-up). */
static void join_woken(zlt_blocked_t *bs, const char *what)
{
    zlt_blocked_join(bs);
    if (bs->result != ZLINK_SUBMIT_OK || bs->elapsed_ms >= bs->timeo / 2)
        ZT_FAIL("%s: blocked sender got %d (errno %d) after %lld ms of SNDTIMEO %d: "
                "not woken by the returned credit",
                what, bs->result, bs->err, (long long)bs->elapsed_ms, bs->timeo);
}

static void test_writes_wait_at_hwm_until_credit(void)
{
    ctx_begin();
    /* HWM 1000: six records of charge 164 (984) fit, the seventh not. */
    hwm_link(1000, ZLINK_HWM_DFLT);
    ZT_EQ_INT(fill_count(sender_a, 100), 6);
    expect_bp(sender_a, 100);
    expect_bp(sender_a, 0); /* 984 + 64 > 1000 */
    /* SNDTIMEO 0 with NONE is one attempt as well. */
    zlt_set_int(sender_a, ZLINK_SNDTIMEO, 0);
    ZT_EQ_INT(send_sized(sender_a, 100, 0xEE, ZLINK_SEND_FLAGS_NONE),
              ZLINK_SUBMIT_BACKPRESSURED);
    /* Room returns as the receiver reads: 820 + 164 <= 1000. */
    recv_sized(receiver_b, 100, 0);
    send_sized_ok(sender_a, 100, 6);
    expect_bp(sender_a, 100);
    /* A NONE sender waits for credit instead (another thread reads). */
    zlt_blocked_t bs;
    start_blocked_send(&bs, 100, 7);
    for (unsigned char tag = 1; tag <= 7; tag++)
        recv_sized(receiver_b, 100, tag); /* the 7th is the waiting sender's */
    join_woken(&bs, "HWM 1000");
    zlt_expect_no_data(receiver_b); /* nothing dropped, nothing extra */
    hwm_unlink();

    /* The inproc queue takes the smaller of SNDHWM and RCVHWM. */
    hwm_link(1000, 500);
    ZT_EQ_INT(fill_count(sender_a, 100), 3);
    hwm_unlink();
    hwm_link(500, 1000);
    ZT_EQ_INT(fill_count(sender_a, 100), 3);
    hwm_unlink();
    /* 0 on one side means the other side's HWM alone. */
    hwm_link(0, 500);
    ZT_EQ_INT(fill_count(sender_a, 100), 3);
    hwm_unlink();
    hwm_link(500, 0);
    ZT_EQ_INT(fill_count(sender_a, 100), 3);
    hwm_unlink();
    /* 0 on both: unlimited (well past the 4,096,000-byte default). */
    hwm_link(0, 0);
    for (int i = 0; i < 6000; i++)
        send_sized_ok(sender_a, 1000, (unsigned char)i);
    for (int i = 0; i < 6000; i++)
        recv_sized(receiver_b, 1000, (unsigned char)i);
    hwm_unlink();
    /* Defaults: 4,096,000 bytes, i.e. 3764 records of charge 1088. */
    sender_a = sock(ZLINK_PAIR);
    receiver_b = sock(ZLINK_PAIR);
    zlt_link(sender_a, receiver_b, "inproc");
    int n = 0;
    while (send_sized(sender_a, 1024, 1, ZLINK_SEND_FLAGS_DONTWAIT) == ZLINK_SUBMIT_OK)
        n++;
    ZT_EQ_INT(n, ZLINK_HWM_DFLT / 1088);
    /* Each direction has its own queue: the full one does not block b. */
    send_sized_ok(receiver_b, 10, 9);
    recv_sized(sender_a, 10, 9);
    hwm_unlink();
    ctx_end();
}

/* ------------------------------------------------------------ item 13 */

static void test_oversize_on_empty_and_maxmsgsize(void)
{
    ctx_begin();
    hwm_link(1000, ZLINK_HWM_DFLT);
    /* An empty queue admits one record of any size... */
    send_sized_ok(sender_a, 5000, 1);
    /* ...then nothing more until it is drained, not even a small one. */
    expect_bp(sender_a, 5000);
    expect_bp(sender_a, 0);
    recv_sized(receiver_b, 5000, 1);
    /* Empty again: once more. A multipart record counts as one. */
    zlink_msg_t parts[3];
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_msg_init_size(&parts[i], 2000), ZLINK_CONFIG_OK);
        memset(zlink_msg_data(&parts[i]), 'a' + i, 2000);
    }
    ZT_EQ_INT(zlink_send(sender_a, parts, 3, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL),
              ZLINK_SUBMIT_OK);
    zlink_multipart_close(parts, 3);
    expect_bp(sender_a, 1);
    zlink_msg_t in[4];
    size_t n = 0;
    ZT_EQ_INT(zlink_recv(receiver_b, NULL, in, 4, &n, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(n, 3);
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_msg_size(&in[i]), 2000);
        ZT_EQ_INT(((unsigned char *)zlink_msg_data(&in[i]))[1999], 'a' + i);
    }
    zlink_multipart_close(in, n);
    /* A record that does not fit behind a small one waits for the drain. */
    send_sized_ok(sender_a, 10, 2);
    expect_bp(sender_a, 5000);
    recv_sized(receiver_b, 10, 2);
    send_sized_ok(sender_a, 5000, 3);
    recv_sized(receiver_b, 5000, 3);

    /* MAXMSGSIZE: int64, exactly 8 bytes; default -1 (unlimited). */
    int64_t max = 0;
    size_t size = sizeof max;
    ZT_EQ_INT(zlink_getsockopt(sender_a, ZLINK_MAXMSGSIZE, &max, &size), ZLINK_CONFIG_OK);
    ZT_EQ_INT(max, -1);
    int small = 100;
    ZT_EQ_INT(zlink_setsockopt(sender_a, ZLINK_MAXMSGSIZE, &small, sizeof small),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    max = 100;
    ZT_EQ_INT(zlink_setsockopt(sender_a, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
    send_sized_ok(sender_a, 100, 4);
    ZT_EQ_INT(send_sized(sender_a, 101, 5, ZLINK_SEND_FLAGS_DONTWAIT),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EMSGSIZE);
    ZT_EQ_INT(send_sized(sender_a, 101, 5, ZLINK_SEND_FLAGS_NONE),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EMSGSIZE);
    /* The multipart sum counts: 60 + 41 is too big, 50 + 50 fits. */
    ZT_EQ_INT(zlink_msg_init_size(&parts[0], 60), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&parts[1], 41), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(sender_a, parts, 2, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EMSGSIZE);
    zlink_multipart_close(parts, 2);
    recv_sized(receiver_b, 100, 4);
    ZT_EQ_INT(zlink_msg_init_size(&parts[0], 50), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&parts[1], 50), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(sender_a, parts, 2, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL),
              ZLINK_SUBMIT_OK);
    zlink_multipart_close(parts, 2);
    ZT_EQ_INT(zlink_recv(receiver_b, NULL, in, 4, &n, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(n, 2);
    zlink_multipart_close(in, n);
    zlt_expect_no_data(receiver_b); /* the refused records left no trace */
    /* 0 and negative values mean unlimited. */
    max = 0;
    ZT_EQ_INT(zlink_setsockopt(sender_a, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
    send_sized_ok(sender_a, 10000, 6);
    recv_sized(receiver_b, 10000, 6);
    hwm_unlink();
    ctx_end();
}

/* ------------------------------------------------------------ item 15 */

static void test_empty_frame_charged_64(void)
{
    ctx_begin();
    hwm_link(128, ZLINK_HWM_DFLT);
    /* 0 -> 64 -> 128: two empty records fit exactly; a third does not. */
    send_sized_ok(sender_a, 0, 0);
    send_sized_ok(sender_a, 0, 0);
    expect_bp(sender_a, 0);
    /* One dequeued returns its 64 bytes: one more fits. */
    recv_sized(receiver_b, 0, 0);
    send_sized_ok(sender_a, 0, 0);
    expect_bp(sender_a, 0);
    recv_sized(receiver_b, 0, 0);
    recv_sized(receiver_b, 0, 0);
    zlt_expect_no_data(receiver_b);
    /* A record of two empty parts charges 128: alone it fills the queue. */
    zlink_msg_t parts[2];
    ZT_EQ_INT(zlink_msg_init(&parts[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init(&parts[1]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(sender_a, parts, 2, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL),
              ZLINK_SUBMIT_OK);
    expect_bp(sender_a, 0);
    zlink_msg_t in[4];
    size_t n = 0;
    ZT_EQ_INT(zlink_recv(receiver_b, NULL, in, 4, &n, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(n, 2);
    ZT_EQ_INT(zlink_msg_size(&in[0]) + zlink_msg_size(&in[1]), 0);
    zlink_multipart_close(in, n);
    /* A one-byte record charges 65: with one empty record queued it does
     * not fit (64 + 65 > 128); an empty one does. */
    send_sized_ok(sender_a, 0, 0);
    expect_bp(sender_a, 1);
    send_sized_ok(sender_a, 0, 0);
    zlink_multipart_close(parts, 2);
    hwm_unlink();
    ctx_end();
}

/* ------------------------------------------------------------ item 16 */

static void test_lwm_wakes_blocked_writer(void)
{
    ctx_begin();
    /* HWM 401: LWM = ceil(401/2) = 201 (floor would be 200). Queue a
     * record of charge 200 and one of 201 (401 <= 401). A NONE writer of
     * charge 100 then waits (501 > 401). Reading the first record leaves
     * exactly 201 = LWM queued: the writer must be woken and admitted
     * (301 <= 401) with no further read. */
    hwm_link(401, ZLINK_HWM_DFLT);
    send_sized_ok(sender_a, 136, 1); /* charge 200 */
    send_sized_ok(sender_a, 137, 2); /* charge 201 */
    expect_bp(sender_a, 36);
    zlt_blocked_t bs;
    start_blocked_send(&bs, 36, 3); /* the writer waits before the read */
    recv_sized(receiver_b, 136, 1);
    join_woken(&bs, "LWM: 201 of HWM 401 left queued");
    recv_sized(receiver_b, 137, 2);
    recv_sized(receiver_b, 36, 3);

    /* Oversize: a full drain wakes the writer of another oversize record. */
    send_sized_ok(sender_a, 4000, 4);
    zlt_blocked_t big;
    start_blocked_send(&big, 4000, 5);
    recv_sized(receiver_b, 4000, 4);
    join_woken(&big, "full drain of an oversize record");
    recv_sized(receiver_b, 4000, 5);
    hwm_unlink();
    ctx_end();
}

/* ------------------------------------------------------------ item 17 */

static void test_receive_only_on_supported_types(void)
{
    ctx_begin();
    /* zlink_recv: PAIR, DEALER (and STREAM RAW); zlink_router_recv: ROUTER
     * only; zlink_subscribe: SUB (and XSUB) only. */
    static const struct {
        zlt_recv_call_t call;
        int n, types[5];
    } refused[] = {
        {ZLT_RECV, 3, {ZLINK_ROUTER, ZLINK_PUB, ZLINK_SUB}},
        {ZLT_ROUTER_RECV, 5, {ZLINK_PAIR, ZLINK_DEALER, ZLINK_PUB, ZLINK_SUB, ZLINK_STREAM}},
        {ZLT_SUBSCRIBE, 5, {ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_PUB, ZLINK_STREAM}},
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        for (int i = 0; i < refused[k].n; i++) {
            void *s = sock(refused[k].types[i]);
            ZT_EQ_INT(zlt_recv_call(s, refused[k].call, ZLINK_DONTWAIT),
                      ZLINK_RECV_NOT_SUPPORTED);
            ZT_EQ_INT(zlink_errno(), ENOTSUP);
            zlt_close(s);
        }
    }
    ctx_end();
}

/* ------------------------------------------------------------ item 18 */

static void test_dontwait_empty_no_data(void)
{
    ctx_begin();
    void *pair = sock(ZLINK_PAIR), *dealer = sock(ZLINK_DEALER), *router = sock(ZLINK_ROUTER),
         *sub = sock(ZLINK_SUB);
    ZT_EQ_INT(zlink_set_subscription(sub, ""), ZLINK_CONFIG_OK);
    void *const socks[4] = {pair, dealer, router, sub};
    const zlt_recv_call_t calls[4] = {ZLT_RECV, ZLT_RECV, ZLT_ROUTER_RECV, ZLT_SUBSCRIBE};
    /* Unconnected and connected-but-idle alike. */
    for (int connected = 0; connected < 2; connected++) {
        for (int i = 0; i < 4; i++) {
            ZT_EQ_INT(zlt_recv_call(socks[i], calls[i], ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
            ZT_EQ_INT(zlink_errno(), EAGAIN);
        }
        if (!connected) {
            void *peer_pair = sock(ZLINK_PAIR), *pub = sock(ZLINK_PUB);
            zlt_link(peer_pair, pair, "inproc");
            zlt_link(dealer, router, "inproc");
            zlt_link(sub, pub, "inproc");
            zlt_close(pub);
            zlt_close(peer_pair);
        }
    }
    zlt_close(pair);
    zlt_close(dealer);
    zlt_close(router);
    zlt_close(sub);
    ctx_end();
}

/* ------------------------------------------------------------ item 19 */

static void test_ownership_only_on_success(void)
{
    ctx_begin();
    void *a = sock(ZLINK_PAIR), *b = sock(ZLINK_PAIR);
    zlt_link(a, b, "inproc");
    /* Live messages in the slots survive a failed receive untouched. */
    zlink_msg_t slots[4];
    for (int i = 0; i < 4; i++) {
        ZT_EQ_INT(zlink_msg_init_size(&slots[i], 40), ZLINK_CONFIG_OK);
        memset(zlink_msg_data(&slots[i]), 'A' + i, 40);
    }
    size_t count = 11;
    ZT_EQ_INT(zlink_recv(b, NULL, slots, 4, &count, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(count, 11);
    for (int i = 0; i < 4; i++) {
        ZT_EQ_INT(zlink_msg_size(&slots[i]), 40);
        ZT_EQ_INT(((unsigned char *)zlink_msg_data(&slots[i]))[39], 'A' + i);
    }
    /* BUFFER_TOO_SMALL is a failure as well. */
    zlink_msg_t three[3];
    for (int i = 0; i < 3; i++)
        ZT_EQ_INT(zlink_msg_init_size(&three[i], 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(a, three, 3, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    zlink_multipart_close(three, 3);
    ZT_EQ_INT(zlink_recv(b, NULL, slots, 2, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_BUFFER_TOO_SMALL);
    ZT_EQ_INT(count, 3);
    for (int i = 0; i < 4; i++)
        ZT_EQ_INT(zlink_msg_size(&slots[i]), 40);
    zlink_multipart_close(slots, 4);
    /* Success writes only the first *count slots. */
    zlink_msg_t out[6];
    memset(out, 0x3C, sizeof out);
    ZT_EQ_INT(zlink_recv(b, NULL, out, 6, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 3);
    const unsigned char *tail = (const unsigned char *)&out[3];
    for (size_t i = 0; i < 3 * sizeof out[0]; i++)
        ZT_EQ_INT(tail[i], 0x3C);
    zlink_multipart_close(out, count);

    /* RID: NULL on PAIR (above, see test_pair) and on DEALER. */
    void *d = sock(ZLINK_DEALER), *r = sock(ZLINK_ROUTER);
    zlt_link(d, r, "inproc");
    send_sized_ok(d, 3, 'd');
    zlink_msg_t m[2];
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 99;
    ZT_EQ_INT(zlink_router_recv(r, &rid, &tok, m, 2, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_OK);
    ZT_CHECK(rid != NULL);
    ZT_EQ_U64(tok, 0); /* DATA */
    zlink_routing_id_t back = *rid;
    zlink_multipart_close(m, count);
    ZT_EQ_INT(zlink_msg_init_size(&m[0], 1), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send_rid(r, &back, m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
              ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
    static const zlink_routing_id_t sentinel = {1, {1}};
    const zlink_routing_id_t *drid = &sentinel;
    ZT_EQ_INT(zlink_recv(d, &drid, m, 2, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_CHECK(drid == NULL);
    zlink_multipart_close(m, count);
    zlt_close(d);
    zlt_close(r);
    zlt_close(a);
    zlt_close(b);
    ctx_end();
}

/* ------------------------------------------------------------ item 21 */

/* Joins t if it ends within ms; returns 1 when joined. */
static int join_within(pthread_t t, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return pthread_timedjoin_np(t, NULL, &ts) == 0;
}

static void test_rcvtimeo_and_failure_outputs(void)
{
    ctx_begin();
    void *a = sock(ZLINK_PAIR), *b = sock(ZLINK_PAIR);
    zlt_link(a, b, "inproc");
    zlink_msg_t parts[2];
    memset(parts, 0x99, sizeof parts);
    unsigned char before[sizeof parts];
    memcpy(before, parts, sizeof parts);
    size_t count = 123;
    static const zlink_routing_id_t sentinel = {1, {7}};
    const zlink_routing_id_t *rid = &sentinel;

    /* ND after RCVTIMEO. */
    zlt_set_int(b, ZLINK_RCVTIMEO, 40);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_recv(b, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NO_DATA);
    int64_t waited = zt_now_ms() - t0;
    ZT_CHECK(zlink_errno() == EAGAIN || zlink_errno() == ETIMEDOUT);
    if (waited < 35 || waited > 1000 * zt_timeout_mult())
        ZT_FAIL("RCVTIMEO 40 waited %lld ms", (long long)waited);
    ZT_EQ_INT(count, 123);
    ZT_CHECK(rid == &sentinel);
    ZT_EQ_MEM(parts, before, sizeof parts);
    /* A record arriving within RCVTIMEO is taken. */
    zlt_set_int(b, ZLINK_RCVTIMEO, 5000);
    send_sized_ok(a, 1, 1);
    recv_sized(b, 1, 1);

    /* Snapshot: the RCVTIMEO in force when the call started applies; a
     * change made while it waits does not (set -1 here: the waiting call
     * still ends after its 150 ms). */
    zlt_blocked_t sr = {.sock = b, .timeo = 150};
    (void)zlt_blocked_start(&sr, true);
    zlt_set_int(b, ZLINK_RCVTIMEO, -1);
    if (!join_within(sr.thread, ZT_MS(5000))) {
        send_sized_ok(a, 1, 3); /* release it before failing */
        zlt_blocked_join(&sr);
        ZT_FAIL("a receive that started with RCVTIMEO 150 took the later -1");
    }
    ZT_EQ_INT(sr.result, ZLINK_RECV_NO_DATA);
    ZT_CHECK(sr.elapsed_ms >= 140);

    /* TERMINATED after shutdown, with a record even waiting. */
    send_sized_ok(a, 1, 2);
    ZT_EQ_INT(zlink_ctx_shutdown(g_ctx), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_recv(b, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_TERMINATED);
    ZT_EQ_INT(zlink_errno(), ETERM);
    ZT_EQ_INT(count, 123);
    ZT_CHECK(rid == &sentinel);
    ZT_EQ_MEM(parts, before, sizeof parts);
    /* INVALID_STATE/ESHUTDOWN after close. */
    zlt_close(b);
    ZT_EQ_INT(zlink_recv(b, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
    ZT_EQ_INT(count, 123);
    ZT_CHECK(rid == &sentinel);
    ZT_EQ_MEM(parts, before, sizeof parts);
    zlt_close(a);
    ctx_end();
}

/* ------------------------------------------------------------ item 24 */

static void test_default_routing_id_uuid4(void)
{
    ctx_begin();
    void *r = sock(ZLINK_ROUTER);
    char ep[64];
    fresh_inproc(ep, sizeof ep);
    ZT_EQ_INT(zlink_bind(r, ep), ZLINK_BIND_OK);
    zlink_routing_id_t seen[3];
    void *d[3];
    for (int i = 0; i < 3; i++) {
        d[i] = sock(ZLINK_DEALER);
        ZT_EQ_INT(zlink_connect(d[i], ep), ZLINK_CONNECT_OK);
        send_sized_ok(d[i], 1, (unsigned char)i);
        zlink_msg_t m[2];
        size_t n = 0;
        const zlink_routing_id_t *rid = NULL;
        ZT_EQ_INT(zlink_router_recv(r, &rid, NULL, m, 2, &n, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_OK);
        ZT_CHECK(rid != NULL);
        seen[i] = *rid;
        zlink_multipart_close(m, n);
        ZT_EQ_INT(seen[i].size, 16);
        ZT_EQ_INT(seen[i].data[6] & 0xF0, 0x40); /* version 4 */
        ZT_EQ_INT(seen[i].data[8] & 0xC0, 0x80); /* RFC 4122 variant */
        for (int j = 0; j < i; j++)
            ZT_CHECK(memcmp(seen[i].data, seen[j].data, 16) != 0);
    }
    /* The id names the peer: a reply reaches exactly that dealer. */
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, 2), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m), "to", 2);
    ZT_EQ_INT(zlink_send_rid(r, &seen[1], &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
              ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    zlt_set_int(d[1], ZLINK_RCVTIMEO, 5000);
    zlink_msg_t in[2];
    size_t n = 0;
    ZT_EQ_INT(zlink_recv(d[1], NULL, in, 2, &n, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    zlink_multipart_close(in, n);
    zlt_expect_no_data(d[0]);
    zlt_expect_no_data(d[2]);
    for (int i = 0; i < 3; i++)
        zlt_close(d[i]);
    zlt_close(r);
    ctx_end();
}

/* ------------------------------------------------------------ item 25 */

static void test_set_routing_id(void)
{
    ctx_begin();
    void *d = sock(ZLINK_DEALER);
    unsigned char big[256];
    memset(big, 'r', sizeof big);
    ZT_EQ_INT(zlink_set_routing_id(d, big, 0), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_set_routing_id(d, big, 256), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_set_routing_id(d, NULL, 4), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    void *st = sock(ZLINK_STREAM);
    ZT_EQ_INT(zlink_set_routing_id(st, "abcd", 4), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    zlt_close(st);
    /* Not a socket: ENOTSUP (the contract's rule for this call). */
    static uint64_t zeroed[64];
    void *not_socket[3] = {NULL, zeroed, g_ctx};
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_set_routing_id(not_socket[i], "id", 2), ZLINK_CONFIG_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
    }
    /* 1 and 255 bytes work, and the router sees exactly them. */
    void *r = sock(ZLINK_ROUTER);
    char ep[64];
    fresh_inproc(ep, sizeof ep);
    ZT_EQ_INT(zlink_bind(r, ep), ZLINK_BIND_OK);
    const size_t lens[2] = {1, 255};
    for (int k = 0; k < 2; k++) {
        void *peer = k == 0 ? d : sock(ZLINK_DEALER);
        big[0] = (unsigned char)('0' + k);
        ZT_EQ_INT(zlink_set_routing_id(peer, big, lens[k]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_connect(peer, ep), ZLINK_CONNECT_OK);
        send_sized_ok(peer, 1, 1);
        zlink_msg_t m[2];
        size_t n = 0;
        const zlink_routing_id_t *rid = NULL;
        ZT_EQ_INT(zlink_router_recv(r, &rid, NULL, m, 2, &n, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_OK);
        ZT_EQ_INT(rid->size, lens[k]);
        ZT_EQ_MEM(rid->data, big, lens[k]);
        zlink_multipart_close(m, n);
        zlt_close(peer);
    }
    zlt_close(r);
    ctx_end();
}

/* ------------------------------------------------------------ item 27 */

static void expect_bind(void *s, const char *ep, zlink_bind_result_t want, int err)
{
    zlink_bind_result_t r = zlink_bind(s, ep);
    if (r != want || (want != ZLINK_BIND_OK && zlink_errno() != err))
        ZT_FAIL("bind(\"%s\"): result %d errno %d (%s), expected %d errno %d", ep, (int)r,
                zlink_errno(), zlink_strerror(zlink_errno()), (int)want, err);
}

static void test_bind_errors(void)
{
    ctx_begin();
    void *a = sock(ZLINK_PAIR), *b = sock(ZLINK_DEALER);
    char ep[256];
    size_t size = sizeof ep;
    /* Nothing bound yet: LAST_ENDPOINT is the empty string. */
    ZT_EQ_INT(zlink_getsockopt(a, ZLINK_LAST_ENDPOINT, ep, &size), ZLINK_CONFIG_OK);
    ZT_EQ_INT(size, 1);
    ZT_EQ_STR(ep, "");

    /* Port 0: a real port, read back through LAST_ENDPOINT. */
    expect_bind(a, "tcp://127.0.0.1:0", ZLINK_BIND_OK, 0);
    size = sizeof ep;
    ZT_EQ_INT(zlink_getsockopt(a, ZLINK_LAST_ENDPOINT, ep, &size), ZLINK_CONFIG_OK);
    ZT_EQ_INT(size, strlen(ep) + 1);
    ZT_CHECK(strncmp(ep, "tcp://127.0.0.1:", 16) == 0);
    int port = atoi(ep + 16);
    ZT_CHECK(port > 0 && port < 65536);
    /* The port is taken: by any socket, of any type. */
    expect_bind(b, ep, ZLINK_BIND_ADDR_IN_USE, EADDRINUSE);
    expect_bind(a, ep, ZLINK_BIND_ADDR_IN_USE, EADDRINUSE);
    /* '*' is ephemeral too, and different from the first. */
    expect_bind(b, "tcp://127.0.0.1:*", ZLINK_BIND_OK, 0);
    char ep2[256];
    size = sizeof ep2;
    ZT_EQ_INT(zlink_getsockopt(b, ZLINK_LAST_ENDPOINT, ep2, &size), ZLINK_CONFIG_OK);
    ZT_CHECK(strncmp(ep2, "tcp://127.0.0.1:", 16) == 0);
    ZT_CHECK(atoi(ep2 + 16) > 0 && atoi(ep2 + 16) != port);
    /* An address this host does not have (TEST-NET-1). */
    expect_bind(b, "tcp://192.0.2.1:0", ZLINK_BIND_ADDR_IN_USE, EADDRNOTAVAIL);
    /* Unknown transports. */
    expect_bind(b, "bogus://somewhere", ZLINK_BIND_NOT_SUPPORTED, EPROTONOSUPPORT);
    expect_bind(b, "udp://127.0.0.1:0", ZLINK_BIND_NOT_SUPPORTED, EPROTONOSUPPORT);
    ZT_EQ_INT(zlink_connect(b, "bogus://somewhere"), ZLINK_CONNECT_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_errno(), EPROTONOSUPPORT);
    /* Malformed. */
    expect_bind(b, "no-transport", ZLINK_BIND_INVALID_ARGUMENT, EINVAL);
    expect_bind(b, "", ZLINK_BIND_INVALID_ARGUMENT, EINVAL);
    expect_bind(b, "inproc://", ZLINK_BIND_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(zlink_bind(b, NULL), ZLINK_BIND_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* inproc and ipc names in use. */
    char name[64];
    fresh_inproc(name, sizeof name);
    expect_bind(a, name, ZLINK_BIND_OK, 0);
    expect_bind(b, name, ZLINK_BIND_ADDR_IN_USE, EADDRINUSE);
    if (zlink_has("ipc")) {
        char ipc[128];
        zt_ipc_endpoint(ipc, sizeof ipc, "common-bind");
        unlink(ipc + 6);
        expect_bind(a, ipc, ZLINK_BIND_OK, 0);
        size = sizeof ep;
        ZT_EQ_INT(zlink_getsockopt(a, ZLINK_LAST_ENDPOINT, ep, &size), ZLINK_CONFIG_OK);
        ZT_EQ_STR(ep, ipc);
        expect_bind(b, ipc, ZLINK_BIND_ADDR_IN_USE, EADDRINUSE);
        zlt_close(a);
        zlt_close(b);
        unlink(ipc + 6);
    } else {
        zlt_close(a);
        zlt_close(b);
    }
    ctx_end();
}

/* ---------------------------------------------------------- endpoints */

static void test_endpoints(void)
{
    ctx_begin();
    void *a = sock(ZLINK_PAIR), *b = sock(ZLINK_PAIR);
    char ep[64];
    fresh_inproc(ep, sizeof ep);
    /* inproc needs the bind first. */
    ZT_EQ_INT(zlink_connect(b, ep), ZLINK_CONNECT_NOT_FOUND);
    ZT_EQ_INT(zlink_errno(), ENOENT);
    ZT_EQ_INT(zlink_bind(a, ep), ZLINK_BIND_OK);
    char last[64];
    size_t size = sizeof last;
    ZT_EQ_INT(zlink_getsockopt(a, ZLINK_LAST_ENDPOINT, last, &size), ZLINK_CONFIG_OK);
    ZT_EQ_STR(last, ep);
    ZT_EQ_INT(zlink_connect(b, ep), ZLINK_CONNECT_OK);
    send_sized_ok(b, 3, 1);
    recv_sized(a, 3, 1);
    /* NULL and unknown endpoints. */
    ZT_EQ_INT(zlink_connect(b, NULL), ZLINK_CONNECT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_unbind(a, NULL), ZLINK_CONNECT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_disconnect(b, NULL), ZLINK_CONNECT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_unbind(a, "inproc://never-bound"), ZLINK_CONNECT_NOT_FOUND);
    ZT_EQ_INT(zlink_errno(), ENOENT);
    ZT_EQ_INT(zlink_disconnect(b, "inproc://never-bound"), ZLINK_CONNECT_NOT_FOUND);
    ZT_EQ_INT(zlink_errno(), ENOENT);
    ZT_EQ_INT(zlink_unbind(b, ep), ZLINK_CONNECT_NOT_FOUND); /* b did not bind it */
    ZT_EQ_INT(zlink_unbind(a, "tcp://127.0.0.1:1"), ZLINK_CONNECT_NOT_FOUND);
    /* disconnect drops the link: no peer for either side any more. */
    ZT_EQ_INT(zlink_disconnect(b, ep), ZLINK_CONNECT_OK);
    expect_bp(b, 1);
    expect_bp(a, 1);
    ZT_EQ_INT(zlink_disconnect(b, ep), ZLINK_CONNECT_NOT_FOUND);
    /* Reconnect, then unbind: the name is free and the link gone. */
    ZT_EQ_INT(zlink_connect(b, ep), ZLINK_CONNECT_OK);
    send_sized_ok(b, 3, 2);
    recv_sized(a, 3, 2);
    ZT_EQ_INT(zlink_unbind(a, ep), ZLINK_CONNECT_OK);
    expect_bp(b, 1);
    void *c = sock(ZLINK_PAIR);
    ZT_EQ_INT(zlink_connect(c, ep), ZLINK_CONNECT_NOT_FOUND);
    ZT_EQ_INT(zlink_bind(c, ep), ZLINK_BIND_OK);
    ZT_EQ_INT(zlink_connect(b, ep), ZLINK_CONNECT_OK);
    send_sized_ok(c, 3, 3);
    recv_sized(b, 3, 3);
    /* Closing the binder frees the name as well. */
    zlt_close(c);
    void *e = sock(ZLINK_PAIR);
    ZT_EQ_INT(zlink_bind(e, ep), ZLINK_BIND_OK);
    zlt_close(e);
    zlt_close(a);
    zlt_close(b);
    ctx_end();
}

/* --------------------------------------------- bad handles everywhere */

static void test_bad_handle_every_function(void)
{
    ctx_begin();
    static uint64_t zeroed[512]; /* mapped and aligned, never a socket */
    void *bad[3] = {NULL, zeroed, g_ctx};
    for (int k = 0; k < 3; k++) {
        void *h = bad[k];
        int v = 1;
        size_t size = sizeof v;
        ZT_EQ_INT(zlink_close(h), ZLINK_CLOSE_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_setsockopt(h, ZLINK_SNDTIMEO, &v, sizeof v),
                  ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_getsockopt(h, ZLINK_SNDTIMEO, &v, &size), ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_bind(h, "inproc://bad-handle"), ZLINK_BIND_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_connect(h, "inproc://bad-handle"), ZLINK_CONNECT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_unbind(h, "inproc://bad-handle"), ZLINK_CONNECT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_disconnect(h, "inproc://bad-handle"), ZLINK_CONNECT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_set_subscription(h, "t"), ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_unset_subscription(h, "t"), ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        char sbuf[8];
        size_t slen = sizeof sbuf;
        ZT_EQ_INT(zlink_subscription_at(h, 0, sbuf, &slen, NULL), ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        zlink_routing_id_t rid = {2, {'i', 'd'}};
        ZT_EQ_INT(zlink_disconnect_rid(h, &rid), ZLINK_CONNECT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);

        /* Sends: IH/EFAULT, and the parts are consumed all the same. */
        zlink_msg_t m;
        zlink_completion_id_t id = 77;
        ZT_EQ_INT(zlink_msg_init_size(&m, 100), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_send(h, &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, &id),
                  ZLINK_SUBMIT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_size(&m), 0);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK); /* left initialized */
        ZT_EQ_INT(zlink_msg_init_size(&m, 100), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_send_rid(h, &rid, &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
                  ZLINK_SUBMIT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_msg_size(&m), 0);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_msg_init_size(&m, 100), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_publish(h, "topic", &m, 1, ZLINK_SEND_FLAGS_NONE),
                  ZLINK_SUBMIT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_msg_size(&m), 0);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);

        /* Receives: IH/EFAULT, outputs untouched. */
        zlink_msg_t parts[2];
        size_t count = 5, tlen = 6;
        const zlink_routing_id_t *view = NULL;
        zlink_reply_token_t tok = 7;
        char topic[8];
        ZT_EQ_INT(zlink_recv(h, &view, parts, 2, &count, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_router_recv(h, &view, &tok, parts, 2, &count, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(zlink_subscribe(h, &view, topic, sizeof topic, &tlen, parts, 2, &count,
                                  ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(count, 5);
        ZT_EQ_INT(tlen, 6);
        ZT_CHECK(view == NULL);
        ZT_EQ_U64(tok, 7);
    }
    ctx_end();
}

/* ------------------------------------- n = 0, unknown flags, wrong type */

static void test_argument_and_type_checks(void)
{
    ctx_begin();
    void *pair = sock(ZLINK_PAIR), *dealer = sock(ZLINK_DEALER), *router = sock(ZLINK_ROUTER),
         *pub = sock(ZLINK_PUB), *sub = sock(ZLINK_SUB), *stream = sock(ZLINK_STREAM);
    zlink_msg_t m[2];
    zlink_routing_id_t rid = {2, {'i', 'd'}};
    zlink_completion_id_t id;

    /* n = 0: INVALID_ARGUMENT, for every send call; parts NULL likewise. */
    ZT_EQ_INT(zlink_msg_init_size(&m[0], 4), ZLINK_CONFIG_OK);
    id = 9;
    ZT_EQ_INT(zlink_send(pair, m, 0, ZLINK_SEND_FLAGS_NONE, NULL, &id),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_U64(id, 0);
    ZT_EQ_INT(zlink_msg_size(&m[0]), 4); /* n = 0: no part is the call's */
    ZT_EQ_INT(zlink_send_rid(router, &rid, m, 0, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_publish(pub, NULL, m, 0, ZLINK_SEND_FLAGS_NONE),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_send(pair, NULL, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* Argument beats handle (precedence): n = 0 on a NULL socket. */
    ZT_EQ_INT(zlink_send(NULL, m, 0, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);

    /* Unknown flag bits: INVALID_ARGUMENT for sends (parts consumed),
     * INVALID_STATE/EINVAL for receives (core-contract §4). */
    const int bad_flags[] = {2, 4, 0x100, 0x40000000, ZLINK_DONTWAIT | 2};
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        zlink_send_flags_t f = (zlink_send_flags_t)bad_flags[i];
        ZT_EQ_INT(zlink_msg_init_size(&m[0], 4), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_send(pair, m, 1, f, NULL, NULL), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_send_rid(router, &rid, m, 1, f, NULL, NULL),
                  ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_publish(pub, "t", m, 1, f), ZLINK_SUBMIT_INVALID_ARGUMENT);
        /* Argument beats type: a flag error on a ROUTER's zlink_send. */
        ZT_EQ_INT(zlink_send(router, m, 1, f, NULL, NULL), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
        size_t count = 3;
        const zlink_routing_id_t *view = NULL;
        char topic[4];
        size_t tlen = 0;
        zlink_recv_flags_t rf = (zlink_recv_flags_t)bad_flags[i];
        ZT_EQ_INT(zlink_recv(pair, NULL, m, 2, &count, rf), ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(zlink_router_recv(router, &view, NULL, m, 2, &count, rf),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_subscribe(sub, &view, topic, 4, &tlen, m, 2, &count, rf),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(count, 3);
    }

    /* Wrong socket type: NOT_SUPPORTED/ENOTSUP, parts consumed. */
    void *no_send[] = {router, pub, sub, stream};
    for (int i = 0; i < 4; i++) {
        ZT_EQ_INT(zlink_msg_init_size(&m[0], 4), ZLINK_CONFIG_OK);
        id = 5;
        ZT_EQ_INT(zlink_send(no_send[i], m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, &id),
                  ZLINK_SUBMIT_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
    }
    void *no_send_rid[] = {pair, dealer, pub, sub};
    for (int i = 0; i < 4; i++) {
        ZT_EQ_INT(zlink_msg_init_size(&m[0], 4), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_send_rid(no_send_rid[i], &rid, m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL,
                                 NULL),
                  ZLINK_SUBMIT_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
    }
    void *no_publish[] = {pair, dealer, router, sub, stream};
    for (int i = 0; i < 5; i++) {
        ZT_EQ_INT(zlink_msg_init_size(&m[0], 4), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_publish(no_publish[i], "t", m, 1, ZLINK_SEND_FLAGS_DONTWAIT),
                  ZLINK_SUBMIT_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
    }
    /* Subscriptions on a non-SUB socket: EINVAL (core-contract §5). */
    ZT_EQ_INT(zlink_set_subscription(pair, "t"), ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(zlink_set_subscription(sub, NULL), ZLINK_CONFIG_INVALID_ARGUMENT);

    zlt_close(pair);
    zlt_close(dealer);
    zlt_close(router);
    zlt_close(pub);
    zlt_close(sub);
    zlt_close(stream);
    ctx_end();
}

/* ------------------------------------- never partially delivered */

static void test_record_never_partial(void)
{
    ctx_begin();
    hwm_link(1000, ZLINK_HWM_DFLT);
    for (int i = 0; i < 5; i++)
        send_sized_ok(sender_a, 100, (unsigned char)i); /* 820 queued */
    /* A 3-part record of charge 3 * 164 = 492 does not fit in the 180 left,
     * though its first part would: nothing of it is queued. */
    zlink_msg_t parts[3];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3; i++) {
            ZT_EQ_INT(zlink_msg_init_size(&parts[i], 100), ZLINK_CONFIG_OK);
            memset(zlink_msg_data(&parts[i]), 'x' + i, 100);
        }
        zlink_submit_result_t r =
            zlink_send(sender_a, parts, 3, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL);
        zlink_multipart_close(parts, 3);
        if (round == 0) {
            ZT_EQ_INT(r, ZLINK_SUBMIT_BACKPRESSURED);
            for (int i = 0; i < 5; i++)
                recv_sized(receiver_b, 100, (unsigned char)i);
            zlt_expect_no_data(receiver_b); /* no stray first part */
        } else {
            ZT_EQ_INT(r, ZLINK_SUBMIT_OK);
        }
    }
    zlink_msg_t in[4];
    size_t n = 0;
    ZT_EQ_INT(zlink_recv(receiver_b, NULL, in, 4, &n, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(n, 3);
    for (int i = 0; i < 3; i++)
        ZT_EQ_INT(((unsigned char *)zlink_msg_data(&in[i]))[50], 'x' + i);
    zlink_multipart_close(in, n);
    zlt_expect_no_data(receiver_b);
    hwm_unlink();
    ctx_end();
}

/* ------------------------------------------------------------ item 9b */

/* Options on a socket whose context was shut down: ETERM, which the config
 * family reports as INTERNAL (doc/errors.md). */
static void test_option_after_shutdown_eterm(void)
{
    ctx_begin();
    void *s = sock(ZLINK_PAIR);
    ZT_EQ_INT(zlink_ctx_shutdown(g_ctx), ZLINK_CLOSE_OK);
    int v = 10;
    zlink_config_result_t r = zlink_setsockopt(s, ZLINK_SNDTIMEO, &v, sizeof v);
    int e = zlink_errno();
    zlt_close(s);
    ctx_end();
    if (r != ZLINK_CONFIG_INTERNAL || e != ETERM)
        ZT_FAIL("setsockopt after ctx_shutdown: result %d errno %d, expected INTERNAL/ETERM",
                (int)r, e);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_socket_create_results),
    ZT_CASE(test_close_results),
    ZT_CASE(test_close_gate_busy),
    ZT_CASE(test_close_gate_busy_blocked_send),
    ZT_CASE(test_calls_after_close),
    ZT_CASE(test_hwm_option_exactly_8_bytes),
    ZT_CASE(test_option_0x3034_einval),
    ZT_CASE(test_blocky_not_supported),
    ZT_CASE(test_conflate_rules),
    ZT_CASE(test_option_errors),
    ZT_CASE(test_writes_wait_at_hwm_until_credit),
    ZT_CASE(test_oversize_on_empty_and_maxmsgsize),
    ZT_CASE(test_empty_frame_charged_64),
    ZT_CASE(test_lwm_wakes_blocked_writer),
    ZT_CASE(test_receive_only_on_supported_types),
    ZT_CASE(test_dontwait_empty_no_data),
    ZT_CASE(test_ownership_only_on_success),
    ZT_CASE(test_rcvtimeo_and_failure_outputs),
    ZT_CASE(test_default_routing_id_uuid4),
    ZT_CASE(test_set_routing_id),
    ZT_CASE(test_bind_errors),
    ZT_CASE(test_endpoints),
    ZT_CASE(test_bad_handle_every_function),
    ZT_CASE(test_argument_and_type_checks),
    ZT_CASE(test_record_never_partial),
    ZT_CASE(test_option_after_shutdown_eterm),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
