// Host.cs — the framework Host: configuration, handlers, start, shutdown and
// the status snapshots, each a direct projection of one zlink_host_* call.
//
// Design notes (threads and lifetimes)
//  - A handler is registered once per key with one [UnmanagedCallersOnly]
//    entry (Turn.Entry) and a GCHandle to its HandlerEntry as `user`; the C
//    runtime uses both until the host is STOPPED, so the GCHandles are freed
//    only after zlink_host_destroy returned OK (a host that could not be
//    destroyed keeps them: a leak, never a dangling pointer).
//  - Shutdown blocks (zlink_host_shutdown). ShutdownAsync runs it on a
//    dedicated thread, except on a runtime-context thread, where it calls it
//    inline so that the C runtime refuses it (INVALID_OPERATION) exactly as
//    Shutdown() would: the binding never decides that itself.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink;

public enum HostState { Preparing = 0, Serving = 1, Draining = 2, Stopped = 3, Failed = 4 }
public enum OwnerKind { Channel = 1, Node = 2 }
public enum MessageKind { Send = 1, Request = 2 }
public enum JobQueueProfile { Compact = 0, LowLatency = 1, Balanced = 2, Throughput = 3 }

/// <summary>zlink_host_set_option / get_option numbers (framework.h).</summary>
public enum HostOption
{
    DefaultRequestTimeout = 1, DefaultSendTimeout = 2, ShutdownTimeout = 3, AdmissionWaiters = 4,
    MaxQueuedJobs = 5, HandlerThreads = 6, JobQueueProfile = 7, PausePercent = 8, ResumePercent = 9,
    EffectiveProcessors = 10, CoreHwmProfile = 11, CoreBudgetBytes = 12, CoreMemoryLimitBytes = 13,
}

/// <summary>zlink_channel_set_option / zlink_mesh_set_option numbers.</summary>
public enum NodeOption { SendTimeout = 1, RequestTimeout = 2, SndHwm = 3, RcvHwm = 4 }

public sealed record HostStatus(HostState State, bool IsReady, bool AcceptingWork, ulong RequestsInflight,
    ulong OnewayWaiting, ulong AdmissionWaitersMax, ulong DispatcherInUse, ulong DispatcherCapacity,
    ulong TurnsRunning, ulong TurnsQueued, ulong MaxQueuedJobs, ulong PermitsInUse);

public sealed record HostCapacity(JobQueueProfile Profile, ulong ManualMax, uint PausePercent, uint ResumePercent,
    ulong EffectiveProcessors, ulong EffectiveMax, ulong PauseCount, ulong ResumeCount,
    ulong ReservedSupplyPermits, ulong QueuedJobs, ulong PermitsInUse, ulong PeakPermitsInUse,
    bool Paused, long CurrentPauseNs, long CumulativePauseNs, ulong TransitionsPaused,
    ulong TransitionsRunning, ulong CapacityWaiters, ulong CapacityWaits, long CapacityWaitNs,
    ulong FlowStateConfigFailures);

public sealed record OwnerStatus(bool Busy, ulong AcceptedSeq, ulong QueuedRecords, ulong QueuedBytes,
    ulong RunningRecords, ulong RunningBytes, ulong Handled);

internal sealed class HandlerEntry
{
    internal readonly Host Host;
    internal readonly Func<Turn, ValueTask> Fn;
    internal HandlerEntry(Host host, Func<Turn, ValueTask> fn) { Host = host; Fn = fn; }
}

/// <summary>A framework host (zlink_host_t).</summary>
public sealed unsafe class Host : IDisposable, IAsyncDisposable
{
    internal readonly HostHandle Handle;
    private readonly List<GCHandle> _handlers = new();
    public string Name { get; }

    public Host(string name)
    {
        NativeLibraryLoader.EnsureLoaded();
        int r;
        nint h = Native.zlink_host_new(name, &r);
        if (h == 0) throw Errors.FromFramework(r, "zlink_host_new")!;
        Handle = new HostHandle(h);
        Name = name;
    }

    private nint H => Handle.IsClosed ? throw new ObjectDisposedException(nameof(Host)) : Handle.DangerousGetHandle();

