// Core.cs — the Core surface: context, sockets, send/receive, poller and
// timers, each class owning its handle through a SafeHandle (Handles.cs).
// A failed Core call throws ZLinkCoreException with its family's constant
// name (zlink_result_name) and zlink_errno(); the Try* forms return the
// result value instead, for callers that branch on it (compare it with the
// generated Results.* constants).
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Text;

namespace ZLink;

public enum SocketType { Pair = 0x1001, Pub = 0x1002, Sub = 0x1003, Dealer = 0x1004, Router = 0x1005, Stream = 0x1008 }

[Flags]
public enum PollEvents : short { None = 0, In = 1, Out = 2, Err = 4, Pri = 8, Completion = 32, Route = 64 }

public enum PollerSourceKind { Socket = 1, Fd = 2, Timer = 3 }

/// <summary>One event of a poller wait.</summary>
/// <summary>zlink_completion_kind_t.</summary>
public enum CompletionKind { Request = 2, Writable = 3 }

/// <summary>One completion-queue record (zlink_completion_t), copied: the reply parts are
/// .NET arrays and the native record is already closed. PeerRid is empty when the record
/// has none. SendResult: 0 ADMITTED, 202 TERMINAL (with SendTerminalErrno); RequestResult
/// is a zlink_request_result_t (Results.Request).</summary>
public sealed record Completion(CompletionKind Kind, ulong Id, nint UserContext, byte[] PeerRid,
    int SendResult, int SendTerminalErrno, int RequestResult, byte[][] ReplyParts);

public readonly record struct PollerEvent(PollerSourceKind Kind, nint Socket, int Fd, nint Timer, nint UserData, PollEvents Events);

/// <summary>A Core context (zlink_ctx_new / zlink_ctx_term on Dispose).</summary>
public sealed class Context : IDisposable
{
    internal readonly ContextHandle Handle;
    public Context()
    {
        NativeLibraryLoader.EnsureLoaded();
        nint h = Native.zlink_ctx_new();
        if (h == 0) throw Errors.Core(-1, "zlink_ctx_new");
        Handle = new ContextHandle(h);
    }
    /// <summary>zlink_ctx_shutdown: blocking calls on its sockets return ETERM.</summary>
    public void Shutdown() { using var u = new HandleUse(Handle); Errors.CheckCore(Native.zlink_ctx_shutdown(u.Value), "zlink_ctx_shutdown"); }
    public Socket Socket(SocketType type) => new(this, type);
    /// <summary>zlink_ctx_term: blocks until every socket is closed.</summary>
    public void Dispose() => Handle.Dispose();
}

/// <summary>A Core socket (zlink_socket / zlink_close on Dispose).</summary>
public sealed unsafe class Socket : IDisposable
{
    internal readonly SocketHandle Handle;
    public SocketType Type { get; }
    public Socket(Context ctx, SocketType type)
    {
        using var u = new HandleUse(ctx.Handle);
        nint h = Native.zlink_socket(u.Value, (int)type);
        if (h == 0) throw Errors.Core(-1, "zlink_socket");
        Handle = new SocketHandle(h);
        Type = type;
    }

    private Socket(SocketHandle h, SocketType type) { Handle = h; Type = type; }

    /// <summary>Wraps a raw zlink socket handle value (interop, like SafeHandle's
    /// IntPtr constructors): nothing is checked here, every call passes the value to
    /// the C function as it is, so NULL, a closed or a forged value gets the C
    /// runtime's answer (INVALID_HANDLE ...). ownsHandle: Dispose calls zlink_close.
    /// Type is what the caller says (default 0: unknown).</summary>
    public static Socket FromHandle(nint handle, bool ownsHandle = false, SocketType type = 0)
    {
        NativeLibraryLoader.EnsureLoaded();
        return new Socket(new SocketHandle(handle, ownsHandle), type);
    }

    /// <summary>The native handle (for poller events' Socket field).</summary>
    public nint NativeHandle => Handle.DangerousGetHandle();

