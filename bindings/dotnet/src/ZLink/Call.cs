// Call.cs — call builders and their terminators over zlink_call_*.
//
// Design notes (exactly-once completion; no .NET-side race)
//  - Async(ct) allocates one Operation (an IValueTaskSource backed by
//    ManualResetValueTaskSourceCore) and passes a GCHandle to it as the
//    completion's user pointer of zlink_call_start_held. The C runtime calls
//    Operation.Complete (an [UnmanagedCallersOnly] entry) exactly once, on
//    its dispatcher lane; that entry frees the GCHandle, copies the outcome
//    (reply bytes or the exception) and queues the Operation to the thread
//    pool, and returns: the dispatcher goes on at once. The pool work item
//    completes the source, running the continuations that do not ask for a
//    context of their own synchronously inside it, then calls
//    zlink_call_callback_done: the call's dispatcher slot stays reserved
//    until those continuations returned, so a continuation blocked in user
//    code counts against the cap (seed 000 §17, SC-18). Only a held start
//    owes done: after a yield's completion (zlink_call_yield) it is not
//    called (C would answer INVALID_OPERATION). If the start
//    refuses the call, fn never runs: the terminator frees the GCHandle and
//    returns a faulted ValueTask. Nothing else completes an Operation.
//  - A continuation that shuts its host down synchronously (Host.Shutdown
//    or Dispose inside it) would wait for its own slot: those calls first
//    give back the slot the current work item holds
//    (Operation.ReleaseHeldSlot).
//  - A CancellationToken registration only calls zlink_call_cancel; the C
//    runtime decides the race (reply, timeout, shutdown, cancel) and the
//    outcome's result decides the exception. A token already cancelled
//    makes the terminator cancel the call before starting it, so
//    zlink_call_start answers CANCELLED and nothing is sent.
//  - Continuations never run on the dispatcher lane: on the captured
//    SynchronizationContext when there is one (inside a handler:
//    RuntimeContextSync, whose threads are marked runtime context; posted,
//    so they hold no slot), else inline in the pool work item above. A
//    call's own continuation is application code: the pool thread is not a
//    runtime context.
//  - The call object is released when the Call is disposed, or by the
//    SafeHandle's finalizer; a second terminator on a live call is refused
//    by the C runtime (INVALID_OPERATION).
using System;
using System.Runtime.InteropServices;
using System.Text.Json;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace ZLink;

/// <summary>A request's successful reply.</summary>
public sealed class Reply
{
    public string Packet { get; }
    public string ContentType { get; }
    public byte[] Payload { get; }
    internal Reply(string packet, string contentType, byte[] payload)
    {
        Packet = packet;
        ContentType = contentType;
        Payload = payload;
    }
    /// <summary>The payload decoded with System.Text.Json.</summary>
    public T Json<T>(JsonSerializerOptions? options = null) =>
        JsonSerializer.Deserialize<T>(Payload, options ?? Call.JsonOptions)!;
}

/// <summary>A call being built (zlink_call_t): finish it with one terminator.</summary>
public abstract unsafe class Call : IDisposable
{
    internal static readonly JsonSerializerOptions JsonOptions = new(JsonSerializerDefaults.Web);
    internal readonly CallHandle Handle;
    internal Call(CallHandle h) { Handle = h; }

    protected void SetPayloadCore(string packet, ReadOnlySpan<byte> data, string contentType)
    {
        using var u = new HandleUse(Handle);
        fixed (byte* p = data)
            Errors.Check(Native.zlink_call_set_payload(u.Value, packet, contentType, p, (nuint)data.Length), "zlink_call_set_payload");
    }

    protected void SetMetadataCore(string key, string value)
    {
        using var u = new HandleUse(Handle);
        Errors.Check(Native.zlink_call_set_metadata(u.Value, key, value), "zlink_call_set_metadata");
    }

    /// <summary>Cancels the call (zlink_call_cancel; repeatable).</summary>
    public void Cancel()
    {
        using var u = new HandleUse(Handle);
        Native.zlink_call_cancel(u.Value);
    }

    /// <summary>zlink_call_start (or _yield). Returns the started operation, or
    /// null with the refusal in `error` (fn will never run).</summary>
    internal Operation? Begin(CancellationToken ct, bool yield, out Exception? error)
    {
        var op = new Operation(Handle, ct, held: !yield);
        var gch = GCHandle.Alloc(op);
        int r;
        using (var u = new HandleUse(Handle))
        {
            if (ct.IsCancellationRequested) Native.zlink_call_cancel(u.Value);
            r = yield ? Native.zlink_call_yield(u.Value, &Operation.Complete, GCHandle.ToIntPtr(gch))
                      : Native.zlink_call_start_held(u.Value, &Operation.Complete, GCHandle.ToIntPtr(gch));
        }
        if (r != 0)
        {
            gch.Free();
            error = Errors.FromFramework(r, "", 0, ct)!;
            return null;
        }
        op.Register();
        error = null;
        return op;
    }

