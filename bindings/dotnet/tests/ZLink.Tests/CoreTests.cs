using System;
using System.Text;
using Xunit;

namespace ZLink.Tests;

public class CoreTests
{
    [Fact]
    public void Pair_send_and_receive_over_inproc()
    {
        using var ctx = new Context();
        using var a = ctx.Socket(SocketType.Pair);
        using var b = ctx.Socket(SocketType.Pair);
        a.Bind("inproc://dotnet-core-pair");
        b.Connect("inproc://dotnet-core-pair");
        a.SetOption(0x3012, 30000);   // RCVTIMEO: a failure bound
        b.Send(Encoding.UTF8.GetBytes("one"), Encoding.UTF8.GetBytes("two"));
        var parts = a.Recv();
        Assert.Equal(new[] { "one", "two" }, Array.ConvertAll(parts, p => Encoding.UTF8.GetString(p)));
        Assert.Equal(Results.Recv.NoData, a.TryRecv(out _, dontWait: true));
    }

    [Fact]
    public void Request_reply_and_completion_record_round_trip()
    {
        using var ctx = new Context();
        using var r = ctx.Socket(SocketType.Router);
        using var d = ctx.Socket(SocketType.Dealer);
        r.Bind("inproc://dotnet-core-rr");
        d.SetRoutingId(Encoding.UTF8.GetBytes("D"));
        d.Connect("inproc://dotnet-core-rr");
        r.SetOption(0x3012, 30000);   // RCVTIMEO: a failure bound
        d.SetOption(0x3012, 30000);
        Assert.Equal(0, d.TryRequest(default, new[] { Encoding.UTF8.GetBytes("ask") }, false, 0, 42, out ulong id));
        Assert.NotEqual(0UL, id);
        Assert.Equal(0, r.TryRouterRecv(out var src, out ulong token, out var parts));
        Assert.Equal("D", Encoding.UTF8.GetString(src));
        Assert.NotEqual(0UL, token);
        Assert.Equal("ask", Encoding.UTF8.GetString(parts[0]));
        Assert.Equal(0, r.TryReply(src, token, 0, new[] { Encoding.UTF8.GetBytes("answer"), Encoding.UTF8.GetBytes("2") }, false, 0, out _));
        Assert.Equal(Results.Submit.NotFound, r.TryReply(src, token, 0, new[] { Encoding.UTF8.GetBytes("again") }, false, 0, out _));
        Assert.Equal(0, d.TryRecvCompletion(out var c));
        Assert.Equal(CompletionKind.Request, c!.Kind);
        Assert.Equal(id, c.Id);
        Assert.Equal((nint)42, c.UserContext);
        Assert.Equal(Results.Request.Ok, c.RequestResult);
        Assert.Equal(new[] { "answer", "2" }, Array.ConvertAll(c.ReplyParts, p => Encoding.UTF8.GetString(p)));
        Assert.Equal(Results.Recv.NoData, d.TryRecvCompletion(out var none, dontWait: true));
        Assert.Null(none);
    }

    [Fact]
    public void Poller_reports_readiness_and_refuses_a_second_add_by_name()
    {
        using var ctx = new Context();
        using var a = ctx.Socket(SocketType.Pair);
        using var b = ctx.Socket(SocketType.Pair);
        a.Bind("inproc://dotnet-core-poll");
        b.Connect("inproc://dotnet-core-poll");
        using var poller = new Poller();
        poller.Add(a, PollEvents.In, 7);
        Assert.Equal(1, poller.Size);
        var e = Assert.Throws<ZLinkCoreException>(() => poller.Add(a, PollEvents.In));
        Assert.Equal("ZLINK_CONFIG_CONFLICT", e.Name);
        Assert.Equal("EEXIST", e.ErrnoName);
        var events = new PollerEvent[4];
        Assert.Equal(0, poller.Wait(events, 0));
        b.Send(Encoding.UTF8.GetBytes("x"));
        Assert.Equal(1, poller.Wait(events, 30000));
        Assert.Equal(PollerSourceKind.Socket, events[0].Kind);
        Assert.Equal((nint)7, events[0].UserData);
        Assert.Equal(a.NativeHandle, events[0].Socket);
        Assert.True(events[0].Events.HasFlag(PollEvents.In));
    }

    [Fact]
    public void Timer_in_a_poller_fires()
    {
        using var timer = new Timer();
        using var poller = new Poller();
        poller.AddTimer(timer, 3);
        timer.Start(TimeSpan.FromMilliseconds(5), 1);
        var events = new PollerEvent[2];
        Assert.Equal(1, poller.Wait(events, 30000));
        Assert.Equal(PollerSourceKind.Timer, events[0].Kind);
        Assert.Equal(timer.NativeHandle, events[0].Timer);
        Assert.Equal(0, timer.TryRecv(out ulong n, dontWait: true));
        Assert.Equal(1ul, n);
        Assert.Equal(Results.Recv.NoData, timer.TryRecv(out _, dontWait: true));
        Assert.Equal(0, poller.TryRemoveTimer(timer));
    }

    [Fact]
    public void Poll_fills_revents_and_maps_a_bad_bit_by_name()
    {
        using var ctx = new Context();
        using var a = ctx.Socket(SocketType.Pair);
        using var b = ctx.Socket(SocketType.Pair);
        a.Bind("inproc://dotnet-core-zpoll");
        b.Connect("inproc://dotnet-core-zpoll");
        var items = new[] { new PollItem(b, PollEvents.In), new PollItem(a, PollEvents.Out) };
        Assert.Equal(1, ZLinkPoll.Poll(items, 0));
        Assert.Equal(PollEvents.None, items[0].Revents);
        Assert.Equal(PollEvents.Out, items[1].Revents);
        a.Send(Encoding.UTF8.GetBytes("x"));
        Assert.Equal(2, ZLinkPoll.Poll(items, 30000));
        Assert.Equal(PollEvents.In, items[0].Revents);
        items[1].Events = (PollEvents)1024;
        var e = Assert.Throws<ZLinkCoreException>(() => ZLinkPoll.Poll(items, 0));
        Assert.Equal("ZLINK_CONFIG_INVALID_ARGUMENT", e.Name);
        Assert.Equal("EINVAL", e.ErrnoName);
    }
}
