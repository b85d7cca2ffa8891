/*
 * monitor.h — the socket monitor: a bounded, lossy queue of connection
 * events attached to one socket (public API in api/monitor_api.c, event
 * sources in engine/conn_events.c, protocols/dealer.c and the close hook).
 *
 * Design notes are at the top of monitor.c. In short:
 *  - s->monitor points at the open monitor; it is written under s->lk and
 *    read either under s->lk or with an atomic load (the cheap "is anybody
 *    listening" check). Every producer posts under s->lk, so a monitor is
 *    never touched by a producer after zlink_monitor_close cleared the
 *    pointer.
 *  - m->lk is a leaf lock (taken under s->lk, never the other way round):
 *    the queue, the stopped flag and the waker list.
 *  - A monitor pins its socket (zl_socket_pin) while open, so the socket's
 *    memory and lock stay valid even after zlink_close and zlink_ctx_term.
 *  - The public handle is a handle-table value (handle.h, kind
 *    ZL_HANDLE_MONITOR) made by monitor_api.c; every call on it enters the
 *    handle, and zlink_monitor_close takes its close gate (EBUSY while a
 *    receive or status call is inside), so a closed monitor's handle is
 *    refused without touching the monitor's memory.
 */
#ifndef ZL_MONITOR_H
#define ZL_MONITOR_H

#include "sock/socket.h"

typedef struct zl_monitor zl_monitor_t;

/* ---- producers (any thread) ---- */

/* Cheap check before building an event: whether s has an open monitor
 * subscribed to event. Takes s->lk only when a monitor is open. The caller
 * holds no lock. A "yes" may be stale by the time of the post (the post
 * checks again). */
bool zl_monitor_wants(zl_socket_t *s, uint32_t event);

/* Queues *ev (copied) on s's monitor when one is open, not stopped and
 * subscribed to ev->event, and the byte budget admits it; otherwise drops
 * it. Never blocks. have_lock: the caller holds s->lk. */
void zl_monitor_post(zl_socket_t *s, bool have_lock, const zlink_monitor_event_t *ev);

/* A CONNECTION_READY event: under s->lk, sets ev->value to the number of
 * ready (attached, not ended) peers and, when p is given and still
 * attached, takes the routing id the socket uses for p. The caller holds
 * no lock. */
void zl_monitor_post_ready(zl_socket_t *s, zlink_monitor_event_t *ev, const zl_pipe_t *p);

/* The socket's close was accepted (zlink_close, before teardown; no lock
 * held): reports one DISCONNECTED for each ready tcp/ipc peer (value
 * CTX_TERM when the context was shut down, else UNKNOWN), then
 * MONITOR_STOPPED, and detaches the monitor: nothing is reported after. */
void zl_monitor_socket_closed(zl_socket_t *s);

/* Optional hook for context shutdown (zl_socket_terminate, no lock held or
 * s->lk held): wakes a receive blocked on s's monitor so it can return
 * ETERM at once instead of at its timeout. */
void zl_monitor_socket_terminated(zl_socket_t *s);

/* ---- the handle (monitor_api.c, pollers) ---- */

/* Opens a monitor on s (the caller is inside s's gate). hwm 0 = default.
 * Returns 0 or ESHUTDOWN, ETERM, EBUSY, ENOMEM. */
int zl_monitor_open(zl_socket_t *s, uint32_t events, uint64_t hwm, zl_monitor_t **out);
/* Pops one event (flags: ZLINK_RECV_FLAGS_*). 0 or EAGAIN, ETERM,
 * ESHUTDOWN. Single consumer. */
int zl_monitor_recv(zl_monitor_t *m, zlink_monitor_event_t *ev, int flags);
/* Fills the whole status snapshot. */
void zl_monitor_status(zl_monitor_t *m, zlink_monitor_status_t *st);
/* Detaches from the socket, discards queued events, drops the handle's
 * reference (the memory goes with the last pin). */
void zl_monitor_close(zl_monitor_t *m);

/* Pollers. A registered waker's wake() runs on any thread with m's leaf
 * lock held (it must only signal), after every queued event and when the
 * monitor stops. Readiness is level: ZL_POLLIN while an event is queued.
 * zl_monitor_state: 0 open, ESHUTDOWN once the socket closed (and the
 * queue may still hold events), ETERM when the context was shut down.
 * Pins keep the monitor's memory after zlink_monitor_close (the handle is
 * then stale in the handle table). Any thread. */
int zl_monitor_readiness(zl_monitor_t *m);
int zl_monitor_state(zl_monitor_t *m);
void zl_monitor_add_waker(zl_monitor_t *m, zl_waker_t *w);
void zl_monitor_remove_waker(zl_monitor_t *m, zl_waker_t *w);
void zl_monitor_pin(zl_monitor_t *m);
void zl_monitor_unpin(zl_monitor_t *m);

#endif /* ZL_MONITOR_H */
