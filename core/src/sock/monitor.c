/*
 * monitor.c — the socket monitor: its event queue, the producer side
 * (zl_socket_event and friends, called by the engine and the patterns),
 * the consumer side (receive, status, close) and the hooks pollers use.
 *
 * Design notes
 *  - Owns: one zl_monitor_t per open monitor, its FIFO of events (one
 *    malloc'd node per event) and its waker list. A socket has at most one
 *    monitor (s->monitor); a second open fails with EBUSY.
 *  - Budget: every queued event is charged ZLINK_MONITOR_EVENT_CHARGE
 *    bytes. An event is admitted when the queue is empty (one oversize
 *    event on empty, as for pipes) or when the queued charge plus its own
 *    stays within monitor_hwm_bytes; otherwise the new event is dropped
 *    (drop-newest, no counter, no coalescing). A failed allocation drops it
 *    too. Producers therefore never wait.
 *  - Order: every producer posts under s->lk, so events are queued in the
 *    order their posts took the socket lock: the commit order. There is no
 *    clock in an event.
 *  - Threads: producers run on I/O threads (engine events) and application
 *    threads (WEIGHT controls of inproc pipes, the close hook). The
 *    consumer (receive, status, close) is one application thread at a time
 *    (the caller serializes receive and close). Pollers call the readiness
 *    hooks from their own threads.
 *  - Locks: s->lk, then m->lk (a leaf: the queue, the stopped flag, the
 *    waker list). s->monitor is written under s->lk with an atomic store
 *    and may be read without the lock with an atomic load, only to skip
 *    work when no monitor is open; anything that touches the monitor holds
 *    s->lk, so once zl_monitor_close cleared the pointer no producer can
 *    reach the monitor. The consumer takes only m->lk (plus s->lk briefly
 *    for the RCVTIMEO snapshot and the status).
 *  - Wake-ups: m->wseq is bumped under m->lk by every queued event and by
 *    stop/terminate; a blocked receive counts itself in m->waiters and
 *    sleeps on wseq with the value it read under m->lk, so no event can be
 *    missed between its check and its sleep. Registered wakers (pollers)
 *    are called at the same points, under m->lk.
 *  - Lifetime: an open monitor pins its socket (zl_socket_pin), so the
 *    socket's memory and lock stay valid after zlink_close and even after
 *    zlink_ctx_term; zlink_monitor_close unpins it. The monitor itself is
 *    reference counted (the handle plus poller pins).
 */
#include "sock/sock_impl.h"
#include "sock/monitor.h"

#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct zl_mon_node {
    struct zl_mon_node *next;
    zlink_monitor_event_t ev;
} zl_mon_node_t;

struct zl_monitor {
    _Atomic int refs;            /* the handle + poller pins */
    zl_socket_t *sock;           /* pinned while open; NULL after close */
    uint32_t events;             /* subscribed bits (immutable) */
    uint64_t hwm;                /* byte budget (immutable) */
    zl_mutex_t lk;               /* leaf: everything below */
    zl_mon_node_t *head, *tail;
    size_t count;
    uint64_t bytes;              /* charge queued */
    bool stopped;                /* the socket closed: nothing more comes */
    zl_waker_t *wakers;
    _Atomic uint32_t wseq;       /* bumped by every wake; receivers sleep on it */
    _Atomic int waiters;
};

#define CHARGE ZLINK_MONITOR_EVENT_CHARGE

static inline zl_monitor_t *sock_monitor(zl_socket_t *s)
{
    return __atomic_load_n(&s->monitor, __ATOMIC_ACQUIRE);
}

