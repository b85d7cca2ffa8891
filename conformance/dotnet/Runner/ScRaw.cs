// ScRaw.cs — SC-14 and SC-15 (Core: raw replies under backpressure),
// ported from conformance/c/sc_raw.c onto the binding's Core classes
// (RawPeer.cs): a ROUTER answers a DEALER whose receive side is full or
// PAUSED (refused with a wait token, the sync reply times out at
// SNDTIMEO), and a ROUTER peer whose Application connection is full and
// PAUSED (the reply takes the Completion lane at once).
using System;
using System.Diagnostics;

namespace ZLink.Conformance;

internal static class ScRaw
{
    private static void Each(CaseParams p, Action<string> round)
    {
        foreach (var tr in p.Strings("transports")) round(tr);
    }

    public static void Sc14(CaseParams p) => Each(p, tr => { ReplyToDealer(tr, false); ReplyToDealer(tr, true); });
    public static void Sc15(CaseParams p) => Each(p, ReplyToRouter);

    private static byte[][] One(string text) => new[] { RawPeer.B(text) };

    private static void ReplyToDealer(string tr, bool paused)
    {
        string what = tr + (paused ? " paused" : " full");
        using var ctx = new Context();
        var r = RawPeer.Sock(ctx, SocketType.Router);
        r.SetRoutingId(RawPeer.B("R"));
        var d = RawPeer.Sock(ctx, SocketType.Dealer);
        d.SetRoutingId(RawPeer.B("D"));
        if (!paused)
        {
            RawPeer.Hwm(r, 4096, -1);
            RawPeer.Hwm(d, -1, 4096);
            if (tr == "tcp") { RawPeer.Buffers(r, 4096, -1); RawPeer.Buffers(d, -1, 4096); }
        }
        string ep = RawPeer.Bind(r, tr);
        d.Connect(ep);
        ulong id = RawPeer.Request(d, null, "q");
        var (rid, token) = RawPeer.RecvRequest(r, "q");
        int size = paused ? 1 : 1024;
        if (paused) RawPeer.Result(Results.Config.Ok, d.TrySetReceiveFlow(true), "PAUSED");
        int n = RawPeer.FillStable(r, "D", size, out ulong dataWt);
        ulong emptyWt = 0;
        int empties = paused ? 0 : RawPeer.FillStable(r, "D", 0, out emptyWt);

        RawPeer.Result(Results.Submit.Backpressured, r.TryReply(rid, token, 0, One("reply"), true, 0, out ulong wt), what + ": the async reply");
        Check.Eq("EAGAIN", ZLinkCore.LastErrnoName, "errno");
        Check.True(wt != 0 && wt != dataWt && wt != emptyWt, "a new wait token");
        RawPeer.NoRecord(r);
        r.SetOption(Opt.SndTimeo, 50);
        var sw = Stopwatch.StartNew();
        int src = r.TryReplyWait(rid, token, One("reply"));
        if (src != Results.Submit.Backpressured)
            throw new CheckFailed($"{what}: sync reply {ZLinkCore.ResultName(src)} after {sw.ElapsedMilliseconds} ms, BACKPRESSURED expected");
        Check.Eq("EAGAIN", ZLinkCore.LastErrnoName, "errno");
        Check.True(sw.ElapsedMilliseconds >= 50, $"the sync reply waited its SNDTIMEO ({sw.ElapsedMilliseconds} ms)");
        RawPeer.NoRecord(r);
        r.SetOption(Opt.SndTimeo, RawPeer.Ms(RawPeer.TimeoMs));

        if (paused) RawPeer.Result(Results.Config.Ok, d.TrySetReceiveFlow(false), "RUNNING");
        else { RawPeer.DrainData(d, n, size); RawPeer.DrainData(d, empties, 0); }
        if (paused) RawPeer.ExpectWritable(r, wt, dataWt);
        else RawPeer.ExpectWritable(r, wt, dataWt, emptyWt);
        RawPeer.Result(Results.Submit.Ok, r.TryReply(rid, token, 0, One("reply"), true, 0, out _), what + ": the async reply after the edge");
        if (paused) RawPeer.DrainData(d, n, size);
        RawPeer.ExpectReply(d, id, "reply");
        r.Dispose();
        d.Dispose();
    }

    private static bool TryRequest(Socket s, string to, string text, out ulong id)
    {
        int rc = s.TryRequest(RawPeer.B(to), One(text), true, (uint)RawPeer.Ms(10000), 0, out id);
        if (rc == Results.Submit.Ok) return true;
        RawPeer.Result(Results.Submit.NotConnected, rc, "request");
        return false;
    }

    private static void ReplyToRouter(string tr)
    {
        using var ctx = new Context();
        var a = RawPeer.Sock(ctx, SocketType.Router);
        a.SetRoutingId(RawPeer.B("A"));
        RawPeer.Hwm(a, 4096, -1);
        var b = RawPeer.Sock(ctx, SocketType.Router);
        b.SetRoutingId(RawPeer.B("B"));
        RawPeer.Hwm(b, -1, 4096);
        if (tr == "tcp") { RawPeer.Buffers(a, 4096, -1); RawPeer.Buffers(b, -1, 4096); }
        string ep = RawPeer.Bind(a, tr);
        b.Connect(ep);
        using var monA = a.OpenMonitor();
        ulong id1 = 0;
        Check.Eventually(() => TryRequest(b, "A", "q1", out id1), 5000, "B reaches A");
        ulong id2 = RawPeer.Request(b, "A", "q2");
        var q1 = RawPeer.RecvRequest(a, "q1");
        var q2 = RawPeer.RecvRequest(a, "q2");

        RawPeer.Result(Results.Config.Ok, b.TrySetReceiveFlow(true), "PAUSED");
        int n = RawPeer.FillStable(a, "B", 1024, out _);
        Check.Eq(0, RawPeer.Fill(a, "B", 1024, out _), "sends still refused");
        Check.Eventually(() => RawPeer.PausedSeen(a, monA) == 1, 5000, "A sees B PAUSED");

        RawPeer.Result(Results.Submit.Ok, a.TryReply(q1.rid, q1.token, 0, One("r1"), true, 0, out ulong wt), "the async reply");
        Check.Eq(0UL, wt, "no wait token");
        a.SetOption(Opt.SndTimeo, 0);
        RawPeer.Result(Results.Submit.Ok, a.TryReplyWait(q2.rid, q2.token, One("r2")), "the sync reply");
        RawPeer.ExpectReply(b, id1, "r1");
        RawPeer.ExpectReply(b, id2, "r2");
        RawPeer.Result(Results.Config.Ok, b.TrySetReceiveFlow(false), "RUNNING");
        for (int i = 0; i < n; i++)
        {
            RawPeer.Result(Results.Recv.Ok, b.TryRouterRecv(out _, out var token, out var parts), "router_recv");
            Check.Eq(0UL, token, "DATA");
            Check.Eq(1024, parts[0].Length, "size");
        }
        a.Dispose();
        b.Dispose();
    }
}
