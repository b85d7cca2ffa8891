/*
 * engine_int.h — what the engine's own files share: the I/O thread, the
 * connection and the endpoint (listener or connecter) objects, and the
 * functions one engine file calls in another. Nothing outside
 * core/src/engine/ includes this; the rest of the core sees engine.h.
 *
 * Design notes (the whole engine)
 *  - One libuv loop per I/O thread (io.c). An endpoint and every connection
 *    made through it live on the endpoint's loop; all their fields are
 *    touched only by that thread, except the few marked "atomic" below.
 *    Other threads reach the loop only through zl_io_post (an MPSC task
 *    stack plus one coalescing uv_async_t).
 *  - Connection memory is type-stable: a zl_conn_t is never returned to
 *    malloc while its I/O thread runs. A closed connection goes to its io's
 *    free pool and may be reused for a later connection on the same io
 *    (its generation counter then changes). The queues of a pipe call the
 *    connection's notify functions from any thread with a plain pointer,
 *    possibly after the connection ended; with type-stable memory such a
 *    late call is harmless (it schedules a task that finds nothing to do).
 *    zl_conn_close checks the generation, so a late close never hits the
 *    connection that reused the memory.
 *  - Locks: the engine has none of its own. It calls into the socket layer
 *    (through transport.h) and the queues (queue.h), which take their own locks; it
 *    never holds anything while doing so.
 */
#ifndef ZL_ENGINE_INT_H
#define ZL_ENGINE_INT_H

#include "engine/engine.h"

#include "msg/msg.h"
#include "msg/queue.h"
#include "addr.h"
#include "wire/zmp.h"

#include <pthread.h>
#include <uv.h>

typedef struct zl_conn zl_conn_t;

/* STREAM PACKET mode: the decoder state of one connection (stream.c). A
 * packet is [u16 BE hlen][u32 BE blen][hdr][body]. */
typedef struct zl_stream_packet {
    uint8_t prefix[6];             /* the length prefix, as far as it came */
    uint8_t prefix_have;           /* 0..6 */
    bool in_body;                  /* prefix done: gathering hdr + body */
    uint16_t hlen;
    uint32_t blen;
    uint64_t have;                 /* bytes of hdr + body gathered in acc */
    zl_chunk_t *acc;               /* a packet cut by a read boundary,
                                      grown only with bytes that arrived */
} zl_stream_packet_t;

/* ------------------------------------------------------------ io.c */

struct zl_io {
    uv_loop_t loop;
    uv_async_t wake;
    pthread_t thread;
    _Atomic(zl_task_t *) tasks;   /* MPSC stack, newest first (atomic) */
    _Atomic bool closed;          /* wake handle closed: nothing runs anymore */
    /* Low-latency mode (io.c, "Spinning"): the window in ns (0: off), set
     * by the context from any thread; spinning is 1 while the loop polls
     * instead of sleeping, so posters skip the wake-up. */
    _Atomic int64_t spin_ns;
    _Atomic int spinning;
    uint64_t activity;            /* loop thread: tasks run and reads seen */
    bool stopping;                /* loop thread: destroy requested */
    int live;                     /* loop thread: listeners, connecters, conns */
    zl_conn_t *pool;              /* loop thread: closed conns to reuse */
    zl_conn_t *every;             /* every conn allocated here (freed at destroy) */
    zl_task_t stop_task;
    char name[16];
    /* Peer-close watch of paused connections (conn_read.c): an epoll set
     * of their descriptors, itself watched by hup_poll; made with the io
     * (hup_fd -1 if that failed), used on the loop thread, closed by
     * zl_io_destroy. */
    int hup_fd;
    uv_poll_t hup_poll;
};

/* Whether the calling thread is io's loop thread. */
bool zl_io_on_loop(const zl_io_t *io);

/* Counts a live object on io (delta +1 or -1). When the last one goes while a destroy waits, the loop closes its
 * remaining handles and ends. Loop thread only. */
void zl_io_live_add(zl_io_t *io, int delta);

