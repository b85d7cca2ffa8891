/*
 * zmp.h — the ZMP v1 codec: frame headers, the incremental frame decoder
 * and the handshake commands (HELLO, READY, ERROR) plus the WEIGHT control.
 * doc/protocol.md is the normative description; this file implements it.
 *
 * Design notes
 *  - Pure functions over byte buffers: no libuv, no allocation, no locks, no
 *    threads. The connection code (conn.c) and the unit test
 *    (core/tests/test_zmp_codec.c) are the callers.
 *  - The decoder never copies payload bytes. The caller accumulates input in
 *    one contiguous buffer; zmp_decode looks at the bytes from the start of
 *    the next frame and either returns that frame's header (the body is the
 *    next hdr_len..hdr_len+size bytes), asks for more bytes, or rejects.
 *    Feeding the same stream split at any byte boundary therefore yields the
 *    same frames.
 *  - Results are errno values so tests can assert them: 0 (a frame),
 *    EAGAIN (need more bytes), EPROTO (malformed), EMSGSIZE (a size limit:
 *    the 4096-byte control limit or MAXMSGSIZE). On EPROTO / EMSGSIZE the
 *    decoder records the ZMP ERROR code to report to the peer.
 *  - A zmp_decoder_t carries only the multipart state (inside a record? how
 *    many bytes so far?). It is advanced by zmp_decode when it returns 0.
 */
#ifndef ZL_ZMP_H
#define ZL_ZMP_H

#include "zlink.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZMP_MAGIC 0x5A
#define ZMP_VERSION 0x01
#define ZMP_HDR_LEN 8         /* plain frame header */
#define ZMP_HDR_SEQ_LEN 16    /* first frame of a request / reply: + u64 seq */
#define ZMP_CONTROL_MAX 4096  /* largest body of a non-data frame */

/* Flags (header byte 2). */
#define ZMP_F_MORE 0x01
#define ZMP_F_CONTROL 0x02
#define ZMP_F_IDENTITY 0x04
#define ZMP_F_SUBSCRIBE 0x08
#define ZMP_F_CANCEL 0x10
#define ZMP_F_RESERVED 0xE0

/* Kinds (header byte 3). */
#define ZMP_KIND_DATA 0
#define ZMP_KIND_REQUEST 1
#define ZMP_KIND_REPLY 2
#define ZMP_KIND_ERROR_REPLY 3

/* Command bytes: the first body byte of a handshake CONTROL frame. */
#define ZMP_CMD_HELLO 0x01
#define ZMP_CMD_READY 0x04
#define ZMP_CMD_ERROR 0x05

/* ERROR command codes (doc/protocol.md, "ERROR"). */
#define ZMP_ERR_MALFORMED 0x01      /* framing rule broken */
#define ZMP_ERR_HELLO 0x02          /* HELLO missing or malformed */
#define ZMP_ERR_INCOMPATIBLE 0x03   /* socket types cannot talk */
#define ZMP_ERR_BODY_TOO_LARGE 0x04 /* control > 4096 or over MAXMSGSIZE */
#define ZMP_ERR_READY 0x05          /* READY malformed or inconsistent */
#define ZMP_ERR_UNEXPECTED 0x06     /* frame or command out of sequence */
#define ZMP_ERR_TIMEOUT 0x07        /* handshake did not finish in time */
#define ZMP_ERR_LANE 0x08           /* lane 1 with no lane 0 to pair with */
#define ZMP_ERR_REFUSED 0x09        /* the socket refused the peer */
#define ZMP_ERR_INTERNAL 0x0A       /* local failure (out of memory) */

/* Property names of READY. */
#define ZMP_PROP_SOCKET_TYPE "Socket-Type"
#define ZMP_PROP_ROUTING_ID "Routing-Id"
#define ZMP_PROP_LANE_COUNT "Zlink-Lane-Count"
#define ZMP_PROP_LANE "Zlink-Lane"
#define ZMP_PROP_WEIGHT "Zlink-Weight"
#define ZMP_PROP_MAX_MSG "Zlink-Max-Message-Size"

/* Largest HELLO frame: header + cmd + type + len + 255 rid bytes. */
#define ZMP_HELLO_MAX (ZMP_HDR_LEN + 4 + 255)
/* Largest READY frame this implementation builds. */
#define ZMP_READY_MAX 512
/* Largest ERROR frame: header + cmd + code + len + 255 reason bytes. */
#define ZMP_ERROR_MAX (ZMP_HDR_LEN + 3 + 255)

/* ----------------------------------------------------------- framing */

typedef struct zmp_hdr {
    uint8_t flags;
    uint8_t kind;
    uint8_t hdr_len;   /* 8 or 16 */
    uint32_t size;     /* body bytes (excludes the sequence) */
    uint64_t seq;      /* nonzero on the first frame of a request / reply */
} zmp_hdr_t;

