// x_terminators.cc — framework-contract.md §7.3 "Extras" for C++: X-1 (the
// terminator surface: async() -> task_t<T>, submit(), submit(callback),
// yield()) and X-2 (isolation of the tasks terminators return), each over
// every transport, with the default harness in mesh mode (B echoes a
// request's payload as the reply, packet "echo"). The C runner's
// x_terminators.c is the reference.
#include "cases.hpp"
#include "sc.hpp"

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

// Counts what a task delivers to C++: a coroutine that awaits it once.
// t stays the caller's (it may be cancelled or read again); awaited once here.
template <class T> zlink::task_t<T> counted(zlink::task_t<T> &t, std::atomic<int> &n)
{
    std::exception_ptr err;
    if constexpr (std::is_void_v<T>) {
        try {
            co_await t;
        } catch (...) {
            err = std::current_exception();
        }
        n++;
        if (err)
            std::rethrow_exception(err);
    } else {
        std::optional<T> v;
        try {
            v.emplace(co_await t);
        } catch (...) {
            err = std::current_exception();
        }
        n++;
        if (err)
            std::rethrow_exception(err);
        co_return std::move(*v);
    }
}

template <class F> int result_of_call(F f)
{
    try {
        f();
        return 0;
    } catch (...) {
        return sc::result_of(std::current_exception());
    }
}

void marker(sc::client_t &a, sc::server_t &b, const std::string &tag)
{
    auto mk = sc::send_call(a, tag);
    CF_RESULT(sc::wait_send(mk).result, 0);
    CF_EVENTUALLY(b.rec.has(tag) == 1, 5000);
}

zlink::send_call_t packet_call(sc::client_t &a, const std::string &packet)
{
    auto c = a.h->send_to_channel("svc");
    c.payload(packet, packet);
    return c;
}

void expect_reply(const zlink::reply_t &r, const std::string &text)
{
    CF_EQ(std::string(r.text()), text);
    CF_EQ(r.packet, std::string("echo"));
}

// ---------------------------------------------------------------

