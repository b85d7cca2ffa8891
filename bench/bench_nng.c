/*
 * bench_nng.c — the nng half of core_vs_libzmq: the second baseline
 * (Debian's libnng-dev, nng 1.5), for the patterns nng has an equivalent of.
 *
 * Design notes
 * ------------
 * The same measurements as bench_zlink.c and bench_zmq.c, with nng's
 * message API (nng_msg: the bytes are copied into a message once and the
 * message is handed over, as the other halves do). nng has no per-context
 * I/O thread: its sockets share the library's own task threads, so "one I/O
 * thread per context" cannot be asked of it; the SETTINGS line says so.
 *
 * Patterns (nng_supports):
 *   pair           pair1 both ways: throughput and round trip
 *   dealer_router  throughput: push0 -> pull0 (one-way records, the job of a
 *                  DEALER sending to a ROUTER); round trip: req0 -> rep0 (the
 *                  request/reply a DEALER and a ROUTER do)
 *   router_router, pub_sub: nng has no equivalent that keeps every message
 *                  (its pub0 drops at a slow subscriber), so these are not
 *                  measured and print no nng ratio.
 *
 * Settings: nng defaults, except
 *   - send and receive buffers of 1,000 messages, libzmq's HWM (nng's
 *     defaults are 0 or 1 message: a hand-off per message);
 *   - no receive size limit (nng's default 1 MiB would refuse the larger
 *     sizes).
 *
 * Failure: the first worker that fails prints the ERROR line, sets
 * run->failed and closes every socket of the run, which makes the other
 * worker's blocking call return NNG_ECLOSED; that worker then leaves
 * quietly. The main thread closes the sockets again afterwards (closing a
 * closed nng socket only answers NNG_ECLOSED).
 */
#include "bench_common.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pipeline0/push.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#define NNG_BENCH_BUF 1000

typedef struct nng_run {
    const bench_case_t *c;
    nng_socket sock[2];    /* [0] sender/client, [1] receiver/server */
    int open[2];
    char endpoint[256];    /* the dialable address of the listener */
    atomic_int failed;
    double msgs_per_s;     /* throughput result */
    double *rtt_us;        /* latency result */
} nng_run_t;

static int nng_supports(bench_pattern_t p)
{
    return p == BENCH_PAIR || p == BENCH_DEALER_ROUTER;
}

/* First failure wins: prints the ERROR line and unblocks the other worker. */
static void run_fail(nng_run_t *r, const char *what, int rv)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&r->failed, &expected, 1))
        return;
    bench_error(r->c, "%s: %s (%d)", what, nng_strerror(rv), rv);
    for (int i = 0; i < 2; i++) {
        if (r->open[i])
            nng_close(r->sock[i]);
    }
}

/* A worker's call failed: NNG_ECLOSED after another failure is quiet. */
static void worker_fail(nng_run_t *r, const char *what, int rv)
{
    if (rv == NNG_ECLOSED && atomic_load(&r->failed))
        return;
    run_fail(r, what, rv);
}

/* ------------------------------------------------------------------ setup */

typedef int (*open_fn)(nng_socket *);

static int new_socket(nng_run_t *r, int slot, open_fn open)
{
    int rv = open(&r->sock[slot]);
    if (rv != 0) {
        run_fail(r, "nng open", rv);
        return -1;
    }
    r->open[slot] = 1;
    /* Not every protocol has both buffers (push0 has no receive side,
     * pull0 no send side, req0/rep0 none before nng 1.6): NNG_ENOTSUP is
     * fine, anything else is a failure. */
    const char *opts[] = {NNG_OPT_SENDBUF, NNG_OPT_RECVBUF};
    for (int i = 0; i < 2; i++) {
        rv = nng_socket_set_int(r->sock[slot], opts[i], NNG_BENCH_BUF);
        if (rv != 0 && rv != NNG_ENOTSUP) {
            run_fail(r, "nng_socket_set_int(buffer)", rv);
            return -1;
        }
    }
    rv = nng_socket_set_size(r->sock[slot], NNG_OPT_RECVMAXSZ, 0);
    if (rv != 0 && rv != NNG_ENOTSUP) {
        run_fail(r, "nng_socket_set_size(RECVMAXSZ)", rv);
        return -1;
    }
    return 0;
}

/* Listens on a fresh endpoint with sock[1]; the dialable address (tcp: the
 * port the system gave) goes to r->endpoint. */
