/*
 * platform.c — POSIX implementations of platform.h.
 */
#include "util/platform.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/random.h>
#include <time.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

void zl_mutex_init(zl_mutex_t *m)
{
    /* Adaptive: a contended lock spins briefly before sleeping. Our
     * critical sections are a few dozen instructions, so the holder is
     * almost always about to release it. */
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
}

void zl_mutex_fini(zl_mutex_t *m)
{
    pthread_mutex_destroy(m);
}

void zl_cond_init(zl_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

void zl_cond_fini(zl_cond_t *c)
{
    pthread_cond_destroy(c);
}

void zl_cond_wait_until(zl_cond_t *c, zl_mutex_t *m, int64_t deadline_ns)
{
    if (deadline_ns < 0) {
        pthread_cond_wait(c, m);
        return;
    }
    struct timespec ts;
    ts.tv_sec = (time_t)(deadline_ns / 1000000000);
    ts.tv_nsec = (long)(deadline_ns % 1000000000);
    /* EINTR cannot come out of pthread_cond_timedwait; ETIMEDOUT and spurious
     * wake-ups are both handled by the caller's loop. */
    (void)pthread_cond_timedwait(c, m, &ts);
}

int64_t zl_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void zl_plat_random(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            /* No kernel entropy interface: fall back to a time-seeded PRNG.
             * Routing ids only need to be distinct, not secret. */
            static _Atomic uint64_t state = 0;
            uint64_t x = atomic_fetch_add(&state, 0x9E3779B97F4A7C15ull) ^
                         (uint64_t)zl_clock_ns();
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                p[i] = (unsigned char)x;
            }
            return;
        }
        p += got;
        n -= (size_t)got;
    }
}

#ifdef __linux__
void zl_plat_wait_change(_Atomic uint32_t *addr, uint32_t seen, int64_t deadline_ns)
{
    struct timespec rel, *tp = NULL;
    if (deadline_ns >= 0) {
        int64_t left = deadline_ns - zl_clock_ns();
        if (left <= 0)
            return;
        rel.tv_sec = (time_t)(left / 1000000000);
        rel.tv_nsec = (long)(left % 1000000000);
        tp = &rel;
    }
    /* EINTR, EAGAIN (value already changed) and ETIMEDOUT all simply return:
     * the caller re-checks its condition. */
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, seen, tp, NULL, 0);
}

void zl_plat_wake_all(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
/* Portable fallback: one process-wide lock and condition variable. */
static pthread_mutex_t wait_lk = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wait_cv = PTHREAD_COND_INITIALIZER;

void zl_plat_wait_change(_Atomic uint32_t *addr, uint32_t seen, int64_t deadline_ns)
{
    pthread_mutex_lock(&wait_lk);
    if (atomic_load(addr) == seen) {
        if (deadline_ns < 0) {
            pthread_cond_wait(&wait_cv, &wait_lk);
        } else {
            struct timespec now, ts;
            clock_gettime(CLOCK_REALTIME, &now);
            int64_t left = deadline_ns - zl_clock_ns();
            int64_t abs = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + (left > 0 ? left : 0);
            ts.tv_sec = (time_t)(abs / 1000000000);
            ts.tv_nsec = (long)(abs % 1000000000);
            pthread_cond_timedwait(&wait_cv, &wait_lk, &ts);
        }
    }
    pthread_mutex_unlock(&wait_lk);
}

void zl_plat_wake_all(_Atomic uint32_t *addr)
{
    (void)addr;
    pthread_mutex_lock(&wait_lk);
    pthread_cond_broadcast(&wait_cv);
    pthread_mutex_unlock(&wait_lk);
}
#endif

__attribute__((noinline)) static void zero_bytes(void *p, size_t size)
{
    memset(p, 0, size);
}

void *zl_zalloc(size_t size)
{
    void *p = malloc(size);
    if (p != NULL)
        zero_bytes(p, size);
    return p;
}

bool zl_spin_step(zl_spin_t *sp)
{
    if ((++sp->turns & 15) == 0) {
        if (zl_clock_ns() >= sp->end)
            return false;
        if (sp->turns >= 256) {
            sched_yield();
            return true;
        }
    }
    zl_cpu_relax();
    return true;
}