void x1_round(const std::string &tr)
{
    sc::server_t b("B");
    b.open(sc::mesh, tr, "x1");
    sc::client_t a;
    a.open(sc::mesh, {&b});

    // async(), one-way: completes at admission with no value, B's gated
    // handler not run yet.
    b.gated = true;
    std::atomic<int> n_o1{0};
    auto o1 = sc::send_call(a, "o1");
    auto a_o1 = o1.async();
    auto t_o1 = counted(a_o1, n_o1);
    static_assert(std::is_same_v<decltype(o1.async()), zlink::task_t<void>>);
    CF_CHECK(t_o1.wait_for(std::chrono::milliseconds(conf::ms(5000))));
    t_o1.get();
    CF_EQ(b.rec.count(), 0u);
    CF_EVENTUALLY(b.gate.waiting() == 1, 5000);
    CF_EQ(b.rec.count(), 0u);
    b.gated = false;
    b.gate.open();
    CF_EVENTUALLY(b.rec.has("o1") == 1, 5000);

    // async(), request: its reply.
    std::atomic<int> n_r1{0};
    auto r1 = sc::request_call(a, "r1");
    static_assert(std::is_same_v<decltype(r1.async()), zlink::task_t<zlink::reply_t>>);
    auto a_r1 = r1.async();
    auto t_r1 = counted(a_r1, n_r1);
    expect_reply(t_r1.get(), "r1");

    // submit() on this application thread.
    auto w1 = sc::send_call(a, "w1");
    static_assert(std::is_void_v<decltype(w1.submit())>);
    w1.submit();
    auto w2 = sc::request_call(a, "w2");
    expect_reply(w2.submit(), "w2");
    CF_EVENTUALLY(b.rec.has("w1") == 1, 5000);

    // A second terminator: InvalidOperation, nothing changes. In flight:
    b.reply_mode = sc::reply_hold;
    std::atomic<int> n_t1{0};
    auto t1 = sc::request_call(a, "t1");
    auto a_t1 = t1.async();
    auto task_t1 = counted(a_t1, n_t1);
    CF_EVENTUALLY(b.nheld() == 1, 5000);
    CF_RESULT(result_of_call([&] { t1.async(); }), fw::invalid_operation);
    CF_RESULT(result_of_call([&] { t1.submit(); }), fw::invalid_operation);
    CF_RESULT(result_of_call([&] { t1.submit([](const zlink::outcome_t &) {}); }),
              fw::invalid_operation);
    CF_RESULT(result_of_call([&] { t1.yield(); }), fw::invalid_operation);
    CF_CHECK(!task_t1.done());
    CF_EQ(n_t1.load(), 0);
    CF_EQ(a.h->status().requests_inflight, 1u);
    {
        auto reply = b.take_held("t1");
        CF_CHECK(reply.has_value());
        reply->start_detached();
    }
    b.reply_mode = sc::reply_now;
    expect_reply(task_t1.get(), "t1");
    // ... a completed one-way ...
    std::atomic<int> n_t2{0};
    auto t2 = sc::send_call(a, "t2");
    auto a_t2 = t2.async();
    auto task_t2 = counted(a_t2, n_t2);
    task_t2.get();
    CF_RESULT(result_of_call([&] { t2.async(); }), fw::invalid_operation);
    CF_RESULT(result_of_call([&] { t2.submit(); }), fw::invalid_operation);
    CF_RESULT(result_of_call([&] { t2.yield(); }), fw::invalid_operation);
    // ... and a request submit() finished: its reply stays what it was.
    auto t3 = sc::request_call(a, "t3");
    zlink::reply_t o3 = t3.submit();
    expect_reply(o3, "t3");
    CF_RESULT(result_of_call([&] { t3.async(); }), fw::invalid_operation);
    CF_RESULT(result_of_call([&] { t3.submit(); }), fw::invalid_operation);
    CF_RESULT(result_of_call([&] { t3.yield(); }), fw::invalid_operation);
    expect_reply(o3, "t3");

    // submit() in a runtime context: inside B's handler turn ...
    {
        auto sy = packet_call(a, "sync");
        CF_RESULT(sc::wait_send(sy).result, 0);
    }
    CF_EVENTUALLY(b.sync_ran == 1, 5000);
    CF_RESULT(b.sync_wait_rc.load(), fw::invalid_operation);
    CF_RESULT(b.sync_shutdown_rc.load(), fw::invalid_operation);
    CF_EQ(b.h->state(), ZLINK_HOST_SERVING);
    // ... inside a completion callback (the refused call then starts) ...
    sc::done_t cb_done;
    std::atomic<int> cb_in_runtime{-1}, cb_wait_rc{-1}, cb_start_rc{-1}, cb_yield_rc{-1};
    std::atomic<long long> cb_wait_ms{0};
    auto cb_fn = cb_done.fn();
    auto outer = sc::request_call(a, "outer");
    outer.submit([&, cb_fn](const zlink::outcome_t &o) {
        cb_in_runtime = zlink::in_runtime_context() ? 1 : 0;
        auto inner = sc::send_call(a, "in-cb");
        std::int64_t t0 = conf::now_ms();
        cb_wait_rc = result_of_call([&] { inner.submit(); });
        cb_wait_ms = conf::now_ms() - t0;
        cb_start_rc = result_of_call([&] { inner.async(); });
        auto y = sc::send_call(a, "yield-in-cb");
        cb_yield_rc = result_of_call([&] { y.yield(); });
        cb_fn(o);
    });
    cb_done.expect(5000);
    CF_EQ(cb_in_runtime.load(), 1);
    CF_RESULT(cb_wait_rc.load(), fw::invalid_operation);
    if (cb_wait_ms > conf::ms(100))
        CF_FAIL("the refused submit() took " + std::to_string(cb_wait_ms.load()) + " ms");
    CF_RESULT(cb_start_rc.load(), 0);
    CF_RESULT(cb_yield_rc.load(), fw::invalid_operation);
    CF_EVENTUALLY(b.rec.has("in-cb") == 1, 5000);
    // ... and on a thread this case marked, until it leaves.
    int before = -1, inside = -1, nested = -1, after = -1;
    int refused = -1, refused_nested = -1;
    std::int64_t refused_ms = 0;
    std::string marked_reply;
    int marked_rc = -1;
    std::thread th([&] {
        auto q = sc::request_call(a, "marked");
        q.timeout(std::chrono::milliseconds(conf::ms(5000)));
        before = zlink::in_runtime_context();
        zlink::runtime_context_enter();
        inside = zlink::in_runtime_context();
        std::int64_t t0 = conf::now_ms();
        refused = result_of_call([&] { q.submit(); });
        refused_ms = conf::now_ms() - t0;
        zlink::runtime_context_enter();
        zlink::runtime_context_leave();
        nested = zlink::in_runtime_context();
        refused_nested = result_of_call([&] { q.submit(); });
        zlink::runtime_context_leave();
        after = zlink::in_runtime_context();
        auto o = sc::wait_request(q);
        marked_rc = o.result;
        marked_reply = o.reply;
    });
    th.join();
    CF_EQ(before, 0);
    CF_EQ(inside, 1);
    CF_RESULT(refused, fw::invalid_operation);
    if (refused_ms > conf::ms(100))
        CF_FAIL("the refused submit() took " + std::to_string(refused_ms) + " ms");
    CF_EQ(nested, 1);
    CF_RESULT(refused_nested, fw::invalid_operation);
    CF_EQ(after, 0);
    CF_RESULT(marked_rc, 0);
    CF_EQ(marked_reply, std::string("marked"));
    CF_EQ(zlink::in_runtime_context(), false);
    CF_THROWS(zlink::framework_exception_t, zlink::runtime_context_leave(),
              e.kind() == zlink::error_kind::invalid_operation);

    // yield() outside a Spot turn: InvalidOperation before anything is
    // sent, no task: on this thread (the calls stay unfinished) ...
    auto y1 = sc::send_call(a, "y1");
    auto y2 = sc::request_call(a, "y2");
    CF_RESULT(result_of_call([&] { y1.yield(); }), fw::invalid_operation);
    CF_RESULT(result_of_call([&] { y2.yield(); }), fw::invalid_operation);
    // ... and inside B's handler turn.
    {
        auto yh = packet_call(a, "yield");
        CF_RESULT(sc::wait_send(yh).result, 0);
    }
    CF_EVENTUALLY(b.yield_ran == 1, 5000);
    CF_RESULT(b.yield_rc.load(), fw::invalid_operation);
    marker(a, b, "mk1");
    CF_EQ(b.rec.has("y1"), 0);
    CF_EQ(b.rec.has("y2"), 0);
    CF_EQ(b.rec.has("yield-in-cb"), 0);
    y1.submit();
    expect_reply(y2.submit(), "y2");

    marker(a, b, "mk2");
    for (const char *tag : {"o1", "r1", "w1", "w2", "t1", "t2", "t3", "in-cb", "y1", "y2", "marked"})
        if (b.rec.has(tag) != 1)
            CF_FAIL(std::string("B handled ") + tag + " " + std::to_string(b.rec.has(tag)) +
                    " times, expected once");
    a.close(); // every completion has run once shutdown returned
    CF_EQ(n_o1.load(), 1);
    CF_EQ(n_r1.load(), 1);
    CF_EQ(n_t1.load(), 1);
    CF_EQ(n_t2.load(), 1);
    CF_EQ(cb_done.count(), 1);
    b.close();
}

