package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.net.ServerSocket;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ClusterStoreTest extends SharedZooKeeperTest {
    private static ClusterConfig twoMirrors() {
        return ZkFixture.config("b0",
                ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m2", 7002, ReplicationMode.SYNC, MirrorState.IN_SYNC));
    }

    @Test
    void shouldCreateOnceAndReadBack() {
        ClusterStore store = fx.session(ZkFixture.freshClusterName()).store();
        assertTrue(store.readIfPresent().isEmpty());
        store.create(twoMirrors());
        Versioned<ClusterConfig> v = store.read();
        assertEquals(twoMirrors(), v.value());
        assertEquals(0, v.version());
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> store.create(twoMirrors().promote("m1")));
        assertTrue(e.getMessage().contains("already exists") && e.getMessage().contains("epoch 1"), e.getMessage());
        assertEquals(twoMirrors(), store.read().value());
    }

    @Test
    void shouldLetExactlyOneOfTwoConcurrentWritersWin() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterStore a = fx.session(name).store();
        ClusterStore b = fx.session(name).store();
        a.create(twoMirrors());
        // both read version 0, then race: each promotes a different mirror to epoch 2
        Versioned<ClusterConfig> seenA = a.read();
        Versioned<ClusterConfig> seenB = b.read();
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Boolean> fa = pool.submit(() -> {
                start.await(10, TimeUnit.SECONDS);
                return a.compareAndSet(seenA.version(), seenA.value().promote("m1"));
            });
            Future<Boolean> fb = pool.submit(() -> {
                start.await(10, TimeUnit.SECONDS);
                return b.compareAndSet(seenB.version(), seenB.value().promote("m2"));
            });
            boolean wonA = fa.get(20, TimeUnit.SECONDS);
            boolean wonB = fb.get(20, TimeUnit.SECONDS);
            assertTrue(wonA ^ wonB, "exactly one CAS wins: a=" + wonA + " b=" + wonB);
            Versioned<ClusterConfig> now = a.read();
            assertEquals(2, now.value().epoch());
            assertEquals(wonA ? "m1" : "m2", now.value().backend().id());
            assertEquals(1, now.version());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldRefuseTwoBackendsInOneEpochAndEpochLowering() {
        ClusterStore store = fx.session(ZkFixture.freshClusterName()).store();
        store.create(twoMirrors());
        assertTrue(store.compareAndSet(0, twoMirrors().promote("m1")));
        Versioned<ClusterConfig> now = store.read();
        // m2 claims epoch 2 too, from the current version: refused by rule, not by a version race
        ClusterConfig rival = new ClusterConfig(2, ZkFixture.IMAGE, new NodeEndpoint("m2", "127.0.0.1", 7002),
                List.of());
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> store.compareAndSet(now.version(), rival));
        assertEquals(ErrorCode.STALE_EPOCH, e.errorCode());
        assertTrue(e.getMessage().contains("claims epoch 2") && e.getMessage().contains("holds epoch 2"),
                e.getMessage());
        // lowering the epoch, even with the same backend
        ClusterConfig lower = new ClusterConfig(1, ZkFixture.IMAGE, now.value().backend(), now.value().mirrors());
        e = assertThrows(AsymNvmException.class, () -> store.compareAndSet(now.version(), lower));
        assertEquals(ErrorCode.STALE_EPOCH, e.errorCode());
        assertTrue(e.getMessage().contains("epoch 2") && e.getMessage().contains("proposed epoch 1"), e.getMessage());
        // another image
        ClusterConfig other = new ClusterConfig(3, UUID.randomUUID(), now.value().backend(), List.of());
        e = assertThrows(AsymNvmException.class, () -> store.compareAndSet(now.version(), other));
        assertEquals(ErrorCode.IDENTITY_MISMATCH, e.errorCode());
        assertTrue(e.getMessage().contains(ZkFixture.IMAGE.toString()), e.getMessage());
        // nothing was written by the refusals; a stale version is a plain conflict
        assertEquals(now, store.read());
        assertFalse(store.compareAndSet(0, now.value().withMirrorState("m2", MirrorState.CATCHING_UP)));
        assertTrue(store.compareAndSet(now.version(), now.value().withMirrorState("m2", MirrorState.CATCHING_UP)));
    }

    @Test
    void shouldTellWatchersEveryNewConfiguration() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterStore store = fx.session(name).store();
        store.create(twoMirrors());
        BlockingQueue<ClusterConfig> seen = new LinkedBlockingQueue<>();
        ClusterStore.Watch watch = fx.session(name).store().watch(seen::add);
        try {
            assertEquals(twoMirrors(), seen.poll(10, TimeUnit.SECONDS));
            ClusterConfig next = twoMirrors().withMirrorState("m2", MirrorState.CATCHING_UP);
            assertTrue(store.compareAndSet(0, next));
            assertEquals(next, seen.poll(10, TimeUnit.SECONDS));
            ClusterConfig promoted = next.promote("m1");
            assertTrue(store.compareAndSet(1, promoted));
            assertEquals(promoted, seen.poll(10, TimeUnit.SECONDS));
        } finally {
            watch.close();
        }
    }

    @Test
    void shouldNameConnectStringAndTimeoutWhenZooKeeperIsUnreachable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ClusterOptions o = ClusterOptions.of("127.0.0.1:" + port).withConnectTimeoutMillis(700);
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> ClusterSession.connect(o));
        assertEquals(ErrorCode.TIMEOUT, e.errorCode());
        assertTrue(e.getMessage().contains("127.0.0.1:" + port) && e.getMessage().contains("700 ms"), e.getMessage());
    }

    @Test
    void shouldRefuseBadOptionsNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ClusterOptions.of("localhost"));
        assertTrue(e.getMessage().contains("'localhost'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ClusterOptions.of("h:1").withLeaseMillis(5));
        assertTrue(e.getMessage().contains("[20, 600000]") && e.getMessage().contains(": 5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ClusterOptions.of("h:1").withClusterName("a/b"));
        assertTrue(e.getMessage().contains("'a/b'"), e.getMessage());
    }

    @Test
    void shouldLetAFrontendWaitForTheNextEpoch() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterStore admin = fx.session(name).store();
        ClusterStore frontend = fx.session(name).store();
        admin.create(twoMirrors());
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> frontend.awaitEpochAbove(1, 200));
        assertEquals(ErrorCode.TIMEOUT, e.errorCode());
        assertTrue(e.getMessage().contains("above epoch 1") && e.getMessage().contains("still at epoch 1"),
                e.getMessage());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<ClusterConfig> waiting = pool.submit(() -> frontend.awaitEpochAbove(1, 20_000));
            assertTrue(admin.compareAndSet(0, twoMirrors().withMirrorState("m2", MirrorState.CATCHING_UP)));
            assertTrue(admin.compareAndSet(1, admin.read().value().promote("m1")));
            ClusterConfig next = waiting.get(30, TimeUnit.SECONDS);
            assertEquals(2, next.epoch());
            assertEquals("m1", next.backend().id());
            assertEquals(next, frontend.awaitEpochAbove(1, 0), "an already newer configuration returns at once");
        } finally {
            pool.shutdownNow();
        }
    }
}
