/*
 * zmp.c — the ZMP v1 codec (see zmp.h for the contract, doc/protocol.md for
 * the protocol). Pure functions: no state beyond the caller's zmp_decoder_t,
 * no allocation, any thread.
 */
#include "wire/zmp.h"

#include <errno.h>
#include <string.h>

/* ----------------------------------------------------------- framing */

size_t zmp_encode_header(uint8_t *out, uint8_t flags, uint8_t kind, uint64_t seq,
                         uint32_t size)
{
    out[0] = ZMP_MAGIC;
    out[1] = ZMP_VERSION;
    out[2] = flags;
    out[3] = kind;
    zmp_put_u32(out + 4, size);
    if (kind >= ZMP_KIND_REQUEST && kind <= ZMP_KIND_ERROR_REPLY) {
        zmp_put_u64(out + 8, seq);
        return ZMP_HDR_SEQ_LEN;
    }
    return ZMP_HDR_LEN;
}

void zmp_decoder_init(zmp_decoder_t *d, int64_t maxmsgsize)
{
    memset(d, 0, sizeof *d);
    d->maxmsgsize = maxmsgsize;
}

static int reject(zmp_decoder_t *d, int err, uint8_t code)
{
    d->error_code = code;
    return err;
}

/* Checks the flag and kind bytes of a header. 0 or EPROTO. */
static int check_flags_kind(zmp_decoder_t *d, uint8_t flags, uint8_t kind)
{
    const uint8_t special = ZMP_F_CONTROL | ZMP_F_IDENTITY | ZMP_F_SUBSCRIBE | ZMP_F_CANCEL;
    if (flags & ZMP_F_RESERVED)
        return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    if ((flags & ZMP_F_CONTROL) && (flags & (ZMP_F_IDENTITY | ZMP_F_MORE)))
        return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    if (flags & (ZMP_F_SUBSCRIBE | ZMP_F_CANCEL)) {
        /* SUBSCRIBE and CANCEL stand alone: no other bit, not even MORE. */
        if (flags != ZMP_F_SUBSCRIBE && flags != ZMP_F_CANCEL)
            return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    }
    if (kind > ZMP_KIND_ERROR_REPLY)
        return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    if (kind != ZMP_KIND_DATA && (flags & special))
        return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    if (d->mid) {
        /* Inside a record: only plain continuation frames. */
        if (kind != ZMP_KIND_DATA)
            return reject(d, EPROTO, ZMP_ERR_MALFORMED);
        if (zmp_is_control(flags))
            return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    }
    return 0;
}

int zmp_decode(zmp_decoder_t *d, const uint8_t *p, size_t n, zmp_hdr_t *h, size_t *need)
{
    /* Reject bad magic or version as soon as the byte is there. */
    if (n >= 1 && p[0] != ZMP_MAGIC)
        return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    if (n >= 2 && p[1] != ZMP_VERSION)
        return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    if (n >= 4) {
        int rc = check_flags_kind(d, p[2], p[3]);
        if (rc != 0)
            return rc;
    }
    if (n < ZMP_HDR_LEN) {
        *need = ZMP_HDR_LEN;
        return EAGAIN;
    }
    uint8_t flags = p[2], kind = p[3];
    uint32_t size = zmp_get_u32(p + 4);
    bool control = zmp_is_control(flags);
    if (control) {
        if (size > ZMP_CONTROL_MAX)
            return reject(d, EMSGSIZE, ZMP_ERR_BODY_TOO_LARGE);
    } else if (d->maxmsgsize > 0) {
        uint64_t max = (uint64_t)d->maxmsgsize;
        if ((uint64_t)size > max || d->rec_bytes + size > max)
            return reject(d, EMSGSIZE, ZMP_ERR_BODY_TOO_LARGE);
    }
    size_t hl = ZMP_HDR_LEN;
    uint64_t seq = 0;
    if (kind != ZMP_KIND_DATA) {
        hl = ZMP_HDR_SEQ_LEN;
        if (n < hl) {
            *need = hl;
            return EAGAIN;
        }
        seq = zmp_get_u64(p + 8);
        if (seq == 0)
            return reject(d, EPROTO, ZMP_ERR_MALFORMED);
    }
    if (n - hl < size) {
        *need = hl + size;
        return EAGAIN;
    }
    h->flags = flags;
    h->kind = kind;
    h->hdr_len = (uint8_t)hl;
    h->size = size;
    h->seq = seq;
    if (!control) {
        if (flags & ZMP_F_MORE) {
            d->mid = true;
            d->rec_bytes += size;
        } else {
            d->mid = false;
            d->rec_bytes = 0;
        }
    }
    return 0;
}