static int listen_any(nng_run_t *r)
{
    char ep[256];
    bench_endpoint(r->c->transport, "0", ep, sizeof ep);
    nng_listener l;
    int rv = nng_listen(r->sock[1], ep, &l, 0);
    if (rv != 0) {
        run_fail(r, "nng_listen", rv);
        return -1;
    }
    if (r->c->transport != BENCH_TCP) {
        snprintf(r->endpoint, sizeof r->endpoint, "%s", ep);
        return 0;
    }
    nng_sockaddr sa;
    rv = nng_listener_get_addr(l, NNG_OPT_LOCADDR, &sa);
    if (rv != 0 || sa.s_family != NNG_AF_INET) {
        run_fail(r, "nng_listener_get_addr", rv != 0 ? rv : NNG_EINVAL);
        return -1;
    }
    snprintf(r->endpoint, sizeof r->endpoint, "tcp://127.0.0.1:%u",
             (unsigned)ntohs(sa.s_in.sa_port));
    return 0;
}

static int dial(nng_run_t *r)
{
    int rv = nng_dial(r->sock[0], r->endpoint, NULL, 0);
    if (rv != 0) {
        run_fail(r, "nng_dial", rv);
        return -1;
    }
    return 0;
}

/* Opens the two sockets of a run, listens with [1] and dials with [0]. The
 * caller has zeroed *r and set its result pointer. */
static int run_open(nng_run_t *r, const bench_case_t *c, open_fn sender, open_fn receiver)
{
    r->c = c;
    if (new_socket(r, 1, receiver) != 0 || new_socket(r, 0, sender) != 0 || listen_any(r) != 0 ||
        dial(r) != 0)
        return -1;
    return 0;
}

static void run_close(nng_run_t *r)
{
    bench_phase("teardown");
    for (int i = 0; i < 2; i++) {
        if (r->open[i])
            nng_close(r->sock[i]);
    }
    bench_endpoint_cleanup(r->endpoint);
}

static void print_settings(nng_run_t *r, const char *mode, const char *protocols)
{
    printf("SETTINGS,nng,%s,%s,%s,%s sndbuf=%d msgs rcvbuf=%d msgs recvmaxsz=none "
           "threads=nng's shared task pool\n",
           mode, bench_pattern_name(r->c->pattern), bench_transport_name(r->c->transport),
           protocols, NNG_BENCH_BUF, NNG_BENCH_BUF);
}

/* One measurement: its phase name (also the SETTINGS mode), the protocols
 * of dealer_router (pair is pair1 both ways) and the two workers, the first
 * on sock[0], the second on sock[1]. */
typedef struct nng_mode {
    const char *name;
    open_fn sender;
    open_fn receiver;
    const char *protocols;
    bench_thread_fn worker0;
    bench_thread_fn worker1;
} nng_mode_t;

/* The shape of nng_throughput and nng_latency: opens the sockets the
 * pattern needs, prints SETTINGS when asked, runs the two workers and
 * closes. r is zeroed with its result pointer set; the result fields are
 * valid when this returns 0, -1 after an ERROR line. Blocks until both
 * workers end. */
static int run_measure(nng_run_t *r, const bench_case_t *c, const nng_mode_t *m)
{
    bench_phase("setup");
    if (!nng_supports(c->pattern)) {
        bench_error(c, "the pattern has no nng equivalent");
        return -1;
    }
    int pair = c->pattern == BENCH_PAIR;
    int ok = run_open(r, c, pair ? nng_pair1_open : m->sender, pair ? nng_pair1_open : m->receiver);
    if (ok == 0 && c->print_settings)
        print_settings(r, m->name, pair ? "pair1" : m->protocols);
    if (ok == 0) {
        bench_phase(m->name);
        if (bench_run_threads(m->worker0, r, m->worker1, r) != 0)
            run_fail(r, "pthread_create", NNG_ENOMEM);
    }
    ok = atomic_load(&r->failed) ? -1 : 0;
    run_close(r);
    return ok;
}

/* ------------------------------------------------------------- primitives */

/* Sends one message of size bytes copied from payload. 0 or -1. */
static int send_payload(nng_run_t *r, nng_socket s, const unsigned char *payload, size_t size)
{
    nng_msg *m;
    int rv = nng_msg_alloc(&m, size);
    if (rv != 0) {
        worker_fail(r, "nng_msg_alloc", rv);
        return -1;
    }
    if (size)
        memcpy(nng_msg_body(m), payload, size);
    rv = nng_sendmsg(s, m, 0);
    if (rv != 0) {
        nng_msg_free(m);
        /* A dial in progress: the first sends may wait for the pipe; nng
         * blocks for that, it does not fail. Anything here is an error. */
        worker_fail(r, "nng_sendmsg", rv);
        return -1;
    }
    return 0;
}

