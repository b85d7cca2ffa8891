// jq_permits.cc — seed 001 §10 cases about permits and saturation: JQ-02
// (permit accounting), JQ-03 (no receive without a permit), JQ-05
// (saturated ingress waits, completions flow), JQ-14 (a reply reaches a
// PAUSED ClientServer client), JQ-15 (no holding while waiting), JQ-20
// (completions need no permit). Ported from conformance/c/jq_permits.c.
//
// The serial owner is a channel's handler; a gate inside it stands in for
// the gated SpotWide owner. Its "await" is a C++ coroutine handler: it
// co_awaits a request to another channel, and its turn (its gate) stays
// open until the coroutine finishes.
#include "cases.hpp"
#include "sc.hpp"
#include "wire.hpp"

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

constexpr std::int64_t ms_ns(std::int64_t v) { return v * 1000000; }

struct turn_rec {
    std::string tag;
    std::int64_t in_use = 0, reserved = 0;
    int await_result = -1;
    std::int64_t await_elapsed_ms = 0;
    std::string await_reply;
};

struct owner_t {
    zlink::host *h = nullptr;
    std::atomic<bool> gated{false};
    sc::gate_t gate;
    std::string await_prefix;
    std::string await_channel;
    std::int64_t await_timeout_ms = 0;
    std::mutex m;
    int started = 0, ended = 0, awaited = 0;
    std::vector<turn_rec> recs;

    explicit owner_t(bool g) { gated = g; }
    int get_started()
    {
        std::lock_guard<std::mutex> g(m);
        return started;
    }
    int get_ended()
    {
        std::lock_guard<std::mutex> g(m);
        return ended;
    }
    int get_awaited()
    {
        std::lock_guard<std::mutex> g(m);
        return awaited;
    }
    turn_rec rec(int i)
    {
        std::lock_guard<std::mutex> g(m);
        CF_CHECK(i < static_cast<int>(recs.size()));
        return recs[static_cast<std::size_t>(i)];
    }
};

std::string tag_of(std::string_view b)
{
    std::size_t k = 0;
    while (k < b.size() && k < 31 && b[k] != '\0')
        k++;
    return std::string(b.substr(0, k));
}

// One-way records: capacity first, then the record, the gate, and the end
// of the turn or an await.
zlink::task_t<void> on_send(owner_t &o, zlink::turn &t)
{
    auto c = o.h->capacity(); // the first instruction
    std::string tag = tag_of(t.text());
    int i;
    bool await;
    {
        std::lock_guard<std::mutex> g(o.m);
        i = o.started++;
        turn_rec r;
        r.tag = tag;
        r.in_use = static_cast<std::int64_t>(c.permits_in_use);
        r.reserved = static_cast<std::int64_t>(c.reserved_supply_permits);
        o.recs.push_back(r);
        await = !o.await_prefix.empty() && tag.rfind(o.await_prefix, 0) == 0;
    }
    if (o.gated)
        o.gate.pass();
    if (!await) {
        std::lock_guard<std::mutex> g(o.m);
        o.ended++;
        co_return;
    }
    auto q = o.h->request_to_channel(o.await_channel);
    q.payload("m", tag).timeout(std::chrono::milliseconds(o.await_timeout_ms));
    std::int64_t t0 = conf::now_ms();
    int result = 0;
    std::string reply;
    try {
        zlink::reply_t r = co_await q.async();
        reply = tag_of(r.text());
    } catch (...) {
        result = sc::result_of(std::current_exception());
    }
    std::int64_t now = conf::now_ms();
    std::lock_guard<std::mutex> g(o.m);
    auto &r = o.recs[static_cast<std::size_t>(i)];
    r.await_result = result;
    r.await_elapsed_ms = now - t0;
    r.await_reply = reply;
    o.awaited++;
    o.ended++;
}

// Requests: the gate (if gated), then the payload back as the reply.
void on_request(owner_t *o, zlink::turn &t)
{
    if (o != nullptr && o->gated)
        o->gate.pass();
    if (o != nullptr) {
        std::lock_guard<std::mutex> g(o->m);
        o->started++;
        o->ended++;
    }
    try {
        t.respond("m", t.payload());
    } catch (const std::exception &) {
    }
}

