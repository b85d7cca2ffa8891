// JqPressure.cs — JQ-11 (the 80/60 hysteresis), JQ-12 (the latest absolute
// state wins) and JQ-13 (which sockets get a flow state) through the .NET
// binding's public API; conformance/c/jq_pressure.c is the reference.
//
// The host H under test is a framework host. What looks at its sockets is
// outside it: an Observer is a plain Core DEALER of the case's own Context
// connected to one of H's ROUTERs, whose monitor status (Socket.OpenMonitor,
// SocketMonitor.Status) tells whether that ROUTER asks its peers to pause
// (FlowPausedConnections, read through RawPeer.PausedBy); WirePeer is a test-only raw ZMP peer over a plain
// TCP socket that reads the FLOWSTATE frames H sends and sends a record while
// paused. H's handlers wait at a Turnstile that lets one turn through per
// token, so a case raises H's queued jobs one one-way at a time and lowers
// them one token at a time. tcp only: the observers live in a Context of
// their own. Every wait ends on its event; its timeout is the failure bound.
using System;
using System.IO;
using System.Net.Sockets;
using System.Text;
using System.Threading;

namespace ZLink.Conformance;

internal static class JqPressure
{
    private const string Jq = "zlink.host.application_job_queue.";
    private const string CoreHwm = "zlink.host.core_hwm.";
    private const string Dropped = "zlink.mesh_node.messages.dropped";
    private static byte[] U(string s) => Encoding.UTF8.GetBytes(s);

    /// <summary>One turn through per token (the handler of H's channels).</summary>
    private sealed class Turnstile
    {
        private readonly object _lk = new();
        private int _tokens, _inside, _passed;
        public void Handler(Turn t)
        {
            lock (_lk)
            {
                _inside++;
                while (_tokens == 0) Monitor.Wait(_lk);
                _tokens--;
                _inside--;
                _passed++;
            }
        }
        public void Give(int n) { lock (_lk) { _tokens += n; Monitor.PulseAll(_lk); } }
        public int Inside { get { lock (_lk) return _inside; } }
        public int Passed { get { lock (_lk) return _passed; } }
    }

    /// <summary>A Core DEALER of ctx connected to ep, and its monitor.</summary>
    private sealed class Observer : IDisposable
    {
        public readonly Socket Sock;
        private readonly SocketMonitor _mon;
        public Observer(Context ctx, string ep)
        {
            Sock = ctx.Socket(SocketType.Dealer);
            Sock.Connect(ep);
            _mon = Sock.OpenMonitor();
        }
        public MonitorStatus Status
        {
            get
            {
                var st = _mon.Status;
                Check.True((st.DetailFlags & MonitorStatus.DetailFlowState) != 0, "the monitor reports the flow state");
                return st;
            }
        }
        public bool Ready => (Status.StateFlags & MonitorStatus.StateReady) != 0;
        /// <summary>How many of its peers pause the observer now (0 or 1: it has one).</summary>
        public ulong Paused => RawPeer.PausedBy(_mon);
        public void Dispose() { _mon.Dispose(); Sock.Dispose(); }
    }

    /// <summary>A host of mesh "m" (routing id name) listening on tcp, serving channel
    /// "svc" through t (null: no channel), with maxJobs (0: the default). Not started.</summary>
    private static Host MeshHost(string name, long maxJobs, Turnstile? t)
    {
        var h = new Host(name);
        if (maxJobs > 0) h.SetOption(HostOption.MaxQueuedJobs, maxJobs);
        h.AddMeshNode("m", name, "tcp://127.0.0.1:0");
        if (t != null)
        {
            h.AddMeshChannelServer("m", "svc", 100);
            h.AddHandler(OwnerKind.Channel, "svc", MessageKind.Send, "m", t.Handler);
        }
        return h;
    }

    /// <summary>A started mesh client of "svc" connected to node "H" at ep; returns once
    /// both ends see each other ready. Its one-ways may wait for room while H pauses it.</summary>
    private static Host MeshClient(string name, string ep, Host h)
    {
        var c = new Host(name);
        c.AddMeshNode("m", name, null);
        c.AddMeshChannelClient("m", "svc");
        c.SetMeshOption("m", NodeOption.SendTimeout, 30000L * Program.TimeoutMult * 1_000_000);   // ns
        c.MeshConnect("m", ep, "H");
        c.Start();
        Check.Eventually(() => c.MeshReadyPeers("m") == 1, 5000, name + " sees H ready");
        Check.Eventually(() => h.MeshReadyPeers("m") >= 1, 5000, "H sees " + name + " ready");
        return c;
    }

