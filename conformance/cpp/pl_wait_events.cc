// pl_wait_events.cc — PL-11..15 (lifetime pins and POLLERR, FD bits, event
// fields, caller-owned event arrays, signals) through zlink::poller and
// zlink::poll (conformance/c/pl_wait_events.c is the reference).
#include "cases.hpp"
#include "pl.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

using namespace pl;
using st = zlink::socket_type;

namespace {

void closed_socket_reports_pollerr_once()
{
    zlink::context ctx;
    pair_t pr(ctx, "inproc");
    void *b = pr.b.handle();
    zlink::poller p;
    int ud;
    p.add(pr.b, ZLINK_POLLIN, &ud);
    waiter_t w;
    w.p = &p;
    w.timeout_ms = long_wait_ms();
    w.start();
    pr.b.close(); // the poller holds no gate
    w.join();
    PL_GOT_ONE(w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLERR);
    CF_CHECK(w.ev[0].socket == b && w.ev[0].user_data == &ud);
    zlink::poller_event ev[4];
    std::int64_t t0 = conf::now_ms();
    CF_EQ(wait_ok(p, ev, 4, -1), 0);
    CF_CHECK(conf::now_ms() - t0 < edge_bound_ms());
    CF_EQ(p.size(), 1);
    // The closed socket's registration, by its handle value.
    p.modify(b, ZLINK_POLLIN | ZLINK_POLLOUT);
    PL_FAILS(p.add(b, ZLINK_POLLIN), ZLINK_CONFIG_INVALID_STATE, ESHUTDOWN);
    zlink::timer t;
    p.add(t, &ud);
    t.start(std::chrono::milliseconds(1), 1);
    CF_EQ(wait_ok(p, ev, 4, long_wait_ms()), 1);
    CF_EQ(ev[0].source_kind, ZLINK_POLLER_SOURCE_TIMER);
    p.remove(t);
    t.destroy();
    p.remove(b);
    CF_EQ(p.size(), 0);

    zlink::socket c(ctx, st::pair);
    void *craw = c.handle();
    p.add(c, ZLINK_POLLIN);
    c.close();
    CF_EQ(wait_ok(p, ev, 4, -1), 1);
    CF_EQ(ev[0].events, ZLINK_POLLERR);
    CF_CHECK(ev[0].socket == craw);
    CF_EQ(wait_ok(p, ev, 4, -1), 0);
    p.destroy(); // unpins c
}

void pin_outlives_ctx_term()
{
    zlink::poller p;
    void *s_raw = nullptr;
    {
        zlink::context ctx;
        zlink::socket s(ctx, st::dealer);
        s_raw = s.handle();
        p.add(s, ZLINK_POLLIN | ZLINK_POLLOUT);
        s.close();
        ctx.term();
    }
    zlink::poller_event ev[2];
    CF_EQ(wait_ok(p, ev, 2, -1), 1);
    CF_EQ(ev[0].events, ZLINK_POLLERR);
    CF_EQ(wait_ok(p, ev, 2, 0), 0);
    p.remove(s_raw); // frees the socket
    p.destroy();
}

void tcp_pair(int *client, int *server)
{
    int lst = ::socket(AF_INET, SOCK_STREAM, 0);
    CF_CHECK(lst >= 0);
    struct sockaddr_in sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CF_EQ(::bind(lst, reinterpret_cast<struct sockaddr *>(&sa), sizeof sa), 0);
    CF_EQ(::listen(lst, 1), 0);
    socklen_t len = sizeof sa;
    CF_EQ(::getsockname(lst, reinterpret_cast<struct sockaddr *>(&sa), &len), 0);
    *client = ::socket(AF_INET, SOCK_STREAM, 0);
    CF_CHECK(*client >= 0);
    CF_EQ(::connect(*client, reinterpret_cast<struct sockaddr *>(&sa), sizeof sa), 0);
    *server = ::accept(lst, nullptr, nullptr);
    CF_CHECK(*server >= 0);
    ::close(lst);
}

std::atomic<int> g_signals{0};

void on_usr1(int) { g_signals.fetch_add(1); }

void pester(std::thread &th, long tid, int times)
{
    for (int i = 0; i < times; i++) {
        wait_blocked(tid);
        int before = g_signals.load();
        CF_EQ(pthread_kill(th.native_handle(), SIGUSR1), 0);
        CF_EVENTUALLY(g_signals.load() > before, 2000);
    }
}

void poller_wait_not_interrupted(pair_t &pr, long timeout, int signals)
{
    zlink::timer t;
    pipe_t fds;
    for (int variant = 0; variant < 3; variant++) {
        zlink::poller p;
        p.add(pr.b, ZLINK_POLLIN);
        if (variant == 1) {
            p.add(t);
            t.start(std::chrono::hours(1), 0);
        }
        if (variant == 2)
            p.add_fd(fds.r, ZLINK_POLLIN);
        {
            waiter_t w;
            w.p = &p;
            w.timeout_ms = timeout;
            w.start();
            pester(w.th, w.tid.load(), signals);
            w.join();
            if (w.rc != 0 || w.result != 0)
                CF_FAIL("poller variant " + std::to_string(variant) + ": wait returned " +
                        std::to_string(w.rc) + " (" + std::string(zlink::result_name(w.result)) +
                        ", " + std::string(zlink::errno_name(w.err)) + ")");
            CF_CHECK(w.elapsed_ms >= timeout);
        }
        {
            waiter_t w;
            w.p = &p;
            w.timeout_ms = long_wait_ms();
            w.start();
            pester(w.th, w.tid.load(), signals);
            pr.a.send("x");
            w.join();
            PL_GOT_ONE(w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLIN);
            expect_str(pr.b, "x");
        }
        if (variant == 1) {
            t.stop();
            p.remove(t);
        }
        p.destroy();
    }
    t.destroy();
}

zlink_pollitem_t item(void *sock, int fd, short events)
{
    zlink_pollitem_t it{};
    it.socket = sock;
    it.fd = fd;
    it.events = events;
    return it;
}

void poll_not_interrupted(pair_t &pr, long timeout, int signals)
{
    pipe_t fds;
    for (int variant = 0; variant < 3; variant++) {
        std::vector<zlink_pollitem_t> items;
        if (variant != 1)
            items.push_back(item(pr.b.handle(), -1, ZLINK_POLLIN));
        if (variant != 0)
            items.push_back(item(nullptr, fds.r, ZLINK_POLLIN));
        {
            waiter_t w;
            w.items = items;
            w.timeout_ms = timeout;
            w.start();
            pester(w.th, w.tid.load(), signals);
            w.join();
            if (w.rc != 0 || w.result != 0)
                CF_FAIL("zlink::poll variant " + std::to_string(variant) + ": returned " +
                        std::to_string(w.rc) + " (" + std::string(zlink::result_name(w.result)) +
                        ", " + std::string(zlink::errno_name(w.err)) + ")");
            CF_CHECK(w.elapsed_ms >= timeout);
        }
        {
            waiter_t w;
            w.items = items;
            w.timeout_ms = long_wait_ms();
            w.start();
            pester(w.th, w.tid.load(), signals);
            if (variant == 1)
                fds.put();
            else
                pr.a.send("x");
            w.join();
            CF_EQ(w.rc, 1);
            CF_CHECK(w.elapsed_ms < edge_bound_ms());
            if (variant == 1)
                fds.take();
            else
                expect_str(pr.b, "x");
        }
    }
}

} // namespace