int zmp_decoder_eof(const zmp_decoder_t *d, size_t pending)
{
    return (pending > 0 || d->mid) ? EPROTO : 0;
}

/* ------------------------------------------------------ socket types */

bool zmp_type_valid(int type)
{
    switch (type) {
    case ZLINK_PAIR:
    case ZLINK_PUB:
    case ZLINK_SUB:
    case ZLINK_DEALER:
    case ZLINK_ROUTER:
    case ZLINK_XPUB:
    case ZLINK_XSUB:
        return true;
    default:
        return false;
    }
}

static bool is_pub(int t) { return t == ZLINK_PUB || t == ZLINK_XPUB; }
static bool is_sub(int t) { return t == ZLINK_SUB || t == ZLINK_XSUB; }
static bool is_dr(int t) { return t == ZLINK_DEALER || t == ZLINK_ROUTER; }

bool zmp_types_compatible(int a, int b)
{
    if (!zmp_type_valid(a) || !zmp_type_valid(b))
        return false;
    if (a == ZLINK_PAIR || b == ZLINK_PAIR)
        return a == b;
    if (is_dr(a) || is_dr(b))
        return is_dr(a) && is_dr(b);
    return (is_pub(a) && is_sub(b)) || (is_sub(a) && is_pub(b));
}

int zmp_lane_count(int a, int b)
{
    return (a == ZLINK_ROUTER && b == ZLINK_ROUTER) ? 2 : 1;
}

bool zmp_type_has_lanes(int type)
{
    return is_dr(type);
}

static const struct {
    int type;
    const char *name;
} type_names[] = {
    {ZLINK_PAIR, "PAIR"},     {ZLINK_PUB, "PUB"},       {ZLINK_SUB, "SUB"},
    {ZLINK_DEALER, "DEALER"}, {ZLINK_ROUTER, "ROUTER"}, {ZLINK_XPUB, "XPUB"},
    {ZLINK_XSUB, "XSUB"},
};

const char *zmp_type_name(int type)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
        if (type_names[i].type == type)
            return type_names[i].name;
    }
    return NULL;
}

int zmp_type_from_name(const uint8_t *name, size_t n)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
        const char *s = type_names[i].name;
        if (strlen(s) == n && memcmp(s, name, n) == 0)
            return type_names[i].type;
    }
    return 0;
}

/* ------------------------------------------------------------ HELLO */

/* Writes the CONTROL header for a body of size bytes. */
static size_t control_header(uint8_t *buf, size_t size)
{
    return zmp_encode_header(buf, ZMP_F_CONTROL, ZMP_KIND_DATA, 0, (uint32_t)size);
}

size_t zmp_build_hello(uint8_t *buf, size_t cap, int type, const zlink_routing_id_t *rid)
{
    size_t rlen = rid != NULL ? rid->size : 0;
    size_t body = 4 + rlen;
    if (cap < ZMP_HDR_LEN + body)
        return 0;
    size_t at = control_header(buf, body);
    buf[at++] = ZMP_CMD_HELLO;
    zmp_put_u16(buf + at, (uint16_t)type);
    at += 2;
    buf[at++] = (uint8_t)rlen;
    if (rlen > 0)
        memcpy(buf + at, rid->data, rlen);
    return at + rlen;
}

int zmp_parse_hello(const uint8_t *body, size_t n, int *type, zlink_routing_id_t *rid)
{
    if (n < 4 || body[0] != ZMP_CMD_HELLO)
        return EPROTO;
    int t = zmp_get_u16(body + 1);
    size_t rlen = body[3];
    if (n != 4 + rlen || !zmp_type_valid(t))
        return EPROTO;
    *type = t;
    memset(rid, 0, sizeof *rid);
    rid->size = (uint8_t)rlen;
    memcpy(rid->data, body + 4, rlen);
    return 0;
}

/* ------------------------------------------------------------ READY */

void zmp_ready_clear(zmp_ready_t *r)
{
    memset(r, 0, sizeof *r);
    r->lane_count = -1;
    r->lane = -1;
}

/* Appends one property; returns the new offset or 0 on overflow. */
static size_t put_prop(uint8_t *buf, size_t cap, size_t at, const char *name,
                       const void *val, size_t vlen)
{
    size_t nlen = strlen(name);
    if (at == 0 || at + 1 + nlen + 4 + vlen > cap)
        return 0;
    buf[at++] = (uint8_t)nlen;
    memcpy(buf + at, name, nlen);
    at += nlen;
    zmp_put_u32(buf + at, (uint32_t)vlen);
    at += 4;
    if (vlen > 0)
        memcpy(buf + at, val, vlen);
    return at + vlen;
}

