// zlink/framework.hpp — the framework runtime (zlink/framework.h) in C++:
// host, calls and their terminators, turns and handlers, task_t<T>.
//
// Design notes
//  - A call's application reference (zlink_call_t) is shared by the
//    builder and the task its async() returns (detail::call_ref), so a
//    second terminator on the builder reaches C (which answers
//    INVALID_OPERATION) and task_t::cancel() reaches zlink_call_cancel for
//    as long as either is alive; the last one releases the call.
//  - async() calls zlink_call_start at once (eager). The task completes
//    only from the C completion function, which runs exactly once on the
//    framework's dispatcher thread; no timer, retry or race lives here. A
//    terminator C refuses (start returns non-zero, fn never runs) throws at
//    the call. cancel() and a std::stop_token only call zlink_call_cancel;
//    whether the call ends CANCELLED is C's decision, read from the outcome.
//  - task_t<T> is also a coroutine type (handlers may be coroutines):
//    started eagerly, co_await-able once, get() blocks an application
//    thread. A coroutine awaiting a call resumes on the dispatcher thread
//    (a runtime context, marked by C), so submit() there fails as it must.
//  - Handlers: one C trampoline per registration. A plain handler's turn
//    ends when it returns (failed = 1 with what() when it throws); a
//    coroutine handler's turn ends when its task_t<void> finishes. The
//    binding has no threads of its own, so it marks none as runtime context.
#ifndef ZLINK_FRAMEWORK_HPP
#define ZLINK_FRAMEWORK_HPP

#include <zlink/core.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace zlink {

// A request's reply: payload bytes, packet name and content type.
struct reply_t {
    std::vector<std::byte> payload;
    std::string packet;
    std::string content_type;
    std::string_view text() const noexcept
    {
        return {reinterpret_cast<const char *>(payload.data()), payload.size()};
    }
};

// A copy of a zlink_outcome_t, for submit(callback).
struct outcome_t {
    int result = 0;
    std::uint32_t remote_code = 0;
    std::string message;
    std::optional<reply_t> reply;
    bool ok() const noexcept { return result == 0; }
    bool cancelled() const noexcept { return result == fw::cancelled; }
    std::string_view result_name() const noexcept { return zlink::result_name(result); }
    // The error kind of a failed outcome (not for OK or CANCELLED).
    error_kind kind() const noexcept { return static_cast<error_kind>(result - tables::kind_base); }
    // Throws what the outcome means (nothing for OK).
    void rethrow() const
    {
        if (result != 0)
            throw_framework(result, message, remote_code);
    }
};

