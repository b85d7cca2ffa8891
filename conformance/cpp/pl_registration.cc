// pl_registration.cc — PL-04..08 (add, modify, remove; timer owners; bad
// and unsupported bits) through zlink::poller (conformance/c/
// pl_registration.c is the reference). Raw values (adopt, handle()) only
// where a case is about a bad or foreign value.
#include "cases.hpp"
#include "pl.hpp"

using namespace pl;
using st = zlink::socket_type;

namespace cases {

void pl04(const conf::params_t &)
{
    zlink::context ctx;
    zlink::socket s(ctx, st::pair);
    zlink::timer t;
    pipe_t fds;
    zlink::poller p;
    p.add(s, ZLINK_POLLIN);
    PL_FAILS(p.add(s, ZLINK_POLLOUT), ZLINK_CONFIG_CONFLICT, EEXIST);
    p.add_fd(fds.r, ZLINK_POLLIN);
    PL_FAILS(p.add_fd(fds.r, ZLINK_POLLOUT), ZLINK_CONFIG_CONFLICT, EEXIST);
    p.add(t);
    PL_FAILS(p.add(t), ZLINK_CONFIG_CONFLICT, EEXIST);
    // The generic add (zlink_poller_add) of the same timer.
    PL_FAILS(p.add(t.handle(), ZLINK_POLLIN), ZLINK_CONFIG_CONFLICT, EEXIST);
    CF_EQ(p.size(), 3);
    p.destroy();
    t.destroy();
}

void pl05(const conf::params_t &)
{
    {
        zlink::timer t;
        zlink::poller p1, p2;
        p1.add(t);
        PL_FAILS(p2.add(t), ZLINK_CONFIG_INVALID_STATE, EBUSY);
        PL_FAILS(p2.add(t.handle(), ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE, EBUSY);
        CF_EQ(p2.size(), 0);
        p1.remove(t);
        p2.add(t);
        p2.destroy();
        p1.add(t);
        p1.destroy();
        t.destroy();
        CF_CHECK(t.handle() == nullptr);
    }
    {
        zlink::timer t;
        zlink::poller p;
        p.add(t);
        void *keep = t.handle();
        PL_FAILS(t.destroy(), ZLINK_CLOSE_BUSY, EBUSY);
        CF_CHECK(t.handle() == keep);
        t.start(std::chrono::milliseconds(1), 1);
        zlink::poller_event ev[2];
        CF_EQ(wait_ok(p, ev, 2, long_wait_ms()), 1);
        CF_CHECK(ev[0].timer == t.handle());
        p.remove(t.handle()); // the generic remove works too
        t.destroy();
        CF_CHECK(t.handle() == nullptr);
        p.destroy();
    }
}

void pl06(const conf::params_t &params)
{
    for (const std::string &tr : conf::param_strings(params, "transports")) {
        zlink::context ctx;
        pair_t pr(ctx, tr);
        zlink::poller p1, p2;
        int ud1, ud2;
        p1.add(pr.b, ZLINK_POLLIN, &ud1);
        p2.add(pr.b, ZLINK_POLLIN | ZLINK_POLLOUT, &ud2);
        zlink::poller_event ev[4];
        CF_EQ(wait_ok(p1, ev, 4, 0), 0);
        CF_EQ(wait_ok(p2, ev, 4, 0), 1);
        CF_EQ(ev[0].events, ZLINK_POLLOUT);
        CF_CHECK(ev[0].user_data == &ud2);
        p2.modify(pr.b, ZLINK_POLLIN);
        waiter_t w1, w2;
        w1.p = &p1;
        w1.timeout_ms = long_wait_ms();
        w2.p = &p2;
        w2.timeout_ms = long_wait_ms();
        w1.start();
        w2.start();
        pr.a.send("x");
        w1.join();
        w2.join();
        PL_GOT_ONE(w1, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        PL_GOT_ONE(w2, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
        CF_CHECK(w1.ev[0].user_data == &ud1 && w2.ev[0].user_data == &ud2);
        p1.remove(pr.b);
        CF_EQ(wait_ok(p1, ev, 4, 0), 0);
        CF_EQ(wait_ok(p2, ev, 4, 0), 1);
        expect_str(pr.b, "x");
        CF_EQ(wait_ok(p2, ev, 4, 0), 0);
        p1.destroy();
        p2.destroy();
    }
}

void pl07(const conf::params_t &)
{
    zlink::context ctx;
    zlink::socket s(ctx, st::pair), other(ctx, st::pair);
    zlink::timer t;
    zlink::poller p;
    p.add(other, ZLINK_POLLIN);
    PL_FAILS(p.modify(s, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    PL_FAILS(p.remove(s), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    PL_FAILS(p.modify_fd(0, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    PL_FAILS(p.remove_fd(0), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    PL_FAILS(p.remove(t), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    PL_FAILS(p.modify(t, ZLINK_POLLIN), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    PL_FAILS(p.remove(t.handle()), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    // Something that is no source at all is a bad handle, not a missing one.
    std::uint64_t junk[16] = {0};
    PL_FAILS(p.remove(static_cast<void *>(junk)), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    PL_FAILS(p.remove(static_cast<void *>(nullptr)), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    PL_FAILS(p.remove_timer(s.handle()), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    p.remove(other);
    PL_FAILS(p.remove(other), ZLINK_CONFIG_NOT_FOUND, ENOENT);
    CF_EQ(p.size(), 0);
    p.destroy();
    t.destroy();
}

namespace {

void bad_bit_is_invalid_argument()
{
    zlink::context ctx;
    zlink::socket s(ctx, st::pair);
    zlink::timer t;
    pipe_t fds;
    zlink::poller p;
    const short bad[] = {ZLINK_POLLITEMS_DFLT, ZLINK_POLLIN | ZLINK_POLLITEMS_DFLT, 128, 0x100,
                         static_cast<short>(0x8000), -1};
    for (short b : bad) {
        PL_FAILS(p.add(s, b), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        PL_FAILS(p.add_fd(fds.r, b), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    }
    PL_FAILS(p.add_fd(-1, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    p.add(s, ZLINK_POLLIN);
    p.add_fd(fds.r, ZLINK_POLLIN);
    p.add(t);
    for (short b : bad) {
        PL_FAILS(p.modify(s, b), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        PL_FAILS(p.modify_fd(fds.r, b), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        PL_FAILS(p.modify(t, b), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    }
    std::uint64_t junk[16] = {0};
    {
        // The argument is checked before the handles.
        zlink::poller none = zlink::poller::adopt(nullptr);
        PL_FAILS(none.add(s, 128), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        PL_FAILS(none.add(s, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
        zlink::poller bad_p = zlink::poller::adopt(junk);
        PL_FAILS(bad_p.add(s, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
        bad_p.release();
    }
    PL_FAILS(p.add(static_cast<void *>(nullptr), ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE,
             EFAULT);
    PL_FAILS(p.add(static_cast<void *>(junk), ZLINK_POLLIN), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    PL_FAILS(p.add_timer(junk), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    PL_FAILS(p.add_timer(s.handle()), ZLINK_CONFIG_INVALID_HANDLE, EFAULT);
    // A closed socket cannot be added: its handle value after the close.
    zlink::socket closed(ctx, st::pair);
    void *gone = closed.handle();
    closed.close();
    PL_FAILS(p.add(gone, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE, ESHUTDOWN);
    CF_EQ(p.size(), 3);
    p.destroy();
    t.destroy();
}

void unsupported_bit_is_not_supported()
{
    zlink::context ctx;
    zlink::socket pair(ctx, st::pair), dealer(ctx, st::dealer), router(ctx, st::router),
        sub(ctx, st::sub);
    zlink::timer t;
    pipe_t fds;
    zlink::poller p;
    PL_FAILS(p.add(pair, ZLINK_POLLIN | ZLINK_POLLPRI), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    PL_FAILS(p.add(pair, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    PL_FAILS(p.add(dealer, ZLINK_POLLIN | ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    PL_FAILS(p.add(sub, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    PL_FAILS(p.add_fd(fds.r, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    p.add(router, ZLINK_POLLIN | ZLINK_POLLROUTE);
    p.add(t);
    PL_FAILS(p.modify(t, ZLINK_POLLOUT), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    PL_FAILS(p.modify(t, ZLINK_POLLIN | ZLINK_POLLPRI), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    PL_FAILS(p.modify(t, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    p.modify(t, 0);
    p.modify(t, ZLINK_POLLIN | ZLINK_POLLERR);
    p.add(pair, ZLINK_POLLIN);
    PL_FAILS(p.modify(pair, ZLINK_POLLROUTE), ZLINK_CONFIG_NOT_SUPPORTED, ENOTSUP);
    zlink::poller_event ev[4];
    CF_EQ(wait_ok(p, ev, 4, 0), 0); // pair: IN only, no OUT reported
    CF_EQ(p.size(), 3);
    p.destroy();
    t.destroy();
}

} // namespace

void pl08(const conf::params_t &)
{
    bad_bit_is_invalid_argument();
    unsupported_bit_is_not_supported();
}

} // namespace cases
