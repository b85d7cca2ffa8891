/*
 * framework.cc — the framework half of the addon: hosts, calls, turns, as
 * thin functions over the C ABI (zlink/framework.h). Every rule (timeouts,
 * admission, the completion race, cancellation, shutdown, error kinds) is
 * the C runtime's; this file copies values across and carries callbacks.
 *
 * Objects and their owners
 *  - zn_host (an External): the host handle and the handler registrations
 *    the C runtime holds pointers to. Freed by hostDestroy once the C host
 *    is destroyed. A SERVING host holds the environment (addon.h) from a
 *    successful start until its shutdown returned.
 *  - A call handle (an External whose finalizer releases the application's
 *    reference): the JavaScript call object owns it; a garbage-collected
 *    call is released, a started one still completes (doc/abi.md).
 *  - zn_op: one started call: the JavaScript completion function. Made by
 *    callStart on the JavaScript thread, freed there on the completion path,
 *    right after the function ran once.
 *  - Calls start held (zlink_call_start_held): the call's dispatcher slot
 *    stays reserved after on_complete returned, until lib/framework.js calls
 *    callCallbackDone from a microtask it queues after settling the promise,
 *    i.e. after the promise's reactions ran (seed 000 §17). A completion
 *    that can reach no JavaScript (the environment is closing) is done
 *    here.
 *  - A turn (an External without finalizer): valid until zlink_turn_end;
 *    the C runtime checks every use of a dead one (INVALID_HANDLE).
 *
 * Threads: every exported function runs on the JavaScript thread. The two
 * trampolines (on_complete, on_turn) run on ZLink's dispatcher and worker
 * threads: they copy what they need and post an event; nothing else.
 * zlink_host_shutdown blocks, so it runs on a libuv pool thread (an
 * AsyncWorker), which is not a runtime context, while the JavaScript thread
 * keeps delivering completions and turns.
 */
#include <cstring>

#include "addon.h"

namespace {

struct zn_handler {
    zn_env *env;
    uint32_t id;
};

struct zn_host {
    zlink_host_t *h;
    bool holding = false;
    std::vector<zn_handler *> handlers;
};

struct zn_op {
    zn_env *env;
    uint32_t id; /* the JavaScript side's number for the started call */
};

/* Dispatcher thread: post the outcome's address, no copy (the outcome
 * stays valid while the JavaScript call object holds the call, and it
 * holds it until the completion was delivered). */
void on_complete(zlink_call_t *call, const zlink_outcome_t *out, void *user)
{
    zn_op *op = static_cast<zn_op *>(user);
    zn_env *ed = op->env;
    ed->completions_posted.fetch_add(1, std::memory_order_relaxed);
    if (!ed->post(zn_rec{1, op, call, out})) {
        zl.zlink_call_callback_done(call); /* exiting: nobody is left to tell */
        delete op;
    }
}

/* A host thread, or the JavaScript thread ending the gate's previous turn
 * (a handoff handler): hand the open turn to the JavaScript thread. */
void on_turn(zlink_turn_t *turn, void *user)
{
    zn_handler *h = static_cast<zn_handler *>(user);
    h->env->turns_posted.fetch_add(1, std::memory_order_relaxed);
    if (!h->env->post(zn_rec{2, h, turn, nullptr}))
        zl.zlink_turn_end(turn, 1, "the Node.js environment is closing");
}

/* The last strings seen for packets and content types, so a batch of
 * turns and replies of the same packet makes no new string per event
 * (JavaScript thread only; values compared by content). */
struct string_cache {
    static const uint32_t N = 64;
    std::string key[N];
    uint64_t batch_of[N] = {}; /* the batch that last referred to the entry (0: never) */
    uint32_t next = 0;
    Napi::ObjectReference vals; /* a JavaScript array: strings cannot be referenced alone */
    /* The entry holding s, made (or replaced) if need be; -1 when every
     * entry is in use by this batch (the caller passes the string itself). */
    int32_t find(Napi::Env env, const char *s, uint64_t batch)
    {
        for (uint32_t i = 0; i < N; i++)
            if (batch_of[i] != 0 && key[i] == s) {
                batch_of[i] = batch;
                return (int32_t)i;
            }
        for (uint32_t n = 0; n < N; n++, next = (next + 1) % N) {
            uint32_t i = next;
            if (batch_of[i] == batch)
                continue; /* referred to earlier in this batch: keep it */
            next = (next + 1) % N;
            key[i] = s;
            batch_of[i] = batch;
            vals.Value().Set(i, Napi::String::New(env, s));
            return (int32_t)i;
        }
        return -1;
    }
};

} // namespace

