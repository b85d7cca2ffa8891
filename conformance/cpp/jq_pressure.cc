// jq_pressure.cc — seed 001 §10 "Configuration of the two capacity
// authorities" and "Pressure state and sockets": JQ-01 (independent
// profiles and startup errors), JQ-11 (the 80/60 hysteresis, at the host
// and at the socket), JQ-12 (the latest absolute state wins: a new peer,
// 1,000 toggles, closes mid-toggle; with the test-only raw ZMP peer of
// rawzmp.hpp), JQ-13 (which sockets get a flow state). Ported from
// conformance/c/jq_pressure.c.
//
// An "observer" is a plain Core DEALER of the case's own context connected
// to one of H's ROUTERs, whose monitor status tells whether that ROUTER
// asks its peers to pause. H's handler waits at a turnstile that lets one
// turn through per token. Transport: tcp only (the observers live in a
// context of their own).
#include "cases.hpp"
#include "rawzmp.hpp"
#include "sc.hpp"

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

const std::string JQ = "zlink.host.application_job_queue.";
const std::string CORE = "zlink.host.core_hwm.";

struct turnstile_t {
    std::mutex m;
    std::condition_variable cv;
    int tokens = 0, inside = 0, passed = 0;
    void give(int n)
    {
        std::lock_guard<std::mutex> g(m);
        tokens += n;
        cv.notify_all();
    }
    int get_inside()
    {
        std::lock_guard<std::mutex> g(m);
        return inside;
    }
    int get_passed()
    {
        std::lock_guard<std::mutex> g(m);
        return passed;
    }
    void pass()
    {
        std::unique_lock<std::mutex> g(m);
        inside++;
        cv.wait(g, [&] { return tokens > 0; });
        tokens--;
        inside--;
        passed++;
    }
};

struct observer_t {
    std::optional<zlink::socket> sock;
    std::optional<zlink::monitor> mon;
    observer_t(zlink::context &ctx, const std::string &ep)
    {
        sock.emplace(ctx, zlink::socket_type::dealer);
        sock->connect(ep);
        mon.emplace(*sock, 0);
    }
    zlink_monitor_status_t status()
    {
        auto st = mon->status();
        CF_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
        return st;
    }
    bool ready() { return (status().state_flags & ZLINK_MONITOR_STATE_READY) != 0; }
    std::uint64_t paused() { return status().flow_paused_connections; }
    void close()
    {
        mon.reset();
        sock->close();
        sock.reset();
    }
};

std::unique_ptr<zlink::host> ts_host(const std::string &name, std::int64_t max_jobs, turnstile_t *t)
{
    auto h = sc::mesh_host(name, "tcp", true, max_jobs);
    if (t != nullptr) {
        h->add_mesh_channel_server("m", "svc", 100);
        h->on_send(zlink::owner::channel("svc"), "m", [t](zlink::turn &) { t->pass(); });
    }
    return h;
}

std::unique_ptr<zlink::host> mesh_client(const std::string &name, const std::string &ep, zlink::host &h)
{
    auto c = sc::mesh_host(name, "tcp", false, 0);
    c->add_mesh_channel_client("m", "svc");
    c->set_mesh_option("m", zlink::node_option::send_timeout, 30000LL * 1000000);
    c->mesh_connect("m", ep, "H");
    c->start();
    CF_EVENTUALLY(c->ready_peers("m") == 1, 5000);
    CF_EVENTUALLY(h.ready_peers("m") >= 1, 5000);
    return c;
}

int oneway(zlink::host &c, const std::string &chan, const std::string &tag)
{
    auto k = c.send_to_channel(chan);
    k.payload("m", tag);
    return sc::wait_send(k).result;
}

void host_end(zlink::host &h) { h.shutdown(2000ms); }

int set_opt(zlink::host &h, zlink::host_option o, std::int64_t v)
{
    try {
        h.set_option(o, v);
        return 0;
    } catch (...) {
        return sc::result_of(std::current_exception());
    }
}

// ------------------------------------------------------------- JQ-01

std::unique_ptr<zlink::host> p2_host(const std::string &name)
{
    auto h = std::make_unique<zlink::host>(name);
    h->set_option(zlink::host_option::effective_processors, 2);
    h->add_cs_server("svc", "tcp://127.0.0.1:0");
    return h;
}

