/*
 * test_completion.c — the completion queue and wait tokens (core-contract
 * §3 "Completion queue", the submit table and the wake edges) through the
 * public API (zlink.h) only: §8 "PAIR [G3]" 6-9, 14, 16-17; "socket/README"
 * 29-33, 39, 44, 45, 47-50; "DEALER" 11, 16, 20, 30; "ROUTER" 23; "STREAM"
 * 11, 24-25. doc/contract-tests/completion.md maps every item to its case.
 *
 * How the cases get a refusal and wait for the edge (no sleeps):
 *  - A "path" is a sender (tx) and a receiver (rx) that never reads unless
 *    told to. Every data record carries a sequence number; the receiver
 *    checks each is the next one, so a refused record (it carries the
 *    number the next admitted record will carry) that was ever delivered
 *    shows up as a repeat.
 *  - Filling: NONE sends with a short SNDTIMEO until one gives up (inproc:
 *    SNDTIMEO 0, exact; tcp: HWM 1 byte both ends, 64 KiB socket buffers,
 *    64 KiB records, SNDTIMEO 100 ms). NONE sends never make tokens. Then a
 *    DONTWAIT send is refused: the token. On inproc every queue operation
 *    is synchronous, so that refusal, and "nothing yet" (a DONTWAIT
 *    completion receive giving NO_DATA) are exact. On tcp the kernel may
 *    reopen a stalled window at any time (zero-window probes), so a
 *    DONTWAIT send that is admitted after all counts as one more record and
 *    the next is tried, and no tcp case asserts "nothing yet" while a path
 *    is merely full; removals follow their refusal at once.
 *  - Waiting for a WRITABLE is a NONE zlink_completion_recv with the
 *    socket's RCVTIMEO (2 s x ZT_TIMEOUT_MULT): a missing record is a
 *    timeout, reported as such.
 *  - "Holds OUT+COMPLETION": the record stays queued until read, and, when
 *    the build has the public poller (ZLINK_HAVE_POLLER), the poll bits:
 *    exact on inproc (an unread WRITABLE holds POLLOUT on a full pipe; the
 *    last read clears both), POLLCOMPLETION only on tcp. Each such case
 *    prints whether the bits were checked.
 *
 * Cases written to the contract where the implementation differs run last
 * (a failed check ends the process): register_then_recheck_stress_observed
 * and register_then_recheck_wakes_poller (two lost wake-ups),
 * socket_44_due_writable_not_revoked and
 * pair_17_disconnect_terminal. doc/contract-tests/completion.md explains
 * each discrepancy.
 */
#include "zltest_zlink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

/* What a completion id output holds before each call: the call must zero
 * it first. */
#define GARBAGE_ID 0xDEADBEEFCAFEF00Dull
/* Refused records carry sequence numbers with this bit: never expected. */
#define REFUSED_SEQ 0x80000000u

/* zlink_errno() right after the send inside send_rec / st_send (the checks
 * that follow it may change errno: it is unspecified after a success). */
static int g_err;

/* ------------------------------------------------------ completion records */

static void cq_init(zlink_completion_t *c)
{
    memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
}

static bool rid_all_zero(const zlink_routing_id_t *r)
{
    static const zlink_routing_id_t zero;
    return memcmp(r, &zero, sizeof zero) == 0;
}

/* Checks a popped record: WRITABLE with id, user_context, result and errno;
 * peer_rid equal to rid, or all zero when rid is NULL; no REQUEST fields. */
static void check_writable(const zlink_completion_t *c, uint64_t id, void *uctx,
                           const zlink_routing_id_t *rid, int result, int err)
{
    ZT_EQ_INT(c->struct_size, sizeof *c);
    ZT_EQ_INT(c->kind, ZLINK_COMPLETION_WRITABLE);
    ZT_EQ_U64(c->completion_id, id);
    ZT_CHECK(c->user_context == uctx);
    ZT_EQ_INT(c->send_result, result);
    ZT_EQ_INT(c->send_terminal_errno, err);
    ZT_EQ_INT(c->request_result, 0);
    ZT_CHECK(c->reply_parts == NULL);
    ZT_EQ_INT(c->reply_part_count, 0);
    if (rid == NULL) {
        if (!rid_all_zero(&c->peer_rid))
            ZT_FAIL("peer_rid of a PAIR/DEALER WRITABLE is not empty (size %u)",
                    c->peer_rid.size);
    } else {
        ZT_EQ_INT(c->peer_rid.size, rid->size);
        ZT_EQ_MEM(c->peer_rid.data, rid->data, rid->size);
    }
}

/* Pops one record (NONE: waits up to the socket's RCVTIMEO) into c. */
static void cq_pop(void *s, zlink_completion_t *c, const char *what)
{
    cq_init(c);
    zlink_recv_result_t r = zlink_completion_recv(s, c, ZLINK_RECV_FLAGS_NONE);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("waiting for %s: zlink_completion_recv result %d, errno %d (%s)", what,
                (int)r, zlink_errno(), r == ZLINK_RECV_NO_DATA ? "timed out" : "error");
}

/* The next record is the WRITABLE of token id (NONE receive). */
static void expect_writable_res(void *s, uint64_t id, void *uctx,
                                const zlink_routing_id_t *rid, int result, int err)
{
    zlink_completion_t c;
    char what[96];
    snprintf(what, sizeof what, "the WRITABLE of token %llu", (unsigned long long)id);
    cq_pop(s, &c, what);
    check_writable(&c, id, uctx, rid, result, err);
    zlink_completion_close(&c);
    ZT_EQ_INT(c.struct_size, sizeof c);
}

static void expect_writable(void *s, uint64_t id, void *uctx, const zlink_routing_id_t *rid)
{
    expect_writable_res(s, id, uctx, rid, ZLINK_SEND_ADMITTED, 0);
}

/* The next two records are the ADMITTED WRITABLEs of a and b, in either
 * order (both become due at one edge). */
static void expect_writable_pair(void *s, uint64_t a, void *ua, uint64_t b, void *ub,
                                 const zlink_routing_id_t *rid)
{
    bool seen_a = false, seen_b = false;
    for (int i = 0; i < 2; i++) {
        zlink_completion_t c;
        cq_pop(s, &c, "one of two WRITABLEs");
        if (c.completion_id == a && !seen_a) {
            check_writable(&c, a, ua, rid, ZLINK_SEND_ADMITTED, 0);
            seen_a = true;
        } else if (c.completion_id == b && !seen_b) {
            check_writable(&c, b, ub, rid, ZLINK_SEND_ADMITTED, 0);
            seen_b = true;
        } else {
            ZT_FAIL("record id %llu, expected %llu and %llu once each",
                    (unsigned long long)c.completion_id, (unsigned long long)a,
                    (unsigned long long)b);
        }
        zlink_completion_close(&c);
    }
}

/* An expected record: id, user_context, routing id (NULL: empty), result. */
typedef struct want {
    uint64_t id;
    void *uctx;
    const zlink_routing_id_t *rid;
    int result, err;
    bool seen;
} want_t;

/* Reads records (NONE) until the one with id `until` came (0: until every
 * one of w[0..n) came). Each must be one of w not seen yet, with its
 * fields; anything else fails. For tcp cases whose other tokens may become
 * due at any moment (the kernel can reopen a stalled window). */
static void expect_until(void *s, want_t *w, int n, uint64_t until)
{
    for (;;) {
        bool all = true;
        for (int i = 0; i < n; i++)
            all = all && w[i].seen;
        if (until == 0 && all)
            return;
        zlink_completion_t c;
        cq_pop(s, &c, until != 0 ? "a given record" : "the remaining records");
        int k = -1;
        for (int i = 0; i < n; i++)
            if (w[i].id == c.completion_id && !w[i].seen)
                k = i;
        if (k < 0)
            ZT_FAIL("unexpected record: kind %d id %llu result %d errno %d", (int)c.kind,
                    (unsigned long long)c.completion_id, (int)c.send_result,
                    c.send_terminal_errno);
        check_writable(&c, w[k].id, w[k].uctx, w[k].rid, w[k].result, w[k].err);
        w[k].seen = true;
        zlink_completion_close(&c);
        if (until != 0 && w[k].id == until)
            return;
    }
}