// ---------------------------------------------------------------

void answer_held(sc::server_t &b, const std::string &tag)
{
    auto reply = b.take_held(tag);
    if (!reply)
        CF_FAIL("B holds no reply for " + tag);
    reply->start_detached();
}

bool is_cancelled(zlink::task_t<zlink::reply_t> &t)
{
    try {
        t.get();
        return false;
    } catch (const zlink::cancelled_exception_t &) {
        return true;
    }
}

void x2_round(const std::string &tr)
{
    sc::server_t b("B");
    b.open(sc::mesh, tr, "x2");
    sc::client_t a;
    a.open(sc::mesh, {&b});

    // Two in flight; cancelling one leaves the other pending.
    b.reply_mode = sc::reply_hold;
    std::atomic<int> n1{0}, n2{0};
    auto q1 = sc::request_call(a, "q1");
    auto q2 = sc::request_call(a, "q2");
    auto r1 = q1.async();
    auto r2 = q2.async();
    auto t1 = counted(r1, n1);
    auto t2 = counted(r2, n2);
    CF_EVENTUALLY(b.nheld() == 2, 5000);
    CF_EQ(a.h->status().requests_inflight, 2u);
    r1.cancel(); // the returned task
    CF_CHECK(is_cancelled(t1));
    CF_CHECK(is_cancelled(r1));
    CF_CHECK(!t2.done());
    CF_EQ(a.h->status().requests_inflight, 1u);
    answer_held(b, "q2");
    expect_reply(t2.get(), "q2");
    answer_held(b, "q1"); // late
    b.reply_mode = sc::reply_now;
    {
        auto after = sc::request_call(a, "after");
        expect_reply(after.submit(), "after");
    }
    CF_CHECK(is_cancelled(t1)); // read again: the same
    CF_CHECK(is_cancelled(r1));
    expect_reply(r2.get(), "q2");
    CF_EQ(a.h->status().requests_inflight, 0u);

    // Outcomes never share storage: a reply stays intact after the other
    // completed, after the other's call was released, after a third call.
    zlink::task_t<zlink::reply_t> p1, p2, p3;
    {
        auto c1 = sc::request_call(a, "pa-1111");
        p1 = c1.async();
        expect_reply(p1.get(), "pa-1111");
        {
            auto c2 = sc::request_call(a, "pb-2222");
            p2 = c2.async();
            expect_reply(p2.get(), "pb-2222");
            expect_reply(p1.get(), "pa-1111");
        } // c2's builder (its application reference) is gone
        expect_reply(p1.get(), "pa-1111");
        auto c3 = sc::request_call(a, "pc-3333");
        p3 = c3.async();
        expect_reply(p3.get(), "pc-3333");
        expect_reply(p1.get(), "pa-1111");
    }
    p2 = {}; // a task dropped
    expect_reply(p1.get(), "pa-1111");
    expect_reply(p3.get(), "pc-3333");
    {
        auto v1 = std::make_unique<zlink::request_call_t>(sc::request_call(a, "wa-1111"));
        auto v2 = sc::request_call(a, "wb-2222");
        zlink::reply_t ov1 = v1->submit();
        zlink::reply_t ov2 = v2.submit();
        expect_reply(ov1, "wa-1111");
        v1.reset();
        expect_reply(ov2, "wb-2222");
    }

    // A completed task read again after another call was cancelled, after
    // cancelling it, after a second terminator on its call: unchanged; and
    // none of that changes another call.
    auto d5 = sc::request_call(a, "done-5");
    auto t5 = d5.async();
    expect_reply(t5.get(), "done-5");
    b.reply_mode = sc::reply_hold;
    std::atomic<int> n6{0}, n7{0};
    auto c6 = sc::request_call(a, "c6");
    auto c7 = sc::request_call(a, "c7");
    auto r6 = c6.async();
    auto r7 = c7.async();
    auto t6 = counted(r6, n6);
    auto t7 = counted(r7, n7);
    CF_EVENTUALLY(b.nheld() == 2, 5000);
    r6.cancel();
    CF_CHECK(is_cancelled(t6));
    r6.cancel(); // again: nothing changes
    expect_reply(t5.get(), "done-5");
    t5.cancel();
    d5.cancel();
    CF_RESULT(result_of_call([&] { d5.submit(); }), fw::invalid_operation);
    expect_reply(t5.get(), "done-5");
    CF_CHECK(!t7.done());
    answer_held(b, "c7");
    expect_reply(t7.get(), "c7");
    answer_held(b, "c6"); // late
    b.reply_mode = sc::reply_now;
    {
        auto after2 = sc::request_call(a, "after2");
        expect_reply(after2.submit(), "after2");
    }
    expect_reply(t5.get(), "done-5");
    CF_CHECK(is_cancelled(t6));
    CF_EQ(a.h->status().requests_inflight, 0u);
    a.close();
    CF_EQ(n1.load(), 1);
    CF_EQ(n2.load(), 1);
    CF_EQ(n6.load(), 1);
    CF_EQ(n7.load(), 1);
    b.close();
}

} // namespace

namespace cases {

void x1(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        x1_round(tr);
}

void x2(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        x2_round(tr);
}

} // namespace cases
