/*
 * test_request.c — request/reply on DEALER and ROUTER: core-contract §3
 * "Request and reply" and "REQUEST results", §5 DEALER/ROUTER, and the §8
 * items mapped in doc/contract-tests/request.md. Each case prints
 * "# covers <LIST>/<item>".
 *
 * Public API only (zlink.h, through zltest_zlink.h). Where an item is about
 * the wire (ZMP v1, doc/protocol.md) or needs something no ZLink socket can
 * send (an ERROR_REPLY, chosen sequence numbers, a second REPLY for one
 * sequence), the other end is a "raw peer": a plain POSIX TCP or unix-domain
 * socket that speaks ZMP from the protocol document with its own encoder and
 * decoder, never the library's.
 *
 * How the cases wait (no sleeps for conditions):
 *  - A DEALER's NONE request waits (SNDTIMEO) for its first ROUTER peer; a
 *    ROUTER's request or send to a routing id it has no route to yet is
 *    retried with DONTWAIT while the result is NOT_CONNECTED (bounded).
 *  - Completion records are awaited with a NONE zlink_completion_recv
 *    (RCVTIMEO); "no record" is a DONTWAIT receive giving NO_DATA/EAGAIN.
 *  - "Nothing more will come" after a late or duplicate reply is proven
 *    with a fence: the replier sends a DATA record after the reply on the
 *    same connection; once the requester has received that DATA with
 *    zlink_recv, the reply ahead of it has reached the head of the FIFO and
 *    was either completed or dropped.
 *  - Only the cases about the clock let time pass on purpose: a helper
 *    thread delays a connect to separate "call entered" from "admitted"
 *    (readme_35), and timeouts are measured against zt_now_ms().
 *  - A few negative checks over tcp have no fence and use a bounded window
 *    (said where they appear); the same checks over inproc are exact.
 * Each case runs in its own process (zltest.h), so one failure hides no
 * other case. ZLT_ONLY=text, this file's older spelling of ZT_FILTER, runs
 * only the cases whose name contains that text (a debugging aid).
 */
#include "zltest_zlink.h"

#define ZR_MAX_UNREAD (1u << 20) /* unread bytes a raw peer may hold */
#include "zltest_rawzmp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAXP 16

/* ================================================================ helpers */

/* ------------------------------------------------------------------ parts */

static void parts_from(zlink_msg_t *parts, const char *const *strs, size_t n)
{
    ZT_CHECK(n <= MAXP);
    for (size_t i = 0; i < n; i++)
        zlt_msg_set(&parts[i], strs[i], strlen(strs[i]));
}

/* Every slot came back empty and initialized: consumed, success or not. */
static void parts_consumed(const char *file, int line, zlink_msg_t *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (zlink_msg_size(&parts[i]) != 0)
            zt__fail(file, line, "part %zu was not consumed (%zu bytes left)", i,
                     zlink_msg_size(&parts[i]));
        if (zlink_msg_close(&parts[i]) != ZLINK_CONFIG_OK)
            zt__fail(file, line, "part %zu was not left initialized", i);
    }
}

/* parts[0..got) are exactly the strings strs[0..n). */
static void parts_are(const char *file, int line, zlink_msg_t *p, size_t got,
                      const char *const *strs, size_t n)
{
    if (got != n)
        zt__fail(file, line, "%zu parts, expected %zu", got, n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(strs[i]);
        size_t sz = zlink_msg_size(&p[i]);
        if (sz != len || (len > 0 && memcmp(zlink_msg_data(&p[i]), strs[i], len) != 0))
            zt__fail(file, line, "part %zu is \"%.*s\" (%zu bytes), expected \"%s\"", i,
                     (int)(sz > 64 ? 64 : sz), sz ? (const char *)zlink_msg_data(&p[i]) : "",
                     sz, strs[i]);
    }
}

/* ------------------------------------------------------- submit results */

typedef struct sub {
    zlink_submit_result_t rc;
    int err;
    zlink_completion_id_t id;
} sub_t;

static sub_t request_v(const char *file, int line, void *s, const zlink_routing_id_t *rid,
                       int flags, uint32_t tmo, void *uctx, const char *const *strs, size_t n)
{
    zlink_msg_t parts[MAXP];
    parts_from(parts, strs, n);
    sub_t r;
    r.id = 0xDEADBEEFull; /* zeroed first by the call */
    r.rc = zlink_request(s, rid, parts, n, (zlink_send_flags_t)flags, tmo, uctx, &r.id);
    r.err = zlink_errno();
    parts_consumed(file, line, parts, n);
    return r;
}

/* zlink_request of the text parts; checks they were consumed. */
#define REQ(s, rid, flags, tmo, uctx, ...)                                                 \
    request_v(__FILE__, __LINE__, (s), (rid), (flags), (uint32_t)(tmo), (uctx),            \
              ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))

static zlink_completion_id_t req_ok(const char *file, int line, sub_t r)
{
    if (r.rc != ZLINK_SUBMIT_OK)
        zt__fail(file, line, "zlink_request: result %d, errno %d (%s)", (int)r.rc, r.err,
                 zlink_strerror(r.err));
    if (r.id == 0)
        zt__fail(file, line, "zlink_request: OK with completion id 0");
    return r.id;
}

/* An admitted request (flags NONE): OK with a nonzero id, which it returns. */
#define REQ_OK(s, rid, tmo, uctx, ...) req_ok(__FILE__, __LINE__, REQ(s, rid, 0, tmo, uctx, __VA_ARGS__))

static void sub_is(const char *file, int line, sub_t r, int want, int err, bool token)
{
    if ((int)r.rc != want || (want != ZLINK_SUBMIT_OK && r.err != err))
        zt__fail(file, line, "result %d errno %d (%s), expected %d errno %d (%s)", (int)r.rc,
                 r.err, zlink_strerror(r.err), want, err, zlink_strerror(err));
    if (token && r.id == 0)
        zt__fail(file, line, "refused DONTWAIT submit without a wait token");
    if (!token && r.id != 0)
        zt__fail(file, line, "completion id %llu, expected 0", (unsigned long long)r.id);
}

/* A refused submit: want/err and id 0 (no wait token, nothing admitted). */
#define SUB_FAILS(r, want, err) sub_is(__FILE__, __LINE__, (r), (want), (err), false)
/* A refused DONTWAIT submit: BACKPRESSURED/EAGAIN with a nonzero wait token. */
#define SUB_TOKEN(r) sub_is(__FILE__, __LINE__, (r), ZLINK_SUBMIT_BACKPRESSURED, EAGAIN, true)

static sub_t reply_v(const char *file, int line, void *r, const zlink_routing_id_t *rid,
                     zlink_reply_token_t tok, const char *const *strs, size_t n)
{
    zlink_msg_t parts[MAXP];
    parts_from(parts, strs, n);
    sub_t s;
    s.id = 0;
    s.rc = zlink_reply(r, rid, tok, parts, n);
    s.err = zlink_errno();
    parts_consumed(file, line, parts, n);
    return s;
}

#define REPLY(r, rid, tok, ...)                                                          \
    reply_v(__FILE__, __LINE__, (r), (rid), (tok), ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))
#define REPLY_OK(r, rid, tok, ...) \
    sub_is(__FILE__, __LINE__, REPLY(r, rid, tok, __VA_ARGS__), ZLINK_SUBMIT_OK, 0, false)

static sub_t send_rid_v(const char *file, int line, void *r, const zlink_routing_id_t *rid,
                        int flags, const char *const *strs, size_t n)
{
    zlink_msg_t parts[MAXP];
    parts_from(parts, strs, n);
    sub_t s;
    s.id = 0xDEADBEEFull;
    s.rc = zlink_send_rid(r, rid, parts, n, (zlink_send_flags_t)flags, NULL, &s.id);
    s.err = zlink_errno();
    parts_consumed(file, line, parts, n);
    return s;
}

/* ------------------------------------------------------- ROUTER receive */

typedef struct rrec {
    zlink_routing_id_t rid;
    zlink_reply_token_t tok;
    uint64_t gen;
    size_t n;
    zlink_msg_t p[MAXP];
} rrec_t;

/* zlink_router_recv into out; on OK the caller owns out->p[0..n). */
static zlink_recv_result_t rrecv(void *r, int flags, rrec_t *out)
{
    const zlink_routing_id_t *rid = NULL;
    memset(out, 0, sizeof *out);
    out->tok = 0xA5A5A5A5u;
    zlink_recv_result_t rc =
        zlink_router_recv(r, &rid, &out->tok, out->p, MAXP, &out->n, (zlink_recv_flags_t)flags);
    if (rc == ZLINK_RECV_OK) {
        ZT_CHECK(rid != NULL);
        out->rid = *rid;
        out->gen = zlink_router_recv_route_generation(r);
    }
    return rc;
}

static void rrec_expect(const char *file, int line, void *r, rrec_t *out, bool request,
                        const char *from, const char *const *strs, size_t n)
{
    zlink_recv_result_t rc = rrecv(r, 0, out);
    if (rc != ZLINK_RECV_OK)
        zt__fail(file, line, "router_recv: result %d, errno %d (%s)", (int)rc, zlink_errno(),
                 zlink_strerror(zlink_errno()));
    if (request && out->tok == 0)
        zt__fail(file, line, "a REQUEST arrived with token 0");
    if (!request && out->tok != 0)
        zt__fail(file, line, "a DATA record arrived with token %llu",
                 (unsigned long long)out->tok);
    if (from != NULL && !zlt_rid_is(&out->rid, from))
        zt__fail(file, line, "record from a %u-byte routing id, expected '%s'", out->rid.size,
                 from);
    parts_are(file, line, out->p, out->n, strs, n);
    zlink_multipart_close(out->p, out->n);
}

/* ROUTER r receives (NONE) a REQUEST (token != 0) of these parts from routing
 * id from (any when NULL); out keeps rid and token. */
#define RREQ(r, out, from, ...)                                                   \
    rrec_expect(__FILE__, __LINE__, (r), (out), true, (from), ZLT_STRS(__VA_ARGS__), \
                ZLT_NSTRS(__VA_ARGS__))
/* ... a DATA record (token 0). */
#define RDATA(r, out, from, ...)                                                   \
    rrec_expect(__FILE__, __LINE__, (r), (out), false, (from), ZLT_STRS(__VA_ARGS__), \
                ZLT_NSTRS(__VA_ARGS__))

/* ------------------------------------------------------- completion queue */

static zlink_recv_result_t cq_recv(void *s, zlink_completion_t *c, int flags)
{
    memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
    return zlink_completion_recv(s, c, (zlink_recv_flags_t)flags);
}

/* Receives (NONE, RCVTIMEO) the next completion record of s and checks that
 * it is the REQUEST record of id: user_context, result, peer_rid (empty when
 * peer is NULL) and, when check_parts, exactly the reply parts strs[0..n)
 * (n == 0: no reply parts at all). Closes it. */
static void cq_req(const char *file, int line, void *s, zlink_completion_id_t id, void *uctx,
                   int result, const char *peer, bool check_parts, const char *const *strs,
                   size_t n)
{
    zlink_completion_t c;
    zlink_recv_result_t rc = cq_recv(s, &c, 0);
    if (rc != ZLINK_RECV_OK)
        zt__fail(file, line, "completion_recv: result %d errno %d, waiting for request %llu",
                 (int)rc, zlink_errno(), (unsigned long long)id);
    if (c.kind != ZLINK_COMPLETION_REQUEST)
        zt__fail(file, line, "record of kind %d (id %llu), expected the REQUEST record of %llu",
                 (int)c.kind, (unsigned long long)c.completion_id, (unsigned long long)id);
    if (c.completion_id != id)
        zt__fail(file, line, "REQUEST record of id %llu (result %d), expected id %llu",
                 (unsigned long long)c.completion_id, (int)c.request_result,
                 (unsigned long long)id);
    if (c.user_context != uctx)
        zt__fail(file, line, "user_context %p, expected %p", c.user_context, uctx);
    if ((int)c.request_result != result)
        zt__fail(file, line, "request %llu ended with %d, expected %d", (unsigned long long)id,
                 (int)c.request_result, result);
    if (peer == NULL ? c.peer_rid.size != 0 : !zlt_rid_is(&c.peer_rid, peer))
        zt__fail(file, line, "peer_rid of %u bytes (\"%.*s\"), expected \"%s\"", c.peer_rid.size,
                 (int)c.peer_rid.size, (const char *)c.peer_rid.data, peer ? peer : "");
    if (c.send_result != 0 || c.send_terminal_errno != 0)
        zt__fail(file, line, "send fields set on a REQUEST record");
    if (check_parts) {
        if (n == 0) {
            if (c.reply_parts != NULL || c.reply_part_count != 0)
                zt__fail(file, line, "%zu reply parts, expected none", c.reply_part_count);
        } else {
            if (c.reply_parts == NULL)
                zt__fail(file, line, "no reply parts, expected %zu", n);
            parts_are(file, line, c.reply_parts, c.reply_part_count, strs, n);
        }
    }
    zlink_completion_close(&c);
    if (c.struct_size != sizeof c || c.reply_parts != NULL || c.completion_id != 0 ||
        c.user_context != NULL)
        zt__fail(file, line, "zlink_completion_close did not zero the record");
}

#define CQ_OK(s, id, uctx, peer, ...)                                                    \
    cq_req(__FILE__, __LINE__, (s), (id), (uctx), ZLINK_REQUEST_OK, (peer), true,       \
           ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))
#define CQ_ERR(s, id, uctx, peer, result, ...)                                            \
    cq_req(__FILE__, __LINE__, (s), (id), (uctx), (result), (peer), true,                \
           ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))
/* A payload-free end: TIMED_OUT, NOT_CONNECTED, an error reply of one part. */
#define CQ_END(s, id, uctx, peer, result) \
    cq_req(__FILE__, __LINE__, (s), (id), (uctx), (result), (peer), true, NULL, 0)
/* Result only; the parts are not looked at. */
#define CQ_RESULT(s, id, uctx, peer, result) \
    cq_req(__FILE__, __LINE__, (s), (id), (uctx), (result), (peer), false, NULL, 0)

/* No completion record is queued: DONTWAIT gives NO_DATA/EAGAIN. */
#define CQ_NONE(s) cq_none(__FILE__, __LINE__, (s))
static void cq_none(const char *file, int line, void *s)
{
    zlink_completion_t c;
    zlink_recv_result_t rc = cq_recv(s, &c, ZLINK_DONTWAIT);
    if (rc == ZLINK_RECV_OK) {
        int kind = (int)c.kind, res = (int)c.request_result;
        unsigned long long id = (unsigned long long)c.completion_id;
        zlink_completion_close(&c);
        zt__fail(file, line, "unexpected completion record: kind %d, id %llu, request result %d",
                 kind, id, res);
    }
    if (rc != ZLINK_RECV_NO_DATA || zlink_errno() != EAGAIN)
        zt__fail(file, line, "completion_recv DONTWAIT: result %d errno %d, expected NO_DATA",
                 (int)rc, zlink_errno());
}

/* The next record (NONE) is the WRITABLE/ADMITTED record of wait token id. */
#define CQ_WRITABLE(s, id, uctx) cq_writable(__FILE__, __LINE__, (s), (id), (uctx))
static void cq_writable(const char *file, int line, void *s, zlink_completion_id_t id,
                        void *uctx)
{
    zlink_completion_t c;
    zlink_recv_result_t rc = cq_recv(s, &c, 0);
    if (rc != ZLINK_RECV_OK)
        zt__fail(file, line, "completion_recv: result %d errno %d, waiting for WRITABLE %llu",
                 (int)rc, zlink_errno(), (unsigned long long)id);
    if (c.kind != ZLINK_COMPLETION_WRITABLE || c.completion_id != id ||
        c.user_context != uctx || c.send_result != ZLINK_SEND_ADMITTED ||
        c.reply_parts != NULL)
        zt__fail(file, line, "record kind %d id %llu ctx %p send_result %d, expected "
                 "WRITABLE/ADMITTED %llu ctx %p", (int)c.kind,
                 (unsigned long long)c.completion_id, c.user_context, (int)c.send_result,
                 (unsigned long long)id, uctx);
    zlink_completion_close(&c);
}

/* ---------------------------------------------------------------- sockets */

/* A ROUTER with routing id rid (NULL: default) bound on tr; ep gets the
 * address. */
static void *router_bound(void *ctx, const char *tr, const char *rid, char *ep, size_t cap)
{
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    if (rid != NULL)
        zlt_set_rid(r, rid);
    zlt_bind(r, tr, ep, cap);
    return r;
}

/* ROUTER r places a request to routing id rid as soon as it has a route:
 * DONTWAIT retried while NOT_CONNECTED/EHOSTUNREACH (id 0), bounded. */
#define REQ_ROUTABLE(r, rid, tmo, uctx, text) \
    req_routable(__FILE__, __LINE__, (r), (rid), (uint32_t)(tmo), (uctx), (text))
static zlink_completion_id_t req_routable(const char *file, int line, void *r, const char *rid,
                                          uint32_t tmo, void *uctx, const char *text)
{
    zlink_routing_id_t to;
    zlt_rid_set(&to, rid);
    int64_t end = zt_now_ms() + ZT_MS(3000);
    for (;;) {
        sub_t s = request_v(file, line, r, &to, ZLINK_DONTWAIT, tmo, uctx, &text, 1);
        if (s.rc == ZLINK_SUBMIT_OK) {
            if (s.id == 0)
                zt__fail(file, line, "zlink_request: OK with completion id 0");
            return s.id;
        }
        if (s.rc != ZLINK_SUBMIT_NOT_CONNECTED || s.err != EHOSTUNREACH || s.id != 0)
            zt__fail(file, line, "request to '%s' while routing: result %d errno %d id %llu",
                     rid, (int)s.rc, s.err, (unsigned long long)s.id);
        if (zt_now_ms() > end)
            zt__fail(file, line, "no route to '%s'", rid);
        sched_yield();
    }
}

