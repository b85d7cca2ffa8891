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
}
