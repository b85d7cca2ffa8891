// jq_raw.cc — seed 001 §10 job-queue cases with raw Core peers (a plain
// Core socket of a context of its own that encodes framework records
// itself, wire.hpp), through the C++ binding's Core handles: JQ-10
// (malformed input never reaches a handler) and JQ-19 (a full Core HWM is
// backpressure, not drops), JQ-09 (per-peer accounting on one ROUTER)
// and JQ-22 (no retained receive, send_ready or retry), and JQ-08 (bounded
// receive rotation, framework peers over inproc). Ported from
// conformance/c/jq_raw.c, whose design notes hold here too.
#include "cases.hpp"
#include "sc.hpp"
#include "wire.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>

#include <elf.h>
#include <link.h>
#include <sys/resource.h>
#include <iostream>

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

zlink::socket raw_dealer(zlink::context &ctx, const std::string &rid, const std::string &ep)
{
    zlink::socket d(ctx, zlink::socket_type::dealer);
    d.set_routing_id(rid);
    d.set_option(ZLINK_LINGER, 0);
    d.connect(ep);
    return d;
}

// The request_result of the REQUEST record id (earlier records skipped).
int raw_request_result(zlink::socket &d, zlink_completion_id_t id)
{
    for (;;) {
        zlink::completion rec = d.completion_recv();
        if (rec.kind() == ZLINK_COMPLETION_REQUEST && rec.id() == id)
            return rec.request_result();
    }
}

// ------------------------------------------------------------- the log

constexpr std::uint32_t blocker = 0xFFFFFFFFu;
constexpr std::uint32_t warm = 0xFFFFFFFEu;

// What a handler saw, in arrival order: the source and the sequence (the
// payload's first 4 bytes, big-endian). The source is the index of the
// peer's routing id in `names` (turn::source; JQ-08's raw peers) or, when
// `names` is empty, payload byte 4 of a ClientServer record (whose source
// is ""), below `nnames`. A blocker waits at the gate and a warm record is
// only counted; neither is logged.
struct log_t {
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<int, std::uint32_t>> v;
    std::vector<std::string> names;
    int nnames = 2;
    sc::gate_t gate, hold;
    std::atomic<int> bad{0}, warm_n{0};

    int source_of(zlink::turn &t, std::span<const std::byte> p) const
    {
        const zlink::routing_id rid = t.source();
        if (names.empty())
            return rid.size() == 0 && p.size() >= 5 && static_cast<int>(p[4]) < nnames
                       ? static_cast<int>(p[4])
                       : -1;
        for (std::size_t i = 0; i < names.size(); i++)
            if (rid.view() == names[i])
                return static_cast<int>(i);
        return -1;
    }

    void on_logged(zlink::turn &t)
    {
        auto p = t.payload();
        int src = source_of(t, p);
        std::uint32_t seq = 0;
        if (p.size() >= 4)
            seq = static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
                  static_cast<std::uint32_t>(p[2]) << 8 | static_cast<std::uint32_t>(p[3]);
        if (p.size() >= 4 && seq == blocker) {
            gate.pass();
            return;
        }
        if (p.size() >= 4 && seq == warm) {
            warm_n++;
            return;
        }
        std::lock_guard<std::mutex> g(m);
        if (src < 0 || p.size() < 4)
            bad++;
        else
            v.emplace_back(src, seq);
        cv.notify_all();
    }
    void wait(std::size_t n, int ms)
    {
        std::unique_lock<std::mutex> g(m);
        cv.wait_for(g, std::chrono::milliseconds(conf::ms(ms)), [&] { return v.size() >= n; });
        if (v.size() < n)
            CF_FAIL("handlers logged " + std::to_string(v.size()) + " of " + std::to_string(n) +
                    " records within " + std::to_string(conf::ms(ms)) + " ms (bad " +
                    std::to_string(bad.load()) + ")");
        CF_EQ(bad.load(), 0);
    }
};

// One one-way record from DEALER d: payload seq (4 bytes BE) and src
// (1 byte) padded to size.
zlink::submit_t raw_send_record(zlink::socket &d, const std::string &channel, std::uint8_t src,
                                std::uint32_t seq, std::size_t size, bool dontwait)
{
    std::string p(std::max<std::size_t>(size, 5), '\0');
    p[0] = static_cast<char>(seq >> 24);
    p[1] = static_cast<char>(seq >> 16);
    p[2] = static_cast<char>(seq >> 8);
    p[3] = static_cast<char>(seq);
    p[4] = static_cast<char>(src);
    auto parts = wire::record(0, 0, 0, channel, p);
    return d.try_send(parts, dontwait ? zlink::send_flags::dontwait : zlink::send_flags::none);
}

