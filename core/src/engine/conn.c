/*
 * conn.c — one engine connection: the ZMP handshake, the read path (bytes ->
 * whole records -> the pipe's in queue), the write path (the pipe's out
 * queue -> encoded frames -> the kernel), lanes, linger and close.
 *
 * Design notes
 *  - Owns: the uv stream handle (tcp or unix pipe), a timer (connect,
 *    handshake or linger deadline), the current receive chunk, the private
 *    frame FIFOs (wq: taken from the out queue and being written; rbatch:
 *    decoded whole records of this read; rpart: the record in progress),
 *    the write buffer, and (lane 0) one reference on the pipe.
 *  - Threads: everything runs on the conn's I/O thread, except the two
 *    queue notify functions (conn_out_notify, conn_in_notify) and
 *    zl_conn_close, which any thread may call; they only set an atomic flag
 *    and post a task (see engine_int.h on why stale calls are harmless).
 *  - Locks: none here. The queue functions lock their queue; the socket
 *    calls (zl_socket_pipe_*) lock the socket. Nothing is held across them.
 *  - Life: CONNECTING -> HANDSHAKE -> [WAIT_PARTNER] -> ACTIVE -> [LINGER]
 *    -> CLOSING -> FREE (pool). zl_conn_terminate is the single way into
 *    CLOSING; it ends the pipe exactly once (lane 0), closes the handles,
 *    and cascades to the partner lane. Memory is released (to the io's
 *    pool) when the last handle's close callback ran, after every pending
 *    write callback (libuv cancels them first).
 *  - Write path: one uv_write in flight at most. A pump takes everything
 *    queued (zl_q_take_all), encodes up to ~256 KiB of headers and small
 *    payloads into one buffer (payloads >= 16 KiB go out as their own
 *    iovec, not copied), tries uv_try_write, and hands what is left to
 *    uv_write. When the bytes are written, the frames are closed and their
 *    charge returned (zl_q_release); then it takes again, until the queue
 *    is empty (take_all then arms the queue's reader_idle edge).
 *  - Read path: reads land in a 64 KiB chunk; frames are decoded in place
 *    and become SLICE messages referencing it (small ones are inlined by
 *    msg.c). Whole records of one read go to the in queue in one
 *    zl_q_deliver; when that reports the HWM, reads stop until the queue's
 *    writer notify fires. A frame cut by a read boundary stays in the chunk;
 *    the next alloc moves the tail to a fresh chunk when needed. A frame
 *    larger than a chunk gets a chunk of its own size.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (64 * 1024)
#define READ_MIN 4096
#define BIG_PAYLOAD (16 * 1024)
#define WBATCH_BYTES (256 * 1024)
#define WBATCH_IOVS 128
#define PUMP_ROUNDS 16
#define HOLD_MAX (64 * 1024) /* unparsed bytes kept while waiting to attach */

#define CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

static void conn_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void conn_parse(zl_conn_t *c);

/* --------------------------------------------------- cross-thread kicks */

/* Out queue reader notify: records arrived after we found it empty (or its
 * writer closed). Any thread; no locks held by the caller's queue. */
static void conn_out_notify(void *arg)
{
    zl_conn_t *c = arg;
    if (!atomic_exchange_explicit(&c->wkick, true, memory_order_acq_rel))
        zl_io_post(c->io, &c->wkick_task);
}

static void conn_on_wkick(zl_task_t *t)
{
    zl_conn_t *c = CONTAINER(t, zl_conn_t, wkick_task);
    atomic_store_explicit(&c->wkick, false, memory_order_release);
    zl_conn_pump(c);
}

