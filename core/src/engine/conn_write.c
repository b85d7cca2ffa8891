/*
 * conn_write.c — the write path of a connection (ZMP and raw STREAM).
 *
 * Design notes
 *  - One uv_write in flight at most per connection. A pump takes
 *    everything queued (zl_q_take_all) into the private FIFO wq, encodes up
 *    to ~256 KiB of headers and small payloads into one buffer (payloads of
 *    16 KiB or more go out as their own iovec, not copied), tries
 *    uv_try_write, and hands what is left to uv_write. When the bytes are
 *    written the frames are closed and their charge returned (zl_q_release,
 *    so senders stay blocked while the kernel is full); then it takes again
 *    until the queue is empty (take_all then arms the queue's reader_idle
 *    edge, so the next record kicks us through zl_conn_out_notify).
 *  - An empty queue whose writer closed (socket close, STREAM peer close),
 *    or a linger in progress, ends the connection once all is written.
 *  - Direct write. Waking the loop costs a thread wake-up per idle-to-busy
 *    edge (an eventfd write, the loop's epoll return), the largest share of
 *    a round trip's time on a small machine. So the out queue's notify
 *    first tries zl_conn_write_direct on the sending thread: when the
 *    connection allows it (dw OPEN: ACTIVE, ZMP, nothing of the handshake
 *    pending), no write is under way, and the last write ended at least
 *    DW_GAP_NS ago, the sender takes the write side (dw HELD), runs the
 *    same pump with sendmsg(MSG_DONTWAIT | MSG_NOSIGNAL) on the descriptor,
 *    and returns the charge itself. What the kernel does not take at once,
 *    an error, the writer's close, or more than DW_ROUNDS batches go back
 *    to the loop (wresume, werr, a scheduled pump). The gap rule keeps a
 *    stream of sends on the loop, which batches them into one write: only
 *    the first send after a pause is written by its sender.
 *  - Threads and locks: the write-side fields belong to whoever holds dw
 *    (the loop takes it around every pump and write completion, waiting for
 *    a sender inside to leave; a sender only tries once and otherwise wakes
 *    the loop). The loop closes dw before the connection leaves ACTIVE, so
 *    no sender touches a descriptor that is being closed. No other locks of
 *    its own; the queue functions lock their queue.
 */
#include "engine_int.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define BIG_PAYLOAD (16 * 1024)
#define WBATCH_BYTES (256 * 1024)
#define WBATCH_IOVS 128
#define PUMP_ROUNDS 16
#define DW_ROUNDS 4
#define DW_GAP_NS 10000

/* sendmsg takes the uv_buf_t array as it is (libuv lays it out as iovec
 * on Unix for this very use). */
_Static_assert(sizeof(uv_buf_t) == sizeof(struct iovec) &&
                   offsetof(uv_buf_t, base) == offsetof(struct iovec, iov_base) &&
                   offsetof(uv_buf_t, len) == offsetof(struct iovec, iov_len),
               "uv_buf_t is not an iovec");

/* What a pump asks its caller to do once it let go of the write side. */
enum { PUMP_IDLE, PUMP_LOOP, PUMP_END, PUMP_FAIL };

/* -------------------------------------------------- the write side's owner */

/* Takes the write side on the loop thread, waiting while a sender has it
 * (a sender holds it for one pump of non-blocking writes). */
static void dw_lock(zl_conn_t *c)
{
    unsigned turns = 0;
    unsigned v = atomic_load_explicit(&c->dw, memory_order_relaxed);
    for (;;) {
        if ((v & ZL_DW_HELD) == 0 &&
            atomic_compare_exchange_weak_explicit(&c->dw, &v, v | ZL_DW_HELD,
                                                  memory_order_acquire, memory_order_relaxed))
            break;
        if ((v & ZL_DW_HELD) != 0) {
            if (++turns >= 64)
                sched_yield(); /* the holder may need this core */
            else
                zl_cpu_relax();
            v = atomic_load_explicit(&c->dw, memory_order_relaxed);
        }
    }
    c->dw_mine = true;
}

