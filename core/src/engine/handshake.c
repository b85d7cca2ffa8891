/*
 * handshake.c — the ZMP v1 handshake of one connection (doc/protocol.md
 * section 7): HELLO, READY with the lane properties, ERROR, and the
 * ROUTER-ROUTER lane pairing.
 *
 * Design notes
 *  - Both sides send HELLO at once. PAIR/PUB/SUB send READY right behind
 *    it. DEALER/ROUTER: the connecting side sends READY after validating
 *    the peer's HELLO (it then knows the lane count); the accepting side
 *    after validating the peer's READY (it echoes the lane).
 *  - A connection is validated when the peer's READY checked out and our
 *    own READY was completely written (its write callback ran). Then it
 *    attaches (zl_conn_attach), or for ROUTER-ROUTER waits for / opens its
 *    other lane (WAIT_PARTNER).
 *  - Handshake writes use two embedded uv_write_t and buffers in the conn
 *    (HELLO, READY); they are the only writes before the pipe exists.
 *  - Threads and locks: the conn's I/O thread; no locks.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hs_progress(zl_conn_t *c);

/* A handshake write finished; the READY one may complete validation. */
static void hs_on_write(uv_write_t *req, int status)
{
    zl_conn_t *c = req->data;
    c->hs_writes--;
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE)
        return;
    if (status < 0) {
        zl_conn_terminate(c, -status);
        return;
    }
    if (req == &c->hs_req[1]) {
        c->ready_written = true;
        hs_progress(c);
    }
}

/* Queues buf (owned by the conn, stable until the callback) with the
 * handshake request idx (0 HELLO, 1 READY). Ends the conn on failure. */
static bool hs_write(zl_conn_t *c, int idx, uint8_t *buf, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    c->hs_req[idx].data = c;
    int rc = uv_write(&c->hs_req[idx], &c->h.stream, &b, 1, hs_on_write);
    if (rc != 0) {
        zl_conn_terminate(c, -rc);
        return false;
    }
    c->hs_writes++;
    return true;
}

/* Builds our READY into buf. Returns its length (0 on overflow). */
static size_t hs_build_ready(zl_conn_t *c, uint8_t *buf, size_t cap)
{
    zmp_ready_t r;
    zmp_ready_clear(&r);
    if (zmp_type_has_lanes(c->sock_type)) {
        r.type = c->sock_type;
        r.has_rid = true;
        r.rid = c->opts.rid;
        r.lane_count = c->lanes;
        r.lane = c->lane;
        r.has_weight = true;
        r.weight = c->opts.weight;
    }
    if (c->opts.zmp_metadata) {
        r.type = c->sock_type;
        r.has_max_msg = true;
        r.max_msg = c->opts.maxmsgsize > 0 ? (uint64_t)c->opts.maxmsgsize : 0;
    }
    return zmp_build_ready(buf, cap, &r);
}

/* Sends our READY once. */
static void hs_send_ready(zl_conn_t *c)
{
    if (c->ready_queued)
        return;
    size_t n = hs_build_ready(c, c->ready_buf, sizeof c->ready_buf);
    if (n == 0) {
        zl_conn_fail(c, EPROTO, ZMP_ERR_INTERNAL);
        return;
    }
    c->ready_queued = true;
    hs_write(c, 1, c->ready_buf, n);
}

/* Sends HELLO, and for types without lanes READY right behind it. */
void zl_hs_start(zl_conn_t *c)
{
    zlink_routing_id_t rid = c->opts.rid;
    size_t n = zmp_build_hello(c->hs_buf, sizeof c->hs_buf, c->sock_type, &rid);
    if (n == 0) {
        zl_conn_fail(c, EPROTO, ZMP_ERR_INTERNAL);
        return;
    }
    if (zmp_type_has_lanes(c->sock_type)) {
        hs_write(c, 0, c->hs_buf, n);
        return;
    }
    size_t m = hs_build_ready(c, c->hs_buf + n, sizeof c->hs_buf - n);
    if (m == 0) {
        zl_conn_fail(c, EPROTO, ZMP_ERR_INTERNAL);
        return;
    }
    c->ready_queued = true;
    hs_write(c, 1, c->hs_buf, n + m);
}

void zl_hs_refuse_data(zl_conn_t *c)
{
    zl_conn_fail(c, EPROTO, c->hello_recv ? ZMP_ERR_UNEXPECTED : ZMP_ERR_HELLO);
}

