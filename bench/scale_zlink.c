/*
 * scale_zlink.c — the ZLink half of //bench:scale (scale_libs.h): one
 * context with one I/O thread per process, LINGER 0, whole-record sends
 * (zlink_send / zlink_send_rid of a fresh message with the bytes copied in)
 * and zlink_router_recv.
 */
#include "scale_libs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rr_common.h"
#include "zlink.h"

/* A socket of this half. A DONTWAIT send that is refused leaves a wait
 * token behind, and its WRITABLE record follows in the socket's completion
 * queue once the DEALER can take a record again. Until then the DEALER is
 * skipped without a send (waiting). Draining those records matters: each
 * refusal holds one of the socket's 65,536 completion slots until its
 * record is taken, and a send refused with every slot taken fails
 * OUT_OF_MEMORY (core-contract §4). */
typedef struct zl_sock {
    void *s;
    int waiting;
} zl_sock_t;

static void *zl_wrap(void *s)
{
    zl_sock_t *w = calloc(1, sizeof *w);
    if (w == NULL) {
        rr_error("zlink: out of memory");
        zlink_close(s);
        return NULL;
    }
    w->s = s;
    return w;
}

static void *zl_ctx_new(void)
{
    void *ctx = zlink_ctx_new();
    if (ctx == NULL || zlink_ctx_set(ctx, ZLINK_IO_THREADS, 1) != 0 ||
        zlink_ctx_set(ctx, ZLINK_MAX_SOCKETS, SC_MAX_PER_PROC + 8) != 0) {
        rr_error("zlink context: errno %d", zlink_errno());
        if (ctx != NULL)
            zlink_ctx_term(ctx);
        return NULL;
    }
    return ctx;
}

static void zl_ctx_term(void *ctx) { zlink_ctx_term(ctx); }

static int zl_set_int(void *s, int opt, int v)
{
    return zlink_setsockopt(s, opt, &v, sizeof v) == 0 ? 0 : -1;
}

/* Both HWMs for qrecs records of size bytes (scale_libs.h); 0 keeps the
 * defaults. */
static int zl_set_hwm(void *s, long qrecs, long size)
{
    if (qrecs <= 0)
        return 0;
    uint64_t b = (uint64_t)qrecs * ((uint64_t)size + 64);
    return zlink_setsockopt(s, ZLINK_SNDHWM, &b, sizeof b) == 0 &&
                   zlink_setsockopt(s, ZLINK_RCVHWM, &b, sizeof b) == 0
               ? 0
               : -1;
}

static void *zl_router(void *ctx, int *port, long qrecs, long size)
{
    void *r = zlink_socket(ctx, ZLINK_ROUTER);
    char ep[256];
    size_t len = sizeof ep;
    if (r == NULL || zl_set_int(r, ZLINK_LINGER, 0) != 0 || zl_set_int(r, ZLINK_RCVTIMEO, 100) ||
        zl_set_hwm(r, qrecs, size) != 0 || zl_set_int(r, ZLINK_BACKLOG, SC_BACKLOG) != 0 ||
        zlink_bind(r, "tcp://127.0.0.1:0") != 0 ||
        zlink_getsockopt(r, ZLINK_LAST_ENDPOINT, ep, &len) != 0 || strrchr(ep, ':') == NULL) {
        rr_error("zlink ROUTER: errno %d", zlink_errno());
        if (r != NULL)
            zlink_close(r);
        return NULL;
    }
    *port = atoi(strrchr(ep, ':') + 1);
    return zl_wrap(r);
}

static void *zl_dealer(void *ctx, const char *rid, int port, long qrecs, long size)
{
    void *d = zlink_socket(ctx, ZLINK_DEALER);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    if (d == NULL || zlink_set_routing_id(d, rid, strlen(rid)) != 0 ||
        zl_set_int(d, ZLINK_LINGER, 0) != 0 || zl_set_int(d, ZLINK_SNDTIMEO, 20000) != 0 ||
        zl_set_hwm(d, qrecs, size) != 0 || zlink_connect(d, ep) != 0) {
        rr_error("zlink DEALER %s: errno %d", rid, zlink_errno());
        if (d != NULL)
            zlink_close(d);
        return NULL;
    }
    return zl_wrap(d);
}

/* While w waits for its WRITABLE record: takes it if it came. 0 when w may
 * send again, 1 still waiting, -1 error. */