    public void Bind(string endpoint) { using var u = new HandleUse(Handle); Errors.CheckCore(Native.zlink_bind(u.Value, endpoint), "zlink_bind " + endpoint); }
    public void Connect(string endpoint) { using var u = new HandleUse(Handle); Errors.CheckCore(Native.zlink_connect(u.Value, endpoint), "zlink_connect " + endpoint); }

    public void SetOption(int option, int value)
    {
        using var u = new HandleUse(Handle);
        Errors.CheckCore(Native.zlink_setsockopt(u.Value, option, &value, sizeof(int)), "zlink_setsockopt");
    }

    public void SetOption(int option, long value)
    {
        using var u = new HandleUse(Handle);
        Errors.CheckCore(Native.zlink_setsockopt(u.Value, option, &value, sizeof(long)), "zlink_setsockopt");
    }

    public int GetOptionInt(int option)
    {
        using var u = new HandleUse(Handle);
        int v; nuint size = sizeof(int);
        Errors.CheckCore(Native.zlink_getsockopt(u.Value, option, &v, &size), "zlink_getsockopt");
        return v;
    }

    public string GetOptionString(int option)
    {
        using var u = new HandleUse(Handle);
        byte* buf = stackalloc byte[512]; nuint size = 512;
        Errors.CheckCore(Native.zlink_getsockopt(u.Value, option, buf, &size), "zlink_getsockopt");
        return Native.Str(buf) ?? "";
    }

    /// <summary>ZLINK_LAST_ENDPOINT.</summary>
    public string LastEndpoint => GetOptionString(0x3014);

    public void SetRoutingId(ReadOnlySpan<byte> id)
    {
        using var u = new HandleUse(Handle);
        fixed (byte* p = id) Errors.CheckCore(Native.zlink_set_routing_id(u.Value, p, (nuint)id.Length), "zlink_set_routing_id");
    }

    private static void Fill(NMsg* msgs, IReadOnlyList<byte[]> parts)
    {
        for (int i = 0; i < parts.Count; i++)
        {
            int r = Native.zlink_msg_init_size(&msgs[i], (nuint)parts[i].Length);
            if (r != 0) { Native.zlink_multipart_close(msgs, (nuint)i); throw Errors.Core(r, "zlink_msg_init_size"); }
            parts[i].AsSpan().CopyTo(new Span<byte>(Native.zlink_msg_data(&msgs[i]), parts[i].Length));
        }
    }

    /// <summary>zlink_send (PAIR, DEALER): the submit result; the parts are copied.</summary>
    public int TrySend(IReadOnlyList<byte[]> parts, bool dontWait = false)
    {
        NMsg* msgs = stackalloc NMsg[Math.Max(parts.Count, 1)];
        Fill(msgs, parts);
        using var u = new HandleUse(Handle);
        int r = Native.zlink_send(u.Value, msgs, (nuint)parts.Count, dontWait ? 1 : 0, 0, null);
        if (r != 0) Native.zlink_multipart_close(msgs, (nuint)parts.Count);
        return r;
    }

    public void Send(params byte[][] parts) { int r = TrySend(parts); if (r != 0) throw Errors.Core(r, "zlink_send"); }

    /// <summary>zlink_send with a user context and the wait token a DONTWAIT send refused
    /// for room (BACKPRESSURED) returns: one WRITABLE record with that id follows.</summary>
    public int TrySend(IReadOnlyList<byte[]> parts, bool dontWait, nint userContext, out ulong completionId)
    {
        NMsg* msgs = stackalloc NMsg[Math.Max(parts.Count, 1)];
        Fill(msgs, parts);
        ulong id = 0;
        int r;
        using (var u = new HandleUse(Handle)) r = Native.zlink_send(u.Value, msgs, (nuint)parts.Count, dontWait ? 1 : 0, userContext, &id);
        if (r != 0) Native.zlink_multipart_close(msgs, (nuint)parts.Count);
        completionId = id;
        return r;
    }

    private static void SetRid(NRoutingId* id, ReadOnlySpan<byte> rid)
    {
        id->size = checked((byte)rid.Length);
        rid.CopyTo(new Span<byte>(id->data, 255));
    }

