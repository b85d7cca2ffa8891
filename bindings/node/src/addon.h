/*
 * addon.h — what the addon's files share: the per-environment state (one
 * event queue that carries every completion and handler turn from ZLink's
 * threads to the JavaScript thread) and the argument helpers.
 *
 * The event queue. ZLink's dispatcher and worker threads append a record
 * (a few words, no allocation of their own once the vector has grown) under
 * `mu` and wake the JavaScript thread (uv_async_send) only when no wake-up
 * is pending yet: while the JavaScript thread has a batch scheduled or is
 * delivering one, posting is a push. The JavaScript thread takes the whole
 * queue at once and hands it to JavaScript in one call (framework.cc,
 * zn_drain), records in arrival order; when more arrived meanwhile it
 * delivers that too in the same wake-up (a handler turn that ended on this
 * thread lets the gate's next turn in while the delivery finishes), until
 * the wake-up has delivered ZN_WAKE_RECORDS records; then it wakes itself
 * again, so libuv's other work runs between batches. Batching moves the
 * same events in the same order; it decides nothing.
 *
 * Threads: an env_state is created and used on its JavaScript thread; ZLink's
 * threads touch only post() (queue, scheduled and closing, under `mu`) and
 * the posted counters. The cleanup hook sets `closing` under `mu` and
 * finishes what is still queued without JavaScript; a later post() fails and
 * its poster finishes the event itself. uv_async_send is only called under
 * `mu` before `closing`, so it never races the handle's close.
 *
 * Keeping the process alive: the async handle is unreferenced while
 * nothing is outstanding. Each started call and each serving host holds it
 * (hold / release, JavaScript thread only), so a process with no running
 * host and no pending call can exit, and none is kept alive after shutdown.
 */
#ifndef ZLINK_NODE_ADDON_H
#define ZLINK_NODE_ADDON_H

#define NAPI_VERSION 8
#include <napi.h>
#include <uv.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "zlink_api.h"

/* One posted event. kind 1: a completion (a = the zn_op, b = the call,
 * c = the outcome, which stays valid while the JavaScript call object holds
 * the call); kind 2: a handler turn (a = the zn_handler, b = the turn). */
struct zn_rec {
    int kind;
    void *a;
    void *b;
    const void *c;
};

struct zn_env {
    uv_async_t async;
    napi_env env = nullptr;
    std::mutex mu;
    std::vector<zn_rec> queue;             /* under mu */
    bool scheduled = false;                /* under mu: a wake-up is pending or running */
    bool closing = false;                  /* under mu */
    std::vector<zn_rec> batch;             /* JavaScript thread only */
    int outstanding = 0;                   /* JavaScript thread only */
    /* Counts for tests (zlink.diagnostics()): events posted by ZLink's
     * threads and delivered on the JavaScript thread, the batches
     * (JavaScript calls) that delivered them and the wake-ups that ran
     * those batches. */
    std::atomic<uint64_t> completions_posted{0}, turns_posted{0};
    uint64_t completions_delivered = 0, turns_delivered = 0, batches = 0;
    uint64_t wakeups = 0;                  /* zn_drain runs (uv_async callbacks) */
    Napi::FunctionReference on_events;     /* (nums, count, objs, strs, pool) */
    Napi::ObjectReference resource;        /* the async resource of on_events' calls */
    napi_async_context actx = nullptr;
    void *strings = nullptr;               /* framework.cc's string cache */
    /* framework.cc's delivery buffers (JavaScript thread only): the
     * records' numbers, reused by every batch (JavaScript reads them during
     * on_events only), and the slab the small payloads are copied into,
     * used up batch after batch (the payloads' views keep theirs alive). */
    Napi::ObjectReference nums;            /* a Float64Array of nums_cap slots */
    double *nums_data = nullptr;
    size_t nums_cap = 0;
    Napi::ObjectReference slab;            /* an ArrayBuffer of slab_cap bytes */
    uint8_t *slab_data = nullptr;
    size_t slab_cap = 0, slab_used = 0;
    void hold(Napi::Env env);
    void release(Napi::Env env);
    /* From any thread: false when the environment no longer takes events. */
    bool post(const zn_rec &r);
};

/* framework.cc: deliver the queued records (JavaScript thread), or finish
 * them without JavaScript (the environment is closing). */
void zn_drain(zn_env *ed);
void zn_abandon(std::vector<zn_rec> &recs);

zn_env *zn_env_of(Napi::Env env); /* throws when zlink.load() did not run */

/* Argument helpers (throw a TypeError on a wrong type). */
int64_t zn_int64(const Napi::Value &v);
std::string zn_string(const Napi::Value &v);
/* A string argument as UTF-8, without allocation when it is short. */
class zn_str {
public:
    explicit zn_str(const Napi::Value &v);
    const char *c_str() const { return big_.empty() ? small_ : big_.c_str(); }

private:
    char small_[256];
    std::string big_;
};
/* A Buffer / Uint8Array's bytes, not copied: valid while the JavaScript
 * value is (during the addon call that got it), for C functions that copy. */
struct zn_view {
    const uint8_t *data;
    size_t size;
};
zn_view zn_bytes_view(const Napi::Value &v);
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
