// sc_dispatch.cc — seed 000 §17 "Completion confirmation": SC-16 (exactly
// once under races), SC-17 (the callback runs on a new turn), SC-18 (the
// dispatcher cap of 4,096), ported from conformance/c/sc_dispatch.c.
#include "cases.hpp"
#include "sc.hpp"

#include <sched.h>

#include <iostream>

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

// ------------------------------------------------------------- SC-16

struct race_t {
    std::mutex m;
    std::condition_variable cv;
    int inflight = 0;
    std::atomic<int> twice{0};
    std::atomic<int> counts[5] = {};
};

struct race_call_t {
    std::optional<zlink::request_call_t> call;
    int index = 0;
    bool cancel = false;
    std::atomic<int> calls{0};
    std::atomic<int> result{-1};
    std::atomic<bool> reply_ok{false};
};

void exactly_once_under_races(const std::string &tr, int total, int window, int cancel_pct)
{
    sc::timer_t timer;
    timer.start();
    sc::server_t b("B");
    b.timer = &timer;
    b.delay_min = 45;
    b.delay_max = 55;
    b.reply_mode = sc::reply_delay;
    b.open(sc::mesh, tr, "sc16");
    sc::client_t a;
    a.open(sc::mesh, {&b});

    race_t r;
    std::vector<std::unique_ptr<race_call_t>> calls;
    calls.reserve(static_cast<std::size_t>(total));
    std::uint64_t rng = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < total; i++) {
        calls.push_back(std::make_unique<race_call_t>());
        race_call_t *rc = calls.back().get();
        rc->index = i;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rc->cancel = static_cast<int>(rng % 100) < cancel_pct;
        {
            std::unique_lock<std::mutex> g(r.m);
            r.cv.wait(g, [&] { return r.inflight < window; });
            r.inflight++;
        }
        std::string want = "r" + std::to_string(i);
        rc->call.emplace(sc::request_call(a, want));
        rc->call->timeout(50ms);
        std::int64_t at = conf::now_ms() + 45 + static_cast<std::int64_t>(rng % 11);
        try {
            rc->call->submit([rc, &r, want](const zlink::outcome_t &o) {
                if (rc->calls++ != 0) {
                    r.twice++;
                    return;
                }
                rc->result = o.result;
                if (o.ok())
                    rc->reply_ok = o.reply && o.reply->text() == want;
                std::lock_guard<std::mutex> g(r.m);
                r.inflight--;
                r.cv.notify_all();
            });
        } catch (...) {
            CF_FAIL("start refused: " + std::string(zlink::result_name(sc::result_of(std::current_exception()))));
        }
        if (rc->cancel)
            timer.at(at, [rc] { rc->call->cancel(); });
    }
    // The last window is still racing: shut A down now.
    a.h->shutdown(20ms);
    {
        std::lock_guard<std::mutex> g(r.m);
        CF_EQ(r.inflight, 0);
    }
    CF_EQ(a.h->status().requests_inflight, 0u);
    CF_EQ(a.h->metric("zlink.mesh_node.requests.inflight"), 0);
    b.h->shutdown(1000ms);
    timer.finish();
    if (!conf::eventually([&] { return a.h->status().dispatcher_in_use == 0; }, 5000))
        CF_FAIL("dispatcher_in_use " + std::to_string(a.h->status().dispatcher_in_use) +
                " (A) / " + std::to_string(b.h->status().dispatcher_in_use) +
                " (B) 5 s after both hosts stopped");
    CF_EQ(r.twice.load(), 0);
    for (auto &rc : calls) {
        CF_EQ(rc->calls.load(), 1);
        int res = rc->result;
        int k = res == 0 ? 0
                : res == fw::deadline_exceeded ? 1
                : res == fw::cancelled ? 2
                : res == fw::shutting_down ? 3
                                           : 4;
        if (k == 4)
            CF_FAIL("call " + std::to_string(rc->index) + " ended " + std::string(zlink::result_name(res)));
        if (k == 0 && !rc->reply_ok)
            CF_FAIL("call " + std::to_string(rc->index) + " got another call's reply");
        if (k == 2 && !rc->cancel)
            CF_FAIL("call " + std::to_string(rc->index) + " was cancelled but nobody cancelled it");
        r.counts[k]++;
    }
    std::cerr << "SC-16 " << tr << ": " << r.counts[0] << " ok, " << r.counts[1] << " deadline, "
              << r.counts[2] << " cancelled, " << r.counts[3] << " shutting down\n";
    a.close();
    b.close();
}

// ------------------------------------------------------------- SC-17

std::atomic<int> in_submit{0};

