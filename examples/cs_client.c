/*
 * cs_client — one ClientServer client of the demo (one process).
 *
 * A Host with a ClientServer client channel "svc" connected to the
 * service's endpoint. It runs these steps in order and prints one line
 * each:
 *   1. COUNT echo requests with 1 call in flight, then with 64, through
 *      zlink_call_start and completion callbacks: calls/s, p50 / p99 latency
 *   2. COUNT one-way "note" sends, 256 in flight: msgs/s (a one-way
 *      completes when its send is accepted; the service counts them)
 *   3. a "slow" request with a 100 ms timeout (the service answers after
 *      400 ms): DeadlineExceeded, through the synchronous zlink_call_wait
 *   4. a "slow" request cancelled with zlink_call_cancel: cancelled
 *   5. a request for a packet with no handler: NotFound, remote code 102
 *   6. a request whose handler fails: InternalFailure
 *   7. a "slow" request with a long timeout: OK; its late reply left the
 *      service after the cancelled call's, so that one has been seen and
 *      ignored, and the cancelled call still completed exactly once
 * Each step checks what it saw; the exit status is 1 if any check failed.
 *
 * Threads: main drives the steps and waits; completion callbacks run on
 * the runtime's completion lane and start the next call of a step from
 * there. A step's counters are guarded by its driver's lock.
 *
 * Usage: cs_client --endpoint EP [--name client-1] [--count 20000]
 */
#include "demo_util.h"

#include <stdatomic.h>

#define ECHO_SIZE 16
static const char ECHO_PAYLOAD[ECHO_SIZE] = "0123456789abcdef";

static const char *name = "client";
static int failures;

/* Prints a failed check on stdout with the other lines, and counts it. */
static void check(int ok, const char *what, int result)
{
    if (!ok) {
        printf("%s: FAILED: %s (got %s)\n", name, what, demo_outcome_name(result));
        failures++;
    }
}

/* ------------------------------------------------------------- the driver
 *
 * Keeps `window` calls of one kind in flight until `total` have completed.
 * Each slot holds one call at a time; its callback records the latency,
 * then starts the slot's next call. All counters are guarded by lk; the
 * main thread waits on cv for done == total.
 */
typedef struct driver driver_t;

typedef struct slot {
    driver_t *d;
    int64_t t0;
} slot_t;

struct driver {
    zlink_host_t *host;
    int request; /* 1 request "echo", 0 one-way "note" */
    long total, started, done, bad;
    int first_bad;  /* the result of the first bad completion */
    int64_t *lat;   /* done entries, ns */
    pthread_mutex_t lk;
    pthread_cond_t cv;
};

static void on_driver_done(zlink_call_t *call, const zlink_outcome_t *o, void *user);

/* Builds and starts the slot's next call. Called by main (the first window)
 * and by on_driver_done, without d->lk. A call that is not accepted counts
 * as done and bad at once (its callback never runs). */
static void driver_start(slot_t *s)
{
    driver_t *d = s->d;
    for (;;) {
        zlink_fw_result_t rc;
        zlink_call_t *c = d->request ? zlink_call_request_to_channel(d->host, "svc", &rc)
                                     : zlink_call_send_to_channel(d->host, "svc", &rc);
        if (c != NULL) {
            rc = zlink_call_set_payload(c, d->request ? "echo" : "note", "", ECHO_PAYLOAD,
                                        ECHO_SIZE);
            s->t0 = demo_now_ns();
            if (rc == ZLINK_FW_OK)
                rc = zlink_call_start(c, on_driver_done, s);
            if (rc == ZLINK_FW_OK)
                return; /* the callback owns the slot now */
            zlink_call_release(c);
        }
        /* Not accepted: count it, and let this slot go on with the next. */
        pthread_mutex_lock(&d->lk);
        if (d->bad++ == 0)
            d->first_bad = rc;
        d->done++;
        int again = d->started < d->total;
        if (again)
            d->started++;
        if (d->done == d->total)
            pthread_cond_signal(&d->cv);
        pthread_mutex_unlock(&d->lk);
        if (!again)
            return;
    }
}

