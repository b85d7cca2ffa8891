/*
 * poller.h — the readiness wait engine behind zlink_poll and zlink_poller_*,
 * and the poller object itself. Public entry points are in poll_api.c; the
 * design notes (ordering, locks, threads) are at the top of poller.c.
 *
 * Pieces
 *  - zl_pollsig_t: the wake word of one waiting thread. Every watched
 *    source raises it when its readiness may have changed.
 *  - zl_pollsrc_t: one watched source (socket, socket monitor, FD or timer)
 *    with its event mask, user data and the waker it registered on a
 *    socket or monitor.
 *  - zl_pollset_t: an ordered set of sources and the wait loop over them.
 *    A poller owns one for its lifetime; zlink_poll builds a temporary one
 *    per call.
 *  - zl_poller_t: a pollset plus the poller's lock, its "a wait is
 *    active" flag and the rotor that keeps event arrays fair.
 */
#ifndef ZL_POLLER_H
#define ZL_POLLER_H

#include "sock/monitor.h"
#include "util/platform.h"
#include "sock/socket.h"
#include "zlink.h"

#include <poll.h>

typedef struct zl_timer zl_timer_t;

/* Every event bit a mask may carry (ITEMS_DFLT is not one of them). */
#define ZL_POLL_VALID_BITS                                                         \
    (ZLINK_POLLIN | ZLINK_POLLOUT | ZLINK_POLLERR | ZLINK_POLLPRI | ZLINK_POLLCOMPLETION | \
     ZLINK_POLLROUTE)

/* ---- what the poller uses from the socket layer (socket.h) ----
 *
 *  - zl_socket_add_waker / zl_socket_remove_waker: the wake path (below).
 *  - zl_socket_readiness: POLLIN / POLLOUT, registering interest.
 *  - zl_socket_completion_ready / _claim / _release: POLLCOMPLETION and its
 *    single owner per socket (the owner is the zl_poller_t).
 *  - zl_socket_route_changed: POLLROUTE on a ROUTER.
 *  - zl_socket_pin / zl_socket_unpin: lifetime of a registered socket.
 * and from the monitor (monitor.h), for a monitor handle registered like a
 * socket: zl_monitor_add_waker / _remove_waker, zl_monitor_readiness (IN),
 * zl_monitor_state and zl_monitor_pin / _unpin.
 * Each of the readiness calls takes s->lk itself and may be called on a
 * closed but pinned socket. Every change they report is followed by
 * zl_socket_wake(s) in the socket layer, which runs the wakers.
 */

/* ---- the wake word ---- */

enum {
    ZL_SIG_AWAKE = 0,   /* the owner is scanning, or not waiting at all */
    ZL_SIG_FUTEX = 1,   /* the owner sleeps on seq (zl_plat_wait_change) */
    ZL_SIG_POLL = 2     /* the owner sleeps in ppoll() and watches efd */
};

typedef struct zl_pollsig {
    _Atomic uint32_t seq;     /* bumped by every raise */
    _Atomic int sleeping;     /* ZL_SIG_*; written only by the owner */
    int efd;                  /* eventfd for ZL_SIG_POLL, or -1 until needed;
                                 written by the owner before it first
                                 publishes ZL_SIG_POLL, never changed after */
} zl_pollsig_t;

/* Owner thread; no locks. */
void zl_pollsig_init(zl_pollsig_t *sig);
/* Owner thread, after every waker that could raise sig is gone. */
void zl_pollsig_fini(zl_pollsig_t *sig);
/* Any thread, with any locks held (it takes none and only signals): tells
 * the owner that some source may have changed. Never loses a raise: see
 * "Register, check, sleep" in poller.c. */
void zl_pollsig_raise(zl_pollsig_t *sig);

/* ---- sources ---- */

