/*
 * socket.c — what every socket pattern shares: lifecycle and the close
 * gate, endpoints (tcp, ipc and inproc through the engine),
 * pipes, and the blocking submit/receive loops.
 *
 * Locks and threads: see socket.h. In short, s->lk guards the pipe list,
 * options and pattern state; queue locks nest inside it; notifies run with
 * no queue lock held. The engine calls the pipe operations of
 * engine/transport.h (sock_tran_ops below) on I/O threads.
 *
 * Waiting (wait_for): attempt under s->lk; sleep without it until the wake
 * sequence moves or the deadline passes. Queue notifies, attaches and
 * shutdown call zl_socket_wake. See socket.h for why no edge is lost.
 */
#include "sock/socket.h"

#include "sock/completion.h"
#include "sock/ctx.h"
#include "engine/engine.h"
#include "util/errors.h"
#include "sock/monitor.h"
#include "sock/sockopt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void frames_release(zl_frame_t *frames, size_t n);
static int rx_reserve(zl_socket_t *s, size_t n);
static const zl_tran_sock_ops_t sock_tran_ops; /* the engine's view, below */

/* ------------------------------------------------------------ wake-ups */

void zl_socket_wake(zl_socket_t *s)
{
    atomic_store(&s->cq_edge, 1);
    atomic_fetch_add(&s->wseq, 1);
    if (atomic_load(&s->waiters) > 0)
        zl_plat_wake_all(&s->wseq);
    if (atomic_load(&s->nwakers) > 0) {
        zl_mutex_lock(&s->wake_lk);
        for (zl_waker_t *w = s->wakers; w != NULL; w = w->next)
            w->wake(w);
        zl_mutex_unlock(&s->wake_lk);
    }
}

void zl_socket_add_waker(zl_socket_t *s, zl_waker_t *w)
{
    zl_mutex_lock(&s->wake_lk);
    w->next = s->wakers;
    s->wakers = w;
    atomic_fetch_add(&s->nwakers, 1);
    zl_mutex_unlock(&s->wake_lk);
}

void zl_socket_remove_waker(zl_socket_t *s, zl_waker_t *w)
{
    zl_mutex_lock(&s->wake_lk);
    for (zl_waker_t **pp = &s->wakers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            atomic_fetch_sub(&s->nwakers, 1);
            break;
        }
    }
    zl_mutex_unlock(&s->wake_lk);
}

int zl_socket_state(const zl_socket_t *s)
{
    if (atomic_load(&s->closed))
        return ESHUTDOWN;
    return atomic_load(&s->terminated) ? ETERM : 0;
}

void zl_socket_pin(zl_socket_t *s)
{
    atomic_fetch_add(&s->pins, 1);
}

void zl_socket_unpin(zl_socket_t *s)
{
    if (atomic_fetch_sub(&s->pins, 1) == (ZL_PINS_ORPHAN | 1))
        zl_socket_free(s);
}

void zl_socket_orphan(zl_socket_t *s)
{
    if (atomic_fetch_or(&s->pins, ZL_PINS_ORPHAN) == 0)
        zl_socket_free(s);
}

/* Under s->lk: whether a minimal record would fit in p's out queue now;
 * registers the writer when not. */
static bool pipe_writable(zl_pipe_t *p)
{
    return p->attached && !p->ended && !zl_pipe_paused(p) &&
           zl_q_has_room(p->out, ZL_FRAME_OVERHEAD);
}

/* Under s->lk, the head of p->rxq fetched: a ROUTER with every reply token
 * in use cannot take a REQUEST; that source waits (its records stay
 * charged, so its HWM pushes back) while others are read. */
static bool pipe_token_blocked(zl_socket_t *s, zl_pipe_t *p)
{
    return s->type == ZLINK_ROUTER && p->rxq.count > 0 &&
           zl_fq_front(&p->rxq)->kind == ZMP_KIND_REQUEST && zl_req_tokens_full(s);
}

