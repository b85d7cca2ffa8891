// test_core.cc — the Core handles of the C++ binding: context, sockets of
// each pattern, messages, receive results as error codes, the completion
// queue, poller waits (socket, fd, timer), timers, the error mapping by
// generated name and the load check.
#include "check.hpp"

#include <zlink/zlink.hpp>

#include <unistd.h>

#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

namespace {

std::vector<zlink::message> parts(std::initializer_list<std::string_view> texts)
{
    std::vector<zlink::message> v;
    for (auto t : texts)
        v.emplace_back(t);
    return v;
}

void load_check()
{
    zlink::check_library(); // the export list of the table resolves
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch);
    ZT_EQ(major, zlink::tables::version_major);
    ZT_CHECK(!zlink::tables::exports.empty());
    ZT_EQ(zlink::result_name(ZLINK_SUBMIT_BACKPRESSURED), std::string_view("ZLINK_SUBMIT_BACKPRESSURED"));
    ZT_EQ(zlink::errno_name(EAGAIN), std::string_view("EAGAIN"));
    ZT_EQ(zlink::error_kind_name(zlink::error_kind::invalid_operation),
          std::string_view("InvalidOperation"));
    // The table's kind names are the library's own.
    for (int k = 0; k < 13; k++)
        ZT_EQ(zlink::error_kind_name(static_cast<zlink::error_kind>(k)),
              std::string_view(zlink_error_kind_name(k)));
}

void messages()
{
    zlink::message a("hello");
    ZT_EQ(a.text(), std::string_view("hello"));
    zlink::message b(std::move(a));
    ZT_EQ(b.size(), 5u);
    ZT_EQ(a.size(), 0u);
    std::string big(4096, 'x');
    zlink::message c(big);
    zlink::message d = c.share();
    ZT_EQ(d.text(), std::string_view(big));
    ZT_EQ(c.data(), d.data()); // one buffer, two references
}

void pair_and_errors()
{
    zlink::context ctx;
    zlink::socket a(ctx, zlink::socket_type::pair);
    zlink::socket b(ctx, zlink::socket_type::pair);
    // A failure carries the generated names of its result and errno.
    ZT_THROWS(zlink::core_exception_t, a.bind("nope://x"),
              e.result_name() == "ZLINK_BIND_NOT_SUPPORTED" && e.code().category() == zlink::result_category());
    a.bind("inproc://cpp-pair");
    // An endpoint with a NUL inside is refused, not bound as its prefix.
    ZT_THROWS(zlink::core_exception_t, b.bind(std::string("inproc://cpp-pair\0x", 19)),
              e.result_name() == "ZLINK_BIND_INVALID_ARGUMENT");
    b.connect("inproc://cpp-pair");
    zlink::record r;
    auto ec = b.try_recv(r);
    ZT_EQ(ec.value(), static_cast<int>(ZLINK_RECV_NO_DATA));
    ZT_EQ(ec.message(), std::string("ZLINK_RECV_NO_DATA"));
    auto p = parts({"one", "two"});
    a.send(p);
    ZT_EQ(p[0].size(), 0u); // consumed
    zlink::record got = b.recv();
    ZT_EQ(got.parts.size(), 2u);
    ZT_EQ(got.parts[0].text(), std::string_view("one"));
    ZT_EQ(got.parts[1].text(), std::string_view("two"));
}

void dealer_router_request()
{
    zlink::context ctx;
    zlink::socket router(ctx, zlink::socket_type::router);
    zlink::socket dealer(ctx, zlink::socket_type::dealer);
    router.set_routing_id("R");
    dealer.set_routing_id("D");
    router.bind("tcp://127.0.0.1:0");
    std::string ep = router.last_endpoint();
    ZT_CHECK(ep.rfind("tcp://127.0.0.1:", 0) == 0);
    dealer.connect(ep);
    // Data, then a request and its reply through the completion queue.
    dealer.send("data");
    zlink::record d = router.router_recv();
    ZT_EQ(d.rid.view(), std::string_view("D"));
    ZT_EQ(d.token, 0u);
    ZT_EQ(d.parts[0].text(), std::string_view("data"));
    auto q = parts({"question"});
    int tag = 7;
    zlink_completion_id_t id = dealer.request(nullptr, q, 2000ms, zlink::send_flags::none, &tag);
    ZT_CHECK(id != 0);
    zlink::record req = router.router_recv();
    ZT_CHECK(req.token != 0);
    auto a = parts({"answer"});
    router.reply(req.rid, req.token, a);
    dealer.set_option(ZLINK_RCVTIMEO, static_cast<int>(zt::bound(5000).count()));
    zlink::completion c = dealer.completion_recv();
    ZT_EQ(c.kind(), ZLINK_COMPLETION_REQUEST);
    ZT_EQ(c.id(), id);
    ZT_EQ(c.user_context(), static_cast<void *>(&tag));
    ZT_EQ(c.request_result(), 0);
    ZT_EQ(c.reply_parts().size(), 1u);
    ZT_EQ(c.reply_parts()[0].text(), std::string_view("answer"));
    // The same token again: NOT_FOUND, by name.
    auto again = parts({"again"});
    ZT_THROWS(zlink::core_exception_t, router.reply(req.rid, req.token, again),
              e.result_name() == "ZLINK_SUBMIT_NOT_FOUND");
}

