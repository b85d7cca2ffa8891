/*
 * errors.c — the thread-local ZLink errno and the errno -> typed result
 * mapping of every result family (core-contract §2, doc/errors.md).
 *
 * Design notes
 *  - One _Thread_local int per thread; no locks, no allocation.
 *  - Each zl_*_fail(e) stores e unchanged as the thread's errno and returns
 *    the family's result for it. An errno the family has no row for maps to
 *    the family's INTERNAL result; errno still tells the cause.
 *  - The tables below are the code form of doc/errors.md; change both
 *    together. ETERM maps to TERMINATED where a family has that row (submit,
 *    recv) and to INTERNAL elsewhere (the contract's flow setter and poller
 *    report a terminating context as INTERNAL/ETERM).
 *  - zl_get_errno() is the reader behind zlink_errno().
 */
#include "errors.h"

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

zlink_submit_result_t zl_submit_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    case EAGAIN:
    case ETIMEDOUT:
    case ENOBUFS:
        return ZLINK_SUBMIT_BACKPRESSURED;
    case ENOTCONN:
    case EHOSTUNREACH:
        return ZLINK_SUBMIT_NOT_CONNECTED;
    case ENOENT:
        return ZLINK_SUBMIT_NOT_FOUND;
    case ETERM:
    case ESHUTDOWN:
        return ZLINK_SUBMIT_TERMINATED;
    case EFAULT:
        return ZLINK_SUBMIT_INVALID_HANDLE;
    case EINVAL:
    case EMSGSIZE:
        return ZLINK_SUBMIT_INVALID_ARGUMENT;
    case ENOTSUP:
        return ZLINK_SUBMIT_NOT_SUPPORTED;
    case EBUSY:
    case ESTALE:
    case EALREADY:
        return ZLINK_SUBMIT_INVALID_STATE;
    case EDEADLK:
    case EPERM:
    case EMTHREAD:
        return ZLINK_SUBMIT_THREAD_VIOLATION;
    case ENOMEM:
        return ZLINK_SUBMIT_OUT_OF_MEMORY;
    case EOVERFLOW:
        return ZLINK_SUBMIT_SEQ_EXHAUSTED;
    case EACCES:
    case ECONNREFUSED:
    case EPROTOTYPE:
        return ZLINK_SUBMIT_NOT_ADMITTED;
    default:
        return ZLINK_SUBMIT_INTERNAL;
    }
}

zlink_recv_result_t zl_recv_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    case EAGAIN:
    case ETIMEDOUT:
        return ZLINK_RECV_NO_DATA;
    case EBUSY:
        return ZLINK_RECV_BUSY;
    case ETERM:
        return ZLINK_RECV_TERMINATED;
    case EFAULT:
        return ZLINK_RECV_INVALID_HANDLE;
    case ENOTSUP:
        return ZLINK_RECV_NOT_SUPPORTED;
    case ENOBUFS:
        return ZLINK_RECV_BUFFER_TOO_SMALL;
    case EINVAL:
    case ESTALE:
    case ESHUTDOWN:
        return ZLINK_RECV_INVALID_STATE;
    default:
        return ZLINK_RECV_INTERNAL;
    }
}

/* ZLINK_CONFIG_BUSY has no errno of its own (EBUSY means INVALID_STATE in
 * this family): code that detects two threads using one object at once sets
 * errno EBUSY with zl_set_errno() and returns ZLINK_CONFIG_BUSY itself. */
zlink_config_result_t zl_config_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    case EFAULT:
        return ZLINK_CONFIG_INVALID_HANDLE;
    case EINVAL:
    case EMSGSIZE:
        return ZLINK_CONFIG_INVALID_ARGUMENT;
    case ENOTSUP:
        return ZLINK_CONFIG_NOT_SUPPORTED;
    case EBUSY:
    case ESTALE:
    case EALREADY:
    case ESHUTDOWN:
    case ENOTCONN:
    case ETIMEDOUT:
    case EPROTO:
        return ZLINK_CONFIG_INVALID_STATE;
    case ENOENT:
        return ZLINK_CONFIG_NOT_FOUND;
    case EEXIST:
        return ZLINK_CONFIG_CONFLICT;
    case ENOBUFS:
        return ZLINK_CONFIG_BUFFER_TOO_SMALL;
    default: /* ENOMEM, ETERM, ... */
        return ZLINK_CONFIG_INTERNAL;
    }
}

zlink_close_result_t zl_close_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    case EBUSY:
    case EDEADLK:
        return ZLINK_CLOSE_BUSY;
    case ESHUTDOWN:
        return ZLINK_CLOSE_SHUTDOWN;
    case EFAULT:
    case ESTALE:
        return ZLINK_CLOSE_INVALID_HANDLE;
    default:
        return ZLINK_CLOSE_INTERNAL;
    }
}

zlink_bind_result_t zl_bind_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    case EINVAL:
    case ENAMETOOLONG:
    case ENODEV:
        return ZLINK_BIND_INVALID_ARGUMENT;
    case EADDRINUSE:
    case EADDRNOTAVAIL:
        return ZLINK_BIND_ADDR_IN_USE;
    case ENOTSUP:
    case EPROTONOSUPPORT:
        return ZLINK_BIND_NOT_SUPPORTED;
    case EFAULT:
    case ESTALE:
    case ESHUTDOWN:
        return ZLINK_BIND_INVALID_HANDLE;
    default:
        return ZLINK_BIND_INTERNAL;
    }
}

zlink_connect_result_t zl_connect_fail(int e)
{
    zl_set_errno(e);
    switch (e) {
    case EINVAL:
    case ENAMETOOLONG:
    case ENODEV:
        return ZLINK_CONNECT_INVALID_ARGUMENT;
    case ENOTSUP:
    case EPROTONOSUPPORT:
        return ZLINK_CONNECT_NOT_SUPPORTED;
    case EFAULT:
        return ZLINK_CONNECT_INVALID_HANDLE;
    case ENOENT:
        return ZLINK_CONNECT_NOT_FOUND;
    case EEXIST:
    case ESTALE:
    case EADDRINUSE:
        return ZLINK_CONNECT_CONFLICT;
    case EBUSY:
    case ESHUTDOWN:
        return ZLINK_CONNECT_BUSY;
    case EACCES:
        return ZLINK_CONNECT_AUTH_FAILED;
    default:
        return ZLINK_CONNECT_INTERNAL;
    }
}
