package io.asymnvm.system.cluster;

import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterSession;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Waits on the cluster configuration through a watch (no polling), bounded. */
final class ClusterWaits {
    static final long WAIT_SECONDS = 60;

    private ClusterWaits() {
    }

    /** Waits until the configuration satisfies {@code condition}; fails naming {@code what} and the last record. */
    static void await(ClusterSession s, Predicate<ClusterConfig> condition, String what) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<ClusterConfig> last = new AtomicReference<>();
        try (var w = s.store().watch(c -> {
            last.set(c);
            if (condition.test(c)) {
                done.countDown();
            }
        })) {
            assertTrue(done.await(WAIT_SECONDS, TimeUnit.SECONDS), () -> "timed out waiting for " + what
                    + "; configuration " + last.get());
        }
    }
}
