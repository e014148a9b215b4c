package io.asymnvm.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
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
        final AtomicInteger failedPromotions = new AtomicInteger();
        final long appliedTxId;
        volatile boolean behind;
        volatile boolean failPromote;

        RecordingPromotion(String id, long appliedTxId) {
            this.id = id;
            this.appliedTxId = appliedTxId;
        }

        @Override
        public long finishReplay() {
            replays.incrementAndGet();
            if (behind) {
                throw new AsymNvmException(ErrorCode.REPLICA_BEHIND, id + " applied txid " + appliedTxId);
            }
            return appliedTxId;
        }

        @Override
        public void promote(long newEpoch, ClusterConfig config) {
            assertTrue(config.isBackend(id) && config.epoch() == newEpoch, config.toString());
            if (failPromote) {
                failedPromotions.incrementAndGet();
                throw new IllegalStateException(id + " cannot serve (test)");
            }
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

        assertTrue(ZkFixture.await(() -> c1.watching() && c2.watching() && c3.watching(), 10_000));
        long killedAt = System.currentTimeMillis();
        ZkFixture.kill(backend);
        assertTrue(ZkFixture.await(() -> !promotions.isEmpty(), ZkFixture.LEASE_MILLIS + 15_000),
                "an in-sync mirror is promoted after the backend's lease expires");
        // give every mirror time to see the lease change (and to misbehave, if it would); not asserted: under heavy
        // load a mirror's own session may lapse and its cache reload the winner's lease silently
        ClusterSession observer = fx.session(name);
        ZkFixture.await(() -> c1.leaseChanges() > 0 && c2.leaseChanges() > 0 && c3.leaseChanges() > 0, 5_000);

        assertEquals(1, promotions.size(), "exactly one promotion: " + promotions);
        String winner = promotions.get(0).substring(0, 2);
        assertEquals(winner + "@2", promotions.get(0));
        Versioned<ClusterConfig> now = observer.store().read();
        assertEquals(2, now.value().epoch());
        assertEquals(winner, now.value().backend().id());
        assertEquals(1, now.version(), "the configuration changed once");
        String loser = winner.equals("m1") ? "m2" : "m1";
        // the loser followed the old backend: CATCHING_UP until the new backend's shipper has it in sync
        assertEquals(MirrorState.CATCHING_UP, now.value().mirror(loser).orElseThrow().state());
        assertEquals(0, p3.replays.get(), "a CATCHING_UP mirror never starts a promotion");
        assertEquals(winner, new String(observer.curator().getData().forPath(observer.paths().backendLease()),
                StandardCharsets.UTF_8), "the promoted mirror holds the backend lease");

        FailoverCoordinator won = winner.equals("m1") ? c1 : c2;
        FailoverReport r = won.report().orElseThrow();
        assertEquals(1, r.oldEpoch());
        assertEquals(2, r.newEpoch());
        assertEquals(41, r.appliedTxId());
        assertTrue(won.backendLease().orElseThrow().isHeld());
        // the promoted mirror hands its lease to a backend guard, as the mirror process will
        BackendGuard promotedGuard = BackendGuard.afterPromotion(sessions.get(won), winner, now.value(),
                won.backendLease().orElseThrow(), (c, why) -> { });
        assertTrue(promotedGuard.isServing());
        assertEquals(2, promotedGuard.epoch());
        System.out.printf("failover (lease %d ms): detection %d ms, config committed +%.1f ms, serving +%.1f ms%n",
                ZkFixture.LEASE_MILLIS, r.detectionMillisSince(killedAt), r.configCommitNanos() / 1e6,
                r.promotionNanos() / 1e6);
        assertFalse((winner.equals("m1") ? c2 : c1).report().isPresent());

        // the new backend's shipper has the loser in sync: it marks it IN_SYNC (ClusterBackend does this)
        observer.store().update(c -> c.withMirrorState(loser, MirrorState.IN_SYNC), 4);
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

        // startup notices (start, first configuration) are done before ZooKeeper goes
        assertTrue(ZkFixture.await(() -> c1.notices() >= 2 && c2.notices() >= 2, 10_000));
        int before1 = c1.notices();
        int before2 = c2.notices();
        fx.stop();
        // every session outlives its timeout without ZooKeeper: nobody may promote, the backend keeps serving
        Thread.sleep(3L * ZkFixture.LEASE_MILLIS);
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
        // the mirrors re-check the lease once reconnected (after a grace that lets the backend reclaim first)
        assertTrue(ZkFixture.await(() -> c1.notices() > before1 && c2.notices() > before2, 20_000),
                "mirrors re-checked the lease after reconnecting: " + c1.notices() + ", " + c2.notices());
        assertTrue(ZkFixture.await(() -> consistent(observer, guard, fenced), 20_000));
        // every epoch step is exactly one promotion (a later step is legitimate if a session really lapsed under
        // load after ZooKeeper returned), and the old backend was fenced exactly when it lost its epoch
        ClusterConfig last = observer.store().read().value();
        assertEquals(last.epoch() - 1, promotions.size(), "" + promotions);
        assertEquals(last.epoch() == 1 ? 0 : 1, fenced.size(), "" + fenced);
        for (int i = 0; i < promotions.size(); i++) {
            assertTrue(promotions.get(i).endsWith("@" + (i + 2)), "" + promotions);
        }
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

    @Test
    void shouldLetAnAsyncMirrorYieldToAnInSyncSyncMirror() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession admin = fx.session(name);
        // the backend is already gone when the mirrors start: they notice at start
        admin.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("a1", 7001, ReplicationMode.ASYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("s1", 7002, ReplicationMode.SYNC, MirrorState.IN_SYNC)));
        RecordingPromotion async = new RecordingPromotion("a1", 5);
        mirror(name, async);
        mirror(name, new RecordingPromotion("s1", 9));
        assertTrue(ZkFixture.await(() -> !promotions.isEmpty(), 15_000));
        assertEquals(List.of("s1@2"), promotions);
        assertEquals("s1", admin.store().read().value().backend().id());
        assertEquals(0, async.replays.get(), "the ASYNC mirror waited and then found a backend");
    }

    @Test
    void shouldNeverPromoteAnAsyncMirrorWhileAnInSyncSyncMirrorHoldsItsLease() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession admin = fx.session(name);
        admin.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("a1", 7001, ReplicationMode.ASYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("s1", 7002, ReplicationMode.SYNC, MirrorState.IN_SYNC)));
        ClusterSession syncMirror = fx.session(name); // s1 alive (its lease held) but not promoting itself
        MirrorLeases.hold(syncMirror, "s1", null);
        RecordingPromotion async = new RecordingPromotion("a1", 5);
        ClusterSession s = fx.session(name);
        FailoverCoordinator c = FailoverCoordinator.start(s, "a1", async, 100); // a short ASYNC delay
        coordinators.add(c);
        sessions.put(c, s);
        assertTrue(ZkFixture.await(() -> c.notEligible() >= 2, 15_000), "the ASYNC mirror re-checked and yielded");
        assertEquals(List.of(), promotions, "promoted while an in-sync SYNC mirror holds its lease");
        assertEquals(0, async.replays.get(), "replay was finished for a promotion that must not happen");
        ZkFixture.kill(syncMirror); // the SYNC mirror is gone too: the ASYNC mirror is the only one left
        assertTrue(ZkFixture.await(() -> !promotions.isEmpty(), ZkFixture.LEASE_MILLIS + 15_000));
        assertEquals(List.of("a1@2"), promotions);
    }

    @Test
    void shouldGiveUpWithoutChangesWhenReplayIsBehind() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession admin = fx.session(name);
        admin.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC)));
        RecordingPromotion p = new RecordingPromotion("m1", 3);
        p.behind = true;
        FailoverCoordinator c = mirror(name, p);
        assertTrue(ZkFixture.await(() -> p.replays.get() > 0, 15_000));
        assertTrue(ZkFixture.await(() -> {
            try {
                return admin.curator().checkExists().forPath(admin.paths().backendLease()) == null;
            } catch (Exception e) {
                return false;
            }
        }, 10_000), "the lease taken for the attempt is released");
        Versioned<ClusterConfig> now = admin.store().read();
        assertEquals(0, now.version(), "nothing written");
        assertEquals("b0", now.value().backend().id());
        assertTrue(c.report().isEmpty());
        assertEquals(List.of(), promotions);
    }

    @Test
    void shouldHandOverToTheNextMirrorWhenTheWinnerFailsToServe() throws Exception {
        String name = ZkFixture.freshClusterName();
        ClusterSession admin = fx.session(name);
        admin.store().create(ZkFixture.config("b0",
                ZkFixture.mirror("m1", 7001, ReplicationMode.SYNC, MirrorState.IN_SYNC),
                ZkFixture.mirror("m2", 7002, ReplicationMode.SYNC, MirrorState.CATCHING_UP)));
        RecordingPromotion p1 = new RecordingPromotion("m1", 3);
        p1.failPromote = true;
        RecordingPromotion p2 = new RecordingPromotion("m2", 3);
        mirror(name, p1);
        FailoverCoordinator c2 = mirror(name, p2);
        // m1 wins epoch 2 in ZooKeeper but cannot serve: it releases the lease; m2 is still catching up
        assertTrue(ZkFixture.await(() -> p1.failedPromotions.get() == 1, 15_000));
        assertEquals(2, admin.store().read().value().epoch());
        assertTrue(ZkFixture.await(() -> c2.notEligible() > 0, 10_000));
        assertEquals(List.of(), promotions);
        // m2 turns IN_SYNC: the configuration change alone makes it take over at epoch 3
        Versioned<ClusterConfig> v = admin.store().read();
        assertTrue(admin.store().compareAndSet(v.version(), v.value().withMirrorState("m2", MirrorState.IN_SYNC)));
        assertTrue(ZkFixture.await(() -> !promotions.isEmpty(), 15_000));
        assertEquals(List.of("m2@3"), promotions);
        ClusterConfig last = admin.store().read().value();
        assertEquals(3, last.epoch());
        assertTrue(last.isBackend("m2"));
    }
}
