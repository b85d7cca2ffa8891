/*
 * conn_events.c — socket monitor events from the engine: turns a
 * connection's or an endpoint's life (connect, accept, handshake failure,
 * readiness, end; listen, bind failure, retry, close) into
 * zlink_monitor_event_t records for monitor.c.
 *
 * Design notes
 *  - Each function first asks zl_tran_monitor_wants (one atomic load when the
 *    socket has no monitor), so the address look-ups (getsockname /
 *    getpeername) only happen when somebody listens.
 *  - Identity: connection_id is the conn's id (c->id, assigned per
 *    physical connection; the pipe takes lane 0's id), transport_lane the
 *    conn's lane (1 only for the Completion connection of ROUTER-ROUTER;
 *    an accepted conn reports 0 until its handshake named the lane). The
 *    rid is what the peer announced; for STREAM, the 4-byte id the socket
 *    gave the pipe, from CONNECTION_READY on (STREAM PACKET mode reports
 *    connections only this way).
 *  - Classification of an end (zl_conn_event_ended): a conn whose transport
 *    never came up (CONNECTING) reports nothing (the connecter's
 *    CONNECT_DELAYED follows). One that failed in the handshake reports
 *    HANDSHAKE_FAILED_PROTOCOL (HELLO or READY code) or _NO_DETAIL (errno),
 *    then DISCONNECTED(HANDSHAKE_FAILED). An established one reports
 *    DISCONNECTED: UNKNOWN when we closed it (err 0) or refused it after
 *    the handshake, CTX_TERM when we closed it after a context shutdown,
 *    TRANSPORT_ERROR when it was lost (EOF, reset, protocol error).
 *  - Threads: the conn's / endpoint's I/O thread, except
 *    zl_engine_bind_failed (the application thread inside zl_engine_bind).
 *    Locks: none held; the socket side takes its own (transport.h).
 */
#include "engine_int.h"

#include <errno.h>
#include <string.h>

/* Copies an address into a 256-byte event field, truncated, NUL-ended. */
static void put_addr(char *dst, const char *src)
{
    size_t n = strnlen(src, 255);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Local and remote address of a conn: the real socket addresses for tcp,
 * the endpoint path for ipc (on the listening side as local, on the
 * connecting side as remote). */
static void conn_addrs(zl_conn_t *c, zlink_monitor_event_t *ev)
{
    zl_endpoint_t *ep = c->ep;
    bool listener = ep != NULL && ep->kind == ZL_EP_LISTENER;
    if (c->has_handles && !c->ipc) {
        struct sockaddr_storage ss;
        int len = sizeof ss;
        if (uv_tcp_getsockname(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0)
            zl_addr_format_tcp((struct sockaddr *)&ss, ev->local_addr, sizeof ev->local_addr);
        len = sizeof ss;
        if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss, &len) == 0)
            zl_addr_format_tcp((struct sockaddr *)&ss, ev->remote_addr, sizeof ev->remote_addr);
    }
    if (ep == NULL)
        return;
    char *side = listener ? ev->local_addr : ev->remote_addr;
    if (side[0] == '\0')
        put_addr(side, ep->name);
}

static void conn_fill(zl_conn_t *c, zlink_monitor_event_t *ev, uint32_t event, uint64_t value)
{
    memset(ev, 0, sizeof *ev);
    ev->event = event;
    ev->value = value;
    /* A STREAM peer announces no id: the socket named its pipe at attach
     * (on this thread, before any event of the attached conn). */
    const zlink_routing_id_t *rid =
        c->raw && c->pipe != NULL && c->pipe_owner ? c->sock->ops->pipe_rid(c->pipe) : &c->peer.rid;
    ev->rid.size = rid->size;
    memcpy(ev->rid.data, rid->data, rid->size);
    conn_addrs(c, ev);
    ev->connection_id = c->id;
    ev->transport_lane = c->lane;
}

void zl_conn_event(zl_conn_t *c, uint32_t event, uint64_t value)
{
    if (!zl_tran_monitor_wants(c->sock, event))
        return;
    zlink_monitor_event_t ev;
    conn_fill(c, &ev, event, value);
    zl_tran_monitor_post(c->sock, &ev);
}