/* In queue writer notify: the reader made room below the LWM. Any thread. */
static void conn_in_notify(void *arg)
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
    if (c->partner != NULL)
        zl_conn_read_start(c->partner);
}

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
    }
    /* Reset everything the loop owns; keep identity, flags and tasks (a
     * stale kick may still be queued: its flag stays set until it runs). */
    memset((char *)c + offsetof(zl_conn_t, state), 0,
           sizeof *c - offsetof(zl_conn_t, state));
    c->pool_next = NULL;
    c->state = ZL_CS_CONNECTING;
    c->sock = ep->sock;
    c->sock_type = ep->sock_type;
    c->ep = ep;
    c->initiator = initiator;
    c->lane = lane;
    c->lanes = 1;
    c->raw = ep->sock_type == ZLINK_STREAM;
    zl_socket_get_opts(ep->sock, &c->opts);
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
        zl_pipe_unref(pipe);
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
    c->state = ZL_CS_CLOSING;
    if (c->err == 0)
        c->err = err;
    zl_conn_t *p = c->partner;
    c->partner = NULL;
    if (p != NULL)
        p->partner = NULL;
    if (c->pipe_owner && c->pipe != NULL && !c->pipe_done) {
        c->pipe_done = true;
        zl_socket_pipe_ended(c->sock, c->pipe);
    }
    if (!c->pipe_owner) {
        c->pipe = NULL;
        c->in = NULL;
        c->out = NULL;
    }
    /* A partial record is discarded, never delivered. */
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
static void conn_fail(zl_conn_t *c, int err, uint8_t code)
{
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE)
        return;
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
    case ZL_TIMER_HANDSHAKE: conn_fail(c, ETIMEDOUT, ZMP_ERR_TIMEOUT); break;
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
        c->state = ZL_CS_LINGER;
        zl_conn_read_stop(c);
        if (c->partner != NULL)
            zl_conn_read_stop(c->partner);
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

void zl_conn_close(zl_conn_t *c, int linger_ms)
{
    if (c == NULL)
        return;
    close_req_t *r = malloc(sizeof *r);
    if (r == NULL) {
        fprintf(stderr, "zlink: out of memory closing a connection\n");
        abort();
    }
    r->task.fn = conn_on_close_req;
    r->c = c;
    r->gen = atomic_load(&c->gen);
    r->linger = linger_ms;
    zl_io_post(c->io, &r->task);
}

/* -------------------------------------------------------------- reading */

bool zl_conn_reserve(zl_conn_t *c, size_t want, size_t size)
{
    zl_chunk_t *ch = c->chunk;
    size_t tail = ch != NULL ? c->rlen - c->rpos : 0;
    if (ch != NULL && ch->cap - c->rlen >= want && ch->cap - c->rpos >= size)
        return true;
    size_t need = tail + want > size ? tail + want : size;
    /* Nobody else holds the chunk: slide the tail to the front. A big chunk
     * made for one large frame is not kept for small traffic. */
    if (ch != NULL && ch->cap >= need && (ch->cap == CHUNK_SIZE || need > CHUNK_SIZE) &&
        atomic_load_explicit(&ch->c.refs, memory_order_acquire) == 1) {
        if (tail > 0 && c->rpos > 0)
            memmove(ch->data, ch->data + c->rpos, tail);
        c->rpos = 0;
        c->rlen = tail;
        return true;
    }
    size_t cap = need > CHUNK_SIZE ? need : CHUNK_SIZE;
    zl_chunk_t *n = zl_chunk_new(cap);
    if (n == NULL)
        return false;
    if (tail > 0)
        memcpy(n->data, ch->data + c->rpos, tail);
    if (ch != NULL)
        zl_chunk_release(ch);
    c->chunk = n;
    c->rpos = 0;
    c->rlen = tail;
    return true;
}

static void conn_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    zl_conn_t *c = h->data;
    ZL_UNUSED(suggested);
    size_t have = c->chunk != NULL ? c->rlen - c->rpos : 0;
    size_t frame = c->rneed > have ? c->rneed : have;
    size_t missing = frame - have;
    size_t want = missing > READ_MIN ? missing : READ_MIN;
    if (!zl_conn_reserve(c, want, frame)) {
        buf->base = NULL;
        buf->len = 0; /* libuv reports UV_ENOBUFS to the read callback */
        return;
    }
    buf->base = (char *)c->chunk->data + c->rlen;
    buf->len = c->chunk->cap - c->rlen;
}

