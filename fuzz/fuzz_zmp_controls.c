/*
 * fuzz_zmp_controls.c — the bodies of the ZMP handshake commands and the
 * named controls (core/src/wire/zmp.c): HELLO, READY, ERROR, WEIGHT,
 * FLOWSTATE, plus the errno part of an ERROR_REPLY and the control
 * classifier.
 *
 * Input: [sel u8][body...]. sel picks the local socket type and the HELLO
 * type zmp_check_ready compares against, and the reason buffer size given
 * to zmp_parse_error. The body (the rest of the input, so ASan sees its
 * end) goes to every parser. Asserted, per parser:
 *   - the result is one of its documented values (0 / EPROTO, or 0 / EINVAL
 *     for WEIGHT and FLOWSTATE, which a receiver ignores when malformed);
 *   - an accepted HELLO, WEIGHT or FLOWSTATE body is canonical: building
 *     the same values gives back exactly the body's bytes;
 *   - an accepted READY rebuilds (zmp_build_ready) into a body that parses
 *     to the same values; zmp_check_ready answers 0 or EPROTO;
 *   - an accepted ERROR writes a NUL-terminated reason inside the buffer
 *     size given and not one byte past it;
 *   - the errno part is 0 for any size but 4; the control name length of
 *     a body never exceeds the body.
 */
#include "fuzz_common.h"
#include "wire/zmp.h"

#include <errno.h>
#include <string.h>

static const int TYPES[] = {0,           ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_PUB,
                            ZLINK_SUB,   ZLINK_XPUB, ZLINK_XSUB,   ZLINK_STREAM, 99};
#define NTYPES (sizeof TYPES / sizeof TYPES[0])

static void fuzz_hello(const uint8_t *body, size_t n)
{
    int type = -1;
    zlink_routing_id_t rid;
    int rc = zmp_parse_hello(body, n, &type, &rid);
    FZ_CHECK(rc == 0 || rc == EPROTO);
    if (rc != 0)
        return;
    FZ_CHECK(zmp_type_valid(type));
    uint8_t frame[ZMP_HELLO_MAX];
    size_t len = zmp_build_hello(frame, sizeof frame, type, &rid);
    FZ_CHECK(len == ZMP_HDR_LEN + n);
    FZ_CHECK(memcmp(frame + ZMP_HDR_LEN, body, n) == 0);
    FZ_CHECK(zmp_control_kind(body, n) == ZMP_CTL_HELLO);
}

static bool ready_equal(const zmp_ready_t *a, const zmp_ready_t *b)
{
    return a->type == b->type && a->has_rid == b->has_rid &&
           (!a->has_rid ||
            (a->rid.size == b->rid.size && memcmp(a->rid.data, b->rid.data, a->rid.size) == 0)) &&
           a->lane_count == b->lane_count && a->lane == b->lane &&
           a->has_weight == b->has_weight && (!a->has_weight || a->weight == b->weight) &&
           a->has_max_msg == b->has_max_msg && (!a->has_max_msg || a->max_msg == b->max_msg);
}

static void fuzz_ready(const uint8_t *body, size_t n, int own, int hello_type)
{
    zmp_ready_t r;
    int rc = zmp_parse_ready(body, n, &r);
    FZ_CHECK(rc == 0 || rc == EPROTO);
    if (rc != 0)
        return;
    FZ_CHECK(zmp_control_kind(body, n) == ZMP_CTL_READY);
    uint8_t frame[ZMP_HDR_LEN + 1024];
    size_t len = zmp_build_ready(frame, sizeof frame, &r);
    FZ_CHECK(len > ZMP_HDR_LEN);
    zmp_ready_t again;
    FZ_CHECK(zmp_parse_ready(frame + ZMP_HDR_LEN, len - ZMP_HDR_LEN, &again) == 0);
    FZ_CHECK(ready_equal(&r, &again));
    zlink_routing_id_t hello_rid = r.rid; /* the consistent case... */
    rc = zmp_check_ready(&r, own, hello_type, &hello_rid);
    FZ_CHECK(rc == 0 || rc == EPROTO);
    memset(&hello_rid, 0, sizeof hello_rid); /* ...and an empty HELLO id */
    rc = zmp_check_ready(&r, own, hello_type, &hello_rid);
    FZ_CHECK(rc == 0 || rc == EPROTO);
}

static void fuzz_error(const uint8_t *body, size_t n, size_t cap)
{
    /* The reason buffer: cap bytes on the heap, so a write past it is an
     * ASan report; NULL when cap is 0 (allowed). */
    char *reason = cap > 0 ? malloc(cap) : NULL;
    if (cap > 0)
        memset(reason, 0x5A, cap);
    uint8_t code = 0;
    int rc = zmp_parse_error(body, n, &code, reason, cap);
    FZ_CHECK(rc == 0 || rc == EPROTO);
    if (rc == 0) {
        FZ_CHECK(n >= 3 && code == body[1]);
        FZ_CHECK(zmp_control_kind(body, n) == ZMP_CTL_ERROR);
        if (cap > 0) {
            size_t len = strnlen(reason, cap);
            FZ_CHECK(len < cap);
            FZ_CHECK(len <= body[2]);
        }
    }
    free(reason);
}

static void fuzz_weight(const uint8_t *body, size_t n)
{
    uint32_t w = 0xFFFFFFFFu;
    int rc = zmp_parse_weight(body, n, &w);
    FZ_CHECK(rc == 0 || rc == EINVAL);
    if (rc != 0)
        return;
    FZ_CHECK(n == ZMP_WEIGHT_SIZE && w <= ZMP_WEIGHT_MAX);
    uint8_t b[ZMP_WEIGHT_SIZE];
    zmp_weight_body(b, w);
    FZ_CHECK(memcmp(b, body, n) == 0);
    FZ_CHECK(zmp_control_kind(body, n) == ZMP_CTL_WEIGHT);
    FZ_CHECK(zmp_control_name_len(body, n) == 6);
}

static void fuzz_flowstate(const uint8_t *body, size_t n)
{
    bool paused = false;
    uint64_t epoch = 0;
    int rc = zmp_parse_flowstate(body, n, &paused, &epoch);
    FZ_CHECK(rc == 0 || rc == EINVAL);
    if (rc != 0)
        return;
    FZ_CHECK(n == ZMP_FLOWSTATE_SIZE);
    uint8_t b[ZMP_FLOWSTATE_SIZE];
    zmp_flowstate_body(b, paused, epoch);
    FZ_CHECK(memcmp(b, body, n) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader_t in = {data, size};
    uint8_t sel = fz_u8(&in);
    int own = TYPES[(sel & 0x0F) % NTYPES];
    int hello_type = TYPES[(sel >> 4) % NTYPES];
    size_t cap = (size_t)(sel * 7) % 300;
    const uint8_t *body = in.p;
    size_t n = in.n;

    zmp_control_kind_t kind = zmp_control_kind(body, n);
    FZ_CHECK(kind >= ZMP_CTL_HELLO && kind <= ZMP_CTL_OTHER);
    FZ_CHECK(zmp_control_name_len(body, n) <= n);

    fuzz_hello(body, n);
    fuzz_ready(body, n, own, hello_type);
    fuzz_error(body, n, cap);
    fuzz_weight(body, n);
    fuzz_flowstate(body, n);
    int e = zmp_parse_errno_part(body, n);
    if (n != ZMP_ERRNO_PART_SIZE)
        FZ_CHECK(e == 0);
    return 0;
}