    /// <summary>One one-way from c to channel chan, finished synchronously: its outcome.</summary>
    private static string Oneway(Host c, string chan, string tag)
    {
        using var k = c.SendToChannel(chan).Payload("m", U(tag));
        return Outcome.Of(() => k.Submit());
    }

    private static void End(Host h)
    {
        h.Shutdown(TimeSpan.FromSeconds(2));
        h.Dispose();
    }

    // ------------------------------------------------------------- JQ-11

    public static void Jq11(CaseParams prm)
    {
        var ctx = new Context();
        Hysteresis(ctx, 10, 8, 6);
        Hysteresis(ctx, 1, 1, 0);
        Hysteresis(ctx, 17, 14, 10);
        ctx.Dispose();
    }

    /// <summary>H's state at q queued jobs: the host's view, its metric series, and the
    /// mesh ROUTER's flow state as the observer (a peer) sees it.</summary>
    private static void ExpectState(Host h, Observer obs, int q, bool paused)
    {
        var c = h.Capacity;
        Check.True(c.Paused == paused, $"queued {q}: pressure state {(c.Paused ? "PAUSED" : "RUNNING")}, expected {(paused ? "PAUSED" : "RUNNING")}");
        Check.Eq(paused ? 1L : 0L, h.Metric(Jq + "pressure_state", "state=paused"), $"queued {q}: pressure_state{{state=paused}}");
        Check.Eq(paused ? 0L : 1L, h.Metric(Jq + "pressure_state", "state=running"), $"queued {q}: pressure_state{{state=running}}");
        Check.Eventually(() => obs.Paused == (paused ? 1UL : 0UL), 5000, $"queued {q}: the peer sees {(paused ? "PAUSED" : "RUNNING")}");
    }

    /// <summary>Until H holds q queued jobs (and q permits) with one turn at the turnstile.</summary>
    private static void ExpectQueued(Host h, Turnstile t, int q) =>
        Check.Eventually(() =>
        {
            if (t.Inside != 1) return false;
            var c = h.Capacity;
            return c.QueuedJobs == (ulong)q && c.PermitsInUse == (ulong)q;
        }, 5000, $"H holds {q} queued jobs and one turn at the turnstile");

    private static void Hysteresis(Context ctx, long m, int pause, int resume)
    {
        Console.WriteLine($"# M = {m}: pause at {pause}, resume at {resume}");
        var t = new Turnstile();
        var h = MeshHost("H", m, t);
        h.Start();
        string ep = h.Endpoint("m");
        var c = h.Capacity;
        Check.Eq((ulong)pause, c.PauseCount, "the pause count");
        Check.Eq((ulong)resume, c.ResumeCount, "the resume count");
        var cl = MeshClient("C", ep, h);
        var obs = new Observer(ctx, ep);
        Check.Eventually(() => obs.Ready, 5000, "the observer is connected");

        Check.Eq("OK", Oneway(cl, "svc", "j0"), "j0 (enters the handler)");
        ExpectQueued(h, t, 0);
        // Each mesh control record's permit counted until it was handled: with a pause
        // count of 1 each was one pause and one resume, else none.
        c = h.Capacity;
        ulong tp = c.TransitionsPaused, tr = c.TransitionsRunning;
        if (pause == 1) Check.True(tp >= 1, "pause count 1: the control records paused H");
        else Check.Eq(0UL, tp, "no pause before the one-ways");
        Check.Eq(tp, tr, "as many resumes as pauses");
        ExpectState(h, obs, 0, false);
        // Up: 1..pause-1 running, pause paused (above it C is held back: the "later" part).
        for (int q = 1; q <= pause; q++)
        {
            Check.Eq("OK", Oneway(cl, "svc", "j" + q), "one-way j" + q);
            ExpectQueued(h, t, q);
            ExpectState(h, obs, q, q >= pause);
        }
        c = h.Capacity;
        Check.Eq(tp + 1, c.TransitionsPaused, "one pause on the way up");
        Check.Eq(tr, c.TransitionsRunning, "no resume on the way up");
        Check.Eq((long)(tp + 1), h.Metric(Jq + "pressure_transitions", "state=paused"), "pressure_transitions{state=paused}");
        // Down, one turn at a time: paused above resume, running at it.
        for (int q = pause - 1; q >= resume; q--)
        {
            int passed = t.Passed;
            t.Give(1);
            Check.Eventually(() => t.Passed == passed + 1, 5000, "one turn passed");
            ExpectQueued(h, t, q);
            ExpectState(h, obs, q, q > resume);
        }
        c = h.Capacity;
        Check.Eq(tp + 1, c.TransitionsPaused, "no pause on the way down");
        Check.Eq(tr + 1, c.TransitionsRunning, "one resume on the way down");
        Check.Eq((long)(tr + 1), h.Metric(Jq + "pressure_transitions", "state=running"), "pressure_transitions{state=running}");
        // Back up by one: still running unless that reaches the pause count.
        Check.Eq("OK", Oneway(cl, "svc", "again"), "one-way again");
        ExpectQueued(h, t, resume + 1);
        bool again = resume + 1 >= pause;
        ExpectState(h, obs, resume + 1, again);
        c = h.Capacity;
        Check.Eq(tp + 1 + (again ? 1UL : 0UL), c.TransitionsPaused, "pauses after one back up");
        Check.Eq(tr + 1, c.TransitionsRunning, "resumes after one back up");
        Check.Eq(0UL, c.FlowStateConfigFailures, "flow_state_config_failures");

        t.Give(1 << 20);
        obs.Dispose();
        End(cl);
        End(h);
    }