/* JavaScript thread. zn_drain takes everything queued and deliver() calls
 * on_events(nums, count, objs, strs, pool) once for it, records in arrival
 * order, as numbers (the first count slots of a Float64Array that every
 * batch reuses, ZN_STRIDE slots a record), the values that are not numbers
 * (objs) and the string cache (strs), so that a record costs no call into
 * the engine but for the payload's Buffer:
 *   completion  1, id, result, remoteCode, message, payload, packet, contentType, -, size
 *   turn        2, handlerId, turn, kind, packet, contentType, payload, source, sequence, size
 * A string is an index into strs (>= 0), -1 for none, or -2 - i for objs[i];
 * an object (source, turn, message) is an index into objs, -1 for none.
 * A payload is -1 for none (a completion's: null; a turn's: empty), an
 * offset into pool (>= 0, `size` bytes: small payloads are copied into a
 * slab that batches fill one after the other, so a batch allocates no
 * buffer for them) or -2 - i for objs[i] (a Buffer of its own).
 * on_events runs through napi_make_callback, so the microtasks its promise
 * settlements queued (the promises' reactions, await continuations) have all
 * run when it returns; only then is each completion's held slot given back
 * (zlink_call_callback_done), as seed 000 §17 wants. */
static const size_t ZN_STRIDE = 10;
/* Payloads up to this size are copied into the slab (pool). */
static const size_t ZN_POOLED_MAX = 4096;
/* One wake-up delivers batches while events keep arriving during the
 * delivery, until it has delivered this many records (then the rest wait
 * for the next loop iteration, after libuv's other work). */
static const size_t ZN_WAKE_RECORDS = 256;

/* Payloads of a batch are copied into a slab of at least this many bytes,
 * which later batches go on filling. */
static const size_t ZN_SLAB_BYTES = 64 * 1024;

/* Delivers one batch: the records taken from the queue (not empty); false
 * when there was no memory to deliver them (they are queued again). */
static bool deliver(zn_env *ed);

/* Puts the batch back in front of what was queued since. */
static void requeue(zn_env *ed)
{
    std::lock_guard<std::mutex> g(ed->mu);
    ed->batch.insert(ed->batch.end(), ed->queue.begin(), ed->queue.end());
    ed->queue.swap(ed->batch);
    ed->batch.clear();
}

void zn_drain(zn_env *ed)
{
    ed->wakeups++;
    size_t delivered = 0;
    for (;;) {
        {
            std::lock_guard<std::mutex> g(ed->mu);
            if (ed->queue.empty()) {
                ed->scheduled = false;
                return;
            }
            if (delivered >= ZN_WAKE_RECORDS) {
                uv_async_send(&ed->async); /* the rest after libuv's other work */
                return;
            }
            ed->batch.swap(ed->queue);
        }
        delivered += ed->batch.size();
        if (!deliver(ed)) {
            std::lock_guard<std::mutex> g(ed->mu);
            uv_async_send(&ed->async); /* try again on the next loop iteration */
            return;
        }
    }
}