/* ------------------ conn.c, conn_read.c, conn_write.c, handshake.c */

typedef enum zl_conn_state {
    ZL_CS_FREE = 0,     /* in the io's pool */
    ZL_CS_CONNECTING,   /* connecter: uv connect in progress */
    ZL_CS_HANDSHAKE,    /* exchanging HELLO / READY */
    ZL_CS_WAIT_PARTNER, /* ROUTER-ROUTER: validated, waiting for the other lane */
    ZL_CS_ACTIVE,       /* pipe attached, data flows */
    ZL_CS_LINGER,       /* closing: flushing output, no more reading */
    ZL_CS_CLOSING       /* uv handles closing; then back to the pool */
} zl_conn_state_t;

/* Why the conn's timer runs. */
enum { ZL_TIMER_NONE, ZL_TIMER_CONNECT, ZL_TIMER_HANDSHAKE, ZL_TIMER_LINGER };

struct zl_conn {
    /* Type-stable identity (see design notes). */
    zl_io_t *io;
    zl_conn_t *pool_next;
    zl_conn_t *every_next;
    _Atomic uint64_t gen;          /* bumped each time the memory is reused */

    /* Wake-ups from other threads (atomic flag + embedded task). A flag is
     * cleared only by its task, so a task is never queued twice. */
    _Atomic bool wkick;            /* out queue has records: write */
    zl_task_t wkick_task;
    _Atomic bool rkick;            /* in queue has room again: read */
    zl_task_t rkick_task;
    /* A close request whose memory could not be allocated (zl_conn_close):
     * the newest generation it was made for plus one (0: none), and its
     * flag + task, cleared by the task as above. */
    _Atomic uint64_t oom_close_gen;
    _Atomic bool oom_close_kick;
    zl_task_t oom_close_task;
    /* Direct write (conn_write.c): a sending thread that finds the
     * connection idle writes the queued records itself instead of waking
     * the loop. dw is ZL_DW_OPEN while the loop allows it (ACTIVE, ZMP, no
     * handshake write pending) plus ZL_DW_HELD while one thread, a sender
     * or the loop, owns the write side: the fields marked "write side"
     * below are touched only by that holder. dw_last_ns is when the last
     * write ended (monotonic clock), read by senders for the gap rule. */
    _Atomic unsigned dw;
    _Atomic int64_t dw_last_ns;

    /* Everything below: loop thread only. */
    zl_conn_state_t state;
    uint64_t id;                   /* connection id (monitor events; the pipe's id) */
    int handles;                   /* uv handles open (stream, timer) */
    zl_tran_sock_t *sock;
    int sock_type;
    zl_endpoint_t *ep;
    zl_conn_t *ep_prev, *ep_next;  /* ep->conns */
    zl_conn_t *partner;            /* ROUTER-ROUTER: the other lane */
    uint8_t lane;                  /* 0 or 1 */
    uint8_t lanes;                 /* 1 or 2 once known */
    bool initiator;                /* we connected (connecter side) */
    bool raw;                      /* STREAM: no ZMP */
    bool ipc;
    bool established;              /* a pipe was attached at some point */
    bool pipe_owner;               /* holds the pipe reference (lane 0) */
    bool pipe_done;                /* the pipe has been ended (or refused) */
    bool has_handles;              /* the stream handle was initialized */
    bool has_timer;                /* the timer was initialized */
    int err;                       /* why it ended (0 = local close) */
    uint8_t zmp_code;              /* ERROR code sent or received */
    zl_tran_opts_t opts;            /* snapshot at connect / accept */
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    uv_timer_t timer;
    int timer_mode;
    uv_connect_t creq;

    /* Handshake. */
    bool hello_recv, ready_recv, ready_queued, ready_written;
    zl_peer_info_t peer;
    int hs_writes;                 /* handshake writes in flight */
    uint8_t hs_buf[ZMP_HELLO_MAX + ZMP_READY_MAX];
    uint8_t ready_buf[ZMP_READY_MAX];
    uv_write_t hs_req[2];

