/*
 * timer.h — generic timers (zlink_timer_*): the object and what the poller
 * needs from it. See the design notes in timer.c.
 */
#ifndef ZL_TIMER_H
#define ZL_TIMER_H

#include "util/handle.h"
#include "util/platform.h"

typedef struct zl_pollsig zl_pollsig_t;
typedef struct zl_timer zl_timer_t;

struct zl_timer {
    zl_mutex_t lk;             /* guards everything below; a leaf except
                                  that zl_pollsig_raise runs under it */
    bool running;
    int64_t start_ns;          /* monotonic time of the last start */
    uint64_t interval_ns;      /* > 0 */
    uint64_t repeat;           /* fires of this run; 0 = without end */
    uint64_t taken;            /* fires already returned since the start */
    uint64_t frozen;           /* fires of this run when it stopped */
    void *owner;               /* the poller holding it, or NULL */
    zl_pollsig_t *sig;         /* that poller's wake word */
    _Atomic uint32_t seq;      /* bumped by start/stop for blocked receives */
    _Atomic int recv_waiters;  /* zlink_timer_recv(NONE) calls asleep */
};

/* Resolves a timer handle (handle.h) and enters it: 0 (*out the timer,
 * *slot its slot; zl_handle_leave(*slot) once) or EFAULT (not a live
 * timer: NULL, another kind, garbage, destroyed). A poller that registers
 * the timer keeps the enter until it removes it, which is what makes
 * zlink_timer_destroy refuse (EBUSY) a timer a poller holds. Any thread;
 * no lock; never blocks. */
int zl_timer_enter(const void *handle, zl_timer_t **out, zl_hslot_t **slot);

/* Lets one poller (owner, with wake word sig) watch t: start and stop will
 * raise sig. 0; EEXIST when owner already holds t; EBUSY when another
 * poller does. Caller: a poller under its own lock; takes t->lk. */
int zl_timer_attach(zl_timer_t *t, void *owner, zl_pollsig_t *sig);
/* Undoes zl_timer_attach if owner holds t; afterwards t never raises sig.
 * Takes t->lk. */
void zl_timer_detach(zl_timer_t *t, void *owner);

/* Readiness for a wait: true when at least one fire waits to be received.
 * Otherwise *next_ns is the monotonic time of the next fire, or -1 when
 * none is scheduled (stopped, or too far to represent). Any thread; takes
 * t->lk; may auto-stop a timer whose repeat count is reached. */
bool zl_timer_check(zl_timer_t *t, int64_t now_ns, int64_t *next_ns);

/* ---- what api/timer_api.c calls (after validating the handle) ---- */

/* A stopped timer, not yet a handle. NULL when out of memory. */
zl_timer_t *zl_timer_new(void);
/* Frees a timer whose handle was closed (nobody inside, no poller). */
void zl_timer_free(zl_timer_t *t);
/* (Re)starts t: fires every interval_ns (> 0, checked by the caller),
 * repeat times (0: until stopped); the fire count restarts. Wakes blocked
 * receives and the poller watching t. Any thread; takes t->lk. */
void zl_timer_start(zl_timer_t *t, uint64_t interval_ns, uint64_t repeat);
/* Stops t, keeping the fires already due for the next receive. Any
 * thread; takes t->lk. */
void zl_timer_stop(zl_timer_t *t);
/* Takes the fires due since the last receive into *count: 0, or EAGAIN
 * when none is due and (flags has DONTWAIT, or t is stopped). Without
 * DONTWAIT sleeps (no lock held) until the next fire or a start/stop. */
int zl_timer_recv(zl_timer_t *t, uint64_t *count, int flags);

#endif /* ZL_TIMER_H */
