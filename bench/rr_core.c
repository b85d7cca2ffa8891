/*
 * rr_core.c — the raw Core side of the request/reply benchmark
 * (//bench:framework_core): a ROUTER server and a DEALER client over tcp,
 * in two processes, speaking the protocol of rr_common.h.
 *
 * Design notes
 * ------------
 * Server. The main thread creates a context (1 I/O thread) and a ROUTER
 * bound to tcp://127.0.0.1:0, prints READY with the port read back from
 * LAST_ENDPOINT, and starts one serving thread. That thread loops on a
 * blocking zlink_router_recv and answers each REQUEST with zlink_reply,
 * handing the received parts straight back (no copy: the reply consumes
 * them). The main thread waits for stdin's end of file, then calls
 * zlink_ctx_shutdown, which makes the blocked receive return TERMINATED;
 * the serving thread ends, the main thread joins it, closes and terminates.
 *
 * Client. One thread does everything, as an application driving the
 * completion queue would: it keeps N requests in flight with
 * zlink_request(DONTWAIT) and reads their REQUEST completion records with
 * a blocking zlink_completion_recv. Each record ends one call: its latency
 * is recorded, the record closed, and the same slot (user_context = slot
 * index) submits the next request. A submit refused for lack of room
 * (BACKPRESSURED) parks its slot in a FIFO; the WRITABLE record promised
 * by its wait token makes the client resubmit parked slots in order until
 * one is refused again. The first request is submitted blocking (and
 * repeated while the DEALER has no peer yet) so the connection is up
 * before the rest go out; all of it happens inside the warm-up.
 *
 * Settings: ZLink defaults (byte HWM, TCP_NODELAY 1, no spinning unless
 * ZLINK_RR_CORE_SPIN_US names a ZLINK_SPIN_US window: framework_driver.c's
 * --core-spin-us) except LINGER 0,
 * blocking calls without a time limit on the server (SNDTIMEO = RCVTIMEO
 * = -1), and on the client RCVTIMEO = RR_STALL_NS as the failure bound of
 * one completion wait and a request timeout of 60 s, far above anything a
 * healthy run sees.
 */
#include "rr_common.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zlink.h"

#define RR_CORE_REQUEST_TIMEOUT_MS 60000u
#define RR_CORE_MAX_PARTS 4

static void version_string(char *buf, size_t cap)
{
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch);
    snprintf(buf, cap, "zlink-%d.%d.%d", major, minor, patch);
}

static int set_int(void *s, int option, int value, const char *name)
{
    zlink_config_result_t rc = zlink_setsockopt(s, option, &value, sizeof value);
    if (rc != ZLINK_CONFIG_OK) {
        rr_error("setsockopt(%s): %s", name, zlink_result_name(rc));
        return -1;
    }
    return 0;
}

/* A context with one I/O thread, or NULL after an ERROR line. */
static void *new_ctx(void)
{
    void *ctx = zlink_ctx_new();
    if (!ctx) {
        rr_error("zlink_ctx_new: %s", zlink_strerror(zlink_errno()));
        return NULL;
    }
    zlink_config_result_t rc = zlink_ctx_set(ctx, ZLINK_IO_THREADS, 1);
    if (rc != ZLINK_CONFIG_OK) {
        rr_error("zlink_ctx_set(IO_THREADS): %s", zlink_result_name(rc));
        zlink_ctx_term(ctx);
        return NULL;
    }
    const char *spin = getenv("ZLINK_RR_CORE_SPIN_US");
    if (spin != NULL) {
        rc = zlink_ctx_set(ctx, ZLINK_SPIN_US, atoi(spin));
        if (rc != ZLINK_CONFIG_OK) {
            rr_error("zlink_ctx_set(SPIN_US, %s): %s", spin, zlink_result_name(rc));
            zlink_ctx_term(ctx);
            return NULL;
        }
    }
    return ctx;
}

/* ------------------------------------------------------------------ server */

typedef struct core_server {
    void *ctx;
    void *router;
    int failed;      /* written by the serving thread, read after the join */
} core_server_t;

/* The serving thread: answers REQUESTs until the context is shut down.
 * Non-request records (token 0) are not part of this benchmark: dropped. */