void zl_conn_read_start(zl_conn_t *c)
{
    if (c->reading || !c->has_handles)
        return;
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE || c->state == ZL_CS_LINGER)
        return;
    int rc = uv_read_start(&c->h.stream, conn_on_alloc,
                           c->raw ? zl_stream_on_read : conn_on_read);
    if (rc != 0) {
        zl_conn_terminate(c, -rc);
        return;
    }
    c->reading = true;
}

void zl_conn_read_stop(zl_conn_t *c)
{
    if (!c->reading)
        return;
    uv_read_stop(&c->h.stream);
    c->reading = false;
}

void zl_conn_flush_batch(zl_conn_t *c)
{
    if (c->rrecords == 0 || c->in == NULL)
        return;
    zl_conn_t *owner = c->pipe_owner ? c : c->partner;
    bool full = zl_q_deliver(c->in, &c->rbatch, c->rrecords, c->rcharge);
    c->rrecords = 0;
    c->rcharge = 0;
    if (full && owner != NULL) {
        owner->rd_full = true;
        zl_conn_read_stop(owner);
        if (owner->partner != NULL)
            zl_conn_read_stop(owner->partner);
    }
}

/* A data frame of an attached connection: into the batch, as a slice of the
 * chunk. Loop thread. Returns false when out of memory. */
static bool conn_take_data(zl_conn_t *c, const zmp_hdr_t *h, const uint8_t *body)
{
    bool more = (h->flags & ZMP_F_MORE) != 0;
    bool in_record = more || c->rpart.count > 0;
    zl_frame_t *f = zl_fq_push(in_record ? &c->rpart : &c->rbatch);
    if (f == NULL)
        return false;
    zl_msg_init_slice(&f->msg, c->chunk, body, h->size);
    f->seq = h->seq;
    f->kind = h->kind;
    f->flags = h->flags & (ZL_F_MORE | ZL_F_IDENTITY);
    memset(f->pad, 0, sizeof f->pad);
    uint64_t charge = (uint64_t)h->size + ZL_FRAME_OVERHEAD;
    if (!in_record) {
        c->rcharge += charge;
        c->rrecords++;
        return true;
    }
    c->rpart_charge += charge;
    if (!more) {
        zl_fq_splice(&c->rbatch, &c->rpart);
        c->rcharge += c->rpart_charge;
        c->rpart_charge = 0;
        c->rrecords++;
    }
    return true;
}

/* A control frame after the handshake: WEIGHT, SUBSCRIBE, CANCEL go to the
 * socket (after the records before them); ERROR ends the connection; a
 * second HELLO / READY is a protocol error; anything else is ignored. */
static void conn_take_control(zl_conn_t *c, const zmp_hdr_t *h, const uint8_t *body)
{
    zl_conn_flush_batch(c);
    if (h->flags & ZMP_F_CONTROL) {
        switch (zmp_control_kind(body, h->size)) {
        case ZMP_CTL_HELLO:
        case ZMP_CTL_READY:
            conn_fail(c, EPROTO, ZMP_ERR_UNEXPECTED);
            return;
        case ZMP_CTL_ERROR: {
            uint8_t code = 0;
            if (zmp_parse_error(body, h->size, &code, NULL, 0) == 0)
                c->zmp_code = code;
            zl_conn_terminate(c, ECONNRESET);
            return;
        }
        case ZMP_CTL_WEIGHT: {
            uint32_t w;
            if (zmp_parse_weight(body, h->size, &w) != 0)
                return; /* malformed WEIGHT: ignored */
            break;
        }
        default:
            return; /* FLOWSTATE (a later version) or unknown: ignored */
        }
    }
    if (c->pipe == NULL)
        return;
    zl_frame_t f;
    memset(&f, 0, sizeof f);
    zl_msg_init_slice(&f.msg, c->chunk, body, h->size);
    f.flags = h->flags;
    f.kind = ZL_KIND_DATA;
    zl_socket_pipe_control(c->sock, c->pipe, &f);
    zl_msg_release(&f.msg);
}