size_t zmp_build_ready(uint8_t *buf, size_t cap, const zmp_ready_t *r)
{
    if (cap < ZMP_HDR_LEN + 1)
        return 0;
    size_t at = ZMP_HDR_LEN;
    buf[at++] = ZMP_CMD_READY;
    if (r->type != 0) {
        const char *tn = zmp_type_name(r->type);
        if (tn == NULL)
            return 0;
        at = put_prop(buf, cap, at, ZMP_PROP_SOCKET_TYPE, tn, strlen(tn));
    }
    if (r->has_rid)
        at = put_prop(buf, cap, at, ZMP_PROP_ROUTING_ID, r->rid.data, r->rid.size);
    if (r->lane_count >= 0) {
        uint8_t v = (uint8_t)r->lane_count;
        at = put_prop(buf, cap, at, ZMP_PROP_LANE_COUNT, &v, 1);
    }
    if (r->lane >= 0) {
        uint8_t v = (uint8_t)r->lane;
        at = put_prop(buf, cap, at, ZMP_PROP_LANE, &v, 1);
    }
    if (r->has_weight) {
        uint8_t v[4];
        zmp_put_u32(v, r->weight);
        at = put_prop(buf, cap, at, ZMP_PROP_WEIGHT, v, 4);
    }
    if (r->has_max_msg) {
        uint8_t v[8];
        zmp_put_u64(v, r->max_msg);
        at = put_prop(buf, cap, at, ZMP_PROP_MAX_MSG, v, 8);
    }
    if (at == 0 || at - ZMP_HDR_LEN > ZMP_CONTROL_MAX)
        return 0;
    control_header(buf, at - ZMP_HDR_LEN);
    return at;
}

static bool name_is(const uint8_t *name, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(name, want, n) == 0;
}

int zmp_parse_ready(const uint8_t *body, size_t n, zmp_ready_t *out)
{
    zmp_ready_clear(out);
    if (n < 1 || body[0] != ZMP_CMD_READY)
        return EPROTO;
    size_t at = 1;
    while (at < n) {
        size_t nlen = body[at++];
        if (nlen == 0 || n - at < nlen + 4)
            return EPROTO;
        const uint8_t *name = body + at;
        at += nlen;
        uint32_t vlen = zmp_get_u32(body + at);
        at += 4;
        if (n - at < vlen)
            return EPROTO;
        const uint8_t *val = body + at;
        at += vlen;

        if (name_is(name, nlen, ZMP_PROP_SOCKET_TYPE)) {
            if (out->type != 0)
                return EPROTO;
            out->type = zmp_type_from_name(val, vlen);
            if (out->type == 0)
                return EPROTO;
        } else if (name_is(name, nlen, ZMP_PROP_ROUTING_ID)) {
            if (out->has_rid || vlen > 255)
                return EPROTO;
            out->has_rid = true;
            out->rid.size = (uint8_t)vlen;
            memcpy(out->rid.data, val, vlen);
        } else if (name_is(name, nlen, ZMP_PROP_LANE_COUNT)) {
            if (out->lane_count >= 0 || vlen != 1 || val[0] < 1 || val[0] > 2)
                return EPROTO;
            out->lane_count = val[0];
        } else if (name_is(name, nlen, ZMP_PROP_LANE)) {
            if (out->lane >= 0 || vlen != 1 || val[0] > 1)
                return EPROTO;
            out->lane = val[0];
        } else if (name_is(name, nlen, ZMP_PROP_WEIGHT)) {
            if (out->has_weight || vlen != 4)
                return EPROTO;
            out->weight = zmp_get_u32(val);
            if (out->weight > ZMP_WEIGHT_MAX)
                return EPROTO;
            out->has_weight = true;
        } else if (name_is(name, nlen, ZMP_PROP_MAX_MSG)) {
            if (out->has_max_msg || vlen != 8)
                return EPROTO;
            out->has_max_msg = true;
            out->max_msg = zmp_get_u64(val);
        }
        /* Any other property: skipped (metadata of later versions). */
    }
    return 0;
}

int zmp_check_ready(const zmp_ready_t *r, int own_type, int hello_type,
                    const zlink_routing_id_t *hello_rid)
{
    if (r->type != 0 && r->type != hello_type)
        return EPROTO;
    if (!zmp_type_has_lanes(hello_type)) {
        if (r->lane_count >= 0 || r->lane >= 0)
            return EPROTO;
        return 0;
    }
    if (r->type == 0 || !r->has_rid || r->lane_count < 0 || r->lane < 0)
        return EPROTO;
    if (hello_rid != NULL && !(r->rid.size == hello_rid->size &&
                               memcmp(r->rid.data, hello_rid->data, r->rid.size) == 0))
        return EPROTO;
    if (r->lane_count != zmp_lane_count(own_type, hello_type))
        return EPROTO;
    if (r->lane >= r->lane_count)
        return EPROTO;
    return 0;
}

