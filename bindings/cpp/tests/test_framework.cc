// test_framework.cc — the framework through the C++ binding: completions
// reach C++ exactly once (success, cancel, timeout, host shutdown during a
// send), submit() in a handler and in a completion callback is
// InvalidOperation, co_await of a request's reply, a coroutine handler keeps
// its turn (the gate's next record waits for it), a handler exception is
// InternalFailure to the requester, a second terminator is
// InvalidOperation, yield() is InvalidOperation.
//
// "Exactly once" is read after the caller's host is shut down: shutdown
// returns only once every completion function has run, so a second
// delivery would have been counted by then.
#include "check.hpp"

#include <zlink/json.hpp>
#include <zlink/zlink.hpp>

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

// A latch the test opens; handlers wait on it (application-controlled hold).
struct gate_t {
    std::mutex m;
    std::condition_variable cv;
    bool open = false;
    int waiting = 0;
    void pass()
    {
        std::unique_lock<std::mutex> g(m);
        waiting++;
        cv.notify_all();
        cv.wait(g, [&] { return open; });
        waiting--;
    }
    void release()
    {
        std::lock_guard<std::mutex> g(m);
        open = true;
        cv.notify_all();
    }
    bool wait_waiting(int n)
    {
        std::unique_lock<std::mutex> g(m);
        return cv.wait_for(g, zt::bound(5000), [&] { return waiting >= n; });
    }
};

// A counter of completions (submit(cb) callbacks).
struct counter_t {
    std::mutex m;
    std::condition_variable cv;
    int calls = 0;
    int last_result = -1;
    void add(const zlink::outcome_t &o)
    {
        std::lock_guard<std::mutex> g(m);
        calls++;
        last_result = o.result;
        cv.notify_all();
    }
    bool wait(int n, std::chrono::milliseconds d)
    {
        std::unique_lock<std::mutex> g(m);
        return cv.wait_for(g, d, [&] { return calls >= n; });
    }
    int count()
    {
        std::lock_guard<std::mutex> g(m);
        return calls;
    }
};

// An awaitable the test resumes from its own thread.
struct manual_event {
    std::mutex m;
    std::coroutine_handle<> h;
    bool set = false;
    struct awaiter {
        manual_event &e;
        bool await_ready()
        {
            std::lock_guard<std::mutex> g(e.m);
            return e.set;
        }
        bool await_suspend(std::coroutine_handle<> h)
        {
            std::lock_guard<std::mutex> g(e.m);
            if (e.set)
                return false;
            e.h = h;
            return true;
        }
        void await_resume() {}
    };
    awaiter operator co_await() { return {*this}; }
    bool suspended()
    {
        std::lock_guard<std::mutex> g(m);
        return h != nullptr;
    }
    void fire()
    {
        std::coroutine_handle<> h2;
        {
            std::lock_guard<std::mutex> g(m);
            set = true;
            h2 = std::exchange(h, nullptr);
        }
        if (h2)
            h2.resume();
    }
};

std::string tcp_any() { return "tcp://127.0.0.1:0"; }

// Host B serves channel "svc" (ClientServer); A is its client.
struct pair_t {
    std::unique_ptr<zlink::host> b;
    std::unique_ptr<zlink::host> a;
};

template <class Setup> pair_t make_pair_hosts(Setup setup, std::int64_t max_jobs = 0)
{
    pair_t p;
    p.b = std::make_unique<zlink::host>("B");
    if (max_jobs > 0)
        p.b->set_option(zlink::host_option::max_queued_jobs, max_jobs);
    p.b->add_cs_server("svc", tcp_any());
    setup(*p.b);
    p.b->start();
    std::string ep = p.b->endpoint("svc");
    p.a = std::make_unique<zlink::host>("A");
    p.a->add_cs_client("svc", ep);
    p.a->start();
    return p;
}

const zlink::owner svc = zlink::owner::channel("svc");

