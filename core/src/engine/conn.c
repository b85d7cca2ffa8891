/*
 * conn.c — one engine connection: its life (allocation from the io's pool,
 * timers, close with linger, return to the pool), the cross-thread kicks,
 * and attaching the pipe once the handshake is done. The read path is in
 * conn_read.c, the write path in conn_write.c, the ZMP handshake in
 * handshake.c, raw STREAM reads in stream.c.
 *
 * Design notes
 *  - Owns: the uv stream handle (tcp or unix pipe), a timer (connect,
 *    handshake or linger deadline), the private frame FIFOs (wq: taken from
 *    the out queue and being written; rbatch: decoded whole records of this
 *    read; rpart: the record in progress), the receive chunk, the write
 *    buffer, and (lane 0) one reference on the pipe.
 *  - Threads: everything runs on the conn's I/O thread, except the two
 *    queue notify functions (zl_conn_out_notify, zl_conn_in_notify) and
 *    zl_conn_close, which any thread may call; they set an atomic flag
 *    or allocate a request, and post a task (see engine_int.h on why stale
 *    calls are harmless), or, for an idle connection, write its output on
 *    the calling thread (conn_write.c, "Direct write"). A close request
 *    that cannot be allocated falls back to a flag and a task embedded in
 *    the conn, which refuse the connection (ENOMEM) instead of closing it
 *    with its linger.
 *  - Locks: none here. The queue functions lock their queue; the socket
 *    calls (transport.h) lock the socket. Nothing is held across them.
 *  - Life: CONNECTING -> HANDSHAKE -> [WAIT_PARTNER] -> ACTIVE -> [LINGER]
 *    -> CLOSING -> FREE (pool). zl_conn_terminate is the single way into
 *    CLOSING; it ends the pipe exactly once (lane 0), closes the handles,
 *    and cascades to the partner lane. Memory is released (to the io's
 *    pool) when the last handle's close callback ran, after every pending
 *    write callback (libuv cancels them first).
 */
#include "engine_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* --------------------------------------------------- cross-thread kicks */

void zl_conn_kick_write(zl_conn_t *c)
{
    if (!atomic_exchange_explicit(&c->wkick, true, memory_order_acq_rel))
        zl_io_post(c->io, &c->wkick_task);
}

/* Out queue reader notify: records arrived after we found it empty (or its
 * writer closed). Any thread; no queue lock held (a socket lock may be).
 * An idle connection is written by the sending thread itself. */
void zl_conn_out_notify(void *arg)
{
    zl_conn_t *c = arg;
    if (!zl_conn_write_direct(c))
        zl_conn_kick_write(c);
}

static void conn_on_wkick(zl_task_t *t)
{
    zl_conn_t *c = CONTAINER(t, zl_conn_t, wkick_task);
    atomic_store_explicit(&c->wkick, false, memory_order_release);
    zl_conn_pump(c);
}

/* In queue writer notify: the reader made room below the LWM. Any thread. */
void zl_conn_in_notify(void *arg)
{
    zl_conn_t *c = arg;
    if (!atomic_exchange_explicit(&c->rkick, true, memory_order_acq_rel))
        zl_io_post(c->io, &c->rkick_task);
}

static void conn_on_rkick(zl_task_t *t)
{
    zl_conn_t *c = CONTAINER(t, zl_conn_t, rkick_task);
    atomic_store_explicit(&c->rkick, false, memory_order_release);
    if (c->state != ZL_CS_ACTIVE || !c->pipe_owner || !c->rd_full)
        return;
    c->rd_full = false;
    zl_conn_read_start(c);
}

static void conn_on_oom_close(zl_task_t *t);

/* ---------------------------------------------------------- allocation */

