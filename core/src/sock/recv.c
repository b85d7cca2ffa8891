/*
 * recv.c — receiving: the fair queue over a socket's pipes, whole records
 * into the caller's slots, the stash a SUB hands back, and the ROUTER's
 * route snapshot.
 *
 * Threads: application threads (one consumer per socket). Locks: s->lk
 * for the fair queue and the receive scratch; queue locks inside it.
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

/* ------------------------------------------------------------- receive */

/* Under s->lk: ensures the scratch holds at least n frames. */
int zl_socket_rx_reserve(zl_socket_t *s, size_t n)
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
        if (zl_pipe_token_blocked(s, p))
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
    if (zl_socket_rx_reserve(s, k) != 0)
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

/* ------------------------------------------------------- ready ring
 *
 * The fair queue rotates over the pipes that may hold records, not over
 * every pipe: with thousands of connected peers of which few have sent
 * anything, a receive must not look at (and lock the queue of) each idle
 * one. A pipe is on the ring from its link until a look finds its input
 * empty; that look (zl_q_take_all) arms the queue's reader notify, so the
 * next record into it calls zl_pipe_in_notify, which posts the pipe on the
 * socket's inbox; the next pass moves the inbox onto the ring. A pipe is
 * taken off only with nothing in its rxq and its queue found empty, so a
 * record is never left where no pass looks. */

void zl_pipe_rx_ready(zl_socket_t *s, zl_pipe_t *p)
{
    if (p->rx_ready || !p->linked)
        return;
    p->rx_ready = true;
    zl_pipe_t *h = s->rx_ring;
    if (h == NULL) {
        p->rx_next = p->rx_prev = p;
        s->rx_ring = p;
    } else {
        /* Just behind the rotor: looked at last in the current round. */
        p->rx_next = h;
        p->rx_prev = h->rx_prev;
        h->rx_prev->rx_next = p;
        h->rx_prev = p;
    }
    s->rx_nready++;
}

void zl_pipe_rx_idle(zl_socket_t *s, zl_pipe_t *p)
{
    if (!p->rx_ready)
        return;
    p->rx_ready = false;
    if (p->rx_next == p) {
        s->rx_ring = NULL;
    } else {
        p->rx_prev->rx_next = p->rx_next;
        p->rx_next->rx_prev = p->rx_prev;
        if (s->rx_ring == p)
            s->rx_ring = p->rx_next;
    }
    p->rx_next = p->rx_prev = NULL;
    s->rx_nready--;
}

/* Takes the whole inbox (one exchange), oldest post first. Each pipe is
 * unmarked before it joins the ring, so a notify after the exchange either
 * posts it again or finds it marked while it is about to be on the ring. */
static zl_pipe_t *rx_inbox_take(zl_socket_t *s)
{
    if (atomic_load_explicit(&s->rx_inbox, memory_order_acquire) == NULL)
        return NULL;
    zl_pipe_t *p = atomic_exchange(&s->rx_inbox, NULL), *fifo = NULL;
    while (p != NULL) {
        zl_pipe_t *next = p->rx_post_next;
        p->rx_post_next = fifo;
        fifo = p;
        p = next;
    }
    return fifo;
}

/* Under s->lk: moves the posted pipes onto the ring and drops the
 * references their posts took. */
static void rx_take_posted(zl_socket_t *s)
{
    zl_pipe_t *p = rx_inbox_take(s);
    while (p != NULL) {
        zl_pipe_t *next = p->rx_post_next;
        atomic_store(&p->rx_posted, false);
        zl_pipe_rx_ready(s, p); /* a reaped pipe is not linked: skipped */
        zl_pipe_unref(p);
        p = next;
    }
}

void zl_socket_rx_inbox_clear(zl_socket_t *s)
{
    zl_pipe_t *p = rx_inbox_take(s);
    while (p != NULL) {
        zl_pipe_t *next = p->rx_post_next;
        atomic_store(&p->rx_posted, false);
        zl_pipe_unref(p);
        p = next;
    }
}

/* Under s->lk: one fair-queue pass over the ready ring. Returns 0 with the
 * record in s->rx (*n frames, *src pipe), EAGAIN when nothing is ready,
 * ENOBUFS when the next record has more than cap frames (*n = its count),
 * ENOMEM. */
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
    rx_take_posted(s);
    size_t tries = s->rx_nready;
    zl_pipe_t *p = s->rx_ring;
    while (tries-- > 0 && p != NULL) {
        zl_pipe_t *next = p->rx_next;
        size_t got = 0;
        int r = pipe_pop(s, p, cap, &got);
        if (r == ENOBUFS) {
            *n = got;
            s->rx_ring = p;
            return ENOBUFS;
        }
        if (r == ENOMEM)
            return ENOMEM;
        if (r == 0) {
            s->rx_ring = next;
            if (s->ops->accept != NULL && !s->ops->accept(s, p, s->rx, got)) {
                zl_frames_release(s->rx, got);
                tries++; /* look at this pipe again */
                continue;
            }
            *n = got;
            *src = p;
            return 0;
        }
        if (r == EPIPE && p->ended) {
            zl_socket_reap_pipe(s, p); /* off the ring; p may be freed */
        } else if (r == EAGAIN && p->rxq.count == 0) {
            /* Found empty: the queue's notify is armed (a ROUTER's pipe
             * held by the token limit keeps its rxq and stays). */
            zl_pipe_rx_idle(s, p);
        }
        if (s->rx_ring == NULL)
            break;
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
    /* A REQUEST must get its reply token with the record: allocated now,
     * before anything is taken, so that it cannot fail after. */
    if (s->type == ZLINK_ROUTER && zl_req_token_reserve(s) != 0)
        return ENOMEM;
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
