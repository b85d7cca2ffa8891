// PlMore.cs — PL-01, PL-09, PL-10, PL-17, PL-25 and PL-27 through the .NET
// binding's Core surface (the reference bodies: conformance/c/pl_poll.c,
// pl_registration.c, pl_completion.c and pl_lifetime.c).
//
// Where C's types allow an input a Span cannot express (items or events NULL
// with a nonzero count, a negative count or capacity), the nearest .NET input
// is tested: an empty span, which the binding passes to C as it is (capacity
// 0, or items NULL with count 0), and C's answer is what is checked. The
// binding never checks arguments itself.
using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace ZLink.Conformance;

internal static class PlMore
{
    private const int SndHwm = 0x300F, RcvTimeo = 0x3012, SndTimeo = 0x3013;
    private const PollEvents DfltBit = (PollEvents)16;   // ZLINK_POLLITEMS_DFLT: a count, not an event bit
    private static byte[] U(string s) => Encoding.UTF8.GetBytes(s);
    private static string S(byte[] b) => Encoding.UTF8.GetString(b);
    private static long Scaled(long ms) => ms * Program.TimeoutMult;
    private static long Edge => PlCases.EdgeBoundMs * Program.TimeoutMult;

    private static void Fails(Action a, string name, string errno, string what)
    {
        var e = PlCases.Assert(a);
        Check.Eq(name, e.Name, what);
        Check.Eq(errno, e.ErrnoName, what + " errno");
    }

    /// <summary>Leaves this thread's zlink_errno at something other than errno (a call
    /// that fails with EINVAL, or with EFAULT when errno is EINVAL), so a later check of
    /// errno sees what the next call set, not what an earlier one left.</summary>
    private static void OtherErrno(string errno)
    {
        if (errno == "EINVAL") Check.Eq(-1, PlCases.NullPoller.TrySize(), "a failing call (EFAULT)");
        else Check.Eq(-1, ZLinkPoll.TryPoll(new[] { PollItem.ForFd(-1, PollEvents.In) }, 0), "a failing call (EINVAL)");
        Check.True(ZLinkCore.LastErrnoName != errno, "errno moved away from " + errno);
    }

    private static void ExpectStr(Socket s, string want, string what)
    {
        s.SetOption(RcvTimeo, (int)Scaled(10000));
        Check.Eq(want, S(s.Recv()[0]), what);
    }

    // ------------------------------------------------------------- PL-01