zl_conn_t *zl_conn_new(zl_io_t *io, zl_endpoint_t *ep, bool initiator, uint8_t lane)
{
    zl_conn_t *c = io->pool;
    if (c != NULL) {
        io->pool = c->pool_next;
    } else {
        c = calloc(1, sizeof *c);
        if (c == NULL)
            return NULL;
        c->io = io;
        c->every_next = io->every;
        io->every = c;
        c->wkick_task.fn = conn_on_wkick;
        c->rkick_task.fn = conn_on_rkick;
        c->oom_close_task.fn = conn_on_oom_close;
    }
    /* Reset everything the loop owns; keep identity, flags and tasks (a
     * stale kick may still be queued: its flag stays set until it runs). */
    memset((char *)c + offsetof(zl_conn_t, state), 0,
           sizeof *c - offsetof(zl_conn_t, state));
    c->pool_next = NULL;
    c->state = ZL_CS_CONNECTING;
    c->id = zl_tran_next_id();
    c->sock = ep->sock;
    c->sock_type = ep->sock_type;
    c->ep = ep;
    c->initiator = initiator;
    c->lane = lane;
    c->lanes = 1;
    c->raw = ep->sock_type == ZLINK_STREAM;
    zl_tran_get_opts(ep->sock, &c->opts);
    c->peer.weight = ZLINK_WEIGHT_DFLT;
    c->peer.lanes = 1;
    zl_fq_init(&c->wq);
    zl_fq_init(&c->rbatch);
    zl_fq_init(&c->rpart);
    zl_ep_link_conn(ep, c);
    zl_io_live_add(io, 1);
    return c;
}

static void conn_on_closed(uv_handle_t *h);

int zl_conn_init_handles(zl_conn_t *c, bool ipc)
{
    uv_loop_t *loop = &c->io->loop;
    int rc = ipc ? uv_pipe_init(loop, &c->h.pipe, 0) : uv_tcp_init(loop, &c->h.tcp);
    if (rc != 0) {
        zl_conn_terminate(c, -rc); /* no handle yet: finishes at once */
        return rc;
    }
    c->h.handle.data = c;
    c->handles = 1;
    c->has_handles = true;
    c->ipc = ipc;
    rc = uv_timer_init(loop, &c->timer);
    if (rc != 0) {
        zl_conn_terminate(c, -rc);
        return rc;
    }
    c->timer.data = c;
    c->handles = 2;
    c->has_timer = true;
    return 0;
}

/* Returns the conn to the pool once nothing references it. Loop thread. */
static void conn_finish(zl_conn_t *c)
{
    zl_io_t *io = c->io;
    zl_fq_clear(&c->wq);
    if (c->pipe_owner && c->out != NULL && c->w_taken > 0)
        zl_q_release(c->out, c->w_taken);
    c->w_taken = 0;
    c->wn = 0;
    zl_fq_fini(&c->wq);
    zl_fq_fini(&c->rbatch);
    zl_fq_fini(&c->rpart);
    if (c->chunk != NULL) {
        zl_chunk_release(c->chunk);
        c->chunk = NULL;
    }
    zl_stream_discard(c); /* a STREAM packet cut by the end */
    free(c->wbuf);
    c->wbuf = NULL;
    c->wbuf_cap = 0;
    free(c->iov);
    c->iov = NULL;
    c->iov_cap = 0;
    zl_pipe_t *pipe = c->pipe_owner ? c->pipe : NULL;
    c->pipe = NULL;
    c->out = c->in = NULL;
    zl_endpoint_t *ep = c->ep;
    zl_ep_unlink_conn(ep, c);
    zl_ep_conn_gone(ep, c); /* may free ep */
    c->ep = NULL;
    if (pipe != NULL)
        c->sock->ops->pipe_unref(pipe);
    atomic_fetch_add(&c->gen, 1);
    c->state = ZL_CS_FREE;
    c->pool_next = io->pool;
    io->pool = c;
    zl_io_live_add(io, -1); /* may end a stopping io */
}

static void conn_on_closed(uv_handle_t *h)
{
    zl_conn_t *c = h->data;
    if (--c->handles == 0)
        conn_finish(c);
}

/* ------------------------------------------------------------ closing */