void request_success_once_and_co_await()
{
    auto p = make_pair_hosts([](zlink::host &b) {
        b.on_request(svc, "Echo", [](zlink::turn &t) {
            t.respond("EchoReply", std::string("re:") + std::string(t.text()), "text/plain");
        });
        b.on_request(svc, "Detached", [](zlink::turn &t) {
            t.reply().payload("R", std::string("d:") + std::string(t.text())).start_detached();
        });
        b.on_request(svc, "Add", [](zlink::turn &t) {
            auto in = zlink::from_json(t);
            zlink::respond_json(t, "Sum", {{"sum", in.at("a").get<int>() + in.at("b").get<int>()}});
        });
    });
    counter_t n;
    p.a->request_to_channel("svc").payload("Echo", "cb").submit([&](const zlink::outcome_t &o) {
        n.add(o);
    });
    ZT_CHECK(n.wait(1, zt::bound(5000)));

    // co_await in a coroutine; get() on this application thread.
    auto co = [](zlink::host &a) -> zlink::task_t<std::string> {
        zlink::reply_t r = co_await a.request_to_channel("svc").payload("Echo", "co").timeout(5s).async();
        co_return r.packet + "/" + r.content_type + "/" + std::string(r.text());
    };
    ZT_EQ(co(*p.a).get(), std::string("EchoReply/text/plain/re:co"));
    // submit() blocks an application thread.
    zlink::reply_t s = p.a->request_to_channel("svc").payload("Echo", "sync").submit();
    ZT_EQ(std::string(s.text()), std::string("re:sync"));
    // A reply call started with nobody wanting its outcome.
    ZT_EQ(std::string(p.a->request_to_channel("svc").payload("Detached", "x").submit().text()),
          std::string("d:x"));
    // JSON helpers: a typed payload out, a typed reply back.
    auto jcall = p.a->request_to_channel("svc");
    zlink::json_payload(jcall, "Add", nlohmann::json{{"a", 2}, {"b", 3}});
    auto j = zlink::from_json(jcall.submit());
    ZT_EQ(j.at("sum").get<int>(), 5);
    p.a->shutdown(zt::bound(2000));
    ZT_EQ(n.count(), 1);
    ZT_EQ(n.last_result, 0);
    p.b->shutdown(zt::bound(2000));
}

void cancel_and_timeout_once()
{
    gate_t gate;
    auto p = make_pair_hosts([&](zlink::host &b) {
        b.on_request(svc, "Hold", [&](zlink::turn &t) {
            gate.pass();
            t.respond("R", "late");
        });
    });
    // Cancel: the task ends with the cancelled type, once.
    std::atomic<int> cancelled_calls{0};
    auto t1 = p.a->request_to_channel("svc").payload("Hold", "c").timeout(10s).async();
    ZT_CHECK(gate.wait_waiting(1));
    counter_t n_cancel;
    // A second completion counter for the same kind of race via submit(cb).
    t1.cancel();
    try {
        t1.get();
        ZT_CHECK(!"a cancelled request returned a value");
    } catch (const zlink::cancelled_exception_t &) {
        cancelled_calls++;
    }
    ZT_EQ(cancelled_calls.load(), 1);
    // Timeout: DeadlineExceeded, once (the handler is still held).
    counter_t n_timeout;
    p.a->request_to_channel("svc").payload("Hold", "t").timeout(50ms).submit(
        [&](const zlink::outcome_t &o) { n_timeout.add(o); });
    ZT_CHECK(n_timeout.wait(1, zt::bound(5000)));
    ZT_EQ(n_timeout.last_result, zlink::fw::deadline_exceeded);
    // std::stop_token cancellation.
    std::stop_source src;
    counter_t n_stop;
    auto t3 = p.a->request_to_channel("svc").payload("Hold", "s").timeout(10s).async(src.get_token());
    src.request_stop();
    ZT_THROWS(zlink::cancelled_exception_t, t3.get(), true);
    // A pre-cancelled stop token: the terminator refuses at once.
    std::stop_source pre;
    pre.request_stop();
    ZT_THROWS(zlink::cancelled_exception_t,
              p.a->request_to_channel("svc").payload("Hold", "p").async(pre.get_token()), true);
    gate.release();
    p.a->shutdown(zt::bound(2000));
    ZT_EQ(n_timeout.count(), 1);
    ZT_CHECK(t1.done());
    p.b->shutdown(zt::bound(2000));
}