    /* The pipe (shared by both lanes; only lane 0 owns a reference).
     * Lane 0 uses the pipe's out/in, lane 1 its cmp_out/cmp_in. */
    zl_pipe_t *pipe;
    zl_q_t *out, *in;

    /* Write side (owned by the dw holder; see dw above). wq holds records
     * taken from the out queue; the first wn frames are in the write in
     * flight. A direct write the kernel took only part of leaves the rest
     * as iov[wres_first, +wres_n) with wresume set, and one that failed
     * leaves werr; the loop then issues the uv_write or ends the conn. */
    zl_fq_t wq;
    size_t wn;
    uint64_t w_taken;              /* charge taken from out, not yet released */
    bool writing;
    bool wmid;                     /* the encoder is inside a multipart record */
    uint8_t *wbuf;
    size_t wbuf_cap;
    uv_buf_t *iov;
    size_t iov_cap;
    uv_write_t wreq;
    bool wresume;
    int werr;
    unsigned wres_first, wres_n;
    int fd;                        /* the stream's descriptor (set before dw opens) */
    bool dw_mine;                  /* loop thread: the loop holds dw */

    /* Read side. chunk->data[rpos..rlen) is unparsed input. */
    zl_chunk_t *chunk;
    size_t rpos, rlen;
    size_t rneed;                  /* bytes from rpos the next frame needs */
    size_t rbig;                   /* largest frame (header + body) above a
                                      chunk decoded from this chunk, 0 if none:
                                      the next chunk's size (conn_read.c) */
    bool reading;                  /* uv_read_start in effect */
    bool rd_full;                  /* (lane 0) in queue at its HWM: reads stopped */
    bool paused;                   /* reads stopped for a limit (HWM, early input) */
    bool watched;                  /* paused: in the io's peer-close set (conn_read.c) */
    bool draining;                 /* the peer is gone: read what is left, no limits */
    zmp_decoder_t dec;
    zl_fq_t rbatch;                /* whole records not yet delivered */
    size_t rrecords;
    uint64_t rcharge;
    zl_fq_t rpart;                 /* frames of the record in progress */
    uint64_t rpart_charge;
    uint32_t slice_refs_owed;      /* chunk references taken but not yet counted */
    bool packets;                  /* STREAM in PACKET mode (opts snapshot) */
    zl_stream_packet_t pkt;        /* its decoder (stream.c) */
};

/* A fresh connection on io for ep (state CONNECTING, no handles yet), with
 * its options snapshot taken from the socket. Linked into ep->conns and
 * counted live. Returns NULL on allocation failure. Loop thread. */
zl_conn_t *zl_conn_new(zl_io_t *io, zl_endpoint_t *ep, bool initiator, uint8_t lane);
/* Initializes the conn's stream handle (tcp or pipe) and timer. Returns 0
 * or a negative libuv error; on failure the conn is already ending (the
 * caller must not use it again). Loop thread. */
int zl_conn_init_handles(zl_conn_t *c, bool ipc);
/* The transport is up (connected or accepted): set socket options, start
 * the handshake (or, for STREAM, attach the pipe at once). Loop thread. */
void zl_conn_start(zl_conn_t *c);
/* Ends the connection now: discards unsent output, ends the pipe (if any),
 * closes its handles, then returns it to the pool and tells its endpoint.
 * err is why (0 = local). Idempotent. Loop thread. */
void zl_conn_terminate(zl_conn_t *c, int err);
/* Closes with linger: flushes the output for up to linger_ms, then ends.
 * Loop thread. */
void zl_conn_shutdown(zl_conn_t *c, int linger_ms);
/* Arms the conn's timer (any mode). Loop thread. */
void zl_conn_timer(zl_conn_t *c, int mode, uint64_t ms);
/* The conn's handshake finished and, for ROUTER-ROUTER, both lanes are
 * paired: creates and attaches the pipe for c (lane 0) and its partner.
 * Loop thread. */