void per_peer_accounting(std::uint64_t hwm, std::size_t size, int p2_records)
{
    log_t log;
    zlink::host b("B");
    b.set_option(zlink::host_option::handler_threads, 1);
    b.set_option(zlink::host_option::max_queued_jobs, 1);
    b.add_cs_server("svc", "tcp://127.0.0.1:0");
    b.set_channel_option("svc", zlink::node_option::rcvhwm, static_cast<std::int64_t>(hwm));
    b.add_cs_server("hold", "tcp://127.0.0.1:0");
    b.on_send(zlink::owner::channel("svc"), "m", [&log](zlink::turn &t) { log.on_logged(t); });
    b.on_send(zlink::owner::channel("hold"), "m", [&log](zlink::turn &) { log.hold.pass(); });
    b.start();
    std::string ep = b.endpoint("svc"), hold_ep = b.endpoint("hold");

    zlink::context ctx;
    auto dealer = [&](const std::string &rid, const std::string &e, std::uint64_t h) {
        zlink::socket d(ctx, zlink::socket_type::dealer);
        d.set_routing_id(rid);
        if (h > 0) {
            d.set_option_u64(ZLINK_SNDHWM, h);
            d.set_option_u64(ZLINK_RCVHWM, h);
            d.set_option(ZLINK_SNDBUF, 4096);
        }
        d.set_option(ZLINK_LINGER, 0);
        d.connect(e);
        return d;
    };
    std::optional<zlink::socket> p1, p2, hd;
    p1.emplace(dealer("P1", ep, hwm));
    p2.emplace(dealer("P2", ep, hwm));
    CF_CHECK(!raw_send_record(*p1, "svc", 0, warm, 4, false).ec);
    CF_CHECK(!raw_send_record(*p2, "svc", 1, warm, 4, false).ec);
    CF_EVENTUALLY(log.warm_n == 2, 5000);
    hd.emplace(dealer("H", hold_ep, 0));
    CF_CHECK(!raw_send_record(*p1, "svc", 0, blocker, 4, false).ec);
    CF_EVENTUALLY(log.gate.waiting() == 1, 5000);
    CF_CHECK(!raw_send_record(*hd, "hold", 2, 0, 4, false).ec);
    CF_EVENTUALLY(log.hold.waiting() == 1, 5000);

    int p1_sent = 0;
    p1->set_option(ZLINK_RCVTIMEO, conf::ms(100));
    for (int round = 0;; round++) {
        CF_CHECK(round < 100000);
        for (;;) {
            auto s = raw_send_record(*p1, "svc", 0, static_cast<std::uint32_t>(p1_sent), size, true);
            if (s.ec.value() == ZLINK_SUBMIT_BACKPRESSURED) {
                CF_CHECK(s.id != 0);
                break;
            }
            CF_CHECK(!s.ec);
            p1_sent++;
            CF_CHECK(p1_sent < 1000000);
        }
        zlink::completion rec;
        if (p1->try_completion_recv(rec, zlink::recv_flags::none))
            break; // the refusal holds: P1's pipe is full
    }
    CF_CHECK(p1_sent > 0);
    CF_EQ(raw_send_record(*p1, "svc", 0, static_cast<std::uint32_t>(p1_sent), size, true).ec.value(),
          static_cast<int>(ZLINK_SUBMIT_BACKPRESSURED));
    for (int i = 0; i < p2_records; i++)
        CF_CHECK(!raw_send_record(*p2, "svc", 1, static_cast<std::uint32_t>(i), size, true).ec);
    {
        zlink::monitor mon(*p2, 0);
        CF_EVENTUALLY(([&] {
                          auto st = mon.status();
                          CF_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_SND_PENDING_MSGS);
                          return st.snd_pending_msgs == 0;
                      }()),
                      5000);
    }
    {
        std::lock_guard<std::mutex> g(log.m);
        CF_EQ(log.v.size(), 0u);
    }
    CF_EQ(b.capacity().permits_in_use, 0u);
    CF_EQ(b.capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));

    log.hold.open();
    log.gate.open();
    log.wait(static_cast<std::size_t>(p1_sent + p2_records), 30000);
    {
        std::lock_guard<std::mutex> g(log.m);
        std::uint32_t next[2] = {0, 0};
        int p2_left = p2_records;
        for (std::size_t i = 0; i < log.v.size(); i++) {
            int s = log.v[i].first;
            CF_EQ(log.v[i].second, next[s]);
            next[s]++;
            if (p2_left > 0 && i > 0 && log.v[i - 1].first == s)
                CF_FAIL("record " + std::to_string(i) + ": P" + std::to_string(s + 1) +
                        " twice in a row while the other still had records");
            if (s == 1)
                p2_left--;
        }
        std::cout << "# P1 sent " << p1_sent << " before refusal; first handled after open: P"
                  << log.v[0].first + 1 << "\n";
    }
    CF_EVENTUALLY(b.capacity().permits_in_use == 0, 5000);
    p1->close();
    p2->close();
    hd->close();
    p1.reset();
    p2.reset();
    hd.reset();
    b.shutdown(2000ms);
}