    // ------------------------------------------------------------- JQ-12

    /// <summary>A raw ZMP peer over a plain TCP socket (core/tests/zltest_rawzmp.h in C#):
    /// a frame is an 8-byte header (magic 0x5A, version 1, flags, kind, u32 size), a u64
    /// sequence for kinds 1..3, then the body.</summary>
    private sealed class WirePeer : IDisposable
    {
        public const int FMore = 1, FControl = 2;
        private readonly TcpClient _tcp;
        private readonly NetworkStream _io;

        public WirePeer(string ep)
        {
            int port = int.Parse(ep.Substring(ep.LastIndexOf(':') + 1));
            _tcp = new TcpClient { NoDelay = true };
            _tcp.Connect("127.0.0.1", port);
            _io = _tcp.GetStream();
            _io.ReadTimeout = 5000 * Program.TimeoutMult;   // a failure bound
        }

        private static byte[] Frame(int flags, byte[] body)
        {
            var f = new byte[8 + body.Length];
            f[0] = 0x5A; f[1] = 0x01; f[2] = (byte)flags; f[3] = 0;
            f[4] = (byte)(body.Length >> 24); f[5] = (byte)(body.Length >> 16); f[6] = (byte)(body.Length >> 8); f[7] = (byte)body.Length;
            body.CopyTo(f, 8);
            return f;
        }

        private void Send(byte[] frame) { _io.Write(frame); _io.Flush(); }

        public void Hello(int type, string rid)
        {
            var b = new MemoryStream();
            b.WriteByte(0x01); b.WriteByte((byte)(type >> 8)); b.WriteByte((byte)type);
            b.WriteByte((byte)rid.Length); b.Write(U(rid));
            Send(Frame(FControl, b.ToArray()));
        }

        private static void Prop(MemoryStream b, string name, byte[] v)
        {
            b.WriteByte((byte)name.Length); b.Write(U(name));
            b.WriteByte((byte)(v.Length >> 24)); b.WriteByte((byte)(v.Length >> 16)); b.WriteByte((byte)(v.Length >> 8)); b.WriteByte((byte)v.Length);
            b.Write(v);
        }

        /// <summary>READY of a DEALER with one lane (lane 0) and weight 100.</summary>
        public void ReadyDealer(string rid)
        {
            var b = new MemoryStream();
            b.WriteByte(0x04);
            Prop(b, "Socket-Type", U("DEALER"));
            Prop(b, "Routing-Id", U(rid));
            Prop(b, "Zlink-Lane-Count", new byte[] { 1 });
            Prop(b, "Zlink-Lane", new byte[] { 0 });
            Prop(b, "Zlink-Weight", new byte[] { 0, 0, 0, 100 });
            Send(Frame(FControl, b.ToArray()));
        }