int zl_socket_readiness(zl_socket_t *s, int events)
{
    int ready = 0;
    zl_mutex_lock(&s->lk);
    if (s->closing || atomic_load(&s->terminated)) {
        zl_mutex_unlock(&s->lk);
        return 0;
    }
    zl_socket_apply_controls(s);
    if (s->type == ZLINK_DEALER || s->type == ZLINK_ROUTER) {
        ZL_FOREACH_PIPE(s, p) {
            zl_req_drain_replies(s, p); /* POLLIN is DATA only */
        }
    }
    if (events & ZL_POLLIN) {
        bool in = s->stash_n > 0;
        ZL_FOREACH_PIPE(s, p) {
            if (in)
                break;
            /* D/R: the drain above fetched the head when there was one. */
            in = p->rxq.count > 0 ? !pipe_token_blocked(s, p) : zl_q_poll_in(p->in);
        }
        if (in && s->type != ZLINK_PUB)
            ready |= ZL_POLLIN;
    }
    if (events & ZL_POLLOUT) {
        bool out = false;
        switch (s->type) {
        case ZLINK_SUB:
            break;
        case ZLINK_PUB:
            /* NODROP 0 never blocks; NODROP 1 needs room everywhere. */
            out = true;
            if (s->opts.pub_nodrop) {
                ZL_FOREACH_PIPE(s, p) {
                    if (p->attached && !p->ended && !pipe_writable(p))
                        out = false;
                }
            }
            break;
        default:
            ZL_FOREACH_PIPE(s, p) {
                if (s->type == ZLINK_DEALER && p->peer.weight == 0)
                    continue;
                if (pipe_writable(p)) {
                    out = true;
                    break;
                }
            }
            break;
        }
        zl_cq_process(s);
        if (out || s->cq.nwritable > 0)
            ready |= ZL_POLLOUT;
    }
    zl_mutex_unlock(&s->lk);
    return ready;
}

/* Sleeps until a wake-up newer than seq or the deadline. No locks held.
 * The kernel compares wseq with seq before sleeping, so a wake that
 * happened after the caller read seq is never missed. */
static void socket_sleep(zl_socket_t *s, uint32_t seq, int64_t deadline)
{
    while (atomic_load(&s->wseq) == seq && !zl_deadline_passed(deadline))
        zl_plat_wait_change(&s->wseq, seq, deadline);
}

void zl_socket_notify(void *arg)
{
    zl_socket_wake(arg);
}

void zl_pipe_stamp(zl_pipe_t *p)
{
    uint64_t v = atomic_fetch_add(&p->sock->credit_seq, 1) + 1;
    atomic_store(&p->credit_stamp, v);
}

void zl_pipe_credit_notify(void *arg)
{
    zl_pipe_t *p = arg;
    zl_pipe_stamp(p);
    zl_socket_wake(p->sock);
}

/* --------------------------------------------------------- lifecycle */

zl_socket_t *zl_socket_new(zl_ctx_t *ctx, const zl_proto_ops_t *ops)
{
    int type = ops->type;
    zl_socket_t *s = calloc(1, sizeof *s);
    if (s == NULL) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    if (ops->proto_size > 0) {
        s->proto = calloc(1, ops->proto_size);
        if (s->proto == NULL) {
            free(s);
            zl_set_errno(ENOMEM);
            return NULL;
        }
    }
    s->type = type;
    s->tran.ops = &sock_tran_ops;
    s->ctx = ctx;
    s->ops = ops;
    zl_mutex_init(&s->lk);
    zl_mutex_init(&s->wake_lk);
    zl_sockopts_init(&s->opts, ctx, type, ops);
    atomic_init(&s->maxmsgsize_now, s->opts.maxmsgsize);
    atomic_init(&s->events_fd, -1);
    s->flow_state = -1;
    atomic_init(&s->req_deadline, INT64_MAX);
    /* Reply tokens start far from any wire sequence a peer would use. */
    zl_plat_random(&s->cq.next_rtoken, sizeof s->cq.next_rtoken);
    s->cq.next_rtoken = (s->cq.next_rtoken >> 2) | (1ull << 62);
    if (ops->init != NULL)
        ops->init(s);
    s->tag = ZL_SOCK_TAG;
    return s;
}