/* ------------------------------------------------------------ handshake */

static void conn_hs_progress(zl_conn_t *c);

static void conn_on_hs_write(uv_write_t *req, int status)
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
        conn_hs_progress(c);
    }
}

static bool conn_hs_write(zl_conn_t *c, int idx, uint8_t *buf, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    c->hs_req[idx].data = c;
    int rc = uv_write(&c->hs_req[idx], &c->h.stream, &b, 1, conn_on_hs_write);
    if (rc != 0) {
        zl_conn_terminate(c, -rc);
        return false;
    }
    c->hs_writes++;
    return true;
}

/* Builds our READY into buf. Returns its length (0 on overflow). */
static size_t conn_build_ready(zl_conn_t *c, uint8_t *buf, size_t cap)
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

static void conn_send_ready(zl_conn_t *c)
{
    if (c->ready_queued)
        return;
    size_t n = conn_build_ready(c, c->ready_buf, sizeof c->ready_buf);
    if (n == 0) {
        conn_fail(c, EPROTO, ZMP_ERR_INTERNAL);
        return;
    }
    c->ready_queued = true;
    conn_hs_write(c, 1, c->ready_buf, n);
}

/* Sends HELLO, and for types without lanes READY right behind it. */
static void conn_send_hello(zl_conn_t *c)
{
    zlink_routing_id_t rid = c->opts.rid;
    size_t n = zmp_build_hello(c->hs_buf, sizeof c->hs_buf, c->sock_type, &rid);
    if (n == 0) {
        conn_fail(c, EPROTO, ZMP_ERR_INTERNAL);
        return;
    }
    if (zmp_type_has_lanes(c->sock_type)) {
        conn_hs_write(c, 0, c->hs_buf, n);
        return;
    }
    size_t m = conn_build_ready(c, c->hs_buf + n, sizeof c->hs_buf - n);
    if (m == 0) {
        conn_fail(c, EPROTO, ZMP_ERR_INTERNAL);
        return;
    }
    c->ready_queued = true;
    conn_hs_write(c, 1, c->hs_buf, n + m);
}