    /// <summary>zlink_request: DEALER (rid empty: NULL) or ROUTER (the target's rid). OK
    /// gives a nonzero completionId whose REQUEST record ends the request; timeoutMs 0 is
    /// the socket's REQUEST_TIMEOUT. The parts are copied.</summary>
    public int TryRequest(ReadOnlySpan<byte> rid, IReadOnlyList<byte[]> parts, bool dontWait, uint timeoutMs,
                          nint userContext, out ulong completionId)
    {
        NRoutingId id = default;
        if (!rid.IsEmpty) SetRid(&id, rid);
        NMsg* msgs = stackalloc NMsg[Math.Max(parts.Count, 1)];
        Fill(msgs, parts);
        ulong cid = 0;
        int r;
        using (var u = new HandleUse(Handle))
            r = Native.zlink_request(u.Value, rid.IsEmpty ? null : &id, msgs, (nuint)parts.Count, dontWait ? 1 : 0, timeoutMs, userContext, &cid);
        if (r != 0) Native.zlink_multipart_close(msgs, (nuint)parts.Count);
        completionId = cid;
        return r;
    }

    /// <summary>zlink_reply_submit (ROUTER): answers the request token from srcRid, with
    /// error 0 (a reply) or a positive errno (an error reply). DONTWAIT refused for room:
    /// BACKPRESSURED, the token kept, a wait token in completionId. The C side consumes the
    /// parts in every case.</summary>
    public int TryReply(ReadOnlySpan<byte> srcRid, ulong token, int error, IReadOnlyList<byte[]> parts,
                        bool dontWait, nint userContext, out ulong completionId)
    {
        NRoutingId id = default;
        SetRid(&id, srcRid);
        NMsg* msgs = stackalloc NMsg[Math.Max(parts.Count, 1)];
        Fill(msgs, parts);
        ulong cid = 0;
        int r;
        using (var u = new HandleUse(Handle))
            r = Native.zlink_reply_submit(u.Value, &id, token, error, parts.Count == 0 ? null : msgs, (nuint)parts.Count, dontWait ? 1 : 0, userContext, &cid);
        completionId = cid;
        return r;
    }

    /// <summary>zlink_completion_recv: the receive result and, on OK, the record (copied;
    /// the native record is closed here). NONE waits up to RCVTIMEO.</summary>
    public int TryRecvCompletion(out Completion? record, bool dontWait = false)
    {
        NCompletion c = default;
        c.struct_size = (uint)sizeof(NCompletion);
        int r;
        using (var u = new HandleUse(Handle)) r = Native.zlink_completion_recv(u.Value, &c, dontWait ? 1 : 0);
        record = null;
        if (r != 0) return r;
        try
        {
            var parts = new byte[(int)c.reply_part_count][];
            for (int i = 0; i < parts.Length; i++)
                parts[i] = new ReadOnlySpan<byte>(Native.zlink_msg_data(&c.reply_parts[i]), (int)Native.zlink_msg_size(&c.reply_parts[i])).ToArray();
            record = new Completion((CompletionKind)c.kind, c.completion_id, c.user_context,
                new ReadOnlySpan<byte>(c.peer_rid.data, c.peer_rid.size).ToArray(),
                c.send_result, c.send_terminal_errno, c.request_result, parts);
        }
        finally { Native.zlink_completion_close(&c); }
        return r;
    }

    /// <summary>zlink_send_rid (ROUTER, STREAM).</summary>
    public int TrySendTo(ReadOnlySpan<byte> rid, IReadOnlyList<byte[]> parts, bool dontWait = false)
    {
        NRoutingId id = default;
        id.size = checked((byte)rid.Length);
        rid.CopyTo(new Span<byte>(id.data, 255));
        NMsg* msgs = stackalloc NMsg[Math.Max(parts.Count, 1)];
        Fill(msgs, parts);
        using var u = new HandleUse(Handle);
        int r = Native.zlink_send_rid(u.Value, &id, msgs, (nuint)parts.Count, dontWait ? 1 : 0, 0, null);
        if (r != 0) Native.zlink_multipart_close(msgs, (nuint)parts.Count);
        return r;
    }

