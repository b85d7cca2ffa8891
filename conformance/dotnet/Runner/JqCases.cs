// JqCases.cs — the JQ cases (seed 001 §10) ported from conformance/c/jq_*.c
// onto the .NET binding's public API.
using System;
using System.Collections.Generic;
using System.Text;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal static class JqCases
{
    private static void EachTransport(CaseParams p, Action<string> round)
    {
        foreach (var tr in p.Strings("transports"))
        {
            if (tr != "inproc" && tr != "tcp") throw new CheckFailed("unknown transport " + tr);
            round(tr);
        }
    }

    /// <summary>A mesh host of mesh "m" named name (also its routing id), listening unless listen is false.</summary>
    internal static Host MeshHost(string name, string tr, bool listen, long maxJobs = 0, string? listenEp = null)
    {
        var h = new Host(name);
        if (maxJobs > 0) h.SetOption(HostOption.MaxQueuedJobs, maxJobs);
        h.AddMeshNode("m", name, listen ? listenEp ?? ScServer.Endpoint(tr, "mesh", name) : null);
        return h;
    }

    // ------------------------------------------------------------- JQ-04

    public static void Jq04(CaseParams p) => EachTransport(p, tr =>
    {
        var seen = new List<(string tag, ulong seq)>();
        using var x = MeshHost("X", tr, true);
        x.AddMeshChannelServer("m", "svc", 100);
        x.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "m", t =>
        {
            lock (seen) seen.Add((Encoding.UTF8.GetString(t.Payload), t.Sequence));
        });
        x.Start();
        string bound = x.Endpoint("m");
        using var a = MeshHost("A", tr, false);
        a.AddMeshChannelClient("m", "svc");
        a.MeshConnect("m", bound, "X");
        a.Start();
        Check.Eventually(() => a.MeshReadyPeers("m") == 1, 5000, "A's peer ready");

        void Send(string tag) { using var c = a.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes(tag)); c.Submit(); }
        string Refused(string packet)
        {
            using var c = a.RequestToChannel("svc").Payload(packet, new byte[] { (byte)'x' }).Timeout(TimeSpan.FromSeconds(5));
            return Outcome.Of(() => c.Submit());
        }
        OwnerStatus Owner() => x.OwnerStatus(OwnerKind.Channel, "svc");

        Send("v1");
        Check.Eventually(() => Owner().Handled == 1, 5000, "v1 handled");
        var before = Owner();
        Check.Eq(1ul, before.AcceptedSeq, "accepted_seq after v1");
        // Refused before the owner: a packet nobody handles, and the right packet as the wrong kind.
        Check.Eq("NotFound", Refused("nope"), "unknown packet");
        Check.Eq("NotFound", Refused("m"), "the one-way packet as a request");
        var mid = Owner();
        Check.Eq(before, mid, "the owner's status after the refusals");
        Send("v2");
        Check.Eventually(() => Owner().Handled == 2, 5000, "v2 handled");
        lock (seen)
        {
            Check.Eq(2, seen.Count, "records handled");
            Check.Eq("v1", seen[0].tag, "first");
            Check.Eq("v2", seen[1].tag, "second");
            Check.Eq(1ul, seen[0].seq, "v1's sequence");
            Check.Eq(seen[0].seq + 1, seen[1].seq, "consecutive: the refusals took no number");
        }
        var end = Owner();
        Check.Eq(2ul, end.AcceptedSeq, "accepted_seq at the end");
        Check.Eq(0ul, end.QueuedRecords + end.QueuedBytes + end.RunningRecords + end.RunningBytes, "nothing queued or running");
        var cap = x.Capacity;
        Check.Eq(0ul, cap.PermitsInUse, "permits in use");
        Check.Eq(0ul, cap.QueuedJobs, "queued jobs");
        a.Shutdown(TimeSpan.FromSeconds(2));
        x.Shutdown(TimeSpan.FromSeconds(2));
    });

    // ------------------------------------------------------------- JQ-01

    private const string Jq = "zlink.host.application_job_queue.";
    private const string Core = "zlink.host.core_hwm.";
    private const int CoreCompact = 0, CoreBalanced = 2, CoreThroughput = 3;   // ZLINK_PROFILE_* of zlink.h

    private static Host P2Host(string name)
    {
        var h = new Host(name);
        h.SetOption(HostOption.EffectiveProcessors, 2);
        h.AddCsServer("svc", "tcp://127.0.0.1:0");
        return h;
    }

    private static void ExpectStarted(Host h, long m, JobQueueProfile jq, int core)
    {
        h.Start();
        var c = h.Capacity;
        Check.Eq((ulong)m, c.EffectiveMax, h.Name + " M");
        Check.Eq(jq, c.Profile, h.Name + " job-queue profile");
        Check.Eq(m, h.Metric(Jq + "limit"), h.Name + " limit metric");
        Check.Eq((long)core, h.Metric(Core + "profile"), h.Name + " Core profile in force");
    }

    private static void End(Host h)
    {
        h.Shutdown(TimeSpan.FromSeconds(2));
        h.Dispose();
    }

    private static void ExpectStartRefused(Host h, string want)
    {
        Check.Eq(want, Outcome.Of(() => h.Start()), h.Name + " start");
        Check.Eq(HostState.Failed, h.State, h.Name + " state");
        Check.True(Outcome.Of(() => h.Endpoint("svc")) != "OK", h.Name + " never bound");
        h.Dispose();
    }

    public static void Jq01(CaseParams p)
    {
        var h = P2Host("jq01-default");
        Check.Eq((long)JobQueueProfile.Balanced, h.GetOption(HostOption.JobQueueProfile), "default job-queue profile");
        Check.Eq(-1L, h.GetOption(HostOption.CoreHwmProfile), "Core profile unset");
        Check.Eq(256L, h.GetOption(HostOption.MaxQueuedJobs), "M = 128 x 2");
        ExpectStarted(h, 256, JobQueueProfile.Balanced, CoreBalanced);
        Check.Eq(0L, h.Metric(Core + "effective_budget"), "no Core budget");
        End(h);

        h = P2Host("jq01-both");
        h.SetOption(HostOption.CoreHwmProfile, CoreCompact);
        Check.Eq(256L, h.GetOption(HostOption.MaxQueuedJobs), "the Core's profile moved nothing");
        h.SetOption(HostOption.JobQueueProfile, (long)JobQueueProfile.Throughput);
        Check.Eq((long)CoreCompact, h.GetOption(HostOption.CoreHwmProfile), "Core profile kept");
        h.SetOption(HostOption.CoreBudgetBytes, 4 << 20);
        Check.Eq(512L, h.GetOption(HostOption.MaxQueuedJobs), "Throughput M");
        ExpectStarted(h, 512, JobQueueProfile.Throughput, CoreCompact);
        Check.Eq((long)CoreCompact, h.GetOption(HostOption.CoreHwmProfile), "Core profile after start");
        Check.Eq(4L << 20, h.Metric(Core + "effective_budget"), "the explicit budget");
        End(h);

        h = P2Host("jq01-core-only");
        h.SetOption(HostOption.CoreHwmProfile, CoreCompact);
        ExpectStarted(h, 256, JobQueueProfile.Balanced, CoreCompact);
        End(h);
        h = P2Host("jq01-jq-only");
        h.SetOption(HostOption.JobQueueProfile, (long)JobQueueProfile.Throughput);
        ExpectStarted(h, 512, JobQueueProfile.Throughput, CoreBalanced);
        Check.Eq(-1L, h.GetOption(HostOption.CoreHwmProfile), "Core profile still unset");
        End(h);

        h = P2Host("jq01-manual");
        h.SetOption(HostOption.MaxQueuedJobs, 17);
        h.SetOption(HostOption.JobQueueProfile, (long)JobQueueProfile.Compact);   // the manual value wins
        ExpectStarted(h, 17, JobQueueProfile.Compact, CoreBalanced);
        var c = h.Capacity;
        Check.Eq(17ul, c.ManualMax, "manual max");
        Check.Eq(14ul, c.PauseCount, "pause count");
        Check.Eq(10ul, c.ResumeCount, "resume count");
        End(h);

        (HostOption o, long v)[] bad =
        {
            (HostOption.MaxQueuedJobs, 0), (HostOption.MaxQueuedJobs, -1), (HostOption.MaxQueuedJobs, 1L << 31),
            (HostOption.PausePercent, 0), (HostOption.PausePercent, 101), (HostOption.ResumePercent, 100),
            (HostOption.CoreHwmProfile, CoreThroughput + 1), (HostOption.CoreBudgetBytes, -1), (HostOption.CoreMemoryLimitBytes, -1),
        };
        h = P2Host("jq01-bad");
        foreach (var (o, v) in bad)
        {
            long before = h.GetOption(o);
            Check.Eq("InvalidArgument", Outcome.Of(() => h.SetOption(o, v)), $"{o} = {v}");
            Check.Eq(before, h.GetOption(o), $"{o} kept");
        }
        ExpectStarted(h, 256, JobQueueProfile.Balanced, CoreBalanced);
        c = h.Capacity;
        Check.Eq(80u, c.PausePercent, "pause percent");
        Check.Eq(60u, c.ResumePercent, "resume percent");
        End(h);
        foreach (var (pause, resume) in new[] { (60, 60), (50, 70) })
        {
            h = P2Host("jq01-order");
            h.SetOption(HostOption.PausePercent, pause);
            h.SetOption(HostOption.ResumePercent, resume);
            ExpectStartRefused(h, "InvalidArgument");
        }
        h = P2Host("jq01-memory");
        h.SetOption(HostOption.CoreMemoryLimitBytes, long.MaxValue);
        ExpectStartRefused(h, "InvalidArgument");
    }

    // ------------------------------------------------------------- JQ-18

    private static readonly string[] DropReasons = { "reason=no_handler", "reason=decode_error", "reason=shutdown", "reason=backpressure", "reason=stale_target" };

    private static void ExpectNoDrops(Host h, string who)
    {
        foreach (var r in DropReasons)
            Check.Eq(0L, h.Metric("zlink.mesh_node.messages.dropped", r), $"{who} dropped ({r})");
    }

    private static void NoHandlerOnlyRecorded(string tr, Mode mode)
    {
        using var b = new ScServer { Name = "B" }.Open(mode, tr, mode == Mode.Mesh ? "jq18m" : "jq18c");
        using var a = new ScClient().Open(mode, b);
        ExpectNoDrops(b.H, "B");
        using (var c = a.H.SendToChannel("svc").Payload("nohandler", new byte[] { (byte)'x' })) c.Submit();   // OK: admission
        Check.Eventually(() => b.H.Metric("zlink.mesh_node.messages.dropped", "reason=no_handler") == 1, 5000, "no_handler drop recorded");
        a.Request("after").Submit();
        Check.Eq(1L, b.H.Metric("zlink.mesh_node.messages.dropped", "reason=no_handler"), "exactly one no_handler drop");
        for (int i = 1; i < DropReasons.Length; i++)
            Check.Eq(0L, b.H.Metric("zlink.mesh_node.messages.dropped", DropReasons[i]), "B dropped " + DropReasons[i]);
        Check.Eq(0, b.Rec.Has("x"), "the record never reached a handler");
        Check.Eq(1, b.Rec.Count, "B handled only after");
        ExpectNoDrops(a.H, "A");
    }

    public static void Jq18(CaseParams p) => EachTransport(p, tr => { NoHandlerOnlyRecorded(tr, Mode.Mesh); NoHandlerOnlyRecorded(tr, Mode.Cs); });

    // ------------------------------------------------ the owner (jq_permits.c)

    /// <summary>What a JQ case's handler sees and records (jq_owner_t). A turn whose tag
    /// starts with AwaitPrefix awaits a request to AwaitChannel: an async .NET handler,
    /// so the turn stays open until the awaited request's outcome.</summary>
    internal sealed class Owner
    {
        public Host H = null!;
        public volatile bool Gated;
        public readonly Gate Gate = new();
        public string AwaitPrefix = "";
        public string AwaitChannel = "";
        public TimeSpan AwaitTimeout = TimeSpan.FromSeconds(10);
        private readonly object _lk = new();
        public readonly List<string> Tags = new();
        public readonly List<ulong> InUseAtStart = new();
        public readonly List<ulong> ReservedAtStart = new();
        public readonly Dictionary<int, string> AwaitResult = new();
        public readonly Dictionary<int, string> AwaitReply = new();
        public readonly Dictionary<int, long> AwaitElapsed = new();
        private int _ended, _awaited;
        public int Started { get { lock (_lk) return Tags.Count; } }
        public int Ended => Volatile.Read(ref _ended);
        public int Awaited => Volatile.Read(ref _awaited);

        public Owner(bool gated) { Gated = gated; }

        public async ValueTask OnSend(Turn turn)
        {
            var c = H.Capacity;   // the first instruction
            string tag = Encoding.UTF8.GetString(turn.Payload);
            int i;
            lock (_lk) { i = Tags.Count; Tags.Add(tag); InUseAtStart.Add(c.PermitsInUse); ReservedAtStart.Add(c.ReservedSupplyPermits); }
            if (Gated) Gate.Pass();
            if (AwaitPrefix.Length == 0 || !tag.StartsWith(AwaitPrefix, StringComparison.Ordinal))
            {
                Interlocked.Increment(ref _ended);
                return;
            }
            string result, reply = "";
            var sw = Stopwatch.StartNew();
            try
            {
                var r = await H.RequestToChannel(AwaitChannel).Payload("m", Encoding.UTF8.GetBytes(tag)).Timeout(AwaitTimeout).Async();
                result = "OK";
                reply = Encoding.UTF8.GetString(r.Payload);
            }
            catch (Exception e) { result = Outcome.Of(e); }
            lock (_lk) { AwaitResult[i] = result; AwaitReply[i] = reply; AwaitElapsed[i] = sw.ElapsedMilliseconds; }
            Interlocked.Increment(ref _awaited);
            Interlocked.Increment(ref _ended);
        }

        public void OnRequest(Turn turn)
        {
            if (Gated) Gate.Pass();
            turn.Respond("m", turn.Payload);
        }

        /// <summary>Turn i started with `queued` jobs in its permits in use (and at most one
        /// reservation of the ingress for a receive in progress then).</summary>
        public void ExpectStart(int i, ulong queued)
        {
            ulong inUse, reserved;
            lock (_lk) { inUse = InUseAtStart[i]; reserved = ReservedAtStart[i]; }
            if (inUse - reserved != queued || reserved > 1)
                throw new CheckFailed($"turn {i} started with {inUse} permits in use ({reserved} reserved), expected {queued} jobs (and at most one reservation)");
        }

        public void ExpectOrder(int from, string prefix, int first, int n)
        {
            lock (_lk)
                for (int i = 0; i < n; i++)
                {
                    string want = prefix + (first + i);
                    if (from + i >= Tags.Count || Tags[from + i] != want)
                        throw new CheckFailed($"turn {from + i} of {Tags.Count} started is \"{(from + i < Tags.Count ? Tags[from + i] : "")}\", expected {want} (each once, in order)");
                }
        }
    }

    private static void Serve(Host h, string ch, Owner? send, Owner? request)
    {
        h.AddMeshChannelServer("m", ch, 100);
        if (send != null) { send.H = h; h.AddHandler(OwnerKind.Channel, ch, MessageKind.Send, "m", send.OnSend); }
        var rq = request ?? new Owner(false);
        h.AddHandler(OwnerKind.Channel, ch, MessageKind.Request, "m", rq.OnRequest);
    }

    /// <summary>B serves "back" (requests: ob); A (M = maxJobs) serves "svc" (one-ways: oa)
    /// and is a client of "back"; C floods A's "svc".</summary>
    private static (Host a, Host b, Host c) Trio(string tr, long maxJobs, Owner oa, Owner ob)
    {
        var b = MeshHost("B", tr, true);
        Serve(b, "back", null, ob);
        b.Start();
        string boundB = b.Endpoint("m");
        var a = MeshHost("A", tr, true, maxJobs);
        Serve(a, "svc", oa, null);
        a.AddMeshChannelClient("m", "back");
        a.MeshConnect("m", boundB, "B");
        a.Start();
        string boundA = a.Endpoint("m");
        var c = MeshHost("C", tr, false);
        c.AddMeshChannelClient("m", "svc");
        c.SetMeshOption("m", NodeOption.SendTimeout, 30_000_000_000);
        c.MeshConnect("m", boundA, "A");
        c.Start();
        Check.Eventually(() => c.MeshReadyPeers("m") == 1, 5000, "C sees A");
        Check.Eventually(() => a.MeshReadyPeers("m") == 2, 5000, "A sees B and C");
        return (a, b, c);
    }

    private static bool Saturated(Host h, Host c)
    {
        var cap = h.Capacity;
        return cap.PermitsInUse == cap.EffectiveMax && cap.Paused && (cap.CapacityWaiters >= 1 || c.Status.OnewayWaiting >= 1);
    }

    // ------------------------------------------------------------- JQ-20

    public static void Jq20(CaseParams p) => EachTransport(p, tr =>
    {
        var oa = new Owner(false) { AwaitPrefix = "h", AwaitChannel = "back" };
        var ob = new Owner(true);
        var (a, b, c) = Trio(tr, 1, oa, ob);
        try
        {
            using (var h0 = c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("h0"))) h0.Submit();
            Check.Eventually(() => ob.Gate.Waiting == 1, 5000, "h0 awaits B");
            const int F = 6;
            var dd = new Done[F + 1];
            for (int i = 1; i <= F; i++) dd[i] = Done.Of(c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f" + i)).Async());
            Check.Eventually(() => Saturated(a, c), 5000, "A saturated");
            Check.Eq(0, oa.Awaited, "nothing awaited yet");
            Check.Eq(1, oa.Started, "one turn started");
            var sw = Stopwatch.StartNew();
            ob.Gate.Open();
            Check.Eventually(() => oa.Awaited == 1, 5000, "h0's await completed");
            long took = sw.ElapsedMilliseconds;
            Check.Eq("OK", oa.AwaitResult[0], "h0's request");
            Check.Eq("h0", oa.AwaitReply[0], "h0's reply");
            Check.True(took < 1000L * Program.TimeoutMult, $"the reply took {took} ms to reach saturated A");
            for (int i = 1; i <= F; i++) { dd[i].Expect(5000, "f" + i); Check.Eq("OK", dd[i].Result, "f" + i); }
            Check.Eventually(() => oa.Ended == F + 1, 5000, "every turn ended");
            Check.Eq("h0", oa.Tags[0], "first turn");
            oa.ExpectOrder(1, "f", 1, F);
            Check.Eventually(() => a.Capacity.PermitsInUse == 0, 5000, "A's permits back");
            Check.True(!a.Capacity.Paused, "A RUNNING");
        }
        finally
        {
            ob.Gate.Open();
            End(c); End(a); End(b);
        }
    });

    // ------------------------------------------------------------- JQ-02

    public static void Jq02(CaseParams p) => EachTransport(p, tr =>
    {
        var oa = new Owner(true) { AwaitPrefix = "j1", AwaitChannel = "back" };
        var ob = new Owner(true);
        var (a, b, c) = Trio(tr, 4, oa, ob);
        void Send(string tag) { using var k = c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes(tag)); k.Submit(); }
        try
        {
            Send("j1");
            Check.Eventually(() => oa.Gate.Waiting == 1, 5000, "j1 at the gate");
            oa.ExpectStart(0, 0);
            Check.Eventually(() => a.Capacity.PermitsInUse == 0, 5000, "j1's permit back");
            for (int i = 2; i <= 4; i++) Send("j" + i);
            Check.Eventually(() => a.Capacity.QueuedJobs == 3 && a.Capacity.PermitsInUse == 3, 5000, "j2..j4 queued");
            var cap = a.Capacity;
            Check.Eq(3ul, cap.QueuedJobs, "queued jobs");
            Check.True(!cap.Paused, "RUNNING (pause count is 4)");

            // j1 passes the gate and awaits B (held at B's gate); the gate closes behind it.
            oa.Gate.Open();
            Check.Eventually(() => ob.Gate.Waiting == 1, 5000, "j1 awaits B");
            oa.Gate.Close();
            Check.Eventually(() => a.Capacity.PermitsInUse == 3, 5000, "the await took no permit");
            Check.Eq(3ul, a.Capacity.QueuedJobs, "still 3 queued");
            Check.Eq(1ul, a.Status.TurnsRunning, "j1's turn still open");
            Check.Eq(1, oa.Started, "one turn started");

            // The reply ends j1's turn; j2 starts and lowers in use to 2.
            ob.Gate.Open();
            Check.Eventually(() => oa.Awaited == 1 && oa.Gate.Waiting == 1, 5000, "j1 ended, j2 at the gate");
            Check.Eq("OK", oa.AwaitResult[0], "j1's request");
            Check.Eq("j1", oa.AwaitReply[0], "j1's reply");
            Check.Eq(2, oa.Started, "two turns started");
            oa.ExpectStart(1, 2);
            Check.Eventually(() => a.Capacity.PermitsInUse == 2, 5000, "in use 2");
            Check.Eq(2ul, a.Capacity.QueuedJobs, "2 queued");

            oa.Gate.Open();
            Check.Eventually(() => oa.Ended == 4, 5000, "four turns ended");
            oa.ExpectOrder(0, "j", 1, 4);
            oa.ExpectStart(2, 1);
            oa.ExpectStart(3, 0);
            Check.Eventually(() => a.Capacity.PermitsInUse == 0, 5000, "no permit in use");
        }
        finally
        {
            oa.Gate.Open();
            ob.Gate.Open();
            End(c); End(a); End(b);
        }
    });

    // ------------------------------------------------------------- JQ-05

    private static Host Flooder(string tr, string ch, string bound, string peer)
    {
        var c = MeshHost("C", tr, false);
        c.AddMeshChannelClient("m", ch);
        c.SetMeshOption("m", NodeOption.SendTimeout, 30_000_000_000);
        c.MeshConnect("m", bound, peer);
        return c;
    }

    private static (string result, string reply, long took) Request(Host h, string ch, string packet, string tag)
    {
        using var q = h.RequestToChannel(ch).Payload(packet, Encoding.UTF8.GetBytes(tag)).Timeout(TimeSpan.FromSeconds(10));
        var sw = Stopwatch.StartNew();
        try { var r = q.Submit(); return ("OK", Encoding.UTF8.GetString(r.Payload), sw.ElapsedMilliseconds); }
        catch (Exception e) { return (Outcome.Of(e), "", sw.ElapsedMilliseconds); }
    }

    private static long DroppedSum(Host h)
    {
        long sum = 0;
        foreach (var r in DropReasons) sum += h.Metric("zlink.mesh_node.messages.dropped", r);
        return sum;
    }

    public static void Jq05(CaseParams p) => EachTransport(p, tr =>
    {
        const int D = 500, Flood = 40;
        var oa = new Owner(true);
        var b = MeshHost("B", tr, true);
        Serve(b, "back", null, null);
        b.Start();
        string boundB = b.Endpoint("m");
        var a = MeshHost("A", tr, true, 2);
        Serve(a, "svc", oa, null);
        a.AddMeshChannelClient("m", "back");
        a.MeshConnect("m", boundB, "B");
        a.Start();
        string boundA = a.Endpoint("m");
        var c = Flooder(tr, "svc", boundA, "A");
        c.Start();
        Check.Eventually(() => c.MeshReadyPeers("m") == 1, 5000, "C sees A");
        Check.Eventually(() => a.MeshReadyPeers("m") == 2, 5000, "A sees B and C");
        using (var f0 = c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f0"))) f0.Submit();
        Check.Eventually(() => oa.Gate.Waiting == 1, 5000, "f0 at the gate");
        var dd = new Done[Flood];
        for (int i = 1; i < Flood; i++) dd[i] = Done.Of(c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f" + i)).Async());
        Check.Eventually(() => Saturated(a, c), 5000, "A saturated");

        var (r1, reply, took) = Request(a, "back", "m", "q");
        Check.Eq("OK", r1, "A's request to B");
        Check.Eq("q", reply, "its reply");
        Check.True(took < 200L * Program.TimeoutMult, $"the request to B took {took} ms while A was saturated");
        var (r2, _, took2) = Request(a, "back", "nope", "u");
        Check.Eq("NotFound", r2, "an unknown packet");
        Check.True(took2 < 200L * Program.TimeoutMult, $"the unknown packet's NotFound took {took2} ms");
        Check.True(a.Capacity.Paused, "A PAUSED");
        Check.Eq(0ul, a.Capacity.TransitionsRunning, "never RUNNING again");

        var sw = Stopwatch.StartNew();
        var opener = Task.Delay(D).ContinueWith(_ => oa.Gate.Open());   // a handler returning at the deadline
        a.Shutdown(TimeSpan.FromMilliseconds(D));
        long elapsed = sw.ElapsedMilliseconds;
        Check.True(elapsed >= D && elapsed <= D + 250L * Program.TimeoutMult, $"shutdown took {elapsed} ms, expected about {D}");
        opener.Wait();
        Check.Eq(HostState.Stopped, a.State, "A stopped");
        var cap = a.Capacity;
        Check.Eq(0ul, cap.CapacityWaiters, "no ingress waiting");
        Check.Eq(0ul, cap.PermitsInUse, "no permit in use");
        End(c);   // ends what still waited for room toward A
        for (int i = 1; i < Flood; i++) dd[i].Expect(5000, "f" + i);
        End(a);
        End(b);

        // Part 2: no shutdown; open() delivers everything, once, in order.
        oa = new Owner(true);
        a = MeshHost("A", tr, true, 2, boundA);
        Serve(a, "svc", oa, null);
        a.Start();
        c = Flooder(tr, "svc", boundA, "A");
        c.Start();
        Check.Eventually(() => c.MeshReadyPeers("m") == 1, 5000, "C sees the new A");
        using (var f0 = c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f0"))) f0.Submit();
        Check.Eventually(() => oa.Gate.Waiting == 1, 5000, "f0 at the gate");
        for (int i = 1; i < Flood; i++) dd[i] = Done.Of(c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f" + i)).Async());
        Check.Eventually(() => Saturated(a, c), 5000, "A saturated");
        oa.Gate.Open();
        for (int i = 1; i < Flood; i++) { dd[i].Expect(10000, "f" + i); Check.Eq("OK", dd[i].Result, "f" + i); }
        Check.Eventually(() => oa.Ended == Flood, 10000, "every flooded record handled");
        oa.ExpectOrder(0, "f", 0, Flood);
        Check.Eq(0L, DroppedSum(a), "A dropped nothing");
        Check.Eventually(() => a.Capacity.PermitsInUse == 0, 5000, "no permit in use");
        Check.True(!a.Capacity.Paused, "A RUNNING");
        End(c);
        End(a);
    });

    // ------------------------------------------------------------- JQ-14

    public static void Jq14(CaseParams p) => EachTransport(p, tr =>
    {
        var s = new Host("S");
        s.AddCsServer("cs-out", ScServer.Endpoint(tr, "jq14", "S"));
        s.AddHandler(OwnerKind.Channel, "cs-out", MessageKind.Request, "m", new Owner(false).OnRequest);
        s.Start();
        string boundS = s.Endpoint("cs-out");
        var oh = new Owner(true);
        var h = MeshHost("H", tr, true, 1);
        Serve(h, "svc", oh, null);
        h.AddCsClient("cs-out", boundS);
        h.Start();
        string boundH = h.Endpoint("m");
        var c = Flooder(tr, "svc", boundH, "H");
        c.Start();
        try
        {
            Check.Eventually(() => c.MeshReadyPeers("m") == 1, 5000, "C sees H");
            Check.Eq("OK", Request(h, "cs-out", "m", "warm").result, "warm-up request");
            using (var f0 = c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f0"))) f0.Submit();
            Check.Eventually(() => oh.Gate.Waiting == 1, 5000, "f0 at the gate");
            var dd = new Done[4];
            for (int i = 1; i < 4; i++) dd[i] = Done.Of(c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f" + i)).Async());
            Check.Eventually(() => Saturated(h, c), 5000, "H saturated");
            var before = h.Capacity;
            var (r, reply, took) = Request(h, "cs-out", "m", "q");
            Check.Eq("OK", r, "H's request to S");
            Check.Eq("q", reply, "its reply");
            Check.True(took < 200L * Program.TimeoutMult, $"the request to S took {took} ms while H was PAUSED");
            var after = h.Capacity;
            Check.True(after.Paused, "H PAUSED");
            Check.Eq(before.TransitionsRunning, after.TransitionsRunning, "paused throughout");
            Check.Eq(1ul, after.PermitsInUse, "one permit in use");
            oh.Gate.Open();
            for (int i = 1; i < 4; i++) { dd[i].Expect(5000, "f" + i); Check.Eq("OK", dd[i].Result, "f" + i); }
            Check.Eventually(() => oh.Ended == 4, 5000, "four turns ended");
            oh.ExpectOrder(0, "f", 0, 4);
        }
        finally
        {
            oh.Gate.Open();
            End(c); End(h); End(s);
        }
    });

    // ------------------------------------------------------------- JQ-15

    public static void Jq15(CaseParams p) => EachTransport(p, tr =>
    {
        const int Flood = 3;
        var oa = new Owner(false) { AwaitPrefix = "f", AwaitChannel = "svc-b", AwaitTimeout = TimeSpan.FromSeconds(1) };
        var ob = new Owner(false) { AwaitPrefix = "f", AwaitChannel = "svc-a", AwaitTimeout = TimeSpan.FromSeconds(1) };
        var b = MeshHost("B", tr, true, 2);
        Serve(b, "svc-b", ob, null);
        b.AddMeshChannelClient("m", "svc-a");
        b.Start();
        string boundB = b.Endpoint("m");
        var a = MeshHost("A", tr, true, 2);
        Serve(a, "svc-a", oa, null);
        a.AddMeshChannelClient("m", "svc-b");
        a.MeshConnect("m", boundB, "B");
        a.Start();
        string boundA = a.Endpoint("m");
        var c = MeshHost("C", tr, false);
        c.AddMeshChannelClient("m", "svc-a");
        c.AddMeshChannelClient("m", "svc-b");
        c.SetMeshOption("m", NodeOption.SendTimeout, 30_000_000_000);
        c.MeshConnect("m", boundA, "A");
        c.MeshConnect("m", boundB, "B");
        c.Start();
        try
        {
            Check.Eventually(() => c.MeshReadyPeers("m") == 2, 5000, "C sees A and B");
            Check.Eventually(() => a.MeshReadyPeers("m") == 2, 5000, "A sees B and C");
            Check.Eventually(() => b.MeshReadyPeers("m") == 2, 5000, "B sees A and C");
            var dd = new Done[2 * Flood];
            for (int i = 0; i < Flood; i++)
            {
                dd[2 * i] = Done.Of(c.SendToChannel("svc-a").Payload("m", Encoding.UTF8.GetBytes("f" + i)).Async());
                dd[2 * i + 1] = Done.Of(c.SendToChannel("svc-b").Payload("m", Encoding.UTF8.GetBytes("f" + i)).Async());
            }
            // Until every await ended, the peers never stop being ready (sampled).
            var until = Stopwatch.StartNew();
            while (oa.Awaited < Flood || ob.Awaited < Flood)
            {
                if (until.ElapsedMilliseconds > (3 * 1000 + 5000L) * Program.TimeoutMult)
                    throw new CheckFailed($"awaits ended: A {oa.Awaited}, B {ob.Awaited} of {Flood}");
                Check.Eq(2, a.MeshReadyPeers("m"), "A's ready peers");
                Check.Eq(2, b.MeshReadyPeers("m"), "B's ready peers");
                Check.Eq(2, c.MeshReadyPeers("m"), "C's ready peers");
                Thread.Sleep(10);
            }
            foreach (var (o, who) in new[] { (oa, "A"), (ob, "B") })
                lock (o)
                    for (int i = 0; i < o.Started; i++)
                    {
                        if (!o.Tags[i].StartsWith("f")) continue;
                        string r = o.AwaitResult[i];
                        long e = o.AwaitElapsed[i];
                        if (r == "DeadlineExceeded")
                            Check.True(e >= 1000 && e <= 1000 + 250L * Program.TimeoutMult, $"{who}'s request {i} timed out after {e} ms");
                        else if (r != "OK") throw new CheckFailed($"{who}'s request {i} ended {r}");
                        else if (e > 1000 + 250L * Program.TimeoutMult) throw new CheckFailed($"{who}'s request {i} replied after {e} ms");
                    }
            Check.True(a.Capacity.TransitionsPaused >= 1, "A was saturated");
            Check.True(b.Capacity.TransitionsPaused >= 1, "B was saturated");
            for (int i = 0; i < 2 * Flood; i++) { dd[i].Expect(5000, "flood " + i); Check.Eq("OK", dd[i].Result, "flood " + i); }
            Check.Eventually(() => a.Capacity.PermitsInUse == 0 && b.Capacity.PermitsInUse == 0 &&
                                   a.Status.TurnsRunning == 0 && b.Status.TurnsRunning == 0, 5000, "load over");
            Check.True(!a.Capacity.Paused && !b.Capacity.Paused, "both RUNNING");
            Check.Eq(Flood, oa.Awaited, "A's awaits");
            Check.Eq(Flood, ob.Awaited, "B's awaits");
            Check.Eq(0L, DroppedSum(a), "A dropped nothing");
            Check.Eq(0L, DroppedSum(b), "B dropped nothing");
        }
        finally
        {
            End(c); End(a); End(b);
        }
    });

    // ------------------------------------------------------------- SC-13 (sc_jobs.c)

    public static void Sc13(CaseParams p) => EachTransport(p, tr =>
    {
        var gate = new Gate();
        var b = MeshHost("B", tr, true);
        b.AddMeshChannelServer("m", "back", 100);
        b.AddHandler(OwnerKind.Channel, "back", MessageKind.Request, "m", t => t.Respond("m", t.Payload));
        b.Start();
        string boundB = b.Endpoint("m");
        var a = MeshHost("A", tr, true, 2);
        a.AddMeshChannelServer("m", "svc", 100);
        a.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "m", _ => gate.Pass());
        a.AddMeshChannelClient("m", "back");
        a.MeshConnect("m", boundB, "B");
        a.Start();
        string boundA = a.Endpoint("m");
        var c = Flooder(tr, "svc", boundA, "A");
        c.Start();
        try
        {
            Check.Eventually(() => c.MeshReadyPeers("m") == 1, 5000, "C sees A");
            Check.Eventually(() => a.MeshReadyPeers("m") >= 1, 5000, "A sees a peer");
            for (int i = 0; i < 3; i++)
            {
                using (var f = c.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f" + i))) f.Submit();
                if (i == 0) Check.Eventually(() => gate.Waiting == 1, 5000, "f0 at the gate");
            }
            Check.Eventually(() => a.Capacity.QueuedJobs == 2, 5000, "f1, f2 queued");
            var cap = a.Capacity;
            Check.True(cap.Paused, "A PAUSED");
            Check.Eq(2ul, cap.QueuedJobs, "queued jobs");
            // An application thread on A requests "back": the reply needs no permit.
            var (r, reply, took) = Request(a, "back", "m", "q");
            Check.Eq("OK", r, "A's request");
            Check.Eq("q", reply, "its reply");
            Check.True(took < 100L * Program.TimeoutMult, $"the request took {took} ms while A was paused");
            cap = a.Capacity;
            Check.True(cap.Paused, "still PAUSED");
            Check.Eq(2ul, cap.PermitsInUse, "permits in use");
            Check.Eq(0ul, cap.TransitionsRunning, "never RUNNING in between");
            gate.Open();
            Check.Eventually(() => a.Capacity.PermitsInUse == 0, 5000, "permits back");
            Check.True(!a.Capacity.Paused, "RUNNING");
        }
        finally
        {
            gate.Open();
            End(c); End(a); End(b);
        }
    });

    // ------------------------------------------------------- the flood (jq_flow.c)

    /// <summary>count one-ways f0, f1 ... of packet "m" from h to "svc", started from a
    /// thread of their own with at most window in flight; counts the outcomes.</summary>
    private sealed class Flood
    {
        private readonly object _lk = new();
        private int _done, _ok, _started;
        private int _badIndex = -1;
        private string _bad = "";
        public readonly int Count;
        private readonly Thread _thread;

        public Flood(Host h, int count, int window)
        {
            Count = count;
            var slots = new SemaphoreSlim(window, window);
            _thread = new Thread(() =>
            {
                for (int i = 0; i < count; i++)
                {
                    slots.Wait();
                    int k = i;
                    Interlocked.Increment(ref _started);
                    var c = h.SendToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("f" + i));
                    var t = c.Async().AsTask();
                    t.ContinueWith(x =>
                    {
                        string r = Outcome.Name(x);
                        c.Dispose();
                        lock (_lk)
                        {
                            _done++;
                            if (r == "OK") _ok++;
                            else if (_badIndex < 0) { _badIndex = k; _bad = r; }
                            Monitor.PulseAll(_lk);
                        }
                        slots.Release();
                    }, TaskContinuationOptions.ExecuteSynchronously);
                }
            }) { IsBackground = true };
            _thread.Start();
        }

        /// <summary>Waits up to ms (scaled) until at least n sends ended; the count ended.</summary>
        public int WaitDone(int n, int ms)
        {
            var until = DateTime.UtcNow + Check.Bound(ms);
            lock (_lk)
            {
                while (_done < n)
                {
                    var left = until - DateTime.UtcNow;
                    if (left <= TimeSpan.Zero) break;
                    Monitor.Wait(_lk, left);
                }
                return _done;
            }
        }

        public void FinishAll(int ms)
        {
            int done = WaitDone(Count, ms);
            if (done < Count) throw new CheckFailed($"flood: {done} of {Count} sends ended within {ms} ms ({_started} started)");
            _thread.Join();
            lock (_lk)
                if (_ok != Count) throw new CheckFailed($"flood: {Count - _ok} of {Count} sends failed; the first, f{_badIndex}, with {_bad}");
        }
    }

    // ------------------------------------------------------------- JQ-07

    private static void CrossConnectionProgress(string tr, int oneways, int window, int requests, int timeoutMs, int p99Ms)
    {
        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, tr, "jq07");
        using var a1 = new ScClient { SendTimeoutNs = 60_000_000_000 }.Open(Mode.Mesh, b);
        var a2 = MeshHost("A2", tr, false);
        a2.AddMeshChannelClient("m", "svc");
        a2.MeshConnect("m", b.Bound, "B");
        a2.Start();
        try
        {
            Check.Eventually(() => a2.MeshReadyPeers("m") == 1, 5000, "A2 sees B");
            Check.Eventually(() => b.H.MeshReadyPeers("m") == 2, 5000, "B sees A1 and A2");
            var sw = Stopwatch.StartNew();
            var f = new Flood(a1.H, oneways, window);
            var lat = new long[requests];
            int doneAtLast = 0;
            for (int k = 0; k < requests; k++)
            {
                int mark = (int)((long)oneways * (k + 1) / (2 * requests));
                if (f.WaitDone(mark, 30000) < mark) throw new CheckFailed($"{tr}: the flood did not reach {mark} of {oneways} sends");
                using var r = a2.RequestToChannel("svc").Payload("m", Encoding.UTF8.GetBytes("r" + k)).Timeout(Check.Bound(timeoutMs));
                var t0 = Stopwatch.StartNew();
                string res;
                Reply? reply = null;
                try { reply = r.Submit(); res = "OK"; } catch (Exception e) { res = Outcome.Of(e); }
                lat[k] = t0.ElapsedMilliseconds;
                if (res != "OK") throw new CheckFailed($"{tr}: A2's request {k} ended {res} after {lat[k]} ms");
                Check.Eq("r" + k, Encoding.UTF8.GetString(reply!.Payload), $"request {k}'s reply");
                if (k == requests - 1) doneAtLast = f.WaitDone(0, 0);
            }
            if (doneAtLast >= oneways) throw new CheckFailed($"{tr}: the flood of {oneways} ended before A2's last request");
            f.FinishAll(120000);
            long floodMs = sw.ElapsedMilliseconds;
            Check.Eventually(() => b.Rec.Count == oneways + requests, 30000, "B handled everything");
            Array.Sort(lat);
            long p99 = lat[(requests * 99 + 99) / 100 - 1];
            var bc = b.H.Capacity;
            Console.Error.WriteLine($"JQ-07 {tr}: {oneways} one-ways in {floodMs} ms; A2 latency ms min {lat[0]} median {lat[requests / 2]} p99 {p99}; B paused {bc.TransitionsPaused} times, peak permits {bc.PeakPermitsInUse} of {bc.EffectiveMax}");
            if (p99 >= (long)p99Ms * Program.TimeoutMult) throw new CheckFailed($"{tr}: A2's request p99 {p99} ms, bound {p99Ms} ms");
            ExpectNoDrops(b.H, "B");
        }
        finally { End(a2); }
    }

    public static void Jq07(CaseParams p)
    {
        int oneways = (int)p.Int("oneways"), window = (int)p.Int("window"), requests = (int)p.Int("requests");
        int timeoutMs = (int)p.Int("timeout_ms"), p99Ms = (int)p.Int("p99_ms");
        Check.True(oneways > 0 && window > 0 && requests > 0 && timeoutMs > 0 && p99Ms > 0, "parameters in range");
        EachTransport(p, tr => CrossConnectionProgress(tr, oneways, window, requests, timeoutMs, p99Ms));
    }

    // ------------------------------------------------------------- JQ-16

    private static void RoomOutcome(string tr, string what, Done d, long started, long wantMs, bool oneway)
    {
        d.Expect(5000, what);
        string r = d.Result;
        if (r == "CapacityExceeded" || r == "Rejected" || r == "Unavailable") throw new CheckFailed($"{tr}: {what} ended {r} for lack of room");
        if (oneway && r == "OK") return;
        if (r != "DeadlineExceeded") throw new CheckFailed($"{tr}: {what} ended {r}, expected {(oneway ? "OK or DeadlineExceeded" : "DeadlineExceeded")}");
        long e = d.AtMs - started;
        Check.True(e >= wantMs && e <= wantMs + 250L * Program.TimeoutMult, $"{tr}: {what} ended after {e} ms, expected about {wantMs}");
    }

    private static void RoomIsNotAnError(string tr, Mode mode, int batch, int sendMs, int requestMs)
    {
        const long Hwm = 16 * 1024;
        using var b = new ScServer { Name = "B", MaxJobs = 1, Hwm = Hwm }.Open(mode, tr, mode == Mode.Mesh ? "jq16m" : "jq16c");
        using var a = new ScClient { Hwm = Hwm, SendTimeoutNs = sendMs * 1_000_000L }.Open(mode, b);
        var sat = a.Saturate(b);
        var dd = new Done[2 * batch];
        var t0 = new long[2 * batch];
        for (int i = 0; i < 2 * batch; i++)
        {
            bool request = i % 2 == 1;
            string tag = (request ? "q" : "w") + (i / 2);
            t0[i] = Done.Clock.ElapsedMilliseconds;
            dd[i] = request ? Done.Of(a.Request(tag).Timeout(TimeSpan.FromMilliseconds(requestMs)).Async()) : Done.Of(a.Send(tag).Async());
        }
        RoomOutcome(tr, "the pending one-way", sat.done, sat.startedMs, sendMs, true);
        int admitted = 0, timedOut = 0;
        for (int i = 0; i < 2 * batch; i++)
        {
            bool request = i % 2 == 1;
            RoomOutcome(tr, (request ? "request " : "one-way ") + (i / 2), dd[i], t0[i], request ? requestMs : sendMs, !request);
            if (!request) { if (dd[i].Result == "OK") admitted++; else timedOut++; }
        }
        Console.Error.WriteLine($"JQ-16 {tr} {(mode == Mode.Mesh ? "mesh" : "cs")}: {sat.accepted} saturating sends accepted; batch one-ways: {admitted} admitted, {timedOut} DeadlineExceeded");
        sat.call.Dispose();
    }

    public static void Jq16(CaseParams p)
    {
        int batch = (int)p.Int("batch"), sendMs = (int)p.Int("send_timeout_ms"), requestMs = (int)p.Int("request_timeout_ms");
        Check.True(batch > 0 && sendMs > 0 && requestMs > 0 && requestMs != sendMs, "parameters in range");
        EachTransport(p, tr =>
        {
            RoomIsNotAnError(tr, Mode.Mesh, batch, sendMs, requestMs);
            RoomIsNotAnError(tr, Mode.Cs, batch, sendMs, requestMs);
            RoomIsNotAnError(tr, Mode.Mesh, batch, requestMs, sendMs);   // swapped
        });
    }

    // ------------------------------------------------------------- JQ-17

    private static void FifoNeverRejects(string tr, int oneways, int window)
    {
        using var b = new ScServer { Name = "B", MaxJobs = 2 * oneways }.Open(Mode.Mesh, tr, "jq17");
        using var a = new ScClient { SendTimeoutNs = 60_000_000_000 }.Open(Mode.Mesh, b);
        b.Gated = true;
        var sw = Stopwatch.StartNew();
        var f = new Flood(a.H, oneways, window);
        f.FinishAll(60000);   // every send OK, with the gate closed
        long sentMs = sw.ElapsedMilliseconds;
        Check.Eventually(() => b.H.Capacity.QueuedJobs == (ulong)(oneways - 1), 30000, "every record but f0 queued");
        var bc = b.H.Capacity;
        Check.Eq(1, b.Gate.Waiting, "f0 at the gate");
        Check.Eq(0, b.Rec.Count, "nothing handled yet");
        Check.True(!bc.Paused, "B RUNNING");
        b.Gate.Open();
        Check.Eventually(() => b.Rec.Count == oneways, 60000, "every record handled");
        Check.Eventually(() => b.H.Capacity.PermitsInUse == 0, 5000, "permits back");
        var seen = b.Rec.Snapshot();
        for (int i = 0; i < oneways; i++)
            if (seen[i] != "f" + i) throw new CheckFailed($"{tr}: B handled {seen.Length} of {oneways}; record {i} is '{seen[i]}', not f{i}");
        Console.Error.WriteLine($"JQ-17 {tr}: {oneways} one-ways completed in {sentMs} ms, handled by {sw.ElapsedMilliseconds} ms; peak {bc.PeakPermitsInUse}");
        ExpectNoDrops(b.H, "B");
        ExpectNoDrops(a.H, "A");
    }

    public static void Jq17(CaseParams p)
    {
        int oneways = (int)p.Int("oneways"), window = (int)p.Int("window");
        Check.True(oneways > 0 && window > 0, "parameters in range");
        EachTransport(p, tr => FifoNeverRejects(tr, oneways, window));
    }

    // ------------------------------------------------------------- JQ-06

    public static void Jq06(CaseParams p) => EachTransport(p, tr =>
    {
        const int FloodN = 8, D = 5;
        using var s = new ScServer { Name = "S", MaxJobs = 1 }.Open(Mode.Cs, tr, "jq06");
        var cgate = new Gate();
        var ch = MeshHost("C", tr, true, 1);
        ch.AddMeshChannelServer("m", "flood", 100);
        ch.AddHandler(OwnerKind.Channel, "flood", MessageKind.Send, "m", _ => cgate.Pass());
        ch.AddCsClient("svc", s.Bound);
        ch.SetChannelOption("svc", NodeOption.SendTimeout, 60_000_000_000);
        ch.Start();
        string cBound = ch.Endpoint("m");
        var c = new ScClient { H = ch, Mode = Mode.Cs };
        var fh = MeshHost("F", tr, false);
        fh.AddMeshChannelClient("m", "flood");
        fh.SetMeshOption("m", NodeOption.SendTimeout, 60_000_000_000);
        fh.MeshConnect("m", cBound, "C");
        fh.Start();
        try
        {
            Check.Eventually(() => fh.MeshReadyPeers("m") == 1, 5000, "F sees C");
            Check.Eventually(() => ch.MeshReadyPeers("m") == 1, 5000, "C sees F");
            using (var w = c.Request("warm").Timeout(Check.Bound(5000))) w.Submit();

            // Part 1: F floods C; C's request to S completes and its reply takes no permit.
            var fd = new Done[FloodN];
            for (int i = 0; i < FloodN; i++)
            {
                fd[i] = Done.Of(fh.SendToChannel("flood").Payload("m", Encoding.UTF8.GetBytes("f" + i)).Async());
                if (i == 0) Check.Eventually(() => cgate.Waiting == 1, 5000, "f0 at C's gate");
            }
            Check.Eventually(() => ch.Capacity.QueuedJobs == 1, 5000, "f1 queued at C");
            var before = ch.Capacity;
            Check.True(before.Paused, "C PAUSED");
            Check.Eq(1ul, before.PermitsInUse, "C's permit in use");
            Check.Eq(1ul, before.EffectiveMax, "C's M");
            var q1 = c.Request("q1").Timeout(Check.Bound(2000)).Submit();
            Check.Eq("q1", Encoding.UTF8.GetString(q1.Payload), "q1's reply");
            var after = ch.Capacity;
            Check.True(after.Paused, "C still PAUSED");
            Check.Eq(before.PermitsInUse, after.PermitsInUse, "permits in use");
            Check.Eq(before.ReservedSupplyPermits, after.ReservedSupplyPermits, "reserved permits");
            Check.Eq(before.QueuedJobs, after.QueuedJobs, "queued jobs");
            Check.Eq(before.PeakPermitsInUse, after.PeakPermitsInUse, "peak");
            Check.Eq(before.TransitionsPaused, after.TransitionsPaused, "transitions paused");
            Check.Eq(before.TransitionsRunning, after.TransitionsRunning, "transitions running");
            Check.Eq(1, cgate.Waiting, "f0 still holds C's gate");
            cgate.Open();
            for (int i = 0; i < FloodN; i++) { fd[i].Expect(5000, "f" + i); Check.Eq("OK", fd[i].Result, "f" + i); }
            Check.Eventually(() => ch.Capacity.PermitsInUse == 0, 5000, "C's permits back");

            // Part 2: S saturated; q never runs before an earlier record.
            var dd = c.SendGated(s, D);
            long t0 = Done.Clock.ElapsedMilliseconds;
            var dq = Done.Of(c.Request("q").Timeout(Check.Bound(10000)).Async());
            long wait = t0 + 100 - Done.Clock.ElapsedMilliseconds;
            Check.True(!dq.Task.Wait((int)Math.Max(0, wait)), "q pending at 100 ms");
            Check.Eq(2, s.Rec.Count, "S ran nothing past its gate (warm, q1)");
            Check.Eq(1, s.Gate.Waiting, "d1 at S's gate");
            s.Gate.Open();
            for (int i = 0; i < D; i++) { dd[i].Expect(5000, "d" + (i + 1)); Check.Eq("OK", dd[i].Result, "d" + (i + 1)); }
            dq.Expect(10000, "q");
            Check.Eq("OK", dq.Result, "q");
            Check.Eq("q", dq.ReplyTag, "q's reply");
            var seen = string.Join(" ", s.Rec.Snapshot());
            Check.Eq("warm q1 d1 d2 d3 d4 d5 q", seen, $"{tr}: S's records");
        }
        finally
        {
            cgate.Open();
            End(fh);
            End(ch);
        }
    });
}