void zl_socket_terminate(zl_socket_t *s)
{
    zl_mutex_lock(&s->lk);
    s->terminated = true;
    zl_mutex_unlock(&s->lk);
    zl_socket_wake(s);
    zl_monitor_socket_terminated(s); /* a blocked monitor receive: ETERM now */
}

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
    zl_q_end_t me = {zl_socket_notify, s};
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

static void pipe_link(zl_socket_t *s, zl_pipe_t *p)
{
    p->prev = NULL;
    p->next = s->pipes;
    if (s->pipes != NULL)
        s->pipes->prev = p;
    s->pipes = p;
    s->npipes++;
    p->linked = true;
}

static void pipe_unlink(zl_socket_t *s, zl_pipe_t *p)
{
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        s->pipes = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
    if (s->rr_next == p)
        s->rr_next = p->next;
    s->npipes--;
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
static void pipe_end_locked(zl_socket_t *s, zl_pipe_t *p)
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
        /* Replies that made it over the Completion lane still count; the
         * rest end NOT_CONNECTED at once. */
        zl_req_drain_cmp(s, p);
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
    pipe_end_locked(s, p);
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
    /* Readers are notified as sockets; writers as pipes (credit edges). */
    *reader = (zl_q_end_t){zl_socket_notify, s};
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

static const zl_tran_sock_ops_t sock_tran_ops = {
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
static void inproc_break_link(zl_pipe_t *p)
{
    zl_inproc_close(p->link, p->link_side);
}

/* ------------------------------------------------------------ teardown */

void zl_socket_teardown(zl_socket_t *s)
{
    zl_mutex_lock(&s->lk);
    s->closing = true;
    int linger = s->opts.linger;
    zl_endpoint_t **eps = s->eps;
    size_t neps = s->neps;
    s->eps = NULL;
    s->neps = s->eps_cap = 0;
    zl_mutex_unlock(&s->lk);
    zl_socket_wake(s);

    for (size_t i = 0; i < neps; i++)
        zl_endpoint_close(eps[i], linger);
    free(eps);
    zl_ctx_inproc_unbind(s->ctx, NULL, &s->tran);

    /* Pipes: inproc ones are ended here; engine ones end when the engine
     * closes their connection (it calls zl_socket_pipe_ended). */
    for (;;) {
        zl_pipe_t *victim = NULL;
        zl_mutex_lock(&s->lk);
        ZL_FOREACH_PIPE(s, p) {
            if (p->inproc && !zl_inproc_closed(p->link, p->link_side)) {
                victim = p;
                break;
            }
        }
        zl_mutex_unlock(&s->lk);
        if (victim == NULL)
            break;
        inproc_break_link(victim);
    }
    zl_mutex_lock(&s->lk);
    zl_pipe_t *p = s->pipes;
    while (p != NULL) {
        zl_pipe_t *next = p->next;
        pipe_end_locked(s, p);
        zl_q_close_reader(p->in);     /* unread records are discarded */
        if (p->cmp_in != NULL)
            zl_q_close_reader(p->cmp_in);
        if (!p->inproc) {
            zl_q_close_writer(p->out); /* the engine flushes, then closes */
            if (p->cmp_out != NULL)
                zl_q_close_writer(p->cmp_out);
            if (p->conn != NULL && p->ep == NULL)
                zl_conn_close(p->conn, linger);
        }
        zl_socket_reap_pipe(s, p);
        p = next;
    }
    zl_cq_clear(s);
    zl_sockopt_release(s); /* ZLINK_FD */
    s->tag = ZL_SOCK_DEAD;
    zl_mutex_unlock(&s->lk);
}

int zl_socket_stash(zl_socket_t *s, zlink_msg_t *first, zlink_msg_t *parts, size_t n)
{
    zl_mutex_lock(&s->lk);
    size_t all = n + (first != NULL ? 1 : 0);
    /* The record came out of s->rx a moment ago, and the scratch never
     * shrinks, so it still has room for every frame: putting the record
     * back needs no memory. (The check is for a caller that breaks that.) */
    if (rx_reserve(s, all) != 0) {
        zl_mutex_unlock(&s->lk);
        return ENOMEM;
    }
    zl_frame_t *x = s->rx;
    size_t k = 0;
    if (first != NULL) {
        memset(&x[k], 0, sizeof x[k]);
        memcpy(&x[k++].msg, first, sizeof *first);
    }
    for (size_t i = 0; i < n; i++) {
        memset(&x[k], 0, sizeof x[k]);
        memcpy(&x[k++].msg, &parts[i], sizeof parts[i]);
    }
    for (size_t i = 0; i + 1 < all; i++)
        x[i].flags = ZMP_F_MORE;
    s->stash_n = all;
    zl_mutex_unlock(&s->lk);
    return 0;
}

void zl_socket_free(zl_socket_t *s)
{
    frames_release(s->rx, s->stash_n);
    if (s->ops->fini != NULL)
        s->ops->fini(s);
    free(s->proto);
    free(s->rx);
    free(s->eps);
    for (size_t i = 0; i < s->naliases; i++)
        free(s->aliases[i].endpoint);
    free(s->aliases);
    zl_mutex_fini(&s->wake_lk);
    zl_mutex_fini(&s->lk);
    free(s);
}

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
        inproc_break_link(victim);
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
    zl_pipe_t *victim = NULL;
    zl_mutex_lock(&s->lk);
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended && zl_rid_equal(&p->rid, rid)) {
            victim = p;
            break;
        }
    }
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
    inproc_break_link(victim);
    zl_socket_pipe_ended(s, victim);
    return 0;
}

