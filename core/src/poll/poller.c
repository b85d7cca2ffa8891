/*
 * poller.c — the wait engine shared by zlink_poll and zlink_poller_wait: a
 * set of sources (sockets, FDs, timers), a scan of their readiness, and a
 * sleep that any source can end. The public functions (argument checks,
 * results, the poller object's bookkeeping) are in poll_api.c.
 *
 * Design notes
 *
 * Readiness is level-triggered and computed, never stored: each scan asks
 * every source "are you ready now?" (zl_socket_readiness and the completion
 * and route hooks for sockets, zl_monitor_readiness for socket monitors,
 * zl_timer_check for timers, ppoll() for FDs).
 * A wait returns as soon as a scan finds something ready.
 *
 * Register, check, sleep — why no wake-up is lost. Each waiting thread has
 * one wake word, zl_pollsig_t: a sequence number `seq` and a `sleeping`
 * state. Sources raise it (seq++, then wake the sleeper if it sleeps):
 *  - sockets through a zl_waker_t that the source registers on the socket
 *    when it is added (zl_pollsrc_attach), long before any wait; the socket
 *    calls it from zl_socket_wake after every change that may make it
 *    ready (a record queued, credit returned, attach, close, shutdown);
 *    monitors the same way (their waker list, called for every queued
 *    event and when the monitor stops);
 *  - timers when they are started or stopped (the owner pointer is set at
 *    add; fires themselves need no raise, the sleep bound covers them).
 * One iteration of the wait loop is:
 *    1. seq0 = seq                          (before looking at anything)
 *    2. scan every source; zl_socket_readiness registers interest on each
 *       queue it finds not ready, so that queue's next change will call
 *       zl_socket_wake, hence our waker;
 *    3. if something is ready: return it;
 *    4. sleeping = FUTEX (or POLL);  then if seq != seq0: do not sleep;
 *       else sleep on seq == seq0 (futex) or in ppoll(FDs + eventfd);
 *    5. sleeping = AWAKE; go to 1.
 * A raise does seq++ and then reads `sleeping`. All four accesses are
 * sequentially consistent, so either the raiser sees our FUTEX/POLL state
 * and wakes us (FUTEX_WAKE, or a write to the eventfd, which stays readable
 * until we drain it), or we see the new seq in step 4 and do not sleep. A
 * futex sleep also compares seq == seq0 inside the kernel. A change that
 * happened before step 2 is seen by the scan itself. So a false -> true
 * transition after step 1 always ends the sleep: no lost wake, whichever
 * thread (I/O thread, peer socket, application) made it.
 *
 * Sleeping. With no FD source the owner sleeps on its futex word with the
 * earliest of (the caller's deadline, the next fire of any watched timer).
 * With FD sources it sleeps in ppoll() over the FDs plus, when any socket
 * or timer can raise it, a lazily created eventfd that raises write to.
 * Signals: a futex sleep or ppoll() interrupted by a signal returns early;
 * the loop scans again and sleeps toward the same absolute deadline, so no
 * caller ever sees EINTR and the original timeout is kept.
 *
 * Lifetime. A socket source pins its socket (zl_socket_pin) from attach to
 * detach, so its memory outlives zlink_close and zlink_ctx_term; the scan
 * reads its state from atomics only (the close gate and the terminated
 * flag), so it may run concurrently with a close. A closed socket is
 * reported as POLLERR (once per registration for a poller: err_once). An
 * unclosed socket of a shut-down context ends the wait with ETERM. A
 * monitor handle is a SOCKET source too: pinned (zl_monitor_pin), ETERM
 * like its socket, and POLLERR once when it can deliver nothing more
 * (closed, or stopped with its queue drained). Timers cannot be destroyed
 * while registered: the registration keeps its enter of the timer's handle
 * (src->timer_slot), so zlink_timer_destroy's close gate refuses. Detaching removes the
 * waker under the socket's waker lock (the monitor's lock); since wakers
 * run under that same lock, no raise through a source can still be running
 * once zl_pollsrc_detach returns, and the set may be freed.
 *
 * Locks and threads.
 *  - The engine itself takes no lock of its own. A set belongs to one
 *    thread at a time: the poller's serialization (poll_api.c, p->lk and
 *    p->waiting) guarantees that nobody changes the set during a wait; a
 *    zlink_poll set lives on the caller's stack.
 *  - Raisers run on any thread, inside the socket's waker lock (a leaf), a
 *    monitor's lock (a leaf) or a timer's lock; zl_pollsig_raise takes no lock and makes at most one
 *    system call (FUTEX_WAKE or write(eventfd)).
 *  - The scan takes, one at a time and never nested: s->lk inside
 *    zl_socket_readiness and the completion/route hooks, m->lk inside the
 *    monitor calls, t->lk inside zl_timer_check. Nothing is held while
 *    sleeping.
 *  - Attach/detach take s->wake_lk (add/remove waker), s->lk (completion
 *    claim/release, in the socket layer), m->lk and t->lk, each alone;
 *    callers in poll_api.c hold p->lk around them. Order: p->lk, then any
 *    of those.
 */
