/* zltest_rawzmp.h — a "raw ZMP peer" for the tests: a plain POSIX TCP or
 * unix socket that speaks ZLink's wire protocol (doc/protocol.md) by hand,
 * with its own codec, so the library's engine is tested against bytes it
 * did not produce.
 *
 * Header-only (static functions); public POSIX, zlink.h and zltest.h only.
 *
 *   wire_t    a growable byte buffer to build frames in (w_init/w_free; a
 *             zero-initialised wire_t is empty and valid too).
 *   raw_t     a connection: raw_connect / raw_accept / raw_init_fd, then
 *             raw_send / raw_fill / raw_peek / raw_frames / raw_wait_frames /
 *             raw_wait_closed, and raw_close.
 *
 * Frame layout (protocol.md): 5A 01 flags kind size(u32 BE), then for kinds
 * 1..3 a sequence u64 BE (16-byte header), then the body. */
#ifndef ZLTEST_RAWZMP_H
#define ZLTEST_RAWZMP_H

#include "zlink.h"
#include "zltest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define ZR_MAGIC 0x5A
#define ZR_VERSION 0x01
#define ZR_F_MORE 0x01
#define ZR_F_CONTROL 0x02

/* The most unread bytes a raw peer holds before it fails the test (0: no
 * limit); a file may define it before including this header. */
#ifndef ZR_MAX_UNREAD
#define ZR_MAX_UNREAD 0
#endif

/* ms scaled by the suite's timeout multiplier. */
static inline int T(int ms)
{
    return ZT_MS(ms);
}

static inline uint32_t be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static inline uint64_t be64(const uint8_t *b)
{
    return (uint64_t)be32(b) << 32 | be32(b + 4);
}

/* ------------------------------------------------------- wire builder */

typedef struct wire {
    uint8_t *b;
    size_t n, cap;
} wire_t;

static inline void w_init(wire_t *w)
{
    w->cap = 1024;
    w->n = 0;
    w->b = malloc(w->cap);
    ZT_CHECK(w->b != NULL);
}

static inline void w_free(wire_t *w)
{
    free(w->b);
    w->b = NULL;
    w->n = w->cap = 0;
}

static inline void w_bytes(wire_t *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        if (w->cap == 0)
            w->cap = 1024;
        while (w->n + n > w->cap)
            w->cap *= 2;
        w->b = realloc(w->b, w->cap);
        ZT_CHECK(w->b != NULL);
    }
    if (n > 0)
        memcpy(w->b + w->n, p, n);
    w->n += n;
}

/* n copies of byte. */
static inline void w_fill(wire_t *w, uint8_t byte, size_t n)
{
    uint8_t chunk[256];
    memset(chunk, byte, sizeof chunk);
    while (n > 0) {
        size_t k = n < sizeof chunk ? n : sizeof chunk;
        w_bytes(w, chunk, k);
        n -= k;
    }
}

static inline void w_u8(wire_t *w, uint8_t v)
{
    w_bytes(w, &v, 1);
}

static inline void w_u16(wire_t *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    w_bytes(w, b, 2);
}

static inline void w_u32(wire_t *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    w_bytes(w, b, 4);
}

static inline void w_u64(wire_t *w, uint64_t v)
{
    w_u32(w, (uint32_t)(v >> 32));
    w_u32(w, (uint32_t)v);
}

/* An 8-byte header with any bytes (also invalid ones). */
static inline void w_hdr_raw(wire_t *w, uint8_t magic, uint8_t ver, uint8_t flags, uint8_t kind,
                      uint32_t size)
{
    w_u8(w, magic);
    w_u8(w, ver);
    w_u8(w, flags);
    w_u8(w, kind);
    w_u32(w, size);
}

/* A valid kind-0 header: 5A 01 flags 00 size. */
static inline void w_hdr(wire_t *w, uint8_t flags, uint32_t size)
{
    w_hdr_raw(w, ZR_MAGIC, ZR_VERSION, flags, 0, size);
}

/* A whole frame; kinds 1..3 carry the sequence (16-byte header). */
static inline void w_frame(wire_t *w, uint8_t flags, uint8_t kind, uint64_t seq, const void *body,
                    uint32_t size)
{
    w_hdr_raw(w, ZR_MAGIC, ZR_VERSION, flags, kind, size);
    if (kind >= 1 && kind <= 3)
        w_u64(w, seq);
    w_bytes(w, body, size);
}

