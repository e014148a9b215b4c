package io.asymnvm.system.cluster;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.EmbeddedZooKeeper;
import io.asymnvm.cluster.FailoverReport;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.mirror.ClusterMirror;
import io.asymnvm.system.Accounts;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Failover wired through ZooKeeper (issue 9, items 3 and 4) with real processes where it matters: an embedded
 * ZooKeeper, a backend child JVM started with {@code --zk}, one mirror ({@link ClusterMirror}) and a frontend over
 * tcp from {@link AsymNvm#connectCluster} running bank transfers on two threads. The backend is SIGKILLed and its PM
 * file deleted; the mirror must be promoted by its failover coordinator alone (no operator), the frontend must
 * resume on it, and every acknowledged transfer must be there, none partially. The old backend, started again on
 * a copy of its image, is refused with {@code STALE_EPOCH} and never listens. Times are printed, not asserted.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ClusterFailoverTest {
    private static final String CLUSTER = "failover";
    private static final int LEASE_MILLIS = 1000;
    private static final int ACCOUNTS = 16;
    private static final long INITIAL = 1_000_000;
    private static final int THREADS = 2;
    private static final int FRONTEND = 1;
    private static final long WAIT_SECONDS = 60;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldPromoteTheMirrorWhenTheBackendDiesAndKeepEveryAcknowledgedTransfer() throws Exception {
        Path credentials = dir.resolve("cluster.credentials");
        Path backendPm = dir.resolve("b0.pm");
        int backendPort = freePort();
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir.resolve("zk"));
             ClusterSession observer = ClusterSession.connect(options(zk))) {
            Child backend = Child.backend(zk.connectString(), backendPm, backendPort, credentials,
                    dir.resolve("b0.log"));
            try {
                assertTrue(backend.awaitListening(), () -> "backend did not start: " + backend.tail());
                Path stale = dir.resolve("b0-stale.pm"); // the old backend's image, epoch 1, for the return below
                Files.copy(backendPm, stale, StandardCopyOption.REPLACE_EXISTING);
                try (ClusterSession mirrorSession = ClusterSession.connect(options(zk));
                     ClusterMirror mirror = ClusterMirror.start(mirrorSession, "m1",
                             BackendConfiguration.builder(dir.resolve("m1.pm")).port(0).bindHost("127.0.0.1")
                                     .credentials(credentials).conclude(), "127.0.0.1", (c, why) -> { })) {
                    ClusterWaits.await(observer, c -> c.mirror("m1").map(m -> m.inSync()).orElse(false),
                            "m1 IN_SYNC");
                    runBankAcrossFailover(zk, observer, backend, backendPm, mirror, credentials);
                }
                Files.move(stale, backendPm); // its PM file was deleted with it: the old image comes back
                Child returning = Child.backend(zk.connectString(), backendPm, backendPort, credentials,
                        dir.resolve("b0-return.log"));
                try {
                    assertFalse(returning.awaitListening(), "a replaced backend must never listen");
                    assertTrue(returning.process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS));
                    assertNotEquals(0, returning.process.exitValue());
                    String log = returning.tail();
                    assertTrue(log.contains("STALE_EPOCH") && log.contains("epoch 2") && log.contains("epoch 1"),
                            () -> "refusal names STALE_EPOCH and both epochs: " + log);
                } finally {
                    returning.kill();
                }
            } finally {
                backend.kill();
            }
        }
    }

    private void runBankAcrossFailover(EmbeddedZooKeeper zk, ClusterSession observer, Child backend, Path backendPm,
                                       ClusterMirror mirror, Path credentials) throws Exception {
        FrontendOptions options = FrontendOptions.builder().credentials(credentials).reconnectTimeoutMillis(300)
                .failoverTimeoutMillis(30_000).conclude();
        try (AsymNvm nvm = AsymNvm.connectCluster(zk.connectString(), CLUSTER, FRONTEND, options)) {
            assertEquals(1, nvm.mirrors().size(), () -> "the in-sync mirror is posted to: " + nvm.mirrors());
            Accounts bank = nvm.transactional(Accounts.class, new Accounts.Impl());
            bank.create(ACCOUNTS, INITIAL);
            AtomicLong acknowledged = new AtomicLong();
            AtomicLong killedAt = new AtomicLong(); // wall clock, 0 before the kill
            AtomicLong firstAckAfterKill = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            List<Teller> tellers = new ArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Teller teller = new Teller(bank, 0xC105L + t, acknowledged, killedAt, firstAckAfterKill, stop);
                tellers.add(teller);
                threads.add(new Thread(teller, "teller-" + t));
            }
            threads.forEach(Thread::start);
            long atKill;
            try {
                awaitCount(acknowledged, 200, tellers);
                killedAt.set(System.currentTimeMillis());
                backend.kill(); // SIGKILL: no detach, no lease release
                Files.delete(backendPm); // lost for good
                atKill = acknowledged.get();
                ClusterWaits.await(observer, c -> c.epoch() == 2 && c.isBackend("m1"), "m1 promoted at epoch 2");
                awaitCount(acknowledged, atKill + 200, tellers);
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(TimeUnit.SECONDS.toMillis(30));
                }
            }
            for (Teller t : tellers) {
                assertNull(t.failure.get(), () -> "teller failed: " + t.failure.get());
            }
            // the coordinator records its report once the promoted node also serves as cluster backend
            // (ClusterBackend.afterPromotion), which on a loaded machine may come after the tellers' 200 commits
            long reportDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (mirror.report().isEmpty() && System.nanoTime() - reportDeadline < 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            FailoverReport report = mirror.report().orElseThrow(() -> new AssertionError(
                    "no failover report from m1 within " + WAIT_SECONDS + " s of its promotion"));
            long detection = report.detectionMillisSince(killedAt.get());
            long promotion = TimeUnit.NANOSECONDS.toMillis(report.promotionNanos());
            long total = firstAckAfterKill.get() - killedAt.get();
            System.out.printf("cluster failover (lease %d ms): detection %d ms, promotion %d ms (config committed "
                    + "%d ms), frontend resume %d ms, SIGKILL to first acknowledged commit %d ms; %d transfers "
                    + "before the kill, %d in all%n", LEASE_MILLIS, detection, promotion,
                    TimeUnit.NANOSECONDS.toMillis(report.configCommitNanos()), total - detection - promotion, total,
                    atKill, acknowledged.get());
            assertEquals(2, report.newEpoch());
            long[] expected = new long[ACCOUNTS];
            java.util.Arrays.fill(expected, INITIAL);
            for (Teller t : tellers) {
                for (int a = 0; a < ACCOUNTS; a++) {
                    expected[a] += t.delta[a];
                }
            }
            long[] balances = new long[ACCOUNTS];
            for (int a = 0; a < ACCOUNTS; a++) {
                balances[a] = bank.balance(a);
            }
            assertEquals(INITIAL * ACCOUNTS, java.util.Arrays.stream(balances).sum(), "total");
            assertArrayEquals(expected, balances, "every acknowledged transfer, none partial");
            assertTrue(mirror.backend().isPresent() && mirror.backend().get().guard().isServing(),
                    "the promoted mirror serves as backend");
        }
    }

    private static ClusterOptions options(EmbeddedZooKeeper zk) {
        return ClusterOptions.of(zk.connectString()).withClusterName(CLUSTER).withLeaseMillis(LEASE_MILLIS);
    }


    private static void awaitCount(AtomicLong count, long target, List<Teller> tellers) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        synchronized (count) {
            while (count.get() < target && tellers.stream().allMatch(t -> t.failure.get() == null)) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, () -> "timed out waiting for " + target + " transfers (at " + count.get()
                        + ")");
                count.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Transfers on its own thread; {@code delta} holds the effect of every acknowledged transfer. */
    private static final class Teller implements Runnable {
        final long[] delta = new long[ACCOUNTS];
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Accounts bank;
        private final Random random;
        private final AtomicLong acknowledged;
        private final AtomicLong killedAt;
        private final AtomicLong firstAckAfterKill;
        private final AtomicBoolean stop;

        Teller(Accounts bank, long seed, AtomicLong acknowledged, AtomicLong killedAt, AtomicLong firstAckAfterKill,
               AtomicBoolean stop) {
            this.bank = bank;
            this.random = new Random(seed);
            this.acknowledged = acknowledged;
            this.killedAt = killedAt;
            this.firstAckAfterKill = firstAckAfterKill;
            this.stop = stop;
        }

        @Override
        public void run() {
            try {
                for (int i = 0; i < 100_000 && !stop.get(); i++) {
                    int from = random.nextInt(ACCOUNTS);
                    int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                    long amount = 1 + random.nextInt(100);
                    boolean afterKill = killedAt.get() != 0;
                    bank.transfer(from, to, amount);
                    delta[from] -= amount;
                    delta[to] += amount;
                    if (afterKill) {
                        firstAckAfterKill.compareAndSet(0, System.currentTimeMillis());
                    }
                    acknowledged.incrementAndGet();
                    synchronized (acknowledged) {
                        acknowledged.notifyAll();
                    }
                }
            } catch (Throwable t) {
                failure.set(t);
            } finally {
                synchronized (acknowledged) {
                    acknowledged.notifyAll();
                }
            }
        }
    }

    /** A backend JVM with {@code --zk} on this test's class path; stdout is read for LISTENING. */
    private static final class Child {
        final Process process;
        final Path log;
        final CompletableFuture<Boolean> listening;

        private Child(Process process, Path log) {
            this.process = process;
            this.log = log;
            this.listening = CompletableFuture.supplyAsync(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    boolean seen = false;
                    while ((line = r.readLine()) != null) {
                        seen |= line.startsWith("LISTENING ");
                        if (seen) {
                            return true;
                        }
                    }
                    return false;
                } catch (IOException e) {
                    return false;
                }
            });
        }

        static Child backend(String zk, Path pm, int port, Path credentials, Path log) throws IOException {
            List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-cp",
                    System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
                    "io.asymnvm.backend.BackendMain", "--pm", pm.toString(), "--size", "128m", "--max-frontends", "2", "--port",
                    Integer.toString(port), "--credentials", credentials.toString(), "--zk", zk, "--cluster",
                    CLUSTER, "--node-id", "b0", "--lease-ms", Integer.toString(LEASE_MILLIS));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(false)
                    .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            return new Child(p, log);
        }

        boolean awaitListening() {
            try {
                return listening.get(WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (Exception e) {
                return false;
            }
        }

        String tail() {
            try {
                List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
                return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
            } catch (IOException e) {
                return "(no log: " + e + ")";
            }
        }

        void kill() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly();
                assertTrue(process.waitFor(10, TimeUnit.SECONDS), "child survived SIGKILL");
            }
        }
    }
}