namespace detail {

inline outcome_t copy_outcome(const zlink_outcome_t *o)
{
    outcome_t out;
    out.result = o->result;
    out.remote_code = o->remote_code;
    out.message = o->message != nullptr ? o->message : "";
    if (o->result == 0 && o->payload != nullptr) {
        reply_t r;
        auto *p = static_cast<const std::byte *>(o->payload);
        r.payload.assign(p, p + o->payload_size);
        r.packet = o->packet != nullptr ? o->packet : "";
        r.content_type = o->content_type != nullptr ? o->content_type : "";
        out.reply = std::move(r);
    }
    return out;
}

// A NUL-terminated copy of a string_view for one C call: on the stack when
// short (packet names, content types, metadata), so a call's hot path does
// not allocate for them.
class c_str_arg {
public:
    explicit c_str_arg(std::string_view s)
    {
        if (s.find('\0') != std::string_view::npos)
            throw_framework(tables::fw::invalid_argument, "a string passed to C contains a NUL byte");
        if (s.size() < sizeof buf_) {
            if (!s.empty())
                std::memcpy(buf_, s.data(), s.size());
            buf_[s.size()] = '\0';
            p_ = buf_;
        } else {
            heap_.assign(s);
            p_ = heap_.c_str();
        }
    }
    c_str_arg(const c_str_arg &) = delete;
    c_str_arg &operator=(const c_str_arg &) = delete;
    const char *get() const noexcept { return p_; }

private:
    char buf_[64];
    std::string heap_;
    const char *p_;
};

// The application's reference to one C call, shared by builder and task.
struct call_ref {
    zlink_call_t *call;
    explicit call_ref(zlink_call_t *c) noexcept : call(c) {}
    call_ref(const call_ref &) = delete;
    call_ref &operator=(const call_ref &) = delete;
    ~call_ref() { zlink_call_release(call); }
};

// The shared state of a task_t: completed once, by the C completion
// function or by the coroutine that produces it.
template <class T> struct task_state {
    using value_type = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    bool awaited = false;
    std::optional<value_type> value;
    std::exception_ptr error;
    std::coroutine_handle<> waiter;
    std::function<void()> on_done; // runs once, after completion (handlers)
    std::shared_ptr<call_ref> call; // set for a call's task (cancel)
    std::optional<std::stop_callback<std::function<void()>>> stop;

    void complete(std::optional<value_type> v, std::exception_ptr e)
    {
        std::coroutine_handle<> h;
        std::function<void()> f;
        {
            std::lock_guard<std::mutex> g(m);
            value = std::move(v);
            error = std::move(e);
            done = true;
            h = std::exchange(waiter, nullptr);
            f = std::move(on_done);
        }
        cv.notify_all();
        if (f)
            f();
        if (h)
            h.resume();
    }
    // Adds fn to run at completion (at once when already done).
    void then(std::function<void()> fn)
    {
        {
            std::lock_guard<std::mutex> g(m);
            if (!done) {
                on_done = std::move(fn);
                return;
            }
        }
        fn();
    }
};

template <class T> struct call_completion {
    static void fn(zlink_call_t *, const zlink_outcome_t *o, void *user)
    {
        // Owned by this completion: the C runtime runs fn exactly once.
        std::unique_ptr<std::shared_ptr<task_state<T>>> holder(
            static_cast<std::shared_ptr<task_state<T>> *>(user));
        std::shared_ptr<task_state<T>> st = std::move(*holder);
        try {
            deliver(*st, o);
        } catch (...) {
            // from a resumed coroutine of a foreign type: never into C
        }
    }
    static void deliver(task_state<T> &s, const zlink_outcome_t *o)
    {
        task_state<T> *st = &s;
        if (o->result != 0) {
            st->complete(std::nullopt,
                         framework_exception_ptr(o->result, o->message != nullptr ? o->message : "",
                                                 o->remote_code));
            return;
        }
        if constexpr (std::is_void_v<T>) {
            st->complete(std::monostate{}, nullptr);
        } else {
            outcome_t out = copy_outcome(o);
            st->complete(out.reply ? std::move(*out.reply) : reply_t{}, nullptr);
        }
    }
};

} // namespace detail

template <class T = void> class task_t;