#include "poll/poller.h"

#include "poll/timer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

_Static_assert(ZL_POLLIN == ZLINK_POLLIN && ZL_POLLOUT == ZLINK_POLLOUT,
               "socket readiness bits are the public poll bits");

/* ------------------------------------------------------------- wake word */

void zl_pollsig_init(zl_pollsig_t *sig)
{
    atomic_init(&sig->seq, 0);
    atomic_init(&sig->sleeping, ZL_SIG_AWAKE);
    sig->efd = -1;
}

void zl_pollsig_fini(zl_pollsig_t *sig)
{
    if (sig->efd >= 0)
        close(sig->efd);
    sig->efd = -1;
}

void zl_pollsig_raise(zl_pollsig_t *sig)
{
    atomic_fetch_add(&sig->seq, 1);
    int sleeping = atomic_load(&sig->sleeping);
    if (sleeping == ZL_SIG_FUTEX) {
        zl_plat_wake_all(&sig->seq);
    } else if (sleeping == ZL_SIG_POLL) {
        /* efd was created before the owner first stored ZL_SIG_POLL. A full
         * counter (never in practice) still leaves the fd readable. */
        uint64_t one = 1;
        ssize_t w = write(sig->efd, &one, sizeof one);
        (void)w;
    }
}

/* Owner thread: the eventfd ppoll watches for raises. 0 or an errno. */
static int pollsig_need_efd(zl_pollsig_t *sig)
{
    if (sig->efd >= 0)
        return 0;
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0)
        return errno;
    sig->efd = fd;
    return 0;
}

/* Owner thread: consumes pending raises from the eventfd (they are already
 * accounted for by seq; the next scan sees their effects). */
static void pollsig_drain_efd(zl_pollsig_t *sig)
{
    uint64_t v;
    ssize_t r = read(sig->efd, &v, sizeof v);
    (void)r;
}

/* Runs on any thread, with the socket's waker lock held. */
static void pollsrc_wake(zl_waker_t *w)
{
    zl_pollsrc_t *src = (zl_pollsrc_t *)w;
    zl_pollsig_raise(src->sig);
}

/* ------------------------------------------------------------------ time */

int64_t zl_poll_deadline(long timeout_ms)
{
    if (timeout_ms < 0)
        return -1;
    int64_t ns, deadline;
    if (__builtin_mul_overflow((int64_t)timeout_ms, (int64_t)1000000, &ns) ||
        __builtin_add_overflow(zl_clock_ns(), ns, &deadline))
        return -1; /* beyond the clock's range: as good as forever */
    return deadline;
}