        public void Data(string text) => Send(Frame(0, U(text)));

        private void ReadExactly(byte[] buf)
        {
            int at = 0;
            while (at < buf.Length)
            {
                int n = _io.Read(buf, at, buf.Length - at);
                if (n == 0) throw new CheckFailed("the raw peer's connection closed");
                at += n;
            }
        }

        /// <summary>The next frame (flags, body); an IOException past the bound.</summary>
        public (int flags, byte[] body) Next()
        {
            var h = new byte[8];
            ReadExactly(h);
            Check.True(h[0] == 0x5A && h[1] == 0x01, $"a frame header from the ZLink side ({h[0]:x2} {h[1]:x2})");
            int size = h[4] << 24 | h[5] << 16 | h[6] << 8 | h[7];
            if (h[3] >= 1 && h[3] <= 3) ReadExactly(new byte[8]);
            var body = new byte[size];
            ReadExactly(body);
            return (h[2], body);
        }

        /// <summary>The state byte of a FLOWSTATE frame, or -1 for another frame.</summary>
        public static int FlowState((int flags, byte[] body) f) =>
            f.flags == FControl && f.body.Length == 19 && Encoding.ASCII.GetString(f.body, 0, 9) == "FLOWSTATE" ? f.body[10] : -1;

        public void Dispose() { _io.Dispose(); _tcp.Dispose(); }
    }

    public static void Jq12(CaseParams prm)
    {
        var ctx = new Context();
        NewPeerPaused(ctx);
        Toggles(ctx, false);
        Toggles(ctx, true);
        ctx.Dispose();
    }

    /// <summary>Part 1: H (a CS server, M = 2) is PAUSED; a peer that connects now is told
    /// PAUSED right after its handshake, before it sent anything, and a record it sends
    /// anyway stays in the Core, unreceived, until H has room.</summary>
    private static void NewPeerPaused(Context ctx)
    {
        var t = new Turnstile();
        var h = new Host("H");
        h.SetOption(HostOption.MaxQueuedJobs, 2);
        h.AddCsServer("cs", "tcp://127.0.0.1:0");
        h.AddHandler(OwnerKind.Channel, "cs", MessageKind.Send, "m", t.Handler);
        h.Start();
        string ep = h.Endpoint("cs");
        var cl = new Host("C");
        cl.AddCsClient("cs", ep);
        cl.Start();
        for (int i = 0; i < 3; i++)
        {
            Check.Eq("OK", Oneway(cl, "cs", "p" + i), "one-way p" + i);
            if (i == 0) Check.Eventually(() => t.Inside == 1, 5000, "p0 at the turnstile");
        }
        Check.Eventually(() => h.Capacity.QueuedJobs == 2, 5000, "H holds two queued jobs");
        Check.True(h.Capacity.Paused, "H is PAUSED");
        long dropped = h.Metric(Dropped, "reason=decode_error");

        // A Core peer connecting now sees the remote pause and keeps its records.
        var obs = new Observer(ctx, ep);
        Check.Eventually(() => obs.Paused == 1, 5000, "a new Core peer sees PAUSED");
        int sr = obs.Sock.TrySend(new[] { U("k") }, dontWait: true);
        Check.True(sr != 0, "the paused Core peer's send is held back at the sender (not sent)");

        // A raw wire peer: HELLO, READY, then FLOWSTATE PAUSED before any record of its own.
        using var raw = new WirePeer(ep);
        raw.Hello((int)SocketType.Dealer, "raw");
        raw.ReadyDealer("raw");
        var f = raw.Next();
        Check.True(f.flags == WirePeer.FControl && f.body.Length > 0 && f.body[0] == 0x01, "H's HELLO");
        f = raw.Next();
        Check.True(f.flags == WirePeer.FControl && f.body.Length > 0 && f.body[0] == 0x04, "H's READY");
        f = raw.Next();
        Check.Eq(1, WirePeer.FlowState(f), "FLOWSTATE PAUSED right after the handshake");
        // It ignores the pause: its record waits in H's Core queue, unreceived (no permit
        // is free), and nothing is dropped.
        raw.Data("ignores the pause");
        Check.Eventually(() => h.Metric(CoreHwm + "accounted", "state=receive") > 0, 5000, "the raw record is held in H's Core");
        var c = h.Capacity;
        Check.Eq(2UL, c.QueuedJobs, "still two queued jobs");
        Check.Eq(2UL, c.PermitsInUse, "still two permits in use");
        Check.Eq(dropped, h.Metric(Dropped, "reason=decode_error"), "nothing dropped while paused");

        // Room again: the held jobs run, the raw record (no framework record) is received
        // and dropped as malformed; H runs and tells both peers.
        t.Give(1 << 20);
        Check.Eventually(() => t.Passed == 3, 5000, "the three one-ways ran");
        Check.Eventually(() => h.Metric(Dropped, "reason=decode_error") == dropped + 1, 5000, "the raw record dropped as malformed");
        Check.Eventually(() => !h.Capacity.Paused, 5000, "H RUNNING");
        Check.Eventually(() => obs.Paused == 0, 5000, "the Core peer sees RUNNING");
        bool running = false;
        while (!running)
        {
            try { f = raw.Next(); }
            catch (IOException e) { throw new CheckFailed("the raw peer was not told RUNNING: " + e.Message); }
            running = WirePeer.FlowState(f) == 0;
        }
        Check.Eq(0UL, h.Capacity.FlowStateConfigFailures, "flow_state_config_failures");
        raw.Dispose();
        obs.Dispose();
        End(cl);
        End(h);
    }