static inline void sock_set_monitor(zl_socket_t *s, zl_monitor_t *m)
{
    __atomic_store_n(&s->monitor, m, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ producing */

/* Under m->lk: tells the receiver and the pollers. */
static void mon_wake_locked(zl_monitor_t *m)
{
    atomic_fetch_add(&m->wseq, 1);
    if (atomic_load(&m->waiters) > 0)
        zl_plat_wake_all(&m->wseq);
    for (zl_waker_t *w = m->wakers; w != NULL; w = w->next)
        w->wake(w);
}

/* Under s->lk: queues a copy of ev if subscribed and admitted. */
static void mon_push(zl_monitor_t *m, const zlink_monitor_event_t *ev)
{
    if (!(m->events & ev->event))
        return;
    zl_mutex_lock(&m->lk);
    bool admit = !m->stopped &&
                 (m->count == 0 || (m->hwm >= CHARGE && m->bytes <= m->hwm - CHARGE));
    zl_mon_node_t *n = admit ? malloc(sizeof *n) : NULL;
    if (n != NULL) {
        n->next = NULL;
        memcpy(&n->ev, ev, sizeof *ev);
        if (m->tail != NULL)
            m->tail->next = n;
        else
            m->head = n;
        m->tail = n;
        m->count++;
        m->bytes += CHARGE;
        mon_wake_locked(m);
    }
    zl_mutex_unlock(&m->lk);
}

static void copy_rid(zlink_routing_id_t *dst, const zlink_routing_id_t *src)
{
    dst->size = src->size;
    memcpy(dst->data, src->data, src->size);
}

/* Under s->lk: routing id, connection id and (for a live pipe made through
 * a tcp/ipc endpoint) the endpoint address where the caller gave none. */
static void fill_from_pipe(zlink_monitor_event_t *ev, const zl_pipe_t *p)
{
    copy_rid(&ev->rid, p->rid.size > 0 ? &p->rid : &p->peer.rid);
    ev->connection_id = p->id;
    if (p->ended || p->ep == NULL || ev->local_addr[0] != '\0' || ev->remote_addr[0] != '\0')
        return;
    char *dst = zl_endpoint_is_bind(p->ep) ? ev->local_addr : ev->remote_addr;
    snprintf(dst, sizeof ev->local_addr, "%s", zl_endpoint_name(p->ep));
}

bool zl_monitor_wants(zl_socket_t *s, uint32_t event)
{
    if (sock_monitor(s) == NULL)
        return false;
    zl_mutex_lock(&s->lk);
    zl_monitor_t *m = sock_monitor(s);
    bool wants = m != NULL && (m->events & event) != 0;
    zl_mutex_unlock(&s->lk);
    return wants;
}

void zl_monitor_post(zl_socket_t *s, bool have_lock, const zlink_monitor_event_t *ev)
{
    if (!have_lock) {
        if (sock_monitor(s) == NULL)
            return;
        zl_mutex_lock(&s->lk);
    }
    zl_monitor_t *m = sock_monitor(s);
    if (m != NULL)
        mon_push(m, ev);
    if (!have_lock)
        zl_mutex_unlock(&s->lk);
}

void zl_socket_event(zl_socket_t *s, bool have_lock, uint32_t event, uint64_t value,
                     const zl_pipe_t *p, const char *local, const char *remote, uint32_t lane,
                     uint32_t flags)
{
    if (!have_lock) {
        if (sock_monitor(s) == NULL)
            return;
        zl_mutex_lock(&s->lk);
    }
    zl_monitor_t *m = sock_monitor(s);
    if (m != NULL && (m->events & event)) {
        zlink_monitor_event_t ev;
        memset(&ev, 0, sizeof ev);
        ev.event = event;
        ev.value = value;
        ev.transport_lane = lane;
        ev.flags = flags;
        if (local != NULL)
            snprintf(ev.local_addr, sizeof ev.local_addr, "%s", local);
        if (remote != NULL)
            snprintf(ev.remote_addr, sizeof ev.remote_addr, "%s", remote);
        if (p != NULL)
            fill_from_pipe(&ev, p);
        mon_push(m, &ev);
    }
    if (!have_lock)
        zl_mutex_unlock(&s->lk);
}

void zl_monitor_post_ready(zl_socket_t *s, zlink_monitor_event_t *ev, const zl_pipe_t *p)
{
    if (sock_monitor(s) == NULL)
        return;
    zl_mutex_lock(&s->lk);
    zl_monitor_t *m = sock_monitor(s);
    if (m != NULL) {
        uint64_t ready = 0;
        ZL_FOREACH_PIPE(s, q) {
            if (q->attached && !q->ended)
                ready++;
        }
        ev->value = ready;
        if (p != NULL && p->attached && !p->ended)
            copy_rid(&ev->rid, p->rid.size > 0 ? &p->rid : &p->peer.rid);
        mon_push(m, ev);
    }
    zl_mutex_unlock(&s->lk);
}

void zl_monitor_socket_closed(zl_socket_t *s)
{
    if (sock_monitor(s) == NULL)
        return;
    zl_mutex_lock(&s->lk);
    zl_monitor_t *m = sock_monitor(s);
    if (m != NULL) {
        uint64_t why =
            atomic_load(&s->terminated) ? ZLINK_DISCONNECT_CTX_TERM : ZLINK_DISCONNECT_UNKNOWN;
        ZL_FOREACH_PIPE(s, p) {
            if (p->attached && !p->ended && !p->inproc)
                zl_socket_event(s, true, ZLINK_EVENT_DISCONNECTED, why, p, NULL, NULL,
                                ZLINK_MONITOR_TRANSPORT_LANE_APPLICATION, 0);
        }
        zl_socket_event(s, true, ZLINK_EVENT_MONITOR_STOPPED, 0, NULL, NULL, NULL, 0, 0);
        zl_mutex_lock(&m->lk);
        m->stopped = true;
        mon_wake_locked(m);
        zl_mutex_unlock(&m->lk);
        sock_set_monitor(s, NULL);
    }
    zl_mutex_unlock(&s->lk);
}

void zl_monitor_socket_terminated(zl_socket_t *s)
{
    if (sock_monitor(s) == NULL)
        return;
    zl_mutex_lock(&s->lk);
    zl_monitor_t *m = sock_monitor(s);
    if (m != NULL) {
        zl_mutex_lock(&m->lk);
        mon_wake_locked(m);
        zl_mutex_unlock(&m->lk);
    }
    zl_mutex_unlock(&s->lk);
}

/* ------------------------------------------------------------ the handle */

int zl_monitor_open(zl_socket_t *s, uint32_t events, uint64_t hwm, zl_monitor_t **out)
{
    zl_monitor_t *m = calloc(1, sizeof *m);
    if (m == NULL)
        return ENOMEM;
    zl_mutex_init(&m->lk);
    atomic_init(&m->refs, 1);
    m->sock = s;
    m->events = events;
    m->hwm = hwm != 0 ? hwm : ZLINK_MONITOR_HWM_DFLT;
    int rc = 0;
    zl_mutex_lock(&s->lk);
    if (s->closing)
        rc = ESHUTDOWN;
    else if (atomic_load(&s->terminated))
        rc = ETERM;
    else if (sock_monitor(s) != NULL)
        rc = EBUSY;
    if (rc == 0) {
        zl_socket_pin(s);
        sock_set_monitor(s, m);
    }
    zl_mutex_unlock(&s->lk);
    if (rc != 0) {
        zl_mutex_fini(&m->lk);
        free(m);
        return rc;
    }
    *out = m;
    return 0;
}

int zl_monitor_recv(zl_monitor_t *m, zlink_monitor_event_t *ev, int flags)
{
    zl_socket_t *s = m->sock;
    bool have_deadline = false;
    int64_t deadline = -1;
    for (;;) {
        zl_mutex_lock(&m->lk);
        zl_mon_node_t *n = m->head;
        if (n != NULL) {
            m->head = n->next;
            if (m->head == NULL)
                m->tail = NULL;
            m->count--;
            m->bytes -= CHARGE;
            zl_mutex_unlock(&m->lk);
            memcpy(ev, &n->ev, sizeof *ev);
            free(n);
            return 0;
        }
        bool stopped = m->stopped;
        uint32_t seq = atomic_load(&m->wseq);
        zl_mutex_unlock(&m->lk);
        if (stopped)
            return ESHUTDOWN;
        if (atomic_load(&s->terminated))
            return ETERM;
        if (flags & ZLINK_RECV_FLAGS_DONTWAIT)
            return EAGAIN;
        if (!have_deadline) {
            zl_mutex_lock(&s->lk);
            int timeo = s->opts.rcvtimeo;
            zl_mutex_unlock(&s->lk);
            deadline = zl_deadline_from_ms(timeo);
            have_deadline = true;
        }
        if (zl_deadline_passed(deadline))
            return EAGAIN;
        /* Counted before the futex compares wseq with seq: a push after our
         * unlock either changed wseq (no sleep) or sees us waiting. */
        atomic_fetch_add(&m->waiters, 1);
        zl_plat_wait_change(&m->wseq, seq, deadline);
        atomic_fetch_sub(&m->waiters, 1);
    }
}

/* Records (last frames) and charge of a frame FIFO. */
static void fq_totals(const zl_fq_t *q, uint64_t *records, uint64_t *bytes)
{
    const zl_fq_chunk_t *c = q->head;
    uint32_t pos = q->head_pos;
    for (size_t left = q->count; left > 0; left--) {
        if (pos == ZL_FQ_CHUNK) {
            c = c->next;
            pos = 0;
        }
        const zl_frame_t *f = &c->f[pos++];
        if (!(f->flags & ZMP_F_MORE))
            (*records)++;
        *bytes += zl_frame_charge(f);
    }
}

void zl_monitor_status(zl_monitor_t *m, zlink_monitor_status_t *st)
{
    memset(st, 0, sizeof *st);
    st->abi_version = ZLINK_MONITOR_STATUS_ABI_VERSION;
    st->struct_size = (uint32_t)sizeof *st;
    st->source_kind = ZLINK_MONITOR_SOURCE_SOCKET;
    zl_socket_t *s = m->sock;
    zl_mutex_lock(&s->lk);
    zl_mutex_lock(&m->lk);
    bool stopped = m->stopped;
    zl_mutex_unlock(&m->lk);
    if (stopped || s->closing || s->tag != ZL_SOCK_TAG) {
        st->state_flags = ZLINK_MONITOR_STATE_CLOSED;
        zl_mutex_unlock(&s->lk);
        return;
    }
    st->detail_flags =
        ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS | ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS;
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended) {
            st->state_flags |= ZLINK_MONITOR_STATE_READY;
            st->snd_pending_msgs += zl_q_records(p->out);
            st->snd_pending_bytes += zl_q_bytes(p->out);
        }
        /* The in-queue's charge also covers what the socket took into its
         * private batch (rxq) but has not handed out yet. */
        st->rcv_pending_msgs += zl_q_records(p->in);
        st->rcv_pending_bytes += zl_q_bytes(p->in);
        uint64_t rxq_bytes = 0;
        fq_totals(&p->rxq, &st->rcv_pending_msgs, &rxq_bytes);
        if (p->cmp_out != NULL) {
            /* The Completion lane has no HWM but is still counted. */
            if (p->attached && !p->ended) {
                st->snd_pending_msgs += zl_q_records(p->cmp_out);
                st->snd_pending_bytes += zl_q_bytes(p->cmp_out);
            }
            st->rcv_pending_msgs += zl_q_records(p->cmp_in);
            st->rcv_pending_bytes += zl_q_bytes(p->cmp_in);
            fq_totals(&p->cmp_rxq, &st->rcv_pending_msgs, &rxq_bytes);
        }
    }
    if (s->stash_n > 0) {
        st->rcv_pending_msgs++;
        for (size_t i = 0; i < s->stash_n; i++)
            st->rcv_pending_bytes += zl_frame_charge(&s->rx[i]);
    }
    for (size_t i = 0; i < s->neps; i++) {
        if (zl_endpoint_is_bind(s->eps[i]))
            st->state_flags |= ZLINK_MONITOR_STATE_BOUND_READY;
    }
    if (s->type == ZLINK_DEALER || s->type == ZLINK_ROUTER) {
        st->detail_flags |= ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE;
        st->flow_paused_connections = s->flow_paused_conns;
        st->flow_pause_applied_total = s->flow_pause_total;
        st->flow_resume_applied_total = s->flow_resume_total;
        st->flow_state_stale_total = s->flow_stale_total;
        st->flow_pause_duration_ms = s->flow_last_pause_ms;
    }
    zl_mutex_unlock(&s->lk);
}

