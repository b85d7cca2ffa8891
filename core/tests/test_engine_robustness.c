/*
 * test_engine_robustness.c — the engine against a hostile or broken peer.
 *
 * A ZLink socket (PAIR, ROUTER, DEALER, SUB or PUB) binds tcp://127.0.0.1:0;
 * the test connects a plain POSIX TCP socket (the "raw peer") and sends,
 * one case per connection, something ZMP v1 (doc/protocol.md) forbids:
 * garbage, a bad magic or version, every forbidden flag / kind combination
 * of core-contract §7, data before the handshake, a frame or a record cut
 * by EOF, a CONTROL body of 4097 bytes, a frame or a record over a positive
 * MAXMSGSIZE, an incompatible or malformed HELLO, a READY with bad lane
 * properties. For every case the test checks, through the public API and
 * the raw socket only:
 *   - the ZLink side closes the connection: the raw socket reads EOF (or
 *     ECONNRESET) within a bounded time (poll with a timeout);
 *   - where the protocol sends ERROR before closing, its code and layout
 *     (5A 01 02 00 size | 05 code len reason);
 *   - nothing partial reaches the application: a DONTWAIT receive gives
 *     ZLINK_RECV_NO_DATA; for a record cut by EOF, the complete records
 *     sent before it ARE delivered, in order, and the partial one is not;
 *   - afterwards a well-behaved ZLink peer still connects to the same
 *     socket and exchanges records with it.
 * Before each violation the raw peer first proves its connection works (a
 * record it sends is received), so a close can only come from the
 * violation. Each violation is sent alone at a record boundary unless the
 * rule itself needs a record in progress, so a missing check for one rule
 * cannot be hidden by another. Two more groups: whole records that arrive
 * in the same read as a violation are still delivered (delivery must not
 * depend on how TCP splits the stream), and what is not a violation (a
 * malformed WEIGHT, an unknown control) leaves the connection up.
 *
 * The first cases are codec-level (engine/zmp.h) and add only what
 * core/tests/test_zmp_codec.c does not already check: the exact ERROR code
 * of every rule, rejection from the header bytes alone, seq 0 on REPLY and
 * ERROR_REPLY, REQUEST / ERROR_REPLY and subscription frames inside a
 * record.
 *
 * The wire bytes are built by the tests' own encoder (zltest_rawzmp.h),
 * not by zmp.c, so an encoder bug cannot hide a decoder bug.
 */
#include "wire/zmp.h"
#include "zlink.h"
#include "zltest.h"

#define ZR_MAX_UNREAD (1u << 18) /* what the ZLink side may send one raw peer */
#include "zltest_rawzmp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define RAW_RID "raw"
#define CODE_ANY (-1) /* the protocol asks for no particular ERROR */
#define CODE_NONE 0   /* no ERROR may be sent */
#define NO_LIMIT INT64_MIN
#define MAXF 256 /* frames the ZLink side may send on one raw connection */

/* ------------------------------------------- raw peer (zltest_rawzmp.h) */

static bool has_lanes(int type)
{
    return type == ZLINK_DEALER || type == ZLINK_ROUTER;
}

/* The handshake a well-behaved peer of `type` sends (HELLO + READY). */
static void w_handshake(wire_t *w, int type)
{
    w_hello(w, type, has_lanes(type) ? RAW_RID : "");
    if (has_lanes(type)) {
        w_ready_dr(w, type, RAW_RID, 1, 0);
    } else {
        wire_t none;
        w_init(&none);
        w_ready(w, &none);
        w_free(&none);
    }
}

/* A raw peer connected to 127.0.0.1:port. */
static void raw_open(raw_t *r, int port)
{
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    raw_connect(r, ep);
}

/* The ZLink side's first frame is a well-formed HELLO of type `type`. */
static void check_hello(const raw_t *r, int type)
{
    rframe_t f[MAXF];
    ZT_CHECK(raw_frames(r, f, MAXF) >= 1);
    ZT_EQ_INT(f[0].flags, 0x02);
    ZT_EQ_INT(f[0].kind, 0);
    ZT_CHECK(f[0].size >= 4);
    ZT_EQ_INT(f[0].body[0], 0x01);
    ZT_EQ_INT((f[0].body[1] << 8) | f[0].body[2], type);
    ZT_EQ_INT(f[0].size, 4 + f[0].body[3]);
}

/* Checks the ERROR the ZLink side sent before closing: want is a code
 * (exactly one ERROR, the last frame, with a consistent layout), CODE_NONE
 * (no ERROR) or CODE_ANY. */
static void check_error(const raw_t *r, int want)
{
    rframe_t f[MAXF];
    size_t n = raw_frames(r, f, MAXF);
    int found = 0, code = -1;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (f[i].flags == 0x02 && f[i].size >= 1 && f[i].body[0] == 0x05) {
            found++;
            last = i;
            ZT_CHECK(f[i].size >= 3);
            ZT_EQ_INT(f[i].kind, 0);
            ZT_EQ_INT(f[i].size, 3 + f[i].body[2]); /* 05 | code | len | reason */
            code = f[i].body[1];
        }
    }
    if (want == CODE_ANY)
        return;
    if (want == CODE_NONE) {
        ZT_EQ_INT(found, 0);
        return;
    }
    if (found != 1)
        ZT_FAIL("expected one ERROR with code 0x%02x before the close, got %d ERROR frames", want,
                found);
    ZT_EQ_INT(last, n - 1);
    ZT_EQ_INT(code, want);
}

/* -------------------------------------------------- ZLink side helpers */

static void *ctx_new1(void)
{
    void *ctx = zlink_ctx_new();
    ZT_CHECK(ctx != NULL);
    ZT_EQ_INT(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 1), ZLINK_CONFIG_OK);
    return ctx;
}

static void set_int(void *s, int opt, int v)
{
    ZT_EQ_INT(zlink_setsockopt(s, opt, &v, sizeof v), ZLINK_CONFIG_OK);
}

static void *sock_new(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    ZT_CHECK(s != NULL);
    set_int(s, ZLINK_RCVTIMEO, T(5000));
    set_int(s, ZLINK_SNDTIMEO, T(5000));
    set_int(s, ZLINK_LINGER, 0);
    return s;
}

static void sock_close(void *s)
{
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
}

static void msg_str(zlink_msg_t *m, const char *s)
{
    ZT_EQ_INT(zlink_msg_init_size(m, strlen(s)), ZLINK_CONFIG_OK);
    memcpy(zlink_msg_data(m), s, strlen(s));
}

/* A received record, normalized: SUB's topic is part 0; ROUTER's id kept. */
typedef struct rec {
    size_t n;
    size_t size[8];
    char part[8][256]; /* NUL-terminated, first 255 bytes */
    zlink_routing_id_t rid;
} rec_t;

static void rec_fill(rec_t *out, zlink_msg_t *parts, size_t count, size_t at)
{
    for (size_t i = 0; i < count; i++) {
        size_t sz = zlink_msg_size(&parts[i]);
        size_t c = sz < 255 ? sz : 255;
        out->size[at + i] = sz;
        memcpy(out->part[at + i], zlink_msg_data(&parts[i]), c);
        out->part[at + i][c] = '\0';
    }
    out->n = at + count;
    zlink_multipart_close(parts, count);
}

static zlink_recv_result_t recv_rec(void *s, int type, int flags, rec_t *out)
{
    zlink_msg_t parts[8];
    size_t count = 0;
    zlink_recv_result_t rc;
    memset(out, 0, sizeof *out);
    if (type == ZLINK_ROUTER) {
        const zlink_routing_id_t *rid = NULL;
        zlink_reply_token_t tok = 0;
        rc = zlink_router_recv(s, &rid, &tok, parts, 8, &count, (zlink_recv_flags_t)flags);
        if (rc == ZLINK_RECV_OK) {
            ZT_CHECK(rid != NULL);
            out->rid = *rid;
            rec_fill(out, parts, count, 0);
        }
    } else if (type == ZLINK_SUB) {
        char topic[256];
        size_t tlen = 0;
        rc = zlink_subscribe(s, NULL, topic, sizeof topic, &tlen, parts, 7, &count,
                             (zlink_recv_flags_t)flags);
        if (rc == ZLINK_RECV_OK) {
            size_t c = tlen < 255 ? tlen : 255;
            out->size[0] = tlen;
            memcpy(out->part[0], topic, c);
            out->part[0][c] = '\0';
            rec_fill(out, parts, count, 1);
        }
    } else {
        rc = zlink_recv(s, NULL, parts, 8, &count, (zlink_recv_flags_t)flags);
        if (rc == ZLINK_RECV_OK)
            rec_fill(out, parts, count, 0);
    }
    return rc;
}