static bool deliver(zn_env *ed)
{
    std::vector<zn_rec> &batch = ed->batch;
    Napi::Env env(ed->env);
    napi_env e = ed->env;
    {
        Napi::HandleScope scope(env);
        if (ed->strings == nullptr) {
            auto *c = new string_cache(); /* never freed, as the environment's state */
            c->vals = Napi::Persistent(Napi::Array::New(env, string_cache::N).As<Napi::Object>());
            ed->strings = c;
        }
        string_cache &strings = *static_cast<string_cache *>(ed->strings);
        uint64_t batch_no = ++ed->batches;
        size_t n = batch.size() * ZN_STRIDE;
        if (n > ed->nums_cap) {
            size_t cap = ed->nums_cap == 0 ? 64 * ZN_STRIDE : ed->nums_cap;
            while (cap < n)
                cap *= 2;
            napi_value ab, arr;
            void *raw = nullptr;
            if (napi_create_arraybuffer(e, cap * sizeof(double), &raw, &ab) != napi_ok ||
                napi_create_typedarray(e, napi_float64_array, cap, ab, 0, &arr) != napi_ok) {
                /* No memory for the numbers: the records stay queued for
                 * the next wake-up rather than being lost. */
                requeue(ed);
                return false;
            }
            ed->nums = Napi::Persistent(Napi::Object(env, arr));
            ed->nums_data = static_cast<double *>(raw);
            ed->nums_cap = cap;
        }
        napi_value nums_v = ed->nums.Value(), objs;
        napi_create_array(e, &objs);
        double *nums = ed->nums_data;
        uint32_t nobj = 0;
        auto obj = [&](napi_value v) -> double {
            napi_set_element(e, objs, nobj, v);
            return (double)nobj++;
        };
        size_t pooled = 0;
        for (const zn_rec &r : batch) {
            size_t size = 0;
            if (r.kind == 1) {
                const zlink_outcome_t *out = static_cast<const zlink_outcome_t *>(r.c);
                size = out->payload != nullptr ? out->payload_size : 0;
            } else {
                zl.zlink_turn_payload(static_cast<zlink_turn_t *>(r.b), &size);
            }
            if (size <= ZN_POOLED_MAX)
                pooled += size;
        }
        if (ed->slab_data == nullptr || ed->slab_cap - ed->slab_used < pooled) {
            size_t cap = pooled > ZN_SLAB_BYTES ? pooled : ZN_SLAB_BYTES;
            napi_value ab;
            void *raw = nullptr;
            if (napi_create_arraybuffer(e, cap, &raw, &ab) != napi_ok) {
                requeue(ed);
                return false;
            }
            ed->slab = Napi::Persistent(Napi::Object(env, ab));
            ed->slab_data = static_cast<uint8_t *>(raw);
            ed->slab_cap = cap;
            ed->slab_used = 0;
        }
        napi_value pool_v = ed->slab.Value();
        uint8_t *pool = ed->slab_data;
        size_t pool_at = ed->slab_used;
        auto payload = [&](const void *p, size_t size) -> double {
            if (p == nullptr)
                return -1;
            if (size > ZN_POOLED_MAX)
                return -2 - obj(zn_buffer(env, p, size));
            if (size > 0)
                std::memcpy(pool + pool_at, p, size);
            pool_at += size;
            return (double)(pool_at - size);
        };
        auto str = [&](const char *s) -> double {
            if (s == nullptr)
                return -1;
            int32_t i = strings.find(env, s, batch_no);
            return i >= 0 ? (double)i : -2 - obj(Napi::String::New(env, s));
        };
        for (size_t j = 0; j < batch.size(); j++) {
            const zn_rec &r = batch[j];
            double *x = nums + j * ZN_STRIDE;
            if (r.kind == 1) {
                zn_op *op = static_cast<zn_op *>(r.a);
                const zlink_outcome_t *out = static_cast<const zlink_outcome_t *>(r.c);
                ed->completions_delivered++;
                ed->release(env);
                x[0] = 1;
                x[1] = op->id;
                x[2] = out->result;
                x[3] = out->remote_code;
                x[4] = out->message != nullptr && out->message[0] != '\0'
                           ? -2 - obj(Napi::String::New(env, out->message))
                           : str("");
                x[5] = payload(out->payload, out->payload_size);
                x[9] = out->payload != nullptr ? (double)out->payload_size : 0;
                x[6] = str(out->packet != nullptr ? out->packet : "");
                x[7] = str(out->content_type != nullptr ? out->content_type : "");
                x[8] = 0;
                delete op;
            } else {
                zn_handler *h = static_cast<zn_handler *>(r.a);
                zlink_turn_t *t = static_cast<zlink_turn_t *>(r.b);
                ed->turns_delivered++;
                x[0] = 2;
                x[1] = h->id;
                x[2] = obj(Napi::External<zlink_turn_t>::New(env, t));
                x[3] = zl.zlink_turn_kind(t);
                x[4] = str(zl.zlink_turn_packet(t));
                x[5] = str(zl.zlink_turn_content_type(t));
                size_t size = 0;
                const void *p = zl.zlink_turn_payload(t, &size);
                x[6] = payload(p, size);
                x[9] = (double)size;
                zlink_routing_id_t rid;
                std::memset(&rid, 0, sizeof rid);
                zl.zlink_turn_source(t, &rid);
                x[7] = rid.size > 0 ? obj(zn_buffer(env, rid.data, rid.size)) : -1;
                x[8] = (double)zl.zlink_turn_sequence(t);
            }
        }
        ed->slab_used = pool_at;
        try {
            ed->on_events.MakeCallback(ed->resource.Value(),
                                       {nums_v, Napi::Number::New(env, (double)n), objs,
                                        strings.vals.Value(), pool_v},
                                       ed->actx);
        } catch (const Napi::Error &err) {
            /* A JavaScript exception escaped the dispatcher: report it as
             * the process's uncaught exception, as any callback's would be. */
            napi_fatal_exception(e, err.Value());
        }
    }
    for (const zn_rec &r : batch)
        if (r.kind == 1)
            zl.zlink_call_callback_done(static_cast<zlink_call_t *>(r.b));
    batch.clear();
    return true;
}

void zn_abandon(std::vector<zn_rec> &recs)
{
    for (const zn_rec &r : recs) {
        if (r.kind == 1) {
            zl.zlink_call_callback_done(static_cast<zlink_call_t *>(r.b));
            delete static_cast<zn_op *>(r.a);
        } else {
            zl.zlink_turn_end(static_cast<zlink_turn_t *>(r.b), 1,
                              "the Node.js environment is closing");
        }
    }
    recs.clear();
}

