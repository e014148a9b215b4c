package io.asymnvm.examples.mapbench;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.ExecutionMode;
import io.asymnvm.frontend.FrontendOptions;

import java.nio.file.Path;
import java.util.Objects;

/**
 * A backend node on a scratch PM file of a given size (under {@code /dev/shm} when present) and one frontend
 * (id 0) with a given page cache, over {@code local} ({@code AsymNvm.open(node.localFabric(), ...)}) or
 * {@code tcp} (the node listens on a free loopback port, {@code AsymNvm.connect}). {@link #close()} detaches,
 * stops the node and deletes the scratch directory.
 */
final class MapBenchRig implements AutoCloseable {
    private static final String HOST = "127.0.0.1";

    private final Path directory;
    private BackendNode node;
    private AsymNvm nvm;

    private MapBenchRig() {
        this.directory = ScratchDirectory.create("asymnvm-bench-map-");
    }

    static MapBenchRig start(FabricKind fabric, long pmBytes, long cacheBytes) {
        return start(fabric, ExecutionMode.ASYMNVM, pmBytes, cacheBytes);
    }

    /** The same with the frontend in {@code mode} (the design, or the naive baseline). */
    static MapBenchRig start(FabricKind fabric, ExecutionMode mode, long pmBytes, long cacheBytes) {
        Objects.requireNonNull(fabric, "fabric");
        Objects.requireNonNull(mode, "mode");
        MapBenchRig rig = new MapBenchRig();
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

    AsymNvm nvm() {
        return nvm;
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