/* The record is exactly the strings given (n of them). */
static void rec_is(const rec_t *r, size_t n, const char *const *want)
{
    ZT_EQ_INT(r->n, n);
    for (size_t i = 0; i < n; i++) {
        ZT_EQ_INT(r->size[i], strlen(want[i]));
        ZT_EQ_STR(r->part[i], want[i]);
    }
}

static bool rid_is(const zlink_routing_id_t *r, const char *s)
{
    return r->size == strlen(s) && memcmp(r->data, s, r->size) == 0;
}

/* --------------------------------------------------------- fixture */

/* A bound ZLink socket under test. */
typedef struct fx {
    void *ctx;
    void *s;
    int type;
    int port;
    char ep[64];
} fx_t;

static void fx_open(fx_t *f, void *ctx, int type, int64_t maxmsg)
{
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    f->type = type;
    f->s = sock_new(ctx, type);
    if (maxmsg != NO_LIMIT)
        ZT_EQ_INT(zlink_setsockopt(f->s, ZLINK_MAXMSGSIZE, &maxmsg, sizeof maxmsg),
                  ZLINK_CONFIG_OK);
    if (type == ZLINK_SUB)
        ZT_EQ_INT(zlink_set_subscription(f->s, ""), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_bind(f->s, "tcp://127.0.0.1:0"), ZLINK_BIND_OK);
    size_t len = sizeof f->ep;
    ZT_EQ_INT(zlink_getsockopt(f->s, ZLINK_LAST_ENDPOINT, f->ep, &len), ZLINK_CONFIG_OK);
    const char *colon = strrchr(f->ep, ':');
    ZT_CHECK(colon != NULL);
    f->port = atoi(colon + 1);
    ZT_CHECK(f->port > 0);
}

static void fx_close(fx_t *f)
{
    sock_close(f->s);
    f->s = NULL;
}

/* Nothing (partial or otherwise) is waiting at the ZLink socket. */
static void expect_no_data(fx_t *f)
{
    if (f->type == ZLINK_PUB)
        return; /* PUB has no receive call */
    rec_t r;
    zlink_recv_result_t rc = recv_rec(f->s, f->type, ZLINK_DONTWAIT, &r);
    if (rc == ZLINK_RECV_OK)
        ZT_FAIL("a record of %zu part(s) was delivered (part 0: \"%s\", %zu bytes)", r.n,
                r.part[0], r.size[0]);
    ZT_EQ_INT(rc, ZLINK_RECV_NO_DATA);
}

/* The peer type a raw connection to this target claims. */
static int raw_type_for(int target)
{
    switch (target) {
    case ZLINK_ROUTER: return ZLINK_DEALER;
    case ZLINK_SUB: return ZLINK_PUB;
    case ZLINK_PUB: return ZLINK_SUB;
    default: return target; /* PAIR-PAIR, DEALER-DEALER */
    }
}

/* Raw connect + a well-behaved handshake; waits for the ZLink side's HELLO
 * and READY (for DEALER / ROUTER, sent only after it validated ours). */
static void raw_handshake(raw_t *r, fx_t *f)
{
    raw_open(r, f->port);
    wire_t w;
    w_init(&w);
    w_handshake(&w, raw_type_for(f->type));
    raw_send_bytes(r, w.b, w.n);
    w_free(&w);
    raw_wait_frames(r, 2);
    check_hello(r, f->type);
}

/* The raw connection carries records: one it sends is received whole (PUB:
 * one the socket publishes reaches it). */
