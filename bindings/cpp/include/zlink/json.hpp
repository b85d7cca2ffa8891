// zlink/json.hpp — optional typed payloads over nlohmann::json
// (Debian nlohmann-json3-dev). The core headers need only the standard
// library; include this one to send and read JSON values.
//
//   host.request_to_channel("inv").payload(zlink::json_payload("Reserve", j)) ...
//   auto j = zlink::from_json(reply);           // a reply_t's payload
//   auto j = zlink::from_json(turn);            // a turn's payload
//
// The content type is application/json ("" on the wire means the same).
#ifndef ZLINK_JSON_HPP
#define ZLINK_JSON_HPP

#include <zlink/framework.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace zlink {

// Sets a call's payload to j, serialised (packet name, application/json).
template <class T> call_t<T> &json_payload(call_t<T> &call, const std::string &packet,
                                           const nlohmann::json &j)
{
    return call.payload(packet, j.dump(), "application/json");
}
template <class T> call_t<T> &&json_payload(call_t<T> &&call, const std::string &packet,
                                            const nlohmann::json &j)
{
    return std::move(json_payload(call, packet, j));
}

// Parses a reply's or a turn's payload; nlohmann::json::parse_error when it
// is no JSON.
inline nlohmann::json from_json(const reply_t &r) { return nlohmann::json::parse(r.text()); }
inline nlohmann::json from_json(const turn &t) { return nlohmann::json::parse(t.text()); }

// Answers a request's turn with j.
inline void respond_json(turn &t, const std::string &packet, const nlohmann::json &j)
{
    t.respond(packet, j.dump(), "application/json");
}

} // namespace zlink

#endif // ZLINK_JSON_HPP
