/*
 * zltest_zlink.h — ZLink-specific helpers for the socket tests, header only,
 * on top of zltest.h. Public API (zlink.h) only.
 *
 * Every helper checks what it does (a failed call fails the case with the
 * result and errno) so a test reads as the contract it checks. Conventions:
 *  - Transports are named "inproc", "tcp" and "ipc". zlt_bind() binds a
 *    fresh endpoint of one (tcp: 127.0.0.1 port 0; ipc: a short path under
 *    /tmp, removed at exit) and returns the address peers connect to, read
 *    back through ZLINK_LAST_ENDPOINT.
 *  - ZLT_EACH_TRANSPORT(tr, ctx) runs its body for "inproc" then "tcp",
 *    each time as a round: in a fresh context whose sockets are closed and
 *    checked when the round ends (see "rounds" below); it prints
 *    "# transport <tr>" before each.
 *  - zlt_sock() makes the usual test socket: LINGER 0 (a case's ctx_term
 *    never waits for a peer that is gone) and send/receive timeouts of
 *    ZLT_TIMEO_MS scaled by ZT_TIMEOUT_MULT, so a failing case reports
 *    instead of hanging. zlt_socket() leaves every default alone.
 *  - Text records: one part holding the bytes of a string (no NUL);
 *    receives hand them back NUL-terminated. Every send helper checks the
 *    ownership rule: the part comes back empty and initialized whatever the
 *    result.
 */
#ifndef ZLTEST_ZLINK_H
#define ZLTEST_ZLINK_H

#include "zlink.h"
#include "zltest.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Send and receive timeout of zlt_sock() sockets, before scaling. */
#define ZLT_TIMEO_MS 2000
/* Parts a text receive accepts (more is a failure, not a short buffer). */
#define ZLT_MAXP 32
/* Sockets one round of ZLT_EACH_TRANSPORT closes for the test. */
#define ZLT_ROUND_SOCKS 256

/* ------------------------------------------------------------- transports */

static inline bool zlt_is_tcp(const char *tr)
{
    return strcmp(tr, "tcp") == 0;
}

/* --------------------------------------------------------------- context */

static inline void *zlt_ctx_new(void)
{
    void *ctx = zlink_ctx_new();
    if (ctx == NULL)
        ZT_FAIL("zlink_ctx_new: errno %d", zlink_errno());
    return ctx;
}

static inline void zlt_ctx_term(void *ctx)
{
    ZT_EQ_INT(zlink_ctx_term(ctx), ZLINK_CLOSE_OK);
}

/* --------------------------------------------------------------- options */

static inline void zlt_set_int(void *s, int opt, int v)
{
    zlink_config_result_t r = zlink_setsockopt(s, opt, &v, sizeof v);
    if (r != ZLINK_CONFIG_OK)
        ZT_FAIL("setsockopt(%#x, %d): result %d, errno %d", opt, v, (int)r, zlink_errno());
}

