package io.asymnvm.system;

import io.asymnvm.core.auth.AttachProof;
import io.asymnvm.core.auth.FrontendCredentials;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The foundation's crash acceptance test: a backend runs as a separate process, a frontend in this JVM commits
 * bank transfers over TCP, and the backend is killed with SIGKILL at random moments (after a random number of
 * acknowledged commits) and restarted on the same PM file and port. The frontend reconnects and carries on.
 * At the end the backend is killed once more with unapplied work outstanding, restarted, and the PM image is
 * checked: every transfer whose commit returned is present (each balance equals the oracle) and no partial
 * transfer is visible (the total is unchanged).
 */
class BackendKillTest {
    private static final int ACCOUNTS = 32;
    private static final long INITIAL = 1_000_000;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldKeepEveryAcknowledgedCommitAcrossBackendKills() throws Exception {
        run(Integer.getInteger("asymnvm.killIterations", 8), Long.getLong("asymnvm.seed", 20261122L));
    }

    @Test
    @Tag("slow")
    @Timeout(value = 1800, unit = TimeUnit.SECONDS)
    void shouldSurviveManyBackendKills() throws Exception {
        run(40, 77L);
    }

    private void run(int iterations, long seed) throws Exception {
        Path pm = dir.resolve("backend.pm");
        Path log = dir.resolve("backend.log");
        int port = BackendProcess.freePort();
        Random random = new Random(seed);
        long[] oracle = new long[ACCOUNTS];
        java.util.Arrays.fill(oracle, INITIAL);
        AtomicLong acknowledged = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> workerFailure = new AtomicReference<>();
        long block;
        BackendProcess backend = BackendProcess.start(pm, "256m", port, log);
        Path credentials = dir.resolve("backend.pm.credentials"); // the backend's default, created at first start
        FrontendOptions options = FrontendOptions.builder().reconnectTimeoutMillis(60_000).credentials(credentials)
                .conclude();
        AsymNvm nvm = AsymNvm.connect("127.0.0.1", port, 0, options);
        try {
            Accounts accounts = nvm.transactional(Accounts.class, new Accounts.Impl());
            block = accounts.create(ACCOUNTS, INITIAL);
            Thread worker = new Thread(() -> {
                Random r = new Random(seed * 31);
                try {
                    while (!stop.get()) {
                        int from = r.nextInt(ACCOUNTS);
                        int to = r.nextInt(ACCOUNTS);
                        long amount = 1 + r.nextInt(1000);
                        accounts.transfer(from, to, amount);
                        synchronized (oracle) {
                            oracle[from] -= amount;
                            oracle[to] += amount;
                        }
                        acknowledged.incrementAndGet();
                    }
                } catch (Throwable t) {
                    workerFailure.set(t);
                }
            }, "transfers");
            worker.start();
            for (int i = 0; i < iterations; i++) {
                long target = acknowledged.get() + 50 + random.nextInt(400);
                awaitAcknowledged(acknowledged, target, workerFailure, "iteration " + i + " seed " + seed);
                backend.kill();
                backend = BackendProcess.start(pm, "256m", port, log);
            }
            awaitAcknowledged(acknowledged, acknowledged.get() + 100, workerFailure, "final seed " + seed);
            stop.set(true);
            worker.join(60_000);
            assertNull(workerFailure.get(), () -> "worker failed (seed " + seed + "): " + workerFailure.get());
            // Crash with work outstanding: unapplied redo and possibly unflushed records exist now.
            backend.kill();
            backend = BackendProcess.start(pm, "256m", port, log);
            nvm.close();
        } catch (Throwable t) {
            nvm.crash();
            throw t;
        } finally {
            backend.close();
        }
        assertTrue(acknowledged.get() > 0, "no transfer was acknowledged");
        System.out.printf("backend kill drill: %d SIGKILLs, %d acknowledged transfers, seed %d%n", iterations + 1,
                acknowledged.get(), seed);

        // Kill once more after the clean detach, restart, and inspect the image the frontend cannot help with.
        backend = BackendProcess.start(pm, "256m", port, log);
        try {
            long[] image = readBalances(port, block, credentials);
            long total = 0;
            for (int i = 0; i < ACCOUNTS; i++) {
                total += image[i];
                assertEquals(oracle[i], image[i], "balance of account " + i + " after " + acknowledged.get()
                        + " acknowledged transfers (seed " + seed + ")");
            }
            assertEquals(ACCOUNTS * INITIAL, total, "total changed: a partial transfer is visible");
            try (AsymNvm again = AsymNvm.connect("127.0.0.1", port, 0, options)) {
                Accounts accounts = again.transactional(Accounts.class, new Accounts.Impl());
                for (int i = 0; i < ACCOUNTS; i++) {
                    assertEquals(oracle[i], accounts.balance(i), "frontend view of account " + i);
                }
            }
            int exit = backend.stop();
            assertTrue(exit == 0 || exit == 143, "exit code after SIGTERM: " + exit);
            assertTrue(java.nio.file.Files.notExists(dir.resolve("backend.pm.mark")),
                    "SIGTERM must shut the backend down cleanly (mark file removed)");
        } finally {
            backend.close();
        }
    }

    private static void awaitAcknowledged(AtomicLong acknowledged, long target, AtomicReference<Throwable> failure,
                                          String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (acknowledged.get() < target) {
            if (failure.get() != null) {
                throw new AssertionError("worker failed during " + what, failure.get());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no progress during " + what + ": " + acknowledged.get() + " < " + target);
            }
            Thread.onSpinWait();
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }

    /** Reads the balances straight from the backend's heap with a one-sided READ (as frontend 7). */
    private static long[] readBalances(int port, long block, Path credentials) {
        try (TcpFabric fabric = new TcpFabric("127.0.0.1", port); FabricConnection c = fabric.connect()) {
            c.call(AttachProof.attachRequest(c, FrontendCredentials.load(credentials).secret(7), 7, 0, null)).await();
            byte[] bytes = c.read(RegionIds.HEAP, block, 8 + 8 * ACCOUNTS).await().bytes();
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(ACCOUNTS, b.getLong(0), "account count in the image");
            long[] out = new long[ACCOUNTS];
            for (int i = 0; i < ACCOUNTS; i++) {
                out[i] = b.getLong(8 + 8 * i);
            }
            return out;
        }
    }
}