void callback_on_new_turn(const std::string &tr)
{
    sc::server_t b("B");
    b.open(sc::mesh, tr, "sc17");
    sc::client_t a;
    a.open(sc::mesh, {&b});

    for (int i = 0; i < 200; i++) {
        sc::done_t done;
        std::atomic<int> flag_seen{0};
        auto submitter = std::this_thread::get_id();
        auto c = sc::request_call(a, "fast");
        if (i % 4 == 3)
            c.timeout(1ms);
        auto inner = done.fn();
        in_submit = 1;
        try {
            c.submit([&, inner](const zlink::outcome_t &o) {
                std::int64_t end = conf::now_ms() + conf::ms(2000);
                while (in_submit) {
                    if (std::this_thread::get_id() == submitter || conf::now_ms() > end) {
                        flag_seen++;
                        break;
                    }
                    sched_yield();
                }
                inner(o);
            });
        } catch (...) {
            in_submit = 0;
            CF_FAIL("start refused");
        }
        in_submit = 0;
        done.expect(2000);
        CF_EQ(flag_seen.load(), 0);
        CF_CHECK(done.thread != std::this_thread::get_id());
        CF_CHECK(done.in_runtime);
        int r = done.get_result();
        CF_CHECK(r == 0 || (i % 4 == 3 && r == fw::deadline_exceeded));
    }

    // A callback that sends a new request gets its callback: no deadlock.
    sc::done_t inner;
    std::atomic<int> wait_rc{-1}, start_rc{-1}, outer_ran{0};
    std::optional<zlink::request_call_t> inner_call;
    auto outer = sc::request_call(a, "outer");
    outer.submit([&](const zlink::outcome_t &) {
        auto c = sc::request_call(a, "inner");
        wait_rc = sc::wait_request(c).result; // the sync terminator: refused here
        inner_call.emplace(std::move(c));
        try {
            inner_call->submit(inner.fn());
            start_rc = 0;
        } catch (...) {
            start_rc = sc::result_of(std::current_exception());
        }
        outer_ran++;
    });
    inner.expect(2000);
    CF_EQ(outer_ran.load(), 1);
    CF_RESULT(wait_rc.load(), fw::invalid_operation);
    CF_RESULT(start_rc.load(), 0);
    CF_RESULT(inner.get_result(), 0);
    CF_EQ(inner.reply, std::string("inner"));

    // A misbehaving callback (a second terminator, then an exception) does
    // not stop the one after it.
    sc::done_t d1, d2;
    std::atomic<int> second_rc{-1};
    auto c1 = sc::request_call(a, "bad");
    auto c2 = sc::request_call(a, "next");
    auto d1fn = d1.fn();
    c1.submit([&, d1fn](const zlink::outcome_t &o) {
        try {
            c1.async();
            second_rc = 0;
        } catch (...) {
            second_rc = sc::result_of(std::current_exception());
        }
        d1fn(o);
        throw std::runtime_error("a misbehaving callback");
    });
    c2.submit(d2.fn());
    d1.expect(2000);
    d2.expect(2000);
    CF_RESULT(second_rc.load(), fw::invalid_operation);
    CF_EQ(d2.reply, std::string("next"));

    a.close();
    b.close();
    CF_EQ(inner.count(), 1);
    CF_EQ(d1.count(), 1);
    CF_EQ(d2.count(), 1);
}

// ------------------------------------------------------------- SC-18

struct capped_t {
    std::atomic<int> calls{0};
    sc::gate_t *block = nullptr;
    std::atomic<int> block_index{-1};
    std::atomic<int> blocked{0};
};

struct capped_call_t {
    int index = 0;
    std::atomic<int> calls{0};
    std::atomic<int> result{-1};
};

std::function<void(const zlink::outcome_t &)> on_capped(capped_t &ct, capped_call_t &cc)
{
    return [&ct, &cc](const zlink::outcome_t &o) {
        cc.result = o.result;
        cc.calls++;
        if (ct.block != nullptr && cc.index == ct.block_index) {
            ct.blocked = 1;
            ct.block->pass();
        }
        ct.calls++;
    };
}

int start_rc(zlink::request_call_t &c, std::function<void(const zlink::outcome_t &)> fn)
{
    try {
        c.submit(std::move(fn));
        return 0;
    } catch (...) {
        return sc::result_of(std::current_exception());
    }
}

