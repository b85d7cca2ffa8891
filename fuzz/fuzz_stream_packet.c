/*
 * fuzz_stream_packet.c — STREAM PACKET framing (core/src/engine/stream.c):
 * [u16 BE hlen][u32 BE blen][header][body] packets, cut by the transport's
 * reads at arbitrary points.
 *
 * The PACKET decoder lives in the engine's read callback
 * (zl_stream_on_read) and works on a connection (zl_conn_t): this harness
 * builds one without libuv handles or threads, with the real message and
 * queue code of the Core (msg.c, queue.c), and stands in for the three
 * connection functions stream.c calls (zl_conn_attach,
 * zl_conn_flush_batch, zl_conn_terminate): the flush takes the delivered
 * records, the terminate notes the error and discards the partial packet
 * as conn.c does.
 *
 * Input: [cfg u8][cut count u8][cuts u16 BE ...][stream...]. cfg picks the
 * MAXMSGSIZE the socket reports. The stream is delivered whole and split
 * at the chosen points (each read a chunk of exactly its size, so ASan sees
 * a read past it), then EOF. Asserted, for both deliveries:
 *   - the packets delivered, their header and body bytes, and the error
 *     that ended the connection are exactly those of a reference parse of
 *     the stream (doc/protocol.md §11): whole packets in order; a length
 *     over a positive limit ends it with EMSGSIZE; EOF inside a prefix,
 *     header or body with EPROTO; EOF between packets is clean;
 *   - every record is two frames, the header with MORE, and the stamps
 *     (seq) increase;
 *   - each read is consumed whole (while the connection lives), and a gathering chunk never exceeds the
 *     packet's claimed size nor max(64 KiB, twice the bytes gathered): a
 *     claim alone reserves nothing (-malloc_limit_mb catches the rest);
 *   - nothing leaks (LeakSanitizer): every slice reference is returned.
 */
#include "fuzz_common.h"
#include "engine_int.h"

#include <errno.h>
#include <string.h>

#define MAX_CUTS 16
#define GATHER_MIN (64 * 1024)

static const int64_t LIMITS[8] = {0, -1, 1, 6, 100, 4096, 65536, 1 << 20};

/* -------------------------------------------------- the reference parse */

typedef struct packet {
    size_t hoff, hlen, boff, blen; /* offsets into the stream */
} packet_t;

typedef struct expect {
    packet_t *pk;
    size_t n;
    int err; /* 0, EMSGSIZE or EPROTO */
} expect_t;

static void reference(const uint8_t *s, size_t len, int64_t limit, expect_t *e)
{
    size_t at = 0;
    e->n = 0;
    e->err = 0;
    while (at < len) {
        if (len - at < 6) {
            e->err = EPROTO;
            return;
        }
        uint64_t hlen = ((uint64_t)s[at] << 8) | s[at + 1];
        uint64_t blen = ((uint64_t)s[at + 2] << 24) | ((uint64_t)s[at + 3] << 16) |
                        ((uint64_t)s[at + 4] << 8) | s[at + 5];
        if (limit > 0 && (hlen > (uint64_t)limit || blen > (uint64_t)limit ||
                          hlen + blen > (uint64_t)limit)) {
            e->err = EMSGSIZE;
            return;
        }
        at += 6;
        if (len - at < hlen + blen) {
            e->err = EPROTO;
            return;
        }
        e->pk[e->n++] = (packet_t){at, (size_t)hlen, at + (size_t)hlen, (size_t)blen};
        at += (size_t)(hlen + blen);
    }
}

/* ------------------------------------------- the connection stand-ins */

static struct {
    const uint8_t *stream;
    const expect_t *want;
    size_t got;        /* packets delivered so far */
    uint64_t last_seq;
    bool terminated;
    int err;
} H;

static int64_t h_limit;

static int64_t fake_maxmsgsize(zl_tran_sock_t *ts)
{
    (void)ts;
    return h_limit;
}

void zl_conn_attach(zl_conn_t *c)
{
    (void)c;
}

