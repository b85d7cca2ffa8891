/*
 * connecter.c — connected endpoints: connect, reconnect with backoff, and
 * the second (Completion) lane of a ROUTER-ROUTER connection.
 *
 * Design notes
 *  - zl_engine_connect runs on an application thread: it parses the
 *    address and registers the connecter on its I/O thread (zl_io_call); it
 *    never waits for the peer. Everything after that happens on the I/O
 *    thread.
 *  - At most one logical connection at a time: ep->lane0 (and, for
 *    ROUTER-ROUTER, ep->lane1). When both are gone and the endpoint is not
 *    closing, a retry is scheduled after cur_ivl ms: RECONNECT_IVL, doubled
 *    after each failed attempt up to RECONNECT_IVL_MAX when that is larger,
 *    and back to RECONNECT_IVL once a connection reached its pipe.
 *    RECONNECT_IVL -1: no reconnect at all (the first attempt only).
 *  - Host names are resolved with uv_getaddrinfo before each attempt that
 *    follows a failure, so a changed address is picked up.
 *  - Owns: a retry timer and a getaddrinfo request. Locks: none.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void connecter_attempt(zl_endpoint_t *ep);
static void connecter_schedule(zl_endpoint_t *ep);

static void connecter_on_connect(uv_connect_t *req, int status)
{
    zl_conn_t *c = req->handle->data;
    if (c->state != ZL_CS_CONNECTING)
        return; /* closed meanwhile (status is UV_ECANCELED) */
    if (status < 0) {
        zl_conn_terminate(c, -status);
        return;
    }
    zl_conn_event(c, ZLINK_EVENT_CONNECTED, 0);
    zl_conn_start(c);
}

/* A new outgoing connection for lane (0 or 1) of ep, paired with partner
 * (lane 1 only). Returns NULL when it failed at once; it then already
 * went through zl_connecter_conn_gone. Loop thread. */
static zl_conn_t *connecter_open(zl_endpoint_t *ep, uint8_t lane, zl_conn_t *partner)
{
    zl_conn_t *c = zl_conn_new(ep->io, ep, true, lane);
    if (c == NULL) {
        if (lane == 0)
            connecter_schedule(ep); /* out of memory: try again later */
        return NULL;
    }
    if (lane == 0)
        ep->lane0 = c;
    else
        ep->lane1 = c;
    if (partner != NULL) {
        c->partner = partner;
        partner->partner = c;
    }
    bool ipc = ep->addr.transport == ZL_TR_IPC;
    if (zl_conn_init_handles(c, ipc) != 0)
        return NULL;
    if (ipc) {
        uv_pipe_connect(&c->creq, &c->h.pipe, ep->addr.path, connecter_on_connect);
    } else {
        const struct sockaddr *sa = ep->addr.numeric ? (const struct sockaddr *)&ep->addr.sa
                                                     : (const struct sockaddr *)&ep->sa;
        /* BINDTODEVICE and TOS go on the fd before the SYN. */
        int rc = -zl_tcp_open_early(&c->h.tcp, sa->sa_family, &c->opts);
        if (rc == 0)
            rc = uv_tcp_connect(&c->creq, &c->h.tcp, sa, connecter_on_connect);
        if (rc != 0) {
            zl_conn_terminate(c, -rc);
            return NULL;
        }
    }
    if (c->opts.connect_timeout > 0)
        zl_conn_timer(c, ZL_TIMER_CONNECT, (uint64_t)c->opts.connect_timeout);
    return c;
}

static void connecter_on_retry(uv_timer_t *t)
{
    zl_endpoint_t *ep = t->data;
    ep->retry_armed = false;
    zl_ep_event(ep, ZLINK_EVENT_CONNECT_RETRIED, (uint64_t)ep->retry_delay);
    connecter_attempt(ep);
}

/* Arms the retry timer unless reconnecting is off. Loop thread. */
static void connecter_schedule(zl_endpoint_t *ep)
{
    if (ep->closing || ep->retry_armed)
        return;
    /* Pick up RECONNECT_IVL / _MAX changes made since connect. */
    zl_tran_opts_t o;
    zl_tran_get_opts(ep->sock, &o);
    ep->opts.reconnect_ivl = o.reconnect_ivl;
    ep->opts.reconnect_ivl_max = o.reconnect_ivl_max;
    if (o.reconnect_ivl < 0)
        return;
    int delay = ep->cur_ivl > 0 ? ep->cur_ivl : (o.reconnect_ivl > 0 ? o.reconnect_ivl : 1);
    if (o.reconnect_ivl_max > o.reconnect_ivl) {
        int64_t next = (int64_t)delay * 2;
        ep->cur_ivl = next > o.reconnect_ivl_max ? o.reconnect_ivl_max : (int)next;
    } else {
        ep->cur_ivl = o.reconnect_ivl;
    }
    ep->have_sa = false; /* resolve names again */
    ep->retry_armed = true;
    uv_timer_start(&ep->retry, connecter_on_retry, (uint64_t)delay, 0);
    zl_ep_event_retry_armed(ep, delay); /* monitor: CONNECT_DELAYED */
}