namespace detail {
template <class T> struct promise_base {
    std::shared_ptr<task_state<T>> st = std::make_shared<task_state<T>>();
    std::optional<typename task_state<T>::value_type> result;
    std::exception_ptr error;

    task_t<T> get_return_object();
    std::suspend_never initial_suspend() noexcept { return {}; }
    struct final_awaiter {
        bool await_ready() noexcept { return false; }
        template <class P> void await_suspend(std::coroutine_handle<P> h) noexcept
        {
            // The frame goes first; then the state completes (which may
            // resume the awaiting coroutine on this thread).
            auto st = h.promise().st;
            auto result = std::move(h.promise().result);
            auto error = std::move(h.promise().error);
            h.destroy();
            st->complete(std::move(result), std::move(error));
        }
        void await_resume() noexcept {}
    };
    final_awaiter final_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <class T> struct task_promise : promise_base<T> {
    template <class U> void return_value(U &&v) { this->result.emplace(std::forward<U>(v)); }
};
template <> struct task_promise<void> : promise_base<void> {
    void return_void() { this->result.emplace(); }
};
} // namespace detail

// The result of async() and of a coroutine: completes once; co_await it
// once, or get() it (blocks; application threads only).
template <class T> class task_t {
public:
    using state_t = detail::task_state<T>;

    using promise_type = detail::task_promise<T>;

    task_t() = default;
    explicit task_t(std::shared_ptr<state_t> st) noexcept : st_(std::move(st)) {}
    task_t(task_t &&) noexcept = default;
    task_t &operator=(task_t &&) noexcept = default;
    task_t(const task_t &) = delete;
    task_t &operator=(const task_t &) = delete;

    bool valid() const noexcept { return st_ != nullptr; }
    bool done() const
    {
        std::lock_guard<std::mutex> g(st_->m);
        return st_->done;
    }
    // Asks C to cancel the call (zlink_call_cancel); the outcome decides.
    // Only a call's task (async(), yield()) has a call: cancel() on a
    // coroutine's task does nothing (cancel the call it awaits).
    void cancel() const noexcept
    {
        if (st_ && st_->call)
            zlink_call_cancel(st_->call->call);
    }
    // Blocks until done; the value, or the exception. Application threads
    // only: in a runtime context it throws InvalidOperation (it could wait
    // for its own thread).
    T get()
    {
        if (zlink_in_runtime_context())
            throw framework_exception_t(fw::invalid_operation,
                                        "task_t::get() in a runtime context");
        std::unique_lock<std::mutex> g(st_->m);
        st_->cv.wait(g, [&] { return st_->done; });
        g.unlock();
        return take();
    }
    // Waits up to d; true when done.
    template <class R, class P> bool wait_for(std::chrono::duration<R, P> d) const
    {
        std::unique_lock<std::mutex> g(st_->m);
        return st_->cv.wait_for(g, d, [&] { return st_->done; });
    }

    bool await_ready() const
    {
        std::lock_guard<std::mutex> g(st_->m);
        return st_->done;
    }
    bool await_suspend(std::coroutine_handle<> h)
    {
        std::lock_guard<std::mutex> g(st_->m);
        if (st_->done)
            return false;
        if (st_->awaited)
            throw framework_exception_t(fw::invalid_operation, "task_t awaited twice");
        st_->awaited = true;
        st_->waiter = h;
        return true;
    }
    T await_resume() { return take(); }

    const std::shared_ptr<state_t> &state() const noexcept { return st_; }

private:
    // A completed task reads the same every time (a copy of its value),
    // unless the value cannot be copied (then it is moved out once).
    T take()
    {
        if (st_->error)
            std::rethrow_exception(st_->error);
        if constexpr (std::is_void_v<T>)
            return;
        else if constexpr (std::is_copy_constructible_v<T>)
            return *st_->value;
        else
            return std::move(*st_->value);
    }
    std::shared_ptr<state_t> st_;
};

template <class T> task_t<T> detail::promise_base<T>::get_return_object()
{
    return task_t<T>(st);
}

class host;
class turn;

// A call being built, then finished by one terminator. T is the value of
// its task: reply_t for requests, void for sends and replies.
template <class T> class call_t {
public:
    explicit call_t(zlink_call_t *c) : ref_(std::make_shared<detail::call_ref>(c)) {}

    call_t &payload(std::string_view packet, std::span<const std::byte> bytes,
                    std::string_view content_type = {}) &
    {
        detail::c_str_arg p(packet), ct(content_type);
        detail::fw_check(zlink_call_set_payload(ref_->call, p.get(), ct.get(), bytes.data(),
                                                bytes.size()),
                         "zlink_call_set_payload");
        return *this;
    }
    call_t &payload(std::string_view packet, std::string_view text,
                    std::string_view content_type = {}) &
    {
        return payload(packet, std::as_bytes(std::span(text)), content_type);
    }
    call_t &&payload(std::string_view packet, std::span<const std::byte> bytes,
                     std::string_view content_type = {}) &&
    {
        return std::move(payload(packet, bytes, content_type));
    }
    call_t &&payload(std::string_view packet, std::string_view text,
                     std::string_view content_type = {}) &&
    {
        return std::move(payload(packet, std::as_bytes(std::span(text)), content_type));
    }
    call_t &metadata(std::string_view key, std::string_view value) &
    {
        detail::c_str_arg k(key), v(value);
        detail::fw_check(zlink_call_set_metadata(ref_->call, k.get(), v.get()),
                         "zlink_call_set_metadata");
        return *this;
    }
    call_t &&metadata(std::string_view key, std::string_view value) &&
    {
        return std::move(metadata(key, value));
    }
    // The whole-call timeout of a request (C refuses it on a send).
    template <class R, class P> call_t &timeout(std::chrono::duration<R, P> d) &
    {
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
        detail::fw_check(zlink_call_set_timeout(ref_->call, static_cast<std::int64_t>(ns)),
                         "zlink_call_set_timeout");
        return *this;
    }
    template <class R, class P> call_t &&timeout(std::chrono::duration<R, P> d) &&
    {
        return std::move(timeout(d));
    }

    // General async / one-way submit: starts now; the task completes once.
    task_t<T> async(std::stop_token stop = {})
    {
        auto st = std::make_shared<detail::task_state<T>>();
        st->call = ref_;
        if (stop.stop_possible()) {
            zlink_call_t *c = ref_->call;
            st->stop.emplace(std::move(stop), std::function<void()>([c] { zlink_call_cancel(c); }));
        }
        start_into(st, &zlink_call_start);
        return task_t<T>(std::move(st));
    }
    // Yield: INVALID_OPERATION in this version (no Spot turns); nothing sent.
    task_t<T> yield()
    {
        auto st = std::make_shared<detail::task_state<T>>();
        st->call = ref_;
        start_into(st, &zlink_call_yield);
        return task_t<T>(std::move(st));
    }
    // Synchronous: blocks until the outcome. Application threads only (C
    // answers INVALID_OPERATION in a runtime context).
    T submit()
    {
        zlink_outcome_t o{};
        o.struct_size = sizeof o;
        int r = zlink_call_wait(ref_->call, &o);
        if (r != 0)
            throw_framework(r, o.message != nullptr && o.message[0] != '\0' ? o.message
                                                                             : "zlink_call_wait",
                            o.remote_code);
        if constexpr (!std::is_void_v<T>) {
            outcome_t out = detail::copy_outcome(&o);
            return out.reply ? std::move(*out.reply) : reply_t{};
        }
    }
    // Starts now; cb(outcome) runs once on the dispatcher thread.
    void submit(std::function<void(const outcome_t &)> cb)
    {
        auto *holder = new std::function<void(const outcome_t &)>(std::move(cb));
        auto fn = [](zlink_call_t *, const zlink_outcome_t *o, void *user) {
            std::unique_ptr<std::function<void(const outcome_t &)>> f(
                static_cast<std::function<void(const outcome_t &)> *>(user));
            // An exception must not cross into C: it ends this callback only
            // (the next completion still runs).
            try {
                (*f)(detail::copy_outcome(o));
            } catch (...) {
            }
        };
        int r = zlink_call_start(ref_->call, fn, holder);
        if (r != 0) {
            delete holder;
            throw_framework(r, "zlink_call_start");
        }
    }
    // Starts now and leaves the outcome to nobody (zlink_call_start with no
    // completion function): a reply or one-way whose result the caller does
    // not want. A refusal throws like async()'s.
    void start_detached()
    {
        int r = zlink_call_start(ref_->call, nullptr, nullptr);
        if (r != 0)
            throw_framework(r, "zlink_call_start");
    }
    // Cancels the call (zlink_call_cancel), before or after its terminator.
    void cancel() noexcept { zlink_call_cancel(ref_->call); }
    zlink_call_t *handle() const noexcept { return ref_->call; }

private:
    using start_fn = zlink_fw_result_t (*)(zlink_call_t *, zlink_completion_fn, void *);
    void start_into(const std::shared_ptr<detail::task_state<T>> &st, start_fn start)
    {
        auto *holder = new std::shared_ptr<detail::task_state<T>>(st);
        int r = start(ref_->call, &detail::call_completion<T>::fn, holder);
        if (r != 0) {
            delete holder;
            st->stop.reset();
            throw_framework(r, start == &zlink_call_start ? "zlink_call_start"
                                                          : "zlink_call_yield");
        }
    }
    std::shared_ptr<detail::call_ref> ref_;
};

using send_call_t = call_t<void>;
using request_call_t = call_t<reply_t>;
using reply_call_t = call_t<void>;

// A handler's turn: the record and the gate, open until it ends. Its
// accessors' views are valid until then. Usable from any thread.
class turn {
public:
    explicit turn(zlink_turn_t *t) noexcept : t_(t) {}
    turn(const turn &) = delete;
    turn &operator=(const turn &) = delete;

