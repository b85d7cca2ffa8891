/*
 * socket.h — the socket core's interface: what the poller, the facade and
 * the patterns call. The structures themselves are in sock_impl.h (sock/
 * and protocols/ only); the engine sees none of this, only the operations
 * table of engine/transport.h.
 *
 * Design notes
 *  - A socket owns a list of pipes, one per connected peer. A pipe has two
 *    zl_q_t: out (to the peer) and in (from the peer). For tcp and ipc the
 *    far end of both queues is an engine connection (zl_conn_t) running on
 *    an I/O thread; for inproc the far end is the peer socket's pipe, and
 *    the two pipes share their queues crosswise (engine/inproc.c). A
 *    ROUTER-ROUTER pipe has a second pair without HWM, cmp_out / cmp_in,
 *    for the Completion lane (replies and FLOWSTATE; lane 1 of the engine,
 *    or a second inproc pair).
 *  - s->lk protects the pipe list, routing state and pattern state. Each
 *    queue has its own lock, taken after s->lk when both are needed.
 *  - Blocking calls attempt under s->lk, then sleep without it. A waiter
 *    counts itself in s->waiters and reads the wake sequence s->wseq before
 *    its final attempt; it sleeps on wseq (a futex: the kernel sleeps only
 *    while wseq still holds the value read) until wseq changes. Anything
 *    that may satisfy a waiter (a queue notify, an attach, shutdown) calls
 *    zl_socket_wake: wseq++, then a futex wake when somebody waits. Queue
 *    notifies fire only after the waiter set reader_idle/writer_blocked
 *    under the queue lock, so no wake-up is lost; the wake takes no lock,
 *    so a notify may run while its caller holds any socket or queue lock.
 *  - The public handle is a handle-table value (handle.h), never the
 *    socket's address. The close gate is the handle's slot word: a call
 *    resolves and enters in one CAS with zl_socket_enter (fails once the
 *    close is accepted) and leaves with zl_socket_leave. zlink_close takes
 *    the gate only while no other call is inside (else EBUSY), sets
 *    s->closed for the pinned observers (pollers), tears down, and releases
 *    the slot: from then on the handle is stale and every call answers as
 *    for a closed socket, before and after zlink_ctx_term alike, without
 *    touching the socket's memory.
 *  - Socket memory is not freed at close: the object stays (tag ZL_SOCK_DEAD)
 *    until zlink_ctx_term, or until the last pin after it.
 *  - Threads: API calls on application threads; attach, detach and control
 *    calls on I/O threads; nothing here blocks an I/O thread except s->lk.
 */
#ifndef ZL_SOCKET_H
#define ZL_SOCKET_H

#include "engine/transport.h"
#include "msg/queue.h"
#include "util/hmap.h"
#include "util/rid.h"
#include "wire/zmp.h"
#include "util/handle.h"
#include "zlink.h"

typedef struct zl_ctx zl_ctx_t;
typedef struct zl_socket zl_socket_t;
typedef struct zl_pipe zl_pipe_t;
typedef struct zl_conn zl_conn_t;          /* engine connection (engine.h) */
typedef struct zl_endpoint zl_endpoint_t;  /* engine listener/connecter */
typedef struct zl_sockopt zl_sockopt_t;    /* one option's row (sockopt.h) */

#define ZL_SOCK_TAG 0x5A534F43u  /* "ZSOC" */
#define ZL_SOCK_DEAD 0x5A444544u /* "ZDED" */

/* ---- readiness for pollers (socket.c) ----
 *
 * A poller registers a waker on every socket it watches; zl_socket_wake
 * calls each registered waker after bumping wseq, so a poller blocked on
 * many sockets is woken by any of them. A waker's wake function runs on
 * any thread with the socket's waker lock held (a leaf): it must only
 * signal (bump a futex word, write an eventfd), never take other locks.
 */
typedef struct zl_waker {
    struct zl_waker *next;
    void (*wake)(struct zl_waker *w);
} zl_waker_t;

/* Readiness bits (the values of ZLINK_POLLIN / ZLINK_POLLOUT). */
#define ZL_POLLIN 1
#define ZL_POLLOUT 2

