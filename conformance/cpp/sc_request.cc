// sc_request.cc — seed 000 §17 "Request completion" and "the ban on
// resending": SC-09 (first outcome wins), SC-11 (no resubmit to another
// owner), SC-19 (no resend after acceptance), SC-20 (outcomes by type),
// ported from conformance/c/sc_request.c through the C++ binding.
//
// "Never happens" is shown by order, not by waiting: a record that was not
// sent on a connection would be ahead of a later one on that same
// connection, so once the later one arrived, the first is known absent.
#include "cases.hpp"
#include "sc.hpp"

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

void answered_request(sc::client_t &a, const std::string &tag)
{
    auto c = sc::request_call(a, tag);
    auto o = sc::wait_request(c);
    CF_RESULT(o.result, 0);
    CF_EQ(o.reply, tag);
}

void inflight_back_to_zero(sc::client_t &a)
{
    CF_EVENTUALLY(a.h->metric("zlink.mesh_node.requests.inflight") == 0, 2000);
    CF_EQ(a.h->status().requests_inflight, 0u);
}

// ------------------------------------------------------------- SC-09

void first_outcome_wins(const std::string &tr)
{
    sc::timer_t timer;
    timer.start();
    sc::server_t b("B");
    b.timer = &timer;
    b.open(sc::mesh, tr, "sc09");
    sc::client_t a;
    a.open(sc::mesh, {&b});

    // (a) B replies at once: the value.
    sc::done_t da;
    auto ca = sc::request_start(a, "a", 0, da);
    da.expect(2000);
    CF_RESULT(da.get_result(), 0);
    CF_EQ(da.reply, std::string("a"));

    // (b) B replies after 500 ms, the timeout is 200 ms.
    b.delay_min = b.delay_max = 500;
    b.reply_mode = sc::reply_delay;
    sc::done_t db;
    std::int64_t t0 = conf::now_ms();
    auto cb = sc::request_start(a, "b", 200, db);
    db.expect(2000);
    CF_RESULT(db.get_result(), fw::deadline_exceeded);
    SC_ON_TIME(db.at_ms - t0, 200);
    CF_EVENTUALLY(b.replies_sent == 1, 3000);
    CF_EQ(b.rec.has("b"), 1);
    b.reply_mode = sc::reply_now;
    answered_request(a, "after-b");
    CF_EQ(db.count(), 1);
    inflight_back_to_zero(a);

    // (c) cancelled at 100 ms; the reply at 300 ms is ignored.
    b.delay_min = b.delay_max = 300;
    b.reply_mode = sc::reply_delay;
    sc::done_t dc;
    auto cc = sc::request_start(a, "c", 0, dc);
    t0 = conf::now_ms();
    CF_CHECK(!dc.wait_until(t0 + 100));
    cc.cancel();
    cc.cancel(); // idempotent
    dc.expect(2000);
    CF_RESULT(dc.get_result(), fw::cancelled);
    CF_EVENTUALLY(b.replies_sent == 2, 3000);
    b.reply_mode = sc::reply_now;
    answered_request(a, "after-c");
    CF_EQ(dc.count(), 1);
    cc.cancel(); // after the end: changes nothing
    CF_EQ(dc.count(), 1);
    CF_RESULT(dc.get_result(), fw::cancelled);
    inflight_back_to_zero(a);

    // (e) B's handler fails: InternalFailure, once.
    b.reply_mode = sc::reply_fail;
    sc::done_t de;
    auto ce = sc::request_start(a, "e", 0, de);
    de.expect(2000);
    CF_RESULT(de.get_result(), fw::internal_failure);
    b.reply_mode = sc::reply_now;
    answered_request(a, "after-e");
    CF_EQ(de.count(), 1);

    // (d) A shuts down while a request is pending: ShuttingDown.
    b.reply_mode = sc::reply_hold;
    sc::done_t dd;
    auto cd = sc::request_start(a, "d", 0, dd);
    CF_EVENTUALLY(b.nheld() == 1, 2000);
    a.h->shutdown(200ms);
    CF_EQ(dd.count(), 1); // decided before shutdown returned
    CF_RESULT(dd.get_result(), fw::shutting_down);
    CF_EQ(a.h->status().requests_inflight, 0u);

    a.close();
    b.close();
    timer.finish();
    for (sc::done_t *d : {&da, &db, &dc, &de, &dd})
        CF_EQ(d->count(), 1);
}

// ------------------------------------------------------------- SC-11

