// ErrorOut.cs — the raw-value forms of zlink_poll, zlink_poller_size and
// zlink_poller_wait that pass error_out as NULL (the C ABI allows it): the C
// function's return value as it is, and zlink_errno() (ZLinkCore.LastErrno,
// read right after the call on the same thread) tells why a -1 failed.
// Nothing is checked here: every argument goes to C unchanged.
using System;

namespace ZLink;

public sealed unsafe partial class Poller
{
    /// <summary>zlink_poller_size(poller, NULL): the registration count, or -1
    /// (then ZLinkCore.LastErrno tells why).</summary>
    public int TrySize()
    {
        using var u = new HandleUse(Handle);
        return Native.zlink_poller_size(u.Value, null);
    }

    /// <summary>zlink_poller_wait(poller, events, events.Length, timeoutMs, NULL): the
    /// count of events written (0 on timeout), or -1 (then ZLinkCore.LastErrno tells
    /// why). An empty span passes capacity 0, which C refuses with EINVAL.</summary>
    public int TryWait(Span<PollerEvent> events, long timeoutMs)
    {
        NPollerEvent* ev = stackalloc NPollerEvent[Math.Max(events.Length, 1)];
        int n;
        using (var u = new HandleUse(Handle)) n = Native.zlink_poller_wait(u.Value, ev, events.Length, (nint)timeoutMs, null);
        for (int i = 0; i < n; i++)
            events[i] = new PollerEvent((PollerSourceKind)ev[i].source_kind, ev[i].socket, ev[i].fd, ev[i].timer, ev[i].user_data, (PollEvents)ev[i].events);
        return n;
    }
}

public static unsafe partial class ZLinkPoll
{
    /// <summary>zlink_poll(items, items.Length, timeoutMs, NULL): the number of items
    /// with nonzero Revents (0 on timeout), or -1 (then ZLinkCore.LastErrno tells why).
    /// An empty span passes items NULL with count 0.</summary>
    public static int TryPoll(Span<PollItem> items, long timeoutMs)
    {
        NativeLibraryLoader.EnsureLoaded();
        fixed (PollItem* p = items) return Native.zlink_poll((NPollItem*)p, items.Length, (nint)timeoutMs, null);
    }
}
