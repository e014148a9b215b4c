package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class BackendGuardTest extends SharedZooKeeperTest {
    private static ClusterConfig withMirror() {
        return ZkFixture.config("b0", ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC));
    }

    @Test
    void shouldRefuseAReplacedBackendNamingBothEpochs() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession admin = fx.session(name);
        admin.store().create(withMirror());
        assertTrue(admin.store().compareAndSet(0, withMirror().promote("m1")));
        ClusterSession old = fx.session(name);
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> BackendGuard.start(old, "b0", ZkFixture.IMAGE, 1, 0, (c, why) -> { }));
        assertEquals(ErrorCode.STALE_EPOCH, e.errorCode());
        assertTrue(e.getMessage().contains("epoch 2") && e.getMessage().contains("superblock epoch 1"),
                e.getMessage());
        assertNull(old.curator().checkExists().forPath(old.paths().backendLease()), "no lease taken by a refusal");
    }

    @Test
    void shouldRefuseAnotherNodeAnotherImageAndAConfigurationFromThePast() {
        String name = ZkFixture.freshClusterName();
        ClusterSession s = fx.session(name);
        s.store().create(withMirror());
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> BackendGuard.start(s, "b9", ZkFixture.IMAGE, 1, 0, (c, why) -> { }));
        assertEquals(ErrorCode.STALE_EPOCH, e.errorCode());
        assertTrue(e.getMessage().contains("names backend b0@") && e.getMessage().contains("'b9'"), e.getMessage());
        UUID other = UUID.randomUUID();
        e = assertThrows(AsymNvmException.class, () -> BackendGuard.start(s, "b0", other, 1, 0, (c, why) -> { }));
        assertEquals(ErrorCode.IDENTITY_MISMATCH, e.errorCode());
        assertTrue(e.getMessage().contains(other.toString()) && e.getMessage().contains(ZkFixture.IMAGE.toString()),
                e.getMessage());
        e = assertThrows(AsymNvmException.class,
                () -> BackendGuard.start(s, "b0", ZkFixture.IMAGE, 3, 0, (c, why) -> { }));
        assertEquals(ErrorCode.STALE_EPOCH, e.errorCode());
        assertTrue(e.getMessage().contains("superblock epoch 3") && e.getMessage().contains("epoch 1"),
                e.getMessage());
    }

    @Test
    void shouldHoldTheLeaseAndFenceItselfWhenAMirrorIsPromoted() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession backend = fx.session(name);
        backend.store().create(withMirror());
        List<String> fenced = new CopyOnWriteArrayList<>();
        BackendGuard guard = BackendGuard.start(backend, "b0", ZkFixture.IMAGE, 1, 0, (c, why) -> fenced.add(why));
        assertTrue(guard.isServing());
        assertTrue(guard.lease().isHeld());
        assertEquals(1, guard.epoch());
        // a rival backend cannot start while b0 holds the lease, even if the configuration named it
        ClusterSession admin = fx.session(name);
        Stat stat = admin.curator().checkExists().forPath(admin.paths().backendLease());
        assertEquals(backend.sessionId(), stat.getEphemeralOwner());

        // an operator (or a coordinator that saw the lease lapse) promotes m1
        Versioned<ClusterConfig> v = admin.store().read();
        assertTrue(admin.store().compareAndSet(v.version(), v.value().promote("m1")));
        assertTrue(ZkFixture.await(() -> !guard.isServing() && fenced.size() == 1, 10_000),
                "the old backend fences itself");
        assertTrue(fenced.get(0).contains("epoch 2") && fenced.get(0).contains("served epoch 1"), fenced.get(0));
        assertTrue(ZkFixture.await(() -> {
            try {
                return admin.curator().checkExists().forPath(admin.paths().backendLease()) == null;
            } catch (Exception e) {
                return false;
            }
        }, 10_000), "the fenced backend released its lease");
        guard.close();
        assertEquals(1, fenced.size(), "fenced once");
    }

    @Test
    void shouldRefuseToStartWhileAnotherNodeHoldsTheBackendLease() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession mirror = fx.session(name);
        mirror.store().create(withMirror());
        try (Lease promoting = Lease.acquire(mirror, mirror.paths().backendLease(), "m1", 0, null)) {
            ClusterSession backend = fx.session(name);
            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> BackendGuard.start(backend, "b0", ZkFixture.IMAGE, 1, 100, (c, why) -> { }));
            assertEquals(ErrorCode.NOT_PRIMARY, e.errorCode());
            assertTrue(e.getMessage().contains("held by node 'm1'"), e.getMessage());
            assertTrue(promoting.isHeld());
            assertEquals("m1", new String(backend.curator().getData().forPath(backend.paths().backendLease()),
                    StandardCharsets.UTF_8));
        }
    }

    @Test
    void shouldRestartQuicklyByReplacingItsOwnStaleLease() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession first = fx.session(name);
        first.store().create(withMirror());
        BackendGuard.start(first, "b0", ZkFixture.IMAGE, 1, 0, (c, why) -> { });
        ZkFixture.kill(first);
        ClusterSession second = fx.session(name);
        long t0 = System.nanoTime();
        BackendGuard again = BackendGuard.start(second, "b0", ZkFixture.IMAGE, 1, 0, (c, why) -> { });
        System.out.printf("restarted backend holds its lease again after %.1f ms (lease %d ms)%n",
                (System.nanoTime() - t0) / 1e6, ZkFixture.LEASE_MILLIS);
        assertTrue(again.isServing());
        assertEquals(second.sessionId(),
                second.curator().checkExists().forPath(second.paths().backendLease()).getEphemeralOwner());
        again.close();
        assertFalse(again.isServing());
    }

    @Test
    void shouldTakeItsLeaseBackWhenItsZnodeIsDeletedWhileConnected() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession backend = fx.session(name);
        backend.store().create(withMirror());
        BackendGuard guard = BackendGuard.start(backend, "b0", ZkFixture.IMAGE, 1, 0, (c, why) -> { });
        ClusterSession admin = fx.session(name);
        admin.curator().delete().forPath(admin.paths().backendLease());
        assertTrue(ZkFixture.await(() -> {
            try {
                Stat s = admin.curator().checkExists().forPath(admin.paths().backendLease());
                return s != null && s.getEphemeralOwner() == backend.sessionId() && guard.lease().isHeld();
            } catch (Exception e) {
                return false;
            }
        }, 10_000), "the backend, still named by the configuration, reclaims its lease");
        assertTrue(guard.isServing());
        guard.close();
    }
}
