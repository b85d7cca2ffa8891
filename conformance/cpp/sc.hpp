// sc.hpp — the default harness of the SC cases in C++ (the C runner's
// sc.h, through the C++ binding's public API only).
//
// A case builds hosts in this process: A (the caller) and one or more
// servers (B, or S1 and S2). In mesh mode every host is a node of mesh "m"
// with its name as routing id; a server listens and serves channel "svc",
// A connects to each server and is a client of "svc". In cs mode a server
// is a ClientServer server of "svc" and A a client naming every server.
// What a server does with a record is set in its server_t before the
// record arrives: pass the gate first (gated), and for a request reply at
// once, hold the reply call, reply after a delay on the timer thread, or
// fail the turn. Every handler records the payload's tag (its text up to
// the first NUL, at most 31 bytes).
//
// Waiting: every wait ends on the observable event it waits for; its
// timeout (scaled by ZT_TIMEOUT_MULT) is only the failure bound.
#ifndef CONF_CPP_SC_HPP
#define CONF_CPP_SC_HPP

#include "conf.hpp"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

namespace sc {

std::vector<std::string> transports(const conf::params_t &p);

// elapsed must lie in want_ms .. want_ms + 250 ms (scaled).
void on_time(const char *file, int line, std::int64_t elapsed, std::int64_t want_ms);
#define SC_ON_TIME(elapsed, want) sc::on_time(__FILE__, __LINE__, (elapsed), (want))

// A latch handlers wait on; may be closed again.
struct gate_t {
    std::mutex m;
    std::condition_variable cv;
    bool is_open = false;
    int n_waiting = 0;
    void pass();
    void open();
    void close();
    int waiting();
};

struct rec_t {
    std::mutex m;
    std::vector<std::string> seen;
    void add(const std::string &tag);
    std::size_t count();
    int has(const std::string &tag);
};

// One thread that runs due entries in due order.
class timer_t {
public:
    void start();
    void at(std::int64_t due_ms, std::function<void()> fn);
    // Runs what is still scheduled (each at its time), then joins.
    void finish();

private:
    struct entry {
        std::int64_t due;
        std::uint64_t seq;
        std::function<void()> fn;
        bool operator>(const entry &o) const { return due != o.due ? due > o.due : seq > o.seq; }
    };
    std::mutex m_;
    std::condition_variable cv_;
    std::priority_queue<entry, std::vector<entry>, std::greater<entry>> q_;
    std::uint64_t seq_ = 0;
    bool stop_ = false;
    std::thread th_;
};

// What one call's completion saw (submit(callback)).
struct done_t {
    std::mutex m;
    std::condition_variable cv;
    int calls = 0;
    int result = -1;
    std::uint32_t remote_code = 0;
    std::int64_t at_ms = 0;
    std::string reply;
    std::string message;
    std::thread::id thread;
    bool in_runtime = false;

    std::function<void(const zlink::outcome_t &)> fn();
    bool wait(int ms);
    bool wait_until(std::int64_t until_ms);
    int get_result();
    void expect(int ms);
    int count();
};

enum mode_t { mesh = 1, cs = 2 };
enum reply_mode_t { reply_now = 0, reply_hold, reply_delay, reply_fail };

struct server_t {
    // set before open
    std::string name;
    int weight = 100;
    int max_jobs = 0;
    std::uint64_t hwm = 0;
    bool zero_channel = false;
    // behaviour, may change while serving
    std::atomic<bool> gated{false};
    std::atomic<int> reply_mode{reply_now};
    int delay_min = 0, delay_max = 0;
    timer_t *timer = nullptr;
    // state
    std::unique_ptr<zlink::host> h;
    mode_t mode = mesh;
    std::string bound;
    gate_t gate;
    rec_t rec;
    std::atomic<int> pings{0};
    std::atomic<int> replies_sent{0};
    std::atomic<int> sync_wait_rc{-1}, sync_shutdown_rc{-1}, sync_ran{0};
    std::atomic<int> yield_rc{-1}, yield_ran{0}; // the "yield" handler
    std::mutex held_m;
    std::vector<std::pair<std::string, zlink::reply_call_t>> held;
    std::uint64_t rng = 0x9E3779B97F4A7C15ull;

