/*
 * timer.c — generic timers: zlink_timer_new/_destroy/_start/_stop/_recv.
 *
 * Design notes
 *  - No thread and no libuv timer: a running timer is its start time, its
 *    interval and its repeat count. The number of fires due at time `now`
 *    is floor((now - start) / interval), capped at repeat when repeat > 0
 *    (the timer then stops by itself). Nothing happens when a fire "occurs";
 *    whoever looks (zlink_timer_recv, a poller's scan) computes it from the
 *    monotonic clock. A poller sleeps no longer than the earliest next fire
 *    of its timers (zl_timer_check gives it).
 *  - Counting: `taken` is how many fires of this run were already returned.
 *    zlink_timer_recv returns due - taken (>= 1) and sets taken = due, so
 *    the count is "fires since the last receive", and the first receive of
 *    a run counts from 1. zlink_timer_start begins a new run (fires of the
 *    previous run that were not received are dropped). zlink_timer_stop
 *    freezes the due count: fires that happened before the stop can still
 *    be received, none happen after it; stopped and drained gives NO_DATA.
 *  - Locks: t->lk (a mutex per timer) guards the run state, so a poller on
 *    one thread may scan a timer that the application starts or stops on
 *    another. Order: a poller's lk before t->lk. Under t->lk the only
 *    outside call is zl_pollsig_raise, which takes no lock.
 *  - Wake-ups: start and stop raise the owning poller's wake word (its
 *    wait recomputes its bound) and wake receives blocked in
 *    zlink_timer_recv(NONE), which sleep on t->seq until the next fire.
 *  - The contract makes one timer unsafe for concurrent use by the
 *    application (two threads calling start/recv on it at once is the
 *    caller's race); the lock exists for the poller, not for that.
 *  - Handles: the public handle is a handle-table value (handle.h). Every
 *    call enters it; zlink_timer_destroy takes its close gate, which fails
 *    with CLOSE_BUSY/EBUSY while another call is inside (a blocked
 *    zlink_timer_recv included) or while a poller holds the timer (the
 *    registration keeps its enter), so neither a call nor a poller ever
 *    sees a freed timer, and a destroyed timer's handle is EFAULT.
 */
#include "poll/timer.h"

#include "util/errors.h"
#include "poll/poller.h"
#include "zlink.h"

#include <stdlib.h>

int zl_timer_enter(const void *handle, zl_timer_t **out, zl_hslot_t **slot)
{
    void *obj;
    if (zl_handle_enter(handle, ZL_HANDLE_TIMER, &obj, slot) != 0)
        return EFAULT;
    *out = obj;
    return 0;
}

/* Under t->lk: fires of the current run due at now. Stops the timer when
 * its repeat count is reached. */
static uint64_t timer_due_locked(zl_timer_t *t, int64_t now)
{
    if (!t->running)
        return t->frozen;
    uint64_t elapsed = now > t->start_ns ? (uint64_t)(now - t->start_ns) : 0;
    uint64_t due = elapsed / t->interval_ns;
    if (t->repeat != 0 && due >= t->repeat) {
        t->running = false;
        t->frozen = t->repeat;
        return t->repeat;
    }
    return due;
}

/* Under t->lk, running: monotonic time of fire number due + 1, or -1 when
 * it does not fit in an int64_t. */
static int64_t timer_next_locked(const zl_timer_t *t, uint64_t due)
{
    uint64_t offset;
    if (__builtin_mul_overflow(due + 1, t->interval_ns, &offset) || offset > (uint64_t)INT64_MAX)
        return -1;
    int64_t next;
    if (__builtin_add_overflow(t->start_ns, (int64_t)offset, &next))
        return -1;
    return next;
}

/* Under t->lk: after a change of the run state, tell the owning poller.
 * Blocked receives are woken by the caller after it drops the lock. */
static void timer_changed_locked(zl_timer_t *t)
{
    atomic_fetch_add(&t->seq, 1);
    if (t->sig != NULL)
        zl_pollsig_raise(t->sig);
}

