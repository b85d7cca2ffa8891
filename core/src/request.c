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
 *    ROUTER-ROUTER replies use the same path in this version (the lane-1
 *    connection is established but carries nothing yet).
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
#include "completion.h"
#include "errors.h"

#include <stdint.h>
#include <stdlib.h>

/* ------------------------------------------------------------ requester */

static void req_deadline_refresh(zl_socket_t *s)
{
    int64_t d = INT64_MAX;
    for (zl_req_t *r = s->cq.reqs; r != NULL; r = r->next)
        if (r->deadline_ns < d)
            d = r->deadline_ns;
    atomic_store(&s->req_deadline, d);
}

/* Under s->lk: ends r (already unlinked) with result and reply parts
 * (ownership of parts passes to the record). */
static void req_complete(zl_socket_t *s, zl_req_t *r, int result, zlink_msg_t *parts,
                         size_t n)
{
    zl_cq_rec_t *rec = calloc(1, sizeof *rec);
    if (rec == NULL)
        abort(); /* the slot was reserved at admission; 300 bytes failed */
    rec->kind = ZLINK_COMPLETION_REQUEST;
    rec->id = r->id;
    rec->user_context = r->user_context;
    rec->peer_rid = r->peer_rid;
    rec->request_result = result;
    rec->reply_parts = parts;
    rec->reply_count = n;
    s->cq.nreqs--;
    free(r);
    zl_cq_append(s, rec);
}

/* Maps an error reply's errno to the request result family. */
static int request_result_of(int e)
{
    switch (e) {
    case ETIMEDOUT: return ZLINK_REQUEST_TIMED_OUT;
    case ENOENT: return ZLINK_REQUEST_NOT_FOUND;
    case ETERM: return ZLINK_REQUEST_TERMINATED;
    case EPROTO:
    case ENOCOMPATPROTO: return ZLINK_REQUEST_PROTOCOL_ERROR;
    case EACCES:
    case ECONNREFUSED:
    case ECANCELED: return ZLINK_REQUEST_REJECTED;
    case EEXIST:
    case ESTALE: return ZLINK_REQUEST_CONFLICT;
    case EBUSY: return ZLINK_REQUEST_BUSY;
    case ENOTCONN:
    case EHOSTUNREACH: return ZLINK_REQUEST_NOT_CONNECTED;
    case EINVAL:
    case EFAULT: return ZLINK_REQUEST_INVALID_ARGUMENT;
    case EFSM:
    case EALREADY: return ZLINK_REQUEST_INVALID_STATE;
    case ENOTSUP: return ZLINK_REQUEST_NOT_SUPPORTED;
    case EAGAIN:
    case ENOBUFS: return ZLINK_REQUEST_BACKPRESSURED;
    default: return ZLINK_REQUEST_INTERNAL;
    }
}

/* Under s->lk: the head record of p->rxq is a REPLY or ERROR_REPLY: takes
 * it off and completes its request (or drops it when nobody waits). */
static void take_reply(zl_socket_t *s, zl_pipe_t *p)
{
    size_t k = 1;
    while (zl_fq_at(&p->rxq, k - 1)->flags & ZL_F_MORE)
        k++;
    zl_frame_t *head = zl_fq_front(&p->rxq);
    uint8_t kind = head->kind;
    uint64_t seq = head->seq;
    zlink_msg_t *parts = malloc(k * sizeof *parts);
    uint64_t charge = 0;
    for (size_t i = 0; i < k; i++) {
        zl_frame_t *f = zl_fq_front(&p->rxq);
        charge += zl_frame_charge(f);
        if (parts != NULL)
            memcpy(&parts[i], &f->msg, sizeof parts[i]);
        else
            zl_msg_release(&f->msg);
        zl_fq_pop(&p->rxq);
    }
    zl_q_consume(p->in, charge);

    zl_req_t **pp = &s->cq.reqs;
    while (*pp != NULL && !((*pp)->seq == seq && (*pp)->pipe_id == p->id))
        pp = &(*pp)->next;
    zl_req_t *r = *pp;
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
    *pp = r->next;
    if (parts == NULL) {
        req_complete(s, r, ZLINK_REQUEST_INTERNAL, NULL, 0);
    } else if (kind == ZL_KIND_REPLY) {
        req_complete(s, r, ZLINK_REQUEST_OK, parts, k);
    } else {
        /* Error reply: part 0 is a 4-byte BE errno, stripped. */
        const unsigned char *b = zl_msg_data(&parts[0]);
        int e = 0;
        if (zl_msg_size(&parts[0]) == 4)
            e = (int)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
        zl_msg_release(&parts[0]);
        memmove(parts, parts + 1, (k - 1) * sizeof *parts);
        int result = e == 0 ? ZLINK_REQUEST_PROTOCOL_ERROR : request_result_of(e);
        if (k == 1) {
            free(parts);
            parts = NULL;
        }
        req_complete(s, r, result, parts, k - 1);
    }
    req_deadline_refresh(s);
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
        if (kind != ZL_KIND_REPLY && kind != ZL_KIND_ERROR_REPLY)
            return 0;
        take_reply(s, p);
    }
}