static int zl_writable(zl_sock_t *w)
{
    zlink_completion_t c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    zlink_recv_result_t rc = zlink_completion_recv(w->s, &c, ZLINK_RECV_FLAGS_DONTWAIT);
    if (rc == ZLINK_RECV_NO_DATA)
        return 1;
    if (rc != ZLINK_RECV_OK) {
        rr_error("zlink_completion_recv: %s", zlink_result_name((int)rc));
        return -1;
    }
    int ok = c.kind == ZLINK_COMPLETION_WRITABLE && c.send_result == ZLINK_SEND_ADMITTED;
    zlink_completion_close(&c);
    if (!ok) {
        rr_error("zlink: a completion record other than WRITABLE ADMITTED");
        return -1;
    }
    w->waiting = 0;
    return 0;
}

static int zl_send(void *d, const void *buf, size_t n, int dontwait)
{
    zl_sock_t *w = d;
    if (w->waiting) {
        int rc = zl_writable(w);
        if (rc != 0)
            return rc;
    }
    zlink_msg_t m;
    if (zlink_msg_init_size(&m, n) != 0) {
        rr_error("zlink_msg_init_size: errno %d", zlink_errno());
        return -1;
    }
    memcpy(zlink_msg_data(&m), buf, n);
    zlink_completion_id_t token = 0;
    zlink_submit_result_t rc = zlink_send(
        w->s, &m, 1, dontwait ? ZLINK_DONTWAIT : ZLINK_SEND_FLAGS_NONE, NULL, &token);
    zlink_msg_close(&m);
    if (rc == ZLINK_SUBMIT_OK)
        return 0;
    if (rc == ZLINK_SUBMIT_BACKPRESSURED && dontwait) {
        w->waiting = token != 0;
        return 1;
    }
    rr_error("zlink_send: %s", zlink_result_name((int)rc));
    return -1;
}

static int zl_router_recv(void *r, char *rid, void *buf, size_t cap, size_t *n)
{
    const zlink_routing_id_t *from = NULL;
    zlink_reply_token_t token = 0;
    zlink_msg_t parts[4];
    size_t count = 0;
    zlink_recv_result_t rc =
        zlink_router_recv(((zl_sock_t *)r)->s, &from, &token, parts, 4, &count, 0);
    if (rc == ZLINK_RECV_NO_DATA)
        return 0;
    if (rc != ZLINK_RECV_OK) {
        rr_error("zlink_router_recv: %s", zlink_result_name((int)rc));
        return -1;
    }
    size_t k = from->size < SC_RID_CAP - 1 ? from->size : SC_RID_CAP - 1;
    memcpy(rid, from->data, k);
    rid[k] = '\0';
    *n = count == 1 ? zlink_msg_size(&parts[0]) : 0;
    if (count == 1)
        memcpy(buf, zlink_msg_data(&parts[0]), *n < cap ? *n : cap);
    zlink_multipart_close(parts, count);
    return 1;
}

static int zl_router_send(void *r, const char *rid, const void *buf, size_t n)
{
    zlink_routing_id_t to;
    to.size = (uint8_t)strlen(rid);
    memcpy(to.data, rid, to.size);
    zlink_msg_t m;
    if (zlink_msg_init_size(&m, n) != 0) {
        rr_error("zlink_msg_init_size: errno %d", zlink_errno());
        return -1;
    }
    memcpy(zlink_msg_data(&m), buf, n);
    zlink_submit_result_t rc =
        zlink_send_rid(((zl_sock_t *)r)->s, &to, &m, 1, ZLINK_DONTWAIT, NULL, NULL);
    zlink_msg_close(&m);
    if (rc == ZLINK_SUBMIT_OK)
        return 0;
    if (rc == ZLINK_SUBMIT_BACKPRESSURED)
        return 1;
    rr_error("zlink_send_rid(%s): %s", rid, zlink_result_name((int)rc));
    return -1;
}

static void zl_close(void *s)
{
    zl_sock_t *w = s;
    zlink_close(w->s);
    free(w);
}

static void zl_version(char *buf, size_t cap)
{
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch);
    snprintf(buf, cap, "%d.%d.%d", major, minor, patch);
}

const sc_lib_t sc_lib_zlink = {
    .name = "zlink",
    .version = zl_version,
    .ctx_new = zl_ctx_new,
    .ctx_term = zl_ctx_term,
    .router = zl_router,
    .dealer = zl_dealer,
    .send = zl_send,
    .router_recv = zl_router_recv,
    .router_send = zl_router_send,
    .close = zl_close,
};
