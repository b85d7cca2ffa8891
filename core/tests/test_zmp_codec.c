/*
 * test_zmp_codec.c — unit tests of the ZMP v1 codec (core/src/engine/zmp.h):
 * header layout, round trips, every EPROTO / EMSGSIZE rule, input split at
 * every byte boundary, HELLO / READY / ERROR / WEIGHT build and parse, and
 * the READY lane checks. Pure functions only: no sockets, no threads.
 */
#include "wire/zmp.h"
#include "zltest.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------- helpers */

/* A byte stream under construction. */
typedef struct wire {
    uint8_t b[65536];
    size_t n;
} wire_t;

static void put_frame(wire_t *w, uint8_t flags, uint8_t kind, uint64_t seq,
                      const void *body, uint32_t size)
{
    w->n += zmp_encode_header(w->b + w->n, flags, kind, seq, size);
    if (size > 0)
        memcpy(w->b + w->n, body, size);
    w->n += size;
}

/* Raw header bytes, for frames the encoder would never produce. */
static void put_raw(wire_t *w, uint8_t magic, uint8_t ver, uint8_t flags, uint8_t kind,
                    uint32_t size)
{
    uint8_t *p = w->b + w->n;
    p[0] = magic;
    p[1] = ver;
    p[2] = flags;
    p[3] = kind;
    zmp_put_u32(p + 4, size);
    w->n += 8;
}

typedef struct got {
    zmp_hdr_t h[64];
    uint8_t body[64][256];
    size_t n;
    int rc;           /* 0 when all input decoded, else the error */
    size_t pending;   /* bytes left unparsed */
    uint8_t code;
} got_t;

/* Decodes w as if it arrived in pieces of at most `step` bytes (0 = all at
 * once), or in exactly two pieces split at `split` when step is SIZE_MAX.
 * Mirrors what conn.c does: accumulate, decode from the frame start. */
static void decode_stream(const wire_t *w, int64_t maxmsg, size_t step, size_t split, got_t *g)
{
    zmp_decoder_t d;
    zmp_decoder_init(&d, maxmsg);
    memset(g, 0, sizeof *g);
    size_t have = 0, pos = 0;
    while (have < w->n) {
        size_t add;
        if (step == SIZE_MAX)
            add = have < split ? split - have : w->n - have;
        else
            add = step == 0 ? w->n - have : (w->n - have < step ? w->n - have : step);
        have += add;
        for (;;) {
            zmp_hdr_t h;
            size_t need = 0;
            int rc = zmp_decode(&d, w->b + pos, have - pos, &h, &need);
            if (rc == EAGAIN) {
                ZT_CHECK(need > have - pos);
                break;
            }
            if (rc != 0) {
                g->rc = rc;
                g->code = d.error_code;
                g->pending = have - pos;
                return;
            }
            ZT_CHECK(g->n < 64);
            g->h[g->n] = h;
            size_t c = h.size < 256 ? h.size : 256;
            memcpy(g->body[g->n], w->b + pos + h.hdr_len, c);
            g->n++;
            pos += h.hdr_len + h.size;
        }
    }
    g->pending = have - pos;
    g->rc = zmp_decoder_eof(&d, g->pending);
}

/* The result of decoding w all at once. */
static int decode_rc(const wire_t *w, int64_t maxmsg, uint8_t *code)
{
    got_t g;
    decode_stream(w, maxmsg, 0, 0, &g);
    if (code != NULL)
        *code = g.code;
    return g.rc;
}

static void expect_eproto(const wire_t *w)
{
    uint8_t code = 0;
    ZT_EQ_INT(decode_rc(w, 0, &code), EPROTO);
    ZT_CHECK(code != 0);
}

/* ----------------------------------------------------------- framing */

static void test_header_layout(void)
{
    uint8_t h[16];
    ZT_EQ_INT(zmp_encode_header(h, 0, 0, 0, 5), 8);
    const uint8_t data[8] = {0x5A, 0x01, 0x00, 0x00, 0, 0, 0, 5};
    ZT_EQ_MEM(h, data, 8);

    ZT_EQ_INT(zmp_encode_header(h, ZMP_F_MORE, ZMP_KIND_REQUEST, 0x0102030405060708ull, 300),
              16);
    const uint8_t req[16] = {0x5A, 0x01, 0x01, 0x01, 0, 0, 0x01, 0x2C,
                             1, 2, 3, 4, 5, 6, 7, 8};
    ZT_EQ_MEM(h, req, 16);

    ZT_EQ_INT(zmp_encode_header(h, 0, ZMP_KIND_REPLY, 9, 0), 16);
    ZT_EQ_INT(h[3], 2);
    ZT_EQ_INT(zmp_encode_header(h, 0, ZMP_KIND_ERROR_REPLY, 9, 4), 16);
    ZT_EQ_INT(h[3], 3);
}