    /// <summary>A sender thread of part 2: n one-ways from c to chan; every one must be
    /// accepted unless the case stopped it after shutting H down. It sends record i once
    /// the case allows more than i (so the case's peer closes interleave with the
    /// toggles instead of racing a sender that is already done).</summary>
    private sealed class Sender
    {
        public readonly Host C;
        public readonly string Chan;
        public readonly int N;
        private readonly object _lk = new();
        private int _allowed;
        private bool _stop;
        public int Sent, Failed;
        public string FirstFailure = "";
        public readonly Thread Th;
        public Sender(Host c, string chan, int n, int allowed)
        {
            C = c; Chan = chan; N = n; _allowed = allowed;
            Th = new Thread(Run) { IsBackground = true };
        }
        public void Allow(int n) { lock (_lk) { _allowed = Math.Max(_allowed, n); Monitor.PulseAll(_lk); } }
        public void Stop() { lock (_lk) { _stop = true; Monitor.PulseAll(_lk); } }
        private void Run()
        {
            for (int i = 0; i < N; i++)
            {
                lock (_lk)
                {
                    while (!_stop && i >= _allowed) Monitor.Wait(_lk);
                    if (_stop) return;
                }
                string o;
                try { o = Oneway(C, Chan, "t"); }
                catch (Exception e) { o = e.GetType().Name + ": " + e.Message; }
                if (o == "OK") Interlocked.Increment(ref Sent);
                else if (Interlocked.Increment(ref Failed) == 1) FirstFailure = o;
            }
        }
    }