void zl_conn_attach(zl_conn_t *c);

/* Queue notify functions registered on the pipe (conn.c): the out queue's
 * reader (records arrived, or its writer closed) and the in queue's writer
 * (room again below the LWM). Any thread; they set an atomic flag and post
 * the conn's embedded task at most once. arg is the conn of that lane. */
void zl_conn_out_notify(void *arg);
void zl_conn_in_notify(void *arg);
/* Schedules a pump on the loop (a yield from a long pump). Any thread. */
void zl_conn_kick_write(zl_conn_t *c);

/* Direct write (conn_write.c). zl_conn_write_direct is tried by the out
 * queue's notify on a sending thread: it returns true when it wrote the
 * queued records or left them to a write already under way (or to a pump
 * it scheduled), false when the caller must schedule the loop's pump as
 * before. zl_conn_dw_open allows it once the conn is ACTIVE and its
 * handshake writes are done; zl_conn_dw_close forbids it and waits for a
 * sender inside to leave. Both loop thread. */
#define ZL_DW_OPEN 1u
#define ZL_DW_HELD 2u
bool zl_conn_write_direct(zl_conn_t *c);
void zl_conn_dw_open(zl_conn_t *c);
void zl_conn_dw_close(zl_conn_t *c);
/* Protocol failure: sends ERROR(code) if the transport takes it at once
 * (code 0: none), then zl_conn_terminate(c, err). Loop thread. */
void zl_conn_fail(zl_conn_t *c, int err, uint8_t code);

/* conn_read.c: decodes every whole frame buffered in the chunk while the
 * state allows (HANDSHAKE before the peer's READY, or ACTIVE); may end the
 * connection. Loop thread. */
void zl_conn_parse(zl_conn_t *c);
/* conn_read.c: libuv read callback of ZMP connections. */
void zl_conn_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* handshake.c: sends our HELLO (and READY for types without lanes) when
 * the transport is up. Loop thread. */
void zl_hs_start(zl_conn_t *c);
/* handshake.c: one frame received during the handshake (h, body in the
 * chunk). Loop thread; may attach or end the connection. */
void zl_hs_frame(zl_conn_t *c, const zmp_hdr_t *h, const uint8_t *body);
/* handshake.c: a frame that is not CONTROL arrived during the handshake
 * (protocol.md section 5 rule 12): fails the connection with ERROR
 * HELLO_MALFORMED before the peer's HELLO, UNEXPECTED after it. Called as
 * soon as the frame's first four header bytes are in, so its body is never
 * waited for. Loop thread; ends the connection. */
void zl_hs_refuse_data(zl_conn_t *c);

/* conn_read.c: adds the chunk references owed by slices made since the
 * last call (one atomic add per read instead of one per message). Must run
 * before any of those slices can be released or seen by another thread. */
void zl_conn_commit_slices(zl_conn_t *c);
/* conn_read.c: read plumbing shared with stream.c. Loop thread.
 * zl_conn_read_start resumes reading (and drops the peer-close watch);
 * zl_conn_read_stop stops for good (linger: no more input wanted);
 * zl_conn_read_pause stops because a limit was reached (RCVHWM, early
 * input held during the handshake) and keeps watching for the peer's
 * close or reset, so a paused connection still ends when its peer goes:
 * during the handshake at once, afterwards once the bytes the peer sent
 * before closing are read (they are finite then, so the HWM is ignored). */
void zl_conn_read_start(zl_conn_t *c);
void zl_conn_read_stop(zl_conn_t *c);
void zl_conn_read_pause(zl_conn_t *c);
/* conn_read.c: makes io's peer-close set and starts its poll handle;
 * called by zl_io_new before the loop thread starts. On failure (no
 * descriptor) io->hup_fd stays -1 and paused conns go unwatched. */
void zl_io_hup_init(zl_io_t *io);
/* conn_read.c: takes c out of its io's peer-close set, if it is in it.
 * Must run before c's descriptor closes. Loop thread; never fails. */
