/*
 * stream.c — STREAM: raw TCP peers named by 4-byte routing ids.
 *
 * Design notes
 *  - No ZMP. The socket assigns each connection the next 4-byte id
 *    (big-endian counter from a random start). Sends write each part's
 *    bytes as they are, in RAW and PACKET mode alike (an application
 *    frames its own packets); a zero-length send closes that peer after
 *    what was queued before it.
 *  - RAW mode: the engine hands over whatever bytes each read produced as
 *    one single-part record, received with zlink_recv (the generic fair
 *    queue of socket.c). With NOTIFY=1 a connection's arrival and
 *    departure appear as zero-length records from its id, in order with
 *    its data.
 *  - PACKET mode: the engine delivers each complete packet as a two-frame
 *    record (header, body) whose first frame's seq is its admission stamp
 *    (engine.h). zl_stream_recv_packet takes, among the oldest packet of
 *    every connection, the one with the smallest stamp: per connection the
 *    wire order, across connections the order of completion. That look is
 *    one pass over the pipes per receive (as the fair queue's worst case).
 *    Connections are reported by the socket monitor (CONNECTION_READY and
 *    DISCONNECTED carry the 4-byte id), never as records: NOTIFY=1 is
 *    refused in this mode.
 *  - Locks: the ops and the receive's look run under s->lk; a receive
 *    releases the caller's old (empty) messages after dropping it. Threads:
 *    attach/detach on I/O threads, everything else on application threads.
 */
#include "proto_tables.h"
#include "protocols/stream.h"
#include "sock/sockopt.h"

typedef struct stream_state {
    uint32_t next_id;
} stream_state_t;

static void stream_init(zl_socket_t *s)
{
    stream_state_t *st = s->proto;
    zl_plat_random(&st->next_id, sizeof st->next_id);
    if (st->next_id == 0)
        st->next_id = 1;
}

/* Under s->lk: appends the zero-length notice record of p (NOTIFY on) to
 * its in queue. 0 or ENOMEM (nothing appended). */
static int stream_notice(zl_socket_t *s, zl_pipe_t *p)
{
    if (!s->opts.stream_notify)
        return 0;
    zl_frame_t f;
    memset(&f, 0, sizeof f);
    zl_msg_init_empty(&f.msg);
    if (zl_q_inject(p->in, &f, 1) != ZL_Q_OK)
        return ENOMEM;
    zl_pipe_rx_ready(s, p); /* an inject notifies nobody */
    return 0;
}

static int stream_attach(zl_socket_t *s, zl_pipe_t *p)
{
    stream_state_t *st = s->proto;
    uint32_t id = st->next_id++;
    if (st->next_id == 0)
        st->next_id = 1;
    p->rid.size = 4;
    zmp_put_u32(p->rid.data, id); /* 4 bytes, big-endian, as on the wire */
    /* The disconnect notice must not be lost when the peer goes, whatever
     * memory is left then: its room is set aside now. Without memory for
     * either notice the connection is refused (ENOMEM); the peer has sent
     * nothing we took yet. */
    if (s->opts.stream_notify && (stream_notice(s, p) != 0 || zl_q_inject_reserve(p->in) != 0))
        return ENOMEM;
    return 0;
}

static void stream_detach(zl_socket_t *s, zl_pipe_t *p)
{
    /* Reserved at attach, so it cannot fail; only when NOTIFY was switched
     * on during this connection is there no reservation, and then a lack
     * of memory drops this one notice. */
    (void)stream_notice(s, p);
}

static int stream_send(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames,
                       size_t n)
{
    zl_pipe_t *p = zl_socket_route(s, rid);
    if (p == NULL)
        return EHOSTUNREACH;
    if (n == 1 && zl_msg_size(&frames[0].msg) == 0) {
        /* Close after what is already queued; the engine ends the pipe. */
        zl_msg_release(&frames[0].msg);
        zl_msg_init_empty(&frames[0].msg);
        zl_q_close_writer(p->out);
        p->attached = false; /* no longer a route; the engine ends it */
        return 0;
    }
    int rc = zl_pipe_push(p, frames, n, false);
    return rc == EPIPE ? EHOSTUNREACH : rc;
}

/* NOTIFY 1 is a RAW-mode feature (PACKET reports connections through the
 * monitor). Under s->lk. */
static int notify_check(zl_socket_t *s, int value)
{
    return value == 1 && s->opts.stream_mode == ZLINK_STREAM_RECV_PACKET ? ENOTSUP : 0;
}