    /// <summary>Part 2: H (M = 1, a mesh node and a CS server, handlers that never wait)
    /// toggles PAUSED/RUNNING once each way per record: 1,000 records from two sender
    /// threads make 1,000 pauses and 1,000 resumes while peer sockets of H's ROUTERs open
    /// and close, then, in a second run, while H itself shuts down.</summary>
    private static void Toggles(Context ctx, bool shutdownMid)
    {
        const int PerSender = 500;
        Console.WriteLine($"# toggles {(shutdownMid ? "while H shuts down" : "while peers close")}");
        var t = new Turnstile();
        t.Give(1 << 30);   // never waits
        var h = MeshHost("H", 1, t);
        h.AddCsServer("cs", "tcp://127.0.0.1:0");
        h.AddHandler(OwnerKind.Channel, "cs", MessageKind.Send, "m", t.Handler);
        h.Start();
        string mep = h.Endpoint("m"), cep = h.Endpoint("cs");
        var mc = MeshClient("C1", mep, h);
        var cc = new Host("C2");
        cc.AddCsClient("cs", cep);
        cc.SetChannelOption("cs", NodeOption.SendTimeout, 30000L * Program.TimeoutMult * 1_000_000);
        cc.Start();
        Check.Eq("OK", Oneway(cc, "cs", "warm"), "the warm-up one-way");
        Check.Eventually(() => t.Passed == 1, 5000, "the warm-up ran");
        var c0 = h.Capacity;

        const int Step = 25;   // records per sender between two peer closes
        var s = new[] { new Sender(mc, "svc", PerSender, Step), new Sender(cc, "cs", PerSender, Step) };
        foreach (var x in s) x.Th.Start();
        // Peer sockets close mid-toggle: observers come and go on both ROUTERs, and each
        // close lets the senders send Step records more.
        var keep = new[] { new Observer(ctx, mep), new Observer(ctx, cep) };
        int churn = 0;
        var sw = System.Diagnostics.Stopwatch.StartNew();
        int until = 1 + (shutdownMid ? 200 : 2 * PerSender);
        while (t.Passed < until)
        {
            if (sw.ElapsedMilliseconds > 30000L * Program.TimeoutMult)
                throw new CheckFailed($"H handled {t.Passed - 1} of the {2 * PerSender} records within 30 s");
            var o = new Observer(ctx, churn % 2 == 0 ? mep : cep);
            Check.Eventually(() => o.Ready, 5000, "a churning observer connected");
            o.Dispose();
            churn++;
            foreach (var x in s) x.Allow(Step * (churn + 1));
        }
        // From here on the senders run free (in the shutdown run: while H shuts down).
        foreach (var x in s) x.Allow(PerSender);
        if (shutdownMid)
        {
            // H closes while its senders still toggle it.
            h.Shutdown(TimeSpan.FromSeconds(2));
            Check.Eq(HostState.Stopped, h.State, "H STOPPED");
            var c = h.Capacity;
            Console.WriteLine($"# H shut down after {c.TransitionsPaused - c0.TransitionsPaused} pauses, {c.TransitionsRunning - c0.TransitionsRunning} resumes of the toggling");
            Check.True(c.TransitionsPaused >= 200 && c.TransitionsPaused - c.TransitionsRunning <= 1,
                       $"transitions paused {c.TransitionsPaused}, running {c.TransitionsRunning}");
            // The registry took H's sockets out before closing them: no close race failed.
            Check.Eq(0UL, c.FlowStateConfigFailures, "flow_state_config_failures after the shutdown");
            // The senders end: a one-way still waiting for room at H ends with its host's shutdown.
            foreach (var x in s) x.Stop();
            mc.Shutdown(TimeSpan.FromSeconds(2));
            cc.Shutdown(TimeSpan.FromSeconds(2));
            foreach (var x in s) Check.True(x.Th.Join(Check.Bound(10000)), "a sender ended");
            Check.True(s[0].Sent + s[1].Sent >= 200, $"sent {s[0].Sent} + {s[1].Sent}");
        }
        else
        {
            foreach (var x in s)
            {
                Check.True(x.Th.Join(Check.Bound(30000)), "a sender ended");
                Check.Eq(0, x.Failed, "failed one-ways to " + x.Chan + " (first: " + x.FirstFailure + ")");
                Check.Eq(PerSender, x.Sent, "one-ways accepted on " + x.Chan);
            }
            Check.Eventually(() => t.Passed == 1 + 2 * PerSender, 10000, "every record handled");
            Check.Eventually(() => h.Capacity.PermitsInUse == 0, 5000, "no permit in use");
            var c = h.Capacity;
            // M = 1: every record paused and resumed H once.
            Check.Eq((ulong)(2 * PerSender), c.TransitionsPaused - c0.TransitionsPaused, "pauses");
            Check.Eq((ulong)(2 * PerSender), c.TransitionsRunning - c0.TransitionsRunning, "resumes");
            Check.True(!c.Paused, "H ends RUNNING");
            // Every live supported socket ends in the host's state, as each peer sees it; a fresh peer too.
            Check.Eventually(() => keep[0].Paused == 0 && keep[1].Paused == 0, 5000, "the kept peers see RUNNING");
            var late = new Observer(ctx, mep);
            Check.Eventually(() => late.Ready, 5000, "a late observer connected");
            Check.Eq(0UL, late.Paused, "a late peer sees RUNNING");
            late.Dispose();
            Check.Eq(0UL, c.FlowStateConfigFailures, "flow_state_config_failures");
            Check.True(churn >= 2 * PerSender / (2 * Step) - 1, $"observers closed mid-toggle: {churn}");
            Check.Eq(0L, h.Metric(Dropped, "reason=no_handler"), "nothing dropped for want of a handler");
        }
        Console.WriteLine($"# {churn} observers opened and closed; sent {s[0].Sent} + {s[1].Sent}");
        keep[0].Dispose();
        keep[1].Dispose();
        if (!shutdownMid) { End(mc); End(cc); }
        else { mc.Dispose(); cc.Dispose(); }
        if (!shutdownMid) h.Shutdown(TimeSpan.FromSeconds(2));
        h.Dispose();
    }

