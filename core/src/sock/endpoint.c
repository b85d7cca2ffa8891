/*
 * endpoint.c — bind, connect, unbind and disconnect (tcp and ipc through
 * the engine, inproc through the context's names), ROUTER connect aliases,
 * and the wait tokens an endpoint's removal ends.
 *
 * Threads: application threads. Locks: s->lk briefly around the endpoint
 * list; never held while the engine binds, connects or closes (those
 * block on an I/O thread, which takes s->lk itself).
 */
#include "sock/sock_impl.h"
#include "sock/socket.h"

#include "engine/engine.h"
#include "sock/completion.h"
#include "sock/ctx.h"
#include "sock/monitor.h"
#include "sock_int.h"
#include "sock/sockopt.h"
#include "util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- endpoints */

static int eps_add(zl_socket_t *s, zl_endpoint_t *ep)
{
    if (s->neps == s->eps_cap) {
        size_t cap = s->eps_cap ? s->eps_cap * 2 : 4;
        zl_endpoint_t **n = realloc(s->eps, cap * sizeof *n);
        if (n == NULL)
            return ENOMEM;
        s->eps = n;
        s->eps_cap = cap;
    }
    s->eps[s->neps++] = ep;
    return 0;
}

/* Under s->lk: remembers the CONNECT_ROUTING_ID alias for a connect. A
 * later alias for the same endpoint string replaces the earlier one. */
static int alias_add(zl_socket_t *s, const char *ep, const zlink_routing_id_t *rid)
{
    size_t len = strlen(ep);
    for (size_t i = 0; i < s->naliases; i++) {
        if (strcmp(s->aliases[i].endpoint, ep) == 0) {
            s->aliases[i].rid = *rid;
            return 0;
        }
    }
    struct zl_alias *a = realloc(s->aliases, (s->naliases + 1) * sizeof *a);
    if (a == NULL)
        return ENOMEM;
    s->aliases = a;
    a[s->naliases].endpoint = malloc(len + 1);
    if (a[s->naliases].endpoint == NULL)
        return ENOMEM;
    memcpy(a[s->naliases].endpoint, ep, len + 1);
    a[s->naliases].rid = *rid;
    s->naliases++;
    return 0;
}

static bool is_inproc(const char *ep, const char **name)
{
    if (strncmp(ep, "inproc://", 9) != 0)
        return false;
    *name = ep + 9;
    return true;
}

static bool transport_known(const char *ep)
{
    const char *sep = strstr(ep, "://");
    return sep != NULL && sep != ep;
}

/* The checks bind and connect share: a "transport://" prefix; STREAM needs
 * its receive mode chosen and has no inproc. *name is the inproc name, or
 * NULL for an engine transport. Returns 0 or EINVAL / EPROTONOSUPPORT.
 * On 0 a STREAM holds its receive mode (the setter gives EBUSY) until the
 * caller reports the outcome with stream_mode_release. Takes s->lk. */
static int endpoint_precheck(zl_socket_t *s, const char *ep, const char **name)
{
    if (!transport_known(ep))
        return EINVAL;
    bool inproc = is_inproc(ep, name);
    if (!inproc)
        *name = NULL;
    if (s->type == ZLINK_STREAM) {
        int rc = 0;
        zl_mutex_lock(&s->lk);
        if (s->opts.stream_mode == ZLINK_STREAM_RECV_UNSPECIFIED)
            rc = EINVAL;
        else if (inproc)
            rc = EPROTONOSUPPORT;
        else
            s->stream_mode_holds++;
        zl_mutex_unlock(&s->lk);
        return rc;
    }
    return inproc && **name == '\0' ? EINVAL : 0;
}

/* After a bind or connect whose precheck passed: a STREAM drops its hold
 * on the receive mode, and the first success fixes the mode for good (a
 * failure leaves it settable). Takes s->lk. */
static void stream_mode_release(zl_socket_t *s, int rc)
{
    if (s->type != ZLINK_STREAM)
        return;
    zl_mutex_lock(&s->lk);
    s->stream_mode_holds--;
    if (rc == 0)
        s->stream_mode_fixed = true;
    zl_mutex_unlock(&s->lk);
}

static int socket_bind_checked(zl_socket_t *s, const char *ep, const char *name);
static int socket_connect_checked(zl_socket_t *s, const char *ep, const char *name);

