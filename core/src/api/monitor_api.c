/*
 * monitor_api.c — the public socket monitor functions. Arguments are
 * checked first, then the handle (core-contract §2 precedence); the work
 * is in monitor.c.
 */
#include "util/errors.h"
#include "sock/monitor.h"

#include <string.h>

ZLINK_EXPORT void *zlink_socket_monitor_open(void *socket, const zlink_monitor_config_t *cfg)
{
    if (cfg == NULL || cfg->reserved != 0 || (cfg->events & ~(uint32_t)ZLINK_EVENT_ALL) != 0) {
        zl_set_errno(EINVAL);
        return NULL;
    }
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0) {
        zl_set_errno(rc);
        return NULL;
    }
    zl_monitor_t *m = NULL;
    rc = zl_monitor_open(s, cfg->events, cfg->monitor_hwm_bytes, &m);
    zl_socket_leave(s);
    if (rc != 0) {
        zl_set_errno(rc);
        return NULL;
    }
    return m;
}

ZLINK_EXPORT zlink_recv_result_t zlink_socket_monitor_recv(void *monitor,
                                                           zlink_monitor_event_t *ev,
                                                           zlink_recv_flags_t flags)
{
    if (ev == NULL || ((int)flags & ~ZLINK_RECV_FLAGS_DONTWAIT) != 0)
        return zl_recv_fail(EINVAL);
    zl_monitor_t *m = zl_monitor_check(monitor);
    if (m == NULL)
        return zl_recv_fail(EFAULT);
    int rc = zl_monitor_recv(m, ev, (int)flags);
    return rc == 0 ? ZLINK_RECV_OK : zl_recv_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_monitor_status(void *monitor, zlink_monitor_status_t *st)
{
    if (st == NULL)
        return zl_config_fail(EINVAL);
    zl_monitor_t *m = zl_monitor_check(monitor);
    if (m == NULL)
        return zl_config_fail(EFAULT);
    zl_monitor_status(m, st);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_close_result_t zlink_monitor_close(void **monitor)
{
    if (monitor == NULL)
        return zl_close_fail(EFAULT);
    zl_monitor_t *m = zl_monitor_check(*monitor);
    if (m == NULL)
        return zl_close_fail(EFAULT);
    zl_monitor_close(m);
    *monitor = NULL;
    return ZLINK_CLOSE_OK;
}