static void on_driver_done(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    slot_t *s = user;
    driver_t *d = s->d;
    int64_t took = demo_now_ns() - s->t0;
    int ok = o->result == ZLINK_FW_OK;
    if (ok && d->request)
        ok = o->payload_size == ECHO_SIZE && memcmp(o->payload, ECHO_PAYLOAD, ECHO_SIZE) == 0;
    int result = o->result;
    zlink_call_release(call);

    pthread_mutex_lock(&d->lk);
    if (!ok && d->bad++ == 0)
        d->first_bad = result;
    d->lat[d->done++] = took;
    int again = d->started < d->total;
    if (again)
        d->started++;
    if (d->done == d->total)
        pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->lk);
    if (again)
        driver_start(s);
}

/* Runs one step: total calls, window in flight. Blocks main until all have
 * completed (bounded by 120 s: a hang is reported, not waited out).
 * Returns the seconds it took; *d holds the counts and latencies. */
static double driver_run(driver_t *d, zlink_host_t *host, int request, long total, int window)
{
    memset(d, 0, sizeof *d);
    d->host = host;
    d->request = request;
    d->total = total;
    d->lat = calloc((size_t)total, sizeof d->lat[0]);
    slot_t *slots = calloc((size_t)window, sizeof slots[0]);
    if (d->lat == NULL || slots == NULL) {
        fprintf(stderr, "%s: out of memory\n", name);
        exit(1);
    }
    pthread_mutex_init(&d->lk, NULL);
    demo_cond_init(&d->cv);

    int64_t t0 = demo_now_ns();
    int first = window < total ? window : (int)total;
    pthread_mutex_lock(&d->lk);
    d->started = first;
    pthread_mutex_unlock(&d->lk);
    for (int i = 0; i < first; i++) {
        slots[i].d = d;
        driver_start(&slots[i]);
    }
    struct timespec ts = demo_deadline(120000);
    int timed_out = 0;
    pthread_mutex_lock(&d->lk);
    while (d->done < d->total && !timed_out)
        timed_out = pthread_cond_timedwait(&d->cv, &d->lk, &ts) == ETIMEDOUT;
    long done = d->done;
    pthread_mutex_unlock(&d->lk);
    double secs = (double)(demo_now_ns() - t0) / 1e9;
    if (timed_out) {
        /* Calls are still running and point into slots: leave them. */
        printf("%s: FAILED: only %ld of %ld calls completed in 120 s\n", name, done, total);
        fflush(stdout);
        _exit(1);
    }
    free(slots);
    pthread_mutex_destroy(&d->lk);
    pthread_cond_destroy(&d->cv);
    return secs;
}

static void requests_step(zlink_host_t *host, long count, int window)
{
    driver_t d;
    double secs = driver_run(&d, host, 1, count, window);
    int64_t p50 = demo_quantile(d.lat, (size_t)d.done, 0.50);
    int64_t p99 = demo_quantile(d.lat, (size_t)d.done, 0.99);
    printf("%s: requests, %2d in flight: %7ld calls, %8.0f calls/s, latency p50 %6.1f us, "
           "p99 %6.1f us\n",
           name, window, d.done, (double)d.done / secs, (double)p50 / 1e3, (double)p99 / 1e3);
    check(d.bad == 0, "every echo request answered with its payload", d.first_bad);
    free(d.lat);
}

static void sends_step(zlink_host_t *host, long count)
{
    driver_t d;
    double secs = driver_run(&d, host, 0, count, 256);
    printf("%s: one-way sends:        %7ld msgs,  %8.0f msgs/s (each completes when its send "
           "is accepted)\n",
           name, d.done, (double)d.done / secs);
    check(d.bad == 0, "every one-way send accepted", d.first_bad);
    free(d.lat);
}

