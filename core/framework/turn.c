/*
 * turn.c — handler turns: what a handler sees of its record, its replies,
 * and the end of the turn that opens its gate again.
 *
 * A turn is made by the ingress thread for one decoded data record and
 * owns that record's parts; the decoded views point into them. It is open
 * from the moment a worker calls its handler until zlink_turn_end, which
 * may come from any thread (an async handler ends its turn when its
 * Task / Promise / coroutine finishes). Its flags (replied, ended) are
 * guarded by its host's lock.
 */
#include "fw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Wire terminalResult <-> framework error kind (framework-contract.md §3,
 * §4). A remote kind maps back to the same kind. */
uint32_t zf_terminal_of_kind(int kind)
{
    switch (kind) {
    case ZLINK_ERROR_NOT_FOUND: return ZF_TR_NOT_FOUND;
    case ZLINK_ERROR_ALREADY_EXISTS: return ZF_TR_CONFLICT;
    case ZLINK_ERROR_TYPE_MISMATCH: return ZF_TR_INVALID_ARGUMENT;
    case ZLINK_ERROR_NOT_CONFIGURED: return ZF_TR_NOT_SUPPORTED;
    case ZLINK_ERROR_REJECTED: return ZF_TR_REJECTED;
    case ZLINK_ERROR_UNAVAILABLE: return ZF_TR_NOT_CONNECTED;
    case ZLINK_ERROR_CAPACITY_EXCEEDED: return ZF_TR_BUSY;
    case ZLINK_ERROR_DEADLINE_EXCEEDED: return ZF_TR_TIMED_OUT;
    case ZLINK_ERROR_SHUTTING_DOWN: return ZF_TR_TERMINATED;
    case ZLINK_ERROR_PROTOCOL_ERROR: return ZF_TR_PROTOCOL_ERROR;
    case ZLINK_ERROR_INVALID_OPERATION: return ZF_TR_INVALID_STATE;
    default: return ZF_TR_INTERNAL_ERROR; /* DATA_LOST, INTERNAL_FAILURE */
    }
}

int zf_kind_of_terminal(uint32_t terminal)
{
    switch (terminal) {
    case ZF_TR_TIMED_OUT: return ZLINK_ERROR_DEADLINE_EXCEEDED;
    case ZF_TR_NOT_FOUND: return ZLINK_ERROR_NOT_FOUND;
    case ZF_TR_TERMINATED: return ZLINK_ERROR_SHUTTING_DOWN;
    case ZF_TR_PROTOCOL_ERROR: return ZLINK_ERROR_PROTOCOL_ERROR;
    case ZF_TR_REJECTED: return ZLINK_ERROR_REJECTED;
    case ZF_TR_CONFLICT: return ZLINK_ERROR_ALREADY_EXISTS;
    case ZF_TR_BUSY: return ZLINK_ERROR_CAPACITY_EXCEEDED;
    case ZF_TR_NOT_CONNECTED: return ZLINK_ERROR_UNAVAILABLE;
    case ZF_TR_INVALID_ARGUMENT: return ZLINK_ERROR_TYPE_MISMATCH;
    case ZF_TR_INVALID_STATE: return ZLINK_ERROR_INVALID_OPERATION;
    case ZF_TR_NOT_SUPPORTED: return ZLINK_ERROR_NOT_CONFIGURED;
    case ZF_TR_BACKPRESSURED: return ZLINK_ERROR_UNAVAILABLE;
    default: return ZLINK_ERROR_INTERNAL_FAILURE; /* internalError, unknown */
    }
}

