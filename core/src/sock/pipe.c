/*
 * pipe.c — a socket's pipes (one per connected peer): creation for the
 * engine (the operations of engine/transport.h, zl_sock_tran_ops) and for
 * inproc links, attach, end, reap, pushes, control frames (WEIGHT,
 * FLOWSTATE, subscriptions; inproc controls applied by the receiver) and
 * credit edges.
 *
 * Threads: the transport operations run on I/O threads (tcp, ipc) or the
 * connecting application thread (inproc); everything else on application
 * threads. Locks: s->lk around the pipe list and pipe state; queue locks
 * inside it. A transport operation takes s->lk itself and never calls back
 * into the engine while holding it, except zl_conn_close (posts a task).
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

/* ------------------------------------------------------------- pipes */

/* Drops the pipe's references on q (NULL: none): one for an inproc pipe
 * (the peer's pipe holds the other), both for an engine pipe. */
static void pipe_queue_unref(const zl_pipe_t *p, zl_q_t *q)
{
    if (q == NULL)
        return;
    zl_q_unref(q);
    if (!p->inproc)
        zl_q_unref(q);
}

static void pipe_free(zl_pipe_t *p)
{
    pipe_queue_unref(p, p->out);
    pipe_queue_unref(p, p->in);
    pipe_queue_unref(p, p->cmp_out);
    pipe_queue_unref(p, p->cmp_in);
    zl_fq_fini(&p->rxq);
    zl_fq_fini(&p->cmp_rxq);
    free(p->proto);
    free(p);
}

void zl_pipe_unref(zl_pipe_t *p)
{
    if (p != NULL && atomic_fetch_sub(&p->refs, 1) == 1)
        pipe_free(p);
}

/* The pipe_new operation (transport.h): a pipe for an engine connection,
 * whose queues have the engine's ends. I/O thread; takes s->lk briefly. */
