/*
 * request_api.c — zlink_request, zlink_reply, zlink_reply_error and the
 * completion queue's zlink_completion_recv / zlink_completion_close:
 * argument and handle checks, ownership of the caller's parts on the
 * early failures, and results. Requests and reply tokens are
 * sock/request.c; the completion queue sock/completion.c.
 */
#include "sock/socket.h"
#include "util/errors.h"

#include <stdlib.h>
#include <string.h>

ZLINK_EXPORT zlink_submit_result_t zlink_request(void *socket, const zlink_routing_id_t *rid,
                                                 zlink_msg_t *parts, size_t n,
                                                 zlink_send_flags_t flags, uint32_t timeout_ms,
                                                 void *user_context,
                                                 zlink_completion_id_t *completion_id_out)
{
    if (completion_id_out != NULL)
        *completion_id_out = 0;
    if (parts == NULL)
        return zl_submit_fail(EINVAL);
    if (n == 0 || ((int)flags & ~ZLINK_DONTWAIT) != 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(EINVAL);
    }
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    }
    uint64_t id = 0;
    rc = zl_req_submit(s, rid, parts, n, (int)flags, timeout_ms, user_context, &id);
    if (completion_id_out != NULL)
        *completion_id_out = id;
    if (rc == EINVAL || rc == ENOTSUP || rc == ENOMEM)
        zl_multipart_release_init(parts, n);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_SUBMIT_OK : zl_submit_fail(rc);
}

/* The checks zlink_reply and zlink_reply_error share, then the reply.
 * error != 0 sends an ERROR_REPLY. Parts are consumed in every case. */
static zlink_submit_result_t reply_common(void *router, const zlink_routing_id_t *src_rid,
                                          zlink_reply_token_t token, int error,
                                          zlink_msg_t *parts, size_t n, int flags,
                                          void *user_context, zlink_completion_id_t *wait_out)
{
    if (wait_out != NULL)
        *wait_out = 0;
    if (parts == NULL && n > 0)
        return zl_submit_fail(EINVAL);
    if ((n == 0 && error == 0) || src_rid == NULL || src_rid->size == 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(EINVAL);
    }
    if (token == 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(ENOENT);
    }
    zl_socket_t *s;
    int rc = zl_socket_enter(router, &s);
    if (rc != 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    }
    rc = zl_req_reply(s, src_rid, token, error, parts, n, flags, user_context, wait_out);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_SUBMIT_OK : zl_submit_fail(rc);
}

ZLINK_EXPORT zlink_submit_result_t zlink_reply(void *router, const zlink_routing_id_t *src_rid,
                                               zlink_reply_token_t token, zlink_msg_t *parts,
                                               size_t n)
{
    if (parts == NULL)
        return zl_submit_fail(EINVAL);
    return reply_common(router, src_rid, token, 0, parts, n, 0, NULL, NULL);
}

ZLINK_EXPORT zlink_submit_result_t zlink_reply_error(void *router,
                                                     const zlink_routing_id_t *src_rid,
                                                     zlink_reply_token_t token, int error,
                                                     zlink_msg_t *parts, size_t n)
{
    if (error <= 0) {
        zl_multipart_release_init(parts, n);
        return zl_submit_fail(EINVAL);
    }
    return reply_common(router, src_rid, token, error, parts, n, 0, NULL, NULL);
}

ZLINK_EXPORT zlink_submit_result_t zlink_reply_submit(void *router,
                                                      const zlink_routing_id_t *src_rid,
                                                      zlink_reply_token_t token, int error,
                                                      zlink_msg_t *parts, size_t n,
                                                      zlink_send_flags_t flags,
                                                      void *user_context,
                                                      zlink_completion_id_t *completion_id_out)
{
    if ((flags & ~ZLINK_SEND_FLAGS_DONTWAIT) != 0 || error < 0) {
        if (parts != NULL)
            zl_multipart_release_init(parts, n);
        if (completion_id_out != NULL)
            *completion_id_out = 0;
        return zl_submit_fail(EINVAL);
    }
    return reply_common(router, src_rid, token, error, parts, n, (int)flags, user_context,
                        completion_id_out);
}

/* Whether *out is an empty record (all zero but its struct_size). */
static bool record_is_empty(const zlink_completion_t *out)
{
    zlink_completion_t zero;
    memset(&zero, 0, sizeof zero);
    zero.struct_size = out->struct_size;
    return memcmp(&zero, out, sizeof zero) == 0;
}

ZLINK_EXPORT zlink_recv_result_t zlink_completion_recv(void *socket, zlink_completion_t *out,
                                                       zlink_recv_flags_t flags)
{
    if (out == NULL)
        return zl_recv_fail(EFAULT);
    if ((flags & ~ZLINK_DONTWAIT) != 0 || out->struct_size != sizeof *out ||
        !record_is_empty(out))
        return zl_recv_fail(EINVAL);
    zl_socket_t *s;
    int rc = zl_socket_enter(socket, &s);
    if (rc != 0)
        return zl_recv_fail(rc == ESHUTDOWN ? ESHUTDOWN : EFAULT);
    rc = zl_cq_recv(s, out, (int)flags);
    zl_socket_leave(s);
    return rc == 0 ? ZLINK_RECV_OK : zl_recv_fail(rc);
}

ZLINK_EXPORT void zlink_completion_close(zlink_completion_t *record)
{
    if (record == NULL || record->struct_size != sizeof *record)
        return;
    if (record->reply_parts != NULL) {
        for (size_t i = 0; i < record->reply_part_count; i++)
            if (zl_msg_valid(&record->reply_parts[i]))
                zl_msg_release(&record->reply_parts[i]);
        free(record->reply_parts);
    }
    uint32_t size = record->struct_size;
    memset(record, 0, sizeof *record);
    record->struct_size = size;
}
