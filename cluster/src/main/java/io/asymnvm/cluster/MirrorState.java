package io.asymnvm.cluster;

/** A mirror's replication state as the cluster configuration records it. Only {@link #IN_SYNC} mirrors may be promoted. */
public enum MirrorState {
    /** Copying the image and the log tail; not eligible for promotion. */
    CATCHING_UP,
    /** Holds everything the backend acknowledged (SYNC) or everything up to its bounded lag (ASYNC). */
    IN_SYNC
}
