/*
 * endpoint.c — what listeners and connecters share: allocation, the list of
 * connections made through an endpoint, the close request and the final
 * free.
 *
 * Design notes
 *  - An endpoint is created on an application thread (zl_engine_bind /
 *    zl_engine_connect), goes live on its I/O thread, and from then on is
 *    touched only there, except zl_endpoint_close (any thread: an atomic
 *    flag plus an embedded task) and the name getters (immutable strings).
 *  - Close: stop accepting / reconnecting (the kind's own handles), shut
 *    every connection down with the linger given, then free the endpoint
 *    once its handles are closed and its last connection is gone.
 *  - The socket must not use ep after zl_endpoint_close; a pipe's ep
 *    pointer stays valid until that pipe has ended.
 */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

zl_endpoint_t *zl_ep_alloc(zl_tran_sock_t *s, zl_io_t *io, int kind, const char *requested)
{
    zl_endpoint_t *ep = calloc(1, sizeof *ep);
    if (ep == NULL)
        return NULL;
    size_t n = strlen(requested);
    ep->requested = malloc(n + 1);
    if (ep->requested == NULL) {
        free(ep);
        return NULL;
    }
    memcpy(ep->requested, requested, n + 1);
    ep->kind = kind;
    ep->io = io;
    ep->sock = s;
    zl_tran_get_opts(s, &ep->opts);
    ep->sock_type = ep->opts.sock_type;
    return ep;
}

void zl_ep_discard(zl_endpoint_t *ep)
{
    free(ep->requested);
    free(ep);
}

void zl_ep_link_conn(zl_endpoint_t *ep, zl_conn_t *c)
{
    c->ep_prev = NULL;
    c->ep_next = ep->conns;
    if (ep->conns != NULL)
        ep->conns->ep_prev = c;
    ep->conns = c;
}

void zl_ep_unlink_conn(zl_endpoint_t *ep, zl_conn_t *c)
{
    if (c->ep_prev != NULL)
        c->ep_prev->ep_next = c->ep_next;
    else
        ep->conns = c->ep_next;
    if (c->ep_next != NULL)
        c->ep_next->ep_prev = c->ep_prev;
    c->ep_prev = c->ep_next = NULL;
}

void zl_ep_maybe_free(zl_endpoint_t *ep)
{
    if (!ep->closing || ep->conns != NULL || ep->handles > 0 || ep->gai_pending)
        return;
    zl_io_t *io = ep->io;
    zl_ep_discard(ep);
    zl_io_live_add(io, -1);
}

void zl_ep_conn_gone(zl_endpoint_t *ep, zl_conn_t *c)
{
    if (ep->kind == ZL_EP_CONNECTER)
        zl_connecter_conn_gone(ep, c);
    zl_ep_maybe_free(ep);
}

static void ep_on_close_task(zl_task_t *t)
{
    zl_endpoint_t *ep = (zl_endpoint_t *)((char *)t - offsetof(zl_endpoint_t, close_task));
    ep->closing = true;
    zl_ep_event(ep, ZLINK_EVENT_CLOSED, 0);
    if (ep->kind == ZL_EP_LISTENER)
        zl_listener_stop(ep);
    else
        zl_connecter_stop(ep);
    /* Shutting one conn down may end its partner lane too (both in the
     * list): walk from the head again after each step that ended some. */
    zl_conn_t *c = ep->conns;
    while (c != NULL) {
        zl_conn_t *next = c->ep_next;
        zl_conn_shutdown(c, ep->close_linger);
        c = next;
        /* A terminated conn stays linked until its handles closed, so the
         * saved next pointer is still valid here. */
    }
    zl_ep_maybe_free(ep);
}

void zl_endpoint_close(zl_endpoint_t *ep, int linger_ms)
{
    if (ep == NULL || atomic_exchange(&ep->close_posted, true))
        return;
    ep->close_linger = linger_ms;
    ep->close_task.fn = ep_on_close_task;
    zl_io_post(ep->io, &ep->close_task);
}

const char *zl_endpoint_name(const zl_endpoint_t *ep)
{
    return ep->name;
}

const char *zl_endpoint_requested(const zl_endpoint_t *ep)
{
    return ep->requested;
}

bool zl_endpoint_is_bind(const zl_endpoint_t *ep)
{
    return ep->kind == ZL_EP_LISTENER;
}
