/*
 * conn_read.c — the read path of a ZMP connection: receive chunks, the
 * frame decoder loop, delivery of whole records to the pipe's in queue, and
 * control frames after the handshake.
 *
 * Design notes
 *  - Reads land in a 64 KiB chunk (msg.h zl_chunk_t); frames are decoded in
 *    place and become SLICE messages referencing it (small ones are
 *    inlined by msg.c). A frame cut by a read boundary stays in the chunk;
 *    the next allocation moves the tail to a fresh chunk when needed, or
 *    slides it to the front when nobody else holds the chunk. A frame
 *    larger than a chunk gets a chunk of its own size. Large frames tend
 *    to come in series (64 KiB or 1 MiB records, one after the other), so
 *    once a chunk held a frame larger than a chunk (up to RECENT_MAX), the
 *    next chunk is made that frame's size plus FIT_SLACK: the next frame of
 *    that size is read in place from its first byte, and at most FIT_SLACK
 *    bytes of the one after it move to the chunk after. Without that, the
 *    start of each large frame was read into a 64 KiB chunk and copied to
 *    a chunk of the frame's size. A chunk that held no large frame goes
 *    back to 64 KiB.
 *  - Whole records of one read go to the in queue in one zl_q_deliver;
 *    when that reports the HWM, reading stops until the queue's writer
 *    notify fires (zl_conn_in_notify, conn.c). A ROUTER-ROUTER lane 1
 *    (Completion) delivers to its own HWM-free queue and keeps reading;
 *    a record on it must be a REPLY or ERROR_REPLY, and a ROUTER accepts
 *    replies nowhere else (conn_kind_allowed); else EPROTO.
 *  - Frames of a record in progress wait in rpart; only complete records
 *    reach rbatch, so nothing partial is ever delivered.
 *  - Read-ahead is bounded by what arrived, never by what a header claims:
 *    a buffer reaches at most max(256 KiB, the bytes of the frame already
 *    in) beyond them. A frame up to 256 KiB still gets its buffer in one
 *    allocation; a larger one's buffer grows by doubling as its bytes come
 *    (the copying stays linear: at most once more than the frame); an
 *    8-byte header announcing 4 GiB costs 256 KiB of address space, and
 *    memory only as its bytes arrive. The size a large frame gives the
 *    next chunk (above) is that of a frame whose bytes did arrive, and at
 *    most RECENT_MAX. During the handshake a frame that is
 *    not CONTROL is refused once its first four header bytes are in
 *    (zl_hs_refuse_data), so its size is never used at all.
 *  - Pausing (zl_conn_read_pause): reads stop at a limit (RCVHWM; 64 KiB
 *    of early input while the handshake or the partner lane is pending),
 *    so TCP pushes back on the sender. libuv then no longer reports the
 *    peer's close, and allows one watcher per descriptor, so each io keeps
 *    one epoll set of its paused conns' descriptors (EPOLLRDHUP; hang-up
 *    and errors are always reported), itself watched by one uv_poll_t:
 *    one descriptor per io, none per conn, two system calls per pause
 *    (add, delete). A conn is in the set only while paused; it leaves it
 *    when reading resumes, at its first event, and before its descriptor
 *    closes. On that event a conn still in its handshake ends at once
 *    (ECONNRESET: nothing was attached, nothing is owed); an attached one
 *    "drains": it reads on without limits, since the peer can send nothing
 *    more and the rest is bounded by what the kernel held, delivers those
 *    records, and ends at the EOF or the reset as usual. Nothing is
 *    dropped. (Linux only: elsewhere paused conns are not watched.)
 *  - Out of memory (a frame slot, or the in queue cannot grow to take a
 *    batch): the connection fails with ENOMEM (ERROR INTERNAL to the peer);
 *    what was delivered before stays, the rest goes with the connection.
 *  - Threads and locks: the conn's I/O thread; no locks of its own.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/epoll.h>
#endif

#define CHUNK_SIZE (64 * 1024)
#define READ_MIN 4096
#define HOLD_MAX (64 * 1024) /* unparsed bytes kept while waiting to attach */
/* Read-ahead beyond the bytes of a frame that arrived, at least (design
 * notes): frames up to this size get their buffer in one allocation. */
