// Handles.cs — one SafeHandle per owned native handle. ReleaseHandle runs
// once (SafeHandle's reference count keeps a handle alive while a call uses
// it, so a concurrent Dispose never frees it under that call).
using System;
using System.Runtime.InteropServices;

namespace ZLink;

internal sealed class HostHandle : SafeHandle
{
    public HostHandle() : base(0, true) { }
    public HostHandle(nint h) : base(0, true) { SetHandle(h); }
    public override bool IsInvalid => handle == 0;
    protected override bool ReleaseHandle() => Native.zlink_host_destroy(handle) == 0;
}

internal sealed class CallHandle : SafeHandle
{
    public CallHandle(nint h) : base(0, true) { SetHandle(h); }
    public override bool IsInvalid => handle == 0;
    protected override bool ReleaseHandle() => Native.zlink_call_release(handle) == 0;
}

internal sealed class ContextHandle : SafeHandle
{
    public ContextHandle(nint h) : base(0, true) { SetHandle(h); }
    public override bool IsInvalid => handle == 0;
    protected override bool ReleaseHandle() => Native.zlink_ctx_term(handle) == 0;
}

internal sealed class SocketHandle : SafeHandle
{
    public SocketHandle(nint h, bool owns = true) : base(0, owns) { SetHandle(h); }
    public override bool IsInvalid => handle == 0;
    protected override bool ReleaseHandle() => Native.zlink_close(handle) == 0;
}

internal sealed unsafe class PollerHandle : SafeHandle
{
    public PollerHandle(nint h, bool owns = true) : base(0, owns) { SetHandle(h); }
    public override bool IsInvalid => handle == 0;
    protected override bool ReleaseHandle() { nint p = handle; return Native.zlink_poller_destroy(&p) == 0; }
}

internal sealed unsafe class TimerHandle : SafeHandle
{
    public TimerHandle(nint h, bool owns = true) : base(0, owns) { SetHandle(h); }
    public override bool IsInvalid => handle == 0;
    protected override bool ReleaseHandle() { nint p = handle; return Native.zlink_timer_destroy(&p) == 0; }
}

/// <summary>Holds a SafeHandle's reference for the length of one native call.</summary>
internal ref struct HandleUse
{
    private readonly SafeHandle _h;
    private bool _added;
    public nint Value;
    public HandleUse(SafeHandle h)
    {
        _h = h;
        _added = false;
        Value = 0;
        h.DangerousAddRef(ref _added);   // throws ObjectDisposedException once released
        Value = h.DangerousGetHandle();
    }
    public void Dispose() { if (_added) { _h.DangerousRelease(); _added = false; } }
}
