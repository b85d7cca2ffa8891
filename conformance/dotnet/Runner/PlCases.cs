// PlCases.cs — the PL cases (seed 004 §9) that the .NET binding's typed
// Core surface can express, ported from conformance/c/pl_*.c. NULL, forged
// and wrong-kind handles go through the binding's public raw-handle wrappers
// (Socket/Timer/Poller.FromHandle). Cases not ported print `missing`.
using System;
using System.IO.Pipes;
using System.Runtime.InteropServices;
using System.Diagnostics;
using System.Text;

namespace ZLink.Conformance;

internal static class PlCases
{
    internal const long EdgeBoundMs = 5000;

    /// <summary>An OS pipe: its read end's fd, and a byte written or read on demand.</summary>
    internal sealed class OsPipe : IDisposable
    {
        private readonly AnonymousPipeServerStream _w = new(PipeDirection.Out);
        private readonly AnonymousPipeClientStream _r;
        public OsPipe() { _r = new AnonymousPipeClientStream(PipeDirection.In, _w.ClientSafePipeHandle); }
        public int ReadFd => (int)_w.ClientSafePipeHandle.DangerousGetHandle();
        public int WriteFd => (int)_w.SafePipeHandle.DangerousGetHandle();
        public void Write() { _w.WriteByte(1); _w.Flush(); }
        public void Read() => Check.Eq(1, _r.ReadByte(), "the pipe's byte");
        public void Dispose() { _r.Dispose(); _w.Dispose(); }
    }

    internal static (Context ctx, Socket a, Socket b) PairLink(string name, string tr = "inproc")
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

    internal static ZLinkCoreException Assert(Action a)
    {
        try { a(); }
        catch (ZLinkCoreException e) { return e; }
        throw new CheckFailed("the call succeeded, expected a Core failure");
    }

    /// <summary>A wait on another thread (zlt_waiter_t); Start returns once the wait is
    /// active (the poller answers BUSY).</summary>
    internal sealed class Waiter
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

    internal static void ExpectConfig(int r, int want, string errno, string what)
    {
        Check.Eq(ZLinkCore.ResultName(want), ZLinkCore.ResultName(r), what);
        Check.Eq(errno, ZLinkCore.LastErrnoName, what + " errno");
    }

    // ------------------------------------------------------- raw handles

    /// <summary>128 zeroed bytes of native memory: something that is no handle at all.</summary>
    internal sealed class Junk : IDisposable
    {
        public readonly nint Ptr = Marshal.AllocHGlobal(128);
        public Junk() { Marshal.Copy(new byte[128], 0, Ptr, 128); }
        public Socket Socket => ZLink.Socket.FromHandle(Ptr);
        public Timer Timer => ZLink.Timer.FromHandle(Ptr);
        public Poller Poller => ZLink.Poller.FromHandle(Ptr);
        public void Dispose() => Marshal.FreeHGlobal(Ptr);
    }

    private static Socket NullSocket => Socket.FromHandle(0);
    private static Timer NullTimer => Timer.FromHandle(0);
    internal static Poller NullPoller => Poller.FromHandle(0);
    /// <summary>The same native object seen as another kind.</summary>
    private static Timer AsTimer(Socket s) => Timer.FromHandle(s.NativeHandle);

    // ------------------------------------------------------------- PL-07

    public static void Pl07(CaseParams p)
    {
        using var ctx = new Context();
        var s = ctx.Socket(SocketType.Pair);
        var other = ctx.Socket(SocketType.Pair);
        var t = new Timer();
        var poller = new Poller();
        Check.Eq(0, poller.TryAdd(other, PollEvents.In), "add other");
        ExpectConfig(poller.TryModify(s, PollEvents.In), Results.Config.NotFound, "ENOENT", "modify a missing socket");
        ExpectConfig(poller.TryRemove(s), Results.Config.NotFound, "ENOENT", "remove a missing socket");
        ExpectConfig(poller.TryModifyFd(0, PollEvents.In), Results.Config.NotFound, "ENOENT", "modify a missing fd");
        ExpectConfig(poller.TryRemoveFd(0), Results.Config.NotFound, "ENOENT", "remove a missing fd");
        ExpectConfig(poller.TryRemoveTimer(t), Results.Config.NotFound, "ENOENT", "remove_timer of a missing timer");
        ExpectConfig(poller.TryModify(t, PollEvents.In), Results.Config.NotFound, "ENOENT", "modify a missing timer");
        ExpectConfig(poller.TryRemove(t), Results.Config.NotFound, "ENOENT", "remove a missing timer");
        // Something that is no source at all is a bad handle, not a missing one.
        using (var junk = new Junk())
            ExpectConfig(poller.TryRemove(junk.Socket), Results.Config.InvalidHandle, "EFAULT", "remove a forged handle");
        ExpectConfig(poller.TryRemove(NullSocket), Results.Config.InvalidHandle, "EFAULT", "remove NULL");
        ExpectConfig(poller.TryRemoveTimer(AsTimer(s)), Results.Config.InvalidHandle, "EFAULT", "remove_timer of a socket");
        // A removed source is missing afterwards.
        Check.Eq(0, poller.TryRemove(other), "remove other");
        ExpectConfig(poller.TryRemove(other), Results.Config.NotFound, "ENOENT", "remove other again");
        Check.Eq(0, poller.Size, "no registration left");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        Check.Eq(0, t.TryDestroy(), "timer destroyed");
        s.Dispose(); other.Dispose();
    }