namespace {

zn_host *host_of(const Napi::Value &v)
{
    zn_host *hb = zn_ptr<zn_host>(v);
    if (hb == nullptr)
        throw Napi::TypeError::New(v.Env(), "expected a host handle");
    return hb;
}

Napi::Value pair(Napi::Env env, Napi::Value a, int32_t rc)
{
    Napi::Array r = Napi::Array::New(env, 2);
    r.Set(0u, a);
    r.Set(1u, Napi::Number::New(env, rc));
    return r;
}

Napi::Value num(Napi::Env env, int64_t v) { return Napi::Number::New(env, (double)v); }

/* The host's External was collected. The JavaScript side keeps every
 * started host reachable until its shutdown finished, so a host seen here
 * is PREPARING, FAILED, STOPPED or already destroyed; a host in any other
 * state (an environment torn down while serving) is left to the process's
 * end, since destroying it would block. */
void host_finalize(Napi::Env, zn_host *hb)
{
    if (hb->h != nullptr) {
        int st = zl.zlink_host_state(hb->h);
        if (st == ZLINK_HOST_SERVING || st == ZLINK_HOST_DRAINING)
            return;
        if (zl.zlink_host_destroy(hb->h) != 0)
            return;
    }
    for (zn_handler *r : hb->handlers)
        delete r;
    delete hb;
}

/* hostNew(name) -> [host | null, rc] */
Napi::Value host_new(const Napi::CallbackInfo &info)
{
    zn_env_of(info.Env());
    zlink_fw_result_t rc = ZLINK_FW_OK;
    zlink_host_t *h = zl.zlink_host_new(zn_string(info[0]).c_str(), &rc);
    if (h == nullptr)
        return pair(info.Env(), info.Env().Null(), rc);
    zn_host *hb = new zn_host();
    hb->h = h;
    return pair(info.Env(), Napi::External<zn_host>::New(info.Env(), hb, host_finalize), rc);
}

Napi::Value host_set_option(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_host_set_option(host_of(info[0])->h,
                                                    (int)zn_int64(info[1]), zn_int64(info[2])));
}

Napi::Value host_get_option(const Napi::CallbackInfo &info)
{
    int64_t v = 0;
    int rc = zl.zlink_host_get_option(host_of(info[0])->h, (int)zn_int64(info[1]), &v);
    return pair(info.Env(), Napi::BigInt::New(info.Env(), v), rc);
}

/* (host, name, option, value) for channels and mesh nodes. */
Napi::Value named_set_option(const Napi::CallbackInfo &info)
{
    bool mesh = info[4].ToBoolean();
    auto fn = mesh ? zl.zlink_mesh_set_option : zl.zlink_channel_set_option;
    return num(info.Env(), fn(host_of(info[0])->h, zn_string(info[1]).c_str(),
                              (int)zn_int64(info[2]), zn_int64(info[3])));
}

Napi::Value named_get_option(const Napi::CallbackInfo &info)
{
    bool mesh = info[3].ToBoolean();
    auto fn = mesh ? zl.zlink_mesh_get_option : zl.zlink_channel_get_option;
    int64_t v = 0;
    int rc = fn(host_of(info[0])->h, zn_string(info[1]).c_str(), (int)zn_int64(info[2]), &v);
    return pair(info.Env(), Napi::BigInt::New(info.Env(), v), rc);
}

Napi::Value host_add_cs(const Napi::CallbackInfo &info)
{
    bool server = info[3].ToBoolean();
    auto fn = server ? zl.zlink_host_add_cs_server : zl.zlink_host_add_cs_client;
    return num(info.Env(), fn(host_of(info[0])->h, zn_string(info[1]).c_str(),
                              zn_string(info[2]).c_str()));
}

Napi::Value host_add_mesh_node(const Napi::CallbackInfo &info)
{
    std::vector<uint8_t> rid = zn_bytes(info[2]);
    std::string listen;
    bool has_listen = info[3].IsString();
    if (has_listen)
        listen = zn_string(info[3]);
    return num(info.Env(), zl.zlink_host_add_mesh_node(host_of(info[0])->h,
                                                       zn_string(info[1]).c_str(), rid.data(),
                                                       rid.size(),
                                                       has_listen ? listen.c_str() : nullptr));
}

Napi::Value mesh_connect(const Napi::CallbackInfo &info)
{
    std::vector<uint8_t> rid = zn_bytes(info[3]);
    return num(info.Env(), zl.zlink_mesh_connect(host_of(info[0])->h, zn_string(info[1]).c_str(),
                                                 zn_string(info[2]).c_str(), rid.data(),
                                                 rid.size()));
}

