/*
 * socket_api.c — the public socket functions: lifecycle, options,
 * endpoints, and the whole-record send and receive calls.
 *
 * Every function validates its arguments first, then the handle (through
 * the close gate), then calls into socket.c and maps the errno to the
 * function's result family (errors.h). Argument > handle > target >
 * capacity > transport is the order of checks (core-contract §2).
 */
#include "protocols/protocols.h"
#include "protocols/stream.h"
#include "sock/ctx.h"
#include "sock/monitor.h"
#include "sock/socket.h"
#include "util/errors.h"

#include <stdlib.h>
#include <string.h>


ZLINK_EXPORT void *zlink_socket(void *ctx, int type)
{
    zl_ctx_t *c;
    if (zl_ctx_enter(ctx, &c) != 0) {
        zl_set_errno(EFAULT);
        return NULL;
    }
    const zl_proto_ops_t *ops = zl_protocol_for(type);
    if (ops == NULL) {
        zl_ctx_leave(c);
        zl_set_errno(EINVAL);
        return NULL;
    }
    zl_socket_t *s = zl_socket_new(c, ops);
    if (s == NULL) {
        zl_ctx_leave(c);
        return NULL;
    }
    /* The handle first: once the context lists the socket, the socket is
     * the application's. Nobody knows the handle until it is returned. */
    void *handle = NULL;
    int rc = zl_socket_publish(s, &handle);
    if (rc == 0) {
        rc = zl_ctx_add_socket(c, s);
        if (rc != 0)
            zl_socket_unpublish(s);
    }
    zl_ctx_leave(c);
    if (rc != 0) {
        zl_socket_free(s);
        zl_set_errno(rc);
        return NULL;
    }
    return handle;
}