void never_seen_by(sc::client_t &a, sc::server_t &y, const std::string &tag)
{
    if (a.mode == sc::mesh) {
        auto mk = sc::node_send(*a.h, y.name, "marker");
        CF_RESULT(sc::wait_send(mk).result, 0);
        CF_EVENTUALLY(y.rec.has("marker") >= 1, 2000);
    } else {
        for (int i = 0; y.rec.has("marker") == 0; i++) {
            CF_CHECK(i < 200);
            auto mk = sc::request_call(a, "marker");
            int rc = sc::wait_request(mk).result;
            CF_CHECK(rc == 0 || rc == fw::deadline_exceeded);
        }
    }
    CF_EQ(y.rec.has(tag), 0);
}

void no_resubmit(const std::string &tr, sc::mode_t mode)
{
    sc::server_t s1("S1"), s2("S2");
    s1.open(mode, tr, "sc11");
    s2.open(mode, tr, "sc11");
    sc::client_t a;
    a.open(mode, {&s1, &s2});

    s1.reply_mode = sc::reply_hold;
    s2.reply_mode = sc::reply_hold;
    sc::done_t dt;
    std::int64_t t0 = conf::now_ms();
    auto ct = sc::request_start(a, "t", 300, dt);
    CF_EVENTUALLY(s1.rec.has("t") + s2.rec.has("t") == 1, 2000);
    sc::server_t *x = s1.rec.has("t") ? &s1 : &s2, *y = x == &s1 ? &s2 : &s1;
    dt.expect(2000);
    CF_RESULT(dt.get_result(), fw::deadline_exceeded);
    SC_ON_TIME(dt.at_ms - t0, 300);
    x->reply_mode = sc::reply_now;
    y->reply_mode = sc::reply_now;
    never_seen_by(a, *y, "t");
    CF_EQ(x->rec.has("t"), 1);
    CF_EQ(dt.count(), 1);

    // Killed after it received the request: one terminal, never resubmitted.
    s1.reply_mode = sc::reply_hold;
    s2.reply_mode = sc::reply_hold;
    sc::done_t dk;
    auto ck = sc::request_start(a, "k", conf::ms(3000), dk);
    CF_EVENTUALLY(s1.rec.has("k") + s2.rec.has("k") == 1, 2000);
    x = s1.rec.has("k") ? &s1 : &s2;
    y = x == &s1 ? &s2 : &s1;
    y->reply_mode = sc::reply_now;
    x->h->shutdown(500ms);
    dk.expect(3000 + 250 + 1000);
    int r = dk.get_result();
    if (r != fw::unavailable && r != fw::deadline_exceeded)
        CF_FAIL("the request to a killed server ended " + std::string(zlink::result_name(r)));
    never_seen_by(a, *y, "k");
    CF_EQ(dk.count(), 1);
    inflight_back_to_zero(a);

    a.close();
    s1.close();
    s2.close();
}

// ------------------------------------------------------------- SC-19

bool probe_answered(sc::client_t &a)
{
    auto p = sc::request_call(a, "probe");
    int rc = sc::wait_request(p).result;
    if (rc != 0 && rc != fw::not_found && rc != fw::unavailable)
        CF_FAIL("a probe ended " + std::string(zlink::result_name(rc)));
    return rc == 0;
}