static void raw_prove_alive(raw_t *r, fx_t *f)
{
    wire_t w;
    w_init(&w);
    if (f->type == ZLINK_PUB) {
        w_frame(&w, 0x08, 0, 0, "", 0); /* SUBSCRIBE to everything */
        raw_send_bytes(r, w.b, w.n);
        w_free(&w);
        int64_t end = zt_now_ms() + T(5000);
        for (;;) {
            rframe_t fr[MAXF];
            size_t n = raw_frames(r, fr, MAXF);
            for (size_t i = 0; i < n; i++)
                if (fr[i].flags == 0x00 && fr[i].size == 5 && memcmp(fr[i].body, "alive", 5) == 0)
                    return;
            ZT_CHECK(!r->closed);
            if (zt_now_ms() > end)
                ZT_FAIL("no publication reached the raw subscriber");
            zlink_msg_t m;
            msg_str(&m, "alive");
            ZT_EQ_INT(zlink_publish(f->s, "t", &m, 1, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
            raw_fill(r, 20);
        }
    }
    if (f->type == ZLINK_SUB)
        w_data(&w, true, "t");
    w_data(&w, false, "alive");
    raw_send_bytes(r, w.b, w.n);
    w_free(&w);
    rec_t got;
    ZT_EQ_INT(recv_rec(f->s, f->type, 0, &got), ZLINK_RECV_OK);
    if (f->type == ZLINK_SUB) {
        const char *want[] = {"t", "alive"};
        rec_is(&got, 2, want);
    } else {
        const char *want[] = {"alive"};
        rec_is(&got, 1, want);
    }
    if (f->type == ZLINK_ROUTER)
        ZT_CHECK(rid_is(&got.rid, RAW_RID));
}

/* A ZLink peer of a compatible type connects to the same socket and
 * records flow (both ways where the pattern allows). */
static void good_peer_exchange(fx_t *f)
{
    int ptype = f->type == ZLINK_ROUTER ? ZLINK_DEALER : raw_type_for(f->type);
    void *p = sock_new(f->ctx, ptype);
    if (ptype == ZLINK_DEALER && f->type == ZLINK_ROUTER)
        ZT_EQ_INT(zlink_set_routing_id(p, "good", 4), ZLINK_CONFIG_OK);
    if (ptype == ZLINK_SUB)
        ZT_EQ_INT(zlink_set_subscription(p, ""), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_connect(p, f->ep), ZLINK_CONNECT_OK);
    rec_t got;
    zlink_msg_t m;
    if (f->type == ZLINK_SUB || f->type == ZLINK_PUB) {
        /* The subscription travels first; publish until one arrives. */
        void *pub = f->type == ZLINK_PUB ? f->s : p;
        void *sub = f->type == ZLINK_PUB ? p : f->s;
        set_int(sub, ZLINK_RCVTIMEO, 20);
        int64_t end = zt_now_ms() + T(5000);
        zlink_recv_result_t rc;
        do {
            if (zt_now_ms() > end)
                ZT_FAIL("the good %s peer received nothing", type_name(ptype));
            msg_str(&m, "good");
            ZT_EQ_INT(zlink_publish(pub, "t", &m, 1, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
            rc = recv_rec(sub, ZLINK_SUB, 0, &got);
        } while (rc == ZLINK_RECV_NO_DATA);
        ZT_EQ_INT(rc, ZLINK_RECV_OK);
        const char *want[] = {"t", "good"};
        rec_is(&got, 2, want);
        set_int(sub, ZLINK_RCVTIMEO, T(5000));
    } else {
        msg_str(&m, "good-in");
        ZT_EQ_INT(zlink_send(p, &m, 1, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(recv_rec(f->s, f->type, 0, &got), ZLINK_RECV_OK);
        const char *in[] = {"good-in"};
        rec_is(&got, 1, in);
        msg_str(&m, "good-out");
        if (f->type == ZLINK_ROUTER) {
            ZT_CHECK(rid_is(&got.rid, "good"));
            ZT_EQ_INT(zlink_send_rid(f->s, &got.rid, &m, 1, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        } else {
            ZT_EQ_INT(zlink_send(f->s, &m, 1, 0, NULL, NULL), ZLINK_SUBMIT_OK);
        }
        ZT_EQ_INT(recv_rec(p, ptype, 0, &got), ZLINK_RECV_OK);
        const char *out[] = {"good-out"};
        rec_is(&got, 1, out);
    }
    sock_close(p);
}

/* One case against one target type: raw peer connects, (maybe) handshakes
 * and proves the connection works, sends `bad`, then everything of the
 * file comment is checked. */
enum { BEFORE_HELLO, AFTER_HANDSHAKE };

static void run_case(void *ctx, int target, int64_t maxmsg, int when, const wire_t *bad,
                     bool eof, int code)
{
    fx_t f;
    raw_t r;
    fx_open(&f, ctx, target, maxmsg);
    if (when == AFTER_HANDSHAKE) {
        raw_handshake(&r, &f);
        raw_prove_alive(&r, &f);
    } else {
        raw_open(&r, f.port);
    }
    raw_send_lenient(&r, bad->b, bad->n);
    if (eof)
        shutdown(r.fd, SHUT_WR);
    raw_wait_closed(&r);
    check_hello(&r, f.type);
    check_error(&r, code);
    expect_no_data(&f);
    raw_close(&r);
    good_peer_exchange(&f);
    fx_close(&f);
}

static const int k_targets[] = {ZLINK_PAIR, ZLINK_ROUTER, ZLINK_DEALER, ZLINK_SUB};
#define NTARGETS (sizeof k_targets / sizeof k_targets[0])

/* ===================================================== codec-level gaps */

static int decode_all(const wire_t *w, int64_t maxmsg, uint8_t *code)
{
    zmp_decoder_t d;
    zmp_decoder_init(&d, maxmsg);
    size_t at = 0;
    for (;;) {
        zmp_hdr_t h;
        size_t need = 0;
        int rc = zmp_decode(&d, w->b + at, w->n - at, &h, &need);
        if (rc == EAGAIN)
            return zmp_decoder_eof(&d, w->n - at) == 0 ? 0 : EAGAIN;
        if (rc != 0) {
            *code = d.error_code;
            return rc;
        }
        at += h.hdr_len + h.size;
        if (at == w->n && !d.mid)
            return 0;
    }
}

/* A bad header for the table below: a MORE data frame may precede it. */
typedef struct hdr_case {
    const char *name;
    uint8_t magic, ver, flags, kind;
    uint64_t seq;
    bool mid;
} hdr_case_t;

#define HC(name, flags, kind, seq, mid) {name, 0x5A, 0x01, flags, kind, seq, mid}

/* Every EPROTO rule of core-contract §7 that a header shows. */
static const hdr_case_t k_hdr_cases[] = {
    {"bad magic 5B", 0x5B, 0x01, 0x00, 0, 0, false},
    {"bad version 02", 0x5A, 0x02, 0x00, 0, 0, false},
    {"bad version 00", 0x5A, 0x00, 0x00, 0, 0, false},
    HC("reserved bit 5", 0x20, 0, 0, false),
    HC("reserved bit 6", 0x40, 0, 0, false),
    HC("reserved bit 7", 0x80, 0, 0, false),
    HC("reserved bit 5 with MORE", 0x21, 0, 0, false),
    HC("CONTROL|IDENTITY", 0x06, 0, 0, false),
    HC("CONTROL|MORE", 0x03, 0, 0, false),
    HC("SUBSCRIBE|CANCEL", 0x18, 0, 0, false),
    HC("SUBSCRIBE|MORE", 0x09, 0, 0, false),
    HC("SUBSCRIBE|CONTROL", 0x0A, 0, 0, false),
    HC("SUBSCRIBE|IDENTITY", 0x0C, 0, 0, false),
    HC("CANCEL|MORE", 0x11, 0, 0, false),
    HC("CANCEL|CONTROL", 0x12, 0, 0, false),
    HC("CANCEL|IDENTITY", 0x14, 0, 0, false),
    HC("REQUEST with CONTROL", 0x02, 1, 7, false),
    HC("REQUEST with IDENTITY", 0x04, 1, 7, false),
    HC("REQUEST with SUBSCRIBE", 0x08, 1, 7, false),
    HC("REQUEST with CANCEL", 0x10, 1, 7, false),
    HC("REPLY with CONTROL", 0x02, 2, 7, false),
    HC("REPLY with IDENTITY", 0x04, 2, 7, false),
    HC("REPLY with SUBSCRIBE", 0x08, 2, 7, false),
    HC("REPLY with CANCEL", 0x10, 2, 7, false),
    HC("ERROR_REPLY with CONTROL", 0x02, 3, 7, false),
    HC("ERROR_REPLY with IDENTITY", 0x04, 3, 7, false),
    HC("ERROR_REPLY with SUBSCRIBE", 0x08, 3, 7, false),
    HC("ERROR_REPLY with CANCEL", 0x10, 3, 7, false),
    HC("REQUEST mid-multipart", 0x00, 1, 7, true),
    HC("REPLY mid-multipart", 0x00, 2, 7, true),
    HC("ERROR_REPLY mid-multipart", 0x00, 3, 7, true),
    HC("CONTROL mid-multipart", 0x02, 0, 0, true),
    HC("SUBSCRIBE mid-multipart", 0x08, 0, 0, true),
    HC("CANCEL mid-multipart", 0x10, 0, 0, true),
    HC("REQUEST seq 0", 0x00, 1, 0, false),
    HC("REPLY seq 0", 0x00, 2, 0, false),
    HC("ERROR_REPLY seq 0", 0x00, 3, 0, false),
    HC("unknown KIND 4", 0x00, 4, 0, false),
    HC("unknown KIND 7F", 0x00, 0x7F, 0, false),
    HC("unknown KIND FF", 0x00, 0xFF, 0, false),
};
#define NHDR (sizeof k_hdr_cases / sizeof k_hdr_cases[0])

/* The bytes of one case: [MORE "part"] + header (+ seq) + body "x". */
static void build_hdr_case(wire_t *w, const hdr_case_t *c, bool with_body)
{
    if (c->mid)
        w_data(w, true, "part");
    w_hdr_raw(w, c->magic, c->ver, c->flags, c->kind, 1);
    if (c->kind >= 1 && c->kind <= 3)
        w_u64(w, c->seq);
    if (with_body)
        w_u8(w, 'x');
}

/* Codec: every rule gives EPROTO with ERROR code MALFORMED (01), both for
 * the whole frame and from the header bytes alone (the body never needs to
 * arrive; flags and kind rules need only the first 4 header bytes). */
static void codec_every_rule_code_and_early_reject(void)
{
    for (size_t i = 0; i < NHDR; i++) {
        const hdr_case_t *c = &k_hdr_cases[i];
        printf("# codec: %s\n", c->name);
        wire_t w;
        w_init(&w);
        build_hdr_case(&w, c, true);
        uint8_t code = 0;
        ZT_EQ_INT(decode_all(&w, 0, &code), EPROTO);
        ZT_EQ_INT(code, ZMP_ERR_MALFORMED);

        /* Header only, no body. */
        w.n -= 1;
        code = 0;
        ZT_EQ_INT(decode_all(&w, 0, &code), EPROTO);
        ZT_EQ_INT(code, ZMP_ERR_MALFORMED);

        /* Flag, kind, magic and version rules: from 4 bytes of the header
         * (seq 0 needs the 16 header bytes, checked above). */
        if (!(c->kind >= 1 && c->kind <= 3 && c->seq == 0 && c->flags == 0 && !c->mid)) {
            size_t pre = c->mid ? 8 + 4 : 0;
            zmp_decoder_t d;
            zmp_decoder_init(&d, 0);
            zmp_hdr_t h;
            size_t need = 0;
            if (c->mid)
                ZT_EQ_INT(zmp_decode(&d, w.b, w.n, &h, &need), 0); /* the MORE frame */
            ZT_EQ_INT(zmp_decode(&d, w.b + pre, 4, &h, &need), EPROTO);
        }
        w_free(&w);
    }
}

/* Codec: MAXMSGSIZE is enforced from the 8 header bytes (part and record
 * sum), so an oversize body is never waited for; code BODY_TOO_LARGE. */
static void codec_maxmsgsize_from_header(void)
{
    zmp_decoder_t d;
    zmp_hdr_t h;
    size_t need = 0;
    wire_t w;
    w_init(&w);
    w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 0x40000000u); /* 1 GiB, no body */
    zmp_decoder_init(&d, 100);
    ZT_EQ_INT(zmp_decode(&d, w.b, w.n, &h, &need), EMSGSIZE);
    ZT_EQ_INT(d.error_code, ZMP_ERR_BODY_TOO_LARGE);

    /* Sum: 60 (MORE) then a header announcing 41 more. */
    w.n = 0;
    w_hdr_raw(&w, 0x5A, 0x01, 0x01, 0, 60);
    w_fill(&w, 'a', 60);
    size_t first = w.n;
    w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 41);
    zmp_decoder_init(&d, 100);
    ZT_EQ_INT(zmp_decode(&d, w.b, first, &h, &need), 0);
    ZT_EQ_INT(zmp_decode(&d, w.b + first, 8, &h, &need), EMSGSIZE);
    ZT_EQ_INT(d.error_code, ZMP_ERR_BODY_TOO_LARGE);
    /* 60 + 40 is exactly the limit: wants its body. */
    w.b[first + 7] = 40;
    zmp_decoder_init(&d, 100);
    ZT_EQ_INT(zmp_decode(&d, w.b, first, &h, &need), 0);
    ZT_EQ_INT(zmp_decode(&d, w.b + first, 8, &h, &need), EAGAIN);
    ZT_EQ_INT(need, 48);
    w_free(&w);
}

/* ============================================= engine: before the HELLO */

/* Garbage (an HTTP request) as the first bytes: the ZLink side sent its
 * HELLO, answers ERROR MALFORMED (magic is the first framing rule of
 * section 5) and closes. Every target type, PUB included. */
static void garbage_before_hello(void)
{
    static const char http[] = "GET / HTTP/1.1\r\nHost: zlink\r\n\r\n";
    void *ctx = ctx_new1();
    const int targets[] = {ZLINK_PAIR, ZLINK_ROUTER, ZLINK_DEALER, ZLINK_SUB, ZLINK_PUB};
    for (size_t t = 0; t < 5; t++) {
        printf("# garbage -> %s\n", type_name(targets[t]));
        wire_t w;
        w_init(&w);
        w_bytes(&w, http, sizeof http - 1);
        run_case(ctx, targets[t], NO_LIMIT, BEFORE_HELLO, &w, false, ZMP_ERR_MALFORMED);
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A bad magic or version instead of a HELLO: ERROR MALFORMED. */
static void bad_magic_version_before_hello(void)
{
    void *ctx = ctx_new1();
    const uint8_t mv[3][2] = {{0x5B, 0x01}, {0x5A, 0x02}, {0x00, 0x00}};
    for (size_t i = 0; i < 3; i++) {
        for (size_t t = 0; t < NTARGETS; t++) {
            printf("# magic %02x version %02x first -> %s\n", mv[i][0], mv[i][1],
                   type_name(k_targets[t]));
            wire_t w;
            w_init(&w);
            w_hdr_raw(&w, mv[i][0], mv[i][1], 0x02, 0, 4);
            w_bytes(&w, "\x01\x10\x01\x00", 4); /* would be a PAIR HELLO */
            run_case(ctx, k_targets[t], NO_LIMIT, BEFORE_HELLO, &w, false, ZMP_ERR_MALFORMED);
            w_free(&w);
        }
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A data frame as the first frame: ERROR HELLO_MALFORMED (02). After the
 * HELLO but before the READY: ERROR UNEXPECTED (06). Nothing delivered. */
static void data_before_handshake(void)
{
    void *ctx = ctx_new1();
    for (size_t t = 0; t < NTARGETS; t++) {
        int target = k_targets[t];
        printf("# data before HELLO -> %s\n", type_name(target));
        wire_t w;
        w_init(&w);
        w_data(&w, false, "early");
        run_case(ctx, target, NO_LIMIT, BEFORE_HELLO, &w, false, ZMP_ERR_HELLO);

        printf("# HELLO, then data before READY -> %s\n", type_name(target));
        w.n = 0;
        int rt = raw_type_for(target);
        w_hello(&w, rt, has_lanes(rt) ? RAW_RID : "");
        w_data(&w, false, "early");
        run_case(ctx, target, NO_LIMIT, BEFORE_HELLO, &w, false, ZMP_ERR_UNEXPECTED);
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A HELLO of a type the target cannot talk to: ERROR INCOMPATIBLE (03). */
static void incompatible_hello(void)
{
    const int pairs[][2] = {
        {ZLINK_PAIR, ZLINK_PUB},     {ZLINK_PAIR, ZLINK_DEALER}, {ZLINK_ROUTER, ZLINK_PAIR},
        {ZLINK_ROUTER, ZLINK_SUB},   {ZLINK_DEALER, ZLINK_PUB},  {ZLINK_DEALER, ZLINK_XSUB},
        {ZLINK_SUB, ZLINK_SUB},      {ZLINK_SUB, ZLINK_DEALER},  {ZLINK_PUB, ZLINK_PUB},
        {ZLINK_PUB, ZLINK_ROUTER},   {ZLINK_PUB, ZLINK_PAIR},
    };
    void *ctx = ctx_new1();
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        printf("# HELLO %s -> %s\n", type_name(pairs[i][1]), type_name(pairs[i][0]));
        wire_t w;
        w_init(&w);
        w_hello(&w, pairs[i][1], "x");
        run_case(ctx, pairs[i][0], NO_LIMIT, BEFORE_HELLO, &w, false, ZMP_ERR_INCOMPATIBLE);
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A malformed HELLO: STREAM or unknown type, rid length not matching the
 * body, READY instead of HELLO, an empty CONTROL body: ERROR
 * HELLO_MALFORMED (02). */
static void malformed_hello(void)
{
    void *ctx = ctx_new1();
    for (int i = 0; i < 6; i++) {
        wire_t w;
        w_init(&w);
        const char *what = "";
        switch (i) {
        case 0:
            what = "STREAM type";
            w_hello(&w, ZLINK_STREAM, "");
            break;
        case 1:
            what = "unknown type 2000";
            w_hello(&w, 0x2000, "");
            break;
        case 2:
            what = "rid length 5, 1 byte present";
            w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 5);
            w_bytes(&w, "\x01\x10\x01\x05" "a", 5);
            break;
        case 3:
            what = "rid length 0, 1 extra byte";
            w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 5);
            w_bytes(&w, "\x01\x10\x01\x00" "a", 5);
            break;
        case 4: {
            what = "READY first";
            wire_t none;
            w_init(&none);
            w_ready(&w, &none);
            w_free(&none);
            break;
        }
        default:
            what = "empty CONTROL body";
            w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 0);
            break;
        }
        for (size_t t = 0; t < NTARGETS; t++) {
            printf("# malformed HELLO (%s) -> %s\n", what, type_name(k_targets[t]));
            run_case(ctx, k_targets[t], NO_LIMIT, BEFORE_HELLO, &w, false, ZMP_ERR_HELLO);
        }
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A READY with bad lane properties (or inconsistent with the HELLO): ERROR
 * READY_MALFORMED (05); the data frame sent right behind it is never
 * delivered (the handshake fails before any payload). */
static void bad_lane_property_in_ready(void)
{
    typedef struct {
        const char *what;
        int target, peer;
        const char *ready_rid;
        int ready_type, count, lane;
    } bad_ready_t;
    const bad_ready_t cases[] = {
        {"DEALER announcing 2 lanes", ZLINK_ROUTER, ZLINK_DEALER, RAW_RID, ZLINK_DEALER, 2, 0},
        {"lane 1 of 1", ZLINK_ROUTER, ZLINK_DEALER, RAW_RID, ZLINK_DEALER, 1, 1},
        {"no lane properties", ZLINK_ROUTER, ZLINK_DEALER, RAW_RID, ZLINK_DEALER, -1, -1},
        {"no Zlink-Lane", ZLINK_ROUTER, ZLINK_DEALER, RAW_RID, ZLINK_DEALER, 1, -1},
        {"lane count 3", ZLINK_ROUTER, ZLINK_DEALER, RAW_RID, ZLINK_DEALER, 3, 0},
        {"lane count 0", ZLINK_DEALER, ZLINK_DEALER, RAW_RID, ZLINK_DEALER, 0, 0},
        {"lane 2", ZLINK_DEALER, ZLINK_DEALER, RAW_RID, ZLINK_DEALER, 1, 2},
        {"ROUTER announcing 2 lanes to a DEALER", ZLINK_DEALER, ZLINK_ROUTER, RAW_RID,
         ZLINK_ROUTER, 2, 0},
        {"ROUTER announcing 1 lane to a ROUTER", ZLINK_ROUTER, ZLINK_ROUTER, RAW_RID,
         ZLINK_ROUTER, 1, 0},
        {"Routing-Id differs from HELLO", ZLINK_ROUTER, ZLINK_DEALER, "other", ZLINK_DEALER, 1,
         0},
        {"Socket-Type differs from HELLO", ZLINK_ROUTER, ZLINK_DEALER, RAW_RID, ZLINK_ROUTER, 1,
         0},
        {"PUB sending lane properties", ZLINK_SUB, ZLINK_PUB, NULL, ZLINK_PUB, 1, 0},
        {"PAIR sending lane properties", ZLINK_PAIR, ZLINK_PAIR, NULL, ZLINK_PAIR, 1, 0},
    };
    void *ctx = ctx_new1();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_ready_t *c = &cases[i];
        printf("# READY: %s -> %s\n", c->what, type_name(c->target));
        wire_t w;
        w_init(&w);
        w_hello(&w, c->peer, has_lanes(c->peer) ? RAW_RID : "");
        if (c->ready_rid != NULL) {
            w_ready_dr(&w, c->ready_type, c->ready_rid, c->count, c->lane);
        } else {
            wire_t p;
            w_init(&p);
            uint8_t one = (uint8_t)c->count, zero = (uint8_t)c->lane;
            w_prop(&p, "Zlink-Lane-Count", &one, 1);
            w_prop(&p, "Zlink-Lane", &zero, 1);
            w_ready(&w, &p);
            w_free(&p);
        }
        if (c->target == ZLINK_SUB)
            w_data(&w, true, "t");
        w_data(&w, false, "payload");
        run_case(ctx, c->target, NO_LIMIT, BEFORE_HELLO, &w, false, ZMP_ERR_READY);
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* ========================================== engine: after the handshake */

/* Every header rule of core-contract §7 after a good handshake, against
 * PAIR, ROUTER, DEALER and SUB: ERROR MALFORMED, close, nothing delivered
 * (the "mid" cases have a record in progress: it is not delivered). */
static void forbidden_headers_after_handshake(void)
{
    void *ctx = ctx_new1();
    for (size_t i = 0; i < NHDR; i++) {
        for (size_t t = 0; t < NTARGETS; t++) {
            const hdr_case_t *c = &k_hdr_cases[i];
            int target = k_targets[t];
            /* A SUB target gets records as topic + payload: a record in
             * progress needs the topic frame first; it still is partial. */
            printf("# %s -> %s\n", c->name, type_name(target));
            wire_t w;
            w_init(&w);
            build_hdr_case(&w, c, true);
            run_case(ctx, target, NO_LIMIT, AFTER_HANDSHAKE, &w, false, ZMP_ERR_MALFORMED);
            w_free(&w);
        }
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A HELLO or READY after the handshake: ERROR UNEXPECTED (06). An ERROR
 * from the peer: the ZLink side closes without answering. */
static void handshake_commands_after_handshake(void)
{
    void *ctx = ctx_new1();
    for (size_t t = 0; t < NTARGETS; t++) {
        int target = k_targets[t];
        int rt = raw_type_for(target);
        wire_t w;
        w_init(&w);
        printf("# second HELLO -> %s\n", type_name(target));
        w_hello(&w, rt, has_lanes(rt) ? RAW_RID : "");
        run_case(ctx, target, NO_LIMIT, AFTER_HANDSHAKE, &w, false, ZMP_ERR_UNEXPECTED);

        printf("# second READY -> %s\n", type_name(target));
        w.n = 0;
        if (has_lanes(rt)) {
            w_ready_dr(&w, rt, RAW_RID, 1, 0);
        } else {
            wire_t none;
            w_init(&none);
            w_ready(&w, &none);
            w_free(&none);
        }
        run_case(ctx, target, NO_LIMIT, AFTER_HANDSHAKE, &w, false, ZMP_ERR_UNEXPECTED);

        printf("# ERROR from the peer -> %s\n", type_name(target));
        w.n = 0;
        w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 3 + 3);
        w_bytes(&w, "\x05\x01\x03" "bye", 6);
        run_case(ctx, target, NO_LIMIT, AFTER_HANDSHAKE, &w, false, CODE_NONE);
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* The stream ends inside a frame (header, sequence or body): the ZLink side
 * closes and delivers nothing. */
static void eof_mid_frame(void)
{
    void *ctx = ctx_new1();
    for (int i = 0; i < 4; i++) {
        wire_t w;
        w_init(&w);
        const char *what;
        switch (i) {
        case 0:
            what = "5 header bytes";
            w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 3);
            w.n = 5;
            break;
        case 1:
            what = "3 of 100 body bytes";
            w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 100);
            w_bytes(&w, "abc", 3);
            break;
        case 2:
            what = "REQUEST header cut in its sequence";
            w_hdr_raw(&w, 0x5A, 0x01, 0x00, 1, 1);
            w_bytes(&w, "\0\0\0", 3);
            break;
        default:
            what = "a body cut inside a record";
            w_data(&w, true, "first");
            w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 10);
            w_bytes(&w, "12345", 5);
            break;
        }
        for (size_t t = 0; t < NTARGETS; t++) {
            printf("# EOF after %s -> %s\n", what, type_name(k_targets[t]));
            run_case(ctx, k_targets[t], NO_LIMIT, AFTER_HANDSHAKE, &w, true, CODE_ANY);
        }
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* Complete records, then a record whose connection closes before its final
 * frame, all in one write: the complete ones are delivered in order, the
 * partial one is not. */
static void truncated_multipart_delivers_complete_records_only(void)
{
    void *ctx = ctx_new1();
    for (int cut = 0; cut < 2; cut++) {
        for (size_t t = 0; t < NTARGETS; t++) {
            int target = k_targets[t];
            printf("# complete records then a partial one (%s) -> %s\n",
                   cut ? "cut inside a frame" : "cut after a MORE frame", type_name(target));
            fx_t f;
            raw_t r;
            fx_open(&f, ctx, target, NO_LIMIT);
            raw_handshake(&r, &f);
            raw_prove_alive(&r, &f);
            wire_t w;
            w_init(&w);
            w_data(&w, false, "one");
            w_data(&w, true, "two-a");
            w_data(&w, true, "two-b-that-is-longer-than-twenty-nine-bytes");
            w_data(&w, false, "two-c");
            w_data(&w, true, "partial-a");
            w_data(&w, true, "partial-b");
            if (cut)
                w_bytes(&w, "\x5A\x01\x00\x00\x00\x00\x00\x09" "fin", 11);
            raw_send_bytes(&r, w.b, w.n);
            shutdown(r.fd, SHUT_WR);
            w_free(&w);
            rec_t got;
            ZT_EQ_INT(recv_rec(f.s, f.type, 0, &got), ZLINK_RECV_OK);
            const char *one[] = {"one"};
            rec_is(&got, 1, one);
            ZT_EQ_INT(recv_rec(f.s, f.type, 0, &got), ZLINK_RECV_OK);
            const char *two[] = {"two-a", "two-b-that-is-longer-than-twenty-nine-bytes", "two-c"};
            rec_is(&got, 3, two);
            raw_wait_closed(&r);
            expect_no_data(&f);
            raw_close(&r);
            good_peer_exchange(&f);
            fx_close(&f);
        }
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* Complete records followed, in the same write (so normally the same read),
 * by a violation: the complete records are delivered whole and in order,
 * the record in progress (if any) is not, and the connection closes with
 * the violation's ERROR. Whether whole records are delivered must not
 * depend on how TCP splits the stream: the same records are delivered when
 * the violation arrives in a later read (as in every other case here), and
 * when the stream just ends (truncated_multipart_... above). */
static void complete_records_before_a_violation_are_delivered(void)
{
    void *ctx = ctx_new1();
    for (int v = 0; v < 3; v++) {
        for (size_t t = 0; t < NTARGETS; t++) {
            int target = k_targets[t];
            const char *what = v == 0 ? "reserved flag bit" : v == 1 ? "a frame over MAXMSGSIZE"
                                                                      : "KIND mid-multipart";
            printf("# complete records, then %s in the same write -> %s\n", what,
                   type_name(target));
            fx_t f;
            raw_t r;
            fx_open(&f, ctx, target, 100);
            raw_handshake(&r, &f);
            raw_prove_alive(&r, &f);
            wire_t w;
            w_init(&w);
            w_data(&w, false, "before-1");
            w_data(&w, true, "before-2a");
            w_data(&w, false, "before-2b");
            if (v == 0) {
                w_hdr_raw(&w, 0x5A, 0x01, 0x20, 0, 1);
                w_u8(&w, 'x');
            } else if (v == 1) {
                w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 101);
            } else {
                w_data(&w, true, "partial");
                w_frame(&w, 0x00, 2, 9, "x", 1);
            }
            raw_send_bytes(&r, w.b, w.n);
            w_free(&w);
            raw_wait_closed(&r);
            check_error(&r, v == 1 ? ZMP_ERR_BODY_TOO_LARGE : ZMP_ERR_MALFORMED);
            rec_t got;
            zlink_recv_result_t rc = recv_rec(f.s, f.type, ZLINK_DONTWAIT, &got);
            if (rc == ZLINK_RECV_NO_DATA)
                ZT_FAIL("the complete records before the violation were dropped");
            ZT_EQ_INT(rc, ZLINK_RECV_OK);
            const char *one[] = {"before-1"};
            rec_is(&got, 1, one);
            ZT_EQ_INT(recv_rec(f.s, f.type, ZLINK_DONTWAIT, &got), ZLINK_RECV_OK);
            const char *two[] = {"before-2a", "before-2b"};
            rec_is(&got, 2, two);
            expect_no_data(&f);
            raw_close(&r);
            good_peer_exchange(&f);
            fx_close(&f);
        }
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* Control bodies: 4096 bytes is fine (an unknown control is ignored and
 * the connection keeps working, even with MAXMSGSIZE 0 = unlimited, where a
 * 1 MiB data frame also passes); 4097 is refused from the header alone with
 * ERROR BODY_TOO_LARGE (04), for CONTROL and SUBSCRIBE frames alike. */
static void control_body_limit(void)
{
    void *ctx = ctx_new1();
    for (size_t t = 0; t < NTARGETS; t++) {
        int target = k_targets[t];
        printf("# 4096-byte control, 1 MiB data, then a 4097-byte control -> %s\n",
               type_name(target));
        fx_t f;
        raw_t r;
        fx_open(&f, ctx, target, 0);
        raw_handshake(&r, &f);
        raw_prove_alive(&r, &f);
        wire_t w;
        w_init(&w);
        w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 4096);
        w_fill(&w, 'c', 4096); /* an unknown control: ignored */
        if (target == ZLINK_SUB)
            w_data(&w, true, "t");
        w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 1u << 20);
        w_fill(&w, 'd', 1u << 20);
        raw_send_bytes(&r, w.b, w.n);
        rec_t got;
        ZT_EQ_INT(recv_rec(f.s, f.type, 0, &got), ZLINK_RECV_OK);
        ZT_EQ_INT(got.n, target == ZLINK_SUB ? 2 : 1);
        ZT_EQ_INT(got.size[got.n - 1], 1u << 20);
        ZT_EQ_INT(got.part[got.n - 1][0], 'd');
        w.n = 0;
        w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 4097); /* header only */
        raw_send_lenient(&r, w.b, w.n);
        raw_wait_closed(&r);
        check_error(&r, ZMP_ERR_BODY_TOO_LARGE);
        expect_no_data(&f);
        raw_close(&r);
        good_peer_exchange(&f);
        fx_close(&f);

        printf("# 4097-byte SUBSCRIBE -> %s\n", type_name(target));
        w.n = 0;
        w_hdr_raw(&w, 0x5A, 0x01, 0x08, 0, 4097);
        w_fill(&w, 's', 4097);
        run_case(ctx, target, NO_LIMIT, AFTER_HANDSHAKE, &w, false, ZMP_ERR_BODY_TOO_LARGE);
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* MAXMSGSIZE 100: a 100-byte frame passes; a 101-byte one and a 1 GiB one
 * are refused from the header alone (no body is ever sent): ERROR
 * BODY_TOO_LARGE, nothing delivered. */
static void frame_over_maxmsgsize(void)
{
    void *ctx = ctx_new1();
    for (size_t t = 0; t < NTARGETS; t++) {
        int target = k_targets[t];
        const uint32_t sizes[] = {101, 0x40000000u};
        for (int i = 0; i < 2; i++) {
            printf("# MAXMSGSIZE 100: 100 passes, %u refused -> %s\n", sizes[i],
                   type_name(target));
            fx_t f;
            raw_t r;
            fx_open(&f, ctx, target, 100);
            raw_handshake(&r, &f);
            raw_prove_alive(&r, &f);
            wire_t w;
            w_init(&w);
            /* SUB: the 1-byte topic counts toward the record's 100. */
            uint32_t fits = target == ZLINK_SUB ? 99 : 100;
            if (target == ZLINK_SUB)
                w_data(&w, true, "t");
            w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, fits);
            w_fill(&w, 'm', fits);
            raw_send_bytes(&r, w.b, w.n);
            rec_t got;
            ZT_EQ_INT(recv_rec(f.s, f.type, 0, &got), ZLINK_RECV_OK);
            ZT_EQ_INT(got.size[got.n - 1], fits);
            w.n = 0;
            if (target == ZLINK_SUB)
                w_data(&w, true, "t");
            w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, sizes[i]);
            raw_send_lenient(&r, w.b, w.n);
            raw_wait_closed(&r);
            check_error(&r, ZMP_ERR_BODY_TOO_LARGE);
            expect_no_data(&f);
            raw_close(&r);
            good_peer_exchange(&f);
            fx_close(&f);
            w_free(&w);
        }
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* MAXMSGSIZE 100 on a record: 60 + 40 passes; 60 + 41 is refused when the
 * second header arrives: ERROR BODY_TOO_LARGE, the partial record is not
 * delivered. */
static void multipart_sum_over_maxmsgsize(void)
{
    void *ctx = ctx_new1();
    for (size_t t = 0; t < NTARGETS; t++) {
        int target = k_targets[t];
        printf("# MAXMSGSIZE 100: 60+40 passes, 60+41 refused -> %s\n", type_name(target));
        fx_t f;
        raw_t r;
        fx_open(&f, ctx, target, 100);
        raw_handshake(&r, &f);
        raw_prove_alive(&r, &f);
        wire_t w;
        w_init(&w);
        /* SUB: the 1-byte topic counts too, so the parts are 59 + 40. */
        uint32_t first = target == ZLINK_SUB ? 59 : 60;
        if (target == ZLINK_SUB)
            w_data(&w, true, "t");
        w_hdr_raw(&w, 0x5A, 0x01, 0x01, 0, first);
        w_fill(&w, 'a', first);
        w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 40);
        w_fill(&w, 'b', 40);
        raw_send_bytes(&r, w.b, w.n);
        rec_t got;
        ZT_EQ_INT(recv_rec(f.s, f.type, 0, &got), ZLINK_RECV_OK);
        ZT_EQ_INT(got.n, target == ZLINK_SUB ? 3 : 2);
        w.n = 0;
        if (target == ZLINK_SUB)
            w_data(&w, true, "t");
        w_hdr_raw(&w, 0x5A, 0x01, 0x01, 0, first);
        w_fill(&w, 'a', first);
        w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 41);
        w_fill(&w, 'b', 41);
        raw_send_lenient(&r, w.b, w.n);
        raw_wait_closed(&r);
        check_error(&r, ZMP_ERR_BODY_TOO_LARGE);
        expect_no_data(&f);
        raw_close(&r);
        good_peer_exchange(&f);
        fx_close(&f);
        w_free(&w);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A MAXMSGSIZE below the size of a READY or a WEIGHT never blocks them:
 * ROUTER with MAXMSGSIZE 5 completes a handshake (a ~100-byte READY), takes
 * a WEIGHT (10-byte body) and a 5-byte record; a 6-byte one is refused. */
static void small_maxmsgsize_passes_controls(void)
{
    void *ctx = ctx_new1();
    fx_t f;
    raw_t r;
    fx_open(&f, ctx, ZLINK_ROUTER, 5);
    raw_handshake(&r, &f);
    wire_t w;
    w_init(&w);
    w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 10);
    w_bytes(&w, "WEIGHT\0\0\x01\x2C", 10);
    w_data(&w, false, "fiver");
    raw_send_bytes(&r, w.b, w.n);
    rec_t got;
    ZT_EQ_INT(recv_rec(f.s, f.type, 0, &got), ZLINK_RECV_OK);
    const char *want[] = {"fiver"};
    rec_is(&got, 1, want);
    ZT_CHECK(rid_is(&got.rid, RAW_RID));
    w.n = 0;
    w_data(&w, false, "sixsix");
    raw_send_lenient(&r, w.b, w.n);
    raw_wait_closed(&r);
    check_error(&r, ZMP_ERR_BODY_TOO_LARGE);
    expect_no_data(&f);
    raw_close(&r);
    w_free(&w);
    fx_close(&f);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* Controls that are not violations keep the connection: WEIGHT frames with
 * a wrong size or a value over 10000 and a control with an unknown body are
 * ignored, and records before and after them flow. */
static void malformed_weight_and_unknown_controls_ignored(void)
{
    void *ctx = ctx_new1();
    for (size_t t = 0; t < NTARGETS; t++) {
        int target = k_targets[t];
        printf("# bad WEIGHTs and an unknown control -> %s\n", type_name(target));
        fx_t f;
        raw_t r;
        fx_open(&f, ctx, target, NO_LIMIT);
        raw_handshake(&r, &f);
        raw_prove_alive(&r, &f);
        wire_t w;
        w_init(&w);
        w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 9);
        w_bytes(&w, "WEIGHT\0\0\x01", 9);        /* one byte short */
        w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 11);
        w_bytes(&w, "WEIGHT\0\0\x01\x2C\0", 11); /* one byte long */
        w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 10);
        w_bytes(&w, "WEIGHT\0\0\x27\x11", 10);   /* 10001 */
        w_hdr_raw(&w, 0x5A, 0x01, 0x02, 0, 11);
        w_bytes(&w, "ZZZ-unknown", 11);           /* a later version's control */
        if (target == ZLINK_SUB)
            w_data(&w, true, "t");
        w_data(&w, false, "after");
        raw_send_bytes(&r, w.b, w.n);
        w_free(&w);
        rec_t got;
        ZT_EQ_INT(recv_rec(f.s, f.type, 0, &got), ZLINK_RECV_OK);
        ZT_EQ_STR(got.part[got.n - 1], "after");
        /* Still open and no ERROR (a SUB may still write its SUBSCRIBE). */
        for (int k = 0; raw_fill(&r, 50); k++) {
            ZT_CHECK(!r.closed);
            ZT_CHECK(k < 16);
        }
        check_error(&r, CODE_NONE);
        raw_close(&r);
        fx_close(&f);
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* ================================ early refusal, stopped reads (issue 7) */

/* Open descriptors of this process (the ZLink side is in-process, so its
 * connections count here too). Probed number by number with fcntl, which
 * opens nothing: a directory listing of /proc/self/fd would take a
 * descriptor itself, possibly a number libuv just closed with a raw system
 * call that ThreadSanitizer does not see, and it would then report a race
 * between that reuse and libuv's last use. */
static int count_fds(void)
{
    struct rlimit rl;
    ZT_EQ_INT(getrlimit(RLIMIT_NOFILE, &rl), 0);
    int top = rl.rlim_cur < 8192 ? (int)rl.rlim_cur : 8192;
    int n = 0;
    for (int fd = 0; fd < top; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
}

/* A frame header that is not CONTROL, sent while the handshake is still on,
 * is refused as soon as its first header bytes are in: the connection
 * closes with ERROR HELLO_MALFORMED (before the HELLO) or UNEXPECTED (after
 * it) although the body it announces (1 GiB) never comes. HANDSHAKE_IVL 0,
 * so no timer can close it instead. Also refused: a SUBSCRIBE header, and
 * 4 bytes of a data header (flags and kind are known from 4 bytes). */
static void data_header_refused_during_handshake(void)
{
    void *ctx = ctx_new1();
    for (size_t t = 0; t < NTARGETS; t++) {
        int target = k_targets[t];
        int rt = raw_type_for(target);
        for (int v = 0; v < 4; v++) {
            const char *what[] = {"a 1 GiB data header first", "HELLO, then a 1 GiB data header",
                                  "HELLO, then 4 bytes of a data header",
                                  "HELLO, then a SUBSCRIBE header"};
            printf("# %s (no body) -> %s\n", what[v], type_name(target));
            fx_t f;
            raw_t r;
            fx_open(&f, ctx, target, NO_LIMIT);
            set_int(f.s, ZLINK_HANDSHAKE_IVL, 0);
            raw_open(&r, f.port);
            wire_t w;
            w_init(&w);
            if (v > 0)
                w_hello(&w, rt, has_lanes(rt) ? RAW_RID : "");
            if (v == 3)
                w_hdr_raw(&w, 0x5A, 0x01, 0x08, 0, 100);
            else
                w_hdr_raw(&w, 0x5A, 0x01, 0x00, 0, 0x40000000u);
            if (v == 2)
                w.n -= 4;
            raw_send_bytes(&r, w.b, w.n);
            w_free(&w);
            raw_wait_closed(&r);
            check_hello(&r, f.type);
            check_error(&r, v == 0 ? ZMP_ERR_HELLO : ZMP_ERR_UNEXPECTED);
            expect_no_data(&f);
            raw_close(&r);
            good_peer_exchange(&f);
            fx_close(&f);
        }
    }
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A raw ROUTER opens lane 0 to a ZLink ROUTER and completes its handshake;
 * the ZLink side then waits for lane 1 (which never comes). */
static void raw_router_lane0(raw_t *r, fx_t *f)
{
    raw_open(r, f->port);
    wire_t w;
    w_init(&w);
    w_hello(&w, ZLINK_ROUTER, RAW_RID);
    w_ready_dr(&w, ZLINK_ROUTER, RAW_RID, 2, 0);
    raw_send(r, &w);
    w_free(&w);
    raw_wait_frames(r, 2); /* its HELLO, and its READY after it validated ours */
    check_hello(r, ZLINK_ROUTER);
    r->at = r->n;
}

/* Records right behind READY (allowed, protocol.md 7.2): n bytes of 4 KiB
 * data frames, in one blocking send. */
static void raw_send_records(raw_t *r, size_t n)
{
    wire_t w;
    w_init(&w);
    while (w.n < n) {
        w_hdr(&w, 0x00, 4096);
        w_fill(&w, 'p', 4096);
    }
    raw_send(r, &w);
    w_free(&w);
}

/* A lane 0 waiting for its lane 1 holds at most 64 KiB of early records and
 * then stops reading. When its peer then closes, the ZLink side must see it
 * at once and close too (HANDSHAKE_IVL 0: nothing else would ever end it). */
static void peer_close_seen_while_parked_for_lane1(void)
{
    void *ctx = ctx_new1();
    fx_t f;
    raw_t r;
    fx_open(&f, ctx, ZLINK_ROUTER, NO_LIMIT);
    set_int(f.s, ZLINK_HANDSHAKE_IVL, 0);
    int base = count_fds();
    raw_router_lane0(&r, &f);
    raw_send_records(&r, 96 * 1024); /* over the 64 KiB the ZLink side holds */
    shutdown(r.fd, SHUT_WR);
    raw_wait_closed(&r);
    raw_close(&r);
    ZT_EVENTUALLY(count_fds() == base, 5000);
    expect_no_data(&f);
    good_peer_exchange(&f);
    fx_close(&f);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* The attack of issue 7: many connections park (lane 0 waiting for lane 1,
 * reading stopped at the 64 KiB it holds) and close at once. Every
 * descriptor the ZLink side had for them is released promptly. */
static void many_parked_connections_closed_release_their_fds(void)
{
    enum { N = 128 };
    void *ctx = ctx_new1();
    fx_t f;
    fx_open(&f, ctx, ZLINK_ROUTER, NO_LIMIT);
    set_int(f.s, ZLINK_HANDSHAKE_IVL, 0);
    int base = count_fds();
    static raw_t r[N];
    for (int i = 0; i < N; i++) {
        raw_router_lane0(&r[i], &f);
        raw_send_records(&r[i], 72 * 1024);
    }
    for (int i = 0; i < N; i++)
        raw_close(&r[i]);
    ZT_EVENTUALLY(count_fds() == base, 5000);
    good_peer_exchange(&f);
    fx_close(&f);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* Numbered 1 KiB records, sent without blocking until the ZLink side stops
 * taking them: a send that would block and no room within 300 ms (scaled)
 * means its reads are stopped (RCVHWM) and every buffer on the way is full.
 * Returns how many records went out whole (a record cut by the stop stays
 * cut: its rest is never sent). */
static uint32_t raw_flood_until_stopped(raw_t *r)
{
    enum { REC = 1024 };
    uint8_t rec[8 + REC];
    uint32_t whole = 0;
    size_t at = 0, total = 0;
    for (;;) {
        if (at == 0) {
            memset(rec, 0, sizeof rec);
            rec[0] = 0x5A, rec[1] = 0x01;
            rec[4] = REC >> 24, rec[5] = (REC >> 16) & 0xFF, rec[6] = (REC >> 8) & 0xFF;
            rec[7] = REC & 0xFF;
            memcpy(rec + 8, &whole, sizeof whole);
        }
        ssize_t k = send(r->fd, rec + at, sizeof rec - at, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k > 0) {
            at += (size_t)k;
            total += (size_t)k;
            if (at == sizeof rec) {
                at = 0;
                whole++;
            }
            if (total > (256u << 20))
                ZT_FAIL("the ZLink side never pushed back (%zu bytes taken)", total);
            continue;
        }
        ZT_CHECK(k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
        struct pollfd p = {.fd = r->fd, .events = POLLOUT};
        int rc = poll(&p, 1, T(300));
        ZT_CHECK(rc >= 0);
        if (rc == 0)
            break;
    }
    ZT_CHECK(total > 256 * 1024); /* well past the 64 KiB RCVHWM */
    return whole;
}

/* Numbered 1 KiB records [from, to) as data frames (part 0 starts with the
 * number, u32 in host order). */
static void w_numbered(wire_t *w, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        w_hdr(w, 0x00, 1024);
        size_t at = w->n;
        w_fill(w, 0, 1024);
        memcpy(w->b + at, &i, sizeof i);
    }
}

/* Records the ZLink socket holds for the application (monitor status). */
static uint64_t rcv_pending(void *mon)
{
    zlink_monitor_status_t st;
    memset(&st, 0, sizeof st);
    ZT_EQ_INT(zlink_monitor_status(mon, &st), ZLINK_CONFIG_OK);
    return st.rcv_pending_msgs;
}

/* Bytes the raw peer sent that the other end has not acknowledged. */
static int raw_unacked(const raw_t *r)
{
    int n = -1;
    ZT_EQ_INT(ioctl(r->fd, SIOCOUTQ, &n), 0);
    return n;
}

/* A DEALER-ROUTER connection whose receive pipe is full (RCVHWM 1 KiB, the
 * application reads nothing) has stopped reading, so TCP pushes back on the
 * sender. More records (32 KiB) then wait in the ZLink side's kernel
 * buffer, and the sender ends its side (FIN). The ZLink side notices at
 * once, before the application reads anything: it reads what the kernel
 * still holds (the sender can send nothing more), delivers it, and closes
 * the connection. Every record sent before the close is received
 * afterwards, in order: nothing is dropped. (A FIN can only arrive behind
 * the bytes sent before it, so the test waits until the kernel on the
 * ZLink side acknowledged them all; a FIN stuck behind a closed window in
 * the sender's kernel is not a close the receiver could see.) */
static void peer_close_seen_while_receive_pipe_full(void)
{
    void *ctx = ctx_new1();
    fx_t f;
    raw_t r;
    fx_open(&f, ctx, ZLINK_ROUTER, NO_LIMIT);
    uint64_t hwm = 1024;
    ZT_EQ_INT(zlink_setsockopt(f.s, ZLINK_RCVHWM, &hwm, sizeof hwm), ZLINK_CONFIG_OK);
    zlink_monitor_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    void *mon = zlink_socket_monitor_open(f.s, &cfg);
    ZT_CHECK(mon != NULL);
    int base = count_fds();
    raw_handshake(&r, &f);
    wire_t w;
    w_init(&w);
    w_numbered(&w, 0, 4);
    raw_send(&r, &w);
    ZT_EVENTUALLY(rcv_pending(mon) > 0, 5000); /* over the HWM: reads stop */
    w.n = 0;
    w_numbered(&w, 4, 36);
    raw_send(&r, &w);
    w_free(&w);
    ZT_EVENTUALLY(raw_unacked(&r) == 0, 5000);
    shutdown(r.fd, SHUT_WR);
    raw_wait_closed(&r);
    raw_close(&r);
    ZT_EVENTUALLY(count_fds() == base, 5000);
    for (uint32_t i = 0; i < 36; i++) {
        rec_t got;
        zlink_recv_result_t rc = recv_rec(f.s, f.type, ZLINK_DONTWAIT, &got);
        if (rc != ZLINK_RECV_OK)
            ZT_FAIL("record %u of 36: result %d", i, (int)rc);
        ZT_EQ_INT(got.n, 1);
        ZT_EQ_INT(got.size[0], 1024);
        uint32_t seq;
        memcpy(&seq, got.part[0], sizeof seq);
        ZT_EQ_INT(seq, i);
    }
    expect_no_data(&f);
    ZT_EQ_INT(zlink_monitor_close(&mon), ZLINK_CLOSE_OK);
    good_peer_exchange(&f);
    fx_close(&f);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* A full receive pipe (RCVHWM 64 KiB, nothing read) with every buffer on
 * the way full too: the sender floods until nothing moves, then resets the
 * connection (SO_LINGER 0; a reset, unlike a FIN, does not wait behind the
 * unsent bytes). The ZLink side releases the connection promptly, before
 * the application reads anything; what it delivers is a prefix of what was
 * sent, in order. */
static void peer_reset_seen_while_receive_pipe_full(void)
{
    void *ctx = ctx_new1();
    fx_t f;
    raw_t r;
    fx_open(&f, ctx, ZLINK_ROUTER, NO_LIMIT);
    uint64_t hwm = 64 * 1024;
    ZT_EQ_INT(zlink_setsockopt(f.s, ZLINK_RCVHWM, &hwm, sizeof hwm), ZLINK_CONFIG_OK);
    int base = count_fds();
    raw_handshake(&r, &f);
    raw_prove_alive(&r, &f);
    uint32_t whole = raw_flood_until_stopped(&r);
    struct linger lg = {1, 0};
    ZT_EQ_INT(setsockopt(r.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
    raw_close(&r); /* RST */
    ZT_EVENTUALLY(count_fds() == base, 5000);
    uint32_t i = 0;
    rec_t got;
    while (recv_rec(f.s, f.type, ZLINK_DONTWAIT, &got) == ZLINK_RECV_OK) {
        ZT_CHECK(i < whole);
        uint32_t seq;
        memcpy(&seq, got.part[0], sizeof seq);
        ZT_EQ_INT(seq, i);
        i++;
    }
    ZT_CHECK(i > 0);
    good_peer_exchange(&f);
    fx_close(&f);
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

static const zt_case_t cases[] = {
    ZT_CASE(codec_every_rule_code_and_early_reject),
    ZT_CASE(codec_maxmsgsize_from_header),
    ZT_CASE(garbage_before_hello),
    ZT_CASE(bad_magic_version_before_hello),
    ZT_CASE(data_before_handshake),
    ZT_CASE(incompatible_hello),
    ZT_CASE(malformed_hello),
    ZT_CASE(bad_lane_property_in_ready),
    ZT_CASE(forbidden_headers_after_handshake),
    ZT_CASE(handshake_commands_after_handshake),
    ZT_CASE(eof_mid_frame),
    ZT_CASE(truncated_multipart_delivers_complete_records_only),
    ZT_CASE(complete_records_before_a_violation_are_delivered),
    ZT_CASE(control_body_limit),
    ZT_CASE(frame_over_maxmsgsize),
    ZT_CASE(multipart_sum_over_maxmsgsize),
    ZT_CASE(small_maxmsgsize_passes_controls),
    ZT_CASE(malformed_weight_and_unknown_controls_ignored),
    ZT_CASE(data_header_refused_during_handshake),
    ZT_CASE(peer_close_seen_while_parked_for_lane1),
    ZT_CASE(many_parked_connections_closed_release_their_fds),
    ZT_CASE(peer_close_seen_while_receive_pipe_full),
    ZT_CASE(peer_reset_seen_while_receive_pipe_full),
};

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN); /* belt and braces: raw sends use MSG_NOSIGNAL */
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