    private static byte[][] Take(NMsg* msgs, nuint count)
    {
        var outp = new byte[(int)count][];
        for (int i = 0; i < (int)count; i++)
            outp[i] = new ReadOnlySpan<byte>(Native.zlink_msg_data(&msgs[i]), (int)Native.zlink_msg_size(&msgs[i])).ToArray();
        Native.zlink_multipart_close(msgs, count);
        return outp;
    }

    /// <summary>zlink_recv (PAIR, DEALER, STREAM raw): the receive result and the parts.</summary>
    public int TryRecv(out byte[][] parts, bool dontWait = false)
    {
        const int Cap = 16;
        NMsg* msgs = stackalloc NMsg[Cap];
        nuint count = 0;
        int r;
        using (var u = new HandleUse(Handle)) r = Native.zlink_recv(u.Value, null, msgs, Cap, &count, dontWait ? 1 : 0);
        parts = r == 0 ? Take(msgs, count) : Array.Empty<byte[]>();
        return r;
    }

    public byte[][] Recv(bool dontWait = false) { int r = TryRecv(out var p, dontWait); return r == 0 ? p : throw Errors.Core(r, "zlink_recv"); }

    /// <summary>zlink_router_recv: result, sender id, reply token (0 for DATA) and parts.</summary>
    public int TryRouterRecv(out byte[] rid, out ulong token, out byte[][] parts, bool dontWait = false)
    {
        const int Cap = 16;
        NMsg* msgs = stackalloc NMsg[Cap];
        nuint count = 0;
        NRoutingId* id = null;
        ulong tok = 0;
        int r;
        using (var u = new HandleUse(Handle)) r = Native.zlink_router_recv(u.Value, &id, &tok, msgs, Cap, &count, dontWait ? 1 : 0);
        token = tok;
        rid = r == 0 && id != null ? new ReadOnlySpan<byte>(id->data, id->size).ToArray() : Array.Empty<byte>();
        parts = r == 0 ? Take(msgs, count) : Array.Empty<byte[]>();
        return r;
    }

    /// <summary>zlink_close (the close gate may refuse it: then throws and stays open).</summary>
    public void Dispose() => Handle.Dispose();
}

/// <summary>A Core timer (zlink_timer_*).</summary>
public sealed unsafe class Timer : IDisposable
{
    internal readonly TimerHandle Handle;
    public Timer()
    {
        NativeLibraryLoader.EnsureLoaded();
        nint h = Native.zlink_timer_new();
        if (h == 0) throw Errors.Core(-1, "zlink_timer_new");
        Handle = new TimerHandle(h);
    }
    private Timer(TimerHandle h) { Handle = h; }
    /// <summary>Wraps a raw zlink timer handle value, unchecked (see Socket.FromHandle);
    /// ownsHandle: Dispose calls zlink_timer_destroy.</summary>
    public static Timer FromHandle(nint handle, bool ownsHandle = false)
    {
        NativeLibraryLoader.EnsureLoaded();
        return new(new TimerHandle(handle, ownsHandle));   // a zlink Core timer (target-typed new)
    }
    public nint NativeHandle => Handle.DangerousGetHandle();
    public void Start(TimeSpan interval, ulong repeat = 0)
    {
        using var u = new HandleUse(Handle);
        Errors.CheckCore(Native.zlink_timer_start(u.Value, (ulong)Durations.Ns(interval), repeat), "zlink_timer_start");
    }
    public void Stop() { using var u = new HandleUse(Handle); Errors.CheckCore(Native.zlink_timer_stop(u.Value), "zlink_timer_stop"); }
    /// <summary>The receive result; count the fires since the last receive.</summary>
    public int TryRecv(out ulong count, bool dontWait)
    {
        ulong c = 0;
        int r;
        using (var u = new HandleUse(Handle)) r = Native.zlink_timer_recv(u.Value, &c, dontWait ? 1 : 0);
        count = c;
        return r;
    }
    /// <summary>zlink_timer_destroy now, with its result (CLOSE_BUSY while a poller holds
    /// it: the timer then stays usable); Dispose afterwards does nothing.</summary>
    public int TryDestroy() => CoreHandles.TryDestroy(Handle, static h => { nint x = h; return Native.zlink_timer_destroy(&x); });
    public void Dispose() => Handle.Dispose();
}