static void *serve(void *arg)
{
    core_server_t *sv = arg;
    for (;;) {
        zlink_msg_t parts[RR_CORE_MAX_PARTS];
        size_t count = 0;
        const zlink_routing_id_t *rid = NULL;
        zlink_reply_token_t token = 0;
        zlink_recv_result_t rr = zlink_router_recv(sv->router, &rid, &token, parts,
                                                   RR_CORE_MAX_PARTS, &count,
                                                   ZLINK_RECV_FLAGS_NONE);
        if (rr == ZLINK_RECV_TERMINATED)
            return NULL;
        if (rr != ZLINK_RECV_OK) {
            rr_error("server zlink_router_recv: %s", zlink_result_name(rr));
            sv->failed = 1;
            return NULL;
        }
        if (token == 0) {
            zlink_multipart_close(parts, count);
            continue;
        }
        /* rid is borrowed until the next receive: zlink_reply is done with
         * it before that. The reply consumes the parts in every case. */
        zlink_submit_result_t sr = zlink_reply(sv->router, rid, token, parts, count);
        zlink_multipart_close(parts, count);
        if (sr == ZLINK_SUBMIT_TERMINATED)
            return NULL;
        if (sr != ZLINK_SUBMIT_OK) {
            rr_error("server zlink_reply: %s", zlink_result_name(sr));
            sv->failed = 1;
            return NULL;
        }
    }
}

/* The port in a "tcp://127.0.0.1:<port>" endpoint, or -1. */
static int endpoint_port(const char *endpoint)
{
    const char *colon = strrchr(endpoint, ':');
    if (!colon)
        return -1;
    int port = atoi(colon + 1);
    return port > 0 && port <= 65535 ? port : -1;
}

static int run_server(void)
{
    core_server_t sv;
    memset(&sv, 0, sizeof sv);
    sv.ctx = new_ctx();
    if (!sv.ctx)
        return 1;
    int status = 1;
    sv.router = zlink_socket(sv.ctx, ZLINK_ROUTER);
    if (!sv.router) {
        rr_error("zlink_socket(ROUTER): %s", zlink_strerror(zlink_errno()));
        goto out;
    }
    if (set_int(sv.router, ZLINK_SNDTIMEO, -1, "SNDTIMEO") != 0 ||
        set_int(sv.router, ZLINK_RCVTIMEO, -1, "RCVTIMEO") != 0 ||
        set_int(sv.router, ZLINK_LINGER, 0, "LINGER") != 0)
        goto out;
    zlink_bind_result_t br = zlink_bind(sv.router, "tcp://127.0.0.1:0");
    if (br != ZLINK_BIND_OK) {
        rr_error("zlink_bind: %s", zlink_result_name(br));
        goto out;
    }
    char endpoint[256] = {0};
    size_t len = sizeof endpoint - 1;
    zlink_config_result_t cr = zlink_getsockopt(sv.router, ZLINK_LAST_ENDPOINT, endpoint, &len);
    int port = cr == ZLINK_CONFIG_OK ? endpoint_port(endpoint) : -1;
    if (port < 0) {
        rr_error("LAST_ENDPOINT '%s': %s", endpoint, zlink_result_name(cr));
        goto out;
    }
    pthread_t thread;
    int err = pthread_create(&thread, NULL, serve, &sv);
    if (err != 0) {
        rr_error("pthread_create: %s", strerror(err));
        goto out;
    }
    rr_ready(port);
    rr_wait_stdin_eof();
    zlink_ctx_shutdown(sv.ctx);
    pthread_join(thread, NULL);
    status = sv.failed ? 1 : 0;
out:
    if (sv.router)
        zlink_close(sv.router);
    zlink_ctx_term(sv.ctx);
    return status;
}

/* ------------------------------------------------------------------ client */

typedef struct core_client {
    const rr_args_t *args;
    void *dealer;
    uint64_t *start_ns;      /* per slot: when its current request went out */
    unsigned *parked;        /* FIFO of slots refused with BACKPRESSURED */
    unsigned parked_head, parked_count;
    unsigned inflight;       /* admitted requests without their record yet */
    unsigned char *payload;  /* args->size bytes, copied into every request */
    uint64_t window_start, window_end;
    uint64_t calls;          /* completions inside the window */
    rr_samples_t samples;
} core_client_t;

/* Submits slot's next request. flags NONE only for the first one (waits
 * for room while the connection comes up). Returns 0 when admitted or
 * parked, -1 after an ERROR line. The message is consumed either way. */
