/*
 * router.c — ROUTER: records addressed by routing id.
 *
 * A pipe is named by the CONNECT_ROUTING_ID alias given for its connect,
 * else by the id the peer announced in its handshake (16 random bytes,
 * UUIDv4 layout, unless the peer set one). A second live pipe with the same
 * id is refused (RID_DUPLICATE_POLICY REJECT, the default) or replaces the
 * old one (HANDOVER; the old connection is closed). Sending to an unknown
 * id fails with EHOSTUNREACH when MANDATORY is 1 (default) and is dropped
 * silently when it is 0. Runs under s->lk.
 */
#include "proto_tables.h"
#include "sock/sockopt.h"
#include "weight.h"


static int router_attach(zl_socket_t *s, zl_pipe_t *p)
{
    if (!zl_socket_alias_for(s, p->ep, &p->rid)) {
        if (p->peer.rid.size > 0)
            p->rid = p->peer.rid;
        else
            zl_routing_id_generate(&p->rid);
    }
    zl_pipe_t *old = zl_socket_route(s, &p->rid);
    bool handover = old != NULL && s->opts.rid_dup_policy == ZLINK_RID_DUPLICATE_HANDOVER &&
                    old->conn != NULL;
    if (old != NULL && !handover)
        return EEXIST;
    /* What the new pipe must carry first; without memory for it the new
     * pipe is refused (ENOMEM) and an old one keeps its route. */
    int rc = zl_flow_attach(s, p);
    if (rc == 0 && s->opts.probe)
        rc = zl_pipe_send_probe(p);
    if (rc != 0)
        return rc;
    if (handover) {
        /* The old pipe stops being a route now; its connection closes and
         * ends it through the engine. */
        zl_pipe_close(old);
    }
    return 0;
}

static int router_send(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames,
                       size_t n)
{
    zl_pipe_t *p = zl_socket_route(s, rid);
    if (p == NULL) {
        if (s->opts.mandatory)
            return EHOSTUNREACH;
        /* Not mandatory: the record is dropped and the send succeeds. */
        for (size_t i = 0; i < n; i++)
            zl_msg_release(&frames[i].msg);
        for (size_t i = 0; i < n; i++)
            zl_msg_init_empty(&frames[i].msg);
        return 0;
    }
    if (s->req_send && p->peer.type != ZLINK_ROUTER)
        return EPROTOTYPE; /* requests go to ROUTER peers only */
    if (s->reply_send && p->cmp_out != NULL) {
        /* A reply to a ROUTER peer takes the Completion lane: no HWM, no
         * PAUSE, not behind DATA. */
        if (p->ended)
            return EHOSTUNREACH;
        int rc = zl_q_push(p->cmp_out, frames, n, true);
        return rc == ZL_Q_OK ? 0 : rc == ZL_Q_NOMEM ? ENOMEM : EHOSTUNREACH;
    }
    if (zl_pipe_paused(p))
        return EAGAIN; /* the peer paused its receive flow */
    int rc = zl_pipe_push(p, frames, n, false);
    if (rc == 0)
        s->last_pipe = p;
    return rc == EPIPE ? EHOSTUNREACH : rc;
}

/* A REQUEST whose sequence is still live from the same source breaks the
 * protocol: it is not delivered and the connection closes. */
static bool router_accept(zl_socket_t *s, zl_pipe_t *p, zl_frame_t *frames, size_t n)
{
    ZL_UNUSED(n);
    if (frames[0].kind != ZMP_KIND_REQUEST || !zl_req_seq_live(s, p, frames[0].seq))
        return true;
    zl_pipe_violation(s, p);
    return false;
}

/* CONNECT_ROUTING_ID (set-only): names the peer of the next connect;
 * zl_socket_connect takes it. 1..255 bytes. Under s->lk. */
static int connect_rid_set(zl_socket_t *s, const void *v, size_t n)
{
    if (v == NULL || n == 0 || n > sizeof s->connect_rid.data)
        return EINVAL;
    s->connect_rid.size = (uint8_t)n;
    memcpy(s->connect_rid.data, v, n);
    return 0;
}

/* ROUTER's own options. PROBE answers to both numbers, as on DEALER. */
static const zl_sockopt_t router_options[] = {
    ZL_OPT_ROW_BOOL(ZLINK_ROUTER_MANDATORY, 1, mandatory),
    ZL_OPT_ROW_BOOL(ZLINK_ROUTER_PROBE, 0, probe),
    ZL_OPT_ROW_BOOL(ZLINK_DEALER_PROBE, 0, probe),
    ZL_OPT_ROW_INT(ZLINK_ROUTER_OPT_REQUEST_TIMEOUT_MS, 1, INT_MAX, ZLINK_REQUEST_TIMEOUT_DFLT,
                   request_timeout_ms),
    {.id = ZLINK_ROUTER_WEIGHT, .type = ZL_OPT_INT, .min = ZLINK_WEIGHT_MIN,
     .max = ZLINK_WEIGHT_MAX, .dflt = ZLINK_WEIGHT_DFLT, .field = offsetof(zl_sockopts_t, weight),
     .set_int = zl_weight_set},
    {.id = ZLINK_CONNECT_ROUTING_ID, .type = ZL_OPT_BYTES, .flags = ZL_OPT_WRITEONLY,
     .field = ZL_OPT_NO_FIELD, .set_bytes = connect_rid_set},
};

const zl_proto_ops_t zl_router_ops = {
    .type = ZLINK_ROUTER,
    .accept = router_accept,
    .attach = router_attach,
    .control = zl_weight_control,
    .send = router_send,
    .options = router_options,
    .noptions = sizeof router_options / sizeof router_options[0],
};