internal static unsafe class CoreHandles
{
    /// <summary>Runs destroy on the raw handle; on OK the SafeHandle is marked released.
    /// A released handle's pointer is NULL (as the C destroy leaves the caller's
    /// pointer), and NULL goes to C like any value: C answers INVALID_HANDLE/EFAULT.</summary>
    internal static int TryDestroy(SafeHandle h, Func<nint, int> destroy)
    {
        nint v = h.IsClosed ? 0 : h.DangerousGetHandle();
        int r = destroy(v);
        if (r == 0 && v != 0) h.SetHandleAsInvalid();
        return r;
    }
}

/// <summary>The thread's last ZLink errno and result names (zlink_errno, zlink_result_name).</summary>
public static unsafe class ZLinkCore
{
    /// <summary>zlink_errno() of this thread: read it right after the failed call.</summary>
    public static int LastErrno => Native.zlink_errno();
    public static string LastErrnoName => Errnos.Name(Native.zlink_errno());
    public static string ResultName(int result) { NativeLibraryLoader.EnsureLoaded(); return Native.Str(Native.zlink_result_name(result)) ?? "unknown"; }
}

/// <summary>A Core poller over sockets, fds and timers (zlink_poller_*).</summary>
public sealed unsafe partial class Poller : IDisposable
{
    internal readonly PollerHandle Handle;
    public Poller()
    {
        NativeLibraryLoader.EnsureLoaded();
        nint h = Native.zlink_poller_new();
        if (h == 0) throw Errors.Core(-1, "zlink_poller_new");
        Handle = new PollerHandle(h);
    }
    private Poller(PollerHandle h) { Handle = h; }
    /// <summary>Wraps a raw zlink poller handle value, unchecked (see Socket.FromHandle);
    /// ownsHandle: Dispose calls zlink_poller_destroy.</summary>
    public static Poller FromHandle(nint handle, bool ownsHandle = false)
    {
        NativeLibraryLoader.EnsureLoaded();
        return new Poller(new PollerHandle(handle, ownsHandle));
    }
    public nint NativeHandle => Handle.DangerousGetHandle();

    private int Do(Func<nint, int> f) { using var u = new HandleUse(Handle); return f(u.Value); }

    public int TryAdd(Socket s, PollEvents events, nint userData = 0) { using var su = new HandleUse(s.Handle); nint sh = su.Value; return Do(p => Native.zlink_poller_add(p, sh, userData, (short)events)); }
    public int TryModify(Socket s, PollEvents events) { using var su = new HandleUse(s.Handle); nint sh = su.Value; return Do(p => Native.zlink_poller_modify(p, sh, (short)events)); }
    public int TryRemove(Socket s) { using var su = new HandleUse(s.Handle); nint sh = su.Value; return Do(p => Native.zlink_poller_remove(p, sh)); }
    public int TryAddFd(int fd, PollEvents events, nint userData = 0) => Do(p => Native.zlink_poller_add_fd(p, fd, userData, (short)events));
    public int TryModifyFd(int fd, PollEvents events) => Do(p => Native.zlink_poller_modify_fd(p, fd, (short)events));
    public int TryRemoveFd(int fd) => Do(p => Native.zlink_poller_remove_fd(p, fd));
    public int TryAddTimer(Timer t, nint userData = 0) { using var tu = new HandleUse(t.Handle); nint th = tu.Value; return Do(p => Native.zlink_poller_add_timer(p, th, userData)); }
    public int TryRemoveTimer(Timer t) { using var tu = new HandleUse(t.Handle); nint th = tu.Value; return Do(p => Native.zlink_poller_remove_timer(p, th)); }
    /// <summary>The generic zlink_poller_add / modify / remove with a timer as the source.</summary>
    public int TryAdd(Timer t, PollEvents events, nint userData = 0) { using var tu = new HandleUse(t.Handle); nint th = tu.Value; return Do(p => Native.zlink_poller_add(p, th, userData, (short)events)); }
    public int TryModify(Timer t, PollEvents events) { using var tu = new HandleUse(t.Handle); nint th = tu.Value; return Do(p => Native.zlink_poller_modify(p, th, (short)events)); }
    public int TryRemove(Timer t) { using var tu = new HandleUse(t.Handle); nint th = tu.Value; return Do(p => Native.zlink_poller_remove(p, th)); }
    /// <summary>zlink_poller_size's -1 case as a result: the count, or -1 with result set.</summary>
    public int TrySize(out int result)
    {
        int err = 0, n;
        using (var u = new HandleUse(Handle)) n = Native.zlink_poller_size(u.Value, &err);
        result = n >= 0 ? 0 : err;
        return n;
    }
    /// <summary>zlink_poller_wait with its result: the count, or -1 with result set.</summary>
    public int TryWait(Span<PollerEvent> events, int timeoutMs, out int result)
    {
        try { int n = Wait(events, timeoutMs); result = 0; return n; }
        catch (ZLinkCoreException e) { result = e.Result; return -1; }
    }
    /// <summary>zlink_poller_destroy now, with its result (CLOSE_BUSY during an active
    /// wait: the poller stays usable); Dispose afterwards does nothing.</summary>
    public int TryDestroy() => CoreHandles.TryDestroy(Handle, static h => { nint x = h; return Native.zlink_poller_destroy(&x); });

