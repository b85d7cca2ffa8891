/*
 * test_direct_write.c — records written by the sending thread itself.
 *
 * A send into an idle tcp or ipc connection is written on the caller's
 * thread (core/src/engine/conn_write.c, "Direct write"); what the kernel
 * does not take at once, a failure and a stream of sends go to the I/O
 * thread. These cases check, through the public API, that the two writers
 * together keep the contract of one:
 *  - a record larger than the socket buffers, sent after a pause (so its
 *    sender writes the first part and the I/O thread the rest), arrives
 *    whole and byte for byte, and the small records sent right behind it
 *    arrive after it, in order;
 *  - a ping-pong with a pause before every send (every send written by its
 *    sender) delivers every record once, in order, both ways;
 *  - a sender whose peer went away is told through the usual results
 *    (admitted while the loss is not yet known, NOT_CONNECTED after), the
 *    process lives on with SIGPIPE's default action, and the socket serves
 *    the next peer, twenty times over. A write on the sending thread uses
 *    MSG_NOSIGNAL; a write meeting a socket the peer already reset is a
 *    race this case cannot force (here the loss was always known before
 *    the next send: every later send was refused), so it shows the
 *    results and the recovery, not that flag.
 * Every case runs for inproc too, where nothing is written directly: the
 * same observable behaviour is expected there.
 */
#include "zlink.h"
#include "zltest.h"
#include "zltest_zlink.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Sleeps past the direct write's gap (10 µs), so the next send is one. */
static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static uint8_t pattern(size_t i)
{
    return (uint8_t)(i * 131u + (i >> 9) * 7u + 1u);
}

/* Receives one one-part record of exactly want bytes into a fresh buffer. */
static uint8_t *recv_blob(void *s, size_t want)
{
    zlink_msg_t parts[2];
    size_t count = 0;
    const zlink_routing_id_t *rid = NULL;
    ZT_EQ_INT(zlink_recv(s, &rid, parts, 2, &count, ZLINK_RECV_FLAGS_NONE), ZLINK_RECV_OK);
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), want);
    uint8_t *copy = malloc(want);
    ZT_CHECK(copy != NULL);
    memcpy(copy, zlink_msg_data(&parts[0]), want);
    zlink_multipart_close(parts, count);
    return copy;
}

static void large_record_after_a_pause(const char *tr)
{
    void *ctx = zlt_round_begin(tr);
    void *a = zlt_sock(ctx, ZLINK_PAIR);
    void *b = zlt_sock(ctx, ZLINK_PAIR);
    /* Room for a round's records on either side: the test reads only
     * after it sent them all. */
    zlt_set_u64(a, ZLINK_SNDHWM, 64u << 20);
    zlt_set_u64(b, ZLINK_RCVHWM, 64u << 20);
    zlt_link(a, b, tr);
    /* The link is up once a record crossed it. */
    ZT_EQ_INT(zlt_send_str(a, "hello", 0), ZLINK_SUBMIT_OK);
    zlt_expect_str(b, "hello");

    const size_t big = 6u << 20; /* above what loopback buffers take at once */
    uint8_t *data = malloc(big);
    ZT_CHECK(data != NULL);
    for (size_t i = 0; i < big; i++)
        data[i] = pattern(i);
    for (int round = 0; round < 3; round++) {
        pause_us(2000);
        ZT_EQ_INT(zlt_send_data(a, data, big, 0), ZLINK_SUBMIT_OK);
        char text[32];
        for (int i = 0; i < 100; i++) {
            snprintf(text, sizeof text, "small %d.%d", round, i);
            ZT_EQ_INT(zlt_send_str(a, text, 0), ZLINK_SUBMIT_OK);
        }
        uint8_t *got = recv_blob(b, big);
        for (size_t i = 0; i < big; i++)
            if (got[i] != data[i])
                ZT_FAIL("round %d: byte %zu is %u, sent %u", round, i, got[i], data[i]);
        free(got);
        for (int i = 0; i < 100; i++) {
            snprintf(text, sizeof text, "small %d.%d", round, i);
            zlt_expect_str(b, text);
        }
    }
    free(data);
    zlt_expect_no_data(b);
    zlt_round_end();
}