void expect_started(zlink::host &h, std::int64_t m, int jq_profile, int core_profile)
{
    h.start();
    auto c = h.capacity();
    CF_EQ(c.effective_max, static_cast<std::uint64_t>(m));
    CF_EQ(c.profile, jq_profile);
    CF_EQ(h.metric(JQ + "limit"), m);
    CF_EQ(h.metric(CORE + "profile"), core_profile);
}

void expect_start_refused(std::unique_ptr<zlink::host> h, int want)
{
    int r = 0;
    try {
        h->start();
    } catch (...) {
        r = sc::result_of(std::current_exception());
    }
    CF_RESULT(r, want);
    CF_EQ(h->state(), ZLINK_HOST_FAILED);
    bool bound = true;
    try {
        h->endpoint("svc");
    } catch (const std::exception &) {
        bound = false;
    }
    CF_CHECK(!bound);
}

void independent_profiles()
{
    using O = zlink::host_option;
    auto h = p2_host("jq01-default");
    CF_EQ(h->option(O::job_queue_profile), ZLINK_JOB_QUEUE_BALANCED);
    CF_EQ(h->option(O::core_hwm_profile), -1);
    CF_EQ(h->option(O::max_queued_jobs), 256);
    expect_started(*h, 256, ZLINK_JOB_QUEUE_BALANCED, ZLINK_PROFILE_BALANCED);
    CF_EQ(h->metric(CORE + "effective_budget"), 0);
    host_end(*h);

    h = p2_host("jq01-both");
    h->set_option(O::core_hwm_profile, ZLINK_PROFILE_COMPACT);
    CF_EQ(h->option(O::max_queued_jobs), 256);
    h->set_option(O::job_queue_profile, ZLINK_JOB_QUEUE_THROUGHPUT);
    CF_EQ(h->option(O::core_hwm_profile), ZLINK_PROFILE_COMPACT);
    h->set_option(O::core_budget_bytes, 4 << 20);
    CF_EQ(h->option(O::max_queued_jobs), 512);
    expect_started(*h, 512, ZLINK_JOB_QUEUE_THROUGHPUT, ZLINK_PROFILE_COMPACT);
    CF_EQ(h->option(O::core_hwm_profile), ZLINK_PROFILE_COMPACT);
    CF_EQ(h->metric(CORE + "effective_budget"), 4 << 20);
    host_end(*h);

    h = p2_host("jq01-core-only");
    h->set_option(O::core_hwm_profile, ZLINK_PROFILE_COMPACT);
    expect_started(*h, 256, ZLINK_JOB_QUEUE_BALANCED, ZLINK_PROFILE_COMPACT);
    host_end(*h);
    h = p2_host("jq01-jq-only");
    h->set_option(O::job_queue_profile, ZLINK_JOB_QUEUE_THROUGHPUT);
    expect_started(*h, 512, ZLINK_JOB_QUEUE_THROUGHPUT, ZLINK_PROFILE_BALANCED);
    CF_EQ(h->option(O::core_hwm_profile), -1);
    host_end(*h);

    h = p2_host("jq01-manual");
    h->set_option(O::max_queued_jobs, 17);
    h->set_option(O::job_queue_profile, ZLINK_JOB_QUEUE_COMPACT);
    expect_started(*h, 17, ZLINK_JOB_QUEUE_COMPACT, ZLINK_PROFILE_BALANCED);
    auto c = h->capacity();
    CF_EQ(c.manual_max, 17u);
    CF_EQ(c.pause_count, 14u);
    CF_EQ(c.resume_count, 10u);
    host_end(*h);

    const std::pair<O, std::int64_t> bad[] = {{O::max_queued_jobs, 0},
                                              {O::max_queued_jobs, -1},
                                              {O::max_queued_jobs, std::int64_t(1) << 31},
                                              {O::pause_percent, 0},
                                              {O::pause_percent, 101},
                                              {O::resume_percent, 100},
                                              {O::core_hwm_profile, ZLINK_PROFILE_THROUGHPUT + 1},
                                              {O::core_budget_bytes, -1},
                                              {O::core_memory_limit_bytes, -1}};
    h = p2_host("jq01-bad");
    for (const auto &[o, v] : bad) {
        std::int64_t before = h->option(o);
        CF_RESULT(set_opt(*h, o, v), fw::invalid_argument);
        CF_EQ(h->option(o), before);
    }
    expect_started(*h, 256, ZLINK_JOB_QUEUE_BALANCED, ZLINK_PROFILE_BALANCED);
    c = h->capacity();
    CF_EQ(c.pause_percent, 80u);
    CF_EQ(c.resume_percent, 60u);
    host_end(*h);
    const int pairs[][2] = {{60, 60}, {50, 70}};
    for (const auto &p : pairs) {
        h = p2_host("jq01-order");
        h->set_option(O::pause_percent, p[0]);
        h->set_option(O::resume_percent, p[1]);
        expect_start_refused(std::move(h), fw::invalid_argument);
    }
    h = p2_host("jq01-memory");
    h->set_option(O::core_memory_limit_bytes, INT64_MAX);
    expect_start_refused(std::move(h), fw::invalid_argument);
}

