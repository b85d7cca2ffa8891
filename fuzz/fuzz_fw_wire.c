/*
 * fuzz_fw_wire.c — the framework's service wire v1 decoder
 * (core/framework/wire.c, zf_wire_decode): frame 0 (prefix and command
 * body), the metadata frame and the payload envelope, with the channel
 * and metadata list walkers.
 *
 * Input: [nparts u8][len u16 BE per part but the last][part bytes...].
 * nparts is 0..4 (4 is one too many for every command); the last part takes
 * what is left. Each part is a zlink_msg_t over its own heap block of
 * exactly its size (zlink_msg_init_data), so ASan catches a read past a
 * part. Asserted:
 *   - the result is 0 or EPROTO, and *r is all zero after EPROTO;
 *   - an accepted record's views lie inside its parts; walking its channel
 *     list gives exactly channel_count entries, its metadata exactly
 *     meta_count entries, no name or key empty or repeated, no weight over
 *     10000;
 *   - an accepted record is canonical: zf_wire_encode accepts it and gives
 *     back the same parts, byte for byte, and those decode to the same
 *     record.
 * The decoder allocates nothing, so -malloc_limit_mb only guards the
 * harness; a claim-sized reservation anywhere would trip it.
 */
#include "fuzz_common.h"
#include "core/framework/wire.h"

#include <errno.h>
#include <string.h>

#define MAX_PARTS 4

static void free_block(void *data, void *hint)
{
    (void)hint;
    free(data);
}

static bool inside(zf_bytes_t v, const zlink_msg_t *parts, size_t n)
{
    if (v.n == 0)
        return true;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = zlink_msg_data((zlink_msg_t *)&parts[i]);
        size_t s = zlink_msg_size((zlink_msg_t *)&parts[i]);
        if (p != NULL && v.p >= p && v.n <= s && (size_t)(v.p - p) <= s - v.n)
            return true;
    }
    return false;
}

static bool bytes_eq(zf_bytes_t a, zf_bytes_t b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

static bool rec_eq(const zf_rec_t *a, const zf_rec_t *b)
{
    return a->command == b->command && a->flags == b->flags &&
           a->correlation == b->correlation && a->op_high == b->op_high &&
           a->op_low == b->op_low && a->timeout_ms == b->timeout_ms &&
           a->terminal == b->terminal && a->failure_code == b->failure_code &&
           a->lifecycle == b->lifecycle && a->seq == b->seq && a->nonce == b->nonce &&
           bytes_eq(a->mesh, b->mesh) && bytes_eq(a->rid, b->rid) &&
           bytes_eq(a->capability, b->capability) && bytes_eq(a->channel, b->channel) &&
           bytes_eq(a->message, b->message) && a->node_state == b->node_state &&
           a->channel_count == b->channel_count && bytes_eq(a->channels, b->channels) &&
           a->meta_count == b->meta_count && bytes_eq(a->meta, b->meta) &&
           a->has_envelope == b->has_envelope && bytes_eq(a->packet, b->packet) &&
           bytes_eq(a->content_type, b->content_type) && bytes_eq(a->payload, b->payload);
}

static void check_lists(const zf_rec_t *r)
{
    zf_bytes_t names[ZF_MAX_CHANNELS];
    size_t pos = 0, count = 0;
    zf_bytes_t name, key, value;
    uint16_t weight;
    while (zf_wire_channel_next(r, &pos, &name, &weight)) {
        FZ_CHECK(count < ZF_MAX_CHANNELS);
        FZ_CHECK(name.n > 0 && weight <= 10000);
        for (size_t i = 0; i < count; i++)
            FZ_CHECK(!bytes_eq(names[i], name));
        names[count++] = name;
    }
    FZ_CHECK(count == r->channel_count);

    zf_bytes_t keys[256];
    pos = 0;
    count = 0;
    while (zf_wire_meta_next(r, &pos, &key, &value)) {
        FZ_CHECK(count < 256);
        FZ_CHECK(key.n > 0);
        for (size_t i = 0; i < count; i++)
            FZ_CHECK(!bytes_eq(keys[i], key));
        keys[count++] = key;
    }
    FZ_CHECK(count == r->meta_count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader_t in = {data, size};
    size_t n = fz_u8(&in) % (MAX_PARTS + 1);
    size_t lens[MAX_PARTS];
    for (size_t i = 0; i + 1 < n; i++)
        lens[i] = fz_u16(&in);
    zlink_msg_t parts[MAX_PARTS];
    for (size_t i = 0; i < n; i++) {
        size_t len = i + 1 < n ? (lens[i] < in.n ? lens[i] : in.n) : in.n;
        uint8_t *block = malloc(len > 0 ? len : 1);
        FZ_CHECK(block != NULL);
        if (len > 0)
            memcpy(block, in.p, len);
        in.p += len;
        in.n -= len;
        FZ_CHECK(zlink_msg_init_data(&parts[i], block, len, free_block, NULL) == ZLINK_CONFIG_OK);
    }

    zf_rec_t r;
    int rc = zf_wire_decode(parts, n, &r);
    FZ_CHECK(rc == 0 || rc == EPROTO);
    if (rc != 0) {
        static const zf_rec_t zero;
        FZ_CHECK(memcmp(&r, &zero, sizeof r) == 0);
    } else {
        const zf_bytes_t views[] = {r.mesh,     r.rid,  r.capability, r.channel,      r.message,
                                    r.channels, r.meta, r.packet,     r.content_type, r.payload};
        for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
            FZ_CHECK(inside(views[i], parts, n));
        check_lists(&r);

        zlink_msg_t out[3];
        size_t m = 0;
        FZ_CHECK(zf_wire_encode(&r, out, 3, &m) == 0);
        FZ_CHECK(m == n);
        for (size_t i = 0; i < n; i++) {
            size_t s = zlink_msg_size(&out[i]);
            FZ_CHECK(s == zlink_msg_size(&parts[i]));
            FZ_CHECK(s == 0 || memcmp(zlink_msg_data(&out[i]), zlink_msg_data(&parts[i]), s) == 0);
        }
        zf_rec_t again;
        FZ_CHECK(zf_wire_decode(out, m, &again) == 0);
        FZ_CHECK(rec_eq(&r, &again));
        for (size_t i = 0; i < m; i++)
            zlink_msg_close(&out[i]);
    }
    for (size_t i = 0; i < n; i++)
        zlink_msg_close(&parts[i]);
    return 0;
}