    explicit server_t(std::string n, int w = 100) : name(std::move(n)), weight(w) {}
    void open(mode_t mode, const std::string &tr, const std::string &tag);
    // Shuts down (2 s) if serving, after opening the gate; drops held replies.
    void close();
    void drop_held();
    std::size_t nheld();
    std::optional<zlink::reply_call_t> take_held(const std::string &tag);
};

struct client_t {
    std::uint64_t hwm = 0;
    std::int64_t send_timeout = 0;      // ns; 0 unset
    std::int64_t root_send_timeout = 0; // ns; 0 unset
    bool extra_channels = false;
    std::unique_ptr<zlink::host> h;
    mode_t mode = mesh;
    // Starts A with the servers as peers (mesh) or endpoints (cs); returns
    // when A reaches each of them.
    void open(mode_t mode, const std::vector<server_t *> &servers);
    void close();
};

// Calls with packet "m" and payload tag, padded with NUL bytes to size.
zlink::send_call_t send_call(client_t &a, const std::string &tag, std::size_t size = 0,
                             const std::string &channel = "svc");
zlink::request_call_t request_call(client_t &a, const std::string &tag, std::size_t size = 0,
                                   const std::string &channel = "svc");
zlink::send_call_t node_send(zlink::host &h, const std::string &rid, const std::string &tag);
zlink::request_call_t node_request(zlink::host &h, const std::string &rid, const std::string &tag);

// The result of a C++ exception of the binding (0 for none).
int result_of(const std::exception_ptr &e);

// Finishes c with submit(); its framework result (0, or the exception's).
struct sync_out {
    int result = 0;
    std::string reply, message;
    std::uint32_t remote_code = 0;
};
sync_out wait_send(zlink::send_call_t &c);
sync_out wait_request(zlink::request_call_t &c);
// Starts c with submit(d.fn()); a refused start fails the case.
template <class C> void start(C &c, done_t &d)
{
    try {
        c.submit(d.fn());
    } catch (...) {
        CF_FAIL("a start was refused: " + std::string(zlink::result_name(result_of(std::current_exception()))));
    }
}
// A request to "svc" started with d; timeout_ms 0: the default.
zlink::request_call_t request_start(client_t &a, const std::string &tag, int timeout_ms, done_t &d);

zlink::host_status_t status(zlink::host &h);
std::int64_t metric(zlink::host &h, const std::string &name, const std::string &labels = "");
std::int64_t dropped(zlink::host &h);
void expect_no_drops(zlink::host &h, const std::string &who);
extern const char *const drop_reasons[5];

// "Saturate B": b gated; a's 4 KiB one-ways "f0", "f1" ... until one stays
// pending 100 ms with a one-way waiting for room in a's status.
struct sat_t {
    std::optional<zlink::send_call_t> pending;
    std::unique_ptr<done_t> done;
    std::int64_t started_ms = 0;
    std::string tag;
    int accepted = 0;
};
void saturate(client_t &a, server_t &b, sat_t &sat);

// Gates s and starts one-ways "d1".."d<n>" from a (n >= 2), each with its
// collector; returns once d1 waits at s's gate and, after d2, s (M = 1) is
// PAUSED.
void send_gated(client_t &a, server_t &s, std::vector<std::unique_ptr<done_t>> &dd,
                std::vector<zlink::send_call_t> &dc, int n);

// count one-way sends "f0", "f1" ... of packet "m" from h to channel
// "svc", started from a thread of its own with at most window in flight.
class flood_t {
public:
    void start(zlink::host &h, int count, int window);
    // Waits up to ms (scaled) until n sends ended; the count ended.
    int wait_done(int n, int ms);
    // Waits for every send (ms scaled is the failure bound), joins the
    // thread, and fails the case unless all completed OK.
    void finish_all(int ms);
    ~flood_t();

private:
    zlink::host *h_ = nullptr;
    int count_ = 0, window_ = 0;
    std::mutex m_;
    std::condition_variable cv_;
    int started_ = 0, inflight_ = 0, done_ = 0, ok_ = 0;
    int bad_result_ = 0, bad_index_ = -1;
    std::vector<std::unique_ptr<zlink::send_call_t>> calls_;
    std::thread th_;
    void finish_one(int index, int result);
};

std::string endpoint(const std::string &tr, const std::string &tag, const std::string &name);
// A host with a node of mesh "m" named name (also its routing id),
// listening on a fresh endpoint of tr unless listen is false; not started.
std::unique_ptr<zlink::host> mesh_host(const std::string &name, const std::string &tr, bool listen,
                                       std::int64_t max_jobs);

} // namespace sc

#endif
