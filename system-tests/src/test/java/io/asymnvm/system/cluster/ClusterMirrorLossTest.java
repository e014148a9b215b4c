package io.asymnvm.system.cluster;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.cluster.ClusterBackend;
import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.EmbeddedZooKeeper;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.ClusterMirror;
import io.asymnvm.system.Accounts;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mirror-crash policy (issue 9, item 6) wired through ZooKeeper: a SYNC mirror that dies is dropped from the
 * configuration by the backend once its lease is gone, the frontend following the configuration drops it too, and
 * commits go on without it (the ones made meanwhile were waiting, not acknowledged without the mirror). A fresh
 * mirror then joins the running backend and becomes IN_SYNC, and a frontend connecting afterwards posts to it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterMirrorLossTest {
    private static final String CLUSTER = "mirrorloss";
    private static final int ACCOUNTS = 8;
    private static final long INITIAL = 1000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration node(String name) {
        return BackendConfiguration.builder(dir.resolve(name + ".pm")).size(128L << 20).maxFrontends(2).port(0)
                .bindHost("127.0.0.1").credentials(dir.resolve("cluster.credentials")).conclude();
    }

    @Test
    void shouldDropADeadSyncMirrorThroughTheConfigurationAndCommitWithoutIt() throws Exception {
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir.resolve("zk"));
             ClusterSession backendSession = ClusterSession.connect(options(zk));
             ClusterBackend backend = ClusterBackend.start(backendSession, "b0", node("b0"), "127.0.0.1",
                     (c, why) -> { })) {
            try {
                ClusterSession mirrorSession = ClusterSession.connect(options(zk));
                ClusterMirror mirror = ClusterMirror.start(mirrorSession, "m1", node("m1"), "127.0.0.1",
                        (c, why) -> { });
                ClusterWaits.await(backendSession, c -> c.mirror("m1").map(m -> m.inSync()).orElse(false),
                        "m1 IN_SYNC");
                String m1 = "127.0.0.1:" + mirror.port();
                FrontendOptions options = FrontendOptions.builder().credentials(dir.resolve("cluster.credentials"))
                        .reconnectTimeoutMillis(300).conclude();
                try (AsymNvm nvm = AsymNvm.connectCluster(zk.connectString(), CLUSTER, 1, options)) {
                    assertEquals(List.of(m1), nvm.mirrors());
                    Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
                    bank.create(ACCOUNTS, INITIAL);
                    for (int i = 0; i < 100; i++) {
                        bank.transfer(i % ACCOUNTS, (i + 1) % ACCOUNTS, 1);
                    }
                    mirror.mirror().close(); // the mirror stops answering ...
                    mirrorSession.close();   // ... and its session (its lease) ends
                    for (int i = 0; i < 100; i++) { // block until the configuration drops it, then go on
                        bank.transfer(i % ACCOUNTS, (i + 3) % ACCOUNTS, 2);
                    }
                    ClusterConfig c = backendSession.store().read().value();
                    assertTrue(c.mirror("m1").isEmpty(), () -> "the dead mirror left the configuration: " + c);
                    assertEquals(List.of(), nvm.mirrors(), "and the frontend's in-sync set");
                    long total = 0;
                    for (int a = 0; a < ACCOUNTS; a++) {
                        total += bank.balance(a);
                    }
                    assertEquals(INITIAL * ACCOUNTS, total);
                    mirror.close();
                }

                // re-replication: a fresh mirror joins the running backend while frontend 0 runs; frontend 0's
                // follower adds it (re-posting, declaring it SYNC), without which it would never turn IN_SYNC
                AsymNvm running = AsymNvm.connectCluster(zk.connectString(), CLUSTER, 0, options);
                Accounts runningBank = running.transactional(Accounts.class, new Accounts.Impl());
                runningBank.create(ACCOUNTS, INITIAL);
                try (ClusterSession freshSession = ClusterSession.connect(options(zk));
                     ClusterMirror fresh = ClusterMirror.start(freshSession, "m2", node("m2"), "127.0.0.1",
                             (c, why) -> { })) {
                    for (int i = 0; i < 20; i++) {
                        runningBank.transfer(i % ACCOUNTS, (i + 5) % ACCOUNTS, 3);
                    }
                    ClusterWaits.await(backendSession, c -> c.mirror("m2").map(m -> m.inSync()).orElse(false),
                            "m2 IN_SYNC");
                    assertEquals(List.of("127.0.0.1:" + fresh.port()), running.mirrors(),
                            "the running frontend posts to the mirror that joined after it connected");
                    runningBank.transfer(1, 2, 7); // acknowledged only once durable on the new mirror too
                    running.close();
                    try (AsymNvm nvm = AsymNvm.connectCluster(zk.connectString(), CLUSTER, 1, options)) {
                        assertEquals(List.of("127.0.0.1:" + fresh.port()), nvm.mirrors());
                        Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
                        bank.transfer(0, 1, 5);
                        long total = 0;
                        for (int a = 0; a < ACCOUNTS; a++) {
                            total += bank.balance(a);
                        }
                        assertEquals(INITIAL * ACCOUNTS, total);
                    }
                }
            } finally {
                backend.node().close();
            }
        }
    }

    private static ClusterOptions options(EmbeddedZooKeeper zk) {
        return ClusterOptions.of(zk.connectString()).withClusterName(CLUSTER).withLeaseMillis(3000);
    }
}