/* Defined in sock/sock_impl.h, which only sock/ and protocols/ see. */
typedef struct zl_cq_rec zl_cq_rec_t;
typedef struct zl_req zl_req_t;
typedef struct zl_rtoken zl_rtoken_t;
typedef struct zl_token zl_token_t;
typedef struct zl_cq zl_cq_t;
typedef struct zl_sockopts zl_sockopts_t;
typedef struct zl_proto_ops zl_proto_ops_t;

/* ---- lifecycle (socket.c) ---- */

/* Resolves a socket handle and enters its close gate (one CAS on the
 * handle's slot; the handle value is never dereferenced). 0: *out is the
 * socket, and the caller must zl_socket_leave it exactly once. Otherwise
 * ESHUTDOWN (closed, or its close is running; before or after
 * zlink_ctx_term) or EFAULT (not a socket handle: NULL, another kind,
 * garbage). Any thread; no lock; never blocks. */
static inline int zl_socket_enter(const void *handle, zl_socket_t **out)
{
    void *obj;
    zl_hslot_t *slot;
    int rc = zl_handle_enter(handle, ZL_HANDLE_SOCKET, &obj, &slot);
    if (ZL_LIKELY(rc == 0)) {
        *out = obj;
        return 0;
    }
    return rc == EFAULT ? EFAULT : ESHUTDOWN;
}

/* Ends a call zl_socket_enter admitted. Any thread; one atomic op. */
void zl_socket_leave(zl_socket_t *s);

/* What the facade and the poller read of a socket (its struct is
 * private to sock/ and protocols/, sock_impl.h). Any thread unless noted.
 *  - type: ZLINK_PAIR ...; terminated: the context was shut down; ctx.
 *  - publish: gives s its handle (*handle; 0 or ENOMEM); unpublish releases
 *    the handle of a socket that was never returned (zlink_socket's failure
 *    path). mark_closed: pollers of a pinned socket see it closed.
 *  - set_rid: the routing id announced from now on (takes s->lk).
 *  - recv_token: the reply token of the last router receive (the caller is
 *    the socket's receiving thread); recv_route: the route generation of
 *    that receive (takes s->lk). */
int zl_socket_type(const zl_socket_t *s);
bool zl_socket_terminated(const zl_socket_t *s);
zl_ctx_t *zl_socket_ctx(const zl_socket_t *s);
int zl_socket_publish(zl_socket_t *s, void **handle);
void zl_socket_unpublish(zl_socket_t *s);
void zl_socket_mark_closed(zl_socket_t *s);
void zl_socket_set_rid(zl_socket_t *s, const void *id, size_t size);
uint64_t zl_socket_recv_token(const zl_socket_t *s);
uint64_t zl_socket_recv_route(zl_socket_t *s);

/* completion.c: zlink_completion_recv inside the socket's gate: pops one record into
 * *out (empty and valid, checked by the caller), waiting per flags and
 * RCVTIMEO. 0, ENOTSUP (a type without a completion queue), EAGAIN,
 * ETERM, ESHUTDOWN. Takes s->lk; sleeps without it. */
int zl_cq_recv(zl_socket_t *s, zlink_completion_t *out, int flags);

/* Wakes blocked callers of s if any (any thread, no locks held). */
void zl_socket_wake(zl_socket_t *s);
/* Queue-end notify adapter: arg is the socket. */
void zl_socket_notify(void *arg);
/* The reader-end notify of a pipe's input queue (arg is the pipe): a record
 * came into the empty queue. Posts the pipe on its socket's ready inbox
 * (once until the fair queue takes it, with a reference) and wakes the
 * socket. Any thread, no locks held, no socket lock taken. */
void zl_pipe_in_notify(void *arg);

/* ---- pipes (socket.c) ----
 *
 * The engine reaches these through the operations table of
 * engine/transport.h (sock_tran_ops in socket.c); inproc calls them
 * directly. */

/* Offers the pipe to the pattern. Returns 0 when attached; otherwise an
 * errno and the pipe is already ended (the connection must close). */
int zl_socket_pipe_attach(zl_socket_t *s, zl_pipe_t *p);
/* The connection ended: no more records will arrive on p->in and p->out
 * is abandoned. The socket keeps the pipe until its in-queue is drained. */
void zl_socket_pipe_ended(zl_socket_t *s, zl_pipe_t *p);
/* Drops one pipe reference; frees at zero. */
void zl_pipe_unref(zl_pipe_t *p);