/* -------------------------------------------------------------- submit */

#define SMALL_RECORD 8

/* The wait discipline shared by submit and receive: attempt under s->lk;
 * on EAGAIN count ourselves as a waiter, attempt once more, then sleep
 * until a wake-up newer than the attempt or the deadline. */
typedef int (*attempt_fn)(zl_socket_t *s, void *arg);

/* timeo_opt points into s->opts (sndtimeo or rcvtimeo); it is read under
 * s->lk at the first attempt (the snapshot) and the deadline is computed
 * only once a wait is needed, so the hot path reads no clock. */
int zl_socket_wait_for(zl_socket_t *s, int flags, const int *timeo_opt, attempt_fn attempt,
                       void *arg)
{
    int64_t deadline = 0;
    int timeo = 0;
    bool first = true, counted = false;
    int rc;
    for (;;) {
        uint32_t seq = atomic_load(&s->wseq);
        zl_mutex_lock(&s->lk);
        if (first)
            timeo = *timeo_opt;
        if (s->terminated)
            rc = ETERM;
        else if (s->closing)
            rc = ESHUTDOWN;
        else {
            zl_socket_apply_controls(s);
            rc = attempt(s, arg);
        }
        zl_mutex_unlock(&s->lk);
        if (rc != EAGAIN || (flags & ZLINK_DONTWAIT) || timeo == 0)
            break;
        if (first) {
            deadline = zl_deadline_from_ms(timeo);
            first = false;
        } else if (zl_deadline_passed(deadline)) {
            break;
        }
        if (!counted) {
            atomic_fetch_add(&s->waiters, 1);
            counted = true;
            continue;
        }
        /* A pending request's timeout also ends the sleep (its outcome is
         * a completion record). */
        int64_t until = deadline;
        int64_t rd = atomic_load(&s->req_deadline);
        if (rd != INT64_MAX && (until < 0 || rd < until))
            until = rd;
        socket_sleep(s, seq, until);
    }
    if (counted)
        atomic_fetch_sub(&s->waiters, 1);
    return rc;
}

