/*
 * jq08_napi.c — TEST-ONLY Node-API helper of the Node conformance runner's
 * JQ-08 (conformance/node/cases_jq08.js).
 *
 * Why it exists: JQ-08 needs every record of A1..A3 waiting in B's Core
 * queues while B has free permits and stays RUNNING. The C body
 * (conformance/c/jq_raw.c) gets there by holding both of B's host threads
 * (HANDLER_THREADS 1 = two threads) inside two blocking handlers, so no
 * thread is left to receive. A JavaScript handler never holds a C thread
 * (the addon queues the turn to the event loop and returns), so this
 * library registers two blocking C handlers on B through the C ABI, on
 * the host the binding exposes as Host#nativeHandle, before B starts.
 * Each waits at its own gate until the case opens it; the case reads how
 * many threads wait at each gate. The observed rotation is the
 * JavaScript handler's.
 *
 * Only node_api.h: the N-API symbols stay undefined here and resolve from
 * the node executable when process.dlopen() loads this file. It links
 * nothing of ZLink: init() takes the path of the libzlink.so.1 the binding
 * loaded, gets that already loaded copy with RTLD_NOLOAD (never a second
 * copy) and resolves the two functions it calls by name, failing with the
 * missing one.
 *
 * Host#nativeHandle is the zlink_host_t handle value as a BigInt. The C
 * ABI checks handles (a forged or stale one gives INVALID_HANDLE).
 *
 * Threads: the blockers run on B's host threads; the exported functions
 * on the JavaScript thread. Lock: one mutex per gate (a leaf).
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "zlink.h"

#define NGATES 2

typedef struct gate {
    pthread_mutex_t lk;
    pthread_cond_t cv;
    int open;    /* set by open(), cleared by reset() */
    int waiting; /* threads inside the blocker now */
    int passed;  /* blocker turns that ended */
} gate_t;

static gate_t gates[NGATES] = {
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0},
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0},
};

typedef zlink_fw_result_t (*add_handler_fn)(zlink_host_t *, zlink_owner_kind_t, const char *,
                                            zlink_message_kind_t, const char *,
                                            zlink_handler_fn, void *);
typedef zlink_fw_result_t (*turn_end_fn)(zlink_turn_t *, int, const char *);

static add_handler_fn add_handler;
static turn_end_fn turn_end;

/* The blocking handler: waits at its gate, then ends the turn. */
static void on_blocker(zlink_turn_t *turn, void *user)
{
    gate_t *g = user;
    pthread_mutex_lock(&g->lk);
    g->waiting++;
    pthread_cond_broadcast(&g->cv);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->lk);
    g->waiting--;
    g->passed++;
    pthread_mutex_unlock(&g->lk);
    turn_end(turn, 0, NULL);
}

/* ---------------------------------------------------- N-API plumbing */

#define MAX_ARGS 4

/* The call's arguments (missing ones are undefined). */
static int args_of(napi_env env, napi_callback_info info, napi_value *argv, size_t want)
{
    size_t argc = want;
    return napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok ? 0 : -1;
}

static napi_value num(napi_env env, int v)
{
    napi_value r;
    napi_create_int32(env, v, &r);
    return r;
}

static int int_of(napi_env env, napi_value v)
{
    int32_t x = -1;
    if (napi_get_value_int32(env, v, &x) != napi_ok)
        return -1;
    return x;
}

/* A string argument into buf; -1 when it is not a string or too long. */
static int str_of(napi_env env, napi_value v, char *buf, size_t cap)
{
    size_t n = 0;
    if (napi_get_value_string_utf8(env, v, buf, cap, &n) != napi_ok || n + 1 >= cap)
        return -1;
    return 0;
}

static gate_t *gate_arg(napi_env env, napi_value v)
{
    int i = int_of(env, v);
    return i >= 0 && i < NGATES ? &gates[i] : NULL;
}

/* --------------------------------------------------------- exports */