void zf_reply_error_raw(zf_sock_t *s, const zlink_routing_id_t *rid, uint64_t token,
                        const zf_rec_t *req, uint32_t terminal, const char *message)
{
    zf_rec_t r;
    memset(&r, 0, sizeof r);
    r.command = ZF_CMD_REPLY;
    r.correlation = req->correlation;
    r.op_high = req->op_high;
    r.op_low = req->op_low;
    r.terminal = terminal;
    r.message.p = (const uint8_t *)message;
    r.message.n = strlen(message);
    zlink_msg_t parts[3];
    size_t n;
    zlink_submit_result_t rc;
    if (zf_wire_encode(&r, parts, 3, &n) != 0)
        rc = zlink_reply_submit(s->s, rid, token, ENOMEM, NULL, 0, ZLINK_SEND_FLAGS_DONTWAIT,
                                NULL, NULL);
    else
        rc = zlink_reply_submit(s->s, rid, token, 0, parts, n, ZLINK_SEND_FLAGS_DONTWAIT, NULL,
                                NULL);
    if (rc != ZLINK_SUBMIT_BACKPRESSURED)
        return; /* sent, or the requester / socket is gone */
    /* No room for the answer now (a DEALER peer that is full, paused or
     * has not granted credit yet): a reply call waits for it, so the
     * requester is answered, not left to its timeout. The Core kept the
     * token. */
    zlink_fw_result_t cr;
    zf_call_t *c = zf_call_new_reply(s->host, &cr);
    if (c == NULL)
        return; /* out of memory: the requester's timeout ends its call */
    c->reply_sock = s;
    c->reply_rid = *rid;
    c->reply_token = token;
    c->reply_corr = req->correlation;
    c->reply_op_high = req->op_high;
    c->reply_op_low = req->op_low;
    c->reply_kind = zf_kind_of_terminal(terminal);
    size_t mn = strlen(message) + 1;
    c->reply_message = malloc(mn);
    if (c->reply_message != NULL)
        memcpy(c->reply_message, message, mn);
    zlink_call_t *ch = (zlink_call_t *)c->obj.handle;
    (void)zlink_call_start(ch, NULL, NULL);
    zlink_call_release(ch);
}

static void turn_destroy(zf_obj_t *o)
{
    zf_turn_t *t = (zf_turn_t *)o;
    zf_turn_free_parts(t);
    char **c = t->meta_cache;
    while (c != NULL) {
        char **next = (char **)c[1];
        free(c[0]);
        free(c);
        c = next;
    }
    free(t->packet); /* and ctype: one block */
    zf_obj_unref(&t->host->obj);
    free(t);
}

void zf_turn_free_parts(zf_turn_t *t)
{
    zlink_multipart_close(t->parts, t->nparts);
    t->nparts = 0;
}

static char *text_of(zf_bytes_t b)
{
    char *s = malloc(b.n + 1);
    if (s != NULL) {
        if (b.n > 0)
            memcpy(s, b.p, b.n);
        s[b.n] = '\0';
    }
    return s;
}

/* Moves view v from the part it points into (old bases) to the same
 * place in the moved part (new bases). */
static void rebase(zf_bytes_t *v, const uint8_t *const *old, const size_t *size,
                   const uint8_t *const *now, size_t n)
{
    if (v->p == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        if (v->p >= old[i] && v->p + v->n <= old[i] + size[i]) {
            v->p = now[i] + (v->p - old[i]);
            return;
        }
    }
}

int zf_turn_init(zf_turn_t *t, zf_host_t *h, zf_handler_t *x, zf_sock_t *s,
                 const zlink_routing_id_t *src, uint64_t token, zlink_msg_t *parts, size_t n,
                 const zf_rec_t *rec)
{
    atomic_init(&t->obj.refs, 0);
    t->obj.kind = ZF_KIND_TURN;
    t->obj.destroy = turn_destroy;
    t->host = h;
    t->handler = x;
    t->gate = x->gate;
    t->sock = s;
    t->src = *src;
    t->token = token;
    /* The turn takes the parts; the decoded views move with them (an
     * inline payload lives inside its message and changes address). */
    const uint8_t *old[3], *now[3];
    size_t size[3];
    for (size_t i = 0; i < n; i++) {
        old[i] = zlink_msg_data(&parts[i]);
        size[i] = zlink_msg_size(&parts[i]);
        zlink_msg_init(&t->parts[i]);
        zlink_msg_move(&t->parts[i], &parts[i]);
        now[i] = zlink_msg_data(&t->parts[i]);
    }
    t->nparts = n;
    t->rec = *rec;
    zf_bytes_t *views[] = {&t->rec.mesh,    &t->rec.rid,      &t->rec.capability,
                           &t->rec.channel, &t->rec.message,  &t->rec.channels,
                           &t->rec.meta,    &t->rec.packet,   &t->rec.content_type,
                           &t->rec.payload};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        rebase(views[i], old, size, now, n);
    /* packet and content type, NUL-terminated, in one block */
    size_t pn = t->rec.packet.n, cn = t->rec.content_type.n;
    t->packet = malloc(pn + cn + 2);
    if (t->packet == NULL)
        goto fail;
    memcpy(t->packet, t->rec.packet.p, pn);
    t->packet[pn] = '\0';
    t->ctype = t->packet + pn + 1;
    if (cn > 0)
        memcpy(t->ctype, t->rec.content_type.p, cn);
    t->ctype[cn] = '\0';
    zf_obj_ref(&h->obj);
    if (zf_handle_add(&t->obj) == NULL) {
        zf_obj_unref(&h->obj);
        goto fail;
    }
    return 0;
fail:
    /* Give the parts back so the caller can answer and close them. */
    for (size_t i = 0; i < t->nparts; i++)
        zlink_msg_move(&parts[i], &t->parts[i]);
    t->nparts = 0;
    free(t->packet);
    t->packet = t->ctype = NULL;
    return ENOMEM;
}

