/*
 * completion.h — the socket-local completion queue (CQ) and wait tokens.
 *
 * Design notes
 *  - One CQ per socket, FIFO in append order, holding REQUEST and WRITABLE
 *    records. A DONTWAIT submit refused for lack of room registers a wait
 *    token: an id, the caller's user_context and the target (PAIR: the
 *    peer slot; DEALER: the candidate set; ROUTER/STREAM: the routing id).
 *    No payload is kept. When the target can take a record again, the
 *    token becomes exactly one WRITABLE record (ADMITTED). An explicit
 *    removal of the target (zlink_disconnect_rid, zlink_disconnect) ends it
 *    as WRITABLE TERMINAL/ENOENT. Close and term discard tokens and records.
 *  - Edges are stamped, never lost and never withdrawn: each wake edge of a
 *    pipe (credit back at the LWM after a refusal, attach or reconnect,
 *    weight 0 -> positive, RESUME) gives the pipe a new stamp from the
 *    socket's credit_seq and raises s->cq_edge. A token remembers
 *    credit_seq as it was just before its refused attempt; it is due once
 *    any pipe of its target carries a later stamp. The token is registered
 *    in the same hold of s->lk as the refused attempt (send.c), so no
 *    observer on another thread can look between the two and sleep on an
 *    edge it consumed before the token existed. Registration checks the
 *    stamps once (register-then-recheck), so an edge that came during the
 *    attempt is published at once, and a later refill of the queue cannot
 *    take a due WRITABLE back. Every observation point (completion
 *    receive, readiness, a poller) publishes what is due.
 *  - Slots: queued records plus live tokens never exceed ZL_CQ_SLOTS.
 *    A slot's memory is taken once, when it is taken (zl_cq_slot_t): a
 *    wait token or an admitted request turns into its record in place, so
 *    publishing a WRITABLE or ending a request never allocates and cannot
 *    fail; running out of memory shows only at registration or admission,
 *    where the caller is told (ENOMEM / OUT_OF_MEMORY).
 *  - Locks: everything here runs under s->lk.
 */
#ifndef ZL_COMPLETION_H
#define ZL_COMPLETION_H

#include "sock/sock_impl.h"

#define ZL_CQ_SLOTS 65536u

/* The memory of one slot: allocate wait tokens and requests with
 * sizeof(zl_cq_slot_t), so each can become its zl_cq_rec_t in place. */
typedef union zl_cq_slot {
    zl_token_t token;
    zl_req_t req;
    zl_cq_rec_t rec;
} zl_cq_slot_t;

/* Under s->lk: a DONTWAIT submit to rid (NULL unless ROUTER/STREAM) was
 * refused for lack of room (for_request: a request, whose targets are
 * ROUTER peers only). Registers a token, rechecks the target, and writes
 * the token's id. Returns 0, ENOMEM (no slot) or EOVERFLOW. */
int zl_cq_register(zl_socket_t *s, const zlink_routing_id_t *rid, void *user_context,
                   bool for_request, uint64_t since, uint64_t *id_out);
/* Under s->lk: publishes a WRITABLE record for every token whose target
 * can take a record now (cheap when no edge happened). */
void zl_cq_process(zl_socket_t *s);
/* Under s->lk: p is ending: tokens it had already made due are published
 * before it leaves (a due WRITABLE is never withdrawn). */
void zl_cq_pipe_ending(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: ends every token aimed at rid (NULL: every token) as
 * WRITABLE TERMINAL with errno e. */
void zl_cq_terminate(zl_socket_t *s, const zlink_routing_id_t *rid, int e);
/* Under s->lk: appends a record (its slot was reserved by its producer). */
void zl_cq_append(zl_socket_t *s, zl_cq_rec_t *r);
/* Under s->lk: slots in use (records, wait tokens, admitted requests). */
static inline size_t zl_cq_slots_used(const zl_socket_t *s)
{
    return s->cq.nrecs + s->cq.ntokens + s->cq.nreqs;
}
/* Under s->lk: frees every record and token (close, term). */
void zl_cq_clear(zl_socket_t *s);


#endif /* ZL_COMPLETION_H */
