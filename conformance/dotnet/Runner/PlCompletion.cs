// PlCompletion.cs — the completion-polling PL cases (conformance/c/pl_completion.c)
// through the binding's completion queue surface: Socket.TryRequest
// (zlink_request), Socket.TryReply (zlink_reply_submit),
// Socket.TryRecvCompletion (zlink_completion_recv) and POLLCOMPLETION.
// Records are made without sleeping: a DEALER's request answered by its
// ROUTER over inproc.
using System;
using System.Text;

namespace ZLink.Conformance;

internal static class PlCompletion
{
    internal const int LongWaitMs = 5000;
    private static byte[] U(string s) => Encoding.UTF8.GetBytes(s);

    /// <summary>A ROUTER bound on inproc and a DEALER "D" connected to it, both ways up.</summary>
    internal static (Socket d, Socket r) DrPair(Context ctx, string tag, string tr = "inproc")
    {
        var r = ctx.Socket(SocketType.Router);
        r.Bind(tr == "tcp" ? "tcp://127.0.0.1:0" : $"inproc://{tag}-{Environment.ProcessId}");
        return (DealerTo(ctx, r, r.LastEndpoint, "D"), r);
    }

    /// <summary>A DEALER with routing id rid connected to r at ep, both ways up.</summary>
    private static Socket DealerTo(Context ctx, Socket r, string ep, string rid)
    {
        var d = ctx.Socket(SocketType.Dealer);
        d.SetRoutingId(U(rid));
        d.Connect(ep);
        d.Send(U("hello"));   // waits for the peer
        Check.Eq(0, r.TryRouterRecv(out var from, out _, out var parts), "the ROUTER receives hello");
        Check.Eq(rid, Encoding.UTF8.GetString(from), "from " + rid);
        Check.Eq("hello", Encoding.UTF8.GetString(parts[0]), "hello");
        return d;
    }

    internal static ulong RequestAnswered(Socket d, Socket r, string text, nint uctx)
    {
        Check.Eq(0, d.TryRequest(default, new[] { U(text) }, false, 0, uctx, out ulong id), "zlink_request");
        Check.True(id != 0, "a nonzero completion id");
        Check.Eq(0, r.TryRouterRecv(out var src, out ulong tok, out var parts), "the ROUTER receives the request");
        Check.True(tok != 0, "a reply token");
        Check.Eq(1, parts.Length, "one part");
        Check.Eq(text, Encoding.UTF8.GetString(parts[0]), "the request's text");
        Check.Eq(0, r.TryReply(src, tok, 0, new[] { U(text) }, false, 0, out _), "zlink_reply_submit");
        return id;
    }

    internal static void ExpectRecord(Socket s, ulong id, nint uctx, string reply)
    {
        int r = s.TryRecvCompletion(out var c, true);
        Check.Eq(0, r, $"completion_recv for record {id}: {ZLinkCore.ResultName(r)}");
        Check.True(c!.Kind == CompletionKind.Request && c.Id == id && c.UserContext == uctx,
                   $"record of kind {c.Kind}, id {c.Id}, context {c.UserContext}; expected REQUEST {id} {uctx}");
        Check.Eq(ZLinkCore.ResultName(Results.Request.Ok), ZLinkCore.ResultName(c.RequestResult), $"record {id}'s request result");
        Check.Eq(1, c.ReplyParts.Length, $"record {id}'s reply parts");
        Check.Eq(reply, Encoding.UTF8.GetString(c.ReplyParts[0]), $"record {id}'s reply");
    }

    internal static void ExpectNoRecord(Socket s)
    {
        int r = s.TryRecvCompletion(out var c, true);
        Check.True(c == null, $"expected no record, got kind {c?.Kind} id {c?.Id}");
        Check.Eq(ZLinkCore.ResultName(Results.Recv.NoData), ZLinkCore.ResultName(r), "NO_DATA");
        Check.Eq("EAGAIN", ZLinkCore.LastErrnoName, "EAGAIN");
    }

