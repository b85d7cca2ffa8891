/*
 * rr_framework.c — the ZLink framework side of the request/reply benchmark
 * (//bench:framework_zlink): a Host serving a ClientServer channel and a
 * Host with a CS client channel, in two processes, speaking the protocol of
 * rr_common.h. Uses only the public ABI of abi/include/zlink/framework.h.
 *
 * Design notes
 * ------------
 * Server. One Host, one CS server channel RR_FW_CHANNEL on
 * tcp://127.0.0.1:0 (the port it was given is read back with
 * zlink_host_endpoint), one REQUEST handler for packet RR_FW_PACKET. The handler
 * answers with the same payload, packet and content type through
 * zlink_turn_respond (the reply and the end of the turn in one call; nobody
 * waits for the reply's admission). The main
 * thread waits for stdin's end of file, then zlink_host_shutdown and
 * zlink_host_destroy.
 *
 * Client. One Host with a CS client channel to the server. The main thread
 * starts N requests (zlink_call_request_to_channel + zlink_call_set_payload
 * + zlink_call_start(call, on_reply, slot)). Each completion runs on the
 * framework's completion dispatcher (a framework thread): on_reply records
 * the latency, releases the call and, while the window is open, starts the
 * slot's next request, so N stay in flight. The main thread then waits on
 * a condition variable until every call has completed (bounded by
 * RR_STALL_NS after the window), shuts the host down and reports.
 *
 * Lock: fw_client_t.lock guards calls, inflight, failed, the samples and
 * start_ns[], shared between the dispatcher thread(s) and the main thread.
 * It is never held across a framework call: a completion callback may run
 * on another framework thread while zlink_call_start returns, so the slot's
 * start time is written before its call starts.
 */
#include "rr_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zlink.h"

#define RR_FW_CHANNEL "bench"
#define RR_FW_PACKET "echo"
#define RR_FW_CONTENT_TYPE "application/octet-stream"

static void version_string(char *buf, size_t cap)
{
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch);
    snprintf(buf, cap, "zlink-framework-%d.%d.%d", major, minor, patch);
}

static const char *fw_name(zlink_fw_result_t r)
{
    const char *name = zlink_result_name((int)r);
    return name ? name : "?";
}

/* ------------------------------------------------------------------ server */

/* The REQUEST handler: runs on a handler thread in a turn of the channel's
 * gate. Echoes the request; any failure answers by ending the turn as
 * failed (the client then sees INTERNAL_FAILURE and reports it). */
static void on_request(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t size = 0;
    const void *data = zlink_turn_payload(turn, &size);
    /* The reply and the end of the turn in one call (zlink_turn_respond);
     * on failure the turn has ended, except for argument errors. */
    zlink_fw_result_t r = zlink_turn_respond(turn, zlink_turn_packet(turn),
                                             zlink_turn_content_type(turn), data, size);
    if (r == ZLINK_FW_INVALID_ARGUMENT || r == ZLINK_FW_INVALID_OPERATION)
        zlink_turn_end(turn, 1, "echo reply failed");
}

/* A serving host on an ephemeral port, or NULL after an ERROR line. *port
 * gets the port the listener was given (zlink_host_endpoint). */
static zlink_host_t *start_server_host(int *port)
{
    zlink_fw_result_t r = 0;
    zlink_host_t *host = zlink_host_new("bench-server", &r);
    if (!host) {
        rr_error("zlink_host_new: %s", fw_name(r));
        return NULL;
    }
    r = zlink_host_add_cs_server(host, RR_FW_CHANNEL, "tcp://127.0.0.1:0");
    if (r == 0)
        r = zlink_host_add_handler(host, ZLINK_OWNER_CHANNEL, RR_FW_CHANNEL,
                                   ZLINK_MESSAGE_REQUEST, RR_FW_PACKET, on_request, NULL);
    if (r == 0)
        r = zlink_host_start(host);
    char endpoint[256];
    if (r == 0)
        r = zlink_host_endpoint(host, RR_FW_CHANNEL, endpoint, sizeof endpoint);
    const char *colon = r == 0 ? strrchr(endpoint, ':') : NULL;
    if (r != 0 || colon == NULL) {
        rr_error("server host setup: %s", fw_name(r));
        zlink_host_destroy(host);
        return NULL;
    }
    *port = atoi(colon + 1);
    return host;
}

