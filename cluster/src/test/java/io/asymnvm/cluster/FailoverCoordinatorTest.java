package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(90)
class FailoverCoordinatorTest {
    @TempDir
    Path dir;
    ZkFixture fx;
    final List<FailoverCoordinator> coordinators = new ArrayList<>();
    /** Every promote() call of every mirror, as "id@epoch", in order. */
    final List<String> promotions = new CopyOnWriteArrayList<>();
    final Map<FailoverCoordinator, ClusterSession> sessions = new ConcurrentHashMap<>();

    @BeforeEach
    void startZooKeeper() {
        fx = new ZkFixture(dir);
    }

    @AfterEach
    void stop() {
        coordinators.forEach(FailoverCoordinator::close);
        fx.close();
    }

    /** A mirror's side of promotion that records what it was asked to do. */
    final class RecordingPromotion implements Promotion {
        final String id;
        final AtomicInteger replays = new AtomicInteger();
        final long appliedTxId;

        RecordingPromotion(String id, long appliedTxId) {
            this.id = id;
            this.appliedTxId = appliedTxId;
        }

        @Override
        public long finishReplay() {
            replays.incrementAndGet();
            return appliedTxId;
        }

        @Override
        public void promote(long newEpoch, ClusterConfig config) {
            assertTrue(config.isBackend(id) && config.epoch() == newEpoch, config.toString());
            promotions.add(id + "@" + newEpoch);
        }
    }

    private FailoverCoordinator mirror(String cluster, RecordingPromotion p) {
        ClusterSession s = fx.session(cluster);
        FailoverCoordinator c = FailoverCoordinator.start(s, p.id, p);
        coordinators.add(c);
        sessions.put(c, s);
        return c;
    }