ZLINK_EXPORT zlink_close_result_t zlink_close(void *socket)
{
    void *obj;
    zl_hslot_t *slot;
    int rc = zl_handle_close(socket, ZL_HANDLE_SOCKET, &obj, &slot);
    if (rc != 0)
        /* EBUSY: another call is inside. A socket already closed, or whose
         * close another thread is running: ESTALE. Not a socket: EFAULT. */
        return zl_close_fail(rc == EBUSY || rc == EFAULT ? rc : ESTALE);
    zl_socket_t *s = obj;
    zl_socket_mark_closed(s);       /* pollers of a pinned socket look here */
    zl_monitor_socket_closed(s);    /* DISCONNECTED per peer, MONITOR_STOPPED */
    zl_socket_teardown(s);
    zl_ctx_t *c = zl_socket_ctx(s);
    /* The handle is stale from here on; the memory stays for the context
     * (and the pins) to free, so s is not touched after the next call. */
    zl_handle_release(slot);
    zl_ctx_socket_closed(c);
    return ZLINK_CLOSE_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_setsockopt(void *socket, int option, const void *value,
                                                    size_t size)
{
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_config_fail(rc);
    if (zl_socket_terminated(s)) {
        zl_socket_leave(s);
        return zl_config_fail(ETERM);
    }
    rc = zl_socket_setopt(s, option, value, size);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_getsockopt(void *socket, int option, void *value,
                                                    size_t *size)
{
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_config_fail(rc);
    if (zl_socket_terminated(s)) {
        zl_socket_leave(s);
        return zl_config_fail(ETERM);
    }
    rc = zl_socket_getopt(s, option, value, size);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_set_routing_id(void *socket, const void *id, size_t size)
{
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_config_fail(rc == EFAULT ? ENOTSUP : rc);
    if (zl_socket_type(s) == ZLINK_STREAM || id == NULL || size == 0 || size > 255) {
        zl_socket_leave(s);
        return zl_config_fail(EINVAL);
    }
    zl_socket_set_rid(s, id, size);
    zl_socket_leave(s);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_bind_result_t zlink_bind(void *socket, const char *endpoint)
{
    if (endpoint == NULL)
        return zl_bind_fail(EINVAL);
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_bind_fail(rc);
    rc = zl_socket_bind(s, endpoint);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_BIND_OK : zl_bind_fail(rc);
}

typedef int (*endpoint_fn)(zl_socket_t *, const char *);

static zlink_connect_result_t endpoint_call(void *socket, const char *endpoint, endpoint_fn fn)
{
    if (endpoint == NULL)
        return zl_connect_fail(EINVAL);
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_connect_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    rc = fn(s, endpoint);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_CONNECT_OK : zl_connect_fail(rc);
}

ZLINK_EXPORT zlink_connect_result_t zlink_connect(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, zl_socket_connect);
}

ZLINK_EXPORT zlink_connect_result_t zlink_unbind(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, zl_socket_unbind);
}

ZLINK_EXPORT zlink_connect_result_t zlink_disconnect(void *socket, const char *endpoint)
{
    return endpoint_call(socket, endpoint, zl_socket_disconnect);
}

ZLINK_EXPORT zlink_connect_result_t zlink_disconnect_rid(void *socket,
                                                         const zlink_routing_id_t *rid)
{
    if (rid == NULL || rid->size == 0)
        return zl_connect_fail(EINVAL);
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_connect_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    int type = zl_socket_type(s);
    if (type != ZLINK_ROUTER && type != ZLINK_STREAM)
        rc = ENOTSUP;
    else if (type == ZLINK_STREAM && rid->size != 4)
        rc = EINVAL;
    else
        rc = zl_socket_disconnect_rid(s, rid);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_CONNECT_OK : zl_connect_fail(rc);
}

/* ---------------------------------------------------------------- send */

/* An early failure still consumes every part (ownership rule of sends). */
static zlink_submit_result_t submit_fail(zlink_msg_t *parts, size_t n, int e)
{
    zl_multipart_release_init(parts, n);
    return zl_submit_fail(e);
}

static bool send_type_ok(int api, int type)
{
    switch (api) {
    case 0: return type == ZLINK_PAIR || type == ZLINK_DEALER;          /* zlink_send */
    case 1: return type == ZLINK_ROUTER || type == ZLINK_STREAM;        /* zlink_send_rid */
    default: return type == ZLINK_PUB || type == ZLINK_XPUB;            /* zlink_publish */
    }
}

static zlink_submit_result_t send_common(int api, void *socket, const zlink_routing_id_t *rid,
                                         const char *topic, zlink_msg_t *parts, size_t n,
                                         int flags, void *user_context,
                                         zlink_completion_id_t *id_out)
{
    if (id_out != NULL)
        *id_out = 0;
    if (parts == NULL)
        return zl_submit_fail(EINVAL);
    if (n == 0 || (flags & ~ZLINK_DONTWAIT) != 0)
        return submit_fail(parts, n, EINVAL);
    if (api == 1 && (rid == NULL || rid->size == 0))
        return submit_fail(parts, n, EINVAL);
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return submit_fail(parts, n, rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    int type = zl_socket_type(s);
    if (!send_type_ok(api, type)) {
        zl_socket_leave(s);
        return submit_fail(parts, n, ENOTSUP);
    }
    if (type == ZLINK_STREAM && (n != 1 || rid->size != 4)) {
        zl_socket_leave(s);
        return submit_fail(parts, n, EINVAL);
    }
    if (api == 2)
        rc = zl_socket_submit_topic(s, topic, parts, n, flags);
    else
        rc = zl_socket_submit(s, rid, parts, n, flags, user_context, id_out);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_SUBMIT_OK : zl_submit_fail(rc);
}

ZLINK_EXPORT zlink_submit_result_t zlink_send(void *socket, zlink_msg_t *parts, size_t n,
                                              zlink_send_flags_t flags, void *user_context,
                                              zlink_completion_id_t *completion_id_out)
{
    return send_common(0, socket, NULL, NULL, parts, n, (int)flags, user_context,
                       completion_id_out);
}

ZLINK_EXPORT zlink_submit_result_t zlink_send_rid(void *socket, const zlink_routing_id_t *rid,
                                                  zlink_msg_t *parts, size_t n,
                                                  zlink_send_flags_t flags, void *user_context,
                                                  zlink_completion_id_t *completion_id_out)
{
    return send_common(1, socket, rid, NULL, parts, n, (int)flags, user_context,
                       completion_id_out);
}

ZLINK_EXPORT zlink_submit_result_t zlink_publish(void *socket, const char *topic,
                                                 zlink_msg_t *parts, size_t n,
                                                 zlink_send_flags_t flags)
{
    return send_common(2, socket, NULL, topic, parts, n, (int)flags, NULL, NULL);
}

/* SUB and XSUB receive and subscribe. */
static bool is_sub(const zl_socket_t *s)
{
    int type = zl_socket_type(s);
    return type == ZLINK_SUB || type == ZLINK_XSUB;
}

/* ------------------------------------------------------------- receive */

static zlink_recv_result_t recv_enter(void *socket, int flags, zl_socket_t **out)
{
    if ((flags & ~ZLINK_DONTWAIT) != 0)
        return zl_recv_fail(EINVAL);
    int rc = zl_socket_enter(socket, out);
    if (rc != 0)
        return zl_recv_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    return ZLINK_RECV_OK;
}

static zlink_recv_result_t recv_result(int rc)
{
    return rc == 0 ? ZLINK_RECV_OK : zl_recv_fail(rc);
}

ZLINK_EXPORT zlink_recv_result_t zlink_recv(void *socket, const zlink_routing_id_t **rid_opt,
                                            zlink_msg_t *parts, size_t cap, size_t *count,
                                            zlink_recv_flags_t flags)
{
    if (parts == NULL || count == NULL)
        return zl_recv_fail(EFAULT);
    zl_socket_t *s = NULL;
    zlink_recv_result_t r = recv_enter(socket, (int)flags, &s);
    if (r != ZLINK_RECV_OK)
        return r;
    int type = zl_socket_type(s);
    if ((type != ZLINK_PAIR && type != ZLINK_DEALER && type != ZLINK_STREAM) ||
        (type == ZLINK_STREAM && zl_stream_recv_mode(s) == ZLINK_STREAM_RECV_PACKET)) {
        zl_socket_leave(s); /* a PACKET STREAM has its own receive */
        return zl_recv_fail(ENOTSUP);
    }
    const zlink_routing_id_t *rid = NULL;
    int rc = zl_socket_receive(s, NULL, parts, cap, count, (int)flags, &rid);
    if (rc == 0 && rid_opt != NULL)
        *rid_opt = type == ZLINK_STREAM ? rid : NULL;
    zl_socket_leave(s);
    return recv_result(rc);
}

ZLINK_EXPORT zlink_recv_result_t zlink_router_recv(void *socket, const zlink_routing_id_t **rid,
                                                   zlink_reply_token_t *token, zlink_msg_t *parts,
                                                   size_t cap, size_t *count,
                                                   zlink_recv_flags_t flags)
{
    if (parts == NULL || count == NULL || rid == NULL)
        return zl_recv_fail(EFAULT);
    zl_socket_t *s = NULL;
    zlink_recv_result_t r = recv_enter(socket, (int)flags, &s);
    if (r != ZLINK_RECV_OK)
        return r;
    if (zl_socket_type(s) != ZLINK_ROUTER) {
        zl_socket_leave(s);
        return zl_recv_fail(ENOTSUP);
    }
    const zlink_routing_id_t *view = NULL;
    int rc = zl_socket_receive(s, NULL, parts, cap, count, (int)flags, &view);
    if (rc == 0) {
        *rid = view;
        if (token != NULL)
            *token = zl_socket_recv_token(s); /* 0 for DATA */
    }
    zl_socket_leave(s);
    return recv_result(rc);
}

/* Whether two message slots share any byte. */
static bool msgs_overlap(const zlink_msg_t *a, const zlink_msg_t *b)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + sizeof *b && y < x + sizeof *a;
}

ZLINK_EXPORT zlink_recv_result_t zlink_stream_recv_packet(void *socket,
                                                          const zlink_routing_id_t **rid,
                                                          zlink_msg_t *hdr, zlink_msg_t *body,
                                                          zlink_recv_flags_t flags)
{
    if (rid == NULL || hdr == NULL || body == NULL)
        return zl_recv_fail(EFAULT);
    /* The outputs must be initialized, empty and distinct (nothing is
     * dequeued otherwise). */
    if (msgs_overlap(hdr, body) || !zl_msg_valid(hdr) || !zl_msg_valid(body) ||
        zl_msg_size(hdr) != 0 || zl_msg_size(body) != 0)
        return zl_recv_fail(EINVAL);
    zl_socket_t *s = NULL;
    zlink_recv_result_t r = recv_enter(socket, (int)flags, &s);
    if (r != ZLINK_RECV_OK)
        return r;
    if (zl_socket_type(s) != ZLINK_STREAM || zl_stream_recv_mode(s) != ZLINK_STREAM_RECV_PACKET) {
        zl_socket_leave(s); /* RAW (or unset) STREAM: zlink_recv */
        return zl_recv_fail(ENOTSUP);
    }
    int rc = zl_stream_recv_packet(s, hdr, body, (int)flags, rid);
    zl_socket_leave(s);
    return recv_result(rc);
}

ZLINK_EXPORT zlink_recv_result_t zlink_subscribe(void *socket, const zlink_routing_id_t **rid,
                                                 char *topic, size_t tcap, size_t *tlen,
                                                 zlink_msg_t *parts, size_t cap, size_t *count,
                                                 zlink_recv_flags_t flags)
{
    if (count == NULL || tlen == NULL || (parts == NULL && cap > 0) ||
        (topic == NULL && tcap > 0))
        return zl_recv_fail(EFAULT);
    zl_socket_t *s = NULL;
    zlink_recv_result_t r = recv_enter(socket, (int)flags, &s);
    if (r != ZLINK_RECV_OK)
        return r;
    if (!is_sub(s)) {
        zl_socket_leave(s);
        return zl_recv_fail(ENOTSUP);
    }
    zlink_msg_t first;
    int rc = zl_socket_receive(s, &first, parts, cap, count, (int)flags, NULL);
    if (rc == 0) {
        size_t len = zl_msg_size(&first);
        if (len > tcap) {
            /* Too short for the topic: hand the record back untouched. */
            rc = zl_socket_stash(s, &first, parts, *count);
            if (rc == 0) {
                *tlen = len;
                rc = ENOBUFS;
            } else {
                /* Cannot happen (zl_socket_stash): the record is ours to
                 * release; the failure changes no output. */
                zl_msg_release(&first);
                zl_multipart_release(parts, *count);
            }
        } else {
            if (len > 0)
                memcpy(topic, zl_msg_data(&first), len);
            *tlen = len;
            zl_msg_release(&first);
            if (rid != NULL)
                *rid = NULL;
        }
    }
    zl_socket_leave(s);
    return recv_result(rc);
}

/* ------------------------------------------------------- subscriptions */


static zlink_config_result_t subscription_call(void *socket, const char *topic, bool add)
{
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_config_fail(rc);
    if (topic == NULL || !is_sub(s)) {
        zl_socket_leave(s);
        return zl_config_fail(EINVAL);
    }
    rc = zl_sub_subscription(s, topic, add);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_set_subscription(void *socket, const char *topic)
{
    return subscription_call(socket, topic, true);
}

ZLINK_EXPORT zlink_config_result_t zlink_unset_subscription(void *socket, const char *topic)
{
    return subscription_call(socket, topic, false);
}

ZLINK_EXPORT zlink_config_result_t zlink_subscription_at(void *socket, size_t index, char *buf,
                                                         size_t *len, int *pattern)
{
    if (len == NULL || (buf == NULL && *len > 0))
        return zl_config_fail(EFAULT);
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_config_fail(rc);
    if (!is_sub(s))
        rc = ENOTSUP;
    else
        rc = zl_sub_subscription_at(s, index, buf, len);
    zl_socket_leave(s);
    if (rc == 0 && pattern != NULL)
        *pattern = 0;
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

/* ------------------------------------------------------------- routes */

int zl_socket_routes_snapshot(zl_socket_t *s, zlink_routing_id_t *rids, uint64_t *gens,
                              size_t cap, size_t *count);

ZLINK_EXPORT zlink_config_result_t zlink_router_routes_snapshot(void *router,
                                                                zlink_router_route_t *rows,
                                                                size_t cap, size_t *count)
{
    if (count == NULL || (rows == NULL && cap > 0))
        return zl_config_fail(EFAULT);
    zl_socket_t *s;
    int rc = zl_socket_enter(router, &s);
    if (rc != 0)
        return zl_config_fail(rc);
    if (zl_socket_type(s) != ZLINK_ROUTER) {
        zl_socket_leave(s);
        return zl_config_fail(ENOTSUP);
    }
    zlink_routing_id_t *rids = cap ? malloc(cap * sizeof *rids) : NULL;
    uint64_t *gens = cap ? malloc(cap * sizeof *gens) : NULL;
    if (cap > 0 && (rids == NULL || gens == NULL)) {
        free(rids);
        free(gens);
        zl_socket_leave(s);
        return zl_config_fail(ENOMEM);
    }
    rc = zl_socket_routes_snapshot(s, rids, gens, cap, count);
    if (rc == 0) {
        for (size_t i = 0; i < *count; i++) {
            rows[i].rid = rids[i];
            rows[i].route_generation = gens[i];
        }
    }
    free(rids);
    free(gens);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT uint64_t zlink_router_recv_route_generation(void *router)
{
    zl_socket_t *s;
    if (zl_socket_enter(router, &s) != 0) {
        zl_set_errno(EFAULT);
        return 0;
    }
    uint64_t gen = 0;
    if (zl_socket_type(s) == ZLINK_ROUTER) {
        gen = zl_socket_recv_route(s);
    }
    zl_socket_leave(s);
    return gen;
}

/* -------------------------------------------------------- receive flow */

ZLINK_EXPORT zlink_config_result_t
zlink_socket_set_receive_flow_state(void *socket, zlink_receive_flow_state_t state)
{
    /* Argument before handle (contract §2 precedence). */
    if ((int)state != ZLINK_RECEIVE_FLOW_RUNNING && (int)state != ZLINK_RECEIVE_FLOW_PAUSED)
        return zl_config_fail(EINVAL);
    void *obj;
    zl_hslot_t *slot;
    int rc = zl_handle_enter(socket, ZL_HANDLE_SOCKET, &obj, &slot);
    if (rc != 0)
        /* a close running -> ESHUTDOWN (INVALID_STATE); teardown finished
         * (ESTALE), NULL or foreign -> EFAULT (INVALID_HANDLE) */
        return zl_config_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    zl_socket_t *s = obj;
    int type = zl_socket_type(s);
    if (type != ZLINK_DEALER && type != ZLINK_ROUTER)
        rc = ENOTSUP;
    else if (zl_socket_terminated(s))
        rc = ETERM;
    else
        rc = zl_flow_set(s, (int)state);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}
