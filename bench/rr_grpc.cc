/*
 * rr_grpc.cc — the gRPC side of the request/reply benchmark
 * (//bench:framework_grpc): gRPC C++ 1.51 (Debian libgrpc++-dev), generic
 * API with raw byte buffers, so neither side serializes anything; the
 * protocol of rr_common.h.
 *
 * Design notes
 * ------------
 * The setup is gRPC's fastest here: the async API on both sides with one
 * completion-queue thread per side, one insecure HTTP/2 channel on
 * 127.0.0.1, default channel and server arguments.
 *
 * Server. grpc::AsyncGenericService on one ServerCompletionQueue, drained
 * by one thread (cq_loop). Each ServerCall is a small state machine:
 *   REQUESTED  RequestCall posted, waiting for a new RPC
 *   READING    the RPC came in; reading its single request message
 *   FINISHING  WriteAndFinish(request bytes, OK) posted: the echo
 * and then starts over with a fresh context (a ServerContext cannot be
 * reused). kServerCalls of them are posted up front, more than the
 * largest number of calls in flight, so a new RPC never waits for a
 * handler. Shutdown: the main thread waits for stdin's end of file, then
 * under post_lock sets stopping (so cq_loop posts nothing more), calls
 * Server::Shutdown (which needs cq_loop to keep draining) and then
 * CompletionQueue::Shutdown; cq_loop ends when Next() returns false. The
 * lock makes "check stopping, then post" atomic against the shutdown:
 * posting to a completion queue that is shut down is not allowed.
 *
 * Client. grpc::GenericStub::PrepareUnaryCall per call on one
 * CompletionQueue, drained by the main thread, which also starts every
 * call: N slots, each a ClientContext + response reader + reply buffer,
 * tagged with the slot. The request is one ByteBuffer made once; gRPC
 * shares its slice between calls by reference. The measuring window and
 * the latency samples follow rr_common.h.
 */
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rr_common.h"

namespace {

const char kMethod[] = "/zlink.bench.Echo/Call";
// More handlers posted than calls the client keeps in flight (1,000).
const int kServerCalls = 1100;

std::string VersionString() { return "grpc-" + grpc::Version(); }

// ------------------------------------------------------------------ server

class EchoServer;

struct ServerCall {
    enum State { REQUESTED, READING, FINISHING };
    State state = REQUESTED;
    std::unique_ptr<grpc::GenericServerContext> ctx;
    std::unique_ptr<grpc::GenericServerAsyncReaderWriter> stream;
    grpc::ByteBuffer request;
};

class EchoServer {
  public:
    int Run();

  private:
    // Posts call's next operation unless the server is stopping. Called by
    // the completion-queue thread only; takes post_lock_. Returns false
    // when nothing was posted (the call is then idle for good).
    bool Advance(ServerCall *call);
    void CqLoop();

