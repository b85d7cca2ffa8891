/*
 * wire.c — the service wire v1 codec (doc/protocol.md, "Service wire v1").
 *
 * Design notes
 *  - What it owns: nothing that outlives a call. zf_wire_decode turns the
 *    1..3 Core message parts of one framework record into a zf_rec_t whose
 *    byte views point into those parts; zf_wire_encode does the reverse and
 *    allocates the parts with zlink_msg_init_size. The list helpers
 *    (zf_wire_channel_*, zf_wire_meta_*) work on caller-owned buffers.
 *  - Locks and threads: none. Every function is pure over its arguments,
 *    so any thread may call it; two threads must not share one output
 *    buffer or record without their own lock.
 *  - One rule set. rec_valid() holds every semantic rule of the format
 *    (lengths of names, non-zero identities, known codes, UTF-8, unique
 *    channel names and metadata keys, which commands carry an envelope).
 *    The decoder first splits the bytes into views, checking only that
 *    each length is present, then runs rec_valid(); the encoder runs the
 *    same rec_valid() before it allocates. So the encoder produces exactly
 *    what the decoder accepts, and a rule lives in one place.
 *  - Hostile input. A length read from the wire is compared with the bytes
 *    left in its part before anything uses it; nothing is allocated while
 *    decoding (the duplicate check over a channel list uses a fixed table
 *    on the stack), so a peer's claim never sizes a reservation.
 *  - Reaches the Core only through zlink.h's message functions.
 */
#include "wire.h"

#include <errno.h>
#include <string.h>

#define ZF_PREFIX_LEN 5
#define ZF_ENVELOPE_VERSION 1
#define ZF_WEIGHT_MAX 10000
#define ZF_TEXT_MAX 65535 /* REJECT and REPLY messages: u16 length */

/* Open-addressing table for the duplicate check of a channel list: a power
 * of two at least twice ZF_MAX_CHANNELS, so a probe always finds a hole. */
#define ZF_CHANNEL_SLOTS 2048

/* ------------------------------------------------------------ bytes */

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* A cursor over one part's bytes. Every read checks the bytes left first;
 * a failed read leaves the cursor where it was. */
typedef struct zf_reader {
    const uint8_t *p;
    size_t n;
    size_t at;
} zf_reader_t;

static bool rd_u8(zf_reader_t *rd, uint8_t *v)
{
    if (rd->n - rd->at < 1)
        return false;
    *v = rd->p[rd->at++];
    return true;
}

static bool rd_u16(zf_reader_t *rd, uint16_t *v)
{
    if (rd->n - rd->at < 2)
        return false;
    *v = be16(rd->p + rd->at);
    rd->at += 2;
    return true;
}

static bool rd_u32(zf_reader_t *rd, uint32_t *v)
{
    if (rd->n - rd->at < 4)
        return false;
    *v = be32(rd->p + rd->at);
    rd->at += 4;
    return true;
}

static bool rd_u64(zf_reader_t *rd, uint64_t *v)
{
    if (rd->n - rd->at < 8)
        return false;
    *v = be64(rd->p + rd->at);
    rd->at += 8;
    return true;
}

/* A view of the next len bytes (len already read from the wire). */
static bool rd_view(zf_reader_t *rd, size_t len, zf_bytes_t *out)
{
    if (rd->n - rd->at < len)
        return false;
    out->p = len > 0 ? rd->p + rd->at : NULL;
    out->n = len;
    rd->at += len;
    return true;
}

/* u8 length, then that many bytes. */
static bool rd_short_view(zf_reader_t *rd, zf_bytes_t *out)
{
    uint8_t len;
    return rd_u8(rd, &len) && rd_view(rd, len, out);
}

/* u16 length, then that many bytes. */
static bool rd_long_view(zf_reader_t *rd, zf_bytes_t *out)
{
    uint16_t len;
    return rd_u16(rd, &len) && rd_view(rd, len, out);
}

/* The rest of the part. */
static void rd_rest(zf_reader_t *rd, zf_bytes_t *out)
{
    (void)rd_view(rd, rd->n - rd->at, out);
}

/* A writer into a buffer the encoder sized exactly beforehand. */
static uint8_t *wr_u8(uint8_t *w, uint8_t v)
{
    *w = v;
    return w + 1;
}

static uint8_t *wr_u16(uint8_t *w, uint16_t v)
{
    w[0] = (uint8_t)(v >> 8);
    w[1] = (uint8_t)v;
    return w + 2;
}