enum { bad_flag, bad_extra_frame, bad_missing_envelope, bad_many_frames, bad_shapes };
const char *const bad_name[bad_shapes] = {"undefined flag 0x10", "an extra frame", "no envelope",
                                          "five frames"};

std::vector<zlink::message> enc_bad(int bad, std::uint64_t correlation, std::uint64_t op)
{
    auto parts = wire::record(bad == bad_flag ? 0x10 : 0x00, correlation, op, "svc", "bad");
    switch (bad) {
    case bad_extra_frame:
        parts.emplace_back("x");
        break;
    case bad_missing_envelope:
        parts.pop_back();
        break;
    case bad_many_frames:
        for (int k = 2; k < 5; k++)
            parts.emplace_back("x");
        break;
    default:
        break;
    }
    return parts;
}

void malformed_input()
{
    std::atomic<int> sends{0}, requests{0};
    zlink::host b("B");
    b.set_option(zlink::host_option::max_queued_jobs, 1);
    b.add_cs_server("svc", "tcp://127.0.0.1:0");
    b.on_send(zlink::owner::channel("svc"), "m", [&sends](zlink::turn &) { sends++; });
    b.on_request(zlink::owner::channel("svc"), "m", [&requests](zlink::turn &t) {
        requests++;
        t.respond("m", t.payload());
    });
    b.start();
    std::string ep = b.endpoint("svc");
    zlink::context ctx;
    std::optional<zlink::socket> d;
    d.emplace(raw_dealer(ctx, "raw", ep));
    d->set_option(ZLINK_RCVTIMEO, conf::ms(5000));
    std::int64_t dropped0 = b.metric("zlink.mesh_node.messages.dropped", "reason=decode_error");
    std::int64_t proto0 = b.metric("zlink.host.protocol_errors");

    for (int bad = 0; bad < bad_shapes; bad++) {
        auto parts = enc_bad(bad, 100 + static_cast<std::uint64_t>(bad), 200 + static_cast<std::uint64_t>(bad));
        zlink_completion_id_t id =
            d->request(nullptr, parts, std::chrono::milliseconds(conf::ms(5000)));
        int r = raw_request_result(*d, id);
        if (r != ZLINK_REQUEST_PROTOCOL_ERROR)
            CF_FAIL(std::string("a request with ") + bad_name[bad] + ": request_result " +
                    std::string(zlink::result_name(r)) + ", ProtocolError expected");
        auto oneway = enc_bad(bad, 0, 300 + static_cast<std::uint64_t>(bad));
        d->send(oneway);
        CF_EVENTUALLY(b.metric("zlink.mesh_node.messages.dropped", "reason=decode_error") ==
                          dropped0 + bad + 1,
                      5000);
        CF_EVENTUALLY(b.capacity().permits_in_use == 0, 5000);
    }
    CF_EQ(b.metric("zlink.host.protocol_errors"), proto0 + 2 * bad_shapes);

    auto ok1 = wire::record(0, 0, 400, "svc", "ok");
    d->send(ok1);
    auto ok2 = wire::record(0, 401, 402, "svc", "ok");
    zlink_completion_id_t id = d->request(nullptr, ok2, std::chrono::milliseconds(conf::ms(5000)));
    CF_EQ(raw_request_result(*d, id), static_cast<int>(ZLINK_REQUEST_OK));
    CF_EVENTUALLY(sends == 1, 5000);
    CF_EQ(requests.load(), 1);
    CF_EQ(b.metric("zlink.mesh_node.messages.dropped", "reason=decode_error"), dropped0 + bad_shapes);
    CF_EVENTUALLY(b.capacity().permits_in_use == 0, 5000);
    auto c = b.capacity();
    CF_EQ(c.reserved_supply_permits, 0u);
    CF_EQ(c.queued_jobs, 0u);
    d->close();
    d.reset();
    b.shutdown(2000ms);
}

// ------------------------------------------------------------- JQ-19

