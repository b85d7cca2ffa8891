// PlCases.cs — the PL cases (seed 004 §9) that the .NET binding's typed
// Core surface can express, ported from conformance/c/pl_*.c. The others
// probe the C ABI with NULL, forged or wrong-kind handles, which the
// SafeHandle-typed .NET API cannot pass; they print `missing`.
using System;
using System.IO.Pipes;
using System.Diagnostics;
using System.Text;

namespace ZLink.Conformance;

internal static class PlCases
{
    private const long EdgeBoundMs = 5000;

    /// <summary>An OS pipe: its read end's fd, and a byte written or read on demand.</summary>
    private sealed class OsPipe : IDisposable
    {
        private readonly AnonymousPipeServerStream _w = new(PipeDirection.Out);
        private readonly AnonymousPipeClientStream _r;
        public OsPipe() { _r = new AnonymousPipeClientStream(PipeDirection.In, _w.ClientSafePipeHandle); }
        public int ReadFd => (int)_w.ClientSafePipeHandle.DangerousGetHandle();
        public void Write() { _w.WriteByte(1); _w.Flush(); }
        public void Read() => Check.Eq(1, _r.ReadByte(), "the pipe's byte");
        public void Dispose() { _r.Dispose(); _w.Dispose(); }
    }

    private static (Context ctx, Socket a, Socket b) PairLink(string name)
    {
        var ctx = new Context();
        var a = ctx.Socket(SocketType.Pair);
        var b = ctx.Socket(SocketType.Pair);
        string ep = $"inproc://pl-{name}-{Environment.ProcessId}";
        a.Bind(ep);
        b.Connect(ep);
        return (ctx, a, b);
    }

    // ------------------------------------------------------------- PL-13