/* One CONTROL frame during the handshake. Loop thread. */
void zl_hs_frame(zl_conn_t *c, const zmp_hdr_t *h, const uint8_t *body)
{
    if (!(h->flags & ZMP_F_CONTROL)) {
        /* Data before the handshake finished (conn_read.c normally refuses
         * it from its header already). */
        zl_hs_refuse_data(c);
        return;
    }
    zmp_control_kind_t kind = zmp_control_kind(body, h->size);
    if (kind == ZMP_CTL_ERROR) {
        uint8_t code = 0;
        if (zmp_parse_error(body, h->size, &code, NULL, 0) == 0)
            c->zmp_code = code;
        zl_conn_terminate(c, code == ZMP_ERR_INCOMPATIBLE ? EPROTOTYPE : ECONNREFUSED);
        return;
    }
    if (!c->hello_recv) {
        int type;
        zlink_routing_id_t rid;
        if (kind != ZMP_CTL_HELLO || zmp_parse_hello(body, h->size, &type, &rid) != 0) {
            zl_conn_fail(c, EPROTO, ZMP_ERR_HELLO);
            return;
        }
        if (!zmp_types_compatible(c->sock_type, type)) {
            zl_conn_fail(c, EPROTOTYPE, ZMP_ERR_INCOMPATIBLE);
            return;
        }
        c->hello_recv = true;
        c->peer.type = type;
        c->peer.rid = rid;
        c->lanes = (uint8_t)zmp_lane_count(c->sock_type, type);
        c->peer.lanes = c->lanes;
        if (c->lane >= c->lanes) {
            zl_conn_fail(c, EPROTO, ZMP_ERR_LANE);
            return;
        }
        /* DEALER / ROUTER: the connecting side answers HELLO with READY;
         * the accepting side waits for the peer's READY (it echoes the
         * lane the connecting side chose). */
        if (zmp_type_has_lanes(c->sock_type) && c->initiator)
            hs_send_ready(c);
        return;
    }
    if (c->ready_recv || kind != ZMP_CTL_READY) {
        zl_conn_fail(c, EPROTO, ZMP_ERR_UNEXPECTED);
        return;
    }
    zmp_ready_t r;
    if (zmp_parse_ready(body, h->size, &r) != 0 ||
        zmp_check_ready(&r, c->sock_type, c->peer.type, &c->peer.rid) != 0) {
        zl_conn_fail(c, EPROTO, ZMP_ERR_READY);
        return;
    }
    if (zmp_type_has_lanes(c->peer.type)) {
        if (c->initiator) {
            if (r.lane != c->lane) {
                zl_conn_fail(c, EPROTO, ZMP_ERR_READY);
                return;
            }
        } else {
            c->lane = (uint8_t)r.lane;
            if (c->lane == 1) {
                zl_conn_t *p0 = zl_listener_find_lane0(c->ep, c);
                if (p0 == NULL) {
                    zl_conn_fail(c, EPROTO, ZMP_ERR_LANE);
                    return;
                }
                c->partner = p0;
                p0->partner = c;
            }
        }
    }
    c->peer.weight = r.has_weight ? r.weight : ZLINK_WEIGHT_DFLT;
    c->ready_recv = true;
    if (zmp_type_has_lanes(c->sock_type) && !c->initiator)
        hs_send_ready(c);
    hs_progress(c);
}

/* Our READY is written and the peer's validated: attach, or wait for (or
 * open) the other lane. Loop thread. */
static void hs_progress(zl_conn_t *c)
{
    if (c->state != ZL_CS_HANDSHAKE || !c->ready_recv || !c->ready_written)
        return;
    if (c->lanes == 1) {
        zl_conn_attach(c);
        return;
    }
    c->state = ZL_CS_WAIT_PARTNER;
    if (c->lane == 0) {
        if (c->initiator)
            zl_connecter_open_lane1(c->ep, c);
        /* The accepting side waits for the peer's lane 1. */
        return;
    }
    zl_conn_t *p0 = c->partner;
    if (p0 == NULL || p0->state != ZL_CS_WAIT_PARTNER) {
        zl_conn_fail(c, EPROTO, ZMP_ERR_LANE);
        return;
    }
    zl_conn_attach(p0);
}

