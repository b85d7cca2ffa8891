// sc.cc — the SC harness (sc.hpp), through the C++ binding only.
#include "sc.hpp"

#include <unistd.h>

#include <cstring>

using namespace std::chrono_literals;

namespace sc {

std::vector<std::string> transports(const conf::params_t &p)
{
    auto v = conf::param_strings(p, "transports");
    if (v.size() > 3)
        CF_FAIL("parameter \"transports\" has more than 3 strings");
    return v;
}

void on_time(const char *file, int line, std::int64_t elapsed, std::int64_t want_ms)
{
    std::int64_t late = want_ms + conf::ms(250);
    if (elapsed < want_ms || elapsed > late)
        conf::fail(file, line, "ended after " + std::to_string(elapsed) + " ms, expected " +
                                   std::to_string(want_ms) + ".." + std::to_string(late) + " ms");
}

// ------------------------------------------------------------------ gate

void gate_t::pass()
{
    std::unique_lock<std::mutex> g(m);
    n_waiting++;
    cv.notify_all();
    cv.wait(g, [&] { return is_open; });
    n_waiting--;
}
void gate_t::open()
{
    std::lock_guard<std::mutex> g(m);
    is_open = true;
    cv.notify_all();
}
void gate_t::close()
{
    std::lock_guard<std::mutex> g(m);
    is_open = false;
}
int gate_t::waiting()
{
    std::lock_guard<std::mutex> g(m);
    return n_waiting;
}

// -------------------------------------------------------------- recorder

void rec_t::add(const std::string &tag)
{
    std::lock_guard<std::mutex> g(m);
    seen.push_back(tag);
}
std::size_t rec_t::count()
{
    std::lock_guard<std::mutex> g(m);
    return seen.size();
}
int rec_t::has(const std::string &tag)
{
    std::lock_guard<std::mutex> g(m);
    int n = 0;
    for (const auto &s : seen)
        n += s == tag;
    return n;
}

// ----------------------------------------------------------------- timer

void timer_t::start()
{
    th_ = std::thread([this] {
        std::unique_lock<std::mutex> g(m_);
        for (;;) {
            if (q_.empty()) {
                if (stop_)
                    break;
                cv_.wait(g);
                continue;
            }
            std::int64_t now = conf::now_ms();
            if (q_.top().due > now) {
                cv_.wait_for(g, std::chrono::milliseconds(q_.top().due - now));
                continue;
            }
            auto fn = q_.top().fn;
            q_.pop();
            g.unlock();
            fn();
            g.lock();
        }
    });
}
void timer_t::at(std::int64_t due_ms, std::function<void()> fn)
{
    std::lock_guard<std::mutex> g(m_);
    q_.push({due_ms, seq_++, std::move(fn)});
    cv_.notify_one();
}
void timer_t::finish()
{
    {
        std::lock_guard<std::mutex> g(m_);
        stop_ = true;
        cv_.notify_one();
    }
    th_.join();
}

// ------------------------------------------------------------- collector

namespace {
std::string tag_of(std::string_view bytes)
{
    std::size_t k = 0;
    while (k < bytes.size() && k < 31 && bytes[k] != '\0')
        k++;
    return std::string(bytes.substr(0, k));
}
} // namespace

std::function<void(const zlink::outcome_t &)> done_t::fn()
{
    return [this](const zlink::outcome_t &o) {
        std::int64_t now = conf::now_ms();
        bool rt = zlink::in_runtime_context();
        std::lock_guard<std::mutex> g(m);
        if (calls++ == 0) {
            result = o.result;
            remote_code = o.remote_code;
            at_ms = now;
            thread = std::this_thread::get_id();
            in_runtime = rt;
            reply = o.reply ? tag_of(o.reply->text()) : std::string();
            message = o.message;
        }
        cv.notify_all();
    };
}
bool done_t::wait_until(std::int64_t until_ms)
{
    std::unique_lock<std::mutex> g(m);
    while (calls == 0) {
        std::int64_t left = until_ms - conf::now_ms();
        if (left <= 0)
            break;
        cv.wait_for(g, std::chrono::milliseconds(left));
    }
    return calls > 0;
}
bool done_t::wait(int ms) { return wait_until(conf::now_ms() + conf::ms(ms)); }
int done_t::get_result()
{
    std::lock_guard<std::mutex> g(m);
    return result;
}
void done_t::expect(int ms)
{
    if (!wait(ms))
        CF_FAIL("no completion within " + std::to_string(ms) + " ms");
}
int done_t::count()
{
    std::lock_guard<std::mutex> g(m);
    return calls;
}

// ----------------------------------------------------------------- hosts

std::string endpoint(const std::string &tr, const std::string &tag, const std::string &name)
{
    static std::atomic<int> seq{0};
    if (tr == "tcp")
        return "tcp://127.0.0.1:0";
    return "inproc://sc-" + tag + "-" + name + "-" + std::to_string(getpid()) + "-" +
           std::to_string(seq++);
}

std::unique_ptr<zlink::host> mesh_host(const std::string &name, const std::string &tr, bool listen,
                                       std::int64_t max_jobs)
{
    auto h = std::make_unique<zlink::host>(name);
    if (max_jobs > 0)
        h->set_option(zlink::host_option::max_queued_jobs, max_jobs);
    std::optional<std::string> ep;
    if (listen)
        ep = endpoint(tr, "mesh", name);
    h->add_mesh_node("m", name, ep);
    return h;
}

namespace {

void on_send(server_t &s, zlink::turn &t)
{
    if (s.gated)
        s.gate.pass();
    s.rec.add(tag_of(t.text()));
}

void on_request(server_t &s, zlink::turn &t)
{
    if (s.gated)
        s.gate.pass();
    std::string tag = tag_of(t.text());
    s.rec.add(tag);
    int mode = s.reply_mode;
    if (mode == reply_fail) {
        t.end(true, "cancelled timeout"); // the text must not decide
        return;
    }
    zlink::reply_call_t reply = t.reply();
    reply.payload("echo", tag);
    if (mode == reply_now) {
        try {
            reply.start_detached();
        } catch (const std::exception &) {
            // the requester or the socket is gone: nobody waits for it
        }
    } else if (mode == reply_hold) {
        std::lock_guard<std::mutex> g(s.held_m);
        s.held.emplace_back(tag, std::move(reply));
    } else {
        int delay;
        {
            std::lock_guard<std::mutex> g(s.held_m);
            s.rng ^= s.rng << 13;
            s.rng ^= s.rng >> 7;
            s.rng ^= s.rng << 17;
            int span = s.delay_max - s.delay_min + 1;
            delay = s.delay_min + static_cast<int>(s.rng % static_cast<std::uint64_t>(span));
        }
        auto shared = std::make_shared<zlink::reply_call_t>(std::move(reply));
        s.timer->at(conf::now_ms() + delay, [&s, shared] {
            try {
                shared->start_detached();
            } catch (const std::exception &) {
            }
            s.replies_sent++;
        });
    }
}

// "sync": a synchronous terminator and a shutdown inside a handler.
void on_sync(server_t &s, zlink::turn &)
{
    if (s.mode == mesh) {
        auto c = node_send(*s.h, "A", "from-handler");
        std::int64_t t0 = conf::now_ms();
        sync_out o = wait_send(c);
        s.sync_wait_rc = o.result;
        if (conf::now_ms() - t0 > conf::ms(100))
            s.sync_wait_rc = -2; // not "at once"
    }
    try {
        s.h->shutdown(100ms);
        s.sync_shutdown_rc = 0;
    } catch (...) {
        s.sync_shutdown_rc = result_of(std::current_exception());
    }
    s.sync_ran++;
}

// "yield": yield() inside a handler turn of a channel (no Spot turn): the
// terminator refuses, so no task (no continuation) exists.
void on_yield(server_t &s, zlink::turn &)
{
    if (s.mode == mesh) {
        auto c = node_send(*s.h, "A", "yield-in-handler");
        try {
            c.yield();
            s.yield_rc = 0;
        } catch (...) {
            s.yield_rc = result_of(std::current_exception());
        }
    }
    s.yield_ran++;
}

void on_ping(server_t &s, zlink::turn &t)
{
    s.pings++;
    t.respond("pong", s.name);
}

void add_handlers(server_t &s, const zlink::owner &o)
{
    s.h->on_send(o, "m", [&s](zlink::turn &t) { on_send(s, t); });
    s.h->on_request(o, "m", [&s](zlink::turn &t) { on_request(s, t); });
    s.h->on_send(o, "sync", [&s](zlink::turn &t) { on_sync(s, t); });
    s.h->on_request(o, "ping", [&s](zlink::turn &t) { on_ping(s, t); });
    s.h->on_send(o, "yield", [&s](zlink::turn &t) { on_yield(s, t); });
}

} // namespace

void server_t::open(mode_t m, const std::string &tr, const std::string &tag)
{
    mode = m;
    std::string ep = endpoint(tr, tag, name);
    h = std::make_unique<zlink::host>(name);
    if (max_jobs > 0)
        h->set_option(zlink::host_option::max_queued_jobs, max_jobs);
    std::string sock = mode == mesh ? "m" : "svc";
    if (mode == mesh) {
        h->add_mesh_node("m", name, ep);
        h->add_mesh_channel_server("m", "svc", weight < 0 ? 100 : weight);
        if (zero_channel)
            h->add_mesh_channel_server("m", "zero", 0);
        add_handlers(*this, zlink::owner::channel("svc"));
        add_handlers(*this, zlink::owner::node("m"));
    } else {
        h->add_cs_server("svc", ep);
        add_handlers(*this, zlink::owner::channel("svc"));
    }
    if (hwm > 0) {
        auto v = static_cast<std::int64_t>(hwm);
        if (mode == mesh)
            h->set_mesh_option(sock, zlink::node_option::sndhwm, v)
                .set_mesh_option(sock, zlink::node_option::rcvhwm, v);
        else
            h->set_channel_option(sock, zlink::node_option::sndhwm, v)
                .set_channel_option(sock, zlink::node_option::rcvhwm, v);
    }
    h->start();
    bound = h->endpoint(sock);
}

void server_t::drop_held()
{
    std::lock_guard<std::mutex> g(held_m);
    held.clear();
}

std::size_t server_t::nheld()
{
    std::lock_guard<std::mutex> g(held_m);
    return held.size();
}

std::optional<zlink::reply_call_t> server_t::take_held(const std::string &tag)
{
    std::lock_guard<std::mutex> g(held_m);
    for (auto it = held.begin(); it != held.end(); ++it) {
        if (it->first == tag) {
            zlink::reply_call_t c = std::move(it->second);
            held.erase(it);
            return c;
        }
    }
    return std::nullopt;
}

void server_t::close()
{
    gate.open();
    auto st = h->state();
    if (st == ZLINK_HOST_SERVING || st == ZLINK_HOST_DRAINING)
        h->shutdown(2000ms);
    drop_held();
    h.reset();
}

void client_t::open(mode_t m, const std::vector<server_t *> &srv)
{
    mode = m;
    h = std::make_unique<zlink::host>("A");
    if (root_send_timeout != 0)
        h->set_option(zlink::host_option::default_send_timeout, root_send_timeout);
    if (mode == mesh) {
        h->add_mesh_node("m", "A");
        h->add_mesh_channel_client("m", "svc");
        if (extra_channels)
            h->add_mesh_channel_client("m", "none").add_mesh_channel_client("m", "zero");
        for (auto *s : srv)
            h->mesh_connect("m", s->bound, s->name);
        if (send_timeout != 0)
            h->set_mesh_option("m", zlink::node_option::send_timeout, send_timeout);
        if (hwm > 0)
            h->set_mesh_option("m", zlink::node_option::sndhwm, static_cast<std::int64_t>(hwm))
                .set_mesh_option("m", zlink::node_option::rcvhwm, static_cast<std::int64_t>(hwm));
    } else {
        for (auto *s : srv)
            h->add_cs_client("svc", s->bound);
        if (send_timeout != 0)
            h->set_channel_option("svc", zlink::node_option::send_timeout, send_timeout);
        if (hwm > 0)
            h->set_channel_option("svc", zlink::node_option::sndhwm, static_cast<std::int64_t>(hwm))
                .set_channel_option("svc", zlink::node_option::rcvhwm, static_cast<std::int64_t>(hwm));
    }
    h->start();
    if (mode == mesh) {
        CF_EVENTUALLY(h->ready_peers("m") == static_cast<int>(srv.size()), 5000);
        for (auto *s : srv)
            CF_EVENTUALLY(s->h->ready_peers("m") == 1, 5000);
        return;
    }
    // ClientServer has no readiness view: ping until every server answered.
    for (int round = 0;; round++) {
        bool all = true;
        for (auto *s : srv)
            all = all && s->pings > 0;
        if (all)
            break;
        CF_CHECK(round < 500);
        auto c = h->request_to_channel("svc");
        c.payload("ping", "p").timeout(std::chrono::milliseconds(conf::ms(5000)));
        CF_RESULT(wait_request(c).result, 0);
    }
}

void client_t::close()
{
    auto st = h->state();
    if (st == ZLINK_HOST_SERVING || st == ZLINK_HOST_DRAINING)
        h->shutdown(2000ms);
    h.reset();
}

// ----------------------------------------------------------------- calls

namespace {
std::string padded(const std::string &tag, std::size_t size)
{
    std::string s = tag;
    if (s.size() < size)
        s.resize(size, '\0');
    return s;
}
} // namespace

zlink::send_call_t send_call(client_t &a, const std::string &tag, std::size_t size,
                             const std::string &channel)
{
    auto c = a.h->send_to_channel(channel);
    c.payload("m", padded(tag, size));
    return c;
}

zlink::request_call_t request_call(client_t &a, const std::string &tag, std::size_t size,
                                   const std::string &channel)
{
    auto c = a.h->request_to_channel(channel);
    c.payload("m", padded(tag, size));
    return c;
}

zlink::send_call_t node_send(zlink::host &h, const std::string &rid, const std::string &tag)
{
    auto c = h.send_to_node("m", rid);
    c.payload("m", tag);
    return c;
}

zlink::request_call_t node_request(zlink::host &h, const std::string &rid, const std::string &tag)
{
    auto c = h.request_to_node("m", rid);
    c.payload("m", tag);
    return c;
}

int result_of(const std::exception_ptr &e)
{
    if (!e)
        return 0;
    try {
        std::rethrow_exception(e);
    } catch (const zlink::framework_exception_t &x) {
        return x.result();
    } catch (const zlink::cancelled_exception_t &) {
        return zlink::fw::cancelled;
    } catch (const zlink::argument_exception_t &x) {
        return x.result();
    } catch (...) {
        return -1;
    }
}

namespace {
template <class F> sync_out capture(F f)
{
    sync_out o;
    try {
        f(o);
    } catch (const zlink::framework_exception_t &x) {
        o.result = x.result();
        o.message = x.message();
        o.remote_code = x.remote_code();
    } catch (...) {
        o.result = result_of(std::current_exception());
    }
    return o;
}
} // namespace

sync_out wait_send(zlink::send_call_t &c)
{
    return capture([&](sync_out &) { c.submit(); });
}

sync_out wait_request(zlink::request_call_t &c)
{
    return capture([&](sync_out &o) { o.reply = tag_of(c.submit().text()); });
}

zlink::request_call_t request_start(client_t &a, const std::string &tag, int timeout_ms, done_t &d)
{
    auto c = request_call(a, tag);
    if (timeout_ms > 0)
        c.timeout(std::chrono::milliseconds(timeout_ms));
    start(c, d);
    return c;
}

zlink::host_status_t status(zlink::host &h) { return h.status(); }

std::int64_t metric(zlink::host &h, const std::string &name, const std::string &labels)
{
    return h.metric(name, labels);
}

const char *const drop_reasons[5] = {"reason=no_handler", "reason=decode_error", "reason=shutdown",
                                     "reason=backpressure", "reason=stale_target"};

std::int64_t dropped(zlink::host &h)
{
    std::int64_t sum = 0;
    for (const char *r : drop_reasons)
        sum += h.metric("zlink.mesh_node.messages.dropped", r);
    return sum;
}

void expect_no_drops(zlink::host &h, const std::string &who)
{
    for (const char *r : drop_reasons) {
        std::int64_t v = h.metric("zlink.mesh_node.messages.dropped", r);
        if (v != 0)
            CF_FAIL(who + " dropped " + std::to_string(v) + " records (" + r + ")");
    }
}

void saturate(client_t &a, server_t &b, sat_t &sat)
{
    b.gated = true;
    for (int i = 0;; i++) {
        CF_CHECK(i < 100000);
        sat.tag = "f" + std::to_string(i);
        sat.done = std::make_unique<done_t>();
        sat.pending.emplace(send_call(a, sat.tag, 4096));
        sat.started_ms = conf::now_ms();
        start(*sat.pending, *sat.done);
        // The harness's 100 ms, not scaled; the status confirms it.
        if (!sat.done->wait_until(sat.started_ms + 100) && a.h->status().oneway_waiting == 1)
            return;
        if (!sat.done->wait(5000)) {
            auto st = a.h->status();
            auto bc = b.h->capacity();
            CF_FAIL("send " + sat.tag + " neither completed nor waited for room: A oneway_waiting " +
                    std::to_string(st.oneway_waiting) + ", B permits " +
                    std::to_string(bc.permits_in_use) + ", gate waiting " +
                    std::to_string(b.gate.waiting()));
        }
        CF_RESULT(sat.done->get_result(), 0);
        sat.accepted++;
    }
}

void send_gated(client_t &a, server_t &s, std::vector<std::unique_ptr<done_t>> &dd,
                std::vector<zlink::send_call_t> &dc, int n)
{
    s.gated = true;
    for (int i = 0; i < n; i++) {
        dd.push_back(std::make_unique<done_t>());
        dc.push_back(send_call(a, "d" + std::to_string(i + 1)));
        start(dc.back(), *dd.back());
        if (i == 0)
            CF_EVENTUALLY(s.gate.waiting() == 1, 5000);
        if (i == 1)
            CF_EVENTUALLY(s.h->capacity().pressure_state == ZLINK_PRESSURE_PAUSED, 5000);
    }
}

void flood_t::finish_one(int index, int result)
{
    std::lock_guard<std::mutex> g(m_);
    done_++;
    inflight_--;
    if (result == 0)
        ok_++;
    else if (bad_index_ < 0) {
        bad_index_ = index;
        bad_result_ = result;
    }
    cv_.notify_all();
}

void flood_t::start(zlink::host &h, int count, int window)
{
    h_ = &h;
    count_ = count;
    window_ = window;
    calls_.resize(static_cast<std::size_t>(count));
    th_ = std::thread([this] {
        for (int i = 0; i < count_; i++) {
            {
                std::unique_lock<std::mutex> g(m_);
                cv_.wait(g, [&] { return inflight_ < window_; });
                inflight_++;
                started_++;
            }
            auto c = std::make_unique<zlink::send_call_t>(h_->send_to_channel("svc"));
            c->payload("m", "f" + std::to_string(i));
            try {
                c->submit([this, i](const zlink::outcome_t &o) { finish_one(i, o.result); });
            } catch (...) {
                finish_one(i, result_of(std::current_exception()));
            }
            calls_[static_cast<std::size_t>(i)] = std::move(c);
        }
    });
}

int flood_t::wait_done(int n, int ms)
{
    std::unique_lock<std::mutex> g(m_);
    cv_.wait_for(g, std::chrono::milliseconds(conf::ms(ms)), [&] { return done_ >= n; });
    return done_;
}

void flood_t::finish_all(int ms)
{
    int done = wait_done(count_, ms);
    if (done < count_)
        CF_FAIL("flood: " + std::to_string(done) + " of " + std::to_string(count_) +
                " sends ended within " + std::to_string(ms) + " ms");
    th_.join();
    std::lock_guard<std::mutex> g(m_);
    if (ok_ != count_)
        CF_FAIL("flood: " + std::to_string(count_ - ok_) + " of " + std::to_string(count_) +
                " sends failed; the first, f" + std::to_string(bad_index_) + ", with " +
                std::string(zlink::result_name(bad_result_)));
}

flood_t::~flood_t()
{
    if (th_.joinable())
        th_.join();
}

} // namespace sc