    // ------------------------------------------------------------- PL-08

    public static void Pl08(CaseParams p)
    {
        BadBits();
        UnsupportedBits();
    }

    private static void BadBits()
    {
        using var ctx = new Context();
        var s = ctx.Socket(SocketType.Pair);
        var t = new Timer();
        using var pipe = new OsPipe();
        var poller = new Poller();
        short[] bad = { 16 /* ZLINK_POLLITEMS_DFLT, no event bit */, 1 | 16, 128, 0x100, unchecked((short)0x8000), -1 };
        foreach (short b in bad)
        {
            ExpectConfig(poller.TryAdd(s, (PollEvents)b), Results.Config.InvalidArgument, "EINVAL", $"add socket 0x{b:x}");
            ExpectConfig(poller.TryAddFd(pipe.ReadFd, (PollEvents)b), Results.Config.InvalidArgument, "EINVAL", $"add fd 0x{b:x}");
        }
        ExpectConfig(poller.TryAddFd(-1, PollEvents.In), Results.Config.InvalidArgument, "EINVAL", "add fd -1");
        Check.Eq(0, poller.TryAdd(s, PollEvents.In), "add the socket");
        Check.Eq(0, poller.TryAddFd(pipe.ReadFd, PollEvents.In), "add the fd");
        Check.Eq(0, poller.TryAddTimer(t), "add the timer");
        foreach (short b in bad)
        {
            ExpectConfig(poller.TryModify(s, (PollEvents)b), Results.Config.InvalidArgument, "EINVAL", $"modify socket 0x{b:x}");
            ExpectConfig(poller.TryModifyFd(pipe.ReadFd, (PollEvents)b), Results.Config.InvalidArgument, "EINVAL", $"modify fd 0x{b:x}");
            ExpectConfig(poller.TryModify(t, (PollEvents)b), Results.Config.InvalidArgument, "EINVAL", $"modify timer 0x{b:x}");
        }
        // The argument is checked before the handles.
        ExpectConfig(NullPoller.TryAdd(s, (PollEvents)128), Results.Config.InvalidArgument, "EINVAL", "a bad bit on a NULL poller");
        using (var junk = new Junk())
        {
            ExpectConfig(NullPoller.TryAdd(s, PollEvents.In), Results.Config.InvalidHandle, "EFAULT", "add to a NULL poller");
            ExpectConfig(junk.Poller.TryAdd(s, PollEvents.In), Results.Config.InvalidHandle, "EFAULT", "add to a forged poller");
            ExpectConfig(poller.TryAdd(NullSocket, PollEvents.In), Results.Config.InvalidHandle, "EFAULT", "add a NULL socket");
            ExpectConfig(poller.TryAdd(junk.Socket, PollEvents.In), Results.Config.InvalidHandle, "EFAULT", "add a forged socket");
            ExpectConfig(poller.TryAddTimer(junk.Timer), Results.Config.InvalidHandle, "EFAULT", "add_timer of a forged timer");
            ExpectConfig(poller.TryAddTimer(AsTimer(s)), Results.Config.InvalidHandle, "EFAULT", "add_timer of a socket");
        }
        // A closed socket cannot be added.
        var closed = ctx.Socket(SocketType.Pair);
        nint raw = closed.NativeHandle;
        closed.Dispose();
        ExpectConfig(poller.TryAdd(Socket.FromHandle(raw), PollEvents.In), Results.Config.InvalidState, "ESHUTDOWN", "add a closed socket");
        // Nothing changed on any failure.
        Check.Eq(3, poller.Size, "three registrations");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        Check.Eq(0, t.TryDestroy(), "timer destroyed");
        s.Dispose();
    }

