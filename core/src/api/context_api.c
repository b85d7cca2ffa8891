/*
 * context_api.c — the public zlink_ctx_* functions: argument and handle
 * checks, option tables, then the internals in ctx.c.
 *
 * Each public function enters the context's handle (zl_ctx_enter), runs
 * its body under c->lk where it touches fields, and leaves (zl_ctx_leave).
 * zlink_ctx_term shuts the handle at its end; the last call to leave frees
 * the context (ctx.h), so calls racing with term stay safe.
 */
#include "sock/ctx.h"
#include "engine/engine.h"
#include "util/errors.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

ZLINK_EXPORT void *zlink_ctx_new(void)
{
    zl_ctx_t *c = calloc(1, sizeof *c);
    if (c == NULL) {
        zl_set_errno(ENOMEM);
        return NULL;
    }
    zl_mutex_init(&c->lk);
    zl_inproc_ns_init(&c->inproc);
    zl_cond_init(&c->cv);
    c->io_threads = ZLINK_IO_THREADS_DFLT;
    c->max_sockets = ZLINK_MAX_SOCKETS_DFLT;
    c->max_msgsz = INT_MAX;
    c->blocky = 1;
    c->profile = ZLINK_PROFILE_BALANCED;
    c->auto_hwm = 1;
    c->recalc_debounce_ms = 3000;
    c->sched_policy = -1;
    c->priority = -1;
    void *handle = NULL;
    if (zl_handle_new(ZL_HANDLE_CTX, c, &handle, &c->hslot) != 0) {
        c->hslot = NULL;
        zl_ctx_free(c);
        zl_set_errno(ENOMEM);
        return NULL;
    }
    return handle;
}

static bool is_uint64_option(int opt)
{
    return opt == ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES || opt == ZLINK_RUNTIME_MEMORY_LIMIT_BYTES ||
           opt == ZLINK_CORE_BUDGET_BYTES;
}

/* The bodies below run inside the context's handle (the public functions
 * at the end of each block enter and leave it). */
static zlink_config_result_t ctx_set(zl_ctx_t *c, int option, int value)
{
    if (is_uint64_option(option))
        return zl_config_fail(EINVAL); /* byte options only through set_data */
    int rc = 0;
    zl_mutex_lock(&c->lk);
    switch (option) {
    case ZLINK_IO_THREADS:
        if (value < 1 || value > 64) rc = EINVAL;
        else if (c->nios > 0) rc = EBUSY; /* threads already started */
        else c->io_threads = value;
        break;
    case ZLINK_MAX_SOCKETS:
        if (value < 1) rc = EINVAL; else c->max_sockets = value;
        break;
    case ZLINK_THREAD_SCHED_POLICY: c->sched_policy = value; break;
    case ZLINK_MAX_MSGSZ: if (value < 0) rc = EINVAL; else c->max_msgsz = value; break;
    case ZLINK_CTX_OPT_BLOCKY: if (value != 0 && value != 1) rc = EINVAL; else c->blocky = value; break;
    case ZLINK_AUTO_HWM_ENABLE: if (value != 0 && value != 1) rc = EINVAL; else c->auto_hwm = value; break;
    case ZLINK_AUTO_HWM_RECALC_DEBOUNCE_MS:
        if (value < 0) rc = EINVAL; else c->recalc_debounce_ms = value;
        break;
    case ZLINK_PROFILE:
        if (value < ZLINK_PROFILE_COMPACT || value > ZLINK_PROFILE_THROUGHPUT) rc = EINVAL;
        else c->profile = value;
        break;
    case ZLINK_THREAD_AFFINITY_CPU_ADD:
    case ZLINK_THREAD_AFFINITY_CPU_REMOVE:
        if (value < 0) rc = EINVAL;
        break;
    case ZLINK_SPIN_US:
        if (value < 0 || value > ZLINK_SPIN_US_MAX) rc = EINVAL;
        else atomic_store(&c->spin_us, value);
        break;
    case ZLINK_IO_SPIN_US:
        if (value < 0 || value > ZLINK_SPIN_US_MAX) {
            rc = EINVAL;
        } else {
            c->io_spin_us = value;
            for (int i = 0; i < c->nios; i++)
                zl_io_set_spin(c->ios[i], (int64_t)value * 1000);
        }
        break;
    default:
        rc = EINVAL; /* unknown, read-only (SOCKET_LIMIT, MSG_T_SIZE) or removed (18) */
        break;
    }
    zl_mutex_unlock(&c->lk);
    return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
}

ZLINK_EXPORT zlink_config_result_t zlink_ctx_set(void *ctx, int option, int value)
{
    zl_ctx_t *c;
    if (zl_ctx_enter(ctx, &c) != 0)
        return zl_config_fail(EFAULT);
    zlink_config_result_t r = ctx_set(c, option, value);
    zl_ctx_leave(c);
    return r;
}

