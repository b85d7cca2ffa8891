/*
 * test_pubsub.c — core-contract §8 "PUB [G3]" and "SUB [G2]" through the
 * public API (zlink.h) only. doc/contract-tests/
 * dealer_router_pubsub_stream.md maps every item to a function here or
 * says why it is elsewhere or later.
 *
 * Each case runs over inproc and tcp. Subscriptions reach the PUB
 * asynchronously (inproc: at its next publish; tcp: after the round trip),
 * so a case establishes a subscription by publishing numbered sync records
 * on a subscribed topic until the first one arrives (blocking receive with
 * a short timeout, bounded loop), then drains the sync records still in
 * flight. Every sync record published after the first one that arrived is
 * delivered, so that drain is exact. A later subscription change is
 * fenced the same way: subscription frames travel in order, so once a
 * newer subscription works, the older changes have been applied. No sleeps.
 */
#include "zltest_zlink.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static void subscribe(void *sub, const char *topic)
{
    ZT_EQ_INT(zlink_set_subscription(sub, topic), ZLINK_CONFIG_OK);
}

/* Publishes one record: topic frame plus one part `text`. The part is
 * consumed whatever the result. */
static zlink_submit_result_t pub_str(void *pub, const char *topic, const char *text, int flags)
{
    zlink_msg_t m;
    zlt_msg_set(&m, text, strlen(text));
    zlink_submit_result_t rc = zlink_publish(pub, topic, &m, 1, (zlink_send_flags_t)flags);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return rc;
}

/* Receives one record of at most one part: the topic (NUL added here) and
 * the part's bytes (NUL added; "" when there is no part). Checks RID NULL. */
static zlink_recv_result_t s_recv(void *sub, char *topic, size_t tcap, char *text, size_t cap,
                                  int flags)
{
    zlink_msg_t parts[4];
    size_t count = 0, tlen = 0;
    const zlink_routing_id_t *rid = (const zlink_routing_id_t *)(uintptr_t)0x1;
    zlink_recv_result_t rc = zlink_subscribe(sub, &rid, topic, tcap - 1, &tlen, parts, 4, &count,
                                             (zlink_recv_flags_t)flags);
    if (rc != ZLINK_RECV_OK)
        return rc;
    ZT_CHECK(rid == NULL);
    ZT_CHECK(tlen < tcap);
    topic[tlen] = '\0';
    ZT_CHECK(count <= 1);
    text[0] = '\0';
    if (count == 1) {
        size_t n = zlink_msg_size(&parts[0]);
        ZT_CHECK(n < cap);
        if (n > 0)
            memcpy(text, zlink_msg_data(&parts[0]), n);
        text[n] = '\0';
    }
    zlink_multipart_close(parts, count);
    return rc;
}

static void s_expect(void *sub, const char *topic, const char *text)
{
    char t[256], b[256];
    ZT_EQ_INT(s_recv(sub, t, sizeof t, b, sizeof b, 0), ZLINK_RECV_OK);
    ZT_EQ_STR(t, topic);
    ZT_EQ_STR(b, text);
}

