/*
 * socket.c — the socket object every pattern shares: wake-ups and wakers,
 * readiness for pollers, pins, creation, termination, teardown and free.
 * Pipes are pipe.c, endpoints endpoint.c, sending send.c, receiving
 * recv.c, options sockopt.c.
 *
 * Locks and threads: see socket.h. In short, s->lk guards the pipe list,
 * options and pattern state; queue locks nest inside it; notifies run with
 * no queue lock held; the wake path takes no lock (a futex word).
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
bool zl_pipe_token_blocked(zl_socket_t *s, zl_pipe_t *p)
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
            in = p->rxq.count > 0 ? !zl_pipe_token_blocked(s, p) : zl_q_poll_in(p->in);
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
void zl_socket_sleep(zl_socket_t *s, uint32_t seq, int64_t deadline)
{
    while (atomic_load(&s->wseq) == seq && !zl_deadline_passed(deadline))
        zl_plat_wait_change(&s->wseq, seq, deadline);
}

void zl_socket_notify(void *arg)
{
    zl_socket_wake(arg);
}

void zl_pipe_in_notify(void *arg)
{
    zl_pipe_t *p = arg;
    zl_socket_t *s = p->sock;
    /* The writer holds the pipe (the engine's reference, or the inproc
     * link's) while it pushes, so the reference taken here is not the
     * first one. The fair queue clears rx_posted after it took the inbox:
     * a notify that finds it still set is covered, because that pipe is
     * then on the ring before the consumer looks at the ring again. */
    if (!atomic_exchange(&p->rx_posted, true)) {
        atomic_fetch_add(&p->refs, 1);
        zl_pipe_t *head = atomic_load(&s->rx_inbox);
        do {
            p->rx_post_next = head;
        } while (!atomic_compare_exchange_weak(&s->rx_inbox, &head, p));
    }
    zl_socket_wake(s);
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

void zl_socket_leave(zl_socket_t *s)
{
    zl_handle_leave(s->hslot);
}

/* ---- what the facade reads (socket.h): the struct is private ---- */

int zl_socket_type(const zl_socket_t *s)
{
    return s->type;
}

bool zl_socket_terminated(const zl_socket_t *s)
{
    return atomic_load(&s->terminated);
}

zl_ctx_t *zl_socket_ctx(const zl_socket_t *s)
{
    return s->ctx;
}

int zl_socket_publish(zl_socket_t *s, void **handle)
{
    return zl_handle_new(ZL_HANDLE_SOCKET, s, handle, &s->hslot);
}

void zl_socket_unpublish(zl_socket_t *s)
{
    zl_handle_release(s->hslot);
}

void zl_socket_mark_closed(zl_socket_t *s)
{
    atomic_store(&s->closed, true);
}

void zl_socket_set_rid(zl_socket_t *s, const void *id, size_t size)
{
    zl_mutex_lock(&s->lk);
    s->opts.rid.size = (uint8_t)size;
    memcpy(s->opts.rid.data, id, size);
    zl_mutex_unlock(&s->lk);
}

uint64_t zl_socket_recv_token(const zl_socket_t *s)
{
    return s->recv_token;
}

uint64_t zl_socket_recv_route(zl_socket_t *s)
{
    zl_mutex_lock(&s->lk);
    uint64_t gen = s->recv_route;
    zl_mutex_unlock(&s->lk);
    return gen;
}

int64_t zl_socket_maxmsgsize_now(zl_socket_t *s)
{
    return atomic_load_explicit(&s->maxmsgsize_now, memory_order_relaxed);
}


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
    s->tran.ops = &zl_sock_tran_ops;
    s->ctx = ctx;
    s->ops = ops;
    zl_mutex_init(&s->lk);
    zl_mutex_init(&s->wake_lk);
    zl_sockopts_init(&s->opts, ctx, type, ops);
    atomic_init(&s->maxmsgsize_now, s->opts.maxmsgsize);
    atomic_init(&s->events_fd, -1);
    atomic_init(&s->spin_hot, true); /* a new socket spins at its first wait */
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
        zl_pipe_break_link(victim);
    }
    zl_mutex_lock(&s->lk);
    zl_pipe_t *p = s->pipes;
    while (p != NULL) {
        zl_pipe_t *next = p->next;
        zl_pipe_end_locked(s, p);
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
    if (zl_socket_rx_reserve(s, all) != 0) {
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
    zl_frames_release(s->rx, s->stash_n);
    if (s->ops->fini != NULL)
        s->ops->fini(s);
    free(s->proto);
    free(s->rx);
    free(s->eps);
    for (size_t i = 0; i < s->naliases; i++)
        free(s->aliases[i].endpoint);
    free(s->aliases);
    zl_socket_rx_inbox_clear(s);
    zl_hmap_fini(&s->pipes_by_rid);
    zl_mutex_fini(&s->wake_lk);
    zl_mutex_fini(&s->lk);
    free(s);
}