static void dw_unlock(zl_conn_t *c)
{
    c->dw_mine = false;
    atomic_fetch_and_explicit(&c->dw, ~ZL_DW_HELD, memory_order_release);
}

void zl_conn_dw_open(zl_conn_t *c)
{
    if (c->raw || !c->has_handles || c->state != ZL_CS_ACTIVE || c->hs_writes != 0)
        return;
    uv_os_fd_t fd;
    if (uv_fileno(&c->h.handle, &fd) != 0)
        return;
    c->fd = fd;
    atomic_fetch_or_explicit(&c->dw, ZL_DW_OPEN, memory_order_release);
}

void zl_conn_dw_close(zl_conn_t *c)
{
    if (c->dw_mine) {
        atomic_fetch_and_explicit(&c->dw, ~ZL_DW_OPEN, memory_order_relaxed);
        return;
    }
    if ((atomic_load_explicit(&c->dw, memory_order_relaxed) & ZL_DW_OPEN) == 0)
        return; /* never opened, or closed: no sender can be inside */
    dw_lock(c);
    atomic_fetch_and_explicit(&c->dw, ~ZL_DW_OPEN, memory_order_relaxed);
    dw_unlock(c);
}


/* Closes the frames of the write that completed and returns their credit.
 * The write side's holder. */
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
    atomic_store_explicit(&c->dw_last_ns, zl_clock_ns(), memory_order_relaxed);
    if (charge > c->w_taken || c->wq.count == 0)
        charge = c->w_taken;
    c->w_taken -= charge;
    if (charge > 0 && c->out != NULL)
        zl_q_release(c->out, charge);
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

static void conn_on_write(uv_write_t *req, int status);

/* Writes what it can of iov[0, nio) at once: the bytes written, 0 when the
 * kernel has no room, or a negative errno-style error. The loop goes
 * through libuv; a sender writes the descriptor itself (libuv's handle is
 * the loop's), never raising SIGPIPE in the application's thread. */
static ssize_t conn_try_write(zl_conn_t *c, size_t nio, bool direct)
{
    if (!direct) {
        int wr = uv_try_write(&c->h.stream, c->iov, (unsigned)nio);
        if (wr == UV_EAGAIN || wr == UV_ENOSYS)
            return 0;
        return wr;
    }
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = (struct iovec *)(void *)c->iov;
    m.msg_iovlen = nio;
    for (;;) {
        ssize_t wr = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (wr >= 0)
            return wr;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return -errno;
    }
}

/* Encodes a batch from the head of wq and writes it. Returns 0 when the
 * kernel took it all (the frames are done), 1 when the rest is left to a
 * write (the loop's uv_write in flight, or for a sender wresume for the
 * loop to issue), or a negative libuv error. The write side's holder. */
static int conn_write_batch(zl_conn_t *c, bool direct)
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
            uint8_t kind = c->wmid ? ZMP_KIND_DATA : f->kind;
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

    ssize_t wr = conn_try_write(c, nio, direct);
    if (wr < 0)
        return (int)wr;
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
    if (direct) {
        c->wresume = true;
        c->wres_first = (unsigned)idx;
        c->wres_n = (unsigned)(nio - idx);
        return 1;
    }
    c->wreq.data = c;
    int rc = uv_write(&c->wreq, &c->h.stream, c->iov + idx, (unsigned)(nio - idx),
                      conn_on_write);
    if (rc != 0)
        return rc;
    c->writing = true;
    return 1;
}

/* One pump under the write side: writes what the out queue holds until it
 * is empty, a write is under way, or the rounds run out. Returns what the
 * caller must do after letting go (PUMP_FAIL with *err). A sender (direct)
 * never ends the connection or issues a uv_write: it leaves that to the
 * loop (PUMP_LOOP). */