/* A kind-0 frame. */
static inline void w_frame0(wire_t *w, uint8_t flags, const void *body, size_t size)
{
    w_frame(w, flags, 0, 0, body, (uint32_t)size);
}

/* A DATA frame with the text s (MORE if more). */
static inline void w_data(wire_t *w, bool more, const char *s)
{
    w_frame0(w, more ? ZR_F_MORE : 0x00, s, strlen(s));
}

/* The Socket-Type name of a ZLink socket type. */
static inline const char *type_name(int type)
{
    switch (type) {
    case ZLINK_PAIR: return "PAIR";
    case ZLINK_PUB: return "PUB";
    case ZLINK_SUB: return "SUB";
    case ZLINK_DEALER: return "DEALER";
    case ZLINK_ROUTER: return "ROUTER";
    case ZLINK_XPUB: return "XPUB";
    case ZLINK_XSUB: return "XSUB";
    default: return "?";
    }
}

/* HELLO: CONTROL frame, body 01 | type u16 | rid len | rid. */
static inline void w_hello(wire_t *w, int type, const char *rid)
{
    size_t l = strlen(rid);
    w_hdr(w, ZR_F_CONTROL, (uint32_t)(4 + l));
    w_u8(w, 0x01);
    w_u16(w, (uint16_t)type);
    w_u8(w, (uint8_t)l);
    w_bytes(w, rid, l);
}

/* One READY property: name len | name | value len u32 | value. */
static inline void w_prop(wire_t *w, const char *name, const void *v, uint32_t vlen)
{
    w_u8(w, (uint8_t)strlen(name));
    w_bytes(w, name, strlen(name));
    w_u32(w, vlen);
    w_bytes(w, v, vlen);
}

/* READY frame (body 04 | properties) around already-built properties. */
static inline void w_ready(wire_t *w, const wire_t *props)
{
    w_hdr(w, ZR_F_CONTROL, (uint32_t)(1 + props->n));
    w_u8(w, 0x04);
    w_bytes(w, props->b, props->n);
}

/* The READY a DEALER / ROUTER sends: Socket-Type, Routing-Id,
 * Zlink-Lane-Count, Zlink-Lane, Zlink-Weight 100 (count or lane < 0: that
 * property left out). */
static inline void w_ready_dr(wire_t *w, int type, const char *rid, int count, int lane)
{
    wire_t p;
    w_init(&p);
    const char *tn = type_name(type);
    w_prop(&p, "Socket-Type", tn, (uint32_t)strlen(tn));
    w_prop(&p, "Routing-Id", rid, (uint32_t)strlen(rid));
    uint8_t c = (uint8_t)count, l = (uint8_t)lane;
    if (count >= 0)
        w_prop(&p, "Zlink-Lane-Count", &c, 1);
    if (lane >= 0)
        w_prop(&p, "Zlink-Lane", &l, 1);
    const uint8_t wt[4] = {0, 0, 0, 100};
    w_prop(&p, "Zlink-Weight", wt, 4);
    w_ready(w, &p);
    w_free(&p);
}

/* ------------------------------------------------------ endpoints */

/* The port of "tcp://host:PORT". */
static inline int tcp_port_of(const char *ep)
{
    const char *colon = strrchr(ep, ':');
    ZT_CHECK(colon != NULL);
    int port = atoi(colon + 1);
    ZT_CHECK(port >= 0 && port < 65536);
    return port;
}

/* ep is "tcp://127.0.0.1:PORT" or "ipc://PATH". */
static inline socklen_t ep_sockaddr(const char *ep, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (strncmp(ep, "ipc://", 6) == 0) {
        struct sockaddr_un *sun = (struct sockaddr_un *)ss;
        sun->sun_family = AF_UNIX;
        ZT_CHECK(strlen(ep + 6) < sizeof sun->sun_path);
        strcpy(sun->sun_path, ep + 6);
        return sizeof *sun;
    }
    ZT_CHECK(strncmp(ep, "tcp://127.0.0.1:", 16) == 0);
    struct sockaddr_in *sin = (struct sockaddr_in *)ss;
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)tcp_port_of(ep));
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sizeof *sin;
}

/* Waits up to ms for fd to become readable (EINTR retried); false on
 * timeout. */
