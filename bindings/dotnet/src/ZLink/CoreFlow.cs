// CoreFlow.cs — the Core's flow surface the raw-peer cases read: the
// synchronous ROUTER reply (zlink_reply), a socket's receive flow state
// (zlink_socket_set_receive_flow_state) and the socket monitor
// (zlink_socket_monitor_open / _recv, zlink_monitor_status / _close).
// Thin as the rest of Core.cs: each call passes its arguments to the C
// function and returns the C result value (compare it with Results.*);
// nothing here waits, retries or keeps a state of its own.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace ZLink;

internal static unsafe partial class Native
{
    [LibraryImport(L)] internal static partial int zlink_reply(nint router, NRoutingId* srcRid, ulong token, NMsg* parts, nuint n);
    [LibraryImport(L)] internal static partial int zlink_socket_set_receive_flow_state(nint socket, int state);
    [LibraryImport(L)] internal static partial nint zlink_socket_monitor_open(nint socket, NMonitorConfig* cfg);
    [LibraryImport(L)] internal static partial int zlink_socket_monitor_recv(nint monitor, NMonitorEvent* ev, int flags);
    [LibraryImport(L)] internal static partial int zlink_monitor_status(nint monitor, NMonitorStatus* st);
    [LibraryImport(L)] internal static partial int zlink_monitor_close(nint* monitor);
}

[StructLayout(LayoutKind.Sequential)]
internal struct NMonitorConfig
{
    public uint events;
    public uint reserved;
    public ulong monitor_hwm_bytes;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct NMonitorEvent
{
    public ulong @event;
    public ulong value;
    public NRoutingId rid;
    public fixed byte local_addr[256];
    public fixed byte remote_addr[256];
    public ulong connection_id;
    public uint transport_lane;
    public uint flags;
}

[StructLayout(LayoutKind.Sequential)]
internal struct NMonitorStatus
{
    public uint abi_version, struct_size, source_kind, state_flags, detail_flags, reserved;
    public ulong snd_pending_msgs, snd_pending_bytes, rcv_pending_msgs, rcv_pending_bytes;
    public uint auto_hwm_enabled, auto_hwm_profile;
    public ulong auto_hwm_planned_sndhwm_bytes, auto_hwm_planned_rcvhwm_bytes, auto_hwm_last_recalc_ms;
    public uint auto_hwm_last_recalc_reason, auto_hwm_send_blocked_ratio_ppm;
    public ulong auto_hwm_deferred_sndhwm_bytes, auto_hwm_deferred_rcvhwm_bytes;
    public uint auto_hwm_deferred_sndhwm_valid, auto_hwm_deferred_rcvhwm_valid;
    public ulong auto_hwm_applied_sndhwm_bytes, auto_hwm_applied_rcvhwm_bytes;
    public int auto_hwm_effective_sndbuf, auto_hwm_effective_rcvbuf;
    public ulong snd_bytes_in_flight, rcv_bytes_in_flight, minimum_core_message_charge_bytes;
    public ulong oversize_message_admission_count, oversize_message_admission_max_bytes;
    public ulong flow_paused_connections, flow_pause_applied_total, flow_resume_applied_total, flow_state_stale_total, flow_pause_duration_ms;
}

/// <summary>A snapshot of a monitored socket (zlink_monitor_status_t): the state and detail
/// bits, the pending counts (valid with DetailSndPending / DetailRcvPending) and the flow-state
/// view (DetailFlowState: how this socket's peers' receive flow looks from here).</summary>
public readonly record struct MonitorStatus(uint StateFlags, uint DetailFlags,
    ulong SndPendingMsgs, ulong SndPendingBytes, ulong RcvPendingMsgs, ulong RcvPendingBytes,
    ulong FlowPausedConnections, ulong FlowPauseAppliedTotal, ulong FlowResumeAppliedTotal, ulong FlowStateStaleTotal,
    ulong FlowPauseDurationMs)
{
    /// <summary>ZLINK_MONITOR_STATUS_DETAIL_* bits of DetailFlags.</summary>
    public const uint DetailSndPending = 1u << 1, DetailRcvPending = 1u << 2, DetailFlowState = 1u << 5;
    /// <summary>ZLINK_MONITOR_STATE_* bits of StateFlags.</summary>
    public const uint StateReady = 1u << 0, StateBoundReady = 1u << 1, StateClosed = 1u << 3;

    internal MonitorStatus(in NMonitorStatus s) : this(s.state_flags, s.detail_flags, s.snd_pending_msgs, s.snd_pending_bytes,
        s.rcv_pending_msgs, s.rcv_pending_bytes, s.flow_paused_connections, s.flow_pause_applied_total,
        s.flow_resume_applied_total, s.flow_state_stale_total, s.flow_pause_duration_ms) { }
}

/// <summary>One monitor event (zlink_monitor_event_t), copied.</summary>
public readonly record struct MonitorEvent(ulong Event, ulong Value, byte[] PeerRid, string LocalAddress,
    string RemoteAddress, ulong ConnectionId, uint TransportLane, uint Flags);

/// <summary>An open monitor's handle; ReleaseHandle is zlink_monitor_close.</summary>
internal sealed unsafe class MonitorHandle : SafeHandle
{
    public MonitorHandle(nint h) : base(0, true) { SetHandle(h); }
    public override bool IsInvalid => handle == 0;
    protected override bool ReleaseHandle() { nint m = handle; return Native.zlink_monitor_close(&m) == 0; }
}

/// <summary>The monitor of one socket (zlink_socket_monitor_open; Dispose is
/// zlink_monitor_close). Receive and close must not run concurrently (the C
/// rule: single consumer; the caller serializes).</summary>
public sealed unsafe class SocketMonitor : IDisposable
{
    private readonly MonitorHandle _h;
    private SocketMonitor(nint h) { _h = new MonitorHandle(h); }