/* Earlier of two absolute times where < 0 means "none". Pure. */
static int64_t earliest(int64_t a, int64_t b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

short zl_poll_map_revents(short revents, short requested)
{
    short r = 0;
    if ((revents & POLLIN) && (requested & ZLINK_POLLIN))
        r |= ZLINK_POLLIN;
    if ((revents & POLLOUT) && (requested & ZLINK_POLLOUT))
        r |= ZLINK_POLLOUT;
    if ((revents & POLLPRI) && (requested & ZLINK_POLLPRI))
        r |= ZLINK_POLLPRI;
    if (revents & ~(POLLIN | POLLOUT | POLLPRI))
        r |= ZLINK_POLLERR;  /* POLLERR, POLLHUP, POLLNVAL, POLLRDHUP ... */
    return r;
}

/* Platform poll bits for a ZLINK mask (ERR needs no request). Pure. */
static short pollfd_events(short events)
{
    short e = 0;
    if (events & ZLINK_POLLIN)
        e |= POLLIN;
    if (events & ZLINK_POLLOUT)
        e |= POLLOUT;
    if (events & ZLINK_POLLPRI)
        e |= POLLPRI;
    return e;
}

/* Owner thread, no locks held; blocks: ppoll until the absolute deadline
 * (< 0: none). Returns ppoll's result; errno as ppoll left it (EINTR when
 * a signal ended it: the caller loops). pfd belongs to the caller. */
static int ppoll_until(struct pollfd *pfd, size_t n, int64_t until)
{
    struct timespec ts, *tp = NULL;
    if (until >= 0) {
        int64_t left = until - zl_clock_ns();
        if (left < 0)
            left = 0;
        ts.tv_sec = (time_t)(left / 1000000000);
        ts.tv_nsec = (long)(left % 1000000000);
        tp = &ts;
    }
    return ppoll(pfd, (nfds_t)n, tp, NULL);
}

/* -------------------------------------------------------------- the set */

void zl_pollset_init(zl_pollset_t *set, bool err_once)
{
    memset(set, 0, sizeof *set);
    zl_pollsig_init(&set->sig);
    set->err_once = err_once;
}

void zl_pollset_fini(zl_pollset_t *set)
{
    zl_pollsig_fini(&set->sig);
    free(set->src);
    free(set->pfd);
    set->src = NULL;
    set->pfd = NULL;
    set->n = set->cap = set->pfd_cap = 0;
}

int zl_pollset_reserve(zl_pollset_t *set, size_t more)
{
    size_t need = set->n + more;
    if (need > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        while (cap < need)
            cap *= 2;
        zl_pollsrc_t **src = realloc(set->src, cap * sizeof *src);
        if (src == NULL)
            return ENOMEM;
        set->src = src;
        set->cap = cap;
    }
    if (need + 1 > set->pfd_cap) {
        size_t cap = set->cap + 1;   /* every source an FD, plus the eventfd */
        struct pollfd *pfd = realloc(set->pfd, cap * sizeof *pfd);
        if (pfd == NULL)
            return ENOMEM;
        set->pfd = pfd;
        set->pfd_cap = cap;
    }
    return 0;
}

void zl_pollsrc_attach(zl_pollset_t *set, zl_pollsrc_t *src)
{
    src->sig = &set->sig;
    src->waker.wake = pollsrc_wake;
    src->waker.next = NULL;
    if (src->sock != NULL) {
        zl_socket_pin(src->sock);
        zl_socket_add_waker(src->sock, &src->waker);
    } else if (src->mon != NULL) {
        zl_monitor_pin(src->mon);
        zl_monitor_add_waker(src->mon, &src->waker);
    }
    set->src[set->n++] = src;
}

void zl_pollsrc_detach(zl_pollset_t *set, zl_pollsrc_t *src, void *owner)
{
    if (src->sock != NULL) {
        if (src->cq_owner)
            zl_socket_completion_release(src->sock, owner);
        src->cq_owner = false;
        zl_socket_remove_waker(src->sock, &src->waker);
        zl_socket_unpin(src->sock);
    } else if (src->mon != NULL) {
        zl_monitor_remove_waker(src->mon, &src->waker);
        zl_monitor_unpin(src->mon);
    } else if (src->timer != NULL) {
        zl_timer_detach(src->timer, owner);
        /* The registration's hold on the timer's handle: from here on the
         * timer may be destroyed, so it is not touched again. */
        if (src->timer_slot != NULL)
            zl_handle_leave(src->timer_slot);
        src->timer_slot = NULL;
    }
    for (size_t i = 0; i < set->n; i++) {
        if (set->src[i] == src) {
            memmove(&set->src[i], &set->src[i + 1], (set->n - i - 1) * sizeof set->src[0]);
            set->n--;
            break;
        }
    }
}

/* --------------------------------------------------------------- scanning */

/* Lifecycle of a pinned socket from atomics only (safe while another
 * thread closes it): 0 open, ESHUTDOWN closed, ETERM context shut down.
 * The same answer as zl_socket_state. Never through the handle: the
 * handle's slot is released when the close ends, the pinned memory is not. */
static int pinned_socket_state(zl_socket_t *s)
{
    return zl_socket_state(s);
}

/* Owner thread, no locks held (the calls take s->lk): sets src->ready for
 * a socket source, registering interest where it is not ready. Returns the
 * socket's state: 0 open (ready per the mask), ESHUTDOWN closed (POLLERR
 * unless already reported), ETERM (nothing set; the wait ends). */
static int socket_scan(const zl_pollset_t *set, zl_pollsrc_t *src)
{
    zl_socket_t *s = src->sock;
    int state = pinned_socket_state(s);
    if (state == ESHUTDOWN) {
        if (!(set->err_once && src->err_reported))
            src->ready = ZLINK_POLLERR;
        return state;
    }
    if (state != 0 || src->events == 0)
        return state;
    short r = 0;
    int io = src->events & (ZLINK_POLLIN | ZLINK_POLLOUT);
    if (io != 0)
        r |= (short)(zl_socket_readiness(s, io) & io);
    if ((src->events & ZLINK_POLLCOMPLETION) && zl_socket_completion_ready(s))
        r |= ZLINK_POLLCOMPLETION;
    if ((src->events & ZLINK_POLLROUTE) && zl_socket_route_changed(s))
        r |= ZLINK_POLLROUTE;
    src->ready = r;
    return 0;
}

/* Owner thread, no locks held (the calls take m->lk): the same for a
 * monitor handle. A stopped monitor (its socket closed) or a closed one
 * still offers the events it holds (IN); once it holds none, nothing can
 * come any more and it reports POLLERR once, like a closed socket. */
static int monitor_scan(const zl_pollset_t *set, zl_pollsrc_t *src)
{
    int state = zl_monitor_state(src->mon);
    if (state == ETERM)
        return state;
    bool queued = zl_monitor_readiness(src->mon) != 0;
    if (state == ESHUTDOWN && !queued) {
        if (!(set->err_once && src->err_reported))
            src->ready = ZLINK_POLLERR;
        return state;
    }
    if (queued && (src->events & ZLINK_POLLIN))
        src->ready = ZLINK_POLLIN;
    return state;
}

int zl_pollset_wait(zl_pollset_t *set, int64_t deadline_ns, int *err)
{
    zl_pollsig_t *sig = &set->sig;
    for (;;) {
        /* 1. Read the wake word before looking at any source. */
        uint32_t seq0 = atomic_load(&sig->seq);
        int64_t now = zl_clock_ns();
        int64_t bound = deadline_ns;
        size_t nready = 0, nfd = 0;
        bool waitable = false;   /* some source could still become ready */
        bool raisers = false;    /* some source can raise sig */

        /* 2. Scan. */
        for (size_t i = 0; i < set->n; i++) {
            zl_pollsrc_t *src = set->src[i];
            src->ready = 0;
            src->pfd_index = -1;
            switch (src->kind) {
            case ZLINK_POLLER_SOURCE_SOCKET: {
                if (src->closed_early) {
                    src->ready = ZLINK_POLLERR;
                    break;
                }
                raisers = true;
                int state = src->mon != NULL ? monitor_scan(set, src)
                                             : socket_scan(set, src);
                if (state == ETERM) {
                    *err = ETERM;
                    return -1;
                }
                if (state == 0 && src->events != 0)
                    waitable = true;
                break;
            }
            case ZLINK_POLLER_SOURCE_TIMER: {
                raisers = true;
                if (!(src->events & ZLINK_POLLIN))
                    break;
                waitable = true;
                int64_t next;
                if (zl_timer_check(src->timer, now, &next))
                    src->ready = ZLINK_POLLIN;
                else
                    bound = earliest(bound, next);
                break;
            }
            case ZLINK_POLLER_SOURCE_FD:
                if (src->events == 0)
                    break;
                waitable = true;
                set->pfd[nfd].fd = src->fd;
                set->pfd[nfd].events = pollfd_events(src->events);
                set->pfd[nfd].revents = 0;
                src->pfd_index = (int)nfd++;
                break;
            }
            if (src->ready != 0)
                nready++;
        }

        /* 3 and 4. Look at the FDs (sleeping there when nothing else is
         * ready), or sleep on the futex word. */
        if (nfd > 0) {
            int64_t until = nready > 0 ? now : bound;
            size_t npfd = nfd;
            if (nready == 0 && raisers) {
                int e = pollsig_need_efd(sig);
                if (e != 0) {
                    *err = e;
                    return -1;
                }
                set->pfd[npfd].fd = sig->efd;
                set->pfd[npfd].events = POLLIN;
                set->pfd[npfd].revents = 0;
                npfd++;
                atomic_store(&sig->sleeping, ZL_SIG_POLL);
                if (atomic_load(&sig->seq) != seq0)
                    until = now;   /* raised meanwhile: only look at the FDs */
            }
            int rc = ppoll_until(set->pfd, npfd, until);
            int e = errno;
            atomic_store(&sig->sleeping, ZL_SIG_AWAKE);
            if (rc < 0 && e != EINTR && e != EAGAIN) {
                *err = e;
                return -1;
            }
            if (rc > 0) {
                if (npfd > nfd && set->pfd[nfd].revents != 0)
                    pollsig_drain_efd(sig);
                for (size_t i = 0; i < set->n; i++) {
                    zl_pollsrc_t *src = set->src[i];
                    if (src->pfd_index < 0)
                        continue;
                    src->ready = zl_poll_map_revents(set->pfd[src->pfd_index].revents,
                                                     src->events);
                    if (src->ready != 0)
                        nready++;
                }
            }
        } else if (nready == 0 && waitable) {
            atomic_store(&sig->sleeping, ZL_SIG_FUTEX);
            if (atomic_load(&sig->seq) == seq0)
                zl_plat_wait_change(&sig->seq, seq0, bound);
            atomic_store(&sig->sleeping, ZL_SIG_AWAKE);
        }

        if (nready > 0)
            return (int)nready;
        if (!waitable)
            return 0;
        if (deadline_ns >= 0 && zl_clock_ns() >= deadline_ns)
            return 0;
        /* 5. Raised, a timer is due, a signal, or a spurious return. */
    }
}