static int run_server(void)
{
    int port = 0;
    zlink_host_t *host = start_server_host(&port);
    if (!host)
        return 1;
    rr_ready(port);
    rr_wait_stdin_eof();
    zlink_fw_result_t r = zlink_host_shutdown(host, 0);
    int status = r == 0 ? 0 : 1;
    if (r != 0)
        rr_error("zlink_host_shutdown: %s", fw_name(r));
    zlink_host_destroy(host);
    return status;
}

/* ------------------------------------------------------------------ client */

typedef struct fw_client {
    const rr_args_t *args;
    zlink_host_t *host;
    unsigned char *payload;
    uint64_t window_start, window_end;   /* fixed before the first call */
    pthread_mutex_t lock;
    pthread_cond_t all_done;             /* signalled when inflight drops to 0 */
    uint64_t *start_ns;                  /* per slot; lock */
    unsigned inflight;                   /* started, not completed; lock */
    uint64_t calls;                      /* completions in the window; lock */
    rr_samples_t samples;                /* lock */
    int failed;                          /* lock */
    char failure[256];                   /* the first failure; lock */
} fw_client_t;

typedef struct fw_slot {
    fw_client_t *client;
    unsigned index;
} fw_slot_t;

static void on_reply(zlink_call_t *call, const zlink_outcome_t *outcome, void *user);

/* Records the first failure. Caller holds cl->lock. */
static void client_fail_locked(fw_client_t *cl, const char *what, int result)
{
    if (cl->failed)
        return;
    cl->failed = 1;
    snprintf(cl->failure, sizeof cl->failure, "%s: %s", what, fw_name(result));
}

/* Builds and starts slot's next request. Called by the main thread (the
 * first N) and by on_reply (a framework thread), without cl->lock. Returns
 * 0 when started; otherwise the call is released, the failure recorded and
 * the slot counted as completed. */
static int start_request(fw_slot_t *slot)
{
    fw_client_t *cl = slot->client;
    zlink_fw_result_t r = 0;
    const char *what = "zlink_call_request_to_channel";
    zlink_call_t *call = zlink_call_request_to_channel(cl->host, RR_FW_CHANNEL, &r);
    if (call) {
        what = "zlink_call_set_payload";
        r = zlink_call_set_payload(call, RR_FW_PACKET, RR_FW_CONTENT_TYPE, cl->payload,
                                   cl->args->size);
        if (r == 0) {
            pthread_mutex_lock(&cl->lock);
            cl->start_ns[slot->index] = rr_now_ns();
            pthread_mutex_unlock(&cl->lock);
            what = "zlink_call_start";
            r = zlink_call_start(call, on_reply, slot);
            if (r == 0)
                return 0; /* on_reply releases it */
        }
        zlink_call_release(call);
    }
    pthread_mutex_lock(&cl->lock);
    client_fail_locked(cl, what, r);
    if (--cl->inflight == 0)
        pthread_cond_broadcast(&cl->all_done);
    pthread_mutex_unlock(&cl->lock);
    return -1;
}

/* The completion callback: runs once per call on the completion dispatcher
 * (a framework thread, in a new turn); takes cl->lock briefly. */
static void on_reply(zlink_call_t *call, const zlink_outcome_t *outcome, void *user)
{
    fw_slot_t *slot = user;
    fw_client_t *cl = slot->client;
    uint64_t now = rr_now_ns();
    int ok = outcome->result == 0 && outcome->payload_size == cl->args->size;
    int result = outcome->result;
    zlink_call_release(call); /* the outcome is not used after this */
    int again = 0;
    pthread_mutex_lock(&cl->lock);
    if (!ok) {
        client_fail_locked(cl, "request outcome", result != 0 ? result : -1);
    } else if (now >= cl->window_start && now < cl->window_end) {
        cl->calls++;
        rr_samples_add(&cl->samples, (double)(now - cl->start_ns[slot->index]) / 1000.0);
    }
    again = ok && !cl->failed && now < cl->window_end;
    if (!again && --cl->inflight == 0)
        pthread_cond_broadcast(&cl->all_done);
    pthread_mutex_unlock(&cl->lock);
    if (again)
        start_request(slot); /* failure: recorded and counted there */
}