void zl_conn_flush_batch(zl_conn_t *c)
{
    FZ_CHECK(c->rbatch.count == 2 * c->rrecords);
    while (c->rbatch.count > 0) {
        zl_frame_t *hf = zl_fq_front(&c->rbatch);
        FZ_CHECK(hf->flags == ZMP_F_MORE);
        FZ_CHECK(H.got == 0 || hf->seq > H.last_seq);
        H.last_seq = hf->seq;
        FZ_CHECK(H.got < H.want->n);
        const packet_t *p = &H.want->pk[H.got++];
        FZ_CHECK(zl_msg_size(&hf->msg) == p->hlen);
        FZ_CHECK(p->hlen == 0 || memcmp(zl_msg_data(&hf->msg), H.stream + p->hoff, p->hlen) == 0);
        zl_msg_release(&hf->msg);
        zl_fq_pop(&c->rbatch);
        zl_frame_t *bf = zl_fq_front(&c->rbatch);
        FZ_CHECK(bf != NULL && !(bf->flags & ZMP_F_MORE));
        FZ_CHECK(zl_msg_size(&bf->msg) == p->blen);
        FZ_CHECK(p->blen == 0 || memcmp(zl_msg_data(&bf->msg), H.stream + p->boff, p->blen) == 0);
        zl_msg_release(&bf->msg);
        zl_fq_pop(&c->rbatch);
    }
    c->rrecords = 0;
    c->rcharge = 0;
}

void zl_conn_terminate(zl_conn_t *c, int err)
{
    FZ_CHECK(!H.terminated);
    H.terminated = true;
    H.err = err;
    c->state = ZL_CS_CLOSING;
    zl_fq_clear(&c->rpart);
    zl_stream_discard(c);
}

/* --------------------------------------------------------- one delivery */

static void deliver(const uint8_t *s, size_t len, int64_t limit, const size_t *cuts,
                    size_t ncuts, const expect_t *want)
{
    static const zl_tran_sock_ops_t ops = {.maxmsgsize_now = fake_maxmsgsize};
    zl_tran_sock_t sock = {&ops};
    static zl_io_t io; /* the read path counts its activity there (io.c) */
    zl_conn_t *c = calloc(1, sizeof *c);
    FZ_CHECK(c != NULL);
    c->io = &io;
    c->sock = &sock;
    c->state = ZL_CS_ACTIVE;
    c->opts.stream_mode = ZLINK_STREAM_RECV_PACKET;
    zl_fq_init(&c->rbatch);
    zl_fq_init(&c->rpart);
    zl_stream_start(c);
    FZ_CHECK(c->packets);
    c->h.stream.data = c;

    memset(&H, 0, sizeof H);
    H.stream = s;
    H.want = want;
    h_limit = limit;

    size_t from = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : len;
        size_t nread = to - from;
        if (nread == 0)
            continue;
        /* A read into a fresh chunk of exactly nread bytes. */
        zl_chunk_t *ch = zl_chunk_new(nread);
        FZ_CHECK(ch != NULL);
        memcpy(ch->data, s + from, nread);
        c->chunk = ch;
        c->rpos = 0;
        c->rlen = 0;
        uv_buf_t buf = {.base = (char *)ch->data, .len = nread};
        zl_stream_on_read(&c->h.stream, (ssize_t)nread, &buf);
        FZ_CHECK(c->rlen == nread);
        FZ_CHECK(H.terminated || c->rpos == c->rlen); /* a live conn used it all */
        const zl_stream_packet_t *k = &c->pkt;
        if (k->acc != NULL) {
            uint64_t total = (uint64_t)k->hlen + k->blen;
            uint64_t bound = 2 * k->have > GATHER_MIN ? 2 * k->have : GATHER_MIN;
            FZ_CHECK(k->acc->cap <= total && k->acc->cap <= bound);
            FZ_CHECK(k->have < total);
        }
        c->chunk = NULL;
        zl_chunk_release(ch);
        from = to;
    }
    if (!H.terminated)
        zl_stream_on_read(&c->h.stream, UV_EOF, NULL);
    FZ_CHECK(H.terminated);
    /* EOF between packets ends the connection with 0 (an orderly end). */
    FZ_CHECK(H.err == want->err);
    FZ_CHECK(H.got == want->n);
    FZ_CHECK(c->pkt.acc == NULL);
    zl_fq_fini(&c->rbatch);
    zl_fq_fini(&c->rpart);
    free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader_t in = {data, size};
    int64_t limit = LIMITS[fz_u8(&in) & 7];
    size_t cuts[MAX_CUTS];
    size_t ncuts = fz_cuts(&in, cuts, MAX_CUTS);
    const uint8_t *s = in.p;
    size_t len = in.n;
    fz_cuts_fit(cuts, ncuts, len);

    expect_t want;
    want.pk = calloc(len / 6 + 1, sizeof(packet_t));
    FZ_CHECK(want.pk != NULL);
    reference(s, len, limit, &want);

    deliver(s, len, limit, NULL, 0, &want);
    deliver(s, len, limit, cuts, ncuts, &want);
    free(want.pk);
    return 0;
}
