package io.asymnvm.system.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.system.mirror.MirrorValueSizesTest.Ops;
import io.asymnvm.system.mirror.MirrorValueSizesTest.OpsImpl;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Two failures composed, over tcp with a SYNC mirror, the coherence check on and the smallest cache: while a thread
 * commits B+tree values of every allowed size, the mirror stops and, while it is down, the backend restarts, so
 * that the frontend reconnects to its backend with its SYNC mirror unreachable (commits wait for both); then the
 * mirror restarts from its PM file on the same port. The frontend must re-post to both and the mirror come back in
 * sync; then the backend is lost for good, the mirror promoted, the frontend fails over, and every acknowledged
 * value must be there byte for byte, with {@code verify()} clean.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ComposedMirrorFailureTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private BackendConfiguration config(String name, int port) {
        return BackendConfiguration.builder(dir.resolve(name)).size(64L << 20).maxFrontends(2)
                .semRingCapacity(1L << 20).redoRingCapacity(4L << 20).bindHost("127.0.0.1").port(port)
                .credentials(dir.resolve("shared.credentials")).conclude();
    }

    /** Commits values of every size over 97 keys until stopped; the acknowledged ones go to the oracle. */
    private static Thread committer(Ops ops, Map<String, byte[]> oracle, AtomicLong committed, AtomicBoolean stop,
                                    AtomicReference<Throwable> failure) {
        Thread t = new Thread(() -> {
            try {
                for (int k = 0; !stop.get() && k < 100_000; k++) {
                    String key = "key-" + (k % 97);
                    int length = MirrorValueSizesTest.VALUE_SIZES[k % MirrorValueSizesTest.VALUE_SIZES.length];
                    byte[] v = MirrorValueSizesTest.value(key, k, length);
                    ops.put(key, v);
                    oracle.put(key, v);
                    committed.incrementAndGet();
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "committer");
        t.start();
        return t;
    }

    private static void awaitCommits(AtomicLong committed, long more, AtomicReference<Throwable> failure) {
        long target = committed.get() + more;
        Conditions.awaitTrue(more + " more commits", WAIT, () -> committed.get() >= target || failure.get() != null,
                () -> "(committed " + committed.get() + ")");
        assertNull(failure.get(), () -> "the committer failed: " + failure.get());
    }

    @Test
    void mirrorRestartWhileTheFrontendReconnectsToItsRestartedBackendThenBackendLossAndPromotion() throws Exception {
        BackendNode backend = BackendNode.start(config("backend.pm", 0));
        int backendPort = backend.port();
        MirrorNode mirror = MirrorNode.start(config("mirror.pm", 0), "127.0.0.1", backendPort);
        int mirrorPort = mirror.port();
        Map<String, byte[]> oracle = new ConcurrentHashMap<>();
        AtomicLong committed = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        FrontendOptions options = FrontendOptions.builder().cacheBytes(64L << 10).verifyCache(true)
                .credentials(dir.resolve("shared.credentials")).reconnectTimeoutMillis(3_000)
                .mirrorReconnectTimeoutMillis(20_000).failoverTimeoutMillis(20_000).conclude();
        try {
            MirrorNode first = mirror;
            Conditions.awaitTrue("the mirror is in sync", WAIT, first::inSync, () -> "state " + first.state());
            try (AsymNvm nvm = AsymNvm.connect("tcp", "127.0.0.1:" + backendPort,
                    List.of("127.0.0.1:" + mirrorPort), 0, options)) {
                Ops ops = nvm.transactional(Ops.class, new OpsImpl(nvm, true));
                Thread writer = committer(ops, oracle, committed, stop, failure);
                awaitCommits(committed, 100, failure);

                mirror.close(); // failure 1: the mirror stops (its PM file stays)
                mirror = null;
                backend.close(); // failure 2: while it is down, the backend restarts
                backend = BackendNode.start(config("backend.pm", backendPort));
                long atBackendRestart = committed.get();
                mirror = MirrorNode.start(config("mirror.pm", mirrorPort), "127.0.0.1", backendPort);
                MirrorNode second = mirror;
                awaitCommits(committed, 100, failure);
                Conditions.awaitTrue("the restarted mirror is in sync again", WAIT, second::inSync,
                        () -> "state " + second.state());
                System.out.printf("composed: %d commits before both restarts, %d after%n", atBackendRestart,
                        committed.get() - atBackendRestart);

                BackendNode lost = backend;
                lost.close(); // then the backend is lost for good
                Files.delete(dir.resolve("backend.pm"));
                long epoch = second.promote();
                awaitCommits(committed, 100, failure); // the frontend failed over by itself
                stop.set(true);
                writer.join(30_000);
                assertNull(failure.get(), () -> "the committer failed: " + failure.get());
                assertEquals(1, nvm.stats().failovers(), "failovers");
                for (Map.Entry<String, byte[]> e : oracle.entrySet()) {
                    byte[] actual = ops.get(e.getKey());
                    if (!Arrays.equals(e.getValue(), actual)) {
                        fail("key " + e.getKey() + " expected " + e.getValue().length + " B, read "
                                + (actual == null ? "nothing" : actual.length + " B") + " on the node promoted to "
                                + "epoch " + epoch);
                    }
                }
                assertEquals(oracle.size(), ops.size(), "entries");
                ops.verify();
                nvm.sync(); // the coherence sweep against the promoted image
                System.out.printf("composed: %d commits in all, %d keys checked after the promotion to epoch %d%n",
                        committed.get(), oracle.size(), epoch);
            }
        } finally {
            stop.set(true);
            if (mirror != null) {
                mirror.close();
            }
            backend.close();
        }
    }
}
