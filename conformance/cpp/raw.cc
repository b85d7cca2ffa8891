// raw.cc — the Core-level helpers (raw.hpp), through the C++ binding.
#include "raw.hpp"

#include <unistd.h>

#include <atomic>

namespace raw {

zlink::socket sock(zlink::context &ctx, zlink::socket_type type)
{
    zlink::socket s(ctx, type);
    s.set_option(ZLINK_LINGER, 0);
    s.set_option(ZLINK_SNDTIMEO, conf::ms(timeo_ms));
    s.set_option(ZLINK_RCVTIMEO, conf::ms(timeo_ms));
    return s;
}

std::string bind(zlink::socket &s, const std::string &tr)
{
    static std::atomic<int> seq{0};
    std::string want;
    if (tr == "tcp")
        want = "tcp://127.0.0.1:0";
    else if (tr == "inproc")
        want = "inproc://cpp-raw-" + std::to_string(getpid()) + "-" + std::to_string(++seq);
    else
        CF_FAIL("unknown transport \"" + tr + "\"");
    s.bind(want);
    std::string ep = s.last_endpoint();
    if (tr == "tcp")
        CF_CHECK(ep.rfind("tcp://127.0.0.1:", 0) == 0);
    else
        CF_EQ(ep, want);
    return ep;
}

std::vector<zlink::message> msg(std::string_view text)
{
    std::vector<zlink::message> v;
    v.emplace_back(text);
    return v;
}

rreq recv_request(zlink::socket &r, const std::string &want)
{
    zlink::record rec = r.router_recv(zlink::recv_flags::none, 2);
    CF_CHECK(rec.token != 0);
    CF_EQ(rec.parts.size(), 1u);
    CF_EQ(std::string(rec.parts[0].text()), want);
    return {rec.rid, rec.token};
}

zlink_completion_id_t request(zlink::socket &s, const zlink::routing_id *to, const std::string &text)
{
    auto m = msg(text);
    auto sub = s.try_request(to, m, std::chrono::milliseconds(conf::ms(10000)), zlink::send_flags::none);
    CF_EQ(sub.ec.message(), std::string("OK"));
    CF_CHECK(sub.id != 0);
    return sub.id;
}

int fill(zlink::socket &r, const std::string &to, std::size_t size, zlink_completion_id_t &wt)
{
    std::string body(size, 'd');
    zlink::routing_id rid(to);
    std::int64_t end = conf::now_ms() + conf::ms(10000);
    for (int n = 0;; n++) {
        auto m = msg(body);
        auto sub = r.try_send_to(rid, m, zlink::send_flags::dontwait);
        wt = sub.id;
        if (sub.ec.value() == ZLINK_SUBMIT_BACKPRESSURED) {
            CF_EQ(zlink::errno_name(zlink_errno()), std::string_view("EAGAIN"));
            CF_CHECK(wt != 0);
            return n;
        }
        CF_EQ(sub.ec.message(), std::string("OK"));
        if (conf::now_ms() > end || n > 1000000)
            CF_FAIL("sends to '" + to + "' were never refused");
    }
}

int fill_stable(zlink::socket &r, const std::string &to, std::size_t size, zlink_completion_id_t &wt)
{
    int total = 0;
    r.set_option(ZLINK_RCVTIMEO, conf::ms(100));
    for (int round = 0;; round++) {
        CF_CHECK(round < 100000);
        total += fill(r, to, size, wt);
        zlink::completion rec;
        if (r.try_completion_recv(rec, zlink::recv_flags::none))
            break; // quiet: the refusal holds
        CF_EQ(rec.kind(), ZLINK_COMPLETION_WRITABLE);
        CF_EQ(rec.send_result(), static_cast<int>(ZLINK_SEND_ADMITTED));
        CF_EQ(rec.id(), wt);
    }
    r.set_option(ZLINK_RCVTIMEO, conf::ms(timeo_ms));
    return total;
}

void no_record(zlink::socket &s)
{
    zlink::completion rec;
    CF_EQ(s.try_completion_recv(rec, zlink::recv_flags::dontwait).message(),
          std::string("ZLINK_RECV_NO_DATA"));
}

void expect_writable(zlink::socket &s, zlink_completion_id_t wt,
                     std::initializer_list<zlink_completion_id_t> others)
{
    for (;;) {
        zlink::completion rec = s.completion_recv();
        CF_EQ(rec.kind(), ZLINK_COMPLETION_WRITABLE);
        CF_EQ(rec.send_result(), static_cast<int>(ZLINK_SEND_ADMITTED));
        if (rec.id() == wt)
            return;
        bool known = false;
        for (auto o : others)
            known = known || rec.id() == o;
        if (!known)
            CF_FAIL("a WRITABLE record of an unknown token " + std::to_string(rec.id()));
    }
}

void expect_reply(zlink::socket &s, zlink_completion_id_t id, const std::string &text)
{
    zlink::completion rec = s.completion_recv();
    CF_EQ(rec.kind(), ZLINK_COMPLETION_REQUEST);
    CF_EQ(rec.id(), id);
    CF_EQ(rec.request_result(), static_cast<int>(ZLINK_REQUEST_OK));
    CF_EQ(rec.reply_parts().size(), 1u);
    CF_EQ(std::string(rec.reply_parts()[0].text()), text);
}

void drain_data(zlink::socket &d, int n, std::size_t size)
{
    for (int i = 0; i < n; i++) {
        zlink::record rec = d.recv(zlink::recv_flags::none, 2);
        CF_EQ(rec.parts.size(), 1u);
        CF_EQ(rec.parts[0].size(), size);
    }
}

} // namespace raw