static void test_roundtrip_data(void)
{
    wire_t w = {.n = 0};
    put_frame(&w, 0, 0, 0, "hello", 5);
    put_frame(&w, 0, 0, 0, "", 0);
    got_t g;
    decode_stream(&w, 0, 0, 0, &g);
    ZT_EQ_INT(g.rc, 0);
    ZT_EQ_INT(g.n, 2);
    ZT_EQ_INT(g.h[0].size, 5);
    ZT_EQ_INT(g.h[0].hdr_len, 8);
    ZT_EQ_INT(g.h[0].flags, 0);
    ZT_EQ_INT(g.h[0].kind, 0);
    ZT_EQ_MEM(g.body[0], "hello", 5);
    ZT_EQ_INT(g.h[1].size, 0);
}

static void test_roundtrip_multipart(void)
{
    wire_t w = {.n = 0};
    put_frame(&w, ZMP_F_MORE | ZMP_F_IDENTITY, 0, 0, "id", 2);
    put_frame(&w, ZMP_F_MORE, 0, 0, "a", 1);
    put_frame(&w, 0, 0, 0, "bc", 2);
    got_t g;
    decode_stream(&w, 0, 0, 0, &g);
    ZT_EQ_INT(g.rc, 0);
    ZT_EQ_INT(g.n, 3);
    ZT_EQ_INT(g.h[0].flags, ZMP_F_MORE | ZMP_F_IDENTITY);
    ZT_EQ_INT(g.h[1].flags, ZMP_F_MORE);
    ZT_EQ_INT(g.h[2].flags, 0);
    ZT_EQ_MEM(g.body[2], "bc", 2);
}

static void test_roundtrip_request_reply(void)
{
    wire_t w = {.n = 0};
    /* A two-part request, a one-part reply, a two-part error reply. */
    put_frame(&w, ZMP_F_MORE, ZMP_KIND_REQUEST, 77, "q1", 2);
    put_frame(&w, 0, 0, 0, "q2", 2);
    put_frame(&w, 0, ZMP_KIND_REPLY, 77, "r", 1);
    put_frame(&w, ZMP_F_MORE, ZMP_KIND_ERROR_REPLY, UINT64_MAX, "\0\0\0\x6f", 4);
    put_frame(&w, 0, 0, 0, "why", 3);
    got_t g;
    decode_stream(&w, 0, 0, 0, &g);
    ZT_EQ_INT(g.rc, 0);
    ZT_EQ_INT(g.n, 5);
    ZT_EQ_INT(g.h[0].kind, ZMP_KIND_REQUEST);
    ZT_EQ_INT(g.h[0].hdr_len, 16);
    ZT_EQ_U64(g.h[0].seq, 77);
    ZT_EQ_INT(g.h[0].size, 2);
    ZT_EQ_MEM(g.body[0], "q1", 2);
    ZT_EQ_INT(g.h[1].kind, 0);
    ZT_EQ_INT(g.h[1].hdr_len, 8);
    ZT_EQ_INT(g.h[2].kind, ZMP_KIND_REPLY);
    ZT_EQ_U64(g.h[2].seq, 77);
    ZT_EQ_INT(g.h[3].kind, ZMP_KIND_ERROR_REPLY);
    ZT_EQ_U64(g.h[3].seq, UINT64_MAX);
    ZT_EQ_MEM(g.body[4], "why", 3);
}

static void test_control_frames_roundtrip(void)
{
    wire_t w = {.n = 0};
    uint8_t buf[64];
    size_t n = zmp_build_weight(buf, sizeof buf, 300);
    ZT_EQ_INT(n, 18);
    memcpy(w.b, buf, n);
    w.n = n;
    put_frame(&w, ZMP_F_SUBSCRIBE, 0, 0, "topic", 5);
    put_frame(&w, ZMP_F_CANCEL, 0, 0, "topic", 5);
    got_t g;
    decode_stream(&w, 0, 0, 0, &g);
    ZT_EQ_INT(g.rc, 0);
    ZT_EQ_INT(g.n, 3);
    ZT_EQ_INT(g.h[0].flags, ZMP_F_CONTROL);
    ZT_EQ_INT(g.h[0].size, 10);
    ZT_EQ_INT(zmp_control_kind(g.body[0], 10), ZMP_CTL_WEIGHT);
    uint32_t wt = 0;
    ZT_EQ_INT(zmp_parse_weight(g.body[0], 10, &wt), 0);
    ZT_EQ_INT(wt, 300);
    ZT_EQ_INT(g.h[1].flags, ZMP_F_SUBSCRIBE);
    ZT_EQ_INT(g.h[2].flags, ZMP_F_CANCEL);
}

/* ------------------------------------------------------- EPROTO rules */

static void test_reject_reserved_flags(void)
{
    for (int bit = 5; bit <= 7; bit++) {
        wire_t w = {.n = 0};
        put_raw(&w, 0x5A, 1, (uint8_t)(1u << bit), 0, 0);
        expect_eproto(&w);
    }
}

