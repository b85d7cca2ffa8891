// sc_submit.cc — seed 000 §17 "Submit and admission" and "Deadline":
// SC-01 (one-way at admission, the error table), SC-02 (capacity wait,
// single submit), SC-03 (waiter pool full), SC-06 (send-timeout
// validation), ported from conformance/c/sc_submit.c.
#include "cases.hpp"
#include "sc.hpp"

#include <climits>

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

constexpr std::uint64_t sat_hwm = 16 * 1024;

// The result of a refused async start (the binding throws at the call).
template <class C> int start_result(C &c, sc::done_t &never)
{
    try {
        c.submit(never.fn());
        return 0;
    } catch (...) {
        return sc::result_of(std::current_exception());
    }
}

// Both terminators refuse with want: submit() on one call, submit(cb) on a
// twin whose callback never runs (never is checked at the end).
void refused_each_kind(sc::client_t &a, const char *channel, const char *rid, int want,
                       sc::done_t &never)
{
    for (int req = 0; req < 2; req++) {
        if (req == 1) {
            auto w = rid ? sc::node_request(*a.h, rid, "refused-w")
                         : sc::request_call(a, "refused-w", 0, channel);
            CF_RESULT(sc::wait_request(w).result, want);
            auto s = rid ? sc::node_request(*a.h, rid, "refused-s")
                         : sc::request_call(a, "refused-s", 0, channel);
            CF_RESULT(start_result(s, never), want);
        } else {
            auto w = rid ? sc::node_send(*a.h, rid, "refused-w")
                         : sc::send_call(a, "refused-w", 0, channel);
            CF_RESULT(sc::wait_send(w).result, want);
            auto s = rid ? sc::node_send(*a.h, rid, "refused-s")
                         : sc::send_call(a, "refused-s", 0, channel);
            CF_RESULT(start_result(s, never), want);
        }
    }
}