void zl_req_expire(zl_socket_t *s)
{
    if (s->cq.nreqs == 0)
        return;
    int64_t now = zl_clock_ns();
    if (atomic_load(&s->req_deadline) > now)
        return;
    zl_req_t **pp = &s->cq.reqs;
    while (*pp != NULL) {
        zl_req_t *r = *pp;
        if (r->deadline_ns <= now) {
            *pp = r->next;
            req_complete(s, r, ZLINK_REQUEST_TIMED_OUT, NULL, 0);
        } else {
            pp = &r->next;
        }
    }
    req_deadline_refresh(s);
}

void zl_req_pipe_ended(zl_socket_t *s, zl_pipe_t *p)
{
    bool any = false;
    zl_req_t **pp = &s->cq.reqs;
    while (*pp != NULL) {
        zl_req_t *r = *pp;
        if (r->pipe_id == p->id) {
            *pp = r->next;
            req_complete(s, r, ZLINK_REQUEST_NOT_CONNECTED, NULL, 0);
            any = true;
        } else {
            pp = &r->next;
        }
    }
    if (any)
        req_deadline_refresh(s);
}

/* ------------------------------------------------------------ responder */

bool zl_req_seq_live(zl_socket_t *s, const zl_pipe_t *p, uint64_t seq)
{
    for (zl_rtoken_t *t = s->cq.rtokens; t != NULL; t = t->next)
        if (t->seq == seq && zl_rid_equal(&t->rid, &p->rid))
            return true;
    return false;
}

uint64_t zl_req_token_new(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f)
{
    if (s->cq.nrtokens >= ZL_CQ_SLOTS)
        return 0;
    zl_rtoken_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return 0;
    /* Tokens count up from a random per-socket base far above any
     * sequence a peer numbers from 1: opaque, and not the sequence. */
    t->token = ++s->cq.next_rtoken;
    t->seq = f->seq;
    t->rid = p->rid;
    t->next = s->cq.rtokens;
    s->cq.rtokens = t;
    s->cq.nrtokens++;
    return t->token;
}

void zl_req_forget_source(zl_socket_t *s, const zlink_routing_id_t *rid)
{
    zl_rtoken_t **pp = &s->cq.rtokens;
    while (*pp != NULL) {
        zl_rtoken_t *t = *pp;
        if (zl_rid_equal(&t->rid, rid)) {
            *pp = t->next;
            free(t);
            s->cq.nrtokens--;
        } else {
            pp = &t->next;
        }
    }
}

void zl_req_clear(zl_socket_t *s)
{
    while (s->cq.reqs != NULL) {
        zl_req_t *r = s->cq.reqs;
        s->cq.reqs = r->next;
        free(r);
    }
    while (s->cq.rtokens != NULL) {
        zl_rtoken_t *t = s->cq.rtokens;
        s->cq.rtokens = t->next;
        free(t);
    }
    s->cq.nreqs = s->cq.nrtokens = 0;
    atomic_store(&s->req_deadline, INT64_MAX);
}

/* Under s->lk (inside a send attempt): the request was pushed to
 * s->last_pipe; it now waits for its outcome. */
int zl_req_admitted(zl_socket_t *s, zl_req_t *r)
{
    r->id = ++s->cq.next_id;
    r->pipe_id = s->last_pipe->id;
    if (s->type == ZLINK_ROUTER)
        r->peer_rid = s->last_pipe->rid;
    r->next = NULL;
    zl_req_t **pp = &s->cq.reqs;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = r;
    s->cq.nreqs++;
    if (r->deadline_ns < atomic_load(&s->req_deadline)) {
        atomic_store(&s->req_deadline, r->deadline_ns);
        /* A thread already waiting for completions must now wake earlier. */
        zl_socket_wake(s);
    }
    return 0;
}

/* ------------------------------------------------------------ public API */

