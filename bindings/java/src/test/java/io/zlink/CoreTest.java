package io.zlink;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Core basics through the binding: sockets, records, poller, timer. */
class CoreTest {
    private static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    @Test
    void pairMovesAWholeRecordAndThePollerSeesIt() {
        try (Context ctx = new Context();
             Socket a = ctx.socket(Socket.PAIR);
             Socket c = ctx.socket(Socket.PAIR);
             Poller p = new Poller()) {
            a.bind("inproc://core-pair");
            c.connect("inproc://core-pair");
            assertEquals(Tables.RECV_NO_DATA, a.recv(Socket.DONTWAIT).result);
            assertEquals(Tables.CONFIG_OK, p.add(a, 7, Poller.POLLIN));
            assertEquals(1, p.size());
            assertEquals(0, p.await(4, 0).count);
            c.send(b("hello"), b("world"));
            Poller.Wait w = p.await(4, 5000);
            assertEquals(1, w.count);
            assertEquals(7, w.events[0].user);
            assertEquals(Poller.SOURCE_SOCKET, w.events[0].sourceKind);
            assertTrue((w.events[0].events & Poller.POLLIN) != 0);
            Socket.Record r = a.recv(0);
            assertTrue(r.ok(), r.toString());
            assertEquals(2, r.parts.length);
            assertEquals("hello", new String(r.parts[0], StandardCharsets.UTF_8));
            assertEquals("world", new String(r.parts[1], StandardCharsets.UTF_8));
            assertEquals(Tables.CONFIG_OK, p.remove(a));
            assertEquals(Tables.CONFIG_NOT_FOUND, p.remove(a));
        }
    }

    @Test
    void aMonitorReportsReadinessAndPendingRecords() throws Exception {
        try (Context ctx = new Context();
             Socket r = ctx.socket(Socket.ROUTER);
             Socket d = ctx.socket(Socket.DEALER)) {
            r.bind("tcp://127.0.0.1:0");
            Socket.Monitor m = r.monitor();
            long[] st = m.status();
            assertEquals(0, st[0] & Socket.Monitor.STATE_READY, "no peer yet");
            assertNotEquals(0, st[1] & Socket.Monitor.DETAIL_FLOW_STATE, "a ROUTER reports its flow state");
            d.connect(r.lastEndpoint());
            d.send(b("one"));
            d.send(b("two"));
            long end = System.nanoTime() + 10_000_000_000L;
            while ((m.status()[0] & Socket.Monitor.STATE_READY) == 0 || m.status()[4] < 2) {
                assertTrue(System.nanoTime() < end, "ready with two records pending: " + java.util.Arrays.toString(m.status()));
                Thread.sleep(1);
            }
            assertEquals(0, m.status()[6], "nobody pauses the ROUTER");
            assertThrows(ZLinkException.class, r::monitor, "a second monitor of one socket");
            m.close();
            m.close(); // once only
        }
    }

    @Test
    void aTimerFiresThroughThePoller() {
        try (Timer t = new Timer(); Poller p = new Poller()) {
            assertEquals(-Tables.RECV_NO_DATA, t.recv(Socket.DONTWAIT));
            assertEquals(Tables.CONFIG_OK, p.addTimer(t, 42));
            assertEquals(Tables.CONFIG_OK, t.start(1_000_000, 3));
            Poller.Wait w = p.await(2, 5000);
            assertEquals(1, w.count);
            assertEquals(Poller.SOURCE_TIMER, w.events[0].sourceKind);
            assertEquals(42, w.events[0].user);
            assertTrue(t.recv(0) >= 1);
            assertEquals(Tables.CLOSE_BUSY, t.destroy(), "a timer a poller holds is busy");
            assertEquals(Tables.CONFIG_OK, p.removeTimer(t));
        }
    }

    @Test
    void aClosedSocketAnswersAsClosed() {
        try (Context ctx = new Context()) {
            Socket s = ctx.socket(Socket.DEALER);
            assertEquals(Tables.CLOSE_OK, s.closeResult());
            ZLinkException e = assertThrows(ZLinkException.class, () -> s.bind("inproc://closed"));
            assertEquals(Tables.ERRNO_ESHUTDOWN, e.errno());
        }
    }

    @Test
    void routerAnswersADealerRequest() {
        try (Context ctx = new Context();
             Socket r = ctx.socket(Socket.ROUTER);
             Socket d = ctx.socket(Socket.DEALER)) {
            r.bind("inproc://core-req");
            d.routingId(b("d1")).connect("inproc://core-req");
            long[] id = new long[1];
            assertEquals(Tables.SUBMIT_OK, d.requestResult(null, 0, 5000, id, b("ask")));
            assertNotEquals(0, id[0]);
            Socket.Record q = r.routerRecv(0);
            assertTrue(q.ok(), q.toString());
            assertNotEquals(0, q.token);
            assertArrayEquals(b("d1"), q.routingId);
            assertEquals(Tables.SUBMIT_OK, r.replyResult(q.routingId, q.token, b("answer")));
            d.option(Socket.RCVTIMEO, 5000);
            Socket.Completion c = d.completion(0);
            assertEquals(Tables.RECV_OK, c.result);
            assertEquals(id[0], c.id);
            assertEquals(Tables.REQUEST_OK, c.requestResult);
            assertEquals("answer", new String(c.replyParts[0], StandardCharsets.UTF_8));
        }
    }
}
