/*
 * wire.h — service wire v1 (doc/protocol.md, "Service wire v1"): the only
 * framework code that knows the bytes of a framework record.
 *
 * A record is 1..3 Core message parts:
 *   [0] prefix + command body   'Z' 'M' major(1) command flags, then the body
 *   [1] metadata                only when flags & ZF_FLAG_META
 *   [n-1] payload envelope      commands 16..20 (20 only when result is ok
 *                               or it carries a payload)
 * All integers are big-endian. Decoding never trusts a length it has not
 * checked against the bytes present, never allocates, and rejects anything
 * malformed with EPROTO; views in a decoded record point into the parts.
 */
#ifndef ZF_WIRE_H
#define ZF_WIRE_H

#include "zlink.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZF_WIRE_MAJOR 1
#define ZF_CAPABILITY "framework-service-v11"

/* Flags (frame 0, byte 4). v1 accepts META only; the others are defined by
 * the protocol and rejected by this version (EPROTO). */
#define ZF_FLAG_META 0x01
#define ZF_FLAG_BOUND_SESSION 0x02
#define ZF_FLAG_SOURCE_SPOT 0x04
#define ZF_FLAG_EXTENSION 0x08

enum zf_command {
    ZF_CMD_HELLO = 1,
    ZF_CMD_ADMIT = 2,
    ZF_CMD_REJECT = 3,
    ZF_CMD_UPDATE = 4,
    ZF_CMD_PROBE = 5,
    ZF_CMD_ACK = 6,
    ZF_CMD_NODE_SEND = 16,
    ZF_CMD_NODE_REQUEST = 17,
    ZF_CMD_CHANNEL_SEND = 18,
    ZF_CMD_CHANNEL_REQUEST = 19,
    ZF_CMD_REPLY = 20
};

/* terminalResult of a reply (framework-contract.md §4). */
enum zf_terminal {
    ZF_TR_OK = 0,
    ZF_TR_TIMED_OUT = 101,
    ZF_TR_NOT_FOUND = 102,
    ZF_TR_TERMINATED = 103,
    ZF_TR_PROTOCOL_ERROR = 104,
    ZF_TR_INTERNAL_ERROR = 105,
    ZF_TR_REJECTED = 106,
    ZF_TR_CONFLICT = 107,
    ZF_TR_BUSY = 108,
    ZF_TR_NOT_CONNECTED = 109,
    ZF_TR_INVALID_ARGUMENT = 110,
    ZF_TR_INVALID_STATE = 111,
    ZF_TR_NOT_SUPPORTED = 112,
    ZF_TR_BACKPRESSURED = 113
};

/* UPDATE node_state: a draining node is no longer picked by select-one. */
#define ZF_NODE_SERVING 0
#define ZF_NODE_DRAINING 1

#define ZF_NAME_MAX 255
#define ZF_META_MAX 1024
#define ZF_MAX_CHANNELS 1024 /* per hello / admit / update */

/* A byte view. */
typedef struct zf_bytes {
    const uint8_t *p;
    size_t n;
} zf_bytes_t;

/* One decoded (or to-be-encoded) record. Which fields a command uses:
 *   HELLO, ADMIT   mesh, rid, capability, lifecycle, channels (count + raw)
 *   REJECT         terminal (reason), message
 *   UPDATE         lifecycle (the sender's), seq, node_state, channels
 *   PROBE, ACK     nonce
 *   NODE_SEND      op_high, op_low (may both be 0)
 *   NODE_REQUEST   correlation (non-zero), op_high/op_low (not both 0),
 *                  timeout_ms (remaining budget; 0 = none)
 *   CHANNEL_SEND   op_high, op_low, channel
 *   CHANNEL_REQUEST correlation, op_high/op_low, timeout_ms, channel
 *   REPLY          correlation, op_high/op_low, terminal, failure_code,
 *                  message (UTF-8, <= 65535 bytes)
 * plus meta (raw metadata frame body, flags & ZF_FLAG_META) and, for
 * 16..20, the envelope: packet (1..255), content_type (0..255), payload. */