void one_way_and_errors(const std::string &tr)
{
    sc::server_t b("B");
    b.zero_channel = true;
    b.open(sc::mesh, tr, "sc01");
    sc::client_t a;
    a.extra_channels = true;
    a.open(sc::mesh, {&b});
    sc::done_t never;

    // A one-way completes at admission, before the gated handler runs.
    b.gated = true;
    sc::done_t d1;
    auto m1 = sc::send_call(a, "m1");
    sc::start(m1, d1);
    d1.expect(2000);
    CF_RESULT(d1.get_result(), 0);
    CF_EQ(b.rec.count(), 0u);
    CF_EVENTUALLY(b.gate.waiting() == 1, 2000);
    CF_EQ(b.rec.count(), 0u);
    b.gate.open();
    CF_EVENTUALLY(b.rec.has("m1") == 1, 2000);

    // The error table.
    refused_each_kind(a, "nope", nullptr, fw::not_found, never);
    refused_each_kind(a, "none", nullptr, fw::not_found, never);
    refused_each_kind(a, "zero", nullptr, fw::not_found, never);
    refused_each_kind(a, "svc", "Z", fw::not_found, never);

    // A second terminator changes nothing.
    sc::done_t d2;
    auto m2 = sc::send_call(a, "m2");
    sc::start(m2, d2);
    CF_RESULT(start_result(m2, d2), fw::invalid_operation);
    CF_RESULT(sc::wait_send(m2).result, fw::invalid_operation);
    CF_THROWS(zlink::framework_exception_t, m2.yield(),
              e.kind() == zlink::error_kind::invalid_operation);
    d2.expect(2000);
    {
        auto w = sc::request_call(a, "w1");
        CF_RESULT(sc::wait_request(w).result, 0);
        CF_RESULT(start_result(w, never), fw::invalid_operation);
        CF_RESULT(sc::wait_request(w).result, fw::invalid_operation);
    }

    // The synchronous terminator inside a handler: InvalidOperation at once
    // (and so is a shutdown from there).
    {
        auto sy = a.h->send_to_channel("svc");
        sy.payload("sync", "s");
        CF_RESULT(sc::wait_send(sy).result, 0);
    }
    CF_EVENTUALLY(b.sync_ran == 1, 2000);
    CF_RESULT(b.sync_wait_rc.load(), fw::invalid_operation);
    CF_RESULT(b.sync_shutdown_rc.load(), fw::invalid_operation);
    CF_EQ(b.h->state(), ZLINK_HOST_SERVING);

    // Nothing refused reached B.
    {
        auto mk = sc::send_call(a, "marker");
        CF_RESULT(sc::wait_send(mk).result, 0);
    }
    CF_EVENTUALLY(b.rec.has("marker") == 1, 2000);
    CF_EQ(b.rec.count(), 4u);
    CF_EQ(b.rec.has("m1"), 1);
    CF_EQ(b.rec.has("m2"), 1);
    CF_EQ(d1.count(), 1);
    CF_EQ(d2.count(), 1);
    CF_RESULT(d2.get_result(), 0);

    // Any call after A's shutdown began: ShuttingDown.
    b.reply_mode = sc::reply_hold;
    sc::done_t dh;
    auto h1 = sc::request_call(a, "h1");
    sc::start(h1, dh);
    CF_EVENTUALLY(b.nheld() == 1, 2000);
    int shutdown_rc = -1;
    std::thread job([&] {
        try {
            a.h->shutdown(std::chrono::milliseconds(conf::ms(2000)));
            shutdown_rc = 0;
        } catch (...) {
            shutdown_rc = sc::result_of(std::current_exception());
        }
    });
    CF_EVENTUALLY(a.h->state() != ZLINK_HOST_SERVING, 2000);
    refused_each_kind(a, "svc", nullptr, fw::shutting_down, never);
    refused_each_kind(a, "svc", "B", fw::shutting_down, never);
    CF_EQ(dh.count(), 0);
    job.join();
    CF_RESULT(shutdown_rc, 0);
    CF_EQ(dh.count(), 1);
    CF_RESULT(dh.get_result(), fw::shutting_down);
    refused_each_kind(a, "svc", nullptr, fw::shutting_down, never);
    a.close();

    // SendToNode to B after B's link is cut: Unavailable.
    sc::client_t a2;
    a2.open(sc::mesh, {&b});
    {
        auto mk2 = sc::send_call(a2, "marker2");
        CF_RESULT(sc::wait_send(mk2).result, 0);
    }
    CF_EVENTUALLY(b.rec.has("marker2") == 1, 2000);
    CF_EQ(b.rec.count(), 6u);
    b.h->shutdown(1000ms);
    CF_EVENTUALLY(a2.h->ready_peers("m") == 0, 5000);
    refused_each_kind(a2, "svc", "B", fw::unavailable, never);
    refused_each_kind(a2, "svc", nullptr, fw::unavailable, never);
    a2.close();
    b.close();
    CF_EQ(never.count(), 0);
}

void capacity_wait(const std::string &tr, bool open_early)
{
    sc::server_t b("B");
    b.max_jobs = 1;
    b.hwm = sat_hwm;
    sc::client_t a;
    a.hwm = sat_hwm;
    a.send_timeout = 2000LL * 1000000;
    b.open(sc::mesh, tr, open_early ? "sc02a" : "sc02b");
    a.open(sc::mesh, {&b});
    sc::sat_t sat;
    sc::saturate(a, b, sat);
    if (open_early) {
        CF_CHECK(!sat.done->wait_until(sat.started_ms + 500));
        b.gate.open();
        sat.done->expect(3000);
        CF_RESULT(sat.done->get_result(), 0);
        CF_CHECK(sat.done->at_ms - sat.started_ms < 2000);
    } else {
        sat.done->expect(2000 + 250 + 1000);
        CF_RESULT(sat.done->get_result(), fw::deadline_exceeded);
        SC_ON_TIME(sat.done->at_ms - sat.started_ms, 2000);
        b.gate.open();
    }
    {
        auto mk = sc::send_call(a, "marker");
        CF_RESULT(sc::wait_send(mk).result, 0);
    }
    CF_EVENTUALLY(b.rec.has("marker") == 1, 5000);
    CF_EQ(b.rec.has(sat.tag), open_early ? 1 : 0);
    CF_EQ(b.rec.count(), static_cast<std::size_t>(sat.accepted + (open_early ? 2 : 1)));
    CF_EQ(sat.done->count(), 1);
    a.close();
    b.close();
}

