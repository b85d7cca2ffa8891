// RawPeer.cs — the shared helpers of the cases with raw peers
// (framework-contract.md §7.2), over the .NET binding's Core classes only:
// test sockets in a context of their own, fresh endpoints, framework
// records encoded by hand from doc/protocol.md §14 (as conformance/c/
// sc_wire.c), DONTWAIT fills until refused, completion-record
// expectations, and the monitor's flow / pending view.
//
// A raw peer sends what no framework host would, so nothing here uses the
// framework's encoder. Its context is not a host's, so a raw peer reaches
// a host over tcp only (inproc names do not cross contexts). The helpers
// keep no state and take no lock: callable from any thread, each socket
// used by one thread at a time (the Core rule).
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using System.Threading;

namespace ZLink.Conformance;

/// <summary>Core socket option names of zlink.h used by the raw cases.</summary>
internal static class Opt
{
    public const int SndBuf = 0x3005, RcvBuf = 0x3006, Linger = 0x300A, SndHwm = 0x300F, RcvHwm = 0x3010,
                     RcvTimeo = 0x3012, SndTimeo = 0x3013;
}

/// <summary>A framework frame written big-endian, byte by byte.</summary>
internal sealed class Wire
{
    private readonly MemoryStream _b = new();
    public Wire U8(int v) { _b.WriteByte((byte)v); return this; }
    public Wire U16(int v) => U8(v >> 8).U8(v);
    public Wire U32(uint v) => U8((int)(v >> 24)).U8((int)(v >> 16)).U8((int)(v >> 8)).U8((int)v);
    public Wire U64(ulong v) => U32((uint)(v >> 32)).U32((uint)v);
    public Wire Bytes(ReadOnlySpan<byte> p) { _b.Write(p); return this; }
    public Wire L8(string s)
    {
        var p = Encoding.UTF8.GetBytes(s);
        Check.True(p.Length <= 255, "an l8 text of at most 255 bytes");
        return U8(p.Length).Bytes(p);
    }
    /// <summary>The 5-byte prefix: magic "ZM", major 1, the command and the flags.</summary>
    public Wire Prefix(int command, int flags) => U8(0x5A).U8(0x4D).U8(0x01).U8(command).U8(flags);
    public byte[] Done() => _b.ToArray();
}

internal static class RawPeer
{
    public const int TimeoMs = 2000;
    public const int NodeSend = 16, NodeRequest = 17, ChannelSend = 18, ChannelRequest = 19;
    private static int _seq;

    public static byte[] B(string s) => Encoding.UTF8.GetBytes(s);
    public static string S(byte[] b) => Encoding.UTF8.GetString(b);
    public static int Ms(int ms) => ms * Program.TimeoutMult;

    // ------------------------------------------------------------ sockets

    /// <summary>A socket of ctx with LINGER 0 and SNDTIMEO / RCVTIMEO TimeoMs (scaled).</summary>
    public static Socket Sock(Context ctx, SocketType type)
    {
        var s = ctx.Socket(type);
        s.SetOption(Opt.Linger, 0);
        s.SetOption(Opt.SndTimeo, Ms(TimeoMs));
        s.SetOption(Opt.RcvTimeo, Ms(TimeoMs));
        return s;
    }

    /// <summary>Binds s to a fresh endpoint of tr; the address a peer connects to.</summary>
    public static string Bind(Socket s, string tr)
    {
        if (tr == "tcp")
        {
            s.Bind("tcp://127.0.0.1:0");
            string ep = s.LastEndpoint;
            Check.True(ep.StartsWith("tcp://127.0.0.1:", StringComparison.Ordinal), "a tcp endpoint: " + ep);
            return ep;
        }
        Check.True(tr == "inproc", "a known transport: " + tr);
        string want = $"inproc://dotnet-raw-{Environment.ProcessId}-{Interlocked.Increment(ref _seq)}";
        s.Bind(want);
        return want;
    }

    /// <summary>A raw DEALER of ctx with routing id rid (LINGER 0), connected to ep.</summary>
    public static Socket Dealer(Context ctx, string rid, string ep)
    {
        var d = ctx.Socket(SocketType.Dealer);
        d.SetRoutingId(B(rid));
        d.SetOption(Opt.Linger, 0);
        d.Connect(ep);
        return d;
    }

    /// <summary>SNDHWM and / or RCVHWM in bytes (a negative value leaves it).</summary>
    public static void Hwm(Socket s, long snd, long rcv)
    {
        if (snd >= 0) s.SetOption(Opt.SndHwm, snd);
        if (rcv >= 0) s.SetOption(Opt.RcvHwm, rcv);
    }

    /// <summary>The kernel buffers of a tcp socket (SNDBUF / RCVBUF, negative: left).</summary>
    public static void Buffers(Socket s, int snd, int rcv)
    {
        if (snd >= 0) s.SetOption(Opt.SndBuf, snd);
        if (rcv >= 0) s.SetOption(Opt.RcvBuf, rcv);
    }

