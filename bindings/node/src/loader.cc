/*
 * loader.cc — zlink.load(): opens libzlink.so.1 with dlopen, resolves every
 * export the generated table lists (lib/tables.js, from abi/zlink.map) and
 * every function this addon calls, and fails with the first missing name;
 * then checks zlink_version()'s major against the table's. Also owns the
 * per-environment state (addon.h) and marks the JavaScript thread a runtime
 * context for the environment's life, since it runs every handler and
 * completion the binding delivers (doc/abi.md "Runtime context").
 *
 * Threads: each environment's JavaScript thread (the main thread or a
 * worker thread); loads are serialised by g_load_lock and the first one
 * fills `zl`, which is only read afterwards. The library handle is never
 * closed: the runtime's threads live until the process ends.
 */
#include <dlfcn.h>
#include <string.h>

#include <mutex>

#include "addon.h"

zl_api zl;

static void *g_lib = nullptr; /* one library per process */
static std::mutex g_load_lock;  /* environments (worker threads) load one at a time */

/* The JavaScript thread's wake-up: deliver what is queued. */
static void on_async(uv_async_t *a)
{
    zn_drain(static_cast<zn_env *>(a->data));
}

void zn_env::hold(Napi::Env)
{
    if (outstanding++ == 0)
        uv_ref(reinterpret_cast<uv_handle_t *>(&async));
}

void zn_env::release(Napi::Env)
{
    if (--outstanding == 0)
        uv_unref(reinterpret_cast<uv_handle_t *>(&async));
}

bool zn_env::post(const zn_rec &r)
{
    std::lock_guard<std::mutex> g(mu);
    if (closing)
        return false;
    queue.push_back(r);
    if (!scheduled) {
        scheduled = true;
        uv_async_send(&async);
    }
    return true;
}

zn_env *zn_env_of(Napi::Env env)
{
    zn_env *ed = env.GetInstanceData<zn_env>();
    if (ed == nullptr)
        throw Napi::Error::New(env, "zlink: the library is not loaded (call load() first)");
    return ed;
}

int64_t zn_int64(const Napi::Value &v)
{
    if (v.IsBigInt()) {
        bool lossless = true;
        int64_t x = v.As<Napi::BigInt>().Int64Value(&lossless);
        if (!lossless)
            throw Napi::RangeError::New(v.Env(), "value does not fit in int64");
        return x;
    }
    if (v.IsNumber())
        return v.As<Napi::Number>().Int64Value();
    throw Napi::TypeError::New(v.Env(), "expected a number or a bigint");
}

/* Refuses a string whose UTF-8 C cannot take as text: a U+0000 would cut
 * the C string short, and V8 writes a lone surrogate as U+FFFD, which
 * would change it. bytes/n is V8's UTF-8 of v; the UTF-16 is read only
 * when that holds an EF BF BD, which a real U+FFFD gives too. */
static void text_check(const Napi::Value &v, const char *bytes, size_t n)
{
    if (memchr(bytes, 0, n) != nullptr)
        throw Napi::TypeError::New(v.Env(), "a string passed to C contains U+0000");
    if (memmem(bytes, n, "\xEF\xBF\xBD", 3) == nullptr)
        return;
    size_t units = 0;
    napi_get_value_string_utf16(v.Env(), v, nullptr, 0, &units);
    std::u16string u(units, u'\0');
    napi_get_value_string_utf16(v.Env(), v, u.data(), units + 1, &units);
    for (size_t i = 0; i < units; i++) {
        char16_t c = u[i];
        bool high = c >= 0xD800 && c <= 0xDBFF, low = c >= 0xDC00 && c <= 0xDFFF;
        if (high && i + 1 < units && u[i + 1] >= 0xDC00 && u[i + 1] <= 0xDFFF) {
            i++;
            continue;
        }
        if (high || low)
            throw Napi::TypeError::New(v.Env(), "a string passed to C has a lone surrogate");
    }
}

std::string zn_string(const Napi::Value &v)
{
    if (!v.IsString())
        throw Napi::TypeError::New(v.Env(), "expected a string");
    std::string s = v.As<Napi::String>().Utf8Value();
    text_check(v, s.data(), s.size());
    return s;
}

zn_str::zn_str(const Napi::Value &v)
{
    if (!v.IsString())
        throw Napi::TypeError::New(v.Env(), "expected a string");
    size_t len = 0;
    napi_get_value_string_utf8(v.Env(), v, small_, sizeof small_, &len);
    if (len + 1 >= sizeof small_) {
        big_ = v.As<Napi::String>().Utf8Value(); /* may have been cut: take it whole */
        text_check(v, big_.data(), big_.size());
    } else {
        text_check(v, small_, len);
    }
}

zn_view zn_bytes_view(const Napi::Value &v)
{
    if (v.IsNull() || v.IsUndefined())
        return {nullptr, 0};
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        throw Napi::TypeError::New(v.Env(), "expected a Buffer or Uint8Array");
    auto a = v.As<Napi::Uint8Array>();
    return {a.Data(), a.ByteLength()};
}