    private static void UnsupportedBits()
    {
        using var ctx = new Context();
        var pair = ctx.Socket(SocketType.Pair);
        var dealer = ctx.Socket(SocketType.Dealer);
        var router = ctx.Socket(SocketType.Router);
        var sub = ctx.Socket(SocketType.Sub);
        var t = new Timer();
        using var pipe = new OsPipe();
        var poller = new Poller();
        ExpectConfig(poller.TryAdd(pair, PollEvents.In | PollEvents.Pri), Results.Config.NotSupported, "ENOTSUP", "PRI on a socket");
        ExpectConfig(poller.TryAdd(pair, PollEvents.Route), Results.Config.NotSupported, "ENOTSUP", "ROUTE on a PAIR");
        ExpectConfig(poller.TryAdd(dealer, PollEvents.In | PollEvents.Route), Results.Config.NotSupported, "ENOTSUP", "ROUTE on a DEALER");
        ExpectConfig(poller.TryAdd(sub, PollEvents.Route), Results.Config.NotSupported, "ENOTSUP", "ROUTE on a SUB");
        ExpectConfig(poller.TryAddFd(pipe.ReadFd, PollEvents.Route), Results.Config.NotSupported, "ENOTSUP", "ROUTE on an fd");
        Check.Eq(0, poller.TryAdd(router, PollEvents.In | PollEvents.Route), "ROUTE on a ROUTER");
        Check.Eq(0, poller.TryAddTimer(t), "add the timer");
        ExpectConfig(poller.TryModify(t, PollEvents.Out), Results.Config.NotSupported, "ENOTSUP", "OUT on a timer");
        ExpectConfig(poller.TryModify(t, PollEvents.In | PollEvents.Pri), Results.Config.NotSupported, "ENOTSUP", "PRI on a timer");
        ExpectConfig(poller.TryModify(t, PollEvents.Route), Results.Config.NotSupported, "ENOTSUP", "ROUTE on a timer");
        Check.Eq(0, poller.TryModify(t, PollEvents.None), "a timer's zero mask");
        Check.Eq(0, poller.TryModify(t, PollEvents.In | PollEvents.Err), "a timer's IN|ERR");
        // modify checks like add, and leaves the mask alone on failure.
        Check.Eq(0, poller.TryAdd(pair, PollEvents.In), "add the PAIR");
        ExpectConfig(poller.TryModify(pair, PollEvents.Route), Results.Config.NotSupported, "ENOTSUP", "modify to ROUTE on a PAIR");
        var ev = new PollerEvent[4];
        Check.Eq(0, poller.Wait(ev, 0), "the PAIR keeps IN only: no OUT reported");
        Check.Eq(3, poller.Size, "three registrations");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        Check.Eq(0, t.TryDestroy(), "timer destroyed");
        pair.Dispose(); dealer.Dispose(); router.Dispose(); sub.Dispose();
    }

    // ------------------------------------------------------------- PL-24

    public static void Pl24(CaseParams p)
    {
        using var ctx = new Context();
        var s = ctx.Socket(SocketType.Pair);
        var t = new Timer();
        var poller = new Poller();
        Check.Eq(0, poller.TrySize(out int r), "empty size");
        Check.Eq(0, r, "empty size's result");
        Check.Eq(0, poller.TryAdd(s, PollEvents.None), "a zero mask is still a registration");
        Check.Eq(0, poller.TryAddFd(0, PollEvents.In), "add fd 0");
        Check.Eq(0, poller.TryAddTimer(t), "add the timer");
        Check.Eq(3, poller.TrySize(out r), "three registrations");
        Check.Eq(0, poller.TryRemoveFd(0), "remove fd 0");
        Check.Eq(2, poller.TrySize(out r), "two registrations");
        using (var junk = new Junk())
        {
            Check.Eq(-1, junk.Poller.TrySize(out r), "size of a forged poller");
            ExpectConfig(r, Results.Config.InvalidHandle, "EFAULT", "size of a forged poller");
        }
        Check.Eq(-1, NullPoller.TrySize(out r), "size of NULL");
        Check.Eq(ZLinkCore.ResultName(Results.Config.InvalidHandle), ZLinkCore.ResultName(r), "size of NULL's result");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        Check.Eq(0, t.TryDestroy(), "timer destroyed");
        s.Dispose();
    }

    // ------------------------------------------------------------- PL-11

    public static void Pl11(CaseParams p)
    {
        ClosedSocketPollErrOnce();
        PinOutlivesCtxTerm();
    }

