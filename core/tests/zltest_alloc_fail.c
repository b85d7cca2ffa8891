/*
 * zltest_alloc_fail.c — the allocator front of zltest_alloc_fail.h.
 *
 * Threads and state: the rule and the counters are process-wide, written by
 * the thread that opens and closes the window and read by every allocating
 * thread through __atomic builtins (the window is armed with a release
 * store after the rule is written). Which thread opened the window is a
 * thread-local mark. Nothing here locks or allocates. The largest matching
 * request is kept with a compare-and-swap loop. A thread prefix is copied
 * into a static buffer by begin; a thread's name is read with the prctl
 * system call (no libc wrapper, no allocation) only when the rule has one.
 *
 * These functions also run before a sanitizer runtime has initialised
 * itself (its start-up allocates) and inside it: they are not
 * instrumented, and while dlsym looks up the next definitions (it may
 * allocate) requests are served from a small static arena that is never
 * freed.
 */
#include "zltest_alloc_fail.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__GNUC__)
#define NOT_INSTRUMENTED __attribute__((no_sanitize("address", "thread", "undefined")))
#else
#define NOT_INSTRUMENTED
#endif

typedef void *malloc_fn(size_t);
typedef void *calloc_fn(size_t, size_t);
typedef void *realloc_fn(void *, size_t);
typedef int posix_memalign_fn(void **, size_t, size_t);
typedef void *aligned_alloc_fn(size_t, size_t);

static malloc_fn *next_malloc;
static calloc_fn *next_calloc;
static realloc_fn *next_realloc;
static posix_memalign_fn *next_posix_memalign;
static aligned_alloc_fn *next_aligned_alloc;

static __thread int t_resolving; /* inside dlsym: serve from the arena */
static __thread int t_owner;     /* this thread opened the window */

static zt_alloc_rule_t g_rule;
static int g_armed;
static unsigned g_matched;
static unsigned g_failed;
static size_t g_largest;
static char g_prefix[16]; /* g_rule.thread_prefix points here, or is NULL */

static _Alignas(16) unsigned char boot_arena[8192];
static size_t boot_used;

NOT_INSTRUMENTED static void *boot_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size > sizeof boot_arena - boot_used)
        return NULL;
    void *p = boot_arena + boot_used;
    boot_used += size;
    return p; /* static storage: already zero */
}

NOT_INSTRUMENTED static int from_arena(const void *p)
{
    const unsigned char *b = p;
    return b >= boot_arena && b < boot_arena + sizeof boot_arena;
}

NOT_INSTRUMENTED static void resolve(void)
{
    if (__atomic_load_n(&next_aligned_alloc, __ATOMIC_ACQUIRE) != NULL)
        return;
    t_resolving = 1;
    next_malloc = (malloc_fn *)dlsym(RTLD_NEXT, "malloc");
    next_calloc = (calloc_fn *)dlsym(RTLD_NEXT, "calloc");
    next_realloc = (realloc_fn *)dlsym(RTLD_NEXT, "realloc");
    next_posix_memalign = (posix_memalign_fn *)dlsym(RTLD_NEXT, "posix_memalign");
    __atomic_store_n(&next_aligned_alloc, (aligned_alloc_fn *)dlsym(RTLD_NEXT, "aligned_alloc"),
                     __ATOMIC_RELEASE);
    t_resolving = 0;
}

/* Whether the calling thread's name starts with g_rule.thread_prefix. */
NOT_INSTRUMENTED static int thread_matches(void)
{
    const char *want = g_rule.thread_prefix;
    if (want == NULL)
        return 1;
    char name[17] = {0};
    if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) != 0)
        return 0;
    for (size_t i = 0; want[i] != '\0'; i++)
        if (name[i] != want[i])
            return 0;
    return 1;
}

/* Whether a request of size bytes made through fn (a ZT_ALLOC_* bit)
 * fails now (counts it, and records its size, when it matches). */
