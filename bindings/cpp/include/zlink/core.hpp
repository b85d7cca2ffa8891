// zlink/core.hpp — RAII handles for the Core surface of zlink.h.
//
// Design notes
//  - Each handle is move-only and owns one C handle: context (ctx_new /
//    ctx_term), socket (socket / close), message (msg_init / msg_close),
//    completion (a completion record / completion_close), monitor, poller
//    and timer. handle() gives the raw C value for anything not wrapped.
//  - A failure throws core_exception_t with the result and errno. Where a
//    failure is an expected answer (a DONTWAIT send refused with
//    BACKPRESSURED, a receive with NO_DATA), a try_ overload returns a
//    std::error_code in zlink::result_category() instead of throwing.
//  - Nothing here waits, retries or counts on its own: blocking is the C
//    call's (its timeouts are the socket's options).
#ifndef ZLINK_CORE_HPP
#define ZLINK_CORE_HPP

#include <zlink/errors.hpp>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zlink {

enum class socket_type : int {
    pair = ZLINK_PAIR,
    pub = ZLINK_PUB,
    sub = ZLINK_SUB,
    dealer = ZLINK_DEALER,
    router = ZLINK_ROUTER,
    xpub = ZLINK_XPUB,
    xsub = ZLINK_XSUB,
    stream = ZLINK_STREAM,
};

enum class send_flags : int { none = ZLINK_SEND_FLAGS_NONE, dontwait = ZLINK_SEND_FLAGS_DONTWAIT };
enum class recv_flags : int { none = ZLINK_RECV_FLAGS_NONE, dontwait = ZLINK_RECV_FLAGS_DONTWAIT };

// A routing id (1..255 bytes), by value.
class routing_id {
public:
    routing_id() noexcept { std::memset(&rid_, 0, sizeof rid_); }
    routing_id(std::string_view bytes) : routing_id()
    {
        if (bytes.size() > sizeof rid_.data)
            throw std::invalid_argument("zlink::routing_id: more than 255 bytes");
        rid_.size = static_cast<std::uint8_t>(bytes.size());
        std::memcpy(rid_.data, bytes.data(), bytes.size());
    }
    routing_id(const char *bytes) : routing_id(std::string_view(bytes)) {}
    routing_id(const std::string &bytes) : routing_id(std::string_view(bytes)) {}
    explicit routing_id(const zlink_routing_id_t &raw) noexcept : rid_(raw) {}
    std::size_t size() const noexcept { return rid_.size; }
    bool empty() const noexcept { return rid_.size == 0; }
    std::string_view view() const noexcept
    {
        return std::string_view(reinterpret_cast<const char *>(rid_.data), rid_.size);
    }
    const zlink_routing_id_t *raw() const noexcept { return &rid_; }
    zlink_routing_id_t *raw() noexcept { return &rid_; }
    friend bool operator==(const routing_id &a, const routing_id &b) noexcept
    {
        return a.view() == b.view();
    }

private:
    zlink_routing_id_t rid_;
};

// One message part (zlink_msg_t), move-only.
class message {
public:
    message() { detail::core_check(zlink_msg_init(&msg_), "zlink_msg_init"); }
    explicit message(std::size_t size)
    {
        detail::core_check(zlink_msg_init_size(&msg_, size), "zlink_msg_init_size");
    }
    explicit message(std::span<const std::byte> bytes) : message(bytes.size())
    {
        if (!bytes.empty())
            std::memcpy(data(), bytes.data(), bytes.size());
    }
    explicit message(std::string_view text) : message(std::as_bytes(std::span(text))) {}
    message(message &&o) noexcept
    {
        zlink_msg_init(&msg_);
        zlink_msg_move(&msg_, &o.msg_);
    }
    message &operator=(message &&o) noexcept
    {
        if (this != &o)
            zlink_msg_move(&msg_, &o.msg_);
        return *this;
    }
    message(const message &) = delete;
    message &operator=(const message &) = delete;
    ~message() { zlink_msg_close(&msg_); }

