/*
 * alloc_fail.c — allocation failure on demand, for the ENOMEM results of
 * the public API (conf.h). The runner defines malloc and calloc; as the
 * executable's symbols they come first in the dynamic symbol lookup, so
 * libzlink.so.1 (and everything else) calls these. They forward to the
 * next definition (the C library's, or a sanitizer's) unless the calling
 * thread is inside conf_alloc_fail_begin/end, where they fail like an
 * exhausted system. This needs nothing from the library: it is how an
 * application would see the system run out of memory.
 */
#include "conf.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

/* These run before a sanitizer runtime has initialised itself (its own
 * start-up allocates): they must not be instrumented. */
#if defined(__GNUC__)
#define NOT_INSTRUMENTED __attribute__((no_sanitize("address", "thread", "undefined")))
#else
#define NOT_INSTRUMENTED
#endif

typedef void *malloc_fn(size_t);
typedef void *calloc_fn(size_t, size_t);

static __thread int t_failing;
static __thread unsigned t_failed;
static __thread int t_resolving;

static malloc_fn *next_malloc;
static calloc_fn *next_calloc;

/* dlsym may allocate while the next functions are looked up; those few
 * early allocations come from here and are never freed (free() of them
 * would be wrong, and nothing frees them). */
static _Alignas(16) unsigned char boot_arena[4096];
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

NOT_INSTRUMENTED static void resolve(void)
{
    if (next_malloc != NULL && next_calloc != NULL)
        return;
    t_resolving = 1;
    next_malloc = (malloc_fn *)dlsym(RTLD_NEXT, "malloc");
    next_calloc = (calloc_fn *)dlsym(RTLD_NEXT, "calloc");
    t_resolving = 0;
}

NOT_INSTRUMENTED void *malloc(size_t size)
{
    if (t_failing) {
        t_failed++;
        errno = ENOMEM;
        return NULL;
    }
    if (t_resolving)
        return boot_alloc(size);
    resolve();
    return next_malloc(size);
}

NOT_INSTRUMENTED void *calloc(size_t n, size_t size)
{
    if (t_failing) {
        t_failed++;
        errno = ENOMEM;
        return NULL;
    }
    if (t_resolving)
        return size != 0 && n > ((size_t)-1) / size ? NULL : boot_alloc(n * size);
    resolve();
    return next_calloc(n, size);
}

void conf_alloc_fail_begin(void)
{
    resolve();
    t_failed = 0;
    t_failing = 1;
}

unsigned conf_alloc_fail_end(void)
{
    t_failing = 0;
    return t_failed;
}
