/*
 * stream.c — STREAM: raw TCP peers named by 4-byte routing ids.
 *
 * No ZMP: the engine hands over whatever bytes each read produced as one
 * single-part record and writes each sent part's bytes as they are. The
 * socket assigns each connection the next 4-byte id (big-endian counter
 * from a random start). With NOTIFY=1 a connection's arrival and departure
 * appear as zero-length records from its id, in order with its data. A
 * zero-length send closes that peer after what was queued before it.
 * Runs under s->lk.
 */
#include "../engine/engine.h"
#include "../sockopt.h"

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

static void stream_notice(zl_socket_t *s, zl_pipe_t *p)
{
    if (!s->opts.stream_notify)
        return;
    zl_frame_t f;
    memset(&f, 0, sizeof f);
    zl_msg_init_empty(&f.msg);
    zl_q_inject(p->in, &f, 1);
}

static int stream_attach(zl_socket_t *s, zl_pipe_t *p)
{
    stream_state_t *st = s->proto;
    uint32_t id = st->next_id++;
    if (st->next_id == 0)
        st->next_id = 1;
    p->rid.size = 4;
    p->rid.data[0] = (uint8_t)(id >> 24);
    p->rid.data[1] = (uint8_t)(id >> 16);
    p->rid.data[2] = (uint8_t)(id >> 8);
    p->rid.data[3] = (uint8_t)id;
    stream_notice(s, p);
    return 0;
}

static void stream_detach(zl_socket_t *s, zl_pipe_t *p)
{
    stream_notice(s, p);
}

static int stream_send(zl_socket_t *s, const zlink_routing_id_t *rid, zl_frame_t *frames,
                       size_t n)
{
    zl_pipe_t *p = NULL;
    ZL_FOREACH_PIPE(s, q) {
        if (q->attached && !q->ended && zl_rid_equal(&q->rid, rid)) {
            p = q;
            break;
        }
    }
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

/* RECV_MODE (fixed once the socket has an endpoint, ZL_OPT_FIXED): this
 * version receives RAW only; PACKET is NOT_SUPPORTED. Under s->lk. */
static int recv_mode_check(zl_socket_t *s, int value)
{
    ZL_UNUSED(s);
    return value == ZLINK_STREAM_RECV_PACKET ? ENOTSUP : 0;
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