void dispatcher_cap(const std::string &tr)
{
    const int cap = ZLINK_DISPATCHER_CAPACITY;
    sc::server_t b("B");
    b.max_jobs = 2 * cap;
    b.reply_mode = sc::reply_hold;
    b.open(sc::mesh, tr, "sc18");
    sc::client_t a;
    a.open(sc::mesh, {&b});
    CF_EQ(a.h->status().dispatcher_capacity, static_cast<std::uint64_t>(cap));
    CF_EQ(a.h->status().dispatcher_in_use, 0u);

    capped_t ct;
    sc::gate_t block;
    std::vector<std::unique_ptr<capped_call_t>> cc;
    std::vector<zlink::request_call_t> calls;
    for (int i = 0; i < cap + 4; i++) {
        cc.push_back(std::make_unique<capped_call_t>());
        cc.back()->index = i;
    }
    for (int i = 0; i < cap; i++) {
        calls.push_back(sc::request_call(a, "q" + std::to_string(i)));
        calls.back().timeout(60000ms);
        CF_RESULT(start_rc(calls.back(), on_capped(ct, *cc[i])), 0);
    }
    CF_EVENTUALLY(b.nheld() == static_cast<std::size_t>(cap), 20000);
    CF_EQ(a.h->status().dispatcher_in_use, static_cast<std::uint64_t>(cap));
    CF_EQ(a.h->status().requests_inflight, static_cast<std::uint64_t>(cap));
    CF_EQ(ct.calls.load(), 0);

    // One more: CapacityExceeded at once, nothing sent.
    {
        auto over = sc::request_call(a, "over1");
        std::int64_t t0 = conf::now_ms();
        CF_RESULT(start_rc(over, on_capped(ct, *cc[cap])), fw::capacity_exceeded);
        CF_CHECK(conf::now_ms() - t0 <= conf::ms(50));
        auto over_w = sc::send_call(a, "over1"); // one-ways count too
        CF_RESULT(sc::wait_send(over_w).result, fw::capacity_exceeded);
    }

    // Release one reply and let its callback return: a new one is accepted.
    {
        auto reply = b.take_held("q0");
        CF_CHECK(reply.has_value());
        reply->start_detached();
    }
    CF_EVENTUALLY(ct.calls == 1, 5000);
    CF_RESULT(cc[0]->result.load(), 0);
    CF_EVENTUALLY(a.h->status().dispatcher_in_use == static_cast<std::uint64_t>(cap) - 1, 2000);
    calls.push_back(sc::request_call(a, "again"));
    calls.back().timeout(60000ms);
    CF_RESULT(start_rc(calls.back(), on_capped(ct, *cc[cap])), 0);
    CF_EQ(a.h->status().dispatcher_in_use, static_cast<std::uint64_t>(cap));

    // cap - 1 pending and one callback blocked in user code: refused.
    ct.block = &block;
    ct.block_index = 1;
    {
        auto reply = b.take_held("q1");
        CF_CHECK(reply.has_value());
        reply->start_detached();
    }
    CF_EVENTUALLY(ct.blocked == 1, 5000);
    CF_EQ(a.h->status().dispatcher_in_use, static_cast<std::uint64_t>(cap));
    {
        auto over = sc::request_call(a, "over2");
        CF_RESULT(start_rc(over, on_capped(ct, *cc[cap + 1])), fw::capacity_exceeded);
    }
    block.open();
    CF_EVENTUALLY(ct.calls == 2, 5000);
    CF_EVENTUALLY(a.h->status().dispatcher_in_use == static_cast<std::uint64_t>(cap) - 1, 2000);

    CF_EVENTUALLY(b.rec.has("again") == 1, 5000);
    CF_EQ(b.rec.has("over1"), 0);
    {
        auto mk = sc::send_call(a, "marker");
        CF_RESULT(sc::wait_send(mk).result, 0);
    }
    CF_EVENTUALLY(b.rec.has("marker") == 1, 2000);
    CF_EQ(b.rec.has("over2"), 0);

    // The rest end with A's shutdown, each once.
    a.h->shutdown(100ms);
    CF_EQ(ct.calls.load(), cap + 1);
    for (int i = 0; i <= cap; i++) {
        CF_EQ(cc[i]->calls.load(), 1);
        if (i >= 2)
            CF_RESULT(cc[i]->result.load(), fw::shutting_down);
    }
    CF_EQ(a.h->status().dispatcher_in_use, 0u);
    a.close();
    b.close();
}

} // namespace

namespace cases {

void sc16(const conf::params_t &p)
{
    auto trs = sc::transports(p);
    int total = static_cast<int>(conf::param_int(p, "requests"));
    int window = static_cast<int>(conf::param_int(p, "window"));
    int pct = static_cast<int>(conf::param_int(p, "cancel_percent"));
    CF_CHECK(total > 0 && window > 0 && window < ZLINK_DISPATCHER_CAPACITY / 2);
    for (const auto &tr : trs)
        exactly_once_under_races(tr, total, window, pct);
}

void sc17(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        callback_on_new_turn(tr);
}

void sc18(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        dispatcher_cap(tr);
}

} // namespace cases
