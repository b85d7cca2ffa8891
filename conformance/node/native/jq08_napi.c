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
#define NAPI_VERSION 8
#include <node_api.h>

#include <string.h>

#include "conformance/native/blockers.h"

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

/* --------------------------------------------------------- exports */

/* init(libPath) -> null, or why the helper cannot work. */
static napi_value js_init(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    char path[4096], why[4600];
    why[0] = 0;
    if (args_of(env, info, argv, 1) != 0 || str_of(env, argv[0], path, sizeof path) != 0) {
        snprintf(why, sizeof why, "jq08 helper: init(libPath) needs a path string");
    } else if (blk_init(path, why, sizeof why) != 0 && why[0] == 0) {
        snprintf(why, sizeof why, "jq08 helper: init failed");
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
    uint64_t host = 0;
    bool lossless = false;
    if (args_of(env, info, argv, 4) != 0 ||
        napi_get_value_bigint_uint64(env, argv[0], &host, &lossless) != napi_ok || !lossless ||
        str_of(env, argv[2], chan, sizeof chan) != 0 ||
        str_of(env, argv[3], packet, sizeof packet) != 0)
        return num(env, -1);
    return num(env, blk_add(host, int_of(env, argv[1]), chan, packet));
}

/* waiting(gate) / passed(gate) -> threads inside / blocker turns ended;
 * -1 for a bad gate. */
static napi_value gate_count(napi_env env, napi_callback_info info, int what)
{
    napi_value argv[1];
    if (args_of(env, info, argv, 1) != 0)
        return num(env, -1);
    return num(env, blk_state(int_of(env, argv[0]), what));
}

static napi_value js_waiting(napi_env env, napi_callback_info info)
{
    return gate_count(env, info, 0);
}

static napi_value js_passed(napi_env env, napi_callback_info info)
{
    return gate_count(env, info, 1);
}

/* open(gate): lets every blocker of the gate end its turn; -1 for a bad
 * gate. */
static napi_value js_open(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    if (args_of(env, info, argv, 1) != 0)
        return num(env, -1);
    int gate = int_of(env, argv[0]);
    if (blk_state(gate, 0) < 0)
        return num(env, -1);
    blk_open(gate);
    return num(env, 0);
}

/* reset() -> 0: every gate closed for the next round; -1 (nothing
 * changed) while a thread still waits at one. */
static napi_value js_reset(napi_env env, napi_callback_info info)
{
    (void)info;
    return num(env, blk_reset());
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