std::vector<uint8_t> zn_bytes(const Napi::Value &v)
{
    if (v.IsNull() || v.IsUndefined())
        return {};
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        throw Napi::TypeError::New(v.Env(), "expected a Buffer or Uint8Array");
    auto a = v.As<Napi::Uint8Array>();
    return std::vector<uint8_t>(a.Data(), a.Data() + a.ByteLength());
}

Napi::Value zn_buffer(Napi::Env env, const void *data, size_t size)
{
    return Napi::Buffer<uint8_t>::Copy(env, static_cast<const uint8_t *>(data), size);
}

static void keep_env(Napi::Env, zn_env *) {}

static void env_cleanup(void *arg)
{
    zn_env *ed = static_cast<zn_env *>(arg);
    std::vector<zn_rec> left;
    {
        std::lock_guard<std::mutex> g(ed->mu);
        ed->closing = true;
        left.swap(ed->queue);
    }
    zn_abandon(left); /* no JavaScript will run them */
    uv_close(reinterpret_cast<uv_handle_t *>(&ed->async), nullptr);
    if (ed->actx != nullptr)
        napi_async_destroy(ed->env, ed->actx);
    ed->actx = nullptr;
    zl.zlink_runtime_context_leave();
}

/* load(path, exports, expectedMajor, onTurn) -> {major, minor, patch}. */
static Napi::Value load(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    std::string path = zn_string(info[0]);
    Napi::Array names = info[1].As<Napi::Array>();
    int64_t expected_major = zn_int64(info[2]);
    if (env.GetInstanceData<zn_env>() != nullptr)
        throw Napi::Error::New(env, "zlink: load() already ran in this environment");
    std::lock_guard<std::mutex> guard(g_load_lock);

    void *lib = g_lib != nullptr ? g_lib : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char *why = dlerror();
        throw Napi::Error::New(env, std::string("zlink: cannot load ") + path + ": " +
                                        (why != nullptr ? why : "unknown error"));
    }
    /* Every export of the generated table, in version-script order. */
    for (uint32_t i = 0; i < names.Length(); i++) {
        std::string name = names.Get(i).As<Napi::String>().Utf8Value();
        if (dlsym(lib, name.c_str()) == nullptr) {
            if (lib != g_lib)
                dlclose(lib);
            throw Napi::Error::New(env, "zlink: " + path + " lacks the export " + name);
        }
    }
    /* Every function the addon calls (a subset, unless the table is stale). */
    zl_api api{};
#define ZLINK_NODE_RESOLVE_(name)                                                     \
    api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name));               \
    if (api.name == nullptr) {                                                        \
        if (lib != g_lib)                                                             \
            dlclose(lib);                                                             \
        throw Napi::Error::New(env, "zlink: " + path + " lacks the export " #name);  \
    }
    ZLINK_NODE_FUNCTIONS(ZLINK_NODE_RESOLVE_)
#undef ZLINK_NODE_RESOLVE_
    int major = 0, minor = 0, patch = 0;
    api.zlink_version(&major, &minor, &patch);
    if (major != expected_major) {
        if (lib != g_lib)
            dlclose(lib);
        throw Napi::Error::New(env, "zlink: " + path + " is version " + std::to_string(major) +
                                        "." + std::to_string(minor) + "." +
                                        std::to_string(patch) + "; this binding needs major " +
                                        std::to_string(expected_major));
    }
    if (g_lib == nullptr) {
        g_lib = lib;
        zl = api; /* written once; other environments reuse it */
    }

    zn_env *ed = new zn_env();
    ed->env = env;
    uv_loop_t *loop = nullptr;
    if (napi_get_uv_event_loop(env, &loop) != napi_ok ||
        uv_async_init(loop, &ed->async, on_async) != 0) {
        delete ed;
        throw Napi::Error::New(env, "zlink: cannot set up the event loop's wake-up");
    }
    ed->async.data = ed;
    uv_unref(reinterpret_cast<uv_handle_t *>(&ed->async));
    ed->on_events = Napi::Persistent(info[3].As<Napi::Function>());
    ed->resource = Napi::Persistent(Napi::Object::New(env));
    napi_async_init(env, ed->resource.Value(), Napi::String::New(env, "zlink"), &ed->actx);
    /* Never freed: a ZLink thread may still look at `closing` at exit. */
    env.SetInstanceData<zn_env, keep_env>(ed);
    env.AddCleanupHook(env_cleanup, static_cast<void *>(ed));
    zl.zlink_runtime_context_enter();

    Napi::Object v = Napi::Object::New(env);
    v.Set("major", major);
    v.Set("minor", minor);
    v.Set("patch", patch);
    return v;
}

void zn_init_loader(Napi::Env env, Napi::Object exports)
{
    exports.Set("load", Napi::Function::New(env, load));
}

static Napi::Object init(Napi::Env env, Napi::Object exports)
{
    zn_init_loader(env, exports);
    zn_init_framework(env, exports);
    zn_init_core(env, exports);
    return exports;
}

NODE_API_MODULE(zlink, init)