    /// <summary>ZLINK_EVENT_ALL.</summary>
    public const uint AllEvents = 0x7FFFFu;

    internal static SocketMonitor Open(Socket s, uint events, ulong hwmBytes)
    {
        NMonitorConfig cfg = new() { events = events, reserved = 0, monitor_hwm_bytes = hwmBytes };
        nint h;
        using (var u = new HandleUse(s.Handle)) h = Native.zlink_socket_monitor_open(u.Value, &cfg);
        if (h == 0) throw Errors.Core(-1, "zlink_socket_monitor_open");
        return new SocketMonitor(h);
    }

    /// <summary>zlink_monitor_status: the config result and the snapshot.</summary>
    public int TryStatus(out MonitorStatus status)
    {
        NMonitorStatus st = default;
        st.abi_version = 4;
        st.struct_size = (uint)sizeof(NMonitorStatus);
        int r;
        using (var u = new HandleUse(_h)) r = Native.zlink_monitor_status(u.Value, &st);
        status = r == 0 ? new MonitorStatus(st) : default;
        return r;
    }

    /// <summary>The snapshot; a failed call throws ZLinkCoreException.</summary>
    public MonitorStatus Status
    {
        get { int r = TryStatus(out var s); return r == 0 ? s : throw Errors.Core(r, "zlink_monitor_status"); }
    }

    /// <summary>zlink_socket_monitor_recv: the receive result and, on OK, the event.
    /// NONE waits up to the socket's RCVTIMEO.</summary>
    public int TryRecv(out MonitorEvent ev, bool dontWait = false)
    {
        NMonitorEvent e = default;
        int r;
        using (var u = new HandleUse(_h)) r = Native.zlink_socket_monitor_recv(u.Value, &e, dontWait ? 1 : 0);
        ev = r != 0 ? default : new MonitorEvent(e.@event, e.value, new ReadOnlySpan<byte>(e.rid.data, e.rid.size).ToArray(),
            Native.Str(e.local_addr) ?? "", Native.Str(e.remote_addr) ?? "", e.connection_id, e.transport_lane, e.flags);
        return r;
    }

