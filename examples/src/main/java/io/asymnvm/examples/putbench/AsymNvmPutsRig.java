package io.asymnvm.examples.putbench;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.image.PersistCountingRegion;
import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.core.region.MappedRegion;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.support.NodeWithFrontend;
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

    private final PersistCountingRegion region;
    private NodeWithFrontend pair;
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
            rig.pair = NodeWithFrontend.start(fabric,
                    BackendConfiguration.builder(pm).size(pmBytes).maxFrontends(MAX_FRONTENDS), rig.region,
                    node -> rig.region.classify(node.superblock()), FrontendOptions.builder());
            AsymNvm nvm = rig.pair.nvm();
            rig.store = nvm.transactional(PutStore.class, new PutStore.Impl(nvm, STRUCTURE_NAME));
            return rig;
        } catch (RuntimeException e) {
            NodeWithFrontend.closeAfterFailure(rig, e);
            throw e;
        }
    }

    PutStore store() {
        return store;
    }

    /** Ships every redo batch and waits until the backend applied (and persisted) every committed put. */
    void drain() {
        pair.drain();
    }

    /** The frontend's counters (commits, round trips waited, redo batches shipped). */
    EngineStats stats() {
        return pair.nvm().stats();
    }

    /** FLUSHes (and other operations) this frontend has posted. */
    long flushesPosted() {
        return pair.nvm().counters().flushes();
    }
    /** Write-back calls the backend made on its image so far (each an msync on a file). */
    long syncs() {
        return region.syncs();
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
            if (pair != null) {
                pair.close();
            }
        } finally {
            region.close();
        }
    }
}
