// pl_completion.cc — PL-09, PL-10, PL-16..20 (POLLCOMPLETION and the
// REQUEST / WRITABLE records behind it) through zlink::poller and the
// socket's request, reply, try_send and try_completion_recv
// (conformance/c/pl_completion.c and pl_registration.c are the reference).
//
// Records are made without sleeping: a REQUEST record is a DEALER's request
// answered by its ROUTER (on inproc the reply is in the DEALER's pipe when
// reply returns); a WRITABLE record is a refused DONTWAIT send on a full
// inproc PAIR whose peer then receives.
#include "cases.hpp"
#include "pl.hpp"

#include <cstring>

using namespace pl;
using st = zlink::socket_type;

namespace {

struct dr_t {
    zlink::socket r, d;
    dr_t(zlink::context &ctx, const std::string &tr) : r(ctx, st::router), d(ctx, st::dealer)
    {
        std::string ep = bind_any(r, tr);
        connect_dealer(d, ep, "D");
    }
    // d (routing id rid) connects to r at ep and says hello, both ways up.
    void connect_dealer(zlink::socket &dd, const std::string &ep, const std::string &rid)
    {
        dd.set_routing_id(rid);
        dd.connect(ep);
        dd.send("hello");
        zlink::record rec = r.router_recv();
        CF_EQ(std::string(rec.rid.view()), rid);
        CF_EQ(rec.parts.size(), std::size_t{1});
        CF_EQ(std::string(rec.parts[0].text()), std::string("hello"));
    }
};

zlink_completion_id_t request(zlink::socket &d, std::string_view text, void *uctx)
{
    zlink::message m(text);
    zlink_completion_id_t id =
        d.request(nullptr, std::span(&m, 1), {}, zlink::send_flags::none, uctx);
    CF_CHECK(id != 0);
    return id;
}

zlink::record take_request(zlink::socket &r, std::string_view text)
{
    zlink::record rec = r.router_recv();
    CF_CHECK(rec.token != 0 && !rec.rid.empty());
    CF_EQ(rec.parts.size(), std::size_t{1});
    CF_EQ(std::string(rec.parts[0].text()), std::string(text));
    return rec;
}

void reply(zlink::socket &r, const zlink::record &req, std::string_view text)
{
    zlink::message m(text);
    r.reply(req.rid, req.token, std::span(&m, 1));
}

zlink_completion_id_t request_answered(zlink::socket &d, zlink::socket &r, std::string_view text,
                                       void *uctx)
{
    zlink_completion_id_t id = request(d, text, uctx);
    zlink::record req = take_request(r, text);
    reply(r, req, text);
    return id;
}

zlink::submit_t send_dontwait(zlink::socket &s, std::string_view text, void *uctx)
{
    zlink::message m(text);
    return s.try_send(std::span(&m, 1), zlink::send_flags::dontwait, uctx);
}

// A PAIR a linked to b on inproc whose pipe is full (SNDHWM 100 bytes, one
// record "fills the queue"), and a DONTWAIT send on a refused: its token.
struct full_pair_t {
    zlink::socket a, b;
    zlink_completion_id_t token = 0;
    full_pair_t(zlink::context &ctx, void *uctx) : a(ctx, st::pair), b(ctx, st::pair)
    {
        a.set_option_u64(ZLINK_SNDHWM, 100);
        a.connect(bind_any(b, "inproc"));
        CF_CHECK(!send_dontwait(a, "fills the queue", nullptr).ec);
        zlink::submit_t s = send_dontwait(a, "refused", uctx);
        CF_CHECK(s.ec == zlink::make_result_code(ZLINK_SUBMIT_BACKPRESSURED));
        CF_CHECK(s.id != 0);
        token = s.id;
    }
};

#define EXPECT_RECORD(s, kind, id, uctx, reply)                                                  \
    expect_record(__FILE__, __LINE__, (s), (kind), (id), (uctx), (reply))
void expect_record(const char *file, int line, zlink::socket &s, zlink_completion_kind_t kind,
                   zlink_completion_id_t id, void *uctx, const char *reply_text)
{
    zlink::completion c;
    std::error_code ec = s.try_completion_recv(c);
    if (ec)
        conf::fail(file, line, "completion_recv: " + ec.message() + "; expected record " +
                                   std::to_string(id));
    if (c.kind() != kind || c.id() != id || c.user_context() != uctx)
        conf::fail(file, line,
                   "record of kind " + std::to_string(c.kind()) + ", id " + std::to_string(c.id()) +
                       "; expected kind " + std::to_string(kind) + ", id " + std::to_string(id) +
                       (c.user_context() != uctx ? " (other user context)" : ""));
    if (kind == ZLINK_COMPLETION_REQUEST) {
        auto parts = c.reply_parts();
        if (c.request_result() != ZLINK_REQUEST_OK || parts.size() != 1 ||
            parts[0].text() != std::string_view(reply_text))
            conf::fail(file, line,
                       "REQUEST record " + std::to_string(id) + ": result " +
                           std::string(zlink::result_name(c.request_result())) + ", " +
                           std::to_string(parts.size()) + " parts; expected OK \"" + reply_text +
                           "\"");
    } else if (c.send_result() != ZLINK_SEND_ADMITTED) {
        conf::fail(file, line, "WRITABLE record " + std::to_string(id) + ": send_result " +
                                   std::string(zlink::result_name(c.send_result())));
    }
}

#define EXPECT_NO_RECORD(s) expect_no_record(__FILE__, __LINE__, (s))
void expect_no_record(const char *file, int line, zlink::socket &s)
{
    zlink::completion c;
    std::error_code ec = s.try_completion_recv(c);
    if (!ec)
        conf::fail(file, line, "expected no record, got kind " + std::to_string(c.kind()) +
                                   " id " + std::to_string(c.id()));
    if (ec != zlink::make_result_code(ZLINK_RECV_NO_DATA))
        conf::fail(file, line, "expected NO_DATA, got " + ec.message());
}

void expect_no_data(zlink::socket &s)
{
    zlink::record rec;
    CF_CHECK(s.try_recv(rec) == zlink::make_result_code(ZLINK_RECV_NO_DATA));
}

zlink_pollitem_t item(void *sock, int fd, short events)
{
    zlink_pollitem_t it{};
    it.socket = sock;
    it.fd = fd;
    it.events = events;
    return it;
}

void completion_bit_on_completion_sockets()
{
    zlink::context ctx;
    const st types[] = {st::pair, st::dealer, st::router, st::stream};
    zlink::poller p;
    std::vector<zlink::socket> socks;
    socks.reserve(4);
    for (st type : types) {
        socks.emplace_back(ctx, type);
        zlink::socket &s = socks.back();
        p.add(s, ZLINK_POLLCOMPLETION);
        p.modify(s, ZLINK_POLLIN);
        p.modify(s, ZLINK_POLLIN | ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
        p.remove(s);
        p.add(s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION);
    }
    zlink::poller_event ev[8];
    CF_EQ(wait_ok(p, ev, 8, 0), 0);
    zlink::socket pub(ctx, st::pub), sub(ctx, st::sub);
    zlink::timer t;
    pipe_t fds;
    PL_FAILS(p.add(pub, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    PL_FAILS(p.add(sub, ZLINK_POLLIN | ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_ARGUMENT,
             EINVAL);
    PL_FAILS(p.add_fd(fds.r, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    // The generic add of a timer (zlink_poller_add with its handle).
    PL_FAILS(p.add(t.handle(), ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    p.add(t);
    PL_FAILS(p.modify(t, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    p.add_fd(fds.r, ZLINK_POLLIN);
    PL_FAILS(p.modify_fd(fds.r, ZLINK_POLLIN | ZLINK_POLLCOMPLETION),
             ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    p.destroy();
    t.destroy();
}

// Drains b on another thread until "END"; counts the rest.
struct drainer_t {
    zlink::socket &s;
    unsigned got = 0;
    std::thread th;
    explicit drainer_t(zlink::socket &b) : s(b)
    {
        th = std::thread([this] {
            for (;;) {
                zlink::record rec = s.recv();
                if (rec.parts.size() == 1 && rec.parts[0].text() == "END")
                    return;
                got++;
            }
        });
    }
};

void credit_race(int rounds)
{
    zlink::context ctx;
    zlink::socket a(ctx, st::pair), b(ctx, st::pair);
    a.set_option_u64(ZLINK_SNDHWM, 100);
    b.set_option(ZLINK_RCVTIMEO, -1);
    a.connect(bind_any(b, "inproc"));
    zlink::poller p;
    p.add(a, ZLINK_POLLCOMPLETION);
    int uctx;
    drainer_t dr(b);
    unsigned sent = 0;
    for (int i = 0; i < rounds; i++) {
        zlink_completion_id_t token = 0;
        for (unsigned tries = 0;; tries++) {
            zlink::submit_t s = send_dontwait(a, "r", &uctx);
            if (s.ec == zlink::make_result_code(ZLINK_SUBMIT_BACKPRESSURED)) {
                token = s.id;
                break;
            }
            if (s.ec)
                CF_FAIL("send: " + s.ec.message());
            sent++;
            if (tries > 1000000)
                CF_FAIL("round " + std::to_string(i) + ": never refused");
        }
        CF_CHECK(token != 0);
        PL_EXPECT_EVENT(p, a, long_wait_ms(), ZLINK_POLLCOMPLETION);
        EXPECT_RECORD(a, ZLINK_COMPLETION_WRITABLE, token, &uctx, nullptr);
        EXPECT_NO_RECORD(a);
    }
    a.set_option(ZLINK_SNDTIMEO, conf::ms(10000));
    a.send("END");
    dr.th.join();
    CF_EQ(dr.got, sent);
    std::printf("# credit race: %d refusals, %u records\n", rounds, sent);
    p.destroy();
}

void attach_race(int rounds)
{
    int refused = 0;
    for (int i = 0; i < rounds; i++) {
        zlink::context ctx;
        zlink::socket a(ctx, st::pair), b(ctx, st::pair);
        std::string ep = bind_any(a, "inproc");
        zlink::poller p;
        p.add(a, ZLINK_POLLCOMPLETION);
        int uctx;
        std::atomic<int> connecting{0};
        std::thread th([&] {
            connecting = 1;
            b.connect(ep);
        });
        // The send lands before, during or after the attach.
        while (!connecting.load())
            std::this_thread::yield();
        // A short spin of varying length; the relaxed loads keep the loop.
        for (int spin = (i * 7919) % 1500; spin > 0 && connecting.load(std::memory_order_relaxed);
             spin--) {
        }
        zlink::submit_t s = send_dontwait(a, "r", &uctx);
        th.join();
        if (s.ec == zlink::make_result_code(ZLINK_SUBMIT_BACKPRESSURED)) {
            refused++;
            CF_CHECK(s.id != 0);
            PL_EXPECT_EVENT(p, a, long_wait_ms(), ZLINK_POLLCOMPLETION);
            EXPECT_RECORD(a, ZLINK_COMPLETION_WRITABLE, s.id, &uctx, nullptr);
        } else {
            if (s.ec)
                CF_FAIL("send: " + s.ec.message());
            CF_EQ(s.id, zlink_completion_id_t{0});
            expect_str(b, "r");
        }
        EXPECT_NO_RECORD(a);
        p.destroy();
    }
    std::printf("# attach race: %d rounds, %d refused before the attach\n", rounds, refused);
}

} // namespace

namespace cases {

void pl09(const conf::params_t &)
{
    completion_bit_on_completion_sockets();
    {
        zlink::context ctx;
        zlink::socket s(ctx, st::dealer);
        pipe_t fds;
        zlink_pollitem_t a[1] = {item(s.handle(), -1, ZLINK_POLLCOMPLETION)};
        PL_FAILS(zlink::poll(a, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        zlink_pollitem_t b[1] = {item(s.handle(), -1, ZLINK_POLLIN | ZLINK_POLLCOMPLETION)};
        PL_FAILS(zlink::poll(b, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
        zlink_pollitem_t c[1] = {item(nullptr, fds.r, ZLINK_POLLCOMPLETION)};
        PL_FAILS(zlink::poll(c, milliseconds(0)), ZLINK_CONFIG_INVALID_ARGUMENT, EINVAL);
    }
    zlink::context ctx;
    dr_t dr(ctx, "inproc");
    zlink::poller p;
    p.add(dr.d, ZLINK_POLLCOMPLETION);
    int req_ctx, wr_ctx;
    zlink_completion_id_t id = request_answered(dr.d, dr.r, "q", &req_ctx);
    PL_EXPECT_EVENT(p, dr.d, long_wait_ms(), ZLINK_POLLCOMPLETION);
    EXPECT_RECORD(dr.d, ZLINK_COMPLETION_REQUEST, id, &req_ctx, "q");
    EXPECT_NO_RECORD(dr.d);
    zlink::poller_event ev[2];
    CF_EQ(wait_ok(p, ev, 2, 0), 0);
    full_pair_t fp(ctx, &wr_ctx);
    p.add(fp.a, ZLINK_POLLCOMPLETION);
    expect_str(fp.b, "fills the queue");
    PL_EXPECT_EVENT(p, fp.a, long_wait_ms(), ZLINK_POLLCOMPLETION);
    EXPECT_RECORD(fp.a, ZLINK_COMPLETION_WRITABLE, fp.token, &wr_ctx, nullptr);
    EXPECT_NO_RECORD(fp.a);
    p.destroy();
}

void pl10(const conf::params_t &)
{
    zlink::context ctx;
    dr_t dr(ctx, "inproc");
    zlink::socket &s = dr.d;
    zlink::poller p1, p2;
    p1.add(s, ZLINK_POLLCOMPLETION);
    PL_FAILS(p2.add(s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_STATE, EBUSY);
    CF_EQ(p2.size(), 0);
    p2.add(s, ZLINK_POLLIN);
    PL_FAILS(p2.modify(s, ZLINK_POLLIN | ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_STATE,
             EBUSY);
    CF_EQ(p2.size(), 1);
    {
        zlink::message m("data");
        CF_CHECK(!dr.r.try_send_to(zlink::routing_id("D"), std::span(&m, 1)).ec);
    }
    PL_EXPECT_EVENT(p2, s, long_wait_ms(), ZLINK_POLLIN);
    expect_str(s, "data");
    int u1, u2;
    zlink_completion_id_t id1 = request_answered(s, dr.r, "one", &u1);
    zlink_completion_id_t id2 = request_answered(s, dr.r, "two", &u2);
    PL_EXPECT_EVENT(p1, s, 0, ZLINK_POLLCOMPLETION);
    p1.modify(s, ZLINK_POLLIN);
    p2.modify(s, ZLINK_POLLCOMPLETION);
    PL_FAILS(p1.modify(s, ZLINK_POLLCOMPLETION), ZLINK_CONFIG_INVALID_STATE, EBUSY);
    PL_EXPECT_EVENT(p2, s, 0, ZLINK_POLLCOMPLETION);
    EXPECT_RECORD(s, ZLINK_COMPLETION_REQUEST, id1, &u1, "one");
    p2.remove(s);
    p1.modify(s, ZLINK_POLLCOMPLETION);
    PL_EXPECT_EVENT(p1, s, 0, ZLINK_POLLCOMPLETION);
    p1.destroy(); // destroying the owner releases the bit too
    p2.add(s, ZLINK_POLLCOMPLETION);
    PL_EXPECT_EVENT(p2, s, 0, ZLINK_POLLCOMPLETION);
    EXPECT_RECORD(s, ZLINK_COMPLETION_REQUEST, id2, &u2, "two");
    EXPECT_NO_RECORD(s);
    zlink::poller_event ev[2];
    CF_EQ(wait_ok(p2, ev, 2, 0), 0);
    p2.destroy();
}

void pl16(const conf::params_t &params)
{
    const int records = static_cast<int>(conf::param_int(params, "records"));
    CF_CHECK(records >= 1 && records <= 64);
    zlink::context ctx;
    dr_t dr(ctx, "inproc");
    zlink::poller p;
    p.add(dr.d, ZLINK_POLLCOMPLETION);
    std::vector<zlink_completion_id_t> ids;
    int uctx;
    for (int i = 0; i < records; i++)
        ids.push_back(request_answered(dr.d, dr.r, "q", &uctx));
    for (int i = 0; i < 3; i++)
        PL_EXPECT_EVENT(p, dr.d, i == 0 ? long_wait_ms() : 0, ZLINK_POLLCOMPLETION);
    p.modify(dr.d, ZLINK_POLLIN | ZLINK_POLLCOMPLETION);
    PL_EXPECT_EVENT(p, dr.d, 0, ZLINK_POLLCOMPLETION);
    p.modify(dr.d, ZLINK_POLLIN);
    zlink::poller_event ev[4];
    CF_EQ(wait_ok(p, ev, 4, 0), 0); // not asked for: not reported
    p.modify(dr.d, ZLINK_POLLCOMPLETION);
    p.remove(dr.d);
    p.add(dr.d, ZLINK_POLLCOMPLETION);
    PL_EXPECT_EVENT(p, dr.d, 0, ZLINK_POLLCOMPLETION);
    for (int i = 0; i < records; i++)
        EXPECT_RECORD(dr.d, ZLINK_COMPLETION_REQUEST, ids[static_cast<std::size_t>(i)], &uctx, "q");
    EXPECT_NO_RECORD(dr.d);
    CF_EQ(wait_ok(p, ev, 4, 0), 0);
    p.destroy();
}

void pl17(const conf::params_t &params)
{
    const int credit_rounds = static_cast<int>(conf::param_int(params, "credit_race_rounds"));
    const int attach_rounds = static_cast<int>(conf::param_int(params, "attach_race_rounds"));
    {
        zlink::context ctx;
        int uctx;
        full_pair_t fp(ctx, &uctx);
        zlink::poller p;
        p.add(fp.a, ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
        zlink::poller_event ev[4];
        CF_EQ(wait_ok(p, ev, 4, 0), 0); // full, no record
        {
            waiter_t w;
            w.p = &p;
            w.timeout_ms = long_wait_ms();
            w.start();
            expect_str(fp.b, "fills the queue");
            w.join();
            PL_GOT_ONE(w, ZLINK_POLLER_SOURCE_SOCKET, ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
        }
        CF_CHECK(!send_dontwait(fp.a, "fills the queue", nullptr).ec);
        for (int i = 0; i < 2; i++)
            PL_EXPECT_EVENT(p, fp.a, 0, ZLINK_POLLOUT | ZLINK_POLLCOMPLETION);
        EXPECT_RECORD(fp.a, ZLINK_COMPLETION_WRITABLE, fp.token, &uctx, nullptr);
        EXPECT_NO_RECORD(fp.a);
        CF_EQ(wait_ok(p, ev, 4, 0), 0);
        expect_str(fp.b, "fills the queue");
        PL_EXPECT_EVENT(p, fp.a, long_wait_ms(), ZLINK_POLLOUT);
        expect_no_data(fp.b); // the refused record was not kept
        p.destroy();
    }
    credit_race(credit_rounds);
    attach_race(attach_rounds);
}

void pl18(const conf::params_t &params)
{
    const int records = static_cast<int>(conf::param_int(params, "records"));
    CF_CHECK(records >= 2 && records <= 64);
    zlink::context ctx;
    dr_t dr(ctx, "inproc");
    zlink::poller p;
    int ud;
    p.add(dr.d, ZLINK_POLLIN | ZLINK_POLLCOMPLETION, &ud);
    std::vector<zlink_completion_id_t> ids;
    int uctx;
    for (int i = 0; i < records; i++)
        ids.push_back(request_answered(dr.d, dr.r, "q", &uctx));
    PL_EXPECT_EVENT(p, dr.d, long_wait_ms(), ZLINK_POLLCOMPLETION);
    zlink::poller_event ev[4];
    for (int i = 0; i < records; i++) {
        EXPECT_RECORD(dr.d, ZLINK_COMPLETION_REQUEST, ids[static_cast<std::size_t>(i)], &uctx, "q");
        if (i + 1 < records)
            PL_EXPECT_EVENT(p, dr.d, 0, ZLINK_POLLCOMPLETION);
        else
            CF_EQ(wait_ok(p, ev, 4, 0), 0);
    }
    EXPECT_NO_RECORD(dr.d);
    zlink_completion_id_t id = request_answered(dr.d, dr.r, "again", &uctx);
    PL_EXPECT_EVENT(p, dr.d, long_wait_ms(), ZLINK_POLLCOMPLETION);
    EXPECT_RECORD(dr.d, ZLINK_COMPLETION_REQUEST, id, &uctx, "again");
    CF_EQ(wait_ok(p, ev, 4, 0), 0);
    p.destroy();
}

void pl19(const conf::params_t &params)
{
    const int nsock = static_cast<int>(conf::param_int(params, "sockets"));
    const int nrec = static_cast<int>(conf::param_int(params, "records_per_socket"));
    const int cap = static_cast<int>(conf::param_int(params, "event_capacity"));
    CF_CHECK(nsock >= 2 && nsock <= 8 && nrec >= 2 && nrec <= 16);
    CF_CHECK(cap >= 1 && cap < nsock);
    zlink::context ctx;
    zlink::socket r(ctx, st::router);
    std::string ep = bind_any(r, "inproc");
    zlink::poller p;
    std::vector<zlink::socket> d;
    d.reserve(static_cast<std::size_t>(nsock));
    std::vector<int> next(static_cast<std::size_t>(nsock), 0);
    std::vector<std::vector<zlink_completion_id_t>> ids(static_cast<std::size_t>(nsock));
    for (int i = 0; i < nsock; i++) {
        d.emplace_back(ctx, st::dealer);
        std::string rid = "D" + std::to_string(i);
        d.back().set_routing_id(rid);
        d.back().connect(ep);
        d.back().send("hello");
        zlink::record rec = r.router_recv();
        CF_EQ(std::string(rec.rid.view()), rid);
        p.add(d.back(), ZLINK_POLLCOMPLETION, &next[static_cast<std::size_t>(i)]);
    }
    for (int k = 0; k < nrec; k++)
        for (int i = 0; i < nsock; i++) {
            auto ui = static_cast<std::size_t>(i);
            ids[ui].push_back(request_answered(d[ui], r, "q", &next[ui]));
        }
    std::vector<zlink::poller_event> ev(static_cast<std::size_t>(nsock));
    int total = 0, waits = 0;
    while (total < nsock * nrec) {
        int n = wait_ok(p, ev.data(), cap, waits == 0 ? long_wait_ms() : 0);
        waits++;
        if (n < 1 || n > cap)
            CF_FAIL("wait " + std::to_string(waits) + " returned " + std::to_string(n) +
                    " events with " + std::to_string(nsock * nrec - total) + " records left");
        for (int e = 0; e < n; e++) {
            const auto &x = ev[static_cast<std::size_t>(e)];
            CF_EQ(x.events, ZLINK_POLLCOMPLETION);
            long i = static_cast<int *>(x.user_data) - next.data();
            CF_CHECK(i >= 0 && i < nsock);
            auto ui = static_cast<std::size_t>(i);
            CF_CHECK(x.socket == d[ui].handle());
            while (next[ui] < nrec) {
                EXPECT_RECORD(d[ui], ZLINK_COMPLETION_REQUEST,
                              ids[ui][static_cast<std::size_t>(next[ui])], &next[ui], "q");
                next[ui]++;
                total++;
            }
            EXPECT_NO_RECORD(d[ui]);
        }
    }
    CF_CHECK(waits >= (nsock + cap - 1) / cap);
    CF_EQ(wait_ok(p, ev.data(), cap, 0), 0);
    p.destroy();
}

void pl20(const conf::params_t &params)
{
    for (const std::string &tr : conf::param_strings(params, "transports")) {
        std::printf("# transport %s\n", tr.c_str());
        zlink::context ctx;
        dr_t dr(ctx, tr);
        zlink::poller p;
        p.add(dr.d, ZLINK_POLLIN | ZLINK_POLLCOMPLETION);
        int uctx;
        zlink_completion_id_t id = request(dr.d, "q", &uctx);
        zlink::record req = take_request(dr.r, "q");
        {
            // DATA of two parts, then the REPLY, on the same connection.
            zlink::message data[2] = {zlink::message("d1"), zlink::message("d2")};
            dr.r.send_to(req.rid, std::span(data, 2));
        }
        reply(dr.r, req, "reply");
        PL_EXPECT_EVENT(p, dr.d, long_wait_ms(), ZLINK_POLLIN);
        PL_EXPECT_EVENT(p, dr.d, 0, ZLINK_POLLIN);
        EXPECT_NO_RECORD(dr.d);
        {
            zlink::record rec;
            CF_CHECK(!dr.d.try_recv(rec));
            CF_EQ(rec.parts.size(), std::size_t{2});
            CF_EQ(std::string(rec.parts[0].text()), std::string("d1"));
            CF_EQ(std::string(rec.parts[1].text()), std::string("d2"));
        }
        PL_EXPECT_EVENT(p, dr.d, long_wait_ms(), ZLINK_POLLCOMPLETION);
        EXPECT_RECORD(dr.d, ZLINK_COMPLETION_REQUEST, id, &uctx, "reply");
        zlink::poller_event ev[2];
        CF_EQ(wait_ok(p, ev, 2, 0), 0);
        p.destroy();
    }
}

} // namespace cases
