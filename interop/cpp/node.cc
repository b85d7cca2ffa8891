// node.cc — the C++ program of the interop suite (interop/README.md): the
// same roles, lines and packets as interop/c/node.c, through the C++
// binding's public API (//bindings/cpp:zlinkpp).
//
//   node serve-cs CHANNEL | call-cs CHANNEL ENDPOINT N | ring MESH RID [ENDPOINT PEER_RID]...
//
// A hop is a coroutine handler: it co_awaits the forwarded request, so its
// turn (and the node's gate) stays open until the next node answered, as
// the C program keeps its turn open from the completion.
#include <zlink/zlink.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr const char *lang = "cpp";
constexpr auto timeout = std::chrono::seconds(10);

std::mutex next_mu;
std::string next_rid;

std::string next_node()
{
    std::lock_guard<std::mutex> g(next_mu);
    return next_rid;
}

void say(const std::string &line)
{
    std::cout << line << std::endl; // endl flushes: the driver reads lines
}

void bye(zlink::host &h)
{
    h.shutdown(std::chrono::seconds(5));
    say("BYE");
}

void drain_stdin()
{
    std::string line;
    while (std::getline(std::cin, line)) {
    }
}

int serve_cs(const std::string &channel)
{
    zlink::host h("interop-cpp-server");
    h.add_cs_server(channel, "tcp://127.0.0.1:0");
    h.on_request(zlink::owner::channel(channel), "interop.echo", [](zlink::turn &t) {
        t.respond("interop.echo", std::string(t.text()) + "|" + lang, "text/plain");
    });
    h.start();
    say("READY " + h.endpoint(channel));
    drain_stdin();
    bye(h);
    return 0;
}

int call_cs(const std::string &channel, const std::string &endpoint, int n)
{
    zlink::host h("interop-cpp-client");
    h.add_cs_client(channel, endpoint).start();
    for (int i = 0; i < n; i++) {
        zlink::reply_t r = h.request_to_channel(channel)
                               .payload("interop.echo", std::string(lang) + "#" + std::to_string(i),
                                        "text/plain")
                               .timeout(timeout)
                               .submit();
        say("REPLY " + std::string(r.text()));
    }
    bye(h);
    return 0;
}

// interop.hop: "<hops>;<path>" -> append ">RID", forward or answer.
zlink::task_t<void> hop(zlink::host &h, std::string mesh, std::string rid, zlink::turn &t)
{
    std::string in(t.text());
    auto semi = in.find(';');
    if (semi == std::string::npos)
        throw std::runtime_error("malformed hop");
    long hops = std::strtol(in.c_str(), nullptr, 10);
    std::string path = in.substr(semi + 1) + ">" + rid;
    if (hops <= 0) {
        t.respond("interop.hop", path, "text/plain");
        co_return;
    }
    zlink::reply_t answer = co_await h.request_to_node(mesh, next_node())
                                .payload("interop.hop", std::to_string(hops - 1) + ";" + path,
                                         "text/plain")
                                .timeout(timeout)
                                .async();
    t.respond("interop.hop", answer.payload, "text/plain");
}

int ring(const std::string &mesh, const std::string &rid, const std::vector<std::string> &peers)
{
    zlink::host h("interop-cpp-ring");
    h.add_mesh_node(mesh, rid, std::string("tcp://127.0.0.1:0"));
    for (size_t i = 0; i + 1 < peers.size(); i += 2)
        h.mesh_connect(mesh, peers[i], peers[i + 1]);
    h.on_request(zlink::owner::node(mesh), "interop.hop",
                 [&h, mesh, rid](zlink::turn &t) { return hop(h, mesh, rid, t); });
    h.start();
    say("READY " + h.endpoint(mesh));
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream w(line);
        std::string cmd, arg;
        w >> cmd >> arg;
        if (cmd == "NEXT") {
            std::lock_guard<std::mutex> g(next_mu);
            next_rid = arg;
        } else if (cmd == "WAIT") {
            // No readiness event in the ABI: look every millisecond, for at
            // most the call timeout (a failure bound).
            int want = std::atoi(arg.c_str());
            auto end = std::chrono::steady_clock::now() + timeout;
            while (h.ready_peers(mesh) < want) {
                if (std::chrono::steady_clock::now() > end) {
                    say("ERROR peers: " + std::to_string(h.ready_peers(mesh)) + " of " + arg);
                    std::exit(1);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            say("PEERS " + arg);
        } else if (cmd == "START") {
            zlink::reply_t r = h.request_to_node(mesh, next_node())
                                   .payload("interop.hop", arg + ";" + rid, "text/plain")
                                   .timeout(timeout)
                                   .submit();
            say("RING " + std::string(r.text()));
        } else {
            say("ERROR unknown command: " + line);
            std::exit(1);
        }
    }
    bye(h);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> a(argv + 1, argv + argc);
    try {
        if (a.size() == 2 && a[0] == "serve-cs")
            return serve_cs(a[1]);
        if (a.size() == 4 && a[0] == "call-cs")
            return call_cs(a[1], a[2], std::atoi(a[3].c_str()));
        if (a.size() >= 3 && a.size() % 2 == 1 && a[0] == "ring")
            return ring(a[1], a[2], std::vector<std::string>(a.begin() + 3, a.end()));
    } catch (const std::exception &e) {
        say(std::string("ERROR ") + e.what());
        std::_Exit(1);
    }
    std::cerr << "usage: node serve-cs CHANNEL | call-cs CHANNEL ENDPOINT N | "
                 "ring MESH RID [ENDPOINT PEER_RID]...\n";
    return 2;
}
