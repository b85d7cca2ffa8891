// PlSignals.cs — PL-15 (conformance/c/pl_wait_events.c): a signal whose
// handler was installed without SA_RESTART does not make Poller.Wait
// (zlink_poller_wait) or ZLinkPoll.Poll (zlink_poll) fail with EINTR: the
// event when it comes within the timeout, else 0 after the whole timeout.
// Test code only, through libc (P/Invoke): sigaction(SIGUSR1) with flags 0
// and a libc function as the handler (abs: async-signal-safe, no managed code
// in signal context), tgkill to the waiting thread. Delivery is proven from
// /proc: the thread does not block SIGUSR1 and each signal leaves its pending
// set; the wait is seen asleep in the kernel before each signal.
using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace ZLink.Conformance;

internal static class PlSignals
{
    private const int SIGUSR1 = 10;
    [DllImport("libc", SetLastError = true)] private static extern int sigaction(int sig, byte[] act, IntPtr old);
    [DllImport("libc")] private static extern int gettid();
    [DllImport("libc")] private static extern int getpid();
    [DllImport("libc", SetLastError = true)] private static extern int tgkill(int tgid, int tid, int sig);

    private static void InstallNoRestart()
    {
        // glibc x86_64 struct sigaction: handler (8), sa_mask (128), sa_flags (4 + pad), restorer (8).
        Check.Eq(8, IntPtr.Size, "a 64-bit process (the struct sigaction layout used here)");
        var act = new byte[152];
        nint handler = NativeLibrary.GetExport(NativeLibrary.Load("libc.so.6"), "abs");
        BitConverter.GetBytes((long)handler).CopyTo(act, 0);
        BitConverter.GetBytes(0).CopyTo(act, 136);   // sa_flags 0: no SA_RESTART
        Check.Eq(0, sigaction(SIGUSR1, act, IntPtr.Zero), "sigaction(SIGUSR1) errno " + Marshal.GetLastWin32Error());
    }

    private static ulong StatusMask(int tid, string key)
    {
        foreach (var line in File.ReadAllLines($"/proc/self/task/{tid}/status"))
            if (line.StartsWith(key + ":", StringComparison.Ordinal))
                return Convert.ToUInt64(line.Substring(key.Length + 1).Trim(), 16);
        throw new CheckFailed($"/proc/self/task/{tid}/status has no {key}");
    }

    /// <summary>Waits until tid sleeps in futex, poll or ppoll (best effort, 2 s, as zt_wait_blocked).</summary>
    private static void WaitBlocked(int tid)
    {
        var until = Done.Clock.ElapsedMilliseconds + 2000;
        while (Done.Clock.ElapsedMilliseconds < until)
        {
            string s;
            try { s = File.ReadAllText($"/proc/self/task/{tid}/syscall"); } catch (IOException) { return; }
            var f = s.Split(' ');
            if (long.TryParse(f[0], out long nr))
            {
                if (nr == 7 || nr == 271) return;   // poll, ppoll
                if (nr == 202 && f.Length > 2)   // futex: FUTEX_WAIT / FUTEX_WAIT_BITSET
                {
                    long op = Convert.ToInt64(f[2].Replace("0x", ""), 16) & 0x7F;
                    if (op == 0 || op == 9) return;
                }
            }
            Thread.Yield();
        }
    }

    private static void Pester(int tid, int times)
    {
        const ulong bit = 1UL << (SIGUSR1 - 1);
        Check.True((StatusMask(tid, "SigBlk") & bit) == 0, "the waiting thread does not block SIGUSR1");
        for (int i = 0; i < times; i++)
        {
            WaitBlocked(tid);
            Check.Eq(0, tgkill(getpid(), tid, SIGUSR1), "tgkill");
            Check.Eventually(() => (StatusMask(tid, "SigPnd") & bit) == 0, 2000, $"signal {i + 1} delivered");
        }
    }

    /// <summary>Runs wait on a new thread; returns its kernel tid at once and the thread.</summary>
    private static (Thread th, Func<int> tid) Start(Action body)
    {
        int tid = 0;
        var ready = new ManualResetEventSlim(false);
        var th = new Thread(() => { Volatile.Write(ref tid, gettid()); ready.Set(); body(); }) { IsBackground = true };
        th.Start();
        ready.Wait();
        return (th, () => Volatile.Read(ref tid));
    }

