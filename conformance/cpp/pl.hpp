// pl.hpp — what the PL cases of the C++ runner share (seed 004 "Polling",
// §9; conformance/c/pl_*.c is the reference): pipes, linked pairs, a
// thread in a wait, and the "fails with result and errno" check. Cases go
// through the binding's poller, poll, socket and timer; raw values appear
// only where a case is about a bad value (adopt/release, the raw overloads).
#ifndef CONF_CPP_PL_HPP
#define CONF_CPP_PL_HPP

#include "conf.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

namespace pl {

using std::chrono::milliseconds;

inline int long_wait_ms() { return conf::ms(20000); }
inline int edge_bound_ms() { return conf::ms(5000); }
constexpr std::uint64_t ns_per_ms = 1000000ull;

// A pipe; closed by the destructor (ends closed early are -1).
struct pipe_t {
    int r = -1, w = -1;
    pipe_t();
    ~pipe_t();
    pipe_t(const pipe_t &) = delete;
    pipe_t &operator=(const pipe_t &) = delete;
    void put();
    void take();
    void close_r();
    void close_w();
};

// Two PAIRs linked on tr (a connects to b), one round trip done.
struct pair_t {
    zlink::socket a, b;
    pair_t(zlink::context &ctx, const std::string &tr);
};

// Binds s on tr and returns the endpoint to connect to.
std::string bind_any(zlink::socket &s, const std::string &tr);

// One DONTWAIT receive on s gives exactly the one-part text.
void expect_str(zlink::socket &s, std::string_view text);

// A thread in p.wait (or in zlink::poll over items) until it returns;
// started() returns once it sleeps inside ZLink as far as /proc tells.
struct waiter_t {
    zlink::poller *p = nullptr;
    std::vector<zlink_pollitem_t> items;
    long timeout_ms = 0;
    std::thread th;
    std::atomic<long> tid{0};
    int rc = -2, result = 0, err = 0;
    std::int64_t elapsed_ms = 0;
    zlink::poller_event ev[8]{};
    void start();
    void join();
    // Exactly one event of kind with these bits.
    void got_one(const char *file, int line, zlink_poller_source_kind_t kind, short events);
    ~waiter_t()
    {
        if (th.joinable())
            th.join();
    }
};

#define PL_GOT_ONE(w, kind, events) (w).got_one(__FILE__, __LINE__, (kind), (events))

// Waits until thread tid sleeps in the kernel (futex wait or poll).
void wait_blocked(long tid);
long gettid_now();

// One wait of p (timeout ms) returns exactly one event for socket s with
// exactly the bits want.
void expect_event(const char *file, int line, zlink::poller &p, zlink::socket &s, long ms, short want);
#define PL_EXPECT_EVENT(p, s, ms, want) pl::expect_event(__FILE__, __LINE__, (p), (s), (ms), (want))

int wait_ok(zlink::poller &p, zlink::poller_event *ev, int n, long ms);

} // namespace pl

// expr throws zlink::core_exception_t with result res and errno errv.
#define PL_FAILS(expr, res, errv)                                                                \
    do {                                                                                         \
        bool pl_thrown_ = false;                                                                 \
        try {                                                                                    \
            (void)(expr);                                                                        \
        } catch (const zlink::core_exception_t &e) {                                             \
            pl_thrown_ = true;                                                                   \
            if (e.result() != (res) || e.errno_value() != (errv))                                \
                conf::fail(__FILE__, __LINE__,                                                   \
                           std::string(#expr ": ") + std::string(e.result_name()) + "/" +        \
                               std::string(e.errno_name()) + ", expected " +                     \
                               std::string(zlink::result_name(res)) + "/" +                      \
                               std::string(zlink::errno_name(errv)));                            \
        }                                                                                        \
        if (!pl_thrown_)                                                                         \
            conf::fail(__FILE__, __LINE__, #expr " did not fail");                               \
    } while (0)

#endif