/* RECV_MODE (ZL_OPT_FIXED: EBUSY once the socket has an endpoint): also
 * fixed for good by the first successful bind or connect, and while one is
 * in progress (the engine's connections read it at accept and connect);
 * PACKET and NOTIFY=1 exclude each other. Under s->lk. */
static int recv_mode_check(zl_socket_t *s, int value)
{
    if (s->stream_mode_fixed || s->stream_mode_holds > 0)
        return EBUSY;
    return value == ZLINK_STREAM_RECV_PACKET && s->opts.stream_notify ? ENOTSUP : 0;
}

/* STREAM's own options. */
static const zl_sockopt_t stream_options[] = {
    {.id = ZLINK_STREAM_NOTIFY, .type = ZL_OPT_BOOL, .min = 0, .max = 1,
     .field = offsetof(zl_sockopts_t, stream_notify), .check = notify_check},
    {.id = ZLINK_STREAM_OPT_RECV_MODE, .type = ZL_OPT_INT, .flags = ZL_OPT_FIXED,
     .min = ZLINK_STREAM_RECV_UNSPECIFIED, .max = ZLINK_STREAM_RECV_PACKET,
     .dflt = ZLINK_STREAM_RECV_UNSPECIFIED, .field = offsetof(zl_sockopts_t, stream_mode),
     .check = recv_mode_check},
};

const zl_proto_ops_t zl_stream_ops = {
    .type = ZLINK_STREAM,
    .proto_size = sizeof(stream_state_t),
    .init = stream_init,
    .attach = stream_attach,
    .detach = stream_detach,
    .send = stream_send,
    .options = stream_options,
    .noptions = sizeof stream_options / sizeof stream_options[0],
};

int zl_stream_recv_mode(zl_socket_t *s)
{
    zl_mutex_lock(&s->lk);
    int mode = s->opts.stream_mode;
    zl_mutex_unlock(&s->lk);
    return mode;
}

struct packet_args {
    zlink_msg_t hdr, body;              /* the packet taken, once taken */
    const zlink_routing_id_t **rid;
};

/* Under s->lk (zl_socket_wait_for's attempt): moves the packet with the
 * smallest admission stamp among the oldest packet of each pipe into a,
 * and returns its credit to the pipe. Reaps pipes that ended and are
 * drained. Returns 0, or EAGAIN when no pipe holds a packet. */
static int packet_attempt(zl_socket_t *s, void *arg)
{
    struct packet_args *a = arg;
    zl_pipe_t *best = NULL;
    uint64_t best_stamp = 0;
    zl_pipe_t *p = s->pipes;
    while (p != NULL) {
        zl_pipe_t *next = p->next; /* p may be reaped */
        if (p->rxq.count == 0) {
            uint64_t charge = 0;
            bool eof = false;
            if (zl_q_take_all(p->in, &p->rxq, &charge, &eof) == 0) {
                if (eof && p->ended)
                    zl_socket_reap_pipe(s, p);
                p = next;
                continue;
            }
        }
        uint64_t stamp = zl_fq_front(&p->rxq)->seq;
        if (best == NULL || stamp < best_stamp) {
            best = p;
            best_stamp = stamp;
        }
        p = next;
    }
    if (best == NULL)
        return EAGAIN;
    /* The engine delivers a packet as header (MORE) + body, never less. */
    zl_frame_t *f = zl_fq_front(&best->rxq);
    uint64_t charge = zl_frame_charge(f);
    memcpy(&a->hdr, &f->msg, sizeof a->hdr);
    zl_fq_pop(&best->rxq);
    f = zl_fq_front(&best->rxq);
    charge += zl_frame_charge(f);
    memcpy(&a->body, &f->msg, sizeof a->body);
    zl_fq_pop(&best->rxq);
    zl_q_consume(best->in, charge);
    s->recv_rid = best->rid;
    s->recv_route = best->id;
    s->recv_token = 0;
    *a->rid = &s->recv_rid;
    return 0;
}

int zl_stream_recv_packet(zl_socket_t *s, zlink_msg_t *hdr, zlink_msg_t *body, int flags,
                          const zlink_routing_id_t **rid)
{
    struct packet_args a;
    const zlink_routing_id_t *view = NULL;
    a.rid = &view;
    int rc = zl_socket_wait_for(s, flags, &s->opts.rcvtimeo, packet_attempt, &a);
    if (rc != 0)
        return rc;
    /* Empty, but possibly zero-length user memory with a free function. */
    zl_msg_release(hdr);
    zl_msg_release(body);
    memcpy(hdr, &a.hdr, sizeof *hdr);
    memcpy(body, &a.body, sizeof *body);
    *rid = view;
    return 0;
}