void serve(zlink::host &h, const std::string &ch, owner_t *send_owner, owner_t *request_owner)
{
    h.add_mesh_channel_server("m", ch, 100);
    auto owner = zlink::owner::channel(ch);
    if (send_owner != nullptr) {
        send_owner->h = &h;
        h.on_send(owner, "m", [send_owner](zlink::turn &t) { return on_send(*send_owner, t); });
    }
    h.on_request(owner, "m", [request_owner](zlink::turn &t) { on_request(request_owner, t); });
}

void send_wait(zlink::host &h, const std::string &ch, const std::string &tag)
{
    auto f = h.send_to_channel(ch);
    f.payload("m", tag);
    CF_RESULT(sc::wait_send(f).result, 0);
}

zlink::send_call_t send_start(zlink::host &h, const std::string &ch, const std::string &tag,
                              sc::done_t &d)
{
    auto f = h.send_to_channel(ch);
    f.payload("m", tag);
    sc::start(f, d);
    return f;
}

int request(zlink::host &h, const std::string &ch, const std::string &packet, const std::string &tag,
            std::string *reply, std::int64_t &took)
{
    auto q = h.request_to_channel(ch);
    q.payload(packet, tag).timeout(10000ms);
    std::int64_t t0 = conf::now_ms();
    auto o = sc::wait_request(q);
    took = conf::now_ms() - t0;
    if (reply != nullptr)
        *reply = o.reply;
    return o.result;
}

void expect_order(owner_t &o, int from, const std::string &prefix, int first, int n)
{
    std::lock_guard<std::mutex> g(o.m);
    for (int i = 0; i < n; i++) {
        std::string want = prefix + std::to_string(first + i);
        if (from + i >= o.started || o.recs[static_cast<std::size_t>(from + i)].tag != want)
            CF_FAIL("turn " + std::to_string(from + i) + " of " + std::to_string(o.started) +
                    " started is \"" +
                    (from + i < o.started ? o.recs[static_cast<std::size_t>(from + i)].tag : "") +
                    "\", expected " + want);
    }
}

std::unique_ptr<zlink::host> flooder(const std::string &tr, const std::string &ch,
                                     const std::string &bound, const std::string &peer)
{
    auto c = sc::mesh_host("C", tr, false, 0);
    c->add_mesh_channel_client("m", ch);
    c->set_mesh_option("m", zlink::node_option::send_timeout, ms_ns(30000));
    c->mesh_connect("m", bound, peer);
    return c;
}

struct trio_t {
    std::unique_ptr<zlink::host> a, b, c;
};

trio_t trio_open(const std::string &tr, std::int64_t max_jobs, owner_t &oa, owner_t &ob)
{
    trio_t t;
    t.b = sc::mesh_host("B", tr, true, 0);
    serve(*t.b, "back", nullptr, &ob);
    t.b->start();
    std::string bound_b = t.b->endpoint("m");
    t.a = sc::mesh_host("A", tr, true, max_jobs);
    serve(*t.a, "svc", &oa, nullptr);
    t.a->add_mesh_channel_client("m", "back");
    t.a->mesh_connect("m", bound_b, "B");
    t.a->start();
    std::string bound_a = t.a->endpoint("m");
    t.c = flooder(tr, "svc", bound_a, "A");
    t.c->start();
    CF_EVENTUALLY(t.c->ready_peers("m") == 1, 5000);
    CF_EVENTUALLY(t.a->ready_peers("m") == 2, 5000);
    return t;
}

bool saturated(zlink::host &h, zlink::host &c)
{
    auto cap = h.capacity();
    return cap.permits_in_use == cap.effective_max && cap.pressure_state == ZLINK_PRESSURE_PAUSED &&
           (cap.capacity_waiters >= 1 || c.status().oneway_waiting >= 1);
}

void end_host(zlink::host &h) { h.shutdown(2000ms); }

// ------------------------------------------------------------- JQ-02

void expect_start(owner_t &o, int i, std::int64_t queued)
{
    turn_rec r = o.rec(i);
    if (r.in_use - r.reserved != queued || r.reserved > 1)
        CF_FAIL("turn " + std::to_string(i) + " started with " + std::to_string(r.in_use) +
                " permits in use (" + std::to_string(r.reserved) + " reserved), expected " +
                std::to_string(queued) + " jobs");
}