/* init(libPath) -> null, or why the helper cannot work. */
static napi_value js_init(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    char path[4096], why[4600];
    why[0] = 0;
    if (args_of(env, info, argv, 1) != 0 || str_of(env, argv[0], path, sizeof path) != 0) {
        snprintf(why, sizeof why, "jq08 helper: init(libPath) needs a path string");
    } else {
        void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (lib == NULL) {
            snprintf(why, sizeof why, "jq08 helper: %s is not loaded in this process: %s", path,
                     dlerror());
        } else {
            add_handler = (add_handler_fn)dlsym(lib, "zlink_host_add_handler");
            turn_end = (turn_end_fn)dlsym(lib, "zlink_turn_end");
            if (add_handler == NULL)
                snprintf(why, sizeof why, "jq08 helper: missing export zlink_host_add_handler");
            else if (turn_end == NULL)
                snprintf(why, sizeof why, "jq08 helper: missing export zlink_turn_end");
        }
    }
    napi_value r;
    if (why[0])
        napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &r);
    else
        napi_get_null(env, &r);
    return r;
}

/* addBlocker(host.nativeHandle, gate, channel, packet) -> the
 * zlink_fw_result_t of zlink_host_add_handler (a one-way handler of the
 * channel); -1 for bad arguments. */
static napi_value js_add_blocker(napi_env env, napi_callback_info info)
{
    napi_value argv[MAX_ARGS];
    char chan[256], packet[256];
    uint64_t value = 0;
    bool lossless = false;
    if (args_of(env, info, argv, 4) != 0 || add_handler == NULL)
        return num(env, -1);
    gate_t *g = gate_arg(env, argv[1]);
    if (g == NULL || napi_get_value_bigint_uint64(env, argv[0], &value, &lossless) != napi_ok ||
        !lossless || value == 0 ||
        str_of(env, argv[2], chan, sizeof chan) != 0 ||
        str_of(env, argv[3], packet, sizeof packet) != 0)
        return num(env, -1);
    zlink_host_t *host = (zlink_host_t *)(uintptr_t)value;
    return num(env, add_handler(host, ZLINK_OWNER_CHANNEL, chan, ZLINK_MESSAGE_SEND, packet,
                                on_blocker, g));
}

/* waiting(gate) / passed(gate) -> threads inside / blocker turns ended. */
static napi_value gate_count(napi_env env, napi_callback_info info, int passed)
{
    napi_value argv[1];
    if (args_of(env, info, argv, 1) != 0)
        return num(env, -1);
    gate_t *g = gate_arg(env, argv[0]);
    if (g == NULL)
        return num(env, -1);
    pthread_mutex_lock(&g->lk);
    int v = passed ? g->passed : g->waiting;
    pthread_mutex_unlock(&g->lk);
    return num(env, v);
}

static napi_value js_waiting(napi_env env, napi_callback_info info)
{
    return gate_count(env, info, 0);
}

static napi_value js_passed(napi_env env, napi_callback_info info)
{
    return gate_count(env, info, 1);
}

/* open(gate): lets every blocker of the gate end its turn. */
static napi_value js_open(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    if (args_of(env, info, argv, 1) != 0)
        return num(env, -1);
    gate_t *g = gate_arg(env, argv[0]);
    if (g == NULL)
        return num(env, -1);
    pthread_mutex_lock(&g->lk);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->lk);
    return num(env, 0);
}

/* reset() -> 0: every gate closed for the next round; -1 (nothing
 * changed) while a thread still waits at one. */
static napi_value js_reset(napi_env env, napi_callback_info info)
{
    (void)info;
    for (int i = 0; i < NGATES; i++) {
        pthread_mutex_lock(&gates[i].lk);
        int busy = gates[i].waiting;
        pthread_mutex_unlock(&gates[i].lk);
        if (busy)
            return num(env, -1);
    }
    for (int i = 0; i < NGATES; i++) {
        pthread_mutex_lock(&gates[i].lk);
        gates[i].open = 0;
        gates[i].passed = 0;
        pthread_mutex_unlock(&gates[i].lk);
    }
    return num(env, 0);
}

NAPI_MODULE_INIT()
{
    static const struct {
        const char *name;
        napi_callback fn;
    } fns[] = {
        {"init", js_init},       {"addBlocker", js_add_blocker}, {"waiting", js_waiting},
        {"passed", js_passed},   {"open", js_open},              {"reset", js_reset},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        napi_value f;
        if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) !=
                napi_ok ||
            napi_set_named_property(env, exports, fns[i].name, f) != napi_ok)
            return NULL;
    }
    return exports;
}