/* Snapshot of the options (inproc; the engine gets zl_tran_opts_t). */
void zl_socket_get_opts(zl_socket_t *s, zl_sockopts_t *out);
/* MAXMSGSIZE as the socket has it now (<= 0 unlimited), for decoders that
 * take the limit per message rather than per connection (STREAM PACKET:
 * at each packet's length prefix). Any thread, no lock (one atomic load). */
int64_t zl_socket_maxmsgsize_now(zl_socket_t *s);
/* ROUTER: takes (clears) the CONNECT_ROUTING_ID alias for a connect. */
void zl_socket_take_connect_rid(zl_socket_t *s, zlink_routing_id_t *out);

void zl_socket_add_waker(zl_socket_t *s, zl_waker_t *w);
void zl_socket_remove_waker(zl_socket_t *s, zl_waker_t *w);

/* Level readiness of s for the ZL_POLLIN / ZL_POLLOUT bits in
 * events (other bits are ignored here): IN when a whole record can be
 * received, OUT when a send to some peer would find room (aggregate, not a
 * guarantee). Registers interest on every queue it finds not ready, so the
 * next change calls zl_socket_wake. Any thread; takes s->lk. A closed or
 * terminated socket reports nothing here (see zl_socket_state). */
int zl_socket_readiness(zl_socket_t *s, int events);

/* POLLCOMPLETION: whether the completion queue holds a record (publishes
 * recovered wait tokens first). Any thread; takes s->lk. */
bool zl_socket_completion_ready(zl_socket_t *s);
/* The one poller registration that owns POLLCOMPLETION: claim gives 0 or
 * EBUSY (another owner); release by the owner. Any thread. */
int zl_socket_completion_claim(zl_socket_t *s, void *owner);
void zl_socket_completion_release(zl_socket_t *s, void *owner);
/* POLLROUTE (ROUTER): whether the selected routes changed since the last
 * successful zlink_router_routes_snapshot. Any thread; takes s->lk. */
bool zl_socket_route_changed(zl_socket_t *s);

/* Lifecycle as a poller sees it (no lock): 0 open, ESHUTDOWN closed,
 * ETERM context shut down. */
int zl_socket_state(const zl_socket_t *s);

/* Pins keep a socket's memory after close and after zlink_ctx_term until
 * the last pin goes (a poller's registration, an open monitor). Any
 * thread. zl_socket_orphan (zlink_ctx_term) frees the socket now if
 * nothing pins it, else leaves the free to the last unpin. */
#define ZL_PINS_ORPHAN (1ull << 62)
void zl_socket_pin(zl_socket_t *s);
void zl_socket_unpin(zl_socket_t *s);
void zl_socket_orphan(zl_socket_t *s);

/* ---- socket monitor (monitor.c) ----
 *
 * Reports one event to s's monitor, if one is open and subscribed to the
 * event's bit; otherwise does nothing (cheap). p (may be NULL) supplies the
 * routing id and connection id; local/remote (may be NULL) the addresses.
 * Any thread, no locks held by the caller except possibly s->lk when
 * have_lock is true. Never blocks: a full monitor queue drops the event.
 */
void zl_socket_event(zl_socket_t *s, bool have_lock, uint32_t event, uint64_t value,
                     const zl_pipe_t *p, const char *local, const char *remote, uint32_t lane,
                     uint32_t flags);

/* ---- used by patterns and the facade (socket.c) ---- */

/* Creates a socket with the pattern ops (protocols/protocols.h) in ctx
 * (ctx->lk not held). NULL with errno. */
zl_socket_t *zl_socket_new(zl_ctx_t *ctx, const zl_proto_ops_t *ops);
/* The close gate has been taken by the caller: tears the socket down
 * (endpoints, pipes), leaving the memory for the context to free. */
void zl_socket_teardown(zl_socket_t *s);
/* Frees a torn-down socket (zlink_ctx_term). */
void zl_socket_free(zl_socket_t *s);
/* Marks the socket terminated (ctx shutdown) and wakes its waiters. */
void zl_socket_terminate(zl_socket_t *s);