/* Writes the header of one frame into out[0..16) and returns its length
 * (8, or 16 when kind is REQUEST, REPLY or ERROR_REPLY and seq follows).
 * The caller passes kind 0 for every frame but a record's first. Any
 * thread; no allocation. */
size_t zmp_encode_header(uint8_t *out, uint8_t flags, uint8_t kind, uint64_t seq,
                         uint32_t size);

typedef struct zmp_decoder {
    int64_t maxmsgsize;   /* <= 0: unlimited (controls: 4096 regardless) */
    bool mid;             /* inside a multipart record (last frame had MORE) */
    uint64_t rec_bytes;   /* body bytes of the current record so far */
    uint8_t error_code;   /* ZMP_ERR_* of the last EPROTO / EMSGSIZE */
} zmp_decoder_t;

void zmp_decoder_init(zmp_decoder_t *d, int64_t maxmsgsize);

/* Decodes the frame starting at p[0..n). Returns:
 *   0        a whole frame is present: *h is its header, its body is
 *            p[h->hdr_len .. h->hdr_len + h->size); the decoder's record
 *            state has advanced past it.
 *   EAGAIN   not yet: *need is the number of bytes (from p) that must be
 *            present before the next call can make progress.
 *   EPROTO   malformed (d->error_code says how);
 *   EMSGSIZE a size limit was broken (d->error_code = BODY_TOO_LARGE).
 * Header rules are checked as soon as the header bytes are present, so an
 * oversize frame is refused before its body arrives. Never reads past n. */
int zmp_decode(zmp_decoder_t *d, const uint8_t *p, size_t n, zmp_hdr_t *h, size_t *need);

/* The stream ended with pending bytes unparsed: 0 when that is a clean end
 * (no bytes of a frame and no record in progress), else EPROTO. The partial
 * record, if any, is to be discarded. */
int zmp_decoder_eof(const zmp_decoder_t *d, size_t pending);

/* Whether a data frame with these flags is a "special" (non-data) frame
 * that must not be delivered as a record part: CONTROL, SUBSCRIBE, CANCEL. */
static inline bool zmp_is_control(uint8_t flags)
{
    return (flags & (ZMP_F_CONTROL | ZMP_F_SUBSCRIBE | ZMP_F_CANCEL)) != 0;
}

/* ---------------------------------------------------------- handshake */

/* Socket types that speak ZMP (everything but STREAM). */
bool zmp_type_valid(int type);
/* Whether a and b may form a connection (PAIR-PAIR; DEALER/ROUTER among
 * themselves; PUB/XPUB with SUB/XSUB). Symmetric. */
bool zmp_types_compatible(int a, int b);
/* Lanes of a connection: 2 for ROUTER-ROUTER, else 1. */
int zmp_lane_count(int a, int b);
/* Whether type carries the lane properties in READY (DEALER, ROUTER). */
bool zmp_type_has_lanes(int type);
/* "PAIR", "DEALER" ... or NULL. */
const char *zmp_type_name(int type);
/* The type for a name of n bytes (exact, case-sensitive), or 0. */
int zmp_type_from_name(const uint8_t *name, size_t n);

/* Builds a complete HELLO frame (header included) into buf[0..cap).
 * Returns its length, or 0 when cap is too small. */
size_t zmp_build_hello(uint8_t *buf, size_t cap, int type, const zlink_routing_id_t *rid);
/* Parses a HELLO body (the CONTROL frame body, command byte included).
 * Returns 0, or EPROTO when it is not a well-formed HELLO of a ZMP type. */
int zmp_parse_hello(const uint8_t *body, size_t n, int *type, zlink_routing_id_t *rid);

/* What a READY says. A field that was absent is marked so. */
typedef struct zmp_ready {
    int type;                   /* Socket-Type, 0 when absent */
    bool has_rid;
    zlink_routing_id_t rid;     /* Routing-Id (may be empty) */
    int lane_count;             /* Zlink-Lane-Count, -1 when absent */
    int lane;                   /* Zlink-Lane, -1 when absent */
    bool has_weight;
    uint32_t weight;            /* Zlink-Weight */
    bool has_max_msg;
    uint64_t max_msg;           /* Zlink-Max-Message-Size */
} zmp_ready_t;

/* An all-absent READY description. */
void zmp_ready_clear(zmp_ready_t *r);
/* Builds a complete READY frame from the present fields of r, in the order
 * Socket-Type, Routing-Id, Zlink-Lane-Count, Zlink-Lane, Zlink-Weight,
 * Zlink-Max-Message-Size. Returns its length, or 0 when cap is too small. */
size_t zmp_build_ready(uint8_t *buf, size_t cap, const zmp_ready_t *r);
/* Parses a READY body (command byte included). Unknown properties are
 * skipped. Returns EPROTO for a broken property layout, a known property
 * with a wrong value size or value, an unknown Socket-Type name, or a known
 * property given twice. */