/* What a submit carries besides the record: a request to register, or
 * the reply token a reply retires. */
typedef struct submit_extra {
    zl_req_t *req;      /* zlink_request: admitted -> waits for its outcome */
    uint64_t *req_id;   /* zlink_request: receives the id, under s->lk (req
                           belongs to the socket once admitted) */
    uint64_t reply_seq; /* zlink_reply: the request's sequence */
    uint64_t reply_token;
    uint8_t reply_kind; /* ZMP_KIND_REPLY or ZMP_KIND_ERROR_REPLY */
} submit_extra_t;


struct send_args {
    const zlink_routing_id_t *rid;
    zl_frame_t *frames;
    size_t n;
    uint64_t payload;   /* sum of part sizes, for MAXMSGSIZE */
    const submit_extra_t *x;
    uint64_t credit_seq; /* s->credit_seq before the last attempt */
};

/* Under s->lk: one admission attempt (the wait loop retries on EAGAIN). */
static int send_attempt(zl_socket_t *s, void *arg)
{
    struct send_args *a = arg;
    /* Edges after this point count for a wait token of this attempt. */
    a->credit_seq = atomic_load(&s->credit_seq);
    if (s->opts.maxmsgsize > 0 && a->payload > (uint64_t)s->opts.maxmsgsize)
        return EMSGSIZE;
    const submit_extra_t *x = a->x;
    if (x == NULL)
        return s->ops->send(s, a->rid, a->frames, a->n);
    if (x->req != NULL) {
        /* A request holds a completion slot from admission on; none free
         * means BACKPRESSURED at once, whatever the flags. */
        if (zl_cq_slots_used(s) >= ZL_CQ_SLOTS)
            return ENOBUFS;
        if (zl_req_reserve(s) != 0)
            return ENOMEM;
        if (++s->cq.next_seq == 0)
            ++s->cq.next_seq;
        a->frames[0].kind = ZMP_KIND_REQUEST;
        a->frames[0].seq = s->cq.next_seq;
        x->req->seq = s->cq.next_seq;
        s->req_send = true;
        int rc = s->ops->send(s, a->rid, a->frames, a->n);
        s->req_send = false;
        if (rc == 0) {
            int64_t ms = x->req->deadline_ns > 0 ? x->req->deadline_ns : s->opts.request_timeout_ms;
            x->req->deadline_ns = zl_clock_ns() + ms * 1000000;
            zl_req_admitted(s, x->req);
            *x->req_id = x->req->id;
        }
        return rc;
    }
    a->frames[0].kind = x->reply_kind;
    a->frames[0].seq = x->reply_seq;
    s->reply_send = true;
    int rc = s->ops->send(s, a->rid, a->frames, a->n);
    s->reply_send = false;
    if (rc == 0)
        zl_req_token_used(s, x->reply_token);
    return rc;
}

static int submit_frames(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames,
                         size_t n, uint64_t payload, int flags, const submit_extra_t *x,
                         uint64_t *credit_seq)
{
    struct send_args a = {rid, frames, n, payload, x, 0};
    int rc = zl_socket_wait_for(s, flags, &s->opts.sndtimeo, send_attempt, &a);
    *credit_seq = a.credit_seq;
    return rc;
}

static void frames_release(zl_frame_t *frames, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (zl_msg_valid(&frames[i].msg))
            zl_msg_release(&frames[i].msg);
}

/* Moves parts into frames; validates; consumes parts whatever happens.
 * *payload receives the total payload size of all frames. */
