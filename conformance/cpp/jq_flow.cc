// jq_flow.cc — seed 001 §10 flow cases: JQ-06 (a ClientServer reply
// bypasses the job queue but not the FIFO), JQ-07 (one connection's flood
// does not stop another's requests), JQ-16 (lack of room is not an error),
// JQ-17 (the FIFO of one owner never rejects), JQ-18 (a failure after a
// completed call is only recorded). Ported from conformance/c/jq_flow.c.
#include "cases.hpp"
#include "sc.hpp"

#include <algorithm>
#include <iostream>

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

constexpr std::uint64_t sat_hwm = 16 * 1024;
constexpr std::int64_t ms_ns(std::int64_t v) { return v * 1000000; }

// ------------------------------------------------------------- JQ-06

void cs_bypass_keeps_fifo(const std::string &tr)
{
    constexpr int FLOOD = 8, D = 5;
    sc::server_t s("S");
    s.max_jobs = 1;
    s.open(sc::cs, tr, "jq06");

    sc::gate_t cgate;
    sc::client_t c;
    c.mode = sc::cs;
    c.h = sc::mesh_host("C", tr, true, 1);
    c.h->add_mesh_channel_server("m", "flood", 100);
    c.h->on_send(zlink::owner::channel("flood"), "m", [&cgate](zlink::turn &) { cgate.pass(); });
    c.h->add_cs_client("svc", s.bound);
    c.h->set_channel_option("svc", zlink::node_option::send_timeout, ms_ns(60000));
    c.h->start();
    std::string c_bound = c.h->endpoint("m");

    auto fh = sc::mesh_host("F", tr, false, 0);
    fh->add_mesh_channel_client("m", "flood");
    fh->set_mesh_option("m", zlink::node_option::send_timeout, ms_ns(60000));
    fh->mesh_connect("m", c_bound, "C");
    fh->start();
    CF_EVENTUALLY(fh->ready_peers("m") == 1, 5000);
    CF_EVENTUALLY(c.h->ready_peers("m") == 1, 5000);

    {
        auto w = sc::request_call(c, "warm");
        w.timeout(std::chrono::milliseconds(conf::ms(5000)));
        CF_RESULT(sc::wait_request(w).result, 0);
    }

    std::vector<std::unique_ptr<sc::done_t>> fd;
    std::vector<zlink::send_call_t> fc;
    for (int i = 0; i < FLOOD; i++) {
        fd.push_back(std::make_unique<sc::done_t>());
        fc.push_back(fh->send_to_channel("flood"));
        fc.back().payload("m", "f" + std::to_string(i));
        sc::start(fc.back(), *fd.back());
        if (i == 0)
            CF_EVENTUALLY(cgate.waiting() == 1, 5000);
    }
    CF_EVENTUALLY(c.h->capacity().queued_jobs == 1, 5000);
    auto before = c.h->capacity();
    CF_EQ(before.pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    CF_EQ(before.permits_in_use, 1u);
    CF_EQ(before.effective_max, 1u);

    {
        auto q1 = sc::request_call(c, "q1");
        q1.timeout(std::chrono::milliseconds(conf::ms(2000)));
        auto o = sc::wait_request(q1);
        CF_RESULT(o.result, 0);
        CF_EQ(o.reply, std::string("q1"));
    }
    auto after = c.h->capacity();
    CF_EQ(after.pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    CF_EQ(after.permits_in_use, before.permits_in_use);
    CF_EQ(after.reserved_supply_permits, before.reserved_supply_permits);
    CF_EQ(after.queued_jobs, before.queued_jobs);
    CF_EQ(after.peak_permits_in_use, before.peak_permits_in_use);
    CF_EQ(after.transitions_paused, before.transitions_paused);
    CF_EQ(after.transitions_running, before.transitions_running);
    CF_EQ(cgate.waiting(), 1);

    cgate.open();
    for (auto &d : fd) {
        d->expect(5000);
        CF_RESULT(d->get_result(), 0);
    }
    CF_EVENTUALLY(c.h->capacity().permits_in_use == 0, 5000);

    std::vector<std::unique_ptr<sc::done_t>> dd;
    std::vector<zlink::send_call_t> dc;
    sc::send_gated(c, s, dd, dc, D);
    sc::done_t dq;
    auto q = sc::request_call(c, "q");
    q.timeout(std::chrono::milliseconds(conf::ms(10000)));
    std::int64_t t0 = conf::now_ms();
    sc::start(q, dq);
    CF_CHECK(!dq.wait_until(t0 + 100));
    CF_EQ(s.rec.count(), 2u);
    CF_EQ(s.gate.waiting(), 1);

    s.gate.open();
    for (auto &d : dd) {
        d->expect(5000);
        CF_RESULT(d->get_result(), 0);
    }
    dq.expect(10000);
    CF_RESULT(dq.get_result(), 0);
    CF_EQ(dq.reply, std::string("q"));
    std::vector<std::string> seen;
    {
        std::lock_guard<std::mutex> g(s.rec.m);
        seen = s.rec.seen;
    }
    const std::vector<std::string> want = {"warm", "q1", "d1", "d2", "d3", "d4", "d5", "q"};
    if (seen != want) {
        std::string got;
        for (const auto &x : seen)
            got += " " + x;
        CF_FAIL(tr + ": S handled" + got + " (warm q1 d1..d5 q expected)");
    }
    CF_EQ(dq.count(), 1);
    fh->shutdown(2000ms);
    c.h->shutdown(2000ms);
    s.close();
}

// ------------------------------------------------------------- JQ-07

void cross_connection_progress(const std::string &tr, int oneways, int window, int requests,
                               int timeout_ms, int p99_ms)
{
    sc::server_t b("B");
    b.open(sc::mesh, tr, "jq07");
    sc::client_t a1;
    a1.send_timeout = ms_ns(60000);
    a1.open(sc::mesh, {&b});

    sc::client_t a2;
    a2.mode = sc::mesh;
    a2.h = sc::mesh_host("A2", tr, false, 0);
    a2.h->add_mesh_channel_client("m", "svc");
    a2.h->mesh_connect("m", b.bound, "B");
    a2.h->start();
    CF_EVENTUALLY(a2.h->ready_peers("m") == 1, 5000);
    CF_EVENTUALLY(b.h->ready_peers("m") == 2, 5000);

    sc::flood_t f;
    std::int64_t flood_t0 = conf::now_ms();
    f.start(*a1.h, oneways, window);
    std::vector<std::int64_t> lat(static_cast<std::size_t>(requests));
    int done_at_last = 0;
    for (int k = 0; k < requests; k++) {
        int mark = static_cast<int>(static_cast<std::int64_t>(oneways) * (k + 1) / (2 * requests));
        if (f.wait_done(mark, 30000) < mark)
            CF_FAIL(tr + ": the flood did not reach " + std::to_string(mark) + " sends");
        std::string tag = "r" + std::to_string(k);
        auto r = sc::request_call(a2, tag);
        r.timeout(std::chrono::milliseconds(conf::ms(timeout_ms)));
        std::int64_t t0 = conf::now_ms();
        auto o = sc::wait_request(r);
        lat[static_cast<std::size_t>(k)] = conf::now_ms() - t0;
        if (o.result != 0)
            CF_FAIL(tr + ": A2's request " + std::to_string(k) + " ended " +
                    std::string(zlink::result_name(o.result)));
        CF_EQ(o.reply, tag);
        if (k == requests - 1)
            done_at_last = f.wait_done(0, 0);
    }
    if (done_at_last >= oneways)
        CF_FAIL(tr + ": the flood ended before A2's last request");
    f.finish_all(120000);
    std::int64_t flood_ms = conf::now_ms() - flood_t0;
    CF_EVENTUALLY(b.rec.count() == static_cast<std::size_t>(oneways + requests), 30000);
    std::sort(lat.begin(), lat.end());
    std::size_t p99_at = static_cast<std::size_t>((requests * 99 + 99) / 100) - 1;
    std::int64_t p99 = lat[p99_at];
    auto bc = b.h->capacity();
    std::cerr << "JQ-07 " << tr << ": " << oneways << " one-ways in " << flood_ms
              << " ms; A2 latency ms min " << lat[0] << " median " << lat[lat.size() / 2] << " p99 "
              << p99 << "; B paused " << bc.transitions_paused << " times\n";
    if (p99 >= conf::ms(p99_ms))
        CF_FAIL(tr + ": A2's request p99 " + std::to_string(p99) + " ms, bound " +
                std::to_string(conf::ms(p99_ms)) + " ms");
    sc::expect_no_drops(*b.h, "B");
    a2.close();
    a1.close();
    b.close();
}

// ------------------------------------------------------------- JQ-16

void check_room_outcome(const std::string &tr, const std::string &what, int i, sc::done_t &d,
                        std::int64_t started, std::int64_t want_ms, bool oneway)
{
    d.expect(5000);
    int r = d.get_result();
    if (r == fw::capacity_exceeded || r == fw::rejected || r == fw::unavailable)
        CF_FAIL(tr + ": " + what + " " + std::to_string(i) + " ended " +
                std::string(zlink::result_name(r)) + " for lack of room");
    if (oneway && r == 0)
        return;
    if (r != fw::deadline_exceeded)
        CF_FAIL(tr + ": " + what + " " + std::to_string(i) + " ended " +
                std::string(zlink::result_name(r)));
    SC_ON_TIME(d.at_ms - started, want_ms);
    CF_EQ(d.count(), 1);
}

void room_is_not_an_error(const std::string &tr, sc::mode_t mode, int batch, int send_ms,
                          int request_ms)
{
    sc::server_t b("B");
    b.max_jobs = 1;
    b.hwm = sat_hwm;
    sc::client_t a;
    a.hwm = sat_hwm;
    a.send_timeout = ms_ns(send_ms);
    b.open(mode, tr, mode == sc::mesh ? "jq16m" : "jq16c");
    a.open(mode, {&b});
    sc::sat_t sat;
    sc::saturate(a, b, sat);

    std::vector<std::unique_ptr<sc::done_t>> dd;
    std::vector<zlink::send_call_t> sends;
    std::vector<zlink::request_call_t> reqs;
    std::vector<std::int64_t> t0;
    for (int i = 0; i < 2 * batch; i++) {
        bool request = i % 2 == 1;
        std::string tag = (request ? "q" : "w") + std::to_string(i / 2);
        dd.push_back(std::make_unique<sc::done_t>());
        t0.push_back(0);
        if (request) {
            reqs.push_back(sc::request_call(a, tag));
            reqs.back().timeout(std::chrono::milliseconds(request_ms));
            t0.back() = conf::now_ms();
            sc::start(reqs.back(), *dd.back());
        } else {
            sends.push_back(sc::send_call(a, tag));
            t0.back() = conf::now_ms();
            sc::start(sends.back(), *dd.back());
        }
    }
    check_room_outcome(tr, "the pending one-way", 0, *sat.done, sat.started_ms, send_ms, true);
    int admitted = 0, timed_out = 0;
    for (int i = 0; i < 2 * batch; i++) {
        bool request = i % 2 == 1;
        check_room_outcome(tr, request ? "request" : "one-way", i / 2, *dd[i], t0[i],
                           request ? request_ms : send_ms, !request);
        if (!request && dd[i]->get_result() == 0)
            admitted++;
        else if (!request)
            timed_out++;
    }
    std::cerr << "JQ-16 " << tr << (mode == sc::mesh ? " mesh" : " cs") << ": " << sat.accepted
              << " saturating sends accepted; batch one-ways: " << admitted << " admitted, "
              << timed_out << " DeadlineExceeded\n";
    a.close();
    b.close();
}

// ------------------------------------------------------------- JQ-17

void fifo_never_rejects(const std::string &tr, int oneways, int window)
{
    sc::server_t b("B");
    b.max_jobs = 2 * oneways;
    b.open(sc::mesh, tr, "jq17");
    sc::client_t a;
    a.send_timeout = ms_ns(60000);
    a.open(sc::mesh, {&b});
    b.gated = true;

    sc::flood_t f;
    std::int64_t t0 = conf::now_ms();
    f.start(*a.h, oneways, window);
    f.finish_all(60000);
    std::int64_t sent_ms = conf::now_ms() - t0;
    CF_EVENTUALLY(b.h->capacity().queued_jobs == static_cast<std::uint64_t>(oneways - 1), 30000);
    auto bc = b.h->capacity();
    CF_EQ(b.gate.waiting(), 1);
    CF_EQ(b.rec.count(), 0u);
    CF_EQ(bc.pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));

    b.gate.open();
    CF_EVENTUALLY(b.rec.count() == static_cast<std::size_t>(oneways), 60000);
    CF_EVENTUALLY(b.h->capacity().permits_in_use == 0, 5000);
    std::int64_t all_ms = conf::now_ms() - t0;
    {
        std::lock_guard<std::mutex> g(b.rec.m);
        CF_EQ(b.rec.seen.size(), static_cast<std::size_t>(oneways));
        for (int i = 0; i < oneways; i++)
            if (b.rec.seen[static_cast<std::size_t>(i)] != "f" + std::to_string(i))
                CF_FAIL(tr + ": record " + std::to_string(i) + " is '" +
                        b.rec.seen[static_cast<std::size_t>(i)] + "'");
    }
    std::cerr << "JQ-17 " << tr << ": " << oneways << " one-ways completed in " << sent_ms
              << " ms, handled by " << all_ms << " ms; peak " << bc.peak_permits_in_use << "\n";
    sc::expect_no_drops(*b.h, "B");
    sc::expect_no_drops(*a.h, "A");
    a.close();
    b.close();
}

// ------------------------------------------------------------- JQ-18

void no_handler_only_recorded(const std::string &tr, sc::mode_t mode)
{
    sc::server_t b("B");
    b.open(mode, tr, mode == sc::mesh ? "jq18m" : "jq18c");
    sc::client_t a;
    a.open(mode, {&b});
    sc::expect_no_drops(*b.h, "B");
    {
        auto c = a.h->send_to_channel("svc");
        c.payload("nohandler", "x");
        CF_RESULT(sc::wait_send(c).result, 0);
    }
    CF_EVENTUALLY(b.h->metric("zlink.mesh_node.messages.dropped", "reason=no_handler") == 1, 5000);
    {
        auto after = sc::request_call(a, "after");
        CF_RESULT(sc::wait_request(after).result, 0);
    }
    CF_EQ(b.h->metric("zlink.mesh_node.messages.dropped", "reason=no_handler"), 1);
    for (std::size_t i = 1; i < 5; i++)
        CF_EQ(b.h->metric("zlink.mesh_node.messages.dropped", sc::drop_reasons[i]), 0);
    CF_EQ(b.rec.has("x"), 0);
    CF_EQ(b.rec.count(), 1u);
    sc::expect_no_drops(*a.h, "A");
    a.close();
    b.close();
}

} // namespace