/* Nothing is queued: DONTWAIT gives NO_DATA/EAGAIN and leaves out alone. */
static void expect_cq_empty(void *s)
{
    zlink_completion_t c;
    cq_init(&c);
    zlink_recv_result_t r = zlink_completion_recv(s, &c, ZLINK_RECV_FLAGS_DONTWAIT);
    if (r == ZLINK_RECV_OK)
        ZT_FAIL("expected no completion, got kind %d id %llu result %d errno %d", (int)c.kind,
                (unsigned long long)c.completion_id, (int)c.send_result,
                c.send_terminal_errno);
    ZT_EQ_INT(r, ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    zlink_completion_t z;
    cq_init(&z);
    ZT_EQ_MEM(&c, &z, sizeof c);
}

/* ------------------------------------------------------- numbered records */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One part of len (>= 4) bytes: the sequence number, then filler. */
static void rec_init(zlink_msg_t *m, uint32_t seq, size_t len)
{
    ZT_EQ_INT(zlink_msg_init_size(m, len), ZLINK_CONFIG_OK);
    unsigned char *d = zlink_msg_data(m);
    memset(d, (int)(seq & 0xFF), len);
    put_be32(d, seq);
}

/* Sends record seq on s (zlink_send, or zlink_send_rid to rid when rid is
 * not NULL), with the id output pre-set to garbage. Checks the ownership
 * rule and the id rules of the submit table: OK -> 0; DONTWAIT BP ->
 * EAGAIN + a nonzero token; NONE BP -> 0; anything else -> 0. */
static zlink_submit_result_t send_rec(void *s, const zlink_routing_id_t *rid, uint32_t seq,
                                      size_t len, int flags, void *uctx,
                                      zlink_completion_id_t *id_out)
{
    zlink_msg_t m;
    zlink_completion_id_t id = GARBAGE_ID;
    rec_init(&m, seq, len);
    zlink_submit_result_t r =
        rid != NULL ? zlink_send_rid(s, rid, &m, 1, (zlink_send_flags_t)flags, uctx, &id)
                    : zlink_send(s, &m, 1, (zlink_send_flags_t)flags, uctx, &id);
    int e = zlink_errno();
    ZT_EQ_INT(zlink_msg_size(&m), 0); /* consumed on success and failure */
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    if (r == ZLINK_SUBMIT_BACKPRESSURED && (flags & ZLINK_DONTWAIT)) {
        ZT_EQ_INT(e, EAGAIN);
        if (id == 0 || id == GARBAGE_ID)
            ZT_FAIL("a refused DONTWAIT send gave no token (id %#llx)", (unsigned long long)id);
    } else {
        ZT_EQ_U64(id, 0);
    }
    if (id_out != NULL)
        *id_out = id;
    g_err = e;
    return r;
}

/* ------------------------------------------------------------------ paths */

typedef struct path {
    void *ctx;
    void *tx, *rx;
    int tx_type;                  /* PAIR (rx PAIR), DEALER (rx ROUTER), ROUTER (rx DEALER) */
    bool tcp;
    size_t len;                   /* record size */
    char ep[256];                 /* rx's (or for ROUTER tx: tx's) bound endpoint */
    zlink_routing_id_t rid;       /* "D": the DEALER's routing id */
    const zlink_routing_id_t *to; /* ROUTER tx: &rid; else NULL */
    uint32_t sent, got;           /* records admitted / received */
    uint32_t refused;             /* refused records so far */
    uint64_t last_token;
} path_t;

/* Opens a connected path on tr. hwm: the HWM of the tx->rx direction in
 * bytes (both ends); 0 keeps the defaults. tcp adds 4 KiB socket buffers and
 * 64 KiB records, inproc uses 16-byte records. */
static void path_open(path_t *p, void *ctx, const char *tr, int tx_type, uint64_t hwm)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->tx_type = tx_type;
    p->tcp = zlt_is_tcp(tr);
    p->len = p->tcp ? 65536 : 16;
    zlt_rid_set(&p->rid, "D");
    int rx_type = tx_type == ZLINK_PAIR ? ZLINK_PAIR
                  : tx_type == ZLINK_DEALER ? ZLINK_ROUTER
                                            : ZLINK_DEALER;
    p->tx = zlt_sock(ctx, tx_type);
    p->rx = zlt_sock(ctx, rx_type);
    if (hwm != 0) {
        zlt_set_u64(p->tx, ZLINK_SNDHWM, hwm);
        zlt_set_u64(p->rx, ZLINK_RCVHWM, hwm);
    }
    if (p->tcp) {
        zlt_set_int(p->tx, ZLINK_SNDBUF, 65536);
        zlt_set_int(p->tx, ZLINK_RCVBUF, 65536);
        zlt_set_int(p->rx, ZLINK_SNDBUF, 65536);
        zlt_set_int(p->rx, ZLINK_RCVBUF, 65536);
    }
    switch (tx_type) {
    case ZLINK_PAIR:
        zlt_bind(p->rx, tr, p->ep, sizeof p->ep);
        zlt_connect(p->tx, p->ep);
        ZT_EQ_INT(zlt_send_str(p->tx, "hello", 0), ZLINK_SUBMIT_OK); /* waits for the peer */
        zlt_expect_str(p->rx, "hello");
        break;
    case ZLINK_DEALER:
        zlt_set_rid(p->tx, "D");
        zlt_bind(p->rx, tr, p->ep, sizeof p->ep);
        zlt_connect(p->tx, p->ep);
        ZT_EQ_INT(zlt_send_str(p->tx, "hello", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(p->rx, "D", "hello");
        break;
    default:
        zlt_set_rid(p->rx, "D");
        zlt_bind(p->tx, tr, p->ep, sizeof p->ep);
        zlt_connect(p->rx, p->ep);
        ZT_EQ_INT(zlt_send_str(p->rx, "hello", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(p->tx, "D", "hello"); /* the ROUTER has the route now */
        p->to = &p->rid;
        break;
    }
}

static void path_close(path_t *p)
{
    zlt_close(p->tx);
    zlt_close(p->rx);
}

/* Receives one record on rx; result only. */
static zlink_recv_result_t path_take(path_t *p, int flags, uint32_t *seq)
{
    zlink_msg_t parts[4];
    size_t count = 0;
    zlink_recv_result_t r;
    if (p->tx_type == ZLINK_DEALER) {
        const zlink_routing_id_t *from = NULL;
        zlink_reply_token_t tok = 7;
        r = zlink_router_recv(p->rx, &from, &tok, parts, 4, &count, (zlink_recv_flags_t)flags);
        if (r == ZLINK_RECV_OK) {
            ZT_CHECK(zlt_rid_is(from, "D"));
            ZT_EQ_U64(tok, 0);
        }
    } else {
        r = zlink_recv(p->rx, NULL, parts, 4, &count, (zlink_recv_flags_t)flags);
    }
    if (r != ZLINK_RECV_OK)
        return r;
    ZT_EQ_INT(count, 1);
    if (zlink_msg_size(&parts[0]) != p->len)
        ZT_FAIL("a record of %zu bytes arrived (\"%.*s\"), expected %zu", zlink_msg_size(&parts[0]),
                (int)(zlink_msg_size(&parts[0]) < 16 ? zlink_msg_size(&parts[0]) : 16),
                (const char *)zlink_msg_data(&parts[0]), p->len);
    *seq = get_be32(zlink_msg_data(&parts[0]));
    zlink_multipart_close(parts, count);
    return r;
}

/* The next record on rx (NONE) is number p->got. */
static void path_expect(path_t *p)
{
    uint32_t seq = 0;
    zlink_recv_result_t r = path_take(p, 0, &seq);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("waiting for record %u: result %d, errno %d", p->got, (int)r, zlink_errno());
    if (seq != p->got)
        ZT_FAIL("record %#x arrived, expected %u%s", seq, p->got,
                (seq & REFUSED_SEQ) ? " (a refused record was delivered)" : "");
    p->got++;
}

/* rx has nothing queued (DONTWAIT). */
static void path_expect_nothing(path_t *p)
{
    uint32_t seq = 0;
    zlink_recv_result_t r = path_take(p, ZLINK_DONTWAIT, &seq);
    if (r == ZLINK_RECV_OK)
        ZT_FAIL("record %#x arrived, expected nothing%s", seq,
                (seq & REFUSED_SEQ) ? " (a refused record was delivered)" : "");
    ZT_EQ_INT(r, ZLINK_RECV_NO_DATA);
}

/* Fills tx->rx with NONE sends (SNDTIMEO 0 on inproc, 100 ms on tcp) until
 * one times out. Returns how many were admitted. */
static uint32_t path_fill(path_t *p)
{
    uint32_t n = 0;
    zlt_set_int(p->tx, ZLINK_SNDTIMEO, p->tcp ? ZT_MS(100) : 0);
    for (;;) {
        zlink_completion_id_t id;
        zlink_submit_result_t r = send_rec(p->tx, p->to, p->sent, p->len, 0, NULL, &id);
        if (r == ZLINK_SUBMIT_OK) {
            p->sent++;
            if (++n > 4096)
                ZT_FAIL("the path took %u records without filling", n);
            continue;
        }
        ZT_EQ_INT(r, ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(g_err, EAGAIN);
        break;
    }
    zlt_set_int(p->tx, ZLINK_SNDTIMEO, ZT_MS(ZLT_TIMEO_MS));
    return n;
}

/* One DONTWAIT send refused for lack of room; returns its token, which
 * must be larger than every earlier token of this path. The refused record
 * carries the next sequence number, so if it were ever delivered the
 * receiver would see that number twice. On inproc the first attempt must
 * be refused; on tcp the kernel may reopen a stalled window at any time,
 * so an admitted attempt counts as one more record and the next is tried. */
static uint64_t path_refuse(path_t *p, void *uctx)
{
    for (uint32_t tries = 0;; tries++) {
        zlink_completion_id_t id = 0;
        zlink_submit_result_t r =
            send_rec(p->tx, p->to, p->sent, p->len, ZLINK_DONTWAIT, uctx, &id);
        if (r == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_CHECK(id > p->last_token);
            p->last_token = id;
            p->refused++;
            return id;
        }
        if (r != ZLINK_SUBMIT_OK || !p->tcp || tries > 4096)
            ZT_FAIL("a DONTWAIT send on a full %s path gave %d (errno %d), not BACKPRESSURED",
                    p->tcp ? "tcp" : "inproc", (int)r, g_err);
        p->sent++;
    }
}

/* After a drain: fills the path again and returns a refusal's token (the
 * token stays live until rx reads again; on tcp as long as the kernel keeps
 * its window shut). */
static uint64_t path_refill_refuse(path_t *p, void *uctx)
{
    path_fill(p);
    return path_refuse(p, uctx);
}

/* A NONE send on the full path gives up at SNDTIMEO (50 ms): BACKPRESSURED/
 * EAGAIN, id 0, no token. (tcp: an admitted attempt counts, as above.) */
static void path_none_expires(path_t *p)
{
    zlt_set_int(p->tx, ZLINK_SNDTIMEO, ZT_MS(50));
    for (uint32_t tries = 0;; tries++) {
        zlink_completion_id_t id;
        zlink_submit_result_t r = send_rec(p->tx, p->to, p->sent, p->len, 0, p, &id);
        if (r == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_EQ_INT(g_err, EAGAIN);
            ZT_EQ_U64(id, 0);
            break;
        }
        if (r != ZLINK_SUBMIT_OK || !p->tcp || tries > 4096)
            ZT_FAIL("a NONE send on a full path gave %d (errno %d)", (int)r, g_err);
        p->sent++;
    }
    zlt_set_int(p->tx, ZLINK_SNDTIMEO, ZT_MS(ZLT_TIMEO_MS));
}

/* rx receives every admitted record it has not received yet. */
static void path_drain(path_t *p)
{
    while (p->got < p->sent)
        path_expect(p);
}

/* The resubmit after a WRITABLE: DONTWAIT, admitted (id 0), and it is the
 * next record rx receives. */
static void path_resubmit(path_t *p)
{
    zlink_completion_id_t id;
    ZT_EQ_INT(send_rec(p->tx, p->to, p->sent, p->len, ZLINK_DONTWAIT, (void *)p, &id),
              ZLINK_SUBMIT_OK);
    p->sent++;
    path_expect(p);
}

/* Traffic the other way (rx -> tx), received by tx: activity on tx that has
 * nothing to do with its completion queue. */
static void path_reverse_traffic(path_t *p)
{
    switch (p->tx_type) {
    case ZLINK_PAIR:
        ZT_EQ_INT(zlt_send_str(p->rx, "back", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(p->tx, "back");
        break;
    case ZLINK_DEALER:
        ZT_EQ_INT(zlt_send_rid_str(p->rx, "D", "back", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(p->tx, "back");
        break;
    default:
        ZT_EQ_INT(zlt_send_str(p->rx, "back", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(p->tx, "D", "back");
        break;
    }
}

/* A zlink_completion_recv that must fail with INVALID_STATE/EINVAL because
 * struct_size is wrong, and must leave the output alone. */
static void bad_struct_recv(void *s)
{
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c - 1;
    ZT_EQ_INT(zlink_completion_recv(s, &c, ZLINK_RECV_FLAGS_DONTWAIT), ZLINK_RECV_INVALID_STATE);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_INT(c.struct_size, sizeof c - 1);
    ZT_EQ_INT(c.kind, 0);
}

/* ---------------------------------------------------------------- polling
 * POLLOUT / POLLCOMPLETION through the public poller, when this build has
 * one (ZLINK_HAVE_POLLER). A fresh poller per look, so the completion bit
 * has no lasting owner. */
#ifdef ZLINK_HAVE_POLLER
#define CQ_OUT ZLINK_POLLOUT
#define CQ_COMPLETION ZLINK_POLLCOMPLETION

/* The ready bits of s among mask, waiting up to timeout_ms (scaled) for any. */
static int poll_bits(void *s, short mask, int timeout_ms)
{
    void *pl = zlink_poller_new();
    ZT_CHECK(pl != NULL);
    ZT_EQ_INT(zlink_poller_add(pl, s, &pl, mask), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev[2];
    zlink_config_result_t err = ZLINK_CONFIG_OK;
    int n = zlink_poller_wait(pl, ev, 2, timeout_ms > 0 ? ZT_MS(timeout_ms) : 0, &err);
    if (n < 0)
        ZT_FAIL("zlink_poller_wait: result %d, errno %d", (int)err, zlink_errno());
    ZT_CHECK(n <= 1);
    int bits = 0;
    if (n == 1) {
        ZT_CHECK(ev[0].socket == s && ev[0].user_data == &pl);
        bits = ev[0].events;
    }
    ZT_EQ_INT(zlink_poller_remove(pl, s), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_poller_destroy(&pl), ZLINK_CLOSE_OK);
    ZT_CHECK(pl == NULL);
    return bits;
}

/* The OUT and COMPLETION bits of s right now are exactly want. */
#define expect_poll(s, want)                                                            \
    do {                                                                                \
        int got_ = poll_bits((s), ZLINK_POLLOUT | ZLINK_POLLCOMPLETION, 0);            \
        if (got_ != (want))                                                             \
            ZT_FAIL("poll bits %#x, expected %#x (OUT %#x, COMPLETION %#x)", got_,      \
                    (int)(want), ZLINK_POLLOUT, ZLINK_POLLCOMPLETION);                  \
    } while (0)

static bool have_poller(void)
{
    return true;
}
#else
#define CQ_OUT 0
#define CQ_COMPLETION 0
#define expect_poll(s, want) ((void)(s), (void)(want))
static int poll_bits(void *s, short mask, int timeout_ms)
{
    (void)s;
    (void)mask;
    (void)timeout_ms;
    return 0;
}
static bool have_poller(void)
{
    return false;
}
#endif

static void say_poll_bits(void)
{
    printf("# poll bits: %s\n",
           have_poller() ? "checked" : "NOT checked (no poller in this build)");
}

/* The "held until read" sequence shared by PAIR 8, DEALER 30, ROUTER 23:
 * token on a full path; nothing before the drain (where deterministic);
 * after the drain the record waits through unrelated activity, comes out
 * once with every field right, and the resubmit is delivered.
 * Poll bits (inproc, exact): full path and a live token: neither OUT nor
 * COMPLETION; drained: both; the application fills the pipe again: both
 * still (the unread WRITABLE holds OUT); the record read: neither.
 * tcp: COMPLETION comes after the drain and goes with the read. */
static void held_until_read(path_t *p, const zlink_routing_id_t *rid)
{
    static int marker;
    path_fill(p);
    uint64_t t = path_refuse(p, &marker);
    bool refilled = false;
    if (!p->tcp) {
        expect_cq_empty(p->tx); /* nothing before the target recovers */
        expect_poll(p->tx, 0);
    }
    path_drain(p);
    if (!p->tcp) {
        expect_poll(p->tx, CQ_OUT | CQ_COMPLETION);
        if (have_poller()) {
            /* Full again by the application's own send: the WRITABLE that
             * the poll above saw stays, and holds OUT. */
            zlink_completion_id_t id;
            ZT_EQ_INT(send_rec(p->tx, p->to, p->sent, p->len, ZLINK_DONTWAIT, NULL, &id),
                      ZLINK_SUBMIT_OK);
            p->sent++;
            refilled = true;
            expect_poll(p->tx, CQ_OUT | CQ_COMPLETION);
        }
    } else if (have_poller()) {
        ZT_CHECK(poll_bits(p->tx, ZLINK_POLLCOMPLETION, ZLT_TIMEO_MS) & CQ_COMPLETION);
    }
    /* Unrelated activity before the record is read: it stays queued. */
    bad_struct_recv(p->tx);
    path_reverse_traffic(p);
    expect_writable(p->tx, t, &marker, rid);
    expect_cq_empty(p->tx); /* exactly one, and reading it cleared it */
    if (refilled) {
        expect_poll(p->tx, 0); /* the last read clears COMPLETION and OUT */
        path_drain(p);
        expect_poll(p->tx, CQ_OUT);
    } else if (have_poller()) {
        ZT_EQ_INT(poll_bits(p->tx, ZLINK_POLLCOMPLETION, 0), 0);
    }
    path_resubmit(p);
    path_expect_nothing(p);
    expect_cq_empty(p->tx);
}

/* ===================================================================== PAIR */

/* PAIR 6: a DONTWAIT send admitted at once returns OK with id 0 (the output
 * is zeroed), and never produces a completion. */
static void pair_06_immediate_dontwait_id_zero(void)
{
    printf("# covers PAIR/6\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 0);
        static int uctx;
        zlink_completion_id_t id = GARBAGE_ID;
        for (int i = 0; i < 3; i++) {
            ZT_EQ_INT(send_rec(p.tx, NULL, p.sent, p.len, ZLINK_DONTWAIT, &uctx, &id),
                      ZLINK_SUBMIT_OK);
            ZT_EQ_U64(id, 0);
            p.sent++;
        }
        ZT_EQ_INT(send_rec(p.tx, NULL, p.sent, p.len, 0, &uctx, &id), ZLINK_SUBMIT_OK);
        p.sent++;
        path_drain(&p);
        expect_cq_empty(p.tx);
        path_close(&p);
    }
}

/* PAIR 7: a DONTWAIT send refused for lack of room returns BACKPRESSURED/
 * EAGAIN with a nonzero token: with no peer yet, and at the HWM. Tokens of
 * one socket increase. */
static void pair_07_refused_gets_token(void)
{
    printf("# covers PAIR/7\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        /* No peer yet. */
        void *a = zlt_sock(ctx, ZLINK_PAIR);
        char ep[256];
        zlt_bind(a, tr, ep, sizeof ep);
        static int u1, u2;
        zlink_completion_id_t t1, t2;
        ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u1, &t1),
                  ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ + 1, 16, ZLINK_DONTWAIT, &u2, &t2),
                  ZLINK_SUBMIT_BACKPRESSURED);
        ZT_CHECK(t2 > t1);
        expect_cq_empty(a); /* no peer, no edge */
        void *b = zlt_sock(ctx, ZLINK_PAIR);
        zlt_connect(b, ep); /* the attach is the edge */
        expect_writable_pair(a, t1, &u1, t2, &u2, NULL);
        expect_cq_empty(a);
        zlt_expect_no_data(b); /* the refused records were not kept */
        zlt_close(b);
        zlt_close(a);

        /* At the HWM. */
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 1);
        path_fill(&p);
        static int u3;
        uint64_t t3 = path_refuse(&p, &u3);
        path_drain(&p);
        expect_writable(p.tx, t3, &u3, NULL);
        expect_cq_empty(p.tx);
        path_close(&p);
    }
}

/* PAIR 8: one WRITABLE (ADMITTED, same user_context, empty routing id)
 * follows the drain and is held until read. inproc also pins the edge to
 * the LWM: HWM 800 bytes = ten 16-byte records (80 bytes each), LWM 400:
 * nothing after four reads, the WRITABLE after the fifth. */
static void pair_08_one_writable_held_until_read(void)
{
    printf("# covers PAIR/8\n");
    say_poll_bits();
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 1);
        held_until_read(&p, NULL);
        path_close(&p);

        if (!zlt_is_tcp(tr)) {
            path_open(&p, ctx, tr, ZLINK_PAIR, 800);
            ZT_EQ_INT(path_fill(&p), 10);
            static int u;
            uint64_t t = path_refuse(&p, &u);
            for (int i = 0; i < 4; i++) {
                path_expect(&p);
                expect_cq_empty(p.tx); /* 800 - 80 * (i + 1) > 400 */
            }
            path_expect(&p); /* 400 bytes left: at the LWM */
            expect_writable(p.tx, t, &u, NULL);
            expect_cq_empty(p.tx);
            path_drain(&p);
            expect_cq_empty(p.tx);
            path_close(&p);
        }
    }
}

/* 65,536 slots (queued records + live tokens) per socket. A socket of type
 * with SNDHWM 1 and no peer: 65,536 refused DONTWAIT sends give 65,536
 * tokens, the next OUT_OF_MEMORY/ENOMEM with id 0. A peer attaches (every
 * token becomes a record: still full); reading one record frees one slot. */
static void slot_limit_case(int type)
{
    enum { SLOTS = 65536 };
    static uint64_t ids[SLOTS];
    static unsigned char seen[SLOTS];
    void *ctx = zlt_ctx_new();
    void *a = zlt_sock(ctx, type);
    zlt_set_u64(a, ZLINK_SNDHWM, 1);
    char ep[256];
    zlt_bind(a, "inproc", ep, sizeof ep);
    memset(seen, 0, sizeof seen);
    for (uint32_t i = 0; i < SLOTS; i++) {
        zlink_completion_id_t id;
        zlink_submit_result_t r =
            send_rec(a, NULL, REFUSED_SEQ | i, 8, ZLINK_DONTWAIT, (void *)(uintptr_t)(i + 1), &id);
        if (r != ZLINK_SUBMIT_BACKPRESSURED)
            ZT_FAIL("refused send %u gave %d (errno %d)", i, (int)r, zlink_errno());
        if (i > 0 && id <= ids[i - 1])
            ZT_FAIL("token %u is %llu, not above %llu", i, (unsigned long long)id,
                    (unsigned long long)ids[i - 1]);
        ids[i] = id;
    }
    zlink_completion_id_t id;
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 8, ZLINK_DONTWAIT, &id, &id),
              ZLINK_SUBMIT_OUT_OF_MEMORY);
    ZT_EQ_INT(g_err, ENOMEM);
    ZT_EQ_U64(id, 0);
    /* NONE never takes a slot: it times out as usual. */
    zlt_set_int(a, ZLINK_SNDTIMEO, 0);
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 8, 0, NULL, &id), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(g_err, EAGAIN);
    zlt_set_int(a, ZLINK_SNDTIMEO, ZT_MS(ZLT_TIMEO_MS));
    expect_cq_empty(a);

    /* The peer attaches: every token becomes due; the first read turns
     * them into records (65,535 queued after it). a takes one record, its
     * pipe is full again: one refusal takes the last slot, the next finds
     * none. Reading one more record frees one slot, and so on. */
    void *b = zlt_sock(ctx, type == ZLINK_PAIR ? ZLINK_PAIR : ZLINK_ROUTER);
    zlt_connect(b, ep);
    zlink_completion_t c;
    cq_pop(a, &c, "the first of 65,536 WRITABLEs");
    ZT_EQ_INT(send_rec(a, NULL, 0, 8, ZLINK_DONTWAIT, NULL, &id), ZLINK_SUBMIT_OK);
    static int unew[2];
    zlink_completion_id_t tnew[2];
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 8, ZLINK_DONTWAIT, &unew[0], &tnew[0]),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_CHECK(tnew[0] > ids[SLOTS - 1]);
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 8, ZLINK_DONTWAIT, NULL, &id),
              ZLINK_SUBMIT_OUT_OF_MEMORY);
    ZT_EQ_INT(g_err, ENOMEM);
    ZT_EQ_U64(id, 0);
    zlink_completion_t c2;
    cq_pop(a, &c2, "the second of 65,536 WRITABLEs"); /* frees one slot */
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 8, ZLINK_DONTWAIT, &unew[1], &tnew[1]),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_CHECK(tnew[1] > tnew[0]);
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 8, ZLINK_DONTWAIT, NULL, &id),
              ZLINK_SUBMIT_OUT_OF_MEMORY);
    ZT_EQ_U64(id, 0);

    /* Every token's WRITABLE exactly once, with its own user_context (c
     * and c2 hold the first two already). */
    size_t lo = 0;
    for (int held = 1;; held = held == 1 ? 2 : 0) {
        if (held == 2)
            c = c2;
        ZT_EQ_INT(c.kind, ZLINK_COMPLETION_WRITABLE);
        ZT_EQ_INT(c.send_result, ZLINK_SEND_ADMITTED);
        ZT_CHECK(rid_all_zero(&c.peer_rid));
        uintptr_t k = (uintptr_t)c.user_context;
        if (k < 1 || k > SLOTS || ids[k - 1] != c.completion_id)
            ZT_FAIL("record id %llu with user_context %p matches no token",
                    (unsigned long long)c.completion_id, c.user_context);
        if (seen[k - 1]++)
            ZT_FAIL("token %llu completed twice", (unsigned long long)c.completion_id);
        zlink_completion_close(&c);
        lo++;
        if (held == 1)
            continue;
        cq_init(&c);
        zlink_recv_result_t r = zlink_completion_recv(a, &c, ZLINK_RECV_FLAGS_DONTWAIT);
        if (r == ZLINK_RECV_NO_DATA)
            break;
        ZT_EQ_INT(r, ZLINK_RECV_OK);
    }
    ZT_EQ_INT(lo, SLOTS);
    /* The new token waits for its target: b reads the one record. */
    expect_cq_empty(a);
    zlink_msg_t parts[2];
    size_t count = 0;
    if (type == ZLINK_PAIR) {
        ZT_EQ_INT(zlink_recv(b, NULL, parts, 2, &count, 0), ZLINK_RECV_OK);
    } else {
        const zlink_routing_id_t *from = NULL;
        zlink_reply_token_t tok = 1;
        ZT_EQ_INT(zlink_router_recv(b, &from, &tok, parts, 2, &count, 0), ZLINK_RECV_OK);
    }
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(get_be32(zlink_msg_data(&parts[0])), 0);
    zlink_multipart_close(parts, count);
    expect_writable_pair(a, tnew[0], &unew[0], tnew[1], &unew[1], NULL);
    expect_cq_empty(a);
    zlt_finish(ctx, b, a);
}