// Outcomes of many one-ways started with submit(callback); each builder is
// dropped at once (a started call still completes).
struct flow_t {
    std::mutex m;
    std::condition_variable cv;
    int started = 0, ok = 0, failed = 0, first_failure = 0;
    int finished()
    {
        std::lock_guard<std::mutex> g(m);
        return ok + failed;
    }
    int wait(int n, std::int64_t until_ms)
    {
        std::unique_lock<std::mutex> g(m);
        while (ok + failed < n && conf::now_ms() < until_ms)
            cv.wait_for(g, 10ms);
        return ok + failed;
    }
    void no_failure()
    {
        std::lock_guard<std::mutex> g(m);
        if (failed != 0)
            CF_FAIL(std::to_string(failed) + " one-way sends failed, the first with " +
                    std::string(zlink::result_name(first_failure)));
    }
    void start(zlink::host &h, int i, std::size_t size)
    {
        auto c = h.send_to_channel("svc");
        std::string tag = "j" + std::to_string(i);
        std::string body = tag;
        if (body.size() < size)
            body.resize(size, '\0');
        c.payload("m", body);
        {
            std::lock_guard<std::mutex> g(m);
            started++;
        }
        try {
            c.submit([this](const zlink::outcome_t &o) {
                std::lock_guard<std::mutex> g(m);
                if (o.ok()) {
                    ok++;
                } else {
                    if (failed == 0)
                        first_failure = o.result;
                    failed++;
                }
                cv.notify_all();
            });
        } catch (...) {
            CF_FAIL("a start was refused: " +
                    std::string(zlink::result_name(sc::result_of(std::current_exception()))));
        }
    }
};

} // namespace

namespace {

void backpressure_round(sc::mode_t mode, const std::string &tr, int records, std::size_t size,
                        int window)
{
    sc::server_t b("B");
    b.max_jobs = 1;
    b.hwm = 16384;
    b.open(mode, tr, "jq19");
    sc::client_t a;
    a.hwm = 16384;
    a.send_timeout = 60000LL * 1000000;
    a.open(mode, {&b});
    std::size_t base = b.rec.count();
    b.gated = true;

    flow_t f;
    int next = 0;
    for (; next < window; next++)
        f.start(*a.h, next, size);
    CF_EVENTUALLY(b.gate.waiting() == 1, 5000);
    CF_EVENTUALLY(a.h->status().oneway_waiting > 0, 5000);
    int before = f.finished();
    // Over tcp the kernel's socket buffers take records too (they grow to
    // megabytes): keep the window full until no send completed for 100 ms.
    std::int64_t give_up = conf::now_ms() + conf::ms(30000);
    int held;
    for (;;) {
        while (next < records && next - f.finished() < window)
            f.start(*a.h, next++, size);
        held = f.finished();
        if (held >= records)
            CF_FAIL("all " + std::to_string(records) + " sends completed while B's gate was closed");
        std::int64_t t0 = conf::now_ms();
        if (f.wait(held + 1, t0 + 100) == held) {
            CF_CHECK(conf::now_ms() - t0 >= 100);
            break; // 100 ms without a completion: held by the HWMs
        }
        if (conf::now_ms() > give_up)
            CF_FAIL("sends kept completing for 30 s while B's gate was closed (" +
                    std::to_string(held) + ")");
    }
    f.no_failure();
    std::cout << "# " << (mode == sc::mesh ? "mesh " : "cs ") << tr << ": " << before << " of "
              << window << " admitted before open, " << held << " when the flow stood still\n";
    CF_CHECK(a.h->status().oneway_waiting > 0);

    b.gate.open();
    std::int64_t end = conf::now_ms() + conf::ms(120000);
    while (next < records) {
        int done = f.wait(next - window + 1, end);
        if (done < next - window + 1)
            CF_FAIL("the flow stalled: " + std::to_string(done) + " of " + std::to_string(next) +
                    " started sends completed");
        f.no_failure();
        while (next < records && next - f.finished() < window)
            f.start(*a.h, next++, size);
    }
    if (f.wait(records, end) < records)
        CF_FAIL("only " + std::to_string(f.finished()) + " of " + std::to_string(records) +
                " sends completed");
    f.no_failure();
    CF_EVENTUALLY(b.rec.count() == base + static_cast<std::size_t>(records), 30000);
    {
        std::lock_guard<std::mutex> g(b.rec.m);
        for (int i = 0; i < records; i++)
            if (b.rec.seen[base + static_cast<std::size_t>(i)] != "j" + std::to_string(i))
                CF_FAIL("B's record " + std::to_string(i) + " is " +
                        b.rec.seen[base + static_cast<std::size_t>(i)] + " (order)");
    }
    for (const char *r : {"reason=no_handler", "reason=decode_error", "reason=backpressure",
                          "reason=shutdown"})
        CF_EQ(b.h->metric("zlink.mesh_node.messages.dropped", r), 0);
    CF_EVENTUALLY(b.h->capacity().permits_in_use == 0, 5000);
    a.close();
    b.close();
}

} // namespace


// ------------------------------------------------------------- JQ-22

namespace {

std::uint64_t rcv_pending(zlink::monitor &mon)
{
    auto st = mon.status();
    CF_CHECK(st.detail_flags & ZLINK_MONITOR_STATUS_DETAIL_RCV_PENDING_MSGS);
    return st.rcv_pending_msgs;
}

// user + system CPU time of the whole process (every thread), in us.
std::int64_t process_cpu_us()
{
    struct rusage ru;
    CF_EQ(getrusage(RUSAGE_SELF, &ru), 0);
    return static_cast<std::int64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
           ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

int find_lib(struct dl_phdr_info *info, size_t, void *data)
{
    if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, "libzlink") != nullptr) {
        *static_cast<std::string *>(data) = info->dlpi_name;
        return 1;
    }
    return 0;
}