int zl_socket_bind(zl_socket_t *s, const char *ep);
int zl_socket_connect(zl_socket_t *s, const char *ep);
int zl_socket_unbind(zl_socket_t *s, const char *ep);
int zl_socket_disconnect(zl_socket_t *s, const char *ep);
/* ROUTER/STREAM: starts closing the live pipe named rid. 0 or ENOENT. */
int zl_socket_disconnect_rid(zl_socket_t *s, const zlink_routing_id_t *rid);
/* zlink_setsockopt / zlink_getsockopt behind the facade (sockopt.c): the
 * option's row decides. Application thread; takes s->lk. 0 or an errno;
 * nothing is stored (set) or written (get) on failure. */
int zl_socket_setopt(zl_socket_t *s, int opt, const void *v, size_t n);
int zl_socket_getopt(zl_socket_t *s, int opt, void *v, size_t *n);

/* Sends one record made of the caller's parts (consumed on success and
 * failure). Waits per flags and SNDTIMEO. Returns 0 or an errno; a
 * DONTWAIT refusal for lack of room (EAGAIN) registers a wait token whose
 * id goes to *token (0 when none could be registered). */
int zl_socket_submit(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                     size_t n, int flags, void *user_context, uint64_t *token);

/* zlink_request: like zl_socket_submit, and once admitted req (owned by
 * the socket from then on) waits for its outcome; req->deadline_ns holds
 * the caller's timeout in ms (0: the socket's REQUEST_TIMEOUT) on entry. */
int zl_socket_submit_request(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                             size_t n, int flags, zl_req_t *req, uint64_t *req_id,
                             uint64_t *token);
/* zlink_reply / zlink_reply_error / zlink_reply_submit: sends a REPLY
 * (error: an ERROR_REPLY, whose parts[0] is the errno part) with seq to rid
 * and retires reply_token when admitted. flags NONE waits per SNDTIMEO;
 * DONTWAIT refused for room gives EAGAIN and a wait token in *token (a
 * WRITABLE record with user_context follows), like a DONTWAIT send. */
int zl_socket_submit_reply(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts,
                           size_t n, uint64_t seq, uint64_t reply_token, bool error, int flags,
                           void *user_context, uint64_t *token);

/* The blocking discipline of every socket call: runs attempt(s, arg)
 * under s->lk until it returns something other than EAGAIN, DONTWAIT is
 * set, or the timeout read from *timeo_opt (under s->lk, at the first
 * attempt) expires. ETERM / ESHUTDOWN once the socket is shut down or
 * closing. No locks held by the caller. */
int zl_socket_wait_for(zl_socket_t *s, int flags, const int *timeo_opt,
                       int (*attempt)(zl_socket_t *s, void *arg), void *arg);
/* Like zl_socket_submit but the first frame is prepended from (topic,len). */
int zl_socket_submit_topic(zl_socket_t *s, const char *topic, zlink_msg_t *parts, size_t n,
                           int flags);
/* Receives one whole record into parts[0..cap) per flags and RCVTIMEO.
 * skip_first moves frame 0 into *first instead of parts (SUB topic).
 * On ENOBUFS *count is the needed count and nothing was consumed.
 * *pipe_rid (optional) receives the source pipe's routing id view.
 * Returns 0 or an errno. */
int zl_socket_receive(zl_socket_t *s, zlink_msg_t *first, zlink_msg_t *parts, size_t cap,
                      size_t *count, int flags, const zlink_routing_id_t **pipe_rid);

/* Puts a record the last receive returned back, to be returned first by
 * the next receive (after BUFFER_TOO_SMALL on a SUB topic). Takes s->lk.
 * It goes back into the receive scratch it came out of, which still has
 * room for it, so this needs no memory: returns 0 and owns the parts. ENOMEM
 * only for a record that did not come from the last receive (the caller
 * keeps the parts). */
int zl_socket_stash(zl_socket_t *s, zlink_msg_t *first, zlink_msg_t *parts, size_t n);
/* Under s->lk: the ROUTER alias given with CONNECT_ROUTING_ID for the
 * connect that made ep (size 0 if none). */
bool zl_socket_alias_for(zl_socket_t *s, const zl_endpoint_t *ep, zlink_routing_id_t *out);

/* Under s->lk: pushes a record to one pipe's out queue; returns 0, EAGAIN
 * (full, writer_blocked set), EPIPE (pipe gone) or ENOMEM (no memory for
 * the queue to grow). The frames are moved out on 0 only. */