/* A request to packet with payload text, not finished yet. */
static zlink_call_t *request(zlink_host_t *host, const char *packet, const char *text)
{
    zlink_fw_result_t rc;
    zlink_call_t *c = zlink_call_request_to_channel(host, "svc", &rc);
    if (c == NULL)
        demo_die(name, "zlink_call_request_to_channel", rc);
    if ((rc = zlink_call_set_payload(c, packet, "", text, strlen(text))) != ZLINK_FW_OK)
        demo_die(name, "zlink_call_set_payload", rc);
    return c;
}

/* A one-shot latch for a single started call. */
typedef struct latch {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int completions;
    int result;
} latch_t;

static void on_latch(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call; /* main releases it */
    latch_t *l = user;
    pthread_mutex_lock(&l->lk);
    l->completions++;
    l->result = o->result;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->lk);
}

/* Waits up to ms for the first completion; returns the count seen and
 * sets *result to the outcome's result. */
static int latch_wait(latch_t *l, int ms, int *result)
{
    struct timespec ts = demo_deadline(ms);
    pthread_mutex_lock(&l->lk);
    while (l->completions == 0)
        if (pthread_cond_timedwait(&l->cv, &l->lk, &ts) == ETIMEDOUT)
            break;
    int n = l->completions;
    *result = l->result;
    pthread_mutex_unlock(&l->lk);
    return n;
}

