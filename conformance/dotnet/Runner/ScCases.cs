// ScCases.cs — the SC cases (seed 000 §17, framework-contract.md §7.1),
// ported from conformance/c/sc_*.c onto the .NET binding's public API.
using System;
using System.Diagnostics;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal static class ScCases
{
    private static void EachTransport(CaseParams p, Action<string> round)
    {
        foreach (var tr in p.Strings("transports"))
        {
            if (tr != "inproc" && tr != "tcp") throw new CheckFailed("unknown transport " + tr);
            round(tr);
        }
    }

    // ------------------------------------------------------------- SC-01

    /// <summary>Both terminators refuse: Submit gives want, Async on a twin is
    /// faulted at once with want (its completion never runs).</summary>
    private static void RefusedBothWays(Func<string, Call> make, string want, string what)
    {
        var c = make("refused-w");
        Check.Eq(want, Outcome.Of(() => Submit(c)), what + " Submit");
        c.Dispose();
        c = make("refused-s");
        var t = c is RequestCall r ? (Task)r.Async().AsTask() : ((OneWayCall)c).Async().AsTask();
        Check.True(t.IsCompleted, what + " Async refused at once");
        Check.Eq(want, Outcome.Name(t), what + " Async");
        c.Dispose();
    }

    private static void Submit(Call c)
    {
        if (c is RequestCall r) r.Submit(); else ((OneWayCall)c).Submit();
    }

    private static void RefusedEachKind(ScClient a, string? channel, string? rid, string want, string what)
    {
        foreach (bool req in new[] { false, true })
            RefusedBothWays(tag => rid != null
                ? (req ? a.NodeRequest(rid, tag) : a.NodeSend(rid, tag))
                : (req ? a.Request(tag, channel!) : a.Send(tag, channel!)), want, $"{what} ({(req ? "request" : "send")})");
    }

    public static void Sc01(CaseParams p) => EachTransport(p, tr =>
    {
        using var b = new ScServer { Name = "B", ZeroChannel = true }.Open(Mode.Mesh, tr, "sc01");
        var a = new ScClient { ExtraChannels = true }.Open(Mode.Mesh, b);

        // A one-way completes at admission, before the gated handler runs.
        b.Gated = true;
        var d1 = Done.Of(a.Send("m1").Async());
        d1.Expect(2000, "m1 admitted");
        Check.Eq("OK", d1.Result, "m1");
        Check.Eq(0, b.Rec.Count, "records before the gate opened");
        Check.Eventually(() => b.Gate.Waiting == 1, 2000, "m1 waits at B's gate");
        Check.Eq(0, b.Rec.Count, "records while gated");
        b.Gate.Open();
        Check.Eventually(() => b.Rec.Has("m1") == 1, 2000, "m1 handled");

        // The error table.
        RefusedEachKind(a, "nope", null, "NotFound", "unknown channel");
        RefusedEachKind(a, "none", null, "NotFound", "no server");
        RefusedEachKind(a, "zero", null, "NotFound", "weight 0 only");
        RefusedEachKind(a, null, "Z", "NotFound", "no such node");

        // A second terminator changes nothing.
        var m2 = a.Send("m2");
        var d2 = Done.Of(m2.Async());
        Check.Eq("InvalidOperation", Outcome.Name(m2.Async().AsTask()), "second Async");
        Check.Eq("InvalidOperation", Outcome.Of(() => m2.Submit()), "Submit after Async");
        Check.Eq("InvalidOperation", Outcome.Name(m2.Yield().AsTask()), "Yield after Async");
        d2.Expect(2000, "m2 admitted");
        var w = a.Request("w1");
        w.Submit();
        Check.Eq("InvalidOperation", Outcome.Name(w.Async().AsTask()), "Async after Submit");
        Check.Eq("InvalidOperation", Outcome.Of(() => w.Submit()), "second Submit");
        w.Dispose();

        // The synchronous terminator inside a handler: InvalidOperation at once (and shutdown).
        using (var sy = a.H.SendToChannel("svc").Payload("sync", new byte[] { (byte)'s' })) sy.Submit();
        Check.Eventually(() => Volatile.Read(ref b.SyncRan) == 1, 2000, "sync handler ran");
        Check.Eq("InvalidOperation", b.SyncWait, "Submit in a handler");
        Check.Eq("InvalidOperation", b.SyncShutdown, "Shutdown in a handler");
        Check.Eq(HostState.Serving, b.H.State, "B still serving");

        // Nothing refused reached B.
        using (var mk = a.Send("marker")) mk.Submit();
        Check.Eventually(() => b.Rec.Has("marker") == 1, 2000, "marker handled");
        Check.Eq(4, b.Rec.Count, "B's records (m1, m2, w1, marker)");
        Check.Eq(1, b.Rec.Has("m1"), "m1 once");
        Check.Eq(1, b.Rec.Has("m2"), "m2 once");
        Check.Eq("OK", d2.Result, "m2");

        // Any call after A's shutdown began: ShuttingDown.
        b.Reply = (int)ReplyMode.Hold;
        var dh = Done.Of(a.Request("h1").Async());
        Check.Eventually(() => b.Held == 1, 2000, "h1 held by B");
        var shut = Task.Factory.StartNew(() => a.H.Shutdown(Check.Bound(2000)), TaskCreationOptions.LongRunning);
        Check.Eventually(() => a.H.State != HostState.Serving, 2000, "A draining");
        RefusedEachKind(a, "svc", null, "ShuttingDown", "draining, channel");
        RefusedEachKind(a, null, "B", "ShuttingDown", "draining, node");
        Check.True(!dh.IsDone, "h1 still pending while A drains");
        Check.Wait(shut, 10000, "A's shutdown");
        Check.True(shut.IsCompletedSuccessfully, "A's shutdown OK");
        Check.True(dh.Decided(), "h1 decided before shutdown returned");
        Check.Eventually(() => dh.IsDone, 2000, "h1 recorded");
        Check.Eq("ShuttingDown", dh.Result, "h1");
        RefusedEachKind(a, "svc", null, "ShuttingDown", "stopped, channel");
        a.Dispose();

        // Node and channel calls to B after B's link is cut: Unavailable.
        b.DropHeld();
        b.Reply = (int)ReplyMode.Now;
        var a2 = new ScClient().Open(Mode.Mesh, b);
        using (var mk2 = a2.Send("marker2")) mk2.Submit();
        Check.Eventually(() => b.Rec.Has("marker2") == 1, 2000, "marker2 handled");
        Check.Eq(6, b.Rec.Count, "B's records (+ h1, marker2)");
        b.H.Shutdown(TimeSpan.FromSeconds(1));
        Check.Eventually(() => a2.H.MeshReadyPeers("m") == 0, 5000, "A2 lost B");
        RefusedEachKind(a2, null, "B", "Unavailable", "B gone, node");
        RefusedEachKind(a2, "svc", null, "Unavailable", "B gone, channel");
        a2.Dispose();
    });

    // ------------------------------------------------------------- SC-02

    private const long SatHwm = 16 * 1024;

    private static void CapacityWait(string tr, bool openEarly)
    {
        using var b = new ScServer { Name = "B", MaxJobs = 1, Hwm = SatHwm }.Open(Mode.Mesh, tr, openEarly ? "sc02a" : "sc02b");
        using var a = new ScClient { Hwm = SatHwm, SendTimeoutNs = 2_000_000_000 }.Open(Mode.Mesh, b);
        var sat = a.Saturate(b);
        if (openEarly)
        {
            // (a) open() at 500 ms: the pending send is admitted then, once.
            long wait = sat.startedMs + 500 - Done.Clock.ElapsedMilliseconds;
            Check.True(!sat.done.Task.Wait((int)Math.Max(0, wait)), "pending until open()");
            b.Gate.Open();
            sat.done.Expect(3000, "admitted after open()");
            Check.Eq("OK", sat.done.Result, "the pending send");
            Check.True(sat.done.AtMs - sat.startedMs < 2000, "admitted before its send timeout");
        }
        else
        {
            // (b) never opened: DeadlineExceeded at the send timeout.
            sat.done.Expect(2000 + 250 + 1000, "the pending send's deadline");
            Check.Eq("DeadlineExceeded", sat.done.Result, "the pending send");
            OnTime(sat.done.AtMs - sat.startedMs, 2000, "the send timeout");
            b.Gate.Open();
        }
        using (var mk = a.Send("marker")) mk.Submit();
        Check.Eventually(() => b.Rec.Has("marker") == 1, 5000, "marker handled");
        Check.Eq(openEarly ? 1 : 0, b.Rec.Has(sat.tag), "the pending send reached B");
        Check.Eq(sat.accepted + (openEarly ? 2 : 1), b.Rec.Count, "B's records");
        sat.call.Dispose();
    }

    public static void Sc02(CaseParams p) => EachTransport(p, tr => { CapacityWait(tr, true); CapacityWait(tr, false); });

    // ------------------------------------------------------------- SC-03

    public static void Sc03(CaseParams p) => EachTransport(p, tr =>
    {
        using var b = new ScServer { Name = "B", MaxJobs = 1, Hwm = SatHwm }.Open(Mode.Mesh, tr, "sc03");
        using var a = new ScClient { Hwm = SatHwm, SendTimeoutNs = 10_000_000_000L * Program.TimeoutMult }.Open(Mode.Mesh, b);
        long w = a.H.GetOption(HostOption.AdmissionWaiters);
        Check.True(w > 0 && w < 100000, "ADMISSION_WAITERS in range");
        Check.Eq((ulong)w, a.H.Status.AdmissionWaitersMax, "status admission_waiters_max");
        var sat = a.Saturate(b);
        var parked = new Done[w];
        for (long i = 1; i < w; i++) parked[i] = Done.Of(a.Send("p" + i, "svc", 4096).Async());
        Check.Eventually(() => a.H.Status.OnewayWaiting == (ulong)w, 2000, "W one-ways waiting");
        for (long i = 1; i < w; i++) Check.True(!parked[i].IsDone, $"p{i} still parked");
        Check.True(!sat.done.IsDone, "the first parked send still pending");

        // W + 1: DeadlineExceeded at once, nothing kept.
        long t0 = Done.Clock.ElapsedMilliseconds;
        var dx = Done.Of(a.Send("overflow", "svc", 4096).Async());
        dx.Expect(50, "overflow");
        Check.Eq("DeadlineExceeded", dx.Result, "overflow");
        Check.True(dx.AtMs - t0 <= 50L * Program.TimeoutMult, "overflow at once");
        Check.Eq((ulong)w, a.H.Status.OnewayWaiting, "still W waiting");

        // open(): every parked send is admitted once; the overflow never.
        b.Gate.Open();
        sat.done.Expect(10000, "first parked");
        Check.Eq("OK", sat.done.Result, "first parked");
        for (long i = 1; i < w; i++) { parked[i].Expect(10000, "p" + i); Check.Eq("OK", parked[i].Result, "p" + i); }
        using (var mk = a.Send("marker")) mk.Submit();
        Check.Eventually(() => b.Rec.Has("marker") == 1, 10000, "marker handled");
        Check.Eq(0, b.Rec.Has("overflow"), "the overflow never reached B");
        Check.Eq(sat.accepted + (int)w + 1, b.Rec.Count, "B's records");
        Check.Eq(1, b.Rec.Has(sat.tag), "the first parked once");
        Check.Eq(1, b.Rec.Has("p1"), "p1 once");
        sat.call.Dispose();
    });

    // ------------------------------------------------------------- SC-06

    public static void Sc06(CaseParams p) => EachTransport(p, tr =>
    {
        // Every setter of a send-timeout family rejects 0, negative, infinite and > INT_MAX ms
        // and keeps the value it had.
        TimeSpan[] bad = { TimeSpan.Zero, TimeSpan.FromMilliseconds(-1), TimeSpan.MaxValue, TimeSpan.FromMilliseconds((double)int.MaxValue + 1) };
        using var h = new Host("A6");
        h.AddMeshNode("m", "A", null);
        h.AddCsClient("svc", ScServer.Endpoint(tr, "sc06", "B"));
        h.SetOption(HostOption.DefaultSendTimeout, TimeSpan.FromMilliseconds(700));
        h.SetMeshOption("m", NodeOption.SendTimeout, 800_000_000);
        h.SetChannelOption("svc", NodeOption.SendTimeout, 900_000_000);
        foreach (var v in bad)
        {
            long ns = v == TimeSpan.MaxValue ? long.MaxValue : (long)(v.TotalMilliseconds * 1_000_000);
            Check.Eq("InvalidArgument", Outcome.Of(() => h.SetOption(HostOption.DefaultSendTimeout, ns)), $"root send timeout {ns} ns");
            Check.Eq("InvalidArgument", Outcome.Of(() => h.SetMeshOption("m", NodeOption.SendTimeout, ns)), $"mesh send timeout {ns} ns");
            Check.Eq("InvalidArgument", Outcome.Of(() => h.SetChannelOption("svc", NodeOption.SendTimeout, ns)), $"channel send timeout {ns} ns");
            Check.Eq("InvalidArgument", Outcome.Of(() => h.RequestToChannel("svc").Timeout(v)), $"call timeout {v}");
        }
        Check.Eq(700_000_000L, h.GetOption(HostOption.DefaultSendTimeout), "root kept");
        Check.Eq(800_000_000L, h.GetMeshOption("m", NodeOption.SendTimeout), "mesh kept");
        Check.Eq(900_000_000L, h.GetChannelOption("svc", NodeOption.SendTimeout), "channel kept");
        // 400 us rounds up to 1 ms.
        h.SetMeshOption("m", NodeOption.SendTimeout, 400_000);
        Check.Eq(1_000_000L, h.GetMeshOption("m", NodeOption.SendTimeout), "400 us reads back 1 ms");
    });

    // ------------------------------------------------------------- SC-09

    private static void Answered(ScClient a, string tag)
    {
        var r = a.Request(tag).Submit();
        Check.Eq(tag, Encoding.UTF8.GetString(r.Payload), "answered " + tag);
    }

    private static void InflightBackToZero(ScClient a)
    {
        Check.Eventually(() => a.H.Metric("zlink.mesh_node.requests.inflight") == 0, 2000, "requests.inflight 0");
        Check.Eq(0ul, a.H.Status.RequestsInflight, "status requests_inflight");
    }

    private static void OnTime(long elapsed, long wantMs, string what)
    {
        Check.True(elapsed >= wantMs, $"{what}: {elapsed} ms < {wantMs} ms");
        Check.True(elapsed <= wantMs + 250L * Program.TimeoutMult, $"{what}: {elapsed} ms, expected about {wantMs} ms");
    }

    public static void Sc09(CaseParams p) => EachTransport(p, tr =>
    {
        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, tr, "sc09");
        using var a = new ScClient().Open(Mode.Mesh, b);

        // (a) B replies at once: the value.
        var da = Done.Of(a.Request("a").Async());
        da.Expect(2000, "(a)");
        Check.Eq("OK", da.Result, "(a) result");
        Check.Eq("a", da.ReplyTag, "(a) reply");

        // (b) B replies after 500 ms; the timeout is 200 ms.
        b.DelayMs = 500;
        b.Reply = (int)ReplyMode.Delay;
        long t0 = Done.Clock.ElapsedMilliseconds;
        var db = Done.Of(a.Request("b").Timeout(TimeSpan.FromMilliseconds(200)).Async());
        db.Expect(2000, "(b)");
        Check.Eq("DeadlineExceeded", db.Result, "(b) result");
        OnTime(db.AtMs - t0, 200, "(b) deadline");
        Check.Eventually(() => Volatile.Read(ref b.RepliesSent) == 1, 3000, "(b) late reply left B");
        Check.Eq(1, b.Rec.Has("b"), "(b) handler ran");
        b.Reply = (int)ReplyMode.Now;
        Answered(a, "after-b");
        InflightBackToZero(a);

        // (c) cancelled at 100 ms; the reply at 300 ms is ignored.
        b.DelayMs = 300;
        b.Reply = (int)ReplyMode.Delay;
        using var cts = new CancellationTokenSource();
        var cc = a.Request("c");
        var dc = Done.Of(cc.Async(cts.Token));
        Check.True(!dc.Task.Wait(100), "(c) pending at 100 ms");
        cts.Cancel();
        cc.Cancel();   // idempotent
        dc.Expect(2000, "(c)");
        Check.Eq("Cancelled", dc.Result, "(c) result");
        Check.Eventually(() => Volatile.Read(ref b.RepliesSent) == 2, 3000, "(c) late reply left B");
        b.Reply = (int)ReplyMode.Now;
        Answered(a, "after-c");
        cc.Cancel();   // after the end: changes nothing
        Check.Eq("Cancelled", Outcome.Name(dc.Task), "(c) still cancelled");
        InflightBackToZero(a);

        // (e) B's handler fails: InternalFailure.
        b.Reply = (int)ReplyMode.Fail;
        var de = Done.Of(a.Request("e").Async());
        de.Expect(2000, "(e)");
        Check.Eq("InternalFailure", de.Result, "(e) result");
        b.Reply = (int)ReplyMode.Now;
        Answered(a, "after-e");

        // (d) A shuts down while a request is pending: ShuttingDown, decided before shutdown returns.
        b.Reply = (int)ReplyMode.Hold;
        var dd = Done.Of(a.Request("d").Async());
        Check.Eventually(() => b.Held == 1, 2000, "(d) held by B");
        a.H.Shutdown(TimeSpan.FromMilliseconds(200));
        Check.True(dd.Decided(), "(d) decided before shutdown returned");
        dd.Expect(2000, "(d)");
        Check.Eq("ShuttingDown", dd.Result, "(d) result");
        Check.Eq(0ul, a.H.Status.RequestsInflight, "(d) requests_inflight");
    });

    // ------------------------------------------------------------- SC-11

    /// <summary>Server y never saw tag: a marker sent to y after the outcome arrives, and y has no tag.</summary>
    private static void NeverSeenBy(ScClient a, ScServer y, string tag)
    {
        if (a.Mode == Mode.Mesh)
        {
            using (var mk = a.NodeSend(y.Name, "marker")) mk.Submit();
            Check.Eventually(() => y.Rec.Has("marker") >= 1, 2000, "marker reached " + y.Name);
        }
        else
        {
            for (int i = 0; y.Rec.Has("marker") == 0; i++)
            {
                Check.True(i < 200, "a marker landed on " + y.Name);
                using var mk = a.Request("marker");
                string r = Outcome.Of(() => mk.Submit());
                Check.True(r == "OK" || r == "DeadlineExceeded", "marker request: " + r);
            }
        }
        Check.Eq(0, y.Rec.Has(tag), y.Name + " saw " + tag);
    }

    private static void NoResubmit(string tr, Mode mode)
    {
        using var s1 = new ScServer { Name = "S1" }.Open(mode, tr, "sc11");
        using var s2 = new ScServer { Name = "S2" }.Open(mode, tr, "sc11");
        using var a = new ScClient().Open(mode, s1, s2);

        // A 300 ms request lands on one server, which never replies: DeadlineExceeded; the other never sees it.
        s1.Reply = s2.Reply = (int)ReplyMode.Hold;
        long t0 = Done.Clock.ElapsedMilliseconds;
        var dt = Done.Of(a.Request("t").Timeout(TimeSpan.FromMilliseconds(300)).Async());
        Check.Eventually(() => s1.Rec.Has("t") + s2.Rec.Has("t") == 1, 2000, "t reached one server");
        var x = s1.Rec.Has("t") == 1 ? s1 : s2;
        var y = x == s1 ? s2 : s1;
        dt.Expect(2000, "t");
        Check.Eq("DeadlineExceeded", dt.Result, "t");
        OnTime(dt.AtMs - t0, 300, "t's timeout");
        x.Reply = y.Reply = (int)ReplyMode.Now;
        NeverSeenBy(a, y, "t");
        Check.Eq(1, x.Rec.Has("t"), "t once at " + x.Name);

        // Killed after it received the request: exactly one terminal, never resubmitted.
        s1.Reply = s2.Reply = (int)ReplyMode.Hold;
        var dk = Done.Of(a.Request("k").Timeout(Check.Bound(3000)).Async());
        Check.Eventually(() => s1.Rec.Has("k") + s2.Rec.Has("k") == 1, 2000, "k reached one server");
        x = s1.Rec.Has("k") == 1 ? s1 : s2;
        y = x == s1 ? s2 : s1;
        y.Reply = (int)ReplyMode.Now;
        x.H.Shutdown(TimeSpan.FromMilliseconds(500));
        dk.Expect(3000 + 250 + 1000, "k");
        Check.True(dk.Result == "Unavailable" || dk.Result == "DeadlineExceeded", "the request to a killed server ended " + dk.Result);
        NeverSeenBy(a, y, "k");
        InflightBackToZero(a);
    }

    public static void Sc11(CaseParams p) => EachTransport(p, tr => { NoResubmit(tr, Mode.Mesh); NoResubmit(tr, Mode.Cs); });

    // ------------------------------------------------------------- SC-19

    private static bool ProbeAnswered(ScClient a)
    {
        using var pr = a.Request("probe");
        string r = Outcome.Of(() => pr.Submit());
        Check.True(r == "OK" || r == "NotFound" || r == "Unavailable", "a probe ended " + r);
        return r == "OK";
    }

    public static void Sc19(CaseParams p) => EachTransport(p, tr =>
    {
        using var s1 = new ScServer { Name = "S1", MaxJobs = 3 }.Open(Mode.Mesh, tr, "sc19");
        using var s2 = new ScServer { Name = "S2", Weight = 0 }.Open(Mode.Mesh, tr, "sc19");
        using var a = new ScClient().Open(Mode.Mesh, s1, s2);

        // S1 saturated: one turn open at the gate, and behind it f1, the marker and the request as queued jobs.
        s1.Gated = true;
        using (var f = a.Send("f0")) f.Submit();
        Check.Eventually(() => s1.Gate.Waiting == 1, 2000, "f0 at S1's gate");
        using (var f = a.Send("f1")) f.Submit();
        Check.Eventually(() => s1.H.Status.TurnsQueued == 1, 2000, "f1 queued");
        var dm = Done.Of(a.Send("mk").Async());
        dm.Expect(2000, "mk");
        Check.Eq("OK", dm.Result, "mk accepted");
        var dq = Done.Of(a.Request("rq").Timeout(Check.Bound(3000)).Async());
        Check.Eventually(() => s1.H.Status.TurnsQueued == 3, 2000, "three queued at S1");
        Check.Eq(3ul, s1.H.Status.PermitsInUse, "S1 permits in use");
        Check.True(!dq.Task.Wait(100), "rq pending");

        // Kill S1: its 300 ms drain passes with the gate closed, so the queued jobs never run.
        var shut = Task.Factory.StartNew(() => s1.H.Shutdown(TimeSpan.FromMilliseconds(300)), TaskCreationOptions.LongRunning);
        Check.Eventually(() => s1.H.State != HostState.Serving, 2000, "S1 draining");
        dq.Expect(3000 + 250 + 1000, "rq");
        s1.Gate.Open();
        Check.Wait(shut, 10000, "S1's shutdown");
        Check.True(shut.IsCompletedSuccessfully, "S1's shutdown OK");
        Check.Eq(0, s1.Rec.Has("rq") + s1.Rec.Has("mk"), "S1 ran neither rq nor mk");
        Check.True(dq.Result == "Unavailable" || dq.Result == "DeadlineExceeded" || dq.Result == "ShuttingDown",
                   "the request queued at a killed server ended " + dq.Result);

        // S2 becomes eligible: calls reach it, the marker and the request never do.
        Check.Eventually(() => a.H.MeshReadyPeers("m") == 1, 5000, "A has one peer");
        s2.H.SetMeshWeight("m", "svc", 100);
        Check.Eventually(() => ProbeAnswered(a), 3000, "S2 answers");
        using (var after = a.Send("after")) after.Submit();
        Check.Eventually(() => s2.Rec.Has("after") == 1, 2000, "after reached S2");
        Check.Eq(0, s2.Rec.Has("mk"), "S2 saw mk");
        Check.Eq(0, s2.Rec.Has("rq"), "S2 saw rq");
        Check.Eq(0, s2.Rec.Has("f0") + s2.Rec.Has("f1"), "S2 saw f0/f1");
        InflightBackToZero(a);
    });

    // ------------------------------------------------------------- SC-12 (and JQ-21)

    public static void Sc12(CaseParams p) => EachTransport(p, tr =>
    {
        const int D = 20;
        using var s = new ScServer { Name = "S", MaxJobs = 1 }.Open(Mode.Cs, tr, "sc12");
        using var c = new ScClient { SendTimeoutNs = 60_000_000_000 }.Open(Mode.Cs, s);
        c.Request("warm").Submit();   // the connection is up
        var dd = c.SendGated(s, D);
        long t0 = Done.Clock.ElapsedMilliseconds;
        var dq = Done.Of(c.Request("q").Timeout(TimeSpan.FromMilliseconds(300)).Async());
        dq.Expect(2000, "q");
        Check.Eq("DeadlineExceeded", dq.Result, "q");
        OnTime(dq.AtMs - t0, 300, "q's timeout");
        Check.True(s.H.Capacity.Paused, "S PAUSED");
        s.Gate.Open();
        for (int i = 0; i < D; i++) { dd[i].Expect(5000, "d" + (i + 1)); Check.Eq("OK", dd[i].Result, "d" + (i + 1)); }
        c.Request("after").Submit();   // behind everything sent before
        var seen = s.Rec.Snapshot();
        int n = seen.Length;
        bool order = n >= 2 + D && seen[0] == "warm" && seen[n - 1] == "after";
        for (int i = 0; order && i < D; i++) order = seen[1 + i] == "d" + (i + 1);
        bool qOk = n == 2 + D || (n == 3 + D && seen[1 + D] == "q");
        Check.True(order && qOk, $"S handled {n} records out of FIFO order (warm, d1..d20, [q], after expected): {string.Join(" ", seen)}");
        Check.Eventually(() => c.H.Metric("zlink.mesh_node.requests.inflight") == 0, 2000, "in-flight back to 0");
    });

    // ------------------------------------------------------------- SC-16

    private static void ExactlyOnceUnderRaces(string tr, int total, int window, int cancelPct)
    {
        using var b = new ScServer { Name = "B", DelayMs = 45, DelayMaxMs = 55, Reply = (int)ReplyMode.Delay }.Open(Mode.Mesh, tr, "sc16");
        using var a = new ScClient().Open(Mode.Mesh, b);
        var slots = new SemaphoreSlim(window, window);
        var decided = new Func<bool>[total];
        var tasks = new Task<Reply>[total];
        var cancel = new bool[total];
        var ctss = new CancellationTokenSource[total];
        int continuations = 0;
        ulong rng = 0x2545F4914F6CDD1Dul;
        for (int i = 0; i < total; i++)
        {
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            cancel[i] = (int)(rng % 100) < cancelPct;
            Check.True(slots.Wait(Check.Bound(10000)), "a window slot frees");
            var cts = ctss[i] = new CancellationTokenSource();
            var c = a.Request("r" + i).Timeout(TimeSpan.FromMilliseconds(50));
            var vt = c.Async(cts.Token);
            decided[i] = () => vt.IsCompleted;
            if (cancel[i]) cts.CancelAfter(45 + (int)(rng % 11));   // cancel at about 50 ms
            var t = vt.AsTask();
            tasks[i] = t;
            t.ContinueWith(_ => { Interlocked.Increment(ref continuations); slots.Release(); }, TaskContinuationOptions.ExecuteSynchronously);
        }
        // The last window is still racing: shut A down now. Once it returned, every outcome was delivered.
        a.H.Shutdown(TimeSpan.FromMilliseconds(20));
        for (int i = 0; i < total; i++) Check.True(decided[i](), $"call {i} decided when shutdown returned");
        Check.Eq(0ul, a.H.Status.RequestsInflight, "requests_inflight");
        Check.Eq(0L, a.H.Metric("zlink.mesh_node.requests.inflight"), "requests.inflight metric");
        b.H.Shutdown(TimeSpan.FromSeconds(1));
        Check.True(Task.WaitAll(tasks.Cast<Task>().Select(t => t.ContinueWith(_ => { })).ToArray(), Check.Bound(10000)), "every task completed");
        Check.Eventually(() => Volatile.Read(ref continuations) == total, 5000, "every continuation ran once");
        ulong inUse = 0;
        try { Check.Eventually(() => (inUse = a.H.Status.DispatcherInUse) == 0, 5000, "dispatcher empty"); }
        catch (CheckFailed) { throw new CheckFailed($"dispatcher empty: {inUse} in use after 5 s (B: {b.H.Status.DispatcherInUse}); replies started {Volatile.Read(ref b.RepliesSent)}"); }
        int[] counts = new int[4];
        for (int i = 0; i < total; i++)
        {
            string r = Outcome.Name(tasks[i]);
            int k = r switch { "OK" => 0, "DeadlineExceeded" => 1, "Cancelled" => 2, "ShuttingDown" => 3, _ => throw new CheckFailed($"call {i} ended {r}") };
            if (k == 0 && Encoding.UTF8.GetString(tasks[i].Result.Payload) != "r" + i) throw new CheckFailed($"call {i} got another call's reply");
            if (k == 2 && !cancel[i]) throw new CheckFailed($"call {i} was cancelled but nobody cancelled it");
            counts[k]++;
            ctss[i].Dispose();
        }
        Console.Error.WriteLine($"SC-16 {tr}: {counts[0]} ok, {counts[1]} deadline, {counts[2]} cancelled, {counts[3]} shutting down");
    }

    public static void Sc16(CaseParams p)
    {
        int total = (int)p.Int("requests"), window = (int)p.Int("window"), pct = (int)p.Int("cancel_percent");
        Check.True(total > 0 && window > 0 && window < 4096 / 2, "requests and window in range");
        EachTransport(p, tr => ExactlyOnceUnderRaces(tr, total, window, pct));
    }

    // ------------------------------------------------------------- SC-17

    public static void Sc17(CaseParams p) => EachTransport(p, tr =>
    {
        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, tr, "sc17");
        using var a = new ScClient().Open(Mode.Mesh, b);
        // The continuation never runs while Async is on the caller's stack, nor
        // on the calling thread; also for 1 ms timeouts decided by the runtime.
        for (int i = 0; i < 200; i++)
        {
            int inSubmit = 1;
            int caller = Environment.CurrentManagedThreadId;
            var seen = new TaskCompletionSource<(bool raised, int thread)>(TaskCreationOptions.RunContinuationsAsynchronously);
            var c = a.Request("fast");
            if (i % 4 == 3) c.Timeout(TimeSpan.FromMilliseconds(1));
            var vt = c.Async();
            var aw = vt.GetAwaiter();
            aw.UnsafeOnCompleted(() =>
            {
                // lowered right after Async returned: a continuation inside Async would see it raised for good
                var until = Done.Clock.ElapsedMilliseconds + 2000L * Program.TimeoutMult;
                bool raised = false;
                while (Volatile.Read(ref inSubmit) == 1)
                {
                    if (Environment.CurrentManagedThreadId == caller || Done.Clock.ElapsedMilliseconds > until) { raised = true; break; }
                    Thread.Yield();
                }
                seen.TrySetResult((raised, Environment.CurrentManagedThreadId));
            });
            Volatile.Write(ref inSubmit, 0);
            var (raisedSeen, thread) = Check.Wait(seen.Task, 2000, $"completion {i}");
            Check.True(!raisedSeen, $"completion {i} ran inside Async");
            Check.True(thread != caller, $"completion {i} ran on the calling thread");
            string r = Outcome.Of(() => aw.GetResult());
            Check.True(r == "OK" || (i % 4 == 3 && r == "DeadlineExceeded"), $"completion {i}: {r}");
            c.Dispose();
        }

        // A continuation that starts the next request gets its completion: no deadlock.
        var inner = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        var outer = a.Request("outer").Async();
        outer.GetAwaiter().UnsafeOnCompleted(() =>
        {
            var t = a.Request("inner").Async().AsTask();
            t.ContinueWith(x => inner.TrySetResult(x.IsCompletedSuccessfully ? Encoding.UTF8.GetString(x.Result.Payload) : Outcome.Name(x)));
        });
        Check.Eq("inner", Check.Wait(inner.Task, 2000, "inner reply"), "inner reply");

        // A continuation that throws does not stop the next completion.
        var next = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        var bad = a.Request("bad").Async().AsTask();
        _ = bad.ContinueWith(_ => throw new InvalidOperationException("a failing continuation"));
        var t2 = a.Request("next").Async().AsTask();
        _ = t2.ContinueWith(x => next.TrySetResult(Encoding.UTF8.GetString(x.Result.Payload)));
        Check.Eq("next", Check.Wait(next.Task, 2000, "next reply"), "next reply");
        Check.Wait(bad, 2000, "bad completion");
        Check.True(bad.IsCompletedSuccessfully, "bad request itself succeeded");
    });

    // ------------------------------------------------------------- SC-20

    public static void Sc20(CaseParams p) => EachTransport(p, tr =>
    {
        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, tr, "sc20");
        using var a = new ScClient().Open(Mode.Mesh, b);
        b.Reply = (int)ReplyMode.Hold;

        // Timeout: DeadlineExceeded, through both terminators.
        var e = Assert(() => a.Request("t-wait").Timeout(TimeSpan.FromMilliseconds(100)).Submit());
        Check.Eq("DeadlineExceeded", Outcome.Of(e), "Submit timeout");
        Check.Eq(0u, ((ZLinkFrameworkException)e).RemoteCode, "remote code of a timeout");
        var dt = Done.Of(a.Request("t-start").Timeout(TimeSpan.FromMilliseconds(100)).Async());
        dt.Expect(2000, "t-start");
        Check.Eq("DeadlineExceeded", dt.Result, "Async timeout");

        // Cancel: the cancelled type, no error kind.
        using var cts = new CancellationTokenSource();
        var dc = Done.Of(a.Request("c").Async(cts.Token));
        Check.Eventually(() => b.Rec.Has("c") == 1, 2000, "c reached B");
        cts.Cancel();
        dc.Expect(2000, "c");
        Check.Eq("Cancelled", dc.Result, "cancel");
        Check.True(dc.Task.IsCanceled, "the task is Canceled (OperationCanceledException)");

        // A handler failure saying "cancelled timeout" is InternalFailure.
        b.Reply = (int)ReplyMode.Fail;
        var f = Assert(() => a.Request("boom").Submit());
        Check.Eq("InternalFailure", Outcome.Of(f), "handler failure");
        Check.Eq("cancelled timeout", f.Message, "its message");
        Check.Eq(105u, ((ZLinkFrameworkException)f).RemoteCode, "the wire's internalError");

        // Shutdown: ShuttingDown.
        b.Reply = (int)ReplyMode.Hold;
        var ds = Done.Of(a.Request("s").Async());
        Check.Eventually(() => b.Rec.Has("s") == 1, 2000, "s reached B");
        a.H.Shutdown(TimeSpan.FromMilliseconds(100));
        Check.True(ds.Decided(), "s decided before shutdown returned");
        ds.Expect(2000, "s");
        Check.Eq("ShuttingDown", ds.Result, "shutdown");
    });

    private static Exception Assert(Action a)
    {
        try { a(); }
        catch (Exception e) { return e; }
        throw new CheckFailed("the call succeeded, expected a failure");
    }
}