static void test_reject_control_identity(void)
{
    wire_t w = {.n = 0};
    put_raw(&w, 0x5A, 1, ZMP_F_CONTROL | ZMP_F_IDENTITY, 0, 0);
    expect_eproto(&w);
}

static void test_reject_control_more(void)
{
    wire_t w = {.n = 0};
    put_raw(&w, 0x5A, 1, ZMP_F_CONTROL | ZMP_F_MORE, 0, 0);
    expect_eproto(&w);
}

static void test_reject_subscribe_cancel(void)
{
    wire_t w = {.n = 0};
    put_raw(&w, 0x5A, 1, ZMP_F_SUBSCRIBE | ZMP_F_CANCEL, 0, 0);
    expect_eproto(&w);
}

static void test_reject_subscribe_or_cancel_with_others(void)
{
    const uint8_t others[] = {ZMP_F_MORE, ZMP_F_CONTROL, ZMP_F_IDENTITY};
    for (size_t i = 0; i < sizeof others; i++) {
        wire_t a = {.n = 0}, b = {.n = 0};
        put_raw(&a, 0x5A, 1, (uint8_t)(ZMP_F_SUBSCRIBE | others[i]), 0, 0);
        put_raw(&b, 0x5A, 1, (uint8_t)(ZMP_F_CANCEL | others[i]), 0, 0);
        expect_eproto(&a);
        expect_eproto(&b);
    }
}

static void test_reject_kind_with_special_flags(void)
{
    const uint8_t special[] = {ZMP_F_CONTROL, ZMP_F_IDENTITY, ZMP_F_SUBSCRIBE, ZMP_F_CANCEL};
    for (uint8_t kind = 1; kind <= 3; kind++) {
        for (size_t i = 0; i < sizeof special; i++) {
            wire_t w = {.n = 0};
            put_raw(&w, 0x5A, 1, special[i], kind, 0);
            zmp_put_u64(w.b + w.n, 1);
            w.n += 8;
            expect_eproto(&w);
        }
    }
    /* MORE is not special: a multipart request is fine. */
    wire_t ok = {.n = 0};
    put_frame(&ok, ZMP_F_MORE, 1, 5, "a", 1);
    put_frame(&ok, 0, 0, 0, "b", 1);
    ZT_EQ_INT(decode_rc(&ok, 0, NULL), 0);
}

static void test_reject_kind_mid_multipart(void)
{
    wire_t w = {.n = 0};
    put_frame(&w, ZMP_F_MORE, 0, 0, "a", 1);
    put_frame(&w, 0, ZMP_KIND_REPLY, 3, "b", 1);
    expect_eproto(&w);
}

static void test_reject_control_mid_multipart(void)
{
    wire_t w = {.n = 0};
    put_frame(&w, ZMP_F_MORE, 0, 0, "a", 1);
    put_frame(&w, ZMP_F_CONTROL, 0, 0, "WEIGHT\0\0\0\1", 10);
    expect_eproto(&w);
}

static void test_reject_seq_zero(void)
{
    wire_t w = {.n = 0};
    put_frame(&w, 0, ZMP_KIND_REQUEST, 0, "a", 1);
    expect_eproto(&w);
}

static void test_reject_unknown_kind(void)
{
    wire_t a = {.n = 0}, b = {.n = 0};
    put_raw(&a, 0x5A, 1, 0, 4, 0);
    put_raw(&b, 0x5A, 1, 0, 0xFF, 0);
    expect_eproto(&a);
    expect_eproto(&b);
}

static void test_reject_bad_magic_version(void)
{
    wire_t a = {.n = 0}, b = {.n = 0}, c = {.n = 0};
    put_raw(&a, 0x5B, 1, 0, 0, 0);
    put_raw(&b, 0x5A, 2, 0, 0, 0);
    put_raw(&c, 0x5A, 0, 0, 0, 0);
    expect_eproto(&a);
    expect_eproto(&b);
    expect_eproto(&c);
    /* Rejected on the first byte, before a whole header arrived. */
    zmp_decoder_t d;
    zmp_hdr_t h;
    size_t need;
    zmp_decoder_init(&d, 0);
    ZT_EQ_INT(zmp_decode(&d, (const uint8_t *)"\x00", 1, &h, &need), EPROTO);
}

static void test_reject_eof_mid_frame(void)
{
    wire_t w = {.n = 0};
    put_frame(&w, 0, 0, 0, "hello", 5);
    w.n -= 2; /* the body is cut short */
    got_t g;
    decode_stream(&w, 0, 0, 0, &g);
    ZT_EQ_INT(g.n, 0);
    ZT_EQ_INT(g.rc, EPROTO);

    /* Cut inside the header, and right after a MORE frame. */
    wire_t h = {.n = 0};
    put_frame(&h, 0, 0, 0, "x", 1);
    h.n = 5;
    ZT_EQ_INT(decode_rc(&h, 0, NULL), EPROTO);
    wire_t m = {.n = 0};
    put_frame(&m, ZMP_F_MORE, 0, 0, "x", 1);
    ZT_EQ_INT(decode_rc(&m, 0, NULL), EPROTO);
    /* A clean end is not an error. */
    zmp_decoder_t d;
    zmp_decoder_init(&d, 0);
    ZT_EQ_INT(zmp_decoder_eof(&d, 0), 0);
}

