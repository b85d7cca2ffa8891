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
                zl_frames_release(s->rx, got);
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