/* One CONTROL frame during the handshake. Loop thread. */
static void conn_hs_frame(zl_conn_t *c, const zmp_hdr_t *h, const uint8_t *body)
{
    if (!(h->flags & ZMP_F_CONTROL)) {
        /* Data before the handshake finished. */
        conn_fail(c, EPROTO, c->hello_recv ? ZMP_ERR_UNEXPECTED : ZMP_ERR_HELLO);
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
            conn_fail(c, EPROTO, ZMP_ERR_HELLO);
            return;
        }
        if (!zmp_types_compatible(c->sock_type, type)) {
            conn_fail(c, EPROTOTYPE, ZMP_ERR_INCOMPATIBLE);
            return;
        }
        c->hello_recv = true;
        c->peer.type = type;
        c->peer.rid = rid;
        c->lanes = (uint8_t)zmp_lane_count(c->sock_type, type);
        c->peer.lanes = c->lanes;
        if (c->lane >= c->lanes) {
            conn_fail(c, EPROTO, ZMP_ERR_LANE);
            return;
        }
        /* DEALER / ROUTER: the connecting side answers HELLO with READY;
         * the accepting side waits for the peer's READY (it echoes the
         * lane the connecting side chose). */
        if (zmp_type_has_lanes(c->sock_type) && c->initiator)
            conn_send_ready(c);
        return;
    }
    if (c->ready_recv || kind != ZMP_CTL_READY) {
        conn_fail(c, EPROTO, ZMP_ERR_UNEXPECTED);
        return;
    }
    zmp_ready_t r;
    if (zmp_parse_ready(body, h->size, &r) != 0 ||
        zmp_check_ready(&r, c->sock_type, c->peer.type, &c->peer.rid) != 0) {
        conn_fail(c, EPROTO, ZMP_ERR_READY);
        return;
    }
    if (zmp_type_has_lanes(c->peer.type)) {
        if (c->initiator) {
            if (r.lane != c->lane) {
                conn_fail(c, EPROTO, ZMP_ERR_READY);
                return;
            }
        } else {
            c->lane = (uint8_t)r.lane;
            if (c->lane == 1) {
                zl_conn_t *p0 = zl_listener_find_lane0(c->ep, c);
                if (p0 == NULL) {
                    conn_fail(c, EPROTO, ZMP_ERR_LANE);
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
        conn_send_ready(c);
    conn_hs_progress(c);
}

/* Our READY is written and the peer's validated: attach, or wait for (or
 * open) the other lane. Loop thread. */
static void conn_hs_progress(zl_conn_t *c)
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
        conn_fail(c, EPROTO, ZMP_ERR_LANE);
        return;
    }
    zl_conn_attach(p0);
}

void zl_conn_start(zl_conn_t *c)
{
    if (!c->ipc)
        uv_tcp_nodelay(&c->h.tcp, c->opts.tcp_nodelay != 0);
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
    conn_send_hello(c);
    zl_conn_read_start(c);
}

/* ------------------------------------------------------------ attaching */

void zl_conn_attach(zl_conn_t *c)
{
    zl_conn_t *c1 = c->partner;
    zl_q_end_t rd = {conn_out_notify, c};
    zl_q_end_t wr = {conn_in_notify, c};
    zl_pipe_t *pipe = zl_socket_pipe_new(c->sock, c, c->ep, &c->peer, rd, wr);
    if (pipe == NULL) {
        conn_fail(c, ENOMEM, ZMP_ERR_INTERNAL);
        return;
    }
    c->pipe = pipe;
    c->pipe_owner = true;
    c->out = pipe->out;
    c->in = pipe->in;
    c->established = true;
    c->state = ZL_CS_ACTIVE;
    zl_conn_timer(c, ZL_TIMER_NONE, 0);
    if (c1 != NULL) {
        c1->pipe = pipe;
        c1->in = pipe->in;
        c1->established = true;
        c1->state = ZL_CS_ACTIVE;
        zl_conn_timer(c1, ZL_TIMER_NONE, 0);
    }
    int rc = zl_socket_pipe_attach(c->sock, pipe);
    if (rc != 0) {
        /* Refused (socket closed, PAIR already paired, duplicate id): the
         * pipe is already ended; only our reference remains. */
        c->pipe_done = true;
        conn_fail(c, rc, ZMP_ERR_REFUSED);
        return;
    }
    if (c->ep->kind == ZL_EP_CONNECTER)
        c->ep->cur_ivl = c->ep->opts.reconnect_ivl;
    /* Output the socket may already have queued; then input that arrived
     * while we were waiting to attach. */
    zl_conn_pump(c);
    zl_conn_t *lanes[2] = {c, c1};
    for (int i = 0; i < 2; i++) {
        zl_conn_t *l = lanes[i];
        if (l == NULL || l->state != ZL_CS_ACTIVE)
            continue;
        if (!l->raw) {
            conn_parse(l);
            zl_conn_flush_batch(l);
        }
        if (l->state == ZL_CS_ACTIVE && !c->rd_full)
            zl_conn_read_start(l);
    }
}

/* Decodes every whole frame in the chunk while the state allows it.
 * Loop thread; may end the connection. */
static void conn_parse(zl_conn_t *c)
{
    for (;;) {
        bool go = c->state == ZL_CS_ACTIVE || (c->state == ZL_CS_HANDSHAKE && !c->ready_recv);
        if (!go || c->chunk == NULL)
            return;
        size_t avail = c->rlen - c->rpos;
        if (avail == 0) {
            c->rneed = ZMP_HDR_LEN;
            return;
        }
        const uint8_t *p = c->chunk->data + c->rpos;
        zmp_hdr_t h;
        size_t need = 0;
        int rc = zmp_decode(&c->dec, p, avail, &h, &need);
        if (rc == EAGAIN) {
            c->rneed = need;
            return;
        }
        if (rc != 0) {
            conn_fail(c, rc == EMSGSIZE ? EMSGSIZE : EPROTO, c->dec.error_code);
            return;
        }
        const uint8_t *body = p + h.hdr_len;
        c->rpos += h.hdr_len + (size_t)h.size;
        c->rneed = ZMP_HDR_LEN;
        if (c->state == ZL_CS_HANDSHAKE) {
            conn_hs_frame(c, &h, body);
        } else if (zmp_is_control(h.flags)) {
            conn_take_control(c, &h, body);
        } else if (!conn_take_data(c, &h, body)) {
            conn_fail(c, ENOMEM, ZMP_ERR_INTERNAL);
            return;
        }
    }
}

static void conn_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    zl_conn_t *c = s->data;
    ZL_UNUSED(buf);
    if (nread > 0) {
        c->rlen += (size_t)nread;
        conn_parse(c);
        zl_conn_flush_batch(c);
        /* Waiting to attach: keep a bounded amount of early input. */
        if ((c->state == ZL_CS_HANDSHAKE || c->state == ZL_CS_WAIT_PARTNER) &&
            c->rlen - c->rpos > HOLD_MAX)
            zl_conn_read_stop(c);
        return;
    }
    if (nread == 0)
        return;
    int err;
    if (nread == UV_EOF)
        err = zmp_decoder_eof(&c->dec, c->rlen - c->rpos) != 0 ? EPROTO : ECONNRESET;
    else if (nread == UV_ENOBUFS)
        err = ENOMEM;
    else
        err = (int)-nread;
    zl_conn_terminate(c, err);
}

