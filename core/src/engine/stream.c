/*
 * stream.c — raw connections of STREAM sockets: no ZMP, no handshake.
 *
 * Design notes
 *  - A STREAM connection gets its pipe as soon as the transport is up
 *    (peer.type = ZLINK_STREAM, empty peer rid: the socket layer names the
 *    peer with its own 4-byte id when it attaches the pipe).
 *  - The receive mode is read from the connection's options snapshot
 *    (the socket fixes it before its first bind or connect).
 *  - RAW reading: each read becomes one single-frame record, a SLICE of
 *    the receive chunk (conn.c owns the chunk and the allocation callback),
 *    and is delivered at once; RCVHWM stops reading exactly as for ZMP.
 *  - PACKET reading: the bytes are [u16 BE hlen][u32 BE blen][hdr][body]
 *    packets, each delivered as one record of two frames (hdr with MORE,
 *    then body) once it is complete, never before: POLLIN means a whole
 *    packet. A packet that lies whole inside one read is sliced out of the
 *    receive chunk. One cut by a read boundary is copied, as its bytes
 *    arrive, into a gathering chunk of its own (pkt.acc) that grows by
 *    doubling but never beyond what arrived (or 64 KiB) and never beyond
 *    the lengths claimed: a peer's claim alone reserves nothing. The read
 *    chunk is always consumed whole, so it never grows for a packet.
 *  - PACKET limits: MAXMSGSIZE is read from the socket at each prefix (the
 *    value in force when the packet's lengths became known); hlen, blen or
 *    their sum above a positive limit ends the connection (EMSGSIZE), as
 *    does EOF inside a packet (EPROTO). Complete packets before the fault
 *    are delivered; the broken one is dropped whole (zl_stream_discard).
 *  - PACKET order: each packet's first frame carries an admission stamp in
 *    its seq field, from one process-wide counter taken when the packet is
 *    complete, so the socket can hand out packets of different connections
 *    in the order they were completed (protocols/stream.c).
 *  - Writing: conn.c's pump writes each record's payload bytes with no
 *    header (c->raw), in both modes. The socket closes a peer by closing
 *    the out queue's writer (flushed, then closed) or with zl_conn_close.
 *  - Threads and locks: the conn's I/O thread only; no locks (the stamp
 *    counter is one atomic).
 */
#include "engine_int.h"

#include <errno.h>
#include <string.h>

#define PACKET_PREFIX 6
#define PACKET_GATHER_MIN (64 * 1024)

/* Admission stamps of STREAM packets (any STREAM socket of the process). */
static _Atomic uint64_t stream_packet_stamp;

void zl_stream_start(zl_conn_t *c)
{
    memset(&c->peer, 0, sizeof c->peer);
    c->peer.type = ZLINK_STREAM;
    c->peer.weight = ZLINK_WEIGHT_DFLT;
    c->peer.lanes = 1;
    c->lanes = 1;
    c->rneed = 0;
    c->packets = c->opts.stream_mode == ZLINK_STREAM_RECV_PACKET;
    memset(&c->pkt, 0, sizeof c->pkt);
    zl_conn_attach(c); /* creates the pipe, attaches, starts reading */
}

void zl_stream_discard(zl_conn_t *c)
{
    if (c->pkt.acc != NULL)
        zl_chunk_release(c->pkt.acc);
    memset(&c->pkt, 0, sizeof c->pkt);
}

/* Whether EOF now would cut a packet (part of a prefix, or of a header or
 * body, has arrived). Loop thread. */
static bool packet_partial(const zl_conn_t *c)
{
    return c->pkt.prefix_have > 0 || c->pkt.in_body;
}

/* Appends the finished packet whose hdr + body bytes start at data inside
 * chunk ch to the batch, as one record of two slices (each takes its own
 * chunk reference, or copies when small; the caller keeps its reference).
 * Returns false when out of memory, with nothing added. Loop thread. */
static bool packet_emit(zl_conn_t *c, zl_chunk_t *ch, const uint8_t *data)
{
    const zl_stream_packet_t *k = &c->pkt;
    zl_frame_t *hf = zl_fq_push(&c->rpart);
    if (hf == NULL)
        return false;
    memset(hf, 0, sizeof *hf); /* no message yet: a clear skips it */
    zl_frame_t *bf = zl_fq_push(&c->rpart);
    if (bf == NULL) {
        zl_fq_clear(&c->rpart);
        return false;
    }
    memset(bf, 0, sizeof *bf);
    zl_msg_init_slice(&hf->msg, ch, data, k->hlen);
    hf->flags = ZMP_F_MORE;
    hf->seq = atomic_fetch_add_explicit(&stream_packet_stamp, 1, memory_order_relaxed);
    zl_msg_init_slice(&bf->msg, ch, data + k->hlen, k->blen);
    zl_fq_splice(&c->rbatch, &c->rpart);
    c->rrecords++;
    c->rcharge += (uint64_t)k->hlen + k->blen + 2 * (uint64_t)ZL_FRAME_OVERHEAD;
    return true;
}