int zl_pipe_push(zl_pipe_t *p, zl_frame_t *frames, size_t n, bool control);
/* Under s->lk: applies inproc control frames the peers queued (cheap when
 * none: one atomic load). */
void zl_socket_apply_controls(zl_socket_t *s);
/* ---- request / reply (request.c) ---- */

/* Under s->lk: moves every REPLY / ERROR_REPLY at the head of p's input
 * into the completion queue (a reply behind unread DATA waits). Returns 0
 * when a non-reply record is at the head (in p->rxq), EAGAIN when the
 * input is empty, EPIPE when it is empty and its writer is gone. */
int zl_req_drain_replies(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: completes the requests of every reply queued on p's
 * Completion lane (ROUTER-ROUTER; nothing otherwise). Only completion
 * observation (zl_cq_process) and a pipe's end call it, so receives never
 * touch that lane; a late reply waits there until the next observation
 * with requests pending, or the pipe's end. */
void zl_req_drain_cmp(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: whether a ROUTER has all ZL_CQ_SLOTS reply tokens in use
 * (a REQUEST cannot be received until one is answered or forgotten). */
bool zl_req_tokens_full(const zl_socket_t *s);
/* Under s->lk: completes expired requests as TIMED_OUT and refreshes
 * s->req_deadline. */
void zl_req_expire(zl_socket_t *s);
/* Under s->lk: every request that left on p ends NOT_CONNECTED. */
void zl_req_pipe_ended(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk, before a ROUTER takes a record off its pipes: makes sure
 * the reply token a REQUEST needs is already allocated. 0 or ENOMEM
 * (nothing was received). */
int zl_req_token_reserve(zl_socket_t *s);
/* Under s->lk: a ROUTER received a REQUEST (first frame f) from p:
 * returns its reply token (nonzero; the one zl_req_token_reserve made),
 * or 0 when every token is in use (the receive holds such a source back
 * first, so this does not happen). */
uint64_t zl_req_token_new(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f);
/* Under s->lk: whether p's peer already has an unanswered request with
 * this sequence (reusing a live sequence is a protocol violation). */
bool zl_req_seq_live(zl_socket_t *s, const zl_pipe_t *p, uint64_t seq);
/* Under s->lk: closes the connection behind an engine pipe now (ROUTER
 * handover); p stops being a route at once and ends when the engine is
 * done. Nothing for inproc pipes. */
void zl_pipe_close(zl_pipe_t *p);
/* Under s->lk: p's peer broke the protocol: its connection closes (inproc
 * pipes cannot misbehave this way). */
void zl_pipe_violation(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: retires every reply token of source rid (its removal). */
void zl_req_forget_source(zl_socket_t *s, const zlink_routing_id_t *rid);
/* Under s->lk: makes room for one more admitted request (the completion
 * record it will need is reserved now, so its outcome cannot fail later).
 * 0 or ENOBUFS / ENOMEM. */
int zl_req_reserve(zl_socket_t *s);
/* Under s->lk: r was pushed to s->last_pipe and now waits for its outcome
 * (zl_req_reserve made room for it). */
void zl_req_admitted(zl_socket_t *s, zl_req_t *r);
/* Under s->lk: the reply for token was admitted; retires the token. */
void zl_req_token_used(zl_socket_t *s, uint64_t token);
/* zlink_request inside the socket's gate, arguments checked: sends the
 * request (parts consumed, as the send rules say, except on EINVAL,
 * ENOTSUP and ENOMEM, where the caller still owns them) and on 0 sets
 * *id_out to its completion id; on a DONTWAIT refusal to the wait token's
 * id (0 when none). Returns 0 or an errno (ENOENT: NONE to an unknown
 * ROUTER target). Takes s->lk; may wait per flags and SNDTIMEO. */
int zl_req_submit(zl_socket_t *s, const zlink_routing_id_t *rid, zlink_msg_t *parts, size_t n,
                  int flags, uint32_t timeout_ms, void *user_context, uint64_t *id_out);
/* zlink_reply / zlink_reply_error inside the router's gate, arguments
 * checked (token nonzero, src_rid set): checks the token out (EBUSY while
 * another reply uses it), sends the REPLY or (error > 0) the ERROR_REPLY,
 * and retires the token once admitted. Parts are consumed in every case.
 * 0, ENOTSUP (not a ROUTER), ENOENT (unknown token or source gone), EBUSY,
 * ENOMEM, or a send's errno. Takes s->lk; may wait per SNDTIMEO. */
int zl_req_reply(zl_socket_t *s, const zlink_routing_id_t *src_rid, uint64_t token, int error,
                 zlink_msg_t *parts, size_t n, int flags, void *user_context,
                 uint64_t *wait_token);
/* Under s->lk: frees requests and tokens (close). */
void zl_req_clear(zl_socket_t *s);

/* ---- receive-flow state (flow.c), DEALER and ROUTER ---- */

/* Stores the socket's receive-flow state and, when it changed, tells every
 * attached peer (FLOWSTATE with the next per-connection epoch). Any
 * thread; takes s->lk. 0 or an errno. */
int zl_flow_set(zl_socket_t *s, int state);
/* Under s->lk: a new pipe learns the current state (if ever set). 0, or
 * ENOMEM when the FLOWSTATE could not be queued (the attach is refused). */
int zl_flow_attach(zl_socket_t *s, zl_pipe_t *p);
/* Under s->lk: applies a FLOWSTATE control from p's peer (ignores a
 * malformed one; a duplicate or older epoch counts as stale). Returns true
 * when f was a FLOWSTATE frame. */
bool zl_flow_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f);
/* Under s->lk: a control frame f reached a pipe that already ended; a
 * FLOWSTATE among them counts as stale (no event). */
void zl_flow_foreign(zl_socket_t *s, const zl_frame_t *f);

/* Records a wake edge of p (its stamp becomes a new credit_seq) and wakes
 * its socket: wait tokens aimed at p become WRITABLE. Any thread, no lock
 * (the out queue's writer-end notify). */
void zl_pipe_credit_notify(void *arg);
void zl_pipe_stamp(zl_pipe_t *p);

/* Under s->lk: PROBE — queues one empty record to a new pipe. 0, or ENOMEM
 * (nothing queued; the attach that asked for it is refused). */
int zl_pipe_send_probe(zl_pipe_t *p);
/* Under s->lk: queues a control frame (flags, body copied) to one pipe's
 * peer. Returns 0, EPIPE (the pipe is gone: dropped) or ENOMEM (nothing
 * queued; the peer's view is unchanged). Attach-time callers refuse the
 * pipe on ENOMEM; callers that tell several peers use the reservation
 * below so that they can fail before any peer was told. */
int zl_pipe_send_control(zl_pipe_t *p, uint8_t flags, const void *body, size_t len);
/* Under s->lk, which must stay held until the send: makes sure the next
 * zl_pipe_send_control_msg of a control of this kind to p cannot fail for
 * lack of memory. 0, EPIPE (ended) or ENOMEM. */
int zl_pipe_control_reserve(zl_pipe_t *p, uint8_t flags, const void *body, size_t len);
/* Under s->lk: like zl_pipe_send_control with a prepared body, which is
 * shared (the caller keeps its own reference). */
int zl_pipe_send_control_msg(zl_pipe_t *p, uint8_t flags, const zlink_msg_t *body);
/* Under s->lk: sends one control to every attached pipe, all or nothing:
 * 0, or ENOMEM when the body or room on any pipe's queue could not be had
 * (then no pipe got it). */
int zl_socket_broadcast_control(zl_socket_t *s, uint8_t flags, const void *body, size_t len);


/* Under s->lk: the attached, not ended pipe named rid, or NULL. A hash
 * lookup (s->pipes_by_rid), so its cost does not grow with the number of
 * peers. */
zl_pipe_t *zl_socket_route(zl_socket_t *s, const zlink_routing_id_t *rid);

/* Under s->lk: p may hold records that came without its input's notify
 * (a record the reader injected itself, a pipe just linked): the fair
 * queue looks at it again. No effect on a pipe that is not linked. */
void zl_pipe_rx_ready(zl_socket_t *s, zl_pipe_t *p);

/* Removes an ended and drained pipe from the socket (under s->lk). */
void zl_socket_reap_pipe(zl_socket_t *s, zl_pipe_t *p);


#endif /* ZL_SOCKET_H */