static void ping_pong_with_pauses(const char *tr)
{
    void *ctx = zlt_round_begin(tr);
    void *a = zlt_sock(ctx, ZLINK_PAIR);
    void *b = zlt_sock(ctx, ZLINK_PAIR);
    zlt_link(a, b, tr);
    char text[48];
    for (int i = 0; i < 300; i++) {
        pause_us(30);
        snprintf(text, sizeof text, "ping %d", i);
        ZT_EQ_INT(zlt_send_str(a, text, 0), ZLINK_SUBMIT_OK);
        zlt_expect_str(b, text);
        pause_us(30);
        snprintf(text, sizeof text, "pong %d", i);
        /* Two parts: a record is written whole, never split between writers. */
        zlt_send_ok(b, text, "tail");
        zlt_expect_strs(a, text, "tail");
    }
    zlt_expect_no_data(a);
    zlt_expect_no_data(b);
    zlt_round_end();
}

static void peer_gone_next_peer_served(const char *tr)
{
    signal(SIGPIPE, SIG_DFL); /* a write that raised it would end this case */
    void *ctx = zlt_round_begin(tr);
    void *a = zlt_sock(ctx, ZLINK_PAIR);
    char ep[256];
    zlt_bind(a, tr, ep, sizeof ep);
    size_t ok = 0, refused = 0;
    for (int peer = 0; peer < 20; peer++) {
        /* A peer in a context of its own, as a process would be (inproc
         * endpoints are per context: there it shares a's). */
        bool own = strcmp(tr, "inproc") != 0;
        void *pctx = own ? zlt_ctx_new() : ctx;
        void *b = zlt_socket_linger0(pctx, ZLINK_PAIR);
        zlt_set_int(b, ZLINK_RCVTIMEO, 5000);
        zlt_connect(b, ep);
        char text[48];
        snprintf(text, sizeof text, "peer %d", peer);
        /* The new peer is paired once a record reaches it. */
        for (;;) {
            zlink_submit_result_t r = zlt_send_str(a, text, ZLINK_DONTWAIT);
            if (r == ZLINK_SUBMIT_OK)
                break;
            ZT_CHECK(r == ZLINK_SUBMIT_NOT_CONNECTED || r == ZLINK_SUBMIT_BACKPRESSURED);
            pause_us(1000);
        }
        zlt_expect_str(b, text);
        /* The peer goes away; a keeps sending, each send past the gap. */
        zlt_close(b); /* returns at once; its I/O thread closes the descriptor */
        for (int i = 0; i < 200; i++) {
            pause_us(20);
            zlink_submit_result_t r = zlt_send_str(a, "after", ZLINK_DONTWAIT);
            if (r == ZLINK_SUBMIT_OK)
                ok++;
            else if (r == ZLINK_SUBMIT_NOT_CONNECTED || r == ZLINK_SUBMIT_BACKPRESSURED)
                refused++;
            else
                ZT_FAIL("send to a gone peer: result %d", (int)r);
        }
        if (own)
            zlt_ctx_term(pctx);
    }
    fprintf(stderr, "# sends after the peer went: %zu admitted, %zu refused\n", ok, refused);
    /* Still serving: one more peer gets its record. */
    void *c = zlt_sock(ctx, ZLINK_PAIR);
    zlt_connect(c, ep);
    for (;;) {
        zlink_submit_result_t r = zlt_send_str(a, "last", ZLINK_DONTWAIT);
        if (r == ZLINK_SUBMIT_OK)
            break;
        ZT_CHECK(r == ZLINK_SUBMIT_NOT_CONNECTED || r == ZLINK_SUBMIT_BACKPRESSURED);
        pause_us(1000);
    }
    /* Records admitted for a peer that went are gone with its pipe. */
    zlt_expect_str(c, "last");
    zlt_expect_no_data(c);
    zlt_round_end();
}

static const zt_case_t cases[] = {
    ZT_CASE_TP(large_record_after_a_pause),
    ZT_CASE_TP(ping_pong_with_pauses),
    ZT_CASE_TP(peer_gone_next_peer_served),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