static int frames_from_parts(zl_frame_t *frames, size_t first, zlink_msg_t *parts, size_t n,
                             uint64_t *payload)
{
    int rc = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        zl_frame_t *f = &frames[first + i];
        memset(f, 0, sizeof *f);
        if (!zl_msg_valid(&parts[i])) {
            zl_msg_init_empty(&f->msg);
            zl_msg_init_empty(&parts[i]);
            rc = EFAULT;
            continue;
        }
        zl_msg_move_raw(&f->msg, &parts[i]);
        total += zl_msg_size(&f->msg);
    }
    size_t all = first + n;
    for (size_t i = 0; i < all; i++) {
        frames[i].kind = ZMP_KIND_DATA;
        frames[i].flags = i + 1 < all ? ZMP_F_MORE : 0;
    }
    for (size_t i = 0; i < first; i++)
        total += zl_msg_size(&frames[i].msg);
    *payload = total;
    return rc;
}

static int submit_common(zl_socket_t *s, const zlink_routing_id_t *rid, const char *topic,
                         zlink_msg_t *parts, size_t n, int flags, const submit_extra_t *x,
                         uint64_t *credit_seq)
{
    size_t extra = topic != NULL ? 1 : 0;
    size_t all = n + extra;
    zl_frame_t small[SMALL_RECORD];
    zl_frame_t *frames = all <= SMALL_RECORD ? small : malloc(all * sizeof *frames);
    if (frames == NULL) {
        for (size_t i = 0; i < n; i++)
            if (zl_msg_valid(&parts[i])) {
                zl_msg_release(&parts[i]);
                zl_msg_init_empty(&parts[i]);
            }
        return ENOMEM;
    }
    int rc = 0;
    if (extra) {
        memset(&frames[0], 0, sizeof frames[0]);
        rc = zl_msg_init_copy(&frames[0].msg, topic, strlen(topic));
        if (rc != 0)
            zl_msg_init_empty(&frames[0].msg);
    }
    uint64_t payload = 0;
    int rc2 = frames_from_parts(frames, extra, parts, n, &payload);
    if (rc == 0)
        rc = rc2;
    if (rc == 0)
        rc = submit_frames(s, rid, frames, all, payload, flags, x, credit_seq);
    if (rc != 0)
        frames_release(frames, all);
    if (frames != small)
        free(frames);
    return rc;
}

static int submit_with(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                       size_t n, int flags, void *user_context, uint64_t *token,
                       const submit_extra_t *x);

static bool has_tokens(int type)
{
    return type == ZLINK_PAIR || type == ZLINK_DEALER || type == ZLINK_ROUTER ||
           type == ZLINK_STREAM;
}

int zl_socket_submit(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                     size_t n, int flags, void *user_context, uint64_t *token)
{
    return submit_with(s, rid, parts, n, flags, user_context, token, NULL);
}

int zl_socket_submit_request(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                             size_t n, int flags, zl_req_t *req, uint64_t *req_id,
                             uint64_t *token)
{
    submit_extra_t x = {req, req_id, 0, 0, 0};
    return submit_with(s, rid, parts, n, flags, req->user_context, token, &x);
}

int zl_socket_submit_reply(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                           size_t n, uint64_t seq, uint64_t reply_token, bool error)
{
    submit_extra_t x = {NULL, NULL, seq, reply_token,
                        error ? ZMP_KIND_ERROR_REPLY : ZMP_KIND_REPLY};
    uint64_t unused;
    return submit_common(s, rid, NULL, parts, n, ZLINK_SEND_FLAGS_NONE, &x, &unused);
}

static int submit_with(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                       size_t n, int flags, void *user_context, uint64_t *token,
                       const submit_extra_t *x)
{
    uint64_t since = 0;
    int rc = submit_common(s, rid, NULL, parts, n, flags, x, &since);
    if (rc == EAGAIN && (flags & ZLINK_DONTWAIT) && has_tokens(s->type)) {
        uint64_t id = 0;
        zl_mutex_lock(&s->lk);
        int trc = s->closing ? ESHUTDOWN
                             : zl_cq_register(s, rid, user_context, x != NULL && x->req != NULL,
                                              since, &id);
        zl_mutex_unlock(&s->lk);
        if (trc != 0)
            return trc;
        if (token != NULL)
            *token = id;
    }
    return rc;
}

