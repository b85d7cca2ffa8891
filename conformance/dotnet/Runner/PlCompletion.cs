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
    private const int LongWaitMs = 5000;
    private static byte[] U(string s) => Encoding.UTF8.GetBytes(s);

    /// <summary>A ROUTER bound on inproc and a DEALER "D" connected to it, both ways up.</summary>
    private static (Socket d, Socket r) DrPair(Context ctx, string tag)
    {
        var r = ctx.Socket(SocketType.Router);
        r.Bind($"inproc://{tag}-{Environment.ProcessId}");
        var d = ctx.Socket(SocketType.Dealer);
        d.SetRoutingId(U("D"));
        d.Connect(r.LastEndpoint);
        d.Send(U("hello"));
        Check.Eq(0, r.TryRouterRecv(out var rid, out _, out var parts), "the ROUTER receives hello");
        Check.Eq("D", Encoding.UTF8.GetString(rid), "from D");
        Check.Eq("hello", Encoding.UTF8.GetString(parts[0]), "hello");
        return (d, r);
    }

    private static ulong RequestAnswered(Socket d, Socket r, string text, nint uctx)
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

    private static void ExpectRecord(Socket s, ulong id, nint uctx, string reply)
    {
        int r = s.TryRecvCompletion(out var c, true);
        Check.Eq(0, r, $"completion_recv for record {id}: {ZLinkCore.ResultName(r)}");
        Check.True(c!.Kind == CompletionKind.Request && c.Id == id && c.UserContext == uctx,
                   $"record of kind {c.Kind}, id {c.Id}, context {c.UserContext}; expected REQUEST {id} {uctx}");
        Check.Eq(ZLinkCore.ResultName(Results.Request.Ok), ZLinkCore.ResultName(c.RequestResult), $"record {id}'s request result");
        Check.Eq(1, c.ReplyParts.Length, $"record {id}'s reply parts");
        Check.Eq(reply, Encoding.UTF8.GetString(c.ReplyParts[0]), $"record {id}'s reply");
    }

    private static void ExpectNoRecord(Socket s)
    {
        int r = s.TryRecvCompletion(out var c, true);
        Check.True(c == null, $"expected no record, got kind {c?.Kind} id {c?.Id}");
        Check.Eq(ZLinkCore.ResultName(Results.Recv.NoData), ZLinkCore.ResultName(r), "NO_DATA");
        Check.Eq("EAGAIN", ZLinkCore.LastErrnoName, "EAGAIN");
    }

    private static void ExpectEvent(Poller p, Socket s, int ms, PollEvents want)
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
        using var ctx = new Context();
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
        d.Dispose(); r.Dispose();
    }

    // ------------------------------------------------------------- PL-18

    public static void Pl18(CaseParams prm)
    {
        int records = (int)prm.Int("records");
        Check.True(records >= 2 && records <= 64, "2 <= records <= 64");
        using var ctx = new Context();
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
        d.Dispose(); r.Dispose();
    }
}
