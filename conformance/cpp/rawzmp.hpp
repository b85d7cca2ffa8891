// rawzmp.hpp — a test-only raw ZMP peer of the C++ runner: a plain POSIX
// TCP socket that speaks ZLink's wire protocol (doc/protocol.md) by hand,
// so a case can see the frames a host sends (HELLO, READY, FLOWSTATE) and
// send what a framework peer would not (a record while told PAUSED). No
// ZLink call is made here; the C runner's counterpart is
// core/tests/zltest_rawzmp.h.
//
// Frame layout: 5A 01 flags kind size (u32 BE), then for kinds 1..3 a
// sequence (u64 BE), then the body. One thread uses a peer.
#ifndef CONF_CPP_RAWZMP_HPP
#define CONF_CPP_RAWZMP_HPP

#include "conf.hpp"
#include "wire.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rawzmp {

constexpr std::uint8_t f_more = 0x01;
constexpr std::uint8_t f_control = 0x02;

// A frame the ZLink side sent (its body copied).
struct frame_t {
    std::uint8_t flags = 0, kind = 0;
    std::uint64_t seq = 0;
    std::string body;
    std::size_t total = 0; // header (+ sequence) + body
};

// Frame builders (kind 0), appended to w.
inline void frame(wire::writer &w, std::uint8_t flags, std::string_view body)
{
    w.u8(0x5A);
    w.u8(0x01);
    w.u8(flags);
    w.u8(0);
    w.u32(static_cast<std::uint32_t>(body.size()));
    w.bytes(body.data(), body.size());
}

// HELLO: 01 | type u16 | rid length | rid.
inline void hello(wire::writer &w, int type, const std::string &rid)
{
    wire::writer b;
    b.u8(0x01);
    b.u16(static_cast<std::uint16_t>(type));
    b.l8(rid);
    frame(w, f_control, b.b);
}

// READY of a DEALER: Socket-Type, Routing-Id, Zlink-Lane-Count 1,
// Zlink-Lane 0, Zlink-Weight 100.
inline void ready_dealer(wire::writer &w, const std::string &rid)
{
    wire::writer b;
    b.u8(0x04);
    auto prop = [&b](const std::string &name, std::string_view v) {
        b.l8(name);
        b.u32(static_cast<std::uint32_t>(v.size()));
        b.bytes(v.data(), v.size());
    };
    prop("Socket-Type", "DEALER");
    prop("Routing-Id", rid);
    prop("Zlink-Lane-Count", std::string_view("\x01", 1));
    prop("Zlink-Lane", std::string_view("\x00", 1));
    prop("Zlink-Weight", std::string_view("\x00\x00\x00\x64", 4));
    frame(w, f_control, b.b);
}

// A DATA frame with text (MORE if more).
inline void data(wire::writer &w, bool more, std::string_view text)
{
    frame(w, more ? f_more : 0x00, text);
}

// The state byte of a FLOWSTATE frame, or -1 for another frame.
inline int flowstate_of(const frame_t &f)
{
    if (f.flags != f_control || f.body.size() != 19 || f.body.compare(0, 9, "FLOWSTATE") != 0)
        return -1;
    return static_cast<std::uint8_t>(f.body[10]);
}

class peer {
public:
    // Connects to "tcp://127.0.0.1:PORT".
    explicit peer(const std::string &ep)
    {
        const std::string pre = "tcp://127.0.0.1:";
        CF_CHECK(ep.rfind(pre, 0) == 0);
        int port = std::stoi(ep.substr(pre.size()));
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_port = htons(static_cast<std::uint16_t>(port));
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CF_CHECK(fd_ >= 0);
        if (::connect(fd_, reinterpret_cast<sockaddr *>(&sin), sizeof sin) != 0)
            CF_FAIL("raw connect to " + ep + ": " + std::strerror(errno));
        int one = 1;
        (void)setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    peer(const peer &) = delete;
    peer &operator=(const peer &) = delete;
    ~peer() { close(); }

    void close()
    {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = -1;
    }

    // Sends all of w; the connection must take it.
    void send(const wire::writer &w)
    {
        const char *p = w.b.data();
        std::size_t n = w.b.size();
        while (n > 0) {
            ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                CF_FAIL(std::string("raw send: ") + std::strerror(errno));
            p += k;
            n -= static_cast<std::size_t>(k);
        }
    }

    // Waits up to ms for input and appends it; false on timeout.
    bool fill(int ms)
    {
        if (closed_)
            return true;
        pollfd p{fd_, POLLIN, 0};
        int rc;
        do {
            rc = ::poll(&p, 1, ms);
        } while (rc < 0 && errno == EINTR);
        CF_CHECK(rc >= 0);
        if (rc == 0)
            return false;
        char buf[65536];
        ssize_t k = ::recv(fd_, buf, sizeof buf, 0);
        if (k > 0)
            in_.append(buf, static_cast<std::size_t>(k));
        else if (k == 0 || errno == ECONNRESET || errno == EPIPE)
            closed_ = true;
        else if (errno != EINTR && errno != EAGAIN)
            CF_FAIL(std::string("raw recv: ") + std::strerror(errno));
        return true;
    }

    // The next whole frame received (not consumed); checks magic and version.
    bool peek(frame_t &f) const
    {
        if (in_.size() - at_ < 8)
            return false;
        const auto *h = reinterpret_cast<const std::uint8_t *>(in_.data() + at_);
        if (h[0] != 0x5A || h[1] != 0x01)
            CF_FAIL("raw peer: bad frame header " + std::to_string(h[0]) + " " +
                    std::to_string(h[1]));
        std::uint32_t size = static_cast<std::uint32_t>(h[4]) << 24 |
                             static_cast<std::uint32_t>(h[5]) << 16 |
                             static_cast<std::uint32_t>(h[6]) << 8 | h[7];
        std::size_t hl = (h[3] >= 1 && h[3] <= 3) ? 16 : 8;
        if (in_.size() - at_ < hl + size)
            return false;
        f.flags = h[2];
        f.kind = h[3];
        f.seq = 0;
        if (hl == 16)
            for (int i = 0; i < 8; i++)
                f.seq = f.seq << 8 | h[8 + i];
        f.body.assign(in_.data() + at_ + hl, size);
        f.total = hl + size;
        return true;
    }
    void consume(const frame_t &f)
    {
        at_ += f.total;
        if (at_ > (1u << 20)) {
            in_.erase(0, at_);
            at_ = 0;
        }
    }

    // The next frame (waits up to 5 s, scaled); consumed.
    frame_t next()
    {
        frame_t f;
        std::int64_t end = conf::now_ms() + conf::ms(5000);
        while (!peek(f)) {
            if (closed_)
                CF_FAIL("raw peer: the ZLink side closed the connection");
            int left = static_cast<int>(end - conf::now_ms());
            if (left <= 0 || !fill(left))
                CF_FAIL("raw peer: no frame from the ZLink side within " +
                        std::to_string(conf::ms(5000)) + " ms");
        }
        consume(f);
        return f;
    }

    bool closed() const noexcept { return closed_; }

private:
    int fd_ = -1;
    std::string in_;
    std::size_t at_ = 0;
    bool closed_ = false;
};

} // namespace rawzmp

#endif