    public static void Pl01(CaseParams prm)
    {
        long quiet = Scaled(prm.Int("timeout_ms"));
        var (ctx, a, b) = PlCases.PairLink("pl01");
        using var pipe = new PlCases.OsPipe();
        var items = new[] { new PollItem(b, PollEvents.In), PollItem.ForFd(pipe.ReadFd, PollEvents.In), new PollItem(a, PollEvents.Out) };
        Check.Eq(1, ZLinkPoll.Poll(items, 0), "one ready (a can send)");
        Check.Eq(PollEvents.Out, items[2].Revents, "a's OUT");
        a.Send(U("x"));
        pipe.Write();
        Check.Eq(3, ZLinkPoll.Poll(items, 0), "three ready");
        Check.Eq(PollEvents.In, items[0].Revents, "b's IN");
        Check.Eq(PollEvents.In, items[1].Revents, "the fd's IN");
        // 0 on timeout, after the timeout.
        var quietItems = new[] { new PollItem(a, PollEvents.In) };
        var sw = Stopwatch.StartNew();
        Check.Eq(0, ZLinkPoll.Poll(quietItems, quiet), "0 on timeout");
        Check.True(sw.ElapsedMilliseconds >= quiet, $"returned after {sw.ElapsedMilliseconds} ms, before the {quiet} ms timeout");
        // -1: the binding throws with the result's name and errno. (items NULL with a
        // count, or a negative count, cannot be built from a Span: the empty span is
        // items NULL with count 0, which C answers with 0.)
        Check.Eq(0, ZLinkPoll.Poll(Span<PollItem>.Empty, 0), "an empty span (NULL, 0)");
        using var junk = new PlCases.Junk();
        Fails(() => ZLinkPoll.Poll(new[] { new PollItem(junk.Socket, PollEvents.In) }, 0),
              "ZLINK_CONFIG_INVALID_HANDLE", "EFAULT", "a forged socket item");
        Fails(() => ZLinkPoll.Poll(new[] { new PollItem(b, PollEvents.In | DfltBit) }, 0),
              "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "a bad bit");
        Fails(() => ZLinkPoll.Poll(new[] { PollItem.ForFd(-1, PollEvents.In) }, 0),
              "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "fd -1");
        // Arguments before handles, across items.
        Fails(() => ZLinkPoll.Poll(new[] { new PollItem(junk.Socket, PollEvents.In), PollItem.ForFd(pipe.ReadFd, (PollEvents)256) }, 0),
              "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "a forged item before a bad bit");
        ExpectStr(b, "x", "b's record");
        a.Dispose(); b.Dispose(); ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-09

    public static void Pl09(CaseParams prm)
    {
        CompletionBitOnCompletionSockets();

        // zlink_poll items: EINVAL, alone, OR'ed, on an FD.
        var ctx = new Context();
        var s = ctx.Socket(SocketType.Dealer);
        using (var pipe = new PlCases.OsPipe())
        {
            Fails(() => ZLinkPoll.Poll(new[] { new PollItem(s, PollEvents.Completion) }, 0), "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "poll COMPLETION");
            Fails(() => ZLinkPoll.Poll(new[] { new PollItem(s, PollEvents.In | PollEvents.Completion) }, 0), "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "poll IN|COMPLETION");
            Fails(() => ZLinkPoll.Poll(new[] { PollItem.ForFd(pipe.ReadFd, PollEvents.Completion) }, 0), "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "poll an fd's COMPLETION");
        }
        s.Dispose();
        ctx.Dispose();

        // The two record kinds. REQUEST: a DEALER's answered request.
        ctx = new Context();
        var (d, r) = PlCompletion.DrPair(ctx, "pl09");
        var p = new Poller();
        Check.Eq(0, p.TryAdd(d, PollEvents.Completion), "add d for COMPLETION");
        const nint reqCtx = 0x0901, wrCtx = 0x0902;
        ulong id = PlCompletion.RequestAnswered(d, r, "q", reqCtx);
        PlCompletion.ExpectEvent(p, d, PlCompletion.LongWaitMs, PollEvents.Completion);
        PlCompletion.ExpectRecord(d, id, reqCtx, "q");
        PlCompletion.ExpectNoRecord(d);
        var ev = new PollerEvent[2];
        Check.Eq(0, p.Wait(ev, 0), "nothing after the record");
        // WRITABLE: a refused PAIR send whose target recovers.
        var (pa, pb, token) = FullPairRefused(ctx, "pl09", wrCtx);
        Check.Eq(0, p.TryAdd(pa, PollEvents.Completion), "add pa for COMPLETION");
        ExpectStr(pb, "fills the queue", "pb drains");
        PlCompletion.ExpectEvent(p, pa, PlCompletion.LongWaitMs, PollEvents.Completion);
        ExpectWritable(pa, token, wrCtx);
        PlCompletion.ExpectNoRecord(pa);
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        pa.Dispose(); pb.Dispose(); d.Dispose(); r.Dispose(); ctx.Dispose();
    }

    private static void CompletionBitOnCompletionSockets()
    {
        var ctx = new Context();
        var types = new[] { SocketType.Pair, SocketType.Dealer, SocketType.Router, SocketType.Stream };
        var p = new Poller();
        var socks = new Socket[4];
        for (int i = 0; i < 4; i++)
        {
            var s = socks[i] = ctx.Socket(types[i]);
            string t = types[i].ToString();
            Check.Eq(0, p.TryAdd(s, PollEvents.Completion), t + ": add COMPLETION alone");
            Check.Eq(0, p.TryModify(s, PollEvents.In), t + ": modify it off");
            Check.Eq(0, p.TryModify(s, PollEvents.In | PollEvents.Out | PollEvents.Completion), t + ": on again, OR'ed");
            Check.Eq(0, p.TryRemove(s), t + ": remove");
            Check.Eq(0, p.TryAdd(s, PollEvents.In | PollEvents.Completion), t + ": add IN|COMPLETION");
        }
        var ev = new PollerEvent[8];
        Check.Eq(0, p.Wait(ev, 0), "nothing queued: no COMPLETION readiness");
        // Elsewhere: INVALID_ARGUMENT/EINVAL.
        var pub = ctx.Socket(SocketType.Pub);
        var sub = ctx.Socket(SocketType.Sub);
        var tm = new Timer();
        using var pipe = new PlCases.OsPipe();
        PlCases.ExpectConfig(p.TryAdd(pub, PollEvents.Completion), Results.Config.InvalidArgument, "EINVAL", "PUB COMPLETION");
        PlCases.ExpectConfig(p.TryAdd(sub, PollEvents.In | PollEvents.Completion), Results.Config.InvalidArgument, "EINVAL", "SUB IN|COMPLETION");
        PlCases.ExpectConfig(p.TryAddFd(pipe.ReadFd, PollEvents.Completion), Results.Config.InvalidArgument, "EINVAL", "an fd's COMPLETION");
        PlCases.ExpectConfig(p.TryAdd(tm, PollEvents.Completion), Results.Config.InvalidArgument, "EINVAL", "a timer's COMPLETION");
        Check.Eq(0, p.TryAddTimer(tm), "add the timer");
        PlCases.ExpectConfig(p.TryModify(tm, PollEvents.Completion), Results.Config.InvalidArgument, "EINVAL", "modify a timer to COMPLETION");
        Check.Eq(0, p.TryAddFd(pipe.ReadFd, PollEvents.In), "add the fd");
        PlCases.ExpectConfig(p.TryModifyFd(pipe.ReadFd, PollEvents.In | PollEvents.Completion), Results.Config.InvalidArgument, "EINVAL", "modify an fd to IN|COMPLETION");
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        Check.Eq(0, tm.TryDestroy(), "timer destroyed");
        foreach (var s in socks) s.Dispose();
        pub.Dispose(); sub.Dispose(); ctx.Dispose();
    }

    /// <summary>A PAIR a (SNDHWM 100 bytes) connected to b, its queue full, and the
    /// token of its refused DONTWAIT send (pl_full_pair_refused).</summary>
    private static (Socket a, Socket b, ulong token) FullPairRefused(Context ctx, string tag, nint uctx)
    {
        var a = ctx.Socket(SocketType.Pair);
        var b = ctx.Socket(SocketType.Pair);
        a.SetOption(SndHwm, 100L);
        b.Bind($"inproc://{tag}-full-{Environment.ProcessId}");
        a.Connect(b.LastEndpoint);
        Check.Eq(0, a.TrySend(new[] { U("fills the queue") }, dontWait: true), "the first send is admitted");
        int rc = a.TrySend(new[] { U("refused") }, true, uctx, out ulong token);
        Check.Eq(ZLinkCore.ResultName(Results.Submit.Backpressured), ZLinkCore.ResultName(rc), "the second send is refused for room");
        Check.True(token != 0, "a nonzero wait token");
        return (a, b, token);
    }

    private static void ExpectWritable(Socket s, ulong token, nint uctx)
    {
        int r = s.TryRecvCompletion(out var c, true);
        Check.Eq(ZLinkCore.ResultName(0), ZLinkCore.ResultName(r), $"completion_recv for WRITABLE {token}");
        Check.True(c!.Kind == CompletionKind.Writable && c.Id == token && c.UserContext == uctx,
                   $"record of kind {c.Kind}, id {c.Id}, context {c.UserContext}; expected WRITABLE {token} {uctx}");
        Check.Eq(0, c.SendResult, "the WRITABLE record's send_result (ADMITTED)");
    }

    // ------------------------------------------------------------- PL-10

    public static void Pl10(CaseParams prm)
    {
        var ctx = new Context();
        var (s, r) = PlCompletion.DrPair(ctx, "pl10");
        var p1 = new Poller();
        var p2 = new Poller();
        Check.Eq(0, p1.TryAdd(s, PollEvents.Completion), "p1 takes the completion bit");
        PlCases.ExpectConfig(p2.TryAdd(s, PollEvents.In | PollEvents.Completion), Results.Config.InvalidState, "EBUSY", "a second owner by add");
        Check.Eq(0, p2.Size, "p2 registered nothing");
        // Without the bit the same socket may be added ...
        Check.Eq(0, p2.TryAdd(s, PollEvents.In), "p2 adds s for IN");
        // ... but not given the bit by modify; its registration is unchanged.
        PlCases.ExpectConfig(p2.TryModify(s, PollEvents.In | PollEvents.Completion), Results.Config.InvalidState, "EBUSY", "a second owner by modify");
        Check.Eq(1, p2.Size, "p2 still has one registration");
        Check.Eq(0, r.TrySendTo(U("D"), new[] { U("data") }), "the ROUTER sends data to D");
        PlCompletion.ExpectEvent(p2, s, PlCompletion.LongWaitMs, PollEvents.In);
        Check.Eq("data", S(s.Recv()[0]), "s receives the data");

        // Two records queued while p1 owns the bit.
        const nint u1 = 0x1001, u2 = 0x1002;
        ulong id1 = PlCompletion.RequestAnswered(s, r, "one", u1);
        ulong id2 = PlCompletion.RequestAnswered(s, r, "two", u2);
        PlCompletion.ExpectEvent(p1, s, PlCompletion.LongWaitMs, PollEvents.Completion);
        // The owner drops the bit (modify): p2 takes it; p1 cannot take it back meanwhile.
        Check.Eq(0, p1.TryModify(s, PollEvents.In), "p1 drops the bit");
        Check.Eq(0, p2.TryModify(s, PollEvents.Completion), "p2 takes the bit by modify");
        PlCases.ExpectConfig(p1.TryModify(s, PollEvents.Completion), Results.Config.InvalidState, "EBUSY", "p1 cannot take it back");
        PlCompletion.ExpectEvent(p2, s, 0, PollEvents.Completion);
        PlCompletion.ExpectRecord(s, id1, u1, "one");
        // p2 removes its registration: p1 takes the bit, the second record still there and ready.
        Check.Eq(0, p2.TryRemove(s), "p2 removes s");
        Check.Eq(0, p1.TryModify(s, PollEvents.Completion), "p1 takes the bit by modify");
        PlCompletion.ExpectEvent(p1, s, 0, PollEvents.Completion);
        // Destroying the owner releases the bit too; still nothing lost.
        Check.Eq(0, p1.TryDestroy(), "p1 destroyed");
        Check.Eq(0, p2.TryAdd(s, PollEvents.Completion), "p2 takes the bit by add");
        PlCompletion.ExpectEvent(p2, s, 0, PollEvents.Completion);
        PlCompletion.ExpectRecord(s, id2, u2, "two");
        PlCompletion.ExpectNoRecord(s);
        var ev = new PollerEvent[2];
        Check.Eq(0, p2.Wait(ev, 0), "nothing after the drain");
        Check.Eq(0, p2.TryDestroy(), "p2 destroyed");
        s.Dispose(); r.Dispose(); ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-17

    public static void Pl17(CaseParams prm)
    {
        int creditRounds = (int)prm.Int("credit_race_rounds");
        int attachRounds = (int)prm.Int("attach_race_rounds");
        var ctx = new Context();
        const nint uctx = 0x1717;
        var (a, b, token) = FullPairRefused(ctx, "pl17", uctx);
        var p = new Poller();
        Check.Eq(0, p.TryAdd(a, PollEvents.Out | PollEvents.Completion), "add a for OUT|COMPLETION");
        var ev = new PollerEvent[4];
        Check.Eq(0, p.Wait(ev, 0), "full, no record");
        // The credit edge wakes a waiting poller with both bits.
        var w = new PlCases.Waiter(p, PlCompletion.LongWaitMs * Program.TimeoutMult);
        ExpectStr(b, "fills the queue", "b drains");
        w.Join();
        w.GotOne(PollerSourceKind.Socket, PollEvents.Out | PollEvents.Completion);
        // The pipe fills again: the unread record still holds OUT.
        Check.Eq(0, a.TrySend(new[] { U("fills the queue") }, dontWait: true), "the queue fills again");
        for (int i = 0; i < 2; i++) PlCompletion.ExpectEvent(p, a, 0, PollEvents.Out | PollEvents.Completion);
        // Exactly one record, the token's; reading it clears both.
        ExpectWritable(a, token, uctx);
        PlCompletion.ExpectNoRecord(a);
        Check.Eq(0, p.Wait(ev, 0), "nothing once the record is read (the queue is full)");
        // Room again: OUT alone.
        ExpectStr(b, "fills the queue", "b drains again");
        PlCompletion.ExpectEvent(p, a, PlCompletion.LongWaitMs, PollEvents.Out);
        Check.Eq(ZLinkCore.ResultName(Results.Recv.NoData), ZLinkCore.ResultName(b.TryRecv(out _, dontWait: true)), "the refused record was not kept");
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        a.Dispose(); b.Dispose(); ctx.Dispose();

        CreditRace(creditRounds);
        AttachRace(attachRounds);
    }

    /// <summary>A refusal racing a credit edge: another thread drains b while a sends
    /// DONTWAIT until refused; each refusal's token comes back as a WRITABLE record a
    /// poller wait reports.</summary>
    private static void CreditRace(int rounds)
    {
        var ctx = new Context();
        var a = ctx.Socket(SocketType.Pair);
        var b = ctx.Socket(SocketType.Pair);
        a.SetOption(SndHwm, 100L);
        b.SetOption(RcvTimeo, -1);
        b.Bind($"inproc://pl17-credit-{Environment.ProcessId}");
        a.Connect(b.LastEndpoint);
        var p = new Poller();
        Check.Eq(0, p.TryAdd(a, PollEvents.Completion), "add a for COMPLETION");
        long got = 0;
        Exception? drainFailure = null;
        var drainer = new Thread(() =>
        {
            try
            {
                for (;;)
                {
                    var parts = b.Recv();
                    if (S(parts[0]) == "END") return;
                    got++;
                }
            }
            catch (Exception e) { drainFailure = e; }
        }) { IsBackground = true };
        drainer.Start();
        const nint uctx = 0x1718;
        long sent = 0;
        for (int i = 0; i < rounds; i++)
        {
            ulong token = 0;
            for (long tries = 0; ; tries++)
            {
                int rc = a.TrySend(new[] { U("r") }, true, uctx, out token);
                if (rc == Results.Submit.Backpressured) break;
                Check.Eq(ZLinkCore.ResultName(0), ZLinkCore.ResultName(rc), $"round {i}: a DONTWAIT send");
                sent++;
                Check.True(tries <= 1000000, $"round {i}: never refused");
            }
            Check.True(token != 0, $"round {i}: a nonzero token");
            PlCompletion.ExpectEvent(p, a, PlCompletion.LongWaitMs, PollEvents.Completion);
            ExpectWritable(a, token, uctx);
            PlCompletion.ExpectNoRecord(a);
        }
        a.SetOption(SndTimeo, (int)Scaled(10000));
        a.Send(U("END"));
        Check.True(drainer.Join(Check.Bound(10000)), "the drainer got END");
        Check.True(drainFailure == null, "the drainer failed: " + drainFailure?.Message);
        Check.Eq(sent, got, "every admitted record was received");
        Console.WriteLine($"# credit race: {rounds} refusals, {sent} records");
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        a.Dispose(); b.Dispose(); ctx.Dispose();
    }

    /// <summary>A refusal racing an attach edge: a PAIR with no peer sends DONTWAIT while
    /// another thread connects its peer: admitted, or refused with a token whose
    /// WRITABLE record a poller wait then reports.</summary>
    private static int _spinSink;

    private static void AttachRace(int rounds)
    {
        int refused = 0;
        const nint uctx = 0x1719;
        for (int i = 0; i < rounds; i++)
        {
            var ctx = new Context();
            var a = ctx.Socket(SocketType.Pair);
            var b = ctx.Socket(SocketType.Pair);
            a.Bind($"inproc://pl17-attach-{Environment.ProcessId}-{i}");
            string ep = a.LastEndpoint;
            var p = new Poller();
            Check.Eq(0, p.TryAdd(a, PollEvents.Completion), "add a for COMPLETION");
            int connecting = 0;
            Exception? connectFailure = null;
            var th = new Thread(() =>
            {
                Volatile.Write(ref connecting, 1);
                try { b.Connect(ep); } catch (Exception e) { connectFailure = e; }
            }) { IsBackground = true };
            th.Start();
            // The send lands before, during or after the attach: a varying spin once
            // the other thread is about to connect.
            while (Volatile.Read(ref connecting) == 0) Thread.Yield();
            for (int spin = (i * 7919) % 1500; spin > 0; spin--) Volatile.Write(ref _spinSink, spin);
            int rc = a.TrySend(new[] { U("r") }, true, uctx, out ulong token);
            Check.True(th.Join(Check.Bound(10000)), "the connect returned");
            Check.True(connectFailure == null, "the connect failed: " + connectFailure?.Message);
            if (rc == Results.Submit.Backpressured)
            {
                refused++;
                Check.True(token != 0, $"round {i}: a nonzero token");
                PlCompletion.ExpectEvent(p, a, PlCompletion.LongWaitMs, PollEvents.Completion);
                ExpectWritable(a, token, uctx);
            }
            else
            {
                Check.Eq(ZLinkCore.ResultName(0), ZLinkCore.ResultName(rc), $"round {i}: the send");
                Check.Eq(0UL, token, $"round {i}: no token for an admitted send");
                ExpectStr(b, "r", $"round {i}: b receives the record");
            }
            PlCompletion.ExpectNoRecord(a);
            Check.Eq(0, p.TryDestroy(), "poller destroyed");
            a.Dispose(); b.Dispose(); ctx.Dispose();
        }
        Console.WriteLine($"# attach race: {rounds} rounds, {refused} refused before the attach");
    }

    // ------------------------------------------------------------- PL-25

    public static void Pl25(CaseParams prm)
    {
        long quiet = Scaled(prm.Int("timeout_ms"));
        using var pipe = new PlCases.OsPipe();
        var p = new Poller();
        Check.Eq(0, p.TryAddFd(pipe.ReadFd, PollEvents.In), "add the fd");
        var ev = new PollerEvent[2];
        // Argument errors: EINVAL, before the handle. (NULL events and a negative
        // capacity cannot be built from a Span: the empty span is capacity 0.)
        Fails(() => p.Wait(Span<PollerEvent>.Empty, 0), "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "capacity 0");
        Fails(() => p.Wait(Span<PollerEvent>.Empty, -1), "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "capacity 0, no timeout");
        Check.Eq(-1, p.TryWait(Span<PollerEvent>.Empty, 0, out int res), "TryWait: capacity 0");
        PlCases.ExpectConfig(res, Results.Config.InvalidArgument, "EINVAL", "TryWait: capacity 0");
        Fails(() => PlCases.NullPoller.Wait(Span<PollerEvent>.Empty, 0), "ZLINK_CONFIG_INVALID_ARGUMENT", "EINVAL", "NULL poller, capacity 0");
        // Bad handle.
        Fails(() => PlCases.NullPoller.Wait(ev, 0), "ZLINK_CONFIG_INVALID_HANDLE", "EFAULT", "NULL poller");
        // 0 on timeout: at once for 0, after the time otherwise.
        var sw = Stopwatch.StartNew();
        Check.Eq(0, p.Wait(ev, 0), "0 at once");
        Check.True(sw.ElapsedMilliseconds < Edge, "timeout 0 returned at once");
        sw.Restart();
        Check.Eq(0, p.Wait(ev, (int)quiet), "0 on timeout");
        Check.True(sw.ElapsedMilliseconds >= quiet, $"returned after {sw.ElapsedMilliseconds} ms, before the {quiet} ms timeout");
        // The count of events written.
        pipe.Write();
        Check.Eq(1, p.Wait(ev, -1), "one event");
        Check.Eq(PollerSourceKind.Fd, ev[0].Kind, "the fd's event");
        // Every negative timeout waits without limit (here: until the edge).
        pipe.Read();
        var w = new PlCases.Waiter(p, -7);
        pipe.Write();
        w.Join();
        w.GotOne(PollerSourceKind.Fd, PollEvents.In);
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
    }

    // ------------------------------------------------------------- PL-27

    public static void Pl27(CaseParams prm)
    {
        // Poller.TrySize(), Poller.TryWait(span, ms) and ZLinkPoll.TryPoll pass error_out
        // NULL; ZLinkCore.LastErrno (zlink_errno) still tells.
        using var pipe = new PlCases.OsPipe();
        pipe.Write();
        var p = new Poller();
        var ev = new PollerEvent[2];
        Check.Eq(0, p.TrySize(), "size with error_out NULL");
        Check.Eq(0, p.TryAddFd(pipe.ReadFd, PollEvents.In), "add the fd");
        Check.Eq(1, p.TryWait(ev, 0L), "wait with error_out NULL");
        OtherErrno("EFAULT");
        Check.Eq(-1, PlCases.NullPoller.TrySize(), "size of NULL with error_out NULL");
        Check.Eq("EFAULT", ZLinkCore.LastErrnoName, "its errno");
        OtherErrno("EINVAL");
        Check.Eq(-1, p.TryWait(Span<PollerEvent>.Empty, 0L), "wait with capacity 0 and error_out NULL");
        Check.Eq("EINVAL", ZLinkCore.LastErrnoName, "its errno");
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        // zlink_poll, on success, on failure and with nothing to wait for.
        var items = new[] { PollItem.ForFd(pipe.ReadFd, PollEvents.In), PollItem.ForFd(pipe.WriteFd, PollEvents.None) };
        Check.Eq(1, ZLinkPoll.TryPoll(items, 0), "poll with error_out NULL");
        OtherErrno("EINVAL");
        Check.Eq(-1, ZLinkPoll.TryPoll(new[] { PollItem.ForFd(-1, PollEvents.In) }, 0), "poll fd -1 with error_out NULL");
        Check.Eq("EINVAL", ZLinkCore.LastErrnoName, "its errno");
        var sw = Stopwatch.StartNew();
        items[0].Events = PollEvents.None;
        Check.Eq(0, ZLinkPoll.TryPoll(items, -1), "only zero masks: at once");
        Check.Eq(0, ZLinkPoll.TryPoll(Span<PollItem>.Empty, -1), "no items (NULL, 0): at once");
        Check.True(sw.ElapsedMilliseconds < Edge, "returned at once");
    }

    // ------------------------------------------------------------- PL-23

    private const string Pl23ChildMark = "ZLINK_DOTNET_PL23_CHILD";
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)] private delegate void AllocFailBegin();
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)] private delegate uint AllocFailEnd();

    /// <summary>zlink_poller_new fails with ENOMEM when the system is out of memory;
    /// a destroyed poller's pointer is NULL. The allocation failure needs the test-only
    /// LD_PRELOAD library Runner/alloc_fail_preload.c (ZLINK_DOTNET_PRELOAD, set by
    /// runner.sh), so the case runs its checks in a child process of this runner with
    /// that library preloaded; the parent passes when the child completed.</summary>
    public static void Pl23(CaseParams prm)
    {
        string? lib = Environment.GetEnvironmentVariable("ZLINK_DOTNET_PRELOAD");
        Check.True(!string.IsNullOrEmpty(lib) && File.Exists(lib), $"the preload library (ZLINK_DOTNET_PRELOAD={lib})");
        if (Environment.GetEnvironmentVariable(Pl23ChildMark) == "1") { Pl23Child(lib!); return; }
        var args = Environment.GetCommandLineArgs();   // [the dll, --run-case, PL-23, MANIFEST]
        var psi = new ProcessStartInfo(Environment.ProcessPath!) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        string self = typeof(PlMore).Assembly.Location;
        if (!Path.GetFileNameWithoutExtension(Environment.ProcessPath!).Equals(Path.GetFileNameWithoutExtension(self), StringComparison.Ordinal))
            psi.ArgumentList.Add(self);
        for (int i = 1; i < args.Length; i++) psi.ArgumentList.Add(args[i]);
        string? pre = Environment.GetEnvironmentVariable("LD_PRELOAD");
        psi.Environment["LD_PRELOAD"] = string.IsNullOrEmpty(pre) ? lib : lib + ":" + pre;
        psi.Environment[Pl23ChildMark] = "1";
        using var child = Process.Start(psi)!;
        var outText = new StringBuilder();
        child.OutputDataReceived += (_, a) => { if (a.Data != null) lock (outText) outText.AppendLine(a.Data); };
        child.ErrorDataReceived += (_, a) => { if (a.Data != null) lock (outText) outText.AppendLine(a.Data); };
        child.BeginOutputReadLine();
        child.BeginErrorReadLine();
        if (!child.WaitForExit((int)Scaled(50000)))
        {
            try { child.Kill(true); } catch (InvalidOperationException) { }
            throw new CheckFailed("the preloaded child did not end within 50 s");
        }
        child.WaitForExit();
        string output;
        lock (outText) output = outText.ToString();
        foreach (var line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries)) Console.WriteLine("# child | " + line.TrimEnd('\r'));
        var failLine = Array.Find(output.Split('\n'), l => l.StartsWith("CONF-FAIL ", StringComparison.Ordinal));
        Check.True(failLine == null, "the preloaded child: " + failLine?.Substring(10));
        Check.True(child.ExitCode == 0 && Array.Exists(output.Split('\n'), l => l.StartsWith("CONF-DONE ", StringComparison.Ordinal)),
                   $"the preloaded child ended with exit {child.ExitCode} without completing");
    }

    private static void Pl23Child(string lib)
    {
        Check.True((Environment.GetEnvironmentVariable("LD_PRELOAD") ?? "").Contains(lib), "the child runs with the library preloaded");
        nint h = NativeLibrary.Load(lib);   // the preloaded instance
        var begin = Marshal.GetDelegateForFunctionPointer<AllocFailBegin>(NativeLibrary.GetExport(h, "zlink_conf_alloc_fail_begin"));
        var end = Marshal.GetDelegateForFunctionPointer<AllocFailEnd>(NativeLibrary.GetExport(h, "zlink_conf_alloc_fail_end"));
        // The binding's load check, its P/Invoke stubs and the exception path are warm
        // outside the window.
        Check.Eq(0, new Poller().TryDestroy(), "a first poller");
        begin(); end();
        ZLinkCoreException? failure = null;
        uint refused;
        begin();   // the system is out of memory for this thread's libzlink requests
        try { using var none = new Poller(); }
        catch (ZLinkCoreException e) { failure = e; }
        finally { refused = end(); }
        Check.True(refused > 0, "zlink_poller_new allocated nothing through malloc/calloc: the failure injection did not reach it" +
                                (failure == null ? " (it returned a poller)" : ""));
        Check.True(failure != null, "new Poller() threw while allocations failed");
        Check.Eq("ENOMEM", failure!.ErrnoName, "the errno of the failed zlink_poller_new");
        Console.WriteLine($"# {refused} allocation request(s) refused; {failure.Message}");
        var p = new Poller();
        var q = new Poller();
        Check.True(p.NativeHandle != 0 && q.NativeHandle != 0 && p.NativeHandle != q.NativeHandle, "two distinct pollers");
        Check.Eq(0, p.TryDestroy(), "p destroyed");
        // Destroyed: its pointer is NULL, which C refuses (the binding passes NULL on).
        OtherErrno("EFAULT");
        PlCases.ExpectConfig(p.TryDestroy(), Results.Close.InvalidHandle, "EFAULT", "p destroyed again (NULL)");
        OtherErrno("EFAULT");
        PlCases.ExpectConfig(PlCases.NullPoller.TryDestroy(), Results.Close.InvalidHandle, "EFAULT", "destroy NULL");
        Check.True(Outcome.Of(() => _ = p.Size) == "InvalidHandle", "a destroyed poller takes no calls");
        // Destroying a poller with registrations releases them all.
        var ctx = new Context();
        var s = ctx.Socket(SocketType.Router);
        var t = new Timer();
        Check.Eq(0, q.TryAdd(s, PollEvents.In | PollEvents.Completion | PollEvents.Route), "q adds the ROUTER with the completion bit");
        Check.Eq(0, q.TryAddTimer(t), "q adds the timer");
        Check.Eq(0, q.TryAddFd(0, PollEvents.In), "q adds fd 0");
        Check.Eq(0, q.TryDestroy(), "q destroyed with registrations");
        Check.Eq(0, t.TryDestroy(), "the timer is free (not CLOSE_BUSY)");
        var r = new Poller();
        Check.Eq(0, r.TryAdd(s, PollEvents.Completion), "the completion bit is free");
        Check.Eq(0, r.TryDestroy(), "r destroyed");
        s.Dispose();
        ctx.Dispose();
    }
}