    zlink_message_kind_t kind() const noexcept
    {
        return static_cast<zlink_message_kind_t>(zlink_turn_kind(t_));
    }
    bool is_request() const noexcept { return kind() == ZLINK_MESSAGE_REQUEST; }
    std::string_view packet() const noexcept { return cstr(zlink_turn_packet(t_)); }
    std::string_view content_type() const noexcept { return cstr(zlink_turn_content_type(t_)); }
    std::span<const std::byte> payload() const noexcept
    {
        std::size_t n = 0;
        const void *p = zlink_turn_payload(t_, &n);
        return {static_cast<const std::byte *>(p), p != nullptr ? n : 0};
    }
    std::string_view text() const noexcept
    {
        auto b = payload();
        return {reinterpret_cast<const char *>(b.data()), b.size()};
    }
    std::optional<std::string_view> metadata(const std::string &key) const noexcept
    {
        const char *v = zlink_turn_metadata(t_, detail::fw_text(key));
        if (v == nullptr)
            return std::nullopt;
        return std::string_view(v);
    }
    routing_id source() const
    {
        routing_id rid;
        detail::fw_check(zlink_turn_source(t_, rid.raw()), "zlink_turn_source");
        return rid;
    }
    std::uint64_t sequence() const noexcept { return zlink_turn_sequence(t_); }

