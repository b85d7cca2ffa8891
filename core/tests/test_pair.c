/*
 * test_pair.c — core-contract §8 "PAIR [G3]" items 1-6, 10-13, 15, 16, the
 * PAIR rules of §5 (one peer; a second is refused), and "02-message" items
 * 15 (a failed send consumes every part) and 16 (no interleaving between
 * concurrent senders), through the public API only (zlink.h); also records
 * of 64 KiB to 3 MiB in series (test_large_records_in_series: they arrive
 * intact and in order on every transport).
 *
 * Every case runs once per transport (ZT_CASE_TP): inproc, then tcp, then
 * ipc. The case name carries the transport ("test_both_ways[tcp]"). A
 * transport the build cannot bind fails its cases with a message saying so;
 * the other transports' cases still run.
 *
 * Items 7-9, 14 and 17 (wait tokens, WRITABLE completions) are in
 * test_completion.c, 18-20 (the flow setter on a PAIR) in test_flow.c;
 * doc/contract-tests/context_pair_socket.md maps every item to its case.
 */
#include "zltest_zlink.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAXP ZLT_MAXP

/* ------------------------------------------------------------ the rounds */

/* Every case here is stamped per transport (ZT_CASE_TP) and runs as a round
 * (zltest_zlink.h): case_begin() makes its own context on tr, and the
 * round's end closes (checked) every socket the case left open, then terms
 * the context. */
static const char *g_tr; /* transport of the running case */
static void *g_ctx;      /* the running case's context */

static void case_begin(const char *tr)
{
    g_tr = tr;
    g_ctx = zlt_round_begin(tr);
}

static void case_end(void)
{
    zlt_round_end();
    g_ctx = NULL;
}

/* A PAIR socket with LINGER 0, so a case's term never waits on a peer that
 * is gone. case_end() closes it (checked) if the case did not. */
static void *new_pair(void)
{
    return zlt_socket_linger0(g_ctx, ZLINK_PAIR);
}

static bool on_inproc(void)
{
    return strcmp(g_tr, "inproc") == 0;
}

/* a binds, b connects; one round trip proves the link is up both ways (on
 * tcp and ipc the connect completes asynchronously). */
static void make_pair(void **a, void **b)
{
    *a = new_pair();
    *b = new_pair();
    zlt_link(*b, *a, g_tr);
    zlt_send_ok(*b, "ping");
    zlt_expect_strs(*a, "ping");
    zlt_send_ok(*a, "pong");
    zlt_expect_strs(*b, "pong");
}

/* ------------------------------------------------------------ item 1 */

