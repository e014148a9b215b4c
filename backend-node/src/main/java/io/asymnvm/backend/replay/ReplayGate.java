package io.asymnvm.backend.replay;

import java.util.List;

/**
 * What the {@link ReplayAgent} may apply, by role. A backend ({@link #ownership}) applies every complete batch whose
 * writes lie in slabs its frontend owns. A mirror applies only what its backend shipped (up to a redo limit per
 * frontend) and keeps its slab owner table in step with the stream instead of checking against it (see
 * {@code io.asymnvm.backend.mirror.MirrorReplayGate}). Called on the replayer's thread only.
 */
public interface ReplayGate {
    /** {@link #admit}'s answer to retry the batch on a later pass. */
    String WAIT = "wait";

    /** The redo position up to which frontend {@code frontendId}'s batches may be applied. */
    default long limit(int frontendId) {
        return Long.MAX_VALUE;
    }

    /**
     * Before a batch of {@code frontendId} is applied: {@code writes} are its heap ranges {offset, length}.
     * Returns null to apply it, {@link #WAIT} to retry it later, or why it must not be applied (replay of that
     * frontend stops).
     */
    String admit(int frontendId, List<long[]> writes);

    /** Once per pass, before the frontends are visited (a mirror applies its pending slab table changes). */
    default void beginPass() {
    }

    /** The backend's rule: every write lies in slabs the frontend owns. */
    static ReplayGate ownership(io.asymnvm.backend.slab.SlabTable slabs) {
        return (frontendId, writes) -> {
            for (long[] w : writes) {
                if (!slabs.owns(frontendId, w[0], w[1])) {
                    return "redo write [" + w[0] + ", " + (w[0] + w[1]) + ") outside the slabs granted to frontend "
                            + frontendId;
                }
            }
            return null;
        };
    }
}