void zf_turn_discard(zf_turn_t *t)
{
    t->ended = true;
    zf_handle_remove(&t->obj); /* drops the last reference */
}

void zf_turn_run(zf_turn_t *t)
{
    t->handler->fn((zlink_turn_t *)t->obj.handle, t->handler->user);
}

static zf_turn_t *turn_get(zlink_turn_t *h)
{
    return (zf_turn_t *)zf_handle_get(h, ZF_KIND_TURN);
}

ZLINK_EXPORT int zlink_turn_kind(zlink_turn_t *turn)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL)
        return -1;
    int k = t->token != 0 ? ZLINK_MESSAGE_REQUEST : ZLINK_MESSAGE_SEND;
    zf_obj_unref(&t->obj);
    return k;
}

/* The accessors return views that live as long as the turn: the caller's
 * reference is dropped at once, the handle's keeps the turn alive until
 * zlink_turn_end. */
ZLINK_EXPORT const char *zlink_turn_packet(zlink_turn_t *turn)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL)
        return NULL;
    const char *p = t->packet;
    zf_obj_unref(&t->obj);
    return p;
}

ZLINK_EXPORT const char *zlink_turn_content_type(zlink_turn_t *turn)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL)
        return NULL;
    const char *p = t->ctype;
    zf_obj_unref(&t->obj);
    return p;
}

ZLINK_EXPORT const void *zlink_turn_payload(zlink_turn_t *turn, size_t *size)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL) {
        if (size != NULL)
            *size = 0;
        return NULL;
    }
    const void *p = t->rec.payload.n > 0 ? t->rec.payload.p : NULL;
    if (size != NULL)
        *size = t->rec.payload.n;
    zf_obj_unref(&t->obj);
    return p;
}

ZLINK_EXPORT const char *zlink_turn_metadata(zlink_turn_t *turn, const char *key)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL || key == NULL) {
        if (t != NULL)
            zf_obj_unref(&t->obj);
        return NULL;
    }
    const char *found = NULL;
    size_t pos = 0, kn = strlen(key);
    zf_bytes_t k, v;
    /* Values are stored without a NUL on the wire; the turn keeps a
     * NUL-terminated copy of each value it hands out in a small cache. */
    while (zf_wire_meta_next(&t->rec, &pos, &k, &v)) {
        if (k.n == kn && memcmp(k.p, key, kn) == 0) {
            pthread_mutex_lock(&t->host->lk);
            char *copy = text_of(v);
            if (copy != NULL) {
                /* Chained on the turn; freed with it. */
                char **slot = (char **)malloc(sizeof(char *) * 2);
                if (slot == NULL) {
                    free(copy);
                    copy = NULL;
                } else {
                    slot[0] = copy;
                    slot[1] = (char *)t->meta_cache;
                    t->meta_cache = slot;
                }
            }
            pthread_mutex_unlock(&t->host->lk);
            found = copy;
            break;
        }
    }
    zf_obj_unref(&t->obj);
    return found;
}