    grpc::AsyncGenericService service_;
    std::unique_ptr<grpc::ServerCompletionQueue> cq_;
    std::unique_ptr<grpc::Server> server_;
    std::mutex post_lock_;
    bool stopping_ = false;  // guarded by post_lock_
};

bool EchoServer::Advance(ServerCall *call)
{
    std::lock_guard<std::mutex> hold(post_lock_);
    if (stopping_)
        return false;
    switch (call->state) {
    case ServerCall::REQUESTED:
        call->ctx.reset(new grpc::GenericServerContext());
        call->stream.reset(new grpc::GenericServerAsyncReaderWriter(call->ctx.get()));
        service_.RequestCall(call->ctx.get(), call->stream.get(), cq_.get(), cq_.get(), call);
        break;
    case ServerCall::READING:
        call->stream->Read(&call->request, call);
        break;
    case ServerCall::FINISHING:
        call->stream->WriteAndFinish(call->request, grpc::WriteOptions(), grpc::Status::OK,
                                     call);
        break;
    }
    return true;
}

void EchoServer::CqLoop()
{
    void *tag = nullptr;
    bool ok = false;
    while (cq_->Next(&tag, &ok)) {
        ServerCall *call = static_cast<ServerCall *>(tag);
        switch (call->state) {
        case ServerCall::REQUESTED:
            // !ok: the server is shutting down and the request was dropped.
            if (!ok)
                continue;
            call->state = ServerCall::READING;
            break;
        case ServerCall::READING:
            if (!ok) {  // the client went away before sending its message
                call->state = ServerCall::REQUESTED;
                break;
            }
            call->state = ServerCall::FINISHING;
            break;
        case ServerCall::FINISHING:
            call->request.Clear();
            call->state = ServerCall::REQUESTED;
            break;
        }
        Advance(call);
    }
}

int EchoServer::Run()
{
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterAsyncGenericService(&service_);
    cq_ = builder.AddCompletionQueue();
    server_ = builder.BuildAndStart();
    if (!server_ || port <= 0) {
        rr_error("grpc server did not start on 127.0.0.1 (port %d)", port);
        return 1;
    }
    std::vector<std::unique_ptr<ServerCall>> calls;
    calls.reserve(kServerCalls);
    for (int i = 0; i < kServerCalls; i++) {
        calls.emplace_back(new ServerCall());
        Advance(calls.back().get());
    }
    std::thread cq_thread([this] { CqLoop(); });
    rr_ready(port);
    rr_wait_stdin_eof();
    {
        std::lock_guard<std::mutex> hold(post_lock_);
        stopping_ = true;
    }
    server_->Shutdown(std::chrono::system_clock::now());
    cq_->Shutdown();
    cq_thread.join();
    server_.reset();
    return 0;
}

// ------------------------------------------------------------------ client

struct ClientSlot {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::GenericClientAsyncResponseReader> rpc;
    grpc::ByteBuffer reply;
    grpc::Status status;
    uint64_t start_ns = 0;
};

int RunClient(const rr_args_t *a)
{
    std::string target = "127.0.0.1:" + std::to_string(a->port);
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
    grpc::GenericStub stub(channel);
    grpc::CompletionQueue cq;

    // The channel connects lazily, on its first call. Connect before the
    // window is fixed, so the connection's set-up (over a second under
    // ThreadSanitizer) is not taken from the warm-up.
    gpr_timespec connect_by = gpr_time_add(
        gpr_now(GPR_CLOCK_MONOTONIC),
        gpr_time_from_nanos((int64_t)RR_STALL_NS, GPR_TIMESPAN));
    if (!channel->WaitForConnected(connect_by)) {
        rr_error("no connection to %s within %llu s", target.c_str(),
                 (unsigned long long)(RR_STALL_NS / 1000000000ull));
        return 1;
    }

    std::string payload(a->size, 'q');
    grpc::Slice slice(payload.data(), payload.size());
    grpc::ByteBuffer request(&slice, 1);

    std::vector<ClientSlot> slots(a->inflight);
    rr_samples_t samples;
    size_t expected = (size_t)(a->duration_ns / 2000);  // up to 500 k calls/s
    if (rr_samples_init(&samples, expected) != 0) {
        rr_error("out of memory");
        return 1;
    }

    auto start = [&](ClientSlot &s) {
        s.ctx.reset(new grpc::ClientContext());
        s.reply.Clear();
        s.start_ns = rr_now_ns();
        s.rpc = stub.PrepareUnaryCall(s.ctx.get(), kMethod, request, &cq);
        s.rpc->StartCall();
        s.rpc->Finish(&s.reply, &s.status, &s);
    };

    uint64_t window_start = rr_now_ns() + a->warmup_ns;
    uint64_t window_end = window_start + a->duration_ns;
    uint64_t calls = 0;
    unsigned inflight = 0;
    int status = 0;
    for (ClientSlot &s : slots) {
        start(s);
        inflight++;
    }
    while (inflight > 0) {
        void *tag = nullptr;
        bool ok = false;
        auto bound = std::chrono::system_clock::now() + std::chrono::nanoseconds(RR_STALL_NS);
        grpc::CompletionQueue::NextStatus ns = cq.AsyncNext(&tag, &ok, bound);
        uint64_t now = rr_now_ns();
        if (ns != grpc::CompletionQueue::GOT_EVENT) {
            rr_error("no completion for %llu s with %u calls in flight",
                     (unsigned long long)(RR_STALL_NS / 1000000000ull), inflight);
            status = 1;
            break;
        }
        ClientSlot &s = *static_cast<ClientSlot *>(tag);
        inflight--;
        if (!ok || !s.status.ok() || s.reply.Length() != a->size) {
            rr_error("call failed: ok=%d status=%d '%s' reply %zu bytes", ok ? 1 : 0,
                     (int)s.status.error_code(), s.status.error_message().c_str(),
                     s.reply.Length());
            status = 1;
            break;
        }
        if (now >= window_start && now < window_end) {
            calls++;
            rr_samples_add(&samples, (double)(now - s.start_ns) / 1000.0);
        }
        if (now < window_end) {
            start(s);
            inflight++;
        }
    }
    if (status != 0) {
        // Cancel what is left and drain it, so nothing refers to the slots
        // when they are destroyed.
        for (ClientSlot &s : slots)
            if (s.ctx)
                s.ctx->TryCancel();
        void *tag = nullptr;
        bool ok = false;
        while (inflight > 0 && cq.Next(&tag, &ok))
            inflight--;
    } else {
        status = rr_report(VersionString().c_str(), calls, a->duration_ns, &samples) == 0 ? 0 : 1;
    }
    rr_samples_free(&samples);
    cq.Shutdown();
    void *tag = nullptr;
    bool ok = false;
    while (cq.Next(&tag, &ok)) {
    }
    return status;
}

}  // namespace

int main(int argc, char **argv)
{
    rr_args_t a;
    if (rr_parse_args(argc, argv, &a) != 0)
        return 2;
    if (a.mode == RR_SERVER) {
        EchoServer server;
        return server.Run();
    }
    return RunClient(&a);
}
