/*
 * msg_api.c — the public zlink_msg_* functions and zlink_multipart_close.
 *
 * Design notes
 *  - A thin facade over msg.h/msg.c: check arguments, check the message tag,
 *    then act. Every config-result function returns ZLINK_CONFIG_OK (0) or a
 *    failure from zl_config_fail(), which also sets the thread's errno.
 *  - Check order follows the precedence rule of core-contract §2: argument
 *    errors (EINVAL) before handle errors (a NULL or uninitialized message,
 *    EFAULT). The message itself is the "handle" of these calls.
 *  - "Uninitialized" means the tag is not ZL_MSG_TAG. close and a failed
 *    init leave the tag cleared, so a second close reports EFAULT instead of
 *    freeing twice.
 *  - Initializing an already initialized message overwrites it without
 *    releasing it (the old payload leaks); use close or move for that.
 *  - No locks: a message belongs to one thread at a time; the shared content
 *    is reference counted with atomics (msg.c).
 */
#include "util/errors.h"
#include "msg/msg.h"

#include <stdlib.h>

ZLINK_EXPORT zlink_config_result_t zlink_msg_init(zlink_msg_t *msg)
{
    if (msg == NULL)
        return zl_config_fail(EFAULT);
    zl_msg_init_empty(msg);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_msg_init_size(zlink_msg_t *msg, size_t size)
{
    if (msg == NULL)
        return zl_config_fail(EFAULT);
    int rc = zl_msg_init_copy(msg, NULL, size);
    if (rc != 0) {
        zl_msg(msg)->tag = 0;
        return zl_config_fail(rc);
    }
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_msg_init_data(zlink_msg_t *msg, void *data,
                                                       size_t size, zlink_free_fn *ffn,
                                                       void *hint)
{
    /* On any failure the caller keeps data and ffn is not called. */
    if (data == NULL && size > 0)
        return zl_config_fail(EINVAL);
    if (msg == NULL)
        return zl_config_fail(EFAULT);
    zl_msg_t *x = zl_msg(msg);
    zl_content_t *c = NULL;
    if (ffn != NULL) {
        c = malloc(sizeof *c);
        if (c == NULL) {
            x->tag = 0;
            return zl_config_fail(ENOMEM);
        }
        atomic_init(&c->refs, 1);
        c->kind = ZL_MSG_EXT;
        c->ffn = ffn;
        c->hint = hint;
        c->data = data;
    }
    x->type = c != NULL ? ZL_MSG_EXT : ZL_MSG_BORROW;
    x->isize = 0;
    x->u.ref.data = data;
    x->u.ref.size = size;
    x->u.ref.content = c;
    x->tag = ZL_MSG_TAG;
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT zlink_config_result_t zlink_msg_close(zlink_msg_t *msg)
{
    if (!zl_msg_valid(msg))
        return zl_config_fail(EFAULT);
    zl_msg_release(msg);
    return ZLINK_CONFIG_OK;
}

/* Both messages must be initialized. dst's old payload is released and src
 * is left empty. Moving a message onto itself changes nothing. */
ZLINK_EXPORT zlink_config_result_t zlink_msg_move(zlink_msg_t *dst, zlink_msg_t *src)
{
    if (!zl_msg_valid(dst) || !zl_msg_valid(src))
        return zl_config_fail(EFAULT);
    if (dst == src)
        return ZLINK_CONFIG_OK;
    zl_msg_release(dst);
    zl_msg_move_raw(dst, src);
    return ZLINK_CONFIG_OK;
}

/* Both messages must be initialized. dst's old payload is released, then
 * dst shares src's content: HEAP, EXT and SLICE take a reference; INLINE
 * copies its bytes; BORROW shares the caller's pointer (no count, refcnt
 * stays 1). The new reference is taken before the old one is dropped, so
 * copying between two holders of the same content is safe. */
ZLINK_EXPORT zlink_config_result_t zlink_msg_copy(zlink_msg_t *dst, zlink_msg_t *src)
{
    if (!zl_msg_valid(dst) || !zl_msg_valid(src))
        return zl_config_fail(EFAULT);
    if (dst == src)
        return ZLINK_CONFIG_OK;
    zlink_msg_t shared;
    zl_msg_share(&shared, src);
    zl_msg_release(dst);
    memcpy(dst, &shared, sizeof *dst);
    return ZLINK_CONFIG_OK;
}

/* dst must be uninitialized (an initialized dst is an argument error and
 * nothing changes). On success dst holds src's payload and src is empty but
 * initialized; on failure src keeps its payload and dst is untouched. */
ZLINK_EXPORT zlink_config_result_t zlink_msg_adopt(zlink_msg_t *dst, zlink_msg_t *src)
{
    if (zl_msg_valid(dst))
        return zl_config_fail(EINVAL);
    if (dst == NULL || !zl_msg_valid(src))
        return zl_config_fail(EFAULT);
    zl_msg_move_raw(dst, src);
    return ZLINK_CONFIG_OK;
}

ZLINK_EXPORT void *zlink_msg_data(zlink_msg_t *msg)
{
    if (!zl_msg_valid(msg)) {
        zl_set_errno(EFAULT);
        return NULL;
    }
    return zl_msg_data(msg);
}

ZLINK_EXPORT size_t zlink_msg_size(const zlink_msg_t *msg)
{
    if (!zl_msg_valid(msg)) {
        zl_set_errno(EFAULT);
        return 0;
    }
    return zl_msg_size(msg);
}

ZLINK_EXPORT int zlink_msg_refcnt(const zlink_msg_t *msg, zlink_config_result_t *result)
{
    if (!zl_msg_valid(msg)) {
        zlink_config_result_t r = zl_config_fail(EFAULT);
        if (result != NULL)
            *result = r;
        return -1;
    }
    if (result != NULL)
        *result = ZLINK_CONFIG_OK;
    const zl_msg_t *x = zl_cmsg(msg);
    if (x->type == ZL_MSG_INLINE || x->type == ZL_MSG_BORROW)
        return 1;
    uint32_t refs = atomic_load_explicit(&x->u.ref.content->refs, memory_order_relaxed);
    return refs > (uint32_t)INT32_MAX ? INT32_MAX : (int)refs;
}

/* Closes every initialized part; parts that are not initialized are skipped
 * without touching errno. NULL parts or n == 0 do nothing. */
ZLINK_EXPORT void zlink_multipart_close(zlink_msg_t *parts, size_t n)
{
    if (parts == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        if (zl_msg_valid(&parts[i]))
            zl_msg_release(&parts[i]);
    }
}