    public static void Pl15(CaseParams p)
    {
        int timeout = (int)p.Int("timeout_ms") * Program.TimeoutMult;
        int signals = (int)p.Int("signals");
        Check.True(signals >= 1, "signals >= 1");
        InstallNoRestart();
        var ctx = new Context();   // not `using`: a failure must not wait in zlink_ctx_term for open sockets
        var a = ctx.Socket(SocketType.Pair);
        var b = ctx.Socket(SocketType.Pair);
        a.Bind($"inproc://pl15-{Environment.ProcessId}");
        b.Connect(a.LastEndpoint);
        var pipeW = new System.IO.Pipes.AnonymousPipeServerStream(System.IO.Pipes.PipeDirection.Out);
        var pipeR = new System.IO.Pipes.AnonymousPipeClientStream(System.IO.Pipes.PipeDirection.In, pipeW.ClientSafePipeHandle);
        int rfd = (int)pipeW.ClientSafePipeHandle.DangerousGetHandle();
        byte[] x = Encoding.UTF8.GetBytes("x");

        // Poller.Wait: the futex (socket only), the futex with a timer bound, ppoll (an fd).
        var t = new Timer();
        for (int variant = 0; variant < 3; variant++)
        {
            var poller = new Poller();
            Check.Eq(0, poller.TryAdd(b, PollEvents.In), "add b");
            if (variant == 1) { Check.Eq(0, poller.TryAddTimer(t), "add the timer"); t.Start(TimeSpan.FromHours(1)); }
            if (variant == 2) Check.Eq(0, poller.TryAddFd(rfd, PollEvents.In), "add the fd");
            int n = -2, r = -2; long took = 0;
            var (th, tid) = Start(() => { var ev = new PollerEvent[4]; var t0 = Done.Clock.ElapsedMilliseconds; n = poller.TryWait(ev, timeout, out r); took = Done.Clock.ElapsedMilliseconds - t0; });
            Pester(tid(), signals);
            Check.True(th.Join(timeout * 10 + 5000), "the wait ended");
            Check.True(n == 0 && r == 0, $"poller variant {variant}: wait returned {n} (result {ZLinkCore.ResultName(r)})");
            Check.True(took >= timeout, $"poller variant {variant}: 0 after the whole timeout ({took} ms)");
            PollerEvent got = default;
            (th, tid) = Start(() => { var ev = new PollerEvent[4]; n = poller.TryWait(ev, 30000, out r); got = ev[0]; });
            Pester(tid(), signals);
            a.Send(x);
            Check.True(th.Join(35000), "the wait ended at the event");
            Check.True(n == 1 && got.Kind == PollerSourceKind.Socket && got.Events == PollEvents.In, $"poller variant {variant}: {n} events, {got.Kind} {got.Events}");
            Check.Eq("x", Encoding.UTF8.GetString(b.Recv()[0]), "the record");
            if (variant == 1) { t.Stop(); Check.Eq(0, poller.TryRemoveTimer(t), "remove the timer"); }
            Check.Eq(0, poller.TryDestroy(), "poller destroyed");
        }
        Check.Eq(0, t.TryDestroy(), "timer destroyed");

        // ZLinkPoll.Poll: a socket (futex), an fd (ppoll), both.
        for (int variant = 0; variant < 3; variant++)
        {
            PollItem[] Items()
            {
                var list = new System.Collections.Generic.List<PollItem>();
                if (variant != 1) list.Add(new PollItem(b, PollEvents.In));
                if (variant != 0) list.Add(PollItem.ForFd(rfd, PollEvents.In));
                return list.ToArray();
            }
            int n = -2; string err = ""; long took = 0;
            var (th, tid) = Start(() =>
            {
                var items = Items();
                var t0 = Done.Clock.ElapsedMilliseconds;
                try { n = ZLinkPoll.Poll(items, timeout); } catch (Exception e) { err = Outcome.Of(e) + " " + e.Message; }
                took = Done.Clock.ElapsedMilliseconds - t0;
            });
            Pester(tid(), signals);
            Check.True(th.Join(timeout * 10 + 5000), "the poll ended");
            Check.True(n == 0 && err == "", $"zlink_poll variant {variant}: returned {n} {err}");
            Check.True(took >= timeout, $"zlink_poll variant {variant}: 0 after the whole timeout ({took} ms)");
            (th, tid) = Start(() =>
            {
                var items = Items();
                try { n = ZLinkPoll.Poll(items, 30000); } catch (Exception e) { err = Outcome.Of(e) + " " + e.Message; }
            });
            Pester(tid(), signals);
            if (variant == 1) { pipeW.WriteByte(1); pipeW.Flush(); } else a.Send(x);
            Check.True(th.Join(35000), "the poll ended at the event");
            Check.True(n == 1 && err == "", $"zlink_poll variant {variant}: returned {n} {err} at the event");
            if (variant == 1) Check.Eq(1, pipeR.ReadByte(), "the pipe's byte");
            else Check.Eq("x", Encoding.UTF8.GetString(b.Recv()[0]), "the record");
        }
        pipeR.Dispose(); pipeW.Dispose();
        a.Dispose(); b.Dispose(); ctx.Dispose();
    }
}
