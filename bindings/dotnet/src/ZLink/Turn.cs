// Turn.cs — handler turns (zlink_turn_t) and the handler entry point.
//
// Design notes (handlers, async turns, runtime context)
//  - Every handler is registered with the one [UnmanagedCallersOnly] entry
//    Turn.Entry; `user` is a GCHandle to its HandlerEntry (Host.cs). The C
//    worker thread that calls it is already a runtime context.
//  - The entry runs the handler on that thread with SynchronizationContext
//    set to RuntimeContextSync. When the handler returns a ValueTask that is
//    not complete, the turn stays open: zlink_turn_end is called only when
//    that task completes (failed = 1 with the exception's message when it
//    throws, which answers a request INTERNAL_FAILURE with the exception's
//    Message). A turn that was
//    answered with Respond is already ended by the C runtime.
//  - Continuations of awaits inside handler code run through
//    RuntimeContextSync: each posted continuation runs on a thread-pool
//    thread between zlink_runtime_context_enter and _leave, so Submit()
//    (zlink_call_wait) and Shutdown() are refused there by the C runtime, as
//    on the C worker. ConfigureAwait(false) inside a handler leaves that
//    context (the code after it is then application code).
using System;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink;

/// <summary>The SynchronizationContext of handler code: its threads are runtime contexts.</summary>
public sealed class RuntimeContextSync : SynchronizationContext
{
    public static readonly RuntimeContextSync Instance = new();
    private RuntimeContextSync() { }

    public override void Post(SendOrPostCallback d, object? state) =>
        ThreadPool.UnsafeQueueUserWorkItem(static s => { var (cb, st) = s; Run(cb, st); }, (d, state), false);

    public override void Send(SendOrPostCallback d, object? state) => Run(d, state);

    public override SynchronizationContext CreateCopy() => this;

    private static void Run(SendOrPostCallback d, object? state)
    {
        Native.zlink_runtime_context_enter();
        var prev = Current;
        SetSynchronizationContext(Instance);
        try { d(state); }
        finally
        {
            SetSynchronizationContext(prev);
            Native.zlink_runtime_context_leave();
        }
    }

    /// <summary>True on a thread that is a runtime context (zlink_in_runtime_context).</summary>
    public static bool InRuntimeContext => Native.zlink_in_runtime_context() != 0;
}

/// <summary>One handler invocation: the record and its gate, open until the handler's task ends.</summary>
public sealed unsafe class Turn
{
    private readonly nint _turn;
    private int _ended;
    public Host Host { get; }
    public MessageKind Kind { get; }
    public string Packet { get; }
    public string ContentType { get; }
    public byte[] Payload { get; }
    public ulong Sequence { get; }

    private static readonly Utf8Cache s_packets = new(), s_types = new();

    internal Turn(Host host, nint turn)
    {
        Host = host;
        _turn = turn;
        Kind = (MessageKind)Native.zlink_turn_kind(turn);
        Packet = s_packets.Get(Native.zlink_turn_packet(turn)) ?? "";
        ContentType = s_types.Get(Native.zlink_turn_content_type(turn)) ?? "";
        nuint size;
        byte* p = Native.zlink_turn_payload(turn, &size);
        Payload = p == null ? Array.Empty<byte>() : new ReadOnlySpan<byte>(p, checked((int)size)).ToArray();
        Sequence = Native.zlink_turn_sequence(turn);
    }

    /// <summary>The payload decoded with System.Text.Json.</summary>
    public T Json<T>(JsonSerializerOptions? options = null) => JsonSerializer.Deserialize<T>(Payload, options ?? Call.JsonOptions)!;

    /// <summary>A metadata value, or null (valid until the turn ends).</summary>
    public string? Metadata(string key) => Native.Str(Native.zlink_turn_metadata(_turn, key));

    /// <summary>The sender's routing id (empty for ClientServer).</summary>
    public byte[] Source
    {
        get
        {
            NRoutingId rid;
            Errors.Check(Native.zlink_turn_source(_turn, &rid), "zlink_turn_source");
            return new ReadOnlySpan<byte>(rid.data, rid.size).ToArray();
        }
    }

    public string SourceText => Encoding.UTF8.GetString(Source);

