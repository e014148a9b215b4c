package io.asymnvm.system;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.system.PowerFailureRig.Pending;
import io.asymnvm.system.PowerFailureRig.Transfer;

import java.nio.file.Path;
import java.util.Random;

/**
 * What the tests of a mirror joining, dropped or outliving a detached frontend share (MirrorLateJoinTest,
 * MirrorDetachedFrontendTest, MirrorDroppedByFrontendTest): the small tcp backend they run, and bank transfers
 * recorded as pending before they are posted and acknowledged once the call returned (the oracle's input).
 */
final class MirrorJoinFixture {
    private MirrorJoinFixture() {
    }

    /** A 16 MiB backend or mirror image {@code name} under {@code dir}, two frontends, small rings, on loopback. */
    static BackendConfiguration backendConfig(Path dir, String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(16L << 20).maxFrontends(2)
                .semRingCapacity(64L << 10).redoRingCapacity(256L << 10).slabSize(256 << 10).port(0)
                .bindHost("127.0.0.1").credentials(dir.resolve("cluster.credentials")).conclude();
    }

    /** {@code n} random transfers, each pending while it runs and acknowledged once its commit returned. */
    static void transfer(Accounts accounts, Pending pending, Random random, int n) {
        for (int i = 0; i < n; i++) {
            Transfer tr = new Transfer(random.nextInt(PowerFailureRig.ACCOUNTS),
                    random.nextInt(PowerFailureRig.ACCOUNTS), 1 + random.nextInt(1000));
            pending.post(tr);
            accounts.transfer(tr.from(), tr.to(), tr.amount());
            pending.acknowledge(tr);
        }
    }
}