// ------------------------------------------------------------- JQ-11

void expect_state(zlink::host &h, observer_t &obs, int q, int want)
{
    auto c = h.capacity();
    if (c.pressure_state != want)
        CF_FAIL("queued " + std::to_string(q) + ": pressure state " +
                std::to_string(c.pressure_state) + ", expected " + std::to_string(want));
    bool paused = want == ZLINK_PRESSURE_PAUSED;
    CF_EQ(h.metric(JQ + "pressure_state", "state=paused"), paused ? 1 : 0);
    CF_EQ(h.metric(JQ + "pressure_state", "state=running"), paused ? 0 : 1);
    CF_EVENTUALLY(obs.paused() == (paused ? 1u : 0u), 5000);
}

void expect_queued(zlink::host &h, turnstile_t &t, int q)
{
    CF_EVENTUALLY(t.get_inside() == 1 && h.capacity().queued_jobs == static_cast<std::uint64_t>(q) &&
                      h.capacity().permits_in_use == static_cast<std::uint64_t>(q),
                  5000);
}

void hysteresis(zlink::context &ctx, std::int64_t m, int pause, int resume)
{
    turnstile_t t;
    auto h = ts_host("H", m, &t);
    h->start();
    std::string ep = h->endpoint("m");
    auto c = h->capacity();
    CF_EQ(c.pause_count, static_cast<std::uint64_t>(pause));
    CF_EQ(c.resume_count, static_cast<std::uint64_t>(resume));
    auto cl = mesh_client("C", ep, *h);
    observer_t obs(ctx, ep);
    CF_EVENTUALLY(obs.ready(), 5000);

    CF_RESULT(oneway(*cl, "svc", "j0"), 0);
    expect_queued(*h, t, 0);
    c = h->capacity();
    std::uint64_t tp = c.transitions_paused, tr = c.transitions_running;
    if (pause == 1)
        CF_CHECK(tp >= 1);
    else
        CF_EQ(tp, 0u);
    CF_EQ(tr, tp);
    expect_state(*h, obs, 0, ZLINK_PRESSURE_RUNNING);
    for (int q = 1; q <= pause; q++) {
        CF_RESULT(oneway(*cl, "svc", "j" + std::to_string(q)), 0);
        expect_queued(*h, t, q);
        expect_state(*h, obs, q, q >= pause ? ZLINK_PRESSURE_PAUSED : ZLINK_PRESSURE_RUNNING);
    }
    c = h->capacity();
    CF_EQ(c.transitions_paused, tp + 1);
    CF_EQ(c.transitions_running, tr);
    CF_EQ(h->metric(JQ + "pressure_transitions", "state=paused"), static_cast<std::int64_t>(tp + 1));
    for (int q = pause - 1; q >= resume; q--) {
        int passed = t.get_passed();
        t.give(1);
        CF_EVENTUALLY(t.get_passed() == passed + 1, 5000);
        expect_queued(*h, t, q);
        expect_state(*h, obs, q, q <= resume ? ZLINK_PRESSURE_RUNNING : ZLINK_PRESSURE_PAUSED);
    }
    c = h->capacity();
    CF_EQ(c.transitions_paused, tp + 1);
    CF_EQ(c.transitions_running, tr + 1);
    CF_EQ(h->metric(JQ + "pressure_transitions", "state=running"), static_cast<std::int64_t>(tr + 1));
    CF_RESULT(oneway(*cl, "svc", "again"), 0);
    expect_queued(*h, t, resume + 1);
    bool again = resume + 1 >= pause;
    expect_state(*h, obs, resume + 1, again ? ZLINK_PRESSURE_PAUSED : ZLINK_PRESSURE_RUNNING);
    CF_EQ(h->capacity().transitions_paused, tp + 1 + (again ? 1 : 0));
    CF_EQ(h->capacity().transitions_running, tr + 1);
    CF_EQ(h->capacity().flow_state_config_failures, 0u);

    t.give(1 << 20);
    obs.close();
    host_end(*cl);
    host_end(*h);
}