/* Reads an int option; checks that exactly sizeof(int) bytes came back. */
static inline int zlt_get_int(void *s, int opt)
{
    int v = -12345;
    size_t n = sizeof v;
    ZT_EQ_INT(zlink_getsockopt(s, opt, &v, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(n, sizeof v);
    return v;
}

static inline void zlt_set_u64(void *s, int opt, uint64_t v)
{
    ZT_EQ_INT(zlink_setsockopt(s, opt, &v, sizeof v), ZLINK_CONFIG_OK);
}

static inline uint64_t zlt_get_u64(void *s, int opt)
{
    uint64_t v = 0xABABABABABABABABull;
    size_t n = sizeof v;
    ZT_EQ_INT(zlink_getsockopt(s, opt, &v, &n), ZLINK_CONFIG_OK);
    ZT_EQ_INT(n, 8);
    return v;
}

static inline void zlt_set_i64(void *s, int opt, int64_t v)
{
    ZT_EQ_INT(zlink_setsockopt(s, opt, &v, sizeof v), ZLINK_CONFIG_OK);
}

/* Sets the int option and checks that it reads back. */
#define zlt_set_int_check(s, opt, v) zlt__set_int_check(__FILE__, __LINE__, (s), (opt), (v))
static inline void zlt__set_int_check(const char *file, int line, void *s, int opt, int v)
{
    int got = -12345;
    size_t n = sizeof got;
    zlink_config_result_t r = zlink_setsockopt(s, opt, &v, sizeof v);
    if (r != ZLINK_CONFIG_OK)
        zt__fail(file, line, "setsockopt(%#x, %d): result %d, errno %d", opt, v, (int)r,
                 zlink_errno());
    r = zlink_getsockopt(s, opt, &got, &n);
    if (r != ZLINK_CONFIG_OK || n != sizeof got || got != v)
        zt__fail(file, line, "getsockopt(%#x) after setting %d: result %d, size %zu, value %d",
                 opt, v, (int)r, n, got);
}

/* setsockopt(opt, int v) must fail with want/err and leave the option's
 * value as it was (when the option can be read). */
#define zlt_set_int_fails(s, opt, v, want, err) \
    zlt__set_int_fails(__FILE__, __LINE__, (s), (opt), (v), (want), (err))
static inline void zlt__set_int_fails(const char *file, int line, void *s, int opt, int v,
                                      zlink_config_result_t want, int err)
{
    int before = 0, after = 0;
    size_t n = sizeof before;
    bool readable = zlink_getsockopt(s, opt, &before, &n) == ZLINK_CONFIG_OK;
    zlink_config_result_t r = zlink_setsockopt(s, opt, &v, sizeof v);
    int e = zlink_errno();
    if (r != want || e != err)
        zt__fail(file, line, "setsockopt(%#x, %d): result %d errno %d, expected %d errno %d",
                 opt, v, (int)r, e, (int)want, err);
    n = sizeof after;
    if (readable && (zlink_getsockopt(s, opt, &after, &n) != ZLINK_CONFIG_OK || after != before))
        zt__fail(file, line, "setsockopt(%#x, %d) failed but the value went %d -> %d", opt, v,
                 before, after);
}

/* A 0/1 int option: reads dflt; takes 1 and 0, read back; refuses 2, -1
 * and a 2-byte value with INVALID_ARGUMENT/EINVAL, leaving it as it was. */
#define zlt_check_bool_option(s, opt, dflt) \
    zlt__check_bool_option(__FILE__, __LINE__, (s), (opt), (dflt))
static inline void zlt__check_bool_option(const char *file, int line, void *s, int opt,
                                          int dflt)
{
    int v = -12345;
    size_t n = sizeof v;
    if (zlink_getsockopt(s, opt, &v, &n) != ZLINK_CONFIG_OK || v != dflt)
        zt__fail(file, line, "option %#x reads %d, default %d expected", opt, v, dflt);
    for (int k = 0; k < 2; k++) {
        zlt__set_int_check(file, line, s, opt, 1 - k);
        zlt__set_int_fails(file, line, s, opt, 2, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        zlt__set_int_fails(file, line, s, opt, -1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        short sv = (short)k;
        n = sizeof v;
        if (zlink_setsockopt(s, opt, &sv, sizeof sv) != ZLINK_CONFIG_INVALID_ARGUMENT ||
            zlink_errno() != EINVAL || zlink_getsockopt(s, opt, &v, &n) != ZLINK_CONFIG_OK ||
            v != 1 - k)
            zt__fail(file, line, "option %#x took a %zu-byte value", opt, sizeof sv);
    }
}

/* getsockopt(opt) into a roomy buffer must fail with want/err. */
#define zlt_get_fails(s, opt, want, err) \
    zlt__get_fails(__FILE__, __LINE__, (s), (opt), (want), (err))
static inline void zlt__get_fails(const char *file, int line, void *s, int opt,
                                  zlink_config_result_t want, int err)
{
    unsigned char buf[256];
    size_t n = sizeof buf;
    zlink_config_result_t r = zlink_getsockopt(s, opt, buf, &n);
    int e = zlink_errno();
    if (r != want || e != err)
        zt__fail(file, line, "getsockopt(%#x): result %d errno %d, expected %d errno %d", opt,
                 (int)r, e, (int)want, err);
}

/* getsockopt of the int option opt writes exactly sizeof(int) bytes, the
 * value want, and sets *size to sizeof(int); a buffer of fewer bytes is
 * INVALID_ARGUMENT/EINVAL with nothing written. */
#define zlt_check_get_int_exact(s, opt, want) \
    zlt__check_get_int_exact(__FILE__, __LINE__, (s), (opt), (want))
static inline void zlt__check_get_int_exact(const char *file, int line, void *s, int opt,
                                            int want)
{
    unsigned char buf[16];
    memset(buf, 0xAB, sizeof buf);
    size_t n = sizeof buf;
    int v;
    zlink_config_result_t r = zlink_getsockopt(s, opt, buf, &n);
    memcpy(&v, buf, sizeof v);
    if (r != ZLINK_CONFIG_OK || n != sizeof(int) || v != want)
        zt__fail(file, line, "getsockopt(%#x): result %d, size %zu, value %d; expected %d", opt,
                 (int)r, n, v, want);
    for (size_t k = sizeof(int); k < sizeof buf; k++)
        if (buf[k] != 0xAB)
            zt__fail(file, line, "getsockopt(%#x) wrote past its %zu bytes", opt, n);
    for (size_t small = 0; small < sizeof(int); small++) {
        memset(buf, 0xAB, sizeof buf);
        n = small;
        r = zlink_getsockopt(s, opt, buf, &n);
        if (r != ZLINK_CONFIG_INVALID_ARGUMENT || zlink_errno() != EINVAL)
            zt__fail(file, line, "getsockopt(%#x) into %zu bytes: result %d errno %d", opt,
                     small, (int)r, zlink_errno());
        for (size_t k = 0; k < sizeof buf; k++)
            if (buf[k] != 0xAB)
                zt__fail(file, line, "getsockopt(%#x) into %zu bytes wrote byte %zu", opt,
                         small, k);
    }
}

/* zlink_set_routing_id with the bytes of a string. */
static inline void zlt_set_rid(void *s, const char *id)
{
    ZT_EQ_INT(zlink_set_routing_id(s, id, strlen(id)), ZLINK_CONFIG_OK);
}

/* --------------------------------------------------------------- sockets */

/* ----------------------------------------------------------------- rounds
 *
 * A round runs (part of) a case in a context of its own, on one transport.
 * Every socket the helpers below make in the round's context is remembered
 * and closed (the close checked) when the round ends, unless the case
 * closed it first with zlt_close(); then the context is termed. One round
 * at a time, made and ended on the main thread; sockets may be made on any
 * thread while the main thread waits for it. */
struct zlt__round {
    const char *tr;
    void *ctx;
    void *socks[ZLT_ROUND_SOCKS];
    int n;
};

static inline struct zlt__round *zlt__rd(void)
{
    static struct zlt__round rd;
    return &rd;
}

static inline void zlt__round_forget(void *s)
{
    struct zlt__round *rd = zlt__rd();
    for (int i = 0; i < rd->n; i++) {
        if (rd->socks[i] == s) {
            memmove(&rd->socks[i], &rd->socks[i + 1], (size_t)(rd->n - i - 1) * sizeof s);
            rd->n--;
            return;
        }
    }
}

/* A socket of type with every default as it is. */
static inline void *zlt_socket(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    if (s == NULL)
        ZT_FAIL("zlink_socket(%#x): errno %d", type, zlink_errno());
    struct zlt__round *rd = zlt__rd();
    if (ctx != NULL && ctx == rd->ctx) {
        if (rd->n == ZLT_ROUND_SOCKS)
            ZT_FAIL("more than %d sockets in one round", ZLT_ROUND_SOCKS);
        rd->socks[rd->n++] = s;
    }
    return s;
}

/* A socket with LINGER 0; other defaults untouched. */
static inline void *zlt_socket_linger0(void *ctx, int type)
{
    void *s = zlt_socket(ctx, type);
    zlt_set_int(s, ZLINK_LINGER, 0);
    return s;
}

/* The usual test socket: LINGER 0, SNDTIMEO and RCVTIMEO ZLT_TIMEO_MS. */
static inline void *zlt_sock(void *ctx, int type)
{
    void *s = zlt_socket_linger0(ctx, type);
    zlt_set_int(s, ZLINK_SNDTIMEO, ZT_MS(ZLT_TIMEO_MS));
    zlt_set_int(s, ZLINK_RCVTIMEO, ZT_MS(ZLT_TIMEO_MS));
    return s;
}

static inline void zlt_close(void *s)
{
    ZT_EQ_INT(zlink_close(s), ZLINK_CLOSE_OK);
    zlt__round_forget(s);
}

/* Starts a round on transport tr; returns its context. */
static inline void *zlt_round_begin(const char *tr)
{
    struct zlt__round *rd = zlt__rd();
    if (rd->ctx != NULL)
        ZT_FAIL("a round is already running");
    rd->tr = tr;
    rd->n = 0;
    rd->ctx = zlt_ctx_new();
    return rd->ctx;
}

/* Ends the round: closes its open sockets in the order they were made,
 * then terms its context. */
static inline void zlt_round_end(void)
{
    struct zlt__round *rd = zlt__rd();
    while (rd->n > 0)
        zlt_close(rd->socks[0]);
    zlt_ctx_term(rd->ctx);
    rd->ctx = NULL;
}

static inline const char *zlt__round_next(const char *prev)
{
    if (prev != NULL)
        zlt_round_end();
    const char *next = prev == NULL ? "inproc" : strcmp(prev, "inproc") == 0 ? "tcp" : NULL;
    if (next != NULL) {
        printf("# transport %s\n", next);
        zlt_round_begin(next);
    }
    return next;
}

/* for-loop header: runs the body as a round on "inproc", then on "tcp",
 * with tr naming the transport and ctx the round's context. */
#define ZLT_EACH_TRANSPORT(tr, ctx)                                    \
    for (const char *tr = NULL; (tr = zlt__round_next(tr)) != NULL;) \
        for (void *ctx = zlt__rd()->ctx; ctx != NULL; ctx = NULL)

static inline void zlt__finish(void *ctx, ...)
{
    va_list ap;
    va_start(ap, ctx);
    for (void *s = va_arg(ap, void *); s != NULL; s = va_arg(ap, void *))
        zlt_close(s);
    va_end(ap);
    zlt_ctx_term(ctx);
}

/* zlt_finish(ctx, a, b, ...): closes the sockets in order, then terms ctx. */
#define zlt_finish(ctx, ...) zlt__finish((ctx), __VA_ARGS__, (void *)NULL)

/* ------------------------------------------------------------- endpoints */

static inline void zlt_bind_at(void *s, const char *ep)
{
    zlink_bind_result_t r = zlink_bind(s, ep);
    if (r != ZLINK_BIND_OK) {
        int e = zlink_errno();
        ZT_FAIL("bind(\"%s\"): result %d, errno %d (%s)%s", ep, (int)r, e, zlink_strerror(e),
                r == ZLINK_BIND_NOT_SUPPORTED || r == ZLINK_BIND_INTERNAL
                    ? " -- transport not implemented in this build?"
                    : "");
    }
}

static inline void zlt_connect(void *s, const char *ep)
{
    zlink_connect_result_t r = zlink_connect(s, ep);
    if (r != ZLINK_CONNECT_OK)
        ZT_FAIL("connect(\"%s\"): result %d, errno %d", ep, (int)r, zlink_errno());
}

/* ZLINK_LAST_ENDPOINT into ep: a NUL-terminated string that fits. */
static inline void zlt_last_endpoint(void *s, char *ep, size_t cap)
{
    size_t size = cap;
    ZT_EQ_INT(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &size), ZLINK_CONFIG_OK);
    ZT_CHECK(size >= 1 && size <= cap && ep[size - 1] == '\0');
    ZT_EQ_INT(size, strlen(ep) + 1);
}

/* ipc socket files this process bound; removed at exit. */
struct zlt__ipc_files {
    char path[64][128];
    int n;
};

static inline struct zlt__ipc_files *zlt__ipc(void)
{
    static struct zlt__ipc_files files;
    return &files;
}

static inline void zlt__ipc_cleanup(void)
{
    for (int i = 0; i < zlt__ipc()->n; i++)
        unlink(zlt__ipc()->path[i]);
}

/* A fresh ipc endpoint "ipc:///tmp/zlt-<pid>-<tag>" with no file behind
 * it, removed again at exit. */
static inline const char *zlt_ipc_endpoint(char *buf, size_t cap, const char *tag)
{
    struct zlt__ipc_files *f = zlt__ipc();
    zt_ipc_endpoint(buf, cap, tag);
    const char *path = buf + strlen("ipc://");
    unlink(path);
    if (f->n == 0)
        atexit(zlt__ipc_cleanup);
    if (f->n < 64)
        snprintf(f->path[f->n++], sizeof f->path[0], "%s", path);
    return buf;
}

/* Binds s to a fresh endpoint of transport tr ("inproc", "tcp", "ipc") and
 * writes the address a peer connects to (ZLINK_LAST_ENDPOINT) into ep:
 * tcp's port 0 became a real port, the others are the name bound. */
static inline void zlt_bind(void *s, const char *tr, char *ep, size_t cap)
{
    /* Each file that includes this header has its own seq: its address
     * tells the files of one program apart. */
    static int seq;
    char want[128];
    char tag[40];
    snprintf(tag, sizeof tag, "%lx-%d", (unsigned long)(uintptr_t)&seq, ++seq);
    if (zlt_is_tcp(tr))
        snprintf(want, sizeof want, "tcp://127.0.0.1:0");
    else if (strcmp(tr, "ipc") == 0)
        zlt_ipc_endpoint(want, sizeof want, tag);
    else if (strcmp(tr, "inproc") == 0)
        snprintf(want, sizeof want, "inproc://zlt-%ld-%s", (long)getpid(), tag);
    else
        ZT_FAIL("unknown transport \"%s\"", tr);
    zlt_bind_at(s, want);
    zlt_last_endpoint(s, ep, cap);
    if (zlt_is_tcp(tr)) {
        ZT_CHECK(strncmp(ep, "tcp://127.0.0.1:", 16) == 0);
        int port = atoi(ep + 16);
        ZT_CHECK(port > 0 && port < 65536);
    } else {
        ZT_EQ_STR(ep, want);
    }
}

/* binder binds a fresh endpoint of tr, connecter connects to it. */
static inline void zlt_link(void *connecter, void *binder, const char *tr)
{
    char ep[256];
    zlt_bind(binder, tr, ep, sizeof ep);
    zlt_connect(connecter, ep);
}

/* ------------------------------------------------ messages, routing ids */

static inline void zlt_msg_set(zlink_msg_t *m, const void *data, size_t len)
{
    ZT_EQ_INT(zlink_msg_init_size(m, len), ZLINK_CONFIG_OK);
    if (len > 0)
        memcpy(zlink_msg_data(m), data, len);
}

static inline void zlt_rid_set(zlink_routing_id_t *r, const char *s)
{
    memset(r, 0, sizeof *r);
    r->size = (uint8_t)strlen(s);
    memcpy(r->data, s, r->size);
}

static inline bool zlt_rid_eq(const zlink_routing_id_t *a, const zlink_routing_id_t *b)
{
    return a != NULL && b != NULL && a->size == b->size &&
           memcmp(a->data, b->data, a->size) == 0;
}

static inline bool zlt_rid_is(const zlink_routing_id_t *r, const char *s)
{
    return r != NULL && r->size == strlen(s) && memcmp(r->data, s, r->size) == 0;
}

/* ------------------------------------------------------------------ send */

/* zlink_send of one part holding data[0..len). */
static inline zlink_submit_result_t zlt_send_data(void *s, const void *data, size_t len,
                                                  int flags)
{
    zlink_msg_t m;
    zlt_msg_set(&m, data, len);
    zlink_submit_result_t r = zlink_send(s, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
    ZT_EQ_INT(zlink_msg_size(&m), 0); /* consumed on success and failure */
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return r;
}

static inline zlink_submit_result_t zlt_send_str(void *s, const char *text, int flags)
{
    return zlt_send_data(s, text, strlen(text), flags);
}

/* zlink_send_rid of one part holding data[0..len) to rid. */
static inline zlink_submit_result_t zlt_send_to(void *s, const zlink_routing_id_t *rid,
                                                const void *data, size_t len, int flags)
{
    zlink_msg_t m;
    zlt_msg_set(&m, data, len);
    zlink_submit_result_t r =
        zlink_send_rid(s, rid, &m, 1, (zlink_send_flags_t)flags, NULL, NULL);
    ZT_EQ_INT(zlink_msg_size(&m), 0); /* consumed on success and failure */
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return r;
}

/* zlink_send_rid of text to the routing id spelled by the string rid. */
static inline zlink_submit_result_t zlt_send_rid_str(void *s, const char *rid, const char *text,
                                                     int flags)
{
    zlink_routing_id_t r;
    zlt_rid_set(&r, rid);
    return zlt_send_to(s, &r, text, strlen(text), flags);
}

/* --------------------------------------------------------------- receive */

/* Copies a one-part record's bytes into buf, NUL-terminated, and closes it. */
static inline void zlt__take_text(zlink_msg_t *parts, size_t count, char *buf, size_t cap)
{
    if (count != 1)
        ZT_FAIL("expected a one-part record, got %zu parts", count);
    size_t n = zlink_msg_size(&parts[0]);
    if (n >= cap)
        ZT_FAIL("record of %zu bytes, buffer of %zu", n, cap);
    if (n > 0)
        memcpy(buf, zlink_msg_data(&parts[0]), n);
    buf[n] = '\0';
    zlink_multipart_close(parts, count);
}

/* zlink_recv (PAIR, DEALER) of a one-part record into buf (NUL-terminated):
 * the result; on OK, checks there is no routing id. */
static inline zlink_recv_result_t zlt_recv_str(void *s, char *buf, size_t cap, int flags)
{
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 0;
    const zlink_routing_id_t *rid = (const zlink_routing_id_t *)&count; /* not NULL */
    zlink_recv_result_t r =
        zlink_recv(s, &rid, parts, ZLT_MAXP, &count, (zlink_recv_flags_t)flags);
    if (r != ZLINK_RECV_OK)
        return r;
    ZT_CHECK(rid == NULL);
    zlt__take_text(parts, count, buf, cap);
    return r;
}

/* Receives (NONE, RCVTIMEO) one record and checks it is the one part want;
 * a failure names the caller's line. */
#define zlt_expect_str(s, want) zlt__expect_str(__FILE__, __LINE__, (s), (want))
static inline void zlt__expect_str(const char *file, int line, void *s, const char *want)
{
    char buf[256];
    zlink_recv_result_t r = zlt_recv_str(s, buf, sizeof buf, 0);
    if (r != ZLINK_RECV_OK)
        zt__fail(file, line, "waiting for \"%s\": result %d, errno %d", want, (int)r,
                 zlink_errno());
    if (strcmp(buf, want) != 0)
        zt__fail(file, line, "received \"%s\", expected \"%s\"", buf, want);
}

/* The result of a DONTWAIT receive must be NO_DATA/EAGAIN. */
static inline void zlt__check_no_data(const char *file, int line, zlink_recv_result_t r,
                                      zlink_msg_t *parts, size_t count)
{
    if (r == ZLINK_RECV_OK)
        zt__fail(file, line, "expected no record, got one of %zu parts (first \"%.*s\")",
                 count, count ? (int)zlink_msg_size(&parts[0]) : 0,
                 count ? (const char *)zlink_msg_data(&parts[0]) : "");
    if (r != ZLINK_RECV_NO_DATA || zlink_errno() != EAGAIN)
        zt__fail(file, line, "expected NO_DATA/EAGAIN, got result %d, errno %d", (int)r,
                 zlink_errno());
}

/* Nothing is queued: a DONTWAIT zlink_recv is NO_DATA/EAGAIN. */
#define zlt_expect_no_data(s) zlt__expect_no_data(__FILE__, __LINE__, (s))
static inline void zlt__expect_no_data(const char *file, int line, void *s)
{
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 0;
    zlink_recv_result_t r = zlink_recv(s, NULL, parts, ZLT_MAXP, &count, ZLINK_DONTWAIT);
    zlt__check_no_data(file, line, r, parts, count);
}

/* ------------------------------------------------- multipart text records */

/* A list of strings as an array argument: ZLT_STRS("a", "b"). */
#define ZLT_STRS(...) ((const char *const[]){__VA_ARGS__})
#define ZLT_NSTRS(...) (sizeof(ZLT_STRS(__VA_ARGS__)) / sizeof(const char *))

/* zlink_send of one record whose parts hold strs[0..n). Checks the
 * ownership rule (every slot comes back empty and initialized) and that
 * the completion id is 0 whenever no wait token can have been issued (a
 * success, or any NONE send). */
static inline zlink_submit_result_t zlt_send_strs(void *s, int flags, const char *const *strs,
                                                  size_t n)
{
    zlink_msg_t parts[ZLT_MAXP];
    ZT_CHECK(n <= ZLT_MAXP);
    for (size_t i = 0; i < n; i++)
        zlt_msg_set(&parts[i], strs[i], strlen(strs[i]));
    zlink_completion_id_t id = 0xDEADBEEFu;
    zlink_submit_result_t r = zlink_send(s, parts, n, (zlink_send_flags_t)flags, NULL, &id);
    if (r == ZLINK_SUBMIT_OK || !(flags & ZLINK_DONTWAIT))
        ZT_EQ_U64(id, 0);
    for (size_t i = 0; i < n; i++) {
        ZT_EQ_INT(zlink_msg_size(&parts[i]), 0);
        ZT_EQ_INT(zlink_msg_close(&parts[i]), ZLINK_CONFIG_OK);
    }
    return r;
}

/* zlt_send_ok(s, "a", "b"): sends the two-part record with flags NONE. */
#define zlt_send_ok(s, ...) \
    zlt__send_ok(__FILE__, __LINE__, (s), ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))
static inline void zlt__send_ok(const char *file, int line, void *s, const char *const *strs,
                                size_t n)
{
    zlink_submit_result_t r = zlt_send_strs(s, 0, strs, n);
    if (r != ZLINK_SUBMIT_OK)
        zt__fail(file, line, "send: result %d, errno %d (%s)", (int)r, zlink_errno(),
                 zlink_strerror(zlink_errno()));
}

/* zlt_expect_strs(s, "a", "b"): zlink_recv (NONE, RCVTIMEO) of one record
 * with no routing id that is exactly these parts. */
#define zlt_expect_strs(s, ...) \
    zlt__expect_strs(__FILE__, __LINE__, (s), ZLT_STRS(__VA_ARGS__), ZLT_NSTRS(__VA_ARGS__))
static inline void zlt__expect_strs(const char *file, int line, void *s,
                                    const char *const *strs, size_t n)
{
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 9999;
    const zlink_routing_id_t *rid = (const zlink_routing_id_t *)&count; /* not NULL */
    zlink_recv_result_t r = zlink_recv(s, &rid, parts, ZLT_MAXP, &count, 0);
    if (r != ZLINK_RECV_OK)
        zt__fail(file, line, "recv: result %d, errno %d (%s)", (int)r, zlink_errno(),
                 zlink_strerror(zlink_errno()));
    if (rid != NULL)
        zt__fail(file, line, "recv: a routing id where there is none");
    if (count != n)
        zt__fail(file, line, "recv: %zu parts, expected %zu", count, n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(strs[i]);
        if (zlink_msg_size(&parts[i]) != len ||
            (len > 0 && memcmp(zlink_msg_data(&parts[i]), strs[i], len) != 0))
            zt__fail(file, line, "recv: part %zu is \"%.*s\", expected \"%s\"", i,
                     (int)zlink_msg_size(&parts[i]), (const char *)zlink_msg_data(&parts[i]),
                     strs[i]);
    }
    zlink_multipart_close(parts, count);
}

/* zlink_router_recv of a one-part DATA record (token 0) into buf; *rid_out
 * (may be NULL) gets a copy of the routing id view. */
static inline zlink_recv_result_t zlt_router_recv_str(void *r, zlink_routing_id_t *rid_out,
                                                      char *buf, size_t cap, int flags)
{
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 99;
    zlink_recv_result_t rc =
        zlink_router_recv(r, &rid, &tok, parts, ZLT_MAXP, &count, (zlink_recv_flags_t)flags);
    if (rc != ZLINK_RECV_OK)
        return rc;
    ZT_CHECK(rid != NULL);
    ZT_EQ_U64(tok, 0);
    if (rid_out != NULL)
        *rid_out = *rid;
    zlt__take_text(parts, count, buf, cap);
    return rc;
}

/* Receives (NONE) one record on a ROUTER: the one part want, from the
 * routing id spelled by rid (any id when rid is NULL). */
#define zlt_router_expect(r, rid, want) \
    zlt__router_expect(__FILE__, __LINE__, (r), (rid), (want))
static inline void zlt__router_expect(const char *file, int line, void *r, const char *rid,
                                      const char *want)
{
    char buf[256];
    zlink_routing_id_t got;
    zlink_recv_result_t rc = zlt_router_recv_str(r, &got, buf, sizeof buf, 0);
    if (rc != ZLINK_RECV_OK)
        zt__fail(file, line, "waiting for \"%s\": result %d, errno %d", want, (int)rc,
                 zlink_errno());
    if (strcmp(buf, want) != 0)
        zt__fail(file, line, "received \"%s\", expected \"%s\"", buf, want);
    if (rid != NULL && !zlt_rid_is(&got, rid))
        zt__fail(file, line, "record '%s' came from a %u-byte id, not '%s'", want, got.size,
                 rid);
}

/* Nothing is queued on a ROUTER: DONTWAIT is NO_DATA/EAGAIN. */
#define zlt_router_expect_no_data(r) zlt__router_expect_no_data(__FILE__, __LINE__, (r))
static inline void zlt__router_expect_no_data(const char *file, int line, void *r)
{
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_recv_result_t rc =
        zlink_router_recv(r, &rid, NULL, parts, ZLT_MAXP, &count, ZLINK_DONTWAIT);
    zlt__check_no_data(file, line, rc, parts, count);
}

/* The three receive calls, for cases that try each of them on a socket. */
typedef enum zlt_recv_call { ZLT_RECV, ZLT_ROUTER_RECV, ZLT_SUBSCRIBE } zlt_recv_call_t;

/* One call of the given kind on s (flags as given) into scratch outputs;
 * the result. A record received is closed. */
static inline zlink_recv_result_t zlt_recv_call(void *s, zlt_recv_call_t call, int flags)
{
    zlink_msg_t parts[ZLT_MAXP];
    size_t count = 0, tlen = 0;
    const zlink_routing_id_t *rid = NULL;
    zlink_reply_token_t tok = 0;
    char topic[256];
    zlink_recv_flags_t f = (zlink_recv_flags_t)flags;
    zlink_recv_result_t r;
    if (call == ZLT_RECV)
        r = zlink_recv(s, &rid, parts, ZLT_MAXP, &count, f);
    else if (call == ZLT_ROUTER_RECV)
        r = zlink_router_recv(s, &rid, &tok, parts, ZLT_MAXP, &count, f);
    else
        r = zlink_subscribe(s, &rid, topic, sizeof topic, &tlen, parts, ZLT_MAXP, &count, f);
    if (r == ZLINK_RECV_OK)
        zlink_multipart_close(parts, count);
    return r;
}

/* ------------------------------------------------------ a blocked call */

/* Leave the socket's timeout as it is (zlt_blocked_t.timeo). */
#define ZLT_KEEP_TIMEO (-1000)
/* zlt_blocked_t.count until a receive writes it. */
#define ZLT_COUNT_UNSET ((size_t)999)

/* One NONE call on another thread, for cases that need a call to be
 * blocked inside ZLink: a receive (cap ZLT_MAXP), or with send set a send
 * of one part of size bytes of tag. */
typedef struct zlt_blocked {
    void *sock;
    bool send;
    size_t size;
    unsigned char tag;
    int timeo;          /* SNDTIMEO/RCVTIMEO set before the thread starts */
    int result, err;    /* the call's result and zlink_errno() */
    size_t count;       /* a receive's *count (ZLT_COUNT_UNSET if unwritten) */
    int64_t elapsed_ms; /* how long the call took */
    _Atomic long tid;   /* the thread's kernel id, once it runs */
    pthread_t thread;
} zlt_blocked_t;

static inline void *zlt__blocked_main(void *arg)
{
    zlt_blocked_t *b = arg;
    zlink_msg_t parts[ZLT_MAXP];
    int64_t t0 = zt_now_ms();
    atomic_store(&b->tid, zt_gettid());
    if (b->send) {
        zlink_msg_t m;
        ZT_EQ_INT(zlink_msg_init_size(&m, b->size), ZLINK_CONFIG_OK);
        if (b->size > 0)
            memset(zlink_msg_data(&m), b->tag, b->size);
        b->result = zlink_send(b->sock, &m, 1, ZLINK_SEND_FLAGS_NONE, NULL, NULL);
        b->err = zlink_errno();
        ZT_EQ_INT(zlink_msg_size(&m), 0); /* consumed whatever the result */
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    } else {
        b->result = zlink_recv(b->sock, NULL, parts, ZLT_MAXP, &b->count, 0);
        b->err = zlink_errno();
        if (b->result == ZLINK_RECV_OK)
            zlink_multipart_close(parts, b->count);
    }
    b->elapsed_ms = zt_now_ms() - t0;
    return NULL;
}

/* Starts the call described by b on a new thread. With wait_asleep,
 * returns once the thread sleeps in the kernel (zt_wait_blocked: 1), or
 * when /proc cannot tell (0); otherwise at once (0), so the call may start
 * before or after whatever the caller does next. */
static inline int zlt_blocked_start(zlt_blocked_t *b, bool wait_asleep)
{
    b->result = -1;
    b->err = 0;
    b->count = ZLT_COUNT_UNSET;
    b->elapsed_ms = -1;
    atomic_store(&b->tid, 0);
    if (b->timeo != ZLT_KEEP_TIMEO)
        zlt_set_int(b->sock, b->send ? ZLINK_SNDTIMEO : ZLINK_RCVTIMEO, b->timeo);
    ZT_EQ_INT(pthread_create(&b->thread, NULL, zlt__blocked_main, b), 0);
    if (!wait_asleep)
        return 0;
    while (atomic_load(&b->tid) == 0)
        sched_yield();
    return zt_wait_blocked(atomic_load(&b->tid));
}

static inline void zlt_blocked_join(zlt_blocked_t *b)
{
    ZT_EQ_INT(pthread_join(b->thread, NULL), 0);
}

/* ----------------------------------------------------- ROUTER and DEALER */

/* Router r sends text to rid as soon as it has a route to it. A ROUTER
 * cannot wait for a route: MANDATORY routing says NOT_CONNECTED at once
 * until the handshake is done, so this retries that non-blocking submit
 * (bounded); any other result fails. */
static inline void zlt_router_send_when_routable(void *r, const char *rid, const char *text)
{
    int64_t end = zt_now_ms() + ZT_MS(3000);
    for (;;) {
        zlink_submit_result_t rc = zlt_send_rid_str(r, rid, text, ZLINK_DONTWAIT);
        if (rc == ZLINK_SUBMIT_OK)
            return;
        ZT_EQ_INT(rc, ZLINK_SUBMIT_NOT_CONNECTED);
        if (zt_now_ms() > end)
            ZT_FAIL("no route from the router to '%s'", rid);
        sched_yield();
    }
}

/* A DEALER (routing id drid, or the default when NULL) connected to the
 * bound router r at ep; it has sent "hello" and r has received it from
 * that id, so both directions work. */
static inline void *zlt_dealer_to(void *ctx, void *r, const char *ep, const char *drid)
{
    void *d = zlt_sock(ctx, ZLINK_DEALER);
    if (drid != NULL)
        zlt_set_rid(d, drid);
    zlt_connect(d, ep);
    ZT_EQ_INT(zlt_send_str(d, "hello", 0), ZLINK_SUBMIT_OK); /* waits for the peer */
    zlt_router_expect(r, drid, "hello");
    return d;
}

/* A ROUTER bound on tr and a DEALER "D" connected to it, both ways up. */
static inline void zlt_dr_pair(void *ctx, const char *tr, void **d_out, void **r_out)
{
    char ep[256];
    *r_out = zlt_sock(ctx, ZLINK_ROUTER);
    zlt_bind(*r_out, tr, ep, sizeof ep);
    *d_out = zlt_dealer_to(ctx, *r_out, ep, "D");
}

#endif /* ZLTEST_ZLINK_H */
