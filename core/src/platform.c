/*
 * platform.c — POSIX implementations of platform.h.
 */
#include "platform.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

void zl_mutex_init(zl_mutex_t *m)
{
    pthread_mutex_init(m, NULL);
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