static uint8_t *wr_u32(uint8_t *w, uint32_t v)
{
    w[0] = (uint8_t)(v >> 24);
    w[1] = (uint8_t)(v >> 16);
    w[2] = (uint8_t)(v >> 8);
    w[3] = (uint8_t)v;
    return w + 4;
}

static uint8_t *wr_u64(uint8_t *w, uint64_t v)
{
    return wr_u32(wr_u32(w, (uint32_t)(v >> 32)), (uint32_t)v);
}

static uint8_t *wr_bytes(uint8_t *w, zf_bytes_t b)
{
    if (b.n > 0)
        memcpy(w, b.p, b.n);
    return w + b.n;
}

/* --------------------------------------------------------- text rules */

/* A view whose bytes can be read: no length without a pointer (only the
 * encoder's caller can break this; decoded views always hold). */
static bool view_ok(zf_bytes_t b)
{
    return b.n == 0 || b.p != NULL;
}

/* Well-formed UTF-8 (no overlong form, no surrogate, nothing above
 * U+10FFFF) without a NUL byte. Called by every text check; reads p[0..n)
 * only. */
static bool text_ok(const uint8_t *p, size_t n)
{
    size_t i = 0;

    while (i < n) {
        uint8_t c = p[i];
        size_t len;
        uint32_t cp, min;

        if (c == 0)
            return false;
        if (c < 0x80) {
            i++;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
            min = 0x10000;
        } else {
            return false; /* a continuation byte first, or 0xF8..0xFF */
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            uint8_t cc = p[i + k];
            if ((cc & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

/* A text field of min..max bytes. */
static bool text_view_ok(zf_bytes_t b, size_t min, size_t max)
{
    return view_ok(b) && b.n >= min && b.n <= max && text_ok(b.p, b.n);
}

/* A name: mesh, channel, packet, capability (1..255 bytes of text). */
static bool name_ok(zf_bytes_t b)
{
    return text_view_ok(b, 1, ZF_NAME_MAX);
}

/* The length of a C string, or max + 1 when it is longer than max. */
static size_t cstr_len(const char *s, size_t max)
{
    size_t n = 0;
    while (n <= max && s[n] != '\0')
        n++;
    return n;
}

static bool terminal_known(uint32_t t)
{
    return t == ZF_TR_OK || (t >= ZF_TR_TIMED_OUT && t <= ZF_TR_BACKPRESSURED);
}

/* ------------------------------------------------------- list rules */

/* FNV-1a over a channel name, for the duplicate table only. */
static uint32_t name_hash(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* A channel list: exactly count entries {u8 len 1..255, name, u16 weight
 * 0..10000} filling list, no name twice, count <= ZF_MAX_CHANNELS. Called
 * by rec_valid() for HELLO, ADMIT and UPDATE, from either direction. Uses
 * 8 KiB of stack when count > 0; allocates nothing. */
static bool channels_ok(zf_bytes_t list, uint16_t count)
{
    uint32_t slots[ZF_CHANNEL_SLOTS]; /* entry offset + 1; 0 is a hole */
    const uint8_t *p = list.p;
    size_t n = list.n, at = 0;

    if (count > ZF_MAX_CHANNELS || !view_ok(list))
        return false;
    if (count == 0)
        return n == 0;
    memset(slots, 0, sizeof slots);
    for (uint16_t i = 0; i < count; i++) {
        size_t len;
        const uint8_t *name;
        uint32_t h;

        if (n - at < 1)
            return false;
        len = p[at];
        if (len == 0 || n - at - 1 < len + 2)
            return false;
        name = p + at + 1;
        if (!text_ok(name, len) || be16(name + len) > ZF_WEIGHT_MAX)
            return false;
        h = name_hash(name, len) & (ZF_CHANNEL_SLOTS - 1);
        while (slots[h] != 0) {
            size_t o = slots[h] - 1;
            if (p[o] == len && memcmp(p + o + 1, name, len) == 0)
                return false;
            h = (h + 1) & (ZF_CHANNEL_SLOTS - 1);
        }
        slots[h] = (uint32_t)at + 1;
        at += 1 + len + 2;
    }
    return at == n;
}

/* One metadata entry at entries[*at]: u8 key_len 1..255, key, u16
 * value_len, value; the view lengths are checked, not the text. */
static bool meta_entry(const uint8_t *p, size_t n, size_t *at, zf_bytes_t *key,
                       zf_bytes_t *value)
{
    zf_reader_t rd = {p, n, *at};
    if (!rd_short_view(&rd, key) || key->n == 0 || !rd_long_view(&rd, value))
        return false;
    *at = rd.at;
    return true;
}

/* Finds key among the first entries of a metadata buffer that are known
 * to be well formed, below offset end. The entry's offset, or SIZE_MAX. */
static size_t meta_find(const uint8_t *p, size_t end, const uint8_t *key, size_t key_n)
{
    size_t at = 0;
    while (at < end) {
        size_t start = at;
        zf_bytes_t k, v;
        if (!meta_entry(p, end, &at, &k, &v))
            return SIZE_MAX;
        if (k.n == key_n && memcmp(k.p, key, key_n) == 0)
            return start;
    }
    return SIZE_MAX;
}

/* Metadata entries (the frame after its count byte): exactly count >= 1
 * entries filling entries, the whole frame (1 + n) <= ZF_META_MAX, keys
 * and values text, keys unique. Called by rec_valid() and meta_put. */
static bool meta_ok(zf_bytes_t entries, unsigned count)
{
    const uint8_t *p = entries.p;
    size_t n = entries.n, at = 0;

    if (count == 0 || !view_ok(entries) || n > ZF_META_MAX - 1)
        return false;
    for (unsigned i = 0; i < count; i++) {
        size_t start = at;
        zf_bytes_t k, v;
        if (!meta_entry(p, n, &at, &k, &v) || !text_ok(k.p, k.n) || !text_ok(v.p, v.n))
            return false;
        if (meta_find(p, start, k.p, k.n) != SIZE_MAX)
            return false;
    }
    return at == n;
}

/* ------------------------------------------------------ record rules */

static bool is_control(uint8_t cmd)
{
    return cmd >= ZF_CMD_HELLO && cmd <= ZF_CMD_ACK;
}

static bool is_call(uint8_t cmd)
{
    return cmd >= ZF_CMD_NODE_SEND && cmd <= ZF_CMD_CHANNEL_REQUEST;
}

static bool op_nonzero(const zf_rec_t *r)
{
    return r->op_high != 0 || r->op_low != 0;
}

/* Every semantic rule of v1 over a record, shared by the decoder (after it
 * split the bytes into views) and the encoder (before it allocates). Reads
 * only the fields r->command uses. No lock, no allocation. */
static bool rec_valid(const zf_rec_t *r)
{
    switch (r->command) {
    case ZF_CMD_HELLO:
    case ZF_CMD_ADMIT:
        if (!name_ok(r->mesh) || !view_ok(r->rid) || r->rid.n < 1 || r->rid.n > ZF_NAME_MAX ||
            !name_ok(r->capability) || r->lifecycle == 0 ||
            !channels_ok(r->channels, r->channel_count))
            return false;
        break;
    case ZF_CMD_REJECT:
        if (!terminal_known(r->terminal) || r->terminal == ZF_TR_OK ||
            !text_view_ok(r->message, 0, ZF_TEXT_MAX))
            return false;
        break;
    case ZF_CMD_UPDATE:
        if (r->lifecycle == 0 || r->seq == 0 || r->node_state > ZF_NODE_DRAINING ||
            !channels_ok(r->channels, r->channel_count))
            return false;
        break;
    case ZF_CMD_PROBE:
    case ZF_CMD_ACK:
    case ZF_CMD_NODE_SEND:
        break;
    case ZF_CMD_NODE_REQUEST:
        if (r->correlation == 0 || !op_nonzero(r))
            return false;
        break;
    case ZF_CMD_CHANNEL_SEND:
        if (!name_ok(r->channel))
            return false;
        break;
    case ZF_CMD_CHANNEL_REQUEST:
        if (r->correlation == 0 || !op_nonzero(r) || !name_ok(r->channel))
            return false;
        break;
    case ZF_CMD_REPLY:
        if (r->correlation == 0 || !op_nonzero(r) || !terminal_known(r->terminal) ||
            !text_view_ok(r->message, 0, ZF_TEXT_MAX) ||
            (r->terminal == ZF_TR_OK && !r->has_envelope))
            return false;
        break;
    default:
        return false;
    }

    if ((r->flags & ~ZF_FLAG_META) != 0)
        return false;
    if (r->flags & ZF_FLAG_META) {
        if (!meta_ok(r->meta, r->meta_count))
            return false;
    } else if (r->meta_count != 0 || r->meta.n != 0) {
        return false;
    }

    if (is_control(r->command) && r->has_envelope)
        return false;
    if (is_call(r->command) && !r->has_envelope)
        return false;
    if (r->has_envelope &&
        (!name_ok(r->packet) || !text_view_ok(r->content_type, 0, ZF_NAME_MAX) ||
         !view_ok(r->payload) || r->payload.n > UINT32_MAX))
        return false;
    return true;
}

/* ------------------------------------------------------------ decode */

/* The bytes of one part as a view (never NULL with a non-zero length). */
static zf_bytes_t part_view(zlink_msg_t *m)
{
    zf_bytes_t b = {NULL, zlink_msg_size(m)};
    if (b.n > 0)
        b.p = zlink_msg_data(m);
    if (b.p == NULL)
        b.n = 0;
    return b;
}

/* Frame 0's body for r->command into *r: only that every length is
 * present and the body is used up; rec_valid() judges the values. */
static bool decode_body(zf_reader_t *rd, zf_rec_t *r)
{
    bool ok;

    switch (r->command) {
    case ZF_CMD_HELLO:
    case ZF_CMD_ADMIT:
        ok = rd_short_view(rd, &r->mesh) && rd_short_view(rd, &r->rid) &&
             rd_short_view(rd, &r->capability) && rd_u64(rd, &r->lifecycle) &&
             rd_u16(rd, &r->channel_count);
        if (ok)
            rd_rest(rd, &r->channels); /* channels_ok() checks the count */
        break;
    case ZF_CMD_REJECT:
        ok = rd_u32(rd, &r->terminal) && rd_long_view(rd, &r->message);
        break;
    case ZF_CMD_UPDATE:
        ok = rd_u64(rd, &r->lifecycle) && rd_u64(rd, &r->seq) && rd_u8(rd, &r->node_state) &&
             rd_u16(rd, &r->channel_count);
        if (ok)
            rd_rest(rd, &r->channels);
        break;
    case ZF_CMD_PROBE:
    case ZF_CMD_ACK:
        ok = rd_u64(rd, &r->nonce);
        break;
    case ZF_CMD_NODE_SEND:
        ok = rd_u64(rd, &r->op_high) && rd_u64(rd, &r->op_low);
        break;
    case ZF_CMD_NODE_REQUEST:
        ok = rd_u64(rd, &r->correlation) && rd_u64(rd, &r->op_high) &&
             rd_u64(rd, &r->op_low) && rd_u32(rd, &r->timeout_ms);
        break;
    case ZF_CMD_CHANNEL_SEND:
        ok = rd_u64(rd, &r->op_high) && rd_u64(rd, &r->op_low) &&
             rd_short_view(rd, &r->channel);
        break;
    case ZF_CMD_CHANNEL_REQUEST:
        ok = rd_u64(rd, &r->correlation) && rd_u64(rd, &r->op_high) &&
             rd_u64(rd, &r->op_low) && rd_u32(rd, &r->timeout_ms) &&
             rd_short_view(rd, &r->channel);
        break;
    case ZF_CMD_REPLY:
        ok = rd_u64(rd, &r->correlation) && rd_u64(rd, &r->op_high) &&
             rd_u64(rd, &r->op_low) && rd_u32(rd, &r->terminal) &&
             rd_u32(rd, &r->failure_code) && rd_long_view(rd, &r->message);
        break;
    default:
        return false;
    }
    return ok && rd->at == rd->n;
}

/* The envelope part: version, u32 payload_length, packet, content type,
 * then exactly payload_length bytes of payload to the end. The claimed
 * length is only compared with the bytes present. */
static bool decode_envelope(zf_bytes_t part, zf_rec_t *r)
{
    zf_reader_t rd = {part.p, part.n, 0};
    uint8_t version;
    uint32_t payload_length;

    if (!rd_u8(&rd, &version) || version != ZF_ENVELOPE_VERSION ||
        !rd_u32(&rd, &payload_length) || !rd_short_view(&rd, &r->packet) ||
        !rd_short_view(&rd, &r->content_type) || rd.n - rd.at != payload_length)
        return false;
    rd_rest(&rd, &r->payload);
    r->has_envelope = true;
    return true;
}

/* The whole record; *r is zero on entry. */
static int decode_parts(zlink_msg_t *parts, size_t n, zf_rec_t *r)
{
    zf_bytes_t f0 = part_view(&parts[0]);
    zf_reader_t rd;
    size_t meta_frames, fixed_frames;

    if (f0.n < ZF_PREFIX_LEN || f0.p[0] != 'Z' || f0.p[1] != 'M' || f0.p[2] != ZF_WIRE_MAJOR)
        return EPROTO;
    r->command = f0.p[3];
    r->flags = f0.p[4];
    if ((r->flags & ~ZF_FLAG_META) != 0)
        return EPROTO;

    /* How many parts this command and these flags call for. */
    meta_frames = (r->flags & ZF_FLAG_META) ? 1 : 0;
    fixed_frames = 1 + meta_frames;
    if (is_control(r->command)) {
        if (n != fixed_frames)
            return EPROTO;
    } else if (is_call(r->command)) {
        if (n != fixed_frames + 1)
            return EPROTO;
    } else if (r->command == ZF_CMD_REPLY) {
        if (n != fixed_frames && n != fixed_frames + 1)
            return EPROTO;
    } else {
        return EPROTO;
    }

    rd.p = f0.p;
    rd.n = f0.n;
    rd.at = ZF_PREFIX_LEN;
    if (!decode_body(&rd, r))
        return EPROTO;

    if (meta_frames) {
        zf_bytes_t m = part_view(&parts[1]);
        if (m.n < 1)
            return EPROTO;
        r->meta_count = m.p[0];
        r->meta.p = m.n > 1 ? m.p + 1 : NULL;
        r->meta.n = m.n - 1;
    }
    if (n > fixed_frames && !decode_envelope(part_view(&parts[n - 1]), r))
        return EPROTO;

    return rec_valid(r) ? 0 : EPROTO;
}

int zf_wire_decode(zlink_msg_t *parts, size_t n, zf_rec_t *r)
{
    int rc;

    if (r == NULL)
        return EINVAL;
    memset(r, 0, sizeof *r);
    if (parts == NULL && n > 0)
        return EINVAL;
    if (n == 0)
        return EPROTO;
    rc = decode_parts(parts, n, r);
    if (rc != 0)
        memset(r, 0, sizeof *r);
    return rc;
}

/* ------------------------------------------------------------ encode */

/* Size of frame 0's body for a record rec_valid() accepted. */
static size_t body_size(const zf_rec_t *r)
{
    switch (r->command) {
    case ZF_CMD_HELLO:
    case ZF_CMD_ADMIT:
        return 1 + r->mesh.n + 1 + r->rid.n + 1 + r->capability.n + 8 + 2 + r->channels.n;
    case ZF_CMD_REJECT:
        return 4 + 2 + r->message.n;
    case ZF_CMD_UPDATE:
        return 8 + 8 + 1 + 2 + r->channels.n;
    case ZF_CMD_PROBE:
    case ZF_CMD_ACK:
        return 8;
    case ZF_CMD_NODE_SEND:
        return 16;
    case ZF_CMD_NODE_REQUEST:
        return 8 + 16 + 4;
    case ZF_CMD_CHANNEL_SEND:
        return 16 + 1 + r->channel.n;
    case ZF_CMD_CHANNEL_REQUEST:
        return 8 + 16 + 4 + 1 + r->channel.n;
    case ZF_CMD_REPLY:
    default:
        return 8 + 16 + 4 + 4 + 2 + r->message.n;
    }
}

/* Writes frame 0 (prefix and body) into w, sized by body_size(). */
static void encode_frame0(const zf_rec_t *r, uint8_t *w)
{
    w = wr_u8(w, 'Z');
    w = wr_u8(w, 'M');
    w = wr_u8(w, ZF_WIRE_MAJOR);
    w = wr_u8(w, r->command);
    w = wr_u8(w, r->flags);
    switch (r->command) {
    case ZF_CMD_HELLO:
    case ZF_CMD_ADMIT:
        w = wr_bytes(wr_u8(w, (uint8_t)r->mesh.n), r->mesh);
        w = wr_bytes(wr_u8(w, (uint8_t)r->rid.n), r->rid);
        w = wr_bytes(wr_u8(w, (uint8_t)r->capability.n), r->capability);
        w = wr_u16(wr_u64(w, r->lifecycle), r->channel_count);
        (void)wr_bytes(w, r->channels);
        break;
    case ZF_CMD_REJECT:
        w = wr_u16(wr_u32(w, r->terminal), (uint16_t)r->message.n);
        (void)wr_bytes(w, r->message);
        break;
    case ZF_CMD_UPDATE:
        w = wr_u16(wr_u8(wr_u64(wr_u64(w, r->lifecycle), r->seq), r->node_state),
                   r->channel_count);
        (void)wr_bytes(w, r->channels);
        break;
    case ZF_CMD_PROBE:
    case ZF_CMD_ACK:
        (void)wr_u64(w, r->nonce);
        break;
    case ZF_CMD_NODE_SEND:
        (void)wr_u64(wr_u64(w, r->op_high), r->op_low);
        break;
    case ZF_CMD_NODE_REQUEST:
        w = wr_u64(wr_u64(wr_u64(w, r->correlation), r->op_high), r->op_low);
        (void)wr_u32(w, r->timeout_ms);
        break;
    case ZF_CMD_CHANNEL_SEND:
        w = wr_u8(wr_u64(wr_u64(w, r->op_high), r->op_low), (uint8_t)r->channel.n);
        (void)wr_bytes(w, r->channel);
        break;
    case ZF_CMD_CHANNEL_REQUEST:
        w = wr_u64(wr_u64(wr_u64(w, r->correlation), r->op_high), r->op_low);
        w = wr_u8(wr_u32(w, r->timeout_ms), (uint8_t)r->channel.n);
        (void)wr_bytes(w, r->channel);
        break;
    case ZF_CMD_REPLY:
    default:
        w = wr_u64(wr_u64(wr_u64(w, r->correlation), r->op_high), r->op_low);
        w = wr_u16(wr_u32(wr_u32(w, r->terminal), r->failure_code), (uint16_t)r->message.n);
        (void)wr_bytes(w, r->message);
        break;
    }
}

/* Makes one part of size bytes: its data pointer, or NULL (nothing left
 * initialized) when the Core refuses it. */
static uint8_t *part_new(zlink_msg_t *m, size_t size)
{
    uint8_t *p;

    if (zlink_msg_init_size(m, size) != ZLINK_CONFIG_OK)
        return NULL;
    p = zlink_msg_data(m);
    if (p == NULL && size > 0) {
        zlink_msg_close(m);
        return NULL;
    }
    return p;
}

int zf_wire_encode(const zf_rec_t *r, zlink_msg_t *parts, size_t cap, size_t *n)
{
    size_t need, made = 0;
    uint8_t *w;

    if (r == NULL || parts == NULL || n == NULL)
        return EINVAL;
    *n = 0;
    if (!rec_valid(r))
        return EINVAL;
    need = 1 + ((r->flags & ZF_FLAG_META) ? 1 : 0) + (r->has_envelope ? 1 : 0);
    if (cap < need)
        return EINVAL;

    w = part_new(&parts[made], ZF_PREFIX_LEN + body_size(r));
    if (w == NULL)
        goto nomem;
    made++;
    encode_frame0(r, w);

    if (r->flags & ZF_FLAG_META) {
        w = part_new(&parts[made], 1 + r->meta.n);
        if (w == NULL)
            goto nomem;
        made++;
        (void)wr_bytes(wr_u8(w, r->meta_count), r->meta);
    }

    if (r->has_envelope) {
        w = part_new(&parts[made], 1 + 4 + 1 + r->packet.n + 1 + r->content_type.n +
                                       r->payload.n);
        if (w == NULL)
            goto nomem;
        made++;
        w = wr_u32(wr_u8(w, ZF_ENVELOPE_VERSION), (uint32_t)r->payload.n);
        w = wr_bytes(wr_u8(w, (uint8_t)r->packet.n), r->packet);
        w = wr_bytes(wr_u8(w, (uint8_t)r->content_type.n), r->content_type);
        (void)wr_bytes(w, r->payload);
    }

    *n = made;
    return 0;

nomem:
    zlink_multipart_close(parts, made);
    return ENOMEM;
}

/* ------------------------------------------------------- list helpers */

bool zf_wire_channel_next(const zf_rec_t *r, size_t *pos, zf_bytes_t *name, uint16_t *weight)
{
    const uint8_t *p;
    size_t n, at, len;

    if (r == NULL || pos == NULL)
        return false;
    p = r->channels.p;
    n = r->channels.n;
    at = *pos;
    if (p == NULL || at >= n)
        return false;
    len = p[at];
    if (len == 0 || n - at - 1 < len + 2)
        return false;
    if (name != NULL) {
        name->p = p + at + 1;
        name->n = len;
    }
    if (weight != NULL)
        *weight = be16(p + at + 1 + len);
    *pos = at + 1 + len + 2;
    return true;
}

int zf_wire_channel_put(uint8_t *buf, size_t cap, size_t *len, const char *name,
                        uint16_t weight)
{
    size_t name_n, at = 0, entry;

    if (buf == NULL || len == NULL || name == NULL || *len > cap)
        return EINVAL;
    name_n = cstr_len(name, ZF_NAME_MAX);
    if (name_n == 0 || name_n > ZF_NAME_MAX || !text_ok((const uint8_t *)name, name_n) ||
        weight > ZF_WEIGHT_MAX)
        return EINVAL;
    /* The entries already in buf (all written here): refuse a second copy
     * of the name, as the decoder would. */
    while (at < *len) {
        size_t l = buf[at];
        if (l == 0 || *len - at - 1 < l + 2)
            return EINVAL;
        if (l == name_n && memcmp(buf + at + 1, name, name_n) == 0)
            return EINVAL;
        at += 1 + l + 2;
    }
    entry = 1 + name_n + 2;
    if (cap - *len < entry)
        return ENOBUFS;
    buf[*len] = (uint8_t)name_n;
    memcpy(buf + *len + 1, name, name_n);
    (void)wr_u16(buf + *len + 1 + name_n, weight);
    *len += entry;
    return 0;
}

bool zf_wire_meta_next(const zf_rec_t *r, size_t *pos, zf_bytes_t *key, zf_bytes_t *value)
{
    zf_bytes_t k, v;
    size_t at;

    if (r == NULL || pos == NULL || r->meta.p == NULL || *pos >= r->meta.n)
        return false;
    at = *pos;
    if (!meta_entry(r->meta.p, r->meta.n, &at, &k, &v))
        return false;
    if (key != NULL)
        *key = k;
    if (value != NULL)
        *value = v;
    *pos = at;
    return true;
}

int zf_wire_meta_put(uint8_t *buf, size_t *len, uint8_t *count, const char *key,
                     const char *value)
{
    size_t key_n, value_n, entry, old_at, old_end = 0, total;
    zf_bytes_t have;

    if (buf == NULL || len == NULL || count == NULL || key == NULL || value == NULL)
        return EINVAL;
    have.p = buf;
    have.n = *len;
    if ((*count == 0) != (*len == 0) || (*count > 0 && !meta_ok(have, *count)))
        return EINVAL; /* not a buffer these functions built */
    key_n = cstr_len(key, ZF_NAME_MAX);
    if (key_n == 0 || key_n > ZF_NAME_MAX || !text_ok((const uint8_t *)key, key_n))
        return EINVAL;
    value_n = cstr_len(value, ZF_META_MAX);
    if (value_n > ZF_META_MAX)
        return ENOBUFS; /* can never fit, whatever else is there */
    if (!text_ok((const uint8_t *)value, value_n))
        return EINVAL;

    entry = 1 + key_n + 2 + value_n;
    old_at = meta_find(buf, *len, (const uint8_t *)key, key_n);
    if (old_at != SIZE_MAX) {
        zf_bytes_t k, v;
        old_end = old_at;
        (void)meta_entry(buf, *len, &old_end, &k, &v);
        total = *len - (old_end - old_at) + entry;
    } else {
        if (*count == UINT8_MAX)
            return ENOBUFS;
        total = *len + entry;
    }
    if (1 + total > ZF_META_MAX)
        return ENOBUFS;

    if (old_at != SIZE_MAX) {
        /* Last value wins, in the key's place: move the tail to where the
         * new entry ends, then write the entry. */
        memmove(buf + old_at + entry, buf + old_end, *len - old_end);
    } else {
        old_at = *len;
        (*count)++;
    }
    buf[old_at] = (uint8_t)key_n;
    memcpy(buf + old_at + 1, key, key_n);
    (void)wr_u16(buf + old_at + 1 + key_n, (uint16_t)value_n);
    memcpy(buf + old_at + 1 + key_n + 2, value, value_n);
    *len = total;
    return 0;
}
