// pl_common.cc — the shared helpers of the PL cases (pl.hpp).
#include "pl.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>

namespace pl {

pipe_t::pipe_t()
{
    int f[2];
    CF_CHECK(::pipe(f) == 0);
    r = f[0];
    w = f[1];
}

pipe_t::~pipe_t()
{
    close_r();
    close_w();
}

void pipe_t::put()
{
    char c = 'x';
    CF_CHECK(::write(w, &c, 1) == 1);
}

void pipe_t::take()
{
    char c;
    CF_CHECK(::read(r, &c, 1) == 1);
}

void pipe_t::close_r()
{
    if (r >= 0)
        ::close(std::exchange(r, -1));
}

void pipe_t::close_w()
{
    if (w >= 0)
        ::close(std::exchange(w, -1));
}

std::string bind_any(zlink::socket &s, const std::string &tr)
{
    static int seq = 0;
    if (tr == "inproc")
        s.bind("inproc://cpp-pl-" + std::to_string(getpid()) + "-" + std::to_string(++seq));
    else if (tr == "tcp")
        s.bind("tcp://127.0.0.1:*");
    else
        CF_FAIL("unknown transport " + tr);
    return s.last_endpoint();
}

void expect_str(zlink::socket &s, std::string_view text)
{
    zlink::record r;
    auto ec = s.try_recv(r, zlink::recv_flags::none);
    if (ec)
        CF_FAIL("recv: " + ec.message());
    CF_EQ(r.parts.size(), std::size_t{1});
    CF_EQ(std::string(r.parts[0].text()), std::string(text));
}

pair_t::pair_t(zlink::context &ctx, const std::string &tr)
    : a(ctx, zlink::socket_type::pair), b(ctx, zlink::socket_type::pair)
{
    a.connect(bind_any(b, tr));
    a.send("hi");
    expect_str(b, "hi");
    b.send("hi");
    expect_str(a, "hi");
}

long gettid_now() { return static_cast<long>(syscall(SYS_gettid)); }

// As zt_wait_blocked (core/tests/zltest.h): only ever makes a case stricter.
void wait_blocked(long tid)
{
    std::string path = "/proc/self/task/" + std::to_string(tid) + "/syscall";
    std::int64_t end = conf::now_ms() + 2000;
    while (conf::now_ms() < end) {
        std::ifstream f(path);
        if (!f)
            return;
        long nr = -1;
        unsigned long a0 = 0, op = 0;
        f >> nr >> std::hex >> a0 >> op;
        bool got3 = !f.fail();
        if (got3 && nr == SYS_futex && ((op & 0x7F) == 0 || (op & 0x7F) == 9))
            return;
#ifdef SYS_poll
        if (nr == SYS_poll)
            return;
#endif
        if (nr == SYS_ppoll || nr == SYS_epoll_pwait)
            return;
        sched_yield();
    }
}

void waiter_t::start()
{
    tid = 0;
    rc = -2;
    th = std::thread([this] {
        tid = gettid_now();
        std::int64_t t0 = conf::now_ms();
        try {
            if (p != nullptr)
                rc = p->wait(ev, 8, milliseconds(timeout_ms));
            else
                rc = zlink::poll(items, milliseconds(timeout_ms));
            result = 0;
            err = 0;
        } catch (const zlink::core_exception_t &e) {
            rc = -1;
            result = e.result();
            err = e.errno_value();
        }
        elapsed_ms = conf::now_ms() - t0;
    });
    CF_EVENTUALLY(tid.load() != 0, 2000);
    wait_blocked(tid.load());
}

void waiter_t::join() { th.join(); }

void waiter_t::got_one(const char *file, int line, zlink_poller_source_kind_t kind, short events)
{
    if (rc != 1 || result != 0)
        conf::fail(file, line,
                   "wait returned " + std::to_string(rc) + " (" +
                       std::string(zlink::result_name(result)) + ", " +
                       std::string(zlink::errno_name(err)) + ") after " +
                       std::to_string(elapsed_ms) + " ms");
    if (ev[0].source_kind != kind || ev[0].events != events)
        conf::fail(file, line,
                   "event of kind " + std::to_string(ev[0].source_kind) + " with bits " +
                       std::to_string(ev[0].events) + ", expected kind " + std::to_string(kind) +
                       " bits " + std::to_string(events));
    if (elapsed_ms >= edge_bound_ms())
        conf::fail(file, line, "the wait ended after " + std::to_string(elapsed_ms) +
                                   " ms: the timeout, not the edge");
}

int wait_ok(zlink::poller &p, zlink::poller_event *ev, int n, long ms)
{
    try {
        return p.wait(ev, n, milliseconds(ms));
    } catch (const zlink::core_exception_t &e) {
        CF_FAIL(std::string("poller wait failed: ") + e.what());
    }
}

void expect_event(const char *file, int line, zlink::poller &p, zlink::socket &s, long ms, short want)
{
    zlink::poller_event ev[4];
    int n = wait_ok(p, ev, 4, ms);
    if (n != 1)
        conf::fail(file, line, "wait gave " + std::to_string(n) + " events, expected 1");
    if (ev[0].source_kind != ZLINK_POLLER_SOURCE_SOCKET || ev[0].socket != s.handle() ||
        ev[0].events != want)
        conf::fail(file, line,
                   "event kind " + std::to_string(ev[0].source_kind) + " bits " +
                       std::to_string(ev[0].events) + ", expected the socket with bits " +
                       std::to_string(want));
}

} // namespace pl