static inline bool zr_poll_in(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int rc;
    do {
        rc = poll(&p, 1, ms);
    } while (rc < 0 && errno == EINTR);
    ZT_CHECK(rc >= 0);
    return rc > 0;
}

/* Closes a raw listener (and removes its ipc socket file at once). */
static inline void raw_unlisten(int lfd, const char *ep)
{
    close(lfd);
    if (strncmp(ep, "ipc://", 6) == 0)
        unlink(ep + 6);
}

/* ------------------------------------------------------ the raw peer */

typedef struct raw {
    int fd;
    uint8_t *in;  /* what the ZLink side sent: consumed [0, at), unread [at, n) */
    size_t n, at, cap;
    size_t max;   /* most unread bytes it may hold (0: no limit) */
    bool closed;  /* the ZLink side closed (EOF or reset) */
} raw_t;

/* A frame the ZLink side sent (body valid until the next raw_fill). */
typedef struct rframe {
    uint8_t flags, kind;
    uint64_t seq;         /* kinds 1..3; else 0 */
    uint32_t size;
    const uint8_t *start; /* the header */
    const uint8_t *body;
    size_t off;           /* the body's offset in r->in */
    size_t total;         /* header (+ sequence) + body */
} rframe_t;

/* Takes over a connected fd (TCP_NODELAY where it applies). */
static inline void raw_init_fd(raw_t *r, int fd)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->cap = 1u << 16;
    r->in = malloc(r->cap);
    ZT_CHECK(r->in != NULL);
    r->max = ZR_MAX_UNREAD;
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* fails on ipc */
}

/* Connects to "tcp://127.0.0.1:port" or "ipc://path"; rcvbuf > 0 sets
 * SO_RCVBUF before the connect. */
static inline void raw_connect_buf(raw_t *r, const char *ep, int rcvbuf)
{
    struct sockaddr_storage ss;
    socklen_t len = ep_sockaddr(ep, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ZT_CHECK(fd >= 0);
    if (rcvbuf > 0)
        ZT_EQ_INT(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf), 0);
    if (connect(fd, (struct sockaddr *)&ss, len) != 0)
        ZT_FAIL("raw connect to %s: %s", ep, strerror(errno));
    raw_init_fd(r, fd);
}

static inline void raw_connect(raw_t *r, const char *ep)
{
    raw_connect_buf(r, ep, 0);
}

/* Accepts the next connection on listener lfd within ms; false if none. */
static inline bool raw_accept_within(int lfd, raw_t *r, int ms)
{
    if (!zr_poll_in(lfd, ms))
        return false;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    ZT_CHECK(fd >= 0);
    raw_init_fd(r, fd);
    return true;
}

/* Accepts the next connection on lfd (waits up to 5 s, scaled). */
static inline void raw_accept(int lfd, raw_t *r)
{
    if (!raw_accept_within(lfd, r, T(5000)))
        ZT_FAIL("the ZLink side did not connect to the raw listener within %d ms", T(5000));
}

static inline void raw_close(raw_t *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    free(r->in);
    r->in = NULL;
}

/* Sends what the connection takes; false if it refused the rest (the
 * ZLink side may already have closed it). */
static inline bool raw_send_lenient(raw_t *r, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t k = send(r->fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        b += k;
        n -= (size_t)k;
    }
    return true;
}

/* Sends all of p; the connection must take it. */
static inline void raw_send_bytes(raw_t *r, const void *p, size_t n)
{
    if (!raw_send_lenient(r, p, n))
        ZT_FAIL("raw send: %s", strerror(errno));
}

/* Sends all of w. */
static inline void raw_send(raw_t *r, const wire_t *w)
{
    raw_send_bytes(r, w->b, w->n);
}

/* Waits up to ms for input and appends it; false on timeout. */
static inline bool raw_fill(raw_t *r, int ms)
{
    if (r->closed)
        return true;
    if (r->cap - r->n < (1u << 15) && r->at > 0) {
        memmove(r->in, r->in + r->at, r->n - r->at);
        r->n -= r->at;
        r->at = 0;
    }
    if (r->max > 0 && r->n - r->at >= r->max)
        ZT_FAIL("raw peer: the ZLink side sent more than %zu unread bytes", r->max);
    if (r->cap - r->n < (1u << 15)) {
        r->cap *= 2;
        r->in = realloc(r->in, r->cap);
        ZT_CHECK(r->in != NULL);
    }
    if (!zr_poll_in(r->fd, ms))
        return false;
    size_t room = r->cap - r->n;
    if (r->max > 0 && room > r->max - (r->n - r->at))
        room = r->max - (r->n - r->at);
    ssize_t k = recv(r->fd, r->in + r->n, room, 0);
    if (k > 0)
        r->n += (size_t)k;
    else if (k == 0 || errno == ECONNRESET || errno == EPIPE)
        r->closed = true;
    else if (errno != EINTR && errno != EAGAIN)
        ZT_FAIL("raw recv: %s", strerror(errno));
    return true;
}