Napi::Value mesh_add_channel(const Napi::CallbackInfo &info)
{
    zlink_host_t *h = host_of(info[0])->h;
    std::string mesh = zn_string(info[1]), ch = zn_string(info[2]);
    if (info[3].IsUndefined() || info[3].IsNull())
        return num(info.Env(), zl.zlink_mesh_add_channel_client(h, mesh.c_str(), ch.c_str()));
    return num(info.Env(), zl.zlink_mesh_add_channel_server(h, mesh.c_str(), ch.c_str(),
                                                            (int)zn_int64(info[3])));
}

Napi::Value mesh_set_weight(const Napi::CallbackInfo &info)
{
    return num(info.Env(),
               zl.zlink_mesh_set_weight(host_of(info[0])->h, zn_string(info[1]).c_str(),
                                        zn_string(info[2]).c_str(), (int)zn_int64(info[3])));
}

Napi::Value host_endpoint(const Napi::CallbackInfo &info)
{
    char buf[1024];
    int rc = zl.zlink_host_endpoint(host_of(info[0])->h, zn_string(info[1]).c_str(), buf,
                                    sizeof buf);
    return pair(info.Env(), Napi::String::New(info.Env(), rc == 0 ? buf : ""), rc);
}

Napi::Value mesh_ready_peers(const Napi::CallbackInfo &info)
{
    zlink_fw_result_t rc = ZLINK_FW_OK;
    int n = zl.zlink_mesh_ready_peers(host_of(info[0])->h, zn_string(info[1]).c_str(), &rc);
    return pair(info.Env(), Napi::Number::New(info.Env(), n), n < 0 ? rc : 0);
}

/* hostAddHandler(host, ownerKind, ownerName, messageKind, packet, id) */
Napi::Value host_add_handler(const Napi::CallbackInfo &info)
{
    zn_env *ed = zn_env_of(info.Env());
    zn_host *hb = host_of(info[0]);
    auto *reg = new zn_handler{ed, (uint32_t)zn_int64(info[5])};
    /* on_turn only posts: the turn that ends on this thread may hand the
     * gate's next one to it here (ZLINK_HANDLER_HANDOFF), with no host
     * thread woken in between. */
    int rc = zl.zlink_host_add_handler_ex(hb->h, (zlink_owner_kind_t)zn_int64(info[1]),
                                          zn_string(info[2]).c_str(),
                                          (zlink_message_kind_t)zn_int64(info[3]),
                                          zn_string(info[4]).c_str(), on_turn, reg,
                                          ZLINK_HANDLER_HANDOFF);
    if (rc == 0)
        hb->handlers.push_back(reg);
    else
        delete reg;
    return num(info.Env(), rc);
}

Napi::Value host_start(const Napi::CallbackInfo &info)
{
    zn_env *ed = zn_env_of(info.Env());
    zn_host *hb = host_of(info[0]);
    int rc = zl.zlink_host_start(hb->h);
    if (rc == 0 && !hb->holding) {
        hb->holding = true;
        ed->hold(info.Env());
    }
    return num(info.Env(), rc);
}

class shutdown_worker : public Napi::AsyncWorker {
public:
    shutdown_worker(Napi::Function cb, zn_env *ed, zn_host *hb, int64_t deadline)
        : Napi::AsyncWorker(cb, "zlink.shutdown"), ed_(ed), hb_(hb), deadline_(deadline)
    {
    }
    void Execute() override { rc_ = zl.zlink_host_shutdown(hb_->h, deadline_); }
    void OnOK() override
    {
        Napi::Env env = Env();
        Napi::HandleScope scope(env);
        if (hb_->holding && zl.zlink_host_state(hb_->h) != ZLINK_HOST_SERVING &&
            zl.zlink_host_state(hb_->h) != ZLINK_HOST_DRAINING) {
            hb_->holding = false;
            ed_->release(env);
        }
        Callback().Call({Napi::Number::New(env, rc_)});
    }

private:
    zn_env *ed_;
    zn_host *hb_;
    int64_t deadline_;
    int rc_ = 0;
};

/* hostShutdown(host, deadlineNs, cb(rc)): zlink_host_shutdown off the loop. */
Napi::Value host_shutdown(const Napi::CallbackInfo &info)
{
    zn_env *ed = zn_env_of(info.Env());
    auto *w = new shutdown_worker(info[2].As<Napi::Function>(), ed, host_of(info[0]),
                                  zn_int64(info[1]));
    w->Queue();
    return info.Env().Undefined();
}

