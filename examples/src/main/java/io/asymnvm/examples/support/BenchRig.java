package io.asymnvm.examples.support;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.ExecutionMode;
import io.asymnvm.frontend.FrontendOptions;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The rig of the benchmarks that need one plain backend and frontend ({@code bench map}, {@code bench tatp},
 * {@code bench smallbank}): a backend node on a scratch PM file (under {@code /dev/shm} when present) and one
 * frontend (id 0) with a given page cache, over {@code local} or {@code tcp} (a free loopback port, with the node's
 * credentials).
 * {@link #close()} detaches, stops the node and deletes the scratch directory.
 */
public final class BenchRig implements AutoCloseable {
    private final Path directory;
    private NodeWithFrontend pair;

    private BenchRig(Path directory) {
        this.directory = directory;
    }

    /** Starts a node of {@code pmBytes} and attaches frontend 0 with a page cache of {@code cacheBytes}. */
    public static BenchRig start(FabricKind fabric, long pmBytes, long cacheBytes, String prefix) {
        return start(fabric, ExecutionMode.ASYMNVM, pmBytes, cacheBytes, ScratchDirectory.base(), prefix);
    }

    /** The same with the frontend in {@code mode} (the design, or the naive baseline). */
    public static BenchRig start(FabricKind fabric, ExecutionMode mode, long pmBytes, long cacheBytes,
                                 String prefix) {
        return start(fabric, mode, pmBytes, cacheBytes, ScratchDirectory.base(), prefix);
    }

    /** As {@link #start(FabricKind, long, long, String)}, the scratch directory made inside {@code parent}. */
    public static BenchRig start(FabricKind fabric, long pmBytes, long cacheBytes, Path parent, String prefix) {
        return start(fabric, ExecutionMode.ASYMNVM, pmBytes, cacheBytes, parent, prefix);
    }

    /** The general form: {@code mode}, and the scratch directory made inside {@code parent}. */
    public static BenchRig start(FabricKind fabric, ExecutionMode mode, long pmBytes, long cacheBytes, Path parent,
                                 String prefix) {
        Objects.requireNonNull(fabric, "fabric");
        Objects.requireNonNull(mode, "mode");
        BenchRig rig = new BenchRig(ScratchDirectory.createIn(parent, prefix));
        try {
            rig.pair = NodeWithFrontend.start(fabric,
                    BackendConfiguration.builder(rig.directory.resolve("backend.pm")).size(pmBytes), null, n -> { },
                    FrontendOptions.builder().cacheBytes(cacheBytes).mode(mode));
            return rig;
        } catch (RuntimeException e) {
            NodeWithFrontend.closeAfterFailure(rig, e);
            throw e;
        }
    }

    public AsymNvm nvm() {
        return pair.nvm();
    }

    /** Ships every redo batch and waits until the backend applied every committed transaction. */
    public void drain() {
        pair.drain();
    }

    @Override
    public void close() {
        try {
            if (pair != null) {
                pair.close();
            }
        } finally {
            ScratchDirectory.delete(directory);
        }
    }
}
