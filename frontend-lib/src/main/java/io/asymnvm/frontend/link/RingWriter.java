package io.asymnvm.frontend.link;

import io.asymnvm.core.fabric.Completion;

/**
 * Where a ring's records are posted: one node ({@link BackendLink}) or, for the semantic ring of a frontend with
 * SYNC mirrors, the backend and every mirror at the same position ({@link MirrorLinks#semanticWriter}). Posting
 * never blocks; the returned completion is the backend's.
 */
@FunctionalInterface
public interface RingWriter {
    Completion write(int region, long offset, byte[] data, int length);
}