/* Makes the gathering chunk hold at least want bytes (want <= the packet's
 * hdr + body length), keeping the k->have bytes gathered so far. Grows by
 * doubling from PACKET_GATHER_MIN, capped at the packet's length, so its
 * size stays within twice what arrived (or the minimum). Returns false
 * when out of memory; the old chunk is then kept. Loop thread. */
static bool packet_gather_reserve(zl_stream_packet_t *k, uint64_t want)
{
    uint64_t total = (uint64_t)k->hlen + k->blen;
    uint64_t cap = k->acc != NULL ? k->acc->cap : 0;
    if (want <= cap)
        return true;
    uint64_t n = cap * 2;
    if (n < want)
        n = want;
    if (n < PACKET_GATHER_MIN)
        n = PACKET_GATHER_MIN;
    if (n > total)
        n = total;
    if (n > SIZE_MAX)
        return false;
    zl_chunk_t *a = zl_chunk_new((size_t)n);
    if (a == NULL)
        return false;
    if (k->have > 0)
        memcpy(a->data, k->acc->data, (size_t)k->have);
    if (k->acc != NULL)
        zl_chunk_release(k->acc);
    k->acc = a;
    return true;
}

/* Ends the connection for a packet fault (err), after delivering the whole
 * packets this read produced. Loop thread. */
static void packet_fail(zl_conn_t *c, int err)
{
    zl_fq_clear(&c->rpart);
    zl_conn_flush_batch(c);
    zl_conn_terminate(c, err);
}

/* The PACKET decoder: consumes everything buffered in the read chunk
 * (rpos..rlen), turning finished packets into records, then delivers the
 * batch (which stops reading at the RCVHWM). Loop thread; may end the
 * connection. */
static void packet_parse(zl_conn_t *c)
{
    zl_stream_packet_t *k = &c->pkt;
    for (;;) {
        const uint8_t *p = c->chunk->data + c->rpos;
        size_t avail = c->rlen - c->rpos;
        if (!k->in_body) {
            if (avail == 0)
                break;
            size_t take = PACKET_PREFIX - k->prefix_have;
            if (take > avail)
                take = avail;
            memcpy(k->prefix + k->prefix_have, p, take);
            k->prefix_have = (uint8_t)(k->prefix_have + take);
            c->rpos += take;
            if (k->prefix_have < PACKET_PREFIX)
                break;
            k->prefix_have = 0;
            k->hlen = (uint16_t)((k->prefix[0] << 8) | k->prefix[1]);
            k->blen = ((uint32_t)k->prefix[2] << 24) | ((uint32_t)k->prefix[3] << 16) |
                      ((uint32_t)k->prefix[4] << 8) | (uint32_t)k->prefix[5];
            uint64_t total = (uint64_t)k->hlen + k->blen;
            int64_t limit = c->sock->ops->maxmsgsize_now(c->sock);
            if (limit > 0 && (k->hlen > (uint64_t)limit || k->blen > (uint64_t)limit ||
                              total > (uint64_t)limit)) {
                packet_fail(c, EMSGSIZE);
                return;
            }
            k->in_body = true;
            k->have = 0;
            p = c->chunk->data + c->rpos;
            avail = c->rlen - c->rpos;
            if (total <= avail) {
                /* Whole in this read: slices of the read chunk. */
                if (!packet_emit(c, c->chunk, p)) {
                    packet_fail(c, ENOMEM);
                    return;
                }
                c->rpos += (size_t)total;
                k->in_body = false;
                continue;
            }
        }
        /* Cut by the read boundary: gather what is here. */
        if (avail == 0)
            break;
        uint64_t total = (uint64_t)k->hlen + k->blen;
        uint64_t take = total - k->have;
        if (take > avail)
            take = avail;
        if (!packet_gather_reserve(k, k->have + take)) {
            packet_fail(c, ENOMEM);
            return;
        }
        memcpy(k->acc->data + k->have, p, (size_t)take);
        k->have += take;
        c->rpos += (size_t)take;
        if (k->have < total)
            break; /* the read chunk is used up */
        bool ok = packet_emit(c, k->acc, k->acc->data);
        zl_chunk_release(k->acc); /* the slices hold it now */
        k->acc = NULL;
        k->have = 0;
        k->in_body = false;
        if (!ok) {
            packet_fail(c, ENOMEM);
            return;
        }
    }
    zl_conn_flush_batch(c);
}

void zl_stream_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    zl_conn_t *c = s->data;
    ZL_UNUSED(buf);
    if (nread > 0) {
        c->io->activity++;
        c->rlen += (size_t)nread;
        if (c->state != ZL_CS_ACTIVE) {
            c->rpos = c->rlen; /* closing: nobody wants it */
            return;
        }
        if (c->packets) {
            packet_parse(c);
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
    int err;
    if (nread == UV_EOF)
        err = c->packets && packet_partial(c) ? EPROTO : 0; /* mid-packet: a fault */
    else if (nread == UV_ENOBUFS)
        err = ENOMEM;
    else
        err = (int)-nread;
    zl_conn_terminate(c, err);
}
