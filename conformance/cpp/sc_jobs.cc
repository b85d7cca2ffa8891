// sc_jobs.cc — seed 000 §17 cases that meet the job queue of seed 001:
// SC-12 (a ClientServer request behind one-way DATA to a PAUSED server
// keeps the single FIFO; also JQ-21) and SC-13 (a RouteMesh reply reaches a
// host while that host is PAUSED). Ported from conformance/c/sc_jobs.c.
#include "cases.hpp"
#include "sc.hpp"

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

void mesh_reply_while_paused(const std::string &tr)
{
    sc::gate_t gate;
    auto b = sc::mesh_host("B", tr, true, 0);
    b->add_mesh_channel_server("m", "back", 100);
    b->on_request(zlink::owner::channel("back"), "m",
                  [](zlink::turn &t) { t.respond("m", t.payload()); });
    b->start();
    std::string bound_b = b->endpoint("m");

    auto a = sc::mesh_host("A", tr, true, 2);
    a->add_mesh_channel_server("m", "svc", 100);
    a->on_send(zlink::owner::channel("svc"), "m", [&gate](zlink::turn &) { gate.pass(); });
    a->add_mesh_channel_client("m", "back");
    a->mesh_connect("m", bound_b, "B");
    a->start();
    std::string bound_a = a->endpoint("m");

    auto c = sc::mesh_host("C", tr, false, 0);
    c->add_mesh_channel_client("m", "svc");
    c->set_mesh_option("m", zlink::node_option::send_timeout, 30000LL * 1000000);
    c->mesh_connect("m", bound_a, "A");
    c->start();
    CF_EVENTUALLY(c->ready_peers("m") == 1, 5000);
    CF_EVENTUALLY(a->ready_peers("m") >= 1, 5000);

    for (int i = 0; i < 3; i++) {
        auto f = c->send_to_channel("svc");
        f.payload("m", "f" + std::to_string(i));
        CF_RESULT(sc::wait_send(f).result, 0);
        if (i == 0)
            CF_EVENTUALLY(gate.waiting() == 1, 5000);
    }
    CF_EVENTUALLY(a->capacity().queued_jobs == 2, 5000);
    auto cap = a->capacity();
    CF_EQ(cap.pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    CF_EQ(cap.queued_jobs, 2u);

    auto q = a->request_to_channel("back");
    q.payload("m", "q");
    std::int64_t t0 = conf::now_ms();
    zlink::reply_t r = q.submit();
    std::int64_t took = conf::now_ms() - t0;
    CF_EQ(std::string(r.text()), std::string("q"));
    if (took >= conf::ms(100))
        CF_FAIL("the request took " + std::to_string(took) + " ms while A was paused");
    cap = a->capacity();
    CF_EQ(cap.pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    CF_EQ(cap.permits_in_use, 2u);
    CF_EQ(cap.transitions_running, 0u);

    gate.open();
    CF_EVENTUALLY(a->capacity().permits_in_use == 0, 5000);
    CF_EQ(a->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));
    c->shutdown(2000ms);
    a->shutdown(2000ms);
    b->shutdown(2000ms);
}

void cs_reply_held_in_fifo(const std::string &tr)
{
    constexpr int D = 20;
    sc::server_t s("S");
    s.max_jobs = 1;
    s.open(sc::cs, tr, "sc12");
    sc::client_t c;
    c.send_timeout = 60000LL * 1000000;
    c.open(sc::cs, {&s});
    {
        auto w = sc::request_call(c, "warm");
        CF_RESULT(sc::wait_request(w).result, 0);
    }

    std::vector<std::unique_ptr<sc::done_t>> dd;
    std::vector<zlink::send_call_t> dc;
    sc::send_gated(c, s, dd, dc, D);
    sc::done_t dq;
    std::int64_t t0 = conf::now_ms();
    auto q = sc::request_call(c, "q");
    q.timeout(300ms);
    sc::start(q, dq);
    dq.expect(2000);
    CF_RESULT(dq.get_result(), fw::deadline_exceeded);
    SC_ON_TIME(dq.at_ms - t0, 300);
    CF_EQ(s.h->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));

    s.gate.open();
    for (auto &d : dd) {
        d->expect(5000);
        CF_RESULT(d->get_result(), 0);
    }
    {
        auto after = sc::request_call(c, "after");
        CF_RESULT(sc::wait_request(after).result, 0);
    }
    std::vector<std::string> seen;
    {
        std::lock_guard<std::mutex> g(s.rec.m);
        seen = s.rec.seen;
    }
    std::size_t n = seen.size();
    bool order = n >= 2 + D && seen[0] == "warm" && seen[n - 1] == "after";
    for (int i = 0; order && i < D; i++)
        order = seen[1 + i] == "d" + std::to_string(i + 1);
    bool q_ok = n == 2 + D || (n == 3 + D && seen[1 + D] == "q");
    if (!order || !q_ok)
        CF_FAIL("S handled " + std::to_string(n) +
                " records out of FIFO order (warm, d1..d20, [q], after expected)");
    CF_EQ(dq.count(), 1);
    CF_EVENTUALLY(c.h->metric("zlink.mesh_node.requests.inflight") == 0, 2000);
    c.close();
    s.close();
}

} // namespace

namespace cases {

void sc12(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        cs_reply_held_in_fifo(tr);
}

void sc13(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        mesh_reply_while_paused(tr);
}

} // namespace cases