static int submit(core_client_t *cl, unsigned slot, zlink_send_flags_t flags)
{
    zlink_msg_t m;
    zlink_config_result_t cr = zlink_msg_init_size(&m, cl->args->size);
    if (cr != ZLINK_CONFIG_OK) {
        rr_error("zlink_msg_init_size: %s", zlink_result_name(cr));
        return -1;
    }
    memcpy(zlink_msg_data(&m), cl->payload, cl->args->size);
    zlink_completion_id_t id = 0;
    cl->start_ns[slot] = rr_now_ns();
    zlink_submit_result_t sr = zlink_request(cl->dealer, NULL, &m, 1, flags, 0,
                                             (void *)(uintptr_t)slot, &id);
    zlink_msg_close(&m);
    if (sr == ZLINK_SUBMIT_OK) {
        cl->inflight++;
        return 0;
    }
    if (sr == ZLINK_SUBMIT_BACKPRESSURED && id != 0) {
        /* A WRITABLE record with this wait token follows; resubmit then. */
        unsigned tail = (cl->parked_head + cl->parked_count) % cl->args->inflight;
        cl->parked[tail] = slot;
        cl->parked_count++;
        return 0;
    }
    rr_error("zlink_request: %s", zlink_result_name(sr));
    return -1;
}

/* The first request, blocking: repeated while the DEALER has no peer yet
 * (NOT_CONNECTED), for at most RR_STALL_NS. */
static int submit_first(core_client_t *cl)
{
    uint64_t give_up = rr_now_ns() + RR_STALL_NS;
    for (;;) {
        zlink_msg_t m;
        zlink_config_result_t cr = zlink_msg_init_size(&m, cl->args->size);
        if (cr != ZLINK_CONFIG_OK) {
            rr_error("zlink_msg_init_size: %s", zlink_result_name(cr));
            return -1;
        }
        memcpy(zlink_msg_data(&m), cl->payload, cl->args->size);
        zlink_completion_id_t id = 0;
        cl->start_ns[0] = rr_now_ns();
        zlink_submit_result_t sr = zlink_request(cl->dealer, NULL, &m, 1,
                                                 ZLINK_SEND_FLAGS_NONE, 0, (void *)0, &id);
        zlink_msg_close(&m);
        if (sr == ZLINK_SUBMIT_OK) {
            cl->inflight++;
            return 0;
        }
        if ((sr != ZLINK_SUBMIT_NOT_CONNECTED && sr != ZLINK_SUBMIT_BACKPRESSURED) ||
            rr_now_ns() > give_up) {
            rr_error("first zlink_request: %s", zlink_result_name(sr));
            return -1;
        }
        struct timespec pause = {0, 1000000}; /* connection not up yet: 1 ms */
        nanosleep(&pause, NULL);
    }
}

/* One REQUEST record: checks the echo, records the call, starts the next
 * request in the same slot while the window is open. */
static int on_request_record(core_client_t *cl, zlink_completion_t *c, uint64_t now)
{
    unsigned slot = (unsigned)(uintptr_t)c->user_context;
    int ok = c->request_result == ZLINK_REQUEST_OK && c->reply_part_count == 1 &&
             zlink_msg_size(&c->reply_parts[0]) == cl->args->size;
    if (!ok) {
        rr_error("request completed with %s, %zu reply parts",
                 zlink_result_name(c->request_result), c->reply_part_count);
        return -1;
    }
    cl->inflight--;
    if (now >= cl->window_start && now < cl->window_end) {
        cl->calls++;
        rr_samples_add(&cl->samples, (double)(now - cl->start_ns[slot]) / 1000.0);
    }
    if (now < cl->window_end)
        return submit(cl, slot, ZLINK_SEND_FLAGS_DONTWAIT);
    return 0;
}

/* A WRITABLE record: resubmits parked slots in order until one is refused
 * again (submit parks it at the tail, and another WRITABLE follows). */
static int on_writable_record(core_client_t *cl, uint64_t now)
{
    unsigned n = cl->parked_count;
    while (n-- > 0 && now < cl->window_end) {
        unsigned slot = cl->parked[cl->parked_head];
        cl->parked_head = (cl->parked_head + 1) % cl->args->inflight;
        cl->parked_count--;
        unsigned before = cl->parked_count;
        if (submit(cl, slot, ZLINK_SEND_FLAGS_DONTWAIT) != 0)
            return -1;
        if (cl->parked_count > before)
            break; /* refused again: wait for its WRITABLE */
    }
    if (now >= cl->window_end) /* the window is over: parked calls never start */
        cl->parked_count = 0;
    return 0;
}

