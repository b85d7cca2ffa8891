/*
 * monitor_api.c — the public socket monitor functions. Arguments are
 * checked first, then the handle (core-contract §2 precedence); the work
 * is in monitor.c.
 *
 * Handles: a monitor handle is a handle-table value (handle.h). Receive
 * and status enter it for the length of the call; close takes its close
 * gate, so it fails with CLOSE_BUSY/EBUSY while another call is inside
 * (the contract leaves receive racing close to the caller; this makes the
 * race harmless). A closed monitor's handle, like any other non-monitor
 * value, is INVALID_HANDLE/EFAULT.
 */
#include "sock/monitor.h"
#include "util/errors.h"
#include "util/handle.h"

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
    void *handle = NULL;
    rc = zl_monitor_open(s, cfg->events, cfg->monitor_hwm_bytes, &m);
    if (rc == 0) {
        zl_hslot_t *slot;
        rc = zl_handle_new(ZL_HANDLE_MONITOR, m, &handle, &slot);
        if (rc != 0)
            zl_monitor_close(m); /* still inside the socket's gate */
    }
    zl_socket_leave(s);
    if (rc != 0) {
        zl_set_errno(rc);
        return NULL;
    }
    return handle;
}

ZLINK_EXPORT zlink_recv_result_t zlink_socket_monitor_recv(void *monitor,
                                                           zlink_monitor_event_t *ev,
                                                           zlink_recv_flags_t flags)
{
    if (ev == NULL || ((int)flags & ~ZLINK_RECV_FLAGS_DONTWAIT) != 0)
        return zl_recv_fail(EINVAL);
    void *obj;
    zl_hslot_t *slot;
    if (zl_handle_enter(monitor, ZL_HANDLE_MONITOR, &obj, &slot) != 0)
        return zl_recv_fail(EFAULT);
    int rc = zl_monitor_recv(obj, ev, (int)flags);
    zl_handle_leave(slot);
    return rc == 0 ? ZLINK_RECV_OK : zl_recv_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_monitor_status(void *monitor, zlink_monitor_status_t *st)
{
    if (st == NULL)
        return zl_config_fail(EINVAL);
    void *obj;
    zl_hslot_t *slot;
    if (zl_handle_enter(monitor, ZL_HANDLE_MONITOR, &obj, &slot) != 0)
        return zl_config_fail(EFAULT);
    zl_monitor_status(obj, st);
    zl_handle_leave(slot);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_close_result_t zlink_monitor_close(void **monitor)
{
    if (monitor == NULL)
        return zl_close_fail(EFAULT);
    void *obj;
    zl_hslot_t *slot;
    int rc = zl_handle_close(*monitor, ZL_HANDLE_MONITOR, &obj, &slot);
    if (rc != 0)
        return zl_close_fail(rc == EBUSY ? EBUSY : EFAULT);
    zl_monitor_close(obj);
    zl_handle_release(slot);
    *monitor = NULL;
    return ZLINK_CLOSE_OK;
}
