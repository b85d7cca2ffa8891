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
#include "conformance/native/alloc_fail.h"

void zlink_conf_alloc_fail_begin(void)
{
    af_locate();
    af_arm();
}

unsigned zlink_conf_alloc_fail_end(void)
{
    return af_disarm();
}