void zl_conn_terminate(zl_conn_t *c, int err)
{
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE)
        return;
    zl_conn_dw_close(c); /* no sender writes from here on */
    zl_conn_state_t was = c->state;
    c->state = ZL_CS_CLOSING;
    if (c->err == 0)
        c->err = err;
    zl_conn_t *p = c->partner;
    c->partner = NULL;
    if (p != NULL)
        p->partner = NULL;
    if (c->pipe_owner && c->pipe != NULL && !c->pipe_done) {
        c->pipe_done = true;
        zl_tran_pipe_ended(c->sock, c->pipe);
    }
    if (!c->pipe_owner) {
        c->pipe = NULL;
        c->in = NULL;
        c->out = NULL;
    }
    zl_conn_event_ended(c, was); /* monitor: HANDSHAKE_FAILED_*, DISCONNECTED */
    /* A partial record is discarded, never delivered. */
    if (c->chunk != NULL)
        zl_conn_commit_slices(c);
    zl_fq_clear(&c->rbatch);
    zl_fq_clear(&c->rpart);
    c->rrecords = 0;
    c->rcharge = c->rpart_charge = 0;
    c->reading = false;
    if (c->has_handles) {
        if (c->has_timer) {
            uv_timer_stop(&c->timer);
            uv_close((uv_handle_t *)&c->timer, conn_on_closed);
        }
        zl_conn_watch_stop(c); /* before the descriptor closes */
        if (!uv_is_closing(&c->h.handle))
            uv_close(&c->h.handle, conn_on_closed);
    } else {
        conn_finish(c);
    }
    if (p != NULL)
        zl_conn_terminate(p, err);
}

/* Protocol failure: tells the peer why (best effort, never blocks), then
 * ends the connection. Loop thread. */
void zl_conn_fail(zl_conn_t *c, int err, uint8_t code)
{
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE)
        return;
    zl_conn_dw_close(c); /* the ERROR must not cut into a sender's write */
    if (code != 0 && !c->raw && c->has_handles) {
        uint8_t buf[ZMP_ERROR_MAX];
        const char *why;
        switch (code) {
        case ZMP_ERR_HELLO: why = "bad HELLO"; break;
        case ZMP_ERR_INCOMPATIBLE: why = "incompatible socket types"; break;
        case ZMP_ERR_BODY_TOO_LARGE: why = "body too large"; break;
        case ZMP_ERR_READY: why = "bad READY"; break;
        case ZMP_ERR_UNEXPECTED: why = "unexpected frame"; break;
        case ZMP_ERR_TIMEOUT: why = "handshake timeout"; break;
        case ZMP_ERR_LANE: why = "no lane to pair with"; break;
        case ZMP_ERR_REFUSED: why = "peer refused"; break;
        case ZMP_ERR_INTERNAL: why = "out of memory"; break;
        default: why = "malformed frame"; break;
        }
        size_t n = zmp_build_error(buf, sizeof buf, code, why);
        uv_buf_t b = uv_buf_init((char *)buf, (unsigned)n);
        (void)uv_try_write(&c->h.stream, &b, 1);
        c->zmp_code = code;
    }
    zl_conn_terminate(c, err);
}

static void conn_on_timer(uv_timer_t *t)
{
    zl_conn_t *c = t->data;
    int mode = c->timer_mode;
    c->timer_mode = ZL_TIMER_NONE;
    switch (mode) {
    case ZL_TIMER_CONNECT: zl_conn_terminate(c, ETIMEDOUT); break;
    case ZL_TIMER_HANDSHAKE: zl_conn_fail(c, ETIMEDOUT, ZMP_ERR_TIMEOUT); break;
    case ZL_TIMER_LINGER: zl_conn_terminate(c, 0); break;
    default: break;
    }
}

void zl_conn_timer(zl_conn_t *c, int mode, uint64_t ms)
{
    if (!c->has_timer)
        return;
    c->timer_mode = mode;
    if (mode == ZL_TIMER_NONE)
        uv_timer_stop(&c->timer);
    else
        uv_timer_start(&c->timer, conn_on_timer, ms, 0);
}

