/*
 * dealer.c — DEALER: fair-queued input, smooth weighted round-robin output.
 *
 * Each peer announces its weight (READY's Zlink-Weight, later WEIGHT
 * controls). Per record: every candidate (attached, weight > 0) adds its
 * weight to its accumulator; the largest accumulator wins, ties going to
 * the smallest routing id bytes (empty first), then attach order; the
 * winner subtracts the total. A winner without room is skipped for this
 * record only: it leaves the round (its addition is undone and its weight
 * leaves the total, so the accumulators keep summing to zero and it gets no
 * burst later) and the next best is tried. When nobody has room every
 * addition is undone and the caller waits (NONE) or gets EAGAIN (DONTWAIT).
 * Weights 100/300 give 2,1,2,2. A new connection starts at 0.
 * Runs under s->lk.
 */
#include "proto_tables.h"
#include "sock/sockopt.h"
#include "weight.h"

static int rid_cmp(const zlink_routing_id_t *a, const zlink_routing_id_t *b)
{
    size_t n = a->size < b->size ? a->size : b->size;
    int c = memcmp(a->data, b->data, n);
    if (c != 0)
        return c;
    return (int)a->size - (int)b->size;
}

/* True when a should be chosen before b. */
static bool swrr_better(const zl_pipe_t *a, const zl_pipe_t *b)
{
    if (a->swrr_acc != b->swrr_acc)
        return a->swrr_acc > b->swrr_acc;
    int c = rid_cmp(&a->peer.rid, &b->peer.rid);
    if (c != 0)
        return c < 0;
    return a->attach_seq < b->attach_seq;
}

static bool candidate(const zl_socket_t *s, const zl_pipe_t *p)
{
    /* Requests go only to peers that said ROUTER in their handshake. */
    return p->attached && !p->ended && p->peer.weight > 0 && !zl_pipe_paused(p) &&
           (!s->req_send || p->peer.type == ZLINK_ROUTER);
}

static int dealer_send(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames,
                       size_t n)
{
    ZL_UNUSED(rid);
    int64_t total = 0;
    ZL_FOREACH_PIPE(s, p) {
        p->swrr_tried = false;
        if (candidate(s, p)) {
            p->swrr_acc += p->peer.weight;
            total += p->peer.weight;
        }
    }
    if (total == 0)
        return EAGAIN;
    int rc = EAGAIN;
    for (;;) {
        zl_pipe_t *best = NULL;
        ZL_FOREACH_PIPE(s, p) {
            if (candidate(s, p) && !p->swrr_tried && (best == NULL || swrr_better(p, best)))
                best = p;
        }
        if (best == NULL)
            break;
        int prc = zl_pipe_push(best, frames, n, false);
        if (prc == 0) {
            best->swrr_acc -= total;
            s->last_pipe = best;
            return 0;
        }
        if (prc == ENOMEM)
            rc = ENOMEM; /* unless another peer's queue takes it */
        best->swrr_tried = true;
        best->swrr_acc -= best->peer.weight;
        total -= best->peer.weight;
    }
    return rc;
}

static int dealer_attach(zl_socket_t *s, zl_pipe_t *p)
{
    p->swrr_acc = 0;
    int rc = zl_flow_attach(s, p);
    if (rc == 0 && s->opts.probe)
        rc = zl_pipe_send_probe(p);
    return rc;
}

/* DEALER and ROUTER controls (weight.h). */
void zl_weight_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f)
{
    if (!(f->flags & ZMP_F_CONTROL) || zl_flow_control(s, p, f))
        return;
    zlink_msg_t *m = (zlink_msg_t *)&f->msg;
    uint32_t w;
    if (zmp_parse_weight(zl_msg_data(m), zl_msg_size(m), &w) != 0)
        return; /* not a WEIGHT, or malformed: ignored */
    bool revived = p->peer.weight == 0 && w > 0;
    if (w != p->peer.weight)
        zl_socket_event(s, true, ZLINK_EVENT_PEER_WEIGHT_CHANGED, w, p, NULL, NULL, 0, 0);
    p->peer.weight = w;
    if (revived) {
        zl_pipe_stamp(p); /* weight 0 -> positive is a wake edge */
        zl_socket_wake(s);
    }
}

int zl_weight_set(zl_socket_t *s, int value)
{
    if (s->opts.weight == (uint32_t)value)
        return 0;
    /* Every peer is told (a WEIGHT control, applied to their next record),
     * or, without memory for every copy, nobody and the weight stays. */
    uint8_t body[ZMP_WEIGHT_SIZE];
    zmp_weight_body(body, (uint32_t)value);
    int rc = zl_socket_broadcast_control(s, ZMP_F_CONTROL, body, sizeof body);
    if (rc == 0)
        s->opts.weight = (uint32_t)value;
    return rc;
}

/* DEALER's own options. PROBE answers to both numbers (the contract's
 * ROUTER_PROBE is also a DEALER option); the other ROUTER options are not. */
static const zl_sockopt_t dealer_options[] = {
    ZL_OPT_ROW_BOOL(ZLINK_DEALER_PROBE, 0, probe),
    ZL_OPT_ROW_BOOL(ZLINK_ROUTER_PROBE, 0, probe),
    ZL_OPT_ROW_INT(ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS, 1, INT_MAX, ZLINK_REQUEST_TIMEOUT_DFLT,
                   request_timeout_ms),
    {.id = ZLINK_DEALER_WEIGHT, .type = ZL_OPT_INT, .min = ZLINK_WEIGHT_MIN,
     .max = ZLINK_WEIGHT_MAX, .dflt = ZLINK_WEIGHT_DFLT, .field = offsetof(zl_sockopts_t, weight),
     .set_int = zl_weight_set},
};

const zl_proto_ops_t zl_dealer_ops = {
    .type = ZLINK_DEALER,
    .attach = dealer_attach,
    .control = zl_weight_control,
    .send = dealer_send,
    .options = dealer_options,
    .noptions = sizeof dealer_options / sizeof dealer_options[0],
};