    internal ValueTask<Reply?> StartCore(CancellationToken ct, bool yield)
    {
        var op = Begin(ct, yield, out var error);
        if (op != null) return new ValueTask<Reply?>(op, 0);
        return error is OperationCanceledException && ct.IsCancellationRequested
            ? ValueTask.FromCanceled<Reply?>(ct) : ValueTask.FromException<Reply?>(error!);
    }

    internal ValueTask StartOneWay(CancellationToken ct, bool yield)
    {
        var op = Begin(ct, yield, out var error);
        if (op != null) return new ValueTask(op, 0);
        return error is OperationCanceledException && ct.IsCancellationRequested
            ? ValueTask.FromCanceled(ct) : ValueTask.FromException(error!);
    }

    /// <summary>zlink_call_wait (blocks; INVALID_OPERATION in a runtime context).</summary>
    internal Reply? WaitCore()
    {
        NOutcome o = default;
        o.struct_size = (uint)sizeof(NOutcome);
        int r;
        using (var u = new HandleUse(Handle)) r = Native.zlink_call_wait(u.Value, &o);
        int res = r != 0 ? r : o.result;
        if (res != 0)
            throw Errors.FromFramework(res, o.message == null ? "" : Native.Str(o.message), o.remote_code)!;
        return Operation.ReplyOf(&o);
    }

    public void Dispose() => Handle.Dispose();
}

/// <summary>A one-way send; its completion is admission.</summary>
public sealed class OneWayCall : Call
{
    internal OneWayCall(CallHandle h) : base(h) { }
    public OneWayCall Payload(string packet, ReadOnlySpan<byte> data, string contentType = "")
    { SetPayloadCore(packet, data, contentType); return this; }
    public OneWayCall Payload(string packet, byte[] data, string contentType = "")
    { SetPayloadCore(packet, data, contentType); return this; }
    public OneWayCall Payload<T>(string packet, T value, JsonSerializerOptions? options = null)
    { SetPayloadCore(packet, JsonSerializer.SerializeToUtf8Bytes(value, options ?? JsonOptions), ""); return this; }
    public OneWayCall Metadata(string key, string value) { SetMetadataCore(key, value); return this; }

    /// <summary>One-way submit: completes at admission.</summary>
    public ValueTask Async(CancellationToken cancellationToken = default) => StartOneWay(cancellationToken, false);
    /// <summary>Synchronous: blocks until admission; INVALID_OPERATION in a runtime context.</summary>
    public void Submit() => WaitCore();
    /// <summary>Yield: INVALID_OPERATION outside a Spot turn (every turn of this version).</summary>
    public ValueTask Yield(CancellationToken cancellationToken = default) => StartOneWay(cancellationToken, true);
}

/// <summary>A request; its completion carries the reply.</summary>
public sealed class RequestCall : Call
{
    internal RequestCall(CallHandle h) : base(h) { }
    public RequestCall Payload(string packet, ReadOnlySpan<byte> data, string contentType = "")
    { SetPayloadCore(packet, data, contentType); return this; }
    public RequestCall Payload(string packet, byte[] data, string contentType = "")
    { SetPayloadCore(packet, data, contentType); return this; }
    public RequestCall Payload<T>(string packet, T value, JsonSerializerOptions? options = null)
    { SetPayloadCore(packet, JsonSerializer.SerializeToUtf8Bytes(value, options ?? JsonOptions), ""); return this; }
    public RequestCall Metadata(string key, string value) { SetMetadataCore(key, value); return this; }
    /// <summary>The whole-call timeout (zlink_call_set_timeout; the C runtime checks the value).</summary>
    public RequestCall Timeout(TimeSpan timeout)
    {
        using var u = new HandleUse(Handle);
        Errors.Check(Native.zlink_call_set_timeout(u.Value, Durations.Ns(timeout)), "zlink_call_set_timeout");
        return this;
    }

    public ValueTask<Reply> Async(CancellationToken cancellationToken = default) =>
        StartCore(cancellationToken, false)!;

    public async ValueTask<T> Async<T>(CancellationToken cancellationToken = default)
    {
        var reply = await StartCore(cancellationToken, false);
        return reply!.Json<T>();
    }

    public Reply Submit() => WaitCore()!;
    public T Submit<T>() => WaitCore()!.Json<T>();
    public async ValueTask<T> Yield<T>(CancellationToken cancellationToken = default)
    {
        var reply = await StartCore(cancellationToken, true);
        return reply!.Json<T>();
    }
}

/// <summary>One started call's completion source.</summary>
internal sealed unsafe class Operation : IValueTaskSource<Reply?>, IValueTaskSource, IThreadPoolWorkItem
{
    private ManualResetValueTaskSourceCore<Reply?> _core = new() { RunContinuationsAsynchronously = false };
    // Set by Complete (dispatcher lane) before the work item is queued.
    private nint _callRaw;
    private Reply? _reply;
    private Exception? _error;
    private int _held;   // 1 until zlink_call_callback_done was called
    private readonly bool _startedHeld;   // zlink_call_start_held (a yield is not held)
    [ThreadStatic] private static Operation? t_running;   // the work item on this thread
    private readonly CallHandle _call;
    private readonly CancellationToken _token;
    private CancellationTokenRegistration _reg;
    private bool _done;   // guarded by lock (this): only with a cancellable token