static void mon_free(zl_monitor_t *m)
{
    zl_mutex_fini(&m->lk);
    free(m);
}

void zl_monitor_close(zl_monitor_t *m)
{
    zl_socket_t *s = m->sock;
    zl_mutex_lock(&s->lk);
    if (sock_monitor(s) == m)
        sock_set_monitor(s, NULL);
    zl_mutex_unlock(&s->lk);
    /* No producer can reach m now. */
    zl_mutex_lock(&m->lk);
    zl_mon_node_t *n = m->head;
    m->head = m->tail = NULL;
    m->count = 0;
    m->bytes = 0;
    m->stopped = true;
    m->sock = NULL;
    mon_wake_locked(m);
    zl_mutex_unlock(&m->lk);
    while (n != NULL) {
        zl_mon_node_t *next = n->next;
        free(n);
        n = next;
    }
    zl_socket_unpin(s);
    zl_monitor_unpin(m);
}

/* ------------------------------------------------------------ pollers */

int zl_monitor_readiness(zl_monitor_t *m)
{
    zl_mutex_lock(&m->lk);
    int r = m->count > 0 ? ZL_POLLIN : 0;
    zl_mutex_unlock(&m->lk);
    return r;
}

int zl_monitor_state(zl_monitor_t *m)
{
    zl_mutex_lock(&m->lk);
    int rc = 0;
    if (m->stopped || m->sock == NULL)
        rc = ESHUTDOWN;
    else if (atomic_load(&m->sock->terminated))
        rc = ETERM;
    zl_mutex_unlock(&m->lk);
    return rc;
}

void zl_monitor_add_waker(zl_monitor_t *m, zl_waker_t *w)
{
    zl_mutex_lock(&m->lk);
    w->next = m->wakers;
    m->wakers = w;
    zl_mutex_unlock(&m->lk);
}

void zl_monitor_remove_waker(zl_monitor_t *m, zl_waker_t *w)
{
    zl_mutex_lock(&m->lk);
    for (zl_waker_t **pp = &m->wakers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    }
    zl_mutex_unlock(&m->lk);
}

void zl_monitor_pin(zl_monitor_t *m)
{
    atomic_fetch_add(&m->refs, 1);
}

void zl_monitor_unpin(zl_monitor_t *m)
{
    if (atomic_fetch_sub(&m->refs, 1) == 1)
        mon_free(m);
}