static zl_pipe_t *socket_pipe_new(zl_socket_t *s, const zl_tran_pipe_args_t *a, zl_q_t **out,
                                  zl_q_t **in)
{
    zl_pipe_t *p = calloc(1, sizeof *p);
    if (p == NULL) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    zl_mutex_lock(&s->lk);
    uint64_t sndhwm = s->opts.sndhwm, rcvhwm = s->opts.rcvhwm;
    zl_mutex_unlock(&s->lk);
    zl_q_end_t me = {zl_pipe_in_notify, p};
    zl_q_end_t credit = {zl_pipe_credit_notify, p};
    p->out = zl_q_new(sndhwm, a->out_reader, credit);
    p->in = zl_q_new(rcvhwm, me, a->in_writer);
    if (p->out == NULL || p->in == NULL) {
        free(p->out);
        free(p->in);
        free(p);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    p->sock = s;
    p->conn = a->conn;
    p->ep = a->ep;
    if (a->peer != NULL)
        p->peer = *a->peer;
    p->id = a->id;
    atomic_init(&p->refs, 2);
    *out = p->out;
    *in = p->in;
    return p;
}

/* The pipe_add_lane operation (transport.h). I/O thread; no lock (the pipe
 * is not attached yet, nobody else sees it). */
static int socket_pipe_add_lane(zl_pipe_t *p, zl_q_end_t out_reader, zl_q_end_t in_writer,
                                zl_q_t **out, zl_q_t **in)
{
    /* No HWM either way, so no credit edges: the writer end of cmp_out
     * needs no notify. */
    zl_q_end_t me = {zl_socket_notify, p->sock};
    zl_q_end_t none = {NULL, NULL};
    p->cmp_out = zl_q_new(0, out_reader, none);
    p->cmp_in = zl_q_new(0, me, in_writer);
    if (p->cmp_out == NULL || p->cmp_in == NULL) {
        free(p->cmp_out);
        free(p->cmp_in);
        p->cmp_out = p->cmp_in = NULL;
        return ENOMEM;
    }
    *out = p->cmp_out;
    *in = p->cmp_in;
    return 0;
}

/* The key of a routing id in s->pipes_by_rid. A pipe's rid is fixed
 * before it is linked (the pattern's attach names it) and stays so while it
 * is linked. */
static uint64_t pipe_rid_key(const zlink_routing_id_t *rid)
{
    return zl_hash_bytes(rid->data, rid->size, rid->size);
}

zl_pipe_t *zl_socket_route(zl_socket_t *s, const zlink_routing_id_t *rid)
{
    for (zl_hnode_t *n = zl_hmap_first(&s->pipes_by_rid, pipe_rid_key(rid)); n != NULL;
         n = zl_hmap_next(n)) {
        zl_pipe_t *p = (zl_pipe_t *)(void *)((char *)n - offsetof(zl_pipe_t, rid_node));
        if (p->attached && !p->ended && zl_rid_equal(&p->rid, rid))
            return p;
    }
    return NULL;
}

static void pipe_link(zl_socket_t *s, zl_pipe_t *p)
{
    p->prev = NULL;
    p->next = s->pipes;
    if (s->pipes != NULL)
        s->pipes->prev = p;
    s->pipes = p;
    s->npipes++;
    zl_hmap_insert(&s->pipes_by_rid, &p->rid_node, pipe_rid_key(&p->rid));
    p->linked = true;
    /* Records may have come before anybody looked (the queue's reader
     * notify is armed only once a reader found it empty). */
    zl_pipe_rx_ready(s, p);
}

static void pipe_unlink(zl_socket_t *s, zl_pipe_t *p)
{
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        s->pipes = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
    zl_pipe_rx_idle(s, p);
    s->npipes--;
    zl_hmap_remove(&s->pipes_by_rid, &p->rid_node);
    p->next = p->prev = NULL;
    p->linked = false;
}

/* Under s->lk: runs the pattern's attach and links the pipe. Returns 0 or
 * an errno (the pipe is then not linked). */
static int pipe_attach_locked(zl_socket_t *s, zl_pipe_t *p)
{
    if (s->closing || s->tag != ZL_SOCK_TAG)
        return ESHUTDOWN;
    p->attach_seq = ++s->attach_counter;
    if (s->ops->attach != NULL) {
        int rc = s->ops->attach(s, p);
        if (rc != 0)
            return rc;
    }
    p->attached = true;
    pipe_link(s, p);
    s->route_gen++;
    zl_pipe_stamp(p); /* an attach is a wake edge for tokens */
    zl_socket_wake(s);
    return 0;
}

int zl_socket_pipe_attach(zl_socket_t *s, zl_pipe_t *p)
{
    zl_mutex_lock(&s->lk);
    int rc = pipe_attach_locked(s, p);
    if (rc != 0)
        p->ended = true;
    zl_mutex_unlock(&s->lk);
    if (rc != 0) {
        /* Refused: the socket never held the pipe; drop its reference. The
         * engine keeps its own until the connection is closed. */
        zl_q_close_reader(p->in);
        zl_pipe_unref(p);
    }
    return rc;
}

/* Under s->lk: the pipe will carry no more traffic. */
void zl_pipe_end_locked(zl_socket_t *s, zl_pipe_t *p)
{
    if (p->ended)
        return;
    p->ended = true;
    if (p->inproc) {
        /* Controls the peer queued for this connection and we never
         * applied: it is gone, so they apply to nothing. */
        zl_frame_t f;
        while (zl_q_pop_ctl(p->in, &f)) {
            zl_flow_foreign(s, &f);
            zl_msg_release(&f.msg);
        }
    }
    if (p->linked && s->ops->detach != NULL)
        s->ops->detach(s, p);
    if (p->attached)
        s->route_gen++;
    if (p->remote_paused) {
        p->remote_paused = false;
        s->flow_paused_conns--;
    }
    if (s->cq.nreqs > 0) {
        /* Replies that arrived before the end still count, as they would
         * at the next look at the socket: those on the Completion lane and
         * those at the head of the input (a reply behind unread DATA cannot
         * pass it, as while the connection was up). The rest end
         * NOT_CONNECTED at once. */
        zl_req_drain_cmp(s, p);
        (void)zl_req_drain_replies(s, p);
        zl_req_pipe_ended(s, p);
    }
    if (s->cq.ntokens > 0 && p->attached)
        zl_cq_pipe_ending(s, p);
    p->attached = false;
    /* Senders blocked on this pipe must re-select. */
    zl_socket_wake(s);
}

void zl_socket_reap_pipe(zl_socket_t *s, zl_pipe_t *p)
{
    pipe_unlink(s, p);
    p->attached = false;
    /* An inproc pipe's link holds both pipes until both sides are done. */
    if (p->inproc)
        zl_inproc_release(p->link);
    zl_pipe_unref(p);
}

void zl_socket_pipe_ended(zl_socket_t *s, zl_pipe_t *p)
{
    zl_mutex_lock(&s->lk);
    bool linked = p->linked;
    zl_pipe_end_locked(s, p);
    /* The engine writes no more: readers see EOF after the last record. */
    zl_q_close_writer(p->in);
    zl_q_close_reader(p->out);
    if (p->cmp_out != NULL) {
        zl_q_close_writer(p->cmp_in);
        zl_q_close_reader(p->cmp_out);
    }
    if (linked && p->rxq.count == 0 && zl_q_records(p->in) == 0)
        zl_socket_reap_pipe(s, p);
    zl_mutex_unlock(&s->lk);
}

/* The pipe_control operation (transport.h). I/O thread; takes s->lk. */
static void socket_pipe_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f)
{
    zl_mutex_lock(&s->lk);
    if (p->ended)
        zl_flow_foreign(s, f);
    else if (s->ops->control != NULL)
        s->ops->control(s, p, f);
    zl_mutex_unlock(&s->lk);
}

