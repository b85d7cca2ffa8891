/*
 * call.c — call objects: builders, the four terminators, admission to the
 * Core, and the one place a call ends (seed 000 §2-§5, §9-§13).
 *
 * Design notes
 * ------------
 * Life of a call:
 *   NEW      built by the application (payload, timeout, metadata);
 *   PENDING  accepted by a terminator: it holds a dispatcher slot, its
 *            OperationId and ReplyRouteId, a deadline, and a place in its
 *            host's pending list, all registered BEFORE the record is
 *            offered to the Core;
 *   DONE     one path won zf_take(): the outcome is being filled in;
 *   CLOSED   the outcome was delivered (callback returned, waiter woke) and
 *            the slot is free again.
 * Admission: the record is offered to the Core with DONTWAIT on the caller's
 * thread. BACKPRESSURED parks the call (ZF_ADM_WAITING) until the WRITABLE
 * record of its wait token, which the dispatcher hands to
 * zf_call_on_writable; that offers it again, once per edge. Once the Core
 * accepted it (ZF_ADM_ACCEPTED) the record is never offered again,
 * whatever happens to the connection (seed 000 §12). A one-way or a reply
 * completes at acceptance; a request waits for its reply, deadline,
 * cancellation or shutdown.
 *
 * References: the application holds the handle's (dropped by
 * zlink_call_release); an accepted call holds one more for the runtime,
 * dropped when it is CLOSED.
 */
#include "fw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void submit(zf_call_t *c);

static void call_destroy(zf_obj_t *o)
{
    zf_call_t *c = (zf_call_t *)o;
    zf_call_free_parts(c);
    if (c->has_reply_msg)
        zlink_msg_close(&c->reply_msg);
    free(c->target);
    free(c->packet); /* with content_type and data: one block */
    free(c->meta);
    free(c->reply_message);
    free(c->out_text);
    if (c->host != NULL)
        zf_obj_unref(&c->host->obj);
    free(c);
}

void zf_call_free_parts(zf_call_t *c)
{
    for (size_t i = 0; i < c->nparts; i++)
        zlink_msg_close(&c->parts[i]);
    c->nparts = 0;
}

static zf_call_t *call_get(zlink_call_t *h)
{
    return (zf_call_t *)zf_handle_get(h, ZF_KIND_CALL);
}

static zf_call_t *call_new(zf_host_t *h, int kind, const char *target,
                           zlink_fw_result_t *result)
{
    zf_call_t *c = zf_zalloc(sizeof *c);
    if (c == NULL) {
        if (result != NULL)
            *result = ZLINK_FW_INTERNAL_FAILURE;
        return NULL;
    }
    atomic_init(&c->obj.refs, 0);
    c->obj.kind = ZF_KIND_CALL;
    c->obj.destroy = call_destroy;
    c->kind = kind;
    c->reply_kind = -1;
    c->outcome.struct_size = sizeof c->outcome;
    c->outcome.message = "";
    c->outcome.packet = "";
    c->outcome.content_type = "";
    if (target != NULL) {
        size_t n = strnlen(target, ZF_NAME_MAX);
        c->target = malloc(n + 1);
        if (c->target == NULL) {
            free(c);
            if (result != NULL)
                *result = ZLINK_FW_INTERNAL_FAILURE;
            return NULL;
        }
        memcpy(c->target, target, n);
        c->target[n] = '\0';
    }
    zf_obj_ref(&h->obj);
    c->host = h;
    if (zf_handle_add(&c->obj) == NULL) {
        zf_obj_unref(&h->obj);
        free(c->target);
        free(c);
        if (result != NULL)
            *result = ZLINK_FW_INTERNAL_FAILURE;
        return NULL;
    }
    if (result != NULL)
        *result = ZLINK_FW_OK;
    return c;
}

/* ------------------------------------------------------------ builders */

static zlink_call_t *build(zlink_host_t *host, int kind, const char *name, const void *rid,
                           size_t rid_size, zlink_fw_result_t *result)
{
    zf_host_t *h = zf_host_get(host);
    if (h == NULL) {
        if (result != NULL)
            *result = ZLINK_FW_INVALID_HANDLE;
        return NULL;
    }
    bool node = kind == ZF_CALL_SEND_NODE || kind == ZF_CALL_REQUEST_NODE;
    if (!zf_name_ok(name, ZF_NAME_MAX) ||
        (node && (rid == NULL || rid_size == 0 || rid_size > 255))) {
        zf_obj_unref(&h->obj);
        if (result != NULL)
            *result = ZLINK_FW_INVALID_ARGUMENT;
        return NULL;
    }
    zf_call_t *c = call_new(h, kind, name, result);
    zf_obj_unref(&h->obj);
    if (c == NULL)
        return NULL;
    if (node) {
        c->rid.size = (uint8_t)rid_size;
        memcpy(c->rid.data, rid, rid_size);
    }
    return (zlink_call_t *)c->obj.handle;
}

ZLINK_EXPORT zlink_call_t *zlink_call_send_to_channel(zlink_host_t *host, const char *channel,
                                                      zlink_fw_result_t *result)
{
    return build(host, ZF_CALL_SEND_CHANNEL, channel, NULL, 0, result);
}

ZLINK_EXPORT zlink_call_t *zlink_call_request_to_channel(zlink_host_t *host,
                                                         const char *channel,
                                                         zlink_fw_result_t *result)
{
    return build(host, ZF_CALL_REQUEST_CHANNEL, channel, NULL, 0, result);
}

ZLINK_EXPORT zlink_call_t *zlink_call_send_to_node(zlink_host_t *host, const char *mesh,
                                                   const void *rid, size_t rid_size,
                                                   zlink_fw_result_t *result)
{
    return build(host, ZF_CALL_SEND_NODE, mesh, rid, rid_size, result);
}

