/*
 * send.c — the blocking discipline every socket call shares
 * (zl_socket_wait_for) and sending: a record of the caller's parts becomes
 * frames, the pattern picks the pipe(s), DONTWAIT refusals register wait
 * tokens, requests and replies are admitted.
 *
 * Waiting: attempt under s->lk; sleep without it until the wake sequence
 * moves or the deadline passes. Queue notifies, attaches and shutdown call
 * zl_socket_wake; socket.h says why no edge is lost. Ownership: the
 * caller's parts are consumed on success and on failure (core-contract).
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

/* -------------------------------------------------------------- submit */

#define SMALL_RECORD 8

/* The wait discipline shared by submit and receive: attempt under s->lk;
 * on EAGAIN, in low-latency mode, poll the wake word for up to the
 * context's ZLINK_SPIN_US and attempt again when it moved; else count
 * ourselves as a waiter, attempt once more, then sleep until a wake-up
 * newer than the attempt or the deadline. */
typedef int (*attempt_fn)(zl_socket_t *s, void *arg);

/* Adaptive spinning: spin while the socket's last wait ended within the
 * window, and on every eighth wait after one did not (a probe), so a
 * socket whose peer went quiet stops burning CPU after one window. */
static bool socket_should_spin(zl_socket_t *s)
{
    if (atomic_load_explicit(&s->spin_hot, memory_order_relaxed))
        return true;
    return (atomic_fetch_add_explicit(&s->spin_cold, 1, memory_order_relaxed) & 7) == 7;
}

/* Polls s->wseq for a change from seq for up to ns (never past deadline).
 * True when it changed. No locks held. */
static bool socket_spin(zl_socket_t *s, uint32_t seq, int64_t ns, int64_t deadline)
{
    if (deadline >= 0) {
        int64_t left = deadline - zl_clock_ns();
        if (left <= 0)
            return false;
        if (left < ns)
            ns = left;
    }
    zl_spin_t sp;
    zl_spin_begin(&sp, ns);
    while (zl_spin_step(&sp))
        if (atomic_load_explicit(&s->wseq, memory_order_acquire) != seq)
            return true;
    return false;
}

/* timeo_opt points into s->opts (sndtimeo or rcvtimeo); it is read under
 * s->lk at the first attempt (the snapshot) and the deadline is computed
 * only once a wait is needed, so the hot path reads no clock. */
int zl_socket_wait_for(zl_socket_t *s, int flags, const int *timeo_opt, attempt_fn attempt,
                       void *arg)
{
    int64_t deadline = 0, spin_ns = -1, wait_start = 0;
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
            if (spin_ns < 0) {
                spin_ns = (int64_t)atomic_load_explicit(&s->ctx->spin_us, memory_order_relaxed) *
                          1000;
                if (spin_ns > 0)
                    wait_start = zl_clock_ns();
            }
            if (spin_ns > 0 && socket_should_spin(s)) {
                bool moved = socket_spin(s, seq, spin_ns, deadline);
                atomic_store_explicit(&s->spin_hot, moved, memory_order_relaxed);
                if (moved)
                    continue;
            }
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
        zl_socket_sleep(s, seq, until);
    }
    if (counted) {
        atomic_fetch_sub(&s->waiters, 1);
        /* A sleep that still ended within the window: the peer is quick
         * again, so the next wait spins. */
        if (spin_ns > 0 && rc != EAGAIN && zl_clock_ns() - wait_start <= spin_ns)
            atomic_store_explicit(&s->spin_hot, true, memory_order_relaxed);
    }
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


/* The wait token a DONTWAIT refusal registers (socket types with tokens):
 * what it carries in, what the registration gave back. */
typedef struct wait_token {
    void *user_context;
    uint64_t id;
    int rc; /* 0, or the errno of a failed registration */
} wait_token_t;

struct send_args {
    const zlink_routing_id_t *rid;
    zl_frame_t *frames;
    size_t n;
    uint64_t payload;   /* sum of part sizes, for MAXMSGSIZE */
    const submit_extra_t *x;
    wait_token_t *wt;   /* register a token on refusal, or NULL */
};

static int send_try(zl_socket_t *s, struct send_args *a);

/* Under s->lk: one admission attempt (the wait loop retries on EAGAIN).
 * A refusal that must leave a wait token registers it before the lock is
 * released, so no look at the socket from another thread (a poller, a
 * completion waiter) can fall between the refusal and the token: an edge
 * after the attempt began either finds the token or is found by its
 * recheck. */
static int send_attempt(zl_socket_t *s, void *arg)
{
    struct send_args *a = arg;
    /* Edges after this point count for a wait token of this attempt. */
    uint64_t since = atomic_load(&s->credit_seq);
    int rc = send_try(s, a);
    if (rc == EAGAIN && a->wt != NULL)
        a->wt->rc = zl_cq_register(s, a->rid, a->wt->user_context,
                                   a->x != NULL && a->x->req != NULL, since, &a->wt->id);
    return rc;
}

static int send_try(zl_socket_t *s, struct send_args *a)
{
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
                         wait_token_t *wt)
{
    struct send_args a = {rid, frames, n, payload, x, wt};
    return zl_socket_wait_for(s, flags, &s->opts.sndtimeo, send_attempt, &a);
}

void zl_frames_release(zl_frame_t *frames, size_t n)
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
                         wait_token_t *wt)
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
        rc = submit_frames(s, rid, frames, all, payload, flags, x, wt);
    if (rc != 0)
        zl_frames_release(frames, all);
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
                           size_t n, uint64_t seq, uint64_t reply_token, bool error, int flags,
                           void *user_context, uint64_t *token)
{
    submit_extra_t x = {NULL, NULL, seq, reply_token,
                        error ? ZMP_KIND_ERROR_REPLY : ZMP_KIND_REPLY};
    if (!(flags & ZLINK_DONTWAIT))
        return submit_common(s, rid, NULL, parts, n, ZLINK_SEND_FLAGS_NONE, &x, NULL);
    return submit_with(s, rid, parts, n, flags, user_context, token, &x);
}

static int submit_with(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                       size_t n, int flags, void *user_context, uint64_t *token,
                       const submit_extra_t *x)
{
    wait_token_t wt = {user_context, 0, 0};
    bool want = (flags & ZLINK_DONTWAIT) && has_tokens(s->type);
    int rc = submit_common(s, rid, NULL, parts, n, flags, x, want ? &wt : NULL);
    if (rc == EAGAIN && want) {
        if (wt.rc != 0)
            return wt.rc;
        if (token != NULL)
            *token = wt.id;
    }
    return rc;
}

int zl_socket_submit_topic(zl_socket_t *s, const char *topic, zlink_msg_t *parts, size_t n,
                           int flags)
{
    return submit_common(s, NULL, topic, parts, n, flags, NULL, NULL);
}