ZLINK_EXPORT zlink_fw_result_t zlink_turn_source(zlink_turn_t *turn, zlink_routing_id_t *rid)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (rid == NULL) {
        zf_obj_unref(&t->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    memset(rid, 0, sizeof *rid);
    if (t->sock->role == ZF_SOCK_MESH)
        *rid = t->src;
    zf_obj_unref(&t->obj);
    return ZLINK_FW_OK;
}

/* A reply call for t (claims the turn's one answer). */
static zlink_call_t *make_reply(zlink_turn_t *turn, int kind, const char *message,
                                zlink_fw_result_t *result)
{
    zf_turn_t *t = turn_get(turn);
    int rc = 0;
    if (t == NULL)
        rc = ZLINK_FW_INVALID_HANDLE;
    else if (message != NULL && message[0] != '\0' && !zf_name_ok(message, 65535))
        rc = ZLINK_FW_INVALID_ARGUMENT;
    if (rc == 0) {
        pthread_mutex_lock(&t->host->lk);
        if (t->token == 0 || t->replied || t->ended)
            rc = ZLINK_FW_INVALID_OPERATION;
        else
            t->replied = true;
        pthread_mutex_unlock(&t->host->lk);
    }
    zf_call_t *c = NULL;
    if (rc == 0) {
        c = zf_call_new_reply(t->host, result);
        if (c == NULL) {
            pthread_mutex_lock(&t->host->lk);
            t->replied = false;
            pthread_mutex_unlock(&t->host->lk);
            rc = ZLINK_FW_INTERNAL_FAILURE;
        }
    }
    if (c != NULL) {
        c->reply_sock = t->sock;
        c->reply_rid = t->src;
        c->reply_token = t->token;
        c->reply_corr = t->rec.correlation;
        c->reply_op_high = t->rec.op_high;
        c->reply_op_low = t->rec.op_low;
        c->reply_kind = kind;
        if (message != NULL && message[0] != '\0') {
            size_t n = strlen(message) + 1;
            c->reply_message = malloc(n);
            if (c->reply_message != NULL)
                memcpy(c->reply_message, message, n);
        }
    }
    if (t != NULL)
        zf_obj_unref(&t->obj);
    if (result != NULL)
        *result = rc;
    return c != NULL ? (zlink_call_t *)c->obj.handle : NULL;
}

ZLINK_EXPORT uint64_t zlink_turn_sequence(zlink_turn_t *turn)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL)
        return 0;
    uint64_t seq = t->seq; /* set before the turn was published to a worker */
    zf_obj_unref(&t->obj);
    return seq;
}

ZLINK_EXPORT zlink_call_t *zlink_turn_reply(zlink_turn_t *turn, zlink_fw_result_t *result)
{
    return make_reply(turn, -1, NULL, result);
}

ZLINK_EXPORT zlink_call_t *zlink_turn_reply_error(zlink_turn_t *turn, zlink_error_kind_t kind,
                                                  const char *message,
                                                  zlink_fw_result_t *result)
{
    if ((int)kind < 0 || (int)kind > 12) {
        if (result != NULL)
            *result = ZLINK_FW_INVALID_ARGUMENT;
        return NULL;
    }
    return make_reply(turn, (int)kind, message, result);
}

ZLINK_EXPORT zlink_fw_result_t zlink_turn_end(zlink_turn_t *turn, int failed,
                                              const char *message)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    zf_host_t *h = t->host;
    pthread_mutex_lock(&h->lk);
    bool answer = t->token != 0 && !t->replied;
    bool first = !t->ended;
    t->ended = true;
    t->replied = true;
    pthread_mutex_unlock(&h->lk);
    if (!first) {
        zf_obj_unref(&t->obj);
        return ZLINK_FW_INVALID_OPERATION;
    }
    if (answer) {
        /* A request must be answered: a failed handler (an exception in a
         * binding) and one that ended without replying both answer
         * InternalFailure. */
        const char *why = failed ? (message != NULL && message[0] != '\0' ? message
                                                                           : "handler failed")
                                 : "handler ended without a reply";
        zf_reply_error_raw(t->sock, &t->src, t->token, &t->rec, ZF_TR_INTERNAL_ERROR, why);
    }
    zf_gate_turn_ended(h, t);
    zf_handle_remove(&t->obj);
    zf_obj_unref(&t->obj);
    return ZLINK_FW_OK;
}