int zl_socket_submit_topic(zl_socket_t *s, const char *topic, zlink_msg_t *parts, size_t n,
                           int flags)
{
    uint64_t unused;
    return submit_common(s, NULL, topic, parts, n, flags, NULL, &unused);
}

/* ------------------------------------------------------------- receive */

/* Under s->lk: ensures the scratch holds at least n frames. */
static int rx_reserve(zl_socket_t *s, size_t n)
{
    if (s->rx_cap >= n)
        return 0;
    size_t cap = s->rx_cap ? s->rx_cap : 8;
    while (cap < n)
        cap *= 2;
    zl_frame_t *x = realloc(s->rx, cap * sizeof *x);
    if (x == NULL)
        return ENOMEM;
    s->rx = x;
    s->rx_cap = cap;
    return 0;
}

/* Under s->lk: the next whole record of p into s->rx. Records are taken
 * from the locked queue in batches (one lock per batch) into p->rxq; each
 * record's credit goes back lock-free through zl_q_consume. Returns 0 (*n
 * frames), EAGAIN (nothing queued), EPIPE (nothing queued and the writer
 * is gone), ENOBUFS (*n = the record's frame count > cap), ENOMEM. */
static int pipe_pop(zl_socket_t *s, zl_pipe_t *p, size_t cap, size_t *n)
{
    if (s->type == ZLINK_DEALER || s->type == ZLINK_ROUTER) {
        /* Replies at the head go to the CQ; this also fetched the batch. */
        int drc = zl_req_drain_replies(s, p);
        if (drc != 0)
            return drc;
        if (pipe_token_blocked(s, p))
            return EAGAIN; /* held (and not credited) until a token frees */
    } else if (p->rxq.count == 0) {
        uint64_t charge = 0;
        bool eof = false;
        if (zl_q_take_all(p->in, &p->rxq, &charge, &eof) == 0)
            return eof ? EPIPE : EAGAIN;
    }
    size_t k = 1;
    while (zl_fq_at(&p->rxq, k - 1)->flags & ZMP_F_MORE)
        k++;
    *n = k;
    if (k > cap)
        return ENOBUFS;
    if (rx_reserve(s, k) != 0)
        return ENOMEM;
    uint64_t charge = 0;
    for (size_t i = 0; i < k; i++) {
        zl_frame_t *f = zl_fq_front(&p->rxq);
        charge += zl_frame_charge(f);
        memcpy(&s->rx[i], f, sizeof *f);
        zl_fq_pop(&p->rxq);
    }
    zl_q_consume(p->in, charge);
    return 0;
}

/* Under s->lk: one fair-queue pass. Returns 0 with the record in s->rx
 * (*n frames, *src pipe), EAGAIN when nothing is ready, ENOBUFS when the
 * next record has more than cap frames (*n = its count), ENOMEM. */
static int fair_pop(zl_socket_t *s, size_t cap, size_t *n, zl_pipe_t **src)
{
    if (s->stash_n > 0) {
        if (s->stash_n > cap) {
            *n = s->stash_n;
            return ENOBUFS;
        }
        /* The stashed record already sits in s->rx. */
        *n = s->stash_n;
        *src = NULL;
        s->stash_n = 0;
        return 0;
    }
    size_t tries = s->npipes;
    zl_pipe_t *p = s->rr_next != NULL ? s->rr_next : s->pipes;
    while (tries-- > 0 && p != NULL) {
        zl_pipe_t *next = p->next != NULL ? p->next : s->pipes;
        size_t got = 0;
        int r = pipe_pop(s, p, cap, &got);
        if (r == ENOBUFS) {
            *n = got;
            s->rr_next = p;
            return ENOBUFS;
        }
        if (r == ENOMEM)
            return ENOMEM;
        if (r == 0) {
            s->rr_next = next;
            if (s->ops->accept != NULL && !s->ops->accept(s, p, s->rx, got)) {
                frames_release(s->rx, got);
                tries++; /* look at this pipe again */
                continue;
            }
            *n = got;
            *src = p;
            return 0;
        }
        if (r == EPIPE && p->ended) {
            if (s->rr_next == p)
                s->rr_next = next == p ? NULL : next;
            zl_socket_reap_pipe(s, p);
            if (s->npipes == 0)
                break;
        }
        p = next;
    }
    return EAGAIN;
}