    internal Operation(CallHandle call, CancellationToken token, bool held)
    {
        _call = call; _token = token; _startedHeld = held;
    }

    internal void Register()
    {
        if (!_token.CanBeCanceled) return;
        var reg = _token.UnsafeRegister(static s => ((Operation)s!).OnCancel(), this);
        bool dispose;
        lock (this) { dispose = _done; if (!_done) _reg = reg; }
        if (dispose) reg.Dispose();
    }

    private void OnCancel()
    {
        bool added = false;
        try
        {
            _call.DangerousAddRef(ref added);
            Native.zlink_call_cancel(_call.DangerousGetHandle());
        }
        catch (ObjectDisposedException) { /* released: the C runtime still completes the call */ }
        finally { if (added) _call.DangerousRelease(); }
    }

    private static readonly Utf8Cache s_packets = new(), s_types = new();

    internal static Reply? ReplyOf(NOutcome* o)
    {
        if (o->payload == null && o->packet == null) return null;
        var data = o->payload == null ? Array.Empty<byte>() : new ReadOnlySpan<byte>(o->payload, checked((int)o->payload_size)).ToArray();
        return new Reply(s_packets.Get(o->packet) ?? "", s_types.Get(o->content_type) ?? "", data);
    }

    /// <summary>Completions delivered into .NET since the process began (tests count them).</summary>
    internal static long Delivered;
    internal int DeliveredHere;

    [UnmanagedCallersOnly]
    internal static void Complete(nint call, NOutcome* outcome, nint user)
    {
        Interlocked.Increment(ref Delivered);
        var gch = GCHandle.FromIntPtr(user);
        var op = (Operation)gch.Target!;
        gch.Free();
        Interlocked.Increment(ref op.DeliveredHere);
        try
        {
            // Copied here: the application may release the call before the
            // work item runs (release ends the hold, and the outcome with it).
            op._callRaw = call;
            // Only a held start owes zlink_call_callback_done (C answers
            // INVALID_OPERATION for any other call).
            op._held = op._startedHeld ? 1 : 0;
            if (outcome->result == 0)
                op._reply = ReplyOf(outcome);
            else
                op._error = Errors.FromFramework(outcome->result, Native.Str(outcome->message) ?? "",
                                                 outcome->remote_code, op._token)!;
            ThreadPool.UnsafeQueueUserWorkItem(op, preferLocal: false);
        }
        catch (Exception e)
        {
            Environment.FailFast("ZLink: completion delivery failed", e);
        }
    }

    /// <summary>The pool work item: completes the source (inline
    /// continuations run here), then gives the dispatcher slot back.</summary>
    void IThreadPoolWorkItem.Execute()
    {
        t_running = this;
        try
        {
            if (_token.CanBeCanceled)
            {
                CancellationTokenRegistration reg;
                lock (this) { _done = true; reg = _reg; }
                reg.Dispose();
            }
            if (_error == null) _core.SetResult(_reply);
            else _core.SetException(_error);
        }
        catch (Exception e)
        {
            Environment.FailFast("ZLink: completion delivery failed", e);
        }
        finally
        {
            t_running = null;
            CallbackDone();
        }
    }

    /// <summary>zlink_call_callback_done, once. A call released meanwhile
    /// ended its hold at release (INVALID_HANDLE then, which changes nothing).</summary>
    private void CallbackDone()
    {
        if (Interlocked.Exchange(ref _held, 0) == 1)
            Native.zlink_call_callback_done(_callRaw);
    }

    /// <summary>Gives back the slot held by the completion whose continuation
    /// runs on this thread, if any (a host shutdown from inside it).</summary>
    internal static void ReleaseHeldSlot()
    {
        var op = t_running;
        if (op == null) return;
        t_running = null;
        op.CallbackDone();
    }

    public Reply? GetResult(short token) => _core.GetResult(token);
    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);
    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);
    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);
}

/// <summary>A request's reply taken from its turn (Turn.TakeReply); completes at send acceptance.</summary>
public sealed class ReplyCall : Call
{
    internal ReplyCall(CallHandle h) : base(h) { }
    public ReplyCall Payload(string packet, ReadOnlySpan<byte> data, string contentType = "")
    { SetPayloadCore(packet, data, contentType); return this; }
    public ReplyCall Payload(string packet, byte[] data, string contentType = "")
    { SetPayloadCore(packet, data, contentType); return this; }
    public ReplyCall Payload<T>(string packet, T value, JsonSerializerOptions? options = null)
    { SetPayloadCore(packet, JsonSerializer.SerializeToUtf8Bytes(value, options ?? JsonOptions), ""); return this; }
    public ValueTask Async(CancellationToken cancellationToken = default) => StartOneWay(cancellationToken, false);
    public void Submit() => WaitCore();
    /// <summary>Starts the reply with no completion function (nobody observes its
    /// admission); the result of zlink_call_start is thrown when it refuses.</summary>
    public unsafe void Start()
    {
        using var u = new HandleUse(Handle);
        Errors.Check(Native.zlink_call_start(u.Value, null, 0), "zlink_call_start (reply)");
    }
}
