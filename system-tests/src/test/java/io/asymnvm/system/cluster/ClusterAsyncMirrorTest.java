package io.asymnvm.system.cluster;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.cluster.ClusterBackend;
import io.asymnvm.backend.mirror.AsyncLagBounds;
import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.EmbeddedZooKeeper;
import io.asymnvm.cluster.MirrorInfo;
import io.asymnvm.cluster.MirrorState;
import io.asymnvm.cluster.ReplicationMode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.ClusterMirror;
import io.asymnvm.system.Accounts;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ASYNC mirrors through ZooKeeper (issue 9, item 2): a mirror started with mode ASYNC is recorded so in the
 * configuration, watched (never posted to) by a {@code connectCluster} frontend, set {@code CATCHING_UP} while its
 * lag exceeds a bound and {@code IN_SYNC} again after; and when the backend is lost the ASYNC mirror (the only one)
 * is promoted by its coordinator and a surviving frontend resumes on it with every acknowledged transfer, although
 * none was shipped to the mirror after its image copy.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterAsyncMirrorTest {
    private static final String CLUSTER = "asyncmirror";
    private static final int ACCOUNTS = 8;
    private static final long INITIAL = 1000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration node(String name, AsyncLagBounds bounds) {
        return BackendConfiguration.builder(dir.resolve(name + ".pm")).size(128L << 20).maxFrontends(2).port(0)
                .bindHost("127.0.0.1").credentials(dir.resolve("cluster.credentials")).asyncLag(bounds).conclude();
    }

    private FrontendOptions frontend() {
        return FrontendOptions.builder().credentials(dir.resolve("cluster.credentials")).reconnectTimeoutMillis(300)
                .conclude();
    }

    private static MirrorState stateOf(ClusterConfig c, String id) {
        return c.mirror(id).map(MirrorInfo::state).orElse(null);
    }

    @Test
    void shouldRecordAnAsyncMirrorAndSetItCatchingUpWhileItsLagExceedsABound() throws Exception {
        AsyncLagBounds tight = new AsyncLagBounds(1, 1); // exceeded by any lasting load
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir.resolve("zk"));
             ClusterSession backendSession = ClusterSession.connect(options(zk));
             ClusterBackend backend = ClusterBackend.start(backendSession, "b0", node("b0", tight), "127.0.0.1",
                     (c, why) -> { })) {
            try (ClusterSession mirrorSession = ClusterSession.connect(options(zk));
                 ClusterMirror mirror = ClusterMirror.start(mirrorSession, "a1", node("a1", tight), "127.0.0.1",
                         (c, why) -> { }, ReplicationMode.ASYNC)) {
                ClusterWaits.await(backendSession, c -> stateOf(c, "a1") == MirrorState.IN_SYNC, "a1 IN_SYNC");
                assertEquals(ReplicationMode.ASYNC, backendSession.store().read().value().mirror("a1").get().mode());
                try (AsymNvm nvm = AsymNvm.connectCluster(zk.connectString(), CLUSTER, 1, frontend())) {
                    assertEquals(List.of("127.0.0.1:" + mirror.port()), nvm.mirrors(), "the ASYNC mirror is watched");
                    Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
                    bank.create(ACCOUNTS, INITIAL);
                    boolean seenBehind = false;
                    for (int i = 0; i < 20_000 && !seenBehind; i++) {
                        bank.transfer(i % ACCOUNTS, (i + 1) % ACCOUNTS, 1);
                        if (i % 50 == 0) {
                            seenBehind = stateOf(backendSession.store().read().value(), "a1")
                                    == MirrorState.CATCHING_UP;
                        }
                    }
                    assertTrue(seenBehind, "the lag never set the ASYNC mirror CATCHING_UP");
                    // the follower stops holding ring space for it, and commits go on
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (!nvm.mirrors().isEmpty() && System.nanoTime() < deadline) {
                        bank.transfer(0, 1, 1);
                    }
                    assertEquals(List.of(), nvm.mirrors(), "the frontend dropped the behind ASYNC mirror");
                }
                ClusterWaits.await(backendSession, c -> stateOf(c, "a1") == MirrorState.IN_SYNC,
                        "a1 back IN_SYNC once the load stopped");
            } finally {
                backend.node().close();
            }
        }
    }

    @Test
    void shouldPromoteTheAsyncMirrorAndLetASurvivingFrontendResumeWithEveryTransfer() throws Exception {
        AsyncLagBounds slow = new AsyncLagBounds(60_000, 10_000); // no pass within this test after the copy
        Path backendPm = dir.resolve("b0.pm");
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir.resolve("zk"));
             ClusterSession mirrorSession = ClusterSession.connect(options(zk))) {
            ClusterSession backendSession = ClusterSession.connect(options(zk));
            ClusterBackend backend = ClusterBackend.start(backendSession, "b0", node("b0", slow), "127.0.0.1",
                    (c, why) -> { });
            boolean lost = false;
            try (ClusterMirror mirror = ClusterMirror.start(mirrorSession, "a1", node("a1", slow), "127.0.0.1",
                    (c, why) -> { }, ReplicationMode.ASYNC)) {
                ClusterWaits.await(mirrorSession, c -> stateOf(c, "a1") == MirrorState.IN_SYNC, "a1 IN_SYNC");
                long[] balances = new long[ACCOUNTS];
                java.util.Arrays.fill(balances, INITIAL);
                try (AsymNvm nvm = AsymNvm.connectCluster(zk.connectString(), CLUSTER, 1, frontend())) {
                    Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
                    bank.create(ACCOUNTS, INITIAL);
                    SplittableRandom rnd = new SplittableRandom(3);
                    for (int i = 0; i < 150; i++) {
                        int from = rnd.nextInt(ACCOUNTS);
                        int to = rnd.nextInt(ACCOUNTS);
                        long amount = rnd.nextInt(1, 20);
                        bank.transfer(from, to, amount);
                        balances[from] -= amount;
                        balances[to] += amount;
                    }
                    long onMirror = mirror.mirror().node().frontendLog(1).checkpoint().appliedTxId();
                    backend.close();               // the backend lease goes ...
                    backend.node().close();        // ... with the node
                    backendSession.close();
                    lost = true;
                    Files.delete(backendPm);       // lost for good
                    ClusterWaits.await(mirrorSession, c -> c.isBackend("a1") && c.epoch() == 2,
                            "the ASYNC mirror promoted to epoch 2");
                    for (int i = 0; i < 10; i++) { // the frontend finds it and resumes
                        bank.transfer(i % ACCOUNTS, (i + 5) % ACCOUNTS, 3);
                        balances[i % ACCOUNTS] -= 3;
                        balances[(i + 5) % ACCOUNTS] += 3;
                    }
                    for (int a = 0; a < ACCOUNTS; a++) {
                        assertEquals(balances[a], bank.balance(a), "account " + a + " after the ASYNC promotion");
                    }
                    System.out.printf("ASYNC promotion through ZooKeeper: the mirror had applied tx %d of 151; "
                            + "the frontend failed over in %d ms and lost nothing%n", onMirror,
                            nvm.stats().failoverResumeMillis());
                    assertTrue(onMirror < 151, "the mirror held every transfer already: " + onMirror);
                    assertEquals(1, nvm.stats().failovers());
                }
            } finally {
                if (!lost) {
                    backend.close();
                    backend.node().close();
                    backendSession.close();
                }
            }
        }
    }

    private static ClusterOptions options(EmbeddedZooKeeper zk) {
        return ClusterOptions.of(zk.connectString()).withClusterName(CLUSTER).withLeaseMillis(3000);
    }
}