/* Receives one message of the expected size into *out. 0 or -1. */
static int recv_sized(nng_run_t *r, nng_socket s, size_t size, nng_msg **out)
{
    int rv = nng_recvmsg(s, out, 0);
    if (rv != 0) {
        worker_fail(r, "nng_recvmsg", rv);
        return -1;
    }
    if (nng_msg_len(*out) != size) {
        char what[96];
        snprintf(what, sizeof what, "received %zu bytes; expected %zu", nng_msg_len(*out), size);
        nng_msg_free(*out);
        worker_fail(r, what, NNG_EPROTO);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- throughput */

static void *thr_sender(void *arg)
{
    nng_run_t *r = arg;
    const bench_case_t *c = r->c;
    for (uint64_t i = 0; i < c->count; i++) {
        if (send_payload(r, r->sock[0], c->payload, c->size) != 0)
            return NULL;
        bench_progress_set(0, i + 1);
    }
    return NULL;
}

static void *thr_receiver(void *arg)
{
    nng_run_t *r = arg;
    const bench_case_t *c = r->c;
    uint64_t first = 0, last = 0;
    for (uint64_t got = 0; got < c->count; got++) {
        nng_msg *m;
        if (recv_sized(r, r->sock[1], c->size, &m) != 0)
            return NULL;
        nng_msg_free(m);
        last = bench_now_ns();
        if (got == 0)
            first = last;
        bench_progress_set(1, got + 1);
    }
    r->msgs_per_s = (double)(c->count - 1) * 1e9 / (double)(last - first);
    return NULL;
}

static int nng_throughput(const bench_case_t *c, double *msgs_per_s)
{
    static const nng_mode_t mode = {
        "throughput", nng_push0_open, nng_pull0_open, "push0->pull0", thr_sender, thr_receiver,
    };
    nng_run_t run = {0};
    int ok = run_measure(&run, c, &mode);
    if (ok == 0)
        *msgs_per_s = run.msgs_per_s;
    return ok;
}

/* ---------------------------------------------------------------- latency */

/* Client: sends a request, waits for its echo, records the round trip. */
static void *lat_client(void *arg)
{
    nng_run_t *r = arg;
    const bench_case_t *c = r->c;
    uint64_t total = (uint64_t)c->rtt_warmup + c->rtt_count;
    for (uint64_t i = 0; i < total; i++) {
        uint64_t t0 = bench_now_ns();
        if (send_payload(r, r->sock[0], c->payload, c->size) != 0)
            return NULL;
        nng_msg *m;
        if (recv_sized(r, r->sock[0], c->size, &m) != 0)
            return NULL;
        uint64_t t1 = bench_now_ns();
        nng_msg_free(m);
        if (i >= c->rtt_warmup)
            r->rtt_us[i - c->rtt_warmup] = (double)(t1 - t0) / 1000.0;
        bench_progress_set(0, i + 1);
    }
    return NULL;
}

/* Server: echoes every message back, the received message itself (no
 * copy), rtt_warmup + rtt_count times. */
static void *lat_server(void *arg)
{
    nng_run_t *r = arg;
    const bench_case_t *c = r->c;
    uint64_t total = (uint64_t)c->rtt_warmup + c->rtt_count;
    for (uint64_t n = 0; n < total; n++) {
        nng_msg *m;
        if (recv_sized(r, r->sock[1], c->size, &m) != 0)
            return NULL;
        int rv = nng_sendmsg(r->sock[1], m, 0);
        if (rv != 0) {
            nng_msg_free(m);
            worker_fail(r, "nng_sendmsg(echo)", rv);
            return NULL;
        }
        bench_progress_set(1, n + 1);
    }
    return NULL;
}

static int nng_latency(const bench_case_t *c, double *rtt_us)
{
    static const nng_mode_t mode = {
        "latency", nng_req0_open, nng_rep0_open, "req0->rep0", lat_client, lat_server,
    };
    nng_run_t run = {.rtt_us = rtt_us};
    return run_measure(&run, c, &mode);
}

static void nng_version_string(char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", nng_version());
}

const bench_lib_t bench_lib_nng = {
    .name = "nng",
    .version = nng_version_string,
    .supports = nng_supports,
    .throughput = nng_throughput,
    .latency = nng_latency,
};