void waiter_pool_full(const std::string &tr)
{
    sc::server_t b("B");
    b.max_jobs = 1;
    b.hwm = sat_hwm;
    sc::client_t a;
    a.hwm = sat_hwm;
    a.send_timeout = static_cast<std::int64_t>(conf::ms(10000)) * 1000000;
    b.open(sc::mesh, tr, "sc03");
    a.open(sc::mesh, {&b});
    std::int64_t w = a.h->option(zlink::host_option::admission_waiters);
    CF_CHECK(w > 0 && w < 100000);
    CF_EQ(a.h->status().admission_waiters_max, static_cast<std::uint64_t>(w));
    sc::sat_t sat;
    sc::saturate(a, b, sat);
    std::vector<std::unique_ptr<sc::done_t>> d;
    std::vector<zlink::send_call_t> c;
    for (std::int64_t i = 1; i < w; i++) {
        d.push_back(std::make_unique<sc::done_t>());
        c.push_back(sc::send_call(a, "p" + std::to_string(i), 4096));
        sc::start(c.back(), *d.back());
    }
    CF_EVENTUALLY(a.h->status().oneway_waiting == static_cast<std::uint64_t>(w), 2000);
    for (auto &x : d)
        CF_EQ(x->count(), 0);
    CF_EQ(sat.done->count(), 0);

    // W + 1: DeadlineExceeded at once, nothing kept.
    sc::done_t dx;
    auto x = sc::send_call(a, "overflow", 4096);
    std::int64_t t0 = conf::now_ms();
    sc::start(x, dx);
    dx.expect(50);
    CF_RESULT(dx.get_result(), fw::deadline_exceeded);
    CF_CHECK(dx.at_ms - t0 <= conf::ms(50));
    CF_EQ(a.h->status().oneway_waiting, static_cast<std::uint64_t>(w));

    b.gate.open();
    sat.done->expect(10000);
    CF_RESULT(sat.done->get_result(), 0);
    for (auto &y : d) {
        y->expect(10000);
        CF_RESULT(y->get_result(), 0);
    }
    {
        auto mk = sc::send_call(a, "marker");
        CF_RESULT(sc::wait_send(mk).result, 0);
    }
    CF_EVENTUALLY(b.rec.has("marker") == 1, 10000);
    CF_EQ(b.rec.has("overflow"), 0);
    CF_EQ(b.rec.count(), static_cast<std::size_t>(sat.accepted + w + 1));
    CF_EQ(b.rec.has(sat.tag), 1);
    CF_EQ(b.rec.has("p1"), 1);
    CF_EQ(dx.count(), 1);
    for (auto &y : d)
        CF_EQ(y->count(), 1);
    a.close();
    b.close();
}

// ------------------------------------------------------------- SC-06

constexpr std::int64_t ms_ns(std::int64_t v) { return v * 1000000; }

struct owner_t {
    const char *what;
    zlink::host *h;
    int kind; // 0 host root fallback, 1 mesh node, 2 channel
    const char *name;
};

int owner_set(const owner_t &o, std::int64_t v)
{
    try {
        if (o.kind == 0)
            o.h->set_option(zlink::host_option::default_send_timeout, v);
        else if (o.kind == 1)
            o.h->set_mesh_option(o.name, zlink::node_option::send_timeout, v);
        else
            o.h->set_channel_option(o.name, zlink::node_option::send_timeout, v);
        return 0;
    } catch (...) {
        return sc::result_of(std::current_exception());
    }
}

std::int64_t owner_get(const owner_t &o)
{
    if (o.kind == 0)
        return o.h->option(zlink::host_option::default_send_timeout);
    if (o.kind == 1)
        return o.h->mesh_option(o.name, zlink::node_option::send_timeout);
    return o.h->channel_option(o.name, zlink::node_option::send_timeout);
}