// The loaded libzlink's exported zlink_ symbols (its file's .dynsym),
// checked for send-ready, retry and retained-receive hooks; their count.
std::size_t check_abi_hooks()
{
    std::string path;
    dl_iterate_phdr(find_lib, &path);
    if (path.empty())
        CF_FAIL("libzlink is not among the loaded objects");
    std::ifstream in(path, std::ios::binary);
    CF_CHECK(static_cast<bool>(in));
    std::vector<char> img((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t len = img.size();
    CF_CHECK(len >= sizeof(Elf64_Ehdr) && std::memcmp(img.data(), ELFMAG, SELFMAG) == 0);
    Elf64_Ehdr eh;
    std::memcpy(&eh, img.data(), sizeof eh);
    CF_CHECK(eh.e_ident[EI_CLASS] == ELFCLASS64);
    CF_CHECK(eh.e_shoff + static_cast<std::size_t>(eh.e_shnum) * sizeof(Elf64_Shdr) <= len);
    std::vector<Elf64_Shdr> sh(eh.e_shnum);
    std::memcpy(sh.data(), img.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
    static const char *const banned[] = {"send_ready", "sendready", "retry", "retained",
                                         "resubmit"};
    std::size_t nsyms = 0;
    bool saw_start = false;
    for (const Elf64_Shdr &s : sh) {
        if (s.sh_type != SHT_DYNSYM)
            continue;
        CF_CHECK(s.sh_link < eh.e_shnum);
        const Elf64_Shdr &strs = sh[s.sh_link];
        CF_CHECK(s.sh_offset + s.sh_size <= len);
        CF_CHECK(strs.sh_offset + strs.sh_size <= len);
        std::size_t n = s.sh_size / sizeof(Elf64_Sym);
        for (std::size_t k = 0; k < n; k++) {
            Elf64_Sym sym;
            std::memcpy(&sym, img.data() + s.sh_offset + k * sizeof sym, sizeof sym);
            if (sym.st_shndx == SHN_UNDEF || sym.st_name >= strs.sh_size)
                continue; // imports are not the library's ABI
            std::string name(img.data() + strs.sh_offset + sym.st_name);
            if (name.rfind("zlink_", 0) != 0)
                continue;
            nsyms++;
            saw_start = saw_start || name == "zlink_call_start";
            std::string lower = name;
            for (char &c : lower)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            for (const char *b : banned)
                if (lower.find(b) != std::string::npos)
                    CF_FAIL(path + " exports " + name + ", a send-ready/retry hook");
        }
    }
    CF_CHECK(saw_start);
    CF_CHECK(nsyms > 50);
    return nsyms;
}

std::uint64_t be64(const std::byte *p)
{
    std::uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | static_cast<std::uint8_t>(p[i]);
    return v;
}

// A (a CS client of "svc", SNDHWM 16 KiB, send timeout 60 s) sends 4 KiB
// one-ways to R, a raw Core ROUTER that does not read (RCVHWM 16 KiB):
// admitted until the HWMs are full, then `pending` more wait. Over the
// blocked window R's Core receives nothing new, the waiting sends stay
// pending and the process uses under cpu_ppm_max of one CPU. Then R reads:
// every started send arrives exactly once, in order, and completes OK.
// (conformance/c/jq_raw.c jq22_no_retained_receive_or_retry is the
// reference.)
void no_retained_receive_or_retry(int pending, int window_ms, int cpu_ppm_max)
{
    const std::size_t size = 4096;
    std::size_t nsyms = check_abi_hooks();
    std::cout << "# " << nsyms << " exported zlink_ symbols, none a send-ready/retry hook\n";

    zlink::context ctx;
    zlink::socket r(ctx, zlink::socket_type::router);
    r.set_option(ZLINK_LINGER, 0);
    r.set_option_u64(ZLINK_RCVHWM, 16384);
    r.set_option(ZLINK_RCVTIMEO, conf::ms(5000));
    r.bind("tcp://127.0.0.1:*");
    std::string ep = r.last_endpoint();
    zlink::monitor mon(r, 0);

    zlink::host a("A");
    a.add_cs_client("svc", ep);
    a.set_channel_option("svc", zlink::node_option::sndhwm, 16384);
    a.set_channel_option("svc", zlink::node_option::send_timeout, 60000LL * 1000000);
    a.start();

    flow_t f;
    int started = 0;
    for (;;) {
        f.start(a, started, size);
        started++;
        if (f.wait(started, conf::now_ms() + conf::ms(100)) < started)
            break;
        f.no_failure();
        CF_CHECK(started < 100000);
    }
    for (int i = 0; i < pending; i++)
        f.start(a, started++, size);
    int accepted = f.finished();
    CF_EVENTUALLY(a.status().oneway_waiting == static_cast<std::uint64_t>(started - accepted),
                  5000);

    std::uint64_t held = rcv_pending(mon);
    std::int64_t cpu0 = process_cpu_us();
    std::int64_t w0 = conf::now_ms();
    // The blocked window is the case's measure, not a wait for a condition.
    std::this_thread::sleep_for(std::chrono::milliseconds(window_ms));
    std::int64_t cpu = process_cpu_us() - cpu0;
    std::int64_t wall = conf::now_ms() - w0;
    CF_EQ(rcv_pending(mon), held);
    CF_EQ(f.finished(), accepted);
    CF_EQ(a.status().oneway_waiting, static_cast<std::uint64_t>(started - accepted));
    std::int64_t ppm = cpu * 1000 / (wall > 0 ? wall : 1);
    std::cout << "# blocked " << wall << " ms: " << accepted << " admitted, "
              << started - accepted << " waiting, R holds " << held << "; CPU " << cpu << " us ("
              << ppm << " ppm)\n";
    if (ppm >= cpu_ppm_max)
        CF_FAIL("the process used " + std::to_string(cpu) + " us of CPU over a " +
                std::to_string(wall) + " ms blocked window (" + std::to_string(ppm) +
                " ppm, < " + std::to_string(cpu_ppm_max) + " expected)");

    std::uint64_t last_high = 0, last_low = 0;
    for (int got = 0; got < started; got++) {
        zlink::record rec = r.router_recv();
        CF_EQ(rec.token, zlink_reply_token_t{0});
        CF_EQ(rec.parts.size(), std::size_t{2});
        auto f0 = rec.parts[0].bytes();
        CF_CHECK(f0.size() >= 21 && static_cast<std::uint8_t>(f0[0]) == 0x5A &&
                 static_cast<std::uint8_t>(f0[3]) == 18);
        std::uint64_t op_high = be64(f0.data() + 5), op_low = be64(f0.data() + 13);
        CF_CHECK(op_high != 0 || op_low != 0);
        auto env = rec.parts[1].bytes();
        CF_CHECK(env.size() >= 8 + size && static_cast<std::uint8_t>(env[0]) == 1);
        std::string payload(reinterpret_cast<const char *>(env.data()) + 8);
        std::string want = "j" + std::to_string(got);
        if (payload != want)
            CF_FAIL("R's record " + std::to_string(got) + " is " + payload.substr(0, 16) + ", " +
                    want + " expected (each send once, in order)");
        CF_CHECK(got == 0 || op_high != last_high || op_low != last_low);
        last_high = op_high;
        last_low = op_low;
    }
    if (f.wait(started, conf::now_ms() + conf::ms(10000)) < started)
        CF_FAIL(std::to_string(f.finished()) + " of " + std::to_string(started) +
                " sends completed after R read them all");
    f.no_failure();
    // Nothing more comes: no send was submitted twice.
    zlink_pollitem_t it{};
    it.socket = r.handle();
    it.fd = -1;
    it.events = ZLINK_POLLIN;
    CF_EQ(zlink::poll(std::span(&it, 1), std::chrono::milliseconds(conf::ms(100))), 0);
    CF_EQ(rcv_pending(mon), std::uint64_t{0});
    a.shutdown(std::chrono::milliseconds(2000));
}

} // namespace

// ------------------------------------------------------------- JQ-08

namespace {

// A one-way to channel of h whose payload is seq (4 bytes BE) padded with
// zero bytes to size (at least 4); waits for its outcome: the result.
int send_seq(zlink::host &h, const std::string &channel, std::uint32_t seq, std::size_t size)
{
    std::string p(std::max<std::size_t>(size, 4), '\0');
    p[0] = static_cast<char>(seq >> 24);
    p[1] = static_cast<char>(seq >> 16);
    p[2] = static_cast<char>(seq >> 8);
    p[3] = static_cast<char>(seq);
    auto c = h.send_to_channel(channel);
    c.payload("m", p);
    return sc::wait_send(c).result;
}

// The runs of the log (maximal stretches from one source). Each run that
// started while another source still had records to come is at most
// max_run long; with cyclic and all three sources still sending, the run
// after a stop comes from the next source, never again from one of the
// last two. Each source's records come in its sending order. The log's
// mutex is held. Returns the longest run checked.
std::size_t check_runs(const log_t &l, std::size_t nsrc, std::size_t per_src,
                       std::size_t max_run, bool cyclic, const std::string &what)
{
    std::vector<std::size_t> left(nsrc, per_src);
    std::vector<std::uint32_t> next_seq(nsrc, 0);
    std::size_t longest = 0, nruns = 0;
    int prev[2] = {-1, -1};
    const auto &v = l.v;
    for (std::size_t i = 0; i < v.size();) {
        int s = v[i].first;
        std::size_t others = 0, alive = 0;
        for (std::size_t k = 0; k < nsrc; k++) {
            if (left[k] > 0)
                alive++;
            if (static_cast<int>(k) != s && left[k] > 0)
                others++;
        }
        std::size_t j = i;
        while (j < v.size() && v[j].first == s) {
            if (v[j].second != next_seq[s])
                CF_FAIL(what + ": record " + std::to_string(j) + " of source " +
                        std::to_string(s) + " has seq " + std::to_string(v[j].second) +
                        ", expected " + std::to_string(next_seq[s]));
            next_seq[s]++;
            j++;
        }
        std::size_t len = j - i;
        if (others > 0) {
            longest = std::max(longest, len);
            if (len > max_run)
                CF_FAIL(what + ": source " + std::to_string(s) + " got " + std::to_string(len) +
                        " consecutive records (records " + std::to_string(i) + ".." +
                        std::to_string(j - 1) + ") while another still had data; at most " +
                        std::to_string(max_run) + " expected");
        }
        if (cyclic && alive == nsrc && nsrc == 3 && prev[1] >= 0 &&
            (s == prev[0] || s == prev[1])) {
            for (std::size_t x = 0, r = 0; x < v.size() && r < 12; r++) {
                std::size_t y = x;
                while (y < v.size() && v[y].first == v[x].first)
                    y++;
                std::cout << "# run " << r << ": src " << v[x].first << " len " << y - x << "\n";
                x = y;
            }
            CF_FAIL(what + ": run " + std::to_string(nruns) + " (records " + std::to_string(i) +
                    ".." + std::to_string(j - 1) + ") is from source " + std::to_string(s) +
                    " again, not the next socket after the last stop");
        }
        prev[1] = prev[0];
        prev[0] = s;
        left[s] -= std::min(len, left[s]);
        nruns++;
        i = j;
    }
    for (std::size_t k = 0; k < nsrc; k++)
        CF_EQ(next_seq[k], static_cast<std::uint32_t>(per_src));
    return longest;
}

// B: one handler thread (two host threads), a limit that never binds, a
// gated "svc" handler and a "hold" handler. layout 1: one mesh node "m"
// with the three clients as its peers (one ROUTER); layout 3: three mesh
// nodes "m1".."m3", one per client (three ROUTERs, one channel gate). Two
// blockers hold both of B's threads at their gates; each client then
// pre-queues per_src records of size bytes, taking turns; then open().
std::size_t rotation_round(const std::string &tr, int layout, std::size_t per_src,
                           std::size_t size, std::size_t max_run, const std::string &what)
{
    const std::vector<std::string> names = {"A1", "A2", "A3"};
    const std::vector<std::string> meshes =
        layout == 1 ? std::vector<std::string>{"m", "m", "m"}
                    : std::vector<std::string>{"m1", "m2", "m3"};
    auto hwm = static_cast<std::int64_t>(per_src * (size + 256) * 2 + (1 << 20));
    log_t log;
    log.names = names;

    zlink::host b("B");
    b.set_option(zlink::host_option::handler_threads, 1);
    b.set_option(zlink::host_option::max_queued_jobs, 1000000);
    for (int i = 0; i < layout; i++) {
        b.add_mesh_node(meshes[i], "B", sc::endpoint(tr, "jq08", meshes[i]));
        b.add_mesh_channel_server(meshes[i], "svc", 100);
        b.set_mesh_option(meshes[i], zlink::node_option::rcvhwm, hwm * 3);
    }
    b.add_mesh_channel_server(meshes[0], "hold", 100);
    b.on_send(zlink::owner::channel("svc"), "m", [&log](zlink::turn &t) { log.on_logged(t); });
    b.on_send(zlink::owner::channel("hold"), "m", [&log](zlink::turn &) { log.hold.pass(); });
    b.start();
    std::vector<std::string> bound;
    for (int i = 0; i < layout; i++)
        bound.push_back(b.endpoint(meshes[i]));

    std::vector<std::unique_ptr<zlink::host>> a;
    for (int i = 0; i < 3; i++) {
        auto h = std::make_unique<zlink::host>(names[i]);
        h->add_mesh_node(meshes[i], names[i]);
        h->add_mesh_channel_client(meshes[i], "svc");
        if (i == 0)
            h->add_mesh_channel_client(meshes[i], "hold");
        h->set_mesh_option(meshes[i], zlink::node_option::sndhwm, hwm);
        h->set_mesh_option(meshes[i], zlink::node_option::send_timeout, 60000LL * 1000000);
        h->mesh_connect(meshes[i], bound[layout == 1 ? 0 : i], "B");
        h->start();
        CF_EVENTUALLY(h->ready_peers(meshes[i]) == 1, 5000);
        a.push_back(std::move(h));
    }
    for (int i = 0; i < layout; i++)
        CF_EVENTUALLY(b.ready_peers(meshes[i]) == (layout == 1 ? 3 : 1), 5000);

    // The blockers hold both of B's threads at their gates: B receives
    // nothing more.
    CF_RESULT(send_seq(*a[0], "svc", blocker, 4), 0);
    CF_EVENTUALLY(log.gate.waiting() == 1, 5000);
    CF_RESULT(send_seq(*a[0], "hold", 0, 4), 0);
    CF_EVENTUALLY(log.hold.waiting() == 1, 5000);
    // Pre-queue: the clients take turns so that no client's records are
    // older than another's by more than one record.
    for (std::size_t k = 0; k < per_src; k++)
        for (int i = 0; i < 3; i++)
            CF_RESULT(send_seq(*a[i], "svc", static_cast<std::uint32_t>(k), size), 0);
    {
        std::lock_guard<std::mutex> g(log.m);
        CF_EQ(log.v.size(), 0u);
    }
    // Nothing received yet: every record is in B's Core queues.
    CF_EQ(b.capacity().permits_in_use, 0u);
    CF_EQ(b.capacity().pressure_state, static_cast<int>(ZLINK_PRESSURE_RUNNING));

    log.hold.open();
    log.gate.open();
    log.wait(3 * per_src, 30000);
    std::size_t longest = 0, first_run = 0;
    {
        std::lock_guard<std::mutex> g(log.m);
        longest = check_runs(log, 3, per_src, max_run, layout == 3, what);
        while (first_run < log.v.size() && log.v[first_run].first == log.v[0].first)
            first_run++;
    }
    if (layout == 1 && longest > 1)
        CF_FAIL(what + ": peers of one ROUTER were not interleaved record by record (a run of " +
                std::to_string(longest) + ")");
    std::cout << "# " << what << " " << tr << ": longest run " << longest << " (first "
              << first_run << ")\n";
    CF_EQ(b.capacity().permits_in_use, 0u);
    for (auto &h : a)
        h->shutdown(2000ms);
    b.shutdown(2000ms);
    return longest;
}

} // namespace

namespace cases {

void jq09(const conf::params_t &p)
{
    auto hwm = static_cast<std::uint64_t>(conf::param_int(p, "hwm"));
    auto size = static_cast<std::size_t>(conf::param_int(p, "record_size"));
    int p2_records = static_cast<int>(conf::param_int(p, "p2_records"));
    per_peer_accounting(hwm, size, p2_records);
}

void jq19(const conf::params_t &p)
{
    auto trs = sc::transports(p);
    int records = static_cast<int>(conf::param_int(p, "records"));
    auto size = static_cast<std::size_t>(conf::param_int(p, "record_size"));
    int window = static_cast<int>(conf::param_int(p, "window"));
    for (const auto &tr : trs) {
        backpressure_round(sc::mesh, tr, records, size, window);
        backpressure_round(sc::cs, tr, records, size, window);
    }
}


void jq10(const conf::params_t &) { malformed_input(); }

void jq08(const conf::params_t &p)
{
    auto trs = sc::transports(p);
    auto per_src = static_cast<std::size_t>(conf::param_int(p, "records"));
    auto small = static_cast<std::size_t>(conf::param_int(p, "small_size"));
    auto large = static_cast<std::size_t>(conf::param_int(p, "large_size"));
    auto large_records = static_cast<std::size_t>(conf::param_int(p, "large_records"));
    // The byte bound: a socket's batch ends once 1 MiB of payload came, so
    // a run is at most ceil(1 MiB / size) records.
    std::size_t byte_run = ((std::size_t{1} << 20) + large - 1) / large;
    for (const auto &tr : trs) {
        rotation_round(tr, 1, per_src, small, 1, "one ROUTER");
        std::size_t small_run = rotation_round(tr, 3, per_src, small, 64, "three sockets");
        std::size_t large_run =
            rotation_round(tr, 3, large_records, large, byte_run, "three sockets, large");
        if (large_run >= small_run)
            CF_FAIL("runs of " + std::to_string(large) + "-byte records (" +
                    std::to_string(large_run) + ") are not shorter than of " +
                    std::to_string(small) + "-byte ones (" + std::to_string(small_run) + ")");
    }
}

void jq22(const conf::params_t &p)
{
    no_retained_receive_or_retry(static_cast<int>(conf::param_int(p, "pending")),
                                 static_cast<int>(conf::param_int(p, "window_ms")),
                                 static_cast<int>(conf::param_int(p, "cpu_ppm_max")));
}

} // namespace cases