static int pump_locked(zl_conn_t *c, bool direct, int *err)
{
    if (!direct) {
        if (c->werr != 0) {
            *err = c->werr;
            return PUMP_FAIL;
        }
        if (c->wresume) {
            /* A sender's write the kernel took only part of. */
            c->wresume = false;
            c->wreq.data = c;
            int rc = uv_write(&c->wreq, &c->h.stream, c->iov + c->wres_first, c->wres_n,
                              conn_on_write);
            if (rc != 0) {
                *err = -rc;
                return PUMP_FAIL;
            }
            c->writing = true;
            return PUMP_IDLE;
        }
    } else if (c->writing || c->wresume || c->werr != 0) {
        return PUMP_IDLE; /* the loop's write callback or scheduled pump goes on */
    }
    int rounds = direct ? DW_ROUNDS : PUMP_ROUNDS;
    for (int round = 0; round < rounds; round++) {
        if (c->writing || c->out == NULL)
            return PUMP_IDLE;
        if (!direct && c->state != ZL_CS_ACTIVE && c->state != ZL_CS_LINGER)
            return PUMP_IDLE;
        bool eof = false;
        zl_q_take_all(c->out, &c->wq, &c->w_taken, &eof);
        if (c->wq.count == 0) {
            /* Everything written: a closed writer (socket closed, STREAM
             * peer closed) or a linger in progress ends the connection. */
            if (eof || c->state == ZL_CS_LINGER) {
                if (direct)
                    return PUMP_LOOP;
                /* Lane 1 ends with its lane 0 (which may still be
                 * flushing), never on its own. */
                if (!c->pipe_owner && c->partner != NULL)
                    return PUMP_IDLE;
                return PUMP_END;
            }
            return PUMP_IDLE;
        }
        int rc = conn_write_batch(c, direct);
        if (rc < 0) {
            if (direct) {
                c->werr = -rc;
                return PUMP_LOOP;
            }
            *err = -rc;
            return PUMP_FAIL;
        }
        if (rc == 1)
            return direct ? PUMP_LOOP : PUMP_IDLE;
    }
    /* Still more after many rounds: let the loop breathe, continue later
     * (a sender hands the rest to the loop). */
    return PUMP_LOOP;
}

/* Acts on a pump's answer once the write side is free. Loop thread. */
static void pump_after(zl_conn_t *c, int what, int err)
{
    switch (what) {
    case PUMP_LOOP: zl_conn_kick_write(c); break;
    case PUMP_END: zl_conn_terminate(c, 0); break;
    case PUMP_FAIL: zl_conn_terminate(c, err); break;
    default: break;
    }
}

static void conn_on_write(uv_write_t *req, int status)
{
    zl_conn_t *c = req->data;
    dw_lock(c);
    c->writing = false;
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE) {
        dw_unlock(c);
        return; /* conn_finish closes the frames */
    }
    if (status < 0) {
        dw_unlock(c);
        zl_conn_terminate(c, -status);
        return;
    }
    conn_write_done(c);
    int err = 0;
    int what = pump_locked(c, false, &err);
    dw_unlock(c);
    pump_after(c, what, err);
}

void zl_conn_pump(zl_conn_t *c)
{
    dw_lock(c);
    int err = 0;
    int what = pump_locked(c, false, &err);
    dw_unlock(c);
    pump_after(c, what, err);
}

bool zl_conn_write_direct(zl_conn_t *c)
{
    if (atomic_load_explicit(&c->dw, memory_order_relaxed) != ZL_DW_OPEN ||
        zl_io_on_loop(c->io))
        return false;
    if (zl_clock_ns() - atomic_load_explicit(&c->dw_last_ns, memory_order_relaxed) < DW_GAP_NS)
        return false; /* sends in a row: the loop batches them */
    unsigned v = ZL_DW_OPEN;
    if (!atomic_compare_exchange_strong_explicit(&c->dw, &v, ZL_DW_OPEN | ZL_DW_HELD,
                                                 memory_order_acquire, memory_order_relaxed))
        return false;
    int err = 0;
    int what = pump_locked(c, true, &err);
    atomic_fetch_and_explicit(&c->dw, ~ZL_DW_HELD, memory_order_release);
    if (what == PUMP_LOOP)
        zl_conn_kick_write(c);
    return true;
}