    // Another part sharing this one's buffer (reference counted).
    message share()
    {
        message m;
        detail::core_check(zlink_msg_copy(&m.msg_, &msg_), "zlink_msg_copy");
        return m;
    }
    void *data() noexcept { return zlink_msg_data(&msg_); }
    std::size_t size() const noexcept { return zlink_msg_size(&msg_); }
    std::span<const std::byte> bytes() noexcept
    {
        return {static_cast<const std::byte *>(data()), size()};
    }
    std::string_view text() noexcept
    {
        return {static_cast<const char *>(data()), size()};
    }
    zlink_msg_t *handle() noexcept { return &msg_; }

private:
    zlink_msg_t msg_;
};

// Parts of a record. message is layout-identical to zlink_msg_t (one member),
// so a contiguous range of messages is passed to C as it is.
static_assert(sizeof(message) == sizeof(zlink_msg_t));

namespace detail {
inline zlink_msg_t *raw_parts(std::span<message> parts) noexcept
{
    return parts.empty() ? nullptr : parts.front().handle();
}
} // namespace detail

// What a receive returns: the parts and, per pattern, the routing id, the
// reply token (ROUTER) or the topic (SUB).
struct record {
    std::vector<message> parts;
    routing_id rid;
    zlink_reply_token_t token = 0;
    std::string topic;
};

// A submit's answer: ec (result_category) and, for a DONTWAIT send refused
// for room or an admitted request, the completion id.
struct submit_t {
    std::error_code ec;
    zlink_completion_id_t id = 0;
    explicit operator bool() const noexcept { return !ec; }
};

// One completion record (zlink_completion_t), closed by the destructor.
class completion {
public:
    completion() noexcept { clear(); }
    completion(completion &&o) noexcept : rec_(o.rec_) { o.clear(); }
    completion &operator=(completion &&o) noexcept
    {
        if (this != &o) {
            zlink_completion_close(&rec_);
            rec_ = o.rec_;
            o.clear();
        }
        return *this;
    }
    completion(const completion &) = delete;
    completion &operator=(const completion &) = delete;
    ~completion() { zlink_completion_close(&rec_); }

    zlink_completion_kind_t kind() const noexcept { return rec_.kind; }
    zlink_completion_id_t id() const noexcept { return rec_.completion_id; }
    void *user_context() const noexcept { return rec_.user_context; }
    routing_id peer() const noexcept { return routing_id(rec_.peer_rid); }
    int send_result() const noexcept { return rec_.send_result; }
    int send_terminal_errno() const noexcept { return rec_.send_terminal_errno; }
    int request_result() const noexcept { return rec_.request_result; }
    std::span<message> reply_parts() noexcept
    {
        return {reinterpret_cast<message *>(rec_.reply_parts), rec_.reply_part_count};
    }
    zlink_completion_t *handle() noexcept { return &rec_; }

private:
    void clear() noexcept
    {
        std::memset(&rec_, 0, sizeof rec_);
        rec_.struct_size = sizeof rec_;
    }
    zlink_completion_t rec_;
};

class context {
public:
    context()
    {
        check_library();
        ctx_ = zlink_ctx_new();
        if (ctx_ == nullptr)
            detail::core_throw_errno(ZLINK_CONFIG_INTERNAL, "zlink_ctx_new");
    }
    context(context &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)) {}
    context &operator=(context &&o) noexcept
    {
        if (this != &o) {
            term();
            ctx_ = std::exchange(o.ctx_, nullptr);
        }
        return *this;
    }
    context(const context &) = delete;
    context &operator=(const context &) = delete;
    // Terminates the context: waits until every socket of it is closed.
    ~context() { term(); }

    void set(int option, int value)
    {
        detail::core_check(zlink_ctx_set(ctx_, option, value), "zlink_ctx_set");
    }
    int get(int option) const
    {
        zlink_config_result_t r = ZLINK_CONFIG_OK;
        int v = zlink_ctx_get(ctx_, option, &r);
        detail::core_check(r, "zlink_ctx_get");
        return v;
    }
    // Blocking calls on this context's sockets return TERMINATED from now on.
    void shutdown() { detail::core_check(zlink_ctx_shutdown(ctx_), "zlink_ctx_shutdown"); }
    void term() noexcept
    {
        if (ctx_ != nullptr)
            zlink_ctx_term(std::exchange(ctx_, nullptr));
    }
    void *handle() const noexcept { return ctx_; }

