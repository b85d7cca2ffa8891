// raw.hpp — Core-level helpers of the cases with raw peers, over the C++
// binding's Core handles: test sockets, fresh endpoints, fills, and
// completion-record expectations.
#ifndef CONF_CPP_RAW_HPP
#define CONF_CPP_RAW_HPP

#include "conf.hpp"

#include <memory>
#include <string>

namespace raw {

constexpr int timeo_ms = 2000;

// A socket with LINGER 0 and SNDTIMEO / RCVTIMEO timeo_ms (scaled).
zlink::socket sock(zlink::context &ctx, zlink::socket_type type);
// Binds s to a fresh endpoint of tr; the address a peer connects to.
std::string bind(zlink::socket &s, const std::string &tr);

std::vector<zlink::message> msg(std::string_view text);

// One received REQUEST at a ROUTER, with its payload checked.
struct rreq {
    zlink::routing_id rid;
    zlink_reply_token_t token = 0;
};
rreq recv_request(zlink::socket &r, const std::string &want);

// A blocking request (10 s timeout); its completion id.
zlink_completion_id_t request(zlink::socket &s, const zlink::routing_id *to, const std::string &text);

// DONTWAIT DATA to `to` until refused; the count admitted, the token in wt.
int fill(zlink::socket &r, const std::string &to, std::size_t size, zlink_completion_id_t &wt);
// fill() until the refusal holds (no WRITABLE edge within 100 ms).
int fill_stable(zlink::socket &r, const std::string &to, std::size_t size, zlink_completion_id_t &wt);
void no_record(zlink::socket &s);
void expect_writable(zlink::socket &s, zlink_completion_id_t wt,
                     std::initializer_list<zlink_completion_id_t> others);
void expect_reply(zlink::socket &s, zlink_completion_id_t id, const std::string &text);
void drain_data(zlink::socket &d, int n, std::size_t size);

} // namespace raw

#endif
