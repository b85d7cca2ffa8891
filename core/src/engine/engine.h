/*
 * engine.h — the I/O side of ZLink: I/O threads (one libuv loop each),
 * listeners, connecters with reconnect, and connections that speak ZMP v1
 * (or raw bytes for STREAM) over tcp and ipc.
 *
 * The engine knows nothing of socket patterns. It talks to the socket layer
 * only through the operations table of transport.h (pipe_new, _attach,
 * _ended, _control, get_opts, monitor posts) and moves records through a
 * pipe's two zl_q_t:
 *   - out queue: the engine is its reader. Its notify (kick) is called from
 *     any thread when records arrive after the engine found it empty; the
 *     engine then takes everything (zl_q_take_all), encodes it with as few
 *     writes as possible, and returns the credit (zl_q_release) when the
 *     kernel took the bytes.
 *   - in queue: the engine is its writer. It decodes each read into whole
 *     records and delivers them in one batch (zl_q_deliver). When that
 *     reports the queue at its HWM, the engine stops reading the
 *     connection until the queue's notify (credit returned) fires, so the
 *     pressure reaches the sender through TCP.
 *
 * STREAM connections carry raw bytes (engine/stream.c). In RAW mode each
 * read is one single-frame record. In PACKET mode each complete packet is
 * one record of two frames (header with ZMP_F_MORE, then body), and the
 * header frame's seq is an admission stamp: a process-wide counter taken
 * when the packet completed, increasing in completion order, by which the
 * socket orders packets across connections. Nothing partial is delivered.
 *
 * Threads: everything named zl_io_* / zl_conn_* runs on the connection's
 * I/O thread except the functions marked "any thread".
 *
 * The notify functions the engine registers on a pipe's queues (out
 * reader, in writer) may be called from any thread, even after the
 * connection ended: such late calls are harmless, because connection
 * memory stays valid (and is only reused by later connections of the same
 * I/O thread) until zl_io_destroy; see engine/engine_int.h.
 * The wire protocol is doc/protocol.md; the codec is wire/zmp.h.
 */
#ifndef ZL_ENGINE_H
#define ZL_ENGINE_H

#include "engine/transport.h"
#include "util/platform.h"



typedef struct zl_io zl_io_t;

/* A unit of work posted to an I/O thread. The poster owns t until fn runs;
 * fn runs once on the loop thread and may free t. */
typedef struct zl_task {
    struct zl_task *next;
    void (*fn)(struct zl_task *t);
} zl_task_t;

/* Starts an I/O thread with its own loop. name is the thread name
 * (e.g. "zlink/IO/0"). Returns NULL with errno on failure. */
zl_io_t *zl_io_new(const char *name);
/* Stops the loop after every handle on it closed, joins, frees. Blocks.
 * Called by zlink_ctx_term after all sockets are gone. */
void zl_io_destroy(zl_io_t *io);
/* Sets the low-latency window (ns; 0 never spins) the loop uses from its
 * next wait on (io.c, "Spinning"). Any thread. */
void zl_io_set_spin(zl_io_t *io, int64_t ns);
/* Queues t to run on io's loop thread. Any thread; never blocks long. */
void zl_io_post(zl_io_t *io, zl_task_t *t);
/* Runs fn(arg) on io's loop thread and waits for it to return. Any thread
 * except io's own (where it calls fn directly). */
void zl_io_call(zl_io_t *io, void (*fn)(void *arg), void *arg);

/* ---- endpoints (called by the socket layer on an application thread,
 *      without s->lk; they block until the I/O thread answered) ---- */

/* Parses and binds "tcp://..." or "ipc://...". On success *out is the
 * listener and zl_endpoint_name() holds the resolved address: the address
 * actually bound, with the actual port for port 0 or '*' (for example
 * "tcp://127.0.0.1:40123", "tcp://0.0.0.0:40123" for host '*',
 * "tcp://[::1]:40123"); "ipc://PATH" as given. A host name is resolved
 * here (blocking getaddrinfo). A stale ipc socket file is removed first.
 * Returns 0 or an errno: EINVAL (malformed, ipc path over 107 bytes),
 * EPROTONOSUPPORT (unknown transport), EADDRINUSE (also a live ipc
 * listener or a non-socket file at the path), EADDRNOTAVAIL, EACCES,
 * ENODEV (host name not found, or no BINDTODEVICE interface of that name),
 * EPERM (BINDTODEVICE not allowed), ENOMEM. On failure nothing remains. */
int zl_engine_bind(zl_tran_sock_t *s, zl_io_t *io, const char *endpoint, zl_endpoint_t **out);
/* Starts connecting; never waits for the peer. Reconnects per the socket's
 * RECONNECT_IVL / RECONNECT_IVL_MAX after a failure or a lost connection
 * (RECONNECT_IVL -1: one attempt only). Each established connection gets a
 * new pipe. Host names are resolved asynchronously before each attempt.
 * Returns 0 or an errno (EINVAL: malformed, host '*' or port 0;
 * EPROTONOSUPPORT; ENODEV / EPERM: a BINDTODEVICE interface that does not
 * exist or may not be used; ENOMEM). */