    // ------------------------------------------------------------ records (doc/protocol.md §14)

    /// <summary>The payload envelope (§14.6) of packet with content type ctype.</summary>
    public static byte[] Envelope(string packet, string ctype, ReadOnlySpan<byte> payload) =>
        new Wire().U8(0x01).U32((uint)payload.Length).L8(packet).L8(ctype).Bytes(payload).Done();

    /// <summary>A channel record: frame 0 CHANNEL_SEND (correlation 0) or CHANNEL_REQUEST
    /// (its correlation, timeout_ms 0), frame 1 the envelope of packet "m", content type "".</summary>
    public static byte[][] ChannelRecord(int flags, ulong correlation, ulong op, string channel, ReadOnlySpan<byte> payload)
    {
        var f0 = new Wire().Prefix(correlation != 0 ? ChannelRequest : ChannelSend, flags);
        if (correlation != 0) f0.U64(correlation);
        f0.U64(0).U64(op);
        if (correlation != 0) f0.U32(0);
        f0.L8(channel);
        return new[] { f0.Done(), Envelope("m", "", payload) };
    }

    public static byte[][] ChannelSendRecord(ulong op, string channel, ReadOnlySpan<byte> payload) => ChannelRecord(0, 0, op, channel, payload);
    public static byte[][] ChannelRequestRecord(ulong correlation, ulong op, string channel, ReadOnlySpan<byte> payload) =>
        ChannelRecord(0, correlation, op, channel, payload);

    /// <summary>A node record: NODE_SEND (correlation 0) or NODE_REQUEST (timeout_ms 0) with
    /// the envelope of packet.</summary>
    public static byte[][] NodeRecord(int flags, ulong correlation, ulong op, string packet, ReadOnlySpan<byte> payload)
    {
        var f0 = new Wire().Prefix(correlation != 0 ? NodeRequest : NodeSend, flags);
        if (correlation != 0) f0.U64(correlation);
        f0.U64(0).U64(op);
        if (correlation != 0) f0.U32(0);
        return new[] { f0.Done(), Envelope(packet, "", payload) };
    }

    public static ulong Be64(ReadOnlySpan<byte> b)
    {
        ulong v = 0;
        for (int i = 0; i < 8; i++) v = v << 8 | b[i];
        return v;
    }

    public static uint Be32(ReadOnlySpan<byte> b) => (uint)b[0] << 24 | (uint)b[1] << 16 | (uint)b[2] << 8 | b[3];

    public static byte[] PutBe32(byte[] b, int at, uint v)
    {
        b[at] = (byte)(v >> 24); b[at + 1] = (byte)(v >> 16); b[at + 2] = (byte)(v >> 8); b[at + 3] = (byte)v;
        return b;
    }

    // ------------------------------------------------------------ submits and receives

    public static void Result(int want, int got, string what)
    {
        if (want != got)
            throw new CheckFailed($"{what}: {ZLinkCore.ResultName(got)} ({got}), expected {ZLinkCore.ResultName(want)}");
    }

    /// <summary>A blocking request (10 s timeout) from s (to: a ROUTER's target, empty for a
    /// DEALER); its completion id.</summary>
    public static ulong Request(Socket s, string? to, string text) => Request(s, to, new[] { B(text) });

    public static ulong Request(Socket s, string? to, IReadOnlyList<byte[]> parts)
    {
        int r = s.TryRequest(to == null ? ReadOnlySpan<byte>.Empty : B(to), parts, false, (uint)Ms(10000), 0, out ulong id);
        Result(Results.Submit.Ok, r, "request");
        Check.True(id != 0, "a completion id");
        return id;
    }

    /// <summary>One REQUEST at ROUTER r, its payload checked; the source and the token.</summary>
    public static (byte[] rid, ulong token) RecvRequest(Socket r, string want)
    {
        Result(Results.Recv.Ok, r.TryRouterRecv(out var rid, out var token, out var parts), "router_recv");
        Check.True(token != 0, "a request token");
        Check.Eq(1, parts.Length, "parts");
        Check.Eq(want, S(parts[0]), "the request");
        return (rid, token);
    }

    /// <summary>DONTWAIT DATA of size bytes from ROUTER r to `to` until refused; the count
    /// admitted, the wait token of the refusal in wt.</summary>
    public static int Fill(Socket r, string to, int size, out ulong wt)
    {
        var body = new byte[size];
        Array.Fill(body, (byte)'d');
        var rid = B(to);
        var end = DateTime.UtcNow.AddMilliseconds(Ms(10000));
        for (int n = 0; ; n++)
        {
            int rc = r.TrySendTo(rid, new[] { body }, true, 0, out wt);
            if (rc == Results.Submit.Backpressured)
            {
                Check.Eq("EAGAIN", ZLinkCore.LastErrnoName, "errno");
                Check.True(wt != 0, "a wait token");
                return n;
            }
            Result(Results.Submit.Ok, rc, "send_rid");
            if (DateTime.UtcNow > end || n > 1000000) throw new CheckFailed($"sends to '{to}' were never refused");
        }
    }

