/*
 * alloc_fail.c — allocation failure on demand, for the ENOMEM results of
 * the public API (conf.h). The mechanism is core's test allocator front
 * (core/tests/zltest_alloc_fail.h, linked into the runner): it replaces
 * malloc and its relatives in the executable, so libzlink.so.1 (and
 * everything else) calls it, and it fails requests of the calling thread
 * inside a window like an exhausted system. This needs nothing from the
 * library: it is how an application would see the system run out of
 * memory.
 */
#include "conf.h"

#include "zltest_alloc_fail.h"

#include <stddef.h>

void conf_alloc_fail_begin(void)
{
    zt_alloc_fail_begin(NULL); /* every request of this thread */
}

unsigned conf_alloc_fail_end(void)
{
    return zt_alloc_fail_end();
}
