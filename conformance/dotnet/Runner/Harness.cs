// Harness.cs — the SC cases' default harness (framework-contract.md §7,
// "Default harness"), ported from conformance/c/sc_harness.c onto the .NET
// binding's public API: a server B (mesh node of "m" serving channel "svc",
// or a ClientServer server of "svc") whose handlers record each payload's
// tag and, for a request, reply now, hold the reply call, reply after a
// delay or fail the turn; and a caller A connected to the servers.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal enum Mode { Mesh = 1, Cs = 2 }
internal enum ReplyMode { Now = 0, Hold, Delay, Fail }

/// <summary>A latch handlers wait on (the C harness's sc_gate_t).</summary>
internal sealed class Gate
{
    private readonly object _lk = new();
    private bool _open;
    private int _waiting;
    public void Pass()
    {
        lock (_lk)
        {
            _waiting++;
            while (!_open) Monitor.Wait(_lk);
            _waiting--;
        }
    }
    public void Open() { lock (_lk) { _open = true; Monitor.PulseAll(_lk); } }
    public void Close() { lock (_lk) _open = false; }
    public int Waiting { get { lock (_lk) return _waiting; } }
}

/// <summary>Tags seen by a server's handlers.</summary>
internal sealed class Recorder
{
    private readonly List<string> _seen = new();
    public void Add(string tag) { lock (_seen) _seen.Add(tag); }
    public int Count { get { lock (_seen) return _seen.Count; } }
    public int Has(string tag) { lock (_seen) return _seen.FindAll(t => t == tag).Count; }
    public string[] Snapshot() { lock (_seen) return _seen.ToArray(); }
}

/// <summary>One call's outcome as the case sees it: when it completed and with what.</summary>
internal sealed class Done
{
    public static readonly Stopwatch Clock = Stopwatch.StartNew();
    public readonly Task Task;
    public long AtMs = -1;
    public string Result = "";
    public string ReplyTag = "";
    public string Message = "";
    public uint RemoteCode;

    /// <summary>The returned ValueTask itself is complete: the C outcome was delivered
    /// (the Task above completes a moment later, on the thread pool).</summary>
    public readonly Func<bool> Decided;

    private Done(Task t, Func<bool> decided) { Task = t; Decided = decided; }

    public static Done Of(ValueTask<Reply> vt) => Watch(vt.AsTask(), () => vt.IsCompleted);
    public static Done Of(ValueTask vt) => Watch(vt.AsTask(), () => vt.IsCompleted);

    private static Done Watch(Task t, Func<bool> decided)
    {
        var d = new Done(t, decided);
        t.ContinueWith(x =>
        {
            long at = Clock.ElapsedMilliseconds;
            d.Result = Outcome.Name(x);
            if (x.IsCompletedSuccessfully && x is Task<Reply> r) d.ReplyTag = Encoding.UTF8.GetString(r.Result.Payload);
            if (x.Exception?.InnerException is ZLinkFrameworkException f) { d.Message = f.Message; d.RemoteCode = f.RemoteCode; }
            Volatile.Write(ref d.AtMs, at);   // last: AtMs >= 0 means every field is set
        }, TaskContinuationOptions.ExecuteSynchronously);
        return d;
    }

    public void Expect(int ms, string what) { Check.Wait(Task, ms, what); Check.Eventually(() => IsDone, ms, what + " (recorded)"); }
    public bool IsDone => Volatile.Read(ref AtMs) >= 0;
}

/// <summary>Outcome names: "OK", "Cancelled", "InvalidArgument", "InvalidHandle" or the error kind.</summary>
internal static class Outcome
{
    public static string Name(Task t)
    {
        if (t.IsCompletedSuccessfully) return "OK";
        if (t.IsCanceled) return "Cancelled";
        return Of(t.Exception!.InnerException!);
    }
    public static string Of(Exception e) => e switch
    {
        ZLinkFrameworkException f => f.Kind.ToString(),
        OperationCanceledException => "Cancelled",
        ZLinkArgumentException => "InvalidArgument",
        ObjectDisposedException => "InvalidHandle",
        _ => e.GetType().Name + ": " + e.Message,
    };
    public static string Of(Action a)
    {
        try { a(); return "OK"; }
        catch (Exception e) { return Of(e); }
    }
}