/* The end of a turn whose answer (if any) was dealt with. */
static void turn_close(zf_turn_t *t)
{
    zf_gate_turn_ended(t->host, t);
    zf_handle_remove(&t->obj);
}

ZLINK_EXPORT zlink_fw_result_t zlink_turn_respond(zlink_turn_t *turn, const char *packet,
                                                  const char *content_type, const void *data,
                                                  size_t size)
{
    zf_turn_t *t = turn_get(turn);
    if (t == NULL)
        return ZLINK_FW_INVALID_HANDLE;
    if (content_type == NULL)
        content_type = "";
    if (!zf_name_ok(packet, ZF_NAME_MAX) ||
        (content_type[0] != '\0' && !zf_name_ok(content_type, ZF_NAME_MAX)) ||
        (data == NULL && size > 0) || size > UINT32_MAX) {
        zf_obj_unref(&t->obj);
        return ZLINK_FW_INVALID_ARGUMENT;
    }
    zf_host_t *h = t->host;
    pthread_mutex_lock(&h->lk);
    int rc = t->token == 0 || t->replied || t->ended ? ZLINK_FW_INVALID_OPERATION : 0;
    if (rc == 0)
        t->replied = t->ended = true;
    pthread_mutex_unlock(&h->lk);
    if (rc != 0) {
        zf_obj_unref(&t->obj);
        return rc;
    }
    zf_rec_t r;
    memset(&r, 0, sizeof r);
    r.command = ZF_CMD_REPLY;
    r.correlation = t->rec.correlation;
    r.op_high = t->rec.op_high;
    r.op_low = t->rec.op_low;
    r.terminal = ZF_TR_OK;
    r.has_envelope = true;
    r.packet.p = (const uint8_t *)packet;
    r.packet.n = strlen(packet);
    r.content_type.p = (const uint8_t *)content_type;
    r.content_type.n = strlen(content_type);
    r.payload.p = data;
    r.payload.n = size;
    zlink_msg_t parts[3];
    size_t n = 0;
    zlink_submit_result_t src = ZLINK_SUBMIT_OUT_OF_MEMORY;
    if (zf_wire_encode(&r, parts, 3, &n) == 0) {
        zlink_completion_id_t tok;
        src = zlink_reply_submit(t->sock->s, &t->src, t->token, 0, parts, n,
                                 ZLINK_SEND_FLAGS_DONTWAIT, NULL, &tok);
    }
    if (src == ZLINK_SUBMIT_OK) {
        rc = ZLINK_FW_OK;
    } else if (src == ZLINK_SUBMIT_BACKPRESSURED) {
        /* No room now (a full or paused DEALER peer): a full reply call
         * waits for it (the socket's WRITABLE edge, the send timeout). The
         * Core kept the token: the reply is made again from the payload. */
        zlink_fw_result_t cr = ZLINK_FW_OK;
        zf_call_t *c = zf_call_new_reply(h, &cr);
        rc = cr;
        if (c != NULL) {
            c->reply_sock = t->sock;
            c->reply_rid = t->src;
            c->reply_token = t->token;
            c->reply_corr = t->rec.correlation;
            c->reply_op_high = t->rec.op_high;
            c->reply_op_low = t->rec.op_low;
            zlink_call_t *ch = (zlink_call_t *)c->obj.handle;
            rc = zlink_call_set_payload(ch, packet, content_type, data, size);
            if (rc == 0)
                rc = zlink_call_start(ch, NULL, NULL);
            zlink_call_release(ch);
        }
    } else if (src == ZLINK_SUBMIT_NOT_FOUND || src == ZLINK_SUBMIT_NOT_CONNECTED) {
        rc = ZLINK_FW_UNAVAILABLE; /* the requester is gone */
    } else if (src == ZLINK_SUBMIT_TERMINATED || src == ZLINK_SUBMIT_INVALID_STATE) {
        rc = ZLINK_FW_SHUTTING_DOWN;
    } else {
        rc = ZLINK_FW_INTERNAL_FAILURE;
    }
    turn_close(t);
    zf_obj_unref(&t->obj);
    return rc;
}
