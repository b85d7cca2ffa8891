/*
 * transport.h — the one interface between the engine (below) and the
 * socket layer (above), seen from the engine's side.
 *
 * The engine never includes a socket header. A socket that binds or
 * connects hands the engine a zl_tran_sock_t: a pointer to an operations
 * table the socket layer fills in (sock/socket.c) and embeds in each
 * socket. Everything the engine asks of a socket goes through it; pipes
 * are opaque to the engine (zl_pipe_t is only ever declared here). The
 * other direction — sockets asking the engine to bind, connect, close an
 * endpoint or a connection — is engine.h.
 *
 * Records never cross this interface: they travel through the two queues
 * of a pipe (msg/queue.h). The engine is the reader of a pipe's out queue
 * and the writer of its in queue, and registers the queue-end notifies
 * that wake its I/O thread (engine.h explains the flow).
 *
 * Rules every operation below follows (the shape of nng's transport ops):
 *  - Thread: the calling I/O thread (the connection's or endpoint's loop),
 *    unless the operation says "any thread".
 *  - Locks: the engine holds no lock of its own when it calls one; the
 *    socket side takes its socket lock and queue locks inside and releases
 *    them before returning. No operation calls back into the engine while
 *    it holds a socket lock, except zl_conn_close, which only posts a task.
 *  - Blocking: none of them waits for another thread.
 */
#ifndef ZL_ENGINE_TRANSPORT_H
#define ZL_ENGINE_TRANSPORT_H

#include "msg/msg.h"
#include "msg/queue.h"
#include "util/rid.h"
#include "zlink.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct zl_pipe zl_pipe_t;          /* a socket's peer: opaque here */
typedef struct zl_conn zl_conn_t;          /* an engine connection */
typedef struct zl_endpoint zl_endpoint_t;  /* an engine listener or connecter */
typedef struct zl_tran_sock zl_tran_sock_t;
typedef struct zl_inproc_link zl_inproc_link_t; /* engine.h */

/* What the handshake learned about the peer (or, for inproc, what the
 * peer socket is). */
typedef struct zl_peer_info {
    int type;                 /* ZLINK_PAIR ... */
    zlink_routing_id_t rid;   /* as announced (size 0 = none) */
    uint32_t weight;          /* announced weight (default 100) */
    uint8_t lanes;            /* 1, or 2 for ROUTER-ROUTER */
} zl_peer_info_t;

/* The options a transport needs, copied from the socket at bind, connect
 * and each new connection (later option changes do not reach a live
 * connection). */
typedef struct zl_tran_opts {
    int sock_type;            /* ZLINK_PAIR ... of the local socket */
    uint64_t sndhwm, rcvhwm;  /* bytes, 0 = unlimited (inproc sizes its queues) */
    int64_t maxmsgsize;       /* <= 0 unlimited */
    int reconnect_ivl;        /* ms; -1 = no reconnect */
    int reconnect_ivl_max;    /* ms; 0 = no backoff */
    int backlog;
    int tcp_nodelay;
    int sndbuf, rcvbuf;       /* -1 = OS default */
    int ipv6;
    int handshake_ivl;        /* ms; 0 = none */
    int connect_timeout;      /* ms; 0 = the OS's */
    int zmp_metadata;
    uint32_t weight;          /* the weight we ask our peers for */
    int stream_mode;          /* STREAM: ZLINK_STREAM_RECV_RAW or _PACKET */
    int tcp_keepalive;        /* -1 OS default, 0 off, 1 on */
    int tcp_keepalive_cnt;    /* probes; -1 = OS default */
    int tcp_keepalive_idle;   /* s before the first probe; -1 = OS default */
    int tcp_keepalive_intvl;  /* s between probes; -1 = OS default */
    int tos;                  /* IP_TOS / IPV6_TCLASS; 0 = OS default */
    int tcp_maxrt;            /* TCP_USER_TIMEOUT ms; 0 = OS default */
    char bind_device[16];     /* SO_BINDTODEVICE; "" = none */
    zlink_routing_id_t rid;   /* own routing id (size 0 = none set) */
} zl_tran_opts_t;

/* A new pipe for a connection that finished its handshake. */
typedef struct zl_tran_pipe_args {
    uint64_t id;              /* connection id (zl_tran_next_id) */
    zl_conn_t *conn;          /* what zl_conn_close takes later */
    zl_endpoint_t *ep;        /* the endpoint it came through (NULL: inproc) */
    const zl_peer_info_t *peer;
    zl_q_end_t out_reader;    /* the engine's end of the out queue */
    zl_q_end_t in_writer;     /* the engine's end of the in queue */
} zl_tran_pipe_args_t;