namespace cases {

void jq06(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        cs_bypass_keeps_fifo(tr);
}

void jq07(const conf::params_t &p)
{
    auto trs = sc::transports(p);
    int oneways = static_cast<int>(conf::param_int(p, "oneways"));
    int window = static_cast<int>(conf::param_int(p, "window"));
    int requests = static_cast<int>(conf::param_int(p, "requests"));
    int timeout_ms = static_cast<int>(conf::param_int(p, "timeout_ms"));
    int p99_ms = static_cast<int>(conf::param_int(p, "p99_ms"));
    CF_CHECK(oneways > 0 && window > 0 && requests > 0 && timeout_ms > 0 && p99_ms > 0);
    for (const auto &tr : trs)
        cross_connection_progress(tr, oneways, window, requests, timeout_ms, p99_ms);
}

void jq16(const conf::params_t &p)
{
    auto trs = sc::transports(p);
    int batch = static_cast<int>(conf::param_int(p, "batch"));
    int send_ms = static_cast<int>(conf::param_int(p, "send_timeout_ms"));
    int request_ms = static_cast<int>(conf::param_int(p, "request_timeout_ms"));
    CF_CHECK(batch > 0 && send_ms > 0 && request_ms > 0 && request_ms != send_ms);
    for (const auto &tr : trs) {
        room_is_not_an_error(tr, sc::mesh, batch, send_ms, request_ms);
        room_is_not_an_error(tr, sc::cs, batch, send_ms, request_ms);
        room_is_not_an_error(tr, sc::mesh, batch, request_ms, send_ms);
    }
}

void jq17(const conf::params_t &p)
{
    auto trs = sc::transports(p);
    int oneways = static_cast<int>(conf::param_int(p, "oneways"));
    int window = static_cast<int>(conf::param_int(p, "window"));
    CF_CHECK(oneways > 0 && window > 0);
    for (const auto &tr : trs)
        fifo_never_rejects(tr, oneways, window);
}

void jq18(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p)) {
        no_handler_only_recorded(tr, sc::mesh);
        no_handler_only_recorded(tr, sc::cs);
    }
}

} // namespace cases