void sync_terminator_in_runtime_context()
{
    std::atomic<int> handler_kind{-1}, callback_kind{-1}, shutdown_kind{-1};
    zlink::host *client = nullptr;
    auto p = make_pair_hosts([&](zlink::host &b) {
        b.on_request(svc, "Nested", [&](zlink::turn &t) {
            try {
                client->send_to_channel("svc").payload("Other", "x").submit();
            } catch (const zlink::framework_exception_t &e) {
                handler_kind = static_cast<int>(e.kind());
            }
            t.respond("R", "ok");
        });
        b.on_request(svc, "Echo", [](zlink::turn &t) { t.respond("R", t.text()); });
    });
    client = p.a.get();
    ZT_EQ(std::string(p.a->request_to_channel("svc").payload("Nested", "n").submit().text()), std::string("ok"));
    ZT_EQ(handler_kind.load(), static_cast<int>(zlink::error_kind::invalid_operation));
    // In a completion callback (the dispatcher, a runtime context).
    counter_t n;
    p.a->request_to_channel("svc").payload("Echo", "e").submit([&](const zlink::outcome_t &o) {
        try {
            p.a->request_to_channel("svc").payload("Echo", "inner").submit();
        } catch (const zlink::framework_exception_t &e) {
            callback_kind = static_cast<int>(e.kind());
        }
        try {
            p.a->shutdown(1s);
        } catch (const zlink::framework_exception_t &e) {
            shutdown_kind = static_cast<int>(e.kind());
        }
        n.add(o);
    });
    ZT_CHECK(n.wait(1, zt::bound(5000)));
    ZT_EQ(callback_kind.load(), static_cast<int>(zlink::error_kind::invalid_operation));
    ZT_EQ(shutdown_kind.load(), static_cast<int>(zlink::error_kind::invalid_operation));
    // A second terminator, and yield() outside a Spot turn.
    auto call = p.a->request_to_channel("svc");
    call.payload("Echo", "twice");
    auto first = call.async();
    ZT_THROWS(zlink::framework_exception_t, call.async(),
              e.kind() == zlink::error_kind::invalid_operation);
    ZT_THROWS(zlink::framework_exception_t, call.submit(),
              e.kind() == zlink::error_kind::invalid_operation);
    ZT_EQ(std::string(first.get().text()), std::string("twice"));
    auto y = p.a->request_to_channel("svc");
    y.payload("Echo", "y");
    ZT_THROWS(zlink::framework_exception_t, y.yield(),
              e.kind() == zlink::error_kind::invalid_operation);
    // The call is still unfinished after the refused yield: it may start.
    ZT_EQ(std::string(y.submit().text()), std::string("y"));
    p.a->shutdown(zt::bound(2000));
    p.b->shutdown(zt::bound(2000));
}

void handler_exception_is_internal_failure()
{
    auto p = make_pair_hosts([](zlink::host &b) {
        b.on_request(svc, "Boom", [](zlink::turn &) { throw std::runtime_error("boom"); });
        b.on_request(svc, "CoBoom", [](zlink::turn &) -> zlink::task_t<void> {
            throw std::runtime_error("coboom");
            co_return;
        });
        b.on_request(svc, "NoReply", [](zlink::turn &) {});
    });
    ZT_THROWS(zlink::framework_exception_t, p.a->request_to_channel("svc").payload("Boom", "x").submit(),
              e.kind() == zlink::error_kind::internal_failure);
    ZT_THROWS(zlink::framework_exception_t,
              p.a->request_to_channel("svc").payload("CoBoom", "x").submit(),
              e.kind() == zlink::error_kind::internal_failure);
    ZT_THROWS(zlink::framework_exception_t,
              p.a->request_to_channel("svc").payload("NoReply", "x").submit(),
              e.kind() == zlink::error_kind::internal_failure);
    ZT_THROWS(zlink::framework_exception_t,
              p.a->request_to_channel("svc").payload("Unknown", "x").submit(),
              e.kind() == zlink::error_kind::not_found);
    ZT_THROWS(zlink::framework_exception_t, p.a->request_to_channel("nochannel"
                                                                    ).payload("X", "x").submit(),
              e.kind() == zlink::error_kind::not_found);
    p.a->shutdown(zt::bound(2000));
    p.b->shutdown(zt::bound(2000));
}