void zl_socket_get_opts(zl_socket_t *s, zl_sockopts_t *out)
{
    zl_mutex_lock(&s->lk);
    *out = s->opts;
    zl_mutex_unlock(&s->lk);
}

/* ------------------------------------------- the engine's view (transport.h) */

static zl_socket_t *sock_of(zl_tran_sock_t *ts)
{
    return (zl_socket_t *)((char *)ts - offsetof(zl_socket_t, tran));
}

static void tran_get_opts(zl_tran_sock_t *ts, zl_tran_opts_t *out)
{
    zl_socket_t *s = sock_of(ts);
    zl_mutex_lock(&s->lk);
    const zl_sockopts_t *o = &s->opts;
    memset(out, 0, sizeof *out);
    out->sock_type = s->type;
    out->sndhwm = o->sndhwm;
    out->rcvhwm = o->rcvhwm;
    out->maxmsgsize = o->maxmsgsize;
    out->reconnect_ivl = o->reconnect_ivl;
    out->reconnect_ivl_max = o->reconnect_ivl_max;
    out->backlog = o->backlog;
    out->tcp_nodelay = o->tcp_nodelay;
    out->sndbuf = o->sndbuf;
    out->rcvbuf = o->rcvbuf;
    out->ipv6 = o->ipv6;
    out->handshake_ivl = o->handshake_ivl;
    out->connect_timeout = o->connect_timeout;
    out->zmp_metadata = o->zmp_metadata;
    out->weight = o->weight;
    out->stream_mode = o->stream_mode;
    out->tcp_keepalive = o->tcp_keepalive;
    out->tcp_keepalive_cnt = o->tcp_keepalive_cnt;
    out->tcp_keepalive_idle = o->tcp_keepalive_idle;
    out->tcp_keepalive_intvl = o->tcp_keepalive_intvl;
    out->tos = o->tos;
    out->tcp_maxrt = o->tcp_maxrt;
    memcpy(out->bind_device, o->bind_device, sizeof out->bind_device);
    out->rid = o->rid;
    zl_mutex_unlock(&s->lk);
}

static bool tran_terminated(zl_tran_sock_t *ts)
{
    return atomic_load(&sock_of(ts)->terminated);
}

static zl_pipe_t *tran_pipe_new(zl_tran_sock_t *ts, const zl_tran_pipe_args_t *a, zl_q_t **out,
                                zl_q_t **in)
{
    return socket_pipe_new(sock_of(ts), a, out, in);
}

static int tran_pipe_attach(zl_tran_sock_t *ts, zl_pipe_t *p)
{
    return zl_socket_pipe_attach(sock_of(ts), p);
}

static void tran_pipe_ended(zl_tran_sock_t *ts, zl_pipe_t *p)
{
    zl_socket_pipe_ended(sock_of(ts), p);
}

static void tran_pipe_control(zl_tran_sock_t *ts, zl_pipe_t *p, const zl_frame_t *f)
{
    socket_pipe_control(sock_of(ts), p, f);
}

/* The pipe_new_inproc operation (transport.h): a pipe whose queues the
 * inproc link creates. The connecting ROUTER names the binder by its
 * CONNECT_ROUTING_ID alias when one was set. Any thread; takes s->lk. */
static zl_pipe_t *tran_pipe_new_inproc(zl_tran_sock_t *ts, const zl_tran_pipe_args_t *a,
                                       bool initiator, zl_q_end_t *reader, zl_q_end_t *writer)
{
    zl_socket_t *s = sock_of(ts);
    zl_pipe_t *p = calloc(1, sizeof *p);
    if (p == NULL) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    p->sock = s;
    p->inproc = true;
    p->id = a->id;
    p->peer = *a->peer;
    if (initiator && s->type == ZLINK_ROUTER) {
        zlink_routing_id_t alias;
        zl_socket_take_connect_rid(s, &alias);
        if (alias.size > 0)
            p->peer.rid = alias;
    }
    atomic_init(&p->refs, 2);
    /* Readers are notified as pipes (the ready inbox; the Completion
     * lane's queue gets the same end, a spurious post there only costs one
     * look at an empty input); writers as pipes too (credit edges). */
    *reader = (zl_q_end_t){zl_pipe_in_notify, p};
    *writer = (zl_q_end_t){zl_pipe_credit_notify, p};
    return p;
}