void zl_conn_watch_stop(zl_conn_t *c);
/* Delivers the batch of whole records collected by this read to the in
 * queue; stops reading when it is full. Loop thread. */
void zl_conn_flush_batch(zl_conn_t *c);
/* Makes room for at least want bytes at chunk->data[rlen..): reuses the
 * current chunk when nobody else holds it, or moves the unparsed tail into
 * a new chunk of at least `size` bytes. Returns false when out of memory. */
bool zl_conn_reserve(zl_conn_t *c, size_t want, size_t size);
/* conn_write.c: writes what the out queue holds, until it is empty or the
 * kernel is full (then continues from the write callback); ends the conn
 * when an EOF or a linger finds nothing left. Loop thread. */
void zl_conn_pump(zl_conn_t *c);

/* --------------------------------------------------------- stream.c */

/* STREAM connection up: creates and attaches the pipe, starts reading. */
void zl_stream_start(zl_conn_t *c);
/* libuv read callback for STREAM connections. */
void zl_stream_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
/* Drops a packet the PACKET decoder was still gathering (never delivered).
 * Called by conn_finish when the connection's memory goes back to the
 * pool; idempotent. Loop thread. */
void zl_stream_discard(zl_conn_t *c);

/* --------------------------------------- endpoint.c, listener.c, connecter.c */

enum { ZL_EP_LISTENER = 1, ZL_EP_CONNECTER = 2 };

struct zl_endpoint {
    int kind;
    zl_io_t *io;
    zl_tran_sock_t *sock;
    int sock_type;
    zl_addr_t addr;
    char *requested;               /* as the user wrote it */
    char name[ZL_ADDR_NAME_MAX];   /* resolved (bind) or as written */
    zl_tran_opts_t opts;            /* snapshot at bind / connect */
    zl_conn_t *conns;              /* loop: every live conn made through ep */

    /* Close request (any thread -> loop). */
    _Atomic bool close_posted;
    int close_linger;              /* written before the post */
    zl_task_t close_task;
    bool closing;                  /* loop */
    int handles;                   /* loop: uv handles owned by ep */

    /* Listener. */
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } srv;
    bool unlink_path;              /* ipc: remove the socket file on close */
    /* Refusing a connection we could not take (listener.c): the pending
     * descriptor is accepted into this handle and closed at once. */
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } refuse;
    bool refusing;                 /* refuse is closing (counted in handles) */
    bool refuse_next;              /* one more waits until refuse is free */

    /* Connecter. */
    uv_timer_t retry;
    uv_getaddrinfo_t gai;
    bool gai_pending;
    bool retry_armed;
    int cur_ivl;                   /* next reconnect delay (ms) */
    int retry_delay;               /* delay of the armed retry (monitor events) */
    zl_conn_t *lane0, *lane1;      /* the connection in use (and its lane 1) */
    bool have_sa;
    struct sockaddr_storage sa;    /* resolved peer address */
};

/* ep's list of conns. Loop thread. */
void zl_ep_link_conn(zl_endpoint_t *ep, zl_conn_t *c);
void zl_ep_unlink_conn(zl_endpoint_t *ep, zl_conn_t *c);
/* A conn of ep finished closing (called by conn.c after it unlinked c).
 * Lets a connecter schedule its reconnect; frees a closing ep once idle.
 * Loop thread. */
void zl_ep_conn_gone(zl_endpoint_t *ep, zl_conn_t *c);
/* Frees ep when it is closing and owns nothing anymore. Loop thread. */
void zl_ep_maybe_free(zl_endpoint_t *ep);
/* Allocates an endpoint (not yet counted live). NULL on ENOMEM. */
zl_endpoint_t *zl_ep_alloc(zl_tran_sock_t *s, zl_io_t *io, int kind, const char *requested);
/* Frees an endpoint that never went live (bind / connect failed). */
void zl_ep_discard(zl_endpoint_t *ep);