    public static void Pl13(CaseParams p)
    {
        var (ctx, a, b) = PairLink("pl13");
        a.Send(Encoding.UTF8.GetBytes("x"));
        using var t = new Timer();
        t.Start(TimeSpan.FromMilliseconds(1), 1);
        using var pipe = new OsPipe();
        pipe.Write();
        using var poller = new Poller();
        Check.Eq(0, poller.TryAddTimer(t, 0), "add the timer (no user data)");
        var ev = new PollerEvent[8];
        // The timer alone first: this wait ends at its fire and consumes nothing.
        Check.Eq(1, poller.Wait(ev, (int)(EdgeBoundMs * Program.TimeoutMult)), "the timer's fire");
        Check.Eq(0, poller.TryAdd(b, PollEvents.In, 11), "add the socket");
        Check.Eq(0, poller.TryAddFd(pipe.ReadFd, PollEvents.In, 22), "add the fd");
        Check.Eq(3, poller.Wait(ev, 0), "three sources ready");
        int seen = 0;
        for (int i = 0; i < 3; i++)
        {
            var e = ev[i];
            switch (e.Kind)
            {
                case PollerSourceKind.Socket:
                    Check.True(e.Socket == b.NativeHandle && e.UserData == 11, "socket event's socket and user data");
                    Check.True(e.Timer == 0 && e.Fd == -1, "socket event's other fields");
                    Check.Eq(PollEvents.In, e.Events, "socket event bits");
                    seen |= 1;
                    break;
                case PollerSourceKind.Fd:
                    Check.True(e.Fd == pipe.ReadFd && e.UserData == 22, "fd event's fd and user data");
                    Check.True(e.Socket == 0 && e.Timer == 0, "fd event's other fields");
                    Check.Eq(PollEvents.In, e.Events, "fd event bits");
                    seen |= 2;
                    break;
                case PollerSourceKind.Timer:
                    Check.True(e.Timer == t.NativeHandle && e.UserData == 0, "timer event's timer and user data");
                    Check.True(e.Socket == 0 && e.Fd == -1, "timer event's other fields");
                    Check.Eq(PollEvents.In, e.Events, "timer event bits");
                    seen |= 4;
                    break;
                default:
                    throw new CheckFailed("unknown source kind " + (int)e.Kind);
            }
        }
        Check.Eq(7, seen, "one event per kind");
        // Draining each source clears its readiness.
        Check.Eq("x", Encoding.UTF8.GetString(b.Recv()[0]), "the record");
        pipe.Read();
        Check.Eq(0, t.TryRecv(out _, dontWait: true), "the timer's fires");
        Check.Eq(0, poller.Wait(ev, 0), "nothing ready after draining");
        poller.Dispose();
        a.Dispose();
        b.Dispose();
        ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-26

    public static void Pl26(CaseParams p)
    {
        using var ctx = new Context();
        var s = ctx.Socket(SocketType.Pair);
        using var poller = new Poller();
        var ev = new PollerEvent[2];
        var sw = Stopwatch.StartNew();
        Check.Eq(0, poller.Wait(ev, -1), "an empty poller returns at once");
        Check.Eq(0, poller.TryAdd(s, PollEvents.None), "a zero mask is a registration");
        Check.Eq(0, poller.TryAddFd(0, PollEvents.None), "fd 0 with a zero mask");
        Check.Eq(0, poller.Wait(ev, -1), "only zero masks: at once");
        Check.True(sw.ElapsedMilliseconds < EdgeBoundMs * Program.TimeoutMult, "returned at once");
        // A closed socket is not waitable either; its POLLERR comes first (the zero mask does not hide it).
        s.Dispose();
        Check.Eq(1, poller.Wait(ev, -1), "the closed socket's POLLERR");
        Check.Eq(PollEvents.Err, ev[0].Events, "POLLERR");
        Check.Eq(0, poller.Wait(ev, -1), "once only, then at once 0");
        Check.True(sw.ElapsedMilliseconds < EdgeBoundMs * Program.TimeoutMult, "returned at once");
    }

    // ------------------------------------------------------------- PL-02

    public static void Pl02(CaseParams p)
    {
        int lateMs = (int)p.Int("late_edge_ms");
        var (ctx, a, b) = PairLink("pl02");
        var items = new[] { new PollItem(b, PollEvents.In) };
        var sw = Stopwatch.StartNew();
        Check.Eq(0, ZLinkPoll.Poll(items, 0), "timeout 0");
        Check.True(sw.ElapsedMilliseconds < EdgeBoundMs * Program.TimeoutMult, "timeout 0 returns at once");
        // -1: the record comes late on purpose (the only delay in the case); the wait is still there.
        var waiter = new System.Threading.Tasks.Task<(int n, PollEvents rev, long ms)>(() =>
        {
            var it = new[] { new PollItem(b, PollEvents.In) };
            var w = Stopwatch.StartNew();
            int n = ZLinkPoll.Poll(it, -1);
            return (n, it[0].Revents, w.ElapsedMilliseconds);
        }, System.Threading.Tasks.TaskCreationOptions.LongRunning);
        waiter.Start();
        System.Threading.Thread.Sleep(lateMs);
        Check.True(!waiter.IsCompleted, "the infinite wait is still waiting");
        a.Send(Encoding.UTF8.GetBytes("x"));
        var (n, rev, ms) = Check.Wait(waiter, (int)EdgeBoundMs, "the infinite wait's edge");
        Check.Eq(1, n, "ready count");
        Check.Eq(PollEvents.In, rev, "revents");
        Check.True(ms >= lateMs, $"waited {ms} ms, at least {lateMs}");
        Check.Eq("x", Encoding.UTF8.GetString(b.Recv()[0]), "the record");
        a.Dispose(); b.Dispose(); ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-03

    public static void Pl03(CaseParams p)
    {
        var (ctx, a, b) = PairLink("pl03");
        var items = new[] { new PollItem(b, PollEvents.In), new PollItem(a, PollEvents.None) };
        items[0].Revents = (PollEvents)0x7777;   // garbage in: cleared on entry
        items[1].Revents = (PollEvents)0x5555;   // also for an item with no events
        Check.Eq(0, ZLinkPoll.Poll(items, 0), "nothing ready");
        Check.Eq(PollEvents.None, items[0].Revents, "item 0 cleared");
        Check.Eq(PollEvents.None, items[1].Revents, "item 1 cleared");
        a.Send(Encoding.UTF8.GetBytes("x"));
        Check.Eq(1, ZLinkPoll.Poll(items, 0), "one ready");
        Check.Eq(PollEvents.In, items[0].Revents, "item 0 IN");
        Check.Eq(PollEvents.None, items[1].Revents, "item 1 nothing");
        // The snapshot does not follow later changes; the next call does.
        Check.Eq("x", Encoding.UTF8.GetString(b.Recv()[0]), "the record");
        Check.Eq(PollEvents.In, items[0].Revents, "still the snapshot");
        Check.Eq(0, ZLinkPoll.Poll(items, 0), "nothing ready again");
        Check.Eq(PollEvents.None, items[0].Revents, "cleared by the next call");
        // Even a failing call clears it first.
        items[0].Revents = (PollEvents)9;
        items[1].Events = (PollEvents)1024;
        var e = Assert(() => ZLinkPoll.Poll(items, 0));
        Check.Eq("ZLINK_CONFIG_INVALID_ARGUMENT", e.Name, "a bad bit");
        Check.Eq("EINVAL", e.ErrnoName, "its errno");
        Check.Eq(PollEvents.None, items[0].Revents, "cleared before failing");
        a.Dispose(); b.Dispose(); ctx.Dispose();
    }

    private static ZLinkCoreException Assert(Action a)
    {
        try { a(); }
        catch (ZLinkCoreException e) { return e; }
        throw new CheckFailed("the call succeeded, expected a Core failure");
    }
}