typedef struct zf_rec {
    uint8_t command;
    uint8_t flags;
    uint64_t correlation;
    uint64_t op_high, op_low;
    uint32_t timeout_ms;
    uint32_t terminal;
    uint32_t failure_code;
    uint64_t lifecycle;
    uint64_t seq;
    uint64_t nonce;
    zf_bytes_t mesh, rid, capability, channel, message;
    uint8_t node_state;     /* UPDATE: ZF_NODE_SERVING or ZF_NODE_DRAINING */
    uint16_t channel_count; /* HELLO/ADMIT/UPDATE */
    zf_bytes_t channels;    /* raw list: per entry u8 len, name, u16 weight */
    uint8_t meta_count;
    zf_bytes_t meta;        /* raw entries: u8 klen, key, u16 vlen, value */
    bool has_envelope;
    zf_bytes_t packet, content_type, payload;
} zf_rec_t;

/* Decodes parts[0..n) into *r (views into the parts: valid while the parts
 * are neither closed nor changed). 0, or EPROTO for anything malformed:
 * wrong magic or major, unknown command or flag (v1 accepts META only), a
 * frame too many or too few, a length that does not match its part
 * exactly, a zero correlation or OperationId on a request or reply, an
 * empty packet name, metadata over 1024 bytes, a NUL or invalid UTF-8 in a
 * name, key, value or message, a duplicate channel or key in a list, a
 * weight over 10000, an unknown terminal code, a zero lifecycle (HELLO,
 * ADMIT, UPDATE) or seq (UPDATE), a REJECT reason that is not a non-ok
 * terminal code, an ok REPLY without an envelope. EINVAL for a NULL r, or
 * NULL parts with n > 0. *r is all zero after any failure. Allocates
 * nothing; no lock; any thread. */
int zf_wire_decode(zlink_msg_t *parts, size_t n, zf_rec_t *r);

/* Encodes *r into parts[0..*n) (initialized here; the caller owns them on
 * success, nothing is left on failure and *n is 0). The part count is 1,
 * plus 1 for metadata, plus 1 for an envelope; cap >= 3 always suffices
 * (a smaller cap is EINVAL only when the record needs more). r->flags must
 * be exactly ZF_FLAG_META when meta_count > 0 and 0 when there is no
 * metadata; has_envelope must be true for 16..19, false for 1..6, and is
 * the caller's choice for REPLY (true when terminal is ok). Fields the
 * command does not use are ignored. 0, EINVAL for a record the decoder
 * would reject (or a NULL argument), ENOMEM when the Core cannot make a
 * part. Copies every view; the record's buffers stay the caller's. */
int zf_wire_encode(const zf_rec_t *r, zlink_msg_t *parts, size_t cap, size_t *n);

/* Channel list iteration (HELLO/ADMIT/UPDATE): *pos starts at 0; returns
 * false at the end. Only for lists zf_wire_decode accepted (a malformed
 * entry also ends the walk). */
bool zf_wire_channel_next(const zf_rec_t *r, size_t *pos, zf_bytes_t *name, uint16_t *weight);
/* Encoding side: appends one channel entry to buf (cap bytes, *len in/out;
 * buf holds only entries this function wrote). The caller counts the
 * entries for channel_count (at most ZF_MAX_CHANNELS). EINVAL for a bad
 * name (empty, over 255 bytes, invalid UTF-8, already in buf), a weight
 * over 10000 or a NULL argument; ENOBUFS when it does not fit. buf is
 * unchanged on failure. */
int zf_wire_channel_put(uint8_t *buf, size_t cap, size_t *len, const char *name,
                        uint16_t weight);

/* Metadata iteration over a decoded record; same rules. */
bool zf_wire_meta_next(const zf_rec_t *r, size_t *pos, zf_bytes_t *key, zf_bytes_t *value);
/* Appends key=value to a metadata buffer: buf has ZF_META_MAX bytes and
 * holds the entries only (the count byte goes in *count, as zf_rec_t.meta
 * and meta_count); *len and *count in/out, both 0 for an empty buffer.
 * A key already present gets the new value in its place (last value
 * wins). EINVAL for an empty or over-255-byte key, text that is not UTF-8,
 * a NULL argument or a buffer these functions did not build; ENOBUFS when
 * the frame (count byte + entries) would pass 1024 bytes or hold 256 keys.
 * buf, *len and *count are unchanged on failure. */
int zf_wire_meta_put(uint8_t *buf, size_t *len, uint8_t *count, const char *key,
                     const char *value);

#endif