private:
    void *ctx_ = nullptr;
};

class socket {
    explicit socket(void *raw) noexcept : s_(raw) {}

public:
    socket(context &ctx, socket_type type)
    {
        s_ = zlink_socket(ctx.handle(), static_cast<int>(type));
        if (s_ == nullptr)
            detail::core_throw_errno(ZLINK_CONFIG_INVALID_ARGUMENT, "zlink_socket");
    }
    socket(socket &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    socket &operator=(socket &&o) noexcept
    {
        if (this != &o) {
            if (s_ != nullptr)
                zlink_close(s_);
            s_ = std::exchange(o.s_, nullptr);
        }
        return *this;
    }
    socket(const socket &) = delete;
    socket &operator=(const socket &) = delete;
    ~socket()
    {
        if (s_ != nullptr)
            zlink_close(s_);
    }
    // Closes now and reports the close result (BUSY while another call is in).
    void close()
    {
        int r = zlink_close(s_);
        if (r == 0)
            s_ = nullptr;
        detail::core_check(r, "zlink_close");
    }
    void *handle() const noexcept { return s_; }
    // A raw handle: adopt takes ownership (the destructor closes it),
    // release gives it up without closing. A borrow is adopt + release.
    static socket adopt(void *raw) noexcept { return socket(raw); }
    void *release() noexcept { return std::exchange(s_, nullptr); }

    // Options: int options, uint64 options (HWMs, AFFINITY), strings.
    void set_option(int option, int value)
    {
        detail::core_check(zlink_setsockopt(s_, option, &value, sizeof value), "zlink_setsockopt");
    }
    void set_option_u64(int option, std::uint64_t value)
    {
        detail::core_check(zlink_setsockopt(s_, option, &value, sizeof value), "zlink_setsockopt");
    }
    void set_option_string(int option, std::string_view value)
    {
        detail::core_check(zlink_setsockopt(s_, option, value.data(), value.size()),
                           "zlink_setsockopt");
    }
    int get_option(int option) const
    {
        int v = 0;
        std::size_t size = sizeof v;
        detail::core_check(zlink_getsockopt(s_, option, &v, &size), "zlink_getsockopt");
        return v;
    }
    std::uint64_t get_option_u64(int option) const
    {
        std::uint64_t v = 0;
        std::size_t size = sizeof v;
        detail::core_check(zlink_getsockopt(s_, option, &v, &size), "zlink_getsockopt");
        return v;
    }
    std::string get_option_string(int option) const
    {
        char buf[1024];
        std::size_t size = sizeof buf;
        detail::core_check(zlink_getsockopt(s_, option, buf, &size), "zlink_getsockopt");
        std::string s(buf, size);
        while (!s.empty() && s.back() == '\0')
            s.pop_back();
        return s;
    }
    std::string last_endpoint() const { return get_option_string(ZLINK_LAST_ENDPOINT); }
    void set_routing_id(std::string_view id)
    {
        detail::core_check(zlink_set_routing_id(s_, id.data(), id.size()), "zlink_set_routing_id");
    }

    void bind(const std::string &endpoint)
    {
        detail::core_check(zlink_bind(s_, detail::core_text(endpoint)), "zlink_bind");
    }
    void connect(const std::string &endpoint)
    {
        detail::core_check(zlink_connect(s_, detail::core_text(endpoint)), "zlink_connect");
    }
    void unbind(const std::string &endpoint)
    {
        detail::core_check(zlink_unbind(s_, detail::core_text(endpoint)), "zlink_unbind");
    }
    void disconnect(const std::string &endpoint)
    {
        detail::core_check(zlink_disconnect(s_, detail::core_text(endpoint)), "zlink_disconnect");
    }
    void disconnect(const routing_id &rid)
    {
        detail::core_check(zlink_disconnect_rid(s_, rid.raw()), "zlink_disconnect_rid");
    }

    // Sends (PAIR, DEALER). The parts are consumed whatever the answer.
    submit_t try_send(std::span<message> parts, send_flags flags = send_flags::dontwait,
                      void *user = nullptr)
    {
        submit_t out;
        int r = zlink_send(s_, detail::raw_parts(parts), parts.size(),
                           static_cast<zlink_send_flags_t>(flags), user, &out.id);
        out.ec = make_result_code(r);
        return out;
    }
    void send(std::span<message> parts, send_flags flags = send_flags::none)
    {
        detail::core_check(try_send(parts, flags).ec.value(), "zlink_send");
    }
    void send(std::string_view text, send_flags flags = send_flags::none)
    {
        message m(text);
        send(std::span(&m, 1), flags);
    }
    // ROUTER, and STREAM with one part.
    submit_t try_send_to(const routing_id &rid, std::span<message> parts,
                         send_flags flags = send_flags::dontwait, void *user = nullptr)
    {
        submit_t out;
        int r = zlink_send_rid(s_, rid.raw(), detail::raw_parts(parts), parts.size(),
                               static_cast<zlink_send_flags_t>(flags), user, &out.id);
        out.ec = make_result_code(r);
        return out;
    }
    void send_to(const routing_id &rid, std::span<message> parts,
                 send_flags flags = send_flags::none)
    {
        detail::core_check(try_send_to(rid, parts, flags).ec.value(), "zlink_send_rid");
    }
    // PUB: topic first.
    std::error_code try_publish(std::string_view topic, std::span<message> parts,
                                send_flags flags = send_flags::dontwait)
    {
        std::string t(topic);
        if (t.find('\0') != std::string::npos) /* C would send a shorter topic; NULL means another */
            return make_result_code(ZLINK_SUBMIT_INVALID_ARGUMENT);
        return make_result_code(zlink_publish(s_, t.c_str(), detail::raw_parts(parts),
                                              parts.size(), static_cast<zlink_send_flags_t>(flags)));
    }
    void publish(std::string_view topic, std::span<message> parts,
                 send_flags flags = send_flags::none)
    {
        detail::core_check(try_publish(topic, parts, flags).value(), "zlink_publish");
    }

    // Requests (DEALER: rid none; ROUTER: the target). timeout 0 = the
    // socket's REQUEST_TIMEOUT option. An admitted request's id comes back.
    submit_t try_request(const routing_id *rid, std::span<message> parts,
                         std::chrono::milliseconds timeout = {},
                         send_flags flags = send_flags::dontwait, void *user = nullptr)
    {
        submit_t out;
        int r = zlink_request(s_, rid != nullptr ? rid->raw() : nullptr, detail::raw_parts(parts),
                              parts.size(), static_cast<zlink_send_flags_t>(flags),
                              static_cast<std::uint32_t>(timeout.count()), user, &out.id);
        out.ec = make_result_code(r);
        return out;
    }
    zlink_completion_id_t request(const routing_id *rid, std::span<message> parts,
                                  std::chrono::milliseconds timeout = {},
                                  send_flags flags = send_flags::none, void *user = nullptr)
    {
        submit_t s = try_request(rid, parts, timeout, flags, user);
        detail::core_check(s.ec.value(), "zlink_request");
        return s.id;
    }
    void reply(const routing_id &src, zlink_reply_token_t token, std::span<message> parts)
    {
        detail::core_check(zlink_reply(s_, src.raw(), token, detail::raw_parts(parts),
                                       parts.size()),
                           "zlink_reply");
    }
    void reply_error(const routing_id &src, zlink_reply_token_t token, int error,
                     std::span<message> parts = {})
    {
        detail::core_check(zlink_reply_error(s_, src.raw(), token, error,
                                             detail::raw_parts(parts), parts.size()),
                           "zlink_reply_error");
    }
    submit_t try_reply(const routing_id &src, zlink_reply_token_t token, int error,
                       std::span<message> parts, send_flags flags = send_flags::dontwait,
                       void *user = nullptr)
    {
        submit_t out;
        int r = zlink_reply_submit(s_, src.raw(), token, error, detail::raw_parts(parts),
                                   parts.size(), static_cast<zlink_send_flags_t>(flags), user,
                                   &out.id);
        out.ec = make_result_code(r);
        return out;
    }

    // Receives. try_ returns NO_DATA (and the other receive results) as an
    // error_code; the others throw. cap bounds the parts of one record.
    std::error_code try_recv(record &out, recv_flags flags = recv_flags::dontwait,
                             std::size_t cap = 16)
    {
        return recv_into(out, flags, cap, kind_plain);
    }
    record recv(recv_flags flags = recv_flags::none, std::size_t cap = 16)
    {
        record r;
        detail::core_check(try_recv(r, flags, cap).value(), "zlink_recv");
        return r;
    }
    std::error_code try_router_recv(record &out, recv_flags flags = recv_flags::dontwait,
                                    std::size_t cap = 16)
    {
        return recv_into(out, flags, cap, kind_router);
    }
    record router_recv(recv_flags flags = recv_flags::none, std::size_t cap = 16)
    {
        record r;
        detail::core_check(try_router_recv(r, flags, cap).value(), "zlink_router_recv");
        return r;
    }
    std::error_code try_subscribe_recv(record &out, recv_flags flags = recv_flags::dontwait,
                                       std::size_t cap = 16)
    {
        return recv_into(out, flags, cap, kind_sub);
    }
    record subscribe_recv(recv_flags flags = recv_flags::none, std::size_t cap = 16)
    {
        record r;
        detail::core_check(try_subscribe_recv(r, flags, cap).value(), "zlink_subscribe");
        return r;
    }
    // STREAM in PACKET mode: parts[0] the header, parts[1] the body.
    std::error_code try_stream_recv_packet(record &out, recv_flags flags = recv_flags::dontwait)
    {
        out.parts.clear();
        out.parts.emplace_back();
        out.parts.emplace_back();
        const zlink_routing_id_t *rid = nullptr;
        int r = zlink_stream_recv_packet(s_, &rid, out.parts[0].handle(), out.parts[1].handle(),
                                         static_cast<zlink_recv_flags_t>(flags));
        if (r == 0 && rid != nullptr)
            out.rid = routing_id(*rid);
        if (r != 0)
            out.parts.clear();
        return make_result_code(r);
    }

    std::error_code try_completion_recv(completion &out, recv_flags flags = recv_flags::dontwait)
    {
        out = completion();
        return make_result_code(zlink_completion_recv(s_, out.handle(),
                                                      static_cast<zlink_recv_flags_t>(flags)));
    }
    completion completion_recv(recv_flags flags = recv_flags::none)
    {
        completion c;
        detail::core_check(try_completion_recv(c, flags).value(), "zlink_completion_recv");
        return c;
    }

    void subscribe(const std::string &topic)
    {
        detail::core_check(zlink_set_subscription(s_, detail::core_text(topic)), "zlink_set_subscription");
    }
    void unsubscribe(const std::string &topic)
    {
        detail::core_check(zlink_unset_subscription(s_, detail::core_text(topic)),
                           "zlink_unset_subscription");
    }
    void set_receive_flow_state(zlink_receive_flow_state_t state)
    {
        detail::core_check(zlink_socket_set_receive_flow_state(s_, state),
                           "zlink_socket_set_receive_flow_state");
    }
    std::vector<zlink_router_route_t> routes_snapshot()
    {
        std::vector<zlink_router_route_t> rows(8);
        for (;;) {
            std::size_t count = 0;
            int r = zlink_router_routes_snapshot(s_, rows.data(), rows.size(), &count);
            if (r == ZLINK_CONFIG_BUFFER_TOO_SMALL) {
                rows.resize(count);
                continue;
            }
            detail::core_check(r, "zlink_router_routes_snapshot");
            rows.resize(count);
            return rows;
        }
    }

private:
    enum recv_kind { kind_plain, kind_router, kind_sub };

    std::error_code recv_into(record &out, recv_flags flags, std::size_t cap, recv_kind kind)
    {
        std::vector<zlink_msg_t> raw(cap);
        std::size_t count = 0;
        const zlink_routing_id_t *rid = nullptr;
        zlink_reply_token_t token = 0;
        char topic[256];
        std::size_t tlen = 0;
        auto f = static_cast<zlink_recv_flags_t>(flags);
        int r;
        switch (kind) {
        case kind_router:
            r = zlink_router_recv(s_, &rid, &token, raw.data(), cap, &count, f);
            break;
        case kind_sub:
            r = zlink_subscribe(s_, &rid, topic, sizeof topic, &tlen, raw.data(), cap, &count, f);
            break;
        default:
            r = zlink_recv(s_, &rid, raw.data(), cap, &count, f);
            break;
        }
        out.parts.clear();
        if (r != 0)
            return make_result_code(r);
        out.parts.reserve(count);
        for (std::size_t i = 0; i < count; i++) {
            out.parts.emplace_back();
            zlink_msg_move(out.parts.back().handle(), &raw[i]);
            zlink_msg_close(&raw[i]);
        }
        out.rid = rid != nullptr ? routing_id(*rid) : routing_id();
        out.token = token;
        out.topic.assign(topic, kind == kind_sub ? tlen : 0);
        return {};
    }

    void *s_ = nullptr;
};

// A socket monitor (zlink_socket_monitor_open), closed by the destructor.
class monitor {
public:
    monitor(socket &s, std::uint32_t events, std::uint64_t hwm_bytes = 0)
    {
        zlink_monitor_config_t cfg{};
        cfg.events = events;
        cfg.monitor_hwm_bytes = hwm_bytes;
        m_ = zlink_socket_monitor_open(s.handle(), &cfg);
        if (m_ == nullptr)
            detail::core_throw_errno(ZLINK_CONFIG_INVALID_ARGUMENT, "zlink_socket_monitor_open");
    }
    monitor(monitor &&o) noexcept : m_(std::exchange(o.m_, nullptr)) {}
    monitor(const monitor &) = delete;
    monitor &operator=(const monitor &) = delete;
    monitor &operator=(monitor &&) = delete;
    ~monitor()
    {
        if (m_ != nullptr)
            zlink_monitor_close(&m_);
    }
    std::error_code try_recv(zlink_monitor_event_t &ev, recv_flags flags = recv_flags::dontwait)
    {
        return make_result_code(zlink_socket_monitor_recv(m_, &ev,
                                                          static_cast<zlink_recv_flags_t>(flags)));
    }
    zlink_monitor_status_t status()
    {
        zlink_monitor_status_t st{};
        detail::core_check(zlink_monitor_status(m_, &st), "zlink_monitor_status");
        return st;
    }
    void *handle() const noexcept { return m_; }

private:
    void *m_ = nullptr;
};

// A timer (zlink_timer_new): counts fires, runs no code.
class timer {
    explicit timer(void *raw) noexcept : t_(raw) {}

public:
    timer()
    {
        check_library();
        t_ = zlink_timer_new();
        if (t_ == nullptr)
            detail::core_throw_errno(ZLINK_CONFIG_INTERNAL, "zlink_timer_new");
    }
    timer(timer &&o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
    timer(const timer &) = delete;
    timer &operator=(const timer &) = delete;
    timer &operator=(timer &&) = delete;
    ~timer()
    {
        if (t_ != nullptr)
            zlink_timer_destroy(&t_);
    }
    void start(std::chrono::nanoseconds interval, std::uint64_t repeat = 0)
    {
        detail::core_check(zlink_timer_start(t_, static_cast<std::uint64_t>(interval.count()),
                                             repeat),
                           "zlink_timer_start");
    }
    void stop() { detail::core_check(zlink_timer_stop(t_), "zlink_timer_stop"); }
    // The fires since the last receive (NO_DATA when none, with DONTWAIT).
    std::error_code try_recv(std::uint64_t &count, recv_flags flags = recv_flags::dontwait)
    {
        return make_result_code(zlink_timer_recv(t_, &count, static_cast<zlink_recv_flags_t>(flags)));
    }
    std::uint64_t recv(recv_flags flags = recv_flags::none)
    {
        std::uint64_t n = 0;
        detail::core_check(try_recv(n, flags).value(), "zlink_timer_recv");
        return n;
    }
    // Destroys now and reports the result (BUSY while a poller holds it).
    void destroy()
    {
        detail::core_check(zlink_timer_destroy(&t_), "zlink_timer_destroy");
    }
    void *handle() const noexcept { return t_; }
    // A raw handle: adopt takes ownership (the destructor destroys it),
    // release gives it up without destroying. A borrow is adopt + release.
    static timer adopt(void *raw) noexcept { return timer(raw); }
    void *release() noexcept { return std::exchange(t_, nullptr); }

private:
    void *t_ = nullptr;
};

using poller_event = zlink_poller_event_t;

// A poller of sockets, monitors, fds and timers (level-triggered).
class poller {
    explicit poller(void *raw) noexcept : p_(raw) {}

public:
    poller()
    {
        check_library();
        p_ = zlink_poller_new();
        if (p_ == nullptr)
            detail::core_throw_errno(ZLINK_CONFIG_INTERNAL, "zlink_poller_new");
    }
    poller(poller &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    poller(const poller &) = delete;
    poller &operator=(const poller &) = delete;
    poller &operator=(poller &&) = delete;
    ~poller()
    {
        if (p_ != nullptr)
            zlink_poller_destroy(&p_);
    }
    void add(socket &s, short events, void *user = nullptr)
    {
        detail::core_check(zlink_poller_add(p_, s.handle(), user, events), "zlink_poller_add");
    }
    void add(monitor &m, short events, void *user = nullptr)
    {
        detail::core_check(zlink_poller_add(p_, m.handle(), user, events), "zlink_poller_add");
    }
    void modify(socket &s, short events)
    {
        detail::core_check(zlink_poller_modify(p_, s.handle(), events), "zlink_poller_modify");
    }
    void remove(socket &s)
    {
        detail::core_check(zlink_poller_remove(p_, s.handle()), "zlink_poller_remove");
    }
    void add_fd(zlink_fd_t fd, short events, void *user = nullptr)
    {
        detail::core_check(zlink_poller_add_fd(p_, fd, user, events), "zlink_poller_add_fd");
    }
    void modify_fd(zlink_fd_t fd, short events)
    {
        detail::core_check(zlink_poller_modify_fd(p_, fd, events), "zlink_poller_modify_fd");
    }
    void remove_fd(zlink_fd_t fd)
    {
        detail::core_check(zlink_poller_remove_fd(p_, fd), "zlink_poller_remove_fd");
    }
    void add(timer &t, void *user = nullptr)
    {
        detail::core_check(zlink_poller_add_timer(p_, t.handle(), user), "zlink_poller_add_timer");
    }
    void remove(timer &t)
    {
        detail::core_check(zlink_poller_remove_timer(p_, t.handle()), "zlink_poller_remove_timer");
    }
    void modify(timer &t, short events)
    {
        detail::core_check(zlink_poller_modify(p_, t.handle(), events), "zlink_poller_modify");
    }
    // The same calls on a raw source value (a socket, monitor or timer
    // handle, or anything else: the C runtime validates it).
    void add(void *source, short events, void *user = nullptr)
    {
        detail::core_check(zlink_poller_add(p_, source, user, events), "zlink_poller_add");
    }
    void modify(void *source, short events)
    {
        detail::core_check(zlink_poller_modify(p_, source, events), "zlink_poller_modify");
    }
    void remove(void *source)
    {
        detail::core_check(zlink_poller_remove(p_, source), "zlink_poller_remove");
    }
    void add_timer(void *raw_timer, void *user = nullptr)
    {
        detail::core_check(zlink_poller_add_timer(p_, raw_timer, user), "zlink_poller_add_timer");
    }
    void remove_timer(void *raw_timer)
    {
        detail::core_check(zlink_poller_remove_timer(p_, raw_timer), "zlink_poller_remove_timer");
    }
    int size() const
    {
        zlink_config_result_t r = ZLINK_CONFIG_OK;
        int n = zlink_poller_size(p_, &r);
        detail::core_check(n < 0 ? r : 0, "zlink_poller_size");
        return n;
    }
    // Waits up to timeout (negative: no limit); the events written (0 on timeout).
    int wait(std::span<poller_event> events, std::chrono::milliseconds timeout)
    {
        zlink_config_result_t r = ZLINK_CONFIG_OK;
        int n = zlink_poller_wait(p_, events.data(), static_cast<int>(events.size()),
                                  static_cast<long>(timeout.count()), &r);
        if (n < 0)
            throw core_exception_t(r, zlink_errno(), "zlink_poller_wait");
        return n;
    }
    // The raw form: any array and capacity (NULL or <= 0 is INVALID_ARGUMENT).
    int wait(poller_event *events, int capacity, std::chrono::milliseconds timeout)
    {
        zlink_config_result_t r = ZLINK_CONFIG_OK;
        int n = zlink_poller_wait(p_, events, capacity, static_cast<long>(timeout.count()), &r);
        if (n < 0)
            throw core_exception_t(r, zlink_errno(), "zlink_poller_wait");
        return n;
    }
    std::vector<poller_event> wait(std::chrono::milliseconds timeout, int capacity = 16)
    {
        std::vector<poller_event> ev(static_cast<std::size_t>(capacity));
        ev.resize(static_cast<std::size_t>(wait(ev, timeout)));
        return ev;
    }
    // The C answers, not thrown: the count or -1; *error_out (when given)
    // the result, last_errno() the errno.
    int try_size(zlink_config_result_t *error_out = nullptr) const noexcept
    {
        return zlink_poller_size(p_, error_out);
    }
    int try_wait(poller_event *events, int capacity, std::chrono::milliseconds timeout,
                 zlink_config_result_t *error_out = nullptr) noexcept
    {
        return zlink_poller_wait(p_, events, capacity, static_cast<long>(timeout.count()),
                                 error_out);
    }
    void destroy() { detail::core_check(zlink_poller_destroy(&p_), "zlink_poller_destroy"); }
    void *handle() const noexcept { return p_; }
    // A raw handle: adopt takes ownership (the destructor destroys it),
    // release gives it up without destroying. A borrow is adopt + release.
    static poller adopt(void *raw) noexcept { return poller(raw); }
    void *release() noexcept { return std::exchange(p_, nullptr); }

private:
    void *p_ = nullptr;
};

// The errno of this thread's last failed ZLink call (zlink_errno).
inline int last_errno() noexcept { return zlink_errno(); }

// zlink_poll's C answer, not thrown: the count or -1; *error_out (when
// given) the result, last_errno() the errno.
inline int try_poll(zlink_pollitem_t *items, int n_items, std::chrono::milliseconds timeout,
                    zlink_config_result_t *error_out = nullptr) noexcept
{
    return zlink_poll(items, n_items, static_cast<long>(timeout.count()), error_out);
}

// zlink_poll over items[0..n) as given (NULL or n < 0 is INVALID_ARGUMENT).
inline int poll(zlink_pollitem_t *items, int n_items, std::chrono::milliseconds timeout)
{
    check_library();
    zlink_config_result_t r = ZLINK_CONFIG_OK;
    int n = zlink_poll(items, n_items, static_cast<long>(timeout.count()), &r);
    if (n < 0)
        throw core_exception_t(r, zlink_errno(), "zlink_poll");
    return n;
}

// zlink_poll over items; the count of items with revents.
inline int poll(std::span<zlink_pollitem_t> items, std::chrono::milliseconds timeout)
{
    zlink_config_result_t r = ZLINK_CONFIG_OK;
    int n = zlink_poll(items.data(), static_cast<int>(items.size()),
                       static_cast<long>(timeout.count()), &r);
    if (n < 0)
        throw core_exception_t(r, zlink_errno(), "zlink_poll");
    return n;
}

} // namespace zlink

#endif // ZLINK_CORE_HPP