    // A reply call (finish it with async(), submit() or submit(cb)).
    reply_call_t reply()
    {
        zlink_fw_result_t r = ZLINK_FW_OK;
        zlink_call_t *c = zlink_turn_reply(t_, &r);
        if (c == nullptr)
            throw_framework(r, "zlink_turn_reply");
        return reply_call_t(c);
    }
    reply_call_t reply_error(error_kind k, const std::string &message)
    {
        zlink_fw_result_t r = ZLINK_FW_OK;
        zlink_call_t *c =
            zlink_turn_reply_error(t_, static_cast<zlink_error_kind_t>(k), detail::fw_text(message), &r);
        if (c == nullptr)
            throw_framework(r, "zlink_turn_reply_error");
        return reply_call_t(c);
    }
    // Answers the request and ends the turn (zlink_turn_respond).
    void respond(std::string_view packet, std::span<const std::byte> bytes,
                 std::string_view content_type = {})
    {
        detail::c_str_arg p(packet), ct(content_type);
        int r = zlink_turn_respond(t_, p.get(), ct.get(), bytes.data(), bytes.size());
        if (r == 0 || r == fw::unavailable || r == fw::shutting_down)
            ended_ = true;
        detail::fw_check(r, "zlink_turn_respond");
    }
    void respond(std::string_view packet, std::string_view text, std::string_view content_type = {})
    {
        respond(packet, std::as_bytes(std::span(text)), content_type);
    }
    // Ends the turn now (the handler's return does it otherwise).
    void end(bool failed = false, const std::string &message = {})
    {
        if (ended_)
            return;
        ended_ = true;
        detail::fw_check(zlink_turn_end(t_, failed ? 1 : 0, failed ? detail::fw_text(message) : nullptr),
                         "zlink_turn_end");
    }
    bool ended() const noexcept { return ended_; }
    zlink_turn_t *handle() const noexcept { return t_; }

private:
    static std::string_view cstr(const char *s) noexcept { return s != nullptr ? s : ""; }
    zlink_turn_t *t_;
    bool ended_ = false;
};

// Who owns a handler: a channel (CS server or mesh channel server) or a
// mesh node (node-direct records).
struct owner {
    zlink_owner_kind_t kind;
    std::string name;
    static owner channel(std::string name) { return {ZLINK_OWNER_CHANNEL, std::move(name)}; }
    static owner node(std::string mesh) { return {ZLINK_OWNER_NODE, std::move(mesh)}; }
};

enum class host_option : int {
    default_request_timeout = ZLINK_HOST_OPT_DEFAULT_REQUEST_TIMEOUT,
    default_send_timeout = ZLINK_HOST_OPT_DEFAULT_SEND_TIMEOUT,
    shutdown_timeout = ZLINK_HOST_OPT_SHUTDOWN_TIMEOUT,
    admission_waiters = ZLINK_HOST_OPT_ADMISSION_WAITERS,
    max_queued_jobs = ZLINK_HOST_OPT_MAX_QUEUED_JOBS,
    handler_threads = ZLINK_HOST_OPT_HANDLER_THREADS,
    job_queue_profile = ZLINK_HOST_OPT_JOB_QUEUE_PROFILE,
    pause_percent = ZLINK_HOST_OPT_PAUSE_PERCENT,
    resume_percent = ZLINK_HOST_OPT_RESUME_PERCENT,
    effective_processors = ZLINK_HOST_OPT_EFFECTIVE_PROCESSORS,
    core_hwm_profile = ZLINK_HOST_OPT_CORE_HWM_PROFILE,
    core_budget_bytes = ZLINK_HOST_OPT_CORE_BUDGET_BYTES,
    core_memory_limit_bytes = ZLINK_HOST_OPT_CORE_MEMORY_LIMIT_BYTES,
};

enum class node_option : int {
    send_timeout = ZLINK_NODE_OPT_SEND_TIMEOUT,
    request_timeout = ZLINK_NODE_OPT_REQUEST_TIMEOUT,
    sndhwm = ZLINK_NODE_OPT_SNDHWM,
    rcvhwm = ZLINK_NODE_OPT_RCVHWM,
};

using host_status_t = zlink_host_status_t;
using host_capacity_t = zlink_host_capacity_t;
using owner_status_t = zlink_owner_status_t;

namespace detail {
template <class D> std::int64_t ns(D d)
{
    return static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

// One registered handler: kept by the host until it is destroyed.
struct handler_entry {
    std::function<void(turn &)> plain;
    std::function<task_t<void>(turn &)> coro;

    static void trampoline(zlink_turn_t *t, void *user)
    {
        auto *e = static_cast<handler_entry *>(user);
        if (e->plain) {
            turn tn(t);
            try {
                e->plain(tn);
            } catch (const std::exception &ex) {
                fail(tn, ex.what());
                return;
            } catch (...) {
                fail(tn, "unknown exception");
                return;
            }
            if (!tn.ended())
                zlink_turn_end(t, 0, nullptr);
            return;
        }
        // A coroutine: the turn stays open until its task finishes.
        auto tn = std::make_shared<turn>(t);
        task_t<void> task;
        try {
            task = e->coro(*tn);
        } catch (const std::exception &ex) {
            fail(*tn, ex.what());
            return;
        } catch (...) {
            fail(*tn, "unknown exception");
            return;
        }
        auto st = task.state();
        st->then([tn, st] {
            std::string why;
            if (st->error) {
                try {
                    std::rethrow_exception(st->error);
                } catch (const std::exception &ex) {
                    why = ex.what();
                } catch (...) {
                    why = "unknown exception";
                }
                fail(*tn, why);
            } else if (!tn->ended()) {
                zlink_turn_end(tn->handle(), 0, nullptr);
            }
        });
    }
    static void fail(turn &tn, const std::string &why)
    {
        if (!tn.ended())
            zlink_turn_end(tn.handle(), 1, detail::fw_text(why));
    }
};
} // namespace detail

// A framework host: configure (PREPARING), start, serve, shut down.
class host {
public:
    explicit host(const std::string &name)
    {
        check_library();
        zlink_fw_result_t r = ZLINK_FW_OK;
        h_ = zlink_host_new(detail::fw_text(name), &r);
        if (h_ == nullptr)
            throw_framework(r, "zlink_host_new");
    }
    host(host &&o) noexcept : h_(std::exchange(o.h_, nullptr)), handlers_(std::move(o.handlers_)) {}
    host(const host &) = delete;
    host &operator=(const host &) = delete;
    host &operator=(host &&) = delete;
    // Destroys the host (a SERVING one is shut down first, which needs an
    // application thread). If C refuses (a runtime context), the host and
    // its handlers are left alive rather than freed under it.
    ~host()
    {
        if (h_ == nullptr)
            return;
        if (zlink_host_destroy(h_) != 0)
            for (auto &e : handlers_)
                e.release();
    }
    zlink_host_t *handle() const noexcept { return h_; }

