/*
 * request.c — request/reply on DEALER and ROUTER.
 *
 * Design notes
 *  - A request is a record whose first frame has kind REQUEST and a
 *    nonzero 64-bit sequence (unique per socket). Admission is a send (same
 *    HWM, wait, token and SNDTIMEO rules); once admitted it holds one
 *    completion slot and ends exactly once, as one REQUEST record in the
 *    completion queue: the reply (OK), an error reply (its errno mapped), a
 *    timeout (TIMED_OUT, counted from admission), or the end of the
 *    connection it left on (NOT_CONNECTED). Close and term discard it.
 *    Whichever comes first wins; a later reply is dropped.
 *  - Replies share the connection's FIFO with DATA: a reply is taken into
 *    the completion queue only when it reaches the head of its pipe's input
 *    (zl_req_drain_replies), so a reply behind unread DATA waits for it.
 *    ROUTER-ROUTER pipes have a second, HWM-free Completion lane (cmp_in /
 *    cmp_out, the lane 1 connection): replies to a ROUTER peer travel
 *    there, so they pass DATA, the HWM and a PAUSE; every reply queued
 *    on it is taken at once (zl_req_drain_cmp). A record other than a
 *    reply on that lane ends the connection (the engine checks the kind).
 *  - Timeouts are checked whenever the socket is looked at (completion
 *    receive, readiness, receive) and bound how long a completion waiter
 *    or poller sleeps (s->req_deadline).
 *  - A ROUTER that receives a REQUEST hands out a reply token (nonzero,
 *    not the wire sequence) bound to (source routing id, sequence).
 *    zlink_reply sends the REPLY with that sequence to the source's current
 *    pipe and retires the token; a token survives the requester's timeout
 *    and a reconnect of the source.
 *  - Locks: everything runs under s->lk except the public entry points.
 */
#include "sock/sock_impl.h"
#include "sock/completion.h"
#include "util/errors.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ------------------------------------------------------------ requester */

/* The deadline heap: the earliest deadline at index 0; equal deadlines in
 * admission (id) order, so simultaneous timeouts complete oldest first. */
static bool req_before(const zl_req_t *a, const zl_req_t *b)
{
    return a->deadline_ns < b->deadline_ns ||
           (a->deadline_ns == b->deadline_ns && a->id < b->id);
}

static void heap_set(zl_cq_t *cq, size_t i, zl_req_t *r)
{
    cq->req_heap[i] = r;
    r->heap_at = i;
}

static void heap_up(zl_cq_t *cq, size_t i)
{
    zl_req_t *r = cq->req_heap[i];
    while (i > 0 && req_before(r, cq->req_heap[(i - 1) / 2])) {
        heap_set(cq, i, cq->req_heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(cq, i, r);
}

static void heap_down(zl_cq_t *cq, size_t i)
{
    size_t n = cq->nreqs;
    zl_req_t *r = cq->req_heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && req_before(cq->req_heap[c + 1], cq->req_heap[c]))
            c++;
        if (!req_before(cq->req_heap[c], r))
            break;
        heap_set(cq, i, cq->req_heap[c]);
        i = c;
    }
    heap_set(cq, i, r);
}

static void req_deadline_refresh(zl_socket_t *s)
{
    atomic_store(&s->req_deadline, s->cq.nreqs > 0 ? s->cq.req_heap[0]->deadline_ns : INT64_MAX);
}

int zl_req_reserve(zl_socket_t *s)
{
    zl_cq_t *cq = &s->cq;
    if (cq->nreqs < cq->req_heap_cap)
        return 0;
    size_t cap = cq->req_heap_cap ? cq->req_heap_cap * 2 : 64;
    zl_req_t **h = realloc(cq->req_heap, cap * sizeof *h);
    if (h == NULL)
        return ENOMEM;
    cq->req_heap = h;
    cq->req_heap_cap = cap;
    return 0;
}

/* Under s->lk: ends r (still registered: this unlinks it) with result and
 * reply parts (ownership of parts passes to the record). r's memory, a
 * whole zl_cq_slot_t taken at admission, becomes the REQUEST record, so
 * ending a request needs no memory and cannot fail (the contract's one
 * outcome per admitted request). */