#define AHEAD_MIN (256 * 1024)
/* Frames (header + body) up to this size size the next chunk (design
 * notes); larger ones go through the doubling path every time. */
#define RECENT_MAX (2 * 1024 * 1024 + ZMP_HDR_SEQ_LEN)
/* Room past such a frame: the headers and the start of the next frames. */
#define FIT_SLACK 256


bool zl_conn_reserve(zl_conn_t *c, size_t want, size_t size)
{
    zl_chunk_t *ch = c->chunk;
    size_t tail = ch != NULL ? c->rlen - c->rpos : 0;
    if (ch != NULL && ch->cap - c->rlen >= want && ch->cap - c->rpos >= size)
        return true;
    size_t need = tail + want > size ? tail + want : size;
    /* The size a new chunk gets: one large frame like the last (design
     * notes), else CHUNK_SIZE. */
    size_t fit = c->rbig > 0 ? c->rbig + FIT_SLACK : CHUNK_SIZE;
    /* Nobody else holds the chunk: slide the tail to the front. A big chunk
     * made for one large frame is not kept for small traffic. */
    if (ch != NULL && ch->cap >= need &&
        (ch->cap == CHUNK_SIZE || ch->cap == fit || need > CHUNK_SIZE) &&
        atomic_load_explicit(&ch->c.refs, memory_order_acquire) == 1) {
        if (tail > 0 && c->rpos > 0)
            memmove(ch->data, ch->data + c->rpos, tail);
        c->rpos = 0;
        c->rlen = tail;
        c->rbig = 0;
        return true;
    }
    size_t cap = need > fit ? need : fit;
    zl_chunk_t *n = zl_chunk_new(cap);
    if (n == NULL)
        return false;
    c->rbig = 0;
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
    /* Bounded read-ahead (design notes): the header's claim is met only as
     * its bytes arrive. */
    size_t ahead = have > AHEAD_MIN ? have : AHEAD_MIN;
    if (frame - have > ahead)
        frame = have + ahead;
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

/* ---------------------------------------------- the peer-close watch */

static void conn_peer_gone(zl_conn_t *c);

#if defined(__linux__)

#define HUP_BATCH 64

/* The io's peer-close set has events: takes each reported conn out of the
 * set (level-triggered: once is enough) and handles its peer's end. A conn
 * ended while an earlier entry of the same batch was handled is no longer
 * watched and is skipped; its memory stays valid (type-stable, and it
 * returns to the pool only from close callbacks, which run later).
 * Loop thread. */
static void io_on_hup(uv_poll_t *h, int status, int events)
{
    zl_io_t *io = h->data;
    ZL_UNUSED(status);
    ZL_UNUSED(events);
    struct epoll_event ev[HUP_BATCH];
    int n = epoll_wait(io->hup_fd, ev, HUP_BATCH, 0);
    for (int i = 0; i < n; i++) {
        zl_conn_t *c = ev[i].data.ptr;
        if (!c->watched)
            continue;
        zl_conn_watch_stop(c);
        conn_peer_gone(c);
    }
}

void zl_io_hup_init(zl_io_t *io)
{
    io->hup_fd = -1;
    int fd = epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0)
        return;
    if (uv_poll_init(&io->loop, &io->hup_poll, fd) != 0) {
        close(fd);
        return;
    }
    io->hup_poll.data = io;
    io->hup_fd = fd; /* closed by zl_io_destroy, after the poll handle */
    if (uv_poll_start(&io->hup_poll, UV_READABLE, io_on_hup) != 0)
        uv_close((uv_handle_t *)&io->hup_poll, NULL); /* nothing is watched */
}

