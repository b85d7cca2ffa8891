/*
 * core.cc — the Core half of the addon: contexts, sockets, send / receive,
 * completion-queue records, request / reply, the poller, zlink_poll and
 * timers, as thin functions over zlink.h. Every function returns the C
 * result and, for a failure, zlink_errno() read at once on the same thread;
 * lib/core.js names both from the generated table.
 *
 * Messages: a record crosses as an array of Buffers. Sending copies each
 * Buffer into a zlink_msg_t (zlink_msg_init_size) that the send consumes,
 * on success and on failure (zlink.h); receiving copies each part into a
 * new Buffer and closes the parts before returning. No Core storage is
 * referenced from JavaScript.
 *
 * Threads: the JavaScript thread, except pollerWaitAsync and timerRecvAsync,
 * whose blocking call runs on a libuv pool thread (AsyncWorker); the poller
 * or timer must then stay alive until the callback ran (lib/core.js keeps
 * a reference). Blocking calls on the JavaScript thread (a wait with a
 * timeout, a receive without DONTWAIT) block it: they are the Core's
 * synchronous forms, kept on purpose (seed 000 §4.1 removes only the
 * framework's).
 */
#include <cstring>

#include "addon.h"

namespace {

Napi::Value arr(Napi::Env env, std::initializer_list<Napi::Value> vs)
{
    Napi::Array a = Napi::Array::New(env, vs.size());
    uint32_t i = 0;
    for (const Napi::Value &v : vs)
        a.Set(i++, v);
    return a;
}

Napi::Value n(Napi::Env env, double v) { return Napi::Number::New(env, v); }
Napi::Value big(Napi::Env env, uint64_t v) { return Napi::BigInt::New(env, v); }

/* [rc, errno] */
Napi::Value res(Napi::Env env, int rc)
{
    return arr(env, {n(env, rc), n(env, rc != 0 ? zl.zlink_errno() : 0)});
}

void *handle(const Napi::Value &v) { return zn_ptr<void>(v); }

Napi::Value wrap(Napi::Env env, void *p)
{
    int e = p == nullptr ? zl.zlink_errno() : 0;
    return arr(env, {p == nullptr ? env.Null() : Napi::External<void>::New(env, p), n(env, e)});
}

bool rid_of(const Napi::Value &v, zlink_routing_id_t *rid)
{
    if (v.IsNull() || v.IsUndefined())
        return false;
    std::vector<uint8_t> b = zn_bytes(v);
    std::memset(rid, 0, sizeof *rid);
    rid->size = (uint8_t)(b.size() > 255 ? 255 : b.size());
    std::memcpy(rid->data, b.data(), rid->size);
    return true;
}

Napi::Value rid_value(Napi::Env env, const zlink_routing_id_t *rid)
{
    return rid == nullptr ? env.Null() : zn_buffer(env, rid->data, rid->size);
}

/* Buffers -> initialized messages; each is consumed by the send. */
std::vector<zlink_msg_t> parts_of(const Napi::Value &v)
{
    Napi::Array a = v.As<Napi::Array>();
    std::vector<zlink_msg_t> parts(a.Length());
    for (uint32_t i = 0; i < a.Length(); i++) {
        std::vector<uint8_t> b = zn_bytes(a.Get(i));
        if (zl.zlink_msg_init_size(&parts[i], b.size()) != 0) {
            zl.zlink_multipart_close(parts.data(), i);
            throw Napi::Error::New(v.Env(), "zlink: out of memory for a message");
        }
        if (!b.empty())
            std::memcpy(zl.zlink_msg_data(&parts[i]), b.data(), b.size());
    }
    return parts;
}

Napi::Value take_parts(Napi::Env env, zlink_msg_t *parts, size_t count)
{
    Napi::Array a = Napi::Array::New(env, count);
    for (size_t i = 0; i < count; i++)
        a.Set((uint32_t)i, zn_buffer(env, zl.zlink_msg_data(&parts[i]), zl.zlink_msg_size(&parts[i])));
    zl.zlink_multipart_close(parts, count);
    return a;
}

Napi::Value version(const Napi::CallbackInfo &info)
{
    int a = 0, b = 0, c = 0;
    zl.zlink_version(&a, &b, &c);
    Napi::Env env = info.Env();
    return arr(env, {n(env, a), n(env, b), n(env, c)});
}

Napi::Value strerror_(const Napi::CallbackInfo &info)
{
    return Napi::String::New(info.Env(), zl.zlink_strerror((int)zn_int64(info[0])));
}

Napi::Value ctx_new(const Napi::CallbackInfo &info) { return wrap(info.Env(), zl.zlink_ctx_new()); }
Napi::Value ctx_term(const Napi::CallbackInfo &info)
{
    return res(info.Env(), zl.zlink_ctx_term(handle(info[0])));
}
Napi::Value ctx_shutdown(const Napi::CallbackInfo &info)
{
    return res(info.Env(), zl.zlink_ctx_shutdown(handle(info[0])));
}
Napi::Value ctx_set(const Napi::CallbackInfo &info)
{
    return res(info.Env(), zl.zlink_ctx_set(handle(info[0]), (int)zn_int64(info[1]),
                                            (int)zn_int64(info[2])));
}
Napi::Value ctx_get(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_config_result_t rc = ZLINK_CONFIG_OK;
    int v = zl.zlink_ctx_get(handle(info[0]), (int)zn_int64(info[1]), &rc);
    return arr(env, {n(env, v < 0 ? rc : 0), n(env, v < 0 ? zl.zlink_errno() : 0), n(env, v)});
}

Napi::Value socket_(const Napi::CallbackInfo &info)
{
    return wrap(info.Env(), zl.zlink_socket(handle(info[0]), (int)zn_int64(info[1])));
}
Napi::Value close_(const Napi::CallbackInfo &info)
{
    return res(info.Env(), zl.zlink_close(handle(info[0])));
}

/* setsockopt(sock, option, kind, value): kind 0 int, 1 uint64, 2 int64,
 * 3 bytes (a Buffer or a string, sent without a NUL). */
Napi::Value setsockopt_(const Napi::CallbackInfo &info)
{
    void *s = handle(info[0]);
    int opt = (int)zn_int64(info[1]);
    int kind = (int)zn_int64(info[2]);
    int rc;
    if (kind == 0) {
        int v = (int)zn_int64(info[3]);
        rc = zl.zlink_setsockopt(s, opt, &v, sizeof v);
    } else if (kind == 1 || kind == 2) {
        int64_t v = zn_int64(info[3]);
        rc = zl.zlink_setsockopt(s, opt, &v, sizeof v);
    } else {
        std::vector<uint8_t> b;
        if (info[3].IsString()) {
            std::string str = zn_string(info[3]);
            b.assign(str.begin(), str.end());
        } else {
            b = zn_bytes(info[3]);
        }
        rc = zl.zlink_setsockopt(s, opt, b.data(), b.size());
    }
    return res(info.Env(), rc);
}

/* getsockopt(sock, option, kind) -> [rc, errno, value]; kind 3 gives a
 * string (NUL-terminated values) . */
Napi::Value getsockopt_(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    void *s = handle(info[0]);
    int opt = (int)zn_int64(info[1]);
    int kind = (int)zn_int64(info[2]);
    unsigned char buf[1024];
    std::memset(buf, 0, sizeof buf);
    size_t size = kind == 0 ? sizeof(int) : kind == 3 ? sizeof buf : sizeof(int64_t);
    int rc = zl.zlink_getsockopt(s, opt, buf, &size);
    int e = rc != 0 ? zl.zlink_errno() : 0;
    Napi::Value v = env.Null();
    if (rc == 0) {
        if (kind == 0) {
            int x;
            std::memcpy(&x, buf, sizeof x);
            v = n(env, x);
        } else if (kind == 1 || kind == 2) {
            int64_t x;
            std::memcpy(&x, buf, sizeof x);
            v = Napi::BigInt::New(env, x);
        } else {
            v = Napi::String::New(env, reinterpret_cast<const char *>(buf), strnlen((char *)buf, size));
        }
    }
    return arr(env, {n(env, rc), n(env, e), v});
}

Napi::Value set_routing_id(const Napi::CallbackInfo &info)
{
    std::vector<uint8_t> b = zn_bytes(info[1]);
    return res(info.Env(), zl.zlink_set_routing_id(handle(info[0]), b.data(), b.size()));
}

/* endpoint(sock, op, ep): op 0 bind, 1 connect, 2 unbind, 3 disconnect. */
Napi::Value endpoint(const Napi::CallbackInfo &info)
{
    void *s = handle(info[0]);
    int op = (int)zn_int64(info[1]);
    std::string ep = zn_string(info[2]);
    int rc = op == 0   ? (int)zl.zlink_bind(s, ep.c_str())
             : op == 1 ? (int)zl.zlink_connect(s, ep.c_str())
             : op == 2 ? (int)zl.zlink_unbind(s, ep.c_str())
                       : (int)zl.zlink_disconnect(s, ep.c_str());
    return res(info.Env(), rc);
}

void *uctx(const Napi::Value &v)
{
    return reinterpret_cast<void *>((uintptr_t)(v.IsUndefined() ? 0 : zn_int64(v)));
}

/* send(sock, rid|null, parts, flags, userContext) -> [rc, errno, completionId] */
Napi::Value send_(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_routing_id_t rid;
    bool has_rid = rid_of(info[1], &rid);
    std::vector<zlink_msg_t> parts = parts_of(info[2]);
    zlink_completion_id_t cid = 0;
    auto flags = (zlink_send_flags_t)zn_int64(info[3]);
    int rc = has_rid ? zl.zlink_send_rid(handle(info[0]), &rid, parts.data(), parts.size(), flags,
                                         uctx(info[4]), &cid)
                     : zl.zlink_send(handle(info[0]), parts.data(), parts.size(), flags,
                                     uctx(info[4]), &cid);
    int e = rc != 0 ? zl.zlink_errno() : 0;
    zl.zlink_multipart_close(parts.data(), parts.size());
    return arr(env, {n(env, rc), n(env, e), big(env, cid)});
}

/* request(sock, rid|null, parts, flags, timeoutMs, userContext) */
Napi::Value request_(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_routing_id_t rid;
    bool has_rid = rid_of(info[1], &rid);
    std::vector<zlink_msg_t> parts = parts_of(info[2]);
    zlink_completion_id_t cid = 0;
    int rc = zl.zlink_request(handle(info[0]), has_rid ? &rid : nullptr, parts.data(),
                              parts.size(), (zlink_send_flags_t)zn_int64(info[3]),
                              (uint32_t)zn_int64(info[4]), uctx(info[5]), &cid);
    int e = rc != 0 ? zl.zlink_errno() : 0;
    zl.zlink_multipart_close(parts.data(), parts.size());
    return arr(env, {n(env, rc), n(env, e), big(env, cid)});
}

/* recv(sock, flags, cap) -> [rc, errno, parts | needed count, rid|null] */
Napi::Value recv_(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    size_t cap = (size_t)zn_int64(info[2]);
    std::vector<zlink_msg_t> parts(cap > 0 ? cap : 1);
    size_t count = 0;
    const zlink_routing_id_t *rid = nullptr;
    int rc = zl.zlink_recv(handle(info[0]), &rid, parts.data(), cap, &count,
                           (zlink_recv_flags_t)zn_int64(info[1]));
    int e = rc != 0 ? zl.zlink_errno() : 0;
    if (rc != 0)
        return arr(env, {n(env, rc), n(env, e), n(env, (double)count), env.Null()});
    Napi::Value r = rid_value(env, rid);
    return arr(env, {n(env, rc), n(env, 0), take_parts(env, parts.data(), count), r});
}

/* routerRecv(sock, flags, cap) -> [rc, errno, parts, rid, token] */
Napi::Value router_recv(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    size_t cap = (size_t)zn_int64(info[2]);
    std::vector<zlink_msg_t> parts(cap > 0 ? cap : 1);
    size_t count = 0;
    const zlink_routing_id_t *rid = nullptr;
    zlink_reply_token_t token = 0;
    int rc = zl.zlink_router_recv(handle(info[0]), &rid, &token, parts.data(), cap, &count,
                                  (zlink_recv_flags_t)zn_int64(info[1]));
    int e = rc != 0 ? zl.zlink_errno() : 0;
    if (rc != 0)
        return arr(env, {n(env, rc), n(env, e), n(env, (double)count), env.Null(), big(env, 0)});
    Napi::Value r = rid_value(env, rid);
    return arr(env, {n(env, rc), n(env, 0), take_parts(env, parts.data(), count), r,
                     big(env, token)});
}

/* reply(router, rid, token, parts, errno?) -> [rc, errno] */
Napi::Value reply_(const Napi::CallbackInfo &info)
{
    zlink_routing_id_t rid;
    rid_of(info[1], &rid);
    bool lossless = true;
    uint64_t token = info[2].As<Napi::BigInt>().Uint64Value(&lossless);
    std::vector<zlink_msg_t> parts = parts_of(info[3]);
    int rc = info[4].IsUndefined()
                 ? zl.zlink_reply(handle(info[0]), &rid, token, parts.data(), parts.size())
                 : zl.zlink_reply_error(handle(info[0]), &rid, token, (int)zn_int64(info[4]),
                                        parts.data(), parts.size());
    int e = rc != 0 ? zl.zlink_errno() : 0;
    zl.zlink_multipart_close(parts.data(), parts.size());
    Napi::Env env = info.Env();
    return arr(env, {n(env, rc), n(env, e)});
}

/* replySubmit(router, rid, token, parts, error, flags, userContext) ->
 * [rc, errno, waitToken]: zlink_reply_submit (DONTWAIT gives a wait token
 * when refused for lack of room). */
Napi::Value reply_submit(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_routing_id_t rid;
    rid_of(info[1], &rid);
    bool lossless = true;
    uint64_t token = info[2].As<Napi::BigInt>().Uint64Value(&lossless);
    std::vector<zlink_msg_t> parts = parts_of(info[3]);
    zlink_completion_id_t cid = 0;
    int rc = zl.zlink_reply_submit(handle(info[0]), &rid, token, (int)zn_int64(info[4]),
                                   parts.data(), parts.size(),
                                   (zlink_send_flags_t)zn_int64(info[5]), uctx(info[6]), &cid);
    int e = rc != 0 ? zl.zlink_errno() : 0;
    zl.zlink_multipart_close(parts.data(), parts.size());
    return arr(env, {n(env, rc), n(env, e), big(env, cid)});
}

/* pendingStatus(sock) -> [rc, errno, {stateFlags, detailFlags,
 * sndPendingMsgs, sndPendingBytes, rcvPendingMsgs, rcvPendingBytes,
 * flowPausedConnections, flowPauseAppliedTotal, flowResumeAppliedTotal,
 * flowStateStaleTotal}|null]: a snapshot
 * through a monitor opened (no events) and closed around
 * zlink_monitor_status. */
Napi::Value pending_status(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_monitor_config_t cfg;
    std::memset(&cfg, 0, sizeof cfg);
    void *mon = zl.zlink_socket_monitor_open(handle(info[0]), &cfg);
    if (mon == nullptr) {
        int e = zl.zlink_errno();
        return arr(env, {n(env, -1), n(env, e), env.Null()});
    }
    zlink_monitor_status_t st;
    std::memset(&st, 0, sizeof st);
    st.abi_version = ZLINK_MONITOR_STATUS_ABI_VERSION;
    st.struct_size = sizeof st;
    int rc = zl.zlink_monitor_status(mon, &st);
    int e = rc != 0 ? zl.zlink_errno() : 0;
    zl.zlink_monitor_close(&mon);
    if (rc != 0)
        return arr(env, {n(env, rc), n(env, e), env.Null()});
    Napi::Object o = Napi::Object::New(env);
    o.Set("stateFlags", n(env, st.state_flags));
    o.Set("detailFlags", n(env, st.detail_flags));
    o.Set("sndPendingMsgs", big(env, st.snd_pending_msgs));
    o.Set("sndPendingBytes", big(env, st.snd_pending_bytes));
    o.Set("rcvPendingMsgs", big(env, st.rcv_pending_msgs));
    o.Set("rcvPendingBytes", big(env, st.rcv_pending_bytes));
    o.Set("flowPausedConnections", big(env, st.flow_paused_connections));
    o.Set("flowPauseAppliedTotal", big(env, st.flow_pause_applied_total));
    o.Set("flowResumeAppliedTotal", big(env, st.flow_resume_applied_total));
    o.Set("flowStateStaleTotal", big(env, st.flow_state_stale_total));
    return arr(env, {n(env, 0), n(env, 0), o});
}

/* completionRecv(sock, flags) -> [rc, errno, record|null] */
Napi::Value completion_recv(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_completion_t rec;
    std::memset(&rec, 0, sizeof rec);
    rec.struct_size = sizeof rec;
    int rc = zl.zlink_completion_recv(handle(info[0]), &rec,
                                      (zlink_recv_flags_t)zn_int64(info[1]));
    int e = rc != 0 ? zl.zlink_errno() : 0;
    if (rc != 0)
        return arr(env, {n(env, rc), n(env, e), env.Null()});
    Napi::Object o = Napi::Object::New(env);
    o.Set("kind", (int)rec.kind);
    o.Set("completionId", big(env, rec.completion_id));
    o.Set("userContext", n(env, (double)(uintptr_t)rec.user_context));
    o.Set("peerRid", zn_buffer(env, rec.peer_rid.data, rec.peer_rid.size));
    o.Set("sendResult", (int)rec.send_result);
    o.Set("sendTerminalErrno", rec.send_terminal_errno);
    o.Set("requestResult", (int)rec.request_result);
    Napi::Array parts = Napi::Array::New(env, rec.reply_part_count);
    for (size_t i = 0; i < rec.reply_part_count; i++)
        parts.Set((uint32_t)i, zn_buffer(env, zl.zlink_msg_data(&rec.reply_parts[i]),
                                         zl.zlink_msg_size(&rec.reply_parts[i])));
    o.Set("replyParts", parts);
    zl.zlink_completion_close(&rec);
    return arr(env, {n(env, 0), n(env, 0), o});
}

Napi::Value set_flow_state(const Napi::CallbackInfo &info)
{
    return res(info.Env(), zl.zlink_socket_set_receive_flow_state(
                               handle(info[0]), (zlink_receive_flow_state_t)zn_int64(info[1])));
}

/* poll([[sock|null, fd, events], ...], timeoutMs, noErrorOut) ->
 * [count, rc, errno, revents[]]; noErrorOut passes NULL as error_out (then
 * rc is -1 on failure and errno alone tells). */
Napi::Value poll_(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    Napi::Array items = info[0].As<Napi::Array>();
    std::vector<zlink_pollitem_t> v(items.Length());
    for (uint32_t i = 0; i < items.Length(); i++) {
        Napi::Array it = items.Get(i).As<Napi::Array>();
        v[i].socket = handle(it.Get(0u));
        v[i].fd = (zlink_fd_t)zn_int64(it.Get(1u));
        v[i].events = (short)zn_int64(it.Get(2u));
        v[i].revents = (short)0x7f; /* the call must clear it */
    }
    zlink_config_result_t rc = ZLINK_CONFIG_OK;
    bool no_err = info[2].ToBoolean();
    int count = zl.zlink_poll(v.empty() ? nullptr : v.data(), (int)v.size(),
                              (long)zn_int64(info[1]), no_err ? nullptr : &rc);
    int e = count < 0 ? zl.zlink_errno() : 0;
    if (no_err && count < 0)
        rc = (zlink_config_result_t)-1;
    Napi::Array rev = Napi::Array::New(env, v.size());
    for (uint32_t i = 0; i < v.size(); i++)
        rev.Set(i, n(env, v[i].revents));
    return arr(env, {n(env, count), n(env, count < 0 ? rc : 0), n(env, e), rev});
}

class poll_worker : public Napi::AsyncWorker {
public:
    poll_worker(Napi::Function cb, std::vector<zlink_pollitem_t> items, long timeout)
        : Napi::AsyncWorker(cb, "zlink.poll"), items_(std::move(items)), timeout_(timeout)
    {
    }
    void Execute() override
    {
        count_ = zl.zlink_poll(items_.empty() ? nullptr : items_.data(), (int)items_.size(),
                               timeout_, &rc_);
        errno_ = count_ < 0 ? zl.zlink_errno() : 0;
    }
    void OnOK() override
    {
        Napi::Env env = Env();
        Napi::HandleScope scope(env);
        Napi::Array rev = Napi::Array::New(env, items_.size());
        for (uint32_t i = 0; i < items_.size(); i++)
            rev.Set(i, n(env, items_[i].revents));
        Callback().Call({n(env, count_), n(env, count_ < 0 ? rc_ : 0), n(env, errno_), rev});
    }

private:
    std::vector<zlink_pollitem_t> items_;
    long timeout_;
    int count_ = 0, errno_ = 0;
    zlink_config_result_t rc_ = ZLINK_CONFIG_OK;
};

/* pollAsync(items, timeoutMs, cb(count, rc, errno, revents)): zlink_poll on
 * a pool thread; the sockets must stay open until cb ran. */
Napi::Value poll_async(const Napi::CallbackInfo &info)
{
    Napi::Array items = info[0].As<Napi::Array>();
    std::vector<zlink_pollitem_t> v(items.Length());
    for (uint32_t i = 0; i < items.Length(); i++) {
        Napi::Array it = items.Get(i).As<Napi::Array>();
        v[i].socket = handle(it.Get(0u));
        v[i].fd = (zlink_fd_t)zn_int64(it.Get(1u));
        v[i].events = (short)zn_int64(it.Get(2u));
        v[i].revents = (short)0x7f;
    }
    auto *w = new poll_worker(info[2].As<Napi::Function>(), std::move(v), (long)zn_int64(info[1]));
    w->Queue();
    return info.Env().Undefined();
}

Napi::Value poller_new(const Napi::CallbackInfo &info) { return wrap(info.Env(), zl.zlink_poller_new()); }

Napi::Value poller_destroy(const Napi::CallbackInfo &info)
{
    void *p = handle(info[0]);
    int rc = zl.zlink_poller_destroy(&p);
    Napi::Env env = info.Env();
    int e = rc != 0 ? zl.zlink_errno() : 0;
    return arr(env, {n(env, rc), n(env, e), Napi::Boolean::New(env, p == nullptr)});
}

Napi::Value poller_size(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    zlink_config_result_t rc = ZLINK_CONFIG_OK;
    bool no_err = info[1].ToBoolean(); /* NULL error_out, as for poll */
    int count = zl.zlink_poller_size(handle(info[0]), no_err ? nullptr : &rc);
    int e = count < 0 ? zl.zlink_errno() : 0;
    if (no_err && count < 0)
        rc = (zlink_config_result_t)-1;
    return arr(env, {n(env, count), n(env, count < 0 ? rc : 0), n(env, e)});
}

/* pollerOp(poller, op, source|fd, userData, events): op 0 add, 1 modify,
 * 2 remove, 3 addFd, 4 modifyFd, 5 removeFd, 6 addTimer, 7 removeTimer. */
Napi::Value poller_op(const Napi::CallbackInfo &info)
{
    void *p = handle(info[0]);
    int op = (int)zn_int64(info[1]);
    short ev = info[4].IsUndefined() ? 0 : (short)zn_int64(info[4]);
    int rc;
    switch (op) {
    case 0: rc = zl.zlink_poller_add(p, handle(info[2]), uctx(info[3]), ev); break;
    case 1: rc = zl.zlink_poller_modify(p, handle(info[2]), ev); break;
    case 2: rc = zl.zlink_poller_remove(p, handle(info[2])); break;
    case 3: rc = zl.zlink_poller_add_fd(p, (zlink_fd_t)zn_int64(info[2]), uctx(info[3]), ev); break;
    case 4: rc = zl.zlink_poller_modify_fd(p, (zlink_fd_t)zn_int64(info[2]), ev); break;
    case 5: rc = zl.zlink_poller_remove_fd(p, (zlink_fd_t)zn_int64(info[2])); break;
    case 6: rc = zl.zlink_poller_add_timer(p, handle(info[2]), uctx(info[3])); break;
    default: rc = zl.zlink_poller_remove_timer(p, handle(info[2])); break;
    }
    return res(info.Env(), rc);
}

Napi::Value events_value(Napi::Env env, const zlink_poller_event_t *ev, int count)
{
    Napi::Array a = Napi::Array::New(env, count > 0 ? count : 0);
    for (int i = 0; i < count; i++) {
        Napi::Object o = Napi::Object::New(env);
        o.Set("sourceKind", (int)ev[i].source_kind);
        o.Set("socket", big(env, (uint64_t)(uintptr_t)ev[i].socket));
        o.Set("fd", (int)ev[i].fd);
        o.Set("timer", big(env, (uint64_t)(uintptr_t)ev[i].timer));
        o.Set("userData", n(env, (double)(uintptr_t)ev[i].user_data));
        o.Set("events", ev[i].events);
        a.Set((uint32_t)i, o);
    }
    return a;
}

/* pollerWait(poller, capacity, timeoutMs, nullEvents, noErrorOut) ->
 * [count, rc, errno, events] */
Napi::Value poller_wait(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    int cap = (int)zn_int64(info[1]);
    std::vector<zlink_poller_event_t> ev(cap > 0 ? cap : 1);
    zlink_config_result_t rc = ZLINK_CONFIG_OK;
    bool no_err = info[4].ToBoolean();
    int count = zl.zlink_poller_wait(handle(info[0]), info[3].ToBoolean() ? nullptr : ev.data(),
                                     cap, (long)zn_int64(info[2]), no_err ? nullptr : &rc);
    int e = count < 0 ? zl.zlink_errno() : 0;
    if (no_err && count < 0)
        rc = (zlink_config_result_t)-1;
    return arr(env, {n(env, count), n(env, count < 0 ? rc : 0), n(env, e),
                     events_value(env, ev.data(), count)});
}

class wait_worker : public Napi::AsyncWorker {
public:
    wait_worker(Napi::Function cb, void *poller, int cap, long timeout)
        : Napi::AsyncWorker(cb, "zlink.poller_wait"), p_(poller), ev_(cap > 0 ? cap : 1),
          cap_(cap), timeout_(timeout)
    {
    }
    void Execute() override
    {
        count_ = zl.zlink_poller_wait(p_, ev_.data(), cap_, timeout_, &rc_);
        errno_ = count_ < 0 ? zl.zlink_errno() : 0;
    }
    void OnOK() override
    {
        Napi::Env env = Env();
        Napi::HandleScope scope(env);
        Callback().Call({n(env, count_), n(env, count_ < 0 ? rc_ : 0), n(env, errno_),
                         events_value(env, ev_.data(), count_)});
    }

private:
    void *p_;
    std::vector<zlink_poller_event_t> ev_;
    int cap_;
    long timeout_;
    int count_ = 0, errno_ = 0;
    zlink_config_result_t rc_ = ZLINK_CONFIG_OK;
};

/* pollerWaitAsync(poller, capacity, timeoutMs, cb(count, rc, errno, events)) */
Napi::Value poller_wait_async(const Napi::CallbackInfo &info)
{
    auto *w = new wait_worker(info[3].As<Napi::Function>(), handle(info[0]),
                              (int)zn_int64(info[1]), (long)zn_int64(info[2]));
    w->Queue();
    return info.Env().Undefined();
}

Napi::Value timer_new(const Napi::CallbackInfo &info) { return wrap(info.Env(), zl.zlink_timer_new()); }

Napi::Value timer_destroy(const Napi::CallbackInfo &info)
{
    void *t = handle(info[0]);
    int rc = zl.zlink_timer_destroy(&t);
    Napi::Env env = info.Env();
    int e = rc != 0 ? zl.zlink_errno() : 0;
    return arr(env, {n(env, rc), n(env, e), Napi::Boolean::New(env, t == nullptr)});
}

Napi::Value timer_start(const Napi::CallbackInfo &info)
{
    return res(info.Env(), zl.zlink_timer_start(handle(info[0]), (uint64_t)zn_int64(info[1]),
                                                (uint64_t)zn_int64(info[2])));
}

Napi::Value timer_stop(const Napi::CallbackInfo &info)
{
    return res(info.Env(), zl.zlink_timer_stop(handle(info[0])));
}

/* timerRecv(timer, flags) -> [rc, errno, count] */
Napi::Value timer_recv(const Napi::CallbackInfo &info)
{
    Napi::Env env = info.Env();
    uint64_t count = 0;
    int rc = zl.zlink_timer_recv(handle(info[0]), &count, (zlink_recv_flags_t)zn_int64(info[1]));
    int e = rc != 0 ? zl.zlink_errno() : 0;
    return arr(env, {n(env, rc), n(env, e), n(env, (double)count)});
}

/* handleId(handle) -> the handle's value as a bigint, to compare with the
 * socket and timer fields of poller events. */
Napi::Value handle_id(const Napi::CallbackInfo &info)
{
    return big(info.Env(), (uint64_t)(uintptr_t)handle(info[0]));
}

} // namespace

