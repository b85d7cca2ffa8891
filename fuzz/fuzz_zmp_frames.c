/*
 * fuzz_zmp_frames.c — the ZMP frame decoder (core/src/wire/zmp.c,
 * zmp_decode) over a byte stream, whole and split at fuzzer-chosen points.
 *
 * Input: [cfg u8][cut count u8][cuts u16 BE ...][stream...]. cfg picks the
 * MAXMSGSIZE limit. The stream is decoded twice, the way the connection
 * code does it (conn_read.c: an accumulation buffer, zmp_decode from the
 * start of the next frame until EAGAIN or a violation):
 *   1. all bytes present at once;
 *   2. the bytes arriving in reads cut at the chosen points.
 * Asserted:
 *   - every result is 0, EAGAIN, EPROTO or EMSGSIZE; a violation names a
 *     ZMP ERROR code (EMSGSIZE always BODY_TOO_LARGE);
 *   - a decoded frame lies inside the bytes given, its header re-encodes to
 *     the same bytes (zmp_encode_header), a control body is <= 4096 and a
 *     data frame obeys the limit;
 *   - EAGAIN asks for more bytes than present, and never more than one
 *     header plus what the limit allows (a peer's claim is not a request
 *     to reserve: with no limit, only the header is bounded, which
 *     conn_read's bounded read-ahead handles);
 *   - the frames, the final result (with its ERROR code), the bytes
 *     consumed and zmp_decoder_eof are the same in both runs: the decoded
 *     frames do not depend on where the stream was split.
 * Each read's bytes are copied to a heap block of exactly that size, so
 * ASan catches a read past what has arrived.
 */
#include "fuzz_common.h"
#include "wire/zmp.h"

#include <errno.h>
#include <string.h>

#define MAX_CUTS 16

static const int64_t LIMITS[8] = {0, -1, 1, 8, 100, 4096, 65536, 1 << 20};

typedef struct frame {
    uint8_t flags, kind, hdr_len;
    uint32_t size;
    uint64_t seq;
    size_t off; /* offset of the frame in the stream */
} frame_t;

typedef struct run {
    frame_t *frames;
    size_t nframes;
    size_t pos;       /* bytes consumed (start of the next frame) */
    int rc;           /* EAGAIN (waiting) or the violation */
    uint8_t error_code;
    int eof;          /* zmp_decoder_eof at the end */
    bool mid;
    uint64_t rec_bytes;
} run_t;

static void check_frame(const zmp_decoder_t *d, const uint8_t *p, size_t n, const zmp_hdr_t *h)
{
    FZ_CHECK(h->hdr_len == ZMP_HDR_LEN || h->hdr_len == ZMP_HDR_SEQ_LEN);
    FZ_CHECK((uint64_t)h->hdr_len + h->size <= n);
    uint8_t hdr[ZMP_HDR_SEQ_LEN];
    size_t len = zmp_encode_header(hdr, h->flags, h->kind, h->seq, h->size);
    FZ_CHECK(len == h->hdr_len);
    FZ_CHECK(memcmp(hdr, p, len) == 0);
    if (zmp_is_control(h->flags))
        FZ_CHECK(h->size <= ZMP_CONTROL_MAX);
    else if (d->maxmsgsize > 0)
        FZ_CHECK(h->size <= (uint64_t)d->maxmsgsize);
}

/* Decodes what is buffered (s[0..have), next frame at r->pos) until it
 * needs more bytes or fails. Returns false once the stream has failed. */
static bool drain(zmp_decoder_t *d, const uint8_t *s, size_t have, run_t *r)
{
    uint8_t *buf = malloc(have > 0 ? have : 1);
    FZ_CHECK(buf != NULL);
    memcpy(buf, s, have);
    for (;;) {
        const uint8_t *p = buf + r->pos;
        size_t n = have - r->pos;
        zmp_hdr_t h;
        size_t need = 0;
        int rc = zmp_decode(d, p, n, &h, &need);
        if (rc == 0) {
            check_frame(d, p, n, &h);
            frame_t *f = &r->frames[r->nframes++];
            f->flags = h.flags;
            f->kind = h.kind;
            f->hdr_len = h.hdr_len;
            f->size = h.size;
            f->seq = h.seq;
            f->off = r->pos;
            r->pos += h.hdr_len + (size_t)h.size;
            continue;
        }
        r->rc = rc;
        if (rc == EAGAIN) {
            FZ_CHECK(need > n);
            uint64_t body_max = d->maxmsgsize > ZMP_CONTROL_MAX ? (uint64_t)d->maxmsgsize
                                                                 : ZMP_CONTROL_MAX;
            if (d->maxmsgsize > 0)
                FZ_CHECK(need <= ZMP_HDR_SEQ_LEN + body_max);
            else if (n < ZMP_HDR_LEN)
                FZ_CHECK(need <= ZMP_HDR_SEQ_LEN);
            free(buf);
            return true;
        }
        FZ_CHECK(rc == EPROTO || rc == EMSGSIZE);
        FZ_CHECK(d->error_code >= ZMP_ERR_MALFORMED && d->error_code <= ZMP_ERR_INTERNAL);
        if (rc == EMSGSIZE)
            FZ_CHECK(d->error_code == ZMP_ERR_BODY_TOO_LARGE);
        r->error_code = d->error_code;
        free(buf);
        return false;
    }
}

static void decode(const uint8_t *s, size_t len, int64_t limit, const size_t *cuts, size_t ncuts,
                   run_t *r)
{
    zmp_decoder_t d;
    zmp_decoder_init(&d, limit);
    bool alive = true;
    for (size_t i = 0; i < ncuts && alive; i++)
        alive = drain(&d, s, cuts[i], r);
    if (alive)
        alive = drain(&d, s, len, r);
    r->eof = alive ? zmp_decoder_eof(&d, len - r->pos) : -1;
    if (alive)
        FZ_CHECK(r->eof == 0 || r->eof == EPROTO);
    r->mid = d.mid;
    r->rec_bytes = d.rec_bytes;
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

    size_t max_frames = len / ZMP_HDR_LEN + 1;
    run_t whole = {0}, split = {0};
    whole.frames = calloc(max_frames, sizeof(frame_t));
    split.frames = calloc(max_frames, sizeof(frame_t));
    FZ_CHECK(whole.frames != NULL && split.frames != NULL);

    decode(s, len, limit, NULL, 0, &whole);
    decode(s, len, limit, cuts, ncuts, &split);

    FZ_CHECK(whole.nframes == split.nframes);
    for (size_t i = 0; i < whole.nframes; i++) {
        const frame_t *a = &whole.frames[i], *b = &split.frames[i];
        FZ_CHECK(a->flags == b->flags && a->kind == b->kind && a->hdr_len == b->hdr_len);
        FZ_CHECK(a->size == b->size && a->seq == b->seq && a->off == b->off);
    }
    FZ_CHECK(whole.pos == split.pos);
    FZ_CHECK(whole.rc == split.rc);
    FZ_CHECK(whole.error_code == split.error_code);
    FZ_CHECK(whole.eof == split.eof);
    FZ_CHECK(whole.mid == split.mid);
    FZ_CHECK(whole.rec_bytes == split.rec_bytes);
    free(whole.frames);
    free(split.frames);
    return 0;
}
