package io.zlink;

import java.util.concurrent.CompletionStage;

/**
 * A handler: runs on the host's handler pump (a runtime context) with the
 * turn. Returning null ends the turn when the method returns; returning a
 * stage keeps the turn (and its gate) until the stage completes. A thrown
 * exception, or a stage that fails, ends the turn failed (a request not
 * yet answered is then answered InternalFailure with the message).
 */
@FunctionalInterface
public interface Handler {
    CompletionStage<?> handle(Turn turn) throws Exception;
}