    private static void ClosedSocketPollErrOnce()
    {
        var (ctx, a, b) = PairLink("pl11");
        var poller = new Poller();
        nint bRaw = b.NativeHandle;
        Check.Eq(0, poller.TryAdd(b, PollEvents.In, 77), "add b");
        // Closed by another thread while a wait is active: the wait ends with POLLERR.
        var ev = new PollerEvent[4];
        var waiter = System.Threading.Tasks.Task.Run(() => { var e = new PollerEvent[4]; int n = poller.Wait(e, (int)(EdgeBoundMs * Program.TimeoutMult)); return (n, e[0]); });
        b.Dispose();   // zlink_close: the poller holds no gate
        var (n1, e1) = Check.Wait(waiter, (int)(2 * EdgeBoundMs), "the active wait");
        Check.Eq(1, n1, "one event for the closed socket");
        Check.Eq(PollerSourceKind.Socket, e1.Kind, "its kind");
        Check.Eq(PollEvents.Err, e1.Events, "POLLERR");
        Check.Eq(bRaw, e1.Socket, "the closed socket's handle value");
        Check.Eq((nint)77, e1.UserData, "its user data");
        // Once: nothing else can become ready, so -1 returns at once.
        var sw = Stopwatch.StartNew();
        Check.Eq(0, poller.Wait(ev, -1), "the POLLERR is not reported twice");
        Check.True(sw.ElapsedMilliseconds < EdgeBoundMs, "the wait returned at once");
        // Still registered (reached through its raw handle value: the Socket is disposed).
        var closed = Socket.FromHandle(bRaw);
        Check.Eq(1, poller.Size, "still registered");
        Check.Eq(0, poller.TryModify(closed, PollEvents.In | PollEvents.Out), "modify the closed socket");
        ExpectConfig(poller.TryAdd(closed, PollEvents.In), Results.Config.InvalidState, "ESHUTDOWN", "add the closed socket again");
        // Other sources go on; the closed one stays silent.
        var t = new Timer();
        Check.Eq(0, poller.TryAddTimer(t, 78), "add a timer");
        t.Start(TimeSpan.FromMilliseconds(1), 1);
        Check.Eq(1, poller.Wait(ev, (int)(EdgeBoundMs * Program.TimeoutMult)), "the timer's fire");
        Check.Eq(PollerSourceKind.Timer, ev[0].Kind, "only the timer");
        Check.Eq(0, poller.TryRemoveTimer(t), "remove the timer");
        Check.Eq(0, t.TryDestroy(), "timer destroyed");
        Check.Eq(0, poller.TryRemove(closed), "remove the closed socket");
        Check.Eq(0, poller.Size, "nothing registered");
        // Closed before the first wait: reported by that wait, at once.
        var c = ctx.Socket(SocketType.Pair);
        nint cRaw = c.NativeHandle;
        Check.Eq(0, poller.TryAdd(c, PollEvents.In), "add c");
        c.Dispose();
        Check.Eq(1, poller.Wait(ev, -1), "c's POLLERR");
        Check.Eq(PollEvents.Err, ev[0].Events, "POLLERR for c");
        Check.Eq(cRaw, ev[0].Socket, "c's handle value");
        Check.Eq(0, poller.Wait(ev, -1), "once");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed (unpins c)");
        a.Dispose();
        ctx.Dispose();
    }

    private static void PinOutlivesCtxTerm()
    {
        var ctx = new Context();
        var s = ctx.Socket(SocketType.Dealer);
        nint raw = s.NativeHandle;
        var poller = new Poller();
        Check.Eq(0, poller.TryAdd(s, PollEvents.In | PollEvents.Out), "add the DEALER");
        s.Dispose();
        ctx.Dispose();   // zlink_ctx_term with the closed socket pinned
        var ev = new PollerEvent[2];
        Check.Eq(1, poller.Wait(ev, -1), "POLLERR after ctx_term");
        Check.Eq(PollEvents.Err, ev[0].Events, "POLLERR");
        Check.Eq(0, poller.Wait(ev, 0), "once");
        Check.Eq(0, poller.TryRemove(Socket.FromHandle(raw)), "remove frees the socket");
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
    }

    // ------------------------------------------------------------- PL-14

