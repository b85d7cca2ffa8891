/*
 * addon.h — what the addon's files share: the per-environment state (one
 * thread-safe function that carries every completion and handler turn from
 * ZLink's threads to the JavaScript thread) and the argument helpers.
 *
 * Threads: an env_state is created and used on its JavaScript thread; ZLink's
 * dispatcher and worker threads touch only `tsfn` (NonBlockingCall, which
 * is thread-safe) and `closing`. Each event is allocated by the ZLink
 * thread that posts it and freed on the JavaScript thread after delivery
 * (or by the poster when posting fails).
 *
 * Keeping the process alive: the thread-safe function is unreferenced while
 * nothing is outstanding. Each started call and each serving host holds it
 * (hold / release, JavaScript thread only), so a process with no running
 * host and no pending call can exit, and none is kept alive after shutdown.
 */
#ifndef ZLINK_NODE_ADDON_H
#define ZLINK_NODE_ADDON_H

#define NAPI_VERSION 8
#include <napi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "zlink_api.h"

struct zn_event {
    virtual ~zn_event() = default;
    /* On the JavaScript thread; env is null when the environment is going
     * away (the event must then finish its native side without JavaScript). */
    virtual void deliver(napi_env env) = 0;
};

struct zn_env;
void zn_call_js(Napi::Env env, Napi::Function, zn_env *ctx, zn_event *ev);
using zn_tsfn = Napi::TypedThreadSafeFunction<zn_env, zn_event, zn_call_js>;

struct zn_env {
    zn_tsfn tsfn;
    std::atomic<bool> closing{false};
    int outstanding = 0;                   /* JavaScript thread only */
    /* Counts for tests (zlink.diagnostics()): events posted by ZLink's
     * threads and delivered on the JavaScript thread. */
    std::atomic<uint64_t> completions_posted{0}, turns_posted{0};
    uint64_t completions_delivered = 0, turns_delivered = 0;
    Napi::FunctionReference on_turn;       /* (handlerId, turn) */
    void hold(Napi::Env env);
    void release(Napi::Env env);
    /* From any thread: false when the environment no longer takes events. */
    bool post(zn_event *ev);
};

zn_env *zn_env_of(Napi::Env env); /* throws when zlink.load() did not run */

/* Argument helpers (throw a TypeError on a wrong type). */
int64_t zn_int64(const Napi::Value &v);
std::string zn_string(const Napi::Value &v);
/* A Buffer / Uint8Array's bytes, copied. */
std::vector<uint8_t> zn_bytes(const Napi::Value &v);
Napi::Value zn_buffer(Napi::Env env, const void *data, size_t size);
template <typename T> T *zn_ptr(const Napi::Value &v)
{
    if (v.IsNull() || v.IsUndefined())
        return nullptr;
    if (!v.IsExternal())
        throw Napi::TypeError::New(v.Env(), "expected a ZLink handle");
    return v.As<Napi::External<T>>().Data();
}

void zn_init_loader(Napi::Env env, Napi::Object exports);
void zn_init_framework(Napi::Env env, Napi::Object exports);
void zn_init_core(Napi::Env env, Napi::Object exports);

#endif
