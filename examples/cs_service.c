/*
 * cs_service — the ClientServer service of the demo (one process).
 *
 * A Host with one ClientServer server channel, "svc", on a tcp endpoint
 * (port 0 by default: the OS picks one). It prints "LISTENING <endpoint>"
 * as its first line, serves until stdin reaches end of file or SIGTERM /
 * SIGINT arrives, shuts the host down and prints what it handled.
 *
 * Packets of channel "svc":
 *   request "echo"  answered with its own payload
 *   send    "note"  one-way; counted
 *   request "slow"  answered late: the handler takes its reply call, ends
 *                   its turn at once (the channel's gate opens again), and
 *                   the late-reply thread starts that reply --late-ms later
 *   request "fail"  the handler fails: the caller sees InternalFailure
 *   anything else   no handler: the runtime answers NotFound
 *
 * Threads: main (set-up, the stop wait, shutdown), the late-reply thread,
 * and the runtime's own (handlers run on its handler threads, completion
 * callbacks on its completion lane). Counters are atomics; the late-reply
 * queue is guarded by late.lk.
 *
 * Usage: cs_service [--endpoint tcp://127.0.0.1:0] [--late-ms 400]
 *                   [--expect-notes N]
 * With --expect-notes, the exit status is 1 unless exactly N notes were
 * handled: a one-way send that completed OK at the client must not be lost.
 */
#include "demo_util.h"

#include <stdatomic.h>

static const char *const PROG = "service";

/* ------------------------------------------------------------ late replies
 *
 * A queue of reply calls that the "slow" handler took from its turns, in
 * due order. The handler (a runtime handler thread) appends; the late-reply
 * thread waits until the head is due, then sets the payload and starts the
 * call. Each entry owns its reply call reference and its payload copy until
 * the late-reply thread has started (and released) the call.
 */
typedef struct late_reply {
    struct late_reply *next;
    zlink_call_t *reply;
    int64_t due_ns;
    size_t size;
    char payload[64];
} late_reply_t;

static struct {
    pthread_mutex_t lk;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    late_reply_t *head;
    int stopping;
    int64_t delay_ns;
} late;

static struct {
    atomic_long echo, notes, slow, failing, late_started, late_accepted, late_refused;
} stats;

/* Completion of a late reply (the runtime's completion lane): it completes
 * when the Core accepted the reply for sending. */
static void on_late_reply_sent(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    (void)call;
    (void)user;
    if (o->result == ZLINK_FW_OK)
        atomic_fetch_add(&stats.late_accepted, 1);
    else
        atomic_fetch_add(&stats.late_refused, 1);
}

/* Starts one late reply and frees its entry. Called by the late-reply
 * thread without late.lk held. */
static void late_reply_send(late_reply_t *e)
{
    int rc = zlink_call_set_payload(e->reply, "slow", "", e->payload, e->size);
    if (rc == ZLINK_FW_OK)
        rc = zlink_call_start(e->reply, on_late_reply_sent, NULL);
    if (rc == ZLINK_FW_OK)
        atomic_fetch_add(&stats.late_started, 1);
    else
        atomic_fetch_add(&stats.late_refused, 1);
    zlink_call_release(e->reply); /* a started call still completes */
    free(e);
}

/* The late-reply thread: sends each reply when it is due; once stopping is
 * set, sends what is left at once and returns. */
static void *late_reply_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&late.lk);
    for (;;) {
        late_reply_t *e = late.head;
        if (e == NULL) {
            if (late.stopping)
                break;
            pthread_cond_wait(&late.cv, &late.lk);
            continue;
        }
        if (!late.stopping && demo_now_ns() < e->due_ns) {
            struct timespec ts = {(time_t)(e->due_ns / 1000000000),
                                  (long)(e->due_ns % 1000000000)};
            pthread_cond_timedwait(&late.cv, &late.lk, &ts);
            continue;
        }
        late.head = e->next;
        pthread_mutex_unlock(&late.lk);
        late_reply_send(e);
        pthread_mutex_lock(&late.lk);
    }
    pthread_mutex_unlock(&late.lk);
    return NULL;
}

/* ---------------------------------------------------------------- handlers
 * Each runs on a runtime handler thread, one turn at a time for channel
 * "svc" (its handlers share one gate), and ends its turn before returning.
 */

static void on_echo(zlink_turn_t *turn, void *user)
{
    (void)user;
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    zlink_fw_result_t rc;
    zlink_call_t *reply = zlink_turn_reply(turn, &rc);
    if (reply != NULL) {
        /* The payload is copied into the call: the turn may end after. */
        if (zlink_call_set_payload(reply, "echo", "", p, n) == ZLINK_FW_OK)
            zlink_call_start(reply, NULL, NULL);
        zlink_call_release(reply);
    }
    atomic_fetch_add(&stats.echo, 1);
    zlink_turn_end(turn, 0, NULL); /* without a reply the runtime answers InternalFailure */
}

static void on_note(zlink_turn_t *turn, void *user)
{
    (void)user;
    atomic_fetch_add(&stats.notes, 1);
    zlink_turn_end(turn, 0, NULL);
}