static void s_expect_none(void *sub)
{
    char t[256], b[256];
    ZT_EQ_INT(s_recv(sub, t, sizeof t, b, sizeof b, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    ZT_EQ_INT(zlink_errno(), EAGAIN);
}

/* Receives one record of at most one part of any size: the topic
 * (NUL added), the part's size, and its first bytes as a string. */
static zlink_recv_result_t s_recv_any(void *sub, char *topic, size_t tcap, size_t *size,
                                      char head[32], int flags)
{
    zlink_msg_t parts[2];
    size_t count = 0, tlen = 0;
    zlink_recv_result_t rc = zlink_subscribe(sub, NULL, topic, tcap - 1, &tlen, parts, 2, &count,
                                             (zlink_recv_flags_t)flags);
    if (rc != ZLINK_RECV_OK)
        return rc;
    topic[tlen] = '\0';
    ZT_CHECK(count <= 1);
    *size = count == 1 ? zlink_msg_size(&parts[0]) : 0;
    size_t n = *size < 31 ? *size : 31;
    if (n > 0)
        memcpy(head, zlink_msg_data(&parts[0]), n);
    head[n] = '\0';
    zlink_multipart_close(parts, count);
    return rc;
}

/* Establishes that sub's subscription to `topic` (and every subscription
 * change sub made before it) is applied at pub: publishes "sync:<n>" on
 * topic until one arrives, then receives the ones still in flight. */
static void sub_sync(void *pub, void *sub, const char *topic)
{
    zlt_set_int(sub, ZLINK_RCVTIMEO, 20);
    int64_t end = zt_now_ms() + ZT_MS(3000);
    int sent = 0, first = -1;
    while (first < 0) {
        if (zt_now_ms() > end)
            ZT_FAIL("subscription to '%s' never took effect", topic);
        char text[32];
        snprintf(text, sizeof text, "sync:%d", sent++);
        ZT_EQ_INT(pub_str(pub, topic, text, ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
        char t[256], b[256];
        zlink_recv_result_t rc = s_recv(sub, t, sizeof t, b, sizeof b, 0);
        if (rc == ZLINK_RECV_NO_DATA)
            continue;
        ZT_EQ_INT(rc, ZLINK_RECV_OK);
        ZT_EQ_STR(t, topic);
        ZT_CHECK(strncmp(b, "sync:", 5) == 0);
        first = atoi(b + 5);
    }
    zlt_set_int(sub, ZLINK_RCVTIMEO, ZT_MS(2000));
    for (int k = first + 1; k < sent; k++) {
        char text[32];
        snprintf(text, sizeof text, "sync:%d", k);
        s_expect(sub, topic, text);
    }
}

/* A PUB (bound) and a SUB (connected) subscribed to `topic` and synced. */
static void ps_pair(void *ctx, const char *tr, const char *topic, void **pub_out, void **sub_out)
{
    char ep[256];
    void *pub = zlt_sock(ctx, ZLINK_PUB);
    zlt_bind(pub, tr, ep, sizeof ep);
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    zlt_connect(sub, ep);
    subscribe(sub, topic);
    sub_sync(pub, sub, topic);
    *pub_out = pub;
    *sub_out = sub;
}

/* Sizes for filling a subscriber's path: one record per RCVHWM, large
 * records so the kernel's buffers (some MB on loopback) fill quickly. */
static uint64_t fill_record_size(const char *tr)
{
    return zlt_is_tcp(tr) ? 65536 : 8;
}

/* Publishes numbered records ("<i>" padded to size) on topic until the
 * PUB (NODROP 1) refuses one for good; returns how many were admitted.
 * First with DONTWAIT until refused; then, since the I/O thread may still
 * be moving earlier records into the kernel, with NONE and a short
 * SNDTIMEO until one times out (settle: tcp only; inproc has nothing in
 * between): after that nothing downstream moves any more (the subscriber
 * does not read). Fails past `limit` records. */
static int publish_until_refused(void *pub, const char *topic, size_t size, int limit,
                                 bool settle)
{
    unsigned char *buf = calloc(1, size < 32 ? 32 : size);
    ZT_CHECK(buf != NULL);
    int flags = ZLINK_DONTWAIT;
    for (int i = 0; i < limit; i++) {
        zlink_msg_t m;
        memset(buf, 0, size < 32 ? 32 : size);
        snprintf((char *)buf, 32, "%d", i);
        zlt_msg_set(&m, buf, size);
        zlink_submit_result_t rc = zlink_publish(pub, topic, &m, 1, (zlink_send_flags_t)flags);
        ZT_EQ_INT(zlink_msg_size(&m), 0);
        ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
        if (rc == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_EQ_INT(zlink_errno(), EAGAIN);
            if (flags == ZLINK_DONTWAIT && settle) {
                flags = 0;
                zlt_set_int(pub, ZLINK_SNDTIMEO, ZT_MS(50));
                i--; /* the same number again, waiting */
                continue;
            }
            zlt_set_int(pub, ZLINK_SNDTIMEO, ZT_MS(2000));
            free(buf);
            return i;
        }
        ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
    }
    free(buf);
    ZT_FAIL("publish never refused within %d records", limit);
}

/* Publishes one record of `size` bytes starting with the text tag. */
static zlink_submit_result_t pub_sized(void *pub, const char *topic, size_t size,
                                       const char *tag, int flags)
{
    zlink_msg_t m;
    ZT_EQ_INT(zlink_msg_init_size(&m, size < 32 ? 32 : size), ZLINK_CONFIG_OK);
    memset(zlink_msg_data(&m), 0, zlink_msg_size(&m));
    snprintf(zlink_msg_data(&m), 32, "%s", tag);
    zlink_submit_result_t rc = zlink_publish(pub, topic, &m, 1, (zlink_send_flags_t)flags);
    ZT_EQ_INT(zlink_msg_size(&m), 0);
    ZT_EQ_INT(zlink_msg_close(&m), ZLINK_CONFIG_OK);
    return rc;
}

/* Receives one numbered record on topic; returns its number. */
static int s_recv_index(void *sub, const char *topic, size_t size)
{
    zlink_msg_t parts[2];
    size_t count = 0, tlen = 0;
    char t[64];
    ZT_EQ_INT(zlink_subscribe(sub, NULL, t, sizeof t, &tlen, parts, 2, &count, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(tlen, strlen(topic));
    ZT_EQ_MEM(t, topic, tlen);
    ZT_EQ_INT(count, 1);
    ZT_EQ_INT(zlink_msg_size(&parts[0]), size);
    int i = atoi((const char *)zlink_msg_data(&parts[0]));
    zlink_multipart_close(parts, count);
    return i;
}

/* A SUB for fill tests with the given RCVHWM, subscribed to "f" and to
 * its own sync topic (so syncing one subscriber sends nothing to others),
 * and synced. */
static void *slow_sub(void *ctx, void *pub, const char *ep, uint64_t rcvhwm, const char *sync)
{
    void *s = zlt_sock(ctx, ZLINK_SUB);
    zlt_set_u64(s, ZLINK_RCVHWM, rcvhwm);
    zlt_set_int(s, ZLINK_RCVBUF, 131072); /* tcp: fixed, no autotuning */
    zlt_connect(s, ep);
    subscribe(s, "f");
    subscribe(s, sync);
    sub_sync(pub, s, sync);
    return s;
}

/* ------------------------------------------------------------------ PUB */

/* PUB 1: zlink_publish on anything but PUB/XPUB is NOT_SUPPORTED/ENOTSUP,
 * and the parts are consumed. */
static void pub_01_non_pub_not_supported(void)
{
    printf("# covers PUB/1\n");
    void *ctx = zlt_ctx_new();
    const int types[] = {ZLINK_SUB, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_PAIR, ZLINK_STREAM};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        void *s = zlt_sock(ctx, types[i]);
        zlink_msg_t m[2];
        zlt_msg_set(&m[0], "a", 1);
        zlt_msg_set(&m[1], "b", 1);
        ZT_EQ_INT(zlink_publish(s, "topic", m, 2, 0), ZLINK_SUBMIT_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
        ZT_EQ_INT(zlink_msg_size(&m[1]), 0);
        zlink_multipart_close(m, 2);
        zlt_close(s);
    }
    zlt_ctx_term(ctx);
}

/* PUB 2: a topic argument is sent as the first frame: the SUB gets it as
 * the topic and the parts after it. */
static void pub_02_topic_prepended(void)
{
    printf("# covers PUB/2\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "weather", &pub, &sub);
        zlink_msg_t m[2];
        zlt_msg_set(&m[0], "sunny", 5);
        zlt_msg_set(&m[1], "warm", 4);
        ZT_EQ_INT(zlink_publish(pub, "weather", m, 2, 0), ZLINK_SUBMIT_OK);
        zlink_msg_t parts[4];
        size_t count = 0, tlen = 0;
        char topic[32];
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 4, &count, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_INT(tlen, 7);
        ZT_EQ_MEM(topic, "weather", 7);
        ZT_EQ_INT(count, 2);
        ZT_EQ_INT(zlink_msg_size(&parts[0]), 5);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "sunny", 5);
        ZT_EQ_MEM(zlink_msg_data(&parts[1]), "warm", 4);
        zlink_multipart_close(parts, count);
        /* n = 0 is INVALID_ARGUMENT. */
        ZT_EQ_INT(zlink_publish(pub, "weather", m, 0, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        zlink_multipart_close(m, 2);
        s_expect_none(sub);
    }
}

/* PUB 3: topic NULL: parts[0] is the topic. */
static void pub_03_null_topic_first_frame(void)
{
    printf("# covers PUB/3\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "news", &pub, &sub);
        zlink_msg_t m[3];
        zlt_msg_set(&m[0], "news", 4);
        zlt_msg_set(&m[1], "body", 4);
        zlt_msg_set(&m[2], "more", 4);
        ZT_EQ_INT(zlink_publish(pub, NULL, m, 3, 0), ZLINK_SUBMIT_OK);
        zlink_msg_t parts[4];
        size_t count = 0, tlen = 0;
        char topic[32];
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 4, &count, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_INT(tlen, 4);
        ZT_EQ_MEM(topic, "news", 4);
        ZT_EQ_INT(count, 2);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "body", 4);
        ZT_EQ_MEM(zlink_msg_data(&parts[1]), "more", 4);
        zlink_multipart_close(parts, count);
        /* A topic-only record: no parts after it. */
        zlt_msg_set(&m[0], "news-only", 9);
        ZT_EQ_INT(zlink_publish(pub, NULL, m, 1, 0), ZLINK_SUBMIT_OK);
        count = 99;
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 4, &count, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_INT(tlen, 9);
        ZT_EQ_MEM(topic, "news-only", 9);
        ZT_EQ_INT(count, 0);
        /* A first frame that does not match is filtered like any topic. */
        zlt_msg_set(&m[0], "sport", 5);
        zlt_msg_set(&m[1], "x", 1);
        ZT_EQ_INT(zlink_publish(pub, NULL, m, 2, 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(pub_str(pub, "news", "last", 0), ZLINK_SUBMIT_OK);
        s_expect(sub, "news", "last");
    }
}

/* PUB 4: MAXMSGSIZE limits the whole record, the topic frame included:
 * over the limit is INVALID_ARGUMENT/EMSGSIZE and nothing is sent. */
static void pub_04_msgsize_counts_topic(void)
{
    printf("# covers PUB/4\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        int64_t max = 16;
        ZT_EQ_INT(zlink_setsockopt(pub, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
        /* Parts alone over the limit. */
        ZT_EQ_INT(pub_str(pub, "t", "12345678901234567", 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EMSGSIZE);
        /* Exactly at the limit, topic included: fine. */
        ZT_EQ_INT(pub_str(pub, "topic-12", "12345678", 0), ZLINK_SUBMIT_OK);
        /* Topic 12 + part 8 = 20 > 16 although the part alone fits. */
        ZT_EQ_INT(pub_str(pub, "topic-123456", "12345678", 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EMSGSIZE);
        /* Same with the topic as parts[0]. */
        zlink_msg_t m[2];
        zlt_msg_set(&m[0], "topic-123456", 12);
        zlt_msg_set(&m[1], "12345678", 8);
        ZT_EQ_INT(zlink_publish(pub, NULL, m, 2, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EMSGSIZE);
        zlink_multipart_close(m, 2);
        ZT_EQ_INT(pub_str(pub, "end", "x", 0), ZLINK_SUBMIT_OK);
        s_expect(sub, "topic-12", "12345678");
        s_expect(sub, "end", "x");
        s_expect_none(sub);
    }
}

/* PUB 6: every part is consumed (empty, still initialized, reusable) on
 * success and on each kind of failure. */
static void pub_06_parts_consumed(void)
{
    printf("# covers PUB/6\n");
    void *ctx = zlt_ctx_new();
    void *pub, *sub;
    ps_pair(ctx, "inproc", "", &pub, &sub);
    zlink_msg_t m[3];
    /* Success. */
    zlt_msg_set(&m[0], "a", 1);
    zlt_msg_set(&m[1], "bb", 2);
    ZT_EQ_INT(zlink_publish(pub, "t", m, 2, 0), ZLINK_SUBMIT_OK);
    for (int i = 0; i < 2; i++) {
        ZT_EQ_INT(zlink_msg_size(&m[i]), 0);
        ZT_CHECK(zlink_msg_data(&m[i]) != NULL || zlink_msg_size(&m[i]) == 0);
    }
    /* Reuse the same (empty, initialized) slots: an empty part is valid. */
    ZT_EQ_INT(zlink_publish(pub, "t", m, 2, 0), ZLINK_SUBMIT_OK);
    zlink_multipart_close(m, 2);
    /* EMSGSIZE. */
    int64_t max = 4;
    ZT_EQ_INT(zlink_setsockopt(pub, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
    zlt_msg_set(&m[0], "toolong", 7);
    zlt_msg_set(&m[1], "x", 1);
    ZT_EQ_INT(zlink_publish(pub, "t", m, 2, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
    ZT_EQ_INT(zlink_msg_size(&m[1]), 0);
    zlink_multipart_close(m, 2);
    max = -1;
    ZT_EQ_INT(zlink_setsockopt(pub, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
    /* An invalid part among valid ones: the valid ones are consumed too. */
    zlt_msg_set(&m[0], "ok", 2);
    memset(&m[1], 0, sizeof m[1]);
    zlt_msg_set(&m[2], "ok2", 3);
    ZT_EQ_INT(zlink_publish(pub, "t", m, 3, 0), ZLINK_SUBMIT_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
    ZT_EQ_INT(zlink_msg_size(&m[2]), 0);
    ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_msg_close(&m[2]), ZLINK_CONFIG_OK);
    /* Wrong socket type. */
    zlt_msg_set(&m[0], "z", 1);
    ZT_EQ_INT(zlink_publish(sub, "t", m, 1, 0), ZLINK_SUBMIT_NOT_SUPPORTED);
    ZT_EQ_INT(zlink_msg_size(&m[0]), 0);
    ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
    /* Only the two successful records arrived. */
    char t[32], b[32];
    for (int i = 0; i < 2; i++) {
        zlink_msg_t parts[3];
        size_t count = 0, tlen = 0;
        ZT_EQ_INT(zlink_subscribe(sub, NULL, t, sizeof t, &tlen, parts, 3, &count, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_INT(count, 2);
        zlink_multipart_close(parts, count);
    }
    ZT_EQ_INT(s_recv(sub, t, sizeof t, b, sizeof b, ZLINK_DONTWAIT), ZLINK_RECV_NO_DATA);
    zlt_finish(ctx, sub, pub);
}

/* PUB 7: each record is one unit: multipart records arrive whole and in
 * publish order at every subscriber. */
static void pub_07_one_unit_ordered(void)
{
    printf("# covers PUB/7\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *pub = zlt_sock(ctx, ZLINK_PUB);
        zlt_bind(pub, tr, ep, sizeof ep);
        void *subs[2];
        for (int k = 0; k < 2; k++) {
            subs[k] = zlt_sock(ctx, ZLINK_SUB);
            zlt_connect(subs[k], ep);
            subscribe(subs[k], "seq");
            subscribe(subs[k], k == 0 ? "sync0" : "sync1"); /* private sync topic */
            sub_sync(pub, subs[k], k == 0 ? "sync0" : "sync1");
        }
        enum { N = 300 };
        for (int i = 0; i < N; i++) {
            zlink_msg_t m[3];
            zlt_msg_set(&m[0], &i, sizeof i);
            char body[64];
            int len = snprintf(body, sizeof body, "body-%d", i);
            zlt_msg_set(&m[1], body, (size_t)len);
            zlt_msg_set(&m[2], "", 0);
            ZT_EQ_INT(zlink_publish(pub, "seq", m, 3, 0), ZLINK_SUBMIT_OK);
        }
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < N; i++) {
                zlink_msg_t parts[4];
                size_t count = 0, tlen = 0;
                char topic[8];
                ZT_EQ_INT(zlink_subscribe(subs[k], NULL, topic, sizeof topic, &tlen, parts, 4,
                                          &count, 0),
                          ZLINK_RECV_OK);
                ZT_EQ_INT(tlen, 3);
                ZT_EQ_INT(count, 3);
                int got;
                memcpy(&got, zlink_msg_data(&parts[0]), sizeof got);
                ZT_EQ_INT(got, i);
                char body[64];
                int len = snprintf(body, sizeof body, "body-%d", i);
                ZT_EQ_INT(zlink_msg_size(&parts[1]), len);
                ZT_EQ_MEM(zlink_msg_data(&parts[1]), body, len);
                ZT_EQ_INT(zlink_msg_size(&parts[2]), 0);
                zlink_multipart_close(parts, count);
            }
            s_expect_none(subs[k]);
        }
    }
}

/* PUB 8: a failed publish delivers nothing to anybody. */
static void pub_08_failure_delivers_nothing(void)
{
    printf("# covers PUB/8\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        ZT_EQ_INT(pub_str(pub, "t", "good-1", 0), ZLINK_SUBMIT_OK);
        int64_t max = 8;
        ZT_EQ_INT(zlink_setsockopt(pub, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
        ZT_EQ_INT(pub_str(pub, "t", "far-too-long", 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        max = -1;
        ZT_EQ_INT(zlink_setsockopt(pub, ZLINK_MAXMSGSIZE, &max, sizeof max), ZLINK_CONFIG_OK);
        zlink_msg_t m[2];
        zlt_msg_set(&m[0], "first-ok", 8);
        memset(&m[1], 0, sizeof m[1]); /* not a message */
        ZT_EQ_INT(zlink_publish(pub, "t", m, 2, 0), ZLINK_SUBMIT_INVALID_HANDLE);
        ZT_EQ_INT(zlink_msg_close(&m[0]), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_publish(pub, "t", m, 0, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_publish(pub, "t", NULL, 1, 0), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(pub_str(pub, "t", "bad-flags", 8), ZLINK_SUBMIT_INVALID_ARGUMENT);
        ZT_EQ_INT(pub_str(pub, "t", "good-2", 0), ZLINK_SUBMIT_OK);
        s_expect(sub, "t", "good-1");
        s_expect(sub, "t", "good-2");
        s_expect_none(sub);
    }
}

/* PUB 9: NODROP 0 (default): a subscriber without room loses its copy and
 * publish still returns OK; what it kept is in order, and it gets new
 * records once it has room again. */
static void pub_09_nodrop0_drops_ok(void)
{
    printf("# covers PUB/9\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *pub = zlt_sock(ctx, ZLINK_PUB);
        ZT_EQ_INT(zlt_get_int(pub, ZLINK_PUB_NODROP), 0);
        zlt_set_u64(pub, ZLINK_SNDHWM, zlt_is_tcp(tr) ? 262144 : 0);
        zlt_bind(pub, tr, ep, sizeof ep);
        /* inproc: RCVHWM 1000 holds exactly 7 records of 1+64 + 8+64 bytes. */
        void *sub = slow_sub(ctx, pub, ep, zlt_is_tcp(tr) ? 65536 : 1000, "sync");
        size_t size = fill_record_size(tr);
        int n = zlt_is_tcp(tr) ? 400 : 50;
        unsigned char *buf = calloc(1, size);
        ZT_CHECK(buf != NULL);
        for (int i = 0; i < n; i++) {
            zlink_msg_t m;
            memset(buf, 0, size);
            snprintf((char *)buf, size, "%d", i);
            zlt_msg_set(&m, buf, size);
            ZT_EQ_INT(zlink_publish(pub, "f", &m, 1, ZLINK_SEND_FLAGS_DONTWAIT), ZLINK_SUBMIT_OK);
        }
        free(buf);
        /* Take what was kept: increasing indices, fewer than published.
         * A marker published after room returns ends the stream. */
        int got = 0, last = -1, markers = 0;
        if (!zlt_is_tcp(tr)) {
            /* inproc: the queue holds exactly 7: this one is dropped too. */
            ZT_EQ_INT(pub_str(pub, "f", "after", 0), ZLINK_SUBMIT_OK);
        }
        zlt_set_int(sub, ZLINK_RCVTIMEO, 50);
        int64_t end = zt_now_ms() + ZT_MS(5000);
        for (;;) {
            ZT_CHECK(zt_now_ms() < end);
            char topic[16], head[32];
            size_t size = 0;
            zlink_recv_result_t rc = s_recv_any(sub, topic, sizeof topic, &size, head, 0);
            if (rc == ZLINK_RECV_NO_DATA) {
                /* Quiet for 50 ms: the path has room again. Publish a marker
                 * (again, if an earlier one was dropped while still full). */
                ZT_EQ_INT(pub_str(pub, "f", "after", 0), ZLINK_SUBMIT_OK);
                markers++;
                continue;
            }
            ZT_EQ_INT(rc, ZLINK_RECV_OK);
            ZT_EQ_STR(topic, "f");
            if (strcmp(head, "after") == 0) {
                ZT_CHECK(markers > 0); /* the inproc one sent while full was dropped */
                break;
            }
            ZT_EQ_INT(size, fill_record_size(tr));
            int i = atoi(head);
            ZT_CHECK(i > last && i < n);
            last = i;
            got++;
        }
        printf("# kept %d of %d\n", got, n);
        ZT_CHECK(got >= 1);
        ZT_CHECK(got < n);
        if (!zlt_is_tcp(tr)) {
            ZT_EQ_INT(got, 7); /* the first 7, then the queue was full */
            ZT_EQ_INT(last, 6);
            ZT_EQ_INT(markers, 1);
            s_expect_none(sub);
        }
    }
}

/* Fill setup for NODROP 1 cases: a PUB, a slow subscriber s1 (RCVHWM about
 * one record) and optionally a roomy subscriber s2 (RCVHWM unlimited), both
 * on topic "f" and synced; then NODROP 1 and publishing until refused. On
 * return *admitted records 0..admitted-1 were accepted and s1's path is
 * full. The sockets are the round's (closed when it ends). */
typedef struct fill {
    void *pub, *s1, *s2;
    int admitted;
    size_t size;
} fill_t;

static void fill_setup(fill_t *f, void *ctx, const char *tr, bool with_s2)
{
    char ep[256];
    memset(f, 0, sizeof *f);
    f->size = fill_record_size(tr);
    f->pub = zlt_sock(ctx, ZLINK_PUB);
    /* tcp: a large PUB queue per subscriber, so the roomy one never fills
     * while s1's path does; fixed kernel buffers on s1's path (set sizes
     * turn autotuning off), so once full it stays full. */
    zlt_set_u64(f->pub, ZLINK_SNDHWM, zlt_is_tcp(tr) ? 8u * 1024 * 1024 : 0);
    if (zlt_is_tcp(tr))
        zlt_set_int(f->pub, ZLINK_SNDBUF, 131072);
    zlt_bind(f->pub, tr, ep, sizeof ep);
    f->s1 = slow_sub(ctx, f->pub, ep, zlt_is_tcp(tr) ? 65536 : 1000, "s1sync");
    if (with_s2)
        f->s2 = slow_sub(ctx, f->pub, ep, 0, "s2sync");
    zlt_set_int(f->pub, ZLINK_PUB_NODROP, 1);
    f->admitted =
        publish_until_refused(f->pub, "f", f->size, zlt_is_tcp(tr) ? 4000 : 100, zlt_is_tcp(tr));
    printf("# %d admitted before the first refusal\n", f->admitted);
    ZT_CHECK(f->admitted >= 1);
}

/* PUB 10: NODROP 1: one full subscriber stops the publish for all: the
 * refused record reaches nobody, not even the subscriber with room; after
 * the full one drains, publishing works again for both. */
static void pub_10_nodrop1_one_full_stops_all(void)
{
    printf("# covers PUB/10\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        fill_t f;
        fill_setup(&f, ctx, tr, true);
        if (!zlt_is_tcp(tr))
            ZT_EQ_INT(f.admitted, 7); /* s1's RCVHWM 1000 holds 7 */
        /* inproc: refused again while s1 is full (s2 has room). On tcp the
         * full path may still take a record now and then (see
         * expect_refused), which would change the count below. */
        if (!zlt_is_tcp(tr))
            ZT_EQ_INT(pub_sized(f.pub, "f", f.size, "refused-too", ZLINK_DONTWAIT),
                      ZLINK_SUBMIT_BACKPRESSURED);
        /* s1 drains: exactly 0..admitted-1, in order. */
        for (int i = 0; i < f.admitted; i++)
            ZT_EQ_INT(s_recv_index(f.s1, "f", f.size), i);
        ZT_EQ_INT(pub_str(f.pub, "f", "end", 0), ZLINK_SUBMIT_OK);
        s_expect(f.s1, "f", "end");
        /* s2: the same records, then "end": the refused ones never came. */
        for (int i = 0; i < f.admitted; i++)
            ZT_EQ_INT(s_recv_index(f.s2, "f", f.size), i);
        s_expect(f.s2, "f", "end");
        s_expect_none(f.s2);
        s_expect_none(f.s1);
    }
}

/* Publishes one full-size record on "f" (flags; for NONE, SNDTIMEO timeo)
 * and expects BACKPRESSURED/EAGAIN after at least min_wait ms and well
 * before a second. On inproc the path is exactly full, so the first try
 * must be refused. On tcp the kernel may still open a little window on
 * the full path now and then (zero-window probes after it coalesced its
 * receive queue), so an admitted record only means there was room: try
 * again, bounded. An implementation that never refuses, or refuses
 * without waiting, fails either way. */
static void expect_refused(fill_t *f, bool tcp, int flags, int timeo, int min_wait)
{
    if (flags == 0)
        zlt_set_int(f->pub, ZLINK_SNDTIMEO, timeo);
    for (int attempt = 0;; attempt++) {
        int64_t t0 = zt_now_ms();
        zlink_submit_result_t rc = pub_sized(f->pub, "f", f->size, "x", flags);
        int64_t waited = zt_now_ms() - t0;
        if (rc == ZLINK_SUBMIT_BACKPRESSURED) {
            ZT_EQ_INT(zlink_errno(), EAGAIN);
            ZT_CHECK(waited >= min_wait);
            ZT_CHECK(waited < ZT_MS(1000));
            break;
        }
        ZT_EQ_INT(rc, ZLINK_SUBMIT_OK);
        if (!tcp || attempt >= 50)
            ZT_FAIL("a full subscriber's publish was admitted (attempt %d)", attempt);
    }
    zlt_set_int(f->pub, ZLINK_SNDTIMEO, ZT_MS(2000));
}

/* PUB 11: NODROP 1 with a full subscriber: DONTWAIT, NONE with SNDTIMEO 0,
 * and NONE after SNDTIMEO expiry all give BACKPRESSURED/EAGAIN. */
static void pub_11_nodrop1_backpressured(void)
{
    printf("# covers PUB/11\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        fill_t f;
        fill_setup(&f, ctx, tr, false);
        expect_refused(&f, zlt_is_tcp(tr), ZLINK_DONTWAIT, 0, 0);
        expect_refused(&f, zlt_is_tcp(tr), 0, 0, 0);
        expect_refused(&f, zlt_is_tcp(tr), 0, 60, 60);
        /* Topics nobody subscribed to are not blocked by the full one. */
        ZT_EQ_INT(pub_str(f.pub, "other", "x", ZLINK_DONTWAIT), ZLINK_SUBMIT_OK);
    }
}

/* PUB 12: NODROP 1, full subscriber: a blocking publish succeeds once the
 * subscriber makes room (another thread drains it). */
struct drain_arg {
    void *sub;
    size_t size;
    int admitted;
};

static void *drain_until_final(void *arg)
{
    struct drain_arg *a = arg;
    for (int i = 0; i < a->admitted; i++)
        ZT_EQ_INT(s_recv_index(a->sub, "f", a->size), i);
    s_expect(a->sub, "f", "final");
    return NULL;
}

static void pub_12_blocking_publish_succeeds(void)
{
    printf("# covers PUB/12\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        fill_t f;
        fill_setup(&f, ctx, tr, false);
        zlt_set_int(f.pub, ZLINK_SNDTIMEO, ZT_MS(5000));
        struct drain_arg a = {f.s1, f.size, f.admitted};
        pthread_t th;
        ZT_EQ_INT(pthread_create(&th, NULL, drain_until_final, &a), 0);
        ZT_EQ_INT(pub_str(f.pub, "f", "final", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(pthread_join(th, NULL), 0);
    }
}

/* PUB 13: option results: NODROP 0/1 read back, other values and sizes are
 * EINVAL; PUB options on other types and read-only counts are EINVAL. */
static void pub_13_option_results(void)
{
    printf("# covers PUB/13\n");
    void *ctx = zlt_ctx_new();
    void *pub = zlt_sock(ctx, ZLINK_PUB);
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    /* NODROP: 0 by default, 0/1 read back; other values and sizes EINVAL. */
    zlt_check_bool_option(pub, ZLINK_PUB_NODROP, 0);
    ZT_EQ_INT(zlt_get_int(pub, ZLINK_PUB_NODROP), 0);
    /* PUB options on a SUB and the other way round; read-only counts. */
    zlt_set_int_fails(sub, ZLINK_PUB_NODROP, 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_set_int_fails(pub, ZLINK_PUB_TOPICS_COUNT, 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_set_int_fails(sub, ZLINK_SUB_TOPICS_COUNT, 1, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_get_fails(pub, ZLINK_SUB_TOPICS_COUNT, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_get_fails(sub, ZLINK_PUB_TOPICS_COUNT, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    ZT_EQ_INT(zlt_get_int(pub, ZLINK_TYPE), ZLINK_PUB);
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_TYPE), ZLINK_SUB);
    zlt_finish(ctx, sub, pub);
}

/* PUB 14: ZLINK_PUB_TOPICS_COUNT counts the distinct topics subscribed
 * over all subscribers, follows unsubscriptions, and is read-only. */
static void pub_14_topics_count(void)
{
    printf("# covers PUB/14\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        char ep[256];
        void *pub = zlt_sock(ctx, ZLINK_PUB);
        zlt_bind(pub, tr, ep, sizeof ep);
        ZT_EQ_INT(zlt_get_int(pub, ZLINK_PUB_TOPICS_COUNT), 0);
        void *s1 = zlt_sock(ctx, ZLINK_SUB);
        void *s2 = zlt_sock(ctx, ZLINK_SUB);
        zlt_connect(s1, ep);
        zlt_connect(s2, ep);
        subscribe(s1, "a");
        subscribe(s1, "b");
        subscribe(s1, "s1sync");
        subscribe(s2, "b");
        subscribe(s2, "c");
        subscribe(s2, "s2sync");
        sub_sync(pub, s1, "s1sync");
        sub_sync(pub, s2, "s2sync");
        /* a, b, c, s1sync, s2sync: "b" counts once. */
        ZT_EQ_INT(zlt_get_int(pub, ZLINK_PUB_TOPICS_COUNT), 5);
        ZT_EQ_INT(zlink_unset_subscription(s1, "a"), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_unset_subscription(s1, "s1sync"), ZLINK_CONFIG_OK);
        subscribe(s1, "fence");
        sub_sync(pub, s1, "fence");
        /* b, c, s2sync, fence. */
        ZT_EQ_INT(zlt_get_int(pub, ZLINK_PUB_TOPICS_COUNT), 4);
        /* "b" is still wanted by s2 after s1 drops it. */
        ZT_EQ_INT(zlink_unset_subscription(s1, "b"), ZLINK_CONFIG_OK);
        subscribe(s1, "zfence"); /* no prefix overlap with "fence" */
        sub_sync(pub, s1, "zfence");
        /* b (still s2's), c, s2sync, fence, zfence. */
        ZT_EQ_INT(zlt_get_int(pub, ZLINK_PUB_TOPICS_COUNT), 5);
    }
}

/* PUB 16: APPROVE/REJECT_SUBSCRIBE are write-only: get is EINVAL. They
 * belong to XPUB's manual mode, which this version does not have, so their
 * numbers (0x3308, 0x3309) are reserved: get (and set) is EINVAL. */
static void pub_16_get_approve_reject_einval(void)
{
    printf("# covers PUB/16\n");
    void *ctx = zlt_ctx_new();
    void *pub = zlt_sock(ctx, ZLINK_PUB);
    zlt_get_fails(pub, 0x3308, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_get_fails(pub, 0x3309, ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlt_finish(ctx, pub);
}

/* ------------------------------------------------------------------ SUB */

/* Publishes each topic in order (part "p"), then "<fence>" as the last
 * record, and receives until the fence: writes the topics received (comma
 * separated, the fence excluded) to out. */
static void publish_and_collect(void *pub, void *sub, const char *const *topics, int n,
                                const char *fence, char *out, size_t cap)
{
    for (int i = 0; i < n; i++)
        ZT_EQ_INT(pub_str(pub, topics[i], "p", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(pub_str(pub, fence, "fence", 0), ZLINK_SUBMIT_OK);
    out[0] = '\0';
    int got = 0;
    for (;;) {
        char t[64], b[64];
        ZT_EQ_INT(s_recv(sub, t, sizeof t, b, sizeof b, 0), ZLINK_RECV_OK);
        if (strcmp(b, "fence") == 0) {
            ZT_EQ_STR(t, fence);
            break;
        }
        ZT_EQ_STR(b, "p");
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s", got++ ? "," : "", t);
    }
    s_expect_none(sub);
}

/* SUB 1: a subscription is a byte prefix: it matches topics that start
 * with it, nothing else (case and position matter). */
static void sub_01_prefix_match(void)
{
    printf("# covers SUB/1\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "ab", &pub, &sub);
        static const char *const topics[] = {"a", "b", "ab", "abc", "xab", "AB", "aB", "ba", "ab"};
        char out[256];
        publish_and_collect(pub, sub, topics, 9, "ab-fence", out, sizeof out);
        ZT_EQ_STR(out, "ab,abc,ab");
        /* A second prefix adds to the first. */
        subscribe(sub, "x");
        sub_sync(pub, sub, "x");
        publish_and_collect(pub, sub, topics, 9, "ab-fence", out, sizeof out);
        ZT_EQ_STR(out, "ab,abc,xab,ab");
    }
}

/* SUB 2: "" matches every topic, the empty topic included. */
static void sub_02_empty_matches_all(void)
{
    printf("# covers SUB/2\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        static const char *const topics[] = {"", "a", "zzz", "*", "long-topic-name"};
        char out[256];
        publish_and_collect(pub, sub, topics, 5, "end", out, sizeof out);
        ZT_EQ_STR(out, ",a,zzz,*,long-topic-name");
    }
}

/* SUB 3: '*' is a literal byte, not a wildcard. */
static void sub_03_star_literal(void)
{
    printf("# covers SUB/3\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "*", &pub, &sub);
        subscribe(sub, "a*");
        sub_sync(pub, sub, "a*");
        static const char *const topics[] = {"a", "ab", "*", "*x", "a*", "a*b", "x*", "b"};
        char out[256];
        publish_and_collect(pub, sub, topics, 8, "*fence", out, sizeof out);
        ZT_EQ_STR(out, "*,*x,a*,a*b");
    }
}

/* SUB 4: zlink_unset_subscription stops the topic (once the change has
 * reached the PUB, fenced by a newer subscription) and leaves the others;
 * unknown topics change nothing. */
static void sub_04_unset(void)
{
    printf("# covers SUB/4\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "news", &pub, &sub);
        subscribe(sub, "sport");
        sub_sync(pub, sub, "sport");
        ZT_EQ_INT(zlink_unset_subscription(sub, "news"), ZLINK_CONFIG_OK);
        /* Local effect at once: published now, it is not received. */
        static const char *const topics[] = {"news", "sport", "news-x", "sports"};
        char out[256];
        publish_and_collect(pub, sub, topics, 4, "sport-fence", out, sizeof out);
        ZT_EQ_STR(out, "sport,sports");
        /* Unknown topic: no effect on the others. */
        zlink_config_result_t rc = zlink_unset_subscription(sub, "never-set");
        ZT_CHECK(rc == ZLINK_CONFIG_OK || rc == ZLINK_CONFIG_NOT_FOUND);
        subscribe(sub, "fence");
        sub_sync(pub, sub, "fence");
        publish_and_collect(pub, sub, topics, 4, "sport-fence", out, sizeof out);
        ZT_EQ_STR(out, "sport,sports");
        /* Unset all: nothing arrives; a new subscription works again. */
        ZT_EQ_INT(zlink_unset_subscription(sub, "sport"), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlink_unset_subscription(sub, "fence"), ZLINK_CONFIG_OK);
        ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 0);
        subscribe(sub, "again");
        sub_sync(pub, sub, "again");
        publish_and_collect(pub, sub, topics, 4, "again", out, sizeof out);
        ZT_EQ_STR(out, "");
    }
}

/* SUB 5: NULL handle is INVALID_HANDLE/EFAULT; NULL topic or a socket that
 * is not a SUB is INVALID_ARGUMENT/EINVAL; for set and unset. */
static void sub_05_argument_errors(void)
{
    printf("# covers SUB/5\n");
    void *ctx = zlt_ctx_new();
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    void *pub = zlt_sock(ctx, ZLINK_PUB);
    void *dealer = zlt_sock(ctx, ZLINK_DEALER);
    for (int unset = 0; unset < 2; unset++) {
        zlink_config_result_t (*fn)(void *, const char *) =
            unset ? zlink_unset_subscription : zlink_set_subscription;
        ZT_EQ_INT(fn(NULL, "a"), ZLINK_CONFIG_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(fn(sub, NULL), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(fn(pub, "a"), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
        ZT_EQ_INT(fn(dealer, "a"), ZLINK_CONFIG_INVALID_ARGUMENT);
        ZT_EQ_INT(zlink_errno(), EINVAL);
    }
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 0);
    zlt_finish(ctx, dealer, pub, sub);
}

/* SUB 6: ZLINK_SUB_TOPICS_COUNT is the number of distinct subscriptions,
 * read-only. */
static void sub_06_topics_count(void)
{
    printf("# covers SUB/6\n");
    void *ctx = zlt_ctx_new();
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 0);
    subscribe(sub, "a");
    subscribe(sub, "b");
    subscribe(sub, "");
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 3);
    subscribe(sub, "a");
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 3);
    ZT_EQ_INT(zlink_unset_subscription(sub, "b"), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 2);
    int v = 9;
    ZT_EQ_INT(zlink_setsockopt(sub, ZLINK_SUB_TOPICS_COUNT, &v, sizeof v),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlink_errno(), EINVAL);
    char small[2];
    size_t n = sizeof small;
    ZT_EQ_INT(zlink_getsockopt(sub, ZLINK_SUB_TOPICS_COUNT, small, &n),
              ZLINK_CONFIG_INVALID_ARGUMENT);
    ZT_EQ_INT(zlt_get_int(sub, ZLINK_SUB_TOPICS_COUNT), 2);
    zlt_finish(ctx, sub);
}

/* zlink_subscription_at(sub, index) into a buffer of cap bytes filled
 * with 0xEE: the result; on OK checks the pattern output is 0, the length
 * fits and nothing was written past it, and adds a NUL for the caller. */
static zlink_config_result_t sub_at(void *sub, size_t index, char *out, size_t cap)
{
    memset(out, 0xEE, cap);
    size_t len = cap - 1;
    int pattern = 77;
    zlink_config_result_t rc = zlink_subscription_at(sub, index, out, &len, &pattern);
    if (rc != ZLINK_CONFIG_OK)
        return rc;
    ZT_EQ_INT(pattern, 0);
    ZT_CHECK(len < cap);
    for (size_t i = len; i < cap; i++)
        ZT_EQ_INT((unsigned char)out[i], 0xEE); /* no NUL, nothing past len */
    out[len] = '\0';
    return rc;
}

/* Checks that sub's subscriptions are exactly want[0..n), in that order,
 * and that index n is NOT_FOUND/ENOENT. */
static void expect_subscriptions(void *sub, const char *const *want, size_t n)
{
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        ZT_EQ_INT(sub_at(sub, i, buf, sizeof buf), ZLINK_CONFIG_OK);
        ZT_EQ_STR(buf, want[i]);
    }
    ZT_EQ_INT(sub_at(sub, n, buf, sizeof buf), ZLINK_CONFIG_NOT_FOUND);
    ZT_EQ_INT(zlink_errno(), ENOENT);
}

/* SUB 7: zlink_subscription_at lists the subscriptions in byte order
 * (unsigned bytes; a prefix before its extensions), one each however often
 * it was set, and each call sees the set as it is then. */
static void sub_07_subscription_at_byte_order(void)
{
    printf("# covers SUB/7\n");
    void *ctx = zlt_ctx_new();
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    static const char *const set[] = {"b", "\xc3\xa9", "a", "", "ab", "B", "a\x01", "a"};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        subscribe(sub, set[i]);
    expect_subscriptions(sub, ZLT_STRS("", "B", "a", "a\x01", "ab", "b", "\xc3\xa9"), 7);
    ZT_EQ_INT(zlink_unset_subscription(sub, "ab"), ZLINK_CONFIG_OK);
    ZT_EQ_INT(zlink_unset_subscription(sub, ""), ZLINK_CONFIG_OK);
    subscribe(sub, "aa");
    expect_subscriptions(sub, ZLT_STRS("B", "a", "a\x01", "aa", "b", "\xc3\xa9"), 6);
    zlt_finish(ctx, sub);
}

/* SUB 9: the pattern output is optional (NULL is fine) and always 0. */
static void sub_09_subscription_at_pattern(void)
{
    printf("# covers SUB/9\n");
    void *ctx = zlt_ctx_new();
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    subscribe(sub, "x*");
    subscribe(sub, "");
    for (size_t i = 0; i < 2; i++) {
        char buf[8];
        size_t len = sizeof buf;
        int pattern = -5;
        ZT_EQ_INT(zlink_subscription_at(sub, i, buf, &len, &pattern), ZLINK_CONFIG_OK);
        ZT_EQ_INT(pattern, 0);
        ZT_EQ_INT(len, i == 0 ? 0 : 2);
        len = sizeof buf;
        ZT_EQ_INT(zlink_subscription_at(sub, i, buf, &len, NULL), ZLINK_CONFIG_OK);
        ZT_EQ_INT(len, i == 0 ? 0 : 2);
    }
    zlt_finish(ctx, sub);
}

/* SUB 10 (zlink_subscription_at): a buffer too small is BUFFER_TOO_SMALL/
 * ENOBUFS with *len = the length needed and nothing written (a NULL buffer
 * with *len 0 asks for the length); a retry with that length succeeds. */
static void sub_10_subscription_at_too_small(void)
{
    printf("# covers SUB/10 (zlink_subscription_at)\n");
    void *ctx = zlt_ctx_new();
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    subscribe(sub, "longtopic");
    char buf[16];
    const size_t caps[] = {0, 1, 4, 8};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        memset(buf, 0xEE, sizeof buf);
        size_t len = caps[i];
        int pattern = 7;
        ZT_EQ_INT(zlink_subscription_at(sub, 0, buf, &len, &pattern),
                  ZLINK_CONFIG_BUFFER_TOO_SMALL);
        ZT_EQ_INT(zlink_errno(), ENOBUFS);
        ZT_EQ_INT(len, 9);
        for (size_t k = 0; k < sizeof buf; k++)
            ZT_EQ_INT((unsigned char)buf[k], 0xEE);
    }
    size_t len = 0;
    ZT_EQ_INT(zlink_subscription_at(sub, 0, NULL, &len, NULL), ZLINK_CONFIG_BUFFER_TOO_SMALL);
    ZT_EQ_INT(len, 9);
    ZT_EQ_INT(zlink_subscription_at(sub, 0, buf, &len, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(len, 9);
    ZT_EQ_MEM(buf, "longtopic", 9);
    ZT_EQ_INT((unsigned char)buf[9], 0xEE);
    /* The empty subscription fits a NULL buffer of 0 bytes. */
    ZT_EQ_INT(zlink_unset_subscription(sub, "longtopic"), ZLINK_CONFIG_OK);
    subscribe(sub, "");
    len = 0;
    ZT_EQ_INT(zlink_subscription_at(sub, 0, NULL, &len, NULL), ZLINK_CONFIG_OK);
    ZT_EQ_INT(len, 0);
    zlt_finish(ctx, sub);
}

/* SUB 11: an index past the end is NOT_FOUND/ENOENT (nothing written); a
 * socket that is not a SUB is NOT_SUPPORTED/ENOTSUP; a NULL length, or a
 * NULL buffer with room claimed, is INVALID_HANDLE/EFAULT, as is a NULL
 * socket. */
static void sub_11_subscription_at_errors(void)
{
    printf("# covers SUB/11\n");
    void *ctx = zlt_ctx_new();
    void *sub = zlt_sock(ctx, ZLINK_SUB);
    char buf[16];
    size_t len = sizeof buf;
    const size_t past[] = {0, 1, SIZE_MAX};
    for (int round = 0; round < 2; round++) { /* empty, then one subscription */
        for (size_t i = (size_t)round; i < sizeof past / sizeof past[0]; i++) {
            memset(buf, 0xEE, sizeof buf);
            len = sizeof buf;
            ZT_EQ_INT(zlink_subscription_at(sub, past[i], buf, &len, NULL),
                      ZLINK_CONFIG_NOT_FOUND);
            ZT_EQ_INT(zlink_errno(), ENOENT);
            for (size_t k = 0; k < sizeof buf; k++)
                ZT_EQ_INT((unsigned char)buf[k], 0xEE);
        }
        subscribe(sub, "t");
    }
    const int types[] = {ZLINK_PUB, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_PAIR, ZLINK_STREAM};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        void *s = zlt_sock(ctx, types[i]);
        len = sizeof buf;
        ZT_EQ_INT(zlink_subscription_at(s, 0, buf, &len, NULL), ZLINK_CONFIG_NOT_SUPPORTED);
        ZT_EQ_INT(zlink_errno(), ENOTSUP);
        zlt_close(s);
    }
    ZT_EQ_INT(zlink_subscription_at(sub, 0, buf, NULL, NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    len = 4;
    ZT_EQ_INT(zlink_subscription_at(sub, 0, NULL, &len, NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    len = sizeof buf;
    ZT_EQ_INT(zlink_subscription_at(NULL, 0, buf, &len, NULL), ZLINK_CONFIG_INVALID_HANDLE);
    ZT_EQ_INT(zlink_errno(), EFAULT);
    zlt_finish(ctx, sub);
}

/* SUB 8: the topic is copied without a NUL: bytes after it are untouched. */
static void sub_08_topic_no_nul(void)
{
    printf("# covers SUB/8\n");
    void *ctx = zlt_ctx_new();
    void *pub, *sub;
    ps_pair(ctx, "inproc", "abc", &pub, &sub);
    ZT_EQ_INT(pub_str(pub, "abc", "x", 0), ZLINK_SUBMIT_OK);
    char topic[8];
    memset(topic, 0xEE, sizeof topic);
    zlink_msg_t parts[2];
    size_t count = 0, tlen = 0;
    ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 2, &count, 0),
              ZLINK_RECV_OK);
    ZT_EQ_INT(tlen, 3);
    ZT_EQ_MEM(topic, "abc", 3);
    for (size_t i = 3; i < sizeof topic; i++)
        ZT_EQ_INT((unsigned char)topic[i], 0xEE);
    zlink_multipart_close(parts, count);
    /* Exactly tcap == tlen is enough. */
    ZT_EQ_INT(pub_str(pub, "abcdefgh", "y", 0), ZLINK_SUBMIT_OK);
    ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, 8, &tlen, parts, 2, &count, 0), ZLINK_RECV_OK);
    ZT_EQ_INT(tlen, 8);
    ZT_EQ_MEM(topic, "abcdefgh", 8);
    zlink_multipart_close(parts, count);
    zlt_finish(ctx, sub, pub);
}

/* SUB 10: more parts than cap: BUFFER_TOO_SMALL/ENOBUFS with the needed
 * count, no partial write (topic buffer untouched), record kept; the retry
 * with room returns it once. */
static void sub_10_parts_too_small(void)
{
    printf("# covers SUB/10 (receive side)\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        zlink_msg_t m[3];
        zlt_msg_set(&m[0], "p0", 2);
        zlt_msg_set(&m[1], "p1", 2);
        zlt_msg_set(&m[2], "p2", 2);
        ZT_EQ_INT(zlink_publish(pub, "three", m, 3, 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(pub_str(pub, "next", "n", 0), ZLINK_SUBMIT_OK);
        char topic[16];
        memset(topic, 0xEE, sizeof topic);
        zlink_msg_t parts[3];
        size_t count = 0, tlen = 777;
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 2, &count, 0),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(zlink_errno(), ENOBUFS);
        ZT_EQ_INT(count, 3);
        for (size_t i = 0; i < sizeof topic; i++)
            ZT_EQ_INT((unsigned char)topic[i], 0xEE);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 0, &count,
                                  ZLINK_DONTWAIT),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(count, 3);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 3, &count, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_INT(tlen, 5);
        ZT_EQ_MEM(topic, "three", 5);
        ZT_EQ_INT(count, 3);
        ZT_EQ_MEM(zlink_msg_data(&parts[2]), "p2", 2);
        zlink_multipart_close(parts, count);
        s_expect(sub, "next", "n");
    }
}

/* SUB 12: the topic is copied out; the parts are the caller's: they
 * outlive later receives and the socket. */
static void sub_12_topic_copied_parts_owned(void)
{
    printf("# covers SUB/12\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        static unsigned char big[3000];
        memset(big, 0x3C, sizeof big);
        zlink_msg_t m;
        zlt_msg_set(&m, big, sizeof big);
        ZT_EQ_INT(zlink_publish(pub, "one", &m, 1, 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(pub_str(pub, "two", "second", 0), ZLINK_SUBMIT_OK);
        char topic[16];
        zlink_msg_t a[1], b[1];
        size_t na = 0, nb = 0, tlen = 0;
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, a, 1, &na, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_MEM(topic, "one", 3);
        memset(topic, 0, sizeof topic);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, b, 1, &nb, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_MEM(topic, "two", 3);
        zlt_close(sub);
        zlt_close(pub);
        ZT_EQ_INT(zlink_msg_size(&a[0]), sizeof big);
        ZT_EQ_MEM(zlink_msg_data(&a[0]), big, sizeof big);
        ZT_EQ_MEM(zlink_msg_data(&b[0]), "second", 6);
        zlink_multipart_close(a, na);
        zlink_multipart_close(b, nb);
    }
}

/* SUB 13: a SUB receive reports no routing id (*rid = NULL); rid may be
 * NULL itself. */
static void sub_13_rid_null(void)
{
    printf("# covers SUB/13\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        ZT_EQ_INT(pub_str(pub, "t", "1", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(pub_str(pub, "t", "2", 0), ZLINK_SUBMIT_OK);
        const zlink_routing_id_t *rid = (const zlink_routing_id_t *)(uintptr_t)0x40;
        char topic[8];
        zlink_msg_t parts[1];
        size_t count = 0, tlen = 0;
        ZT_EQ_INT(zlink_subscribe(sub, &rid, topic, sizeof topic, &tlen, parts, 1, &count, 0),
                  ZLINK_RECV_OK);
        ZT_CHECK(rid == NULL);
        zlink_multipart_close(parts, count);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, sizeof topic, &tlen, parts, 1, &count, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "2", 1);
        zlink_multipart_close(parts, count);
    }
}

/* SUB 14: a topic longer than tcap: BUFFER_TOO_SMALL/ENOBUFS, *tlen = the
 * needed length, nothing written, the record kept for the next call
 * (again and again until the buffer is big enough), then returned once. */
static void sub_14_short_topic_kept(void)
{
    printf("# covers SUB/14, 03-errors 11, socket/README 22\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        zlink_msg_t m[2];
        zlt_msg_set(&m[0], "body-1", 6);
        zlt_msg_set(&m[1], "extra", 5);
        ZT_EQ_INT(zlink_publish(pub, "longtopic", m, 2, 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(pub_str(pub, "s", "body-2", 0), ZLINK_SUBMIT_OK);
        char topic[16];
        memset(topic, 0xEE, sizeof topic);
        zlink_msg_t parts[4];
        size_t count = 0, tlen = 0;
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, 4, &tlen, parts, 4, &count, 0),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(zlink_errno(), ENOBUFS);
        ZT_EQ_INT(tlen, 9);
        for (size_t i = 0; i < sizeof topic; i++)
            ZT_EQ_INT((unsigned char)topic[i], 0xEE);
        tlen = 0;
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, 8, &tlen, parts, 4, &count, ZLINK_DONTWAIT),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(tlen, 9);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, 0, &tlen, parts, 4, &count, 0),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(tlen, 9);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, topic, 9, &tlen, parts, 4, &count, 0),
                  ZLINK_RECV_OK);
        ZT_EQ_INT(tlen, 9);
        ZT_EQ_MEM(topic, "longtopic", 9);
        ZT_EQ_INT(count, 2);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "body-1", 6);
        ZT_EQ_MEM(zlink_msg_data(&parts[1]), "extra", 5);
        zlink_multipart_close(parts, count);
        s_expect(sub, "s", "body-2");
        s_expect_none(sub);
    }
}

/* SUB 15: tcap > 0 with a NULL topic buffer is INVALID_HANDLE/EFAULT and
 * consumes nothing; an empty topic is OK with tcap 0 and a NULL buffer. */
static void sub_15_null_topic_buffer(void)
{
    printf("# covers SUB/15, socket/README 23\n");
    ZLT_EACH_TRANSPORT(tr, ctx) {
        void *pub, *sub;
        ps_pair(ctx, tr, "", &pub, &sub);
        ZT_EQ_INT(pub_str(pub, "", "empty-topic", 0), ZLINK_SUBMIT_OK);
        zlink_msg_t parts[2];
        size_t count = 0, tlen = 55;
        ZT_EQ_INT(zlink_subscribe(sub, NULL, NULL, 4, &tlen, parts, 2, &count, 0),
                  ZLINK_RECV_INVALID_HANDLE);
        ZT_EQ_INT(zlink_errno(), EFAULT);
        ZT_EQ_INT(tlen, 55);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, NULL, 0, &tlen, parts, 2, &count, 0), ZLINK_RECV_OK);
        ZT_EQ_INT(tlen, 0);
        ZT_EQ_INT(count, 1);
        ZT_EQ_MEM(zlink_msg_data(&parts[0]), "empty-topic", 11);
        zlink_multipart_close(parts, count);
        /* A non-empty topic with tcap 0 and NULL: too small, kept. */
        ZT_EQ_INT(pub_str(pub, "t", "x", 0), ZLINK_SUBMIT_OK);
        ZT_EQ_INT(zlink_subscribe(sub, NULL, NULL, 0, &tlen, parts, 2, &count, 0),
                  ZLINK_RECV_BUFFER_TOO_SMALL);
        ZT_EQ_INT(tlen, 1);
        s_expect(sub, "t", "x");
    }
}

/* SUB: nothing queued: DONTWAIT NO_DATA/EAGAIN at once; NONE after
 * RCVTIMEO. (socket/README 18, 21 for SUB.) */
static void sub_no_data(void)
{
    printf("# covers socket/README 18, 21 (SUB)\n");
    void *ctx = zlt_ctx_new();
    void *pub, *sub;
    ps_pair(ctx, "inproc", "t", &pub, &sub);
    s_expect_none(sub);
    zlt_set_int(sub, ZLINK_RCVTIMEO, 40);
    char t[8], b[8];
    int64_t t0 = zt_now_ms();
    ZT_EQ_INT(s_recv(sub, t, sizeof t, b, sizeof b, 0), ZLINK_RECV_NO_DATA);
    ZT_CHECK(zt_now_ms() - t0 >= 40);
    zlt_finish(ctx, sub, pub);
}

static const zt_case_t cases[] = {
    ZT_CASE(pub_01_non_pub_not_supported),
    ZT_CASE(pub_02_topic_prepended),
    ZT_CASE(pub_03_null_topic_first_frame),
    ZT_CASE(pub_04_msgsize_counts_topic),
    ZT_CASE(pub_06_parts_consumed),
    ZT_CASE(pub_07_one_unit_ordered),
    ZT_CASE(pub_08_failure_delivers_nothing),
    ZT_CASE(pub_09_nodrop0_drops_ok),
    ZT_CASE(pub_10_nodrop1_one_full_stops_all),
    ZT_CASE(pub_11_nodrop1_backpressured),
    ZT_CASE(pub_12_blocking_publish_succeeds),
    ZT_CASE(pub_13_option_results),
    ZT_CASE(pub_14_topics_count),
    ZT_CASE(pub_16_get_approve_reject_einval),
    ZT_CASE(sub_01_prefix_match),
    ZT_CASE(sub_02_empty_matches_all),
    ZT_CASE(sub_03_star_literal),
    ZT_CASE(sub_04_unset),
    ZT_CASE(sub_05_argument_errors),
    ZT_CASE(sub_06_topics_count),
    ZT_CASE(sub_07_subscription_at_byte_order),
    ZT_CASE(sub_08_topic_no_nul),
    ZT_CASE(sub_09_subscription_at_pattern),
    ZT_CASE(sub_10_parts_too_small),
    ZT_CASE(sub_10_subscription_at_too_small),
    ZT_CASE(sub_11_subscription_at_errors),
    ZT_CASE(sub_12_topic_copied_parts_owned),
    ZT_CASE(sub_13_rid_null),
    ZT_CASE(sub_14_short_topic_kept),
    ZT_CASE(sub_15_null_topic_buffer),
    ZT_CASE(sub_no_data),
};

int main(int argc, char **argv)
{
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
