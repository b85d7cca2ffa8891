/*
 * test_fw_handoff.c — handoff handlers (zlink_host_add_handler_ex with
 * ZLINK_HANDLER_HANDOFF, ZLINK_1.4): the handler function is a binding's
 * trampoline that queues the turn for an executor thread of the test's own
 * (as a binding's event loop or pump would). When that executor ends a turn
 * and the gate has another one waiting, the next turn is handed to the
 * trampoline on the executor's thread, not on a host thread. Turns of one
 * gate still never overlap, keep their order and reach the trampoline once
 * each. Public API only.
 */
#include "fwtest.h"

#include <stdint.h>
#include <stdlib.h>

#define N_REQ 64

/* The test's executor: a FIFO of open turns and the thread that ends them. */
typedef struct exec {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    zlink_turn_t *q[N_REQ];
    int head, tail;
    int stop;
    int hold_first;           /* wait for the rest to queue before the first end */
    int fail_odd;             /* the trampoline ends odd turns itself, failed */
    int use_end;              /* one-way turns: zlink_turn_end instead of respond */
    zlink_host_t *host;
    pthread_t thread;
    /* what the trampoline saw */
    int calls;
    int on_executor;          /* calls made on the executor's thread */
    int open, max_open;       /* turns handed over and not yet ended */
    uint64_t seq[N_REQ];
} exec_t;

static void trampoline(zlink_turn_t *turn, void *user)
{
    exec_t *x = user;
    uint64_t seq = zlink_turn_sequence(turn);
    pthread_mutex_lock(&x->lk);
    if (x->calls < N_REQ)
        x->seq[x->calls] = seq;
    x->calls++;
    if (pthread_equal(pthread_self(), x->thread))
        x->on_executor++;
    x->open++;
    if (x->open > x->max_open)
        x->max_open = x->open;
    int fail = x->fail_odd && (seq % 2) == 1;
    if (fail) {
        x->open--;
    } else {
        x->q[x->tail++ % N_REQ] = turn;
        pthread_cond_broadcast(&x->cv);
    }
    pthread_mutex_unlock(&x->lk);
    if (fail) /* as a binding whose executor is gone: the turn ends here */
        zlink_turn_end(turn, 1, "executor closed");
}

static uint64_t queued(zlink_host_t *h)
{
    zlink_owner_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    FW_EQ(zlink_host_owner_status(h, ZLINK_OWNER_CHANNEL, "svc", &st), ZLINK_FW_OK);
    return st.queued_records;
}

static void *executor_main(void *arg)
{
    exec_t *x = arg;
    int first = 1;
    pthread_mutex_lock(&x->lk);
    for (;;) {
        while (x->head == x->tail && !x->stop)
            pthread_cond_wait(&x->cv, &x->lk);
        if (x->head == x->tail)
            break;
        zlink_turn_t *t = x->q[x->head++ % N_REQ];
        pthread_mutex_unlock(&x->lk);
        if (first && x->hold_first) {
            /* every other record waits at the gate: from here on each end
             * finds a turn waiting */
            ZT_EVENTUALLY(queued(x->host) == N_REQ - 1, 10000);
        }
        first = 0;
        size_t n = 0;
        const void *p = zlink_turn_payload(t, &n);
        char buf[32];
        memcpy(buf, p, n < sizeof buf ? n : sizeof buf);
        pthread_mutex_lock(&x->lk);
        x->open--; /* before the end: the next turn may open inside it */
        pthread_mutex_unlock(&x->lk);
        if (x->use_end)
            FW_EQ(zlink_turn_end(t, 0, NULL), ZLINK_FW_OK);
        else
            FW_EQ(zlink_turn_respond(t, "echo", "", buf, n < sizeof buf ? n : sizeof buf),
                  ZLINK_FW_OK);
        pthread_mutex_lock(&x->lk);
    }
    pthread_mutex_unlock(&x->lk);
    return NULL;
}

typedef struct env {
    zlink_host_t *server, *client;
    exec_t x;
} env_t;

static void env_open(env_t *e, uint32_t flags, int kind)
{
    memset(e, 0, sizeof *e);
    exec_t *x = &e->x;
    pthread_mutex_init(&x->lk, NULL);
    pthread_cond_init(&x->cv, NULL);
    char ep[256], bound[256];
    fw_endpoint(ep, sizeof ep, "inproc", "handoff");
    zlink_fw_result_t rc;
    e->server = zlink_host_new("server", &rc);
    ZT_CHECK(e->server != NULL);
    x->host = e->server;
    FW_EQ(zlink_host_set_option(e->server, ZLINK_HOST_OPT_MAX_QUEUED_JOBS, 4 * N_REQ),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_cs_server(e->server, "svc", ep), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler_ex(e->server, ZLINK_OWNER_CHANNEL, "svc", kind, "m",
                                    trampoline, x, flags),
          ZLINK_FW_OK);
    ZT_CHECK(pthread_create(&x->thread, NULL, executor_main, x) == 0);
    FW_EQ(zlink_host_start(e->server), ZLINK_FW_OK);
    FW_EQ(zlink_host_endpoint(e->server, "svc", bound, sizeof bound), ZLINK_FW_OK);
    e->client = fw_cs_client("client", bound);
}

