/*
 * platform.h — the few operating-system services the core uses directly:
 * mutexes, condition variables, a monotonic clock, atomics and threads.
 * Everything else (sockets, loops, timers) goes through libuv.
 *
 * Prefix zl_plat_ marks functions whose body is platform specific.
 */
#ifndef ZL_PLATFORM_H
#define ZL_PLATFORM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef pthread_mutex_t zl_mutex_t;
typedef pthread_cond_t zl_cond_t;

void zl_mutex_init(zl_mutex_t *m);
void zl_mutex_fini(zl_mutex_t *m);
static inline void zl_mutex_lock(zl_mutex_t *m) { pthread_mutex_lock(m); }
static inline void zl_mutex_unlock(zl_mutex_t *m) { pthread_mutex_unlock(m); }

/* Condition variables wait against the monotonic clock. */
void zl_cond_init(zl_cond_t *c);
void zl_cond_fini(zl_cond_t *c);
static inline void zl_cond_broadcast(zl_cond_t *c) { pthread_cond_broadcast(c); }
static inline void zl_cond_signal(zl_cond_t *c) { pthread_cond_signal(c); }
/* Waits until signalled or the absolute monotonic deadline (ns) passes.
 * deadline_ns < 0 waits without limit. Spurious returns are possible. */
void zl_cond_wait_until(zl_cond_t *c, zl_mutex_t *m, int64_t deadline_ns);

/* Wait-on-address: sleeps while *addr == seen, until zl_plat_wake_all on
 * addr, the absolute monotonic deadline (ns, < 0 = none) or a spurious
 * return. A wake that changed *addr first can never be missed (the kernel
 * compares *addr under its own lock). Linux futex; elsewhere a fallback. */
void zl_plat_wait_change(_Atomic uint32_t *addr, uint32_t seen, int64_t deadline_ns);
void zl_plat_wake_all(_Atomic uint32_t *addr);

/* Monotonic clock in nanoseconds. */
int64_t zl_clock_ns(void);

/* A zeroed allocation of size bytes for objects made per record or per
 * request: glibc's calloc bypasses the per-thread cache, and gcc turns a
 * malloc followed by a memset into calloc, so the zeroing happens in
 * another function. NULL on ENOMEM. */
void *zl_zalloc(size_t size);

/* Converts a millisecond timeout snapshot (-1 infinite, 0 immediate) into an
 * absolute deadline for zl_cond_wait_until (-1 = none). */
static inline int64_t zl_deadline_from_ms(int timeout_ms)
{
    if (timeout_ms < 0)
        return -1;
    return zl_clock_ns() + (int64_t)timeout_ms * 1000000;
}

static inline bool zl_deadline_passed(int64_t deadline_ns)
{
    return deadline_ns >= 0 && zl_clock_ns() >= deadline_ns;
}

/* Fills buf with n cryptographically unpredictable bytes when the platform
 * offers them, else with a seeded PRNG. Used for routing ids. */
void zl_plat_random(void *buf, size_t n);

/* A pause hint for spin loops. */
static inline void zl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* A bounded spin (low-latency mode, ZLINK_SPIN_US): zl_spin_begin starts
 * a budget of ns nanoseconds, zl_spin_step is one turn of the caller's
 * polling loop and returns false once the budget is spent. It reads the
 * clock every 16 turns and, past the first 256, yields the CPU on those
 * turns: with as many busy threads as cores, the thread being waited for
 * may need this core to make the progress the spinner is polling for. */
typedef struct zl_spin {
    int64_t end;
    unsigned turns;
} zl_spin_t;

static inline void zl_spin_begin(zl_spin_t *sp, int64_t ns)
{
    sp->end = zl_clock_ns() + ns;
    sp->turns = 0;
}

bool zl_spin_step(zl_spin_t *sp);

#define ZL_UNUSED(x) ((void)(x))
#define ZL_LIKELY(x) __builtin_expect(!!(x), 1)
#define ZL_UNLIKELY(x) __builtin_expect(!!(x), 0)

#endif /* ZL_PLATFORM_H */