static void req_complete(zl_socket_t *s, zl_req_t *r, int result, zlink_msg_t *parts,
                         size_t n)
{
    zl_cq_t *cq = &s->cq;
    zl_hmap_remove(&cq->reqs, &r->by_seq);
    size_t i = r->heap_at;
    zl_req_t *last = cq->req_heap[--cq->nreqs];
    if (last != r) {
        heap_set(cq, i, last);
        heap_up(cq, i);
        heap_down(cq, last->heap_at);
    }
    zl_req_t req;
    memcpy(&req, r, sizeof req);
    zl_cq_rec_t *rec = (zl_cq_rec_t *)(void *)r;
    memset(rec, 0, sizeof *rec);
    rec->kind = ZLINK_COMPLETION_REQUEST;
    rec->id = req.id;
    rec->user_context = req.user_context;
    rec->peer_rid = req.peer_rid;
    rec->request_result = result;
    rec->reply_parts = parts;
    rec->reply_count = n;
    zl_cq_append(s, rec);
}

/* Under s->lk: the head record of rxq (p->rxq or p->cmp_rxq, taken from
 * q) is a REPLY or ERROR_REPLY: takes it off and completes its request
 * (or drops it when nobody waits). */
static void take_reply(zl_socket_t *s, zl_pipe_t *p, zl_fq_t *rxq, zl_q_t *q)
{
    size_t k = 1;
    while (zl_fq_at(rxq, k - 1)->flags & ZMP_F_MORE)
        k++;
    zl_frame_t *head = zl_fq_front(rxq);
    uint8_t kind = head->kind;
    uint64_t seq = head->seq;
    zlink_msg_t *parts = malloc(k * sizeof *parts);
    uint64_t charge = 0;
    for (size_t i = 0; i < k; i++) {
        zl_frame_t *f = zl_fq_front(rxq);
        charge += zl_frame_charge(f);
        if (parts != NULL)
            memcpy(&parts[i], &f->msg, sizeof parts[i]);
        else
            zl_msg_release(&f->msg);
        zl_fq_pop(rxq);
    }
    zl_q_consume(q, charge);

    zl_req_t *r = NULL;
    for (zl_hnode_t *x = zl_hmap_first(&s->cq.reqs, seq); x != NULL; x = zl_hmap_next(x)) {
        zl_req_t *c = CONTAINER(x, zl_req_t, by_seq);
        if (c->pipe_id == p->id) {
            r = c;
            break;
        }
    }
    if (r == NULL) {
        /* Late (the timeout or the pair's end won): dropped. A sequence we
         * never issued is a protocol violation: the connection closes. */
        if (parts != NULL) {
            zl_multipart_release(parts, k);
            free(parts);
        }
        if (seq > s->cq.next_seq)
            zl_pipe_violation(s, p);
        return;
    }
    if (parts == NULL) {
        req_complete(s, r, ZLINK_REQUEST_INTERNAL, NULL, 0);
    } else if (kind == ZMP_KIND_REPLY) {
        req_complete(s, r, ZLINK_REQUEST_OK, parts, k);
    } else {
        /* Error reply: part 0 is a 4-byte BE errno, stripped. */
        int e = zmp_parse_errno_part(zl_msg_data(&parts[0]), zl_msg_size(&parts[0]));
        zl_msg_release(&parts[0]);
        memmove(parts, parts + 1, (k - 1) * sizeof *parts);
        int result = e == 0 ? ZLINK_REQUEST_PROTOCOL_ERROR : (int)zl_request_result_of(e);
        if (k == 1) {
            free(parts);
            parts = NULL;
        }
        req_complete(s, r, result, parts, k - 1);
    }
    req_deadline_refresh(s);
}

/* Takes every reply of p's Completion lane. It ends only when the lane's
 * queue was found empty: that look arms the queue's reader_idle, so the
 * next reply's arrival notifies the socket (a poller sleeping on its
 * POLLCOMPLETION). Stopping after the replies taken, with the queue not
 * seen empty, left it unarmed: the next reply woke nobody. */