static void test_control_limit(void)
{
    static uint8_t body[4097];
    memset(body, 'x', sizeof body);
    wire_t ok = {.n = 0}, big = {.n = 0}, sub = {.n = 0};
    put_frame(&ok, ZMP_F_CONTROL, 0, 0, body, 4096);
    ZT_EQ_INT(decode_rc(&ok, 0, NULL), 0);
    put_frame(&big, ZMP_F_CONTROL, 0, 0, body, 4097);
    uint8_t code = 0;
    ZT_EQ_INT(decode_rc(&big, 0, &code), EMSGSIZE);
    ZT_EQ_INT(code, ZMP_ERR_BODY_TOO_LARGE);
    put_frame(&sub, ZMP_F_SUBSCRIBE, 0, 0, body, 4097);
    ZT_EQ_INT(decode_rc(&sub, 0, &code), EMSGSIZE);

    /* Refused from the header alone, before the body arrives. */
    zmp_decoder_t d;
    zmp_hdr_t h;
    size_t need;
    zmp_decoder_init(&d, 0);
    ZT_EQ_INT(zmp_decode(&d, big.b, 8, &h, &need), EMSGSIZE);
}

static void test_maxmsgsize_part_and_sum(void)
{
    uint8_t body[100];
    memset(body, 'y', sizeof body);
    uint8_t code = 0;

    wire_t part = {.n = 0};
    put_frame(&part, 0, 0, 0, body, 11);
    ZT_EQ_INT(decode_rc(&part, 10, &code), EMSGSIZE);
    ZT_EQ_INT(code, ZMP_ERR_BODY_TOO_LARGE);
    ZT_EQ_INT(decode_rc(&part, 11, NULL), 0);
    ZT_EQ_INT(decode_rc(&part, 0, NULL), 0);   /* 0: unlimited */
    ZT_EQ_INT(decode_rc(&part, -1, NULL), 0);  /* negative: unlimited */

    wire_t sum = {.n = 0};
    put_frame(&sum, ZMP_F_MORE, 0, 0, body, 6);
    put_frame(&sum, 0, 0, 0, body, 6);
    got_t g;
    decode_stream(&sum, 10, 0, 0, &g);
    ZT_EQ_INT(g.rc, EMSGSIZE);
    ZT_EQ_INT(g.code, ZMP_ERR_BODY_TOO_LARGE);
    ZT_EQ_INT(decode_rc(&sum, 12, NULL), 0);

    /* The sum restarts with each record. */
    wire_t two = {.n = 0};
    put_frame(&two, ZMP_F_MORE, 0, 0, body, 5);
    put_frame(&two, 0, 0, 0, body, 5);
    put_frame(&two, ZMP_F_MORE, 0, 0, body, 5);
    put_frame(&two, 0, 0, 0, body, 5);
    ZT_EQ_INT(decode_rc(&two, 10, NULL), 0);

    /* Controls ignore MAXMSGSIZE (only the 4096 limit applies). */
    wire_t ctl = {.n = 0};
    uint8_t wbuf[32];
    size_t n = zmp_build_weight(wbuf, sizeof wbuf, 7);
    memcpy(ctl.b, wbuf, n);
    ctl.n = n;
    ZT_EQ_INT(decode_rc(&ctl, 5, NULL), 0);
}

/* ------------------------------------------------- split at any byte */

static void build_mixed_stream(wire_t *w)
{
    uint8_t big[200];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)i;
    w->n = 0;
    put_frame(w, 0, 0, 0, "one", 3);
    put_frame(w, ZMP_F_MORE, ZMP_KIND_REQUEST, 0x1122334455667788ull, "req", 3);
    put_frame(w, ZMP_F_MORE, 0, 0, big, sizeof big);
    put_frame(w, 0, 0, 0, "", 0);
    uint8_t wbuf[32];
    size_t n = zmp_build_weight(wbuf, sizeof wbuf, 42);
    memcpy(w->b + w->n, wbuf, n);
    w->n += n;
    put_frame(w, 0, ZMP_KIND_REPLY, 9, "rep", 3);
    put_frame(w, ZMP_F_SUBSCRIBE, 0, 0, "t", 1);
    put_frame(w, ZMP_F_IDENTITY | ZMP_F_MORE, 0, 0, "id", 2);
    put_frame(w, 0, 0, 0, big, 100);
}