void permit_accounting(const std::string &tr)
{
    owner_t oa(true), ob(true);
    oa.await_prefix = "j1";
    oa.await_channel = "back";
    oa.await_timeout_ms = 10000;
    trio_t t = trio_open(tr, 4, oa, ob);
    zlink::host &a = *t.a;

    send_wait(*t.c, "svc", "j1");
    CF_EVENTUALLY(oa.gate.waiting() == 1, 5000);
    expect_start(oa, 0, 0);
    CF_EVENTUALLY(a.capacity().permits_in_use == 0, 5000);
    for (int i = 2; i <= 4; i++)
        send_wait(*t.c, "svc", "j" + std::to_string(i));
    CF_EVENTUALLY(a.capacity().queued_jobs == 3 && a.capacity().permits_in_use == 3, 5000);
    CF_EQ(a.capacity().queued_jobs, 3u);
    CF_EQ(a.capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));

    oa.gate.open();
    CF_EVENTUALLY(ob.gate.waiting() == 1, 5000);
    oa.gate.close();
    CF_EVENTUALLY(a.capacity().permits_in_use == 3, 5000);
    CF_EQ(a.capacity().queued_jobs, 3u);
    CF_EQ(a.status().turns_running, 1u);
    CF_EQ(oa.get_started(), 1);

    ob.gate.open();
    CF_EVENTUALLY(oa.get_awaited() == 1 && oa.gate.waiting() == 1, 5000);
    CF_RESULT(oa.rec(0).await_result, 0);
    CF_EQ(oa.rec(0).await_reply, std::string("j1"));
    CF_EQ(oa.get_started(), 2);
    expect_start(oa, 1, 2);
    CF_EVENTUALLY(a.capacity().permits_in_use == 2, 5000);
    CF_EQ(a.capacity().queued_jobs, 2u);

    oa.gate.open();
    CF_EVENTUALLY(oa.get_ended() == 4, 5000);
    expect_order(oa, 0, "j", 1, 4);
    expect_start(oa, 2, 1);
    expect_start(oa, 3, 0);
    CF_EVENTUALLY(a.capacity().permits_in_use == 0, 5000);
    end_host(*t.c);
    end_host(*t.a);
    end_host(*t.b);
}

// ------------------------------------------------------------- JQ-03

bool raw_hello(zlink::socket &peer, zlink_completion_id_t &id)
{
    wire::writer w;
    w.prefix(1, 0);
    w.l8("m");
    w.l8("C");
    w.l8("framework-service-v11");
    w.u64(1);
    w.u16(0);
    std::vector<zlink::message> m;
    m.push_back(w.msg());
    zlink::routing_id to("A");
    auto sub = peer.try_request(&to, m, std::chrono::milliseconds(conf::ms(5000)),
                                zlink::send_flags::dontwait);
    id = sub.id;
    if (!sub.ec)
        return true;
    CF_EQ(sub.ec.message(), std::string("ZLINK_SUBMIT_NOT_CONNECTED"));
    return false;
}

zlink::submit_t raw_send(zlink::socket &peer, const std::string &tag)
{
    auto m = wire::record(0, 0, 0, "svc", tag);
    return peer.try_send_to(zlink::routing_id("A"), m, zlink::send_flags::dontwait);
}

std::uint64_t paused_seen(zlink::socket &peer, zlink::monitor &mon)
{
    zlink_pollitem_t it{};
    it.socket = peer.handle();
    it.events = ZLINK_POLLOUT;
    zlink::poll(std::span(&it, 1), 0ms);
    auto st = mon.status();
    CF_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
    return st.flow_paused_connections;
}

void raw_writable(zlink::socket &peer, zlink_completion_id_t wt)
{
    zlink::completion c = peer.completion_recv();
    CF_EQ(c.kind(), ZLINK_COMPLETION_WRITABLE);
    CF_EQ(c.id(), wt);
    CF_EQ(c.send_result(), static_cast<int>(ZLINK_SEND_ADMITTED));
}