typedef struct zl_pollsrc {
    zl_waker_t waker;          /* first: registered on sock/mon, raises *sig */
    zl_pollsig_t *sig;
    zlink_poller_source_kind_t kind;  /* a monitor is a SOCKET source */
    void *handle;              /* what the application passed (identity) */
    zl_socket_t *sock;         /* SOCKET, a socket: pinned while registered */
    zl_monitor_t *mon;         /* SOCKET, a monitor handle: pinned likewise */
    bool closed_early;         /* zlink_poll item closed before the call:
                                  not pinned, never touched, reports ERR */
    zl_timer_t *timer;         /* TIMER */
    zl_hslot_t *timer_slot;    /* TIMER: the timer handle's slot, entered
                                  for as long as the registration lasts
                                  (poller only; NULL in zlink_poll sets) */
    int fd;                    /* FD */
    short events;              /* requested bits */
    void *user_data;
    bool err_reported;         /* poller: this closed source's POLLERR was
                                  returned (it is returned once) */
    bool cq_owner;             /* holds the socket's POLLCOMPLETION bit */
    short ready;               /* result of the last scan (owner thread) */
    int pfd_index;             /* scratch: its slot in the ppoll array */
} zl_pollsrc_t;

/* ---- the set and its wait loop ---- */

typedef struct zl_pollset {
    zl_pollsig_t sig;
    zl_pollsrc_t **src;        /* in registration order */
    size_t n, cap;
    struct pollfd *pfd;        /* scratch for ppoll: FDs + the eventfd */
    size_t pfd_cap;
    bool err_once;             /* poller: a closed socket's ERR only once */
} zl_pollset_t;

/* Owner thread. */
void zl_pollset_init(zl_pollset_t *set, bool err_once);
/* Owner thread; every source must have been detached (zl_pollsrc_detach). */
void zl_pollset_fini(zl_pollset_t *set);
/* Owner thread; makes room for one more source (and its ppoll slot).
 * 0 or ENOMEM; nothing changes on failure. */
int zl_pollset_reserve(zl_pollset_t *set, size_t more);

/* Starts watching a validated source (owner thread, room reserved):
 * SOCKET: pins the socket or monitor and registers src->waker on it (the
 * caller is inside the socket's or the monitor's handle); TIMER:
 * zl_timer_attach must already have succeeded, and src->timer_slot holds
 * the caller's enter of the timer handle, which the registration keeps.
 * Appends src. */
void zl_pollsrc_attach(zl_pollset_t *set, zl_pollsrc_t *src);
/* Stops watching src and removes it from the set without freeing it:
 * releases the completion bit, removes the waker, unpins the socket or
 * monitor / detaches the timer and leaves its handle (the timer may be
 * destroyed from then on). After it returns no thread can raise
 * through src. Owner thread; takes the socket's waker lock (or the
 * monitor's lock), the timer's lock. */
void zl_pollsrc_detach(zl_pollset_t *set, zl_pollsrc_t *src, void *owner);

/* The wait loop. Scans every source (registering interest), sleeps until
 * one changes or the bound passes, and repeats until some source is ready
 * or the absolute monotonic deadline (ns, < 0 = none) passes. Sets
 * src->ready on every source. Returns the number of ready sources, 0 on
 * timeout (or at once when nothing can become ready), or -1 with *err
 * (ETERM: an unclosed socket or monitor source's context was shut down; or a
 * platform errno from eventfd/ppoll). Never EINTR: an interrupted sleep
 * resumes toward the same deadline. Owner thread; no locks held; blocks. */
int zl_pollset_wait(zl_pollset_t *set, int64_t deadline_ns, int *err);

/* ---- the poller object ---- */

typedef struct zl_poller {
    zl_mutex_t lk;             /* serializes size/add/modify/remove/wait
                                  entry and exit; never held while asleep */
    bool waiting;              /* a zlink_poller_wait is inside (under lk) */
    size_t rotor;              /* next source to report first (wait thread) */
    zl_pollset_t set;
} zl_poller_t;

/* Absolute monotonic deadline (ns) for a millisecond timeout; -1 for a
 * negative timeout or one beyond the clock's range. Pure; any thread. */
int64_t zl_poll_deadline(long timeout_ms);

/* Maps platform poll revents to ZLINK_POLL* bits: IN, OUT and PRI as
 * themselves (when requested), every other bit to ERR. Pure; any thread. */
short zl_poll_map_revents(short revents, short requested);

#endif /* ZL_POLLER_H */
