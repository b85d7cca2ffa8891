/*
 * zltest_alloc_fail.h — allocation failure on demand, for tests of what
 * ZLink does when the system runs out of memory.
 *
 * Design notes
 *  - zltest_alloc_fail.c defines malloc, calloc, realloc, posix_memalign
 *    and aligned_alloc in the test executable (//core:zltest_alloc_fail,
 *    linked with alwayslink). As the executable's symbols they win over the
 *    C library's and a sanitizer's: code linked into the executable calls
 *    them directly, shared libraries (libuv, libzlink.so.1) through the
 *    dynamic symbol lookup. Outside a window they forward to the next
 *    definition (dlsym RTLD_NEXT: the sanitizer's allocator under ASan or
 *    TSan, else the C library's), so the sanitizers keep every allocation
 *    in view, leak checking included. free is not replaced: a failed
 *    request allocated nothing.
 *  - A window (zt_alloc_fail_begin .. zt_alloc_fail_end) holds one rule:
 *    which requests fail, by size, by function (calloc only, say: the
 *    engine allocates a connection with calloc when it accepts one), by
 *    order (skip the first k matching ones, then fail m), and on which
 *    threads (the thread that opened the window, or every thread, for
 *    allocations an I/O thread makes; optionally only threads whose name
 *    starts with a prefix, "zlink/IO/" for ZLink's I/O threads, named by
 *    io.c). A failing request returns NULL with errno ENOMEM, as an
 *    exhausted system does. realloc(p, 0) and requests of size 0 never
 *    fail (they free, or ask for nothing).
 *  - A rule may also only watch (watch_only): nothing fails, matching
 *    requests are counted and the largest one is recorded
 *    (zt_alloc_largest), for tests that bound what ZLink reserves.
 *  - A thread's name is read with the prctl system call itself (no libc
 *    wrapper a sanitizer could intercept, no allocation), only while a
 *    window with a thread prefix is open.
 *  - One window at a time per process; begin and end belong to one thread.
 *    The counters may be read from any thread while a window is open.
 *  - Under the block pool of msg.c (off under ASan), small message
 *    payloads may come from a per-thread cache instead of malloc; rules
 *    aimed at message payloads therefore only see them under ASan. Rules
 *    aimed at ZLink's own structures (queue chunks, records, tables) see
 *    them in every build.
 */
#ifndef ZLTEST_ALLOC_FAIL_H
#define ZLTEST_ALLOC_FAIL_H

#include <stddef.h>

/* Functions a rule applies to (zt_alloc_rule_t.fns). */
enum {
    ZT_ALLOC_MALLOC = 1u << 0,
    ZT_ALLOC_CALLOC = 1u << 1,
    ZT_ALLOC_REALLOC = 1u << 2,
    ZT_ALLOC_ALIGNED = 1u << 3, /* posix_memalign and aligned_alloc */
};

typedef struct zt_alloc_rule {
    size_t min_size;  /* fail only requests of at least this many bytes */
    size_t max_size;  /* ... and at most this many (0: no upper bound) */
    unsigned skip;    /* let the first `skip` matching requests through */
    unsigned fail;    /* then fail this many (0: every later one) */
    int all_threads;  /* 0: only the thread that called begin; 1: every thread */
    unsigned fns;     /* ZT_ALLOC_* bits: only these functions (0: all) */
    const char *thread_prefix; /* only threads whose name starts with this
                                * (copied, at most 15 characters; NULL: any) */
    int watch_only;   /* 1: fail nothing, only count and record the largest */
} zt_alloc_rule_t;

/* Opens a window with rule (copied; NULL: fail every request of the
 * calling thread). Counters start at 0. */
void zt_alloc_fail_begin(const zt_alloc_rule_t *rule);
/* Closes the window; returns how many requests failed in it. */
unsigned zt_alloc_fail_end(void);
/* While a window is open: requests that matched the rule so far (failed
 * or let through), and requests that failed. Any thread. */
unsigned zt_alloc_matched(void);
unsigned zt_alloc_failed(void);
/* While a window is open: the largest request (bytes; calloc: n * size)
 * that matched the rule so far, failed or let through; 0 if none. Any
 * thread. */
size_t zt_alloc_largest(void);

/* A rule failing every request of exactly size bytes on this thread. */
static inline zt_alloc_rule_t zt_alloc_size(size_t size)
{
    zt_alloc_rule_t r = {size, size, 0, 0, 0, 0, NULL, 0};
    return r;
}

/* A rule matching every request of the threads whose name starts with
 * prefix ("zlink/IO/": ZLink's I/O threads); add fns, skip, fail or
 * watch_only as needed. */
static inline zt_alloc_rule_t zt_alloc_threads(const char *prefix)
{
    zt_alloc_rule_t r = {0, 0, 0, 0, 1, 0, prefix, 0};
    return r;
}

#endif /* ZLTEST_ALLOC_FAIL_H */