void no_receive_without_permit()
{
    owner_t oa(true);
    auto a = sc::mesh_host("A", "tcp", true, 2);
    serve(*a, "svc", &oa, nullptr);
    a->start();
    std::string bound = a->endpoint("m");

    zlink::context ctx;
    std::optional<zlink::socket> peer;
    peer.emplace(ctx, zlink::socket_type::router);
    peer->set_option(ZLINK_LINGER, 0);
    peer->set_option(ZLINK_RCVTIMEO, conf::ms(5000));
    peer->set_routing_id("C");
    peer->set_option_string(ZLINK_CONNECT_ROUTING_ID, "A");
    peer->connect(bound);
    std::optional<zlink::monitor> mon;
    mon.emplace(*peer, 0);

    zlink_completion_id_t hid = 0;
    CF_EVENTUALLY(raw_hello(*peer, hid), 5000);
    {
        zlink::completion hc = peer->completion_recv();
        CF_EQ(hc.kind(), ZLINK_COMPLETION_REQUEST);
        CF_EQ(hc.id(), hid);
        CF_EQ(hc.request_result(), static_cast<int>(ZLINK_REQUEST_OK));
        CF_CHECK(hc.reply_parts().size() >= 1 && hc.reply_parts()[0].size() > 3);
        CF_EQ(static_cast<int>(static_cast<const std::uint8_t *>(hc.reply_parts()[0].data())[3]), 2);
    }
    CF_EVENTUALLY(a->ready_peers("m") == 1, 5000);

    auto s1 = raw_send(*peer, "r1");
    CF_EQ(s1.ec.message(), std::string("OK"));
    zlink_completion_id_t wt = 0;
    CF_EVENTUALLY(oa.gate.waiting() == 1, 5000);
    int sent = 1;
    for (int i = 2; i <= 5; i++) {
        auto s = raw_send(*peer, "r" + std::to_string(i));
        if (s.ec) {
            CF_EQ(s.ec.message(), std::string("ZLINK_SUBMIT_BACKPRESSURED"));
            CF_CHECK(s.id != 0);
            wt = s.id;
            break;
        }
        sent = i;
    }
    CF_CHECK(sent >= 3);
    CF_EVENTUALLY(a->capacity().queued_jobs == 2, 5000);
    CF_EVENTUALLY(paused_seen(*peer, *mon) == 1, 5000);
    if (sent >= 4)
        CF_EVENTUALLY(a->capacity().capacity_waiters >= 1, 5000);
    auto cap = a->capacity();
    CF_EQ(cap.permits_in_use, 2u);
    CF_EQ(cap.queued_jobs, 2u);
    CF_EQ(cap.pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    if (sent >= 4)
        CF_CHECK(cap.capacity_waiters >= 1);
    CF_EQ(oa.get_started(), 1);
    CF_EQ(a->status().turns_queued, 2u);

    oa.gate.open();
    while (sent < 5) {
        if (wt != 0) {
            raw_writable(*peer, wt);
            wt = 0;
        }
        auto s = raw_send(*peer, "r" + std::to_string(sent + 1));
        if (!s.ec) {
            sent++;
        } else {
            CF_EQ(s.ec.message(), std::string("ZLINK_SUBMIT_BACKPRESSURED"));
            CF_CHECK(s.id != 0);
            wt = s.id;
        }
    }
    CF_EVENTUALLY(oa.get_ended() == 5, 5000);
    expect_order(oa, 0, "r", 1, 5);
    CF_EVENTUALLY(a->capacity().permits_in_use == 0, 5000);
    CF_EQ(a->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));
    CF_EQ(sc::dropped(*a), 0);
    CF_EQ(oa.get_started(), 5);
    mon.reset();
    peer->close();
    peer.reset();
    end_host(*a);
}

// ------------------------------------------------------------- JQ-05