int zl_socket_bind(zl_socket_t *s, const char *ep)
{
    const char *name;
    int rc = endpoint_precheck(s, ep, &name);
    if (rc != 0)
        return rc;
    rc = socket_bind_checked(s, ep, name);
    stream_mode_release(s, rc);
    return rc;
}

int zl_socket_connect(zl_socket_t *s, const char *ep)
{
    const char *name;
    int rc = endpoint_precheck(s, ep, &name);
    if (rc != 0)
        return rc;
    rc = socket_connect_checked(s, ep, name);
    stream_mode_release(s, rc);
    return rc;
}

/* zl_socket_bind past its precheck (name: the inproc name or NULL). */
static int socket_bind_checked(zl_socket_t *s, const char *ep, const char *name)
{
    if (name != NULL) {
        int rc = zl_ctx_inproc_bind(s->ctx, name, &s->tran);
        if (rc == 0) {
            zl_mutex_lock(&s->lk);
            snprintf(s->last_endpoint, sizeof s->last_endpoint, "%s", ep);
            zl_mutex_unlock(&s->lk);
        }
        return rc;
    }
    zl_mutex_lock(&s->lk);
    uint64_t affinity = s->opts.affinity;
    zl_mutex_unlock(&s->lk);
    zl_io_t *io = zl_ctx_pick_io(s->ctx, affinity);
    if (io == NULL)
        return zl_get_errno();
    zl_endpoint_t *e = NULL;
    int rc = zl_engine_bind(&s->tran, io, ep, &e);
    if (rc != 0)
        return rc;
    zl_mutex_lock(&s->lk);
    rc = eps_add(s, e);
    if (rc == 0)
        snprintf(s->last_endpoint, sizeof s->last_endpoint, "%s", zl_endpoint_name(e));
    zl_mutex_unlock(&s->lk);
    if (rc != 0)
        zl_endpoint_close(e, 0);
    return rc;
}

/* zl_socket_connect past its precheck (name: the inproc name or NULL). */
static int socket_connect_checked(zl_socket_t *s, const char *ep, const char *name)
{
    if (name != NULL) {
        zl_tran_sock_t *b = zl_ctx_inproc_find(s->ctx, name);
        if (b == NULL)
            return ENOENT; /* inproc needs the bind first (doc/decisions.md) */
        return zl_inproc_connect(&s->tran, b);
    }
    zl_mutex_lock(&s->lk);
    uint64_t affinity = s->opts.affinity;
    zl_mutex_unlock(&s->lk);
    zl_io_t *io = zl_ctx_pick_io(s->ctx, affinity);
    if (io == NULL)
        return zl_get_errno();
    zlink_routing_id_t alias;
    zl_socket_take_connect_rid(s, &alias);
    if (alias.size > 0) {
        /* Keyed by the endpoint string: the engine may attach the first
         * pipe before zl_engine_connect has even returned. */
        zl_mutex_lock(&s->lk);
        int rc = alias_add(s, ep, &alias);
        zl_mutex_unlock(&s->lk);
        if (rc != 0)
            return rc;
    }
    zl_endpoint_t *e = NULL;
    int rc = zl_engine_connect(&s->tran, io, ep, &e);
    if (rc != 0)
        return rc;
    zl_mutex_lock(&s->lk);
    rc = eps_add(s, e);
    zl_mutex_unlock(&s->lk);
    if (rc != 0)
        zl_endpoint_close(e, 0);
    return rc;
}

bool zl_socket_alias_for(zl_socket_t *s, const zl_endpoint_t *ep, zlink_routing_id_t *out)
{
    if (ep == NULL)
        return false;
    const char *name = zl_endpoint_requested(ep);
    for (size_t i = 0; i < s->naliases; i++) {
        if (strcmp(s->aliases[i].endpoint, name) == 0) {
            *out = s->aliases[i].rid;
            return true;
        }
    }
    return false;
}

/* Removes the endpoint matching ep (bind side when want_bind). */
/* Under s->lk: an endpoint's removal (zlink_disconnect / zlink_unbind)
 * ends the wait tokens whose target went with it, as WRITABLE TERMINAL /
 * ENOENT: PAIR's one target; the routing ids of ROUTER/STREAM pipes made
 * through it (ep; inproc: binder's pipes); DEALER's whole candidate set
 * once no endpoint is left. */
