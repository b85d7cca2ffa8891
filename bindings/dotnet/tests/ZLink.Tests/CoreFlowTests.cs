// CoreFlowTests.cs — the flow surface of CoreFlow.cs: the synchronous
// reply, the receive flow state and the socket monitor, each asserted
// through what the peer observes.
using System;
using System.Text;
using Xunit;

namespace ZLink.Tests;

public class CoreFlowTests
{
    private const int RcvTimeo = 0x3012, SndTimeo = 0x3013, Linger = 0x300A;
    private const uint SendFlowPaused = 1u << 16, SendFlowResumed = 1u << 17;
    private static byte[] B(string s) => Encoding.UTF8.GetBytes(s);

    private static (Context, Socket r, Socket d) Pair(string name)
    {
        var ctx = new Context();
        var r = ctx.Socket(SocketType.Router);
        var d = ctx.Socket(SocketType.Dealer);
        foreach (var s in new[] { r, d }) { s.SetOption(RcvTimeo, 30000); s.SetOption(SndTimeo, 30000); s.SetOption(Linger, 0); }   // failure bounds
        r.SetRoutingId(B("R"));
        d.SetRoutingId(B("D"));
        r.Bind("inproc://dotnet-flow-" + name);
        d.Connect("inproc://dotnet-flow-" + name);
        return (ctx, r, d);
    }

    [Fact]
    public void Sync_reply_answers_once_and_a_used_token_is_not_found()
    {
        var (ctx, r, d) = Pair("reply");
        using (ctx) using (r) using (d)
        {
            Assert.Equal(0, d.TryRequest(default, new[] { B("ask") }, false, 0, 0, out ulong id));
            Assert.Equal(0, r.TryRouterRecv(out var src, out ulong token, out _));
            Assert.Equal(Results.Submit.Ok, r.TryReplyWait(src, token, new[] { B("answer") }));
            Assert.Equal(Results.Submit.NotFound, r.TryReplyWait(src, token, new[] { B("again") }));
            Assert.Equal(0, d.TryRecvCompletion(out var c));
            Assert.Equal(id, c!.Id);
            Assert.Equal(Results.Request.Ok, c.RequestResult);
            Assert.Equal("answer", Encoding.UTF8.GetString(c.ReplyParts[0]));
        }
    }

    [Fact]
    public void Paused_receiver_holds_the_peer_back_until_running()
    {
        var (ctx, r, d) = Pair("pause");
        using (ctx) using (r) using (d)
        {
            using var mon = d.OpenMonitor(SendFlowPaused | SendFlowResumed);
            Assert.Equal(0, d.TryRequest(default, new[] { B("hello") }, false, 0, 0, out _));   // the pipe is up
            Assert.Equal(0, r.TryRouterRecv(out _, out _, out _));
            Assert.Equal(Results.Config.Ok, r.TrySetReceiveFlow(true));
            // the PAUSE reaches D asynchronously: D's sends are admitted until it applies it
            int early = 0;
            ulong wt = 0;
            Check(() =>
            {
                int rc = d.TrySend(new[] { B("early") }, true, 7, out wt);
                if (rc == Results.Submit.Ok) { early++; return false; }
                Assert.Equal(Results.Submit.Backpressured, rc);
                return true;
            });
            Assert.NotEqual(0UL, wt);
            Assert.Equal(0, mon.TryRecv(out var ev, dontWait: true));
            Assert.Equal(SendFlowPaused, (uint)ev.Event);
            var st = mon.Status;
            Assert.NotEqual(0u, st.DetailFlags & MonitorStatus.DetailFlowState);
            Assert.Equal(1UL, st.FlowPausedConnections);
            for (int i = 0; i < early; i++)
            {
                Assert.Equal(0, r.TryRouterRecv(out _, out _, out var e));
                Assert.Equal("early", Encoding.UTF8.GetString(e[0]));
            }
            Assert.Equal(Results.Recv.NoData, r.TryRouterRecv(out _, out _, out _, dontWait: true));
            Assert.Equal(Results.Config.Ok, r.TrySetReceiveFlow(false));
            Assert.Equal(0, d.TryRecvCompletion(out var w));
            Assert.Equal(CompletionKind.Writable, w!.Kind);
            Assert.Equal(wt, w.Id);
            Assert.Equal(0, mon.TryRecv(out ev));
            Assert.Equal(SendFlowResumed, (uint)ev.Event);
            Assert.Equal(0UL, mon.Status.FlowPausedConnections);
            Assert.Equal(0, d.TrySend(new[] { B("now") }, true, 0, out _));
            Assert.Equal(0, r.TryRouterRecv(out var from, out ulong tok, out var parts));
            Assert.Equal("D", Encoding.UTF8.GetString(from));
            Assert.Equal(0UL, tok);
            Assert.Equal("now", Encoding.UTF8.GetString(parts[0]));
        }
    }

    [Fact]
    public void Monitor_counts_the_records_not_yet_received_and_send_rid_gives_a_wait_token()
    {
        var (ctx, r, d) = Pair("pending");
        using (ctx) using (r) using (d)
        {
            using var mon = r.OpenMonitor();
            Assert.Equal(0, d.TryRequest(default, new[] { B("hello") }, false, 0, 0, out _));
            Assert.Equal(0, r.TryRouterRecv(out _, out _, out _));
            for (int i = 0; i < 3; i++) d.Send(B("x" + i));
            // inproc: a completed send is in r's queue
            var st = mon.Status;
            Assert.NotEqual(0u, st.DetailFlags & MonitorStatus.DetailRcvPending);
            Assert.Equal(3UL, st.RcvPendingMsgs);
            Assert.Equal(0, r.TryRouterRecv(out _, out _, out _));
            Assert.Equal(2UL, mon.Status.RcvPendingMsgs);
            Assert.Equal(Results.Config.Ok, d.TrySetReceiveFlow(true));
            Check(() => r.TrySendTo(B("D"), new[] { B("y") }, true, 5, out ulong wt) == Results.Submit.Backpressured && wt != 0);
            Assert.Equal(Results.Config.Ok, d.TrySetReceiveFlow(false));
            Assert.Equal(0, r.TryRecvCompletion(out var w));
            Assert.Equal(CompletionKind.Writable, w!.Kind);
            Assert.Equal((nint)5, w.UserContext);
            // one monitor per socket: a second open is refused until Dispose closed the first
            Assert.Throws<ZLinkCoreException>(() => r.OpenMonitor());
            mon.Dispose();
            Assert.Throws<ObjectDisposedException>(() => mon.TryStatus(out _));
            using var again = r.OpenMonitor();
            Assert.Equal(0, again.TryStatus(out var st2));
            Assert.Equal(2UL, st2.RcvPendingMsgs);
        }
    }

    /// <summary>The PAUSE reaches the ROUTER asynchronously: until it does, its sends are
    /// admitted (and one is enough to see the refusal after).</summary>
    private static void Check(Func<bool> refused)
    {
        var until = DateTime.UtcNow.AddSeconds(30);
        while (!refused()) Assert.True(DateTime.UtcNow < until, "the peer's PAUSE never refused a send");
    }
}