/* After a start or stop, with t->lk released: wakes zlink_timer_recv(NONE)
 * calls asleep on t->seq (if any). Any thread. */
static void timer_wake_receivers(zl_timer_t *t)
{
    if (atomic_load(&t->recv_waiters) > 0)
        zl_plat_wake_all(&t->seq);
}

int zl_timer_attach(zl_timer_t *t, void *owner, zl_pollsig_t *sig)
{
    int rc = 0;
    zl_mutex_lock(&t->lk);
    if (t->owner == owner) {
        rc = EEXIST;
    } else if (t->owner != NULL) {
        rc = EBUSY;
    } else {
        t->owner = owner;
        t->sig = sig;
    }
    zl_mutex_unlock(&t->lk);
    return rc;
}

void zl_timer_detach(zl_timer_t *t, void *owner)
{
    zl_mutex_lock(&t->lk);
    if (t->owner == owner) {
        t->owner = NULL;
        t->sig = NULL;
    }
    zl_mutex_unlock(&t->lk);
}

bool zl_timer_check(zl_timer_t *t, int64_t now_ns, int64_t *next_ns)
{
    zl_mutex_lock(&t->lk);
    uint64_t due = timer_due_locked(t, now_ns);
    bool pending = due > t->taken;
    *next_ns = (!pending && t->running) ? timer_next_locked(t, due) : -1;
    zl_mutex_unlock(&t->lk);
    return pending;
}

/* ------------------------------------------------ what the facade calls */

zl_timer_t *zl_timer_new(void)
{
    zl_timer_t *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    zl_mutex_init(&t->lk);
    return t;
}

void zl_timer_free(zl_timer_t *t)
{
    zl_mutex_fini(&t->lk);
    free(t);
}

void zl_timer_start(zl_timer_t *t, uint64_t interval_ns, uint64_t repeat)
{
    zl_mutex_lock(&t->lk);
    t->running = true;
    t->start_ns = zl_clock_ns();
    t->interval_ns = interval_ns;
    t->repeat = repeat;
    t->taken = 0;
    t->frozen = 0;
    timer_changed_locked(t);
    zl_mutex_unlock(&t->lk);
    timer_wake_receivers(t);
}

void zl_timer_stop(zl_timer_t *t)
{
    zl_mutex_lock(&t->lk);
    if (t->running) {
        t->frozen = timer_due_locked(t, zl_clock_ns());
        t->running = false;
        timer_changed_locked(t);
    }
    zl_mutex_unlock(&t->lk);
    timer_wake_receivers(t);
}

/* zlink_timer_recv inside the handle: 0 with *count, or EAGAIN. May sleep
 * (NONE) until the next fire or a start/stop; holds no lock meanwhile. */
int zl_timer_recv(zl_timer_t *t, uint64_t *count, int flags)
{
    bool counted = false;
    for (;;) {
        zl_mutex_lock(&t->lk);
        uint64_t due = timer_due_locked(t, zl_clock_ns());
        if (due > t->taken) {
            *count = due - t->taken;
            t->taken = due;
            zl_mutex_unlock(&t->lk);
            break;
        }
        if (!t->running || (flags & ZLINK_DONTWAIT)) {
            zl_mutex_unlock(&t->lk);
            if (counted)
                atomic_fetch_sub(&t->recv_waiters, 1);
            return EAGAIN;
        }
        int64_t next = timer_next_locked(t, due);
        if (!counted) {
            /* Counted before seq is read under the lock, so a start or stop
             * after this point sees us and wakes us. */
            atomic_fetch_add(&t->recv_waiters, 1);
            counted = true;
            zl_mutex_unlock(&t->lk);
            continue;
        }
        uint32_t seq = atomic_load(&t->seq);
        zl_mutex_unlock(&t->lk);
        /* Sleeps until the next fire or a start/stop; a signal only ends
         * the sleep early and the loop looks again. */
        zl_plat_wait_change(&t->seq, seq, next);
    }
    if (counted)
        atomic_fetch_sub(&t->recv_waiters, 1);
    return 0;
}
