/*
 * scale_zmq.c — the libzmq half of //bench:scale (scale_libs.h): one
 * context with one I/O thread per process, LINGER 0, ROUTER_MANDATORY 1,
 * a routing-id frame and a payload frame per ROUTER record.
 */
#include "scale_libs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "rr_common.h"

static void *zm_ctx_new(void)
{
    void *ctx = zmq_ctx_new();
    if (ctx == NULL || zmq_ctx_set(ctx, ZMQ_IO_THREADS, 1) != 0 ||
        zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, SC_MAX_PER_PROC + 8) != 0) {
        rr_error("zmq context: %s", zmq_strerror(errno));
        if (ctx != NULL)
            zmq_ctx_term(ctx);
        return NULL;
    }
    return ctx;
}

static void zm_ctx_term(void *ctx) { zmq_ctx_term(ctx); }

static int zm_set_int(void *s, int opt, int v) { return zmq_setsockopt(s, opt, &v, sizeof v); }

/* Both HWMs for qrecs messages (scale_libs.h); 0 keeps the defaults. */
static int zm_set_hwm(void *s, long qrecs)
{
    if (qrecs <= 0)
        return 0;
    return zm_set_int(s, ZMQ_SNDHWM, (int)qrecs) == 0 && zm_set_int(s, ZMQ_RCVHWM, (int)qrecs) == 0
               ? 0
               : -1;
}

static void *zm_router(void *ctx, int *port, long qrecs, long size)
{
    (void)size; /* libzmq counts messages */
    void *r = zmq_socket(ctx, ZMQ_ROUTER);
    char ep[256];
    size_t len = sizeof ep;
    if (r == NULL || zm_set_int(r, ZMQ_LINGER, 0) != 0 || zm_set_int(r, ZMQ_RCVTIMEO, 100) ||
        zm_set_hwm(r, qrecs) != 0 || zm_set_int(r, ZMQ_BACKLOG, SC_BACKLOG) != 0 ||
        zm_set_int(r, ZMQ_ROUTER_MANDATORY, 1) != 0 || zmq_bind(r, "tcp://127.0.0.1:*") != 0 ||
        zmq_getsockopt(r, ZMQ_LAST_ENDPOINT, ep, &len) != 0 || strrchr(ep, ':') == NULL) {
        rr_error("zmq ROUTER: %s", zmq_strerror(errno));
        if (r != NULL)
            zmq_close(r);
        return NULL;
    }
    *port = atoi(strrchr(ep, ':') + 1);
    return r;
}

static void *zm_dealer(void *ctx, const char *rid, int port, long qrecs, long size)
{
    (void)size;
    void *d = zmq_socket(ctx, ZMQ_DEALER);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    if (d == NULL || zmq_setsockopt(d, ZMQ_ROUTING_ID, rid, strlen(rid)) != 0 ||
        zm_set_int(d, ZMQ_LINGER, 0) != 0 || zm_set_int(d, ZMQ_SNDTIMEO, 20000) != 0 ||
        zm_set_hwm(d, qrecs) != 0 || zmq_connect(d, ep) != 0) {
        rr_error("zmq DEALER %s: %s", rid, zmq_strerror(errno));
        if (d != NULL)
            zmq_close(d);
        return NULL;
    }
    return d;
}

static int zm_send(void *d, const void *buf, size_t n, int dontwait)
{
    if (zmq_send(d, buf, n, dontwait ? ZMQ_DONTWAIT : 0) >= 0)
        return 0;
    if (errno == EAGAIN && dontwait)
        return 1;
    rr_error("zmq_send: %s", zmq_strerror(errno));
    return -1;
}

static int zm_router_recv(void *r, char *rid, void *buf, size_t cap, size_t *n)
{
    int k = zmq_recv(r, rid, SC_RID_CAP - 1, 0);
    if (k < 0) {
        if (errno == EAGAIN)
            return 0;
        rr_error("zmq_recv(routing id): %s", zmq_strerror(errno));
        return -1;
    }
    rid[k < SC_RID_CAP - 1 ? k : SC_RID_CAP - 1] = '\0';
    int more = 0;
    size_t ml = sizeof more;
    zmq_getsockopt(r, ZMQ_RCVMORE, &more, &ml);
    if (!more) {
        *n = 0;
        return 1;
    }
    int got = zmq_recv(r, buf, cap, 0);
    if (got < 0) {
        rr_error("zmq_recv(payload): %s", zmq_strerror(errno));
        return -1;
    }
    *n = (size_t)got;
    return 1;
}

static int zm_router_send(void *r, const char *rid, const void *buf, size_t n)
{
    if (zmq_send(r, rid, strlen(rid), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        if (errno == EAGAIN)
            return 1;
        rr_error("zmq_send(routing id %s): %s", rid, zmq_strerror(errno));
        return -1;
    }
    if (zmq_send(r, buf, n, ZMQ_DONTWAIT) < 0) {
        rr_error("zmq_send(payload): %s", zmq_strerror(errno));
        return -1;
    }
    return 0;
}

static void zm_close(void *s) { zmq_close(s); }

static void zm_version(char *buf, size_t cap)
{
    int major = 0, minor = 0, patch = 0;
    zmq_version(&major, &minor, &patch);
    snprintf(buf, cap, "%d.%d.%d", major, minor, patch);
}

const sc_lib_t sc_lib_zmq = {
    .name = "libzmq",
    .version = zm_version,
    .ctx_new = zm_ctx_new,
    .ctx_term = zm_ctx_term,
    .router = zm_router,
    .dealer = zm_dealer,
    .send = zm_send,
    .router_recv = zm_router_recv,
    .router_send = zm_router_send,
    .close = zm_close,
};
