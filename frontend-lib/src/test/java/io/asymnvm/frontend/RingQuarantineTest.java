package io.asymnvm.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.backend.InspectReport;
import io.asymnvm.backend.InspectTool;
import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.frontend.log.RedoBuffer;
import io.asymnvm.recovery.log.RingDamage;
import io.asymnvm.recovery.log.RingScanner;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.PmFiles;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A damaged ring quarantines its frontend only (issue 10, item 2): the backend starts and serves every other
 * frontend, the damaged one's attach is refused with {@code RING_CORRUPT} naming ring, offset, expected and
 * actual values, status and inspect show it, and the damaged ring is left exactly as it was.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RingQuarantineTest {
    private static final FrontendOptions LAZY_REDO = FrontendOptions.builder()
            .redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldStartOverADamagedSemanticRingAndServeEveryOtherFrontend() throws Exception {
        Path file = dir.resolve("backend.pm");
        long damagedAt;
        long ringAt;
        int ringLength;
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            AsymNvm victim = backend.open(1, LAZY_REDO);
            Cells v = victim.transactional(Cells.class, new Cells.Impl());
            v.create(8);
            victim.sync();
            for (int i = 0; i < 6; i++) {
                v.set(i, 100 + i); // durable semantic records whose redo stays in the frontend
            }
            try (AsymNvm other = backend.open(2, FrontendOptions.defaults())) {
                Cells o = other.transactional(Cells.class, new Cells.Impl());
                o.create(8);
                for (int i = 0; i < 6; i++) {
                    o.set(i, 200 + i);
                }
            }
            FrontendLog log = backend.node().frontendLog(1);
            List<Long> positions = new ArrayList<>();
            RingScanner.scan(log.semanticReader(), log.checkpoint().semHead(), 0, e -> positions.add(e.position()));
            assertEquals(6, positions.size(), "the victim's unapplied records");
            damagedAt = log.semanticReader().offsetOf(positions.get(2)); // a record in the middle of the ring
            ringAt = backend.node().superblock().semRingOf(1);
            ringLength = Math.toIntExact(backend.node().superblock().semRingCapacity());
            victim.crash();
            int port = backend.node().port();
            backend.stop();

            // offline, in the record's arguments
            PmFiles.flipByte(file, damagedAt + SemanticRecordLayout.HEADER_LENGTH);
            byte[] ringBefore = PmFiles.read(file, ringAt, ringLength);

            backend.startAgain(port);
            try (AsymNvm other = backend.open(2, FrontendOptions.defaults())) {
                Cells o = other.transactional(Cells.class, new Cells.Impl());
                assertArrayEquals(new long[] {200, 201, 202, 203, 204, 205, 0, 0}, o.snapshot());
                o.set(7, 7);
                other.sync();
                assertEquals(7, o.get(7));

                AsymNvmException e = assertThrows(AsymNvmException.class, () -> backend.open(1, LAZY_REDO));
                assertEquals(ErrorCode.RING_CORRUPT, e.errorCode(), e.getMessage());
                assertTrue(e.getMessage().contains("frontend 1 is quarantined")
                        && e.getMessage().contains("semantic ring of frontend 1")
                        && e.getMessage().contains("offset " + damagedAt)
                        && e.getMessage().contains("expected 0x") && e.getMessage().contains("actual 0x"),
                        e.getMessage());

                JsonNode status = status(backend.node().port());
                JsonNode f1 = frontend(status, 1);
                assertTrue(f1.path("quarantined").asBoolean(), status.toString());
                assertEquals(damagedAt, f1.path("quarantine").path("offset").asLong(), status.toString());
                assertFalse(f1.path("attached").asBoolean(), status.toString());
                JsonNode f2 = frontend(status, 2);
                assertTrue(f2.path("attached").asBoolean() && !f2.path("quarantined").asBoolean(), status.toString());
                assertTrue(f2.path("applied_tx").asLong() > 0, status.toString());
            }
            backend.stop();
            assertArrayEquals(ringBefore, PmFiles.read(file, ringAt, ringLength),
                    "the damaged ring is neither truncated nor rewritten");

            InspectReport report = InspectTool.inspect(file);
            RingDamage q = report.frontends().get(1).quarantine();
            assertNotNull(q, report.toText());
            assertEquals(damagedAt, q.offset());
            assertNull(report.frontends().get(2).quarantine(), report.toText());
            assertTrue(report.toText().contains("QUARANTINED") && report.toText().contains("offset " + damagedAt),
                    report.toText());
            JsonNode json = new ObjectMapper().readTree(report.toJson());
            assertTrue(json.path("frontends").get(1).path("quarantined").asBoolean(), report.toJson());
            assertFalse(report.ok(), "a damaged ring is a problem");
            backend.startAgain(port); // closed by try-with-resources
        }
    }

    @Test
    void shouldQuarantineAFrontendWhoseRedoBatchFailsItsCrcWhileRunning() throws Exception {
        int frontend = 5;
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            AsymNvm other = backend.open(0, FrontendOptions.defaults());
            Cells o = other.transactional(Cells.class, new Cells.Impl());
            o.create(4);
            o.set(0, 1);

            // a writer attached as frontend 5 ships a batch whose body is damaged in transit, then a valid one
            FabricConnection writer = backend.node().localFabric().connect();
            long damagedAt;
            try {
                AttachReply r = AttachReply.decode(writer.call(ControlMessageLayout.request(
                        ControlMessageLayout.KIND_ATTACH, frontend, 0)).await().bytes());
                long tail = r.redoValidTail();
                byte[] damaged = batch(r.appliedTxId() + 1, tail);
                damaged[LogRecordLayout.COMMON_HEADER_LENGTH + 8] ^= 0x40;
                writer.write(RegionIds.redo(frontend), tail % r.redoCapacity(), damaged, 0, damaged.length).await();
                writer.flush(0, false).await();
                backend.node().awaitReplayed();
                assertNull(backend.node().frontendLog(frontend).quarantine(),
                        "an invalid last batch may still be in flight: the replayer waits, quarantines nothing");

                long next = tail + LogRecordLayout.alignedLength(damaged.length);
                byte[] valid = batch(r.appliedTxId() + 2, next);
                writer.write(RegionIds.redo(frontend), next % r.redoCapacity(), valid, 0, valid.length).await();
                writer.flush(0, false).await();
                damagedAt = backend.node().frontendLog(frontend).redoReader().offsetOf(tail);
                FrontendLog log = backend.node().frontendLog(frontend);
                Conditions.awaitTrue("quarantine of frontend " + frontend, Duration.ofSeconds(30),
                        () -> log.quarantine() != null);
                // the running session's next durability stamp is refused: nothing more is acknowledged
                AsymNvmException refused = assertThrows(AsymNvmException.class,
                        () -> writer.flush(r.semValidTail() + LogRecordLayout.ALIGNMENT, true).await());
                assertEquals(ErrorCode.RING_CORRUPT, refused.errorCode(), refused.getMessage());
            } finally {
                writer.close();
            }
            FrontendLog log = backend.node().frontendLog(frontend);
            assertEquals(damagedAt, log.quarantine().offset());
            assertEquals("crc32c (a valid record follows at position "
                    + (log.quarantine().position() + LogRecordLayout.alignedLength(
                    batch(1, 0).length)) + ")", log.quarantine().what());

            AsymNvmException e = assertThrows(AsymNvmException.class,
                    () -> backend.open(frontend, FrontendOptions.defaults()));
            assertEquals(ErrorCode.RING_CORRUPT, e.errorCode(), e.getMessage());
            assertTrue(e.getMessage().contains("redo ring of frontend " + frontend)
                    && e.getMessage().contains("offset " + damagedAt), e.getMessage());

            o.set(1, 2); // every other frontend is served
            other.sync();
            assertArrayEquals(new long[] {1, 2, 0, 0}, o.snapshot());
            JsonNode f5 = frontend(status(backend.node().port()), frontend);
            assertTrue(f5.path("quarantined").asBoolean(), f5.toString());
            assertTrue(f5.path("quarantine").path("ring").asText().contains("redo ring"), f5.toString());
            other.close();
        }
    }

    /**
     * A running frontend whose semantic ring is found damaged stops for good at its first refused FLUSH: every later
     * call fails with {@code RING_CORRUPT} naming ring and offset, its background agent stops, nothing is retried,
     * and the application can still close it; every other frontend keeps being served.
     */
    @Test
    void shouldStopARunningFrontendForGoodAtItsFirstFlushRefusedAsRingCorrupt() throws Exception {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            Set<Thread> agentsBefore = agentsOf(1);
            AsymNvm victim = backend.open(1, LAZY_REDO);
            Thread agent = newAgent(agentsBefore, agentsOf(1));
            Cells v = victim.transactional(Cells.class, new Cells.Impl());
            v.create(8);
            victim.sync();
            for (int i = 0; i < 4; i++) {
                v.set(i, 100 + i); // durable semantic records whose redo stays in the frontend
            }
            FrontendLog log = backend.node().frontendLog(1);
            List<Long> positions = new ArrayList<>();
            RingScanner.scan(log.semanticReader(), log.checkpoint().semHead(), 0, e -> positions.add(e.position()));
            long damagedAt = log.semanticReader().offsetOf(positions.get(1));
            PmFiles.flipByte(dir.resolve("backend.pm"), damagedAt + SemanticRecordLayout.HEADER_LENGTH);
            // the backend finds the damage as an attach would (while the victim runs): it quarantines frontend 1
            AsymNvmException found = assertThrows(AsymNvmException.class, log::scanSemantic);
            assertEquals(ErrorCode.RING_CORRUPT, found.errorCode(), found.getMessage());
            assertNotNull(log.quarantine());

            long flushesBefore = victim.counters().flushes();
            v.setAsync(5, 5); // not awaited: the background agent posts its FLUSH, which is refused
            agent.join(TimeUnit.SECONDS.toMillis(20));
            assertFalse(agent.isAlive(), "the agent stops at the refused FLUSH instead of retrying it");
            long flushes = victim.counters().flushes();
            assertTrue(flushes - flushesBefore <= 2, "FLUSHes posted after the quarantine: " + (flushes - flushesBefore));

            for (Executable call : List.<Executable>of(() -> v.set(6, 6), () -> v.setAsync(6, 6), () -> v.get(0),
                    victim::sync)) {
                AsymNvmException e = assertThrows(AsymNvmException.class, call);
                assertEquals(ErrorCode.RING_CORRUPT, e.errorCode(), e.getMessage());
                assertTrue(e.getMessage().contains("semantic ring of frontend 1")
                        && e.getMessage().contains("offset " + damagedAt), e.getMessage());
            }
            assertEquals(flushes, victim.counters().flushes(), "no FLUSH posted once the engine stopped");
            victim.close(); // the application can close it: no sync, no detach

            try (AsymNvm other = backend.open(2, FrontendOptions.defaults())) {
                Cells o = other.transactional(Cells.class, new Cells.Impl());
                o.create(2);
                o.set(1, 9);
                assertArrayEquals(new long[] {0, 9}, o.snapshot());
            }
        }
    }

    private static Set<Thread> agentsOf(int frontendId) {
        String name = "asymnvm-frontend-" + frontendId;
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name))
                .collect(Collectors.toSet());
    }

    /** The one agent thread started between the two looks (earlier tests' threads may share its name). */
    private static Thread newAgent(Set<Thread> before, Set<Thread> after) {
        List<Thread> started = after.stream().filter(t -> !before.contains(t)).toList();
        assertEquals(1, started.size(), "agent threads started: " + started);
        return started.get(0);
    }

    /** A CRC-valid redo batch of one transaction writing 8 bytes at heap offset 0, sealed for {@code position}. */
    private static byte[] batch(long txId, long position) {
        RedoBuffer buffer = new RedoBuffer(4096);
        buffer.append(txId, List.of(new RedoBuffer.Write(0, new byte[8])), 0);
        return buffer.seal(position);
    }

    private static JsonNode status(int port) throws IOException {
        try (TcpFabric fabric = new TcpFabric("127.0.0.1", port); FabricConnection c = fabric.connect()) {
            byte[] reply = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_STATUS, -1, 0)).await()
                    .bytes();
            return new ObjectMapper().readTree(reply);
        }
    }

    private static JsonNode frontend(JsonNode status, int id) {
        for (JsonNode f : status.path("frontends")) {
            if (f.path("id").asInt() == id) {
                return f;
            }
        }
        throw new AssertionError("frontend " + id + " not in status " + status);
    }
}
