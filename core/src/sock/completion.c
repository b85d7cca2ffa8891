/*
 * completion.c — the completion queue and wait tokens (see completion.h
 * for the design notes). Everything here runs under s->lk; nothing blocks.
 */
#include "sock/sock_impl.h"
#include "sock/completion.h"

#include "util/errors.h"

#include <stdlib.h>

/* Under s->lk: whether the target of t had a wake edge since its refusal:
 * a pipe of the target stamped after t->since. */
static void token_publish(zl_socket_t *s, zl_token_t *t, int result, int err);

static bool pipe_serves(const zl_socket_t *s, const zl_pipe_t *p, const zl_token_t *t)
{
    if (t->has_rid && !zl_rid_equal(&p->rid, &t->rid))
        return false;
    if (s->type == ZLINK_DEALER && p->peer.weight == 0)
        return false;
    if (t->for_request && p->peer.type != ZLINK_ROUTER)
        return false; /* requests go to ROUTER peers only */
    if (zl_pipe_paused(p))
        return false; /* RESUME is the edge */
    return atomic_load(&p->credit_stamp) > t->since;
}

static bool token_target_ready(zl_socket_t *s, const zl_token_t *t)
{
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended && pipe_serves(s, p, t))
            return true;
    }
    return false;
}

void zl_cq_pipe_ending(zl_socket_t *s, zl_pipe_t *p)
{
    /* A WRITABLE that became due on p stays due when p then goes away. */
    zl_token_t **pp = &s->cq.tokens;
    while (*pp != NULL) {
        zl_token_t *t = *pp;
        if (pipe_serves(s, p, t)) {
            *pp = t->next;
            token_publish(s, t, ZLINK_SEND_ADMITTED, 0);
        } else {
            pp = &t->next;
        }
    }
}

void zl_cq_append(zl_socket_t *s, zl_cq_rec_t *r)
{
    zl_cq_t *cq = &s->cq;
    r->next = NULL;
    if (cq->tail != NULL)
        cq->tail->next = r;
    else
        cq->head = r;
    cq->tail = r;
    cq->nrecs++;
    if (r->kind == ZLINK_COMPLETION_WRITABLE)
        cq->nwritable++;
}

/* Under s->lk: turns token t (already unlinked) into a WRITABLE record.
 * The token's memory becomes the record's (both are one zl_cq_slot_t), so
 * this needs no memory and cannot fail. */
static void token_publish(zl_socket_t *s, zl_token_t *t, int result, int err)
{
    zl_token_t tok;
    memcpy(&tok, t, sizeof tok);
    zl_cq_rec_t *r = (zl_cq_rec_t *)(void *)t;
    memset(r, 0, sizeof *r);
    r->kind = ZLINK_COMPLETION_WRITABLE;
    r->id = tok.id;
    r->user_context = tok.user_context;
    if (tok.has_rid)
        r->peer_rid = tok.rid;
    r->send_result = result;
    r->send_errno = err;
    s->cq.ntokens--;
    zl_cq_append(s, r);
}

int zl_cq_register(zl_socket_t *s, const zlink_routing_id_t *rid, void *user_context,
                   bool for_request, uint64_t since, uint64_t *id_out)
{
    zl_cq_t *cq = &s->cq;
    if (zl_cq_slots_used(s) >= ZL_CQ_SLOTS)
        return ENOMEM;
    if (cq->next_id == UINT64_MAX)
        return EOVERFLOW;
    /* The whole slot now: publishing turns it into the record in place. */
    zl_token_t *t = calloc(1, sizeof(zl_cq_slot_t));
    if (t == NULL)
        return ENOMEM;
    t->id = ++cq->next_id;
    t->user_context = user_context;
    t->for_request = for_request;
    t->since = since;
    if (rid != NULL && (s->type == ZLINK_ROUTER || s->type == ZLINK_STREAM)) {
        t->has_rid = true;
        t->rid = *rid;
    }
    *id_out = t->id;
    /* Register, then recheck: an edge that came between the refusal and
     * now is published at once. */
    if (token_target_ready(s, t)) {
        cq->ntokens++;
        token_publish(s, t, ZLINK_SEND_ADMITTED, 0);
        return 0;
    }
    t->next = cq->tokens;
    cq->tokens = t;
    cq->ntokens++;
    return 0;
}

