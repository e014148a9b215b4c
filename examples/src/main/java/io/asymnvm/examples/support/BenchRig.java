package io.asymnvm.examples.support;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
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
    private static final String HOST = "127.0.0.1";

    private final Path directory;
    private BackendNode node;
    private AsymNvm nvm;

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
            rig.node = BackendNode.start(BackendConfiguration.builder(rig.directory.resolve("backend.pm"))
                    .size(pmBytes).port(fabric == FabricKind.TCP ? 0 : -1).conclude());
            FrontendOptions options = FrontendOptions.builder().cacheBytes(cacheBytes).mode(mode)
                    .credentials(rig.node.credentialsFile()).conclude();
            rig.nvm = fabric == FabricKind.TCP ? AsymNvm.connect(HOST, rig.node.port(), 0, options)
                    : AsymNvm.open(rig.node.localFabric(), 0, options);
            return rig;
        } catch (RuntimeException e) {
            try {
                rig.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    public AsymNvm nvm() {
        return nvm;
    }

    /** Ships every redo batch and waits until the backend applied every committed transaction. */
    public void drain() {
        nvm.sync();
        node.awaitReplayed();
    }

    @Override
    public void close() {
        try {
            if (nvm != null) {
                nvm.close();
            }
        } finally {
            try {
                if (node != null) {
                    node.close();
                }
            } finally {
                ScratchDirectory.delete(directory);
            }
        }
    }
}