static int ctx_get(zl_ctx_t *c, int option, zlink_config_result_t *result)
{
    int v = -1, rc = 0;
    zl_mutex_lock(&c->lk);
    switch (option) {
    case ZLINK_IO_THREADS: v = c->io_threads; break;
    case ZLINK_MAX_SOCKETS: v = c->max_sockets; break;
    case ZLINK_SOCKET_LIMIT: v = ZLINK_MAX_SOCKETS_DFLT; break;
    case ZLINK_THREAD_SCHED_POLICY: v = c->sched_policy; break;
    case ZLINK_MAX_MSGSZ: v = c->max_msgsz; break;
    case ZLINK_MSG_T_SIZE: v = (int)sizeof(zlink_msg_t); break;
    case ZLINK_CTX_OPT_BLOCKY: v = c->blocky; break;
    case ZLINK_AUTO_HWM_ENABLE: v = c->auto_hwm; break;
    case ZLINK_AUTO_HWM_RECALC_DEBOUNCE_MS: v = c->recalc_debounce_ms; break;
    case ZLINK_PROFILE: v = c->profile; break;
    case ZLINK_SPIN_US: v = atomic_load(&c->spin_us); break;
    case ZLINK_IO_SPIN_US: v = c->io_spin_us; break;
    default: rc = EINVAL; break;
    }
    zl_mutex_unlock(&c->lk);
    if (rc != 0) {
        zlink_config_result_t r = zl_config_fail(rc);
        if (result != NULL)
            *result = r;
        return -1;
    }
    if (result != NULL)
        *result = ZLINK_CONFIG_OK;
    return v;
}

ZLINK_EXPORT int zlink_ctx_get(void *ctx, int option, zlink_config_result_t *result)
{
    zl_ctx_t *c;
    if (zl_ctx_enter(ctx, &c) != 0) {
        zlink_config_result_t r = zl_config_fail(EFAULT);
        if (result != NULL)
            *result = r;
        return -1;
    }
    int v = ctx_get(c, option, result);
    zl_ctx_leave(c);
    return v;
}

static zlink_config_result_t ctx_set_data(zl_ctx_t *c, int option, const void *data,
                                          size_t size)
{
    if (data == NULL)
        return zl_config_fail(EINVAL);
    if (option == ZLINK_THREAD_NAME_PREFIX) {
        if (size == 0 || size > sizeof c->thread_name_prefix)
            return zl_config_fail(EINVAL);
        const char *p = data;
        if (memchr(p, '\0', size) == NULL && size == sizeof c->thread_name_prefix)
            return zl_config_fail(EINVAL); /* 16 bytes must include the NUL */
        zl_mutex_lock(&c->lk);
        memset(c->thread_name_prefix, 0, sizeof c->thread_name_prefix);
        memcpy(c->thread_name_prefix, p, size);
        c->thread_name_prefix[sizeof c->thread_name_prefix - 1] = '\0';
        zl_mutex_unlock(&c->lk);
        return ZLINK_CONFIG_OK;
    }
    if (!is_uint64_option(option) || size != 8)
        return zl_config_fail(EINVAL);
    uint64_t v;
    memcpy(&v, data, 8);
    zl_mutex_lock(&c->lk);
    if (option == ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES)
        c->auto_hwm_memory_limit = v;
    else if (option == ZLINK_RUNTIME_MEMORY_LIMIT_BYTES)
        c->runtime_memory_limit = v;
    else
        c->core_budget = v;
    zl_mutex_unlock(&c->lk);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_ctx_set_data(void *ctx, int option, const void *data,
                                                      size_t size)
{
    zl_ctx_t *c;
    if (zl_ctx_enter(ctx, &c) != 0)
        return zl_config_fail(EFAULT);
    zlink_config_result_t r = ctx_set_data(c, option, data, size);
    zl_ctx_leave(c);
    return r;
}

static zlink_config_result_t ctx_get_data(zl_ctx_t *c, int option, void *data, size_t *size)
{
    if (data == NULL || size == NULL)
        return zl_config_fail(EINVAL);
    if (option == ZLINK_THREAD_NAME_PREFIX) {
        zl_mutex_lock(&c->lk);
        size_t len = strlen(c->thread_name_prefix) + 1;
        int rc = 0;
        if (*size < len)
            rc = ENOBUFS;
        else
            memcpy(data, c->thread_name_prefix, len);
        zl_mutex_unlock(&c->lk);
        *size = len;
        return rc == 0 ? ZLINK_CONFIG_OK : zl_config_fail(rc);
    }
    if (!is_uint64_option(option))
        return zl_config_fail(EINVAL);
    if (*size != 8) {
        *size = 8;
        return zl_config_fail(EINVAL);
    }
    zl_mutex_lock(&c->lk);
    uint64_t v = option == ZLINK_AUTO_HWM_MEMORY_LIMIT_BYTES ? c->auto_hwm_memory_limit
                 : option == ZLINK_RUNTIME_MEMORY_LIMIT_BYTES ? c->runtime_memory_limit
                                                              : c->core_budget;
    zl_mutex_unlock(&c->lk);
    memcpy(data, &v, 8);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_ctx_get_data(void *ctx, int option, void *data,
                                                      size_t *size)
{
    zl_ctx_t *c;
    if (zl_ctx_enter(ctx, &c) != 0)
        return zl_config_fail(EFAULT);
    zlink_config_result_t r = ctx_get_data(c, option, data, size);
    zl_ctx_leave(c);
    return r;
}

ZLINK_EXPORT zlink_close_result_t zlink_ctx_shutdown(void *ctx)
{
    zl_ctx_t *c;
    if (zl_ctx_enter(ctx, &c) != 0)
        return zl_close_fail(EFAULT);
    zl_ctx_shutdown(c);
    zl_ctx_leave(c);
    return ZLINK_CLOSE_OK;
}

ZLINK_EXPORT zlink_close_result_t zlink_ctx_term(void *ctx)
{
    zl_ctx_t *c;
    if (zl_ctx_enter(ctx, &c) != 0)
        return zl_close_fail(EFAULT);
    int rc = zl_ctx_term(c);
    if (rc != 0) {
        zl_ctx_leave(c);
        return zl_close_fail(rc);
    }
    /* Later calls with this handle get EFAULT; the last call still inside
     * (normally this one) frees the context. */
    zl_handle_shut(c->hslot);
    zl_ctx_leave(c);
    return ZLINK_CLOSE_OK;
}