/* The pipe_set_queues operation: before the pipe is attached, so nobody
 * else sees it yet (no lock). */
static void tran_pipe_set_queues(zl_pipe_t *p, zl_q_t *out, zl_q_t *in, zl_q_t *cmp_out,
                                 zl_q_t *cmp_in, zl_inproc_link_t *link, int side)
{
    p->out = out;
    p->in = in;
    p->cmp_out = cmp_out;
    p->cmp_in = cmp_in;
    p->link = link;
    p->link_side = side;
}

/* The controls_queued operation: any thread, any locks (a flag and a
 * wake, both lock-free). */
static void tran_controls_queued(zl_tran_sock_t *ts)
{
    zl_socket_t *s = sock_of(ts);
    atomic_fetch_add(&s->ctl_pending, 1);
    zl_socket_wake(s);
}

static bool tran_monitor_wants(zl_tran_sock_t *ts, uint32_t event)
{
    return zl_monitor_wants(sock_of(ts), event);
}

static void tran_monitor_post(zl_tran_sock_t *ts, const zlink_monitor_event_t *ev)
{
    zl_monitor_post(sock_of(ts), false, ev);
}

static void tran_monitor_post_ready(zl_tran_sock_t *ts, zlink_monitor_event_t *ev,
                                    const zl_pipe_t *p)
{
    zl_monitor_post_ready(sock_of(ts), ev, p);
}

static int64_t tran_maxmsgsize_now(zl_tran_sock_t *ts)
{
    return zl_socket_maxmsgsize_now(sock_of(ts));
}

static const zlink_routing_id_t *tran_pipe_rid(const zl_pipe_t *p)
{
    return &p->rid;
}

const zl_tran_sock_ops_t zl_sock_tran_ops = {
    .get_opts = tran_get_opts,
    .terminated = tran_terminated,
    .pipe_new = tran_pipe_new,
    .pipe_new_inproc = tran_pipe_new_inproc,
    .pipe_set_queues = tran_pipe_set_queues,
    .controls_queued = tran_controls_queued,
    .pipe_add_lane = socket_pipe_add_lane,
    .pipe_attach = tran_pipe_attach,
    .pipe_ended = tran_pipe_ended,
    .pipe_control = tran_pipe_control,
    .pipe_unref = zl_pipe_unref,
    .pipe_rid = tran_pipe_rid,
    .maxmsgsize_now = tran_maxmsgsize_now,
    .monitor_wants = tran_monitor_wants,
    .monitor_post = tran_monitor_post,
    .monitor_post_ready = tran_monitor_post_ready,
};

void zl_socket_take_connect_rid(zl_socket_t *s, zlink_routing_id_t *out)
{
    zl_mutex_lock(&s->lk);
    *out = s->connect_rid;
    s->connect_rid.size = 0;
    zl_mutex_unlock(&s->lk);
}

int zl_pipe_push(zl_pipe_t *p, zl_frame_t *frames, size_t n, bool control)
{
    if (p->ended)
        return EPIPE;
    int rc = zl_q_push(p->out, frames, n, control);
    switch (rc) {
    case ZL_Q_OK: return 0;
    case ZL_Q_FULL: return EAGAIN;
    case ZL_Q_NOMEM: return ENOMEM;
    default: return EPIPE;
    }
}

/* Under s->lk: the queue a control (flags, body) to a tcp/ipc peer takes,
 * and the length of its name when only the latest of its kind is kept.
 * Named controls (WEIGHT, FLOWSTATE): only the latest unsent one of a kind
 * stays queued. Subscriptions are all kept, in order. FLOWSTATE to a
 * ROUTER peer takes the Completion lane. */
/* The queue a control frame for p goes to, and *nlen, the length of the
 * name of a named control (WEIGHT, FLOWSTATE: only the latest unsent one
 * of a kind stays queued; 0 for others, which are all kept in order).
 * FLOWSTATE to a ROUTER peer takes the Completion lane. */