    public static void Pl14(CaseParams p)
    {
        using var pipe = new OsPipe();
        pipe.Write();
        var poller = new Poller();
        Check.Eq(0, poller.TryAddFd(pipe.ReadFd, PollEvents.In, 99), "add the fd");
        var sentinel = new PollerEvent((PollerSourceKind)0x5A5A, unchecked((nint)0xA5A5A5A5), -0x5A5A, 0x1234, 0x4321, (PollEvents)0x2A);
        var ev = new PollerEvent[4];
        Array.Fill(ev, sentinel);
        Check.Eq(1, poller.Wait(ev, 0), "one event");
        for (int i = 1; i < 4; i++) Check.Eq(sentinel, ev[i], $"entry {i} untouched");
        var copy = ev[0];
        Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        Check.Eq(PollerSourceKind.Fd, copy.Kind, "kind after the poller is gone");
        Check.Eq(pipe.ReadFd, copy.Fd, "fd");
        Check.Eq((nint)99, copy.UserData, "user data");
        Check.Eq((nint)0, copy.Socket, "no socket");
        Check.Eq((nint)0, copy.Timer, "no timer");
        Check.Eq(copy, ev[0], "the entry is unchanged");
        pipe.Read();
    }

    // ------------------------------------------------------------- PL-12

    public static void Pl12(CaseParams p)
    {
        using var poller = new Poller();
        var ev = new PollerEvent[4];
        // Urgent TCP data is platform POLLPRI -> ZLINK_POLLPRI.
        using (var lst = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp))
        {
            lst.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
            lst.Listen(1);
            using var c = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
            c.Connect(lst.LocalEndPoint!);
            using var srv = lst.Accept();
            int fd = (int)srv.Handle;
            Check.Eq(0, poller.TryAddFd(fd, PollEvents.Pri, 5), "add the tcp fd for PRI");
            Check.Eq(0, poller.Wait(ev, 0), "nothing urgent yet");
            Check.Eq(1, c.Send(new[] { (byte)'!' }, System.Net.Sockets.SocketFlags.OutOfBand), "urgent byte sent");
            Check.Eq(1, poller.Wait(ev, (int)(EdgeBoundMs * Program.TimeoutMult)), "the urgent byte");
            Check.Eq(PollerSourceKind.Fd, ev[0].Kind, "an fd event");
            Check.Eq(fd, ev[0].Fd, "the tcp fd");
            Check.True((ev[0].Events & PollEvents.Pri) != 0, "POLLPRI reported");
            Check.Eq(PollEvents.None, ev[0].Events & ~(PollEvents.Pri | PollEvents.In), "nothing but PRI (and IN)");
            Check.Eq(0, poller.TryRemoveFd(fd), "remove the tcp fd");
        }
        // Platform POLLERR (a pipe whose reader is gone) -> ZLINK_POLLERR.
        using (var w = new AnonymousPipeServerStream(PipeDirection.Out))
        {
            w.DisposeLocalCopyOfClientHandle();   // the only read end: closed
            int wfd = (int)w.SafePipeHandle.DangerousGetHandle();
            Check.Eq(0, poller.TryAddFd(wfd, PollEvents.Out, 6), "add the write end");
            Check.Eq(1, poller.Wait(ev, 0), "the broken pipe");
            Check.Eq(wfd, ev[0].Fd, "the write end");
            Check.True((ev[0].Events & PollEvents.Err) != 0, "POLLERR reported");
            Check.Eq(PollEvents.None, ev[0].Events & ~(PollEvents.Err | PollEvents.Out), "nothing but ERR (and OUT)");
            // ERR needs no request: reported with an ERR-only mask too.
            Check.Eq(0, poller.TryModifyFd(wfd, PollEvents.Err), "mask ERR only");
            Check.Eq(1, poller.Wait(ev, 0), "still broken");
            Check.Eq(PollEvents.Err, ev[0].Events, "POLLERR alone");
            Check.Eq(0, poller.TryRemoveFd(wfd), "remove the write end");
        }
        // Platform POLLHUP (the writer is gone) is another error bit -> ERR.
        var srvPipe = new AnonymousPipeServerStream(PipeDirection.Out);
        var rh = srvPipe.ClientSafePipeHandle;
        int rfd = (int)rh.DangerousGetHandle();
        srvPipe.Dispose();   // the write end closed; the exposed read end stays open
        Check.True(!rh.IsClosed, "the read end is still open");
        Check.Eq(0, poller.TryAddFd(rfd, PollEvents.In, 7), "add the read end");
        Check.Eq(1, poller.Wait(ev, 0), "the hung-up pipe");
        Check.Eq(PollEvents.Err, ev[0].Events, "POLLHUP is ERR");
        Check.Eq(0, poller.TryRemoveFd(rfd), "remove the read end");
        rh.Dispose();
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
