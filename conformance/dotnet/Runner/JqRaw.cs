// JqRaw.cs — seed 001 §10 job-queue cases with raw peers or views the
// framework does not give, ported from conformance/c/jq_permits.c (JQ-03)
// and conformance/c/jq_raw.c (JQ-08, JQ-09, JQ-10, JQ-19, JQ-22) onto the
// binding's public API (RawPeer.cs for the Core side).
//
// Pre-queuing (JQ-08, JQ-09), as the C body: the target host B runs
// HandlerThreads 1, that is two host threads, and a .NET handler runs on
// the C worker thread (a synchronous Action handler holds it). Two
// blocker records on two gates ("svc" and "hold") put both threads inside
// handlers: nothing is left to receive, B's permits stay unused and B
// stays RUNNING. Over inproc a completed send is in B's Core queue, so
// once every send completed the order the handlers see after open() is
// the receive rotation's and nothing else's.
//
// Threads: the case's thread builds, sends and checks; handlers run on the
// hosts' threads, completions on the binding's. Locks: the log's, the
// flow's and the gates' (leaves all).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal static class JqRaw
{
    private const uint Blocker = 0xFFFFFFFFu, Warm = 0xFFFFFFFEu;
    private const string Dropped = "zlink.mesh_node.messages.dropped";
    private static readonly string[] DropReasons = { "reason=no_handler", "reason=decode_error", "reason=shutdown", "reason=backpressure", "reason=stale_target" };

    private static long DroppedSum(Host h) => DropReasons.Sum(r => h.Metric(Dropped, r));

    private static void EachTransport(CaseParams p, Action<string> round)
    {
        foreach (var tr in p.Strings("transports"))
        {
            if (tr != "inproc" && tr != "tcp") throw new CheckFailed("unknown transport " + tr);
            round(tr);
        }
    }

    private static void End(Host h)
    {
        if (h.State == HostState.Serving) h.Shutdown(TimeSpan.FromSeconds(2));
        h.Dispose();
    }

    // ------------------------------------------------------------- the order log

    /// <summary>What a handler saw, in arrival order: the source index (by the turn's source
    /// among Names, or, for ClientServer whose source is empty, payload byte 4) and the
    /// sequence (payload bytes 0..3, big-endian). A Blocker waits at the gate and is not
    /// logged; a Warm record is only counted.</summary>
    private sealed class OrderLog
    {
        private readonly object _lk = new();
        private readonly List<(int src, uint seq)> _v = new();
        public string[] Names = Array.Empty<string>();
        public bool SrcInPayload;
        public readonly Gate Gate = new(), Hold = new();
        private int _bad, _warm;
        public int WarmCount => Volatile.Read(ref _warm);

        public void OnLogged(Turn t)
        {
            var p = t.Payload;
            int src = -1;
            var rid = t.Source;
            if (SrcInPayload) { if (rid.Length == 0 && p.Length >= 5 && p[4] < Names.Length) src = p[4]; }
            else src = Array.IndexOf(Names, Encoding.UTF8.GetString(rid));
            uint seq = p.Length >= 4 ? RawPeer.Be32(p) : 0;
            if (p.Length >= 4 && seq == Blocker) { Gate.Pass(); return; }
            if (p.Length >= 4 && seq == Warm) { Interlocked.Increment(ref _warm); return; }
            lock (_lk)
            {
                if (src < 0 || p.Length < 4) _bad++;
                else _v.Add((src, seq));
                Monitor.PulseAll(_lk);
            }
        }

        public int Count { get { lock (_lk) return _v.Count; } }
        public (int src, uint seq)[] Snapshot() { lock (_lk) return _v.ToArray(); }

        /// <summary>Waits until n records are logged (ms, scaled: the failure bound).</summary>
        public void WaitFor(int n, int ms)
        {
            var end = DateTime.UtcNow + Check.Bound(ms);
            lock (_lk)
            {
                while (_v.Count < n && DateTime.UtcNow < end) Monitor.Wait(_lk, 20);
                if (_v.Count < n) throw new CheckFailed($"handlers logged {_v.Count} of {n} records within {ms} ms (bad {_bad})");
                Check.Eq(0, _bad, "records with an unknown source or a short payload");
            }
        }
    }

    /// <summary>The payload: seq (4 bytes BE), src (1 byte) padded with zeros to size.</summary>
    private static byte[] SeqPayload(uint seq, int src, int size)
    {
        var b = new byte[Math.Max(size, 5)];
        RawPeer.PutBe32(b, 0, seq);
        b[4] = (byte)src;
        return b;
    }

    /// <summary>A one-way of h to channel with payload seq padded to size; waits for admission.</summary>
    private static void SendSeq(Host h, string channel, uint seq, int size)
    {
        var b = new byte[Math.Max(size, 4)];
        RawPeer.PutBe32(b, 0, seq);
        using var c = h.SendToChannel(channel).Payload("m", b);
        c.Submit();
    }

    // ------------------------------------------------------------- JQ-03

    private static bool Hello(Socket peer, out ulong id)
    {
        var w = new Wire().Prefix(1, 0).L8("m").L8("C").L8("framework-service-v11").U64(1).U16(0);
        int rc = peer.TryRequest(RawPeer.B("A"), new[] { w.Done() }, true, (uint)RawPeer.Ms(5000), 0, out id);
        if (rc == Results.Submit.Ok) return true;
        RawPeer.Result(Results.Submit.NotConnected, rc, "HELLO");
        return false;
    }

    private static int RawSend(Socket peer, string tag, out ulong wt) =>
        peer.TrySendTo(RawPeer.B("A"), RawPeer.ChannelSendRecord(0, "svc", RawPeer.B(tag)), true, 0, out wt);

    /// <summary>The peer's view of A's receive flow: a zero-timeout poll lets the peer's
    /// socket take in what arrived, then the monitor's paused-connections count.</summary>
    private static ulong PausedSeen(Socket peer, SocketMonitor mon)
    {
        Span<PollItem> it = stackalloc PollItem[1];
        it[0] = new PollItem(peer, PollEvents.Out);
        ZLinkPoll.Poll(it, 0);
        return RawPeer.PausedBy(mon);
    }

    private static void RawWritable(Socket peer, ulong wt)
    {
        RawPeer.Result(Results.Recv.Ok, peer.TryRecvCompletion(out var c), "completion_recv");
        Check.Eq(CompletionKind.Writable, c!.Kind, "a WRITABLE record");
        Check.Eq(wt, c.Id, "the wait token");
        Check.Eq(Results.SendComplete.Admitted, c.SendResult, "send_result");
    }

    public static void Jq03(CaseParams p) => EachTransport(p, tr =>
    {
        if (tr != "tcp") throw new CheckFailed("JQ-03's raw peer lives in its own context: tcp only, not " + tr);
        var oa = new JqCases.Owner(true);
        var a = JqCases.MeshHost("A", "tcp", true, 2);
        oa.H = a;
        var plain = new JqCases.Owner(false);
        a.AddMeshChannelServer("m", "svc", 100);
        a.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "m", oa.OnSend);
        a.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "m", plain.OnRequest);
        a.Start();
        string bound = a.Endpoint("m");
        var ctx = new Context();
        var peer = ctx.Socket(SocketType.Router);
        SocketMonitor? mon = null;
        try
        {
            peer.SetOption(Opt.Linger, 0);
            peer.SetOption(Opt.RcvTimeo, RawPeer.Ms(5000));
            peer.SetRoutingId(RawPeer.B("C"));
            peer.SetOption(0x3104, RawPeer.B("A"));   // ZLINK_CONNECT_ROUTING_ID
            peer.Connect(bound);
            mon = peer.OpenMonitor();
            ulong hid = 0;
            Check.Eventually(() => Hello(peer, out hid), 5000, "the peer's HELLO reaches A");
            RawPeer.Result(Results.Recv.Ok, peer.TryRecvCompletion(out var hc), "completion_recv");
            Check.Eq(CompletionKind.Request, hc!.Kind, "the HELLO's REQUEST record");
            Check.Eq(hid, hc.Id, "the HELLO's completion id");
            RawPeer.Result(Results.Request.Ok, hc.RequestResult, "the HELLO's request_result");
            Check.True(hc.ReplyParts.Length >= 1 && hc.ReplyParts[0].Length > 3, "a HELLO reply frame");
            Check.Eq(2, (int)hc.ReplyParts[0][3], "the reply's command (HELLO_ACK)");
            Check.Eventually(() => a.MeshReadyPeers("m") == 1, 5000, "A sees the peer");

            RawPeer.Result(Results.Submit.Ok, RawSend(peer, "r1", out _), "r1");
            ulong wt = 0;
            Check.Eventually(() => oa.Gate.Waiting == 1, 5000, "r1 at the gate");
            int sent = 1;
            for (int i = 2; i <= 5; i++)
            {
                int rc = RawSend(peer, "r" + i, out ulong w);
                if (rc != Results.Submit.Ok)
                {
                    RawPeer.Result(Results.Submit.Backpressured, rc, "r" + i);
                    Check.True(w != 0, "a wait token");
                    wt = w;
                    break;
                }
                sent = i;
            }
            Check.True(sent >= 3, $"r1..r3 admitted by the peer's Core (sent {sent})");
            Check.Eventually(() => a.Capacity.QueuedJobs == 2, 5000, "two jobs queued");
            Check.Eventually(() => PausedSeen(peer, mon) == 1, 5000, "the peer sees A PAUSED");
            if (sent >= 4) Check.Eventually(() => a.Capacity.CapacityWaiters >= 1, 5000, "a capacity waiter");
            var cap = a.Capacity;
            Check.Eq(2UL, cap.PermitsInUse, "permits in use");
            Check.Eq(2UL, cap.QueuedJobs, "queued jobs");
            Check.True(cap.Paused, "A PAUSED");
            if (sent >= 4) Check.True(cap.CapacityWaiters >= 1, "a capacity waiter");
            Check.Eq(1, oa.Started, "turns started (r4, r5 not received)");
            Check.Eq(2UL, a.Status.TurnsQueued, "turns queued");

            oa.Gate.Open();
            while (sent < 5)
            {
                if (wt != 0) { RawWritable(peer, wt); wt = 0; }
                int rc = RawSend(peer, "r" + (sent + 1), out ulong w);
                if (rc == Results.Submit.Ok) sent++;
                else
                {
                    RawPeer.Result(Results.Submit.Backpressured, rc, "r" + (sent + 1));
                    Check.True(w != 0, "a wait token");
                    wt = w;
                }
            }
            Check.Eventually(() => oa.Ended == 5, 5000, "r1..r5 handled");
            oa.ExpectOrder(0, "r", 1, 5);
            Check.Eventually(() => a.Capacity.PermitsInUse == 0, 5000, "A's permits back");
            Check.True(!a.Capacity.Paused, "A RUNNING");
            Check.Eq(0L, DroppedSum(a), "A's drops");
            Check.Eq(5, oa.Started, "each record handled once");
        }
        finally
        {
            oa.Gate.Open();
            mon?.Dispose();
            peer.Dispose();
            ctx.Dispose();
            End(a);
        }
    });

    // ------------------------------------------------------------- JQ-08

    /// <summary>The runs of the log (maximal stretches from one source): each run that
    /// started while another source still had records is at most maxRun long; with every
    /// source still sending (cyclic) the runs go round the sources in one fixed cycle; each
    /// source's records come in its sending order. The longest run checked.</summary>
    private static int CheckRuns((int src, uint seq)[] v, int nsrc, int perSrc, int maxRun, bool cyclic, string what)
    {
        var left = new int[nsrc];
        Array.Fill(left, perSrc);
        var next = new uint[nsrc];
        int longest = 0, nruns = 0;
        int prev0 = -1, prev1 = -1;
        for (int i = 0; i < v.Length;)
        {
            int s = v[i].src;
            int others = 0, alive = 0;
            for (int k = 0; k < nsrc; k++)
            {
                if (left[k] > 0) alive++;
                if (k != s && left[k] > 0) others++;
            }
            int j = i;
            while (j < v.Length && v[j].src == s)
            {
                if (v[j].seq != next[s]) throw new CheckFailed($"{what}: record {j} of source {s} has seq {v[j].seq}, expected {next[s]}");
                next[s]++;
                j++;
            }
            int len = j - i;
            if (others > 0)
            {
                longest = Math.Max(longest, len);
                if (len > maxRun)
                    throw new CheckFailed($"{what}: source {s} got {len} consecutive records ({i}..{j - 1}) while another still had data; at most {maxRun} expected");
            }
            if (cyclic && alive == nsrc && nsrc == 3 && prev1 >= 0 && (s == prev0 || s == prev1))
            {
                var runs = new StringBuilder();
                for (int x = 0, r = 0; x < v.Length && r < 12; r++)
                {
                    int y = x;
                    while (y < v.Length && v[y].src == v[x].src) y++;
                    runs.Append($" [src {v[x].src} len {y - x}]");
                    x = y;
                }
                throw new CheckFailed($"{what}: run {nruns} (records {i}..{j - 1}) is from source {s} again, not the next socket after the last stop; runs:{runs}");
            }
            prev1 = prev0;
            prev0 = s;
            left[s] -= Math.Min(len, left[s]);
            nruns++;
            i = j;
        }
        for (int k = 0; k < nsrc; k++) Check.Eq((uint)perSrc, next[k], $"{what}: records of source {k}");
        return longest;
    }

    /// <summary>B: two host threads, a limit that never binds, a gated "svc" handler; layout
    /// 1: one mesh node "m" with the three clients as its peers (one ROUTER), layout 3:
    /// three nodes "m1".."m3", one per client. Each client pre-queues perSrc records of size
    /// bytes; then open(). The longest run.</summary>
    private static int RotationRound(string tr, int layout, int perSrc, int size, int maxRun, string what)
    {
        string[] names = { "A1", "A2", "A3" };
        string[] meshes = layout == 1 ? new[] { "m", "m", "m" } : new[] { "m1", "m2", "m3" };
        long hwm = (long)perSrc * (size + 256) * 2 + (1 << 20);
        var log = new OrderLog { Names = names };
        var b = new Host("B");
        var a = new List<Host>();
        try
        {
            b.SetOption(HostOption.HandlerThreads, 1);
            b.SetOption(HostOption.MaxQueuedJobs, 1000000);
            for (int i = 0; i < layout; i++)
            {
                b.AddMeshNode(meshes[i], "B", ScServer.Endpoint(tr, "jq08", meshes[i]));
                b.AddMeshChannelServer(meshes[i], "svc", 100);
                b.SetMeshOption(meshes[i], NodeOption.RcvHwm, hwm * 3);
            }
            b.AddMeshChannelServer(meshes[0], "hold", 100);
            b.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "m", log.OnLogged);
            b.AddHandler(OwnerKind.Channel, "hold", MessageKind.Send, "m", (Turn t) => log.Hold.Pass());
            b.Start();
            var bound = new string[layout];
            for (int i = 0; i < layout; i++) bound[i] = b.Endpoint(meshes[i]);
            for (int i = 0; i < 3; i++)
            {
                var h = new Host(names[i]);
                a.Add(h);
                h.AddMeshNode(meshes[i], names[i], null);
                h.AddMeshChannelClient(meshes[i], "svc");
                if (i == 0) h.AddMeshChannelClient(meshes[i], "hold");
                h.SetMeshOption(meshes[i], NodeOption.SndHwm, hwm);
                h.SetMeshOption(meshes[i], NodeOption.SendTimeout, 60_000_000_000);
                h.MeshConnect(meshes[i], bound[layout == 1 ? 0 : i], "B");
                h.Start();
                Check.Eventually(() => h.MeshReadyPeers(meshes[i]) == 1, 5000, names[i] + " sees B");
            }
            for (int i = 0; i < layout; i++)
                Check.Eventually(() => b.MeshReadyPeers(meshes[i]) == (layout == 1 ? 3 : 1), 5000, "B sees its peers on " + meshes[i]);

            // The blockers hold both of B's threads at their gates: B receives nothing more.
            SendSeq(a[0], "svc", Blocker, 4);
            Check.Eventually(() => log.Gate.Waiting == 1, 5000, "the blocker at the svc gate");
            SendSeq(a[0], "hold", 0, 4);
            Check.Eventually(() => log.Hold.Waiting == 1, 5000, "the blocker at the hold gate");
            // Pre-queue: the clients take turns, so no client's records are older than
            // another's by more than one record.
            for (int k = 0; k < perSrc; k++)
                for (int i = 0; i < 3; i++)
                    SendSeq(a[i], "svc", (uint)k, size);
            Check.Eq(0, log.Count, "records handled before open()");
            Check.Eq(0UL, b.Capacity.PermitsInUse, "B's permits in use (nothing received)");
            Check.True(!b.Capacity.Paused, "B RUNNING");

            log.Hold.Open();
            log.Gate.Open();
            log.WaitFor(3 * perSrc, 30000);
            var v = log.Snapshot();
            int longest = CheckRuns(v, 3, perSrc, maxRun, layout == 3, what);
            int first = 0;
            while (first < v.Length && v[first].src == v[0].src) first++;
            if (layout == 1 && longest > 1)
                throw new CheckFailed($"{what}: peers of one ROUTER were not interleaved record by record (a run of {longest})");
            Console.Error.WriteLine($"JQ-08 {what} {tr}: longest run {longest} (first {first})");
            Check.Eventually(() => b.Capacity.PermitsInUse == 0, 5000, "B's permits back");
            return longest;
        }
        finally
        {
            log.Hold.Open();
            log.Gate.Open();
            foreach (var h in a) End(h);
            End(b);
        }
    }

    public static void Jq08(CaseParams p) => EachTransport(p, tr =>
    {
        int perSrc = (int)p.Int("records"), small = (int)p.Int("small_size");
        int large = (int)p.Int("large_size"), largeRecords = (int)p.Int("large_records");
        Check.True(perSrc > 0 && small >= 4 && large >= 4 && largeRecords > 0, "parameters in range");
        // The byte bound: a socket's batch ends once 1 MiB of payload came.
        int byteRun = ((1 << 20) + large - 1) / large;
        RotationRound(tr, 1, perSrc, small, 1, "one ROUTER");
        int smallRun = RotationRound(tr, 3, perSrc, small, 64, "three sockets");
        int largeRun = RotationRound(tr, 3, largeRecords, large, byteRun, "three sockets, large");
        if (largeRun >= smallRun)
            throw new CheckFailed($"runs of {large}-byte records ({largeRun}) are not shorter than of {small}-byte ones ({smallRun})");
    });

    // ------------------------------------------------------------- JQ-09

    private static int RawSendSeq(Socket d, string channel, int src, uint seq, int size, bool dontWait, out ulong wt) =>
        d.TrySend(RawPeer.ChannelSendRecord(0, channel, SeqPayload(seq, src, size)), dontWait, 0, out wt);

    public static void Jq09(CaseParams p)
    {
        long hwm = p.Int("hwm");
        int size = (int)p.Int("record_size"), p2Records = (int)p.Int("p2_records");
        Check.True(hwm > 0 && size >= 5 && p2Records > 0, "parameters in range");
        var log = new OrderLog { Names = new[] { "P1", "P2" }, SrcInPayload = true };
        var b = new Host("B");
        var ctx = new Context();
        var socks = new List<Socket>();
        try
        {
            b.SetOption(HostOption.HandlerThreads, 1);
            b.SetOption(HostOption.MaxQueuedJobs, 1);
            b.AddCsServer("svc", "tcp://127.0.0.1:0");
            b.SetChannelOption("svc", NodeOption.RcvHwm, hwm);
            b.AddCsServer("hold", "tcp://127.0.0.1:0");
            b.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "m", log.OnLogged);
            b.AddHandler(OwnerKind.Channel, "hold", MessageKind.Send, "m", (Turn t) => log.Hold.Pass());
            b.Start();
            string ep = b.Endpoint("svc"), holdEp = b.Endpoint("hold");
            Socket Dealer(string rid, string e, long h)
            {
                var d = ctx.Socket(SocketType.Dealer);
                socks.Add(d);
                d.SetRoutingId(RawPeer.B(rid));
                if (h > 0) { RawPeer.Hwm(d, h, h); RawPeer.Buffers(d, 4096, -1); }
                d.SetOption(Opt.Linger, 0);
                d.Connect(e);
                return d;
            }
            var p1 = Dealer("P1", ep, hwm);
            var p2 = Dealer("P2", ep, hwm);
            RawPeer.Result(Results.Submit.Ok, RawSendSeq(p1, "svc", 0, Warm, 4, false, out _), "P1's warm record");
            RawPeer.Result(Results.Submit.Ok, RawSendSeq(p2, "svc", 1, Warm, 4, false, out _), "P2's warm record");
            Check.Eventually(() => log.WarmCount == 2, 5000, "both warm records handled");
            var hd = Dealer("H", holdEp, 0);
            RawPeer.Result(Results.Submit.Ok, RawSendSeq(p1, "svc", 0, Blocker, 4, false, out _), "the blocker");
            Check.Eventually(() => log.Gate.Waiting == 1, 5000, "the blocker at the svc gate");
            RawPeer.Result(Results.Submit.Ok, RawSendSeq(hd, "hold", 2, 0, 4, false, out _), "the hold blocker");
            Check.Eventually(() => log.Hold.Waiting == 1, 5000, "the blocker at the hold gate");

            int p1Sent = 0;
            p1.SetOption(Opt.RcvTimeo, RawPeer.Ms(100));
            for (int round = 0; ; round++)
            {
                Check.True(round < 100000, "P1's refusal holds");
                for (; ; )
                {
                    int rc = RawSendSeq(p1, "svc", 0, (uint)p1Sent, size, true, out ulong wt);
                    if (rc == Results.Submit.Backpressured) { Check.True(wt != 0, "a wait token"); break; }
                    RawPeer.Result(Results.Submit.Ok, rc, "P1's send");
                    p1Sent++;
                    Check.True(p1Sent < 1000000, "P1 refused within 1000000 sends");
                }
                // P1 is refused now: P2, another peer of the same ROUTER, is not. (Sent here,
                // before P1's quiet 100 ms, P2's records have that time to reach B's Core
                // over loopback: nothing public shows B's Core queue, see the report.)
                if (round == 0)
                    for (int i = 0; i < p2Records; i++)
                        RawPeer.Result(Results.Submit.Ok, RawSendSeq(p2, "svc", 1, (uint)i, size, true, out _), $"P2's send {i} admitted at once");
                if (p1.TryRecvCompletion(out _) != Results.Recv.Ok) break;   // the refusal holds: P1's pipe is full
            }
            Check.True(p1Sent > 0, "P1 sent before its refusal");
            RawPeer.Result(Results.Submit.Backpressured, RawSendSeq(p1, "svc", 0, (uint)p1Sent, size, true, out _), "P1 still refused");
            using (var mon = p2.OpenMonitor())
                Check.Eventually(() =>
                {
                    var st = mon.Status;
                    Check.True((st.DetailFlags & MonitorStatus.DetailSndPending) != 0, "the monitor reports pending sends");
                    return st.SndPendingMsgs == 0;
                }, 5000, "P2's records all left P2");
            Check.Eq(0, log.Count, "records handled before open()");
            Check.Eq(0UL, b.Capacity.PermitsInUse, "B's permits in use");
            Check.True(!b.Capacity.Paused, "B RUNNING");

            log.Hold.Open();
            log.Gate.Open();
            log.WaitFor(p1Sent + p2Records, 30000);
            var v = log.Snapshot();
            var next = new uint[2];
            int p2Left = p2Records;
            for (int i = 0; i < v.Length; i++)
            {
                int s = v[i].src;
                Check.Eq(next[s], v[i].seq, $"record {i}: P{s + 1}'s sequence");
                next[s]++;
                if (p2Left > 0 && i > 0 && v[i - 1].src == s)
                    throw new CheckFailed($"record {i}: P{s + 1} twice in a row while the other still had records (first sources: " +
                                          string.Join("", v.Take(24).Select(x => x.src + 1)) + ")");
                if (s == 1) p2Left--;
            }
            Console.Error.WriteLine($"JQ-09: P1 sent {p1Sent} before refusal; first handled after open: P{v[0].src + 1}");
            Check.Eventually(() => b.Capacity.PermitsInUse == 0, 5000, "B's permits back");
        }
        finally
        {
            log.Hold.Open();
            log.Gate.Open();
            foreach (var s in socks) s.Dispose();
            ctx.Dispose();
            End(b);
        }
    }

    // ------------------------------------------------------------- JQ-10

    private static readonly string[] Bad = { "undefined flag 0x10", "an extra frame", "no envelope", "five frames" };

    /// <summary>The frames of malformed shape k; a request when correlation != 0.</summary>
    private static byte[][] BadRecord(int k, ulong correlation, ulong op)
    {
        var p = RawPeer.ChannelRecord(k == 0 ? 0x10 : 0x00, correlation, op, "svc", RawPeer.B("bad"));
        var x = RawPeer.B("x");
        return k switch
        {
            1 => new[] { p[0], p[1], x },   // three frames without META
            2 => new[] { p[0] },
            3 => new[] { p[0], p[1], x, x, x },
            _ => p,
        };
    }

    /// <summary>B: a CS server "svc" with M = 1 (a permit malformed input kept would stop B
    /// for good). A raw DEALER sends each malformed shape as a request (ProtocolError, no
    /// handler) and as a one-way (a decode-error drop, no handler), then valid ones.</summary>
    public static void Jq10(CaseParams p)
    {
        int sends = 0, requests = 0;
        var b = new Host("B");
        var ctx = new Context();
        Socket? d = null;
        try
        {
            b.SetOption(HostOption.MaxQueuedJobs, 1);
            b.AddCsServer("svc", "tcp://127.0.0.1:0");
            b.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "m", (Turn t) => { Interlocked.Increment(ref sends); });
            b.AddHandler(OwnerKind.Channel, "svc", MessageKind.Request, "m", (Turn t) => { Interlocked.Increment(ref requests); t.Respond("m", t.Payload); });
            b.Start();
            d = RawPeer.Dealer(ctx, "raw", b.Endpoint("svc"));
            d.SetOption(Opt.RcvTimeo, RawPeer.Ms(5000));
            long dropped0 = b.Metric(Dropped, "reason=decode_error");
            long proto0 = b.Metric("zlink.host.protocol_errors");
            for (int k = 0; k < Bad.Length; k++)
            {
                RawPeer.Result(Results.Submit.Ok, d.TryRequest(default, BadRecord(k, 100 + (ulong)k, 200 + (ulong)k), false, (uint)RawPeer.Ms(5000), 0, out ulong id),
                               "a request with " + Bad[k]);
                int r = RawPeer.RequestResult(d, id);
                if (r != Results.Request.ProtocolError)
                    throw new CheckFailed($"a request with {Bad[k]}: request_result {ZLinkCore.ResultName(r)}, ProtocolError expected");
                RawPeer.Result(Results.Submit.Ok, d.TrySend(BadRecord(k, 0, 300 + (ulong)k)), "a one-way with " + Bad[k]);
                long want = dropped0 + k + 1;
                Check.Eventually(() => b.Metric(Dropped, "reason=decode_error") == want, 5000, $"the one-way with {Bad[k]} dropped as a decode error");
                Check.Eventually(() => b.Capacity.PermitsInUse == 0, 5000, "the permit came back");
            }
            Check.Eq(proto0 + 2 * Bad.Length, b.Metric("zlink.host.protocol_errors"), "protocol errors");
            Check.Eq(0, Volatile.Read(ref sends) + Volatile.Read(ref requests), "handlers run by malformed input");
            RawPeer.Result(Results.Submit.Ok, d.TrySend(RawPeer.ChannelSendRecord(400, "svc", RawPeer.B("ok"))), "a valid one-way");
            RawPeer.Result(Results.Submit.Ok, d.TryRequest(default, RawPeer.ChannelRequestRecord(401, 402, "svc", RawPeer.B("ok")), false, (uint)RawPeer.Ms(5000), 0, out ulong vid),
                           "a valid request");
            RawPeer.Result(Results.Request.Ok, RawPeer.RequestResult(d, vid), "the valid request's result");
            Check.Eventually(() => Volatile.Read(ref sends) == 1, 5000, "the valid one-way handled");
            Check.Eq(1, Volatile.Read(ref requests), "requests handled");
            Check.Eq(dropped0 + Bad.Length, b.Metric(Dropped, "reason=decode_error"), "decode-error drops");
            Check.Eventually(() => b.Capacity.PermitsInUse == 0, 5000, "B's permits free");
            Check.Eq(0UL, b.Capacity.ReservedSupplyPermits, "reserved supply permits");
            Check.Eq(0UL, b.Capacity.QueuedJobs, "queued jobs");
        }
        finally
        {
            d?.Dispose();
            ctx.Dispose();
            End(b);
        }
    }

    // ------------------------------------------------------------- the flow (JQ-19, JQ-22)

    /// <summary>Outcomes of many one-ways to "svc", each call disposed once started (a
    /// started call still completes).</summary>
    private sealed class Flow
    {
        private readonly object _lk = new();
        private int _ok, _failed;
        private string _first = "";

        public void Start(Host h, string prefix, int i, int size)
        {
            ValueTask vt;
            using (var c = h.SendToChannel("svc").Payload("m", ScClient.Padded(prefix + i, size))) vt = c.Async();
            vt.AsTask().ContinueWith(t =>
            {
                lock (_lk)
                {
                    if (t.IsCompletedSuccessfully) _ok++;
                    else { if (_failed++ == 0) _first = Outcome.Name(t); }
                    Monitor.PulseAll(_lk);
                }
            }, TaskContinuationOptions.ExecuteSynchronously);
        }

        public int Finished { get { lock (_lk) return _ok + _failed; } }

        /// <summary>Waits until n finished or the stopwatch passes untilMs; the count finished.</summary>
        public int Wait(int n, long untilMs)
        {
            lock (_lk)
            {
                while (_ok + _failed < n)
                {
                    long left = untilMs - Done.Clock.ElapsedMilliseconds;
                    if (left <= 0) break;
                    Monitor.Wait(_lk, (int)Math.Min(left, 50));
                }
                return _ok + _failed;
            }
        }

        public void NoFailure()
        {
            lock (_lk)
                if (_failed != 0) throw new CheckFailed($"{_failed} one-way sends failed, the first with {_first}");
        }
    }

    // ------------------------------------------------------------- JQ-19

    private static void BackpressureRound(Mode mode, string tr, int records, int size, int window)
    {
        var b = new ScServer { MaxJobs = 1, Hwm = 16384 };
        var a = new ScClient { Hwm = 16384, SendTimeoutNs = 60_000_000_000 };
        b.Open(mode, tr, "jq19");
        try
        {
            a.Open(mode, b);
            int baseCount = b.Rec.Count;
            b.Gated = true;
            var f = new Flow();
            int next = 0;
            for (; next < window; next++) f.Start(a.H, "j", next, size);
            Check.Eventually(() => b.Gate.Waiting == 1, 5000, "j0 at B's gate");
            Check.Eventually(() => a.H.Status.OnewayWaiting > 0, 5000, "A's one-ways waiting for room");
            int before = f.Finished;
            // Over tcp the kernel's socket buffers take records too (they grow
            // to megabytes): keep the window full until no send completed for 100 ms.
            long giveUp = Done.Clock.ElapsedMilliseconds + 30000L * Program.TimeoutMult;
            int held;
            for (;;)
            {
                while (next < records && next - f.Finished < window) f.Start(a.H, "j", next++, size);
                held = f.Finished;
                if (held >= records) throw new CheckFailed($"all {records} sends completed while B's gate was closed");
                long t0 = Done.Clock.ElapsedMilliseconds;
                if (f.Wait(held + 1, t0 + 100) == held)
                {
                    Check.True(Done.Clock.ElapsedMilliseconds - t0 >= 100, "the 100 ms window");
                    break; // 100 ms without a completion: held by the HWMs
                }
                if (Done.Clock.ElapsedMilliseconds > giveUp)
                    throw new CheckFailed($"sends kept completing for 30 s while B's gate was closed ({held})");
            }
            f.NoFailure();
            Console.Error.WriteLine($"JQ-19 {mode} {tr}: {before} of {window} admitted before open, {held} when the flow stood still");
            Check.True(a.H.Status.OnewayWaiting > 0, "one-ways still waiting");

            b.Gate.Open();
            long end = Done.Clock.ElapsedMilliseconds + 120000L * Program.TimeoutMult;
            while (next < records)
            {
                int done = f.Wait(next - window + 1, end);
                if (done < next - window + 1) throw new CheckFailed($"the flow stalled: {done} of {next} started sends completed");
                f.NoFailure();
                while (next < records && next - f.Finished < window) f.Start(a.H, "j", next++, size);
            }
            if (f.Wait(records, end) < records) throw new CheckFailed($"only {f.Finished} of {records} sends completed");
            f.NoFailure();
            Check.Eventually(() => b.Rec.Count == baseCount + records, 30000, "B handled every record");
            var seen = b.Rec.Snapshot();
            for (int i = 0; i < records; i++)
                if (seen[baseCount + i] != "j" + i) throw new CheckFailed($"B's record {i} is {seen[baseCount + i]} (order)");
            foreach (var r in new[] { "reason=no_handler", "reason=decode_error", "reason=backpressure", "reason=shutdown" })
                Check.Eq(0L, b.H.Metric(Dropped, r), "B's drops " + r);
            Check.Eventually(() => b.H.Capacity.PermitsInUse == 0, 5000, "B's permits back");
        }
        finally
        {
            b.Gate.Open();
            if (a.H != null) a.Dispose();
            b.Dispose();
        }
    }

    public static void Jq19(CaseParams p) => EachTransport(p, tr =>
    {
        int records = (int)p.Int("records"), size = (int)p.Int("record_size"), window = (int)p.Int("window");
        Check.True(records > window && window > 0 && size > 0, "parameters in range");
        BackpressureRound(Mode.Mesh, tr, records, size, window);
        BackpressureRound(Mode.Cs, tr, records, size, window);
    });

    // ------------------------------------------------------------- JQ-22

    private static ulong U64Le(byte[] b, long at) => BitConverter.ToUInt64(b, (int)at);
    private static uint U32Le(byte[] b, long at) => BitConverter.ToUInt32(b, (int)at);
    private static int U16Le(byte[] b, long at) => BitConverter.ToUInt16(b, (int)at);

    /// <summary>The path of the libzlink this process mapped (/proc/self/maps).</summary>
    private static string LoadedLibzlink()
    {
        _ = NativeLibraryLoader.LibraryVersion;   // loads (and checks) the library
        foreach (var line in File.ReadLines("/proc/self/maps"))
        {
            int k = line.IndexOf('/');
            if (k >= 0 && line.Substring(k).Contains("libzlink", StringComparison.Ordinal)) return line.Substring(k).Trim();
        }
        throw new CheckFailed("no libzlink mapped in this process");
    }

    /// <summary>The loaded libzlink's exported symbols (its .dynsym, defined ones), checked
    /// for send-ready, retry and retained-receive hooks; the number of zlink_ symbols read.</summary>
    private static int CheckAbiHooks()
    {
        string path = LoadedLibzlink();
        byte[] img = File.ReadAllBytes(path);
        Check.True(img.Length > 64 && img[0] == 0x7F && img[1] == 'E' && img[2] == 'L' && img[3] == 'F' && img[4] == 2, path + " is an ELF64 file");
        long shoff = (long)U64Le(img, 0x28);
        int shentsize = U16Le(img, 0x3A), shnum = U16Le(img, 0x3C);
        Check.True(shentsize == 64 && shoff + (long)shnum * 64 <= img.Length, "the section headers fit");
        string[] banned = { "send_ready", "sendready", "retry", "retained", "resubmit" };
        int nsyms = 0;
        bool sawStart = false;
        for (int i = 0; i < shnum; i++)
        {
            long sh = shoff + (long)i * 64;
            if (U32Le(img, sh + 4) != 11) continue;   // SHT_DYNSYM
            long off = (long)U64Le(img, sh + 24), size = (long)U64Le(img, sh + 32), link = U32Le(img, sh + 40);
            Check.True(link < shnum && off + size <= img.Length, "the dynsym section fits");
            long strs = shoff + link * 64;
            long soff = (long)U64Le(img, strs + 24), ssize = (long)U64Le(img, strs + 32);
            Check.True(soff + ssize <= img.Length, "the string table fits");
            for (long k = 0; k + 24 <= size; k += 24)
            {
                long name = U32Le(img, off + k);
                int shndx = U16Le(img, off + k + 6);
                if (shndx == 0 || name >= ssize) continue;   // imports are not the library's ABI
                int st = (int)(soff + name), e = st;
                while (e < img.Length && img[e] != 0) e++;
                string n = Encoding.ASCII.GetString(img, st, e - st);
                if (!n.StartsWith("zlink_", StringComparison.Ordinal)) continue;
                nsyms++;
                sawStart |= n == "zlink_call_start";
                foreach (var ban in banned)
                    if (n.ToLowerInvariant().Contains(ban)) throw new CheckFailed($"{path} exports {n}, a send-ready/retry hook");
            }
        }
        Check.True(sawStart, "the symbol table read has zlink_call_start");
        Check.True(nsyms > 50, $"more than 50 zlink_ symbols read ({nsyms})");
        return nsyms;
    }

    /// <summary>This process's CPU time (every thread, user + system) in microseconds.</summary>
    private static long ProcessCpuUs()
    {
        using var me = Process.GetCurrentProcess();
        return (long)me.TotalProcessorTime.TotalMicroseconds;
    }

    /// <summary>A (a CS client of "svc", SNDHWM 16 KiB, SendTimeout 60 s) sends 4 KiB
    /// one-ways to R, a raw Core ROUTER that does not read (RCVHWM 16 KiB): admitted until
    /// the HWMs are full, then `pending` more wait. Over the window R's Core gets nothing new,
    /// the waiting sends stay pending and the process uses under cpuPpmMax of one CPU. R then
    /// reads: every send arrives exactly once, in order, and each completes OK.</summary>
    public static void Jq22(CaseParams p)
    {
        int pending = (int)p.Int("pending"), windowMs = (int)p.Int("window_ms"), ppmMax = (int)p.Int("cpu_ppm_max");
        Check.True(pending > 0 && windowMs > 0 && ppmMax > 0, "parameters in range");
        const int size = 4096;
        int nsyms = CheckAbiHooks();
        Console.Error.WriteLine($"JQ-22: {nsyms} exported zlink_ symbols, none a send-ready/retry hook");
        var ctx = new Context();
        var r = ctx.Socket(SocketType.Router);
        SocketMonitor? mon = null;
        Host? a = null;
        try
        {
            r.SetOption(Opt.Linger, 0);
            RawPeer.Hwm(r, -1, 16384);
            r.SetOption(Opt.RcvTimeo, RawPeer.Ms(5000));
            r.Bind("tcp://127.0.0.1:0");
            string ep = r.LastEndpoint;
            mon = r.OpenMonitor();
            a = new Host("A");
            a.AddCsClient("svc", ep);
            a.SetChannelOption("svc", NodeOption.SndHwm, 16384);
            a.SetChannelOption("svc", NodeOption.SendTimeout, 60_000_000_000);
            a.Start();

            var f = new Flow();
            var host = a;
            int started = 0;
            for (; ; )
            {
                f.Start(a, "k", started, size);
                started++;
                // full: the send stays pending 100 ms and A shows it waiting for room (a send
                // that is only slow on a loaded machine is waited for)
                if (f.Wait(started, Done.Clock.ElapsedMilliseconds + 100) < started && host.Status.OnewayWaiting == 1) break;
                if (f.Wait(started, Done.Clock.ElapsedMilliseconds + 10000L * Program.TimeoutMult) < started)
                    throw new CheckFailed($"send k{started - 1} neither completed nor waited for room");
                f.NoFailure();
                Check.True(started < 100000, "the HWMs filled");
            }
            for (int i = 0; i < pending; i++) f.Start(a, "k", started++, size);
            int total = started;
            // every started send is admitted or waiting for room
            Check.Eventually(() => (long)host.Status.OnewayWaiting + f.Finished == total, 5000, "each send admitted or waiting");
            int accepted = f.Finished;
            ulong waiting = (ulong)(started - accepted);
            Check.True(waiting > (ulong)pending, $"{pending} more sends pend behind the full HWM ({waiting} waiting)");
            Check.Eq(waiting, a.Status.OnewayWaiting, "one-ways waiting");

            ulong held = RawPeer.RcvPending(mon);
            long cpu0 = ProcessCpuUs();
            var sw = Stopwatch.StartNew();
            Thread.Sleep(windowMs);   // the measured window itself, not a wait for a condition
            long cpu = ProcessCpuUs() - cpu0, wall = sw.ElapsedMilliseconds;
            Check.Eq(held, RawPeer.RcvPending(mon), "R's pending records after the window");
            Check.Eq(accepted, f.Finished, "sends completed during the window");
            Check.Eq(waiting, a.Status.OnewayWaiting, "one-ways waiting after the window");
            long ppm = cpu * 1000 / Math.Max(wall, 1);
            Console.Error.WriteLine($"JQ-22: blocked {wall} ms: {accepted} admitted, {waiting} waiting, R holds {held}; CPU {cpu} us ({ppm} ppm)");
            if (ppm >= ppmMax)
                throw new CheckFailed($"the process used {cpu} us of CPU over a {wall} ms blocked window ({ppm} ppm, < {ppmMax} expected)");

            ulong lastHigh = 0, lastLow = 0;
            for (int got = 0; got < started; got++)
            {
                RawPeer.Result(Results.Recv.Ok, r.TryRouterRecv(out _, out ulong token, out var parts), "R's router_recv " + got);
                Check.Eq(0UL, token, "a one-way's token");
                Check.Eq(2, parts.Length, "parts");
                var f0 = parts[0];
                Check.True(f0.Length >= 21 && f0[0] == 0x5A && f0[3] == RawPeer.ChannelSend, "a CHANNEL_SEND frame");
                ulong high = RawPeer.Be64(f0.AsSpan(5)), low = RawPeer.Be64(f0.AsSpan(13));
                Check.True(high != 0 || low != 0, "an OperationId");
                var env = parts[1];
                Check.True(env.Length >= 8 + size && env[0] == 1, "a payload envelope");
                int e = 8;
                while (e < env.Length && env[e] != 0) e++;
                string payload = Encoding.UTF8.GetString(env, 8, e - 8);
                if (payload != "k" + got) throw new CheckFailed($"R's record {got} is {payload}, k{got} expected (each send once, in order)");
                Check.True(got == 0 || high != lastHigh || low != lastLow, "one OperationId per record");
                lastHigh = high;
                lastLow = low;
            }
            if (f.Wait(started, Done.Clock.ElapsedMilliseconds + 10000L * Program.TimeoutMult) < started)
                throw new CheckFailed($"{f.Finished} of {started} sends completed after R read them all");
            f.NoFailure();
            Span<PollItem> it = stackalloc PollItem[1];
            it[0] = new PollItem(r, PollEvents.In);
            Check.Eq(0, ZLinkPoll.Poll(it, 100), "records after the last one");
            Check.Eq(0UL, RawPeer.RcvPending(mon), "R's pending records at the end");
        }
        finally
        {
            if (a != null) End(a);
            mon?.Dispose();
            r.Dispose();
            ctx.Dispose();
        }
    }
}