/* Waits (bounded) until ROUTER r has no route to rid any more: after a
 * peer's connection ended, before the same routing id connects again (a
 * second live connection with the same id would be refused). */
static void wait_route_gone(void *r, const char *rid)
{
    int64_t end = zt_now_ms() + ZT_MS(3000);
    for (;;) {
        zlink_router_route_t rows[32];
        size_t n = 0;
        ZT_EQ_INT(zlink_router_routes_snapshot(r, rows, 32, &n), ZLINK_CONFIG_OK);
        bool found = false;
        for (size_t i = 0; i < n; i++)
            found = found || zlt_rid_is(&rows[i].rid, rid);
        if (!found)
            return;
        if (zt_now_ms() > end)
            ZT_FAIL("the route to '%s' is still there", rid);
        sched_yield();
    }
}

/* Runs fn once per transport, each in a round of its own (zltest_zlink.h):
 * inproc, tcp and, when ipc, ipc. */
static void per_transport(void (*fn)(void *ctx, const char *tr), bool ipc)
{
    static const char *const trs[] = {"inproc", "tcp", "ipc"};
    for (int i = 0; i < (ipc ? 3 : 2); i++) {
        printf("# transport %s\n", trs[i]);
        void *ctx = zlt_round_begin(trs[i]);
        fn(ctx, trs[i]);
        zlt_round_end();
    }
}

static void covers(const char *what)
{
    printf("# covers %s\n", what);
}

/* ============================================================ raw peer */
/* A plain socket speaking ZMP v1 (doc/protocol.md) with its own codec:
 * zltest_rawzmp.h. */

typedef rframe_t rfr_t;

/* A record of parts p[0..n) (sizes sz): the first frame has kind and seq,
 * later frames kind 0; MORE on all but the last. */
static void w_record_bin(wire_t *w, uint8_t kind, uint64_t seq, const void *const *p,
                         const uint32_t *sz, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w_frame(w, i + 1 < n ? 0x01 : 0x00, i == 0 ? kind : 0, seq, p[i], sz[i]);
}

static void w_record(wire_t *w, uint8_t kind, uint64_t seq, const char *const *strs, size_t n)
{
    const void *p[MAXP];
    uint32_t sz[MAXP];
    ZT_CHECK(n <= MAXP);
    for (size_t i = 0; i < n; i++) {
        p[i] = strs[i];
        sz[i] = (uint32_t)strlen(strs[i]);
    }
    w_record_bin(w, kind, seq, p, sz, n);
}

#define K_DATA 0
#define K_REQUEST 1
#define K_REPLY 2
#define K_ERROR_REPLY 3

/* A raw listener on tr ("tcp" or "ipc"); ep gets the address ZLink
 * connects to. Returns the listening fd. */
static int raw_listen(const char *tr, char *ep, size_t cap)
{
    static int seq;
    int fd;
    if (strcmp(tr, "tcp") == 0) {
        struct sockaddr_in sin;
        socklen_t len = sizeof sin;
        memset(&sin, 0, sizeof sin);
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ZT_CHECK(fd >= 0);
        ZT_EQ_INT(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
        ZT_EQ_INT(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
        snprintf(ep, cap, "tcp://127.0.0.1:%d", ntohs(sin.sin_port));
    } else {
        char tag[32];
        snprintf(tag, sizeof tag, "raw%d", ++seq);
        zlt_ipc_endpoint(ep, cap, tag); /* removed at exit */
        struct sockaddr_un sun;
        memset(&sun, 0, sizeof sun);
        sun.sun_family = AF_UNIX;
        snprintf(sun.sun_path, sizeof sun.sun_path, "%s", ep + 6);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ZT_CHECK(fd >= 0);
        ZT_EQ_INT(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
    }
    ZT_EQ_INT(listen(fd, 16), 0);
    return fd;
}

/* The next frame that is not a control frame (WEIGHT, FLOWSTATE). */
static rfr_t raw_next_data(raw_t *r)
{
    for (;;) {
        rfr_t f = raw_next(r);
        if (!(f.flags & 0x02))
            return f;
    }
}

static void check_hello(const rfr_t *f, int type, const char *rid)
{
    ZT_EQ_INT(f->flags, 0x02);
    ZT_EQ_INT(f->kind, 0);
    ZT_CHECK(f->size >= 4);
    ZT_EQ_INT(f->body[0], 0x01);
    ZT_EQ_INT((f->body[1] << 8) | f->body[2], type);
    ZT_EQ_INT(f->size, 4u + f->body[3]);
    if (rid != NULL) {
        ZT_EQ_INT(f->body[3], strlen(rid));
        ZT_EQ_MEM(f->body + 4, rid, strlen(rid));
    }
}

/* The value of READY property name. */
static bool ready_prop(const rfr_t *f, const char *name, const uint8_t **v, uint32_t *vl)
{
    size_t at = 1;
    while (at < f->size) {
        uint8_t nl = f->body[at++];
        if (at + nl + 4 > f->size)
            return false;
        const uint8_t *nm = f->body + at;
        at += nl;
        uint32_t l = be32(f->body + at);
        at += 4;
        if (at + l > f->size)
            return false;
        if (nl == strlen(name) && memcmp(nm, name, nl) == 0) {
            *v = f->body + at;
            *vl = l;
            return true;
        }
        at += l;
    }
    return false;
}

static void check_ready(const rfr_t *f, int type, const char *rid, int count, int lane)
{
    const uint8_t *v;
    uint32_t vl;
    ZT_EQ_INT(f->flags, 0x02);
    ZT_CHECK(f->size >= 1);
    ZT_EQ_INT(f->body[0], 0x04);
    ZT_CHECK(ready_prop(f, "Socket-Type", &v, &vl));
    ZT_EQ_INT(vl, strlen(type_name(type)));
    ZT_EQ_MEM(v, type_name(type), vl);
    if (rid != NULL) {
        ZT_CHECK(ready_prop(f, "Routing-Id", &v, &vl));
        ZT_EQ_INT(vl, strlen(rid));
        ZT_EQ_MEM(v, rid, vl);
    }
    ZT_CHECK(ready_prop(f, "Zlink-Lane-Count", &v, &vl));
    ZT_EQ_INT(vl, 1);
    ZT_EQ_INT(v[0], count);
    ZT_CHECK(ready_prop(f, "Zlink-Lane", &v, &vl));
    ZT_EQ_INT(vl, 1);
    ZT_EQ_INT(v[0], lane);
}

/* The raw side connected to a ZLink socket of zl_type (routing id zl_rid,
 * NULL: not checked): sends HELLO + READY at once, then reads and checks the
 * ZLink side's HELLO and READY (lane count / lane). */
static void raw_hs_connecting(raw_t *r, int my_type, const char *my_rid, int zl_type,
                              const char *zl_rid, int count, int lane)
{
    wire_t w;
    w_init(&w);
    w_hello(&w, my_type, my_rid);
    w_ready_dr(&w, my_type, my_rid, count, lane);
    raw_send(r, &w);
    w_free(&w);
    rfr_t f = raw_next(r);
    check_hello(&f, zl_type, zl_rid);
    f = raw_next(r);
    check_ready(&f, zl_type, zl_rid, count, lane);
}

/* A ZLink socket of zl_type connected to the raw side (the raw side
 * accepted): HELLO at once, the ZLink side's HELLO and READY checked, then
 * the raw READY echoing the lane. */
static void raw_hs_accepting(raw_t *r, int my_type, const char *my_rid, int zl_type,
                             const char *zl_rid, int count, int lane)
{
    wire_t w;
    w_init(&w);
    w_hello(&w, my_type, my_rid);
    raw_send(r, &w);
    rfr_t f = raw_next(r);
    check_hello(&f, zl_type, zl_rid);
    f = raw_next(r);
    check_ready(&f, zl_type, zl_rid, count, lane);
    w.n = 0;
    w_ready_dr(&w, my_type, my_rid, count, lane);
    raw_send(r, &w);
    w_free(&w);
}

/* Sends one record of text parts (kind, seq) from the raw side. */
static void raw_send_record(raw_t *r, uint8_t kind, uint64_t seq, const char *const *strs,
                            size_t n)
{
    wire_t w;
    w_init(&w);
    w_record(&w, kind, seq, strs, n);
    raw_send(r, &w);
    w_free(&w);
}
#define RAW_SEND(r, kind, seq, ...) \
    raw_send_record((r), (kind), (seq), ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))

/* Sends an ERROR_REPLY for seq: errno part (4 bytes BE), then rest. */
static void raw_send_error_reply(raw_t *r, uint64_t seq, uint32_t err, const char *const *rest,
                                 size_t nrest)
{
    const void *p[MAXP];
    uint32_t sz[MAXP];
    uint8_t e[4] = {(uint8_t)(err >> 24), (uint8_t)(err >> 16), (uint8_t)(err >> 8),
                    (uint8_t)err};
    p[0] = e;
    sz[0] = 4;
    for (size_t i = 0; i < nrest; i++) {
        p[i + 1] = rest[i];
        sz[i + 1] = (uint32_t)strlen(rest[i]);
    }
    wire_t w;
    w_init(&w);
    w_record_bin(&w, K_ERROR_REPLY, seq, p, sz, nrest + 1);
    raw_send(r, &w);
    w_free(&w);
}

/* Reads one whole record (DATA frames skipped past controls) of the given
 * first-frame kind and checks its parts; returns its sequence. */
#define RAW_EXPECT(r, kind, ...) \
    raw_expect((r), (kind), ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))
static uint64_t raw_expect(raw_t *r, uint8_t kind, const char *const *strs, size_t n)
{
    uint64_t seq = 0;
    for (size_t i = 0; i < n; i++) {
        rfr_t f = i == 0 ? raw_next_data(r) : raw_next(r);
        ZT_EQ_INT(f.kind, i == 0 ? kind : 0);
        ZT_EQ_INT(f.flags, i + 1 < n ? 0x01 : 0x00);
        if (i == 0) {
            seq = f.seq;
            if (kind != K_DATA)
                ZT_CHECK(seq != 0);
        }
        ZT_EQ_INT(f.size, strlen(strs[i]));
        ZT_EQ_MEM(f.body, strs[i], f.size);
    }
    return seq;
}

/* A ZLink DEALER "D" connected to a raw ROUTER "raw" listening on tr; the
 * handshake is done. */
static void *dealer_to_raw_router(void *ctx, const char *tr, int *lfd, raw_t *c)
{
    char ep[256];
    *lfd = raw_listen(tr, ep, sizeof ep);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_connect(d, ep);
    raw_accept(*lfd, c);
    raw_hs_accepting(c, ZLINK_ROUTER, "raw", ZLINK_DEALER, "D", 1, 0);
    return d;
}

/* A raw DEALER with routing id rid connected to ROUTER r bound at ep. */
static void raw_dealer_to(raw_t *c, const char *ep, const char *rid, const char *r_rid)
{
    raw_connect(c, ep);
    raw_hs_connecting(c, ZLINK_DEALER, rid, ZLINK_ROUTER, r_rid, 1, 0);
}

/* ================================================================= cases */

/* --------------------------------------------------- socket/README 34 */

static void readme_34_body(void *ctx, const char *tr)
{
    void *d, *r;
    int k = 0;
    zlt_dr_pair(ctx, tr, &d, &r);
    zlink_routing_id_t to_d, empty;
    zlt_rid_set(&to_d, "D");
    memset(&empty, 0, sizeof empty);

    /* DEALER: rid must be NULL; ROUTER: a routing id is required. */
    SUB_FAILS(REQ(d, &to_d, 0, 0, &k, "x"), ZLINK_SUBMIT_INVALID_ARGUMENT, EINVAL);
    SUB_FAILS(REQ(d, &to_d, ZLINK_DONTWAIT, 0, &k, "x"), ZLINK_SUBMIT_INVALID_ARGUMENT, EINVAL);
    SUB_FAILS(REQ(r, NULL, 0, 0, &k, "x"), ZLINK_SUBMIT_INVALID_ARGUMENT, EINVAL);
    SUB_FAILS(REQ(r, &empty, 0, 0, &k, "x"), ZLINK_SUBMIT_INVALID_ARGUMENT, EINVAL);

    /* ROUTER -> DEALER peer: NOT_ADMITTED/EPROTOTYPE (NONE and DONTWAIT),
     * id 0; plain DATA to the same DEALER is fine and is the DEALER's next
     * record (the refused requests never left). */
    SUB_FAILS(REQ(r, &to_d, 0, 0, &k, "req-to-dealer"), ZLINK_SUBMIT_NOT_ADMITTED, EPROTOTYPE);
    SUB_FAILS(REQ(r, &to_d, ZLINK_DONTWAIT, 0, &k, "req-to-dealer"), ZLINK_SUBMIT_NOT_ADMITTED,
              EPROTOTYPE);
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "data-ok", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "data-ok");
    CQ_NONE(r);

    /* DEALER with rid NULL: the request goes to its ROUTER peer. */
    rrec_t a;
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    RREQ(r, &a, "D", "q");
    REPLY_OK(r, &a.rid, a.tok, "a");
    CQ_OK(d, id, &k, NULL, "a");
    CQ_NONE(d);
}

static void readme_34_request_targets(void)
{
    covers("socket/README/34");
    per_transport(readme_34_body, true);

    /* Other socket types: NOT_SUPPORTED/ENOTSUP, parts consumed, id 0;
     * zlink_reply on anything but a ROUTER likewise. */
    void *ctx = zlt_ctx_new();
    /* (XPUB and XSUB are not in this build: zlink_socket refuses them.) */
    const int types[] = {ZLINK_PAIR, ZLINK_PUB, ZLINK_SUB, ZLINK_STREAM};
    zlink_routing_id_t rid;
    zlt_rid_set(&rid, "abcd");
    int k = 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        void *s = zlink_socket(ctx, types[i]);
        ZT_CHECK(s != NULL);
        SUB_FAILS(REQ(s, NULL, 0, 0, &k, "x"), ZLINK_SUBMIT_NOT_SUPPORTED, ENOTSUP);
        SUB_FAILS(REQ(s, NULL, ZLINK_DONTWAIT, 0, &k, "x", "y"), ZLINK_SUBMIT_NOT_SUPPORTED,
                  ENOTSUP);
        SUB_FAILS(REQ(s, &rid, 0, 0, &k, "x"), ZLINK_SUBMIT_NOT_SUPPORTED, ENOTSUP);
        SUB_FAILS(REPLY(s, &rid, 1, "x"), ZLINK_SUBMIT_NOT_SUPPORTED, ENOTSUP);
        ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
    }
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    SUB_FAILS(REPLY(d, &rid, 1, "x"), ZLINK_SUBMIT_NOT_SUPPORTED, ENOTSUP);
    zlt_finish(ctx, d);
}

/* --------------------------------------------------- socket/README 35 */

struct later_connect {
    void *s;
    const char *ep;
    int delay_ms;
};

static void *connect_later(void *arg)
{
    struct later_connect *a = arg;
    zt_sleep_ms(a->delay_ms); /* the time between "call entered" and "admitted" */
    zlt_connect(a->s, a->ep);
    return NULL;
}