static void removal_ends_tokens(zl_socket_t *s, const zl_endpoint_t *ep,
                                const zl_tran_sock_t *binder)
{
    if (s->cq.ntokens == 0)
        return;
    switch (s->type) {
    case ZLINK_PAIR:
        zl_cq_terminate(s, NULL, ENOENT);
        break;
    case ZLINK_ROUTER:
    case ZLINK_STREAM:
        ZL_FOREACH_PIPE(s, p) {
            bool through = ep != NULL ? p->ep == ep
                                      : p->inproc && (binder == NULL ||
                                                   zl_inproc_peer_is(p->link, p->link_side, binder));
            if (through && p->attached)
                zl_cq_terminate(s, &p->rid, ENOENT);
        }
        break;
    case ZLINK_DEALER:
        if (s->neps == 0)
            zl_cq_terminate(s, NULL, ENOENT);
        break;
    default:
        break;
    }
}

static int endpoint_remove(zl_socket_t *s, const char *ep, bool want_bind)
{
    zl_endpoint_t *found = NULL;
    zl_mutex_lock(&s->lk);
    int linger = s->opts.linger;
    for (size_t i = 0; i < s->neps; i++) {
        zl_endpoint_t *e = s->eps[i];
        if (e == NULL || zl_endpoint_is_bind(e) != want_bind)
            continue;
        if (strcmp(zl_endpoint_requested(e), ep) == 0 || strcmp(zl_endpoint_name(e), ep) == 0) {
            found = e;
            s->eps[i] = s->eps[--s->neps];
            removal_ends_tokens(s, found, NULL);
            break;
        }
    }
    zl_mutex_unlock(&s->lk);
    if (found == NULL)
        return ENOENT;
    zl_endpoint_close(found, linger);
    return 0;
}

/* Ends every inproc pipe of s whose peer is (or is not) the binder. */
static int inproc_drop(zl_socket_t *s, const zl_tran_sock_t *binder, bool as_binder)
{
    int dropped = 0;
    for (;;) {
        zl_pipe_t *victim = NULL;
        zl_mutex_lock(&s->lk);
        ZL_FOREACH_PIPE(s, p) {
            if (!p->inproc || zl_inproc_closed(p->link, p->link_side) || p->ended)
                continue;
            if (as_binder || zl_inproc_peer_is(p->link, p->link_side, binder)) {
                victim = p;
                break;
            }
        }
        zl_mutex_unlock(&s->lk);
        if (victim == NULL)
            return dropped;
        zl_pipe_break_link(victim);
        zl_socket_pipe_ended(s, victim);
        dropped++;
    }
}

int zl_socket_unbind(zl_socket_t *s, const char *ep)
{
    const char *name;
    if (is_inproc(ep, &name)) {
        if (zl_ctx_inproc_find(s->ctx, name) != &s->tran)
            return ENOENT;
        zl_ctx_inproc_unbind(s->ctx, name, &s->tran);
        zl_mutex_lock(&s->lk);
        removal_ends_tokens(s, NULL, NULL);
        zl_mutex_unlock(&s->lk);
        inproc_drop(s, NULL, true);
        return 0;
    }
    return endpoint_remove(s, ep, true);
}

int zl_socket_disconnect(zl_socket_t *s, const char *ep)
{
    const char *name;
    if (is_inproc(ep, &name)) {
        zl_tran_sock_t *b = zl_ctx_inproc_find(s->ctx, name);
        if (b == NULL)
            return ENOENT;
        zl_mutex_lock(&s->lk);
        removal_ends_tokens(s, NULL, b);
        zl_mutex_unlock(&s->lk);
        if (inproc_drop(s, b, false) == 0)
            return ENOENT;
        return 0;
    }
    return endpoint_remove(s, ep, false);
}

int zl_socket_disconnect_rid(zl_socket_t *s, const zlink_routing_id_t *rid)
{
    zl_mutex_lock(&s->lk);
    zl_pipe_t *victim = zl_socket_route(s, rid);
    if (victim != NULL) {
        zl_cq_terminate(s, rid, ENOENT); /* an explicit removal ends tokens */
        zl_req_forget_source(s, rid);    /* and the reply tokens of that source */
    }
    if (victim != NULL && !victim->inproc) {
        /* The engine ends the pipe when the connection is gone. */
        victim->attached = false;
        zl_conn_close(victim->conn, 0);
        zl_mutex_unlock(&s->lk);
        return 0;
    }
    zl_mutex_unlock(&s->lk);
    if (victim == NULL)
        return ENOENT;
    zl_pipe_break_link(victim);
    zl_socket_pipe_ended(s, victim);
    return 0;
}
