/*
 * sc_wire.c — framework records encoded by hand for the cases' raw Core
 * peers (doc/protocol.md §14), public API only (sc.h).
 *
 * A raw peer is a plain Core socket that sends what no framework host
 * would, so the runner cannot use the framework's own encoder: these
 * functions write the service wire byte by byte, big-endian. They keep no
 * state and take no lock; callable from any thread.
 */
#include "sc.h"
#include "zltest_zlink.h"

#include <string.h>

void sc_put_u32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

void sc_put_u64(uint8_t *b, uint64_t v)
{
    sc_put_u32(b, (uint32_t)(v >> 32));
    sc_put_u32(b + 4, (uint32_t)v);
}

uint64_t sc_get_u64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

/* ------------------------------------------------------------ the writer */

void sc_wire_init(sc_wire_t *w)
{
    w->n = 0;
}

void sc_wire_bytes(sc_wire_t *w, const void *p, size_t n)
{
    ZT_CHECK(w->n + n <= sizeof w->b);
    if (n > 0)
        memcpy(w->b + w->n, p, n);
    w->n += n;
}

void sc_wire_u8(sc_wire_t *w, uint8_t v)
{
    sc_wire_bytes(w, &v, 1);
}

void sc_wire_u16(sc_wire_t *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    sc_wire_bytes(w, b, 2);
}

void sc_wire_u32(sc_wire_t *w, uint32_t v)
{
    uint8_t b[4];
    sc_put_u32(b, v);
    sc_wire_bytes(w, b, 4);
}

void sc_wire_u64(sc_wire_t *w, uint64_t v)
{
    uint8_t b[8];
    sc_put_u64(b, v);
    sc_wire_bytes(w, b, 8);
}

void sc_wire_l8(sc_wire_t *w, const char *s)
{
    size_t n = strlen(s);
    ZT_CHECK(n <= 255);
    sc_wire_u8(w, (uint8_t)n);
    sc_wire_bytes(w, s, n);
}

void sc_wire_prefix(sc_wire_t *w, uint8_t command, uint8_t flags)
{
    static const uint8_t magic[3] = {0x5A, 0x4D, 0x01};
    sc_wire_bytes(w, magic, 3);
    sc_wire_u8(w, command);
    sc_wire_u8(w, flags);
}

void sc_wire_msg(zlink_msg_t *m, const sc_wire_t *w)
{
    zlt_msg_set(m, w->b, w->n);
}

/* ------------------------------------------------------------ the records */

void sc_wire_record(zlink_msg_t *parts, size_t *n, uint8_t flags, uint64_t correlation,
                    uint64_t op, const char *channel, const void *payload, size_t size)
{
    /* Frame 0: CHANNEL_SEND (18), or CHANNEL_REQUEST (19) with its
     * correlation and a timeout_ms of 0 (none given). */
    sc_wire_t f0;
    sc_wire_init(&f0);
    sc_wire_prefix(&f0, correlation != 0 ? 19 : 18, flags);
    if (correlation != 0)
        sc_wire_u64(&f0, correlation);
    sc_wire_u64(&f0, 0);  /* op_high */
    sc_wire_u64(&f0, op); /* op_low */
    if (correlation != 0)
        sc_wire_u32(&f0, 0);
    sc_wire_l8(&f0, channel);
    sc_wire_msg(&parts[0], &f0);

    /* Frame 1: the payload envelope, packet "m", content type "". The
     * payload may be larger than a writer, so it is built in place. */
    ZT_EQ_INT(zlink_msg_init_size(&parts[1], 8 + size), ZLINK_CONFIG_OK);
    uint8_t *b = zlink_msg_data(&parts[1]);
    b[0] = 0x01;
    sc_put_u32(b + 1, (uint32_t)size);
    b[5] = 1;
    b[6] = 'm';
    b[7] = 0;
    if (size > 0)
        memcpy(b + 8, payload, size);
    *n = 2;
}
