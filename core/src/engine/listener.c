/*
 * listener.c — bound endpoints: tcp and ipc listeners that accept
 * connections and hand them to conn.c.
 *
 * Design notes
 *  - zl_engine_bind runs on an application thread: it parses the address,
 *    resolves a host name (blocking getaddrinfo), clears a stale ipc socket
 *    file, then does the libuv work on the I/O thread through zl_io_call
 *    and returns its errno.
 *  - The listener and every connection it accepted live on its I/O thread.
 *    Accepted connections are linked in ep->conns; ROUTER-ROUTER lane 1
 *    connections find their lane 0 there (zl_listener_find_lane0).
 *  - ipc: the socket file is removed when the listener closes.
 *  - A connection we cannot take (no memory for its conn, its handles
 *    failed) is refused, never left pending: libuv stops watching the
 *    listening socket while a connection it handed us is not accepted, so
 *    a pending one would stop the listener for good. listener_refuse
 *    accepts it into the endpoint's spare handle and closes it at once;
 *    while that close runs, a second one waits (refuse_next) and is refused
 *    from the close callback. libuv hands over one connection at a time,
 *    so one spare handle suffices.
 *  - Locks: none; the I/O thread owns everything after the bind returned.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* An ipc path in use by a live listener -> EADDRINUSE; a stale socket file
 * (nobody accepts) is removed. Any other kind of file -> EADDRINUSE.
 * Application thread; blocks briefly (a local connect). */
static int ipc_prepare(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISSOCK(st.st_mode))
        return EADDRINUSE;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    struct sockaddr_un sun;
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    int rc = connect(fd, (struct sockaddr *)&sun, sizeof sun);
    int e = errno;
    close(fd);
    if (rc == 0)
        return EADDRINUSE;
    if (e == ECONNREFUSED || e == ENOENT)
        unlink(path);
    return 0;
}

static void listener_refuse(zl_endpoint_t *ep);

/* The spare handle's close callback: the refused connection is closed; a
 * connection that waited for the handle is refused now. Loop thread. */
static void listener_on_refused(uv_handle_t *h)
{
    zl_endpoint_t *ep = h->data;
    ep->refusing = false;
    ep->handles--;
    bool next = ep->refuse_next && !ep->closing;
    ep->refuse_next = false;
    if (next)
        listener_refuse(ep);
    zl_ep_maybe_free(ep); /* closing: libuv closed what was still pending */
}

/* Refuses the connection libuv is holding for this listener (its
 * connection callback runs): accepts it into ep->refuse and closes it, so
 * the client sees its connection closed and libuv resumes watching the
 * listening socket. Allocates nothing. Loop thread. */
static void listener_refuse(zl_endpoint_t *ep)
{
    if (ep->refusing) {
        ep->refuse_next = true; /* libuv keeps it until the handle is free */
        return;
    }
    uv_loop_t *loop = &ep->io->loop;
    int rc = ep->addr.transport == ZL_TR_IPC ? uv_pipe_init(loop, &ep->refuse.pipe, 0)
                                             : uv_tcp_init(loop, &ep->refuse.tcp);
    if (rc != 0)
        return; /* libuv does not fail these (no socket is made yet) */
    ep->refuse.handle.data = ep;
    ep->refusing = true;
    ep->handles++;
    (void)uv_accept(&ep->srv.stream, &ep->refuse.stream); /* on failure libuv closed it */
    uv_close(&ep->refuse.handle, listener_on_refused);
}

static void listener_on_connection(uv_stream_t *server, int status)
{
    zl_endpoint_t *ep = server->data;
    if (status < 0 && !ep->closing)
        zl_ep_event(ep, ZLINK_EVENT_ACCEPT_FAILED, (uint64_t)-status);
    if (status < 0 || ep->closing)
        return;
    zl_conn_t *c = zl_conn_new(ep->io, ep, false, 0);
    if (c == NULL) {
        zl_ep_event(ep, ZLINK_EVENT_ACCEPT_FAILED, ENOMEM);
        listener_refuse(ep);
        return;
    }
    bool ipc = ep->addr.transport == ZL_TR_IPC;
    int rc = zl_conn_init_handles(c, ipc);
    if (rc != 0) {
        zl_ep_event(ep, ZLINK_EVENT_ACCEPT_FAILED, (uint64_t)-rc);
        listener_refuse(ep);
        return;
    }
    rc = uv_accept(server, &c->h.stream);
    if (rc != 0) {
        zl_ep_event(ep, ZLINK_EVENT_ACCEPT_FAILED, (uint64_t)-rc);
        zl_conn_terminate(c, -rc);
        return;
    }
    zl_conn_event(c, ZLINK_EVENT_ACCEPTED, 0);
    zl_conn_start(c);
}

typedef struct bind_call {
    zl_endpoint_t *ep;
    int rc;
} bind_call_t;

/* A bind that failed after its handle was initialized: free it from the
 * close callback (it never went live). */
static void listener_on_failed_close(uv_handle_t *h)
{
    zl_ep_discard(h->data);
}