int zmp_parse_ready(const uint8_t *body, size_t n, zmp_ready_t *out);
/* Checks a parsed READY against the peer's HELLO and our own type:
 *  - Socket-Type, when present, equals the HELLO type (required for
 *    DEALER/ROUTER peers);
 *  - DEALER/ROUTER peers carry Routing-Id (equal to the HELLO's), and
 *    Zlink-Lane-Count equal to zmp_lane_count(own, peer), and Zlink-Lane
 *    below it;
 *  - other peers carry no lane properties.
 * Returns 0 or EPROTO. */
int zmp_check_ready(const zmp_ready_t *r, int own_type, int hello_type,
                    const zlink_routing_id_t *hello_rid);

/* Builds a complete ERROR frame (reason truncated to 255 bytes; may be
 * NULL). Returns its length, or 0 when cap is too small. */
size_t zmp_build_error(uint8_t *buf, size_t cap, uint8_t code, const char *reason);
/* Parses an ERROR body. reason receives a NUL-terminated copy (truncated to
 * cap - 1; may be NULL). Returns 0 or EPROTO. */
int zmp_parse_error(const uint8_t *body, size_t n, uint8_t *code, char *reason, size_t cap);

/* ------------------------------------------------------------ controls */

#define ZMP_WEIGHT_NAME "WEIGHT"
#define ZMP_WEIGHT_SIZE 10
#define ZMP_WEIGHT_MAX 10000
#define ZMP_FLOWSTATE_NAME "FLOWSTATE"

/* Writes a WEIGHT control body ("WEIGHT" + u32 BE, ZMP_WEIGHT_SIZE bytes),
 * for a socket that queues it as a control frame. */
void zmp_weight_body(uint8_t body[ZMP_WEIGHT_SIZE], uint32_t weight);
/* Builds a complete WEIGHT control frame (18 bytes). Returns its length,
 * or 0 when cap is too small. */
size_t zmp_build_weight(uint8_t *buf, size_t cap, uint32_t weight);
/* Parses a WEIGHT control body: exactly "WEIGHT" + u32 BE <= 10000.
 * Returns 0, or EINVAL for anything else (the caller ignores it). */
int zmp_parse_weight(const uint8_t *body, size_t n, uint32_t *weight);

/* FLOWSTATE body (doc/protocol.md §8.3): "FLOWSTATE", u8 version (1),
 * u8 state (0 RUNNING, 1 PAUSED), u64 BE epoch: ZMP_FLOWSTATE_SIZE bytes. */
#define ZMP_FLOWSTATE_VERSION 1
#define ZMP_FLOWSTATE_SIZE 19
void zmp_flowstate_body(uint8_t body[ZMP_FLOWSTATE_SIZE], bool paused, uint64_t epoch);
/* Parses a body zmp_control_kind called ZMP_CTL_FLOWSTATE: 0, or EINVAL
 * for a wrong size, an unknown version or state (the receiver ignores
 * it). */
int zmp_parse_flowstate(const uint8_t *body, size_t n, bool *paused, uint64_t *epoch);

/* The errno part that starts an ERROR_REPLY record: the error as u32 BE,
 * ZMP_ERRNO_PART_SIZE bytes. Parsing gives 0 for a part of another size. */
#define ZMP_ERRNO_PART_SIZE 4
void zmp_errno_part(uint8_t part[ZMP_ERRNO_PART_SIZE], int err);
int zmp_parse_errno_part(const uint8_t *part, size_t n);

/* Length of the name a control body starts with, for the named controls a
 * sender keeps only the latest of (WEIGHT, FLOWSTATE); 0 for others. */
size_t zmp_control_name_len(const uint8_t *body, size_t n);

/* What a CONTROL frame body is. */
typedef enum zmp_control_kind {
    ZMP_CTL_HELLO,
    ZMP_CTL_READY,
    ZMP_CTL_ERROR,
    ZMP_CTL_WEIGHT,     /* starts with "WEIGHT" (maybe malformed) */
    ZMP_CTL_FLOWSTATE,  /* starts with "FLOWSTATE" (the socket parses it) */
    ZMP_CTL_OTHER       /* unknown: ignored */
} zmp_control_kind_t;
zmp_control_kind_t zmp_control_kind(const uint8_t *body, size_t n);

/* Big-endian helpers. */
static inline void zmp_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void zmp_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void zmp_put_u64(uint8_t *p, uint64_t v)
{
    zmp_put_u32(p, (uint32_t)(v >> 32));
    zmp_put_u32(p + 4, (uint32_t)v);
}
static inline uint16_t zmp_get_u16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t zmp_get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t zmp_get_u64(const uint8_t *p)
{
    return ((uint64_t)zmp_get_u32(p) << 32) | zmp_get_u32(p + 4);
}

#endif /* ZL_ZMP_H */