    /// <summary>The request's reply call (zlink_turn_reply): it claims the one answer
    /// and may outlive the turn; set its payload and finish it with Async or Submit.</summary>
    public ReplyCall TakeReply()
    {
        int r;
        nint c = Native.zlink_turn_reply(_turn, &r);
        return c == 0 ? throw Errors.FromFramework(r, "zlink_turn_reply")! : new ReplyCall(new CallHandle(c));
    }

    /// <summary>Answers the request (zlink_turn_reply + payload + start); the turn stays open.</summary>
    public void Reply(string packet, ReadOnlySpan<byte> data, string contentType = "")
    {
        int r;
        nint c = Native.zlink_turn_reply(_turn, &r);
        if (c == 0) throw Errors.FromFramework(r, "zlink_turn_reply")!;
        try
        {
            fixed (byte* p = data)
                Errors.Check(Native.zlink_call_set_payload(c, packet, contentType, p, (nuint)data.Length), "zlink_call_set_payload");
            Errors.Check(Native.zlink_call_start(c, null, 0), "zlink_call_start (reply)");
        }
        finally { Native.zlink_call_release(c); }
    }

    public void Reply(string packet, byte[] data, string contentType = "") => Reply(packet, data.AsSpan(), contentType);

    public void Reply<T>(string packet, T value, JsonSerializerOptions? options = null) =>
        Reply(packet, JsonSerializer.SerializeToUtf8Bytes(value, options ?? Call.JsonOptions).AsSpan());

    /// <summary>An error reply of kind with message; the turn stays open.</summary>
    public void ReplyError(ErrorKind kind, string message)
    {
        int r;
        nint c = Native.zlink_turn_reply_error(_turn, (int)kind, message, &r);
        if (c == 0) throw Errors.FromFramework(r, "zlink_turn_reply_error")!;
        try { Errors.Check(Native.zlink_call_start(c, null, 0), "zlink_call_start (error reply)"); }
        finally { Native.zlink_call_release(c); }
    }

    /// <summary>Answers the request and ends the turn at once (zlink_turn_respond).</summary>
    public void Respond(string packet, ReadOnlySpan<byte> data, string contentType = "")
    {
        int r;
        fixed (byte* p = data) r = Native.zlink_turn_respond(_turn, packet, contentType, p, (nuint)data.Length);
        if (r == 0 || r == Results.Framework.Unavailable || r == Results.Framework.ShuttingDown)
            Interlocked.Exchange(ref _ended, 1);
        Errors.Check(r, "zlink_turn_respond");
    }

    public void Respond(string packet, byte[] data, string contentType = "") => Respond(packet, data.AsSpan(), contentType);

    public void Respond<T>(string packet, T value, JsonSerializerOptions? options = null) =>
        Respond(packet, JsonSerializer.SerializeToUtf8Bytes(value, options ?? Call.JsonOptions).AsSpan());

    private void End(Exception? failure)
    {
        if (Interlocked.Exchange(ref _ended, 1) != 0) return;
        if (failure == null) Native.zlink_turn_end(_turn, 0, null);
        else Native.zlink_turn_end(_turn, 1, failure.Message);
    }

    [UnmanagedCallersOnly]
    internal static void Entry(nint turn, nint user)
    {
        Turn? t = null;
        var prev = SynchronizationContext.Current;
        try
        {
            var entry = (HandlerEntry)GCHandle.FromIntPtr(user).Target!;
            t = new Turn(entry.Host, turn);
            SynchronizationContext.SetSynchronizationContext(RuntimeContextSync.Instance);
            ValueTask vt;
            try { vt = entry.Fn(t); }
            catch (Exception e) { t.End(e); return; }
            if (vt.IsCompleted)
            {
                try { vt.GetAwaiter().GetResult(); t.End(null); }
                catch (Exception e) { t.End(e); }
                return;
            }
            var awaiter = vt.ConfigureAwait(false).GetAwaiter();
            var tt = t;
            awaiter.UnsafeOnCompleted(() =>
            {
                try { awaiter.GetResult(); tt.End(null); }
                catch (Exception e) { tt.End(e); }
            });
        }
        catch (Exception e)
        {
            if (t != null) t.End(e);
            else Native.zlink_turn_end(turn, 1, "ZLink .NET handler entry: " + e.Message);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(prev);
        }
    }
}