static void env_close(env_t *e)
{
    FW_EQ(zlink_host_shutdown(e->client, ZLINK_MS(5000)), ZLINK_FW_OK);
    FW_EQ(zlink_host_shutdown(e->server, ZLINK_MS(5000)), ZLINK_FW_OK);
    pthread_mutex_lock(&e->x.lk);
    e->x.stop = 1;
    pthread_cond_broadcast(&e->x.cv);
    pthread_mutex_unlock(&e->x.lk);
    pthread_join(e->x.thread, NULL);
    FW_EQ(zlink_host_destroy(e->client), ZLINK_FW_OK);
    FW_EQ(zlink_host_destroy(e->server), ZLINK_FW_OK);
}

typedef struct result {
    atomic_int calls;
    atomic_int result;
    char text[32];
} result_t;

static void on_result(zlink_call_t *call, const zlink_outcome_t *o, void *user)
{
    result_t *r = user;
    size_t n = o->payload_size < sizeof r->text - 1 ? o->payload_size : sizeof r->text - 1;
    if (o->payload != NULL)
        memcpy(r->text, o->payload, n);
    r->text[n] = '\0';
    atomic_store(&r->result, o->result);
    atomic_fetch_add(&r->calls, 1);
    zlink_call_release(call);
}

/* N_REQ requests in flight; returns once each completed (exactly once). */
static void run_requests(env_t *e, result_t *res)
{
    for (int i = 0; i < N_REQ; i++) {
        char text[16];
        snprintf(text, sizeof text, "r%d", i);
        zlink_fw_result_t rc;
        zlink_call_t *c = zlink_call_request_to_channel(e->client, "svc", &rc);
        ZT_CHECK(c != NULL);
        FW_EQ(zlink_call_set_payload(c, "m", "", text, strlen(text)), ZLINK_FW_OK);
        FW_EQ(zlink_call_set_timeout(c, ZLINK_MS(30000)), ZLINK_FW_OK);
        FW_EQ(zlink_call_start(c, on_result, &res[i]), ZLINK_FW_OK);
    }
    for (int i = 0; i < N_REQ; i++)
        ZT_EVENTUALLY(atomic_load(&res[i].calls) >= 1, 30000);
    for (int i = 0; i < N_REQ; i++)
        ZT_EQ_INT(atomic_load(&res[i].calls), 1);
}

/* Turns 1..N in order, each handed over once, never two open at once. */
static void check_gate_order(exec_t *x)
{
    pthread_mutex_lock(&x->lk);
    int calls = x->calls, max_open = x->max_open;
    uint64_t seq[N_REQ];
    memcpy(seq, x->seq, sizeof seq);
    pthread_mutex_unlock(&x->lk);
    ZT_EQ_INT(calls, N_REQ);
    ZT_EQ_INT(max_open, 1);
    for (int i = 0; i < N_REQ; i++)
        ZT_EQ_INT(seq[i], i + 1);
}

static int on_executor(exec_t *x)
{
    pthread_mutex_lock(&x->lk);
    int n = x->on_executor;
    pthread_mutex_unlock(&x->lk);
    return n;
}

/* With every other request waiting at the gate when the first turn ends,
 * each later turn reaches the trampoline on the executor's own thread. */
static void next_turn_on_ending_thread(void)
{
    env_t e;
    env_open(&e, ZLINK_HANDLER_HANDOFF, ZLINK_MESSAGE_REQUEST);
    e.x.hold_first = 1;
    result_t res[N_REQ];
    memset(res, 0, sizeof res);
    run_requests(&e, res);
    for (int i = 0; i < N_REQ; i++) {
        char want[16];
        snprintf(want, sizeof want, "r%d", i);
        FW_EQ(atomic_load(&res[i].result), ZLINK_FW_OK);
        ZT_CHECK(strcmp(res[i].text, want) == 0);
    }
    check_gate_order(&e.x);
    /* the first came from a host thread; the N-1 others from the end of
     * the turn before them */
    ZT_EQ_INT(on_executor(&e.x), N_REQ - 1);
    env_close(&e);
}

/* Without the flag the same pattern never calls the handler on the
 * executor's thread: host threads run every handler function. */