namespace cases {

void pl11(const conf::params_t &)
{
    closed_socket_reports_pollerr_once();
    pin_outlives_ctx_term();
}

void pl12(const conf::params_t &)
{
    zlink::poller p;
    zlink::poller_event ev[4];
    int ud;
    int c, s;
    tcp_pair(&c, &s);
    p.add_fd(s, ZLINK_POLLPRI, &ud);
    CF_EQ(wait_ok(p, ev, 4, 0), 0);
    CF_EQ(::send(c, "!", 1, MSG_OOB), 1);
    CF_EQ(wait_ok(p, ev, 4, long_wait_ms()), 1);
    CF_EQ(ev[0].source_kind, ZLINK_POLLER_SOURCE_FD);
    CF_EQ(ev[0].fd, s);
    CF_CHECK(ev[0].events & ZLINK_POLLPRI);
    CF_EQ(ev[0].events & ~(ZLINK_POLLPRI | ZLINK_POLLIN), 0);
    p.remove_fd(s);
    ::close(c);
    ::close(s);
    {
        pipe_t fds;
        fds.close_r();
        p.add_fd(fds.w, ZLINK_POLLOUT, &ud);
        CF_EQ(wait_ok(p, ev, 4, 0), 1);
        CF_EQ(ev[0].fd, fds.w);
        CF_CHECK(ev[0].events & ZLINK_POLLERR);
        CF_EQ(ev[0].events & ~(ZLINK_POLLERR | ZLINK_POLLOUT), 0);
        p.modify_fd(fds.w, ZLINK_POLLERR);
        CF_EQ(wait_ok(p, ev, 4, 0), 1);
        CF_EQ(ev[0].events, ZLINK_POLLERR);
        p.remove_fd(fds.w);
    }
    {
        pipe_t fds;
        fds.close_w();
        p.add_fd(fds.r, ZLINK_POLLIN, &ud);
        CF_EQ(wait_ok(p, ev, 4, 0), 1);
        CF_EQ(ev[0].events, ZLINK_POLLERR);
        p.remove_fd(fds.r);
    }
    p.destroy();
}

void pl13(const conf::params_t &)
{
    zlink::context ctx;
    pair_t pr(ctx, "inproc");
    pr.a.send("x");
    zlink::timer t;
    t.start(std::chrono::milliseconds(1), 1);
    pipe_t fds;
    fds.put();
    int ud_sock, ud_fd;
    zlink::poller p;
    p.add(t); // no user data
    zlink::poller_event ev[8];
    CF_EQ(wait_ok(p, ev, 8, long_wait_ms()), 1);
    p.add(pr.b, ZLINK_POLLIN, &ud_sock);
    p.add_fd(fds.r, ZLINK_POLLIN, &ud_fd);
    CF_EQ(wait_ok(p, ev, 8, 0), 3);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        switch (ev[i].source_kind) {
        case ZLINK_POLLER_SOURCE_SOCKET:
            CF_CHECK(ev[i].socket == pr.b.handle() && ev[i].user_data == &ud_sock);
            CF_CHECK(ev[i].timer == nullptr && ev[i].fd == -1);
            CF_EQ(ev[i].events, ZLINK_POLLIN);
            seen |= 1;
            break;
        case ZLINK_POLLER_SOURCE_FD:
            CF_CHECK(ev[i].fd == fds.r && ev[i].user_data == &ud_fd);
            CF_CHECK(ev[i].socket == nullptr && ev[i].timer == nullptr);
            CF_EQ(ev[i].events, ZLINK_POLLIN);
            seen |= 2;
            break;
        case ZLINK_POLLER_SOURCE_TIMER:
            CF_CHECK(ev[i].timer == t.handle() && ev[i].user_data == nullptr);
            CF_CHECK(ev[i].socket == nullptr && ev[i].fd == -1);
            CF_EQ(ev[i].events, ZLINK_POLLIN);
            seen |= 4;
            break;
        default:
            CF_FAIL("unknown source kind " + std::to_string(ev[i].source_kind));
        }
    }
    CF_EQ(seen, 7);
    expect_str(pr.b, "x");
    fds.take();
    std::uint64_t count = 0;
    CF_CHECK(!t.try_recv(count));
    CF_EQ(wait_ok(p, ev, 8, 0), 0);
    p.destroy();
    t.destroy();
}