/* ------------------------------------------------------------ ERROR */

size_t zmp_build_error(uint8_t *buf, size_t cap, uint8_t code, const char *reason)
{
    size_t rlen = reason != NULL ? strlen(reason) : 0;
    if (rlen > 255)
        rlen = 255;
    size_t body = 3 + rlen;
    if (cap < ZMP_HDR_LEN + body)
        return 0;
    size_t at = control_header(buf, body);
    buf[at++] = ZMP_CMD_ERROR;
    buf[at++] = code;
    buf[at++] = (uint8_t)rlen;
    if (rlen > 0)
        memcpy(buf + at, reason, rlen);
    return at + rlen;
}

int zmp_parse_error(const uint8_t *body, size_t n, uint8_t *code, char *reason, size_t cap)
{
    if (n < 3 || body[0] != ZMP_CMD_ERROR)
        return EPROTO;
    size_t rlen = body[2];
    if (n != 3 + rlen)
        return EPROTO;
    *code = body[1];
    if (reason != NULL && cap > 0) {
        size_t c = rlen < cap - 1 ? rlen : cap - 1;
        memcpy(reason, body + 3, c);
        reason[c] = '\0';
    }
    return 0;
}

/* ---------------------------------------------------------- controls */

void zmp_weight_body(uint8_t body[ZMP_WEIGHT_SIZE], uint32_t weight)
{
    memcpy(body, ZMP_WEIGHT_NAME, 6);
    zmp_put_u32(body + 6, weight);
}

size_t zmp_build_weight(uint8_t *buf, size_t cap, uint32_t weight)
{
    if (cap < ZMP_HDR_LEN + ZMP_WEIGHT_SIZE)
        return 0;
    size_t at = control_header(buf, ZMP_WEIGHT_SIZE);
    zmp_weight_body(buf + at, weight);
    return at + ZMP_WEIGHT_SIZE;
}

void zmp_flowstate_body(uint8_t body[ZMP_FLOWSTATE_SIZE], bool paused, uint64_t epoch)
{
    memcpy(body, ZMP_FLOWSTATE_NAME, 9);
    body[9] = ZMP_FLOWSTATE_VERSION;
    body[10] = paused ? 1 : 0;
    zmp_put_u64(body + 11, epoch);
}

int zmp_parse_flowstate(const uint8_t *body, size_t n, bool *paused, uint64_t *epoch)
{
    if (n != ZMP_FLOWSTATE_SIZE || memcmp(body, ZMP_FLOWSTATE_NAME, 9) != 0 ||
        body[9] != ZMP_FLOWSTATE_VERSION || body[10] > 1)
        return EINVAL;
    *paused = body[10] == 1;
    *epoch = zmp_get_u64(body + 11);
    return 0;
}

void zmp_errno_part(uint8_t part[ZMP_ERRNO_PART_SIZE], int err)
{
    zmp_put_u32(part, (uint32_t)err);
}

int zmp_parse_errno_part(const uint8_t *part, size_t n)
{
    return n == ZMP_ERRNO_PART_SIZE ? (int)zmp_get_u32(part) : 0;
}

size_t zmp_control_name_len(const uint8_t *body, size_t n)
{
    switch (zmp_control_kind(body, n)) {
    case ZMP_CTL_WEIGHT: return sizeof ZMP_WEIGHT_NAME - 1;
    case ZMP_CTL_FLOWSTATE: return sizeof ZMP_FLOWSTATE_NAME - 1;
    default: return 0;
    }
}

int zmp_parse_weight(const uint8_t *body, size_t n, uint32_t *weight)
{
    if (n != ZMP_WEIGHT_SIZE || memcmp(body, ZMP_WEIGHT_NAME, 6) != 0)
        return EINVAL;
    uint32_t w = zmp_get_u32(body + 6);
    if (w > ZMP_WEIGHT_MAX)
        return EINVAL;
    *weight = w;
    return 0;
}

zmp_control_kind_t zmp_control_kind(const uint8_t *body, size_t n)
{
    if (n == 0)
        return ZMP_CTL_OTHER;
    switch (body[0]) {
    case ZMP_CMD_HELLO: return ZMP_CTL_HELLO;
    case ZMP_CMD_READY: return ZMP_CTL_READY;
    case ZMP_CMD_ERROR: return ZMP_CTL_ERROR;
    default: break;
    }
    if (n >= 6 && memcmp(body, ZMP_WEIGHT_NAME, 6) == 0)
        return ZMP_CTL_WEIGHT;
    if (n >= 9 && memcmp(body, ZMP_FLOWSTATE_NAME, 9) == 0)
        return ZMP_CTL_FLOWSTATE;
    return ZMP_CTL_OTHER;
}
