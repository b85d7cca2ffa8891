// Harness.cs — a ClientServer pair of hosts over inproc for the tests.
using System;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

[assembly: CollectionBehavior(DisableTestParallelization = true)]

namespace ZLink.Tests;

internal sealed class Pair : IDisposable
{
    private static int _seq;
    public readonly Host Server;
    public readonly Host Client;
    public readonly string Channel = "svc";

    private readonly Action? _beforeDispose;

    /// <summary>beforeDispose releases what the handlers wait for, so that a failed
    /// check never leaves a turn open (which would keep shutdown waiting).</summary>
    public Pair(Action<Host> handlers, Action<Host>? clientConfig = null, Action? beforeDispose = null)
    {
        _beforeDispose = beforeDispose;
        string ep = "inproc://dotnet-test-" + Environment.ProcessId + "-" + Interlocked.Increment(ref _seq);
        Server = new Host("server");
        Server.AddCsServer(Channel, ep);
        handlers(Server);
        Server.Start();
        Client = new Host("client");
        Client.AddCsClient(Channel, ep);
        clientConfig?.Invoke(Client);
        Client.Start();
    }

    public void Dispose()
    {
        _beforeDispose?.Invoke();
        Client.Dispose();
        Server.Dispose();
    }
}

internal static class Bound
{
    /// <summary>A failure bound only: the awaited event normally comes long before.</summary>
    public static readonly TimeSpan Long = TimeSpan.FromSeconds(30);

    public static async Task<T> Within<T>(Task<T> t)
    {
        if (await Task.WhenAny(t, Task.Delay(Long)) != t) throw new TimeoutException("event did not come within the failure bound");
        return await t;
    }

    public static async Task Within(Task t)
    {
        if (await Task.WhenAny(t, Task.Delay(Long)) != t) throw new TimeoutException("event did not come within the failure bound");
        await t;
    }
}