Napi::Value host_destroy(const Napi::CallbackInfo &info)
{
    zn_env *ed = zn_env_of(info.Env());
    zn_host *hb = host_of(info[0]);
    if (hb->h == nullptr)
        return num(info.Env(), ZLINK_FW_INVALID_HANDLE);
    int rc = zl.zlink_host_destroy(hb->h);
    if (rc == 0) {
        hb->h = nullptr;
        for (zn_handler *r : hb->handlers)
            delete r;
        hb->handlers.clear();
        if (hb->holding) {
            hb->holding = false;
            ed->release(info.Env());
        }
    }
    return num(info.Env(), rc);
}

Napi::Value host_state(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_host_state(host_of(info[0])->h));
}

/* hostHandle(host) -> the zlink_host_t handle value as a BigInt */
Napi::Value host_handle(const Napi::CallbackInfo &info)
{
    return Napi::BigInt::New(info.Env(), (uint64_t)(uintptr_t)host_of(info[0])->h);
}

Napi::Value host_status(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_host_status_t s;
    std::memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    int rc = zl.zlink_host_status(host_of(info[0])->h, &s);
    Napi::Object o = Napi::Object::New(env);
    o.Set("state", s.state);
    o.Set("isReady", s.is_ready != 0);
    o.Set("acceptingWork", s.accepting_work != 0);
    o.Set("requestsInflight", num(env, s.requests_inflight));
    o.Set("onewayWaiting", num(env, s.oneway_waiting));
    o.Set("admissionWaitersMax", num(env, s.admission_waiters_max));
    o.Set("dispatcherInUse", num(env, s.dispatcher_in_use));
    o.Set("dispatcherCapacity", num(env, s.dispatcher_capacity));
    o.Set("turnsRunning", num(env, s.turns_running));
    o.Set("turnsQueued", num(env, s.turns_queued));
    o.Set("maxQueuedJobs", num(env, s.max_queued_jobs));
    o.Set("permitsInUse", num(env, s.permits_in_use));
    return pair(env, o, rc);
}

Napi::Value host_capacity(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_host_capacity_t c;
    std::memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    int rc = zl.zlink_host_capacity(host_of(info[0])->h, &c);
    Napi::Object o = Napi::Object::New(env);
    o.Set("profile", c.profile);
    o.Set("manualMax", num(env, c.manual_max));
    o.Set("pausePercent", c.pause_percent);
    o.Set("resumePercent", c.resume_percent);
    o.Set("effectiveProcessors", num(env, c.effective_processors));
    o.Set("effectiveMax", num(env, c.effective_max));
    o.Set("pauseCount", num(env, c.pause_count));
    o.Set("resumeCount", num(env, c.resume_count));
    o.Set("reservedSupplyPermits", num(env, c.reserved_supply_permits));
    o.Set("queuedJobs", num(env, c.queued_jobs));
    o.Set("permitsInUse", num(env, c.permits_in_use));
    o.Set("peakPermitsInUse", num(env, c.peak_permits_in_use));
    o.Set("pressureState", c.pressure_state);
    o.Set("currentPauseNs", num(env, c.current_pause_ns));
    o.Set("cumulativePauseNs", num(env, c.cumulative_pause_ns));
    o.Set("transitionsPaused", num(env, c.transitions_paused));
    o.Set("transitionsRunning", num(env, c.transitions_running));
    o.Set("capacityWaiters", num(env, c.capacity_waiters));
    o.Set("capacityWaits", num(env, c.capacity_waits));
    o.Set("capacityWaitNs", num(env, c.capacity_wait_ns));
    o.Set("flowStateConfigFailures", num(env, c.flow_state_config_failures));
    return pair(env, o, rc);
}

Napi::Value host_owner_status(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_owner_status_t s;
    std::memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    int rc = zl.zlink_host_owner_status(host_of(info[0])->h,
                                        (zlink_owner_kind_t)zn_int64(info[1]),
                                        zn_string(info[2]).c_str(), &s);
    Napi::Object o = Napi::Object::New(env);
    o.Set("busy", s.busy != 0);
    o.Set("acceptedSeq", num(env, s.accepted_seq));
    o.Set("queuedRecords", num(env, s.queued_records));
    o.Set("queuedBytes", num(env, s.queued_bytes));
    o.Set("runningRecords", num(env, s.running_records));
    o.Set("runningBytes", num(env, s.running_bytes));
    o.Set("handled", num(env, s.handled));
    return pair(env, o, rc);
}

Napi::Value host_reset_metrics(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_host_reset_metrics(host_of(info[0])->h));
}

Napi::Value host_metric(const Napi::CallbackInfo &info)
{
    int64_t v = 0;
    std::string labels = info[2].IsString() ? zn_string(info[2]) : "";
    int rc = zl.zlink_host_metric(host_of(info[0])->h, zn_string(info[1]).c_str(),
                                  labels.c_str(), &v);
    return pair(info.Env(), Napi::BigInt::New(info.Env(), v), rc);
}