static void same_frames(const got_t *a, const got_t *b)
{
    ZT_EQ_INT(a->rc, b->rc);
    ZT_EQ_INT(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        ZT_EQ_INT(a->h[i].flags, b->h[i].flags);
        ZT_EQ_INT(a->h[i].kind, b->h[i].kind);
        ZT_EQ_INT(a->h[i].size, b->h[i].size);
        ZT_EQ_U64(a->h[i].seq, b->h[i].seq);
        ZT_EQ_INT(a->h[i].hdr_len, b->h[i].hdr_len);
        size_t c = a->h[i].size < 256 ? a->h[i].size : 256;
        ZT_EQ_MEM(a->body[i], b->body[i], c);
    }
}

static void test_split_every_boundary(void)
{
    static wire_t w;
    build_mixed_stream(&w);
    static got_t whole, part;
    decode_stream(&w, 0, 0, 0, &whole);
    ZT_EQ_INT(whole.rc, 0);
    ZT_EQ_INT(whole.n, 9);
    for (size_t split = 1; split < w.n; split++) {
        decode_stream(&w, 0, SIZE_MAX, split, &part);
        same_frames(&whole, &part);
    }
    for (size_t step = 1; step <= 17; step++) {
        decode_stream(&w, 0, step, 0, &part);
        same_frames(&whole, &part);
    }
}

static void test_split_errors_identical(void)
{
    /* A malformed frame after good ones: same frames, same error at every
     * split point. */
    static wire_t w;
    build_mixed_stream(&w);
    put_frame(&w, ZMP_F_MORE, 0, 0, "a", 1);
    put_frame(&w, 0, ZMP_KIND_REQUEST, 4, "b", 1);
    static got_t whole, part;
    decode_stream(&w, 0, 0, 0, &whole);
    ZT_EQ_INT(whole.rc, EPROTO);
    ZT_EQ_INT(whole.n, 10);
    for (size_t split = 1; split < w.n; split++) {
        decode_stream(&w, 0, SIZE_MAX, split, &part);
        same_frames(&whole, &part);
    }
}

/* ------------------------------------------------------------ handshake */

static const uint8_t *frame_body(const uint8_t *frame, size_t len, size_t *n)
{
    zmp_decoder_t d;
    zmp_hdr_t h;
    size_t need;
    zmp_decoder_init(&d, 0);
    ZT_EQ_INT(zmp_decode(&d, frame, len, &h, &need), 0);
    ZT_EQ_INT(h.flags, ZMP_F_CONTROL);
    ZT_EQ_INT(h.kind, 0);
    ZT_EQ_INT(h.hdr_len + h.size, len);
    *n = h.size;
    return frame + h.hdr_len;
}

static void test_hello_roundtrip(void)
{
    uint8_t buf[ZMP_HELLO_MAX];
    zlink_routing_id_t rid = {.size = 3, .data = {'a', 'b', 'c'}};
    size_t len = zmp_build_hello(buf, sizeof buf, ZLINK_ROUTER, &rid);
    ZT_EQ_INT(len, 8 + 4 + 3);
    size_t n;
    const uint8_t *body = frame_body(buf, len, &n);
    const uint8_t want[] = {0x01, 0x10, 0x05, 3, 'a', 'b', 'c'};
    ZT_EQ_MEM(body, want, sizeof want);
    int type = 0;
    zlink_routing_id_t got;
    ZT_EQ_INT(zmp_parse_hello(body, n, &type, &got), 0);
    ZT_EQ_INT(type, ZLINK_ROUTER);
    ZT_EQ_INT(got.size, 3);
    ZT_EQ_MEM(got.data, "abc", 3);

    /* Empty rid, and a 255-byte rid. */
    zlink_routing_id_t none = {.size = 0};
    len = zmp_build_hello(buf, sizeof buf, ZLINK_PAIR, &none);
    body = frame_body(buf, len, &n);
    ZT_EQ_INT(zmp_parse_hello(body, n, &type, &got), 0);
    ZT_EQ_INT(type, ZLINK_PAIR);
    ZT_EQ_INT(got.size, 0);
    zlink_routing_id_t full = {.size = 255};
    memset(full.data, 7, 255);
    len = zmp_build_hello(buf, sizeof buf, ZLINK_DEALER, &full);
    ZT_EQ_INT(len, ZMP_HELLO_MAX);
    body = frame_body(buf, len, &n);
    ZT_EQ_INT(zmp_parse_hello(body, n, &type, &got), 0);
    ZT_EQ_INT(got.size, 255);

    /* Malformed HELLOs. */
    const uint8_t short_rid[] = {0x01, 0x10, 0x01, 5, 'a'};
    ZT_EQ_INT(zmp_parse_hello(short_rid, sizeof short_rid, &type, &got), EPROTO);
    const uint8_t long_rid[] = {0x01, 0x10, 0x01, 0, 'a'};
    ZT_EQ_INT(zmp_parse_hello(long_rid, sizeof long_rid, &type, &got), EPROTO);
    const uint8_t stream[] = {0x01, 0x10, 0x08, 0};
    ZT_EQ_INT(zmp_parse_hello(stream, sizeof stream, &type, &got), EPROTO);
    const uint8_t unknown[] = {0x01, 0x20, 0x01, 0};
    ZT_EQ_INT(zmp_parse_hello(unknown, sizeof unknown, &type, &got), EPROTO);
    const uint8_t wrong_cmd[] = {0x04, 0x10, 0x01, 0};
    ZT_EQ_INT(zmp_parse_hello(wrong_cmd, sizeof wrong_cmd, &type, &got), EPROTO);
    ZT_EQ_INT(zmp_parse_hello(stream, 3, &type, &got), EPROTO);
}

