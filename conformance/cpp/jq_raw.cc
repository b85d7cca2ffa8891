// jq_raw.cc — seed 001 §10 job-queue cases with raw Core peers (a plain
// Core socket of a context of its own that encodes framework records
// itself, wire.hpp), through the C++ binding's Core handles: JQ-10
// (malformed input never reaches a handler). Ported from
// conformance/c/jq_raw.c; JQ-08, JQ-09, JQ-19 and JQ-22 are not ported.
#include "cases.hpp"
#include "sc.hpp"
#include "wire.hpp"

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

} // namespace

namespace cases {

void jq10(const conf::params_t &) { malformed_input(); }

} // namespace cases
