package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class MirrorLeasesTest extends SharedZooKeeperTest {
    /**
     * The lease of every session here. With the 1 s default, a loaded machine (load average 30-40 on 2 cores) kept
     * this JVM, which runs ZooKeeper and all four clients, from running for more than a second often enough that
     * Curator expired every session (8 of 25 runs failed: the live set empty, or m2's lease lapsed so the impostor
     * got it; with 3 s, 1 of 20 at the same load). Nothing here depends on the lease's length; 3 s is what CI and
     * the drills use (README, "Running a cluster").
     */
    private static final int LEASE_MILLIS = 3_000;

    @Test
    void shouldSeeMirrorsComeAndGoAndLetTheBackendTakeALapsedOneOutOfSync() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession backend = fx.session(name, LEASE_MILLIS);
        backend.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m2", 7002, ReplicationMode.SYNC, MirrorState.IN_SYNC)));
        Lease.acquire(backend, backend.paths().backendLease(), "b0", 0, null);
        AtomicReference<Set<String>> seen = new AtomicReference<>(Set.of());
        try (MirrorLeases live = MirrorLeases.watch(backend, seen::set)) {
            ClusterSession m1 = fx.session(name, LEASE_MILLIS);
            ClusterSession m2 = fx.session(name, LEASE_MILLIS);
            MirrorLeases.hold(m1, "m1", null);
            MirrorLeases.hold(m2, "m2", null);
            assertTrue(ZkFixture.await(() -> seen.get().equals(Set.of("m1", "m2")), 10_000), "" + seen.get());
            // the backend lease is not a mirror
            assertEquals(Set.of("m1", "m2"), live.live());
            // a second process claiming m2 is refused after waiting one lease
            ClusterSession impostor = fx.session(name, LEASE_MILLIS);
            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> Lease.acquire(impostor, impostor.paths().mirrorLease("m2"), "m9", 0, null));
            assertEquals(ErrorCode.NOT_PRIMARY, e.errorCode());

            ZkFixture.kill(m1);
            assertTrue(ZkFixture.await(() -> seen.get().equals(Set.of("m2")), LEASE_MILLIS + 10_000),
                    "" + seen.get());
            Versioned<ClusterConfig> v = backend.store().update(c -> c.withMirrorState("m1", MirrorState.CATCHING_UP),
                    5);
            assertEquals(MirrorState.CATCHING_UP, v.value().mirror("m1").orElseThrow().state());
            assertEquals(1, v.version());
            assertEquals(v, backend.store().read());
            assertEquals(1, v.value().epoch(), "a mirror's state changes without a new epoch");
        }
    }

    @Test
    void shouldReadTheLiveSetAfreshWhenZooKeeperComesBackAndFollowTheLeasesThatChangeThen() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession backend = fx.session(name, LEASE_MILLIS);
        ClusterSession m1 = fx.session(name, LEASE_MILLIS);
        MirrorLeases.hold(m1, "m1", null);
        AtomicReference<Set<String>> seen = new AtomicReference<>(Set.of());
        try (MirrorLeases live = MirrorLeases.watch(backend, seen::set)) {
            assertTrue(ZkFixture.await(() -> seen.get().equals(Set.of("m1")), 10_000), "" + seen.get());
            assertEquals(0, live.reloads());

            fx.stop();
            fx.restart();
            // the backend's client reconnects (RECONNECTED, or a new session if this one lapsed under load): the set
            // is read afresh
            assertTrue(ZkFixture.await(() -> live.reloads() >= 1, 20_000), "reloads " + live.reloads());

            // leases that change once ZooKeeper is back are followed by the reloaded cache
            m1.close();
            ClusterSession m2 = fx.session(name, LEASE_MILLIS);
            MirrorLeases.hold(m2, "m2", null);
            assertTrue(ZkFixture.await(() -> seen.get().equals(Set.of("m2")), 20_000), "" + seen.get());
            assertEquals(Set.of("m2"), live.live());
        }
    }
}