int main(int argc, char **argv)
{
    const char *endpoint = NULL;
    long count = 20000;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--endpoint") == 0)
            endpoint = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--name") == 0)
            name = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--count") == 0)
            count = atol(argv[++i]);
        else
            endpoint = NULL, i = argc;
    }
    if (endpoint == NULL || count < 1) {
        fprintf(stderr, "usage: cs_client --endpoint EP [--name NAME] [--count N >= 1]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    zlink_fw_result_t rc;
    zlink_host_t *host = zlink_host_new(name, &rc);
    if (host == NULL)
        demo_die(name, "zlink_host_new", rc);
    if ((rc = zlink_host_add_cs_client(host, "svc", endpoint)) != ZLINK_FW_OK)
        demo_die(name, "zlink_host_add_cs_client", rc);
    /* A bulk sender lets its one-ways wait for room longer than the 1 s
     * default: a busy service pauses its clients (seed 001) until its job
     * queue drains, and a wait past the send timeout is DeadlineExceeded. */
    if ((rc = zlink_channel_set_option(host, "svc", ZLINK_NODE_OPT_SEND_TIMEOUT,
                                       ZLINK_MS(30000))) != ZLINK_FW_OK)
        demo_die(name, "zlink_channel_set_option", rc);
    if ((rc = zlink_host_start(host)) != ZLINK_FW_OK)
        demo_die(name, "zlink_host_start", rc);

    /* The first request also waits for the connection. */
    zlink_call_t *c = request(host, "echo", "hello");
    zlink_outcome_t o = demo_outcome();
    rc = zlink_call_wait(c, &o);
    printf("%s: connected to %s; first echo request -> %s \"%.*s\"\n", name, endpoint,
           demo_outcome_name(rc), (int)o.payload_size, o.payload ? (const char *)o.payload : "");
    check(rc == ZLINK_FW_OK, "the first request is answered", rc);
    zlink_call_release(c);

    requests_step(host, count, 1);
    requests_step(host, count, 64);
    sends_step(host, count);

    /* A request that hits its timeout: the service answers after 400 ms. */
    c = request(host, "slow", "late");
    zlink_call_set_timeout(c, ZLINK_MS(100));
    int64_t t0 = demo_now_ns();
    o = demo_outcome();
    rc = zlink_call_wait(c, &o);
    printf("%s: request \"slow\", 100 ms timeout -> %s after %.0f ms (the service answers "
           "late)\n",
           name, demo_outcome_name(rc), (double)(demo_now_ns() - t0) / 1e6);
    check(rc == ZLINK_FW_DEADLINE_EXCEEDED, "the slow request ends DeadlineExceeded", rc);
    zlink_call_release(c);

    /* A cancelled call: it is pending (the reply comes 400 ms later) when
     * cancel runs, so cancel wins; its callback runs once, later. */
    latch_t cancelled;
    memset(&cancelled, 0, sizeof cancelled);
    pthread_mutex_init(&cancelled.lk, NULL);
    demo_cond_init(&cancelled.cv);
    zlink_call_t *to_cancel = request(host, "slow", "to-cancel");
    zlink_call_set_timeout(to_cancel, ZLINK_MS(5000));
    rc = zlink_call_start(to_cancel, on_latch, &cancelled);
    check(rc == ZLINK_FW_OK, "the call to cancel is accepted", rc);
    rc = zlink_call_cancel(to_cancel);
    check(rc == ZLINK_FW_OK, "zlink_call_cancel", rc);
    rc = zlink_call_cancel(to_cancel);
    check(rc == ZLINK_FW_OK, "a second cancel is harmless", rc);
    int cancel_result = -1;
    int seen = latch_wait(&cancelled, 5000, &cancel_result);
    printf("%s: request \"slow\" cancelled -> %s (%s)\n", name,
           seen ? demo_outcome_name(cancel_result) : "no completion",
           seen ? zlink_result_name(cancel_result) : "-");
    check(seen == 1 && cancel_result == ZLINK_FW_CANCELLED, "the cancelled call ends cancelled",
          cancel_result);

    /* A packet the service has no handler for. */
    c = request(host, "missing", "x");
    o = demo_outcome();
    rc = zlink_call_wait(c, &o);
    printf("%s: request \"missing\" (no handler) -> %s, remote code %u: \"%s\"\n", name,
           demo_outcome_name(rc), (unsigned)o.remote_code, o.message);
    check(rc == ZLINK_FW_NOT_FOUND && o.remote_code == 102, "no handler is NotFound / 102", rc);
    zlink_call_release(c);

    /* A handler that fails. */
    c = request(host, "fail", "x");
    o = demo_outcome();
    rc = zlink_call_wait(c, &o);
    printf("%s: request \"fail\" (the handler fails) -> %s, remote code %u: \"%s\"\n", name,
           demo_outcome_name(rc), (unsigned)o.remote_code, o.message);
    check(rc == ZLINK_FW_INTERNAL_FAILURE, "a failing handler is InternalFailure", rc);
    zlink_call_release(c);

    /* Late replies leave the service in order: once this one is back, the
     * cancelled call's reply has come and gone too. */
    c = request(host, "slow", "patient");
    zlink_call_set_timeout(c, ZLINK_MS(10000));
    t0 = demo_now_ns();
    o = demo_outcome();
    rc = zlink_call_wait(c, &o);
    pthread_mutex_lock(&cancelled.lk);
    seen = cancelled.completions;
    pthread_mutex_unlock(&cancelled.lk);
    printf("%s: request \"slow\", 10 s timeout -> %s after %.0f ms; the cancelled call "
           "completed %d time(s)\n",
           name, demo_outcome_name(rc), (double)(demo_now_ns() - t0) / 1e6, seen);
    check(rc == ZLINK_FW_OK, "a patient slow request is answered", rc);
    check(seen == 1, "the cancelled call completed exactly once", rc);
    zlink_call_release(c);
    zlink_call_release(to_cancel); /* its callback has run: freed now */

    int64_t timeouts = -1;
    zlink_host_metric(host, "zlink.mesh_node.request.timeouts", "", &timeouts);
    rc = zlink_host_shutdown(host, ZLINK_MS(5000));
    check(rc == ZLINK_FW_OK, "zlink_host_shutdown", rc);
    zlink_host_destroy(host);
    printf("%s: host counted %lld request timeout(s); shut down: %s; %s\n", name,
           (long long)timeouts, demo_outcome_name(rc),
           failures == 0 ? "all checks passed" : "SOME CHECKS FAILED");
    return failures == 0 ? 0 : 1;
}