static void plain_handler_stays_on_host_threads(void)
{
    env_t e;
    env_open(&e, 0, ZLINK_MESSAGE_REQUEST);
    e.x.hold_first = 1;
    result_t res[N_REQ];
    memset(res, 0, sizeof res);
    run_requests(&e, res);
    for (int i = 0; i < N_REQ; i++)
        FW_EQ(atomic_load(&res[i].result), ZLINK_FW_OK);
    check_gate_order(&e.x);
    ZT_EQ_INT(on_executor(&e.x), 0);
    env_close(&e);
}

/* A trampoline that ends some turns itself (a binding whose executor is
 * closing) while running on the executor's thread: the runtime goes on
 * with the gate's next turn there; the ended ones answer InternalFailure. */
static void trampoline_ending_inline(void)
{
    env_t e;
    env_open(&e, ZLINK_HANDLER_HANDOFF, ZLINK_MESSAGE_REQUEST);
    e.x.fail_odd = 1;
    result_t res[N_REQ];
    memset(res, 0, sizeof res);
    run_requests(&e, res);
    int ok = 0, failed = 0;
    for (int i = 0; i < N_REQ; i++) {
        int r = atomic_load(&res[i].result);
        if (r == ZLINK_FW_OK)
            ok++;
        else if (r == ZLINK_FW_INTERNAL_FAILURE)
            failed++;
    }
    ZT_EQ_INT(ok, N_REQ / 2);
    ZT_EQ_INT(failed, N_REQ / 2);
    pthread_mutex_lock(&e.x.lk);
    ZT_EQ_INT(e.x.calls, N_REQ);
    ZT_EQ_INT(e.x.max_open, 1);
    for (int i = 0; i < N_REQ; i++)
        ZT_EQ_INT(e.x.seq[i], i + 1);
    pthread_mutex_unlock(&e.x.lk);
    env_close(&e);
}

/* One-way records ended with zlink_turn_end hand over the same way. */
static void one_way_end_hands_over(void)
{
    env_t e;
    env_open(&e, ZLINK_HANDLER_HANDOFF, ZLINK_MESSAGE_SEND);
    e.x.hold_first = 1;
    e.x.use_end = 1;
    for (int i = 0; i < N_REQ; i++) {
        char text[16];
        snprintf(text, sizeof text, "s%d", i);
        zlink_call_t *c = fw_call(e.client, 0, text);
        FW_EQ(fw_wait(c, NULL, 0), ZLINK_FW_OK);
        zlink_call_release(c);
    }
    zlink_owner_status_t st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    ZT_EVENTUALLY(zlink_host_owner_status(e.server, ZLINK_OWNER_CHANNEL, "svc", &st) ==
                          ZLINK_FW_OK &&
                      st.handled == N_REQ,
                  30000);
    check_gate_order(&e.x);
    ZT_EQ_INT(on_executor(&e.x), N_REQ - 1);
    env_close(&e);
}

static void bad_arguments(void)
{
    zlink_fw_result_t rc;
    zlink_host_t *h = zlink_host_new("bad", &rc);
    ZT_CHECK(h != NULL);
    FW_EQ(zlink_host_add_cs_server(h, "svc", "inproc://fw-handoff-bad"), ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler_ex(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                    trampoline, NULL, 2),
          ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_host_add_handler_ex(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                    trampoline, NULL, 0x80000000u | ZLINK_HANDLER_HANDOFF),
          ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_host_add_handler_ex(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                    NULL, NULL, ZLINK_HANDLER_HANDOFF),
          ZLINK_FW_INVALID_ARGUMENT);
    FW_EQ(zlink_host_add_handler_ex(NULL, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                    trampoline, NULL, ZLINK_HANDLER_HANDOFF),
          ZLINK_FW_INVALID_HANDLE);
    /* the key is shared with zlink_host_add_handler */
    FW_EQ(zlink_host_add_handler_ex(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                    trampoline, NULL, ZLINK_HANDLER_HANDOFF),
          ZLINK_FW_OK);
    FW_EQ(zlink_host_add_handler(h, ZLINK_OWNER_CHANNEL, "svc", ZLINK_MESSAGE_REQUEST, "m",
                                 trampoline, NULL),
          ZLINK_FW_ALREADY_EXISTS);
    FW_EQ(zlink_host_destroy(h), ZLINK_FW_OK);
}

int main(int argc, char **argv)
{
    static const zt_case_t cases[] = {
        ZT_CASE(next_turn_on_ending_thread),
        ZT_CASE(plain_handler_stays_on_host_threads),
        ZT_CASE(trampoline_ending_inline),
        ZT_CASE(one_way_end_hands_over),
        ZT_CASE(bad_arguments),
    };
    return zt_main(argc, argv, cases, ZT_NCASES(cases));
}