/* Puts a paused conn into its io's set: EPOLLRDHUP (the peer ended its
 * side); a reset or an error (EPOLLHUP, EPOLLERR) is always reported.
 * Without the set, or when the kernel refuses, the conn stays paused
 * unwatched, as before this watch existed; nothing else fails. */
static void conn_watch_start(zl_conn_t *c)
{
    if (c->watched || !c->has_handles || c->io->hup_fd < 0 ||
        uv_is_closing((uv_handle_t *)&c->io->hup_poll))
        return;
    uv_os_fd_t fd;
    if (uv_fileno(&c->h.handle, &fd) != 0)
        return;
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLRDHUP;
    ev.data.ptr = c;
    if (epoll_ctl(c->io->hup_fd, EPOLL_CTL_ADD, fd, &ev) == 0)
        c->watched = true;
}

void zl_conn_watch_stop(zl_conn_t *c)
{
    if (!c->watched)
        return;
    c->watched = false;
    uv_os_fd_t fd;
    if (uv_fileno(&c->h.handle, &fd) == 0)
        (void)epoll_ctl(c->io->hup_fd, EPOLL_CTL_DEL, fd, NULL);
}

#else /* no epoll: paused connections are not watched */

void zl_io_hup_init(zl_io_t *io)
{
    io->hup_fd = -1;
}

static void conn_watch_start(zl_conn_t *c)
{
    ZL_UNUSED(c);
}

void zl_conn_watch_stop(zl_conn_t *c)
{
    ZL_UNUSED(c);
}

#endif

/* A paused conn's peer ended its side, reset the connection or it failed.
 * Loop thread; may end the conn. */
static void conn_peer_gone(zl_conn_t *c)
{
    if (!c->paused || c->reading)
        return;
    switch (c->state) {
    case ZL_CS_HANDSHAKE:
    case ZL_CS_WAIT_PARTNER:
        zl_conn_terminate(c, ECONNRESET);
        return;
    case ZL_CS_ACTIVE:
        c->draining = true;
        c->rd_full = false;
        zl_conn_read_start(c); /* ends at the EOF or the error */
        return;
    default:
        return;
    }
}

/* ------------------------------------------------------ read plumbing */

void zl_conn_read_start(zl_conn_t *c)
{
    if (c->reading || !c->has_handles)
        return;
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE || c->state == ZL_CS_LINGER)
        return;
    int rc = uv_read_start(&c->h.stream, conn_on_alloc,
                           c->raw ? zl_stream_on_read : zl_conn_on_read);
    if (rc != 0) {
        zl_conn_terminate(c, -rc);
        return;
    }
    c->reading = true;
    c->paused = false;
    zl_conn_watch_stop(c);
}

void zl_conn_read_stop(zl_conn_t *c)
{
    c->paused = false;
    zl_conn_watch_stop(c);
    if (!c->reading)
        return;
    uv_read_stop(&c->h.stream);
    c->reading = false;
}

void zl_conn_read_pause(zl_conn_t *c)
{
    if (c->draining || !c->has_handles)
        return;
    if (c->state != ZL_CS_HANDSHAKE && c->state != ZL_CS_WAIT_PARTNER &&
        c->state != ZL_CS_ACTIVE)
        return;
    if (c->reading) {
        uv_read_stop(&c->h.stream);
        c->reading = false;
    }
    c->paused = true;
    conn_watch_start(c);
}

void zl_conn_flush_batch(zl_conn_t *c)
{
    if (c->rrecords == 0 || c->in == NULL)
        return;
    zl_conn_commit_slices(c);
    int rc = zl_q_deliver(c->in, &c->rbatch, c->rrecords, c->rcharge);
    if (rc == ZL_Q_NOMEM) {
        /* The in queue could not grow to take these records. They cannot
         * wait here (reading on would pile up more), and dropping them
         * quietly would lose records the peer thinks were delivered: the
         * connection ends with ENOMEM instead (ERROR INTERNAL to the peer,
         * DISCONNECTED TRANSPORT_ERROR on the monitor), which discards the
         * batch with the connection's other unfinished input. */
        zl_conn_fail(c, ENOMEM, ZMP_ERR_INTERNAL);
        return;
    }
    c->rrecords = 0;
    c->rcharge = 0;
    if (rc == ZL_Q_FULL && !c->draining) {
        /* Only lane 0 can get here: the Completion lane has no HWM. */
        c->rd_full = true;
        zl_conn_read_pause(c);
    }
}

