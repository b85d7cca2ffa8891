/*
 * timer_api.c — zlink_timer_*: a timer handle's validation and results;
 * the timer itself is poll/timer.c.
 *
 * A timer handle is entered for the length of each call (zl_timer_enter),
 * so zlink_timer_destroy is refused (CLOSE_BUSY) while a call is inside or
 * a poller holds the timer.
 */
#include "poll/timer.h"
#include "util/errors.h"
#include "util/handle.h"

ZLINK_EXPORT void *zlink_timer_new(void)
{
    zl_timer_t *t = zl_timer_new();
    if (t == NULL) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    void *handle = NULL;
    zl_hslot_t *slot;
    if (zl_handle_new(ZL_HANDLE_TIMER, t, &handle, &slot) != 0) {
        zl_timer_free(t);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    return handle;
}

ZLINK_EXPORT zlink_close_result_t zlink_timer_destroy(void **timer_p)
{
    if (timer_p == NULL)
        return zl_close_fail(EFAULT);
    void *obj;
    zl_hslot_t *slot;
    int rc = zl_handle_close(*timer_p, ZL_HANDLE_TIMER, &obj, &slot);
    if (rc != 0)
        /* EBUSY: a call is inside or a poller holds the timer. */
        return zl_close_fail(rc == EBUSY ? EBUSY : EFAULT);
    zl_timer_free(obj);
    zl_handle_release(slot);
    *timer_p = NULL;
    return ZLINK_CLOSE_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_timer_start(void *timer, uint64_t interval_ns,
                                                     uint64_t repeat)
{
    if (interval_ns == 0)
        return zl_config_fail(EINVAL);
    zl_timer_t *t;
    zl_hslot_t *slot;
    if (zl_timer_enter(timer, &t, &slot) != 0)
        return zl_config_fail(EFAULT);
    zl_timer_start(t, interval_ns, repeat);
    zl_handle_leave(slot);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_timer_stop(void *timer)
{
    zl_timer_t *t;
    zl_hslot_t *slot;
    if (zl_timer_enter(timer, &t, &slot) != 0)
        return zl_config_fail(EFAULT);
    zl_timer_stop(t);
    zl_handle_leave(slot);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_recv_result_t zlink_timer_recv(void *timer, uint64_t *count,
                                                  zlink_recv_flags_t flags)
{
    if (count == NULL || (flags != ZLINK_RECV_FLAGS_NONE && flags != ZLINK_RECV_FLAGS_DONTWAIT))
        return zl_recv_fail(EINVAL);
    zl_timer_t *t;
    zl_hslot_t *slot;
    if (zl_timer_enter(timer, &t, &slot) != 0)
        return zl_recv_fail(EFAULT);
    int rc = zl_timer_recv(t, count, (int)flags);
    zl_handle_leave(slot);
    return rc == 0 ? ZLINK_RECV_OK : zl_recv_fail(rc);
}
