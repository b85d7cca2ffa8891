// jq_owner.cc — seed 001 §10 "A failed check leaves no trace" (JQ-04):
// an owner's queue keeps its counts, bytes and sequence numbers exactly
// when a record is refused before it. Ported from conformance/c/jq_owner.c.
#include "cases.hpp"
#include "sc.hpp"

using namespace std::chrono_literals;
namespace fw = zlink::fw;

namespace {

struct seen_t {
    std::mutex m;
    std::vector<std::pair<std::string, std::uint64_t>> v;
};

void send_one(zlink::host &a, const std::string &tag)
{
    auto c = a.send_to_channel("svc");
    c.payload("m", tag);
    CF_RESULT(sc::wait_send(c).result, 0);
}

int refused(zlink::host &a, const std::string &packet)
{
    auto c = a.request_to_channel("svc");
    c.payload(packet, "x").timeout(5000ms);
    return sc::wait_request(c).result;
}

void failed_check_leaves_no_trace(const std::string &tr)
{
    seen_t seen;
    const zlink::owner svc = zlink::owner::channel("svc");
    auto x = sc::mesh_host("X", tr, true, 0);
    x->add_mesh_channel_server("m", "svc", 100);
    x->on_send(svc, "m", [&seen](zlink::turn &t) {
        std::lock_guard<std::mutex> g(seen.m);
        seen.v.emplace_back(std::string(t.text()), t.sequence());
    });
    x->start();
    std::string bound = x->endpoint("m");
    auto a = sc::mesh_host("A", tr, false, 0);
    a->add_mesh_channel_client("m", "svc");
    a->mesh_connect("m", bound, "X");
    a->start();
    CF_EVENTUALLY(a->ready_peers("m") == 1, 5000);

    send_one(*a, "v1");
    CF_EVENTUALLY(x->owner_status(svc).handled == 1, 5000);
    auto before = x->owner_status(svc);
    CF_EQ(before.accepted_seq, 1u);

    CF_RESULT(refused(*a, "nope"), fw::not_found);
    CF_RESULT(refused(*a, "m"), fw::not_found);
    auto mid = x->owner_status(svc);
    CF_EQ(mid.accepted_seq, before.accepted_seq);
    CF_EQ(mid.queued_records, before.queued_records);
    CF_EQ(mid.queued_bytes, before.queued_bytes);
    CF_EQ(mid.running_records, before.running_records);
    CF_EQ(mid.running_bytes, before.running_bytes);
    CF_EQ(mid.handled, before.handled);

    send_one(*a, "v2");
    CF_EVENTUALLY(x->owner_status(svc).handled == 2, 5000);
    {
        std::lock_guard<std::mutex> g(seen.m);
        CF_EQ(seen.v.size(), 2u);
        CF_CHECK(seen.v[0].first == "v1" && seen.v[1].first == "v2");
        CF_EQ(seen.v[0].second, 1u);
        CF_EQ(seen.v[1].second, seen.v[0].second + 1);
    }
    auto end = x->owner_status(svc);
    CF_EQ(end.accepted_seq, 2u);
    CF_EQ(end.queued_records + end.queued_bytes + end.running_records + end.running_bytes, 0u);
    auto cap = x->capacity();
    CF_EQ(cap.permits_in_use, 0u);
    CF_EQ(cap.queued_jobs, 0u);
    a->shutdown(2000ms);
    x->shutdown(2000ms);
}

} // namespace

namespace cases {

void jq04(const conf::params_t &p)
{
    for (const auto &tr : sc::transports(p))
        failed_check_leaves_no_trace(tr);
}

} // namespace cases