void coroutine_handler_keeps_its_turn()
{
    manual_event ev;
    std::atomic<int> second_started{0};
    std::atomic<std::uint64_t> first_seq{0}, second_seq{0};
    auto p = make_pair_hosts([&](zlink::host &b) {
        b.on_request(svc, "Slow", [&](zlink::turn &t) -> zlink::task_t<void> {
            first_seq = t.sequence();
            co_await ev; // resumed by the test's thread
            t.respond("R", "slow");
        });
        b.on_request(svc, "Fast", [&](zlink::turn &t) {
            second_started++;
            second_seq = t.sequence();
            t.respond("R", "fast");
        });
    });
    auto slow = p.a->request_to_channel("svc").payload("Slow", "1").timeout(10s).async();
    ZT_EVENTUALLY(ev.suspended(), 5000);
    // The handler function returned, the coroutine is suspended: its turn
    // is still open (busy), and the next record of the gate is queued.
    auto fast = p.a->request_to_channel("svc").payload("Fast", "2").timeout(10s).async();
    ZT_EVENTUALLY(p.b->owner_status(svc).queued_records == 1, 5000);
    auto st = p.b->owner_status(svc);
    ZT_EQ(st.busy, 1);
    ZT_EQ(st.running_records, 1u);
    ZT_EQ(second_started.load(), 0);
    ZT_CHECK(!slow.done());
    ZT_CHECK(!fast.done());
    ev.fire(); // the coroutine responds and finishes on this thread
    ZT_EQ(std::string(slow.get().text()), std::string("slow"));
    ZT_EQ(std::string(fast.get().text()), std::string("fast"));
    ZT_EQ(second_started.load(), 1);
    ZT_CHECK(second_seq.load() > first_seq.load());
    p.a->shutdown(zt::bound(2000));
    p.b->shutdown(zt::bound(2000));
}

void coroutine_handler_awaits_a_request()
{
    // B's handler co_awaits a request to C and answers with C's reply.
    zlink::host c("C");
    c.add_cs_server("inner", tcp_any());
    c.on_request(zlink::owner::channel("inner"), "Q", [](zlink::turn &t) {
        t.respond("R", std::string("inner:") + std::string(t.text()));
    });
    c.start();
    std::string cep = c.endpoint("inner");
    zlink::host b("B");
    b.add_cs_server("svc", tcp_any());
    b.add_cs_client("inner", cep);
    b.on_request(svc, "Relay", [&b](zlink::turn &t) -> zlink::task_t<void> {
        zlink::reply_t r = co_await b.request_to_channel("inner").payload("Q", t.text()).async();
        // Resumed on the dispatcher: a runtime context.
        ZT_CHECK(zlink::in_runtime_context());
        t.respond("R", r.text());
    });
    b.start();
    zlink::host a("A");
    a.add_cs_client("svc", b.endpoint("svc"));
    a.start();
    ZT_EQ(std::string(a.request_to_channel("svc").payload("Relay", "x").submit().text()), std::string("inner:x"));
    a.shutdown(zt::bound(2000));
    b.shutdown(zt::bound(2000));
    c.shutdown(zt::bound(2000));
}

void shutdown_during_a_send_once()
{
    // B takes one job at a time and holds it; A's one-ways fill B's permit
    // and the Core's queues until one waits for room; A's shutdown then ends
    // that send with ShuttingDown, once.
    gate_t gate;
    pair_t p;
    p.b = std::make_unique<zlink::host>("B");
    p.b->set_option(zlink::host_option::max_queued_jobs, 1);
    p.b->add_cs_server("svc", tcp_any());
    p.b->set_channel_option("svc", zlink::node_option::rcvhwm, 65536);
    p.b->on_send(svc, "Fill", [&](zlink::turn &) { gate.pass(); });
    p.b->start();
    p.a = std::make_unique<zlink::host>("A");
    p.a->set_option(zlink::host_option::default_send_timeout, 30s);
    p.a->add_cs_client("svc", p.b->endpoint("svc"));
    p.a->set_channel_option("svc", zlink::node_option::sndhwm, 65536);
    p.a->start();
    std::string body(16384, 'f');
    std::vector<std::unique_ptr<counter_t>> done;
    counter_t *pending = nullptr;
    for (int i = 0; i < 10000 && pending == nullptr; i++) {
        done.push_back(std::make_unique<counter_t>());
        counter_t *n = done.back().get();
        p.a->send_to_channel("svc").payload("Fill", body).submit([n](const zlink::outcome_t &o) { n->add(o); });
        if (!n->wait(1, 100ms) && p.a->status().oneway_waiting == 1)
            pending = n;
        else
            ZT_CHECK(n->wait(1, zt::bound(5000)));
    }
    ZT_CHECK(pending != nullptr);
    ZT_EQ(pending->count(), 0);
    p.a->shutdown(200ms);
    ZT_EQ(pending->count(), 1);
    ZT_EQ(pending->last_result, zlink::fw::shutting_down);
    for (auto &n : done)
        ZT_EQ(n->count(), 1);
    gate.release();
    p.b->shutdown(zt::bound(2000));
}

