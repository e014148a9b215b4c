package io.asymnvm.core.fabric;

/**
 * The responder's application logic for two-sided control calls (attach, slab grants). One-sided operations
 * never reach it. Implementations reply with a payload or throw {@link io.asymnvm.core.AsymNvmException}, which
 * the transport turns into an error reply.
 */
public interface ControlHandler {

    byte[] handle(NicSession session, byte[] request);

    /** The session's connection is gone. */
    default void sessionClosed(NicSession session) {
    }
}