void owner_validation(const owner_t &o, std::int64_t want)
{
    const std::int64_t bad[] = {0, ms_ns(-1), -1, ZLINK_DURATION_INFINITE,
                                ms_ns(static_cast<std::int64_t>(INT_MAX) + 1), INT64_MIN};
    std::int64_t before = owner_get(o);
    for (std::int64_t v : bad) {
        int rc = owner_set(o, v);
        if (rc != fw::invalid_argument)
            CF_FAIL(std::string(o.what) + ": send timeout " + std::to_string(v) + " ns gave " +
                    std::string(zlink::result_name(rc)) + ", expected INVALID_ARGUMENT");
        CF_EQ(owner_get(o), before);
    }
    CF_RESULT(owner_set(o, 400 * 1000), 0);
    CF_EQ(owner_get(o), ms_ns(1));
    CF_RESULT(owner_set(o, ms_ns(1) + 1), 0);
    CF_EQ(owner_get(o), ms_ns(2));
    CF_RESULT(owner_set(o, ms_ns(INT_MAX)), 0);
    CF_EQ(owner_get(o), ms_ns(INT_MAX));
    CF_RESULT(owner_set(o, want), 0);
    CF_EQ(owner_get(o), want);
}

void setters_validate()
{
    zlink::host h("V");
    h.add_mesh_node("m", "V", std::string("inproc://sc06-validate"));
    h.add_cs_server("cs-server", "inproc://sc06-server");
    h.add_cs_client("cs-client", "inproc://sc06-server");
    owner_t root = {"root fallback", &h, 0, nullptr};
    owner_t mesh = {"mesh node ROUTER", &h, 1, "m"};
    owner_t cli = {"ClientServer client DEALER", &h, 2, "cs-client"};
    owner_t srv = {"ClientServer server ROUTER", &h, 2, "cs-server"};
    CF_EQ(owner_get(root), ZLINK_DEFAULT_SEND_TIMEOUT);
    CF_EQ(owner_get(mesh), ZLINK_DEFAULT_SEND_TIMEOUT);
    CF_EQ(owner_get(cli), ZLINK_DEFAULT_SEND_TIMEOUT);
    CF_EQ(owner_get(srv), ZLINK_DEFAULT_SEND_TIMEOUT);
    owner_validation(root, ms_ns(1500));
    CF_EQ(owner_get(mesh), ms_ns(1500));
    owner_validation(mesh, ms_ns(700));
    owner_validation(cli, ms_ns(800));
    owner_validation(srv, ms_ns(900));
    CF_EQ(owner_get(root), ms_ns(1500));
    h.start();
    CF_EQ(h.state(), ZLINK_HOST_SERVING);
    owner_validation(root, ms_ns(1500));
    owner_validation(mesh, ms_ns(700));
    owner_validation(cli, ms_ns(800));
    h.shutdown(1000ms);
}

void pending_send_times_out(const std::string &tr, sc::mode_t mode, std::int64_t sock_timeout,
                            std::int64_t root_timeout, std::int64_t want_ms)
{
    sc::server_t b("B");
    b.max_jobs = 1;
    b.hwm = sat_hwm;
    sc::client_t a;
    a.hwm = sat_hwm;
    a.send_timeout = sock_timeout;
    a.root_send_timeout = root_timeout;
    b.open(mode, tr, "sc06");
    a.open(mode, {&b});
    sc::sat_t sat;
    sc::saturate(a, b, sat);
    sat.done->expect(static_cast<int>(want_ms) + 250 + 1000);
    CF_RESULT(sat.done->get_result(), fw::deadline_exceeded);
    SC_ON_TIME(sat.done->at_ms - sat.started_ms, want_ms);
    a.close();
    b.close();
}

} // namespace

namespace cases {

void sc01(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        one_way_and_errors(tr);
}

void sc02(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p)) {
        capacity_wait(tr, true);
        capacity_wait(tr, false);
    }
}

void sc03(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        waiter_pool_full(tr);
}

void sc06(const conf::params_t &p)
{
    auto trs = sc::transports(p);
    setters_validate();
    for (const auto &tr : trs) {
        pending_send_times_out(tr, sc::mesh, 0, 0, 1000);
        pending_send_times_out(tr, sc::cs, 0, 0, 1000);
        pending_send_times_out(tr, sc::mesh, 0, ms_ns(300), 300);
        pending_send_times_out(tr, sc::cs, ms_ns(400), ms_ns(3000), 400);
    }
}

} // namespace cases