void host_errors()
{
    zlink::host h("E");
    ZT_THROWS(zlink::argument_exception_t, h.set_option(zlink::host_option::default_send_timeout, 0),
              e.result() == zlink::fw::invalid_argument);
    ZT_THROWS(zlink::framework_exception_t, h.shutdown(), e.kind() == zlink::error_kind::invalid_operation);
    ZT_EQ(h.state(), ZLINK_HOST_PREPARING);
    ZT_EQ(h.capacity().effective_max > 0, true);
    ZT_THROWS(zlink::argument_exception_t, zlink::host(""), e.result() == zlink::fw::invalid_argument);
}

} // namespace

// Packet names, content types and metadata reach C whole, short or long
// (the binding passes short ones from the stack, long ones from the heap):
// the server answers with the turn's packet, content type and metadata
// value, and the reply carries them back unchanged.
void names_pass_whole_at_every_length()
{
    auto p = make_pair_hosts([](zlink::host &b) {
        for (std::size_t n : {1, 15, 16, 63, 64, 65, 200}) {
            std::string pk(n, 'p');
            b.on_request(svc, pk, [](zlink::turn &t) {
                std::string echoed(t.metadata("k").value_or("<absent>"));
                t.respond(t.packet(), echoed, t.content_type());
            });
        }
    });
    for (std::size_t n : {1, 15, 16, 63, 64, 65, 200}) {
        std::string pk(n, 'p'), ct(n, 'c'), key = "k", value(n, 'v');
        zlink::reply_t r = p.a->request_to_channel("svc")
                               .payload(pk, "x", ct)
                               .metadata(key, value)
                               .timeout(zt::bound(5000))
                               .submit();
        ZT_EQ(r.packet, pk);
        ZT_EQ(r.content_type, ct);
        ZT_EQ(std::string(r.text()), value);
    }
    // An empty content type stays empty.
    zlink::reply_t r = p.a->request_to_channel("svc").payload("p", "x").metadata("k", "v").submit();
    ZT_EQ(r.content_type, std::string());
    ZT_EQ(std::string(r.text()), std::string("v"));
    p.a->shutdown(zt::bound(2000));
    p.b->shutdown(zt::bound(2000));
}

// A string with a NUL inside would reach C cut short: refused as
// INVALID_ARGUMENT at the builder, the handler registration and the host,
// never sent as a shorter name; a UTF-8 name outside the BMP crosses whole.
void names_c_would_cut_are_refused()
{
    const std::string emoji = "echo-\xC3\xA9-\xE4\xB8\xAD-\xF0\x9F\x98\x80";
    const std::string bad("ec\0ho", 5);
    auto p = make_pair_hosts([&](zlink::host &b) {
        b.on_request(svc, emoji, [](zlink::turn &t) { t.respond(t.packet(), t.packet()); });
        ZT_THROWS(zlink::argument_exception_t, b.on_request(svc, bad, [](zlink::turn &) {}),
                  e.result() == zlink::fw::invalid_argument);
    });
    zlink::reply_t r = p.a->request_to_channel("svc").payload(emoji, "x").timeout(zt::bound(5000)).submit();
    ZT_EQ(r.packet, emoji);
    ZT_EQ(std::string(r.text()), emoji);
    ZT_THROWS(zlink::argument_exception_t, p.a->request_to_channel("svc").payload(bad, "x"),
              e.result() == zlink::fw::invalid_argument);
    ZT_THROWS(zlink::argument_exception_t, p.a->request_to_channel(bad),
              e.result() == zlink::fw::invalid_argument);
    ZT_THROWS(zlink::argument_exception_t, zlink::host(bad), e.result() == zlink::fw::invalid_argument);
    p.a->shutdown(zt::bound(2000));
    p.b->shutdown(zt::bound(2000));
}

int main()
{
    host_errors();
    request_success_once_and_co_await();
    names_pass_whole_at_every_length();
    names_c_would_cut_are_refused();
    cancel_and_timeout_once();
    sync_terminator_in_runtime_context();
    handler_exception_is_internal_failure();
    coroutine_handler_keeps_its_turn();
    coroutine_handler_awaits_a_request();
    shutdown_during_a_send_once();
    std::cout << "test_framework: ok\n";
    return 0;
}