static void listener_bind_on_loop(void *arg)
{
    bind_call_t *b = arg;
    zl_endpoint_t *ep = b->ep;
    uv_loop_t *loop = &ep->io->loop;
    int backlog = ep->opts.backlog > 0 ? ep->opts.backlog : SOMAXCONN;
    int rc;
    if (ep->addr.transport == ZL_TR_TCP) {
        /* The fd exists at once, so BINDTODEVICE and TOS precede bind. */
        int family = ep->addr.sa.ss_family;
        rc = uv_tcp_init_ex(loop, &ep->srv.tcp, (unsigned)family);
        if (rc != 0) {
            b->rc = -rc;
            zl_ep_discard(ep);
            return;
        }
        ep->srv.handle.data = ep;
        uv_os_fd_t fd;
        rc = uv_fileno(&ep->srv.handle, &fd);
        if (rc == 0)
            rc = -zl_tcp_tune_early(fd, family, &ep->opts);
        if (rc == 0)
            rc = uv_tcp_bind(&ep->srv.tcp, (const struct sockaddr *)&ep->addr.sa, 0);
        if (rc == 0)
            rc = uv_listen(&ep->srv.stream, backlog, listener_on_connection);
        if (rc == 0) {
            struct sockaddr_storage ss;
            int len = sizeof ss;
            rc = uv_tcp_getsockname(&ep->srv.tcp, (struct sockaddr *)&ss, &len);
            if (rc == 0)
                zl_addr_format_tcp((struct sockaddr *)&ss, ep->name, sizeof ep->name);
        }
    } else {
        rc = uv_pipe_init(loop, &ep->srv.pipe, 0);
        if (rc != 0) {
            b->rc = -rc;
            zl_ep_discard(ep);
            return;
        }
        ep->srv.handle.data = ep;
        rc = uv_pipe_bind(&ep->srv.pipe, ep->addr.path);
        if (rc == 0) {
            ep->unlink_path = true;
            rc = uv_listen(&ep->srv.stream, backlog, listener_on_connection);
        }
        if (rc == 0)
            snprintf(ep->name, sizeof ep->name, "ipc://%s", ep->addr.path);
        else if (ep->unlink_path)
            unlink(ep->addr.path);
    }
    if (rc != 0) {
        b->rc = -rc;
        uv_close(&ep->srv.handle, listener_on_failed_close);
        return;
    }
    ep->handles = 1;
    zl_io_live_add(ep->io, 1);
    b->rc = 0;
    zl_ep_event(ep, ZLINK_EVENT_LISTENING, 0);
}

static int engine_bind(zl_tran_sock_t *s, zl_io_t *io, const char *endpoint, zl_endpoint_t **out);

int zl_engine_bind(zl_tran_sock_t *s, zl_io_t *io, const char *endpoint, zl_endpoint_t **out)
{
    int rc = engine_bind(s, io, endpoint, out);
    if (rc != 0)
        zl_engine_bind_failed(s, endpoint, rc); /* monitor: BIND_FAILED */
    return rc;
}

static int engine_bind(zl_tran_sock_t *s, zl_io_t *io, const char *endpoint, zl_endpoint_t **out)
{
    zl_tran_opts_t o;
    zl_tran_get_opts(s, &o);
    zl_addr_t a;
    int rc = zl_addr_parse(endpoint, true, o.ipv6 != 0, &a);
    if (rc != 0)
        return rc;
    if (a.transport == ZL_TR_TCP && !a.numeric) {
        rc = zl_addr_resolve(&a, true, o.ipv6 != 0);
        if (rc != 0)
            return rc;
    }
    if (a.transport == ZL_TR_IPC) {
        rc = ipc_prepare(a.path);
        if (rc != 0)
            return rc;
    }
    zl_endpoint_t *ep = zl_ep_alloc(s, io, ZL_EP_LISTENER, endpoint);
    if (ep == NULL)
        return ENOMEM;
    ep->addr = a;
    bind_call_t b = {ep, 0};
    zl_io_call(io, listener_bind_on_loop, &b);
    if (b.rc != 0)
        return b.rc; /* the I/O thread freed ep */
    *out = ep;
    return 0;
}

static void listener_on_closed(uv_handle_t *h)
{
    zl_endpoint_t *ep = h->data;
    ep->handles--;
    zl_ep_maybe_free(ep);
}

void zl_listener_stop(zl_endpoint_t *ep)
{
    if (ep->handles > 0 && !uv_is_closing(&ep->srv.handle)) {
        uv_close(&ep->srv.handle, listener_on_closed);
        if (ep->unlink_path) {
            unlink(ep->addr.path);
            ep->unlink_path = false;
        }
    }
}

zl_conn_t *zl_listener_find_lane0(zl_endpoint_t *ep, const zl_conn_t *lane1)
{
    for (zl_conn_t *c = ep->conns; c != NULL; c = c->ep_next) {
        if (c == lane1 || c->initiator || c->lane != 0 || c->lanes != 2)
            continue;
        if (c->state != ZL_CS_WAIT_PARTNER || c->partner != NULL)
            continue;
        if (zl_rid_equal(&c->peer.rid, &lane1->peer.rid))
            return c;
    }
    return NULL;
}