void zl_conn_shutdown(zl_conn_t *c, int linger_ms)
{
    switch (c->state) {
    case ZL_CS_FREE:
    case ZL_CS_CLOSING:
        return;
    case ZL_CS_LINGER:
        if (linger_ms == 0)
            zl_conn_terminate(c, 0);
        return;
    case ZL_CS_ACTIVE:
        if (!c->pipe_owner) {
            /* Lane 1 closes with its lane 0. */
            if (c->partner == NULL)
                zl_conn_terminate(c, 0);
            return;
        }
        if (linger_ms == 0) {
            zl_conn_terminate(c, 0);
            return;
        }
        zl_conn_dw_close(c); /* the loop flushes and ends it */
        c->state = ZL_CS_LINGER;
        zl_conn_read_stop(c);
        if (c->partner != NULL)
            zl_conn_read_stop(c->partner); /* lane 1 keeps writing meanwhile */
        if (linger_ms > 0)
            zl_conn_timer(c, ZL_TIMER_LINGER, (uint64_t)linger_ms);
        zl_conn_pump(c); /* ends it once nothing is left to write */
        return;
    default:
        zl_conn_terminate(c, 0);
        return;
    }
}

typedef struct close_req {
    zl_task_t task;
    zl_conn_t *c;
    uint64_t gen;
    int linger;
} close_req_t;

static void conn_on_close_req(zl_task_t *t)
{
    close_req_t *r = (close_req_t *)t;
    if (atomic_load(&r->c->gen) == r->gen)
        zl_conn_shutdown(r->c, r->linger);
    free(r);
}

/* The embedded fallback of zl_conn_close (see conn_close_without_memory).
 * Loop thread. The flag is cleared before the generation is taken, so a
 * request recorded after the take posts the task again. */
static void conn_on_oom_close(zl_task_t *t)
{
    zl_conn_t *c = CONTAINER(t, zl_conn_t, oom_close_task);
    atomic_store(&c->oom_close_kick, false);
    uint64_t want = atomic_exchange(&c->oom_close_gen, 0);
    if (want != 0 && want - 1 == atomic_load(&c->gen))
        zl_conn_fail(c, ENOMEM, ZMP_ERR_INTERNAL);
}

/* zl_conn_close could not allocate its request: records the generation in
 * the conn itself and posts the conn's embedded task, which refuses the
 * connection (ERROR INTERNAL to the peer, ended with ENOMEM: monitored as
 * any local failure) without its linger. Only the newest generation is
 * kept: an older one's connection has already ended, since the generation
 * changes only when the memory is reused. Any thread; allocates nothing. */
static void conn_close_without_memory(zl_conn_t *c, uint64_t gen)
{
    uint64_t cur = atomic_load(&c->oom_close_gen);
    while (cur < gen + 1 && !atomic_compare_exchange_weak(&c->oom_close_gen, &cur, gen + 1)) {
    }
    if (!atomic_exchange(&c->oom_close_kick, true))
        zl_io_post(c->io, &c->oom_close_task);
}

void zl_conn_close(zl_conn_t *c, int linger_ms)
{
    if (c == NULL)
        return;
    uint64_t gen = atomic_load(&c->gen);
    close_req_t *r = malloc(sizeof *r);
    if (r == NULL) {
        conn_close_without_memory(c, gen);
        return;
    }
    r->task.fn = conn_on_close_req;
    r->c = c;
    r->gen = gen;
    r->linger = linger_ms;
    zl_io_post(c->io, &r->task);
}

void zl_conn_start(zl_conn_t *c)
{
    if (!c->ipc) {
        int rc = zl_tcp_tune_conn(&c->h.tcp, &c->opts);
        if (rc != 0) {
            zl_conn_terminate(c, rc); /* the kernel refused an option */
            return;
        }
        uv_tcp_nodelay(&c->h.tcp, c->opts.tcp_nodelay != 0);
    }
    if (c->opts.sndbuf > 0) {
        int v = c->opts.sndbuf;
        uv_send_buffer_size(&c->h.handle, &v);
    }
    if (c->opts.rcvbuf > 0) {
        int v = c->opts.rcvbuf;
        uv_recv_buffer_size(&c->h.handle, &v);
    }
    zl_conn_timer(c, ZL_TIMER_NONE, 0);
    if (c->raw) {
        zl_stream_start(c);
        return;
    }
    c->state = ZL_CS_HANDSHAKE;
    zmp_decoder_init(&c->dec, c->opts.maxmsgsize);
    c->rneed = ZMP_HDR_LEN;
    if (c->opts.handshake_ivl > 0)
        zl_conn_timer(c, ZL_TIMER_HANDSHAKE, (uint64_t)c->opts.handshake_ivl);
    zl_hs_start(c);
    zl_conn_read_start(c);
}

