// pl_lifetime.cc — PL-01..03 (zlink_poll) and PL-21..27 (poller lifetime,
// function returns and outputs), through zlink::poll, zlink::poller and
// zlink::timer (conformance/c/pl_poll.c and pl_lifetime.c are the reference).
#include "cases.hpp"
#include "pl.hpp"

extern "C" {
#include "zltest_alloc_fail.h"
}

using namespace pl;
using zlink::core_exception_t;

namespace {

zlink_pollitem_t item_sock(zlink::socket &s, short events)
{
    zlink_pollitem_t it{};
    it.socket = s.handle();
    it.fd = -1;
    it.events = events;
    return it;
}

zlink_pollitem_t item_raw(void *raw, short events)
{
    zlink_pollitem_t it{};
    it.socket = raw;
    it.fd = -1;
    it.events = events;
    return it;
}

zlink_pollitem_t item_fd(int fd, short events)
{
    zlink_pollitem_t it{};
    it.socket = nullptr;
    it.fd = fd;
    it.events = events;
    return it;
}

int poll_ok(zlink_pollitem_t *items, int n, long ms)
{
    try {
        return zlink::poll(items, n, milliseconds(ms));
    } catch (const core_exception_t &e) {
        CF_FAIL(std::string("zlink::poll failed: ") + e.what());
    }
}

} // namespace

