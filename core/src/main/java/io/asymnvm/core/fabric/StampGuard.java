package io.asymnvm.core.fabric;

/**
 * The responder's check of a FLUSH stamp before it becomes the durable watermark (set by the control plane with
 * {@link NicSession#stampAt(int, long, StampGuard)}): the watermark says "every record before this position is
 * durable and valid", so the responder, not the client, must make that true.
 */
@FunctionalInterface
public interface StampGuard {
    /** Accepts no stamp check: the stamp is stored as sent (regions without a log behind the stamp word). */
    StampGuard NONE = (durable, requested) -> {
    };

    /**
     * Called when a FLUSH asks to move the watermark from {@code durable} to {@code requested} (greater): throws an
     * {@link io.asymnvm.core.AsymNvmException} to refuse it (the watermark then stays), or returns once everything
     * before {@code requested} is valid and persisted.
     */
    void admit(long durable, long requested);
}
