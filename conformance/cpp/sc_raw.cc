// sc_raw.cc — seed 000 §17 "Raw reply admission", at the Core level, through
// the C++ binding's Core handles: SC-14 (a raw reply to a DEALER obeys the
// Application connection; the async reply is BACKPRESSURED with a wait
// token) and SC-15 (a raw reply to a ROUTER takes the HWM-free Completion
// lane). Ported from conformance/c/sc_raw.c.
#include "cases.hpp"
#include "raw.hpp"
#include "sc.hpp"

namespace {

zlink::submit_t reply_async(zlink::socket &r, const raw::rreq &q, const std::string &text)
{
    auto m = raw::msg(text);
    return r.try_reply(q.rid, q.token, 0, m, zlink::send_flags::dontwait);
}

int reply_sync(zlink::socket &r, const raw::rreq &q, const std::string &text)
{
    auto m = raw::msg(text);
    try {
        r.reply(q.rid, q.token, m);
        return 0;
    } catch (const zlink::core_exception_t &e) {
        return e.result();
    }
}

void reply_to_dealer(const std::string &tr, bool paused)
{
    zlink::context ctx;
    zlink::socket r = raw::sock(ctx, zlink::socket_type::router);
    r.set_routing_id("R");
    zlink::socket d = raw::sock(ctx, zlink::socket_type::dealer);
    d.set_routing_id("D");
    if (!paused) {
        r.set_option_u64(ZLINK_SNDHWM, 4096);
        d.set_option_u64(ZLINK_RCVHWM, 4096);
        if (tr == "tcp") {
            r.set_option(ZLINK_SNDBUF, 4096);
            d.set_option(ZLINK_RCVBUF, 4096);
        }
    }
    std::string ep = raw::bind(r, tr);
    d.connect(ep);
    zlink_completion_id_t id = raw::request(d, nullptr, "q");
    raw::rreq q = raw::recv_request(r, "q");

    std::size_t size = paused ? 1 : 1024;
    zlink_completion_id_t data_wt = 0;
    if (paused)
        d.set_receive_flow_state(ZLINK_RECEIVE_FLOW_PAUSED);
    int n = raw::fill_stable(r, "D", size, data_wt);
    zlink_completion_id_t empty_wt = 0;
    int empties = paused ? 0 : raw::fill_stable(r, "D", 0, empty_wt);

    auto sub = reply_async(r, q, "reply");
    CF_EQ(sub.ec.message(), std::string("ZLINK_SUBMIT_BACKPRESSURED"));
    CF_EQ(zlink::errno_name(zlink_errno()), std::string_view("EAGAIN"));
    zlink_completion_id_t wt = sub.id;
    CF_CHECK(wt != 0 && wt != data_wt && wt != empty_wt);
    raw::no_record(r);
    r.set_option(ZLINK_SNDTIMEO, 50);
    std::int64_t t0 = conf::now_ms();
    int src = reply_sync(r, q, "reply");
    if (src != ZLINK_SUBMIT_BACKPRESSURED)
        CF_FAIL(tr + (paused ? " paused" : " full") + ": sync reply " +
                std::string(zlink::result_name(src)) + " after " +
                std::to_string(conf::now_ms() - t0) + " ms");
    CF_EQ(zlink::errno_name(zlink_errno()), std::string_view("EAGAIN"));
    CF_CHECK(conf::now_ms() - t0 >= 50);
    raw::no_record(r);
    r.set_option(ZLINK_SNDTIMEO, conf::ms(raw::timeo_ms));

    if (paused) {
        d.set_receive_flow_state(ZLINK_RECEIVE_FLOW_RUNNING);
        raw::expect_writable(r, wt, {data_wt});
    } else {
        raw::drain_data(d, n, size);
        raw::drain_data(d, empties, 0);
        raw::expect_writable(r, wt, {data_wt, empty_wt});
    }
    CF_EQ(reply_async(r, q, "reply").ec.message(), std::string("OK"));
    if (paused)
        raw::drain_data(d, n, size);
    raw::expect_reply(d, id, "reply");
}

bool try_request(zlink::socket &s, const std::string &to, const std::string &text,
                 zlink_completion_id_t &id)
{
    zlink::routing_id rid(to);
    auto m = raw::msg(text);
    auto sub = s.try_request(&rid, m, std::chrono::milliseconds(conf::ms(10000)),
                             zlink::send_flags::dontwait);
    id = sub.id;
    if (!sub.ec)
        return true;
    CF_EQ(sub.ec.message(), std::string("ZLINK_SUBMIT_NOT_CONNECTED"));
    return false;
}

void reply_to_router(const std::string &tr)
{
    zlink::context ctx;
    zlink::socket a = raw::sock(ctx, zlink::socket_type::router);
    a.set_routing_id("A");
    a.set_option_u64(ZLINK_SNDHWM, 4096);
    zlink::socket b = raw::sock(ctx, zlink::socket_type::router);
    b.set_routing_id("B");
    b.set_option_u64(ZLINK_RCVHWM, 4096);
    if (tr == "tcp") {
        a.set_option(ZLINK_SNDBUF, 4096);
        b.set_option(ZLINK_RCVBUF, 4096);
    }
    std::string ep = raw::bind(a, tr);
    b.connect(ep);
    zlink_completion_id_t id1 = 0;
    CF_EVENTUALLY(try_request(b, "A", "q1", id1), 5000);
    zlink::routing_id to_a("A");
    zlink_completion_id_t id2 = raw::request(b, &to_a, "q2");
    raw::rreq q1 = raw::recv_request(a, "q1");
    raw::rreq q2 = raw::recv_request(a, "q2");

    b.set_receive_flow_state(ZLINK_RECEIVE_FLOW_PAUSED);
    zlink_completion_id_t data_wt = 0;
    int n = raw::fill_stable(a, "B", 1024, data_wt);
    zlink_completion_id_t more_wt = 0;
    CF_EQ(raw::fill(a, "B", 1024, more_wt), 0);

    auto sub = reply_async(a, q1, "r1");
    CF_EQ(sub.ec.message(), std::string("OK"));
    CF_EQ(sub.id, 0u);
    a.set_option(ZLINK_SNDTIMEO, 0);
    CF_RESULT(reply_sync(a, q2, "r2"), 0);
    raw::expect_reply(b, id1, "r1");
    raw::expect_reply(b, id2, "r2");
    b.set_receive_flow_state(ZLINK_RECEIVE_FLOW_RUNNING);
    for (int i = 0; i < n; i++) {
        zlink::record rec = b.router_recv(zlink::recv_flags::none, 2);
        CF_EQ(rec.token, 0u);
        CF_EQ(rec.parts[0].size(), 1024u);
    }
}

} // namespace

namespace cases {

void sc14(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p)) {
        reply_to_dealer(tr, false);
        reply_to_dealer(tr, true);
    }
}

void sc15(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        reply_to_router(tr);
}

} // namespace cases