internal sealed class ScServer : IDisposable
{
    public string Name = "B";
    public int Weight = 100;
    public int MaxJobs { get; set; }
    public long Hwm { get; set; }
    public bool ZeroChannel;
    public volatile bool Gated;
    public volatile int Reply = (int)ReplyMode.Now;
    public int DelayMs;
    public int DelayMaxMs;   // > DelayMs: each delay is drawn from DelayMs..DelayMaxMs
    private readonly Random _rng = new(0x5EED);
    public Host H = null!;
    public Mode Mode;
    public string Bound = "";
    public readonly Gate Gate = new();
    public readonly Recorder Rec = new();
    public int Pings;
    public int RepliesSent;
    public string SyncWait = "", SyncShutdown = "";
    public int SyncRan;
    /// <summary>The body of B's one-way handler for packet "x", when set.</summary>
    public Func<Turn, ValueTask>? X;
    private readonly List<(ReplyCall call, string tag)> _held = new();
    private static int _seq;

    public static string Endpoint(string tr, string tag, string name) =>
        tr == "tcp" ? "tcp://127.0.0.1:0" : $"inproc://sc-{tag}-{name}-{Environment.ProcessId}-{Interlocked.Increment(ref _seq)}";

    private static string Tag(Turn t)
    {
        var p = t.Payload;
        int k = 0;
        while (k < p.Length && k < 31 && p[k] != 0) k++;
        return Encoding.UTF8.GetString(p, 0, k);
    }

    private void OnSend(Turn t)
    {
        if (Gated) Gate.Pass();
        Rec.Add(Tag(t));
    }

    private void OnRequest(Turn t)
    {
        if (Gated) Gate.Pass();
        string tag = Tag(t);
        Rec.Add(tag);
        var mode = (ReplyMode)Reply;
        if (mode == ReplyMode.Fail) throw new InvalidOperationException("cancelled timeout");   // the text must not decide
        if (mode == ReplyMode.Now) { t.Reply("echo", Encoding.UTF8.GetBytes(tag)); return; }
        var reply = t.TakeReply().Payload("echo", Encoding.UTF8.GetBytes(tag));
        if (mode == ReplyMode.Hold) { lock (_held) _held.Add((reply, tag)); return; }
        int delay = DelayMs;
        if (DelayMaxMs > DelayMs) lock (_rng) delay = _rng.Next(DelayMs, DelayMaxMs + 1);
        _ = Task.Delay(delay).ContinueWith(__ =>
        {
            // as the C harness: started with no completion function (see the report: a reply
            // started with one while its host shuts down can lose its completion)
            try { reply.Start(); } catch (ZLinkFrameworkException) { /* refused: the host is going */ }
            reply.Dispose();
            Interlocked.Increment(ref RepliesSent);
        }, TaskScheduler.Default);
    }

    private void OnSync(Turn t)
    {
        if (Mode == Mode.Mesh)
        {
            using var c = H.SendToNode("m", "A").Payload("m", Encoding.UTF8.GetBytes("from-handler"));
            var sw = Stopwatch.StartNew();
            SyncWait = Outcome.Of(() => c.Submit());
            if (sw.ElapsedMilliseconds > 100 * Program.TimeoutMult) SyncWait = "not at once";
        }
        SyncShutdown = Outcome.Of(() => H.Shutdown(TimeSpan.FromMilliseconds(100)));
        Interlocked.Increment(ref SyncRan);
    }

    private void OnPing(Turn t)
    {
        Interlocked.Increment(ref Pings);
        t.Reply("pong", Encoding.UTF8.GetBytes(Name));
    }