ZLINK_EXPORT zlink_submit_result_t zlink_request(void *socket, const zlink_routing_id_t *rid,
                                                 zlink_msg_t *parts, size_t n,
                                                 zlink_send_flags_t flags, uint32_t timeout_ms,
                                                 void *user_context,
                                                 zlink_completion_id_t *completion_id_out)
{
    if (completion_id_out != NULL)
        *completion_id_out = 0;
    if (parts == NULL)
        return zl_submit_fail(EINVAL);
    if (n == 0 || ((int)flags & ~ZLINK_DONTWAIT) != 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(EINVAL);
    }
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    }
    if ((s->type == ZLINK_DEALER && rid != NULL) ||
        (s->type == ZLINK_ROUTER && (rid == NULL || rid->size == 0))) {
        rc = EINVAL;
    } else if (s->type != ZLINK_DEALER && s->type != ZLINK_ROUTER) {
        rc = ENOTSUP;
    } else {
        zl_req_t *r = calloc(1, sizeof *r);
        if (r == NULL) {
            rc = ENOMEM;
        } else {
            r->user_context = user_context;
            r->deadline_ns = (int64_t)timeout_ms; /* resolved at admission */
            uint64_t token = 0, id = 0;
            rc = zl_socket_submit_request(s, rid, parts, n, (int)flags, r, &id, &token);
            if (rc == 0) {
                /* r belongs to the socket now (and may already be gone):
                 * the id was copied out under the socket's lock. */
                if (completion_id_out != NULL)
                    *completion_id_out = id;
            } else {
                free(r);
                if (completion_id_out != NULL)
                    *completion_id_out = token;
                if (rc == EHOSTUNREACH && s->type == ZLINK_ROUTER &&
                    !((int)flags & ZLINK_DONTWAIT))
                    rc = ENOENT; /* NONE to an unknown routing id: NOT_FOUND */
            }
        }
    }
    if (rc == EINVAL || rc == ENOTSUP || rc == ENOMEM)
        zl_multipart_release_init(parts, n);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_SUBMIT_OK : zl_submit_fail(rc);
}

/* The body of zlink_reply and zlink_reply_error. error != 0 prepends the
 * 4-byte big-endian errno part and sends an ERROR_REPLY. Parts are
 * consumed in every case. */
static zlink_submit_result_t reply_common(void *router, const zlink_routing_id_t *src_rid,
                                          zlink_reply_token_t token, int error,
                                          zlink_msg_t *parts, size_t n)
{
    if (parts == NULL && n > 0)
        return zl_submit_fail(EINVAL);
    if ((n == 0 && error == 0) || src_rid == NULL || src_rid->size == 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(EINVAL);
    }
    if (token == 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(ENOENT);
    }
    zl_socket_t *s;
    int rc = zl_socket_enter(router, &s);
    if (rc != 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    }
    if (s->type != ZLINK_ROUTER) {
        zl_multipart_release_init(parts, n);
        zl_socket_leave(s);
        return zl_submit_fail(ENOTSUP);
    }
    /* Find the token; it is retired only when the reply is admitted. */
    uint64_t seq = 0;
    zl_mutex_lock(&s->lk);
    for (zl_rtoken_t *t = s->cq.rtokens; t != NULL; t = t->next) {
        if (t->token == token && zl_rid_equal(&t->rid, src_rid)) {
            seq = t->seq;
            break;
        }
    }
    zl_mutex_unlock(&s->lk);
    if (seq == 0) {
        zl_multipart_release_init(parts, n);
        zl_socket_leave(s);
        return zl_submit_fail(ENOENT);
    }
    if (error == 0) {
        rc = zl_socket_submit_reply(s, src_rid, parts, n, seq, token, false);
    } else {
        zlink_msg_t *all = malloc((n + 1) * sizeof *all);
        unsigned char be[4] = {(unsigned char)((uint32_t)error >> 24),
                               (unsigned char)((uint32_t)error >> 16),
                               (unsigned char)((uint32_t)error >> 8), (unsigned char)error};
        if (all == NULL || zl_msg_init_copy(&all[0], be, 4) != 0) {
            free(all);
            zl_multipart_release_init(parts, n);
            rc = ENOMEM;
        } else {
            for (size_t i = 0; i < n; i++)
                zl_msg_move_raw(&all[i + 1], &parts[i]);
            rc = zl_socket_submit_reply(s, src_rid, all, n + 1, seq, token, true);
            free(all);
        }
    }
    zl_socket_leave(s);
    if (rc == EHOSTUNREACH)
        rc = ENOENT; /* the source is gone */
    return rc == 0 ? ZLINK_SUBMIT_OK : zl_submit_fail(rc);
}

ZLINK_EXPORT zlink_submit_result_t zlink_reply(void *router, const zlink_routing_id_t *src_rid,
                                               zlink_reply_token_t token, zlink_msg_t *parts,
                                               size_t n)
{
    if (parts == NULL)
        return zl_submit_fail(EINVAL);
    return reply_common(router, src_rid, token, 0, parts, n);
}

ZLINK_EXPORT zlink_submit_result_t zlink_reply_error(void *router,
                                                     const zlink_routing_id_t *src_rid,
                                                     zlink_reply_token_t token, int error,
                                                     zlink_msg_t *parts, size_t n)
{
    if (error <= 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(EINVAL);
    }
    return reply_common(router, src_rid, token, error, parts, n);
}

/* Under s->lk (inside the reply's send attempt, after the push): retires
 * the token. */
void zl_req_token_used(zl_socket_t *s, uint64_t token)
{
    for (zl_rtoken_t **pp = &s->cq.rtokens; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->token == token) {
            zl_rtoken_t *t = *pp;
            *pp = t->next;
            free(t);
            s->cq.nrtokens--;
            return;
        }
    }
}