void saturated_ingress(const std::string &tr)
{
    constexpr int D = 500, FLOOD = 40;
    std::string bound_a;
    {
        owner_t oa(true);
        auto b = sc::mesh_host("B", tr, true, 0);
        serve(*b, "back", nullptr, nullptr);
        b->start();
        std::string bound_b = b->endpoint("m");
        auto a = sc::mesh_host("A", tr, true, 2);
        serve(*a, "svc", &oa, nullptr);
        a->add_mesh_channel_client("m", "back");
        a->mesh_connect("m", bound_b, "B");
        a->start();
        bound_a = a->endpoint("m");
        auto c = flooder(tr, "svc", bound_a, "A");
        c->start();
        CF_EVENTUALLY(c->ready_peers("m") == 1, 5000);
        CF_EVENTUALLY(a->ready_peers("m") == 2, 5000);

        send_wait(*c, "svc", "f0");
        CF_EVENTUALLY(oa.gate.waiting() == 1, 5000);
        std::vector<std::unique_ptr<sc::done_t>> dd;
        std::vector<zlink::send_call_t> fc;
        for (int i = 1; i < FLOOD; i++) {
            dd.push_back(std::make_unique<sc::done_t>());
            fc.push_back(send_start(*c, "svc", "f" + std::to_string(i), *dd.back()));
        }
        CF_EVENTUALLY(saturated(*a, *c), 5000);

        std::string reply;
        std::int64_t took = 0;
        CF_RESULT(request(*a, "back", "m", "q", &reply, took), 0);
        CF_EQ(reply, std::string("q"));
        if (took >= conf::ms(200))
            CF_FAIL("the request to B took " + std::to_string(took) + " ms while A was saturated");
        CF_RESULT(request(*a, "back", "nope", "u", nullptr, took), fw::not_found);
        if (took >= conf::ms(200))
            CF_FAIL("the unknown packet's NotFound took " + std::to_string(took) + " ms");
        CF_EQ(a->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
        CF_EQ(a->capacity().transitions_running, 0u);

        sc::timer_t timer;
        timer.start();
        std::int64_t t0 = conf::now_ms();
        timer.at(t0 + D, [&oa] { oa.gate.open(); });
        a->shutdown(std::chrono::milliseconds(D));
        SC_ON_TIME(conf::now_ms() - t0, D);
        timer.finish();
        CF_EQ(a->state(), ZLINK_HOST_STOPPED);
        auto cap = a->capacity();
        CF_EQ(cap.capacity_waiters, 0u);
        CF_EQ(cap.permits_in_use, 0u);
        end_host(*c);
        for (auto &d : dd)
            d->expect(5000);
        b->shutdown(2000ms);
    }
    // Part 2: no shutdown; open() delivers everything.
    owner_t oa(true);
    auto a = sc::mesh_host("A", tr, true, 2);
    serve(*a, "svc", &oa, nullptr);
    a->start();
    bound_a = a->endpoint("m");
    auto c = flooder(tr, "svc", bound_a, "A");
    c->start();
    CF_EVENTUALLY(c->ready_peers("m") == 1, 5000);
    send_wait(*c, "svc", "f0");
    CF_EVENTUALLY(oa.gate.waiting() == 1, 5000);
    std::vector<std::unique_ptr<sc::done_t>> dd;
    std::vector<zlink::send_call_t> fc;
    for (int i = 1; i < FLOOD; i++) {
        dd.push_back(std::make_unique<sc::done_t>());
        fc.push_back(send_start(*c, "svc", "f" + std::to_string(i), *dd.back()));
    }
    CF_EVENTUALLY(saturated(*a, *c), 5000);
    oa.gate.open();
    for (auto &d : dd) {
        d->expect(10000);
        CF_RESULT(d->get_result(), 0);
    }
    CF_EVENTUALLY(oa.get_ended() == FLOOD, 10000);
    expect_order(oa, 0, "f", 0, FLOOD);
    CF_EQ(sc::dropped(*a), 0);
    CF_EVENTUALLY(a->capacity().permits_in_use == 0, 5000);
    CF_EQ(a->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));
    end_host(*c);
    end_host(*a);
}

// ------------------------------------------------------------- JQ-14