typedef struct zl_tran_sock_ops {
    /* Copies the socket's current options for a new endpoint or
     * connection. */
    void (*get_opts)(zl_tran_sock_t *ts, zl_tran_opts_t *out);
    /* Whether the socket's context was shut down (why a connection ended,
     * for the monitor). Any thread; no lock. */
    bool (*terminated)(zl_tran_sock_t *ts);
    /* Creates a pipe with its two queues (HWM from the socket's options).
     * On success returns the pipe holding two references (the socket's and
     * the caller's) and sets *out / *in to its queues, which stay valid
     * while the caller's reference lives. On failure returns NULL with
     * errno ENOMEM; nothing was kept. */
    zl_pipe_t *(*pipe_new)(zl_tran_sock_t *ts, const zl_tran_pipe_args_t *a, zl_q_t **out,
                           zl_q_t **in);
    /* inproc: a pipe without queues yet (a->conn, a->ep and the ends in a
     * are unused; initiator tells the connecting side). Sets *reader to
     * the notify of this socket as the reader of its in queues and *writer
     * to this pipe's credit notify as the writer of its out queue; the
     * transport creates the queues with them and hands them over with
     * pipe_set_queues. The pipe holds two references (the socket's and the
     * caller's). NULL with errno ENOMEM. */
    zl_pipe_t *(*pipe_new_inproc)(zl_tran_sock_t *ts, const zl_tran_pipe_args_t *a,
                                  bool initiator, zl_q_end_t *reader, zl_q_end_t *writer);
    /* inproc: the pipe's queues (cmp_*: the Completion lane, or NULL) and
     * the link naming its side (zl_inproc_* of engine.h). The pipe takes
     * one reference on each queue (the peer's pipe holds the other). */
    void (*pipe_set_queues)(zl_pipe_t *p, zl_q_t *out, zl_q_t *in, zl_q_t *cmp_out,
                            zl_q_t *cmp_in, zl_inproc_link_t *link, int side);
    /* inproc: the peer queued control frames on one of this socket's in
     * queues (zl_inproc_controls_queued); the socket applies them at its
     * next call. Any thread, no lock held. */
    void (*controls_queued)(zl_tran_sock_t *ts);
    /* ROUTER-ROUTER: gives a pipe that is not yet attached its Completion
     * lane, two queues without HWM whose engine ends are out_reader and
     * in_writer. Returns 0 and sets *out / *in, or ENOMEM (the pipe is
     * unchanged). */
    int (*pipe_add_lane)(zl_pipe_t *p, zl_q_end_t out_reader, zl_q_end_t in_writer,
                         zl_q_t **out, zl_q_t **in);
    /* Offers the pipe to the socket's pattern. 0 when it is attached (the
     * socket now reads and writes its queues); otherwise an errno, and the
     * pipe is already ended on the socket's side: the caller must close the
     * connection and drop its own reference. */
    int (*pipe_attach)(zl_tran_sock_t *ts, zl_pipe_t *p);
    /* The connection ended: nothing more will be written to the in queue
     * and the out queue is abandoned. The socket keeps the pipe until it
     * has received what the in queue still holds. Called once per pipe. */
    void (*pipe_ended)(zl_tran_sock_t *ts, zl_pipe_t *p);
    /* A control frame arrived (WEIGHT, SUBSCRIBE, CANCEL, FLOWSTATE); f is
     * borrowed for the call. */
    void (*pipe_control)(zl_tran_sock_t *ts, zl_pipe_t *p, const zl_frame_t *f);
    /* Drops the caller's pipe reference (the memory goes with the last).
     * Any thread. */
    void (*pipe_unref)(zl_pipe_t *p);
    /* MAXMSGSIZE as the socket has it now (<= 0 unlimited), for a decoder
     * that takes the limit per message (STREAM PACKET, at each length
     * prefix). Any thread, no lock. */
    int64_t (*maxmsgsize_now)(zl_tran_sock_t *ts);
    /* The routing id the socket gave p at attach (STREAM names its peers
     * itself). Only for an attached pipe, on the I/O thread that attached
     * it (the id is not changed afterwards). */
    const zlink_routing_id_t *(*pipe_rid)(const zl_pipe_t *p);
    /* Socket monitor: whether an event is wanted (cheap; may be stale),
     * then the post (copies *ev, never blocks, drops when full). For
     * CONNECTION_READY, post_ready fills in the ready count and, while p is
     * attached, the routing id the socket uses for it. */
    bool (*monitor_wants)(zl_tran_sock_t *ts, uint32_t event);
    void (*monitor_post)(zl_tran_sock_t *ts, const zlink_monitor_event_t *ev);
    void (*monitor_post_ready)(zl_tran_sock_t *ts, zlink_monitor_event_t *ev, const zl_pipe_t *p);
} zl_tran_sock_ops_t;

/* Embedded in every socket; the engine keeps this pointer. */
struct zl_tran_sock {
    const zl_tran_sock_ops_t *ops;
};

/* Connection ids: unique in the process, nonzero, shared by tcp, ipc and
 * inproc (monitor events carry them). Any thread. */
uint64_t zl_tran_next_id(void);

/* Shorthands the engine's files call. */
static inline void zl_tran_get_opts(zl_tran_sock_t *ts, zl_tran_opts_t *o)
{
    ts->ops->get_opts(ts, o);
}
static inline bool zl_tran_terminated(zl_tran_sock_t *ts)
{
    return ts->ops->terminated(ts);
}
static inline void zl_tran_pipe_ended(zl_tran_sock_t *ts, zl_pipe_t *p)
{
    ts->ops->pipe_ended(ts, p);
}
static inline void zl_tran_pipe_control(zl_tran_sock_t *ts, zl_pipe_t *p, const zl_frame_t *f)
{
    ts->ops->pipe_control(ts, p, f);
}
static inline bool zl_tran_monitor_wants(zl_tran_sock_t *ts, uint32_t event)
{
    return ts->ops->monitor_wants(ts, event);
}
static inline void zl_tran_monitor_post(zl_tran_sock_t *ts, const zlink_monitor_event_t *ev)
{
    ts->ops->monitor_post(ts, ev);
}

#endif /* ZL_ENGINE_TRANSPORT_H */