    host &set_option(host_option o, std::int64_t v)
    {
        detail::fw_check(zlink_host_set_option(h_, static_cast<int>(o), v), "zlink_host_set_option");
        return *this;
    }
    template <class R, class P> host &set_option(host_option o, std::chrono::duration<R, P> d)
    {
        return set_option(o, detail::ns(d));
    }
    std::int64_t option(host_option o) const
    {
        std::int64_t v = 0;
        detail::fw_check(zlink_host_get_option(h_, static_cast<int>(o), &v), "zlink_host_get_option");
        return v;
    }

    host &add_cs_server(const std::string &channel, const std::string &endpoint)
    {
        detail::fw_check(zlink_host_add_cs_server(h_, detail::fw_text(channel), detail::fw_text(endpoint)),
                         "zlink_host_add_cs_server");
        return *this;
    }
    host &add_cs_client(const std::string &channel, const std::string &endpoint)
    {
        detail::fw_check(zlink_host_add_cs_client(h_, detail::fw_text(channel), detail::fw_text(endpoint)),
                         "zlink_host_add_cs_client");
        return *this;
    }
    host &set_channel_option(const std::string &channel, node_option o, std::int64_t v)
    {
        detail::fw_check(zlink_channel_set_option(h_, detail::fw_text(channel), static_cast<int>(o), v),
                         "zlink_channel_set_option");
        return *this;
    }
    std::int64_t channel_option(const std::string &channel, node_option o) const
    {
        std::int64_t v = 0;
        detail::fw_check(zlink_channel_get_option(h_, detail::fw_text(channel), static_cast<int>(o), &v),
                         "zlink_channel_get_option");
        return v;
    }
    host &add_mesh_node(const std::string &mesh, const routing_id &rid,
                        const std::optional<std::string> &listen = std::nullopt)
    {
        detail::fw_check(zlink_host_add_mesh_node(h_, detail::fw_text(mesh), rid.raw()->data, rid.size(),
                                                  listen ? detail::fw_text(*listen) : nullptr),
                         "zlink_host_add_mesh_node");
        return *this;
    }
    host &mesh_connect(const std::string &mesh, const std::string &endpoint, const routing_id &peer)
    {
        detail::fw_check(zlink_mesh_connect(h_, detail::fw_text(mesh), detail::fw_text(endpoint), peer.raw()->data,
                                            peer.size()),
                         "zlink_mesh_connect");
        return *this;
    }
    host &set_mesh_option(const std::string &mesh, node_option o, std::int64_t v)
    {
        detail::fw_check(zlink_mesh_set_option(h_, detail::fw_text(mesh), static_cast<int>(o), v),
                         "zlink_mesh_set_option");
        return *this;
    }
    std::int64_t mesh_option(const std::string &mesh, node_option o) const
    {
        std::int64_t v = 0;
        detail::fw_check(zlink_mesh_get_option(h_, detail::fw_text(mesh), static_cast<int>(o), &v),
                         "zlink_mesh_get_option");
        return v;
    }
    host &add_mesh_channel_client(const std::string &mesh, const std::string &channel)
    {
        detail::fw_check(zlink_mesh_add_channel_client(h_, detail::fw_text(mesh), detail::fw_text(channel)),
                         "zlink_mesh_add_channel_client");
        return *this;
    }
    host &add_mesh_channel_server(const std::string &mesh, const std::string &channel,
                                  int weight = ZLINK_WEIGHT_DFLT)
    {
        detail::fw_check(zlink_mesh_add_channel_server(h_, detail::fw_text(mesh), detail::fw_text(channel), weight),
                         "zlink_mesh_add_channel_server");
        return *this;
    }
    host &set_mesh_weight(const std::string &mesh, const std::string &channel, int weight)
    {
        detail::fw_check(zlink_mesh_set_weight(h_, detail::fw_text(mesh), detail::fw_text(channel), weight),
                         "zlink_mesh_set_weight");
        return *this;
    }