    /// <summary>Fill until the refusal holds (no WRITABLE edge within 100 ms); the count.</summary>
    public static int FillStable(Socket r, string to, int size, out ulong wt)
    {
        int total = 0;
        r.SetOption(Opt.RcvTimeo, Ms(100));
        for (int round = 0; ; round++)
        {
            Check.True(round < 100000, "the refusal holds");
            total += Fill(r, to, size, out wt);
            if (r.TryRecvCompletion(out var rec) != Results.Recv.Ok) break;   // quiet: the refusal holds
            Check.Eq(CompletionKind.Writable, rec!.Kind, "a WRITABLE record");
            Check.Eq(Results.SendComplete.Admitted, rec.SendResult, "send_result");
            Check.Eq(wt, rec.Id, "the token");
        }
        r.SetOption(Opt.RcvTimeo, Ms(TimeoMs));
        return total;
    }

    /// <summary>No completion record is queued on s.</summary>
    public static void NoRecord(Socket s) => Result(Results.Recv.NoData, s.TryRecvCompletion(out _, true), "completion_recv");

    /// <summary>Waits for the WRITABLE record of wt; WRITABLE records of the tokens in others
    /// may come first.</summary>
    public static void ExpectWritable(Socket s, ulong wt, params ulong[] others)
    {
        for (; ; )
        {
            Result(Results.Recv.Ok, s.TryRecvCompletion(out var rec), "completion_recv");
            Check.Eq(CompletionKind.Writable, rec!.Kind, "a WRITABLE record");
            Check.Eq(Results.SendComplete.Admitted, rec.SendResult, "send_result");
            if (rec.Id == wt) return;
            if (Array.IndexOf(others, rec.Id) < 0) throw new CheckFailed("a WRITABLE record of an unknown token " + rec.Id);
        }
    }

    /// <summary>The REQUEST record of id on s: OK with the one reply part text.</summary>
    public static void ExpectReply(Socket s, ulong id, string text)
    {
        Result(Results.Recv.Ok, s.TryRecvCompletion(out var rec), "completion_recv");
        Check.Eq(CompletionKind.Request, rec!.Kind, "a REQUEST record");
        Check.Eq(id, rec.Id, "the completion id");
        Result(Results.Request.Ok, rec.RequestResult, "request_result");
        Check.Eq(1, rec.ReplyParts.Length, "reply parts");
        Check.Eq(text, S(rec.ReplyParts[0]), "the reply");
    }

    /// <summary>The request result of completion id on s (other records are skipped).</summary>
    public static int RequestResult(Socket s, ulong id)
    {
        for (; ; )
        {
            Result(Results.Recv.Ok, s.TryRecvCompletion(out var rec), "completion_recv");
            if (rec!.Kind == CompletionKind.Request && rec.Id == id) return rec.RequestResult;
        }
    }

    /// <summary>Receives n one-part DATA records of size bytes on DEALER d.</summary>
    public static void DrainData(Socket d, int n, int size)
    {
        for (int i = 0; i < n; i++)
        {
            Result(Results.Recv.Ok, d.TryRecv(out var parts), "recv");
            Check.Eq(1, parts.Length, "parts");
            Check.Eq(size, parts[0].Length, "size");
        }
    }

    // ------------------------------------------------------------ the monitor's view

    /// <summary>The records s's Core holds from peers, not yet received.</summary>
    public static ulong RcvPending(SocketMonitor mon)
    {
        var st = mon.Status;
        Check.True((st.DetailFlags & MonitorStatus.DetailRcvPending) != 0, "the monitor reports pending receives");
        return st.RcvPendingMsgs;
    }

    /// <summary>The peer's view of its peers' receive flow: a zero-timeout poll lets s take
    /// in what arrived, then PausedBy.</summary>
    public static ulong PausedSeen(Socket s, SocketMonitor mon)
    {
        Span<PollItem> it = stackalloc PollItem[1];
        it[0] = new PollItem(s, PollEvents.Out);
        ZLinkPoll.Poll(it, 0);
        return PausedBy(mon);
    }

    /// <summary>How many of s's peers pause it now (the flow-state view).</summary>
    public static ulong PausedBy(SocketMonitor mon)
    {
        var st = mon.Status;
        Check.True((st.DetailFlags & MonitorStatus.DetailFlowState) != 0, "the monitor reports the flow state");
        return st.FlowPausedConnections;
    }
}
