/*
 * errors.c — the thread-local ZLink errno and the errno -> typed result
 * mapping of every result family (core-contract §2, doc/errors.md).
 *
 * Design notes
 *  - One _Thread_local int per thread; no locks, no allocation.
 *  - Each zl_*_fail(e) stores e unchanged as the thread's errno and returns
 *    the family's result for it. An errno the family has no row for maps to
 *    the family's INTERNAL result; errno still tells the cause.
 *  - The mapping is not written here: each helper is a switch generated
 *    from its family's ZLINK_<F>_ERRNO_MAP table in zlink.h (one case per
 *    row, so an errno listed twice in a family does not compile), with the
 *    family's fallback, the INTERNAL result named in ZLINK_RESULT_FAMILIES,
 *    as the default. doc/errors.md explains the rows. ETERM maps to
 *    TERMINATED where a family has that row (submit, request, recv) and to
 *    INTERNAL elsewhere (the contract's flow setter and poller report a
 *    terminating context as INTERNAL/ETERM).
 *  - zl_get_errno() is the reader behind zlink_errno().
 */
#include "util/errors.h"

static _Thread_local int zl_errno_value;

/* Any thread; sets only the caller's value. */
void zl_set_errno(int e)
{
    zl_errno_value = e;
}

/* Any thread; reads only the caller's value. Called by zlink_errno(). */
int zl_get_errno(void)
{
    return zl_errno_value;
}

/* One case of a generated switch: a row X(errno, result) of an errno map. */
#define ZL_ERRNO_CASE(err, result) \
    case err:                      \
        return result;

/* Any thread; no locks. Called by every submit entry point on failure. */
zlink_submit_result_t zl_submit_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    ZLINK_SUBMIT_ERRNO_MAP(ZL_ERRNO_CASE)
    default:
        return ZLINK_SUBMIT_INTERNAL;
    }
}

/* Any thread; no locks; does not touch errno. Called by request.c (under
 * the socket's lock) for the errno part of an error reply. */
zlink_request_result_t zl_request_result_of(int e)
{
    switch (e) {
    ZLINK_REQUEST_ERRNO_MAP(ZL_ERRNO_CASE)
    default:
        return ZLINK_REQUEST_INTERNAL;
    }
}

/* Any thread; no locks. */
zlink_recv_result_t zl_recv_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    ZLINK_RECV_ERRNO_MAP(ZL_ERRNO_CASE)
    default:
        return ZLINK_RECV_INTERNAL;
    }
}

/* Any thread; no locks. ZLINK_CONFIG_BUSY has no errno of its own (EBUSY
 * means INVALID_STATE in this family): code that detects two threads using
 * one object at once sets errno EBUSY with zl_set_errno() and returns
 * ZLINK_CONFIG_BUSY itself. */
zlink_config_result_t zl_config_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    ZLINK_CONFIG_ERRNO_MAP(ZL_ERRNO_CASE)
    default: /* ENOMEM, ETERM, ... */
        return ZLINK_CONFIG_INTERNAL;
    }
}

/* Any thread; no locks. */
zlink_close_result_t zl_close_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    ZLINK_CLOSE_ERRNO_MAP(ZL_ERRNO_CASE)
    default:
        return ZLINK_CLOSE_INTERNAL;
    }
}

/* Any thread; no locks. */
zlink_bind_result_t zl_bind_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    ZLINK_BIND_ERRNO_MAP(ZL_ERRNO_CASE)
    default:
        return ZLINK_BIND_INTERNAL;
    }
}

/* Any thread; no locks. */
zlink_connect_result_t zl_connect_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    ZLINK_CONNECT_ERRNO_MAP(ZL_ERRNO_CASE)
    default:
        return ZLINK_CONNECT_INTERNAL;
    }
}