NOT_INSTRUMENTED static int should_fail(size_t size, unsigned fn)
{
    if (size == 0 || !__atomic_load_n(&g_armed, __ATOMIC_ACQUIRE))
        return 0;
    if (!g_rule.all_threads && !t_owner)
        return 0;
    if (g_rule.fns != 0 && !(g_rule.fns & fn))
        return 0;
    if (size < g_rule.min_size || (g_rule.max_size != 0 && size > g_rule.max_size))
        return 0;
    if (!thread_matches())
        return 0;
    size_t cur = __atomic_load_n(&g_largest, __ATOMIC_RELAXED);
    while (size > cur && !__atomic_compare_exchange_n(&g_largest, &cur, size, 1,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    unsigned k = __atomic_fetch_add(&g_matched, 1, __ATOMIC_RELAXED);
    if (g_rule.watch_only)
        return 0;
    if (k < g_rule.skip)
        return 0;
    if (g_rule.fail != 0 && k - g_rule.skip >= g_rule.fail)
        return 0;
    __atomic_fetch_add(&g_failed, 1, __ATOMIC_RELAXED);
    return 1;
}

NOT_INSTRUMENTED void *malloc(size_t size)
{
    if (t_resolving)
        return boot_alloc(size);
    if (should_fail(size, ZT_ALLOC_MALLOC)) {
        errno = ENOMEM;
        return NULL;
    }
    resolve();
    return next_malloc(size);
}

NOT_INSTRUMENTED void *calloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    if (t_resolving)
        return boot_alloc(n * size);
    if (should_fail(n * size, ZT_ALLOC_CALLOC)) {
        errno = ENOMEM;
        return NULL;
    }
    resolve();
    return next_calloc(n, size);
}

NOT_INSTRUMENTED void *realloc(void *p, size_t size)
{
    if (t_resolving)
        return p == NULL ? boot_alloc(size) : NULL;
    if (p != NULL && from_arena(p))
        return NULL; /* arena blocks are never handed out after start-up */
    if (should_fail(size, ZT_ALLOC_REALLOC)) {
        errno = ENOMEM;
        return NULL; /* p stays valid, as realloc promises */
    }
    resolve();
    return next_realloc(p, size);
}

NOT_INSTRUMENTED int posix_memalign(void **out, size_t align, size_t size)
{
    if (should_fail(size, ZT_ALLOC_ALIGNED))
        return ENOMEM;
    resolve();
    return next_posix_memalign(out, align, size);
}

NOT_INSTRUMENTED void *aligned_alloc(size_t align, size_t size)
{
    if (should_fail(size, ZT_ALLOC_ALIGNED)) {
        errno = ENOMEM;
        return NULL;
    }
    resolve();
    return next_aligned_alloc(align, size);
}

void zt_alloc_fail_begin(const zt_alloc_rule_t *rule)
{
    static const zt_alloc_rule_t fail_all = {0, 0, 0, 0, 0, 0, NULL, 0};
    resolve();
    __atomic_store_n(&g_armed, 0, __ATOMIC_RELEASE);
    g_rule = rule != NULL ? *rule : fail_all;
    if (g_rule.thread_prefix != NULL) {
        size_t n = strnlen(g_rule.thread_prefix, sizeof g_prefix - 1);
        memcpy(g_prefix, g_rule.thread_prefix, n);
        g_prefix[n] = '\0';
        g_rule.thread_prefix = g_prefix;
    }
    __atomic_store_n(&g_matched, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_failed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_largest, 0, __ATOMIC_RELAXED);
    t_owner = 1;
    __atomic_store_n(&g_armed, 1, __ATOMIC_RELEASE);
}

unsigned zt_alloc_fail_end(void)
{
    __atomic_store_n(&g_armed, 0, __ATOMIC_RELEASE);
    t_owner = 0;
    return __atomic_load_n(&g_failed, __ATOMIC_RELAXED);
}

unsigned zt_alloc_matched(void)
{
    return __atomic_load_n(&g_matched, __ATOMIC_RELAXED);
}

unsigned zt_alloc_failed(void)
{
    return __atomic_load_n(&g_failed, __ATOMIC_RELAXED);
}

size_t zt_alloc_largest(void)
{
    return __atomic_load_n(&g_largest, __ATOMIC_RELAXED);
}