static void connecter_on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    zl_endpoint_t *ep = req->data;
    ep->gai_pending = false;
    bool found = false;
    if (status == 0) {
        for (struct addrinfo *ai = res; ai != NULL && !found; ai = ai->ai_next) {
            if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) {
                memset(&ep->sa, 0, sizeof ep->sa);
                memcpy(&ep->sa, ai->ai_addr, ai->ai_addrlen);
                if (ai->ai_family == AF_INET)
                    ((struct sockaddr_in *)&ep->sa)->sin_port = htons(ep->addr.port);
                else
                    ((struct sockaddr_in6 *)&ep->sa)->sin6_port = htons(ep->addr.port);
                found = true;
            }
        }
    }
    if (res != NULL)
        uv_freeaddrinfo(res);
    if (ep->closing) {
        zl_ep_maybe_free(ep);
        return;
    }
    if (!found) {
        connecter_schedule(ep);
        return;
    }
    ep->have_sa = true;
    connecter_attempt(ep);
}

static void connecter_attempt(zl_endpoint_t *ep)
{
    if (ep->closing || ep->lane0 != NULL || ep->lane1 != NULL)
        return;
    if (ep->addr.transport == ZL_TR_TCP && !ep->addr.numeric && !ep->have_sa) {
        struct addrinfo hints;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = ep->opts.ipv6 ? AF_UNSPEC : AF_INET;
        hints.ai_socktype = SOCK_STREAM;
        ep->gai.data = ep;
        int rc = uv_getaddrinfo(&ep->io->loop, &ep->gai, connecter_on_resolved,
                                ep->addr.host, NULL, &hints);
        if (rc != 0) {
            connecter_schedule(ep);
            return;
        }
        ep->gai_pending = true;
        return;
    }
    connecter_open(ep, 0, NULL);
}

void zl_connecter_open_lane1(zl_endpoint_t *ep, zl_conn_t *lane0)
{
    if (ep->closing) {
        zl_conn_terminate(lane0, 0);
        return;
    }
    if (connecter_open(ep, 1, lane0) == NULL && lane0->state != ZL_CS_CLOSING)
        zl_conn_terminate(lane0, ENOMEM);
}

void zl_connecter_conn_gone(zl_endpoint_t *ep, zl_conn_t *c)
{
    if (c == ep->lane0)
        ep->lane0 = NULL;
    if (c == ep->lane1)
        ep->lane1 = NULL;
    if (ep->lane0 != NULL || ep->lane1 != NULL)
        return;
    connecter_schedule(ep);
}

static void connecter_on_timer_closed(uv_handle_t *h)
{
    zl_endpoint_t *ep = h->data;
    ep->handles--;
    zl_ep_maybe_free(ep);
}

void zl_connecter_stop(zl_endpoint_t *ep)
{
    if (ep->handles > 0 && !uv_is_closing((uv_handle_t *)&ep->retry)) {
        uv_timer_stop(&ep->retry);
        uv_close((uv_handle_t *)&ep->retry, connecter_on_timer_closed);
    }
    if (ep->gai_pending)
        uv_cancel((uv_req_t *)&ep->gai); /* its callback still runs */
}

static void connecter_start_on_loop(void *arg)
{
    zl_endpoint_t *ep = arg;
    uv_timer_init(&ep->io->loop, &ep->retry);
    ep->retry.data = ep;
    ep->handles = 1;
    zl_io_live_add(ep->io, 1);
    connecter_attempt(ep);
}

int zl_engine_connect(zl_tran_sock_t *s, zl_io_t *io, const char *endpoint, zl_endpoint_t **out)
{
    zl_tran_opts_t o;
    zl_tran_get_opts(s, &o);
    zl_addr_t a;
    int rc = zl_addr_parse(endpoint, false, o.ipv6 != 0, &a);
    if (rc != 0)
        return rc;
    if (a.transport == ZL_TR_TCP) {
        rc = zl_tcp_device_check(o.bind_device);
        if (rc != 0)
            return rc;
    }
    zl_endpoint_t *ep = zl_ep_alloc(s, io, ZL_EP_CONNECTER, endpoint);
    if (ep == NULL)
        return ENOMEM;
    ep->addr = a;
    snprintf(ep->name, sizeof ep->name, "%s", endpoint);
    ep->cur_ivl = 0; /* 0: the first retry waits RECONNECT_IVL as set then */
    zl_io_call(io, connecter_start_on_loop, ep);
    *out = ep;
    return 0;
}