    // ------------------------------------------------------------- JQ-13

    /// <summary>H has a mesh ROUTER (node "m", serving "svc"), a CS server ROUTER ("cs")
    /// and a CS client DEALER ("out") connected to S, a plain Core ROUTER of the case.
    /// Saturated (M = 2, gated), H pauses both ROUTERs, as their peers see, and never
    /// gives the DEALER a flow state: S is never paused.</summary>
    public static void Jq13(CaseParams prm)
    {
        var ctx = new Context();
        var srv = ctx.Socket(SocketType.Router);
        srv.Bind("tcp://127.0.0.1:0");
        string sep = srv.LastEndpoint;
        var smon = srv.OpenMonitor();

        var t = new Turnstile();
        var h = MeshHost("H", 2, t);
        h.AddCsServer("cs", "tcp://127.0.0.1:0");
        h.AddHandler(OwnerKind.Channel, "cs", MessageKind.Send, "m", t.Handler);
        h.AddCsClient("out", sep);
        h.Start();
        string mep = h.Endpoint("m"), cep = h.Endpoint("cs");
        var om = new Observer(ctx, mep);
        var oc = new Observer(ctx, cep);
        Check.Eventually(() => om.Ready && oc.Ready, 5000, "both observers connected");
        Check.Eventually(() => (smon.Status.StateFlags & MonitorStatus.StateReady) != 0, 5000, "H's DEALER is connected to S");

        // Saturate H through its mesh node: one running, two queued.
        var cl = MeshClient("C", mep, h);
        for (int i = 0; i < 3; i++)
        {
            Check.Eq("OK", Oneway(cl, "svc", "s" + i), "one-way s" + i);
            if (i == 0) Check.Eventually(() => t.Inside == 1, 5000, "s0 at the turnstile");
        }
        Check.Eventually(() => h.Capacity.QueuedJobs == 2, 5000, "H holds two queued jobs");
        Check.True(h.Capacity.Paused, "H is PAUSED");
        // Both ROUTERs PAUSED as their peers see it.
        Check.Eventually(() => om.Paused == 1 && oc.Paused == 1, 5000, "both ROUTERs' peers see PAUSED");
        // The DEALER: its peer S is not paused and never was; it still sends to S.
        var st = smon.Status;
        Check.True((st.DetailFlags & MonitorStatus.DetailFlowState) != 0, "S's monitor reports the flow state");
        Check.Eq(0UL, st.FlowPausedConnections, "S is not paused");
        Check.Eq(0UL, st.FlowPauseAppliedTotal, "S was never paused");
        Check.Eq("OK", Oneway(h, "out", "out"), "H's DEALER sends to S while H is PAUSED");
        srv.SetOption(0x3012, 5000 * Program.TimeoutMult);   // RCVTIMEO: a failure bound
        Check.Eq(0, srv.TryRouterRecv(out _, out _, out var parts), "S receives H's one-way");
        Check.True(parts.Length >= 1, "a record of at least one part");
        Check.True(h.Capacity.Paused, "H still PAUSED throughout");
        Check.Eq(0UL, smon.Status.FlowPauseAppliedTotal, "S never paused");
        Check.Eq(0UL, h.Capacity.FlowStateConfigFailures, "flow_state_config_failures");

        // Open: both ROUTERs RUNNING again; S still never paused.
        t.Give(1 << 20);
        Check.Eventually(() => !h.Capacity.Paused, 5000, "H RUNNING");
        Check.Eventually(() => om.Paused == 0 && oc.Paused == 0, 5000, "both ROUTERs' peers see RUNNING");
        st = smon.Status;
        Check.Eq(0UL, st.FlowPauseAppliedTotal, "S never paused (after)");
        Check.Eq(0UL, st.FlowResumeAppliedTotal, "S never resumed");

        om.Dispose();
        oc.Dispose();
        End(cl);
        End(h);
        smon.Dispose();
        srv.Dispose();
        ctx.Dispose();
    }
}