void pub_sub_and_stream()
{
    zlink::context ctx;
    zlink::socket pub(ctx, zlink::socket_type::pub);
    zlink::socket sub(ctx, zlink::socket_type::sub);
    pub.bind("inproc://cpp-pub");
    sub.connect("inproc://cpp-pub");
    sub.subscribe("t.");
    zlink::poller p;
    p.add(sub, ZLINK_POLLIN);
    // Subscriptions travel asynchronously: publish until one arrives.
    bool got = false;
    for (int i = 0; i < 2000 && !got; i++) {
        auto body = parts({"body"});
        pub.publish("t.x", body, zlink::send_flags::dontwait);
        got = p.wait(10ms).size() == 1;
    }
    ZT_CHECK(got);
    zlink::record r = sub.subscribe_recv();
    ZT_EQ(r.topic, std::string("t.x"));
    ZT_EQ(r.parts.back().text(), std::string_view("body"));

    zlink::socket stream(ctx, zlink::socket_type::stream);
    ZT_EQ(stream.get_option(ZLINK_TYPE), ZLINK_STREAM);
    stream.set_option(ZLINK_STREAM_OPT_RECV_MODE, ZLINK_STREAM_RECV_RAW);
    stream.bind("tcp://127.0.0.1:0");
    ZT_CHECK(!stream.last_endpoint().empty());
}

void poller_fd_and_timer()
{
    zlink::poller p;
    int fds[2];
    ZT_EQ(pipe(fds), 0);
    int tag = 1;
    p.add_fd(fds[0], ZLINK_POLLIN, &tag);
    ZT_THROWS(zlink::core_exception_t, p.add_fd(fds[0], ZLINK_POLLIN),
              e.result_name() == "ZLINK_CONFIG_CONFLICT" && e.errno_name() == "EEXIST");
    ZT_EQ(p.wait(0ms).size(), 0u);
    std::thread w([&] { ZT_EQ(write(fds[1], "x", 1), 1); });
    auto ev = p.wait(zt::bound(5000));
    w.join();
    ZT_EQ(ev.size(), 1u);
    ZT_EQ(ev[0].source_kind, ZLINK_POLLER_SOURCE_FD);
    ZT_EQ(ev[0].user_data, static_cast<void *>(&tag));
    p.remove_fd(fds[0]);

    zlink::timer t;
    std::uint64_t n = 0;
    ZT_EQ(t.try_recv(n).value(), static_cast<int>(ZLINK_RECV_NO_DATA));
    p.add(t, &tag);
    // A timer held by a poller cannot be destroyed.
    ZT_THROWS(zlink::core_exception_t, t.destroy(), e.result_name() == "ZLINK_CLOSE_BUSY");
    t.start(5ms, 3);
    std::uint64_t fires = 0;
    while (fires < 3) {
        auto te = p.wait(zt::bound(5000));
        ZT_EQ(te.size(), 1u);
        ZT_EQ(te[0].source_kind, ZLINK_POLLER_SOURCE_TIMER);
        fires += t.recv(zlink::recv_flags::dontwait);
    }
    ZT_EQ(fires, 3u);
    ZT_EQ(t.try_recv(n).value(), static_cast<int>(ZLINK_RECV_NO_DATA));
    p.remove(t);
    ZT_EQ(p.size(), 0);
    close(fds[0]);
    close(fds[1]);
}

void socket_close_and_poll()
{
    zlink::context ctx;
    zlink::socket a(ctx, zlink::socket_type::pair);
    zlink::socket b(ctx, zlink::socket_type::pair);
    a.bind("inproc://cpp-poll");
    b.connect("inproc://cpp-poll");
    zlink_pollitem_t items[1] = {{b.handle(), 0, ZLINK_POLLIN, 0}};
    ZT_EQ(zlink::poll(items, 0ms), 0);
    a.send("x");
    ZT_EQ(zlink::poll(items, zt::bound(5000)), 1);
    ZT_EQ(items[0].revents & ZLINK_POLLIN, ZLINK_POLLIN);
    b.close();
    ZT_CHECK(b.handle() == nullptr);
}

} // namespace

int main()
{
    load_check();
    messages();
    pair_and_errors();
    dealer_router_request();
    pub_sub_and_stream();
    poller_fd_and_timer();
    socket_close_and_poll();
    std::cout << "test_core: ok\n";
    return 0;
}
