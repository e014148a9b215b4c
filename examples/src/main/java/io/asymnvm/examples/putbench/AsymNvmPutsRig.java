package io.asymnvm.examples.putbench;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.image.PersistCountingRegion;
import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.core.region.MappedRegion;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.tx.EngineStats;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * A backend node serving a PM file in the run's directory through a {@link PersistCountingRegion} (so the bytes it
 * persists are counted by area), and one frontend (id 0) over {@code local} or {@code tcp} (a free loopback port,
 * with the node's credentials), with a {@link PutStore} named {@value #STRUCTURE_NAME}. {@link #close()} detaches,
 * stops the node and unmaps the file (the caller deletes the directory).
 */
final class AsymNvmPutsRig implements AutoCloseable {
    static final String STRUCTURE_NAME = "bench-puts";
    /** Frontend 0 is the only one: two leave the heap most of a small image (the rings are 20 MiB each). */
    static final int MAX_FRONTENDS = 2;
    private static final String HOST = "127.0.0.1";

    private final PersistCountingRegion region;
    private BackendNode node;
    private AsymNvm nvm;
    private PutStore store;

    private AsymNvmPutsRig(PersistCountingRegion region) {
        this.region = region;
    }

    static AsymNvmPutsRig start(FabricKind fabric, Path directory, long pmBytes) {
        Objects.requireNonNull(fabric, "fabric");
        Path pm = directory.resolve("backend.pm");
        AsymNvmPutsRig rig = new AsymNvmPutsRig(new PersistCountingRegion(
                MappedRegion.create(pm, pmBytes, MappedRegion.MapMode.FILE)));
        try {
            rig.node = BackendNode.start(BackendConfiguration.builder(pm).size(pmBytes).maxFrontends(MAX_FRONTENDS)
                    .port(fabric == FabricKind.TCP ? 0 : -1).conclude(), rig.region);
            rig.region.classify(rig.node.superblock());
            FrontendOptions options = FrontendOptions.builder().credentials(rig.node.credentialsFile()).conclude();
            rig.nvm = fabric == FabricKind.TCP ? AsymNvm.connect(HOST, rig.node.port(), 0, options)
                    : AsymNvm.open(rig.node.localFabric(), 0, options);
            rig.store = rig.nvm.transactional(PutStore.class, new PutStore.Impl(rig.nvm, STRUCTURE_NAME));
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

    PutStore store() {
        return store;
    }

    /** Ships every redo batch and waits until the backend applied (and persisted) every committed put. */
    void drain() {
        nvm.sync();
        node.awaitReplayed();
    }

    /** The frontend's counters (commits, round trips waited, redo batches shipped). */
    EngineStats stats() {
        return nvm.stats();
    }

    /** FLUSHes (and other operations) this frontend has posted. */
    long flushesPosted() {
        return nvm.counters().flushes();
    }

    /** Bytes the backend persisted so far, by area. */
    Map<Kind, Long> persisted() {
        Map<Kind, Long> m = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            m.put(k, region.persistedBytes(k));
        }
        return m;
    }

    /** Bytes written into the image so far (NIC WRITEs, the replayer's stores), by area. */
    Map<Kind, Long> written() {
        Map<Kind, Long> m = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            m.put(k, region.writtenBytes(k));
        }
        return m;
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
                region.close();
            }
        }
    }
}
