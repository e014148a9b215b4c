package io.asymnvm.rdma;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frontend commits over the rdma fabric's logic ({@link RdmaConnection}, {@link RdmaSession}) against a real
 * backend's control plane, joined by {@link LoopbackQueuePairs} in place of a device, with the responder's default
 * registration policy ({@link RegisteredRegions#DEFAULT_POLICY}: heap and control blocks remote-read only, rings
 * remote-write): attach hands out the keys, semantic records and redo batches go one-sided, FLUSH stamps the
 * watermark and wakes the replayer, and a second incarnation reads back what committed.
 */
@Timeout(60)
class RdmaLoopbackBackendTest {

    @TempDir
    Path dir;

    @Test
    void shouldCommitOverRdmaLogicAndReadItBackAfterReopening() {
        BackendConfiguration config = BackendConfiguration.builder(dir.resolve("node.pm")).size(16L << 20)
                .maxFrontends(2).semRingCapacity(64 << 10).redoRingCapacity(256 << 10).slabSize(256 << 10).port(-1)
                .conclude();
        try (BackendNode node = BackendNode.start(config);
             LoopbackQueuePairs link = new LoopbackQueuePairs(node.nic().regions(), RegisteredRegions.DEFAULT_POLICY,
                     1 << 20)) {
            Fabric fabric = link.fabric(node.nic(), link, RdmaOptions.defaults());
            FabricCounters.Snapshot counters;
            try (AsymNvm nvm = AsymNvm.open(fabric, 0, FrontendOptions.defaults())) {
                RdmaFallbackTest.Counter counter = nvm.transactional(RdmaFallbackTest.Counter.class,
                        new RdmaFallbackTest.CounterImpl());
                for (int i = 1; i <= 50; i++) {
                    counter.add(i);
                }
                assertEquals(1275, counter.get());
                counters = nvm.counters();
            }
            assertTrue(counters.writes() >= 50, "semantic records went as one-sided WRITEs: " + counters.writes());
            assertTrue(counters.flushes() >= 50, "each SYNC commit waited for a FLUSH message: " + counters.flushes());
            node.awaitReplayed();
            try (AsymNvm nvm = AsymNvm.open(fabric, 0, FrontendOptions.defaults())) {
                RdmaFallbackTest.Counter counter = nvm.transactional(RdmaFallbackTest.Counter.class,
                        new RdmaFallbackTest.CounterImpl());
                assertEquals(1275, counter.get(), "the next incarnation reads the replayed heap one-sided");
            }
        }
    }
}