    /// <summary>zlink_monitor_close (once; later calls do nothing; a use after it throws
    /// ObjectDisposedException).</summary>
    public void Dispose() => _h.Dispose();
}

/// <summary>The flow calls on a Core socket.</summary>
public static unsafe class SocketFlow
{
    /// <summary>zlink_reply (ROUTER): answers the request token from srcRid, waiting for
    /// room up to SNDTIMEO; a failure keeps the token. The C side consumes the parts.</summary>
    public static int TryReplyWait(this Socket s, ReadOnlySpan<byte> srcRid, ulong token, IReadOnlyList<byte[]> parts)
    {
        NRoutingId id = default;
        id.size = checked((byte)srcRid.Length);
        srcRid.CopyTo(new Span<byte>(id.data, 255));
        NMsg* msgs = stackalloc NMsg[Math.Max(parts.Count, 1)];
        Fill(msgs, parts);
        using var u = new HandleUse(s.Handle);
        return Native.zlink_reply(u.Value, &id, token, msgs, (nuint)parts.Count);
    }

    internal static void Fill(NMsg* msgs, IReadOnlyList<byte[]> parts)
    {
        for (int i = 0; i < parts.Count; i++)
        {
            int rc = Native.zlink_msg_init_size(&msgs[i], (nuint)parts[i].Length);
            if (rc != 0) { Native.zlink_multipart_close(msgs, (nuint)i); throw Errors.Core(rc, "zlink_msg_init_size"); }
            parts[i].AsSpan().CopyTo(new Span<byte>(Native.zlink_msg_data(&msgs[i]), parts[i].Length));
        }
    }

    /// <summary>zlink_setsockopt with a byte-string value (e.g. ZLINK_CONNECT_ROUTING_ID).</summary>
    public static void SetOption(this Socket s, int option, ReadOnlySpan<byte> value)
    {
        using var u = new HandleUse(s.Handle);
        fixed (byte* p = value) Errors.CheckCore(Native.zlink_setsockopt(u.Value, option, p, (nuint)value.Length), "zlink_setsockopt");
    }

    /// <summary>zlink_socket_set_receive_flow_state (DEALER, ROUTER): asks every peer to
    /// stop (paused) or resume sending to s; the config result.</summary>
    public static int TrySetReceiveFlow(this Socket s, bool paused)
    {
        using var u = new HandleUse(s.Handle);
        return Native.zlink_socket_set_receive_flow_state(u.Value, paused ? 1 : 0);
    }

    /// <summary>zlink_socket_monitor_open with the ZLINK_EVENT_* bits to queue (0: none, a
    /// status-only view) and the queue budget (0: the default).</summary>
    public static SocketMonitor OpenMonitor(this Socket s, uint events = 0, ulong hwmBytes = 0) => SocketMonitor.Open(s, events, hwmBytes);
}

/// <summary>The Core submits with a wait token, for the forms Core.cs gives without one.</summary>
public static unsafe class SocketSubmit
{
    /// <summary>zlink_send_rid (ROUTER) with a user context and the wait token a DONTWAIT
    /// send refused for room (BACKPRESSURED) returns. The parts are copied.</summary>
    public static int TrySendTo(this Socket s, ReadOnlySpan<byte> rid, IReadOnlyList<byte[]> parts, bool dontWait,
                                nint userContext, out ulong completionId)
    {
        NRoutingId id = default;
        id.size = checked((byte)rid.Length);
        rid.CopyTo(new Span<byte>(id.data, 255));
        NMsg* msgs = stackalloc NMsg[Math.Max(parts.Count, 1)];
        SocketFlow.Fill(msgs, parts);
        ulong cid = 0;
        int r;
        using (var u = new HandleUse(s.Handle)) r = Native.zlink_send_rid(u.Value, &id, msgs, (nuint)parts.Count, dontWait ? 1 : 0, userContext, &cid);
        if (r != 0) Native.zlink_multipart_close(msgs, (nuint)parts.Count);
        completionId = cid;
        return r;
    }
}
