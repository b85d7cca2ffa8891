// Bench.cs — the request/reply benchmark's program in C# (framework_dotnet;
// bench/rr_common.h states the protocol, bench/rr_framework.c is the same
// program in C). Both sides use the .NET binding's public API:
//   server   one Host, ClientServer server "bench" on tcp://127.0.0.1:0, a
//            request handler for "echo" that answers the payload
//   client   one Host, ClientServer client; N slots, each an async loop that
//            awaits its request (RequestCall.Async), records the latency
//            and starts the next while the window is open
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using ZLink;

static class Bench
{
    const string Channel = "bench", Packet = "echo", Type = "application/octet-stream";

    static int Error(string what)
    {
        Console.Out.WriteLine("ERROR," + what);
        Console.Out.Flush();
        return 1;
    }

    static long NowNs() => (long)(Stopwatch.GetTimestamp() * (1e9 / Stopwatch.Frequency));

    static int Server()
    {
        var host = new Host("bench-server");
        host.AddCsServer(Channel, "tcp://127.0.0.1:0");
        host.AddHandler(OwnerKind.Channel, Channel, MessageKind.Request, Packet,
            (Turn t) => t.Respond(Packet, t.Payload, Type));
        host.Start();
        string ep = host.Endpoint(Channel);
        Console.Out.WriteLine("READY,port=" + ep.Substring(ep.LastIndexOf(':') + 1));
        Console.Out.Flush();
        using var stdin = Console.OpenStandardInput();
        var buf = new byte[256];
        while (stdin.Read(buf, 0, buf.Length) > 0) { }
        host.Shutdown();
        host.Dispose();
        Stats("server");
        return 0;
    }

    // With ZLINK_BENCH_STATS=1: the process's managed allocation and GC
    // counts on stderr (the driver reads stdout only), to divide by calls.
    static void Stats(string side, long calls = 0)
    {
        if (Environment.GetEnvironmentVariable("ZLINK_BENCH_STATS") != "1") return;
        Console.Error.WriteLine(FormattableString.Invariant(
            $"STATS,{side},calls={calls},alloc_bytes={GC.GetTotalAllocatedBytes(false)},gc0={GC.CollectionCount(0)},gc1={GC.CollectionCount(1)},gc2={GC.CollectionCount(2)},pool_items={System.Threading.ThreadPool.CompletedWorkItemCount},pool_threads={System.Threading.ThreadPool.ThreadCount}"));
    }

    static double Percentile(double[] sorted, double p)
    {
        int rank = (int)Math.Ceiling(p / 100.0 * sorted.Length);
        return sorted[Math.Clamp(rank, 1, sorted.Length) - 1];
    }

    static async Task<int> Client(string[] args)
    {
        int port = 0, n = 0, size = 0;
        long warmup = 0, duration = 0;
        for (int i = 1; i + 1 < args.Length; i += 2)
        {
            long v = long.Parse(args[i + 1]);
            switch (args[i])
            {
                case "--port": port = (int)v; break;
                case "--inflight": n = (int)v; break;
                case "--size": size = (int)v; break;
                case "--warmup-ms": warmup = v * 1_000_000; break;
                case "--duration-ms": duration = v * 1_000_000; break;
                default: return Error("usage: unknown option " + args[i]);
            }
        }
        if (port <= 0 || n <= 0 || size <= 0 || duration <= 0)
            return Error("usage: client --port P --inflight N --size S --warmup-ms W --duration-ms D");
        var host = new Host("bench-client");
        host.AddCsClient(Channel, "tcp://127.0.0.1:" + port);
        host.Start();
        var payload = Enumerable.Repeat((byte)'q', size).ToArray();
        long windowStart = NowNs() + warmup, windowEnd = windowStart + duration;
        var samples = new List<double>(1 << 16);
        long calls = 0, total = 0;
        string? failure = null;
        var gate = new object();

        async Task Slot()
        {
            while (true)
            {
                long start = NowNs();
                Reply reply;
                try
                {
                    // Released when its outcome was taken, as the C program
                    // releases the call in its completion function.
                    using var call = host.RequestToChannel(Channel).Payload(Packet, payload, Type);
                    reply = await call.Async();
                }
                catch (Exception e)
                {
                    lock (gate) failure ??= "request outcome: " + e.Message;
                    return;
                }
                long now = NowNs();
                lock (gate)
                {
                    total++;
                    if (reply.Payload.Length != size)
                        failure ??= "wrong reply size";
                    else if (now >= windowStart && now < windowEnd)
                    {
                        calls++;
                        samples.Add((now - start) / 1000.0);
                    }
                    if (failure != null || now >= windowEnd)
                        return;
                }
            }
        }

        var slots = new Task[n];
        for (int i = 0; i < n; i++)
            slots[i] = Slot();
        var all = Task.WhenAll(slots);
        long boundMs = (windowEnd - NowNs()) / 1_000_000 + 20_000;
        if (await Task.WhenAny(all, Task.Delay(TimeSpan.FromMilliseconds(Math.Max(1, boundMs)))) != all)
            return Error("calls still in flight 20 s after the window");
        host.Shutdown();
        host.Dispose();
        Stats("client", total);
        if (failure != null)
            return Error(failure);
        if (samples.Count == 0)
            return Error("no call completed inside the measuring window");
        var sorted = samples.ToArray();
        Array.Sort(sorted);
        double seconds = duration / 1e9;
        var version = typeof(Host).Assembly.GetName().Version;
        Console.Out.WriteLine($"INFO,version=zlink-dotnet-{version?.Major}.{version?.Minor}.{version?.Build}");
        Console.Out.WriteLine(FormattableString.Invariant(
            $"SAMPLE,calls={calls},window_s={seconds:F3},throughput={calls / seconds:F1},p50_us={Percentile(sorted, 50):F2},p99_us={Percentile(sorted, 99):F2}"));
        Console.Out.Flush();
        return 0;
    }

    static async Task<int> Main(string[] args)
    {
        try
        {
            if (args.Length == 1 && args[0] == "server")
                return Server();
            if (args.Length >= 1 && args[0] == "client")
                return await Client(args);
            return Error("usage: framework_dotnet server | client --port P --inflight N --size S --warmup-ms W --duration-ms D");
        }
        catch (Exception e)
        {
            return Error(e.GetType().Name + ": " + e.Message);
        }
    }
}