/* listener.c: ROUTER-ROUTER lane 1 arrived on a listener: the lane-0 conn
 * of the same peer waiting for it, or NULL. Loop thread. */
zl_conn_t *zl_listener_find_lane0(zl_endpoint_t *ep, const zl_conn_t *lane1);
/* listener.c / connecter.c: stop the endpoint's own handles (close path). */
void zl_listener_stop(zl_endpoint_t *ep);
void zl_connecter_stop(zl_endpoint_t *ep);
/* connecter.c: lane 0 of a ROUTER-ROUTER connection validated; open lane 1
 * to the same address. Loop thread. */
void zl_connecter_open_lane1(zl_endpoint_t *ep, zl_conn_t *lane0);
/* connecter.c: a conn of this connecter is gone; maybe reconnect. */
void zl_connecter_conn_gone(zl_endpoint_t *ep, zl_conn_t *c);

/* ----------------------------------------------------------- tcp_opts.c
 *
 * The options that tune a tcp fd (see tcp_opts.c for when each applies).
 * Each returns 0 or the errno of the first setsockopt the kernel refused;
 * nothing is allocated. */

/* Before bind or connect: BINDTODEVICE and TOS on fd of family. Loop
 * thread (listener) or wherever the fd was made. */
int zl_tcp_tune_early(int fd, int family, const zl_tran_opts_t *o);
/* An outgoing tcp handle that has no fd yet: when o sets BINDTODEVICE or
 * TOS, makes the fd now (family of the peer address), tunes it and gives it
 * to h; otherwise does nothing and libuv makes the fd at connect. On
 * failure h is left without fd. Loop thread. */
int zl_tcp_open_early(uv_tcp_t *h, int family, const zl_tran_opts_t *o);
/* An established connection (accepted or connected): keepalive, TCP_MAXRT
 * and TOS. Loop thread. */
int zl_tcp_tune_conn(uv_tcp_t *h, const zl_tran_opts_t *o);
/* zl_engine_connect, application thread: a BINDTODEVICE name that is set
 * must name an existing interface (else ENODEV) this process may bind to
 * (else the kernel's errno, e.g. EPERM), so a connect fails at once instead
 * of retrying for ever. 0 when no device is set. */
int zl_tcp_device_check(const char *dev);

/* ------------------------------------------- conn_events.c (socket monitor)
 *
 * Build and post monitor events (monitor.h) for a connection or an
 * endpoint; each does nothing, cheaply, when the socket has no monitor
 * subscribed to the event. Loop thread, except zl_engine_bind_failed (the
 * application thread that called zl_engine_bind). No locks held. */

/* CONNECTED, ACCEPTED: value, the conn's addresses, lane and id. */
void zl_conn_event(zl_conn_t *c, uint32_t event, uint64_t value);
/* CONNECTION_READY edge after the pipe attached (one per logical peer). */
void zl_conn_event_ready(zl_conn_t *c);
/* The conn ended (from zl_conn_terminate, after its pipe ended; was = the
 * state before CLOSING): HANDSHAKE_FAILED_* when the handshake failed,
 * DISCONNECTED when the transport had been up, and a CONNECTION_READY
 * count snapshot when a ready peer went away. */
void zl_conn_event_ended(zl_conn_t *c, zl_conn_state_t was);
/* LISTENING, CLOSED, ACCEPT_FAILED, CONNECT_RETRIED: the endpoint's
 * address as local (listener) or remote (connecter). */
void zl_ep_event(zl_endpoint_t *ep, uint32_t event, uint64_t value);
/* CONNECT_DELAYED: a retry was armed in delay_ms (kept in ep->retry_delay
 * for the CONNECT_RETRIED that follows). */
void zl_ep_event_retry_armed(zl_endpoint_t *ep, int delay_ms);
/* BIND_FAILED for a zl_engine_bind that returned err. */
void zl_engine_bind_failed(zl_tran_sock_t *s, const char *endpoint, int err);

#endif /* ZL_ENGINE_INT_H */