static int run_client(const rr_args_t *a)
{
    fw_client_t cl;
    memset(&cl, 0, sizeof cl);
    cl.args = a;
    pthread_mutex_init(&cl.lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cl.all_done, &attr);
    pthread_condattr_destroy(&attr);
    cl.payload = malloc(a->size);
    cl.start_ns = calloc(a->inflight, sizeof *cl.start_ns);
    fw_slot_t *slots = calloc(a->inflight, sizeof *slots);
    size_t expected = (size_t)(a->duration_ns / 2000);
    int status = 1;
    if (!cl.payload || !cl.start_ns || !slots || rr_samples_init(&cl.samples, expected) != 0) {
        rr_error("out of memory");
        goto out_mem;
    }
    memset(cl.payload, 'q', a->size);

    zlink_fw_result_t r = 0;
    cl.host = zlink_host_new("bench-client", &r);
    if (!cl.host) {
        rr_error("zlink_host_new: %s", fw_name(r));
        goto out_mem;
    }
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", a->port);
    r = zlink_host_add_cs_client(cl.host, RR_FW_CHANNEL, endpoint);
    if (r == 0)
        r = zlink_host_start(cl.host);
    if (r != 0) {
        rr_error("client host setup (%s): %s", endpoint, fw_name(r));
        goto out;
    }

    cl.window_start = rr_now_ns() + a->warmup_ns;
    cl.window_end = cl.window_start + a->duration_ns;
    pthread_mutex_lock(&cl.lock);
    cl.inflight = a->inflight; /* each slot is counted until it stops */
    pthread_mutex_unlock(&cl.lock);
    for (unsigned i = 0; i < a->inflight; i++) {
        slots[i].client = &cl;
        slots[i].index = i;
        if (start_request(&slots[i]) != 0) {
            /* Slots never started must not be waited for. */
            pthread_mutex_lock(&cl.lock);
            cl.inflight -= a->inflight - 1 - i;
            if (cl.inflight == 0)
                pthread_cond_broadcast(&cl.all_done);
            pthread_mutex_unlock(&cl.lock);
            break;
        }
    }

    uint64_t bound = cl.window_end + RR_STALL_NS;
    struct timespec until = {(time_t)(bound / 1000000000ull), (long)(bound % 1000000000ull)};
    pthread_mutex_lock(&cl.lock);
    int timed_out = 0;
    while (cl.inflight > 0 && !timed_out)
        timed_out = pthread_cond_timedwait(&cl.all_done, &cl.lock, &until) == ETIMEDOUT;
    unsigned left = cl.inflight;
    int failed = cl.failed;
    pthread_mutex_unlock(&cl.lock);

    if (timed_out && left > 0) {
        rr_error("%u calls still in flight %llu s after the window", left,
                 (unsigned long long)(RR_STALL_NS / 1000000000ull));
        /* The host shutdown below completes them (SHUTTING_DOWN). */
    } else if (failed) {
        rr_error("%s", cl.failure);
    } else {
        char version[64];
        version_string(version, sizeof version);
        status = rr_report(version, cl.calls, a->duration_ns, &cl.samples) == 0 ? 0 : 1;
    }
out:
    r = zlink_host_shutdown(cl.host, 0);
    if (r != 0 && status == 0) {
        rr_error("zlink_host_shutdown: %s", fw_name(r));
        status = 1;
    }
    zlink_host_destroy(cl.host);
out_mem:
    rr_samples_free(&cl.samples);
    free(slots);
    free(cl.start_ns);
    free(cl.payload);
    pthread_cond_destroy(&cl.all_done);
    pthread_mutex_destroy(&cl.lock);
    return status;
}

int main(int argc, char **argv)
{
    rr_args_t a;
    if (rr_parse_args(argc, argv, &a) != 0)
        return 2;
    return a.mode == RR_SERVER ? run_server() : run_client(&a);
}