static void test_ready_roundtrip(void)
{
    zmp_ready_t r, p;
    zmp_ready_clear(&r);
    r.type = ZLINK_ROUTER;
    r.has_rid = true;
    r.rid.size = 2;
    r.rid.data[0] = 'x';
    r.rid.data[1] = 'y';
    r.lane_count = 2;
    r.lane = 1;
    r.has_weight = true;
    r.weight = 250;
    r.has_max_msg = true;
    r.max_msg = 1ull << 40;
    uint8_t buf[ZMP_READY_MAX];
    size_t len = zmp_build_ready(buf, sizeof buf, &r);
    ZT_CHECK(len > 0);
    size_t n;
    const uint8_t *body = frame_body(buf, len, &n);
    ZT_EQ_INT(body[0], 0x04);
    /* The first property, byte for byte. */
    const uint8_t st[] = {11, 'S', 'o', 'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e',
                          0, 0, 0, 6, 'R', 'O', 'U', 'T', 'E', 'R'};
    ZT_EQ_MEM(body + 1, st, sizeof st);
    ZT_EQ_INT(zmp_parse_ready(body, n, &p), 0);
    ZT_EQ_INT(p.type, ZLINK_ROUTER);
    ZT_CHECK(p.has_rid);
    ZT_EQ_INT(p.rid.size, 2);
    ZT_EQ_MEM(p.rid.data, "xy", 2);
    ZT_EQ_INT(p.lane_count, 2);
    ZT_EQ_INT(p.lane, 1);
    ZT_CHECK(p.has_weight);
    ZT_EQ_INT(p.weight, 250);
    ZT_CHECK(p.has_max_msg);
    ZT_EQ_U64(p.max_msg, 1ull << 40);

    zlink_routing_id_t hello_rid = r.rid;
    ZT_EQ_INT(zmp_check_ready(&p, ZLINK_ROUTER, ZLINK_ROUTER, &hello_rid), 0);

    /* An empty READY (PUB without metadata) parses as all-absent. */
    zmp_ready_t e;
    zmp_ready_clear(&e);
    len = zmp_build_ready(buf, sizeof buf, &e);
    ZT_EQ_INT(len, 9);
    body = frame_body(buf, len, &n);
    ZT_EQ_INT(zmp_parse_ready(body, n, &p), 0);
    ZT_EQ_INT(p.type, 0);
    ZT_EQ_INT(zmp_check_ready(&p, ZLINK_SUB, ZLINK_PUB, NULL), 0);

    /* Unknown properties are skipped. */
    uint8_t custom[64];
    size_t at = 0;
    custom[at++] = 0x04;
    custom[at++] = 3;
    memcpy(custom + at, "Foo", 3);
    at += 3;
    zmp_put_u32(custom + at, 2);
    at += 4;
    custom[at++] = 1;
    custom[at++] = 2;
    ZT_EQ_INT(zmp_parse_ready(custom, at, &p), 0);
}

/* Builds a READY body for D/R checks, then parses and checks it. */
static int dr_ready_check(int own, int peer_type, int count, int lane, bool with_rid,
                          bool with_type)
{
    zmp_ready_t r, p;
    zmp_ready_clear(&r);
    r.type = with_type ? peer_type : 0;
    r.has_rid = with_rid;
    r.rid.size = 1;
    r.rid.data[0] = 'k';
    r.lane_count = count;
    r.lane = lane;
    uint8_t buf[ZMP_READY_MAX];
    size_t len = zmp_build_ready(buf, sizeof buf, &r);
    size_t n;
    const uint8_t *body = frame_body(buf, len, &n);
    int rc = zmp_parse_ready(body, n, &p);
    if (rc != 0)
        return rc;
    zlink_routing_id_t hello_rid = {.size = 1, .data = {'k'}};
    return zmp_check_ready(&p, own, peer_type, &hello_rid);
}