    @Test
    void shouldPromoteExactlyOneOfTwoInSyncMirrorsAndNeverACatchingUpOne() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession backend = fx.session(name);
        backend.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m2", 7002, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m3", 7003, ReplicationMode.SYNC, MirrorState.CATCHING_UP)));
        Lease.acquire(backend, backend.paths().backendLease(), "b0", 0, null);
        RecordingPromotion p1 = new RecordingPromotion("m1", 41);
        RecordingPromotion p2 = new RecordingPromotion("m2", 41);
        RecordingPromotion p3 = new RecordingPromotion("m3", 12);
        FailoverCoordinator c1 = mirror(name, p1);
        FailoverCoordinator c2 = mirror(name, p2);
        FailoverCoordinator c3 = mirror(name, p3);

        long killedAt = System.currentTimeMillis();
        ZkFixture.kill(backend);
        assertTrue(ZkFixture.await(() -> !promotions.isEmpty(), ZkFixture.LEASE_MILLIS + 15_000),
                "an in-sync mirror is promoted after the backend's lease expires");
        // let any second (wrong) promotion surface before counting
        ClusterSession observer = fx.session(name);
        assertTrue(ZkFixture.await(() -> c1.notices() > 0 && c2.notices() > 0 && c3.notEligible() > 0, 10_000));

        assertEquals(1, promotions.size(), "exactly one promotion: " + promotions);
        String winner = promotions.get(0).substring(0, 2);
        assertEquals(winner + "@2", promotions.get(0));
        Versioned<ClusterConfig> now = observer.store().read();
        assertEquals(2, now.value().epoch());
        assertEquals(winner, now.value().backend().id());
        assertEquals(1, now.version(), "the configuration changed once");
        String loser = winner.equals("m1") ? "m2" : "m1";
        assertTrue(now.value().mirror(loser).orElseThrow().inSync());
        assertEquals(0, p3.replays.get(), "a CATCHING_UP mirror never starts a promotion");
        assertTrue(c3.notEligible() > 0);
        assertEquals(winner, new String(observer.curator().getData().forPath(observer.paths().backendLease()),
                StandardCharsets.UTF_8), "the promoted mirror holds the backend lease");

        FailoverCoordinator won = winner.equals("m1") ? c1 : c2;
        FailoverReport r = won.report().orElseThrow();
        assertEquals(1, r.oldEpoch());
        assertEquals(2, r.newEpoch());
        assertEquals(41, r.appliedTxId());
        assertTrue(won.backendLease().orElseThrow().isHeld());
        System.out.printf("failover (lease %d ms): detection %d ms, config committed +%.1f ms, serving +%.1f ms%n",
                ZkFixture.LEASE_MILLIS, r.detectionMillisSince(killedAt), r.configCommitNanos() / 1e6,
                r.promotionNanos() / 1e6);
        assertFalse((winner.equals("m1") ? c2 : c1).report().isPresent());

        // the new backend dies too: the remaining in-sync mirror takes epoch 3
        won.close();
        ZkFixture.kill(sessions.get(won));
        assertTrue(ZkFixture.await(() -> promotions.size() == 2, ZkFixture.LEASE_MILLIS + 15_000), "" + promotions);
        assertEquals(loser + "@3", promotions.get(1));
        assertEquals(3, observer.store().read().value().epoch());
        assertEquals(0, p3.replays.get());
    }

    @Test
    void shouldNotPromoteWithoutZooKeeperAndStayConsistentAfterItReturns() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession backend = fx.session(name);
        backend.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m2", 7002, ReplicationMode.SYNC, MirrorState.IN_SYNC)));
        List<String> fenced = new CopyOnWriteArrayList<>();
        BackendGuard guard = BackendGuard.start(backend, "b0", ZkFixture.IMAGE, 1, ZkFixture.LEASE_MILLIS,
                (c, why) -> fenced.add(why));
        RecordingPromotion p1 = new RecordingPromotion("m1", 7);
        RecordingPromotion p2 = new RecordingPromotion("m2", 7);
        FailoverCoordinator c1 = mirror(name, p1);
        FailoverCoordinator c2 = mirror(name, p2);

        fx.stop();
        // every session outlives its timeout without ZooKeeper: nobody may promote, the backend keeps serving
        Thread.sleep(4L * ZkFixture.LEASE_MILLIS);
        assertEquals(List.of(), promotions);
        assertEquals(0, p1.replays.get() + p2.replays.get());
        assertTrue(guard.isServing());
        assertEquals(List.of(), fenced);

        fx.restart();
        ClusterSession observer = fx.session(name);
        // consistent: the configuration's backend holds the backend lease, and it is the only node serving
        boolean settled = ZkFixture.await(() -> consistent(observer, guard, fenced), 20_000);
        Versioned<ClusterConfig> now = observer.store().read();
        System.out.printf("after ZooKeeper returned: epoch %d, backend %s, promotions %s, backend fenced %s%n",
                now.value().epoch(), now.value().backend().id(), promotions, fenced);
        assertTrue(settled, "cluster did not settle: " + now + " promotions " + promotions + " fenced " + fenced);
        assertTrue(promotions.size() <= 1, "" + promotions);
        assertEquals(now.value().epoch() == 1 ? 0 : 1, promotions.size());
        assertEquals(now.value().epoch() == 1 ? 0 : 1, fenced.size());
        // the mirrors re-check the lease once reconnected; the cluster is still consistent after they did
        assertTrue(ZkFixture.await(() -> c1.notices() > 1 && c2.notices() > 1, 20_000),
                "mirrors re-checked the lease after reconnecting: " + c1.notices() + ", " + c2.notices());
        assertTrue(ZkFixture.await(() -> consistent(observer, guard, fenced), 20_000));
        assertEquals(now.value().epoch(), observer.store().read().value().epoch());
        assertTrue(promotions.size() <= 1, "" + promotions);
    }

    private static boolean consistent(ClusterSession observer, BackendGuard guard, List<String> fenced) {
        try {
            ClusterConfig config = observer.store().read().value();
            byte[] holder = observer.curator().getData().forPath(observer.paths().backendLease());
            boolean holderIsBackend = config.isBackend(new String(holder, StandardCharsets.UTF_8));
            boolean oldBackendRight = config.isBackend("b0") ? guard.isServing() && guard.lease().isHeld()
                    : !guard.isServing() && fenced.size() == 1;
            return holderIsBackend && oldBackendRight;
        } catch (Exception e) {
            return false;
        }
    }
}