ZLINK_EXPORT zlink_call_t *zlink_call_request_to_node(zlink_host_t *host, const char *mesh,
                                                      const void *rid, size_t rid_size,
                                                      zlink_fw_result_t *result)
{
    return build(host, ZF_CALL_REQUEST_NODE, mesh, rid, rid_size, result);
}

zf_call_t *zf_call_new_reply(zf_host_t *h, zlink_fw_result_t *result)
{
    return call_new(h, ZF_CALL_REPLY, NULL, result);
}

/* The builder: setters and the first terminator exclude each other
 * through c->building (a call is built by one thread at a time; a second
 * thread meanwhile gets INVALID_OPERATION, never a torn call), and
 * setters refuse a call a terminator already took. */
static int setter_enter(zlink_call_t *call, zf_call_t **out)
{
    zf_call_t *c = call_get(call);
    if (c == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&c->building, &idle, 1)) {
        zf_obj_unref(&c->obj);
        return ZLINK_FW_INVALID_OPERATION;
    }
    if (atomic_load(&c->term) != ZF_TERM_NONE) {
        atomic_store(&c->building, 0);
        zf_obj_unref(&c->obj);
        return ZLINK_FW_INVALID_OPERATION;
    }
    *out = c;
    return ZLINK_FW_OK;
}

