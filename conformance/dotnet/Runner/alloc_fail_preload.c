/*
 * alloc_fail_preload.c — a test-only LD_PRELOAD library for the .NET
 * runner's PL-23 (zlink_poller_new fails with NULL/ENOMEM when the system
 * is out of memory), which managed code cannot arrange on its own.
 *
 * It replaces malloc, calloc, realloc and the aligned allocators in the
 * process. Between zlink_conf_alloc_fail_begin() and
 * zlink_conf_alloc_fail_end(), every request that code inside
 * libzlink.so.1 makes on the thread that called begin fails with ENOMEM, as
 * an exhausted system would; requests of every other thread, and of the
 * .NET runtime on that thread, are served by glibc as usual. end() returns
 * how many requests failed, so the case can prove the failure reached the
 * library. The PL-23 case (PlMore.cs) calls both through NativeLibrary.
 */
#define _GNU_SOURCE
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

static atomic_int armed_tid;
static atomic_uint refused;
static uintptr_t text_lo, text_hi;

/* The executable segment of libzlink.so.1 (found once, when armed). */
static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libzlink.so") == NULL)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) != 0) {
            text_lo = info->dlpi_addr + ph->p_vaddr;
            text_hi = text_lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

void zlink_conf_alloc_fail_begin(void)
{
    if (text_hi == 0)
        dl_iterate_phdr(find_text, NULL);
    atomic_store(&refused, 0);
    atomic_store(&armed_tid, (int)syscall(SYS_gettid));
}

unsigned zlink_conf_alloc_fail_end(void)
{
    atomic_store(&armed_tid, 0);
    return atomic_load(&refused);
}

/* 1 (errno ENOMEM) when the request from return address ret is to fail. */
static int refuse(void *ret)
{
    int tid = atomic_load(&armed_tid);
    if (tid == 0 || tid != (int)syscall(SYS_gettid))
        return 0;
    uintptr_t a = (uintptr_t)ret;
    if (a < text_lo || a >= text_hi)
        return 0;
    atomic_fetch_add(&refused, 1);
    errno = ENOMEM;
    return 1;
}

void *malloc(size_t n)
{
    return refuse(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    return refuse(__builtin_return_address(0)) ? NULL : __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    return refuse(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

void *aligned_alloc(size_t al, size_t n)
{
    return refuse(__builtin_return_address(0)) ? NULL : __libc_memalign(al, n);
}

void *memalign(size_t al, size_t n)
{
    return refuse(__builtin_return_address(0)) ? NULL : __libc_memalign(al, n);
}

int posix_memalign(void **out, size_t al, size_t n)
{
    if (refuse(__builtin_return_address(0)))
        return ENOMEM;
    void *p = __libc_memalign(al, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}