void zn_init_core(Napi::Env env, Napi::Object exports)
{
    struct {
        const char *name;
        Napi::Value (*fn)(const Napi::CallbackInfo &);
    } fns[] = {
        {"version", version},         {"strerror", strerror_},
        {"ctxNew", ctx_new},          {"ctxTerm", ctx_term},
        {"ctxShutdown", ctx_shutdown}, {"ctxSet", ctx_set},
        {"ctxGet", ctx_get},          {"socket", socket_},
        {"close", close_},            {"setsockopt", setsockopt_},
        {"getsockopt", getsockopt_},  {"setRoutingId", set_routing_id},
        {"endpoint", endpoint},       {"send", send_},
        {"request", request_},        {"recv", recv_},
        {"routerRecv", router_recv},  {"reply", reply_},
        {"replySubmit", reply_submit}, {"pendingStatus", pending_status},
        {"completionRecv", completion_recv}, {"setFlowState", set_flow_state},
        {"poll", poll_},              {"pollAsync", poll_async},
        {"pollerNew", poller_new},
        {"pollerDestroy", poller_destroy}, {"pollerSize", poller_size},
        {"pollerOp", poller_op},      {"pollerWait", poller_wait},
        {"pollerWaitAsync", poller_wait_async}, {"timerNew", timer_new},
        {"timerDestroy", timer_destroy}, {"timerStart", timer_start},
        {"timerStop", timer_stop},    {"timerRecv", timer_recv},
        {"handleId", handle_id},
    };
    for (auto &f : fns)
        exports.Set(f.name, Napi::Function::New(env, f.fn, f.name));
}
