// wire.hpp — framework records encoded by hand for the cases' raw Core
// peers (doc/protocol.md §14): big-endian writers that build a message's
// bytes, through the C++ binding's messages. No state, no lock.
#ifndef CONF_CPP_WIRE_HPP
#define CONF_CPP_WIRE_HPP

#include "conf.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace wire {

struct writer {
    std::string b;
    void bytes(const void *p, std::size_t n) { b.append(static_cast<const char *>(p), n); }
    void u8(std::uint8_t v) { b.push_back(static_cast<char>(v)); }
    void u16(std::uint16_t v)
    {
        u8(static_cast<std::uint8_t>(v >> 8));
        u8(static_cast<std::uint8_t>(v));
    }
    void u32(std::uint32_t v)
    {
        u16(static_cast<std::uint16_t>(v >> 16));
        u16(static_cast<std::uint16_t>(v));
    }
    void u64(std::uint64_t v)
    {
        u32(static_cast<std::uint32_t>(v >> 32));
        u32(static_cast<std::uint32_t>(v));
    }
    // s with its one-byte length
    void l8(const std::string &s)
    {
        CF_CHECK(s.size() <= 255);
        u8(static_cast<std::uint8_t>(s.size()));
        b += s;
    }
    // "ZM" 1, the command byte and the flags byte
    void prefix(std::uint8_t command, std::uint8_t flags)
    {
        const std::uint8_t magic[3] = {0x5A, 0x4D, 0x01};
        bytes(magic, 3);
        u8(command);
        u8(flags);
    }
    zlink::message msg() const { return zlink::message(std::string_view(b)); }
};

// The two parts of a framework record to channel: CHANNEL_SEND (18,
// correlation 0) or CHANNEL_REQUEST (19, no timeout) with the flags byte
// and op_low op, and the envelope of packet "m", content type "".
inline std::vector<zlink::message> record(std::uint8_t flags, std::uint64_t correlation,
                                          std::uint64_t op, const std::string &channel,
                                          std::string_view payload)
{
    writer f0;
    f0.prefix(correlation != 0 ? 19 : 18, flags);
    if (correlation != 0)
        f0.u64(correlation);
    f0.u64(0);
    f0.u64(op);
    if (correlation != 0)
        f0.u32(0);
    f0.l8(channel);
    writer f1;
    f1.u8(0x01);
    f1.u32(static_cast<std::uint32_t>(payload.size()));
    f1.u8(1);
    f1.u8('m');
    f1.u8(0);
    f1.bytes(payload.data(), payload.size());
    std::vector<zlink::message> parts;
    parts.push_back(f0.msg());
    parts.push_back(f1.msg());
    return parts;
}

} // namespace wire

#endif