/* -------------------------------------------------------------- writing */

/* Closes the frames of the write that completed and returns their credit.
 * Loop thread. */
static void conn_write_done(zl_conn_t *c)
{
    uint64_t charge = 0;
    for (size_t i = 0; i < c->wn; i++) {
        zl_frame_t *f = zl_fq_front(&c->wq);
        charge += zl_frame_charge(f);
        zl_msg_release(&f->msg);
        zl_fq_pop(&c->wq);
    }
    c->wn = 0;
    if (charge > c->w_taken || c->wq.count == 0)
        charge = c->w_taken;
    c->w_taken -= charge;
    if (charge > 0 && c->out != NULL)
        zl_q_release(c->out, charge);
}

static void conn_on_write(uv_write_t *req, int status)
{
    zl_conn_t *c = req->data;
    c->writing = false;
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE)
        return; /* conn_finish closes the frames */
    if (status < 0) {
        zl_conn_terminate(c, -status);
        return;
    }
    conn_write_done(c);
    zl_conn_pump(c);
}

static bool conn_grow(zl_conn_t *c, size_t bytes, size_t iovs)
{
    if (bytes > c->wbuf_cap) {
        size_t cap = c->wbuf_cap ? c->wbuf_cap : 4096;
        while (cap < bytes)
            cap *= 2;
        uint8_t *n = realloc(c->wbuf, cap);
        if (n == NULL)
            return false;
        c->wbuf = n;
        c->wbuf_cap = cap;
    }
    if (iovs > c->iov_cap) {
        uv_buf_t *n = realloc(c->iov, iovs * sizeof *n);
        if (n == NULL)
            return false;
        c->iov = n;
        c->iov_cap = iovs;
    }
    return true;
}

/* Encodes a batch from the head of wq and writes it. Returns 0 when the
 * kernel took it all (the frames are done), 1 when a write is in flight, or
 * a negative libuv error. Loop thread. */