/* A data frame of an attached connection: into the batch, as a slice of the
 * chunk. Loop thread. Returns false when out of memory. */
void zl_conn_commit_slices(zl_conn_t *c)
{
    if (c->slice_refs_owed == 0)
        return;
    atomic_fetch_add_explicit(&c->chunk->c.refs, c->slice_refs_owed, memory_order_relaxed);
    c->slice_refs_owed = 0;
}

/* Like zl_msg_init_slice (msg.h) for a payload too big to inline, but the
 * chunk reference is only counted in c->slice_refs_owed; the caller
 * commits them (zl_conn_commit_slices) before the slice can be released or
 * handed to another thread. The engine's own chunk reference keeps the
 * chunk alive meanwhile. */
static void conn_slice_owed(zl_conn_t *c, zlink_msg_t *m, const uint8_t *data, size_t size)
{
    zl_msg_t *x = zl_msg(m);
    x->type = ZL_MSG_SLICE;
    x->isize = 0;
    x->u.ref.data = (void *)data;
    x->u.ref.size = size;
    x->u.ref.content = &c->chunk->c;
    x->tag = ZL_MSG_TAG;
    c->slice_refs_owed++;
}

static bool conn_take_data(zl_conn_t *c, const zmp_hdr_t *h, const uint8_t *body)
{
    bool more = (h->flags & ZMP_F_MORE) != 0;
    bool in_record = more || c->rpart.count > 0;
    zl_frame_t *f = zl_fq_push(in_record ? &c->rpart : &c->rbatch);
    if (f == NULL)
        return false;
    if (h->size > ZLINK_MSG_INLINE_MAX)
        conn_slice_owed(c, &f->msg, body, h->size);
    else
        zl_msg_init_slice(&f->msg, c->chunk, body, h->size); /* copied inline */
    f->seq = h->seq;
    f->kind = h->kind;
    f->flags = h->flags & (ZMP_F_MORE | ZMP_F_IDENTITY);
    memset(f->pad, 0, sizeof f->pad);
    uint64_t charge = (uint64_t)h->size + ZL_FRAME_OVERHEAD;
    if (!in_record) {
        c->rcharge += charge;
        c->rrecords++;
        return true;
    }
    c->rpart_charge += charge;
    if (!more) {
        if (zl_fq_splice(&c->rbatch, &c->rpart) != 0)
            return false; /* out of memory: the connection ends */
        c->rcharge += c->rpart_charge;
        c->rpart_charge = 0;
        c->rrecords++;
    }
    return true;
}

/* A control frame after the handshake: WEIGHT, FLOWSTATE, SUBSCRIBE, CANCEL go to the
 * socket (after the records before them); ERROR ends the connection; a
 * second HELLO / READY is a protocol error; anything else is ignored. */
static void conn_take_control(zl_conn_t *c, const zmp_hdr_t *h, const uint8_t *body)
{
    zl_conn_flush_batch(c);
    if (c->state == ZL_CS_CLOSING || c->state == ZL_CS_FREE)
        return; /* the records before it could not be delivered */
    if (h->flags & ZMP_F_CONTROL) {
        switch (zmp_control_kind(body, h->size)) {
        case ZMP_CTL_HELLO:
        case ZMP_CTL_READY:
            zl_conn_fail(c, EPROTO, ZMP_ERR_UNEXPECTED);
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
        case ZMP_CTL_FLOWSTATE:
            break; /* the socket checks its layout and epoch */
        default:
            return; /* unknown: ignored */
        }
    }
    if (c->pipe == NULL)
        return;
    zl_frame_t f;
    memset(&f, 0, sizeof f);
    zl_msg_init_slice(&f.msg, c->chunk, body, h->size);
    f.flags = h->flags;
    f.kind = ZMP_KIND_DATA;
    zl_tran_pipe_control(c->sock, c->pipe, &f);
    zl_msg_release(&f.msg);
}