// ------------------------------------------------------------- JQ-12

// Part 1: H (a CS server, M = 2) is PAUSED; a peer that connects now is
// told PAUSED right after its handshake, before it sent anything, and a
// record it sends anyway stays in the Core, unreceived, until H has room.
void new_peer_paused(zlink::context &ctx)
{
    turnstile_t t;
    auto h = std::make_unique<zlink::host>("H");
    h->set_option(zlink::host_option::max_queued_jobs, 2);
    h->add_cs_server("cs", "tcp://127.0.0.1:0");
    h->on_send(zlink::owner::channel("cs"), "m", [&t](zlink::turn &) { t.pass(); });
    h->start();
    std::string ep = h->endpoint("cs");
    auto cl = std::make_unique<zlink::host>("C");
    cl->add_cs_client("cs", ep);
    cl->start();
    for (int i = 0; i < 3; i++) {
        CF_RESULT(oneway(*cl, "cs", "p" + std::to_string(i)), 0);
        if (i == 0)
            CF_EVENTUALLY(t.get_inside() == 1, 5000);
    }
    CF_EVENTUALLY(h->capacity().queued_jobs == 2, 5000);
    CF_EQ(h->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    std::int64_t dropped = h->metric("zlink.mesh_node.messages.dropped", "reason=decode_error");

    // A Core peer connecting now sees remote pause and keeps its records.
    observer_t obs(ctx, ep);
    CF_EVENTUALLY(obs.paused() == 1, 5000);
    {
        zlink::message part(std::string_view("k"));
        auto sr = obs.sock->try_send(std::span(&part, 1), zlink::send_flags::dontwait);
        CF_CHECK(static_cast<bool>(sr.ec)); // held back at the sender: not sent
    }

    // A raw wire peer: HELLO, READY, then FLOWSTATE PAUSED, before any
    // record of its own.
    rawzmp::peer raw(ep);
    {
        wire::writer w;
        rawzmp::hello(w, ZLINK_DEALER, "raw");
        rawzmp::ready_dealer(w, "raw");
        raw.send(w);
    }
    rawzmp::frame_t f = raw.next();
    CF_CHECK(f.flags == rawzmp::f_control && !f.body.empty() && f.body[0] == 0x01); // HELLO
    f = raw.next();
    CF_CHECK(f.flags == rawzmp::f_control && !f.body.empty() && f.body[0] == 0x04); // READY
    f = raw.next();
    CF_EQ(rawzmp::flowstate_of(f), 1); // PAUSED
    // It ignores the pause: its record waits in H's Core queue, not
    // received (no permit is free), and nothing is dropped.
    {
        wire::writer w;
        rawzmp::data(w, false, "ignores the pause");
        raw.send(w);
    }
    CF_EVENTUALLY(h->metric(CORE + "accounted", "state=receive") > 0, 5000);
    auto c = h->capacity();
    CF_EQ(c.queued_jobs, 2u);
    CF_EQ(c.permits_in_use, 2u);
    CF_EQ(h->metric("zlink.mesh_node.messages.dropped", "reason=decode_error"), dropped);

    // Room again: the held jobs run, the raw record (no framework record)
    // is received and dropped as malformed; H runs and tells both peers.
    t.give(1 << 20);
    CF_EVENTUALLY(t.get_passed() == 3, 5000);
    CF_EVENTUALLY(h->metric("zlink.mesh_node.messages.dropped", "reason=decode_error") ==
                      dropped + 1,
                  5000);
    CF_EVENTUALLY(h->capacity().pressure_state == ZLINK_PRESSURE_RUNNING, 5000);
    CF_EVENTUALLY(obs.paused() == 0, 5000);
    bool running = false;
    std::int64_t end = conf::now_ms() + conf::ms(5000);
    while (!running && conf::now_ms() < end) {
        if (!raw.peek(f) && !raw.fill(static_cast<int>(end - conf::now_ms())))
            break;
        while (raw.peek(f)) {
            raw.consume(f);
            running = running || rawzmp::flowstate_of(f) == 0;
        }
        if (raw.closed())
            break;
    }
    CF_CHECK(running); // the raw peer was told RUNNING too
    CF_EQ(h->capacity().flow_state_config_failures, 0u);
    raw.close();
    obs.close();
    host_end(*cl);
    host_end(*h);
}

// A sender thread of part 2: n one-ways from c to chan, each finished with
// the synchronous submit(). Every one must be accepted, unless the host
// under test shut down meanwhile (stop is then set).
struct sender_t {
    zlink::host *c = nullptr;
    std::string chan;
    int n = 0;
    std::atomic<bool> stop{false};
    std::atomic<int> sent{0}, failed{0};
    std::thread th;

    void run()
    {
        for (int i = 0; i < n && !stop.load(); i++) {
            try {
                auto k = c->send_to_channel(chan);
                k.payload("m", "t");
                k.submit();
                sent++;
            } catch (...) {
                failed++;
            }
        }
    }
};

// Part 2: H (M = 1, a mesh node and a CS server, handlers that never
// wait) toggles PAUSED/RUNNING once each way per record: 1,000 records
// from two sender threads (one per socket) make 1,000 pauses and 1,000
// resumes. What closes mid-toggle: peer sockets of H's ROUTERs (observers
// opened and closed while the toggling goes on), then, in a second run, H
// itself (its shutdown closes both its sockets while the senders still
// toggle it).
void toggles(zlink::context &ctx, bool shutdown_mid)
{
    constexpr int per_sender = 500;
    turnstile_t t;
    t.give(1 << 30); // never waits
    auto h = ts_host("H", 1, &t);
    h->add_cs_server("cs", "tcp://127.0.0.1:0");
    h->on_send(zlink::owner::channel("cs"), "m", [&t](zlink::turn &) { t.pass(); });
    h->start();
    std::string mep = h->endpoint("m"), cep = h->endpoint("cs");
    auto mc = mesh_client("C1", mep, *h);
    auto cc = std::make_unique<zlink::host>("C2");
    cc->add_cs_client("cs", cep);
    cc->set_channel_option("cs", zlink::node_option::send_timeout, 30000LL * 1000000);
    cc->start();
    CF_RESULT(oneway(*cc, "cs", "warm"), 0);
    CF_EVENTUALLY(t.get_passed() == 1, 5000);
    auto c0 = h->capacity();

    sender_t s[2];
    s[0].c = mc.get();
    s[0].chan = "svc";
    s[1].c = cc.get();
    s[1].chan = "cs";
    for (auto &x : s) {
        x.n = per_sender;
        x.th = std::thread([&x] { x.run(); });
    }
    // Peer sockets close mid-toggle: observers come and go on both ROUTERs.
    observer_t keep0(ctx, mep), keep1(ctx, cep);
    int churn = 0;
    std::int64_t churn_end = conf::now_ms() + conf::ms(30000);
    while (t.get_passed() < 1 + (shutdown_mid ? 200 : 2 * per_sender)) {
        if (conf::now_ms() > churn_end)
            CF_FAIL("H handled " + std::to_string(t.get_passed() - 1) + " of the " +
                    std::to_string(2 * per_sender) + " records within 30 s");
        observer_t o(ctx, churn % 2 == 0 ? mep : cep);
        CF_EVENTUALLY(o.ready(), 5000);
        o.close();
        churn++;
    }
    if (shutdown_mid) {
        // H closes while its senders still toggle it.
        h->shutdown(2000ms);
        CF_EQ(h->state(), ZLINK_HOST_STOPPED);
        auto c = h->capacity();
        CF_CHECK(c.transitions_paused >= 200 && c.transitions_paused - c.transitions_running <= 1);
        // The registry took H's sockets out before closing them: no close
        // race could make an application fail.
        CF_EQ(c.flow_state_config_failures, 0u);
        // The senders end: a one-way still waiting for room at H, which is
        // gone, ends with its host's shutdown.
        for (auto &x : s)
            x.stop = true;
        mc->shutdown(2000ms);
        cc->shutdown(2000ms);
        for (auto &x : s)
            x.th.join();
        CF_CHECK(s[0].sent + s[1].sent >= 200);
    } else {
        for (auto &x : s) {
            x.th.join();
            CF_EQ(x.failed.load(), 0);
            CF_EQ(x.sent.load(), per_sender);
        }
        CF_EVENTUALLY(t.get_passed() == 1 + 2 * per_sender, 10000);
        CF_EVENTUALLY(h->capacity().permits_in_use == 0, 5000);
        auto c = h->capacity();
        // M = 1: every record paused and resumed H once.
        CF_EQ(c.transitions_paused - c0.transitions_paused, std::uint64_t{2 * per_sender});
        CF_EQ(c.transitions_running - c0.transitions_running, std::uint64_t{2 * per_sender});
        CF_EQ(c.pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));
        // Every live supported socket ends in the host's state, as each of
        // its peers sees it; a fresh peer too.
        CF_EVENTUALLY(keep0.paused() == 0 && keep1.paused() == 0, 5000);
        observer_t late(ctx, mep);
        CF_EVENTUALLY(late.ready(), 5000);
        CF_EQ(late.paused(), 0u);
        late.close();
        // Nothing of H closed: no failure at all.
        CF_EQ(c.flow_state_config_failures, 0u);
        CF_CHECK(churn > 0);
        CF_EQ(h->metric("zlink.mesh_node.messages.dropped", "reason=no_handler"), 0);
    }
    keep0.close();
    keep1.close();
    if (!shutdown_mid) {
        host_end(*mc);
        host_end(*cc);
        host_end(*h);
    }
    mc.reset();
    cc.reset();
    h.reset();
}

