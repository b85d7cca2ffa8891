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

    private static (Context ctx, Socket a, Socket b) PairLink(string name, string tr = "inproc")
    {
        var ctx = new Context();
        var a = ctx.Socket(SocketType.Pair);
        var b = ctx.Socket(SocketType.Pair);
        a.Bind(tr == "tcp" ? "tcp://127.0.0.1:0" : $"inproc://pl-{name}-{Environment.ProcessId}");
        b.Connect(a.LastEndpoint);
        if (tr == "tcp")
        {
            // connected both ways: a record from b reaches a
            b.Send(Encoding.UTF8.GetBytes("hello"));
            a.SetOption(0x3012, 30000 * Program.TimeoutMult);
            Check.Eq("hello", Encoding.UTF8.GetString(a.Recv()[0]), "the tcp link is up");
        }
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

    /// <summary>A wait on another thread (zlt_waiter_t); Start returns once the wait is
    /// active (the poller answers BUSY).</summary>
    private sealed class Waiter
    {
        public readonly PollerEvent[] Ev = new PollerEvent[8];
        public int Rc, Result;
        private readonly System.Threading.Thread _t;
        public Waiter(Poller p, int timeoutMs)
        {
            _t = new System.Threading.Thread(() => Rc = p.TryWait(Ev, timeoutMs, out Result)) { IsBackground = true };
            _t.Start();
            Check.Eventually(() => !_t.IsAlive || (p.TrySize(out int r) < 0 && r == Results.Config.Busy), 5000, "the wait is active");
        }
        public void Join() => Check.True(_t.Join(Check.Bound((int)EdgeBoundMs)), "the wait ended at the edge");
        public void GotOne(PollerSourceKind kind, PollEvents events)
        {
            Check.Eq(1, Rc, "the waiter's event count");
            Check.Eq(kind, Ev[0].Kind, "the waiter's source kind");
            Check.Eq(events, Ev[0].Events, "the waiter's bits");
        }
    }

    private static void ExpectConfig(int r, int want, string errno, string what)
    {
        Check.Eq(ZLinkCore.ResultName(want), ZLinkCore.ResultName(r), what);
        Check.Eq(errno, ZLinkCore.LastErrnoName, what + " errno");
    }

    // ------------------------------------------------------------- PL-05

    public static void Pl05(CaseParams p)
    {
        // A timer held by one poller cannot be added to another.
        using (var t = new Timer())
        {
            var p1 = new Poller();
            var p2 = new Poller();
            Check.Eq(0, p1.TryAddTimer(t), "p1 takes the timer");
            ExpectConfig(p2.TryAddTimer(t), Results.Config.InvalidState, "EBUSY", "p2 add_timer");
            ExpectConfig(p2.TryAdd(t, PollEvents.In), Results.Config.InvalidState, "EBUSY", "p2 add (generic)");
            Check.Eq(0, p2.Size, "p2 holds nothing");
            Check.Eq(0, p1.TryRemoveTimer(t), "p1 lets go");
            Check.Eq(0, p2.TryAddTimer(t), "p2 takes it");
            Check.Eq(0, p2.TryDestroy(), "destroying p2 lets go as well");
            Check.Eq(0, p1.TryAddTimer(t), "p1 takes it again");
            Check.Eq(0, p1.TryDestroy(), "p1 destroyed");
            Check.Eq(0, t.TryDestroy(), "the free timer destroyed");
        }
        // A registered timer cannot be destroyed.
        var tm = new Timer();
        using var poller = new Poller();
        Check.Eq(0, poller.TryAddTimer(tm), "registered");
        ExpectConfig(tm.TryDestroy(), Results.Close.Busy, "EBUSY", "destroying a registered timer");
        tm.Start(TimeSpan.FromMilliseconds(1), 1);   // still registered and working
        var ev = new PollerEvent[2];
        Check.Eq(1, poller.Wait(ev, (int)(EdgeBoundMs * Program.TimeoutMult)), "the timer fires");
        Check.Eq(tm.NativeHandle, ev[0].Timer, "its event");
        Check.Eq(0, poller.TryRemove(tm), "generic remove works too");
        Check.Eq(0, tm.TryDestroy(), "destroyed once free");
    }

    // ------------------------------------------------------------- PL-21

    public static void Pl21(CaseParams p)
    {
        using var pipe = new OsPipe();
        var poller = new Poller();
        Check.Eq(0, poller.TryAddFd(pipe.ReadFd, PollEvents.In), "add the fd");
        var w = new Waiter(poller, (int)(60000 * Program.TimeoutMult));
        ExpectConfig(poller.TryDestroy(), Results.Close.Busy, "EBUSY", "destroy during a wait");
        pipe.Write();
        w.Join();
        w.GotOne(PollerSourceKind.Fd, PollEvents.In);
        Check.Eq(0, poller.TryDestroy(), "destroy after the wait");
    }

    // ------------------------------------------------------------- PL-22

    public static void Pl22(CaseParams p)
    {
        var (ctx, a, b) = PairLink("pl22");
        var other = ctx.Socket(SocketType.Pair);
        var t = new Timer();
        var t2 = new Timer();
        using var pipe = new OsPipe();
        using var pipe2 = new OsPipe();
        var poller = new Poller();
        Check.Eq(0, poller.TryAdd(b, PollEvents.In), "add b");
        Check.Eq(0, poller.TryAddFd(pipe.ReadFd, PollEvents.In), "add the fd");
        Check.Eq(0, poller.TryAddTimer(t), "add t");
        var w = new Waiter(poller, (int)(60000 * Program.TimeoutMult));
        Check.Eq(-1, poller.TrySize(out int sr), "size during a wait");
        ExpectConfig(sr, Results.Config.Busy, "EBUSY", "size");
        ExpectConfig(poller.TryAdd(other, PollEvents.In), Results.Config.Busy, "EBUSY", "add");
        ExpectConfig(poller.TryModify(b, PollEvents.Out), Results.Config.Busy, "EBUSY", "modify");
        ExpectConfig(poller.TryRemove(b), Results.Config.Busy, "EBUSY", "remove");
        ExpectConfig(poller.TryAddFd(pipe2.ReadFd, PollEvents.In), Results.Config.Busy, "EBUSY", "add_fd");
        ExpectConfig(poller.TryModifyFd(pipe.ReadFd, PollEvents.Out), Results.Config.Busy, "EBUSY", "modify_fd");
        ExpectConfig(poller.TryRemoveFd(pipe.ReadFd), Results.Config.Busy, "EBUSY", "remove_fd");
        ExpectConfig(poller.TryAddTimer(t2), Results.Config.Busy, "EBUSY", "add_timer");
        ExpectConfig(poller.TryRemoveTimer(t), Results.Config.Busy, "EBUSY", "remove_timer");
        var ev = new PollerEvent[4];
        Check.Eq(-1, poller.TryWait(ev, 0, out int wr), "a second wait");
        ExpectConfig(wr, Results.Config.Busy, "EBUSY", "wait");
        // Nothing changed: b still wakes the wait with IN (not OUT).
        a.Send(Encoding.UTF8.GetBytes("x"));
        w.Join();
        w.GotOne(PollerSourceKind.Socket, PollEvents.In);
        Check.Eq(3, poller.Size, "three registrations");
        Check.Eq(0, t2.TryDestroy(), "t2 was not taken");
        ExpectConfig(t.TryDestroy(), Results.Close.Busy, "EBUSY", "t was not released");
        Check.Eq("x", Encoding.UTF8.GetString(b.Recv()[0]), "the record");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        Check.Eq(0, t.TryDestroy(), "t destroyed once free");
        a.Dispose(); b.Dispose(); other.Dispose(); ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-04

    public static void Pl04(CaseParams p)
    {
        using var ctx = new Context();
        var s = ctx.Socket(SocketType.Pair);
        var t = new Timer();
        using var pipe = new OsPipe();
        var poller = new Poller();
        Check.Eq(0, poller.TryAdd(s, PollEvents.In), "add the socket");
        ExpectConfig(poller.TryAdd(s, PollEvents.Out), Results.Config.Conflict, "EEXIST", "the socket again");
        Check.Eq(0, poller.TryAddFd(pipe.ReadFd, PollEvents.In), "add the fd");
        ExpectConfig(poller.TryAddFd(pipe.ReadFd, PollEvents.Out), Results.Config.Conflict, "EEXIST", "the fd again");
        Check.Eq(0, poller.TryAddTimer(t), "add the timer");
        ExpectConfig(poller.TryAddTimer(t), Results.Config.Conflict, "EEXIST", "the timer again");
        ExpectConfig(poller.TryAdd(t, PollEvents.In), Results.Config.Conflict, "EEXIST", "the timer again (generic add)");
        Check.Eq(3, poller.Size, "three registrations");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        Check.Eq(0, t.TryDestroy(), "timer destroyed");
        s.Dispose();
    }

    // ------------------------------------------------------------- PL-06

    public static void Pl06(CaseParams p)
    {
        foreach (var tr in p.Strings("transports"))
        {
            var (ctx, a, b) = PairLink("pl06", tr);
            var p1 = new Poller();
            var p2 = new Poller();
            Check.Eq(0, p1.TryAdd(b, PollEvents.In, 1), "p1 adds b for IN");
            Check.Eq(0, p2.TryAdd(b, PollEvents.In | PollEvents.Out, 2), "p2 adds b for IN|OUT");
            var ev = new PollerEvent[4];
            Check.Eq(0, p1.Wait(ev, 0), "p1: nothing (IN only)");
            Check.Eq(1, p2.Wait(ev, 0), "p2: OUT");
            Check.Eq(PollEvents.Out, ev[0].Events, "p2's bits");
            Check.Eq((nint)2, ev[0].UserData, "p2's user data");
            Check.Eq(0, p2.TryModify(b, PollEvents.In), "p2 modifies to IN");
            // Both wait on other threads; one record wakes both.
            var w1 = new Waiter(p1, (int)(60000 * Program.TimeoutMult));
            var w2 = new Waiter(p2, (int)(60000 * Program.TimeoutMult));
            a.Send(Encoding.UTF8.GetBytes("x"));
            w1.Join();
            w2.Join();
            w1.GotOne(PollerSourceKind.Socket, PollEvents.In);
            w2.GotOne(PollerSourceKind.Socket, PollEvents.In);
            Check.True(w1.Ev[0].UserData == 1 && w2.Ev[0].UserData == 2, "each its own user data");
            // Independent registrations: removing one leaves the other.
            Check.Eq(0, p1.TryRemove(b), "p1 removes b");
            Check.Eq(0, p1.Wait(ev, 0), "p1: nothing");
            Check.Eq(1, p2.Wait(ev, 0), "p2: still IN");
            Check.Eq("x", Encoding.UTF8.GetString(b.Recv()[0]), "the record");
            Check.Eq(0, p2.Wait(ev, 0), "p2: drained");
            Check.Eq(0, p1.TryDestroy(), "p1 destroyed");
            Check.Eq(0, p2.TryDestroy(), "p2 destroyed");
            a.Dispose(); b.Dispose(); ctx.Dispose();
        }
    }
}