/* ------------------------------------------------------------------ calls */

void release_call(Napi::Env, zlink_call_t *c) { zl.zlink_call_release(c); }

Napi::Value wrap_call(Napi::Env env, zlink_call_t *c, int rc)
{
    if (c == nullptr)
        return pair(env, env.Null(), rc);
    return pair(env, Napi::External<zlink_call_t>::New(env, c, release_call), 0);
}

/* callNew(host, kind, target, rid?) -> call | rc (a number when refused).
 * kind: 0 send/channel, 1 request/channel, 2 send/node, 3 request/node. */
Napi::Value call_new(const Napi::CallbackInfo &info)
{
    zlink_host_t *h = host_of(info[0])->h;
    int kind = (int)zn_int64(info[1]);
    zn_str target(info[2]);
    zlink_fw_result_t rc = ZLINK_FW_OK;
    zlink_call_t *c = nullptr;
    if (kind == 0)
        c = zl.zlink_call_send_to_channel(h, target.c_str(), &rc);
    else if (kind == 1)
        c = zl.zlink_call_request_to_channel(h, target.c_str(), &rc);
    else {
        std::vector<uint8_t> rid = zn_bytes(info[3]);
        c = kind == 2 ? zl.zlink_call_send_to_node(h, target.c_str(), rid.data(), rid.size(), &rc)
                      : zl.zlink_call_request_to_node(h, target.c_str(), rid.data(), rid.size(),
                                                      &rc);
    }
    if (c == nullptr)
        return num(info.Env(), rc);
    return Napi::External<zlink_call_t>::New(info.Env(), c, release_call);
}

zlink_call_t *call_of(const Napi::Value &v) { return zn_ptr<zlink_call_t>(v); }

Napi::Value call_set_payload(const Napi::CallbackInfo &info)
{
    zn_str packet(info[1]), type(info[2]);
    zn_view data = zn_bytes_view(info[3]); /* the C side copies the bytes */
    return num(info.Env(), zl.zlink_call_set_payload(call_of(info[0]), packet.c_str(),
                                                     type.c_str(), data.data, data.size));
}

Napi::Value call_set_timeout(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_call_set_timeout(call_of(info[0]), zn_int64(info[1])));
}

Napi::Value call_set_metadata(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_call_set_metadata(call_of(info[0]), zn_string(info[1]).c_str(),
                                                      zn_string(info[2]).c_str()));
}

/* callStart(call, id, yield): zlink_call_start_held (or zlink_call_yield);
 * on OK the completion is delivered exactly once, later, on this thread, as
 * a record of the batch array with this id (zn_drain), and its held slot is
 * given back after the microtasks of that delivery ran. */
Napi::Value call_start(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zn_env *ed = zn_env_of(env);
    zlink_call_t *c = call_of(info[0]);
    auto *op = new zn_op{ed, (uint32_t)zn_int64(info[1])};
    bool yield = info[2].ToBoolean();
    ed->hold(env); /* before the start: the completion may be posted at once */
    int rc = yield ? zl.zlink_call_yield(c, on_complete, op)
                   : zl.zlink_call_start_held(c, on_complete, op);
    if (rc != 0) {
        /* Not accepted: on_complete will never run. */
        delete op;
        ed->release(env);
    }
    return num(env, rc);
}

/* callStartDetached(call) -> rc: zlink_call_start with no completion
 * function (the caller learns only whether the start was accepted). */
Napi::Value call_start_detached(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_call_start(call_of(info[0]), nullptr, nullptr));
}

/* callCallbackDone(call) -> rc: zlink_call_callback_done. */
Napi::Value call_callback_done(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_call_callback_done(call_of(info[0])));
}

Napi::Value call_cancel(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_call_cancel(call_of(info[0])));
}

/* ------------------------------------------------------------------ turns */

zlink_turn_t *turn_of(const Napi::Value &v) { return zn_ptr<zlink_turn_t>(v); }

Napi::Value cstr(Napi::Env env, const char *s)
{
    return s == nullptr ? env.Null() : Napi::String::New(env, s);
}

Napi::Value turn_kind(const Napi::CallbackInfo &info)
{
    return num(info.Env(), zl.zlink_turn_kind(turn_of(info[0])));
}

Napi::Value turn_metadata(const Napi::CallbackInfo &info)
{
    return cstr(info.Env(), zl.zlink_turn_metadata(turn_of(info[0]), zn_string(info[1]).c_str()));
}