static void on_slow(zlink_turn_t *turn, void *user)
{
    (void)user;
    atomic_fetch_add(&stats.slow, 1);
    late_reply_t *e = calloc(1, sizeof *e);
    zlink_fw_result_t rc = ZLINK_FW_OK;
    if (e != NULL)
        e->reply = zlink_turn_reply(turn, &rc);
    if (e == NULL || e->reply == NULL) {
        free(e);
        zlink_turn_end(turn, 1, "the service could not keep the reply");
        return;
    }
    size_t n = 0;
    const void *p = zlink_turn_payload(turn, &n);
    e->size = n < sizeof e->payload ? n : sizeof e->payload;
    if (e->size > 0)
        memcpy(e->payload, p, e->size);
    /* The reply call outlives the turn: end the turn now, answer later. */
    zlink_turn_end(turn, 0, NULL);

    pthread_mutex_lock(&late.lk);
    e->due_ns = demo_now_ns() + late.delay_ns;
    late_reply_t **at = &late.head;
    while (*at != NULL && (*at)->due_ns <= e->due_ns)
        at = &(*at)->next;
    e->next = *at;
    *at = e;
    pthread_cond_signal(&late.cv);
    pthread_mutex_unlock(&late.lk);
}

static void on_fail(zlink_turn_t *turn, void *user)
{
    (void)user;
    atomic_fetch_add(&stats.failing, 1);
    zlink_turn_end(turn, 1, "the fail handler gave up on purpose");
}

int main(int argc, char **argv)
{
    const char *endpoint = "tcp://127.0.0.1:0";
    long late_ms = 400, expect_notes = -1;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--endpoint") == 0)
            endpoint = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--late-ms") == 0)
            late_ms = atol(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--expect-notes") == 0)
            expect_notes = atol(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: cs_service [--endpoint EP] [--late-ms MS] [--expect-notes N]\n");
            return 2;
        }
    }
    if (late_ms < 1) {
        fprintf(stderr, "%s: --late-ms must be at least 1\n", PROG);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int sigfd = demo_block_stop_signals();
    if (sigfd < 0) {
        perror("service: signalfd");
        return 1;
    }

    demo_cond_init(&late.cv);
    pthread_mutex_init(&late.lk, NULL);
    late.delay_ns = ZLINK_MS(late_ms);
    pthread_t late_thread;
    if (pthread_create(&late_thread, NULL, late_reply_main, NULL) != 0) {
        fprintf(stderr, "%s: cannot start the late-reply thread\n", PROG);
        return 1;
    }

    zlink_fw_result_t rc;
    zlink_host_t *host = zlink_host_new("service", &rc);
    if (host == NULL)
        demo_die(PROG, "zlink_host_new", rc);
    if ((rc = zlink_host_add_cs_server(host, "svc", endpoint)) != ZLINK_FW_OK)
        demo_die(PROG, "zlink_host_add_cs_server", rc);
    static const struct {
        zlink_message_kind_t kind;
        const char *packet;
        zlink_handler_fn fn;
    } handlers[] = {
        {ZLINK_MESSAGE_REQUEST, "echo", on_echo},
        {ZLINK_MESSAGE_SEND, "note", on_note},
        {ZLINK_MESSAGE_REQUEST, "slow", on_slow},
        {ZLINK_MESSAGE_REQUEST, "fail", on_fail},
    };
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++) {
        rc = zlink_host_add_handler(host, ZLINK_OWNER_CHANNEL, "svc", handlers[i].kind,
                                    handlers[i].packet, handlers[i].fn, NULL);
        if (rc != ZLINK_FW_OK)
            demo_die(PROG, "zlink_host_add_handler", rc);
    }
    if ((rc = zlink_host_start(host)) != ZLINK_FW_OK)
        demo_die(PROG, "zlink_host_start", rc);
    char bound[256];
    if ((rc = zlink_host_endpoint(host, "svc", bound, sizeof bound)) != ZLINK_FW_OK)
        demo_die(PROG, "zlink_host_endpoint", rc);
    printf("LISTENING %s\n", bound);

    const char *why = demo_wait_for_stop(sigfd);

    /* Late replies first (they need the host serving), then the host. */
    pthread_mutex_lock(&late.lk);
    late.stopping = 1;
    pthread_cond_signal(&late.cv);
    pthread_mutex_unlock(&late.lk);
    pthread_join(late_thread, NULL);
    int status = 0;
    rc = zlink_host_shutdown(host, ZLINK_MS(5000));
    if (rc != ZLINK_FW_OK) {
        printf("%s: FAILED: zlink_host_shutdown: %s\n", PROG, zlink_result_name(rc));
        status = 1;
    }
    /* A "slow" request that came in after the thread stopped was never
     * answered; drop its reply call (the host is stopped, nothing runs). */
    for (late_reply_t *e = late.head, *next; e != NULL; e = next) {
        next = e->next;
        zlink_call_release(e->reply);
        atomic_fetch_add(&stats.late_refused, 1);
        free(e);
    }
    late.head = NULL;
    zlink_host_destroy(host);
    close(sigfd);

    long notes = atomic_load(&stats.notes);
    printf("%s: stopped (%s); host shut down: %s\n", PROG, why, demo_outcome_name(rc));
    printf("%s: handled %ld echo requests, %ld one-way notes, %ld slow requests, "
           "%ld failing requests\n",
           PROG, atomic_load(&stats.echo), notes, atomic_load(&stats.slow),
           atomic_load(&stats.failing));
    printf("%s: late replies started by the service thread: %ld (accepted for sending: %ld, "
           "refused: %ld)\n",
           PROG, atomic_load(&stats.late_started), atomic_load(&stats.late_accepted),
           atomic_load(&stats.late_refused));
    if (expect_notes >= 0) {
        if (notes == expect_notes) {
            printf("%s: one-way notes: %ld handled of %ld sent - none lost\n", PROG, notes,
                   expect_notes);
        } else {
            printf("%s: FAILED: one-way notes: %ld handled, %ld sent\n", PROG, notes,
                   expect_notes);
            status = 1;
        }
    }
    pthread_mutex_destroy(&late.lk);
    pthread_cond_destroy(&late.cv);
    return status;
}
