package io.asymnvm.examples.ycsb;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.testsupport.Conditions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * YCSB's own client (child JVMs, {@code dataintegrity=true}: every value read is checked) against a tcp backend
 * with a SYNC mirror: the load goes to both; while the run phase updates and reads, the backend is lost for good
 * (closed, PM file deleted) and the mirror promoted, the client's frontend fails over by itself, and YCSB must see
 * no failed operation and no failed value check. A further read-only run (workload C) against the promoted node
 * then reads every record with its value checked. The suite's coherence check mode reaches the children.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class YcsbMirrorFailoverTest {
    private static final String CREDENTIALS = "shared.credentials";

    @TempDir
    Path dir;

    private BackendConfiguration config(String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(128L << 20).maxFrontends(2)
                .semRingCapacity(1L << 20).redoRingCapacity(4L << 20).bindHost("127.0.0.1").port(0)
                .credentials(dir.resolve(CREDENTIALS)).conclude();
    }

    private Map<String, String> endpoint(int port, String mirrors) {
        return Map.of("asymnvm.host", "127.0.0.1", "asymnvm.port", String.valueOf(port), "asymnvm.mirrors", mirrors,
                "asymnvm.credentials", dir.resolve(CREDENTIALS).toString(), "asymnvm.reconnectTimeoutMillis", "300");
    }

    private static void assertClean(YcsbRun.Phase phase, boolean reads) {
        String where = phase.toString();
        assertEquals(0, phase.exitCode(), where);
        assertEquals(0, phase.failed(), where);
        assertEquals(0, phase.verifyErrors(), where);
        assertTrue(phase.operations() > 0, where);
        if (reads) {
            assertTrue(phase.verified() > 0, "YCSB checked values it read: " + where);
        }
    }

    /** Load with the mirror, lose the backend during the run of {@code workload}, promote, check everything. */
    private void loseTheBackendDuringTheRun(StructureKind structure, char workload, int records, int operations)
            throws Exception {
        YcsbRun ycsb = new YcsbRun(new YcsbRun.Config(String.valueOf(workload) + "c", FabricKind.TCP, structure,
                records, operations, 2, 10, 100, AsymNvmYcsbDb.class.getName()), System.out::println);
        BackendNode backend = BackendNode.start(config("backend.pm"));
        try (MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm"), backend)) {
            Conditions.awaitTrue("the mirror is in sync", Duration.ofSeconds(30), mirror::inSync,
                    () -> "state " + mirror.state());
            String mirrors = "127.0.0.1:" + mirror.node().port();
            Path load = Files.createDirectories(dir.resolve("load"));
            assertClean(ycsb.phase(workload, true, load, endpoint(backend.port(), mirrors)), false);
            long loaded = backend.frontendLog(0).checkpoint().appliedTxId();

            Path run = Files.createDirectories(dir.resolve("run"));
            long started = System.nanoTime();
            CompletableFuture<YcsbRun.Phase> running = CompletableFuture.supplyAsync(() -> {
                try {
                    return ycsb.phase(workload, false, run, endpoint(backend.port(), mirrors));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            // lose the backend once the run has committed some updates (bounded wait, no fixed sleep)
            Conditions.awaitTrue("100 updates of the run applied", Duration.ofSeconds(120),
                    () -> running.isDone() || backend.frontendLog(0).checkpoint().appliedTxId() > loaded + 100);
            assertFalse(running.isDone(), "the run ended before the backend could be lost: " + running.getNow(null));
            long appliedAtLoss = backend.frontendLog(0).checkpoint().appliedTxId();
            long lost = System.nanoTime();
            backend.close();
            Files.delete(dir.resolve("backend.pm"));
            long epoch = mirror.promote();
            YcsbRun.Phase phase = running.get(240, TimeUnit.SECONDS);
            mirror.node().awaitReplayed();
            System.out.printf("YCSB %c over %s: backend lost after %d transactions of the run, mirror promoted to "
                            + "epoch %d; the run: %s%n", workload, structure.cliName(), appliedAtLoss - loaded, epoch,
                    phase);
            long after = mirror.node().frontendLog(0).checkpoint().appliedTxId() - appliedAtLoss;
            System.out.printf("  updates before the loss: %d in %.1f s (child JVM start included); after it: %d in "
                            + "%.1f s (failover included)%n", appliedAtLoss - loaded, (lost - started) / 1e9, after,
                    (System.nanoTime() - lost) / 1e9);
            assertClean(phase, true);
            assertTrue(mirror.node().frontendLog(0).checkpoint().appliedTxId() > appliedAtLoss,
                    "the run went on committing on the promoted node");

            Path check = Files.createDirectories(dir.resolve("check"));
            YcsbRun.Phase reads = ycsb.phase('c', false, check, endpoint(mirror.node().port(), ""));
            assertClean(reads, true);
            System.out.printf("YCSB C on the promoted node: %d values checked%n", reads.verified());
        } finally {
            backend.close();
        }
    }

    @Test
    void workloadAKeepsEveryValueCheckThroughTheBackendsLossAndTheMirrorsPromotion() throws Exception {
        loseTheBackendDuringTheRun(StructureKind.HASH, 'a', 300, 2_000);
    }

    @Test
    @Tag("slow")
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void workloadsAAndFOnTheBTreeKeepEveryValueCheckThroughThePromotion() throws Exception {
        loseTheBackendDuringTheRun(StructureKind.BTREE, 'a', 10_000, 40_000);
        Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).filter(p -> !p.equals(dir))
                .forEach(p -> p.toFile().delete());
        loseTheBackendDuringTheRun(StructureKind.BTREE, 'f', 10_000, 40_000);
    }
}