    internal static void ExpectEvent(Poller p, Socket s, int ms, PollEvents want)
    {
        var ev = new PollerEvent[8];
        int n = p.Wait(ev, ms);
        Check.True(n == 1 && ev[0].Socket == s.NativeHandle && ev[0].Events == want,
                   $"wait: {n} event(s), first with bits {(n > 0 ? ev[0].Events : 0)}; expected one with {want}");
    }

    // ------------------------------------------------------------- PL-16

    public static void Pl16(CaseParams prm)
    {
        int records = (int)prm.Int("records");
        Check.True(records >= 1 && records <= 64, "1 <= records <= 64");
        var ctx = new Context();   // not `using`: a failure must not wait in zlink_ctx_term for open sockets
        var (d, r) = DrPair(ctx, "pl16");
        var p = new Poller();
        Check.Eq(0, p.TryAdd(d, PollEvents.Completion), "add d for COMPLETION");
        const nint uctx = 0x5151;
        var ids = new ulong[records];
        for (int i = 0; i < records; i++) ids[i] = RequestAnswered(d, r, "q", uctx);
        // Waits, with and without a timeout, see the same records.
        for (int i = 0; i < 3; i++) ExpectEvent(p, d, i == 0 ? LongWaitMs : 0, PollEvents.Completion);
        // Registration calls.
        Check.Eq(0, p.TryModify(d, PollEvents.In | PollEvents.Completion), "modify IN|COMPLETION");
        ExpectEvent(p, d, 0, PollEvents.Completion);
        Check.Eq(0, p.TryModify(d, PollEvents.In), "modify IN");
        var ev = new PollerEvent[4];
        Check.Eq(0, p.Wait(ev, 0), "not asked for: not reported");
        Check.Eq(0, p.TryModify(d, PollEvents.Completion), "modify COMPLETION");
        Check.Eq(0, p.TryRemove(d), "remove d");
        Check.Eq(0, p.TryAdd(d, PollEvents.Completion), "add d again");
        ExpectEvent(p, d, 0, PollEvents.Completion);
        // Every record is still there, once, in order.
        for (int i = 0; i < records; i++) ExpectRecord(d, ids[i], uctx, "q");
        ExpectNoRecord(d);
        Check.Eq(0, p.Wait(ev, 0), "nothing after the drain");
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        d.Dispose(); r.Dispose(); ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-18

    public static void Pl18(CaseParams prm)
    {
        int records = (int)prm.Int("records");
        Check.True(records >= 2 && records <= 64, "2 <= records <= 64");
        var ctx = new Context();   // not `using`: a failure must not wait in zlink_ctx_term for open sockets
        var (d, r) = DrPair(ctx, "pl18");
        var p = new Poller();
        Check.Eq(0, p.TryAdd(d, PollEvents.In | PollEvents.Completion, 18), "add d");
        const nint uctx = 0x1818;
        var ids = new ulong[records];
        for (int i = 0; i < records; i++) ids[i] = RequestAnswered(d, r, "q", uctx);
        ExpectEvent(p, d, LongWaitMs, PollEvents.Completion);
        var ev = new PollerEvent[4];
        for (int i = 0; i < records; i++)
        {
            ExpectRecord(d, ids[i], uctx, "q");
            if (i + 1 < records) ExpectEvent(p, d, 0, PollEvents.Completion);
            else Check.Eq(0, p.Wait(ev, 0), "the last record read clears COMPLETION");
        }
        ExpectNoRecord(d);
        // And it comes back with the next record.
        ulong id = RequestAnswered(d, r, "again", uctx);
        ExpectEvent(p, d, LongWaitMs, PollEvents.Completion);
        ExpectRecord(d, id, uctx, "again");
        Check.Eq(0, p.Wait(ev, 0), "clear again");
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        d.Dispose(); r.Dispose(); ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-19

    public static void Pl19(CaseParams prm)
    {
        int nsock = (int)prm.Int("sockets"), nrec = (int)prm.Int("records_per_socket"), cap = (int)prm.Int("event_capacity");
        Check.True(nsock >= 2 && nsock <= 8 && nrec >= 2 && nrec <= 16 && cap >= 1 && cap < nsock, "parameters in range");
        var ctx = new Context();   // not `using`: a failure must not wait in zlink_ctx_term for open sockets
        var r = ctx.Socket(SocketType.Router);
        r.Bind($"inproc://pl19-{Environment.ProcessId}");
        var p = new Poller();
        var d = new Socket[nsock];
        var ids = new ulong[nsock, nrec];
        var next = new int[nsock];
        for (int i = 0; i < nsock; i++)
        {
            d[i] = DealerTo(ctx, r, r.LastEndpoint, "D" + i);
            Check.Eq(0, p.TryAdd(d[i], PollEvents.Completion, i + 1), $"add D{i}");
        }
        for (int k = 0; k < nrec; k++)
            for (int i = 0; i < nsock; i++)
                ids[i, k] = RequestAnswered(d[i], r, "q", i + 1);
        var ev = new PollerEvent[cap];
        int total = 0, waits = 0;
        while (total < nsock * nrec)
        {
            int n = p.Wait(ev, waits == 0 ? LongWaitMs : 0);
            waits++;
            Check.True(n >= 1 && n <= cap, $"wait {waits} returned {n} events with {nsock * nrec - total} records left (capacity {cap})");
            for (int e = 0; e < n; e++)
            {
                Check.Eq(PollEvents.Completion, ev[e].Events, "COMPLETION");
                int i = (int)ev[e].UserData - 1;
                Check.True(i >= 0 && i < nsock && ev[e].Socket == d[i].NativeHandle, "the event names its socket");
                // Drain that socket until NO_DATA: its records, in order.
                while (next[i] < nrec) { ExpectRecord(d[i], ids[i, next[i]], i + 1, "q"); next[i]++; total++; }
                ExpectNoRecord(d[i]);
            }
        }
        Check.True(waits >= (nsock + cap - 1) / cap, $"each wait reported at most {cap} sockets ({waits} waits)");
        Check.Eq(0, p.Wait(ev, 0), "nothing left");
        Check.Eq(0, p.TryDestroy(), "poller destroyed");
        foreach (var s in d) s.Dispose();
        r.Dispose(); ctx.Dispose();
    }

    // ------------------------------------------------------------- PL-20

    public static void Pl20(CaseParams prm)
    {
        foreach (var tr in prm.Strings("transports"))
        {
            if (tr != "inproc" && tr != "tcp") throw new CheckFailed("unknown transport " + tr);
            var ctx = new Context();   // not `using`: a failure must not wait in zlink_ctx_term for open sockets
            var (d, r) = DrPair(ctx, "pl20", tr);
            var p = new Poller();
            Check.Eq(0, p.TryAdd(d, PollEvents.In | PollEvents.Completion), "add d");
            const nint uctx = 0x2020;
            Check.Eq(0, d.TryRequest(default, new[] { U("q") }, false, 0, uctx, out ulong id), "zlink_request");
            Check.Eq(0, r.TryRouterRecv(out var src, out ulong tok, out var parts), "the request");
            Check.Eq("q", Encoding.UTF8.GetString(parts[0]), "its text");
            // DATA of two parts, then the REPLY, on the same connection.
            Check.Eq(0, r.TrySendTo(src, new[] { U("d1"), U("d2") }), "the DATA");
            Check.Eq(0, r.TryReply(src, tok, 0, new[] { U("reply") }, false, 0, out _), "the REPLY");
            // IN without COMPLETION, as often as we look.
            ExpectEvent(p, d, LongWaitMs, PollEvents.In);
            ExpectEvent(p, d, 0, PollEvents.In);
            ExpectNoRecord(d);
            var data = d.Recv();
            Check.True(data.Length == 2 && Encoding.UTF8.GetString(data[0]) == "d1" && Encoding.UTF8.GetString(data[1]) == "d2", $"{tr}: the DATA d1, d2");
            // The DATA is gone: the REPLY moves into the completion queue.
            ExpectEvent(p, d, LongWaitMs, PollEvents.Completion);
            ExpectRecord(d, id, uctx, "reply");
            var ev = new PollerEvent[2];
            Check.Eq(0, p.Wait(ev, 0), "nothing after the record");
            Check.Eq(0, p.TryDestroy(), "poller destroyed");
            d.Dispose(); r.Dispose(); ctx.Dispose();
        }
    }
}