static void conn_parse_frames(zl_conn_t *c);

/* Whether a record may start with this kind here. Lane 1 (Completion)
 * carries only replies; a ROUTER gets replies only there, since its
 * requests go to ROUTER peers and DEALERs never answer. */
static bool conn_kind_allowed(const zl_conn_t *c, uint8_t kind)
{
    bool reply = kind == ZMP_KIND_REPLY || kind == ZMP_KIND_ERROR_REPLY;
    if (c->lane == 1)
        return reply;
    return !(reply && c->sock_type == ZLINK_ROUTER);
}

/* Decodes what is buffered (see engine_int.h), then counts the chunk
 * references of the slices it made. */
void zl_conn_parse(zl_conn_t *c)
{
    conn_parse_frames(c);
    if (c->chunk != NULL)
        zl_conn_commit_slices(c);
}

/* The decoder loop: one frame per turn, dispatched by state and class.
 * Stops when the state no longer allows parsing, the chunk holds no whole
 * frame, or the connection failed. */
static void conn_parse_frames(zl_conn_t *c)
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
        int rc;
        if (c->state == ZL_CS_HANDSHAKE && avail >= 4 && !(p[2] & ZMP_F_CONTROL)) {
            /* Not a handshake command (rule 12): refused from its first
             * four bytes, after the framing rules those bytes show; its
             * size is never trusted, its body never waited for. */
            rc = zmp_decode(&c->dec, p, 4, &h, &need);
            if (rc == EAGAIN) {
                zl_hs_refuse_data(c);
                return;
            }
        } else {
            rc = zmp_decode(&c->dec, p, avail, &h, &need);
        }
        if (rc == EAGAIN) {
            c->rneed = need;
            return;
        }
        if (rc != 0) {
            zl_conn_flush_batch(c); /* whole records before the violation are delivered */
            zl_conn_fail(c, rc == EMSGSIZE ? EMSGSIZE : EPROTO, c->dec.error_code);
            return;
        }
        const uint8_t *body = p + h.hdr_len;
        size_t flen = h.hdr_len + (size_t)h.size;
        if (flen > CHUNK_SIZE && flen <= RECENT_MAX && flen > c->rbig)
            c->rbig = flen;
        c->rpos += flen;
        c->rneed = ZMP_HDR_LEN;
        if (c->state == ZL_CS_HANDSHAKE) {
            zl_hs_frame(c, &h, body);
        } else if (zmp_is_control(h.flags)) {
            conn_take_control(c, &h, body);
        } else if (c->rpart.count == 0 && !conn_kind_allowed(c, h.kind)) {
            zl_conn_flush_batch(c);
            zl_conn_fail(c, EPROTO, ZMP_ERR_UNEXPECTED);
            return;
        } else if (!conn_take_data(c, &h, body)) {
            zl_conn_fail(c, ENOMEM, ZMP_ERR_INTERNAL);
            return;
        }
    }
}

void zl_conn_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    zl_conn_t *c = s->data;
    ZL_UNUSED(buf);
    if (nread > 0) {
        c->io->activity++;
        c->rlen += (size_t)nread;
        zl_conn_parse(c);
        zl_conn_flush_batch(c);
        /* Waiting to attach: keep a bounded amount of early input. */
        if ((c->state == ZL_CS_HANDSHAKE || c->state == ZL_CS_WAIT_PARTNER) &&
            c->rlen - c->rpos > HOLD_MAX)
            zl_conn_read_pause(c);
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

