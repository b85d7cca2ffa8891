/*
 * errors.h — the thread-local errno of the public API and the helpers every
 * facade function uses to fail with a typed result plus errno.
 *
 * Precedence (core-contract §2): argument > handle/lifecycle > target >
 * capacity > transport/internal. Facade functions check in that order.
 */
#ifndef ZL_ERRORS_H
#define ZL_ERRORS_H

#include "zlink.h"

/* Sets the calling thread's ZLink errno (read by zlink_errno()). */
void zl_set_errno(int e);
/* The calling thread's ZLink errno. */
int zl_get_errno(void);

/* Each helper sets errno to e and returns the result of its family that the
 * errno maps to: the family's ZLINK_<F>_ERRNO_MAP row in zlink.h, or its
 * INTERNAL result when e has no row. Any thread; no locks. */
zlink_submit_result_t zl_submit_fail(int e);
zlink_recv_result_t zl_recv_fail(int e);
zlink_config_result_t zl_config_fail(int e);
zlink_close_result_t zl_close_fail(int e);
zlink_bind_result_t zl_bind_fail(int e);
zlink_connect_result_t zl_connect_fail(int e);

/* The request result an error reply's errno maps to (ZLINK_REQUEST_ERRNO_MAP;
 * unlisted: ZLINK_REQUEST_INTERNAL). Leaves errno alone: the errno came from
 * the peer and belongs to the completion record, not to this thread. */
zlink_request_result_t zl_request_result_of(int e);

#endif /* ZL_ERRORS_H */