void pl14(const conf::params_t &)
{
    pipe_t fds;
    fds.put();
    int ud;
    zlink::poller p;
    p.add_fd(fds.r, ZLINK_POLLIN, &ud);
    zlink::poller_event ev[4];
    std::memset(static_cast<void *>(ev), 0xA5, sizeof ev);
    CF_EQ(wait_ok(p, ev, 4, 0), 1);
    unsigned char pattern[sizeof ev[0]];
    std::memset(pattern, 0xA5, sizeof pattern);
    for (int i = 1; i < 4; i++)
        CF_CHECK(std::memcmp(&ev[i], pattern, sizeof ev[i]) == 0);
    zlink::poller_event copy = ev[0];
    p.destroy();
    CF_EQ(copy.source_kind, ZLINK_POLLER_SOURCE_FD);
    CF_EQ(copy.fd, fds.r);
    CF_CHECK(copy.user_data == &ud && copy.socket == nullptr && copy.timer == nullptr);
    CF_CHECK(std::memcmp(&copy, &ev[0], sizeof copy) == 0);
}

void pl15(const conf::params_t &params)
{
    const long timeout = conf::ms(static_cast<int>(conf::param_int(params, "timeout_ms")));
    const int signals = static_cast<int>(conf::param_int(params, "signals"));
    CF_CHECK(signals >= 1);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = 0; // no SA_RESTART
    sigemptyset(&sa.sa_mask);
    CF_EQ(sigaction(SIGUSR1, &sa, nullptr), 0);
    zlink::context ctx;
    pair_t pr(ctx, "inproc");
    poller_wait_not_interrupted(pr, timeout, signals);
    poll_not_interrupted(pr, timeout, signals);
}

} // namespace cases