namespace cases {

void pl01(const conf::params_t &params)
{
    const long quiet_ms = conf::ms(static_cast<int>(conf::param_int(params, "timeout_ms")));
    zlink::context ctx;
    pair_t pr(ctx, "inproc");
    pipe_t fds;
    zlink_pollitem_t items[3] = {item_sock(pr.b, ZLINK_POLLIN), item_fd(fds.r, ZLINK_POLLIN),
                                 item_sock(pr.a, ZLINK_POLLOUT)};
    CF_EQ(zlink::poll(items, milliseconds(0)), 1); // the span form
    CF_EQ(items[2].revents, ZLINK_POLLOUT);
    pr.a.send("x");
    fds.put();
    CF_EQ(poll_ok(items, 3, 0), 3);
    CF_EQ(items[0].revents, ZLINK_POLLIN);
    CF_EQ(items[1].revents, ZLINK_POLLIN);
    zlink_pollitem_t quiet[1] = {item_sock(pr.a, ZLINK_POLLIN)};
    std::int64_t t0 = conf::now_ms();
    CF_EQ(poll_ok(quiet, 1, quiet_ms), 0);
    CF_CHECK(conf::now_ms() - t0 >= quiet_ms);
    PL_FAILS(zlink::poll(nullptr, 1, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    PL_FAILS(zlink::poll(items, -1, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    std::uint64_t junk[16] = {0};
    zlink_pollitem_t bad[1] = {item_raw(junk, ZLINK_POLLIN)};
    PL_FAILS(zlink::poll(bad, milliseconds(0)), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    zlink_pollitem_t badbit[1] = {item_sock(pr.b, ZLINK_POLLIN | ZLINK_POLLITEMS_DFLT)};
    PL_FAILS(zlink::poll(badbit, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t badfd[1] = {item_fd(-1, ZLINK_POLLIN)};
    PL_FAILS(zlink::poll(badfd, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    zlink_pollitem_t mixed[2] = {item_raw(junk, ZLINK_POLLIN), item_fd(fds.r, 256)};
    PL_FAILS(zlink::poll(mixed, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    expect_str(pr.b, "x");
}

void pl02(const conf::params_t &params)
{
    const int late_ms = static_cast<int>(conf::param_int(params, "late_edge_ms"));
    zlink::context ctx;
    pair_t pr(ctx, "inproc");
    zlink_pollitem_t items[1] = {item_sock(pr.b, ZLINK_POLLIN)};
    std::int64_t t0 = conf::now_ms();
    CF_EQ(poll_ok(items, 1, 0), 0);
    CF_CHECK(conf::now_ms() - t0 < edge_bound_ms());
    waiter_t w;
    w.items = {item_sock(pr.b, ZLINK_POLLIN)};
    w.timeout_ms = -1;
    w.start();
    // The record comes late on purpose (the only delay in the case).
    std::this_thread::sleep_for(milliseconds(late_ms));
    pr.a.send("x");
    w.join();
    CF_EQ(w.rc, 1);
    CF_CHECK(w.elapsed_ms < edge_bound_ms());
    CF_EQ(w.items[0].revents, ZLINK_POLLIN);
    CF_CHECK(w.elapsed_ms >= late_ms);
    expect_str(pr.b, "x");
}

void pl03(const conf::params_t &)
{
    zlink::context ctx;
    pair_t pr(ctx, "inproc");
    zlink_pollitem_t items[2] = {item_sock(pr.b, ZLINK_POLLIN), item_sock(pr.a, 0)};
    items[0].revents = 0x7777;
    items[1].revents = 0x5555;
    CF_EQ(poll_ok(items, 2, 0), 0);
    CF_EQ(items[0].revents, 0);
    CF_EQ(items[1].revents, 0);
    pr.a.send("x");
    CF_EQ(poll_ok(items, 2, 0), 1);
    CF_EQ(items[0].revents, ZLINK_POLLIN);
    CF_EQ(items[1].revents, 0);
    expect_str(pr.b, "x");
    CF_EQ(items[0].revents, ZLINK_POLLIN);
    CF_EQ(poll_ok(items, 2, 0), 0);
    CF_EQ(items[0].revents, 0);
    items[0].revents = 9;
    items[1].events = 1024;
    PL_FAILS(zlink::poll(items, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    CF_EQ(items[0].revents, 0);
}

void pl21(const conf::params_t &)
{
    pipe_t fds;
    zlink::poller p;
    p.add_fd(fds.r, ZLINK_POLLIN);
    waiter_t w;
    w.p = &p;
    w.timeout_ms = long_wait_ms();
    w.start();
    void *keep = p.handle();
    PL_FAILS(p.destroy(), ZLINK_CLOSE_BUSY, EBUSY);
    CF_CHECK(p.handle() == keep);
    fds.put();
    w.join();
    PL_GOT_ONE(w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
    p.destroy();
    CF_CHECK(p.handle() == nullptr);
}

void pl22(const conf::params_t &)
{
    zlink::context ctx;
    pair_t pr(ctx, "inproc");
    zlink::socket other(ctx, zlink::socket_type::pair);
    zlink::timer t, t2;
    pipe_t fds, fds2;
    zlink::poller p;
    p.add(pr.b, ZLINK_POLLIN);
    p.add_fd(fds.r, ZLINK_POLLIN);
    p.add(t);
    waiter_t w;
    w.p = &p;
    w.timeout_ms = long_wait_ms();
    w.start();
    PL_FAILS(p.size(), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.add(other, ZLINK_POLLIN), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.modify(pr.b, ZLINK_POLLOUT), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.remove(pr.b), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.add_fd(fds2.r, ZLINK_POLLIN), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.modify_fd(fds.r, ZLINK_POLLOUT), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.remove_fd(fds.r), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.add(t2), ZLINK_CONFIG_BUSY, EBUSY);
    PL_FAILS(p.remove(t), ZLINK_CONFIG_BUSY, EBUSY);
    zlink::poller_event ev[4];
    PL_FAILS(p.wait(ev, milliseconds(0)), ZLINK_CONFIG_BUSY, EBUSY);
    pr.a.send("x");
    w.join();
    PL_GOT_ONE(w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
    CF_EQ(p.size(), 3);
    t2.destroy(); // t2 was not taken ...
    PL_FAILS(t.destroy(), ZLINK_CLOSE_BUSY, EBUSY); // ... t was not released
    expect_str(pr.b, "x");
    p.destroy();
    t.destroy();
}

void pl23(const conf::params_t &)
{
    { zlink::poller warm; } // the binding's load check is done, outside the window
    // The system is out of memory for this thread's next request: the
    // first allocation zlink_poller_new makes (the exception the binding
    // then builds must not fail too).
    zt_alloc_rule_t rule{};
    rule.fail = 1;
    zt_alloc_fail_begin(&rule);
    bool threw = false;
    int result = 0, err = 0;
    try {
        zlink::poller none;
    } catch (const core_exception_t &e) {
        threw = true;
        result = e.result();
        err = e.errno_value();
    }
    unsigned failed = zt_alloc_fail_end();
    if (failed == 0)
        CF_FAIL("zlink_poller_new allocated nothing through malloc/calloc: the failure injection "
                "did not reach it");
    CF_CHECK(threw);
    (void)result;
    CF_EQ(err, ENOMEM);
    zlink::poller p, q;
    CF_CHECK(p.handle() != nullptr && q.handle() != nullptr && p.handle() != q.handle());
    p.destroy();
    CF_CHECK(p.handle() == nullptr);
    PL_FAILS(p.destroy(), ZLINK_CLOSE_INVALID_HANDLE, EFAULT);
    // Destroying a poller with registrations releases them all.
    zlink::context ctx;
    zlink::socket s(ctx, zlink::socket_type::router);
    zlink::timer t;
    q.add(s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION | ZLINK_POLLROUTE);
    q.add(t);
    q.add_fd(0, ZLINK_POLLIN);
    q.destroy();
    CF_CHECK(q.handle() == nullptr);
    t.destroy();
    zlink::poller r;
    r.add(s, ZLINK_POLLCOMPLETION); // the completion bit is free
    r.destroy();
}

void pl24(const conf::params_t &)
{
    zlink::context ctx;
    zlink::socket s(ctx, zlink::socket_type::pair);
    zlink::timer t;
    zlink::poller p;
    CF_EQ(p.size(), 0);
    p.add(s, 0); // a zero mask is still a registration
    p.add_fd(0, ZLINK_POLLIN);
    p.add(t);
    CF_EQ(p.size(), 3);
    p.remove_fd(0);
    CF_EQ(p.size(), 2);
    std::uint64_t junk[16] = {0};
    {
        zlink::poller bad = zlink::poller::adopt(junk); // borrowed: released below
        PL_FAILS(bad.size(), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
        CF_CHECK(bad.release() == static_cast<void *>(junk));
    }
    {
        zlink::poller none = zlink::poller::adopt(nullptr);
        PL_FAILS(none.size(), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    }
    p.destroy();
    t.destroy();
}

void pl25(const conf::params_t &params)
{
    const long quiet_ms = conf::ms(static_cast<int>(conf::param_int(params, "timeout_ms")));
    pipe_t fds;
    zlink::poller p;
    p.add_fd(fds.r, ZLINK_POLLIN);
    zlink::poller_event ev[2];
    // Argument errors: EINVAL, before the handle.
    PL_FAILS(p.wait(nullptr, 2, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    PL_FAILS(p.wait(ev, 0, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    PL_FAILS(p.wait(std::span<zlink::poller_event>(), milliseconds(0)),
             ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    PL_FAILS(p.wait(ev, -3, milliseconds(-1)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    {
        zlink::poller none = zlink::poller::adopt(nullptr);
        PL_FAILS(none.wait(nullptr, 0, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        PL_FAILS(none.wait(ev, milliseconds(0)), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    }
    std::int64_t t0 = conf::now_ms();
    CF_EQ(wait_ok(p, ev, 2, 0), 0);
    CF_CHECK(conf::now_ms() - t0 < edge_bound_ms());
    t0 = conf::now_ms();
    CF_EQ(wait_ok(p, ev, 2, quiet_ms), 0);
    CF_CHECK(conf::now_ms() - t0 >= quiet_ms);
    fds.put();
    CF_EQ(wait_ok(p, ev, 2, -1), 1);
    CF_EQ(p.wait(milliseconds(-1)).size(), std::size_t{1}); // the vector form
    fds.take();
    waiter_t w;
    w.p = &p;
    w.timeout_ms = -7; // every negative timeout waits without limit
    w.start();
    fds.put();
    w.join();
    PL_GOT_ONE(w, ZLINK_POLLER_SOURCE_FD, ZLINK_POLLIN);
}

void pl26(const conf::params_t &)
{
    zlink::context ctx;
    zlink::socket s(ctx, zlink::socket_type::pair);
    void *raw = s.handle();
    zlink::poller p;
    zlink::poller_event ev[2];
    std::int64_t t0 = conf::now_ms();
    CF_EQ(wait_ok(p, ev, 2, -1), 0); // empty
    p.add(s, 0);
    p.add_fd(0, 0);
    CF_EQ(wait_ok(p, ev, 2, -1), 0); // only zero masks
    CF_CHECK(conf::now_ms() - t0 < edge_bound_ms());
    s.close(); // its POLLERR comes first; the zero mask does not hide it
    CF_EQ(wait_ok(p, ev, 2, -1), 1);
    CF_EQ(ev[0].events, ZLINK_POLLERR);
    CF_CHECK(ev[0].socket == raw);
    CF_EQ(wait_ok(p, ev, 2, -1), 0);
    CF_CHECK(conf::now_ms() - t0 < edge_bound_ms());
    p.destroy();
}

void pl27(const conf::params_t &)
{
    // The binding's try_ forms pass the caller's error_out through, NULL
    // included; the errno still tells (last_errno).
    pipe_t fds;
    fds.put();
    zlink::poller p;
    zlink::poller_event ev[2];
    CF_EQ(p.try_size(nullptr), 0);
    p.add_fd(fds.r, ZLINK_POLLIN);
    CF_EQ(p.try_wait(ev, 2, milliseconds(0), nullptr), 1);
    {
        zlink::poller none = zlink::poller::adopt(nullptr);
        CF_EQ(none.try_size(nullptr), -1);
        CF_EQ(zlink::last_errno(), EFAULT);
    }
    CF_EQ(p.try_wait(nullptr, 2, milliseconds(0), nullptr), -1);
    CF_EQ(zlink::last_errno(), EINVAL);
    // With an error_out the result comes too.
    zlink_config_result_t r = ZLINK_CONFIG_OK;
    CF_EQ(p.try_wait(nullptr, 2, milliseconds(0), &r), -1);
    CF_RESULT(r, ZLINK_CONFIG_INVALID_ARGUMENT);
    p.destroy();
    zlink_pollitem_t items[2] = {item_fd(fds.r, ZLINK_POLLIN), item_fd(fds.w, 0)};
    CF_EQ(zlink::try_poll(items, 2, milliseconds(0), nullptr), 1);
    CF_EQ(zlink::try_poll(nullptr, 3, milliseconds(0), nullptr), -1);
    CF_EQ(zlink::last_errno(), EINVAL);
    std::int64_t t0 = conf::now_ms();
    items[0].events = 0;
    CF_EQ(zlink::try_poll(items, 2, milliseconds(-1), nullptr), 0);
    CF_EQ(zlink::try_poll(nullptr, 0, milliseconds(-1), nullptr), 0);
    CF_CHECK(conf::now_ms() - t0 < edge_bound_ms());
}

} // namespace cases