/* PAIR 9: completion slot exhaustion -> OUT_OF_MEMORY, id 0. */
static void pair_09_exhaustion_out_of_memory(void)
{
    printf("# covers PAIR/9\n");
    slot_limit_case(ZLINK_PAIR);
}

/* PAIR 14: a token survives its peer going away (no TERMINAL, nothing at
 * all); a new peer attaching is the edge: WRITABLE ADMITTED. */
static void pair_14_reconnect_writable_disconnect_not_terminal(void)
{
    printf("# covers PAIR/14\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        void *a = zlt_sock(ctx, ZLINK_PAIR);
        char ep[256];
        static int u1, u2;
        uint64_t t1 = 0, t2 = 0;
        zlink_completion_id_t id;
        if (!zlt_is_tcp(tr)) {
            /* inproc: the token comes from the HWM with the peer attached;
             * the peer's close is synchronous. */
            zlt_set_u64(a, ZLINK_SNDHWM, 1);
            zlt_bind(a, tr, ep, sizeof ep);
            void *b = zlt_sock(ctx, ZLINK_PAIR);
            zlt_connect(b, ep);
            ZT_EQ_INT(send_rec(a, NULL, 0, 16, ZLINK_DONTWAIT, NULL, &id), ZLINK_SUBMIT_OK);
            ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u1, &id),
                      ZLINK_SUBMIT_BACKPRESSURED);
            t1 = id;
            zlt_close(b); /* the peer goes away */
            expect_cq_empty(a);
            /* And a refusal with no peer at all. */
            ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ + 1, 16, ZLINK_DONTWAIT, &u2, &id),
                      ZLINK_SUBMIT_BACKPRESSURED);
            t2 = id;
            expect_cq_empty(a);
        } else {
            /* tcp: the peer's close reaches a later; a keeps sending until
             * it has no peer (what it admitted meanwhile is lost), and that
             * refusal is the token. */
            zlt_bind(a, tr, ep, sizeof ep);
            void *b = zlt_sock(ctx, ZLINK_PAIR);
            zlt_connect(b, ep);
            ZT_EQ_INT(zlt_send_str(b, "hi", 0), ZLINK_SUBMIT_OK);
            zlt_expect_str(a, "hi");
            zlt_close(b);
            int64_t end = zt_now_ms() + ZT_MS(5000);
            for (uint32_t i = 0;; i++) {
                zlink_submit_result_t r =
                    send_rec(a, NULL, REFUSED_SEQ | i, 16, ZLINK_DONTWAIT, &u1, &id);
                if (r == ZLINK_SUBMIT_BACKPRESSURED)
                    break;
                ZT_EQ_INT(r, ZLINK_SUBMIT_OK);
                if (zt_now_ms() > end)
                    ZT_FAIL("the PAIR never noticed its tcp peer closing");
            }
            t1 = id;
            expect_cq_empty(a); /* not TERMINAL; no peer to be ADMITTED */
            ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ + 1, 16, ZLINK_DONTWAIT, &u2, &id),
                      ZLINK_SUBMIT_BACKPRESSURED);
            t2 = id;
            expect_cq_empty(a);
        }
        ZT_CHECK(t2 > t1);
        /* A new peer: both tokens ADMITTED, once each. */
        void *b2 = zlt_sock(ctx, ZLINK_PAIR);
        zlt_connect(b2, ep);
        expect_writable_pair(a, t1, &u1, t2, &u2, NULL);
        expect_cq_empty(a);
        /* b2 is a's peer once a hears from it; then the resubmit is the
         * first record b2 gets (nothing was replayed). */
        ZT_EQ_INT(zlt_send_str(b2, "b2", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(a, "b2");
        ZT_EQ_INT(zlt_send_str(a, "resubmitted", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        zlt_expect_str(b2, "resubmitted");
        zlt_expect_no_data(b2);
        expect_cq_empty(a);
        zlt_close(b2); zlt_close(a);
    }
}

/* PAIR 16: no replay: refused records are never delivered, not after the
 * WRITABLE, not to a peer that attaches later; only the resubmit is. */
static void pair_16_no_replay(void)
{
    printf("# covers PAIR/16\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 1);
        path_fill(&p);
        static int u[3];
        uint64_t t[3];
        for (int i = 0; i < 3; i++)
            t[i] = path_refuse(&p, &u[i]);
        path_drain(&p);
        bool seen[3] = {false, false, false};
        for (int n = 0; n < 3; n++) {
            zlink_completion_t c;
            cq_pop(p.tx, &c, "one of three WRITABLEs");
            int k = -1;
            for (int i = 0; i < 3; i++)
                if (c.completion_id == t[i] && !seen[i])
                    k = i;
            if (k < 0)
                ZT_FAIL("record id %llu is not one of the three tokens, once each",
                        (unsigned long long)c.completion_id);
            seen[k] = true;
            check_writable(&c, t[k], &u[k], NULL, ZLINK_SEND_ADMITTED, 0);
            zlink_completion_close(&c);
        }
        expect_cq_empty(p.tx);
        path_resubmit(&p); /* the next record rx sees is the resubmit */
        path_expect_nothing(&p);
        path_close(&p);

        /* A peer that attaches after the refusal gets nothing of it. */
        void *a = zlt_sock(ctx, ZLINK_PAIR);
        char ep[256];
        zlt_bind(a, tr, ep, sizeof ep);
        zlink_completion_id_t id;
        ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u[0], &id),
                  ZLINK_SUBMIT_BACKPRESSURED);
        void *b = zlt_sock(ctx, ZLINK_PAIR);
        zlt_connect(b, ep);
        expect_writable(a, id, &u[0], NULL);
        ZT_EQ_INT(zlt_send_str(a, "after", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        zlt_expect_str(b, "after"); /* the first and only record */
        zlt_expect_no_data(b);
        zlt_close(b); zlt_close(a);
    }
}

/* PAIR 17 (second half): nothing after close: a socket with a queued
 * record and a live token is closed; its completion receive and sends give
 * ESHUTDOWN results with id 0, and the peer gets nothing more. */
static void pair_17_nothing_after_close(void)
{
    printf("# covers PAIR/17 (close)\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 1);
        path_fill(&p);
        static int u1, u2, u3;
        uint64_t t1 = path_refuse(&p, &u1);
        uint64_t t2 = path_refuse(&p, &u2);
        path_drain(&p);
        zlink_completion_t c;
        cq_pop(p.tx, &c, "one of two WRITABLEs"); /* the other stays queued */
        if (c.completion_id == t1)
            check_writable(&c, t1, &u1, NULL, ZLINK_SEND_ADMITTED, 0);
        else
            check_writable(&c, t2, &u2, NULL, ZLINK_SEND_ADMITTED, 0);
        zlink_completion_close(&c);
        path_refill_refuse(&p, &u3); /* a live token */
        zlt_close(p.tx);

        cq_init(&c);
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        zlink_completion_t z;
        cq_init(&z);
        ZT_EQ_MEM(&c, &z, sizeof c);
        zlink_completion_id_t id;
        ZT_EQ_INT(send_rec(p.tx, NULL, REFUSED_SEQ | 99, p.len, ZLINK_DONTWAIT, &u1, &id),
                  ZLINK_SUBMIT_TERMINATED);
        ZT_EQ_INT(g_err, ESHUTDOWN);
        ZT_EQ_U64(id, 0);
        /* The peer: what was admitted before the close, in order (LINGER 0
         * may drop some of it on tcp), never a refused record. */
        for (;;) {
            uint32_t seq = 0;
            zlink_recv_result_t r = path_take(&p, ZLINK_DONTWAIT, &seq);
            if (r != ZLINK_RECV_OK)
                break;
            ZT_CHECK(seq == p.got && seq < p.sent);
            p.got++;
        }
        zlt_close(p.rx);
    }
}

/* PAIR 17 (first half), written to the contract: an explicit endpoint
 * removal (zlink_disconnect) ends the token as WRITABLE TERMINAL/ENOENT. */
static void pair_17_disconnect_terminal(void)
{
    printf("# covers PAIR/17 (disconnect)\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 1);
        path_fill(&p);
        static int u;
        uint64_t t = path_refuse(&p, &u);
        ZT_EQ_INT(zlink_disconnect(p.tx, p.ep), ZLINK_CONNECT_OK);
        zlink_completion_t c;
        cq_init(&c);
        zlink_recv_result_t r = zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE);
        if (r != ZLINK_RECV_OK)
            ZT_FAIL("no WRITABLE TERMINAL/ENOENT for token %llu after zlink_disconnect "
                    "(result %d, errno %d): an endpoint removal does not end the token",
                    (unsigned long long)t, (int)r, zlink_errno());
        check_writable(&c, t, &u, NULL, ZLINK_SEND_TERMINAL, ENOENT);
        zlink_completion_close(&c);
        expect_cq_empty(p.tx);
        path_close(&p);
    }
}

/* =================================================================== DEALER */

/* A DEALER (id "D", SNDHWM 1) connected to router r bound at ep; r has sent
 * "sync" and the DEALER received it (handshake and r's weight known). */
static void *dealer_synced(void *ctx, void *r, const char *ep)
{
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_set_u64(d, ZLINK_SNDHWM, 1);
    zlt_connect(d, ep);
    zlt_router_send_when_routable(r, "D", "sync");
    zlt_expect_str(d, "sync");
    return d;
}

/* Changes router r's weight and proves d applied it: a record r sends after
 * the change reaches d (WEIGHT travels in order with r's records). */
static void router_weight(void *r, void *d, int w)
{
    zlt_set_int(r, ZLINK_ROUTER_WEIGHT, w);
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence");
}

/* DEALER 11: weight 0 -> positive is a wake edge (WRITABLE ADMITTED);
 * weight 0 never ends a token (no TERMINAL, and a weight-0 peer draining is
 * not an edge). */
static void dealer_11_weight_revival_writable(void)
{
    printf("# covers DEALER/11\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        void *r = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_set_int(r, ZLINK_ROUTER_WEIGHT, 0);
        char ep[256];
        zlt_bind(r, tr, ep, sizeof ep);
        void *d = dealer_synced(ctx, r, ep);
        static int u1, u2;
        zlink_completion_id_t t1, t2, id;
        ZT_EQ_INT(send_rec(d, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u1, &t1),
                  ZLINK_SUBMIT_BACKPRESSURED); /* the only peer has weight 0 */
        expect_cq_empty(d);
        router_weight(r, d, 0); /* 0 -> 0: no edge, not an end */
        expect_cq_empty(d);
        zlt_set_int(r, ZLINK_ROUTER_WEIGHT, 50); /* 0 -> 50: the edge */
        expect_writable(d, t1, &u1, NULL);
        expect_cq_empty(d);
        ZT_EQ_INT(zlt_send_str(d, "resubmitted", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        zlt_router_expect(r, "D", "resubmitted");

        if (!zlt_is_tcp(tr)) {
            /* A token on a full positive-weight peer; the peer goes to
             * weight 0 and then drains: nothing (weight 0 excludes it and
             * does not end the token); back to positive: ADMITTED. */
            ZT_EQ_INT(send_rec(d, NULL, 7, 16, ZLINK_DONTWAIT, NULL, &id), ZLINK_SUBMIT_OK);
            ZT_EQ_INT(send_rec(d, NULL, REFUSED_SEQ + 1, 16, ZLINK_DONTWAIT, &u2, &t2),
                      ZLINK_SUBMIT_BACKPRESSURED);
            ZT_CHECK(t2 > t1);
            router_weight(r, d, 0);
            zlink_msg_t parts[2];
            size_t count = 0;
            const zlink_routing_id_t *from = NULL;
            zlink_reply_token_t tok;
            ZT_EQ_INT(zlink_router_recv(r, &from, &tok, parts, 2, &count, 0), ZLINK_RECV_OK);
            ZT_EQ_INT(get_be32(zlink_msg_data(&parts[0])), 7);
            zlink_multipart_close(parts, count);
            expect_cq_empty(d);
            zlt_set_int(r, ZLINK_ROUTER_WEIGHT, 100);
            expect_writable(d, t2, &u2, NULL);
            expect_cq_empty(d);
        }
        zlt_close(d); zlt_close(r);
    }
}

/* DEALER 16: every peer at weight 0 (and no peer at all): DONTWAIT ->
 * BACKPRESSURED/EAGAIN + token; NONE (SNDTIMEO 0 or expiry) ->
 * BACKPRESSURED/EAGAIN, id 0, no token. One WRITABLE per DONTWAIT token. */
static void dealer_16_all_weights_zero_token(void)
{
    printf("# covers DEALER/16\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        /* No peer at all. */
        void *lone = zlt_sock(ctx, ZLINK_DEALER);
        static int u0, u1;
        zlink_completion_id_t t0, t1, id;
        ZT_EQ_INT(send_rec(lone, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u0, &t0),
                  ZLINK_SUBMIT_BACKPRESSURED);
        zlt_set_int(lone, ZLINK_SNDTIMEO, 0);
        ZT_EQ_INT(send_rec(lone, NULL, REFUSED_SEQ, 16, 0, &u0, &id), ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(g_err, EAGAIN);
        expect_cq_empty(lone);

        /* Two peers, both weight 0. */
        void *r1 = zlt_sock(ctx, ZLINK_ROUTER);
        void *r2 = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_set_int(r1, ZLINK_ROUTER_WEIGHT, 0);
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 0);
        char ep1[256], ep2[256];
        zlt_bind(r1, tr, ep1, sizeof ep1);
        zlt_bind(r2, tr, ep2, sizeof ep2);
        void *d = dealer_synced(ctx, r1, ep1);
        zlt_connect(d, ep2);
        zlt_router_send_when_routable(r2, "D", "sync2");
        zlt_expect_str(d, "sync2");
        ZT_EQ_INT(send_rec(d, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u1, &t1),
                  ZLINK_SUBMIT_BACKPRESSURED);
        zlt_set_int(d, ZLINK_SNDTIMEO, 0);
        ZT_EQ_INT(send_rec(d, NULL, REFUSED_SEQ, 16, 0, &u1, &id), ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(g_err, EAGAIN);
        zlt_set_int(d, ZLINK_SNDTIMEO, ZT_MS(50));
        int64_t t = zt_now_ms();
        ZT_EQ_INT(send_rec(d, NULL, REFUSED_SEQ, 16, 0, &u1, &id), ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(g_err, EAGAIN);
        ZT_CHECK(zt_now_ms() - t >= 45);
        expect_cq_empty(d);
        /* r2 comes back: exactly one WRITABLE (the DONTWAIT token's). */
        zlt_set_int(r2, ZLINK_ROUTER_WEIGHT, 7);
        expect_writable(d, t1, &u1, NULL);
        expect_cq_empty(d);
        ZT_EQ_INT(zlt_send_str(d, "to r2", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        zlt_router_expect(r2, "D", "to r2");
        zlt_router_expect_no_data(r1);

        /* The lone DEALER's token completes once it has a peer. */
        void *r3 = zlt_sock(ctx, ZLINK_ROUTER);
        char ep3[256];
        zlt_bind(r3, tr, ep3, sizeof ep3);
        zlt_connect(lone, ep3);
        expect_writable(lone, t0, &u0, NULL);
        expect_cq_empty(lone);
        zlt_close(d); zlt_close(lone); zlt_close(r1); zlt_close(r2); zlt_close(r3);
    }
}

/* A one-part text record received by router r from "D", returned. */
static const char *router_take(void *r, char *buf, size_t cap)
{
    zlink_routing_id_t from;
    zlink_recv_result_t rc = zlt_router_recv_str(r, &from, buf, cap, 0);
    if (rc != ZLINK_RECV_OK)
        ZT_FAIL("router receive: result %d, errno %d", (int)rc, zlink_errno());
    ZT_CHECK(zlt_rid_is(&from, "D"));
    return buf;
}

/* DEALER 20: DONTWAIT pins nothing: the token's target is the candidate
 * set, so whichever peer recovers is the edge, and the resubmit goes there.
 * Two ROUTER peers, DEALER SNDHWM 1 (inproc: exactly one record each). */
static void dealer_20_dontwait_pins_nothing(void)
{
    printf("# covers DEALER/20\n");
    void *ctx = zlt_ctx_new();
    void *r[2];
    char ep[2][256];
    for (int i = 0; i < 2; i++) {
        r[i] = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_set_rid(r[i], i == 0 ? "R1" : "R2");
        zlt_bind(r[i], "inproc", ep[i], sizeof ep[i]);
    }
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_set_u64(d, ZLINK_SNDHWM, 1);
    for (int i = 0; i < 2; i++) {
        zlt_connect(d, ep[i]);
        zlt_router_send_when_routable(r[i], "D", "sync");
        zlt_expect_str(d, "sync");
    }
    const char *names[2][3] = {{"a", "b", "c"}, {"d", "e", "f"}};
    for (int round = 0; round < 2; round++) {
        int drained = round == 0 ? 1 : 0; /* R2 first, then R1 */
        static int u;
        zlink_msg_t m;
        zlink_completion_id_t id = GARBAGE_ID, t;
        ZT_EQ_INT(zlt_send_str(d, names[round][0], ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlt_send_str(d, names[round][1], ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        zlt_msg_set(&m, names[round][2], 1);
        ZT_EQ_INT(zlink_send(d, &m, 1, ZLINK_DONTWAIT, &u, &id), ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
        ZT_CHECK(id != 0 && id != GARBAGE_ID);
        t = id;
        expect_cq_empty(d);
        char got[2][16];
        router_take(r[drained], got[drained], sizeof got[drained]);
        expect_writable(d, t, &u, NULL); /* either peer recovering will do */
        expect_cq_empty(d);
        ZT_EQ_INT(zlt_send_str(d, names[round][2], ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        zlt_router_expect(r[drained], "D", names[round][2]); /* re-selected */
        router_take(r[1 - drained], got[1 - drained], sizeof got[1 - drained]);
        /* a and b (d and e) went one to each peer. */
        ZT_CHECK(strcmp(got[0], got[1]) != 0);
        for (int i = 0; i < 2; i++)
            ZT_CHECK(strcmp(got[i], names[round][0]) == 0 ||
                     strcmp(got[i], names[round][1]) == 0);
        zlt_router_expect_no_data(r[0]);
        zlt_router_expect_no_data(r[1]);
    }
    zlt_finish(ctx, d, r[0], r[1]);
}

/* DEALER 30: the WRITABLE is held until read. */
static void dealer_30_writable_held_until_read(void)
{
    printf("# covers DEALER/30\n");
    say_poll_bits();
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_DEALER, 1);
        held_until_read(&p, NULL);
        path_close(&p);
    }
}

/* =================================================================== ROUTER */

/* ROUTER 23: the WRITABLE for a routing id comes when that peer drained to
 * the LWM (inproc: exactly at it), carries the id, and is held until read. */
static void router_23_writable_held_until_drained(void)
{
    printf("# covers ROUTER/23\n");
    say_poll_bits();
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_ROUTER, 1);
        held_until_read(&p, &p.rid);
        path_close(&p);

        if (!zlt_is_tcp(tr)) {
            path_open(&p, ctx, tr, ZLINK_ROUTER, 800);
            ZT_EQ_INT(path_fill(&p), 10);
            static int u;
            uint64_t t = path_refuse(&p, &u);
            for (int i = 0; i < 4; i++) {
                path_expect(&p);
                expect_cq_empty(p.tx);
            }
            path_expect(&p);
            expect_writable(p.tx, t, &u, &p.rid);
            expect_cq_empty(p.tx);
            path_drain(&p);
            path_close(&p);
        }
    }
}

/* =================================================================== STREAM */

/* A RAW STREAM with NOTIFY, SNDHWM 1 and a 64 KiB SNDBUF, bound on tcp;
 * returns the port. */
static void *stream_open(void *ctx, int *port)
{
    void *s = zlt_sock(ctx, ZLINK_STREAM);
    zlt_set_int(s, ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    zlt_set_int(s, ZLINK_STREAM_NOTIFY, 1);
    zlt_set_u64(s, ZLINK_SNDHWM, 1);
    zlt_set_int(s, ZLINK_SNDBUF, 65536);
    char ep[256];
    zlt_bind(s, "tcp", ep, sizeof ep);
    *port = atoi(ep + 16);
    return s;
}

/* A plain TCP client with a small receive buffer, connected to the STREAM;
 * *rid gets its routing id from the connect notice. */
static int raw_client(void *s, int port, zlink_routing_id_t *rid)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ZT_CHECK(fd >= 0);
    int small = 65536;
    ZT_EQ_INT(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
    struct timeval tv = {ZT_MS(2000) / 1000, (ZT_MS(2000) % 1000) * 1000};
    ZT_EQ_INT(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ZT_EQ_INT(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    zlink_msg_t part[1];
    size_t count = 0;
    const zlink_routing_id_t *view = NULL;
    ZT_EQ_INT(zlink_recv(s, &view, part, 1, &count, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(zlink_msg_size(&part[0]), 0); /* the connect notice */
    ZT_CHECK(view != NULL && view->size == 4);
    *rid = *view;
    zlink_multipart_close(part, count);
    return fd;
}

enum { ST_LEN = 65536 };

static unsigned char st_byte(uint32_t k)
{
    return (unsigned char)(k * 31u + 7u);
}

/* One STREAM send of ST_LEN bytes, all st_byte(k). */
static zlink_submit_result_t st_send(void *s, const zlink_routing_id_t *rid, uint32_t k,
                                     int flags, void *uctx, zlink_completion_id_t *id_out)
{
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, ST_LEN), ZLINK_CONFIG_OK);
    memset(zlink_msg_data(&m), st_byte(k), ST_LEN);
    zlink_completion_id_t id = GARBAGE_ID;
    zlink_submit_result_t r = zlink_send_rid(s, rid, &m, 1, (zlink_send_flags_t)flags, uctx, &id);
    int e = zlink_errno();
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    if (r == ZLINK_SUBMIT_BACKPRESSURED && (flags & ZLINK_DONTWAIT)) {
        ZT_EQ_INT(e, EAGAIN);
        ZT_CHECK(id != 0 && id != GARBAGE_ID);
    } else {
        ZT_EQ_U64(id, 0);
    }
    if (id_out != NULL)
        *id_out = id;
    g_err = e;
    return r;
}

/* Fills the STREAM -> client path (NONE, SNDTIMEO 100 ms); returns the
 * number of records admitted (numbered from *next). */
static uint32_t st_fill(void *s, const zlink_routing_id_t *rid, uint32_t *next)
{
    uint32_t n = 0;
    zlt_set_int(s, ZLINK_SNDTIMEO, ZT_MS(100));
    for (;;) {
        zlink_submit_result_t r = st_send(s, rid, *next, 0, NULL, NULL);
        if (r != ZLINK_SUBMIT_OK) {
            ZT_EQ_INT(r, ZLINK_SUBMIT_BACKPRESSURED);
            break;
        }
        (*next)++;
        if (++n > 2048)
            ZT_FAIL("the STREAM path took %u records without filling", n);
    }
    zlt_set_int(s, ZLINK_SNDTIMEO, ZT_MS(ZLT_TIMEO_MS));
    return n;
}

/* A DONTWAIT send refused for lack of room: its token. The refused record
 * would be number *next; if the kernel reopened the window and it was
 * admitted after all, it counts and the next one is tried. */
static uint64_t st_refuse(void *s, const zlink_routing_id_t *rid, uint32_t *next, void *uctx)
{
    for (uint32_t tries = 0;; tries++) {
        zlink_completion_id_t t;
        zlink_submit_result_t r = st_send(s, rid, *next, ZLINK_DONTWAIT, uctx, &t);
        if (r == ZLINK_SUBMIT_BACKPRESSURED)
            return t;
        if (r != ZLINK_SUBMIT_OK || tries > 4096)
            ZT_FAIL("a DONTWAIT STREAM send on a full path gave %d (errno %d)", (int)r, g_err);
        (*next)++;
    }
}

/* The client reads records [from, to) (ST_LEN bytes each, checked). */
static void raw_drain(int fd, uint32_t from, uint32_t to)
{
    static unsigned char buf[ST_LEN];
    uint64_t total = (uint64_t)(to - from) * ST_LEN, at = 0;
    while (at < total) {
        size_t want = total - at < sizeof buf ? (size_t)(total - at) : sizeof buf;
        ssize_t r = recv(fd, buf, want, 0);
        if (r <= 0)
            ZT_FAIL("raw client recv at byte %llu of %llu: %s", (unsigned long long)at,
                    (unsigned long long)total, r == 0 ? "EOF" : strerror(errno));
        for (ssize_t i = 0; i < r; i++) {
            uint32_t k = from + (uint32_t)((at + (uint64_t)i) / ST_LEN);
            if (buf[i] != st_byte(k))
                ZT_FAIL("byte %llu: %02x, want %02x (record %u)",
                        (unsigned long long)(at + (uint64_t)i), buf[i], st_byte(k), k);
        }
        at += (uint64_t)r;
    }
}

static void raw_expect(int fd, const char *text)
{
    char buf[64];
    size_t n = strlen(text), at = 0;
    while (at < n) {
        ssize_t r = recv(fd, buf + at, n - at, 0);
        if (r <= 0)
            ZT_FAIL("raw client waiting for \"%s\": %s", text, r == 0 ? "EOF" : strerror(errno));
        at += (size_t)r;
    }
    ZT_EQ_MEM(buf, text, n);
}

/* The client has nothing more to read right now. */
static void raw_expect_nothing(int fd)
{
    struct pollfd pf = {fd, POLLIN, 0};
    ZT_EQ_INT(poll(&pf, 1, 0), 0);
}

/* STREAM 11: DONTWAIT admitted -> id 0; refused -> a nonzero token and a
 * WRITABLE with the peer's routing id once the client drained. */
static void stream_11_dontwait_id_zero_or_token(void)
{
    printf("# covers STREAM/11\n");
    void *ctx = zlt_ctx_new();
    int port;
    void *s = stream_open(ctx, &port);
    zlink_routing_id_t rid;
    int fd = raw_client(s, port, &rid);
    zlink_msg_t m;
    zlink_completion_id_t id = GARBAGE_ID;
    zlt_msg_set(&m, "x", 1);
    ZT_EQ_INT(zlink_send_rid(s, &rid, &m, 1, ZLINK_DONTWAIT, &id, &id), ZLINK_SUBMIT_OK);
    ZT_EQ_U64(id, 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    raw_expect(fd, "x");
    uint32_t next = 0;
    st_fill(s, &rid, &next);
    static int u;
    uint64_t t = st_refuse(s, &rid, &next, &u);
    raw_drain(fd, 0, next);
    expect_writable(s, t, &u, &rid);
    expect_cq_empty(s);
    zlt_msg_set(&m, "tail", 4);
    ZT_EQ_INT(zlink_send_rid(s, &rid, &m, 1, ZLINK_DONTWAIT, NULL, &id), ZLINK_SUBMIT_OK);
    ZT_EQ_U64(id, 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    raw_expect(fd, "tail"); /* right after the admitted bytes: nothing replayed */
    raw_expect_nothing(fd);
    close(fd);
    zlt_finish(ctx, s);
}

/* STREAM 24: each WRITABLE carries the routing id it was registered for,
 * a snapshot that outlives the peer. Two clients, both full: client 1 is
 * removed with zlink_disconnect_rid right after its refusal (WRITABLE
 * TERMINAL/ENOENT with its id, although that peer is gone); client 2
 * drains (WRITABLE ADMITTED with its id). */
static void stream_24_peer_rid_snapshot(void)
{
    printf("# covers STREAM/24\n");
    void *ctx = zlt_ctx_new();
    int port;
    void *s = stream_open(ctx, &port);
    zlink_routing_id_t rid1, rid2;
    int fd1 = raw_client(s, port, &rid1);
    int fd2 = raw_client(s, port, &rid2);
    ZT_CHECK(!zlt_rid_eq(&rid1, &rid2));
    uint32_t n1 = 0, n2 = 0;
    static int u1, u2;
    st_fill(s, &rid2, &n2);
    uint64_t t2 = st_refuse(s, &rid2, &n2, &u2);
    st_fill(s, &rid1, &n1);
    uint64_t t1 = st_refuse(s, &rid1, &n1, &u1);
    ZT_CHECK(t1 > t2);
    ZT_EQ_INT(zlink_disconnect_rid(s, &rid1), ZLINK_CONNECT_OK);
    /* Client 2's record may come first if the kernel reopened its window. */
    want_t w[2] = {{t1, &u1, &rid1, ZLINK_SEND_TERMINAL, ENOENT, false},
                   {t2, &u2, &rid2, ZLINK_SEND_ADMITTED, 0, false}};
    expect_until(s, w, 2, t1);
    zlink_completion_id_t id;
    ZT_EQ_INT(st_send(s, &rid1, 0, ZLINK_DONTWAIT, &u1, &id), ZLINK_SUBMIT_NOT_CONNECTED);
    raw_drain(fd2, 0, n2);
    expect_until(s, w, 2, 0);
    expect_cq_empty(s);
    close(fd1);
    close(fd2);
    zlt_finish(ctx, s);
}

/* STREAM 25: the completion is level: the WRITABLE stays queued through
 * other activity until it is read; the read clears it. */
static void stream_25_completion_level_until_drained(void)
{
    printf("# covers STREAM/25\n");
    say_poll_bits();
    void *ctx = zlt_ctx_new();
    int port;
    void *s = stream_open(ctx, &port);
    zlink_routing_id_t rid;
    int fd = raw_client(s, port, &rid);
    uint32_t next = 0;
    st_fill(s, &rid, &next);
    static int u;
    uint64_t t = st_refuse(s, &rid, &next, &u);
    raw_drain(fd, 0, next);
    if (have_poller())
        ZT_CHECK(poll_bits(s, ZLINK_POLLCOMPLETION, ZLT_TIMEO_MS) & CQ_COMPLETION);
    /* Activity: the client sends, the STREAM receives; a bad receive. */
    ZT_EQ_INT(send(fd, "ping", 4, MSG_NOSIGNAL), 4);
    char got[8];
    size_t have = 0;
    while (have < 4) {
        zlink_msg_t part[1];
        size_t count = 0;
        const zlink_routing_id_t *view = NULL;
        ZT_EQ_INT(zlink_recv(s, &view, part, 1, &count, 0), ZLINK_RECV_OK);
        ZT_CHECK(zlt_rid_eq(view, &rid));
        size_t n = zlink_msg_size(&part[0]);
        ZT_CHECK(n > 0 && have + n <= 4);
        memcpy(got + have, zlink_msg_data(&part[0]), n);
        have += n;
        zlink_multipart_close(part, count);
    }
    ZT_EQ_MEM(got, "ping", 4);
    bad_struct_recv(s);
    if (have_poller())
        ZT_CHECK(poll_bits(s, ZLINK_POLLCOMPLETION, 0) & CQ_COMPLETION); /* still */
    expect_writable(s, t, &u, &rid);
    expect_cq_empty(s);
    if (have_poller())
        ZT_EQ_INT(poll_bits(s, ZLINK_POLLCOMPLETION, 0), 0); /* cleared by the read */
    close(fd);
    zlt_finish(ctx, s);
}

/* ============================================================ socket/README */

/* socket 29: DONTWAIT is one attempt: OK with id 0, or a token -> exactly
 * one WRITABLE -> the resubmit is admitted and delivered. NONE: OK id 0
 * within SNDTIMEO, or BACKPRESSURED id 0 at expiry, never a token. */
static void socket_29_dontwait_one_attempt_then_resubmit(void)
{
    printf("# covers socket/29\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        const int types[] = {ZLINK_PAIR, ZLINK_ROUTER};
        for (size_t k = 0; k < 2; k++) {
            path_t p;
            path_open(&p, ctx, tr, types[k], 1);
            static int u;
            zlink_completion_id_t id;
            /* DONTWAIT on an empty path: admitted, id 0. (tcp: the greeting's
             * bytes stay charged until the kernel took them, so this one
             * attempt may find no room yet: then it is the token -> one
             * WRITABLE -> the retry is admitted.) */
            zlink_submit_result_t r =
                send_rec(p.tx, p.to, p.sent, p.len, ZLINK_DONTWAIT, &u, &id);
            if (r == ZLINK_SUBMIT_BACKPRESSURED && p.tcp) {
                expect_writable(p.tx, id, &u, p.to);
                r = send_rec(p.tx, p.to, p.sent, p.len, ZLINK_DONTWAIT, &u, &id);
            }
            ZT_EQ_INT(r, ZLINK_SUBMIT_OK);
            p.sent++;
            path_expect(&p);
            ZT_EQ_INT(send_rec(p.tx, p.to, p.sent, p.len, 0, &u, &id), ZLINK_SUBMIT_OK);
            p.sent++;
            path_expect(&p);
            expect_cq_empty(p.tx);
            path_fill(&p);
            uint64_t t = path_refuse(&p, &u);
            path_none_expires(&p); /* NONE on the full path: id 0, no token */
            path_drain(&p);
            expect_writable(p.tx, t, &u, p.to);
            expect_cq_empty(p.tx); /* one WRITABLE: the NONE expiry made none */
            path_resubmit(&p);
            path_expect_nothing(&p);
            expect_cq_empty(p.tx);
            path_close(&p);
        }
    }
}

/* socket 30: the input is always consumed (a refused multipart: every part
 * empty, none delivered); no route -> NOT_CONNECTED id 0 and no token
 * (ROUTER MANDATORY, STREAM); MANDATORY 0 -> OK, dropped, id 0.
 * Reservation exhausted -> OOM: socket_33 and pair_09. */
static void socket_30_consumed_no_route_no_token(void)
{
    printf("# covers socket/30\n");
    {
        /* A refused multipart (inproc: refused for sure). */
        void *ctx = zlt_ctx_new();
        path_t p;
        path_open(&p, ctx, "inproc", ZLINK_PAIR, 1);
        path_fill(&p);
        zlink_msg_t parts[3];
        ZT_EQ_INT(zlink_msg_init(&parts[0]), ZLINK_CONFIG_OK);
        zlt_msg_set(&parts[1], "middle", 6);
        ZT_EQ_INT(zlink_msg_init_size(&parts[2], 100000), ZLINK_CONFIG_OK);
        memset(zlink_msg_data(&parts[2]), 'z', 100000);
        static int u;
        zlink_completion_id_t t = GARBAGE_ID;
        ZT_EQ_INT(zlink_send(p.tx, parts, 3, ZLINK_DONTWAIT, &u, &t), ZLINK_SUBMIT_BACKPRESSURED);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_CHECK(t != 0 && t != GARBAGE_ID);
        for (int i = 0; i < 3; i++) {
            ZT_EQ_INT(zlink_msg_size(&parts[i]), 0); /* every part consumed */
            ZT_EQ_INT(zlink_msg_close(&parts[i]), ZLINK_CONFIG_OK);
        }
        path_drain(&p);
        expect_writable(p.tx, t, &u, NULL);
        path_resubmit(&p); /* next is the resubmit: no part of the refused record came */
        path_expect_nothing(&p);
        path_close(&p);
        zlt_ctx_term(ctx);
    }
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        static int u;
        /* ROUTER, no route. */
        void *r = zlt_sock(ctx, ZLINK_ROUTER);
        char ep[256];
        zlt_bind(r, tr, ep, sizeof ep);
        zlink_routing_id_t nobody;
        zlt_rid_set(&nobody, "nobody");
        zlink_completion_id_t id;
        ZT_EQ_INT(send_rec(r, &nobody, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u, &id),
                  ZLINK_SUBMIT_NOT_CONNECTED);
        ZT_EQ_INT(g_err, EHOSTUNREACH);
        ZT_EQ_INT(send_rec(r, &nobody, REFUSED_SEQ, 16, 0, &u, &id), ZLINK_SUBMIT_NOT_CONNECTED);
        ZT_EQ_INT(g_err, EHOSTUNREACH);
        expect_cq_empty(r);
        zlt_set_int(r, ZLINK_ROUTER_MANDATORY, 0);
        ZT_EQ_INT(send_rec(r, &nobody, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u, &id),
                  ZLINK_SUBMIT_OK); /* dropped */
        expect_cq_empty(r);
        zlt_close(r);
    }
    /* STREAM, no such peer. */
    void *ctx = zlt_ctx_new();
    int port;
    void *s = stream_open(ctx, &port);
    zlink_routing_id_t rid = {4, {1, 2, 3, 4}};
    zlink_completion_id_t id;
    ZT_EQ_INT(st_send(s, &rid, 0, ZLINK_DONTWAIT, &id, &id), ZLINK_SUBMIT_NOT_CONNECTED);
    ZT_EQ_INT(g_err, EHOSTUNREACH);
    expect_cq_empty(s);
    zlt_finish(ctx, s);
}

/* DEALERs "D1".."D<n>" (RCVHWM 1, 64 KiB socket buffers) connected to the
 * ROUTER r bound at ep, each greeted (so r has the routes). */
static void dealers_to(void *ctx, void *r, const char *ep, void **d, int n)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "D%d", i + 1);
        d[i] = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d[i], name);
        zlt_set_u64(d[i], ZLINK_RCVHWM, 1);
        zlt_set_int(d[i], ZLINK_SNDBUF, 65536);
        zlt_set_int(d[i], ZLINK_RCVBUF, 65536);
        zlt_connect(d[i], ep);
        ZT_EQ_INT(zlt_send_str(d[i], "hello", 0), ZLINK_SUBMIT_OK);
        zlt_router_expect(r, name, "hello");
    }
}

/* A path view of ROUTER r sending to its DEALER peer d named name. */
static void router_path(path_t *p, void *ctx, void *r, void *d, const char *name, bool tcp)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->tx = r;
    p->rx = d;
    p->tx_type = ZLINK_ROUTER;
    p->tcp = tcp;
    p->len = tcp ? 65536 : 16;
    zlt_rid_set(&p->rid, name);
    p->to = &p->rid;
}

/* r (SNDHWM 1) sends one record to name (admitted), then a refused one:
 * returns the token. */
static uint64_t router_fill_refuse(void *r, const char *name, void *uctx, bool fill)
{
    zlink_routing_id_t rid;
    zlt_rid_set(&rid, name);
    zlink_completion_id_t id;
    if (fill)
        ZT_EQ_INT(send_rec(r, &rid, 0, 16, ZLINK_DONTWAIT, NULL, &id), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(send_rec(r, &rid, REFUSED_SEQ, 16, ZLINK_DONTWAIT, uctx, &id),
              ZLINK_SUBMIT_BACKPRESSURED);
    return id;
}

/* DEALER d receives the numbered record seq. */
static void dealer_expect_seq(void *d, uint32_t seq)
{
    zlink_msg_t parts[2];
    size_t count = 0;
    zlink_recv_result_t r = zlink_recv(d, NULL, parts, 2, &count, 0);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("waiting for record %u: result %d, errno %d", seq, (int)r, zlink_errno());
    ZT_EQ_INT(count, 1);
    uint32_t got = get_be32(zlink_msg_data(&parts[0]));
    if (got != seq)
        ZT_FAIL("record %#x arrived, expected %u", got, seq);
    zlink_multipart_close(parts, count);
}

/* socket 31: no payload retention; a token per target (routing id); a
 * transient disconnect keeps the token; no replay. */
static void socket_31_token_per_target_transient_disconnect_keeps(void)
{
    printf("# covers socket/31\n");
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_u64(r, ZLINK_SNDHWM, 1);
    char ep[256];
    zlt_bind(r, "inproc", ep, sizeof ep);
    void *d[2];
    dealers_to(ctx, r, ep, d, 2);
    static int u1, u2;
    uint64_t t1 = router_fill_refuse(r, "D1", &u1, true);
    uint64_t t2 = router_fill_refuse(r, "D2", &u2, true);
    zlink_routing_id_t rid1, rid2;
    zlt_rid_set(&rid1, "D1");
    zlt_rid_set(&rid2, "D2");
    /* D2 drains: D2's token only. */
    dealer_expect_seq(d[1], 0);
    expect_writable(r, t2, &u2, &rid2);
    expect_cq_empty(r);
    /* D1 goes away (its record unread) and comes back with the same id. */
    zlt_close(d[0]);
    expect_cq_empty(r); /* not ended */
    d[0] = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d[0], "D1");
    zlt_connect(d[0], ep);
    expect_writable(r, t1, &u1, &rid1); /* the route is back: ADMITTED */
    expect_cq_empty(r);
    ZT_EQ_INT(send_rec(r, &rid1, 1, 16, ZLINK_DONTWAIT, NULL, NULL), ZLINK_SUBMIT_OK);
    dealer_expect_seq(d[0], 1); /* neither the refused nor the old record */
    zlt_expect_no_data(d[0]);
    zlt_expect_no_data(d[1]);
    zlt_finish(ctx, d[0], d[1], r);
}

/* socket 32: a token ends only as WRITABLE ADMITTED, WRITABLE TERMINAL/
 * ENOENT on an explicit removal of its target (and only that target's
 * tokens), or with close/term (socket_47). Weight 0: dealer_11. */
static void socket_32_token_ends_only_by_writable_removal_close(void)
{
    printf("# covers socket/32\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        void *r = zlt_sock(ctx, ZLINK_ROUTER);
        zlt_set_u64(r, ZLINK_SNDHWM, 1);
        zlt_set_int(r, ZLINK_SNDBUF, 65536);
        char ep[256];
        zlt_bind(r, tr, ep, sizeof ep);
        void *d[2];
        dealers_to(ctx, r, ep, d, 2);
        static int u1, u2, u3;
        zlink_routing_id_t rid1, rid2, nobody;
        zlt_rid_set(&rid1, "D1");
        zlt_rid_set(&rid2, "D2");
        zlt_rid_set(&nobody, "nobody");
        uint64_t t1, t2, t3;
        if (zlt_is_tcp(tr)) {
            /* tcp: D2's path filled first; then D1's, and D1 is removed
             * right after its refusal. D2's tokens may become due at any
             * time (the kernel can reopen its window), D1's record must be
             * the TERMINAL one. */
            path_t p1, p2;
            router_path(&p1, ctx, r, d[0], "D1", true);
            router_path(&p2, ctx, r, d[1], "D2", true);
            path_fill(&p2);
            t2 = path_refuse(&p2, &u2);
            t3 = path_refuse(&p2, &u3);
            ZT_EQ_INT(zlink_disconnect_rid(r, &nobody), ZLINK_CONNECT_NOT_FOUND);
            ZT_EQ_INT(zlink_errno(), ENOENT);
            path_fill(&p1);
            t1 = path_refuse(&p1, &u1);
            ZT_EQ_INT(zlink_disconnect_rid(r, &rid1), ZLINK_CONNECT_OK);
            want_t w[3] = {{t1, &u1, &rid1, ZLINK_SEND_TERMINAL, ENOENT, false},
                           {t2, &u2, &rid2, ZLINK_SEND_ADMITTED, 0, false},
                           {t3, &u3, &rid2, ZLINK_SEND_ADMITTED, 0, false}};
            expect_until(r, w, 3, t1);
            path_drain(&p2);
            expect_until(r, w, 3, 0);
        } else {
            t1 = router_fill_refuse(r, "D1", &u1, true);
            t2 = router_fill_refuse(r, "D2", &u2, true);
            t3 = router_fill_refuse(r, "D2", &u3, false);
            expect_cq_empty(r);
            ZT_EQ_INT(zlink_disconnect_rid(r, &nobody), ZLINK_CONNECT_NOT_FOUND);
            ZT_EQ_INT(zlink_errno(), ENOENT);
            expect_cq_empty(r);
            ZT_EQ_INT(zlink_disconnect_rid(r, &rid1), ZLINK_CONNECT_OK);
            expect_writable_res(r, t1, &u1, &rid1, ZLINK_SEND_TERMINAL, ENOENT);
            expect_cq_empty(r);
            dealer_expect_seq(d[1], 0);
            expect_writable_pair(r, t2, &u2, t3, &u3, &rid2);
        }
        expect_cq_empty(r);
        /* The removed target's token ended once: nothing more after it. */
        ZT_EQ_INT(zlink_disconnect_rid(r, &rid2), ZLINK_CONNECT_OK);
        expect_cq_empty(r); /* no tokens left on D2: nothing to end */
        zlt_close(d[0]); zlt_close(d[1]); zlt_close(r);
    }
}

/* socket 33: 65,536 completion slots: a refused SEND -> OUT_OF_MEMORY with
 * id 0; one receive frees one slot (DEALER; PAIR: pair_09). REQUEST -> BP:
 * test_request.c:readme_33_request_slots_backpressured. */
static void socket_33_slot_limit_oom_one_read_frees(void)
{
    printf("# covers socket/33 (SEND)\n");
    slot_limit_case(ZLINK_DEALER);
}

/* socket 39: the id output is zeroed first, whatever the result; a refused
 * DONTWAIT send without an id output still completes (one WRITABLE with
 * its user_context and a nonzero id). */
static void socket_39_id_out_zeroed_completes_without_id_out(void)
{
    printf("# covers socket/39\n");
    void *ctx = zlt_ctx_new();
    path_t p;
    path_open(&p, ctx, "inproc", ZLINK_PAIR, 1);
    static int u;
    zlink_msg_t m;
    zlink_completion_id_t id;
    /* IA: n = 0, unknown flags. */
    ZT_EQ_INT(zlink_msg_init(&m), ZLINK_CONFIG_OK);
    id = GARBAGE_ID;
    ZT_EQ_INT(zlink_send(p.tx, &m, 0, ZLINK_DONTWAIT, &u, &id), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_U64(id, 0);
    id = GARBAGE_ID;
    ZT_EQ_INT(zlink_send(p.tx, &m, 1, (zlink_send_flags_t)4, &u, &id),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_U64(id, 0);
    id = GARBAGE_ID;
    ZT_EQ_INT(zlink_send(p.tx, NULL, 1, ZLINK_DONTWAIT, &u, &id), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_U64(id, 0);
    /* IH and NS. */
    id = GARBAGE_ID;
    ZT_EQ_INT(zlink_send(NULL, &m, 1, ZLINK_DONTWAIT, &u, &id), ZLINK_SUBMIT_INVALID_HANDLE);
    ZT_EQ_U64(id, 0);
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    id = GARBAGE_ID;
    ZT_EQ_INT(zlink_send(r, &m, 1, ZLINK_DONTWAIT, &u, &id), ZLINK_SUBMIT_NOT_SUPPORTED);
    ZT_EQ_U64(id, 0);
    zlt_close(r);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    /* OK (DONTWAIT and NONE), NONE expiry: send_rec checks id 0. */
    ZT_EQ_INT(send_rec(p.tx, NULL, p.sent, p.len, ZLINK_DONTWAIT, &u, &id), ZLINK_SUBMIT_OK);
    p.sent++;
    path_drain(&p);
    /* A refusal with no id output: the token exists all the same. */
    path_fill(&p);
    rec_init(&m, REFUSED_SEQ, p.len);
    ZT_EQ_INT(zlink_send(p.tx, &m, 1, ZLINK_DONTWAIT, &u, NULL), ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    uint64_t later = path_refuse(&p, NULL); /* with an id output, for comparison */
    path_drain(&p);
    zlink_completion_t c;
    cq_pop(p.tx, &c, "the WRITABLE of a send without id output");
    ZT_EQ_INT(c.kind, ZLINK_COMPLETION_WRITABLE);
    ZT_EQ_INT(c.send_result, ZLINK_SEND_ADMITTED);
    uint64_t hidden;
    if (c.user_context == &u) {
        hidden = c.completion_id;
        ZT_CHECK(hidden != 0 && hidden < later);
        zlink_completion_close(&c);
        expect_writable(p.tx, later, NULL, NULL);
    } else {
        check_writable(&c, later, NULL, NULL, ZLINK_SEND_ADMITTED, 0);
        zlink_completion_close(&c);
        cq_pop(p.tx, &c, "the WRITABLE of a send without id output");
        ZT_CHECK(c.user_context == &u);
        hidden = c.completion_id;
        ZT_CHECK(hidden != 0 && hidden < later);
        zlink_completion_close(&c);
    }
    expect_cq_empty(p.tx);
    path_close(&p);
    /* TERMINATED after close. */
    ZT_EQ_INT(zlink_msg_init_size(&m, 4), ZLINK_CONFIG_OK);
    id = GARBAGE_ID;
    ZT_EQ_INT(zlink_send(p.tx, &m, 1, ZLINK_DONTWAIT, &u, &id), ZLINK_SUBMIT_TERMINATED);
    ZT_EQ_U64(id, 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    zlt_ctx_term(ctx);
}

/* socket 44: COMPLETION is level: WRITABLE records stay queued through any
 * unrelated call until read, in any number; reading the last clears. */
static void socket_44_completion_level_last_read_clears(void)
{
    printf("# covers socket/44\n");
    say_poll_bits();
    void *ctx = zlt_ctx_new();
    path_t p;
    path_open(&p, ctx, "inproc", ZLINK_PAIR, 1);
    path_fill(&p);
    static int u[4];
    uint64_t t[4];
    for (int i = 0; i < 4; i++)
        t[i] = path_refuse(&p, &u[i]);
    path_drain(&p);
    /* Read two (one edge made all four due), then other calls. */
    zlink_completion_t c;
    bool seen[4] = {false, false, false, false};
    for (int n = 0; n < 4; n++) {
        if (n == 2) {
            bad_struct_recv(p.tx);
            path_reverse_traffic(&p);
            zlt_expect_no_data(p.tx);
            ZT_EQ_INT(zlt_get_int(p.tx, ZLINK_SNDTIMEO), ZT_MS(ZLT_TIMEO_MS));
        }
        expect_poll(p.tx, CQ_OUT | CQ_COMPLETION); /* level: records remain */
        cq_pop(p.tx, &c, "one of four WRITABLEs");
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (c.completion_id == t[i] && !seen[i])
                k = i;
        ZT_CHECK(k >= 0);
        seen[k] = true;
        check_writable(&c, t[k], &u[k], NULL, ZLINK_SEND_ADMITTED, 0);
        zlink_completion_close(&c);
    }
    expect_poll(p.tx, CQ_OUT); /* the last read cleared COMPLETION (OUT: credit) */
    expect_cq_empty(p.tx); /* the last read cleared it */
    expect_cq_empty(p.tx);
    path_close(&p);
    zlt_ctx_term(ctx);
}

/* socket 44, written to the contract: once its target recovered, a
 * WRITABLE is owed and stays until read, whatever happens to the target
 * afterwards: (a) the application refills the PAIR before reading the
 * completion; (b) a ROUTER's peer drains, then goes away. */
static void socket_44_due_writable_not_revoked(void)
{
    printf("# covers socket/44 (a due WRITABLE is not revoked)\n");
    void *ctx = zlt_ctx_new();
    path_t p;
    path_open(&p, ctx, "inproc", ZLINK_PAIR, 1);
    path_fill(&p);
    static int u1, u2;
    uint64_t t = path_refuse(&p, &u1);
    path_drain(&p); /* the edge: the token is due */
    ZT_EQ_INT(send_rec(p.tx, NULL, p.sent, p.len, ZLINK_DONTWAIT, NULL, NULL), ZLINK_SUBMIT_OK);
    p.sent++; /* full again, by the application's own send */
    zlink_completion_t c;
    cq_init(&c);
    zlink_recv_result_t r = zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("PAIR: the WRITABLE of token %llu, due at the drain, was not published "
                "(result %d, errno %d): a refill before the read revoked it",
                (unsigned long long)t, (int)r, zlink_errno());
    check_writable(&c, t, &u1, NULL, ZLINK_SEND_ADMITTED, 0);
    zlink_completion_close(&c);
    path_drain(&p);
    path_close(&p);

    path_open(&p, ctx, "inproc", ZLINK_ROUTER, 1);
    path_fill(&p);
    t = path_refuse(&p, &u2);
    path_drain(&p);   /* due */
    zlt_close(p.rx);  /* the peer goes away before the record is read */
    cq_init(&c);
    r = zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE);
    if (r != ZLINK_RECV_OK)
        ZT_FAIL("ROUTER: the WRITABLE of token %llu, due at the drain, was not published "
                "(result %d, errno %d): the peer leaving before the read revoked it",
                (unsigned long long)t, (int)r, zlink_errno());
    check_writable(&c, t, &u2, &p.rid, ZLINK_SEND_ADMITTED, 0);
    zlink_completion_close(&c);
    zlt_close(p.tx);
    zlt_ctx_term(ctx);
}

/* socket 45 (and the argument rules of zlink_completion_recv/close): a
 * wrong struct_size or a non-empty output -> INVALID_STATE/EINVAL with
 * nothing dequeued and the output untouched; unknown flags likewise; NULL
 * output -> INVALID_HANDLE/EFAULT; bad handles; PUB/SUB -> NOT_SUPPORTED.
 * zlink_completion_close: NULL-safe, idempotent, keeps struct_size, does
 * nothing with a wrong struct_size. */
static void socket_45_bad_output_nothing_dequeued_close_idempotent(void)
{
    printf("# covers socket/45\n");
    void *ctx = zlt_ctx_new();
    void *a = zlt_sock(ctx, ZLINK_PAIR);
    char ep[256];
    zlt_bind(a, "inproc", ep, sizeof ep);
    static int u1, u2;
    zlink_completion_id_t t1, t2;
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u1, &t1),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(send_rec(a, NULL, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u2, &t2),
              ZLINK_SUBMIT_BACKPRESSURED);
    void *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_connect(b, ep); /* both due */

    /* A buffer larger than the struct, for struct_size values above it. */
    union {
        zlink_completion_t c;
        unsigned char bytes[sizeof(zlink_completion_t) + 64];
    } big;
    static int other;
    static zlink_msg_t somewhere;
    for (int variant = 0; variant < 14; variant++) {
        for (int round = 0; round < 2; round++) { /* before and after one pop */
            memset(&big, 0, sizeof big);
            big.c.struct_size = sizeof big.c;
            zlink_recv_flags_t flags = ZLINK_RECV_FLAGS_DONTWAIT;
            switch (variant) {
            case 0: big.c.struct_size = 0; break;
            case 1: big.c.struct_size = sizeof big.c - 1; break;
            case 2: big.c.struct_size = sizeof big.c + 8; break;
            case 3: big.c.struct_size = 4; break;
            case 4: big.c.kind = ZLINK_COMPLETION_WRITABLE; break;
            case 5: big.c.completion_id = t1; break;
            case 6: big.c.user_context = &other; break;
            case 7: big.c.peer_rid.size = 1; break;
            case 8: big.c.peer_rid.data[254] = 1; break;
            case 9: big.c.send_result = ZLINK_SEND_TERMINAL; break;
            case 10: big.c.send_terminal_errno = ENOENT; break;
            case 11: big.c.request_result = ZLINK_REQUEST_TIMED_OUT; break;
            case 12: big.c.reply_parts = &somewhere; big.c.reply_part_count = 1; break;
            default: flags = (zlink_recv_flags_t)2; break; /* unknown flag bit */
            }
            unsigned char before[sizeof big];
            memcpy(before, &big, sizeof big);
            ZT_EQ_INT(zlink_completion_recv(a, &big.c, flags), ZLINK_RECV_INVALID_STATE);
            ZT_EQ_INT(zlink_errno(), EINVAL);
            ZT_EQ_MEM(&big, before, sizeof big); /* output untouched */
            if (variant == 13) /* NONE with a bad flag bit too */
                ZT_EQ_INT(zlink_completion_recv(a, &big.c, (zlink_recv_flags_t)3),
                          ZLINK_RECV_INVALID_STATE);
            if (variant == 0 && round == 0) {
                /* Let the edge be processed: pop t1 properly, t2 stays
                 * queued as a record for every later variant. */
                expect_writable(a, t1, &u1, NULL);
            }
        }
    }
    ZT_EQ_INT(zlink_completion_recv(a, NULL, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    zlink_completion_t c;
    cq_init(&c);
    ZT_EQ_INT(zlink_completion_recv(NULL, &c, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_completion_recv(ctx, &c, ZLINK_RECV_FLAGS_DONTWAIT),
              ZLINK_RECV_INVALID_HANDLE); /* not a socket */
    ZT_EQ_INT(zlink_errno(), EFAULT);
    const int nosupport[] = {ZLINK_PUB, ZLINK_SUB};
    for (int i = 0; i < 2; i++) {
        void *s = zlt_sock(ctx, nosupport[i]);
        cq_init(&c);
        ZT_EQ_INT(zlink_completion_recv(s, &c, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        ZT_EQ_INT(zlink_completion_recv(s, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NOT_SUPPORTED);
        zlt_close(s);
    }
    /* Every failure above left t2's record queued: it comes out once. */
    cq_pop(a, &c, "the record every failed call left queued");
    check_writable(&c, t2, &u2, NULL, ZLINK_SEND_ADMITTED, 0);
    expect_cq_empty(a);

    /* zlink_completion_close. */
    zlink_completion_close(NULL);
    zlink_completion_close(&c);
    zlink_completion_t z;
    cq_init(&z);
    ZT_EQ_MEM(&c, &z, sizeof c); /* zeroed, struct_size kept */
    zlink_completion_close(&c);
    ZT_EQ_MEM(&c, &z, sizeof c); /* idempotent */
    zlink_completion_t w;
    memset(&w, 0x5A, sizeof w); /* garbage with a wrong struct_size */
    w.struct_size = 0;
    w.reply_parts = NULL;
    unsigned char before[sizeof w];
    memcpy(before, &w, sizeof w);
    zlink_completion_close(&w);
    ZT_EQ_MEM(&w, before, sizeof w); /* untouched */
    w.struct_size = sizeof w + 1;
    memcpy(before, &w, sizeof w);
    zlink_completion_close(&w);
    ZT_EQ_MEM(&w, before, sizeof w);
    zlt_finish(ctx, b, a);
}

struct blocked_cq {
    void *s;
    _Atomic long tid;
    zlink_recv_result_t rc;
    int err;
    zlink_completion_t c;
    int64_t elapsed;
};

static void *blocked_cq_main(void *arg)
{
    struct blocked_cq *b = arg;
    atomic_store(&b->tid, zt_gettid());
    cq_init(&b->c);
    int64_t t0 = zt_now_ms();
    b->rc = zlink_completion_recv(b->s, &b->c, ZLINK_RECV_FLAGS_NONE);
    b->err = zlink_errno();
    b->elapsed = zt_now_ms() - t0;
    return NULL;
}

/* Starts a thread blocked in a NONE zlink_completion_recv on s and waits
 * until it sleeps (as far as /proc can tell). */
static void blocked_cq_start(struct blocked_cq *b, pthread_t *th, void *s)
{
    memset(b, 0, sizeof *b);
    b->s = s;
    atomic_store(&b->tid, 0);
    ZT_EQ_INT(pthread_create(th, NULL, blocked_cq_main, b), 0);
    while (atomic_load(&b->tid) == 0)
        sched_yield();
    zt_wait_blocked(atomic_load(&b->tid));
}

/* socket 47: close and term retire tokens and discard records: afterwards
 * the completion receive fails (ESHUTDOWN after close, ETERM after the
 * context shut down, also waking a blocked receive), no record comes out,
 * a refused send makes no token; ASan's leak check sees them freed. */
static void socket_47_close_and_term_discard(void)
{
    printf("# covers socket/47\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        /* close */
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 1);
        path_fill(&p);
        static int u[4];
        path_refuse(&p, &u[0]);
        path_refuse(&p, &u[1]);
        path_drain(&p);
        zlink_completion_t c;
        cq_pop(p.tx, &c, "the first WRITABLE"); /* the other stays queued */
        zlink_completion_close(&c);
        path_refill_refuse(&p, &u[2]); /* live */
        zlt_close(p.tx);
        cq_init(&c);
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_INVALID_STATE);
        ZT_EQ_INT(zlink_errno(), ESHUTDOWN);
        zlink_completion_id_t id;
        ZT_EQ_INT(send_rec(p.tx, NULL, REFUSED_SEQ, p.len, ZLINK_DONTWAIT, &u[3], &id),
                  ZLINK_SUBMIT_TERMINATED);
        ZT_EQ_U64(id, 0);
        /* The peer drains what it may still have: no record appears. */
        for (;;) {
            uint32_t seq;
            if (path_take(&p, ZLINK_DONTWAIT, &seq) != ZLINK_RECV_OK)
                break;
        }
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_INVALID_STATE);
        zlt_close(p.rx);

        /* term (a context of its own): a queued record, a live token, and a
         * receive blocked in another thread; ctx_shutdown ends all three. */
        void *tctx = zlt_ctx_new();
        path_open(&p, tctx, tr, ZLINK_PAIR, 1);
        path_fill(&p);
        path_refuse(&p, &u[0]);
        path_refuse(&p, &u[1]);
        path_drain(&p);
        cq_pop(p.tx, &c, "the first WRITABLE");
        zlink_completion_close(&c);
        path_refill_refuse(&p, &u[2]);
        void *other = zlt_sock(tctx, ZLINK_PAIR); /* a receive blocked on it */
        zlt_set_int(other, ZLINK_RCVTIMEO, -1);
        struct blocked_cq b;
        pthread_t th;
        blocked_cq_start(&b, &th, other);
        ZT_EQ_INT(zlink_ctx_shutdown(tctx), ZLINK_CLOSE_OK);
        ZT_EQ_INT(pthread_join(th, NULL), 0);
        ZT_EQ_INT(b.rc, ZLINK_RECV_TERMINATED);
        ZT_EQ_INT(b.err, ETERM);
        cq_init(&c);
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_DONTWAIT),
                  ZLINK_RECV_TERMINATED); /* the queued record is not handed out */
        ZT_EQ_INT(zlink_errno(), ETERM);
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_TERMINATED);
        zlink_completion_t z;
        cq_init(&z);
        ZT_EQ_MEM(&c, &z, sizeof c);
        ZT_EQ_INT(send_rec(p.tx, NULL, REFUSED_SEQ, p.len, ZLINK_DONTWAIT, &u[3], &id),
                  ZLINK_SUBMIT_TERMINATED);
        ZT_EQ_INT(g_err, ETERM);
        ZT_EQ_U64(id, 0);
        zlt_close(other);
        path_close(&p);
        zlt_ctx_term(tctx);
    }
}

/* socket 48: a NONE completion receive honours RCVTIMEO (0: at once; 100
 * ms: gives up after it); a WRITABLE made due by another thread's receive
 * wakes a thread blocked in it, long before its timeout; failed calls keep
 * the queue. */
static void socket_48_none_recv_honours_rcvtimeo(void)
{
    printf("# covers socket/48\n");
    ZLT_EACH_TRANSPORT(tr, ctx)
    {
        path_t p;
        path_open(&p, ctx, tr, ZLINK_PAIR, 1);
        zlink_completion_t c;
        zlt_set_int(p.tx, ZLINK_RCVTIMEO, 0);
        cq_init(&c);
        int64_t t0 = zt_now_ms();
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NO_DATA);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        ZT_CHECK(zt_now_ms() - t0 < ZT_MS(1000));
        zlt_set_int(p.tx, ZLINK_RCVTIMEO, 100);
        t0 = zt_now_ms();
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_NO_DATA);
        ZT_EQ_INT(zlink_errno(), EAGAIN);
        int64_t waited = zt_now_ms() - t0;
        if (waited < 95 || waited > 100 + ZT_MS(1000))
            ZT_FAIL("RCVTIMEO 100 waited %lld ms", (long long)waited);

        /* The cross-thread wake. */
        enum { LONG_MS = 30000 };
        zlt_set_int(p.tx, ZLINK_RCVTIMEO, ZT_MS(LONG_MS));
        path_fill(&p);
        static int u;
        uint64_t t = path_refuse(&p, &u);
        struct blocked_cq b;
        pthread_t th;
        blocked_cq_start(&b, &th, p.tx);
        path_drain(&p); /* this thread's receives make the WRITABLE due */
        ZT_EQ_INT(pthread_join(th, NULL), 0);
        if (b.rc != ZLINK_RECV_OK)
            ZT_FAIL("the blocked completion receive gave %d (errno %d) after %lld ms",
                    (int)b.rc, b.err, (long long)b.elapsed);
        check_writable(&b.c, t, &u, NULL, ZLINK_SEND_ADMITTED, 0);
        if (b.elapsed > ZT_MS(LONG_MS) / 4)
            ZT_FAIL("the blocked completion receive took %lld ms (RCVTIMEO %d)",
                    (long long)b.elapsed, ZT_MS(LONG_MS));
        printf("# woken after %lld ms\n", (long long)b.elapsed);
        zlt_set_int(p.tx, ZLINK_RCVTIMEO, ZT_MS(ZLT_TIMEO_MS));

        /* Errors keep the queue. */
        path_fill(&p);
        t = path_refuse(&p, &u);
        path_drain(&p);
        bad_struct_recv(p.tx);
        cq_init(&c);
        c.completion_id = 1;
        ZT_EQ_INT(zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE),
                  ZLINK_RECV_INVALID_STATE);
        expect_writable(p.tx, t, &u, NULL);
        expect_cq_empty(p.tx);
        path_close(&p);
    }
}

/* socket 49: ids are unique and increase per socket; each comes out once,
 * in append order (the order the targets recovered), not submit order. */
static void socket_49_interleaved_ids_once_append_order(void)
{
    printf("# covers socket/49\n");
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_u64(r, ZLINK_SNDHWM, 1);
    char ep[256];
    zlt_bind(r, "inproc", ep, sizeof ep);
    void *d[3];
    dealers_to(ctx, r, ep, d, 3);
    static int u[4];
    uint64_t t[4];
    t[0] = router_fill_refuse(r, "D1", &u[0], true);
    t[1] = router_fill_refuse(r, "D2", &u[1], true);
    t[2] = router_fill_refuse(r, "D3", &u[2], true);
    t[3] = router_fill_refuse(r, "D1", &u[3], false);
    for (int i = 1; i < 4; i++)
        ZT_CHECK(t[i] > t[i - 1]);
    zlink_routing_id_t rid[3];
    zlt_rid_set(&rid[0], "D1");
    zlt_rid_set(&rid[1], "D2");
    zlt_rid_set(&rid[2], "D3");
    expect_cq_empty(r);
    dealer_expect_seq(d[2], 0);
    expect_writable(r, t[2], &u[2], &rid[2]);
    expect_cq_empty(r);
    dealer_expect_seq(d[1], 0);
    expect_writable(r, t[1], &u[1], &rid[1]);
    expect_cq_empty(r);
    dealer_expect_seq(d[0], 0);
    expect_writable_pair(r, t[0], &u[0], t[3], &u[3], &rid[0]);
    expect_cq_empty(r);
    /* A later token gets a larger id still. */
    uint64_t t5 = router_fill_refuse(r, "D2", &u[0], true);
    ZT_CHECK(t5 > t[3]);
    dealer_expect_seq(d[1], 0);
    expect_writable(r, t5, &u[0], &rid[1]);
    zlt_finish(ctx, d[0], d[1], d[2], r);
}

/* socket 50: peer_rid: the target's routing id (all 255 bytes of a
 * 255-byte id, for ADMITTED and TERMINAL) on ROUTER; empty on PAIR and
 * DEALER. STREAM's 4-byte ids: stream_24. */
static void socket_50_peer_rid_rules(void)
{
    printf("# covers socket/50\n");
    void *ctx = zlt_ctx_new();
    static int u;
    const int empty_types[] = {ZLINK_PAIR, ZLINK_DEALER};
    for (int i = 0; i < 2; i++) {
        path_t p;
        path_open(&p, ctx, "inproc", empty_types[i], 1);
        path_fill(&p);
        uint64_t t = path_refuse(&p, &u);
        path_drain(&p);
        expect_writable(p.tx, t, &u, NULL); /* checks every peer_rid byte is 0 */
        path_close(&p);
    }
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_u64(r, ZLINK_SNDHWM, 1);
    char ep[256];
    zlt_bind(r, "inproc", ep, sizeof ep);
    zlink_routing_id_t longid;
    memset(&longid, 0, sizeof longid);
    longid.size = 255;
    for (int i = 0; i < 255; i++)
        longid.data[i] = (uint8_t)(255 - i);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    ZT_EQ_INT(zlink_set_routing_id(d, longid.data, 255), ZLINK_CONFIG_OK);
    zlt_connect(d, ep);
    ZT_EQ_INT(zlt_send_str(d, "hello", 0), ZLINK_SUBMIT_OK);
    zlink_routing_id_t from;
    char buf[16];
    ZT_EQ_INT(zlt_router_recv_str(r, &from, buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_CHECK(zlt_rid_eq(&from, &longid));
    zlink_completion_id_t id, t1, t2;
    ZT_EQ_INT(send_rec(r, &longid, 0, 16, ZLINK_DONTWAIT, NULL, &id), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(send_rec(r, &longid, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u, &t1),
              ZLINK_SUBMIT_BACKPRESSURED);
    dealer_expect_seq(d, 0);
    expect_writable(r, t1, &u, &longid);
    ZT_EQ_INT(send_rec(r, &longid, 1, 16, ZLINK_DONTWAIT, NULL, &id), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(send_rec(r, &longid, REFUSED_SEQ, 16, ZLINK_DONTWAIT, &u, &t2),
              ZLINK_SUBMIT_BACKPRESSURED);
    ZT_EQ_INT(zlink_disconnect_rid(r, &longid), ZLINK_CONNECT_OK);
    expect_writable_res(r, t2, &u, &longid, ZLINK_SEND_TERMINAL, ENOENT);
    expect_cq_empty(r);
    zlt_finish(ctx, d, r);
}

/* ================================================== register-then-recheck */

struct drainer {
    void *rx;
    uint32_t got;
    int bad;
};

static void *drainer_main(void *arg)
{
    struct drainer *dr = arg;
    for (;;) {
        zlink_msg_t parts[2];
        size_t count = 0;
        zlink_recv_result_t r = zlink_recv(dr->rx, NULL, parts, 2, &count, 0);
        if (r != ZLINK_RECV_OK) {
            dr->bad = 1000 + (int)r;
            return NULL;
        }
        size_t n = zlink_msg_size(&parts[0]);
        uint32_t seq = n == 16 ? get_be32(zlink_msg_data(&parts[0])) : 0;
        zlink_multipart_close(parts, count);
        if (n == 3)
            return NULL; /* "END" */
        if (n != 16 || seq != dr->got) {
            dr->bad = 1;
            return NULL;
        }
        dr->got++;
    }
}

/* §3 register-then-recheck: 10,000 times, fill a 1-record inproc PAIR to a
 * DONTWAIT refusal while another thread drains it, then wait (NONE) for
 * that token's WRITABLE: a credit edge racing the refusal is never lost
 * (a lost one is a timeout). Also checks socket/29's "tok -> one WRITABLE"
 * under concurrency: exactly one per token, nothing left at the end. */
static void register_then_recheck_stress(void)
{
    printf("# covers socket/29 and PAIR/8 under a concurrent drain (§3 register-then-"
           "recheck)\n");
    enum { ITER = 10000 };
    void *ctx = zlt_ctx_new();
    path_t p;
    path_open(&p, ctx, "inproc", ZLINK_PAIR, 1);
    zlt_set_int(p.rx, ZLINK_RCVTIMEO, -1);
    zlt_set_int(p.tx, ZLINK_RCVTIMEO, ZT_MS(5000));
    struct drainer dr = {p.rx, 0, 0};
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, drainer_main, &dr), 0);
    int64_t t0 = zt_now_ms();
    uint64_t last = 0;
    for (uint32_t i = 0; i < ITER; i++) {
        zlink_completion_id_t id;
        uint32_t tries = 0;
        for (;;) {
            zlink_submit_result_t r = send_rec(p.tx, NULL, p.sent, 16, ZLINK_DONTWAIT,
                                               (void *)(uintptr_t)(i + 1), &id);
            if (r == ZLINK_SUBMIT_BACKPRESSURED)
                break;
            ZT_EQ_INT(r, ZLINK_SUBMIT_OK);
            p.sent++;
            if (++tries > 1000000)
                ZT_FAIL("iteration %u: never refused", i);
        }
        ZT_CHECK(id > last);
        last = id;
        zlink_completion_t c;
        cq_init(&c);
        zlink_recv_result_t r = zlink_completion_recv(p.tx, &c, ZLINK_RECV_FLAGS_NONE);
        if (r != ZLINK_RECV_OK)
            ZT_FAIL("iteration %u: the WRITABLE of token %llu never came (result %d, errno "
                    "%d): a lost edge",
                    i, (unsigned long long)id, (int)r, zlink_errno());
        check_writable(&c, id, (void *)(uintptr_t)(i + 1), NULL, ZLINK_SEND_ADMITTED, 0);
    }
    ZT_EQ_INT(zlt_send_str(p.tx, "END", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    ZT_EQ_INT(dr.bad, 0);
    ZT_EQ_INT(dr.got, p.sent);
    expect_cq_empty(p.tx);
    printf("# %d iterations, %u records, %lld ms\n", ITER, p.sent,
           (long long)(zt_now_ms() - t0));
    path_close(&p);
    zlt_ctx_term(ctx);
}

#ifdef ZLINK_HAVE_POLLER
struct observer {
    void *s;
    atomic_int stop;
    long looks;
};

/* Looks at s's readiness (zlink_poll, POLLOUT) as fast as it can: every
 * look publishes what became due and consumes the socket's edge flag. */
static void *observer_main(void *arg)
{
    struct observer *o = arg;
    while (!atomic_load(&o->stop)) {
        zlink_pollitem_t it = {o->s, 0, ZLINK_POLLOUT, 0};
        if (zlink_poll(&it, 1, 0, NULL) < 0)
            return NULL;
        o->looks++;
    }
    return NULL;
}
#endif

struct router_drainer {
    void *d;
    uint32_t got;
    int bad;
};

static void *router_drainer_main(void *arg)
{
    struct router_drainer *dr = arg;
    for (;;) {
        zlink_msg_t parts[2];
        size_t count = 0;
        zlink_recv_result_t r = zlink_recv(dr->d, NULL, parts, 2, &count, 0);
        if (r != ZLINK_RECV_OK) {
            dr->bad = 1000 + (int)r;
            return NULL;
        }
        size_t n = zlink_msg_size(&parts[0]);
        uint32_t seq = n == 16 ? get_be32(zlink_msg_data(&parts[0])) : 0;
        zlink_multipart_close(parts, count);
        if (n == 3)
            return NULL; /* "END" */
        if (n != 16 || seq != dr->got) {
            dr->bad = 1;
            return NULL;
        }
        dr->got++;
    }
}

/* The same race with a third party: another thread keeps looking at the
 * ROUTER's readiness (each look consumes its edge flag and publishes what
 * is due) while a token on another target (D1, never drained) stays live.
 * A credit edge from D2's drainer that lands between a refusal and the
 * token's registration is then only caught by the recheck. */
static void register_then_recheck_stress_observed(void)
{
    printf("# covers socket/29, ROUTER/23 under a concurrent drain and a concurrent "
           "readiness observer (§3 register-then-recheck)\n");
#ifndef ZLINK_HAVE_POLLER
    ZT_FAIL("this build has no zlink_poll: the observer cannot run");
#else
    enum { ITER = 10000 };
    void *ctx = zlt_ctx_new();
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_u64(r, ZLINK_SNDHWM, 1);
    char ep[256];
    zlt_bind(r, "inproc", ep, sizeof ep);
    void *d[2];
    dealers_to(ctx, r, ep, d, 2);
    zlt_set_int(d[1], ZLINK_RCVTIMEO, -1);
    zlt_set_int(r, ZLINK_RCVTIMEO, ZT_MS(5000));
    static int ua;
    uint64_t ta = router_fill_refuse(r, "D1", &ua, true); /* live throughout */
    zlink_routing_id_t rid1, rid2;
    zlt_rid_set(&rid1, "D1");
    zlt_rid_set(&rid2, "D2");
    struct router_drainer dr = {d[1], 0, 0};
    struct observer ob;
    ob.s = r;
    atomic_init(&ob.stop, 0);
    ob.looks = 0;
    pthread_t tdr, tob;
    ZT_EQ_INT(pthread_create(&tdr, NULL, router_drainer_main, &dr), 0);
    ZT_EQ_INT(pthread_create(&tob, NULL, observer_main, &ob), 0);
    uint32_t sent = 0;
    int64_t t0 = zt_now_ms();
    for (uint32_t i = 0; i < ITER; i++) {
        zlink_completion_id_t id;
        uint32_t tries = 0;
        for (;;) {
            zlink_submit_result_t rc = send_rec(r, &rid2, sent, 16, ZLINK_DONTWAIT,
                                                (void *)(uintptr_t)(i + 1), &id);
            if (rc == ZLINK_SUBMIT_BACKPRESSURED)
                break;
            ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
            sent++;
            if (++tries > 1000000)
                ZT_FAIL("iteration %u: never refused", i);
        }
        zlink_completion_t c;
        cq_init(&c);
        zlink_recv_result_t rc = zlink_completion_recv(r, &c, ZLINK_RECV_FLAGS_NONE);
        if (rc != ZLINK_RECV_OK)
            ZT_FAIL("iteration %u: the WRITABLE of token %llu never came (result %d, errno "
                    "%d): a lost edge",
                    i, (unsigned long long)id, (int)rc, zlink_errno());
        check_writable(&c, id, (void *)(uintptr_t)(i + 1), &rid2, ZLINK_SEND_ADMITTED, 0);
    }
    atomic_store(&ob.stop, 1);
    ZT_EQ_INT(pthread_join(tob, NULL), 0);
    zlink_msg_t m;
    zlt_msg_set(&m, "END", 3);
    ZT_EQ_INT(zlink_send_rid(r, &rid2, &m, 1, 0, NULL, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    ZT_EQ_INT(pthread_join(tdr, NULL), 0);
    ZT_EQ_INT(dr.bad, 0);
    ZT_EQ_INT(dr.got, sent);
    expect_cq_empty(r); /* D1's token is still live */
    dealer_expect_seq(d[0], 0);
    expect_writable(r, ta, &ua, &rid1);
    expect_cq_empty(r);
    printf("# %d iterations, %u records, %ld observer looks, %lld ms\n", ITER, sent, ob.looks,
           (long long)(zt_now_ms() - t0));
    zlt_finish(ctx, d[0], d[1], r);
#endif
}

#ifdef ZLINK_HAVE_POLLER
/* The WRITABLE waiter of register_then_recheck_wakes_poller: another
 * thread that sleeps in a poller on the sender's POLLCOMPLETION and takes
 * every record that shows up, publishing the newest token id it saw. */
struct cq_waiter {
    void *s;
    int stop_fd;
    _Atomic uint64_t seen;
    atomic_int bad;
};

static void *cq_waiter_main(void *arg)
{
    struct cq_waiter *w = arg;
    void *pl = zlink_poller_new();
    if (pl == NULL || zlink_poller_add(pl, w->s, w, ZLINK_POLLCOMPLETION) != ZLINK_CONFIG_OK ||
        zlink_poller_add_fd(pl, w->stop_fd, NULL, ZLINK_POLLIN) != ZLINK_CONFIG_OK) {
        atomic_store(&w->bad, 1);
        return NULL;
    }
    for (;;) {
        zlink_poller_event_t ev[2];
        int n = zlink_poller_wait(pl, ev, 2, -1, NULL);
        if (n < 0) {
            atomic_store(&w->bad, 2);
            break;
        }
        bool stop = false;
        for (int i = 0; i < n; i++)
            stop |= ev[i].user_data == NULL;
        if (stop)
            break;
        for (;;) {
            zlink_completion_t c;
            cq_init(&c);
            if (zlink_completion_recv(w->s, &c, ZLINK_RECV_FLAGS_DONTWAIT) != ZLINK_RECV_OK)
                break;
            if (c.kind != ZLINK_COMPLETION_WRITABLE || c.send_result != ZLINK_SEND_ADMITTED)
                atomic_store(&w->bad, 3);
            atomic_store(&w->seen, c.completion_id);
        }
    }
    zlink_poller_destroy(&pl);
    return NULL;
}
#endif

/* §3 register-then-recheck, seen from a thread that already sleeps: a
 * credit edge that lands between a DONTWAIT refusal and its token's
 * registration publishes the WRITABLE at once, and that publication must
 * wake whoever waits on the socket's completion queue (here a poller in
 * another thread, as a dispatcher would). 20,000 refusals on a 1-record
 * inproc PAIR drained by a third thread; each token's record must reach
 * the sleeping thread (a lost wake-up leaves it asleep: a timeout). */
static void register_then_recheck_wakes_poller(void)
{
    printf("# covers socket/29 and PAIR/8 with the WRITABLE taken by a poller in another "
           "thread (§3 register-then-recheck)\n");
#ifndef ZLINK_HAVE_POLLER
    ZT_FAIL("this build has no zlink_poller: the sleeping thread cannot run");
#else
    enum { ITER = 10000 };
    void *ctx = zlt_ctx_new();
    path_t p;
    path_open(&p, ctx, "inproc", ZLINK_PAIR, 1);
    zlt_set_int(p.rx, ZLINK_RCVTIMEO, -1);
    struct drainer dr = {p.rx, 0, 0};
    struct cq_waiter w;
    w.s = p.tx;
    w.stop_fd = eventfd(0, EFD_CLOEXEC);
    ZT_CHECK(w.stop_fd >= 0);
    atomic_init(&w.seen, 0);
    atomic_init(&w.bad, 0);
    pthread_t tdr, tw;
    ZT_EQ_INT(pthread_create(&tdr, NULL, drainer_main, &dr), 0);
    ZT_EQ_INT(pthread_create(&tw, NULL, cq_waiter_main, &w), 0);
    int64_t t0 = zt_now_ms();
    for (uint32_t i = 0; i < ITER; i++) {
        zlink_completion_id_t id;
        for (uint32_t tries = 0;; tries++) {
            zlink_submit_result_t r =
                send_rec(p.tx, NULL, p.sent, 16, ZLINK_DONTWAIT, NULL, &id);
            if (r == ZLINK_SUBMIT_BACKPRESSURED)
                break;
            ZT_EQ_INT(r, ZLINK_SUBMIT_OK);
            p.sent++;
            if (tries > 1000000)
                ZT_FAIL("iteration %u: never refused", i);
        }
        /* Spinning (not sleeping) keeps this thread sending the moment the
         * record was taken, which is what makes the refusal land while the
         * other thread is still looking. */
        int64_t end = zt_now_ms() + ZT_MS(5000);
        bool seen = false;
        while (!(seen = atomic_load(&w.seen) >= id) && zt_now_ms() <= end)
            sched_yield();
        if (!seen)
            ZT_FAIL("iteration %u: the WRITABLE of token %llu did not reach the thread "
                    "sleeping in the poller within %d ms: a lost wake-up",
                    i, (unsigned long long)id, ZT_MS(5000));
        ZT_EQ_INT(atomic_load(&w.bad), 0);
    }
    uint64_t one = 1;
    ZT_EQ_INT(write(w.stop_fd, &one, sizeof one), (int)sizeof one);
    ZT_EQ_INT(pthread_join(tw, NULL), 0);
    ZT_EQ_INT(atomic_load(&w.bad), 0);
    ZT_EQ_INT(zlt_send_str(p.tx, "END", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(pthread_join(tdr, NULL), 0);
    ZT_EQ_INT(dr.bad, 0);
    ZT_EQ_INT(dr.got, p.sent);
    expect_cq_empty(p.tx);
    close(w.stop_fd);
    printf("# %d iterations, %u records, %lld ms\n", ITER, p.sent,
           (long long)(zt_now_ms() - t0));
    path_close(&p);
    zlt_ctx_term(ctx);
#endif
}

static const zt_case_t cases[] = {
    ZT_CASE(pair_06_immediate_dontwait_id_zero),
    ZT_CASE(pair_07_refused_gets_token),
    ZT_CASE(pair_08_one_writable_held_until_read),
    ZT_CASE(pair_09_exhaustion_out_of_memory),
    ZT_CASE(pair_14_reconnect_writable_disconnect_not_terminal),
    ZT_CASE(pair_16_no_replay),
    ZT_CASE(pair_17_nothing_after_close),
    ZT_CASE(dealer_11_weight_revival_writable),
    ZT_CASE(dealer_16_all_weights_zero_token),
    ZT_CASE(dealer_20_dontwait_pins_nothing),
    ZT_CASE(dealer_30_writable_held_until_read),
    ZT_CASE(router_23_writable_held_until_drained),
    ZT_CASE(stream_11_dontwait_id_zero_or_token),
    ZT_CASE(stream_24_peer_rid_snapshot),
    ZT_CASE(stream_25_completion_level_until_drained),
    ZT_CASE(socket_29_dontwait_one_attempt_then_resubmit),
    ZT_CASE(socket_30_consumed_no_route_no_token),
    ZT_CASE(socket_31_token_per_target_transient_disconnect_keeps),
    ZT_CASE(socket_32_token_ends_only_by_writable_removal_close),
    ZT_CASE(socket_33_slot_limit_oom_one_read_frees),
    ZT_CASE(socket_39_id_out_zeroed_completes_without_id_out),
    ZT_CASE(socket_44_completion_level_last_read_clears),
    ZT_CASE(socket_45_bad_output_nothing_dequeued_close_idempotent),
    ZT_CASE(socket_47_close_and_term_discard),
    ZT_CASE(socket_48_none_recv_honours_rcvtimeo),
    ZT_CASE(socket_49_interleaved_ids_once_append_order),
    ZT_CASE(socket_50_peer_rid_rules),
    ZT_CASE(register_then_recheck_stress),
    /* Written to the contract; these four each found a discrepancy, now fixed (see the doc). */
    ZT_CASE(register_then_recheck_stress_observed),
    ZT_CASE(register_then_recheck_wakes_poller),
    ZT_CASE(socket_44_due_writable_not_revoked),
    ZT_CASE(pair_17_disconnect_terminal),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
