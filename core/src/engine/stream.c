/*
 * stream.c — raw connections of STREAM sockets: no ZMP, no handshake.
 *
 * Design notes
 *  - A STREAM connection gets its pipe as soon as the transport is up
 *    (peer.type = ZLINK_STREAM, empty peer rid: the socket layer names the
 *    peer with its own 4-byte id when it attaches the pipe).
 *  - Reading: each read becomes one single-frame record, a SLICE of the
 *    receive chunk (conn.c owns the chunk and the allocation callback), and
 *    is delivered at once; RCVHWM stops reading exactly as for ZMP.
 *  - Writing: conn.c's pump writes each record's payload bytes with no
 *    header (c->raw). The socket closes a peer by closing the out queue's
 *    writer (flushed, then closed) or with zl_conn_close.
 *  - Threads and locks: the conn's I/O thread only; no locks.
 */
#include "engine_int.h"

#include <errno.h>
#include <string.h>

void zl_stream_start(zl_conn_t *c)
{
    memset(&c->peer, 0, sizeof c->peer);
    c->peer.type = ZLINK_STREAM;
    c->peer.weight = ZLINK_WEIGHT_DFLT;
    c->peer.lanes = 1;
    c->lanes = 1;
    c->rneed = 0;
    zl_conn_attach(c); /* creates the pipe, attaches, starts reading */
}

void zl_stream_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    zl_conn_t *c = s->data;
    ZL_UNUSED(buf);
    if (nread > 0) {
        c->rlen += (size_t)nread;
        if (c->state != ZL_CS_ACTIVE) {
            c->rpos = c->rlen; /* closing: nobody wants it */
            return;
        }
        zl_frame_t *f = zl_fq_push(&c->rbatch);
        if (f == NULL) {
            zl_conn_terminate(c, ENOMEM);
            return;
        }
        memset(f, 0, sizeof *f);
        zl_msg_init_slice(&f->msg, c->chunk, c->chunk->data + c->rpos, (size_t)nread);
        c->rpos = c->rlen;
        c->rrecords = 1;
        c->rcharge = (uint64_t)nread + ZL_FRAME_OVERHEAD;
        zl_conn_flush_batch(c);
        return;
    }
    if (nread == 0)
        return;
    zl_conn_terminate(c, nread == UV_EOF ? 0 : (nread == UV_ENOBUFS ? ENOMEM : (int)-nread));
}
