package io.asymnvm.system.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.MirrorStateLayout;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.mirror.ReplicationClient;
import io.asymnvm.testsupport.ShmTempDirFactory;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A mirror restarted on its existing PM file (issue 9): its persisted replication state
 * ({@link MirrorStateLayout}) brings it back in sync, and when its backend is gone for good it still serves and can
 * be promoted, losing no committed transaction. (Power failures at every persist point: MirrorPowerFailureTest.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MirrorRestartTest {
    private static final int KEYS = 300;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration config(String name, Path credentials) {
        return BackendConfiguration.builder(dir.resolve(name)).size(24L << 20).maxFrontends(2)
                .semRingCapacity(256L << 10).redoRingCapacity(1L << 20).port(0).credentials(credentials).conclude();
    }

    @Test
    void mirrorRestartedAfterItsBackendIsLostComesBackInSyncAndIsPromotedWithEveryCommit() throws Exception {
        Path credentials = dir.resolve("cluster.credentials");
        BackendConfiguration mirrorConfig = config("mirror.pm", credentials);
        BackendNode backend = BackendNode.start(config("backend.pm", credentials));
        int backendPort = backend.port();
        MirrorNode restarted = null;
        try {
            FrontendOptions options = FrontendOptions.builder().credentials(credentials).conclude();
            long epoch;
            try (MirrorNode mirror = MirrorNode.start(mirrorConfig, "127.0.0.1", backend.port())) {
                epoch = mirror.epoch();
                Conditions.awaitTrue("the mirror is in sync", mirror::inSync);
                try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", backend.port(), 0, options)) {
                    MirrorReplicationTest.Store store = nvm.transactional(MirrorReplicationTest.Store.class,
                            new MirrorReplicationTest.StoreImpl(nvm));
                    for (long k = 0; k < KEYS; k++) {
                        store.put(k, MirrorReplicationTest.value(k));
                    }
                    nvm.sync();
                }
                backend.awaitReplayed();
                long backendApplied = backend.frontendLog(0).checkpoint().appliedTxId();
                Conditions.awaitTrue("the mirror applied every transaction",
                        () -> mirror.node().frontendLog(0).checkpoint()
                        .appliedTxId() == backendApplied);
            } // the mirror stops; its file stays
            backend.close();
            Files.delete(dir.resolve("backend.pm")); // then the backend is lost for good

            restarted = MirrorNode.start(mirrorConfig, "127.0.0.1", backendPort); // backend unreachable
            assertTrue(restarted.inSync(), "restarted mirror state "
                    + ReplicationLayout.stateName(restarted.state()) + ", expected in sync from its persisted mark");
            assertTrue(restarted.replication().isMirror());
            byte[] secret = ReplicationClient.secretOf(credentials);
            try (Fabric f = new TcpFabric("127.0.0.1", restarted.port())) {
                assertEquals(epoch + 1, ReplicationClient.promote(f, secret), "the promoted epoch");
            }
            try (AsymNvm nvm = AsymNvm.connect("127.0.0.1", restarted.port(), 0, options)) {
                MirrorReplicationTest.Store store = nvm.transactional(MirrorReplicationTest.Store.class,
                        new MirrorReplicationTest.StoreImpl(nvm));
                nvm.recover();
                for (long k = 0; k < KEYS; k++) {
                    assertEquals(MirrorReplicationTest.value(k), (k & 1) == 0 ? store.tree(k) : store.hash(k),
                            "key " + k + " on the promoted mirror");
                }
                store.put(5000, MirrorReplicationTest.value(5000));
                assertEquals(MirrorReplicationTest.value(5000), store.tree(5000), "a new commit after promotion");
            }
        } finally {
            if (restarted != null) {
                restarted.close();
            }
            backend.close();
        }
    }
}