/* Reads until the ZLink side closed the connection; fails after 5 s. */
static inline void raw_wait_closed(raw_t *r)
{
    int64_t end = zt_now_ms() + T(5000);
    while (!r->closed) {
        int left = (int)(end - zt_now_ms());
        if (left <= 0 || !raw_fill(r, left))
            ZT_FAIL("the ZLink side did not close the connection within %d ms", T(5000));
    }
}

/* The whole frame at offset at of what was received, if there is one;
 * checks the magic and version. */
static inline bool raw_frame_at(const raw_t *r, size_t at, rframe_t *f)
{
    if (r->n - at < 8)
        return false;
    const uint8_t *h = r->in + at;
    if (h[0] != ZR_MAGIC || h[1] != ZR_VERSION)
        ZT_FAIL("raw peer: bad frame header %02x %02x", h[0], h[1]);
    uint32_t size = be32(h + 4);
    size_t hl = (h[3] >= 1 && h[3] <= 3) ? 16 : 8;
    if (r->n - at < hl + size)
        return false;
    f->flags = h[2];
    f->kind = h[3];
    f->size = size;
    f->seq = hl == 16 ? be64(h + 8) : 0;
    f->start = h;
    f->body = h + hl;
    f->off = at + hl;
    f->total = hl + size;
    return true;
}

/* The next whole frame at the read position (not consumed). */
static inline bool raw_peek(raw_t *r, rframe_t *f)
{
    return raw_frame_at(r, r->at, f);
}

/* The next frame the ZLink side sends (waits up to 5 s); consumed. */
#define raw_next(r) raw__next(__FILE__, __LINE__, (r))
static inline rframe_t raw__next(const char *file, int line, raw_t *r)
{
    rframe_t f;
    int64_t end = zt_now_ms() + T(5000);
    while (!raw_peek(r, &f)) {
        if (r->closed)
            zt__fail(file, line, "raw peer: the ZLink side closed the connection");
        int left = (int)(end - zt_now_ms());
        if (left <= 0 || !raw_fill(r, left))
            zt__fail(file, line, "raw peer: no frame from the ZLink side within %d ms", T(5000));
    }
    r->at += f.total;
    return f;
}

/* Splits the whole unread frames received so far into out[0..cap). */
static inline size_t raw_frames(const raw_t *r, rframe_t *out, size_t cap)
{
    size_t at = r->at, k = 0;
    rframe_t f;
    while (raw_frame_at(r, at, &f)) {
        ZT_CHECK(k < cap);
        out[k++] = f;
        at += f.total;
    }
    return k;
}

#define ZR_MAXF 256 /* frames raw_wait_frames looks at */

/* The code of an ERROR (control 05) the ZLink side sent among the unread
 * frames, or -1 when there is none. */
static inline int raw_error_code(const raw_t *r)
{
    rframe_t f[ZR_MAXF];
    size_t n = raw_frames(r, f, ZR_MAXF);
    for (size_t i = 0; i < n; i++)
        if (f[i].flags == 0x02 && f[i].size >= 3 && f[i].body[0] == 0x05)
            return f[i].body[1];
    return -1;
}

/* Waits until the ZLink side sent at least n whole frames (5 s). */
static inline void raw_wait_frames(raw_t *r, size_t n)
{
    rframe_t f[ZR_MAXF];
    int64_t end = zt_now_ms() + T(5000);
    while (raw_frames(r, f, ZR_MAXF) < n) {
        if (r->closed)
            ZT_FAIL("connection closed after %zu of %zu expected frames",
                    raw_frames(r, f, ZR_MAXF), n);
        int left = (int)(end - zt_now_ms());
        if (left <= 0 || !raw_fill(r, left))
            ZT_FAIL("the ZLink side sent fewer than %zu frames within %d ms", n, T(5000));
    }
}

#endif