    public Host SetOption(HostOption option, long value)
    {
        Errors.Check(Native.zlink_host_set_option(H, (int)option, value), "zlink_host_set_option " + option);
        return this;
    }

    public long GetOption(HostOption option)
    {
        long v;
        Errors.Check(Native.zlink_host_get_option(H, (int)option, &v), "zlink_host_get_option " + option);
        return v;
    }

    public Host SetOption(HostOption option, TimeSpan value) => SetOption(option, Durations.Ns(value));

    public Host AddCsServer(string channel, string endpoint)
    {
        Errors.Check(Native.zlink_host_add_cs_server(H, channel, endpoint), "zlink_host_add_cs_server");
        return this;
    }

    public Host AddCsClient(string channel, string endpoint)
    {
        Errors.Check(Native.zlink_host_add_cs_client(H, channel, endpoint), "zlink_host_add_cs_client");
        return this;
    }

    public Host SetChannelOption(string channel, NodeOption option, long value)
    {
        Errors.Check(Native.zlink_channel_set_option(H, channel, (int)option, value), "zlink_channel_set_option");
        return this;
    }

    public long GetChannelOption(string channel, NodeOption option)
    {
        long v;
        Errors.Check(Native.zlink_channel_get_option(H, channel, (int)option, &v), "zlink_channel_get_option");
        return v;
    }

    public Host AddMeshNode(string mesh, ReadOnlySpan<byte> routingId, string? listenEndpoint)
    {
        fixed (byte* p = routingId)
            Errors.Check(Native.zlink_host_add_mesh_node(H, mesh, p, (nuint)routingId.Length, listenEndpoint),
                         "zlink_host_add_mesh_node");
        return this;
    }

    public Host AddMeshNode(string mesh, string routingId, string? listenEndpoint) =>
        AddMeshNode(mesh, Encoding.UTF8.GetBytes(routingId), listenEndpoint);

    public Host MeshConnect(string mesh, string endpoint, ReadOnlySpan<byte> peerRoutingId)
    {
        fixed (byte* p = peerRoutingId)
            Errors.Check(Native.zlink_mesh_connect(H, mesh, endpoint, p, (nuint)peerRoutingId.Length), "zlink_mesh_connect");
        return this;
    }

    public Host MeshConnect(string mesh, string endpoint, string peerRoutingId) =>
        MeshConnect(mesh, endpoint, Encoding.UTF8.GetBytes(peerRoutingId));

    public Host SetMeshOption(string mesh, NodeOption option, long value)
    {
        Errors.Check(Native.zlink_mesh_set_option(H, mesh, (int)option, value), "zlink_mesh_set_option");
        return this;
    }

    public long GetMeshOption(string mesh, NodeOption option)
    {
        long v;
        Errors.Check(Native.zlink_mesh_get_option(H, mesh, (int)option, &v), "zlink_mesh_get_option");
        return v;
    }

    public Host AddMeshChannelClient(string mesh, string channel)
    {
        Errors.Check(Native.zlink_mesh_add_channel_client(H, mesh, channel), "zlink_mesh_add_channel_client");
        return this;
    }

    public Host AddMeshChannelServer(string mesh, string channel, int weight = 100)
    {
        Errors.Check(Native.zlink_mesh_add_channel_server(H, mesh, channel, weight), "zlink_mesh_add_channel_server");
        return this;
    }

    public void SetMeshWeight(string mesh, string channel, int weight) =>
        Errors.Check(Native.zlink_mesh_set_weight(H, mesh, channel, weight), "zlink_mesh_set_weight");

    /// <summary>The endpoint a CS server channel or a mesh node listens on.</summary>
    public string Endpoint(string name)
    {
        byte* buf = stackalloc byte[1024];
        Errors.Check(Native.zlink_host_endpoint(H, name, buf, 1024), "zlink_host_endpoint");
        return Native.Str(buf) ?? "";
    }

    public int MeshReadyPeers(string mesh)
    {
        int r = 0;
        int n = Native.zlink_mesh_ready_peers(H, mesh, &r);
        if (n < 0) throw Errors.FromFramework(r, "zlink_mesh_ready_peers")!;
        return n;
    }