void reply_to_paused_client(const std::string &tr)
{
    zlink::host s("S");
    s.add_cs_server("cs-out", sc::endpoint(tr, "jq14", "S"));
    s.on_request(zlink::owner::channel("cs-out"), "m", [](zlink::turn &t) { on_request(nullptr, t); });
    s.start();
    std::string bound_s = s.endpoint("cs-out");

    owner_t oh(true);
    auto h = sc::mesh_host("H", tr, true, 1);
    serve(*h, "svc", &oh, nullptr);
    h->add_cs_client("cs-out", bound_s);
    h->start();
    std::string bound_h = h->endpoint("m");
    auto c = flooder(tr, "svc", bound_h, "H");
    c->start();
    CF_EVENTUALLY(c->ready_peers("m") == 1, 5000);

    std::string reply;
    std::int64_t took = 0;
    CF_RESULT(request(*h, "cs-out", "m", "warm", &reply, took), 0);

    send_wait(*c, "svc", "f0");
    CF_EVENTUALLY(oh.gate.waiting() == 1, 5000);
    std::vector<std::unique_ptr<sc::done_t>> dd;
    std::vector<zlink::send_call_t> fc;
    for (int i = 1; i < 4; i++) {
        dd.push_back(std::make_unique<sc::done_t>());
        fc.push_back(send_start(*c, "svc", "f" + std::to_string(i), *dd.back()));
    }
    CF_EVENTUALLY(saturated(*h, *c), 5000);
    auto before = h->capacity();
    CF_RESULT(request(*h, "cs-out", "m", "q", &reply, took), 0);
    CF_EQ(reply, std::string("q"));
    if (took >= conf::ms(200))
        CF_FAIL("the request to S took " + std::to_string(took) + " ms while H was PAUSED");
    auto after = h->capacity();
    CF_EQ(after.pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    CF_EQ(after.transitions_running, before.transitions_running);
    CF_EQ(after.permits_in_use, 1u);

    oh.gate.open();
    for (auto &d : dd) {
        d->expect(5000);
        CF_RESULT(d->get_result(), 0);
    }
    CF_EVENTUALLY(oh.get_ended() == 4, 5000);
    expect_order(oh, 0, "f", 0, 4);
    end_host(*c);
    end_host(*h);
    s.shutdown(2000ms);
}

// ------------------------------------------------------------- JQ-15

void no_holding_while_waiting(const std::string &tr)
{
    constexpr int FLOOD = 3;
    owner_t oa(false), ob(false);
    oa.await_prefix = "f";
    oa.await_channel = "svc-b";
    oa.await_timeout_ms = 1000;
    ob.await_prefix = "f";
    ob.await_channel = "svc-a";
    ob.await_timeout_ms = 1000;

    auto b = sc::mesh_host("B", tr, true, 2);
    serve(*b, "svc-b", &ob, nullptr);
    b->add_mesh_channel_client("m", "svc-a");
    b->start();
    std::string bound_b = b->endpoint("m");
    auto a = sc::mesh_host("A", tr, true, 2);
    serve(*a, "svc-a", &oa, nullptr);
    a->add_mesh_channel_client("m", "svc-b");
    a->mesh_connect("m", bound_b, "B");
    a->start();
    std::string bound_a = a->endpoint("m");
    auto c = sc::mesh_host("C", tr, false, 0);
    c->add_mesh_channel_client("m", "svc-a").add_mesh_channel_client("m", "svc-b");
    c->set_mesh_option("m", zlink::node_option::send_timeout, ms_ns(30000));
    c->mesh_connect("m", bound_a, "A").mesh_connect("m", bound_b, "B");
    c->start();
    CF_EVENTUALLY(c->ready_peers("m") == 2, 5000);
    CF_EVENTUALLY(a->ready_peers("m") == 2, 5000);
    CF_EVENTUALLY(b->ready_peers("m") == 2, 5000);

    std::vector<std::unique_ptr<sc::done_t>> dd;
    std::vector<zlink::send_call_t> fc;
    for (int i = 0; i < FLOOD; i++) {
        std::string tag = "f" + std::to_string(i);
        dd.push_back(std::make_unique<sc::done_t>());
        fc.push_back(send_start(*c, "svc-a", tag, *dd.back()));
        dd.push_back(std::make_unique<sc::done_t>());
        fc.push_back(send_start(*c, "svc-b", tag, *dd.back()));
    }
    std::int64_t until = conf::now_ms() + conf::ms(3 * 1000 + 5000);
    while (oa.get_awaited() < FLOOD || ob.get_awaited() < FLOOD) {
        if (conf::now_ms() > until)
            CF_FAIL("awaits ended: A " + std::to_string(oa.get_awaited()) + ", B " +
                    std::to_string(ob.get_awaited()));
        CF_EQ(a->ready_peers("m"), 2);
        CF_EQ(b->ready_peers("m"), 2);
        CF_EQ(c->ready_peers("m"), 2);
        std::this_thread::sleep_for(10ms);
    }
    owner_t *owners[2] = {&oa, &ob};
    for (int k = 0; k < 2; k++) {
        std::vector<turn_rec> recs;
        {
            std::lock_guard<std::mutex> g(owners[k]->m);
            recs = owners[k]->recs;
        }
        for (std::size_t i = 0; i < recs.size(); i++) {
            if (recs[i].tag.empty() || recs[i].tag[0] != 'f')
                continue;
            int r = recs[i].await_result;
            std::int64_t e = recs[i].await_elapsed_ms;
            if (r == fw::deadline_exceeded)
                SC_ON_TIME(e, 1000);
            else if (r != 0)
                CF_FAIL(std::string(1, "AB"[k]) + "'s request " + std::to_string(i) + " ended " +
                        std::string(zlink::result_name(r)));
            else if (e > 1000 + conf::ms(250))
                CF_FAIL(std::string(1, "AB"[k]) + "'s request replied after " + std::to_string(e) + " ms");
        }
    }
    CF_CHECK(a->capacity().transitions_paused >= 1);
    CF_CHECK(b->capacity().transitions_paused >= 1);
    for (auto &d : dd) {
        d->expect(5000);
        CF_RESULT(d->get_result(), 0);
    }
    CF_EVENTUALLY(a->capacity().permits_in_use == 0 && b->capacity().permits_in_use == 0 &&
                      a->status().turns_running == 0 && b->status().turns_running == 0,
                  5000);
    CF_EQ(a->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));
    CF_EQ(b->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));
    CF_EQ(oa.get_awaited(), FLOOD);
    CF_EQ(ob.get_awaited(), FLOOD);
    CF_EQ(sc::dropped(*a), 0);
    CF_EQ(sc::dropped(*b), 0);
    end_host(*c);
    end_host(*a);
    end_host(*b);
}