    // Handlers: fn(turn&) returning void (the turn ends when it returns) or
    // task_t<void> (the turn ends when the coroutine finishes).
    template <class F> host &on_request(const owner &o, const std::string &packet, F &&fn)
    {
        return add_handler(o, ZLINK_MESSAGE_REQUEST, packet, std::forward<F>(fn));
    }
    template <class F> host &on_send(const owner &o, const std::string &packet, F &&fn)
    {
        return add_handler(o, ZLINK_MESSAGE_SEND, packet, std::forward<F>(fn));
    }

    void start() { detail::fw_check(zlink_host_start(h_), "zlink_host_start"); }
    // Graceful shutdown; deadline 0 = the SHUTDOWN_TIMEOUT option.
    // Application threads only (C answers INVALID_OPERATION elsewhere).
    template <class R = std::int64_t, class P = std::nano>
    void shutdown(std::chrono::duration<R, P> deadline = std::chrono::nanoseconds(0))
    {
        detail::fw_check(zlink_host_shutdown(h_, detail::ns(deadline)), "zlink_host_shutdown");
    }
    zlink_host_state_t state() const noexcept
    {
        return static_cast<zlink_host_state_t>(zlink_host_state(h_));
    }
    host_status_t status() const
    {
        host_status_t s{};
        s.struct_size = sizeof s;
        detail::fw_check(zlink_host_status(h_, &s), "zlink_host_status");
        return s;
    }
    host_capacity_t capacity() const
    {
        host_capacity_t c{};
        c.struct_size = sizeof c;
        detail::fw_check(zlink_host_capacity(h_, &c), "zlink_host_capacity");
        return c;
    }
    owner_status_t owner_status(const owner &o) const
    {
        owner_status_t s{};
        s.struct_size = sizeof s;
        detail::fw_check(zlink_host_owner_status(h_, o.kind, detail::fw_text(o.name), &s),
                         "zlink_host_owner_status");
        return s;
    }
    void reset_metrics() { detail::fw_check(zlink_host_reset_metrics(h_), "zlink_host_reset_metrics"); }
    std::int64_t metric(const std::string &name, const std::string &labels = {}) const
    {
        std::int64_t v = 0;
        detail::fw_check(zlink_host_metric(h_, detail::fw_text(name), detail::fw_text(labels), &v), "zlink_host_metric");
        return v;
    }
    std::string endpoint(const std::string &name) const
    {
        char buf[512];
        detail::fw_check(zlink_host_endpoint(h_, detail::fw_text(name), buf, sizeof buf),
                         "zlink_host_endpoint");
        return buf;
    }
    int ready_peers(const std::string &mesh) const
    {
        zlink_fw_result_t r = ZLINK_FW_OK;
        int n = zlink_mesh_ready_peers(h_, detail::fw_text(mesh), &r);
        if (n < 0)
            throw_framework(r, "zlink_mesh_ready_peers");
        return n;
    }