static void readme_35_body(void *ctx, const char *tr)
{
    int k1 = 0, k2 = 0, k3 = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a;

    /* Admitted without id_out: still exactly one REQUEST record, with a
     * nonzero id and the context. */
    zlink_msg_t m;
    zlt_msg_set(&m, "no-id-out", 9);
    ZT_EQ_INT(zlink_request(d, NULL, &m, 1, 0, 0, &k1, NULL), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    RREQ(r, &a, "D", "no-id-out");
    REPLY_OK(r, &a.rid, a.tok, "r1");
    zlink_completion_t c;
    ZT_EQ_INT(cq_recv(d, &c, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(c.kind, ZLINK_COMPLETION_REQUEST);
    ZT_CHECK(c.completion_id != 0);
    zlink_completion_id_t first = c.completion_id;
    ZT_CHECK(c.user_context == &k1);
    ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
    parts_are(__FILE__, __LINE__, c.reply_parts, c.reply_part_count, ZLT_STRS("r1"), 1);
    zlink_completion_close(&c);
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence");
    CQ_NONE(d);

    /* With id_out: a nonzero id, distinct from the first. */
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k2, "with-id");
    ZT_CHECK(id != first);
    RREQ(r, &a, "D", "with-id");
    REPLY_OK(r, &a.rid, a.tok, "r2");
    CQ_OK(d, id, &k2, NULL, "r2");
    CQ_NONE(d);

    /* Failures: id 0, no completion, no context echo. */
    zlink_routing_id_t nobody;
    zlt_rid_set(&nobody, "nobody");
    SUB_FAILS(REQ(r, &nobody, 0, 0, &k3, "x"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    SUB_FAILS(REQ(r, &nobody, ZLINK_DONTWAIT, 0, &k3, "x"), ZLINK_SUBMIT_NOT_CONNECTED,
              EHOSTUNREACH);
    zlink_routing_id_t to_d;
    zlt_rid_set(&to_d, "D");
    SUB_FAILS(REQ(r, &to_d, 0, 0, &k3, "x"), ZLINK_SUBMIT_NOT_ADMITTED, EPROTOTYPE);
    SUB_FAILS(REQ(d, NULL, 0x4, 0, &k3, "x"), ZLINK_SUBMIT_INVALID_ARGUMENT, EINVAL);
    zlink_completion_id_t idz = 77;
    ZT_EQ_INT(zlink_request(d, NULL, &m, 0, 0, 0, &k3, &idz), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_U64(idz, 0);
    CQ_NONE(r);
    CQ_NONE(d);
    zlt_expect_no_data(d);
    zlt_router_expect_no_data(r);
}

static void readme_35_admitted_request_one_completion(void)
{
    covers("socket/README/35");
    per_transport(readme_35_body, false);

    /* The timeout counts from admission: a NONE request that waits longer
     * than its timeout for a ROUTER peer is still pending right after it
     * was admitted, and times out one timeout after that. */
    printf("# timeout from admission (inproc)\n");
    void *ctx = zlt_round_begin("inproc");
    int k = 0;
    char ep[256];
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_int(d, ZLINK_SNDTIMEO, T(5000));
    zlt_bind(d, "inproc", ep, sizeof ep);
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    const int delay = T(200), tmo = T(100);
    struct later_connect lc = {r, ep, delay};
    int64_t t0 = zt_now_ms();
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, connect_later, &lc), 0);
    zlink_completion_id_t id = REQ_OK(d, NULL, tmo, &k, "waited-for-a-router");
    int64_t admitted = zt_now_ms();
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    ZT_CHECK(admitted - t0 >= delay);
    CQ_NONE(d); /* counted from the call, it would be over by now */
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_TIMED_OUT);
    ZT_CHECK(zt_now_ms() - t0 >= delay + tmo);
    rrec_t a;
    RREQ(r, &a, NULL, "waited-for-a-router");
    zlt_round_end();
}

/* --------------------------------------------------- socket/README 36 */

static void readme_36_body(void *ctx, const char *tr)
{
    int k = 0, k2 = 0;
    char ep[256];
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_int(d, ZLINK_SNDTIMEO, T(50));
    zlt_bind(d, tr, ep, sizeof ep);

    /* No ROUTER peer: DONTWAIT -> BACKPRESSURED/EAGAIN with a wait token;
     * NONE -> BACKPRESSURED/EAGAIN after SNDTIMEO, id 0. */
    sub_t s = REQ(d, NULL, ZLINK_DONTWAIT, 0, &k, "refused");
    SUB_TOKEN(s);
    int64_t t0 = zt_now_ms();
    SUB_FAILS(REQ(d, NULL, 0, 0, &k2, "refused-too"), ZLINK_SUBMIT_BACKPRESSURED, EAGAIN);
    ZT_CHECK(zt_now_ms() - t0 >= T(50));
    CQ_NONE(d);

    /* A ROUTER appears: exactly one WRITABLE for the token. */
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_connect(r, ep);
    CQ_WRITABLE(d, s.id, &k);
    CQ_NONE(d);

    /* Nothing of the refused request was kept: the resubmitted request is
     * the ROUTER's first record. */
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "resubmitted");
    ZT_CHECK(id != s.id);
    rrec_t a;
    RREQ(r, &a, NULL, "resubmitted");
    REPLY_OK(r, &a.rid, a.tok, "done");
    CQ_OK(d, id, &k, NULL, "done");
    ZT_EQ_INT(zlt_send_str(d, "fence", 0), ZLINK_SUBMIT_OK);
    RDATA(r, &a, NULL, "fence");
    CQ_NONE(d);

    /* A ROUTER request with no route (MANDATORY): NOT_CONNECTED, no token. */
    zlink_routing_id_t nobody;
    zlt_rid_set(&nobody, "nobody");
    SUB_FAILS(REQ(r, &nobody, ZLINK_DONTWAIT, 0, &k, "x"), ZLINK_SUBMIT_NOT_CONNECTED,
              EHOSTUNREACH);
    CQ_NONE(r);
}

static void readme_36_dontwait_request_token(void)
{
    covers("socket/README/36");
    per_transport(readme_36_body, false);
}

/* --------------------------------------------------- socket/README 37 */

static void readme_37_body(void *ctx, const char *tr)
{
    int k = 0;
    char ep[256];
    void *r = router_bound(ctx, tr, NULL, ep, sizeof ep);
    void *d = zlt_dealer_to(ctx, r, ep, "D");
    zlink_routing_id_t other;
    zlt_rid_set(&other, "E");
    rrec_t a, b, c, e;

    /* Failures keep the token; only a successful reply consumes it. */
    zlink_completion_id_t id1 = REQ_OK(d, NULL, 0, &k, "q1");
    RREQ(r, &a, "D", "q1");
    SUB_FAILS(REPLY(r, &other, a.tok, "wrong-rid"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    SUB_FAILS(REPLY(r, &a.rid, a.tok + 1000, "unknown"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    SUB_FAILS(REPLY(r, &a.rid, 0, "token-0"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    REPLY_OK(r, &a.rid, a.tok, "r1");
    CQ_OK(d, id1, &k, NULL, "r1");
    SUB_FAILS(REPLY(r, &a.rid, a.tok, "used"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);

    /* The token survives the requester's timeout: the late reply is OK on
     * the ROUTER and dropped by the requester. */
    zlink_completion_id_t id2 = REQ_OK(d, NULL, T(50), &k, "q2");
    RREQ(r, &b, "D", "q2");
    CQ_END(d, id2, &k, NULL, ZLINK_REQUEST_TIMED_OUT);
    REPLY_OK(r, &b.rid, b.tok, "late");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence2", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence2");
    CQ_NONE(d);
    SUB_FAILS(REPLY(r, &b.rid, b.tok, "late-again"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);

    /* The token survives a disconnect of its source: the requester ends
     * NOT_CONNECTED; after the DEALER is back (same routing id) the reply
     * is still OK and the requester adds nothing. */
    zlink_completion_id_t id3 = REQ_OK(d, NULL, 0, &k, "q3");
    RREQ(r, &c, "D", "q3");
    ZT_EQ_INT(zlink_disconnect(d, ep), ZLINK_CONNECT_OK);
    CQ_END(d, id3, &k, NULL, ZLINK_REQUEST_NOT_CONNECTED);
    wait_route_gone(r, "D");
    zlt_connect(d, ep);
    ZT_EQ_INT(zlt_send_str(d, "back", 0), ZLINK_SUBMIT_OK);
    zlt_router_expect(r, "D", "back");
    REPLY_OK(r, &c.rid, c.tok, "after-reconnect");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence3", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence3");
    CQ_NONE(d);

    /* RID removal invalidates the token: after zlink_disconnect_rid the
     * token is gone, even once the same routing id is back. */
    zlink_completion_id_t id4 = REQ_OK(d, NULL, 0, &k, "q4");
    RREQ(r, &e, "D", "q4");
    ZT_EQ_INT(zlink_disconnect_rid(r, &e.rid), ZLINK_CONNECT_OK);
    CQ_END(d, id4, &k, NULL, ZLINK_REQUEST_NOT_CONNECTED);
    (void)zlink_disconnect(d, ep); /* tcp may already have reconnected */
    wait_route_gone(r, "D");
    zlt_connect(d, ep);
    ZT_EQ_INT(zlt_send_str(d, "back2", 0), ZLINK_SUBMIT_OK);
    zlt_router_expect(r, "D", "back2");
    SUB_FAILS(REPLY(r, &e.rid, e.tok, "stale-token"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
}

static void readme_37_token_consumed_only_by_successful_reply(void)
{
    covers("socket/README/37");
    per_transport(readme_37_body, false);
}

/* --------------------------------------------------- socket/README 40 */

static void readme_40_reply_failures_consumed_retry(void)
{
    covers("socket/README/40");
    int k = 0;
    char ep[256];

    /* BACKPRESSURED (inproc, exact): the DEALER's pipe is full of DATA;
     * the reply fails, its parts are consumed, the token is kept, and the
     * retry after the DEALER drained is OK. */
    printf("# transport inproc\n");
    void *ctx = zlt_round_begin("inproc");
    void *r = router_bound(ctx, "inproc", NULL, ep, sizeof ep);
    zlt_set_u64(r, ZLINK_SNDHWM, 2000);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_u64(d, ZLINK_RCVHWM, 2000);
    zlt_set_rid(d, "D");
    zlt_connect(d, ep);
    ZT_EQ_INT(zlt_send_str(d, "hello", 0), ZLINK_SUBMIT_OK);
    zlt_router_expect(r, "D", "hello");
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    rrec_t a;
    RREQ(r, &a, "D", "q");
    zlt_set_int(r, ZLINK_SNDTIMEO, 0);
    const char *filler = "filler-filler-filler-filler-filler-filler-filler-filler";
    int n = 0;
    for (;;) {
        zlink_submit_result_t rc = zlt_send_rid_str(r, "D", filler, 0);
        if (rc == ZLINK_SUBMIT_BACKPRESSURED)
            break;
        ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
        ZT_CHECK(++n < 10000);
    }
    ZT_CHECK(n > 0);
    /* Top up with empty records (the smallest charge) until even those are
     * refused: no reply fits either. */
    int empties = 0;
    while (zlt_send_rid_str(r, "D", "", 0) == ZLINK_SUBMIT_OK)
        ZT_CHECK(++empties < 100);
    SUB_FAILS(REPLY(r, &a.rid, a.tok, "reply", "two-parts"), ZLINK_SUBMIT_BACKPRESSURED, EAGAIN);
    SUB_FAILS(REPLY(r, &a.rid, a.tok, ""), ZLINK_SUBMIT_BACKPRESSURED, EAGAIN);
    for (int i = 0; i < n; i++)
        zlt_expect_str(d, filler);
    for (int i = 0; i < empties; i++)
        zlt_expect_str(d, "");
    CQ_NONE(d);
    REPLY_OK(r, &a.rid, a.tok, "retried");
    CQ_OK(d, id, &k, NULL, "retried");
    zlt_round_end();

    /* TERMINATED: after the context was shut down; parts consumed, and a
     * retry is allowed (and fails the same way). */
    for (int t = 0; t < 2; t++) {
        const char *tr = t == 0 ? "inproc" : "tcp";
        printf("# transport %s (TERMINATED)\n", tr);
        ctx = zlt_round_begin(tr);
        zlt_dr_pair(ctx, tr, &d, &r);
        REQ_OK(d, NULL, 0, &k, "q");
        RREQ(r, &a, "D", "q");
        ZT_EQ_INT(zlink_ctx_shutdown(ctx), ZLINK_CLOSE_OK);
        SUB_FAILS(REPLY(r, &a.rid, a.tok, "too-late"), ZLINK_SUBMIT_TERMINATED, ETERM);
        SUB_FAILS(REPLY(r, &a.rid, a.tok, "retry", "x"), ZLINK_SUBMIT_TERMINATED, ETERM);
        /* The requester's pending request gives no record: its completion
         * receive is TERMINATED (the request is discarded at close; ASan's
         * leak check sees it freed). */
        zlink_completion_t c;
        ZT_EQ_INT(cq_recv(d, &c, ZLINK_DONTWAIT), ZLINK_RECV_TERMINATED);
        ZT_EQ_INT(zlink_errno(), ETERM);
        zlt_round_end();
    }
}

/* --------------------------------------------------- socket/README 41 */

static void readme_41_body(void *ctx, const char *tr)
{
    int k1 = 0, k2 = 0;
    char ep[256];
    void *r = router_bound(ctx, tr, NULL, ep, sizeof ep);
    void *d1 = zlt_dealer_to(ctx, r, ep, "D1");
    void *d2 = zlt_dealer_to(ctx, r, ep, "D2");
    rrec_t a, o;

    zlink_completion_id_t id = REQ_OK(d1, NULL, 0, &k1, "keep-me");
    RREQ(r, &a, "D1", "keep-me");
    /* Other traffic meanwhile: requests answered, DATA both ways. */
    for (int i = 0; i < 3; i++) {
        zlink_completion_id_t oid = REQ_OK(d2, NULL, 0, &k2, "other");
        RREQ(r, &o, "D2", "other");
        ZT_CHECK(o.tok != a.tok);
        REPLY_OK(r, &o.rid, o.tok, "done");
        CQ_OK(d2, oid, &k2, NULL, "done");
    }
    ZT_EQ_INT(zlt_send_rid_str(r, "D1", "down", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d1, "down");
    ZT_EQ_INT(zlt_send_str(d1, "up", 0), ZLINK_SUBMIT_OK);
    RDATA(r, &o, "D1", "up");
    CQ_NONE(d1);

    /* The unanswered token is still good; one empty message answers it,
     * and that consumes it. */
    REPLY_OK(r, &a.rid, a.tok, "");
    CQ_OK(d1, id, &k1, NULL, "");
    SUB_FAILS(REPLY(r, &a.rid, a.tok, "again"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    ZT_EQ_INT(zlt_send_rid_str(r, "D1", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d1, "fence");
    CQ_NONE(d1);
}

static void readme_41_unanswered_token_persists(void)
{
    covers("socket/README/41");
    per_transport(readme_41_body, false);
}

/* --------------------------------------------------- socket/README 42 */

static void readme_42_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a;

    /* DATA ahead of the REPLY: the reply cannot pass it, the timeout wins,
     * and the late reply is ignored. */
    int64_t t0 = zt_now_ms();
    zlink_completion_id_t id = REQ_OK(d, NULL, T(80), &k, "q");
    RREQ(r, &a, "D", "q");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "ahead", 0), ZLINK_SUBMIT_OK);
    REPLY_OK(r, &a.rid, a.tok, "stuck-behind-data");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "behind", 0), ZLINK_SUBMIT_OK);
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_TIMED_OUT);
    ZT_CHECK(zt_now_ms() - t0 >= T(80));
    zlt_expect_str(d, "ahead");
    zlt_expect_str(d, "behind");
    CQ_NONE(d);

    /* A local PAUSE ahead of the REPLY: the ROUTER cannot send it (BP), the
     * timeout wins; after RESUME the retried reply is OK on the ROUTER (the
     * token survived both) and ignored by the requester. */
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(d, ZLINK_RECEIVE_FLOW_PAUSED), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_send_str(d, "paused", 0), ZLINK_SUBMIT_OK);
    RDATA(r, &a, "D", "paused"); /* FLOWSTATE travels ahead of it */
    id = REQ_OK(d, NULL, T(80), &k, "qp");
    RREQ(r, &a, "D", "qp");
    zlt_set_int(r, ZLINK_SNDTIMEO, 0);
    SUB_FAILS(REPLY(r, &a.rid, a.tok, "held"), ZLINK_SUBMIT_BACKPRESSURED, EAGAIN);
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_TIMED_OUT);
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(d, ZLINK_RECEIVE_FLOW_RUNNING), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_send_str(d, "resumed", 0), ZLINK_SUBMIT_OK);
    rrec_t x;
    RDATA(r, &x, "D", "resumed");
    zlt_set_int(r, ZLINK_SNDTIMEO, T(2000));
    REPLY_OK(r, &a.rid, a.tok, "after-resume");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence");
    CQ_NONE(d);
}

static void readme_42_data_or_pause_ahead_of_reply(void)
{
    covers("socket/README/42");
    per_transport(readme_42_body, false);
}

/* --------------------------------------------------- socket/README 49 */

static void readme_49_body(void *ctx, const char *tr)
{
    int k[4] = {0, 0, 0, 0};
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a[4];
    zlink_completion_id_t id[4];
    id[1] = REQ_OK(d, NULL, 0, &k[1], "q1");
    id[2] = REQ_OK(d, NULL, 0, &k[2], "q2");
    id[3] = REQ_OK(d, NULL, 0, &k[3], "q3");
    ZT_CHECK(id[1] != id[2] && id[2] != id[3] && id[1] != id[3]);
    RREQ(r, &a[1], "D", "q1");
    RREQ(r, &a[2], "D", "q2");
    RREQ(r, &a[3], "D", "q3");
    /* Answered 3, 1, 2: the records come in that (append) order. */
    REPLY_OK(r, &a[3].rid, a[3].tok, "a3");
    REPLY_OK(r, &a[1].rid, a[1].tok, "a1");
    REPLY_OK(r, &a[2].rid, a[2].tok, "a2");
    CQ_OK(d, id[3], &k[3], NULL, "a3");
    CQ_OK(d, id[1], &k[1], NULL, "a1");
    CQ_OK(d, id[2], &k[2], NULL, "a2");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence");
    CQ_NONE(d);
}

/* REQUEST and WRITABLE records share one queue in the order they were
 * published (publication happens when the socket is looked at; a
 * zero-timeout POLLOUT poll looks). */
static void readme_49_mixed_kinds_append_order(void)
{
    covers("socket/README/49 (REQUEST and WRITABLE records in one queue)");
    void *ctx = zlt_round_begin("inproc");
    char ep[256];
    void *r = router_bound(ctx, "inproc", NULL, ep, sizeof ep);
    zlt_set_u64(r, ZLINK_RCVHWM, 2000);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_set_u64(d, ZLINK_SNDHWM, 2000);
    zlt_connect(d, ep);
    int ka = 0, kt = 0, kb = 0;
    zlink_completion_id_t ida = REQ_OK(d, NULL, 0, &ka, "a");
    rrec_t qa, qb, x;
    RREQ(r, &qa, "D", "a");
    /* Fill the DEALER -> ROUTER pipe: the refusal leaves a wait token. */
    int n = 0;
    zlink_completion_id_t tok = 0;
    for (;;) {
        zlink_msg_t m;
        zlt_msg_set(&m, "", 0);
        zlink_submit_result_t rc = zlink_send(d, &m, 1, ZLINK_DONTWAIT, &kt, &tok);
        if (rc == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
            break;
        }
        ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
        ZT_CHECK(++n < 10000);
    }
    ZT_CHECK(tok != 0 && tok != ida);
    zlink_pollitem_t it = {d, -1, ZLINK_POLLOUT, 0};
    REPLY_OK(r, &qa.rid, qa.tok, "ra");
    ZT_CHECK(zlink_poll(&it, 1, 0, NULL) >= 0); /* the REPLY is published */
    for (int i = 0; i < n; i++)
        RDATA(r, &x, "D", "");
    ZT_EQ_INT(zlink_poll(&it, 1, 0, NULL), 1); /* the WRITABLE is published */
    zlink_completion_id_t idb = REQ_OK(d, NULL, 0, &kb, "b");
    RREQ(r, &qb, "D", "b");
    REPLY_OK(r, &qb.rid, qb.tok, "rb");
    CQ_OK(d, ida, &ka, NULL, "ra");
    CQ_WRITABLE(d, tok, &kt);
    CQ_OK(d, idb, &kb, NULL, "rb");
    CQ_NONE(d);
    ZT_CHECK(ida != idb && idb != tok);
    zlt_round_end();
}

static void readme_49_interleaved_append_order(void)
{
    covers("socket/README/49");
    per_transport(readme_49_body, false);
}

/* ------------------------------------------------------ 03-errors 7 */

static void errors_07_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    zlink_routing_id_t to_d;
    zlt_rid_set(&to_d, "D");
    for (int i = 0; i < 3; i++)
        SUB_FAILS(REQ(r, &to_d, i == 1 ? ZLINK_DONTWAIT : 0, 0, &k, "req", "two"),
                  ZLINK_SUBMIT_NOT_ADMITTED, EPROTOTYPE);
    CQ_NONE(r);
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "data-is-fine", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "data-is-fine");
    zlt_expect_no_data(d);
}

static void errors_07_router_to_dealer_not_admitted(void)
{
    covers("03-errors/7");
    per_transport(errors_07_body, false);
}

/* ------------------------------------------------------ 03-errors 9 */

static void errors_09_body(void *ctx, const char *tr)
{
    int k = 0;
    char ep[256];
    rrec_t a;
    void *r = router_bound(ctx, tr, NULL, ep, sizeof ep);
    void *d = zlt_dealer_to(ctx, r, ep, "D");

    /* Reply: one record; a second reply is refused; nothing more comes. */
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    RREQ(r, &a, "D", "q");
    REPLY_OK(r, &a.rid, a.tok, "once");
    SUB_FAILS(REPLY(r, &a.rid, a.tok, "twice"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    CQ_OK(d, id, &k, NULL, "once");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence");
    CQ_NONE(d);

    /* Timeout: one TIMED_OUT; the late reply adds nothing. */
    id = REQ_OK(d, NULL, T(50), &k, "q");
    RREQ(r, &a, "D", "q");
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_TIMED_OUT);
    REPLY_OK(r, &a.rid, a.tok, "late");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence");
    CQ_NONE(d);

    /* The requester disconnects: NOT_CONNECTED at once (the request's own
     * timeout, 5000 ms by default, is far away; the wait is RCVTIMEO,
     * 2000 ms). */
    id = REQ_OK(d, NULL, 0, &k, "q");
    RREQ(r, &a, "D", "q");
    ZT_EQ_INT(zlink_disconnect(d, ep), ZLINK_CONNECT_OK);
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_NOT_CONNECTED);
    CQ_NONE(d);

    /* The peer closes: NOT_CONNECTED at once, once. */
    wait_route_gone(r, "D");
    zlt_connect(d, ep);
    id = REQ_OK(d, NULL, 0, &k, "q");
    RREQ(r, &a, "D", "q");
    zlt_close(r);
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_NOT_CONNECTED);
    CQ_NONE(d);
}

static void errors_09_one_terminal_completion_per_id(void)
{
    covers("03-errors/9");
    per_transport(errors_09_body, false);
}

/* ------------------------------------------- 03-errors 10, ZMP 36, 44 */

typedef struct errmap {
    uint32_t err;
    int result;
} errmap_t;

static void errors_10_error_reply_errno_mapped(void)
{
    covers("03-errors/10");
    static const errmap_t map[] = {
        /* listed with the request family */
        {EPROTO, ZLINK_REQUEST_PROTOCOL_ERROR},
        {ENOCOMPATPROTO, ZLINK_REQUEST_PROTOCOL_ERROR},
        {EACCES, ZLINK_REQUEST_REJECTED},
        {ECONNREFUSED, ZLINK_REQUEST_REJECTED},
        {ECANCELED, ZLINK_REQUEST_REJECTED},
        {EEXIST, ZLINK_REQUEST_CONFLICT},
        {ESTALE, ZLINK_REQUEST_CONFLICT},
        {EINVAL, ZLINK_REQUEST_INVALID_ARGUMENT},
        {EFAULT, ZLINK_REQUEST_INVALID_ARGUMENT},
        {EFSM, ZLINK_REQUEST_INVALID_STATE},
        {EALREADY, ZLINK_REQUEST_INVALID_STATE},
        {EAGAIN, ZLINK_REQUEST_BACKPRESSURED},
        {ENOBUFS, ZLINK_REQUEST_BACKPRESSURED},
        /* the errno of the same-named rows of the other families */
        {ETIMEDOUT, ZLINK_REQUEST_TIMED_OUT},
        {ENOENT, ZLINK_REQUEST_NOT_FOUND},
        {ETERM, ZLINK_REQUEST_TERMINATED},
        {EBUSY, ZLINK_REQUEST_BUSY},
        {ENOTCONN, ZLINK_REQUEST_NOT_CONNECTED},
        {EHOSTUNREACH, ZLINK_REQUEST_NOT_CONNECTED},
        {ENOTSUP, ZLINK_REQUEST_NOT_SUPPORTED},
        /* unlisted -> INTERNAL */
        {EIO, ZLINK_REQUEST_INTERNAL},
        {EPERM, ZLINK_REQUEST_INTERNAL},
        {9999, ZLINK_REQUEST_INTERNAL},
        {ZLINK_HAUSNUMERO + 99, ZLINK_REQUEST_INTERNAL},
        {0xFFFFFFFFu, ZLINK_REQUEST_INTERNAL},
    };
    void *ctx = zlt_round_begin("tcp");
    int lfd, k = 0;
    raw_t c;
    void *d = dealer_to_raw_router(ctx, "tcp", &lfd, &c);
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
        uint64_t seq = RAW_EXPECT(&c, K_REQUEST, "q");
        raw_send_error_reply(&c, seq, map[i].err, ZLT_STRS("detail"), 1);
        cq_req(__FILE__, __LINE__, d, id, &k, map[i].result, NULL, true, ZLT_STRS("detail"), 1);
    }
    raw_close(&c);
    close(lfd);
    zlt_round_end();
}

