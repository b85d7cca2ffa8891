/*
 * fuzz_fw_wire.c — libFuzzer target for the service wire v1 decoder
 * (core/framework/wire.h). Not a Bazel target: doc/testing.md ("Fuzzing
 * the framework wire") says how to build and run it with clang.
 *
 * Input layout: byte 0 picks the part count (1 + b % 4, so one frame too
 * many is reachable); the rest is cut into that many parts, each but the
 * last prefixed by a u16 big-endian length (clamped to the bytes left).
 * Each part becomes a Core message (zlink_msg_init_size). Properties
 * checked on every input:
 *  - zf_wire_decode returns 0 or EPROTO (anything else aborts);
 *  - after EPROTO the record is all zero;
 *  - an accepted record re-encodes to exactly the input parts.
 * ASan catches any read past a part.
 */
#include "core/framework/wire.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_PARTS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zlink_msg_t parts[FUZZ_MAX_PARTS];
    size_t n, at = 1;
    zf_rec_t r;
    int rc;

    if (size < 1)
        return 0;
    n = 1 + data[0] % FUZZ_MAX_PARTS;
    for (size_t i = 0; i < n; i++) {
        size_t len = size - at;
        if (i + 1 < n) {
            size_t want = 0;
            if (size - at >= 2) {
                want = (size_t)data[at] << 8 | data[at + 1];
                at += 2;
            } else {
                at = size;
            }
            len = size - at < want ? size - at : want;
        }
        if (zlink_msg_init_size(&parts[i], len) != ZLINK_CONFIG_OK)
            abort();
        if (len > 0)
            memcpy(zlink_msg_data(&parts[i]), data + at, len);
        at += len;
    }

    rc = zf_wire_decode(parts, n, &r);
    if (rc == EPROTO) {
        static const zf_rec_t zero;
        if (memcmp(&r, &zero, sizeof r) != 0)
            abort();
    } else if (rc == 0) {
        zlink_msg_t again[3];
        size_t m = 0;
        if (zf_wire_encode(&r, again, 3, &m) != 0 || m != n)
            abort();
        for (size_t i = 0; i < n; i++) {
            size_t len = zlink_msg_size(&parts[i]);
            if (zlink_msg_size(&again[i]) != len ||
                (len > 0 && memcmp(zlink_msg_data(&again[i]), zlink_msg_data(&parts[i]), len)))
                abort();
        }
        zlink_multipart_close(again, m);
    } else {
        abort();
    }
    zlink_multipart_close(parts, n);
    return 0;
}

#ifdef ZF_FUZZ_STANDALONE
/* Without libFuzzer (a toolchain without clang's fuzzer runtime): replays
 * the files named on the command line through the target, or with
 * "-n COUNT" feeds it COUNT deterministic pseudo-random inputs that start
 * like a record (magic, major, a known command), so the body parsers are
 * reached. Build with any compiler and -fsanitize=address. */
#include <stdio.h>

static uint64_t fuzz_rng = 0x9E3779B97F4A7C15ull;

static uint64_t fuzz_next(void)
{
    fuzz_rng ^= fuzz_rng << 13;
    fuzz_rng ^= fuzz_rng >> 7;
    fuzz_rng ^= fuzz_rng << 17;
    return fuzz_rng;
}

int main(int argc, char **argv)
{
    static const uint8_t cmds[] = {1, 2, 3, 4, 5, 6, 16, 17, 18, 19, 20};
    static uint8_t buf[1 << 16];

    if (argc == 3 && strcmp(argv[1], "-n") == 0) {
        long count = atol(argv[2]);
        for (long i = 0; i < count; i++) {
            size_t len = 1 + fuzz_next() % 160, f0;
            for (size_t k = 0; k < len; k++)
                buf[k] = (uint8_t)fuzz_next();
            /* frame 0 (after its length when more parts follow) starts
             * with the prefix */
            size_t at = 1;
            if (1 + buf[0] % FUZZ_MAX_PARTS > 1) {
                f0 = 5 + fuzz_next() % 60;
                buf[1] = (uint8_t)(f0 >> 8);
                buf[2] = (uint8_t)f0;
                at = 3;
            }
            buf[at] = 'Z';
            buf[at + 1] = 'M';
            buf[at + 2] = 1;
            buf[at + 3] = cmds[fuzz_next() % sizeof cmds];
            buf[at + 4] = (uint8_t)(fuzz_next() % 2);
            if (len < at + 5)
                len = at + 5;
            LLVMFuzzerTestOneInput(buf, len);
        }
        printf("%ld inputs\n", count);
        return 0;
    }
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        size_t len;
        if (f == NULL) {
            perror(argv[a]);
            return 1;
        }
        len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
    }
    return 0;
}
#endif