// ------------------------------------------------------------- JQ-13

void flow_state_sockets()
{
    zlink::context ctx;
    zlink::socket srv(ctx, zlink::socket_type::router);
    srv.bind("tcp://127.0.0.1:0");
    std::string sep = srv.last_endpoint();
    std::optional<zlink::monitor> smon;
    smon.emplace(srv, 0);

    turnstile_t t;
    auto h = ts_host("H", 2, &t);
    h->add_cs_server("cs", "tcp://127.0.0.1:0");
    h->on_send(zlink::owner::channel("cs"), "m", [&t](zlink::turn &) { t.pass(); });
    h->add_cs_client("out", sep);
    h->start();
    std::string mep = h->endpoint("m"), cep = h->endpoint("cs");
    observer_t om(ctx, mep), oc(ctx, cep);
    CF_EVENTUALLY(om.ready() && oc.ready(), 5000);
    CF_EVENTUALLY((smon->status().state_flags & ZLINK_MONITOR_STATE_READY) != 0, 5000);

    auto cl = mesh_client("C", mep, *h);
    for (int i = 0; i < 3; i++) {
        CF_RESULT(oneway(*cl, "svc", "s" + std::to_string(i)), 0);
        if (i == 0)
            CF_EVENTUALLY(t.get_inside() == 1, 5000);
    }
    CF_EVENTUALLY(h->capacity().queued_jobs == 2, 5000);
    CF_EQ(h->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    CF_EVENTUALLY(om.paused() == 1 && oc.paused() == 1, 5000);
    auto st = smon->status();
    CF_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_FLOW_STATE);
    CF_EQ(st.flow_paused_connections, 0u);
    CF_EQ(st.flow_pause_applied_total, 0u);
    CF_RESULT(oneway(*h, "out", "out"), 0);
    srv.set_option(ZLINK_RCVTIMEO, conf::ms(5000));
    zlink::record rec = srv.router_recv(zlink::recv_flags::none, 4);
    CF_CHECK(!rec.parts.empty());
    CF_EQ(h->capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_PAUSED));
    CF_EQ(smon->status().flow_pause_applied_total, 0u);
    CF_EQ(h->capacity().flow_state_config_failures, 0u);

    t.give(1 << 20);
    CF_EVENTUALLY(h->capacity().pressure_state == ZLINK_PRESSURE_RUNNING, 5000);
    CF_EVENTUALLY(om.paused() == 0 && oc.paused() == 0, 5000);
    st = smon->status();
    CF_EQ(st.flow_pause_applied_total, 0u);
    CF_EQ(st.flow_resume_applied_total, 0u);

    om.close();
    oc.close();
    host_end(*cl);
    host_end(*h);
    smon.reset();
    srv.close();
}

} // namespace

namespace cases {

void jq01(const conf::params_t &) { independent_profiles(); }

void jq11(const conf::params_t &)
{
    zlink::context ctx;
    hysteresis(ctx, 10, 8, 6);
    hysteresis(ctx, 1, 1, 0);
    hysteresis(ctx, 17, 14, 10);
}

void jq12(const conf::params_t &)
{
    zlink::context ctx;
    new_peer_paused(ctx);
    toggles(ctx, false);
    toggles(ctx, true);
}

void jq13(const conf::params_t &) { flow_state_sockets(); }

} // namespace cases