    public void Add(Socket s, PollEvents events, nint userData = 0) => Errors.CheckCore(TryAdd(s, events, userData), "zlink_poller_add");
    public void AddTimer(Timer t, nint userData = 0) => Errors.CheckCore(TryAddTimer(t, userData), "zlink_poller_add_timer");

    public int Size
    {
        get
        {
            int err = 0;
            int n;
            using (var u = new HandleUse(Handle)) n = Native.zlink_poller_size(u.Value, &err);
            return n >= 0 ? n : throw Errors.Core(err, "zlink_poller_size");
        }
    }

    /// <summary>zlink_poller_wait: the events written (0 on timeout); throws on -1.</summary>
    public int Wait(Span<PollerEvent> events, int timeoutMs)
    {
        NPollerEvent* ev = stackalloc NPollerEvent[Math.Max(events.Length, 1)];
        int err = 0;
        int n;
        using (var u = new HandleUse(Handle)) n = Native.zlink_poller_wait(u.Value, ev, events.Length, timeoutMs, &err);
        if (n < 0) throw Errors.Core(err, "zlink_poller_wait");
        for (int i = 0; i < n; i++)
            events[i] = new PollerEvent((PollerSourceKind)ev[i].source_kind, ev[i].socket, ev[i].fd, ev[i].timer, ev[i].user_data, (PollEvents)ev[i].events);
        return n;
    }

    public void Dispose() => Handle.Dispose();
}

/// <summary>One item of a one-shot Poll (zlink_pollitem_t, caller-owned).</summary>
[System.Runtime.InteropServices.StructLayout(System.Runtime.InteropServices.LayoutKind.Sequential)]
public struct PollItem
{
    internal NPollItem N;
    /// <summary>A socket item.</summary>
    public PollItem(Socket socket, PollEvents events) { N = new NPollItem { socket = socket.NativeHandle, fd = -1, events = (short)events }; }
    /// <summary>An FD item.</summary>
    public static PollItem ForFd(int fd, PollEvents events) => new() { N = new NPollItem { socket = 0, fd = fd, events = (short)events } };
    public PollEvents Events { get => (PollEvents)N.events; set => N.events = (short)value; }
    /// <summary>Set by Poll (cleared on entry).</summary>
    public PollEvents Revents { get => (PollEvents)N.revents; set => N.revents = (short)value; }
}

/// <summary>zlink_poll: the one-shot wait.</summary>
public static unsafe partial class ZLinkPoll
{
    /// <summary>The number of items with nonzero Revents, 0 on timeout (timeoutMs &lt; 0
    /// waits without limit); a failure throws ZLinkCoreException (Name, Errno).</summary>
    public static int Poll(Span<PollItem> items, long timeoutMs)
    {
        NativeLibraryLoader.EnsureLoaded();
        int err = 0;
        int n;
        fixed (PollItem* p = items) n = Native.zlink_poll((NPollItem*)p, items.Length, (nint)timeoutMs, &err);
        return n >= 0 ? n : throw Errors.Core(err, "zlink_poll");
    }
}