static int client_loop(core_client_t *cl)
{
    const rr_args_t *a = cl->args;
    uint64_t t = rr_now_ns();
    cl->window_start = t + a->warmup_ns;
    cl->window_end = cl->window_start + a->duration_ns;
    if (submit_first(cl) != 0)
        return -1;
    for (unsigned slot = 1; slot < a->inflight; slot++)
        if (submit(cl, slot, ZLINK_SEND_FLAGS_DONTWAIT) != 0)
            return -1;
    while (cl->inflight > 0 || cl->parked_count > 0) {
        zlink_completion_t c;
        memset(&c, 0, sizeof c);
        c.struct_size = sizeof c;
        zlink_recv_result_t rr = zlink_completion_recv(cl->dealer, &c, ZLINK_RECV_FLAGS_NONE);
        uint64_t now = rr_now_ns();
        if (rr != ZLINK_RECV_OK) {
            rr_error("zlink_completion_recv: %s (%u in flight)", zlink_result_name(rr),
                     cl->inflight);
            return -1;
        }
        int rc = 0;
        if (c.kind == ZLINK_COMPLETION_REQUEST)
            rc = on_request_record(cl, &c, now);
        else if (c.kind == ZLINK_COMPLETION_WRITABLE)
            rc = on_writable_record(cl, now);
        zlink_completion_close(&c);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int run_client(const rr_args_t *a)
{
    core_client_t cl;
    memset(&cl, 0, sizeof cl);
    cl.args = a;
    cl.start_ns = calloc(a->inflight, sizeof *cl.start_ns);
    cl.parked = calloc(a->inflight, sizeof *cl.parked);
    cl.payload = malloc(a->size);
    /* Room for the samples of a fast run up front, so the window rarely
     * reallocates: 2 M samples per second of window, at most 64 M. */
    size_t expected = (size_t)(a->duration_ns / 500);
    if (expected > (64u << 20))
        expected = 64u << 20;
    if (!cl.start_ns || !cl.parked || !cl.payload || rr_samples_init(&cl.samples, expected) != 0) {
        rr_error("out of memory");
        free(cl.start_ns);
        free(cl.parked);
        free(cl.payload);
        return 1;
    }
    memset(cl.payload, 'q', a->size);
    int status = 1;
    void *ctx = new_ctx();
    if (!ctx)
        goto out_mem;
    cl.dealer = zlink_socket(ctx, ZLINK_DEALER);
    if (!cl.dealer) {
        rr_error("zlink_socket(DEALER): %s", zlink_strerror(zlink_errno()));
        goto out;
    }
    if (set_int(cl.dealer, ZLINK_SNDTIMEO, (int)(RR_STALL_NS / 1000000), "SNDTIMEO") != 0 ||
        set_int(cl.dealer, ZLINK_RCVTIMEO, (int)(RR_STALL_NS / 1000000), "RCVTIMEO") != 0 ||
        set_int(cl.dealer, ZLINK_LINGER, 0, "LINGER") != 0 ||
        set_int(cl.dealer, ZLINK_DEALER_OPT_REQUEST_TIMEOUT_MS, (int)RR_CORE_REQUEST_TIMEOUT_MS,
                "DEALER_OPT_REQUEST_TIMEOUT_MS") != 0)
        goto out;
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", a->port);
    zlink_connect_result_t cn = zlink_connect(cl.dealer, endpoint);
    if (cn != ZLINK_CONNECT_OK) {
        rr_error("zlink_connect(%s): %s", endpoint, zlink_result_name(cn));
        goto out;
    }
    if (client_loop(&cl) == 0) {
        char version[64];
        version_string(version, sizeof version);
        status = rr_report(version, cl.calls, a->duration_ns, &cl.samples) == 0 ? 0 : 1;
    }
out:
    if (cl.dealer)
        zlink_close(cl.dealer);
    zlink_ctx_term(ctx);
out_mem:
    rr_samples_free(&cl.samples);
    free(cl.start_ns);
    free(cl.parked);
    free(cl.payload);
    return status;
}

int main(int argc, char **argv)
{
    rr_args_t a;
    if (rr_parse_args(argc, argv, &a) != 0)
        return 2;
    return a.mode == RR_SERVER ? run_server() : run_client(&a);
}