static zl_q_t *control_queue(zl_pipe_t *p, uint8_t flags, const void *body, size_t len,
                             size_t *nlen)
{
    *nlen = (flags & ZMP_F_CONTROL) ? zmp_control_name_len(body, len) : 0;
    if (*nlen > 0 && p->cmp_out != NULL && zmp_control_kind(body, len) == ZMP_CTL_FLOWSTATE)
        return p->cmp_out;
    return p->out;
}

int zl_pipe_control_reserve(zl_pipe_t *p, uint8_t flags, const void *body, size_t len)
{
    if (p->ended)
        return EPIPE;
    if (p->inproc)
        return zl_q_reserve_ctl(p->out);
    size_t nlen;
    return zl_q_reserve(control_queue(p, flags, body, len, &nlen), 1);
}

int zl_pipe_send_control_msg(zl_pipe_t *p, uint8_t flags, const zlink_msg_t *body)
{
    zl_frame_t f;
    memset(&f, 0, sizeof f);
    zl_msg_share(&f.msg, body);
    f.flags = flags;
    f.kind = ZMP_KIND_DATA;
    int rc;
    if (p->inproc) {
        rc = zl_q_push_ctl(p->out, &f);
        if (rc == ZL_Q_OK) {
            zl_inproc_controls_queued(p->link, p->link_side);
            return 0;
        }
        if (rc == ZL_Q_NOMEM)
            zl_msg_release(&f.msg); /* ZL_Q_CLOSED has released it */
    } else {
        size_t len = zl_msg_size(&f.msg), nlen;
        zl_q_t *q = control_queue(p, flags, zl_msg_data(&f.msg), len, &nlen);
        rc = p->ended   ? ZL_Q_CLOSED
             : nlen > 0 ? zl_q_push_control_latest(q, &f, zl_msg_data(&f.msg), nlen)
                        : zl_q_push(q, &f, 1, true);
        if (rc == ZL_Q_OK)
            return 0;
        zl_msg_release(&f.msg);
    }
    return rc == ZL_Q_NOMEM ? ENOMEM : EPIPE;
}

int zl_pipe_send_control(zl_pipe_t *p, uint8_t flags, const void *body, size_t len)
{
    zlink_msg_t m;
    if (zl_msg_init_copy(&m, body, len) != 0)
        return ENOMEM;
    int rc = zl_pipe_send_control_msg(p, flags, &m);
    zl_msg_release(&m);
    return rc;
}

int zl_socket_broadcast_control(zl_socket_t *s, uint8_t flags, const void *body, size_t len)
{
    zlink_msg_t m;
    if (zl_msg_init_copy(&m, body, len) != 0)
        return ENOMEM;
    /* Room on every queue first, so that no peer gets it unless all do. */
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended &&
            zl_pipe_control_reserve(p, flags, body, len) == ENOMEM) {
            zl_msg_release(&m);
            return ENOMEM;
        }
    }
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended)
            (void)zl_pipe_send_control_msg(p, flags, &m); /* reserved */
    }
    zl_msg_release(&m);
    return 0;
}

int zl_pipe_send_probe(zl_pipe_t *p)
{
    zl_frame_t f;
    memset(&f, 0, sizeof f);
    zl_msg_init_empty(&f.msg);
    int rc = zl_pipe_push(p, &f, 1, true);
    if (rc != 0)
        zl_msg_release(&f.msg);
    return rc == ENOMEM ? ENOMEM : 0;
}

void zl_pipe_close(zl_pipe_t *p)
{
    if (p->conn != NULL && !p->ended) {
        p->attached = false;
        zl_conn_close(p->conn, 0);
    }
}

void zl_pipe_violation(zl_socket_t *s, zl_pipe_t *p)
{
    ZL_UNUSED(s);
    zl_pipe_close(p);
}

void zl_socket_apply_controls(zl_socket_t *s)
{
    if (atomic_load_explicit(&s->ctl_pending, memory_order_acquire) == 0)
        return;
    atomic_store(&s->ctl_pending, 0);
    ZL_FOREACH_PIPE(s, p) {
        if (!p->inproc)
            continue;
        zl_frame_t f;
        while (zl_q_pop_ctl(p->in, &f)) {
            if (p->ended)
                zl_flow_foreign(s, &f);
            else if (s->ops->control != NULL)
                s->ops->control(s, p, &f);
            zl_msg_release(&f.msg);
        }
    }
}

/* ------------------------------------------------------------ inproc */

/* Tells the inproc peer that p's side is gone (once). No locks held. */
void zl_pipe_break_link(zl_pipe_t *p)
{
    zl_inproc_close(p->link, p->link_side);
}