void zl_cq_process(zl_socket_t *s)
{
    zl_cq_t *cq = &s->cq;
    /* Inproc FLOWSTATEs the peer queued are applied first: a RESUME is the
     * wake edge of tokens held by a pause, and an observer that watches
     * only the completion queue (a poller's POLLCOMPLETION) must see it. */
    zl_socket_apply_controls(s);
    if (s->type == ZLINK_DEALER || s->type == ZLINK_ROUTER) {
        /* Replies at the head of an input move into the queue; expired
         * requests end. Once a request has timed out, its late reply is
         * taken (and dropped) even with no request pending: left in its
         * lane it would keep the lane non-empty, and the next reply's
         * arrival would wake no poller (a lane wakes its reader only when
         * it goes from empty to not empty). */
        if (cq->nreqs > 0 || cq->late_replies)
            ZL_FOREACH_PIPE(s, p) {
                zl_req_drain_cmp(s, p);
                zl_req_drain_replies(s, p);
            }
        zl_req_expire(s);
    }
    if (cq->ntokens == 0 || atomic_exchange(&s->cq_edge, 0) == 0)
        return;
    /* Oldest tokens first, so records come out in registration order when
     * several targets recover at once. The list is newest-first. */
    size_t n = cq->ntokens;
    zl_token_t **order = malloc(n * sizeof *order);
    if (order == NULL) {
        atomic_store(&s->cq_edge, 1); /* try again at the next look */
        return;
    }
    size_t k = 0;
    for (zl_token_t *t = cq->tokens; t != NULL; t = t->next)
        order[k++] = t;
    cq->tokens = NULL;
    zl_token_t *keep = NULL, **keep_tail = &keep;
    for (size_t i = k; i-- > 0;) {
        zl_token_t *t = order[i];
        if (token_target_ready(s, t)) {
            token_publish(s, t, ZLINK_SEND_ADMITTED, 0);
        } else {
            t->next = NULL;
            *keep_tail = t;
            keep_tail = &t->next;
        }
    }
    free(order);
    /* Back to newest-first. */
    zl_token_t *rev = NULL;
    while (keep != NULL) {
        zl_token_t *next = keep->next;
        keep->next = rev;
        rev = keep;
        keep = next;
    }
    cq->tokens = rev;
}

void zl_cq_terminate(zl_socket_t *s, const zlink_routing_id_t *rid, int e)
{
    zl_token_t **pp = &s->cq.tokens;
    while (*pp != NULL) {
        zl_token_t *t = *pp;
        if (rid == NULL || (t->has_rid && zl_rid_equal(&t->rid, rid))) {
            *pp = t->next;
            token_publish(s, t, ZLINK_SEND_TERMINAL, e);
        } else {
            pp = &t->next;
        }
    }
}

void zl_cq_clear(zl_socket_t *s)
{
    zl_cq_t *cq = &s->cq;
    while (cq->tokens != NULL) {
        zl_token_t *t = cq->tokens;
        cq->tokens = t->next;
        free(t);
    }
    while (cq->head != NULL) {
        zl_cq_rec_t *r = cq->head;
        cq->head = r->next;
        if (r->reply_parts != NULL) {
            zl_multipart_release(r->reply_parts, r->reply_count);
            free(r->reply_parts);
        }
        free(r);
    }
    zl_req_clear(s);
    cq->tail = NULL;
    cq->nrecs = cq->nwritable = cq->ntokens = 0;
}

/* Under s->lk: pops the head record into out (already validated). */
static bool cq_pop(zl_socket_t *s, zlink_completion_t *out)
{
    zl_cq_t *cq = &s->cq;
    zl_cq_rec_t *r = cq->head;
    if (r == NULL)
        return false;
    cq->head = r->next;
    if (cq->head == NULL)
        cq->tail = NULL;
    cq->nrecs--;
    if (r->kind == ZLINK_COMPLETION_WRITABLE)
        cq->nwritable--;
    out->kind = (zlink_completion_kind_t)r->kind;
    out->completion_id = r->id;
    out->user_context = r->user_context;
    out->peer_rid = r->peer_rid;
    out->send_result = (zlink_send_complete_result_t)r->send_result;
    out->send_terminal_errno = r->send_errno;
    out->request_result = (zlink_request_result_t)r->request_result;
    out->reply_parts = r->reply_parts;
    out->reply_part_count = r->reply_count;
    free(r);
    return true;
}

/* ------------------------------------------------------------ for pollers */

bool zl_socket_completion_ready(zl_socket_t *s)
{
    zl_mutex_lock(&s->lk);
    zl_cq_process(s);
    bool ready = s->cq.nrecs > 0;
    zl_mutex_unlock(&s->lk);
    return ready;
}

int zl_socket_completion_claim(zl_socket_t *s, void *owner)
{
    zl_mutex_lock(&s->lk);
    int rc = 0;
    if (s->cq.owner == NULL)
        s->cq.owner = owner;
    else if (s->cq.owner != owner)
        rc = EBUSY;
    zl_mutex_unlock(&s->lk);
    return rc;
}

void zl_socket_completion_release(zl_socket_t *s, void *owner)
{
    zl_mutex_lock(&s->lk);
    if (s->cq.owner == owner)
        s->cq.owner = NULL;
    zl_mutex_unlock(&s->lk);
}

/* ------------------------------------------------------------ public API */

static bool supports_cq(int type)
{
    return type == ZLINK_PAIR || type == ZLINK_DEALER || type == ZLINK_ROUTER ||
           type == ZLINK_STREAM;
}

struct cq_args {
    zlink_completion_t *out;
};

static int cq_attempt(zl_socket_t *s, void *arg)
{
    struct cq_args *a = arg;
    zl_cq_process(s);
    return cq_pop(s, a->out) ? 0 : EAGAIN;
}

int zl_cq_recv(zl_socket_t *s, zlink_completion_t *out, int flags)
{
    if (!supports_cq(s->type))
        return ENOTSUP;
    struct cq_args a = {out};
    return zl_socket_wait_for(s, flags, &s->opts.rcvtimeo, cq_attempt, &a);
}