void zl_req_drain_cmp(zl_socket_t *s, zl_pipe_t *p)
{
    if (p->cmp_in == NULL)
        return;
    for (;;) {
        if (p->cmp_rxq.count == 0) {
            uint64_t charge = 0;
            bool eof = false;
            if (zl_q_take_all(p->cmp_in, &p->cmp_rxq, &charge, &eof) == 0)
                return;
        }
        while (p->cmp_rxq.count > 0) {
            uint8_t kind = zl_fq_front(&p->cmp_rxq)->kind;
            if (kind == ZMP_KIND_REPLY || kind == ZMP_KIND_ERROR_REPLY) {
                take_reply(s, p, &p->cmp_rxq, p->cmp_in);
                continue;
            }
            /* Only replies travel on this lane (the engine refuses the
             * rest before it delivers; this holds for inproc too). */
            zl_fq_clear(&p->cmp_rxq);
            zl_pipe_violation(s, p);
            return;
        }
    }
}

int zl_req_drain_replies(zl_socket_t *s, zl_pipe_t *p)
{
    for (;;) {
        if (p->rxq.count == 0) {
            uint64_t charge = 0;
            bool eof = false;
            if (zl_q_take_all(p->in, &p->rxq, &charge, &eof) == 0)
                return eof ? EPIPE : EAGAIN;
        }
        uint8_t kind = zl_fq_front(&p->rxq)->kind;
        if (kind != ZMP_KIND_REPLY && kind != ZMP_KIND_ERROR_REPLY)
            return 0;
        take_reply(s, p, &p->rxq, p->in);
    }
}

void zl_req_expire(zl_socket_t *s)
{
    if (s->cq.nreqs == 0)
        return;
    int64_t now = zl_clock_ns();
    if (atomic_load(&s->req_deadline) > now)
        return;
    while (s->cq.nreqs > 0 && s->cq.req_heap[0]->deadline_ns <= now) {
        req_complete(s, s->cq.req_heap[0], ZLINK_REQUEST_TIMED_OUT, NULL, 0);
        s->cq.late_replies = true; /* its reply may still come (zl_cq_process) */
    }
    req_deadline_refresh(s);
}