void zl_conn_event_ready(zl_conn_t *c)
{
    if (!zl_tran_monitor_wants(c->sock, ZLINK_EVENT_CONNECTION_READY))
        return;
    zlink_monitor_event_t ev;
    conn_fill(c, &ev, ZLINK_EVENT_CONNECTION_READY, 0);
    ev.transport_lane = ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION; /* the logical peer */
    ev.flags = ZLINK_MONITOR_EVENT_FLAG_CONNECTION_READY_EDGE;
    c->sock->ops->monitor_post_ready(c->sock, &ev, c->pipe);
}

/* The HANDSHAKE_FAILED_PROTOCOL value of a handshake that ended with err,
 * or 0 when the failure has no protocol detail. */
static uint64_t protocol_code(const zl_conn_t *c, int err)
{
    if (err != EPROTO)
        return 0;
    switch (c->zmp_code) {
    case ZMP_ERR_HELLO:
        return ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_HELLO;
    case ZMP_ERR_MALFORMED:
        /* A broken frame where the HELLO should be is a bad HELLO. */
        return c->hello_recv ? 0 : ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_HELLO;
    case ZMP_ERR_READY:
    case ZMP_ERR_LANE:
        return ZLINK_PROTOCOL_ERROR_ZMP_MALFORMED_COMMAND_READY;
    default:
        return 0;
    }
}

void zl_conn_event_ended(zl_conn_t *c, zl_conn_state_t was)
{
    zl_tran_sock_t *s = c->sock;
    if (was == ZL_CS_CONNECTING || was == ZL_CS_FREE || was == ZL_CS_CLOSING)
        return;
    if (!zl_tran_monitor_wants(s, ZLINK_EVENT_DISCONNECTED | ZLINK_EVENT_CONNECTION_READY |
                                 ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL))
        return;
    int err = c->err;
    bool local = err == 0;
    bool term = zl_tran_terminated(s);
    zlink_monitor_event_t ev;
    uint64_t why;
    if (was == ZL_CS_HANDSHAKE || was == ZL_CS_WAIT_PARTNER) {
        if (local) {
            why = term ? ZLINK_DISCONNECT_CTX_TERM : ZLINK_DISCONNECT_UNKNOWN;
        } else {
            uint64_t code = protocol_code(c, err);
            if (code != 0)
                conn_fill(c, &ev, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, code);
            else
                conn_fill(c, &ev, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, (uint64_t)err);
            zl_tran_monitor_post(s, &ev);
            why = ZLINK_DISCONNECT_HANDSHAKE_FAILED;
        }
    } else if (local) {
        why = term ? ZLINK_DISCONNECT_CTX_TERM : ZLINK_DISCONNECT_UNKNOWN;
    } else {
        why = c->zmp_code == ZMP_ERR_REFUSED ? ZLINK_DISCONNECT_UNKNOWN
                                             : ZLINK_DISCONNECT_TRANSPORT_ERROR;
    }
    conn_fill(c, &ev, ZLINK_EVENT_DISCONNECTED, why);
    zl_tran_monitor_post(s, &ev);
    /* A ready logical peer went away (lane 0 owns the pipe): the count. */
    bool was_ready = (was == ZL_CS_ACTIVE || was == ZL_CS_LINGER) && c->pipe_owner &&
                     c->established && c->zmp_code != ZMP_ERR_REFUSED;
    if (was_ready) {
        conn_fill(c, &ev, ZLINK_EVENT_CONNECTION_READY, 0);
        ev.transport_lane = ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION;
        s->ops->monitor_post_ready(s, &ev, NULL);
    }
}

void zl_ep_event(zl_endpoint_t *ep, uint32_t event, uint64_t value)
{
    if (!zl_tran_monitor_wants(ep->sock, event))
        return;
    zlink_monitor_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.event = event;
    ev.value = value;
    char *side = ep->kind == ZL_EP_LISTENER ? ev.local_addr : ev.remote_addr;
    put_addr(side, ep->name);
    zl_tran_monitor_post(ep->sock, &ev);
}

void zl_ep_event_retry_armed(zl_endpoint_t *ep, int delay_ms)
{
    ep->retry_delay = delay_ms;
    zl_ep_event(ep, ZLINK_EVENT_CONNECT_DELAYED, (uint64_t)delay_ms);
}

void zl_engine_bind_failed(zl_tran_sock_t *s, const char *endpoint, int err)
{
    if (!zl_tran_monitor_wants(s, ZLINK_EVENT_BIND_FAILED))
        return;
    zlink_monitor_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.event = ZLINK_EVENT_BIND_FAILED;
    ev.value = (uint64_t)err;
    put_addr(ev.local_addr, endpoint);
    zl_tran_monitor_post(s, &ev);
}
