using System;
using Xunit;

namespace ZLink.Tests;

/// <summary>ErrorOut.cs (error_out NULL) and TryDestroy's NULL pointer.</summary>
public class ErrorOutTests
{
    [Fact]
    public void Raw_forms_return_the_C_value_and_errno_tells()
    {
        using var ctx = new Context();
        using var a = ctx.Socket(SocketType.Pair);
        using var b = ctx.Socket(SocketType.Pair);
        a.Bind("inproc://dotnet-errorout");
        b.Connect("inproc://dotnet-errorout");
        var p = new Poller();
        Assert.Equal(0, p.TrySize());
        Assert.Equal(0, p.TryAdd(a, PollEvents.In));
        Assert.Equal(1, p.TrySize());
        var ev = new PollerEvent[4];
        Assert.Equal(0, p.TryWait(ev, 0L));
        b.Send(new byte[] { 1 });
        Assert.Equal(1, p.TryWait(ev, 30000L));
        Assert.Equal(a.NativeHandle, ev[0].Socket);
        Assert.Equal(PollEvents.In, ev[0].Events);
        // Capacity 0 (an empty span) reaches C, which refuses it.
        Assert.Equal(-1, p.TryWait(Span<PollerEvent>.Empty, 0L));
        Assert.Equal("EINVAL", ZLinkCore.LastErrnoName);
        Assert.Equal(-1, Poller.FromHandle(0).TrySize());   // after EINVAL above
        Assert.Equal("EFAULT", ZLinkCore.LastErrnoName);
        var items = new[] { new PollItem(a, PollEvents.In) };
        Assert.Equal(1, ZLinkPoll.TryPoll(items, 0));
        Assert.Equal(PollEvents.In, items[0].Revents);
        Assert.Equal(-1, ZLinkPoll.TryPoll(new[] { PollItem.ForFd(-1, PollEvents.In) }, 0));   // after EFAULT above
        Assert.Equal("EINVAL", ZLinkCore.LastErrnoName);
        Assert.Equal(0, ZLinkPoll.TryPoll(Span<PollItem>.Empty, -1));
        Assert.Equal(0, p.TryDestroy());
    }

    [Fact]
    public void Destroy_passes_NULL_for_a_released_or_null_handle()
    {
        // Each EFAULT check follows an EINVAL, so errno is what the destroy set.
        static void Einval() { Assert.Equal(-1, ZLinkPoll.TryPoll(new[] { PollItem.ForFd(-1, PollEvents.In) }, 0)); Assert.Equal("EINVAL", ZLinkCore.LastErrnoName); }
        var p = new Poller();
        Assert.Equal(0, p.TryDestroy());
        Einval();
        Assert.Equal(Results.Close.InvalidHandle, p.TryDestroy());
        Assert.Equal("EFAULT", ZLinkCore.LastErrnoName);
        Einval();
        Assert.Equal(Results.Close.InvalidHandle, Poller.FromHandle(0).TryDestroy());
        Assert.Equal("EFAULT", ZLinkCore.LastErrnoName);
        Einval();
        Assert.Equal(Results.Close.InvalidHandle, Timer.FromHandle(0).TryDestroy());
        Assert.Equal("EFAULT", ZLinkCore.LastErrnoName);
        Assert.Throws<ObjectDisposedException>(() => p.Size);
    }
}