    /// <summary>Registers an async handler: the turn stays open until the task completes.</summary>
    public Host AddHandler(OwnerKind owner, string ownerName, MessageKind kind, string packet, Func<Turn, ValueTask> handler)
    {
        var gch = GCHandle.Alloc(new HandlerEntry(this, handler));
        int r = Native.zlink_host_add_handler(H, (int)owner, ownerName, (int)kind, packet, &Turn.Entry, GCHandle.ToIntPtr(gch));
        if (r != 0)
        {
            gch.Free();
            Errors.Check(r, "zlink_host_add_handler");
        }
        lock (_handlers) _handlers.Add(gch);
        return this;
    }

    /// <summary>Registers a Task-returning handler (as the ValueTask form).</summary>
    public Host AddTaskHandler(OwnerKind owner, string ownerName, MessageKind kind, string packet, Func<Turn, Task> handler) =>
        AddHandler(owner, ownerName, kind, packet, t => new ValueTask(handler(t)));

    /// <summary>Registers a synchronous handler: the turn ends when it returns.</summary>
    public Host AddHandler(OwnerKind owner, string ownerName, MessageKind kind, string packet, Action<Turn> handler) =>
        AddHandler(owner, ownerName, kind, packet, t => { handler(t); return default(ValueTask); });

    public void Start() => Errors.Check(Native.zlink_host_start(H), "zlink_host_start");

    public ValueTask StartAsync()
    {
        try { Start(); return default; }
        catch (Exception e) { return ValueTask.FromException(e); }
    }

    /// <summary>Graceful shutdown (blocks; INVALID_OPERATION in a runtime context).
    /// deadline null: the SHUTDOWN_TIMEOUT option.</summary>
    public void Shutdown(TimeSpan? deadline = null)
    {
        // From a call's continuation: its held dispatcher slot would make the
        // shutdown wait for this very thread (Call.cs).
        Operation.ReleaseHeldSlot();
        Errors.Check(Native.zlink_host_shutdown(H, deadline is TimeSpan d ? Durations.Ns(d) : 0), "zlink_host_shutdown");
    }

    public ValueTask ShutdownAsync(TimeSpan? deadline = null)
    {
        if (Native.zlink_in_runtime_context() != 0)
        {
            try { Shutdown(deadline); return default; }
            catch (Exception e) { return ValueTask.FromException(e); }
        }
        return new ValueTask(Task.Factory.StartNew(() => Shutdown(deadline), CancellationToken.None,
            TaskCreationOptions.LongRunning, TaskScheduler.Default));
    }

    public HostState State => (HostState)Native.zlink_host_state(H);

    public HostStatus Status
    {
        get
        {
            NHostStatus s = default;
            s.struct_size = (uint)sizeof(NHostStatus);
            Errors.Check(Native.zlink_host_status(H, &s), "zlink_host_status");
            return new HostStatus((HostState)s.state, s.is_ready != 0, s.accepting_work != 0, s.requests_inflight,
                s.oneway_waiting, s.admission_waiters_max, s.dispatcher_in_use, s.dispatcher_capacity,
                s.turns_running, s.turns_queued, s.max_queued_jobs, s.permits_in_use);
        }
    }

    public HostCapacity Capacity
    {
        get
        {
            NHostCapacity c = default;
            c.struct_size = (uint)sizeof(NHostCapacity);
            Errors.Check(Native.zlink_host_capacity(H, &c), "zlink_host_capacity");
            return new HostCapacity((JobQueueProfile)c.profile, c.manual_max, c.pause_percent, c.resume_percent,
                c.effective_processors, c.effective_max, c.pause_count, c.resume_count, c.reserved_supply_permits,
                c.queued_jobs, c.permits_in_use, c.peak_permits_in_use, c.pressure_state != 0, c.current_pause_ns,
                c.cumulative_pause_ns, c.transitions_paused, c.transitions_running, c.capacity_waiters,
                c.capacity_waits, c.capacity_wait_ns, c.flow_state_config_failures);
        }
    }

