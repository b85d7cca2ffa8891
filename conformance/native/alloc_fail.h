/* alloc_fail.h — test-only: allocation failure on demand, for PL-23
 * (zlink_poller_new fails with NULL/ENOMEM when allocation fails) in the
 * runners whose language cannot exhaust memory on purpose: Java
 * (conformance/java/native/pl_native.c), .NET (conformance/dotnet/Runner/
 * alloc_fail_preload.c) and Node (conformance/node/preload.c). Each is an
 * LD_PRELOAD library of a child process and includes this header once; it
 * keeps only the way its runtime arms and disarms the failure.
 *
 * The header defines the process's malloc, calloc, realloc and aligned
 * allocators. While armed, a request fails with ENOMEM when it comes from
 * the armed thread AND from code inside libzlink.so.1 (its caller's
 * address lies in the library's executable segment), as on an exhausted
 * system; every other request is glibc's. af_disarm returns how many
 * failed, so a case can prove the failure reached the library.
 *
 * af_arm and af_disarm are async-signal-safe (the Node child arms from a
 * signal handler); af_locate is not, and af_refuse locates the library
 * itself on the armed thread when nobody did.
 */
#ifndef CONF_NATIVE_ALLOC_FAIL_H
#define CONF_NATIVE_ALLOC_FAIL_H

#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_int af_tid;     /* the thread whose requests fail; 0: none */
static atomic_uint af_failed; /* requests failed since af_arm */
static uintptr_t af_lo, af_hi; /* libzlink.so.1's code */

static int af_find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libzlink.so") == NULL)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) != 0) {
            af_lo = info->dlpi_addr + ph->p_vaddr;
            af_hi = af_lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* Finds libzlink.so.1's code: 0, or -1 when it is not loaded (yet). */
static int af_locate(void)
{
    if (af_hi == 0)
        dl_iterate_phdr(af_find_text, NULL);
    return af_hi != 0 ? 0 : -1;
}

/* Starts failing libzlink's requests on the calling thread. */
static void af_arm(void)
{
    atomic_store(&af_failed, 0);
    atomic_store(&af_tid, (int)syscall(SYS_gettid));
}

/* Ends it; the number of requests that failed. */
static unsigned af_disarm(void)
{
    atomic_store(&af_tid, 0);
    return atomic_load(&af_failed);
}

/* 1 (errno ENOMEM) when the request made from code at ret is to fail. */
static int af_refuse(void *ret)
{
    int tid = atomic_load_explicit(&af_tid, memory_order_relaxed);
    if (tid == 0 || tid != (int)syscall(SYS_gettid))
        return 0;
    if (af_locate() != 0)
        return 0;
    uintptr_t a = (uintptr_t)ret;
    if (a < af_lo || a >= af_hi)
        return 0;
    atomic_fetch_add(&af_failed, 1);
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t n)
{
    return af_refuse(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    return af_refuse(__builtin_return_address(0)) ? NULL : __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    return af_refuse(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

void *aligned_alloc(size_t al, size_t n)
{
    return af_refuse(__builtin_return_address(0)) ? NULL : __libc_memalign(al, n);
}

void *memalign(size_t al, size_t n)
{
    return af_refuse(__builtin_return_address(0)) ? NULL : __libc_memalign(al, n);
}

int posix_memalign(void **out, size_t al, size_t n)
{
    if (af_refuse(__builtin_return_address(0)))
        return ENOMEM;
    void *p = __libc_memalign(al, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

#endif
