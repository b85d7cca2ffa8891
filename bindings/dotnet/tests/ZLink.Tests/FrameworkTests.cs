using System;
using System.Collections.Concurrent;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace ZLink.Tests;

public record Ping(int N);
public record Pong(int N, string Who);

public class FrameworkTests
{
    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    // Echo "echo"; hold "hold" until the gate opens (then answer); "boom" throws.
    private sealed class Server
    {
        public readonly TaskCompletionSource Gate = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public readonly TaskCompletionSource Started = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public readonly ConcurrentQueue<string> Seen = new();
        public void Release() => Gate.TrySetResult();
        public void Register(Host h)
        {
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "echo", t => t.Reply("echo", t.Payload));
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "hold", async t =>
            {
                Started.TrySetResult();
                await Gate.Task;
                t.Reply("held", t.Payload);
            });
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "boom", (Action<Turn>)(t => throw new InvalidTimeZoneException("boom")));
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "refuse", t => t.ReplyError(ErrorKind.Rejected, "no thanks"));
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "ping", t =>
            {
                var p = t.Json<Ping>();
                t.Reply("pong", new Pong(p.N + 1, "server"));
            });
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "note", t => Seen.Enqueue(Encoding.UTF8.GetString(t.Payload) + "|" + t.Metadata("k")));
        }
    }

    // The process-wide dispatcher_in_use reaches n (tests run one at a time).
    private static async Task InUse(Host h, ulong n)
    {
        var end = DateTime.UtcNow + Bound.Long;
        while (h.Status.DispatcherInUse != n)
        {
            if (DateTime.UtcNow > end) Assert.Fail($"dispatcher_in_use stayed {h.Status.DispatcherInUse}, expected {n}");
            await Task.Delay(1);
        }
    }

    [Fact]
    public async Task A_continuation_blocked_in_user_code_holds_its_dispatcher_slot()
    {
        var srv = new Server();
        using var p = new Pair(srv.Register, null, srv.Release);
        using var warm = p.Client.RequestToChannel("svc").Payload("echo", B("w"));
        await Bound.Within(warm.Async().AsTask());
        await InUse(p.Client, 0);
        using var block = new ManualResetEventSlim(false);
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        // "hold": the continuation is registered before the reply exists, so
        // it runs in the completion's pool work item, not on this thread.
        using var call = p.Client.RequestToChannel("svc").Payload("hold", B("x"));
        var t = call.Async().AsTask().ContinueWith(_ =>
        {
            entered.TrySetResult();
            block.Wait();
            return Native.zlink_in_runtime_context();
        }, TaskContinuationOptions.ExecuteSynchronously);
        try
        {
            await Bound.Within(srv.Started.Task);
            srv.Release();
            await Bound.Within(entered.Task);
            await InUse(p.Client, 1);
            Assert.False(t.IsCompleted);
        }
        finally { block.Set(); }
        Assert.Equal(0, await Bound.Within(t));   // application code, not a runtime context
        await InUse(p.Client, 0);
    }

    [Fact]
    public async Task A_continuation_may_shut_its_own_host_down()
    {
        var srv = new Server();
        using var p = new Pair(srv.Register, null, srv.Release);
        using var call = p.Client.RequestToChannel("svc").Payload("hold", B("x"));
        var onPool = false;
        var t = call.Async().AsTask().ContinueWith(_ =>
        {
            onPool = Thread.CurrentThread.IsThreadPoolThread;
            p.Client.Shutdown(TimeSpan.FromSeconds(5));
            return p.Client.State;
        }, TaskContinuationOptions.ExecuteSynchronously);
        await Bound.Within(srv.Started.Task);
        srv.Release();   // the reply comes after the continuation was registered
        Assert.Equal(HostState.Stopped, await Bound.Within(t));
        Assert.True(onPool, "the continuation ran in the completion's pool work item");
    }

    [Fact]
    public async Task Success_is_delivered_exactly_once_per_request()
    {
        var srv = new Server();
        long before;
        var ops = new RequestCall[20];
        using (var p = new Pair(srv.Register, null, srv.Release))
        {
            before = Interlocked.Read(ref Operation.Delivered);
            var tasks = Enumerable.Range(0, 20).Select(i =>
            {
                ops[i] = p.Client.RequestToChannel("svc").Payload("echo", B("m" + i));
                return ops[i].Async().AsTask();
            }).ToArray();
            var replies = await Bound.Within(Task.WhenAll(tasks));
            for (int i = 0; i < 20; i++)
            {
                Assert.Equal("echo", replies[i].Packet);
                Assert.Equal("m" + i, Encoding.UTF8.GetString(replies[i].Payload));
            }
        }
        // both hosts stopped: every completion function has run.
        Assert.Equal(20, Interlocked.Read(ref Operation.Delivered) - before);
    }

    [Fact]
    public async Task Cancel_is_delivered_once_as_OperationCanceledException()
    {
        var srv = new Server();
        long before;
        using (var p = new Pair(srv.Register, null, srv.Release))
        {
            before = Interlocked.Read(ref Operation.Delivered);
            using var cts = new CancellationTokenSource();
            var t = p.Client.RequestToChannel("svc").Payload("hold", B("x")).Async(cts.Token).AsTask();
            await Bound.Within(srv.Started.Task);
            cts.Cancel();
            var e = await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Bound.Within(t));
            Assert.Equal(cts.Token, e.CancellationToken);
            srv.Release();   // the late reply finds the call decided
        }
        Assert.Equal(1, Interlocked.Read(ref Operation.Delivered) - before);
    }

    [Fact]
    public async Task A_pre_cancelled_token_never_starts_the_call()
    {
        var srv = new Server();
        using var p = new Pair(srv.Register, null, srv.Release);
        long before = Interlocked.Read(ref Operation.Delivered);
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        var vt = p.Client.RequestToChannel("svc").Payload("hold", B("x")).Async(cts.Token);
        Assert.True(vt.IsCanceled);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => vt.AsTask());
        var one = p.Client.SendToChannel("svc").Payload("note", B("n")).Async(cts.Token);
        Assert.True(one.IsCanceled);
        Assert.Equal(0, Interlocked.Read(ref Operation.Delivered) - before);
        Assert.Equal(0ul, p.Server.OwnerStatus(OwnerKind.Channel, "svc").AcceptedSeq);
    }

    [Fact]
    public async Task Timeout_is_delivered_once_as_DeadlineExceeded()
    {
        var srv = new Server();
        long before;
        using (var p = new Pair(srv.Register, null, srv.Release))
        {
            before = Interlocked.Read(ref Operation.Delivered);
            var t = p.Client.RequestToChannel("svc").Payload("hold", B("x")).Timeout(TimeSpan.FromMilliseconds(100)).Async().AsTask();
            var e = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => Bound.Within(t));
            Assert.Equal(ErrorKind.DeadlineExceeded, e.Kind);
            srv.Release();
        }
        Assert.Equal(1, Interlocked.Read(ref Operation.Delivered) - before);
    }

    [Fact]
    public async Task Shutdown_during_a_request_is_delivered_once_as_ShuttingDown()
    {
        var srv = new Server();
        long before;
        using (var p = new Pair(srv.Register, null, srv.Release))
        {
            before = Interlocked.Read(ref Operation.Delivered);
            var t = p.Client.RequestToChannel("svc").Payload("hold", B("x")).Async().AsTask();
            await Bound.Within(srv.Started.Task);
            await p.Client.ShutdownAsync(TimeSpan.FromMilliseconds(50));
            var e = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => Bound.Within(t));
            Assert.Equal(ErrorKind.ShuttingDown, e.Kind);
            Assert.Equal(HostState.Stopped, p.Client.State);
            var late = p.Client.SendToChannel("svc").Payload("note", B("late")).Async().AsTask();
            var e2 = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => late);
            Assert.Equal(ErrorKind.ShuttingDown, e2.Kind);
            srv.Release();
        }
        Assert.Equal(1, Interlocked.Read(ref Operation.Delivered) - before);
    }

    [Fact]
    public async Task One_way_completes_at_admission_and_reaches_the_handler()
    {
        var srv = new Server();
        long before;
        using (var p = new Pair(srv.Register, null, srv.Release))
        {
            before = Interlocked.Read(ref Operation.Delivered);
            await Bound.Within(p.Client.SendToChannel("svc").Payload("note", B("hello")).Metadata("k", "v").Async().AsTask());
            // the request behind it on the same FIFO is answered after the note's turn
            await Bound.Within(p.Client.RequestToChannel("svc").Payload("echo", B("after")).Async().AsTask());
        }
        Assert.Equal(new[] { "hello|v" }, srv.Seen.ToArray());
        Assert.Equal(2, Interlocked.Read(ref Operation.Delivered) - before);
    }

    [Fact]
    public async Task Typed_request_and_reply()
    {
        var srv = new Server();
        using var p = new Pair(srv.Register, null, srv.Release);
        var pong = await Bound.Within(p.Client.RequestToChannel("svc").Payload("ping", new Ping(41)).Async<Pong>().AsTask());
        Assert.Equal(new Pong(42, "server"), pong);
        var pong2 = await Task.Run(() => p.Client.RequestToChannel("svc").Payload("ping", new Ping(1)).Submit<Pong>());
        Assert.Equal(2, pong2.N);
    }

    [Fact]
    public async Task Packet_names_and_content_types_follow_each_message()
    {
        // The binding keeps the last decoded packet name and content type to
        // compare the next against: alternating and repeated values must each
        // come through as sent, on the turn and on the reply.
        var seen = new ConcurrentQueue<string>();
        using var p = new Pair(h =>
        {
            foreach (var (packet, answer, type) in new[] { ("a", "alpha", "text/a"), ("b", "beta-longer", "application/b"), ("c", "gamma", "") })
                h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, packet, t =>
                {
                    seen.Enqueue(t.Packet + "|" + t.ContentType);
                    t.Respond(answer, t.Payload, type);
                });
        });
        var order = new[] { ("a", "x/1"), ("a", "x/1"), ("b", "x/22"), ("a", ""), ("c", "x/1"), ("c", "x/1"), ("b", "x/22") };
        var want = new System.Collections.Generic.Dictionary<string, (string, string)>
        { ["a"] = ("alpha", "text/a"), ["b"] = ("beta-longer", "application/b"), ["c"] = ("gamma", "") };
        foreach (var (packet, type) in order)
        {
            using var call = p.Client.RequestToChannel("svc").Payload(packet, B(packet), type);
            var reply = await Bound.Within(call.Async().AsTask());
            Assert.Equal(want[packet].Item1, reply.Packet);
            Assert.Equal(want[packet].Item2, reply.ContentType);
            Assert.Equal(packet, Encoding.UTF8.GetString(reply.Payload));
        }
        Assert.Equal(order.Select(o => o.Item1 + "|" + o.Item2), seen.ToArray());
    }

    [Fact]
    public async Task Handler_failures_map_to_error_kinds()
    {
        var srv = new Server();
        using var p = new Pair(srv.Register, null, srv.Release);
        var e = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => Bound.Within(p.Client.RequestToChannel("svc").Payload("boom", B("")).Async().AsTask()));
        Assert.Equal(ErrorKind.InternalFailure, e.Kind);
        var r = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => Bound.Within(p.Client.RequestToChannel("svc").Payload("refuse", B("")).Async().AsTask()));
        Assert.Equal(ErrorKind.Rejected, r.Kind);
        Assert.Contains("no thanks", r.Message);
        var nf = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => Bound.Within(p.Client.RequestToChannel("nope").Payload("x", B("")).Async().AsTask()));
        Assert.Equal(ErrorKind.NotFound, nf.Kind);
    }

    [Fact]
    public async Task An_async_handler_keeps_its_turn_until_its_task_completes()
    {
        var srv = new Server();
        using var p = new Pair(srv.Register, null, srv.Release);
        var t = p.Client.RequestToChannel("svc").Payload("hold", B("kept")).Async().AsTask();
        await Bound.Within(srv.Started.Task);
        // the handler returned to the C worker at its first await: the turn must still be open
        var st = p.Server.OwnerStatus(OwnerKind.Channel, "svc");
        Assert.True(st.Busy);
        Assert.Equal(1ul, st.RunningRecords);
        Assert.Equal(1ul, p.Server.Status.TurnsRunning);
        Assert.False(t.IsCompleted);
        srv.Release();
        var reply = await Bound.Within(t);
        Assert.Equal("held", reply.Packet);
        Assert.Equal("kept", Encoding.UTF8.GetString(reply.Payload));
    }

    [Fact]
    public async Task Submit_in_a_handler_is_InvalidOperation_also_after_an_await()
    {
        var kinds = new ConcurrentQueue<string>();
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Host? client = null;
        void Handlers(Host h)
        {
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "echo", t => t.Reply("echo", t.Payload));
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "go", async t =>
            {
                try
                {
                    kinds.Enqueue("ctx=" + RuntimeContextSync.InRuntimeContext);
                    try { t.Host.RequestToChannel("loop").Payload("echo", B("")).Submit(); kinds.Enqueue("sync:none"); }
                    catch (ZLinkFrameworkException e) { kinds.Enqueue("sync:" + e.Kind); }
                    await Task.Yield();
                    kinds.Enqueue("ctx=" + RuntimeContextSync.InRuntimeContext);
                    try { t.Host.RequestToChannel("loop").Payload("echo", B("")).Submit(); kinds.Enqueue("after-await:none"); }
                    catch (ZLinkFrameworkException e) { kinds.Enqueue("after-await:" + e.Kind); }
                    // (an unmarked thread would block in Shutdown on this very turn: not tried there)
                    if (!RuntimeContextSync.InRuntimeContext) kinds.Enqueue("shutdown:not-tried");
                    else try { t.Host.Shutdown(); kinds.Enqueue("shutdown:none"); }
                    catch (ZLinkFrameworkException e) { kinds.Enqueue("shutdown:" + e.Kind); }
                }
                finally { done.SetResult(); }
            });
        }
        using var p = new Pair(Handlers);
        client = p.Client;
        await Bound.Within(p.Client.SendToChannel("svc").Payload("go", B("")).Async().AsTask());
        await Bound.Within(done.Task);
        Assert.Equal(new[] { "ctx=True", "sync:InvalidOperation", "ctx=True", "after-await:InvalidOperation", "shutdown:InvalidOperation" }, kinds.ToArray());
        Assert.False(RuntimeContextSync.InRuntimeContext);
    }

    [Fact]
    public async Task Second_terminator_and_yield_are_InvalidOperation()
    {
        var srv = new Server();
        using var p = new Pair(srv.Register, null, srv.Release);
        using var call = p.Client.RequestToChannel("svc").Payload("echo", B("once"));
        var first = call.Async();
        var second = call.Async();
        var e = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => second.AsTask());
        Assert.Equal(ErrorKind.InvalidOperation, e.Kind);
        Assert.Equal("once", Encoding.UTF8.GetString((await Bound.Within(first.AsTask())).Payload));
        var y = await Assert.ThrowsAsync<ZLinkFrameworkException>(() => p.Client.RequestToChannel("svc").Payload("echo", B("")).Yield<Pong>().AsTask());
        Assert.Equal(ErrorKind.InvalidOperation, y.Kind);
    }

    [Fact]
    public async Task Names_outside_the_BMP_cross_as_UTF8_and_strings_C_cannot_take_are_refused()
    {
        const string packet = "echo-\u00e9-\u4e2d-\U0001F600";
        using var p = new Pair(h => h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, packet,
                                                 t => t.Reply(t.Packet, B(t.Packet))));
        using var call = p.Client.RequestToChannel("svc").Payload(packet, B("x"));
        var reply = await Bound.Within(call.Async().AsTask());
        Assert.Equal(packet, reply.Packet);
        Assert.Equal(packet, Encoding.UTF8.GetString(reply.Payload));
        foreach (var bad in new[] { "ec\0ho", "echo\ud83d", "\ude00echo" })
        {
            var e = Assert.Throws<ZLinkArgumentException>(() => p.Client.RequestToChannel("svc").Payload(bad, B("x")));
            Assert.Equal(Results.Framework.InvalidArgument, e.Result);
        }
        using var fffd = p.Client.RequestToChannel("svc").Payload("echo-\ufffd", B("x")); // a real U+FFFD is text
    }

    [Fact]
    public void Invalid_arguments_are_refused_by_the_runtime()
    {
        using var h = new Host("args");
        Assert.Throws<ZLinkArgumentException>(() => h.RequestToChannel("c").Timeout(TimeSpan.Zero));
        Assert.Throws<ZLinkArgumentException>(() => h.SetOption(HostOption.HandlerThreads, 0));
        Assert.Equal(HostState.Preparing, h.State);
        Assert.Equal(HostState.Preparing, h.Status.State);
        Assert.True(h.Capacity.EffectiveMax > 0);
    }
}