static int by_id(const void *a, const void *b)
{
    const zl_req_t *x = *(zl_req_t *const *)a, *y = *(zl_req_t *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

void zl_req_pipe_ended(zl_socket_t *s, zl_pipe_t *p)
{
    zl_cq_t *cq = &s->cq;
    size_t k = 0;
    for (size_t i = 0; i < cq->nreqs; i++)
        k += cq->req_heap[i]->pipe_id == p->id;
    if (k == 0)
        return;
    /* They end in admission order. Without memory for the sort, one at a
     * time (removing one reorders the heap, so each search starts over). */
    zl_req_t **ended = malloc(k * sizeof *ended);
    if (ended == NULL) {
        for (size_t i = 0; i < cq->nreqs;) {
            if (cq->req_heap[i]->pipe_id == p->id) {
                req_complete(s, cq->req_heap[i], ZLINK_REQUEST_NOT_CONNECTED, NULL, 0);
                i = 0;
            } else {
                i++;
            }
        }
        req_deadline_refresh(s);
        return;
    }
    k = 0;
    for (size_t i = 0; i < cq->nreqs; i++)
        if (cq->req_heap[i]->pipe_id == p->id)
            ended[k++] = cq->req_heap[i];
    qsort(ended, k, sizeof *ended, by_id);
    for (size_t i = 0; i < k; i++)
        req_complete(s, ended[i], ZLINK_REQUEST_NOT_CONNECTED, NULL, 0);
    free(ended);
    req_deadline_refresh(s);
}

/* ------------------------------------------------------------ responder */

static uint64_t source_key(const zlink_routing_id_t *rid, uint64_t seq)
{
    return zl_hash_bytes(rid->data, rid->size, seq);
}

static zl_rtoken_t *rtoken_by_token(zl_socket_t *s, uint64_t token)
{
    zl_hnode_t *x = zl_hmap_first(&s->cq.rtokens, token);
    return x != NULL ? CONTAINER(x, zl_rtoken_t, by_token) : NULL;
}

/* Unlinks and frees t. A socket that was at the token limit may read the
 * REQUESTs it held back again: wake its receivers and pollers. */
static void rtoken_free(zl_socket_t *s, zl_rtoken_t *t)
{
    zl_hmap_remove(&s->cq.rtokens, &t->by_token);
    zl_hmap_remove(&s->cq.rtoken_sources, &t->by_source);
    free(t);
    if (s->cq.nrtokens-- == ZL_CQ_SLOTS)
        zl_socket_wake(s);
}

bool zl_req_seq_live(zl_socket_t *s, const zl_pipe_t *p, uint64_t seq)
{
    zl_hnode_t *x = zl_hmap_first(&s->cq.rtoken_sources, source_key(&p->rid, seq));
    for (; x != NULL; x = zl_hmap_next(x)) {
        zl_rtoken_t *t = CONTAINER(x, zl_rtoken_t, by_source);
        if (t->seq == seq && zl_rid_equal(&t->rid, &p->rid))
            return true;
    }
    return false;
}

bool zl_req_tokens_full(const zl_socket_t *s)
{
    return s->cq.nrtokens >= ZL_CQ_SLOTS;
}

int zl_req_token_reserve(zl_socket_t *s)
{
    if (s->cq.spare_rtoken == NULL)
        s->cq.spare_rtoken = zl_zalloc(sizeof *s->cq.spare_rtoken); /* one per request */
    return s->cq.spare_rtoken != NULL ? 0 : ENOMEM;
}

uint64_t zl_req_token_new(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f)
{
    if (zl_req_tokens_full(s))
        return 0;
    zl_rtoken_t *t = s->cq.spare_rtoken; /* zl_req_token_reserve made it */
    if (t == NULL)
        return 0;
    s->cq.spare_rtoken = NULL;
    /* Tokens count up from a random per-socket base far above any
     * sequence a peer numbers from 1: opaque, and not the sequence. */
    t->token = ++s->cq.next_rtoken;
    t->seq = f->seq;
    t->rid = p->rid;
    zl_hmap_insert(&s->cq.rtokens, &t->by_token, t->token);
    zl_hmap_insert(&s->cq.rtoken_sources, &t->by_source, source_key(&t->rid, t->seq));
    s->cq.nrtokens++;
    return t->token;
}

/* Calls fn on every reply token (fn may free it). */
static void rtokens_each(zl_socket_t *s,
                         void (*fn)(zl_socket_t *s, zl_rtoken_t *t, const void *arg),
                         const void *arg)
{
    zl_hmap_t *m = &s->cq.rtokens;
    size_t chains = zl_hmap_chains(m);
    for (size_t b = 0; b < chains; b++) {
        zl_hnode_t *x = zl_hmap_chain(m, b);
        while (x != NULL) {
            zl_hnode_t *next = x->next;
            fn(s, CONTAINER(x, zl_rtoken_t, by_token), arg);
            x = next;
        }
    }
}

static void forget_if_from(zl_socket_t *s, zl_rtoken_t *t, const void *rid)
{
    if (zl_rid_equal(&t->rid, rid))
        rtoken_free(s, t);
}

void zl_req_forget_source(zl_socket_t *s, const zlink_routing_id_t *rid)
{
    rtokens_each(s, forget_if_from, rid);
}

static void discard(zl_socket_t *s, zl_rtoken_t *t, const void *unused)
{
    ZL_UNUSED(s);
    ZL_UNUSED(unused);
    free(t);
}

void zl_req_clear(zl_socket_t *s)
{
    zl_cq_t *cq = &s->cq;
    for (size_t i = 0; i < cq->nreqs; i++)
        free(cq->req_heap[i]);
    free(cq->req_heap);
    cq->req_heap = NULL;
    cq->req_heap_cap = 0;
    zl_hmap_fini(&cq->reqs);
    rtokens_each(s, discard, NULL);
    free(cq->spare_rtoken);
    cq->spare_rtoken = NULL;
    zl_hmap_fini(&cq->rtokens);
    zl_hmap_fini(&cq->rtoken_sources);
    cq->nreqs = cq->nrtokens = 0;
    atomic_store(&s->req_deadline, INT64_MAX);
}

/* Under s->lk (inside a send attempt): the request was pushed to
 * s->last_pipe; it now waits for its outcome. zl_req_reserve made room in
 * the heap before the push. */
void zl_req_admitted(zl_socket_t *s, zl_req_t *r)
{
    zl_cq_t *cq = &s->cq;
    r->id = ++cq->next_id;
    r->pipe_id = s->last_pipe->id;
    if (s->type == ZLINK_ROUTER)
        r->peer_rid = s->last_pipe->rid;
    zl_hmap_insert(&cq->reqs, &r->by_seq, r->seq);
    cq->req_heap[cq->nreqs] = r;
    r->heap_at = cq->nreqs++;
    heap_up(cq, r->heap_at);
    if (r->deadline_ns < atomic_load(&s->req_deadline)) {
        atomic_store(&s->req_deadline, r->deadline_ns);
        /* A thread already waiting for completions must now wake earlier. */
        zl_socket_wake(s);
    }
}

/* ----------------------------------------------- what the facade calls */

int zl_req_submit(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts, size_t n,
                  int flags, uint32_t timeout_ms, void *user_context, uint64_t *id_out)
{
    *id_out = 0;
    if ((s->type == ZLINK_DEALER && rid != NULL) ||
        (s->type == ZLINK_ROUTER && (rid == NULL || rid->size == 0)))
        return EINVAL;
    if (s->type != ZLINK_DEALER && s->type != ZLINK_ROUTER)
        return ENOTSUP;
    /* The whole completion slot, now: the request ends as its record in
     * place (req_complete), so nothing after admission allocates. */
    zl_req_t *r = zl_zalloc(sizeof(zl_cq_slot_t)); /* one per request */
    if (r == NULL)
        return ENOMEM;
    r->user_context = user_context;
    r->deadline_ns = (int64_t)timeout_ms; /* resolved at admission */
    uint64_t token = 0, id = 0;
    int rc = zl_socket_submit_request(s, rid, parts, n, flags, r, &id, &token);
    if (rc == 0) {
        /* r belongs to the socket now (and may already be gone): the id
         * was copied out under the socket's lock. */
        *id_out = id;
        return 0;
    }
    free(r);
    *id_out = token;
    if (rc == EHOSTUNREACH && s->type == ZLINK_ROUTER && !(flags & ZLINK_DONTWAIT))
        rc = ENOENT; /* NONE to an unknown routing id: NOT_FOUND */
    return rc;
}

int zl_req_reply(zl_socket_t *s, const zlink_routing_id_t *src_rid, uint64_t token, int error,
                 zlink_msg_t *parts, size_t n, int flags, void *user_context,
                 uint64_t *wait_token)
{
    if (s->type != ZLINK_ROUTER) {
        zl_multipart_release_init(parts, n);
        return ENOTSUP;
    }
    /* Check the token out: one reply at a time may use it. It is retired
     * when the reply is admitted; a failure returns it. */
    uint64_t seq = 0;
    int rc = ENOENT;
    zl_mutex_lock(&s->lk);
    zl_rtoken_t *t = rtoken_by_token(s, token);
    if (t != NULL && zl_rid_equal(&t->rid, src_rid)) {
        rc = t->busy ? EBUSY : 0;
        if (!t->busy) {
            t->busy = true;
            seq = t->seq;
        }
    }
    zl_mutex_unlock(&s->lk);
    if (rc != 0) {
        zl_multipart_release_init(parts, n);
        return rc;
    }
    if (error == 0) {
        rc = zl_socket_submit_reply(s, src_rid, parts, n, seq, token, false, flags, user_context,
                                    wait_token);
    } else {
        zlink_msg_t *all = malloc((n + 1) * sizeof *all);
        uint8_t be[ZMP_ERRNO_PART_SIZE];
        zmp_errno_part(be, error);
        if (all == NULL || zl_msg_init_copy(&all[0], be, sizeof be) != 0) {
            free(all);
            zl_multipart_release_init(parts, n);
            rc = ENOMEM;
        } else {
            for (size_t i = 0; i < n; i++)
                zl_msg_move_raw(&all[i + 1], &parts[i]);
            rc = zl_socket_submit_reply(s, src_rid, all, n + 1, seq, token, true, flags,
                                        user_context, wait_token);
            free(all);
        }
    }
    if (rc != 0) {
        zl_mutex_lock(&s->lk);
        t = rtoken_by_token(s, token); /* may be gone (disconnect_rid, close) */
        if (t != NULL)
            t->busy = false;
        zl_mutex_unlock(&s->lk);
    }
    if (rc == EHOSTUNREACH)
        rc = ENOENT; /* the source is gone */
    return rc;
}

/* Under s->lk (inside the reply's send attempt, after the push): retires
 * the token. */
void zl_req_token_used(zl_socket_t *s, uint64_t token)
{
    zl_rtoken_t *t = rtoken_by_token(s, token);
    if (t != NULL)
        rtoken_free(s, t);
}