static void test_both_ways(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    for (int round = 0; round < 3; round++) {
        zlt_send_ok(a, "a->b", "one");
        zlt_send_ok(b, "b->a", "one");
        zlt_send_ok(a, "a->b", "two");
        zlt_send_ok(b, "b->a", "two");
        zlt_expect_strs(b, "a->b", "one");
        zlt_expect_strs(b, "a->b", "two");
        zlt_expect_strs(a, "b->a", "one");
        zlt_expect_strs(a, "b->a", "two");
    }
    zlt_expect_no_data(a);
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------------------------ item 2 */

static void test_rid_is_null(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    zlt_send_ok(a, "x");
    zlink_msg_t parts[4];
    size_t count = 0;
    static const zlink_routing_id_t sentinel = {3, {1, 2, 3}};
    const zlink_routing_id_t *rid = &sentinel;
    ZT_EQ_INT(zlink_recv(b, &rid, parts, 4, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_CHECK(rid == NULL);
    ZT_EQ_INT(count, 1);
    zlink_multipart_close(parts, count);
    /* rid_opt itself may be NULL. */
    zlt_send_ok(a, "y");
    ZT_EQ_INT(zlink_recv(b, NULL, parts, 4, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 1);
    ZT_EQ_MEM(zlink_msg_data(&parts[0]), "y", 1);
    zlink_multipart_close(parts, count);
    case_end();
}

/* ------------------------------------------------------------ item 3 */

/* Fills a part with a byte pattern derived from (rec, idx). */
static void fill_part(zlink_msg_t *m, size_t size, int rec, int idx)
{
    ZT_EQ_INT(zlink_msg_init_size(m, size), ZLINK_CONFIG_OK);
    unsigned char *p = zlink_msg_data(m);
    for (size_t i = 0; i < size; i++)
        p[i] = (unsigned char)(rec * 31 + idx * 7 + i);
}

static void check_part(zlink_msg_t *m, size_t size, int rec, int idx)
{
    ZT_EQ_INT(zlink_msg_size(m), size);
    const unsigned char *p = zlink_msg_data(m);
    ZT_CHECK(size == 0 || p != NULL);
    for (size_t i = 0; i < size; i++) {
        if (p[i] != (unsigned char)(rec * 31 + idx * 7 + i))
            ZT_FAIL("record %d part %d byte %zu: %u, expected %u", rec, idx, i, p[i],
                    (unsigned char)(rec * 31 + idx * 7 + i));
    }
}

static void test_caller_owns_slots(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    const size_t sizes[3] = {5, ZLINK_MSG_INLINE_MAX + 1, 70000}; /* inline and shared */
    for (int rec = 0; rec < 2; rec++) {
        zlink_msg_t out[3];
        for (int i = 0; i < 3; i++)
            fill_part(&out[i], sizes[i], rec, i);
        ZT_EQ_INT(zlink_send(a, out, 3, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
        zlink_multipart_close(out, 3); /* consumed: empty, still closable */
    }
    /* The receive slots need no initialization: garbage in them is fine. */
    zlink_msg_t first[3], second[3];
    memset(first, 0xA5, sizeof first);
    memset(second, 0x5A, sizeof second);
    size_t n1 = 0, n2 = 0;
    ZT_EQ_INT(zlink_recv(b, NULL, first, 3, &n1, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(zlink_recv(b, NULL, second, 3, &n2, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(n1, 3);
    ZT_EQ_INT(n2, 3);
    /* The first record is still the caller's after the next receive. */
    for (int i = 0; i < 3; i++) {
        check_part(&first[i], sizes[i], 0, i);
        check_part(&second[i], sizes[i], 1, i);
    }
    /* Owned means writable and movable, too. */
    memset(zlink_msg_data(&first[2]), 0, sizes[2]);
    zlink_msg_t moved;
    ZT_EQ_INT(zlink_msg_init(&moved), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_move(&moved, &second[2]), ZLINK_CONFIG_OK);
    check_part(&moved, sizes[2], 1, 2);
    ZT_EQ_INT(zlink_msg_close(&moved), ZLINK_CONFIG_OK);
    zlink_multipart_close(first, n1);
    zlink_multipart_close(second, n2); /* second[2] is empty after the move */
    case_end();
}

/* ------------------------------------------------------------ item 4 */

static void test_buffer_too_small(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    zlt_send_ok(a, "p0", "p1", "p2");
    zlt_send_ok(a, "next");
    zlink_msg_t parts[3];
    memset(parts, 0xC3, sizeof parts);
    unsigned char before[sizeof parts];
    memcpy(before, parts, sizeof parts);
    size_t count = 0;
    /* NONE waits for the record, then finds the buffer short. */
    ZT_EQ_INT(zlink_recv(b, NULL, parts, 2, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_BUFFER_TOO_SMALL);
    ZT_EQ_INT(zlink_errno(), ENOBUFS);
    ZT_EQ_INT(count, 3);
    ZT_EQ_MEM(parts, before, sizeof parts); /* nothing written */
    /* Nothing was consumed: the same answer again, also with cap 0. */
    count = 0;
    ZT_EQ_INT(zlink_recv(b, NULL, parts, 0, &count, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_BUFFER_TOO_SMALL);
    ZT_EQ_INT(count, 3);
    count = 0;
    ZT_EQ_INT(zlink_recv(b, NULL, parts, 2, &count, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_BUFFER_TOO_SMALL);
    ZT_EQ_INT(count, 3);
    ZT_EQ_MEM(parts, before, sizeof parts);
    /* A big enough buffer gets the same record, whole, once. */
    zlt_expect_strs(b, "p0", "p1", "p2");
    zlt_expect_strs(b, "next");
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------------------------ item 5 */

static void test_single_and_multipart_order(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    zlt_send_ok(a, "solo");
    zlt_send_ok(a, "", "empty first and last", "");
    zlt_send_ok(a, "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
            "16", "17", "18", "19", "20");
    zlt_send_ok(a, "");
    /* Parts of every size class, in one record. */
    const size_t sizes[5] = {0, 1, ZLINK_MSG_INLINE_MAX, 4096, 300000};
    zlink_msg_t out[5];
    for (int i = 0; i < 5; i++)
        fill_part(&out[i], sizes[i], 9, i);
    ZT_EQ_INT(zlink_send(a, out, 5, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    zlink_multipart_close(out, 5);
    zlt_send_ok(a, "after");

    zlink_msg_t parts[MAXP];
    size_t count = 0;
    ZT_EQ_INT(zlink_recv(b, NULL, parts, MAXP, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 1); /* n = 1 gives exactly one part */
    ZT_EQ_INT(zlink_msg_size(&parts[0]), 4);
    ZT_EQ_MEM(zlink_msg_data(&parts[0]), "solo", 4);
    zlink_multipart_close(parts, count);
    zlt_expect_strs(b, "", "empty first and last", "");
    zlt_expect_strs(b, "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14",
                "15", "16", "17", "18", "19", "20");
    zlt_expect_strs(b, "");
    ZT_EQ_INT(zlink_recv(b, NULL, parts, MAXP, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 5);
    for (int i = 0; i < 5; i++)
        check_part(&parts[i], sizes[i], 9, i);
    zlink_multipart_close(parts, count);
    zlt_expect_strs(b, "after");
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------------------------ item 6 */

static void test_dontwait_immediate_id_zero(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    for (int i = 0; i < 3; i++) {
        zlink_msg_t m;
        ZT_EQ_INT(zlink_msg_init_size(&m, 3), ZLINK_CONFIG_OK);
        memcpy(zlink_msg_data(&m), "now", 3);
        zlink_completion_id_t id = 0xFFFFFFFFFFFFFFFFull;
        ZT_EQ_INT(zlink_send(a, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, &id, &id), ZLINK_SUBMIT_OK);
        ZT_EQ_U64(id, 0);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    }
    /* completion_id_out may be NULL. */
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, 3), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&m), "now", 3);
    ZT_EQ_INT(zlink_send(a, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    for (int i = 0; i < 4; i++)
        zlt_expect_strs(b, "now");
    case_end();
}

/* ------------------------------------------------------------ item 10 */

static void test_no_data(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    zlink_msg_t parts[2];
    memset(parts, 0x77, sizeof parts);
    unsigned char before[sizeof parts];
    memcpy(before, parts, sizeof parts);
    static const zlink_routing_id_t sentinel = {1, {9}};
    const zlink_routing_id_t *rid = &sentinel;
    size_t count = 4242;

    /* DONTWAIT with nothing queued. */
    ZT_EQ_INT(zlink_recv(b, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    /* NONE with RCVTIMEO 0 is one attempt too. */
    zlt_set_int(b, ZLINK_RCVTIMEO, 0);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlink_recv(b, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NO_DATA);
    ZT_CHECK(zlink_errno() == EAGAIN || zlink_errno() == ETIMEDOUT);
    ZT_CHECK(zt_now_ms() - t0 < 500);
    /* NONE waits RCVTIMEO, then gives up. */
    zlt_set_int(b, ZLINK_RCVTIMEO, 60);
    t0 = zt_now_ms();
    ZT_EQ_INT(zlink_recv(b, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NO_DATA);
    int64_t waited = zt_now_ms() - t0;
    ZT_CHECK(zlink_errno() == EAGAIN || zlink_errno() == ETIMEDOUT);
    if (waited < 55 || waited > 1000 * zt_timeout_mult())
        ZT_FAIL("RCVTIMEO 60 waited %lld ms", (long long)waited);
    /* Failures change no output. */
    ZT_EQ_INT(count, 4242);
    ZT_CHECK(rid == &sentinel);
    ZT_EQ_MEM(parts, before, sizeof parts);
    /* The socket still works afterwards. */
    zlt_set_int(b, ZLINK_RCVTIMEO, 5000);
    zlt_send_ok(a, "late");
    zlt_expect_strs(b, "late");
    case_end();
}

/* ------------------------------------------------------------ item 11 */

/* A zlink_free_fn that counts calls. */
static atomic_int g_ffn_calls;
static void count_ffn(void *data, void *hint)
{
    (void)data;
    (void)hint;
    atomic_fetch_add(&g_ffn_calls, 1);
}

static void test_failed_send_invisible(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    zlink_msg_t parts[3];

    /* Too big for MAXMSGSIZE: INVALID_ARGUMENT/EMSGSIZE, nothing arrives. */
    zlt_set_i64(a, ZLINK_MAXMSGSIZE, 10);
    ZT_EQ_INT(zlt_send_strs(a, ZLINK_SEND_FLAGS_NONE, ZLT_STRS("hello", "world!"), 2),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EMSGSIZE);
    ZT_EQ_INT(zlt_send_strs(a, ZLINK_SEND_FLAGS_DONTWAIT, ZLT_STRS("eleven char"), 1),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EMSGSIZE);
    zlt_set_i64(a, ZLINK_MAXMSGSIZE, -1);

    /* One invalid part: INVALID_HANDLE/EFAULT, the valid parts are not sent. */
    ZT_EQ_INT(zlink_msg_init_size(&parts[0], 4), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&parts[0]), "head", 4);
    memset(&parts[1], 0, sizeof parts[1]); /* never initialized */
    ZT_EQ_INT(zlink_msg_init_size(&parts[2], 4), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&parts[2]), "tail", 4);
    ZT_EQ_INT(zlink_send(a, parts, 3, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
              ZLINK_SUBMIT_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    zlink_multipart_close(parts, 3);

    /* Unknown flag bits: INVALID_ARGUMENT/EINVAL. */
    ZT_EQ_INT(zlt_send_strs(a, 0x80, ZLT_STRS("flags"), 1), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);

    /* The peer sees none of it: the next good record is the first. */
    zlt_send_ok(a, "good");
    zlt_expect_strs(b, "good");
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------------------------ item 12 */

static void test_slots_consumed_and_reusable(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    static char zc_buf[100];
    memset(zc_buf, 'z', sizeof zc_buf);
    atomic_store(&g_ffn_calls, 0);

    /* Success: both slots (one zero-copy) come back empty. */
    zlink_msg_t parts[2];
    ZT_EQ_INT(zlink_msg_init_size(&parts[0], 2), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&parts[0]), "hi", 2);
    ZT_EQ_INT(zlink_msg_init_data(&parts[1], zc_buf, sizeof zc_buf, count_ffn, NULL),
              ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(a, parts, 2, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), 0);
    ZT_EQ_INT(zlink_msg_size(&parts[1]), 0);
    /* Reusable as they are: resend the two empty slots as a record. */
    ZT_EQ_INT(zlink_send(a, parts, 2, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), 0);
    /* ... or after re-initializing (close first: they are initialized). */
    ZT_EQ_INT(zlink_msg_close(&parts[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_size(&parts[0], 3), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(&parts[0]), "re!", 3);
    ZT_EQ_INT(zlink_send(a, parts, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&parts[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&parts[1]), ZLINK_CONFIG_OK);

    zlink_msg_t in[4];
    size_t count = 0;
    ZT_EQ_INT(zlink_recv(b, NULL, in, 4, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 2);
    ZT_EQ_INT(zlink_msg_size(&in[1]), sizeof zc_buf);
    ZT_EQ_MEM(zlink_msg_data(&in[1]), zc_buf, sizeof zc_buf);
    zlink_multipart_close(in, count);
    /* 02-message 5: ffn runs once the sent buffer's last reference is gone. */
    ZT_EVENTUALLY(atomic_load(&g_ffn_calls) == 1, 2000);
    zlt_expect_strs(b, "", "");
    zlt_expect_strs(b, "re!");

    /* Failure (MAXMSGSIZE): consumed just the same, ffn exactly once. */
    atomic_store(&g_ffn_calls, 0);
    zlt_set_i64(a, ZLINK_MAXMSGSIZE, 50);
    ZT_EQ_INT(zlink_msg_init_data(&parts[0], zc_buf, sizeof zc_buf, count_ffn, NULL),
              ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(a, parts, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), 0);
    ZT_EQ_INT(atomic_load(&g_ffn_calls), 1); /* dropped by the call itself */
    /* The consumed slot is reusable for a send that succeeds. */
    ZT_EQ_INT(zlink_send(a, parts, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&parts[0]), ZLINK_CONFIG_OK);
    zlt_expect_strs(b, "");
    ZT_EQ_INT(atomic_load(&g_ffn_calls), 1);
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------------------------ item 13 */

static void test_no_partial_state(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    /* A failed multipart leaves no prefix behind for the next record. */
    for (int round = 0; round < 3; round++) {
        zlink_msg_t parts[4];
        for (int i = 0; i < 4; i++) {
            ZT_EQ_INT(zlink_msg_init_size(&parts[i], 6), ZLINK_CONFIG_OK);
            memcpy(zlink_msg_data(&parts[i]), "prefix", 6);
        }
        ZT_EQ_INT(zlink_msg_close(&parts[3]), ZLINK_CONFIG_OK); /* the last is invalid */
        ZT_EQ_INT(zlink_send(a, parts, 4, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
                  ZLINK_SUBMIT_INVALID_HANDLE);
        zlink_multipart_close(parts, 3);
        zlt_send_ok(a, "whole", "record");
        zlt_expect_strs(b, "whole", "record");
    }
    /* A refused receive (short buffer) leaves no half-taken record. */
    zlt_send_ok(a, "x1", "x2", "x3", "x4");
    zlink_msg_t in[2];
    size_t count = 0;
    ZT_EQ_INT(zlink_recv(b, NULL, in, 2, &count, ZLINK_RECV_FLAGS_NONE),
              ZLINK_RECV_BUFFER_TOO_SMALL);
    ZT_EQ_INT(count, 4);
    zlt_send_ok(a, "y");
    zlt_expect_strs(b, "x1", "x2", "x3", "x4");
    zlt_expect_strs(b, "y");
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------------------------ item 15 */

struct later_peer {
    char ep[256];
    void *sock;
    long sender_tid; /* connect once this thread sleeps in its send */
};

static void *connect_later(void *arg)
{
    struct later_peer *lp = arg;
    (void)zt_wait_blocked(lp->sender_tid);
    lp->sock = new_pair();
    zlt_connect(lp->sock, lp->ep);
    return NULL;
}

static void test_none_waits_for_peer(const char *tr)
{
    case_begin(tr);
    void *a = new_pair();
    struct later_peer lp;
    zlt_bind(a, g_tr, lp.ep, sizeof lp.ep);

    /* No peer: DONTWAIT, SNDTIMEO 0 and a short SNDTIMEO give up. */
    ZT_EQ_INT(zlt_send_strs(a, ZLINK_SEND_FLAGS_DONTWAIT, ZLT_STRS("nobody"), 1),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlt_set_int(a, ZLINK_SNDTIMEO, 0);
    ZT_EQ_INT(zlt_send_strs(a, ZLINK_SEND_FLAGS_NONE, ZLT_STRS("nobody"), 1),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlt_set_int(a, ZLINK_SNDTIMEO, 50);
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(zlt_send_strs(a, ZLINK_SEND_FLAGS_NONE, ZLT_STRS("nobody"), 1),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    int64_t waited = zt_now_ms() - t0;
    if (waited < 45 || waited > 1000 * zt_timeout_mult())
        ZT_FAIL("SNDTIMEO 50 waited %lld ms", (long long)waited);

    /* NONE within SNDTIMEO: a peer that connects while the send waits gets
     * the record. The connect starts on another thread once the send is
     * asleep waiting (as far as /proc can tell). */
    zlt_set_int(a, ZLINK_SNDTIMEO, 10000);
    lp.sender_tid = zt_gettid();
    pthread_t t;
    ZT_EQ_INT(pthread_create(&t, NULL, connect_later, &lp), 0);
    zlt_send_ok(a, "waited", "for you");
    ZT_EQ_INT(pthread_join(t, NULL), 0);
    zlt_set_int(lp.sock, ZLINK_RCVTIMEO, 5000);
    zlt_expect_strs(lp.sock, "waited", "for you");
    zlt_expect_no_data(lp.sock); /* the refused sends above left nothing */
    zlt_close(lp.sock);

    /* The same after the peer went away (inproc: the close is synchronous,
     * so the next send cannot be taken by the old pipe). */
    if (on_inproc()) {
        ZT_EQ_INT(pthread_create(&t, NULL, connect_later, &lp), 0);
        zlt_send_ok(a, "again");
        ZT_EQ_INT(pthread_join(t, NULL), 0);
        zlt_expect_strs(lp.sock, "again");
        zlt_close(lp.sock);
    }
    case_end();
}

/* ------------------------------------------------------------ item 16 */

static void test_no_replay(const char *tr)
{
    case_begin(tr);
    char ep[256];
    void *a = new_pair();
    zlt_bind(a, g_tr, ep, sizeof ep);
    void *b = new_pair();
    zlt_connect(b, ep);
    zlt_send_ok(b, "hello from b");
    zlt_expect_strs(a, "hello from b");
    zlt_send_ok(a, "r1");
    zlt_expect_strs(b, "r1");
    zlt_send_ok(a, "r0-unread"); /* admitted towards b; b never reads it */
    zlt_close(b);             /* b's unread records are discarded */

    /* A new peer. On tcp and ipc a may refuse it until it has seen b go,
     * so b2 greets until a hears a greeting: then b2 is a's peer. */
    void *b2 = new_pair();
    zlt_connect(b2, ep);
    zlt_set_int(a, ZLINK_RCVTIMEO, 200);
    int heard = 0;
    for (int i = 0; i < 50 && !heard; i++) {
        char hello[32];
        snprintf(hello, sizeof hello, "hello-%d", i);
        zlink_submit_result_t r = zlt_send_strs(b2, ZLINK_SEND_FLAGS_NONE, ZLT_STRS(hello), 1);
        ZT_CHECK(r == ZLINK_SUBMIT_OK || r == ZLINK_SUBMIT_BACKPRESSURED);
        zlink_msg_t in[2];
        size_t count = 0;
        if (zlink_recv(a, NULL, in, 2, &count, ZLINK_RECV_FLAGS_NONE) == ZLINK_RECV_OK) {
            ZT_EQ_INT(count, 1);
            ZT_CHECK(zlink_msg_size(&in[0]) > 6);
            ZT_EQ_MEM(zlink_msg_data(&in[0]), "hello-", 6);
            heard = 1;
            zlink_multipart_close(in, count);
        }
    }
    ZT_CHECK(heard);
    /* b2 gets what a sends from now on, and nothing sent before. */
    zlt_send_ok(a, "r2");
    zlt_expect_strs(b2, "r2");
    zlt_expect_no_data(b2);
    case_end();
}

/* ------------------------------------------------- second peer refused */

static void test_second_peer_refused(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    char ep[256];
    size_t size = sizeof ep;
    ZT_EQ_INT(zlink_getsockopt(a, ZLINK_LAST_ENDPOINT, ep, &size), ZLINK_CONFIG_OK);
    void *c = new_pair();
    zlink_connect_result_t r = zlink_connect(c, ep);
    if (on_inproc()) {
        /* In process the refusal is known at once. */
        ZT_EQ_INT(r, ZLINK_CONNECT_CONFLICT);
        ZT_EQ_INT(zlink_errno(), EEXIST);
        ZT_EQ_INT(zlt_send_strs(c, ZLINK_SEND_FLAGS_DONTWAIT, ZLT_STRS("intruder"), 1),
                  ZLINK_SUBMIT_BACKPRESSURED);
    } else {
        ZT_EQ_INT(r, ZLINK_CONNECT_OK); /* asynchronous; refused after the handshake */
    }
    /* a keeps talking to b only. */
    for (int i = 0; i < 5; i++) {
        zlt_send_ok(a, "for b");
        zlt_expect_strs(b, "for b");
        zlt_send_ok(b, "for a");
        zlt_expect_strs(a, "for a");
    }
    zlt_expect_no_data(c);
    case_end();
}

/* ------------------------------------------ 02-message 15: consume all */

static void test_failed_part_send_consumes_all(const char *tr)
{
    case_begin(tr);
    static char zc_buf[64];
    memset(zc_buf, 'q', sizeof zc_buf);

    /* A bad part in the middle: every part is consumed, ffn runs once. */
    void *a, *b;
    make_pair(&a, &b);
    atomic_store(&g_ffn_calls, 0);
    zlink_msg_t parts[3];
    ZT_EQ_INT(zlink_msg_init_data(&parts[0], zc_buf, sizeof zc_buf, count_ffn, NULL),
              ZLINK_CONFIG_OK);
    memset(&parts[1], 0, sizeof parts[1]);
    ZT_EQ_INT(zlink_msg_init_size(&parts[2], 1000), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(a, parts, 3, ZLINK_SEND_FLAGS_NONE, NULL, NULL),
              ZLINK_SUBMIT_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(atomic_load(&g_ffn_calls), 1);
    for (int i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_msg_size(&parts[i]), 0);
        ZT_EQ_INT(zlink_msg_close(&parts[i]), ZLINK_CONFIG_OK); /* left initialized */
    }
    /* The sequence ended with the failure: the next record stands alone. */
    zlt_send_ok(a, "fresh");
    zlt_expect_strs(b, "fresh");
    zlt_expect_no_data(b);
    zlt_close(a);
    zlt_close(b);

    /* Refused for lack of a peer (BACKPRESSURED): consumed the same way. */
    void *lonely = new_pair();
    char ep[256];
    zlt_bind(lonely, g_tr, ep, sizeof ep);
    atomic_store(&g_ffn_calls, 0);
    ZT_EQ_INT(zlink_msg_init_size(&parts[0], 10), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_init_data(&parts[1], zc_buf, sizeof zc_buf, count_ffn, NULL),
              ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_send(lonely, parts, 2, ZLINK_SEND_FLAGS_DONTWAIT, NULL, NULL),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(atomic_load(&g_ffn_calls), 1);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), 0);
    ZT_EQ_INT(zlink_msg_size(&parts[1]), 0);
    zlink_multipart_close(parts, 2);
    case_end();
}

/* --------------------------------------- 02-message 16: no interleaving */

#define SENDERS 4
#define PER_SENDER 300

struct part_hdr {
    uint32_t sender, seq, idx, nparts;
};

static void *g_shared_sender;
static pthread_barrier_t g_start;

static size_t body_len(uint32_t seq, uint32_t idx)
{
    return (size_t)((seq * 37u + idx * 11u) % 300u);
}

static unsigned char body_byte(uint32_t sender, uint32_t seq, uint32_t idx, size_t i)
{
    return (unsigned char)(sender * 64u + seq * 3u + idx + (uint32_t)i);
}

static void *sender_main(void *arg)
{
    uint32_t sender = (uint32_t)(uintptr_t)arg;
    pthread_barrier_wait(&g_start);
    for (uint32_t seq = 0; seq < PER_SENDER; seq++) {
        uint32_t nparts = 1 + (seq + sender) % 6;
        zlink_msg_t parts[6];
        for (uint32_t idx = 0; idx < nparts; idx++) {
            size_t blen = body_len(seq, idx);
            struct part_hdr h = {sender, seq, idx, nparts};
            ZT_EQ_INT(zlink_msg_init_size(&parts[idx], sizeof h + blen), ZLINK_CONFIG_OK);
            unsigned char *p = zlink_msg_data(&parts[idx]);
            memcpy(p, &h, sizeof h);
            for (size_t i = 0; i < blen; i++)
                p[sizeof h + i] = body_byte(sender, seq, idx, i);
        }
        zlink_submit_result_t r =
            zlink_send(g_shared_sender, parts, nparts, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
        if (r != ZLINK_SUBMIT_OK)
            ZT_FAIL("sender %u seq %u: result %d errno %d", sender, seq, (int)r, zlink_errno());
        zlink_multipart_close(parts, nparts);
    }
    return NULL;
}

static void test_no_interleaving_concurrent_senders(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    zlt_set_int(a, ZLINK_SNDTIMEO, 10000);
    zlt_set_int(b, ZLINK_RCVTIMEO, 10000);
    g_shared_sender = a;
    pthread_t t[SENDERS];
    ZT_EQ_INT(pthread_barrier_init(&g_start, NULL, SENDERS), 0);
    for (uintptr_t i = 0; i < SENDERS; i++)
        ZT_EQ_INT(pthread_create(&t[i], NULL, sender_main, (void *)i), 0);

    uint32_t next_seq[SENDERS] = {0};
    for (int got = 0; got < SENDERS * PER_SENDER; got++) {
        zlink_msg_t parts[8];
        size_t count = 0;
        zlink_recv_result_t r = zlink_recv(b, NULL, parts, 8, &count, ZLINK_RECV_FLAGS_NONE);
        if (r != ZLINK_RECV_OK)
            ZT_FAIL("record %d: recv result %d errno %d", got, (int)r, zlink_errno());
        struct part_hdr h0;
        ZT_CHECK(zlink_msg_size(&parts[0]) >= sizeof h0);
        memcpy(&h0, zlink_msg_data(&parts[0]), sizeof h0);
        ZT_CHECK(h0.sender < SENDERS);
        if (h0.seq != next_seq[h0.sender])
            ZT_FAIL("sender %u: got seq %u, expected %u", h0.sender, h0.seq,
                    next_seq[h0.sender]);
        next_seq[h0.sender]++;
        if (count != h0.nparts)
            ZT_FAIL("sender %u seq %u: %zu parts, expected %u", h0.sender, h0.seq, count,
                    h0.nparts);
        for (uint32_t idx = 0; idx < count; idx++) {
            struct part_hdr h;
            size_t blen = body_len(h0.seq, idx);
            ZT_EQ_INT(zlink_msg_size(&parts[idx]), sizeof h + blen);
            const unsigned char *p = zlink_msg_data(&parts[idx]);
            memcpy(&h, p, sizeof h);
            if (h.sender != h0.sender || h.seq != h0.seq || h.idx != idx ||
                h.nparts != h0.nparts)
                ZT_FAIL("record (%u,%u) part %u carries (%u,%u,%u): interleaved", h0.sender,
                        h0.seq, idx, h.sender, h.seq, h.idx);
            for (size_t i = 0; i < blen; i++)
                if (p[sizeof h + i] != body_byte(h.sender, h.seq, idx, i))
                    ZT_FAIL("record (%u,%u) part %u byte %zu corrupt", h.sender, h.seq, idx,
                            i);
        }
        zlink_multipart_close(parts, count);
    }
    for (int i = 0; i < SENDERS; i++) {
        ZT_EQ_INT(pthread_join(t[i], NULL), 0);
        ZT_EQ_INT(next_seq[i], PER_SENDER);
    }
    pthread_barrier_destroy(&g_start);
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------- large records, in series */

/* Part sizes of the large-record series, record by record (0 ends a
 * record, two zeros end the list): equal 1 MiB and 64 KiB records one after
 * the other, a small part in front of a large one (a topic), sizes around
 * the one before them by a few bytes either way, and one above 2 MiB. */
#define KB64 ((size_t)64 * 1024)
#define MB1 ((size_t)1024 * 1024)
static const size_t k_series[] = {
    MB1, 0, MB1, 0, MB1, 0, MB1, 0, MB1, 0,
    KB64, 0, KB64, 0, KB64, 0, KB64, 0, KB64, 0, KB64, 0,
    3, MB1, 0, 3, MB1, 0, 3, MB1, 0, 1, KB64, 0, 1, KB64, 0,
    KB64 + 247, 0, KB64 + 248, 0, KB64 + 249, 0, KB64 + 256, 0, KB64 + 257, 0,
    KB64 + 4096, 0, KB64 - 1, 0, KB64 - 4096, 0, 100, 0, 5000, 0, KB64, 0,
    MB1 + 247, 0, MB1 + 248, 0, MB1 + 249, 0, MB1 + 4096, 0, MB1 - 1, 0, 100, 0, MB1, 0,
    3 * MB1, 0, MB1, 0, 30, 0, MB1, 30, MB1, 0, KB64, 0,
    0, 0,
};

static void *g_series_sender;

static void *series_sender(void *arg)
{
    (void)arg;
    size_t at = 0;
    for (int rec = 0; k_series[at] != 0; rec++) {
        zlink_msg_t parts[4];
        size_t n = 0;
        for (; k_series[at] != 0; at++, n++)
            fill_part(&parts[n], k_series[at], rec, (int)n);
        at++;
        zlink_submit_result_t r =
            zlink_send(g_series_sender, parts, n, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
        if (r != ZLINK_SUBMIT_OK)
            ZT_FAIL("record %d: result %d errno %d", rec, (int)r, zlink_errno());
        zlink_multipart_close(parts, n);
    }
    return NULL;
}

/* Records of 64 KiB to 3 MiB, one after the other (the transports read such
 * a series into buffers sized by the frame before, conn_read.c), arrive
 * whole, intact and in order, with nothing after them. */
static void test_large_records_in_series(const char *tr)
{
    case_begin(tr);
    void *a, *b;
    make_pair(&a, &b);
    zlt_set_int(a, ZLINK_SNDTIMEO, 20000);
    zlt_set_int(b, ZLINK_RCVTIMEO, 20000);
    g_series_sender = a;
    pthread_t t;
    ZT_EQ_INT(pthread_create(&t, NULL, series_sender, NULL), 0);
    size_t at = 0;
    for (int rec = 0; k_series[at] != 0; rec++) {
        size_t want = 0;
        while (k_series[at + want] != 0)
            want++;
        zlink_msg_t parts[4];
        size_t count = 0;
        zlink_recv_result_t r = zlink_recv(b, NULL, parts, 4, &count, ZLINK_RECV_FLAGS_NONE);
        if (r != ZLINK_RECV_OK)
            ZT_FAIL("record %d: result %d errno %d", rec, (int)r, zlink_errno());
        ZT_EQ_INT(count, want);
        for (size_t i = 0; i < want; i++)
            check_part(&parts[i], k_series[at + i], rec, (int)i);
        zlink_multipart_close(parts, count);
        at += want + 1;
    }
    ZT_EQ_INT(pthread_join(t, NULL), 0);
    zlt_expect_no_data(b);
    case_end();
}

/* ------------------------------------------------------------------ main */

static const zt_case_t cases[] = {
    ZT_CASE_TP(test_both_ways),
    ZT_CASE_TP(test_rid_is_null),
    ZT_CASE_TP(test_caller_owns_slots),
    ZT_CASE_TP(test_buffer_too_small),
    ZT_CASE_TP(test_single_and_multipart_order),
    ZT_CASE_TP(test_dontwait_immediate_id_zero),
    ZT_CASE_TP(test_no_data),
    ZT_CASE_TP(test_failed_send_invisible),
    ZT_CASE_TP(test_slots_consumed_and_reusable),
    ZT_CASE_TP(test_no_partial_state),
    ZT_CASE_TP(test_none_waits_for_peer),
    ZT_CASE_TP(test_no_replay),
    ZT_CASE_TP(test_second_peer_refused),
    ZT_CASE_TP(test_failed_part_send_consumes_all),
    ZT_CASE_TP(test_no_interleaving_concurrent_senders),
    ZT_CASE_TP(test_large_records_in_series),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
