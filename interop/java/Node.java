// Node.java — the Java program of the interop suite (interop/README.md):
// the same roles, lines and packets as interop/c/node.c, through the Java
// binding's public API (io.zlink).
package io.zlink.interop;

import io.zlink.Host;
import io.zlink.Turn;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

public final class Node {
    private static final String LANG = "java";
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static volatile String next = "";

    private static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    private static String text(byte[] b) { return new String(b, StandardCharsets.UTF_8); }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static BufferedReader stdin() {
        return new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    }

    private static void bye(Host host) {
        host.shutdown(Duration.ofSeconds(5));
        host.close();
        say("BYE");
    }

    private static void serveCs(String channel) throws Exception {
        Host host = new Host("interop-java-server");
        host.addCsServer(channel, "tcp://127.0.0.1:0")
            .onRequest(channel, "interop.echo", turn -> {
                turn.respond("interop.echo", "text/plain", utf8(text(turn.payload()) + "|" + LANG));
                return null;
            })
            .start();
        say("READY " + host.endpoint(channel));
        BufferedReader in = stdin();
        while (in.readLine() != null) { }
        bye(host);
    }

    private static void callCs(String channel, String endpoint, int n) throws Exception {
        Host host = new Host("interop-java-client");
        host.addCsClient(channel, endpoint).start();
        for (int i = 0; i < n; i++) {
            byte[] reply = host.requestToChannel(channel)
                               .payload("interop.echo", "text/plain", utf8(LANG + "#" + i))
                               .timeout(TIMEOUT).submit_sync();
            say("REPLY " + text(reply));
        }
        bye(host);
    }

    /** interop.hop: "<hops>;<path>" -> append ">rid", forward or answer. */
    private static CompletionStage<?> hop(Host host, String mesh, String rid, Turn turn) {
        String in = text(turn.payload());
        int semi = in.indexOf(';');
        int hops = Integer.parseInt(in.substring(0, semi));
        String path = in.substring(semi + 1) + ">" + rid;
        if (hops == 0) {
            turn.respond("interop.hop", "text/plain", utf8(path));
            return null;
        }
        // The turn stays open until the forwarded request's stage completes.
        return host.requestToNode(mesh, next)
                   .payload("interop.hop", "text/plain", utf8((hops - 1) + ";" + path))
                   .timeout(TIMEOUT).submit()
                   .thenAccept(answer -> turn.respond("interop.hop", "text/plain", answer));
    }

    private static void ring(String mesh, String rid, String[] peers) throws Exception {
        Host host = new Host("interop-java-ring");
        host.addMeshNode(mesh, rid, "tcp://127.0.0.1:0");
        for (int i = 0; i + 1 < peers.length; i += 2)
            host.meshConnect(mesh, peers[i], peers[i + 1]);
        host.addHandler(Host.OwnerKind.NODE, mesh, Turn.Kind.REQUEST, "interop.hop",
                        turn -> hop(host, mesh, rid, turn));
        host.start();
        say("READY " + host.endpoint(mesh));
        BufferedReader in = stdin();
        for (String line; (line = in.readLine()) != null; ) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "NEXT" -> next = w[1];
                case "WAIT" -> {
                    // No readiness event in the ABI: look every millisecond,
                    // for at most the call timeout (a failure bound).
                    int want = Integer.parseInt(w[1]);
                    long end = System.nanoTime() + TIMEOUT.toNanos();
                    while (host.meshReadyPeers(mesh) < want) {
                        if (System.nanoTime() > end) {
                            say("ERROR peers: " + host.meshReadyPeers(mesh) + " of " + want);
                            System.exit(1);
                        }
                        Thread.sleep(1);
                    }
                    say("PEERS " + want);
                }
                case "START" -> {
                    byte[] answer = host.requestToNode(mesh, next)
                                        .payload("interop.hop", "text/plain", utf8(w[1] + ";" + rid))
                                        .timeout(TIMEOUT).submit_sync();
                    say("RING " + text(answer));
                }
                default -> {
                    say("ERROR unknown command: " + line);
                    System.exit(1);
                }
            }
        }
        bye(host);
    }

    public static void main(String[] args) {
        try {
            if (args.length == 2 && args[0].equals("serve-cs")) {
                serveCs(args[1]);
            } else if (args.length == 4 && args[0].equals("call-cs")) {
                callCs(args[1], args[2], Integer.parseInt(args[3]));
            } else if (args.length >= 3 && args.length % 2 == 1 && args[0].equals("ring")) {
                String[] peers = java.util.Arrays.copyOfRange(args, 3, args.length);
                ring(args[1], args[2], peers);
            } else {
                System.err.println("usage: node serve-cs CHANNEL | call-cs CHANNEL ENDPOINT N | "
                                   + "ring MESH RID [ENDPOINT PEER_RID]...");
                System.exit(2);
            }
        } catch (Exception e) {
            say("ERROR " + e);
            System.exit(1);
        }
        System.exit(0);
    }
}