/* ------------------------------------------------------------ attaching */

void zl_conn_attach(zl_conn_t *c)
{
    zl_conn_t *c1 = c->partner;
    zl_q_end_t rd = {zl_conn_out_notify, c};
    zl_q_end_t wr = {zl_conn_in_notify, c};
    const zl_tran_sock_ops_t *ops = c->sock->ops;
    zl_tran_pipe_args_t args = {
        .id = c->id, /* one connection id from CONNECTED to DISCONNECTED */
        .conn = c,
        .ep = c->ep,
        .peer = &c->peer,
        .out_reader = rd,
        .in_writer = wr,
    };
    zl_q_t *out, *in;
    zl_pipe_t *pipe = ops->pipe_new(c->sock, &args, &out, &in);
    if (pipe == NULL) {
        zl_conn_fail(c, ENOMEM, ZMP_ERR_INTERNAL);
        return;
    }
    zl_q_t *out1 = NULL, *in1 = NULL;
    if (c1 != NULL) {
        /* ROUTER-ROUTER: lane 1 is the Completion lane, with queues of its
         * own (replies and FLOWSTATE, no HWM). */
        zl_q_end_t rd1 = {zl_conn_out_notify, c1};
        zl_q_end_t wr1 = {zl_conn_in_notify, c1};
        if (ops->pipe_add_lane(pipe, rd1, wr1, &out1, &in1) != 0) {
            ops->pipe_unref(pipe); /* the socket's reference */
            ops->pipe_unref(pipe); /* ours */
            zl_conn_fail(c, ENOMEM, ZMP_ERR_INTERNAL);
            return;
        }
    }
    c->pipe = pipe;
    c->pipe_owner = true;
    c->out = out;
    c->in = in;
    c->established = true;
    c->state = ZL_CS_ACTIVE;
    zl_conn_timer(c, ZL_TIMER_NONE, 0);
    if (c1 != NULL) {
        c1->pipe = pipe;
        c1->out = out1;
        c1->in = in1;
        c1->established = true;
        c1->state = ZL_CS_ACTIVE;
        zl_conn_timer(c1, ZL_TIMER_NONE, 0);
    }
    int rc = ops->pipe_attach(c->sock, pipe);
    if (rc != 0) {
        /* Refused (socket closed, PAIR already paired, duplicate id): the
         * pipe is already ended; only our reference remains. */
        c->pipe_done = true;
        zl_conn_fail(c, rc, ZMP_ERR_REFUSED);
        return;
    }
    zl_conn_event_ready(c); /* monitor: CONNECTION_READY edge */
    if (c->ep->kind == ZL_EP_CONNECTER)
        c->ep->cur_ivl = 0; /* next loss: start again from RECONNECT_IVL as it is then */
    /* Output the socket may already have queued; then input that arrived
     * while we were waiting to attach. */
    zl_conn_pump(c);
    if (c1 != NULL && c1->state == ZL_CS_ACTIVE)
        zl_conn_pump(c1); /* marks the Completion queue's reader idle */
    zl_conn_dw_open(c);
    if (c1 != NULL)
        zl_conn_dw_open(c1);
    zl_conn_t *lanes[2] = {c, c1};
    for (int i = 0; i < 2; i++) {
        zl_conn_t *l = lanes[i];
        if (l == NULL || l->state != ZL_CS_ACTIVE)
            continue;
        if (!l->raw) {
            zl_conn_parse(l);
            zl_conn_flush_batch(l);
        }
        /* Only lane 0's input has an HWM to respect. */
        if (l->state == ZL_CS_ACTIVE && (l == c1 || !c->rd_full))
            zl_conn_read_start(l);
    }
}

/* Decodes every whole frame in the chunk while the state allows it.
 * Loop thread; may end the connection. */