int zl_engine_connect(zl_tran_sock_t *s, zl_io_t *io, const char *endpoint, zl_endpoint_t **out);
/* The endpoint string as given (connect) or as resolved (bind). */
const char *zl_endpoint_name(const zl_endpoint_t *ep);
/* The endpoint string as the user passed it. */
const char *zl_endpoint_requested(const zl_endpoint_t *ep);
bool zl_endpoint_is_bind(const zl_endpoint_t *ep);
/* Stops listening or reconnecting and closes every connection made
 * through ep (each ends its pipe through the pipe_ended operation). The engine
 * frees ep once all of that is done. Any thread; non-blocking; a second
 * call is ignored. linger_ms applies to the connections' unsent output
 * (-1 infinite, 0 discard): each connection writes what its out queue
 * holds, then closes (also at once when the out queue's writer is closed
 * and everything was written). The caller must not use ep afterwards; a
 * pipe's p->ep stays valid until that pipe has ended. */
void zl_endpoint_close(zl_endpoint_t *ep, int linger_ms);

/* ---- inproc (inproc.c) ----
 *
 * inproc links two sockets of one context in memory: each side's pipe
 * writes the queue the other side reads, with an HWM of min(SNDHWM of the
 * writer, RCVHWM of the reader); ROUTER-ROUTER pairs get a second pair of
 * queues without HWM for the Completion lane. The names bound in a context
 * live in its zl_inproc_ns_t. The link object joins the two pipes and
 * keeps both alive until both sockets have released their side.
 *
 * Threads: any application thread (bind, connect, unbind, disconnect and
 * close run on the caller's thread). Locks: ns->lk only around the name
 * list, never while calling the socket side; socket locks are taken by
 * the socket operations of transport.h. */

typedef struct zl_inproc_name zl_inproc_name_t;
typedef struct zl_inproc_ns {
    zl_mutex_t lk;                  /* guards names */
    zl_inproc_name_t *names;
} zl_inproc_ns_t;

void zl_inproc_ns_init(zl_inproc_ns_t *ns);
/* Forgets every name (context termination). */
void zl_inproc_ns_fini(zl_inproc_ns_t *ns);
/* Binds name to ts: 0, EADDRINUSE, ENOMEM. */
int zl_inproc_bind(zl_inproc_ns_t *ns, const char *name, zl_tran_sock_t *ts);
/* Removes ts's binding of name (NULL: every name ts bound). */
void zl_inproc_unbind(zl_inproc_ns_t *ns, const char *name, zl_tran_sock_t *ts);
/* The socket bound to name, or NULL. */
zl_tran_sock_t *zl_inproc_find(zl_inproc_ns_t *ns, const char *name);
/* Links ts (connecting) to binder: creates both pipes and their queues and
 * attaches the binder's side, then ts's. Returns 0, EPROTOTYPE
 * (incompatible types), ENOMEM, or the errno of a refused attach (nothing
 * is left on either side, except that a binder which attached and then
 * lost its partner sees its pipe end). No locks held by the caller. */
int zl_inproc_connect(zl_tran_sock_t *ts, zl_tran_sock_t *binder);

/* Calls on one side of a link, made by the socket that owns that side. */

/* This side is gone: closes the writer of its out queues (the peer reads
 * what is left, then EOF) and ends the peer's pipe (pipe_ended on the
 * peer socket). Once; later calls do nothing. Takes the peer socket's
 * lock, so the caller holds none. */
void zl_inproc_close(zl_inproc_link_t *l, int side);
/* Whether zl_inproc_close ran for this side. Any thread. */
bool zl_inproc_closed(const zl_inproc_link_t *l, int side);
/* Tells the peer that control frames wait in the queue this side writes.
 * Any thread, any locks (the peer is only flagged and woken). */
void zl_inproc_controls_queued(zl_inproc_link_t *l, int side);
/* Whether the peer of this side is peer_ts (unbind / disconnect by name). */
bool zl_inproc_peer_is(const zl_inproc_link_t *l, int side, const zl_tran_sock_t *peer_ts);
/* The socket that owns this side drops its pipe: once both sides did, the
 * link frees itself and drops its references on both pipes. Any thread;
 * the caller may hold its own socket's lock (the pipes are only unref'd). */
void zl_inproc_release(zl_inproc_link_t *l);

/* ---- connections ---- */

/* Closes one connection (STREAM zero-length send, ROUTER handover, socket
 * close). Unsent output is flushed first for up to linger_ms (-1 infinite,
 * 0 discard). Any thread; non-blocking; safe to call more than once.
 * c must be p->conn of a pipe the caller holds and saw not ended under
 * s->lk (the engine ends a pipe only through pipe_ended, which takes s->lk):
 * connection memory is reused after its pipe ended, and the call is
 * matched to the connection it was made for by a generation number read
 * here, so a close that arrives late never hits a newer connection.
 * Allocates a small request; when that fails it never aborts: the
 * connection is then refused instead (closed at once, unsent output
 * discarded, ERROR INTERNAL to the peer, ended with ENOMEM).
 *
 * Independently of zl_conn_close, closing the writer of a pipe's out queue
 * (zl_q_close_writer) makes the connection flush what is queued and then
 * close: that is how the socket closes a STREAM peer or ends a connection
 * at socket close. */
void zl_conn_close(zl_conn_t *c, int linger_ms);

#endif /* ZL_ENGINE_H */