    // Call builders.
    send_call_t send_to_channel(const std::string &channel)
    {
        zlink_fw_result_t r = ZLINK_FW_OK;
        return send_call_t(built(zlink_call_send_to_channel(h_, detail::fw_text(channel), &r), r));
    }
    request_call_t request_to_channel(const std::string &channel)
    {
        zlink_fw_result_t r = ZLINK_FW_OK;
        return request_call_t(built(zlink_call_request_to_channel(h_, detail::fw_text(channel), &r), r));
    }
    send_call_t send_to_node(const std::string &mesh, const routing_id &rid)
    {
        zlink_fw_result_t r = ZLINK_FW_OK;
        return send_call_t(
            built(zlink_call_send_to_node(h_, detail::fw_text(mesh), rid.raw()->data, rid.size(), &r), r));
    }
    request_call_t request_to_node(const std::string &mesh, const routing_id &rid)
    {
        zlink_fw_result_t r = ZLINK_FW_OK;
        return request_call_t(
            built(zlink_call_request_to_node(h_, detail::fw_text(mesh), rid.raw()->data, rid.size(), &r), r));
    }

private:
    static zlink_call_t *built(zlink_call_t *c, zlink_fw_result_t r)
    {
        if (c == nullptr)
            throw_framework(r, "call builder");
        return c;
    }
    template <class F>
    host &add_handler(const owner &o, zlink_message_kind_t kind, const std::string &packet, F &&fn)
    {
        auto e = std::make_unique<detail::handler_entry>();
        using R = std::invoke_result_t<F &, turn &>;
        if constexpr (std::is_same_v<R, task_t<void>>)
            e->coro = std::forward<F>(fn);
        else
            e->plain = std::forward<F>(fn);
        detail::fw_check(zlink_host_add_handler(h_, o.kind, detail::fw_text(o.name), kind, detail::fw_text(packet),
                                                &detail::handler_entry::trampoline, e.get()),
                         "zlink_host_add_handler");
        handlers_.push_back(std::move(e));
        return *this;
    }

    zlink_host_t *h_ = nullptr;
    std::vector<std::unique_ptr<detail::handler_entry>> handlers_;
};

// The runtime-context mark of the calling thread (for threads of the
// application's own that run handler code).
inline void runtime_context_enter() { detail::fw_check(zlink_runtime_context_enter(), "enter"); }
inline void runtime_context_leave() { detail::fw_check(zlink_runtime_context_leave(), "leave"); }
inline bool in_runtime_context() noexcept { return zlink_in_runtime_context() != 0; }

} // namespace zlink

#endif // ZLINK_FRAMEWORK_HPP