// ------------------------------------------------------------- JQ-20

void completion_needs_no_permit(const std::string &tr)
{
    constexpr int F = 6;
    owner_t oa(false), ob(true);
    oa.await_prefix = "h";
    oa.await_channel = "back";
    oa.await_timeout_ms = 10000;
    trio_t t = trio_open(tr, 1, oa, ob);

    send_wait(*t.c, "svc", "h0");
    CF_EVENTUALLY(ob.gate.waiting() == 1, 5000);
    std::vector<std::unique_ptr<sc::done_t>> dd;
    std::vector<zlink::send_call_t> fc;
    for (int i = 1; i <= F; i++) {
        dd.push_back(std::make_unique<sc::done_t>());
        fc.push_back(send_start(*t.c, "svc", "f" + std::to_string(i), *dd.back()));
    }
    CF_EVENTUALLY(saturated(*t.a, *t.c), 5000);
    CF_EQ(oa.get_awaited(), 0);
    CF_EQ(oa.get_started(), 1);

    std::int64_t t0 = conf::now_ms();
    ob.gate.open();
    CF_EVENTUALLY(oa.get_awaited() == 1, 5000);
    std::int64_t took = conf::now_ms() - t0;
    CF_RESULT(oa.rec(0).await_result, 0);
    CF_EQ(oa.rec(0).await_reply, std::string("h0"));
    if (took >= conf::ms(1000))
        CF_FAIL("the reply took " + std::to_string(took) + " ms to reach saturated A");
    for (auto &d : dd) {
        d->expect(5000);
        CF_RESULT(d->get_result(), 0);
    }
    CF_EVENTUALLY(oa.get_ended() == F + 1, 5000);
    CF_EQ(oa.rec(0).tag, std::string("h0"));
    expect_order(oa, 1, "f", 1, F);
    CF_EVENTUALLY(t.a->capacity().permits_in_use == 0, 5000);
    CF_EQ(t.a->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));
    end_host(*t.c);
    end_host(*t.a);
    end_host(*t.b);
}

} // namespace

namespace cases {

void jq02(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        permit_accounting(tr);
}

void jq03(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p)) {
        if (tr != "tcp")
            CF_FAIL("JQ-03's raw peer lives in its own context: tcp only, not " + tr);
        no_receive_without_permit();
    }
}

void jq05(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        saturated_ingress(tr);
}

void jq14(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        reply_to_paused_client(tr);
}

void jq15(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        no_holding_while_waiting(tr);
}

void jq20(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        completion_needs_no_permit(tr);
}

} // namespace cases