    private void AddHandlers(OwnerKind owner, string name)
    {
        H.AddHandler(owner, name, MessageKind.Send, "m", OnSend);
        H.AddHandler(owner, name, MessageKind.Request, "m", OnRequest);
        H.AddHandler(owner, name, MessageKind.Send, "sync", OnSync);
        H.AddHandler(owner, name, MessageKind.Request, "ping", OnPing);
        H.AddHandler(owner, name, MessageKind.Send, "x", t => X != null ? X(t) : ValueTask.CompletedTask);
    }

    public ScServer Open(Mode mode, string tr, string tag)
    {
        Mode = mode;
        string ep = Endpoint(tr, tag, Name);
        H = new Host(Name);
        if (MaxJobs > 0) H.SetOption(HostOption.MaxQueuedJobs, MaxJobs);
        string sock = mode == Mode.Mesh ? "m" : "svc";
        if (mode == Mode.Mesh)
        {
            H.AddMeshNode("m", Name, ep);
            H.AddMeshChannelServer("m", "svc", Weight);
            if (ZeroChannel) H.AddMeshChannelServer("m", "zero", 0);
            AddHandlers(OwnerKind.Channel, "svc");
            AddHandlers(OwnerKind.Node, "m");
        }
        else
        {
            H.AddCsServer("svc", ep);
            AddHandlers(OwnerKind.Channel, "svc");
        }
        if (Hwm > 0)
        {
            if (mode == Mode.Mesh) { H.SetMeshOption(sock, NodeOption.SndHwm, Hwm); H.SetMeshOption(sock, NodeOption.RcvHwm, Hwm); }
            else { H.SetChannelOption(sock, NodeOption.SndHwm, Hwm); H.SetChannelOption(sock, NodeOption.RcvHwm, Hwm); }
        }
        H.Start();
        Bound = H.Endpoint(sock);
        return this;
    }

    public int Held { get { lock (_held) return _held.Count; } }

    /// <summary>Starts the held reply of tag (B answers it now); false when none is held.</summary>
    public bool ReleaseHeld(string tag)
    {
        ReplyCall? c = null;
        lock (_held)
        {
            int i = _held.FindIndex(h => h.tag == tag);
            if (i < 0) return false;
            c = _held[i].call;
            _held.RemoveAt(i);
        }
        c.Start();
        c.Dispose();
        return true;
    }

    public void DropHeld()
    {
        lock (_held)
        {
            foreach (var (c, _) in _held) c.Dispose();
            _held.Clear();
        }
    }

    public void Dispose()
    {
        Gate.Open();
        DropHeld();
        if (H.State == HostState.Serving) H.Shutdown(TimeSpan.FromSeconds(2));
        H.Dispose();
    }
}

internal sealed class ScClient : IDisposable
{
    public Host H { get; set; } = null!;
    public Mode Mode { get; set; }
    public bool ExtraChannels;
    public long SendTimeoutNs { get; set; }
    public long Hwm { get; set; }

    public ScClient Open(Mode mode, params ScServer[] srv)
    {
        Mode = mode;
        H = new Host("A");
        if (mode == Mode.Mesh)
        {
            H.AddMeshNode("m", "A", null);
            H.AddMeshChannelClient("m", "svc");
            if (ExtraChannels) { H.AddMeshChannelClient("m", "none"); H.AddMeshChannelClient("m", "zero"); }
            foreach (var s in srv) H.MeshConnect("m", s.Bound, s.Name);
            if (SendTimeoutNs != 0) H.SetMeshOption("m", NodeOption.SendTimeout, SendTimeoutNs);
            if (Hwm > 0) { H.SetMeshOption("m", NodeOption.SndHwm, Hwm); H.SetMeshOption("m", NodeOption.RcvHwm, Hwm); }
        }
        else
        {
            foreach (var s in srv) H.AddCsClient("svc", s.Bound);
            if (SendTimeoutNs != 0) H.SetChannelOption("svc", NodeOption.SendTimeout, SendTimeoutNs);
            if (Hwm > 0) { H.SetChannelOption("svc", NodeOption.SndHwm, Hwm); H.SetChannelOption("svc", NodeOption.RcvHwm, Hwm); }
        }
        H.Start();
        if (mode == Mode.Mesh)
        {
            Check.Eventually(() => H.MeshReadyPeers("m") == srv.Length, 5000, "A's mesh peers ready");
            foreach (var s in srv) Check.Eventually(() => s.H.MeshReadyPeers("m") == 1, 5000, s.Name + "'s mesh peer ready");
            return this;
        }
        for (int round = 0; ; round++)
        {
            bool all = true;
            foreach (var s in srv) all &= Volatile.Read(ref s.Pings) > 0;
            if (all) break;
            Check.True(round < 500, "every CS server answered a ping");
            using var c = H.RequestToChannel("svc").Payload("ping", new byte[] { (byte)'p' }).Timeout(Check.Bound(5000));
            c.Submit();
        }
        return this;
    }