static void zmp_36_error_reply_errno_part(void)
{
    covers("Protocol ZMP/36");
    void *ctx = zlt_round_begin("tcp");
    int lfd, k = 0;
    raw_t c;
    void *d = dealer_to_raw_router(ctx, "tcp", &lfd, &c);
    uint64_t seq;
    zlink_completion_id_t id;

    /* The errno part alone: mapped, no reply parts. */
    id = REQ_OK(d, NULL, 0, &k, "q");
    seq = RAW_EXPECT(&c, K_REQUEST, "q");
    raw_send_error_reply(&c, seq, ECONNREFUSED, NULL, 0);
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_REJECTED);

    /* More parts: stripped of the errno part, from index 0. */
    id = REQ_OK(d, NULL, 0, &k, "q");
    seq = RAW_EXPECT(&c, K_REQUEST, "q");
    raw_send_error_reply(&c, seq, EEXIST, ZLT_STRS("a", "", "c"), 3);
    CQ_ERR(d, id, &k, NULL, ZLINK_REQUEST_CONFLICT, "a", "", "c");

    /* A bad errno part (zero, 3 or 5 bytes, empty) is PROTOCOL_ERROR of
     * that reply; the connection stays up. */
    static const struct {
        const char *part;
        size_t len;
    } bad[] = {{"\0\0\0\0", 4}, {"\0\0\x10", 3}, {"\0\0\0\x10\0", 5}, {"", 0}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        id = REQ_OK(d, NULL, 0, &k, "q");
        seq = RAW_EXPECT(&c, K_REQUEST, "q");
        wire_t w;
        w_init(&w);
        w_frame(&w, 0x01, K_ERROR_REPLY, seq, bad[i].part, (uint32_t)bad[i].len);
        w_frame(&w, 0x00, K_DATA, 0, "rest", 4);
        raw_send(&c, &w);
        w_free(&w);
        CQ_RESULT(d, id, &k, NULL, ZLINK_REQUEST_PROTOCOL_ERROR);
    }
    id = REQ_OK(d, NULL, 0, &k, "still-up");
    seq = RAW_EXPECT(&c, K_REQUEST, "still-up");
    RAW_SEND(&c, K_REPLY, seq, "yes");
    CQ_OK(d, id, &k, NULL, "yes");
    ZT_CHECK(!c.closed);
    raw_close(&c);
    close(lfd);
    zlt_round_end();
}

static void zmp_44_error_reply_mapped_with_payload(void)
{
    covers("Protocol ZMP/44");
    void *ctx = zlt_round_begin("tcp");
    int lfd, k = 0;
    raw_t c;
    void *d = dealer_to_raw_router(ctx, "tcp", &lfd, &c);
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    uint64_t seq = RAW_EXPECT(&c, K_REQUEST, "q");
    raw_send_error_reply(&c, seq, EBUSY, ZLT_STRS("why", "more"), 2);
    CQ_ERR(d, id, &k, NULL, ZLINK_REQUEST_BUSY, "why", "more");

    /* A large rest part arrives whole. */
    enum { BIG = 100000 };
    char *big = malloc(BIG + 1);
    ZT_CHECK(big != NULL);
    for (int i = 0; i < BIG; i++)
        big[i] = (char)('a' + i % 26);
    big[BIG] = '\0';
    id = REQ_OK(d, NULL, 0, &k, "q");
    seq = RAW_EXPECT(&c, K_REQUEST, "q");
    const char *rest[] = {big};
    raw_send_error_reply(&c, seq, EINVAL, rest, 1);
    cq_req(__FILE__, __LINE__, d, id, &k, ZLINK_REQUEST_INVALID_ARGUMENT, NULL, true, rest, 1);
    free(big);
    raw_close(&c);
    close(lfd);
    zlt_round_end();
}

/* ---------------------------------------------------------- ROUTER 7 */

static void router_07_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a, b;
    ZT_EQ_INT(zlt_send_str(d, "data", 0), ZLINK_SUBMIT_OK);
    RDATA(r, &a, "D", "data");
    zlink_completion_id_t i1 = REQ_OK(d, NULL, 0, &k, "req1");
    zlink_completion_id_t i2 = REQ_OK(d, NULL, 0, &k, "req2");
    RREQ(r, &a, "D", "req1");
    RREQ(r, &b, "D", "req2");
    ZT_CHECK(a.tok != b.tok);
    REPLY_OK(r, &b.rid, b.tok, "r2");
    REPLY_OK(r, &a.rid, a.tok, "r1");
    CQ_OK(d, i2, &k, NULL, "r2");
    CQ_OK(d, i1, &k, NULL, "r1");
}

static void router_07_token_zero_for_data_nonzero_for_request(void)
{
    covers("ROUTER/7");
    per_transport(router_07_body, false);

    /* The token is not the wire sequence: a raw DEALER sends requests with
     * sequences it chose; no token equals its request's sequence. */
    printf("# raw DEALER (tcp)\n");
    void *ctx = zlt_round_begin("tcp");
    char ep[256];
    void *r = router_bound(ctx, "tcp", "R", ep, sizeof ep);
    raw_t c;
    raw_dealer_to(&c, ep, "raw", "R");
    RAW_SEND(&c, K_DATA, 0, "data");
    rrec_t a;
    RDATA(r, &a, "raw", "data");
    static const uint64_t seqs[] = {1, 2, 3, 1000, 0x8000000000000001ull};
    zlink_reply_token_t toks[5];
    for (int i = 0; i < 5; i++) {
        char text[32];
        snprintf(text, sizeof text, "seq-%d", i);
        RAW_SEND(&c, K_REQUEST, seqs[i], text);
        rrec_expect(__FILE__, __LINE__, r, &a, true, "raw", (const char *const[]){text}, 1);
        toks[i] = a.tok;
        for (int j = 0; j < i; j++)
            ZT_CHECK(toks[j] != toks[i]);
    }
    for (int i = 0; i < 5; i++) {
        if (toks[i] == seqs[i])
            ZT_FAIL("reply token %llu equals the wire sequence of its request",
                    (unsigned long long)toks[i]);
    }
    raw_close(&c);
    zlt_round_end();
}

/* ---------------------------------------------------------- ROUTER 9 */

static void router_09_body(void *ctx, const char *tr)
{
    int k1 = 0, k2 = 0, k3 = 0;
    char ep[256];
    rrec_t a;

    /* The requester names the server with CONNECT_ROUTING_ID. */
    void *srv = router_bound(ctx, tr, NULL, ep, sizeof ep);
    void *cli = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(cli, "cli");
    ZT_EQ_INT(zlink_setsockopt(cli, ZLINK_CONNECT_ROUTING_ID, "srv-alias", 9), ZLINK_CONFIG_OK);
    zlt_connect(cli, ep);
    zlink_completion_id_t id = REQ_ROUTABLE(cli, "srv-alias", 0, &k1, "hello-srv");
    RREQ(srv, &a, "cli", "hello-srv");
    REPLY_OK(srv, &a.rid, a.tok, "hi", "cli");
    CQ_OK(cli, id, &k1, "srv-alias", "hi", "cli");
    CQ_NONE(cli);

    /* The server requests from the client too: peer_rid is the target. */
    id = REQ_ROUTABLE(srv, "cli", 0, &k3, "server-asks");
    RREQ(cli, &a, "srv-alias", "server-asks");
    REPLY_OK(cli, &a.rid, a.tok, "client-answers");
    CQ_OK(srv, id, &k3, "cli", "client-answers");
    CQ_NONE(srv);

    /* The server sets its own routing id. */
    void *srv2 = router_bound(ctx, tr, "srv2", ep, sizeof ep);
    void *cli2 = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(cli2, "cli2");
    zlt_connect(cli2, ep);
    id = REQ_ROUTABLE(cli2, "srv2", 0, &k2, "hello-srv2");
    RREQ(srv2, &a, "cli2", "hello-srv2");
    REPLY_OK(srv2, &a.rid, a.tok, "hi2");
    CQ_OK(cli2, id, &k2, "srv2", "hi2");

    /* And it ends as a REQUEST record by timeout too, peer_rid kept. */
    id = REQ_ROUTABLE(cli2, "srv2", T(50), &k2, "unanswered");
    RREQ(srv2, &a, "cli2", "unanswered");
    CQ_END(cli2, id, &k2, "srv2", ZLINK_REQUEST_TIMED_OUT);
    CQ_NONE(cli2);
}

static void router_09_router_request_completes_as_request_record(void)
{
    covers("ROUTER/9");
    per_transport(router_09_body, true);
}

/* --------------------------------------------------------- ROUTER 15 */

