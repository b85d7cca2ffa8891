// bench.cc — the request/reply benchmark's program in C++ (framework_cpp;
// bench/rr_common.h states the protocol it speaks, bench/rr_framework.c is
// the same program in C). Both sides use the C++ binding's public API
// (//bindings/cpp:zlinkpp); argument parsing, the clock, the samples and
// the report are rr_common's, as in the C program.
//   server   one host, ClientServer server "bench" on tcp://127.0.0.1:0, a
//            request handler for "echo" that answers the payload
//   client   one host, ClientServer client; N requests in flight, each
//            started with call.submit(callback) (zlink_call_start); the
//            callback runs on the framework's completion dispatcher, records
//            the latency and, while the window is open, starts the slot's
//            next request
// Lock: client::m guards every field the callbacks and main share; it is
// never held across a binding call (a completion may run on the dispatcher
// before submit() returns), so a slot's start time is written first.
#include "bench/rr_common.h"

#include <zlink/zlink.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr const char *channel = "bench";
constexpr const char *packet = "echo";
constexpr const char *content_type = "application/octet-stream";

std::string version()
{
    int major = 0, minor = 0, patch = 0;
    zlink_version(&major, &minor, &patch); // the binding has no wrapper for it
    return "zlink-cpp-" + std::to_string(major) + "." + std::to_string(minor) + "." +
           std::to_string(patch);
}

int run_server()
{
    zlink::host h("bench-server");
    h.add_cs_server(channel, "tcp://127.0.0.1:0");
    h.on_request(zlink::owner::channel(channel), packet, [](zlink::turn &t) {
        t.respond(packet, t.payload(), content_type);
    });
    h.start();
    std::string ep = h.endpoint(channel);
    rr_ready(std::stoi(ep.substr(ep.rfind(':') + 1)));
    rr_wait_stdin_eof();
    h.shutdown();
    return 0;
}

struct client {
    const rr_args_t &args;
    zlink::host &h;
    std::vector<std::byte> payload;
    uint64_t window_start = 0, window_end = 0;
    std::mutex m;
    std::condition_variable all_done;
    std::vector<uint64_t> start_ns; // per slot; m
    unsigned inflight = 0;          // m
    uint64_t calls = 0;             // m
    rr_samples_t samples{};         // m
    std::string failure;            // m

    client(const rr_args_t &a, zlink::host &host)
        : args(a), h(host), payload(a.size, std::byte{'q'}), start_ns(a.inflight)
    {
    }

    // Counts the slot as stopped (m held).
    void stop_locked()
    {
        if (--inflight == 0)
            all_done.notify_all();
    }

    void start(unsigned slot)
    {
        {
            std::lock_guard<std::mutex> g(m);
            start_ns[slot] = rr_now_ns();
        }
        try {
            h.request_to_channel(channel)
                .payload(packet, std::span<const std::byte>(payload), content_type)
                .submit([this, slot](const zlink::outcome_t &o) { done(slot, o); });
        } catch (const std::exception &e) {
            std::lock_guard<std::mutex> g(m);
            if (failure.empty())
                failure = std::string("start: ") + e.what();
            stop_locked();
        }
    }

    void done(unsigned slot, const zlink::outcome_t &o)
    {
        uint64_t now = rr_now_ns();
        bool ok = o.ok() && o.reply && o.reply->payload.size() == args.size;
        bool again = false;
        {
            std::lock_guard<std::mutex> g(m);
            if (!ok && failure.empty())
                failure = "request outcome: " +
                          std::string(o.ok() ? "wrong reply size" : o.result_name());
            if (ok && now >= window_start && now < window_end) {
                calls++;
                rr_samples_add(&samples, (double)(now - start_ns[slot]) / 1000.0);
            }
            again = ok && failure.empty() && now < window_end;
            if (!again)
                stop_locked();
        }
        if (again)
            start(slot);
    }
};

int run_client(const rr_args_t &a)
{
    zlink::host h("bench-client");
    h.add_cs_client(channel, "tcp://127.0.0.1:" + std::to_string(a.port)).start();
    client cl(a, h);
    if (rr_samples_init(&cl.samples, (size_t)(a.duration_ns / 2000)) != 0) {
        rr_error("out of memory");
        return 1;
    }
    cl.window_start = rr_now_ns() + a.warmup_ns;
    cl.window_end = cl.window_start + a.duration_ns;
    {
        std::lock_guard<std::mutex> g(cl.m);
        cl.inflight = a.inflight; // each slot counts until it stops
    }
    for (unsigned i = 0; i < a.inflight; i++)
        cl.start(i);
    auto bound = std::chrono::steady_clock::now() +
                 std::chrono::nanoseconds(cl.window_end + RR_STALL_NS - rr_now_ns());
    int status = 1;
    {
        std::unique_lock<std::mutex> g(cl.m);
        bool drained = cl.all_done.wait_until(g, bound, [&] { return cl.inflight == 0; });
        if (!drained)
            rr_error("%u calls still in flight %llu s after the window", cl.inflight,
                     (unsigned long long)(RR_STALL_NS / 1000000000ull));
        else if (!cl.failure.empty())
            rr_error("%s", cl.failure.c_str());
        else
            status = rr_report(version().c_str(), cl.calls, a.duration_ns, &cl.samples) == 0 ? 0 : 1;
    }
    // Calls still in flight (a stalled run) end SHUTTING_DOWN here, before
    // cl goes away.
    h.shutdown();
    rr_samples_free(&cl.samples);
    return status;
}

} // namespace

int main(int argc, char **argv)
{
    rr_args_t a;
    if (rr_parse_args(argc, argv, &a) != 0)
        return 2;
    try {
        return a.mode == RR_SERVER ? run_server() : run_client(a);
    } catch (const std::exception &e) {
        rr_error("%s", e.what());
        return 1;
    }
}