    /// <summary>A call to channel (default "svc") with packet "m" and payload tag.</summary>
    public RequestCall Request(string tag, string channel = "svc") => H.RequestToChannel(channel).Payload("m", Encoding.UTF8.GetBytes(tag));
    public OneWayCall Send(string tag, string channel = "svc", int size = 0) => H.SendToChannel(channel).Payload("m", Padded(tag, size));

    /// <summary>Gates s and starts one-ways d1..dn to "svc"; returns once d1 waits at s's
    /// gate and, after d2, s (max_jobs 1) is PAUSED (sc_send_gated).</summary>
    public Done[] SendGated(ScServer s, int n)
    {
        s.Gated = true;
        var dd = new Done[n];
        for (int i = 0; i < n; i++)
        {
            dd[i] = Done.Of(Send("d" + (i + 1)).Async());
            if (i == 0) Check.Eventually(() => s.Gate.Waiting == 1, 5000, "d1 at the gate");
            if (i == 1) Check.Eventually(() => s.H.Capacity.Paused, 5000, s.Name + " PAUSED");
        }
        return dd;
    }

    /// <summary>The tag padded with NUL bytes to size (0: just the tag).</summary>
    public static byte[] Padded(string tag, int size)
    {
        var t = Encoding.UTF8.GetBytes(tag);
        if (size <= t.Length) return t;
        var b = new byte[size];
        t.CopyTo(b, 0);
        return b;
    }

    /// <summary>"Saturate B" (framework-contract.md §7): B has max_jobs 1, a 16 KiB HWM and
    /// is gated; A sends 4 KiB one-ways f0, f1 ... until one stays pending 100 ms with A's
    /// status showing a one-way waiting for room. Returns it; accepted counts the others.</summary>
    public (OneWayCall call, Done done, long startedMs, string tag, int accepted) Saturate(ScServer b)
    {
        b.Gated = true;
        for (int i = 0; ; i++)
        {
            Check.True(i < 100000, "saturation within 100000 sends");
            string tag = "f" + i;
            var c = Send(tag, "svc", 4096);
            long started = Done.Clock.ElapsedMilliseconds;
            var d = Done.Of(c.Async());
            if (!d.Task.Wait(100) && H.Status.OnewayWaiting == 1) return (c, d, started, tag, i);
            if (!d.Task.Wait(Check.Bound(5000)))
                throw new CheckFailed($"send {tag} neither completed nor waited for room: A oneway_waiting {H.Status.OnewayWaiting}");
            d.Expect(1000, tag);
            Check.Eq("OK", d.Result, tag);
            c.Dispose();
        }
    }
    public RequestCall NodeRequest(string rid, string tag) => H.RequestToNode("m", rid).Payload("m", Encoding.UTF8.GetBytes(tag));
    public OneWayCall NodeSend(string rid, string tag) => H.SendToNode("m", rid).Payload("m", Encoding.UTF8.GetBytes(tag));

    public void Dispose()
    {
        if (H.State == HostState.Serving) H.Shutdown(TimeSpan.FromSeconds(2));
        H.Dispose();
    }
}