static void setter_leave(zf_call_t *c)
{
    atomic_store(&c->building, 0);
    zf_obj_unref(&c->obj);
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_set_payload(zlink_call_t *call, const char *packet,
                                                      const char *content_type,
                                                      const void *data, size_t size)
{
    zf_call_t *c;
    int rc = setter_enter(call, &c);
    if (rc != 0)
        return rc;
    if (content_type == NULL)
        content_type = "";
    if (!zf_name_ok(packet, ZF_NAME_MAX) ||
        (content_type[0] != '\0' && !zf_name_ok(content_type, ZF_NAME_MAX)) ||
        (data == NULL && size > 0) || size > UINT32_MAX) {
        setter_leave(c);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    /* One block: packet NUL content type NUL bytes. */
    size_t pn = strlen(packet) + 1, tn = strlen(content_type) + 1;
    char *block = malloc(pn + tn + size);
    if (block == NULL) {
        setter_leave(c);
        return ZLINK_FW_INTERNAL_FAILURE;
    }
    memcpy(block, packet, pn);
    memcpy(block + pn, content_type, tn);
    if (size > 0)
        memcpy(block + pn + tn, data, size);
    free(c->packet);
    c->packet = block;
    c->content_type = block + pn;
    c->data = (uint8_t *)block + pn + tn;
    c->size = size;
    c->has_payload = true;
    setter_leave(c);
    return ZLINK_FW_OK;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_set_timeout(zlink_call_t *call, int64_t timeout)
{
    zf_call_t *c;
    int ms = 0, rc = setter_enter(call, &c);
    if (rc != 0)
        return rc;
    if (c->kind != ZF_CALL_REQUEST_CHANNEL && c->kind != ZF_CALL_REQUEST_NODE)
        rc = ZLINK_FW_INVALID_OPERATION; /* a send's deadline is its family's */
    else
        rc = zf_timeout_ms(timeout, &ms);
    if (rc == 0)
        c->timeout_ns = ZLINK_MS(ms);
    setter_leave(c);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_set_metadata(zlink_call_t *call, const char *key,
                                                       const char *value)
{
    zf_call_t *c;
    int rc = setter_enter(call, &c);
    if (rc != 0)
        return rc;
    if (c->kind == ZF_CALL_REPLY) {
        setter_leave(c);
        return ZLINK_FW_INVALID_OPERATION; /* metadata is never copied into a reply */
    }
    if (key == NULL || value == NULL) {
        setter_leave(c);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    if (c->meta == NULL && (c->meta = malloc(ZF_META_MAX)) == NULL) {
        setter_leave(c);
        return ZLINK_FW_INTERNAL_FAILURE;
    }
    rc = zf_wire_meta_put(c->meta, &c->meta_len, &c->meta_count, key, value);
    setter_leave(c);
    return rc == 0 ? ZLINK_FW_OK : ZLINK_FW_INVALID_ARGUMENT;
}

/* ---------------------------------------------------------- finishing */

static void host_unlink(zf_call_t *c)
{
    zf_host_t *h = c->host;
    if (c->prev_host != NULL)
        c->prev_host->next_host = c->next_host;
    else if (h->pending == c)
        h->pending = c->next_host;
    if (c->next_host != NULL)
        c->next_host->prev_host = c->prev_host;
    c->next_host = c->prev_host = NULL;
}

static bool is_request(const zf_call_t *c)
{
    return c->kind == ZF_CALL_REQUEST_CHANNEL || c->kind == ZF_CALL_REQUEST_NODE;
}

/* ------------------------------------------------------ waiting queues
 *
 * Calls to one target (a CS client socket, a mesh peer) are admitted in the
 * order they were started: while one waits for room, later ones queue
 * behind it without being offered, and a WRITABLE edge offers the queue's
 * head, then the next, until one is refused again. Only a head that was
 * offered and refused holds a Core wait token. All under zf_disp.lk. */

static void waitq_push(zf_call_t *c)
{
    zf_waitq_t *q = c->waitq;
    if (q == NULL || c->queued)
        return;
    c->queued = true;
    c->wnext = NULL;
    c->wprev = q->tail;
    if (q->tail != NULL)
        q->tail->wnext = c;
    else
        q->head = c;
    q->tail = c;
}

static void waitq_remove(zf_call_t *c)
{
    zf_waitq_t *q = c->waitq;
    if (q == NULL || !c->queued)
        return;
    if (c->wprev != NULL)
        c->wprev->wnext = c->wnext;
    else
        q->head = c->wnext;
    if (c->wnext != NULL)
        c->wnext->wprev = c->wprev;
    else
        q->tail = c->wprev;
    c->wnext = c->wprev = NULL;
    c->queued = false;
}

/* Under zf_disp.lk: the queue head to offer next (with a reference for the
 * caller), or NULL when the head is busy or the queue is empty. */
static zf_call_t *waitq_next(zf_waitq_t *q)
{
    zf_call_t *h = q != NULL ? q->head : NULL;
    if (h == NULL || h->adm == ZF_ADM_SUBMITTING || h->state != ZF_ST_PENDING)
        return NULL;
    zf_obj_ref(&h->obj);
    return h;
}

/* Under zf_disp.lk: the one completion contention point. True for the
 * path that moves c from PENDING to DONE; that path alone fills the outcome
 * and then calls deliver(). */
static bool take_locked(zf_call_t *c)
{
    if (c->state != ZF_ST_PENDING)
        return false;
    c->state = ZF_ST_DONE;
    zf_disp_set_deadline(c, 0);
    host_unlink(c);
    if (is_request(c) && c->host->requests_inflight > 0)
        c->host->requests_inflight--;
    if (c->adm_counted) {
        c->adm_counted = false;
        c->host->oneway_waiting--;
    }
    waitq_remove(c);
    return true;
}

/* Under zf_disp.lk, after a successful take: hands the outcome to its
 * terminator. Returns true when the caller must wake the dispatcher after
 * unlocking; *close_now when it must drop the runtime's reference. */
static bool deliver_locked(zf_call_t *c, bool *close_now)
{
    bool wake = false;
    *close_now = false;
    c->ready = true;
    if (atomic_load(&c->term) == ZF_TERM_WAIT) {
        pthread_cond_broadcast(&zf_disp.waiters);
    } else if (c->fn != NULL) {
        /* SC-17: never before zlink_call_start has returned, even on
         * another thread; begin() queues it then. */
        if (c->in_start) {
            /* Counted as queued from now on (shutdown's callbacks_done
             * waits for it): begin() hands the count to the lane. */
            c->deferred = true;
            c->host->callbacks_queued++;
        } else
            wake = zf_disp_queue_callback(c);
    } else {
        c->state = ZF_ST_CLOSED;
        zf_disp_unreserve(c);
        pthread_cond_broadcast(&zf_disp.waiters);
        *close_now = true;
    }
    return wake;
}

static void deliver(zf_call_t *c)
{
    bool close_now;
    pthread_mutex_lock(&zf_disp.lk);
    bool wake = deliver_locked(c, &close_now);
    pthread_mutex_unlock(&zf_disp.lk);
    if (wake)
        zf_disp_wake();
    if (close_now)
        zf_obj_unref(&c->obj);
}

/* The one way a call ends with an outcome decided here (timeout, cancel,
 * shutdown, admission): message is a static text. Take, fill and deliver
 * in one lock round; the kept record (if any) is released after. */
int zf_call_finish(zf_call_t *c, int result, uint32_t remote_code, const char *message)
{
    bool close_now = false, wake = false;
    pthread_mutex_lock(&zf_disp.lk);
    if (c->state == ZF_ST_PENDING && c->adm == ZF_ADM_SUBMITTING) {
        /* A thread is inside the Core with this record: whether the Core
         * took it decides (offer_result); until then nothing is final. */
        if (c->later_result == 0) {
            c->later_result = result;
            c->later_message = message;
        }
        pthread_mutex_unlock(&zf_disp.lk);
        return 0;
    }
    /* The head of a waiting queue holds its queue's wait token: when it
     * ends now (deadline, cancel, shutdown), its WRITABLE edge will find
     * nobody, so the next in line is offered here and gets a token of its
     * own if there is still no room. */
    zf_call_t *next = NULL;
    bool head = c->queued && c->waitq->head == c && c->adm == ZF_ADM_WAITING;
    bool won = take_locked(c);
    if (won && head)
        next = waitq_next(c->waitq);
    if (won) {
        zf_call_free_parts(c); /* a record never admitted is not kept */
        c->outcome.result = result;
        c->outcome.remote_code = remote_code;
        c->outcome.message = message != NULL ? message : "";
        wake = deliver_locked(c, &close_now);
    }
    pthread_mutex_unlock(&zf_disp.lk);
    if (!won)
        return 0;
    if (result == ZLINK_FW_DEADLINE_EXCEEDED && is_request(c))
        atomic_fetch_add(&c->host->m_request_timeouts, 1);
    if (wake)
        zf_disp_wake();
    if (close_now)
        zf_obj_unref(&c->obj);
    if (next != NULL) {
        submit(next);
        zf_obj_unref(&next->obj);
    }
    return 1;
}

/* A REQUEST completion record for c (dispatcher thread). */
void zf_call_finish_reply(zf_call_t *c, zlink_completion_t *rec)
{
    switch (rec->request_result) {
    case ZLINK_REQUEST_OK:
        break;
    case ZLINK_REQUEST_TIMED_OUT:
        zf_call_finish(c, ZLINK_FW_DEADLINE_EXCEEDED, 0, "request timed out");
        return;
    case ZLINK_REQUEST_NOT_CONNECTED:
        zf_call_finish(c, ZLINK_FW_UNAVAILABLE, 0, "connection to the target was lost");
        return;
    case ZLINK_REQUEST_TERMINATED:
        zf_call_finish(c, ZLINK_FW_SHUTTING_DOWN, 0, "the runtime is shutting down");
        return;
    default:
        zf_call_finish(c, ZLINK_FW_PROTOCOL_ERROR, (uint32_t)rec->request_result,
                       "the target answered with a Core error reply");
        return;
    }
    zf_rec_t r;
    if (zf_wire_decode(rec->reply_parts, rec->reply_part_count, &r) != 0 ||
        r.command != ZF_CMD_REPLY || r.correlation != c->route_id || r.op_high != c->op_high ||
        r.op_low != c->op_low) {
        atomic_fetch_add(&c->host->m_protocol_errors, 1);
        zf_call_finish(c, ZLINK_FW_PROTOCOL_ERROR, 0, "malformed reply");
        return;
    }
    pthread_mutex_lock(&zf_disp.lk);
    bool won = take_locked(c);
    /* The submitting thread may not have read the Core's OK yet: drop the
     * kept record here, under the lock, before reply_msg (which shares
     * its bytes) is filled. */
    if (won)
        zf_call_free_parts(c);
    pthread_mutex_unlock(&zf_disp.lk);
    if (!won)
        return; /* late: another path decided first */
    /* The winner owns the outcome now. Its texts go in one block:
     * message NUL packet NUL content type NUL. */
    size_t mn = r.message.n, pn = r.has_envelope ? r.packet.n : 0,
           tn = r.has_envelope ? r.content_type.n : 0;
    char *text = malloc(mn + pn + tn + 3);
    if (text != NULL) {
        if (mn > 0)
            memcpy(text, r.message.p, mn);
        text[mn] = '\0';
        if (pn > 0)
            memcpy(text + mn + 1, r.packet.p, pn);
        text[mn + 1 + pn] = '\0';
        if (tn > 0)
            memcpy(text + mn + pn + 2, r.content_type.p, tn);
        text[mn + pn + 2 + tn] = '\0';
        c->out_text = text;
        c->outcome.message = text;
        c->outcome.packet = text + mn + 1;
        c->outcome.content_type = text + mn + pn + 2;
    }
    if (r.terminal != ZF_TR_OK) {
        c->outcome.result = ZLINK_FW_KIND_BASE + zf_kind_of_terminal(r.terminal);
        c->outcome.remote_code = r.terminal;
    } else if (text == NULL) {
        c->outcome.result = ZLINK_FW_INTERNAL_FAILURE;
        c->outcome.message = "out of memory for the reply";
    } else {
        c->outcome.result = ZLINK_FW_OK;
        if (r.has_envelope) {
            /* Keep the envelope frame: the payload view points into it. */
            size_t last = rec->reply_part_count - 1;
            const uint8_t *base = zlink_msg_data(&rec->reply_parts[last]);
            size_t off = r.payload.n > 0 ? (size_t)(r.payload.p - base) : 0;
            zlink_msg_init(&c->reply_msg);
            zlink_msg_move(&c->reply_msg, &rec->reply_parts[last]);
            c->has_reply_msg = true;
            /* An inline payload moved with its message: point into the
             * call's own copy. */
            c->outcome.payload =
                r.payload.n > 0 ? (const uint8_t *)zlink_msg_data(&c->reply_msg) + off : NULL;
            c->outcome.payload_size = r.payload.n;
        }
    }
    deliver(c);
}

/* ----------------------------------------------------------- admission */

static int encode(zf_call_t *c, int64_t now)
{
    zf_rec_t r;
    memset(&r, 0, sizeof r);
    r.op_high = c->op_high;
    r.op_low = c->op_low;
    switch (c->kind) {
    case ZF_CALL_SEND_CHANNEL:
        r.command = ZF_CMD_CHANNEL_SEND;
        break;
    case ZF_CALL_REQUEST_CHANNEL:
        r.command = ZF_CMD_CHANNEL_REQUEST;
        break;
    case ZF_CALL_SEND_NODE:
        r.command = ZF_CMD_NODE_SEND;
        break;
    case ZF_CALL_REQUEST_NODE:
        r.command = ZF_CMD_NODE_REQUEST;
        break;
    default:
        r.command = ZF_CMD_REPLY;
        break;
    }
    if (c->kind == ZF_CALL_SEND_CHANNEL || c->kind == ZF_CALL_REQUEST_CHANNEL) {
        r.channel.p = (const uint8_t *)c->target;
        r.channel.n = strlen(c->target);
    }
    if (is_request(c)) {
        r.correlation = c->route_id;
        int64_t left = c->request_deadline - now;
        r.timeout_ms = left <= 0 ? 1 : (uint32_t)((left + 999999) / 1000000);
    }
    if (c->kind == ZF_CALL_REPLY) {
        r.correlation = c->reply_corr;
        r.op_high = c->reply_op_high;
        r.op_low = c->reply_op_low;
        r.terminal = c->reply_kind < 0 ? ZF_TR_OK : zf_terminal_of_kind(c->reply_kind);
        if (c->reply_message != NULL) {
            r.message.p = (const uint8_t *)c->reply_message;
            r.message.n = strlen(c->reply_message);
        }
    }
    if (c->meta_count > 0) {
        r.flags |= ZF_FLAG_META;
        r.meta_count = c->meta_count;
        r.meta.p = c->meta;
        r.meta.n = c->meta_len;
    }
    if (c->has_payload) {
        r.has_envelope = true;
        r.packet.p = (const uint8_t *)c->packet;
        r.packet.n = strlen(c->packet);
        r.content_type.p = (const uint8_t *)c->content_type;
        r.content_type.n = strlen(c->content_type);
        r.payload.p = c->data;
        r.payload.n = c->size;
    }
    return zf_wire_encode(&r, c->parts, 3, &c->nparts) == 0 ? 0 : ZLINK_FW_INTERNAL_FAILURE;
}

static void *uctx_of(const zf_call_t *c)
{
    return (void *)(uintptr_t)(ZF_UCTX_CALL | ((uint64_t)c->gen << 16) | c->slot);
}

/* Under zf_disp.lk: prepares one offer of c's record (DONTWAIT): false when
 * there is nothing to offer (finished, accepted, another thread inside).
 * The Core consumes what it is given even when it refuses it, so the offer
 * is a copy and c keeps the record until the Core accepts it. */
static bool offer_prepare(zf_call_t *c, zlink_msg_t *tmp, size_t *n)
{
    if (c->state != ZF_ST_PENDING || c->adm == ZF_ADM_ACCEPTED ||
        c->adm == ZF_ADM_SUBMITTING || c->nparts == 0)
        return false;
    c->adm = ZF_ADM_SUBMITTING;
    c->writable_seen = false;
    *n = c->nparts;
    for (size_t i = 0; i < *n; i++) {
        zlink_msg_init(&tmp[i]);
        zlink_msg_copy(&tmp[i], &c->parts[i]);
    }
    return true;
}

/* No lock: the Core call itself. */
static zlink_submit_result_t offer_send(zf_call_t *c, zlink_msg_t *tmp, size_t n, int64_t now)
{
    zlink_completion_id_t tok = 0;
    zlink_submit_result_t rc;
    void *s = c->sock->s;
    switch (c->kind) {
    case ZF_CALL_REPLY:
        rc = zlink_reply_submit(s, &c->reply_rid, c->reply_token, 0, tmp, n,
                                ZLINK_SEND_FLAGS_DONTWAIT, uctx_of(c), &tok);
        break;
    case ZF_CALL_REQUEST_CHANNEL:
    case ZF_CALL_REQUEST_NODE: {
        int64_t left = c->request_deadline - now;
        uint32_t ms = left <= 0 ? 1 : (uint32_t)((left + 999999) / 1000000);
        rc = zlink_request(s, c->sock->role == ZF_SOCK_MESH ? &c->rid : NULL, tmp, n,
                           ZLINK_SEND_FLAGS_DONTWAIT, ms, uctx_of(c), &tok);
        break;
    }
    default:
        if (c->sock->role == ZF_SOCK_MESH)
            rc = zlink_send_rid(s, &c->rid, tmp, n, ZLINK_SEND_FLAGS_DONTWAIT, uctx_of(c),
                                &tok);
        else
            rc = zlink_send(s, tmp, n, ZLINK_SEND_FLAGS_DONTWAIT, uctx_of(c), &tok);
        break;
    }
    zlink_multipart_close(tmp, n);
    return rc;
}

/* Under zf_disp.lk: what the Core's answer means for c. Returns the
 * outcome to finish c with (-1: none yet) and *why its text; *again when
 * room came back during the attempt (offer c once more); *next, with a
 * reference, the call queued behind c to offer now that c got in. A
 * decision that arrived while the thread was inside the Core (deadline,
 * cancel, shutdown: c->later_result) is applied here: a one-way the Core
 * took still completes normally, anything refused ends with it. */
static int offer_result(zf_call_t *c, zlink_submit_result_t rc, const char **why,
                        bool *again, zf_call_t **next)
{
    int later = c->later_result;
    const char *later_why = c->later_message;
    c->later_result = 0;
    c->later_message = NULL;
    *again = false;
    *why = NULL;
    *next = NULL;
    if (c->state != ZF_ST_PENDING) {
        /* Decided meanwhile by a path that did not wait for this answer
         * (a request's reply). It left its queue then; whatever the Core
         * said (a refusal left a token nobody will answer for), the queue
         * moves on. */
        c->adm = rc == ZLINK_SUBMIT_OK ? ZF_ADM_ACCEPTED : ZF_ADM_NONE;
        *next = waitq_next(c->waitq);
        return -1;
    }
    if (rc == ZLINK_SUBMIT_OK) {
        c->adm = ZF_ADM_ACCEPTED;
        zf_call_free_parts(c); /* never offered again (seed 000 §12) */
        if (c->adm_counted) {
            c->adm_counted = false;
            c->host->oneway_waiting--;
        }
        waitq_remove(c);
        *next = waitq_next(c->waitq);
        if (!is_request(c))
            return ZLINK_FW_OK; /* send acceptance; a later decision loses */
        if (c->deadline != c->request_deadline)
            zf_disp_set_deadline(c, c->request_deadline);
        if (later != 0) {
            *why = later_why;
            return later;
        }
        return -1;
    }
    if (rc == ZLINK_SUBMIT_BACKPRESSURED) {
        c->adm = ZF_ADM_WAITING;
        zf_disp_watch_locked(c->sock); /* its WRITABLE edge must be seen */
        if (later != 0) {
            *why = later_why;
            return later;
        }
        if (c->writable_seen) {
            *again = true; /* room came back during the attempt */
            return -1;
        }
        if (!c->adm_counted) {
            if (c->host->oneway_waiting >= ZLINK_ADMISSION_WAITERS) {
                *why = "admission waiters exhausted";
                return ZLINK_FW_DEADLINE_EXCEEDED;
            }
            c->adm_counted = true;
            c->host->oneway_waiting++;
            /* Waiting for room: a one-way's send timeout runs now; a
             * request's own timeout bounds its whole life, the wait for
             * room included (002 §8: the send-timeout stage is the send
             * family's; JQ-16). */
            zf_disp_set_deadline(c, is_request(c) ? c->request_deadline : c->send_deadline);
        }
        waitq_push(c); /* the head of its queue: it holds the wait token */
        return -1;
    }
    c->adm = ZF_ADM_NONE;
    if (later != 0) {
        *why = later_why;
        return later;
    }
    switch (rc) {
    case ZLINK_SUBMIT_NOT_CONNECTED:
    case ZLINK_SUBMIT_NOT_FOUND:
        *why = "no route to the target";
        return ZLINK_FW_UNAVAILABLE;
    case ZLINK_SUBMIT_TERMINATED:
    case ZLINK_SUBMIT_INVALID_STATE:
        *why = "the socket is closing";
        return ZLINK_FW_SHUTTING_DOWN;
    case ZLINK_SUBMIT_INVALID_ARGUMENT:
        *why = "the record is larger than the socket admits";
        return ZLINK_FW_REJECTED;
    default:
        *why = "the Core refused the record";
        return ZLINK_FW_INTERNAL_FAILURE;
    }
}

/* Under zf_disp.lk, after offer_result: decides c (finishing it when
 * outcome >= 0) while offer_result's answer is still the truth. A call
 * that ends here leaves its waiting queue; if it was the head, the Core
 * wait token it may hold now belongs to nobody (its WRITABLE finds the
 * call gone), so *next gets the new head to offer at once. */
static void offer_decide(zf_call_t *c, int outcome, const char *why, bool *wake,
                         bool *close_now, zf_call_t **next)
{
    *wake = *close_now = false;
    if (outcome < 0)
        return;
    bool head = c->queued && c->waitq->head == c;
    if (take_locked(c)) {
        if (head && *next == NULL)
            *next = waitq_next(c->waitq);
        zf_call_free_parts(c);
        c->outcome.result = outcome;
        c->outcome.message = why != NULL ? why : "";
        *wake = deliver_locked(c, close_now);
    }
}

/* Offers c's record (no lock held; the caller holds a reference to c),
 * then, as long as the Core takes them, the calls queued behind it. Loops
 * on c while an edge arrived during the attempt. */
static void submit(zf_call_t *c)
{
    zf_call_t *held = NULL; /* our reference to a queued call */
    while (c != NULL) {
        zlink_msg_t tmp[3];
        size_t n;
        pthread_mutex_lock(&zf_disp.lk);
        bool go = offer_prepare(c, tmp, &n);
        pthread_mutex_unlock(&zf_disp.lk);
        zf_call_t *next = NULL;
        bool again = false;
        if (go) {
            zlink_submit_result_t rc = offer_send(c, tmp, n, zf_now_ns());
            const char *why;
            bool wake, close_now;
            pthread_mutex_lock(&zf_disp.lk);
            int outcome = offer_result(c, rc, &why, &again, &next);
            offer_decide(c, outcome, why, &wake, &close_now, &next);
            pthread_mutex_unlock(&zf_disp.lk);
            if (wake)
                zf_disp_wake();
            if (close_now)
                zf_obj_unref(&c->obj);
        }
        if (again)
            continue;
        if (held != NULL)
            zf_obj_unref(&held->obj);
        held = c = next;
    }
}

void zf_call_on_writable(zf_call_t *c, const zlink_completion_t *rec)
{
    pthread_mutex_lock(&zf_disp.lk);
    zf_call_t *offer = NULL;
    bool gone = false;
    if (rec->send_result != ZLINK_SEND_ADMITTED) {
        /* the target was removed: the waiting call ends (its queue too
         * will find no room; each call's deadline or its own edge ends it) */
        gone = c->state == ZF_ST_PENDING && c->adm == ZF_ADM_WAITING;
    } else if (c->state == ZF_ST_PENDING && c->adm == ZF_ADM_SUBMITTING) {
        c->writable_seen = true;
    } else if (c->waitq != NULL) {
        offer = waitq_next(c->waitq); /* the head, whoever holds the token */
    } else if (c->state == ZF_ST_PENDING && c->adm == ZF_ADM_WAITING) {
        zf_obj_ref(&c->obj);
        offer = c;
    }
    pthread_mutex_unlock(&zf_disp.lk);
    if (offer != NULL) {
        submit(offer);
        zf_obj_unref(&offer->obj);
    } else if (gone) {
        zf_call_finish(c, ZLINK_FW_UNAVAILABLE, 0, "the target was removed");
    }
}

/* --------------------------------------------------------- terminators */

/* Takes the terminator, accepts and offers the record once. 0 when
 * accepted (the outcome comes later), else the result (nothing was sent).
 * The hot path takes zf_disp.lk twice: to accept (terminator, slot, ids,
 * registration) and to read the Core's answer. */
static int begin(zf_call_t *c, int term, zlink_completion_fn fn, void *user, bool held)
{
    zf_host_t *h = c->host;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&c->building, &idle, 1))
        return ZLINK_FW_INVALID_OPERATION; /* a setter or terminator is inside */
    if (atomic_load(&c->term) != ZF_TERM_NONE) {
        atomic_store(&c->building, 0);
        return ZLINK_FW_INVALID_OPERATION;
    }
    if (!c->has_payload && (c->kind != ZF_CALL_REPLY || c->reply_kind < 0)) {
        atomic_store(&c->building, 0);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    c->fn = fn;
    c->user = user;
    c->held = held;
    atomic_store(&c->term, term); /* from here on the call is no longer built */
    atomic_store(&c->building, 0);
    if (atomic_load(&c->cancelled_early))
        return ZLINK_FW_CANCELLED; /* cancelled before its terminator: never sent */
    int rc = zf_host_serving(h);
    /* A draining host still answers the work it accepted: replies go out
     * until it stops. */
    bool reply = c->kind == ZF_CALL_REPLY;
    if (rc == ZLINK_FW_SHUTTING_DOWN && reply &&
        atomic_load(&h->state) == ZLINK_HOST_DRAINING)
        rc = 0;
    if (rc != 0)
        return rc;
    /* Route: the node's peer, or the select-one pick, fixed from here on
     * (seed 000 §5: re-picking ends when the first binding operation
     * starts, and that is the offer below). */
    if (c->kind != ZF_CALL_REPLY) {
        /* The socket list does not change while the host serves: no lock
         * to find a CS channel; mesh peers do change (host->lk). */
        zf_sock_t *cs = NULL;
        if (c->kind == ZF_CALL_SEND_CHANNEL || c->kind == ZF_CALL_REQUEST_CHANNEL)
            cs = zf_host_find_sock(h, ZF_SOCK_CS_CLIENT, c->target);
        if (cs != NULL) {
            c->sock = cs;
            c->waitq = &cs->waitq;
        } else if (zf_host_find_sock(h, ZF_SOCK_CS_SERVER, c->target) != NULL) {
            rc = ZLINK_FW_INVALID_OPERATION; /* a Server ROUTER never starts a call */
        } else {
            pthread_mutex_lock(&h->lk);
            rc = zf_mesh_route(h, c, &c->sock);
            pthread_mutex_unlock(&h->lk);
        }
        if (rc != 0)
            return rc;
    } else {
        c->sock = c->reply_sock;
    }
    int64_t now = zf_now_ns();
    c->send_deadline = now + zf_sock_send_timeout(c->sock);
    if (is_request(c)) {
        int64_t t = c->timeout_ns > 0 ? c->timeout_ns : zf_sock_request_timeout(c->sock);
        c->request_deadline = now + t;
    }
    /* The slot first: its index and generation are the ReplyRouteId the
     * record carries (seed 000 §10: identity, pending entry, dispatcher
     * slot and reply route exist before the transport sees the record). */
    pthread_mutex_lock(&zf_disp.lk);
    if (h->draining && !reply) {
        rc = ZLINK_FW_SHUTTING_DOWN;
    } else if (zf_disp_reserve(c) != 0) {
        if (c->kind != ZF_CALL_REPLY) {
            rc = ZLINK_FW_CAPACITY_EXCEEDED;
        } else {
            /* A reply is not an operation of the caller's budget: with no
             * free slot it completes without one (a full cap must not stop
             * the answers that would free it). */
            c->counted = false;
            c->slot = UINT32_MAX;
        }
    }
    pthread_mutex_unlock(&zf_disp.lk);
    if (rc != 0)
        return rc;
    rc = encode(c, now);
    zlink_msg_t tmp[3];
    size_t n = 0;
    pthread_mutex_lock(&zf_disp.lk);
    if (rc == 0 && h->draining && !reply)
        rc = ZLINK_FW_SHUTTING_DOWN; /* shutdown began meanwhile: it must see
                                      * every pending call, so none is added now */
    if (rc == 0 && reply && h->replies_closed)
        rc = ZLINK_FW_SHUTTING_DOWN; /* the same for a reply, once shutdown's
                                      * last sweep began (host.c) */
    if (rc != 0) {
        zf_disp_unreserve(c);
        pthread_mutex_unlock(&zf_disp.lk);
        return rc;
    }
    c->state = ZF_ST_PENDING;
    c->in_start = true;
    zf_obj_ref(&c->obj); /* the runtime's reference, until CLOSED */
    c->next_host = h->pending;
    c->prev_host = NULL;
    if (h->pending != NULL)
        h->pending->prev_host = c;
    h->pending = c;
    if (is_request(c)) {
        h->requests_inflight++;
        zf_disp_set_deadline(c, c->request_deadline);
    }
    /* A one-way's send timeout is armed only if it has to wait for room.
     * Calls to a target that has callers waiting queue behind them. */
    bool go = false;
    int outcome = -1;
    const char *why = NULL;
    if (atomic_load(&c->cancelled_early)) {
        outcome = ZLINK_FW_CANCELLED; /* the cancel came while it was being started */
        why = "cancelled";
    } else if (c->waitq != NULL && c->waitq->head != NULL) {
        if (h->oneway_waiting >= ZLINK_ADMISSION_WAITERS) {
            outcome = ZLINK_FW_DEADLINE_EXCEEDED;
            why = "admission waiters exhausted";
        } else {
            c->adm = ZF_ADM_WAITING;
            c->adm_counted = true;
            h->oneway_waiting++;
            zf_disp_set_deadline(c, is_request(c) ? c->request_deadline : c->send_deadline);
            waitq_push(c);
        }
    } else {
        go = offer_prepare(c, tmp, &n);
    }
    bool again = false, wake = false, close_now = false;
    zf_call_t *next = NULL;
    if (go) {
        pthread_mutex_unlock(&zf_disp.lk);
        zlink_submit_result_t src = offer_send(c, tmp, n, now);
        pthread_mutex_lock(&zf_disp.lk);
        outcome = offer_result(c, src, &why, &again, &next);
    }
    offer_decide(c, outcome, why, &wake, &close_now, &next);
    pthread_mutex_unlock(&zf_disp.lk);
    if (wake)
        zf_disp_wake();
    if (close_now)
        zf_obj_unref(&c->obj);
    if (again)
        submit(c);
    if (next != NULL) {
        submit(next);
        zf_obj_unref(&next->obj);
    }
    pthread_mutex_lock(&zf_disp.lk);
    c->in_start = false;
    if (c->deferred) {
        wake = zf_disp_queue_callback(c);
        c->host->callbacks_queued--; /* the lane counts it now (deliver_locked) */
    }
    c->deferred = false;
    pthread_mutex_unlock(&zf_disp.lk);
    if (wake)
        zf_disp_wake();
    return ZLINK_FW_OK;
}

/* zlink_call_start and zlink_call_start_held: resolves the handle and
 * begins the ZF_TERM_START terminator (no lock held; may block only as
 * begin does). A held start needs fn, the callback the slot is held for.
 * The handle's reference is dropped before returning. */
static zlink_fw_result_t start_call(zlink_call_t *call, zlink_completion_fn fn, void *user,
                                    bool held)
{
    zf_call_t *c = call_get(call);
    if (c == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    int rc = held && fn == NULL ? ZLINK_FW_INVALID_ARGUMENT
                                : begin(c, ZF_TERM_START, fn, user, held);
    zf_obj_unref(&c->obj);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_start(zlink_call_t *call, zlink_completion_fn fn,
                                                void *user)
{
    return start_call(call, fn, user, false);
}

/* The same start; the slot stays reserved after fn returned until
 * zlink_call_callback_done (dispatch.c, run_callbacks). */
ZLINK_EXPORT zlink_fw_result_t zlink_call_start_held(zlink_call_t *call, zlink_completion_fn fn,
                                                     void *user)
{
    return start_call(call, fn, user, true);
}

/* Under zf_disp.lk: ends a held start's hold. True when fn had returned
 * already, so the call is CLOSED now and the caller drops the runtime's
 * reference after unlocking; else run_callbacks closes it when fn
 * returns. */
static bool hold_end_locked(zf_call_t *c)
{
    c->hold_done = true;
    if (!c->hold_returned)
        return false;
    zf_disp_callback_closed(c);
    return true;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_callback_done(zlink_call_t *call)
{
    zf_call_t *c = call_get(call);
    if (c == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    int rc = ZLINK_FW_OK;
    bool close_now = false;
    pthread_mutex_lock(&zf_disp.lk);
    if (!c->held || !c->hold_ran || c->hold_done)
        rc = ZLINK_FW_INVALID_OPERATION; /* not a held start, fn not called yet, or twice */
    else
        close_now = hold_end_locked(c);
    pthread_mutex_unlock(&zf_disp.lk);
    if (close_now)
        zf_obj_unref(&c->obj); /* the runtime's reference */
    zf_obj_unref(&c->obj);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_wait(zlink_call_t *call, zlink_outcome_t *outcome)
{
    zf_call_t *c = call_get(call);
    if (c == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (outcome == NULL || outcome->struct_size < sizeof *outcome) {
        zf_obj_unref(&c->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    if (zf_ctx_active()) {
        /* F2-a: blocking here could wait for work this very thread must
         * run. The call stays unfinished. */
        zf_obj_unref(&c->obj);
        outcome->result = ZLINK_FW_INVALID_OPERATION;
        return ZLINK_FW_INVALID_OPERATION;
    }
    int rc = begin(c, ZF_TERM_WAIT, NULL, NULL, false);
    if (rc != 0) {
        zf_obj_unref(&c->obj);
        outcome->result = rc;
        outcome->message = "";
        outcome->payload = NULL;
        outcome->payload_size = 0;
        outcome->packet = outcome->content_type = "";
        outcome->remote_code = 0;
        return rc;
    }
    pthread_mutex_lock(&zf_disp.lk);
    while (!c->ready)
        pthread_cond_wait(&zf_disp.waiters, &zf_disp.lk);
    uint32_t given = outcome->struct_size;
    *outcome = c->outcome;
    outcome->struct_size = given;
    c->state = ZF_ST_CLOSED;
    zf_disp_unreserve(c);
    pthread_cond_broadcast(&zf_disp.waiters);
    pthread_mutex_unlock(&zf_disp.lk);
    zf_obj_unref(&c->obj); /* the runtime's reference */
    rc = outcome->result;
    zf_obj_unref(&c->obj);
    return rc;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_yield(zlink_call_t *call, zlink_completion_fn fn,
                                                void *user)
{
    (void)fn;
    (void)user;
    zf_call_t *c = call_get(call);
    if (c == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    zf_obj_unref(&c->obj);
    /* Yield exists only in a SpotWide or Instance Spot turn (DECISIONS D5
     * phase 3); everywhere else it fails before anything is sent. */
    return ZLINK_FW_INVALID_OPERATION;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_cancel(zlink_call_t *call)
{
    zf_call_t *c = call_get(call);
    if (c == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    pthread_mutex_lock(&zf_disp.lk);
    bool now = false;
    if (c->state == ZF_ST_NEW)
        atomic_store(&c->cancelled_early, 1); /* its terminator will not send it */
    if (c->state == ZF_ST_PENDING && c->adm == ZF_ADM_SUBMITTING) {
        /* a thread is inside the Core with it: its answer decides */
        c->later_result = ZLINK_FW_CANCELLED;
        c->later_message = "cancelled";
    } else if (c->state == ZF_ST_PENDING) {
        /* waiting for room, or a request waiting for its reply; an accepted
         * one-way is already complete and never recalled */
        now = true;
    }
    pthread_mutex_unlock(&zf_disp.lk);
    if (now)
        zf_call_finish(c, ZLINK_FW_CANCELLED, 0, "cancelled");
    zf_obj_unref(&c->obj);
    return ZLINK_FW_OK;
}

ZLINK_EXPORT zlink_fw_result_t zlink_call_release(zlink_call_t *call)
{
    zf_call_t *c = call_get(call);
    if (c == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    /* The handle ends here, so nobody can call zlink_call_callback_done
     * after this: releasing ends a held start's hold as done would (its
     * slot is given back now, or when fn returns). */
    bool close_now = false;
    pthread_mutex_lock(&zf_disp.lk);
    if (c->held && !c->hold_done)
        close_now = hold_end_locked(c);
    pthread_mutex_unlock(&zf_disp.lk);
    zf_handle_remove(&c->obj);
    if (close_now)
        zf_obj_unref(&c->obj); /* the runtime's reference */
    zf_obj_unref(&c->obj);
    return ZLINK_FW_OK;
}

void zf_calls_shutdown(zf_host_t *h)
{
    for (;;) {
        pthread_mutex_lock(&zf_disp.lk);
        zf_call_t *c = h->pending;
        if (c != NULL)
            zf_obj_ref(&c->obj);
        pthread_mutex_unlock(&zf_disp.lk);
        if (c == NULL)
            return;
        zf_call_finish(c, ZLINK_FW_SHUTTING_DOWN, 0, "the host shut down");
        zf_obj_unref(&c->obj);
    }
}