static void test_ready_lane_rules(void)
{
    /* Good ones: counts 1/1/2 in both directions. */
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_DEALER, 1, 0, true, true), 0);
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_ROUTER, 1, 0, true, true), 0);
    ZT_EQ_INT(dr_ready_check(ZLINK_ROUTER, ZLINK_DEALER, 1, 0, true, true), 0);
    ZT_EQ_INT(dr_ready_check(ZLINK_ROUTER, ZLINK_ROUTER, 2, 0, true, true), 0);
    ZT_EQ_INT(dr_ready_check(ZLINK_ROUTER, ZLINK_ROUTER, 2, 1, true, true), 0);
    /* Wrong count, lane past the count, missing properties. */
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_ROUTER, 2, 0, true, true), EPROTO);
    ZT_EQ_INT(dr_ready_check(ZLINK_ROUTER, ZLINK_ROUTER, 1, 0, true, true), EPROTO);
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_DEALER, 1, 1, true, true), EPROTO);
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_DEALER, -1, 0, true, true), EPROTO);
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_DEALER, 1, -1, true, true), EPROTO);
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_DEALER, 1, 0, false, true), EPROTO);
    ZT_EQ_INT(dr_ready_check(ZLINK_DEALER, ZLINK_DEALER, 1, 0, true, false), EPROTO);

    /* Raw property bodies the builder would not produce. */
    zmp_ready_t p;
    struct {
        const char *name;
        uint8_t vlen;
        uint8_t val[4];
    } bad[] = {
        {"Zlink-Lane-Count", 1, {3}},   /* count out of range */
        {"Zlink-Lane-Count", 1, {0}},
        {"Zlink-Lane-Count", 2, {0, 1}}, /* wrong value size */
        {"Zlink-Lane", 1, {2}},
        {"Zlink-Lane", 0, {0}},
        {"Zlink-Weight", 2, {0, 1}},
        {"Zlink-Weight", 4, {0, 0, 0x27, 0x11}}, /* 10001 */
        {"Socket-Type", 3, {'B', 'A', 'D'}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t body[64];
        size_t at = 0, nl = strlen(bad[i].name);
        body[at++] = 0x04;
        body[at++] = (uint8_t)nl;
        memcpy(body + at, bad[i].name, nl);
        at += nl;
        zmp_put_u32(body + at, bad[i].vlen);
        at += 4;
        memcpy(body + at, bad[i].val, bad[i].vlen);
        at += bad[i].vlen;
        ZT_EQ_INT(zmp_parse_ready(body, at, &p), EPROTO);
    }
    /* A property given twice. */
    uint8_t twice[64];
    size_t at = 0;
    twice[at++] = 0x04;
    for (int k = 0; k < 2; k++) {
        twice[at++] = 10;
        memcpy(twice + at, "Zlink-Lane", 10);
        at += 10;
        zmp_put_u32(twice + at, 1);
        at += 4;
        twice[at++] = 0;
    }
    ZT_EQ_INT(zmp_parse_ready(twice, at, &p), EPROTO);
    /* Truncated layouts: value length past the end, name past the end,
     * zero-length name. */
    const uint8_t trunc1[] = {0x04, 1, 'A', 0, 0, 0, 9, 'x'};
    ZT_EQ_INT(zmp_parse_ready(trunc1, sizeof trunc1, &p), EPROTO);
    const uint8_t trunc2[] = {0x04, 9, 'A'};
    ZT_EQ_INT(zmp_parse_ready(trunc2, sizeof trunc2, &p), EPROTO);
    const uint8_t noname[] = {0x04, 0, 0, 0, 0, 0};
    ZT_EQ_INT(zmp_parse_ready(noname, sizeof noname, &p), EPROTO);

    /* A Routing-Id that differs from the HELLO's. */
    zmp_ready_t r;
    zmp_ready_clear(&r);
    r.type = ZLINK_DEALER;
    r.has_rid = true;
    r.rid.size = 1;
    r.rid.data[0] = 'z';
    r.lane_count = 1;
    r.lane = 0;
    zlink_routing_id_t hello_rid = {.size = 1, .data = {'k'}};
    ZT_EQ_INT(zmp_check_ready(&r, ZLINK_ROUTER, ZLINK_DEALER, &hello_rid), EPROTO);
    /* Socket-Type that differs from the HELLO's. */
    r.rid.data[0] = 'k';
    ZT_EQ_INT(zmp_check_ready(&r, ZLINK_ROUTER, ZLINK_ROUTER, &hello_rid), EPROTO);
    /* Lane properties from a PUB. */
    zmp_ready_clear(&r);
    r.lane_count = 1;
    ZT_EQ_INT(zmp_check_ready(&r, ZLINK_SUB, ZLINK_PUB, NULL), EPROTO);
}

