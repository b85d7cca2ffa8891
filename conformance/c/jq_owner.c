/*
 * jq_owner.c — seed 001 §10 "A failed check leaves no trace" (JQ-04): an
 * owner's queue keeps its counts, bytes and sequence numbers exactly when
 * a record is refused before it.
 *
 * The owner is the serial owner this phase has: the execution gate of a
 * channel's handlers on server X (DECISIONS D4 C4). A refused record is
 * one X's host turns away before the owner: a request for a packet or a
 * message kind no handler of the channel takes (NotFound). Spots and
 * Actors that can be closing or sealed come with phase 3 (the case's
 * "later" entry).
 *
 * Threads: the test thread calls; X's handler records on X's host thread.
 * Locks: the record list's own mutex.
 */
#include "sc.h"

#include <stdio.h>
#include <string.h>

typedef struct jq04_seen {
    pthread_mutex_t lk;
    int n;
    char tag[4][SC_TAG_MAX];
    uint64_t seq[4];
} jq04_seen_t;

static void jq04_on_send(zlink_turn_t *turn, void *user)
{
    jq04_seen_t *s = user;
    size_t n = 0;
    const char *p = zlink_turn_payload(turn, &n);
    uint64_t seq = zlink_turn_sequence(turn);
    pthread_mutex_lock(&s->lk);
    if (s->n < 4) {
        snprintf(s->tag[s->n], SC_TAG_MAX, "%.*s", (int)(n < SC_TAG_MAX - 1 ? n : SC_TAG_MAX - 1),
                 p != NULL ? p : "");
        s->seq[s->n] = seq;
    }
    s->n++;
    pthread_mutex_unlock(&s->lk);
    zlink_turn_end(turn, 0, NULL);
}

static int jq04_count(jq04_seen_t *s)
{
    pthread_mutex_lock(&s->lk);
    int n = s->n;
    pthread_mutex_unlock(&s->lk);
    return n;
}

static zlink_owner_status_t jq04_owner(zlink_host_t *h)
{
    return sc_owner_status(h, ZLINK_OWNER_CHANNEL, "svc");
}

static void jq04_send(zlink_host_t *a, const char *tag)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = zlink_call_send_to_channel(a, "svc", &rc);
    ZT_CHECK(c != NULL);
    SC_EQ(zlink_call_set_payload(c, "m", "", tag, strlen(tag)), ZLINK_FW_OK);
    SC_EQ(sc_wait(c, NULL), ZLINK_FW_OK);
    zlink_call_release(c);
}

/* A request X refuses before the owner: its result. */
static int jq04_refused(zlink_host_t *a, const char *packet)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = zlink_call_request_to_channel(a, "svc", &rc);
    ZT_CHECK(c != NULL);
    SC_EQ(zlink_call_set_payload(c, packet, "", "x", 1), ZLINK_FW_OK);
    SC_EQ(zlink_call_set_timeout(c, ZLINK_MS(5000)), ZLINK_FW_OK);
    zlink_outcome_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    int r = sc_wait(c, &o);
    zlink_call_release(c);
    return r;
}

static void failed_check_leaves_no_trace(const char *tr)
{
    jq04_seen_t seen;
    memset(&seen, 0, sizeof seen);
    pthread_mutex_init(&seen.lk, NULL);
    char bound[256];

    /* X serves "svc" with a one-way handler for packet "m" only. */
    zlink_host_t *x = sc_mesh_host("X", tr, true, 0);
    SC_EQ(zlink_mesh_add_channel_server(x, "m", "svc", 100), ZLINK_FW_OK);
    SC_EQ(zlink_host_add_handler(x, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_SEND, "m",
                                 jq04_on_send, &seen),
          ZLINK_FW_OK);
    SC_EQ(zlink_host_start(x), ZLINK_FW_OK);
    SC_EQ(zlink_host_endpoint(x, "m", bound, sizeof bound), ZLINK_FW_OK);

    zlink_host_t *a = sc_mesh_host("A", tr, false, 0);
    SC_EQ(zlink_mesh_add_channel_client(a, "m", "svc"), ZLINK_FW_OK);
    SC_EQ(zlink_mesh_connect(a, "m", bound, "X", 1), ZLINK_FW_OK);
    SC_EQ(zlink_host_start(a), ZLINK_FW_OK);
    ZT_EVENTUALLY(zlink_mesh_ready_peers(a, "m", NULL) == 1, 5000);

    jq04_send(a, "v1");
    ZT_EVENTUALLY(jq04_owner(x).handled == 1, 5000);
    zlink_owner_status_t before = jq04_owner(x);
    ZT_EQ_INT(before.accepted_seq, 1);

    /* Refused before the owner: a packet nobody handles, and the right
     * packet as the wrong kind (the channel takes "m" only as a one-way). */
    SC_EQ(jq04_refused(a, "nope"), ZLINK_FW_NOT_FOUND);
    SC_EQ(jq04_refused(a, "m"), ZLINK_FW_NOT_FOUND);
    zlink_owner_status_t mid = jq04_owner(x);
    ZT_EQ_INT(mid.accepted_seq, before.accepted_seq);
    ZT_EQ_INT(mid.queued_records, before.queued_records);
    ZT_EQ_INT(mid.queued_bytes, before.queued_bytes);
    ZT_EQ_INT(mid.running_records, before.running_records);
    ZT_EQ_INT(mid.running_bytes, before.running_bytes);
    ZT_EQ_INT(mid.handled, before.handled);

    jq04_send(a, "v2");
    ZT_EVENTUALLY(jq04_owner(x).handled == 2, 5000);
    ZT_EQ_INT(jq04_count(&seen), 2);
    pthread_mutex_lock(&seen.lk);
    bool order = strcmp(seen.tag[0], "v1") == 0 && strcmp(seen.tag[1], "v2") == 0;
    uint64_t s1 = seen.seq[0], s2 = seen.seq[1];
    pthread_mutex_unlock(&seen.lk);
    ZT_CHECK(order);
    ZT_EQ_INT(s1, 1);
    ZT_EQ_INT(s2, s1 + 1); /* consecutive: the refusals took no number */
    zlink_owner_status_t end = jq04_owner(x);
    ZT_EQ_INT(end.accepted_seq, 2);
    ZT_EQ_INT(end.queued_records + end.queued_bytes + end.running_records + end.running_bytes, 0);
    /* The job queue is back where it was: no permit kept by a refusal. */
    zlink_host_capacity_t cap = sc_capacity(x);
    ZT_EQ_INT(cap.permits_in_use, 0);
    ZT_EQ_INT(cap.queued_jobs, 0);

    SC_EQ(zlink_host_shutdown(a, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_shutdown(x, ZLINK_MS(2000)), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(a), ZLINK_FW_OK);
    SC_EQ(zlink_host_destroy(x), ZLINK_FW_OK);
    pthread_mutex_destroy(&seen.lk);
}

void jq04_failed_check_leaves_no_trace(const conf_params_t *params)
{
    sc_each_transport(params, failed_check_leaves_no_trace);
}