static int conn_write_batch(zl_conn_t *c)
{
    /* Pass 1: how many frames, how many bytes to copy, how many iovecs. */
    size_t n = 0, bytes = 0, iovs = 1;
    zl_fq_chunk_t *ch = c->wq.head;
    uint32_t pos = c->wq.head_pos;
    for (size_t left = c->wq.count; left > 0; left--) {
        zl_frame_t *f = &ch->f[pos];
        size_t size = zl_msg_size(&f->msg);
        size_t add = (c->raw ? 0 : ZMP_HDR_SEQ_LEN) + (size >= BIG_PAYLOAD ? 0 : size);
        size_t add_iov = size >= BIG_PAYLOAD ? 2 : 0;
        if (n > 0 && (bytes + add > WBATCH_BYTES || iovs + add_iov > WBATCH_IOVS))
            break;
        bytes += add;
        iovs += add_iov;
        n++;
        if (++pos == ZL_FQ_CHUNK) {
            ch = ch->next;
            pos = 0;
        }
    }
    if (!conn_grow(c, bytes, iovs))
        return UV_ENOMEM;

    /* Pass 2: encode. */
    uint8_t *w = c->wbuf;
    size_t at = 0, seg = 0, nio = 0;
    ch = c->wq.head;
    pos = c->wq.head_pos;
    for (size_t i = 0; i < n; i++) {
        zl_frame_t *f = &ch->f[pos];
        size_t size = zl_msg_size(&f->msg);
        const uint8_t *data = zl_msg_data(&f->msg);
        if (!c->raw) {
            uint8_t kind = c->wmid ? ZL_KIND_DATA : f->kind;
            uint8_t flags = f->flags & (ZMP_F_MORE | ZMP_F_CONTROL | ZMP_F_IDENTITY |
                                        ZMP_F_SUBSCRIBE | ZMP_F_CANCEL);
            at += zmp_encode_header(w + at, flags, kind, f->seq, (uint32_t)size);
            c->wmid = (flags & ZMP_F_MORE) != 0;
        }
        if (size >= BIG_PAYLOAD) {
            if (at > seg)
                c->iov[nio++] = uv_buf_init((char *)w + seg, (unsigned)(at - seg));
            c->iov[nio++] = uv_buf_init((char *)data, (unsigned)size);
            seg = at;
        } else if (size > 0) {
            memcpy(w + at, data, size);
            at += size;
        }
        if (++pos == ZL_FQ_CHUNK) {
            ch = ch->next;
            pos = 0;
        }
    }
    if (at > seg)
        c->iov[nio++] = uv_buf_init((char *)w + seg, (unsigned)(at - seg));
    c->wn = n;
    if (nio == 0) { /* STREAM zero-length records: nothing to send */
        conn_write_done(c);
        return 0;
    }

    int wr = uv_try_write(&c->h.stream, c->iov, (unsigned)nio);
    if (wr == UV_EAGAIN || wr == UV_ENOSYS)
        wr = 0;
    else if (wr < 0)
        return wr;
    size_t skip = (size_t)wr, idx = 0;
    while (idx < nio && skip >= c->iov[idx].len) {
        skip -= c->iov[idx].len;
        idx++;
    }
    if (idx == nio) {
        conn_write_done(c);
        return 0;
    }
    c->iov[idx].base += skip;
    c->iov[idx].len -= skip;
    c->wreq.data = c;
    int rc = uv_write(&c->wreq, &c->h.stream, c->iov + idx, (unsigned)(nio - idx),
                      conn_on_write);
    if (rc != 0)
        return rc;
    c->writing = true;
    return 1;
}

void zl_conn_pump(zl_conn_t *c)
{
    for (int round = 0; round < PUMP_ROUNDS; round++) {
        if (c->writing || c->out == NULL)
            return;
        if (c->state != ZL_CS_ACTIVE && c->state != ZL_CS_LINGER)
            return;
        bool eof = false;
        zl_q_take_all(c->out, &c->wq, &c->w_taken, &eof);
        if (c->wq.count == 0) {
            /* Everything written: a closed writer (socket closed, STREAM
             * peer closed) or a linger in progress ends the connection. */
            if (eof || c->state == ZL_CS_LINGER)
                zl_conn_terminate(c, 0);
            return;
        }
        int rc = conn_write_batch(c);
        if (rc < 0) {
            zl_conn_terminate(c, -rc);
            return;
        }
        if (rc == 1)
            return;
    }
    /* Still more after many rounds: let the loop breathe, continue later. */
    conn_out_notify(c);
}
