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
 *  - Threads and locks: the conn's I/O thread; no locks of its own.
 */
#include "engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG_PAYLOAD (16 * 1024)
#define WBATCH_BYTES (256 * 1024)
#define WBATCH_IOVS 128
#define PUMP_ROUNDS 16


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
            if (eof || c->state == ZL_CS_LINGER) {
                /* Lane 1 ends with its lane 0 (which may still be
                 * flushing), never on its own. */
                if (!c->pipe_owner && c->partner != NULL)
                    return;
                zl_conn_terminate(c, 0);
            }
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
    zl_conn_kick_write(c);
}
