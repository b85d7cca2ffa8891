/*
 * pair.c — PAIR: exactly one peer at a time; records both ways.
 *
 * A second peer is refused while the first is attached; after the first
 * ends (reconnect), a new one may attach. A send with no peer waits for an
 * attach (NONE) or reports EAGAIN (DONTWAIT). Runs under s->lk.
 */
#include "proto_tables.h"

static zl_pipe_t *pair_peer(zl_socket_t *s)
{
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended)
            return p;
    }
    return NULL;
}

static int pair_attach(zl_socket_t *s, zl_pipe_t *p)
{
    ZL_UNUSED(p);
    return pair_peer(s) != NULL ? EEXIST : 0;
}

static int pair_send(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames, size_t n)
{
    ZL_UNUSED(rid);
    zl_pipe_t *p = pair_peer(s);
    if (p == NULL)
        return EAGAIN;
    int rc = zl_pipe_push(p, frames, n, false);
    return rc == EPIPE ? EAGAIN : rc;
}

const zl_proto_ops_t zl_pair_ops = {
    .type = ZLINK_PAIR,
    .attach = pair_attach,
    .send = pair_send,
};