struct recv_args {
    size_t cap;
    size_t n;
    zl_pipe_t *src;
    zlink_msg_t *first;
    zlink_msg_t *parts;
    size_t *count;
    const zlink_routing_id_t **pipe_rid;
};

/* Under s->lk: pops one record and hands it to the caller's slots. */
static int recv_attempt(zl_socket_t *s, void *arg)
{
    struct recv_args *a = arg;
    size_t skip = a->first != NULL ? 1 : 0;
    int rc = fair_pop(s, a->cap + skip, &a->n, &a->src);
    if (rc == ENOBUFS) {
        *a->count = a->n - skip;
    } else if (rc == 0) {
        if (skip)
            memcpy(a->first, &s->rx[0].msg, sizeof *a->first);
        for (size_t i = skip; i < a->n; i++)
            memcpy(&a->parts[i - skip], &s->rx[i].msg, sizeof a->parts[0]);
        *a->count = a->n - skip;
        if (a->src != NULL) {
            s->recv_rid = a->src->rid; /* else: a stashed record keeps its rid */
            s->recv_route = a->src->id;
            s->recv_token = 0;
            if (s->type == ZLINK_ROUTER && s->rx[0].kind == ZMP_KIND_REQUEST)
                s->recv_token = zl_req_token_new(s, a->src, &s->rx[0]);
        }
        if (a->pipe_rid != NULL)
            *a->pipe_rid = &s->recv_rid;
    }
    return rc;
}

int zl_socket_receive(zl_socket_t *s, zlink_msg_t *first, zlink_msg_t *parts, size_t cap,
                      size_t *count, int flags, const zlink_routing_id_t **pipe_rid)
{
    struct recv_args a = {cap, 0, NULL, first, parts, count, pipe_rid};
    return zl_socket_wait_for(s, flags, &s->opts.rcvtimeo, recv_attempt, &a);
}

/* ------------------------------------------------------------- routes */

bool zl_socket_route_changed(zl_socket_t *s)
{
    zl_mutex_lock(&s->lk);
    bool changed = s->route_gen != s->route_acked;
    zl_mutex_unlock(&s->lk);
    return changed;
}

/* ROUTER routes snapshot: one row per routing id with a live selected pipe
 * (generation = that pipe's connection id). 0, or ENOBUFS with *count set
 * to the rows needed (and POLLROUTE left set). */
int zl_socket_routes_snapshot(zl_socket_t *s, zlink_routing_id_t *rids, uint64_t *gens,
                              size_t cap, size_t *count);
int zl_socket_routes_snapshot(zl_socket_t *s, zlink_routing_id_t *rids, uint64_t *gens,
                              size_t cap, size_t *count)
{
    zl_mutex_lock(&s->lk);
    size_t n = 0;
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended)
            n++;
    }
    int rc = 0;
    if (n > cap) {
        rc = ENOBUFS;
    } else {
        size_t i = 0;
        ZL_FOREACH_PIPE(s, p) {
            if (!p->attached || p->ended)
                continue;
            rids[i] = p->rid;
            gens[i] = p->id;
            i++;
        }
        s->route_acked = s->route_gen;
    }
    *count = n;
    zl_mutex_unlock(&s->lk);
    return rc;
}
