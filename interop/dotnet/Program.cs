// Program.cs — the .NET program of the interop suite (interop/README.md):
// the same roles, lines and packets as interop/c/node.c, through the .NET
// binding's public API (namespace ZLink).
using System;
using System.Diagnostics;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using ZLink;

static class Node
{
    const string Lang = "dotnet";
    static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);
    static volatile string next = "";

    static byte[] Utf8(string s) => Encoding.UTF8.GetBytes(s);
    static string Text(byte[] b) => Encoding.UTF8.GetString(b);

    static void Say(string line)
    {
        Console.Out.WriteLine(line);
        Console.Out.Flush();
    }

    static void Bye(Host host)
    {
        host.Shutdown(TimeSpan.FromSeconds(5));
        host.Dispose();
        Say("BYE");
    }

    static void ServeCs(string channel)
    {
        var host = new Host("interop-dotnet-server");
        host.AddCsServer(channel, "tcp://127.0.0.1:0");
        host.AddHandler(OwnerKind.Channel, channel, MessageKind.Request, "interop.echo",
            (Turn t) => t.Respond("interop.echo", Utf8(Text(t.Payload) + "|" + Lang), "text/plain"));
        host.Start();
        Say("READY " + host.Endpoint(channel));
        while (Console.In.ReadLine() != null) { }
        Bye(host);
    }

    static void CallCs(string channel, string endpoint, int n)
    {
        var host = new Host("interop-dotnet-client");
        host.AddCsClient(channel, endpoint);
        host.Start();
        for (int i = 0; i < n; i++)
        {
            Reply reply = host.RequestToChannel(channel)
                              .Payload("interop.echo", Utf8(Lang + "#" + i), "text/plain")
                              .Timeout(Timeout).Submit();
            Say("REPLY " + Text(reply.Payload));
        }
        Bye(host);
    }

    // interop.hop: "<hops>;<path>" -> append ">rid", forward or answer; the
    // async handler keeps its turn until the forwarded request completes.
    static async ValueTask Hop(Host host, string mesh, string rid, Turn t)
    {
        string input = Text(t.Payload);
        int semi = input.IndexOf(';');
        int hops = int.Parse(input.Substring(0, semi));
        string path = input.Substring(semi + 1) + ">" + rid;
        if (hops == 0)
        {
            t.Respond("interop.hop", Utf8(path), "text/plain");
            return;
        }
        Reply answer = await host.RequestToNode(mesh, next)
                                 .Payload("interop.hop", Utf8((hops - 1) + ";" + path), "text/plain")
                                 .Timeout(Timeout).Async();
        t.Respond("interop.hop", answer.Payload, "text/plain");
    }

    static void Ring(string mesh, string rid, string[] peers)
    {
        var host = new Host("interop-dotnet-ring");
        host.AddMeshNode(mesh, rid, "tcp://127.0.0.1:0");
        for (int i = 0; i + 1 < peers.Length; i += 2)
            host.MeshConnect(mesh, peers[i], peers[i + 1]);
        host.AddHandler(OwnerKind.Node, mesh, MessageKind.Request, "interop.hop",
            (Func<Turn, ValueTask>)(t => Hop(host, mesh, rid, t)));
        host.Start();
        Say("READY " + host.Endpoint(mesh));
        for (string? line; (line = Console.In.ReadLine()) != null;)
        {
            string[] w = line.Trim().Split(' ');
            switch (w[0])
            {
                case "NEXT":
                    next = w[1];
                    break;
                case "WAIT":
                    // No readiness event in the ABI: look every millisecond,
                    // for at most the call timeout (a failure bound).
                    int want = int.Parse(w[1]);
                    var clock = Stopwatch.StartNew();
                    while (host.MeshReadyPeers(mesh) < want)
                    {
                        if (clock.Elapsed > Timeout)
                        {
                            Say("ERROR peers: " + host.MeshReadyPeers(mesh) + " of " + want);
                            Environment.Exit(1);
                        }
                        Thread.Sleep(1);
                    }
                    Say("PEERS " + want);
                    break;
                case "START":
                    Reply answer = host.RequestToNode(mesh, next)
                                       .Payload("interop.hop", Utf8(w[1] + ";" + rid), "text/plain")
                                       .Timeout(Timeout).Submit();
                    Say("RING " + Text(answer.Payload));
                    break;
                default:
                    Say("ERROR unknown command: " + line);
                    Environment.Exit(1);
                    break;
            }
        }
        Bye(host);
    }

    static int Main(string[] args)
    {
        try
        {
            if (args.Length == 2 && args[0] == "serve-cs")
                ServeCs(args[1]);
            else if (args.Length == 4 && args[0] == "call-cs")
                CallCs(args[1], args[2], int.Parse(args[3]));
            else if (args.Length >= 3 && args.Length % 2 == 1 && args[0] == "ring")
                Ring(args[1], args[2], args[3..]);
            else
            {
                Console.Error.WriteLine("usage: node serve-cs CHANNEL | call-cs CHANNEL ENDPOINT N | ring MESH RID [ENDPOINT PEER_RID]...");
                return 2;
            }
        }
        catch (Exception e)
        {
            Say("ERROR " + e.GetType().Name + ": " + e.Message);
            return 1;
        }
        return 0;
    }
}