static void test_error_roundtrip(void)
{
    uint8_t buf[ZMP_ERROR_MAX];
    size_t len = zmp_build_error(buf, sizeof buf, ZMP_ERR_INCOMPATIBLE, "PUB vs PAIR");
    size_t n;
    const uint8_t *body = frame_body(buf, len, &n);
    ZT_EQ_INT(body[0], 0x05);
    ZT_EQ_INT(body[1], 0x03);
    ZT_EQ_INT(body[2], 11);
    uint8_t code = 0;
    char reason[64];
    ZT_EQ_INT(zmp_parse_error(body, n, &code, reason, sizeof reason), 0);
    ZT_EQ_INT(code, ZMP_ERR_INCOMPATIBLE);
    ZT_EQ_STR(reason, "PUB vs PAIR");
    ZT_EQ_INT(zmp_control_kind(body, n), ZMP_CTL_ERROR);
    const uint8_t bad[] = {0x05, 1, 4, 'a'};
    ZT_EQ_INT(zmp_parse_error(bad, sizeof bad, &code, reason, sizeof reason), EPROTO);
}

static void test_weight_rules(void)
{
    uint32_t w = 0;
    uint8_t body[12];
    memcpy(body, "WEIGHT", 6);
    zmp_put_u32(body + 6, 10000);
    ZT_EQ_INT(zmp_parse_weight(body, 10, &w), 0);
    ZT_EQ_INT(w, 10000);
    zmp_put_u32(body + 6, 10001);
    ZT_EQ_INT(zmp_parse_weight(body, 10, &w), EINVAL);
    zmp_put_u32(body + 6, 1);
    ZT_EQ_INT(zmp_parse_weight(body, 9, &w), EINVAL);
    ZT_EQ_INT(zmp_parse_weight(body, 11, &w), EINVAL);
    body[0] = 'w';
    ZT_EQ_INT(zmp_parse_weight(body, 10, &w), EINVAL);
    ZT_EQ_INT(zmp_control_kind((const uint8_t *)"FLOWSTATE\x01", 10), ZMP_CTL_FLOWSTATE);
    ZT_EQ_INT(zmp_control_kind((const uint8_t *)"WEIGHTX", 7), ZMP_CTL_WEIGHT);
}

static void test_type_matrix(void)
{
    const int all[] = {ZLINK_PAIR, ZLINK_PUB,  ZLINK_SUB,   ZLINK_DEALER,
                       ZLINK_ROUTER, ZLINK_XPUB, ZLINK_XSUB, ZLINK_STREAM};
    const int n = (int)(sizeof all / sizeof all[0]);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            bool c = zmp_types_compatible(all[i], all[j]);
            ZT_EQ_INT(c, zmp_types_compatible(all[j], all[i]));
            ok += c;
        }
    }
    /* PAIR-PAIR, D-D, D-R, R-D, R-R, and 4 PUB/SUB pairs both ways. */
    ZT_EQ_INT(ok, 1 + 4 + 8);
    ZT_CHECK(zmp_types_compatible(ZLINK_XPUB, ZLINK_SUB));
    ZT_CHECK(!zmp_types_compatible(ZLINK_PUB, ZLINK_PUB));
    ZT_CHECK(!zmp_types_compatible(ZLINK_STREAM, ZLINK_STREAM));
    ZT_CHECK(!zmp_types_compatible(ZLINK_PAIR, ZLINK_DEALER));
    ZT_EQ_INT(zmp_lane_count(ZLINK_DEALER, ZLINK_DEALER), 1);
    ZT_EQ_INT(zmp_lane_count(ZLINK_DEALER, ZLINK_ROUTER), 1);
    ZT_EQ_INT(zmp_lane_count(ZLINK_ROUTER, ZLINK_DEALER), 1);
    ZT_EQ_INT(zmp_lane_count(ZLINK_ROUTER, ZLINK_ROUTER), 2);
}

static const zt_case_t cases[] = {
    ZT_CASE(test_header_layout),
    ZT_CASE(test_roundtrip_data),
    ZT_CASE(test_roundtrip_multipart),
    ZT_CASE(test_roundtrip_request_reply),
    ZT_CASE(test_control_frames_roundtrip),
    ZT_CASE(test_reject_reserved_flags),
    ZT_CASE(test_reject_control_identity),
    ZT_CASE(test_reject_control_more),
    ZT_CASE(test_reject_subscribe_cancel),
    ZT_CASE(test_reject_subscribe_or_cancel_with_others),
    ZT_CASE(test_reject_kind_with_special_flags),
    ZT_CASE(test_reject_kind_mid_multipart),
    ZT_CASE(test_reject_control_mid_multipart),
    ZT_CASE(test_reject_seq_zero),
    ZT_CASE(test_reject_unknown_kind),
    ZT_CASE(test_reject_bad_magic_version),
    ZT_CASE(test_reject_eof_mid_frame),
    ZT_CASE(test_control_limit),
    ZT_CASE(test_maxmsgsize_part_and_sum),
    ZT_CASE(test_split_every_boundary),
    ZT_CASE(test_split_errors_identical),
    ZT_CASE(test_hello_roundtrip),
    ZT_CASE(test_ready_roundtrip),
    ZT_CASE(test_ready_lane_rules),
    ZT_CASE(test_error_roundtrip),
    ZT_CASE(test_weight_rules),
    ZT_CASE(test_type_matrix),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