    public OwnerStatus OwnerStatus(OwnerKind owner, string ownerName)
    {
        NOwnerStatus s = default;
        s.struct_size = (uint)sizeof(NOwnerStatus);
        Errors.Check(Native.zlink_host_owner_status(H, (int)owner, ownerName, &s), "zlink_host_owner_status");
        return new OwnerStatus(s.busy != 0, s.accepted_seq, s.queued_records, s.queued_bytes, s.running_records,
            s.running_bytes, s.handled);
    }

    public void ResetMetrics() => Errors.Check(Native.zlink_host_reset_metrics(H), "zlink_host_reset_metrics");

    public long Metric(string name, string labels = "")
    {
        long v;
        Errors.Check(Native.zlink_host_metric(H, name, labels, &v), "zlink_host_metric " + name);
        return v;
    }

    // ---- call builders
    public OneWayCall SendToChannel(string channel)
    {
        int r;
        nint c = Native.zlink_call_send_to_channel(H, channel, &r);
        return c == 0 ? throw Errors.FromFramework(r, "zlink_call_send_to_channel")! : new OneWayCall(new CallHandle(c));
    }

    public RequestCall RequestToChannel(string channel)
    {
        int r;
        nint c = Native.zlink_call_request_to_channel(H, channel, &r);
        return c == 0 ? throw Errors.FromFramework(r, "zlink_call_request_to_channel")! : new RequestCall(new CallHandle(c));
    }

    public OneWayCall SendToNode(string mesh, ReadOnlySpan<byte> routingId)
    {
        int r;
        nint c;
        fixed (byte* p = routingId) c = Native.zlink_call_send_to_node(H, mesh, p, (nuint)routingId.Length, &r);
        return c == 0 ? throw Errors.FromFramework(r, "zlink_call_send_to_node")! : new OneWayCall(new CallHandle(c));
    }

    public OneWayCall SendToNode(string mesh, string routingId) => SendToNode(mesh, Encoding.UTF8.GetBytes(routingId));

    public RequestCall RequestToNode(string mesh, ReadOnlySpan<byte> routingId)
    {
        int r;
        nint c;
        fixed (byte* p = routingId) c = Native.zlink_call_request_to_node(H, mesh, p, (nuint)routingId.Length, &r);
        return c == 0 ? throw Errors.FromFramework(r, "zlink_call_request_to_node")! : new RequestCall(new CallHandle(c));
    }

    public RequestCall RequestToNode(string mesh, string routingId) => RequestToNode(mesh, Encoding.UTF8.GetBytes(routingId));

    // ---- lifetime
    /// <summary>Shuts a serving host down (default deadline) and destroys it;
    /// the handlers' GCHandles are freed once zlink_host_destroy returned OK.
    /// A host with handlers must be disposed (they root it).</summary>
    public void Dispose()
    {
        if (Handle.IsClosed) return;
        var st = State;
        if (st == HostState.Serving || st == HostState.Draining) Shutdown();
        int r = Native.zlink_host_destroy(Handle.DangerousGetHandle());
        Errors.Check(r, "zlink_host_destroy");
        Handle.SetHandleAsInvalid();
        lock (_handlers)
        {
            foreach (var g in _handlers) g.Free();
            _handlers.Clear();
        }
    }

    public ValueTask DisposeAsync()
    {
        if (Handle.IsClosed) return default;
        var st = State;
        if (st != HostState.Serving && st != HostState.Draining) { Dispose(); return default; }
        return Durations.Then(ShutdownAsync(), Dispose);
    }
}

/// <summary>TimeSpan to the ABI's int64 nanoseconds (saturating; the C runtime
/// judges the value).</summary>
internal static class Durations
{
    internal static async ValueTask Then(ValueTask first, Action next)
    {
        await first.ConfigureAwait(false);
        next();
    }

    internal static long Ns(TimeSpan t)
    {
        long ticks = t.Ticks;
        if (ticks > long.MaxValue / 100) return long.MaxValue;
        if (ticks < long.MinValue / 100) return long.MinValue;
        return ticks * 100;
    }
}
