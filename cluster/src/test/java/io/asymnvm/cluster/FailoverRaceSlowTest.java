package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.RepetitionInfo;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/** The failover race of {@link FailoverCoordinatorTest}, many times, with three in-sync mirrors (run with -Pslow). */
@Tag("slow")
@Timeout(60)
class FailoverRaceSlowTest extends SharedZooKeeperTest {
    @RepeatedTest(25)
    void shouldPromoteExactlyOneMirrorPerLostBackend(RepetitionInfo rep) throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession backend = fx.session(name);
        backend.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m2", 7002, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m3", 7003, ReplicationMode.SYNC, MirrorState.IN_SYNC)));
        Lease.acquire(backend, backend.paths().backendLease(), "b0", 0, null);
        List<String> promoted = new CopyOnWriteArrayList<>();
        List<FailoverCoordinator> coordinators = new ArrayList<>();
        try {
            for (String id : List.of("m1", "m2", "m3")) {
                coordinators.add(FailoverCoordinator.start(fx.session(name), id, new Promotion() {
                    @Override
                    public long finishReplay() {
                        return 1;
                    }

                    @Override
                    public void promote(long newEpoch, ClusterConfig config) {
                        promoted.add(id + "@" + newEpoch);
                    }
                }));
            }
            assertTrue(ZkFixture.await(() -> coordinators.stream().allMatch(FailoverCoordinator::watching), 10_000));
            long killedAt = System.currentTimeMillis();
            ZkFixture.kill(backend);
            assertTrue(ZkFixture.await(() -> !promoted.isEmpty(), ZkFixture.LEASE_MILLIS + 15_000));
            // give the losers time to see the lease change (and to misbehave, if they would); not asserted: under
            // heavy load a mirror's own session may lapse and its cache reload the winner's lease silently
            ZkFixture.await(() -> coordinators.stream().allMatch(c -> c.leaseChanges() > 0), 5_000);
            assertEquals(1, promoted.size(), "" + promoted);
            ClusterConfig now = fx.session(name).store().read().value();
            assertEquals(2, now.epoch());
            assertEquals(promoted.get(0), now.backend().id() + "@2");
            FailoverReport r = coordinators.stream().flatMap(c -> c.report().stream()).findFirst().orElseThrow();
            System.out.printf("race %d: %s won; detection %d ms, serving +%.1f ms%n", rep.getCurrentRepetition(),
                    r.nodeId(), r.detectionMillisSince(killedAt), r.promotionNanos() / 1e6);
        } finally {
            coordinators.forEach(FailoverCoordinator::close);
            fx.closeSessions();
        }
    }
}