static void router_15_body(void *ctx, const char *tr)
{
    int k = 0;
    char ep[256], ep2[256];
    rrec_t a, b;
    void *r1 = router_bound(ctx, tr, "R1", ep, sizeof ep);
    void *d = zlt_dealer_to(ctx, r1, ep, "D");
    void *r2 = router_bound(ctx, tr, "R2", ep2, sizeof ep2);
    zlt_connect(r1, ep2);

    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q", "payload");
    RREQ(r1, &a, "D", "q", "payload");
    /* R1 re-sends the same parts raw to R2: R2 gets plain DATA. */
    zlink_routing_id_t to;
    zlt_rid_set(&to, "R2");
    int64_t end = zt_now_ms() + T(3000);
    for (;;) {
        sub_t s = send_rid_v(__FILE__, __LINE__, r1, &to, ZLINK_DONTWAIT,
                             ZLT_STRS("q", "payload"), 2);
        if (s.rc == ZLINK_SUBMIT_OK)
            break;
        SUB_FAILS(s, ZLINK_SUBMIT_NOT_CONNECTED, EHOSTUNREACH);
        ZT_CHECK(zt_now_ms() < end);
        sched_yield();
    }
    RDATA(r2, &b, "R1", "q", "payload");
    /* No request semantics: R2 has no token to answer with. */
    SUB_FAILS(REPLY(r2, &b.rid, a.tok, "x"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    SUB_FAILS(REPLY(r2, &b.rid, 1, "x"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    CQ_NONE(r1);
    /* The original request is still R1's to answer. */
    REPLY_OK(r1, &a.rid, a.tok, "answered");
    CQ_OK(d, id, &k, NULL, "answered");
}

static void router_15_raw_resend_of_request_is_data(void)
{
    covers("ROUTER/15");
    per_transport(router_15_body, false);
}

/* --------------------------------------------------------- ROUTER 16 */

static void router_16_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    ZT_EQ_INT(zlt_send_str(d, "data", 0), ZLINK_SUBMIT_OK);
    zlink_msg_t parts[4];
    size_t count = 99;
    for (int f = 0; f < 2; f++) {
        ZT_EQ_INT(zlink_recv(r, NULL, parts, 4, &count, (zlink_recv_flags_t)f),
                  ZLINK_RECV_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        ZT_EQ_INT(count, 99);
    }
    /* Nothing was consumed: the REQUEST (with its token), then the DATA. */
    rrec_t a, b;
    RREQ(r, &a, "D", "q");
    RDATA(r, &b, "D", "data");
    REPLY_OK(r, &a.rid, a.tok, "a");
    CQ_OK(d, id, &k, NULL, "a");
}

static void router_16_zlink_recv_on_router_not_supported(void)
{
    covers("ROUTER/16");
    per_transport(router_16_body, false);
}

/* --------------------------------------------------------- ROUTER 17 */

static void router_17_body(void *ctx, const char *tr)
{
    int k1 = 0, k2 = 0;
    char ep[256];
    void *r = router_bound(ctx, tr, NULL, ep, sizeof ep);
    void *d1 = zlt_dealer_to(ctx, r, ep, "D1");
    void *d2 = zlt_dealer_to(ctx, r, ep, "D2");
    /* Each fresh DEALER's first request: both carry the same sequence. */
    zlink_completion_id_t i1 = REQ_OK(d1, NULL, 0, &k1, "from-1");
    zlink_completion_id_t i2 = REQ_OK(d2, NULL, 0, &k2, "from-2");
    /* Two connections: either may be received first. */
    rrec_t x, y, a, b;
    ZT_EQ_INT(rrecv(r, 0, &x), ZLINK_RECV_OK);
    ZT_EQ_INT(rrecv(r, 0, &y), ZLINK_RECV_OK);
    if (!zlt_rid_is(&x.rid, "D1")) {
        rrec_t t = x;
        x = y;
        y = t;
    }
    ZT_CHECK(zlt_rid_is(&x.rid, "D1") && zlt_rid_is(&y.rid, "D2"));
    parts_are(__FILE__, __LINE__, x.p, x.n, ZLT_STRS("from-1"), 1);
    parts_are(__FILE__, __LINE__, y.p, y.n, ZLT_STRS("from-2"), 1);
    zlink_multipart_close(x.p, x.n);
    zlink_multipart_close(y.p, y.n);
    a = x;
    b = y;
    ZT_CHECK(a.tok != 0 && b.tok != 0);
    ZT_CHECK(a.tok != b.tok);
    /* Mismatched routing id: refused, the token kept. */
    SUB_FAILS(REPLY(r, &a.rid, b.tok, "crossed"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    SUB_FAILS(REPLY(r, &b.rid, a.tok, "crossed"), ZLINK_SUBMIT_NOT_FOUND, ENOENT);
    /* Out of order: each reply reaches its own requester. */
    REPLY_OK(r, &b.rid, b.tok, "to-2");
    REPLY_OK(r, &a.rid, a.tok, "to-1");
    CQ_OK(d2, i2, &k2, NULL, "to-2");
    CQ_OK(d1, i1, &k1, NULL, "to-1");
    CQ_NONE(d1);
    CQ_NONE(d2);
}

static void router_17_same_sequence_distinct_tokens(void)
{
    covers("ROUTER/17");
    per_transport(router_17_body, false);

    /* Explicitly the same live sequence (5) from two raw DEALERs. */
    printf("# raw DEALERs (tcp)\n");
    void *ctx = zlt_round_begin("tcp");
    char ep[256];
    void *r = router_bound(ctx, "tcp", "R", ep, sizeof ep);
    raw_t c1, c2;
    raw_dealer_to(&c1, ep, "raw1", "R");
    raw_dealer_to(&c2, ep, "raw2", "R");
    RAW_SEND(&c1, K_REQUEST, 5, "one");
    rrec_t a, b;
    RREQ(r, &a, "raw1", "one");
    RAW_SEND(&c2, K_REQUEST, 5, "two");
    RREQ(r, &b, "raw2", "two");
    ZT_CHECK(a.tok != b.tok);
    REPLY_OK(r, &b.rid, b.tok, "to-two");
    REPLY_OK(r, &a.rid, a.tok, "to-one");
    ZT_EQ_U64(RAW_EXPECT(&c2, K_REPLY, "to-two"), 5);
    ZT_EQ_U64(RAW_EXPECT(&c1, K_REPLY, "to-one"), 5);
    raw_close(&c1);
    raw_close(&c2);
    zlt_round_end();
}

/* ---------------------------------------------------------- DEALER 4 */

static void dealer_04_body(void *ctx, const char *tr)
{
    int ka = 0, kb = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a, b;
    ZT_EQ_INT(zlt_get_int(d, ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS), ZLINK_REQUEST_TIMEOUT_DFLT);
    ZT_EQ_INT(zlt_get_int(r, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS), ZLINK_REQUEST_TIMEOUT_DFLT);

    /* Default option (5000): a timeout_ms 0 request outlives an explicit
     * 80 ms one, and is answered. */
    zlink_completion_id_t ia = REQ_OK(d, NULL, 0, &ka, "zero");
    zlink_completion_id_t ib = REQ_OK(d, NULL, T(80), &kb, "explicit");
    RREQ(r, &a, "D", "zero");
    RREQ(r, &b, "D", "explicit");
    CQ_END(d, ib, &kb, NULL, ZLINK_REQUEST_TIMED_OUT);
    CQ_NONE(d);
    REPLY_OK(r, &a.rid, a.tok, "answered");
    CQ_OK(d, ia, &ka, NULL, "answered");

    /* Option 80 ms: timeout_ms 0 uses it (counted from admission); an
     * explicit timeout overrides it. */
    zlt_set_int_check(d, ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS, T(80));
    int64_t t0 = zt_now_ms();
    ia = REQ_OK(d, NULL, 0, &ka, "zero-option");
    ib = REQ_OK(d, NULL, T(10000), &kb, "explicit-long");
    RREQ(r, &a, "D", "zero-option");
    RREQ(r, &b, "D", "explicit-long");
    CQ_END(d, ia, &ka, NULL, ZLINK_REQUEST_TIMED_OUT);
    int64_t el = zt_now_ms() - t0;
    ZT_CHECK(el >= T(80));
    ZT_CHECK(el < T(80) + T(1500));
    CQ_NONE(d);
    REPLY_OK(r, &b.rid, b.tok, "long-answered");
    CQ_OK(d, ib, &kb, NULL, "long-answered");

    /* ROUTER: ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS likewise. */
    char ep[256];
    void *srv = router_bound(ctx, tr, "srv", ep, sizeof ep);
    void *cli = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(cli, "cli");
    zlt_set_int_check(cli, ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, T(80));
    zlt_connect(cli, ep);
    t0 = zt_now_ms();
    ia = REQ_ROUTABLE(cli, "srv", 0, &ka, "router-zero");
    RREQ(srv, &a, "cli", "router-zero");
    CQ_END(cli, ia, &ka, "srv", ZLINK_REQUEST_TIMED_OUT);
    el = zt_now_ms() - t0;
    ZT_CHECK(el >= T(80));
    ZT_CHECK(el < T(80) + T(1500));
}

static void dealer_04_timeout_zero_uses_option(void)
{
    covers("DEALER/4");
    per_transport(dealer_04_body, false);
}

/* --------------------------------------------------------- DEALER 26 */

static void dealer_26_body(void *ctx, const char *tr)
{
    int k = 0, k2 = 0;
    char ep[256], buf[64];
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_int(d, ZLINK_SNDTIMEO, T(50));
    zlt_bind(d, tr, ep, sizeof ep);
    void *dd = zlt_sock(ctx, ZLINK_DEALER);
    zlt_connect(dd, ep);
    ZT_EQ_INT(zlt_send_str(dd, "peer-up", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "peer-up"); /* also: rid NULL on a DEALER receive */

    /* Only a DEALER peer: no request can be placed. */
    sub_t s = REQ(d, NULL, ZLINK_DONTWAIT, 0, &k, "no-router");
    SUB_TOKEN(s);
    int64_t t0 = zt_now_ms();
    SUB_FAILS(REQ(d, NULL, 0, 0, &k2, "no-router-none"), ZLINK_SUBMIT_BACKPRESSURED, EAGAIN);
    ZT_CHECK(zt_now_ms() - t0 >= T(50));
    /* Nothing reached the DEALER peer: DATA goes there, and it is first. */
    ZT_EQ_INT(zlt_send_str(d, "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(dd, "fence");
    zlt_expect_no_data(dd);
    /* The token's target is the request's candidates (ROUTER peers): a
     * WRITABLE now would say "retry" where a retry cannot succeed. */
    zlink_completion_t c;
    bool early_writable = cq_recv(d, &c, ZLINK_DONTWAIT) == ZLINK_RECV_OK;
    if (early_writable) {
        ZT_EQ_INT(c.kind, ZLINK_COMPLETION_WRITABLE);
        ZT_EQ_U64(c.completion_id, s.id);
        zlink_completion_close(&c);
        SUB_TOKEN(REQ(d, NULL, ZLINK_DONTWAIT, 0, &k, "retry-refused-again"));
        /* (that retry's token is published at once the same way) */
        while (cq_recv(d, &c, ZLINK_DONTWAIT) == ZLINK_RECV_OK) {
            ZT_EQ_INT(c.kind, ZLINK_COMPLETION_WRITABLE);
            zlink_completion_close(&c);
        }
    }

    /* A ROUTER peer joins: requests go to it, never to the DEALER. */
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_connect(r, ep);
    if (!early_writable)
        CQ_WRITABLE(d, s.id, &k);
    zlt_set_int(d, ZLINK_SNDTIMEO, T(2000));
    rrec_t a;
    zlink_completion_id_t ids[4];
    for (int i = 0; i < 4; i++)
        ids[i] = REQ_OK(d, NULL, 0, &k, "to-router");
    for (int i = 0; i < 4; i++) {
        RREQ(r, &a, NULL, "to-router");
        REPLY_OK(r, &a.rid, a.tok, "ok");
    }
    for (int i = 0; i < 4; i++)
        CQ_OK(d, ids[i], &k, NULL, "ok");
    /* DATA still goes to both; the DEALER peer's first record is DATA. */
    for (int i = 0; i < 3; i++)
        ZT_EQ_INT(zlt_send_str(d, "data", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlt_recv_str(dd, buf, sizeof buf, 0), ZLINK_RECV_OK);
    ZT_EQ_STR(buf, "data");
    if (early_writable)
        ZT_FAIL("a WRITABLE for the request's wait token was published while the DEALER "
                "had no ROUTER peer (only a DEALER peer); the retry it invites is refused");
}

static void dealer_26_no_requests_to_dealer_peers(void)
{
    covers("DEALER/26");
    per_transport(dealer_26_body, false);
}

/* -------------------------------------------------------- ZMP 2, 34 */

static void zmp_02_request_reply_header_16_bytes(void)
{
    covers("Protocol ZMP/2");
    void *ctx = zlt_round_begin("tcp");
    int lfd, k = 0;
    raw_t c;

    /* A DEALER's REQUEST: 16-byte first header (kind 1, MORE, size 1,
     * nonzero BE sequence not counted in size), later frames 8 bytes,
     * kind 0; no routing id on the wire. */
    void *d = dealer_to_raw_router(ctx, "tcp", &lfd, &c);
    zlink_completion_id_t i1 = REQ_OK(d, NULL, 0, &k, "q", "second-part");
    rfr_t f = raw_next_data(&c);
    static const uint8_t h1[8] = {0x5A, 0x01, 0x01, 0x01, 0, 0, 0, 1};
    ZT_EQ_MEM(f.start, h1, 8);
    ZT_EQ_INT(f.total, 17);
    uint64_t seq1 = be64(f.start + 8);
    ZT_CHECK(seq1 != 0);
    ZT_EQ_INT(f.start[16], 'q');
    f = raw_next(&c);
    static const uint8_t h2[8] = {0x5A, 0x01, 0x00, 0x00, 0, 0, 0, 11};
    ZT_EQ_MEM(f.start, h2, 8);
    ZT_EQ_INT(f.total, 19);
    ZT_EQ_MEM(f.start + 8, "second-part", 11);
    zlink_completion_id_t i2 = REQ_OK(d, NULL, 0, &k, "q2");
    uint64_t seq2 = RAW_EXPECT(&c, K_REQUEST, "q2");
    ZT_CHECK(seq2 != 0 && seq2 != seq1);
    /* REPLYs with a 16-byte header are taken by sequence. */
    RAW_SEND(&c, K_REPLY, seq2, "a2");
    RAW_SEND(&c, K_REPLY, seq1, "a1", "x");
    CQ_OK(d, i2, &k, NULL, "a2");
    CQ_OK(d, i1, &k, NULL, "a1", "x");
    raw_close(&c);
    close(lfd);

    /* A ROUTER's REPLY: byte-exact 16-byte header echoing the sequence. */
    char ep[256];
    void *r = router_bound(ctx, "tcp", "R", ep, sizeof ep);
    raw_dealer_to(&c, ep, "raw", "R");
    wire_t w;
    w_init(&w);
    static const uint8_t req[] = {0x5A, 0x01, 0x00, 0x01, 0, 0, 0, 1,    0x11, 0x22,
                                  0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 'q'};
    w_bytes(&w, req, sizeof req);
    raw_send(&c, &w);
    w_free(&w);
    rrec_t a;
    RREQ(r, &a, "raw", "q");
    REPLY_OK(r, &a.rid, a.tok, "ans", "2nd");
    f = raw_next_data(&c);
    static const uint8_t rep[] = {0x5A, 0x01, 0x01, 0x02, 0,    0,    0,    3,   0x11, 0x22,
                                  0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 'a', 'n',  's'};
    ZT_EQ_INT(f.total, sizeof rep);
    ZT_EQ_MEM(f.start, rep, sizeof rep);
    f = raw_next(&c);
    static const uint8_t rep2[] = {0x5A, 0x01, 0x00, 0x00, 0, 0, 0, 3, '2', 'n', 'd'};
    ZT_EQ_INT(f.total, sizeof rep2);
    ZT_EQ_MEM(f.start, rep2, sizeof rep2);
    raw_close(&c);
    zlt_round_end();
}

static void zmp_34_reply_echoes_sequence(void)
{
    covers("Protocol ZMP/34");
    void *ctx = zlt_round_begin("tcp");
    char ep[256];
    void *r = router_bound(ctx, "tcp", "R", ep, sizeof ep);
    raw_t c;
    raw_dealer_to(&c, ep, "raw", "R");
    static const uint64_t seqs[3] = {7, UINT64_MAX, 0x0102030405060708ull};
    rrec_t a[3];
    RAW_SEND(&c, K_REQUEST, seqs[0], "a");
    RAW_SEND(&c, K_REQUEST, seqs[1], "b");
    RAW_SEND(&c, K_REQUEST, seqs[2], "c", "c2");
    RREQ(r, &a[0], "raw", "a");
    RREQ(r, &a[1], "raw", "b");
    RREQ(r, &a[2], "raw", "c", "c2");
    REPLY_OK(r, &a[2].rid, a[2].tok, "rc");
    REPLY_OK(r, &a[0].rid, a[0].tok, "ra", "ra2");
    REPLY_OK(r, &a[1].rid, a[1].tok, "rb");
    /* Each REPLY echoes its request's sequence; its frames are exactly the
     * reply parts (no routing id). */
    ZT_EQ_U64(RAW_EXPECT(&c, K_REPLY, "rc"), seqs[2]);
    ZT_EQ_U64(RAW_EXPECT(&c, K_REPLY, "ra", "ra2"), seqs[0]);
    ZT_EQ_U64(RAW_EXPECT(&c, K_REPLY, "rb"), seqs[1]);
    raw_close(&c);
    zlt_round_end();
}

/* ------------------------------------------------------------ ZMP 32 */

static void zmp_32_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    enum { BIG = 70000 };
    unsigned char *big = malloc(BIG);
    ZT_CHECK(big != NULL);
    for (int i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 7);
    rrec_t rec[2];
    for (int how = 0; how < 2; how++) {
        zlink_msg_t p[3];
        zlt_msg_set(&p[0], "head", 4);
        zlt_msg_set(&p[1], "", 0);
        zlt_msg_set(&p[2], big, BIG);
        zlink_completion_id_t id = 0;
        if (how == 0)
            ZT_EQ_INT(zlink_send(d, p, 3, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        else
            ZT_EQ_INT(zlink_request(d, NULL, p, 3, 0, 0, &k, &id), ZLINK_SUBMIT_OK);
        zlink_multipart_close(p, 3);
        ZT_EQ_INT(rrecv(r, 0, &rec[how]), ZLINK_RECV_OK);
    }
    /* Same parts, same routing id, same route; only the token differs. */
    ZT_EQ_U64(rec[0].tok, 0);
    ZT_CHECK(rec[1].tok != 0);
    ZT_EQ_INT(rec[0].n, 3);
    ZT_EQ_INT(rec[1].n, 3);
    for (size_t i = 0; i < 3; i++) {
        ZT_EQ_INT(zlink_msg_size(&rec[0].p[i]), zlink_msg_size(&rec[1].p[i]));
        ZT_EQ_MEM(zlink_msg_data(&rec[0].p[i]), zlink_msg_data(&rec[1].p[i]),
                  zlink_msg_size(&rec[0].p[i]));
    }
    ZT_EQ_INT(zlink_msg_size(&rec[0].p[2]), BIG);
    ZT_EQ_MEM(zlink_msg_data(&rec[0].p[2]), big, BIG);
    ZT_CHECK(zlt_rid_eq(&rec[0].rid, &rec[1].rid));
    ZT_CHECK(zlt_rid_is(&rec[0].rid, "D"));
    ZT_EQ_U64(rec[0].gen, rec[1].gen);
    zlink_multipart_close(rec[0].p, rec[0].n);
    zlink_multipart_close(rec[1].p, rec[1].n);
    free(big);
    REPLY_OK(r, &rec[1].rid, rec[1].tok, "r");
    zlink_completion_t c;
    ZT_EQ_INT(cq_recv(d, &c, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
    zlink_completion_close(&c);
}

static void zmp_32_send_and_request_identical_to_receiver(void)
{
    covers("Protocol ZMP/32");
    per_transport(zmp_32_body, true);
}

/* ------------------------------------------------------------ ZMP 39 */

static void zmp_39_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a;
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    RREQ(r, &a, "D", "q");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "d1", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "d2", 0), ZLINK_SUBMIT_OK);
    REPLY_OK(r, &a.rid, a.tok, "reply");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "after", 0), ZLINK_SUBMIT_OK);
    /* inproc: the reply is queued once zlink_reply returned (exact);
     * tcp: it gets a window of 100 ms to arrive. No completion yet. */
    zlink_completion_t c;
    if (zlt_is_tcp(tr)) {
        zlt_set_int(d, ZLINK_RCVTIMEO, T(100));
        ZT_EQ_INT(cq_recv(d, &c, 0), ZLINK_RECV_NO_DATA);
        zlt_set_int(d, ZLINK_RCVTIMEO, T(2000));
    } else {
        CQ_NONE(d);
    }
    zlt_expect_str(d, "d1");
    CQ_NONE(d); /* d2 is still ahead of the reply */
    zlt_expect_str(d, "d2");
    /* The DATA ahead was dequeued: exactly one completion. */
    CQ_OK(d, id, &k, NULL, "reply");
    CQ_NONE(d);
    zlt_expect_str(d, "after");
    CQ_NONE(d);
}

static void zmp_39_data_before_reply(void)
{
    covers("Protocol ZMP/39");
    per_transport(zmp_39_body, false);
}

/* ------------------------------------------------------------ ZMP 40 */

static void zmp_40_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a;
    zlink_completion_id_t id = REQ_OK(d, NULL, T(80), &k, "q");
    RREQ(r, &a, "D", "q");
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_TIMED_OUT);
    REPLY_OK(r, &a.rid, a.tok, "late");
    ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(d, "fence");
    CQ_NONE(d);
    /* The connection is fine afterwards. */
    id = REQ_OK(d, NULL, 0, &k, "q2");
    RREQ(r, &a, "D", "q2");
    REPLY_OK(r, &a.rid, a.tok, "r2");
    CQ_OK(d, id, &k, NULL, "r2");
}

static void zmp_40_timeout_wins_late_reply_adds_none(void)
{
    covers("Protocol ZMP/40");
    per_transport(zmp_40_body, false);
}

/* -------------------------------------------------------- ZMP 41, 42 */

static void zmp_41_first_reply_completes(void)
{
    covers("Protocol ZMP/41");
    void *ctx = zlt_round_begin("tcp");
    int lfd, k = 0;
    raw_t c;
    void *d = dealer_to_raw_router(ctx, "tcp", &lfd, &c);
    /* REPLY then ERROR_REPLY for one sequence: the REPLY completes. */
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    uint64_t seq = RAW_EXPECT(&c, K_REQUEST, "q");
    RAW_SEND(&c, K_REPLY, seq, "first");
    raw_send_error_reply(&c, seq, EBUSY, ZLT_STRS("second"), 1);
    RAW_SEND(&c, K_DATA, 0, "fence");
    CQ_OK(d, id, &k, NULL, "first");
    zlt_expect_str(d, "fence");
    CQ_NONE(d);
    /* ERROR_REPLY then REPLY: the error reply completes. */
    id = REQ_OK(d, NULL, 0, &k, "q");
    seq = RAW_EXPECT(&c, K_REQUEST, "q");
    raw_send_error_reply(&c, seq, EBUSY, ZLT_STRS("first"), 1);
    RAW_SEND(&c, K_REPLY, seq, "second");
    RAW_SEND(&c, K_DATA, 0, "fence");
    CQ_ERR(d, id, &k, NULL, ZLINK_REQUEST_BUSY, "first");
    zlt_expect_str(d, "fence");
    CQ_NONE(d);
    raw_close(&c);
    close(lfd);
    zlt_round_end();
}

static void zmp_42_duplicate_replies_ignored(void)
{
    covers("Protocol ZMP/42");
    void *ctx = zlt_round_begin("tcp");
    int lfd, k = 0;
    raw_t c;
    void *d = dealer_to_raw_router(ctx, "tcp", &lfd, &c);
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    uint64_t seq = RAW_EXPECT(&c, K_REQUEST, "q");
    RAW_SEND(&c, K_REPLY, seq, "one");
    RAW_SEND(&c, K_REPLY, seq, "two");
    RAW_SEND(&c, K_REPLY, seq, "three");
    RAW_SEND(&c, K_DATA, 0, "fence");
    CQ_OK(d, id, &k, NULL, "one");
    zlt_expect_str(d, "fence");
    CQ_NONE(d);
    /* The connection stayed up: the next request uses it. */
    id = REQ_OK(d, NULL, 0, &k, "next");
    uint64_t seq2 = RAW_EXPECT(&c, K_REQUEST, "next");
    ZT_CHECK(seq2 != seq);
    RAW_SEND(&c, K_REPLY, seq2, "next-reply");
    CQ_OK(d, id, &k, NULL, "next-reply");
    ZT_CHECK(!c.closed);
    raw_close(&c);
    close(lfd);
    zlt_round_end();
}

/* ------------------------------------------------------------ ZMP 43 */

struct cq_waiter {
    void *s;
    zlink_completion_t c;
    zlink_recv_result_t rc;
    atomic_long tid;
    int64_t t_end;
};

static void *cq_wait_thread(void *arg)
{
    struct cq_waiter *w = arg;
    atomic_store(&w->tid, zt_gettid());
    w->rc = cq_recv(w->s, &w->c, 0);
    w->t_end = zt_now_ms();
    return NULL;
}

static void zmp_43_body(void *ctx, const char *tr)
{
    int k = 0;
    void *d, *r;
    zlt_dr_pair(ctx, tr, &d, &r);
    rrec_t a;
    const int tmo = T(100);
    zlt_set_int(d, ZLINK_RCVTIMEO, T(4000));

    /* The waiting thread is the requester: the wait ends at the request's
     * timeout, not at RCVTIMEO. */
    int64_t t0 = zt_now_ms();
    zlink_completion_id_t id = REQ_OK(d, NULL, (uint32_t)tmo, &k, "q");
    CQ_END(d, id, &k, NULL, ZLINK_REQUEST_TIMED_OUT);
    int64_t el = zt_now_ms() - t0;
    ZT_CHECK(el >= tmo && el < tmo + T(1500));
    RREQ(r, &a, "D", "q");

    /* Another thread already blocked in zlink_completion_recv (NONE, long
     * RCVTIMEO) before the request exists wakes at its timeout. */
    struct cq_waiter w;
    memset(&w, 0, sizeof w);
    w.s = d;
    atomic_init(&w.tid, 0);
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, cq_wait_thread, &w), 0);
    while (atomic_load(&w.tid) == 0)
        sched_yield();
    zt_wait_blocked(atomic_load(&w.tid));
    t0 = zt_now_ms();
    id = REQ_OK(d, NULL, (uint32_t)tmo, &k, "q2");
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    ZT_EQ_INT(w.rc, ZLINK_RECV_OK);
    ZT_EQ_INT(w.c.kind, ZLINK_COMPLETION_REQUEST);
    ZT_EQ_U64(w.c.completion_id, id);
    ZT_EQ_INT(w.c.request_result, ZLINK_REQUEST_TIMED_OUT);
    ZT_CHECK(w.c.reply_parts == NULL);
    zlink_completion_close(&w.c);
    el = w.t_end - t0;
    if (el < tmo || el >= tmo + T(1500))
        ZT_FAIL("the blocked completion receive returned after %lld ms; the request's "
                "timeout was %d ms (RCVTIMEO %d ms)", (long long)el, tmo, T(4000));
    RREQ(r, &a, "D", "q2");
    CQ_NONE(d);
}

static void zmp_43_timeout_timed_out(void)
{
    covers("Protocol ZMP/43");
    per_transport(zmp_43_body, false);
}

/* ------------------------------------------------------------ ZMP 46 */

static void zmp_46_on(const char *tr)
{
    printf("# transport %s\n", tr);
    void *ctx = zlt_round_begin(tr);
    int k = 0;
    char ep[256];
    raw_t l0, l1;

    /* DEALER -> ROUTER: one connection, lane count 1. */
    int lfd = raw_listen(tr, ep, sizeof ep);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_connect(d, ep);
    raw_accept(lfd, &l0);
    raw_hs_accepting(&l0, ZLINK_ROUTER, "raw", ZLINK_DEALER, "D", 1, 0);
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "dr");
    uint64_t seq = RAW_EXPECT(&l0, K_REQUEST, "dr");
    RAW_SEND(&l0, K_REPLY, seq, "dr-reply");
    CQ_OK(d, id, &k, NULL, "dr-reply");
    /* bounded window: no second connection comes */
    ZT_CHECK(!zr_poll_in(lfd, T(40)));
    raw_close(&l0);
    raw_unlisten(lfd, ep);

    /* ROUTER -> ROUTER: two connections (lane 0, then lane 1, same routing
     * id), both with lane count 2; a reply may come back on lane 1. */
    lfd = raw_listen(tr, ep, sizeof ep);
    void *r = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(r, "cli");
    zlt_connect(r, ep);
    raw_accept(lfd, &l0);
    raw_hs_accepting(&l0, ZLINK_ROUTER, "raw", ZLINK_ROUTER, "cli", 2, 0);
    raw_accept(lfd, &l1);
    raw_hs_accepting(&l1, ZLINK_ROUTER, "raw", ZLINK_ROUTER, "cli", 2, 1);
    id = REQ_ROUTABLE(r, "raw", 0, &k, "rr");
    seq = RAW_EXPECT(&l0, K_REQUEST, "rr");
    RAW_SEND(&l1, K_REPLY, seq, "rr-reply");
    CQ_OK(r, id, &k, "raw", "rr-reply");
    ZT_CHECK(!zr_poll_in(lfd, T(40)));
    raw_close(&l0);
    raw_close(&l1);
    raw_unlisten(lfd, ep);

    /* ROUTER -> DEALER: one connection, lane count 1. */
    lfd = raw_listen(tr, ep, sizeof ep);
    void *r2 = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_connect(r2, ep);
    raw_accept(lfd, &l0);
    raw_hs_accepting(&l0, ZLINK_DEALER, "rawd", ZLINK_ROUTER, NULL, 1, 0);
    ZT_CHECK(!zr_poll_in(lfd, T(40)));
    raw_close(&l0);
    raw_unlisten(lfd, ep);
    zlt_round_end();
}

static void zmp_46_connection_counts(void)
{
    covers("Protocol ZMP/46");
    zmp_46_on("tcp");
    zmp_46_on("ipc");
}


/* --------------------------------------------------- socket/README 38 */

#define TOKENS 65536
#define N1 36000 /* requests from D1 */
#define N2 36000 /* requests from D2 */

typedef struct live {
    zlink_reply_token_t tok;
    zlink_routing_id_t rid;
} live_t;

/* R receives one REQUEST (DONTWAIT); records it in lv. Returns the source
 * index (1 or 2) or 0 when nothing could be received. */
static int take_request(void *r, live_t *lv, int *seen)
{
    rrec_t x;
    zlink_recv_result_t rc = rrecv(r, ZLINK_DONTWAIT, &x);
    if (rc == ZLINK_RECV_NO_DATA)
        return 0;
    ZT_EQ_INT(rc, ZLINK_RECV_OK);
    ZT_CHECK(x.tok != 0);
    int src = zlt_rid_is(&x.rid, "D1") ? 1 : zlt_rid_is(&x.rid, "D2") ? 2 : 0;
    ZT_CHECK(src != 0);
    /* Per source, requests arrive in the order they were sent. */
    char want[32];
    snprintf(want, sizeof want, "%d-%d", src, seen[src]++);
    ZT_EQ_INT(x.n, 1);
    ZT_EQ_U64(zlink_msg_size(&x.p[0]), strlen(want));
    ZT_EQ_MEM(zlink_msg_data(&x.p[0]), want, strlen(want));
    zlink_multipart_close(x.p, x.n);
    lv->tok = x.tok;
    lv->rid = x.rid;
    return src;
}

static void answer(void *r, const live_t *lv)
{
    zlink_msg_t m;
    zlt_msg_set(&m, "ok", 2);
    ZT_EQ_INT(zlink_reply(r, &lv->rid, lv->tok, &m, 1), ZLINK_SUBMIT_OK);
}

static bool pollin(void *r)
{
    zlink_pollitem_t it = {r, -1, ZLINK_POLLIN, 0};
    int n = zlink_poll(&it, 1, 0, NULL);
    ZT_CHECK(n == 0 || n == 1);
    return n == 1;
}

/* With every reply token in use, the ROUTER holds back REQUESTs: their
 * sources wait (nothing dropped) while other records flow; each answer
 * lets one more REQUEST in, sources taking turns; in the end every request
 * of both requesters completes OK, in order, and DATA queued behind the
 * held REQUESTs arrives after them. */
static void readme_38_token_limit_pauses_source(void)
{
    covers("socket/README/38");
    void *ctx = zlt_round_begin("inproc");
    char ep[256];
    void *r = router_bound(ctx, "inproc", "R", ep, sizeof ep);
    void *d[4];
    const char *ids[4] = {NULL, "D1", "D2", "D3"};
    for (int i = 1; i <= 3; i++) {
        d[i] = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d[i], ids[i]);
        zlt_connect(d[i], ep);
    }
    int k = 0;
    const int count[3] = {0, N1, N2};
    for (int i = 1; i <= 2; i++) {
        for (int j = 0; j < count[i]; j++) {
            char text[32];
            snprintf(text, sizeof text, "%d-%d", i, j);
            const char *strs[1] = {text};
            sub_t q = request_v(__FILE__, __LINE__, d[i], NULL, 0, 600000, &k, strs, 1);
            ZT_EQ_INT(q.rc, ZLINK_SUBMIT_OK);
        }
        ZT_EQ_INT(zlt_send_str(d[i], "late", 0), ZLINK_SUBMIT_OK); /* behind them */
    }

    live_t *lv = calloc(N1 + N2, sizeof *lv);
    ZT_CHECK(lv != NULL);
    int seen[3] = {0, 0, 0};
    size_t got = 0;
    while (got < TOKENS) {
        if (take_request(r, &lv[got], seen) == 0)
            ZT_FAIL("only %zu requests readable before the token limit", got);
        got++;
    }
    ZT_CHECK(seen[1] > 0 && seen[2] > 0); /* both sources were read */
    /* At the limit: the heads of D1 and D2 are held, POLLIN is off ... */
    live_t extra;
    ZT_EQ_INT(take_request(r, &extra, seen), 0);
    ZT_CHECK(!pollin(r));
    /* ... but a source with DATA at its head is still read. */
    ZT_EQ_INT(zlt_send_str(d[3], "free", 0), ZLINK_SUBMIT_OK);
    ZT_CHECK(pollin(r));
    rrec_t x;
    RDATA(r, &x, "D3", "free");
    ZT_CHECK(!pollin(r));

    /* One answer, one more REQUEST; two answers, one from each source. */
    size_t next = 0;
    answer(r, &lv[next++]);
    ZT_CHECK(pollin(r));
    ZT_CHECK(take_request(r, &lv[got++], seen) != 0);
    ZT_EQ_INT(take_request(r, &extra, seen), 0);
    answer(r, &lv[next++]);
    answer(r, &lv[next++]);
    int a = take_request(r, &lv[got++], seen);
    int b = take_request(r, &lv[got++], seen);
    ZT_CHECK(a != 0 && b != 0 && a != b);
    ZT_EQ_INT(take_request(r, &extra, seen), 0);

    /* Everything else, answering as we go: nothing was dropped. */
    while (got < N1 + N2) {
        answer(r, &lv[next++]);
        int src = take_request(r, &lv[got], seen);
        if (src == 0)
            ZT_FAIL("request %zu did not come after an answer", got);
        got++;
    }
    while (next < got)
        answer(r, &lv[next++]);
    ZT_EQ_INT(seen[1], N1);
    ZT_EQ_INT(seen[2], N2);
    bool late[3] = {false, false, false};
    for (int i = 0; i < 2; i++) {
        RDATA(r, &x, NULL, "late");
        late[zlt_rid_is(&x.rid, "D1") ? 1 : zlt_rid_is(&x.rid, "D2") ? 2 : 0] = true;
    }
    ZT_CHECK(late[1] && late[2] && !late[0]);
    ZT_EQ_INT(rrecv(r, ZLINK_DONTWAIT, &x), ZLINK_RECV_NO_DATA);
    for (int i = 1; i <= 2; i++) {
        for (int j = 0; j < count[i]; j++) {
            zlink_completion_t c;
            ZT_EQ_INT(cq_recv(d[i], &c, 0), ZLINK_RECV_OK);
            ZT_EQ_INT(c.kind, ZLINK_COMPLETION_REQUEST);
            ZT_EQ_INT(c.request_result, ZLINK_REQUEST_OK);
            ZT_EQ_U64(c.completion_id, (uint64_t)j + 1); /* in admission order */
            zlink_completion_close(&c);
        }
        CQ_NONE(d[i]);
    }
    free(lv);
    zlt_round_end();
}

/* socket/README 33, the REQUEST half: 65,536 admitted requests hold every
 * completion slot; the next request, NONE or DONTWAIT, is BACKPRESSURED
 * (ENOBUFS) with id 0 and no wait token; the completion of an answered
 * request still holds its slot until it is received; then one request is
 * admitted again. */
static void readme_33_request_slots_backpressured(void)
{
    covers("socket/README/33 (REQUEST)");
    void *ctx = zlt_round_begin("inproc");
    char ep[256];
    void *r = router_bound(ctx, "inproc", "R", ep, sizeof ep);
    zlt_set_u64(r, ZLINK_RCVHWM, 0);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_rid(d, "D");
    zlt_set_u64(d, ZLINK_SNDHWM, 0);
    zlt_connect(d, ep);
    int k = 0;
    zlink_completion_id_t first = 0;
    for (int i = 0; i < TOKENS; i++) {
        zlink_completion_id_t id = REQ_OK(d, NULL, 600000, &k, "q");
        if (i == 0)
            first = id;
    }
    SUB_FAILS(REQ(d, NULL, 0, 600000, &k, "full"), ZLINK_SUBMIT_BACKPRESSURED, ENOBUFS);
    SUB_FAILS(REQ(d, NULL, ZLINK_DONTWAIT, 600000, &k, "full"), ZLINK_SUBMIT_BACKPRESSURED,
              ENOBUFS);
    rrec_t a;
    RREQ(r, &a, "D", "q");
    REPLY_OK(r, &a.rid, a.tok, "a");
    /* The reply arrives; its record holds the slot until received. */
    void *pl = zlink_poller_new();
    ZT_CHECK(pl != NULL);
    ZT_EQ_INT(zlink_poller_add(pl, d, NULL, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
    zlink_poller_event_t ev;
    ZT_EQ_INT(zlink_poller_wait(pl, &ev, 1, T(5000), NULL), 1);
    ZT_EQ_INT(ev.events, ZLINK_POLLCOMPLETION);
    ZT_EQ_INT(zlink_poller_destroy(&pl), ZLINK_CLOSE_OK);
    SUB_FAILS(REQ(d, NULL, ZLINK_DONTWAIT, 600000, &k, "still"), ZLINK_SUBMIT_BACKPRESSURED,
              ENOBUFS);
    CQ_OK(d, first, &k, NULL, "a");
    REQ_OK(d, NULL, 600000, &k, "again");
    SUB_FAILS(REQ(d, NULL, ZLINK_DONTWAIT, 600000, &k, "full"), ZLINK_SUBMIT_BACKPRESSURED,
              ENOBUFS);
    CQ_NONE(d); /* no WRITABLE for any refusal: none had a token */
    zlt_round_end();
}

/* --------------------------------------------------- socket/README 43 */

struct drainer {
    void *d;
    int n;
    atomic_bool started;
};

/* Receives n records on the DEALER once the main thread is (very likely)
 * blocked in its reply; `started` is set before the first receive, so a
 * reply that returns OK before it is set was admitted without room. */
static void *drain_later(void *arg)
{
    struct drainer *x = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL); /* lets the reply block first; correctness does not depend on it */
    atomic_store(&x->started, true);
    for (int i = 0; i < x->n; i++) {
        char buf[128];
        ZT_EQ_INT(zlt_recv_str(x->d, buf, sizeof buf, 0), ZLINK_RECV_OK);
    }
    return NULL;
}

/* A reply to a DEALER obeys the App lane: with the DEALER's pipe full, a
 * reply waits up to SNDTIMEO and fails BACKPRESSURED/EAGAIN after it (the
 * token kept); with room made by another thread while it waits, it is
 * admitted then, and only then. (To a ROUTER: the Cmp lane, HWM-free:
 * rr_cmp_lane_replies_pass_data_hwm_pause.) */
static void readme_43_reply_to_dealer_waits_sndtimeo(void)
{
    covers("socket/README/43");
    int k = 0;
    char ep[256];
    void *ctx = zlt_round_begin("inproc");
    void *r = router_bound(ctx, "inproc", NULL, ep, sizeof ep);
    zlt_set_u64(r, ZLINK_SNDHWM, 2000);
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    zlt_set_u64(d, ZLINK_RCVHWM, 2000);
    zlt_set_rid(d, "D");
    zlt_connect(d, ep);
    zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
    rrec_t a;
    RREQ(r, &a, "D", "q");
    int n = 0;
    while (zlt_send_rid_str(r, "D", "", ZLINK_DONTWAIT) == ZLINK_SUBMIT_OK)
        ZT_CHECK(++n < 10000);
    ZT_CHECK(n > 0);

    zlt_set_int(r, ZLINK_SNDTIMEO, T(100));
    int64_t t0 = zt_now_ms();
    SUB_FAILS(REPLY(r, &a.rid, a.tok, "late"), ZLINK_SUBMIT_BACKPRESSURED, EAGAIN);
    ZT_CHECK(zt_now_ms() - t0 >= T(100) - 1);

    zlt_set_int(r, ZLINK_SNDTIMEO, T(5000));
    struct drainer x = {d, n, false};
    pthread_t th;
    ZT_EQ_INT(pthread_create(&th, NULL, drain_later, &x), 0);
    REPLY_OK(r, &a.rid, a.tok, "waited");
    ZT_CHECK(atomic_load(&x.started)); /* admitted only once room was being made */
    ZT_EQ_INT(pthread_join(th, NULL), 0);
    CQ_OK(d, id, &k, NULL, "waited");
    zlt_round_end();
}

/* ---------------------------------------------------- ROUTER 14, 18, 20 */

/* A ROUTER receives replies only on a ROUTER peer's Completion lane: a
 * REPLY or ERROR_REPLY from a DEALER is a protocol error (ERROR 06, the
 * connection closes, nothing delivered); the ROUTER keeps serving others. */
static void router_14_reply_kind_is_protocol_error(void)
{
    covers("ROUTER/14");
    void *ctx = zlt_round_begin("tcp");
    char ep[256];
    void *r = router_bound(ctx, "tcp", "R", ep, sizeof ep);
    const uint8_t kinds[2] = {K_REPLY, K_ERROR_REPLY};
    for (int i = 0; i < 2; i++) {
        const char *id = i == 0 ? "bad0" : "bad1";
        raw_t c;
        raw_dealer_to(&c, ep, id, "R");
        RAW_SEND(&c, K_REQUEST, 1, "fine");
        rrec_t a;
        RREQ(r, &a, id, "fine");
        RAW_SEND(&c, kinds[i], 1, "not-for-a-router");
        raw_wait_closed(&c);
        ZT_EQ_INT(raw_error_code(&c), 0x06);
        raw_close(&c);
        rrec_t x;
        ZT_EQ_INT(rrecv(r, ZLINK_DONTWAIT, &x), ZLINK_RECV_NO_DATA);
        wait_route_gone(r, id);
    }
    raw_t ok;
    raw_dealer_to(&ok, ep, "good", "R");
    RAW_SEND(&ok, K_REQUEST, 1, "still-served");
    rrec_t a;
    RREQ(r, &a, "good", "still-served");
    REPLY_OK(r, &a.rid, a.tok, "yes");
    ZT_EQ_U64(RAW_EXPECT(&ok, K_REPLY, "yes"), 1);
    raw_close(&ok);
    zlt_round_end();
}

/* A source that reuses a sequence still live (not answered yet) breaks
 * the protocol: that REQUEST is not delivered and the connection closes.
 * Once answered, the sequence may be used again. */
static void router_18_live_sequence_reuse_closes(void)
{
    covers("ROUTER/18");
    void *ctx = zlt_round_begin("tcp");
    char ep[256];
    void *r = router_bound(ctx, "tcp", "R", ep, sizeof ep);
    raw_t c;
    raw_dealer_to(&c, ep, "src", "R");
    RAW_SEND(&c, K_REQUEST, 9, "first");
    rrec_t a, b, x;
    RREQ(r, &a, "src", "first");
    REPLY_OK(r, &a.rid, a.tok, "done");
    ZT_EQ_U64(RAW_EXPECT(&c, K_REPLY, "done"), 9);
    RAW_SEND(&c, K_REQUEST, 9, "again-after-answer");
    RREQ(r, &b, "src", "again-after-answer");
    ZT_CHECK(b.tok != a.tok);
    RAW_SEND(&c, K_REQUEST, 9, "while-live");
    /* The ROUTER finds the reuse when it takes the record: receives give
     * nothing, and the connection closes. */
    int64_t end = zt_now_ms() + T(5000);
    while (!c.closed) {
        ZT_EQ_INT(rrecv(r, ZLINK_DONTWAIT, &x), ZLINK_RECV_NO_DATA);
        (void)raw_fill(&c, 10);
        if (zt_now_ms() > end)
            ZT_FAIL("the connection that reused a live sequence is still open");
    }
    raw_close(&c);
    ZT_EQ_INT(rrecv(r, ZLINK_DONTWAIT, &x), ZLINK_RECV_NO_DATA);
    wait_route_gone(r, "src");
    zlt_round_end();
}

struct replier {
    void *r;
    zlink_routing_id_t rid;
    zlink_reply_token_t tok;
    pthread_barrier_t *go;
    zlink_submit_result_t rc;
    int err;
};

static void *reply_thread(void *arg)
{
    struct replier *x = arg;
    zlink_msg_t m;
    zlt_msg_set(&m, "once", 4);
    pthread_barrier_wait(x->go);
    x->rc = zlink_reply(x->r, &x->rid, x->tok, &m, 1);
    x->err = zlink_errno();
    ZT_EQ_U64(zlink_msg_size(&m), 0); /* consumed whatever the result */
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return NULL;
}

/* Two threads answer one token at once while the requester's pipe is full:
 * the first checks the token out and waits for room; the second gets
 * INVALID_STATE/EBUSY (or NOT_FOUND if the first already finished). Never
 * two OKs, never two replies on the wire. */
static void router_20_concurrent_reply_exclusive_checkout(void)
{
    covers("ROUTER/20 (exclusive checkout)");
    int busy_seen = 0;
    for (int round = 0; round < 20; round++) {
        void *ctx = zlt_round_begin("inproc");
        char ep[256];
        void *r = router_bound(ctx, "inproc", NULL, ep, sizeof ep);
        zlt_set_u64(r, ZLINK_SNDHWM, 2000);
        zlt_set_int(r, ZLINK_SNDTIMEO, T(5000));
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d, "D");
        zlt_set_u64(d, ZLINK_RCVHWM, 2000);
        zlt_connect(d, ep);
        int k = 0;
        zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q");
        rrec_t a;
        RREQ(r, &a, "D", "q");
        int n = 0;
        while (zlt_send_rid_str(r, "D", "", ZLINK_DONTWAIT) == ZLINK_SUBMIT_OK)
            ZT_CHECK(++n < 10000);
        pthread_barrier_t go;
        ZT_EQ_INT(pthread_barrier_init(&go, NULL, 3), 0);
        struct replier x[2];
        pthread_t th[2];
        for (int i = 0; i < 2; i++) {
            x[i] = (struct replier){r, a.rid, a.tok, &go, 0, 0};
            ZT_EQ_INT(pthread_create(&th[i], NULL, reply_thread, &x[i]), 0);
        }
        pthread_barrier_wait(&go);
        for (int i = 0; i < n; i++)
            zlt_expect_str(d, "");
        for (int i = 0; i < 2; i++)
            ZT_EQ_INT(pthread_join(th[i], NULL), 0);
        pthread_barrier_destroy(&go);
        int oks = 0;
        for (int i = 0; i < 2; i++) {
            if (x[i].rc == ZLINK_SUBMIT_OK) {
                oks++;
            } else if (x[i].rc == ZLINK_SUBMIT_INVALID_STATE) {
                ZT_EQ_INT(x[i].err, EBUSY);
                busy_seen++;
            } else {
                ZT_EQ_INT(x[i].rc, ZLINK_SUBMIT_NOT_FOUND);
                ZT_EQ_INT(x[i].err, ENOENT);
            }
        }
        ZT_EQ_INT(oks, 1);
        CQ_OK(d, id, &k, NULL, "once");
        ZT_EQ_INT(zlt_send_rid_str(r, "D", "fence", 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(d, "fence");
        CQ_NONE(d); /* one reply reached the requester */
        zlt_round_end();
    }
    printf("# %d of 20 rounds saw the second reply refused with EBUSY\n", busy_seen);
}

/* ZMP 26: a poller that watches a DEALER's completion queue before it ever
 * made a request sees nothing, and later reports the REQUEST record. */
static void zmp_26_completion_poller_before_first_request(void)
{
    covers("Protocol ZMP/26");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *d, *r;
        zlt_dr_pair(ctx, tr, &d, &r);
        void *pl = zlink_poller_new();
        ZT_CHECK(pl != NULL);
        ZT_EQ_INT(zlink_poller_add(pl, d, NULL, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_OK);
        zlink_poller_event_t ev;
        ZT_EQ_INT(zlink_poller_wait(pl, &ev, 1, 0, NULL), 0);
        CQ_NONE(d);
        int k = 0;
        zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "first");
        ZT_EQ_INT(zlink_poller_wait(pl, &ev, 1, 0, NULL), 0); /* not answered yet */
        rrec_t a;
        RREQ(r, &a, "D", "first");
        REPLY_OK(r, &a.rid, a.tok, "answer");
        ZT_EQ_INT(zlink_poller_wait(pl, &ev, 1, T(5000), NULL), 1);
        ZT_CHECK(ev.socket == d);
        ZT_EQ_INT(ev.events, ZLINK_POLLCOMPLETION);
        CQ_OK(d, id, &k, NULL, "answer");
        ZT_EQ_INT(zlink_poller_wait(pl, &ev, 1, 0, NULL), 0);
        ZT_EQ_INT(zlink_poller_destroy(&pl), ZLINK_CLOSE_OK);
    }
}

/* ------------------------------------ ROUTER-ROUTER: the Completion lane */

/* ROUTER a sends DATA to b until the App lane refuses (DONTWAIT
 * BACKPRESSURED, bounded); returns how many were admitted. */
static int fill_app_lane(void *a, const char *to)
{
    char body[1024];
    memset(body, 'd', sizeof body);
    zlink_routing_id_t rid;
    zlt_rid_set(&rid, to);
    for (int sent = 0; sent < 200000; sent++) {
        zlink_msg_t m;
        zlt_msg_set(&m, body, sizeof body);
        zlink_submit_result_t rc =
            zlink_send_rid(a, &rid, &m, 1, ZLINK_DONTWAIT, NULL, NULL);
        if (rc == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_EQ_INT(zlink_errno(), EAGAIN);
            ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
            return sent;
        }
        ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
    }
    ZT_FAIL("the App lane to '%s' never refused", to);
    return 0;
}

/* b receives exactly n 1 KiB DATA records, then nothing. */
static void drain_data(void *b, int n)
{
    for (int i = 0; i < n; i++) {
        rrec_t x;
        ZT_EQ_INT(rrecv(b, 0, &x), ZLINK_RECV_OK);
        ZT_EQ_INT(x.tok, 0);
        ZT_EQ_INT(x.n, 1);
        ZT_EQ_U64(zlink_msg_size(&x.p[0]), 1024);
        zlink_multipart_close(x.p, x.n);
    }
    rrec_t x;
    ZT_EQ_INT(rrecv(b, ZLINK_DONTWAIT, &x), ZLINK_RECV_NO_DATA);
}

static void rr_cmp_body(void *ctx, const char *tr)
{
    int k = 0;
    char ep[256];
    void *a = router_bound(ctx, tr, "A", ep, sizeof ep);
    zlt_set_u64(a, ZLINK_SNDHWM, 4096);
    zlt_set_int(a, ZLINK_SNDTIMEO, 0); /* a reply that had to wait fails at once */
    void *b = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(b, "B");
    zlt_set_u64(b, ZLINK_RCVHWM, 4096);
    if (zlt_is_tcp(tr)) {
        zlt_set_int(a, ZLINK_SNDBUF, 4096);
        zlt_set_int(b, ZLINK_RCVBUF, 4096);
    }
    zlt_connect(b, ep);
    zlink_routing_id_t to_a;
    zlt_rid_set(&to_a, "A");
    rrec_t q;

    /* b PAUSED: a may not send it DATA, but its replies still go. */
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(b, ZLINK_RECEIVE_FLOW_PAUSED), ZLINK_CONFIG_OK);
    zlink_completion_id_t id = REQ_ROUTABLE(b, "A", T(5000), &k, "q1");
    RREQ(a, &q, "B", "q1");
    int early = fill_app_lane(a, "B"); /* admitted before the PAUSE arrived */
    REPLY_OK(a, &q.rid, q.tok, "r1");
    CQ_OK(b, id, &k, "A", "r1");
    id = REQ_OK(b, &to_a, T(5000), &k, "q2");
    RREQ(a, &q, "B", "q2");
    zlink_msg_t why;
    zlt_msg_set(&why, "busy", 4);
    ZT_EQ_INT(zlink_reply_error(a, &q.rid, q.tok, EBUSY, &why, 1), ZLINK_SUBMIT_OK);
    CQ_ERR(b, id, &k, "A", ZLINK_REQUEST_BUSY, "busy");
    ZT_EQ_INT(zlink_socket_set_receive_flow_state(b, ZLINK_RECEIVE_FLOW_RUNNING), ZLINK_CONFIG_OK);
    drain_data(b, early);

    /* The App lane to b full of unread DATA: the reply passes it. */
    id = REQ_OK(b, &to_a, T(5000), &k, "q3");
    RREQ(a, &q, "B", "q3");
    int n = fill_app_lane(a, "B");
    ZT_CHECK(n > 0);
    REPLY_OK(a, &q.rid, q.tok, "r3");
    CQ_OK(b, id, &k, "A", "r3");
    CQ_NONE(b);
    drain_data(b, n);
}

static zlink_monitor_status_t status_of(void *s)
{
    zlink_monitor_config_t cfg = {0, 0, 0};
    void *m = zlink_socket_monitor_open(s, &cfg);
    ZT_CHECK(m != NULL);
    zlink_monitor_status_t st;
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(m, &st), ZLINK_CONFIG_OK);
    zlink_monitor_close(&m);
    return st;
}

/* Inproc R-R: a reply waiting on the Completion lane counts as pending on
 * both sides (sender: send side; requester: receive side) until the
 * requester takes it. */
static void rr_cmp_lane_counted_in_status(void)
{
    covers("ROUTER R-R: the Cmp lane is HWM-free but still counted in snapshots");
    void *ctx = zlt_round_begin("inproc");
    char ep[256];
    void *a = router_bound(ctx, "inproc", "A", ep, sizeof ep);
    void *b = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(b, "B");
    zlt_connect(b, ep);
    int k = 0;
    zlink_completion_id_t id = REQ_ROUTABLE(b, "A", T(5000), &k, "q");
    rrec_t q;
    RREQ(a, &q, "B", "q");
    zlink_monitor_status_t sa = status_of(a), sb = status_of(b);
    ZT_EQ_U64(sa.snd_pending_msgs, 0);
    ZT_EQ_U64(sb.rcv_pending_msgs, 0);
    REPLY_OK(a, &q.rid, q.tok, "0123456789");
    sa = status_of(a);
    sb = status_of(b);
    ZT_EQ_U64(sa.snd_pending_msgs, 1);
    ZT_EQ_U64(sa.snd_pending_bytes, 10 + 64);
    ZT_EQ_U64(sb.rcv_pending_msgs, 1);
    ZT_EQ_U64(sb.rcv_pending_bytes, 10 + 64);
    CQ_OK(b, id, &k, "A", "0123456789");
    sa = status_of(a);
    sb = status_of(b);
    ZT_EQ_U64(sa.snd_pending_msgs, 0);
    ZT_EQ_U64(sb.rcv_pending_msgs, 0);
    ZT_EQ_U64(sb.rcv_pending_bytes, 0);
    zlt_round_end();
}

/* A reply that reached a DEALER before its connection ended completes its
 * request OK, even when the application looks only after the end; the
 * requests left unanswered end NOT_CONNECTED; a reply behind unread DATA
 * cannot pass it at the end either, and the DATA stays readable. The
 * requester looks at the socket only once the end is seen (the monitor's
 * READY flag drops): nothing drains the replies before it. */
static void dealer_end_body(void *ctx, const char *tr)
{
    int lfd, k = 0;
    raw_t c;
    void *d = dealer_to_raw_router(ctx, tr, &lfd, &c);
    zlink_completion_id_t id1 = REQ_OK(d, NULL, T(5000), &k, "q1");
    zlink_completion_id_t id2 = REQ_OK(d, NULL, T(5000), &k, "q2");
    uint64_t s1 = RAW_EXPECT(&c, K_REQUEST, "q1");
    (void)RAW_EXPECT(&c, K_REQUEST, "q2");
    RAW_SEND(&c, K_REPLY, s1, "r1");
    raw_close(&c);
    ZT_EVENTUALLY(!(status_of(d).state_flags & ZLINK_MONITOR_STATE_READY), T(2000));
    CQ_OK(d, id1, &k, NULL, "r1");
    CQ_END(d, id2, &k, NULL, ZLINK_REQUEST_NOT_CONNECTED);
    CQ_NONE(d);

    /* The DEALER reconnects; DATA ahead of the reply at the end. */
    raw_accept(lfd, &c);
    raw_hs_accepting(&c, ZLINK_ROUTER, "raw", ZLINK_DEALER, "D", 1, 0);
    zlink_completion_id_t id3 = REQ_OK(d, NULL, T(5000), &k, "q3");
    uint64_t s3 = RAW_EXPECT(&c, K_REQUEST, "q3");
    RAW_SEND(&c, K_DATA, 0, "ahead");
    RAW_SEND(&c, K_REPLY, s3, "r3");
    raw_close(&c);
    ZT_EVENTUALLY(!(status_of(d).state_flags & ZLINK_MONITOR_STATE_READY), T(2000));
    CQ_END(d, id3, &k, NULL, ZLINK_REQUEST_NOT_CONNECTED);
    zlt_expect_str(d, "ahead");
    CQ_NONE(d);
    close(lfd);
}

/* A poller sleeping on a requester's POLLCOMPLETION must wake for each
 * reply. A Completion lane wakes its reader only when a record arrives
 * after the reader found the lane empty, so every look must leave the lane
 * seen empty. Two ways it did not: a late reply (its request already
 * TIMED_OUT) that arrived with no request pending was never taken, and a
 * look that took replies stopped without seeing the lane empty. Either
 * way the next reply woke nobody, and the poller saw it only at some
 * unrelated event (in the framework, the 5 s liveness probe). */
typedef struct cq_sleeper {
    void *s;
    atomic_int woke;
    int64_t woke_ms;
} cq_sleeper_t;

static void *cq_sleeper_main(void *arg)
{
    cq_sleeper_t *w = arg;
    void *pl = zlink_poller_new();
    if (pl == NULL || zlink_poller_add(pl, w->s, NULL, ZLINK_POLLCOMPLETION) != ZLINK_CONFIG_OK)
        return NULL;
    zlink_poller_event_t ev[2];
    int n = zlink_poller_wait(pl, ev, 2, ZT_MS(3000), NULL);
    w->woke_ms = zt_now_ms();
    atomic_store(&w->woke, n);
    zlink_poller_destroy(&pl);
    return NULL;
}

/* Starts w's poller thread on s; waits the documented 50 ms that lets it
 * take its first look and fall asleep (the cases pass either way without
 * it: the pause only makes the lost wake-up they guard reproducible). */
static void cq_sleeper_start(cq_sleeper_t *w, pthread_t *th, void *s)
{
    w->s = s;
    atomic_init(&w->woke, -2);
    ZT_EQ_INT(pthread_create(th, NULL, cq_sleeper_main, w), 0);
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

/* Joins w's thread: it must have woken within 1 s of replied_ms. */
static void cq_sleeper_expect_woke(cq_sleeper_t *w, pthread_t th, int64_t replied_ms,
                                   const char *tr)
{
    pthread_join(th, NULL);
    if (atomic_load(&w->woke) < 1)
        ZT_FAIL("%s: the sleeping poller did not wake for the reply (result %d)", tr,
                atomic_load(&w->woke));
    if (w->woke_ms - replied_ms > ZT_MS(1000))
        ZT_FAIL("%s: the poller woke %lld ms after the reply", tr,
                (long long)(w->woke_ms - replied_ms));
}

/* cli (ROUTER "cli") connected to a fresh ROUTER "srv" of tr. */
static void cli_srv(void *ctx, const char *tr, void **cli, void **srv)
{
    char ep[256];
    *srv = router_bound(ctx, tr, "srv", ep, sizeof ep);
    *cli = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_set_rid(*cli, "cli");
    zlt_connect(*cli, ep);
}

/* Request 1 ends TIMED_OUT and its reply arrives afterwards, with no
 * request pending; a poller then sleeps on cli's POLLCOMPLETION, and
 * request 2 is answered at once: the poller must wake for it. */
static void late_reply_body(void *ctx, const char *tr)
{
    int k1 = 0, k2 = 0;
    rrec_t a, b;
    void *cli, *srv;
    cli_srv(ctx, tr, &cli, &srv);
    zlink_completion_id_t id1 = REQ_ROUTABLE(cli, "srv", T(20), &k1, "first");
    RREQ(srv, &a, "cli", "first");
    CQ_END(cli, id1, &k1, "srv", ZLINK_REQUEST_TIMED_OUT);
    zlink_monitor_config_t cfg = {0, 0, 0};
    void *mon = zlink_socket_monitor_open(cli, &cfg);
    ZT_CHECK(mon != NULL);
    REPLY_OK(srv, &a.rid, a.tok, "too-late");
    /* The late reply is in cli's queues (nobody takes it: no request). */
    zlink_monitor_status_t st;
    ZT_EVENTUALLY((memset(&st, 0, sizeof st),
                   zlink_monitor_status(mon, &st) == ZLINK_CONFIG_OK && st.rcv_pending_msgs >= 1),
                  3000);
    ZT_EQ_INT(zlink_monitor_close(&mon), ZLINK_CONFIG_OK);
    /* A poller sleeps on cli; request 2 is then answered at once. */
    cq_sleeper_t w;
    pthread_t th;
    cq_sleeper_start(&w, &th, cli);
    zlink_completion_id_t id2 = REQ_ROUTABLE(cli, "srv", 0, &k2, "next");
    RREQ(srv, &b, "cli", "next");
    int64_t replied = zt_now_ms();
    REPLY_OK(srv, &b.rid, b.tok, "answer");
    cq_sleeper_expect_woke(&w, th, replied, tr);
    CQ_OK(cli, id2, &k2, "srv", "answer");
    CQ_NONE(cli);
}

/* Request 1 times out; request 2 is pending when request 1's late reply
 * arrives, and a poller sleeping on cli takes that look (the stray reply
 * is dropped) and sleeps again; request 2's reply must wake it. */
static void stray_then_reply_body(void *ctx, const char *tr)
{
    int k1 = 0, k2 = 0;
    rrec_t a, b;
    void *cli, *srv;
    cli_srv(ctx, tr, &cli, &srv);
    zlink_completion_id_t id1 = REQ_ROUTABLE(cli, "srv", T(20), &k1, "first");
    RREQ(srv, &a, "cli", "first");
    CQ_END(cli, id1, &k1, "srv", ZLINK_REQUEST_TIMED_OUT);
    zlink_completion_id_t id2 = REQ_ROUTABLE(cli, "srv", 0, &k2, "next");
    RREQ(srv, &b, "cli", "next");
    cq_sleeper_t w;
    pthread_t th;
    cq_sleeper_start(&w, &th, cli);
    /* The poller takes the stray reply's arrival and sleeps again before
     * the real reply comes (the same documented pause). */
    REPLY_OK(srv, &a.rid, a.tok, "too-late");
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    int64_t replied = zt_now_ms();
    REPLY_OK(srv, &b.rid, b.tok, "answer");
    cq_sleeper_expect_woke(&w, th, replied, tr);
    CQ_OK(cli, id2, &k2, "srv", "answer");
    CQ_NONE(cli);
}

static void late_reply_after_timeout_wakes_poller(void)
{
    covers("ROUTER: a late reply after TIMED_OUT does not hide the next reply from a poller");
    per_transport(late_reply_body, true);
}

static void stray_reply_then_reply_wakes_poller(void)
{
    covers("ROUTER: a late reply taken while another request waits leaves the lane armed");
    per_transport(stray_then_reply_body, true);
}

static void dealer_reply_before_end_completes(void)
{
    covers("DEALER: a reply that arrived before the connection ended completes its request");
    static const char *const trs[] = {"tcp", "ipc"}; /* a raw peer needs a socket */
    for (int i = 0; i < 2; i++) {
        printf("# transport %s\n", trs[i]);
        void *ctx = zlt_round_begin(trs[i]);
        dealer_end_body(ctx, trs[i]);
        zlt_round_end();
    }
}

static void rr_cmp_lane_replies_pass_data_hwm_pause(void)
{
    covers("socket/README/12 (R-R Cmp exempt), ROUTER R-R lanes, Protocol ZMP/17 (R-R FIFO per lane)");
    per_transport(rr_cmp_body, true);
}

/* ================================================================== main */

/* zlink_reply_error: the requester's REQUEST record carries the errno's
 * mapped result and the remaining parts (none, or the caller's); the
 * token is used up by it like by a reply; error <= 0 is refused and
 * consumes the parts. Over inproc and tcp. */
static void reply_error_sends_errno_part(void)
{
    covers("03-errors/10 (sending side: zlink_reply_error)");
    int k = 0;
    char ep[256];
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *r = router_bound(ctx, tr, NULL, ep, sizeof ep);
        void *d = zlt_sock(ctx, ZLINK_DEALER);
        zlt_set_rid(d, "D");
        zlt_connect(d, ep);
        /* with a part */
        zlink_completion_id_t id = REQ_OK(d, NULL, 0, &k, "q1");
        rrec_t a;
        RREQ(r, &a, "D", "q1");
        zlink_msg_t why;
        zlt_msg_set(&why, "no such key", 11);
        ZT_EQ_INT(zlink_reply_error(r, &a.rid, a.tok, ENOENT, &why, 1), ZLINK_SUBMIT_OK);
        ZT_EQ_U64(zlink_msg_size(&why), 0); /* consumed */
        ZT_EQ_INT(zlink_msg_close(&why), ZLINK_CONFIG_OK);
        CQ_ERR(d, id, &k, NULL, ZLINK_REQUEST_NOT_FOUND, "no such key");
        /* the token is used up */
        zlt_msg_set(&why, "again", 5);
        ZT_EQ_INT(zlink_reply_error(r, &a.rid, a.tok, ENOENT, &why, 1), ZLINK_SUBMIT_NOT_FOUND);
        ZT_EQ_INT(zlink_errno(), ENOENT);
        ZT_EQ_INT(zlink_msg_close(&why), ZLINK_CONFIG_OK);
        /* without parts; an unlisted errno maps to INTERNAL */
        id = REQ_OK(d, NULL, 0, &k, "q2");
        RREQ(r, &a, "D", "q2");
        ZT_EQ_INT(zlink_reply_error(r, &a.rid, a.tok, EBUSY, NULL, 0), ZLINK_SUBMIT_OK);
        CQ_ERR(d, id, &k, NULL, ZLINK_REQUEST_BUSY);
        id = REQ_OK(d, NULL, 0, &k, "q3");
        RREQ(r, &a, "D", "q3");
        zlt_msg_set(&why, "x", 1);
        ZT_EQ_INT(zlink_reply_error(r, &a.rid, a.tok, 0, &why, 1),
                  ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_U64(zlink_msg_size(&why), 0); /* consumed even when refused */
        ZT_EQ_INT(zlink_reply_error(r, &a.rid, a.tok, EDOM, NULL, 0), ZLINK_SUBMIT_OK);
        CQ_ERR(d, id, &k, NULL, ZLINK_REQUEST_INTERNAL);
        ZT_EQ_INT(zlink_msg_close(&why), ZLINK_CONFIG_OK);
    }
}

/* zlink_reply_submit (ZLINK_1.1): unknown flags, a negative error and NULL
 * parts with a count are INVALID_ARGUMENT/EINVAL, nothing is sent, a
 * given part is consumed, and *completion_id_out is zeroed. */
static void reply_submit_refuses_bad_arguments(void)
{
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    void *r = zlink_socket(ctx, ZLINK_ROUTER);
    ZT_CHECK(r != NULL);
    zlink_routing_id_t rid = {.size = 1, .data = {'x'}};
    zlink_completion_id_t id = 99;
    zlink_msg_t m;
    zlink_msg_init_size(&m, 3);
    ZT_EQ_INT(zlink_reply_submit(r, &rid, 1, 0, &m, 1, (zlink_send_flags_t)4, NULL, &id),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    ZT_EQ_U64(id, 0);
    ZT_EQ_U64(zlink_msg_size(&m), 0); /* consumed */
    id = 99;
    zlink_msg_init_size(&m, 3);
    ZT_EQ_INT(zlink_reply_submit(r, &rid, 1, -5, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, &id),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_U64(id, 0);
    ZT_EQ_INT(zlink_reply_submit(r, &rid, 1, 0, NULL, 2, ZLINK_SEND_FLAGS_DONTWAIT, NULL, &id),
              ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    /* a token nobody handed out: NOT_FOUND, like zlink_reply */
    zlink_msg_init_size(&m, 3);
    ZT_EQ_INT(zlink_reply_submit(r, &rid, 12345, 0, &m, 1, ZLINK_SEND_FLAGS_DONTWAIT, NULL, &id),
              ZLINK_SUBMIT_NOT_FOUND);
    zlink_msg_close(&m);
    ZT_EQ_INT(zlink_close(r), ZLINK_CLOSE_OK);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static const zt_case_t cases[] = {
    ZT_CASE(readme_34_request_targets),
    ZT_CASE(readme_35_admitted_request_one_completion),
    ZT_CASE(readme_36_dontwait_request_token),
    ZT_CASE(readme_40_reply_failures_consumed_retry),
    ZT_CASE(readme_41_unanswered_token_persists),
    ZT_CASE(readme_42_data_or_pause_ahead_of_reply),
    ZT_CASE(readme_49_interleaved_append_order),
    ZT_CASE(readme_49_mixed_kinds_append_order),
    ZT_CASE(errors_07_router_to_dealer_not_admitted),
    ZT_CASE(errors_09_one_terminal_completion_per_id),
    ZT_CASE(errors_10_error_reply_errno_mapped),
    ZT_CASE(reply_error_sends_errno_part),
    ZT_CASE(rr_cmp_lane_replies_pass_data_hwm_pause),
    ZT_CASE(readme_38_token_limit_pauses_source),
    ZT_CASE(readme_33_request_slots_backpressured),
    ZT_CASE(readme_43_reply_to_dealer_waits_sndtimeo),
    ZT_CASE(router_14_reply_kind_is_protocol_error),
    ZT_CASE(router_18_live_sequence_reuse_closes),
    ZT_CASE(router_20_concurrent_reply_exclusive_checkout),
    ZT_CASE(zmp_26_completion_poller_before_first_request),
    ZT_CASE(rr_cmp_lane_counted_in_status),
    ZT_CASE(dealer_reply_before_end_completes),
    ZT_CASE(late_reply_after_timeout_wakes_poller),
    ZT_CASE(stray_reply_then_reply_wakes_poller),
    ZT_CASE(router_09_router_request_completes_as_request_record),
    ZT_CASE(router_15_raw_resend_of_request_is_data),
    ZT_CASE(router_16_zlink_recv_on_router_not_supported),
    ZT_CASE(router_17_same_sequence_distinct_tokens),
    ZT_CASE(dealer_04_timeout_zero_uses_option),
    ZT_CASE(zmp_02_request_reply_header_16_bytes),
    ZT_CASE(zmp_32_send_and_request_identical_to_receiver),
    ZT_CASE(zmp_34_reply_echoes_sequence),
    ZT_CASE(zmp_36_error_reply_errno_part),
    ZT_CASE(zmp_39_data_before_reply),
    ZT_CASE(zmp_40_timeout_wins_late_reply_adds_none),
    ZT_CASE(zmp_41_first_reply_completes),
    ZT_CASE(zmp_42_duplicate_replies_ignored),
    ZT_CASE(zmp_44_error_reply_mapped_with_payload),
    ZT_CASE(zmp_46_connection_counts),
    ZT_CASE(zmp_43_timeout_timed_out),
    ZT_CASE(readme_37_token_consumed_only_by_successful_reply),
    ZT_CASE(dealer_26_no_requests_to_dealer_peers),
    ZT_CASE(router_07_token_zero_for_data_nonzero_for_request),
    ZT_CASE(reply_submit_refuses_bad_arguments),
};

int main(int argc, char **argv)
{
    /* The older ZLT_ONLY stands in for ZT_FILTER (doc/contract-tests). */
    const char *only = getenv("ZLT_ONLY");
    if (only != NULL && only[0] != '\0' && getenv("ZT_FILTER") == NULL)
        setenv("ZT_FILTER", only, 1);
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