void no_resend_after_acceptance(const std::string &tr)
{
    sc::server_t s1("S1", 100), s2("S2", 0);
    s1.max_jobs = 3;
    s1.open(sc::mesh, tr, "sc19");
    s2.open(sc::mesh, tr, "sc19");
    sc::client_t a;
    a.open(sc::mesh, {&s1, &s2});

    s1.gated = true;
    {
        auto f = sc::send_call(a, "f0");
        CF_RESULT(sc::wait_send(f).result, 0);
    }
    CF_EVENTUALLY(s1.gate.waiting() == 1, 2000);
    {
        auto f = sc::send_call(a, "f1");
        CF_RESULT(sc::wait_send(f).result, 0);
    }
    CF_EVENTUALLY(s1.h->status().turns_queued == 1, 2000);

    sc::done_t dm;
    auto mk = sc::send_call(a, "mk");
    sc::start(mk, dm);
    dm.expect(2000);
    CF_RESULT(dm.get_result(), 0);
    sc::done_t dq;
    auto rq = sc::request_start(a, "rq", conf::ms(3000), dq);
    CF_EVENTUALLY(s1.h->status().turns_queued == 3, 2000);
    CF_EQ(s1.h->status().permits_in_use, 3u);
    CF_CHECK(!dq.wait(100)); // pending

    // Kill S1 (300 ms drain with the gate closed), then open the gate.
    int shutdown_rc = -1;
    std::thread killer([&] {
        try {
            s1.h->shutdown(300ms);
            shutdown_rc = 0;
        } catch (...) {
            shutdown_rc = sc::result_of(std::current_exception());
        }
    });
    CF_EVENTUALLY(s1.h->state() != ZLINK_HOST_SERVING, 2000);
    dq.expect(3000 + 250 + 1000);
    s1.gate.open();
    killer.join();
    CF_RESULT(shutdown_rc, 0);
    CF_EQ(s1.rec.has("rq") + s1.rec.has("mk"), 0);
    int r = dq.get_result();
    if (r != fw::unavailable && r != fw::deadline_exceeded && r != fw::shutting_down)
        CF_FAIL("the request queued at a killed server ended " + std::string(zlink::result_name(r)));

    CF_EVENTUALLY(a.h->ready_peers("m") == 1, 5000);
    s2.h->set_mesh_weight("m", "svc", 100);
    CF_EVENTUALLY(probe_answered(a), 3000);
    {
        auto after = sc::send_call(a, "after");
        CF_RESULT(sc::wait_send(after).result, 0);
    }
    CF_EVENTUALLY(s2.rec.has("after") == 1, 2000);
    CF_EQ(s2.rec.has("mk"), 0);
    CF_EQ(s2.rec.has("rq"), 0);
    CF_EQ(s2.rec.has("f0") + s2.rec.has("f1"), 0);
    CF_EQ(dm.count(), 1);
    CF_EQ(dq.count(), 1);
    inflight_back_to_zero(a);

    a.close();
    s1.close();
    s2.close();
}

// ------------------------------------------------------------- SC-20

void outcomes_by_type(const std::string &tr)
{
    sc::server_t b("B");
    b.open(sc::mesh, tr, "sc20");
    sc::client_t a;
    a.open(sc::mesh, {&b});
    b.reply_mode = sc::reply_hold;

    // Timeout: the DeadlineExceeded kind, through both terminators.
    {
        auto c = sc::request_call(a, "t-wait");
        c.timeout(100ms);
        bool thrown = false;
        try {
            c.submit();
        } catch (const zlink::framework_exception_t &e) {
            thrown = true;
            CF_CHECK(e.kind() == zlink::error_kind::deadline_exceeded);
            CF_EQ(e.remote_code(), 0u);
        }
        CF_CHECK(thrown);
    }
    sc::done_t dt;
    auto ct = sc::request_start(a, "t-start", 100, dt);
    dt.expect(2000);
    CF_RESULT(dt.get_result(), fw::deadline_exceeded);

    // Cancel: the cancelled type, which is no error kind.
    auto cc = sc::request_call(a, "c");
    auto task = cc.async();
    CF_EVENTUALLY(b.rec.has("c") == 1, 2000);
    task.cancel();
    bool cancelled = false;
    try {
        task.get();
    } catch (const zlink::cancelled_exception_t &) {
        cancelled = true;
    } catch (const zlink::framework_exception_t &e) {
        CF_FAIL(std::string("a cancelled request ended with an error kind: ") + e.what());
    }
    CF_CHECK(cancelled);

    // A handler error that says "cancelled timeout" is InternalFailure.
    b.reply_mode = sc::reply_fail;
    {
        auto c = sc::request_call(a, "boom");
        bool thrown = false;
        try {
            c.submit();
        } catch (const zlink::framework_exception_t &e) {
            thrown = true;
            CF_CHECK(e.kind() == zlink::error_kind::internal_failure);
            CF_EQ(e.message(), std::string("cancelled timeout"));
            CF_EQ(e.remote_code(), 105u); // the wire's internalError
            CF_EQ(zlink::error_kind_name(e.kind()), std::string_view("InternalFailure"));
        }
        CF_CHECK(thrown);
    }

    // Shutdown: the ShuttingDown kind.
    b.reply_mode = sc::reply_hold;
    sc::done_t ds;
    auto cs = sc::request_start(a, "s", 0, ds);
    CF_EVENTUALLY(b.rec.has("s") == 1, 2000);
    a.h->shutdown(100ms);
    CF_EQ(ds.count(), 1);
    CF_RESULT(ds.get_result(), fw::shutting_down);

    CF_EQ(dt.count(), 1);
    a.close();
    b.close();
}

} // namespace

namespace cases {

void sc09(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        first_outcome_wins(tr);
}

void sc11(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p)) {
        no_resubmit(tr, sc::mesh);
        no_resubmit(tr, sc::cs);
    }
}

void sc19(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        no_resend_after_acceptance(tr);
}

void sc20(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        outcomes_by_type(tr);
}

} // namespace cases
