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
#include "../sockopt.h"
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
    for (;;) {
        zl_pipe_t *best = NULL;
        ZL_FOREACH_PIPE(s, p) {
            if (candidate(s, p) && !p->swrr_tried && (best == NULL || swrr_better(p, best)))
                best = p;
        }
        if (best == NULL)
            break;
        if (zl_pipe_push(best, frames, n, false) == 0) {
            best->swrr_acc -= total;
            s->last_pipe = best;
            return 0;
        }
        best->swrr_tried = true;
        best->swrr_acc -= best->peer.weight;
        total -= best->peer.weight;
    }
    return EAGAIN;
}

static int dealer_attach(zl_socket_t *s, zl_pipe_t *p)
{
    p->swrr_acc = 0;
    zl_flow_attach(s, p);
    if (s->opts.probe)
        zl_pipe_send_probe(p);
    return 0;
}

/* DEALER and ROUTER controls (weight.h). */
void zl_weight_control(zl_socket_t *s, zl_pipe_t *p, const zl_frame_t *f)
{
    if (!(f->flags & ZL_F_CONTROL) || zl_flow_control(s, p, f))
        return;
    zlink_msg_t *m = (zlink_msg_t *)&f->msg;
    if (zl_msg_size(m) != 10)
        return;
    const unsigned char *b = zl_msg_data(m);
    if (memcmp(b, "WEIGHT", 6) != 0)
        return;
    uint32_t w = (uint32_t)b[6] << 24 | (uint32_t)b[7] << 16 | (uint32_t)b[8] << 8 | b[9];
    if (w > ZLINK_WEIGHT_MAX)
        return;
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
    s->opts.weight = (uint32_t)value;
    unsigned char body[10] = {'W', 'E', 'I', 'G', 'H', 'T', (unsigned char)(value >> 24),
                              (unsigned char)(value >> 16), (unsigned char)(value >> 8),
                              (unsigned char)value};
    ZL_FOREACH_PIPE(s, p) {
        if (p->attached && !p->ended)
            zl_pipe_send_control(p, ZL_F_CONTROL, body, sizeof body);
    }
    return 0;
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
