package io.zlink;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The README's example, and the terminator surface by reflection. */
class ExampleTest {
    @Test
    void theReadmeExampleRuns() {
        byte[] reply;
        try (Host server = new Host("server"); Host client = new Host("client")) {
            server.addCsServer("svc", "tcp://127.0.0.1:0")
                  .onRequest("svc", "hello", turn -> { turn.respond("hello", turn.payload()); return null; })
                  .start();
            client.addCsClient("svc", server.endpoint("svc")).start();
            reply = client.requestToChannel("svc").payload("hello", "hi".getBytes())
                          .timeout(Duration.ofSeconds(5)).submit().toCompletableFuture().join();
        }
        assertEquals("hi", new String(reply));
    }

    private static Method method(Class<?> c, String name, Class<?>... args) throws Exception {
        return c.getMethod(name, args);
    }

    @Test
    void theTerminatorsHaveTheirNamesAndTypes() throws Exception {
        assertEquals(CompletionStage.class, method(RequestCall.class, "submit").getReturnType());
        assertEquals(CompletionStage.class, method(RequestCall.class, "submit", Class.class).getReturnType());
        assertEquals(byte[].class, method(RequestCall.class, "submit_sync").getReturnType());
        assertEquals(Object.class, method(RequestCall.class, "submit_sync", Class.class).getReturnType());
        assertEquals(CompletionStage.class, method(RequestCall.class, "yield", Class.class).getReturnType());
        assertEquals(CompletionStage.class, method(SendCall.class, "submit").getReturnType());
        assertEquals(void.class, method(SendCall.class, "submit_sync").getReturnType());
        assertEquals(CompletionStage.class, method(SendCall.class, "yield").getReturnType());
        assertEquals(RequestCall.class, method(RequestCall.class, "timeout", Duration.class).getReturnType());
        assertTrue(AutoCloseable.class.isAssignableFrom(RequestCall.class));
        assertTrue(AutoCloseable.class.isAssignableFrom(Host.class));
        // one-ways have no timeout of their own (the family send timeout applies)
        assertThrows(NoSuchMethodException.class, () -> method(SendCall.class, "timeout", Duration.class));
    }
}