Napi::Value turn_respond(const Napi::CallbackInfo &info)
{
    zn_str packet(info[1]), type(info[2]);
    zn_view data = zn_bytes_view(info[3]); /* the C side copies the bytes */
    return num(info.Env(), zl.zlink_turn_respond(turn_of(info[0]), packet.c_str(), type.c_str(),
                                                 data.data, data.size));
}

/* turnReply(turn) -> [call | null, rc]: the reply call of a request's turn
 * (the application's reference, released with its JavaScript object). */
Napi::Value turn_reply(const Napi::CallbackInfo &info)
{
    zlink_fw_result_t rc = ZLINK_FW_OK;
    zlink_call_t *c = zl.zlink_turn_reply(turn_of(info[0]), &rc);
    return wrap_call(info.Env(), c, rc);
}

/* turnReplyError(turn, kind, message): the error reply, started with no
 * completion function (nobody waits for a reply's admission here). */
Napi::Value turn_reply_error(const Napi::CallbackInfo &info)
{
    zlink_fw_result_t rc = ZLINK_FW_OK;
    zlink_call_t *c = zl.zlink_turn_reply_error(turn_of(info[0]),
                                                (zlink_error_kind_t)zn_int64(info[1]),
                                                zn_string(info[2]).c_str(), &rc);
    if (c == nullptr)
        return num(info.Env(), rc);
    rc = (zlink_fw_result_t)zl.zlink_call_start(c, nullptr, nullptr);
    zl.zlink_call_release(c);
    return num(info.Env(), rc);
}

Napi::Value turn_end(const Napi::CallbackInfo &info)
{
    std::string msg = info[2].IsString() ? zn_string(info[2]) : "";
    return num(info.Env(),
               zl.zlink_turn_end(turn_of(info[0]), info[1].ToBoolean() ? 1 : 0, msg.c_str()));
}

/* diagnostics() -> the event counts of addon.h and the outstanding holds. */
Napi::Value diagnostics(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zn_env *ed = zn_env_of(env);
    Napi::Object o = Napi::Object::New(env);
    o.Set("completionsPosted", num(env, (int64_t)ed->completions_posted.load()));
    o.Set("completionsDelivered", num(env, (int64_t)ed->completions_delivered));
    o.Set("turnsPosted", num(env, (int64_t)ed->turns_posted.load()));
    o.Set("turnsDelivered", num(env, (int64_t)ed->turns_delivered));
    o.Set("outstanding", num(env, ed->outstanding));
    o.Set("batches", num(env, (int64_t)ed->batches));
    o.Set("wakeups", num(env, (int64_t)ed->wakeups));
    return o;
}

Napi::Value in_runtime_context(const Napi::CallbackInfo &info)
{
    return Napi::Boolean::New(info.Env(), zl.zlink_in_runtime_context() != 0);
}

} // namespace

void zn_init_framework(Napi::Env env, Napi::Object exports)
{
    struct {
        const char *name;
        Napi::Value (*fn)(const Napi::CallbackInfo &);
    } fns[] = {
        {"hostNew", host_new},
        {"hostSetOption", host_set_option},
        {"hostGetOption", host_get_option},
        {"namedSetOption", named_set_option},
        {"namedGetOption", named_get_option},
        {"hostAddCs", host_add_cs},
        {"hostAddMeshNode", host_add_mesh_node},
        {"meshConnect", mesh_connect},
        {"meshAddChannel", mesh_add_channel},
        {"meshSetWeight", mesh_set_weight},
        {"hostEndpoint", host_endpoint},
        {"meshReadyPeers", mesh_ready_peers},
        {"hostAddHandler", host_add_handler},
        {"hostStart", host_start},
        {"hostShutdown", host_shutdown},
        {"hostDestroy", host_destroy},
        {"hostState", host_state},
        {"hostHandle", host_handle},
        {"hostStatus", host_status},
        {"hostCapacity", host_capacity},
        {"hostOwnerStatus", host_owner_status},
        {"hostResetMetrics", host_reset_metrics},
        {"hostMetric", host_metric},
        {"callNew", call_new},
        {"callSetPayload", call_set_payload},
        {"callSetTimeout", call_set_timeout},
        {"callSetMetadata", call_set_metadata},
        {"callStart", call_start},
        {"callStartDetached", call_start_detached},
        {"callCancel", call_cancel},
        {"callCallbackDone", call_callback_done},
        {"turnKind", turn_kind},
        {"turnMetadata", turn_metadata},
        {"turnRespond", turn_respond},
        {"turnReply", turn_reply},
        {"turnReplyError", turn_reply_error},
        {"turnEnd", turn_end},
        {"inRuntimeContext", in_runtime_context},
        {"diagnostics", diagnostics},
    };
    for (auto &f : fns)
        exports.Set(f.name, Napi::Function::New(env, f.fn, f.name));
}
